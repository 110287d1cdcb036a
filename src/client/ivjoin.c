/* ivjoin: the client's intervals joined with the server's streamed ones. */
#include "ivjoin.h"

#include "result_json.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct ivjoin {
    const struct run_observer *obs;
    const struct run_result *r;
    struct side_result *side; /* where our intervals are: the engine's, then the result's */
    bool needs_peer;          /* the server sends TCP flows: an interval needs its part */
    bool streams;             /* ... and streams it: ours wait for it */
    uint64_t hold_ns;         /* how long ours wait at most */
    double tol_s;             /* both ends' ends of one interval agree within this */
    uint32_t emitted;         /* our intervals shown: [0, emitted) */
    uint32_t closed;          /* our intervals closed: [0, closed) */
    uint64_t closed_ns[IVJOIN_MAX_HELD];          /* when each held one closed (by index mod) */
    struct peer_interval early[IVJOIN_MAX_EARLY]; /* the server's, ahead of ours */
    bool early_used[IVJOIN_MAX_EARLY];
};

struct ivjoin *ivjoin_new(const struct run_observer *obs, const struct run_result *r, bool streams)
{
    struct ivjoin *j = calloc(1, sizeof(*j));
    double iv_s = r->params.interval_ns / 1e9;

    if (!j)
        return NULL;
    j->obs = obs;
    j->r = r;
    j->needs_peer = result_server_sends_tcp(&r->params);
    j->streams = streams && j->needs_peer;
    /* the server starts half a round trip after us and its message takes another half: an
     * interval and a second covers any path people test over */
    j->hold_ns = r->params.interval_ns + 1000000000ULL;
    j->tol_s = fmax(iv_s / 2, 0.05);
    return j;
}

void ivjoin_free(struct ivjoin *j)
{
    if (!j)
        return;
    for (int i = 0; i < IVJOIN_MAX_EARLY; i++)
        if (j->early_used[i])
            result_peer_interval_fini(&j->early[i]);
    free(j);
}

/* Does the server's interval pi describe our interval iv (the same period, each on its own
 * clock from its own start)? A late sample on one end shifts the numbering: then not. */
static bool same_period(const struct ivjoin *j, const struct interval *iv, double end_s,
                        bool omitted)
{
    return iv->omitted == omitted && fabs(iv->end_s - end_s) <= j->tol_s;
}

static void apply(const struct ivjoin *j, struct interval *iv, const struct peer_interval *pi)
{
    iv->retrans += pi->retrans;
    iv->peer = INTERVAL_PEER_TOTAL;
    if (!pi->has_flows || !iv->flows)
        return;
    for (uint32_t k = 0; k < pi->npairs; k++)
        if (pi->ids[k] < j->side->nflows && !params_flow_client_sends(&j->r->params, pi->ids[k]))
            iv->flows[pi->ids[k]].retrans = pi->flow_retrans[k];
    iv->peer = INTERVAL_PEER_CELLS;
}

/* Shows our held intervals in order: each once the server's part is in, or (unless all) once
 * it has waited hold_ns. */
static void drain(struct ivjoin *j, uint64_t now_ns, bool all)
{
    while (j->emitted < j->closed && j->side && j->emitted < j->side->nintervals) {
        struct interval *iv = &j->side->intervals[j->emitted];
        uint64_t since = j->closed_ns[j->emitted % IVJOIN_MAX_HELD];
        bool full = j->closed - j->emitted >= IVJOIN_MAX_HELD;

        if (iv->peer == INTERVAL_PEER_PENDING && j->streams && !all && !full &&
            now_ns - since < j->hold_ns)
            return;
        run_observer_interval(j->obs, j->r, j->side, iv);
        j->emitted++;
    }
}

void ivjoin_local(struct ivjoin *j, struct side_result *s, struct interval *iv, uint64_t now_ns)
{
    uint32_t k = (uint32_t)(iv - s->intervals);

    j->side = s;
    j->closed = k + 1;
    j->closed_ns[k % IVJOIN_MAX_HELD] = now_ns;
    iv->peer = j->needs_peer ? INTERVAL_PEER_PENDING : INTERVAL_PEER_NONE;
    for (int i = 0; i < IVJOIN_MAX_EARLY && j->needs_peer; i++) {
        if (!j->early_used[i] || j->early[i].index != k)
            continue;
        if (same_period(j, iv, j->early[i].end_s, j->early[i].omitted))
            apply(j, iv, &j->early[i]);
        result_peer_interval_fini(&j->early[i]);
        j->early_used[i] = false;
    }
    drain(j, now_ns, false);
}

/* Keeps the server's interval for ours to come, in place of the oldest when full. */
static void keep_early(struct ivjoin *j, struct peer_interval *pi)
{
    int slot = 0;

    for (int i = 0; i < IVJOIN_MAX_EARLY; i++) {
        if (!j->early_used[i]) {
            slot = i;
            break;
        }
        if (j->early[i].index < j->early[slot].index)
            slot = i;
    }
    if (j->early_used[slot])
        result_peer_interval_fini(&j->early[slot]);
    j->early[slot] = *pi;
    j->early_used[slot] = true;
}

int ivjoin_remote(struct ivjoin *j, const cJSON *msg, uint64_t now_ns)
{
    struct peer_interval pi;
    uint32_t nflows = params_total_flows(&j->r->params);

    if (!j->needs_peer || result_json_peer_interval_parse(msg, nflows, 10000000, &pi))
        return -EINVAL;
    if (pi.index < j->closed && j->side && pi.index < j->side->nintervals) {
        /* ours is closed: shown already (its count is still filled in) or waiting */
        struct interval *iv = &j->side->intervals[pi.index];
        if (iv->peer == INTERVAL_PEER_PENDING && same_period(j, iv, pi.end_s, pi.omitted))
            apply(j, iv, &pi);
        result_peer_interval_fini(&pi);
    } else {
        keep_early(j, &pi);
    }
    drain(j, now_ns, false);
    return 0;
}

void ivjoin_rebase(struct ivjoin *j, struct side_result *s) { j->side = s; }

/* The server's interval for the same period as iv: the same number when the lists line up,
 * else the one ending nearest (the server sends its last 100,000 only). */
static const struct interval *match_final(const struct ivjoin *j, const struct side_result *rem,
                                          uint32_t k, const struct interval *iv)
{
    uint32_t lo = 0, hi = rem->nintervals;

    if (k < rem->nintervals &&
        same_period(j, iv, rem->intervals[k].end_s, rem->intervals[k].omitted))
        return &rem->intervals[k];
    while (lo < hi) { /* the first ending at or after ours */
        uint32_t mid = lo + (hi - lo) / 2;
        if (rem->intervals[mid].end_s < iv->end_s)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (uint32_t c = lo > 0 ? lo - 1 : 0; c <= lo && c < rem->nintervals; c++)
        if (same_period(j, iv, rem->intervals[c].end_s, rem->intervals[c].omitted))
            return &rem->intervals[c];
    return NULL;
}

void ivjoin_finish(struct ivjoin *j, const struct side_result *remote)
{
    struct side_result *s = j->side;

    for (uint32_t k = 0; s && remote && remote->valid && k < s->nintervals; k++) {
        struct interval *iv = &s->intervals[k];
        const struct interval *m;
        if (iv->peer != INTERVAL_PEER_PENDING || !(m = match_final(j, remote, k, iv)))
            continue;
        iv->retrans += m->retrans;
        iv->peer = INTERVAL_PEER_TOTAL;
    }
    drain(j, 0, true);
}
