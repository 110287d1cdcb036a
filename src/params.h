/* params: one test's parameters, their limits, and their JSON form on the control channel. */
#ifndef NETRIG_PARAMS_H
#define NETRIG_PARAMS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PARAMS_MAX_FLOWS 8192
#define PARAMS_MAX_THREADS 256
#define PARAMS_MAX_DURATION_NS (86400ULL * 1000000000ULL)
#define PARAMS_MIN_INTERVAL_NS (100ULL * 1000000ULL)
#define PARAMS_MAX_WRITE (16U << 20)
#define PARAMS_MAX_WINDOW (1U << 30)
#define PARAMS_CC_LEN 16

enum params_dir { PARAMS_DIR_FORWARD, PARAMS_DIR_REVERSE, PARAMS_DIR_BIDIR };

struct params {
    uint32_t flows;          /* -P: flows per direction */
    uint32_t threads;        /* -T: client worker threads */
    uint32_t server_threads; /* worker threads on the server (defaults to threads) */
    uint64_t duration_ns;    /* -t */
    uint64_t omit_ns;        /* -O */
    uint64_t interval_ns;    /* -i; 0 = no interval reports */
    uint32_t write_size;     /* -l */
    uint32_t window;         /* -w; 0 = kernel autotuning */
    uint32_t mss;            /* --mss; 0 = default */
    bool nodelay;
    bool zerocopy;           /* -Z */
    uint64_t fq_rate_bps;    /* --fq-rate; 0 = unpaced */
    enum params_dir dir;
    char congestion[PARAMS_CC_LEN]; /* -C; "" = system default */
    char server_cpus[256];   /* --server-cpus: cpulist, "auto" or "" */
    char title[128];
};

void params_defaults(struct params *p);

/* Checks every field against its limits; err gets one line naming the value. */
int params_validate(const struct params *p, char *err, size_t errlen);

/* Number of flows in the test (bidir doubles -P). */
uint32_t params_total_flows(const struct params *p);
/* Is flow i sent by the client? Flows are numbered 0..total-1, client→server first. */
bool params_flow_client_sends(const struct params *p, uint32_t i);

const char *params_dir_name(enum params_dir d);

cJSON *params_to_json(const struct params *p);
/* Reads params sent by a peer: each field checked for type and range; unknown keys ignored. */
int params_from_json(const cJSON *obj, struct params *p, char *err, size_t errlen);

#endif
