/* diagnose_report: the verdict, its evidence and the advice. */
#include "diagnose_report.h"

#include "audit.h"
#include "result_json.h"

#include <string.h>

#define WIDTH 80

/* Prints text wrapped at WIDTH columns: the first line after lead, the rest indented. */
static void wrap(FILE *out, const char *lead, int indent, const char *text)
{
    int room = WIDTH - (int)strlen(lead);
    const char *p = text;

    fputs(lead, out);
    while (*p) {
        size_t n = strlen(p), cut = n;
        if ((int)n > room) {
            cut = (size_t)room;
            while (cut > 0 && p[cut] != ' ')
                cut--;
            if (cut == 0)
                cut = (size_t)room;
        }
        fprintf(out, "%.*s\n", (int)cut, p);
        p += cut;
        while (*p == ' ')
            p++;
        if (*p)
            fprintf(out, "%*s", indent, "");
        room = WIDTH - indent;
    }
}

void diagnose_report_text(FILE *out, const char *what, const struct diagnose_sample *s,
                          const struct diagnose_verdict *v)
{
    char tp[32], a[32], b[32], c[32];

    audit_fmt_rate(s->throughput_bps, tp, sizeof(tp));
    audit_fmt_time(s->srtt_us / 1e6, a, sizeof(a));
    audit_fmt_time(s->min_rtt_us / 1e6, b, sizeof(b));
    audit_fmt_bytes((double)s->snd_wnd, c, sizeof(c));
    wrap(out, "netrig diagnose: ", 2, what);
    fprintf(out, "  throughput %s over %.1f s; retransmitted %.3f%% of segments\n", tp, s->seconds,
            100 * v->loss);
    fprintf(out,
            "  sender busy %.0f%%; of that receive-window limited %.0f%%, send-buffer "
            "limited %.0f%%\n",
            100 * v->busy, 100 * v->f_rwnd, 100 * v->f_sndbuf);
    fprintf(out, "  srtt %s, min_rtt %s, peer window %s\n", a, b, c);
    fprintf(out, "\nVerdict: %s  [%s]\n", v->title, diagnose_id_name(v->id));
    for (size_t i = 0; i < v->nevidence; i++)
        wrap(out, "  - ", 4, v->evidence[i]);
    wrap(out, "Advice: ", 2, v->advice);
    if (v->tune[0])
        wrap(out, "Fix: ", 2, v->tune);
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
    return o;
}

static cJSON *host_json(const struct hostctr_delta *h)
{
    cJSON *o = cJSON_CreateObject(), *c = cJSON_CreateObject();

    cJSON_AddBoolToObject(o, "valid", h->valid);
    for (int i = 0; i < HOSTCTR_COUNT; i++)
        if (h->have_ctr[i])
            cJSON_AddNumberToObject(c, hostctr_name(i), (double)h->ctr[i]);
    cJSON_AddItemToObject(o, "counters", c);
    if (h->have_softnet) {
        cJSON_AddNumberToObject(o, "softnet_dropped", (double)h->softnet_dropped);
        cJSON_AddNumberToObject(o, "softnet_time_squeeze", (double)h->softnet_squeeze);
    }
    cJSON_AddNumberToObject(o, "softirq_max_fraction", h->softirq_max);
    cJSON_AddNumberToObject(o, "softirq_max_cpu", h->softirq_cpu);
    cJSON_AddNumberToObject(o, "nic_rx_dropped", (double)h->nic_rx_dropped);
    cJSON_AddNumberToObject(o, "nic_rx_missed_errors", (double)h->nic_rx_missed);
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
    cJSON_AddNumberToObject(fig, "queue_delay_us", v->queue_us);
    cJSON_AddNumberToObject(fig, "bdp_bytes", v->bdp_bytes);
    cJSON_AddNumberToObject(fig, "mathis_bound_bps", v->mathis_bps);
    cJSON_AddNumberToObject(fig, "goodput_at_rate_bps", v->goodput_bps);
    cJSON_AddItemToObject(o, "figures", fig);
    return o;
}

cJSON *diagnose_report_json(const char *what, const struct diagnose_sample *s,
                            const struct diagnose_verdict *v, const struct run_result *run)
{
    cJSON *o = cJSON_CreateObject(), *t = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "netrig_version", NETRIG_VERSION);
    cJSON_AddStringToObject(t, "what", what);
    cJSON_AddNumberToObject(t, "throughput_bps", s->throughput_bps);
    cJSON_AddNumberToObject(t, "pacing_bps", (double)s->pacing_bps);
    cJSON_AddNumberToObject(t, "target_rate_bps", (double)s->target_bps);
    cJSON_AddNumberToObject(t, "target_rtt_s", s->target_rtt_s);
    cJSON_AddBoolToObject(t, "local_receives", s->local_receives);
    cJSON_AddItemToObject(o, "test", t);
    cJSON_AddItemToObject(o, "sender", sender_json(s, v));
    cJSON_AddItemToObject(o, "host", host_json(&s->host));
    cJSON_AddItemToObject(o, "verdict", verdict_json(v));
    if (run)
        cJSON_AddItemToObject(o, "run", result_json_run(run));
    return o;
}
