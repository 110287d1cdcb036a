/* result: storage of measured sides, and the derived per-flow and total figures. */
#include "result.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int result_side_init(struct side_result *s, uint32_t nflows, uint32_t cap_intervals)
{
    memset(s, 0, sizeof(*s));
    s->nflows = nflows;
    s->flows = calloc(nflows ? nflows : 1, sizeof(*s->flows));
    s->cap_intervals = cap_intervals;
    s->intervals = calloc(cap_intervals ? cap_intervals : 1, sizeof(*s->intervals));
    if (!s->flows || !s->intervals)
        goto nomem;
    if ((uint64_t)nflows * cap_intervals <= RESULT_MAX_INTERVAL_CELLS && nflows && cap_intervals) {
        s->cells = calloc((size_t)nflows * cap_intervals, sizeof(*s->cells));
        if (!s->cells)
            goto nomem;
        for (uint32_t i = 0; i < cap_intervals; i++)
            s->intervals[i].flows = s->cells + (size_t)i * nflows;
    }
    for (uint32_t i = 0; i < nflows; i++) {
        s->flows[i].id = i;
        s->flows[i].cpu = -1;
    }
    return 0;
nomem:
    result_side_fini(s);
    return -ENOMEM;
}

void result_side_fini(struct side_result *s)
{
    free(s->flows);
    free(s->intervals);
    free(s->cells);
    memset(s, 0, sizeof(*s));
}

struct interval *result_side_next_interval(struct side_result *s)
{
    if (s->nintervals >= s->cap_intervals)
        return NULL;
    return &s->intervals[s->nintervals++];
}

double result_jain(const double *x, uint32_t n)
{
    double sum = 0, sq = 0;

    for (uint32_t i = 0; i < n; i++) {
        sum += x[i];
        sq += x[i] * x[i];
    }
    if (n == 0 || sq == 0)
        return 1.0;
    return sum * sum / (n * sq);
}

static const struct side_flow *find_flow(const struct side_result *s, uint32_t id)
{
    if (id < s->nflows && s->flows[id].id == id)
        return &s->flows[id];
    for (uint32_t i = 0; i < s->nflows; i++)
        if (s->flows[i].id == id)
            return &s->flows[i];
    return NULL;
}

static double rate(uint64_t bytes, double seconds)
{
    return seconds > 0 ? (double)bytes * 8.0 / seconds : 0.0;
}

/* One flow from the sender's and receiver's records; either may be missing. */
static void merge_flow(struct flow_summary *f, const struct side_flow *snd,
                       const struct side_flow *rcv)
{
    if (snd) {
        f->sent_bytes = snd->bytes;
        f->sender_bps = rate(snd->bytes, snd->seconds);
        if (snd->ti.valid) {
            f->has_sender_tcpinfo = true;
            f->retransmits = snd->ti.total_retrans;
            f->rtt_us = snd->ti.rtt_us;
            f->min_rtt_us = snd->ti.min_rtt_us;
            f->cwnd = snd->ti.snd_cwnd;
            f->snd_wnd = snd->ti.snd_wnd;
            f->delivery_rate_bps = snd->ti.delivery_rate_bps;
            f->busy_us = snd->ti.busy_us;
            f->rwnd_limited_us = snd->ti.rwnd_limited_us;
            f->sndbuf_limited_us = snd->ti.sndbuf_limited_us;
        }
    }
    if (rcv) {
        f->bytes = rcv->bytes;
        f->throughput_bps = rate(rcv->bytes, rcv->seconds);
    } else {
        /* the receiving side did not report (server died): fall back to what was sent */
        f->bytes = f->sent_bytes;
        f->throughput_bps = f->sender_bps;
    }
}

static double cores_per_10g(const struct cpu_usage *c, double bps)
{
    return c->valid && bps > 0 ? c->busy_cores / (bps / 1e10) : 0.0;
}

/* busy cores x 1e9 ns/s over bytes/s: CPU nanoseconds per byte moved */
static double ns_per_byte(const struct cpu_usage *c, double bps)
{
    return c->valid && bps > 0 ? c->busy_cores * 1e9 / (bps / 8.0) : 0.0;
}

int result_merge(struct run_result *r)
{
    uint32_t n = params_total_flows(&r->params);
    double *tp;

    free(r->flows);
    r->flows = calloc(n ? n : 1, sizeof(*r->flows));
    tp = calloc(n ? n : 1, sizeof(*tp));
    if (!r->flows || !tp) {
        free(tp);
        return -ENOMEM;
    }
    r->nflows = n;
    memset(&r->summary, 0, sizeof(r->summary));
    for (uint32_t i = 0; i < n; i++) {
        struct flow_summary *f = &r->flows[i];
        const struct side_flow *lf = find_flow(&r->local, i);
        const struct side_flow *rf = r->remote.valid ? find_flow(&r->remote, i) : NULL;
        bool cs = params_flow_client_sends(&r->params, i);

        f->id = i;
        f->client_sends = cs;
        f->client_cpu = lf ? lf->cpu : -1;
        f->server_cpu = rf ? rf->cpu : -1;
        merge_flow(f, cs ? lf : rf, cs ? rf : lf);
        r->summary.bytes += f->bytes;
        r->summary.sent_bytes += f->sent_bytes;
        r->summary.throughput_bps += f->throughput_bps;
        r->summary.sender_bps += f->sender_bps;
        r->summary.retransmits += f->retransmits;
        if (cs)
            r->summary.up_bps += f->throughput_bps;
        else
            r->summary.down_bps += f->throughput_bps;
        tp[i] = f->throughput_bps;
    }
    r->summary.jain_index = result_jain(tp, n);
    r->summary.local_cores_per_10g = cores_per_10g(&r->local.cpu, r->summary.throughput_bps);
    r->summary.remote_cores_per_10g = cores_per_10g(&r->remote.cpu, r->summary.throughput_bps);
    r->summary.local_cpu_ns_per_byte = ns_per_byte(&r->local.cpu, r->summary.throughput_bps);
    r->summary.remote_cpu_ns_per_byte = ns_per_byte(&r->remote.cpu, r->summary.throughput_bps);
    free(tp);
    return 0;
}

void result_fini(struct run_result *r)
{
    result_side_fini(&r->local);
    result_side_fini(&r->remote);
    free(r->flows);
    r->flows = NULL;
    r->nflows = 0;
}
