/* params: defaults, validation and the JSON form of test parameters. Everything a peer sends
 * is checked here before any other module sees it. */
#include "params.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void params_defaults(struct params *p)
{
    memset(p, 0, sizeof(*p));
    p->flows = 1;
    p->threads = 1;
    p->server_threads = 0; /* 0: same as threads */
    p->duration_ns = 10ULL * 1000000000ULL;
    p->interval_ns = 1000000000ULL;
    p->write_size = 128 * 1024;
    p->dir = PARAMS_DIR_FORWARD;
}

const char *params_dir_name(enum params_dir d)
{
    switch (d) {
    case PARAMS_DIR_REVERSE: return "reverse";
    case PARAMS_DIR_BIDIR: return "bidir";
    default: return "forward";
    }
}

uint32_t params_total_flows(const struct params *p)
{
    return p->dir == PARAMS_DIR_BIDIR ? 2 * p->flows : p->flows;
}

bool params_flow_client_sends(const struct params *p, uint32_t i)
{
    switch (p->dir) {
    case PARAMS_DIR_REVERSE: return false;
    case PARAMS_DIR_BIDIR: return i < p->flows;
    default: return true;
    }
}

static bool printable(const char *s)
{
    for (; *s; s++)
        if (!isprint((unsigned char)*s))
            return false;
    return true;
}

static bool cc_name_ok(const char *s)
{
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
            return false;
    return true;
}

int params_validate(const struct params *p, char *err, size_t errlen)
{
#define FAIL(...) do { snprintf(err, errlen, __VA_ARGS__); return -EINVAL; } while (0)
    if (p->flows < 1 || p->flows > PARAMS_MAX_FLOWS)
        FAIL("flows (-P) %u is out of range: use 1 to %u", p->flows, PARAMS_MAX_FLOWS);
    if (p->threads < 1 || p->threads > PARAMS_MAX_THREADS)
        FAIL("threads (-T) %u is out of range: use 1 to %u", p->threads, PARAMS_MAX_THREADS);
    if (p->server_threads > PARAMS_MAX_THREADS)
        FAIL("server threads %u is out of range: use 1 to %u", p->server_threads,
             PARAMS_MAX_THREADS);
    if (p->duration_ns < PARAMS_MIN_INTERVAL_NS || p->duration_ns > PARAMS_MAX_DURATION_NS)
        FAIL("duration (-t) %.3gs is out of range: use 0.1s to 86400s", p->duration_ns / 1e9);
    if (p->omit_ns > PARAMS_MAX_DURATION_NS)
        FAIL("omit (-O) %.3gs is out of range: use 0 to 86400s", p->omit_ns / 1e9);
    if (p->interval_ns && p->interval_ns < PARAMS_MIN_INTERVAL_NS)
        FAIL("interval (-i) %.3gs is too short: use 0 (off) or at least 0.1s",
             p->interval_ns / 1e9);
    if (p->interval_ns > PARAMS_MAX_DURATION_NS)
        FAIL("interval (-i) %.3gs is too long: use at most 86400s", p->interval_ns / 1e9);
    if (p->write_size < 1 || p->write_size > PARAMS_MAX_WRITE)
        FAIL("write size (-l) %u is out of range: use 1 to 16M", p->write_size);
    if (p->window > PARAMS_MAX_WINDOW)
        FAIL("window (-w) %u is out of range: use at most 1G", p->window);
    if (p->mss && (p->mss < 88 || p->mss > 65535))
        FAIL("MSS (--mss) %u is out of range: use 88 to 65535", p->mss);
    if ((unsigned)p->dir > PARAMS_DIR_BIDIR)
        FAIL("direction %d is unknown", (int)p->dir);
    if (!cc_name_ok(p->congestion))
        FAIL("congestion control '%s' is not a valid algorithm name", p->congestion);
    if (!printable(p->server_cpus) || !printable(p->title))
        FAIL("title or server CPU list holds unprintable characters");
    return 0;
#undef FAIL
}

cJSON *params_to_json(const struct params *p)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "flows", p->flows);
    cJSON_AddNumberToObject(o, "threads", p->threads);
    cJSON_AddNumberToObject(o, "server_threads", p->server_threads ? p->server_threads : p->threads);
    cJSON_AddNumberToObject(o, "duration_s", p->duration_ns / 1e9);
    cJSON_AddNumberToObject(o, "omit_s", p->omit_ns / 1e9);
    cJSON_AddNumberToObject(o, "interval_s", p->interval_ns / 1e9);
    cJSON_AddNumberToObject(o, "write_size", p->write_size);
    cJSON_AddNumberToObject(o, "window", p->window);
    cJSON_AddNumberToObject(o, "mss", p->mss);
    cJSON_AddBoolToObject(o, "nodelay", p->nodelay);
    cJSON_AddBoolToObject(o, "zerocopy", p->zerocopy);
    cJSON_AddNumberToObject(o, "fq_rate_bps", (double)p->fq_rate_bps);
    cJSON_AddStringToObject(o, "direction", params_dir_name(p->dir));
    cJSON_AddStringToObject(o, "congestion", p->congestion);
    cJSON_AddStringToObject(o, "server_cpus", p->server_cpus);
    cJSON_AddStringToObject(o, "title", p->title);
    return o;
}

/* A number field: absent keeps the default; present must be a finite number in [lo, hi]. */
static int get_num(const cJSON *o, const char *key, double lo, double hi, double *out,
                   char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    if (!v)
        return 1;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
        v->valuedouble > hi) {
        snprintf(err, errlen, "parameter '%s' must be a number from %g to %g", key, lo, hi);
        return -EINVAL;
    }
    *out = v->valuedouble;
    return 0;
}

static int get_str(const cJSON *o, const char *key, char *dst, size_t dstlen, char *err,
                   size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    if (!v)
        return 1;
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= dstlen) {
        snprintf(err, errlen, "parameter '%s' must be a string of at most %zu bytes", key,
                 dstlen - 1);
        return -EINVAL;
    }
    memcpy(dst, v->valuestring, strlen(v->valuestring) + 1);
    return 0;
}

static int get_bool(const cJSON *o, const char *key, bool *out, char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    if (!v)
        return 1;
    if (!cJSON_IsBool(v)) {
        snprintf(err, errlen, "parameter '%s' must be true or false", key);
        return -EINVAL;
    }
    *out = cJSON_IsTrue(v);
    return 0;
}

int params_from_json(const cJSON *o, struct params *p, char *err, size_t errlen)
{
    double v;
    char dir[16] = "";
    int rc;

    params_defaults(p);
    if (!cJSON_IsObject(o)) {
        snprintf(err, errlen, "parameters must be a JSON object");
        return -EINVAL;
    }
#define NUM(key, lo, hi, stmt)                                                                    \
    do {                                                                                          \
        rc = get_num(o, key, lo, hi, &v, err, errlen);                                            \
        if (rc < 0)                                                                               \
            return rc;                                                                            \
        if (rc == 0)                                                                              \
            stmt;                                                                                 \
    } while (0)
    NUM("flows", 1, PARAMS_MAX_FLOWS, p->flows = (uint32_t)v);
    NUM("threads", 1, PARAMS_MAX_THREADS, p->threads = (uint32_t)v);
    NUM("server_threads", 1, PARAMS_MAX_THREADS, p->server_threads = (uint32_t)v);
    NUM("duration_s", 0.1, 86400, p->duration_ns = (uint64_t)llround(v * 1e9));
    NUM("omit_s", 0, 86400, p->omit_ns = (uint64_t)llround(v * 1e9));
    NUM("interval_s", 0, 86400, p->interval_ns = (uint64_t)llround(v * 1e9));
    NUM("write_size", 1, PARAMS_MAX_WRITE, p->write_size = (uint32_t)v);
    NUM("window", 0, PARAMS_MAX_WINDOW, p->window = (uint32_t)v);
    NUM("mss", 0, 65535, p->mss = (uint32_t)v);
    NUM("fq_rate_bps", 0, 1e15, p->fq_rate_bps = (uint64_t)v);
#undef NUM
    if (get_bool(o, "nodelay", &p->nodelay, err, errlen) < 0 ||
        get_bool(o, "zerocopy", &p->zerocopy, err, errlen) < 0 ||
        get_str(o, "congestion", p->congestion, sizeof(p->congestion), err, errlen) < 0 ||
        get_str(o, "server_cpus", p->server_cpus, sizeof(p->server_cpus), err, errlen) < 0 ||
        get_str(o, "title", p->title, sizeof(p->title), err, errlen) < 0 ||
        get_str(o, "direction", dir, sizeof(dir), err, errlen) < 0)
        return -EINVAL;
    if (!strcmp(dir, "reverse"))
        p->dir = PARAMS_DIR_REVERSE;
    else if (!strcmp(dir, "bidir"))
        p->dir = PARAMS_DIR_BIDIR;
    else if (*dir && strcmp(dir, "forward")) {
        snprintf(err, errlen, "parameter 'direction' must be forward, reverse or bidir");
        return -EINVAL;
    }
    return params_validate(p, err, errlen);
}
