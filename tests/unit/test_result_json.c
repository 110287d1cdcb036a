/* Unit tests for result_json.c: a side's results on the wire (round trip, hostile input) and
 * the -J document of a merged run; and report_json.c's --json-stream line. */
#include "test_util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_json.h"
#include "result_json.h"
#include "test_result_json_util.h"

/* cJSON 1.7.15 prints a double with 15 significant digits when that reads back within
 * DBL_EPSILON, so values on the wire may move by an ulp: compare them that closely. */
#define assert_wire_dbl(actual, expected)                                                          \
    assert_dbl_near(actual, expected, 4 * 2.220446049250313e-16 * fabs(expected))

/* Follows a dotted path of object keys ("summary.cpu.local.user_pct"); NULL if absent. */
static const cJSON *jpath(const cJSON *o, const char *path)
{
    char key[64];

    while (o && *path) {
        size_t n = strcspn(path, ".");
        assert_true(n < sizeof(key));
        memcpy(key, path, n);
        key[n] = '\0';
        o = cJSON_GetObjectItemCaseSensitive(o, key);
        path += n + (path[n] == '.');
    }
    return o;
}

static double jnum(const cJSON *o, const char *path)
{
    const cJSON *v = jpath(o, path);

    if (!cJSON_IsNumber(v))
        fail_msg("\"%s\" is not a number in the document", path);
    return v->valuedouble;
}

static const char *jstr(const cJSON *o, const char *path)
{
    const cJSON *v = jpath(o, path);

    if (!cJSON_IsString(v))
        fail_msg("\"%s\" is not a string in the document", path);
    return v->valuestring;
}

/* ---- a side, filled with distinct values ---- */

static void fill_cpu(struct cpu_usage *c, double base)
{
    c->user_pct = base + 1.25;
    c->system_pct = base + 2.5;
    c->softirq_pct = base + 3.75;
    c->irq_pct = base + 0.5;
    c->iowait_pct = base + 0.25;
    c->steal_pct = base + 0.125;
    c->idle_pct = 60 - base;
    c->busy_pct = 40 + base;
    c->busy_cores = 0.8 + base / 100;
    c->intr_per_s = 123456.5;
    c->ncpu = 2;
    c->threads_user_pct = 7.5;
    c->threads_system_pct = 12.25;
    c->valid = 1;
}

/* A side's load with distinct values. */
static void fill_load(struct side_result *s)
{
    s->hostload = calloc(1, sizeof(*s->hostload));
    assert_non_null(s->hostload);
    s->hostload->seconds = 10.004;
    s->hostload->nthreads = 2;
    s->hostload->thread[0] =
        (struct side_thread){.cpu = 1, .sends = true, .run_s = 0.5, .runq_s = 0.25};
    s->hostload->thread[1] =
        (struct side_thread){.cpu = -1, .sends = false, .run_s = 9.75, .runq_s = -1};
    s->hostload->host.valid = true;
    s->hostload->host.have_ctr[HOSTCTR_RCVQ_DROP] = true;
    s->hostload->host.ctr[HOSTCTR_RCVQ_DROP] = 12;
    s->hostload->host.have_softnet = true;
    s->hostload->host.softnet_dropped = 3;
    s->hostload->host.softnet_squeeze = 700;
    s->hostload->host.softirq_max = 0.625;
    s->hostload->host.softirq_cpu = 1;
    s->hostload->host.ncpu = 2;
    s->hostload->host.cpu[0] = (struct hostctr_cpu){.id = 1, .busy = 0.875, .softirq = 0.625};
    s->hostload->host.cpu[1] = (struct hostctr_cpu){.id = 0, .busy = 0.25, .softirq = 0};
    s->hostload->host.nic_rx_missed = 5;
    snprintf(s->hostload->host.nic_worst, sizeof(s->hostload->host.nic_worst), "eth3");
}

static void fill_side(struct side_result *s)
{
    assert_int_equal(result_side_init(s, 2, 3), 0);
    s->valid = true;
    snprintf(s->version, sizeof(s->version), "0.1.0");
    s->seconds = 10.004;
    s->threads = 2;
    snprintf(s->cpus, sizeof(s->cpus), "0-1");
    snprintf(s->congestion, sizeof(s->congestion), "cubic");
    snprintf(s->cpus_seen, sizeof(s->cpus_seen), "1");
    snprintf(s->send_method, sizeof(s->send_method), "sendfile");
    snprintf(s->recv_method, sizeof(s->recv_method), "zerocopy");
    snprintf(s->warning, sizeof(s->warning), "window capped to 425984 by net.core.wmem_max");
    fill_cpu(&s->cpu, 10);

    struct side_flow *f = &s->flows[0];
    f->sender = true;
    f->bytes = 12345678901ULL;
    f->seconds = 10.0;
    f->cpu = 1;
    f->worker = 0;
    f->err = 0;
    f->ti = (struct tcpinfo){.valid = true,
                             .rtt_us = 151,
                             .rttvar_us = 22,
                             .min_rtt_us = 41,
                             .snd_cwnd = 310,
                             .snd_mss = 1448,
                             .pmtu = 1500,
                             .snd_wnd = 3145728,
                             .total_retrans = 17,
                             .notsent_bytes = 4096,
                             .delivery_rate_bps = 9876543210ULL,
                             .pacing_rate_bps = 11000000000ULL,
                             .busy_us = 10000000,
                             .rwnd_limited_us = 1234,
                             .sndbuf_limited_us = 5678,
                             .bytes_retrans = 24616,
                             .data_segs_out = 8525000,
                             .ca_state = 1};
    f->wait_s = 9.25;
    f->sndbuf = 4194304;
    f->samples = 40;
    f->rtt_mean_us = 160.5;
    f->snd_wnd_mean = 3000000.25;
    f->inflight_mean = 1500000.5;
    f = &s->flows[1];
    f->sender = false;
    f->bytes = 999;
    f->rx_zc_bytes = 4096 * 3 / 16; /* a receiver that mapped part of its bytes */
    f->seconds = 9.5;
    f->cpu = -1;
    f->err = 104;   /* ECONNRESET */
    f->wait_s = -1; /* not measured */
    f->rcvbuf = 6291456;

    fill_load(s);
    for (int i = 0; i < 2; i++) {
        struct interval *iv = result_side_next_interval(s);
        iv->start_s = i;
        iv->end_s = i + 1.0005;
        iv->omitted = i == 0;
        iv->sent_bytes = 1000000000ULL * (uint64_t)(i + 1);
        iv->recv_bytes = 500 + (uint64_t)i;
        iv->retrans = 3 + (uint32_t)i;
    }
}

static void assert_cpu_equal(const struct cpu_usage *a, const struct cpu_usage *b)
{
    assert_wire_dbl(a->user_pct, b->user_pct);
    assert_wire_dbl(a->system_pct, b->system_pct);
    assert_wire_dbl(a->softirq_pct, b->softirq_pct);
    assert_wire_dbl(a->irq_pct, b->irq_pct);
    assert_wire_dbl(a->iowait_pct, b->iowait_pct);
    assert_wire_dbl(a->steal_pct, b->steal_pct);
    assert_wire_dbl(a->idle_pct, b->idle_pct);
    assert_wire_dbl(a->busy_pct, b->busy_pct);
    assert_wire_dbl(a->busy_cores, b->busy_cores);
    assert_wire_dbl(a->intr_per_s, b->intr_per_s);
    assert_wire_dbl(a->threads_user_pct, b->threads_user_pct);
    assert_wire_dbl(a->threads_system_pct, b->threads_system_pct);
    assert_int_equal(a->ncpu, b->ncpu);
    assert_int_equal(a->valid, b->valid);
}

static void assert_load_equal(const struct side_hostload *a_, const struct side_hostload *b_)
{
    assert_non_null(a_);
    assert_wire_dbl(a_->seconds, b_->seconds);
    assert_int_equal(a_->nthreads, 2);
    for (uint32_t i = 0; i < 2; i++) {
        const struct side_thread *a = &a_->thread[i], *b = &b_->thread[i];
        assert_int_equal(a->cpu, b->cpu);
        assert_int_equal(a->sends, b->sends);
        assert_wire_dbl(a->run_s, b->run_s);
        assert_wire_dbl(a->runq_s, b->runq_s);
    }
    {
        const struct hostctr_delta *a = &a_->host, *b = &b_->host;
        assert_true(a->valid);
        for (int c = 0; c < HOSTCTR_COUNT; c++) {
            assert_int_equal(a->have_ctr[c], b->have_ctr[c]);
            assert_int_equal(a->ctr[c], b->ctr[c]);
        }
        assert_true(a->have_softnet);
        assert_int_equal(a->softnet_dropped, 3);
        assert_int_equal(a->softnet_squeeze, 700);
        assert_wire_dbl(a->softirq_max, 0.625);
        assert_int_equal(a->softirq_cpu, 1);
        assert_int_equal(a->ncpu, 2);
        assert_int_equal(a->cpu[0].id, 1);
        assert_wire_dbl(a->cpu[0].busy, 0.875);
        assert_wire_dbl(a->cpu[0].softirq, 0.625);
        assert_int_equal(a->cpu[1].id, 0);
        assert_int_equal(a->nic_rx_missed, 5);
        assert_string_equal(a->nic_worst, "eth3");
    }
}

static void test_side_round_trip(void **state)
{
    struct side_result in, out;
    char err[256] = "x";

    (void)state;
    fill_side(&in);
    if (side_via_text(&in, 2, &out, err, sizeof(err)))
        fail_msg("side parse failed: %s", err);
    assert_true(out.valid);
    assert_string_equal(out.version, in.version);
    assert_wire_dbl(out.seconds, in.seconds);
    assert_int_equal(out.threads, in.threads);
    assert_string_equal(out.cpus, in.cpus);
    assert_string_equal(out.congestion, in.congestion);
    assert_string_equal(out.cpus_seen, in.cpus_seen);
    assert_string_equal(out.send_method, in.send_method);
    assert_string_equal(out.recv_method, in.recv_method);
    assert_string_equal(out.warning, in.warning);
    assert_cpu_equal(&out.cpu, &in.cpu);
    assert_int_equal(out.nflows, 2);
    for (uint32_t i = 0; i < 2; i++) {
        const struct side_flow *a = &out.flows[i], *b = &in.flows[i];
        assert_int_equal(a->id, i);
        assert_int_equal(a->sender, b->sender);
        assert_int_equal(a->bytes, b->bytes);
        assert_int_equal(a->rx_zc_bytes, b->rx_zc_bytes);
        assert_wire_dbl(a->seconds, b->seconds);
        assert_int_equal(a->cpu, b->cpu);
        assert_int_equal(a->err, b->err);
        assert_int_equal(a->ti.valid, b->ti.valid);
        assert_int_equal(a->ti.rtt_us, b->ti.rtt_us);
        assert_int_equal(a->ti.rttvar_us, b->ti.rttvar_us);
        assert_int_equal(a->ti.min_rtt_us, b->ti.min_rtt_us);
        assert_int_equal(a->ti.snd_cwnd, b->ti.snd_cwnd);
        assert_int_equal(a->ti.snd_mss, b->ti.snd_mss);
        assert_int_equal(a->ti.pmtu, b->ti.pmtu);
        assert_int_equal(a->ti.snd_wnd, b->ti.snd_wnd);
        assert_int_equal(a->ti.total_retrans, b->ti.total_retrans);
        assert_int_equal(a->ti.notsent_bytes, b->ti.notsent_bytes);
        assert_int_equal(a->ti.delivery_rate_bps, b->ti.delivery_rate_bps);
        assert_int_equal(a->ti.pacing_rate_bps, b->ti.pacing_rate_bps);
        assert_int_equal(a->ti.busy_us, b->ti.busy_us);
        assert_int_equal(a->ti.rwnd_limited_us, b->ti.rwnd_limited_us);
        assert_int_equal(a->ti.sndbuf_limited_us, b->ti.sndbuf_limited_us);
        assert_int_equal(a->ti.bytes_retrans, b->ti.bytes_retrans);
        assert_int_equal(a->ti.data_segs_out, b->ti.data_segs_out);
        assert_int_equal(a->ti.ca_state, b->ti.ca_state);
        assert_wire_dbl(a->wait_s, b->wait_s);
        assert_int_equal(a->sndbuf, b->sndbuf);
        assert_int_equal(a->rcvbuf, b->rcvbuf);
        assert_int_equal(a->samples, b->samples);
        assert_wire_dbl(a->rtt_mean_us, b->rtt_mean_us);
        assert_wire_dbl(a->snd_wnd_mean, b->snd_wnd_mean);
        assert_wire_dbl(a->inflight_mean, b->inflight_mean);
    }
    assert_load_equal(out.hostload, in.hostload);
    assert_int_equal(out.nintervals, 2);
    for (uint32_t i = 0; i < 2; i++) {
        const struct interval *a = &out.intervals[i], *b = &in.intervals[i];
        assert_wire_dbl(a->start_s, b->start_s);
        assert_wire_dbl(a->end_s, b->end_s);
        assert_int_equal(a->omitted, b->omitted);
        assert_int_equal(a->sent_bytes, b->sent_bytes);
        assert_int_equal(a->recv_bytes, b->recv_bytes);
        assert_int_equal(a->retrans, b->retrans);
    }
    result_side_fini(&out);
    result_side_fini(&in);
}

static void test_side_parse_unreported_flow_and_long_strings(void **state)
{
    static const char text[] =
        "{\"version\":\"0123456789012345678901234567890123456789\",\"seconds\":1,"
        "\"flows\":[{\"id\":1,\"sender\":false,\"bytes\":42,\"seconds\":1}],"
        "\"future_field\":[1,2,3]}";
    cJSON *j = cJSON_Parse(text);
    struct side_result out;
    char err[256];

    (void)state;
    assert_non_null(j);
    assert_int_equal(result_json_side_parse(j, 3, 1000, 1000, &out, err, sizeof(err)), 0);
    cJSON_Delete(j);
    assert_int_equal(strlen(out.version), sizeof(out.version) - 1); /* cut, terminated */
    assert_int_equal(out.nflows, 3);
    assert_int_equal(out.flows[0].id, UINT32_MAX); /* not reported by the peer */
    assert_int_equal(out.flows[1].id, 1);
    assert_int_equal(out.flows[1].bytes, 42);
    assert_int_equal(out.flows[2].id, UINT32_MAX);
    assert_int_equal(out.nintervals, 0);
    result_side_fini(&out);
}

/* Replaces (or adds) key in the object at path inside a good side document with value (JSON
 * text; NULL deletes the key), then parses; expects -EPROTO and, when given, err text. */
static void expect_hostile(const char *path, const char *key, const char *value,
                           uint32_t expect_flows, const char *err_part)
{
    struct side_result in, out;
    cJSON *doc, *target;
    char err[256] = "";
    int rc;

    fill_side(&in);
    doc = result_json_side(&in);
    result_side_fini(&in);
    target = path ? (cJSON *)jpath(doc, path) : doc;
    if (path && !strcmp(path, "flows.0"))
        target = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "flows"), 0);
    if (path && !strcmp(path, "flows.0.tcpinfo"))
        target = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "flows"), 0), "tcpinfo");
    if (path && !strcmp(path, "load.threads.0"))
        target = cJSON_GetArrayItem(jpath(doc, "load.threads"), 0);
    if (path && !strcmp(path, "load.host.cpus.0"))
        target = cJSON_GetArrayItem(jpath(doc, "load.host.cpus"), 0);
    if (path && !strcmp(path, "intervals.1"))
        target = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "intervals"), 1);
    assert_non_null(target);
    cJSON_DeleteItemFromObjectCaseSensitive(target, key);
    if (value) {
        cJSON *v = cJSON_Parse(value);
        assert_non_null(v);
        cJSON_AddItemToObject(target, key, v);
    }
    memset(&out, 0, sizeof(out));
    rc = result_json_side_parse(doc, expect_flows, 1000, 1000, &out, err, sizeof(err));
    cJSON_Delete(doc);
    if (rc != -EPROTO)
        fail_msg("%s.%s = %s: parse returned %d (%s), expected -EPROTO", path ? path : "", key,
                 value ? value : "(deleted)", rc, err);
    assert_false(out.valid);
    assert_null(out.flows); /* nothing left allocated */
    assert_true(err[0] != '\0');
    if (err_part)
        assert_contains(err, err_part);
    result_side_fini(&out);
}

static void test_side_parse_hostile_flows(void **state)
{
    (void)state;
    expect_hostile("flows.0", "id", "2", 2, "outside 0..1");
    expect_hostile("flows.0", "id", "-1", 2, "outside 0..1");
    expect_hostile("flows.0", "id", "4294967296", 2, "outside 0..1");
    expect_hostile("flows.0", "id", "\"0\"", 2, "outside 0..1");
    expect_hostile("flows.0", "bytes", "-5", 2, "flow 0");
    expect_hostile("flows.0", "bytes", "\"100\"", 2, "flow 0");
    expect_hostile("flows.0", "bytes", "1e300", 2, "flow 0");
    expect_hostile("flows.0", "seconds", "\"ten\"", 2, "flow 0");
    expect_hostile("flows.0", "seconds", "-1", 2, "flow 0");
    expect_hostile("flows.0", "cpu", "-2", 2, "flow 0");
    expect_hostile("flows.0", "cpu", "1e9", 2, "flow 0");
    expect_hostile("flows.0", "err", "-1", 2, "flow 0");
    expect_hostile("flows.0", "tcpinfo", "[1,2]", 2, "flow 0");
    expect_hostile("flows.0.tcpinfo", "rtt_us", "\"fast\"", 2, "flow 0");
    expect_hostile("flows.0.tcpinfo", "rtt_us", "4294967296", 2, "flow 0");
    expect_hostile("flows.0.tcpinfo", "busy_us", "1e30", 2, "flow 0");
    expect_hostile("flows.0.tcpinfo", "ca_state", "256", 2, "flow 0");
    expect_hostile("flows.0.tcpinfo", "retransmits", "true", 2, "flow 0");
}

static void test_side_parse_hostile_shape(void **state)
{
    (void)state;
    expect_hostile(NULL, "flows", "{\"0\":{}}", 2, "flows array");
    expect_hostile(NULL, "flows", "\"flows\"", 2, "flows array");
    expect_hostile(NULL, "flows", NULL, 2, "flows array");
    expect_hostile(NULL, "flows", "[5]", 2, "outside");
    expect_hostile(NULL, "intervals", "{}", 2, NULL);
    expect_hostile(NULL, "intervals", "[\"x\"]", 2, NULL);
    expect_hostile("intervals.1", "start_s", "-1", 2, NULL);
    expect_hostile("intervals.1", "sent_bytes", "\"many\"", 2, NULL);
    expect_hostile("intervals.1", "retransmits", "1e12", 2, NULL);
    expect_hostile(NULL, "seconds", "1e300", 2, NULL);
    expect_hostile(NULL, "threads", "-1", 2, NULL);
    expect_hostile(NULL, "cpu", "5", 2, NULL);
    expect_hostile("cpu", "user_pct", "101", 2, NULL);
    expect_hostile("cpu", "busy_cores", "\"lots\"", 2, NULL);
    expect_hostile("cpu", "cpus", "1e7", 2, NULL);
    expect_hostile(NULL, "version", "\"0.1.0\"", 0, "flows array"); /* expect_flows 0 */
}

/* A server's load comes from the network too: every value is checked. */
static void test_side_parse_hostile_load(void **state)
{
    char many[4096];
    size_t n = 0;

    (void)state;
    expect_hostile("flows.0", "wait_s", "\"long\"", 2, "flow 0");
    expect_hostile("flows.0", "wait_s", "-2", 2, "flow 0");
    expect_hostile("flows.0", "sndbuf", "-1", 2, "flow 0");
    expect_hostile("flows.0", "rcvbuf", "4294967296", 2, "flow 0");
    expect_hostile("flows.0", "samples", "1e10", 2, "flow 0");
    expect_hostile("flows.0", "rtt_mean_us", "1e10", 2, "flow 0");
    expect_hostile("flows.0", "inflight_mean", "-1", 2, "flow 0");
    expect_hostile(NULL, "load", "5", 2, NULL);
    expect_hostile(NULL, "load", "[]", 2, NULL);
    expect_hostile("load", "seconds", "-1", 2, NULL);
    expect_hostile("load", "threads", "{}", 2, NULL);
    expect_hostile("load", "threads", "[5]", 2, NULL);
    expect_hostile("load.threads.0", "run_s", "-1", 2, NULL);
    expect_hostile("load.threads.0", "runq_s", "-2", 2, NULL);
    expect_hostile("load.threads.0", "cpu", "65536", 2, NULL);
    expect_hostile("load", "host", "\"x\"", 2, NULL);
    expect_hostile("load.host", "counters", "[1]", 2, NULL);
    expect_hostile("load.host.counters", "TCPRcvQDrop", "-1", 2, NULL);
    expect_hostile("load.host.counters", "TCPTimeouts", "\"7\"", 2, NULL);
    expect_hostile("load.host", "softirq_max_fraction", "1.5", 2, NULL);
    expect_hostile("load.host", "cpus", "{}", 2, NULL);
    expect_hostile("load.host.cpus.0", "busy_fraction", "2", 2, NULL);
    expect_hostile("load.host", "nic_rx_missed_errors", "1e300", 2, NULL);
    /* more threads than a test may have, more CPUs than a delta keeps */
    n += (size_t)snprintf(many + n, sizeof(many) - n, "[");
    for (int i = 0; i < SIDE_MAX_THREADS + 1; i++)
        n += (size_t)snprintf(many + n, sizeof(many) - n, "%s{}", i ? "," : "");
    snprintf(many + n, sizeof(many) - n, "]");
    expect_hostile("load", "threads", many, 2, NULL);
    expect_hostile("load.host", "cpus", "[{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}]", 2,
                   NULL);
}

/* What an older or newer server sends: no load (NULL), null, a counter netrig does not know. */
static void test_side_parse_load_absent_or_newer(void **state)
{
    struct side_result in, out;
    cJSON *doc;
    char err[256];

    (void)state;
    fill_side(&in);
    doc = result_json_side(&in);
    result_side_fini(&in);
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "load");
    assert_int_equal(result_json_side_parse(doc, 2, 1000, 1000, &out, err, sizeof(err)), 0);
    assert_null(out.hostload);
    result_side_fini(&out);
    cJSON_AddNullToObject(doc, "load");
    assert_int_equal(result_json_side_parse(doc, 2, 1000, 1000, &out, err, sizeof(err)), 0);
    assert_null(out.hostload);
    result_side_fini(&out);
    cJSON_Delete(doc);
    fill_side(&in);
    doc = result_json_side(&in);
    result_side_fini(&in);
    cJSON_AddNumberToObject((cJSON *)jpath(doc, "load.host.counters"), "TCPSomethingNew", 5);
    assert_int_equal(result_json_side_parse(doc, 2, 1000, 1000, &out, err, sizeof(err)), 0);
    assert_non_null(out.hostload);
    assert_int_equal(out.hostload->host.ctr[HOSTCTR_RCVQ_DROP], 12);
    result_side_fini(&out);
    cJSON_Delete(doc);
}

static void test_side_parse_not_object(void **state)
{
    struct side_result out;
    char err[256];
    cJSON *arr = cJSON_Parse("[{\"flows\":[]}]");

    (void)state;
    memset(&out, 0, sizeof(out));
    assert_int_equal(result_json_side_parse(arr, 1, 1000, 1000, &out, err, sizeof(err)), -EPROTO);
    assert_int_equal(result_json_side_parse(NULL, 1, 1000, 1000, &out, err, sizeof(err)), -EPROTO);
    assert_false(out.valid);
    cJSON_Delete(arr);
}

/* ---- the -J document of a merged run ---- */

static struct run_result *merged_forward_run(void)
{
    struct run_result *r = calloc(1, sizeof(*r));

    assert_non_null(r);
    snprintf(r->test, sizeof(r->test), "0123abcd");
    snprintf(r->server, sizeof(r->server), "127.0.0.1:5301");
    snprintf(r->started_at, sizeof(r->started_at), "2024-05-01T12:00:00Z");
    params_defaults(&r->params);
    r->params.flows = 2;
    snprintf(r->params.title, sizeof(r->params.title), "lab");
    fill_side(&r->local);
    fill_side(&r->remote);
    r->local.flows[1] = r->local.flows[0]; /* both flows sent by the client */
    r->local.flows[1].id = 1;
    r->local.flows[1].bytes = 2500000000ULL;
    r->local.flows[1].ti.total_retrans = 3;
    r->local.flows[1].ti.rtt_us = 99;
    r->remote.flows[0].sender = r->remote.flows[1].sender = false;
    r->remote.flows[0].bytes = 1250000000ULL; /* 1 Gbit/s over 10 s */
    r->remote.flows[0].seconds = 10.0;
    r->remote.flows[1].bytes = 3750000000ULL; /* 3 Gbit/s */
    r->remote.flows[1].seconds = 10.0;
    r->remote.flows[1].err = 0;
    snprintf(r->remote.version, sizeof(r->remote.version), "0.1.0-srv");
    fill_cpu(&r->remote.cpu, 20);
    assert_int_equal(result_merge(r), 0);
    return r;
}

static void test_run_document_keys(void **state)
{
    struct run_result *r = merged_forward_run();
    cJSON *doc = result_json_run(r);
    const cJSON *arr, *f, *iv;

    (void)state;
    assert_string_equal(jstr(doc, "netrig_version"), NETRIG_VERSION);
    assert_string_equal(jstr(doc, "test"), "0123abcd");
    assert_string_equal(jstr(doc, "title"), "lab");
    assert_string_equal(jstr(doc, "server"), "127.0.0.1:5301");
    assert_string_equal(jstr(doc, "server_version"), "0.1.0-srv");
    assert_string_equal(jstr(doc, "started_at"), "2024-05-01T12:00:00Z");
    assert_true(cJSON_IsObject(jpath(doc, "params")));
    assert_dbl_near(jnum(doc, "params.flows"), 2, 0);
    assert_string_equal(jstr(doc, "params.direction"), "forward");

    arr = jpath(doc, "intervals");
    assert_true(cJSON_IsArray(arr));
    assert_int_equal(cJSON_GetArraySize(arr), 2);
    iv = cJSON_GetArrayItem(arr, 1);
    assert_dbl_near(jnum(iv, "start_s"), 1.0, 0);
    assert_dbl_near(jnum(iv, "bytes"), 2000000501.0, 0);
    assert_dbl_near(jnum(iv, "throughput_bps"), 2000000501.0 * 8 / 1.0005, 1e-3);
    assert_dbl_near(jnum(iv, "retransmits"), 4, 0);
    assert_true(cJSON_IsFalse(jpath(iv, "omitted")));
    assert_true(cJSON_IsTrue(jpath(cJSON_GetArrayItem(arr, 0), "omitted")));
    assert_int_equal(cJSON_GetArraySize(jpath(iv, "flows")), 2);

    arr = jpath(doc, "flows");
    assert_true(cJSON_IsArray(arr));
    assert_int_equal(cJSON_GetArraySize(arr), 2);
    f = cJSON_GetArrayItem(arr, 0);
    assert_dbl_near(jnum(f, "id"), 0, 0);
    assert_string_equal(jstr(f, "direction"), "client_to_server");
    assert_dbl_near(jnum(f, "bytes"), 1250000000.0, 0);
    assert_dbl_near(jnum(f, "throughput_bps"), 1e9, 1e-3);
    assert_dbl_near(jnum(f, "sender_bytes"), 12345678901.0, 0);
    assert_dbl_near(jnum(f, "retransmits"), 17, 0);
    assert_dbl_near(jnum(f, "rtt_us"), 151, 0);
    assert_dbl_near(jnum(f, "client_cpu"), 1, 0);
    f = cJSON_GetArrayItem(arr, 1);
    assert_dbl_near(jnum(f, "id"), 1, 0);
    assert_dbl_near(jnum(f, "throughput_bps"), 3e9, 1e-3);
    assert_dbl_near(jnum(f, "retransmits"), 3, 0);
    assert_dbl_near(jnum(f, "rtt_us"), 99, 0);

    assert_dbl_near(jnum(doc, "summary.throughput_bps"), 4e9, 1e-3);
    assert_dbl_near(jnum(doc, "summary.bytes"), 5e9, 0);
    assert_dbl_near(jnum(doc, "summary.jain_index"), 16.0 / (2 * 10.0), 1e-12);
    assert_dbl_near(jnum(doc, "summary.retransmits"), 20, 0);
    assert_dbl_near(jnum(doc, "summary.client_to_server_bps"), 4e9, 1e-3);
    assert_dbl_near(jnum(doc, "summary.server_to_client_bps"), 0, 0);
    assert_dbl_near(jnum(doc, "summary.cpu.local.user_pct"), 11.25, 0);
    assert_dbl_near(jnum(doc, "summary.cpu.local.system_pct"), 12.5, 0);
    assert_dbl_near(jnum(doc, "summary.cpu.local.softirq_pct"), 13.75, 0);
    assert_dbl_near(jnum(doc, "summary.cpu.remote.user_pct"), 21.25, 0);
    assert_dbl_near(jnum(doc, "summary.cpu.remote.system_pct"), 22.5, 0);
    assert_dbl_near(jnum(doc, "summary.cpu.remote.softirq_pct"), 23.75, 0);
    assert_dbl_near(jnum(doc, "summary.cpu.remote.busy_cores"), 1.0, 1e-12);
    assert_dbl_near(jnum(doc, "summary.cores_per_10gbps.local"), 0.9 / 0.4, 1e-12);
    assert_dbl_near(jnum(doc, "summary.cores_per_10gbps.remote"), 1.0 / 0.4, 1e-12);
    assert_dbl_near(jnum(doc, "summary.cpu_ns_per_byte.local"), 0.9e9 / 5e8, 1e-12);
    assert_string_equal(jstr(doc, "placement.client_cpus"), "0-1");

    arr = jpath(doc, "warnings");
    assert_int_equal(cJSON_GetArraySize(arr), 2);
    assert_true(cJSON_IsFalse(jpath(doc, "partial")));
    assert_null(jpath(doc, "error"));
    cJSON_Delete(doc);
    result_fini(r);
    free(r);
}

static void test_run_document_text_round_trip(void **state)
{
    struct run_result *r = merged_forward_run();
    cJSON *doc, *back;
    char *text;

    (void)state;
    r->partial = true;
    snprintf(r->error, sizeof(r->error), "server closed the control connection");
    doc = result_json_run(r);
    text = cJSON_Print(doc);
    assert_non_null(text);
    back = cJSON_Parse(text);
    assert_non_null(back);
    assert_true(cJSON_Compare(doc, back, 1));
    /* exact numbers survive printing */
    assert_wire_dbl(jnum(back, "summary.throughput_bps"), jnum(doc, "summary.throughput_bps"));
    assert_dbl_near(jnum(back, "summary.bytes"), 5e9, 0);
    assert_wire_dbl(jnum(back, "summary.jain_index"), jnum(doc, "summary.jain_index"));
    assert_dbl_near(jnum(cJSON_GetArrayItem(jpath(back, "flows"), 0), "sender_bytes"),
                    12345678901.0, 0);
    assert_dbl_near(jnum(back, "summary.cpu.local.interrupts_per_s"), 123456.5, 0);
    assert_true(cJSON_IsTrue(jpath(back, "partial")));
    assert_string_equal(jstr(back, "error"), "server closed the control connection");
    cJSON_Delete(back);
    free(text);
    cJSON_Delete(doc);
    result_fini(r);
    free(r);
}

static void test_run_document_unknown_retransmits(void **state)
{
    struct run_result *r = merged_forward_run();
    cJSON *doc;

    (void)state;
    r->local.flows[1].ti.valid = false; /* no TCP_INFO from the sender */
    assert_int_equal(result_merge(r), 0);
    doc = result_json_run(r);
    assert_dbl_near(jnum(cJSON_GetArrayItem(jpath(doc, "flows"), 1), "retransmits"), -1, 0);
    assert_dbl_near(jnum(cJSON_GetArrayItem(jpath(doc, "flows"), 0), "retransmits"), 17, 0);
    cJSON_Delete(doc);
    result_fini(r);
    free(r);
}

static void test_interval_event(void **state)
{
    struct run_result *r = merged_forward_run();
    cJSON *ev = report_json_interval(r, &r->local, &r->local.intervals[0]);

    (void)state;
    assert_string_equal(jstr(ev, "event"), "interval");
    assert_string_equal(jstr(ev, "test"), "0123abcd");
    assert_dbl_near(jnum(ev, "sent_bytes"), 1e9, 0);
    assert_dbl_near(jnum(ev, "received_bytes"), 500, 0);
    assert_dbl_near(jnum(ev, "end_s"), 1.0005, 0);
    assert_true(cJSON_IsObject(jpath(ev, "cpu")));
    cJSON_Delete(ev);
    result_fini(r);
    free(r);
}

/* The JSON observers: -J shows nothing while the run goes, --json-stream one line per interval
 * (the interval event on one line); a zeroed observer shows nothing at all. */
static void test_json_observers(void **state)
{
    struct run_result *r = merged_forward_run();
    const struct interval *iv = &r->local.intervals[0];
    struct run_observer quiet = {0}, doc, stream;
    char *buf = NULL, *want;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    cJSON *ev = report_json_interval(r, &r->local, iv);

    (void)state;
    assert_non_null(out);
    doc = report_json_observer(out, false);
    stream = report_json_observer(out, true);
    run_observer_start(&quiet, r);
    run_observer_interval(&quiet, r, &r->local, iv);
    run_observer_start(&doc, r);
    run_observer_interval(&doc, r, &r->local, iv);
    run_observer_interval(NULL, r, &r->local, iv);
    fflush(out);
    assert_int_equal(len, 0);
    assert_null(stream.on_start);
    run_observer_interval(&stream, r, &r->local, iv);
    fclose(out);
    want = cJSON_PrintUnformatted(ev);
    assert_non_null(want);
    assert_int_equal(len, strlen(want) + 1);
    assert_memory_equal(buf, want, strlen(want));
    assert_int_equal(buf[len - 1], '\n');
    free(want);
    free(buf);
    cJSON_Delete(ev);
    result_fini(r);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_side_round_trip),
        cmocka_unit_test(test_side_parse_unreported_flow_and_long_strings),
        cmocka_unit_test(test_side_parse_hostile_flows),
        cmocka_unit_test(test_side_parse_hostile_shape),
        cmocka_unit_test(test_side_parse_hostile_load),
        cmocka_unit_test(test_side_parse_load_absent_or_newer),
        cmocka_unit_test(test_side_parse_not_object),
        cmocka_unit_test(test_run_document_keys),
        cmocka_unit_test(test_run_document_text_round_trip),
        cmocka_unit_test(test_run_document_unknown_retransmits),
        cmocka_unit_test(test_interval_event),
        cmocka_unit_test(test_json_observers),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
