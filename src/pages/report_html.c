/* report_html: self-contained HTML reports of stored runs, sweeps and comparisons. */
#include "report_html.h"
#include "report_html_priv.h"

#include "compare.h"
#include "hostsnap.h"
#include "metric.h"
#include "plot.h"
#include "store_mesh.h"
#include "store_run.h"
#include "store_sweep.h"
#include "units.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char css[] =
    "body{font-family:sans-serif;margin:2em auto;max-width:64em;color:#222;line-height:1.4}"
    "h1{font-size:1.5em;margin-bottom:0.2em}h2{font-size:1.2em;margin-top:1.6em;"
    "border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse;margin:0.5em 0;font-size:0.9em}"
    "th,td{border:1px solid #ddd;padding:0.25em 0.6em;text-align:left;vertical-align:top}"
    "th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums}"
    ".meta{color:#666;font-size:0.9em}.note{color:#a40;font-style:italic}"
    ".better{color:#070;font-weight:bold}.worse{color:#b00;font-weight:bold}"
    ".chart svg{max-width:100%;height:auto}details{margin:0.5em 0}"
    "table.mesh td.cell{text-align:center;white-space:nowrap;min-width:6em}"
    "table.mesh td.failed{background:#e8e8e8;color:#b00;font-weight:bold}"
    "table.mesh td.self,table.mesh td.none{background:#f7f7f7;color:#aaa}"
    ".swatch{display:inline-block;padding:0.1em 0.6em;color:#222}";

void report_html_esc(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(*s, out);
        }
    }
}

static void head(FILE *out, const char *title, struct store *st)
{
    char now[32];

    store_time_iso(time(NULL), now, sizeof(now));
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'; img-src data:\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          out);
    report_html_esc(out, title);
    fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", css);
    report_html_esc(out, title);
    fprintf(out, "</h1>\n<p class=\"meta\">netrig %s report, made %s from ", NETRIG_VERSION, now);
    report_html_esc(out, store_path(st));
    fputs("</p>\n", out);
}

static void foot(FILE *out) { fputs("</body>\n</html>\n", out); }

/* A gnuplot SVG without its XML prologue, or a note saying why there is none. */
void report_html_chart(FILE *out, struct plot_out *po, int rc, const char *err, char *note,
                       size_t notelen)
{
    const char *svg = po->svg ? strstr(po->svg, "<svg") : NULL;

    if (rc || !svg) {
        fputs("<p class=\"note\">chart not drawn: ", out);
        report_html_esc(out, rc ? err : "gnuplot wrote no SVG");
        fputs("</p>\n", out);
        if (!note[0])
            snprintf(note, notelen, "%s", rc ? err : "gnuplot wrote no SVG");
    } else {
        fputs("<div class=\"chart\">\n", out);
        fputs(svg, out);
        fputs("\n</div>\n", out);
    }
    free(po->svg);
    po->svg = NULL;
}

static void row2(FILE *out, const char *k, const char *v)
{
    fputs("<tr><th>", out);
    report_html_esc(out, k);
    fputs("</th><td>", out);
    report_html_esc(out, v);
    fputs("</td></tr>\n", out);
}

static void host_table(FILE *out, struct store *st, int64_t id)
{
    struct hostsnap *hs = hostsnap_new();

    if (!hs)
        return;
    store_run_host(st, id, hs);
    fprintf(out, "<h2>Host snapshot (run %lld)</h2>\n", (long long)id);
    if (!hs->n)
        fputs("<p class=\"note\">no host snapshot stored</p>\n", out);
    else
        fputs("<details open><summary>kernel, sysctls, CPU and interfaces</summary>\n"
              "<table>\n<tr><th>setting</th><th>value</th></tr>\n",
              out);
    for (uint32_t i = 0; i < hs->n; i++)
        row2(out, hs->e[i].key, hs->e[i].value);
    if (hs->n)
        fputs("</table>\n</details>\n", out);
    hostsnap_free(hs);
}

static void metrics_table(FILE *out, struct store *st, int64_t id)
{
    struct metric_value m[METRIC_MAX];
    size_t n = store_run_metrics(st, id, m, METRIC_MAX);
    char v[64];

    fputs("<h2>Summary</h2>\n<table>\n<tr><th>metric</th><th>value</th><th>name</th></tr>\n", out);
    for (size_t i = 0; i < n; i++) {
        metric_format(m[i].def, m[i].value, v, sizeof(v));
        fputs("<tr><td>", out);
        report_html_esc(out, m[i].def->label);
        fprintf(out, "</td><td class=\"n\">%s</td><td><code>%s</code></td></tr>\n", v,
                m[i].def->name);
    }
    fputs("</table>\n", out);
}

static int flow_row(const struct store_flow *f, void *arg)
{
    FILE *out = arg;
    char rt[32];

    units_format_rate(f->throughput_bps, rt, sizeof(rt));
    fprintf(out,
            "<tr><td class=\"n\">%u</td><td>%s</td><td class=\"n\">%llu</td>"
            "<td class=\"n\">%s</td>",
            f->flow, f->direction, (unsigned long long)f->bytes, rt);
    if (f->retransmits >= 0)
        fprintf(out, "<td class=\"n\">%lld</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td>",
                (long long)f->retransmits, (long long)f->rtt_us, (long long)f->cwnd);
    else
        fputs("<td></td><td></td><td></td>", out);
    if (f->transactions >= 0)
        fprintf(out, "<td class=\"n\">%lld</td>", (long long)f->transactions);
    else
        fputs("<td></td>", out);
    fputs("</tr>\n", out);
    return 0;
}

/* A params object (docs/json.md) as a collapsed table. */
static void params_rows(FILE *out, const cJSON *p)
{
    char v[320];
    const cJSON *x;

    fputs("<details><summary>parameters</summary>\n<table>\n", out);
    cJSON_ArrayForEach(x, p)
    {
        if (cJSON_IsString(x))
            snprintf(v, sizeof(v), "%s", x->valuestring);
        else if (cJSON_IsBool(x))
            snprintf(v, sizeof(v), "%s", cJSON_IsTrue(x) ? "yes" : "no");
        else
            snprintf(v, sizeof(v), "%.10g", x->valuedouble);
        row2(out, x->string, v);
    }
    fputs("</table>\n</details>\n", out);
}

static void params_table(FILE *out, struct store *st, int64_t id)
{
    char *text = store_run_document(st, id);
    cJSON *doc = text ? cJSON_Parse(text) : NULL;

    free(text);
    params_rows(out, cJSON_GetObjectItemCaseSensitive(doc, "params"));
    cJSON_Delete(doc);
}

int report_html_run(struct store *st, int64_t id, FILE *out, char *note, size_t notelen, char *err,
                    size_t errlen)
{
    struct store_run r;
    struct plot_out po = {PLOT_SVG, NULL, NULL};
    char title[256], perr[512];
    int rc;

    note[0] = '\0';
    if (store_run_get(st, id, &r, err, errlen))
        return -1;
    snprintf(title, sizeof(title), "netrig run %lld: %s%s%s%s", (long long)id, r.test,
             r.udp ? " (udp)" : "", r.title[0] ? " - " : "", r.title);
    head(out, title, st);
    fputs("<table>\n", out);
    row2(out, "started (UTC)", r.started_at);
    row2(out, strcmp(r.role, "server") ? "server" : "client (served by this host)", r.peer);
    snprintf(perr, sizeof(perr), "%s / %s", r.client_version[0] ? r.client_version : "-",
             r.server_version[0] ? r.server_version : "-");
    row2(out, "netrig versions (client / server)", perr);
    if (r.tags[0])
        row2(out, "tags", r.tags);
    if (r.partial)
        row2(out, "PARTIAL", r.error);
    fputs("</table>\n", out);
    params_table(out, st, id);
    fputs("<h2>Over time</h2>\n", out);
    rc = plot_run(st, id, &po, perr, sizeof(perr));
    report_html_chart(out, &po, rc, perr, note, notelen);
    report_html_series(out, st, &r, note, notelen);
    metrics_table(out, st, id);
    fputs("<h2>Flows</h2>\n<table>\n<tr><th>flow</th><th>direction</th><th>bytes</th>"
          "<th>rate</th><th>retransmits</th><th>RTT (us)</th><th>cwnd</th>"
          "<th>transactions</th></tr>\n",
          out);
    store_run_flows(st, id, flow_row, out);
    fputs("</table>\n", out);
    host_table(out, st, id);
    foot(out);
    return 0;
}

static void settings_text(const char *json, char *buf, size_t len)
{
    cJSON *o = cJSON_Parse(json), *v;
    size_t n = 0;

    buf[0] = '\0';
    cJSON_ArrayForEach(v, o)
    {
        if (cJSON_IsString(v) && n < len)
            n += (size_t)snprintf(buf + n, len - n, "%s%s=%s", n ? " " : "", v->string,
                                  v->valuestring);
    }
    cJSON_Delete(o);
}

static void point_row(FILE *out, struct store *st, const struct metric_def *d,
                      const struct store_sweep_point *p)
{
    char label[512], mean[48], half[48];
    int64_t *ids = NULL;
    size_t n = 0;

    settings_text(p->settings, label, sizeof(label));
    metric_format(d, p->mean, mean, sizeof(mean));
    metric_format(d, p->ci_half, half, sizeof(half));
    fprintf(out, "<tr><td class=\"n\">%u</td><td>", p->idx + 1);
    report_html_esc(out, label);
    fprintf(out,
            "</td><td>%s</td><td class=\"n\">%u</td><td class=\"n\">%s</td>"
            "<td class=\"n\">%s</td><td class=\"n\">%.2f</td><td>",
            p->status, p->runs, p->runs ? mean : "-", p->runs > 1 ? half : "-",
            p->mean != 0 ? 100 * p->ci_half / fabs(p->mean) : 0);
    if (!store_sweep_point_runs(st, p->id, &ids, &n))
        for (size_t i = 0; i < n; i++)
            fprintf(out, "%s%lld", i ? ", " : "", (long long)ids[i]);
    fputs("</td></tr>\n", out);
    free(ids);
}

int report_html_sweep(struct store *st, int64_t id, FILE *out, char *note, size_t notelen,
                      char *err, size_t errlen)
{
    struct store_sweep sw = {0};
    struct store_sweep_point *pts = NULL;
    struct plot_out po = {PLOT_SVG, NULL, NULL};
    const struct metric_def *d;
    uint32_t n = 0;
    char title[256], perr[512], buf[64];
    int64_t *first = NULL;
    size_t nfirst = 0;
    int rc;

    note[0] = '\0';
    if (store_sweep_get(st, id, &sw, err, errlen) ||
        store_sweep_points(st, id, &pts, &n, err, errlen) || !(d = metric_find(sw.metric))) {
        if (!err[0])
            snprintf(err, errlen, "sweep %lld measured an unknown metric", (long long)id);
        store_sweep_free(&sw);
        free(pts);
        return -1;
    }
    snprintf(title, sizeof(title), "netrig sweep %lld: %s%s%s", (long long)id, sw.test,
             sw.title[0] ? " - " : "", sw.title);
    head(out, title, st);
    fputs("<table>\n", out);
    row2(out, "created (UTC)", sw.created_at);
    row2(out, "status", sw.status);
    row2(out, "metric", d->label);
    if (sw.ci_pct > 0)
        snprintf(buf, sizeof(buf), "%.4g%% interval within +-%.4g%%, at most %u runs",
                 sw.ci_level * 100, sw.ci_pct, sw.repeat_max);
    else
        snprintf(buf, sizeof(buf), "%u run(s) per point", sw.repeat_max);
    row2(out, "repetitions", buf);
    row2(out, "definition", sw.definition);
    fputs("</table>\n<h2>Chart</h2>\n", out);
    rc = plot_sweep(st, id, NULL, &po, perr, sizeof(perr));
    report_html_chart(out, &po, rc, perr, note, notelen);
    fprintf(out,
            "<h2>Points</h2>\n<table>\n<tr><th>point</th><th>settings</th><th>status</th>"
            "<th>runs</th><th>mean</th><th>+- (%.4g%% CI)</th><th>+- %%</th><th>run ids</th>"
            "</tr>\n",
            sw.ci_level * 100);
    for (uint32_t i = 0; i < n; i++)
        point_row(out, st, d, &pts[i]);
    fputs("</table>\n", out);
    for (uint32_t i = 0; i < n && !nfirst; i++) {
        free(first);
        first = NULL;
        store_sweep_point_runs(st, pts[i].id, &first, &nfirst);
    }
    if (nfirst)
        host_table(out, st, first[0]);
    foot(out);
    free(first);
    free(pts);
    store_sweep_free(&sw);
    return 0;
}

static void compare_rows(FILE *out, const struct compare_result *c)
{
    char va[48], vb[48];

    fputs("<h2>Metrics</h2>\n<table>\n<tr><th>metric</th><th>A (mean)</th><th>B (mean)</th>"
          "<th>change</th><th>Welch p</th><th>95% verdict</th></tr>\n",
          out);
    for (size_t i = 0; i < c->nrows; i++) {
        const struct compare_row *r = &c->rows[i];
        const char *v = compare_verdict(r);
        metric_format(r->def, r->a.mean, va, sizeof(va));
        metric_format(r->def, r->b.mean, vb, sizeof(vb));
        fputs("<tr><td>", out);
        report_html_esc(out, r->def->label);
        fprintf(out, "</td><td class=\"n\">%s (n=%zu)</td><td class=\"n\">%s (n=%zu)</td>", va,
                r->a.n, vb, r->b.n);
        if (isnan(r->change_pct))
            fputs("<td class=\"n\">-</td>", out);
        else
            fprintf(out, "<td class=\"n\">%+.1f%%</td>", r->change_pct);
        if (r->w.valid)
            fprintf(out, "<td class=\"n\">%.3g</td>", r->w.p);
        else
            fputs("<td>one run each</td>", out);
        fprintf(out, "<td class=\"%s\">%s</td></tr>\n", v,
                *v           ? v
                : r->w.valid ? "no significant change"
                             : "-");
    }
    fputs("</table>\n", out);
}

static void what_compared(FILE *out, const struct compare_result *c)
{
    fputs("<h2>What was compared</h2>\n", out);
    for (size_t i = 0; i < c->nwarnings; i++) {
        fputs("<p class=\"note\">warning: ", out);
        report_html_esc(out, c->warnings[i].message);
        fputs("</p>\n", out);
    }
    if (!c->nparams) {
        fputs("<p>the tests' parameters do not differ</p>\n", out);
        return;
    }
    fputs("<table>\n<tr><th>parameter</th><th>A</th><th>B</th></tr>\n", out);
    for (size_t i = 0; i < c->nparams; i++) {
        fputs("<tr><td>", out);
        report_html_esc(out, c->params[i].label);
        fputs("</td><td>", out);
        report_html_esc(out, c->params[i].a);
        fputs("</td><td>", out);
        report_html_esc(out, c->params[i].b);
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
}

/* One side's host settings that differ, or why they were not compared. */
static void host_rows(FILE *out, const struct compare_side *sd)
{
    fprintf(out, "<h2>%s host settings that differ</h2>\n",
            strcmp(sd->name, "server") ? "Client" : "Server");
    for (size_t i = 0; i < sd->nmissing; i++) {
        fprintf(out,
                "<p class=\"note\">not recorded for run %lld: ", (long long)sd->missing[i].run);
        report_html_esc(out, sd->missing[i].note);
        fputs("</p>\n", out);
    }
    if (!sd->compared) {
        fputs("<p>not compared</p>\n", out);
        return;
    }
    if (!sd->ndiff) {
        fputs("<p>none</p>\n", out);
        return;
    }
    fputs("<table>\n<tr><th>setting</th><th>A</th><th>B</th></tr>\n", out);
    for (size_t i = 0; i < sd->ndiff; i++) {
        fputs("<tr><td>", out);
        report_html_esc(out, sd->diff[i].key);
        fputs("</td><td>", out);
        report_html_esc(out, sd->diff[i].a[0] ? sd->diff[i].a : "(none)");
        fputs("</td><td>", out);
        report_html_esc(out, sd->diff[i].b[0] ? sd->diff[i].b : "(none)");
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
}

static void story_side(FILE *out, const char *th, const char *name, const char *verdict)
{
    fprintf(out, "<tr><th>%s</th><td>", th);
    report_html_esc(out, name);
    fputs(verdict ? ": diagnose verdict <b>" : "", out);
    report_html_esc(out, verdict ? verdict : "");
    fputs(verdict ? "</b></td></tr>\n" : "</td></tr>\n", out);
}

/* The story of a change on one page: before (its verdict), the tune between, after (its
 * verdict), and the gain in the primary metric with its significance. */
static void story(FILE *out, const struct compare_result *c, const char *name_a, const char *name_b,
                  const char *metric)
{
    const struct compare_row *row = NULL;
    char va[48], vb[48], changes[2048];

    for (size_t i = 0; i < c->nrows; i++)
        if (!strcmp(c->rows[i].def->name, metric))
            row = &c->rows[i];
    fputs("<h2>Before, the change, after</h2>\n<table>\n", out);
    story_side(out, "before", name_a, c->verdict[0]);
    fputs("<tr><th>change</th><td>", out);
    if (!c->ntunes)
        fputs("no netrig tune --apply recorded between them", out);
    for (size_t i = 0; i < c->ntunes; i++) {
        fputs(i ? "<br>" : "", out);
        fputs("netrig tune --apply at ", out);
        report_html_esc(out, c->tunes[i].applied_at);
        fputs(" in ", out);
        report_html_esc(out, c->tunes[i].where);
        fputs(" for ", out);
        report_html_esc(out, c->tunes[i].target);
        compare_tune_changes(&c->tunes[i], changes, sizeof(changes));
        fputs(": ", out);
        report_html_esc(out, changes);
    }
    fputs("</td></tr>\n", out);
    story_side(out, "after", name_b, c->verdict[1]);
    if (row) {
        metric_format(row->def, row->a.mean, va, sizeof(va));
        metric_format(row->def, row->b.mean, vb, sizeof(vb));
        fputs("<tr><th>gain</th><td>", out);
        report_html_esc(out, row->def->label);
        fprintf(out, " %s -&gt; %s", va, vb);
        if (!isnan(row->change_pct))
            fprintf(out, " (%+.1f%%)", row->change_pct);
        if (row->w.valid)
            fprintf(out, ", %s (Welch p=%.3g)",
                    row->significant ? "significant at 95%" : "not significant", row->w.p);
        else
            fputs(", significance untested: one run each (repeat each side to test it)", out);
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
}

static void side_row(FILE *out, const char *tag, const char *name, const int64_t *ids, size_t n)
{
    fprintf(out, "<tr><th>%s</th><td>", tag);
    report_html_esc(out, name);
    fputs("</td><td>", out);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%lld", i ? ", " : "", (long long)ids[i]);
    fputs("</td></tr>\n", out);
}

int report_html_compare(struct store *st, const int64_t *a, size_t na, const char *name_a,
                        const int64_t *b, size_t nb, const char *name_b, unsigned flags, FILE *out,
                        char *note, size_t notelen, char *err, size_t errlen)
{
    struct compare_result c;
    struct plot_out po = {PLOT_SVG, NULL, NULL};
    struct store_run r;
    char title[300], perr[512];
    int rc;

    note[0] = '\0';
    if (store_run_get(st, a[0], &r, err, errlen))
        return -1;
    if ((rc = compare_sets(st, a, na, b, nb, flags, &c, err, errlen)) != 0)
        return rc;
    snprintf(title, sizeof(title), "netrig comparison: %s against %s", name_b, name_a);
    head(out, title, st);
    fputs("<table>\n<tr><th></th><th>name</th><th>runs</th></tr>\n", out);
    side_row(out, "A", name_a, a, na);
    side_row(out, "B", name_b, b, nb);
    fputs("</table>\n<h2>Chart</h2>\n", out);
    story(out, &c, name_a, name_b, metric_primary(r.test));
    rc = plot_compare(st, a, na, b, nb, name_a, name_b, metric_primary(r.test), &po, perr,
                      sizeof(perr));
    report_html_chart(out, &po, rc, perr, note, notelen);
    what_compared(out, &c);
    compare_rows(out, &c);
    host_rows(out, &c.side[0]);
    host_rows(out, &c.side[1]);
    host_table(out, st, b[nb - 1]);
    foot(out);
    compare_free(&c);
    return 0;
}

/* ---- mesh plans ---- */

/* What a mesh cell shows: the figure its colour scales (throughput, or latency p50 for rr and
 * crr: has is false when the cell has no results) and its text. */
struct cell_fig {
    bool has;
    double value;
    char text[48], sub[48];
};

static void cell_fig(struct store *st, const struct store_mesh_cell *c, struct cell_fig *f)
{
    double v;

    memset(f, 0, sizeof(*f));
    if (!c->run_id || (strcmp(c->status, "complete") && strcmp(c->status, "partial")))
        return;
    if (report_html_txn(c->test_name)) {
        if (store_run_metric(st, c->run_id, "latency_p50_us", &f->value))
            return;
        snprintf(f->text, sizeof(f->text), "p50 %.1f us", f->value);
        if (!store_run_metric(st, c->run_id, "transactions_per_s", &v))
            snprintf(f->sub, sizeof(f->sub), "%.0f/s", v);
    } else {
        if (store_run_metric(st, c->run_id, "throughput_bps", &f->value))
            return;
        units_format_rate(f->value, f->text, sizeof(f->text));
        if (!store_run_metric(st, c->run_id, "retransmits", &v))
            snprintf(f->sub, sizeof(f->sub), "%.0f retransmits", v);
    }
    f->has = true;
}

/* Green for the best value of the matrix (lo for latency, hi for throughput) to red for half
 * as good or worse (half the throughput, twice the latency). */
static double fig_hue(double v, double lo, double hi, bool lower_better)
{
    double r = lower_better ? (v > 0 ? lo / v : 1) : (hi > 0 ? v / hi : 1);

    return 120 * fmax(0, fmin(1, (r - 0.5) / 0.5));
}

static void mesh_td(FILE *out, const struct store_mesh_cell *c, const struct cell_fig *f, double lo,
                    double hi, bool self)
{
    char title[512];

    if (!c) {
        fprintf(out, "<td class=\"cell %s\" title=\"%s\">%s</td>", self ? "self" : "none",
                self ? "same host" : "not in the plan", self ? "&ndash;" : "");
        return;
    }
    if (!f->has) {
        snprintf(title, sizeof(title), "%s -> %s %s: %s%s%s", c->source, c->destination,
                 c->test_name, c->status, c->error[0] ? ": " : "", c->error);
        fprintf(out, "<td class=\"cell %s\" title=\"",
                strcmp(c->status, "pending") ? "failed" : "pending");
        report_html_esc(out, title);
        fprintf(out, "\">%s</td>",
                !strcmp(c->status, "pending")  ? "not run"
                : !strcmp(c->status, "failed") ? "failed"
                                               : "no results");
        return;
    }
    snprintf(title, sizeof(title), "%s -> %s %s: %s; %s%s%s; run %lld%s%s", c->source,
             c->destination, c->test_name, c->status, f->text, f->sub[0] ? ", " : "", f->sub,
             (long long)c->run_id, c->error[0] ? "; " : "", c->error);
    fprintf(out, "<td class=\"cell %s\" style=\"background:hsl(%.0f,70%%,78%%)\" title=\"",
            strcmp(c->status, "partial") ? "ok" : "partial",
            fig_hue(f->value, lo, hi, report_html_txn(c->test_name)));
    report_html_esc(out, title);
    fputs("\">", out);
    report_html_esc(out, f->text);
    if (f->sub[0]) {
        fputs("<br><small>", out);
        report_html_esc(out, f->sub);
        fputs("</small>", out);
    }
    fputs(strcmp(c->status, "partial") ? "</td>" : " (partial)</td>", out);
}

/* The three colours of the scale and the values they stand for. */
static void mesh_legend(FILE *out, bool txn, double lo, double hi)
{
    static const double ratio[] = {1, 0.75, 0.5};
    static const char *const words[] = {"the best of this matrix", "through", "to half as good"};

    if (hi < lo) {
        fputs("<p class=\"note\">no cell of this test has results</p>\n", out);
        return;
    }
    fputs("<p class=\"meta\">Source down, destination across. Colour from", out);
    for (int i = 0; i < 3; i++) {
        char v[48];
        if (txn)
            snprintf(v, sizeof(v), "p50 %.1f us", lo / ratio[i]);
        else
            units_format_rate(hi * ratio[i], v, sizeof(v));
        fprintf(out,
                " %s <span class=\"swatch\" style=\"background:hsl(%.0f,70%%,78%%)\">%s"
                "%s</span>",
                words[i], 120 * (ratio[i] - 0.5) / 0.5, v,
                i < 2 ? ""
                : txn ? " or more"
                      : " or less");
    }
    fputs("; failed cells are grey, with the reason in their tooltip.</p>\n", out);
}

struct mesh_page {
    struct store *st;
    const struct store_mesh_cell *cells;
    uint32_t ncells, nhosts;
    const cJSON *hosts, *tests;
};

static const char *host_name(const struct mesh_page *pg, uint32_t i)
{
    const cJSON *n =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(pg->hosts, (int)i), "name");

    return cJSON_IsString(n) ? n->valuestring : "?";
}

/* One test's matrix; at[s * nhosts + d] is the cell index of source s, destination d. */
static void mesh_matrix(FILE *out, const struct mesh_page *pg, uint32_t t, int32_t *at,
                        struct cell_fig *figs)
{
    const cJSON *params = cJSON_GetArrayItem(pg->tests, (int)t);
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(params, "test");
    bool txn = cJSON_IsString(kind) && report_html_txn(kind->valuestring);
    double lo = INFINITY, hi = -INFINITY;

    for (uint32_t i = 0; i < pg->nhosts * pg->nhosts; i++)
        at[i] = -1;
    for (uint32_t i = 0; i < pg->ncells; i++) {
        const struct store_mesh_cell *c = &pg->cells[i];
        if (c->test != t || c->src >= pg->nhosts || c->dst >= pg->nhosts)
            continue;
        at[c->src * pg->nhosts + c->dst] = (int32_t)i;
        cell_fig(pg->st, c, &figs[i]);
        if (figs[i].has)
            lo = fmin(lo, figs[i].value), hi = fmax(hi, figs[i].value);
    }
    fprintf(out, "<h2>Test %u: %s, %s</h2>\n", t + 1,
            cJSON_IsString(kind) ? kind->valuestring : "?",
            txn ? "latency p50 (colour) and transactions/s" : "throughput");
    params_rows(out, params);
    mesh_legend(out, txn, lo, hi);
    fputs("<table class=\"mesh\">\n<tr><th>source \\ destination</th>", out);
    for (uint32_t d = 0; d < pg->nhosts; d++) {
        fputs("<th>", out);
        report_html_esc(out, host_name(pg, d));
        fputs("</th>", out);
    }
    fputs("</tr>\n", out);
    for (uint32_t s = 0; s < pg->nhosts; s++) {
        fputs("<tr><th>", out);
        report_html_esc(out, host_name(pg, s));
        fputs("</th>", out);
        for (uint32_t d = 0; d < pg->nhosts; d++) {
            int32_t k = at[s * pg->nhosts + d];
            mesh_td(out, k < 0 ? NULL : &pg->cells[k], k < 0 ? NULL : &figs[k], lo, hi, s == d);
        }
        fputs("</tr>\n", out);
    }
    fputs("</table>\n", out);
}

static void mesh_cells_table(FILE *out, const struct mesh_page *pg, const struct cell_fig *figs)
{
    fputs("<h2>Cells</h2>\n<details><summary>every cell with its run</summary>\n<table>\n"
          "<tr><th>cell</th><th>test</th><th>source</th><th>destination</th><th>status</th>"
          "<th>result</th><th>run</th><th>error</th></tr>\n",
          out);
    for (uint32_t i = 0; i < pg->ncells; i++) {
        const struct store_mesh_cell *c = &pg->cells[i];
        fprintf(out, "<tr><td class=\"n\">%u</td><td>%u: %s</td><td>", c->idx + 1, c->test + 1,
                c->test_name);
        report_html_esc(out, c->source);
        fputs("</td><td>", out);
        report_html_esc(out, c->destination);
        fprintf(out, "</td><td>%s</td><td class=\"n\">", c->status);
        report_html_esc(out, figs[i].text);
        fputs(figs[i].sub[0] ? ", " : "", out);
        report_html_esc(out, figs[i].sub);
        if (c->run_id)
            fprintf(out, "</td><td class=\"n\">%lld</td><td>", (long long)c->run_id);
        else
            fputs("</td><td></td><td>", out);
        report_html_esc(out, c->error);
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n</details>\n<h2>Hosts</h2>\n<table>\n<tr><th>name</th><th>address</th>"
          "<th>port</th></tr>\n",
          out);
    for (uint32_t h = 0; h < pg->nhosts; h++) {
        const cJSON *o = cJSON_GetArrayItem(pg->hosts, (int)h);
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "address");
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "port");
        fputs("<tr><td>", out);
        report_html_esc(out, host_name(pg, h));
        fputs("</td><td>", out);
        report_html_esc(out, cJSON_IsString(a) ? a->valuestring : "");
        fprintf(out, "</td><td class=\"n\">%.0f</td></tr>\n",
                cJSON_IsNumber(p) ? p->valuedouble : 0);
    }
    fputs("</table>\n", out);
}

static void mesh_summary(FILE *out, const struct store_mesh *m)
{
    char buf[96];

    fputs("<table>\n", out);
    row2(out, "plan", m->plan);
    row2(out, "started (UTC)", m->started_at);
    row2(out, "status", m->status);
    if (m->finished_at[0])
        row2(out, "finished (UTC)", m->finished_at);
    row2(out, "schedule",
         m->parallel ? "every pair of a test at once (parallel)" : "no host in two tests at once");
    snprintf(buf, sizeof(buf), "%u, %u failed", m->ncells, m->nfailed);
    row2(out, "cells", buf);
    fputs("</table>\n", out);
}

int report_html_mesh(struct store *st, int64_t id, FILE *out, char *note, size_t notelen, char *err,
                     size_t errlen)
{
    struct store_mesh m;
    struct store_mesh_cell *cells = NULL;
    struct mesh_page pg = {.st = st};
    struct cell_fig *figs = NULL;
    int32_t *at = NULL;
    cJSON *hosts = NULL, *tests = NULL;
    const char *base;
    char title[1100];
    int rc = -1;

    (void)notelen;
    note[0] = '\0';
    if (store_mesh_get(st, id, &m, err, errlen) ||
        store_mesh_cells(st, id, &cells, &pg.ncells, err, errlen))
        goto out;
    hosts = cJSON_Parse(m.hosts);
    tests = cJSON_Parse(m.tests);
    pg.cells = cells, pg.hosts = hosts, pg.tests = tests;
    pg.nhosts = (uint32_t)cJSON_GetArraySize(hosts);
    if (!cJSON_IsArray(hosts) || !cJSON_IsArray(tests) || pg.nhosts > 1024) {
        snprintf(err, errlen, "mesh %lld in '%s': its hosts or tests are damaged", (long long)id,
                 store_path(st));
        goto out;
    }
    figs = calloc(pg.ncells ? pg.ncells : 1, sizeof(*figs));
    at = calloc(pg.nhosts ? (size_t)pg.nhosts * pg.nhosts : 1, sizeof(*at));
    if (!figs || !at) {
        snprintf(err, errlen, "out of memory drawing mesh %lld", (long long)id);
        goto out;
    }
    base = strrchr(m.plan, '/');
    snprintf(title, sizeof(title), "netrig mesh %lld: %s", (long long)id, base ? base + 1 : m.plan);
    head(out, title, st);
    mesh_summary(out, &m);
    for (uint32_t t = 0; t < (uint32_t)cJSON_GetArraySize(tests); t++)
        mesh_matrix(out, &pg, t, at, figs);
    mesh_cells_table(out, &pg, figs);
    foot(out);
    rc = 0;
out:
    cJSON_Delete(hosts);
    cJSON_Delete(tests);
    free(cells);
    free(figs);
    free(at);
    store_mesh_free(&m);
    return rc;
}
