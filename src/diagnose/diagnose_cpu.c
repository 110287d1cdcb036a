/* diagnose_cpu: the rules about the applications and their CPUs — a paced sender, a sender the
 * network never held back (its CPU, or the application itself), the receiving host's CPU. */
#include "diagnose_priv.h"

#include <stdio.h>

bool diag_rule_paced(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    double want = (double)s->pacing_bps * s->flows;
    char a[32], b[32];

    if (!s->pacing_bps || s->throughput_bps < DIAG_PACED_LO * want ||
        s->throughput_bps > DIAG_PACED_HI * want)
        return false;
    v->id = DIAG_APP_LIMITED;
    snprintf(v->title, sizeof(v->title), "application limited: the sender was paced");
    diag_evidence(v,
                  "throughput %s = %.0f%% of the pacing asked for (%s per flow x %u flows, "
                  "--fq-rate)",
                  diag_rate(s->throughput_bps, a), 100 * s->throughput_bps / want,
                  diag_rate((double)s->pacing_bps, b), s->flows);
    diag_evidence(v,
                  "the sender was busy %.0f%% of the time; its data waited for the pacing "
                  "timer, not for the network (send-buffer limited %.0f%%)",
                  100 * v->busy, 100 * v->f_sndbuf);
    snprintf(v->advice, sizeof(v->advice),
             "The pacing rate the sender asked for is the limit: raise --fq-rate "
             "(SO_MAX_PACING_RATE) or leave it out to see what the path carries.");
    return true;
}

/* "on CPU 1 61% of the time and waiting for a CPU 35%" */
static void thread_text(const struct diagnose_end *e, char *buf, size_t len)
{
    char cpu[24] = "a CPU", busy[64] = "";

    if (e->cpu >= 0)
        snprintf(cpu, sizeof(cpu), "CPU %d", e->cpu);
    if (e->cpu_busy >= 0)
        snprintf(busy, sizeof(busy), " (%s was busy %.0f%% of the time, all processes)", cpu,
                 100 * e->cpu_busy);
    if (e->runq >= 0)
        snprintf(buf, len, "ran on %s %.0f%% of the time and waited for a CPU %.0f%%%s", cpu,
                 100 * e->run, 100 * e->runq, busy);
    else
        snprintf(buf, len, "ran on %s %.0f%% of the time%s", cpu, 100 * e->run, busy);
}

static double thread_load(const struct diagnose_end *e)
{
    return e->run + (e->runq > 0 ? e->runq : 0);
}

static void sender_cpu(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    const struct diagnose_end *e = &s->snd;
    char t[200], cpu[24] = "its CPU";

    if (e->cpu >= 0)
        snprintf(cpu, sizeof(cpu), "CPU %d", e->cpu);
    v->id = DIAG_TX_CPU_LIMITED;
    snprintf(v->title, sizeof(v->title), "sender CPU limited (%s)", cpu);
    thread_text(e, t, sizeof(t));
    diag_evidence(v, "the sending thread %s: it was CPU-bound", t);
    snprintf(v->advice, sizeof(v->advice),
             "The sending host's CPU is the limit, not the network: write in larger blocks (-l), "
             "spread the flows over more threads and cores (-P, -T), pin them NUMA-local (-A "
             "auto), run the CPU at full clock%s.",
             e->runq >= DIAG_RUNQ_CONTENDED
                 ? "; the thread also waited for its CPU: other processes use it, move them or "
                   "pin the sender to an idle core"
                 : "");
    snprintf(v->tune, sizeof(v->tune),
             "on the sender: netrig tune --apply sets the performance CPU governor when the "
             "audit flags it");
}

/* The sender's application did not wait for the network: it, or its CPU, was the limit. */
bool diag_rule_sender_app(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    const struct diagnose_end *e = &s->snd;
    char a[32], t[200];

    if (!e->known || e->wait >= DIAG_APP_WAIT || diag_window_caps(s, v))
        return false;
    if (e->thread_known && thread_load(e) >= DIAG_THREAD_FULL) {
        sender_cpu(s, v);
    } else {
        v->id = DIAG_APP_LIMITED;
        snprintf(v->title, sizeof(v->title), "application limited (sender)");
        if (e->thread_known) {
            thread_text(e, t, sizeof(t));
            diag_evidence(v, "the sending thread %s: it was neither busy nor held back", t);
        }
        snprintf(v->advice, sizeof(v->advice),
                 "The sending application offered no more data than this: the network and the "
                 "CPU had room. Write more (or faster), or use more streams (-P).");
    }
    diag_evidence(v,
                  "the sending application waited for room in its socket only %.1f%% of the "
                  "time: the network never held it back (a sender the path limits waits most "
                  "of the time)",
                  100 * e->wait);
    diag_evidence(v, "throughput %s over %u flow(s); TCP busy %.0f%% of the time",
                  diag_rate(s->throughput_bps, a), s->flows, 100 * v->busy);
    return true;
}

static bool rx_thread_bound(const struct diagnose_sample *s)
{
    const struct diagnose_end *e = &s->rcv;

    return e->known && e->wait < DIAG_APP_WAIT && e->thread_known &&
           thread_load(e) >= DIAG_THREAD_FULL;
}

/* The window explains the rate and it is a large share of the receiver's buffer: the buffer's
 * size limits the transfer. A receiver that cannot keep up leaves its buffer full of unread
 * data and advertises a small share of it; one whose buffer is too small advertises most of it
 * however fast it reads. Its thread then looks busy on a shared CPU (it always finds the few
 * kilobytes the window let through waiting when the scheduler runs it), which is not the limit. */
static bool rx_buffer_bound(const struct diagnose_sample *s, const struct diagnose_verdict *v)
{
    return diag_window_caps(s, v) && s->rcv.buf > 0 &&
           s->wnd_mean >= DIAG_RX_BUF_WINDOW * s->rcv.buf;
}

static void rx_host_evidence(const struct diagnose_sample *s, struct diagnose_verdict *v, bool cpu,
                             double squeeze_rate)
{
    const struct hostctr_delta *h = &s->rcv.host;

    if (cpu)
        diag_evidence(v,
                      "on the receiver CPU %d spent %.0f%% of its time in softirq (packet "
                      "processing)",
                      h->softirq_cpu, 100 * h->softirq_max);
    if (h->have_softnet && (h->softnet_dropped || h->softnet_squeeze))
        diag_evidence(v,
                      "the receiver's softnet_stat: %llu backlog drops, %llu time squeezes "
                      "(%.0f/s: the NAPI budget ran out with packets left)",
                      (unsigned long long)h->softnet_dropped,
                      (unsigned long long)h->softnet_squeeze, squeeze_rate);
    if (h->nic_rx_missed || h->nic_rx_dropped)
        diag_evidence(v,
                      "the receiver's NIC drops: rx_missed_errors %llu, rx_dropped %llu (most "
                      "on %s)",
                      (unsigned long long)h->nic_rx_missed, (unsigned long long)h->nic_rx_dropped,
                      h->nic_worst);
    if (h->ctr[HOSTCTR_ZERO_WINDOW_ADV] || h->ctr[HOSTCTR_RCVQ_DROP] ||
        h->ctr[HOSTCTR_PRUNE_CALLED])
        diag_evidence(v,
                      "the receiver advertised a zero window %llu times (TCPToZeroWindowAdv), "
                      "pruned its queue %llu times and dropped %llu segments for a full receive "
                      "queue",
                      (unsigned long long)h->ctr[HOSTCTR_ZERO_WINDOW_ADV],
                      (unsigned long long)h->ctr[HOSTCTR_PRUNE_CALLED],
                      (unsigned long long)h->ctr[HOSTCTR_RCVQ_DROP]);
}

bool diag_rule_rx_cpu(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    const struct hostctr_delta *h = &s->rcv.host;
    double squeeze_rate = s->seconds > 0 ? h->softnet_squeeze / s->seconds : 0;
    bool thread = rx_thread_bound(s), known = s->rcv.host_known && h->valid;
    bool cpu = known && h->softirq_max >= DIAG_SOFTIRQ_FULL;
    bool squeeze = known && squeeze_rate >= DIAG_SQUEEZE_PER_S;
    bool drops = known && s->retrans && (h->softnet_dropped || h->nic_rx_missed);
    char t[200], who[40] = "";

    if (!thread && !cpu && !squeeze && !drops)
        return false;
    if (!cpu && !squeeze && !drops && rx_buffer_bound(s, v))
        return false; /* the receive buffer, not the thread, set the rate: diag_rule_rwnd */
    v->id = DIAG_RX_CPU_LIMITED;
    if (thread && s->rcv.cpu >= 0)
        snprintf(who, sizeof(who), " (CPU %d)", s->rcv.cpu);
    else if (cpu)
        snprintf(who, sizeof(who), " (CPU %d)", h->softirq_cpu);
    snprintf(v->title, sizeof(v->title), "receiving host's CPU limited%s", who);
    if (thread) {
        thread_text(&s->rcv, t, sizeof(t));
        diag_evidence(v,
                      "the receiving application waited for data only %.1f%% of the time: data "
                      "was always queued for it; its thread %s",
                      100 * s->rcv.wait, t);
    }
    if (known)
        rx_host_evidence(s, v, cpu, squeeze_rate);
    diag_evidence(v, "the sender waited for room in its socket %s; busy %.0f%%",
                  s->snd.known ? "most of the time" : "(not measured)", 100 * v->busy);
    snprintf(v->advice, sizeof(v->advice), "The receiving host cannot take the data faster. %s%s",
             thread ? "Its application thread is CPU-bound: more streams and threads on other "
                      "cores (-P, -T), NUMA-local pinning, full CPU clock. "
                    : "",
             cpu || squeeze || drops
                 ? "Spread the NIC's receive queue IRQs over NIC-local cores, use more queues or "
                   "RPS, bigger rings, and adjust interrupt coalescing; raise "
                   "net.core.netdev_max_backlog when softnet drops grow."
                 : "");
    snprintf(v->tune, sizeof(v->tune),
             "on the receiver: netrig tune --apply sets net.core.netdev_max_backlog, the rx-0 "
             "rps_cpus mask and the CPU governor when the audit flags them; rings and channels "
             "are manual ethtool steps it lists");
    return true;
}

/* A data thread that wanted a CPU at least half the time and waited for one a quarter of it:
 * the host's CPUs (on loopback or veth, both ends and the packet processing share them). */
bool diag_end_starved(const struct diagnose_end *e)
{
    return e->thread_known && e->runq >= DIAG_RUNQ_STARVED && thread_load(e) >= DIAG_THREAD_WANTS;
}

/* ... and the limit only when it did not find its socket empty (receiver) or full (sender)
 * half the time: a starved receiver that limits the rate has data queued whenever it runs. A
 * thread on a busy host waits for a CPU after each wake-up whatever limits the rate (through
 * a 200 Mbit/s tbf on veth, load 10 on 2 CPUs: the receiver waited for a CPU 75 % of the time
 * and for data 90 %). */
static bool starved_limit(const struct diagnose_end *e)
{
    return diag_end_starved(e) && (!e->known || e->wait < DIAG_NET_WAIT);
}

bool diag_rule_cpu_starved(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    const struct diagnose_end *e;
    bool tx;
    char t[200], a[32];

    if (!starved_limit(&s->snd) && !starved_limit(&s->rcv))
        return false;
    tx = starved_limit(&s->snd) && (!starved_limit(&s->rcv) || s->snd.runq >= s->rcv.runq);
    e = tx ? &s->snd : &s->rcv;
    v->id = tx ? DIAG_TX_CPU_LIMITED : DIAG_RX_CPU_LIMITED;
    snprintf(v->title, sizeof(v->title), "%s CPU limited (CPU %d)",
             tx ? "sender" : "receiving host's", e->cpu);
    thread_text(e, t, sizeof(t));
    diag_evidence(v,
                  "the %s thread %s: it wanted a CPU %.0f%% of the time and waited for one "
                  "a quarter of it or more",
                  tx ? "sending" : "receiving", t, 100 * thread_load(e));
    if (diag_end_starved(&s->snd) && diag_end_starved(&s->rcv)) {
        thread_text(tx ? &s->rcv : &s->snd, t, sizeof(t));
        diag_evidence(v, "the %s thread too: %s", tx ? "receiving" : "sending", t);
    }
    if (s->same_host)
        diag_evidence(v, "both ends ran on one host (one kernel): the senders, the receivers and "
                         "the packet processing share its CPUs");
    diag_evidence(v,
                  "throughput %s; the sender waited for room %.0f%%, the receiver for data "
                  "%.0f%% of the time",
                  diag_rate(s->throughput_bps, a), 100 * s->snd.wait, 100 * s->rcv.wait);
    snprintf(v->advice, sizeof(v->advice),
             "The %s host's CPUs are the limit: its data thread waits for a CPU that other work "
             "(%s) holds. Free or add CPUs, pin the test's threads to idle cores (-A), or move "
             "the other load; on loopback and veth both ends and the packet processing share "
             "the same CPUs.",
             tx ? "sending" : "receiving",
             s->same_host ? "the other end, the kernel's packet processing, other processes"
                          : "the kernel's packet processing, other processes");
    return true;
}

/* Without the application's own figures (an older peer, or --during): TCP's busy time. */
bool diag_rule_app_busy(const struct diagnose_sample *s, struct diagnose_verdict *v)
{
    char a[32];

    if (s->snd.known || v->busy >= DIAG_BUSY_APP)
        return false;
    v->id = DIAG_APP_LIMITED;
    snprintf(v->title, sizeof(v->title), "application/CPU limited (sender)");
    diag_evidence(v,
                  "the sender had data in flight only %.0f%% of the time (busy %s of %.2f s x %u "
                  "flows): it did not keep the socket fed",
                  100 * v->busy, diag_usec((double)s->busy_us, a), s->seconds, s->flows);
    diag_evidence(v, "window limited %.0f%%, buffer limited %.0f%% of the busy time",
                  100 * v->f_rwnd, 100 * v->f_sndbuf);
    diag_evidence(v, "throughput %s", diag_rate(s->throughput_bps, a));
    snprintf(v->advice, sizeof(v->advice),
             "The sending application or its CPU cannot fill the path: use more streams (-P) "
             "and threads (-T), pin them NUMA-local (-A auto), and run the CPU at full clock "
             "(ESnet: about 3 GHz per 30 Gbit/s flow).");
    snprintf(v->tune, sizeof(v->tune),
             "netrig tune --apply sets the performance CPU governor when the audit flags it");
    return true;
}

bool diagnose_end_cg_known(const struct diagnose_end *e)
{
    return e->usage.cg_version && e->usage.cg_has_throttle;
}

static double throttled_share(const struct diagnose_end *e)
{
    const struct cpu_usage *u = &e->usage;

    return diagnose_end_cg_known(e) && u->cg_throttled > 0 && u->cg_periods > 0
               ? u->cg_throttled / u->cg_periods
               : 0;
}

bool diag_rule_cpu_quota(const struct diagnose_sample *s, struct diagnose_verdict *v, double share)
{
    double ts = throttled_share(&s->snd), tr = throttled_share(&s->rcv);
    bool tx = ts >= tr;
    const struct diagnose_end *e = tx ? &s->snd : &s->rcv;
    double f = tx ? ts : tr;
    char q[40] = "its cgroup's CPU quota", a[32];

    if (f <= 0 || f < share)
        return false;
    v->id = tx ? DIAG_TX_CPU_LIMITED : DIAG_RX_CPU_LIMITED;
    if (e->usage.cg_quota_cores > 0)
        snprintf(q, sizeof(q), "a cgroup CPU quota of %.2f CPU", e->usage.cg_quota_cores);
    snprintf(v->title, sizeof(v->title), "%s CPU limited (%s on the %s)",
             tx ? "sender" : "receiver", q, e->local ? "client" : "server");
    diag_evidence(v,
                  "the %s's cgroup was throttled in %.0f of %.0f scheduler periods (%.0f%%), "
                  "%.3f s stopped in all (cpu.stat nr_throttled, throttled time)",
                  tx ? "sender" : "receiver", e->usage.cg_throttled, e->usage.cg_periods, 100 * f,
                  e->usage.cg_throttled_s);
    if (tx ? tr > 0 : ts > 0) {
        const struct diagnose_end *o = tx ? &s->rcv : &s->snd;
        diag_evidence(v, "the %s's cgroup too: %.0f of %.0f periods", tx ? "receiver" : "sender",
                      o->usage.cg_throttled, o->usage.cg_periods);
    }
    diag_evidence(v, "throughput %s in %.2f s", diag_rate(s->throughput_bps, a), s->seconds);
    snprintf(v->advice, sizeof(v->advice),
             "The %s end ran out of its CPU quota (%s): raise the quota (cpu.max in cgroup v2, "
             "cpu.cfs_quota_us in v1, a container's CPU limit), or move netrig out of the "
             "limited cgroup; the machine's idle CPUs do not help a throttled cgroup.",
             tx ? "sending" : "receiving", q);
    return true;
}
