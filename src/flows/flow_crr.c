/* flow_crr: connect, request, response, close, once per transaction (netperf's TCP_CRR), or
 * connect and close only (--connect-only). The server closes first, so TIME_WAIT lands on the
 * server and the client's ports stay free. Server side: each worker owns one SO_REUSEPORT
 * listener (a flow) and a fixed pool of connection slots, set up before the test starts. */
#define _GNU_SOURCE
#include "flow_crr.h"

#include "sock.h"
#include "worker.h"

#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

enum crr_phase { CRR_IDLE, CRR_CONNECTING, CRR_READING, CRR_WAIT_EOF };

struct crr_client {
    char congestion[PARAMS_CC_LEN];
    char dev[IFNAMSIZ]; /* --bind-dev, "" = any */
    uint8_t tos;        /* -S/--dscp */
    struct sockaddr_storage to, local;
    socklen_t tolen, locallen;
    uint32_t req, resp, got, put; /* put: request bytes sent */
    bool connect_only;
    enum crr_phase phase;
    uint64_t t_start, timeout_ns;
    /* a lone client's work off the critical path, done while the server answers: the next
     * connection's socket, opened ahead (-1: none), and the last one, closed behind (-1) */
    int spare, behind;
};

/* Server: the listener flow's state; its slots are flows of their own (crr_conn_ops). */
struct crr_server {
    uint32_t req, resp;
    bool connect_only;
    uint32_t nslots;
    uint32_t share; /* client flows per listener, rounded up: the most accepts per wake-up */
    struct flow *slots;
    uint64_t overflow; /* connections closed at once because every slot was busy */
};

struct crr_conn {
    struct flow *listener;
    uint32_t got;  /* request bytes read */
    uint32_t left; /* response bytes still to write (the request is complete) */
};

/* What a crr connection costs on the wire besides its payload (SYN, SYN-ACK, ACK, FIN both
 * ways and their ACKs: about 7 segments of 60 bytes): the rate gate counts it. */
#define CRR_CONN_WIRE 420

/* A listener's share of the client's flows, rounded up. */
static uint32_t crr_share(const struct params *p)
{
    uint32_t listeners = p->server_threads ? p->server_threads : p->threads;
    uint32_t share = (p->flows + listeners - 1) / (listeners ? listeners : 1);

    return share ? share : 1;
}

/* Connection slots of one listener: its share of the client's flows (SO_REUSEPORT spreads
 * them unevenly: a quarter more) and a margin. */
static uint32_t crr_slots(const struct params *p)
{
    uint32_t share = crr_share(p);

    return share + share / 4 + 16;
}

void flow_crr_needs(const struct params *p, bool is_client, struct flow_needs *out)
{
    uint32_t slots = crr_slots(p);

    if (is_client) { /* the whole request (or response) fits the buffer */
        *out = (struct flow_needs){.buf = p->req_size > p->resp_size ? p->req_size : p->resp_size,
                                   .state = sizeof(struct crr_client)};
        return;
    }
    /* the server reads and answers in chunks of any size */
    *out = (struct flow_needs){.state = sizeof(struct crr_server) +
                                        slots * (sizeof(struct flow) + sizeof(struct crr_conn)),
                               .fds = slots};
}

static const struct flow_ops crr_conn_ops, crr_client_ops, crr_server_ops;

int flow_crr_init(struct flow *f, const struct params *p, bool is_client)
{
    f->sender = is_client;
    if (is_client) {
        struct crr_client *c = calloc(1, sizeof(*c));
        if (!c)
            return -ENOMEM;
        c->req = p->req_size;
        c->resp = p->resp_size;
        c->connect_only = p->connect_only;
        c->timeout_ns = p->txn_timeout_ns;
        snprintf(c->congestion, sizeof(c->congestion), "%s", p->congestion);
        c->tos = p->tos;
        c->spare = c->behind = -1;
        f->priv = c;
        f->ops = &crr_client_ops;
        return 0;
    }
    struct crr_server *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    s->req = p->req_size;
    s->resp = p->resp_size;
    s->connect_only = p->connect_only;
    /* each client flow has one connection open at a time */
    s->nslots = crr_slots(p);
    s->share = crr_share(p);
    s->slots = calloc(s->nslots, sizeof(*s->slots));
    f->priv = s;
    f->ops = &crr_server_ops;
    if (!s->slots)
        return -ENOMEM;
    for (uint32_t i = 0; i < s->nslots; i++) {
        struct crr_conn *cc = calloc(1, sizeof(*cc));
        if (!cc)
            return -ENOMEM;
        cc->listener = f;
        s->slots[i].fd = -1;
        s->slots[i].ops = &crr_conn_ops;
        s->slots[i].priv = cc;
    }
    return 0;
}

int flow_crr_set_target(struct flow *f, const struct sockaddr *to, socklen_t len,
                        const struct sock_local *local)
{
    struct crr_client *c = f->priv;
    struct sock_addr a;
    char err[128];

    memcpy(&c->to, to, len);
    c->tolen = len;
    if (local && local->dev && *local->dev)
        snprintf(c->dev, sizeof(c->dev), "%s", local->dev);
    if (local && local->addr && *local->addr) {
        if (sock_resolve(local->addr, 0, to->sa_family == AF_INET6 ? 6 : 4, &a, err, sizeof(err)))
            return -EINVAL;
        memcpy(&c->local, &a.ss, a.len);
        c->locallen = a.len;
    }
    return 0;
}

/* ---- client ---- */

static void close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

static int client_fail(struct worker *w, struct flow *f, int err)
{
    close_fd(&f->fd); /* closing also leaves the epoll set */
    worker_flow_finish(w, f, err);
    return 1;
}

/* A request up to this size goes out in one segment whatever Nagle says (nothing is in
 * flight before it, and every MSS is larger): TCP_NODELAY, one syscall a connection, only
 * matters for longer ones, whose last partial segment would wait for an ACK. */
#define CRR_NAGLE_FREE 536

/* Sends the request, or what the socket takes of it, once the handshake is done: 0 when it
 * is all sent (phase READING) or when the rest must wait until the socket is writable (still
 * connecting, or its send buffer full: phase CONNECTING), else an errno. */
static int try_send(struct worker *w, struct flow *f)
{
    struct crr_client *c = f->priv;

    while (c->put < c->req) {
        ssize_t n = send(f->fd, w->buf, c->req - c->put, MSG_NOSIGNAL | MSG_DONTWAIT);

        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : errno;
        c->put += (uint32_t)n;
    }
    c->phase = CRR_READING;
    return 0;
}

/* A socket for the next connection, with the test's options: the fd or -errno. */
static int conn_socket(const struct crr_client *c)
{
    int fd = socket(c->to.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;

    if (fd < 0)
        return -errno;
    if (c->req > CRR_NAGLE_FREE)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (c->congestion[0])
        setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, c->congestion, strlen(c->congestion));
    if (c->tos)
        sock_set_tos(fd, c->tos);
    if (c->dev[0] &&
        setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, c->dev, (socklen_t)strlen(c->dev))) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

/* Opens the next connection (f->fd), on the socket opened ahead if there is one, and, on
 * loopback, where the handshake is usually over when connect returns, sends the request at
 * once: no wait for writability, no SO_ERROR query. The transaction's clock starts at
 * connect. Returns 0 or an errno (EADDRNOTAVAIL: local ports exhausted). */
static int open_conn(struct worker *w, struct flow *f)
{
    struct crr_client *c = f->priv;
    int fd = c->spare >= 0 ? c->spare : conn_socket(c);

    c->spare = -1;
    if (fd < 0)
        return -fd;
    c->t_start = worker_now(w);
    if ((c->locallen && bind(fd, (struct sockaddr *)&c->local, c->locallen)) ||
        (connect(fd, (struct sockaddr *)&c->to, c->tolen) && errno != EINPROGRESS)) {
        int e = errno;
        close(fd);
        return e;
    }
    f->fd = fd;
    c->phase = CRR_CONNECTING;
    c->got = c->put = 0;
    return c->connect_only ? 0 : try_send(w, f);
}

/* Opens the next connection and watches it. Returns 1 when the flow ended. */
static int begin(struct worker *w, struct flow *f, uint64_t now)
{
    struct crr_client *c = f->priv;
    int e = open_conn(w, f);

    if (e)
        return client_fail(w, f, e);
    f->due_ns = now + c->timeout_ns;
    if (worker_watch(w, f, f->fd, EPOLL_CTL_ADD,
                     c->phase == CRR_CONNECTING ? EPOLLOUT : EPOLLIN | EPOLLRDHUP))
        return client_fail(w, f, errno);
    return 0;
}

static void record(struct worker *w, struct flow *f, uint64_t now)
{
    struct crr_client *c = f->priv;
    uint64_t lat = now - c->t_start;

    if (atomic_load_explicit(&w->measuring, memory_order_relaxed))
        histo_record(w->lat, lat);
    flow_add(&f->txns, 1);
    flow_add(&f->lat_sum_ns, lat);
}

static int on_connected(struct worker *w, struct flow *f)
{
    struct crr_client *c = f->priv;
    int soerr = 0, e;
    socklen_t len = sizeof(soerr);

    if (getsockopt(f->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) || soerr)
        return client_fail(w, f, soerr ? soerr : errno);
    if (c->connect_only) {
        record(w, f, worker_now(w));
        c->phase = CRR_WAIT_EOF;
    } else if ((e = try_send(w, f))) {
        return client_fail(w, f, e);
    } else if (c->phase == CRR_CONNECTING) {
        return 0; /* the rest of the request when the socket is writable again */
    }
    worker_watch(w, f, f->fd, EPOLL_CTL_MOD, EPOLLIN | EPOLLRDHUP);
    return 0;
}

static int crr_client_event(struct worker *w, struct flow *f, uint32_t events)
{
    struct crr_client *c = f->priv;

    if (c->phase == CRR_CONNECTING)
        return (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) ? on_connected(w, f) : 0;
    for (;;) {
        ssize_t n = recv(f->fd, w->buf, w->buflen, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return 0;
        if (n < 0)
            return client_fail(w, f, errno);
        if (n == 0) {
            if (c->phase == CRR_READING) /* closed before the whole response */
                return client_fail(w, f, ECONNRESET);
            close(f->fd);
            f->fd = -1;
            flow_add(&f->bytes, c->got);
            return w->stopping ? (worker_flow_finish(w, f, 0), 1) : begin(w, f, worker_now(w));
        }
        c->got += (uint32_t)n;
        if (c->phase == CRR_READING && c->got >= c->resp) {
            record(w, f, worker_now(w));
            c->phase = CRR_WAIT_EOF;
        }
    }
}

static int crr_client_start(struct worker *w, struct flow *f, uint64_t now)
{
    return begin(w, f, now);
}

static int crr_client_timer(struct worker *w, struct flow *f, uint64_t now)
{
    (void)now;
    flow_add(&f->timeouts, 1);
    return client_fail(w, f, ETIMEDOUT);
}

static int crr_client_stop(struct worker *w, struct flow *f) { return client_fail(w, f, 0); }

/* ---- client alone on its worker ---- */

/* The longest one wait of a lone client lasts, so that it sees the stop request and the
 * deadlines in time (it is never woken by the worker: its socket changes every transaction). */
#define CRR_SLICE_NS 100000000ULL
#define CRR_STOPPED  (-1)

/* Waits in poll() (no epoll set to join and leave per connection) for events on the current
 * connection, in slices, up to the transaction's timeout. 0: ready (*rev), CRR_STOPPED: the
 * stop request or the hard deadline came, else an errno (ETIMEDOUT counted as a timeout). */
static int alone_wait(struct worker *w, struct flow *f, short events, short *rev)
{
    struct crr_client *c = f->priv;

    for (;;) {
        struct pollfd pfd = {.fd = f->fd, .events = events};
        uint64_t now = worker_now(w), left;
        int n;

        if (worker_stop_requested(w) || worker_past_deadline(w))
            return CRR_STOPPED;
        if (now - c->t_start >= c->timeout_ns) {
            flow_add(&f->timeouts, 1);
            return ETIMEDOUT;
        }
        left = c->t_start + c->timeout_ns - now;
        left = left < CRR_SLICE_NS ? left : CRR_SLICE_NS;
        n = poll(&pfd, 1, (int)((left + 999999) / 1000000));
        if (n > 0) {
            *rev = pfd.revents;
            return 0;
        }
        if (n < 0 && errno != EINTR)
            return errno;
    }
}

/* The handshake of the current connection, if connect's return did not finish it (or
 * --connect-only, which records it): 0, CRR_STOPPED or an errno. */
static int alone_connect(struct worker *w, struct flow *f)
{
    struct crr_client *c = f->priv;
    short rev = 0;
    int rc = 0;

    while (!rc && c->phase == CRR_CONNECTING) {
        int soerr = 0;
        socklen_t len = sizeof(soerr);

        if ((rc = alone_wait(w, f, POLLOUT, &rev)))
            break;
        if (rev & (POLLERR | POLLHUP))
            return getsockopt(f->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) ? errno
                   : soerr                                               ? soerr
                                                                         : ECONNRESET;
        if (c->connect_only) {
            record(w, f, worker_now(w));
            c->phase = CRR_WAIT_EOF;
        } else {
            rc = try_send(w, f);
        }
    }
    return rc;
}

/* While the server answers: closes the last connection (its FIN is in, the close only
 * finishes it) and opens the next one's socket, so that neither is on the way from the
 * response to the next request. A socket that fails here is tried again, and reported, by
 * open_conn. */
static void alone_ahead(struct crr_client *c)
{
    close_fd(&c->behind);
    if (c->spare < 0) {
        int fd = conn_socket(c);
        c->spare = fd >= 0 ? fd : -1;
    }
}

/* Did the poll that returned rev see the server's FIN (and no error)? */
static bool fin_in(short rev) { return (rev & POLLRDHUP) && !(rev & POLLERR); }

/* One transaction: connect, send, (close the last connection, open the next socket), poll,
 * recv, poll (the server's FIN, usually there already). The connection is closed during the
 * next one. 0: done, CRR_STOPPED or an errno. */
static int alone_txn(struct worker *w, struct flow *f)
{
    struct crr_client *c = f->priv;
    short rev = 0;
    int rc = open_conn(w, f);

    if (!rc)
        rc = alone_connect(w, f);
    if (!rc)
        alone_ahead(c);
    while (!rc) {
        ssize_t n;

        /* waiting first: the response (or the FIN) cannot be there before the request */
        if ((rc = alone_wait(w, f, POLLIN | POLLRDHUP, &rev)))
            break;
        if (c->phase == CRR_WAIT_EOF && fin_in(rev))
            break; /* the server closed after the whole response: no read for the EOF */
        n = recv(f->fd, w->buf, w->buflen, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n < 0)
            return errno;
        if (n == 0) {
            if (c->phase == CRR_READING) /* closed before the whole response */
                return ECONNRESET;
            break;
        }
        c->got += (uint32_t)n;
        if (c->phase == CRR_READING && c->got >= c->resp) {
            record(w, f, worker_now(w));
            c->phase = CRR_WAIT_EOF;
            if (fin_in(rev))
                break; /* the FIN came with the response (the server corks): no wait for it */
        }
    }
    if (rc)
        return rc;
    c->behind = f->fd;
    f->fd = -1;
    flow_add(&f->bytes, c->got);
    return 0;
}

/* A flow with a worker to itself: the transactions of crr_client_event without the epoll
 * set (4 syscalls a connection fewer). The stop request ends it between or inside them, as
 * crr_client_stop does. */
static void crr_client_alone(struct worker *w, struct flow *f)
{
    struct crr_client *c = f->priv;
    int rc = 0;

    while (!rc && !worker_stop_requested(w) && !worker_past_deadline(w))
        rc = alone_txn(w, f);
    close_fd(&f->fd);
    close_fd(&c->behind);
    close_fd(&c->spare);
    worker_flow_finish(w, f, rc == CRR_STOPPED ? 0 : rc);
}

bool flow_crr_may_run_alone(const struct params *p, bool is_client)
{
    (void)p;
    return is_client;
}

/* ---- server ---- */

static void conn_close(struct flow *slot)
{
    close(slot->fd); /* we close first: TIME_WAIT stays on this side */
    slot->fd = -1;
}

/* Writes what is left of the response, in chunks, as far as the socket and the rate allow.
 * 1: all written; 0: wait for EPOLLOUT (or the gate); -1: the connection failed. */
static int conn_answer(struct worker *w, struct flow *slot, struct crr_conn *cc)
{
    while (cc->left) {
        size_t len = cc->left < w->buflen ? cc->left : w->buflen;
        ssize_t n = send(slot->fd, w->buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        cc->left -= (uint32_t)n;
        flow_add(&cc->listener->sent, (uint64_t)n);
        if (worker_gate_take(w, (uint64_t)n) && cc->left)
            return 0;
    }
    return 1;
}

static int crr_conn_event(struct worker *w, struct flow *slot, uint32_t events)
{
    struct crr_conn *cc = slot->priv;
    struct crr_server *s = cc->listener->priv;
    int rc;

    (void)events;
    while (!cc->left && cc->got < s->req) {
        ssize_t n = recv(slot->fd, w->buf, w->buflen, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return 0;
        if (n <= 0) { /* gone before a whole request */
            conn_close(slot);
            return 0;
        }
        cc->got += (uint32_t)n;
        flow_add(&cc->listener->bytes, (uint64_t)n);
        worker_gate_take(w, (uint64_t)n);
        if (cc->got >= s->req) {
            cc->left = s->resp ? s->resp : 0;
            flow_add(&cc->listener->txns, 1);
            break;
        }
        if (worker_gate_closed(w))
            return 0; /* the rest of the request after the worker's wait */
    }
    rc = conn_answer(w, slot, cc);
    if (rc == 0) { /* a connection served straight from accept is not in the set yet */
        if (worker_watch(w, slot, slot->fd, EPOLL_CTL_MOD, EPOLLOUT) == -ENOENT &&
            worker_watch(w, slot, slot->fd, EPOLL_CTL_ADD, EPOLLOUT))
            conn_close(slot);
        return 0;
    }
    conn_close(slot); /* answered (or failed): we close first */
    return 0;         /* slots are not counted among the worker's flows */
}

/* Takes an accepted connection into a free slot and serves at once what it has already
 * sent: with TCP_DEFER_ACCEPT the request came with the handshake, so most connections are
 * read, answered and closed without joining the epoll set. */
static void conn_take(struct worker *w, struct flow *f, int fd)
{
    struct crr_server *s = f->priv;
    struct flow *slot = NULL;
    struct crr_conn *cc;

    for (uint32_t k = 0; k < s->nslots && !slot; k++)
        if (s->slots[k].fd < 0)
            slot = &s->slots[k];
    if (!slot) {
        s->overflow++;
        close(fd);
        return;
    }
    cc = slot->priv;
    slot->fd = fd;
    cc->got = 0;
    cc->left = s->req ? 0 : s->resp; /* no request to wait for */
    if (!s->req)
        flow_add(&f->txns, 1);
    if (s->req && !worker_gate_closed(w)) {
        crr_conn_event(w, slot, EPOLLIN); /* the request, the response, the close */
        if (slot->fd < 0 || cc->left)
            return; /* served, or waiting for EPOLLOUT (it joined the set for that) */
    }
    if (worker_watch(w, slot, fd, EPOLL_CTL_ADD, s->req ? EPOLLIN | EPOLLRDHUP : EPOLLOUT))
        conn_close(slot);
}

static int crr_server_event(struct worker *w, struct flow *f, uint32_t events)
{
    struct crr_server *s = f->priv;

    (void)events;
    /* at most as many as this listener's share of the client's flows: each has one
     * connection open at a time, so one accept more would only meet EAGAIN (the listener is
     * level-triggered: any left over come back with the next wait) */
    for (uint32_t i = 0; i < s->share && !worker_gate_closed(w); i++) {
        int fd = accept4(f->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0)
            return 0;
        /* the connection's own segments, whatever it carries */
        worker_gate_take(w, CRR_CONN_WIRE);
        flow_add(&f->sent, CRR_CONN_WIRE);
        if (s->connect_only) {
            close(fd);
            flow_add(&f->txns, 1);
            continue;
        }
        conn_take(w, f, fd);
    }
    return 0;
}

/* The listener is the worker's: TCP_DEFER_ACCEPT wakes it only when a request has come
 * (one wake-up and one epoll registration a connection fewer). A client that sends
 * nothing is still accepted once the deferral (1 s and a SYN-ACK retransmission) ends.
 * TCP_CORK, which accepted sockets inherit, holds the response's last part until the close
 * that follows it, so that it leaves with the FIN: one segment fewer, and the client is
 * woken once for both (no syscall: the close pushes it). */
static void crr_server_attach(struct flow *f, char *note, size_t notelen)
{
    struct crr_server *s = f->priv;
    int secs = 1, one = 1;

    (void)note;
    (void)notelen;
    if (s->req && !s->connect_only) /* --connect-only sends nothing to wait for */
        setsockopt(f->fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &secs, sizeof(secs));
    if (s->resp && !s->connect_only)
        setsockopt(f->fd, IPPROTO_TCP, TCP_CORK, &one, sizeof(one));
}

static int crr_server_stop(struct worker *w, struct flow *f)
{
    worker_flow_finish(w, f, 0);
    return 1;
}

static void crr_server_fini(struct flow *f)
{
    struct crr_server *s = f->priv;

    if (!s || !s->slots)
        return;
    for (uint32_t i = 0; i < s->nslots; i++) {
        if (s->slots[i].fd >= 0)
            close(s->slots[i].fd);
        free(s->slots[i].priv);
    }
    free(s->slots);
}

static int conn_stop(struct worker *w, struct flow *f)
{
    (void)w;
    (void)f;
    return 0;
}

static const struct flow_ops crr_conn_ops = {
    .name = "crr-conn",
    .events = EPOLLIN,
    .on_event = crr_conn_event,
    .on_stop = conn_stop,
};

static const struct flow_ops crr_client_ops = {
    .name = "crr-client",
    .events = 0,
    .on_event = crr_client_event,
    .on_stop = crr_client_stop,
    .on_timer = crr_client_timer,
    .on_start = crr_client_start,
    .run_alone = crr_client_alone,
    .alone_polls = true,
};

static const struct flow_ops crr_server_ops = {
    .name = "crr-server",
    .events = EPOLLIN,
    .on_event = crr_server_event,
    .on_stop = crr_server_stop,
    .attach = crr_server_attach,
    .fini = crr_server_fini,
};
