/* prom, metrics and report_live: the text format, the daemon's counters, the live frame. */
#include "test_util.h"

#include "metrics.h"
#include "prom.h"
#include "prom_guard.h"
#include "report_live.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>

static void escape_and_samples(void **state)
{
    struct prom_buf b = {0};
    char esc[64];

    (void)state;
    prom_escape("a\"b\\c\nd", esc, sizeof(esc));
    assert_string_equal(esc, "a\\\"b\\\\c\\nd");
    prom_escape("abcdef", esc, 4);
    assert_string_equal(esc, "abc");
    prom_family(&b, "x_total", "counter", "Things.");
    prom_sample(&b, "x_total", "k=\"v\"", 3);
    prom_sample(&b, "y", NULL, 0.5);
    prom_sample(&b, "z", "", 1.0 / 0.0);
    prom_sample(&b, "big", NULL, 1e20);
    assert_string_equal(b.data, "# HELP x_total Things.\n# TYPE x_total counter\n"
                                "x_total{k=\"v\"} 3\ny 0.5\nz +Inf\nbig 1e+20\n");
    prom_buf_free(&b);
}

static void listen_specs(void **state)
{
    char host[64];
    uint16_t port;

    (void)state;
    assert_int_equal(prom_parse_listen("127.0.0.1:9464", host, sizeof(host), &port), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 9464);
    assert_int_equal(prom_parse_listen("[::1]:0", host, sizeof(host), &port), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 0);
    assert_int_equal(prom_parse_listen(":80", host, sizeof(host), &port), 0);
    assert_string_equal(host, "");
    static const char *const bad[] = {"",        "9464", "::1:80",  "h:",   "h:x",
                                      "h:65536", "h:-1", "[::1]80", "[::1", "h:1a"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (prom_parse_listen(bad[i], host, sizeof(host), &port) == 0)
            fail_msg("'%s' was accepted", bad[i]);
}

static void daemon_counters(void **state)
{
    struct metrics *m = metrics_create();
    struct params p;
    struct side_flow flows[2] = {{.sender = false, .bytes = 1000, .seconds = 2},
                                 {.sender = true, .bytes = 500, .seconds = 2}};
    struct side_result side = {.nflows = 2, .flows = flows};
    struct sockaddr_in sin = {.sin_family = AF_INET};
    struct prom_buf b = {0};

    (void)state;
    params_defaults(&p);
    inet_pton(AF_INET, "192.0.2.7", &sin.sin_addr);
    metrics_test_started(m, &p);
    metrics_test_done(m, &p, (struct sockaddr *)&sin, &side, true);
    metrics_refused(m, METRICS_REFUSED_ACL);
    metrics_refused(m, METRICS_REFUSED_N); /* out of range: ignored */
    metrics_control_error(m, METRICS_STAGE_RUN);
    metrics_refused(NULL, METRICS_REFUSED_BUSY); /* no registry: nothing */
    metrics_render(m, &b);
    assert_contains(b.data, "netrig_tests_served_total{test=\"stream\",protocol=\"tcp\"} 1\n");
    assert_contains(b.data, "netrig_tests_running{test=\"stream\",protocol=\"tcp\"} 0\n");
    assert_contains(b.data, "netrig_served_bytes_total{test=\"stream\",protocol=\"tcp\",direction="
                            "\"received\"} 1000\n");
    assert_contains(
        b.data,
        "netrig_served_bytes_total{test=\"stream\",protocol=\"tcp\",direction=\"sent\"} 500\n");
    assert_contains(b.data, "netrig_refusals_total{reason=\"acl\"} 1\n");
    assert_contains(b.data, "netrig_refusals_total{reason=\"busy\"} 0\n");
    assert_contains(b.data, "netrig_control_errors_total{stage=\"run\"} 1\n");
    assert_contains(b.data, "netrig_client_last_throughput_bytes_per_second{client=\"192.0.2.7\","
                            "test=\"stream\",protocol=\"tcp\"} 750\n");
    assert_null(strstr(b.data, "test=\"crr\",protocol=\"udp\"")); /* no such kind */
    prom_buf_free(&b);
    metrics_destroy(m);
}

/* rr and crr: the measured period is the side's (their flows do not time the last byte), the
 * responses count as sent bytes; and a client's series stay per kind: an rr test does not
 * make its stream series vanish. */
static void daemon_rr_kinds(void **state)
{
    struct metrics *m = metrics_create();
    struct params p;
    struct side_flow sf[2] = {{.sender = false, .bytes = 100, .seconds = 2},
                              {.sender = true, .bytes = 300, .seconds = 2}};
    struct side_flow rf[2] = {{.bytes = 640, .txns = 10}, {.bytes = 1280, .txns = 20}};
    struct side_result stream = {.nflows = 2, .flows = sf, .seconds = 2};
    struct side_result rr = {.nflows = 2, .flows = rf, .seconds = 4};
    struct sockaddr_in sin = {.sin_family = AF_INET};
    struct prom_buf b = {0};

    (void)state;
    params_defaults(&p);
    inet_pton(AF_INET, "192.0.2.9", &sin.sin_addr);
    metrics_test_done(m, &p, (struct sockaddr *)&sin, &stream, true);
    p.test = PARAMS_TEST_RR;
    p.req_size = 64;
    p.resp_size = 1000;
    metrics_test_done(m, &p, (struct sockaddr *)&sin, &rr, true);
    metrics_render(m, &b);
    /* 30 requests of 64 bytes in, 30 responses of 1000 bytes out, over 4 s */
    assert_contains(b.data, "netrig_served_bytes_total{test=\"rr\",protocol=\"tcp\",direction="
                            "\"received\"} 1920\n");
    assert_contains(b.data, "netrig_served_bytes_total{test=\"rr\",protocol=\"tcp\",direction="
                            "\"sent\"} 30000\n");
    assert_contains(b.data, "netrig_served_seconds_total{test=\"rr\",protocol=\"tcp\"} 4\n");
    assert_contains(b.data, "netrig_client_last_duration_seconds{client=\"192.0.2.9\",test=\"rr\","
                            "protocol=\"tcp\"} 4\n");
    assert_contains(b.data, "netrig_client_last_bytes{client=\"192.0.2.9\",test=\"rr\","
                            "protocol=\"tcp\"} 31920\n");
    assert_contains(b.data, "netrig_client_last_transactions{client=\"192.0.2.9\",test=\"rr\","
                            "protocol=\"tcp\"} 30\n");
    assert_contains(b.data, "netrig_client_last_throughput_bytes_per_second{client=\"192.0.2.9\","
                            "test=\"rr\",protocol=\"tcp\"} 7980\n");
    /* the stream series of the same client is still there */
    assert_contains(b.data, "netrig_client_last_throughput_bytes_per_second{client=\"192.0.2.9\","
                            "test=\"stream\",protocol=\"tcp\"} 200\n");
    prom_buf_free(&b);
    metrics_destroy(m);
}

/* The client table is bounded: the least recent client is forgotten. */
static void clients_bounded(void **state)
{
    struct metrics *m = metrics_create();
    struct params p;
    struct side_result side = {0};
    struct prom_buf b = {0};
    int rows = 0;

    (void)state;
    params_defaults(&p);
    for (int i = 0; i < METRICS_MAX_CLIENTS + 10; i++) {
        struct sockaddr_in sin = {.sin_family = AF_INET,
                                  .sin_addr.s_addr = htonl(0x0a000000u + (uint32_t)i)};
        metrics_test_done(m, &p, (struct sockaddr *)&sin, &side, true);
    }
    metrics_render(m, &b);
    for (const char *s = b.data; (s = strstr(s, "\nnetrig_client_last_bytes{")); s++)
        rows++;
    assert_int_equal(rows, METRICS_MAX_CLIENTS);
    assert_null(strstr(b.data, "client=\"10.0.0.0\""));      /* the first, forgotten */
    assert_non_null(strstr(b.data, "client=\"10.0.0.73\"")); /* the last, kept */
    prom_buf_free(&b);
    metrics_destroy(m);
}

static void live_frame(void **state)
{
    struct interval_flow cells[3] = {{.bytes = 125000000, .retrans = 2, .rtt_us = 40, .cwnd = 10},
                                     {.bytes = 125000000, .rtt_us = 50, .cwnd = 12},
                                     {.bytes = 0}};
    struct interval iv = {.start_s = 1,
                          .end_s = 2,
                          .sent_bytes = 250000000,
                          .retrans = 2,
                          .flows = cells,
                          .cpu = {.valid = 1, .busy_pct = 12.5}};
    struct side_flow sf[3] = {{.id = 0}, {.id = 1}, {.id = 2}};
    struct side_result s = {.nflows = 3, .flows = sf};
    struct run_result r = {.test = "stream", .server = "192.0.2.1:5301"};
    char buf[4096];
    int n;

    (void)state;
    params_defaults(&r.params);
    r.params.flows = 3;
    r.params.duration_ns = 30000000000ULL;
    n = report_live_frame(buf, sizeof(buf), 40, 100, &r, &s, &iv);
    assert_int_equal(n, 7); /* title, heads, 3 flows, total, CPU */
    assert_contains(buf, "2.0 of 30.0 s, 28.0 s left");
    assert_contains(buf, "   0 up        1.00 Gbit/s");
    assert_contains(buf, "total");
    assert_contains(buf, "CPU client  12.5% busy");
    /* a short terminal: rows cut, the rest counted in a line */
    n = report_live_frame(buf, sizeof(buf), 7, 100, &r, &s, &iv);
    assert_contains(buf, "... and 2 more flows");
    assert_int_equal(n, 6);
    /* a narrow terminal: no line reaches the last column */
    report_live_frame(buf, sizeof(buf), 40, 30, &r, &s, &iv);
    for (char *l = buf, *nl; (nl = strchr(l, '\n')); l = nl + 1)
        assert_true(nl - l <= 29);
    /* never live where it cannot be drawn */
    assert_false(report_live_wanted(REPORT_LIVE_ON, NULL, true, 0));
    assert_false(report_live_wanted(REPORT_LIVE_OFF, stdout, true, 60000000000ULL));
}

/* prom_guard: a burst, then the rate; each address its own bucket; many addresses forget the
 * oldest, never refuse a new one */
static void guard_rates(void **state)
{
    struct prom_guard g = {0};
    struct sockaddr_in a = {.sin_family = AF_INET}, b = a;
    int ok = 0;

    (void)state;
    inet_pton(AF_INET, "127.0.2.1", &a.sin_addr);
    inet_pton(AF_INET, "127.0.2.2", &b.sin_addr);
    for (int i = 0; i < 100; i++)
        ok += prom_guard_admit(&g, (struct sockaddr *)&a, 1000);
    assert_int_equal(ok, PROM_GUARD_BURST);
    assert_int_equal(g.refused, 100 - PROM_GUARD_BURST);
    assert_true(prom_guard_admit(&g, (struct sockaddr *)&b, 1000)); /* its own bucket */
    ok = 0;
    for (int i = 0; i < 100; i++) /* half a second later: half a second's rate */
        ok += prom_guard_admit(&g, (struct sockaddr *)&a, 1500);
    assert_int_equal(ok, PROM_GUARD_RATE / 2);
    for (int i = 0; i < 3 * PROM_GUARD_ADDRS; i++) {
        struct sockaddr_in c = {.sin_family = AF_INET,
                                .sin_addr.s_addr = htonl(0x7f030000u + (uint32_t)i)};
        assert_true(prom_guard_admit(&g, (struct sockaddr *)&c, 2000 + (uint64_t)i));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(escape_and_samples), cmocka_unit_test(guard_rates),
        cmocka_unit_test(listen_specs),       cmocka_unit_test(daemon_counters),
        cmocka_unit_test(daemon_rr_kinds),    cmocka_unit_test(clients_bounded),
        cmocka_unit_test(live_frame),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
