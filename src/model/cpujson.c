/* cpujson: the process's own and its cgroup's CPU in the cpu objects of results. */
#include "cpujson.h"

#include <errno.h>
#include <math.h>
#include <string.h>

void cpujson_add(cJSON *o, const struct cpu_usage *c)
{
    cJSON *own, *cg;

    if (!c->own_valid)
        return;
    own = cJSON_AddObjectToObject(o, "own");
    cJSON_AddNumberToObject(own, "user_s", c->own_user_s);
    cJSON_AddNumberToObject(own, "system_s", c->own_system_s);
    cJSON_AddNumberToObject(own, "seconds", c->seconds);
    cJSON_AddNumberToObject(own, "cores",
                            c->seconds > 0 ? (c->own_user_s + c->own_system_s) / c->seconds : 0);
    cJSON_AddNumberToObject(own, "pid", c->own_pid);
    cJSON_AddStringToObject(own, "counts", c->own_threads ? "worker_threads" : "process");
    cJSON_AddStringToObject(o, "cost_basis", c->own_basis ? "own" : "machine");
    cJSON_AddNumberToObject(o, "other_cores", c->other_cores);
    if ((cg = cpujson_cgroup(c)))
        cJSON_AddItemToObject(o, "cgroup", cg);
}

cJSON *cpujson_cgroup(const struct cpu_usage *c)
{
    cJSON *cg;

    if (!c->cg_version || !(cg = cJSON_CreateObject()))
        return NULL;
    cJSON_AddNumberToObject(cg, "version", c->cg_version);
    if (c->cg_has_usage) {
        cJSON_AddNumberToObject(cg, "usage_s", c->cg_usage_s);
        cJSON_AddNumberToObject(cg, "user_s", c->cg_user_s);
        cJSON_AddNumberToObject(cg, "system_s", c->cg_system_s);
    }
    cJSON_AddNumberToObject(cg, "quota_cores", c->cg_quota_cores);
    if (c->cg_has_throttle) {
        cJSON_AddNumberToObject(cg, "periods", c->cg_periods);
        cJSON_AddNumberToObject(cg, "throttled_periods", c->cg_throttled);
        cJSON_AddNumberToObject(cg, "throttled_s", c->cg_throttled_s);
    }
    return cg;
}

/* A number member in [lo, hi]: absent leaves *out and counts as present = false. */
static int get(const cJSON *o, const char *key, double lo, double hi, double *out, bool *seen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    if (seen)
        *seen = v != NULL;
    if (!v)
        return 0;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
        v->valuedouble > hi) {
        if (seen)
            *seen = false;
        return -EINVAL;
    }
    *out = v->valuedouble;
    return 0;
}

#define BIGS 1e9 /* seconds: far beyond any test */

static int parse_cgroup(const cJSON *cg, struct cpu_usage *c)
{
    double v = 0;
    bool seen = false, t1 = false, t2 = false, t3 = false;
    int bad = 0;

    if (!cJSON_IsObject(cg))
        return cg ? -EINVAL : 0;
    bad |= get(cg, "version", 1, 2, &v, &seen);
    if (!seen)
        return -EINVAL;
    c->cg_version = (int)v;
    bad |= get(cg, "usage_s", 0, BIGS, &c->cg_usage_s, &c->cg_has_usage);
    bad |= get(cg, "user_s", 0, BIGS, &c->cg_user_s, NULL);
    bad |= get(cg, "system_s", 0, BIGS, &c->cg_system_s, NULL);
    bad |= get(cg, "quota_cores", 0, 1e6, &c->cg_quota_cores, NULL);
    bad |= get(cg, "periods", 0, 1e15, &c->cg_periods, &t1);
    bad |= get(cg, "throttled_periods", 0, 1e15, &c->cg_throttled, &t2);
    bad |= get(cg, "throttled_s", 0, BIGS, &c->cg_throttled_s, &t3);
    c->cg_has_throttle = t1 && t2 && t3;
    return bad;
}

int cpujson_parse(const cJSON *o, struct cpu_usage *c)
{
    const cJSON *own = cJSON_GetObjectItemCaseSensitive(o, "own");
    const cJSON *basis = cJSON_GetObjectItemCaseSensitive(o, "cost_basis");
    const cJSON *counts;
    int bad = 0;
    bool seen = false;
    double pid = 0;

    c->own_valid = false;
    c->cg_version = 0;
    if (!cJSON_IsObject(own))
        return own ? -EINVAL : 0;
    bad |= get(own, "user_s", 0, BIGS, &c->own_user_s, NULL);
    bad |= get(own, "system_s", 0, BIGS, &c->own_system_s, NULL);
    bad |= get(own, "seconds", 0, BIGS, &c->seconds, &seen);
    bad |= get(own, "pid", 0, 4194304, &pid, NULL);
    c->own_pid = (int)pid;
    counts = cJSON_GetObjectItemCaseSensitive(own, "counts");
    c->own_threads = cJSON_IsString(counts) && !strcmp(counts->valuestring, "worker_threads");
    bad |= get(o, "other_cores", 0, 1e6, &c->other_cores, NULL);
    c->own_valid = !bad && seen && c->seconds > 0;
    c->own_basis = cJSON_IsString(basis) && !strcmp(basis->valuestring, "own");
    if (basis && !cJSON_IsString(basis))
        bad = -EINVAL;
    bad |= parse_cgroup(cJSON_GetObjectItemCaseSensitive(o, "cgroup"), c);
    return bad ? -EINVAL : 0;
}
