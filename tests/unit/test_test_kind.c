/* Unit tests for test_kind.c: every kind resolves back to itself from the parameters it
 * sets, the commands, the flags that must agree, the metrics slots, the server's flow count,
 * and each kind's flows on either side (flows/flow_kinds.c's table, indexed by the kind). */
#include "test_util.h"

#include <stdio.h>

#include "flow_kinds.h"
#include "params.h"
#include "test_kind.h"

static void test_round_trip(void **state)
{
    const struct test_kind *k;
    unsigned n = 0;

    (void)state;
    for (unsigned i = 0; (k = test_kind_at(i)); i++, n++) {
        struct params p;
        params_defaults(&p);
        test_kind_apply(k, &p);
        assert_ptr_equal(test_kind_of(&p), k);
        assert_int_equal(k->id, i);
        assert_non_null(k->name);
        assert_non_null(k->label);
        assert_non_null(k->label_paren);
        assert_true(k->slot < TEST_KIND_SLOTS);
        assert_true(k->path < TEST_KIND_NPATHS);
        /* a kind measures transactions or a byte stream, never both */
        assert_true(!(k->flags & TEST_KIND_TXN) != !(k->flags & TEST_KIND_BULK));
        if (k->flags & TEST_KIND_DATAGRAMS)
            assert_true(k->flags & TEST_KIND_UDP);
        if (k->flags & (TEST_KIND_DRAINS | TEST_KIND_MPTCP | TEST_KIND_CONN_PER_TXN))
            assert_false(k->flags & TEST_KIND_UDP);
        assert_int_equal(k->udp, !!(k->flags & TEST_KIND_UDP));
        assert_int_equal(k->mptcp, !!(k->flags & TEST_KIND_MPTCP));
        assert_int_equal(params_is_transactional(&p), !!(k->flags & TEST_KIND_TXN));
        /* its metrics slot names its wire test and protocol */
        const char *test, *proto;
        assert_true(test_kind_slot(k->slot, &test, &proto));
        assert_string_equal(test, params_test_name(k->test));
        assert_string_equal(proto, test_kind_protocol(k));
        assert_string_equal(proto, k->udp ? "udp" : k->mptcp ? "mptcp" : "tcp");
        /* both sides have flows */
        assert_non_null(flow_kind_for(&p, true));
        assert_non_null(flow_kind_for(&p, false));
    }
    assert_int_equal(n, TEST_KIND_COUNT);
    assert_null(test_kind_at(TEST_KIND_COUNT));
}

static void test_commands(void **state)
{
    static const char *const names[] = {"stream", "rr", "crr", "mptcp"};
    char err[256];

    (void)state;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const struct test_kind *k = test_kind_command(names[i]);
        struct params p;
        assert_non_null(k);
        assert_string_equal(k->command, names[i]);
        assert_non_null(k->summary);
        params_defaults(&p);
        test_kind_apply(k, &p);
        assert_int_equal(params_validate(&p, err, sizeof(err)), 0);
    }
    char list[64];
    test_kind_commands(list, sizeof(list));
    assert_string_equal(list, "stream, rr, crr or mptcp");
    test_kind_commands(list, 10); /* cut short, still a string */
    assert_string_equal(list, "stream, r");
    assert_null(test_kind_command("udp"));
    assert_null(test_kind_command("stream-udp")); /* a variant: -u, not a command */
    assert_ptr_equal(test_kind_command("mptcp"), test_kind_at(TEST_KIND_STREAM_MPTCP));
    /* 'netrig mptcp' refuses what MPTCP sockets cannot do */
    assert_false(test_kind_command("mptcp")->opts & TEST_KIND_OPT_ZEROCOPY);
    assert_false(test_kind_command("mptcp")->opts & TEST_KIND_OPT_UDP);
    assert_false(test_kind_command("mptcp")->opts & TEST_KIND_OPT_MPTCP); /* it is itself */
    assert_true(test_kind_command("stream")->opts & TEST_KIND_OPT_MPTCP);
}

static void test_variants(void **state)
{
    struct params p;

    (void)state;
    params_defaults(&p);
    p.udp = true;
    assert_ptr_equal(test_kind_of(&p), test_kind_at(TEST_KIND_STREAM_UDP));
    p.udp = false;
    p.mptcp = true;
    assert_ptr_equal(test_kind_of(&p), test_kind_at(TEST_KIND_STREAM_MPTCP));
    p.test = PARAMS_TEST_RR;
    assert_ptr_equal(test_kind_of(&p), test_kind_at(TEST_KIND_RR_MPTCP));
    p.mptcp = false;
    p.test = PARAMS_TEST_CRR;
    p.udp = true; /* no such kind (params_validate refuses it): its command's */
    assert_ptr_equal(test_kind_of(&p), test_kind_at(TEST_KIND_CRR));
    const char *test, *proto;
    assert_false(test_kind_slot(5, &test, &proto)); /* crr over UDP */
    assert_false(test_kind_slot(TEST_KIND_SLOTS, &test, &proto));
}

static void test_server_flows(void **state)
{
    struct params p;

    (void)state;
    params_defaults(&p);
    p.flows = 4;
    p.threads = 2;
    p.dir = PARAMS_DIR_BIDIR;
    assert_int_equal(test_kind_server_flows(&p), 8);
    p.dir = PARAMS_DIR_FORWARD;
    p.test = PARAMS_TEST_CRR;
    assert_int_equal(test_kind_server_flows(&p), 2); /* a listener per thread */
    p.server_threads = 3;
    assert_int_equal(test_kind_server_flows(&p), 3);
}

/* a stored run names its kind by its wire test */
static void test_named(void **state)
{
    (void)state;
    assert_true(test_kind_named_is("stream", TEST_KIND_BULK));
    assert_false(test_kind_named_is("stream", TEST_KIND_DATAGRAMS)); /* the command's own */
    assert_true(test_kind_named_is("rr", TEST_KIND_TXN));
    assert_true(test_kind_named_is("crr", TEST_KIND_TXN | TEST_KIND_CONN_PER_TXN));
    assert_false(test_kind_named_is("rr", TEST_KIND_CONN_PER_TXN));
    assert_false(test_kind_named_is("load", 0));
    assert_false(test_kind_named_is("mptcp", 0)); /* a command, not a wire test */
    assert_false(test_kind_named_is(NULL, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip), cmocka_unit_test(test_commands),
        cmocka_unit_test(test_variants),   cmocka_unit_test(test_server_flows),
        cmocka_unit_test(test_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
