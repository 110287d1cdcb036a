/* worker: the per-thread epoll loop; what happens on each event belongs to the flow's kind. */
#define _GNU_SOURCE
#include "worker.h"

#include "sock.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* A memory file holding one send's worth of the pattern, for sendfile(). */
static int make_memfd(const char *buf, size_t len)
{
    int fd = memfd_create("netrig-tx", MFD_CLOEXEC);
    size_t put = 0;

    if (fd < 0)
        return -1;
    while (put < len) {
        ssize_t n = write(fd, buf + put, len - put);
        if (n <= 0) {
            close(fd);
            return -1;
        }
        put += (size_t)n;
    }
    return fd;
}

static size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }

size_t worker_default_buflen(const struct params *p)
{
    /* receives read in chunks of at least 128 KiB whatever -l is: fewer syscalls */
    return max_sz(max_sz(p->write_size, WORKER_RECV_CHUNK), max_sz(p->req_size, p->resp_size));
}

int worker_init(struct worker *w, uint32_t id, int cpu, const struct params *p, uint32_t cap_flows,
                size_t buflen, uint64_t drain_ns, bool lat)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};

    if (!buflen)
        buflen = worker_default_buflen(p);
    memset(w, 0, sizeof(*w));
    w->memfd = -1;
    w->notify_fd = -1;
    w->id = id;
    w->cpu = cpu;
    w->p = p;
    w->buflen = buflen;
    w->send_len = p->write_size < buflen ? p->write_size : buflen;
    w->drain_ns = drain_ns;
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    w->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    w->cap = cap_flows;
    w->flows = calloc(cap_flows ? cap_flows : 1, sizeof(*w->flows));
    /* page-aligned, so MSG_ZEROCOPY pins whole pages */
    if (posix_memalign((void **)&w->buf, 4096, buflen))
        w->buf = NULL;
    if (lat) {
        w->lat = malloc(sizeof(*w->lat));
        if (w->lat)
            histo_init(w->lat);
    }
    if (w->epfd < 0 || w->stopfd < 0 || !w->flows || !w->buf || (lat && !w->lat)) {
        worker_fini(w);
        return -ENOMEM;
    }
    memset(w->buf, 0x5a, buflen);
    if (p->zerocopy)
        w->memfd = make_memfd(w->buf, w->send_len);
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->stopfd, &ev)) {
        worker_fini(w);
        return -errno;
    }
    return 0;
}

int worker_watch(struct worker *w, struct flow *f, int fd, int op, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = f};

    return epoll_ctl(w->epfd, op, fd, &ev) ? -errno : 0;
}

int worker_add_flow(struct worker *w, struct flow *f)
{
    if (w->nflows >= w->cap)
        return -ENOSPC;
    if (f->fd >= 0 && worker_watch(w, f, f->fd, EPOLL_CTL_ADD, f->ops->events))
        return -errno;
    f->worker = w->id;
    if (f->ops->on_timer)
        w->has_timers = true;
    w->flows[w->nflows++] = f;
    return 0;
}

void worker_flow_finish(struct worker *w, struct flow *f, int err)
{
    uint64_t one = 1;

    if (f->fd >= 0)
        epoll_ctl(w->epfd, EPOLL_CTL_DEL, f->fd, NULL);
    f->due_ns = 0;
    atomic_store_explicit(&f->err, err, memory_order_relaxed);
    atomic_store_explicit(&f->state, FLOW_DONE, memory_order_release);
    /* the engine looks at once (a transfer may be complete), not at its next tick */
    if (w->notify_fd >= 0 && write(w->notify_fd, &one, sizeof(one)) < 0) {
        /* an eventfd write fails only on overflow; the engine's tick still sees the state */
    }
}

void worker_flow_complete(struct worker *w, struct flow *f)
{
    atomic_store_explicit(&f->last_ns, worker_now(w), memory_order_relaxed);
    atomic_store_explicit(&f->budget_done, true, memory_order_release);
    worker_flow_finish(w, f, 0);
}

static bool is_active(const struct flow *f)
{
    return atomic_load_explicit(&f->state, memory_order_relaxed) == FLOW_ACTIVE;
}

/* ---- the rate gate */

void worker_set_rate(struct worker *w, uint64_t rate_bps)
{
    struct worker_gate *g = &w->gate;

    memset(g, 0, sizeof(*g));
    if (!rate_bps)
        return;
    g->rate_Bps = rate_bps / 8 ? rate_bps / 8 : 1;
    /* 50 ms of the rate: well within the 10 % a once-a-second meter allows */
    g->burst = (int64_t)(g->rate_Bps / 20);
    g->tokens = g->burst;
}

static void gate_refill(struct worker_gate *g, uint64_t now)
{
    if (g->last_ns && now > g->last_ns) {
        /* whole bytes only; the remainder's time is kept for the next refill */
        uint64_t add = (uint64_t)((double)(now - g->last_ns) * (double)g->rate_Bps / 1e9);
        if (!add)
            return;
        g->tokens = g->tokens + (int64_t)add > g->burst ? g->burst : g->tokens + (int64_t)add;
        g->last_ns += (uint64_t)((double)add * 1e9 / (double)g->rate_Bps);
        if (g->tokens == g->burst)
            g->last_ns = now;
        return;
    }
    if (!g->last_ns)
        g->last_ns = now;
}

bool worker_gate_take(struct worker *w, uint64_t n)
{
    struct worker_gate *g = &w->gate;

    if (!g->rate_Bps)
        return false;
    gate_refill(g, worker_now(w));
    g->tokens -= (int64_t)n;
    return g->tokens < 0;
}

/* Is the worker over its budget now? Then *wait_ns is how long until it is not. */
static bool gate_over(struct worker *w, uint64_t now, uint64_t *wait_ns)
{
    struct worker_gate *g = &w->gate;

    if (!g->rate_Bps)
        return false;
    gate_refill(g, now);
    if (g->tokens >= 0)
        return false;
    *wait_ns = (uint64_t)((double)-g->tokens * 1e9 / (double)g->rate_Bps) + 1000;
    return true;
}

/* Sleeps up to ns, but no later than the hard deadline; wakes early on stopfd when watch. */
static void nap(struct worker *w, uint64_t ns, bool watch)
{
    uint64_t hard = atomic_load_explicit(&w->hard_at, memory_order_relaxed), now = worker_now(w);
    struct pollfd pf = {.fd = w->stopfd, .events = POLLIN};

    if (hard && now + ns > hard)
        ns = hard > now ? hard - now : 0;
    poll(&pf, watch ? 1 : 0, (int)((ns + 999999) / 1000000));
}

void worker_gate_wait(struct worker *w)
{
    uint64_t ns;

    /* in slices, so that the caller looks at its stop and deadline at least every 100 ms */
    if (gate_over(w, worker_now(w), &ns))
        nap(w, ns < 100000000ULL ? ns : 100000000ULL, false);
}

void worker_gate_held(struct worker *w, uint64_t n)
{
    /* a closed-loop client at the limit often has a response in the gate when it stops: that
     * is pacing, not a test the limit cut short (more than 50 ms of the rate is) */
    if (n > (uint64_t)w->gate.burst)
        atomic_fetch_add_explicit(&w->gate_held, n, memory_order_relaxed);
}

/* ---- the hard deadline */

bool worker_past_deadline(struct worker *w)
{
    uint64_t hard = atomic_load_explicit(&w->hard_at, memory_order_relaxed);

    return hard && worker_now(w) >= hard;
}

bool worker_spins(struct worker *w)
{
    return w->p->busy_poll && (!w->spin_off_until || worker_now(w) >= w->spin_off_until);
}

void worker_spin_pause(struct worker *w)
{
    uint64_t t0 = worker_now(w), t1;

    sched_yield();
    t1 = worker_now(w);
    if (t1 - t0 > WORKER_SPIN_SHARED_NS)
        w->spin_off_until = t1 + WORKER_SPIN_BACKOFF_NS;
}

void worker_flow_kill(struct worker *w, struct flow *f)
{
    if (f->fd >= 0)
        shutdown(f->fd, SHUT_RDWR);
    if (is_active(f))
        worker_flow_finish(w, f, ETIMEDOUT);
}

/* Past the hard deadline: every socket shut down both ways, whatever the peer sends. */
static void kill_flows(struct worker *w)
{
    for (uint32_t i = 0; i < w->nflows; i++)
        worker_flow_kill(w, w->flows[i]);
}

/* ---- the event loop */

/* Stop: each flow's kind decides; returns how many flows ended now. */
static uint32_t stop_flows(struct worker *w)
{
    uint32_t ended = 0;

    if (w->stopping)
        return 0;
    w->stopping = true;
    for (uint32_t i = 0; i < w->nflows; i++) {
        struct flow *f = w->flows[i];
        if (is_active(f) && f->ops->on_stop(w, f))
            ended++;
    }
    return ended;
}

/* The stop event: read, so that a level-triggered eventfd does not wake the loop again. */
static void stop_event_read(struct worker *w)
{
    uint64_t v;

    if (read(w->stopfd, &v, sizeof(v)) < 0) {
        /* not readable yet when the flag was seen first: the event comes later */
    }
}

/* Fires due timers; returns how many flows ended, and the next due time in *next. */
static uint32_t run_timers(struct worker *w, uint64_t now, uint64_t *next)
{
    uint32_t ended = 0;

    *next = 0;
    for (uint32_t i = 0; i < w->nflows; i++) {
        struct flow *f = w->flows[i];
        if (!f->due_ns || !is_active(f))
            continue;
        if (f->due_ns <= now && f->ops->on_timer(w, f, now)) {
            ended++;
            continue;
        }
        if (f->due_ns && (!*next || f->due_ns < *next))
            *next = f->due_ns;
    }
    return ended;
}

static uint32_t start_flows(struct worker *w)
{
    uint64_t now = worker_now(w);
    uint32_t ended = 0;

    for (uint32_t i = 0; i < w->nflows; i++) {
        struct flow *f = w->flows[i];
        if (f->ops->on_start && f->ops->on_start(w, f, now))
            ended++;
    }
    return ended;
}

static uint64_t earliest(uint64_t a, uint64_t b) { return !a ? b : !b ? a : a < b ? a : b; }

/* How long epoll may sleep: until the next timer, the drain or the hard deadline; 0 with
 * a spinning wait (--busy-poll, worker_spins). */
static void wait_time(const struct worker *w, bool spin, uint64_t until, struct timespec *ts,
                      struct timespec **tsp)
{
    uint64_t now;

    *tsp = NULL;
    if (spin) {
        ts->tv_sec = ts->tv_nsec = 0;
        *tsp = ts;
        return;
    }
    if (!until)
        return;
    now = worker_now(w);
    until = until > now ? until - now : 0;
    ts->tv_sec = (time_t)(until / 1000000000ULL);
    ts->tv_nsec = (long)(until % 1000000000ULL);
    *tsp = ts;
}

/* epoll_pwait2 has nanosecond timeouts (pacing needs them); kernels before 5.11 and tools
 * like valgrind lack it, so fall back to epoll_wait, rounding up to milliseconds. */
static int wait_events(struct worker *w, struct epoll_event *ev, int max, const struct timespec *ts)
{
    int n, ms;

    if (!w->no_pwait2) {
        n = epoll_pwait2(w->epfd, ev, max, ts, NULL);
        if (n >= 0 || errno != ENOSYS)
            return n;
        w->no_pwait2 = true;
    }
    ms = !ts ? -1 : (int)(ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000);
    return epoll_wait(w->epfd, ev, max, ms);
}

/* One batch of events. Over the rate gate the batch stops: the rest come back next time. */
static uint32_t handle_events(struct worker *w, struct epoll_event *ev, int n)
{
    uint32_t ended = 0;

    for (int i = 0; i < n; i++) {
        struct flow *f = ev[i].data.ptr;
        if (!f) {
            stop_event_read(w);
            continue; /* the loop looks at the stop request itself */
        }
        if (is_active(f))
            ended += (uint32_t)f->ops->on_event(w, f, ev[i].events);
        if (w->gate.rate_Bps && w->gate.tokens < 0)
            break;
    }
    return ended;
}

/* The event loop: every flow's events, timers, the stop request and the deadlines. */
static void run_evented(struct worker *w)
{
    struct epoll_event ev[64];
    uint32_t active = w->nflows;
    uint64_t deadline = 0, next_timer = 0, gate_ns;

    active -= start_flows(w);
    while (active > 0) {
        struct timespec ts, *tsp;
        uint64_t now = worker_now(w),
                 hard = atomic_load_explicit(&w->hard_at, memory_order_relaxed);
        bool spin;
        int n;

        if (hard && now >= hard) {
            kill_flows(w);
            break;
        }
        /* with hundreds of ready flows the stop event may sit far down a batch: the flag */
        if (!w->stopping && atomic_load_explicit(&w->stop_requested, memory_order_relaxed)) {
            active -= stop_flows(w);
            deadline = now + w->drain_ns;
            if (!active)
                break;
        }
        if (w->has_timers) {
            active -= run_timers(w, now, &next_timer);
            if (!active)
                break;
        }
        if (deadline && now >= deadline)
            break;
        if (gate_over(w, now, &gate_ns)) {
            nap(w, earliest(gate_ns, next_timer ? (next_timer > now ? next_timer - now : 1) : 0),
                !w->stopping);
            continue;
        }
        spin = worker_spins(w);
        wait_time(w, spin, earliest(earliest(next_timer, deadline), hard), &ts, &tsp);
        n = wait_events(w, ev, 64, tsp);
        if (n == 0 && spin)
            worker_spin_pause(w);
        if (n < 0 && errno != EINTR) {
            w->err = errno;
            break;
        }
        active -= handle_events(w, ev, n);
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    char name[16];

    /* "netrig-w0", ...: top -H, perf and bench/stream tell the workers (and which end's
     * worker shares a CPU with which) from the main thread */
    snprintf(name, sizeof(name), "netrig-w%u", w->id);
    pthread_setname_np(pthread_self(), name);
    atomic_store(&w->tid, gettid());
    if (w->alone &&
        (w->flows[0]->ops->alone_polls || sock_set_nonblock(w->flows[0]->fd, false) == 0))
        w->flows[0]->ops->run_alone(w, w->flows[0]);
    else
        run_evented(w);
    if (worker_past_deadline(w))
        kill_flows(w);
    /* flows whose peer never closed within the drain time */
    for (uint32_t i = 0; i < w->nflows; i++)
        if (is_active(w->flows[i]))
            worker_flow_finish(w, w->flows[i], ETIMEDOUT);
    cpu_sample_self_thread(&w->cpu_at_exit);
    w->sched_exit_ok = !cpu_thread_sched(gettid(), &w->sched_at_exit);
    w->cpu_exit = sched_getcpu();
    return NULL;
}

size_t worker_quantum(uint32_t nflows)
{
    size_t q = WORKER_ROUND_BYTES / (nflows ? nflows : 1);

    return q < WORKER_QUANTUM_MIN ? WORKER_QUANTUM_MIN : q;
}

size_t worker_tx_turn(size_t quantum, size_t send_len)
{
    size_t cap = send_len > WORKER_TX_TURN_MAX ? send_len : WORKER_TX_TURN_MAX;

    return quantum < cap ? quantum : cap;
}

bool worker_runs_alone(const struct worker *w)
{
    const struct flow *f = w->nflows == 1 ? w->flows[0] : NULL;

    /* one flow and nothing to multiplex: blocking calls (or, with --busy-poll, its own
     * spinning calls), no epoll round trips */
    return f && f->ops->run_alone && f->can_run_alone &&
           (!w->p->busy_poll || f->ops->alone_spins) && atomic_load(&f->tx) != FLOW_TX_MSG_ZEROCOPY;
}

int worker_start(struct worker *w)
{
    pthread_attr_t attr;
    int rc;

    w->alone = worker_runs_alone(w);
    w->quantum = worker_quantum(w->nflows);
    w->tx_turn = worker_tx_turn(w->quantum, w->send_len);
    pthread_attr_init(&attr);
    if (w->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(w->cpu, &set);
        pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
    }
    rc = pthread_create(&w->thread, &attr, worker_main, w);
    pthread_attr_destroy(&attr);
    if (rc)
        return -rc;
    w->running = true;
    return 0;
}

bool worker_stop_requested(struct worker *w)
{
    return atomic_load_explicit(&w->stop_requested, memory_order_relaxed);
}

void worker_stop(struct worker *w)
{
    uint64_t one = 1;

    atomic_store_explicit(&w->stop_requested, true, memory_order_relaxed);
    /* a lone sender may sit in a blocking write: the half-close ends it now (FIN after the
     * data already queued, so the receiver still gets every byte counted) */
    if (w->alone && w->flows[0]->sender && !w->flows[0]->ops->alone_polls)
        shutdown(w->flows[0]->fd, SHUT_WR);
    if (write(w->stopfd, &one, sizeof(one)) < 0) {
        /* eventfd writes fail only on overflow, which one stop cannot reach */
    }
}

void worker_kill(struct worker *w)
{
    uint64_t now = clock_mono_ns(), hard = atomic_load(&w->hard_at);

    if (!hard || hard > now)
        atomic_store(&w->hard_at, now);
    worker_stop(w);
    /* a lone flow may sit in a blocking call: this wakes it at once (its socket stays open
     * until the engine is destroyed, so no other thread can have its number) */
    if (w->alone && !w->flows[0]->ops->alone_polls && w->flows[0]->fd >= 0)
        shutdown(w->flows[0]->fd, SHUT_RDWR);
}

void worker_join(struct worker *w)
{
    if (w->running) {
        pthread_join(w->thread, NULL);
        w->running = false;
    }
}

void worker_fini(struct worker *w)
{
    worker_join(w);
    if (w->epfd >= 0)
        close(w->epfd);
    if (w->stopfd >= 0)
        close(w->stopfd);
    if (w->memfd >= 0)
        close(w->memfd);
    free(w->flows);
    free(w->buf);
    free(w->lat);
    if (w->log)
        txnlog_fini(w->log);
    free(w->log);
    w->log = NULL;
    w->flows = NULL;
    w->buf = NULL;
    w->lat = NULL;
    w->epfd = w->stopfd = w->memfd = -1;
}
