/* compare: metric-by-metric comparison of two sets of stored runs, with what was compared
 * (compare_params.c) and the host settings that differ (compare_host.c), as text and JSON. */
#include "compare.h"

#include "store_run.h"
#include "store_tune.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int compare_join(char **list, const char *v)
{
    size_t n = strlen(v), have = *list ? strlen(*list) : 0;
    char *grown;

    for (const char *p = *list; p;) {
        if (!strncmp(p, v, n) && (p[n] == '\0' || !strncmp(p + n, " | ", 3)))
            return 0;
        p = strstr(p, " | ");
        if (p)
            p += 3;
    }
    grown = realloc(*list, have + n + 4);
    if (!grown)
        return -ENOMEM;
    snprintf(grown + have, n + 4, "%s%s", have ? " | " : "", v);
    *list = grown;
    return 1;
}

int compare_warn(struct compare_result *c, const char *kind, const char *fmt, ...)
{
    struct compare_warning *w = realloc(c->warnings, (c->nwarnings + 1) * sizeof(*w));
    va_list ap;
    char buf[1024];

    if (!w)
        return -ENOMEM;
    c->warnings = w;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    w[c->nwarnings].kind = kind;
    w[c->nwarnings].message = strdup(buf);
    if (!w[c->nwarnings].message)
        return -ENOMEM;
    c->nwarnings++;
    return 0;
}

/* The values of one metric over a set (runs lacking it are skipped). */
static void collect(struct store *st, const int64_t *ids, size_t n, const char *name, double *v,
                    struct stats_sample *s)
{
    size_t k = 0;

    for (size_t i = 0; i < n; i++)
        if (!store_run_metric(st, ids[i], name, &v[k]))
            k++;
    stats_describe(v, k, s);
}

double compare_change_pct(double a, double b) { return a > 0 && b >= 0 ? (b - a) / a * 100 : NAN; }

/* A cost metric and the same counting netrig's own CPU; scale turns the own figure into the
 * metric's unit (ns per byte = cores per 10 Gbit/s x 0.8). */
static const struct {
    const char *name, *own;
    double scale;
} own_cost[] = {
    {"local_cores_per_10g", "local_own_cores_per_10g", 1},
    {"remote_cores_per_10g", "remote_own_cores_per_10g", 1},
    {"local_cpu_ns_per_byte", "local_own_cores_per_10g", 0.8},
    {"remote_cpu_ns_per_byte", "remote_own_cores_per_10g", 0.8},
    {"local_cpu_us_per_txn", "local_own_cpu_us_per_txn", 1},
    {"remote_cpu_us_per_txn", "remote_own_cpu_us_per_txn", 1},
};

/* How many runs of a set have metric name. */
static size_t count_with(struct store *st, const int64_t *ids, size_t n, const char *name)
{
    size_t k = 0;
    double v;

    for (size_t i = 0; i < n; i++)
        k += !store_run_metric(st, ids[i], name, &v);
    return k;
}

/* A cost row compares like with like: netrig's own CPU when every run has it (a busy host's
 * other work does not count), the whole machine's when no run has it (runs of an older
 * netrig); a mix is not comparable and its rows are left out with a warning. Returns the own
 * metric's index in own_cost, -1 for the metric as stored, -2 to leave the row out. */
static int cost_basis(struct store *st, struct compare_result *c, const char *name)
{
    for (size_t i = 0; i < sizeof(own_cost) / sizeof(own_cost[0]); i++) {
        size_t k;
        if (strcmp(own_cost[i].name, name))
            continue;
        k = count_with(st, c->a, c->na, own_cost[i].own) +
            count_with(st, c->b, c->nb, own_cost[i].own);
        if (k == c->na + c->nb)
            return (int)i;
        if (k == 0)
            return -1;
        if (!c->cost_mixed) {
            c->cost_mixed = true;
            compare_warn(c, "cpu_basis",
                         "CPU cost not comparable: %zu of the %zu runs measured netrig's own CPU, "
                         "the others only the whole machine's (an older netrig or peer), which "
                         "counts whatever else ran; cost rows left out",
                         k, c->na + c->nb);
        }
        return -2;
    }
    return -1;
}

static void collect_scaled(struct store *st, const int64_t *ids, size_t n, const char *name,
                           double scale, double *v, struct stats_sample *s)
{
    size_t k = 0;

    for (size_t i = 0; i < n; i++)
        if (!store_run_metric(st, ids[i], name, &v[k]))
            v[k++] *= scale;
    stats_describe(v, k, s);
}

static void compare_metrics(struct store *st, struct compare_result *c, double *va, double *vb)
{
    size_t nd;
    const struct metric_def *defs = metric_all(&nd);

    for (size_t i = 0; i < nd && c->nrows < METRIC_MAX; i++) {
        struct compare_row *r = &c->rows[c->nrows];
        int own;

        if (strstr(defs[i].name, "_own_")) /* compared as the cost rows' basis */
            continue;
        own = cost_basis(st, c, defs[i].name);
        if (own == -2)
            continue;
        if (own >= 0) {
            collect_scaled(st, c->a, c->na, own_cost[own].own, own_cost[own].scale, va, &r->a);
            collect_scaled(st, c->b, c->nb, own_cost[own].own, own_cost[own].scale, vb, &r->b);
        } else {
            collect(st, c->a, c->na, defs[i].name, va, &r->a);
            collect(st, c->b, c->nb, defs[i].name, vb, &r->b);
        }
        if (!r->a.n || !r->b.n)
            continue;
        r->def = &defs[i];
        r->own_basis = own >= 0;
        r->change_pct = compare_change_pct(r->a.mean, r->b.mean);
        stats_welch(&r->a, &r->b, &r->w);
        r->significant = r->w.valid && r->w.p < 1 - COMPARE_LEVEL;
        c->nrows++;
    }
}

/* The distinct verdicts of the diagnoses among ids (the document's diagnose.verdict.id). */
static int collect_verdicts(struct store *st, const int64_t *ids, size_t n, char **out)
{
    int rc = 0;

    for (size_t i = 0; i < n && rc >= 0; i++) {
        char *text = store_run_document(st, ids[i]);
        cJSON *doc = text ? cJSON_Parse(text) : NULL;
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(doc, "diagnose");
        const cJSON *id =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(d, "verdict"), "id");
        if (cJSON_IsString(id))
            rc = compare_join(out, id->valuestring);
        cJSON_Delete(doc);
        free(text);
    }
    return rc < 0 ? rc : 0;
}

static int add_tune(const struct store_tune *t, void *arg)
{
    struct compare_result *c = arg;
    struct compare_tune *n = realloc(c->tunes, (c->ntunes + 1) * sizeof(*n)), *x;
    char ino[40] = "";

    if (!n)
        return -ENOMEM;
    c->tunes = n;
    x = &n[c->ntunes];
    memset(x, 0, sizeof(*x));
    snprintf(x->applied_at, sizeof(x->applied_at), "%s", t->applied_at);
    snprintf(x->target, sizeof(x->target), "%s", t->target);
    if (t->netns_inode)
        snprintf(ino, sizeof(ino), "inode %llu", t->netns_inode);
    snprintf(x->where, sizeof(x->where), "network namespace %s%s(%s) on host %s", t->netns_name,
             t->netns_name[0] ? " " : "", ino[0] ? ino : "inode unknown",
             t->host[0] ? t->host : "(unknown)");
    x->changes = strdup(t->changes ? t->changes : "[]");
    if (!x->changes)
        return -ENOMEM;
    c->ntunes++;
    return 0;
}

void compare_tune_changes(const struct compare_tune *t, char *buf, size_t len)
{
    cJSON *arr = cJSON_Parse(t->changes), *e;
    size_t at = 0;

    buf[0] = '\0';
    cJSON_ArrayForEach(e, arr)
    {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(e, "old");
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(e, "new");
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(e, "result");
        bool applied = cJSON_IsString(r) && !strcmp(r->valuestring, "applied");
        int k = snprintf(
            buf + at, len - at, "%s%s %s -> %s%s%s%s", at ? "; " : "",
            cJSON_IsString(n) ? n->valuestring : "?", cJSON_IsString(a) ? a->valuestring : "(none)",
            cJSON_IsString(b) ? b->valuestring : "?", applied ? "" : " (",
            applied ? "" : (cJSON_IsString(r) ? r->valuestring : "?"), applied ? "" : ")");
        if (k < 0 || (size_t)k >= len - at)
            break;
        at += (size_t)k;
    }
    cJSON_Delete(arr);
}

/* The tune journals recorded between the sets: from A's last start to B's first (whole
 * seconds: an apply in the second B started counts). */
static int collect_tunes(struct store *st, struct compare_result *c)
{
    char from[32] = "", to[32] = "", err[256];
    struct store_run r;

    for (size_t i = 0; i < c->na; i++)
        if (!store_run_get(st, c->a[i], &r, err, sizeof(err)) && strcmp(r.started_at, from) > 0)
            snprintf(from, sizeof(from), "%s", r.started_at);
    for (size_t i = 0; i < c->nb; i++)
        if (!store_run_get(st, c->b[i], &r, err, sizeof(err)) &&
            (!to[0] || strcmp(r.started_at, to) < 0))
            snprintf(to, sizeof(to), "%s", r.started_at);
    if (!from[0] || !to[0] || strcmp(from, to) > 0)
        return 0;
    /* a store from before schema v7 has no such table: nothing to name */
    return store_tune_between(st, from, to, add_tune, c, err, sizeof(err)) == -ENOMEM ? -ENOMEM : 0;
}

int compare_sets(struct store *st, const int64_t *a, size_t na, const int64_t *b, size_t nb,
                 unsigned flags, struct compare_result *out, char *err, size_t errlen)
{
    double *va = calloc(na + 1, sizeof(double)), *vb = calloc(nb + 1, sizeof(double));
    int rc = va && vb ? 0 : -ENOMEM;

    memset(out, 0, sizeof(*out));
    out->a = a, out->na = na, out->b = b, out->nb = nb;
    if (!rc)
        rc = compare_params(st, out, flags, err, errlen);
    if (!rc) {
        compare_metrics(st, out, va, vb);
        rc = compare_host(st, out);
    }
    if (!rc)
        rc = collect_verdicts(st, a, na, &out->verdict[0]);
    if (!rc)
        rc = collect_verdicts(st, b, nb, &out->verdict[1]);
    if (!rc)
        rc = collect_tunes(st, out);
    if (rc == -ENOMEM)
        snprintf(err, errlen, "out of memory comparing runs");
    free(va), free(vb);
    if (rc)
        compare_free(out);
    return rc;
}

void compare_free(struct compare_result *c)
{
    compare_params_free(c);
    compare_host_free(c);
    for (int i = 0; i < 2; i++) {
        free(c->verdict[i]);
        c->verdict[i] = NULL;
    }
    for (size_t i = 0; i < c->ntunes; i++)
        free(c->tunes[i].changes);
    free(c->tunes);
    c->tunes = NULL;
    c->ntunes = 0;
    for (size_t i = 0; i < c->nwarnings; i++)
        free(c->warnings[i].message);
    free(c->warnings);
    c->warnings = NULL;
    c->nwarnings = 0;
}

const char *compare_verdict(const struct compare_row *r)
{
    if (!r->significant || r->b.mean == r->a.mean)
        return "";
    return (r->b.mean > r->a.mean) == r->def->higher_is_better ? "better" : "worse";
}

/* ---- JSON ---- */

static cJSON *side_json(const struct stats_sample *s)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "n", (double)s->n);
    cJSON_AddNumberToObject(o, "mean", s->mean);
    cJSON_AddNumberToObject(o, "sd", s->sd);
    return o;
}

static cJSON *ids_json(const int64_t *ids, size_t n)
{
    cJSON *a = cJSON_CreateArray();

    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)ids[i]));
    return a;
}

static cJSON *row_json(const struct compare_row *r)
{
    cJSON *m = cJSON_CreateObject();

    cJSON_AddStringToObject(m, "name", r->def->name);
    cJSON_AddStringToObject(m, "unit", metric_unit_name(r->def->unit));
    cJSON_AddBoolToObject(m, "higher_is_better", r->def->higher_is_better);
    if (r->own_basis)
        cJSON_AddStringToObject(m, "cpu_basis", "own");
    cJSON_AddItemToObject(m, "a", side_json(&r->a));
    cJSON_AddItemToObject(m, "b", side_json(&r->b));
    if (isnan(r->change_pct))
        cJSON_AddNullToObject(m, "change_pct");
    else
        cJSON_AddNumberToObject(m, "change_pct", r->change_pct);
    if (r->w.valid) {
        cJSON *t = cJSON_AddObjectToObject(m, "welch");
        cJSON_AddNumberToObject(t, "t", isfinite(r->w.t) ? r->w.t : (r->w.t > 0 ? 1e308 : -1e308));
        cJSON_AddNumberToObject(t, "df", r->w.df);
        cJSON_AddNumberToObject(t, "p", r->w.p);
    } else {
        cJSON_AddNullToObject(m, "welch");
    }
    cJSON_AddBoolToObject(m, "significant", r->significant);
    cJSON_AddStringToObject(m, "verdict", compare_verdict(r));
    return m;
}

static void params_json(cJSON *o, const struct compare_result *c)
{
    cJSON *arr = cJSON_AddArrayToObject(o, "parameters");

    for (size_t i = 0; i < c->nparams; i++) {
        cJSON *p = cJSON_CreateObject();
        cJSON_AddStringToObject(p, "name", c->params[i].name);
        cJSON_AddStringToObject(p, "label", c->params[i].label);
        cJSON_AddStringToObject(p, "a", c->params[i].a);
        cJSON_AddStringToObject(p, "b", c->params[i].b);
        cJSON_AddBoolToObject(p, "mixed", c->params[i].mixed);
        cJSON_AddItemToArray(arr, p);
    }
    arr = cJSON_AddArrayToObject(o, "warnings");
    for (size_t i = 0; i < c->nwarnings; i++) {
        cJSON *w = cJSON_CreateObject();
        cJSON_AddStringToObject(w, "kind", c->warnings[i].kind);
        cJSON_AddStringToObject(w, "message", c->warnings[i].message);
        cJSON_AddItemToArray(arr, w);
    }
}

static void hosts_json(cJSON *o, const struct compare_result *c)
{
    cJSON *diffs = cJSON_AddArrayToObject(o, "host_differences");
    cJSON *sides = cJSON_AddObjectToObject(o, "hosts");

    for (int s = 0; s < 2; s++) {
        const struct compare_side *sd = &c->side[s];
        cJSON *so = cJSON_AddObjectToObject(sides, sd->name), *miss;
        for (size_t i = 0; i < sd->ndiff; i++) {
            cJSON *h = cJSON_CreateObject();
            cJSON_AddStringToObject(h, "side", sd->name);
            cJSON_AddStringToObject(h, "key", sd->diff[i].key);
            cJSON_AddStringToObject(h, "a", sd->diff[i].a);
            cJSON_AddStringToObject(h, "b", sd->diff[i].b);
            cJSON_AddItemToArray(diffs, h);
        }
        cJSON_AddBoolToObject(so, "compared", sd->compared);
        cJSON_AddNumberToObject(so, "differences", (double)sd->ndiff);
        cJSON_AddNumberToObject(so, "not_compared_settings", (double)sd->unrecorded);
        miss = cJSON_AddArrayToObject(so, "not_recorded");
        for (size_t i = 0; i < sd->nmissing; i++) {
            cJSON *m = cJSON_CreateObject();
            cJSON_AddNumberToObject(m, "run", (double)sd->missing[i].run);
            cJSON_AddStringToObject(m, "set", sd->missing[i].set == 'a' ? "a" : "b");
            cJSON_AddStringToObject(m, "reason", sd->missing[i].note);
            cJSON_AddItemToArray(miss, m);
        }
    }
}

cJSON *compare_json(const struct compare_result *c, const char *name_a, const char *name_b)
{
    cJSON *o = cJSON_CreateObject(), *x, *arr;

    x = cJSON_AddObjectToObject(o, "a");
    cJSON_AddStringToObject(x, "name", name_a);
    cJSON_AddItemToObject(x, "runs", ids_json(c->a, c->na));
    x = cJSON_AddObjectToObject(o, "b");
    cJSON_AddStringToObject(x, "name", name_b);
    cJSON_AddItemToObject(x, "runs", ids_json(c->b, c->nb));
    cJSON_AddNumberToObject(o, "confidence", COMPARE_LEVEL);
    params_json(o, c);
    x = cJSON_AddObjectToObject(o, "diagnose");
    for (int i = 0; i < 2; i++)
        if (c->verdict[i])
            cJSON_AddStringToObject(x, i ? "b" : "a", c->verdict[i]);
        else
            cJSON_AddNullToObject(x, i ? "b" : "a");
    arr = cJSON_AddArrayToObject(o, "tune_between");
    for (size_t i = 0; i < c->ntunes; i++) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "applied_at", c->tunes[i].applied_at);
        cJSON_AddStringToObject(t, "where", c->tunes[i].where);
        cJSON_AddStringToObject(t, "target", c->tunes[i].target);
        cJSON_AddItemToObject(t, "changes", cJSON_Parse(c->tunes[i].changes));
        cJSON_AddItemToArray(arr, t);
    }
    arr = cJSON_AddArrayToObject(o, "metrics");
    for (size_t i = 0; i < c->nrows; i++)
        cJSON_AddItemToArray(arr, row_json(&c->rows[i]));
    hosts_json(o, c);
    return o;
}

/* ---- text ---- */

static void side_line(FILE *out, const char *tag, const char *name, const int64_t *ids, size_t n)
{
    fprintf(out, "%s: %s (%zu run%s:", tag, name, n, n == 1 ? "" : "s");
    for (size_t i = 0; i < n && i < 12; i++)
        fprintf(out, " %lld", (long long)ids[i]);
    fprintf(out, "%s)\n", n > 12 ? " ..." : "");
}

static void params_text(const struct compare_result *c, FILE *out)
{
    if (!c->nparams)
        fputs("parameters: no differences\n", out);
    else
        fputs("parameters that differ (A -> B):\n", out);
    for (size_t i = 0; i < c->nparams; i++)
        fprintf(out, "  %-22s %s -> %s\n", c->params[i].label, c->params[i].a, c->params[i].b);
    for (size_t i = 0; i < c->nwarnings; i++)
        fprintf(out, "warning: %s\n", c->warnings[i].message);
}

static void metrics_text(const struct compare_result *c, FILE *out)
{
    char va[48], vb[48], chg[24], sig[48];
    bool own = false;

    fprintf(out, "%-20s %15s %15s %9s  %s\n", "metric", "A", "B", "change", "Welch t-test, 95%");
    for (size_t i = 0; i < c->nrows; i++) {
        const struct compare_row *r = &c->rows[i];
        metric_format(r->def, r->a.mean, va, sizeof(va));
        metric_format(r->def, r->b.mean, vb, sizeof(vb));
        if (isnan(r->change_pct))
            snprintf(chg, sizeof(chg), "-");
        else
            snprintf(chg, sizeof(chg), "%+.1f%%", r->change_pct);
        if (!r->w.valid)
            snprintf(sig, sizeof(sig), "- (one run each)");
        else
            snprintf(sig, sizeof(sig), "%s (p=%.3g)%s%s",
                     r->significant ? "significant" : "not significant", r->w.p,
                     *compare_verdict(r) ? ", " : "", compare_verdict(r));
        fprintf(out, "%-20s %15s %15s %9s  %s\n", r->def->label, va, vb, chg, sig);
        own |= r->own_basis;
    }
    if (own)
        fputs("CPU cost rows count netrig's own CPU (its process, user + system) on both sides, "
              "not the whole machine's: other work on a host does not show as a change\n",
              out);
}

/* "run 3 (why), runs 4, 5 (why)": the runs of a side that was not recorded, by reason. */
static void missing_text(const struct compare_side *sd, FILE *out)
{
    for (size_t i = 0; i < sd->nmissing; i++) {
        const struct compare_missing *m = &sd->missing[i];
        size_t same = 0;
        bool first = true;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(sd->missing[j].note, m->note))
                first = false;
        if (!first)
            continue;
        for (size_t j = i; j < sd->nmissing; j++)
            same += !strcmp(sd->missing[j].note, m->note);
        fprintf(out, "%s run%s", i ? ";" : "", same > 1 ? "s" : "");
        for (size_t j = i, k = 0; j < sd->nmissing; j++)
            if (!strcmp(sd->missing[j].note, m->note))
                fprintf(out, "%s %lld", k++ ? "," : "", (long long)sd->missing[j].run);
        fprintf(out, ": %s", m->note[0] ? m->note : "reason unknown");
    }
}

static void host_text(const struct compare_side *sd, FILE *out)
{
    if (!sd->compared) {
        fprintf(out, "%s host settings: not compared, not recorded for", sd->name);
        missing_text(sd, out);
        fputc('\n', out);
        return;
    }
    if (!sd->ndiff)
        fprintf(out, "%s host settings: no differences\n", sd->name);
    else
        fprintf(out, "%s host settings that differ (A -> B):\n", sd->name);
    for (size_t i = 0; i < sd->ndiff; i++)
        fprintf(out, "  %-40s %s -> %s\n", sd->diff[i].key,
                sd->diff[i].a[0] ? sd->diff[i].a : "(none)",
                sd->diff[i].b[0] ? sd->diff[i].b : "(none)");
    if (sd->nmissing) {
        fprintf(out, "  (not recorded for");
        missing_text(sd, out);
        fputs(")\n", out);
    }
    if (sd->unrecorded)
        fprintf(out, "  (%zu setting%s only a newer netrig records: not compared)\n",
                sd->unrecorded, sd->unrecorded == 1 ? "" : "s");
}

/* What netrig tune --apply changed between the sets, one line per applied change. */
static void tunes_text(const struct compare_result *c, FILE *out)
{
    for (size_t i = 0; i < c->ntunes; i++) {
        const struct compare_tune *t = &c->tunes[i];
        cJSON *arr = cJSON_Parse(t->changes), *e;
        fprintf(out, "tune applied between A and B: %s, in %s, for %s:\n", t->applied_at, t->where,
                t->target);
        cJSON_ArrayForEach(e, arr)
        {
            const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
            const cJSON *a = cJSON_GetObjectItemCaseSensitive(e, "old");
            const cJSON *b = cJSON_GetObjectItemCaseSensitive(e, "new");
            const cJSON *r = cJSON_GetObjectItemCaseSensitive(e, "result");
            fprintf(out, "  %-40s %s -> %s (%s)\n", cJSON_IsString(n) ? n->valuestring : "?",
                    cJSON_IsString(a) ? a->valuestring : "(none)",
                    cJSON_IsString(b) ? b->valuestring : "?",
                    cJSON_IsString(r) ? r->valuestring : "?");
        }
        cJSON_Delete(arr);
    }
}

void compare_text(const struct compare_result *c, const char *name_a, const char *name_b, FILE *out)
{
    side_line(out, "A", name_a, c->a, c->na);
    side_line(out, "B", name_b, c->b, c->nb);
    if (c->verdict[0] || c->verdict[1])
        fprintf(out, "diagnose verdict (A -> B): %s -> %s\n",
                c->verdict[0] ? c->verdict[0] : "(not a diagnosis)",
                c->verdict[1] ? c->verdict[1] : "(not a diagnosis)");
    params_text(c, out);
    tunes_text(c, out);
    metrics_text(c, out);
    host_text(&c->side[0], out);
    host_text(&c->side[1], out);
}
