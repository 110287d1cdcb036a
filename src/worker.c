/* worker: the per-thread epoll loop that moves stream data. */
#define _GNU_SOURCE
#include "worker.h"

#include <errno.h>
#include <linux/errqueue.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif
#ifndef SO_EE_ORIGIN_ZEROCOPY
#define SO_EE_ORIGIN_ZEROCOPY 5
#endif
#ifndef SO_EE_CODE_ZEROCOPY_COPIED
#define SO_EE_CODE_ZEROCOPY_COPIED 1
#endif

#define WORKER_BATCH 16 /* syscalls per flow per wake-up, so one flow cannot starve others */

uint64_t worker_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

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

int worker_init(struct worker *w, uint32_t id, int cpu, size_t send_len, uint32_t cap_flows,
                uint64_t drain_ns, bool zerocopy)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    /* receives read in chunks of at least 128 KiB whatever -l is: fewer syscalls */
    size_t buflen = send_len > 128 * 1024 ? send_len : 128 * 1024;

    memset(w, 0, sizeof(*w));
    w->memfd = -1;
    w->id = id;
    w->cpu = cpu;
    w->buflen = buflen;
    w->send_len = send_len;
    w->drain_ns = drain_ns;
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    w->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    w->cap = cap_flows;
    w->flows = calloc(cap_flows ? cap_flows : 1, sizeof(*w->flows));
    /* page-aligned, so MSG_ZEROCOPY pins whole pages */
    if (posix_memalign((void **)&w->buf, 4096, buflen))
        w->buf = NULL;
    if (w->epfd < 0 || w->stopfd < 0 || !w->flows || !w->buf) {
        worker_fini(w);
        return -ENOMEM;
    }
    memset(w->buf, 0x5a, buflen);
    if (zerocopy)
        w->memfd = make_memfd(w->buf, send_len);
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->stopfd, &ev)) {
        worker_fini(w);
        return -errno;
    }
    return 0;
}

int worker_add_flow(struct worker *w, struct flow *f)
{
    struct epoll_event ev = {.data.ptr = f};

    if (w->nflows >= w->cap)
        return -ENOSPC;
    ev.events = f->sender ? EPOLLOUT : EPOLLIN | EPOLLRDHUP;
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, f->fd, &ev))
        return -errno;
    f->worker = w->id;
    w->flows[w->nflows++] = f;
    return 0;
}

static void flow_finish(struct worker *w, struct flow *f, int err)
{
    epoll_ctl(w->epfd, EPOLL_CTL_DEL, f->fd, NULL);
    atomic_store_explicit(&f->err, err, memory_order_relaxed);
    atomic_store_explicit(&f->state, FLOW_DONE, memory_order_release);
}

static void add_bytes(struct flow *f, uint64_t n)
{
    uint64_t b = atomic_load_explicit(&f->bytes, memory_order_relaxed);
    atomic_store_explicit(&f->bytes, b + n, memory_order_relaxed);
}

/* Reads MSG_ZEROCOPY completions from the error queue. */
static void zc_reap(struct flow *f)
{
    char control[128];

    for (;;) {
        struct msghdr msg = {.msg_control = control, .msg_controllen = sizeof(control)};
        struct cmsghdr *cm;

        if (recvmsg(f->fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
            return;
        for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
            struct sock_extended_err *ee = (struct sock_extended_err *)CMSG_DATA(cm);
            if (ee->ee_errno != 0 || ee->ee_origin != SO_EE_ORIGIN_ZEROCOPY)
                continue;
            f->zc_done += (uint64_t)(ee->ee_data - ee->ee_info) + 1;
            if (ee->ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
                atomic_store_explicit(&f->zc_copied, true, memory_order_relaxed);
        }
    }
}

/* One write of send_len bytes by the flow's transmit method. */
static ssize_t tx_one(struct worker *w, struct flow *f, int tx)
{
    if (tx == FLOW_TX_SENDFILE) {
        off_t off = 0;
        return sendfile(f->fd, w->memfd, &off, w->send_len);
    }
    if (tx == FLOW_TX_MSG_ZEROCOPY) {
        ssize_t n = send(f->fd, w->buf, w->send_len, MSG_NOSIGNAL | MSG_DONTWAIT | MSG_ZEROCOPY);
        if (n > 0)
            f->zc_sent++;
        return n;
    }
    return send(f->fd, w->buf, w->send_len, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Returns 1 when the flow ended. */
static int flow_send(struct worker *w, struct flow *f, uint32_t events)
{
    int tx = atomic_load_explicit(&f->tx, memory_order_relaxed);
    uint64_t moved = 0;

    if (events & EPOLLERR) {
        zc_reap(f);
        /* the kernel copies zero-copy sends to a local receiver: sendfile() avoids our copy */
        if (tx == FLOW_TX_MSG_ZEROCOPY && w->memfd >= 0 &&
            atomic_load_explicit(&f->zc_copied, memory_order_relaxed)) {
            tx = FLOW_TX_SENDFILE;
            atomic_store_explicit(&f->tx, tx, memory_order_relaxed);
        }
    }
    for (int i = 0; i < WORKER_BATCH; i++) {
        ssize_t n = tx_one(w, f, tx);
        if (n > 0) {
            moved += (uint64_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            break;
        if (n < 0 && errno == ENOBUFS && tx == FLOW_TX_MSG_ZEROCOPY) {
            zc_reap(f); /* too many pages pinned: wait for completions */
            break;
        }
        add_bytes(f, moved);
        flow_finish(w, f, n < 0 ? errno : EPIPE);
        return 1;
    }
    add_bytes(f, moved);
    return 0;
}
static int flow_recv(struct worker *w, struct flow *f)
{
    uint64_t moved = 0;
    int ended = 0, err = 0;

    for (int i = 0; i < WORKER_BATCH; i++) {
        ssize_t n = recv(f->fd, w->buf, w->buflen, MSG_DONTWAIT);
        if (n > 0) {
            moved += (uint64_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            break;
        ended = 1;
        err = n < 0 ? errno : 0;
        break;
    }
    if (moved) {
        add_bytes(f, moved);
        atomic_store_explicit(&f->last_ns, worker_now_ns(), memory_order_relaxed);
    }
    if (ended)
        flow_finish(w, f, err);
    return ended;
}

/* Stop: senders half-close (FIN after their queued data) and end; receivers go on to EOF. */
static uint32_t stop_senders(struct worker *w)
{
    uint32_t ended = 0;
    uint64_t v;

    if (read(w->stopfd, &v, sizeof(v)) < 0)
        return 0;
    for (uint32_t i = 0; i < w->nflows; i++) {
        struct flow *f = w->flows[i];
        if (f->sender && atomic_load_explicit(&f->state, memory_order_relaxed) == FLOW_ACTIVE) {
            shutdown(f->fd, SHUT_WR);
            flow_finish(w, f, 0);
            ended++;
        }
    }
    return ended;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct epoll_event ev[64];
    uint32_t active = w->nflows;
    uint64_t deadline = 0;

    atomic_store(&w->tid, gettid());
    while (active > 0) {
        int timeout = -1, n;

        if (deadline) {
            uint64_t now = worker_now_ns();
            if (now >= deadline)
                break;
            timeout = (int)((deadline - now) / 1000000) + 1;
        }
        n = epoll_wait(w->epfd, ev, 64, timeout);
        if (n < 0 && errno != EINTR) {
            w->err = errno;
            break;
        }
        for (int i = 0; i < n; i++) {
            struct flow *f = ev[i].data.ptr;
            if (!f) {
                active -= stop_senders(w);
                deadline = worker_now_ns() + w->drain_ns;
                continue;
            }
            if (atomic_load_explicit(&f->state, memory_order_relaxed) != FLOW_ACTIVE)
                continue;
            active -= (uint32_t)(f->sender ? flow_send(w, f, ev[i].events) : flow_recv(w, f));
        }
    }
    /* receivers whose peer never closed within the drain time */
    for (uint32_t i = 0; i < w->nflows; i++)
        if (atomic_load(&w->flows[i]->state) == FLOW_ACTIVE)
            flow_finish(w, w->flows[i], ETIMEDOUT);
    cpu_sample_self_thread(&w->cpu_at_exit);
    return NULL;
}

int worker_start(struct worker *w)
{
    pthread_attr_t attr;
    int rc;

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

void worker_stop(struct worker *w)
{
    uint64_t one = 1;

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
    w->flows = NULL;
    w->buf = NULL;
    w->epfd = w->stopfd = w->memfd = -1;
}
