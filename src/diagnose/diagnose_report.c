/* diagnose_report: the verdict, its evidence and the advice. */
#include "diagnose_report.h"

#include "audit.h"
#include "cpujson.h"
#include "result_json.h"
#include "units.h"
#include "wrap.h"

#include <string.h>

/* "sender: waited on its socket 98% of the time, SO_SNDBUF 16.8 MB, its busiest thread on
 * CPU 0 2% of the time (waiting for a CPU 0%)" */
static void end_text(const char *who, const char *buf_name, const struct diagnose_end *e, char *out,
                     size_t len)
{
    char b[32];
    size_t n = (size_t)snprintf(out, len, "%s: waited on its socket %.0f%% of the time", who,
                                100 * e->wait);

    if (e->buf && n < len) {
        units_format_bytes(e->buf, b, sizeof(b));
        n += (size_t)snprintf(out + n, len - n, ", %s %s", buf_name, b);
    }
    if (e->thread_known && n < len)
        n += (size_t)snprintf(out + n, len - n, ", its busiest thread on CPU %d %.0f%% of the time",
                              e->cpu, 100 * e->run);
    if (e->thread_known && e->runq >= 0 && n < len)
        n += (size_t)snprintf(out + n, len - n, " (waiting for a CPU %.0f%%)", 100 * e->runq);
    if (diagnose_end_cg_known(e) && e->usage.cg_quota_cores > 0 && n < len)
        snprintf(out + n, len - n,
                 ", its cgroup's quota %.2f CPU, throttled in %.0f of %.0f periods",
                 e->usage.cg_quota_cores, e->usage.cg_throttled, e->usage.cg_periods);
}

/* The fix with the end it names made concrete: "on the sender (the server, 10.0.0.2:5301):
 * ..." when that end is the peer (also in another namespace of this kernel), "(this host)"
 * when it is this process's. what starts with the server's HOST:PORT. */
static void fix_text(const char *what, const struct diagnose_sample *s, const char *tune, char *out,
                     size_t len)
{
    static const char *const ends[] = {"on the sender", "on the receiver"};
    int host_len = (int)strcspn(what, ", ");

    for (int i = 0; i < 2; i++) {
        size_t n = strlen(ends[i]);
        const struct diagnose_end *e = i ? &s->rcv : &s->snd;
        if (strncmp(tune, ends[i], n) || (tune[n] != ':' && tune[n] != ' '))
            continue;
        if (e->local)
            snprintf(out, len, "%s (this host)%s", ends[i], tune + n);
        else
            snprintf(out, len, "%s (the server, %.*s)%s", ends[i], host_len, what, tune + n);
        return;
    }
    snprintf(out, len, "%s", tune);
}

void diagnose_report_text(FILE *out, const char *what, const struct diagnose_sample *s,
                          const struct diagnose_verdict *v)
{
    char tp[32], a[32], b[32], c[32], d[32], line[320], fix[DIAG_TEXT_LEN + 128];

    units_format_rate(s->throughput_bps, tp, sizeof(tp));
    units_format_duration(v->srtt_us / 1e6, a, sizeof(a));
    units_format_duration(s->min_rtt_us / 1e6, b, sizeof(b));
    wrap_print(out, "netrig diagnose: ", 2, what);
    fprintf(out, "  throughput %s over %.1f s", tp, s->seconds);
    if (s->warmup_s > 0)
        fprintf(out, " after a %.2f s warm-up", s->warmup_s);
    fprintf(out, "; retransmitted %.3f%%%s%s\n", 100 * v->loss, s->cc[0] ? "; " : "", s->cc);
    fprintf(out,
            "  sender busy %.0f%%; of that receive-window limited %.0f%%, send-buffer "
            "limited %.0f%%\n",
            100 * v->busy, 100 * v->f_rwnd, 100 * v->f_sndbuf);
    if (s->samples) {
        units_format_bytes(s->inflight_mean, c, sizeof(c));
        units_format_bytes(s->wnd_mean, d, sizeof(d));
        fprintf(out, "  srtt %s (mean), min_rtt %s; in flight %s of a %s window per flow\n", a, b,
                c, d);
    } else {
        units_format_bytes((double)s->snd_wnd, c, sizeof(c));
        fprintf(out, "  srtt %s, min_rtt %s, peer window %s\n", a, b, c);
    }
    if (s->snd.known) {
        end_text("sender", "SO_SNDBUF", &s->snd, line, sizeof(line));
        wrap_print(out, "  ", 4, line);
    }
    if (s->rcv.known) {
        end_text("receiver", "SO_RCVBUF", &s->rcv, line, sizeof(line));
        wrap_print(out, "  ", 4, line);
    }
    fprintf(out, "\nVerdict: %s  [%s]\n", v->title, diagnose_id_name(v->id));
    for (size_t i = 0; i < v->nevidence; i++)
        wrap_print(out, "  - ", 4, v->evidence[i]);
    wrap_print(out, "Advice: ", 2, v->advice);
    if (v->tune[0]) {
        fix_text(what, s, v->tune, fix, sizeof(fix));
        wrap_print(out, "Fix: ", 2, fix);
    }
}

static cJSON *sender_json(const struct diagnose_sample *s, const struct diagnose_verdict *v)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "flows", s->flows);
    cJSON_AddNumberToObject(o, "seconds", s->seconds);
    cJSON_AddNumberToObject(o, "busy_us", (double)s->busy_us);
    cJSON_AddNumberToObject(o, "rwnd_limited_us", (double)s->rwnd_us);
    cJSON_AddNumberToObject(o, "sndbuf_limited_us", (double)s->sndbuf_us);
    cJSON_AddNumberToObject(o, "busy_fraction", v->busy);
    cJSON_AddNumberToObject(o, "rwnd_limited_fraction", v->f_rwnd);
    cJSON_AddNumberToObject(o, "sndbuf_limited_fraction", v->f_sndbuf);
    cJSON_AddNumberToObject(o, "retransmits", (double)s->retrans);
    cJSON_AddNumberToObject(o, "data_segs_out", (double)s->segs_out);
    cJSON_AddNumberToObject(o, "loss", v->loss);
    cJSON_AddNumberToObject(o, "mss", s->mss);
    cJSON_AddNumberToObject(o, "srtt_us", s->srtt_us);
    cJSON_AddNumberToObject(o, "min_rtt_us", s->min_rtt_us);
    cJSON_AddNumberToObject(o, "queue_delay_us", v->queue_us);
    cJSON_AddNumberToObject(o, "snd_wnd", (double)s->snd_wnd);
    cJSON_AddNumberToObject(o, "cwnd", (double)s->cwnd);
    cJSON_AddStringToObject(o, "congestion", s->cc);
    cJSON_AddNumberToObject(o, "samples", s->samples);
    cJSON_AddNumberToObject(o, "srtt_mean_us", s->rtt_mean_us);
    cJSON_AddNumberToObject(o, "snd_wnd_mean", s->wnd_mean);
    cJSON_AddNumberToObject(o, "inflight_mean", s->inflight_mean);
    return o;
}

static cJSON *end_json(const struct diagnose_end *e)
{
    cJSON *o = cJSON_CreateObject(), *t;

    cJSON_AddBoolToObject(o, "known", e->known);
    cJSON_AddBoolToObject(o, "this_host", e->local);
    cJSON_AddNumberToObject(o, "wait_fraction", e->known ? e->wait : -1);
    cJSON_AddNumberToObject(o, "socket_buffer", e->buf);
    if (e->thread_known) {
        t = cJSON_AddObjectToObject(o, "thread");
        cJSON_AddNumberToObject(t, "cpu", e->cpu);
        cJSON_AddNumberToObject(t, "run_fraction", e->run);
        cJSON_AddNumberToObject(t, "runq_fraction", e->runq);
        cJSON_AddNumberToObject(t, "cpu_busy_fraction", e->cpu_busy);
    } else {
        cJSON_AddNullToObject(o, "thread");
    }
    /* the run document's cgroup object (cpujson), one writer and one convention for both */
    if ((t = cpujson_cgroup(&e->usage)))
        cJSON_AddItemToObject(o, "cgroup", t);
    else
        cJSON_AddNullToObject(o, "cgroup");
    if (e->host_known)
        cJSON_AddItemToObject(o, "host", result_json_hostload_host(&e->host));
    else
        cJSON_AddNullToObject(o, "host");
    return o;
}

static cJSON *verdict_json(const struct diagnose_verdict *v)
{
    cJSON *o = cJSON_CreateObject(), *ev = cJSON_CreateArray(), *fig = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "id", diagnose_id_name(v->id));
    cJSON_AddStringToObject(o, "title", v->title);
    for (size_t i = 0; i < v->nevidence; i++)
        cJSON_AddItemToArray(ev, cJSON_CreateString(v->evidence[i]));
    cJSON_AddItemToObject(o, "evidence", ev);
    cJSON_AddStringToObject(o, "advice", v->advice);
    if (v->tune[0])
        cJSON_AddStringToObject(o, "tune", v->tune);
    else
        cJSON_AddNullToObject(o, "tune");
    cJSON_AddNumberToObject(fig, "busy", v->busy);
    cJSON_AddNumberToObject(fig, "f_rwnd", v->f_rwnd);
    cJSON_AddNumberToObject(fig, "f_sndbuf", v->f_sndbuf);
    cJSON_AddNumberToObject(fig, "loss", v->loss);
    cJSON_AddNumberToObject(fig, "srtt_us", v->srtt_us);
    cJSON_AddNumberToObject(fig, "queue_delay_us", v->queue_us);
    cJSON_AddNumberToObject(fig, "window_use", v->window_use);
    cJSON_AddNumberToObject(fig, "window_bps", v->window_bps);
    cJSON_AddNumberToObject(fig, "buffer_use", v->buffer_use);
    cJSON_AddNumberToObject(fig, "bdp_bytes", v->bdp_bytes);
    cJSON_AddNumberToObject(fig, "mathis_bound_bps", v->mathis_bps);
    cJSON_AddNumberToObject(fig, "goodput_at_rate_bps", v->goodput_bps);
    cJSON_AddNumberToObject(fig, "probe_gain", v->probe_gain);
    cJSON_AddItemToObject(o, "figures", fig);
    return o;
}

cJSON *diagnose_report_json(const char *what, const struct diagnose_sample *s,
                            const struct diagnose_verdict *v, const struct run_result *run)
{
    cJSON *o = cJSON_CreateObject(), *t = cJSON_CreateObject(), *p;

    cJSON_AddStringToObject(o, "netrig_version", NETRIG_VERSION);
    cJSON_AddStringToObject(t, "what", what);
    cJSON_AddNumberToObject(t, "throughput_bps", s->throughput_bps);
    cJSON_AddNumberToObject(t, "pacing_bps", (double)s->pacing_bps);
    cJSON_AddNumberToObject(t, "target_rate_bps", (double)s->target_bps);
    cJSON_AddNumberToObject(t, "target_rtt_s", s->target_rtt_s);
    cJSON_AddBoolToObject(t, "local_receives", s->local_receives);
    cJSON_AddBoolToObject(t, "same_host", s->same_host);
    cJSON_AddNumberToObject(t, "warmup_s", s->warmup_s);
    cJSON_AddNumberToObject(t, "intervals", s->nrates);
    cJSON_AddNumberToObject(t, "interval_median_bps", s->rate_median_bps);
    cJSON_AddNumberToObject(t, "plateau", s->plateau);
    p = cJSON_AddArrayToObject(t, "probes");
    for (uint32_t i = 0; i < s->nprobes && i < DIAG_MAX_PROBES; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "flows", s->probe[i].flows);
        cJSON_AddNumberToObject(x, "throughput_bps", s->probe[i].throughput_bps);
        cJSON_AddItemToArray(p, x);
    }
    cJSON_AddItemToObject(o, "test", t);
    cJSON_AddItemToObject(o, "sender", sender_json(s, v));
    p = cJSON_AddObjectToObject(o, "ends");
    cJSON_AddItemToObject(p, "sender", end_json(&s->snd));
    cJSON_AddItemToObject(p, "receiver", end_json(&s->rcv));
    cJSON_AddItemToObject(o, "verdict", verdict_json(v));
    if (run)
        cJSON_AddItemToObject(o, "run", result_json_run(run));
    return o;
}
