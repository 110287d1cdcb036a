/* core/clock.h: the readings agree with each other, and a timed wait's deadline is the reading
 * plus the wait, normalised (tv_nsec below a second), never in the past. */
#include "test_util.h"

#include "clock.h"

static uint64_t ts_ns(struct timespec ts)
{
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void test_readings(void **state)
{
    uint64_t a = clock_mono_ns(), b;
    double s = clock_mono_s();
    int64_t ms = clock_mono_ms();

    (void)state;
    b = clock_mono_ns();
    assert_true(b >= a);
    assert_true(s * 1e9 >= (double)a - 1e3 && s * 1e9 <= (double)b + 1e3);
    assert_true(ms >= (int64_t)(a / 1000000) && ms <= (int64_t)(b / 1000000));
    /* the wall clock is Unix time: after 2020 */
    assert_true(clock_real_s() > 1577836800.0);
    assert_true(clock_real_ns() / 1000000000ULL >= 1577836800ULL);
}

static void test_deadline(void **state)
{
    static const int64_t waits[] = {0, 1, 999, 1000, 1500, 2999, 86400000};

    (void)state;
    for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
        uint64_t before = clock_mono_ns();
        struct timespec ts = clock_deadline_ts(CLOCK_MONOTONIC, waits[i]);
        uint64_t after = clock_mono_ns(), want = (uint64_t)waits[i] * 1000000ULL;

        assert_true(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L);
        assert_true(ts_ns(ts) >= before + want);
        assert_true(ts_ns(ts) <= after + want);
    }
    {
        /* a negative wait is now, not the past */
        uint64_t before = clock_real_ns();
        struct timespec ts = clock_deadline_ts(CLOCK_REALTIME, -5000);

        assert_true(ts_ns(ts) >= before);
        assert_true(ts_ns(ts) <= clock_real_ns());
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_readings),
        cmocka_unit_test(test_deadline),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
