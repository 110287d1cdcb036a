/* Unit tests for netrig audit's parsers with hostile input: each parser on its own (garbage,
 * empty, huge numbers, binary junk, malformed structure), then whole audits over a copy of a
 * fixture host where one file at a time is replaced by junk (the finding that reads it must
 * become "unreadable" or skipped, never a crash), then seeded random mutations of every file
 * of two hosts. */
#define _GNU_SOURCE
#include "test_audit_dump.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit_cpu.h"
#include "audit_irq.h"
#include "nicinfo.h"
#include "audit_pci.h"
#include "audit_queue.h"
#include "audit_sysctl.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* --- parsers ------------------------------------------------------------------------------ */

static void test_parse_numbers(void **state)
{
    uint64_t v[3];
    int64_t i;

    (void)state;
    assert_int_equal(audit_parse_u64s("4096\t87380\t6291456\n", v, 3), 0);
    assert_int_equal(v[2], 6291456);
    assert_int_equal(audit_parse_u64(" 42 ", v), 0);
    assert_int_equal(audit_parse_u64("18446744073709551615", v), 0);
    assert_int_equal(audit_parse_u64("18446744073709551616", v), -ERANGE);
    assert_int_equal(audit_parse_u64("99999999999999999999999999", v), -ERANGE);
    assert_int_equal(audit_parse_u64("", v), -EINVAL);
    assert_int_equal(audit_parse_u64("-1", v), -EINVAL);
    assert_int_equal(audit_parse_u64("12abc", v), -EINVAL);
    assert_int_equal(audit_parse_u64("0x10", v), -EINVAL);
    assert_int_equal(audit_parse_u64("1 2", v), -EINVAL);
    assert_int_equal(audit_parse_u64s("1 2", v, 3), -EINVAL);
    assert_int_equal(audit_parse_u64s("1 2 3 4", v, 3), -EINVAL);
    assert_int_equal(audit_parse_u64("\x01\xff", v), -EINVAL);
    assert_int_equal(audit_parse_i64("-1", &i), 0);
    assert_int_equal(i, -1);
    assert_int_equal(audit_parse_i64("--1", &i), -EINVAL);
    assert_int_equal(audit_parse_i64("9223372036854775808", &i), -ERANGE);
}

static const char nic_good[] =
    "# comment\n"
    "drvinfo driver mlx5_core\n"
    "drvinfo version 5.0-0\n"
    "drvinfo firmware 16.22.1002 (MT_0000000008)\n"
    "drvinfo bus_info 0000:5e:00.0\n"
    "feature rx-lro off fixed\n"
    "feature rx-gro on\n"
    "feature tx-udp-segmentation on\n"
    "ring rx 1024\nring rx_max 8192\nring tx 512\nring tx_max 8192\n"
    "coalesce error EOPNOTSUPP\n"
    "channels rx 0\nchannels rx_max 0\nchannels tx 0\nchannels tx_max 0\n"
    "channels combined 8\nchannels combined_max 63\n"
    "pause error E95\n"
    "qdisc root mq\nqdisc leaf fq\n";

static void test_nic_answers(void **state)
{
    struct nicinfo n, back;
    char text[4096];
    static const char *const bad[] = {
        "garbage",
        "ring rx 1024\nring rx_max x\n",
        "ring rx -5\n",
        "ring rx 99999999999\n",
        "drvinfo driver \x01\x02\n",
        "feature rx-gro maybe\n",
        "coalesce error ENOTANERRNO\n",
        "nosuchsection key 1\n",
        "drvinfo\n",
    };

    (void)state;
    nicinfo_parse(nic_good, &n);
    assert_int_equal(n.drv_err, 0);
    assert_string_equal(n.driver, "mlx5_core");
    assert_string_equal(n.firmware, "16.22.1002 (MT_0000000008)");
    assert_int_equal(n.feat_err, 0);
    assert_true(n.feat[NICINFO_LRO].known && n.feat[NICINFO_LRO].fixed);
    assert_true(n.feat[NICINFO_GRO].active && !n.feat[NICINFO_GRO].fixed);
    assert_false(n.feat[NICINFO_TSO].known);
    assert_int_equal(n.ring_err, 0);
    assert_int_equal(n.tx, 512);
    assert_int_equal(n.coal_err, EOPNOTSUPP);
    assert_int_equal(n.chan_err, 0);
    assert_int_equal(n.ch_combined_max, 63);
    assert_int_equal(n.pause_err, 95);
    assert_string_equal(n.qdisc_leaf, "fq");
    /* the format round-trips */
    nicinfo_format(&n, "eth9", text, sizeof(text));
    nicinfo_parse(text, &back);
    assert_memory_equal(&n, &back, sizeof(n));
    /* a section that is missing is "not recorded"; an incomplete one is unreadable */
    nicinfo_parse("ring rx 1\n", &n);
    assert_int_equal(n.ring_err, EBADMSG);
    assert_int_equal(n.drv_err, ENODATA);
    for (size_t i = 0; i < N(bad); i++) {
        nicinfo_parse(bad[i], &n);
        if (n.drv_err != EBADMSG || n.ring_err != EBADMSG || n.qdisc_err != EBADMSG)
            fail_msg("'%s' was accepted", bad[i]);
    }
    nicinfo_parse("", &n);
    assert_int_equal(n.ring_err, ENODATA);
}

/* A 256-byte config space with the PCIe capability at 0x60, DevCtl 0x2936 (seed 000). */
static void cfg_cx5(uint8_t *c)
{
    memset(c, 0, 256);
    c[0] = 0xb3, c[1] = 0x15, c[2] = 0x17, c[3] = 0x10;
    c[6] = 0x10; /* capability list */
    c[0x34] = 0x48;
    c[0x48] = 0x03, c[0x49] = 0x60; /* VPD -> PCIe */
    c[0x60] = 0x10, c[0x61] = 0x00; /* PCIe, last */
    c[0x64] = 0xe2, c[0x65] = 0x8f; /* DevCap: MPS 512 */
    c[0x68] = 0x36, c[0x69] = 0x29; /* DevCtl 0x2936 */
}

static void test_pci_config(void **state)
{
    uint8_t c[4096];
    struct audit_pci_info pi;
    char text[4096];
    size_t len;
    int err;
    double gts;

    (void)state;
    cfg_cx5(c);
    assert_int_equal(audit_pci_decode(c, 256, &pi), 0);
    assert_int_equal(pi.cap, 0x60);
    assert_int_equal(pi.mps, 256);
    assert_int_equal(pi.mps_max, 512);
    assert_int_equal(pi.mrrs, 512);
    /* only the unprivileged 64 bytes: the capability is out of reach */
    assert_int_equal(audit_pci_decode(c, 64, &pi), -EACCES);
    c[0x61] = 0x48; /* loop: PCIe -> VPD -> PCIe ... */
    c[0x60] = 0x01;
    assert_int_equal(audit_pci_decode(c, 256, &pi), -EINVAL);
    cfg_cx5(c);
    c[0x49] = 0x10; /* pointer into the header */
    assert_int_equal(audit_pci_decode(c, 256, &pi), -EINVAL);
    cfg_cx5(c);
    c[6] = 0; /* no capability list */
    assert_int_equal(audit_pci_decode(c, 256, &pi), -ENOENT);
    memset(c, 0xff, 256);
    assert_int_equal(audit_pci_decode(c, 256, &pi), -EINVAL);
    /* dump round trip, with the recorded reason the read stopped */
    cfg_cx5(c);
    audit_pci_format_dump("0000:5e:00.0", c, 64, -EACCES, text, sizeof(text));
    assert_int_equal(audit_pci_parse_dump(text, c + 256, 4096 - 256, &len, &err), 0);
    assert_int_equal(len, 64);
    assert_int_equal(err, -EACCES);
    assert_memory_equal(c, c + 256, 64);
    assert_int_equal(audit_pci_parse_dump("", c, 256, &len, &err), -EINVAL);
    assert_int_equal(audit_pci_parse_dump("00: zz", c, 256, &len, &err), -EINVAL);
    assert_int_equal(audit_pci_parse_dump("10: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00", c,
                                          256, &len, &err),
                     -EINVAL); /* starts at 0x10 */
    assert_int_equal(audit_pci_parse_dump("error EWHAT\n", c, 256, &len, &err), -EINVAL);
    assert_int_equal(audit_pci_parse_speed("8.0 GT/s PCIe", &gts), 0);
    assert_dbl_near(gts, 8.0, 1e-9);
    assert_int_equal(audit_pci_parse_speed("2.5 GT/s", &gts), 0);
    assert_int_equal(audit_pci_parse_speed("Unknown", &gts), -EINVAL);
    assert_int_equal(audit_pci_parse_speed("8 GB/s", &gts), -EINVAL);
    assert_int_equal(audit_pci_parse_speed("1e308 GT/s", &gts), -EINVAL);
}

static void test_text_parsers(void **state)
{
    uint64_t d, s;
    double mhz;

    (void)state;
    assert_int_equal(audit_queue_parse_softnet("0000a000 00000002 00000003 0\n"
                                               "00000001 00000001 00000001 0\n",
                                               &d, &s),
                     2);
    assert_int_equal(d, 3);
    assert_int_equal(s, 4);
    assert_int_equal(audit_queue_parse_softnet("", &d, &s), -EINVAL);
    assert_int_equal(audit_queue_parse_softnet("00000001 00000002\n", &d, &s), -EINVAL);
    assert_int_equal(audit_queue_parse_softnet("xyz 1 2\n", &d, &s), -EINVAL);
    assert_int_equal(audit_queue_parse_softnet("11111111111111111 0 0\n", &d, &s), -EINVAL);
    assert_int_equal(audit_queue_parse_softnet("0 ffffffffffffffff 0\n0 1 0\n", &d, &s),
                     -EINVAL); /* the sum would wrap */
    assert_int_equal(audit_queue_kconfig("CONFIG_NET_SCH_FQ_CODEL=y\n# CONFIG_NET_SCH_FQ is not "
                                         "set\n",
                                         "CONFIG_NET_SCH_FQ"),
                     'n');
    assert_int_equal(audit_queue_kconfig("CONFIG_NET_SCH_FQ_CODEL=y\n", "CONFIG_NET_SCH_FQ_CODEL"),
                     'y');
    assert_int_equal(audit_queue_kconfig("CONFIG_NET_SCH_FQ=m", "CONFIG_NET_SCH_FQ"), 'm');
    assert_int_equal(audit_queue_kconfig("", "CONFIG_NET_SCH_FQ"), 'n');
    assert_int_equal(
        audit_cpu_parse_cpuinfo_mhz("cpu MHz\t\t: 1000.000\ncpu MHz\t\t: 2301.5\n", &mhz), 0);
    assert_dbl_near(mhz, 2301.5, 1e-9);
    assert_int_equal(audit_cpu_parse_cpuinfo_mhz("cpu MHz : fast\n", &mhz), -EINVAL);
    assert_int_equal(audit_cpu_parse_cpuinfo_mhz("processor : 0\n", &mhz), -EINVAL);
    assert_int_equal(audit_cpu_parse_cpuinfo_mhz("cpu MHz : 1e300\n", &mhz), -EINVAL);
    assert_int_equal(audit_irq_mask_count("00,003ffff0,0003ffff"), 36);
    assert_int_equal(audit_irq_mask_count("0"), 0);
    assert_int_equal(audit_irq_mask_count(""), -EINVAL);
    assert_int_equal(audit_irq_mask_count("ff zz"), -EINVAL);
}

/* --- whole audits over hostile trees ------------------------------------------------------ */

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Copies a fixture by recording it: the copy holds exactly what the checks read. */
static void record_copy(const char *fixture, char *dir, size_t len)
{
    char tmpl[] = "/tmp/netrig-audit-hostile.XXXXXX";
    struct audit_ctx *ctx;

    assert_non_null(mkdtemp(tmpl));
    snprintf(dir, len, "%s/host", tmpl);
    ctx = audit_fixture(fixture, 0, 0, AUDIT_PROFILE_THROUGHPUT, dir);
    audit_destroy(ctx);
}

static void remove_copy(const char *dir)
{
    char top[256];

    snprintf(top, sizeof(top), "%s", dir);
    *strrchr(top, '/') = '\0';
    nftw(top, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void write_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_TRUNC | O_CREAT, 0644);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    close(fd);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    char *buf = malloc(1 << 20);

    assert_non_null(fp);
    assert_non_null(buf);
    *len = fread(buf, 1, 1 << 20, fp);
    fclose(fp);
    return buf;
}

/* Runs an audit that must succeed: every finding well formed. */
static struct audit_ctx *audit_must_run(const char *root)
{
    struct audit_ctx *ctx = audit_fixture(root, 0, 0, AUDIT_PROFILE_THROUGHPUT, NULL);
    size_t n;
    const struct audit_finding *f = audit_findings(ctx, &n);

    for (size_t i = 0; i < n; i++) {
        assert_true(f[i].id[0] != '\0');
        assert_true(f[i].status < AUDIT_STATUS_COUNT);
        for (const char *p = f[i].reason; *p; p++)
            assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
        for (const char *p = f[i].current; *p; p++)
            assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
    }
    return ctx;
}

enum expect { UNREADABLE, SKIPPED, ANY };

struct hostile {
    const char *path, *id, *iface;
    enum expect garbage, empty, huge, binary, many, longline;
};

#define U UNREADABLE
#define S SKIPPED
#define A ANY

/* seed000-before files and the finding each one feeds */
static const struct hostile hostile000[] = {
    {"proc/sys/net/ipv4/tcp_rmem", "sysctl.tcp_rmem_max", "", U, U, U, U, U, U},
    {"proc/sys/net/ipv4/tcp_wmem", "sysctl.tcp_wmem_max", "", U, U, U, U, U, U},
    {"proc/sys/net/core/rmem_max", "sysctl.rmem_max", "", U, U, U, U, U, U},
    {"proc/sys/net/core/wmem_max", "sysctl.wmem_max", "", U, U, U, U, U, U},
    {"proc/sys/net/core/optmem_max", "sysctl.optmem_max", "", U, U, U, U, U, U},
    {"proc/sys/net/ipv4/tcp_mem", "sysctl.tcp_mem", "", U, U, U, U, U, U},
    {"proc/sys/net/ipv4/tcp_congestion_control", "sysctl.congestion_control", "", A, U, U, U, U, U},
    {"proc/sys/net/ipv4/tcp_mtu_probing", "sysctl.tcp_mtu_probing", "", U, U, U, U, U, U},
    {"proc/sys/net/ipv4/tcp_no_metrics_save", "sysctl.tcp_no_metrics_save", "", U, U, U, U, U, U},
    {"proc/sys/net/ipv4/tcp_slow_start_after_idle", "sysctl.tcp_slow_start_after_idle", "", U, U, U,
     U, U, U},
    {"proc/sys/net/ipv4/tcp_timestamps", "sysctl.tcp_timestamps", "", U, U, U, U, U, U},
    {"proc/sys/net/ipv4/tcp_sack", "sysctl.tcp_sack", "", U, U, U, U, U, U},
    {"proc/sys/net/ipv4/tcp_window_scaling", "sysctl.tcp_window_scaling", "", U, U, U, U, U, U},
    {"proc/sys/net/ipv4/tcp_notsent_lowat", "sysctl.tcp_notsent_lowat", "", U, U, U, U, U, U},
    {"proc/sys/net/ipv4/tcp_low_latency", "sysctl.tcp_low_latency", "", U, U, U, U, U, U},
    {"proc/sys/net/ipv4/tcp_adv_win_scale", "sysctl.tcp_adv_win_scale", "", U, U, U, U, U, U},
    {"proc/sys/net/core/somaxconn", "sysctl.somaxconn", "", U, U, U, U, U, U},
    {"proc/sys/net/ipv4/ip_local_port_range", "sysctl.ip_local_port_range", "", U, U, U, U, U, U},
    {"proc/sys/net/core/default_qdisc", "qdisc.default", "", A, U, U, U, U, U},
    {"proc/sys/net/core/netdev_max_backlog", "sysctl.netdev_max_backlog", "", U, U, U, U, U, U},
    {"proc/sys/net/core/netdev_budget", "sysctl.netdev_budget", "", U, U, U, U, U, U},
    {"proc/net/softnet_stat", "sysctl.netdev_budget", "", U, U, U, U, A, U},
    {"proc/sys/net/core/busy_read", "sysctl.busy_poll", "", U, U, U, U, U, U},
    {"netrig/ethtool/enp94s0f0", "nic.rings", "enp94s0f0", U, S, U, U, U, U},
    {"netrig/pci/0000:5e:00.0", "pcie.max_read_req", "enp94s0f0", U, U, U, U, U, U},
    {"sys/bus/pci/devices/0000:5e:00.0/current_link_speed", "pcie.link", "enp94s0f0", U, U, U, U, U,
     U},
    {"sys/bus/pci/devices/0000:5e:00.0/max_link_width", "pcie.bandwidth", "enp94s0f0", U, U, U, U,
     U, U},
    {"sys/bus/pci/devices/0000:5e:00.0/numa_node", "nic.numa", "enp94s0f0", U, U, U, U, U, U},
    {"sys/bus/pci/devices/0000:5e:00.0/local_cpulist", "nic.numa", "enp94s0f0", U, U, U, U, U, U},
    {"proc/irq/131/smp_affinity_list", "nic.irq_affinity", "enp94s0f0", U, U, U, U, U, U},
    {"sys/class/net/enp94s0f0/queues/rx-0/rps_cpus", "nic.rps", "enp94s0f0", U, U, A, U, U, U},
    {"sys/class/net/enp94s0f0/mtu", "nic.mtu", "enp94s0f0", U, U, U, U, U, U},
    {"sys/class/net/enp94s0f0/tx_queue_len", "nic.txqueuelen", "enp94s0f0", U, U, U, U, U, U},
    {"sys/class/net/enp94s0f0/speed", "nic.link", "enp94s0f0", U, U, U, U, U, U},
    {"sys/devices/system/cpu/online", "cpu.governor", "", U, U, U, U, U, U},
    {"sys/devices/system/cpu/cpu5/cpufreq/scaling_governor", "cpu.governor", "", A, U, A, U, U, U},
    {"sys/devices/system/cpu/cpu0/cpuidle/state2/latency", "cpu.cstates", "", U, U, U, U, U, U},
    {"sys/devices/system/cpu/cpu0/cpuidle/state2/name", "cpu.cstates", "", A, U, U, U, A, U},
    {"sys/devices/system/cpu/smt/active", "cpu.smt", "", U, U, U, U, U, U},
    /* files whose junk only weakens a finding */
    {"proc/net/netstat", "sysctl.somaxconn", "", A, A, A, A, A, A},
    {"proc/net/sockstat", "sysctl.tcp_mem", "", A, A, A, A, A, A},
    {"proc/sys/kernel/osrelease", "host.kernel", "", A, S, A, A, A, A},
    {"proc/sys/net/ipv4/ip_forward", "nic.lro", "enp94s0f0", A, A, A, A, A, A},
    {"boot/config-4.13.0-38-generic", "qdisc.fq_available", "", A, A, A, A, A, A},
    {"proc/cmdline", "cpu.iommu", "", A, A, A, A, A, A},
    {"proc/1412/comm", "irq.irqbalance", "", A, A, A, A, A, A},
    {"sys/class/net/enp94s0f0/operstate", "nic.interface", "lo", A, A, A, A, A, A},
    {"sys/class/net/enp94s0f0/device/uevent", "nic.driver", "enp94s0f0", A, A, A, A, A, A},
    {"sys/class/net/enp94s0f0/statistics/rx_missed_errors", "nic.rings", "enp94s0f0", A, A, A, A, A,
     A},
    {"sys/bus/pci/devices/0000:5e:00.0/local_cpus", "nic.rps", "enp94s0f0", A, A, A, A, A, A},
    {"sys/devices/system/cpu/cpu3/cpufreq/scaling_cur_freq", "cpu.frequency", "", A, A, A, A, A, A},
};

/* seed001-wan: the /proc/interrupts and /proc/cpuinfo fallbacks */
static const struct hostile hostile001[] = {
    {"proc/interrupts", "nic.irq_affinity", "eth3", S, S, S, S, S, S},
    {"proc/irq/217/smp_affinity_list", "nic.irq_affinity", "eth3", U, U, U, U, U, U},
    {"proc/cpuinfo", "cpu.frequency", "", U, U, U, U, U, U},
    {"netrig/pci/0000:01:03.0", "pcie.max_payload", "eth3", U, U, U, U, U, U},
    {"netrig/ethtool/eth3", "nic.pause", "eth3", U, S, U, U, U, U},
};

#undef U
#undef S
#undef A

static void check_expect(const struct audit_ctx *ctx, const struct hostile *h, enum expect e,
                         const char *what)
{
    const struct audit_finding *f = audit_find(ctx, h->id, h->iface);

    if (e == ANY)
        return;
    if (!f)
        fail_msg("%s in %s: no finding %s [%s]", what, h->path, h->id, h->iface);
    if (f->status != AUDIT_SKIPPED || (e == UNREADABLE && strcmp(f->current, "unreadable")))
        fail_msg("%s in %s: %s [%s] is %s '%s' (%s), want %s", what, h->path, h->id, h->iface,
                 audit_status_name(f->status), f->current, f->reason,
                 e == UNREADABLE ? "skipped 'unreadable'" : "skipped");
}

static void run_hostile(const char *fixture, const struct hostile *table, size_t n)
{
    char dir[128], path[512], longline[6001];
    static const char binary[] = "\x01\xfe\x00junk\xff\x7f\n";
    static const char many[] = "1 2 3 4 5 6 7 8 9 10 11 12\n";
    static const char huge[] = "999999999999999999999999999999\n";

    memset(longline, '9', sizeof(longline) - 1);
    longline[sizeof(longline) - 1] = '\0';
    record_copy(fixture, dir, sizeof(dir));
    for (size_t i = 0; i < n; i++) {
        const struct hostile *h = &table[i];
        const struct {
            const void *data;
            size_t len;
            enum expect e;
            const char *what;
        } cases[] = {
            {"garbage\n", 8, h->garbage, "garbage"},
            {"", 0, h->empty, "an empty file"},
            {huge, sizeof(huge) - 1, h->huge, "a huge number"},
            {binary, sizeof(binary) - 1, h->binary, "binary junk"},
            {many, sizeof(many) - 1, h->many, "too many fields"},
            {longline, sizeof(longline) - 1, h->longline, "a 6000-digit line"},
        };
        size_t len;
        char *orig;

        snprintf(path, sizeof(path), "%s/%s", dir, h->path);
        orig = slurp(path, &len);
        for (size_t c = 0; c < N(cases); c++) {
            struct audit_ctx *ctx;
            write_file(path, cases[c].data, cases[c].len);
            ctx = audit_must_run(dir);
            check_expect(ctx, h, cases[c].e, cases[c].what);
            audit_destroy(ctx);
        }
        write_file(path, orig, len);
        free(orig);
    }
    remove_copy(dir);
}

static void test_hostile_files_seed000(void **state)
{
    (void)state;
    run_hostile(NETRIG_FIXTURES "/seed000-before", hostile000, N(hostile000));
}

static void test_hostile_files_seed001(void **state)
{
    (void)state;
    run_hostile(NETRIG_FIXTURES "/seed001-wan", hostile001, N(hostile001));
}

/* --- seeded random mutations of every file -------------------------------------------------- */

struct file_list {
    char (*path)[512];
    size_t n, cap;
};

static void list_files(const char *dir, struct file_list *fl)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    assert_non_null(d);
    while ((e = readdir(d)) != NULL) {
        char path[512];
        struct stat st;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (lstat(path, &st))
            continue;
        if (S_ISDIR(st.st_mode))
            list_files(path, fl);
        else if (S_ISREG(st.st_mode) && fl->n < fl->cap)
            snprintf(fl->path[fl->n++], sizeof(fl->path[0]), "%s", path);
    }
    closedir(d);
}

static uint32_t rng_next(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static size_t mutate(char *buf, size_t len, size_t cap, uint32_t *rng)
{
    static const char junk[] = "0123456789 -,:\n\t\xff\x00x";

    switch (rng_next(rng) % 5) {
    case 0: /* flip bytes */
        for (int k = 0; k < 4 && len; k++)
            buf[rng_next(rng) % len] = (char)rng_next(rng);
        return len;
    case 1: /* truncate */ return len ? rng_next(rng) % len : 0;
    case 2: /* insert junk characters */
        for (int k = 0; k < 8 && len < cap; k++) {
            size_t at = len ? rng_next(rng) % len : 0;
            memmove(buf + at + 1, buf + at, len - at);
            buf[at] = junk[rng_next(rng) % (sizeof(junk) - 1)];
            len++;
        }
        return len;
    case 3: /* lengthen a number */
        for (size_t k = 0; k < len && len + 20 < cap; k++)
            if (buf[k] >= '0' && buf[k] <= '9') {
                memmove(buf + k + 20, buf + k, len - k);
                memset(buf + k, '7', 20);
                return len + 20;
            }
        return len;
    default: /* duplicate the first half */
        if (len * 2 < cap) {
            memcpy(buf + len, buf, len / 2);
            return len + len / 2;
        }
        return len;
    }
}

static void fuzz_host(const char *fixture, uint32_t seed, int rounds)
{
    char dir[128];
    struct file_list fl = {.path = calloc(4096, 512), .cap = 4096};
    uint32_t rng = seed;

    assert_non_null(fl.path);
    record_copy(fixture, dir, sizeof(dir));
    list_files(dir, &fl);
    assert_true(fl.n > 10);
    for (size_t i = 0; i < fl.n; i++) {
        size_t len, mlen;
        char *orig = slurp(fl.path[i], &len), *buf = malloc(1 << 20);

        assert_non_null(buf);
        for (int r = 0; r < rounds; r++) {
            struct audit_ctx *ctx;
            memcpy(buf, orig, len);
            mlen = mutate(buf, len, 1 << 19, &rng);
            write_file(fl.path[i], buf, mlen);
            ctx = audit_must_run(dir);
            audit_destroy(ctx);
        }
        write_file(fl.path[i], orig, len);
        free(orig);
        free(buf);
    }
    remove_copy(dir);
    free(fl.path);
}

static void test_fuzz_seed001(void **state)
{
    (void)state;
    fuzz_host(NETRIG_FIXTURES "/seed001-wan", 0x5eed0001u, 6);
}

static void test_fuzz_seed002(void **state)
{
    (void)state;
    fuzz_host(NETRIG_FIXTURES "/seed002-ipoib", 0x5eed0002u, 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_numbers),
        cmocka_unit_test(test_nic_answers),
        cmocka_unit_test(test_pci_config),
        cmocka_unit_test(test_text_parsers),
        cmocka_unit_test(test_hostile_files_seed000),
        cmocka_unit_test(test_hostile_files_seed001),
        cmocka_unit_test(test_fuzz_seed001),
        cmocka_unit_test(test_fuzz_seed002),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
