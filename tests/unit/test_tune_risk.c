/* Unit tests for the risk classes of netrig tune (issue 15 item 1): each kind of change gets
 * its class, reason and --only item; --apply makes the safe ones only, a disruptive one with
 * --allow-disruptive or when --only names it, the safe ones first; --only words that name
 * nothing are refused; and the MTU rule on a recorded sysroot whose interface has MTU 1400
 * and no known speed (a cloud VM): the MTU change is never applied without
 * --allow-disruptive, never without --peer, and with both only when the path-MTU check after
 * the change succeeds (a failed check puts 1400 back and journals the change as refused). */
#define _GNU_SOURCE
#include "test_tune_util.h"

#include "tune_journal.h"
#include "tune_risk.h"

static void test_classes(void **state)
{
    static const struct {
        enum tune_kind kind;
        const char *name, *path, *value, *item;
        enum tune_risk risk;
        bool mtu;
    } cases[] = {
        {TUNE_SYSCTL, "net.ipv4.tcp_rmem", "/proc/sys/net/ipv4/tcp_rmem", "1 2 3",
         "net.ipv4.tcp_rmem", TUNE_RISK_SAFE, false},
        {TUNE_SYSCTL, "net.core.netdev_max_backlog", "/proc/sys/net/core/netdev_max_backlog",
         "30000", "net.core.netdev_max_backlog", TUNE_RISK_SAFE, false},
        {TUNE_SYSCTL, "net.ipv4.tcp_congestion_control",
         "/proc/sys/net/ipv4/tcp_congestion_control", "bbr", "net.ipv4.tcp_congestion_control",
         TUNE_RISK_SAFE, false},
        {TUNE_SYSFS, "eth0 txqueuelen", "/sys/class/net/eth0/tx_queue_len", "10000",
         "txqueuelen:eth0", TUNE_RISK_SAFE, false},
        {TUNE_SYSFS, "eth0 mtu", "/sys/class/net/eth0/mtu", "9000", "mtu:eth0",
         TUNE_RISK_DISRUPTIVE, true},
        {TUNE_SYSFS, "ib0 rx-3 rps_cpus", "/sys/class/net/ib0/queues/rx-3/rps_cpus", "ff",
         "rps:ib0:rx-3", TUNE_RISK_SAFE, false},
        {TUNE_SYSFS, "irq 217 affinity", "/proc/irq/217/smp_affinity_list", "0-3", "irq:217",
         TUNE_RISK_SAFE, false},
        {TUNE_SYSFS, "cpu7 governor", "/sys/devices/system/cpu/cpu7/cpufreq/scaling_governor",
         "performance", "governor:cpu7", TUNE_RISK_SAFE, false},
        {TUNE_ETHTOOL, "eth0 ring", "ethtool:eth0:ring", "rx 8192", "ring:eth0",
         TUNE_RISK_DISRUPTIVE, false},
        {TUNE_ETHTOOL, "eth0 channels", "ethtool:eth0:channels", "combined 8", "channels:eth0",
         TUNE_RISK_DISRUPTIVE, false},
        {TUNE_ETHTOOL, "eth0 coalesce", "ethtool:eth0:coalesce", "rx-usecs 8", "coalesce:eth0",
         TUNE_RISK_DISRUPTIVE, false},
        {TUNE_ETHTOOL, "eth0 pause", "ethtool:eth0:pause", "rx on tx on", "pause:eth0",
         TUNE_RISK_DISRUPTIVE, false},
        {TUNE_ETHTOOL, "eth0 features", "ethtool:eth0:features", "lro on", "features:eth0",
         TUNE_RISK_DISRUPTIVE, false},
        {TUNE_ETHTOOL, "eth0 features", "ethtool:eth0:features", "gro on gso on", "features:eth0",
         TUNE_RISK_SAFE, false},
        {TUNE_ETHTOOL, "eth0 features", "ethtool:eth0:features", "gro on lro on", "features:eth0",
         TUNE_RISK_DISRUPTIVE, false},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct tune_change c;
        memset(&c, 0, sizeof(c));
        c.kind = cases[i].kind;
        snprintf(c.name, sizeof(c.name), "%s", cases[i].name);
        snprintf(c.path, sizeof(c.path), "%s", cases[i].path);
        snprintf(c.new_value, sizeof(c.new_value), "%s", cases[i].value);
        tune_risk_classify(&c);
        if (c.risk != cases[i].risk || strcmp(c.item, cases[i].item) || c.mtu != cases[i].mtu)
            fail_msg("%s %s: got %s item %s mtu %d", cases[i].path, cases[i].value,
                     tune_risk_name(c.risk), c.item, c.mtu);
        assert_true(strlen(c.risk_why) > 20);
    }
    assert_string_equal(tune_risk_name(TUNE_RISK_MANUAL), "manual");
}

/* A copy of seed000-before whose NIC looks like a cloud VM's: MTU 1400, speed unknown. */
static void vm_fixture(char *root, size_t len)
{
    copy_fixture("seed000-before", root, len);
    assert_int_equal(hostwr_write(root, "/sys/class/net/enp94s0f0/mtu", "1400"), 0);
    assert_int_equal(hostwr_write(root, "/sys/class/net/enp94s0f0/speed", "-1"), 0);
}

static const struct tune_change *mtu_change(const struct tune_plan *p)
{
    return change(p, "enp94s0f0 mtu");
}

static void test_only_words(void **state)
{
    char root[PATH_MAX], err[1024];
    struct tune_plan p;
    struct tune_select sel = {0};
    size_t held = 0;
    (void)state;

    vm_fixture(root, sizeof(root));
    build_plan(root, 100 * G, 1 * MS, &p);
    assert_string_equal(mtu_change(&p)->item, "mtu:enp94s0f0");
    assert_int_equal(mtu_change(&p)->risk, TUNE_RISK_DISRUPTIVE);
    sel.only = "mtu:eth9";
    assert_int_equal(tune_risk_select(&p, &sel, err, sizeof(err)), -1);
    assert_contains(err, "--only mtu:eth9 names no change in this plan: its items are ");
    assert_contains(err, "mtu:enp94s0f0");
    sel.only = "net.ipv4.tcp_rmem,,mtu";
    assert_int_equal(tune_risk_select(&p, &sel, err, sizeof(err)), -1);
    assert_contains(err, "has an empty item");
    sel.only = "mtu"; /* the group: every MTU change, which needs --peer */
    assert_int_equal(tune_risk_select(&p, &sel, err, sizeof(err)), -1);
    assert_contains(err, "--only mtu: an MTU change is applied only after a path-MTU probe");
    assert_contains(err, "add --peer HOST");
    /* "sysctl" and a sysctl's name: every other change is held as not named */
    sel.only = "sysctl";
    assert_int_equal(tune_risk_select(&p, &sel, err, sizeof(err)), 0);
    for (size_t i = 0; i < p.nchanges; i++) {
        const struct tune_change *c = &p.changes[i];
        assert_true((c->kind == TUNE_SYSCTL) == (strncmp(c->held, "not named", 9) != 0));
    }
    sel.only = "net.ipv4.tcp_rmem, governor:cpu3";
    assert_int_equal(tune_risk_select(&p, &sel, err, sizeof(err)), 0);
    for (size_t i = 0; i < p.nchanges; i++)
        held += p.changes[i].held[0] != 0;
    assert_int_equal(held, p.nchanges - 2);
    assert_string_equal(change(&p, "net.ipv4.tcp_rmem")->held, "");
    assert_string_equal(change(&p, "cpu3 governor")->held, "");
    /* a named disruptive change is not held for being disruptive */
    sel.only = "txqueuelen";
    assert_int_equal(tune_risk_select(&p, &sel, err, sizeof(err)), 0);
    tune_plan_free(&p);
    rm_tree(root);
}

static int fake_probe_calls;
static int fake_probe(void *arg, const struct tune_change *c, char *why, size_t len)
{
    char now[32];
    const char *root = arg;

    fake_probe_calls++;
    /* the new MTU is in place while the path is probed */
    assert_true(hostfs_read(root, c->path, now, sizeof(now)) > 0);
    assert_string_equal(now, "9000");
    snprintf(why, len, fake_probe_calls > 1 ? "router says 1500" : "peer answered 9000");
    return fake_probe_calls > 1 ? -1 : 0;
}

static int apply_sel(const char *root, struct tune_plan *p, const struct tune_select *sel,
                     bool probe, struct tune_apply_result *res)
{
    char dir[PATH_MAX], err[1024];
    struct tune_apply_opts o = {.sysroot = root,
                                .state_dir = dir,
                                .target = "t",
                                .profile = "throughput",
                                .mtu_verify = probe ? fake_probe : NULL,
                                .mtu_arg = (void *)root};

    state_dir(root, dir, sizeof(dir));
    if (tune_risk_select(p, sel, err, sizeof(err)))
        fail_msg("select: %s", err);
    if (tune_apply_run(p, &o, res, err, sizeof(err)))
        fail_msg("apply: %s", err);
    return 0;
}

static size_t index_of(const struct tune_plan *p, const struct tune_change *c)
{
    return (size_t)(c - p->changes);
}

static void test_mtu_rule(void **state)
{
    char root[PATH_MAX], v[64], err[1024], dir[PATH_MAX];
    struct tune_plan p;
    struct tune_select sel = {0};
    struct tune_apply_result res;
    struct tune_revert_result rr;
    struct tune_journal j;
    (void)state;

    vm_fixture(root, sizeof(root));
    state_dir(root, dir, sizeof(dir));
    build_plan(root, 100 * G, 30 * MS, &p);
    /* a plain --apply: the safe changes, no MTU */
    apply_sel(root, &p, &sel, false, &res);
    read_value(root, "/sys/class/net/enp94s0f0/mtu", v, sizeof(v));
    assert_string_equal(v, "1400");
    assert_int_equal(res.done[index_of(&p, mtu_change(&p))].outcome, TUNE_O_HELD);
    assert_contains(mtu_change(&p)->held, "advice only");
    assert_true(res.applied > 70); /* tcp_rmem, the 72 governors, ... */
    read_value(root, "/proc/sys/net/ipv4/tcp_rmem", v, sizeof(v));
    assert_string_equal(v, "4096 87380 1073741824"); /* 2 x BDP of 100G x 30 ms, rounded up */
    tune_apply_result_free(&res);
    tune_plan_free(&p);
    /* --allow-disruptive without --peer: still advice (the safe ones are in place now) */
    build_plan(root, 100 * G, 30 * MS, &p);
    sel.allow_disruptive = true;
    apply_sel(root, &p, &sel, false, &res);
    read_value(root, "/sys/class/net/enp94s0f0/mtu", v, sizeof(v));
    assert_string_equal(v, "1400");
    assert_int_equal(res.applied, 0);
    assert_int_equal(res.held, 1);
    tune_apply_result_free(&res);
    tune_plan_free(&p);

    /* with --peer and a path-MTU check that succeeds: applied, after every safe change */
    build_plan(root, 100 * G, 30 * MS, &p);
    sel.peer = "10.0.0.2";
    fake_probe_calls = 0;
    apply_sel(root, &p, &sel, true, &res);
    assert_int_equal(fake_probe_calls, 1);
    read_value(root, "/sys/class/net/enp94s0f0/mtu", v, sizeof(v));
    assert_string_equal(v, "9000");
    assert_int_equal(res.done[index_of(&p, mtu_change(&p))].outcome, TUNE_O_APPLIED);
    assert_string_equal(res.done[index_of(&p, mtu_change(&p))].note, "peer answered 9000");
    assert_int_equal(tune_journal_load(res.journal, &j, err, sizeof(err)), 0);
    assert_string_equal(j.e[j.n - 1].name, "enp94s0f0 mtu"); /* the disruptive one last */
    tune_journal_free(&j);
    assert_int_equal(tune_apply_revert(res.journal, root, dir, NULL, &rr, err, sizeof(err)), 0);
    read_value(root, "/sys/class/net/enp94s0f0/mtu", v, sizeof(v));
    assert_string_equal(v, "1400");
    tune_apply_revert_free(&rr);
    tune_apply_result_free(&res);
    tune_plan_free(&p);

    /* ... and one that fails: 1400 is put back, journaled as refused, nothing to revert */
    build_plan(root, 100 * G, 30 * MS, &p);
    sel.allow_disruptive = false;
    sel.only = "mtu";
    apply_sel(root, &p, &sel, true, &res);
    assert_int_equal(fake_probe_calls, 2);
    read_value(root, "/sys/class/net/enp94s0f0/mtu", v, sizeof(v));
    assert_string_equal(v, "1400");
    assert_int_equal(res.done[index_of(&p, mtu_change(&p))].outcome, TUNE_O_REFUSED);
    assert_string_equal(res.done[index_of(&p, mtu_change(&p))].error,
                        "the path does not carry 9000-byte packets: router says 1500; put back "
                        "1400");
    assert_int_equal(res.applied, 0);
    assert_int_equal(res.refused, 1);
    assert_int_equal(tune_journal_load(res.journal, &j, err, sizeof(err)), 0);
    assert_int_equal(j.n, 1);
    assert_int_equal(j.e[0].state, TUNE_J_REFUSED);
    tune_journal_free(&j);
    tune_apply_result_free(&res);
    tune_plan_free(&p);
    rm_tree(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_only_words),
        cmocka_unit_test(test_mtu_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
