/* Unit tests for cpulist.c: parsing and formatting CPU lists, and resolving -A values,
 * including "auto" against a fixture sysroot. */
#define _GNU_SOURCE
#include "test_util.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpulist.h"

static void assert_cpus(const struct cpulist *cl, const int *want, int n)
{
    if (cl->n != n)
        fail_msg("cpulist has %d CPUs, expected %d", cl->n, n);
    for (int i = 0; i < n; i++)
        if (cl->cpu[i] != want[i])
            fail_msg("cpu[%d] = %d, expected %d", i, cl->cpu[i], want[i]);
}

static void test_parse_ranges(void **state)
{
    static const int want[] = {0, 1, 2, 3, 8, 10, 11};
    struct cpulist cl;

    (void)state;
    assert_int_equal(cpulist_parse("0-3,8,10-11", &cl), 0);
    assert_cpus(&cl, want, 7);
}

static void test_parse_kernel_form(void **state)
{
    struct cpulist cl;

    (void)state;
    assert_int_equal(cpulist_parse("0-17,36-53\n", &cl), 0);
    assert_int_equal(cl.n, 36);
    assert_int_equal(cl.cpu[0], 0);
    assert_int_equal(cl.cpu[17], 17);
    assert_int_equal(cl.cpu[18], 36);
    assert_int_equal(cl.cpu[35], 53);
}

static void test_parse_single_and_spaces(void **state)
{
    static const int want[] = {5, 7, 8};
    struct cpulist cl;

    (void)state;
    assert_int_equal(cpulist_parse("5", &cl), 0);
    assert_cpus(&cl, want, 1);
    assert_int_equal(cpulist_parse(" 5 , 7-8 \n", &cl), 0);
    assert_cpus(&cl, want, 3);
}

static void test_parse_rejects(void **state)
{
    static const char *const bad[] = {
        "3-1",    "2-1", "a",   "",    "1,,2", " ",     "\n",
        "-1",     "1-",  "1-a", "1;2", "0x3",  "65536", "99999999999999999999",
        "0-65535"};
    struct cpulist cl;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = cpulist_parse(bad[i], &cl);
        if (rc != -EINVAL)
            fail_msg("cpulist_parse(\"%s\") = %d, expected -EINVAL", bad[i], rc);
    }
}

static void test_parse_max(void **state)
{
    struct cpulist cl;
    char spec[32];

    (void)state;
    snprintf(spec, sizeof(spec), "0-%d", CPULIST_MAX - 1);
    assert_int_equal(cpulist_parse(spec, &cl), 0);
    assert_int_equal(cl.n, CPULIST_MAX);
    snprintf(spec, sizeof(spec), "0-%d", CPULIST_MAX);
    assert_int_equal(cpulist_parse(spec, &cl), -EINVAL);
}

static void test_format_round_trip(void **state)
{
    static const char *const specs[] = {"0-3,8", "0", "0-17,36-53", "1,3,5", "0-3,8,10-11"};
    struct cpulist cl, back;
    char buf[256];

    (void)state;
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        assert_int_equal(cpulist_parse(specs[i], &cl), 0);
        cpulist_format(&cl, buf, sizeof(buf));
        assert_string_equal(buf, specs[i]);
        assert_int_equal(cpulist_parse(buf, &back), 0);
        assert_int_equal(back.n, cl.n);
        assert_memory_equal(back.cpu, cl.cpu, sizeof(int) * (size_t)cl.n);
    }
}

static void test_format_empty_and_small_buffer(void **state)
{
    struct cpulist cl = {.n = 0};
    char buf[8];

    (void)state;
    memset(buf, 'x', sizeof(buf));
    cpulist_format(&cl, buf, sizeof(buf));
    assert_string_equal(buf, "");
    assert_int_equal(cpulist_parse("0-3,8,10-11,20", &cl), 0);
    memset(buf, 'x', sizeof(buf));
    cpulist_format(&cl, buf, sizeof(buf));
    assert_int_equal(strlen(buf), sizeof(buf) - 1); /* truncated, still terminated */
    assert_memory_equal(buf, "0-3,8,1", 8);
}

static void test_online_matches_machine(void **state)
{
    struct cpulist cl;
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    (void)state;
    assert_int_equal(cpulist_online(&cl), 0);
    assert_true(cl.n >= 1);
    assert_true(cl.n <= n);
    for (int i = 1; i < cl.n; i++)
        assert_true(cl.cpu[i] > cl.cpu[i - 1]);
}

/* ---- resolve ---- */

static void test_resolve_empty(void **state)
{
    struct cpulist cl = {.n = 3};
    char err[256] = "", note[256] = "stale";

    (void)state;
    assert_int_equal(
        cpulist_resolve(NULL, "", "127.0.0.1", &cl, err, sizeof(err), note, sizeof(note)), 0);
    assert_int_equal(cl.n, 0);
    assert_string_equal(note, "");
    cl.n = 3;
    assert_int_equal(
        cpulist_resolve(NULL, NULL, "127.0.0.1", &cl, err, sizeof(err), note, sizeof(note)), 0);
    assert_int_equal(cl.n, 0);
}

static void test_resolve_bad_spec(void **state)
{
    struct cpulist cl;
    char err[256] = "", note[256];

    (void)state;
    assert_int_equal(
        cpulist_resolve(NULL, "2-x", "127.0.0.1", &cl, err, sizeof(err), note, sizeof(note)),
        -EINVAL);
    assert_contains(err, "'2-x'");
}

static void test_resolve_explicit_online(void **state)
{
    struct cpulist online, cl;
    char spec[16], err[256] = "", note[256];

    (void)state;
    assert_int_equal(cpulist_online(&online), 0);
    snprintf(spec, sizeof(spec), "%d", online.cpu[0]);
    assert_int_equal(
        cpulist_resolve(NULL, spec, "127.0.0.1", &cl, err, sizeof(err), note, sizeof(note)), 0);
    assert_int_equal(cl.n, 1);
    assert_int_equal(cl.cpu[0], online.cpu[0]);
}

static void test_resolve_cpu_not_online(void **state)
{
    struct cpulist cl;
    char err[256] = "", note[256];

    (void)state;
    assert_int_equal(
        cpulist_resolve(NULL, "4000", "127.0.0.1", &cl, err, sizeof(err), note, sizeof(note)),
        -EINVAL);
    assert_contains(err, "CPU 4000");
    assert_contains(err, "'4000'");
    assert_int_equal(
        cpulist_resolve(NULL, "0,4000", "127.0.0.1", &cl, err, sizeof(err), note, sizeof(note)),
        -EINVAL);
    assert_contains(err, "CPU 4000");
}

static void test_resolve_auto_loopback_real_sys(void **state)
{
    struct cpulist cl = {.n = 5};
    char err[256] = "", note[256] = "";

    (void)state;
    /* lo has no PCI device, so "auto" falls back to no pinning and says why */
    assert_int_equal(
        cpulist_resolve(NULL, "auto", "127.0.0.1", &cl, err, sizeof(err), note, sizeof(note)), 0);
    assert_int_equal(cl.n, 0);
    assert_contains(note, "found no NIC-local CPUs");
    assert_contains(note, "lo has no PCI device");
}

static void test_resolve_auto_bad_peer(void **state)
{
    struct cpulist cl = {.n = 5};
    char err[256] = "", note[256] = "";

    (void)state;
    assert_int_equal(
        cpulist_resolve(NULL, "auto", "not-an-address", &cl, err, sizeof(err), note, sizeof(note)),
        0);
    assert_int_equal(cl.n, 0);
    assert_contains(note, "no route to not-an-address");
}

/* ---- a fixture sysroot: <tmp>/sys/class/net/lo/device/local_cpulist ---- */

struct fixture {
    char root[64];
    char dirs[5][160];
    char file[192];
};

static int fixture_setup(void **state)
{
    static const char *const parts[] = {"/sys", "/sys/class", "/sys/class/net", "/sys/class/net/lo",
                                        "/sys/class/net/lo/device"};
    struct fixture *fx = calloc(1, sizeof(*fx));

    if (!fx)
        return -1;
    snprintf(fx->root, sizeof(fx->root), "/tmp/netrig-cpulist-XXXXXX");
    if (!mkdtemp(fx->root)) {
        free(fx);
        return -1;
    }
    /* a copy: gcc -O1 with ASan cannot tell fx->root from fx->dirs (-Wrestrict) */
    char root[sizeof(fx->root)];
    memcpy(root, fx->root, sizeof(root));
    for (int i = 0; i < 5; i++) {
        snprintf(fx->dirs[i], sizeof(fx->dirs[i]), "%s%s", root, parts[i]);
        if (mkdir(fx->dirs[i], 0755))
            return -1;
    }
    snprintf(fx->file, sizeof(fx->file), "%s/local_cpulist", fx->dirs[4]);
    *state = fx;
    return 0;
}

static int fixture_teardown(void **state)
{
    struct fixture *fx = *state;

    if (!fx)
        return 0;
    unlink(fx->file);
    for (int i = 4; i >= 0; i--)
        rmdir(fx->dirs[i]);
    rmdir(fx->root);
    free(fx);
    return 0;
}

static void write_cpulist(const struct fixture *fx, const char *text)
{
    FILE *f = fopen(fx->file, "w");

    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

static void test_for_peer_fixture(void **state)
{
    struct fixture *fx = *state;
    static const int want[] = {0, 1};
    struct cpulist cl;
    char ifname[64] = "", why[256] = "";

    write_cpulist(fx, "0-1\n");
    assert_int_equal(
        cpulist_for_peer(fx->root, "127.0.0.1", &cl, ifname, sizeof(ifname), why, sizeof(why)), 0);
    assert_string_equal(ifname, "lo");
    assert_cpus(&cl, want, 2);
}

static void test_for_peer_fixture_unparsable(void **state)
{
    struct fixture *fx = *state;
    struct cpulist cl;
    char ifname[64] = "", why[256] = "";

    write_cpulist(fx, "zero\n");
    assert_int_equal(
        cpulist_for_peer(fx->root, "127.0.0.1", &cl, ifname, sizeof(ifname), why, sizeof(why)),
        -EINVAL);
    assert_contains(why, "cannot parse");
    assert_contains(why, "local_cpulist");
}

static void test_resolve_auto_fixture(void **state)
{
    struct fixture *fx = *state;
    struct cpulist online, cl;
    char err[256] = "", note[256] = "";
    bool have0 = false, have1 = false;

    assert_int_equal(cpulist_online(&online), 0);
    for (int i = 0; i < online.n; i++) {
        have0 |= online.cpu[i] == 0;
        have1 |= online.cpu[i] == 1;
    }
    if (!have0 || !have1)
        skip(); /* needs CPUs 0 and 1 usable by this process */
    write_cpulist(fx, "0-1\n");
    assert_int_equal(
        cpulist_resolve(fx->root, "auto", "127.0.0.1", &cl, err, sizeof(err), note, sizeof(note)),
        0);
    assert_int_equal(cl.n, 2);
    assert_int_equal(cl.cpu[0], 0);
    assert_int_equal(cl.cpu[1], 1);
    assert_contains(note, "CPUs local to lo");
}

static void test_resolve_auto_fixture_checks_online(void **state)
{
    struct fixture *fx = *state;
    struct cpulist cl;
    char err[256] = "", note[256] = "";

    /* the NIC's CPUs must still be CPUs this process can use */
    write_cpulist(fx, "0,4000\n");
    assert_int_equal(
        cpulist_resolve(fx->root, "auto", "127.0.0.1", &cl, err, sizeof(err), note, sizeof(note)),
        -EINVAL);
    assert_contains(err, "CPU 4000");
    assert_contains(err, "'auto'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_ranges),
        cmocka_unit_test(test_parse_kernel_form),
        cmocka_unit_test(test_parse_single_and_spaces),
        cmocka_unit_test(test_parse_rejects),
        cmocka_unit_test(test_parse_max),
        cmocka_unit_test(test_format_round_trip),
        cmocka_unit_test(test_format_empty_and_small_buffer),
        cmocka_unit_test(test_online_matches_machine),
        cmocka_unit_test(test_resolve_empty),
        cmocka_unit_test(test_resolve_bad_spec),
        cmocka_unit_test(test_resolve_explicit_online),
        cmocka_unit_test(test_resolve_cpu_not_online),
        cmocka_unit_test(test_resolve_auto_loopback_real_sys),
        cmocka_unit_test(test_resolve_auto_bad_peer),
        cmocka_unit_test_setup_teardown(test_for_peer_fixture, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_for_peer_fixture_unparsable, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(test_resolve_auto_fixture, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_resolve_auto_fixture_checks_online, fixture_setup,
                                        fixture_teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
