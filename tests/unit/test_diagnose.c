/* Unit tests for netrig diagnose: each rule on samples recorded on this kind of machine (two
 * network namespaces joined by veth; see tests/integration/tune_diagnose.sh), the order the
 * rules are tried in, the Mathis bound, the sample built from a run_result (the sender may be
 * the server), and the parsers of /proc/net/netstat, softnet_stat and /proc/stat. */
#define _GNU_SOURCE
#include "test_util.h"

#include "diagnose.h"
#include "hostctr.h"
#include "result.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define G 1000000000ULL

static struct diagnose_verdict judge(const struct diagnose_sample *s)
{
    struct diagnose_verdict v;

    diagnose_judge(s, &v);
    return v;
}

static bool any_evidence(const struct diagnose_verdict *v, const char *needle)
{
    for (size_t i = 0; i < v->nevidence; i++)
        if (strstr(v->evidence[i], needle))
            return true;
    return false;
}

#define assert_evidence(v, needle)                                                                 \
    do {                                                                                           \
        if (!any_evidence(&(v), needle)) {                                                         \
            for (size_t i__ = 0; i__ < (v).nevidence; i__++)                                       \
                fprintf(stderr, "  evidence: %s\n", (v).evidence[i__]);                            \
            fail_msg("no evidence line contains \"%s\"", needle);                                  \
        }                                                                                          \
    } while (0)

/* Receiver's tcp_rmem "4096 4096 8192": 348 Mbit/s, the window held the sender 84 %. */
static const struct diagnose_sample rwnd_tiny = {
    .flows = 1,
    .seconds = 3.0,
    .throughput_bps = 348e6,
    .busy_us = 2712000,
    .rwnd_us = 2264000,
    .sndbuf_us = 0,
    .retrans = 38,
    .segs_out = 36800,
    .mss = 1448,
    .srtt_us = 239,
    .min_rtt_us = 5,
    .snd_wnd = 5248,
    .cwnd = 142,
};

static void test_rwnd_limited(void **state)
{
    struct diagnose_sample s = rwnd_tiny;
    struct diagnose_verdict v;
    (void)state;

    v = judge(&s);
    assert_int_equal(v.id, DIAG_RWND_LIMITED);
    assert_string_equal(diagnose_id_name(v.id), "rwnd_limited");
    assert_dbl_near(v.f_rwnd, 2264.0 / 2712, 1e-9);
    assert_evidence(v, "83% of its busy time");
    assert_evidence(v, "snd_wnd 5.25 kB");
    assert_contains(v.advice, "net.ipv4.tcp_rmem");
    assert_contains(v.tune, "on the receiver: netrig tune --apply --rate RATE");
    /* with the target, the BDP and the exact tune command */
    s.target_bps = 10 * G;
    s.target_rtt_s = 1e-3;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_RWND_LIMITED);
    assert_dbl_near(v.bdp_bytes, 1.25e6, 1);
    assert_evidence(v, "BDP, 1.25 MB");
    assert_contains(v.advice, "2 x BDP = 2.5 MB");
    assert_contains(v.tune, "netrig tune --apply --rate 10G --rtt 1ms");
    /* a receiver here that advertised zero windows: the application is slow too */
    s.local_receives = true;
    s.host.valid = true;
    s.host.have_ctr[HOSTCTR_ZERO_WINDOW_ADV] = true;
    s.host.ctr[HOSTCTR_ZERO_WINDOW_ADV] = 12;
    v = judge(&s);
    assert_evidence(v, "zero window 12 times");
    assert_contains(v.advice, "receiving application also falls behind");
}

/* After `netrig tune --apply`: 9.67 Gbit/s; the window limited only the ramp-up (28 %) and
 * ends at 28 MB: not receive-window limited. */
static void test_rwnd_rampup_only(void **state)
{
    struct diagnose_sample s = {
        .flows = 1,
        .seconds = 3.0,
        .throughput_bps = 9.67e9,
        .busy_us = 2500000,
        .rwnd_us = 712000,
        .retrans = 1100,
        .segs_out = 2440000,
        .mss = 1448,
        .srtt_us = 315,
        .min_rtt_us = 3,
        .snd_wnd = 28100000,
    };
    struct diagnose_verdict v;
    (void)state;

    v = judge(&s);
    assert_int_equal(v.id, DIAG_OK);
    s.target_bps = 10 * G; /* 9.67 Gbit/s >= 90 % of what 10G carries */
    v = judge(&s);
    assert_int_equal(v.id, DIAG_LINK_CAPACITY);
    assert_evidence(v, "= 103% of the 9.41 Gbit/s TCP carries on a 10 Gbit/s link");
}

/* Sender's tcp_wmem "4096 4096 8192" over a path whose ACKs queue ~15 ms. */
static void test_sndbuf_limited(void **state)
{
    struct diagnose_sample s = {
        .flows = 1,
        .seconds = 4.0,
        .throughput_bps = 13e6,
        .busy_us = 4020000,
        .rwnd_us = 0,
        .sndbuf_us = 1470000,
        .retrans = 0,
        .segs_out = 4500,
        .mss = 1448,
        .srtt_us = 19200,
        .min_rtt_us = 13800,
        .snd_wnd = 236000,
    };
    struct diagnose_verdict v;
    (void)state;

    v = judge(&s);
    assert_int_equal(v.id, DIAG_SNDBUF_LIMITED);
    assert_string_equal(v.title, "send-buffer limited (partly)");
    assert_evidence(v, "37% of its busy time");
    assert_contains(v.advice, "net.ipv4.tcp_wmem");
    assert_contains(v.tune, "on the sender: netrig tune --apply --rate RATE --rtt 13.8ms");
    s.sndbuf_us = 2700000;
    v = judge(&s);
    assert_string_equal(v.title, "send-buffer limited");
}

/* A 200 Mbit/s tbf on the veth: busy 100 %, srtt 3 ms over a 6 us path. */
static const struct diagnose_sample tbf = {
    .flows = 1,
    .seconds = 3.0,
    .throughput_bps = 190.6e6,
    .busy_us = 2976000,
    .rwnd_us = 0,
    .sndbuf_us = 4000,
    .retrans = 0,
    .segs_out = 63798,
    .mss = 1448,
    .srtt_us = 3020,
    .min_rtt_us = 6,
    .snd_wnd = 1592320,
};

static void test_link_capacity(void **state)
{
    struct diagnose_sample s = tbf;
    struct diagnose_verdict v;
    (void)state;

    v = judge(&s);
    assert_int_equal(v.id, DIAG_LINK_CAPACITY);
    assert_evidence(v, "a standing queue on the path: srtt 3.02 ms against min_rtt 6 us");
    assert_string_equal(v.tune, "");
    /* with --rate: the goodput arithmetic */
    s.target_bps = 200000000;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_LINK_CAPACITY);
    assert_dbl_near(v.goodput_bps, 200e6 * 1448 / 1538, 1);
    assert_evidence(v, "of the 188 Mbit/s TCP carries on a 200 Mbit/s link (MSS 1448)");
    /* the same queue with the sender mostly idle is not the link */
    s = tbf;
    s.busy_us = 1500000;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_APP_LIMITED);
}

/* --fq-rate 200M -P 2 on an unshaped veth: 358 Mbit/s. */
static void test_paced_app_limited(void **state)
{
    struct diagnose_sample s = {
        .flows = 2,
        .seconds = 3.0,
        .throughput_bps = 358e6,
        .pacing_bps = 200000000,
        .busy_us = 6000000,
        .sndbuf_us = 2000000,
        .retrans = 0,
        .segs_out = 90000,
        .mss = 1448,
        .srtt_us = 24,
        .min_rtt_us = 6,
        .snd_wnd = 1723392,
    };
    struct diagnose_verdict v;
    (void)state;

    /* pacing wins over the send-buffer time the waiting data shows */
    v = judge(&s);
    assert_int_equal(v.id, DIAG_APP_LIMITED);
    assert_string_equal(v.title, "application limited: the sender was paced");
    assert_evidence(v, "= 90% of the pacing asked for (200 Mbit/s per flow x 2 flows");
    assert_contains(v.advice, "--fq-rate");
    /* pacing far above what was reached: some other limit */
    s.pacing_bps = 2 * G;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_SNDBUF_LIMITED);
}

/* The built-in loopback test on 2 CPUs: 4.3 Gbit/s, sender busy 61 %. */
static void test_app_limited(void **state)
{
    struct diagnose_sample s = {
        .flows = 1,
        .seconds = 3.0,
        .throughput_bps = 4.3e9,
        .busy_us = 1824000,
        .rwnd_us = 4000,
        .retrans = 71,
        .segs_out = 1100000,
        .mss = 65483,
        .srtt_us = 778,
        .min_rtt_us = 3,
        .snd_wnd = 24748032,
    };
    struct diagnose_verdict v;
    (void)state;

    v = judge(&s);
    assert_int_equal(v.id, DIAG_APP_LIMITED);
    assert_dbl_near(v.busy, 0.608, 1e-3);
    assert_evidence(v, "only 61% of the time");
    assert_contains(v.tune, "performance CPU governor");
}

/* A WAN path losing 1 % with no queue: loss limited, with the Mathis bound. */
static void test_loss_limited(void **state)
{
    struct diagnose_sample s = {
        .flows = 1,
        .seconds = 10.0,
        .throughput_bps = 4.2e6,
        .busy_us = 9900000,
        .retrans = 1000,
        .segs_out = 100000,
        .mss = 1448,
        .srtt_us = 30000,
        .min_rtt_us = 29500,
        .snd_wnd = 6000000,
    };
    struct diagnose_verdict v;
    (void)state;

    v = judge(&s);
    assert_int_equal(v.id, DIAG_LOSS_LIMITED);
    assert_dbl_near(v.loss, 0.01, 1e-12);
    /* 1448 B x 8 / 30 ms x 1.22 / sqrt(0.01) = 4.71 Mbit/s */
    assert_dbl_near(v.mathis_bps, 1448.0 * 8 / 0.03 * 1.22 / 0.1, 1);
    assert_evidence(v, "Mathis bound");
    assert_evidence(v, "= 4.71 Mbit/s for 1 flow(s)");
    assert_evidence(v, "above the WAN threshold 0.0001");
    assert_contains(v.tune, "tcp_congestion_control");
    /* the same loss with a standing queue is the bottleneck's own drops: link capacity */
    s.srtt_us = 80000;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_LINK_CAPACITY);
    /* below the LAN threshold on a LAN path: nothing to say */
    s = (struct diagnose_sample){.flows = 1,
                                 .seconds = 10.0,
                                 .throughput_bps = 9e9,
                                 .busy_us = 9900000,
                                 .retrans = 5,
                                 .segs_out = 100000,
                                 .mss = 1448,
                                 .srtt_us = 100,
                                 .min_rtt_us = 50,
                                 .snd_wnd = 6000000};
    v = judge(&s);
    assert_int_equal(v.id, DIAG_OK);
}

static void test_rx_cpu_limited(void **state)
{
    struct diagnose_sample s = {
        .flows = 4,
        .seconds = 5.0,
        .throughput_bps = 23e9,
        .busy_us = 19800000,
        .retrans = 10,
        .segs_out = 2000000,
        .mss = 8948,
        .srtt_us = 200,
        .min_rtt_us = 150,
        .snd_wnd = 6000000,
        .local_receives = true,
    };
    struct diagnose_verdict v;
    (void)state;

    s.host.valid = true;
    s.host.softirq_max = 0.97;
    s.host.softirq_cpu = 3;
    s.host.have_softnet = true;
    s.host.softnet_squeeze = 5000;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_RX_CPU_LIMITED);
    assert_evidence(v, "CPU 3 spent 97% of its time in softirq");
    assert_evidence(v, "5000 time squeezes (1000/s");
    assert_contains(v.tune, "rps_cpus");
    /* the counters of a host that only sent say nothing about the receiver */
    s.local_receives = false;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_OK);
    /* backlog drops alone are enough, and the advice names netdev_max_backlog */
    s.local_receives = true;
    s.host.softirq_max = 0.2;
    s.host.softnet_squeeze = 0;
    s.host.softnet_dropped = 7;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_RX_CPU_LIMITED);
    assert_contains(v.advice, "netdev_max_backlog");
}

/* ---- from a run_result ------------------------------------------------------------------- */

static void test_from_run(void **state)
{
    struct run_result r;
    struct side_flow sf[2];
    struct flow_summary fs[2];
    struct diagnose_sample s;
    char err[256];
    (void)state;

    memset(&r, 0, sizeof(r));
    memset(sf, 0, sizeof(sf));
    memset(fs, 0, sizeof(fs));
    memset(&s, 0, sizeof(s));
    /* -R: the server sends; its side holds the TCP_INFO */
    for (uint32_t i = 0; i < 2; i++) {
        sf[i].id = i;
        sf[i].sender = true;
        sf[i].seconds = 4.0;
        sf[i].ti = (struct tcpinfo){.valid = true,
                                    .busy_us = 4000000,
                                    .rwnd_limited_us = 1000000 * i,
                                    .total_retrans = 3,
                                    .data_segs_out = 1000,
                                    .snd_mss = 1448,
                                    .rtt_us = 100 + 100 * i,
                                    .min_rtt_us = 50 - 10 * i,
                                    .snd_wnd = 70000 - 1000 * i,
                                    .snd_cwnd = 10};
        fs[i].id = i;
        fs[i].client_sends = false;
    }
    r.remote.nflows = 2;
    r.remote.flows = sf;
    r.nflows = 2;
    r.flows = fs;
    r.summary.throughput_bps = 2e9;
    r.params.fq_rate_bps = 5;
    assert_int_equal(diagnose_from_run(&r, &s, err, sizeof(err)), 0);
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
    /* no sender TCP_INFO: nothing to diagnose, said in one line */
    sf[0].ti.valid = sf[1].ti.valid = false;
    memset(&s, 0, sizeof(s));
    assert_int_equal(diagnose_from_run(&r, &s, err, sizeof(err)), -1);
    assert_contains(err, "no TCP_INFO");
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
        cmocka_unit_test(test_rwnd_limited),
        cmocka_unit_test(test_rwnd_rampup_only),
        cmocka_unit_test(test_sndbuf_limited),
        cmocka_unit_test(test_link_capacity),
        cmocka_unit_test(test_paced_app_limited),
        cmocka_unit_test(test_app_limited),
        cmocka_unit_test(test_loss_limited),
        cmocka_unit_test(test_rx_cpu_limited),
        cmocka_unit_test(test_from_run),
        cmocka_unit_test(test_host_counters),
        cmocka_unit_test(test_host_sample_fixture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
