/* load_advice: what to do about the latency a load run found, from its own figures. */
#include "load_result.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "units.h"

struct lines {
    char (*v)[400];
    size_t n, max;
};

static void add(struct lines *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct lines *l, const char *fmt, ...)
{
    va_list ap;

    if (l->n >= l->max)
        return;
    va_start(ap, fmt);
    vsnprintf(l->v[l->n++], sizeof(l->v[0]), fmt, ap);
    va_end(ap);
}

static bool loss_based(const char *cc)
{
    return !strcmp(cc, "reno") || !strcmp(cc, "cubic") || !strcmp(cc, "htcp") ||
           !strcmp(cc, "illinois") || !strcmp(cc, "highspeed");
}

/* "185.5 KiB at 95.10 Mbit/s up": bytes queued for the increase at a direction's rate. */
static void queue_text(double inc_s, double bps, const char *dir, char *buf, size_t len)
{
    char rate[32], q[32], q5[32];

    units_format_rate(bps, rate, sizeof(rate));
    units_format_bytes(inc_s * bps / 8, q, sizeof(q));
    units_format_bytes(0.005 * bps / 8, q5, sizeof(q5));
    snprintf(buf, len, "%s at %s %s (5 ms there is %s)", q, rate, dir, q5);
}

/* Each way's queue from its own increase (the UDP probe's one-way delays). */
static void shorter_queues(const struct load_result *lr, struct lines *l)
{
    const struct load_phase_stats *busy = &lr->phase[LOAD_LOADED];
    double iu = fmax(0, lr->increase_up_p50_us / 1e6), id = fmax(0, lr->increase_down_p50_us / 1e6);
    char up[128] = "nothing measurable", down[128] = "nothing measurable";

    if (busy->up_bps > 0 && iu * 1e3 >= 0.05)
        queue_text(iu, busy->up_bps, "up", up, sizeof(up));
    if (busy->down_bps > 0 && id * 1e3 >= 0.05)
        queue_text(id, busy->down_bps, "down", down, sizeof(down));
    add(l,
        "A shorter queue: of the increase of %.1f ms, the way up took %+.1f ms, about %s queued, "
        "and the way down %+.1f ms, about %s (one-way delays of the UDP probe). Where a "
        "queue is a tbf or htb shaper (or a router's buffer), size it for about 5 ms at the "
        "link rate (tc ... limit BYTES): the link stays full and the delay stays small.",
        lr->increase_p50_us / 1e3, load_ms_shown(lr->increase_up_p50_us), up,
        load_ms_shown(lr->increase_down_p50_us), down);
}

static void shorter_queue(const struct load_result *lr, struct lines *l)
{
    const struct load_phase_stats *busy = &lr->phase[LOAD_LOADED];
    double inc = lr->increase_p50_us / 1e6;
    char up[128] = "", down[128] = "";

    if (lr->owd_judged) {
        shorter_queues(lr, l);
        return;
    }
    if (busy->up_bps > 0)
        queue_text(inc, busy->up_bps, "up", up, sizeof(up));
    if (busy->down_bps > 0)
        queue_text(inc, busy->down_bps, "down", down, sizeof(down));
    add(l,
        "A shorter queue: the increase of %.1f ms is about %s%s%s queued at the bottleneck. "
        "Where it is a tbf or htb shaper (or a router's buffer), size it for about 5 ms at the "
        "link rate (tc ... limit BYTES): the link stays full and the delay stays small.",
        inc * 1e3, up, up[0] && down[0] ? ", or " : "", down);
}

static void aqm(const struct load_result *lr, struct lines *l)
{
    const struct load_kernel *k = &lr->kernel;

    if (k->fq_codel == 1 || k->cake == 1)
        add(l,
            "An AQM qdisc on the bottleneck's egress: %s manages the queue to about 5 ms and "
            "keeps flows apart (e.g. tc qdisc replace dev DEV root %s, under the shaper if the "
            "link is shaped). This host's kernel has it (%s).",
            k->cake == 1 ? "cake" : "fq_codel", k->cake == 1 ? "cake bandwidth RATE" : "fq_codel",
            k->how);
    else if (k->fq_codel == 0 && k->cake == 0)
        add(l,
            "fq_codel or cake would fix this on the bottleneck's egress (they keep the queue "
            "near 5 ms), but this host's kernel lacks both (%s): load sch_fq_codel or "
            "sch_cake, use a kernel built with them, or fix the queue on the router that owns "
            "the bottleneck.",
            k->how);
    else
        add(l,
            "fq_codel or cake on the bottleneck's egress keeps the queue near 5 ms; whether "
            "this host's kernel has them could not be checked (%s).",
            k->how);
}

static void pacing(const struct load_result *lr, struct lines *l)
{
    const struct load_phase_stats *busy = &lr->phase[LOAD_LOADED];
    double bps = fmax(busy->up_bps, busy->down_bps);
    char total[32], each[32];

    if (bps <= 0 || !lr->lp.flows)
        return;
    units_format_rate(0.95 * bps, total, sizeof(total));
    units_format_rate(0.95 * bps / lr->lp.flows, each, sizeof(each));
    add(l,
        "A pacing rate just under the bottleneck keeps the queue from building: about %s in "
        "all, %s per flow for %u flows (SO_MAX_PACING_RATE, netrig stream --fq-rate, tc fq "
        "maxrate).%s",
        total, each, lr->lp.flows,
        lr->kernel.fq == 0 ? " This kernel lacks fq; TCP paces itself once the rate is set." : "");
}

static void congestion(const struct load_result *lr, struct lines *l)
{
    const char *cc = lr->cc_up[0] ? lr->cc_up : lr->cc_down;

    if (!cc[0])
        return;
    if (loss_based(cc))
        add(l,
            "The load ran %s, a loss-based congestion control: it fills whatever queue it is "
            "given until a packet drops, so the delay equals the queue. bbr keeps its own queue "
            "short (try netrig load -C bbr); other traffic may still fill the queue.",
            cc);
    else
        add(l,
            "The load ran %s; with a loss-based congestion control (reno, cubic) the queue "
            "would fill further (try netrig load -C reno).",
            cc);
}

/* --classes: whether the queue spared the high classes, from each class's increase. */
static void classes(const struct load_result *lr, struct lines *l)
{
    const struct load_class_stats *c = lr->cls;
    double be, ef;

    if (lr->nclasses != 4 || !c[0].judged || !c[1].judged || !c[2].judged || !c[3].judged)
        return;
    be = c[0].increase_p50_us;
    ef = c[3].increase_p50_us;
    if (be <= load_band_limit_ms(0) * 1000)
        return; /* best effort itself waited little: nothing to spare */
    if (ef <= 0.5 * be)
        add(l,
            "The queue honours DSCP: EF waited %+.1f ms under load against best effort's "
            "%+.1f ms (BK %+.1f, CS5 %+.1f); traffic marked EF (calls, games) is spared the "
            "queue.",
            load_ms_shown(ef), load_ms_shown(be), load_ms_shown(c[1].increase_p50_us),
            load_ms_shown(c[2].increase_p50_us));
    else if (ef < 0.8 * be)
        add(l,
            "The queue favours EF only a little: %+.1f ms under load against best effort's "
            "%+.1f ms; a class of its own with a short queue would spare it more.",
            load_ms_shown(ef), load_ms_shown(be));
    else
        add(l,
            "Every class waited alike under load (EF %+.1f ms, CS5 %+.1f, BK %+.1f, BE %+.1f): "
            "the queue does not honour DSCP, so marking calls EF does not spare them. cake's "
            "diffserv4 mode%s, or htb or prio with filters on the DS field, on the bottleneck's "
            "egress would.",
            load_ms_shown(ef), load_ms_shown(c[2].increase_p50_us),
            load_ms_shown(c[1].increase_p50_us), load_ms_shown(be),
            lr->kernel.cake == 1   ? " (this kernel has cake)"
            : lr->kernel.cake == 0 ? " (not in this kernel)"
                                   : "");
}

size_t load_advice(const struct load_result *lr, char (*lines)[400], size_t max)
{
    struct lines l = {lines, 0, max};

    if (lr->band < 0) {
        add(&l, "No verdict: %s.",
            !lr->ran[LOAD_UP] && !lr->ran[LOAD_DOWN]
                ? "no load ran"
                : "no probe was answered both idle and under load (a firewall dropping UDP "
                  "and TCP to the daemon's ports, or --probe-rate 0)");
        return l.n;
    }
    if (lr->band == 0) {
        add(&l,
            "Nothing to fix: the queues on this path stay short under this load (%+.1f ms at the "
            "median).",
            load_ms_shown(lr->increase_p50_us));
        congestion(lr, &l);
        return l.n;
    }
    shorter_queue(lr, &l);
    classes(lr, &l);
    aqm(lr, &l);
    pacing(lr, &l);
    congestion(lr, &l);
    if (lr->ran[LOAD_UP] && lr->ran[LOAD_DOWN] && !lr->owd_judged)
        add(&l, "Both directions were loaded at once: run with --up, then --down, to see which "
                "direction's queue grows.");
    return l.n;
}
