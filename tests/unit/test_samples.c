/* Unit tests for the time series of --sample (samples.c, samples_json.c): thinning when a run
 * would outgrow SAMPLES_MAX_ROWS (every other tick dropped, the period doubled, the counters of
 * the kept ticks intact), throughput between ticks, the JSON column layout both ways (a flow's
 * missing TCP_INFO as null), hostile input from a server (every kind of bad value refused
 * whole), the side object carrying its samples, and the --sample limits of the parameters. */
#include "test_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "params.h"
#include "result_json.h"
#include "samples.h"
#include "samples_json.h"

static void fill(struct samples *s, uint32_t ticks, double dt)
{
    for (uint32_t k = 0; k < ticks; k++) {
        struct sample *row = samples_tick(s, (k + 1) * dt);
        for (uint32_t f = 0; f < s->nflows; f++) {
            row[f].bytes = (uint64_t)(k + 1) * 1000 * (f + 1);
            row[f].tcp = s->kind[f] == SAMPLES_TCP && k % 3 != 1;
            row[f].cwnd = 10 + k;
            row[f].rtt_us = 100 + f;
            row[f].delivery_rate_bps = 1000000000ULL + k;
        }
    }
}

static void test_thinning(void **state)
{
    uint32_t nflows = 1024, room = SAMPLES_MAX_ROWS / 1024; /* 128 ticks */
    struct samples *s = samples_new(nflows, 100000000ULL, 3600ULL * 1000000000ULL);

    (void)state;
    assert_non_null(s);
    assert_int_equal(s->cap, room);
    fill(s, room, 0.1);
    assert_int_equal(s->n, room);
    assert_int_equal(s->thinned, 0);
    /* one more: the even ticks stay (0.1, 0.3, ...), the period doubles */
    samples_tick(s, (room + 1) * 0.1)[0].bytes = (room + 1) * 1000ULL;
    assert_int_equal(s->thinned, 1);
    assert_int_equal(s->period_ns, 200000000ULL);
    assert_int_equal(s->asked_ns, 100000000ULL);
    assert_int_equal(s->n, room / 2 + 1);
    assert_dbl_near(s->t_s[0], 0.1, 1e-12);
    assert_dbl_near(s->t_s[1], 0.3, 1e-12);
    assert_int_equal(samples_row(s, 1, 5)->bytes, 3 * 1000 * 6);
    assert_int_equal(samples_row(s, room / 2, 0)->bytes, (room + 1) * 1000ULL);
    /* throughput spans the kept ticks: 1000 bytes per flow-unit per 0.1 s */
    assert_dbl_near(samples_bps(s, 1, 0), 2000 * 8 / 0.2, 1e-3);
    assert_dbl_near(samples_bps(s, 0, 0), 1000 * 8 / 0.1, 1e-3);
    samples_free(s);

    /* a short run gets room for its own ticks only; nonsense asks get nothing */
    s = samples_new(4, 100000000ULL, 3000000000ULL);
    assert_non_null(s);
    assert_int_equal(s->cap, 34);
    samples_free(s);
    assert_null(samples_new(0, 100000000ULL, 1));
    assert_null(samples_new(SAMPLES_MAX_ROWS, 100000000ULL, 1));
    assert_null(samples_new(1, 0, 1));
}

static struct samples *example(void)
{
    struct samples *s = samples_new(3, 100000000ULL, 1000000000ULL);

    s->kind[0] = SAMPLES_TCP;
    s->kind[2] = SAMPLES_NONE; /* a flow this side did not run */
    fill(s, 5, 0.1);
    return s;
}

static void test_json_round_trip(void **state)
{
    struct samples *s = example(), *back = NULL, *none = NULL;
    cJSON *o = samples_json(s, NULL);
    const cJSON *f0 = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "flows"), 0);
    char err[256];

    (void)state;
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(o, "flows")), 2);
    assert_true(cJSON_IsNull(cJSON_GetArrayItem(cJSON_GetObjectItem(f0, "cwnd"), 1)));
    assert_int_equal(cJSON_GetArrayItem(cJSON_GetObjectItem(f0, "cwnd"), 2)->valueint, 12);
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "flows"), 1),
                                    "cwnd")); /* bytes only */
    assert_int_equal(samples_json_parse(o, 3, 5, &back, err, sizeof(err)), 0);
    assert_non_null(back);
    assert_int_equal(back->n, 5);
    assert_int_equal(back->kind[0], SAMPLES_TCP);
    assert_int_equal(back->kind[1], SAMPLES_BYTES);
    assert_int_equal(back->kind[2], SAMPLES_NONE);
    for (uint32_t k = 0; k < 5; k++) {
        assert_dbl_near(back->t_s[k], s->t_s[k], 1e-12);
        for (uint32_t f = 0; f < 2; f++) {
            const struct sample *a = samples_row(s, k, f), *b = samples_row(back, k, f);
            assert_int_equal(a->bytes, b->bytes);
            assert_int_equal(a->tcp && f == 0, b->tcp);
            if (b->tcp) {
                assert_int_equal(a->cwnd, b->cwnd);
                assert_int_equal(a->rtt_us, b->rtt_us);
                assert_int_equal(a->delivery_rate_bps, b->delivery_rate_bps);
            }
        }
    }
    /* more ticks than the test can have is refused */
    assert_int_equal(samples_json_parse(o, 3, 4, &none, err, sizeof(err)), -EPROTO);
    assert_null(none);
    assert_contains(err, "ticks");
    samples_free(back);
    cJSON_Delete(o);
    samples_free(s);
    /* absent or null: no samples, no error */
    assert_int_equal(samples_json_parse(NULL, 3, 5, &back, err, sizeof(err)), 0);
    assert_null(back);
}

/* Each mutation of a good object must be refused whole (nothing returned). */
static void expect_refused(const char *mutation, const char *json)
{
    cJSON *o = cJSON_Parse(json);
    struct samples *out = (struct samples *)1;
    char err[256] = "";

    if (!o)
        fail_msg("bad test JSON for %s", mutation);
    if (samples_json_parse(o, 2, 10, &out, err, sizeof(err)) != -EPROTO || out || !err[0])
        fail_msg("%s was not refused (err '%s')", mutation, err);
    cJSON_Delete(o);
}

#define HEAD "{\"sample_s\":0.1,\"asked_s\":0.1,\"thinned\":0,\"t_s\":[0.1,0.2],"

static void test_hostile(void **state)
{
    (void)state;
    expect_refused("not an object", "[1,2]");
    expect_refused("no period", "{\"t_s\":[],\"flows\":[]}");
    expect_refused("period under 10 ms",
                   "{\"sample_s\":0.001,\"asked_s\":0.1,\"thinned\":0,\"t_s\":[],\"flows\":[]}");
    expect_refused("fractional thinning",
                   "{\"sample_s\":0.1,\"asked_s\":0.1,\"thinned\":0.5,\"t_s\":[],\"flows\":[]}");
    expect_refused("times out of order", "{\"sample_s\":0.1,\"asked_s\":0.1,\"thinned\":0,"
                                         "\"t_s\":[0.2,0.1],\"flows\":[]}");
    expect_refused("time not a number", "{\"sample_s\":0.1,\"asked_s\":0.1,\"thinned\":0,"
                                        "\"t_s\":[\"x\"],\"flows\":[]}");
    expect_refused("flow id out of range", HEAD "\"flows\":[{\"id\":2,\"bytes\":[1,2]}]}");
    expect_refused("flow id fractional", HEAD "\"flows\":[{\"id\":0.5,\"bytes\":[1,2]}]}");
    expect_refused("flow twice",
                   HEAD "\"flows\":[{\"id\":0,\"bytes\":[1,2]},{\"id\":0,\"bytes\":[1,2]}]}");
    expect_refused("too many flows", HEAD "\"flows\":[{\"id\":0,\"bytes\":[1,2]},{\"id\":1,"
                                          "\"bytes\":[1,2]},{\"id\":1,\"bytes\":[1,2]}]}");
    expect_refused("short column", HEAD "\"flows\":[{\"id\":0,\"bytes\":[1]}]}");
    expect_refused("negative bytes", HEAD "\"flows\":[{\"id\":0,\"bytes\":[1,-2]}]}");
    expect_refused("null bytes", HEAD "\"flows\":[{\"id\":0,\"bytes\":[1,null]}]}");
    expect_refused("tcp flow without its columns",
                   HEAD "\"flows\":[{\"id\":0,\"kind\":\"tcp\",\"bytes\":[1,2]}]}");
    expect_refused("too many ticks", "{\"sample_s\":0.1,\"asked_s\":0.1,\"thinned\":0,\"t_s\":"
                                     "[1,2,3,4,5,6,7,8,9,10,11],\"flows\":[]}");
}

/* The server's side object carries its samples; the parser checks them like the rest. */
static void test_side_carries_samples(void **state)
{
    struct side_result s, back;
    cJSON *o;
    char err[256];

    (void)state;
    assert_int_equal(result_side_init(&s, 3, 4), 0);
    s.samples = example();
    o = result_json_side(&s);
    assert_non_null(cJSON_GetObjectItem(o, "samples"));
    assert_int_equal(result_json_side_parse(o, 3, 10, 10, &back, err, sizeof(err)), 0);
    assert_non_null(back.samples);
    assert_int_equal(back.samples->n, 5);
    assert_int_equal(samples_row(back.samples, 4, 1)->bytes, 5 * 1000 * 2);
    result_side_fini(&back);
    /* a server claiming more ticks than the test allows: no results at all */
    assert_int_equal(result_json_side_parse(o, 3, 10, 2, &back, err, sizeof(err)), -EPROTO);
    assert_contains(err, "samples");
    cJSON_Delete(o);
    result_side_fini(&s);
}

static void test_params_sample(void **state)
{
    struct params p;
    char err[256];

    (void)state;
    params_defaults(&p);
    assert_int_equal(params_default_sample(&p), p.interval_ns);
    p.sample_ns = 5000000ULL;
    assert_int_equal(params_validate(&p, err, sizeof(err)), -EINVAL);
    assert_contains(err, "at least 10ms");
    p.sample_ns = PARAMS_MIN_SAMPLE_NS;
    assert_int_equal(params_validate(&p, err, sizeof(err)), 0);
    /* 8192 flows each way every 100 ms read 163840 sockets a second: too many */
    p.flows = 8192;
    p.dir = PARAMS_DIR_BIDIR;
    p.sample_ns = 100000000ULL;
    assert_int_equal(params_validate(&p, err, sizeof(err)), -EINVAL);
    assert_contains(err, "use at least 164ms");
    /* without --sample the default is made long enough */
    p.interval_ns = 100000000ULL;
    assert_int_equal(params_default_sample(&p), 163840000ULL);
    p.interval_ns = 0;
    assert_int_equal(params_default_sample(&p), 0);
    /* on the wire */
    params_defaults(&p);
    p.sample_ns = 250000000ULL;
    {
        cJSON *j = params_to_json(&p);
        struct params q;
        assert_int_equal(params_from_json(j, &q, err, sizeof(err)), 0);
        assert_int_equal(q.sample_ns, 250000000ULL);
        cJSON_ReplaceItemInObject(j, "sample_s", cJSON_CreateNumber(0.001));
        assert_int_equal(params_from_json(j, &q, err, sizeof(err)), -EINVAL);
        cJSON_Delete(j);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thinning),      cmocka_unit_test(test_json_round_trip),
        cmocka_unit_test(test_hostile),       cmocka_unit_test(test_side_carries_samples),
        cmocka_unit_test(test_params_sample),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
