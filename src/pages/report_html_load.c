/* report_html_load: the time-series sections of a run's HTML report — a load run's verdict,
 * phases and advice with its latency CDF, and any run's per-flow cwnd and RTT over time. */
#include "report_html_priv.h"

#include "load_result.h"
#include "result_json.h"
#include "units.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static double num(const cJSON *o, const char *path)
{
    o = result_json_at(o, path);
    return cJSON_IsNumber(o) ? o->valuedouble : 0;
}

/* A non-empty string member, else "-". */
static const char *text(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : "-";
}

static void cell_ms(FILE *out, double us)
{
    if (us > 0)
        fprintf(out, "<td class=\"n\">%.3g</td>", us / 1e3);
    else
        fputs("<td class=\"n\">-</td>", out);
}

static void cell_rate(FILE *out, double bps)
{
    char r[32] = "-";

    if (bps > 0)
        units_format_rate(bps, r, sizeof(r));
    fprintf(out, "<td class=\"n\">%s</td>", r);
}

static void phases_table(FILE *out, const cJSON *doc)
{
    const cJSON *ph;

    fputs("<table>\n<tr><th>phase</th><th>time (s)</th><th>UDP p50 (ms)</th><th>p90</th>"
          "<th>p99</th><th>max</th><th>UDP lost</th><th>TCP p50 (ms)</th><th>up</th>"
          "<th>down</th></tr>\n",
          out);
    cJSON_ArrayForEach(ph, cJSON_GetObjectItemCaseSensitive(doc, "phases"))
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(ph, "name");
        fputs("<tr><td>", out);
        report_html_esc(out, cJSON_IsString(name) ? name->valuestring : "?");
        fprintf(out, "</td><td class=\"n\">%.1f-%.1f</td>", num(ph, "start_s"), num(ph, "end_s"));
        cell_ms(out, num(ph, "udp_probe.latency_us.p50"));
        cell_ms(out, num(ph, "udp_probe.latency_us.p90"));
        cell_ms(out, num(ph, "udp_probe.latency_us.p99"));
        cell_ms(out, num(ph, "udp_probe.latency_us.max"));
        fprintf(out, "<td class=\"n\">%.1f %%</td>", num(ph, "udp_probe.loss_pct"));
        cell_ms(out, num(ph, "tcp_probe.latency_us.p50"));
        cell_rate(out, num(ph, "up_bps"));
        cell_rate(out, num(ph, "down_bps"));
        fputs("</tr>\n", out);
    }
    fputs("</table>\n", out);
}

/* --classes: each class's probe latency idle and loaded, its increase and its goodput. */
static void classes_table(FILE *out, const cJSON *doc)
{
    const cJSON *c;

    if (!cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "classes")))
        return;
    fputs("<h3>Classes</h3>\n<p>Each class's UDP probe and TCP flow, marked on both ends; "
          "throughput: the receiver's view.</p>\n<table>\n<tr><th>class</th><th>DSCP</th>"
          "<th>idle p50 (ms)</th><th>loaded p50 (ms)</th><th>p99</th><th>increase (ms)</th>"
          "<th>lost</th><th>up</th><th>down</th></tr>\n",
          out);
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "classes"))
    {
        const cJSON *inc = cJSON_GetObjectItemCaseSensitive(c, "increase_p50_us");
        fputs("<tr><td>", out);
        report_html_esc(out, text(c, "name"));
        fprintf(out, "</td><td class=\"n\">%.0f</td>", num(c, "dscp"));
        cell_ms(out, num(c, "phases.baseline.latency_us.p50"));
        cell_ms(out, num(c, "phases.loaded.latency_us.p50"));
        cell_ms(out, num(c, "phases.loaded.latency_us.p99"));
        if (cJSON_IsNumber(inc))
            fprintf(out, "<td class=\"n\">%+.1f</td>", load_ms_shown(inc->valuedouble));
        else
            fputs("<td class=\"n\">-</td>", out);
        fprintf(out, "<td class=\"n\">%.1f %%</td>", num(c, "phases.loaded.loss_pct"));
        cell_rate(out, num(c, "up_bps"));
        cell_rate(out, num(c, "down_bps"));
        fputs("</tr>\n", out);
    }
    fputs("</table>\n", out);
}

static void strings(FILE *out, const cJSON *doc, const char *key, const char *cls)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(doc, key), *x;

    if (!cJSON_GetArraySize(a))
        return;
    fputs("<ul>\n", out);
    cJSON_ArrayForEach(x, a) if (cJSON_IsString(x))
    {
        fprintf(out, "<li%s>", cls);
        report_html_esc(out, x->valuestring);
        fputs("</li>\n", out);
    }
    fputs("</ul>\n", out);
}

static void verdict(FILE *out, const cJSON *doc)
{
    const cJSON *inc = cJSON_GetObjectItemCaseSensitive(doc, "latency_increase");
    const cJSON *band = cJSON_GetObjectItemCaseSensitive(inc, "band");
    const cJSON *words = cJSON_GetObjectItemCaseSensitive(inc, "verdict");
    const cJSON *cc = cJSON_GetObjectItemCaseSensitive(doc, "congestion");
    char line[400];

    fputs("<h2>Latency under load</h2>\n<p>", out);
    if (cJSON_IsString(band)) {
        snprintf(line, sizeof(line), "%+.1f ms at the median, %+.1f ms at p99: %s (%s)",
                 load_ms_shown(num(inc, "p50_us")), load_ms_shown(num(inc, "p99_us")),
                 band->valuestring, cJSON_IsString(words) ? words->valuestring : "");
        fputs("<strong>", out);
        report_html_esc(out, line);
        fputs("</strong>", out);
    } else {
        fputs("not judged", out);
    }
    snprintf(line, sizeof(line), ". Congestion control of the load: %s up, %s down.",
             text(cc, "up"), text(cc, "down"));
    report_html_esc(out, line);
    fputs("</p>\n", out);
    phases_table(out, doc);
    classes_table(out, doc);
    fputs("<h3>Advice</h3>\n", out);
    strings(out, doc, "advice", "");
    strings(out, doc, "warnings", " class=\"note\"");
}

void report_html_series(FILE *out, struct store *st, const struct store_run *r, char *note,
                        size_t notelen)
{
    struct plot_out po = {PLOT_SVG, NULL, NULL};
    char perr[512];
    int rc;

    if (!strcmp(r->test, "load")) {
        char *text = store_run_document(st, r->id);
        cJSON *doc = text ? cJSON_Parse(text) : NULL;
        free(text);
        verdict(out, doc);
        cJSON_Delete(doc);
        fputs("<h2>Probe latency, idle and under load</h2>\n", out);
        rc = plot_run_chart(st, r->id, PLOT_CHART_CDF, &po, perr, sizeof(perr));
        report_html_chart(out, &po, rc, perr, note, notelen);
    }
    rc = plot_run_chart(st, r->id, PLOT_CHART_FLOWS, &po, perr, sizeof(perr));
    if (rc && strstr(perr, "no TCP_INFO samples"))
        return; /* a run without them: nothing to show */
    fputs("<h2>TCP flows over time</h2>\n", out);
    report_html_chart(out, &po, rc, perr, note, notelen);
}
