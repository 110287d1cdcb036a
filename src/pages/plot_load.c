/* plot_load: the charts of a load run and of any run's time series, through gnuplot. */
#include "plot_load.h"

#include "plot_job.h"

#include "load_result.h"
#include "store_run.h"
#include "store_samples.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PLOT_LOAD_MAX_FLOWS 16 /* per-flow lines drawn at most */

struct phases {
    double start[LOAD_NPHASES], end[LOAD_NPHASES], from[LOAD_NPHASES];
    bool ok;
    /* --classes: the classes' names in flow order (nclasses 0: none) */
    uint32_t nclasses;
    char cls[DSCLASS_MAX][8];
};

/* The classes the stored document names (--classes), in their flows' order. */
static void read_classes(const cJSON *doc, struct phases *ph)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "classes"))
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
        if (ph->nclasses >= DSCLASS_MAX || !cJSON_IsString(name))
            break;
        snprintf(ph->cls[ph->nclasses++], sizeof(ph->cls[0]), "%.7s", name->valuestring);
    }
}

/* The phase boundaries the stored document holds, and its classes. */
static void read_phases(struct store *st, int64_t id, struct phases *ph)
{
    char *text = store_run_document(st, id);
    cJSON *doc = text ? cJSON_Parse(text) : NULL, *p;
    int i = 0;

    memset(ph, 0, sizeof(*ph));
    free(text);
    read_classes(doc, ph);
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(doc, "phases"))
    {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(p, "start_s");
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(p, "end_s");
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(p, "from_s");
        if (i >= LOAD_NPHASES || !cJSON_IsNumber(s) || !cJSON_IsNumber(e) || !cJSON_IsNumber(f))
            break;
        ph->start[i] = s->valuedouble, ph->end[i] = e->valuedouble, ph->from[i] = f->valuedouble;
        i++;
    }
    ph->ok = i == LOAD_NPHASES;
    cJSON_Delete(doc);
}

/* Shaded phases (the loaded one darker) with their names, on the panels that follow. */
static void shade(FILE *gp, const struct phases *ph)
{
    static const char *const fill[LOAD_NPHASES] = {"#eef3f8", "#f8e9dc", "#eef3f8"};

    if (!ph->ok)
        return;
    for (int i = 0; i < LOAD_NPHASES; i++) {
        fprintf(gp,
                "set object %d rect from %.6f, graph 0 to %.6f, graph 1 behind fc rgb '%s' "
                "fs solid 1.0 noborder\n",
                i + 1, ph->start[i], ph->end[i], fill[i]);
        fprintf(gp, "set label %d '%s' at %.6f, graph 0.96 center\n", i + 1,
                load_phase_name((enum load_phase)i), (ph->start[i] + ph->end[i]) / 2);
    }
}

static void title(FILE *gp, const struct store_run *r, const char *what)
{
    char t[400];

    snprintf(t, sizeof(t), "run %lld: %s, %s%s%s", (long long)r->id, what, r->started_at,
             r->title[0] ? " - " : "", r->title);
    fputs("set title ", gp);
    plot_gp_str(gp, t);
    fputc('\n', gp);
}

/* A part's throughput over time, all flows added (flow < 0) or one flow's, into a data file;
 * its largest value. */
static double write_tput(struct plot_job *j, struct store *st, int64_t id, const char *part,
                         int flow, char *path, size_t len, bool *any)
{
    struct samples *s = NULL;
    char err[256], name[32];
    double max = 0;
    FILE *f;

    *any = false;
    snprintf(name, sizeof(name), "%s%s%d.dat", part, flow < 0 ? "" : "-", flow < 0 ? 0 : flow);
    f = plot_job_data(j, name, path, len);
    if (!f)
        return 0;
    if (store_run_samples(st, id, part, "client", &s, err, sizeof(err)) == 1) {
        for (uint32_t k = 0; k < s->n; k++) {
            double bps = 0;
            for (uint32_t fl = 0; fl < s->nflows; fl++)
                if (flow < 0 || fl == (uint32_t)flow)
                    bps += s->kind[fl] != SAMPLES_NONE ? samples_bps(s, k, fl) : 0;
            fprintf(f, "%.6f %.6g\n", s->t_s[k], bps);
            max = fmax(max, bps);
        }
        *any = s->n > 0;
    }
    samples_free(s);
    fclose(f);
    return max;
}

/* Each probe's answered (latency in ms) and lost (time only) records. */
static int write_probes(struct plot_job *j, struct store *st, int64_t id, const char *probe,
                        char *ok, char *lost, size_t len, uint32_t *nlost)
{
    struct txnlog log;
    char err[256], name[32];
    FILE *a, *b;
    int rc = store_run_probes(st, id, probe, &log, err, sizeof(err));

    *nlost = 0;
    if (rc <= 0)
        return rc;
    snprintf(name, sizeof(name), "%s.dat", probe);
    a = plot_job_data(j, name, ok, len);
    snprintf(name, sizeof(name), "%s-lost.dat", probe);
    b = plot_job_data(j, name, lost, len);
    for (uint32_t i = 0; a && b && i < log.n; i++) {
        if (log.rec[i].lat_ns == TXNLOG_LOST) {
            fprintf(b, "%.6f\n", (double)log.rec[i].t_ns / 1e9);
            (*nlost)++;
        } else {
            fprintf(a, "%.6f %.6g\n", (double)log.rec[i].t_ns / 1e9,
                    (double)log.rec[i].lat_ns / 1e6);
        }
    }
    if (b)
        fputs("0 0\n", b); /* gnuplot refuses an empty file */
    if (a)
        fclose(a);
    if (b)
        fclose(b);
    txnlog_fini(&log);
    return a && b ? 1 : -EIO;
}

static const char *const class_colour[DSCLASS_MAX] = {"#1f77b4", "#7f7f7f", "#ff7f0e", "#d62728"};

/* --classes: each class's flow up (solid) and down (dashed). */
static void class_tput_panel(struct plot_job *j, struct store *st, int64_t id,
                             const struct phases *ph)
{
    char path[2][DSCLASS_MAX][600];
    bool has[2][DSCLASS_MAX];
    double max = 0;
    const char *unit;
    int lines = 0;

    for (int d = 0; d < 2; d++)
        for (uint32_t c = 0; c < ph->nclasses; c++)
            max = fmax(max, write_tput(j, st, id, d ? "down" : "up", (int)c, path[d][c],
                                       sizeof(path[d][c]), &has[d][c]));
    double scale = plot_bps_scale(max, &unit);
    fprintf(j->gp, "set ylabel 'throughput per class (%s)'\nset yrange [0:*]\n", unit);
    for (int d = 0; d < 2; d++)
        for (uint32_t c = 0; c < ph->nclasses; c++) {
            if (!has[d][c])
                continue;
            fputs(lines++ ? ", " : "plot ", j->gp);
            plot_gp_str(j->gp, path[d][c]);
            fprintf(j->gp, " using 1:($2/%g) with lines lw 2 dt %d lc rgb '%s' title '%s %s'",
                    scale, d ? 2 : 1, class_colour[c], ph->cls[c], d ? "down" : "up");
        }
    if (!lines)
        fputs("set label 10 'no samples stored (--sample 0?)' at graph 0.5,0.5 center\n"
              "plot 1/0 notitle\nunset label 10",
              j->gp);
    fputc('\n', j->gp);
}

static void tput_panel(struct plot_job *j, struct store *st, int64_t id)
{
    char up[600], down[600];
    bool has_up, has_down;
    double max = fmax(write_tput(j, st, id, "up", -1, up, sizeof(up), &has_up),
                      write_tput(j, st, id, "down", -1, down, sizeof(down), &has_down));
    const char *unit;
    double scale = plot_bps_scale(max, &unit);

    fprintf(j->gp, "set ylabel 'throughput (%s)'\nset yrange [0:*]\n", unit);
    if (!has_up && !has_down) {
        fputs("set label 10 'no samples stored (--sample 0?)' at graph 0.5,0.5 center\n"
              "plot 1/0 notitle\nunset label 10\n",
              j->gp);
        return;
    }
    fputs("plot ", j->gp);
    if (has_up) {
        plot_gp_str(j->gp, up);
        fprintf(j->gp, " using 1:($2/%g) with lines lw 2 lc rgb '#1f77b4' title 'up'", scale);
    }
    if (has_down) {
        fputs(has_up ? ", " : "", j->gp);
        plot_gp_str(j->gp, down);
        fprintf(j->gp, " using 1:($2/%g) with lines lw 2 lc rgb '#2ca02c' title 'down'", scale);
    }
    fputc('\n', j->gp);
}

/* The probes a load run may have stored: name, label, colour. */
struct probe_line {
    char name[16], label[16];
    const char *colour;
};

static uint32_t probe_lines(const struct phases *ph, struct probe_line *pl)
{
    uint32_t n = 0;

    pl[n++] = (struct probe_line){"udp", "UDP", "#d62728"};
    if (ph->nclasses) { /* the UDP probe is best effort's; the other classes follow */
        snprintf(pl[0].label, sizeof(pl[0].label), "UDP %s", ph->cls[0]);
        pl[0].colour = class_colour[0];
    }
    pl[n++] = (struct probe_line){"tcp", "TCP", "#9467bd"};
    for (uint32_t c = 1; c < ph->nclasses; c++) {
        struct probe_line *l = &pl[n++];
        snprintf(l->name, sizeof(l->name), "udp_%s", ph->cls[c]);
        for (char *q = l->name; *q; q++)
            *q = (char)(*q >= 'A' && *q <= 'Z' ? *q - 'A' + 'a' : *q);
        snprintf(l->label, sizeof(l->label), "UDP %s", ph->cls[c]);
        l->colour = class_colour[c];
    }
    pl[n++] = (struct probe_line){"icmp", "ICMP", "#8c564b"};
    return n;
}

#define PLOT_LOAD_MAX_PROBES (DSCLASS_MAX + 2)

static void latency_panel(struct plot_job *j, struct store *st, int64_t id, const struct phases *ph)
{
    struct probe_line pl[PLOT_LOAD_MAX_PROBES];
    uint32_t np = probe_lines(ph, pl);
    char ok[PLOT_LOAD_MAX_PROBES][600], lost[PLOT_LOAD_MAX_PROBES][600];
    uint32_t nlost[PLOT_LOAD_MAX_PROBES];
    int have[PLOT_LOAD_MAX_PROBES], n = 0, any = 0;

    for (uint32_t p = 0; p < np; p++)
        any += have[p] =
            write_probes(j, st, id, pl[p].name, ok[p], lost[p], sizeof(ok[p]), &nlost[p]) > 0;
    fputs("set ylabel 'probe latency (ms)'\nset yrange [0:*]\nset xlabel 'time (s)'\n", j->gp);
    if (!any) {
        fputs("set label 10 'no probes stored (--probe-rate 0)' at graph 0.5,0.5 center\n"
              "plot 1/0 notitle\n",
              j->gp);
        return;
    }
    fputs("plot ", j->gp);
    for (uint32_t p = 0; p < np; p++) {
        if (!have[p])
            continue;
        fputs(n++ ? ", " : "", j->gp);
        plot_gp_str(j->gp, ok[p]);
        fprintf(j->gp, " using 1:2 with points pt 7 ps 0.35 lc rgb '%s' title '%s probes'",
                pl[p].colour, pl[p].label);
        if (nlost[p]) {
            fputs(", ", j->gp);
            plot_gp_str(j->gp, lost[p]);
            fprintf(j->gp,
                    " every ::0::%u using 1:(0) with points pt 2 ps 0.8 lc rgb '%s' "
                    "title '%s lost (%u)'",
                    nlost[p] - 1, pl[p].colour, pl[p].label, nlost[p]);
        }
    }
    fputc('\n', j->gp);
}

static int plot_all(struct store *st, const struct store_run *r, struct plot_out *o, char *err,
                    size_t errlen)
{
    struct phases ph;
    struct plot_job j;

    read_phases(st, r->id, &ph);
    if (plot_job_open(&j, o->format, 720, err, errlen))
        return -1;
    fputs("set multiplot layout 2,1\nset xrange [0:*]\n", j.gp);
    if (ph.ok)
        fprintf(j.gp, "set xrange [0:%.6f]\n", ph.end[LOAD_RECOVERY]);
    shade(j.gp, &ph);
    title(j.gp, r, "latency under load");
    if (ph.nclasses)
        class_tput_panel(&j, st, r->id, &ph);
    else
        tput_panel(&j, st, r->id);
    fputs("unset title\n", j.gp);
    latency_panel(&j, st, r->id, &ph);
    fputs("unset multiplot\n", j.gp);
    return plot_job_finish(&j, o, err, errlen);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* One probe's latencies in one phase as 1 - CDF (the share of probes at least this slow). */
static int ccdf(struct plot_job *j, const struct txnlog *log, double from, double to,
                const char *name, char *path, size_t len, uint32_t *n)
{
    double *v = malloc((log->n + 1) * sizeof(*v));
    FILE *f = v ? plot_job_data(j, name, path, len) : NULL;

    *n = 0;
    for (uint32_t i = 0; f && i < log->n; i++) {
        double t = (double)log->rec[i].t_ns / 1e9;
        if (t >= from && t < to && log->rec[i].lat_ns != TXNLOG_LOST)
            v[(*n)++] = (double)log->rec[i].lat_ns / 1e6;
    }
    if (f && *n) {
        qsort(v, *n, sizeof(*v), by_value);
        for (uint32_t i = 0; i < *n; i++)
            fprintf(f, "%.6g %.8g\n", v[i], (double)(*n - i) / *n);
    }
    if (f)
        fclose(f);
    free(v);
    return f ? 0 : -EIO;
}

static int plot_cdf(struct store *st, const struct store_run *r, struct plot_out *o, char *err,
                    size_t errlen)
{
    struct probe_line pl[PLOT_LOAD_MAX_PROBES];
    struct phases ph;
    struct plot_job j;
    uint32_t np;
    int lines = 0;

    read_phases(st, r->id, &ph);
    np = probe_lines(&ph, pl);
    if (!ph.ok) {
        snprintf(err, errlen, "run %lld's stored document has no phases", (long long)r->id);
        return -1;
    }
    if (plot_job_open(&j, o->format, 480, err, errlen))
        return -1;
    title(j.gp, r, "probe latency, idle and under load (1 - CDF)");
    fputs("set logscale xy\nset xlabel 'latency (ms)'\nset ylabel 'share of probes at least "
          "this slow'\n",
          j.gp);
    for (uint32_t p = 0; p < np; p++) {
        struct txnlog log;
        if (store_run_probes(st, r->id, pl[p].name, &log, err, errlen) != 1)
            continue;
        for (int phase = LOAD_BASELINE; phase <= LOAD_LOADED; phase++) {
            char path[600], name[32];
            uint32_t n;
            snprintf(name, sizeof(name), "%s-%d.dat", pl[p].name, phase);
            if (ccdf(&j, &log, ph.from[phase], ph.end[phase], name, path, sizeof(path), &n) || !n)
                continue;
            fputs(lines++ ? ", " : "plot ", j.gp);
            plot_gp_str(j.gp, path);
            /* without classes: colour by phase, the UDP probe bold; with them: colour by
             * class, idle dashed */
            bool by_phase = !ph.nclasses, bold = by_phase ? p == 0 : phase == LOAD_LOADED;
            fprintf(j.gp, " using 1:2 with steps lw %d dt %d lc rgb '%s' title '%s %s (%u)'",
                    bold ? 2 : 1, bold ? 1 : 2,
                    !by_phase                ? pl[p].colour
                    : phase == LOAD_BASELINE ? "#1f77b4"
                                             : "#d62728",
                    pl[p].label, phase == LOAD_BASELINE ? "idle" : "loaded", n);
        }
        txnlog_fini(&log);
    }
    if (!lines)
        fputs("set label 1 'no answered probes stored' at graph 0.5,0.5 center\n"
              "unset logscale\nplot 1/0 notitle",
              j.gp);
    fputc('\n', j.gp);
    return plot_job_finish(&j, o, err, errlen);
}

struct flow_series {
    struct samples *s[4];
    char label[4][24];
    uint32_t n;
};

/* The TCP flows' series of a run: its own sides, or a load run's up and down parts. */
static void collect(struct store *st, const struct store_run *r, struct flow_series *fs)
{
    static const char *const sides[2] = {"client", "server"};
    const char *parts[2] = {"", ""};
    int nparts = 1;
    char err[256];

    memset(fs, 0, sizeof(*fs));
    if (!strcmp(r->test, "load")) {
        parts[0] = "up", parts[1] = "down";
        nparts = 2;
    }
    for (int p = 0; p < nparts; p++)
        for (int s = 0; s < 2; s++) {
            struct samples *x = NULL;
            if (store_run_samples(st, r->id, parts[p], sides[s], &x, err, sizeof(err)) != 1)
                continue;
            fs->s[fs->n] = x;
            snprintf(fs->label[fs->n], sizeof(fs->label[0]), "%s%s%s", parts[p],
                     parts[p][0] ? " " : "", sides[s]);
            fs->n++;
        }
}

/* cwnd (column 2) and srtt in ms (column 3) of every TCP flow, one data block each. */
static uint32_t write_flows(struct plot_job *j, const struct flow_series *fs,
                            const struct phases *ph, char *path, size_t len, char (*names)[48])
{
    FILE *f = plot_job_data(j, "flows.dat", path, len);
    uint32_t blocks = 0;

    for (uint32_t i = 0; f && i < fs->n; i++)
        for (uint32_t fl = 0; fl < fs->s[i]->nflows && blocks < PLOT_LOAD_MAX_FLOWS; fl++) {
            const struct samples *s = fs->s[i];
            if (s->kind[fl] != SAMPLES_TCP)
                continue;
            for (uint32_t k = 0; k < s->n; k++) {
                const struct sample *row = samples_row(s, k, fl);
                if (row->tcp)
                    fprintf(f, "%.6f %u %.6g\n", s->t_s[k], row->cwnd, row->rtt_us / 1e3);
            }
            fputs("\n\n", f);
            if (ph->nclasses) /* --classes: flow i is class i mod n */
                snprintf(names[blocks++], 48, "%s flow %u (%s)", fs->label[i], fl,
                         ph->cls[fl % ph->nclasses]);
            else
                snprintf(names[blocks++], 48, "%s flow %u", fs->label[i], fl);
        }
    if (f)
        fclose(f);
    return blocks;
}

static int plot_flows(struct store *st, const struct store_run *r, struct plot_out *o, char *err,
                      size_t errlen)
{
    struct flow_series fs;
    char path[600], names[PLOT_LOAD_MAX_FLOWS][48];
    struct plot_job j;
    struct phases ph = {0};
    uint32_t n;
    int rc = -1;

    collect(st, r, &fs);
    if (!strcmp(r->test, "load"))
        read_phases(st, r->id, &ph);
    if (plot_job_open(&j, o->format, 720, err, errlen))
        goto out;
    n = write_flows(&j, &fs, &ph, path, sizeof(path), names);
    if (!n) {
        snprintf(err, errlen,
                 "run %lld has no TCP_INFO samples to plot (it ran without --sample, or over UDP)",
                 (long long)r->id);
        plot_job_close(&j);
        goto out;
    }
    fputs("set multiplot layout 2,1\nset xrange [0:*]\nset yrange [0:*]\n", j.gp);
    if (!strcmp(r->test, "load")) {
        if (ph.ok)
            fprintf(j.gp, "set xrange [0:%.6f]\n", ph.end[LOAD_RECOVERY]);
        shade(j.gp, &ph);
    }
    title(j.gp, r, "congestion window and smoothed RTT of each TCP flow");
    for (int panel = 0; panel < 2; panel++) {
        fprintf(j.gp, "%sset ylabel '%s'\n", panel ? "unset title\nset xlabel 'time (s)'\n" : "",
                panel ? "smoothed RTT (ms)" : "congestion window (segments)");
        for (uint32_t b = 0; b < n; b++) {
            fputs(b ? ", " : "plot ", j.gp);
            plot_gp_str(j.gp, path);
            fprintf(j.gp, " index %u using 1:%d with lines lw 1 title ", b, panel ? 3 : 2);
            plot_gp_str(j.gp, names[b]);
        }
        fputc('\n', j.gp);
    }
    fputs("unset multiplot\n", j.gp);
    rc = plot_job_finish(&j, o, err, errlen);
out:
    for (uint32_t i = 0; i < fs.n; i++)
        samples_free(fs.s[i]);
    return rc;
}

int plot_load_chart(struct store *st, int64_t id, enum plot_chart chart, struct plot_out *o,
                    char *err, size_t errlen)
{
    struct store_run r;

    if (store_run_get(st, id, &r, err, errlen))
        return -1;
    if (chart == PLOT_CHART_FLOWS)
        return plot_flows(st, &r, o, err, errlen);
    if (strcmp(r.test, "load")) {
        snprintf(err, errlen, "run %lld is a %s run: --chart %s is for netrig load runs",
                 (long long)id, r.test, chart == PLOT_CHART_CDF ? "cdf" : "all");
        return -1;
    }
    return chart == PLOT_CHART_CDF ? plot_cdf(st, &r, o, err, errlen)
                                   : plot_all(st, &r, o, err, errlen);
}
