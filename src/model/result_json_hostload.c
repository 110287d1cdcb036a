/* result_json_hostload: a side's host load (its data threads' CPU and its host's counters) as JSON,
 * in the run document and on the wire from a server; the parser takes it from the network, so every
 * value is checked and anything out of range refuses the whole object. */
#include "result_json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cJSON *result_json_hostload_host(const struct hostctr_delta *h)
{
    cJSON *o = cJSON_CreateObject(), *c = cJSON_AddObjectToObject(o, "counters");
    cJSON *cpus = cJSON_AddArrayToObject(o, "cpus");

    for (int i = 0; i < HOSTCTR_COUNT; i++)
        if (h->have_ctr[i])
            cJSON_AddNumberToObject(c, hostctr_name(i), (double)h->ctr[i]);
    if (h->have_softnet) {
        cJSON_AddNumberToObject(o, "softnet_dropped", (double)h->softnet_dropped);
        cJSON_AddNumberToObject(o, "softnet_time_squeeze", (double)h->softnet_squeeze);
    }
    cJSON_AddNumberToObject(o, "softirq_max_fraction", h->softirq_max);
    cJSON_AddNumberToObject(o, "softirq_max_cpu", h->softirq_cpu);
    for (int i = 0; i < h->ncpu && i < HOSTCTR_TOP_CPUS; i++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "cpu", h->cpu[i].id);
        cJSON_AddNumberToObject(x, "busy_fraction", h->cpu[i].busy);
        cJSON_AddNumberToObject(x, "softirq_fraction", h->cpu[i].softirq);
        cJSON_AddItemToArray(cpus, x);
    }
    cJSON_AddNumberToObject(o, "nic_rx_dropped", (double)h->nic_rx_dropped);
    cJSON_AddNumberToObject(o, "nic_rx_missed_errors", (double)h->nic_rx_missed);
    cJSON_AddStringToObject(o, "nic_worst", h->nic_worst);
    return o;
}

cJSON *result_json_hostload(const struct side_hostload *l)
{
    cJSON *o, *th;

    if (!l)
        return cJSON_CreateNull();
    o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "seconds", l->seconds);
    th = cJSON_AddArrayToObject(o, "threads");
    for (uint32_t i = 0; i < l->nthreads && i < SIDE_MAX_THREADS; i++) {
        const struct side_thread *t = &l->thread[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "cpu", t->cpu);
        cJSON_AddBoolToObject(x, "sends", t->sends);
        cJSON_AddNumberToObject(x, "run_s", t->run_s);
        cJSON_AddNumberToObject(x, "runq_s", t->runq_s);
        cJSON_AddItemToArray(th, x);
    }
    cJSON_AddItemToObject(o, "host", result_json_hostload_host(&l->host));
    return o;
}

/* ---- parsing what a peer sent ---- */

#define U64MAX 1.8e19

static int parse_threads(const cJSON *arr, struct side_hostload *l)
{
    const cJSON *x;

    if (!arr)
        return 0;
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > SIDE_MAX_THREADS)
        return -EINVAL;
    cJSON_ArrayForEach(x, arr)
    {
        struct side_thread *t = &l->thread[l->nthreads++];
        double v;
        int bad;

        if (!cJSON_IsObject(x))
            return -EINVAL;
        bad = result_json_num(x, "cpu", -1, 65535, -1, &v);
        t->cpu = (int)v;
        t->sends = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(x, "sends"));
        bad |= result_json_num(x, "run_s", 0, 1e7, 0, &t->run_s);
        bad |= result_json_num(x, "runq_s", -1, 1e7, -1, &t->runq_s);
        if (bad)
            return -EINVAL;
    }
    return 0;
}

static int parse_counters(const cJSON *c, struct hostctr_delta *h)
{
    const cJSON *x;

    if (!c)
        return 0;
    if (!cJSON_IsObject(c))
        return -EINVAL;
    cJSON_ArrayForEach(x, c)
    {
        int id = x->string ? hostctr_from_name(x->string) : -1;
        if (id < 0)
            continue; /* a counter a newer peer knows */
        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || x->valuedouble < 0 ||
            x->valuedouble > U64MAX)
            return -EINVAL;
        h->have_ctr[id] = true;
        h->ctr[id] = (uint64_t)x->valuedouble;
    }
    return 0;
}

static int parse_cpus(const cJSON *arr, struct hostctr_delta *h)
{
    const cJSON *x;

    if (!arr)
        return 0;
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > HOSTCTR_TOP_CPUS)
        return -EINVAL;
    cJSON_ArrayForEach(x, arr)
    {
        struct hostctr_cpu *c = &h->cpu[h->ncpu++];
        double v;
        int bad;

        if (!cJSON_IsObject(x))
            return -EINVAL;
        bad = result_json_num(x, "cpu", 0, 65535, 0, &v);
        c->id = (int)v;
        bad |= result_json_num(x, "busy_fraction", 0, 1, 0, &c->busy);
        bad |= result_json_num(x, "softirq_fraction", 0, 1, 0, &c->softirq);
        if (bad)
            return -EINVAL;
    }
    return 0;
}

static int parse_host(const cJSON *o, struct hostctr_delta *h)
{
    const cJSON *nw = cJSON_GetObjectItemCaseSensitive(o, "nic_worst");
    double v;
    int bad;

    memset(h, 0, sizeof(*h));
    h->softirq_cpu = -1;
    if (!o)
        return 0; /* not sent: stays invalid */
    if (!cJSON_IsObject(o))
        return -EINVAL;
    bad = parse_counters(cJSON_GetObjectItemCaseSensitive(o, "counters"), h);
    if (cJSON_GetObjectItemCaseSensitive(o, "softnet_dropped")) {
        h->have_softnet = true;
        bad |= result_json_num(o, "softnet_dropped", 0, U64MAX, 0, &v);
        h->softnet_dropped = (uint64_t)v;
        bad |= result_json_num(o, "softnet_time_squeeze", 0, U64MAX, 0, &v);
        h->softnet_squeeze = (uint64_t)v;
    }
    bad |= result_json_num(o, "softirq_max_fraction", 0, 1, 0, &h->softirq_max);
    bad |= result_json_num(o, "softirq_max_cpu", -1, 65535, -1, &v);
    h->softirq_cpu = (int)v;
    bad |= parse_cpus(cJSON_GetObjectItemCaseSensitive(o, "cpus"), h);
    bad |= result_json_num(o, "nic_rx_dropped", 0, U64MAX, 0, &v);
    h->nic_rx_dropped = (uint64_t)v;
    bad |= result_json_num(o, "nic_rx_missed_errors", 0, U64MAX, 0, &v);
    h->nic_rx_missed = (uint64_t)v;
    if (cJSON_IsString(nw) && strlen(nw->valuestring) < IF_NAMESIZE)
        snprintf(h->nic_worst, sizeof(h->nic_worst), "%s", nw->valuestring);
    h->valid = !bad;
    return bad ? -EINVAL : 0;
}

int result_json_hostload_parse(const cJSON *o, struct side_hostload **out)
{
    struct side_hostload *l;

    *out = NULL;
    if (!o || cJSON_IsNull(o))
        return 0;
    if (!cJSON_IsObject(o))
        return -EINVAL;
    l = calloc(1, sizeof(*l));
    if (!l)
        return -ENOMEM;
    if (result_json_num(o, "seconds", 0, 1e7, 0, &l->seconds) ||
        parse_threads(cJSON_GetObjectItemCaseSensitive(o, "threads"), l) ||
        parse_host(cJSON_GetObjectItemCaseSensitive(o, "host"), &l->host)) {
        free(l);
        return -EINVAL;
    }
    *out = l;
    return 0;
}
