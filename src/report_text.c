/* report_text: human-readable stream results. */
#include "report_text.h"

#include "units.h"

#include <string.h>

static double rate(uint64_t bytes, double s)
{
    return s > 0 ? (double)bytes * 8.0 / s : 0.0;
}

void report_text_header(FILE *out, const struct run_result *r)
{
    const struct params *p = &r->params;

    fprintf(out, "netrig %s to %s: %u flow%s%s, %u thread%s, %s, %.4gs\n", r->test, r->server,
            p->flows, p->flows == 1 ? "" : "s", p->dir == PARAMS_DIR_BIDIR ? " each way" : "",
            p->threads, p->threads == 1 ? "" : "s", params_dir_name(p->dir), p->duration_ns / 1e9);
    if (p->omit_ns)
        fprintf(out, "  (first %.4gs omitted as warm-up)\n", p->omit_ns / 1e9);
    if (p->title[0])
        fprintf(out, "  title: %s\n", p->title);
    if (p->interval_ns)
        fprintf(out, "%-17s %12s %16s %7s %9s\n", "interval", "transfer", "rate", "retr",
                "cpu busy");
    fflush(out);
}

void report_text_interval(FILE *out, const struct run_result *r, const struct side_result *s,
                          const struct interval *iv)
{
    char b[32], rt[32];
    uint64_t bytes = iv->sent_bytes + iv->recv_bytes;

    (void)r;
    (void)s;
    units_format_bytes((double)bytes, b, sizeof(b));
    units_format_rate(rate(bytes, iv->end_s - iv->start_s), rt, sizeof(rt));
    fprintf(out, "[%6.2f-%6.2f s] %12s %16s %7u %8.1f%%%s\n", iv->start_s, iv->end_s, b, rt,
            iv->retrans, iv->cpu.busy_pct, iv->omitted ? "  (omitted)" : "");
    fflush(out);
}

static void cpu_line(FILE *out, const char *who, const struct cpu_usage *c, double cost)
{
    if (!c->valid) {
        fprintf(out, "CPU %-7s not reported\n", who);
        return;
    }
    fprintf(out, "CPU %-7s %5.1f%% busy of %d CPUs: user %.1f, sys %.1f, softirq %.1f, irq %.1f\n",
            who, c->busy_pct, c->ncpu, c->user_pct, c->system_pct, c->softirq_pct, c->irq_pct);
    fprintf(out, "            threads %.1f%% (usr %.1f, sys %.1f), %.0f intr/s, %.2f cores/10Gbit/s\n",
            c->threads_user_pct + c->threads_system_pct, c->threads_user_pct,
            c->threads_system_pct, c->intr_per_s, cost);
}

static void flow_table(FILE *out, const struct run_result *r)
{
    fprintf(out, "%4s %-4s %10s %10s %14s %6s %8s %6s %4s %4s\n", "flow", "dir", "sent",
            "received", "throughput", "retr", "rtt", "cwnd", "ccpu", "scpu");
    for (uint32_t i = 0; i < r->nflows; i++) {
        const struct flow_summary *f = &r->flows[i];
        char sb[32], rb[32], tp[32], rtt[16] = "-", retr[16] = "-", cc[8] = "-", sc[8] = "-";

        units_format_bytes((double)f->sent_bytes, sb, sizeof(sb));
        units_format_bytes((double)f->bytes, rb, sizeof(rb));
        units_format_rate(f->throughput_bps, tp, sizeof(tp));
        if (f->has_sender_tcpinfo) {
            snprintf(rtt, sizeof(rtt), "%uus", f->rtt_us);
            snprintf(retr, sizeof(retr), "%u", f->retransmits);
        }
        if (f->client_cpu >= 0)
            snprintf(cc, sizeof(cc), "%d", f->client_cpu);
        if (f->server_cpu >= 0)
            snprintf(sc, sizeof(sc), "%d", f->server_cpu);
        fprintf(out, "%4u %-4s %10s %10s %14s %6s %8s %6u %4s %4s\n", f->id,
                f->client_sends ? "up" : "down", sb, rb, tp, retr, rtt, f->cwnd, cc, sc);
    }
}

/* "2 threads pinned to CPU 0-1", "1 thread ran on CPU 1", or "not reported" */
static void placement(FILE *out, const struct side_result *s)
{
    const char *cpus = s->cpus[0] ? s->cpus : s->cpus_seen[0] ? s->cpus_seen : "?";

    if (!s->valid) {
        fprintf(out, "not reported");
        return;
    }
    fprintf(out, "%u thread%s %s CPU %s", s->threads, s->threads == 1 ? "" : "s",
            s->cpus[0] ? "pinned to" : "ran on", cpus);
}

void report_text_summary(FILE *out, const struct run_result *r)
{
    const struct run_summary *s = &r->summary;
    char tp[32], sp[32], b[32], up[32], down[32];

    fputc('\n', out);
    if (r->nflows <= 64)
        flow_table(out, r);
    else
        fprintf(out, "(%u flows: per-flow figures are in the -J output)\n", r->nflows);
    units_format_rate(s->throughput_bps, tp, sizeof(tp));
    units_format_rate(s->sender_bps, sp, sizeof(sp));
    units_format_bytes((double)s->bytes, b, sizeof(b));
    if (r->remote.valid || r->params.dir == PARAMS_DIR_REVERSE)
        fprintf(out, "\nThroughput  %s received, %s sent; %s in %.2f s\n", tp, sp, b,
                r->local.seconds);
    else
        fprintf(out, "\nThroughput  %s sent (the server reported no receive figures); "
                "%s in %.2f s\n", sp, b, r->local.seconds);
    if (r->params.dir == PARAMS_DIR_BIDIR) {
        units_format_rate(s->up_bps, up, sizeof(up));
        units_format_rate(s->down_bps, down, sizeof(down));
        fprintf(out, "            up (client to server) %s, down %s\n", up, down);
    }
    fprintf(out, "Fairness    Jain's index %.4f over %u flows; %u retransmits; congestion %s\n",
            s->jain_index, r->nflows, s->retransmits,
            r->local.congestion[0] ? r->local.congestion : "?");
    cpu_line(out, "local", &r->local.cpu, s->local_cores_per_10g);
    cpu_line(out, "remote", &r->remote.cpu, s->remote_cores_per_10g);
    fprintf(out, "Placement   client: ");
    placement(out, &r->local);
    fprintf(out, "; server: ");
    placement(out, &r->remote);
    fputc('\n', out);
    if (r->local.warning[0])
        fprintf(out, "Note        local: %s\n", r->local.warning);
    if (r->remote.warning[0])
        fprintf(out, "Note        server: %s\n", r->remote.warning);
    if (r->partial)
        fprintf(out, "PARTIAL     %s\n", r->error[0] ? r->error : "the test was cut short");
    fflush(out);
}
