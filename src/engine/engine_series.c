/* engine_series: a side's time series (--sample) and transaction logs (netrig load's probes). */
#define _GNU_SOURCE
#include "engine_series.h"

#include "clock.h"
#include "tcpinfo.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

int engine_series_logs(struct worker *workers, uint32_t nworkers, uint64_t rate_tps,
                       uint64_t total_ns)
{
    double want =
        rate_tps ? (double)rate_tps * (double)total_ns / 1e9 * 1.1 + 1024 : (double)(1u << 16);

    for (uint32_t w = 0; w < nworkers; w++) {
        struct txnlog *l = calloc(1, sizeof(*l));
        workers[w].log = l;
        if (!l || txnlog_init(l, want > TXNLOG_MAX_CAP ? TXNLOG_MAX_CAP : (uint32_t)want))
            return -ENOMEM;
    }
    return 0;
}

struct txnlog *engine_series_merge(struct worker *workers, uint32_t nworkers, uint64_t t0)
{
    const struct txnlog *src[PARAMS_MAX_THREADS];
    struct txnlog *l = calloc(1, sizeof(*l));

    for (uint32_t w = 0; w < nworkers; w++)
        src[w] = workers[w].log;
    if (l && txnlog_merge(l, src, nworkers, t0) == 0)
        return l;
    free(l);
    return NULL;
}

struct samples *engine_series_new(const struct flow *flows, uint32_t nflows, bool has_tcpinfo,
                                  uint64_t period_ns, uint64_t total_ns)
{
    struct samples *s = samples_new(nflows, period_ns, total_ns);

    for (uint32_t i = 0; s && i < nflows; i++)
        if (flows[i].sender && has_tcpinfo)
            s->kind[i] = SAMPLES_TCP;
    return s;
}

static uint64_t thread_cpu_ns(void) { return clock_read_ns(CLOCK_THREAD_CPUTIME_ID); }

static void fill_row(struct sample *r, const struct tcpinfo *ti)
{
    r->tcp = true;
    r->cwnd = ti->snd_cwnd;
    r->rtt_us = ti->rtt_us;
    r->retrans = ti->total_retrans;
    r->mss = ti->snd_mss;
    r->delivery_rate_bps = ti->delivery_rate_bps;
    r->pacing_rate_bps = ti->pacing_rate_bps;
    r->busy_us = ti->busy_us;
    r->rwnd_limited_us = ti->rwnd_limited_us;
    r->sndbuf_limited_us = ti->sndbuf_limited_us;
}

void engine_series_tick(struct samples *smp, const struct flow *flows, uint32_t nflows, double t_s)
{
    uint64_t cpu0 = thread_cpu_ns();
    struct sample *row = samples_tick(smp, t_s);

    for (uint32_t i = 0; i < nflows; i++) {
        const struct flow *f = &flows[i];
        struct tcpinfo ti;

        row[i].bytes = atomic_load_explicit(&f->bytes, memory_order_relaxed);
        if (smp->kind[i] == SAMPLES_TCP && f->fd >= 0 && !tcpinfo_read(f->fd, &ti) && ti.valid) {
            fill_row(&row[i], &ti);
            /* a sender counts what the receiver acknowledged, not what it wrote: its writes
             * run ahead by a socket buffer, which a chart would show as a rate above the
             * link's; the written count only where the kernel has no tcpi_bytes_acked */
            if (ti.bytes_acked)
                row[i].bytes = ti.bytes_acked;
        }
    }
    smp->cpu_s += (double)(thread_cpu_ns() - cpu0) / 1e9; /* what sampling costs */
}
