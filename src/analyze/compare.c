/* compare: metric-by-metric and host-by-host comparison of two sets of stored runs. */
#include "compare.h"

#include "store_run.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

static void compare_metrics(struct store *st, struct compare_result *c, double *va, double *vb)
{
    size_t nd;
    const struct metric_def *defs = metric_all(&nd);

    for (size_t i = 0; i < nd && c->nrows < METRIC_MAX; i++) {
        struct compare_row *r = &c->rows[c->nrows];
        collect(st, c->a, c->na, defs[i].name, va, &r->a);
        collect(st, c->b, c->nb, defs[i].name, vb, &r->b);
        if (!r->a.n || !r->b.n)
            continue;
        r->def = &defs[i];
        r->change_pct = r->a.mean != 0 ? (r->b.mean - r->a.mean) / fabs(r->a.mean) * 100 : NAN;
        stats_welch(&r->a, &r->b, &r->w);
        r->significant = r->w.valid && r->w.p < 1 - COMPARE_LEVEL;
        c->nrows++;
    }
}

/* Is v one of the " | "-separated values in list? */
static bool has_value(const char *list, const char *v)
{
    size_t n = strlen(v);

    for (const char *p = list; p;) {
        if (!strncmp(p, v, n) && (p[n] == '\0' || !strncmp(p + n, " | ", 3)))
            return true;
        p = strstr(p, " | ");
        if (p)
            p += 3;
    }
    return false;
}

/* A set's settings: each key's distinct values joined with " | ". */
static void merge_hosts(struct store *st, const int64_t *ids, size_t n, struct hostsnap *acc,
                        struct hostsnap *tmp)
{
    hostsnap_clear(acc);
    for (size_t i = 0; i < n; i++) {
        store_run_host(st, ids[i], tmp);
        for (uint32_t k = 0; k < tmp->n; k++) {
            const char *cur = hostsnap_get(acc, tmp->e[k].key);
            char joined[HOSTSNAP_VAL_LEN * 2 + 4];
            if (!cur) {
                if (i == 0)
                    hostsnap_set(acc, tmp->e[k].key, tmp->e[k].value);
                continue;
            }
            if (has_value(cur, tmp->e[k].value))
                continue;
            snprintf(joined, sizeof(joined), "%s | %s", cur, tmp->e[k].value);
            hostsnap_set(acc, tmp->e[k].key, joined);
        }
    }
}

static void add_diff(const char *key, const char *va, const char *vb, void *arg)
{
    struct compare_result *c = arg;
    struct compare_host *h = &c->host[c->nhost++];

    snprintf(h->key, sizeof(h->key), "%s", key);
    snprintf(h->a, sizeof(h->a), "%s", va ? va : "");
    snprintf(h->b, sizeof(h->b), "%s", vb ? vb : "");
}

int compare_sets(struct store *st, const int64_t *a, size_t na, const int64_t *b, size_t nb,
                 struct compare_result *out, char *err, size_t errlen)
{
    double *va = calloc(na + 1, sizeof(double)), *vb = calloc(nb + 1, sizeof(double));
    struct hostsnap *ha = malloc(sizeof(*ha)), *hb = malloc(sizeof(*hb));
    struct hostsnap *tmp = malloc(sizeof(*tmp));
    int rc = 0;

    memset(out, 0, sizeof(*out));
    out->a = a, out->na = na, out->b = b, out->nb = nb;
    out->host = calloc(2 * HOSTSNAP_MAX, sizeof(*out->host));
    if (!va || !vb || !ha || !hb || !tmp || !out->host) {
        snprintf(err, errlen, "out of memory comparing runs");
        rc = -ENOMEM;
    } else {
        compare_metrics(st, out, va, vb);
        merge_hosts(st, a, na, ha, tmp);
        merge_hosts(st, b, nb, hb, tmp);
        hostsnap_diff(ha, hb, add_diff, out);
    }
    free(va), free(vb), free(ha), free(hb), free(tmp);
    if (rc)
        compare_free(out);
    return rc;
}

void compare_free(struct compare_result *c)
{
    free(c->host);
    c->host = NULL;
    c->nhost = 0;
}

const char *compare_verdict(const struct compare_row *r)
{
    if (!r->significant || r->b.mean == r->a.mean)
        return "";
    return (r->b.mean > r->a.mean) == r->def->higher_is_better ? "better" : "worse";
}

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
    arr = cJSON_AddArrayToObject(o, "metrics");
    for (size_t i = 0; i < c->nrows; i++) {
        const struct compare_row *r = &c->rows[i];
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "name", r->def->name);
        cJSON_AddStringToObject(m, "unit", metric_unit_name(r->def->unit));
        cJSON_AddBoolToObject(m, "higher_is_better", r->def->higher_is_better);
        cJSON_AddItemToObject(m, "a", side_json(&r->a));
        cJSON_AddItemToObject(m, "b", side_json(&r->b));
        if (isnan(r->change_pct))
            cJSON_AddNullToObject(m, "change_pct");
        else
            cJSON_AddNumberToObject(m, "change_pct", r->change_pct);
        if (r->w.valid) {
            cJSON *t = cJSON_AddObjectToObject(m, "welch");
            cJSON_AddNumberToObject(t, "t",
                                    isfinite(r->w.t) ? r->w.t : (r->w.t > 0 ? 1e308 : -1e308));
            cJSON_AddNumberToObject(t, "df", r->w.df);
            cJSON_AddNumberToObject(t, "p", r->w.p);
        } else {
            cJSON_AddNullToObject(m, "welch");
        }
        cJSON_AddBoolToObject(m, "significant", r->significant);
        cJSON_AddStringToObject(m, "verdict", compare_verdict(r));
        cJSON_AddItemToArray(arr, m);
    }
    arr = cJSON_AddArrayToObject(o, "host_differences");
    for (size_t i = 0; i < c->nhost; i++) {
        cJSON *h = cJSON_CreateObject();
        cJSON_AddStringToObject(h, "key", c->host[i].key);
        cJSON_AddStringToObject(h, "a", c->host[i].a);
        cJSON_AddStringToObject(h, "b", c->host[i].b);
        cJSON_AddItemToArray(arr, h);
    }
    return o;
}

static void side_line(FILE *out, const char *tag, const char *name, const int64_t *ids, size_t n)
{
    fprintf(out, "%s: %s (%zu run%s:", tag, name, n, n == 1 ? "" : "s");
    for (size_t i = 0; i < n && i < 12; i++)
        fprintf(out, " %lld", (long long)ids[i]);
    fprintf(out, "%s)\n", n > 12 ? " ..." : "");
}

void compare_text(const struct compare_result *c, const char *name_a, const char *name_b, FILE *out)
{
    char va[48], vb[48], chg[24], sig[48];

    side_line(out, "A", name_a, c->a, c->na);
    side_line(out, "B", name_b, c->b, c->nb);
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
    }
    if (!c->nhost) {
        fputs("host settings: no differences\n", out);
        return;
    }
    fputs("host settings that differ (A -> B):\n", out);
    for (size_t i = 0; i < c->nhost; i++)
        fprintf(out, "  %-40s %s -> %s\n", c->host[i].key,
                c->host[i].a[0] ? c->host[i].a : "(none)",
                c->host[i].b[0] ? c->host[i].b : "(none)");
}
