/* diagnose: bottleneck rules over recorded TCP_INFO figures and host counters. */
#define _GNU_SOURCE
#include "diagnose.h"

#include "audit.h"
#include "result.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const id_names[DIAG_ID_COUNT] = {
    "ok",          "rwnd_limited",   "sndbuf_limited", "loss_limited",
    "app_limited", "rx_cpu_limited", "link_capacity",
};

const char *diagnose_id_name(enum diagnose_id id)
{
    return (unsigned)id < DIAG_ID_COUNT ? id_names[id] : "?";
}

static void evidence(struct diagnose_verdict *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void evidence(struct diagnose_verdict *v, const char *fmt, ...)
{
    va_list ap;

    if (v->nevidence >= DIAG_MAX_EVIDENCE)
        return;
    va_start(ap, fmt);
    vsnprintf(v->evidence[v->nevidence++], DIAG_TEXT_LEN, fmt, ap);
    va_end(ap);
}

static const char *rate(double bps, char *buf)
{
    audit_fmt_rate(bps, buf, 32);
    return buf;
}

static const char *bytes(double b, char *buf)
{
    audit_fmt_bytes(b, buf, 32);
    return buf;
}

static const char *usec(double us, char *buf)
{
    audit_fmt_time(us / 1e6, buf, 32);
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
    double p, mss = s->mss ? s->mss : 1448;

    v->busy = share(s->busy_us, (uint64_t)(s->seconds * 1e6 * (s->flows ? s->flows : 1)));
    if (v->busy > 1)
        v->busy = 1; /* chrono times are in jiffies: a little over the wall time happens */
    v->f_rwnd = share(s->rwnd_us, s->busy_us);
    v->f_sndbuf = share(s->sndbuf_us, s->busy_us);
    v->loss = share(s->retrans, s->segs_out);
    v->queue_us = s->srtt_us > s->min_rtt_us ? s->srtt_us - s->min_rtt_us : 0;
    v->bdp_bytes = s->target_bps ? (double)s->target_bps * rtt_s / 8 : 0;
    p = v->loss;
    v->mathis_bps = p > 0 && s->srtt_us > 0
                        ? mss * 8 / (s->srtt_us / 1e6) * 1.22 / sqrt(p) * (s->flows ? s->flows : 1)
                        : 0;
    v->goodput_bps = s->target_bps ? (double)s->target_bps * mss / (mss + 90) : 0;
}

/* "--rate 10G --rtt 1ms" as the user gave it, or placeholders to fill in. */
static void target_args(const struct diagnose_sample *s, char *buf, size_t len)
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

static void bdp_text(const struct diagnose_sample *s, const struct diagnose_verdict *v, char *buf,
                     size_t len)
{
    char b[32], b2[32];

    if (v->bdp_bytes > 0)
        snprintf(buf, len, "at least 2 x BDP = %s (BDP %s at the target)",
                 bytes(2 * v->bdp_bytes, b), bytes(v->bdp_bytes, b2));
    else
        snprintf(buf, len,
                 "at least 2 x the bandwidth-delay product of the rate you want "
                 "(give --rate and --rtt for the figure; min_rtt was %s)",
                 usec(s->min_rtt_us, b));
}

static bool rule_paced(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    double want = (double)s->pacing_bps * s->flows;
    char a[32], b[32];

    if (!s->pacing_bps || s->throughput_bps < DIAG_PACED_LO * want ||
        s->throughput_bps > DIAG_PACED_HI * want)
        return false;
    v->id = DIAG_APP_LIMITED;
    snprintf(v->title, sizeof(v->title), "application limited: the sender was paced");
    evidence(v,
             "throughput %s = %.0f%% of the pacing asked for (%s per flow x %u flows, "
             "--fq-rate)",
             rate(s->throughput_bps, a), 100 * s->throughput_bps / want,
             rate((double)s->pacing_bps, b), s->flows);
    evidence(v,
             "the sender was busy %.0f%% of the time; its data waited for the pacing timer, "
             "not for the network (send-buffer limited %.0f%%)",
             100 * v->busy, 100 * v->f_sndbuf);
    snprintf(v->advice, sizeof(v->advice),
             "The pacing rate the sender asked for is the limit: "
             "raise --fq-rate (SO_MAX_PACING_RATE) or leave it out to see what the path carries.");
    return true;
}

static void receiver_counters(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    const struct hostctr_delta *h = &s->host;
    uint64_t zw = h->ctr[HOSTCTR_ZERO_WINDOW_ADV], qd = h->ctr[HOSTCTR_RCVQ_DROP];
    uint64_t pr = h->ctr[HOSTCTR_PRUNE_CALLED];

    if (!h->valid || !s->local_receives || !(zw || qd || pr))
        return;
    evidence(v,
             "this host (the receiver) advertised a zero window %llu times "
             "(TCPToZeroWindowAdv), pruned its queue %llu times (PruneCalled) and dropped %llu "
             "segments for a full receive queue (TCPRcvQDrop)",
             (unsigned long long)zw, (unsigned long long)pr, (unsigned long long)qd);
}

static bool rule_rwnd(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    char a[32], b[32], c[32], bdp[200], args[80];
    double win_rate = s->srtt_us > 0 ? (double)s->snd_wnd * 8 / (s->srtt_us / 1e6) : 0;
    double per_flow = s->throughput_bps / (s->flows ? s->flows : 1);
    /* a window that ends far above what the flow moved only limited the ramp-up */
    bool small = !s->snd_wnd || win_rate < 2 * per_flow ||
                 (v->bdp_bytes > 0 && (double)s->snd_wnd < v->bdp_bytes);

    if (v->f_rwnd < DIAG_PARTLY || v->f_rwnd < v->f_sndbuf || (v->f_rwnd < DIAG_DOMINANT && !small))
        return false;
    v->id = DIAG_RWND_LIMITED;
    snprintf(v->title, sizeof(v->title), "receive-window limited%s",
             v->f_rwnd >= DIAG_DOMINANT ? "" : " (partly)");
    evidence(v,
             "the receiver's window stopped the sender %.0f%% of its busy time "
             "(rwnd_limited %s of %s busy)",
             100 * v->f_rwnd, usec((double)s->rwnd_us, a), usec((double)s->busy_us, b));
    evidence(v, "peer's window at the end: snd_wnd %s; at srtt %s that allows %s per flow",
             bytes((double)s->snd_wnd, a), usec(s->srtt_us, b), rate(win_rate, c));
    if (v->bdp_bytes > 0)
        evidence(v, "the window needs to reach the BDP, %s, for the target",
                 bytes(v->bdp_bytes, a));
    evidence(v, "throughput %s over %u flow(s)", rate(s->throughput_bps, a), s->flows);
    receiver_counters(s, v);
    bdp_text(s, v, bdp, sizeof(bdp));
    snprintf(v->advice, sizeof(v->advice),
             "Raise the receiver's net.ipv4.tcp_rmem maximum (the "
             "third value) to %s; if the receiving application sets SO_RCVBUF, raise "
             "net.core.rmem_max too. Check that window scaling is on at both ends%s.",
             bdp,
             s->local_receives && s->host.ctr[HOSTCTR_ZERO_WINDOW_ADV]
                 ? "; the receiving application also falls behind (zero windows): read faster, "
                   "pin it NUMA-local, or use more streams"
                 : "");
    target_args(s, args, sizeof(args));
    snprintf(v->tune, sizeof(v->tune),
             "on the receiver: netrig tune --apply %s (raises "
             "net.ipv4.tcp_rmem; net.core.rmem_max on the host)",
             args);
    return true;
}

static bool rule_sndbuf(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    char a[32], b[32], bdp[200], args[80];

    if (v->f_sndbuf < DIAG_PARTLY)
        return false;
    v->id = DIAG_SNDBUF_LIMITED;
    snprintf(v->title, sizeof(v->title), "send-buffer limited%s",
             v->f_sndbuf >= DIAG_DOMINANT ? "" : " (partly)");
    evidence(v,
             "the sender's socket buffer was the limit %.0f%% of its busy time "
             "(sndbuf_limited %s of %s busy)",
             100 * v->f_sndbuf, usec((double)s->sndbuf_us, a), usec((double)s->busy_us, b));
    evidence(v, "in flight at srtt %s: %s gives %s of data per round trip", usec(s->srtt_us, a),
             rate(s->throughput_bps, b), bytes(s->throughput_bps / 8 * s->srtt_us / 1e6, bdp));
    if (v->bdp_bytes > 0)
        evidence(v, "the target needs %s in flight (BDP)", bytes(v->bdp_bytes, a));
    evidence(v, "receive window limited only %.0f%%; busy %.0f%% of the time", 100 * v->f_rwnd,
             100 * v->busy);
    bdp_text(s, v, bdp, sizeof(bdp));
    snprintf(v->advice, sizeof(v->advice),
             "Raise the sender's net.ipv4.tcp_wmem maximum (the "
             "third value) to %s; if the sending application sets SO_SNDBUF (-w), raise "
             "net.core.wmem_max too.",
             bdp);
    target_args(s, args, sizeof(args));
    snprintf(v->tune, sizeof(v->tune),
             "on the sender: netrig tune --apply %s (raises "
             "net.ipv4.tcp_wmem; net.core.wmem_max on the host)",
             args);
    return true;
}

static bool rule_rx_cpu(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    const struct hostctr_delta *h = &s->host;
    double squeeze_rate = s->seconds > 0 ? h->softnet_squeeze / s->seconds : 0;
    bool cpu = h->softirq_max >= DIAG_SOFTIRQ_FULL, squeeze = squeeze_rate >= DIAG_SQUEEZE_PER_S;

    if (!h->valid || !s->local_receives ||
        !(cpu || squeeze || h->softnet_dropped || h->nic_rx_missed))
        return false;
    v->id = DIAG_RX_CPU_LIMITED;
    snprintf(v->title, sizeof(v->title), "receiving host's packet processing limited");
    if (cpu)
        evidence(v, "CPU %d spent %.0f%% of its time in softirq (packet processing)",
                 h->softirq_cpu, 100 * h->softirq_max);
    if (h->have_softnet)
        evidence(v,
                 "softnet_stat: %llu backlog drops, %llu time squeezes (%.0f/s: the NAPI "
                 "budget ran out with packets left)",
                 (unsigned long long)h->softnet_dropped, (unsigned long long)h->softnet_squeeze,
                 squeeze_rate);
    if (h->nic_rx_missed || h->nic_rx_dropped)
        evidence(v, "NIC drops: rx_missed_errors %llu, rx_dropped %llu (most on %s)",
                 (unsigned long long)h->nic_rx_missed, (unsigned long long)h->nic_rx_dropped,
                 h->nic_worst);
    evidence(v, "the sender was busy %.0f%%, not window or buffer limited", 100 * v->busy);
    snprintf(v->advice, sizeof(v->advice),
             "Spread the NIC's receive queue IRQs over NIC-local "
             "cores, use more queues or RPS, bigger rings, and adjust interrupt coalescing%s.",
             h->softnet_dropped ? "; raise net.core.netdev_max_backlog (softnet drops)" : "");
    snprintf(v->tune, sizeof(v->tune),
             "netrig tune --apply sets net.core.netdev_max_backlog "
             "and the rx-0 rps_cpus mask when the audit flags them; rings and channels are "
             "manual ethtool steps it lists");
    return true;
}

static bool rule_link(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    char a[32], b[32], c[32];
    bool at_rate = v->goodput_bps > 0 && s->throughput_bps >= DIAG_AT_RATE * v->goodput_bps;
    bool queue = v->busy >= DIAG_BUSY_FULL && v->queue_us >= DIAG_QUEUE_US &&
                 s->srtt_us >= 2 * s->min_rtt_us;

    if (!at_rate && !queue)
        return false;
    v->id = DIAG_LINK_CAPACITY;
    snprintf(v->title, sizeof(v->title), "at link capacity");
    if (at_rate)
        evidence(v, "throughput %s = %.0f%% of the %s TCP carries on a %s link (MSS %u)",
                 rate(s->throughput_bps, a), 100 * s->throughput_bps / v->goodput_bps,
                 rate(v->goodput_bps, b), rate((double)s->target_bps, c), s->mss ? s->mss : 1448);
    if (queue)
        evidence(v, "a standing queue on the path: srtt %s against min_rtt %s (+%s of queueing)",
                 usec(s->srtt_us, a), usec(s->min_rtt_us, b), usec(v->queue_us, c));
    else
        evidence(v, "srtt %s, min_rtt %s", usec(s->srtt_us, a), usec(s->min_rtt_us, b));
    evidence(v,
             "the sender was busy %.0f%% of the time, window limited %.0f%%, buffer limited "
             "%.0f%%",
             100 * v->busy, 100 * v->f_rwnd, 100 * v->f_sndbuf);
    evidence(v, "retransmitted %.3f%% of segments (%llu of %llu)", 100 * v->loss,
             (unsigned long long)s->retrans, (unsigned long long)s->segs_out);
    snprintf(v->advice, sizeof(v->advice),
             "The path is full: nothing on these hosts holds the "
             "transfer back. More throughput needs a faster bottleneck link, or less overhead "
             "(jumbo frames where the whole path carries them).");
    return true;
}

static bool rule_loss(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    double thr = s->min_rtt_us >= DIAG_WAN_RTT_US ? DIAG_LOSS_WAN : DIAG_LOSS_LAN;
    char a[32], b[32];

    if (v->busy < DIAG_BUSY_FULL || v->loss < thr)
        return false;
    v->id = DIAG_LOSS_LIMITED;
    snprintf(v->title, sizeof(v->title), "congestion/loss limited");
    evidence(v, "retransmitted %.3f%% of segments (%llu of %llu), above the %s threshold %g",
             100 * v->loss, (unsigned long long)s->retrans, (unsigned long long)s->segs_out,
             thr == DIAG_LOSS_WAN ? "WAN" : "LAN", thr);
    evidence(v,
             "Mathis bound: MSS/RTT x 1.22/sqrt(p) = %u B / %s x 1.22 / sqrt(%.2g) = %s for "
             "%u flow(s); measured %s",
             s->mss ? s->mss : 1448, usec(s->srtt_us, a), v->loss, rate(v->mathis_bps, b), s->flows,
             rate(s->throughput_bps, a));
    evidence(v,
             "the sender was busy %.0f%%, window limited %.0f%%, buffer limited %.0f%%; no "
             "standing queue (srtt - min_rtt = %s)",
             100 * v->busy, 100 * v->f_rwnd, 100 * v->f_sndbuf, usec(v->queue_us, b));
    if (s->host.valid && s->host.ctr[HOSTCTR_TIMEOUTS])
        evidence(v, "%llu retransmission timeouts (TCPTimeouts) on this host",
                 (unsigned long long)s->host.ctr[HOSTCTR_TIMEOUTS]);
    snprintf(v->advice, sizeof(v->advice),
             "Check the NICs' drop counters first (rx_missed_errors "
             "here: %llu); otherwise the path loses packets: use BBR (or H-TCP) with fq pacing, "
             "or more parallel streams (-P).",
             (unsigned long long)s->host.nic_rx_missed);
    snprintf(v->tune, sizeof(v->tune),
             "netrig tune --apply sets net.ipv4.tcp_congestion_control "
             "(bbr or htcp) when the audit flags it");
    return true;
}

static bool rule_app(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    char a[32];

    if (v->busy >= DIAG_BUSY_APP)
        return false;
    v->id = DIAG_APP_LIMITED;
    snprintf(v->title, sizeof(v->title), "application/CPU limited (sender)");
    evidence(v,
             "the sender had data in flight only %.0f%% of the time (busy %s of %.2f s x %u "
             "flows): it did not keep the socket fed",
             100 * v->busy, usec((double)s->busy_us, a), s->seconds, s->flows);
    evidence(v, "window limited %.0f%%, buffer limited %.0f%% of the busy time", 100 * v->f_rwnd,
             100 * v->f_sndbuf);
    evidence(v, "throughput %s", rate(s->throughput_bps, a));
    snprintf(v->advice, sizeof(v->advice),
             "The sending application or its CPU cannot fill the "
             "path: use more streams (-P) and threads (-T), pin them NUMA-local (-A auto), and "
             "run the CPU at full clock (ESnet: about 3 GHz per 30 Gbit/s flow).");
    snprintf(v->tune, sizeof(v->tune),
             "netrig tune --apply sets the performance CPU governor "
             "when the audit flags it");
    return true;
}

void diagnose_judge(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    char a[32], b[32];

    memset(v, 0, sizeof(*v));
    derive(s, v);
    if (rule_paced(s, v) || rule_rwnd(s, v) || rule_sndbuf(s, v) || rule_rx_cpu(s, v) ||
        rule_link(s, v) || rule_loss(s, v) || rule_app(s, v))
        return;
    v->id = DIAG_OK;
    snprintf(v->title, sizeof(v->title), "no limit found");
    evidence(v,
             "throughput %s; the sender was busy %.0f%%, window limited %.0f%%, buffer "
             "limited %.0f%%",
             rate(s->throughput_bps, a), 100 * v->busy, 100 * v->f_rwnd, 100 * v->f_sndbuf);
    evidence(v, "retransmitted %.3f%%, srtt %s, min_rtt %s", 100 * v->loss, usec(s->srtt_us, a),
             usec(s->min_rtt_us, b));
    snprintf(v->advice, sizeof(v->advice),
             "Nothing in TCP or on this host held the transfer "
             "back. Give --rate (the link or target rate) to check it against the line rate.");
}

static const struct side_flow *sender_flow(const struct run_result *r, const struct flow_summary *f)
{
    const struct side_result *side = f->client_sends ? &r->local : &r->remote;

    for (uint32_t i = 0; i < side->nflows; i++)
        if (side->flows[i].id == f->id && side->flows[i].sender)
            return &side->flows[i];
    return NULL;
}

int diagnose_from_run(const struct run_result *r, struct diagnose_sample *s, char *err,
                      size_t errlen)
{
    double rtt_sum = 0, secs = 0, cwnd = 0;
    bool first = true;

    s->flows = 0;
    s->busy_us = s->rwnd_us = s->sndbuf_us = s->retrans = s->segs_out = 0;
    s->throughput_bps = r->summary.throughput_bps;
    s->pacing_bps = r->params.fq_rate_bps;
    for (uint32_t i = 0; i < r->nflows; i++) {
        const struct side_flow *sf = sender_flow(r, &r->flows[i]);
        if (!sf || !sf->ti.valid)
            continue;
        s->flows++;
        s->busy_us += sf->ti.busy_us;
        s->rwnd_us += sf->ti.rwnd_limited_us;
        s->sndbuf_us += sf->ti.sndbuf_limited_us;
        s->retrans += sf->ti.total_retrans;
        s->segs_out += sf->ti.data_segs_out;
        if (!s->mss)
            s->mss = sf->ti.snd_mss;
        rtt_sum += sf->ti.rtt_us;
        secs += sf->seconds;
        cwnd += sf->ti.snd_cwnd;
        if (sf->ti.min_rtt_us && (first || sf->ti.min_rtt_us < s->min_rtt_us))
            s->min_rtt_us = sf->ti.min_rtt_us;
        if (first || sf->ti.snd_wnd < s->snd_wnd)
            s->snd_wnd = sf->ti.snd_wnd;
        first = false;
        s->local_receives |= !r->flows[i].client_sends;
    }
    if (!s->flows) {
        snprintf(err, errlen,
                 "the sender reported no TCP_INFO for any flow (a server too old "
                 "to send it, or every flow failed): nothing to diagnose");
        return -1;
    }
    s->srtt_us = rtt_sum / s->flows;
    s->seconds = secs / s->flows;
    s->cwnd = (uint64_t)(cwnd / s->flows);
    return 0;
}
