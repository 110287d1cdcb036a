/* Unit tests for cgcpu.c: the process's cgroup from /proc/self/cgroup, v1 and v2 counters and
 * quotas on the fixture trees of tests/fixtures/cgroup, and hostile text. */
#define _GNU_SOURCE
#include "test_util.h"

#include <errno.h>
#include <stdio.h>

#include "cgcpu.h"

static void root(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", NETRIG_CGFIX, name);
}

static void test_parse_self(void **state)
{
    struct cgcpu_where w;

    (void)state;
    assert_int_equal(cgcpu_parse_self("4:memory:/m\n3:cpu,cpuacct:/a/b\n0::/c\n", &w), 0);
    assert_string_equal(w.v1_cpu_ctl, "cpu,cpuacct");
    assert_string_equal(w.v1_cpu, "/a/b");
    assert_string_equal(w.v1_acct, "/a/b");
    assert_true(w.has_v2);
    assert_string_equal(w.v2, "/c");
    /* "cpuset" is not "cpu"; a line without two colons is skipped */
    assert_int_equal(cgcpu_parse_self("3:cpuset:/x\njunk\n", &w), -ENOENT);
    assert_string_equal(w.v1_cpu_ctl, "");
    assert_int_equal(cgcpu_parse_self("", &w), -ENOENT);
}

static void test_parse_max_and_stat(void **state)
{
    struct cgcpu_snap s = {0};

    (void)state;
    assert_true(cgcpu_parse_max("max 100000") == 0);
    assert_true(cgcpu_parse_max("30000 100000") == 0.3);
    assert_true(cgcpu_parse_max("30000 0") < 0);
    assert_true(cgcpu_parse_max("junk") < 0);
    cgcpu_parse_stat("nr_periods 5\nnr_throttled 2\nthrottled_time 7\n", 1, &s);
    assert_true(s.has_throttle);
    assert_int_equal(s.throttled_ns, 7);
    memset(&s, 0, sizeof(s));
    cgcpu_parse_stat("nr_periods 5\nnr_throttled 2\n", 1, &s); /* throttled_time missing */
    assert_false(s.has_throttle);
    cgcpu_parse_stat("usage_usec 9\nuser_usec 4\nsystem_usec 5\n", 2, &s);
    assert_true(s.has_usage && s.has_user_sys);
    assert_int_equal(s.usage_ns, 9000);
}

static void test_v1(void **state)
{
    char r[512];
    struct cgcpu_snap s;

    (void)state;
    root("v1", r, sizeof(r));
    assert_int_equal(cgcpu_sample(r, &s), 0);
    assert_int_equal(s.version, 1);
    assert_string_equal(s.path, "/pod/netrig");
    assert_true(s.has_usage && s.has_user_sys && s.has_throttle);
    assert_int_equal(s.usage_ns, 604100000ULL);
    assert_int_equal(s.user_ns, 104100000ULL);
    assert_int_equal(s.system_ns, 500000000ULL);
    assert_int_equal(s.nr_periods, 200);
    assert_int_equal(s.nr_throttled, 140);
    assert_int_equal(s.throttled_ns, 9800000000ULL);
    /* the parent's 0.25 CPU is tighter than the cgroup's own 0.3 */
    assert_true(s.quota_cores > 0.2499 && s.quota_cores < 0.2501);
}

static void test_v1_split(void **state)
{
    char r[512];
    struct cgcpu_snap s;

    (void)state;
    root("v1split", r, sizeof(r));
    assert_int_equal(cgcpu_sample(r, &s), 0);
    assert_int_equal(s.version, 1);
    assert_true(s.has_usage);
    assert_false(s.has_user_sys);
    assert_int_equal(s.usage_ns, 2000000000ULL);
    assert_true(s.has_throttle);
    assert_int_equal(s.nr_throttled, 0);
    assert_true(s.quota_cores == 0);
}

static void test_v2(void **state)
{
    char r[512];
    struct cgcpu_snap s;

    (void)state;
    root("v2", r, sizeof(r));
    assert_int_equal(cgcpu_sample(r, &s), 0);
    assert_int_equal(s.version, 2);
    assert_string_equal(s.path, "/kubepods/pod1/c1");
    assert_int_equal(s.usage_ns, 3500000000ULL);
    assert_int_equal(s.user_ns, 1000000000ULL);
    assert_int_equal(s.system_ns, 2500000000ULL);
    assert_int_equal(s.nr_periods, 50);
    assert_int_equal(s.nr_throttled, 7);
    assert_int_equal(s.throttled_ns, 420000000ULL);
    assert_true(s.quota_cores > 1.4999 && s.quota_cores < 1.5001);
}

static void test_none(void **state)
{
    char r[512];
    struct cgcpu_snap s;

    (void)state;
    root("none", r, sizeof(r));
    assert_int_equal(cgcpu_sample(r, &s), 0);
    assert_int_equal(s.version, 0);
    root("absent", r, sizeof(r));
    assert_true(cgcpu_sample(r, &s) < 0);
    assert_int_equal(s.version, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_self), cmocka_unit_test(test_parse_max_and_stat),
        cmocka_unit_test(test_v1),         cmocka_unit_test(test_v1_split),
        cmocka_unit_test(test_v2),         cmocka_unit_test(test_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
