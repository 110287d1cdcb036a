/* diagnose_rules: the rules about the network path and TCP — the link (at --rate, flat as flows
 * are added, a standing queue, or the congestion control at a plateau), the receive window,
 * the send buffer and loss. */
#include "diagnose_priv.h"

#include "audit_bufcap.h"
#include "hostfs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

/* Where the window and the buffer stood: one line for the link verdicts. */
static void window_buffer_line(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    char a[32], b[32];

    if (v->window_use >= 0)
        diag_evidence(v,
                      "in flight %s per flow (mean of %u intervals): %.0f%% of the peer's window "
                      "of %s%s",
                      diag_bytes(s->inflight_mean, a), s->samples, 100 * v->window_use,
                      diag_bytes(s->wnd_mean, b),
                      v->buffer_use >= 0 ? "" : "; the send buffer not measured");
    if (v->buffer_use >= 0)
        diag_evidence(v, "... and %.0f%% of the send buffer (SO_SNDBUF %s)", 100 * v->buffer_use,
                      diag_bytes(s->snd.buf, a));
    if (v->window_use < 0)
        diag_evidence(v,
                      "the sender was busy %.0f%% of the time, window limited %.0f%%, buffer "
                      "limited %.0f%%",
                      100 * v->busy, 100 * v->f_rwnd, 100 * v->f_sndbuf);
}

static void link_advice(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    char a[32];

    v->id = DIAG_LINK_CAPACITY;
    snprintf(v->title, sizeof(v->title), "at link capacity");
    diag_evidence(v, "retransmitted %.3f%% of segments (%llu of %llu)%s", 100 * v->loss,
                  (unsigned long long)s->retrans, (unsigned long long)s->segs_out,
                  v->loss > 0 && diag_is_bbr(s) ? ": bbr keeps its rate through such loss" : "");
    if (s->snd.known)
        diag_evidence(v,
                      "the sending application waited for room %.0f%% of the time: the path "
                      "took the data no faster",
                      100 * s->snd.wait);
    diag_probe_evidence(s, v);
    snprintf(v->advice, sizeof(v->advice),
             "The path is full at %s: nothing on these hosts holds the transfer back. More "
             "throughput needs a faster bottleneck link, or less overhead (jumbo frames where "
             "the whole path carries them).",
             diag_rate(s->throughput_bps, a));
}

bool diag_rule_link_rate(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    char a[32], b[32], c[32];
    bool at_rate = v->goodput_bps > 0 && s->throughput_bps >= DIAG_AT_RATE * v->goodput_bps;
    bool flat = diag_probes_flat(s);

    if (!at_rate && !flat)
        return false;
    if (at_rate)
        diag_evidence(v, "throughput %s = %.0f%% of the %s TCP carries on a %s link (MSS %u)",
                      diag_rate(s->throughput_bps, a), 100 * s->throughput_bps / v->goodput_bps,
                      diag_rate(v->goodput_bps, b), diag_rate((double)s->target_bps, c),
                      s->mss ? s->mss : 1448);
    diag_evidence(v, "srtt %s (mean), min_rtt %s: %s of queueing", diag_usec(v->srtt_us, a),
                  diag_usec(s->min_rtt_us, b), diag_usec(v->queue_us, c));
    window_buffer_line(s, v);
    link_advice(s, v);
    return true;
}

/* The share of an end's socket buffer that carries data, by the kernel's accounting
 * (audit_bufcap, as netrig tune sizes buffers): this host's kernel and tcp_adv_win_scale when
 * the end is here, else a recent kernel's range. */
static void buffer_model(const struct diagnose_end *e, enum audit_bufcap_side side,
                         struct audit_bufcap *m)
{
    int kmaj = 0, kmin = 0, aws = AUDIT_BUFCAP_AWS_UNKNOWN;
    struct utsname u;
    char buf[32];

    if (e->local && !uname(&u) && sscanf(u.release, "%d.%d", &kmaj, &kmin) != 2)
        kmaj = kmin = 0;
    if (e->local && hostfs_read(NULL, "/proc/sys/net/ipv4/tcp_adv_win_scale", buf, sizeof(buf)) > 0)
        aws = (int)strtol(buf, NULL, 10);
    audit_bufcap_model(side, kmaj, kmin, aws, m);
}

/* "123-230 Mbit/s": two figures, the unit once when they share it. */
static const char *range(double lo, double hi, const char *(*fmt)(double, char *), char *out)
{
    char a[32], b[32];
    const char *ua, *ub;

    fmt(lo, a);
    fmt(hi, b);
    ua = strchr(a, ' ');
    ub = strchr(b, ' ');
    if (ua && ub && !strcmp(ua, ub))
        snprintf(out, 64, "%.*s-%s", (int)(ua - a), a, b);
    else
        snprintf(out, 64, "%s-%s", a, b);
    return out;
}

/* "by the kernel's accounting (basis) a buffer of 175 kB gives a window of 87.4-163 kB, which
 * caps one flow at 17.4-32.4 Mbit/s at srtt 40.3 ms" */
static void cap_line(const struct audit_bufcap *m, bool rx, double buf, double srtt_us,
                     struct diagnose_verdict *v)
{
    char a[32], b[64], c[64], d[32];
    double lo, hi;

    audit_bufcap_rate(m, buf, srtt_us / 1e6, &lo, &hi);
    diag_evidence(v,
                  "by the kernel's accounting (%s) a buffer of %s gives %s%s%s, which caps one "
                  "flow at %s at srtt %s",
                  m->basis, diag_bytes(buf, a), rx ? "a window of " : "",
                  range(buf * m->lo, buf * m->hi, diag_bytes, b), rx ? "" : " in flight",
                  range(lo, hi, diag_rate, c), diag_usec(srtt_us, d));
}

/* The size to raise a buffer to: what netrig tune proposes for the target's BDP, or how to
 * work it out. */
static void size_text(const struct diagnose_sample *s, const struct diagnose_verdict *v,
                      const struct audit_bufcap *m, char *buf, size_t len)
{
    uint64_t want = v->bdp_bytes > 0 ? audit_bufcap_size_for(m, v->bdp_bytes) : 0;
    char b[32], b2[32];

    if (want)
        snprintf(buf, len,
                 "%llu (%s): at the worst share of it that carries data (%.2g) it still covers "
                 "the BDP, %s, and it is at least 2 x BDP",
                 (unsigned long long)want, diag_bytes((double)want, b), m->lo,
                 diag_bytes(v->bdp_bytes, b2));
    else
        snprintf(buf, len,
                 "at least the bandwidth-delay product of the rate you want / %.2g (the worst "
                 "share of a buffer that carries data) and 2 x BDP (give --rate and --rtt for the "
                 "figure; min_rtt was %s)",
                 m->lo, diag_usec(s->min_rtt_us, b));
}

static bool window_full(const struct diagnose_sample *s, const struct diagnose_verdict *v)
{
    double per_flow = s->throughput_bps / (s->flows ? s->flows : 1);
    double win_rate = s->srtt_us > 0 ? (double)s->snd_wnd * 8 / (s->srtt_us / 1e6) : 0;

    if (v->window_use >= 0)
        return v->window_use >= DIAG_WND_FULL;
    /* no interval samples: TCP's own count, with a window that ends near what moved */
    return v->f_rwnd >= DIAG_DOMINANT ||
           (v->f_rwnd >= DIAG_PARTLY && v->f_rwnd >= v->f_sndbuf && win_rate < 2 * per_flow);
}

bool diag_rule_rwnd(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    char a[32], b[32], c[32], bdp[320], args[80];
    struct audit_bufcap m;

    if (!window_full(s, v) || diag_path_queue(s, v))
        return false;
    buffer_model(&s->rcv, AUDIT_BUFCAP_RECEIVE, &m);
    v->id = DIAG_RWND_LIMITED;
    snprintf(v->title, sizeof(v->title), "receive-window limited");
    if (v->window_use >= 0)
        diag_evidence(v,
                      "the sender kept %s in flight per flow against the receiver's window of %s "
                      "(%.0f%% full; means over %u intervals)",
                      diag_bytes(s->inflight_mean, a), diag_bytes(s->wnd_mean, b),
                      100 * v->window_use, s->samples);
    diag_evidence(v, "that window allows %s at srtt %s over %u flow(s); measured %s",
                  diag_rate(v->window_bps, a), diag_usec(v->srtt_us, b), s->flows,
                  diag_rate(s->throughput_bps, c));
    if (s->rcv.buf) {
        diag_evidence(v,
                      "the receiver's socket buffer grew to %s (SO_RCVBUF): %.0f%% of it "
                      "became window",
                      diag_bytes(s->rcv.buf, a),
                      s->wnd_mean > 0 ? 100 * s->wnd_mean / s->rcv.buf : 0);
        cap_line(&m, true, s->rcv.buf, v->srtt_us, v);
    }
    if (diag_has_strong_queue(s, v))
        diag_evidence(v,
                      "srtt - min_rtt = %s, but both ends ran on one host and a data thread "
                      "waited for a CPU %.0f%% of the time: the delay is the CPUs', not a queue "
                      "on a path",
                      diag_usec(v->queue_us, a),
                      100 * (s->rcv.runq > s->snd.runq ? s->rcv.runq : s->snd.runq));
    else
        diag_evidence(v,
                      "srtt - min_rtt = %s, less than a quarter of the round trip: no standing "
                      "queue, the path had room",
                      diag_usec(v->queue_us, a));
    diag_evidence(v, "TCP counted %.0f%% of its busy time as receive-window limited",
                  100 * v->f_rwnd);
    if (v->bdp_bytes > 0)
        diag_evidence(v, "the target needs a window of the BDP, %s", diag_bytes(v->bdp_bytes, a));
    diag_probe_evidence(s, v);
    size_text(s, v, &m, bdp, sizeof(bdp));
    snprintf(v->advice, sizeof(v->advice),
             "Raise the receiver's net.ipv4.tcp_rmem maximum (the third value) to %s; if the "
             "receiving application sets SO_RCVBUF, raise net.core.rmem_max too. Check that "
             "window scaling is on at both ends.",
             bdp);
    diag_target_args(s, args, sizeof(args));
    snprintf(v->tune, sizeof(v->tune),
             "on the receiver: netrig tune --apply %s (raises net.ipv4.tcp_rmem; "
             "net.core.rmem_max on the host)",
             args);
    return true;
}

static bool buffer_full(const struct diagnose_sample *s, const struct diagnose_verdict *v)
{
    /* a sender that did not wait at all is rule 2's; one that waited a little, on a busy CPU
     * (veth at 16 Gbit/s with 8 KiB: 37 %), still found its buffer full */
    if (v->buffer_use >= 0)
        return v->buffer_use >= DIAG_BUF_FULL && (!s->snd.known || s->snd.wait >= DIAG_APP_WAIT);
    return v->f_sndbuf >= DIAG_DOMINANT;
}

bool diag_rule_sndbuf(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    char a[32], b[32], bdp[320], args[80];
    struct audit_bufcap m;

    if (!buffer_full(s, v) || diag_path_queue(s, v))
        return false;
    buffer_model(&s->snd, AUDIT_BUFCAP_SEND, &m);
    v->id = DIAG_SNDBUF_LIMITED;
    snprintf(v->title, sizeof(v->title), "send-buffer limited");
    if (v->buffer_use >= 0)
        diag_evidence(v,
                      "in flight %s per flow from a send buffer of %s (SO_SNDBUF): %.0f%% of it "
                      "(autotuning sizes a buffer it may grow at 4-9 x the congestion window)",
                      diag_bytes(s->inflight_mean, a), diag_bytes(s->snd.buf, b),
                      100 * v->buffer_use);
    if (s->snd.buf)
        cap_line(&m, false, s->snd.buf, v->srtt_us, v);
    if (s->snd.known)
        diag_evidence(v, "the sending application waited for room in it %.0f%% of the time",
                      100 * s->snd.wait);
    diag_evidence(v, "%s at srtt %s; the receiver's window %s", diag_rate(s->throughput_bps, a),
                  diag_usec(v->srtt_us, b), v->window_use >= 0 ? "had room" : "(not sampled)");
    if (v->window_use >= 0)
        diag_evidence(v,
                      "the peer's window was %.0f%% full; srtt - min_rtt = %s: no standing "
                      "queue",
                      100 * v->window_use, diag_usec(v->queue_us, a));
    diag_evidence(v, "TCP counted %.0f%% of its busy time as send-buffer limited",
                  100 * v->f_sndbuf);
    if (v->bdp_bytes > 0)
        diag_evidence(v, "the target needs %s in flight (BDP)", diag_bytes(v->bdp_bytes, a));
    diag_probe_evidence(s, v);
    size_text(s, v, &m, bdp, sizeof(bdp));
    snprintf(v->advice, sizeof(v->advice),
             "Raise the sender's net.ipv4.tcp_wmem maximum (the third value) to %s; if the "
             "sending application sets SO_SNDBUF (-w), raise net.core.wmem_max too.",
             bdp);
    diag_target_args(s, args, sizeof(args));
    snprintf(v->tune, sizeof(v->tune),
             "on the sender: netrig tune --apply %s (raises net.ipv4.tcp_wmem; "
             "net.core.wmem_max on the host)",
             args);
    return true;
}

static bool link_queue(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    char a[32], b[32], c[32];

    diag_evidence(v,
                  "a standing queue on the path: srtt %s (mean of %u intervals) against min_rtt "
                  "%s, +%s of queueing: the bottleneck link was never idle",
                  diag_usec(v->srtt_us, a), s->samples, diag_usec(s->min_rtt_us, b),
                  diag_usec(v->queue_us, c));
    if (v->window_use >= DIAG_WND_FULL)
        diag_evidence(v, "the window was full too, but it covers the path: the rest queued");
    window_buffer_line(s, v);
    link_advice(s, v);
    return true;
}

/* A queue of a quarter of the round trip: before loss, since a loss-based congestion control
 * at a full link loses packets at the rate its Mathis bound predicts too. */
bool diag_rule_link_strong_queue(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    return diag_has_strong_queue(s, v) && !diag_probes_scale(s) && link_queue(s, v);
}

/* A smaller one (bbr keeps 1-3 ms): after loss, since a few delayed ACKs of a small window
 * raise srtt by as much. */
bool diag_rule_link_queue(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    return diag_has_queue(s, v) && !diag_probes_scale(s) && link_queue(s, v);
}

/* Does the loss explain the rate? A loss-based congestion control runs at about its Mathis
 * bound; bbr (v1) does not slow down for loss below its policer threshold (~20 %). */
static bool loss_explains(const struct diagnose_sample *s, const struct diagnose_verdict *v)
{
    if (v->loss <= 0 || v->busy < DIAG_BUSY_FULL)
        return false;
    if (diag_is_bbr(s))
        return v->loss >= DIAG_BBR_LOSS;
    return v->mathis_bps <= DIAG_MATHIS_NEAR * s->throughput_bps;
}

bool diag_rule_loss(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    const struct hostctr_delta *h = &s->snd.host;
    char a[32], b[32], c[32];
    bool bbr = diag_is_bbr(s);

    if (!loss_explains(s, v))
        return false;
    v->id = DIAG_LOSS_LIMITED;
    snprintf(v->title, sizeof(v->title), "congestion/loss limited");
    diag_evidence(v, "retransmitted %.3f%% of segments (%llu of %llu)%s", 100 * v->loss,
                  (unsigned long long)s->retrans, (unsigned long long)s->segs_out,
                  bbr ? ", above what bbr rides through (it reacts from about 20%)" : "");
    diag_evidence(v,
                  "Mathis bound: MSS/RTT x 1.22/sqrt(p) = %u B / %s x 1.22 / sqrt(%.2g) x %u "
                  "flow(s) = %s; measured %s (%s)",
                  s->mss ? s->mss : 1448, diag_usec(v->srtt_us, a), v->loss, s->flows,
                  diag_rate(v->mathis_bps, b), diag_rate(s->throughput_bps, c),
                  s->cc[0] ? s->cc : "congestion control unknown");
    diag_evidence(v,
                  "the sender was busy %.0f%%; the window was %s and no queue stood on the path "
                  "(srtt - min_rtt = %s)",
                  100 * v->busy,
                  v->window_use >= 0 && v->window_use < DIAG_WND_FULL ? "not full" : "open",
                  diag_usec(v->queue_us, a));
    if (s->snd.host_known && h->ctr[HOSTCTR_TIMEOUTS])
        diag_evidence(v, "%llu retransmission timeouts (TCPTimeouts) on the sender",
                      (unsigned long long)h->ctr[HOSTCTR_TIMEOUTS]);
    snprintf(v->advice, sizeof(v->advice),
             "The path loses packets: check the NICs' drop counters first (the receiver's "
             "rx_missed_errors: %llu)%s",
             (unsigned long long)s->rcv.host.nic_rx_missed,
             bbr ? "; bbr is already in use and this loss is more than it rides through: find "
                   "and fix the loss (a policer, a dirty link, a full buffer), or use more "
                   "parallel streams (-P)."
                 : "; a loss-based congestion control halves its window at every loss: use bbr "
                   "(-C bbr to try it; it keeps its rate through random loss), or more parallel "
                   "streams (-P).");
    if (!bbr)
        snprintf(v->tune, sizeof(v->tune),
                 "on the sender: netrig tune --apply sets net.ipv4.tcp_congestion_control=bbr "
                 "when the audit flags it");
    return true;
}

/* Nothing on the hosts held the sender back and its rate held steady: the congestion control
 * found the path's capacity. */
bool diag_rule_link_cc(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    char a[32];
    bool steady = s->nrates >= 4 && s->plateau >= DIAG_PLATEAU;

    if (!s->snd.known || !diag_sender_waited(s) || v->busy < DIAG_BUSY_FULL ||
        diag_probes_scale(s) || !(steady || diag_is_bbr(s) || diag_probes_flat(s)))
        return false;
    if (steady)
        diag_evidence(v,
                      "a plateau: %.0f%% of the %u intervals within 20%% of the median %s, "
                      "with the sender busy %.0f%% of the time",
                      100 * s->plateau, s->nrates, diag_rate(s->rate_median_bps, a), 100 * v->busy);
    diag_evidence(v,
                  "%s held the rate with the window, the buffer and the applications not in "
                  "its way, and loss does not explain it%s",
                  s->cc[0] ? s->cc : "the congestion control",
                  diag_is_bbr(s) ? " (bbr paces at the bottleneck's delivery rate)" : "");
    window_buffer_line(s, v);
    link_advice(s, v);
    return true;
}
