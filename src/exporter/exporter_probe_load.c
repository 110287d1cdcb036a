/* exporter_probe_load: /probe?test=load: latency under load (load_run) within the scrape. */
#include "exporter_probe.h"

#include "load.h"
#include "params.h"
#include "sock.h"
#include "units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool exporter_probe_is_load(const char *const *names, const char *const *values, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if ((!strcmp(names[i], "test") || !strcmp(names[i], "module")) &&
            !strcmp(values[i], "load"))
            return true;
    return false;
}

static int bad(char *err, size_t errlen, const char *name, const char *v, const char *want)
{
    snprintf(err, errlen, "bad parameter '%s': '%.60s' %s", name, v, want);
    return -1;
}

static int load_target(const char *v, struct client_opts *o, char *err, size_t errlen)
{
    char port[32];
    char *end;
    unsigned long p = SOCK_DEFAULT_PORT;

    if (exporter_probe_split_target(v, o->host, sizeof(o->host), port, sizeof(port)))
        return bad(err, errlen, "target", v, "is not HOST, HOST:PORT or [IPV6]:PORT");
    if (port[0]) {
        p = strtoul(port, &end, 10);
        if (*end || port[0] == '-' || p < 1 || p > 65535)
            return bad(err, errlen, "target", v, "has an invalid port: use 1 to 65535");
    }
    o->port = (uint16_t)p;
    return 0;
}

int exporter_probe_parse_load(const char *const *names, const char *const *values, unsigned n,
                              double timeout_s, struct load_opts *lo, char *err, size_t errlen)
{
    bool seen_target = false, seen_duration = false, seen_parallel = false, seen_test = false;
    double margin, total;
    uint64_t v64 = 0;

    memset(lo, 0, sizeof(*lo));
    params_defaults(&lo->base.p);
    load_params_defaults(&lo->lp);
    lo->lp.sample_ns = 0;
    if (timeout_s <= 0)
        timeout_s = EXPORTER_PROBE_DEFAULT_TIMEOUT_S;
    margin = exporter_probe_margin(timeout_s);
    total = timeout_s - margin;
    for (unsigned i = 0; i < n; i++) {
        const char *k = names[i], *v = values[i];
        bool *seen = !strcmp(k, "target")                           ? &seen_target
                     : !strcmp(k, "duration")                       ? &seen_duration
                     : !strcmp(k, "parallel")                       ? &seen_parallel
                     : (!strcmp(k, "test") || !strcmp(k, "module")) ? &seen_test
                                                                    : NULL;
        if (!seen) {
            snprintf(err, errlen,
                     "bad parameter '%.40s': test=load takes target, duration and parallel only",
                     k);
            return -1;
        }
        if (*seen) {
            snprintf(err, errlen, "bad parameter '%s': given twice", k);
            return -1;
        }
        *seen = true;
        if (seen == &seen_target && load_target(v, &lo->base, err, errlen))
            return -1;
        if (seen == &seen_duration &&
            (units_parse_duration(v, &v64) || v64 < 1000000000ULL || v64 / 1e9 > total + 1e-9))
            return bad(err, errlen, "duration", v,
                       "does not fit: use from 1s to the scrape timeout "
                       "less its margin (0.5 s + 10 %)");
        if (seen == &seen_parallel &&
            (units_parse_count(v, &v64) || v64 < 1 || v64 > PARAMS_MAX_FLOWS))
            return bad(err, errlen, "parallel", v, "is not a number of flows each way, 1 or more");
        if (seen == &seen_parallel)
            lo->lp.flows = (uint32_t)v64;
        if (seen == &seen_duration)
            total = (double)v64 / 1e9;
    }
    if (!seen_target) {
        snprintf(err, errlen, "missing parameter 'target': give target=HOST[:PORT]");
        return -1;
    }
    if (total < 1) {
        snprintf(err, errlen,
                 "bad parameter 'duration': the scrape timeout %gs less a margin of %gs leaves "
                 "under 1s for a load test: raise scrape_timeout",
                 timeout_s, margin);
        return -1;
    }
    /* a fifth baseline, three fifths loaded, a fifth recovery */
    lo->lp.baseline_ns = (uint64_t)(total * 0.2e9);
    lo->lp.loaded_ns = (uint64_t)(total * 0.6e9);
    lo->lp.recovery_ns = (uint64_t)(total * 0.2e9);
    lo->base.timeout_ms = (int)(margin * 1000) < 1000 ? 1000 : (int)(margin * 1000);
    return load_validate(&lo->lp, err, errlen) ? -1 : 0;
}

void exporter_probe_render_load(struct prom_buf *b, const struct load_result *lr)
{
    static const char *const q[2] = {"0.5", "0.99"};
    const struct load_phase_stats *ph = &lr->phase[LOAD_LOADED];
    char lab[96];

    if (lr->judged_by >= 0) {
        prom_family(b, "netrig_probe_load_latency_increase_seconds", "gauge",
                    "Latency under load less the baseline's (the probes that judged).");
        for (int i = 0; i < 2; i++) {
            snprintf(lab, sizeof(lab), "test=\"load\",quantile=\"%s\"", q[i]);
            prom_sample(b, "netrig_probe_load_latency_increase_seconds", lab,
                        (i ? lr->increase_p99_us : lr->increase_p50_us) / 1e6);
        }
        prom_family(b, "netrig_probe_load_band", "gauge",
                    "Bufferbloat band of the p99 increase: 0 (A+, <= 5 ms) to 5 (F, > 400 ms).");
        prom_sample(b, "netrig_probe_load_band", "test=\"load\"", lr->band);
    }
    prom_family(b, "netrig_probe_load_goodput_bytes_per_second", "gauge",
                "TCP goodput of the load each way while loaded (receivers' view).");
    prom_sample(b, "netrig_probe_load_goodput_bytes_per_second", "test=\"load\",direction=\"up\"",
                ph->up_bps / 8);
    prom_sample(b, "netrig_probe_load_goodput_bytes_per_second", "test=\"load\",direction=\"down\"",
                ph->down_bps / 8);
}
