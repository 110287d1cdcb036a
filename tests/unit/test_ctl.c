/* Unit tests for ctl.c: control frames built by hand (good and hostile), send/recv over a
 * socketpair, data-connection hellos and test ids. */
#define _GNU_SOURCE
#include "test_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dsclass.h"
#include "ctl.h"

/* Linked with -Wl,--wrap=malloc: records the largest request made by the code under test
 * while tracking is on (cJSON, a shared library, allocates through the real malloc). */
void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n);
static int malloc_tracking;
static size_t malloc_largest;

void *__wrap_malloc(size_t n)
{
    if (malloc_tracking && n > malloc_largest)
        malloc_largest = n;
    return __real_malloc(n);
}

/* ---- frames built by hand ---- */

/* "NRG" + version, big-endian length field, then payload (plen bytes). */
static size_t make_frame(uint8_t *buf, uint8_t version, uint32_t len_field, const char *payload,
                         size_t plen)
{
    memcpy(buf, "NRG", 3);
    buf[3] = version;
    buf[4] = (uint8_t)(len_field >> 24);
    buf[5] = (uint8_t)(len_field >> 16);
    buf[6] = (uint8_t)(len_field >> 8);
    buf[7] = (uint8_t)len_field;
    if (plen)
        memcpy(buf + CTL_HDR_LEN, payload, plen);
    return CTL_HDR_LEN + plen;
}

/* Decodes a well-formed frame around json; returns rc, err in err. */
static int decode_json(const char *json, cJSON **out, char *err, size_t errlen)
{
    uint8_t buf[512];
    size_t n = make_frame(buf, CTL_PROTO_VERSION, (uint32_t)strlen(json), json, strlen(json));

    err[0] = '\0';
    return ctl_decode(buf, n, CTL_MAX_REQUEST, out, err, errlen);
}

static void test_decode_valid(void **state)
{
    cJSON *m = (cJSON *)1;
    char err[256];

    (void)state;
    assert_int_equal(
        decode_json("{\"type\":\"hello\",\"version\":\"0.1.0\",\"n\":3}", &m, err, sizeof(err)), 0);
    assert_non_null(m);
    assert_string_equal(ctl_type(m), "hello");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(m, "version")->valuestring, "0.1.0");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(m, "n")->valueint, 3);
    cJSON_Delete(m);
    /* a type of exactly CTL_TYPE_MAX characters is fine */
    assert_int_equal(
        decode_json("{\"type\":\"abcdefghijklmnopqrstuvwxyz012345\"}", &m, err, sizeof(err)), 0);
    assert_int_equal(strlen(ctl_type(m)), CTL_TYPE_MAX);
    cJSON_Delete(m);
}

static void test_decode_bad_magic(void **state)
{
    static const char json[] = "{\"type\":\"hello\"}";
    uint8_t buf[64];
    size_t n = make_frame(buf, CTL_PROTO_VERSION, sizeof(json) - 1, json, sizeof(json) - 1);
    cJSON *m = (cJSON *)1;
    char err[256] = "";

    (void)state;
    buf[0] = 'X';
    assert_int_equal(ctl_decode(buf, n, CTL_MAX_REQUEST, &m, err, sizeof(err)), -EPROTO);
    assert_null(m);
    assert_contains(err, "bad magic");
    memcpy(buf, "GET ", 4); /* an HTTP client on the port */
    assert_int_equal(ctl_decode(buf, n, CTL_MAX_REQUEST, &m, err, sizeof(err)), -EPROTO);
}

static void test_decode_wrong_version(void **state)
{
    static const char json[] = "{\"type\":\"hello\"}";
    uint8_t buf[64];
    size_t n = make_frame(buf, 2, sizeof(json) - 1, json, sizeof(json) - 1);
    cJSON *m = (cJSON *)1;
    char err[256] = "";

    (void)state;
    assert_int_equal(ctl_decode(buf, n, CTL_MAX_REQUEST, &m, err, sizeof(err)), -EPROTO);
    assert_null(m);
    assert_contains(err, "version 2");
    assert_contains(err, "speaks 1");
}

static void test_decode_length_limits(void **state)
{
    static const char json[] = "{\"type\":\"hello\",\"pad\":\"xxxx\"}";
    uint32_t plen = sizeof(json) - 1;
    uint8_t buf[64];
    size_t n;
    cJSON *m = (cJSON *)1;
    char err[256] = "", want[64];

    (void)state;
    n = make_frame(buf, CTL_PROTO_VERSION, 0, NULL, 0);
    assert_int_equal(ctl_decode(buf, n, CTL_MAX_REQUEST, &m, err, sizeof(err)), -EMSGSIZE);
    assert_null(m);

    n = make_frame(buf, CTL_PROTO_VERSION, plen, json, plen);
    assert_int_equal(ctl_decode(buf, n, plen - 1, &m, err, sizeof(err)), -EMSGSIZE);
    assert_null(m);
    snprintf(want, sizeof(want), "message of %u bytes", plen);
    assert_contains(err, want);
    assert_int_equal(ctl_decode(buf, n, plen, &m, err, sizeof(err)), 0); /* at the limit */
    cJSON_Delete(m);
}

static void test_decode_length_mismatch(void **state)
{
    static const char json[] = "{\"type\":\"hello\"}";
    uint32_t plen = sizeof(json) - 1;
    uint8_t buf[64];
    size_t n;
    cJSON *m = (cJSON *)1;
    char err[256] = "";

    (void)state;
    n = make_frame(buf, CTL_PROTO_VERSION, plen - 2, json, plen); /* says less than sent */
    assert_int_equal(ctl_decode(buf, n, CTL_MAX_REQUEST, &m, err, sizeof(err)), -EPROTO);
    assert_null(m);
    assert_contains(err, "does not match");
    n = make_frame(buf, CTL_PROTO_VERSION, plen + 5, json, plen); /* says more than sent */
    assert_int_equal(ctl_decode(buf, n, CTL_MAX_REQUEST, &m, err, sizeof(err)), -EPROTO);
    assert_null(m);
}

static void test_decode_truncated_header(void **state)
{
    static const char json[] = "{\"type\":\"hello\"}";
    uint8_t buf[64];
    cJSON *m;
    char err[256];

    (void)state;
    make_frame(buf, CTL_PROTO_VERSION, sizeof(json) - 1, json, sizeof(json) - 1);
    for (size_t len = 0; len < CTL_HDR_LEN; len++) {
        m = (cJSON *)1;
        err[0] = '\0';
        assert_int_equal(ctl_decode(buf, len, CTL_MAX_REQUEST, &m, err, sizeof(err)), -EPROTO);
        assert_null(m);
        assert_contains(err, "truncated");
    }
}

static void test_decode_bad_payloads(void **state)
{
    static const char *const bad[] = {
        "{\"type\":", /* invalid JSON */
        "not json at all",
        "[\"type\",\"hello\"]", /* array, not object */
        "[{\"type\":\"hello\"}]",
        "\"hello\"",
        "42",
        "null",
        "{\"kind\":\"hello\"}", /* no type */
        "{\"type\":5}",         /* not a string */
        "{\"type\":null}",
        "{\"type\":{\"a\":1}}",
        "{\"type\":\"\"}",                                  /* empty */
        "{\"type\":\"abcdefghijklmnopqrstuvwxyz0123456\"}", /* 33 characters */
        "{\"Type\":\"hello\"}",                             /* keys are case-sensitive */
    };
    cJSON *m;
    char err[256];

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        m = (cJSON *)1;
        int rc = decode_json(bad[i], &m, err, sizeof(err));
        if (rc != -EPROTO)
            fail_msg("ctl_decode(%s) = %d, expected -EPROTO", bad[i], rc);
        assert_null(m);
        assert_true(err[0] != '\0');
    }
}

/* The frame is "that many bytes of JSON": bytes after the object are not JSON. */
static void test_decode_rejects_trailing_bytes(void **state)
{
    static const char *const bad[] = {
        "{\"type\":\"hello\"}xyz",
        "{\"type\":\"hello\"}{\"type\":\"stop\"}",
    };
    cJSON *m;
    char err[256];

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        m = NULL;
        int rc = decode_json(bad[i], &m, err, sizeof(err));
        cJSON_Delete(m);
        if (rc != -EPROTO)
            fail_msg("ctl_decode(%s) = %d, expected -EPROTO", bad[i], rc);
    }
}

/* Random payloads behind a valid header: decode either succeeds with a valid type or fails
 * cleanly, never crashes or leaves *out set on failure. */
static void test_decode_random_payloads(void **state)
{
    static const char alphabet[] = "{}[]\":,typehlo0123456789 \\nul-.eE\x01\xff";
    uint8_t buf[CTL_HDR_LEN + 64];
    char payload[64];
    uint32_t seed = 12345;
    int ok = 0;

    (void)state;
    for (int iter = 0; iter < 20000; iter++) {
        size_t plen = 1 + (size_t)(iter % 63);
        cJSON *m = (cJSON *)1;
        char err[128];

        for (size_t i = 0; i < plen; i++) {
            seed = seed * 1103515245u + 12345u;
            payload[i] = alphabet[(seed >> 16) % (sizeof(alphabet) - 1)];
        }
        if (iter % 7 == 0) /* sometimes start from a valid prefix */
            memcpy(payload, "{\"type\":\"", plen < 9 ? plen : 9);
        size_t n = make_frame(buf, CTL_PROTO_VERSION, (uint32_t)plen, payload, plen);
        int rc = ctl_decode(buf, n, CTL_MAX_REQUEST, &m, err, sizeof(err));
        if (rc == 0) {
            assert_non_null(m);
            assert_true(cJSON_IsObject(m));
            assert_in_range(strlen(ctl_type(m)), 1, CTL_TYPE_MAX);
            cJSON_Delete(m);
            ok++;
        } else {
            assert_int_equal(rc, -EPROTO);
            assert_null(m);
        }
    }
    (void)ok;
}

/* ---- send and recv over a socketpair ---- */

static int pair_setup(void **state)
{
    int *sv = malloc(2 * sizeof(int));

    if (!sv || socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
        return -1;
    *state = sv;
    return 0;
}

static int pair_teardown(void **state)
{
    int *sv = *state;

    if (sv[0] >= 0)
        close(sv[0]);
    if (sv[1] >= 0)
        close(sv[1]);
    free(sv);
    return 0;
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_send_recv_round_trip(void **state)
{
    int *sv = *state;
    cJSON *msg = ctl_msg_new("start"), *got = NULL;
    cJSON *arr = cJSON_AddArrayToObject(msg, "flows");
    char err[256] = "";

    cJSON_AddNumberToObject(msg, "port", 5301);
    cJSON_AddStringToObject(msg, "title", "ünïcode \"quoted\"");
    cJSON_AddItemToArray(arr, cJSON_CreateNumber(1.5e10));
    assert_int_equal(ctl_send(sv[0], msg, 1000), 0);
    assert_int_equal(ctl_recv(sv[1], CTL_MAX_REQUEST, 1000, &got, err, sizeof(err)), 0);
    assert_non_null(got);
    assert_string_equal(ctl_type(got), "start");
    assert_true(cJSON_Compare(msg, got, 1));
    cJSON_Delete(got);

    /* two frames back to back are read one at a time */
    assert_int_equal(ctl_send(sv[0], msg, 1000), 0);
    cJSON_Delete(msg);
    msg = ctl_msg_new("stop");
    assert_int_equal(ctl_send(sv[0], msg, 1000), 0);
    assert_int_equal(ctl_recv(sv[1], CTL_MAX_REQUEST, 1000, &got, err, sizeof(err)), 0);
    assert_string_equal(ctl_type(got), "start");
    cJSON_Delete(got);
    assert_int_equal(ctl_recv(sv[1], CTL_MAX_REQUEST, 1000, &got, err, sizeof(err)), 0);
    assert_string_equal(ctl_type(got), "stop");
    cJSON_Delete(got);
    cJSON_Delete(msg);
}

static void test_send_wire_format(void **state)
{
    int *sv = *state;
    cJSON *msg = ctl_msg_new("hello");
    uint8_t buf[64];
    static const char want[] = "{\"type\":\"hello\"}";

    assert_int_equal(ctl_send(sv[0], msg, 1000), 0);
    cJSON_Delete(msg);
    assert_int_equal(recv(sv[1], buf, sizeof(buf), 0), CTL_HDR_LEN + sizeof(want) - 1);
    assert_memory_equal(buf, "NRG\x01", 4);
    assert_memory_equal(buf + 4, "\x00\x00\x00\x10", 4); /* 16 bytes, big-endian */
    assert_memory_equal(buf + CTL_HDR_LEN, want, sizeof(want) - 1);
}

static void test_recv_over_maxlen(void **state)
{
    int *sv = *state;
    cJSON *msg = ctl_msg_new("results"), *got = (cJSON *)1;
    char err[256] = "";

    cJSON_AddStringToObject(msg, "pad", "0123456789");
    assert_int_equal(ctl_send(sv[0], msg, 1000), 0);
    cJSON_Delete(msg);
    assert_int_equal(ctl_recv(sv[1], 16, 1000, &got, err, sizeof(err)), -EMSGSIZE);
    assert_null(got);
}

static void test_recv_timeout(void **state)
{
    int *sv = *state;
    cJSON *got = (cJSON *)1;
    char err[256] = "";
    int64_t t0 = now_ms(), dt;

    assert_int_equal(ctl_recv(sv[1], CTL_MAX_REQUEST, 200, &got, err, sizeof(err)), -ETIMEDOUT);
    dt = now_ms() - t0;
    assert_null(got);
    assert_in_range(dt, 190, 1500);
    assert_contains(err, "timed out");

    /* half a header, then silence */
    assert_int_equal(write(sv[0], "NRG\x01", 4), 4);
    t0 = now_ms();
    assert_int_equal(ctl_recv(sv[1], CTL_MAX_REQUEST, 200, &got, err, sizeof(err)), -ETIMEDOUT);
    assert_in_range(now_ms() - t0, 190, 1500);
}

static void test_recv_peer_closed(void **state)
{
    int *sv = *state;
    cJSON *got = (cJSON *)1;
    char err[256] = "";

    close(sv[0]);
    sv[0] = -1;
    assert_int_equal(ctl_recv(sv[1], CTL_MAX_REQUEST, 1000, &got, err, sizeof(err)), -ENODATA);
    assert_null(got);
    assert_contains(err, "closed");
}

static void test_recv_peer_closed_mid_payload(void **state)
{
    int *sv = *state;
    uint8_t buf[64];
    cJSON *got = (cJSON *)1;
    char err[256] = "";
    size_t n = make_frame(buf, CTL_PROTO_VERSION, 100, "{\"type\":\"he", 11);

    assert_int_equal(write(sv[0], buf, n), (ssize_t)n);
    close(sv[0]);
    sv[0] = -1;
    assert_int_equal(ctl_recv(sv[1], CTL_MAX_REQUEST, 1000, &got, err, sizeof(err)), -ENODATA);
    assert_null(got);
}

static void test_recv_huge_header_does_not_allocate(void **state)
{
    int *sv = *state;
    uint8_t hdr[CTL_HDR_LEN];
    cJSON *got = (cJSON *)1;
    char err[256] = "";
    int64_t t0;
    int rc;

    make_frame(hdr, CTL_PROTO_VERSION, 1u << 30, NULL, 0); /* announces 1 GiB */
    assert_int_equal(write(sv[0], hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
    t0 = now_ms();
    malloc_largest = 0;
    malloc_tracking = 1;
    rc = ctl_recv(sv[1], CTL_MAX_RESPONSE, 2000, &got, err, sizeof(err));
    malloc_tracking = 0;
    assert_int_equal(rc, -EMSGSIZE);
    assert_null(got);
    assert_in_range(now_ms() - t0, 0, 1000); /* refused at once, not after waiting for data */
    if (malloc_largest >= 4096)
        fail_msg("ctl_recv allocated %zu bytes for a refused frame", malloc_largest);
    assert_contains(err, "1073741824");
}

static void test_send_error(void **state)
{
    int *sv = *state;
    cJSON *got = NULL;
    char err[256] = "";

    ctl_send_error(sv[0], "busy", "server busy: %d tests running", 3);
    assert_int_equal(ctl_recv(sv[1], CTL_MAX_REQUEST, 1000, &got, err, sizeof(err)), 0);
    assert_string_equal(ctl_type(got), "error");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(got, "code")->valuestring, "busy");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(got, "message")->valuestring,
                        "server busy: 3 tests running");
    cJSON_Delete(got);
}

static void test_ctl_type_helpers(void **state)
{
    cJSON *m = cJSON_CreateObject();

    (void)state;
    assert_string_equal(ctl_type(m), "");
    cJSON_AddNumberToObject(m, "type", 4);
    assert_string_equal(ctl_type(m), "");
    cJSON_Delete(m);
    m = ctl_error_new("bad_params", "flows %u out of range", 0u);
    assert_string_equal(ctl_type(m), "error");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(m, "message")->valuestring,
                        "flows 0 out of range");
    cJSON_Delete(m);
}

/* ---- data hello and test ids ---- */

static void test_data_hello(void **state)
{
    uint8_t id[CTL_TEST_ID_LEN], id2[CTL_TEST_ID_LEN], hello[CTL_DATA_HELLO_LEN];
    uint32_t flow = 0;

    (void)state;
    for (int i = 0; i < CTL_TEST_ID_LEN; i++)
        id[i] = (uint8_t)(0xa0 + i);
    memset(hello, 0xee, sizeof(hello));
    ctl_data_hello_encode(hello, id, 0x01020304u);
    assert_memory_equal(hello, "NRDT", 4);
    assert_memory_equal(hello + 4, id, CTL_TEST_ID_LEN);
    assert_memory_equal(hello + 20, "\x01\x02\x03\x04", 4);
    assert_memory_equal(hello + 24, "\x00\x00\x00\x00", 4);
    assert_int_equal(ctl_data_hello_decode(hello, id2, &flow), 0);
    assert_memory_equal(id2, id, CTL_TEST_ID_LEN);
    assert_int_equal(flow, 0x01020304u);

    ctl_data_hello_encode(hello, id, UINT32_MAX);
    assert_int_equal(ctl_data_hello_decode(hello, id2, &flow), 0);
    assert_int_equal(flow, UINT32_MAX);

    hello[3] = 'X';
    assert_int_equal(ctl_data_hello_decode(hello, id2, &flow), -EPROTO);
    memcpy(hello, "NRG\x01", 4); /* a control frame on a data connection */
    assert_int_equal(ctl_data_hello_decode(hello, id2, &flow), -EPROTO);
}

static void test_id_hex_round_trip(void **state)
{
    uint8_t id[CTL_TEST_ID_LEN], back[CTL_TEST_ID_LEN];
    char hex[2 * CTL_TEST_ID_LEN + 1];

    (void)state;
    for (int i = 0; i < CTL_TEST_ID_LEN; i++)
        id[i] = (uint8_t)(i * 17); /* 00 11 22 ... ff */
    memset(hex, 'z', sizeof(hex));
    ctl_id_to_hex(id, hex);
    assert_string_equal(hex, "00112233445566778899aabbccddeeff");
    assert_int_equal(ctl_id_from_hex(hex, back), 0);
    assert_memory_equal(back, id, CTL_TEST_ID_LEN);
    assert_int_equal(ctl_id_from_hex("00112233445566778899AABBCCDDEEFF", back), 0);
    assert_memory_equal(back, id, CTL_TEST_ID_LEN);
}

static void test_id_hex_rejects(void **state)
{
    uint8_t id[CTL_TEST_ID_LEN];

    (void)state;
    assert_int_equal(ctl_id_from_hex("", id), -EINVAL);
    assert_int_equal(ctl_id_from_hex("00112233445566778899aabbccddeef", id), -EINVAL);
    assert_int_equal(ctl_id_from_hex("00112233445566778899aabbccddeeff0", id), -EINVAL);
    assert_int_equal(ctl_id_from_hex("zz112233445566778899aabbccddeeff", id), -EINVAL);
    assert_int_equal(ctl_id_from_hex("00112233445566778899aabbccddeeZZ", id), -EINVAL);
}

/* Every one of the 32 characters must be a hex digit: sscanf("%2x") alone would take
 * "0g" as 0, " f" as 15 and "-1" as 0xff. */
static void test_id_hex_rejects_partial_pairs(void **state)
{
    static const char *const bad[] = {
        "0g112233445566778899aabbccddeeff",
        " f112233445566778899aabbccddeeff",
        "-1112233445566778899aabbccddeeff",
        "+1112233445566778899aabbccddeeff",
    };
    uint8_t id[CTL_TEST_ID_LEN];

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = ctl_id_from_hex(bad[i], id);
        if (rc != -EINVAL)
            fail_msg("ctl_id_from_hex(\"%s\") = %d, expected -EINVAL", bad[i], rc);
    }
}

/* accept's flow_rate_limit_bps: what the daemon writes the client reads back; absent, zero,
 * negative, absurd or non-numeric values mean no pacing. */
static void test_accept_flow_rate(void **state)
{
    static const char *const bad[] = {
        "{\"type\":\"accept\"}",
        "{\"type\":\"accept\",\"flow_rate_limit_bps\":0}",
        "{\"type\":\"accept\",\"flow_rate_limit_bps\":-5}",
        "{\"type\":\"accept\",\"flow_rate_limit_bps\":2e15}",
        "{\"type\":\"accept\",\"flow_rate_limit_bps\":\"1000\"}",
    };
    cJSON *m = ctl_msg_new("accept");
    char *text;

    (void)state;
    ctl_accept_set_flow_rate(m, 0);
    assert_null(cJSON_GetObjectItemCaseSensitive(m, "flow_rate_limit_bps"));
    ctl_accept_set_flow_rate(m, 2500000);
    text = cJSON_PrintUnformatted(m);
    assert_string_equal(text, "{\"type\":\"accept\",\"flow_rate_limit_bps\":2500000}");
    assert_int_equal(ctl_accept_flow_rate(m), 2500000);
    free(text);
    cJSON_Delete(m);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        m = cJSON_Parse(bad[i]);
        assert_non_null(m);
        if (ctl_accept_flow_rate(m) != 0)
            fail_msg("%s: read as a pace", bad[i]);
        cJSON_Delete(m);
    }
}

/* accept's classes: the set the daemon marks its flows with; anything else reads as none, so
 * the client refuses (an older daemon says nothing and would send its flows unmarked). */
static void test_accept_classes(void **state)
{
    static const char *const none[] = {
        "{\"type\":\"accept\"}",
        "{\"type\":\"accept\",\"classes\":\"\"}",
        "{\"type\":\"accept\",\"classes\":\"wmm\"}",
        "{\"type\":\"accept\",\"classes\":1}",
        "{\"type\":\"accept\",\"classes\":null}",
    };
    cJSON *m = ctl_msg_new("accept");
    char *text;

    (void)state;
    ctl_accept_set_classes(m, DSCLASS_NONE);
    assert_null(cJSON_GetObjectItemCaseSensitive(m, "classes"));
    ctl_accept_set_classes(m, DSCLASS_RRUL);
    text = cJSON_PrintUnformatted(m);
    assert_string_equal(text, "{\"type\":\"accept\",\"classes\":\"rrul\"}");
    assert_int_equal(ctl_accept_classes(m), DSCLASS_RRUL);
    free(text);
    cJSON_Delete(m);
    for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
        m = cJSON_Parse(none[i]);
        assert_non_null(m);
        if (ctl_accept_classes(m) != DSCLASS_NONE)
            fail_msg("%s: read as a class set", none[i]);
        cJSON_Delete(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_valid),
        cmocka_unit_test(test_decode_bad_magic),
        cmocka_unit_test(test_decode_wrong_version),
        cmocka_unit_test(test_decode_length_limits),
        cmocka_unit_test(test_decode_length_mismatch),
        cmocka_unit_test(test_decode_truncated_header),
        cmocka_unit_test(test_decode_bad_payloads),
        cmocka_unit_test(test_decode_rejects_trailing_bytes),
        cmocka_unit_test(test_decode_random_payloads),
        cmocka_unit_test_setup_teardown(test_send_recv_round_trip, pair_setup, pair_teardown),
        cmocka_unit_test_setup_teardown(test_send_wire_format, pair_setup, pair_teardown),
        cmocka_unit_test_setup_teardown(test_recv_over_maxlen, pair_setup, pair_teardown),
        cmocka_unit_test_setup_teardown(test_recv_timeout, pair_setup, pair_teardown),
        cmocka_unit_test_setup_teardown(test_recv_peer_closed, pair_setup, pair_teardown),
        cmocka_unit_test_setup_teardown(test_recv_peer_closed_mid_payload, pair_setup,
                                        pair_teardown),
        cmocka_unit_test_setup_teardown(test_recv_huge_header_does_not_allocate, pair_setup,
                                        pair_teardown),
        cmocka_unit_test_setup_teardown(test_send_error, pair_setup, pair_teardown),
        cmocka_unit_test(test_ctl_type_helpers),
        cmocka_unit_test(test_data_hello),
        cmocka_unit_test(test_id_hex_round_trip),
        cmocka_unit_test(test_id_hex_rejects),
        cmocka_unit_test(test_id_hex_rejects_partial_pairs),
        cmocka_unit_test(test_accept_flow_rate),
        cmocka_unit_test(test_accept_classes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
