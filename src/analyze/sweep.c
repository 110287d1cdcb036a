/* sweep: definitions, points and the stopping rule of sweeps. */
#include "sweep.h"

#include "stats.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* names people use for parameters (params JSON, docs) -> the test's long option */
static const struct {
    const char *alias, *option;
} aliases[] = {
    {"flows", "parallel"},
    {"write_size", "length"},
    {"duration", "time"},
    {"duration_s", "time"},
    {"omit_s", "omit"},
    {"interval_s", "interval"},
    {"fq_rate_bps", "fq-rate"},
    {"udp_rate_bps", "bitrate"},
    {"udp_pps", "pps"},
    {"rate_tps", "rate"},
    {"cc", "congestion"},
    {"req_size", "size"},
    {"txn_timeout_s", "txn-timeout"},
};

static const char *const flags[] = {
    "reverse",      "bidir", "nodelay", "zerocopy", "udp", "busy-poll",
    "connect-only", "R",     "N",       "Z",        "u",
};

static const char *const sweep_level[] = {
    "db", "no-save", "json", "J", "json-stream", "histogram", "help", "h",
};

static bool in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, list[i]))
            return true;
    return false;
}

static int name_to_option(struct sweep_vary *v, char *err, size_t errlen)
{
    char name[48];

    snprintf(name, sizeof(name), "%s", v->name);
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (!strcmp(name, aliases[i].alias))
            snprintf(name, sizeof(name), "%s", aliases[i].option);
    for (char *p = name; *p; p++)
        if (*p == '_')
            *p = '-';
    if (in_list(name, sweep_level, sizeof(sweep_level) / sizeof(sweep_level[0]))) {
        snprintf(err, errlen, "--vary %s: that is not a test parameter", v->name);
        return -EINVAL;
    }
    v->direction = !strcmp(name, "direction");
    v->flag = in_list(name, flags, sizeof(flags) / sizeof(flags[0]));
    snprintf(v->option, sizeof(v->option), "%s%s", strlen(name) == 1 ? "-" : "--", name);
    return 0;
}

static int flag_value(const char *s)
{
    if (!strcmp(s, "on") || !strcmp(s, "yes") || !strcmp(s, "1") || !strcmp(s, "true"))
        return 1;
    if (!strcmp(s, "off") || !strcmp(s, "no") || !strcmp(s, "0") || !strcmp(s, "false"))
        return 0;
    return -1;
}

int sweep_parse_vary(const char *arg, struct sweep_vary *v, char *err, size_t errlen)
{
    const char *eq = strchr(arg, '='), *p;
    size_t nlen = eq ? (size_t)(eq - arg) : 0;

    memset(v, 0, sizeof(*v));
    if (!eq || nlen == 0 || nlen >= sizeof(v->name) || !eq[1]) {
        snprintf(err, errlen, "invalid --vary '%s': use NAME=V1,V2,... e.g. flows=1,2,4", arg);
        return -EINVAL;
    }
    memcpy(v->name, arg, nlen);
    for (size_t i = 0; i < nlen; i++)
        if (!isalnum((unsigned char)v->name[i]) && v->name[i] != '_' && v->name[i] != '-') {
            snprintf(err, errlen, "invalid parameter name '%s' in --vary", v->name);
            return -EINVAL;
        }
    if (name_to_option(v, err, errlen))
        return -EINVAL;
    for (p = eq + 1; *p;) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof(v->values[0]) || v->nvalues >= SWEEP_MAX_VALUES) {
            snprintf(err, errlen,
                     "invalid value list in --vary '%s': values are 1 to 63 "
                     "characters, at most %d of them",
                     arg, SWEEP_MAX_VALUES);
            return -EINVAL;
        }
        memcpy(v->values[v->nvalues], p, len);
        v->values[v->nvalues][len] = '\0';
        if (v->flag && flag_value(v->values[v->nvalues]) < 0) {
            snprintf(err, errlen, "value '%s' for --vary %s: use on or off", v->values[v->nvalues],
                     v->name);
            return -EINVAL;
        }
        if (v->direction && strcmp(v->values[v->nvalues], "forward") &&
            strcmp(v->values[v->nvalues], "reverse") && strcmp(v->values[v->nvalues], "bidir")) {
            snprintf(err, errlen,
                     "value '%s' for --vary direction: use forward, reverse or "
                     "bidir",
                     v->values[v->nvalues]);
            return -EINVAL;
        }
        v->nvalues++;
        p += len;
        if (*p == ',' && !*++p) {
            snprintf(err, errlen, "empty value at the end of --vary '%s'", arg);
            return -EINVAL;
        }
    }
    return 0;
}

int sweep_parse_ci(const char *arg, double *level, double *pct, char *err, size_t errlen)
{
    char *end;
    double l = strtod(arg, &end), w = 2;
    bool ok = end != arg;

    if (ok && *end == ',') {
        const char *ws = end + 1;
        w = strtod(ws, &end);
        ok = end != ws;
        if (ok && *end == '%')
            end++;
    }
    if (!ok || *end || !(l >= 50 && l < 100) || !(w > 0 && w <= 100)) {
        snprintf(err, errlen,
                 "invalid --ci '%s': use LEVEL,WIDTH%% with LEVEL 50 to 99.9 and "
                 "WIDTH above 0, e.g. 95,2%% (a 95%% interval within +-2%% of the mean)",
                 arg);
        return -EINVAL;
    }
    *level = l / 100;
    *pct = w;
    return 0;
}

uint32_t sweep_npoints(const struct sweep_def *d)
{
    uint64_t n = 1;

    for (uint32_t i = 0; i < d->nvary; i++) {
        n *= d->vary[i].nvalues;
        if (n > SWEEP_MAX_POINTS)
            return 0;
    }
    return (uint32_t)n;
}

void sweep_point_index(const struct sweep_def *d, uint32_t idx, uint32_t *vi)
{
    for (uint32_t i = d->nvary; i-- > 0;) {
        vi[i] = idx % d->vary[i].nvalues;
        idx /= d->vary[i].nvalues;
    }
}

static int push(int *argc, char **argv, const char *s)
{
    if (*argc >= 2 * SWEEP_MAX_ARGS || !(argv[*argc] = strdup(s)))
        return -ENOMEM;
    (*argc)++;
    return 0;
}

int sweep_point_argv(const struct sweep_def *d, uint32_t idx, int *argc, char ***argv)
{
    char **av = calloc(2 * SWEEP_MAX_ARGS + 1, sizeof(*av)), opt[160];
    uint32_t vi[SWEEP_MAX_VARY];
    int n = 0, rc;

    if (!av)
        return -ENOMEM;
    sweep_point_index(d, idx, vi);
    rc = push(&n, av, params_test_name(d->kind));
    for (int i = 0; !rc && i < d->nbase; i++)
        rc = push(&n, av, d->base[i]);
    for (uint32_t i = 0; !rc && i < d->nvary; i++) {
        const struct sweep_vary *v = &d->vary[i];
        const char *val = v->values[vi[i]];
        if (v->direction) {
            if (strcmp(val, "forward"))
                rc = push(&n, av, !strcmp(val, "reverse") ? "--reverse" : "--bidir");
        } else if (v->flag) {
            if (flag_value(val) == 1)
                rc = push(&n, av, v->option);
        } else if (v->option[1] != '-') { /* a short option: its value is the next word */
            rc = push(&n, av, v->option);
            if (!rc)
                rc = push(&n, av, val);
        } else {
            snprintf(opt, sizeof(opt), "%s=%s", v->option, val);
            rc = push(&n, av, opt);
        }
    }
    if (rc) {
        sweep_free_argv(n, av);
        return rc;
    }
    *argc = n;
    *argv = av;
    return 0;
}

void sweep_free_argv(int argc, char **argv)
{
    for (int i = 0; argv && i < argc; i++)
        free(argv[i]);
    free(argv);
}

void sweep_point_label(const struct sweep_def *d, uint32_t idx, char *buf, size_t len)
{
    uint32_t vi[SWEEP_MAX_VARY];
    size_t o = 0;

    buf[0] = '\0';
    sweep_point_index(d, idx, vi);
    for (uint32_t i = 0; i < d->nvary && o < len; i++) {
        int w = snprintf(buf + o, len - o, "%s%s=%s", i ? " " : "", d->vary[i].name,
                         d->vary[i].values[vi[i]]);
        if (w < 0)
            break;
        o += (size_t)w;
    }
}

char *sweep_point_settings(const struct sweep_def *d, uint32_t idx)
{
    uint32_t vi[SWEEP_MAX_VARY];
    cJSON *o = cJSON_CreateObject();
    char *t;

    sweep_point_index(d, idx, vi);
    for (uint32_t i = 0; i < d->nvary; i++)
        cJSON_AddStringToObject(o, d->vary[i].name, d->vary[i].values[vi[i]]);
    t = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return t;
}

char *sweep_definition(const struct sweep_def *d)
{
    cJSON *o = cJSON_CreateObject(), *a, *vs;
    char *t;

    cJSON_AddStringToObject(o, "test", params_test_name(d->kind));
    a = cJSON_AddArrayToObject(o, "args");
    for (int i = 0; i < d->nbase; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(d->base[i]));
    vs = cJSON_AddArrayToObject(o, "vary");
    for (uint32_t i = 0; i < d->nvary; i++) {
        cJSON *v = cJSON_CreateObject(), *vals;
        cJSON_AddStringToObject(v, "name", d->vary[i].name);
        vals = cJSON_AddArrayToObject(v, "values");
        for (uint32_t j = 0; j < d->vary[i].nvalues; j++)
            cJSON_AddItemToArray(vals, cJSON_CreateString(d->vary[i].values[j]));
        cJSON_AddItemToArray(vs, v);
    }
    cJSON_AddNumberToObject(o, "repeat", d->repeat);
    cJSON_AddNumberToObject(o, "ci_level", d->ci_level);
    cJSON_AddNumberToObject(o, "ci_pct", d->ci_pct);
    cJSON_AddStringToObject(o, "metric", d->metric);
    t = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return t;
}

double sweep_ci_pct(double mean, double half) { return mean != 0 ? 100 * half / fabs(mean) : 0; }

bool sweep_ci_reached(double ci_pct, uint32_t runs, double mean, double half)
{
    if (ci_pct <= 0)
        return true;
    return runs >= 2 && mean != 0 && sweep_ci_pct(mean, half) <= ci_pct;
}

bool sweep_point_done(const struct sweep_def *d, const double *vals, size_t n, double *mean,
                      double *half)
{
    struct stats_sample s;
    size_t min = d->repeat < 3 ? d->repeat : 3;

    stats_describe(vals, n, &s);
    *mean = s.mean;
    *half = stats_ci_half(&s, d->ci_level > 0 ? d->ci_level : 0.95);
    if (n >= d->repeat)
        return true;
    if (d->ci_pct <= 0 || n < min || n < 2)
        return false;
    return sweep_ci_reached(d->ci_pct, (uint32_t)n, s.mean, *half);
}
