/* engine: timing and sampling around the worker threads of one side. */
#define _GNU_SOURCE
#include "engine_priv.h"
#include "test_kind.h"
#include "engine_series.h"
#include "clock.h"

#include "hostctr.h"
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
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/sockios.h>
#include <time.h>
#include <unistd.h>

static uint32_t min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }

/* What the engine keeps per flow besides struct flow: its result, the interval and omit
 * baselines (engine_create's per-flow arrays) and the TCP_INFO of the omit's end. */
#define ENGINE_PER_FLOW                                                                            \
    (sizeof(struct side_flow) + sizeof(struct tcpinfo) + 10 * sizeof(uint64_t) +                   \
     sizeof(uint32_t) + sizeof(struct flow_trace))
/* What a thread costs beyond its buffer: the stack it touches, the kernel's share. */
#define ENGINE_PER_THREAD (128 * 1024)

/* --sample: what samples_new takes for this run's ticks (SAMPLES_MAX_ROWS at most). */
static uint64_t series_bytes(const struct params *p, uint32_t nflows, uint64_t total_ns)
{
    uint64_t want, room;

    if (!p->sample_ns || !nflows || SAMPLES_MAX_ROWS / nflows < 4)
        return 0;
    want = total_ns / p->sample_ns + 4;
    room = SAMPLES_MAX_ROWS / nflows;
    if (want > room)
        want = room;
    return sizeof(struct samples) + nflows +
           want * (sizeof(double) + nflows * sizeof(struct sample));
}

void engine_plan(const struct flow_kind *kind, const struct params *p, bool is_client,
                 struct engine_plan *out)
{
    uint32_t want = is_client ? p->threads : (p->server_threads ? p->server_threads : p->threads);
    uint64_t total_ns = params_time_cap_ns(p) + p->omit_ns, cells;
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
    out->bytes =
        sizeof(struct engine) + 2 * sizeof(struct hostctr_snap) +
        (uint64_t)out->nworkers * (per_worker + sizeof(pid_t) + sizeof(struct thread_mark)) +
        (uint64_t)out->nflows * (sizeof(struct flow) + fn.state + ENGINE_PER_FLOW) +
        (uint64_t)out->cap_intervals * sizeof(struct interval) +
        (cells <= RESULT_MAX_INTERVAL_CELLS ? cells * sizeof(struct interval_flow) : 0) +
        (kind->transactional && is_client ? sizeof(struct histo) : 0) +
        (test_kind_is(p, TEST_KIND_MPTCP) ? (uint64_t)out->nflows * sizeof(struct mptcpinfo)
                                          : 0) + /* at the end */
        engine_sample_mptcp_bytes(p, out->nflows, out->cap_intervals) +
        series_bytes(p, out->nflows, total_ns);
    out->fds = 1 /* notify_fd */ + out->nflows * (1 + fn.fds) +
               out->nworkers * (2 + (p->zerocopy ? 1 : 0));
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
    e->base_wait = calloc(n, sizeof(*e->base_wait));
    e->end_wait = calloc(n, sizeof(*e->end_wait));
    e->trace = calloc(n, sizeof(*e->trace));
    e->mark = calloc(e->nworkers, sizeof(*e->mark));
    e->hosts = calloc(2, sizeof(*e->hosts));
    if (!e->flows || !e->workers || !e->tids || !e->base || !e->base_mapped || !e->prev ||
        !e->prev_retrans || !e->prev_txns || !e->prev_lat || !e->base_txns || !e->base_ti ||
        !e->base_timeouts || !e->prev_wire || !e->base_wait || !e->end_wait || !e->trace ||
        !e->mark || !e->hosts || result_side_init(&e->res, n, cap_iv))
        return -ENOMEM;
    return 0;
}

/* --sample: room for the series; TCP_INFO for the flows this side sends over TCP. */
static int create_samples(struct engine *e, uint64_t total_ns)
{
    e->res.samples =
        engine_series_new(e->flows, e->nflows, e->kind->has_tcpinfo, e->p.sample_ns, total_ns);
    return e->res.samples ? 0 : -ENOMEM;
}

/* -n/-k: the senders of this side share one count (streams only; flows of transactional
 * kinds never get one). Counting starts now, or at the end of the warm-up. */
static void setup_budget(struct engine *e)
{
    uint64_t units = params_limit_units(&e->p, NULL);

    if (!units || e->kind->transactional)
        return;
    for (uint32_t i = 0; i < e->nflows; i++)
        if (e->flows[i].sender) {
            e->flows[i].budget = &e->budget;
            e->has_budget = true;
        }
    atomic_store(&e->budget.left, units);
    atomic_store(&e->budget.armed, e->p.omit_ns == 0);
}

struct engine *engine_create(const struct flow_kind *kind, const struct params *p, bool is_client,
                             const struct cpulist *cpus, char *err, size_t errlen)
{
    struct engine *e = calloc(1, sizeof(*e));
    struct engine_plan plan;
    uint64_t total_ns = params_time_cap_ns(p) + p->omit_ns;

    if (!e)
        goto nomem;
    engine_plan(kind, p, is_client, &plan);
    e->kind = kind;
    e->notify_fd = -1;
    e->p = *p;
    e->is_client = is_client;
    e->nworkers = plan.nworkers;
    e->nflows = plan.nflows;
    e->clk_tck = sysconf(_SC_CLK_TCK);
    if (alloc_per_flow(e, plan.cap_intervals) || engine_sample_mptcp_init(e, plan.cap_intervals))
        goto nomem;
    for (uint32_t w = 0; w < e->nworkers; w++)
        e->workers[w].epfd = e->workers[w].stopfd = e->workers[w].memfd = -1;
    for (uint32_t i = 0; i < e->nflows; i++)
        e->flows[i].fd = -1;
    e->notify_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (e->notify_fd < 0)
        goto nomem;
    for (uint32_t i = 0; i < e->nflows; i++)
        if (flow_init(&e->flows[i], i, kind, &e->p, is_client))
            goto nomem;
    setup_budget(e);
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
        e->workers[w].notify_fd = e->notify_fd;
    }
    if ((e->p.probe && kind->transactional && is_client &&
         engine_series_logs(e->workers, e->nworkers, e->p.rate_tps, total_ns)) ||
        (e->p.sample_ns && create_samples(e, total_ns)))
        goto nomem;
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

uint64_t engine_bytes_received(const struct engine *e)
{
    uint64_t sum = 0;

    for (uint32_t i = 0; i < e->nflows; i++)
        if (!e->flows[i].sender)
            sum += atomic_load_explicit(&e->flows[i].bytes, memory_order_relaxed);
    return sum;
}

uint64_t engine_gate_held(const struct engine *e)
{
    uint64_t sum = 0;

    for (uint32_t i = 0; i < e->nworkers; i++)
        sum += atomic_load_explicit(&e->workers[i].gate_held, memory_order_relaxed);
    return sum;
}

int engine_set_target(struct engine *e, const struct sockaddr *to, socklen_t len,
                      const struct sock_local *local)
{
    if (!e->kind->set_target)
        return -EOPNOTSUPP; /* this kind's flows are handed their sockets */
    for (uint32_t i = 0; i < e->nflows; i++) {
        if (e->kind->set_target(&e->flows[i], to, len, local))
            return -EINVAL;
        if (worker_add_flow(&e->workers[i % e->nworkers], &e->flows[i]))
            return -ENOSPC;
        e->attached++;
    }
    return 0;
}

/* Whether flow id's worker takes turns over it and others (flows go round-robin). */
static bool shares_worker(const struct engine *e, uint32_t id)
{
    return e->nworkers && id % e->nworkers + e->nworkers < e->nflows;
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
    flow_sock_opts(&e->p, e->kind->tcp, id, &fo);
    /* bulk TCP streams only (as --notsent-lowat): rr and crr keep the kernel's */
    if (e->p.notsent_lowat == PARAMS_NOTSENT_AUTO && test_kind_is(&e->p, TEST_KIND_DRAINS) &&
        shares_worker(e, id) && !fo.mptcp) {
        fo.notsent_lowat = ENGINE_NOTSENT_AUTO;
        fo.notsent_auto = true;
    }
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
    e->next_sample = e->res.samples ? e->t0 + e->p.sample_ns : 0;
    cpu_sample_system(NULL, &e->cpu_prev);
    e->cpu_start = e->cpu_prev;
    hostctr_sample(NULL, &e->hosts[0]); /* replaced at the end of a warm-up */
    /* without warm-up, measuring starts before the first byte moves (all counters are 0) */
    if (e->p.omit_ns == 0)
        engine_sample_measure_start(e, e->t0);
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

/* --sample: every flow's byte counter and, for the flows this side sends over TCP, TCP_INFO
 * (on the engine's thread: the workers never wait for it). */
static void take_sample(struct engine *e, uint64_t now)
{
    struct samples *smp = e->res.samples;

    engine_series_tick(smp, e->flows, e->nflows, (double)(now - e->t0) / 1e9);
    /* the series' period doubles when it thins; never catch up with a burst */
    e->next_sample += smp->period_ns;
    if (e->next_sample <= now)
        e->next_sample = now + smp->period_ns;
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

/* -n/-k: have this side's senders all moved their part? (true when it sends nothing) */
static bool senders_complete(const struct engine *e)
{
    for (uint32_t i = 0; i < e->nflows; i++)
        if (e->flows[i].sender &&
            !atomic_load_explicit(&e->flows[i].budget_done, memory_order_acquire))
            return false;
    return true;
}

/* -n/-k: has everything the peer sends arrived? At end-of-file on every receiver, when the
 * peer said so, or at the receive target. True when this side receives nothing. */
static bool receivers_complete(const struct engine *e, const struct engine_hooks *h)
{
    uint64_t got = 0;
    bool eof = true, any = false;

    for (uint32_t i = 0; i < e->nflows; i++) {
        const struct flow *f = &e->flows[i];
        if (f->sender)
            continue;
        any = true;
        if (atomic_load_explicit(&f->state, memory_order_acquire) == FLOW_ACTIVE ||
            atomic_load_explicit(&f->err, memory_order_relaxed))
            eof = false;
        if (e->omit_done)
            got += atomic_load_explicit(&f->bytes, memory_order_relaxed) - e->base[i];
    }
    if (!any || eof || (h->peer_sent && *h->peer_sent))
        return true;
    return h->recv_target && e->omit_done && got >= h->recv_target;
}

/* -n/-k: is the transfer complete? Tells the hook once when our own part is. */
static bool transfer_complete(struct engine *e, const struct engine_hooks *h)
{
    if (!params_has_limit(&e->p) || e->kind->transactional)
        return false;
    if (!senders_complete(e))
        return false;
    if (!e->sent_told) {
        e->sent_told = true;
        if (h->on_sent)
            h->on_sent(h->ctx);
    }
    return receivers_complete(e, h);
}

/* Every flow ended: a complete transfer (clean ends only), or flows lost early. */
static bool flows_ended_clean(const struct engine *e)
{
    for (uint32_t i = 0; i < e->nflows; i++)
        if (atomic_load_explicit(&e->flows[i].err, memory_order_relaxed))
            return false;
    return params_has_limit(&e->p) && senders_complete(e);
}

/* Sleeps until the next deadline, a flow ending or the watched fd; returns what the watch
 * hook said (0 when it did not run). */
static int wait_events(struct engine *e, const struct engine_hooks *h, uint64_t now, uint64_t wake)
{
    struct pollfd pfd[2] = {{.fd = e->notify_fd, .events = POLLIN},
                            {.fd = h->watch_fd, .events = POLLIN}};
    int timeout_ms = wake ? (int)((wake > now ? wake - now : 0) / 1000000) + 1 : 100;
    uint64_t v;

    if (timeout_ms > 100)
        timeout_ms = 100; /* the stop flag and the receive target are polled this often */
    if (poll(pfd, h->watch_fd >= 0 ? 2 : 1, timeout_ms) <= 0)
        return 0;
    if ((pfd[0].revents & POLLIN) && read(e->notify_fd, &v, sizeof(v)) < 0) {
        /* drained by an earlier read */
    }
    return (pfd[1].revents && h->on_watch) ? h->on_watch(h->ctx) : 0;
}

/* One pass of the run loop's end conditions; returns 1 with *why set when the run ends. */
static int run_ended(struct engine *e, const struct engine_hooks *h, uint64_t now, uint64_t end,
                     enum engine_end *why)
{
    if (h->stop_flag && *h->stop_flag)
        *why = ENGINE_END_SIGNAL;
    else if (end && now >= end)
        *why = ENGINE_END_TIME;
    else if (transfer_complete(e, h) && !h->await_stop)
        *why = ENGINE_END_BUDGET;
    else if (all_flows_done(e) && !(h->await_stop && flows_ended_clean(e)))
        *why = ENGINE_END_FLOWS; /* a clean end of every flow was a complete transfer above */
    else
        return 0;
    return 1;
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
        int rc;

        if (!e->omit_done && now >= omit_end) {
            if (iv_ns && now > e->prev_t)
                engine_sample_interval(e, now, true, h);
            engine_sample_measure_start(e, now);
            next_iv = iv_ns ? now + iv_ns : 0;
        }
        if (next_iv && now >= next_iv) {
            if (engine_sample_interval(e, now, !e->omit_done, h)) {
                why = ENGINE_END_LIMIT;
                break;
            }
            next_iv += iv_ns;
            if (next_iv <= now)
                next_iv = now + iv_ns; /* we overslept: skip, never burst */
        }
        if (e->next_sample && now >= e->next_sample)
            take_sample(e, now);
        engine_sample_cpus(e);
        if (run_ended(e, h, now, end, &why))
            break;
        wake = min_deadline(min_deadline(end, next_iv), e->omit_done ? 0 : omit_end);
        wake = min_deadline(wake, e->next_sample);
        rc = wait_events(e, h, now, wake);
        if (rc != 0) {
            why = rc > 0 ? ENGINE_END_WATCH : ENGINE_END_ERROR;
            break;
        }
    }
    /* a last, partial interval when it is long enough to mean something and the intervals
     * have not reached the end of the run already: a loop that woke late samples its last
     * interval past the end, and the time its own sampling took after that (25-30 ms under
     * valgrind, often without a whole write in it) is not part of the test */
    e->t_end = clock_mono_ns();
    if (iv_ns && !(end && e->prev_t >= end) && e->t_end - e->prev_t >= iv_ns / 20)
        engine_sample_interval(e, e->t_end, !e->omit_done, h);
    return why;
}

void engine_wait_acked(struct engine *e, int timeout_ms)
{
    uint64_t deadline = clock_mono_ns() + (uint64_t)timeout_ms * 1000000ULL;

    while (e->kind->tcp && clock_mono_ns() < deadline) {
        bool all = true;
        for (uint32_t i = 0; i < e->nflows && all; i++) {
            int q = 0;
            if (e->flows[i].sender && e->flows[i].fd >= 0 && !ioctl(e->flows[i].fd, SIOCOUTQ, &q) &&
                q > 0)
                all = false;
        }
        if (all)
            return;
        usleep(2000);
    }
}

/* The measured period's end, before the threads change what they do. */
static void mark_stop(struct engine *e)
{
    e->t_stop = clock_mono_ns();
    for (uint32_t w = 0; w < e->nworkers; w++)
        engine_sample_thread(e, w, 1);
    for (uint32_t i = 0; i < e->nflows; i++)
        e->end_wait[i] = atomic_load_explicit(&e->flows[i].wait_ns, memory_order_relaxed);
    hostctr_sample(NULL, &e->hosts[1]);
}

/* The workers' transaction logs as one, in time order from this side's start. */
static void merge_logs(struct engine *e)
{
    if (!e->workers[0].log)
        return;
    e->res.log = engine_series_merge(e->workers, e->nworkers, e->t0);
    if (!e->res.log && !e->res.warning[0])
        snprintf(e->res.warning, sizeof(e->res.warning),
                 "out of memory for the transaction log: latency over time is missing");
}
void engine_stop(struct engine *e)
{
    if (!e->started || e->t_stop)
        return;
    mark_stop(e);
    for (uint32_t w = 0; w < e->nworkers; w++)
        worker_stop(&e->workers[w]);
}

void engine_kill(struct engine *e)
{
    if (!e->started)
        return;
    if (!e->t_stop)
        mark_stop(e);
    for (uint32_t w = 0; w < e->nworkers; w++)
        worker_kill(&e->workers[w]);
}

/* Stopped during the warm-up: the whole run is reported (it is partial), every baseline from
 * the start. */
static void omit_never_ended(struct engine *e)
{
    e->t_meas = e->t0;
    e->cpu_meas = e->cpu_start;
    memset(&e->thr_meas, 0, sizeof(e->thr_meas));
    memset(e->base, 0, e->nflows * sizeof(*e->base));
    memset(e->base_mapped, 0, e->nflows * sizeof(*e->base_mapped));
    memset(e->base_txns, 0, e->nflows * sizeof(*e->base_txns));
    memset(e->base_ti, 0, e->nflows * sizeof(*e->base_ti));
    memset(e->base_timeouts, 0, e->nflows * sizeof(*e->base_timeouts));
    memset(e->base_wait, 0, e->nflows * sizeof(*e->base_wait));
    for (uint32_t w = 0; w < e->nworkers; w++) { /* since each thread started */
        memset(&e->mark[w].at[0], 0, sizeof(e->mark[w].at[0]));
        e->mark[w].sched[0] = true;
    }
    e->omit_done = true;
}

/* --sample thinned its series to stay bounded: say so. */
static void warn_thinned(struct engine *e)
{
    if (e->res.samples && e->res.samples->thinned && !e->res.warning[0])
        snprintf(e->res.warning, sizeof(e->res.warning),
                 "--sample: %u flows for this long need more than %u samples: every %.3g s "
                 "kept instead of every %.3g s",
                 e->nflows, SAMPLES_MAX_ROWS, e->res.samples->period_ns / 1e9,
                 e->res.samples->asked_ns / 1e9);
}

/* The CPU over the measured period: the machine's, the workers', the process's own and its
 * cgroup's, sampled together so that they cover the same time. */
static void engine_finish_cpu(struct engine *e, const struct cpu_thread_snap *ts)
{
    struct cpu_sys_snap cs;
    struct cpu_proc_snap ps;
    struct cgcpu_snap gs;
    double sec;
    int rc = cpu_sample_system(NULL, &cs);

    cpu_sample_process(&ps);
    cgcpu_sample(NULL, &gs);
    sec = (double)(clock_mono_ns() - e->t_meas) / 1e9;
    memset(&e->res.cpu, 0, sizeof(e->res.cpu));
    if (!rc)
        cpu_usage_between(&e->cpu_meas, &cs, &e->thr_meas, ts, sec, &e->res.cpu);
    cpu_usage_own(&e->proc_meas, &ps, &e->cg_meas, &gs, sec, &e->res.cpu);
}

void engine_finish(struct engine *e, struct side_result *out)
{
    struct cpu_thread_snap ts = {0};
    bool copied = false;

    if (!e->finished && e->started) {
        engine_sample_cpus(e);
        engine_sample_cpus_format(e);
        engine_stop(e);
        for (uint32_t w = 0; w < e->nworkers; w++) {
            worker_join(&e->workers[w]);
            ts.user_us += e->workers[w].cpu_at_exit.user_us;
            ts.sys_us += e->workers[w].cpu_at_exit.sys_us;
        }
        if (!e->omit_done)
            omit_never_ended(e);
        engine_finish_cpu(e, &ts);
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
            if (f->budget)
                engine_sample_budget(e, f, sf);
            if (e->kind->has_tcpinfo && f->fd >= 0) {
                tcpinfo_read(f->fd, &sf->ti);
                tcpinfo_since(&sf->ti, &e->base_ti[i]);
            }
            copied |= atomic_load(&f->zc_copied);
            engine_sample_counts(e, f, sf);
            engine_sample_app(e, f, sf);
        }
        engine_sample_load(e);
        engine_sample_mptcp(e);
        for (uint32_t w = 0; e->res.lat && w < e->nworkers; w++)
            if (e->workers[w].lat)
                histo_merge(e->res.lat, e->workers[w].lat);
        merge_logs(e);
        warn_thinned(e);
        e->res.start_mono_ns = e->t0;
        e->res.stop_mono_ns = e->t_stop;
        if (copied && !e->res.warning[0])
            snprintf(e->res.warning, sizeof(e->res.warning),
                     "-Z: MSG_ZEROCOPY to a local receiver is copied by the kernel; "
                     "switched to sendfile()");
        engine_sample_send_method(e);
        engine_sample_recv_method(e);
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
    if (e->notify_fd >= 0)
        close(e->notify_fd);
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
    free(e->mp_prev);
    free(e->base_wait);
    free(e->end_wait);
    free(e->trace);
    free(e->mark);
    free(e->hosts);
    free(e);
}
