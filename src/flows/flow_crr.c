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
    uint32_t req, resp, got;
    bool connect_only;
    enum crr_phase phase;
    uint64_t t_start, timeout_ns;
};

/* Server: the listener flow's state; its slots are flows of their own (crr_conn_ops). */
struct crr_server {
    uint32_t req, resp;
    bool connect_only;
    uint32_t nslots;
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

/* Connection slots of one listener: its share of the client's flows (SO_REUSEPORT spreads
 * them unevenly: a quarter more) and a margin. */
static uint32_t crr_slots(const struct params *p)
{
    uint32_t listeners = p->server_threads ? p->server_threads : p->threads;
    uint32_t share = (p->flows + listeners - 1) / (listeners ? listeners : 1);

    return share + share / 4 + 16;
}

void flow_crr_needs(const struct params *p, bool is_client, struct flow_needs *out)
{
    uint32_t slots = crr_slots(p);

    if (is_client) { /* a request goes out in one call */
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

static int client_fail(struct worker *w, struct flow *f, int err)
{
    if (f->fd >= 0) {
        close(f->fd); /* closing also leaves the epoll set */
        f->fd = -1;
    }
    worker_flow_finish(w, f, err);
    return 1;
}

/* Opens the next connection. Returns 1 when the flow ended (e.g. out of local ports). */
static int begin(struct worker *w, struct flow *f, uint64_t now)
{
    struct crr_client *c = f->priv;
    int fd = socket(c->to.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;

    if (fd < 0)
        return client_fail(w, f, errno);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (c->congestion[0])
        setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, c->congestion, strlen(c->congestion));
    if (c->tos)
        sock_set_tos(fd, c->tos);
    if (c->dev[0] &&
        setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, c->dev, (socklen_t)strlen(c->dev))) {
        int e = errno;
        close(fd);
        return client_fail(w, f, e);
    }
    if ((c->locallen && bind(fd, (struct sockaddr *)&c->local, c->locallen)) ||
        (connect(fd, (struct sockaddr *)&c->to, c->tolen) && errno != EINPROGRESS)) {
        int e = errno;
        close(fd);
        return client_fail(w, f, e); /* EADDRNOTAVAIL: local ports exhausted */
    }
    f->fd = fd;
    c->phase = CRR_CONNECTING;
    c->got = 0;
    c->t_start = now;
    f->due_ns = now + c->timeout_ns;
    if (worker_watch(w, f, fd, EPOLL_CTL_ADD, EPOLLOUT))
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
    int soerr = 0;
    socklen_t len = sizeof(soerr);

    if (getsockopt(f->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) || soerr)
        return client_fail(w, f, soerr ? soerr : errno);
    if (c->connect_only) {
        record(w, f, worker_now(w));
        c->phase = CRR_WAIT_EOF;
    } else {
        if (send(f->fd, w->buf, c->req, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)c->req)
            return client_fail(w, f, errno ? errno : EIO);
        c->phase = CRR_READING;
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
    if (rc == 0) {
        worker_watch(w, slot, slot->fd, EPOLL_CTL_MOD, EPOLLOUT);
        return 0;
    }
    conn_close(slot); /* answered (or failed): we close first */
    return 0;         /* slots are not counted among the worker's flows */
}

static int crr_server_event(struct worker *w, struct flow *f, uint32_t events)
{
    struct crr_server *s = f->priv;

    (void)events;
    for (int i = 0; i < 64 && !worker_gate_closed(w); i++) {
        int fd = accept4(f->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        struct flow *slot = NULL;

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
        for (uint32_t k = 0; k < s->nslots && !slot; k++)
            if (s->slots[k].fd < 0)
                slot = &s->slots[k];
        if (!slot) {
            s->overflow++;
            close(fd);
            continue;
        }
        slot->fd = fd;
        ((struct crr_conn *)slot->priv)->got = 0;
        ((struct crr_conn *)slot->priv)->left = s->req ? 0 : s->resp; /* no request to wait for */
        if (!s->req)
            flow_add(&f->txns, 1);
        if (worker_watch(w, slot, fd, EPOLL_CTL_ADD, s->req ? EPOLLIN | EPOLLRDHUP : EPOLLOUT))
            conn_close(slot);
    }
    return 0;
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
};

static const struct flow_ops crr_server_ops = {
    .name = "crr-server",
    .events = EPOLLIN,
    .on_event = crr_server_event,
    .on_stop = crr_server_stop,
    .fini = crr_server_fini,
};
