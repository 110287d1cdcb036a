/* Unit tests for what travels with a side's results and back from a third-party run: the
 * server's host snapshot in its side object (round trip, declined, hostile settings that are
 * refused without voiding the results, the size bound on both ends, random damage that must
 * never crash the reader) and a run's -J document read back for the reports (result_doc.c:
 * round trip, hostile numbers, strings and flow counts). */
#include "test_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostsnap.h"
#include "result_doc.h"
#include "result_json.h"

/* A one-flow server side, as a daemon sends it. */
static void make_side(struct side_result *s)
{
    assert_int_equal(result_side_init(s, 1, 1), 0);
    s->valid = true;
    snprintf(s->version, sizeof(s->version), "0.1.0");
    s->seconds = 1.5;
    s->threads = 1;
    s->flows[0].bytes = 4242;
    s->flows[0].seconds = 1.5;
}

static struct hostsnap *make_snap(void)
{
    struct hostsnap *hs = hostsnap_new();

    assert_non_null(hs);
    assert_int_equal(hostsnap_set(hs, "host.snapshot", "2"), 0);
    assert_int_equal(hostsnap_set(hs, "net.ipv4.tcp_rmem", "4096 131072 6291456"), 0);
    assert_int_equal(hostsnap_set(hs, "iface.eth0.rx-10.rps_cpus", "ff"), 0);
    assert_int_equal(hostsnap_set(hs, "iface.eth0.rx-2.rps_cpus", "0"), 0);
    return hs;
}

/* s through its wire text and back (1 flow). */
static int via_text(const struct side_result *s, struct side_result *out, char *err, size_t errlen)
{
    cJSON *j = result_json_side(s);
    char *text = cJSON_PrintUnformatted(j);
    cJSON *back = cJSON_Parse(text);
    int rc = result_json_side_parse(back, 1, 10, 10, out, err, errlen);

    free(text);
    cJSON_Delete(j);
    cJSON_Delete(back);
    return rc;
}

static void test_side_carries_snapshot(void **state)
{
    struct side_result in, out;
    char err[256];

    (void)state;
    make_side(&in);
    in.host = make_snap();
    assert_int_equal(via_text(&in, &out, err, sizeof(err)), 0);
    assert_true(out.valid);
    assert_non_null(out.host);
    assert_int_equal(out.host->n, in.host->n);
    for (uint32_t i = 0; i < in.host->n; i++) {
        assert_string_equal(out.host->e[i].key, in.host->e[i].key); /* natural order kept */
        assert_string_equal(out.host->e[i].value, in.host->e[i].value);
    }
    assert_false(out.host_declined);
    assert_string_equal(out.host_note, "");
    assert_int_equal(out.flows[0].bytes, 4242);
    result_side_fini(&out);

    /* declined: no settings, and the note says so, whatever else was there */
    in.host_declined = true;
    assert_int_equal(via_text(&in, &out, err, sizeof(err)), 0);
    assert_null(out.host);
    assert_true(out.host_declined);
    assert_contains(out.host_note, "the server declined to send its settings");
    result_side_fini(&out);

    /* an older daemon: neither key, no note (the history words it) */
    hostsnap_free(in.host);
    in.host = NULL;
    in.host_declined = false;
    assert_int_equal(via_text(&in, &out, err, sizeof(err)), 0);
    assert_null(out.host);
    assert_false(out.host_declined);
    assert_string_equal(out.host_note, "");
    result_side_fini(&out);
    result_side_fini(&in);
}

/* The server's own CPU, its cgroup's and the cost basis travel to the client (issue 24.4); an
 * older daemon sends none of them; hostile values are refused. */
static void test_side_carries_own_cpu(void **state)
{
    struct side_result in, out;
    cJSON *doc, *cpu;
    char err[256];

    (void)state;
    make_side(&in);
    in.cpu.valid = 1;
    in.cpu.ncpu = 2;
    in.cpu.own_valid = true;
    in.cpu.seconds = 2.0;
    in.cpu.own_user_s = 0.125, in.cpu.own_system_s = 0.5;
    in.cpu.own_basis = true;
    in.cpu.other_cores = 1.25;
    in.cpu.cg_version = 1;
    in.cpu.cg_has_usage = in.cpu.cg_has_throttle = true;
    in.cpu.cg_usage_s = 0.625, in.cpu.cg_quota_cores = 0.3;
    in.cpu.cg_periods = 20, in.cpu.cg_throttled = 19, in.cpu.cg_throttled_s = 1.25;
    assert_int_equal(via_text(&in, &out, err, sizeof(err)), 0);
    assert_true(out.cpu.own_valid && out.cpu.own_basis);
    assert_dbl_near(out.cpu.own_user_s, 0.125, 1e-12);
    assert_dbl_near(out.cpu.own_system_s, 0.5, 1e-12);
    assert_dbl_near(out.cpu.seconds, 2.0, 1e-12);
    assert_dbl_near(out.cpu.other_cores, 1.25, 1e-12);
    assert_int_equal(out.cpu.cg_version, 1);
    assert_true(out.cpu.cg_has_usage && out.cpu.cg_has_throttle);
    assert_dbl_near(out.cpu.cg_usage_s, 0.625, 1e-12);
    assert_dbl_near(out.cpu.cg_quota_cores, 0.3, 1e-12);
    assert_dbl_near(out.cpu.cg_throttled, 19, 1e-12);
    result_side_fini(&out);

    /* an older daemon: no "own" in its cpu object */
    doc = result_json_side(&in);
    cpu = cJSON_GetObjectItemCaseSensitive(doc, "cpu");
    assert_non_null(cpu);
    cJSON_DeleteItemFromObjectCaseSensitive(cpu, "own");
    cJSON_DeleteItemFromObjectCaseSensitive(cpu, "cgroup");
    cJSON_DeleteItemFromObjectCaseSensitive(cpu, "cost_basis");
    assert_int_equal(result_json_side_parse(doc, 1, 10, 10, &out, err, sizeof(err)), 0);
    assert_false(out.cpu.own_valid);
    assert_int_equal(out.cpu.cg_version, 0);
    result_side_fini(&out);
    /* a hostile figure is refused, never taken */
    cJSON_AddItemToObject(cpu, "own", cJSON_Parse("{\"user_s\": -5, \"seconds\": 1}"));
    assert_int_not_equal(result_json_side_parse(doc, 1, 10, 10, &out, err, sizeof(err)), 0);
    cJSON_Delete(doc);
    result_side_fini(&in);
}

/* The side of make_side with its "host" replaced by value (JSON text): the results stand,
 * the settings are refused with a printable note containing note_part. */
static void expect_refused(const char *value, const char *note_part)
{
    struct side_result in, out;
    cJSON *doc, *v;
    char err[256];

    make_side(&in);
    doc = result_json_side(&in);
    result_side_fini(&in);
    v = cJSON_Parse(value);
    assert_non_null(v);
    cJSON_AddItemToObject(doc, "host", v);
    if (result_json_side_parse(doc, 1, 10, 10, &out, err, sizeof(err)))
        fail_msg("host %s: the results were refused: %s", value, err);
    cJSON_Delete(doc);
    assert_true(out.valid);
    assert_int_equal(out.flows[0].bytes, 4242);
    assert_null(out.host);
    assert_contains(out.host_note, "the server sent settings that were refused");
    assert_contains(out.host_note, note_part);
    for (const char *c = out.host_note; *c; c++)
        assert_true(*c >= ' ' && *c <= '~');
    result_side_fini(&out);
}

static void test_side_hostile_snapshot(void **state)
{
    char *big, *p;
    size_t cap = 40u * (HOSTSNAP_MAX + 2);

    (void)state;
    expect_refused("[\"net.ipv4.tcp_rmem\"]", "not a JSON object");
    expect_refused("\"everything\"", "not a JSON object");
    expect_refused("{\"net.ipv4.tcp_rmem\": 4096}", "is not a string");
    expect_refused("{\"net.ipv4.tcp_rmem\": null}", "is not a string");
    expect_refused("{\"a\": \"1\", \"a\": \"2\"}", "given twice");
    expect_refused("{\"bad key\": \"1\"}", "invalid setting name");
    expect_refused("{\"\": \"1\"}", "invalid setting name");
    /* a key with an escape sequence: refused, and the note keeps no control byte */
    expect_refused("{\"\\u001b[2Jk\": \"1\"}", "invalid setting name '?[2Jk'");
    /* a value at the limit is refused, one under it kept */
    big = malloc(cap);
    assert_non_null(big);
    p = big + snprintf(big, cap, "{\"k\": \"");
    memset(p, 'v', HOSTSNAP_VAL_MAX);
    snprintf(p + HOSTSNAP_VAL_MAX, 8, "\"}");
    expect_refused(big, "longer than");
    /* more settings than a snapshot holds */
    p = big + snprintf(big, cap, "{");
    for (uint32_t i = 0; i <= HOSTSNAP_MAX; i++)
        p += snprintf(p, cap - (size_t)(p - big), "%s\"k%u\":\"1\"", i ? "," : "", i);
    snprintf(p, cap - (size_t)(p - big), "}");
    expect_refused(big, "more than");
    free(big);
}

/* hostsnap_json_size is the length of the text that travels, escapes included. */
static void test_snapshot_wire_size(void **state)
{
    struct hostsnap *hs = hostsnap_new();
    cJSON *j;
    char *text;

    (void)state;
    assert_non_null(hs);
    j = hostsnap_to_json(hs);
    text = cJSON_PrintUnformatted(j);
    assert_int_equal(hostsnap_json_size(hs), strlen(text)); /* {} */
    free(text);
    cJSON_Delete(j);
    assert_int_equal(hostsnap_set(hs, "a\"b\\c", "say \"hi\" \\ there"), 0);
    assert_int_equal(hostsnap_set(hs, "empty", ""), 0);
    assert_int_equal(hostsnap_set(hs, "ctl", "x\x01y\tz\x7f\xc3\xa9"), 0); /* normalized */
    assert_int_equal(hostsnap_set(hs, "net.ipv4.tcp_rmem", "4096 131072 6291456"), 0);
    j = hostsnap_to_json(hs);
    text = cJSON_PrintUnformatted(j);
    assert_int_equal(hostsnap_json_size(hs), strlen(text));
    free(text);
    cJSON_Delete(j);
    hostsnap_free(hs);
}

/* n settings "kNNNNN" of vlen bytes each. */
static struct hostsnap *big_snap(uint32_t n, size_t vlen)
{
    struct hostsnap *hs = hostsnap_new();
    char key[16], *v = malloc(vlen + 1);

    assert_non_null(hs);
    assert_non_null(v);
    memset(v, 'v', vlen);
    v[vlen] = '\0';
    for (uint32_t i = 0; i < n; i++) { /* in key order: appended, never moved */
        snprintf(key, sizeof(key), "k%05u", i);
        assert_int_equal(hostsnap_set(hs, key, v), 0);
    }
    free(v);
    return hs;
}

/* A daemon never lets its settings push its results past what a client reads: over the
 * bound it says it left them out (and how large they were), under it they travel whole. */
static void test_side_snapshot_size_bound(void **state)
{
    struct side_result in, out;
    cJSON *j;
    char err[256], *text;

    (void)state;
    make_side(&in);
    in.host = big_snap(HOSTSNAP_MAX, 300);
    assert_true(hostsnap_json_size(in.host) > RESULT_JSON_HOST_WIRE_MAX);
    j = result_json_side(&in);
    assert_null(cJSON_GetObjectItemCaseSensitive(j, "host"));
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j, "host_omitted")));
    text = cJSON_PrintUnformatted(j);
    assert_true(strlen(text) < 4096); /* the results alone */
    free(text);
    cJSON_Delete(j);
    assert_int_equal(via_text(&in, &out, err, sizeof(err)), 0);
    assert_true(out.valid);
    assert_int_equal(out.flows[0].bytes, 4242);
    assert_null(out.host);
    assert_contains(out.host_note, "the server left its settings out: 16384 settings take");
    assert_contains(out.host_note, "over the 4194304 a result carries");
    result_side_fini(&out);
    hostsnap_free(in.host);

    /* the largest that fits: carried whole, and the side's text stays under the bound + 4 KiB */
    in.host = big_snap(HOSTSNAP_MAX, 200);
    assert_true(hostsnap_json_size(in.host) <= RESULT_JSON_HOST_WIRE_MAX);
    j = result_json_side(&in);
    text = cJSON_PrintUnformatted(j);
    assert_true(strlen(text) < RESULT_JSON_HOST_WIRE_MAX + 4096);
    free(text);
    cJSON_Delete(j);
    assert_int_equal(via_text(&in, &out, err, sizeof(err)), 0);
    assert_non_null(out.host);
    assert_int_equal(out.host->n, HOSTSNAP_MAX);
    assert_string_equal(out.host_note, "");
    result_side_fini(&out);
    result_side_fini(&in);
}

/* A peer that ignores the bound, or words its omission with control bytes. */
static void test_side_snapshot_oversized_hostile(void **state)
{
    struct side_result in, out;
    struct hostsnap *big = big_snap(HOSTSNAP_MAX, 300);
    cJSON *doc;
    char err[256];

    (void)state;
    make_side(&in);
    doc = result_json_side(&in);
    cJSON_AddItemToObject(doc, "host", hostsnap_to_json(big)); /* past the bound, sent anyway */
    hostsnap_free(big);
    assert_int_equal(result_json_side_parse(doc, 1, 10, 10, &out, err, sizeof(err)), 0);
    cJSON_Delete(doc);
    assert_true(out.valid);
    assert_int_equal(out.flows[0].bytes, 4242);
    assert_null(out.host);
    assert_contains(out.host_note, "the server sent settings that were refused");
    assert_contains(out.host_note, "over the 4194304 a result carries");
    result_side_fini(&out);

    doc = result_json_side(&in);
    cJSON_AddStringToObject(doc, "host_omitted", "\x1b]0;pwned\x07 too big");
    assert_int_equal(result_json_side_parse(doc, 1, 10, 10, &out, err, sizeof(err)), 0);
    assert_null(out.host);
    assert_string_equal(out.host_note, "the server left its settings out: ?]0;pwned? too big");
    result_side_fini(&out);
    /* an omission that is not a string says nothing; declined wins over settings sent too */
    cJSON_ReplaceItemInObjectCaseSensitive(doc, "host_omitted", cJSON_CreateNumber(1));
    assert_int_equal(result_json_side_parse(doc, 1, 10, 10, &out, err, sizeof(err)), 0);
    assert_null(out.host);
    assert_string_equal(out.host_note, "");
    result_side_fini(&out);
    cJSON_AddItemToObject(doc, "host", cJSON_Parse("{\"a\":\"1\"}"));
    cJSON_AddTrueToObject(doc, "host_declined");
    assert_int_equal(result_json_side_parse(doc, 1, 10, 10, &out, err, sizeof(err)), 0);
    assert_null(out.host);
    assert_true(out.host_declined);
    assert_contains(out.host_note, "declined");
    result_side_fini(&out);
    cJSON_Delete(doc);
    result_side_fini(&in);
}

/* Random damage to a side's text (bytes flipped, cut short): whatever still parses as JSON is
 * read without a crash, a leak or a host kept half-read (ASan and valgrind runs watch). */
static void test_side_damaged_never_crashes(void **state)
{
    struct side_result in, out;
    cJSON *j, *back;
    char err[256], *text, *copy;
    size_t len;
    uint32_t seed = 12345, parsed = 0;

    (void)state;
    make_side(&in);
    in.host = make_snap();
    j = result_json_side(&in);
    text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    result_side_fini(&in);
    len = strlen(text);
    copy = malloc(len + 1);
    assert_non_null(copy);
    for (int round = 0; round < 3000; round++) {
        memcpy(copy, text, len + 1);
        for (int k = 0; k < 1 + round % 4; k++) {
            seed = seed * 1103515245u + 12345u;
            copy[(seed >> 8) % len] = (char)(seed >> 16);
        }
        if (round % 7 == 0)
            copy[(seed >> 4) % len] = '\0';
        back = cJSON_Parse(copy);
        if (!back)
            continue;
        parsed++;
        if (result_json_side_parse(back, 1, 10, 10, &out, err, sizeof(err)) == 0) {
            for (const char *c = out.host_note; *c; c++)
                assert_true(*c >= ' ' && *c <= '~');
            if (out.host)
                assert_true(hostsnap_json_size(out.host) <= RESULT_JSON_HOST_WIRE_MAX);
        }
        result_side_fini(&out);
        cJSON_Delete(back);
    }
    assert_true(parsed > 100); /* the damage left enough documents to read */
    free(copy);
    free(text);
}

/* The keys a third-party daemon uses for both ends, through result_json_host_parse. */
static void test_run_result_hosts(void **state)
{
    struct hostsnap *own = make_snap(), *got = NULL;
    cJSON *msg = cJSON_CreateObject();
    char note[200];

    (void)state;
    result_json_add_host(msg, "client_host", own, false);
    result_json_add_host(msg, "server_host", NULL, true);
    result_json_add_host(msg, "other_host", NULL, false); /* nothing at all */
    assert_null(cJSON_GetObjectItemCaseSensitive(msg, "other_host"));
    assert_null(cJSON_GetObjectItemCaseSensitive(msg, "other_host_declined"));
    assert_int_equal(
        result_json_host_parse(msg, "client_host", "the daemon at A", &got, note, sizeof(note)), 1);
    assert_non_null(got);
    assert_string_equal(hostsnap_get(got, "net.ipv4.tcp_rmem"), "4096 131072 6291456");
    hostsnap_free(got);
    assert_int_equal(
        result_json_host_parse(msg, "server_host", "the server", &got, note, sizeof(note)), 0);
    assert_null(got);
    assert_contains(note, "the server declined");
    assert_int_equal(
        result_json_host_parse(msg, "other_host", "the server", &got, note, sizeof(note)), 0);
    assert_string_equal(note, "");
    /* a relay's note on why it has none of the target's settings, kept printable */
    cJSON_AddStringToObject(msg, "relayed_host_note", "the server left its settings out: \x1b[m");
    assert_int_equal(
        result_json_host_parse(msg, "relayed_host", "the server", &got, note, sizeof(note)), 0);
    assert_null(got);
    assert_string_equal(note, "the server left its settings out: ?[m");
    /* a too-large snapshot is named, not sent */
    got = big_snap(HOSTSNAP_MAX, 300);
    result_json_add_host(msg, "huge_host", got, false);
    hostsnap_free(got);
    assert_null(cJSON_GetObjectItemCaseSensitive(msg, "huge_host"));
    assert_int_equal(
        result_json_host_parse(msg, "huge_host", "the daemon at A", &got, note, sizeof(note)), 0);
    assert_null(got);
    assert_contains(note, "the daemon at A left its settings out: 16384 settings take");
    cJSON_AddItemToObject(msg, "bad_host", cJSON_CreateString("x"));
    assert_true(
        result_json_host_parse(msg, "bad_host", "the daemon at A", &got, note, sizeof(note)) < 0);
    assert_null(got);
    assert_contains(note, "the daemon at A sent settings that were refused");
    cJSON_Delete(msg);
    hostsnap_free(own);
}

/* An rr run of 2 flows with latency and CPU on both ends, merged. */
static void make_rr(struct run_result *r)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->test, sizeof(r->test), "rr");
    snprintf(r->server, sizeof(r->server), "192.0.2.9:5301");
    snprintf(r->started_at, sizeof(r->started_at), "2026-03-04T05:06:07Z");
    params_defaults(&r->params);
    r->params.test = PARAMS_TEST_RR;
    r->params.flows = 2;
    assert_int_equal(result_side_init(&r->local, 2, 1), 0);
    assert_int_equal(result_side_init(&r->remote, 2, 1), 0);
    r->local.valid = r->remote.valid = true;
    r->local.seconds = r->remote.seconds = 2.0;
    r->local.threads = r->remote.threads = 1;
    snprintf(r->local.cpus_seen, sizeof(r->local.cpus_seen), "1");
    snprintf(r->remote.version, sizeof(r->remote.version), "0.1.0");
    snprintf(r->remote.warning, sizeof(r->remote.warning), "a server note");
    r->local.cpu = (struct cpu_usage){.busy_pct = 50,
                                      .busy_cores = 1,
                                      .user_pct = 10,
                                      .system_pct = 40,
                                      .ncpu = 2,
                                      .valid = true};
    r->remote.cpu = (struct cpu_usage){.busy_pct = 25, .busy_cores = 0.5, .ncpu = 2, .valid = true};
    r->local.lat = calloc(1, sizeof(*r->local.lat));
    assert_non_null(r->local.lat);
    histo_init(r->local.lat);
    for (uint64_t i = 1; i <= 1000; i++)
        histo_record(r->local.lat, 10000 + i * 10); /* 10.01 .. 20 us */
    for (uint32_t i = 0; i < 2; i++) {
        r->local.flows[i].txns = 600 + 200 * i;
        r->local.flows[i].seconds = 2.0;
        r->local.flows[i].bytes = r->local.flows[i].txns;
        r->remote.flows[i].txns = r->local.flows[i].txns;
        r->remote.flows[i].bytes = r->local.flows[i].txns;
    }
    assert_int_equal(result_merge(r), 0);
}

static void test_doc_round_trip(void **state)
{
    struct run_result r, back;
    cJSON *doc;
    char err[256];

    (void)state;
    make_rr(&r);
    doc = result_json_run(&r);
    assert_int_equal(result_from_doc(doc, &back, err, sizeof(err)), 0);
    cJSON_Delete(doc);
    assert_string_equal(back.test, "rr");
    assert_string_equal(back.server, r.server);
    assert_int_equal(back.params.flows, 2);
    assert_int_equal(back.params.test, PARAMS_TEST_RR);
    assert_int_equal(back.summary.transactions, 1400);
    assert_dbl_near(back.summary.transactions_per_s, r.summary.transactions_per_s, 1e-9);
    assert_true(r.summary.latency.p99_us > 19);
    assert_dbl_near(back.summary.latency.p50_us, r.summary.latency.p50_us, 1e-9);
    assert_dbl_near(back.summary.latency.p99_us, r.summary.latency.p99_us, 1e-9);
    assert_dbl_near(back.summary.latency.max_us, r.summary.latency.max_us, 1e-9);
    assert_dbl_near(back.summary.local_cpu_us_per_txn, r.summary.local_cpu_us_per_txn, 1e-9);
    assert_true(back.local.cpu.valid && back.remote.cpu.valid);
    assert_dbl_near(back.local.cpu.busy_pct, 50, 1e-9);
    assert_dbl_near(back.remote.cpu.busy_pct, 25, 1e-9);
    assert_int_equal(back.nflows, 2);
    assert_int_equal(back.flows[1].txns, 800);
    assert_int_equal(back.flows[1].id, 1);
    assert_true(back.remote.valid);
    assert_string_equal(back.local.cpus_seen, "1");
    assert_string_equal(back.note, "a server note");
    assert_false(back.partial);
    result_fini(&back);
    result_fini(&r);
}

static void test_doc_hostile(void **state)
{
    struct run_result r, back;
    cJSON *doc, *flows, *sum;
    char err[256];

    (void)state;
    doc = cJSON_Parse("[1]");
    assert_int_equal(result_from_doc(doc, &back, err, sizeof(err)), -EINVAL);
    assert_contains(err, "not an object");
    result_fini(&back);
    cJSON_Delete(doc);
    doc = cJSON_Parse("{\"params\":{\"flows\":0}}");
    assert_int_equal(result_from_doc(doc, &back, err, sizeof(err)), -EINVAL);
    assert_contains(err, "invalid parameters");
    result_fini(&back);
    cJSON_Delete(doc);

    make_rr(&r);
    doc = result_json_run(&r);
    result_fini(&r);
    /* more flows than the parameters give the test: the rest is not read */
    flows = cJSON_GetObjectItemCaseSensitive(doc, "flows");
    for (int i = 0; i < 1000; i++)
        cJSON_AddItemToArray(flows, cJSON_Parse("{\"id\": 1e300, \"transactions\": -5}"));
    sum = cJSON_GetObjectItemCaseSensitive(doc, "summary");
    cJSON_ReplaceItemInObjectCaseSensitive(sum, "transactions_per_s", cJSON_CreateNumber(-1e308));
    cJSON_ReplaceItemInObjectCaseSensitive(sum, "jain_index", cJSON_CreateString("1"));
    cJSON_ReplaceItemInObjectCaseSensitive(doc, "server",
                                           cJSON_CreateString("\x1b[31mevil\x07host"));
    cJSON_ReplaceItemInObjectCaseSensitive(sum, "cpu", cJSON_CreateNumber(3));
    assert_int_equal(result_from_doc(doc, &back, err, sizeof(err)), 0);
    assert_int_equal(back.nflows, 2);
    assert_dbl_near(back.summary.transactions_per_s, 0, 0); /* clamped at 0 */
    assert_dbl_near(back.summary.jain_index, 0, 0);
    assert_string_equal(back.server, "?[31mevil?host");
    assert_false(back.local.cpu.valid);
    result_fini(&back);
    /* a flow's numbers out of range are clamped */
    cJSON_DeleteItemFromArray(flows, 0);
    cJSON_DeleteItemFromArray(flows, 0);
    assert_int_equal(result_from_doc(doc, &back, err, sizeof(err)), 0);
    assert_int_equal(back.nflows, 2);
    assert_int_equal(back.flows[0].id, 65535);
    assert_int_equal(back.flows[0].txns, 0);
    result_fini(&back);
    cJSON_Delete(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_side_carries_snapshot),
        cmocka_unit_test(test_side_carries_own_cpu),
        cmocka_unit_test(test_side_hostile_snapshot),
        cmocka_unit_test(test_snapshot_wire_size),
        cmocka_unit_test(test_side_snapshot_size_bound),
        cmocka_unit_test(test_side_snapshot_oversized_hostile),
        cmocka_unit_test(test_side_damaged_never_crashes),
        cmocka_unit_test(test_run_result_hosts),
        cmocka_unit_test(test_doc_round_trip),
        cmocka_unit_test(test_doc_hostile),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
