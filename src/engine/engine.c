/* engine: timing and sampling around the worker threads of one side. */
#define _GNU_SOURCE
#include "engine.h"
#include "clock.h"

#include "hostfs.h"
#include "log.h"
#include "sock.h"
#include "tcpinfo.h"
#include "worker.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

struct engine {
    const struct flow_kind *kind;
    struct params p;
    bool is_client;
    uint32_t nflows, nworkers, attached;
    struct flow *flows;
    struct worker *workers;
    pid_t *tids;
    uint64_t t0, t_meas, t_stop; /* start, end of omit, stop (CLOCK_MONOTONIC ns) */
    uint64_t t_end;              /* when engine_run returned */
    bool omit_done, started, finished;
    uint64_t *base;        /* per-flow bytes at the end of omit */
    uint64_t *base_mapped; /* per-flow bytes received zero-copy at the end of omit */
    uint64_t *prev;        /* per-flow bytes at the previous interval */
    uint32_t *prev_retrans;
    uint64_t *prev_txns, *prev_lat, *base_txns, *base_timeouts;
    uint64_t *prev_wire; /* per-flow bytes on the wire, both ways, at the previous interval */
    uint64_t prev_t;
    struct engine_limits lim;
    struct cpu_sys_snap cpu_start, cpu_meas, cpu_prev;
    struct tcpinfo *base_ti; /* per-flow TCP_INFO at the end of omit (retransmits etc.) */
    struct cpu_thread_snap thr_meas, thr_prev;
    long clk_tck;
    uint64_t cpus_seen[CPULIST_MAX / 64]; /* CPUs the workers were seen running on */
    struct side_result res;               /* intervals fill as the test runs */
};

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

/* What the engine keeps per flow besides struct flow: its result, the interval and omit
 * baselines (engine_create's per-flow arrays) and the TCP_INFO of the omit's end. */
#define ENGINE_PER_FLOW                                                                            \
    (sizeof(struct side_flow) + sizeof(struct tcpinfo) + 8 * sizeof(uint64_t) + sizeof(uint32_t))
/* What a thread costs beyond its buffer: the stack it touches, the kernel's share. */
#define ENGINE_PER_THREAD (128 * 1024)

void engine_plan(const struct flow_kind *kind, const struct params *p, bool is_client,
                 struct engine_plan *out)
{
    uint32_t want = is_client ? p->threads : (p->server_threads ? p->server_threads : p->threads);
    uint64_t total_ns = p->duration_ns + p->omit_ns, cells;
    struct flow_needs fn = {0};
    uint64_t per_worker;

    memset(out, 0, sizeof(*out));
    /* a flow per worker (e.g. a listener each), or -P (x2 bidir) flows on at most as many
     * threads */
    out->nworkers = kind->flow_per_worker ? want : min_u32(want, params_total_flows(p));
    out->nflows = kind->flow_per_worker ? out->nworkers : params_total_flows(p);
    out->cap_intervals =
        p->interval_ns ? (uint32_t)fmin((double)(total_ns / p->interval_ns) + 4, 1e7) : 1;
    if (kind->needs) {
        kind->needs(p, is_client, &fn);
        out->buflen = fn.buf > WORKER_RECV_CHUNK ? fn.buf : WORKER_RECV_CHUNK;
    } else {
        out->buflen = worker_default_buflen(p);
    }
    cells = (uint64_t)out->nflows * out->cap_intervals;
    per_worker = sizeof(struct worker) + out->buflen + ENGINE_PER_THREAD +
                 (kind->transactional ? sizeof(struct histo) : 0) +
                 (p->zerocopy ? out->buflen : 0) + /* the memory file sendfile() reads */
                 sizeof(struct flow *) * (out->nflows / out->nworkers + 1);
    out->bytes = sizeof(struct engine) + (uint64_t)out->nworkers * (per_worker + sizeof(pid_t)) +
                 (uint64_t)out->nflows * (sizeof(struct flow) + fn.state + ENGINE_PER_FLOW) +
                 (uint64_t)out->cap_intervals * sizeof(struct interval) +
                 (cells <= RESULT_MAX_INTERVAL_CELLS ? cells * sizeof(struct interval_flow) : 0) +
                 (kind->transactional && is_client ? sizeof(struct histo) : 0);
    out->fds = out->nflows * (1 + fn.fds) + out->nworkers * (2 + (p->zerocopy ? 1 : 0));
}

static int alloc_per_flow(struct engine *e, uint32_t cap_iv)
{
    uint32_t n = e->nflows;

    e->flows = calloc(n, sizeof(*e->flows));
    e->workers = calloc(e->nworkers, sizeof(*e->workers));
    e->tids = calloc(e->nworkers, sizeof(*e->tids));
    e->base = calloc(n, sizeof(*e->base));
    e->base_mapped = calloc(n, sizeof(*e->base_mapped));
    e->prev = calloc(n, sizeof(*e->prev));
    e->prev_retrans = calloc(n, sizeof(*e->prev_retrans));
    e->prev_txns = calloc(n, sizeof(*e->prev_txns));
    e->prev_lat = calloc(n, sizeof(*e->prev_lat));
    e->base_txns = calloc(n, sizeof(*e->base_txns));
    e->base_ti = calloc(n, sizeof(*e->base_ti));
    e->base_timeouts = calloc(n, sizeof(*e->base_timeouts));
    e->prev_wire = calloc(n, sizeof(*e->prev_wire));
    if (!e->flows || !e->workers || !e->tids || !e->base || !e->base_mapped || !e->prev ||
        !e->prev_retrans || !e->prev_txns || !e->prev_lat || !e->base_txns || !e->base_ti ||
        !e->base_timeouts || !e->prev_wire || result_side_init(&e->res, n, cap_iv))
        return -ENOMEM;
    return 0;
}

struct engine *engine_create(const struct flow_kind *kind, const struct params *p, bool is_client,
                             const struct cpulist *cpus, char *err, size_t errlen)
{
    struct engine *e = calloc(1, sizeof(*e));
    struct engine_plan plan;

    if (!e)
        goto nomem;
    engine_plan(kind, p, is_client, &plan);
    e->kind = kind;
    e->p = *p;
    e->is_client = is_client;
    e->nworkers = plan.nworkers;
    e->nflows = plan.nflows;
    e->clk_tck = sysconf(_SC_CLK_TCK);
    if (alloc_per_flow(e, plan.cap_intervals))
        goto nomem;
    for (uint32_t w = 0; w < e->nworkers; w++)
        e->workers[w].epfd = e->workers[w].stopfd = e->workers[w].memfd = -1;
    for (uint32_t i = 0; i < e->nflows; i++)
        e->flows[i].fd = -1;
    for (uint32_t i = 0; i < e->nflows; i++)
        if (flow_init(&e->flows[i], i, kind, &e->p, is_client))
            goto nomem;
    for (uint32_t w = 0; w < e->nworkers; w++) {
        int cpu = cpus && cpus->n ? cpus->cpu[w % (uint32_t)cpus->n] : -1;
        /* flows go round-robin, so a worker owns ceil(nflows / nworkers) at most */
        uint32_t cap = (e->nflows + e->nworkers - 1) / e->nworkers;
        if (worker_init(&e->workers[w], w, cpu, &e->p, cap, plan.buflen, ENGINE_DRAIN_NS,
                        kind->transactional)) {
            snprintf(err, errlen,
                     "cannot set up worker thread %u: out of memory or file descriptors", w);
            engine_destroy(e);
            return NULL;
        }
    }
    e->res.threads = e->nworkers;
    snprintf(e->res.version, sizeof(e->res.version), "%s", NETRIG_VERSION);
    hostfs_read(NULL, "/proc/sys/kernel/random/boot_id", e->res.boot_id, sizeof(e->res.boot_id));
    if (cpus && cpus->n)
        cpulist_format(cpus, e->res.cpus, sizeof(e->res.cpus));
    if (kind->transactional && is_client) {
        e->res.lat = malloc(sizeof(*e->res.lat));
        if (!e->res.lat)
            goto nomem;
        histo_init(e->res.lat);
    }
    return e;
nomem:
    snprintf(err, errlen, "out of memory for %u flows", params_total_flows(p));
    engine_destroy(e);
    return NULL;
}

uint32_t engine_flow_count(const struct engine *e) { return e->nflows; }

int engine_set_target(struct engine *e, const struct sockaddr *to, socklen_t len,
                      const char *bind_addr)
{
    if (!e->kind->set_target)
        return -EOPNOTSUPP; /* this kind's flows are handed their sockets */
    for (uint32_t i = 0; i < e->nflows; i++) {
        if (e->kind->set_target(&e->flows[i], to, len, bind_addr))
            return -EINVAL;
        if (worker_add_flow(&e->workers[i % e->nworkers], &e->flows[i]))
            return -ENOSPC;
        e->attached++;
    }
    return 0;
}

int engine_attach(struct engine *e, uint32_t id, int fd, char *err, size_t errlen)
{
    struct flow *f;
    struct sock_flow_opts fo;
    char warn[256];
    int rc, zc = 0;
    socklen_t zl = sizeof(zc);

    if (id >= e->nflows || e->flows[id].fd >= 0) {
        snprintf(err, errlen, "data connection for flow %u is unexpected (test has %u flows)", id,
                 e->nflows);
        return -EPROTO;
    }
    f = &e->flows[id];
    flow_sock_opts(&e->p, e->kind->tcp, &fo);
    rc = sock_apply_flow_opts(fd, &fo, f->sender, err, errlen, warn, sizeof(warn));
    if (rc)
        return rc;
    if (warn[0] && !e->res.warning[0])
        snprintf(e->res.warning, sizeof(e->res.warning), "%s", warn);
    if (f->sender && e->p.zerocopy) {
        if (!getsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &zc, &zl) && zc)
            f->tx = FLOW_TX_MSG_ZEROCOPY;
        else if (e->workers[id % e->nworkers].memfd >= 0)
            f->tx = FLOW_TX_SENDFILE; /* the note from sock_apply_flow_opts says why */
    }
    sock_set_nonblock(fd, true);
    f->fd = fd;
    if (f->ops->attach) {
        warn[0] = '\0';
        f->ops->attach(f, warn, sizeof(warn));
        if (warn[0] && !e->res.warning[0])
            snprintf(e->res.warning, sizeof(e->res.warning), "%s", warn);
    }
    rc = worker_add_flow(&e->workers[id % e->nworkers], f);
    if (rc) {
        f->fd = -1;
        snprintf(err, errlen, "cannot add flow %u to its worker: %s", id, strerror(-rc));
        return rc;
    }
    if (e->attached++ == 0 && e->kind->tcp) {
        char cc[PARAMS_CC_LEN] = "";
        socklen_t cl = sizeof(cc) - 1;
        if (!getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &cl))
            snprintf(e->res.congestion, sizeof(e->res.congestion), "%s", cc);
    }
    return 0;
}

bool engine_complete(const struct engine *e) { return e->attached == e->nflows; }

static void mark_measure_start(struct engine *e, uint64_t now)
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
        /* counters of TCP_INFO that grow over the connection's life start here too */
        if (e->omit_done && e->p.omit_ns && e->flows[i].fd >= 0 && e->kind->has_tcpinfo)
            tcpinfo_read(e->flows[i].fd, &e->base_ti[i]);
    }
    cpu_sample_system(NULL, &e->cpu_meas);
    cpu_sample_threads(e->tids, (int)e->nworkers, &e->thr_meas);
}

void engine_set_limits(struct engine *e, const struct engine_limits *l) { e->lim = *l; }

/* Each worker its share of the rate, by the flows it runs, and the hard deadline. */
static void apply_limits(struct engine *e)
{
    for (uint32_t w = 0; w < e->nworkers; w++) {
        struct worker *wk = &e->workers[w];
        atomic_store(&wk->hard_at, e->lim.hard_ns ? e->t0 + e->lim.hard_ns : 0);
        worker_set_rate(
            wk, e->lim.rate_bps ? (uint64_t)((double)e->lim.rate_bps * wk->nflows / e->nflows) : 0);
    }
}

int engine_start(struct engine *e, char *err, size_t errlen)
{
    if (!engine_complete(e)) {
        snprintf(err, errlen, "only %u of %u data connections arrived", e->attached, e->nflows);
        return -EPROTO;
    }
    e->t0 = e->prev_t = clock_mono_ns();
    cpu_sample_system(NULL, &e->cpu_prev);
    e->cpu_start = e->cpu_prev;
    /* without warm-up, measuring starts before the first byte moves (all counters are 0) */
    if (e->p.omit_ns == 0)
        mark_measure_start(e, e->t0);
    apply_limits(e);
    for (uint32_t w = 0; w < e->nworkers; w++) {
        int rc = worker_start(&e->workers[w]);
        if (rc) {
            snprintf(err, errlen, "cannot start worker thread on CPU %d: %s", e->workers[w].cpu,
                     strerror(-rc));
            for (uint32_t k = 0; k < w; k++)
                worker_stop(&e->workers[k]);
            return rc;
        }
    }
    e->started = true;
    /* thread ids appear as each thread runs; wait a moment for them (bounded) */
    for (int tries = 0; tries < 1000; tries++) {
        uint32_t have = 0;
        for (uint32_t w = 0; w < e->nworkers; w++)
            have += (e->tids[w] = atomic_load(&e->workers[w].tid)) != 0;
        if (have == e->nworkers)
            break;
        usleep(1000);
    }
    cpu_sample_threads(e->tids, (int)e->nworkers, &e->thr_prev);
    return 0;
}

/* What flow i moved on the wire, both ways, since the previous interval: from TCP_INFO for a
 * connection (the kernel's bytes acked and received, not what sits in our socket buffer),
 * else what the flow wrote and read. */
static uint64_t wire_delta(struct engine *e, uint32_t i, const struct tcpinfo *ti, uint64_t bytes)
{
    uint64_t now = ti->valid
                       ? ti->bytes_acked + ti->bytes_received
                       : bytes + atomic_load_explicit(&e->flows[i].sent, memory_order_relaxed);
    uint64_t d = now > e->prev_wire[i] ? now - e->prev_wire[i] : 0;

    e->prev_wire[i] = now;
    return d;
}

/* Returns the interval hook's verdict: non-zero ends the run. */
static int sample_interval(struct engine *e, uint64_t now, bool omitted,
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

        if (f->fd >= 0 && e->kind->has_tcpinfo)
            tcpinfo_read(f->fd, &ti);
        iv->txns += tx - e->prev_txns[i];
        iv->lat_sum_ns += ls - e->prev_lat[i];
        e->prev_txns[i] = tx;
        e->prev_lat[i] = ls;
        if (f->sender && ti.valid) {
            dre =
                ti.total_retrans >= e->prev_retrans[i] ? ti.total_retrans - e->prev_retrans[i] : 0;
            e->prev_retrans[i] = ti.total_retrans;
        }
        if (f->sender)
            iv->sent_bytes += b - e->prev[i];
        else
            iv->recv_bytes += b - e->prev[i];
        iv->wire_bytes += wire_delta(e, i, &ti, b);
        iv->retrans += dre;
        if (iv->flows) {
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
static void note_worker_cpus(struct engine *e)
{
    for (uint32_t w = 0; w < e->nworkers; w++) {
        int cpu = e->tids[w] ? cpu_thread_last_cpu(e->tids[w]) : -1;
        if (cpu >= 0 && cpu < CPULIST_MAX)
            e->cpus_seen[cpu / 64] |= 1ULL << (cpu % 64);
    }
}

static void format_cpus_seen(struct engine *e)
{
    struct cpulist cl = {0};

    for (int c = 0; c < CPULIST_MAX; c++)
        if (e->cpus_seen[c / 64] & (1ULL << (c % 64)))
            cl.cpu[cl.n++] = c;
    cpulist_format(&cl, e->res.cpus_seen, sizeof(e->res.cpus_seen));
}

static bool all_flows_done(const struct engine *e)
{
    for (uint32_t i = 0; i < e->nflows; i++)
        if (atomic_load_explicit(&e->flows[i].state, memory_order_acquire) == FLOW_ACTIVE)
            return false;
    return true;
}

static uint64_t min_deadline(uint64_t a, uint64_t b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    return a < b ? a : b;
}

enum engine_end engine_run(struct engine *e, const struct engine_hooks *h)
{
    uint64_t iv_ns = e->p.interval_ns;
    uint64_t omit_end = e->t0 + e->p.omit_ns;
    uint64_t end = h->run_ns ? e->t0 + h->run_ns : 0;
    uint64_t hard = e->lim.hard_ns ? e->t0 + e->lim.hard_ns : 0;
    uint64_t next_iv = iv_ns ? e->t0 + iv_ns : 0;
    enum engine_end why;

    end = min_deadline(end, hard);
    for (;;) {
        uint64_t now = clock_mono_ns(), wake;
        struct pollfd pfd = {.fd = h->watch_fd, .events = POLLIN};
        int timeout_ms, rc;

        if (!e->omit_done && now >= omit_end) {
            if (iv_ns && now > e->prev_t)
                sample_interval(e, now, true, h);
            mark_measure_start(e, now);
            next_iv = iv_ns ? now + iv_ns : 0;
        }
        if (next_iv && now >= next_iv) {
            if (sample_interval(e, now, !e->omit_done, h)) {
                why = ENGINE_END_LIMIT;
                break;
            }
            next_iv += iv_ns;
            if (next_iv <= now)
                next_iv = now + iv_ns; /* we overslept: skip, never burst */
        }
        note_worker_cpus(e);
        if (h->stop_flag && *h->stop_flag) {
            why = ENGINE_END_SIGNAL;
            break;
        }
        if (end && now >= end) {
            why = ENGINE_END_TIME;
            break;
        }
        if (all_flows_done(e)) {
            why = ENGINE_END_FLOWS;
            break;
        }
        wake = min_deadline(min_deadline(end, next_iv), e->omit_done ? 0 : omit_end);
        timeout_ms = wake ? (int)((wake > now ? wake - now : 0) / 1000000) + 1 : 100;
        if (timeout_ms > 100)
            timeout_ms = 100; /* stop flag and flow state are polled this often */
        rc = poll(&pfd, h->watch_fd >= 0 ? 1 : 0, timeout_ms);
        if (rc > 0 && h->on_watch) {
            int r = h->on_watch(h->ctx);
            if (r != 0) {
                why = r > 0 ? ENGINE_END_WATCH : ENGINE_END_ERROR;
                break;
            }
        }
    }
    /* a last, partial interval when it is long enough to mean something */
    e->t_end = clock_mono_ns();
    if (iv_ns && e->t_end - e->prev_t >= iv_ns / 20)
        sample_interval(e, e->t_end, !e->omit_done, h);
    return why;
}

/* How this side's senders wrote: one method, or "mixed". */
static void set_send_method(struct engine *e)
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

/* How this side's receivers read: one method, or "mixed" (zero-copy fell back on some). */
static void set_recv_method(struct engine *e)
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

/* Transaction counters of one flow after the omit period, and the kind's own figures. */
static void collect_counts(const struct engine *e, struct flow *f, struct side_flow *sf)
{
    sf->txns = atomic_load(&f->txns) - e->base_txns[f->id];
    sf->timeouts = atomic_load(&f->timeouts) - e->base_timeouts[f->id];
    if (e->kind->collect)
        e->kind->collect(f, sf);
}

void engine_stop(struct engine *e)
{
    if (!e->started || e->t_stop)
        return;
    e->t_stop = clock_mono_ns();
    for (uint32_t w = 0; w < e->nworkers; w++)
        worker_stop(&e->workers[w]);
}

void engine_kill(struct engine *e)
{
    if (!e->started)
        return;
    if (!e->t_stop)
        e->t_stop = clock_mono_ns();
    for (uint32_t w = 0; w < e->nworkers; w++)
        worker_kill(&e->workers[w]);
}

void engine_finish(struct engine *e, struct side_result *out)
{
    struct cpu_sys_snap cs;
    struct cpu_thread_snap ts = {0};
    bool copied = false;

    if (!e->finished && e->started) {
        note_worker_cpus(e);
        format_cpus_seen(e);
        engine_stop(e);
        for (uint32_t w = 0; w < e->nworkers; w++) {
            worker_join(&e->workers[w]);
            ts.user_us += e->workers[w].cpu_at_exit.user_us;
            ts.sys_us += e->workers[w].cpu_at_exit.sys_us;
        }
        if (!e->omit_done) { /* stopped during warm-up: report all of it (the run is partial) */
            e->t_meas = e->t0;
            e->cpu_meas = e->cpu_start;
            memset(&e->thr_meas, 0, sizeof(e->thr_meas));
            memset(e->base, 0, e->nflows * sizeof(*e->base));
            memset(e->base_mapped, 0, e->nflows * sizeof(*e->base_mapped));
            memset(e->base_txns, 0, e->nflows * sizeof(*e->base_txns));
            memset(e->base_ti, 0, e->nflows * sizeof(*e->base_ti));
            memset(e->base_timeouts, 0, e->nflows * sizeof(*e->base_timeouts));
            e->omit_done = true;
        }
        if (!cpu_sample_system(NULL, &cs))
            cpu_usage_between(&e->cpu_meas, &cs, &e->thr_meas, &ts,
                              (double)(clock_mono_ns() - e->t_meas) / 1e9, &e->res.cpu);
        e->res.seconds = (double)(e->t_stop - e->t_meas) / 1e9;
        for (uint32_t i = 0; i < e->nflows; i++) {
            struct flow *f = &e->flows[i];
            struct side_flow *sf = &e->res.flows[i];
            uint64_t last = atomic_load(&f->last_ns);

            sf->id = i;
            sf->sender = f->sender;
            sf->bytes = atomic_load(&f->bytes) - e->base[i];
            sf->rx_zc_bytes = f->sender ? 0 : atomic_load(&f->rx_mapped) - e->base_mapped[i];
            sf->worker = (int)f->worker;
            sf->cpu = e->workers[f->worker].cpu;
            sf->err = atomic_load(&f->err);
            if (f->sender)
                sf->seconds = e->res.seconds;
            else
                sf->seconds = last > e->t_meas ? (double)(last - e->t_meas) / 1e9 : 0;
            if (f->fd >= 0 && e->kind->has_tcpinfo) {
                tcpinfo_read(f->fd, &sf->ti);
                tcpinfo_since(&sf->ti, &e->base_ti[i]);
            }
            copied |= atomic_load(&f->zc_copied);
            collect_counts(e, f, sf);
        }
        for (uint32_t w = 0; e->res.lat && w < e->nworkers; w++)
            if (e->workers[w].lat)
                histo_merge(e->res.lat, e->workers[w].lat);
        if (copied && !e->res.warning[0])
            snprintf(e->res.warning, sizeof(e->res.warning),
                     "-Z: MSG_ZEROCOPY to a local receiver is copied by the kernel; "
                     "switched to sendfile()");
        set_send_method(e);
        set_recv_method(e);
        e->res.valid = true;
        e->finished = true;
    }
    *out = e->res;
    memset(&e->res, 0, sizeof(e->res));
}

uint32_t engine_failed_flows(const struct engine *e, int *first_err)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < e->nflows; i++) {
        int err = atomic_load(&e->flows[i].err);
        if (err && err != ETIMEDOUT) {
            if (!n && first_err)
                *first_err = err;
            n++;
        }
    }
    return n;
}

void engine_destroy(struct engine *e)
{
    if (!e)
        return;
    if (e->started && !e->finished) {
        struct side_result tmp;
        engine_finish(e, &tmp);
        result_side_fini(&tmp);
    }
    for (uint32_t w = 0; e->workers && w < e->nworkers; w++)
        worker_fini(&e->workers[w]);
    for (uint32_t i = 0; e->flows && i < e->nflows; i++) {
        if (e->flows[i].fd >= 0)
            close(e->flows[i].fd);
        flow_fini(&e->flows[i]);
    }
    result_side_fini(&e->res);
    free(e->flows);
    free(e->workers);
    free(e->tids);
    free(e->base);
    free(e->base_mapped);
    free(e->prev);
    free(e->prev_retrans);
    free(e->prev_txns);
    free(e->prev_lat);
    free(e->base_txns);
    free(e->base_ti);
    free(e->base_timeouts);
    free(e->prev_wire);
    free(e);
}
