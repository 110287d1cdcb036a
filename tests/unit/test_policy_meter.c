/* The --max-rate meter (policy_meter_add): a test at the limit passes, start burst included;
 * one 20 % over is stopped within seconds, a flood at its first interval. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "policy.h"

/* Feeds one-second intervals moving bps (the first one first_extra bytes more) until the
 * meter trips or secs pass: the second it tripped at, or 0. */
static int run(uint64_t limit, double bps, double first_extra, int secs, double *got)
{
    struct policy_meter m = {.limit_bps = limit};

    for (int i = 0; i < secs; i++) {
        struct interval iv = {.start_s = i, .end_s = i + 1};
        iv.wire_bytes = (uint64_t)(bps / 8.0 + (i == 0 ? first_extra : 0));
        if (policy_meter_add(&m, &iv, got))
            return i + 1;
    }
    return 0;
}

static void test_at_limit_passes(void **state)
{
    double got;

    (void)state;
    /* 20M, with the 280 KB start burst measured on loopback, for a minute */
    assert_int_equal(run(20000000, 20e6, 280000, 60, &got), 0);
    /* 5 % over, for a minute: inside the tolerance */
    assert_int_equal(run(20000000, 21e6, 0, 60, &got), 0);
    /* no limit: never */
    assert_int_equal(run(0, 1e12, 0, 10, &got), 0);
}

static void test_over_limit_stopped(void **state)
{
    double got = 0;
    int at;

    (void)state;
    /* 20 % over: the bucket (2.5 MB + 1 MiB) drains by 0.25 MB a second */
    at = run(20000000, 24e6, 0, 60, &got);
    assert_in_range(at, 10, 20);
    assert_true(got > 23e6 && got < 25e6);
    /* a flood: at once */
    assert_int_equal(run(10000000, 16e9, 0, 10, &got), 1);
    assert_true(got > 15e9);
}

static void test_idle_then_burst(void **state)
{
    struct policy_meter m = {.limit_bps = 10000000};
    struct interval iv = {.start_s = 0, .end_s = 1, .wire_bytes = 0};
    double got;

    (void)state;
    /* a long idle stretch does not bank more than the bucket holds */
    for (int i = 0; i < 30; i++) {
        iv.start_s = i;
        iv.end_s = i + 1;
        assert_false(policy_meter_add(&m, &iv, &got));
    }
    iv.start_s = 30;
    iv.end_s = 31;
    iv.wire_bytes = 10000000 / 8 * 3; /* three seconds' worth in one */
    assert_true(policy_meter_add(&m, &iv, &got));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_at_limit_passes),
        cmocka_unit_test(test_over_limit_stopped),
        cmocka_unit_test(test_idle_then_burst),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
