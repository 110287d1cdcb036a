/* result_doc: a run's -J document read back into the result model, for the reports of a run
 * another host measured (a third-party test). */
#include "result_doc.h"
#include "test_kind.h"

#include "cpujson.h"
#include "result_json_mptcp.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cJSON *item(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* A number clamped into [lo, hi]; absent, not a number or not finite: 0. */
static double num(const cJSON *o, const char *key, double lo, double hi)
{
    const cJSON *v = item(o, key);

    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return 0;
    return v->valuedouble < lo ? lo : v->valuedouble > hi ? hi : v->valuedouble;
}

#define U32(o, k) ((uint32_t)num(o, k, 0, 4294967295.0))
#define U64(o, k) ((uint64_t)num(o, k, 0, 1.8e19))
#define PCT(o, k) num(o, k, 0, 100)
#define BIG(o, k) num(o, k, 0, 1e18)

/* A string member copied for printing: cut to len, bytes outside ' '..'~' as '?'. */
static void text(const cJSON *o, const char *key, char *dst, size_t len)
{
    const cJSON *v = item(o, key);
    size_t i = 0;

    if (cJSON_IsString(v) && v->valuestring)
        for (; v->valuestring[i] && i + 1 < len; i++) {
            unsigned char c = (unsigned char)v->valuestring[i];
            dst[i] = c < ' ' || c > '~' ? '?' : (char)c;
        }
    dst[i] = '\0';
}

static void read_cpu(const cJSON *o, struct cpu_usage *c)
{
    memset(c, 0, sizeof(*c));
    if (!cJSON_IsObject(o))
        return;
    c->user_pct = PCT(o, "user_pct");
    c->system_pct = PCT(o, "system_pct");
    c->softirq_pct = PCT(o, "softirq_pct");
    c->irq_pct = PCT(o, "irq_pct");
    c->iowait_pct = PCT(o, "iowait_pct");
    c->steal_pct = PCT(o, "steal_pct");
    c->idle_pct = PCT(o, "idle_pct");
    c->busy_pct = PCT(o, "busy_pct");
    c->threads_user_pct = PCT(o, "threads_user_pct");
    c->threads_system_pct = PCT(o, "threads_system_pct");
    c->busy_cores = num(o, "busy_cores", 0, 1e6);
    c->intr_per_s = num(o, "interrupts_per_s", 0, 1e12);
    c->ncpu = (int)num(o, "cpus", 0, 1e6);
    c->valid = cJSON_IsTrue(item(o, "valid"));
    cpujson_parse(o, c); /* what is out of range is left out */
}

static void read_flow(const cJSON *o, uint32_t i, struct flow_summary *f)
{
    const cJSON *rt = item(o, "retransmits");

    f->id = (uint32_t)num(o, "id", 0, 65535);
    if (!item(o, "id"))
        f->id = i;
    f->client_sends = !cJSON_IsString(item(o, "direction")) ||
                      strcmp(item(o, "direction")->valuestring, "server_to_client");
    f->bytes = U64(o, "bytes");
    f->sent_bytes = U64(o, "sender_bytes");
    f->throughput_bps = BIG(o, "throughput_bps");
    f->sender_bps = BIG(o, "sender_throughput_bps");
    /* -1: the sender's TCP_INFO was not read */
    f->has_sender_tcpinfo = cJSON_IsNumber(rt) && rt->valuedouble >= 0;
    f->retransmits = U32(o, "retransmits");
    f->rtt_us = U32(o, "rtt_us");
    f->min_rtt_us = U32(o, "min_rtt_us");
    f->cwnd = U32(o, "cwnd");
    f->snd_wnd = U32(o, "snd_wnd");
    f->delivery_rate_bps = U64(o, "delivery_rate_bps");
    f->busy_us = U64(o, "busy_us");
    f->rwnd_limited_us = U64(o, "rwnd_limited_us");
    f->sndbuf_limited_us = U64(o, "sndbuf_limited_us");
    f->client_cpu = (int)num(o, "client_cpu", -1, 65535);
    f->server_cpu = (int)num(o, "server_cpu", -1, 65535);
    if (!item(o, "client_cpu"))
        f->client_cpu = -1;
    if (!item(o, "server_cpu"))
        f->server_cpu = -1;
    f->txns = U64(o, "transactions");
    f->transactions_per_s = BIG(o, "transactions_per_s");
    f->timeouts = U64(o, "timeouts");
    f->udp_sent = U64(o, "datagrams_sent");
    f->udp_received = U64(o, "datagrams_received");
    f->udp_lost = U64(o, "datagrams_lost");
    f->udp_jitter_us = BIG(o, "jitter_us");
}

/* flows[]: at most as many as the parameters give the test. */
static int read_flows(const cJSON *arr, struct run_result *r)
{
    uint32_t max = params_total_flows(&r->params), n = 0;
    const cJSON *f;

    if (!cJSON_IsArray(arr))
        return 0;
    n = (uint32_t)cJSON_GetArraySize(arr);
    if (n > max)
        n = max;
    r->flows = calloc(n ? n : 1, sizeof(*r->flows));
    if (!r->flows)
        return -ENOMEM;
    r->nflows = 0;
    cJSON_ArrayForEach(f, arr)
    {
        if (r->nflows == n)
            break;
        if (!cJSON_IsObject(f))
            continue;
        read_flow(f, r->nflows, &r->flows[r->nflows]);
        r->nflows++;
    }
    return 0;
}

static void read_latency(const cJSON *o, struct run_latency *l)
{
    l->min_us = BIG(o, "min");
    l->mean_us = BIG(o, "mean");
    l->p50_us = BIG(o, "p50");
    l->p90_us = BIG(o, "p90");
    l->p99_us = BIG(o, "p99");
    l->p999_us = BIG(o, "p999");
    l->p9999_us = BIG(o, "p9999");
    l->max_us = BIG(o, "max");
}

static void read_udp(const cJSON *o, struct run_udp *u)
{
    const cJSON *d = item(o, "one_way_delay_us");

    u->sent = U64(o, "datagrams_sent");
    u->received = U64(o, "datagrams_received");
    u->lost = U64(o, "datagrams_lost");
    u->loss_pct = PCT(o, "loss_pct");
    u->duplicates = U64(o, "duplicates");
    u->out_of_order = U64(o, "out_of_order");
    u->send_drops = U64(o, "send_drops");
    u->jitter_us = BIG(o, "jitter_us");
    u->sent_pps = BIG(o, "sent_pps");
    u->received_pps = BIG(o, "received_pps");
    u->shared_clock = cJSON_IsTrue(item(o, "shared_clock")) && cJSON_IsObject(d);
    u->owd_mean_us = num(d, "mean", -1e12, 1e12);
    u->owd_min_us = num(d, "min", -1e12, 1e12);
    u->owd_max_us = num(d, "max", -1e12, 1e12);
}

/* An own-CPU cost figure: -1 when the document does not have it (an older netrig). */
static double own(const cJSON *o, const char *key)
{
    return cJSON_IsNumber(item(o, key)) ? BIG(o, key) : -1;
}

static void read_summary(const cJSON *s, struct run_result *r)
{
    struct run_summary *x = &r->summary;
    const cJSON *cpu = item(s, "cpu"), *cost = item(s, "cpu_us_per_transaction");

    x->throughput_bps = BIG(s, "throughput_bps");
    x->bytes = U64(s, "bytes");
    x->sent_bytes = U64(s, "sender_bytes");
    x->sender_bps = BIG(s, "sender_throughput_bps");
    x->up_bps = BIG(s, "client_to_server_bps");
    x->down_bps = BIG(s, "server_to_client_bps");
    x->jain_index = num(s, "jain_index", 0, 1);
    x->retransmits = U32(s, "retransmits");
    r->local.seconds = num(s, "seconds", 0, 1e7);
    text(s, "congestion", r->local.congestion, sizeof(r->local.congestion));
    text(s, "client_send_method", r->local.send_method, sizeof(r->local.send_method));
    text(s, "server_send_method", r->remote.send_method, sizeof(r->remote.send_method));
    read_cpu(item(cpu, "local"), &r->local.cpu);
    read_cpu(item(cpu, "remote"), &r->remote.cpu);
    x->local_cores_per_10g = BIG(item(s, "cores_per_10gbps"), "local");
    x->remote_cores_per_10g = BIG(item(s, "cores_per_10gbps"), "remote");
    x->local_cpu_ns_per_byte = BIG(item(s, "cpu_ns_per_byte"), "local");
    x->remote_cpu_ns_per_byte = BIG(item(s, "cpu_ns_per_byte"), "remote");
    x->local_own_cores_per_10g = own(item(s, "own_cores_per_10gbps"), "local");
    x->remote_own_cores_per_10g = own(item(s, "own_cores_per_10gbps"), "remote");
    x->local_own_cpu_us_per_txn = own(item(s, "own_cpu_us_per_transaction"), "local");
    x->remote_own_cpu_us_per_txn = own(item(s, "own_cpu_us_per_transaction"), "remote");
    x->transactions = U64(s, "transactions");
    x->transactions_per_s = BIG(s, "transactions_per_s");
    x->timeouts = U64(s, "timeouts");
    x->server_transactions = U64(s, "server_transactions");
    x->local_cpu_us_per_txn = BIG(cost, "local");
    x->remote_cpu_us_per_txn = BIG(cost, "remote");
    read_latency(item(s, "latency_us"), &x->latency);
    x->udp = cJSON_IsObject(item(s, "udp"));
    if (x->udp)
        read_udp(item(s, "udp"), &x->u);
}

static void read_placement(const cJSON *pl, struct run_result *r)
{
    text(pl, "client_cpus", r->local.cpus, sizeof(r->local.cpus));
    text(pl, "server_cpus", r->remote.cpus, sizeof(r->remote.cpus));
    text(pl, "client_cpus_seen", r->local.cpus_seen, sizeof(r->local.cpus_seen));
    text(pl, "server_cpus_seen", r->remote.cpus_seen, sizeof(r->remote.cpus_seen));
    r->local.threads = (uint32_t)num(pl, "client_threads", 0, 65535);
    r->remote.threads = (uint32_t)num(pl, "server_threads", 0, 65535);
    r->local.valid = true;
    r->remote.valid = r->remote.threads > 0; /* else the server reported nothing */
}

/* warnings[], one line: the document does not say which side each came from. */
static void read_warnings(const cJSON *arr, struct run_result *r)
{
    const cJSON *w;
    size_t at = 0;

    cJSON_ArrayForEach(w, arr)
    {
        char one[256];
        int n;
        if (!cJSON_IsString(w) || at + 3 >= sizeof(r->note))
            continue;
        snprintf(one, sizeof(one), "%s", w->valuestring);
        for (char *c = one; *c; c++)
            if ((unsigned char)*c < ' ' || (unsigned char)*c > '~')
                *c = '?';
        n = snprintf(r->note + at, sizeof(r->note) - at, "%s%s", at ? "; " : "", one);
        at = n < 0 ? at : at + (size_t)n >= sizeof(r->note) ? sizeof(r->note) - 1 : at + (size_t)n;
    }
}

int result_from_doc(const cJSON *doc, struct run_result *r, char *err, size_t errlen)
{
    char perr[256];

    memset(r, 0, sizeof(*r));
    if (!cJSON_IsObject(doc) ||
        params_from_json(item(doc, "params"), &r->params, perr, sizeof(perr))) {
        snprintf(err, errlen, "the run document %s",
                 cJSON_IsObject(doc) ? "holds invalid parameters" : "is not an object");
        return -EINVAL;
    }
    snprintf(r->test, sizeof(r->test), "%s", params_test_name(r->params.test));
    text(doc, "server", r->server, sizeof(r->server));
    text(doc, "started_at", r->started_at, sizeof(r->started_at));
    text(doc, "server_version", r->remote.version, sizeof(r->remote.version));
    text(doc, "netrig_version", r->local.version, sizeof(r->local.version));
    read_placement(item(doc, "placement"), r);
    read_summary(item(doc, "summary"), r);
    read_warnings(item(doc, "warnings"), r);
    r->partial = cJSON_IsTrue(item(doc, "partial"));
    text(doc, "error", r->error, sizeof(r->error));
    if (read_flows(item(doc, "flows"), r)) {
        snprintf(err, errlen, "out of memory reading a run document");
        return -ENOMEM;
    }
    if (test_kind_is(&r->params, TEST_KIND_MPTCP))
        result_json_mptcp_from_doc(item(doc, "flows"), r->nflows, &r->local, &r->remote);
    return 0;
}
