/* flow_stream: TCP bulk transfer. Senders write the worker's buffer as fast as the socket takes
 * it; receivers read until EOF. On stop, senders half-close so receivers get every queued
 * byte and both ends count the same total. */
#define _GNU_SOURCE
#include "flow_stream.h"

#include "worker.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <linux/errqueue.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>

#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif
#ifndef SO_EE_ORIGIN_ZEROCOPY
#define SO_EE_ORIGIN_ZEROCOPY 5
#endif
#ifndef SO_EE_CODE_ZEROCOPY_COPIED
#define SO_EE_CODE_ZEROCOPY_COPIED 1
#endif

/* Per flow per wake-up: at most this many syscalls, and at most the worker's quantum of bytes,
 * so a round over thousands of ready flows is short and each gets its turn (fairness). */
#define STREAM_BATCH 16

#define ZC_PAGE    4096u
#define ZC_MAP_MIN (256u * 1024) /* the socket's window onto our address space, per flow */
#define ZC_MAP_MAX (2u << 20)
#define ZC_COPYBUF (16u * 1024) /* bytes copied in the same call; more queued than this maps */
#define ZC_MISSES  4u           /* calls that map nothing before backing off to recv() */
#define ZC_BACKOFF 64u          /* recv() calls before zero-copy is tried again */

struct stream_state {
    uint64_t zc_sent, zc_done; /* MSG_ZEROCOPY sends made, and completions read back */
    void *map;                 /* --zerocopy-rx: the socket's pages appear here */
    size_t map_len;
    uint32_t misses;    /* zero-copy calls in a row that mapped nothing */
    uint32_t copy_left; /* plain recv() calls left before zero-copy is tried again */
};

static const struct flow_ops stream_send_ops, stream_recv_ops;

int flow_stream_init(struct flow *f, const struct params *p, bool is_client)
{
    f->priv = calloc(1, sizeof(struct stream_state));
    if (!f->priv)
        return -ENOMEM;
    f->sender = params_flow_client_sends(p, f->id) == is_client;
    f->ops = f->sender ? &stream_send_ops : &stream_recv_ops;
    if (!f->sender && p->zerocopy_rx) {
        struct stream_state *s = f->priv;
        size_t want = p->write_size < ZC_MAP_MIN ? ZC_MAP_MIN : p->write_size;
        s->map_len = want > ZC_MAP_MAX ? ZC_MAP_MAX : (want + ZC_PAGE - 1) / ZC_PAGE * ZC_PAGE;
        f->rx = FLOW_RX_ZEROCOPY;
    } else if (!f->sender && p->skip_rx_copy) {
        f->rx = FLOW_RX_SKIP_COPY;
    }
    return 0;
}

void flow_stream_needs(const struct params *p, bool is_client, struct flow_needs *out)
{
    bool sends = is_client ? p->dir != PARAMS_DIR_REVERSE : p->dir != PARAMS_DIR_FORWARD;

    /* a sender writes -l bytes at a time; receivers read the default chunk */
    *out =
        (struct flow_needs){.buf = sends ? p->write_size : 0, .state = sizeof(struct stream_state)};
}

/* --zerocopy-rx: maps a window of the socket; without it the flow receives by copy. */
static void stream_recv_attach(struct flow *f, char *note, size_t notelen)
{
    struct stream_state *s = f->priv;
    void *m;

    if (atomic_load_explicit(&f->rx, memory_order_relaxed) != FLOW_RX_ZEROCOPY)
        return;
    m = mmap(NULL, s->map_len, PROT_READ, MAP_SHARED, f->fd, 0);
    if (m == MAP_FAILED) {
        snprintf(note, notelen,
                 "--zerocopy-rx: this kernel cannot map TCP sockets (%s): "
                 "received by copy",
                 strerror(errno));
        atomic_store_explicit(&f->rx, FLOW_RX_COPY, memory_order_relaxed);
        return;
    }
    s->map = m;
}

static void stream_fini(struct flow *f)
{
    struct stream_state *s = f->priv;

    if (s && s->map) {
        munmap(s->map, s->map_len);
        s->map = NULL;
    }
}

bool flow_stream_may_run_alone(const struct params *p, bool is_client)
{
    (void)p;
    (void)is_client;
    return true; /* either direction, whenever a flow has its worker to itself */
}

/* Reads MSG_ZEROCOPY completions from the error queue. */
static void zc_reap(struct flow *f)
{
    struct stream_state *s = f->priv;
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
            s->zc_done += (uint64_t)(ee->ee_data - ee->ee_info) + 1;
            if (ee->ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
                atomic_store_explicit(&f->zc_copied, true, memory_order_relaxed);
        }
    }
}

/* One write of len (<= send_len) bytes by the flow's transmit method. */
static ssize_t tx_one(struct worker *w, struct flow *f, int tx, size_t len)
{
    if (tx == FLOW_TX_SENDFILE) {
        off_t off = 0;
        return sendfile(f->fd, w->memfd, &off, len);
    }
    if (tx == FLOW_TX_MSG_ZEROCOPY) {
        ssize_t n = send(f->fd, w->buf, len, MSG_NOSIGNAL | MSG_DONTWAIT | MSG_ZEROCOPY);
        if (n > 0)
            ((struct stream_state *)f->priv)->zc_sent++;
        return n;
    }
    return send(f->fd, w->buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }

static int stream_send(struct worker *w, struct flow *f, uint32_t events)
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
    for (int i = 0; i < STREAM_BATCH && moved < w->quantum; i++) {
        ssize_t n = tx_one(w, f, tx, min_sz(w->send_len, w->quantum - moved));
        if (n > 0) {
            moved += (uint64_t)n;
            if (worker_gate_take(w, (uint64_t)n))
                break; /* over the rate: the worker waits before its next event */
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            break;
        if (n < 0 && errno == ENOBUFS && tx == FLOW_TX_MSG_ZEROCOPY) {
            zc_reap(f); /* too many pages pinned: wait for completions */
            break;
        }
        flow_add(&f->bytes, moved);
        worker_flow_finish(w, f, n < 0 ? errno : EPIPE);
        return 1;
    }
    flow_add(&f->bytes, moved);
    return 0;
}

/* One TCP_ZEROCOPY_RECEIVE: maps the whole pages at the head of the queue and, in the same
 * call, copies up to ZC_COPYBUF bytes that cannot be mapped (an unaligned head or tail).
 * A path that never maps (loopback: the sender's pages are cut at MSS boundaries) backs off
 * to plain recv() for a while, so zero-copy costs no more than copy where it cannot work. */
static ssize_t rx_zerocopy(struct worker *w, struct flow *f, int flags, uint64_t *mapped)
{
    struct stream_state *s = f->priv;
    struct tcp_zerocopy_receive zc;
    socklen_t zl = sizeof(zc);

    if (s->copy_left) {
        s->copy_left--;
        return recv(f->fd, w->buf, w->buflen, flags);
    }
    memset(&zc, 0, sizeof(zc));
    zc.address = (uint64_t)(uintptr_t)s->map;
    zc.length = (uint32_t)s->map_len;
    zc.copybuf_address = (uint64_t)(uintptr_t)w->buf;
    zc.copybuf_len = (int32_t)(w->buflen < ZC_COPYBUF ? w->buflen : ZC_COPYBUF);
    if (getsockopt(f->fd, IPPROTO_TCP, TCP_ZEROCOPY_RECEIVE, &zc, &zl) < 0)
        /* EIO: nothing queued and the peer closed; recv() tells EOF from an error */
        return recv(f->fd, w->buf, w->buflen, flags);
    if (zc.err || zc.copybuf_len < 0) {
        errno = zc.err ? zc.err : -zc.copybuf_len;
        return -1;
    }
    if (zc.length) {
        s->misses = 0;
        *mapped += zc.length; /* the pages stay mapped until the next call replaces them */
        return (ssize_t)zc.length + zc.copybuf_len;
    }
    if (++s->misses >= ZC_MISSES) {
        s->misses = 0;
        s->copy_left = ZC_BACKOFF;
    }
    if (zc.copybuf_len)
        return zc.copybuf_len;
    if (zc.recv_skip_hint) /* more to skip than the copy buffer took */
        return recv(f->fd, w->buf, zc.recv_skip_hint < w->buflen ? zc.recv_skip_hint : w->buflen,
                    flags);
    errno = EAGAIN; /* nothing queued */
    return -1;
}

/* One receive by the flow's method: > 0 bytes taken (*mapped of them without a copy),
 * 0 at EOF, -1 with errno (EAGAIN: nothing queued). */
static ssize_t rx_one(struct worker *w, struct flow *f, int rx, int flags, size_t len,
                      uint64_t *mapped)
{
    if (rx == FLOW_RX_ZEROCOPY)
        return rx_zerocopy(w, f, flags, mapped);
    if (rx == FLOW_RX_SKIP_COPY)
        return recv(f->fd, w->buf, len, flags | MSG_TRUNC);
    return recv(f->fd, w->buf, len, flags);
}

static int stream_recv(struct worker *w, struct flow *f, uint32_t events)
{
    int rx = atomic_load_explicit(&f->rx, memory_order_relaxed);
    uint64_t moved = 0, mapped = 0;
    int ended = 0, err = 0;

    (void)events;
    for (int i = 0; i < STREAM_BATCH && moved < w->quantum; i++) {
        ssize_t n = rx_one(w, f, rx, MSG_DONTWAIT, min_sz(w->buflen, w->quantum - moved), &mapped);
        if (n > 0) {
            moved += (uint64_t)n;
            if (worker_gate_take(w, (uint64_t)n))
                break;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            break;
        ended = 1;
        err = n < 0 ? errno : 0;
        break;
    }
    if (moved) {
        flow_add(&f->bytes, moved);
        if (mapped)
            flow_add(&f->rx_mapped, mapped);
        atomic_store_explicit(&f->last_ns, worker_now(w), memory_order_relaxed);
    }
    if (ended)
        worker_flow_finish(w, f, err);
    return ended;
}

static int stream_send_stop(struct worker *w, struct flow *f)
{
    shutdown(f->fd, SHUT_WR); /* FIN after the queued data */
    worker_flow_finish(w, f, 0);
    return 1;
}

static int stream_recv_stop(struct worker *w, struct flow *f)
{
    (void)w;
    (void)f;
    return 0; /* read on until the sender's FIN */
}

/* Blocking calls return at least this often: the loops look at the stop request, the drain
 * time and the hard deadline after every call, whatever the peer sends (a peer trickling a
 * byte at a time keeps a call from ever timing out). A kill (worker_kill) wakes them at once. */
static void set_timeouts(int fd)
{
    struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};

    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* One sender on its own thread: blocking writes, like a thread-per-flow tool, without an
 * epoll round trip between writes. Zero-copy keeps the event loop (it reads completions). */
static void stream_send_alone(struct worker *w, struct flow *f)
{
    int tx = atomic_load_explicit(&f->tx, memory_order_relaxed);

    set_timeouts(f->fd);
    while (!worker_stop_requested(w)) {
        ssize_t n = tx == FLOW_TX_SENDFILE ? sendfile(f->fd, w->memfd, &(off_t){0}, w->send_len)
                                           : send(f->fd, w->buf, w->send_len, MSG_NOSIGNAL);
        if (worker_past_deadline(w)) {
            if (n > 0)
                flow_add(&f->bytes, (uint64_t)n);
            worker_flow_kill(w, f);
            return;
        }
        if (n > 0) {
            flow_add(&f->bytes, (uint64_t)n);
            if (worker_gate_take(w, (uint64_t)n))
                worker_gate_wait(w);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue; /* the timeout: look at the stop flag */
        if (worker_stop_requested(w))
            break; /* our own half-close woke the write */
        worker_flow_finish(w, f, n < 0 ? errno : EPIPE);
        return;
    }
    stream_send_stop(w, f);
}

/* One receiver on its own thread: blocking reads until EOF, the drain time after stop, or the
 * hard deadline. */
static void stream_recv_alone(struct worker *w, struct flow *f)
{
    int rx = atomic_load_explicit(&f->rx, memory_order_relaxed);
    uint64_t deadline = 0;

    set_timeouts(f->fd);
    for (;;) {
        uint64_t mapped = 0;
        ssize_t n = rx_one(w, f, rx, 0, w->buflen, &mapped);
        uint64_t now = worker_now(w);

        if (n > 0) {
            flow_add(&f->bytes, (uint64_t)n);
            if (mapped)
                flow_add(&f->rx_mapped, mapped);
            atomic_store_explicit(&f->last_ns, now, memory_order_relaxed);
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            worker_flow_finish(w, f, n < 0 ? errno : 0);
            return;
        }
        if (worker_past_deadline(w)) {
            worker_flow_kill(w, f);
            return;
        }
        if (!deadline && worker_stop_requested(w))
            deadline = now + w->drain_ns;
        if (deadline && now >= deadline) {
            worker_flow_finish(w, f, ETIMEDOUT);
            return;
        }
        if (n > 0 && worker_gate_take(w, (uint64_t)n))
            worker_gate_wait(w);
    }
}

static const struct flow_ops stream_send_ops = {
    .name = "stream-send",
    .events = EPOLLOUT,
    .on_event = stream_send,
    .on_stop = stream_send_stop,
    .fini = stream_fini,
    .run_alone = stream_send_alone,
};

static const struct flow_ops stream_recv_ops = {
    .name = "stream-recv",
    .events = EPOLLIN | EPOLLRDHUP,
    .on_event = stream_recv,
    .on_stop = stream_recv_stop,
    .attach = stream_recv_attach,
    .fini = stream_fini,
    .run_alone = stream_recv_alone,
};
