/* Unit tests for params.c: defaults, validation, flow numbering and the JSON form that
 * travels to the server (checked there as untrusted input). */
#include "test_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "dsclass.h"
#include "params.h"

static void test_defaults(void **state)
{
    struct params p;
    char err[256] = "";

    (void)state;
    memset(&p, 0x5a, sizeof(p));
    params_defaults(&p);
    assert_int_equal(p.flows, 1);
    assert_int_equal(p.threads, 1);
    assert_int_equal(p.server_threads, 0);
    assert_int_equal(p.duration_ns, 10000000000ULL);
    assert_int_equal(p.omit_ns, 0);
    assert_int_equal(p.interval_ns, 1000000000ULL);
    assert_int_equal(p.write_size, 1048576);
    assert_int_equal(p.window, 0);
    assert_int_equal(p.mss, 0);
    assert_false(p.nodelay);
    assert_false(p.zerocopy);
    assert_int_equal(p.fq_rate_bps, 0);
    assert_int_equal(p.notsent_lowat, PARAMS_NOTSENT_AUTO);
    assert_int_equal(p.dir, PARAMS_DIR_FORWARD);
    assert_string_equal(p.congestion, "");
    assert_string_equal(p.server_cpus, "");
    assert_string_equal(p.title, "");
    assert_int_equal(params_validate(&p, err, sizeof(err)), 0);
}

/* Applies stmt to the defaults (as p), expects validate to fail with names in the error. */
#define EXPECT_INVALID(stmt, names)                                                                \
    do {                                                                                           \
        struct params p_;                                                                          \
        char err_[256] = "";                                                                       \
        params_defaults(&p_);                                                                      \
        {                                                                                          \
            struct params *p = &p_;                                                                \
            stmt;                                                                                  \
        }                                                                                          \
        assert_int_equal(params_validate(&p_, err_, sizeof(err_)), -EINVAL);                       \
        assert_contains(err_, names);                                                              \
    } while (0)

#define EXPECT_VALID(stmt)                                                                         \
    do {                                                                                           \
        struct params p_;                                                                          \
        char err_[256] = "";                                                                       \
        params_defaults(&p_);                                                                      \
        {                                                                                          \
            struct params *p = &p_;                                                                \
            stmt;                                                                                  \
        }                                                                                          \
        if (params_validate(&p_, err_, sizeof(err_)))                                              \
            fail_msg("%s: unexpectedly invalid: %s", #stmt, err_);                                 \
    } while (0)

static void test_validate_rejects(void **state)
{
    (void)state;
    EXPECT_INVALID(p->flows = 0, "flows (-P) 0");
    EXPECT_INVALID(p->flows = 100000, "100000");
    EXPECT_INVALID(p->flows = PARAMS_MAX_FLOWS + 1, "8193");
    EXPECT_INVALID(p->threads = 0, "threads (-T) 0");
    EXPECT_INVALID(p->threads = 257, "257");
    EXPECT_INVALID(p->server_threads = 300, "300");
    EXPECT_INVALID(p->duration_ns = 50000000ULL, "0.05s");
    EXPECT_INVALID(p->duration_ns = 0, "duration (-t) 0s");
    EXPECT_INVALID(p->duration_ns = 86401ULL * 1000000000ULL, "8.64e+04s");
    EXPECT_INVALID(p->omit_ns = 86401ULL * 1000000000ULL, "omit (-O)");
    EXPECT_INVALID(p->interval_ns = 50000000ULL, "interval (-i) 0.05s");
    EXPECT_INVALID(p->interval_ns = 86401ULL * 1000000000ULL, "interval (-i)");
    EXPECT_INVALID(p->write_size = 0, "write size (-l) 0");
    EXPECT_INVALID(p->write_size = PARAMS_MAX_WRITE + 1, "16777217");
    EXPECT_INVALID(p->window = PARAMS_MAX_WINDOW + 1, "1073741825");
    EXPECT_INVALID(p->mss = 87, "MSS (--mss) 87");
    EXPECT_INVALID(p->notsent_lowat = -2, "--notsent-lowat -2");
    EXPECT_INVALID((p->notsent_lowat = 0, p->udp = true, p->write_size = 1400),
                   "--notsent-lowat applies to TCP stream");
    EXPECT_INVALID((p->notsent_lowat = 65536, p->test = PARAMS_TEST_RR),
                   "--notsent-lowat applies to TCP stream");
    EXPECT_INVALID(p->mss = 65536, "65536");
    EXPECT_INVALID(p->dir = (enum params_dir)7, "direction 7");
    EXPECT_INVALID(snprintf(p->congestion, sizeof(p->congestion), "%s", "cu bic"), "'cu bic'");
    EXPECT_INVALID(snprintf(p->congestion, sizeof(p->congestion), "%s", "bbr;rm"), "'bbr;rm'");
    EXPECT_INVALID(snprintf(p->title, sizeof(p->title), "%s", "tab\there"), "unprintable");
    EXPECT_INVALID(snprintf(p->server_cpus, sizeof(p->server_cpus), "%s", "0-3\n"), "unprintable");
}

static void test_validate_limits_accepted(void **state)
{
    (void)state;
    EXPECT_VALID(p->flows = PARAMS_MAX_FLOWS);
    EXPECT_VALID(p->threads = PARAMS_MAX_THREADS);
    EXPECT_VALID(p->server_threads = PARAMS_MAX_THREADS);
    EXPECT_VALID(p->duration_ns = PARAMS_MIN_INTERVAL_NS);
    EXPECT_VALID(p->duration_ns = PARAMS_MAX_DURATION_NS);
    EXPECT_VALID(p->interval_ns = 0);
    EXPECT_VALID(p->interval_ns = PARAMS_MIN_INTERVAL_NS);
    EXPECT_VALID(p->write_size = 1);
    EXPECT_VALID(p->write_size = PARAMS_MAX_WRITE);
    EXPECT_VALID(p->window = PARAMS_MAX_WINDOW);
    EXPECT_VALID(p->mss = 88);
    EXPECT_VALID(p->mss = 65535);
    EXPECT_VALID(snprintf(p->congestion, sizeof(p->congestion), "%s", "bbr"));
    EXPECT_VALID(snprintf(p->congestion, sizeof(p->congestion), "%s", "h-tcp_2"));
    EXPECT_VALID(snprintf(p->title, sizeof(p->title), "%s", "lab run #3 (25G)"));
}

/* ---- JSON ---- */

static void make_custom(struct params *p)
{
    params_defaults(p);
    p->flows = 4;
    p->threads = 2;
    p->server_threads = 3;
    p->duration_ns = 30ULL * 1000000000ULL;
    p->omit_ns = 2ULL * 1000000000ULL;
    p->interval_ns = 500000000ULL;
    p->write_size = 65536;
    p->window = 4194304;
    p->mss = 1400;
    p->nodelay = true;
    p->zerocopy = true;
    p->skip_rx_copy = true;
    p->fq_rate_bps = 2500000000ULL;
    p->notsent_lowat = 262144;
    p->dir = PARAMS_DIR_BIDIR;
    snprintf(p->congestion, sizeof(p->congestion), "bbr");
    snprintf(p->server_cpus, sizeof(p->server_cpus), "0-3,8");
    snprintf(p->title, sizeof(p->title), "25G lab \"rack 4\"");
    p->bytes_limit = 3ULL << 40;
    p->app_rate_bps = 7000000000ULL;
    p->burst = 16;
    p->tos = 0xb8;
}

static void assert_params_equal(const struct params *a, const struct params *b)
{
    assert_int_equal(a->flows, b->flows);
    assert_int_equal(a->threads, b->threads);
    assert_int_equal(a->server_threads, b->server_threads);
    assert_int_equal(a->duration_ns, b->duration_ns);
    assert_int_equal(a->omit_ns, b->omit_ns);
    assert_int_equal(a->interval_ns, b->interval_ns);
    assert_int_equal(a->write_size, b->write_size);
    assert_int_equal(a->window, b->window);
    assert_int_equal(a->mss, b->mss);
    assert_int_equal(a->nodelay, b->nodelay);
    assert_int_equal(a->zerocopy, b->zerocopy);
    assert_int_equal(a->zerocopy_rx, b->zerocopy_rx);
    assert_int_equal(a->skip_rx_copy, b->skip_rx_copy);
    assert_int_equal(a->fq_rate_bps, b->fq_rate_bps);
    assert_int_equal(a->notsent_lowat, b->notsent_lowat);
    assert_int_equal(a->dir, b->dir);
    assert_string_equal(a->congestion, b->congestion);
    assert_string_equal(a->server_cpus, b->server_cpus);
    assert_string_equal(a->title, b->title);
    assert_int_equal(a->bytes_limit, b->bytes_limit);
    assert_int_equal(a->blocks_limit, b->blocks_limit);
    assert_int_equal(a->app_rate_bps, b->app_rate_bps);
    assert_int_equal(a->burst, b->burst);
    assert_int_equal(a->tos, b->tos);
    assert_int_equal(a->dont_fragment, b->dont_fragment);
    assert_int_equal(a->down_rate_set, b->down_rate_set);
    assert_int_equal(a->down_rate_bps, b->down_rate_bps);
}

/* to_json, print, parse, from_json: what really crosses the wire */
static int wire_round_trip(const struct params *in, struct params *out, char *err, size_t len)
{
    cJSON *j = params_to_json(in);
    char *text = cJSON_PrintUnformatted(j);
    cJSON *back = cJSON_Parse(text);
    int rc;

    assert_non_null(back);
    rc = params_from_json(back, out, err, len);
    cJSON_Delete(back);
    free(text);
    cJSON_Delete(j);
    return rc;
}

/* --mptcp crosses the wire only when set (an older server reads plain TCP from its absence);
 * stream and rr take it */
static void test_json_mptcp(void **state)
{
    struct params in, out;
    char err[256];
    cJSON *j;
    (void)state;

    params_defaults(&in);
    j = params_to_json(&in);
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "mptcp"));
    cJSON_Delete(j);
    in.mptcp = true;
    assert_int_equal(wire_round_trip(&in, &out, err, sizeof(err)), 0);
    assert_true(out.mptcp);
    in.test = PARAMS_TEST_RR;
    assert_int_equal(wire_round_trip(&in, &out, err, sizeof(err)), 0);
    assert_true(out.mptcp);
    assert_int_equal(out.test, PARAMS_TEST_RR);
}

static void test_json_round_trip_custom(void **state)
{
    struct params in, out;
    char err[256] = "";
    static const enum params_dir dirs[] = {PARAMS_DIR_FORWARD, PARAMS_DIR_REVERSE,
                                           PARAMS_DIR_BIDIR};

    (void)state;
    for (int i = 0; i < 3; i++) {
        make_custom(&in);
        in.dir = dirs[i];
        memset(&out, 0x5a, sizeof(out));
        if (wire_round_trip(&in, &out, err, sizeof(err)))
            fail_msg("round trip failed: %s", err);
        assert_params_equal(&out, &in);
    }
}

static void test_json_round_trip_odd_durations(void **state)
{
    struct params in, out;
    char err[256] = "";

    (void)state;
    params_defaults(&in);
    in.duration_ns = 1100000000ULL; /* 1.1 s is not exact in binary */
    in.omit_ns = 300000000ULL;
    in.interval_ns = 100000000ULL;
    in.server_threads = 1;
    if (wire_round_trip(&in, &out, err, sizeof(err)))
        fail_msg("round trip failed: %s", err);
    assert_params_equal(&out, &in);
}

static void test_json_server_threads_default(void **state)
{
    struct params in, out;
    char err[256] = "";

    (void)state;
    params_defaults(&in);
    in.threads = 6; /* server_threads 0 means "as many as the client" */
    assert_int_equal(wire_round_trip(&in, &out, err, sizeof(err)), 0);
    assert_int_equal(out.server_threads, 6);
    assert_int_equal(out.threads, 6);
}

static void test_json_fields(void **state)
{
    struct params p;
    cJSON *j;

    (void)state;
    make_custom(&p);
    j = params_to_json(&p);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(j, "flows")->valuedouble, 4);
    assert_dbl_near(cJSON_GetObjectItemCaseSensitive(j, "duration_s")->valuedouble, 30.0, 0);
    assert_dbl_near(cJSON_GetObjectItemCaseSensitive(j, "interval_s")->valuedouble, 0.5, 0);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "direction")->valuestring, "bidir");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "congestion")->valuestring, "bbr");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "zerocopy")));
    assert_dbl_near(cJSON_GetObjectItemCaseSensitive(j, "fq_rate_bps")->valuedouble, 2.5e9, 0);
    cJSON_Delete(j);
}

/* Parses text as a peer's params; returns the rc and leaves the error in err. */
static int from_text(const char *text, struct params *p, char *err, size_t len)
{
    cJSON *j = cJSON_Parse(text);
    int rc;

    if (!j)
        fail_msg("test JSON does not parse: %s", text);
    err[0] = '\0';
    rc = params_from_json(j, p, err, len);
    cJSON_Delete(j);
    return rc;
}

static void test_from_json_rejects(void **state)
{
    static const struct {
        const char *json, *err;
    } bad[] = {
        {"{\"flows\":\"4\"}", "'flows'"},
        {"{\"flows\":0}", "'flows'"},
        {"{\"flows\":100000}", "'flows'"},
        {"{\"flows\":-1}", "'flows'"},
        {"{\"flows\":null}", "'flows'"},
        {"{\"threads\":0}", "'threads'"},
        {"{\"nodelay\":1}", "'nodelay'"},
        {"{\"zerocopy\":\"yes\"}", "'zerocopy'"},
        {"{\"zerocopy_rx\":1}", "'zerocopy_rx'"},
        {"{\"skip_rx_copy\":\"on\"}", "'skip_rx_copy'"},
        {"{\"skip_rx_copy\":true,\"zerocopy_rx\":true}", "exclude each other"},
        {"{\"skip_rx_copy\":true,\"udp\":true,\"udp_rate_bps\":1e6,\"write_size\":1400}",
         "TCP stream tests only"},
        {"{\"zerocopy_rx\":true,\"test\":\"rr\"}", "TCP stream tests only"},
        {"{\"zerocopy_rx\":true,\"test\":\"crr\"}", "TCP stream tests only"},
        {"{\"duration_s\":-1}", "'duration_s'"},
        {"{\"duration_s\":0}", "duration (-t) 0s"},
        {"{\"bytes_limit\":-1}", "'bytes_limit'"},
        {"{\"blocks_limit\":1.5}", "'blocks_limit'"},
        {"{\"bytes_limit\":10,\"blocks_limit\":10}", "-n and -k"},
        {"{\"bytes_limit\":10,\"test\":\"rr\"}", "stream tests only"},
        {"{\"tos\":256}", "'tos'"},
        {"{\"burst\":1001}", "'burst'"},
        {"{\"app_rate_bps\":1000,\"udp\":true,\"write_size\":1400}", "TCP streams only"},
        {"{\"dont_fragment\":true}", "UDP (-u) only"},
        {"{\"udp_pps\":100}", "--pps 100"},
        {"{\"udp\":true,\"write_size\":1000,\"bytes_limit\":10005}", "shorter than"},
        {"{\"duration_s\":1e300}", "'duration_s'"},
        {"{\"interval_s\":0.05}", "interval (-i)"},
        {"{\"write_size\":0}", "'write_size'"},
        {"{\"window\":2e9}", "'window'"},
        {"{\"mss\":70000}", "'mss'"},
        {"{\"mss\":10}", "MSS"},
        {"{\"fq_rate_bps\":-5}", "'fq_rate_bps'"},
        {"{\"notsent_lowat\":-3}", "'notsent_lowat'"},
        {"{\"notsent_lowat\":2e9}", "'notsent_lowat'"},
        {"{\"direction\":\"sideways\"}", "'direction'"},
        {"{\"direction\":3}", "'direction'"},
        {"{\"congestion\":\"cu bic\"}", "'cu bic'"},
        {"{\"congestion\":\"aaaaaaaaaaaaaaaaaaaa\"}", "'congestion'"},
        {"{\"congestion\":7}", "'congestion'"},
        {"{\"title\":[\"x\"]}", "'title'"},
        {"{\"title\":\"bell\\u0007\"}", "unprintable"},
        {"{\"mptcp\":1}", "'mptcp'"},
        {"{\"mptcp\":true,\"udp\":true,\"udp_rate_bps\":1e6,\"write_size\":1400}",
         "--mptcp does not apply with -u"},
        {"{\"mptcp\":true,\"test\":\"crr\"}", "--mptcp does not apply with crr"},
        {"{\"mptcp\":true,\"zerocopy\":true}", "--mptcp does not apply with -Z"},
        {"{\"mptcp\":true,\"zerocopy_rx\":true}", "with --zerocopy-rx"},
        {"{\"mptcp\":true,\"fq_rate_bps\":1e6}", "with --fq-rate"},
    };
    struct params p;
    char err[256];

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = from_text(bad[i].json, &p, err, sizeof(err));
        if (rc != -EINVAL)
            fail_msg("params_from_json(%s) = %d, expected -EINVAL", bad[i].json, rc);
        if (!strstr(err, bad[i].err))
            fail_msg("params_from_json(%s): error \"%s\" lacks \"%s\"", bad[i].json, err,
                     bad[i].err);
    }
}

static void test_from_json_not_object(void **state)
{
    struct params p;
    char err[256];

    (void)state;
    assert_int_equal(from_text("[1,2]", &p, err, sizeof(err)), -EINVAL);
    assert_contains(err, "object");
    assert_int_equal(from_text("\"flows\"", &p, err, sizeof(err)), -EINVAL);
    assert_int_equal(params_from_json(NULL, &p, err, sizeof(err)), -EINVAL);
}

static void test_from_json_title_too_long(void **state)
{
    char json[400];
    struct params p;
    char err[256];

    (void)state;
    snprintf(json, sizeof(json), "{\"title\":\"%0128d\"}", 0); /* 128 chars, room for 127 */
    assert_int_equal(from_text(json, &p, err, sizeof(err)), -EINVAL);
    assert_contains(err, "'title'");
    snprintf(json, sizeof(json), "{\"title\":\"%0127d\"}", 0);
    assert_int_equal(from_text(json, &p, err, sizeof(err)), 0);
    assert_int_equal(strlen(p.title), 127);
}

static void test_from_json_defaults_and_unknown_keys(void **state)
{
    struct params p, d;
    char err[256];

    (void)state;
    params_defaults(&d);
    assert_int_equal(from_text("{}", &p, err, sizeof(err)), 0);
    assert_params_equal(&p, &d);
    assert_int_equal(from_text("{\"flows\":3,\"future_option\":{\"x\":[1,2]},\"FLOWS\":9,"
                               "\"direction\":\"reverse\"}",
                               &p, err, sizeof(err)),
                     0);
    assert_int_equal(p.flows, 3);
    assert_int_equal(p.dir, PARAMS_DIR_REVERSE);
    assert_int_equal(from_text("{\"direction\":\"forward\"}", &p, err, sizeof(err)), 0);
    assert_int_equal(p.dir, PARAMS_DIR_FORWARD);
}

/* ---- flow numbering ---- */

static void test_total_flows_and_senders(void **state)
{
    struct params p;

    (void)state;
    params_defaults(&p);
    p.flows = 3;

    p.dir = PARAMS_DIR_FORWARD;
    assert_int_equal(params_total_flows(&p), 3);
    for (uint32_t i = 0; i < 3; i++)
        assert_true(params_flow_client_sends(&p, i));

    p.dir = PARAMS_DIR_REVERSE;
    assert_int_equal(params_total_flows(&p), 3);
    for (uint32_t i = 0; i < 3; i++)
        assert_false(params_flow_client_sends(&p, i));

    p.dir = PARAMS_DIR_BIDIR;
    assert_int_equal(params_total_flows(&p), 6);
    for (uint32_t i = 0; i < 6; i++)
        assert_int_equal(params_flow_client_sends(&p, i), i < 3);
}

/* -n/-k: what each direction moves, in bytes (TCP) or datagrams (UDP, a short last one) */
static void test_limits(void **state)
{
    struct params p;
    uint32_t tail = 0;
    char err[256];

    (void)state;
    params_defaults(&p);
    assert_false(params_has_limit(&p));
    assert_int_equal(params_limit_units(&p, &tail), 0);
    assert_string_equal(params_limit_name(&p), "");
    assert_int_equal(params_time_cap_ns(&p), p.duration_ns);
    p.bytes_limit = 100ULL << 20;
    p.duration_ns = 0; /* the transfer alone ends it */
    assert_int_equal(params_validate(&p, err, sizeof(err)), 0);
    assert_int_equal(params_limit_units(&p, &tail), 100ULL << 20);
    assert_string_equal(params_limit_name(&p), "bytes");
    assert_int_equal(params_time_cap_ns(&p), PARAMS_MAX_DURATION_NS);
    p.bytes_limit = 0;
    p.blocks_limit = 10;
    p.write_size = 65536;
    assert_int_equal(params_limit_units(&p, NULL), 655360);
    assert_string_equal(params_limit_name(&p), "blocks");
    p.udp = true;
    p.write_size = 1400;
    assert_int_equal(params_limit_units(&p, &tail), 10); /* datagrams */
    assert_int_equal(tail, 1400);
    p.blocks_limit = 0;
    p.bytes_limit = 1048576; /* 748 x 1400 + 1376 */
    assert_int_equal(params_limit_units(&p, &tail), 749);
    assert_int_equal(tail, 1376);
    assert_int_equal(params_validate(&p, err, sizeof(err)), 0);
    p.bytes_limit = 1400 * 3 + 15; /* a 15-byte datagram cannot carry the header */
    assert_int_equal(params_validate(&p, err, sizeof(err)), -EINVAL);
    assert_contains(err, "-n 4200 or 4216");
    p.bytes_limit = 0;
    p.duration_ns = 0; /* no limit and no time */
    assert_int_equal(params_validate(&p, err, sizeof(err)), -EINVAL);
    assert_contains(err, "duration (-t) 0s");
}

static void test_tos_dscp(void **state)
{
    static const struct {
        const char *in;
        int tos;
    } dscp[] = {{"EF", 0xb8},  {"ef", 0xb8}, {"AF11", 0x28}, {"af43", 0x98}, {"CS0", 0},
                {"cs7", 0xe0}, {"VA", 0xb0}, {"le", 0x04},   {"46", 0xb8},   {"0x2e", 0xb8},
                {"056", 0xb8}, {"63", 0xfc}, {"0", 0},       {"-1", -1},     {"64", -1},
                {"af14", -1},  {"", -1},     {"ef ", -1},    {"1x", -1}};
    static const struct {
        const char *in;
        int tos;
    } tos[] = {{"52", 52},  {"0x34", 52}, {"064", 52}, {"255", 255}, {"0", 0},
               {"256", -1}, {"-4", -1},   {"", -1},    {"0x", -1},   {"1e2", -1}};
    uint8_t v;

    (void)state;
    for (size_t i = 0; i < sizeof(dscp) / sizeof(dscp[0]); i++) {
        int rc = params_parse_dscp(dscp[i].in, &v);
        if (dscp[i].tos < 0 ? rc != -EINVAL : rc != 0 || v != dscp[i].tos)
            fail_msg("--dscp '%s': rc %d tos %u, want %d", dscp[i].in, rc, v, dscp[i].tos);
    }
    for (size_t i = 0; i < sizeof(tos) / sizeof(tos[0]); i++) {
        int rc = params_parse_tos(tos[i].in, &v);
        if (tos[i].tos < 0 ? rc != -EINVAL : rc != 0 || v != tos[i].tos)
            fail_msg("-S '%s': rc %d tos %u, want %d", tos[i].in, rc, v, tos[i].tos);
    }
}

/* --classes rrul: flent's four classes in its order, their DSCPs, flow i marked with class
 * i mod 4 (the TOS byte holds the DSCP shifted by 2), the set on the wire, refused beside a
 * TOS byte and with crr */
static void test_classes(void **state)
{
    static const struct {
        const char *name;
        uint8_t dscp, tos;
    } want[4] = {{"BE", 0, 0x00}, {"BK", 8, 0x20}, {"CS5", 40, 0xa0}, {"EF", 46, 0xb8}};
    struct params p, back;
    uint8_t set = 99;
    char err[256];

    (void)state;
    assert_int_equal(dsclass_parse("rrul", &set), 0);
    assert_int_equal(set, DSCLASS_RRUL);
    assert_int_equal(dsclass_parse("RRUL", &set), 0);
    assert_int_equal(dsclass_parse("none", &set), 0);
    assert_int_equal(set, DSCLASS_NONE);
    assert_int_equal(dsclass_parse("", &set), 0);
    assert_int_equal(dsclass_parse("rrul_be", &set), -EINVAL);
    assert_int_equal(dsclass_parse("ef", &set), -EINVAL);
    assert_int_equal(dsclass_parse(NULL, &set), -EINVAL);
    assert_int_equal(dsclass_count(DSCLASS_NONE), 0);
    assert_int_equal(dsclass_count(DSCLASS_RRUL), 4);
    assert_int_equal(dsclass_count(7), 0);
    assert_string_equal(dsclass_set_name(DSCLASS_RRUL), "rrul");
    assert_string_equal(dsclass_set_name(DSCLASS_NONE), "");
    for (uint32_t i = 0; i < 4; i++) {
        uint8_t tos;
        char in[8];
        assert_string_equal(dsclass_name(DSCLASS_RRUL, i), want[i].name);
        assert_int_equal(dsclass_dscp(DSCLASS_RRUL, i), want[i].dscp);
        /* the same byte -S/--dscp gives for the class's name */
        snprintf(in, sizeof(in), "%s", i == 0 ? "cs0" : i == 1 ? "cs1" : want[i].name);
        assert_int_equal(params_parse_dscp(in, &tos), 0);
        assert_int_equal(tos, want[i].tos);
        for (uint32_t k = 0; k < 3; k++) { /* flows i, i + 4, i + 8 */
            assert_int_equal(dsclass_of_flow(DSCLASS_RRUL, i + 4 * k), i);
            assert_int_equal(dsclass_flow_tos(DSCLASS_RRUL, 0, i + 4 * k), want[i].tos);
        }
    }
    assert_string_equal(dsclass_name(DSCLASS_RRUL, 4), "");
    assert_int_equal(dsclass_flow_tos(DSCLASS_NONE, 0x28, 3), 0x28); /* no set: -S's byte */
    assert_int_equal(dsclass_of_flow(DSCLASS_NONE, 3), 0);

    params_defaults(&p);
    p.flows = 4;
    p.dir = PARAMS_DIR_REVERSE; /* the server sends: the set must reach it */
    p.classes = DSCLASS_RRUL;
    assert_int_equal(params_validate(&p, err, sizeof(err)), 0);
    params_defaults(&back);
    assert_int_equal(wire_round_trip(&p, &back, err, sizeof(err)), 0);
    assert_int_equal(back.classes, DSCLASS_RRUL);
    p.classes = DSCLASS_NONE; /* without a set the member is left out */
    cJSON *j = params_to_json(&p);
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "classes"));
    cJSON_Delete(j);
    p.classes = DSCLASS_RRUL;
    p.tos = 0xb8;
    assert_int_equal(params_validate(&p, err, sizeof(err)), -EINVAL);
    assert_contains(err, "--classes rrul");
    assert_contains(err, "184");
    p.tos = 0;
    p.test = PARAMS_TEST_CRR;
    assert_int_equal(params_validate(&p, err, sizeof(err)), -EINVAL);
    assert_contains(err, "crr");
    p.test = PARAMS_TEST_STREAM;
    p.classes = 9;
    assert_int_equal(params_validate(&p, err, sizeof(err)), -EINVAL);
    assert_contains(err, "class set 9");
    /* from the wire: an unknown set is refused, naming the member */
    cJSON *bad = cJSON_Parse("{\"classes\":\"wmm\"}");
    assert_int_equal(params_from_json(bad, &back, err, sizeof(err)), -EINVAL);
    assert_contains(err, "'classes'");
    cJSON_Delete(bad);
}

static void test_dir_names(void **state)
{
    (void)state;
    assert_string_equal(params_dir_name(PARAMS_DIR_FORWARD), "forward");
    assert_string_equal(params_dir_name(PARAMS_DIR_REVERSE), "reverse");
    assert_string_equal(params_dir_name(PARAMS_DIR_BIDIR), "bidir");
}

/* --bidir -b UP,DOWN: each way its rate, on the wire too; refused where it does not apply */
static void test_down_rate(void **state)
{
    struct params p, back;
    char err[256];

    (void)state;
    params_defaults(&p);
    p.dir = PARAMS_DIR_BIDIR;
    p.app_rate_bps = 20000000;
    assert_int_equal(params_send_rate(&p, false), 20000000); /* one rate: both ways */
    p.down_rate_set = true;
    p.down_rate_bps = 0; /* TCP: the server's flows unpaced */
    assert_int_equal(params_validate(&p, err, sizeof(err)), 0);
    assert_int_equal(params_send_rate(&p, true), 20000000);
    assert_int_equal(params_send_rate(&p, false), 0);
    p.down_rate_bps = 90000000;
    params_defaults(&back);
    assert_int_equal(wire_round_trip(&p, &back, err, sizeof(err)), 0);
    assert_true(back.down_rate_set);
    assert_int_equal(params_send_rate(&back, false), 90000000);
    p.udp = true;
    p.app_rate_bps = 0;
    p.udp_rate_bps = 10000000;
    p.write_size = 1400;
    assert_int_equal(params_send_rate(&p, true), 10000000);
    assert_int_equal(params_send_rate(&p, false), 90000000);
    p.down_rate_bps = 0;
    assert_int_equal(params_validate(&p, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "sends nothing"));
    p.down_rate_bps = 1000;
    p.dir = PARAMS_DIR_REVERSE;
    assert_int_equal(params_validate(&p, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "--bidir streams only"));
    p.dir = PARAMS_DIR_BIDIR;
    p.udp_pps = 100;
    assert_int_equal(params_validate(&p, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "--pps"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_validate_rejects),
        cmocka_unit_test(test_validate_limits_accepted),
        cmocka_unit_test(test_json_round_trip_custom),
        cmocka_unit_test(test_json_mptcp),
        cmocka_unit_test(test_json_round_trip_odd_durations),
        cmocka_unit_test(test_json_server_threads_default),
        cmocka_unit_test(test_json_fields),
        cmocka_unit_test(test_from_json_rejects),
        cmocka_unit_test(test_from_json_not_object),
        cmocka_unit_test(test_from_json_title_too_long),
        cmocka_unit_test(test_from_json_defaults_and_unknown_keys),
        cmocka_unit_test(test_total_flows_and_senders),
        cmocka_unit_test(test_dir_names),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_tos_dscp),
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_down_rate),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
