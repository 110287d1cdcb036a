/* ivjoin: the client's intervals joined with the server's streamed ones. An observer records
 * what it is shown, in order, and the retransmits each interval had at that moment. */
#include "test_util.h"

#include <stdlib.h>

#include "ivjoin.h"
#include "result_json.h"

#define MAX_SEEN 32

struct seen {
    uint32_t n;
    uint32_t index[MAX_SEEN];
    int64_t retrans[MAX_SEEN];
};

static void on_interval(void *ctx, const struct run_result *r, const struct side_result *s,
                        const struct interval *iv)
{
    struct seen *sn = ctx;

    (void)r;
    assert_true(sn->n < MAX_SEEN);
    sn->index[sn->n] = (uint32_t)(iv - s->intervals);
    sn->retrans[sn->n] = result_interval_retrans(iv);
    sn->n++;
}

struct fix {
    struct run_result r;
    struct side_result s;
    struct seen seen;
    struct run_observer obs;
    struct ivjoin *j;
};

#define SEC 1000000000ULL

/* -R -P 2 (or bidir), 1 s intervals; our intervals end at 1, 2, 3 ... s */
static struct fix *setup(enum params_dir dir, bool streams)
{
    struct fix *f = calloc(1, sizeof(*f));

    assert_non_null(f);
    params_defaults(&f->r.params);
    f->r.params.dir = dir;
    f->r.params.flows = 2;
    f->r.params.interval_ns = SEC;
    assert_int_equal(result_side_init(&f->s, params_total_flows(&f->r.params), 8), 0);
    f->obs = (struct run_observer){.on_interval = on_interval, .ctx = &f->seen};
    f->j = ivjoin_new(&f->obs, &f->r, streams);
    assert_non_null(f->j);
    return f;
}

static void teardown(struct fix *f)
{
    ivjoin_free(f->j);
    result_side_fini(&f->s);
    free(f);
}

/* Our interval k closes at now_ns with own retransmits. */
static struct interval *close_local(struct fix *f, uint32_t own, uint64_t now_ns)
{
    struct interval *iv = result_side_next_interval(&f->s);
    uint32_t k = (uint32_t)(iv - f->s.intervals);

    assert_non_null(iv);
    iv->start_s = k;
    iv->end_s = k + 1;
    iv->retrans = own;
    ivjoin_local(f->j, &f->s, iv, now_ns);
    return iv;
}

/* The server's interval k (ending at end_s) with flow_retrans for flows 0 and 1. */
static int remote(struct fix *f, uint32_t k, double end_s, uint32_t r0, uint32_t r1,
                  uint64_t now_ns)
{
    char text[256];
    cJSON *m;
    int rc;

    snprintf(text, sizeof(text),
             "{\"type\":\"interval\",\"index\":%u,\"start_s\":%g,\"end_s\":%g,"
             "\"omitted\":false,\"sent_bytes\":1000,\"received_bytes\":0,"
             "\"retransmits\":%u,\"flows\":[[0,%u],[1,%u]]}",
             k, end_s - 1, end_s, r0 + r1, r0, r1);
    m = cJSON_Parse(text);
    assert_non_null(m);
    rc = ivjoin_remote(f->j, m, now_ns);
    cJSON_Delete(m);
    return rc;
}

/* -R: ours waits for the server's, then shows its retransmits, per flow too */
static void test_held_until_server(void **state)
{
    struct fix *f = setup(PARAMS_DIR_REVERSE, true);
    struct interval *iv;

    (void)state;
    iv = close_local(f, 0, 1 * SEC);
    assert_int_equal(f->seen.n, 0); /* waits */
    assert_int_equal(remote(f, 0, 1.002, 5, 7, 1 * SEC + 3000000), 0);
    assert_int_equal(f->seen.n, 1);
    assert_int_equal(f->seen.index[0], 0);
    assert_int_equal(f->seen.retrans[0], 12);
    assert_int_equal(iv->peer, INTERVAL_PEER_CELLS);
    assert_int_equal(result_interval_flow_retrans(&f->r.params, iv, 0), 5);
    assert_int_equal(result_interval_flow_retrans(&f->r.params, iv, 1), 7);
    teardown(f);
}

/* a server interval for another period (a late sample shifted the numbering) is not added */
static void test_other_period_not_added(void **state)
{
    struct fix *f = setup(PARAMS_DIR_REVERSE, true);
    struct interval *iv;

    (void)state;
    iv = close_local(f, 0, 1 * SEC);
    assert_int_equal(remote(f, 0, 1.9, 5, 7, 1 * SEC + 1000), 0);
    assert_int_equal(iv->peer, INTERVAL_PEER_PENDING);
    assert_int_equal(f->seen.n, 0);
    teardown(f);
}

/* past the hold time, ours is shown with the server's part unknown; it is filled in when the
 * server's comes, and what is still unknown at the end from the final results */
static void test_hold_expires_then_filled(void **state)
{
    struct fix *f = setup(PARAMS_DIR_REVERSE, true);
    struct side_result rem;
    struct interval *iv0, *iv1, *iv2;

    (void)state;
    iv0 = close_local(f, 0, 1 * SEC);
    iv1 = close_local(f, 0, 2 * SEC);
    assert_int_equal(f->seen.n, 0);
    iv2 = close_local(f, 0, 3 * SEC); /* 2 s after iv0: past 1 s + 1 s */
    assert_int_equal(f->seen.n, 1);
    assert_int_equal(f->seen.retrans[0], -1);
    assert_int_equal(remote(f, 0, 1.0, 1, 1, 3 * SEC + 1), 0); /* late: fills it in */
    assert_int_equal(iv0->retrans, 2);
    assert_int_equal(f->seen.n, 1); /* shown once */
    assert_int_equal(remote(f, 1, 2.0, 0, 3, 3 * SEC + 2), 0);
    assert_int_equal(f->seen.n, 2);
    assert_int_equal(f->seen.retrans[1], 3);
    /* iv2 never streamed: the final results give its total (no per-flow counts) */
    assert_int_equal(result_side_init(&rem, 2, 4), 0);
    rem.valid = true;
    for (int k = 0; k < 3; k++) {
        struct interval *r = result_side_next_interval(&rem);
        r->start_s = k;
        r->end_s = k + 1.001;
        r->retrans = 10 + (uint32_t)k;
    }
    ivjoin_finish(f->j, &rem);
    assert_int_equal(f->seen.n, 3);
    assert_int_equal(f->seen.index[2], 2);
    assert_int_equal(f->seen.retrans[2], 12);
    assert_int_equal(iv2->peer, INTERVAL_PEER_TOTAL);
    assert_int_equal(result_interval_flow_retrans(&f->r.params, iv2, 0), -1);
    assert_int_equal(iv1->retrans, 3); /* already known: not added twice */
    result_side_fini(&rem);
    teardown(f);
}

/* the server's interval may come before ours closes; bidir adds it to our own */
static void test_early_and_bidir(void **state)
{
    struct fix *f = setup(PARAMS_DIR_BIDIR, true);
    struct interval *iv;
    char text[256];
    cJSON *m;

    (void)state;
    /* bidir -P 2: flows 2 and 3 are the server's */
    snprintf(text, sizeof(text),
             "{\"index\":0,\"start_s\":0,\"end_s\":1,\"retransmits\":4,\"flows\":[[3,4]]}");
    m = cJSON_Parse(text);
    assert_int_equal(ivjoin_remote(f->j, m, 1), 0);
    cJSON_Delete(m);
    iv = close_local(f, 6, 1 * SEC);
    assert_int_equal(f->seen.n, 1);
    assert_int_equal(f->seen.retrans[0], 10);
    assert_int_equal(result_interval_flow_retrans(&f->r.params, iv, 3), 4);
    assert_int_equal(result_interval_flow_retrans(&f->r.params, iv, 2), 0);
    teardown(f);
}

/* a forward test needs nothing from the server: shown at once, complete; an iperf3 server
 * streams nothing: shown at once, unknown */
static void test_no_wait(void **state)
{
    struct fix *f = setup(PARAMS_DIR_FORWARD, true);

    (void)state;
    close_local(f, 3, 1 * SEC);
    assert_int_equal(f->seen.n, 1);
    assert_int_equal(f->seen.retrans[0], 3);
    assert_int_not_equal(remote(f, 0, 1, 1, 1, 2), 0); /* nothing to join: refused */
    teardown(f);
    f = setup(PARAMS_DIR_REVERSE, false);
    close_local(f, 0, 1 * SEC);
    assert_int_equal(f->seen.n, 1);
    assert_int_equal(f->seen.retrans[0], -1);
    teardown(f);
}

/* hostile messages change nothing */
static void test_malformed(void **state)
{
    static const char *const bad[] = {
        "{}",
        "{\"index\":-1,\"end_s\":1}",
        "{\"index\":0.5,\"end_s\":1}",
        "{\"index\":0,\"end_s\":1,\"retransmits\":-3}",
        "{\"index\":0,\"end_s\":1,\"retransmits\":\"x\"}",
        "{\"index\":0,\"start_s\":2,\"end_s\":1}",
        "{\"index\":0,\"end_s\":1,\"flows\":[[0,1],[0,2]]}",
        "{\"index\":0,\"end_s\":1,\"flows\":[[9,1]]}",
        "{\"index\":0,\"end_s\":1,\"flows\":[[0]]}",
        "{\"index\":0,\"end_s\":1,\"flows\":{}}",
        "{\"index\":0,\"end_s\":1,\"flows\":[[0,1e30]]}",
        "{\"index\":1e12,\"end_s\":1}",
        "[]",
    };
    struct fix *f = setup(PARAMS_DIR_REVERSE, true);
    struct interval *iv = close_local(f, 0, 1 * SEC);

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cJSON *m = cJSON_Parse(bad[i]);
        assert_non_null(m);
        if (ivjoin_remote(f->j, m, 2) == 0)
            fail_msg("accepted %s", bad[i]);
        cJSON_Delete(m);
    }
    assert_int_equal(iv->peer, INTERVAL_PEER_PENDING);
    assert_int_equal(iv->retrans, 0);
    teardown(f);
}

/* the server's encoding reads back */
static void test_wire_roundtrip(void **state)
{
    struct side_result s;
    struct interval *iv;
    struct peer_interval pi;
    cJSON *o = cJSON_CreateObject();

    (void)state;
    assert_int_equal(result_side_init(&s, 3, 2), 0);
    result_side_next_interval(&s);
    iv = result_side_next_interval(&s);
    iv->start_s = 1;
    iv->end_s = 2;
    iv->sent_bytes = 123456789012ULL;
    iv->retrans = 9;
    iv->flows[2].retrans = 9;
    result_json_add_peer_interval(o, &s, iv);
    assert_int_equal(result_json_peer_interval_parse(o, 3, 100, &pi), 0);
    assert_int_equal(pi.index, 1);
    assert_true(pi.end_s == 2);
    assert_true(pi.sent_bytes == 123456789012ULL);
    assert_int_equal(pi.retrans, 9);
    assert_true(pi.has_flows);
    assert_int_equal(pi.npairs, 1);
    assert_int_equal(pi.ids[0], 2);
    assert_int_equal(pi.flow_retrans[0], 9);
    result_peer_interval_fini(&pi);
    cJSON_Delete(o);
    result_side_fini(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_held_until_server),
        cmocka_unit_test(test_other_period_not_added),
        cmocka_unit_test(test_hold_expires_then_filled),
        cmocka_unit_test(test_early_and_bidir),
        cmocka_unit_test(test_no_wait),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_wire_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
