/* metric: named run figures. Reads the result model only. */
#include "metric.h"

#include "units.h"

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
    return !strcmp(test, "stream") ? "throughput_bps" : "transactions_per_s";
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
    if (!r->params.udp) {
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
    if (txn) {
        if (r->local.cpu.valid && s->transactions_per_s > 0)
            put(&l, "local_cpu_us_per_txn", s->local_cpu_us_per_txn);
        if (r->remote.valid && r->remote.cpu.valid && s->transactions_per_s > 0)
            put(&l, "remote_cpu_us_per_txn", s->remote_cpu_us_per_txn);
    } else if (!r->params.udp) {
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
        if (!p->udp)
            put(&l, "retransmits", retr);
    }
    if (s->cpu.valid) /* the daemon is the server: "remote" in netrig's terms */
        put(&l, "remote_cpu_busy_pct", s->cpu.busy_pct);
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
