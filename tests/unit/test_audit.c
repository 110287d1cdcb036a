/* Unit tests for netrig audit on the seed fixture hosts (tests/fixtures/host): the exact
 * findings (id, interface, status, current, recommended) for each host, the BDP arithmetic in
 * the reasons, the fix commands, exit status, JSON and text output, --record and replay, and
 * the one-line errors for a bad --sysroot, --record or -I. */
#define _GNU_SOURCE
#include "test_audit_dump.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit_report.h"

#define FIX(name) NETRIG_FIXTURES "/" name
#define N(a)      (sizeof(a) / sizeof((a)[0]))
#define G         1000000000ULL
#define MS        1000000ULL

/* seed 000 before tuning, --rate 100G --rtt 1ms: the seed's own list of problems */
static const struct want seed000_before[] = {
    {"host.kernel", "", "info", "4.13.0-38-generic", ""},
    {"sysctl.congestion_control", "", "info", "cubic", "bbr"},
    {"sysctl.tcp_mtu_probing", "", "info", "0", "1"},
    {"sysctl.tcp_no_metrics_save", "", "warn", "0", "1"},
    {"sysctl.tcp_slow_start_after_idle", "", "info", "1", "0"},
    {"sysctl.tcp_timestamps", "", "ok", "1", "1"},
    {"sysctl.tcp_sack", "", "ok", "1", "1"},
    {"sysctl.tcp_window_scaling", "", "ok", "1", "1"},
    {"sysctl.tcp_notsent_lowat", "", "info", "4294967295", "131072"},
    {"sysctl.tcp_low_latency", "", "ok", "0", "0"},
    {"sysctl.tcp_adv_win_scale", "", "ok", "1", "1"},
    {"sysctl.somaxconn", "", "info", "128", "4096"},
    {"sysctl.ip_local_port_range", "", "ok", "32768 60999", "32768 60999"},
    {"netfilter.conntrack", "", "ok", "not loaded", ""},
    {"sysctl.tcp_rmem_max", "", "bad", "6291456", "33554432"},
    {"sysctl.tcp_wmem_max", "", "bad", "4194304", "33554432"},
    {"sysctl.rmem_max", "", "bad", "212992", "33554432"},
    {"sysctl.wmem_max", "", "bad", "212992", "33554432"},
    {"sysctl.optmem_max", "", "info", "20480", "1048576"},
    {"sysctl.tcp_mem", "", "ok", "4595025 6126700 9190050", "4595025 6126700 9190050"},
    {"qdisc.default", "", "warn", "pfifo_fast", "fq"},
    {"qdisc.fq_available", "", "ok", "fq yes, fq_codel yes", ""},
    {"sysctl.netdev_max_backlog", "", "warn", "1000", "250000"},
    {"sysctl.netdev_budget", "", "ok", "300", "300"},
    {"sysctl.busy_poll", "", "ok", "busy_read 0 busy_poll 0", "busy_read 0 busy_poll 0"},
    {"nic.link", "enp94s0f0", "ok", "100000 Mb/s", "100000 Mb/s"},
    {"nic.mtu", "enp94s0f0", "warn", "1500", "9000"},
    {"nic.txqueuelen", "enp94s0f0", "warn", "1000", "10000"},
    {"nic.driver", "enp94s0f0", "info", "mlx5_core 5.0-0, firmware 16.22.1002 (MT_0000000008)", ""},
    {"nic.tso", "enp94s0f0", "ok", "on", "on"},
    {"nic.gso", "enp94s0f0", "ok", "on", "on"},
    {"nic.gro", "enp94s0f0", "ok", "on", "on"},
    {"nic.rx_checksum", "enp94s0f0", "ok", "on", "on"},
    {"nic.lro", "enp94s0f0", "warn", "off", "on"},
    {"nic.rxhash", "enp94s0f0", "ok", "on", "on"},
    {"nic.rings", "enp94s0f0", "info", "rx 1024 tx 1024", "rx 8192 tx 8192"},
    {"nic.coalesce", "enp94s0f0", "warn", "adaptive-rx on rx-usecs 8 rx-frames 128",
     "adaptive-rx off rx-usecs 8 rx-frames 128"},
    {"nic.channels", "enp94s0f0", "ok", "36", "36"},
    {"nic.pause", "enp94s0f0", "ok", "autoneg off rx on tx on", "autoneg off rx on tx on"},
    {"qdisc.root", "enp94s0f0", "warn", "mq (pfifo_fast per queue)", "mq (fq per queue)"},
    {"nic.numa", "enp94s0f0", "info", "node 0, CPUs 0-17,36-53", ""},
    {"nic.irq_affinity", "enp94s0f0", "ok", "37 IRQs on CPUs 0-17,36-53",
     "37 IRQs on CPUs 0-17,36-53"},
    {"nic.rps", "enp94s0f0", "ok", "36 rx queues, RPS off", "36 rx queues, RPS off"},
    {"pcie.link", "enp94s0f0", "ok", "8.0 GT/s x16", "8.0 GT/s x16"},
    {"pcie.bandwidth", "enp94s0f0", "ok", "126.0 Gbit/s raw", "126.0 Gbit/s raw"},
    {"pcie.max_payload", "enp94s0f0", "info", "256", "256"},
    {"pcie.max_read_req", "enp94s0f0", "warn", "512", "4096"},
    {"nic.interface", "enp94s0f1", "skipped", "", ""},
    {"nic.interface", "lo", "skipped", "", ""},
    {"irq.irqbalance", "", "warn", "running (pid 1412)", "not running"},
    {"cpu.governor", "", "warn", "ondemand", "performance"},
    {"cpu.frequency", "", "info", "1000 MHz", ""},
    {"cpu.cstates", "", "info", "POLL 0us, C1 2us, C1E 10us, C6 133us",
     "no state of 20 us or more (C6 off)"},
    {"cpu.smt", "", "info", "on", "off"},
    {"cpu.iommu", "", "ok", "off", "off"},
};

/* seed 000 after the seed's tuning, --rate 100G --rtt 1ms: nothing at warn or bad */
static const struct want seed000_after[] = {
    {"host.kernel", "", "info", "4.13.0-38-generic", ""},
    {"sysctl.congestion_control", "", "ok", "htcp", "htcp"},
    {"sysctl.tcp_mtu_probing", "", "ok", "1", "1"},
    {"sysctl.tcp_no_metrics_save", "", "ok", "1", "1"},
    {"sysctl.tcp_slow_start_after_idle", "", "info", "1", "0"},
    {"sysctl.tcp_timestamps", "", "ok", "1", "1"},
    {"sysctl.tcp_sack", "", "ok", "1", "1"},
    {"sysctl.tcp_window_scaling", "", "ok", "1", "1"},
    {"sysctl.tcp_notsent_lowat", "", "info", "4294967295", "131072"},
    {"sysctl.tcp_low_latency", "", "ok", "0", "0"},
    {"sysctl.tcp_adv_win_scale", "", "ok", "1", "1"},
    {"sysctl.somaxconn", "", "info", "128", "4096"},
    {"sysctl.ip_local_port_range", "", "ok", "32768 60999", "32768 60999"},
    {"netfilter.conntrack", "", "ok", "not loaded", ""},
    {"sysctl.tcp_rmem_max", "", "ok", "268435456", "268435456"},
    {"sysctl.tcp_wmem_max", "", "ok", "268435456", "268435456"},
    {"sysctl.rmem_max", "", "ok", "563870912", "563870912"},
    {"sysctl.wmem_max", "", "ok", "563870912", "563870912"},
    {"sysctl.optmem_max", "", "info", "20480", "1048576"},
    {"sysctl.tcp_mem", "", "ok", "4595025 6126700 9190050", "4595025 6126700 9190050"},
    {"qdisc.default", "", "ok", "fq", "fq"},
    {"qdisc.fq_available", "", "ok", "fq yes, fq_codel yes", ""},
    {"sysctl.netdev_max_backlog", "", "ok", "300000", "300000"},
    {"sysctl.netdev_budget", "", "ok", "300", "300"},
    {"sysctl.busy_poll", "", "ok", "busy_read 0 busy_poll 0", "busy_read 0 busy_poll 0"},
    {"nic.link", "enp94s0f0", "ok", "100000 Mb/s", "100000 Mb/s"},
    {"nic.mtu", "enp94s0f0", "ok", "9000", "9000"},
    {"nic.txqueuelen", "enp94s0f0", "ok", "20000", "20000"},
    {"nic.driver", "enp94s0f0", "info", "mlx5_core 5.0-0, firmware 16.22.1002 (MT_0000000008)", ""},
    {"nic.tso", "enp94s0f0", "ok", "on", "on"},
    {"nic.gso", "enp94s0f0", "ok", "on", "on"},
    {"nic.gro", "enp94s0f0", "ok", "on", "on"},
    {"nic.rx_checksum", "enp94s0f0", "ok", "on", "on"},
    {"nic.lro", "enp94s0f0", "ok", "on", "on"},
    {"nic.rxhash", "enp94s0f0", "ok", "on", "on"},
    {"nic.rings", "enp94s0f0", "info", "rx 1024 tx 1024", "rx 8192 tx 8192"},
    {"nic.coalesce", "enp94s0f0", "ok", "adaptive-rx off rx-usecs 8 rx-frames 128",
     "adaptive-rx off rx-usecs 8 rx-frames 128"},
    {"nic.channels", "enp94s0f0", "ok", "36", "36"},
    {"nic.pause", "enp94s0f0", "ok", "autoneg off rx on tx on", "autoneg off rx on tx on"},
    {"qdisc.root", "enp94s0f0", "ok", "mq (fq per queue)", "mq (fq per queue)"},
    {"nic.numa", "enp94s0f0", "info", "node 0, CPUs 0-17,36-53", ""},
    {"nic.irq_affinity", "enp94s0f0", "ok", "37 IRQs on CPUs 0-17,36-53",
     "37 IRQs on CPUs 0-17,36-53"},
    {"nic.rps", "enp94s0f0", "ok", "36 rx queues, RPS off", "36 rx queues, RPS off"},
    {"pcie.link", "enp94s0f0", "ok", "8.0 GT/s x16", "8.0 GT/s x16"},
    {"pcie.bandwidth", "enp94s0f0", "ok", "126.0 Gbit/s raw", "126.0 Gbit/s raw"},
    {"pcie.max_payload", "enp94s0f0", "info", "256", "256"},
    {"pcie.max_read_req", "enp94s0f0", "ok", "4096", "4096"},
    {"nic.interface", "enp94s0f1", "skipped", "", ""},
    {"nic.interface", "lo", "skipped", "", ""},
    {"irq.irqbalance", "", "ok", "not running", "not running"},
    {"cpu.governor", "", "ok", "performance", "performance"},
    {"cpu.frequency", "", "info", "2301 MHz", ""},
    {"cpu.cstates", "", "info", "POLL 0us, C1 2us, C1E 10us, C6 133us",
     "no state of 20 us or more (C6 off)"},
    {"cpu.smt", "", "info", "on", "off"},
    {"cpu.iommu", "", "ok", "off", "off"},
};

/* seed 001 (2007 WAN gateway, Chelsio 10G), --rate 10G --rtt 30ms */
static const struct want seed001_wan[] = {
    {"host.kernel", "", "info", "2.6.18-8.1.14.el5", ""},
    {"sysctl.congestion_control", "", "warn", "bic", "htcp"},
    {"sysctl.tcp_mtu_probing", "", "warn", "0", "1"},
    {"sysctl.tcp_no_metrics_save", "", "warn", "0", "1"},
    {"sysctl.tcp_slow_start_after_idle", "", "info", "1", "0"},
    {"sysctl.tcp_timestamps", "", "ok", "1", "1"},
    {"sysctl.tcp_sack", "", "ok", "1", "1"},
    {"sysctl.tcp_window_scaling", "", "ok", "1", "1"},
    {"sysctl.tcp_notsent_lowat", "", "skipped", "", ""},
    {"sysctl.tcp_low_latency", "", "ok", "0", "0"},
    {"sysctl.tcp_adv_win_scale", "", "ok", "2", "2"},
    {"sysctl.somaxconn", "", "info", "128", "4096"},
    {"sysctl.ip_local_port_range", "", "ok", "32768 61000", "32768 61000"},
    {"netfilter.conntrack", "", "ok", "not loaded", ""},
    {"sysctl.tcp_rmem_max", "", "bad", "174760", "134217728"},
    {"sysctl.tcp_wmem_max", "", "bad", "131072", "134217728"},
    {"sysctl.rmem_max", "", "bad", "131071", "134217728"},
    {"sysctl.wmem_max", "", "bad", "131071", "134217728"},
    {"sysctl.optmem_max", "", "info", "20480", "1048576"},
    {"sysctl.tcp_mem", "", "ok", "786432 1048576 1572864", "786432 1048576 1572864"},
    {"qdisc.default", "", "skipped", "", ""},
    {"qdisc.fq_available", "", "info", "fq no, fq_codel no", ""},
    {"sysctl.netdev_max_backlog", "", "warn", "1000", "30000"},
    {"sysctl.netdev_budget", "", "ok", "300", "300"},
    {"sysctl.busy_poll", "", "skipped", "", ""},
    {"nic.link", "eth3", "ok", "10000 Mb/s", "10000 Mb/s"},
    {"nic.mtu", "eth3", "ok", "9000", "9000"},
    {"nic.txqueuelen", "eth3", "warn", "1000", "10000"},
    {"nic.driver", "eth3", "info", "cxgb 2.1.4a, firmware N/A", ""},
    {"nic.tso", "eth3", "ok", "on", "on"},
    {"nic.gso", "eth3", "ok", "on", "on"},
    {"nic.gro", "eth3", "info", "off [fixed]", ""},
    {"nic.rx_checksum", "eth3", "ok", "on", "on"},
    {"nic.lro", "eth3", "info", "off [fixed]", ""},
    {"nic.rxhash", "eth3", "info", "off [fixed]", ""},
    {"nic.rings", "eth3", "info", "rx 4096 tx 1024", "rx 16384 tx 16384"},
    {"nic.coalesce", "eth3", "skipped", "", ""},
    {"nic.channels", "eth3", "skipped", "", ""},
    {"nic.pause", "eth3", "ok", "autoneg on rx on tx on", "autoneg on rx on tx on"},
    {"qdisc.root", "eth3", "warn", "pfifo_fast", "fq"},
    {"nic.numa", "eth3", "info", "node unknown, CPUs 0-3", ""},
    {"nic.irq_affinity", "eth3", "ok", "1 IRQ on CPUs 0-3", "1 IRQ on CPUs 0-3"},
    {"nic.rps", "eth3", "skipped", "", ""},
    {"pcie.link", "eth3", "skipped", "", ""},
    {"pcie.bandwidth", "eth3", "skipped", "", ""},
    {"pcie.max_payload", "eth3", "skipped", "", ""},
    {"pcie.max_read_req", "eth3", "skipped", "", ""},
    {"nic.interface", "lo", "skipped", "", ""},
    {"irq.irqbalance", "", "ok", "not running", "not running"},
    {"cpu.governor", "", "skipped", "", ""},
    {"cpu.frequency", "", "info", "2993 MHz", ""},
    {"cpu.cstates", "", "skipped", "", ""},
    {"cpu.smt", "", "skipped", "", ""},
    {"cpu.iommu", "", "ok", "off", "off"},
};

/* seed 002 (IPoIB, ConnectX-2), no --rate/--rtt: ib0's 40 Gbit/s and the default 1 ms */
static const struct want seed002_ipoib[] = {
    {"host.kernel", "", "info", "3.12.28-4-default", ""},
    {"sysctl.congestion_control", "", "info", "cubic", "htcp"},
    {"sysctl.tcp_mtu_probing", "", "warn", "0", "1"},
    {"sysctl.tcp_no_metrics_save", "", "warn", "0", "1"},
    {"sysctl.tcp_slow_start_after_idle", "", "info", "1", "0"},
    {"sysctl.tcp_timestamps", "", "warn", "0", "1"},
    {"sysctl.tcp_sack", "", "ok", "1", "1"},
    {"sysctl.tcp_window_scaling", "", "ok", "1", "1"},
    {"sysctl.tcp_notsent_lowat", "", "info", "4294967295", "131072"},
    {"sysctl.tcp_low_latency", "", "info", "1", "1"},
    {"sysctl.tcp_adv_win_scale", "", "ok", "1", "1"},
    {"sysctl.somaxconn", "", "info", "128", "4096"},
    {"sysctl.ip_local_port_range", "", "ok", "32768 61000", "32768 61000"},
    {"netfilter.conntrack", "", "ok", "not loaded", ""},
    {"sysctl.tcp_rmem_max", "", "bad", "4194304", "16777216"},
    {"sysctl.tcp_wmem_max", "", "bad", "4194304", "16777216"},
    {"sysctl.rmem_max", "", "bad", "4194304", "16777216"},
    {"sysctl.wmem_max", "", "bad", "4194304", "16777216"},
    {"sysctl.optmem_max", "", "ok", "4194304", "4194304"},
    {"sysctl.tcp_mem", "", "ok", "383877 511837 767754", "383877 511837 767754"},
    {"qdisc.default", "", "warn", "pfifo_fast", "fq"},
    {"qdisc.fq_available", "", "ok", "fq yes, fq_codel yes", ""},
    {"sysctl.netdev_max_backlog", "", "ok", "250000", "250000"},
    {"sysctl.netdev_budget", "", "ok", "300", "300"},
    {"sysctl.busy_poll", "", "ok", "busy_read 0 busy_poll 0", "busy_read 0 busy_poll 0"},
    {"nic.link", "ib0", "ok", "40000 Mb/s", "40000 Mb/s"},
    {"nic.mtu", "ib0", "ok", "65520", "65520"},
    {"nic.txqueuelen", "ib0", "warn", "256", "10000"},
    {"nic.driver", "ib0", "info", "ib_ipoib 1.0.0, firmware 2.9.1000", ""},
    {"nic.tso", "ib0", "info", "off [fixed]", ""},
    {"nic.gso", "ib0", "ok", "on", "on"},
    {"nic.gro", "ib0", "ok", "on", "on"},
    {"nic.rx_checksum", "ib0", "info", "off [fixed]", ""},
    {"nic.lro", "ib0", "info", "off [fixed]", ""},
    {"nic.rxhash", "ib0", "info", "off [fixed]", ""},
    {"nic.rings", "ib0", "skipped", "", ""},
    {"nic.coalesce", "ib0", "info", "adaptive-rx off rx-usecs 10 rx-frames 16", "adaptive-rx on"},
    {"nic.channels", "ib0", "info", "1 rx queue", "1 rx queue"},
    {"nic.pause", "ib0", "skipped", "", ""},
    {"qdisc.root", "ib0", "warn", "pfifo_fast", "fq"},
    {"nic.numa", "ib0", "info", "node unknown, CPUs 0-7", ""},
    {"nic.irq_affinity", "ib0", "ok", "9 IRQs on CPUs 0-7", "9 IRQs on CPUs 0-7"},
    {"nic.rps", "ib0", "warn", "rps_cpus 00", "rps_cpus ff"},
    {"pcie.link", "ib0", "ok", "5.0 GT/s x8", "5.0 GT/s x8"},
    {"pcie.bandwidth", "ib0", "bad", "32.00 Gbit/s raw", ">= 50.00 Gbit/s raw"},
    {"pcie.max_payload", "ib0", "ok", "256", "256"},
    {"pcie.max_read_req", "ib0", "warn", "512", "4096"},
    {"nic.interface", "lo", "skipped", "", ""},
    {"irq.irqbalance", "", "ok", "not running", "not running"},
    {"cpu.governor", "", "skipped", "", ""},
    {"cpu.frequency", "", "info", "3400 MHz", ""},
    {"cpu.cstates", "", "skipped", "", ""},
    {"cpu.smt", "", "skipped", "", ""},
    {"cpu.iommu", "", "ok", "off", "off"},
};

static const struct audit_finding *must_find(const struct audit_ctx *ctx, const char *id,
                                             const char *iface)
{
    const struct audit_finding *f = audit_find(ctx, id, iface);

    if (!f)
        fail_msg("no finding %s [%s]", id, iface ? iface : "");
    return f;
}

static void test_seed000_before(void **state)
{
    struct audit_ctx *ctx =
        audit_fixture(FIX("seed000-before"), 100 * G, 1 * MS, AUDIT_PROFILE_THROUGHPUT, NULL);
    const struct audit_finding *f;

    (void)state;
    audit_dump(ctx, "seed000-before");
    audit_expect(ctx, seed000_before, N(seed000_before));
    assert_int_equal(audit_exit_status(ctx), 1);
    f = must_find(ctx, "sysctl.tcp_rmem_max", NULL);
    assert_contains(f->reason, "BDP 11.92 MiB at 100.0 Gbit/s x 1 ms");
    /* 4.13 with tcp_adv_win_scale 1: the window is half the buffer */
    assert_contains(f->reason, "gives a window of 3.00 MiB (tcp_adv_win_scale 1: 0.5 of it), "
                               "which caps one flow at 25.17 Gbit/s; 33554432 gives a window of "
                               "16.00 MiB or more, more than the BDP");
    assert_string_equal(f->fix, "sysctl -w net.ipv4.tcp_rmem=\"4096 87380 33554432\"");
    assert_contains(f->persist, "/etc/sysctl.d/");
    assert_false(f->persistent);
    assert_false(f->per_netns); /* 4.13: tcp_rmem became per netns in 4.15 */
    f = must_find(ctx, "pcie.max_read_req", "enp94s0f0");
    assert_string_equal(f->fix, "setpci -s 0000:5e:00.0 68.w=5936"); /* the seed's command */
    f = must_find(ctx, "irq.irqbalance", NULL);
    assert_string_equal(f->fix, "systemctl disable --now irqbalance");
    assert_true(f->persistent);
    f = must_find(ctx, "nic.coalesce", "enp94s0f0");
    assert_string_equal(f->fix, "ethtool -C enp94s0f0 adaptive-rx off rx-usecs 8 rx-frames 128");
    f = must_find(ctx, "nic.lro", "enp94s0f0");
    assert_string_equal(f->fix, "ethtool -K enp94s0f0 lro on");
    f = must_find(ctx, "qdisc.root", "enp94s0f0");
    assert_contains(f->fix, "net.core.default_qdisc=fq");
    f = must_find(ctx, "nic.interface", "enp94s0f1");
    assert_contains(f->reason, "operstate 'down'");
    f = must_find(ctx, "nic.interface", "lo");
    assert_contains(f->reason, "loopback");
    audit_destroy(ctx);
}

static void test_seed000_after(void **state)
{
    struct audit_ctx *ctx =
        audit_fixture(FIX("seed000-after"), 100 * G, 1 * MS, AUDIT_PROFILE_THROUGHPUT, NULL);
    size_t n, counts[AUDIT_STATUS_COUNT];
    const struct audit_finding *f = audit_findings(ctx, &n);
    char verdict[256];

    (void)state;
    audit_dump(ctx, "seed000-after");
    audit_expect(ctx, seed000_after, N(seed000_after));
    for (size_t i = 0; i < n; i++)
        if (f[i].status == AUDIT_WARN || f[i].status == AUDIT_BAD)
            fail_msg("%s [%s] is %s: %s", f[i].id, f[i].iface, audit_status_name(f[i].status),
                     f[i].reason);
    audit_count(ctx, counts);
    assert_int_equal(counts[AUDIT_WARN] + counts[AUDIT_BAD], 0);
    assert_int_equal(audit_exit_status(ctx), 0);
    audit_verdict(ctx, verdict, sizeof(verdict));
    assert_contains(verdict, "nothing to fix for 100.0 Gbit/s x 1 ms");
    assert_contains(must_find(ctx, "qdisc.fq_available", NULL)->reason, "fq is in use");
    audit_destroy(ctx);
}

static void test_seed001_wan(void **state)
{
    struct audit_ctx *ctx =
        audit_fixture(FIX("seed001-wan"), 10 * G, 30 * MS, AUDIT_PROFILE_THROUGHPUT, NULL);
    const struct audit_target *t = audit_get_target(ctx);
    const struct audit_finding *f;

    (void)state;
    audit_dump(ctx, "seed001-wan");
    audit_expect(ctx, seed001_wan, N(seed001_wan));
    assert_int_equal(audit_exit_status(ctx), 1);
    assert_dbl_near(t->bdp_bytes, 37.5e6, 1);
    /* the BDP arithmetic with the kernel's overhead (2.6.18, tcp_adv_win_scale 2: 3/4) */
    f = must_find(ctx, "sysctl.tcp_rmem_max", NULL);
    assert_string_equal(f->reason, "BDP 35.76 MiB at 10.00 Gbit/s x 30 ms; net.ipv4.tcp_rmem "
                                   "max 170.7 KiB gives a window of 128.0 KiB (tcp_adv_win_scale "
                                   "2: 0.75 of it), which caps one flow at 34.95 Mbit/s; "
                                   "134217728 gives a window of 96.00 MiB or more, more than "
                                   "the BDP");
    assert_string_equal(f->fix, "sysctl -w net.ipv4.tcp_rmem=\"4096 87380 134217728\"");
    f = must_find(ctx, "sysctl.tcp_wmem_max", NULL);
    assert_contains(f->reason, "net.ipv4.tcp_wmem max 128.0 KiB gives 64.00-125.4 KiB in flight");
    assert_contains(f->reason, "which caps one flow at 17.48-34.25 Mbit/s");
    f = must_find(ctx, "sysctl.rmem_max", NULL);
    assert_contains(f->reason, "BDP 35.76 MiB at 10.00 Gbit/s x 30 ms");
    assert_contains(f->reason, "gets at most 2 x 131071 = 256.0 KiB: a window of 192.0 KiB");
    assert_contains(f->reason, "which caps that flow at 52.43 Mbit/s");
    assert_string_equal(f->fix, "sysctl -w net.core.rmem_max=134217728");
    /* the seed's own run: iperf -w got 2 x 131071 of send buffer and moved 56 Mbit/s over
     * 30 ms, inside the send-side model */
    f = must_find(ctx, "sysctl.wmem_max", NULL);
    assert_contains(f->reason, "SO_SNDBUF");
    assert_contains(f->reason, "which caps that flow at 34.95-68.51 Mbit/s");
    f = must_find(ctx, "sysctl.congestion_control", NULL);
    assert_contains(f->fix, "modprobe tcp_htcp");
    f = must_find(ctx, "qdisc.fq_available", NULL);
    assert_contains(f->reason, "fq is not available in this kernel (no sch_fq");
    f = must_find(ctx, "qdisc.root", "eth3");
    assert_contains(f->fix, "fq is not available in this kernel (no sch_fq)");
    f = must_find(ctx, "pcie.max_read_req", "eth3");
    assert_contains(f->reason, "no PCI Express capability");
    f = must_find(ctx, "nic.irq_affinity", "eth3"); /* from /proc/interrupts: IRQ 217 */
    assert_string_equal(f->current, "1 IRQ on CPUs 0-3");
    audit_destroy(ctx);
}

static void test_seed002_ipoib(void **state)
{
    struct audit_ctx *ctx =
        audit_fixture(FIX("seed002-ipoib"), 0, 0, AUDIT_PROFILE_THROUGHPUT, NULL);
    const struct audit_target *t = audit_get_target(ctx);
    const struct audit_finding *f;

    (void)state;
    audit_dump(ctx, "seed002-ipoib");
    audit_expect(ctx, seed002_ipoib, N(seed002_ipoib));
    assert_int_equal(audit_exit_status(ctx), 1);
    assert_dbl_near(t->rate_bps, 40e9, 1);
    assert_dbl_near(t->rtt_s, 0.001, 1e-12);
    assert_string_equal(t->rate_source, "link speed of ib0");
    f = must_find(ctx, "nic.rps", "ib0"); /* the seed's ibfast.sh */
    assert_string_equal(f->fix, "echo ff > /sys/class/net/ib0/queues/rx-0/rps_cpus");
    f = must_find(ctx, "pcie.bandwidth", "ib0");
    assert_contains(f->reason, "5.0 GT/s x8 carries 32.00 Gbit/s raw");
    f = must_find(ctx, "sysctl.tcp_low_latency", NULL);
    assert_contains(f->reason, "before 4.14");
    audit_destroy(ctx);
}

/* The latency profile judges the tuned host differently. */
static void test_latency_profile(void **state)
{
    static const struct {
        const char *id, *iface, *status;
    } want[] = {
        {"sysctl.tcp_slow_start_after_idle", "", "warn"},
        {"sysctl.tcp_notsent_lowat", "", "warn"},
        {"sysctl.busy_poll", "", "info"},
        {"nic.coalesce", "enp94s0f0", "ok"}, /* adaptive-rx off, rx-usecs 8 */
        {"cpu.cstates", "", "warn"},
        {"sysctl.netdev_max_backlog", "", "ok"},
        {"nic.mtu", "enp94s0f0", "ok"},
    };
    struct audit_ctx *ctx =
        audit_fixture(FIX("seed000-after"), 100 * G, 1 * MS, AUDIT_PROFILE_LATENCY, NULL);

    (void)state;
    for (size_t i = 0; i < N(want); i++) {
        const struct audit_finding *f = must_find(ctx, want[i].id, want[i].iface);
        if (strcmp(audit_status_name(f->status), want[i].status))
            fail_msg("%s: %s, want %s", want[i].id, audit_status_name(f->status), want[i].status);
    }
    assert_string_equal(must_find(ctx, "sysctl.tcp_notsent_lowat", NULL)->recommended, "16384");
    audit_destroy(ctx);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void rm_tree(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

static bool file_exists(const char *dir, const char *rel)
{
    char path[1024];
    struct stat st;

    snprintf(path, sizeof(path), "%s/%s", dir, rel);
    return stat(path, &st) == 0;
}

struct file_set {
    char (*path)[256];
    size_t n;
};

static void list_rel(const char *top, const char *rel, struct file_set *fs)
{
    char dir[768];
    DIR *d;
    struct dirent *e;

    snprintf(dir, sizeof(dir), "%s/%s", top, rel);
    d = opendir(dir);
    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char sub[256], full[1024];
        struct stat st;
        if (e->d_name[0] == '.')
            continue;
        snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
        snprintf(full, sizeof(full), "%s/%s", top, sub);
        assert_int_equal(lstat(full, &st), 0);
        if (S_ISDIR(st.st_mode))
            list_rel(top, sub, fs);
        else if (fs->n < 4096)
            snprintf(fs->path[fs->n++], sizeof(fs->path[0]), "%s", sub);
    }
    closedir(d);
}

static int cmp_path(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

static void same_files(const char *a, const char *b)
{
    struct file_set fa = {.path = calloc(4096, 256)}, fb = {.path = calloc(4096, 256)};

    assert_non_null(fa.path);
    assert_non_null(fb.path);
    list_rel(a, "", &fa);
    list_rel(b, "", &fb);
    qsort(fa.path, fa.n, sizeof(fa.path[0]), cmp_path);
    qsort(fb.path, fb.n, sizeof(fb.path[0]), cmp_path);
    for (size_t i = 0; i < fa.n && i < fb.n; i++)
        if (strcmp(fa.path[i], fb.path[i]))
            fail_msg("fixture %s and its record differ at '%s' vs '%s'", a, fa.path[i], fb.path[i]);
    assert_int_equal(fa.n, fb.n);
    free(fa.path);
    free(fb.path);
}

/* --record writes what the checks read (and the ethtool/PCI answers); replaying the record
 * gives the same findings, field for field. */
static void test_record_replay(void **state)
{
    static const char *const hosts[] = {"seed000-before", "seed000-after", "seed001-wan",
                                        "seed002-ipoib"};

    (void)state;
    for (size_t h = 0; h < N(hosts); h++) {
        char tmpl[] = "/tmp/netrig-audit-rec.XXXXXX", rec[64], root[512];
        struct audit_ctx *a, *b;
        size_t na, nb;
        const struct audit_finding *fa, *fb;

        assert_non_null(mkdtemp(tmpl));
        snprintf(rec, sizeof(rec), "%s/host", tmpl);
        snprintf(root, sizeof(root), NETRIG_FIXTURES "/%s", hosts[h]);
        a = audit_fixture(root, 10 * G, 30 * MS, AUDIT_PROFILE_THROUGHPUT, rec);
        b = audit_fixture(rec, 10 * G, 30 * MS, AUDIT_PROFILE_THROUGHPUT, NULL);
        fa = audit_findings(a, &na);
        fb = audit_findings(b, &nb);
        assert_int_equal(na, nb);
        for (size_t i = 0; i < na; i++) {
            if (memcmp(&fa[i], &fb[i], sizeof(fa[i])) &&
                (strcmp(fa[i].id, fb[i].id) || strcmp(fa[i].current, fb[i].current) ||
                 strcmp(fa[i].recommended, fb[i].recommended) ||
                 strcmp(fa[i].reason, fb[i].reason) || strcmp(fa[i].fix, fb[i].fix) ||
                 fa[i].status != fb[i].status))
                fail_msg("%s: finding %zu differs after replay: %s [%s] '%s' vs %s [%s] '%s'",
                         hosts[h], i, fa[i].id, audit_status_name(fa[i].status), fa[i].reason,
                         fb[i].id, audit_status_name(fb[i].status), fb[i].reason);
        }
        assert_true(file_exists(rec, "proc/sys/net/ipv4/tcp_rmem"));
        /* the fixture holds only what the checks read, so the record is the same tree */
        same_files(root, rec);
        audit_destroy(a);
        audit_destroy(b);
        rm_tree(tmpl);
    }
}

static void expect_create_error(const struct audit_opts *o, const char *needle)
{
    char err[640] = "";
    struct audit_ctx *ctx = audit_create(o, err, sizeof(err));

    assert_null(ctx);
    assert_contains(err, needle);
    assert_null(strchr(err, '\n')); /* one line */
}

static void test_bad_options(void **state)
{
    char tmpl[] = "/tmp/netrig-audit-opt.XXXXXX", file[96], err[640] = "";
    struct audit_opts o = {0};
    struct audit_ctx *ctx;
    FILE *fp;

    (void)state;
    assert_non_null(mkdtemp(tmpl));
    o.sysroot = "/nonexistent/netrig-sysroot";
    expect_create_error(&o, "--sysroot '/nonexistent/netrig-sysroot' is not a directory");
    o.sysroot = tmpl; /* exists, but has no proc/ */
    expect_create_error(&o, "has no proc/ directory");
    snprintf(file, sizeof(file), "%s/x", tmpl);
    fp = fopen(file, "w");
    assert_non_null(fp);
    fclose(fp);
    o.sysroot = FIX("seed001-wan");
    o.record_dir = tmpl; /* not empty */
    expect_create_error(&o, "is not empty");
    o.record_dir = FIX("seed001-wan");
    o.sysroot = FIX("seed001-wan");
    expect_create_error(&o, "is the --sysroot itself");
    o.record_dir = NULL;
    o.iface = "this-name-is-far-too-long";
    expect_create_error(&o, "for -I is not valid");
    o.iface = "nope0";
    ctx = audit_create(&o, err, sizeof(err));
    assert_non_null(ctx);
    assert_int_equal(audit_run(ctx, err, sizeof(err)), -1);
    assert_contains(err, "no interface 'nope0'");
    assert_contains(err, "eth3, lo");
    audit_destroy(ctx);
    rm_tree(tmpl);
}

/* -I audits the named interface only; a loopback named explicitly is still skipped. */
static void test_named_interface(void **state)
{
    struct audit_opts o = {.sysroot = FIX("seed000-before"), .iface = "enp94s0f1"};
    char err[640];
    struct audit_ctx *ctx = audit_create(&o, err, sizeof(err));

    (void)state;
    assert_non_null(ctx);
    assert_int_equal(audit_run(ctx, err, sizeof(err)), 0);
    /* down, but named: audited; no other interface appears */
    assert_non_null(audit_find(ctx, "nic.mtu", "enp94s0f1"));
    assert_null(audit_find(ctx, "nic.mtu", "enp94s0f0"));
    assert_null(audit_find(ctx, "nic.interface", "lo"));
    audit_destroy(ctx);
    o.iface = "lo";
    ctx = audit_create(&o, err, sizeof(err));
    assert_int_equal(audit_run(ctx, err, sizeof(err)), 0);
    assert_int_equal(must_find(ctx, "nic.interface", "lo")->status, AUDIT_SKIPPED);
    audit_destroy(ctx);
}

static const char *const finding_keys[] = {"id",      "iface",       "group",    "status",
                                           "current", "recommended", "reason",   "fix",
                                           "persist", "persistent",  "per_netns"};

static void test_json(void **state)
{
    struct audit_ctx *ctx =
        audit_fixture(FIX("seed001-wan"), 10 * G, 30 * MS, AUDIT_PROFILE_THROUGHPUT, NULL);
    char *s = audit_report_json_string(ctx);
    cJSON *doc = s ? cJSON_Parse(s) : NULL, *t, *v, *arr, *it;
    size_t n;

    (void)state;
    assert_non_null(doc);
    t = cJSON_GetObjectItem(doc, "target");
    assert_dbl_near(cJSON_GetObjectItem(t, "rate_bps")->valuedouble, 10e9, 1);
    assert_dbl_near(cJSON_GetObjectItem(t, "rtt_s")->valuedouble, 0.03, 1e-12);
    assert_dbl_near(cJSON_GetObjectItem(t, "bdp_bytes")->valuedouble, 37.5e6, 1);
    v = cJSON_GetObjectItem(doc, "verdict");
    assert_string_equal(cJSON_GetObjectItem(v, "status")->valuestring, "bad");
    assert_int_equal(cJSON_GetObjectItem(v, "exit_status")->valueint, 1);
    arr = cJSON_GetObjectItem(doc, "findings");
    audit_findings(ctx, &n);
    assert_int_equal(cJSON_GetArraySize(arr), (int)n);
    cJSON_ArrayForEach(it, arr)
    {
        for (size_t k = 0; k < N(finding_keys); k++)
            if (!cJSON_HasObjectItem(it, finding_keys[k]))
                fail_msg("finding %s lacks \"%s\"", cJSON_GetObjectItem(it, "id")->valuestring,
                         finding_keys[k]);
        assert_true(cJSON_IsBool(cJSON_GetObjectItem(it, "persistent")));
        assert_true(cJSON_IsBool(cJSON_GetObjectItem(it, "per_netns")));
        assert_true(cJSON_IsString(cJSON_GetObjectItem(it, "status")));
    }
    it = cJSON_GetArrayItem(arr, 14); /* sysctl.tcp_rmem_max */
    assert_string_equal(cJSON_GetObjectItem(it, "id")->valuestring, "sysctl.tcp_rmem_max");
    assert_string_equal(cJSON_GetObjectItem(it, "current")->valuestring, "174760");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(it, "iface")));
    cJSON_Delete(doc);
    free(s);
    audit_destroy(ctx);
}

/* The text report: every group that has findings, 80 columns, the verdict last. */
static void test_text(void **state)
{
    struct audit_ctx *ctx =
        audit_fixture(FIX("seed000-before"), 100 * G, 1 * MS, AUDIT_PROFILE_THROUGHPUT, NULL);
    char *buf = NULL, *save = NULL, *last = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    static const char *const titles[] = {"\nKernel TCP\n", "\nSocket buffers\n", "\nQueueing\n",
                                         "\nNIC\n",        "\nNUMA and IRQs\n",  "\nPCIe\n",
                                         "\nCPU\n"};

    (void)state;
    assert_non_null(fp);
    audit_report_text(ctx, fp, false);
    fclose(fp);
    for (size_t i = 0; i < N(titles); i++)
        assert_contains(buf, titles[i]);
    assert_contains(buf, "  BAD     sysctl.tcp_rmem_max                6291456 -> 33554432\n");
    assert_null(strchr(buf, '\033'));
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strlen(line) > 80)
            fail_msg("line longer than 80 columns: '%s'", line);
        last = line;
    }
    assert_non_null(last);
    assert_true(!strncmp(last, "  ", 2) || !strncmp(last, "verdict: ", 9));
    free(buf);
    audit_destroy(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed000_before),
        cmocka_unit_test(test_seed000_after),
        cmocka_unit_test(test_seed001_wan),
        cmocka_unit_test(test_seed002_ipoib),
        cmocka_unit_test(test_latency_profile),
        cmocka_unit_test(test_record_replay),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_named_interface),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_text),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
