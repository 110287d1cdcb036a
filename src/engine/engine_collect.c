/* engine_collect: what a side's flows and worker threads did over the measured period, read
 * at the end of the run: send and receive methods, the application's and TCP's figures, the
 * threads' CPU and the host's counters, -n/-k accounting, transaction counts. */
#include "engine_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

/* How this side's senders wrote: one method, or "mixed". */
void engine_set_send_method(struct engine *e)
{
    static const char *const names[] = {"copy", "msg_zerocopy", "sendfile"};
    int method = -1;

    for (uint32_t i = 0; i < e->nflows; i++) {
        int tx = atomic_load(&e->flows[i].tx);
        if (!e->flows[i].sender)
            continue;
        method = method < 0 || method == tx ? tx : 3;
    }
    snprintf(e->res.send_method, sizeof(e->res.send_method), "%s",
             method < 0    ? ""
             : method == 3 ? "mixed"
                           : names[method]);
}

/* The application's and TCP's figures of a stream flow over the measured period. */
void engine_collect_app(const struct engine *e, struct flow *f, struct side_flow *sf)
{
    const struct flow_trace *t = &e->trace[f->id];
    int v = 0;
    socklen_t vl = sizeof(v);

    if (!e->kind->has_tcpinfo || f->fd < 0)
        return;
    sf->wait_s = e->end_wait[f->id] > e->base_wait[f->id]
                     ? (double)(e->end_wait[f->id] - e->base_wait[f->id]) / 1e9
                     : 0;
    if (!getsockopt(f->fd, SOL_SOCKET, SO_SNDBUF, &v, &vl) && v > 0)
        sf->sndbuf = (uint32_t)v;
    vl = sizeof(v);
    if (!getsockopt(f->fd, SOL_SOCKET, SO_RCVBUF, &v, &vl) && v > 0)
        sf->rcvbuf = (uint32_t)v;
    if (t->n) {
        sf->samples = t->n;
        sf->rtt_mean_us = t->rtt_us / t->n;
        sf->snd_wnd_mean = t->snd_wnd / t->n;
        sf->inflight_mean = t->inflight / t->n;
    }
}

/* The worker threads' CPU and this host's counters over the measured period. */
void engine_collect_load(struct engine *e)
{
    struct side_load *l = calloc(1, sizeof(*l));

    if (!l)
        return;
    l->seconds = e->res.seconds;
    for (uint32_t w = 0; w < e->nworkers && l->nthreads < SIDE_MAX_THREADS; w++) {
        struct thread_mark *m = &e->mark[w];
        if (e->tids[w] && !m->sched[1] && e->workers[w].sched_exit_ok) {
            /* it had ended by the stop (a receiver that saw the sender's FIN): as it ended */
            m->at[1] = e->workers[w].sched_at_exit;
            m->sched[1] = true;
            m->cpu = e->workers[w].cpu_exit;
        }
        struct side_thread *t = &l->thread[l->nthreads++];
        t->cpu = e->tids[w] ? m->cpu : -1;
        t->run_s =
            (double)(m->at[1].run_ns > m->at[0].run_ns ? m->at[1].run_ns - m->at[0].run_ns : 0) /
            1e9;
        t->runq_s = m->sched[1] && m->sched[0] ? (double)(m->at[1].wait_ns > m->at[0].wait_ns
                                                              ? m->at[1].wait_ns - m->at[0].wait_ns
                                                              : 0) /
                                                     1e9
                                               : -1;
        for (uint32_t i = 0; i < e->nflows; i++)
            t->sends |= e->flows[i].worker == w && e->flows[i].sender;
    }
    hostctr_delta(&e->hosts[0], &e->hosts[1], &l->host);
    free(e->res.load);
    e->res.load = l;
}

/* How this side's receivers read: one method, or "mixed" (zero-copy fell back on some). */
void engine_set_recv_method(struct engine *e)
{
    static const char *const names[] = {"copy", "zerocopy", "skip_copy"};
    int method = -1;

    for (uint32_t i = 0; i < e->nflows; i++) {
        int rx = atomic_load(&e->flows[i].rx);
        if (e->flows[i].sender || !e->kind->tcp || e->kind->transactional)
            continue;
        method = method < 0 || method == rx ? rx : 3;
    }
    snprintf(e->res.recv_method, sizeof(e->res.recv_method), "%s",
             method < 0    ? ""
             : method == 3 ? "mixed"
                           : names[method]);
}

/* A sender under -n/-k counts from the moment it saw the count start (its own byte count
 * then), so the senders' bytes add up to the limit exactly; one that finished its part was
 * sending until its last write. */
void engine_budget_figures(const struct engine *e, struct flow *f, struct side_flow *sf)
{
    uint64_t last = atomic_load(&f->last_ns);

    if (!atomic_load(&e->budget.armed))
        return; /* stopped in the warm-up: nothing was counted */
    sf->bytes = f->budget_counting ? atomic_load(&f->bytes) - atomic_load(&f->base_bytes) : 0;
    if (atomic_load(&f->budget_done) && last > e->t_meas)
        sf->seconds = (double)(last - e->t_meas) / 1e9;
}

/* Transaction counters of one flow after the omit period, and the kind's own figures. */
void engine_collect_counts(const struct engine *e, struct flow *f, struct side_flow *sf)
{
    sf->txns = atomic_load(&f->txns) - e->base_txns[f->id];
    sf->timeouts = atomic_load(&f->timeouts) - e->base_timeouts[f->id];
    if (e->kind->collect)
        e->kind->collect(f, sf);
}
