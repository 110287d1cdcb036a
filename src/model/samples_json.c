/* samples_json: the column layout of a time series, both ways. */
#include "samples_json.h"

#include "params.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define U32MAX 4294967295.0
#define U64MAX 1.8e19

/* The fields of a TCP flow's rows, their JSON names and ranges. */
enum col { C_CWND, C_RTT, C_RETRANS, C_MSS, C_DELIVERY, C_PACING, C_BUSY, C_RWND, C_SNDBUF, NCOL };
static const struct {
    const char *name;
    double max;
} cols[NCOL] = {
    {"cwnd", U32MAX},
    {"rtt_us", U32MAX},
    {"retransmits", U32MAX},
    {"mss", U32MAX},
    {"delivery_rate_bps", U64MAX},
    {"pacing_rate_bps", U64MAX},
    {"busy_us", U64MAX},
    {"rwnd_limited_us", U64MAX},
    {"sndbuf_limited_us", U64MAX},
};

static double get(const struct sample *r, enum col c)
{
    switch (c) {
    case C_CWND: return r->cwnd;
    case C_RTT: return r->rtt_us;
    case C_RETRANS: return r->retrans;
    case C_MSS: return r->mss;
    case C_DELIVERY: return (double)r->delivery_rate_bps;
    case C_PACING: return (double)r->pacing_rate_bps;
    case C_BUSY: return (double)r->busy_us;
    case C_RWND: return (double)r->rwnd_limited_us;
    default: return (double)r->sndbuf_limited_us;
    }
}

static void set(struct sample *r, enum col c, double v)
{
    switch (c) {
    case C_CWND: r->cwnd = (uint32_t)v; break;
    case C_RTT: r->rtt_us = (uint32_t)v; break;
    case C_RETRANS: r->retrans = (uint32_t)v; break;
    case C_MSS: r->mss = (uint32_t)v; break;
    case C_DELIVERY: r->delivery_rate_bps = (uint64_t)v; break;
    case C_PACING: r->pacing_rate_bps = (uint64_t)v; break;
    case C_BUSY: r->busy_us = (uint64_t)v; break;
    case C_RWND: r->rwnd_limited_us = (uint64_t)v; break;
    default: r->sndbuf_limited_us = (uint64_t)v; break;
    }
}

static cJSON *flow_json(const struct samples *s, uint32_t f, uint32_t id)
{
    cJSON *o = cJSON_CreateObject(), *a;

    cJSON_AddNumberToObject(o, "id", id);
    cJSON_AddStringToObject(o, "kind", s->kind[f] == SAMPLES_TCP ? "tcp" : "bytes");
    a = cJSON_AddArrayToObject(o, "bytes");
    for (uint32_t k = 0; k < s->n; k++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)samples_row(s, k, f)->bytes));
    a = cJSON_AddArrayToObject(o, "throughput_bps");
    for (uint32_t k = 0; k < s->n; k++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(round(samples_bps(s, k, f))));
    if (s->kind[f] != SAMPLES_TCP)
        return o;
    for (int c = 0; c < NCOL; c++) {
        a = cJSON_AddArrayToObject(o, cols[c].name);
        for (uint32_t k = 0; k < s->n; k++) {
            const struct sample *r = samples_row(s, k, f);
            cJSON_AddItemToArray(a, r->tcp ? cJSON_CreateNumber(get(r, (enum col)c))
                                           : cJSON_CreateNull());
        }
    }
    return o;
}

cJSON *samples_json(const struct samples *s, const uint32_t *ids)
{
    cJSON *o = cJSON_CreateObject(), *a;

    cJSON_AddNumberToObject(o, "sample_s", s->period_ns / 1e9);
    cJSON_AddNumberToObject(o, "asked_s", s->asked_ns / 1e9);
    cJSON_AddNumberToObject(o, "thinned", s->thinned);
    cJSON_AddNumberToObject(o, "cpu_s", s->cpu_s);
    a = cJSON_AddArrayToObject(o, "t_s");
    for (uint32_t k = 0; k < s->n; k++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(s->t_s[k]));
    a = cJSON_AddArrayToObject(o, "flows");
    for (uint32_t f = 0; f < s->nflows; f++)
        if (s->kind[f] != SAMPLES_NONE)
            cJSON_AddItemToArray(a, flow_json(s, f, ids ? ids[f] : f));
    return o;
}

/* A number of o in [lo, hi]; -1 when absent or bad. */
static int number(const cJSON *o, const char *key, double lo, double hi, double *v)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);

    if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || x->valuedouble < lo ||
        x->valuedouble > hi)
        return -1;
    *v = x->valuedouble;
    return 0;
}

/* The n-element array key of o; NULL when absent or of another length. */
static const cJSON *column(const cJSON *o, const char *key, uint32_t n)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);

    return cJSON_IsArray(a) && (uint32_t)cJSON_GetArraySize(a) == n ? a : NULL;
}

static int parse_times(const cJSON *o, struct samples *s)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "t_s"), *v;
    double last = 0;

    cJSON_ArrayForEach(v, a)
    {
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < last ||
            v->valuedouble > 1e7)
            return -1;
        samples_tick(s, last = v->valuedouble);
    }
    return 0;
}

/* One column into the rows of flow f; tcp columns mark the rows they fill. */
static int parse_column(const cJSON *a, struct samples *s, uint32_t f, int c)
{
    const cJSON *v;
    uint32_t k = 0;

    cJSON_ArrayForEach(v, a)
    {
        struct sample *r = &s->rows[(uint64_t)k++ * s->nflows + f];
        if (c >= 0 && cJSON_IsNull(v))
            continue;
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
            v->valuedouble > (c < 0 ? U64MAX : cols[c].max))
            return -1;
        if (c < 0) {
            r->bytes = (uint64_t)v->valuedouble;
        } else {
            set(r, (enum col)c, v->valuedouble);
            r->tcp = true;
        }
    }
    return 0;
}

static int parse_flow(const cJSON *fo, struct samples *s, char *err, size_t errlen)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(fo, "kind"), *a;
    double id;
    bool tcp;

    if (!cJSON_IsObject(fo) || number(fo, "id", 0, s->nflows - 1, &id) || id != floor(id)) {
        snprintf(err, errlen, "peer samples name a flow outside 0..%u", s->nflows - 1);
        return -1;
    }
    if (s->kind[(uint32_t)id] != SAMPLES_NONE) {
        snprintf(err, errlen, "peer samples name flow %u twice", (uint32_t)id);
        return -1;
    }
    tcp = cJSON_IsString(kind) && !strcmp(kind->valuestring, "tcp");
    s->kind[(uint32_t)id] = tcp ? SAMPLES_TCP : SAMPLES_BYTES;
    if (!(a = column(fo, "bytes", s->n)) || parse_column(a, s, (uint32_t)id, -1))
        goto bad;
    for (int c = 0; tcp && c < NCOL; c++)
        if (!(a = column(fo, cols[c].name, s->n)) || parse_column(a, s, (uint32_t)id, c))
            goto bad;
    return 0;
bad:
    snprintf(err, errlen, "peer samples of flow %u hold a missing or invalid column", (uint32_t)id);
    return -1;
}

int samples_json_parse(const cJSON *o, uint32_t expect_flows, uint32_t max_ticks,
                       struct samples **out, char *err, size_t errlen)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "t_s");
    const cJSON *flows = cJSON_GetObjectItemCaseSensitive(o, "flows"), *fo;
    struct samples *s = NULL;
    double period, asked, thinned;
    int n;

    *out = NULL;
    if (!o || cJSON_IsNull(o))
        return 0;
    if (!cJSON_IsObject(o) || !cJSON_IsArray(t) || !cJSON_IsArray(flows) ||
        number(o, "sample_s", PARAMS_MIN_SAMPLE_NS / 1e9, 86400 * 1024.0, &period) ||
        number(o, "asked_s", PARAMS_MIN_SAMPLE_NS / 1e9, 86400, &asked) ||
        number(o, "thinned", 0, 32, &thinned) || thinned != floor(thinned)) {
        snprintf(err, errlen, "peer samples lack their period, times or flows");
        return -EPROTO;
    }
    n = cJSON_GetArraySize(t);
    if ((uint32_t)n > max_ticks || (uint64_t)n * expect_flows > SAMPLES_MAX_ROWS ||
        cJSON_GetArraySize(flows) > (int)expect_flows) {
        snprintf(err, errlen, "peer samples hold %d ticks of %d flows, more than this test has", n,
                 cJSON_GetArraySize(flows));
        return -EPROTO;
    }
    /* room for exactly n ticks: parsing never thins */
    s = samples_new(expect_flows, 1000000000ULL, (uint64_t)(n > 4 ? n - 4 : 0) * 1000000000ULL);
    if (!s) {
        snprintf(err, errlen, "out of memory for the peer's samples");
        return -ENOMEM;
    }
    memset(s->kind, SAMPLES_NONE, expect_flows);
    s->period_ns = (uint64_t)llround(period * 1e9);
    s->asked_ns = (uint64_t)llround(asked * 1e9);
    s->thinned = (uint32_t)thinned;
    if (!number(o, "cpu_s", 0, 1e7, &period))
        s->cpu_s = period;
    if (parse_times(o, s)) {
        snprintf(err, errlen, "peer samples hold a time out of range or out of order");
        goto fail;
    }
    cJSON_ArrayForEach(fo, flows) if (parse_flow(fo, s, err, errlen)) goto fail;
    *out = s;
    return 0;
fail:
    samples_free(s);
    return -EPROTO;
}
