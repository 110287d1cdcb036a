/* Unit tests for the UDP receiver's accounting (flow_udp.c): sequence numbers in order, with
 * gaps, reordered, duplicated, very late (older than the 1024-datagram window) and after huge
 * jumps, with loss computed by result_merge exactly as a real run does; and the RFC 3550
 * jitter estimator and one-way delay against hand-computed values; netrig's datagram format as
 * its codec writes and reads it. */
#include "test_util.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl.h"
#include "flow_kinds.h"
#include "flow_udp.h"
#include "params.h"
#include "result.h"

#define WINDOW 1024

/* A receiver flow's accounting state, set up by flow_init as a real UDP receiver is. */
struct rx_flow {
    struct flow f;
    struct params p;
};

static struct flow_udp_rx *rx_new(struct rx_flow *rf)
{
    params_defaults(&rf->p);
    rf->p.udp = true;
    rf->p.test = PARAMS_TEST_STREAM;
    rf->p.write_size = 1400;
    /* forward: the server receives flow 0 */
    assert_int_equal(flow_init(&rf->f, 0, flow_kind_for(&rf->p, false), &rf->p, false), 0);
    assert_false(rf->f.sender);
    assert_non_null(flow_udp_rx(&rf->f));
    assert_int_equal(flow_udp_rx(&rf->f)->received, 0);
    assert_int_equal(flow_udp_rx(&rf->f)->max_seq_plus1, 0);
    return flow_udp_rx(&rf->f);
}

static void rx_free(struct rx_flow *rf) { flow_fini(&rf->f); }

/* ---- loss the way result.c computes it ---- */

struct loss {
    uint64_t sent, received, lost, duplicates, out_of_order;
    double loss_pct;
};

/* Joins a forward UDP stream of one flow: the client sent `issued` sequence numbers (of which
 * `drops` the socket refused), the server's receiver counted rx. sender_reported = false
 * leaves the sender's side out (reverse test, server silent), so the receiver's highest
 * sequence number stands in for the count sent. */
static struct loss merge_loss(const struct flow_udp_rx *rx, uint64_t issued, uint64_t drops,
                              bool sender_reported)
{
    struct run_result r;
    struct side_result *snd_side, *rcv_side;
    struct side_flow *sf;
    struct loss l;

    memset(&r, 0, sizeof(r));
    params_defaults(&r.params);
    r.params.udp = true;
    r.params.test = PARAMS_TEST_STREAM;
    r.params.flows = 1;
    /* forward: client sends, server receives; reverse with the server silent otherwise */
    r.params.dir = sender_reported ? PARAMS_DIR_FORWARD : PARAMS_DIR_REVERSE;
    assert_int_equal(result_side_init(&r.local, 1, 2), 0);
    assert_int_equal(result_side_init(&r.remote, 1, 2), 0);
    r.local.valid = true;
    r.remote.valid = sender_reported;
    r.local.seconds = r.remote.seconds = 1.0;
    snd_side = sender_reported ? &r.local : &r.remote;
    rcv_side = sender_reported ? &r.remote : &r.local;

    sf = &snd_side->flows[0];
    sf->sender = true;
    sf->seconds = 1.0;
    sf->sent_pkts = issued - drops;
    sf->send_drops = drops;
    sf->bytes = (issued - drops) * 1400;

    sf = &rcv_side->flows[0];
    sf->sender = false;
    sf->seconds = 1.0;
    sf->bytes = rx->received * 1400;
    sf->has_udp_rx = true;
    sf->udp.received = rx->received;
    sf->udp.duplicates = rx->duplicates;
    sf->udp.out_of_order = rx->out_of_order;
    sf->udp.max_seq_plus1 = rx->max_seq_plus1;
    sf->udp.jitter_ns = rx->jitter_ns;

    assert_int_equal(result_merge(&r), 0);
    assert_true(r.summary.udp);
    l.sent = r.summary.u.sent;
    l.received = r.summary.u.received;
    l.lost = r.summary.u.lost;
    l.duplicates = r.summary.u.duplicates;
    l.out_of_order = r.summary.u.out_of_order;
    l.loss_pct = r.summary.u.loss_pct;
    /* per flow and totals agree with one flow */
    assert_int_equal(r.flows[0].udp_sent, l.sent);
    assert_int_equal(r.flows[0].udp_received, l.received);
    assert_int_equal(r.flows[0].udp_lost, l.lost);
    result_fini(&r);
    return l;
}

static void feed(struct flow_udp_rx *rx, const uint64_t *seq, size_t n)
{
    for (size_t i = 0; i < n; i++)
        flow_udp_account(rx, seq[i]);
}

static void feed_range(struct flow_udp_rx *rx, uint64_t from, uint64_t to /* exclusive */)
{
    for (uint64_t s = from; s < to; s++)
        flow_udp_account(rx, s);
}

/* ---- in order ---- */

static void test_in_order(void **state)
{
    struct rx_flow rf;
    struct flow_udp_rx *rx = rx_new(&rf);
    struct loss l;

    (void)state;
    feed_range(rx, 0, 5000);
    assert_int_equal(rx->received, 5000);
    assert_int_equal(rx->duplicates, 0);
    assert_int_equal(rx->out_of_order, 0);
    assert_int_equal(rx->max_seq_plus1, 5000);
    l = merge_loss(rx, 5000, 0, true);
    assert_int_equal(l.sent, 5000);
    assert_int_equal(l.received, 5000);
    assert_int_equal(l.lost, 0);
    assert_dbl_near(l.loss_pct, 0.0, 0);
    rx_free(&rf);
}

/* ---- gaps ---- */

static void test_gaps(void **state)
{
    struct rx_flow rf;
    struct flow_udp_rx *rx = rx_new(&rf);
    uint64_t dropped = 0;
    struct loss l;

    (void)state;
    /* 10000 sent: every 10th lost, a burst of 50 lost (2000..2049), and a gap longer than
     * the window (5000..6999) */
    for (uint64_t s = 0; s < 10000; s++) {
        bool lost = s % 10 == 3 || (s >= 2000 && s < 2050) || (s >= 5000 && s < 7000);
        if (lost) {
            dropped++;
            continue;
        }
        flow_udp_account(rx, s);
    }
    assert_int_equal(rx->received, 10000 - dropped);
    assert_int_equal(rx->duplicates, 0);
    assert_int_equal(rx->out_of_order, 0);
    assert_int_equal(rx->max_seq_plus1, 10000);
    l = merge_loss(rx, 10000, 0, true);
    assert_int_equal(l.sent, 10000);
    assert_int_equal(l.lost, dropped);
    assert_dbl_near(l.loss_pct, 100.0 * (double)dropped / 10000.0, 1e-9);

    /* datagrams the sender's socket refused took sequence numbers: they count as lost */
    l = merge_loss(rx, 10000, 700, true);
    assert_int_equal(l.sent, 10000);
    assert_int_equal(l.lost, dropped);

    /* a sender that did not report: the highest sequence number seen bounds what was sent */
    l = merge_loss(rx, 10000, 0, false);
    assert_int_equal(l.sent, 10000);
    assert_int_equal(l.lost, dropped);
    rx_free(&rf);
}

/* The first datagrams lost: the gap before the first one received is loss too. */
static void test_gap_at_start(void **state)
{
    struct rx_flow rf;
    struct flow_udp_rx *rx = rx_new(&rf);
    struct loss l;

    (void)state;
    feed_range(rx, 100, 1000);
    assert_int_equal(rx->received, 900);
    assert_int_equal(rx->out_of_order, 0);
    assert_int_equal(rx->max_seq_plus1, 1000);
    l = merge_loss(rx, 1000, 0, false);
    assert_int_equal(l.lost, 100);
    assert_dbl_near(l.loss_pct, 10.0, 1e-9);
    rx_free(&rf);
}

/* ---- reordered ---- */

static void test_reordered_pairs(void **state)
{
    struct rx_flow rf;
    struct flow_udp_rx *rx = rx_new(&rf);
    struct loss l;

    (void)state;
    /* 1 0 3 2 5 4 ...: every second datagram arrives after its successor */
    for (uint64_t s = 0; s < 4000; s += 2) {
        flow_udp_account(rx, s + 1);
        flow_udp_account(rx, s);
    }
    assert_int_equal(rx->received, 4000);
    assert_int_equal(rx->out_of_order, 2000);
    assert_int_equal(rx->duplicates, 0);
    assert_int_equal(rx->max_seq_plus1, 4000);
    l = merge_loss(rx, 4000, 0, true);
    assert_int_equal(l.lost, 0);
    assert_int_equal(l.out_of_order, 2000);
    assert_int_equal(l.duplicates, 0);
    rx_free(&rf);
}

static void test_reordered_late_fill(void **state)
{
    struct rx_flow rf;
    struct flow_udp_rx *rx = rx_new(&rf);
    /* 3 and 4 overtaken; 9 arrives 500 datagrams late (inside the window); 11 never */
    static const uint64_t first[] = {0, 1, 2, 5, 6, 3, 4, 7, 8, 10, 12};
    struct loss l;

    (void)state;
    feed(rx, first, sizeof(first) / sizeof(first[0]));
    assert_int_equal(rx->received, 11);
    assert_int_equal(rx->out_of_order, 2);
    feed_range(rx, 13, 513);
    flow_udp_account(rx, 9);
    assert_int_equal(rx->received, 512);
    assert_int_equal(rx->out_of_order, 3);
    assert_int_equal(rx->duplicates, 0);
    assert_int_equal(rx->max_seq_plus1, 513);
    l = merge_loss(rx, 513, 0, true);
    assert_int_equal(l.lost, 1); /* 11 */
    rx_free(&rf);
}

/* Random shuffles within small blocks: each datagram counted once, loss 0. */
static void test_reordered_shuffled(void **state)
{
    struct rx_flow rf;
    struct flow_udp_rx *rx = rx_new(&rf);
    uint64_t block[64], x = 88172645463325252ULL;
    struct loss l;

    (void)state;
    for (uint64_t base = 0; base < 64 * 200; base += 64) {
        for (int i = 0; i < 64; i++)
            block[i] = base + (uint64_t)i;
        for (int i = 63; i > 0; i--) { /* Fisher-Yates with xorshift64 */
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            int j = (int)(x % (uint64_t)(i + 1));
            uint64_t t = block[i];
            block[i] = block[j];
            block[j] = t;
        }
        feed(rx, block, 64);
    }
    assert_int_equal(rx->received, 64 * 200);
    assert_int_equal(rx->duplicates, 0);
    assert_true(rx->out_of_order > 0 && rx->out_of_order < 64 * 200);
    l = merge_loss(rx, 64 * 200, 0, true);
    assert_int_equal(l.lost, 0);
    rx_free(&rf);
}

/* ---- duplicated ---- */

static void test_duplicates_immediate(void **state)
{
    struct rx_flow rf;
    struct flow_udp_rx *rx = rx_new(&rf);
    struct loss l;

    (void)state;
    /* every datagram twice: 0 0 1 1 2 2 ... */
    for (uint64_t s = 0; s < 3000; s++) {
        flow_udp_account(rx, s);
        flow_udp_account(rx, s);
    }
    assert_int_equal(rx->received, 3000);
    assert_int_equal(rx->duplicates, 3000);
    assert_int_equal(rx->out_of_order, 0);
    l = merge_loss(rx, 3000, 0, true);
    assert_int_equal(l.received, 3000);
    assert_int_equal(l.duplicates, 3000);
    assert_int_equal(l.lost, 0);
    rx_free(&rf);
}

static void test_duplicates_later(void **state)
{
    struct rx_flow rf;
    struct flow_udp_rx *rx = rx_new(&rf);
    struct loss l;

    (void)state;
    feed_range(rx, 0, 2000);
    /* repeats of recent datagrams, up to 1000 behind the newest */
    flow_udp_account(rx, 1999);
    flow_udp_account(rx, 1500);
    flow_udp_account(rx, 1000);
    flow_udp_account(rx, 1500);
    assert_int_equal(rx->received, 2000);
    assert_int_equal(rx->duplicates, 4);
    assert_int_equal(rx->out_of_order, 0);
    /* a late one, then its duplicate: counted out of order once, then a duplicate */
    feed_range(rx, 2000, 2100);
    feed_range(rx, 2101, 2200);
    flow_udp_account(rx, 2100);
    flow_udp_account(rx, 2100);
    assert_int_equal(rx->received, 2200);
    assert_int_equal(rx->out_of_order, 1);
    assert_int_equal(rx->duplicates, 5);
    l = merge_loss(rx, 2200, 0, true);
    assert_int_equal(l.lost, 0);
    assert_int_equal(l.duplicates, 5);
    rx_free(&rf);
}

/* A duplicate of a datagram lost before: the first copy is a late arrival, not a duplicate;
 * and a sequence number the window forgot after a gap is not taken for a duplicate. */
static void test_duplicates_window_reuse(void **state)
{
    struct rx_flow rf;
    struct flow_udp_rx *rx = rx_new(&rf);

    (void)state;
    feed_range(rx, 0, 10);
    /* seq 10 + 1024 shares seq 10's bit: when it arrives the bit must be cleared first */
    flow_udp_account(rx, 10 + WINDOW);
    assert_int_equal(rx->received, 11);
    flow_udp_account(rx, 10 + WINDOW - 1); /* late, not a duplicate */
    assert_int_equal(rx->received, 12);
    assert_int_equal(rx->duplicates, 0);
    assert_int_equal(rx->out_of_order, 1);
    /* a jump of more than the window: everything before is forgotten, nothing misread */
    flow_udp_account(rx, 10 + 5 * WINDOW);
    flow_udp_account(rx, 10 + 5 * WINDOW - 1);
    flow_udp_account(rx, 10 + 4 * WINDOW + 1);
    assert_int_equal(rx->duplicates, 0);
    assert_int_equal(rx->received, 15);
    assert_int_equal(rx->out_of_order, 3);
    rx_free(&rf);

    /* a jump shorter than the window: the bits of the numbers skipped are cleared one by
     * one, so a skipped number that shares a bit with an old one is not a duplicate */
    rx = rx_new(&rf);
    feed_range(rx, 0, 100);
    flow_udp_account(rx, 1050); /* skips 100..1049; 1030 shares seq 6's bit */
    flow_udp_account(rx, 1030);
    assert_int_equal(rx->duplicates, 0);
    assert_int_equal(rx->out_of_order, 1);
    assert_int_equal(rx->received, 102);
    flow_udp_account(rx, 1030); /* now it is one */
    assert_int_equal(rx->duplicates, 1);
    assert_int_equal(rx->received, 102);
    rx_free(&rf);
}

/* A duplicate exactly 1023 datagrams behind the newest is inside the 1024-datagram window
 * that flow.h promises, and must not be counted as received twice. */
static void test_duplicate_at_window_edge(void **state)
{
    struct rx_flow rf;
    struct flow_udp_rx *rx = rx_new(&rf);

    (void)state;
    feed_range(rx, 0, WINDOW); /* 0 .. 1023: newest 1023, window 0 .. 1023 */
    flow_udp_account(rx, 1);   /* 1022 behind */
    assert_int_equal(rx->duplicates, 1);
    flow_udp_account(rx, 0); /* 1023 behind: still one of the last 1024 */
    uint64_t dups = rx->duplicates, received = rx->received;
    rx_free(&rf);
    if (dups != 2 || received != WINDOW)
        fail_msg("duplicate of seq 0 with seq 0..1023 received: duplicates %llu (want 2), "
                 "received %llu (want %u) - the window holds only 1023 datagrams",
                 (unsigned long long)dups, (unsigned long long)received, WINDOW);
}

/* ---- very late ---- */

static void test_very_late(void **state)
{
    struct rx_flow rf;
    struct flow_udp_rx *rx = rx_new(&rf);
    struct loss l;

    (void)state;
    /* 0..4999 without 5 and 17; they arrive after 3000 and 4999 more: older than the window */
    for (uint64_t s = 0; s < 5000; s++)
        if (s != 5 && s != 17)
            flow_udp_account(rx, s);
    assert_int_equal(rx->received, 4998);
    flow_udp_account(rx, 5);
    flow_udp_account(rx, 17);
    /* a late datagram is received (not lost) and out of order */
    assert_int_equal(rx->received, 5000);
    assert_int_equal(rx->out_of_order, 2);
    assert_int_equal(rx->duplicates, 0);
    assert_int_equal(rx->max_seq_plus1, 5000);
    l = merge_loss(rx, 5000, 0, true);
    assert_int_equal(l.lost, 0);

    /* a repeat older than the window cannot be told from a late datagram; whichever way it
     * is counted, it is counted once, and loss never goes negative */
    flow_udp_account(rx, 100);
    assert_int_equal(rx->received + rx->duplicates, 5001);
    l = merge_loss(rx, 5000, 0, true);
    assert_int_equal(l.lost, 0);
    assert_true(l.loss_pct >= 0 && l.loss_pct <= 0);
    rx_free(&rf);
}

/* ---- huge jumps ---- */

static void test_huge_jump(void **state)
{
    struct rx_flow rf;
    struct flow_udp_rx *rx = rx_new(&rf);
    const uint64_t far = 1000000000000ULL;
    struct loss l;

    (void)state;
    feed_range(rx, 0, 100);
    flow_udp_account(rx, far); /* a stray datagram far ahead */
    assert_int_equal(rx->received, 101);
    assert_int_equal(rx->max_seq_plus1, far + 1);
    assert_int_equal(rx->out_of_order, 0);
    /* the stream goes on: those are now far behind, counted once each as late */
    feed_range(rx, 100, 200);
    assert_int_equal(rx->received, 201);
    assert_int_equal(rx->duplicates, 0);
    assert_int_equal(rx->out_of_order, 100);
    /* with the sender's count, loss stays bounded by what was sent */
    l = merge_loss(rx, 200, 0, true);
    assert_int_equal(l.sent, 200);
    assert_int_equal(l.lost, 0);
    /* further jumps near the top of the range */
    flow_udp_account(rx, 1ULL << 62);
    flow_udp_account(rx, (1ULL << 62) + 5000);
    flow_udp_account(rx, (1ULL << 62) + 4999);
    flow_udp_account(rx, (1ULL << 62) + 4999);
    assert_int_equal(rx->max_seq_plus1, (1ULL << 62) + 5001);
    assert_int_equal(rx->received, 204);
    assert_int_equal(rx->duplicates, 1);
    rx_free(&rf);
}

/* Runs fn in a child with a 3 s alarm: a call that never returns fails the test instead of
 * hanging it. Returns 0 when fn returned, else prints why and returns 1. */
static int run_bounded(const char *desc, void (*fn)(void))
{
    int status = 0;
    pid_t pid = fork();

    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(3);
        fn();
        _exit(0);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status)) {
        print_error("%s: did not return within 3 s (killed by signal %d)\n", desc,
                    WTERMSIG(status));
        return 1;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        print_error("%s: wrong counts (child exit status %d)\n", desc, WEXITSTATUS(status));
        return 1;
    }
    return 0;
}

static void account_max_first(void)
{
    struct rx_flow rf;
    struct flow_udp_rx *rx = rx_new(&rf);

    flow_udp_account(rx, UINT64_MAX);      /* the first datagram carries the largest number */
    if (rx->received + rx->duplicates > 1) /* counted once, or refused as impossible */
        _exit(2);
    rx_free(&rf);
}

static void account_max_after_near(void)
{
    struct rx_flow rf;
    struct flow_udp_rx *rx = rx_new(&rf);

    flow_udp_account(rx, UINT64_MAX - 10);
    flow_udp_account(rx, UINT64_MAX);
    flow_udp_account(rx, 3);
    if (rx->received + rx->duplicates > 3 || rx->received < 2)
        _exit(2);
    rx_free(&rf);
}

/* A datagram's sequence number comes off the network: the largest one must not hang the
 * receiver's worker. */
static void test_hostile_max_sequence(void **state)
{
    int bad = 0;

    (void)state;
    bad += run_bounded("flow_udp_account(rx, UINT64_MAX) on a fresh receiver", account_max_first);
    bad += run_bounded("flow_udp_account(rx, UINT64_MAX) after UINT64_MAX - 10",
                       account_max_after_near);
    if (bad)
        fail_msg("%d of 2 hostile sequence numbers hung or miscounted the receiver", bad);
}

/* ---- jitter (RFC 3550) and one-way delay ---- */

static void test_jitter_hand_computed(void **state)
{
    struct rx_flow rf;
    struct flow_udp_rx *rx = rx_new(&rf);
    /* realistic CLOCK_REALTIME stamps; datagrams 1 ms apart; transits 100, 150, 120, 300,
     * 100, 100 ns */
    const uint64_t base = 1700000000000000000ULL;
    static const uint64_t transit[] = {100, 150, 120, 300, 100, 100};
    /* RFC 3550 6.4.1: D = transit_i - transit_(i-1); J += (|D| - J) / 16, J starts at 0.
     * |D| = 50, 30, 180, 200, 0:
     *   J1 = 50/16                        = 3.125
     *   J2 = 3.125 + (30 - 3.125)/16      = 4.8046875
     *   J3 = 4.8046875 + (180 - J2)/16    = 15.75439453125
     *   J4 = J3 + (200 - J3)/16           = 27.269744873046875
     *   J5 = J4 + (0 - J4)/16             = 25.5653858184814453125   (all exact in binary) */
    static const double want_j[] = {
        0, 3.125, 4.8046875, 15.75439453125, 27.269744873046875, 25.5653858184814453125};

    (void)state;
    for (size_t i = 0; i < 6; i++) {
        uint64_t send = base + i * 1000000;
        flow_udp_timing(rx, send, send + transit[i]);
        assert_dbl_near(rx->jitter_ns, want_j[i], 1e-9);
    }
    assert_int_equal(rx->owd_min_ns, 100);
    assert_int_equal(rx->owd_max_ns, 300);
    assert_dbl_near(rx->owd_sum_ns, 870.0, 0);
    rx_free(&rf);
}

static void test_jitter_first_sample_and_constant(void **state)
{
    struct rx_flow rf;
    struct flow_udp_rx *rx = rx_new(&rf);
    const uint64_t base = 1700000000000000000ULL;

    (void)state;
    /* one datagram: no difference yet, jitter 0 */
    flow_udp_timing(rx, base, base + 40000);
    assert_dbl_near(rx->jitter_ns, 0.0, 0);
    assert_int_equal(rx->owd_min_ns, 40000);
    assert_int_equal(rx->owd_max_ns, 40000);
    /* a constant transit (any send spacing): jitter stays 0 */
    for (int i = 1; i < 100; i++)
        flow_udp_timing(rx, base + (uint64_t)i * 777777, base + (uint64_t)i * 777777 + 40000);
    assert_dbl_near(rx->jitter_ns, 0.0, 0);
    assert_dbl_near(rx->owd_sum_ns, 100 * 40000.0, 0);
    rx_free(&rf);
}

static void test_jitter_converges(void **state)
{
    struct rx_flow rf;
    struct flow_udp_rx *rx = rx_new(&rf);
    const uint64_t base = 1700000000000000000ULL;

    (void)state;
    /* transits alternate 10 us and 12 us: |D| = 2000 ns every time, J -> 2000 */
    for (int i = 0; i < 2000; i++) {
        uint64_t send = base + (uint64_t)i * 100000;
        flow_udp_timing(rx, send, send + (i % 2 ? 12000 : 10000));
    }
    assert_dbl_near(rx->jitter_ns, 2000.0, 1e-6);
    assert_int_equal(rx->owd_min_ns, 10000);
    assert_int_equal(rx->owd_max_ns, 12000);
    assert_dbl_near(rx->owd_sum_ns, 1000 * 10000.0 + 1000 * 12000.0, 0);
    rx_free(&rf);
}

/* Clocks that disagree (receiver behind): the one-way delay is floored at 0, but jitter
 * uses the signed transit, so a constant negative offset still means no jitter. */
static void test_jitter_negative_transit(void **state)
{
    struct rx_flow rf;
    struct flow_udp_rx *rx = rx_new(&rf);
    const uint64_t base = 1700000000000000000ULL;

    (void)state;
    flow_udp_timing(rx, base, base - 50);          /* transit -50 */
    flow_udp_timing(rx, base + 1000, base + 1050); /* transit +50: |D| = 100 */
    assert_dbl_near(rx->jitter_ns, 100.0 / 16, 1e-12);
    assert_int_equal(rx->owd_min_ns, 0);
    assert_int_equal(rx->owd_max_ns, 50);
    assert_dbl_near(rx->owd_sum_ns, 50.0, 0);
    flow_udp_timing(rx, base + 2000, base + 2000 - 5000); /* transit -5000: |D| = 5050 */
    assert_dbl_near(rx->jitter_ns, 6.25 + (5050 - 6.25) / 16, 1e-9);
    assert_int_equal(rx->owd_min_ns, 0);
    assert_int_equal(rx->owd_max_ns, 50);
    rx_free(&rf);
}

/* netrig's own datagram format (the codec flow_udp.c's loops run): sequence number and send
 * time big-endian, numbered from 0; a repeated hello and short datagrams are no data. */
static void test_own_codec(void **state)
{
    const struct flow_udp_codec *c = &flow_udp_codec;
    uint8_t buf[2 * 32];
    uint64_t ns, seq;

    (void)state;
    assert_int_equal(c->first_seq, 0);
    memset(buf, 0x5a, sizeof(buf));
    c->stamp(buf, 32, 2, 0x0102030405060708ULL, 0x1112131415161718ULL);
    assert_memory_equal(buf, "\x01\x02\x03\x04\x05\x06\x07\x08\x11\x12\x13\x14\x15\x16\x17\x18",
                        16);
    assert_int_equal(buf[16], 0x5a);
    assert_int_equal(c->parse(buf + 32, 32, &ns, &seq), 0);
    assert_int_equal(seq, 0x0102030405060709ULL);
    assert_int_equal(ns, 0x1112131415161718ULL);
    assert_int_equal(c->parse(buf, 15, &ns, &seq), -EINVAL);
    memcpy(buf, ctl_data_magic, 4);
    assert_int_equal(c->parse(buf, 32, &ns, &seq), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order),
        cmocka_unit_test(test_gaps),
        cmocka_unit_test(test_gap_at_start),
        cmocka_unit_test(test_reordered_pairs),
        cmocka_unit_test(test_reordered_late_fill),
        cmocka_unit_test(test_reordered_shuffled),
        cmocka_unit_test(test_duplicates_immediate),
        cmocka_unit_test(test_duplicates_later),
        cmocka_unit_test(test_duplicates_window_reuse),
        cmocka_unit_test(test_duplicate_at_window_edge),
        cmocka_unit_test(test_very_late),
        cmocka_unit_test(test_huge_jump),
        cmocka_unit_test(test_hostile_max_sequence),
        cmocka_unit_test(test_jitter_hand_computed),
        cmocka_unit_test(test_jitter_first_sample_and_constant),
        cmocka_unit_test(test_jitter_converges),
        cmocka_unit_test(test_jitter_negative_transit),
        cmocka_unit_test(test_own_codec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
