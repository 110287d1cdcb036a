/* load_result: a load run's phases and figures, derived from its parts. */
#include "load_result.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void load_params_defaults(struct load_params *lp)
{
    memset(lp, 0, sizeof(*lp));
    lp->flows = 4;
    lp->threads = 1;
    lp->up = lp->down = true;
    lp->baseline_ns = 5000000000ULL;
    lp->loaded_ns = 10000000000ULL;
    lp->recovery_ns = 5000000000ULL;
    lp->probe_rate = 100;
    lp->sample_ns = 100000000ULL;
}

cJSON *load_params_json(const struct load_params *lp)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "test", "load");
    cJSON_AddNumberToObject(o, "flows", lp->flows);
    cJSON_AddNumberToObject(o, "threads", lp->threads);
    cJSON_AddBoolToObject(o, "up", lp->up);
    cJSON_AddBoolToObject(o, "down", lp->down);
    cJSON_AddNumberToObject(o, "baseline_s", lp->baseline_ns / 1e9);
    cJSON_AddNumberToObject(o, "loaded_s", lp->loaded_ns / 1e9);
    cJSON_AddNumberToObject(o, "recovery_s", lp->recovery_ns / 1e9);
    cJSON_AddNumberToObject(o, "probe_rate", (double)lp->probe_rate);
    cJSON_AddNumberToObject(o, "probe_size", LOAD_PROBE_SIZE);
    cJSON_AddNumberToObject(o, "sample_s", lp->sample_ns / 1e9);
    cJSON_AddNumberToObject(o, "window", lp->window);
    cJSON_AddStringToObject(o, "congestion", lp->congestion);
    cJSON_AddStringToObject(o, "title", lp->title);
    cJSON_AddBoolToObject(o, "icmp", lp->icmp);
    cJSON_AddStringToObject(o, "classes", dsclass_set_name(lp->classes));
    return o;
}

static double num(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= 0 ? v->valuedouble
                                                                                : dflt;
}

int load_params_from_json(const cJSON *o, struct load_params *lp)
{
    const cJSON *cc = cJSON_GetObjectItemCaseSensitive(o, "congestion");
    const cJSON *title = cJSON_GetObjectItemCaseSensitive(o, "title");
    const cJSON *classes = cJSON_GetObjectItemCaseSensitive(o, "classes");

    load_params_defaults(lp);
    if (!cJSON_IsObject(o))
        return -1;
    lp->flows = (uint32_t)fmin(num(o, "flows", lp->flows), PARAMS_MAX_FLOWS);
    lp->icmp = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "icmp"));
    lp->threads = (uint32_t)fmin(num(o, "threads", lp->threads), PARAMS_MAX_THREADS);
    lp->up = !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(o, "up"));
    lp->down = !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(o, "down"));
    lp->baseline_ns = (uint64_t)(fmin(num(o, "baseline_s", 5), 86400) * 1e9);
    lp->loaded_ns = (uint64_t)(fmin(num(o, "loaded_s", 10), 86400) * 1e9);
    lp->recovery_ns = (uint64_t)(fmin(num(o, "recovery_s", 5), 86400) * 1e9);
    lp->probe_rate = (uint64_t)fmin(num(o, "probe_rate", 100), LOAD_MAX_PROBE_TPS);
    lp->sample_ns = (uint64_t)(fmin(num(o, "sample_s", 0.1), 86400) * 1e9);
    lp->window = (uint32_t)fmin(num(o, "window", 0), PARAMS_MAX_WINDOW);
    if (cJSON_IsString(cc))
        snprintf(lp->congestion, sizeof(lp->congestion), "%s", cc->valuestring);
    if (cJSON_IsString(title))
        snprintf(lp->title, sizeof(lp->title), "%s", title->valuestring);
    if (cJSON_IsString(classes) && dsclass_parse(classes->valuestring, &lp->classes))
        lp->classes = DSCLASS_NONE;
    return 0;
}

const char *load_part_name(enum load_part p)
{
    static const char *const names[] = {"udp_probe", "tcp_probe", "up", "down"};

    return (unsigned)p < LOAD_NPARTS ? names[p] : "?";
}

const char *load_phase_name(enum load_phase p)
{
    static const char *const names[] = {"baseline", "loaded", "recovery"};

    return (unsigned)p < LOAD_NPHASES ? names[p] : "?";
}

static const struct {
    const char *grade, *words;
    double limit_ms;
} bands[LOAD_NBANDS] = {
    {"A+", "no bufferbloat: the queue stays short under load", 5},
    {"A", "light bufferbloat", 30},
    {"B", "moderate bufferbloat: video calls and games start to notice", 60},
    {"C", "large bufferbloat: calls and games suffer while the link is busy", 200},
    {"D", "severe bufferbloat: interactive use breaks down under load", 400},
    {"F", "extreme bufferbloat", INFINITY},
};

int load_band_of(double increase_us)
{
    int b = 0;

    while (b < LOAD_NBANDS - 1 && increase_us > bands[b].limit_ms * 1000)
        b++;
    return b;
}

double load_ms_shown(double increase_us)
{
    return fabs(increase_us) < 50 ? 0.0 : increase_us / 1e3;
}

const char *load_band_grade(int band)
{
    return band >= 0 && band < LOAD_NBANDS ? bands[band].grade : "-";
}

const char *load_band_words(int band)
{
    return band >= 0 && band < LOAD_NBANDS ? bands[band].words : "not judged";
}

double load_band_limit_ms(int band)
{
    return band >= 0 && band < LOAD_NBANDS ? bands[band].limit_ms : NAN;
}

static int by_value(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return (x > y) - (x < y);
}

static int by_signed(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of n sorted values. */
static double rank(const uint64_t *v, size_t n, double p)
{
    size_t r = (size_t)ceil(p / 100.0 * (double)n);

    return (double)v[r ? r - 1 : 0] / 1e3;
}

/* The probes of log meant to be sent in [from, to) (seconds on the log's clock + off_s). */
/* The medians of each way of the answers in [from, to) that carry the server's stamp. */
static void owd_stats(const struct txnlog *log, double off_s, double from, double to,
                      struct load_probe_stats *ps)
{
    int64_t *up = malloc(log->n * sizeof(*up)), *down = malloc(log->n * sizeof(*down));
    size_t n = 0;

    for (uint32_t i = 0; up && down && i < log->n; i++) {
        const struct txnlog_rec *r = &log->rec[i];
        double t = (double)r->t_ns / 1e9 + off_s;
        if (t < from || t >= to || r->lat_ns == TXNLOG_LOST || r->up_ns == TXNLOG_NO_OWD)
            continue;
        up[n] = r->up_ns;
        down[n++] = (int64_t)r->lat_ns - r->up_ns;
    }
    ps->owd_n = n;
    if (n) {
        qsort(up, n, sizeof(*up), by_signed);
        qsort(down, n, sizeof(*down), by_signed);
        ps->up_p50_us = (double)up[(n + 1) / 2 - 1] / 1e3;
        ps->down_p50_us = (double)down[(n + 1) / 2 - 1] / 1e3;
    }
    free(up);
    free(down);
}

static void probe_stats(const struct txnlog *log, double off_s, double from, double to,
                        struct load_probe_stats *ps)
{
    uint64_t *lat = log && log->n ? malloc(log->n * sizeof(*lat)) : NULL;
    double sum = 0;
    size_t n = 0;

    memset(ps, 0, sizeof(*ps));
    for (uint32_t i = 0; lat && i < log->n; i++) {
        double t = (double)log->rec[i].t_ns / 1e9 + off_s;
        if (t < from || t >= to)
            continue;
        ps->sent++;
        if (log->rec[i].lat_ns == TXNLOG_LOST) {
            ps->lost++;
            continue;
        }
        lat[n++] = log->rec[i].lat_ns;
        sum += (double)log->rec[i].lat_ns;
    }
    ps->answered = n;
    ps->loss_pct = ps->sent ? 100.0 * (double)ps->lost / (double)ps->sent : 0;
    if (n) {
        qsort(lat, n, sizeof(*lat), by_value);
        ps->min_us = (double)lat[0] / 1e3;
        ps->max_us = (double)lat[n - 1] / 1e3;
        ps->mean_us = sum / (double)n / 1e3;
        ps->p50_us = rank(lat, n, 50);
        ps->p90_us = rank(lat, n, 90);
        ps->p99_us = rank(lat, n, 99);
        owd_stats(log, off_s, from, to, ps);
    }
    free(lat);
}

static double off_s(const struct load_result *lr, int part)
{
    return (double)lr->part_off_ns[part] / 1e9;
}

/* The phase boundaries: the load's actual start and stop, else the planned ones. */
static void phase_times(struct load_result *lr, double *load_start, double *load_end, double *end)
{
    const struct load_params *lp = &lr->lp;
    double s = INFINITY, e = 0;

    for (int p = LOAD_UP; p <= LOAD_DOWN; p++) {
        const struct side_result *l = &lr->part[p].local;
        if (!lr->ran[p] || !l->start_mono_ns)
            continue;
        s = fmin(s, off_s(lr, p));
        e = fmax(e, off_s(lr, p) + (double)(l->stop_mono_ns - l->start_mono_ns) / 1e9);
    }
    if (!isfinite(s)) { /* no load ran: the plan */
        s = lp->baseline_ns / 1e9;
        e = s + lp->loaded_ns / 1e9;
    }
    *load_start = s;
    *load_end = e;
    *end = e + lp->recovery_ns / 1e9;
    for (int p = LOAD_UDP_PROBE; p <= LOAD_TCP_PROBE; p++) {
        const struct side_result *l = &lr->part[p].local;
        if (lr->ran[p] && l->stop_mono_ns > l->start_mono_ns)
            *end = fmax(*end, off_s(lr, p) + (double)(l->stop_mono_ns - l->start_mono_ns) / 1e9);
    }
}

/* A probe's rate: what it was asked to send against what it sent. */
static void probe_rate(struct load_result *lr, int p)
{
    const struct run_result *r = &lr->part[p];
    struct load_probe_rate *pr = &lr->rate[p];
    double secs = r->local.seconds;
    uint64_t sent = 0, late = 0;

    memset(pr, 0, sizeof(*pr));
    /* --classes: the UDP probe sends at the rate for each class */
    pr->intended_per_s = (double)lr->lp.probe_rate *
                         (p == LOAD_UDP_PROBE && lr->nclasses ? (double)lr->nclasses : 1.0);
    for (uint32_t i = 0; i < r->local.nflows; i++) {
        sent += r->local.flows[i].reqs_sent;
        late += r->local.flows[i].reqs_late;
    }
    if (secs > 0) {
        pr->sent_per_s = (double)sent / secs;
        pr->answered_per_s = (double)r->summary.transactions / secs;
    }
    pr->late_pct = sent ? 100.0 * (double)late / (double)sent : 0;
    pr->kept = pr->sent_per_s >= 0.95 * pr->intended_per_s;
}

/* The increase from the UDP probe, else the TCP one: a probe needs answers in both phases. */
static void judge(struct load_result *lr)
{
    const struct load_phase_stats *idle = &lr->phase[LOAD_BASELINE],
                                  *busy = &lr->phase[LOAD_LOADED];

    lr->judged_by = -1;
    lr->band = -1;
    if (!lr->ran[LOAD_UP] && !lr->ran[LOAD_DOWN])
        return;
    for (int p = LOAD_UDP_PROBE; p <= LOAD_TCP_PROBE; p++) {
        if (!lr->ran[p] || !idle->probe[p].answered || !busy->probe[p].answered)
            continue;
        lr->judged_by = p;
        lr->increase_p50_us = busy->probe[p].p50_us - idle->probe[p].p50_us;
        lr->increase_p99_us = busy->probe[p].p99_us - idle->probe[p].p99_us;
        lr->band = load_band_of(lr->increase_p50_us);
        lr->owd_judged = p == LOAD_UDP_PROBE && idle->probe[p].owd_n && busy->probe[p].owd_n;
        if (lr->owd_judged) {
            lr->increase_up_p50_us = busy->probe[p].up_p50_us - idle->probe[p].up_p50_us;
            lr->increase_down_p50_us = busy->probe[p].down_p50_us - idle->probe[p].down_p50_us;
        }
        return;
    }
}

/* The queue drained when, after the load's stop (le), the probes came back near the baseline
 * (below; at most its p99) and stayed there:
 * the first of a run of answered probes covering 100 ms (at least 3) none of which was over it. A
 * single quick probe is not enough: a loss-based sender's queue empties for a moment after each
 * loss. From the UDP probe, else the TCP one. */
static void drain(struct load_result *lr, double le, double end)
{
    uint64_t need = lr->lp.probe_rate / 10 < 3 ? 3 : lr->lp.probe_rate / 10;

    lr->drained = false;
    lr->drain_s = end - le;
    for (int p = LOAD_UDP_PROBE; p <= LOAD_TCP_PROBE; p++) {
        const struct txnlog *log = lr->part[p].local.log;
        const struct load_probe_stats *idle = &lr->phase[LOAD_BASELINE].probe[p],
                                      *busy = &lr->phase[LOAD_LOADED].probe[p];
        /* a tenth of the increase over the baseline's median, at least 0.5 ms; never over its
         * p99. Not the baseline's spread: a busy host's stalls can put its p90 far out */
        double spread = fmax(500, 0.1 * (busy->p50_us - idle->p50_us));
        double idle_p99 = fmin(idle->p99_us, idle->p50_us + spread), first = 0;
        uint64_t run = 0;
        if (!lr->ran[p] || !log || !lr->phase[LOAD_BASELINE].probe[p].answered)
            continue;
        for (uint32_t i = 0; i < log->n && run < need; i++) {
            double t = (double)log->rec[i].t_ns / 1e9 + off_s(lr, p);
            if (t < le)
                continue;
            if (t >= end)
                break;
            if (log->rec[i].lat_ns == TXNLOG_LOST || (double)log->rec[i].lat_ns / 1e3 > idle_p99) {
                run = 0;
                continue;
            }
            if (!run++)
                first = t;
        }
        if (run >= need) {
            lr->drained = true;
            lr->drain_s = first - le;
        }
        return;
    }
}

int load_split_classes(struct load_result *lr)
{
    struct txnlog *log = lr->part[LOAD_UDP_PROBE].local.log;
    uint32_t n = dsclass_count(lr->lp.classes), keep = 0, count[DSCLASS_MAX] = {0};

    lr->nclasses = n;
    if (!n || !lr->ran[LOAD_UDP_PROBE] || !log)
        return 0;
    for (uint32_t i = 0; i < log->n; i++)
        count[dsclass_of_flow(lr->lp.classes, log->rec[i].flow)]++;
    for (uint32_t c = 1; c < n; c++)
        if (txnlog_init(&lr->class_log[c], count[c] ? count[c] : 1)) {
            for (uint32_t k = 1; k < c; k++)
                txnlog_fini(&lr->class_log[k]);
            return -ENOMEM;
        }
    for (uint32_t i = 0; i < log->n; i++) {
        uint32_t c = dsclass_of_flow(lr->lp.classes, log->rec[i].flow);
        if (c == 0)
            log->rec[keep++] = log->rec[i];
        else
            lr->class_log[c].rec[lr->class_log[c].n++] = log->rec[i];
    }
    log->n = keep;
    return 0;
}

const struct txnlog *load_class_log(const struct load_result *lr, uint32_t c)
{
    if (c >= lr->nclasses || !lr->ran[LOAD_UDP_PROBE])
        return NULL;
    return c ? &lr->class_log[c] : lr->part[LOAD_UDP_PROBE].local.log;
}

const char *load_class_probe(uint8_t set, uint32_t c, char *buf, size_t len)
{
    size_t k = 0;

    if (c == 0 || !dsclass_count(set)) {
        snprintf(buf, len, "udp");
        return buf;
    }
    snprintf(buf, len, "udp_%s", dsclass_name(set, c));
    for (k = 4; buf[k]; k++)
        buf[k] = (char)tolower((unsigned char)buf[k]);
    return buf;
}

/* --classes: each class's probe per phase, its increase, its flows' goodput each way. */
static void classes(struct load_result *lr)
{
    for (uint32_t c = 0; c < lr->nclasses; c++) {
        struct load_class_stats *cs = &lr->cls[c];
        const struct txnlog *log = load_class_log(lr, c);
        memset(cs, 0, sizeof(*cs));
        for (int ph = 0; log && ph < LOAD_NPHASES; ph++)
            probe_stats(log, off_s(lr, LOAD_UDP_PROBE), lr->phase[ph].from_s, lr->phase[ph].end_s,
                        &cs->probe[ph]);
        cs->judged = (lr->ran[LOAD_UP] || lr->ran[LOAD_DOWN]) &&
                     cs->probe[LOAD_BASELINE].answered && cs->probe[LOAD_LOADED].answered;
        if (cs->judged)
            cs->increase_p50_us = cs->probe[LOAD_LOADED].p50_us - cs->probe[LOAD_BASELINE].p50_us;
    }
    for (int p = LOAD_UP; p <= LOAD_DOWN; p++) {
        const struct run_result *r = &lr->part[p];
        for (uint32_t i = 0; lr->nclasses && lr->ran[p] && i < r->nflows; i++) {
            struct load_class_stats *cs = &lr->cls[dsclass_of_flow(lr->lp.classes, r->flows[i].id)];
            if (p == LOAD_UP)
                cs->up_bps += r->flows[i].throughput_bps;
            else
                cs->down_bps += r->flows[i].throughput_bps;
        }
    }
}

void load_analyze(struct load_result *lr)
{
    double ls, le, end, settle;

    phase_times(lr, &ls, &le, &end);
    settle = fmin(LOAD_SETTLE_NS / 1e9, (le - ls) / 4);
    lr->phase[LOAD_BASELINE] = (struct load_phase_stats){.start_s = 0, .end_s = ls, .from_s = 0};
    lr->phase[LOAD_LOADED] =
        (struct load_phase_stats){.start_s = ls, .end_s = le, .from_s = ls + settle};
    lr->phase[LOAD_RECOVERY] = (struct load_phase_stats){.start_s = le, .end_s = end, .from_s = le};
    for (int ph = 0; ph < LOAD_NPHASES; ph++) {
        if (ph == LOAD_RECOVERY) { /* its figures count once the queue drained */
            drain(lr, le, end);
            lr->phase[ph].from_s = le + lr->drain_s;
        }
        for (int p = LOAD_UDP_PROBE; p <= LOAD_TCP_PROBE; p++)
            if (lr->ran[p])
                probe_stats(lr->part[p].local.log, off_s(lr, p), lr->phase[ph].from_s,
                            lr->phase[ph].end_s, &lr->phase[ph].probe[p]);
    }
    if (lr->icmp_ran) {
        for (int ph = 0; ph < LOAD_NPHASES; ph++)
            probe_stats(&lr->icmp_log, (double)lr->icmp_off_ns / 1e9, lr->phase[ph].from_s,
                        lr->phase[ph].end_s, &lr->phase[ph].icmp);
        lr->icmp_judged = (lr->ran[LOAD_UP] || lr->ran[LOAD_DOWN]) &&
                          lr->phase[LOAD_BASELINE].icmp.answered &&
                          lr->phase[LOAD_LOADED].icmp.answered;
        if (lr->icmp_judged)
            lr->icmp_increase_p50_us =
                lr->phase[LOAD_LOADED].icmp.p50_us - lr->phase[LOAD_BASELINE].icmp.p50_us;
    }
    if (lr->ran[LOAD_UP])
        lr->phase[LOAD_LOADED].up_bps = lr->part[LOAD_UP].summary.up_bps;
    if (lr->ran[LOAD_DOWN])
        lr->phase[LOAD_LOADED].down_bps = lr->part[LOAD_DOWN].summary.down_bps;
    for (int p = LOAD_UDP_PROBE; p <= LOAD_TCP_PROBE; p++)
        if (lr->ran[p])
            probe_rate(lr, p);
    snprintf(lr->cc_up, sizeof(lr->cc_up), "%s",
             lr->ran[LOAD_UP] ? lr->part[LOAD_UP].local.congestion : "");
    snprintf(lr->cc_down, sizeof(lr->cc_down), "%s",
             lr->ran[LOAD_DOWN] ? lr->part[LOAD_DOWN].remote.congestion : "");
    judge(lr);
    classes(lr);
}

void load_result_fini(struct load_result *lr)
{
    for (int p = 0; p < LOAD_NPARTS; p++)
        result_fini(&lr->part[p]);
    txnlog_fini(&lr->icmp_log);
    for (uint32_t c = 0; c < DSCLASS_MAX; c++)
        txnlog_fini(&lr->class_log[c]);
}
