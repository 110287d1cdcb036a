/* exporter_config: the exporter's configuration file, good and bad; exporter_classify. */
#include "test_util.h"

#include "exporter.h"
#include "exporter_config.h"

#include <errno.h>
#include <stdlib.h>

static struct exporter_config cfg; /* large: not on the stack */

static void good_file(void **state)
{
    char err[512] = "";
    const char *text = "# comment\n"
                       "listen = [::1]:9465\n"
                       "min_interval = 10s   # inline comment\n"
                       "max_duration = 20s\n"
                       "\n"
                       "[target lab-a]\n"
                       "  host = 192.0.2.1\n"
                       "port = 5301\n"
                       "test = stream\n"
                       "protocol = udp\n"
                       "bitrate = 100M\n"
                       "parallel = 4\n"
                       "interval = 1m\n"
                       "duration = 10s\n"
                       "[target lat.b]\n"
                       "host = example.net\n"
                       "test = rr\n"
                       "size = 64,1K\n"
                       "timeout = 2s\n"
                       "user = probe\n";

    (void)state;
    assert_int_equal(exporter_config_parse(text, "x.conf", &cfg, err, sizeof(err)), 0);
    assert_string_equal(cfg.listen, "[::1]:9465");
    assert_int_equal(cfg.ntargets, 2);
    assert_string_equal(cfg.t[0].name, "lab-a");
    assert_string_equal(cfg.t[0].o.host, "192.0.2.1");
    assert_true(cfg.t[0].o.p.udp);
    assert_int_equal(cfg.t[0].o.p.udp_rate_bps, 100000000);
    assert_int_equal(cfg.t[0].o.p.flows, 4);
    assert_true(cfg.t[0].interval_ns == 60000000000ULL);
    assert_int_equal(cfg.t[0].line, 6);
    assert_int_equal(cfg.t[1].o.p.test, PARAMS_TEST_RR);
    assert_int_equal(cfg.t[1].o.p.req_size, 64);
    assert_int_equal(cfg.t[1].o.p.resp_size, 1024);
    assert_int_equal(cfg.t[1].o.timeout_ms, 2000);
    assert_true(cfg.t[1].interval_ns == 10000000000ULL); /* min_interval by default */
    assert_true(cfg.t[1].o.p.duration_ns == 5000000000ULL);
    assert_string_equal(cfg.t[1].o.user, "probe");
}

/* Each bad file: refused, naming the line and the problem. */
static void bad_files(void **state)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"[target a]\nhost = h\nfoo = 1\n", "x.conf:3: unknown key 'foo'"},
        {"host = h\n", "x.conf:1: 'host' belongs in a [target NAME] section"},
        {"[target a]\nhost = h\nhost = i\n",
         "x.conf:3: 'host' is given twice in target 'a' (first on line 2)"},
        {"[target a]\nhost = h\nport = 70000\n", "x.conf:3: invalid port '70000'"},
        {"[target a]\nhost = h\ntest = tcp_rr\n",
         "x.conf:3: invalid test 'tcp_rr': use stream, rr, crr or mptcp"},
        {"[target a]\nhost = h\ninterval = 0.5s\n", "x.conf:3: invalid interval '0.5s'"},
        {"[target a]\nhost = h\nsize = 1,1\n",
         "x.conf:3: target 'a': size applies to rr and crr only"},
        {"[target a]\nhost = h\ntest = rr\nbitrate = 1M\n",
         "x.conf:4: target 'a': bitrate applies"},
        {"[target a]\nhost = h\ntest = crr\ndirection = reverse\n",
         "x.conf:4: target 'a': direction applies to stream and mptcp only"},
        {"[target a]\nhost = h\nduration = 1m\n",
         "x.conf:3: target 'a': a test of 60s (omit included) exceeds max_duration 30s"},
        {"[target a]\nhost = h\ninterval = 5s\nduration = 5s\nmin_interval = 1s\n",
         "x.conf:5: 'min_interval' belongs"},
        {"min_interval = 5s\n[target a]\nhost = h\ninterval = 5s\nduration = 5s\n",
         "x.conf:4: target 'a': interval 5s leaves no time"},
        {"[target a b]\nhost = h\n", "x.conf:1: invalid target name 'a b'"},
        {"[target]\n", "x.conf:1: unknown section '[target]'"},
        {"[target a\n", "x.conf:1: malformed section header"},
        {"just words\n", "x.conf:1: expected 'key = value'"},
        {"Listen = :1\n", "x.conf:1: invalid key 'Listen'"},
        {"listen =\n", "x.conf:1: 'listen' has no value"},
        {"listen = ::1:80\n", "x.conf:1: invalid listen '::1:80'"},
        {"[target a]\nhost = h\nparallel = 0\n", "x.conf:3: invalid parallel '0'"},
        {"[target a]\nhost = h\nthreads = 300\n", "x.conf:3: invalid threads '300'"},
        {"[target a]\nhost = h\n\x01\n", "x.conf:3: control character 0x01"},
        {"", "x.conf: no [target NAME] section: nothing to run"},
        {"min_interval = 1s\n[target a]\nhost = h\ninterval = 1.5s\nduration = 1s\n[target "
         "b]\nhost = h\n"
         "interval = 2s\nduration = 1s\n",
         "x.conf: the targets need 117% of the time"},
    };
    char err[512];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        err[0] = '\0';
        if (exporter_config_parse(cases[i].text, "x.conf", &cfg, err, sizeof(err)) == 0)
            fail_msg("case %zu was accepted: %s", i, cases[i].text);
        assert_contains(err, cases[i].want);
    }
}

static void long_line(void **state)
{
    char *text = malloc(3000), err[512] = "";

    (void)state;
    memset(text, 'a', 2999);
    text[2999] = '\0';
    assert_int_equal(exporter_config_parse(text, "x.conf", &cfg, err, sizeof(err)), -1);
    assert_contains(err, "x.conf:1: line longer than");
    free(text);
}

static void classify(void **state)
{
    (void)state;
    assert_int_equal(exporter_classify(1, ""), EXPORTER_PARTIAL);
    assert_int_equal(exporter_classify(-ECONNREFUSED, "connection refused by x"), EXPORTER_REFUSED);
    assert_int_equal(exporter_classify(-ETIMEDOUT, "no answer"), EXPORTER_TIMEOUT);
    assert_int_equal(exporter_classify(-EHOSTUNREACH, "cannot resolve host 'x': y"),
                     EXPORTER_RESOLVE);
    assert_int_equal(exporter_classify(-EHOSTUNREACH, "cannot connect"), EXPORTER_UNREACHABLE);
    assert_int_equal(exporter_classify(-EPROTO, "server refused the test: server busy: 3 tests"),
                     EXPORTER_BUSY);
    assert_int_equal(exporter_classify(-EPROTO, "server refused the test: exceeds --max-flows"),
                     EXPORTER_REJECTED);
    assert_int_equal(exporter_classify(-EPROTO, "server refused the test: authentication failed"),
                     EXPORTER_AUTH);
    assert_int_equal(exporter_classify(-EIO, "something"), EXPORTER_ERROR);
    assert_string_equal(exporter_reason_name(EXPORTER_UNREACHABLE), "unreachable");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_file),
        cmocka_unit_test(bad_files),
        cmocka_unit_test(long_line),
        cmocka_unit_test(classify),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
