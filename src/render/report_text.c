/* report_text: human-readable stream results. */
#include "report_text.h"
#include "report_mptcp.h"

#include "multi_result.h"
#include "test_kind.h"

#include "units.h"

#include <math.h>
#include <string.h>

static double rate(uint64_t bytes, double s) { return s > 0 ? (double)bytes * 8.0 / s : 0.0; }

static void header_txn(FILE *out, const struct run_result *r)
{
    const struct params *p = &r->params;
    const struct test_kind *k = test_kind_of(p);
    char mode[64];

    if (p->rate_tps)
        snprintf(mode, sizeof(mode), "open loop at %llu/s", (unsigned long long)p->rate_tps);
    else
        snprintf(mode, sizeof(mode), "closed loop, depth %u", p->depth);
    fprintf(out, "netrig %s%s to %s: %u flow%s, %u thread%s, %u,%u bytes, %s, %.4gs%s\n", r->test,
            k->label_paren, r->server, p->flows, p->flows == 1 ? "" : "s", p->threads,
            p->threads == 1 ? "" : "s", p->req_size, p->resp_size,
            k->flags & TEST_KIND_CONN_PER_TXN
                ? (p->connect_only ? "connect only" : "connect per request")
                : mode,
            p->duration_ns / 1e9, p->busy_poll ? ", busy-poll" : "");
    if (p->omit_ns)
        fprintf(out, "  (first %.4gs omitted as warm-up)\n", p->omit_ns / 1e9);
    if (p->interval_ns)
        fprintf(out, "%-17s %14s %14s %9s\n", "interval", "transactions/s", "mean latency",
                "host cpu");
    fflush(out);
}

void report_text_header(FILE *out, const struct run_result *r)
{
    const struct params *p = &r->params;
    char span[80];

    if (params_is_transactional(p)) {
        header_txn(out, r);
        return;
    }
    fprintf(out, "netrig %s to %s: %u flow%s%s, %u thread%s, %s, ", r->test, r->server, p->flows,
            p->flows == 1 ? "" : "s", p->dir == PARAMS_DIR_BIDIR ? " each way" : "", p->threads,
            p->threads == 1 ? "" : "s", params_dir_name(p->dir));
    params_span(p, span, sizeof(span));
    fprintf(out, "%s\n", span);
    if (p->omit_ns)
        fprintf(out, "  (first %.4gs omitted as warm-up)\n", p->omit_ns / 1e9);
    if (p->title[0])
        fprintf(out, "  title: %s\n", p->title);
    if (p->interval_ns && p->dir == PARAMS_DIR_FORWARD)
        fprintf(out, "  (what the sender wrote; what crossed the path follows the run)\n");
    if (p->interval_ns)
        fprintf(out, "%-17s %12s %16s %7s %9s\n", "interval", "transfer",
                p->dir == PARAMS_DIR_FORWARD   ? "sender wrote"
                : p->dir == PARAMS_DIR_REVERSE ? "received"
                                               : "rate",
                test_kind_is(p, TEST_KIND_DATAGRAMS) ? "lost" : "retr", "host cpu");
    fflush(out);
}

void report_text_interval(FILE *out, const struct run_result *r, const struct side_result *s,
                          const struct interval *iv)
{
    char b[32], rt[32], retr[16];
    uint64_t bytes = iv->sent_bytes + iv->recv_bytes;

    (void)s;
    if (params_is_transactional(&r->params)) {
        double len = iv->end_s - iv->start_s;
        fprintf(out, "[%6.2f-%6.2f s] %14.0f %11.1f us %8.1f%%%s\n", iv->start_s, iv->end_s,
                len > 0 ? iv->txns / len : 0, iv->txns ? iv->lat_sum_ns / 1e3 / iv->txns : 0,
                iv->cpu.busy_pct, iv->omitted ? "  (omitted)" : "");
        fflush(out);
        return;
    }
    units_format_bytes((double)bytes, b, sizeof(b));
    units_format_rate(rate(bytes, iv->end_s - iv->start_s), rt, sizeof(rt));
    if (test_kind_is(
            &r->params,
            TEST_KIND_DATAGRAMS)) /* per-interval loss: the table after the run (forward tests) */
        snprintf(retr, sizeof(retr), "-");
    else if (result_interval_retrans(iv) < 0) /* the server's senders did not report in time */
        snprintf(retr, sizeof(retr), "-");
    else
        snprintf(retr, sizeof(retr), "%u", iv->retrans);
    fprintf(out, "[%6.2f-%6.2f s] %12s %16s %7s %8.1f%%%s\n", iv->start_s, iv->end_s, b, rt, retr,
            iv->cpu.busy_pct, iv->omitted ? "  (omitted)" : "");
    fflush(out);
}

/* What an end's cost figure counts, in a few words. */
static const char *basis_name(const struct cpu_usage *c)
{
    if (c->own_valid && c->own_basis)
        return "netrig's own CPU";
    return c->valid ? "whole machine" : "not measured";
}

/* An end's cost figure, or "-" when its CPU was not measured (an iperf3 peer). */
static const char *cost_fig(const struct cpu_usage *c, double cost, char buf[24])
{
    if (!c->valid && !c->own_valid)
        return "-";
    snprintf(buf, 24, "%.2f", cost);
    return buf;
}

/* The process's cgroup: what it used, its quota and how often the quota stopped it. */
static void cgroup_line(FILE *out, const struct cpu_usage *c)
{
    char used[48] = "usage not readable", quota[48] = "no quota", thr[96] = "";

    if (c->cg_has_usage)
        snprintf(used, sizeof(used), "used %.3f s", c->cg_usage_s);
    if (c->cg_quota_cores > 0)
        snprintf(quota, sizeof(quota), "quota %.2f CPU", c->cg_quota_cores);
    if (c->cg_has_throttle)
        snprintf(thr, sizeof(thr), ", throttled in %.0f of %.0f periods (%.3f s)", c->cg_throttled,
                 c->cg_periods, c->cg_throttled_s);
    fprintf(out, "            cgroup v%d (every task in it): %s, %s%s\n", c->cg_version, used,
            quota, thr);
}

/* What the cost figure counts and why. */
static void cost_line(FILE *out, const struct cpu_usage *c, double cost, bool per_txn)
{
    const char *unit = per_txn ? "CPU us/trans" : "cores/10Gbit/s";

    if (!c->own_valid || !c->own_basis) {
        fprintf(out, "            cost %.2f %s counting the whole machine's busy CPU%s\n", cost,
                unit, c->own_valid ? " (no other work on the host, no quota below it)" : "");
        return;
    }
    if (c->cg_quota_cores > 0 && c->cg_quota_cores < c->ncpu)
        fprintf(out,
                "            cost %.2f %s counting netrig's own CPU (its cgroup's quota, %.2f "
                "CPU, is below the machine's %d)\n",
                cost, unit, c->cg_quota_cores, c->ncpu);
    else
        fprintf(out,
                "            cost %.2f %s counting netrig's own CPU (the host is shared: %.2f "
                "cores of other work)\n",
                cost, unit, c->other_cores);
}

/* cost: cores per 10 Gbit/s for streams, CPU microseconds per transaction for rr/crr */
static void cpu_line(FILE *out, const char *who, const struct cpu_usage *c, double cost,
                     bool per_txn)
{
    if (!c->valid && !c->own_valid) {
        fprintf(out, "CPU %-7s not reported\n", who);
        return;
    }
    if (c->valid)
        fprintf(out,
                "CPU %-7s %5.1f%% busy of %d CPUs (whole machine): user %.1f, sys %.1f, softirq "
                "%.1f, irq %.1f, steal %.1f\n",
                who, c->busy_pct, c->ncpu, c->user_pct, c->system_pct, c->softirq_pct, c->irq_pct,
                c->steal_pct);
    else
        fprintf(out, "CPU %-7s machine not reported\n", who);
    if (c->own_valid && c->own_threads && c->seconds > 0)
        fprintf(out,
                "            netrig's worker threads %.3f cores (user %.3f s, sys %.3f s in %.2f "
                "s; both ends ran in this one process); %.0f intr/s\n",
                (c->own_user_s + c->own_system_s) / c->seconds, c->own_user_s, c->own_system_s,
                c->seconds, c->intr_per_s);
    else if (c->own_valid && c->seconds > 0)
        fprintf(out,
                "            netrig process %.3f cores (user %.3f s, sys %.3f s in %.2f s); "
                "worker threads %.1f%% of the machine (usr %.1f, sys %.1f); %.0f intr/s\n",
                (c->own_user_s + c->own_system_s) / c->seconds, c->own_user_s, c->own_system_s,
                c->seconds, c->threads_user_pct + c->threads_system_pct, c->threads_user_pct,
                c->threads_system_pct, c->intr_per_s);
    else
        fprintf(out, "            worker threads %.1f%% (usr %.1f, sys %.1f), %.0f intr/s\n",
                c->threads_user_pct + c->threads_system_pct, c->threads_user_pct,
                c->threads_system_pct, c->intr_per_s);
    if (c->cg_version)
        cgroup_line(out, c);
    cost_line(out, c, cost, per_txn);
}

static void flow_table(FILE *out, const struct run_result *r)
{
    bool zc = r->params.zerocopy_rx; /* a column for the share each receiver mapped */

    /* cwnd in segments (TCP_INFO's unit; iperf3 prints KBytes), "-" without the sender's
     * TCP_INFO (UDP, or a peer that did not send it) */
    fprintf(out, "%4s %-4s %10s %10s %14s %6s %8s %10s %4s %4s%s\n", "flow", "dir", "sent",
            "received", "throughput", "retr", "rtt", "cwnd", "ccpu", "scpu", zc ? "  mapped" : "");
    for (uint32_t i = 0; i < r->nflows; i++) {
        const struct flow_summary *f = &r->flows[i];
        char sb[32], rb[32], tp[32], rtt[16] = "-", retr[16] = "-", cc[8] = "-", sc[8] = "-";
        char mapped[16] = "", cwnd[24] = "-";

        units_format_bytes((double)f->sent_bytes, sb, sizeof(sb));
        units_format_bytes((double)f->bytes, rb, sizeof(rb));
        units_format_rate(f->throughput_bps, tp, sizeof(tp));
        if (f->has_sender_tcpinfo) {
            units_format_duration(f->rtt_us / 1e6, rtt, sizeof(rtt)); /* as diagnose's srtt */
            snprintf(retr, sizeof(retr), "%u", f->retransmits);
            snprintf(cwnd, sizeof(cwnd), "%u seg", f->cwnd);
        }
        if (f->client_cpu >= 0)
            snprintf(cc, sizeof(cc), "%d", f->client_cpu);
        if (f->server_cpu >= 0)
            snprintf(sc, sizeof(sc), "%d", f->server_cpu);
        if (zc)
            snprintf(mapped, sizeof(mapped), " %6.2f%%", 100 * f->rx_zc_fraction);
        fprintf(out, "%4u %-4s %10s %10s %14s %6s %8s %10s %4s %4s%s\n", f->id,
                f->client_sends ? "up" : "down", sb, rb, tp, retr, rtt, cwnd, cc, sc, mapped);
    }
}

/* "2 threads pinned to CPU 0-1", "1 thread ran on CPU 1", "1 thread (CPU -)" when no CPU was
 * seen (an iperf3 peer), or "not reported" */
static void placement(FILE *out, const struct side_result *s)
{
    const char *cpus = s->cpus[0] ? s->cpus : s->cpus_seen[0] ? s->cpus_seen : NULL;

    if (!s->valid) {
        fprintf(out, "not reported");
        return;
    }
    if (!cpus) {
        fprintf(out, "%u thread%s (CPU -)", s->threads, s->threads == 1 ? "" : "s");
        return;
    }
    fprintf(out, "%u thread%s %s CPU %s", s->threads, s->threads == 1 ? "" : "s",
            s->cpus[0] ? "pinned to" : "ran on", cpus);
}

static void notes(FILE *out, const struct run_result *r)
{
    if (r->note[0])
        fprintf(out, "Note        %s\n", r->note);
    if (r->local.warning[0])
        fprintf(out, "Note        local: %s\n", r->local.warning);
    if (r->remote.warning[0])
        fprintf(out, "Note        server: %s\n", r->remote.warning);
    for (uint32_t i = 0; i < r->nwarnings && i < RESULT_MAX_WARNINGS; i++)
        fprintf(out, "Warning     %s\n", r->warnings[i]);
    /* the server declined to send its settings, or sent some that were refused */
    if (r->remote.host_note[0] && !r->remote.host && !r->params.iperf3_wire)
        fprintf(out, "Note        %s\n", r->remote.host_note);
    if (r->partial)
        fprintf(out, "PARTIAL     %s\n", r->error[0] ? r->error : "the test was cut short");
    fflush(out);
}

/* The sending sockets' TCP_NOTSENT_LOWAT, when netrig (or --notsent-lowat) set one: it shapes how
 * much unsent data each socket holds, so the report says so. */
static void notsent_line(FILE *out, const struct run_result *r)
{
    uint32_t set = 0, most = 0;
    char size[32];

    for (uint32_t i = 0; i < r->nflows; i++)
        if (r->flows[i].notsent_lowat) {
            set++;
            most = r->flows[i].notsent_lowat > most ? r->flows[i].notsent_lowat : most;
        }
    if (!set)
        return;
    units_format_bytes(most, size, sizeof(size));
    fprintf(out, "Senders     TCP_NOTSENT_LOWAT %s on %u of %u flows (%s)\n", size, set, r->nflows,
            r->params.notsent_lowat == PARAMS_NOTSENT_AUTO
                ? "default with flows sharing a thread; --notsent-lowat 0: off"
                : "--notsent-lowat");
}

static void txn_table(FILE *out, const struct run_result *r)
{
    fprintf(out, "%4s %12s %14s %9s %4s %4s\n", "flow", "transactions", "per second", "timeouts",
            "ccpu", "scpu");
    for (uint32_t i = 0; i < r->nflows; i++) {
        const struct flow_summary *f = &r->flows[i];
        char cc[8] = "-", sc[8] = "-";
        if (f->client_cpu >= 0)
            snprintf(cc, sizeof(cc), "%d", f->client_cpu);
        if (f->server_cpu >= 0)
            snprintf(sc, sizeof(sc), "%d", f->server_cpu);
        fprintf(out, "%4u %12llu %14.1f %9llu %4s %4s\n", f->id, (unsigned long long)f->txns,
                f->transactions_per_s, (unsigned long long)f->timeouts, cc, sc);
    }
}

static void txn_summary(FILE *out, const struct run_result *r)
{
    const struct run_summary *s = &r->summary;
    const struct run_latency *l = &s->latency;

    fputc('\n', out);
    if (r->nflows <= 64)
        txn_table(out, r);
    fprintf(out,
            "\nRate        %.1f transactions/s; %llu in %.2f s; server answered %llu; "
            "%llu timeouts\n",
            s->transactions_per_s, (unsigned long long)s->transactions, r->local.seconds,
            (unsigned long long)s->server_transactions, (unsigned long long)s->timeouts);
    fprintf(out,
            "Latency us  min %.1f  p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  p99.99 %.1f\n"
            "            max %.1f  mean %.1f\n",
            l->min_us, l->p50_us, l->p90_us, l->p99_us, l->p999_us, l->p9999_us, l->max_us,
            l->mean_us);
}

static void udp_summary(FILE *out, const struct run_result *r)
{
    const struct run_udp *u = &r->summary.u;

    fprintf(out,
            "UDP         %llu sent, %llu received, %llu lost (%.3f%%), %llu duplicate, "
            "%llu late\n",
            (unsigned long long)u->sent, (unsigned long long)u->received,
            (unsigned long long)u->lost, u->loss_pct, (unsigned long long)u->duplicates,
            (unsigned long long)u->out_of_order);
    fprintf(out, "            %.0f datagrams/s sent, %.0f received; jitter %.1f us\n", u->sent_pps,
            u->received_pps, u->jitter_us);
    if (u->shared_clock)
        fprintf(out, "            one-way delay mean %.1f us (min %.1f, max %.1f)\n",
                u->owd_mean_us, u->owd_min_us, u->owd_max_us);
    if (u->send_drops)
        fprintf(out,
                "            %llu datagrams refused by the sending host (ENOBUFS from its local "
                "qdisc or device queue, or a full socket buffer; counted lost)\n",
                (unsigned long long)u->send_drops);
}

/* One rate a user can quote: what the receiver got (what crossed the path); the sender's
 * figure beside it, and why it differs when it does by more than 1 %. */
static void headline(FILE *out, const struct run_summary *s, const char *tp, const char *sp,
                     const char *b, double seconds)
{
    double d = s->throughput_bps > 0 ? (s->sender_bps - s->throughput_bps) / s->throughput_bps : 0;

    fprintf(out, "\nThroughput  %s received (what crossed the path); %s in %.2f s\n", tp, b,
            seconds);
    if (fabs(d) > 0.01)
        fprintf(out, "            the sender wrote %s (%+.1f%%): %s\n", sp, 100 * d,
                d > 0 ? "its socket buffer and the path still held that data when the "
                        "measured period ended (or it was lost)"
                      : "the receiver counted data sent before the measured period (warm-up, "
                        "buffers draining)");
    else
        fprintf(out, "            the sender wrote %s (within 1%%)\n", sp);
}

/* A forward test's live table showed the sender's writes; this one shows what crossed the path
 * (the server's received bytes per interval) with the sender's writes beside it. */
static void path_row(FILE *out, const struct run_result *r, const struct interval *rx,
                     const struct interval *tx)
{
    char rt[32], st[32] = "-", lost[24] = "";
    double len = rx->end_s - rx->start_s, dg = r->params.write_size;

    units_format_rate(rate(rx->recv_bytes, len), rt, sizeof(rt));
    if (tx)
        units_format_rate(rate(tx->sent_bytes, tx->end_s - tx->start_s), st, sizeof(st));
    if (test_kind_is(&r->params, TEST_KIND_DATAGRAMS) && tx && dg > 0)
        snprintf(lost, sizeof(lost), " %12.0f", (double)tx->sent_bytes / dg - rx->recv_bytes / dg);
    else if (test_kind_is(&r->params, TEST_KIND_DATAGRAMS))
        snprintf(lost, sizeof(lost), " %12s", "-");
    fprintf(out, "[%6.2f-%6.2f s] %16s %16s%s%s\n", rx->start_s, rx->end_s, rt, st, lost,
            rx->omitted ? "  (omitted)" : "");
}

static void path_table(FILE *out, const struct run_result *r)
{
    const struct side_result *rx = &r->remote, *tx = &r->local;

    if (r->params.dir != PARAMS_DIR_FORWARD || !r->params.interval_ns || !tx->nintervals)
        return;
    if (!rx->valid || !rx->nintervals) {
        fprintf(out, "\nIntervals   the lines above are what the sender wrote; the receiver (the\n"
                     "            server) sent no intervals: what crossed the path in each is not "
                     "known\n");
        return;
    }
    fprintf(out, "\nIntervals   received = what crossed the path (the receiver's, the server's)\n"
                 "            sender wrote = what the client's sockets took (the lines above)\n");
    if (test_kind_is(&r->params, TEST_KIND_DATAGRAMS))
        fprintf(out, "            unreceived = datagrams written minus received in the interval\n"
                     "            (loss, plus any in flight at its edges)\n");
    fprintf(out, "%-17s %16s %16s%s\n", "interval", "received", "sender wrote",
            test_kind_is(&r->params, TEST_KIND_DATAGRAMS) ? "   unreceived" : "");
    for (uint32_t i = 0; i < rx->nintervals; i++) {
        const struct interval *a = &rx->intervals[i], *b = NULL;
        double half = r->params.interval_ns / 2e9;

        for (uint32_t j = 0; j < tx->nintervals && !b; j++)
            if (fabs(tx->intervals[j].start_s - a->start_s) < half &&
                fabs(tx->intervals[j].end_s - a->end_s) < half)
                b = &tx->intervals[j];
        path_row(out, r, a, b);
    }
}

void report_text_summary(FILE *out, const struct run_result *r)
{
    const struct run_summary *s = &r->summary;
    char tp[32], sp[32], b[32], up[32], down[32], note[400];

    if (params_is_transactional(&r->params)) {
        txn_summary(out, r);
        cpu_line(out, "local", &r->local.cpu, s->local_cpu_us_per_txn, true);
        cpu_line(out, "remote", &r->remote.cpu, s->remote_cpu_us_per_txn, true);
        fprintf(out, "Placement   client: ");
        placement(out, &r->local);
        fprintf(out, "; server: ");
        placement(out, &r->remote);
        fputc('\n', out);
        report_mptcp_text(out, r);
        notes(out, r);
        return;
    }
    fputc('\n', out);
    if (r->nflows <= 64)
        flow_table(out, r);
    else
        fprintf(out, "(%u flows: per-flow figures are in the -J output)\n", r->nflows);
    report_mptcp_text(out, r);
    path_table(out, r);
    units_format_rate(s->throughput_bps, tp, sizeof(tp));
    units_format_rate(s->sender_bps, sp, sizeof(sp));
    units_format_bytes((double)s->bytes, b, sizeof(b));
    if (r->remote.valid || r->params.dir == PARAMS_DIR_REVERSE)
        headline(out, s, tp, sp, b, r->local.seconds);
    else
        fprintf(out,
                "\nThroughput  %s sent (the server reported no receive figures); "
                "%s in %.2f s\n",
                sp, b, r->local.seconds);
    fprintf(out, "Cost        %s cores/10Gbit/s client (%s), %s server (%s)%s\n",
            cost_fig(&r->local.cpu, s->local_cores_per_10g, (char[24]){0}),
            basis_name(&r->local.cpu),
            cost_fig(&r->remote.cpu, s->remote_cores_per_10g, (char[24]){0}),
            basis_name(&r->remote.cpu),
            s->rx_copy_skipped ? " (receiver's copy not counted: --skip-rx-copy)" : "");
    result_rx_note(r, note, sizeof(note));
    if (note[0])
        fprintf(out, "Receive     %s\n", note);
    if (r->params.dir == PARAMS_DIR_BIDIR) {
        units_format_rate(s->up_bps, up, sizeof(up));
        units_format_rate(s->down_bps, down, sizeof(down));
        fprintf(out, "            up (client to server) %s, down %s\n", up, down);
    }
    if (s->udp)
        udp_summary(out, r);
    else
        fprintf(out, "Fairness    Jain's index %.4f over %u flows; %u retransmits; congestion %s\n",
                s->jain_index, r->nflows, s->retransmits,
                r->local.congestion[0] ? r->local.congestion : "?");
    if (!s->udp)
        notsent_line(out, r);
    cpu_line(out, "local", &r->local.cpu, s->local_cores_per_10g, false);
    cpu_line(out, "remote", &r->remote.cpu, s->remote_cores_per_10g, false);
    fprintf(out, "Placement   client: ");
    placement(out, &r->local);
    fprintf(out, "; server: ");
    placement(out, &r->remote);
    fputc('\n', out);
    notes(out, r);
    fflush(out);
}

void report_text_multi(FILE *out, const struct multi_result *m)
{
    bool txn = m->n && params_is_transactional(&m->runs[0].params);
    char rate[32];

    /* each target's whole report first: its latency, retransmits, CPU and placement */
    for (uint32_t t = 0; t < m->n; t++) {
        fprintf(out, "%s== target %u: %s:%u (%s)\n", t ? "\n" : "", t, m->targets[t].host,
                m->targets[t].port,
                m->rc[t] == 0  ? "complete"
                : m->rc[t] > 0 ? "partial"
                               : "failed");
        if (m->rc[t] >= 0)
            report_text_summary(out, &m->runs[t]);
        else
            fprintf(out, "FAILED      %s\n", m->err[t]);
    }
    fputc('\n', out);
    fprintf(out, "%-28s %-8s %16s %5s %7s %6s %11s\n", "target", "status",
            txn ? "transactions/s" : "throughput", "flows", "jain", "retr", "clock off");
    for (uint32_t t = 0; t < m->n; t++) {
        const struct run_result *r = &m->runs[t];
        char where[300], val[32] = "-";

        snprintf(where, sizeof(where), "%s:%u", m->targets[t].host, m->targets[t].port);
        if (m->rc[t] >= 0) {
            if (txn)
                snprintf(val, sizeof(val), "%.1f", r->summary.transactions_per_s);
            else
                units_format_rate(r->summary.throughput_bps, val, sizeof(val));
        }
        fprintf(out, "%-28.28s %-8s %16s %5u %7.4f %6u %9.1fus\n", where,
                m->rc[t] == 0  ? "ok"
                : m->rc[t] > 0 ? "partial"
                               : "failed",
                val, r->nflows, r->summary.jain_index, r->summary.retransmits,
                m->offset_ns[t] / 1e3);
        if (m->rc[t] != 0)
            fprintf(out, "    %s\n", m->err[t]);
    }
    if (txn)
        snprintf(rate, sizeof(rate), "%.1f transactions/s", m->transactions_per_s);
    else
        units_format_rate(m->throughput_bps, rate, sizeof(rate));
    fprintf(out, "\nTotal       %s over %u of %u targets, %u flows; Jain's index %.4f\n", rate,
            m->ok, m->n, m->flows, m->jain_index);
    fprintf(out, "            started within %.1f us of each other\n", m->start_spread_ns / 1e3);
    fflush(out);
}

void report_text_queued(void *ctx, int ahead)
{
    (void)ctx;
    fprintf(stderr, "netrig: server is busy with %d exclusive test(s); waiting our turn\n", ahead);
}

static void text_start(void *ctx, const struct run_result *r) { report_text_header(ctx, r); }

static void text_interval(void *ctx, const struct run_result *r, const struct side_result *s,
                          const struct interval *iv)
{
    report_text_interval(ctx, r, s, iv);
}

struct run_observer report_text_observer(FILE *out)
{
    return (struct run_observer){
        .on_queued = report_text_queued,
        .on_start = text_start,
        .on_interval = text_interval,
        .ctx = out,
    };
}

struct run_observer report_text_quiet_observer(void)
{
    return (struct run_observer){.on_queued = report_text_queued};
}
