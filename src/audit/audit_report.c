/* audit_report: text and JSON renderings of an audit. */
#include "audit_report.h"

#include "audit.h"
#include "units.h"
#include "wrap.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define INDENT 8

static const char *status_colour(enum audit_status s)
{
    switch (s) {
    case AUDIT_OK: return "\033[32m";
    case AUDIT_INFO: return "\033[36m";
    case AUDIT_SKIPPED: return "\033[2m";
    case AUDIT_WARN: return "\033[33m";
    case AUDIT_BAD: return "\033[1;31m";
    default: return "";
    }
}

/* Prints prefix + text wrapped, after indent spaces; continuation lines indented two more. */
static void wrapped(FILE *out, int indent, const char *prefix, const char *text)
{
    char lead[64];

    snprintf(lead, sizeof(lead), "%*s%s", indent, "", prefix);
    wrap_print(out, lead, indent + 2, text);
}

#define LABEL_WIDTH 34

static void print_finding(FILE *out, const struct audit_finding *f, bool colour)
{
    char label[AUDIT_ID_LEN + IF_NAMESIZE + 4], value[2 * AUDIT_VALUE_LEN + 8];
    char status[8];
    bool change = f->recommended[0] && strcmp(f->recommended, f->current) && f->status != AUDIT_OK;

    snprintf(status, sizeof(status), "%s", audit_status_name(f->status));
    if (f->status == AUDIT_WARN || f->status == AUDIT_BAD)
        for (char *c = status; *c; c++)
            *c = (char)(*c - 'a' + 'A');
    if (f->iface[0])
        snprintf(label, sizeof(label), "%s [%s]", f->id, f->iface);
    else
        snprintf(label, sizeof(label), "%s", f->id);
    if (change)
        snprintf(value, sizeof(value), "%s -> %s", f->current[0] ? f->current : "?",
                 f->recommended);
    else
        snprintf(value, sizeof(value), "%s", f->current);
    fprintf(out, "  %s%-7s%s %s", colour ? status_colour(f->status) : "", status,
            colour ? "\033[0m" : "", label);
    if (value[0] && strlen(label) <= LABEL_WIDTH &&
        2 + 8 + LABEL_WIDTH + 1 + strlen(value) <= WRAP_WIDTH)
        fprintf(out, "%*s %s\n", (int)(LABEL_WIDTH - strlen(label)), "", value);
    else if (value[0]) {
        fputc('\n', out);
        wrapped(out, INDENT, "", value);
    } else
        fputc('\n', out);
    if (f->status == AUDIT_OK)
        return;
    if (f->reason[0])
        wrapped(out, INDENT, "", f->reason);
    if (f->status == AUDIT_WARN || f->status == AUDIT_BAD) {
        if (f->fix[0])
            wrapped(out, INDENT, "fix: ", f->fix);
        if (f->persist[0])
            wrapped(out, INDENT, "to keep it: ", f->persist);
    }
}

void audit_report_text(const struct audit_ctx *ctx, FILE *out, bool colour)
{
    const struct audit_target *t = audit_get_target(ctx);
    const struct audit_host *h = audit_get_host(ctx);
    size_t n;
    const struct audit_finding *fs = audit_findings(ctx, &n);
    char rate[32], rtt[32], bdp[32], verdict[256], line[PATH_MAX + 512];

    units_format_rate(t->rate_bps, rate, sizeof(rate));
    units_format_duration(t->rtt_s, rtt, sizeof(rtt));
    units_format_bytes(t->bdp_bytes, bdp, sizeof(bdp));
    fprintf(out, "netrig audit: %s x %s (BDP %s), %s profile\n", rate, rtt, bdp,
            audit_get_profile(ctx) == AUDIT_PROFILE_LATENCY ? "latency" : "throughput");
    snprintf(line, sizeof(line), "rate: %s; RTT: %s; kernel %s%s%s", t->rate_source, t->rtt_source,
             h->kernel[0] ? h->kernel : "unknown", audit_sysroot(ctx) ? "; sysroot " : "",
             audit_sysroot(ctx) ? audit_sysroot(ctx) : "");
    wrapped(out, 2, "", line);
    for (int g = 0; g < AUDIT_G_COUNT; g++) {
        bool header = false;
        for (size_t i = 0; i < n; i++) {
            if (fs[i].group != (enum audit_group)g)
                continue;
            if (!header) {
                fprintf(out, "\n%s\n", audit_group_title((enum audit_group)g));
                header = true;
            }
            print_finding(out, &fs[i], colour);
        }
    }
    audit_verdict(ctx, verdict, sizeof(verdict));
    fputc('\n', out);
    if (colour)
        fputs("\033[1m", out);
    wrapped(out, 0, "verdict: ", verdict);
    if (colour)
        fputs("\033[0m", out);
}

static cJSON *str_or_null(const char *s)
{
    return s[0] ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static cJSON *finding_json(const struct audit_finding *f)
{
    cJSON *o = cJSON_CreateObject();

    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "id", f->id);
    cJSON_AddItemToObject(o, "iface", str_or_null(f->iface));
    cJSON_AddStringToObject(o, "group", audit_group_key(f->group));
    cJSON_AddStringToObject(o, "status", audit_status_name(f->status));
    cJSON_AddItemToObject(o, "current", str_or_null(f->current));
    cJSON_AddItemToObject(o, "recommended", str_or_null(f->recommended));
    cJSON_AddStringToObject(o, "reason", f->reason);
    cJSON_AddItemToObject(o, "fix", str_or_null(f->fix));
    cJSON_AddItemToObject(o, "persist", str_or_null(f->persist));
    cJSON_AddBoolToObject(o, "persistent", f->persistent);
    cJSON_AddBoolToObject(o, "per_netns", f->per_netns);
    return o;
}

static cJSON *build(const struct audit_ctx *ctx)
{
    const struct audit_target *t = audit_get_target(ctx);
    size_t n, counts[AUDIT_STATUS_COUNT];
    const struct audit_finding *fs = audit_findings(ctx, &n);
    cJSON *doc = cJSON_CreateObject(), *target, *verdict, *cnt, *arr;
    char summary[256];

    if (!doc)
        return NULL;
    target = cJSON_AddObjectToObject(doc, "target");
    cJSON_AddNumberToObject(target, "rate_bps", t->rate_bps);
    cJSON_AddNumberToObject(target, "rtt_s", t->rtt_s);
    cJSON_AddNumberToObject(target, "bdp_bytes", t->bdp_bytes);
    cJSON_AddStringToObject(target, "rate_source", t->rate_source);
    cJSON_AddStringToObject(target, "rtt_source", t->rtt_source);
    cJSON_AddStringToObject(target, "profile",
                            audit_get_profile(ctx) == AUDIT_PROFILE_LATENCY ? "latency"
                                                                            : "throughput");
    cJSON_AddItemToObject(doc, "kernel", str_or_null(audit_get_host(ctx)->kernel));
    cJSON_AddItemToObject(doc, "sysroot",
                          audit_sysroot(ctx) ? cJSON_CreateString(audit_sysroot(ctx))
                                             : cJSON_CreateNull());
    audit_count(ctx, counts);
    audit_verdict(ctx, summary, sizeof(summary));
    verdict = cJSON_AddObjectToObject(doc, "verdict");
    cJSON_AddStringToObject(verdict, "status",
                            counts[AUDIT_BAD]    ? "bad"
                            : counts[AUDIT_WARN] ? "warn"
                                                 : "ok");
    cJSON_AddNumberToObject(verdict, "exit_status", audit_exit_status(ctx));
    cJSON_AddStringToObject(verdict, "summary", summary);
    cnt = cJSON_AddObjectToObject(verdict, "counts");
    for (int s = 0; s < AUDIT_STATUS_COUNT; s++)
        cJSON_AddNumberToObject(cnt, audit_status_name((enum audit_status)s), (double)counts[s]);
    arr = cJSON_AddArrayToObject(doc, "findings");
    for (size_t i = 0; arr && i < n; i++) {
        cJSON *o = finding_json(&fs[i]);
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            cJSON_Delete(doc);
            return NULL;
        }
    }
    if (!target || !verdict || !cnt || !arr) {
        cJSON_Delete(doc);
        return NULL;
    }
    return doc;
}

char *audit_report_json_string(const struct audit_ctx *ctx)
{
    cJSON *doc = build(ctx);
    char *s = doc ? cJSON_Print(doc) : NULL;

    cJSON_Delete(doc);
    return s;
}

int audit_report_json(const struct audit_ctx *ctx, FILE *out)
{
    char *s = audit_report_json_string(ctx);

    if (!s)
        return -ENOMEM;
    fputs(s, out);
    fputc('\n', out);
    free(s);
    return 0;
}
