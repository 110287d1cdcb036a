/* flow_rr: request/response over TCP or UDP. The client keeps --depth requests in flight
 * (closed loop) or issues them on a schedule (--rate, open loop: latency counts from the
 * intended send time, so a stalled server shows in the tail). The server answers each
 * complete request with a response. Latencies go to the worker's histogram. */
#define _GNU_SOURCE
#include "flow_rr.h"

#include "clock.h"
#include "ctl.h"
#include "result.h"
#include "worker.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#define RR_OPEN_LOOP_INFLIGHT 4096       /* open loop: requests outstanding at most per flow */
#define RR_DONE               UINT64_MAX /* numbered UDP: a slot answered ahead of the oldest */
/* UDP: a request and response this long carry, after the number, the server's receive time
 * (CLOCK_REALTIME ns, big-endian; the client sends 0 there, which an older server echoes) */
#define RR_STAMPED 16

struct rr_state {
    uint32_t req, resp;
    bool udp, open_loop;
    uint64_t timeout_ns;
    uint64_t period_ns;     /* open loop: time between requests of this flow */
    uint64_t next_intended; /* open loop: when the next request is due */
    uint64_t *sent_at;      /* ring of send (or intended) times of requests in flight */
    uint32_t ring_cap, head, inflight;
    uint64_t pending_write; /* TCP: request/response bytes not yet written */
    uint64_t partial;       /* TCP: bytes of the current response/request received */
    uint64_t seq;           /* UDP: request number, echoed in the response when it fits */
    bool numbered;          /* UDP, both sizes hold the number: answers match their request */
    bool probe;             /* params.probe: stamped when sent; UDP answers by kernel time */
    bool out_armed;         /* TCP: EPOLLOUT is in the flow's epoll interest */
    uint64_t issued, late;  /* requests sent; open loop: those sent over RESULT_LATE_NS late */
};

static const struct flow_ops rr_client_ops, rr_server_ops;

int flow_rr_init(struct flow *f, const struct params *p, bool is_client)
{
    struct rr_state *s = calloc(1, sizeof(*s));
    uint32_t nflows = p->flows ? p->flows : 1;

    if (!s)
        return -ENOMEM;
    f->priv = s;
    f->sender = is_client;
    f->ops = is_client ? &rr_client_ops : &rr_server_ops;
    s->req = p->req_size;
    s->resp = p->resp_size;
    s->udp = p->udp;
    s->timeout_ns = p->txn_timeout_ns;
    s->open_loop = p->rate_tps > 0;
    s->numbered = s->udp && s->req >= sizeof(uint64_t) && s->resp >= sizeof(uint64_t);
    s->probe = p->probe && is_client;
    if (!is_client)
        return 0;
    if (s->open_loop) {
        s->period_ns = (uint64_t)(1e9 * nflows / (double)p->rate_tps);
        if (s->period_ns == 0)
            s->period_ns = 1;
        s->ring_cap = RR_OPEN_LOOP_INFLIGHT;
    } else {
        s->ring_cap = p->depth;
    }
    s->sent_at = calloc(s->ring_cap, sizeof(*s->sent_at));
    return s->sent_at ? 0 : -ENOMEM;
}

void flow_rr_needs(const struct params *p, bool is_client, struct flow_needs *out)
{
    size_t msg = p->req_size > p->resp_size ? p->req_size : p->resp_size;
    size_t ring = !is_client ? 0 : p->rate_tps ? RR_OPEN_LOOP_INFLIGHT : p->depth;

    /* a datagram goes out and comes in whole; a client writes a request in one call; a TCP
     * server reads and answers in chunks of any size */
    *out = (struct flow_needs){.buf = is_client || p->udp ? msg : 0,
                               .state = sizeof(struct rr_state) + ring * sizeof(uint64_t)};
}

void flow_rr_collect(const struct flow *f, struct side_flow *out)
{
    const struct rr_state *s = f->priv;

    if (!f->sender || !s)
        return;
    out->reqs_sent = s->issued;
    out->reqs_late = s->late;
}

bool flow_rr_may_run_alone(const struct params *p, bool is_client)
{
    /* a lone closed-loop flow at depth 1 runs as a blocking ping-pong */
    return !is_client || (p->rate_tps == 0 && p->depth == 1);
}

static void rr_fini(struct flow *f)
{
    struct rr_state *s = f->priv;

    if (s)
        free(s->sent_at);
}

static uint64_t oldest(const struct rr_state *s) { return s->sent_at[s->head]; }

/* Counts a transaction sent (or due) at t and answered at now. */
static void record(struct worker *w, struct flow *f, uint64_t t, uint64_t now, int64_t up)
{
    uint64_t lat = now > t ? now - t : 0;

    if (atomic_load_explicit(&w->measuring, memory_order_relaxed))
        histo_record(w->lat, lat);
    worker_log_txn_owd(w, f->id, t, lat, up);
    flow_add(&f->txns, 1);
    flow_add(&f->lat_sum_ns, lat);
}

/* Drops the oldest request in flight. */
static void pop(struct rr_state *s)
{
    s->head = (s->head + 1) % s->ring_cap;
    s->inflight--;
}

/* Numbered UDP: slots answered out of order leave with the oldest. */
static void pop_answered(struct rr_state *s)
{
    while (s->inflight && s->sent_at[s->head] == RR_DONE)
        pop(s);
}

/* Completes the oldest request in flight. */
static void complete_one(struct worker *w, struct flow *f, struct rr_state *s, uint64_t now)
{
    record(w, f, oldest(s), now, TXNLOG_NO_OWD);
    pop(s);
}

/* Numbered UDP: the response in the worker's buffer (n bytes), which arrived at `at`, answers
 * the request it names, wherever that is in flight, so a lost datagram costs only its own
 * transaction (a timeout) and never lends its age to the next answer. Returns 1 when it
 * completed one; 0 for an answer to a request given up on, a repeat or a number never sent. */
static int complete_numbered(struct worker *w, struct flow *f, struct rr_state *s, size_t n,
                             uint64_t at, int64_t real_off)
{
    uint64_t seq, first = s->seq - s->inflight, stamp = 0;
    int64_t up = TXNLOG_NO_OWD;
    uint32_t slot;

    if (n < sizeof(seq))
        return 0;
    memcpy(&seq, w->buf, sizeof(seq));
    seq = be64toh(seq);
    if (seq < first || seq >= s->seq)
        return 0;
    slot = (uint32_t)((s->head + (seq - first)) % s->ring_cap);
    if (s->sent_at[slot] == RR_DONE)
        return 0;
    if (s->probe && n >= RR_STAMPED) { /* the server's receive stamp: the way out */
        memcpy(&stamp, (const uint8_t *)w->buf + sizeof(seq), sizeof(stamp));
        stamp = be64toh(stamp);
    }
    if (stamp)
        up = (int64_t)stamp - real_off - (int64_t)s->sent_at[slot];
    record(w, f, s->sent_at[slot], at, up);
    s->sent_at[slot] = RR_DONE;
    pop_answered(s);
    return 1;
}

/* Writes what is pending (TCP). flags MSG_DONTWAIT: until the socket buffer is full or the
 * worker is over its rate; 0: blocking calls, going on through their timeout slices (and the
 * rate gate's waits) until all is written, or until the test's end: a peer that stops reading
 * cannot hold us past the stop request or the hard deadline. Blocking, the gate paces every
 * byte to the last: the stop request and the hard deadline are looked at on every slice, and
 * what the gate still holds back then is given up (worker_gate_held), never sent in a burst.
 * Returns 0, or -errno when the connection failed (-ETIMEDOUT: given up at the end). */
static int write_pending(struct worker *w, struct flow *f, struct rr_state *s, int flags)
{
    bool block = !(flags & MSG_DONTWAIT);

    while (s->pending_write) {
        size_t len = s->pending_write < w->buflen ? s->pending_write : w->buflen;
        ssize_t n;

        if (block && w->gate.rate_Bps && len > (size_t)w->gate.burst)
            len = w->gate.burst > 0 ? (size_t)w->gate.burst : 1; /* paced in the gate's steps */
        while (block && worker_gate_closed(w)) {
            if (worker_stop_requested(w) || worker_past_deadline(w)) {
                worker_gate_held(w, s->pending_write);
                return -ETIMEDOUT;
            }
            worker_gate_wait(w);
        }
        if (block && worker_past_deadline(w))
            return -ETIMEDOUT;
        n = send(f->fd, w->buf, len, MSG_NOSIGNAL | flags);
        if (n < 0) {
            if (errno != EAGAIN && errno != EINTR)
                return -errno;
            if (!block)
                break;
            if (worker_stop_requested(w) || worker_past_deadline(w))
                return -ETIMEDOUT;
            continue;
        }
        s->pending_write -= (uint64_t)n;
        flow_add(&f->sent, (uint64_t)n);
        if (worker_gate_take(w, (uint64_t)n) && !block)
            break; /* over the rate: the worker waits, EPOLLOUT brings us back */
    }
    return 0;
}

/* Writes what is pending without blocking (TCP, event loop). Returns 0 or -errno. */
static int flush_tcp(struct worker *w, struct flow *f, struct rr_state *s)
{
    int rc = write_pending(w, f, s, MSG_DONTWAIT);

    if (rc)
        return rc;
    /* ask for EPOLLOUT only while something waits to be written: one epoll_ctl per change,
     * not per transaction */
    if ((s->pending_write != 0) != s->out_armed) {
        s->out_armed = s->pending_write != 0;
        worker_watch(w, f, f->fd, EPOLL_CTL_MOD, EPOLLIN | (s->out_armed ? EPOLLOUT : 0));
    }
    return 0;
}

/* UDP: one datagram, carrying the request number in its first 8 bytes when it fits. */
static int send_udp(struct worker *w, struct flow *f, uint64_t seq, uint32_t len, uint64_t stamp)
{
    uint64_t be = htobe64(seq); /* network order, like the rest of the protocol */

    if (len >= sizeof(be))
        memcpy(w->buf, &be, sizeof(be));
    if (len >= RR_STAMPED) {
        be = htobe64(stamp);
        memcpy((uint8_t *)w->buf + sizeof(be), &be, sizeof(be));
    }
    if (send(f->fd, w->buf, len, MSG_DONTWAIT) < 0 && errno != EAGAIN && errno != ENOBUFS &&
        errno != ECONNREFUSED)
        return -errno;
    return 0;
}

/* Puts one request in flight, stamped with t (now, or its intended time). */
static int issue(struct worker *w, struct flow *f, struct rr_state *s, uint64_t t)
{
    s->sent_at[(s->head + s->inflight) % s->ring_cap] = t;
    s->inflight++;
    s->issued++;
    if (s->udp)
        return send_udp(w, f, s->seq++, s->req, 0); /* 0: not stamped by the server */
    s->pending_write += s->req;
    return flush_tcp(w, f, s);
}

/* UDP client: is the response of n bytes in the buffer the answer to a request already given
 * up on (not in flight any more)? Then it is not counted twice. */
static bool stale(const struct worker *w, const struct rr_state *s, size_t n)
{
    uint64_t seq;

    if (n < sizeof(seq) || s->req < sizeof(seq))
        return false; /* too short to carry the number */
    memcpy(&seq, w->buf, sizeof(seq));
    return be64toh(seq) < s->seq - s->inflight;
}

/* One datagram into the worker's buffer. A probe takes the kernel's receive time with it
 * (SO_TIMESTAMPNS, CLOCK_REALTIME) on the worker's clock: real_off is CLOCK_REALTIME minus that
 * clock, read once per wake-up. *at is the receive time, the worker's clock otherwise. */
static ssize_t recv_stamped(struct worker *w, struct flow *f, const struct rr_state *s,
                            int64_t real_off, uint64_t *at)
{
    char ctl[CMSG_SPACE(sizeof(struct timespec))];
    struct iovec iov = {.iov_base = w->buf, .iov_len = w->buflen};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    struct cmsghdr *c;
    ssize_t n;

    if (!s->probe || !s->udp) {
        n = recv(f->fd, w->buf, w->buflen, MSG_DONTWAIT);
        *at = n > 0 && s->numbered ? worker_now(w) : 0;
        return n;
    }
    mh.msg_control = ctl;
    mh.msg_controllen = sizeof(ctl);
    n = recvmsg(f->fd, &mh, MSG_DONTWAIT);
    *at = 0;
    for (c = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
            struct timespec ts;
            memcpy(&ts, CMSG_DATA(c), sizeof(ts));
            *at = (uint64_t)((int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec - real_off);
        }
    if (n > 0 && !*at)
        *at = worker_now(w);
    return n;
}

/* CLOCK_REALTIME minus the worker's clock, for kernel timestamps. */
static int64_t real_offset(const struct worker *w)
{
    return (int64_t)clock_real_ns() - (int64_t)worker_now(w);
}

static void arm_timer(struct flow *f, struct rr_state *s)
{
    uint64_t due = s->inflight ? oldest(s) + s->timeout_ns : 0;

    if (s->open_loop && (!due || s->next_intended < due))
        due = s->next_intended;
    f->due_ns = due;
}

static int rr_client_start(struct worker *w, struct flow *f, uint64_t now)
{
    struct rr_state *s = f->priv;
    int rc = 0, one = 1;

    if (s->probe && s->udp)
        setsockopt(f->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
    if (s->open_loop)
        s->next_intended = now + (uint64_t)f->id * (s->period_ns / 8 + 1) % s->period_ns;
    else
        for (uint32_t i = 0; i < s->ring_cap && !rc; i++)
            rc = issue(w, f, s, now);
    arm_timer(f, s);
    if (rc) {
        worker_flow_finish(w, f, -rc);
        return 1;
    }
    return 0;
}

/* Counts response bytes (TCP) or datagrams (UDP) and completes transactions. */
static int rr_client_event(struct worker *w, struct flow *f, uint32_t events)
{
    struct rr_state *s = f->priv;
    uint64_t now, done = 0, answered = 0, at;
    int64_t real_off = s->probe && s->udp ? real_offset(w) : 0;
    int err = 0, ended = 0;

    if ((events & EPOLLOUT) && !s->udp && (err = -flush_tcp(w, f, s)))
        goto fail;
    for (int i = 0; i < 64; i++) {
        ssize_t n = recv_stamped(w, f, s, real_off, &at);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            break;
        if (n <= 0) {
            err = n < 0 ? errno : ECONNRESET; /* the server closed mid-test */
            ended = 1;
            break;
        }
        flow_add(&f->bytes, (uint64_t)n);
        if (s->numbered) {
            answered += (uint64_t)complete_numbered(w, f, s, (size_t)n, at, real_off);
        } else if (s->udp) {
            if (!stale(w, s, (size_t)n))
                done++;
        } else {
            s->partial += (uint64_t)n;
            done += s->partial / s->resp;
            s->partial %= s->resp;
        }
    }
    now = worker_now(w);
    while (done-- && s->inflight) {
        complete_one(w, f, s, now);
        if (!s->open_loop && !w->stopping && (err = -issue(w, f, s, now)))
            goto fail;
    }
    while (answered-- && !s->open_loop && !w->stopping) /* closed loop: one more each */
        if ((err = -issue(w, f, s, now)))
            goto fail;
    arm_timer(f, s);
    if (!ended)
        return 0;
fail:
    worker_flow_finish(w, f, err);
    return 1;
}

static int rr_client_timer(struct worker *w, struct flow *f, uint64_t now)
{
    struct rr_state *s = f->priv;
    int rc = 0;

    /* the oldest request went unanswered for too long */
    while (s->inflight && oldest(s) + s->timeout_ns <= now) {
        flow_add(&f->timeouts, 1);
        worker_log_txn(w, f->id, oldest(s), TXNLOG_LOST);
        if (!s->udp) { /* a TCP stream cannot resynchronise: the flow ends */
            worker_flow_finish(w, f, ETIMEDOUT);
            return 1;
        }
        pop(s);
        pop_answered(s);
        if (!s->open_loop && !w->stopping)
            rc = issue(w, f, s, now);
    }
    /* open loop: every request whose time has come, stamped with that time */
    while (!rc && s->open_loop && s->next_intended <= now) {
        if (s->inflight < s->ring_cap) {
            s->late += now - s->next_intended > RESULT_LATE_NS;
            /* a probe counts from its send: the host's lateness is counted, not measured */
            rc = issue(w, f, s, s->probe ? now : s->next_intended);
        } else {
            flow_add(&f->timeouts, 1); /* too many outstanding: counted as given up */
            worker_log_txn(w, f->id, s->next_intended, TXNLOG_LOST);
        }
        s->next_intended += s->period_ns;
    }
    arm_timer(f, s);
    if (rc) {
        worker_flow_finish(w, f, -rc);
        return 1;
    }
    return 0;
}

static int rr_client_stop(struct worker *w, struct flow *f)
{
    struct rr_state *s = f->priv;

    if (!s->udp)
        shutdown(f->fd, SHUT_WR); /* the server sees EOF and ends too */
    worker_flow_finish(w, f, 0);
    return 1;
}

/* The server's answer to n bytes just read into the worker's buffer, on either path (event
 * loop or alone). UDP: a datagram is a request, answered at once by a response carrying its
 * number. TCP: every complete request queues a response in pending_write, which the caller
 * writes its own way. Returns 0 or -errno. */
static int rr_answer(struct worker *w, struct flow *f, struct rr_state *s, size_t n)
{
    if (s->udp) {
        uint64_t seq = 0;
        if (n >= 4 && !memcmp(w->buf, ctl_data_magic, 4))
            return 0; /* a repeated hello */
        if (n >= sizeof(seq)) {
            memcpy(&seq, w->buf, sizeof(seq));
            seq = be64toh(seq); /* echoed back as it came */
        }
        flow_add(&f->bytes, n);
        flow_add(&f->txns, 1);
        flow_add(&f->sent, s->resp);
        worker_gate_take(w, n + s->resp);
        return send_udp(w, f, seq, s->resp, s->req >= RR_STAMPED ? clock_real_ns() : 0);
    }
    worker_gate_take(w, n);
    flow_add(&f->bytes, n);
    s->partial += n;
    flow_add(&f->txns, s->partial / s->req);
    s->pending_write += s->partial / s->req * s->resp;
    s->partial %= s->req;
    return 0;
}

/* Server, TCP: answer every complete request; UDP: answer every datagram. */
static int rr_server_event(struct worker *w, struct flow *f, uint32_t events)
{
    struct rr_state *s = f->priv;
    int err = 0;

    if ((events & EPOLLOUT) && !s->udp && (err = -flush_tcp(w, f, s)))
        goto fail;
    for (int i = 0; i < 64; i++) {
        ssize_t n = recv(f->fd, w->buf, w->buflen, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            break;
        if (n < 0 && s->udp && errno == ECONNREFUSED)
            continue; /* the client's port closed for a moment: ICMP noise */
        if (n <= 0) {
            err = n < 0 ? errno : 0; /* EOF: the client finished */
            goto fail;
        }
        if ((err = -rr_answer(w, f, s, (size_t)n)))
            goto fail;
        if (worker_gate_closed(w))
            break; /* over the rate: the worker waits before its next event */
    }
    if (!s->udp && (err = -flush_tcp(w, f, s)))
        goto fail;
    return 0;
fail:
    worker_flow_finish(w, f, err);
    return 1;
}

static int rr_server_stop(struct worker *w, struct flow *f)
{
    struct rr_state *s = f->priv;

    if (!s->udp)
        return 0; /* serve until the client closes */
    worker_flow_finish(w, f, 0);
    return 1;
}

/* Blocking calls wake up this often to look at the stop flag. */
static void set_timeouts(int fd, uint64_t ns)
{
    struct timeval tv = {.tv_sec = (time_t)(ns / 1000000000ULL),
                         .tv_usec = (suseconds_t)(ns % 1000000000ULL / 1000)};

    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* Reads one whole response (TCP) or one datagram (UDP); flags MSG_DONTWAIT spins (the
 * caller calls again). 1 = got it, 0 = not yet (timeout slice, or nothing there yet), <0 = the
 * connection failed. */
static int read_response(struct worker *w, struct flow *f, struct rr_state *s, int flags)
{
    for (;;) {
        ssize_t n = recv(f->fd, w->buf, s->udp ? w->buflen : s->resp - s->partial, flags);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return 0;
        if (n <= 0)
            return n < 0 ? -errno : -ECONNRESET;
        flow_add(&f->bytes, (uint64_t)n);
        if (s->udp) {
            if (stale(w, s, (size_t)n))
                continue;
            return 1;
        }
        s->partial += (uint64_t)n;
        if (s->partial >= s->resp) {
            s->partial = 0;
            return 1;
        }
    }
}

/* One closed-loop flow at depth 1 on its own thread, like a ping-pong tool: write the
 * request, read the response, no epoll in between. --busy-poll reads without sleeping. */
static void rr_client_alone(struct worker *w, struct flow *f)
{
    struct rr_state *s = f->priv;
    uint64_t slice = s->timeout_ns < 100000000ULL ? s->timeout_ns : 100000000ULL;
    int err = 0;

    set_timeouts(f->fd, slice);
    while (!worker_stop_requested(w)) {
        uint64_t t0 = worker_now(w);
        int got = 0;

        s->head = 0, s->inflight = 1, s->sent_at[0] = t0;
        s->issued++;
        if (s->udp) {
            if ((err = -send_udp(w, f, s->seq++, s->req, 0)))
                break;
        } else if (send(f->fd, w->buf, s->req, MSG_NOSIGNAL) != (ssize_t)s->req) {
            err = errno ? errno : EIO;
            break;
        }
        while (!got && !worker_stop_requested(w) && worker_now(w) - t0 < s->timeout_ns) {
            bool spin = worker_spins(w);

            got = read_response(w, f, s, spin ? MSG_DONTWAIT : 0);
            if (!got && spin)
                worker_spin_pause(w);
        }
        if (got < 0) {
            err = -got;
            break;
        }
        if (got) {
            complete_one(w, f, s, worker_now(w));
        } else if (!worker_stop_requested(w)) {
            flow_add(&f->timeouts, 1);
            worker_log_txn(w, f->id, t0, TXNLOG_LOST);
            if (!s->udp) { /* a TCP stream cannot resynchronise */
                err = ETIMEDOUT;
                break;
            }
        }
    }
    if (!err)
        rr_client_stop(w, f);
    else
        worker_flow_finish(w, f, err);
}

static const struct flow_ops rr_client_ops = {
    .name = "rr-client",
    .events = EPOLLIN,
    .on_event = rr_client_event,
    .on_stop = rr_client_stop,
    .on_timer = rr_client_timer,
    .on_start = rr_client_start,
    .fini = rr_fini,
    .run_alone = rr_client_alone,
    .alone_spins = true,
};

/* A lone server flow: blocking reads (--busy-poll: spinning ones), a response for every
 * complete request. The stop request, the drain time and the hard deadline are looked at
 * after every call, so a peer trickling bytes cannot keep the flow going. */
static void rr_server_alone(struct worker *w, struct flow *f)
{
    struct rr_state *s = f->priv;
    uint64_t deadline = 0;
    int err = 0;

    set_timeouts(f->fd, 100000000ULL);
    for (;;) {
        bool spin = worker_spins(w);
        ssize_t n = recv(f->fd, w->buf, w->buflen, spin ? MSG_DONTWAIT : 0);
        uint64_t now = worker_now(w);

        if (worker_past_deadline(w)) {
            worker_flow_kill(w, f);
            return;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR || (s->udp && errno == ECONNREFUSED))) {
            /* a timeout slice (--busy-poll: nothing yet), or ICMP noise from the client's port */
            if (spin)
                worker_spin_pause(w);
        } else if (n <= 0) {
            err = n < 0 ? errno : 0; /* EOF: the client finished */
            break;
        } else if ((err = -rr_answer(w, f, s, (size_t)n)) ||
                   (!s->udp && (err = -write_pending(w, f, s, 0)))) {
            break;
        }
        if (worker_stop_requested(w) && s->udp)
            break; /* UDP has no end of stream: stop means stop */
        if (!deadline && worker_stop_requested(w))
            deadline = now + w->drain_ns;
        if (deadline && now >= deadline) {
            err = ETIMEDOUT;
            break;
        }
        if (worker_gate_closed(w))
            worker_gate_wait(w);
    }
    worker_flow_finish(w, f, err);
}

static const struct flow_ops rr_server_ops = {
    .name = "rr-server",
    .events = EPOLLIN,
    .on_event = rr_server_event,
    .on_stop = rr_server_stop,
    .fini = rr_fini,
    .run_alone = rr_server_alone,
    .alone_spins = true,
};
