/* Unit tests for netrig tune's plan: parsing the audit's fix commands (sysctl, ip link, echo,
 * cpupower, ethtool, and what stays manual), the plans built from the seed fixture hosts
 * (tests/fixtures/host), the plain explanations of what cannot be changed where netrig runs,
 * and the ethtool path end to end on lo in a private network namespace. Applying, reverting
 * and the journal are in test_tune_apply.c. */
#define _GNU_SOURCE
#include "test_tune_util.h"

#include "nicset.h"
#include "tune_journal.h"

#include <sched.h>
#include <sys/wait.h>

/* ---- fix commands ------------------------------------------------------------------------ */

static int parse(const char *fix, struct tune_step *st, char *man)
{
    return tune_plan_parse_fix(fix, st, TUNE_MAX_STEPS, man, AUDIT_TEXT_LEN);
}

static void test_parse_sysctl(void **state)
{
    struct tune_step st[TUNE_MAX_STEPS];
    char man[AUDIT_TEXT_LEN];
    (void)state;

    assert_int_equal(parse("sysctl -w net.ipv4.tcp_rmem=\"4096 87380 134217728\"", st, man), 1);
    assert_int_equal(st[0].kind, TUNE_STEP_SYSCTL);
    assert_string_equal(st[0].name, "net.ipv4.tcp_rmem");
    assert_string_equal(st[0].path, "/proc/sys/net/ipv4/tcp_rmem");
    assert_string_equal(st[0].value, "4096 87380 134217728");
    assert_string_equal(man, "");

    assert_int_equal(
        parse("sysctl -w net.core.netdev_budget=600 net.core.netdev_budget_usecs=8000", st, man),
        2);
    assert_string_equal(st[1].path, "/proc/sys/net/core/netdev_budget_usecs");
    assert_string_equal(st[1].value, "8000");

    /* modprobe is implied: the kernel loads tcp_htcp when root writes the sysctl */
    assert_int_equal(
        parse("modprobe tcp_htcp && sysctl -w net.ipv4.tcp_congestion_control=htcp", st, man), 1);
    assert_string_equal(st[0].value, "htcp");
    assert_string_equal(man, "");

    /* '/' in a sysctl name stands for a '.' in the path (interface names with dots) */
    assert_int_equal(parse("sysctl -w net.ipv4.conf.eth0/100.rp_filter=1", st, man), 1);
    assert_string_equal(st[0].path, "/proc/sys/net/ipv4/conf/eth0.100/rp_filter");
}

static void test_parse_sysfs(void **state)
{
    struct tune_step st[TUNE_MAX_STEPS];
    char man[AUDIT_TEXT_LEN];
    (void)state;

    assert_int_equal(parse("ip link set dev eth3 txqueuelen 10000", st, man), 1);
    assert_int_equal(st[0].kind, TUNE_STEP_SYSFS);
    assert_string_equal(st[0].name, "eth3 txqueuelen");
    assert_string_equal(st[0].path, "/sys/class/net/eth3/tx_queue_len");
    assert_string_equal(st[0].value, "10000");
    assert_int_equal(parse("ip link set enp94s0f0 mtu 9000", st, man), 1);
    assert_string_equal(st[0].path, "/sys/class/net/enp94s0f0/mtu");
    assert_int_equal(parse("echo ff > /sys/class/net/ib0/queues/rx-0/rps_cpus", st, man), 1);
    assert_string_equal(st[0].path, "/sys/class/net/ib0/queues/rx-0/rps_cpus");
    assert_string_equal(st[0].value, "ff");
    assert_string_equal(st[0].name, "ib0 rx-0 rps_cpus");
    assert_int_equal(parse("echo 0-3,8 > /proc/irq/217/smp_affinity_list", st, man), 1);
    assert_string_equal(st[0].name, "irq 217 affinity");
    assert_int_equal(parse("cpupower frequency-set -g performance", st, man), 1);
    assert_int_equal(st[0].kind, TUNE_STEP_GOVERNOR);
    assert_string_equal(st[0].value, "performance");
}

/* NIC driver settings through the ethtool ioctls (nicset) */
static void test_parse_ethtool(void **state)
{
    struct tune_step st[TUNE_MAX_STEPS];
    char man[AUDIT_TEXT_LEN];
    (void)state;

    assert_int_equal(parse("ethtool -G eth3 rx 8192 tx 8192", st, man), 1);
    assert_int_equal(st[0].kind, TUNE_STEP_ETHTOOL);
    assert_string_equal(st[0].name, "eth3 ring");
    assert_string_equal(st[0].path, "ethtool:eth3:ring");
    assert_string_equal(st[0].value, "rx 8192 tx 8192");
    assert_int_equal(
        parse("ethtool -C enp94s0f0 adaptive-rx off rx-usecs 8 rx-frames 128", st, man), 1);
    assert_string_equal(st[0].path, "ethtool:enp94s0f0:coalesce");
    assert_string_equal(st[0].value, "adaptive-rx off rx-usecs 8 rx-frames 128");
    assert_int_equal(parse("ethtool -L eth0 combined 16", st, man), 1);
    assert_string_equal(st[0].path, "ethtool:eth0:channels");
    assert_int_equal(parse("ethtool -A eth0 rx on tx on", st, man), 1);
    assert_string_equal(st[0].path, "ethtool:eth0:pause");
    assert_int_equal(parse("ethtool -K eth0 lro on", st, man), 1);
    assert_string_equal(st[0].name, "eth0 features");
    assert_string_equal(st[0].value, "lro on");
    /* words nicset does not know, a missing value, another option: manual */
    assert_int_equal(parse("ethtool -K eth0 lro maybe", st, man), 0);
    assert_int_equal(parse("ethtool -G eth0 rx", st, man), 0);
    assert_int_equal(parse("ethtool -G eth0 rx-buf-len 4096", st, man), 0);
    assert_int_equal(parse("ethtool -X eth0 equal 4", st, man), 0);
    assert_int_equal(parse("ethtool -G eth0:1 rx 8", st, man), 0);
    assert_int_equal(nicset_check(NICSET_COALESCE, "adaptive-rx 1"), -EINVAL);
    assert_int_equal(nicset_check(NICSET_CHANNELS, "combined 8 rx 0"), 0);
    assert_int_equal(nicset_get("netrig-none0", NICSET_RING, "rx 1", man, sizeof(man)), -ENODEV);
}

static void test_parse_manual(void **state)
{
    struct tune_step st[TUNE_MAX_STEPS];
    char man[AUDIT_TEXT_LEN];
    (void)state;

    /* the sysctl part is applied, the tc part is a manual step */
    assert_int_equal(parse("sysctl -w net.core.default_qdisc=fq && tc qdisc replace dev eth0 root "
                           "handle 1: mq",
                           st, man),
                     1);
    assert_string_equal(st[0].name, "net.core.default_qdisc");
    assert_string_equal(man, "tc qdisc replace dev eth0 root handle 1: mq");
    assert_int_equal(parse("ethtool -S eth0", st, man), 0);
    assert_string_equal(man, "ethtool -S eth0");
    assert_int_equal(parse("setpci -s 0000:5e:00.0 68.w=5936", st, man), 0);
    assert_int_equal(parse("systemctl disable --now irqbalance", st, man), 0);
    assert_string_equal(man, "systemctl disable --now irqbalance");
    /* placeholders, paths netrig never writes, traversal, unclosed quotes: manual */
    assert_int_equal(parse("echo MASK > /sys/class/net/eth0/queues/rx-0/rps_cpus", st, man), 0);
    assert_int_equal(parse("echo 1 > /etc/passwd", st, man), 0);
    assert_int_equal(parse("echo off > /sys/devices/system/cpu/smt/control", st, man), 0);
    assert_int_equal(parse("echo 1 > /sys/class/net/../../x/queues/rx-0/rps_cpus", st, man), 0);
    assert_int_equal(parse("sysctl -w ../../etc/shadow=1", st, man), 0);
    assert_int_equal(parse("sysctl -w net.core.rmem_max=\"1", st, man), 0);
    assert_int_equal(parse("ip link set dev eth0 mtu 9000; reboot", st, man), 0);
    assert_int_equal(parse("fq is not available in this kernel (no sch_fq): boot a kernel built "
                           "with CONFIG_NET_SCH_FQ=y or =m, then sysctl -w "
                           "net.core.default_qdisc=fq",
                           st, man),
                     0);
    assert_contains(man, "fq is not available");
    assert_int_equal(parse("", st, man), 0);
    assert_string_equal(man, "");
}

static void test_same_value(void **state)
{
    char out[64];
    (void)state;

    assert_true(tune_plan_same_value("4096\t87380\t6291456", "4096 87380 6291456"));
    assert_true(tune_plan_same_value(" 1 ", "1"));
    assert_true(tune_plan_same_value("00,000000ff", "ff"));
    assert_true(tune_plan_same_value("0", "00"));
    assert_false(tune_plan_same_value("bbr", "cubic"));
    assert_false(tune_plan_same_value("1 2", "1 2 3"));
    assert_false(tune_plan_same_value("4096 87380 6291456", "4096 87380 6291457"));
    tune_plan_squash("4096\t87380\t  6291456\n", out, sizeof(out));
    assert_string_equal(out, "4096 87380 6291456");
}

/* ---- plans from the fixture hosts -------------------------------------------------------- */

static void test_plan_seed001(void **state)
{
    struct tune_plan p;
    const struct tune_change *c;
    (void)state;

    build_plan(FIX("seed001-wan"), 10 * G, 30 * MS, &p);
    c = change(&p, "net.ipv4.tcp_rmem");
    assert_string_equal(c->path, "/proc/sys/net/ipv4/tcp_rmem");
    assert_string_equal(c->old_value, "4096\t87380\t174760");
    assert_string_equal(c->new_value, "4096 87380 134217728");
    assert_string_equal(c->finding, "sysctl.tcp_rmem_max");
    assert_int_equal(c->status, AUDIT_BAD);
    assert_contains(c->reason, "BDP 35.76 MiB");
    assert_string_equal(c->command, "sysctl -w net.ipv4.tcp_rmem=\"4096 87380 134217728\"");
    assert_string_equal(c->blocked, "");
    c = change(&p, "net.ipv4.tcp_wmem");
    assert_string_equal(c->old_value, "4096\t16384\t131072");
    assert_string_equal(c->new_value, "4096 16384 134217728");
    c = change(&p, "net.core.rmem_max");
    assert_string_equal(c->old_value, "131071");
    assert_string_equal(c->new_value, "134217728");
    c = change(&p, "net.core.wmem_max");
    assert_string_equal(c->old_value, "131071");
    assert_string_equal(c->new_value, "134217728");
    c = change(&p, "net.ipv4.tcp_congestion_control");
    assert_string_equal(c->old_value, "bic");
    assert_string_equal(c->new_value, "htcp");
    c = change(&p, "eth3 txqueuelen");
    assert_string_equal(c->path, "/sys/class/net/eth3/tx_queue_len");
    assert_string_equal(c->old_value, "1000");
    assert_string_equal(c->new_value, "10000");
    assert_int_equal(p.nchanges, 9);
    /* fq is missing from that kernel: shown as advice, not run */
    assert_false(manual(&p, "qdisc.root")->is_command);
    assert_int_equal(p.nmanual, 1);
    assert_int_equal(p.netns_child, 0); /* a host: it has the global net.core sysctls */
    assert_dbl_near(p.target.bdp_bytes, 37.5e6, 1);
    tune_plan_free(&p);
}

static void test_plan_seed000(void **state)
{
    struct tune_plan p;
    size_t gov = 0, qdisc = 0;
    (void)state;

    build_plan(FIX("seed000-before"), 100 * G, 1 * MS, &p);
    for (size_t i = 0; i < p.nchanges; i++) {
        gov += !strcmp(p.changes[i].finding, "cpu.governor");
        qdisc += !strcmp(p.changes[i].name, "net.core.default_qdisc");
    }
    assert_int_equal(gov, 72); /* one per CPU with cpufreq */
    assert_string_equal(change(&p, "cpu71 governor")->path,
                        "/sys/devices/system/cpu/cpu71/cpufreq/scaling_governor");
    assert_string_equal(change(&p, "cpu0 governor")->old_value, "ondemand");
    assert_int_equal(qdisc, 1); /* qdisc.default and qdisc.root both set it: once */
    assert_string_equal(change(&p, "enp94s0f0 mtu")->new_value, "9000");
    assert_string_equal(change(&p, "net.ipv4.tcp_rmem")->new_value, "4096 87380 33554432");
    /* NIC settings are changes made through ethtool ioctls: not under a sysroot */
    assert_string_equal(change(&p, "enp94s0f0 features")->new_value, "lro on");
    assert_string_equal(change(&p, "enp94s0f0 features")->path, "ethtool:enp94s0f0:features");
    assert_contains(change(&p, "enp94s0f0 coalesce")->blocked,
                    "live host only, not under --sysroot");
    assert_string_equal(manual(&p, "qdisc.root")->command,
                        "tc qdisc replace dev enp94s0f0 root handle 1: mq");
    assert_string_equal(manual(&p, "pcie.max_read_req")->command,
                        "setpci -s 0000:5e:00.0 68.w=5936");
    assert_string_equal(manual(&p, "irq.irqbalance")->command,
                        "systemctl disable --now irqbalance");
    assert_true(manual(&p, "irq.irqbalance")->is_command);
    tune_plan_free(&p);
}

static void test_plan_seed002(void **state)
{
    struct tune_plan p;
    const struct tune_change *c;
    (void)state;

    build_plan(FIX("seed002-ipoib"), 0, 0, &p);
    c = change(&p, "ib0 rx-0 rps_cpus");
    assert_string_equal(c->path, "/sys/class/net/ib0/queues/rx-0/rps_cpus");
    assert_string_equal(c->old_value, "00");
    assert_string_equal(c->new_value, "ff");
    assert_string_equal(change(&p, "net.ipv4.tcp_timestamps")->new_value, "1");
    tune_plan_free(&p);
}

/* Nothing at warn or bad: an empty plan. */
static void test_plan_tuned_host(void **state)
{
    struct tune_plan p;
    (void)state;

    build_plan(FIX("seed000-after"), 100 * G, 1 * MS, &p);
    assert_int_equal(p.nchanges, 0);
    tune_plan_free(&p);
}

static void test_explain(void **state)
{
    struct tune_change c = {.kind = TUNE_SYSCTL,
                            .name = "net.core.netdev_max_backlog",
                            .path = "/proc/sys/net/core/netdev_max_backlog",
                            .new_value = "30000"};
    char buf[512];
    (void)state;

    tune_plan_explain("/nonexistent", 1, &c, -ENOENT, buf, sizeof(buf));
    assert_string_equal(buf, "net.core.netdev_max_backlog is global and not visible inside this "
                             "network namespace: set it on the host");
    tune_plan_explain("/nonexistent", 1, &c, -EACCES, buf, sizeof(buf));
    assert_string_equal(buf, "net.core.netdev_max_backlog is global and read-only inside this "
                             "network namespace: set it on the host");
    tune_plan_explain("/nonexistent", 0, &c, -EINVAL, buf, sizeof(buf));
    assert_string_equal(buf, "the kernel refused 30000 for net.core.netdev_max_backlog (invalid "
                             "value)");
    snprintf(c.name, sizeof(c.name), "net.ipv4.tcp_congestion_control");
    snprintf(c.new_value, sizeof(c.new_value), "htcp");
    tune_plan_explain(FIX("seed001-wan"), 1, &c, -EPERM, buf, sizeof(buf));
    assert_contains(buf, "only tcp_allowed_congestion_control");
    tune_plan_explain("/nonexistent", 0, &c, -ENOENT, buf, sizeof(buf));
    assert_string_equal(buf, "congestion control htcp is not available: this kernel has no "
                             "tcp_htcp module");
    assert_true(tune_plan_is_global("net.core.rmem_max"));
    assert_false(tune_plan_is_global("net.ipv4.tcp_rmem"));
}

/* The ethtool path end to end on a real device: lo, in a private network namespace of a child
 * process (root only), through nicset and through apply/revert with an "ethtool" journal. */
static int ethtool_child(void)
{
    char out[128], dir[] = "/tmp/netrig-tune-XXXXXX", err[1024];
    struct tune_change c = {.kind = TUNE_ETHTOOL,
                            .name = "lo features",
                            .path = "ethtool:lo:features",
                            .new_value = "gro off",
                            .old_value = "gro on",
                            .old_known = true,
                            .iface = "lo",
                            .command = "ethtool -K lo gro off"};
    struct tune_plan p = {.nchanges = 1, .changes = &c, .netns_child = 1};
    struct tune_apply_opts o = {.state_dir = dir, .target = "t", .profile = "throughput"};
    struct tune_apply_result res;
    struct tune_revert_result rr;

    if (unshare(CLONE_NEWNET))
        return 10;
    if (nicset_get("lo", NICSET_FEATURES, "gro on", out, sizeof(out)) || strcmp(out, "gro on"))
        return 11;
    if (nicset_get("lo", NICSET_RING, "rx 1", out, sizeof(out)) != -EOPNOTSUPP)
        return 12;
    if (!mkdtemp(dir) || tune_apply_run(&p, &o, &res, err, sizeof(err)) || res.applied != 1)
        return 13;
    if (nicset_get("lo", NICSET_FEATURES, "gro on", out, sizeof(out)) || strcmp(out, "gro off"))
        return 14;
    if (tune_apply_revert(res.journal, NULL, dir, NULL, &rr, err, sizeof(err)) || rr.restored != 1)
        return 15;
    if (nicset_get("lo", NICSET_FEATURES, "gro on", out, sizeof(out)) || strcmp(out, "gro on"))
        return 16;
    tune_apply_revert_free(&rr);
    unlink(res.journal);
    tune_apply_result_free(&res);
    snprintf(err, sizeof(err), "%s/.lock", dir);
    unlink(err);
    rmdir(dir);
    return 0;
}

static void test_ethtool_private_netns(void **state)
{
    int status = -1;
    pid_t pid;
    (void)state;

    if (geteuid() != 0)
        skip();
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(ethtool_child());
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 10)
        skip(); /* no network namespaces here */
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_sysctl),
        cmocka_unit_test(test_parse_sysfs),
        cmocka_unit_test(test_parse_ethtool),
        cmocka_unit_test(test_parse_manual),
        cmocka_unit_test(test_same_value),
        cmocka_unit_test(test_plan_seed001),
        cmocka_unit_test(test_plan_seed000),
        cmocka_unit_test(test_plan_seed002),
        cmocka_unit_test(test_plan_tuned_host),
        cmocka_unit_test(test_explain),
        cmocka_unit_test(test_ethtool_private_netns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
