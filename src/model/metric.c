/* metric: named run figures. Reads the result model only. */
#include "metric.h"
#include "test_kind.h"

#include "load_result.h"
#include "result_json.h"

#include "units.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const struct metric_def defs[] = {
    {"throughput_bps", "throughput", METRIC_BPS, true},
    {"sender_throughput_bps", "sender throughput", METRIC_BPS, true},
    {"client_to_server_bps", "client to server", METRIC_BPS, true},
    {"server_to_client_bps", "server to client", METRIC_BPS, true},
    {"retransmits", "retransmits", METRIC_COUNT, false},
    {"jain_index", "fairness (Jain)", METRIC_RATIO, true},
    {"rtt_us", "mean RTT", METRIC_US, false},
    {"transactions_per_s", "transactions/s", METRIC_PER_S, true},
    {"latency_min_us", "latency min", METRIC_US, false},
    {"latency_mean_us", "latency mean", METRIC_US, false},
    {"latency_p50_us", "latency p50", METRIC_US, false},
    {"latency_p90_us", "latency p90", METRIC_US, false},
    {"latency_p99_us", "latency p99", METRIC_US, false},
    {"latency_p999_us", "latency p99.9", METRIC_US, false},
    {"latency_p9999_us", "latency p99.99", METRIC_US, false},
    {"latency_max_us", "latency max", METRIC_US, false},
    {"timeouts", "timeouts", METRIC_COUNT, false},
    {"loss_pct", "UDP loss", METRIC_PCT, false},
    {"datagrams_lost", "datagrams lost", METRIC_COUNT, false},
    {"jitter_us", "UDP jitter", METRIC_US, false},
    {"received_pps", "datagrams/s received", METRIC_PER_S, true},
    {"one_way_delay_us", "one-way delay", METRIC_US, false},
    {"local_cpu_busy_pct", "client CPU busy", METRIC_PCT, false},
    {"remote_cpu_busy_pct", "server CPU busy", METRIC_PCT, false},
    {"local_cores_per_10g", "client cores/10G", METRIC_RATIO, false},
    {"remote_cores_per_10g", "server cores/10G", METRIC_RATIO, false},
    {"local_cpu_ns_per_byte", "client CPU ns/byte", METRIC_RATIO, false},
    {"remote_cpu_ns_per_byte", "server CPU ns/byte", METRIC_RATIO, false},
    {"local_cpu_us_per_txn", "client CPU us/txn", METRIC_US, false},
    {"remote_cpu_us_per_txn", "server CPU us/txn", METRIC_US, false},
    /* the same counting netrig's own process CPU only (what compare sets side by side) */
    {"local_own_cores_per_10g", "client own cores/10G", METRIC_RATIO, false},
    {"remote_own_cores_per_10g", "server own cores/10G", METRIC_RATIO, false},
    {"local_own_cpu_us_per_txn", "client own CPU us/txn", METRIC_US, false},
    {"remote_own_cpu_us_per_txn", "server own CPU us/txn", METRIC_US, false},
    /* the share of scheduler periods the end's cgroup was throttled in (its CPU quota) */
    {"local_cpu_throttled_pct", "client cgroup throttled", METRIC_PCT, false},
    {"remote_cpu_throttled_pct", "server cgroup throttled", METRIC_PCT, false},
    /* netrig load */
    {"latency_increase_p50_us", "latency increase p50", METRIC_US, false},
    {"latency_increase_p99_us", "latency increase p99", METRIC_US, false},
    {"idle_latency_p50_us", "idle latency p50", METRIC_US, false},
    {"loaded_latency_p50_us", "loaded latency p50", METRIC_US, false},
    {"loaded_latency_p99_us", "loaded latency p99", METRIC_US, false},
    {"loaded_probe_loss_pct", "probe loss under load", METRIC_PCT, false},
    /* netrig load --classes: each class's probe, loaded p50 minus idle p50 */
    {"be_latency_increase_p50_us", "BE latency increase p50", METRIC_US, false},
    {"bk_latency_increase_p50_us", "BK latency increase p50", METRIC_US, false},
    {"cs5_latency_increase_p50_us", "CS5 latency increase p50", METRIC_US, false},
    {"ef_latency_increase_p50_us", "EF latency increase p50", METRIC_US, false},
};

const struct metric_def *metric_all(size_t *n)
{
    *n = sizeof(defs) / sizeof(defs[0]);
    return defs;
}

const struct metric_def *metric_find(const char *name)
{
    for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++)
        if (!strcmp(defs[i].name, name))
            return &defs[i];
    return NULL;
}

const char *metric_primary(const char *test)
{
    if (!strcmp(test, "load"))
        return "latency_increase_p50_us";
    return test_kind_named_is(test, TEST_KIND_BULK) ? "throughput_bps" : "transactions_per_s";
}

struct mlist {
    struct metric_value *v;
    size_t n, max;
};

static void put(struct mlist *l, const char *name, double value)
{
    const struct metric_def *d = metric_find(name);

    if (d && l->n < l->max)
        l->v[l->n++] = (struct metric_value){d, value};
}

static void put_stream(struct mlist *l, const struct run_result *r)
{
    const struct run_summary *s = &r->summary;
    double rtt = 0;
    uint32_t nrtt = 0;

    put(l, "throughput_bps", s->throughput_bps);
    put(l, "sender_throughput_bps", s->sender_bps);
    if (r->params.dir == PARAMS_DIR_BIDIR) {
        put(l, "client_to_server_bps", s->up_bps);
        put(l, "server_to_client_bps", s->down_bps);
    }
    if (!test_kind_is(&r->params, TEST_KIND_DATAGRAMS)) {
        put(l, "retransmits", s->retransmits);
        for (uint32_t i = 0; i < r->nflows; i++)
            if (r->flows[i].has_sender_tcpinfo) {
                rtt += r->flows[i].rtt_us;
                nrtt++;
            }
        if (nrtt)
            put(l, "rtt_us", rtt / nrtt);
    }
    put(l, "jain_index", s->jain_index);
    if (s->udp) {
        put(l, "loss_pct", s->u.loss_pct);
        put(l, "datagrams_lost", (double)s->u.lost);
        put(l, "jitter_us", s->u.jitter_us);
        put(l, "received_pps", s->u.received_pps);
        if (s->u.shared_clock)
            put(l, "one_way_delay_us", s->u.owd_mean_us);
    }
}

static void put_txn(struct mlist *l, const struct run_result *r)
{
    const struct run_summary *s = &r->summary;

    put(l, "transactions_per_s", s->transactions_per_s);
    if (s->transactions) {
        put(l, "latency_min_us", s->latency.min_us);
        put(l, "latency_mean_us", s->latency.mean_us);
        put(l, "latency_p50_us", s->latency.p50_us);
        put(l, "latency_p90_us", s->latency.p90_us);
        put(l, "latency_p99_us", s->latency.p99_us);
        put(l, "latency_p999_us", s->latency.p999_us);
        put(l, "latency_p9999_us", s->latency.p9999_us);
        put(l, "latency_max_us", s->latency.max_us);
    }
    put(l, "timeouts", (double)s->timeouts);
}

/* The share of periods an end's cgroup was throttled in, -1 when unknown. */
static double throttled_pct(const struct cpu_usage *c)
{
    return c->cg_version && c->cg_has_throttle && c->cg_periods > 0
               ? 100.0 * c->cg_throttled / c->cg_periods
               : -1;
}

/* netrig's own CPU per unit of work and the cgroups' throttling, where measured. */
static void put_own_run(struct mlist *l, const struct run_result *r)
{
    const struct run_summary *s = &r->summary;
    bool txn = params_is_transactional(&r->params);
    double lt = throttled_pct(&r->local.cpu), rt = throttled_pct(&r->remote.cpu);

    if (lt >= 0)
        put(l, "local_cpu_throttled_pct", lt);
    if (r->remote.valid && rt >= 0)
        put(l, "remote_cpu_throttled_pct", rt);
    if (txn ? s->transactions_per_s <= 0
            : test_kind_is(&r->params, TEST_KIND_DATAGRAMS) || s->throughput_bps <= 0)
        return;
    if (txn ? s->local_own_cpu_us_per_txn >= 0 : s->local_own_cores_per_10g >= 0)
        put(l, txn ? "local_own_cpu_us_per_txn" : "local_own_cores_per_10g",
            txn ? s->local_own_cpu_us_per_txn : s->local_own_cores_per_10g);
    if (r->remote.valid &&
        (txn ? s->remote_own_cpu_us_per_txn >= 0 : s->remote_own_cores_per_10g >= 0))
        put(l, txn ? "remote_own_cpu_us_per_txn" : "remote_own_cores_per_10g",
            txn ? s->remote_own_cpu_us_per_txn : s->remote_own_cores_per_10g);
}

size_t metric_from_run(const struct run_result *r, struct metric_value *out, size_t max)
{
    struct mlist l = {out, 0, max};
    const struct run_summary *s = &r->summary;
    bool txn = params_is_transactional(&r->params);

    if (txn)
        put_txn(&l, r);
    else
        put_stream(&l, r);
    if (r->local.cpu.valid)
        put(&l, "local_cpu_busy_pct", r->local.cpu.busy_pct);
    if (r->remote.valid && r->remote.cpu.valid)
        put(&l, "remote_cpu_busy_pct", r->remote.cpu.busy_pct);
    put_own_run(&l, r);
    if (txn) {
        if (r->local.cpu.valid && s->transactions_per_s > 0)
            put(&l, "local_cpu_us_per_txn", s->local_cpu_us_per_txn);
        if (r->remote.valid && r->remote.cpu.valid && s->transactions_per_s > 0)
            put(&l, "remote_cpu_us_per_txn", s->remote_cpu_us_per_txn);
    } else if (!test_kind_is(&r->params, TEST_KIND_DATAGRAMS)) {
        if (r->local.cpu.valid && s->throughput_bps > 0) {
            put(&l, "local_cores_per_10g", s->local_cores_per_10g);
            put(&l, "local_cpu_ns_per_byte", s->local_cpu_ns_per_byte);
        }
        if (r->remote.valid && r->remote.cpu.valid && s->throughput_bps > 0) {
            put(&l, "remote_cores_per_10g", s->remote_cores_per_10g);
            put(&l, "remote_cpu_ns_per_byte", s->remote_cpu_ns_per_byte);
        }
    }
    return l.n;
}

size_t metric_from_side(const struct params *p, const struct side_result *s,
                        struct metric_value *out, size_t max)
{
    struct mlist l = {out, 0, max};
    double bytes = 0, secs = 0, retr = 0, txns = 0;

    for (uint32_t i = 0; i < s->nflows; i++) {
        const struct side_flow *f = &s->flows[i];
        bytes += (double)f->bytes;
        txns += (double)f->txns;
        if (f->seconds > secs)
            secs = f->seconds;
        if (f->sender && f->ti.valid)
            retr += f->ti.total_retrans;
    }
    if (params_is_transactional(p)) {
        put(&l, "transactions_per_s", s->seconds > 0 ? txns / s->seconds : 0);
    } else {
        put(&l, "throughput_bps", secs > 0 ? bytes * 8 / secs : 0);
        if (!test_kind_is(p, TEST_KIND_DATAGRAMS))
            put(&l, "retransmits", retr);
    }
    if (s->cpu.valid) /* the daemon is the server: "remote" in netrig's terms */
        put(&l, "remote_cpu_busy_pct", s->cpu.busy_pct);
    return l.n;
}

size_t metric_from_load(const struct load_result *lr, struct metric_value *out, size_t max)
{
    struct mlist l = {out, 0, max};
    const struct load_phase_stats *busy = &lr->phase[LOAD_LOADED];
    double retr = 0;
    bool any = false;

    for (int p = LOAD_UP; p <= LOAD_DOWN; p++) {
        if (!lr->ran[p])
            continue;
        any = true;
        retr += lr->part[p].summary.retransmits;
    }
    if (any) {
        put(&l, "throughput_bps", busy->up_bps + busy->down_bps);
        if (lr->ran[LOAD_UP])
            put(&l, "client_to_server_bps", busy->up_bps);
        if (lr->ran[LOAD_DOWN])
            put(&l, "server_to_client_bps", busy->down_bps);
        put(&l, "retransmits", retr);
    }
    for (uint32_t c = 0; c < lr->nclasses; c++) {
        char name[40];
        size_t k;
        if (!lr->cls[c].judged)
            continue;
        snprintf(name, sizeof(name), "%s_latency_increase_p50_us", dsclass_name(lr->lp.classes, c));
        for (k = 0; name[k] && name[k] != '_'; k++)
            name[k] = (char)tolower((unsigned char)name[k]);
        put(&l, name, lr->cls[c].increase_p50_us);
    }
    if (lr->band < 0)
        return l.n;
    put(&l, "latency_increase_p50_us", lr->increase_p50_us);
    put(&l, "latency_increase_p99_us", lr->increase_p99_us);
    put(&l, "idle_latency_p50_us", lr->phase[LOAD_BASELINE].probe[lr->judged_by].p50_us);
    put(&l, "loaded_latency_p50_us", busy->probe[lr->judged_by].p50_us);
    put(&l, "loaded_latency_p99_us", busy->probe[lr->judged_by].p99_us);
    put(&l, "loaded_probe_loss_pct", busy->probe[lr->judged_by].loss_pct);
    return l.n;
}

/* ---- from a -J document ---- */

static bool doc_num(const cJSON *o, const char *path, double *v)
{
    const cJSON *x = result_json_at(o, path);

    if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble))
        return false;
    *v = x->valuedouble;
    return true;
}

static void put_doc(struct mlist *l, const char *name, const cJSON *o, const char *path)
{
    double v;

    if (doc_num(o, path, &v))
        put(l, name, v);
}

static void doc_stream(struct mlist *l, const struct params *p, const cJSON *doc)
{
    const cJSON *s = result_json_at(doc, "summary"), *f;
    double rtt = 0, v;
    uint32_t nrtt = 0;

    put_doc(l, "throughput_bps", s, "throughput_bps");
    put_doc(l, "sender_throughput_bps", s, "sender_throughput_bps");
    if (p->dir == PARAMS_DIR_BIDIR) {
        put_doc(l, "client_to_server_bps", s, "client_to_server_bps");
        put_doc(l, "server_to_client_bps", s, "server_to_client_bps");
    }
    if (!test_kind_is(p, TEST_KIND_DATAGRAMS)) {
        put_doc(l, "retransmits", s, "retransmits");
        /* flows without the sender's TCP_INFO say retransmits -1 */
        cJSON_ArrayForEach(f, result_json_at(doc, "flows"))
        {
            if (doc_num(f, "retransmits", &v) && v >= 0 && doc_num(f, "rtt_us", &v)) {
                rtt += v;
                nrtt++;
            }
        }
        if (nrtt)
            put(l, "rtt_us", rtt / nrtt);
    }
    put_doc(l, "jain_index", s, "jain_index");
    if (test_kind_is(p, TEST_KIND_DATAGRAMS)) {
        put_doc(l, "loss_pct", s, "udp.loss_pct");
        put_doc(l, "datagrams_lost", s, "udp.datagrams_lost");
        put_doc(l, "jitter_us", s, "udp.jitter_us");
        put_doc(l, "received_pps", s, "udp.received_pps");
        if (cJSON_IsTrue(result_json_at(s, "udp.shared_clock")))
            put_doc(l, "one_way_delay_us", s, "udp.one_way_delay_us.mean");
    }
}

static void doc_txn(struct mlist *l, const cJSON *s)
{
    static const char *const lat[][2] = {
        {"latency_min_us", "min"},     {"latency_mean_us", "mean"}, {"latency_p50_us", "p50"},
        {"latency_p90_us", "p90"},     {"latency_p99_us", "p99"},   {"latency_p999_us", "p999"},
        {"latency_p9999_us", "p9999"}, {"latency_max_us", "max"},
    };
    const cJSON *l_us = result_json_at(s, "latency_us");
    double n;

    put_doc(l, "transactions_per_s", s, "transactions_per_s");
    if (doc_num(s, "transactions", &n) && n > 0)
        for (size_t i = 0; i < sizeof(lat) / sizeof(lat[0]); i++)
            put_doc(l, lat[i][0], l_us, lat[i][1]);
    put_doc(l, "timeouts", s, "timeouts");
}

static void doc_throttled(struct mlist *l, const char *name, const cJSON *cg)
{
    double per = 0, thr = 0;

    if (doc_num(cg, "periods", &per) && doc_num(cg, "throttled_periods", &thr) && per > 0 &&
        doc_num(cg, "throttled_s", &(double){0}))
        put(l, name, 100.0 * thr / per);
}

size_t metric_from_doc(const struct params *p, const cJSON *doc, struct metric_value *out,
                       size_t max)
{
    struct mlist l = {out, 0, max};
    const cJSON *s = result_json_at(doc, "summary");
    bool txn = params_is_transactional(p);
    bool lcpu = cJSON_IsTrue(result_json_at(s, "cpu.local.valid"));
    bool rcpu = cJSON_IsTrue(result_json_at(s, "cpu.remote.valid"));
    double main = 0;

    if (txn)
        doc_txn(&l, s);
    else
        doc_stream(&l, p, doc);
    if (lcpu)
        put_doc(&l, "local_cpu_busy_pct", s, "cpu.local.busy_pct");
    if (rcpu)
        put_doc(&l, "remote_cpu_busy_pct", s, "cpu.remote.busy_pct");
    doc_num(s, txn ? "transactions_per_s" : "throughput_bps", &main);
    doc_throttled(&l, "local_cpu_throttled_pct", result_json_at(s, "cpu.local.cgroup"));
    if (rcpu || result_json_at(s, "cpu.remote.own"))
        doc_throttled(&l, "remote_cpu_throttled_pct", result_json_at(s, "cpu.remote.cgroup"));
    if (main <= 0 || (!txn && test_kind_is(p, TEST_KIND_DATAGRAMS)))
        return l.n;
    put_doc(&l, txn ? "local_own_cpu_us_per_txn" : "local_own_cores_per_10g", s,
            txn ? "own_cpu_us_per_transaction.local" : "own_cores_per_10gbps.local");
    put_doc(&l, txn ? "remote_own_cpu_us_per_txn" : "remote_own_cores_per_10g", s,
            txn ? "own_cpu_us_per_transaction.remote" : "own_cores_per_10gbps.remote");
    if (txn) {
        if (lcpu)
            put_doc(&l, "local_cpu_us_per_txn", s, "cpu_us_per_transaction.local");
        if (rcpu)
            put_doc(&l, "remote_cpu_us_per_txn", s, "cpu_us_per_transaction.remote");
        return l.n;
    }
    if (lcpu) {
        put_doc(&l, "local_cores_per_10g", s, "cores_per_10gbps.local");
        put_doc(&l, "local_cpu_ns_per_byte", s, "cpu_ns_per_byte.local");
    }
    if (rcpu) {
        put_doc(&l, "remote_cores_per_10g", s, "cores_per_10gbps.remote");
        put_doc(&l, "remote_cpu_ns_per_byte", s, "cpu_ns_per_byte.remote");
    }
    return l.n;
}

const char *metric_unit_name(enum metric_unit u)
{
    switch (u) {
    case METRIC_BPS: return "bit/s";
    case METRIC_US: return "us";
    case METRIC_PCT: return "%";
    case METRIC_PER_S: return "/s";
    default: return "";
    }
}

void metric_format(const struct metric_def *d, double v, char *buf, size_t len)
{
    switch (d->unit) {
    case METRIC_BPS: units_format_rate(v, buf, len); return;
    case METRIC_US: snprintf(buf, len, "%.1f us", v); return;
    case METRIC_PCT: snprintf(buf, len, "%.2f %%", v); return;
    case METRIC_COUNT: snprintf(buf, len, v == floor(v) ? "%.0f" : "%.1f", v); return;
    case METRIC_PER_S: snprintf(buf, len, "%.0f/s", v); return;
    default: snprintf(buf, len, "%.4g", v); return;
    }
}
