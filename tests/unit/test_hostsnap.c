/* Unit tests for hostsnap.c: reading a fixture sysroot, normalizing values, and the diff of
 * two snapshots that compare uses to say what changed between runs. */
#include "test_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
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

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof(root), "/tmp/netrig-test-hostsnap.XXXXXX");
    if (!mkdtemp(root))
        return -1;
    put("/proc/sys/kernel/osrelease", "6.1.0-test\n");
    put("/proc/sys/kernel/hostname", "fixture\n");
    put("/proc/sys/net/ipv4/tcp_rmem", "4096\t131072\t6291456\n");
    put("/proc/sys/net/ipv4/tcp_congestion_control", "bbr\n");
    put("/proc/sys/net/core/rmem_max", "212992\n");
    put("/proc/sys/net/core/default_qdisc", "fq\n");
    put("/proc/cpuinfo", "processor\t: 0\nmodel name\t: Test CPU  9000\nflags\t: x\n");
    put("/sys/devices/system/cpu/online", "0-3\n");
    put("/sys/class/net/eth0/mtu", "9000\n");
    put("/sys/class/net/eth0/speed", "100000\n");
    put("/sys/class/net/eth0/queues/rx-0/x", "");
    put("/sys/class/net/eth0/queues/rx-1/x", "");
    put("/sys/class/net/eth0/queues/tx-0/x", "");
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

static void test_take_fixture(void **state)
{
    struct hostsnap *hs = malloc(sizeof(*hs));

    (void)state;
    hostsnap_take(root, hs);
    assert_string_equal(hostsnap_get(hs, "kernel.osrelease"), "6.1.0-test");
    assert_string_equal(hostsnap_get(hs, "host.name"), "fixture");
    assert_string_equal(hostsnap_get(hs, "net.ipv4.tcp_rmem"), "4096 131072 6291456");
    assert_string_equal(hostsnap_get(hs, "net.ipv4.tcp_congestion_control"), "bbr");
    assert_string_equal(hostsnap_get(hs, "net.core.rmem_max"), "212992");
    assert_string_equal(hostsnap_get(hs, "net.core.default_qdisc"), "fq");
    assert_string_equal(hostsnap_get(hs, "cpu.model"), "Test CPU 9000");
    assert_string_equal(hostsnap_get(hs, "cpu.online"), "0-3");
    assert_string_equal(hostsnap_get(hs, "iface.eth0.mtu"), "9000");
    assert_string_equal(hostsnap_get(hs, "iface.eth0.speed"), "100000");
    assert_string_equal(hostsnap_get(hs, "iface.eth0.rx_queues"), "2");
    assert_string_equal(hostsnap_get(hs, "iface.eth0.tx_queues"), "1");
    assert_string_equal(hostsnap_get(hs, "iface.lo.mtu"), "65536");
    /* absent files are left out, not stored empty */
    assert_null(hostsnap_get(hs, "net.ipv4.tcp_wmem"));
    assert_null(hostsnap_get(hs, "iface.lo.rx_queues"));
    for (uint32_t i = 1; i < hs->n; i++)
        assert_true(strcmp(hs->e[i - 1].key, hs->e[i].key) < 0);
    free(hs);
}

struct seen {
    int n;
    char line[8][200];
};

static void record(const char *key, const char *va, const char *vb, void *arg)
{
    struct seen *s = arg;

    snprintf(s->line[s->n++], sizeof(s->line[0]), "%s:%s:%s", key, va ? va : "-", vb ? vb : "-");
}

static void test_diff(void **state)
{
    struct hostsnap *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
    struct seen s = {0};

    (void)state;
    hostsnap_set(a, "net.ipv4.tcp_congestion_control", "cubic");
    hostsnap_set(a, "net.core.rmem_max", "212992");
    hostsnap_set(a, "iface.eth0.mtu", "1500");
    hostsnap_set(a, "kernel.osrelease", "6.1.0");
    hostsnap_set(b, "kernel.osrelease", "6.1.0");
    hostsnap_set(b, "net.core.rmem_max", "67108864");
    hostsnap_set(b, "net.ipv4.tcp_congestion_control", "bbr");
    hostsnap_set(b, "net.core.default_qdisc", "fq");
    assert_int_equal(hostsnap_diff(a, b, record, &s), 4);
    assert_int_equal(s.n, 4);
    /* in key order; an absent value is NULL */
    assert_string_equal(s.line[0], "iface.eth0.mtu:1500:-");
    assert_string_equal(s.line[1], "net.core.default_qdisc:-:fq");
    assert_string_equal(s.line[2], "net.core.rmem_max:212992:67108864");
    assert_string_equal(s.line[3], "net.ipv4.tcp_congestion_control:cubic:bbr");
    assert_int_equal(hostsnap_diff(a, a, NULL, NULL), 0);
    hostsnap_clear(b);
    assert_int_equal(hostsnap_diff(a, b, NULL, NULL), 4);
    free(a);
    free(b);
}

static void test_set_normalizes_and_bounds(void **state)
{
    struct hostsnap *hs = calloc(1, sizeof(*hs));
    char key[HOSTSNAP_KEY_LEN + 8];

    (void)state;
    assert_int_equal(hostsnap_set(hs, "k", "  a \t b\n\x01 c  "), 0);
    assert_string_equal(hostsnap_get(hs, "k"), "a b ? c");
    assert_int_equal(hostsnap_set(hs, "k", "new"), 0);
    assert_int_equal(hs->n, 1);
    assert_string_equal(hostsnap_get(hs, "k"), "new");
    memset(key, 'x', sizeof(key) - 1);
    key[sizeof(key) - 1] = '\0';
    assert_int_equal(hostsnap_set(hs, key, "v"), -ENOSPC);
    for (int i = 0; i < HOSTSNAP_MAX + 5; i++) {
        char k[32];
        snprintf(k, sizeof(k), "key%04d", i);
        hostsnap_set(hs, k, "v");
    }
    assert_int_equal(hs->n, HOSTSNAP_MAX);
    free(hs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_take_fixture),
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_set_normalizes_and_bounds),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
