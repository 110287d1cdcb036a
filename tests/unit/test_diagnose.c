/* Unit tests for netrig diagnose: each rule on samples recorded with the WAN emulator (lib.sh
 * `path`: the bottleneck matrix of tests/integration/scenarios/diagnose_matrix.sh, at 500
 * Mbit/s for 40 ms and 1 Gbit/s for 1 and 80 ms), the order the rules are tried in (a full
 * window or buffer against a standing queue, loss against a queue, bbr and loss), the Mathis
 * bound and its evidence line, the advice that fits the host (no "use bbr" to bbr). The sample
 * a run_result gives and the host counters: test_diagnose_sample.c. */
#define _GNU_SOURCE
#include "test_util.h"

#include "diagnose.h"
#include "diagnose_report.h"
#include "hostctr.h"
#include "result.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define M 1000000ULL
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

#define assert_id(s, want)                                                                         \
    do {                                                                                           \
        struct diagnose_verdict v__ = judge(&(s));                                                 \
        if (v__.id != (want)) {                                                                    \
            for (size_t i__ = 0; i__ < v__.nevidence; i__++)                                       \
                fprintf(stderr, "  evidence: %s\n", v__.evidence[i__]);                            \
            fail_msg("verdict %s, expected %s", diagnose_id_name(v__.id), diagnose_id_name(want)); \
        }                                                                                          \
    } while (0)

#include "diagnose_samples.h"

/* ---- each bottleneck of the matrix ------------------------------------------------------- */

static void test_link(void **state)
{
    struct diagnose_sample s = r40_reno_link;
    struct diagnose_verdict v;
    (void)state;

    /* reno at 500M x 40 ms: 4.6 ms of queue (11 % of min_rtt), no loss in the window */
    v = judge(&s);
    assert_int_equal(v.id, DIAG_LINK_CAPACITY);
    assert_string_equal(diagnose_id_name(v.id), "link_capacity");
    assert_evidence(v, "a standing queue on the path");
    assert_evidence(v, "+4.57 ms of queueing");
    assert_dbl_near(v.srtt_us, 44616, 1e-9); /* the interval mean, not the end sample */
    assert_null(strstr(v.tune, "tune"));     /* nothing on the host to change */
    /* with --rate 500M: 477.9 of the 470.7 Mbit/s TCP carries (1448/1538) */
    s.target_bps = 500 * M;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_LINK_CAPACITY);
    assert_dbl_near(v.goodput_bps, 500e6 * 1448 / 1538, 1);
    assert_evidence(v, "= 102% of the 470.7 Mbit/s TCP carries on a 500.0 Mbit/s link");
    /* bbr keeps 2.4 ms (6 %); with no queue at all, the congestion control at a plateau */
    s = r40_bbr_link;
    assert_id(s, DIAG_LINK_CAPACITY);
    s.rtt_mean_us = s.min_rtt_us + 200;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_LINK_CAPACITY);
    assert_evidence(v, "a plateau: 100% of the 12 intervals within 20% of the median");
    assert_evidence(v, "bbr paces at the bottleneck's delivery rate");
    /* 1 ms x 1G: a queue of twice the round trip */
    s = r1_reno_link;
    assert_id(s, DIAG_LINK_CAPACITY);
    s = r1_bbr_link;
    assert_id(s, DIAG_LINK_CAPACITY);
}

static void test_rwnd(void **state)
{
    struct diagnose_sample s = r40_reno_rwnd;
    struct diagnose_verdict v;
    char rate[32], want[96];
    (void)state;

    /* the receiver's tcp_rmem max 1.25e6 B: a window of 807.9 KiB, 100 % in flight */
    v = judge(&s);
    assert_int_equal(v.id, DIAG_RWND_LIMITED);
    assert_dbl_near(v.window_use, 824395.0 / 827264, 1e-9);
    assert_evidence(v, "against the receiver's window of 807.9 KiB (100% full");
    assert_evidence(v, "that window allows 163.4 Mbit/s at srtt 40.5 ms");
    /* the throughput in the units netrig stream prints it in (one formatter, core/units) */
    units_format_rate(s.throughput_bps, rate, sizeof(rate));
    snprintf(want, sizeof(want), "; measured %s", rate);
    assert_evidence(v, want);
    assert_evidence(v, "grew to 1.19 MiB (SO_RCVBUF): 66% of it became window");
    assert_contains(v.advice, "net.ipv4.tcp_rmem");
    assert_contains(v.tune, "on the receiver: netrig tune --apply --rate RATE --rtt 40ms");
    /* beside a CPU hog the receiving thread always finds the window's few bytes queued and
     * looks CPU-bound (ran 86 %, waited for a CPU 14 %, for data 0.7 %), but the window is 66 %
     * of its buffer: the buffer's size, not the thread, is the limit */
    s.rcv.wait = 0.007;
    s.rcv.run = 0.86;
    s.rcv.runq = 0.14;
    assert_id(s, DIAG_RWND_LIMITED);
    /* the same thread with its buffer full of unread data (a window of 10 % of it) is */
    s.rcv.buf = 8272640;
    assert_id(s, DIAG_RX_CPU_LIMITED);
    s = r40_reno_rwnd;
    s.target_bps = 500 * M;
    s.target_rtt_s = 0.04;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_RWND_LIMITED);
    assert_dbl_near(v.bdp_bytes, 2.5e6, 1);
    assert_evidence(v, "a window of the BDP, 2.38 MiB");
    assert_contains(v.tune, "netrig tune --apply --rate 500M --rtt 40ms");
    /* the buffer model netrig tune uses (audit_bufcap): 1.25e6 B (1.19 MiB) gives a window of
     * 0.5-0.93 of it on a recent kernel (625000 B = 610.4 KiB to 1.11 MiB), 123-231 Mbit/s at
     * 40.5 ms, and the 163 measured lies inside; the size asked for covers the BDP at the worst
     * share: 2.5e6 B / 0.5 -> 8 MiB */
    assert_evidence(v, "a buffer of 1.19 MiB gives a window of 610.4 KiB-1.11 MiB, which caps "
                       "one flow at 123.5-229.7 Mbit/s");
    assert_contains(v.advice, "to 8388608 (8.00 MiB): at the worst share");
    /* bbr counts only 30 % of its busy time as window limited: the full window decides */
    s = r40_bbr_rwnd;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_RWND_LIMITED);
    assert_true(v.f_rwnd < DIAG_DOMINANT);
    assert_evidence(v, "TCP counted 30% of its busy time as receive-window limited");
    /* a full window with a queue of a quarter of the round trip covers the path: the link */
    s.rtt_mean_us = s.min_rtt_us * 1.3;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_LINK_CAPACITY);
    assert_evidence(v, "the window was full too, but it covers the path");
}

static void test_sndbuf(void **state)
{
    struct diagnose_sample s = r40_reno_sndbuf;
    struct diagnose_verdict v;
    (void)state;

    /* the sender's tcp_wmem max 1.25 MB: 74 % of it in flight; its refills make 1.3 ms of
     * queue, which is no standing queue (3 % of min_rtt) */
    v = judge(&s);
    assert_int_equal(v.id, DIAG_SNDBUF_LIMITED);
    assert_evidence(v, "from a send buffer of 1.19 MiB (SO_SNDBUF): 74% of it");
    assert_evidence(v, "waited for room in it 99% of the time");
    assert_contains(v.advice, "net.ipv4.tcp_wmem");
    assert_contains(v.tune, "on the sender");
    s = r80_bbr_sndbuf;
    assert_id(s, DIAG_SNDBUF_LIMITED);
    /* a buffer autotuning grew to 9 x the window (bbr) is not full: bbr found the link */
    s.snd.buf = (uint32_t)(9 * s.inflight_mean);
    v = judge(&s);
    assert_true(v.buffer_use < DIAG_BUF_FULL);
    assert_int_equal(v.id, DIAG_LINK_CAPACITY);
}

static void test_loss(void **state)
{
    struct diagnose_sample s = r40_reno_loss;
    struct diagnose_verdict v;
    char want[160];
    (void)state;

    /* reno at 1 % loss: 3.9 Mbit/s, its Mathis bound 4 */
    v = judge(&s);
    assert_int_equal(v.id, DIAG_LOSS_LIMITED);
    assert_dbl_near(v.loss, 8.0 / 1012, 1e-12);
    assert_dbl_near(v.mathis_bps, 1448 * 8 / 0.041865 * 1.22 / sqrt(8.0 / 1012), 1);
    /* the evidence line: srtt and the measured rate, each in its own words */
    snprintf(want, sizeof(want), "= 1448 B / 41.9 ms x 1.22 / sqrt(0.0079) x 1 flow(s) = ");
    assert_evidence(v, want);
    assert_evidence(v, "; measured 3.90 Mbit/s (reno)");
    assert_contains(v.advice, "use bbr");
    assert_contains(v.tune, "tcp_congestion_control=bbr");
    s = r1_reno_loss;
    assert_id(s, DIAG_LOSS_LIMITED);
    /* bbr at 1 %: 892 Mbit/s, 73x its Mathis bound: the link, never "loss" */
    s = r80_bbr_loss;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_LINK_CAPACITY);
    assert_true(v.mathis_bps < s.throughput_bps / 50);
    assert_evidence(v, "bbr keeps its rate through such loss");
    /* bbr beyond what it rides through (its policer check at ~20 %): loss, and no "use bbr" */
    s.retrans = s.segs_out / 4;
    s.throughput_bps = 50e6;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_LOSS_LIMITED);
    assert_contains(v.advice, "bbr is already in use");
    assert_null(strstr(v.advice, "use bbr"));
    assert_string_equal(v.tune, "");
    /* loss whose bound is far above the rate does not explain it */
    s = r40_reno_loss;
    s.retrans = 1;
    s.segs_out = 1000000;
    v = judge(&s);
    assert_true(v.mathis_bps > 2 * s.throughput_bps);
    assert_int_not_equal(v.id, DIAG_LOSS_LIMITED);
}

/* reno at a full link loses packets at the rate Mathis predicts too: a queue of a quarter of
 * the round trip comes first */
static void test_queue_before_loss(void **state)
{
    struct diagnose_sample s = r1_reno_link;
    struct diagnose_verdict v;
    (void)state;

    s.segs_out = 400000;
    s.retrans = 100;
    v = judge(&s);
    assert_true(v.mathis_bps <= 2 * s.throughput_bps);
    assert_int_equal(v.id, DIAG_LINK_CAPACITY);
    /* without the queue it would be loss */
    s.rtt_mean_us = s.min_rtt_us + 100;
    assert_id(s, DIAG_LOSS_LIMITED);
}

static void test_sender_cpu(void **state)
{
    struct diagnose_sample s = r40_reno_cpu;
    struct diagnose_verdict v;
    (void)state;

    /* 64-byte writes: the sender never waited for room; its thread ran 96 % on CPU 1 */
    v = judge(&s);
    assert_int_equal(v.id, DIAG_TX_CPU_LIMITED);
    assert_string_equal(diagnose_id_name(v.id), "tx_cpu_limited");
    assert_contains(v.title, "CPU 1");
    assert_evidence(v, "waited for room in its socket only 0.0% of the time");
    assert_evidence(v, "ran on CPU 1 96% of the time and waited for a CPU 3%");
    /* busy 100 %: TCP's own busy time does not see it at 40 ms */
    assert_true(v.busy >= DIAG_BUSY_FULL);
    /* starved by other work: the advice says so */
    s.snd.run = 0.4;
    s.snd.runq = 0.55;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_TX_CPU_LIMITED);
    assert_contains(v.advice, "other processes use it");
    /* neither busy nor waiting: the application itself */
    s.snd.run = 0.05;
    s.snd.runq = 0.01;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_APP_LIMITED);
    assert_string_equal(v.title, "application limited (sender)");
}

/* A window of a few kB on a path of microseconds: the sending thread runs full (every segment is
 * small), but the window allows about what moved, so the window is the verdict, not the CPU;
 * with a window of megabytes the same CPU figures are the sender's CPU. */
static void test_tiny_window_cpu(void **state)
{
    struct diagnose_sample s = veth_bbr_tinywnd;
    struct diagnose_verdict v;
    (void)state;

    v = judge(&s);
    assert_int_equal(v.id, DIAG_RWND_LIMITED);
    assert_true(v.window_bps < DIAG_WND_CAPS * s.throughput_bps);
    assert_evidence(v, "against the receiver's window of 5.75 KiB");
    assert_evidence(v, "the sending thread was on a CPU 82% of the time");
    assert_evidence(v, "srtt - min_rtt = 32.2 us, under 500 us: no standing queue");
    assert_contains(v.advice, "net.ipv4.tcp_rmem");
    assert_contains(v.tune, "netrig tune --apply --rate 10G --rtt 1ms");
    /* TCP never saw the window limit it: the CPU */
    s.rwnd_us = 0;
    assert_id(s, DIAG_TX_CPU_LIMITED);
    /* a window of 4 MB at the same round trip allows far more than moved: the CPU */
    s = veth_bbr_tinywnd;
    s.snd_wnd = s.wnd_mean = 4194304;
    assert_id(s, DIAG_TX_CPU_LIMITED);
}

static void test_paced(void **state)
{
    struct diagnose_sample s = r40_bbr_paced;
    struct diagnose_verdict v;
    (void)state;

    s.pacing_bps = 100 * M;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_APP_LIMITED);
    assert_evidence(v, "100% of the pacing asked for");
    /* unpaced, the same figures are not the application's */
    s.pacing_bps = 0;
    v = judge(&s);
    assert_int_not_equal(v.id, DIAG_APP_LIMITED);
}

static void test_receiver_cpu(void **state)
{
    struct diagnose_sample s = r40_bbr_link;
    struct diagnose_verdict v;
    (void)state;

    /* the receiving thread always had data queued and ran 97 % on CPU 3 */
    s.rcv.wait = 0.02;
    s.rcv.run = 0.97;
    s.rcv.runq = 0.01;
    s.rcv.cpu = 3;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_RX_CPU_LIMITED);
    assert_contains(v.title, "CPU 3");
    assert_evidence(v, "waited for data only 2.0% of the time");
    /* softirq on the receiver's host */
    s = r40_bbr_link;
    s.rcv.host_known = true;
    s.rcv.host.valid = true;
    s.rcv.host.softirq_max = 0.97;
    s.rcv.host.softirq_cpu = 0;
    s.rcv.host.have_softnet = true;
    s.rcv.host.softnet_squeeze = 3000;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_RX_CPU_LIMITED);
    assert_evidence(v, "CPU 0 spent 97% of its time in softirq");
    assert_evidence(v, "3000 time squeezes (1000/s");
    assert_contains(v.tune, "rps_cpus");
    /* backlog drops count only when our flows lost packets */
    s.rcv.host.softirq_max = 0.2;
    s.rcv.host.softnet_squeeze = 0;
    s.rcv.host.softnet_dropped = 7;
    assert_id(s, DIAG_LINK_CAPACITY);
    s.retrans = 40;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_RX_CPU_LIMITED);
    assert_contains(v.advice, "netdev_max_backlog");
    /* the sender's host counters say nothing about the receiver */
    s = r40_bbr_link;
    s.snd.host_known = true;
    s.snd.host.valid = true;
    s.snd.host.softirq_max = 0.99;
    assert_id(s, DIAG_LINK_CAPACITY);
}

static void test_probe_flows(void **state)
{
    struct diagnose_sample s = r40_reno_rwnd;
    struct diagnose_verdict v;
    (void)state;

    /* a per-flow limit: 2 and 4 flows carry 2x and 3.9x */
    s.nprobes = 2;
    s.probe[0] = (struct diagnose_probe){2, 2 * 163e6};
    s.probe[1] = (struct diagnose_probe){4, 3.9 * 163e6};
    v = judge(&s);
    assert_int_equal(v.id, DIAG_RWND_LIMITED);
    assert_evidence(v, "the sum grows with the flows, a limit of each flow");
    /* flat: a limit the flows share, whatever one flow's window says */
    s.probe[0].throughput_bps = 165e6;
    s.probe[1].throughput_bps = 166e6;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_LINK_CAPACITY);
    assert_evidence(v, "the sum stays flat");
    assert_dbl_near(v.probe_gain, 166.0 / 163.1, 1e-3);
    /* a plateau that more flows grow is no link */
    s = r40_bbr_link;
    s.rtt_mean_us = s.min_rtt_us + 100;
    s.nprobes = 1;
    s.probe[0] = (struct diagnose_probe){2, 2 * s.throughput_bps};
    assert_id(s, DIAG_OK);
}

/* A server in a cgroup with a 0.3 CPU quota: a run the rules would call ok is not ok once its
 * cgroup was throttled, and a heavily throttled end is named before TCP's limits. */
static void test_cpu_quota(void **state)
{
    struct diagnose_sample s = r40_bbr_link;
    struct diagnose_verdict v;
    (void)state;

    s.rtt_mean_us = s.min_rtt_us + 100;
    s.nprobes = 1;
    s.probe[0] = (struct diagnose_probe){2, 2 * s.throughput_bps};
    assert_id(s, DIAG_OK);
    /* one throttled period in 200: still not ok, and the verdict names the quota */
    s.rcv.usage.cg_version = 1;
    s.rcv.usage.cg_has_throttle = true;
    s.rcv.usage.cg_quota_cores = 0.3;
    s.rcv.usage.cg_periods = 200;
    s.rcv.usage.cg_throttled = 1;
    s.rcv.usage.cg_throttled_s = 0.004;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_RX_CPU_LIMITED);
    assert_non_null(strstr(v.title, "cgroup CPU quota of 0.30 CPU on the server"));
    assert_evidence(v, "throttled in 1 of 200 scheduler periods");
    /* counters unknown (an older peer): nothing is claimed */
    s.rcv.usage.cg_version = 0;
    assert_id(s, DIAG_OK);
    /* a throttled sender beats a full receive window */
    s = r40_reno_rwnd;
    assert_id(s, DIAG_RWND_LIMITED);
    s.snd = (struct diagnose_end){.known = s.snd.known,
                                  .wait = s.snd.wait,
                                  .buf = s.snd.buf,
                                  .local = true,
                                  .cpu = -1,
                                  .runq = -1,
                                  .cpu_busy = -1,
                                  .usage = {.cg_version = 1,
                                            .cg_has_throttle = true,
                                            .cg_quota_cores = 0.5,
                                            .cg_periods = 100,
                                            .cg_throttled = 60,
                                            .cg_throttled_s = 1.2}};
    v = judge(&s);
    assert_int_equal(v.id, DIAG_TX_CPU_LIMITED);
    assert_non_null(strstr(v.title, "on the client"));
    assert_evidence(v, "throttled in 60 of 100 scheduler periods (60%)");
}

/* CI, Dec 7: a server with a quota that was not throttled (its receiver, on a busy CPU, was the
 * slower end): the receiver's CPU is the verdict, and both reports show the sender's cgroup so
 * that the reader sees the quota did not bite. */
static void test_cpu_quota_unused(void **state)
{
    struct diagnose_sample s = r40_bbr_link;
    struct diagnose_verdict v;
    char *text = NULL;
    size_t len = 0;
    FILE *f;
    cJSON *doc, *cg;
    (void)state;

    s.rcv.wait = 0.028;
    s.rcv.run = 0.81;
    s.rcv.runq = 0.18;
    s.rcv.cpu = 0;
    s.snd.usage.cg_version = 1;
    s.snd.usage.cg_has_throttle = true;
    s.snd.usage.cg_quota_cores = 0.3;
    s.snd.usage.cg_periods = 10;
    s.snd.usage.cg_throttled = 0;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_RX_CPU_LIMITED);
    doc = diagnose_report_json("127.0.0.1:5201", &s, &v, NULL);
    cg = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "ends"), "sender"),
                             "cgroup");
    assert_non_null(cg);
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(cg, "quota_cores")) == 0.3);
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(cg, "periods")) == 10);
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(cg, "throttled_periods")) == 0);
    /* the run document's cgroup object (cpujson): its version, and 0 for no quota */
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(cg, "version")) == 1);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "ends"), "receiver"), "cgroup")));
    cJSON_Delete(doc);
    f = open_memstream(&text, &len);
    assert_non_null(f);
    diagnose_report_text(f, "127.0.0.1:5201", &s, &v);
    fclose(f);
    assert_non_null(strstr(text, "throttled in 0 of 10 periods"));
    free(text);
}

/* Loopback at 57 Gbit/s on two busy CPUs: both threads wait for a CPU about half the time. */
static void test_cpu_starved(void **state)
{
    struct diagnose_sample s = r40_bbr_link;
    struct diagnose_verdict v;
    (void)state;

    s.throughput_bps = 57.2e9;
    s.same_host = true;
    s.snd.wait = 0.37;
    s.snd.run = 0.46;
    s.snd.runq = 0.41;
    s.snd.cpu = 0;
    s.rcv.wait = 0.41;
    s.rcv.run = 0.44;
    s.rcv.runq = 0.48;
    s.rcv.cpu = 0;
    s.rtt_mean_us = s.min_rtt_us + 270;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_RX_CPU_LIMITED);
    assert_string_equal(v.title, "receiving host's CPU limited (CPU 0)");
    assert_evidence(v, "waited for a CPU 48%");
    assert_evidence(v, "the sending thread too");
    assert_evidence(v, "both ends ran on one host");
    /* the sender the more starved */
    s.snd.runq = 0.6;
    assert_id(s, DIAG_TX_CPU_LIMITED);
    /* the sender the more starved, but it found its buffer full most of the time: the
     * receiver */
    s.snd.wait = 0.6;
    assert_id(s, DIAG_RX_CPU_LIMITED);
    /* a 200 Mbit/s tbf on veth, the host loaded by other work: the receiving thread waited for a
     * CPU 75 % of the time, but for data 90 %, and 10 ms of queue stood at the tbf */
    s = r40_bbr_link;
    s.same_host = true;
    s.min_rtt_us = 13;
    s.rtt_mean_us = 10073;
    s.snd.wait = 0.96;
    s.rcv.wait = 0.90;
    s.rcv.run = 0.13;
    s.rcv.runq = 0.75;
    s.rcv.cpu = 0;
    assert_id(s, DIAG_LINK_CAPACITY);
    /* veth, the receiver's window 4.7 kB and full, the host loaded by other work: the
     * receiving thread waited for a CPU 64 % of the time, srtt grew 0.56 ms over min_rtt 3 us.
     * That delay is the CPUs', not a path's queue: the window (tune makes it 10x faster) */
    s = r40_reno_rwnd;
    s.same_host = true;
    s.throughput_bps = 201e6;
    s.min_rtt_us = 3;
    s.rtt_mean_us = 561;
    s.srtt_us = 561;
    s.wnd_mean = 4740;
    s.snd_wnd = 4740;
    s.inflight_mean = 5070;
    s.rcv.wait = 0.48;
    s.rcv.run = 0.32;
    s.rcv.runq = 0.64;
    s.rcv.cpu = 0;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_RWND_LIMITED);
    assert_evidence(v, "the delay is the CPUs', not a queue on a path");
    /* the same delay with the ends on two hosts is a path's queue */
    s.same_host = false;
    assert_int_not_equal(judge(&s).id, DIAG_RWND_LIMITED);
    /* a mostly idle thread whose rare wake-ups wait long is not starved */
    s = r40_bbr_link;
    s.rcv.run = 0.05;
    s.rcv.runq = 0.3;
    assert_id(s, DIAG_LINK_CAPACITY);
    /* a full send buffer comes first (veth at 16 Gbit/s with 8 KiB: the buffer, not the CPU) */
    s = r40_reno_sndbuf;
    s.snd.wait = 0.37;
    s.snd.run = 0.51;
    s.snd.runq = 0.33;
    assert_id(s, DIAG_SNDBUF_LIMITED);
}

/* Without the application's figures (an older peer; --during) the rules fall back on TCP's. */
static void test_old_peer(void **state)
{
    struct diagnose_sample s = r40_reno_rwnd;
    struct diagnose_verdict v;
    (void)state;

    s.samples = 0;
    s.snd.known = s.rcv.known = false;
    s.snd.buf = s.rcv.buf = 0;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_RWND_LIMITED); /* f_rwnd 81 % */
    assert_dbl_near(v.window_use, -1, 0);
    s = r40_reno_cpu;
    s.samples = 0;
    s.snd.known = s.rcv.known = false;
    s.snd.thread_known = s.rcv.thread_known = false;
    s.busy_us = s.busy_us / 2;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_APP_LIMITED);
    assert_evidence(v, "in flight only 50% of the time");
    s = r40_reno_link;
    s.samples = 0;
    s.snd.known = s.rcv.known = false;
    v = judge(&s);
    assert_int_equal(v.id, DIAG_LINK_CAPACITY); /* the end sample's queue */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_link),
        cmocka_unit_test(test_rwnd),
        cmocka_unit_test(test_sndbuf),
        cmocka_unit_test(test_loss),
        cmocka_unit_test(test_queue_before_loss),
        cmocka_unit_test(test_sender_cpu),
        cmocka_unit_test(test_tiny_window_cpu),
        cmocka_unit_test(test_paced),
        cmocka_unit_test(test_receiver_cpu),
        cmocka_unit_test(test_probe_flows),
        cmocka_unit_test(test_cpu_starved),
        cmocka_unit_test(test_cpu_quota),
        cmocka_unit_test(test_cpu_quota_unused),
        cmocka_unit_test(test_old_peer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
