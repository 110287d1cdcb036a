/* flow_stream: TCP bulk transfer. Senders write the worker's buffer as fast as the socket takes
 * it; receivers read until EOF. On stop, senders half-close so receivers get every queued
 * byte and both ends count the same total. */
#define _GNU_SOURCE
#include "flow_stream.h"

#include "worker.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/time.h>
#include <linux/errqueue.h>
#include <sys/epoll.h>
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

#define STREAM_BATCH 16 /* syscalls per flow per wake-up, so one flow cannot starve others */

struct stream_state {
    uint64_t zc_sent, zc_done; /* MSG_ZEROCOPY sends made, and completions read back */
};

static const struct flow_ops stream_send_ops, stream_recv_ops;

int flow_stream_init(struct flow *f, const struct params *p, bool is_client)
{
    f->priv = calloc(1, sizeof(struct stream_state));
    if (!f->priv)
        return -ENOMEM;
    f->sender = params_flow_client_sends(p, f->id) == is_client;
    f->ops = f->sender ? &stream_send_ops : &stream_recv_ops;
    return 0;
}

void flow_stream_needs(const struct params *p, bool is_client, struct flow_needs *out)
{
    bool sends = is_client ? p->dir != PARAMS_DIR_REVERSE : p->dir != PARAMS_DIR_FORWARD;

    /* a sender writes -l bytes at a time; receivers read the default chunk */
    *out =
        (struct flow_needs){.buf = sends ? p->write_size : 0, .state = sizeof(struct stream_state)};
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
            ((struct stream_state *)f->priv)->zc_sent++;
        return n;
    }
    return send(f->fd, w->buf, w->send_len, MSG_NOSIGNAL | MSG_DONTWAIT);
}

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
    for (int i = 0; i < STREAM_BATCH; i++) {
        ssize_t n = tx_one(w, f, tx);
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

static int stream_recv(struct worker *w, struct flow *f, uint32_t events)
{
    uint64_t moved = 0;
    int ended = 0, err = 0;

    (void)events;
    for (int i = 0; i < STREAM_BATCH; i++) {
        ssize_t n = recv(f->fd, w->buf, w->buflen, MSG_DONTWAIT);
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
    uint64_t deadline = 0;

    set_timeouts(f->fd);
    for (;;) {
        ssize_t n = recv(f->fd, w->buf, w->buflen, 0);
        uint64_t now = worker_now(w);

        if (n > 0) {
            flow_add(&f->bytes, (uint64_t)n);
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
    .run_alone = stream_send_alone,
};

static const struct flow_ops stream_recv_ops = {
    .name = "stream-recv",
    .events = EPOLLIN | EPOLLRDHUP,
    .on_event = stream_recv,
    .on_stop = stream_recv_stop,
    .run_alone = stream_recv_alone,
};
