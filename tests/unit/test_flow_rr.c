/* Unit tests for the rr flow kind (flow_rr.c), run by hand over a socketpair: a real worker
 * (its buffer, epoll set and histogram) that never starts its thread, a fake clock installed
 * in it, and the test playing the peer. Checked: transactions counted across partial reads,
 * latencies equal to the fake time between request and response, partial writes finished on
 * EPOLLOUT (and EPOLLOUT asked for only while something waits), the server's answers on the
 * event loop and on the blocking lone-flow path alike, UDP numbering, late answers and
 * timeouts. */
#define _GNU_SOURCE
#include "test_util.h"

#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "engine.h"
#include "flow_kinds.h"
#include "flow_rr.h"
#include "result.h"
#include "txnlog.h"
#include "sock.h"
#include "worker.h"

#define T0 1000000000ULL /* the fake clock's start */

struct rig {
    struct params p;
    struct worker w;
    struct flow f;
    uint64_t now; /* the fake clock, ns */
    int peer;     /* the test's end of the socketpair */
};

static uint64_t fake_now(void *ctx) { return *(const uint64_t *)ctx; }

/* A clock that moves on by *step at every reading after the first (a yield that took that long). */
struct step_clock {
    uint64_t now, step;
};
static uint64_t step_now(void *ctx)
{
    struct step_clock *c = ctx;
    uint64_t t = c->now;

    c->now += c->step;
    return t;
}

static void rig_params(struct rig *r, bool udp, uint32_t req, uint32_t resp, uint32_t depth)
{
    memset(r, 0, sizeof(*r));
    params_defaults(&r->p);
    r->p.test = PARAMS_TEST_RR;
    r->p.udp = udp;
    r->p.req_size = req;
    r->p.resp_size = resp;
    r->p.depth = depth;
    r->p.txn_timeout_ns = 1000000000ULL;
}

/* One rr flow of this side on its own worker, connected to r->peer. sndbuf > 0: the flow's
 * socket buffer (to force partial writes). */
static void rig_up(struct rig *r, bool is_client, int sndbuf)
{
    const struct flow_kind *k = flow_kind_for(&r->p, is_client);
    int sv[2];

    assert_string_equal(k->name, r->p.udp ? "rr-udp" : "rr");
    assert_int_equal(flow_init(&r->f, 0, k, &r->p, is_client), 0);
    assert_int_equal(worker_init(&r->w, 0, -1, &r->p, 1, 0, ENGINE_DRAIN_NS, k->transactional), 0);
    assert_int_equal(
        socketpair(AF_UNIX, (r->p.udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK, 0, sv), 0);
    if (sndbuf > 0)
        assert_int_equal(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);
    r->f.fd = sv[0];
    r->peer = sv[1];
    assert_int_equal(worker_add_flow(&r->w, &r->f), 0);
    r->now = T0;
    r->w.fake_now = fake_now;
    r->w.fake_ctx = &r->now;
    atomic_store(&r->w.measuring, true);
}

static void rig_down(struct rig *r)
{
    worker_fini(&r->w);
    if (r->f.fd >= 0)
        close(r->f.fd);
    close(r->peer);
    flow_fini(&r->f);
}

static uint64_t txns(const struct rig *r) { return atomic_load(&r->f.txns); }

/* Everything the flow has written so far (TCP), read from the peer's end. */
static size_t drain(struct rig *r)
{
    static char buf[1 << 16];
    size_t got = 0;
    ssize_t n;

    while ((n = recv(r->peer, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
        got += (size_t)n;
    assert_true(n < 0 && errno == EAGAIN);
    return got;
}

static void put(struct rig *r, size_t len)
{
    static const char zeros[4096];

    assert_true(len <= sizeof(zeros));
    assert_int_equal(send(r->peer, zeros, len, MSG_DONTWAIT), (ssize_t)len);
}

static int event(struct rig *r, uint32_t events)
{
    return r->f.ops->on_event(&r->w, &r->f, events);
}

/* What the worker's epoll set reports for the flow right now (0: nothing). */
static uint32_t ready(struct rig *r)
{
    struct epoll_event ev[4];
    int n = epoll_wait(r->w.epfd, ev, 4, 0);

    for (int i = 0; i < n; i++)
        if (ev[i].data.ptr == &r->f)
            return ev[i].events;
    return 0;
}

/* ---------------------------------------------------------------- client, TCP */

static void test_client_latency_partial_reads(void **state)
{
    struct rig r;

    (void)state;
    rig_params(&r, false, 100, 300, 1);
    rig_up(&r, true, 0);
    assert_true(r.f.sender);
    assert_int_equal(r.f.ops->on_start(&r.w, &r.f, r.now), 0);
    assert_int_equal(drain(&r), 100); /* the first request */
    assert_int_equal(r.f.due_ns, T0 + r.p.txn_timeout_ns);

    /* the response in two pieces: nothing completes on the first */
    r.now += 5000;
    put(&r, 120);
    assert_int_equal(event(&r, EPOLLIN), 0);
    assert_int_equal(txns(&r), 0);
    assert_int_equal(drain(&r), 0);
    r.now += 7000;
    put(&r, 180);
    assert_int_equal(event(&r, EPOLLIN), 0);
    assert_int_equal(txns(&r), 1);
    assert_int_equal(atomic_load(&r.f.lat_sum_ns), 12000);
    assert_int_equal(r.w.lat->count, 1);
    assert_int_equal(r.w.lat->min_ns, 12000);
    assert_int_equal(atomic_load(&r.f.bytes), 300);
    /* closed loop: the next request goes out at once, stamped now */
    assert_int_equal(drain(&r), 100);
    assert_int_equal(r.f.due_ns, r.now + r.p.txn_timeout_ns);

    /* a response and the start of the next in one read: the rest carries over */
    r.now += 3000;
    put(&r, 450);
    assert_int_equal(event(&r, EPOLLIN), 0);
    assert_int_equal(txns(&r), 2);
    assert_int_equal(drain(&r), 100);
    r.now += 1000;
    put(&r, 150);
    assert_int_equal(event(&r, EPOLLIN), 0);
    assert_int_equal(txns(&r), 3);
    /* 12 us, 3 us, then 1 us (the third request went out when the second completed) */
    assert_int_equal(atomic_load(&r.f.lat_sum_ns), 12000 + 3000 + 1000);
    assert_int_equal(r.w.lat->count, 3);
    assert_int_equal(r.w.lat->min_ns, 1000);
    assert_int_equal(r.w.lat->max_ns, 12000);

    /* during the warm-up, transactions count but latencies stay out of the histogram */
    atomic_store(&r.w.measuring, false);
    drain(&r);
    r.now += 2000;
    put(&r, 300);
    assert_int_equal(event(&r, EPOLLIN), 0);
    assert_int_equal(txns(&r), 4);
    assert_int_equal(r.w.lat->count, 3);
    assert_int_equal(atomic_load(&r.f.state), FLOW_ACTIVE);
    rig_down(&r);
}

static void test_client_depth(void **state)
{
    struct rig r;

    (void)state;
    rig_params(&r, false, 10, 20, 4);
    rig_up(&r, true, 0);
    assert_int_equal(r.f.ops->on_start(&r.w, &r.f, r.now), 0);
    assert_int_equal(drain(&r), 40); /* four in flight */
    r.now += 100;
    put(&r, 50); /* two and a half responses */
    assert_int_equal(event(&r, EPOLLIN), 0);
    assert_int_equal(txns(&r), 2);
    assert_int_equal(atomic_load(&r.f.lat_sum_ns), 200);
    assert_int_equal(drain(&r), 20); /* two more in flight */
    rig_down(&r);
}

/* A request larger than the socket takes: the rest goes out on EPOLLOUT, which is asked for
 * only while something waits. */
static void test_client_partial_write(void **state)
{
    struct rig r;
    size_t got, rounds = 0;

    (void)state;
    rig_params(&r, false, 1 << 20, 64, 1);
    rig_up(&r, true, 4096);
    assert_int_equal(r.f.ops->on_start(&r.w, &r.f, r.now), 0);
    got = drain(&r);
    assert_true(got > 0 && got < (1u << 20));
    while (got < (1u << 20) && rounds++ < 100000) {
        assert_true(ready(&r) & EPOLLOUT);
        assert_int_equal(event(&r, EPOLLOUT), 0);
        got += drain(&r);
    }
    assert_int_equal(got, 1 << 20);
    assert_int_equal(ready(&r), 0); /* written: EPOLLIN only again, and nothing to read */
    r.now += 777;
    put(&r, 64);
    assert_true(ready(&r) & EPOLLIN);
    assert_int_equal(event(&r, EPOLLIN), 0);
    assert_int_equal(txns(&r), 1);
    assert_int_equal(atomic_load(&r.f.lat_sum_ns), 777);
    rig_down(&r);
}

/* TCP cannot resynchronise after a lost response: the flow ends. */
static void test_client_timeout_tcp(void **state)
{
    struct rig r;

    (void)state;
    rig_params(&r, false, 10, 10, 1);
    rig_up(&r, true, 0);
    assert_int_equal(r.f.ops->on_start(&r.w, &r.f, r.now), 0);
    r.now += r.p.txn_timeout_ns - 1;
    assert_int_equal(r.f.ops->on_timer(&r.w, &r.f, r.now), 0);
    assert_int_equal(atomic_load(&r.f.timeouts), 0);
    r.now += 1;
    assert_int_equal(r.f.ops->on_timer(&r.w, &r.f, r.now), 1);
    assert_int_equal(atomic_load(&r.f.timeouts), 1);
    assert_int_equal(atomic_load(&r.f.state), FLOW_DONE);
    assert_int_equal(atomic_load(&r.f.err), ETIMEDOUT);
    rig_down(&r);
}

/* ---------------------------------------------------------------- server, TCP */

static void test_server_partial_requests(void **state)
{
    struct rig r;

    (void)state;
    rig_params(&r, false, 100, 300, 1);
    rig_up(&r, false, 0);
    assert_false(r.f.sender);
    put(&r, 60);
    assert_int_equal(event(&r, EPOLLIN), 0);
    assert_int_equal(txns(&r), 0);
    assert_int_equal(drain(&r), 0);
    put(&r, 90); /* completes the first, half of the second */
    assert_int_equal(event(&r, EPOLLIN), 0);
    assert_int_equal(txns(&r), 1);
    assert_int_equal(drain(&r), 300);
    put(&r, 200); /* the second's rest, a third, half a fourth */
    assert_int_equal(event(&r, EPOLLIN), 0);
    assert_int_equal(txns(&r), 3);
    assert_int_equal(drain(&r), 600);
    assert_int_equal(atomic_load(&r.f.bytes), 350);
    /* the client closing ends the flow without error */
    shutdown(r.peer, SHUT_WR);
    assert_int_equal(event(&r, EPOLLIN), 1);
    assert_int_equal(atomic_load(&r.f.state), FLOW_DONE);
    assert_int_equal(atomic_load(&r.f.err), 0);
    rig_down(&r);
}

static void test_server_partial_write(void **state)
{
    struct rig r;
    size_t got, rounds = 0;

    (void)state;
    rig_params(&r, false, 8, 1 << 20, 1);
    rig_up(&r, false, 4096);
    put(&r, 16); /* two requests: two responses of 1 MiB */
    assert_int_equal(event(&r, EPOLLIN), 0);
    assert_int_equal(txns(&r), 2);
    got = drain(&r);
    assert_true(got < (2u << 20));
    while (got < (2u << 20) && rounds++ < 100000) {
        assert_true(ready(&r) & EPOLLOUT);
        assert_int_equal(event(&r, EPOLLOUT), 0);
        got += drain(&r);
    }
    assert_int_equal(got, 2u << 20);
    assert_int_equal(ready(&r), 0);
    rig_down(&r);
}

/* The lone server flow: blocking calls on its own thread, the same answers. */
static void *run_alone(void *arg)
{
    struct rig *r = arg;

    r->f.ops->run_alone(&r->w, &r->f);
    return NULL;
}

/* Reads exactly len bytes from the peer within 5 s. */
static void get(struct rig *r, size_t len)
{
    char buf[4096];
    size_t got = 0;

    while (got < len) {
        struct pollfd pfd = {.fd = r->peer, .events = POLLIN};
        ssize_t n;
        assert_int_equal(poll(&pfd, 1, 5000), 1);
        n = recv(r->peer, buf, len - got < sizeof(buf) ? len - got : sizeof(buf), 0);
        assert_true(n > 0);
        got += (size_t)n;
    }
}

/* busy: --busy-poll, whose lone loop spins on non-blocking reads: the same answers */
static void server_alone(bool busy)
{
    struct rig r;
    pthread_t th;

    rig_params(&r, false, 100, 300, 1);
    r.p.busy_poll = busy;
    rig_up(&r, false, 0);
    assert_true(r.f.can_run_alone);
    assert_true(worker_runs_alone(&r.w));
    assert_int_equal(sock_set_nonblock(r.f.fd, false), 0);
    assert_int_equal(pthread_create(&th, NULL, run_alone, &r), 0);
    put(&r, 60);
    put(&r, 90);
    get(&r, 300);
    put(&r, 200);
    get(&r, 600);
    shutdown(r.peer, SHUT_WR);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(txns(&r), 3);
    assert_int_equal(atomic_load(&r.f.bytes), 350);
    assert_int_equal(atomic_load(&r.f.state), FLOW_DONE);
    assert_int_equal(atomic_load(&r.f.err), 0);
    assert_int_equal(drain(&r), 0); /* no response for the half request */
    rig_down(&r);
}

static void test_server_alone(void **state)
{
    (void)state;
    server_alone(false);
}

static void test_server_alone_spinning(void **state)
{
    (void)state;
    server_alone(true);
}

/* The lone client under --busy-poll: requests answered in turn are counted, the stop ends it
 * with a half-close; and a stream flow, whose lone loop blocks, is left to the event loop. */
static void test_client_alone_spinning(void **state)
{
    struct rig r, st;
    pthread_t th;

    (void)state;
    rig_params(&r, false, 10, 20, 1);
    r.p.busy_poll = true;
    rig_up(&r, true, 0);
    assert_true(worker_runs_alone(&r.w));
    assert_int_equal(sock_set_nonblock(r.f.fd, false), 0);
    assert_int_equal(pthread_create(&th, NULL, run_alone, &r), 0);
    for (int i = 0; i < 3; i++) {
        get(&r, 10);
        put(&r, 5); /* a response in two pieces */
        put(&r, 15);
    }
    get(&r, 10); /* the fourth request, left unanswered */
    atomic_store(&r.w.stop_requested, true);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(txns(&r), 3);
    assert_int_equal(atomic_load(&r.f.bytes), 60);
    assert_int_equal(atomic_load(&r.f.state), FLOW_DONE);
    assert_int_equal(recv(r.peer, (char[4]){0}, 4, MSG_DONTWAIT), 0); /* the half-close */
    rig_down(&r);

    memset(&st, 0, sizeof(st));
    params_defaults(&st.p);
    st.p.test = PARAMS_TEST_STREAM;
    st.p.busy_poll = true;
    {
        const struct flow_kind *k = flow_kind_for(&st.p, true);
        assert_int_equal(flow_init(&st.f, 0, k, &st.p, true), 0);
        assert_int_equal(worker_init(&st.w, 0, -1, &st.p, 1, 0, ENGINE_DRAIN_NS, k->transactional),
                         0);
        st.f.fd = -1;
        assert_int_equal(worker_add_flow(&st.w, &st.f), 0);
        assert_false(worker_runs_alone(&st.w));
        st.p.busy_poll = false;
        assert_true(worker_runs_alone(&st.w) == st.f.can_run_alone);
        worker_fini(&st.w);
        flow_fini(&st.f);
    }
}

/* ---------------------------------------------------------------- UDP */

static uint64_t dgram_seq(struct rig *r, size_t want_len)
{
    char buf[256];
    uint64_t seq;
    ssize_t n = recv(r->peer, buf, sizeof(buf), MSG_DONTWAIT);

    assert_int_equal(n, (ssize_t)want_len);
    memcpy(&seq, buf, sizeof(seq));
    return be64toh(seq);
}

static void put_seq(struct rig *r, uint64_t seq, size_t len)
{
    char buf[256] = {0};
    uint64_t be = htobe64(seq);

    memcpy(buf, &be, sizeof(be));
    assert_int_equal(send(r->peer, buf, len, MSG_DONTWAIT), (ssize_t)len);
}

static void test_udp_client(void **state)
{
    struct rig r;

    (void)state;
    rig_params(&r, true, 64, 32, 2);
    rig_up(&r, true, 0);
    assert_false(r.f.can_run_alone); /* depth 2: the event loop */
    assert_int_equal(r.f.ops->on_start(&r.w, &r.f, r.now), 0);
    assert_int_equal(dgram_seq(&r, 64), 0); /* numbered requests */
    assert_int_equal(dgram_seq(&r, 64), 1);
    /* request 0 answered after 400 ns; request 2 takes its place */
    r.now += 400;
    put_seq(&r, 0, 32);
    assert_int_equal(event(&r, EPOLLIN), 0);
    assert_int_equal(txns(&r), 1);
    assert_int_equal(atomic_load(&r.f.lat_sum_ns), 400);
    assert_int_equal(dgram_seq(&r, 64), 2);
    /* request 1 is lost: given up on at its timeout, request 3 takes its place; UDP goes on */
    r.now = T0 + r.p.txn_timeout_ns - 1;
    assert_int_equal(r.f.ops->on_timer(&r.w, &r.f, r.now), 0);
    assert_int_equal(atomic_load(&r.f.timeouts), 0);
    r.now += 1;
    assert_int_equal(r.f.ops->on_timer(&r.w, &r.f, r.now), 0);
    assert_int_equal(atomic_load(&r.f.timeouts), 1);
    assert_int_equal(atomic_load(&r.f.state), FLOW_ACTIVE);
    assert_int_equal(dgram_seq(&r, 64), 3);
    assert_int_equal(r.f.due_ns, T0 + 400 + r.p.txn_timeout_ns); /* request 2's timeout */
    /* its late answer is not counted; request 2's answer is */
    put_seq(&r, 1, 32);
    assert_int_equal(event(&r, EPOLLIN), 0);
    assert_int_equal(txns(&r), 1);
    r.now += 50;
    put_seq(&r, 2, 32);
    assert_int_equal(event(&r, EPOLLIN), 0);
    assert_int_equal(txns(&r), 2);
    assert_int_equal(atomic_load(&r.f.lat_sum_ns), 400 + (r.p.txn_timeout_ns + 50 - 400));
    rig_down(&r);
}

/* Open loop, numbered UDP, with a transaction log (netrig load's probes): an answer completes
 * the request it names even when an older one was lost, so the loss costs that probe alone
 * (a timeout, logged as lost at its intended time) and never adds its age to the next answer;
 * requests issued over 1 ms after their time are counted late. */
static void test_udp_open_loop_log(void **state)
{
    struct rig r;
    struct txnlog log;
    struct side_flow sf = {0};

    (void)state;
    rig_params(&r, true, 64, 64, 1);
    r.p.rate_tps = 1000; /* one request every ms */
    rig_up(&r, true, 0);
    assert_int_equal(txnlog_init(&log, 16), 0);
    r.w.log = &log;
    assert_int_equal(r.f.ops->on_start(&r.w, &r.f, r.now), 0);
    assert_int_equal(r.f.due_ns, T0); /* flow 0's first request is due at once */
    assert_int_equal(r.f.ops->on_timer(&r.w, &r.f, r.now), 0);
    assert_int_equal(dgram_seq(&r, 64), 0);
    r.now = T0 + 1000000;
    assert_int_equal(r.f.ops->on_timer(&r.w, &r.f, r.now), 0);
    assert_int_equal(dgram_seq(&r, 64), 1);
    /* request 2 goes out 1.5 ms late: late, and stamped with its intended time */
    r.now = T0 + 3500000;
    assert_int_equal(r.f.ops->on_timer(&r.w, &r.f, r.now), 0);
    assert_int_equal(dgram_seq(&r, 64), 2);
    assert_int_equal(dgram_seq(&r, 64), 3); /* and 3, due at 3 ms: on time */
    flow_rr_collect(&r.f, &sf);
    assert_int_equal(sf.reqs_sent, 4);
    assert_int_equal(sf.reqs_late, 1);
    /* 1 is lost; 2 and 0 answer out of order, then a repeat of 2 and a number never sent */
    r.now = T0 + 4000000;
    put_seq(&r, 2, 64);
    put_seq(&r, 0, 64);
    put_seq(&r, 2, 64);
    put_seq(&r, 77, 64);
    assert_int_equal(event(&r, EPOLLIN), 0);
    assert_int_equal(txns(&r), 2);
    assert_int_equal(atomic_load(&r.f.lat_sum_ns), 2000000 + 4000000);
    /* 1 times out at its own deadline; 3 is still in flight */
    r.now = T0 + 1000000 + r.p.txn_timeout_ns;
    assert_int_equal(r.f.ops->on_timer(&r.w, &r.f, r.now), 0);
    assert_int_equal(atomic_load(&r.f.timeouts), 1);
    put_seq(&r, 3, 64);
    assert_int_equal(event(&r, EPOLLIN), 0);
    assert_int_equal(txns(&r), 3);
    /* the log: 2 then 0 answered, 1 lost, 3 answered; in the order they were settled */
    assert_int_equal(log.n, 4);
    assert_int_equal(log.rec[0].t_ns, T0 + 2000000);
    assert_int_equal(log.rec[0].lat_ns, 2000000);
    assert_int_equal(log.rec[1].t_ns, T0);
    assert_int_equal(log.rec[1].lat_ns, 4000000);
    assert_int_equal(log.rec[2].t_ns, T0 + 1000000);
    assert_true(log.rec[2].lat_ns == TXNLOG_LOST);
    assert_int_equal(log.rec[3].t_ns, T0 + 3000000);
    r.w.log = NULL;
    txnlog_fini(&log);
    rig_down(&r);
}

/* A probe (netrig load) takes the kernel's receive time of an answer: a worker that reads it
 * 30 ms late still measures the network's time, where an ordinary rr client counts the wait. */
static void probe_run(bool probe, uint64_t *lat)
{
    struct rig r;
    struct txnlog log;
    const struct timespec late = {0, 30000000};

    rig_params(&r, true, 64, 64, 1);
    r.p.rate_tps = 1000;
    r.p.probe = probe;
    rig_up(&r, true, 0);
    r.w.fake_now = NULL; /* the real clock: the kernel's stamps are on it */
    assert_int_equal(txnlog_init(&log, 4), 0);
    r.w.log = &log;
    assert_int_equal(r.f.ops->on_start(&r.w, &r.f, worker_now(&r.w)), 0);
    assert_int_equal(r.f.ops->on_timer(&r.w, &r.f, worker_now(&r.w)), 0);
    assert_int_equal(dgram_seq(&r, 64), 0);
    put_seq(&r, 0, 64);
    nanosleep(&late, NULL);
    assert_int_equal(event(&r, EPOLLIN), 0);
    assert_int_equal(log.n, 1);
    *lat = log.rec[0].lat_ns;
    r.w.log = NULL;
    txnlog_fini(&log);
    rig_down(&r);
}

static void test_probe_kernel_stamps(void **state)
{
    uint64_t probe, plain;

    (void)state;
    probe_run(true, &probe);
    probe_run(false, &plain);
    if (probe >= 15000000ULL || plain < 30000000ULL)
        fail_msg("probe %llu ns (kernel stamp, want < 15 ms), plain rr %llu ns (want >= 30 ms)",
                 (unsigned long long)probe, (unsigned long long)plain);
}

/* Logs merged from several workers: one list in time order, relative to the start. */
static void test_txnlog_merge(void **state)
{
    struct txnlog a, b, m;
    const struct txnlog *src[2] = {&a, &b};

    (void)state;
    assert_int_equal(txnlog_init(&a, 2), 0);
    assert_int_equal(txnlog_init(&b, 4), 0);
    txnlog_add(&a, 500, 1);
    txnlog_add(&a, 100, 2);
    txnlog_add(&a, 900, 3); /* full: dropped and counted */
    txnlog_add(&b, 300, TXNLOG_LOST);
    txnlog_add(&b, 50, 4); /* before the start: counts from 0 */
    assert_int_equal(txnlog_init(&m, 0), 0);
    assert_int_equal(txnlog_merge(&m, src, 2, 100), 0);
    assert_int_equal(m.n, 4);
    assert_int_equal(m.dropped, 1);
    assert_int_equal(m.rec[0].t_ns, 0);
    assert_int_equal(m.rec[1].t_ns, 0);
    assert_int_equal(m.rec[2].t_ns, 200);
    assert_true(m.rec[2].lat_ns == TXNLOG_LOST);
    assert_int_equal(m.rec[3].t_ns, 400);
    assert_int_equal(m.rec[3].lat_ns, 1);
    txnlog_fini(&a);
    txnlog_fini(&b);
    txnlog_fini(&m);
}

static void test_udp_server(void **state)
{
    struct rig r;
    char hello[CTL_DATA_HELLO_LEN] = {0};

    (void)state;
    rig_params(&r, true, 64, 48, 1);
    rig_up(&r, false, 0);
    memcpy(hello, ctl_data_magic, 4);
    assert_int_equal(send(r.peer, hello, sizeof(hello), 0), (ssize_t)sizeof(hello));
    put_seq(&r, 0x0102030405060708ULL, 64);
    put_seq(&r, 9, 64);
    assert_int_equal(event(&r, EPOLLIN), 0);
    assert_int_equal(txns(&r), 2); /* the repeated hello is no request */
    assert_int_equal(atomic_load(&r.f.bytes), 128);
    assert_int_equal(dgram_seq(&r, 48), 0x0102030405060708ULL); /* numbers echoed */
    assert_int_equal(dgram_seq(&r, 48), 9);
    rig_down(&r);
}

/* --busy-poll: waits spin until a yield finds the CPU held by other work for longer than
 * WORKER_SPIN_SHARED_NS; then they block for WORKER_SPIN_BACKOFF_NS, and spin again after. */
static void test_spin_backoff(void **state)
{
    struct rig r;
    struct step_clock c = {.now = T0, .step = 0};
    uint64_t back;

    (void)state;
    rig_params(&r, false, 64, 64, 1);
    rig_up(&r, true, 0);
    assert_false(worker_spins(&r.w)); /* no --busy-poll: waits block */
    r.p.busy_poll = true;
    r.w.fake_now = step_now;
    r.w.fake_ctx = &c;
    assert_true(worker_spins(&r.w));
    c.step = WORKER_SPIN_SHARED_NS; /* a yield that long: the CPU's own business */
    worker_spin_pause(&r.w);
    c.step = 0;
    assert_true(worker_spins(&r.w));
    c.step = WORKER_SPIN_SHARED_NS + 1000; /* longer: other work shares the CPU */
    worker_spin_pause(&r.w);
    back = c.now - c.step; /* when the yield returned */
    c.step = 0;
    assert_false(worker_spins(&r.w));
    c.now = back + WORKER_SPIN_BACKOFF_NS - 1;
    assert_false(worker_spins(&r.w));
    c.now = back + WORKER_SPIN_BACKOFF_NS;
    assert_true(worker_spins(&r.w));
    r.w.fake_now = fake_now;
    r.w.fake_ctx = &r.now;
    rig_down(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_latency_partial_reads),
        cmocka_unit_test(test_client_depth),
        cmocka_unit_test(test_client_partial_write),
        cmocka_unit_test(test_client_timeout_tcp),
        cmocka_unit_test(test_server_partial_requests),
        cmocka_unit_test(test_server_partial_write),
        cmocka_unit_test(test_server_alone),
        cmocka_unit_test(test_server_alone_spinning),
        cmocka_unit_test(test_client_alone_spinning),
        cmocka_unit_test(test_udp_client),
        cmocka_unit_test(test_udp_server),
        cmocka_unit_test(test_udp_open_loop_log),
        cmocka_unit_test(test_txnlog_merge),
        cmocka_unit_test(test_probe_kernel_stamps),
        cmocka_unit_test(test_spin_backoff),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
