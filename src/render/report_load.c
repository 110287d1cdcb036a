/* report_load: the text report of a load run (80 columns). */
#include "report_load.h"

#include "load_json.h"
#include "units.h"
#include "wrap.h"

#include <math.h>
#include <string.h>

static void ms(double us, char *buf, size_t len)
{
    if (us <= 0)
        snprintf(buf, len, "-");
    else if (us < 10000)
        snprintf(buf, len, "%.2f", us / 1e3);
    else
        snprintf(buf, len, "%.1f", us / 1e3);
}

static void rate(double bps, char *buf, size_t len)
{
    if (bps > 0)
        units_format_rate(bps, buf, len);
    else
        snprintf(buf, len, "-");
}

static void header(FILE *out, const struct load_result *lr)
{
    const struct load_params *lp = &lr->lp;
    char dirs[64];

    if (lr->nclasses)
        snprintf(dirs, sizeof(dirs), "one TCP flow per %s class %s", dsclass_set_name(lp->classes),
                 lp->up && lp->down ? "up and down"
                 : lp->up           ? "up"
                                    : "down");
    else if (lp->up && lp->down)
        snprintf(dirs, sizeof(dirs), "%u TCP flow%s up and %u down", lp->flows,
                 lp->flows == 1 ? "" : "s", lp->flows);
    else
        snprintf(dirs, sizeof(dirs), "%u TCP flow%s %s", lp->flows, lp->flows == 1 ? "" : "s",
                 lp->up ? "up" : "down");
    fprintf(out, "netrig load to %s: %s\n", lr->server[0] ? lr->server : "?", dirs);
    fputs("congestion control of the load:", out);
    if (lp->up)
        fprintf(out, " %s (up: %s)", lr->cc_up[0] ? lr->cc_up : "none",
                lr->ran[LOAD_UP] ? "this host sends" : "it did not run");
    if (lp->down)
        fprintf(out, "%s %s (down: %s)", lp->up ? "," : "", lr->cc_down[0] ? lr->cc_down : "none",
                lr->ran[LOAD_DOWN] ? "the daemon sends" : "it did not run");
    fputc('\n', out);
    if (lp->probe_rate && lr->nclasses)
        fprintf(out,
                "latency probes: UDP request/response per class and TCP (unmarked), %llu a "
                "second each (%d bytes)\n",
                (unsigned long long)lp->probe_rate, LOAD_PROBE_SIZE);
    else if (lp->probe_rate)
        fprintf(out,
                "latency probes: UDP and TCP request/response, %llu a second each (%d bytes)\n",
                (unsigned long long)lp->probe_rate, LOAD_PROBE_SIZE);
    else
        fputs("latency probes: none (--probe-rate 0)\n", out);
}

static void phase_row(FILE *out, const struct load_result *lr, int ph)
{
    const struct load_phase_stats *s = &lr->phase[ph];
    const struct load_probe_stats *u = &s->probe[LOAD_UDP_PROBE], *t = &s->probe[LOAD_TCP_PROBE];
    char p50[16], p90[16], p99[16], mx[16], tp50[16], up[24], down[24], loss[16], span[24];

    ms(u->p50_us, p50, sizeof(p50));
    ms(u->p90_us, p90, sizeof(p90));
    ms(u->p99_us, p99, sizeof(p99));
    ms(u->max_us, mx, sizeof(mx));
    ms(t->p50_us, tp50, sizeof(tp50));
    rate(s->up_bps, up, sizeof(up));
    rate(s->down_bps, down, sizeof(down));
    if (u->sent)
        snprintf(loss, sizeof(loss), "%.1f%%", u->loss_pct);
    else
        snprintf(loss, sizeof(loss), "-");
    snprintf(span, sizeof(span), "%.1f-%.1f", s->start_s, s->end_s);
    fprintf(out, "%-9s %-11s %6s %6s %6s %6s %6s %6s  %-12s %s\n",
            load_phase_name((enum load_phase)ph), span, p50, p90, p99, mx, loss, tp50, up, down);
}

static void verdict(FILE *out, const struct load_result *lr)
{
    const struct load_phase_stats *busy = &lr->phase[LOAD_LOADED];

    if (lr->band < 0) {
        fputs("\nlatency under load: not judged\n", out);
        return;
    }
    fprintf(out,
            "\nlatency under load: %+.1f ms at the median, %+.1f ms at p99 (%s probes; the loaded "
            "phase from %.1f s)\n",
            load_ms_shown(lr->increase_p50_us), load_ms_shown(lr->increase_p99_us),
            lr->judged_by != LOAD_UDP_PROBE ? "TCP"
            : lr->nclasses                  ? "BE's UDP"
                                            : "UDP",
            busy->from_s);
    if (lr->owd_judged)
        fprintf(out, "  of which the way up %+.1f ms, the way down %+.1f ms (one-way delays)\n",
                load_ms_shown(lr->increase_up_p50_us), load_ms_shown(lr->increase_down_p50_us));
    if (lr->icmp_judged)
        fprintf(out, "  ICMP echo (%s): %+.1f ms at the median (idle p50 %.2f ms)\n", lr->icmp_kind,
                load_ms_shown(lr->icmp_increase_p50_us),
                lr->phase[LOAD_BASELINE].icmp.p50_us / 1e3);
    else if (lr->lp.icmp)
        fprintf(out, "  ICMP echo: no figure (%s)\n",
                lr->icmp_error[0] ? lr->icmp_error : "no reply both idle and under load");
    if (lr->drained)
        fprintf(out,
                "  the queue drained %.2f s after the load stopped (recovery counts from "
                "there)\n",
                lr->drain_s);
    else
        fprintf(out, "  the queue had not drained by the end, %.2f s after the load stopped\n",
                lr->drain_s);
    if (isfinite(load_band_limit_ms(lr->band)))
        fprintf(out, "verdict: %s (at most %g ms): %s\n", load_band_grade(lr->band),
                load_band_limit_ms(lr->band), load_band_words(lr->band));
    else
        fprintf(out, "verdict: %s (over 400 ms): %s\n", load_band_grade(lr->band),
                load_band_words(lr->band));
}

/* --classes: each class's probe latency idle and loaded, its increase and loss under load, and
 * its flow's goodput each way. */
static void classes(FILE *out, const struct load_result *lr)
{
    if (!lr->nclasses)
        return;
    fprintf(out,
            "\nclasses (marked on both ends; latency: the class's UDP probe, ms; throughput: its\n"
            "TCP flow, receiver's view)\n"
            "class  DSCP  idle p50  loaded p50    p99  increase   lost  up           down\n");
    for (uint32_t c = 0; c < lr->nclasses; c++) {
        const struct load_class_stats *cs = &lr->cls[c];
        const struct load_probe_stats *b = &cs->probe[LOAD_BASELINE], *l = &cs->probe[LOAD_LOADED];
        char i50[16], l50[16], l99[16], inc[16], loss[16], up[24], down[24];
        ms(b->p50_us, i50, sizeof(i50));
        ms(l->p50_us, l50, sizeof(l50));
        ms(l->p99_us, l99, sizeof(l99));
        if (cs->judged)
            snprintf(inc, sizeof(inc), "%+.1f", load_ms_shown(cs->increase_p50_us));
        else
            snprintf(inc, sizeof(inc), "-");
        if (l->sent)
            snprintf(loss, sizeof(loss), "%.1f%%", l->loss_pct);
        else
            snprintf(loss, sizeof(loss), "-");
        rate(cs->up_bps, up, sizeof(up));
        rate(cs->down_bps, down, sizeof(down));
        fprintf(out, "%-5s  %4u  %8s  %10s %6s  %8s %6s  %-12s %s\n",
                dsclass_name(lr->lp.classes, c), dsclass_dscp(lr->lp.classes, c), i50, l50, l99,
                inc, loss, up, down);
    }
}

void report_load_text(FILE *out, const struct load_result *lr)
{
    char adv[8][400], warn[8][320];
    size_t na = load_advice(lr, adv, 8), nw;

    header(out, lr);
    fprintf(out, "\n                      UDP probe latency (ms)%s  UDP  TCP p50\n",
            lr->nclasses ? " of BE" : "      ");
    fputs("phase     time (s)       p50    p90    p99    max   lost   (ms)  up           down\n",
          out);
    for (int ph = 0; ph < LOAD_NPHASES; ph++)
        phase_row(out, lr, ph);
    classes(out, lr);
    verdict(out, lr);
    fputs("\nadvice:\n", out);
    for (size_t i = 0; i < na; i++)
        wrap_print(out, "  - ", 4, adv[i]);
    load_warnings(lr, warn, &nw, 8);
    for (size_t i = 0; i < nw; i++)
        wrap_print(out, "warning: ", 4, warn[i]);
}
