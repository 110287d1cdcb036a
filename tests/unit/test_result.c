/* Unit tests for result.c: Jain's index, side storage, and merging the client's and the
 * server's sides into per-flow and total figures. */
#include "test_util.h"

#include <errno.h>
#include <stdlib.h>

#include "result.h"

/* ---- Jain's fairness index ---- */

static void test_jain(void **state)
{
    static const double equal[] = {5e9, 5e9, 5e9, 5e9};
    static const double one[] = {1, 0, 0, 0};
    static const double ramp[] = {1, 2, 3, 4};
    static const double zeros[] = {0, 0, 0};
    static const double single[] = {7.5e9};

    (void)state;
    assert_dbl_near(result_jain(equal, 4), 1.0, 1e-12);
    assert_dbl_near(result_jain(one, 4), 0.25, 1e-12);
    assert_dbl_near(result_jain(ramp, 4), 100.0 / (4 * 30.0), 1e-12);
    assert_dbl_near(result_jain(NULL, 0), 1.0, 0);
    assert_dbl_near(result_jain(zeros, 3), 1.0, 0);
    assert_dbl_near(result_jain(single, 1), 1.0, 1e-12);
}

/* ---- side storage ---- */

static void test_side_init_capacity(void **state)
{
    struct side_result s;

    (void)state;
    assert_int_equal(result_side_init(&s, 3, 4), 0);
    assert_int_equal(s.nflows, 3);
    assert_int_equal(s.cap_intervals, 4);
    assert_int_equal(s.nintervals, 0);
    assert_false(s.valid);
    for (uint32_t i = 0; i < 3; i++) {
        assert_int_equal(s.flows[i].id, i);
        assert_int_equal(s.flows[i].cpu, -1);
        assert_int_equal(s.flows[i].bytes, 0);
    }
    for (uint32_t i = 0; i < 4; i++) {
        struct interval *iv = result_side_next_interval(&s);
        assert_ptr_equal(iv, &s.intervals[i]);
        assert_non_null(iv->flows);
        assert_ptr_equal(iv->flows, s.cells + (size_t)i * 3);
        iv->flows[2].bytes = 100 + i; /* every cell is writable */
    }
    assert_int_equal(s.nintervals, 4);
    assert_null(result_side_next_interval(&s));
    assert_null(result_side_next_interval(&s));
    assert_int_equal(s.nintervals, 4);
    assert_int_equal(s.cells[11].bytes, 103);
    result_side_fini(&s);
    assert_null(s.flows);
    assert_null(s.intervals);
    assert_int_equal(s.nflows, 0);
}

static void test_side_init_cell_limit(void **state)
{
    struct side_result s;

    (void)state;
    /* exactly RESULT_MAX_INTERVAL_CELLS: per-flow cells kept */
    assert_int_equal(result_side_init(&s, 1024, 1024), 0);
    assert_non_null(s.cells);
    assert_non_null(s.intervals[1023].flows);
    result_side_fini(&s);
    /* one more interval's worth: only totals */
    assert_int_equal(result_side_init(&s, 1024, 1025), 0);
    assert_null(s.cells);
    assert_null(s.intervals[0].flows);
    assert_non_null(result_side_next_interval(&s));
    result_side_fini(&s);
}

static void test_side_init_empty(void **state)
{
    struct side_result s;

    (void)state;
    assert_int_equal(result_side_init(&s, 0, 0), 0);
    assert_null(result_side_next_interval(&s));
    assert_null(s.cells);
    result_side_fini(&s);
}

/* ---- merging ---- */

static void set_sender(struct side_flow *f, uint64_t bytes, double seconds, uint32_t retrans,
                       uint32_t rtt_us, int cpu)
{
    f->sender = true;
    f->bytes = bytes;
    f->seconds = seconds;
    f->cpu = cpu;
    f->ti.valid = true;
    f->ti.total_retrans = retrans;
    f->ti.rtt_us = rtt_us;
    f->ti.min_rtt_us = rtt_us / 4;
    f->ti.snd_cwnd = 10 * rtt_us;
    f->ti.snd_wnd = 65536 + rtt_us;
    f->ti.delivery_rate_bps = 1000ULL * rtt_us;
    f->ti.busy_us = 9000000;
    f->ti.rwnd_limited_us = 2000 + rtt_us;
    f->ti.sndbuf_limited_us = 3000 + rtt_us;
}

static void set_receiver(struct side_flow *f, uint64_t bytes, double seconds, int cpu)
{
    f->sender = false;
    f->bytes = bytes;
    f->seconds = seconds;
    f->cpu = cpu;
    /* the receiver's own TCP_INFO is about its ACKs: merge must not take it */
    f->ti.valid = true;
    f->ti.total_retrans = 999;
    f->ti.rtt_us = 999;
}

static void set_cpu(struct cpu_usage *c, double busy_cores)
{
    memset(c, 0, sizeof(*c));
    c->valid = 1;
    c->ncpu = 2;
    c->busy_cores = busy_cores;
    c->busy_pct = busy_cores * 50;
}

/* run_result with both sides allocated for dir and flows per direction */
static struct run_result *new_run(enum params_dir dir, uint32_t flows)
{
    struct run_result *r = calloc(1, sizeof(*r));
    uint32_t n;

    assert_non_null(r);
    params_defaults(&r->params);
    r->params.dir = dir;
    r->params.flows = flows;
    n = params_total_flows(&r->params);
    assert_int_equal(result_side_init(&r->local, n, 2), 0);
    assert_int_equal(result_side_init(&r->remote, n, 2), 0);
    r->local.valid = true;
    r->remote.valid = true;
    r->local.seconds = r->remote.seconds = 10.0;
    return r;
}

static void free_run(struct run_result *r)
{
    result_fini(r);
    assert_null(r->flows);
    assert_int_equal(r->nflows, 0);
    free(r);
}

static void test_merge_forward(void **state)
{
    struct run_result *r = new_run(PARAMS_DIR_FORWARD, 2);
    const struct flow_summary *f;

    (void)state;
    /* client sends; server received 1.2e9 and 2.4e9 bytes over 9.6 s: 1 and 2 Gbit/s */
    set_sender(&r->local.flows[0], 1250000000ULL, 10.0, 12, 150, 0);
    set_sender(&r->local.flows[1], 2500000000ULL, 10.0, 3, 200, 1);
    set_receiver(&r->remote.flows[0], 1200000000ULL, 9.6, 4);
    set_receiver(&r->remote.flows[1], 2400000000ULL, 9.6, 5);
    set_cpu(&r->local.cpu, 0.6);
    set_cpu(&r->remote.cpu, 0.9);

    assert_int_equal(result_merge(r), 0);
    assert_int_equal(r->nflows, 2);
    f = &r->flows[0];
    assert_int_equal(f->id, 0);
    assert_true(f->client_sends);
    assert_int_equal(f->bytes, 1200000000ULL);
    assert_int_equal(f->sent_bytes, 1250000000ULL);
    assert_dbl_near(f->throughput_bps, 1e9, 1e-3);
    assert_dbl_near(f->sender_bps, 1e9, 1e-3);
    assert_true(f->has_sender_tcpinfo);
    assert_int_equal(f->retransmits, 12);
    assert_int_equal(f->rtt_us, 150);
    assert_int_equal(f->min_rtt_us, 37);
    assert_int_equal(f->cwnd, 1500);
    assert_int_equal(f->snd_wnd, 65686);
    assert_int_equal(f->delivery_rate_bps, 150000);
    assert_int_equal(f->busy_us, 9000000);
    assert_int_equal(f->rwnd_limited_us, 2150);
    assert_int_equal(f->sndbuf_limited_us, 3150);
    assert_int_equal(f->client_cpu, 0);
    assert_int_equal(f->server_cpu, 4);
    f = &r->flows[1];
    assert_int_equal(f->id, 1);
    assert_int_equal(f->bytes, 2400000000ULL);
    assert_dbl_near(f->throughput_bps, 2e9, 1e-3);
    assert_dbl_near(f->sender_bps, 2e9, 1e-3);
    assert_int_equal(f->retransmits, 3);
    assert_int_equal(f->rtt_us, 200);
    assert_int_equal(f->client_cpu, 1);
    assert_int_equal(f->server_cpu, 5);

    assert_int_equal(r->summary.bytes, 3600000000ULL);
    assert_int_equal(r->summary.sent_bytes, 3750000000ULL);
    assert_dbl_near(r->summary.throughput_bps, 3e9, 1e-3);
    assert_dbl_near(r->summary.sender_bps, 3e9, 1e-3);
    assert_dbl_near(r->summary.up_bps, 3e9, 1e-3);
    assert_dbl_near(r->summary.down_bps, 0, 0);
    assert_int_equal(r->summary.retransmits, 15);
    assert_dbl_near(r->summary.jain_index, 0.9, 1e-12);           /* (1+2)^2 / (2 (1+4)) */
    assert_dbl_near(r->summary.local_cores_per_10g, 2.0, 1e-12);  /* 0.6 cores / 0.3 */
    assert_dbl_near(r->summary.remote_cores_per_10g, 3.0, 1e-12); /* 0.9 cores / 0.3 */
    /* busy cores x 1e9 ns over bytes per second: 0.6e9 / 3.75e8 and 0.9e9 / 3.75e8 */
    assert_dbl_near(r->summary.local_cpu_ns_per_byte, 1.6, 1e-12);
    assert_dbl_near(r->summary.remote_cpu_ns_per_byte, 2.4, 1e-12);
    free_run(r);
}

/* The cost on each end's basis: netrig's own process when the host is shared; and when both
 * ends ran in one process (the built-in loopback server) each end's worker threads, so the
 * process is not counted twice. */
static void test_merge_own_cost(void **state)
{
    struct run_result *r = new_run(PARAMS_DIR_FORWARD, 1);
    struct cpu_usage *c[2];
    (void)state;

    c[0] = &r->local.cpu, c[1] = &r->remote.cpu;
    set_sender(&r->local.flows[0], 1250000000ULL, 10.0, 0, 150, 0);
    set_receiver(&r->remote.flows[0], 1250000000ULL, 10.0, 4); /* 1 Gbit/s */
    for (int i = 0; i < 2; i++) {
        set_cpu(c[i], 0.9);
        c[i]->ncpu = 2;
        c[i]->busy_cores = 1.8;
        c[i]->own_valid = c[i]->own_basis = true;
        c[i]->seconds = 10;
        c[i]->own_user_s = 1, c[i]->own_system_s = 4;             /* 0.5 cores */
        c[i]->threads_user_pct = 1, c[i]->threads_system_pct = 9; /* 0.2 cores */
        c[i]->own_pid = 100 + i;
    }
    snprintf(r->local.boot_id, sizeof(r->local.boot_id), "b1");
    snprintf(r->remote.boot_id, sizeof(r->remote.boot_id), "b1");
    assert_int_equal(result_merge(r), 0);
    assert_dbl_near(r->summary.local_cores_per_10g, 5.0, 1e-9); /* 0.5 cores per 1 Gbit/s */
    assert_dbl_near(r->summary.local_own_cores_per_10g, 5.0, 1e-9);
    assert_dbl_near(r->summary.local_cpu_ns_per_byte, 4.0, 1e-9);
    /* a machine basis counts the busy cores */
    c[1]->own_basis = false;
    assert_int_equal(result_merge(r), 0);
    assert_dbl_near(r->summary.remote_cores_per_10g, 18.0, 1e-9);
    assert_dbl_near(r->summary.remote_own_cores_per_10g, 5.0, 1e-9);
    /* one process for both ends: each end's worker threads */
    c[1]->own_basis = true;
    c[1]->own_pid = 100;
    assert_int_equal(result_merge(r), 0);
    assert_true(c[0]->own_threads && c[1]->own_threads);
    assert_dbl_near(r->summary.local_cores_per_10g, 2.0, 1e-9);
    assert_dbl_near(r->summary.remote_own_cores_per_10g, 2.0, 1e-9);
    free_run(r);
}

static void test_merge_reverse(void **state)
{
    struct run_result *r = new_run(PARAMS_DIR_REVERSE, 2);
    const struct flow_summary *f;

    (void)state;
    /* server sends; the client received 500 MB and 1500 MB over 8 s: 0.5 and 1.5 Gbit/s */
    set_sender(&r->remote.flows[0], 600000000ULL, 10.0, 7, 300, 2);
    set_sender(&r->remote.flows[1], 1600000000ULL, 10.0, 1, 310, 3);
    set_receiver(&r->local.flows[0], 500000000ULL, 8.0, 0);
    set_receiver(&r->local.flows[1], 1500000000ULL, 8.0, 1);

    assert_int_equal(result_merge(r), 0);
    assert_int_equal(r->nflows, 2);
    f = &r->flows[0];
    assert_false(f->client_sends);
    assert_int_equal(f->bytes, 500000000ULL);
    assert_int_equal(f->sent_bytes, 600000000ULL);
    assert_dbl_near(f->throughput_bps, 0.5e9, 1e-3);
    assert_dbl_near(f->sender_bps, 0.48e9, 1e-3);
    assert_int_equal(f->retransmits, 7);
    assert_int_equal(f->rtt_us, 300);
    assert_int_equal(f->client_cpu, 0);
    assert_int_equal(f->server_cpu, 2);
    f = &r->flows[1];
    assert_dbl_near(f->throughput_bps, 1.5e9, 1e-3);
    assert_int_equal(f->retransmits, 1);
    assert_int_equal(f->rtt_us, 310);

    assert_int_equal(r->summary.bytes, 2000000000ULL);
    assert_dbl_near(r->summary.throughput_bps, 2e9, 1e-3);
    assert_dbl_near(r->summary.up_bps, 0, 0);
    assert_dbl_near(r->summary.down_bps, 2e9, 1e-3);
    assert_int_equal(r->summary.retransmits, 8);
    assert_dbl_near(r->summary.jain_index, 4.0 / (2 * 2.5), 1e-12); /* (0.5+1.5)^2/(2*2.5) */
    /* CPU figures not valid: no cost per 10G */
    assert_dbl_near(r->summary.local_cores_per_10g, 0, 0);
    assert_dbl_near(r->summary.remote_cores_per_10g, 0, 0);
    assert_dbl_near(r->summary.local_cpu_ns_per_byte, 0, 0);
    assert_dbl_near(r->summary.remote_cpu_ns_per_byte, 0, 0);
    free_run(r);
}

static void test_merge_bidir(void **state)
{
    struct run_result *r = new_run(PARAMS_DIR_BIDIR, 1);

    (void)state;
    assert_int_equal(r->local.nflows, 2);
    /* flow 0: client → server at 4 Gbit/s; flow 1: server → client at 1 Gbit/s */
    set_sender(&r->local.flows[0], 5000000000ULL, 10.0, 20, 100, 0);
    set_receiver(&r->remote.flows[0], 5000000000ULL, 10.0, 2);
    set_sender(&r->remote.flows[1], 1250000000ULL, 10.0, 4, 120, 3);
    set_receiver(&r->local.flows[1], 1250000000ULL, 10.0, 1);
    set_cpu(&r->local.cpu, 1.0);

    assert_int_equal(result_merge(r), 0);
    assert_int_equal(r->nflows, 2);
    assert_true(r->flows[0].client_sends);
    assert_false(r->flows[1].client_sends);
    assert_dbl_near(r->flows[0].throughput_bps, 4e9, 1e-3);
    assert_dbl_near(r->flows[1].throughput_bps, 1e9, 1e-3);
    assert_int_equal(r->flows[0].retransmits, 20);
    assert_int_equal(r->flows[0].rtt_us, 100);
    assert_int_equal(r->flows[1].retransmits, 4);
    assert_int_equal(r->flows[1].rtt_us, 120);
    assert_int_equal(r->flows[0].client_cpu, 0);
    assert_int_equal(r->flows[0].server_cpu, 2);
    assert_int_equal(r->flows[1].client_cpu, 1);
    assert_int_equal(r->flows[1].server_cpu, 3);
    assert_dbl_near(r->summary.up_bps, 4e9, 1e-3);
    assert_dbl_near(r->summary.down_bps, 1e9, 1e-3);
    assert_dbl_near(r->summary.throughput_bps, 5e9, 1e-3);
    assert_int_equal(r->summary.retransmits, 24);
    assert_dbl_near(r->summary.jain_index, 25.0 / (2 * 17.0), 1e-12);
    assert_dbl_near(r->summary.local_cores_per_10g, 2.0, 1e-12); /* 1 core / 0.5 */
    free_run(r);
}

static void test_merge_remote_invalid_forward(void **state)
{
    struct run_result *r = new_run(PARAMS_DIR_FORWARD, 2);

    (void)state;
    set_sender(&r->local.flows[0], 1250000000ULL, 10.0, 12, 150, 0);
    set_sender(&r->local.flows[1], 250000000ULL, 10.0, 0, 90, 1);
    /* the server died: whatever its side holds is not to be used */
    set_receiver(&r->remote.flows[0], 1, 1.0, 4);
    set_receiver(&r->remote.flows[1], 1, 1.0, 5);
    set_cpu(&r->remote.cpu, 1.0);
    r->remote.valid = false;

    assert_int_equal(result_merge(r), 0);
    assert_int_equal(r->flows[0].bytes, 1250000000ULL);
    assert_int_equal(r->flows[0].sent_bytes, 1250000000ULL);
    assert_dbl_near(r->flows[0].throughput_bps, 1e9, 1e-3);
    assert_dbl_near(r->flows[1].throughput_bps, 0.2e9, 1e-3);
    assert_int_equal(r->flows[0].retransmits, 12);
    assert_int_equal(r->flows[0].server_cpu, -1);
    assert_int_equal(r->flows[1].server_cpu, -1);
    assert_int_equal(r->summary.bytes, 1500000000ULL);
    assert_dbl_near(r->summary.throughput_bps, 1.2e9, 1e-3);
    assert_dbl_near(r->summary.up_bps, 1.2e9, 1e-3);
    assert_int_equal(r->summary.retransmits, 12);
    free_run(r);
}

static void test_merge_remote_invalid_reverse(void **state)
{
    struct run_result *r = new_run(PARAMS_DIR_REVERSE, 1);

    (void)state;
    set_receiver(&r->local.flows[0], 1000000000ULL, 8.0, 0);
    set_sender(&r->remote.flows[0], 9, 1.0, 5, 5, 1);
    r->remote.valid = false;

    assert_int_equal(result_merge(r), 0);
    /* the client received: bytes stand; the sender's figures are unknown */
    assert_int_equal(r->flows[0].bytes, 1000000000ULL);
    assert_dbl_near(r->flows[0].throughput_bps, 1e9, 1e-3);
    assert_int_equal(r->flows[0].sent_bytes, 0);
    assert_false(r->flows[0].has_sender_tcpinfo);
    assert_int_equal(r->flows[0].retransmits, 0);
    assert_int_equal(r->flows[0].rtt_us, 0);
    assert_int_equal(r->flows[0].server_cpu, -1);
    free_run(r);
}

static void test_merge_remote_missing_one_flow(void **state)
{
    struct run_result *r = new_run(PARAMS_DIR_FORWARD, 2);

    (void)state;
    set_sender(&r->local.flows[0], 1250000000ULL, 10.0, 1, 100, -1);
    set_sender(&r->local.flows[1], 1250000000ULL, 10.0, 2, 100, -1);
    set_receiver(&r->remote.flows[0], 1000000000ULL, 10.0, -1);
    r->remote.flows[1].id = UINT32_MAX; /* as result_json_side_parse marks unreported flows */

    assert_int_equal(result_merge(r), 0);
    assert_int_equal(r->flows[0].bytes, 1000000000ULL);
    assert_dbl_near(r->flows[0].throughput_bps, 0.8e9, 1e-3);
    assert_int_equal(r->flows[1].bytes, 1250000000ULL); /* sender's figure */
    assert_dbl_near(r->flows[1].throughput_bps, 1e9, 1e-3);
    assert_int_equal(r->summary.retransmits, 3);
    free_run(r);
}

static void test_merge_no_tcpinfo_and_zero_seconds(void **state)
{
    struct run_result *r = new_run(PARAMS_DIR_FORWARD, 1);

    (void)state;
    set_sender(&r->local.flows[0], 1000, 0.0, 50, 50, 0);
    r->local.flows[0].ti.valid = false;
    set_receiver(&r->remote.flows[0], 1000, 0.0, 0);

    assert_int_equal(result_merge(r), 0);
    assert_false(r->flows[0].has_sender_tcpinfo);
    assert_int_equal(r->flows[0].retransmits, 0);
    assert_int_equal(r->flows[0].bytes, 1000);
    assert_dbl_near(r->flows[0].throughput_bps, 0, 0); /* no time, no rate (not inf/nan) */
    assert_dbl_near(r->flows[0].sender_bps, 0, 0);
    assert_dbl_near(r->summary.jain_index, 1.0, 0);
    /* merging again replaces the figures rather than adding to them */
    assert_int_equal(result_merge(r), 0);
    assert_int_equal(r->summary.bytes, 1000);
    free_run(r);
}

/* ---- warnings ---- */

static bool has_warning(const struct run_result *r, const char *part)
{
    for (uint32_t i = 0; i < r->nwarnings; i++)
        if (strstr(r->warnings[i], part))
            return true;
    return false;
}

/* UDP senders below 95 % of -b per flow are named with both rates; at or above, nothing */
static void test_warn_udp_rate(void **state)
{
    struct run_result *r = new_run(PARAMS_DIR_FORWARD, 2);

    (void)state;
    r->params.udp = true;
    r->params.udp_rate_bps = 100000000; /* 100 Mbit/s per flow: 200 asked */
    /* 1e8 bytes over 10 s = 80 Mbit/s per flow: 160 of 200, 80 % */
    set_sender(&r->local.flows[0], 100000000ULL, 10.0, 0, 0, -1);
    set_sender(&r->local.flows[1], 100000000ULL, 10.0, 0, 0, -1);
    set_receiver(&r->remote.flows[0], 100000000ULL, 10.0, -1);
    set_receiver(&r->remote.flows[1], 100000000ULL, 10.0, -1);
    assert_int_equal(result_merge(r), 0);
    assert_int_equal(r->nwarnings, 1);
    assert_contains(r->warnings[0], "client's senders reached 160.0 Mbit/s of the 200.0 Mbit/s");
    assert_contains(r->warnings[0], "80.0%");
    assert_contains(r->warnings[0], "CPU or NIC bound");
    /* merged again: the same warning is kept once */
    assert_int_equal(result_merge(r), 0);
    assert_int_equal(r->nwarnings, 1);
    /* 96 % of the rate: no warning */
    r->nwarnings = 0;
    r->params.udp_rate_bps = 83000000;
    assert_int_equal(result_merge(r), 0);
    assert_int_equal(r->nwarnings, 0);
    free_run(r);
}

/* -R: the server's senders are judged from what the server reported */
static void test_warn_udp_rate_reverse(void **state)
{
    struct run_result *r = new_run(PARAMS_DIR_REVERSE, 1);

    (void)state;
    r->params.udp = true;
    r->params.udp_pps = 1000; /* 1000 datagrams of 1000 bytes: 8 Mbit/s */
    r->params.write_size = 1000;
    set_sender(&r->remote.flows[0], 5000000ULL, 10.0, 0, 0, -1); /* 4 Mbit/s */
    set_receiver(&r->local.flows[0], 5000000ULL, 10.0, -1);
    assert_int_equal(result_merge(r), 0);
    assert_true(has_warning(r, "server's sender reached 4.00 Mbit/s of the 8.00 Mbit/s"));
    assert_true(has_warning(r, "--pps x datagram size, 50.0%"));
    /* a server that reported nothing is not judged */
    r->nwarnings = 0;
    r->remote.valid = false;
    assert_int_equal(result_merge(r), 0);
    assert_int_equal(r->nwarnings, 0);
    free_run(r);
}

static void test_warn_idle_threads(void **state)
{
    struct run_result *r = new_run(PARAMS_DIR_FORWARD, 2);

    (void)state;
    r->params.threads = 4; /* -T 4 -P 2: two threads idle on each end */
    assert_int_equal(result_merge(r), 0);
    assert_int_equal(r->nwarnings, 1);
    assert_contains(r->warnings[0], "-T 4 with 2 flows: 2 worker threads on each end had no flow");
    r->nwarnings = 0;
    r->params.threads = 2;
    r->params.server_threads = 3;
    assert_int_equal(result_merge(r), 0);
    assert_int_equal(r->nwarnings, 1);
    assert_contains(r->warnings[0], "--server-threads 3 with 2 flows: 1 of the server's");
    /* bidir counts both directions' flows: 4 threads for 2 x 2 flows are all used */
    r->nwarnings = 0;
    r->params.server_threads = 0;
    r->params.threads = 4;
    r->params.dir = PARAMS_DIR_BIDIR;
    result_side_fini(&r->local);
    result_side_fini(&r->remote);
    assert_int_equal(result_side_init(&r->local, 4, 2), 0);
    assert_int_equal(result_side_init(&r->remote, 4, 2), 0);
    r->local.valid = r->remote.valid = true;
    assert_int_equal(result_merge(r), 0);
    assert_int_equal(r->nwarnings, 0);
    free_run(r);
}

static void test_warn_bounded(void **state)
{
    struct run_result r;

    (void)state;
    memset(&r, 0, sizeof(r));
    for (int i = 0; i < RESULT_MAX_WARNINGS + 3; i++)
        result_warn(&r, "warning %d", i);
    assert_int_equal(r.nwarnings, RESULT_MAX_WARNINGS);
    assert_string_equal(r.warnings[RESULT_MAX_WARNINGS - 1], "warning 7");
}

/* --zerocopy-rx: per-flow and total shares mapped come from the receiving side; the note
 * says how much and, under half, why. */
static void test_merge_rx_zerocopy(void **state)
{
    struct run_result *r = new_run(PARAMS_DIR_BIDIR, 1);
    char note[400];

    (void)state;
    r->params.zerocopy_rx = true;
    /* flow 0 up (the server receives), flow 1 down (the client receives) */
    set_sender(&r->local.flows[0], 1000, 1.0, 0, 100, 0);
    set_receiver(&r->remote.flows[0], 1000, 1.0, 0);
    r->remote.flows[0].rx_zc_bytes = 250;
    set_sender(&r->remote.flows[1], 3000, 1.0, 0, 100, 0);
    set_receiver(&r->local.flows[1], 3000, 1.0, 0);
    r->local.flows[1].rx_zc_bytes = 3000;
    r->local.flows[0].rx_zc_bytes = 999; /* a sender's count is never taken */
    snprintf(r->local.recv_method, sizeof(r->local.recv_method), "zerocopy");
    snprintf(r->remote.recv_method, sizeof(r->remote.recv_method), "zerocopy");
    assert_int_equal(result_merge(r), 0);
    assert_int_equal(r->flows[0].rx_zc_bytes, 250);
    assert_dbl_near(r->flows[0].rx_zc_fraction, 0.25, 1e-12);
    assert_dbl_near(r->flows[1].rx_zc_fraction, 1.0, 1e-12);
    assert_int_equal(r->summary.rx_zc_bytes, 3250);
    assert_dbl_near(r->summary.rx_zc_fraction, 0.8125, 1e-12);
    assert_false(r->summary.rx_copy_skipped);
    result_rx_note(r, note, sizeof(note));
    assert_non_null(strstr(note, "81.25% of the bytes received were mapped, not copied"));

    /* the server did not map: mixed is not "as asked" */
    snprintf(r->remote.recv_method, sizeof(r->remote.recv_method), "copy");
    r->remote.flows[0].rx_zc_bytes = 0;
    r->local.flows[1].rx_zc_bytes = 30;
    assert_int_equal(result_merge(r), 0);
    result_rx_note(r, note, sizeof(note));
    assert_non_null(strstr(note, "not every receiver could map"));
    /* every receiver tried, little mapped: the note says why */
    snprintf(r->remote.recv_method, sizeof(r->remote.recv_method), "zerocopy");
    assert_int_equal(result_merge(r), 0);
    result_rx_note(r, note, sizeof(note));
    assert_non_null(strstr(note, "only 0.75%"));
    assert_non_null(strstr(note, "order-0 pages"));
    free_run(r);
}

/* --skip-rx-copy: marked from the methods the receivers report, not from what was asked */
static void test_merge_rx_skip_copy(void **state)
{
    struct run_result *r = new_run(PARAMS_DIR_FORWARD, 1);
    char note[400];

    (void)state;
    set_sender(&r->local.flows[0], 1000, 1.0, 0, 100, 0);
    set_receiver(&r->remote.flows[0], 1000, 1.0, 0);
    snprintf(r->remote.recv_method, sizeof(r->remote.recv_method), "copy");
    assert_int_equal(result_merge(r), 0);
    assert_false(r->summary.rx_copy_skipped);
    result_rx_note(r, note, sizeof(note));
    assert_string_equal(note, "");

    r->params.skip_rx_copy = true; /* asked, but the server copied (an older netrig) */
    assert_int_equal(result_merge(r), 0);
    assert_false(r->summary.rx_copy_skipped);
    result_rx_note(r, note, sizeof(note));
    assert_non_null(strstr(note, "not honoured"));

    snprintf(r->remote.recv_method, sizeof(r->remote.recv_method), "skip_copy");
    assert_int_equal(result_merge(r), 0);
    assert_true(r->summary.rx_copy_skipped);
    result_rx_note(r, note, sizeof(note));
    assert_non_null(strstr(note, "do not count the receiver's copy"));
    free_run(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jain),
        cmocka_unit_test(test_side_init_capacity),
        cmocka_unit_test(test_side_init_cell_limit),
        cmocka_unit_test(test_side_init_empty),
        cmocka_unit_test(test_merge_forward),
        cmocka_unit_test(test_merge_own_cost),
        cmocka_unit_test(test_merge_reverse),
        cmocka_unit_test(test_merge_bidir),
        cmocka_unit_test(test_merge_remote_invalid_forward),
        cmocka_unit_test(test_merge_remote_invalid_reverse),
        cmocka_unit_test(test_merge_remote_missing_one_flow),
        cmocka_unit_test(test_merge_no_tcpinfo_and_zero_seconds),
        cmocka_unit_test(test_warn_udp_rate),
        cmocka_unit_test(test_warn_udp_rate_reverse),
        cmocka_unit_test(test_warn_idle_threads),
        cmocka_unit_test(test_warn_bounded),
        cmocka_unit_test(test_merge_rx_zerocopy),
        cmocka_unit_test(test_merge_rx_skip_copy),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
