/* Unit tests for the diagnose sample built from a run_result (the server sending; the
 * application's figures, threads and host counters of both ends; the intervals' plateau; an
 * older peer that sends none of them) and for hostctr, the host counters both ends take: the
 * parsers of /proc/net/netstat, softnet_stat and /proc/stat, the delta with the busiest CPUs,
 * and the sampler on a fixture tree. */
#define _GNU_SOURCE
#include "test_util.h"

#include "diagnose.h"
#include "hostctr.h"
#include "result.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- from a run_result ------------------------------------------------------------------- */

static struct side_hostload *load_of(int ncpu_busy, double secs)
{
    struct side_hostload *l = calloc(1, sizeof(*l));

    assert_non_null(l);
    l->seconds = secs;
    l->nthreads = 2;
    l->thread[0] = (struct side_thread){.cpu = 1, .sends = true, .run_s = 3.8, .runq_s = 0.1};
    l->thread[1] = (struct side_thread){.cpu = 0, .sends = false, .run_s = 0.2, .runq_s = -1};
    l->host.valid = true;
    l->host.ncpu = 1;
    l->host.cpu[0] = (struct hostctr_cpu){.id = ncpu_busy, .busy = 0.99, .softirq = 0.1};
    return l;
}

/* A run whose server sent (-R): two flows, the client's intervals, both sides' loads. */
struct fake_run {
    struct run_result r;
    struct side_flow sf[2], rf[2];
    struct flow_summary fs[2];
    struct interval iv[5];
};

static void fake_flows(struct fake_run *f)
{
    for (uint32_t i = 0; i < 2; i++) {
        struct side_flow *sf = &f->sf[i], *rf = &f->rf[i];
        sf->id = rf->id = i;
        sf->sender = true;
        sf->seconds = rf->seconds = 4.0;
        sf->ti = (struct tcpinfo){.valid = true,
                                  .busy_us = 4000000,
                                  .rwnd_limited_us = 1000000 * i,
                                  .total_retrans = 3,
                                  .data_segs_out = 1000,
                                  .snd_mss = 1448,
                                  .rtt_us = 100 + 100 * i,
                                  .min_rtt_us = 50 - 10 * i,
                                  .snd_wnd = 70000 - 1000 * i,
                                  .snd_cwnd = 10};
        sf->wait_s = 3.6 + 0.2 * i; /* 90 %, 95 % */
        sf->sndbuf = 100000 * (i + 1);
        sf->samples = 16;
        sf->rtt_mean_us = 1000 * (i + 1);
        sf->snd_wnd_mean = 60000;
        sf->inflight_mean = 30000 * (i + 1);
        rf->wait_s = i ? 9 : 2; /* over the period: taken as all of it */
        rf->rcvbuf = 50000;
        f->fs[i].id = i;
        f->fs[i].client_sends = false;
    }
}

static void fake_run(struct fake_run *f)
{
    struct run_result *r = &f->r;

    memset(f, 0, sizeof(*f));
    fake_flows(f);
    /* the receiver's (client's) intervals: omitted, 100, 100, 50, and a 0.02 s stub */
    f->iv[0] = (struct interval){.start_s = 0, .end_s = 1, .omitted = true, .recv_bytes = 1};
    f->iv[1] = (struct interval){.start_s = 1, .end_s = 2, .recv_bytes = 12500000};
    f->iv[2] = (struct interval){.start_s = 2, .end_s = 3, .recv_bytes = 12500000};
    f->iv[3] = (struct interval){.start_s = 3, .end_s = 4, .recv_bytes = 6250000};
    f->iv[4] = (struct interval){.start_s = 4, .end_s = 4.02, .recv_bytes = 1};
    r->remote.valid = r->local.valid = true;
    r->remote.nflows = r->local.nflows = 2;
    r->remote.flows = f->sf;
    r->local.flows = f->rf;
    r->remote.seconds = r->local.seconds = 4.0;
    r->local.intervals = f->iv;
    r->local.nintervals = 5;
    snprintf(r->remote.congestion, sizeof(r->remote.congestion), "bbr");
    r->remote.hostload = load_of(1, 4.0);
    r->local.hostload = load_of(0, 4.0);
    r->nflows = 2;
    r->flows = f->fs;
    r->summary.throughput_bps = 2e9;
    r->params.fq_rate_bps = 5;
    r->params.omit_ns = 600000000ULL;
    snprintf(r->local.boot_id, sizeof(r->local.boot_id), "b00t");
    snprintf(r->remote.boot_id, sizeof(r->remote.boot_id), "b00t");
}

static void test_from_run(void **state)
{
    struct fake_run *f = calloc(1, sizeof(*f));
    struct diagnose_sample s;
    char err[256];
    (void)state;

    assert_non_null(f);
    fake_run(f);
    memset(&s, 0, sizeof(s));
    assert_int_equal(diagnose_from_run(&f->r, &s, err, sizeof(err)), 0);
    assert_int_equal(s.flows, 2);
    assert_true(s.local_receives);
    assert_int_equal(s.busy_us, 8000000);
    assert_int_equal(s.rwnd_us, 1000000);
    assert_int_equal(s.retrans, 6);
    assert_int_equal(s.segs_out, 2000);
    assert_dbl_near(s.srtt_us, 150, 1e-9);
    assert_dbl_near(s.min_rtt_us, 40, 1e-9);
    assert_int_equal(s.snd_wnd, 69000);
    assert_dbl_near(s.seconds, 4.0, 1e-9);
    assert_int_equal(s.pacing_bps, 5);
    assert_dbl_near(s.throughput_bps, 2e9, 1);
    assert_dbl_near(s.warmup_s, 0.6, 1e-9);
    assert_string_equal(s.cc, "bbr");
    assert_int_equal(s.samples, 16);
    assert_dbl_near(s.rtt_mean_us, 1500, 1e-9);
    assert_dbl_near(s.wnd_mean, 60000, 1e-9);
    assert_dbl_near(s.inflight_mean, 45000, 1e-9);
    /* the plateau: 3 measured intervals (the stub left out), median 100 Mbit/s, 2 near it */
    assert_int_equal(s.nrates, 3);
    assert_dbl_near(s.rate_median_bps, 100e6, 1);
    assert_dbl_near(s.plateau, 2.0 / 3, 1e-9);
    assert_true(s.same_host); /* one boot id: one kernel */
    snprintf(f->r.remote.boot_id, sizeof(f->r.remote.boot_id), "other");
    memset(&s, 0, sizeof(s));
    assert_int_equal(diagnose_from_run(&f->r, &s, err, sizeof(err)), 0);
    assert_false(s.same_host);
    free(f->r.remote.hostload);
    free(f->r.local.hostload);
    free(f);
}

static void test_from_run_ends(void **state)
{
    struct fake_run *f = calloc(1, sizeof(*f));
    struct diagnose_sample s;
    char err[256];
    (void)state;

    assert_non_null(f);
    fake_run(f);
    memset(&s, 0, sizeof(s));
    assert_int_equal(diagnose_from_run(&f->r, &s, err, sizeof(err)), 0);
    /* the sender is the server (remote), the receiver this host */
    assert_true(s.snd.known && !s.snd.local);
    assert_dbl_near(s.snd.wait, 0.925, 1e-9);
    assert_int_equal(s.snd.buf, 150000);
    assert_true(s.snd.thread_known);
    assert_int_equal(s.snd.cpu, 1);
    assert_dbl_near(s.snd.run, 0.95, 1e-9);
    assert_dbl_near(s.snd.runq, 0.025, 1e-9);
    assert_dbl_near(s.snd.cpu_busy, 0.99, 1e-9);
    assert_true(s.snd.host_known);
    assert_true(s.rcv.known && s.rcv.local);
    assert_dbl_near(s.rcv.wait, (0.5 + 1.0) / 2, 1e-9);
    assert_int_equal(s.rcv.buf, 50000);
    assert_int_equal(s.rcv.cpu, 0);
    assert_dbl_near(s.rcv.runq, -1, 0);
    assert_dbl_near(s.rcv.cpu_busy, 0.99, 1e-9);
    /* an older server: no figures of its application, no load */
    free(f->r.remote.hostload);
    f->r.remote.hostload = NULL;
    for (uint32_t i = 0; i < 2; i++) {
        f->sf[i].wait_s = -1;
        f->sf[i].samples = 0;
        f->sf[i].sndbuf = 0;
    }
    memset(&s, 0, sizeof(s));
    assert_int_equal(diagnose_from_run(&f->r, &s, err, sizeof(err)), 0);
    assert_false(s.snd.known);
    assert_false(s.snd.thread_known);
    assert_false(s.snd.host_known);
    assert_int_equal(s.samples, 0);
    /* no sender TCP_INFO: nothing to diagnose, said in one line */
    f->sf[0].ti.valid = f->sf[1].ti.valid = false;
    memset(&s, 0, sizeof(s));
    assert_int_equal(diagnose_from_run(&f->r, &s, err, sizeof(err)), -1);
    assert_contains(err, "no TCP_INFO");
    free(f->r.local.hostload);
    free(f);
}

/* ---- host counters ----------------------------------------------------------------------- */

static const char netstat_a[] =
    "TcpExt: SyncookiesSent PruneCalled ListenOverflows TCPTimeouts TCPBacklogDrop "
    "TCPRcvQDrop TCPToZeroWindowAdv TCPWantZeroWindowAdv TCPRcvCollapsed\n"
    "TcpExt: 0 1 2 3 4 5 6 7 8\n"
    "IpExt: InNoRoutes InTruncatedPkts\n"
    "IpExt: 0 0\n";
static const char netstat_b[] =
    "TcpExt: SyncookiesSent PruneCalled ListenOverflows TCPTimeouts TCPBacklogDrop "
    "TCPRcvQDrop TCPToZeroWindowAdv TCPWantZeroWindowAdv TCPRcvCollapsed\n"
    "TcpExt: 0 11 2 13 4 25 106 7 8\n";
static const char snmp_a[] =
    "Ip: Forwarding DefaultTTL\nIp: 1 64\n"
    "Tcp: RtoAlgorithm ActiveOpens OutSegs RetransSegs\nTcp: 1 2 1000 10\n";
static const char snmp_b[] =
    "Ip: Forwarding DefaultTTL\nIp: 1 64\n"
    "Tcp: RtoAlgorithm ActiveOpens OutSegs RetransSegs\nTcp: 1 2 3000 15\n";

static void test_host_counters(void **state)
{
    struct hostctr_snap *a = calloc(2, sizeof(*a)), *b = a + 1;
    struct hostctr_delta h;
    (void)state;

    assert_non_null(a);
    assert_int_equal(hostctr_parse_netstat(netstat_a, a), 0);
    assert_int_equal(hostctr_parse_netstat(snmp_a, a), 0);
    assert_int_equal(hostctr_parse_softnet("0000ffff 00000001 00000010 0 0 0 0 0 0 0 0 0 0\n"
                                           "0000ffff 00000000 00000002 0 0 0 0 0 0 0 0 0 1\n",
                                           a),
                     0);
    assert_int_equal(hostctr_parse_stat("cpu  10 0 10 100 0 0 10 0 0 0\n"
                                        "cpu0 5 0 5 50 0 0 0 0 0 0\n"
                                        "cpu1 5 0 5 50 0 0 10 0 0 0\nintr 5\n",
                                        a),
                     0);
    assert_int_equal(a->ncpu, 2);
    assert_int_equal(hostctr_parse_netstat(netstat_b, b), 0);
    assert_int_equal(hostctr_parse_netstat(snmp_b, b), 0);
    assert_int_equal(hostctr_parse_softnet("0000ffff 00000003 00000110 0 0 0 0 0 0 0 0 0 0\n"
                                           "0000ffff 00000000 00000002 0 0 0 0 0 0 0 0 0 1\n",
                                           b),
                     0);
    assert_int_equal(hostctr_parse_stat("cpu0 5 0 5 150 0 0 0 0 0 0\n"
                                        "cpu1 5 0 5 60 0 0 100 0 0 0\n",
                                        b),
                     0);
    hostctr_delta(a, b, &h);
    assert_true(h.valid);
    assert_int_equal(h.ctr[HOSTCTR_PRUNE_CALLED], 10);
    assert_int_equal(h.ctr[HOSTCTR_TIMEOUTS], 10);
    assert_int_equal(h.ctr[HOSTCTR_RCVQ_DROP], 20);
    assert_int_equal(h.ctr[HOSTCTR_ZERO_WINDOW_ADV], 100);
    assert_int_equal(h.ctr[HOSTCTR_LISTEN_OVERFLOWS], 0);
    assert_int_equal(h.ctr[HOSTCTR_OUT_SEGS], 2000);
    assert_int_equal(h.ctr[HOSTCTR_RETRANS_SEGS], 5);
    assert_true(h.have_softnet);
    assert_int_equal(h.softnet_dropped, 2);
    assert_int_equal(h.softnet_squeeze, 0x100);
    assert_int_equal(h.softirq_cpu, 1); /* 90 of 100 ticks */
    assert_dbl_near(h.softirq_max, 0.9, 1e-9);
    /* the busiest CPUs first, with their busy share (idle 10 of 100 ticks; 100 of 100) */
    assert_int_equal(h.ncpu, 2);
    assert_int_equal(h.cpu[0].id, 1);
    assert_dbl_near(h.cpu[0].busy, 0.9, 1e-9);
    assert_int_equal(h.cpu[1].id, 0);
    assert_dbl_near(h.cpu[1].busy, 0, 1e-9);
    assert_non_null(hostctr_cpu_find(&h, 0));
    assert_null(hostctr_cpu_find(&h, 7));
    assert_int_equal(hostctr_from_name("TCPRcvQDrop"), HOSTCTR_RCVQ_DROP);
    assert_int_equal(hostctr_from_name("NoSuch"), -1);
    /* garbage is refused, not half read */
    assert_int_equal(hostctr_parse_softnet("zz\n", a), -EINVAL);
    assert_int_equal(hostctr_parse_stat("nothing\n", a), -EINVAL);
    assert_int_equal(hostctr_parse_netstat("TcpExt: a b\n", a), -EINVAL);
    assert_string_equal(hostctr_name(HOSTCTR_RCVQ_DROP), "TCPRcvQDrop");
    free(a);
}

/* The sampler on a fixture tree reads what is there and marks the rest absent. */
static void test_host_sample_fixture(void **state)
{
    struct hostctr_snap *s = calloc(1, sizeof(*s));
    (void)state;

    assert_non_null(s);
    hostctr_sample(NETRIG_FIXTURES "/seed001-wan", s);
    assert_true(s->have_softnet);
    assert_true(s->have_ctr[HOSTCTR_LISTEN_OVERFLOWS]);
    hostctr_sample("/nonexistent", s);
    assert_false(s->have_softnet);
    assert_int_equal(s->ncpu, 0);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_run),
        cmocka_unit_test(test_from_run_ends),
        cmocka_unit_test(test_host_counters),
        cmocka_unit_test(test_host_sample_fixture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
