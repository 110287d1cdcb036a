/* report_html: self-contained HTML reports of stored runs, sweeps and comparisons. */
#include "report_html.h"

#include "compare.h"
#include "hostsnap.h"
#include "metric.h"
#include "plot.h"
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
    ".chart svg{max-width:100%;height:auto}details{margin:0.5em 0}";

static void esc(FILE *out, const char *s)
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
    esc(out, title);
    fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", css);
    esc(out, title);
    fprintf(out, "</h1>\n<p class=\"meta\">netrig %s report, made %s from ", NETRIG_VERSION, now);
    esc(out, store_path(st));
    fputs("</p>\n", out);
}

static void foot(FILE *out)
{
    fputs("</body>\n</html>\n", out);
}

/* A gnuplot SVG without its XML prologue, or a note saying why there is none. */
static void chart(FILE *out, struct plot_out *po, int rc, const char *err, char *note,
                  size_t notelen)
{
    const char *svg = po->svg ? strstr(po->svg, "<svg") : NULL;

    if (rc || !svg) {
        fputs("<p class=\"note\">chart not drawn: ", out);
        esc(out, rc ? err : "gnuplot wrote no SVG");
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
    esc(out, k);
    fputs("</th><td>", out);
    esc(out, v);
    fputs("</td></tr>\n", out);
}

static void host_table(FILE *out, struct store *st, int64_t id)
{
    struct hostsnap *hs = malloc(sizeof(*hs));

    if (!hs)
        return;
    store_run_host(st, id, hs);
    fprintf(out, "<h2>Host snapshot (run %lld)</h2>\n", (long long)id);
    if (!hs->n)
        fputs("<p class=\"note\">no host snapshot stored</p>\n", out);
    else
        fputs("<details open><summary>kernel, sysctls, CPU and interfaces</summary>\n"
              "<table>\n<tr><th>setting</th><th>value</th></tr>\n", out);
    for (uint32_t i = 0; i < hs->n; i++)
        row2(out, hs->e[i].key, hs->e[i].value);
    if (hs->n)
        fputs("</table>\n</details>\n", out);
    free(hs);
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
        esc(out, m[i].def->label);
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
    fprintf(out, "<tr><td class=\"n\">%u</td><td>%s</td><td class=\"n\">%llu</td>"
            "<td class=\"n\">%s</td>", f->flow, f->direction, (unsigned long long)f->bytes, rt);
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

static void params_table(FILE *out, struct store *st, int64_t id)
{
    char *text = store_run_document(st, id), v[320];
    cJSON *doc = text ? cJSON_Parse(text) : NULL, *p, *x;

    free(text);
    p = cJSON_GetObjectItemCaseSensitive(doc, "params");
    fputs("<details><summary>parameters</summary>\n<table>\n", out);
    cJSON_ArrayForEach(x, p) {
        if (cJSON_IsString(x))
            snprintf(v, sizeof(v), "%s", x->valuestring);
        else if (cJSON_IsBool(x))
            snprintf(v, sizeof(v), "%s", cJSON_IsTrue(x) ? "yes" : "no");
        else
            snprintf(v, sizeof(v), "%.10g", x->valuedouble);
        row2(out, x->string, v);
    }
    fputs("</table>\n</details>\n", out);
    cJSON_Delete(doc);
}

int report_html_run(struct store *st, int64_t id, FILE *out, char *note, size_t notelen,
                    char *err, size_t errlen)
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
    chart(out, &po, rc, perr, note, notelen);
    metrics_table(out, st, id);
    fputs("<h2>Flows</h2>\n<table>\n<tr><th>flow</th><th>direction</th><th>bytes</th>"
          "<th>rate</th><th>retransmits</th><th>RTT (us)</th><th>cwnd</th>"
          "<th>transactions</th></tr>\n", out);
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
    cJSON_ArrayForEach(v, o) {
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
    esc(out, label);
    fprintf(out, "</td><td>%s</td><td class=\"n\">%u</td><td class=\"n\">%s</td>"
            "<td class=\"n\">%s</td><td class=\"n\">%.2f</td><td>", p->status, p->runs,
            p->runs ? mean : "-", p->runs > 1 ? half : "-",
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
    chart(out, &po, rc, perr, note, notelen);
    fprintf(out, "<h2>Points</h2>\n<table>\n<tr><th>point</th><th>settings</th><th>status</th>"
            "<th>runs</th><th>mean</th><th>+- (%.4g%% CI)</th><th>+- %%</th><th>run ids</th>"
            "</tr>\n", sw.ci_level * 100);
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
          "<th>change</th><th>Welch p</th><th>95% verdict</th></tr>\n", out);
    for (size_t i = 0; i < c->nrows; i++) {
        const struct compare_row *r = &c->rows[i];
        const char *v = compare_verdict(r);
        metric_format(r->def, r->a.mean, va, sizeof(va));
        metric_format(r->def, r->b.mean, vb, sizeof(vb));
        fputs("<tr><td>", out);
        esc(out, r->def->label);
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
        fprintf(out, "<td class=\"%s\">%s</td></tr>\n", v, *v ? v
                : r->w.valid ? "no significant change" : "-");
    }
    fputs("</table>\n<h2>Host settings that differ</h2>\n", out);
    if (!c->nhost) {
        fputs("<p>none</p>\n", out);
        return;
    }
    fputs("<table>\n<tr><th>setting</th><th>A</th><th>B</th></tr>\n", out);
    for (size_t i = 0; i < c->nhost; i++) {
        fputs("<tr><td>", out);
        esc(out, c->host[i].key);
        fputs("</td><td>", out);
        esc(out, c->host[i].a[0] ? c->host[i].a : "(none)");
        fputs("</td><td>", out);
        esc(out, c->host[i].b[0] ? c->host[i].b : "(none)");
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n", out);
}

static void side_row(FILE *out, const char *tag, const char *name, const int64_t *ids, size_t n)
{
    fprintf(out, "<tr><th>%s</th><td>", tag);
    esc(out, name);
    fputs("</td><td>", out);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%lld", i ? ", " : "", (long long)ids[i]);
    fputs("</td></tr>\n", out);
}

int report_html_compare(struct store *st, const int64_t *a, size_t na, const char *name_a,
                        const int64_t *b, size_t nb, const char *name_b, FILE *out, char *note,
                        size_t notelen, char *err, size_t errlen)
{
    struct compare_result c;
    struct plot_out po = {PLOT_SVG, NULL, NULL};
    struct store_run r;
    char title[300], perr[512];
    int rc;

    note[0] = '\0';
    if (store_run_get(st, a[0], &r, err, errlen) ||
        compare_sets(st, a, na, b, nb, &c, err, errlen))
        return -1;
    snprintf(title, sizeof(title), "netrig comparison: %s against %s", name_b, name_a);
    head(out, title, st);
    fputs("<table>\n<tr><th></th><th>name</th><th>runs</th></tr>\n", out);
    side_row(out, "A", name_a, a, na);
    side_row(out, "B", name_b, b, nb);
    fputs("</table>\n<h2>Chart</h2>\n", out);
    rc = plot_compare(st, a, na, b, nb, metric_primary(r.test), &po, perr, sizeof(perr));
    chart(out, &po, rc, perr, note, notelen);
    compare_rows(out, &c);
    host_table(out, st, b[nb - 1]);
    foot(out);
    compare_free(&c);
    return 0;
}
