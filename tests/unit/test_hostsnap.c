/* Unit tests for the host snapshot: reading a hand-built sysroot and the seed fixture hosts
 * (every sysctl the audit reads is recorded; NIC settings from the recorded ethtool answers,
 * RPS/XPS, IRQ affinity, CPU frequency, irqbalance, conntrack), the diff of seed 000 before and
 * after its tuning, natural key order, value normalization and bounds, and the JSON form with
 * hostile input. */
#include "test_util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hostsnap.h"

static char root[256];

static void put(const char *rel, const char *text)
{
    char path[512], *slash;

    snprintf(path, sizeof(path), "%s%s", root, rel);
    for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(path, 0755);
        *slash = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static const char eth0_answers[] =
    "# netrig audit: ethtool and rtnetlink answers recorded for eth0\n"
    "drvinfo driver mlx5_core\n"
    "drvinfo version 5.0-0\n"
    "drvinfo firmware 16.22.1002\n"
    "drvinfo bus_info 0000:5e:00.0\n"
    "feature tx-tcp-segmentation on\n"
    "feature tx-generic-segmentation on\n"
    "feature rx-gro on\n"
    "feature rx-lro off fixed\n"
    "feature rx-checksum on\n"
    "feature tx-checksumming off\n"
    "ring rx 1024\nring rx_max 8192\nring tx 512\nring tx_max 8192\n"
    "coalesce adaptive_rx 1\ncoalesce adaptive_tx 0\n"
    "coalesce rx_usecs 8\ncoalesce rx_frames 128\n"
    "coalesce tx_usecs 16\ncoalesce tx_frames 32\n"
    "channels rx 0\nchannels rx_max 0\nchannels tx 0\n"
    "channels tx_max 0\nchannels combined 2\n"
    "channels combined_max 63\n"
    "pause error EOPNOTSUPP\n"
    "qdisc root mq\nqdisc leaf fq\n";

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof(root), "/tmp/netrig-test-hostsnap.XXXXXX");
    if (!mkdtemp(root))
        return -1;
    put("/proc/sys/kernel/osrelease", "6.1.0-test\n");
    put("/proc/sys/kernel/hostname", "fixture\n");
    put("/proc/cmdline", "BOOT_IMAGE=/vmlinuz intel_iommu=on\n");
    put("/proc/sys/net/ipv4/tcp_rmem", "4096\t131072\t6291456\n");
    put("/proc/sys/net/ipv4/tcp_congestion_control", "bbr\n");
    put("/proc/sys/net/core/rmem_max", "212992\n");
    put("/proc/sys/net/core/default_qdisc", "fq\n");
    put("/proc/sys/net/netfilter/nf_conntrack_max", "262144\n");
    put("/proc/sys/net/netfilter/nf_conntrack_count", "17\n");
    put("/proc/4242/comm", "irqbalance\n");
    put("/proc/1/comm", "systemd\n");
    put("/proc/cpuinfo", "processor\t: 0\nmodel name\t: Test CPU  9000\ncpu MHz\t\t: 1200.0\n"
                         "flags\t: x\n\nprocessor\t: 1\nmodel name\t: Test CPU  9000\n"
                         "cpu MHz\t\t: 1400.0\n");
    put("/sys/devices/system/cpu/online", "0-3\n");
    for (int c = 0; c < 4; c++) {
        char p[128];
        snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", c);
        put(p, c < 2 ? "performance\n" : "powersave\n");
        snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_max_freq", c);
        put(p, "3000000\n");
        snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", c);
        put(p, c < 2 ? "3000000\n" : "1000000\n");
    }
    put("/sys/devices/system/cpu/cpu0/cpuidle/state0/name", "POLL\n");
    put("/sys/devices/system/cpu/cpu0/cpuidle/state0/disable", "0\n");
    put("/sys/devices/system/cpu/cpu0/cpuidle/state1/name", "C6\n");
    put("/sys/devices/system/cpu/cpu0/cpuidle/state1/disable", "1\n");
    put("/sys/class/net/eth0/mtu", "9000\n");
    put("/sys/class/net/eth0/tx_queue_len", "10000\n");
    put("/sys/class/net/eth0/speed", "100000\n");
    put("/sys/class/net/eth0/device/numa_node", "1\n");
    put("/sys/class/net/eth0/device/uevent", "DRIVER=mlx5_core\nPCI_SLOT_NAME=0000:5e:00.0\n");
    for (int q = 0; q < 12; q++) {
        char p[128];
        snprintf(p, sizeof(p), "/sys/class/net/eth0/queues/rx-%d/rps_cpus", q);
        put(p, q == 10 ? "f\n" : "0\n");
        snprintf(p, sizeof(p), "/sys/class/net/eth0/queues/rx-%d/rps_flow_cnt", q);
        put(p, "0\n");
    }
    put("/sys/class/net/eth0/queues/tx-0/xps_cpus", "1\n");
    put("/sys/class/net/eth0/queues/tx-1/xps_cpus", "2\n");
    put("/sys/bus/pci/devices/0000:5e:00.0/current_link_speed", "8.0 GT/s PCIe\n");
    put("/sys/bus/pci/devices/0000:5e:00.0/current_link_width", "16\n");
    put("/sys/bus/pci/devices/0000:5e:00.0/msi_irqs/120", "msix\n");
    put("/sys/bus/pci/devices/0000:5e:00.0/msi_irqs/99", "msix\n");
    put("/proc/irq/99/smp_affinity_list", "0\n");
    put("/proc/irq/120/smp_affinity_list", "1-3\n");
    put("/proc/irq/120/spurious", "count 0\n");
    put("/proc/irq/120/mlx5_comp1@pci:0000:5e:00.0/.dir", ""); /* the action's directory */
    put("/netrig/ethtool/eth0", eth0_answers);
    put("/sys/class/net/lo/mtu", "65536\n");
    return 0;
}

static int teardown(void **state)
{
    char cmd[400];

    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

#define assert_key(hs, key, value)                                                                 \
    do {                                                                                           \
        const char *got__ = hostsnap_get((hs), (key));                                             \
        if (!got__ || strcmp(got__, (value)))                                                      \
            fail_msg("%s = %s, expected \"%s\"", (key), got__ ? got__ : "(absent)", (value));      \
    } while (0)

static void test_take_fixture(void **state)
{
    struct hostsnap *hs = hostsnap_new();

    (void)state;
    hostsnap_take(root, hs);
    assert_key(hs, "host.snapshot", "2");
    assert_int_equal(hostsnap_version(hs), HOSTSNAP_VERSION);
    assert_key(hs, "kernel.osrelease", "6.1.0-test");
    assert_key(hs, "kernel.cmdline", "BOOT_IMAGE=/vmlinuz intel_iommu=on");
    assert_key(hs, "host.name", "fixture");
    assert_key(hs, "net.ipv4.tcp_rmem", "4096 131072 6291456");
    assert_key(hs, "net.ipv4.tcp_congestion_control", "bbr");
    assert_key(hs, "net.core.default_qdisc", "fq");
    /* conntrack is there; its fill is not a setting */
    assert_key(hs, "netfilter.conntrack", "loaded");
    assert_key(hs, "net.netfilter.nf_conntrack_max", "262144");
    assert_null(hostsnap_get(hs, "net.netfilter.nf_conntrack_count"));
    assert_key(hs, "irqbalance", "running");
    /* CPUs: a summary of the per-CPU files, the clock as an observation */
    assert_key(hs, "cpu.model", "Test CPU 9000");
    assert_key(hs, "cpu.online", "0-3");
    assert_key(hs, "cpu.governor", "performance (0-1), powersave (2-3)");
    assert_key(hs, "cpu.scaling_max_khz", "3000000");
    assert_key(hs, "cpu.freq_mhz", "2000");
    assert_true(hostsnap_is_observation("cpu.freq_mhz"));
    assert_key(hs, "cpu.idle_states", "POLL C6(disabled)");
    /* the interface's files, queues, NIC settings, device and IRQs */
    assert_key(hs, "iface.eth0.mtu", "9000");
    assert_key(hs, "iface.eth0.tx_queue_len", "10000");
    assert_key(hs, "iface.eth0.numa_node", "1");
    assert_key(hs, "iface.eth0.rx_queues", "12");
    assert_key(hs, "iface.eth0.tx_queues", "2");
    assert_key(hs, "iface.eth0.rx-10.rps_cpus", "f");
    assert_key(hs, "iface.eth0.rx-2.rps_cpus", "0");
    assert_key(hs, "iface.eth0.rx-0.rps_flow_cnt", "0");
    assert_key(hs, "iface.eth0.tx-1.xps_cpus", "2");
    assert_key(hs, "iface.eth0.driver", "mlx5_core");
    assert_key(hs, "iface.eth0.firmware", "16.22.1002");
    assert_key(hs, "iface.eth0.offload.tso", "on");
    assert_key(hs, "iface.eth0.offload.gso", "on");
    assert_key(hs, "iface.eth0.offload.gro", "on");
    assert_key(hs, "iface.eth0.offload.lro", "off [fixed]");
    assert_key(hs, "iface.eth0.offload.rx-checksum", "on");
    assert_key(hs, "iface.eth0.offload.tx-checksum", "off");
    assert_null(hostsnap_get(hs, "iface.eth0.offload.rxhash")); /* not in the answers */
    assert_key(hs, "iface.eth0.ring.rx", "1024");
    assert_key(hs, "iface.eth0.ring.tx", "512");
    assert_key(hs, "iface.eth0.channels.combined", "2");
    assert_key(hs, "iface.eth0.coalesce.adaptive-rx", "on");
    assert_key(hs, "iface.eth0.coalesce.rx-usecs", "8");
    assert_key(hs, "iface.eth0.coalesce.tx-frames", "32");
    assert_null(hostsnap_get(hs, "iface.eth0.pause.rx")); /* EOPNOTSUPP: left out */
    assert_key(hs, "iface.eth0.qdisc", "mq");
    assert_key(hs, "iface.eth0.qdisc_leaf", "fq");
    assert_key(hs, "iface.eth0.pcie_link", "8.0 GT/s PCIe x16");
    assert_key(hs, "iface.eth0.irq.99", "0");
    /* an IRQ is named by its action when it has one: the queue, stable across reboots */
    assert_key(hs, "iface.eth0.irq.mlx5_comp1@pci:0000:5e:00.0", "1-3");
    assert_null(hostsnap_get(hs, "iface.eth0.irq.120"));
    assert_key(hs, "iface.lo.mtu", "65536");
    /* absent files are left out, not stored empty */
    assert_null(hostsnap_get(hs, "net.ipv4.tcp_wmem"));
    assert_null(hostsnap_get(hs, "iface.lo.rx_queues"));
    assert_null(hostsnap_get(hs, "iface.lo.driver"));
    /* natural order: rx-2 before rx-10, irq.99 before irq.120 */
    for (uint32_t i = 1; i < hs->n; i++)
        assert_true(hostsnap_keycmp(hs->e[i - 1].key, hs->e[i].key) < 0);
    assert_true(hostsnap_keycmp("iface.eth0.rx-2.rps_cpus", "iface.eth0.rx-10.rps_cpus") < 0);
    hostsnap_free(hs);
}

/* Seed 002: the IPoIB host whose fix was RPS on ib0 (20 -> 23 Gbit/s). */
static void test_take_seed002(void **state)
{
    struct hostsnap *hs = hostsnap_new();

    (void)state;
    hostsnap_take(NETRIG_FIXTURES "/seed002-ipoib", hs);
    assert_key(hs, "iface.ib0.mtu", "65520");
    assert_key(hs, "iface.ib0.tx_queue_len", "256");
    assert_key(hs, "iface.ib0.rx-0.rps_cpus", "00");
    assert_key(hs, "iface.ib0.driver", "ib_ipoib");
    assert_key(hs, "iface.ib0.offload.tso", "off [fixed]");
    assert_key(hs, "iface.ib0.offload.gro", "on");
    assert_key(hs, "iface.ib0.coalesce.rx-usecs", "10");
    assert_key(hs, "iface.ib0.coalesce.rx-frames", "16");
    assert_null(hostsnap_get(hs, "iface.ib0.ring.rx")); /* EOPNOTSUPP */
    assert_key(hs, "iface.ib0.qdisc", "pfifo_fast");
    assert_key(hs, "iface.ib0.numa_node", "-1"); /* from the PCI device, as the audit reads it */
    assert_key(hs, "kernel.osrelease", "3.12.28-4-default");
    assert_key(hs, "net.ipv4.tcp_notsent_lowat", "-1");
    assert_key(hs, "netfilter.conntrack", "not loaded");
    hostsnap_free(hs);
}

struct seen {
    int n;
    char line[64][200];
};

static void record(const char *key, const char *va, const char *vb, void *arg)
{
    struct seen *s = arg;

    if (s->n < 64)
        snprintf(s->line[s->n], sizeof(s->line[0]), "%s:%s:%s", key, va ? va : "-", vb ? vb : "-");
    s->n++;
}

static bool has_line(const struct seen *s, const char *line)
{
    for (int i = 0; i < s->n && i < 64; i++)
        if (!strcmp(s->line[i], line))
            return true;
    return false;
}

/* Seed 000 before and after its tuning steps: every change is listed with both values. */
static void test_diff_seed000(void **state)
{
    struct hostsnap *a = hostsnap_new(), *b = hostsnap_new();
    struct seen *s = calloc(1, sizeof(*s));
    static const char *const expect[] = {
        "cpu.governor:ondemand:performance",
        "iface.enp94s0f0.coalesce.adaptive-rx:on:off",
        "iface.enp94s0f0.mtu:1500:9000",
        "iface.enp94s0f0.offload.lro:off:on",
        "iface.enp94s0f0.qdisc_leaf:pfifo_fast:fq",
        "iface.enp94s0f0.tx_queue_len:1000:20000",
        "irqbalance:running:not running",
        "net.core.default_qdisc:pfifo_fast:fq",
        "net.core.netdev_max_backlog:1000:300000",
        "net.core.rmem_max:212992:563870912",
        "net.ipv4.tcp_congestion_control:cubic:htcp",
        "net.ipv4.tcp_mtu_probing:0:1",
    };

    (void)state;
    hostsnap_take(NETRIG_FIXTURES "/seed000-before", a);
    hostsnap_take(NETRIG_FIXTURES "/seed000-after", b);
    hostsnap_diff(a, b, record, s);
    for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++)
        if (!has_line(s, expect[i]))
            fail_msg("the diff lacks %s", expect[i]);
    /* the clock changed too, but it is an observation, not a setting */
    assert_string_not_equal(hostsnap_get(a, "cpu.freq_mhz"), hostsnap_get(b, "cpu.freq_mhz"));
    for (int i = 0; i < s->n && i < 64; i++)
        assert_true(strncmp(s->line[i], "cpu.freq_mhz", 12));
    free(s);
    hostsnap_free(a);
    hostsnap_free(b);
}

static void test_diff(void **state)
{
    struct hostsnap *a = hostsnap_new(), *b = hostsnap_new();
    struct seen *s = calloc(1, sizeof(*s));

    (void)state;
    hostsnap_set(a, "net.ipv4.tcp_congestion_control", "cubic");
    hostsnap_set(a, "net.core.rmem_max", "212992");
    hostsnap_set(a, "iface.eth0.mtu", "1500");
    hostsnap_set(a, "kernel.osrelease", "6.1.0");
    hostsnap_set(a, "cpu.freq_mhz", "1200");
    hostsnap_set(b, "kernel.osrelease", "6.1.0");
    hostsnap_set(b, "net.core.rmem_max", "67108864");
    hostsnap_set(b, "net.ipv4.tcp_congestion_control", "bbr");
    hostsnap_set(b, "net.core.default_qdisc", "fq");
    hostsnap_set(b, "cpu.freq_mhz", "3000");
    assert_int_equal(hostsnap_diff(a, b, record, s), 4);
    assert_int_equal(s->n, 4);
    /* in key order; an absent value is NULL; the clock is no difference */
    assert_string_equal(s->line[0], "iface.eth0.mtu:1500:-");
    assert_string_equal(s->line[1], "net.core.default_qdisc:-:fq");
    assert_string_equal(s->line[2], "net.core.rmem_max:212992:67108864");
    assert_string_equal(s->line[3], "net.ipv4.tcp_congestion_control:cubic:bbr");
    assert_int_equal(hostsnap_diff(a, a, NULL, NULL), 0);
    hostsnap_clear(b);
    assert_int_equal(hostsnap_diff(a, b, NULL, NULL), 4);
    free(s);
    hostsnap_free(a);
    hostsnap_free(b);
}

static void test_set_normalizes_and_bounds(void **state)
{
    struct hostsnap *hs = hostsnap_new();
    char key[HOSTSNAP_KEY_MAX + 8], *val = malloc(HOSTSNAP_VAL_MAX * 2);

    (void)state;
    assert_int_equal(hostsnap_set(hs, "k", "  a \t b\n\x01 c  "), 0);
    assert_string_equal(hostsnap_get(hs, "k"), "a b ? c");
    assert_int_equal(hostsnap_set(hs, "k", "new"), 0);
    assert_int_equal(hs->n, 1);
    assert_string_equal(hostsnap_get(hs, "k"), "new");
    memset(key, 'x', sizeof(key) - 1);
    key[sizeof(key) - 1] = '\0';
    assert_int_equal(hostsnap_set(hs, key, "v"), -EINVAL);
    key[HOSTSNAP_KEY_MAX - 1] = '\0';
    assert_int_equal(hostsnap_set(hs, key, "v"), 0);
    assert_int_equal(hostsnap_set(hs, "", "v"), -EINVAL);
    assert_int_equal(hostsnap_set(hs, "a key", "v"), -EINVAL);
    assert_int_equal(hostsnap_set(hs, "k\x7f", "v"), -EINVAL);
    /* a long value is cut, never overflows */
    memset(val, 'v', HOSTSNAP_VAL_MAX * 2 - 1);
    val[HOSTSNAP_VAL_MAX * 2 - 1] = '\0';
    assert_int_equal(hostsnap_set(hs, "long", val), 0);
    assert_int_equal(strlen(hostsnap_get(hs, "long")), HOSTSNAP_VAL_MAX - 1);
    /* "a01" and "a1" sort together but stay two keys */
    assert_int_equal(hostsnap_set(hs, "a01", "x"), 0);
    assert_int_equal(hostsnap_set(hs, "a1", "y"), 0);
    assert_string_equal(hostsnap_get(hs, "a01"), "x");
    assert_string_equal(hostsnap_get(hs, "a1"), "y");
    assert_int_not_equal(hostsnap_keycmp("a01", "a1"), 0);
    hostsnap_clear(hs);
    for (int i = 0; i < HOSTSNAP_MAX + 5; i++) {
        char k[32];
        snprintf(k, sizeof(k), "key%05d", i);
        assert_int_equal(hostsnap_set(hs, k, "v"), i < HOSTSNAP_MAX ? 0 : -ENOSPC);
    }
    assert_int_equal(hs->n, HOSTSNAP_MAX);
    free(val);
    hostsnap_free(hs);
}

static void test_json_round_trip(void **state)
{
    struct hostsnap *a = hostsnap_new(), *b = hostsnap_new();
    char err[256];
    cJSON *j;

    (void)state;
    hostsnap_take(root, a);
    j = hostsnap_to_json(a);
    assert_non_null(j);
    assert_int_equal(hostsnap_from_json(j, b, err, sizeof(err)), 0);
    assert_int_equal(b->n, a->n);
    assert_int_equal(hostsnap_diff(a, b, NULL, NULL), 0);
    for (uint32_t i = 0; i < a->n; i++)
        assert_string_equal(a->e[i].key, b->e[i].key);
    cJSON_Delete(j);
    hostsnap_free(a);
    hostsnap_free(b);
}

/* Decodes text; expects failure naming `why`, and an empty snapshot after it. */
static void refused(const char *text, const char *why)
{
    struct hostsnap *hs = hostsnap_new();
    cJSON *j = cJSON_Parse(text);
    char err[256] = "";

    hostsnap_set(hs, "stale", "x");
    assert_int_equal(hostsnap_from_json(j, hs, err, sizeof(err)), -EINVAL);
    assert_contains(err, why);
    assert_int_equal(hs->n, 0);
    cJSON_Delete(j);
    hostsnap_free(hs);
}

static void test_json_hostile(void **state)
{
    struct hostsnap *hs = hostsnap_new();
    cJSON *j = cJSON_CreateObject();
    char err[256], k[32], *text;
    struct timespec t0, t1;

    (void)state;
    refused("[1, 2]", "not a JSON object");
    refused("\"x\"", "not a JSON object");
    refused("{\"a\": 1}", "not a string");
    refused("{\"a\": {\"b\": \"c\"}}", "not a string");
    refused("{\"a\": null}", "not a string");
    refused("{\"a b\": \"c\"}", "invalid setting name");
    refused("{\"\": \"c\"}", "invalid setting name");
    refused("{\"a\\u0001\": \"c\"}", "invalid setting name");
    refused("{\"a\": \"c\", \"a\": \"d\"}", "given twice");
    text = malloc(HOSTSNAP_VAL_MAX + 32);
    snprintf(text, 16, "{\"a\": \"");
    memset(text + 7, 'v', HOSTSNAP_VAL_MAX);
    snprintf(text + 7 + HOSTSNAP_VAL_MAX, 8, "\"}");
    refused(text, "longer than");
    free(text);
    /* control bytes in a value are kept harmless */
    cJSON *v = cJSON_Parse("{\"k\": \"a\\u0007b\\nc\"}");
    assert_int_equal(hostsnap_from_json(v, hs, err, sizeof(err)), 0);
    assert_string_equal(hostsnap_get(hs, "k"), "a?b c");
    cJSON_Delete(v);
    /* the most a snapshot may hold, sent in reverse order: accepted, sorted, quickly */
    for (int i = HOSTSNAP_MAX - 1; i >= 0; i--) {
        snprintf(k, sizeof(k), "k.%d", i);
        cJSON_AddStringToObject(j, k, "v");
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(hostsnap_from_json(j, hs, err, sizeof(err)), 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_int_equal(hs->n, HOSTSNAP_MAX);
    assert_string_equal(hs->e[0].key, "k.0");
    assert_string_equal(hs->e[HOSTSNAP_MAX - 1].key, "k.16383");
    /* sorting, not inserting one by one: far below a second even under a sanitizer */
    assert_true((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 2000);
    cJSON_AddStringToObject(j, "one.too.many", "v");
    assert_int_equal(hostsnap_from_json(j, hs, err, sizeof(err)), -EINVAL);
    assert_contains(err, "more than 16384 settings");
    assert_int_equal(hs->n, 0);
    cJSON_Delete(j);
    hostsnap_free(hs);
}

/* Every sysctl netrig audit reads — each "/proc/sys/..." path in the audit's sources and each file
 * under proc/sys of the fixture hosts — is one the snapshot records. */
static void check_recorded(const char *path)
{
    size_t n;
    const char *const *list = hostsnap_sysctls(&n);
    char name[128];
    size_t i;

    snprintf(name, sizeof(name), "%s", path + strlen("/proc/sys/"));
    for (char *p = name; *p; p++)
        if (*p == '/')
            *p = '.';
    for (i = 0; i < n && strcmp(list[i], name); i++)
        ;
    if (i == n && strcmp(name, "net.netfilter.nf_conntrack_count") &&
        strcmp(name, "kernel.hostname"))
        fail_msg("the audit reads %s but the host snapshot does not record it", name);
}

static void scan_source(const char *file, size_t *found)
{
    FILE *f = fopen(file, "r");
    char line[1024];

    assert_non_null(f);
    while (fgets(line, sizeof(line), f)) {
        for (char *p = strstr(line, "\"/proc/sys/"); p; p = strstr(p + 1, "\"/proc/sys/")) {
            char path[160];
            size_t len = strcspn(p + 1, "\"");
            if (len <= strlen("/proc/sys/") || len >= sizeof(path) || memchr(p + 1, '%', len))
                continue;
            snprintf(path, sizeof(path), "%.*s", (int)len, p + 1);
            check_recorded(path);
            (*found)++;
        }
    }
    fclose(f);
}

static void test_audit_sysctls_recorded(void **state)
{
    char dir[] = NETRIG_SOURCE_DIR "/src/audit", file[600], cmd[700], path[600];
    DIR *d = opendir(dir);
    struct dirent *de;
    size_t found = 0;
    FILE *p;

    (void)state;
    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l < 3 || strcmp(de->d_name + l - 2, ".c"))
            continue;
        snprintf(file, sizeof(file), "%s/%s", dir, de->d_name);
        scan_source(file, &found);
    }
    closedir(d);
    assert_true(found >= 20); /* the scan found the audit's reads */
    snprintf(cmd, sizeof(cmd), "cd '%s' && find . -path '*/proc/sys/*' -type f", NETRIG_FIXTURES);
    p = popen(cmd, "r");
    assert_non_null(p);
    found = 0;
    while (fgets(path, sizeof(path), p)) {
        char *ps = strstr(path, "/proc/sys/");
        path[strcspn(path, "\n")] = '\0';
        if (ps) {
            check_recorded(ps);
            found++;
        }
    }
    pclose(p);
    assert_true(found >= 20);
}

/* This machine: the snapshot has its version and the loopback interface. */
static void test_take_live(void **state)
{
    struct hostsnap *hs = hostsnap_new();

    (void)state;
    hostsnap_take(NULL, hs);
    assert_key(hs, "host.snapshot", "2");
    assert_non_null(hostsnap_get(hs, "iface.lo.mtu"));
    assert_non_null(hostsnap_get(hs, "kernel.osrelease"));
    hostsnap_free(hs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_take_fixture),
        cmocka_unit_test(test_take_seed002),
        cmocka_unit_test(test_diff_seed000),
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_set_normalizes_and_bounds),
        cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_json_hostile),
        cmocka_unit_test(test_audit_sysctls_recorded),
        cmocka_unit_test(test_take_live),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
