/* Unit tests for transfers of a fixed size (-n, -k): the budget that the sending flows of one
 * side share without a lock (flow.h), reserved from several threads at once and cut exactly at
 * the limit; and the transfer's members on iperf3's wire (num, blockcount, TOS, bandwidth and
 * burst on TCP, dont_fragment) as iperf3 3.12 sends them and as our client sends them. */
#define _GNU_SOURCE
#include "test_util.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "flow.h"
#include "iperf3_proto.h"

/* ---------------------------------------------------------------- the shared budget */

struct racer {
    struct flow f;
    uint64_t sent, writes;
    uint32_t want; /* bytes asked per write; partial writes leave some of it reserved */
};

static void *race(void *arg)
{
    struct racer *r = arg;

    for (;;) {
        uint64_t g = flow_budget_grant(&r->f, r->want);
        uint64_t n = g > 7 && (r->writes % 3) == 1 ? g - 7 : g; /* a short write now and then */

        if (!g)
            return NULL;
        r->sent += n;
        r->writes++;
        flow_add(&r->f.bytes, n);
        flow_budget_spend(&r->f, n);
    }
}

static void test_budget_threads(void **state)
{
    static const uint64_t limits[] = {1, 1000, 1048576, 104857600 + 12345};
    enum { N = 4 };

    (void)state;
    for (size_t l = 0; l < sizeof(limits) / sizeof(limits[0]); l++) {
        struct flow_budget b;
        struct racer r[N];
        pthread_t t[N];
        uint64_t sum = 0;
        int last = 0;

        atomic_store(&b.left, limits[l]);
        atomic_store(&b.armed, true);
        memset(r, 0, sizeof(r));
        for (int i = 0; i < N; i++) {
            r[i].f.budget = &b;
            r[i].want = 65536u + 4096u * (uint32_t)i;
            assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
        }
        for (int i = 0; i < N; i++) {
            pthread_join(t[i], NULL);
            sum += r[i].sent;
            last += r[i].f.budget_last;
            assert_int_equal(r[i].f.allow, 0); /* nothing reserved is left unsent */
            assert_true(r[i].f.budget_counting);
            assert_int_equal(atomic_load(&r[i].f.base_bytes), 0);
        }
        if (sum != limits[l])
            fail_msg("limit %llu: the flows sent %llu", (unsigned long long)limits[l],
                     (unsigned long long)sum);
        assert_int_equal(last, 1); /* exactly one flow took the very last byte */
        assert_int_equal(atomic_load(&b.left), 0);
    }
}

/* Before the count starts (the warm-up) a flow sends freely; it notes its byte count when it
 * first sees the count armed, and counts from there. */
static void test_budget_armed(void **state)
{
    struct flow_budget b;
    struct flow f;

    (void)state;
    memset(&f, 0, sizeof(f));
    atomic_store(&b.left, 100);
    atomic_store(&b.armed, false);
    f.budget = &b;
    assert_int_equal(flow_budget_grant(&f, 4096), 4096);
    flow_add(&f.bytes, 4096);
    flow_budget_spend(&f, 4096);
    assert_int_equal(atomic_load(&b.left), 100);
    assert_false(f.budget_counting);
    atomic_store(&b.armed, true);
    assert_int_equal(flow_budget_grant(&f, 64), 64);
    assert_true(f.budget_counting);
    assert_int_equal(atomic_load(&f.base_bytes), 4096);
    flow_budget_spend(&f, 60); /* a short write: 4 stay reserved */
    assert_int_equal(f.allow, 4);
    assert_int_equal(flow_budget_grant(&f, 64), 40); /* topped up with what is left */
    assert_int_equal(atomic_load(&b.left), 0);
    assert_true(f.budget_last);
    flow_budget_spend(&f, 40);
    assert_int_equal(flow_budget_grant(&f, 64), 0);
    /* no budget at all: every write goes */
    f.budget = NULL;
    assert_int_equal(flow_budget_grant(&f, 1 << 20), 1 << 20);
}

/* ---------------------------------------------------------------- iperf3's wire */

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

/* -n, -k, -S, -b on TCP with a burst, --dont-fragment: read as iperf3 3.12 sends them, and
 * sent by our client as iperf3 does */
static void test_params_transfer(void **state)
{
    struct iperf3_params ip;
    struct params p;
    char err[256];
    int code, en;
    cJSON *j;

    (void)state;
    /* `iperf3 -n 5M -R -S 0x34 -b 100M/4` sends time 0 with num */
    assert_int_equal(decode_text("{\"tcp\":true,\"time\":0,\"num\":5242880,\"blockcount\":0,"
                                 "\"reverse\":true,\"TOS\":52,\"bandwidth\":100000000,"
                                 "\"burst\":4,\"pacing_timer\":1000}",
                                 &ip, &code, &en, err),
                     0);
    assert_int_equal(ip.p.duration_ns, 0);
    assert_int_equal(ip.p.bytes_limit, 5242880);
    assert_int_equal(ip.p.tos, 52);
    assert_int_equal(ip.p.app_rate_bps, 100000000);
    assert_int_equal(ip.p.burst, 4);
    assert_int_equal(ip.p.fq_rate_bps, 0); /* -b is application pacing, not the socket's */
    assert_int_equal(ip.ignored, 0);
    /* `-u -k 1K -b 1G/100 --dont-fragment`: blocks are datagrams */
    assert_int_equal(decode_text("{\"udp\":true,\"time\":0,\"blockcount\":1024,"
                                 "\"bandwidth\":1000000000,\"burst\":100,\"dont_fragment\":1}",
                                 &ip, &code, &en, err),
                     0);
    assert_int_equal(ip.p.blocks_limit, 1024);
    assert_int_equal(ip.p.burst, 100);
    assert_true(ip.p.dont_fragment);
    assert_int_equal(params_limit_units(&ip.p, NULL), 1024);
    /* `-u -n 5M` with 1460-byte datagrams: 5242880 = 3591 x 1460 + 20, a short last one */
    assert_int_equal(decode_text("{\"udp\":true,\"time\":0,\"num\":5242880}", &ip, &code, &en, err),
                     0);
    assert_int_equal(ip.p.bytes_limit, 5242880);
    /* a remainder too short for a header is sent as a whole datagram, as iperf3 does */
    assert_int_equal(
        decode_text("{\"udp\":true,\"time\":0,\"len\":1000,\"num\":10005}", &ip, &code, &en, err),
        0);
    assert_int_equal(ip.p.bytes_limit, 11000);
    /* our client: the same members */
    params_defaults(&p);
    p.duration_ns = 0;
    p.blocks_limit = 1000;
    p.tos = 0xb8;
    p.app_rate_bps = 200000000;
    p.burst = 8;
    j = iperf3_proto_params_encode(&p, "netrig test");
    assert_int_equal(cJSON_GetObjectItem(j, "time")->valueint, 0);
    assert_int_equal(cJSON_GetObjectItem(j, "blockcount")->valueint, 1000);
    assert_int_equal(cJSON_GetObjectItem(j, "TOS")->valueint, 0xb8);
    assert_int_equal(cJSON_GetObjectItem(j, "bandwidth")->valuedouble, 200000000);
    assert_int_equal(cJSON_GetObjectItem(j, "burst")->valueint, 8);
    assert_null(cJSON_GetObjectItem(j, "fqrate"));
    assert_int_equal(iperf3_proto_params_decode(j, &ip, &code, &en, err, sizeof(err)), 0);
    cJSON_Delete(j);
    assert_int_equal(ip.p.blocks_limit, 1000);
    assert_int_equal(ip.p.app_rate_bps, 200000000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_budget_threads),
        cmocka_unit_test(test_budget_armed),
        cmocka_unit_test(test_params_transfer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
