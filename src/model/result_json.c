/* result_json: results as JSON, the one encoding the client, the daemon and the history share.
 * Reads and fills the result model only. */
#include "result_json.h"

#include "cpujson.h"
#include "result_json_mptcp.h"
#include "samples_json.h"
#include "test_kind.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double rate(uint64_t bytes, double s) { return s > 0 ? (double)bytes * 8.0 / s : 0.0; }

static cJSON *cpu_json(const struct cpu_usage *c)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "user_pct", c->user_pct);
    cJSON_AddNumberToObject(o, "system_pct", c->system_pct);
    cJSON_AddNumberToObject(o, "softirq_pct", c->softirq_pct);
    cJSON_AddNumberToObject(o, "irq_pct", c->irq_pct);
    cJSON_AddNumberToObject(o, "iowait_pct", c->iowait_pct);
    cJSON_AddNumberToObject(o, "steal_pct", c->steal_pct);
    cJSON_AddNumberToObject(o, "idle_pct", c->idle_pct);
    cJSON_AddNumberToObject(o, "busy_pct", c->busy_pct);
    cJSON_AddNumberToObject(o, "busy_cores", c->busy_cores);
    cJSON_AddNumberToObject(o, "threads_user_pct", c->threads_user_pct);
    cJSON_AddNumberToObject(o, "threads_system_pct", c->threads_system_pct);
    cJSON_AddNumberToObject(o, "interrupts_per_s", c->intr_per_s);
    cJSON_AddNumberToObject(o, "cpus", c->ncpu);
    cJSON_AddBoolToObject(o, "valid", c->valid);
    cpujson_add(o, c);
    return o;
}

void result_json_add_interval(cJSON *o, const struct run_result *r, const struct side_result *s,
                              const struct interval *iv)
{
    double len = iv->end_s - iv->start_s;
    uint64_t bytes = iv->sent_bytes + iv->recv_bytes;

    cJSON_AddNumberToObject(o, "start_s", iv->start_s);
    cJSON_AddNumberToObject(o, "end_s", iv->end_s);
    cJSON_AddBoolToObject(o, "omitted", iv->omitted);
    cJSON_AddNumberToObject(o, "bytes", (double)bytes);
    cJSON_AddNumberToObject(o, "throughput_bps", rate(bytes, len));
    cJSON_AddNumberToObject(o, "sent_bytes", (double)iv->sent_bytes);
    cJSON_AddNumberToObject(o, "received_bytes", (double)iv->recv_bytes);
    cJSON_AddNumberToObject(o, "retransmits", (double)result_interval_retrans(iv));
    if (params_is_transactional(&r->params)) {
        cJSON_AddNumberToObject(o, "transactions", (double)iv->txns);
        cJSON_AddNumberToObject(o, "transactions_per_s", len > 0 ? iv->txns / len : 0);
        cJSON_AddNumberToObject(o, "latency_mean_us",
                                iv->txns ? iv->lat_sum_ns / 1e3 / (double)iv->txns : 0);
    }
    cJSON_AddItemToObject(o, "cpu", cpu_json(&iv->cpu));
    if (iv->flows) {
        cJSON *fa = cJSON_AddArrayToObject(o, "flows");
        for (uint32_t i = 0; i < s->nflows; i++) {
            cJSON *f = cJSON_CreateObject();
            cJSON_AddNumberToObject(f, "id", i);
            cJSON_AddNumberToObject(f, "bytes", (double)iv->flows[i].bytes);
            cJSON_AddNumberToObject(f, "throughput_bps", rate(iv->flows[i].bytes, len));
            cJSON_AddNumberToObject(f, "retransmits",
                                    (double)result_interval_flow_retrans(&r->params, iv, i));
            cJSON_AddNumberToObject(f, "rtt_us", iv->flows[i].rtt_us);
            cJSON_AddNumberToObject(f, "cwnd", iv->flows[i].cwnd);
            result_json_mptcp_add_interval_flow(f, s, iv, i);
            cJSON_AddItemToArray(fa, f);
        }
    }
}

static const char *dir_name(bool client_sends)
{
    return client_sends ? "client_to_server" : "server_to_client";
}

static cJSON *flow_json(const struct run_result *r, const struct flow_summary *f)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "id", f->id);
    cJSON_AddStringToObject(o, "direction", dir_name(f->client_sends));
    cJSON_AddNumberToObject(o, "bytes", (double)f->bytes);
    cJSON_AddNumberToObject(o, "throughput_bps", f->throughput_bps);
    cJSON_AddNumberToObject(o, "sender_bytes", (double)f->sent_bytes);
    cJSON_AddNumberToObject(o, "sender_throughput_bps", f->sender_bps);
    cJSON_AddNumberToObject(o, "retransmits", f->has_sender_tcpinfo ? (double)f->retransmits : -1);
    cJSON_AddNumberToObject(o, "rtt_us", f->rtt_us);
    cJSON_AddNumberToObject(o, "min_rtt_us", f->min_rtt_us);
    cJSON_AddNumberToObject(o, "cwnd", f->cwnd);
    cJSON_AddNumberToObject(o, "snd_wnd", f->snd_wnd);
    cJSON_AddNumberToObject(o, "delivery_rate_bps", (double)f->delivery_rate_bps);
    cJSON_AddNumberToObject(o, "busy_us", (double)f->busy_us);
    cJSON_AddNumberToObject(o, "rwnd_limited_us", (double)f->rwnd_limited_us);
    cJSON_AddNumberToObject(o, "sndbuf_limited_us", (double)f->sndbuf_limited_us);
    if (test_kind_is(&r->params, TEST_KIND_DRAINS)) {
        cJSON_AddNumberToObject(o, "sender_wait_s", f->send_wait_s);
        cJSON_AddNumberToObject(o, "receiver_wait_s", f->recv_wait_s);
        cJSON_AddNumberToObject(o, "sndbuf", f->sndbuf);
        cJSON_AddNumberToObject(o, "rcvbuf", f->rcvbuf);
        cJSON_AddNumberToObject(o, "notsent_lowat", f->notsent_lowat);
        cJSON_AddNumberToObject(o, "rtt_mean_us", f->rtt_mean_us);
        cJSON_AddNumberToObject(o, "snd_wnd_mean", f->snd_wnd_mean);
        cJSON_AddNumberToObject(o, "inflight_mean", f->inflight_mean);
    }
    cJSON_AddNumberToObject(o, "client_cpu", f->client_cpu);
    cJSON_AddNumberToObject(o, "server_cpu", f->server_cpu);
    result_json_mptcp_add_run_flow(o, r, f->id);
    if (r->params.zerocopy_rx) {
        cJSON_AddNumberToObject(o, "rx_zerocopy_bytes", (double)f->rx_zc_bytes);
        cJSON_AddNumberToObject(o, "rx_zerocopy_fraction", f->rx_zc_fraction);
    }
    if (params_is_transactional(&r->params)) {
        cJSON_AddNumberToObject(o, "transactions", (double)f->txns);
        cJSON_AddNumberToObject(o, "transactions_per_s", f->transactions_per_s);
        cJSON_AddNumberToObject(o, "timeouts", (double)f->timeouts);
    }
    if (test_kind_is(&r->params, TEST_KIND_DATAGRAMS)) {
        cJSON_AddNumberToObject(o, "datagrams_sent", (double)f->udp_sent);
        cJSON_AddNumberToObject(o, "datagrams_received", (double)f->udp_received);
        cJSON_AddNumberToObject(o, "datagrams_lost", (double)f->udp_lost);
        cJSON_AddNumberToObject(o, "jitter_us", f->udp_jitter_us);
    }
    return o;
}

/* A cost figure counting each end's own process CPU: the ends that measured it (-1: not). */
static void add_own(cJSON *o, const char *key, double local, double remote)
{
    cJSON *c;

    if (local < 0 && remote < 0)
        return;
    c = cJSON_AddObjectToObject(o, key);
    if (local >= 0)
        cJSON_AddNumberToObject(c, "local", local);
    if (remote >= 0)
        cJSON_AddNumberToObject(c, "remote", remote);
}

static void add_transactions(cJSON *o, const struct run_summary *s)
{
    cJSON *l;

    cJSON_AddNumberToObject(o, "transactions", (double)s->transactions);
    cJSON_AddNumberToObject(o, "transactions_per_s", s->transactions_per_s);
    cJSON_AddNumberToObject(o, "timeouts", (double)s->timeouts);
    cJSON_AddNumberToObject(o, "server_transactions", (double)s->server_transactions);
    l = cJSON_AddObjectToObject(o, "cpu_us_per_transaction");
    cJSON_AddNumberToObject(l, "local", s->local_cpu_us_per_txn);
    cJSON_AddNumberToObject(l, "remote", s->remote_cpu_us_per_txn);
    add_own(o, "own_cpu_us_per_transaction", s->local_own_cpu_us_per_txn,
            s->remote_own_cpu_us_per_txn);
    l = cJSON_CreateObject();
    cJSON_AddNumberToObject(l, "min", s->latency.min_us);
    cJSON_AddNumberToObject(l, "mean", s->latency.mean_us);
    cJSON_AddNumberToObject(l, "p50", s->latency.p50_us);
    cJSON_AddNumberToObject(l, "p90", s->latency.p90_us);
    cJSON_AddNumberToObject(l, "p99", s->latency.p99_us);
    cJSON_AddNumberToObject(l, "p999", s->latency.p999_us);
    cJSON_AddNumberToObject(l, "p9999", s->latency.p9999_us);
    cJSON_AddNumberToObject(l, "max", s->latency.max_us);
    cJSON_AddItemToObject(o, "latency_us", l);
}

static void add_udp(cJSON *o, const struct run_udp *u)
{
    cJSON *x = cJSON_AddObjectToObject(o, "udp");

    cJSON_AddNumberToObject(x, "datagrams_sent", (double)u->sent);
    cJSON_AddNumberToObject(x, "datagrams_received", (double)u->received);
    cJSON_AddNumberToObject(x, "datagrams_lost", (double)u->lost);
    cJSON_AddNumberToObject(x, "loss_pct", u->loss_pct);
    cJSON_AddNumberToObject(x, "duplicates", (double)u->duplicates);
    cJSON_AddNumberToObject(x, "out_of_order", (double)u->out_of_order);
    cJSON_AddNumberToObject(x, "send_drops", (double)u->send_drops);
    cJSON_AddNumberToObject(x, "jitter_us", u->jitter_us);
    cJSON_AddNumberToObject(x, "sent_pps", u->sent_pps);
    cJSON_AddNumberToObject(x, "received_pps", u->received_pps);
    cJSON_AddBoolToObject(x, "shared_clock", u->shared_clock);
    if (u->shared_clock) {
        cJSON *d = cJSON_AddObjectToObject(x, "one_way_delay_us");
        cJSON_AddNumberToObject(d, "mean", u->owd_mean_us);
        cJSON_AddNumberToObject(d, "min", u->owd_min_us);
        cJSON_AddNumberToObject(d, "max", u->owd_max_us);
    } else {
        cJSON_AddNullToObject(x, "one_way_delay_us");
    }
}

static cJSON *summary_json(const struct run_result *r)
{
    const struct run_summary *s = &r->summary;
    cJSON *o = cJSON_CreateObject(), *cpu, *cost;

    cJSON_AddNumberToObject(o, "throughput_bps", s->throughput_bps);
    cJSON_AddNumberToObject(o, "bytes", (double)s->bytes);
    cJSON_AddNumberToObject(o, "sender_bytes", (double)s->sent_bytes);
    cJSON_AddNumberToObject(o, "sender_throughput_bps", s->sender_bps);
    cJSON_AddNumberToObject(o, "client_to_server_bps", s->up_bps);
    cJSON_AddNumberToObject(o, "server_to_client_bps", s->down_bps);
    cJSON_AddNumberToObject(o, "jain_index", s->jain_index);
    cJSON_AddNumberToObject(o, "retransmits", s->retransmits);
    cJSON_AddNumberToObject(o, "seconds", r->local.seconds);
    cJSON_AddStringToObject(o, "congestion", r->local.congestion);
    cJSON_AddStringToObject(o, "client_send_method", r->local.send_method);
    cJSON_AddStringToObject(o, "server_send_method", r->remote.send_method);
    cJSON_AddStringToObject(o, "client_recv_method", r->local.recv_method);
    cJSON_AddStringToObject(o, "server_recv_method", r->remote.recv_method);
    cJSON_AddBoolToObject(o, "receiver_copy_counted", !s->rx_copy_skipped);
    {
        char note[400];
        result_rx_note(r, note, sizeof(note));
        cJSON_AddStringToObject(o, "rx_note", note);
    }
    if (r->params.zerocopy_rx) {
        cJSON_AddNumberToObject(o, "rx_zerocopy_bytes", (double)s->rx_zc_bytes);
        cJSON_AddNumberToObject(o, "rx_zerocopy_fraction", s->rx_zc_fraction);
    }
    cpu = cJSON_AddObjectToObject(o, "cpu");
    cJSON_AddItemToObject(cpu, "local", cpu_json(&r->local.cpu));
    cJSON_AddItemToObject(cpu, "remote", cpu_json(&r->remote.cpu));
    cost = cJSON_AddObjectToObject(o, "cores_per_10gbps");
    cJSON_AddNumberToObject(cost, "local", s->local_cores_per_10g);
    cJSON_AddNumberToObject(cost, "remote", s->remote_cores_per_10g);
    cost = cJSON_AddObjectToObject(o, "cpu_ns_per_byte");
    cJSON_AddNumberToObject(cost, "local", s->local_cpu_ns_per_byte);
    cJSON_AddNumberToObject(cost, "remote", s->remote_cpu_ns_per_byte);
    add_own(o, "own_cores_per_10gbps", s->local_own_cores_per_10g, s->remote_own_cores_per_10g);
    if (params_is_transactional(&r->params))
        add_transactions(o, s);
    if (s->udp)
        add_udp(o, &s->u);
    return o;
}

cJSON *result_json_run(const struct run_result *r)
{
    cJSON *o = cJSON_CreateObject(), *arr, *pl, *warn;

    cJSON_AddStringToObject(o, "netrig_version", NETRIG_VERSION);
    cJSON_AddStringToObject(o, "test", r->test);
    cJSON_AddStringToObject(o, "title", r->params.title);
    cJSON_AddStringToObject(o, "started_at", r->started_at);
    cJSON_AddStringToObject(o, "server", r->server);
    cJSON_AddStringToObject(o, "server_version", r->remote.version);
    cJSON_AddItemToObject(o, "params", params_to_json(&r->params));
    pl = cJSON_AddObjectToObject(o, "placement");
    cJSON_AddStringToObject(pl, "client_cpus", r->local.cpus);
    cJSON_AddStringToObject(pl, "server_cpus", r->remote.cpus);
    cJSON_AddStringToObject(pl, "client_cpus_seen", r->local.cpus_seen);
    cJSON_AddStringToObject(pl, "server_cpus_seen", r->remote.cpus_seen);
    cJSON_AddNumberToObject(pl, "client_threads", r->local.threads);
    cJSON_AddNumberToObject(pl, "server_threads", r->remote.threads);
    arr = cJSON_AddArrayToObject(o, "intervals");
    for (uint32_t i = 0; i < r->local.nintervals; i++) {
        cJSON *iv = cJSON_CreateObject();
        result_json_add_interval(iv, r, &r->local, &r->local.intervals[i]);
        cJSON_AddItemToArray(arr, iv);
    }
    /* the server's own interval totals (it sends no per-flow cells) */
    arr = cJSON_AddArrayToObject(o, "server_intervals");
    for (uint32_t i = 0; i < r->remote.nintervals; i++) {
        const struct interval *iv = &r->remote.intervals[i];
        cJSON *io = cJSON_CreateObject();
        uint64_t b = iv->sent_bytes + iv->recv_bytes;
        cJSON_AddNumberToObject(io, "start_s", iv->start_s);
        cJSON_AddNumberToObject(io, "end_s", iv->end_s);
        cJSON_AddBoolToObject(io, "omitted", iv->omitted);
        cJSON_AddNumberToObject(io, "sent_bytes", (double)iv->sent_bytes);
        cJSON_AddNumberToObject(io, "received_bytes", (double)iv->recv_bytes);
        cJSON_AddNumberToObject(io, "throughput_bps", rate(b, iv->end_s - iv->start_s));
        cJSON_AddNumberToObject(io, "retransmits", iv->retrans);
        cJSON_AddItemToArray(arr, io);
    }
    arr = cJSON_AddArrayToObject(o, "flows");
    for (uint32_t i = 0; i < r->nflows; i++)
        cJSON_AddItemToArray(arr, flow_json(r, &r->flows[i]));
    cJSON_AddItemToObject(o, "summary", summary_json(r));
    pl = cJSON_AddObjectToObject(o, "load");
    cJSON_AddItemToObject(pl, "client", result_json_hostload(r->local.hostload));
    cJSON_AddItemToObject(pl, "server", result_json_hostload(r->remote.hostload));
    warn = cJSON_AddArrayToObject(o, "warnings");
    if (r->local.warning[0])
        cJSON_AddItemToArray(warn, cJSON_CreateString(r->local.warning));
    if (r->remote.warning[0])
        cJSON_AddItemToArray(warn, cJSON_CreateString(r->remote.warning));
    if (r->note[0])
        cJSON_AddItemToArray(warn, cJSON_CreateString(r->note));
    for (uint32_t i = 0; i < r->nwarnings && i < RESULT_MAX_WARNINGS; i++)
        cJSON_AddItemToArray(warn, cJSON_CreateString(r->warnings[i]));
    cJSON_AddStringToObject(o, "ended_by", r->ended_by);
    cJSON_AddBoolToObject(o, "partial", r->partial);
    if (r->error[0])
        cJSON_AddStringToObject(o, "error", r->error);
    return o;
}

/* ---- a side on the wire ---- */

static cJSON *tcpinfo_json(const struct tcpinfo *t)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddBoolToObject(o, "valid", t->valid);
    cJSON_AddNumberToObject(o, "rtt_us", t->rtt_us);
    cJSON_AddNumberToObject(o, "rttvar_us", t->rttvar_us);
    cJSON_AddNumberToObject(o, "min_rtt_us", t->min_rtt_us);
    cJSON_AddNumberToObject(o, "cwnd", t->snd_cwnd);
    cJSON_AddNumberToObject(o, "mss", t->snd_mss);
    cJSON_AddNumberToObject(o, "pmtu", t->pmtu);
    cJSON_AddNumberToObject(o, "snd_wnd", t->snd_wnd);
    cJSON_AddNumberToObject(o, "retransmits", t->total_retrans);
    cJSON_AddNumberToObject(o, "notsent_bytes", t->notsent_bytes);
    cJSON_AddNumberToObject(o, "delivery_rate_bps", (double)t->delivery_rate_bps);
    cJSON_AddNumberToObject(o, "pacing_rate_bps", (double)t->pacing_rate_bps);
    cJSON_AddNumberToObject(o, "busy_us", (double)t->busy_us);
    cJSON_AddNumberToObject(o, "rwnd_limited_us", (double)t->rwnd_limited_us);
    cJSON_AddNumberToObject(o, "sndbuf_limited_us", (double)t->sndbuf_limited_us);
    cJSON_AddNumberToObject(o, "bytes_retrans", (double)t->bytes_retrans);
    cJSON_AddNumberToObject(o, "data_segs_out", t->data_segs_out);
    cJSON_AddNumberToObject(o, "ca_state", t->ca_state);
    return o;
}

static cJSON *udp_rx_json(const struct result_udp_rx *x)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "received", (double)x->received);
    cJSON_AddNumberToObject(o, "duplicates", (double)x->duplicates);
    cJSON_AddNumberToObject(o, "out_of_order", (double)x->out_of_order);
    cJSON_AddNumberToObject(o, "max_seq_plus1", (double)x->max_seq_plus1);
    cJSON_AddNumberToObject(o, "jitter_ns", x->jitter_ns);
    cJSON_AddNumberToObject(o, "owd_sum_ns", x->owd_sum_ns);
    cJSON_AddNumberToObject(o, "owd_min_ns", (double)x->owd_min_ns);
    cJSON_AddNumberToObject(o, "owd_max_ns", (double)x->owd_max_ns);
    return o;
}

cJSON *result_json_side(const struct side_result *s)
{
    cJSON *o = cJSON_CreateObject(), *arr;

    cJSON_AddStringToObject(o, "version", s->version);
    cJSON_AddNumberToObject(o, "seconds", s->seconds);
    cJSON_AddNumberToObject(o, "threads", s->threads);
    cJSON_AddStringToObject(o, "cpus", s->cpus);
    cJSON_AddStringToObject(o, "cpus_seen", s->cpus_seen);
    cJSON_AddStringToObject(o, "congestion", s->congestion);
    cJSON_AddStringToObject(o, "send_method", s->send_method);
    cJSON_AddStringToObject(o, "recv_method", s->recv_method);
    cJSON_AddStringToObject(o, "warning", s->warning);
    cJSON_AddStringToObject(o, "boot_id", s->boot_id);
    cJSON_AddItemToObject(o, "cpu", cpu_json(&s->cpu));
    cJSON_AddItemToObject(o, "load", result_json_hostload(s->hostload));
    arr = cJSON_AddArrayToObject(o, "flows");
    for (uint32_t i = 0; i < s->nflows; i++) {
        const struct side_flow *f = &s->flows[i];
        cJSON *fo = cJSON_CreateObject();
        cJSON_AddNumberToObject(fo, "id", f->id);
        cJSON_AddBoolToObject(fo, "sender", f->sender);
        cJSON_AddNumberToObject(fo, "bytes", (double)f->bytes);
        cJSON_AddNumberToObject(fo, "rx_zc_bytes", (double)f->rx_zc_bytes);
        cJSON_AddNumberToObject(fo, "seconds", f->seconds);
        cJSON_AddNumberToObject(fo, "cpu", f->cpu);
        cJSON_AddNumberToObject(fo, "err", f->err);
        cJSON_AddNumberToObject(fo, "txns", (double)f->txns);
        cJSON_AddNumberToObject(fo, "timeouts", (double)f->timeouts);
        cJSON_AddNumberToObject(fo, "sent_pkts", (double)f->sent_pkts);
        cJSON_AddNumberToObject(fo, "send_drops", (double)f->send_drops);
        cJSON_AddNumberToObject(fo, "wait_s", f->wait_s);
        cJSON_AddNumberToObject(fo, "sndbuf", f->sndbuf);
        cJSON_AddNumberToObject(fo, "rcvbuf", f->rcvbuf);
        cJSON_AddNumberToObject(fo, "notsent_lowat", f->notsent_lowat);
        cJSON_AddNumberToObject(fo, "samples", f->samples);
        cJSON_AddNumberToObject(fo, "rtt_mean_us", f->rtt_mean_us);
        cJSON_AddNumberToObject(fo, "snd_wnd_mean", f->snd_wnd_mean);
        cJSON_AddNumberToObject(fo, "inflight_mean", f->inflight_mean);
        if (f->has_udp_rx)
            cJSON_AddItemToObject(fo, "udp_rx", udp_rx_json(&f->udp));
        cJSON_AddItemToObject(fo, "tcpinfo", tcpinfo_json(&f->ti));
        result_json_mptcp_add_side_flow(fo, s, i);
        cJSON_AddItemToArray(arr, fo);
    }
    /* a day at 0.1 s intervals would overflow the client's message limit: send the last
     * RESULT_JSON_MAX_WIRE_INTERVALS only */
    arr = cJSON_AddArrayToObject(o, "intervals");
    for (uint32_t i = s->nintervals > RESULT_JSON_MAX_WIRE_INTERVALS
                          ? s->nintervals - RESULT_JSON_MAX_WIRE_INTERVALS
                          : 0;
         i < s->nintervals; i++) {
        const struct interval *iv = &s->intervals[i];
        cJSON *io = cJSON_CreateObject();
        cJSON_AddNumberToObject(io, "start_s", iv->start_s);
        cJSON_AddNumberToObject(io, "end_s", iv->end_s);
        cJSON_AddBoolToObject(io, "omitted", iv->omitted);
        cJSON_AddNumberToObject(io, "sent_bytes", (double)iv->sent_bytes);
        cJSON_AddNumberToObject(io, "received_bytes", (double)iv->recv_bytes);
        cJSON_AddNumberToObject(io, "retransmits", iv->retrans);
        cJSON_AddItemToArray(arr, io);
    }
    if (s->samples)
        cJSON_AddItemToObject(o, "samples", samples_json(s->samples, NULL));
    result_json_add_host(o, "host", s->host, s->host_declined);
    return o;
}

cJSON *result_json_samples(const struct run_result *r)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddItemToObject(
        o, "client", r->local.samples ? samples_json(r->local.samples, NULL) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "server",
                          r->remote.samples ? samples_json(r->remote.samples, NULL)
                                            : cJSON_CreateNull());
    return o;
}

const cJSON *result_json_at(const cJSON *o, const char *path)
{
    char key[40];

    while (o && *path) {
        size_t n = strcspn(path, ".");
        snprintf(key, sizeof(key), "%.*s", (int)n, path);
        o = cJSON_GetObjectItemCaseSensitive(o, key);
        path += n + (path[n] == '.');
    }
    return o;
}

int result_json_num(const cJSON *o, const char *key, double lo, double hi, double def, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    *out = def;
    if (!v)
        return 0;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
        v->valuedouble > hi)
        return -EINVAL;
    *out = v->valuedouble;
    return 0;
}

static int num(const cJSON *o, const char *key, double lo, double hi, double *out)
{
    return result_json_num(o, key, lo, hi, 0, out);
}

static void str(const cJSON *o, const char *key, char *dst, size_t len)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    if (cJSON_IsString(v))
        snprintf(dst, len, "%s", v->valuestring);
}

#define U32MAX 4294967295.0
#define U64MAX 1.8e19

static int parse_cpu(const cJSON *o, struct cpu_usage *c)
{
    double v;
    int bad = 0;

    memset(c, 0, sizeof(*c));
    if (!o)
        return 0;
    if (!cJSON_IsObject(o))
        return -EINVAL;
#define PCT(k, f) bad |= num(o, k, 0, 100.0001, &v), c->f = v
    PCT("user_pct", user_pct);
    PCT("system_pct", system_pct);
    PCT("softirq_pct", softirq_pct);
    PCT("irq_pct", irq_pct);
    PCT("iowait_pct", iowait_pct);
    PCT("steal_pct", steal_pct);
    PCT("idle_pct", idle_pct);
    PCT("busy_pct", busy_pct);
    PCT("threads_user_pct", threads_user_pct);
    PCT("threads_system_pct", threads_system_pct);
#undef PCT
    bad |= num(o, "busy_cores", 0, 1e6, &v), c->busy_cores = v;
    bad |= num(o, "interrupts_per_s", 0, 1e12, &v), c->intr_per_s = v;
    bad |= num(o, "cpus", 0, 1e6, &v), c->ncpu = (int)v;
    c->valid = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "valid"));
    bad |= cpujson_parse(o, c);
    return bad ? -EINVAL : 0;
}

static int parse_tcpinfo(const cJSON *o, struct tcpinfo *t)
{
    double v;
    int bad = 0;

    memset(t, 0, sizeof(*t));
    if (!cJSON_IsObject(o))
        return o ? -EINVAL : 0;
    t->valid = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "valid"));
#define U32(k, f) bad |= num(o, k, 0, U32MAX, &v), t->f = (uint32_t)v
#define U64(k, f) bad |= num(o, k, 0, U64MAX, &v), t->f = (uint64_t)v
    U32("rtt_us", rtt_us);
    U32("rttvar_us", rttvar_us);
    U32("min_rtt_us", min_rtt_us);
    U32("cwnd", snd_cwnd);
    U32("mss", snd_mss);
    U32("pmtu", pmtu);
    U32("snd_wnd", snd_wnd);
    U32("retransmits", total_retrans);
    U32("notsent_bytes", notsent_bytes);
    U32("data_segs_out", data_segs_out);
    U64("delivery_rate_bps", delivery_rate_bps);
    U64("pacing_rate_bps", pacing_rate_bps);
    U64("busy_us", busy_us);
    U64("rwnd_limited_us", rwnd_limited_us);
    U64("sndbuf_limited_us", sndbuf_limited_us);
    U64("bytes_retrans", bytes_retrans);
#undef U32
#undef U64
    bad |= num(o, "ca_state", 0, 255, &v), t->ca_state = (uint8_t)v;
    return bad ? -EINVAL : 0;
}

static int parse_udp_rx(const cJSON *o, struct side_flow *f)
{
    struct result_udp_rx *x = &f->udp;
    double v;
    int bad = 0;

    if (!o)
        return 0;
    if (!cJSON_IsObject(o))
        return -EINVAL;
    f->has_udp_rx = true;
#define U64(k, fld) bad |= num(o, k, 0, U64MAX, &v), x->fld = (uint64_t)v
    U64("received", received);
    U64("duplicates", duplicates);
    U64("out_of_order", out_of_order);
    U64("max_seq_plus1", max_seq_plus1);
    U64("owd_min_ns", owd_min_ns);
    U64("owd_max_ns", owd_max_ns);
#undef U64
    bad |= num(o, "jitter_ns", 0, 1e15, &x->jitter_ns);
    bad |= num(o, "owd_sum_ns", 0, 1e30, &x->owd_sum_ns);
    return bad ? -EINVAL : 0;
}

/* The application's figures of a stream flow (absent from older peers: unknown). */
static int parse_app(const cJSON *fo, struct side_flow *f)
{
    double v;
    int bad;

    f->wait_s = -1;
    if (cJSON_GetObjectItemCaseSensitive(fo, "wait_s"))
        bad = num(fo, "wait_s", -1, 1e7, &f->wait_s);
    else
        bad = 0;
    bad |= num(fo, "sndbuf", 0, U32MAX, &v);
    f->sndbuf = (uint32_t)v;
    bad |= num(fo, "rcvbuf", 0, U32MAX, &v);
    f->rcvbuf = (uint32_t)v;
    bad |= num(fo, "notsent_lowat", 0, U32MAX, &v); /* absent (an older server): 0 */
    f->notsent_lowat = (uint32_t)v;
    bad |= num(fo, "samples", 0, U32MAX, &v);
    f->samples = (uint32_t)v;
    bad |= num(fo, "rtt_mean_us", 0, 1e9, &f->rtt_mean_us);
    bad |= num(fo, "snd_wnd_mean", 0, U32MAX, &f->snd_wnd_mean);
    bad |= num(fo, "inflight_mean", 0, 1e12, &f->inflight_mean);
    return bad;
}

static int parse_flows(const cJSON *arr, struct side_result *out, char *err, size_t errlen)
{
    const cJSON *fo;

    cJSON_ArrayForEach(fo, arr)
    {
        double id, v;
        struct side_flow *f;
        int bad;

        if (!cJSON_IsObject(fo) || !cJSON_GetObjectItemCaseSensitive(fo, "id") ||
            num(fo, "id", 0, out->nflows - 1, &id) || id != floor(id)) {
            snprintf(err, errlen, "peer results name a flow outside 0..%u", out->nflows - 1);
            return -EPROTO;
        }
        f = &out->flows[(uint32_t)id];
        if (f->id != UINT32_MAX) {
            snprintf(err, errlen, "peer results name flow %u twice", (uint32_t)id);
            return -EPROTO;
        }
        f->id = (uint32_t)id;
        f->sender = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(fo, "sender"));
        bad = num(fo, "bytes", 0, U64MAX, &v);
        f->bytes = (uint64_t)v;
        bad |= num(fo, "rx_zc_bytes", 0, U64MAX, &v);
        f->rx_zc_bytes = (uint64_t)v;
        bad |= num(fo, "seconds", 0, 1e7, &f->seconds);
        bad |= num(fo, "cpu", -1, 65535, &v);
        f->cpu = (int)v;
        bad |= num(fo, "err", 0, 65535, &v);
        f->err = (int)v;
        bad |= num(fo, "txns", 0, U64MAX, &v);
        f->txns = (uint64_t)v;
        bad |= num(fo, "timeouts", 0, U64MAX, &v);
        f->timeouts = (uint64_t)v;
        bad |= num(fo, "sent_pkts", 0, U64MAX, &v);
        f->sent_pkts = (uint64_t)v;
        bad |= num(fo, "send_drops", 0, U64MAX, &v);
        f->send_drops = (uint64_t)v;
        bad |= parse_app(fo, f);
        bad |= parse_udp_rx(cJSON_GetObjectItemCaseSensitive(fo, "udp_rx"), f);
        bad |= parse_tcpinfo(cJSON_GetObjectItemCaseSensitive(fo, "tcpinfo"), &f->ti);
        if (bad) {
            snprintf(err, errlen, "peer results for flow %u hold an invalid value", f->id);
            return -EPROTO;
        }
    }
    return 0;
}

static int parse_intervals(const cJSON *arr, struct side_result *out)
{
    const cJSON *io;

    cJSON_ArrayForEach(io, arr)
    {
        struct interval *iv = result_side_next_interval(out);
        double v;
        int bad;

        if (!iv || !cJSON_IsObject(io))
            return iv ? -EINVAL : 0;
        bad = num(io, "start_s", 0, 1e7, &iv->start_s);
        bad |= num(io, "end_s", 0, 1e7, &iv->end_s);
        iv->omitted = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(io, "omitted"));
        bad |= num(io, "sent_bytes", 0, U64MAX, &v);
        iv->sent_bytes = (uint64_t)v;
        bad |= num(io, "received_bytes", 0, U64MAX, &v);
        iv->recv_bytes = (uint64_t)v;
        bad |= num(io, "retransmits", 0, U32MAX, &v);
        iv->retrans = (uint32_t)v;
        if (bad)
            return -EINVAL;
    }
    return 0;
}

int result_json_side_parse(const cJSON *o, uint32_t expect_flows, uint32_t max_intervals,
                           uint32_t max_ticks, struct side_result *out, char *err, size_t errlen)
{
    const cJSON *flows = cJSON_GetObjectItemCaseSensitive(o, "flows");
    const cJSON *ivs = cJSON_GetObjectItemCaseSensitive(o, "intervals");
    double v;
    int n_iv = cJSON_IsArray(ivs) ? cJSON_GetArraySize(ivs) : 0;

    err[0] = '\0';
    if (!cJSON_IsObject(o) || !cJSON_IsArray(flows) || (ivs && !cJSON_IsArray(ivs)) ||
        expect_flows == 0) {
        snprintf(err, errlen, "peer results lack a flows array");
        return -EPROTO;
    }
    if ((uint32_t)n_iv > max_intervals) {
        snprintf(err, errlen, "peer results hold %d intervals, more than the %u this test can have",
                 n_iv, max_intervals);
        return -EPROTO;
    }
    if (result_side_init(out, expect_flows, (uint32_t)n_iv)) {
        snprintf(err, errlen, "out of memory for the peer's results");
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < out->nflows; i++)
        out->flows[i].id = UINT32_MAX; /* marks flows the peer did not report */
    str(o, "version", out->version, sizeof(out->version));
    str(o, "cpus", out->cpus, sizeof(out->cpus));
    str(o, "cpus_seen", out->cpus_seen, sizeof(out->cpus_seen));
    str(o, "congestion", out->congestion, sizeof(out->congestion));
    str(o, "warning", out->warning, sizeof(out->warning));
    str(o, "send_method", out->send_method, sizeof(out->send_method));
    str(o, "recv_method", out->recv_method, sizeof(out->recv_method));
    str(o, "boot_id", out->boot_id, sizeof(out->boot_id));
    if (num(o, "seconds", 0, 1e7, &out->seconds) || num(o, "threads", 0, 65535, &v) ||
        parse_cpu(cJSON_GetObjectItemCaseSensitive(o, "cpu"), &out->cpu) ||
        parse_flows(flows, out, err, errlen) || parse_intervals(ivs, out) ||
        result_json_mptcp_parse_flows(flows, expect_flows, out) ||
        result_json_hostload_parse(cJSON_GetObjectItemCaseSensitive(o, "load"), &out->hostload) ||
        samples_json_parse(cJSON_GetObjectItemCaseSensitive(o, "samples"), expect_flows, max_ticks,
                           &out->samples, err, errlen)) {
        if (!err[0])
            snprintf(err, errlen, "peer results hold an invalid value");
        result_side_fini(out);
        return -EPROTO;
    }
    out->threads = (uint32_t)v;
    out->host_declined = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "host_declined")) != 0;
    /* the settings are the results' companion: refused ones do not void the measurement */
    result_json_host_parse(o, "host", "the server", &out->host, out->host_note,
                           sizeof(out->host_note));
    out->valid = true;
    return 0;
}
