/* plot: gnuplot scripts for runs, sweeps and comparisons, run in a temporary directory. */
#include "plot.h"
#include "test_kind.h"

#include "plot_job.h"
#include "plot_load.h"

#include "metric.h"
#include "stats.h"
#include "store_run.h"
#include "store_sweep.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PLOT_MAX_FLOWS 16 /* per-flow lines drawn; more flows show the total only */

int plot_format_of(const char *path)
{
    size_t n = strlen(path);

    if (n > 4 && !strcasecmp(path + n - 4, ".svg"))
        return PLOT_SVG;
    if (n > 4 && !strcasecmp(path + n - 4, ".png"))
        return PLOT_PNG;
    return -1;
}

/* The scale and axis label of a metric for its largest value. */
static double metric_axis(const struct metric_def *d, double max, char *label, size_t len)
{
    const char *unit = metric_unit_name(d->unit);
    double scale = 1;

    if (d->unit == METRIC_BPS)
        scale = plot_bps_scale(max, &unit);
    if (*unit)
        snprintf(label, len, "%s (%s)", d->label, unit);
    else
        snprintf(label, len, "%s", d->label);
    return scale;
}

/* ---- one run ---- */

struct ivs {
    struct store_interval *v;
    uint32_t n, cap;
    uint32_t nflows;
    double *cell_bps; /* [flow * n + seq] */
};

static int add_iv(const struct store_interval *iv, void *arg)
{
    struct ivs *s = arg;

    if (s->n == s->cap) {
        uint32_t cap = s->cap ? 2 * s->cap : 64;
        struct store_interval *v = realloc(s->v, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = *iv;
    return 0;
}

static int add_cell(uint32_t seq, uint32_t flow, uint64_t bytes, uint32_t retrans, void *arg)
{
    struct ivs *s = arg;
    double len;

    (void)retrans;
    if (flow >= s->nflows || seq >= s->n)
        return 0;
    len = s->v[seq].end_s - s->v[seq].start_s;
    s->cell_bps[(size_t)flow * s->n + seq] = len > 0 ? (double)bytes * 8 / len : 0;
    return 0;
}

static void run_title(struct plot_job *j, const struct store_run *r)
{
    char t[400];

    snprintf(t, sizeof(t), "run %lld: %s%s, %s%s%s", (long long)r->id, r->test,
             r->udp ? " (udp)" : "", r->started_at, r->title[0] ? " - " : "", r->title);
    fputs("set title ", j->gp);
    plot_gp_str(j->gp, t);
    fputc('\n', j->gp);
}

static int count_flows(const struct store_flow *f, void *arg)
{
    (void)f;
    (*(uint32_t *)arg)++;
    return 0;
}

/* Throughput per flow and in total over time, retransmits on the right axis. */
static int stream_script(struct plot_job *j, struct store *st, const struct store_run *r,
                         struct ivs *s, const char *side)
{
    char agg[600], fl[600];
    FILE *a = plot_job_data(j, "total.dat", agg, sizeof(agg)), *f;
    double max = 0, scale;
    const char *unit;
    uint32_t nflows = 0;

    if (!a)
        return -EIO;
    for (uint32_t i = 0; i < s->n; i++) {
        double len = s->v[i].end_s - s->v[i].start_s;
        double bps = len > 0 ? (double)(s->v[i].sent_bytes + s->v[i].recv_bytes) * 8 / len : 0;
        max = bps > max ? bps : max;
    }
    scale = plot_bps_scale(max, &unit);
    for (uint32_t i = 0; i < s->n; i++) {
        double len = s->v[i].end_s - s->v[i].start_s;
        double bps = len > 0 ? (double)(s->v[i].sent_bytes + s->v[i].recv_bytes) * 8 / len : 0;
        fprintf(a, "%.6f %.6g %u\n", s->v[i].end_s, bps / scale, s->v[i].retrans);
    }
    fclose(a);
    store_run_flows(st, r->id, count_flows, &nflows);
    s->nflows = !strcmp(side, "client") && nflows > 1 && nflows <= PLOT_MAX_FLOWS ? nflows : 0;
    s->cell_bps = s->nflows ? calloc((size_t)s->nflows * s->n, sizeof(double)) : NULL;
    if (s->cell_bps)
        store_run_cells(st, r->id, add_cell, s);
    else
        s->nflows = 0;
    fprintf(j->gp,
            "set xlabel 'time (s)'\nset ylabel 'throughput (%s)'\nset y2label "
            "'retransmits'\nset y2tics\nset xrange [0:*]\nset yrange [0:*]\nset y2range [0:*]\n",
            unit);
    fputs("plot ", j->gp);
    plot_gp_str(j->gp, agg);
    fprintf(j->gp, " using 1:2 with linespoints lw 2 pt 7 ps 0.6 title 'total (%s side)'", side);
    if (s->nflows && (f = plot_job_data(j, "flows.dat", fl, sizeof(fl)))) {
        for (uint32_t k = 0; k < s->nflows; k++) {
            for (uint32_t i = 0; i < s->n; i++)
                fprintf(f, "%.6f %.6g\n", s->v[i].end_s, s->cell_bps[(size_t)k * s->n + i] / scale);
            fputs("\n\n", f);
        }
        fclose(f);
        fprintf(j->gp, ", for [i=0:%u] ", s->nflows - 1);
        plot_gp_str(j->gp, fl);
        fputs(" index i using 1:2 with lines lw 1 title sprintf('flow %d', i)", j->gp);
    }
    fputs(", ", j->gp);
    plot_gp_str(j->gp, agg);
    fputs(" using 1:3 axes x1y2 with impulses lw 4 lc rgb '#d62728' title 'retransmits'\n", j->gp);
    return 0;
}

struct cdf {
    FILE *f;
    uint64_t total, seen;
};

static int count_bucket(uint64_t lo, uint64_t hi, uint64_t count, void *arg)
{
    (void)lo, (void)hi;
    ((struct cdf *)arg)->total += count;
    return 0;
}

static int cdf_bucket(uint64_t lo, uint64_t hi, uint64_t count, void *arg)
{
    struct cdf *c = arg;

    (void)lo;
    c->seen += count;
    fprintf(c->f, "%.6g %.8f\n", (double)hi / 1e3, (double)c->seen / (double)c->total);
    return 0;
}

/* Transactions/s and mean latency over time; the latency CDF below. */
static int txn_script(struct plot_job *j, struct store *st, const struct store_run *r,
                      const struct ivs *s)
{
    char rate[600], cdfp[600];
    FILE *a = plot_job_data(j, "rate.dat", rate, sizeof(rate));
    struct cdf c = {0};

    if (!a)
        return -EIO;
    for (uint32_t i = 0; i < s->n; i++) {
        double len = s->v[i].end_s - s->v[i].start_s;
        fprintf(a, "%.6f %.6g %.6g\n", s->v[i].end_s, len > 0 ? (double)s->v[i].txns / len : 0,
                s->v[i].txns ? (double)s->v[i].lat_sum_ns / 1e3 / (double)s->v[i].txns : 0);
    }
    fclose(a);
    store_run_latency(st, r->id, count_bucket, &c);
    fputs("set multiplot layout 2,1\nset xlabel 'time (s)'\nset ylabel 'transactions/s'\n"
          "set y2label 'mean latency (us)'\nset y2tics\nset xrange [0:*]\nset yrange [0:*]\n"
          "set y2range [0:*]\n"
          "plot ",
          j->gp);
    plot_gp_str(j->gp, rate);
    fputs(" using 1:2 with linespoints lw 2 pt 7 ps 0.6 title 'transactions/s', ", j->gp);
    plot_gp_str(j->gp, rate);
    fputs(" using 1:3 axes x1y2 with linespoints lw 1 pt 6 ps 0.6 title 'mean latency'\n", j->gp);
    fputs("unset y2tics\nunset y2label\nunset title\nset autoscale x\n", j->gp);
    if (c.total && (c.f = plot_job_data(j, "cdf.dat", cdfp, sizeof(cdfp)))) {
        store_run_latency(st, r->id, cdf_bucket, &c);
        fclose(c.f);
        fputs("set logscale x\nset xlabel 'latency (us)'\nset ylabel 'fraction of transactions'\n"
              "set yrange [0:1]\nplot ",
              j->gp);
        plot_gp_str(j->gp, cdfp);
        fputs(" using 1:2 with steps lw 2 title 'latency CDF'\n", j->gp);
    } else {
        fputs("set label 1 'no latency histogram stored' at graph 0.5,0.5 center\n"
              "plot 2 notitle lc rgb 'white'\n",
              j->gp);
    }
    fputs("unset multiplot\n", j->gp);
    return 0;
}

int plot_chart_of(const char *name)
{
    if (!strcmp(name, "all"))
        return PLOT_CHART_ALL;
    if (!strcmp(name, "cdf"))
        return PLOT_CHART_CDF;
    if (!strcmp(name, "flows"))
        return PLOT_CHART_FLOWS;
    return -1;
}

int plot_run_chart(struct store *st, int64_t id, enum plot_chart chart, struct plot_out *o,
                   char *err, size_t errlen)
{
    return chart == PLOT_CHART_DEFAULT ? plot_run(st, id, o, err, errlen)
                                       : plot_load_chart(st, id, chart, o, err, errlen);
}

int plot_run(struct store *st, int64_t id, struct plot_out *o, char *err, size_t errlen)
{
    struct store_run r;
    struct ivs s = {0};
    struct plot_job j;
    const char *side = "client";
    bool txn;
    int rc;

    if (store_run_get(st, id, &r, err, errlen))
        return -1;
    if (!strcmp(r.test, "load"))
        return plot_load_chart(st, id, PLOT_CHART_ALL, o, err, errlen);
    txn = !test_kind_named_is(r.test, TEST_KIND_BULK);
    store_run_intervals(st, id, side, add_iv, &s);
    if (!s.n) {
        side = "server";
        store_run_intervals(st, id, side, add_iv, &s);
    }
    if (!s.n) {
        snprintf(err, errlen, "run %lld has no intervals to plot (it ran with -i 0)",
                 (long long)id);
        free(s.v);
        return -1;
    }
    if (plot_job_open(&j, o->format, txn ? 720 : 480, err, errlen)) {
        free(s.v);
        return -1;
    }
    run_title(&j, &r);
    rc = txn ? txn_script(&j, st, &r, &s) : stream_script(&j, st, &r, &s, side);
    free(s.v);
    free(s.cell_bps);
    if (rc) {
        snprintf(err, errlen, "cannot write gnuplot data in '%s'", j.dir);
        plot_job_close(&j);
        return -1;
    }
    return plot_job_finish(&j, o, err, errlen);
}

/* ---- a sweep ---- */

struct sweep_axes {
    cJSON *def;        /* the sweep definition */
    const cJSON *vary; /* its "vary" array */
    uint32_t nx;       /* values of the first --vary: the x axis */
    uint32_t nseries;  /* combinations of the others: one line each */
};

static int sweep_axes(const char *definition, struct sweep_axes *ax)
{
    const cJSON *first;

    ax->def = cJSON_Parse(definition);
    ax->vary = cJSON_GetObjectItemCaseSensitive(ax->def, "vary");
    first = cJSON_GetArrayItem(ax->vary, 0);
    ax->nx = (uint32_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(first, "values"));
    return ax->nx ? 0 : -1;
}

/* "window=4M flows=2": point idx's values of every --vary but the first. */
static void series_label(const cJSON *settings, char *buf, size_t len)
{
    const cJSON *v;
    size_t n = 0;
    bool first = true;

    buf[0] = '\0';
    cJSON_ArrayForEach(v, settings)
    {
        if (first) {
            first = false;
            continue;
        }
        if (cJSON_IsString(v) && n < len)
            n += (size_t)snprintf(buf + n, len - n, "%s%s=%s", n ? " " : "", v->string,
                                  v->valuestring);
    }
    if (!buf[0])
        snprintf(buf, len, "mean +- CI");
}

static int sweep_data(struct plot_job *j, const struct store_sweep *sw, const struct sweep_axes *ax,
                      const struct store_sweep_point *pts, uint32_t n, const struct metric_def *d,
                      double scale)
{
    char path[600], label[300];
    FILE *f = plot_job_data(j, "sweep.dat", path, sizeof(path));
    const char *xname =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ax->vary, 0), "name")->valuestring;

    if (!f)
        return -EIO;
    for (uint32_t s = 0; s < ax->nseries; s++) {
        for (uint32_t x = 0; x < ax->nx; x++) {
            const struct store_sweep_point *p = &pts[x * ax->nseries + s];
            if (p->runs)
                fprintf(f, "%u %.6g %.6g\n", x, p->mean / scale, p->ci_half / scale);
        }
        fputs("\n\n", f);
    }
    fclose(f);
    fprintf(j->gp, "set xlabel '%s'\nset xrange [-0.5:%u.5]\nset offsets 0,0,graph 0.05,0\n", xname,
            ax->nx - 1);
    /* one tick per value of the first --vary, in the order given */
    fputs("set xtics (", j->gp);
    for (uint32_t x = 0; x < ax->nx; x++) {
        const cJSON *v = cJSON_GetArrayItem(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ax->vary, 0), "values"), (int)x);
        fputs(x ? ", " : "", j->gp);
        plot_gp_str(j->gp, cJSON_IsString(v) ? v->valuestring : "?");
        fprintf(j->gp, " %u", x);
    }
    fputs(")\n", j->gp);
    fputs("plot ", j->gp);
    for (uint32_t s = 0; s < ax->nseries && s * ax->nx < n; s++) {
        cJSON *set = cJSON_Parse(pts[s].settings);
        series_label(set, label, sizeof(label));
        cJSON_Delete(set);
        fprintf(j->gp, "%s", s ? ", " : "");
        plot_gp_str(j->gp, path);
        /* series side by side around each tick so their error bars do not hide each other */
        fprintf(j->gp, " index %u using ($1%+.3f):2:3 with yerrorlines lw 2 pt 7 title ", s,
                0.05 * ((double)s - (ax->nseries - 1) / 2.0));
        plot_gp_str(j->gp, label);
    }
    fputc('\n', j->gp);
    (void)sw, (void)d;
    return 0;
}

int plot_sweep(struct store *st, int64_t id, const char *metric, struct plot_out *o, char *err,
               size_t errlen)
{
    struct store_sweep sw = {0};
    struct store_sweep_point *pts = NULL;
    struct sweep_axes ax = {0};
    const struct metric_def *d;
    uint32_t n = 0;
    double max = 0, scale;
    char ylabel[128], title[300];
    struct plot_job j;
    int rc = -1;

    if (store_sweep_get(st, id, &sw, err, errlen) ||
        store_sweep_points(st, id, &pts, &n, err, errlen))
        goto out;
    if (metric && strcmp(metric, sw.metric)) {
        snprintf(err, errlen, "sweep %lld measured %s, not %s", (long long)id, sw.metric, metric);
        goto out;
    }
    d = metric_find(sw.metric);
    if (!d || sweep_axes(sw.definition, &ax) || !n || n % ax.nx) {
        snprintf(err, errlen, "sweep %lld cannot be plotted: its definition is unreadable",
                 (long long)id);
        goto out;
    }
    ax.nseries = n / ax.nx;
    for (uint32_t i = 0; i < n; i++)
        max = pts[i].mean + pts[i].ci_half > max ? pts[i].mean + pts[i].ci_half : max;
    scale = metric_axis(d, max, ylabel, sizeof(ylabel));
    if (plot_job_open(&j, o->format, 480, err, errlen))
        goto out;
    snprintf(title, sizeof(title), "sweep %lld: %s %s, mean and %.4g%% confidence interval%s%s",
             (long long)id, sw.test, d->label, sw.ci_level * 100, sw.title[0] ? " - " : "",
             sw.title);
    fputs("set title ", j.gp);
    plot_gp_str(j.gp, title);
    fputs("\nset ylabel ", j.gp);
    plot_gp_str(j.gp, ylabel);
    fprintf(j.gp, "\nset yrange [0:%.6g]\n", max > 0 ? max * 1.08 / scale : 1);
    if (sweep_data(&j, &sw, &ax, pts, n, d, scale)) {
        snprintf(err, errlen, "cannot write gnuplot data in '%s'", j.dir);
        plot_job_close(&j);
        goto out;
    }
    rc = plot_job_finish(&j, o, err, errlen);
out:
    cJSON_Delete(ax.def);
    free(pts);
    store_sweep_free(&sw);
    return rc;
}

/* ---- a comparison ---- */

/* Spreads a set's points sideways so equal values stay visible: 0, +d, -d, +2d, ... */
static double jitter(size_t k)
{
    double step = 0.05 * (double)((k + 1) / 2 % 4);

    return k % 2 ? step : -step;
}

static int compare_data(struct plot_job *j, struct store *st, const int64_t *ids, size_t n, int x,
                        const char *metric, double scale, FILE *means)
{
    char name[32], path[600];
    FILE *f;
    double *v = calloc(n + 1, sizeof(double));
    size_t k = 0;
    struct stats_sample s;

    snprintf(name, sizeof(name), "set%d.dat", x);
    f = plot_job_data(j, name, path, sizeof(path));
    if (!f || !v) {
        if (f)
            fclose(f);
        free(v);
        return -EIO;
    }
    for (size_t i = 0; i < n; i++)
        if (!store_run_metric(st, ids[i], metric, &v[k]))
            fprintf(f, "%.4f %.6g %lld\n", x + jitter(k), v[k] / scale, (long long)ids[i]), k++;
    fclose(f);
    stats_describe(v, k, &s);
    if (k)
        fprintf(means, "%.2f %.6g %.6g\n", x + 0.3, s.mean / scale,
                stats_ci_half(&s, 0.95) / scale);
    free(v);
    fprintf(j->gp, "%s", x == 1 ? "plot " : ", ");
    plot_gp_str(j->gp, path);
    fprintf(j->gp, " using 1:2 with points pt 7 ps 1.2 title '%s runs'", x == 1 ? "A" : "B");
    return 0;
}

int plot_compare(struct store *st, const int64_t *a, size_t na, const int64_t *b, size_t nb,
                 const char *name_a, const char *name_b, const char *metric, struct plot_out *o,
                 char *err, size_t errlen)
{
    const struct metric_def *d = metric_find(metric);
    char ylabel[128], mpath[600], title[400];
    double max = 0, v, scale;
    struct plot_job j;
    FILE *m;

    if (!d) {
        snprintf(err, errlen, "unknown metric '%s'", metric);
        return -1;
    }
    for (size_t i = 0; i < na + nb; i++)
        if (!store_run_metric(st, i < na ? a[i] : b[i - na], metric, &v) && v > max)
            max = v;
    scale = metric_axis(d, max, ylabel, sizeof(ylabel));
    if (plot_job_open(&j, o->format, 420, err, errlen))
        return -1;
    fputs("set ylabel ", j.gp);
    plot_gp_str(j.gp, ylabel);
    name_a = name_a && *name_a ? name_a : "A";
    name_b = name_b && *name_b ? name_b : "B";
    snprintf(title, sizeof(title), "%s: %.150s against %.150s", d->label, name_b, name_a);
    fputs("\nset title ", j.gp);
    plot_gp_str(j.gp, title);
    fputs("\nset xrange [0.4:2.7]\nset yrange [0:*]\nset xtics noenhanced (", j.gp);
    plot_gp_str(j.gp, name_a);
    fputs(" 1, ", j.gp);
    plot_gp_str(j.gp, name_b);
    fputs(" 2)\n", j.gp);
    m = plot_job_data(&j, "means.dat", mpath, sizeof(mpath));
    if (!m || compare_data(&j, st, a, na, 1, metric, scale, m) ||
        compare_data(&j, st, b, nb, 2, metric, scale, m)) {
        if (m)
            fclose(m);
        snprintf(err, errlen, "cannot write gnuplot data in '%s'", j.dir);
        plot_job_close(&j);
        return -1;
    }
    fclose(m);
    fputs(", ", j.gp);
    plot_gp_str(j.gp, mpath);
    fputs(" using 1:2:3 with yerrorbars lw 2 pt 5 ps 1.5 lc rgb 'black' "
          "title 'mean and 95% interval'\n",
          j.gp);
    return plot_job_finish(&j, o, err, errlen);
}
