/* diagnose: the derived figures, the order of the rules, and the verdict when none matches. */
#define _GNU_SOURCE
#include "diagnose_priv.h"

#include "audit.h"
#include "units.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const id_names[DIAG_ID_COUNT] = {
    "ok",          "rwnd_limited",   "sndbuf_limited", "loss_limited",
    "app_limited", "rx_cpu_limited", "link_capacity",  "tx_cpu_limited",
};

const char *diagnose_id_name(enum diagnose_id id)
{
    return (unsigned)id < DIAG_ID_COUNT ? id_names[id] : "?";
}

void diag_evidence(struct diagnose_verdict *v, const char *fmt, ...)
{
    va_list ap;

    if (v->nevidence >= DIAG_MAX_EVIDENCE)
        return;
    va_start(ap, fmt);
    vsnprintf(v->evidence[v->nevidence++], DIAG_TEXT_LEN, fmt, ap);
    va_end(ap);
}

const char *diag_rate(double bps, char *buf)
{
    units_format_rate(bps, buf, 32);
    return buf;
}

const char *diag_bytes(double b, char *buf)
{
    units_format_bytes(b, buf, 32);
    return buf;
}

const char *diag_usec(double us, char *buf)
{
    units_format_duration(us / 1e6, buf, 32);
    return buf;
}

static double share(uint64_t part, uint64_t whole)
{
    return whole ? (double)part / (double)whole : 0.0;
}

/* The figures every rule uses. */
static void derive(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    double rtt_s = s->target_rtt_s > 0 ? s->target_rtt_s : s->min_rtt_us / 1e6;
    double mss = s->mss ? s->mss : 1448, n = s->flows ? s->flows : 1;

    v->busy = share(s->busy_us, (uint64_t)(s->seconds * 1e6 * n));
    if (v->busy > 1)
        v->busy = 1; /* chrono times are in jiffies: a little over the wall time happens */
    v->f_rwnd = share(s->rwnd_us, s->busy_us);
    v->f_sndbuf = share(s->sndbuf_us, s->busy_us);
    v->loss = share(s->retrans, s->segs_out);
    v->srtt_us = s->samples && s->rtt_mean_us > 0 ? s->rtt_mean_us : s->srtt_us;
    v->queue_us = v->srtt_us > s->min_rtt_us ? v->srtt_us - s->min_rtt_us : 0;
    v->bdp_bytes = s->target_bps ? (double)s->target_bps * rtt_s / 8 : 0;
    v->mathis_bps =
        v->loss > 0 && v->srtt_us > 0 ? mss * 8 / (v->srtt_us / 1e6) * 1.22 / sqrt(v->loss) * n : 0;
    v->goodput_bps = s->target_bps ? (double)s->target_bps * mss / (mss + 90) : 0;
    v->window_use = s->samples && s->wnd_mean > 0 ? s->inflight_mean / s->wnd_mean : -1;
    v->window_bps = -1;
    if (s->samples && v->srtt_us > 0)
        v->window_bps = s->wnd_mean * 8 / (v->srtt_us / 1e6) * n;
    else if (s->snd_wnd && s->srtt_us > 0)
        v->window_bps = (double)s->snd_wnd * 8 / (s->srtt_us / 1e6) * n;
    v->buffer_use = s->samples && s->snd.buf ? s->inflight_mean / s->snd.buf : -1;
    v->probe_gain = -1;
    for (uint32_t i = 0; i < s->nprobes && s->throughput_bps > 0; i++)
        if (s->probe[i].throughput_bps / s->throughput_bps > v->probe_gain)
            v->probe_gain = s->probe[i].throughput_bps / s->throughput_bps;
}

bool diag_has_queue(const struct diagnose_sample *s, const struct diagnose_verdict *v)
{
    return v->queue_us >= DIAG_QUEUE_MIN_US && v->queue_us >= DIAG_QUEUE_FRAC * s->min_rtt_us;
}

bool diag_has_strong_queue(const struct diagnose_sample *s, const struct diagnose_verdict *v)
{
    return v->queue_us >= DIAG_QUEUE_MIN_US && v->queue_us >= DIAG_QUEUE_STRONG * s->min_rtt_us;
}

bool diag_cpu_delay(const struct diagnose_sample *s)
{
    return s->same_host && (diag_end_starved(&s->snd) || diag_end_starved(&s->rcv));
}

bool diag_path_queue(const struct diagnose_sample *s, const struct diagnose_verdict *v)
{
    return diag_has_strong_queue(s, v) && !diag_cpu_delay(s);
}

/* The receiver's window, at the round trip measured, allows hardly more than what moved, and TCP
 * counted part of its busy time as window limited: the window decides the rate. A sender whose
 * CPU ran full behind a window of a few kB is one: the window makes every segment small. */
bool diag_window_caps(const struct diagnose_sample *s, const struct diagnose_verdict *v)
{
    return v->window_bps > 0 && s->throughput_bps > 0 && v->f_rwnd >= DIAG_PARTLY &&
           v->window_bps < DIAG_WND_CAPS * s->throughput_bps;
}

bool diag_is_bbr(const struct diagnose_sample *s) { return !strncmp(s->cc, "bbr", 3); }

bool diag_sender_waited(const struct diagnose_sample *s)
{
    return !s->snd.known || s->snd.wait >= DIAG_NET_WAIT;
}

bool diag_probes_flat(const struct diagnose_sample *s)
{
    if (!s->nprobes || s->throughput_bps <= 0)
        return false;
    for (uint32_t i = 0; i < s->nprobes; i++)
        if (s->probe[i].throughput_bps > DIAG_PROBE_FLAT * s->throughput_bps)
            return false;
    return true;
}

bool diag_probes_scale(const struct diagnose_sample *s)
{
    for (uint32_t i = 0; i < s->nprobes && s->throughput_bps > 0; i++)
        if (s->probe[i].throughput_bps >= DIAG_PROBE_SCALE * s->throughput_bps)
            return true;
    return false;
}

void diag_probe_evidence(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    char line[DIAG_TEXT_LEN], a[32];
    size_t n;

    if (!s->nprobes)
        return;
    n = (size_t)snprintf(line, sizeof(line), "--probe-flows: %u flow(s) %s", s->flows,
                         diag_rate(s->throughput_bps, a));
    for (uint32_t i = 0; i < s->nprobes && n < sizeof(line); i++)
        n += (size_t)snprintf(line + n, sizeof(line) - n, ", %u: %s (x%.2f)", s->probe[i].flows,
                              diag_rate(s->probe[i].throughput_bps, a),
                              s->throughput_bps > 0 ? s->probe[i].throughput_bps / s->throughput_bps
                                                    : 0);
    diag_evidence(v, "%s: %s", line,
                  diag_probes_flat(s)    ? "the sum stays flat, a limit the flows share"
                  : diag_probes_scale(s) ? "the sum grows with the flows, a limit of each flow"
                                         : "the sum grows a little");
}

void diag_target_args(const struct diagnose_sample *s, char *buf, size_t len)
{
    char r[32] = "RATE", t[32] = "RTT";

    if (s->target_bps >= 1000000000ULL)
        snprintf(r, sizeof(r), "%.6gG", s->target_bps / 1e9);
    else if (s->target_bps)
        snprintf(r, sizeof(r), "%.6gM", s->target_bps / 1e6);
    if (s->target_rtt_s > 0)
        snprintf(t, sizeof(t), "%.6gms", s->target_rtt_s * 1e3);
    else if (s->min_rtt_us > 0)
        snprintf(t, sizeof(t), "%.3gms", s->min_rtt_us > 1000 ? s->min_rtt_us / 1e3 : 1);
    snprintf(buf, len, "--rate %s --rtt %s", r, t);
}

static void verdict_ok(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    char a[32], b[32], c[32];

    v->id = DIAG_OK;
    snprintf(v->title, sizeof(v->title), "no limit found");
    diag_evidence(v,
                  "throughput %s; the sender was busy %.0f%%, window limited %.0f%%, buffer "
                  "limited %.0f%%",
                  diag_rate(s->throughput_bps, a), 100 * v->busy, 100 * v->f_rwnd,
                  100 * v->f_sndbuf);
    diag_evidence(v, "retransmitted %.3f%%, srtt %s (mean), min_rtt %s", 100 * v->loss,
                  diag_usec(v->srtt_us, b), diag_usec(s->min_rtt_us, c));
    if (s->nrates)
        diag_evidence(v, "%.0f%% of the %u intervals within 20%% of the median %s: %s",
                      100 * s->plateau, s->nrates, diag_rate(s->rate_median_bps, a),
                      s->plateau >= DIAG_PLATEAU ? "steady" : "the rate varied");
    diag_probe_evidence(s, v);
    snprintf(v->advice, sizeof(v->advice),
             "Nothing in TCP or on the two hosts held the transfer back clearly. Give --rate "
             "(the link or target rate) to check it against the line rate, or --probe-flows "
             "to see whether more flows carry more.");
}

void diagnose_judge(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    memset(v, 0, sizeof(*v));
    derive(s, v);
    if (diag_rule_paced(s, v) || diag_rule_cpu_quota(s, v, DIAG_THROTTLED) ||
        diag_rule_sender_app(s, v) || diag_rule_rx_cpu(s, v) || diag_rule_link_rate(s, v) ||
        diag_rule_rwnd(s, v) || diag_rule_sndbuf(s, v) || diag_rule_cpu_starved(s, v) ||
        diag_rule_link_strong_queue(s, v) || diag_rule_loss(s, v) || diag_rule_link_queue(s, v) ||
        diag_rule_link_cc(s, v) || diag_rule_app_busy(s, v))
        return;
    /* a throttled end is never "ok": below DIAG_THROTTLED its quota is still the one limit */
    if (diag_rule_cpu_quota(s, v, 0))
        return;
    verdict_ok(s, v);
}
