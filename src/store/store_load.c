/* store_load: the rows of a load run. */
#include "store_load.h"

#include "store_priv.h"
#include "store_samples.h"

#include "load_json.h"
#include "metric.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int add_row(struct store *st, const struct load_result *lr, int64_t *id, char *err,
                   size_t errlen)
{
    cJSON *pj = load_params_json(&lr->lp), *dj = load_json(lr, false);
    const cJSON *sv = cJSON_GetObjectItemCaseSensitive(dj, "server_version");
    char *params = cJSON_PrintUnformatted(pj), *doc = cJSON_PrintUnformatted(dj), now[32];
    int rc = -ENOMEM;

    store_time_iso(time(NULL), now, sizeof(now));
    if (params && doc)
        rc = store_exec(st, err, errlen,
                        "INSERT INTO runs (test, udp, role, title, started_at, saved_at, peer,"
                        " client_version, server_version, partial, error, params, document)"
                        " VALUES ('load',0,'client',?,?,?,?,?,?,?,?,?,?)",
                        "ttttttittt", lr->lp.title, lr->started_at[0] ? lr->started_at : now, now,
                        lr->server, NETRIG_VERSION, cJSON_IsString(sv) ? sv->valuestring : "",
                        (int64_t)lr->partial, lr->error, params, doc);
    else
        snprintf(err, errlen, "out of memory storing a load run");
    *id = sqlite3_last_insert_rowid(store_sqlite(st));
    free(params);
    free(doc);
    cJSON_Delete(pj);
    cJSON_Delete(dj);
    return rc;
}

/* The up and down tests' flows and time series, the probes' records. */
static int add_parts(struct store *st, int64_t id, const struct load_result *lr, char *err,
                     size_t errlen)
{
    uint32_t base = 0;

    for (int p = LOAD_UP; p <= LOAD_DOWN; p++) {
        const struct run_result *r = &lr->part[p];
        double off = (double)lr->part_off_ns[p] / 1e9;
        if (!lr->ran[p])
            continue;
        if (store_add_flows(st, id, r, base, err, errlen) ||
            store_add_samples(st, id, load_part_name((enum load_part)p), "client", r->local.samples,
                              off, err, errlen) ||
            store_add_samples(st, id, load_part_name((enum load_part)p), "server",
                              r->remote.samples, off, err, errlen))
            return -EIO;
        base += r->nflows;
    }
    for (int p = LOAD_UDP_PROBE; p <= LOAD_TCP_PROBE; p++)
        if (lr->ran[p] && store_add_probes(st, id, p == LOAD_UDP_PROBE ? "udp" : "tcp",
                                           lr->part[p].local.log, lr->part_off_ns[p], err, errlen))
            return -EIO;
    if (lr->icmp_ran &&
        store_add_probes(st, id, "icmp", &lr->icmp_log, lr->icmp_off_ns, err, errlen))
        return -EIO;
    for (uint32_t c = 1; c < lr->nclasses; c++) { /* --classes: the first is "udp" */
        char name[16];
        if (store_add_probes(st, id, load_class_probe(lr->lp.classes, c, name, sizeof(name)),
                             load_class_log(lr, c), lr->part_off_ns[LOAD_UDP_PROBE], err, errlen))
            return -EIO;
    }
    return 0;
}

/* The daemon's settings, from whichever part it sent them with. */
static const struct side_result *server_side(const struct load_result *lr)
{
    for (int p = 0; p < LOAD_NPARTS; p++)
        if (lr->ran[p] && lr->part[p].remote.host)
            return &lr->part[p].remote;
    for (int p = 0; p < LOAD_NPARTS; p++)
        if (lr->ran[p])
            return &lr->part[p].remote;
    return NULL;
}

int store_add_load(struct store *st, const struct load_result *lr, const struct hostsnap *hs,
                   int64_t *id, char *err, size_t errlen)
{
    struct metric_value m[METRIC_MAX];
    size_t nm = metric_from_load(lr, m, METRIC_MAX);
    const struct side_result *srv = server_side(lr);
    char note[200];

    if (srv && srv->host_note[0])
        snprintf(note, sizeof(note), "%s", srv->host_note);
    else if (srv && srv->version[0])
        snprintf(note, sizeof(note), "the server (netrig %s) did not send its settings",
                 srv->version);
    else
        snprintf(note, sizeof(note), "the server did not send its settings");
    if (add_row(st, lr, id, err, errlen) || store_add_metrics(st, *id, m, nm, err, errlen) ||
        add_parts(st, *id, lr, err, errlen) ||
        store_add_host(st, *id, "client", hs, "no snapshot was taken", err, errlen) ||
        store_add_host(st, *id, "server", srv ? srv->host : NULL, note, err, errlen))
        return -EIO;
    return 0;
}
