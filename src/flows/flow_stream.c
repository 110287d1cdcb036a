/* flow_stream: TCP bulk transfer. Senders write the worker's buffer as fast as the socket takes
 * it, or paced by a token bucket (-b RATE[/BURST]); receivers read until EOF, paced likewise
 * when a daemon holds a client to its --max-rate share. Under -n/-k each write first reserves
 * its bytes from the side's shared count (flow.h), and a sender whose count is exhausted
 * half-closes. On stop, senders half-close so receivers get every queued byte and both ends
 * count the same total. Each flow counts the time its application waited on the socket (a
 * sender for room, a receiver for data): two clock reads per wait, so diagnose can tell a
 * sender the network held back from one that could not write faster. */
#define _GNU_SOURCE
#include "flow_stream.h"

#include "sock.h"
#include "worker.h"

#include <errno.h>
#include <poll.h>
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

/* Per flow per wake-up: at most this many syscalls, and at most the worker's quantum of bytes
 * (a sender: its tx_turn), so a round over thousands of ready flows is short and each gets its
 * turn (fairness). */
#define STREAM_BATCH  16
#define PACE_MIN_READ 4096 /* a paced receiver waits for at least this much credit */

#define ZC_PAGE    4096u
#define ZC_MAP_MIN (256u * 1024) /* the socket's window onto our address space, per flow */
#define ZC_MAP_MAX (2u << 20)
#define ZC_COPYBUF (16u * 1024) /* bytes copied in the same call; more queued than this maps */
#define ZC_MISSES  4u           /* calls that map nothing before backing off to recv() */
#define ZC_BACKOFF 64u          /* recv() calls before zero-copy is tried again */

/* A token bucket in bytes: credit accrues at rate_Bps up to cap; a write or read spends it. */
struct pace {
    double rate_Bps; /* 0: not paced */
    double tokens, cap;
    uint64_t last_ns;
    bool waiting; /* interest in the socket is off until the timer */
};

struct stream_state {
    uint64_t zc_sent, zc_done; /* MSG_ZEROCOPY sends made, and completions read back */
    uint64_t waiting_since;    /* the socket would block since then (worker clock), 0 = no */
    void *map;                 /* --zerocopy-rx: the socket's pages appear here */
    size_t map_len;
    uint32_t misses;    /* zero-copy calls in a row that mapped nothing */
    uint32_t copy_left; /* plain recv() calls left before zero-copy is tried again */
    struct pace pace;
    double round; /* a paced sender waits for this much credit (BURST writes), then writes */
};

#define ALONE_POLL_MS 100 /* a lone flow's wait wakes this often to look at the stop flag */

/* The flow found its socket full (sender) or empty (receiver): a wait starts. */
static void wait_begin(struct worker *w, struct flow *f)
{
    struct stream_state *s = f->priv;

    if (!s->waiting_since)
        s->waiting_since = worker_now(w);
}

/* The socket is ready again: the wait, if any, ends and is counted. */
static void wait_end(struct worker *w, struct flow *f)
{
    struct stream_state *s = f->priv;

    if (s->waiting_since) {
        uint64_t now = worker_now(w);
        flow_add(&f->wait_ns, now > s->waiting_since ? now - s->waiting_since : 0);
        s->waiting_since = 0;
    }
}

/* A lone flow's wait for its socket: poll, bounded so the stop flag is seen, counted. */
static void wait_poll(struct worker *w, struct flow *f, short events)
{
    struct pollfd pf = {.fd = f->fd, .events = events};

    wait_begin(w, f);
    poll(&pf, 1, ALONE_POLL_MS);
    wait_end(w, f);
}

static const struct flow_ops stream_send_ops, stream_recv_ops, stream_paced_send_ops,
    stream_paced_recv_ops;

int flow_stream_init(struct flow *f, const struct params *p, bool is_client)
{
    struct stream_state *s = calloc(1, sizeof(struct stream_state));
    uint64_t rate;

    if (!s)
        return -ENOMEM;
    f->priv = s;
    f->sender = params_flow_client_sends(p, f->id) == is_client;
    f->ops = f->sender ? &stream_send_ops : &stream_recv_ops;
    rate = f->sender ? params_send_rate(p, params_flow_client_sends(p, f->id)) : p->recv_rate_bps;
    if (!rate) {
        if (!f->sender && p->zerocopy_rx) {
            size_t want = p->write_size < ZC_MAP_MIN ? ZC_MAP_MIN : p->write_size;
            s->map_len = want > ZC_MAP_MAX ? ZC_MAP_MAX : (want + ZC_PAGE - 1) / ZC_PAGE * ZC_PAGE;
            f->rx = FLOW_RX_ZEROCOPY;
        } else if (!f->sender && p->skip_rx_copy) {
            f->rx = FLOW_RX_SKIP_COPY;
        }
        return 0;
    }
    /* a paced receiver (a daemon's --max-rate share for an iperf3 client) reads by copy */
    s->pace.rate_Bps = (double)rate / 8.0;
    if (f->sender) {
        /* a round is BURST writes; the first goes at once, as iperf3 starts. Credit is kept
         * for 50 ms (at least two rounds), so a late wake-up is made up, not lost. */
        s->round = (double)(p->burst > 1 ? p->burst : 1) * p->write_size;
        s->pace.cap = s->pace.rate_Bps / 20.0;
        if (s->pace.cap < 2 * s->round)
            s->pace.cap = 2 * s->round;
        s->pace.tokens = p->write_size;
        f->ops = &stream_paced_send_ops;
    } else {
        /* 10 ms of credit (at least a read's worth) keeps the receive rate smooth */
        s->pace.cap = s->pace.rate_Bps / 100.0;
        if (s->pace.cap < 128.0 * 1024)
            s->pace.cap = 128.0 * 1024;
        f->ops = &stream_paced_recv_ops;
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
    (void)is_client;
    return !p->app_rate_bps && !p->down_rate_bps && !p->recv_rate_bps; /* paced: on timers */
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

/* One write of len (at most send_len) bytes by the flow's transmit method. */
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

/* The flow's part of the -n/-k transfer is sent: FIN after the queued data. */
static int stream_complete(struct worker *w, struct flow *f)
{
    shutdown(f->fd, SHUT_WR);
    worker_flow_complete(w, f);
    return 1;
}

/* Reads zero-copy completions; returns the transmit method to use from now on. */
static int stream_errqueue(struct worker *w, struct flow *f, int tx)
{
    zc_reap(f);
    /* the kernel copies zero-copy sends to a local receiver: sendfile() avoids our copy */
    if (tx == FLOW_TX_MSG_ZEROCOPY && w->memfd >= 0 &&
        atomic_load_explicit(&f->zc_copied, memory_order_relaxed)) {
        tx = FLOW_TX_SENDFILE;
        atomic_store_explicit(&f->tx, tx, memory_order_relaxed);
    }
    return tx;
}

/* A write that moved nothing: 0 to wait for the socket, or 1 when the flow failed. */
static int send_failed(struct worker *w, struct flow *f, int tx, ssize_t n)
{
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (n < 0 && errno == ENOBUFS && tx == FLOW_TX_MSG_ZEROCOPY) {
        zc_reap(f); /* too many pages pinned: wait for completions */
        return 0;
    }
    worker_flow_finish(w, f, n < 0 ? errno : EPIPE);
    return 1;
}

static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }

static int stream_send(struct worker *w, struct flow *f, uint32_t events)
{
    int tx = atomic_load_explicit(&f->tx, memory_order_relaxed);
    uint64_t moved = 0, turn = 0; /* moved: not yet in the flow's count; turn: this wake-up */

    wait_end(w, f);
    if (events & EPOLLERR)
        tx = stream_errqueue(w, f, tx);
    for (int i = 0; i < STREAM_BATCH && turn < w->tx_turn; i++) {
        size_t len = min_sz(w->send_len, w->tx_turn - turn);
        ssize_t n;

        if (f->budget) { /* -n/-k: the byte count must be current before each reservation */
            flow_add(&f->bytes, moved);
            moved = 0;
            len = flow_budget_grant(f, len);
            if (!len)
                return stream_complete(w, f);
        }
        n = tx_one(w, f, tx, len);
        if (n > 0) {
            moved += (uint64_t)n;
            turn += (uint64_t)n;
            flow_budget_spend(f, (uint64_t)n);
            if (worker_gate_take(w, (uint64_t)n))
                break; /* over the rate: the worker waits before its next event */
            continue;
        }
        if (n < 0 && errno == EAGAIN)
            wait_begin(w, f);
        flow_add(&f->bytes, moved);
        return send_failed(w, f, tx, n);
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

/* ---- paced flows (-b on a sender, a daemon's --max-rate share on a receiver) ---- */

static void pace_refill(struct pace *p, uint64_t now)
{
    if (now > p->last_ns && p->last_ns) {
        p->tokens += (double)(now - p->last_ns) * p->rate_Bps / 1e9;
        if (p->tokens > p->cap)
            p->tokens = p->cap;
    }
    p->last_ns = now;
}

/* Not enough credit: sleep until `want` bytes of it have accrued, the socket unwatched. */
static int pace_wait(struct worker *w, struct flow *f, struct pace *p, uint64_t now, double want)
{
    double ns = (want - p->tokens) * 1e9 / p->rate_Bps;

    f->due_ns = now + (ns > 1 ? (uint64_t)ns : 1);
    if (!p->waiting) {
        p->waiting = true;
        worker_watch(w, f, f->fd, EPOLL_CTL_MOD, 0);
    }
    return 0;
}

/* The timer: the credit is there; watch the socket again and use it at once. */
static int pace_resume(struct worker *w, struct flow *f, struct pace *p, uint32_t events)
{
    f->due_ns = 0;
    if (p->waiting) {
        p->waiting = false;
        worker_watch(w, f, f->fd, EPOLL_CTL_MOD, events);
    }
    return f->ops->on_event(w, f, events);
}

/* Errors or a hang-up on a paced socket (reported even while it is unwatched). */
static int pace_sock_error(struct worker *w, struct flow *f, uint32_t events)
{
    int soerr = 0;
    socklen_t len = sizeof(soerr);

    getsockopt(f->fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
    if (!soerr && !(events & EPOLLHUP))
        return 0;
    worker_flow_finish(w, f, soerr ? soerr : EPIPE);
    return 1;
}

static int stream_paced_send(struct worker *w, struct flow *f, uint32_t events)
{
    struct stream_state *s = f->priv;
    int tx = atomic_load_explicit(&f->tx, memory_order_relaxed);
    uint64_t now = worker_now(w);

    if (events & EPOLLERR)
        tx = stream_errqueue(w, f, tx);
    if ((events & (EPOLLERR | EPOLLHUP)) && pace_sock_error(w, f, events))
        return 1;
    pace_refill(&s->pace, now);
    for (int i = 0; i < STREAM_BATCH; i++) {
        size_t len = f->budget ? flow_budget_grant(f, w->send_len) : w->send_len;
        ssize_t n;

        if (!len)
            return stream_complete(w, f);
        if (s->pace.tokens < (double)len) /* wait for a round's credit (or the last write's) */
            return pace_wait(w, f, &s->pace, now,
                             s->round > (double)w->send_len ? s->round : (double)len);
        n = tx_one(w, f, tx, len);
        if (n <= 0)
            return send_failed(w, f, tx, n);
        s->pace.tokens -= (double)n;
        flow_add(&f->bytes, (uint64_t)n);
        flow_budget_spend(f, (uint64_t)n);
        if (worker_gate_take(w, (uint64_t)n))
            break; /* over the rate (the daemon's meter): the worker waits */
    }
    return 0;
}

static int stream_paced_send_timer(struct worker *w, struct flow *f, uint64_t now)
{
    (void)now;
    return pace_resume(w, f, &((struct stream_state *)f->priv)->pace, EPOLLOUT);
}

static int stream_recv(struct worker *w, struct flow *f, uint32_t events)
{
    int rx = atomic_load_explicit(&f->rx, memory_order_relaxed);
    uint64_t moved = 0, mapped = 0;
    int ended = 0, err = 0;

    (void)events;
    wait_end(w, f);
    for (int i = 0; i < STREAM_BATCH && moved < w->quantum; i++) {
        ssize_t n = rx_one(w, f, rx, MSG_DONTWAIT, min_sz(w->buflen, w->quantum - moved), &mapped);
        if (n > 0) {
            moved += (uint64_t)n;
            if (worker_gate_take(w, (uint64_t)n))
                break;
            continue;
        }
        if (n < 0 && errno == EAGAIN)
            wait_begin(w, f);
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

static int stream_paced_recv(struct worker *w, struct flow *f, uint32_t events)
{
    struct stream_state *s = f->priv;
    uint64_t now = worker_now(w), moved = 0;
    int ended = 0, err = 0;

    (void)events;
    pace_refill(&s->pace, now);
    for (int i = 0; i < STREAM_BATCH && !ended; i++) {
        size_t room = s->pace.tokens < (double)w->buflen ? (size_t)s->pace.tokens : w->buflen;
        ssize_t n;

        if (room < PACE_MIN_READ && room < w->buflen) {
            pace_wait(w, f, &s->pace, now,
                      (double)(w->buflen < s->pace.cap ? w->buflen : s->pace.cap));
            break;
        }
        n = recv(f->fd, w->buf, room, MSG_DONTWAIT);
        if (n > 0) {
            moved += (uint64_t)n;
            s->pace.tokens -= (double)n;
            if (worker_gate_take(w, (uint64_t)n))
                break; /* over the rate (the daemon's meter): the worker waits */
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            break;
        ended = 1;
        err = n < 0 ? errno : 0;
    }
    if (moved) {
        flow_add(&f->bytes, moved);
        atomic_store_explicit(&f->last_ns, now, memory_order_relaxed);
    }
    if (ended)
        worker_flow_finish(w, f, err);
    return ended;
}

static int stream_paced_recv_timer(struct worker *w, struct flow *f, uint64_t now)
{
    (void)now;
    return pace_resume(w, f, &((struct stream_state *)f->priv)->pace, EPOLLIN | EPOLLRDHUP);
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

/* After the stop a paced receiver drains what is queued at full speed. */
static int stream_paced_recv_stop(struct worker *w, struct flow *f)
{
    struct stream_state *s = f->priv;

    s->pace.rate_Bps = 1e15;
    s->pace.cap = s->pace.tokens = 1e15;
    if (s->pace.waiting)
        return stream_paced_recv_timer(w, f, worker_now(w));
    return 0;
}

/* One sender on its own thread: a write loop without an epoll round trip between writes, like
 * a thread-per-flow tool. The socket stays non-blocking so the time it is full is counted: a
 * short write means it filled, and the flow waits in poll for the same wake-up a blocking
 * write sleeps for (a third of the buffer free). Zero-copy keeps the event loop (it reads
 * completions). */
static void stream_send_alone(struct worker *w, struct flow *f)
{
    int tx = atomic_load_explicit(&f->tx, memory_order_relaxed);

    sock_set_nonblock(f->fd, true);
    while (!worker_stop_requested(w)) {
        size_t len = f->budget ? flow_budget_grant(f, w->send_len) : w->send_len;
        ssize_t n;

        if (!len) {
            stream_complete(w, f);
            return;
        }
        n = tx == FLOW_TX_SENDFILE ? sendfile(f->fd, w->memfd, &(off_t){0}, len)
                                   : send(f->fd, w->buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (worker_past_deadline(w)) {
            if (n > 0)
                flow_add(&f->bytes, (uint64_t)n);
            worker_flow_kill(w, f);
            return;
        }
        if (n > 0) {
            flow_add(&f->bytes, (uint64_t)n);
            flow_budget_spend(f, (uint64_t)n);
            if (worker_gate_take(w, (uint64_t)n))
                worker_gate_wait(w); /* over the rate: no write until the gate refills */
            else if ((size_t)n < len)
                wait_poll(w, f, POLLOUT); /* the buffer filled mid-write */
            continue;
        }
        if (n < 0 && errno == EAGAIN) {
            wait_poll(w, f, POLLOUT);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (worker_stop_requested(w))
            break; /* our own half-close ended the write */
        worker_flow_finish(w, f, n < 0 ? errno : EPIPE);
        return;
    }
    stream_send_stop(w, f);
}

/* One receiver on its own thread: reads until EOF, the drain time after stop, or the hard
 * deadline; an empty socket is waited for in poll, counted. */
static void stream_recv_alone(struct worker *w, struct flow *f)
{
    int rx = atomic_load_explicit(&f->rx, memory_order_relaxed);
    uint64_t deadline = 0;

    sock_set_nonblock(f->fd, true);
    for (;;) {
        uint64_t mapped = 0;
        ssize_t n = rx_one(w, f, rx, MSG_DONTWAIT, w->buflen, &mapped);
        int e = n < 0 ? errno : 0;
        uint64_t now = worker_now(w);

        if (n > 0) {
            flow_add(&f->bytes, (uint64_t)n);
            if (mapped)
                flow_add(&f->rx_mapped, mapped);
            atomic_store_explicit(&f->last_ns, now, memory_order_relaxed);
        } else if (n == 0 || (e != EAGAIN && e != EINTR)) {
            worker_flow_finish(w, f, e);
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
            worker_gate_wait(w); /* over the rate: nothing read until the gate refills */
        else if (e == EAGAIN)
            wait_poll(w, f, POLLIN);
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

static const struct flow_ops stream_paced_send_ops = {
    .name = "stream-send-paced",
    .events = EPOLLOUT,
    .on_event = stream_paced_send,
    .on_stop = stream_send_stop,
    .on_timer = stream_paced_send_timer,
};

static const struct flow_ops stream_paced_recv_ops = {
    .name = "stream-recv-paced",
    .events = EPOLLIN | EPOLLRDHUP,
    .on_event = stream_paced_recv,
    .on_stop = stream_paced_recv_stop,
    .on_timer = stream_paced_recv_timer,
};
