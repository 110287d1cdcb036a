/* Unit tests for iperf3 wire compatibility: the cookie, the state order, framing over a
 * socketpair (hostile lengths, truncation, timeouts), the parameter and results objects as
 * iperf3 3.12 sends them and as a hostile peer might (wrong types, huge values, missing
 * members, invalid UTF-8), the results' conversion to a side_result, and the iperf3 UDP
 * datagram header and receive accounting. */
#define _GNU_SOURCE
#include "test_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flow_iperf3_udp.h"
#include "iperf3_client.h"
#include "iperf3_proto.h"

/* ---------------------------------------------------------------- cookie */

static void test_cookie_make(void **state)
{
    char a[IPERF3_COOKIE_LEN], b[IPERF3_COOKIE_LEN];

    (void)state;
    assert_int_equal(iperf3_proto_cookie_make(a), 0);
    assert_int_equal(iperf3_proto_cookie_make(b), 0);
    assert_int_equal(a[36], '\0');
    assert_int_equal(strlen(a), 36);
    for (int i = 0; i < 36; i++)
        assert_true((a[i] >= 'a' && a[i] <= 'z') || (a[i] >= '2' && a[i] <= '7'));
    assert_true(iperf3_proto_cookie_valid((const uint8_t *)a, sizeof(a)));
    assert_memory_not_equal(a, b, 36);
}

static void test_cookie_sniff(void **state)
{
    const char *good = "abcdefghijklmnopqrstuvwxyz234567abcd";
    uint8_t buf[IPERF3_COOKIE_LEN];

    (void)state;
    memcpy(buf, good, 37); /* with its NUL */
    assert_int_equal(iperf3_proto_cookie_sniff(buf, 37), IPERF3_SNIFF_COOKIE);
    assert_int_equal(iperf3_proto_cookie_sniff(buf, 4), IPERF3_SNIFF_MORE);
    assert_int_equal(iperf3_proto_cookie_sniff(buf, 36), IPERF3_SNIFF_MORE);
    assert_int_equal(iperf3_proto_cookie_sniff(buf, 0), IPERF3_SNIFF_NO);
    assert_int_equal(iperf3_proto_cookie_sniff((const uint8_t *)"NRG\x01", 4), IPERF3_SNIFF_NO);
    assert_int_equal(iperf3_proto_cookie_sniff((const uint8_t *)"NRDT", 4), IPERF3_SNIFF_NO);
    assert_int_equal(iperf3_proto_cookie_sniff((const uint8_t *)"GET / HTTP/1.0", 14),
                     IPERF3_SNIFF_NO);
    assert_int_equal(iperf3_proto_cookie_sniff((const uint8_t *)"hello world", 11),
                     IPERF3_SNIFF_NO);
    buf[36] = 'x'; /* no NUL */
    assert_int_equal(iperf3_proto_cookie_sniff(buf, 37), IPERF3_SNIFF_BAD);
    assert_false(iperf3_proto_cookie_valid(buf, 37));
    memcpy(buf, good, 37);
    buf[20] = 'A'; /* outside the alphabet, far in: a broken cookie */
    assert_int_equal(iperf3_proto_cookie_sniff(buf, 37), IPERF3_SNIFF_BAD);
    buf[20] = '8';
    assert_int_equal(iperf3_proto_cookie_sniff(buf, 37), IPERF3_SNIFF_BAD);
    memcpy(buf, good, 37);
    assert_false(iperf3_proto_cookie_valid(buf, 36)); /* too short */
}

/* ---------------------------------------------------------------- states */

static void test_client_steps(void **state)
{
    const int seq[] = {IPERF3_PARAM_EXCHANGE, IPERF3_CREATE_STREAMS,   IPERF3_TEST_START,
                       IPERF3_TEST_RUNNING,   IPERF3_EXCHANGE_RESULTS, IPERF3_DISPLAY_RESULTS};
    int cur = 0;

    (void)state;
    for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
        assert_int_equal(iperf3_proto_client_step(cur, seq[i]), seq[i]);
        cur = seq[i];
    }
    /* out of order, repeated, unknown */
    assert_int_equal(iperf3_proto_client_step(0, IPERF3_CREATE_STREAMS), -EPROTO);
    assert_int_equal(iperf3_proto_client_step(IPERF3_PARAM_EXCHANGE, IPERF3_PARAM_EXCHANGE),
                     -EPROTO);
    assert_int_equal(iperf3_proto_client_step(IPERF3_TEST_RUNNING, IPERF3_DISPLAY_RESULTS),
                     -EPROTO);
    assert_int_equal(iperf3_proto_client_step(IPERF3_TEST_START, 99), -EPROTO);
    assert_int_equal(iperf3_proto_client_step(IPERF3_DISPLAY_RESULTS, IPERF3_TEST_START), -EPROTO);
    /* the server may stop us at any point */
    assert_int_equal(iperf3_proto_client_step(0, IPERF3_ACCESS_DENIED), -ECONNREFUSED);
    assert_int_equal(iperf3_proto_client_step(IPERF3_PARAM_EXCHANGE, IPERF3_SERVER_ERROR),
                     -EREMOTEIO);
    assert_int_equal(iperf3_proto_client_step(IPERF3_TEST_RUNNING, IPERF3_SERVER_TERMINATE),
                     -ECONNABORTED);
    /* server side during the run */
    assert_int_equal(iperf3_proto_server_running_step(IPERF3_TEST_END), 1);
    assert_int_equal(iperf3_proto_server_running_step(IPERF3_IPERF_DONE), 0);
    assert_int_equal(iperf3_proto_server_running_step(IPERF3_TEST_START), 0);
    assert_int_equal(iperf3_proto_server_running_step(IPERF3_CLIENT_TERMINATE), -ECONNABORTED);
    assert_int_equal(iperf3_proto_server_running_step(IPERF3_EXCHANGE_RESULTS), -EPROTO);
    assert_int_equal(iperf3_proto_server_running_step(-7), -EPROTO);
    assert_string_equal(iperf3_proto_state_name(IPERF3_SERVER_ERROR), "SERVER_ERROR");
    assert_string_equal(iperf3_proto_state_name(77), "unknown");
}

/* ---------------------------------------------------------------- framing */

static void test_utf8(void **state)
{
    (void)state;
    assert_true(iperf3_proto_utf8_valid((const uint8_t *)"plain", 5));
    const char *mixed = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
    assert_true(iperf3_proto_utf8_valid((const uint8_t *)mixed, strlen(mixed)));
    assert_false(iperf3_proto_utf8_valid((const uint8_t *)"\xc0\x80", 2));         /* overlong */
    assert_false(iperf3_proto_utf8_valid((const uint8_t *)"\xe0\x80\xaf", 3));     /* overlong */
    assert_false(iperf3_proto_utf8_valid((const uint8_t *)"\xed\xa0\x80", 3));     /* surrogate */
    assert_false(iperf3_proto_utf8_valid((const uint8_t *)"\xf4\x90\x80\x80", 4)); /* > 10FFFF */
    assert_false(iperf3_proto_utf8_valid((const uint8_t *)"\xe2\x82", 2));         /* truncated */
    assert_false(iperf3_proto_utf8_valid((const uint8_t *)"a\x80", 2));            /* stray */
    assert_false(iperf3_proto_utf8_valid((const uint8_t *)"\xff", 1));
}

static void test_json_decode(void **state)
{
    cJSON *j = NULL;
    char err[256];

    (void)state;
    assert_int_equal(
        iperf3_proto_json_decode((const uint8_t *)"{\"a\":1} \n", 9, &j, err, sizeof(err)), 0);
    assert_non_null(j);
    cJSON_Delete(j);
    assert_int_equal(iperf3_proto_json_decode((const uint8_t *)"[1]", 3, &j, err, sizeof(err)),
                     -EPROTO);
    assert_null(j);
    assert_int_equal(iperf3_proto_json_decode((const uint8_t *)"{} x", 4, &j, err, sizeof(err)),
                     -EPROTO);
    assert_int_equal(iperf3_proto_json_decode((const uint8_t *)"{\"a\":", 5, &j, err, sizeof(err)),
                     -EPROTO);
    assert_int_equal(
        iperf3_proto_json_decode((const uint8_t *)"{\"a\":\"\x01\"}", 9, &j, err, sizeof(err)),
        -EPROTO);
    assert_contains(err, "control byte");
    assert_int_equal(
        iperf3_proto_json_decode((const uint8_t *)"{\"a\":\"\xff\"}", 9, &j, err, sizeof(err)),
        -EPROTO);
    assert_contains(err, "UTF-8");
    assert_int_equal(
        iperf3_proto_json_decode((const uint8_t *)"{\"a\":1}\0{}", 10, &j, err, sizeof(err)),
        -EPROTO);
}

static void pair(int sv[2]) { assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0); }

static void test_json_io(void **state)
{
    int sv[2];
    cJSON *j = cJSON_CreateObject(), *got = NULL;
    char err[256];
    const uint8_t huge[4] = {0xff, 0xff, 0xff, 0xff}, zero[4] = {0}, short_len[4] = {0, 0, 0, 10};

    (void)state;
    pair(sv);
    cJSON_AddNumberToObject(j, "time", 10);
    assert_int_equal(iperf3_proto_json_send(sv[0], j, 1000), 0);
    assert_int_equal(iperf3_proto_json_recv(sv[1], IPERF3_MAX_PARAMS, 1000, &got, err, sizeof(err)),
                     0);
    assert_int_equal(cJSON_GetObjectItem(got, "time")->valueint, 10);
    cJSON_Delete(got);
    cJSON_Delete(j);
    /* a 4 GiB length is refused before anything is read or allocated */
    assert_int_equal(write(sv[0], huge, 4), 4);
    assert_int_equal(iperf3_proto_json_recv(sv[1], IPERF3_MAX_PARAMS, 1000, &got, err, sizeof(err)),
                     -EMSGSIZE);
    assert_contains(err, "4294967295");
    assert_int_equal(write(sv[0], zero, 4), 4);
    assert_int_equal(iperf3_proto_json_recv(sv[1], IPERF3_MAX_PARAMS, 1000, &got, err, sizeof(err)),
                     -EMSGSIZE);
    /* promised 10 bytes, sent 2: times out */
    assert_int_equal(write(sv[0], short_len, 4), 4);
    assert_int_equal(write(sv[0], "{}", 2), 2);
    assert_int_equal(iperf3_proto_json_recv(sv[1], IPERF3_MAX_PARAMS, 100, &got, err, sizeof(err)),
                     -ETIMEDOUT);
    /* nothing at all: times out; then the peer goes: end-of-file */
    assert_int_equal(iperf3_proto_json_recv(sv[1], IPERF3_MAX_PARAMS, 50, &got, err, sizeof(err)),
                     -ETIMEDOUT);
    close(sv[0]);
    assert_int_equal(iperf3_proto_json_recv(sv[1], IPERF3_MAX_PARAMS, 1000, &got, err, sizeof(err)),
                     -ENODATA);
    close(sv[1]);
}

static void test_state_and_error_io(void **state)
{
    int sv[2], st = 0, code, en;
    const uint8_t only_code[5] = {0xfe, 0, 0, 0, 142};

    (void)state;
    pair(sv);
    assert_int_equal(iperf3_proto_state_send(sv[0], IPERF3_ACCESS_DENIED, 1000), 0);
    assert_int_equal(iperf3_proto_state_recv(sv[1], &st, 1000), 0);
    assert_int_equal(st, -1);
    assert_int_equal(iperf3_proto_error_send(sv[0], IPERF3_IENOSCTP, 95, 1000), 0);
    assert_int_equal(iperf3_proto_state_recv(sv[1], &st, 1000), 0);
    assert_int_equal(st, IPERF3_SERVER_ERROR);
    iperf3_proto_error_recv(sv[1], &code, &en, 1000);
    assert_int_equal(code, 18);
    assert_int_equal(en, 95);
    /* 3.12 on an authentication failure: the code only, then it closes */
    assert_int_equal(write(sv[0], only_code, 5), 5);
    close(sv[0]);
    assert_int_equal(iperf3_proto_state_recv(sv[1], &st, 1000), 0);
    iperf3_proto_error_recv(sv[1], &code, &en, 1000);
    assert_int_equal(code, 142);
    assert_int_equal(en, -1);
    assert_int_equal(iperf3_proto_state_recv(sv[1], &st, 1000), -ENODATA);
    close(sv[1]);
}

/* ---------------------------------------------------------------- parameters */

static int decode_text(const char *json, struct iperf3_params *ip, int *code, int *en, char *err)
{
    cJSON *j = cJSON_Parse(json);
    int rc;

    assert_non_null(j);
    err[0] = '\0';
    rc = iperf3_proto_params_decode(j, ip, code, en, err, 256);
    cJSON_Delete(j);
    return rc;
}

static void test_params_312(void **state)
{
    struct iperf3_params ip;
    char err[256];
    int code, en;

    (void)state;
    /* as iperf3 3.12 sends `-u -b 10M -P 2 -R --title hello` */
    assert_int_equal(decode_text("{\"udp\":true,\"omit\":0,\"time\":1,\"num\":0,\"blockcount\":0,"
                                 "\"parallel\":2,\"reverse\":true,\"len\":32768,"
                                 "\"bandwidth\":10000000,\"pacing_timer\":1000,"
                                 "\"title\":\"hello\",\"client_version\":\"3.12\"}",
                                 &ip, &code, &en, err),
                     0);
    assert_true(ip.p.udp);
    assert_true(ip.p.iperf3_wire);
    assert_int_equal(ip.p.flows, 2);
    assert_int_equal(ip.p.dir, PARAMS_DIR_REVERSE);
    assert_int_equal(ip.p.duration_ns, 1000000000ULL);
    assert_int_equal(ip.p.write_size, 32768);
    assert_int_equal(ip.p.udp_rate_bps, 10000000);
    assert_string_equal(ip.p.title, "hello");
    assert_string_equal(ip.client_version, "3.12");
    assert_false(ip.get_server_output);
    /* TCP, with the options a typical client adds */
    assert_int_equal(decode_text("{\"tcp\":true,\"omit\":2,\"time\":5,\"parallel\":4,"
                                 "\"bidirectional\":true,\"window\":1048576,\"len\":65536,"
                                 "\"MSS\":1400,\"nodelay\":true,\"congestion\":\"cubic\","
                                 "\"get_server_output\":1,\"fqrate\":1000000000,"
                                 "\"repeating_payload\":1}",
                                 &ip, &code, &en, err),
                     0);
    assert_false(ip.p.udp);
    assert_int_equal(ip.p.dir, PARAMS_DIR_BIDIR);
    assert_int_equal(ip.p.omit_ns, 2000000000ULL);
    assert_int_equal(ip.p.window, 1048576);
    assert_int_equal(ip.p.mss, 1400);
    assert_true(ip.p.nodelay);
    assert_string_equal(ip.p.congestion, "cubic");
    assert_true(ip.get_server_output);
    assert_int_equal(ip.p.fq_rate_bps, 1000000000ULL);
    assert_int_equal(ip.ignored, 1);
    assert_string_equal(ip.ignored_names, "repeating_payload");
    /* nothing at all: iperf3's defaults (TCP, 10 s, one stream, 128 KiB) */
    assert_int_equal(decode_text("{}", &ip, &code, &en, err), 0);
    assert_false(ip.p.udp);
    assert_int_equal(ip.p.duration_ns, 10000000000ULL);
    assert_int_equal(ip.p.flows, 1);
    assert_int_equal(ip.p.write_size, 131072);
    /* UDP without a length or a rate: 1460 bytes, as fast as possible */
    assert_int_equal(decode_text("{\"udp\":true,\"time\":3}", &ip, &code, &en, err), 0);
    assert_int_equal(ip.p.write_size, 1460);
    assert_true(ip.p.udp_rate_bps >= 10000000000ULL);
    /* UDP 64-bit counters */
    assert_int_equal(decode_text("{\"udp\":true,\"udp_counters_64bit\":1}", &ip, &code, &en, err),
                     0);
    assert_true(ip.p.iperf3_udp64);
    /* -m (iperf3 3.17): an MPTCP test, which the daemon runs when its listener is MPTCP */
    assert_int_equal(decode_text("{\"tcp\":true,\"mptcp\":1}", &ip, &code, &en, err), 0);
    assert_true(ip.p.mptcp);
    assert_int_equal(decode_text("{\"tcp\":true}", &ip, &code, &en, err), 0);
    assert_false(ip.p.mptcp);
}

struct bad_case {
    const char *json;
    int code;
    const char *needle;
};

static void test_params_hostile(void **state)
{
    static const struct bad_case cases[] = {
        {"{\"time\":\"10\"}", IPERF3_IERECVPARAMS, "'time' must be a whole number"},
        {"{\"time\":1.5}", IPERF3_IERECVPARAMS, "'time'"},
        {"{\"time\":86401}", IPERF3_IEDURATION, "'time'"},
        {"{\"time\":-1}", IPERF3_IEDURATION, "'time'"},
        {"{\"time\":1e308}", IPERF3_IEDURATION, "'time'"},
        {"{\"omit\":99999}", IPERF3_IEOMIT, "'omit'"},
        {"{\"parallel\":129}", IPERF3_IENUMSTREAMS, "'parallel'"},
        {"{\"parallel\":0}", IPERF3_IENUMSTREAMS, "'parallel'"},
        {"{\"parallel\":null}", IPERF3_IERECVPARAMS, "'parallel'"},
        {"{\"len\":0}", IPERF3_IEBLOCKSIZE, "'len'"},
        {"{\"len\":4294967296}", IPERF3_IEBLOCKSIZE, "'len'"},
        {"{\"window\":4294967296}", IPERF3_IEBUFSIZE, "'window'"},
        {"{\"MSS\":100000}", IPERF3_IEMSS, "'MSS'"},
        {"{\"MSS\":20}", IPERF3_IEMSS, "MSS"},
        {"{\"reverse\":\"yes\"}", IPERF3_IERECVPARAMS, "'reverse'"},
        {"{\"reverse\":{}}", IPERF3_IERECVPARAMS, "'reverse'"},
        {"{\"title\":5}", IPERF3_IERECVPARAMS, "'title' must be a string"},
        {"{\"congestion\":[\"bbr\"]}", IPERF3_IERECVPARAMS, "'congestion'"},
        {"{\"congestion\":\"bbr;rm\"}", IPERF3_IESETCONGESTION, "not a valid algorithm"},
        {"{\"congestion\":\"averyveryverylongname\"}", IPERF3_IESETCONGESTION, "not a valid"},
        {"{\"sctp\":true}", IPERF3_IENOSCTP, "SCTP"},
        {"{\"tcp\":true,\"authtoken\":\"AAAA\"}", IPERF3_IEAUTHTEST, "RSA"},
        {"{\"num\":1048576,\"blockcount\":10,\"time\":0}", IPERF3_IEENDCONDITIONS, "-k 10"},
        {"{\"num\":-5}", IPERF3_IERECVPARAMS, "'num'"},
        {"{\"blockcount\":1e300}", IPERF3_IERECVPARAMS, "'blockcount'"},
        {"{\"time\":0}", IPERF3_IEUNIMP, "-t 0"},
        {"{\"TOS\":300}", IPERF3_IESETTOS, "'TOS'"},
        {"{\"TOS\":-1}", IPERF3_IESETTOS, "'TOS'"},
        {"{\"flowlabel\":5}", IPERF3_IESETFLOW, "flow label"},
        {"{\"dont_fragment\":2}", IPERF3_IESETDONTFRAGMENT, "'dont_fragment'"},
        {"{\"mptcp\":true,\"udp\":true}", IPERF3_IERECVPARAMS, "--mptcp does not apply with -u"},
        {"{\"mptcp\":true,\"zerocopy\":true}", IPERF3_IERECVPARAMS, "with -Z"},
        {"{\"reverse\":true,\"bidirectional\":true}", IPERF3_IEREVERSEBIDIR, "--bidir"},
        {"{\"udp\":true,\"len\":8}", IPERF3_IEUDPBLOCKSIZE, "16 to"},
        {"{\"udp\":true,\"len\":70000}", IPERF3_IEUDPBLOCKSIZE, "16 to"},
        {"{\"burst\":5000}", IPERF3_IEBURST, "'burst'"},
        {"{\"bandwidth\":-5}", IPERF3_IERECVPARAMS, "'bandwidth'"},
        {"{\"udp\":\"true\"}", IPERF3_IERECVPARAMS, "'udp'"},
    };
    struct iperf3_params ip;
    char err[256];
    int code, en;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = decode_text(cases[i].json, &ip, &code, &en, err);
        if (rc == 0 || code != cases[i].code || !strstr(err, cases[i].needle))
            fail_msg("%s: rc %d code %d (want %d) err \"%s\" (want \"%s\")", cases[i].json, rc,
                     code, cases[i].code, err, cases[i].needle);
    }
    /* not an object */
    cJSON *arr = cJSON_CreateArray();
    assert_int_not_equal(iperf3_proto_params_decode(arr, &ip, &code, &en, err, sizeof(err)), 0);
    assert_int_equal(code, IPERF3_IERECVPARAMS);
    cJSON_Delete(arr);
}

static void test_params_sanitized(void **state)
{
    struct iperf3_params ip;
    char err[256], json[1024];
    int code, en;

    (void)state;
    /* control characters (escaped in JSON) and a long title: printable, truncated */
    snprintf(json, sizeof(json),
             "{\"title\":\"a\\u0001b\\u00e9%0300d\",\"client_version\":"
             "\"3.12\\u0000x\",\"extra_data\":\"anything\",\"unknown_key\":[1,2,3]}",
             7);
    assert_int_equal(decode_text(json, &ip, &code, &en, err), 0);
    assert_int_equal(strlen(ip.p.title), sizeof(ip.p.title) - 1);
    assert_memory_equal(ip.p.title, "a?b??", 5); /* é is two bytes, each replaced */
    assert_string_equal(ip.client_version, "3.12");
}

static void test_params_roundtrip(void **state)
{
    struct params p;
    struct iperf3_params ip;
    char err[256];
    int code, en;
    cJSON *j;

    (void)state;
    params_defaults(&p);
    p.udp = true;
    p.flows = 3;
    p.dir = PARAMS_DIR_BIDIR;
    p.duration_ns = 7000000000ULL;
    p.omit_ns = 1000000000ULL;
    p.write_size = 1200;
    p.udp_rate_bps = 25000000;
    p.iperf3_udp64 = true;
    snprintf(p.title, sizeof(p.title), "round trip");
    j = iperf3_proto_params_encode(&p, "netrig test");
    assert_non_null(j);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(j, "udp")));
    assert_int_equal(cJSON_GetObjectItem(j, "time")->valueint, 7);
    assert_int_equal(iperf3_proto_params_decode(j, &ip, &code, &en, err, sizeof(err)), 0);
    cJSON_Delete(j);
    assert_true(ip.p.udp && ip.p.iperf3_udp64);
    assert_int_equal(ip.p.flows, 3);
    assert_int_equal(ip.p.dir, PARAMS_DIR_BIDIR);
    assert_int_equal(ip.p.duration_ns, p.duration_ns);
    assert_int_equal(ip.p.omit_ns, p.omit_ns);
    assert_int_equal(ip.p.write_size, 1200);
    assert_int_equal(ip.p.udp_rate_bps, 25000000);
    assert_string_equal(ip.p.title, "round trip");
    assert_string_equal(ip.client_version, "netrig test");
}

/* ---------------------------------------------------------------- results */

static void test_stream_ids(void **state)
{
    (void)state;
    assert_int_equal(iperf3_proto_stream_id(0), 1);
    assert_int_equal(iperf3_proto_stream_id(1), 3);
    assert_int_equal(iperf3_proto_stream_id(2), 4);
    assert_int_equal(iperf3_proto_stream_flow(1, 4), 0);
    assert_int_equal(iperf3_proto_stream_flow(3, 4), 1);
    assert_int_equal(iperf3_proto_stream_flow(5, 4), 3);
    assert_int_equal(iperf3_proto_stream_flow(6, 4), -1);
    assert_int_equal(iperf3_proto_stream_flow(2, 4), -1);
    assert_int_equal(iperf3_proto_stream_flow(0, 4), -1);
    assert_int_equal(iperf3_proto_stream_flow(-3, 4), -1);
}

/* What a 3.12 server sends after a UDP test (its -1 printed as an unsigned 64-bit value). */
static const char results_312[] =
    "{\"cpu_util_total\":0.13,\"cpu_util_user\":0.004,\"cpu_util_system\":0.12,"
    "\"sender_has_retransmits\":18446744073709551615,\"congestion_used\":\"cubic\","
    "\"server_output_text\":\"hello\\n\",\"streams\":[{\"id\":1,\"bytes\":1277952,"
    "\"retransmits\":18446744073709551615,\"jitter\":0.000164,\"errors\":2,\"packets\":39,"
    "\"start_time\":0,\"end_time\":1.000312}]}";

static int results_text(const char *json, uint32_t max, struct iperf3_results *r, char *err)
{
    cJSON *j = cJSON_Parse(json);
    int rc;

    assert_non_null(j);
    err[0] = '\0';
    rc = iperf3_proto_results_decode(j, max, r, err, 256);
    cJSON_Delete(j);
    return rc;
}

static void test_results_312(void **state)
{
    struct iperf3_results r;
    char err[256];

    (void)state;
    assert_int_equal(results_text(results_312, 8, &r, err), 0);
    assert_int_equal(r.sender_has_retransmits, -1);
    assert_string_equal(r.congestion_used, "cubic");
    assert_string_equal(r.server_output_text, "hello\n");
    assert_int_equal(r.nstreams, 1);
    assert_int_equal(r.streams[0].id, 1);
    assert_int_equal(r.streams[0].bytes, 1277952);
    assert_int_equal(r.streams[0].retransmits, -1);
    assert_int_equal(r.streams[0].errors, 2);
    assert_int_equal(r.streams[0].packets, 39);
    assert_dbl_near(r.streams[0].jitter_s, 0.000164, 1e-12);
    assert_dbl_near(r.streams[0].end_s, 1.000312, 1e-9);
    iperf3_proto_results_free(&r);
    /* pre-3.2 servers send no start/end times: accepted */
    assert_int_equal(results_text("{\"cpu_util_total\":1,\"cpu_util_user\":0,\"cpu_util_system\":1,"
                                  "\"sender_has_retransmits\":1,\"streams\":[{\"id\":3,"
                                  "\"bytes\":10,\"retransmits\":0,\"jitter\":0,\"errors\":0,"
                                  "\"packets\":0}]}",
                                  8, &r, err),
                     0);
    assert_null(r.server_output_text);
    iperf3_proto_results_free(&r);
}

static void test_results_hostile(void **state)
{
    static const char *const top = "\"cpu_util_total\":1,\"cpu_util_user\":0,"
                                   "\"cpu_util_system\":1,\"sender_has_retransmits\":1";
    static const struct {
        const char *streams;
        const char *needle;
    } cases[] = {
        {"\"streams\":{}", "'streams' must be an array"},
        {"\"streams\":[1]", "not an object"},
        {"\"streams\":[{\"id\":1}]", "lacks 'bytes'"},
        {"\"streams\":[{\"id\":\"1\",\"bytes\":1,\"retransmits\":0,\"jitter\":0,\"errors\":0,"
         "\"packets\":0}]",
         "'id'"},
        {"\"streams\":[{\"id\":1,\"bytes\":-1,\"retransmits\":0,\"jitter\":0,\"errors\":0,"
         "\"packets\":0}]",
         "'bytes'"},
        {"\"streams\":[{\"id\":1,\"bytes\":1e300,\"retransmits\":0,\"jitter\":0,\"errors\":0,"
         "\"packets\":0}]",
         "'bytes'"},
        {"\"streams\":[{\"id\":1,\"bytes\":1.5,\"retransmits\":0,\"jitter\":0,\"errors\":0,"
         "\"packets\":0}]",
         "'bytes'"},
        {"\"streams\":[{\"id\":1,\"bytes\":1,\"retransmits\":0,\"jitter\":-1,\"errors\":0,"
         "\"packets\":0}]",
         "'jitter'"},
        {"\"streams\":[{\"id\":1,\"bytes\":1,\"retransmits\":0,\"jitter\":0,\"errors\":0,"
         "\"packets\":0,\"start_time\":5,\"end_time\":1}]",
         "before it starts"},
        {"\"streams\":[{\"id\":1,\"bytes\":1,\"retransmits\":0,\"jitter\":0,\"errors\":0,"
         "\"packets\":0},{\"id\":1,\"bytes\":1,\"retransmits\":0,\"jitter\":0,\"errors\":0,"
         "\"packets\":0}]",
         "appears twice"},
        {"\"streams\":[{},{},{}]", "at most 2"},
    };
    struct iperf3_results r;
    char err[256], json[1024];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(json, sizeof(json), "{%s,%s}", top, cases[i].streams);
        if (results_text(json, 2, &r, err) == 0 || !strstr(err, cases[i].needle))
            fail_msg("%s: err \"%s\" (want \"%s\")", json, err, cases[i].needle);
        assert_null(r.streams);
    }
    /* the summary members are required, with the right types */
    assert_int_not_equal(results_text("{\"streams\":[]}", 2, &r, err), 0);
    assert_int_not_equal(results_text("{\"cpu_util_total\":\"1\",\"cpu_util_user\":0,"
                                      "\"cpu_util_system\":1,\"sender_has_retransmits\":1,"
                                      "\"streams\":[]}",
                                      2, &r, err),
                         0);
    assert_int_not_equal(results_text("{\"cpu_util_total\":1,\"cpu_util_user\":0,"
                                      "\"cpu_util_system\":1,\"sender_has_retransmits\":7,"
                                      "\"streams\":[]}",
                                      2, &r, err),
                         0);
    /* congestion names that are not names are dropped, not trusted */
    assert_int_equal(results_text("{\"cpu_util_total\":1,\"cpu_util_user\":0,\"cpu_util_system\":1,"
                                  "\"sender_has_retransmits\":1,\"congestion_used\":\"$(rm)\","
                                  "\"streams\":[]}",
                                  2, &r, err),
                     0);
    assert_string_equal(r.congestion_used, "");
    iperf3_proto_results_free(&r);
}

/* A side as our engine fills it: flow 0 sent (TCP retransmits 3), flow 1 received. */
static void make_side(struct side_result *s, bool udp)
{
    assert_int_equal(result_side_init(s, 2, 1), 0);
    s->valid = true;
    s->flows[0].sender = true;
    s->flows[0].bytes = 1000;
    s->flows[0].seconds = 2.0;
    s->flows[0].ti.valid = true;
    s->flows[0].ti.total_retrans = 3;
    s->flows[0].sent_pkts = 90;
    s->flows[0].send_drops = 10;
    s->flows[1].bytes = 2000;
    s->flows[1].seconds = 1.5;
    if (udp) {
        s->flows[1].has_udp_rx = true;
        s->flows[1].udp.max_seq_plus1 = 50;
        s->flows[1].udp.received = 45;
        s->flows[1].udp.jitter_ns = 250000;
    }
    s->cpu.valid = 1;
    s->cpu.ncpu = 4;
    s->cpu.threads_user_pct = 1;
    s->cpu.threads_system_pct = 2;
    snprintf(s->congestion, sizeof(s->congestion), "bbr");
}

static void test_results_encode(void **state)
{
    struct side_result s;
    struct iperf3_results r;
    struct params p;
    char err[256];
    cJSON *j;

    (void)state;
    params_defaults(&p);
    p.dir = PARAMS_DIR_BIDIR;
    make_side(&s, false);
    j = iperf3_proto_results_encode(&s, &p, true, "text");
    assert_non_null(j);
    assert_int_equal(iperf3_proto_results_decode(j, 2, &r, err, sizeof(err)), 0);
    cJSON_Delete(j);
    assert_dbl_near(r.cpu_total, 12.0, 1e-9); /* 3 % of 4 CPUs = 12 % of one */
    assert_int_equal(r.sender_has_retransmits, 1);
    assert_string_equal(r.congestion_used, "bbr");
    assert_string_equal(r.server_output_text, "text");
    assert_int_equal(r.streams[0].id, 1);
    assert_int_equal(r.streams[0].retransmits, 3);
    assert_int_equal(r.streams[1].id, 3);
    assert_int_equal(r.streams[1].retransmits, -1);
    assert_dbl_near(r.streams[1].end_s, 1.5, 1e-9);
    iperf3_proto_results_free(&r);
    result_side_fini(&s);
    /* UDP: a sender reports datagrams sent, a receiver its highest number and the gap */
    p.udp = true;
    make_side(&s, true);
    j = iperf3_proto_results_encode(&s, &p, false, NULL);
    assert_int_equal(iperf3_proto_results_decode(j, 2, &r, err, sizeof(err)), 0);
    cJSON_Delete(j);
    assert_int_equal(r.sender_has_retransmits, 0);
    assert_int_equal(r.streams[0].packets, 100);
    assert_int_equal(r.streams[0].retransmits, -1);
    assert_int_equal(r.streams[1].packets, 50);
    assert_int_equal(r.streams[1].errors, 5);
    assert_dbl_near(r.streams[1].jitter_s, 0.00025, 1e-12);
    assert_null(r.server_output_text);
    iperf3_proto_results_free(&r);
    result_side_fini(&s);
}

static void test_remote_side(void **state)
{
    struct iperf3_results r;
    struct side_result s;
    struct params p;
    char err[256];

    (void)state;
    params_defaults(&p);
    p.udp = true;
    p.flows = 2;
    p.dir = PARAMS_DIR_REVERSE;
    assert_int_equal(results_text("{\"cpu_util_total\":5,\"cpu_util_user\":1,\"cpu_util_system\":4,"
                                  "\"sender_has_retransmits\":0,\"streams\":["
                                  "{\"id\":3,\"bytes\":300,\"retransmits\":-1,\"jitter\":0,"
                                  "\"errors\":0,\"packets\":30,\"start_time\":0,\"end_time\":2},"
                                  "{\"id\":1,\"bytes\":100,\"retransmits\":-1,\"jitter\":0,"
                                  "\"errors\":0,\"packets\":10,\"start_time\":0,\"end_time\":2}]}",
                                  4, &r, err),
                     0);
    /* the server sent both (reverse): its packets are datagrams sent, per flow by id */
    assert_int_equal(iperf3_client_remote_side(&r, &p, true, &s, err, sizeof(err)), 0);
    assert_true(s.valid);
    assert_true(s.flows[0].sender && s.flows[1].sender);
    assert_int_equal(s.flows[0].bytes, 100);
    assert_int_equal(s.flows[0].sent_pkts, 10);
    assert_int_equal(s.flows[1].sent_pkts, 30);
    assert_dbl_near(s.flows[1].seconds, 2.0, 1e-9);
    assert_contains(s.warning, "5.0%");
    result_side_fini(&s);
    /* forward: the server received; errors turn into datagrams received */
    p.dir = PARAMS_DIR_FORWARD;
    r.streams[0].errors = 4;
    assert_int_equal(iperf3_client_remote_side(&r, &p, true, &s, err, sizeof(err)), 0);
    assert_false(s.flows[1].sender);
    assert_true(s.flows[1].has_udp_rx);
    assert_int_equal(s.flows[1].udp.max_seq_plus1, 30);
    assert_int_equal(s.flows[1].udp.received, 26);
    result_side_fini(&s);
    /* a stream id the test does not have is an error */
    p.flows = 1;
    assert_int_not_equal(iperf3_client_remote_side(&r, &p, true, &s, err, sizeof(err)), 0);
    assert_contains(err, "stream id 3");
    iperf3_proto_results_free(&r);
}

/* ---------------------------------------------------------------- UDP datagrams */

static void test_udp_header(void **state)
{
    uint8_t buf[32];
    uint64_t ns, seq;

    (void)state;
    assert_int_equal(flow_iperf3_udp_header(buf, 0x01020304, 5, 0x0a0b0c0d, false), 12);
    assert_memory_equal(buf, "\x01\x02\x03\x04\x00\x00\x00\x05\x0a\x0b\x0c\x0d", 12);
    assert_int_equal(flow_iperf3_udp_parse(buf, 12, false, &ns, &seq), 0);
    assert_int_equal(seq, 0x0a0b0c0d);
    assert_int_equal(ns, 0x01020304ULL * 1000000000ULL + 5000);
    assert_int_equal(flow_iperf3_udp_parse(buf, 11, false, &ns, &seq), -EINVAL);
    assert_int_equal(flow_iperf3_udp_parse(buf, 4, false, &ns, &seq), -EINVAL); /* "9876" */
    assert_int_equal(flow_iperf3_udp_header(buf, 7, 999999, 0x100000002ULL, true), 16);
    assert_int_equal(flow_iperf3_udp_parse(buf, 16, true, &ns, &seq), 0);
    assert_int_equal(seq, 0x100000002ULL);
    assert_int_equal(flow_iperf3_udp_parse(buf, 12, true, &ns, &seq), -EINVAL);
    /* microseconds out of range from a broken sender are bounded */
    memset(buf + 4, 0xff, 4);
    assert_int_equal(flow_iperf3_udp_parse(buf, 16, true, &ns, &seq), 0);
    assert_int_equal(ns, 7ULL * 1000000000ULL + 999999000ULL);
}

static void test_udp_account(void **state)
{
    struct flow_udp_rx rx = {0};

    (void)state;
    /* 1 2 3 then 6 (4 and 5 missing), then 5 late, then 7 */
    flow_iperf3_udp_account(&rx, 1);
    flow_iperf3_udp_account(&rx, 2);
    flow_iperf3_udp_account(&rx, 3);
    flow_iperf3_udp_account(&rx, 6);
    assert_int_equal(rx.max_seq_plus1, 6);
    assert_int_equal(rx.received, 4);
    flow_iperf3_udp_account(&rx, 5);
    assert_int_equal(rx.out_of_order, 1);
    flow_iperf3_udp_account(&rx, 7);
    assert_int_equal(rx.max_seq_plus1, 7);
    assert_int_equal(rx.received, 6); /* one lost: 7 - 6 */
}

/* The codec flow_udp.c's loops run for an iperf3 peer: a batch of headers exactly as
 * flow_iperf3_udp_header writes them, numbered from 1, the filler untouched; read back. */
static void test_udp_codec(void **state)
{
    const struct flow_udp_codec *c32 = &flow_iperf3_udp_codec32, *c64 = &flow_iperf3_udp_codec64;
    const uint64_t real = 1700000000ULL * 1000000000ULL + 123456789ULL;
    uint8_t buf[3 * 40], want[16];
    uint64_t ns, seq;

    (void)state;
    assert_int_equal(c32->first_seq, 1);
    assert_false(c32->gso);
    assert_false(c64->gso);
    for (int k = 0; k < 2; k++) {
        const struct flow_udp_codec *c = k ? c64 : c32;
        size_t hl = k ? 16 : 12;
        memset(buf, 0x5a, sizeof(buf));
        c->stamp(buf, 40, 3, 7, real);
        for (uint64_t i = 0; i < 3; i++) {
            assert_int_equal(flow_iperf3_udp_header(want, 1700000000ULL, 123456, 7 + i, k), hl);
            assert_memory_equal(buf + i * 40, want, hl);
            assert_int_equal(buf[i * 40 + hl], 0x5a);
            assert_int_equal(c->parse(buf + i * 40, 40, &ns, &seq), 0);
            assert_int_equal(seq, 7 + i);
            assert_int_equal(ns, real / 1000 * 1000); /* microseconds on the wire */
        }
        assert_int_equal(c->parse(buf, hl - 1, &ns, &seq), -EINVAL);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cookie_make),        cmocka_unit_test(test_cookie_sniff),
        cmocka_unit_test(test_client_steps),       cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_json_decode),        cmocka_unit_test(test_json_io),
        cmocka_unit_test(test_state_and_error_io), cmocka_unit_test(test_params_312),
        cmocka_unit_test(test_params_hostile),     cmocka_unit_test(test_params_sanitized),
        cmocka_unit_test(test_params_roundtrip),   cmocka_unit_test(test_stream_ids),
        cmocka_unit_test(test_results_312),        cmocka_unit_test(test_results_hostile),
        cmocka_unit_test(test_results_encode),     cmocka_unit_test(test_remote_side),
        cmocka_unit_test(test_udp_header),         cmocka_unit_test(test_udp_account),
        cmocka_unit_test(test_udp_codec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
