/* worker: the per-thread epoll loop; what happens on each event belongs to the flow's kind. */
#define _GNU_SOURCE
#include "worker.h"

#include "sock.h"

#include <errno.h>
#include <sched.h>
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

int worker_init(struct worker *w, uint32_t id, int cpu, const struct params *p, uint32_t cap_flows,
                uint64_t drain_ns, bool lat)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    /* receives read in chunks of at least 128 KiB whatever -l is: fewer syscalls */
    size_t buflen = max_sz(max_sz(p->write_size, 128 * 1024), max_sz(p->req_size, p->resp_size));

    memset(w, 0, sizeof(*w));
    w->memfd = -1;
    w->notify_fd = -1;
    w->id = id;
    w->cpu = cpu;
    w->p = p;
    w->buflen = buflen;
    w->send_len = p->write_size;
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

/* Stop: each flow's kind decides; returns how many flows ended now. */
static uint32_t stop_flows(struct worker *w)
{
    uint32_t ended = 0;
    uint64_t v;

    if (w->stopping)
        return 0;
    if (read(w->stopfd, &v, sizeof(v)) < 0) {
        /* the eventfd may not be readable yet when the flag was seen first */
    }
    w->stopping = true;
    for (uint32_t i = 0; i < w->nflows; i++) {
        struct flow *f = w->flows[i];
        if (is_active(f) && f->ops->on_stop(w, f))
            ended++;
    }
    return ended;
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

/* How long epoll may sleep: until the next timer or the drain deadline; 0 with --busy-poll. */
static void wait_time(const struct worker *w, uint64_t next_timer, uint64_t deadline,
                      struct timespec *ts, struct timespec **tsp)
{
    uint64_t now, until = next_timer;

    *tsp = NULL;
    if (deadline && (!until || deadline < until))
        until = deadline;
    if (w->p->busy_poll) {
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

/* The event loop: every flow's events, timers and the stop request. */
static void run_evented(struct worker *w)
{
    struct epoll_event ev[64];
    uint32_t active = w->nflows;
    uint64_t deadline = 0, next_timer = 0;

    active -= start_flows(w);
    while (active > 0) {
        struct timespec ts, *tsp;
        int n;

        if (w->has_timers) {
            uint64_t now = worker_now(w);
            active -= run_timers(w, now, &next_timer);
            if (!active)
                break;
        }
        if (deadline && worker_now(w) >= deadline)
            break;
        wait_time(w, next_timer, deadline, &ts, &tsp);
        n = wait_events(w, ev, 64, tsp);
        if (n < 0 && errno != EINTR) {
            w->err = errno;
            break;
        }
        for (int i = 0; i < n; i++) {
            struct flow *f = ev[i].data.ptr;
            /* with hundreds of ready flows the stop event may sit far down the list */
            if (!w->stopping &&
                (!f || atomic_load_explicit(&w->stop_requested, memory_order_relaxed))) {
                active -= stop_flows(w);
                deadline = worker_now(w) + w->drain_ns;
            }
            if (f && is_active(f))
                active -= (uint32_t)f->ops->on_event(w, f, ev[i].events);
        }
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;

    atomic_store(&w->tid, gettid());
    if (w->alone && sock_set_nonblock(w->flows[0]->fd, false) == 0)
        w->flows[0]->ops->run_alone(w, w->flows[0]);
    else
        run_evented(w);
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

int worker_start(struct worker *w)
{
    pthread_attr_t attr;
    int rc;

    /* one flow and nothing to multiplex: blocking calls, no epoll round trips */
    w->alone = w->nflows == 1 && w->flows[0]->ops->run_alone && w->flows[0]->can_run_alone &&
               !w->p->busy_poll && atomic_load(&w->flows[0]->tx) != FLOW_TX_MSG_ZEROCOPY;
    w->quantum = worker_quantum(w->nflows);
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
    if (w->alone && w->flows[0]->sender)
        shutdown(w->flows[0]->fd, SHUT_WR);
    if (write(w->stopfd, &one, sizeof(one)) < 0) {
        /* eventfd writes fail only on overflow, which one stop cannot reach */
    }
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
    w->flows = NULL;
    w->buf = NULL;
    w->lat = NULL;
    w->epfd = w->stopfd = w->memfd = -1;
}
