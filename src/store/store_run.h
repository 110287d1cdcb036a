/* store_run: reading runs back from the history — lists with filters, one run's metrics, host
 * snapshot, intervals, flows, latency histogram and stored -J document — and resolving what
 * users type to name runs ("12", "10-14", "3,5,9", a tag, "last", "sweep:4", "mesh:2",
 * "group:3"). */
#ifndef NETRIG_STORE_RUN_H
#define NETRIG_STORE_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hostsnap.h"
#include "metric.h"
#include "store.h"

struct store_run {
    int64_t id;
    char test[16];
    bool udp;
    char role[8]; /* "client" or "server" (a run a daemon served) */
    char title[128];
    char started_at[32];
    char peer[280]; /* server address, or the client's for a daemon's run */
    char client_version[32], server_version[32];
    bool partial;
    char error[256];
    int64_t sweep_point;                        /* 0 = not part of a sweep */
    char tags[256];                             /* comma-separated */
    int64_t mesh;                               /* the mesh whose cell this run is; 0 = none */
    char mesh_source[64], mesh_destination[64]; /* that cell's hosts (plan names) */
    int64_t group;       /* the group (store_group.h) of a multi-target or --from run; 0 = none */
    uint32_t group_idx;  /* its target's place in the group */
    char group_kind[16]; /* "multi", "third_party" */
    char group_source[280]; /* third_party: the --from daemon */
};

struct store_run_filter {
    uint32_t last;     /* the newest N runs; 0 = all */
    const char *title; /* glob (* ? [..]) or, without wildcards, a case-blind substring */
    const char *since; /* "YYYY-MM-DDTHH:MM:SSZ": runs started at or after it */
    const char *tag;   /* runs with this tag (netrig tag), exactly */
};

/* Calls fn for each matching run, oldest first; a non-zero return of fn stops and is returned. */
int store_run_list(struct store *st, const struct store_run_filter *f,
                   int (*fn)(const struct store_run *r, void *arg), void *arg, char *err,
                   size_t errlen);
/* One run; -ENOENT with err naming it when there is none. */
int store_run_get(struct store *st, int64_t id, struct store_run *out, char *err, size_t errlen);

/* A run's metrics in metric_all() order; returns how many (names this netrig does not know are
 * skipped). */
size_t store_run_metrics(struct store *st, int64_t id, struct metric_value *out, size_t max);
/* The value of one metric; -ENOENT when the run lacks it. */
int store_run_metric(struct store *st, int64_t id, const char *name, double *out);
/* The host snapshot of the run's own side: the client's, or the server's for a run a daemon
 * served (empty when there is none). */
void store_run_host(struct store *st, int64_t id, struct hostsnap *hs);
/* One side's snapshot ("client" or "server"): 1 with hs filled, 0 when that side was not
 * recorded (hs empty, note says why), a negative errno when the history cannot be read. */
int store_run_host_side(struct store *st, int64_t id, const char *side, struct hostsnap *hs,
                        char *note, size_t notelen);
/* The stored JSON document (malloc'd), or NULL. */
char *store_run_document(struct store *st, int64_t id);
/* The stored params JSON (docs/json.md; malloc'd), or NULL. */
char *store_run_params(struct store *st, int64_t id);

struct store_interval {
    uint32_t seq;
    double start_s, end_s;
    bool omitted;
    uint64_t sent_bytes, recv_bytes;
    uint32_t retrans;
    uint64_t txns, lat_sum_ns;
    double cpu_busy_pct; /* negative when unknown */
};

/* side "client" or "server", in time order. */
int store_run_intervals(struct store *st, int64_t id, const char *side,
                        int (*fn)(const struct store_interval *iv, void *arg), void *arg);
/* The client's per-flow interval cells, by interval then flow. */
int store_run_cells(struct store *st, int64_t id,
                    int (*fn)(uint32_t seq, uint32_t flow, uint64_t bytes, uint32_t retrans,
                              void *arg),
                    void *arg);
/* Non-empty latency buckets (ns), in order. */
int store_run_latency(struct store *st, int64_t id,
                      int (*fn)(uint64_t lo_ns, uint64_t hi_ns, uint64_t count, void *arg),
                      void *arg);

struct store_flow {
    uint32_t flow;
    char direction[20];
    uint64_t bytes;
    double throughput_bps;
    int64_t retransmits, rtt_us, cwnd; /* -1 when unknown */
    int64_t transactions;              /* -1 when not a transactional test */
};
int store_run_flows(struct store *st, int64_t id, int (*fn)(const struct store_flow *f, void *arg),
                    void *arg);

/* The runs a reference names as one unit: a sweep's, a mesh's, a daemon group's. */
enum store_run_ref {
    STORE_RUN_REF_NONE,
    STORE_RUN_REF_SWEEP,
    STORE_RUN_REF_MESH,
    STORE_RUN_REF_GROUP
};

/* The one reader of "sweep:N", "mesh:N" and "group:N" (N: 1 to 18 digits, not 0): the kind,
 * with N in *id; STORE_RUN_REF_NONE (and *id 0) for anything else: an id, a range, a list, a
 * tag, "sweep:", "mesh:0", "group:3x". */
enum store_run_ref store_run_ref_parse(const char *s, int64_t *id);

/* Resolves a run set (comma-separated ids, ranges A-B, tag names, "last", "sweep:N",
 * "mesh:N", "group:N") into *ids (malloc'd, in order, no repeats). Returns 0, or a negative errno
 * with err. */
int store_run_resolve(struct store *st, const char *spec, int64_t **ids, size_t *n, char *err,
                      size_t errlen);

#endif
