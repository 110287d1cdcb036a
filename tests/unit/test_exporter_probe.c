/* exporter_probe: /probe's query and scrape timeout into a test, every bad one named. */
#include "test_util.h"

#include "exporter_probe.h"
#include "sock.h"

#include <string.h>

/* Parses "k=v" pairs; returns the parse's result, err filled. */
static int parse(const char *const *kv, unsigned n, double timeout, struct client_opts *o,
                 char *err, size_t errlen)
{
    const char *names[16], *values[16];
    static char buf[16][128];

    for (unsigned i = 0; i < n; i++) {
        char *eq;
        snprintf(buf[i], sizeof(buf[i]), "%s", kv[i]);
        eq = strchr(buf[i], '=');
        *eq = '\0';
        names[i] = buf[i];
        values[i] = eq + 1;
    }
    err[0] = '\0';
    return exporter_probe_parse(names, values, n, timeout, o, err, errlen);
}

static void good(void **state)
{
    const char *a[] = {"target=192.0.2.1:5400", "module=rr", "size=64,1K"};
    const char *b[] = {"target=[2001:db8::1]", "test=stream", "duration=2s", "parallel=4"};
    const char *c[] = {"target=2001:db8::2", "test=stream", "omit=1s"};
    struct client_opts o;
    char err[512];

    (void)state;
    assert_int_equal(parse(a, 3, 10, &o, err, sizeof(err)), 0);
    assert_string_equal(o.host, "192.0.2.1");
    assert_int_equal(o.port, 5400);
    assert_int_equal(o.p.test, PARAMS_TEST_RR);
    /* no duration: all of the timeout less the margin (0.5 s + 10 %) */
    assert_true(o.p.duration_ns == 8500000000ULL);
    assert_int_equal(parse(b, 4, 5, &o, err, sizeof(err)), 0);
    assert_string_equal(o.host, "2001:db8::1");
    assert_int_equal(o.port, SOCK_DEFAULT_PORT);
    assert_int_equal(o.p.flows, 4);
    assert_true(o.p.duration_ns == 2000000000ULL);
    /* no header: 10 s as blackbox assumes; omit comes out of the budget */
    assert_int_equal(parse(c, 3, 0, &o, err, sizeof(err)), 0);
    assert_string_equal(o.host, "2001:db8::2");
    assert_true(o.p.duration_ns == 7500000000ULL);
}

/* Each bad query is refused naming the parameter. */
static void bad(void **state)
{
    static const struct {
        const char *kv[3];
        unsigned n;
        double timeout;
        const char *want;
    } cases[] = {
        {{"test=rr"}, 1, 10, "missing parameter 'target'"},
        {{"target=h", "tst=rr"}, 2, 10, "unknown parameter 'tst'"},
        {{"target=h", "test=rr", "module=crr"}, 3, 10, "bad parameter 'module': given twice"},
        {{"target=h:0"}, 1, 10, "bad parameter 'target': invalid port '0'"},
        {{"target=[::1"}, 1, 10, "bad parameter 'target'"},
        {{"target=h", "duration=10s"}, 2, 10, "bad parameter 'duration': 10s"},
        {{"target=h", "omit=9s"}, 2, 10, "bad parameter 'omit'"},
        {{"target=h", "parallel=0"}, 2, 10, "bad parameter 'parallel': invalid parallel '0'"},
        {{"target=h", "test=rr", "bitrate=5M"}, 3, 10, "bad parameter 'bitrate'"},
        {{"target=h", "user=a#b"}, 2, 10, "bad parameter 'user'"},
        {{"target=h", "window="}, 2, 10, "bad parameter 'window': it has no value"},
    };
    struct client_opts o;
    char err[512];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(parse(cases[i].kv, cases[i].n, cases[i].timeout, &o, err, sizeof(err)),
                         -1);
        if (!strstr(err, cases[i].want))
            fail_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].want);
    }
    assert_true(exporter_probe_margin(10) > 1.49 && exporter_probe_margin(10) < 1.51);
}

/* test=load: the length split a fifth / three fifths / a fifth; its own parameters only. */
static void load(void **state)
{
    const char *names[] = {"target", "module", "parallel"}, *values[] = {"[::1]:5400", "load", "2"};
    const char *bad_n[] = {"target", "test", "size"}, *bad_v[] = {"h", "load", "64"};
    struct load_opts lo;
    char err[512];

    (void)state;
    assert_true(exporter_probe_is_load(names, values, 3));
    assert_false(exporter_probe_is_load(bad_n, values, 1));
    assert_int_equal(exporter_probe_parse_load(names, values, 3, 10, &lo, err, sizeof(err)), 0);
    assert_string_equal(lo.base.host, "::1");
    assert_int_equal(lo.base.port, 5400);
    assert_int_equal(lo.lp.flows, 2);
    assert_true(lo.lp.baseline_ns == 1700000000ULL && lo.lp.loaded_ns == 5100000000ULL &&
                lo.lp.recovery_ns == 1700000000ULL);
    assert_int_equal(exporter_probe_parse_load(bad_n, bad_v, 3, 10, &lo, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "bad parameter 'size'"));
    assert_int_equal(exporter_probe_parse_load(names, values, 2, 1, &lo, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "bad parameter 'duration'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good),
        cmocka_unit_test(bad),
        cmocka_unit_test(load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
