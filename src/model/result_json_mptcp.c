/* result_json_mptcp: a flow's MPTCP connection and its subflows as JSON (a side's results on
 * the wire, the run document), and back from a peer with every value range-checked. */
#include "result_json_mptcp.h"
#include "test_kind.h"

#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define U64MAX 9007199254740992.0 /* 2^53: exact in a double */
#define U32MAX 4294967295.0

static void add_addr(cJSON *o, const char *key, const struct mptcpinfo_addr *a)
{
    char s[64];

    mptcpinfo_addr_str(a, s, sizeof(s));
    cJSON_AddStringToObject(o, key, s);
}

cJSON *result_json_mptcp(const struct mptcpinfo *m)
{
    cJSON *o, *arr;

    if (!m || !m->valid)
        return cJSON_CreateNull();
    o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "fallback", m->fallback);
    cJSON_AddNumberToObject(o, "subflow_count", m->subflows);
    cJSON_AddNumberToObject(o, "bytes_sent", (double)m->bytes_sent);
    cJSON_AddNumberToObject(o, "bytes_acked", (double)m->bytes_acked);
    cJSON_AddNumberToObject(o, "bytes_received", (double)m->bytes_received);
    cJSON_AddNumberToObject(o, "bytes_retrans", (double)m->bytes_retrans);
    cJSON_AddNumberToObject(o, "retransmits", m->retransmits);
    arr = cJSON_AddArrayToObject(o, "subflows");
    for (uint32_t i = 0; i < m->nsub && i < MPTCPINFO_MAX_SUB; i++) {
        const struct mptcpinfo_sub *s = &m->sub[i];
        cJSON *so = cJSON_CreateObject();
        add_addr(so, "local", &s->local);
        add_addr(so, "remote", &s->remote);
        cJSON_AddNumberToObject(so, "bytes_sent", (double)s->bytes_sent);
        cJSON_AddNumberToObject(so, "bytes_acked", (double)s->bytes_acked);
        cJSON_AddNumberToObject(so, "bytes_received", (double)s->bytes_received);
        cJSON_AddNumberToObject(so, "retransmits", s->retransmits);
        cJSON_AddNumberToObject(so, "rtt_us", s->rtt_us);
        cJSON_AddItemToArray(arr, so);
    }
    return o;
}

void result_json_mptcp_add_interval_flow(cJSON *f, const struct side_result *s,
                                         const struct interval *iv, uint32_t i)
{
    uintptr_t at = (uintptr_t)iv, first = (uintptr_t)s->intervals;
    const struct interval_mptcp *c;
    size_t k;
    cJSON *arr;

    if (!s->mptcp_cells || i >= s->nflows || at < first)
        return;
    k = (at - first) / sizeof(*iv); /* iv is s->intervals[k] (else nothing to add) */
    if (k >= s->cap_intervals || &s->intervals[k] != iv)
        return;
    c = &s->mptcp_cells[k * s->nflows + i];
    arr = cJSON_AddArrayToObject(f, "mptcp_subflows");
    for (uint32_t j = 0; j < c->n && j < MPTCPINFO_MAX_SUB; j++) {
        cJSON *so = cJSON_CreateObject();
        add_addr(so, "local", &c->sub[j].local);
        add_addr(so, "remote", &c->sub[j].remote);
        cJSON_AddNumberToObject(so, "bytes_acked", (double)c->sub[j].bytes_acked);
        cJSON_AddNumberToObject(so, "bytes_received", (double)c->sub[j].bytes_received);
        cJSON_AddItemToArray(arr, so);
    }
}

static const struct mptcpinfo *side_mp(const struct side_result *s, uint32_t id)
{
    return s->mptcp && id < s->nmptcp ? &s->mptcp[id] : NULL;
}

void result_json_mptcp_add_run_flow(cJSON *o, const struct run_result *r, uint32_t id)
{
    cJSON *m;

    if (!test_kind_is(&r->params, TEST_KIND_MPTCP))
        return;
    m = cJSON_AddObjectToObject(o, "mptcp");
    cJSON_AddItemToObject(m, "client", result_json_mptcp(side_mp(&r->local, id)));
    cJSON_AddItemToObject(m, "server", result_json_mptcp(side_mp(&r->remote, id)));
}

void result_json_mptcp_add_side_flow(cJSON *fo, const struct side_result *s, uint32_t i)
{
    if (s->mptcp && i < s->nmptcp)
        cJSON_AddItemToObject(fo, "mptcp", result_json_mptcp(&s->mptcp[i]));
}

/* o[key]: absent reads 0; present must be a finite whole number in [0, hi] */
static int whole(const cJSON *o, const char *key, double hi, double *v)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, key);

    *v = 0;
    if (!n)
        return 0;
    if (!cJSON_IsNumber(n) || !isfinite(n->valuedouble) || n->valuedouble < 0 ||
        n->valuedouble > hi || n->valuedouble != floor(n->valuedouble))
        return -EINVAL;
    *v = n->valuedouble;
    return 0;
}

static int u64(const cJSON *o, const char *key, uint64_t *out)
{
    double v;

    if (whole(o, key, U64MAX, &v))
        return -EINVAL;
    *out = (uint64_t)v;
    return 0;
}

static int u32(const cJSON *o, const char *key, uint32_t *out)
{
    double v;

    if (whole(o, key, U32MAX, &v))
        return -EINVAL;
    *out = (uint32_t)v;
    return 0;
}

static int addr(const cJSON *o, const char *key, struct mptcpinfo_addr *a)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    if (!v)
        return 0;
    return cJSON_IsString(v) && strlen(v->valuestring) < 64
               ? mptcpinfo_addr_parse(v->valuestring, a)
               : -EINVAL;
}

static int parse_sub(const cJSON *so, struct mptcpinfo_sub *s)
{
    if (!cJSON_IsObject(so))
        return -EINVAL;
    return addr(so, "local", &s->local) || addr(so, "remote", &s->remote) ||
                   u64(so, "bytes_sent", &s->bytes_sent) ||
                   u64(so, "bytes_acked", &s->bytes_acked) ||
                   u64(so, "bytes_received", &s->bytes_received) ||
                   u32(so, "retransmits", &s->retransmits) || u32(so, "rtt_us", &s->rtt_us)
               ? -EINVAL
               : 0;
}

int result_json_mptcp_parse(const cJSON *o, struct mptcpinfo *out)
{
    const cJSON *arr, *so;
    const cJSON *fb;
    uint32_t n = 0;

    memset(out, 0, sizeof(*out));
    if (!o || cJSON_IsNull(o))
        return 0;
    arr = cJSON_GetObjectItemCaseSensitive(o, "subflows");
    fb = cJSON_GetObjectItemCaseSensitive(o, "fallback");
    if (!cJSON_IsObject(o) || (arr && !cJSON_IsArray(arr)) || (fb && !cJSON_IsBool(fb)) ||
        cJSON_GetArraySize(arr) > MPTCPINFO_MAX_SUB)
        return -EINVAL;
    if (u32(o, "subflow_count", &out->subflows) || u64(o, "bytes_sent", &out->bytes_sent) ||
        u64(o, "bytes_acked", &out->bytes_acked) ||
        u64(o, "bytes_received", &out->bytes_received) ||
        u64(o, "bytes_retrans", &out->bytes_retrans) || u32(o, "retransmits", &out->retransmits))
        goto bad;
    cJSON_ArrayForEach(so, arr)
    {
        if (parse_sub(so, &out->sub[n++]))
            goto bad;
    }
    out->nsub = n;
    out->fallback = cJSON_IsTrue(fb);
    out->valid = true;
    return 0;
bad:
    memset(out, 0, sizeof(*out));
    return -EINVAL;
}

int result_json_mptcp_parse_flows(const cJSON *flows, uint32_t nflows, struct side_result *out)
{
    const cJSON *fo;
    struct mptcpinfo *m = NULL;

    out->mptcp = NULL;
    out->nmptcp = 0;
    cJSON_ArrayForEach(fo, flows)
    {
        const cJSON *mo = cJSON_GetObjectItemCaseSensitive(fo, "mptcp");
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(fo, "id");

        if (!mo)
            continue;
        if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble >= nflows ||
            id->valuedouble != floor(id->valuedouble))
            continue; /* the flows' own parser refuses those */
        if (!m && !(m = calloc(nflows, sizeof(*m))))
            return -ENOMEM;
        if (result_json_mptcp_parse(mo, &m[(uint32_t)id->valuedouble])) {
            free(m);
            return -EINVAL;
        }
    }
    out->mptcp = m;
    out->nmptcp = m ? nflows : 0;
    return 0;
}

/* The run document's flows[].mptcp.client and .server, back into each side (a --from run's
 * document, read for the text report): what does not parse is left out. */
void result_json_mptcp_from_doc(const cJSON *flows, uint32_t nflows, struct side_result *client,
                                struct side_result *server)
{
    const cJSON *fo;
    uint32_t i = 0;

    if (!nflows || !cJSON_IsArray(flows))
        return;
    client->mptcp = calloc(nflows, sizeof(*client->mptcp));
    server->mptcp = calloc(nflows, sizeof(*server->mptcp));
    if (!client->mptcp || !server->mptcp) {
        free(client->mptcp);
        free(server->mptcp);
        client->mptcp = server->mptcp = NULL;
        return;
    }
    client->nmptcp = server->nmptcp = nflows;
    cJSON_ArrayForEach(fo, flows)
    {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(fo, "mptcp");
        if (i == nflows)
            break;
        result_json_mptcp_parse(cJSON_GetObjectItemCaseSensitive(m, "client"), &client->mptcp[i]);
        result_json_mptcp_parse(cJSON_GetObjectItemCaseSensitive(m, "server"), &server->mptcp[i]);
        i++;
    }
}
