/* Unit tests for units.c: strict parsing of sizes, rates, durations and counts, and the
 * exact strings the formatters print. */
#include "test_util.h"

#include <errno.h>
#include <stdint.h>

#include "units.h"

/* For values from 2^63 up to 2^64, which fit a uint64_t: the parser must return them exactly
 * or refuse them with -ERANGE, never silently return another number. */
static void expect_exact_or_erange(int (*parse)(const char *, uint64_t *), const char *s,
                                   uint64_t want)
{
    uint64_t v = 0;
    int rc = parse(s, &v);

    if (rc == 0 && v != want)
        fail_msg("\"%s\" parsed as %llu, expected %llu (or -ERANGE)", s, (unsigned long long)v,
                 (unsigned long long)want);
    if (rc != 0 && rc != -ERANGE)
        fail_msg("\"%s\" returned %d, expected 0 or -ERANGE", s, rc);
}

/* ---- sizes (powers of 1024) ---- */

static uint64_t size_ok(const char *s)
{
    uint64_t v = 0xdeadbeef;
    int rc = units_parse_size(s, &v);

    if (rc)
        fail_msg("units_parse_size(\"%s\") = %d, expected 0", s, rc);
    return v;
}

static void test_size_plain_and_suffixes(void **state)
{
    (void)state;
    assert_int_equal(size_ok("10"), 10);
    assert_int_equal(size_ok("0"), 0);
    assert_int_equal(size_ok("128K"), 131072);
    assert_int_equal(size_ok("128k"), 131072);
    assert_int_equal(size_ok("1M"), 1048576);
    assert_int_equal(size_ok("2G"), 2147483648ULL);
    assert_int_equal(size_ok("1T"), 1099511627776ULL);
    assert_int_equal(size_ok("1.5K"), 1536);
    assert_int_equal(size_ok("4KiB"), 4096);
    assert_int_equal(size_ok("4KB"), 4096);
    assert_int_equal(size_ok("16MiB"), 16777216);
}

static void test_size_rejects_garbage(void **state)
{
    static const char *const bad[] = {"",    "-5",  "+5",  "5x",  " 5",    "5 ",  "K",
                                      "1.5", "0.5", "5KK", "5Kx", "5KiBs", "abc", "."};
    uint64_t v;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        v = 77;
        int rc = units_parse_size(bad[i], &v);
        if (rc != -EINVAL)
            fail_msg("units_parse_size(\"%s\") = %d, expected -EINVAL", bad[i], rc);
    }
    assert_int_equal(units_parse_size(NULL, &v), -EINVAL);
}

static void test_size_overflow(void **state)
{
    uint64_t v = 0;

    (void)state;
    assert_int_equal(units_parse_size("99999999999999999999", &v), -ERANGE);
    assert_int_equal(units_parse_size("16777216T", &v), -ERANGE); /* exactly 2^64 */
    assert_int_equal(units_parse_size("20000000T", &v), -ERANGE);
    /* too large for a double at all: still an error, never a value */
    assert_true(units_parse_size("1e400", &v) < 0);
}

static void test_size_between_2_63_and_2_64(void **state)
{
    (void)state;
    /* 10000000 TiB = 10995116277760000000 bytes, below 2^64 = 18446744073709551616 */
    expect_exact_or_erange(units_parse_size, "10000000T", 10995116277760000000ULL);
}

/* ---- rates (powers of 1000, bits/s; B means bytes) ---- */

static uint64_t rate_ok(const char *s)
{
    uint64_t v = 0xdeadbeef;
    int rc = units_parse_rate(s, &v);

    if (rc)
        fail_msg("units_parse_rate(\"%s\") = %d, expected 0", s, rc);
    return v;
}

static void test_rate_values(void **state)
{
    (void)state;
    assert_int_equal(rate_ok("200M"), 200000000ULL);
    assert_int_equal(rate_ok("10G"), 10000000000ULL);
    assert_int_equal(rate_ok("10g"), 10000000000ULL);
    assert_int_equal(rate_ok("1.5G"), 1500000000ULL);
    assert_int_equal(rate_ok("100MB"), 800000000ULL);
    assert_int_equal(rate_ok("100MBps"), 800000000ULL);
    assert_int_equal(rate_ok("100MB/s"), 800000000ULL);
    assert_int_equal(rate_ok("1Kbps"), 1000);
    assert_int_equal(rate_ok("1Kbit/s"), 1000);
    assert_int_equal(rate_ok("1Mb"), 1000000);
    assert_int_equal(rate_ok("5000"), 5000);
    assert_int_equal(rate_ok("1T"), 1000000000000ULL);
}

static void test_rate_rejects(void **state)
{
    static const char *const bad[] = {"abc", "-1", "", " 1", "10X", "10Gx", "10 G", "G", "1Gbpsx"};
    uint64_t v;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = units_parse_rate(bad[i], &v);
        if (rc != -EINVAL)
            fail_msg("units_parse_rate(\"%s\") = %d, expected -EINVAL", bad[i], rc);
    }
    assert_int_equal(units_parse_rate("99999999999999999999", &v), -ERANGE);
}

static void test_rate_between_2_63_and_2_64(void **state)
{
    (void)state;
    expect_exact_or_erange(units_parse_rate, "10000000T", 10000000000000000000ULL);
}

/* ---- durations (nanoseconds) ---- */

static uint64_t dur_ok(const char *s)
{
    uint64_t v = 0xdeadbeef;
    int rc = units_parse_duration(s, &v);

    if (rc)
        fail_msg("units_parse_duration(\"%s\") = %d, expected 0", s, rc);
    return v;
}

static void test_duration_values(void **state)
{
    (void)state;
    assert_int_equal(dur_ok("10"), 10000000000ULL);
    assert_int_equal(dur_ok("10s"), 10000000000ULL);
    assert_int_equal(dur_ok("500ms"), 500000000ULL);
    assert_int_equal(dur_ok("250us"), 250000ULL);
    assert_int_equal(dur_ok("2m"), 120000000000ULL);
    assert_int_equal(dur_ok("2min"), 120000000000ULL);
    assert_int_equal(dur_ok("1h"), 3600000000000ULL);
    assert_int_equal(dur_ok("1.5s"), 1500000000ULL);
    assert_int_equal(dur_ok("0.1"), 100000000ULL);
    assert_int_equal(dur_ok("0"), 0);
}

static void test_duration_rejects(void **state)
{
    static const char *const bad[] = {"-5", "5x", "", " 5", "5 s", "5S", "5sec", "ms", "5hh"};
    uint64_t v;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = units_parse_duration(bad[i], &v);
        if (rc != -EINVAL)
            fail_msg("units_parse_duration(\"%s\") = %d, expected -EINVAL", bad[i], rc);
    }
    /* 1e10 hours do not fit in 64-bit nanoseconds */
    assert_int_equal(units_parse_duration("10000000000h", &v), -ERANGE);
}

static void test_duration_between_2_63_and_2_64(void **state)
{
    (void)state;
    expect_exact_or_erange(units_parse_duration, "5000000h", 18000000000000000000ULL);
}

/* ---- counts ---- */

static void test_count(void **state)
{
    static const char *const bad[] = {"",    "-1",  "+1",   " 1",  "1 ",
                                      "4.5", "1e3", "0x10", "abc", "4k"};
    uint64_t v = 0;

    (void)state;
    assert_int_equal(units_parse_count("4", &v), 0);
    assert_int_equal(v, 4);
    assert_int_equal(units_parse_count("1000", &v), 0);
    assert_int_equal(v, 1000);
    assert_int_equal(units_parse_count("0", &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(units_parse_count("18446744073709551615", &v), 0);
    assert_int_equal(v, UINT64_MAX);
    assert_int_equal(units_parse_count("18446744073709551616", &v), -ERANGE);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = units_parse_count(bad[i], &v);
        if (rc != -EINVAL)
            fail_msg("units_parse_count(\"%s\") = %d, expected -EINVAL", bad[i], rc);
    }
    assert_int_equal(units_parse_count(NULL, &v), -EINVAL);
}

/* ---- formatting ---- */

static void check_rate_str(double bps, const char *want)
{
    char buf[64];

    units_format_rate(bps, buf, sizeof(buf));
    if (strcmp(buf, want))
        fail_msg("units_format_rate(%g) = \"%s\", expected \"%s\"", bps, buf, want);
}

static void check_bytes_str(double bytes, const char *want)
{
    char buf[64];

    units_format_bytes(bytes, buf, sizeof(buf));
    if (strcmp(buf, want))
        fail_msg("units_format_bytes(%g) = \"%s\", expected \"%s\"", bytes, buf, want);
}

static void test_format_rate(void **state)
{
    (void)state;
    check_rate_str(21.93e9, "21.93 Gbit/s");
    check_rate_str(191.3e6, "191.3 Mbit/s");
    check_rate_str(0, "0.00 bit/s");
    check_rate_str(999, "999.0 bit/s");
    check_rate_str(1000, "1.00 Kbit/s");
    check_rate_str(9.5e6, "9.50 Mbit/s");
    check_rate_str(100e9, "100.0 Gbit/s");
    check_rate_str(1.5e12, "1.50 Tbit/s");
    check_rate_str(2.5e15, "2500.0 Tbit/s"); /* no unit past T */
}

static void test_format_rate_truncates_safely(void **state)
{
    char buf[6];

    (void)state;
    memset(buf, 'x', sizeof(buf));
    units_format_rate(21.93e9, buf, sizeof(buf));
    assert_string_equal(buf, "21.93");
}

static void test_format_bytes(void **state)
{
    (void)state;
    check_bytes_str(0, "0 B");
    check_bytes_str(1023, "1023 B");
    check_bytes_str(1024, "1.00 KiB");
    check_bytes_str(1536, "1.50 KiB");
    check_bytes_str(131072, "128.0 KiB");
    check_bytes_str(1048576, "1.00 MiB");
    check_bytes_str(1.5 * 1073741824.0, "1.50 GiB");
    check_bytes_str(2.0 * 1099511627776.0, "2.00 TiB");
    check_bytes_str(2048.0 * 1099511627776.0, "2048.0 TiB");
}

static void check_duration_str(double sec, const char *want)
{
    char buf[64];

    units_format_duration(sec, buf, sizeof(buf));
    if (strcmp(buf, want))
        fail_msg("units_format_duration(%g) = \"%s\", expected \"%s\"", sec, buf, want);
}

/* the durations every command prints (the audit's and diagnose's RTTs, tune's targets) */
static void test_format_duration(void **state)
{
    (void)state;
    check_duration_str(0.03, "30 ms");
    check_duration_str(0.0403, "40.3 ms");
    check_duration_str(0.001, "1 ms");
    check_duration_str(850e-6, "850 us");
    check_duration_str(35.2e-6, "35.2 us");
    check_duration_str(1.5, "1.5 s");
    check_duration_str(0, "0 us");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_plain_and_suffixes),
        cmocka_unit_test(test_size_rejects_garbage),
        cmocka_unit_test(test_size_overflow),
        cmocka_unit_test(test_size_between_2_63_and_2_64),
        cmocka_unit_test(test_rate_values),
        cmocka_unit_test(test_rate_rejects),
        cmocka_unit_test(test_rate_between_2_63_and_2_64),
        cmocka_unit_test(test_duration_values),
        cmocka_unit_test(test_duration_rejects),
        cmocka_unit_test(test_duration_between_2_63_and_2_64),
        cmocka_unit_test(test_count),
        cmocka_unit_test(test_format_rate),
        cmocka_unit_test(test_format_rate_truncates_safely),
        cmocka_unit_test(test_format_bytes),
        cmocka_unit_test(test_format_duration),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
