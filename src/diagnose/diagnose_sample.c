/* diagnose_sample: the sample from a finished stream test — the sender's TCP_INFO over the
 * measured period and its interval means, what each end's application saw, the busiest data
 * thread and the counters of each end's host (both sides send them), and the receivers'
 * rate in every interval. */
#include "diagnose.h"

#include "result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct side_flow *side_flow(const struct side_result *side, uint32_t id)
{
    for (uint32_t i = 0; i < side->nflows; i++)
        if (side->flows[i].id == id)
            return &side->flows[i];
    return NULL;
}

/* Sums over the flows, turned into means at the end. */
struct acc {
    double rtt_sum, secs, cwnd;
    double m_rtt, m_wnd, m_inflight;
    uint32_t m, samples;
    double snd_wait, rcv_wait, snd_buf, rcv_buf;
    uint32_t n_snd_wait, n_rcv_wait, n_snd_buf, n_rcv_buf;
};

static void add_tcp(struct diagnose_sample *s, struct acc *a, const struct side_flow *sf)
{
    bool first = s->flows == 0;

    s->flows++;
    s->busy_us += sf->ti.busy_us;
    s->rwnd_us += sf->ti.rwnd_limited_us;
    s->sndbuf_us += sf->ti.sndbuf_limited_us;
    s->retrans += sf->ti.total_retrans;
    s->segs_out += sf->ti.data_segs_out;
    if (!s->mss)
        s->mss = sf->ti.snd_mss;
    a->rtt_sum += sf->ti.rtt_us;
    a->secs += sf->seconds;
    a->cwnd += sf->ti.snd_cwnd;
    if (sf->ti.min_rtt_us && (first || !s->min_rtt_us || sf->ti.min_rtt_us < s->min_rtt_us))
        s->min_rtt_us = sf->ti.min_rtt_us;
    if (first || sf->ti.snd_wnd < s->snd_wnd)
        s->snd_wnd = sf->ti.snd_wnd;
    if (sf->samples) {
        a->m++;
        a->samples += sf->samples;
        a->m_rtt += sf->rtt_mean_us;
        a->m_wnd += sf->snd_wnd_mean;
        a->m_inflight += sf->inflight_mean;
    }
}

static void add_app(struct acc *a, const struct side_flow *sf, const struct side_flow *rf,
                    double snd_secs, double rcv_secs)
{
    if (sf->wait_s >= 0 && snd_secs > 0) {
        a->snd_wait += sf->wait_s < snd_secs ? sf->wait_s / snd_secs : 1;
        a->n_snd_wait++;
    }
    if (sf->sndbuf) {
        a->snd_buf += sf->sndbuf;
        a->n_snd_buf++;
    }
    if (rf && rf->wait_s >= 0 && rcv_secs > 0) {
        a->rcv_wait += rf->wait_s < rcv_secs ? rf->wait_s / rcv_secs : 1;
        a->n_rcv_wait++;
    }
    if (rf && rf->rcvbuf) {
        a->rcv_buf += rf->rcvbuf;
        a->n_rcv_buf++;
    }
}

/* The busiest thread of an end (those that send, or those that receive) and its host. */
static void end_load(const struct side_result *side, bool sends, struct diagnose_end *e)
{
    const struct side_hostload *l = side->hostload;
    double best = -1;

    e->cpu = -1;
    e->runq = -1;
    e->cpu_busy = -1;
    e->usage = side->cpu;
    if (!l || l->seconds <= 0)
        return;
    e->host_known = l->host.valid;
    e->host = l->host;
    for (uint32_t i = 0; i < l->nthreads && i < SIDE_MAX_THREADS; i++) {
        const struct side_thread *t = &l->thread[i];
        double load = t->run_s + (t->runq_s > 0 ? t->runq_s : 0);
        if (t->sends != sends || load <= best)
            continue;
        best = load;
        e->thread_known = true;
        e->cpu = t->cpu;
        e->run = t->run_s / l->seconds;
        e->runq = t->runq_s >= 0 ? t->runq_s / l->seconds : -1;
    }
    if (e->thread_known && e->cpu >= 0 && l->host.valid) {
        const struct hostctr_cpu *c = hostctr_cpu_find(&l->host, e->cpu);
        e->cpu_busy = c ? c->busy : -1;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The receivers' rate per measured interval: its median and the share near it. */
static void plateau(const struct side_result *rcv, struct diagnose_sample *s)
{
    double *r = calloc(rcv->nintervals ? rcv->nintervals : 1, sizeof(*r)), len_med = 0;
    uint32_t n = 0, near = 0;

    if (!r)
        return;
    for (uint32_t i = 0; i < rcv->nintervals; i++)
        if (!rcv->intervals[i].omitted)
            r[n++] = rcv->intervals[i].end_s - rcv->intervals[i].start_s;
    if (n) {
        qsort(r, n, sizeof(*r), cmp_double);
        len_med = r[n / 2];
    }
    n = 0;
    for (uint32_t i = 0; i < rcv->nintervals; i++) {
        const struct interval *iv = &rcv->intervals[i];
        double len = iv->end_s - iv->start_s;
        if (!iv->omitted && len > 0 && len >= len_med / 2) /* not a last stub */
            r[n++] = (double)iv->recv_bytes * 8 / len;
    }
    if (n) {
        qsort(r, n, sizeof(*r), cmp_double);
        s->rate_median_bps = r[n / 2];
        for (uint32_t i = 0; i < n; i++)
            near += r[i] >= 0.8 * s->rate_median_bps && r[i] <= 1.2 * s->rate_median_bps;
        s->plateau = (double)near / n;
        s->nrates = n;
    }
    free(r);
}

static void finish_ends(const struct run_result *r, const struct side_result *snd,
                        const struct side_result *rcv, const struct acc *a,
                        struct diagnose_sample *s)
{
    s->snd.known = a->n_snd_wait > 0;
    s->snd.wait = a->n_snd_wait ? a->snd_wait / a->n_snd_wait : 0;
    s->snd.buf = a->n_snd_buf ? (uint32_t)(a->snd_buf / a->n_snd_buf) : 0;
    s->rcv.known = a->n_rcv_wait > 0;
    s->rcv.wait = a->n_rcv_wait ? a->rcv_wait / a->n_rcv_wait : 0;
    s->rcv.buf = a->n_rcv_buf ? (uint32_t)(a->rcv_buf / a->n_rcv_buf) : 0;
    s->snd.local = snd == &r->local;
    s->rcv.local = rcv == &r->local;
    end_load(snd, true, &s->snd);
    end_load(rcv, false, &s->rcv);
    snprintf(s->cc, sizeof(s->cc), "%s", snd->congestion);
    s->same_host = snd->boot_id[0] && !strcmp(snd->boot_id, rcv->boot_id);
    if (rcv->valid)
        plateau(rcv, s);
}

int diagnose_from_run(const struct run_result *r, struct diagnose_sample *s, char *err,
                      size_t errlen)
{
    const struct side_result *snd = NULL, *rcv = NULL;
    struct acc a;

    memset(&a, 0, sizeof(a));
    s->flows = 0;
    s->busy_us = s->rwnd_us = s->sndbuf_us = s->retrans = s->segs_out = 0;
    s->throughput_bps = r->summary.throughput_bps;
    s->pacing_bps = r->params.fq_rate_bps;
    s->warmup_s = r->params.omit_ns / 1e9;
    for (uint32_t i = 0; i < r->nflows; i++) {
        const struct flow_summary *f = &r->flows[i];
        const struct side_result *sd = f->client_sends ? &r->local : &r->remote;
        const struct side_result *rd = f->client_sends ? &r->remote : &r->local;
        const struct side_flow *sf = side_flow(sd, f->id);
        const struct side_flow *rf = rd->valid ? side_flow(rd, f->id) : NULL;

        if (!sf || !sf->sender || !sf->ti.valid)
            continue;
        if (snd && sd != snd)
            continue; /* one direction: the first sender's */
        snd = sd;
        rcv = rd;
        add_tcp(s, &a, sf);
        add_app(&a, sf, rf, sd->seconds, rd->seconds);
        s->local_receives |= !f->client_sends;
    }
    if (!s->flows) {
        snprintf(err, errlen,
                 "the sender reported no TCP_INFO for any flow (a server too old "
                 "to send it, or every flow failed): nothing to diagnose");
        return -1;
    }
    s->srtt_us = a.rtt_sum / s->flows;
    s->seconds = a.secs / s->flows;
    s->cwnd = (uint64_t)(a.cwnd / s->flows);
    if (a.m) {
        s->samples = a.samples / a.m;
        s->rtt_mean_us = a.m_rtt / a.m;
        s->wnd_mean = a.m_wnd / a.m;
        s->inflight_mean = a.m_inflight / a.m;
    }
    finish_ends(r, snd, rcv, &a, s);
    return 0;
}
