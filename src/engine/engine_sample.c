/* engine_sample: what one side's engine measures around its workers, off the hot path: each
 * interval's bytes, wire bytes, transactions, TCP_INFO and CPU; the scheduler figures of its
 * threads; at the end each flow's counts, the application's figures and the load. */
#define _GNU_SOURCE
#include "engine_priv.h"
#include "test_kind.h"
#include "mptcpinfo.h"

#include "clock.h"
#include "cpu.h"
#include "cpulist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

/* A worker thread's scheduler figures now (a thread not started yet has none: zero). */
void engine_sample_thread(struct engine *e, uint32_t w, int at)
{
    struct thread_mark *m = &e->mark[w];
    struct cpu_thread_snap ts = {0};

    memset(&m->at[at], 0, sizeof(m->at[at]));
    m->sched[at] = !e->tids[w]; /* a thread not started yet: zero is exact */
    if (!e->tids[w])
        return;
    if (!cpu_thread_sched(e->tids[w], &m->at[at])) {
        m->sched[at] = true;
    } else {
        cpu_sample_threads(&e->tids[w], 1, &ts);
        m->at[at].run_ns = (ts.user_us + ts.sys_us) * 1000;
    }
    if (at == 1)
        m->cpu = cpu_thread_last_cpu(e->tids[w]);
}

void engine_sample_measure_start(struct engine *e, uint64_t now)
{
    e->t_meas = now;
    e->omit_done = true;
    for (uint32_t w = 0; w < e->nworkers; w++)
        atomic_store_explicit(&e->workers[w].measuring, true, memory_order_relaxed);
    for (uint32_t i = 0; i < e->nflows; i++) {
        e->base[i] = atomic_load_explicit(&e->flows[i].bytes, memory_order_relaxed);
        e->base_mapped[i] = atomic_load_explicit(&e->flows[i].rx_mapped, memory_order_relaxed);
        e->base_txns[i] = atomic_load_explicit(&e->flows[i].txns, memory_order_relaxed);
        e->base_timeouts[i] = atomic_load_explicit(&e->flows[i].timeouts, memory_order_relaxed);
        e->base_wait[i] = atomic_load_explicit(&e->flows[i].wait_ns, memory_order_relaxed);
        /* counters of TCP_INFO that grow over the connection's life start here too */
        if (e->omit_done && e->p.omit_ns && e->kind->has_tcpinfo && e->flows[i].fd >= 0)
            tcpinfo_read(e->flows[i].fd, &e->base_ti[i]);
    }
    cpu_sample_system(NULL, &e->cpu_meas);
    cpu_sample_threads(e->tids, (int)e->nworkers, &e->thr_meas);
    cpu_sample_process(&e->proc_meas);
    cgcpu_sample(NULL, &e->cg_meas);
    /* the transfer counts from here: each sender notes its own byte count when it sees this */
    atomic_store_explicit(&e->budget.armed, true, memory_order_release);
    for (uint32_t w = 0; w < e->nworkers; w++)
        engine_sample_thread(e, w, 0);
    hostctr_sample(NULL, &e->hosts[0]);
}

/* What flow i moved on the wire, both ways, since the previous interval: from TCP_INFO for a
 * connection (the kernel's bytes acked and received, not what sits in our socket buffer),
 * else what the flow wrote and read (also for MPTCP, whose TCP_INFO is its first subflow's) */
static uint64_t wire_delta(struct engine *e, uint32_t i, const struct tcpinfo *ti, uint64_t bytes)
{
    uint64_t now = ti->valid && !test_kind_is(&e->p, TEST_KIND_MPTCP)
                       ? ti->bytes_acked + ti->bytes_received
                       : bytes + atomic_load_explicit(&e->flows[i].sent, memory_order_relaxed);
    uint64_t d = now > e->prev_wire[i] ? now - e->prev_wire[i] : 0;

    e->prev_wire[i] = now;
    return d;
}

static void trace_add(struct flow_trace *t, const struct tcpinfo *ti)
{
    t->n++;
    t->rtt_us += ti->rtt_us;
    t->snd_wnd += ti->snd_wnd;
    t->inflight += (double)ti->unacked * ti->snd_mss;
}

/* Returns the interval hook's verdict: non-zero ends the run. */
int engine_sample_interval(struct engine *e, uint64_t now, bool omitted,
                           const struct engine_hooks *h)
{
    struct interval *iv = result_side_next_interval(&e->res);
    struct cpu_sys_snap cs;
    struct cpu_thread_snap ts;

    if (!iv)
        return 0;
    iv->start_s = (double)(e->prev_t - e->t0) / 1e9;
    iv->end_s = (double)(now - e->t0) / 1e9;
    iv->omitted = omitted;
    for (uint32_t i = 0; i < e->nflows; i++) {
        struct flow *f = &e->flows[i];
        uint64_t b = atomic_load_explicit(&f->bytes, memory_order_relaxed);
        struct tcpinfo ti = {0};
        uint32_t dre = 0;

        uint64_t tx = atomic_load_explicit(&f->txns, memory_order_relaxed);
        uint64_t ls = atomic_load_explicit(&f->lat_sum_ns, memory_order_relaxed);

        /* f->fd is the worker's: only a kind whose flow keeps one connection for the whole
         * test (has_tcpinfo) has an fd that is set before the workers run and stays put;
         * a crr flow opens and closes one per transaction, so it is not read here at all */
        if (e->kind->has_tcpinfo && f->fd >= 0)
            tcpinfo_read(f->fd, &ti);
        iv->txns += tx - e->prev_txns[i];
        iv->lat_sum_ns += ls - e->prev_lat[i];
        e->prev_txns[i] = tx;
        e->prev_lat[i] = ls;
        if (f->sender && ti.valid) {
            dre =
                ti.total_retrans >= e->prev_retrans[i] ? ti.total_retrans - e->prev_retrans[i] : 0;
            e->prev_retrans[i] = ti.total_retrans;
            if (!omitted)
                trace_add(&e->trace[i], &ti);
        }
        if (f->sender)
            iv->sent_bytes += b - e->prev[i];
        else
            iv->recv_bytes += b - e->prev[i];
        iv->wire_bytes += wire_delta(e, i, &ti, b);
        iv->retrans += dre;
        if (iv->flows) {
            engine_sample_mptcp_interval(e, (uint32_t)(iv - e->res.intervals), i);
            iv->flows[i].bytes = b - e->prev[i];
            iv->flows[i].retrans = dre;
            iv->flows[i].rtt_us = ti.rtt_us;
            iv->flows[i].cwnd = ti.snd_cwnd;
        }
        e->prev[i] = b;
    }
    if (!cpu_sample_system(NULL, &cs)) {
        cpu_sample_threads(e->tids, (int)e->nworkers, &ts);
        cpu_usage_between(&e->cpu_prev, &cs, &e->thr_prev, &ts, iv->end_s - iv->start_s, &iv->cpu);
        e->cpu_prev = cs;
        e->thr_prev = ts;
    }
    e->prev_t = now;
    return h->on_interval ? h->on_interval(h->ctx, &e->res, iv) : 0;
}

/* Where the workers run now: recorded because placement changes results up to 5x. */
void engine_sample_cpus(struct engine *e)
{
    for (uint32_t w = 0; w < e->nworkers; w++) {
        int cpu = e->tids[w] ? cpu_thread_last_cpu(e->tids[w]) : -1;
        if (cpu >= 0 && cpu < CPULIST_MAX)
            e->cpus_seen[cpu / 64] |= 1ULL << (cpu % 64);
    }
}

void engine_sample_cpus_format(struct engine *e)
{
    struct cpulist cl = {0};

    for (int c = 0; c < CPULIST_MAX; c++)
        if (e->cpus_seen[c / 64] & (1ULL << (c % 64)))
            cl.cpu[cl.n++] = c;
    cpulist_format(&cl, e->res.cpus_seen, sizeof(e->res.cpus_seen));
}

/* How this side's senders wrote: one method, or "mixed". */
void engine_sample_send_method(struct engine *e)
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
void engine_sample_app(const struct engine *e, struct flow *f, struct side_flow *sf)
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
    vl = sizeof(v);
    if (f->sender && !getsockopt(f->fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &v, &vl) && v > 0)
        sf->notsent_lowat = (uint32_t)v;
    if (t->n) {
        sf->samples = t->n;
        sf->rtt_mean_us = t->rtt_us / t->n;
        sf->snd_wnd_mean = t->snd_wnd / t->n;
        sf->inflight_mean = t->inflight / t->n;
    }
}

void engine_sample_mptcp(struct engine *e)
{
    if (!test_kind_is(&e->p, TEST_KIND_MPTCP) || !e->kind->tcp || !e->nflows)
        return;
    free(e->res.mptcp);
    e->res.mptcp = calloc(e->nflows, sizeof(*e->res.mptcp));
    e->res.nmptcp = e->res.mptcp ? e->nflows : 0;
    for (uint32_t i = 0; e->res.mptcp && i < e->nflows; i++)
        if (e->flows[i].fd >= 0)
            mptcpinfo_read(e->flows[i].fd, &e->res.mptcp[i]);
}

static bool mptcp_cells_kept(const struct params *p, uint32_t nflows, uint32_t cap_iv)
{
    return test_kind_is(p, TEST_KIND_MPTCP) && nflows && cap_iv &&
           (uint64_t)nflows * cap_iv <= RESULT_MAX_MPTCP_CELLS;
}

uint64_t engine_sample_mptcp_bytes(const struct params *p, uint32_t nflows, uint32_t cap_iv)
{
    if (!mptcp_cells_kept(p, nflows, cap_iv))
        return 0;
    return (uint64_t)nflows * cap_iv * sizeof(struct interval_mptcp) +
           (uint64_t)nflows * sizeof(struct mptcpinfo);
}

int engine_sample_mptcp_init(struct engine *e, uint32_t cap_intervals)
{
    if (!mptcp_cells_kept(&e->p, e->nflows, cap_intervals) || !e->kind->tcp || !e->res.cells)
        return 0;
    e->res.mptcp_cells = calloc((size_t)e->nflows * cap_intervals, sizeof(*e->res.mptcp_cells));
    e->mp_prev = calloc(e->nflows, sizeof(*e->mp_prev));
    return e->res.mptcp_cells && e->mp_prev ? 0 : -ENOMEM;
}

static bool same_addr(const struct mptcpinfo_addr *a, const struct mptcpinfo_addr *b)
{
    return a->family == b->family && a->port == b->port && !memcmp(a->addr, b->addr, 16);
}

/* the subflow of m between the same two addresses as s */
static const struct mptcpinfo_sub *same_sub(const struct mptcpinfo *m,
                                            const struct mptcpinfo_sub *s)
{
    for (uint32_t j = 0; j < m->nsub; j++)
        if (same_addr(&m->sub[j].local, &s->local) && same_addr(&m->sub[j].remote, &s->remote))
            return &m->sub[j];
    return NULL;
}

void engine_sample_mptcp_interval(struct engine *e, uint32_t k, uint32_t i)
{
    struct interval_mptcp *c;
    struct mptcpinfo now;

    if (!e->res.mptcp_cells || !e->mp_prev || k >= e->res.cap_intervals || e->flows[i].fd < 0 ||
        mptcpinfo_read(e->flows[i].fd, &now))
        return;
    c = &e->res.mptcp_cells[(size_t)k * e->nflows + i];
    c->n = 0;
    for (uint32_t j = 0; j < now.nsub; j++) {
        const struct mptcpinfo_sub *s = &now.sub[j], *was = same_sub(&e->mp_prev[i], s);
        struct interval_subflow *d = &c->sub[c->n++];

        d->local = s->local;
        d->remote = s->remote;
        d->bytes_acked =
            s->bytes_acked - (was && was->bytes_acked <= s->bytes_acked ? was->bytes_acked : 0);
        d->bytes_received =
            s->bytes_received -
            (was && was->bytes_received <= s->bytes_received ? was->bytes_received : 0);
    }
    e->mp_prev[i] = now;
}

/* The worker threads' CPU and this host's counters over the measured period. */
void engine_sample_load(struct engine *e)
{
    struct side_hostload *l = calloc(1, sizeof(*l));

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
    free(e->res.hostload);
    e->res.hostload = l;
}

/* How this side's receivers read: one method, or "mixed" (zero-copy fell back on some). */
void engine_sample_recv_method(struct engine *e)
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
void engine_sample_budget(const struct engine *e, struct flow *f, struct side_flow *sf)
{
    uint64_t last = atomic_load(&f->last_ns);

    if (!atomic_load(&e->budget.armed))
        return; /* stopped in the warm-up: nothing was counted */
    sf->bytes = f->budget_counting ? atomic_load(&f->bytes) - atomic_load(&f->base_bytes) : 0;
    if (atomic_load(&f->budget_done) && last > e->t_meas)
        sf->seconds = (double)(last - e->t_meas) / 1e9;
}

/* Transaction counters of one flow after the omit period, and the kind's own figures. */
void engine_sample_counts(const struct engine *e, struct flow *f, struct side_flow *sf)
{
    sf->txns = atomic_load(&f->txns) - e->base_txns[f->id];
    sf->timeouts = atomic_load(&f->timeouts) - e->base_timeouts[f->id];
    if (e->kind->collect)
        e->kind->collect(f, sf);
}
