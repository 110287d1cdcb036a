/* Unit tests for result_json_mptcp.c: a --mptcp side's flows carry their MPTCP connection and
 * subflows on the wire (round trip through text, a plain TCP side without them), and every
 * value out of range refuses the side. */
#include "test_util.h"

#include "mptcpinfo.h"
#include "result_json.h"
#include "result_json_mptcp.h"
#include "test_result_json_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --mptcp: a side's flows carry their MPTCP connection and subflows both ways; anything out of
 * range refuses the side */
static void mptcp_fill(struct side_result *in)
{
    struct mptcpinfo *m;

    assert_int_equal(result_side_init(in, 2, 0), 0);
    in->valid = true;
    in->flows[0].sender = true;
    in->flows[0].bytes = 75000000;
    in->mptcp = calloc(in->nflows, sizeof(*in->mptcp));
    in->nmptcp = in->nflows;
    assert_non_null(in->mptcp);
    m = &in->mptcp[0];
    m->valid = true;
    m->subflows = m->nsub = 2;
    m->bytes_sent = 76000000;
    m->bytes_acked = 75999000;
    m->retransmits = 4;
    assert_int_equal(mptcpinfo_addr_parse("10.232.1.1:40000", &m->sub[0].local), 0);
    assert_int_equal(mptcpinfo_addr_parse("10.232.1.2:5301", &m->sub[0].remote), 0);
    assert_int_equal(mptcpinfo_addr_parse("[fd00::1]:40001", &m->sub[1].local), 0);
    assert_int_equal(mptcpinfo_addr_parse("[fd00::2]:5301", &m->sub[1].remote), 0);
    m->sub[0].bytes_sent = 25000000;
    m->sub[1].bytes_acked = 50000000;
    m->sub[1].bytes_received = 12;
    m->sub[1].retransmits = 3;
    m->sub[1].rtt_us = 2500;
    in->mptcp[1].valid = true;
    in->mptcp[1].fallback = true;
}

static int mptcp_hostile(const char *key, const char *value)
{
    struct side_result in, out;
    cJSON *doc, *m, *v = cJSON_Parse(value);
    char err[256] = "";
    int rc;

    assert_non_null(v);
    mptcp_fill(&in);
    doc = result_json_side(&in);
    result_side_fini(&in);
    m = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "flows"), 0), "mptcp");
    if (!strncmp(key, "sub.", 4)) {
        m = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(m, "subflows"), 0);
        key += 4;
    }
    assert_non_null(m);
    cJSON_DeleteItemFromObjectCaseSensitive(m, key);
    cJSON_AddItemToObject(m, key, v);
    memset(&out, 0, sizeof(out));
    rc = result_json_side_parse(doc, 2, 1000, 1000, &out, err, sizeof(err));
    cJSON_Delete(doc);
    if (rc)
        assert_null(out.mptcp); /* refused: nothing left allocated */
    result_side_fini(&out);
    return rc;
}

static void test_side_mptcp(void **state)
{
    struct side_result in, out;
    char err[256] = "", nine[512];
    (void)state;

    mptcp_fill(&in);
    assert_int_equal(side_via_text(&in, 2, &out, err, sizeof(err)), 0);
    assert_non_null(out.mptcp);
    assert_memory_equal(&out.mptcp[0], &in.mptcp[0], sizeof(in.mptcp[0]));
    assert_true(out.mptcp[1].valid);
    assert_true(out.mptcp[1].fallback);
    assert_int_equal(out.mptcp[1].nsub, 0);
    result_side_fini(&out);
    free(in.mptcp);
    in.mptcp = NULL; /* a plain TCP side: no member, nothing allocated */
    in.nmptcp = 0;
    assert_int_equal(side_via_text(&in, 2, &out, err, sizeof(err)), 0);
    assert_null(out.mptcp);
    result_side_fini(&out);
    result_side_fini(&in);
    assert_int_equal(mptcp_hostile("bytes_sent", "-1"), -EPROTO);
    assert_int_equal(mptcp_hostile("bytes_acked", "1e300"), -EPROTO);
    assert_int_equal(mptcp_hostile("bytes_received", "1.5"), -EPROTO);
    assert_int_equal(mptcp_hostile("subflow_count", "\"2\""), -EPROTO);
    assert_int_equal(mptcp_hostile("fallback", "1"), -EPROTO);
    assert_int_equal(mptcp_hostile("subflows", "{}"), -EPROTO);
    assert_int_equal(mptcp_hostile("subflows", "[1]"), -EPROTO);
    snprintf(nine, sizeof(nine), "[{}%s]", ",{},{},{},{},{},{},{},{}");
    assert_int_equal(mptcp_hostile("subflows", nine), -EPROTO);
    assert_int_equal(mptcp_hostile("sub.local", "\"nohost:1\""), -EPROTO);
    assert_int_equal(mptcp_hostile("sub.local", "\"10.0.0.1:65536\""), -EPROTO);
    assert_int_equal(mptcp_hostile("sub.remote", "7"), -EPROTO);
    assert_int_equal(mptcp_hostile("sub.rtt_us", "4294967296"), -EPROTO);
    assert_int_equal(mptcp_hostile("sub.retransmits", "-3"), -EPROTO);
    /* within range: parses */
    assert_int_equal(mptcp_hostile("sub.rtt_us", "4294967295"), 0);
}

/* each interval's subflow counts: from the side's cells, only for one of its own intervals */
static void test_interval_subflows(void **state)
{
    struct side_result s;
    struct interval copy;
    struct interval_mptcp *c;
    cJSON *f = cJSON_CreateObject(), *arr, *so;
    (void)state;

    assert_int_equal(result_side_init(&s, 2, 3), 0);
    s.nintervals = 3;
    s.mptcp_cells = calloc(2 * 3, sizeof(*s.mptcp_cells));
    assert_non_null(s.mptcp_cells);
    c = &s.mptcp_cells[1 * 2 + 1]; /* interval 1, flow 1 */
    c->n = 2;
    assert_int_equal(mptcpinfo_addr_parse("10.232.1.1:40000", &c->sub[0].local), 0);
    assert_int_equal(mptcpinfo_addr_parse("10.232.1.2:5301", &c->sub[0].remote), 0);
    assert_int_equal(mptcpinfo_addr_parse("10.232.2.1:40001", &c->sub[1].local), 0);
    c->sub[0].bytes_acked = 5875000;
    c->sub[1].bytes_acked = 11750000;
    c->sub[1].bytes_received = 3;
    result_json_mptcp_add_interval_flow(f, &s, &s.intervals[1], 1);
    arr = cJSON_GetObjectItemCaseSensitive(f, "mptcp_subflows");
    assert_int_equal(cJSON_GetArraySize(arr), 2);
    so = cJSON_GetArrayItem(arr, 1);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(so, "local")->valuestring,
                        "10.232.2.1:40001");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(so, "remote")->valuestring, "?");
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(so, "bytes_acked")->valuedouble, 11750000);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(so, "bytes_received")->valuedouble, 3);
    cJSON_Delete(f);
    /* flow 0 of interval 1 had none: an empty list; a copy of an interval, a flow out of
     * range: nothing */
    f = cJSON_CreateObject();
    result_json_mptcp_add_interval_flow(f, &s, &s.intervals[1], 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(f, "mptcp_subflows")), 0);
    cJSON_Delete(f);
    f = cJSON_CreateObject();
    copy = s.intervals[1];
    result_json_mptcp_add_interval_flow(f, &s, &copy, 1);
    result_json_mptcp_add_interval_flow(f, &s, &s.intervals[1], 2);
    assert_null(cJSON_GetObjectItemCaseSensitive(f, "mptcp_subflows"));
    cJSON_Delete(f);
    result_side_fini(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_side_mptcp),
        cmocka_unit_test(test_interval_subflows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
