/* result_json_peer: an interval the server streams to the client during the run (docs/protocol.md
 * "interval"), so reverse and bidir intervals carry the sender's retransmits; the parser takes it
 * from the network, so every number is checked and a malformed message is refused whole. */
#include "result_json.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define U32MAX 4294967295.0
#define U64MAX 1.8e19

/* o[key], when present, a finite number within [lo, hi]; *out 0 when absent. */
static int num(const cJSON *o, const char *key, double lo, double hi, double *out)
{
    return result_json_num(o, key, lo, hi, 0, out);
}

void result_json_add_peer_interval(cJSON *o, const struct side_result *s, const struct interval *iv)
{
    cJSON *pairs;
    uint32_t n = 0;

    cJSON_AddNumberToObject(o, "index", (double)(iv - s->intervals));
    cJSON_AddNumberToObject(o, "start_s", iv->start_s);
    cJSON_AddNumberToObject(o, "end_s", iv->end_s);
    cJSON_AddBoolToObject(o, "omitted", iv->omitted);
    cJSON_AddNumberToObject(o, "sent_bytes", (double)iv->sent_bytes);
    cJSON_AddNumberToObject(o, "received_bytes", (double)iv->recv_bytes);
    cJSON_AddNumberToObject(o, "retransmits", iv->retrans);
    for (uint32_t i = 0; iv->flows && i < s->nflows; i++)
        n += iv->flows[i].retrans > 0;
    if (!iv->flows || n > RESULT_PEER_MAX_PAIRS)
        return; /* totals only */
    /* only a sending flow retransmits: the pairs are the flows this end sends */
    pairs = cJSON_AddArrayToObject(o, "flows");
    for (uint32_t i = 0; i < s->nflows; i++) {
        cJSON *pr;
        if (!iv->flows[i].retrans)
            continue;
        pr = cJSON_CreateArray();
        cJSON_AddItemToArray(pr, cJSON_CreateNumber(i));
        cJSON_AddItemToArray(pr, cJSON_CreateNumber(iv->flows[i].retrans));
        cJSON_AddItemToArray(pairs, pr);
    }
}

/* "flows": [[id, retransmits], ...] with ids below nflows, each once. */
static int parse_pairs(const cJSON *arr, uint32_t nflows, struct peer_interval *out)
{
    int n = cJSON_GetArraySize(arr);
    const cJSON *pr;
    uint32_t k = 0;

    if (n < 0 || n > RESULT_PEER_MAX_PAIRS || (uint32_t)n > nflows)
        return -EINVAL;
    out->ids = calloc(n ? (size_t)n : 1, sizeof(*out->ids));
    out->flow_retrans = calloc(n ? (size_t)n : 1, sizeof(*out->flow_retrans));
    if (!out->ids || !out->flow_retrans)
        return -ENOMEM;
    cJSON_ArrayForEach(pr, arr)
    {
        const cJSON *id = cJSON_GetArrayItem(pr, 0), *rt = cJSON_GetArrayItem(pr, 1);
        if (!cJSON_IsArray(pr) || cJSON_GetArraySize(pr) != 2 || !cJSON_IsNumber(id) ||
            !cJSON_IsNumber(rt) || id->valuedouble < 0 || id->valuedouble >= nflows ||
            id->valuedouble != floor(id->valuedouble) || rt->valuedouble < 0 ||
            rt->valuedouble > U32MAX)
            return -EINVAL;
        out->ids[k] = (uint32_t)id->valuedouble;
        out->flow_retrans[k] = (uint32_t)rt->valuedouble;
        for (uint32_t j = 0; j < k; j++)
            if (out->ids[j] == out->ids[k])
                return -EINVAL;
        k++;
    }
    out->npairs = k;
    out->has_flows = true;
    return 0;
}

int result_json_peer_interval_parse(const cJSON *o, uint32_t nflows, uint32_t max_index,
                                    struct peer_interval *out)
{
    const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(o, "flows");
    double idx, v;
    int bad;

    memset(out, 0, sizeof(*out));
    if (!cJSON_IsObject(o) || !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, "index")))
        return -EINVAL;
    bad = num(o, "index", 0, max_index, &idx) || idx != floor(idx);
    bad |= num(o, "start_s", 0, 1e7, &out->start_s);
    bad |= num(o, "end_s", 0, 1e7, &out->end_s);
    bad |= num(o, "sent_bytes", 0, U64MAX, &v);
    out->sent_bytes = (uint64_t)v;
    bad |= num(o, "received_bytes", 0, U64MAX, &v);
    out->recv_bytes = (uint64_t)v;
    bad |= num(o, "retransmits", 0, U32MAX, &v);
    out->retrans = (uint32_t)v;
    out->omitted = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "omitted"));
    out->index = (uint32_t)idx;
    if (!bad && pairs && (!cJSON_IsArray(pairs) || parse_pairs(pairs, nflows, out)))
        bad = 1;
    if (bad || out->end_s < out->start_s) {
        result_peer_interval_fini(out);
        return -EINVAL;
    }
    return 0;
}
