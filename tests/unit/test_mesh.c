/* Unit tests for multi.c's target syntax and mesh.c's plan loading (errors name the element). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mesh.h"
#include "multi.h"

static void test_targets(void **state)
{
    struct multi_target t;

    (void)state;
    assert_int_equal(multi_parse_target("host.example", 5301, &t), 0);
    assert_string_equal(t.host, "host.example");
    assert_int_equal(t.port, 5301);
    assert_int_equal(multi_parse_target("10.0.0.1:6000", 5301, &t), 0);
    assert_string_equal(t.host, "10.0.0.1");
    assert_int_equal(t.port, 6000);
    assert_int_equal(multi_parse_target("[2001:db8::1]:7000", 5301, &t), 0);
    assert_string_equal(t.host, "2001:db8::1");
    assert_int_equal(t.port, 7000);
    assert_int_equal(multi_parse_target("[::1]", 5301, &t), 0);
    assert_string_equal(t.host, "::1");
    assert_int_equal(t.port, 5301);
    assert_int_equal(multi_parse_target("2001:db8::2", 5301, &t), 0); /* bare IPv6 */
    assert_string_equal(t.host, "2001:db8::2");
    assert_int_equal(t.port, 5301);
    assert_int_not_equal(multi_parse_target("h:0", 5301, &t), 0);
    assert_int_not_equal(multi_parse_target("h:70000", 5301, &t), 0);
    assert_int_not_equal(multi_parse_target("h:", 5301, &t), 0);
    assert_int_not_equal(multi_parse_target("h:12x", 5301, &t), 0);
    assert_int_not_equal(multi_parse_target(":80", 5301, &t), 0);
    assert_int_not_equal(multi_parse_target("[::1", 5301, &t), 0);
    assert_int_not_equal(multi_parse_target("[::1]x", 5301, &t), 0);
    assert_int_not_equal(multi_parse_target("", 5301, &t), 0);
}

static const char *write_plan(const char *text)
{
    static char path[64];
    FILE *f;

    snprintf(path, sizeof(path), "/tmp/netrig-plan-%d.json", (int)getpid());
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static int load(const char *text, struct mesh_plan *p, char *err, size_t len)
{
    int rc = mesh_load(write_plan(text), p, err, len);
    unlink(write_plan(""));
    return rc;
}

static void test_plan_full(void **state)
{
    struct mesh_plan p;
    char err[512];

    (void)state;
    assert_int_equal(load("{\"hosts\":[{\"name\":\"a\",\"address\":\"10.0.0.1\"},"
                          "{\"name\":\"b\",\"address\":\"10.0.0.2\",\"port\":6000},"
                          "{\"name\":\"c\",\"address\":\"::1\"}],"
                          "\"tests\":[{\"test\":\"rr\",\"params\":{\"duration_s\":2}},"
                          "{\"test\":\"stream\",\"params\":{\"flows\":4}}],"
                          "\"pairs\":\"full\",\"parallel\":true,\"timeout_s\":3}",
                          &p, err, sizeof(err)),
                     0);
    assert_int_equal(p.nhosts, 3);
    assert_int_equal(p.hosts[1].port, 6000);
    assert_int_equal(p.hosts[0].port, 5301);
    assert_int_equal(p.ntests, 2);
    assert_int_equal(p.tests[0].test, PARAMS_TEST_RR);
    assert_int_equal(p.tests[0].duration_ns, 2000000000ULL);
    assert_int_equal(p.tests[1].flows, 4);
    assert_int_equal(p.ncells, 12); /* 6 ordered pairs x 2 tests */
    assert_true(p.parallel);
    assert_int_equal(p.timeout_ms, 3000);
    for (uint32_t i = 0; i < p.ncells; i++)
        assert_int_not_equal(p.cells[i].src, p.cells[i].dst);
    mesh_free(&p);
}

static void test_plan_pairs(void **state)
{
    struct mesh_plan p;
    char err[512];

    (void)state;
    assert_int_equal(load("{\"hosts\":[{\"name\":\"a\",\"address\":\"x\"},{\"name\":\"b\","
                          "\"address\":\"y\"}],\"tests\":[{\"test\":\"crr\"}],"
                          "\"pairs\":[[\"b\",\"a\"]]}",
                          &p, err, sizeof(err)),
                     0);
    assert_int_equal(p.ncells, 1);
    assert_int_equal(p.cells[0].src, 1);
    assert_int_equal(p.cells[0].dst, 0);
    assert_false(p.parallel);
    mesh_free(&p);
}

static void expect_error(const char *text, const char *needle)
{
    struct mesh_plan p;
    char err[512] = "";

    assert_int_not_equal(load(text, &p, err, sizeof(err)), 0);
    if (!strstr(err, needle))
        fail_msg("error '%s' does not mention '%s'", err, needle);
    mesh_free(&p);
}

static void test_plan_errors(void **state)
{
    (void)state;
    expect_error("{\"hosts\": [", "line 1");
    expect_error("{\n\"hosts\": [\n{\"name\": }", "line 3");
    expect_error("{\"tests\":[{\"test\":\"rr\"}]}", "\"hosts\"");
    expect_error("{\"hosts\":[{\"name\":\"a\",\"address\":\"x\"}],\"tests\":[{\"test\":\"rr\"}]}",
                 "2 to 64");
    expect_error(
        "{\"hosts\":[{\"name\":\"a\",\"address\":\"x\"},{\"name\":\"a\",\"address\":\"y\"}],"
        "\"tests\":[{\"test\":\"rr\"}]}",
        "used twice");
    expect_error("{\"hosts\":[{\"name\":\"a\",\"address\":\"x\"},{\"name\":\"b\"}],"
                 "\"tests\":[{\"test\":\"rr\"}]}",
                 "hosts[1]");
    expect_error("{\"hosts\":[{\"name\":\"a\",\"address\":\"x\"},{\"name\":\"b\",\"address\":\"y\","
                 "\"port\":0}],\"tests\":[{\"test\":\"rr\"}]}",
                 "hosts[1]");
    expect_error(
        "{\"hosts\":[{\"name\":\"a\",\"address\":\"x\"},{\"name\":\"b\",\"address\":\"y\"}],"
        "\"tests\":[{\"test\":\"ping\"}]}",
        "tests[0]");
    expect_error(
        "{\"hosts\":[{\"name\":\"a\",\"address\":\"x\"},{\"name\":\"b\",\"address\":\"y\"}],"
        "\"tests\":[{\"test\":\"rr\"},{\"test\":\"stream\",\"params\":{\"flows\":0}}]}",
        "tests[1].params");
    expect_error(
        "{\"hosts\":[{\"name\":\"a\",\"address\":\"x\"},{\"name\":\"b\",\"address\":\"y\"}],"
        "\"tests\":[{\"test\":\"rr\"}],\"pairs\":[[\"a\",\"a\"]]}",
        "pairs[0]");
    expect_error(
        "{\"hosts\":[{\"name\":\"a\",\"address\":\"x\"},{\"name\":\"b\",\"address\":\"y\"}],"
        "\"tests\":[{\"test\":\"rr\"}],\"pairs\":[[\"a\",\"zz\"]]}",
        "pairs[0]");
    expect_error(
        "{\"hosts\":[{\"name\":\"a\",\"address\":\"x\"},{\"name\":\"b\",\"address\":\"y\"}],"
        "\"tests\":[{\"test\":\"rr\"}],\"pairs\":7}",
        "\"pairs\"");
}

static void test_plan_missing_file(void **state)
{
    struct mesh_plan p;
    char err[512];

    (void)state;
    assert_int_not_equal(mesh_load("/nonexistent/plan.json", &p, err, sizeof(err)), 0);
    assert_non_null(strstr(err, "/nonexistent/plan.json"));
    mesh_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_targets),           cmocka_unit_test(test_plan_full),
        cmocka_unit_test(test_plan_pairs),        cmocka_unit_test(test_plan_errors),
        cmocka_unit_test(test_plan_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
