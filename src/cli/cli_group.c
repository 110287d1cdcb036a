/* cli_group: the runs one command measured together — against several servers at once (`-c A
 * -c B`) or through another host's daemon (`--from A -c B`) — saved as a group of ordinary
 * runs, and a stored group shown again (`netrig show group:N`). */
#include "cli.h"
#include "test_kind.h"

#include "hostsnap.h"
#include "metric.h"
#include "multi.h"
#include "report_json.h"
#include "result_json.h"
#include "store.h"
#include "store_doc.h"
#include "store_group.h"
#include "store_run.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void say_saved(FILE *note, int64_t group, int64_t first, int64_t last)
{
    if (!note)
        return;
    if (first == last)
        fprintf(note, "saved as run %lld in group %lld (netrig show group:%lld)\n",
                (long long)first, (long long)group, (long long)group);
    else
        fprintf(note, "saved as runs %lld-%lld in group %lld (netrig show group:%lld)\n",
                (long long)first, (long long)last, (long long)group, (long long)group);
}

static char *json_text(cJSON *o)
{
    char *t = o ? cJSON_PrintUnformatted(o) : NULL;

    cJSON_Delete(o);
    return t;
}

/* The group row of a multi-target run: every target's outcome and the totals. */
static int multi_group(const struct multi_result *m, struct store_group *g)
{
    cJSON *doc = report_json_multi(m), *targets = cJSON_CreateArray(), *sum;

    memset(g, 0, sizeof(*g));
    snprintf(g->kind, sizeof(g->kind), "multi");
    for (uint32_t t = 0; t < m->n; t++) {
        const struct run_result *r = &m->runs[t];
        cJSON *o = cJSON_CreateObject();
        char where[300];
        snprintf(where, sizeof(where), "%s:%u", m->targets[t].host, m->targets[t].port);
        cJSON_AddStringToObject(o, "target", where);
        cJSON_AddStringToObject(o, "status",
                                m->rc[t] == 0  ? "complete"
                                : m->rc[t] > 0 ? "partial"
                                               : "failed");
        cJSON_AddStringToObject(o, "error", m->rc[t] ? m->err[t] : "");
        cJSON_AddNumberToObject(o, "clock_offset_us", (double)m->offset_ns[t] / 1e3);
        cJSON_AddNumberToObject(o, "clock_probe_rtt_us", (double)m->rtt_ns[t] / 1e3);
        cJSON_AddItemToArray(targets, o);
        if (m->rc[t] < 0)
            continue;
        if (!g->test[0])
            snprintf(g->test, sizeof(g->test), "%s", r->test);
        if (!g->started_at[0] || strcmp(r->started_at, g->started_at) < 0)
            snprintf(g->started_at, sizeof(g->started_at), "%s", r->started_at);
    }
    sum = cJSON_DetachItemFromObjectCaseSensitive(doc, "summary");
    cJSON_Delete(doc);
    g->targets = json_text(targets);
    g->summary = json_text(sum);
    return g->targets && g->summary ? 0 : -1;
}

long long cli_history_save_multi(const char *db, const struct multi_result *m, FILE *note)
{
    struct hostsnap *hs = hostsnap_new();
    struct store_group g;
    struct store *st = NULL;
    int64_t gid = 0, id = 0, first = 0;
    char err[512] = "out of memory";
    int rc = hs && !multi_group(m, &g) ? 0 : -1;

    if (!rc && !g.test[0]) { /* no target measured anything: nothing to keep */
        store_group_free(&g);
        hostsnap_free(hs);
        return 0;
    }
    if (!rc) {
        hostsnap_take(NULL, hs); /* this host's, for every target's run */
        st = cli_history_begin_save(db, err, sizeof(err));
        rc = st ? 0 : -1;
    }
    if (!rc)
        rc = store_group_create(st, &g, &gid, err, sizeof(err));
    for (uint32_t t = 0; !rc && t < m->n; t++) {
        if (m->rc[t] < 0)
            continue;
        rc = store_add_run(st, &m->runs[t], hs, 0, &id, err, sizeof(err));
        if (!rc)
            rc = store_group_add_run(st, gid, t, id, err, sizeof(err));
        if (!first)
            first = id;
    }
    rc = cli_history_finish_save(st, rc, db, "the runs were", err, sizeof(err));
    if (!rc)
        say_saved(note, gid, first, id);
    store_group_free(&g);
    hostsnap_free(hs);
    return rc ? 0 : gid;
}

/* One end's settings from a run_result message (result_json_host_parse), with the reason
 * when there are none. */
static void peer_host(const cJSON *msg, const char *key, const char *who, const char *fallback,
                      struct hostsnap **hs, char *note, size_t notelen)
{
    if (result_json_host_parse(msg, key, who, hs, note, notelen) == 0 && !note[0])
        snprintf(note, notelen, "%s", fallback);
}

long long cli_history_save_third_party(const char *db, const char *from, const char *target,
                                       const cJSON *msg, FILE *note)
{
    const cJSON *doc = cJSON_GetObjectItemCaseSensitive(msg, "result");
    const cJSON *st_msg = cJSON_GetObjectItemCaseSensitive(msg, "status");
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(msg, "message");
    struct hostsnap *chs = NULL, *shs = NULL;
    char cwho[320], cnote[400], snote[400], cfall[400], err[512] = "out of memory";
    struct store_doc_hosts h;
    struct store_group g = {0};
    cJSON *targets, *t;
    struct store *st = NULL;
    int64_t gid = 0, id = 0;
    int rc;

    if (!cJSON_IsObject(doc)) /* the daemon ran nothing: nothing to keep */
        return 0;
    snprintf(cwho, sizeof(cwho), "the daemon at %s", from);
    snprintf(cfall, sizeof(cfall), "%s did not send its settings", cwho);
    peer_host(msg, "client_host", cwho, cfall, &chs, cnote, sizeof(cnote));
    peer_host(msg, "server_host", "the server", "the server did not send its settings", &shs, snote,
              sizeof(snote));
    h = (struct store_doc_hosts){chs, shs, cnote, snote};
    snprintf(g.kind, sizeof(g.kind), "third_party");
    snprintf(g.source, sizeof(g.source), "%s", from);
    t = cJSON_CreateObject();
    cJSON_AddStringToObject(t, "target", target);
    cJSON_AddStringToObject(t, "status", cJSON_IsString(st_msg) ? st_msg->valuestring : "?");
    cJSON_AddStringToObject(t, "error", cJSON_IsString(why) ? why->valuestring : "");
    targets = cJSON_CreateArray();
    cJSON_AddItemToArray(targets, t);
    g.targets = json_text(targets);
    st = g.targets ? cli_history_begin_save(db, err, sizeof(err)) : NULL;
    rc = st ? 0 : -1;
    if (!rc)
        rc = store_doc_add_hosts(st, doc, NULL, &h, &id, err, sizeof(err));
    if (!rc) { /* the group's test and start are the run's, as its document gives them */
        struct store_run r;
        rc = store_run_get(st, id, &r, err, sizeof(err));
        snprintf(g.test, sizeof(g.test), "%s", r.test);
        snprintf(g.started_at, sizeof(g.started_at), "%s", r.started_at);
    }
    if (!rc)
        rc = store_group_create(st, &g, &gid, err, sizeof(err));
    if (!rc)
        rc = store_group_add_run(st, gid, 0, id, err, sizeof(err));
    rc = cli_history_finish_save(st, rc, db, "the runs were", err, sizeof(err));
    if (!rc)
        say_saved(note, gid, id, id);
    store_group_free(&g);
    hostsnap_free(chs);
    hostsnap_free(shs);
    return rc ? 0 : gid;
}

/* ---- show group:N ---- */

/* The run of target idx, or 0. */
struct group_runs {
    int64_t *run; /* by target number */
    uint32_t n;
};

static int note_run(int64_t run, uint32_t idx, void *arg)
{
    struct group_runs *gr = arg;

    if (idx < gr->n && !gr->run[idx])
        gr->run[idx] = run;
    return 0;
}

/* "12345.6 transactions/s, p99 41.2 us" or "9.41 Gbit/s, 12 retransmits". */
static void run_result_text(struct store *st, int64_t id, const char *test, char *buf, size_t len)
{
    const struct metric_def *d = metric_find(metric_primary(test));
    double v, x;
    size_t l;

    buf[0] = '\0';
    if (!d || store_run_metric(st, id, d->name, &v))
        return;
    metric_format(d, v, buf, len);
    l = strlen(buf);
    if (!test_kind_named_is(test, TEST_KIND_BULK) &&
        !store_run_metric(st, id, "latency_p99_us", &x))
        snprintf(buf + l, len - l, ", p99 %.1f us", x);
    else if (test_kind_named_is(test, TEST_KIND_BULK) &&
             !store_run_metric(st, id, "retransmits", &x))
        snprintf(buf + l, len - l, ", %.0f retransmits", x);
}

static const char *jstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    return cJSON_IsString(v) ? v->valuestring : "";
}

static double jnum(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static void show_group_text(struct store *st, const struct store_group *g, const cJSON *targets,
                            const cJSON *sum, const struct group_runs *gr, FILE *out)
{
    const cJSON *t;
    uint32_t i = 0;

    fprintf(out, "group %lld: %s %s, started %s\n", (long long)g->id, g->test,
            strcmp(g->kind, "multi") ? "run by another host's daemon (--from)"
                                     : "against several servers at once (-c A -c B)",
            g->started_at);
    if (g->source[0])
        fprintf(out, "  run by the daemon at %s\n", g->source);
    fprintf(out, "%4s %-28s %-9s %6s  %s\n", "#", "target", "status", "run", "result");
    cJSON_ArrayForEach(t, targets)
    {
        char res[128] = "", run[24] = "-";
        int64_t id = i < gr->n ? gr->run[i] : 0;
        if (id) {
            snprintf(run, sizeof(run), "%lld", (long long)id);
            run_result_text(st, id, g->test, res, sizeof(res));
        }
        fprintf(out, "%4u %-28.28s %-9s %6s  %s\n", i, jstr(t, "target"), jstr(t, "status"), run,
                res);
        if (jstr(t, "error")[0])
            fprintf(out, "       %s\n", jstr(t, "error"));
        i++;
    }
    if (!strcmp(g->kind, "multi")) {
        const struct metric_def *d = metric_find(metric_primary(g->test));
        char v[64] = "";
        if (d)
            metric_format(d,
                          jnum(sum, test_kind_named_is(g->test, TEST_KIND_BULK)
                                        ? "throughput_bps"
                                        : "transactions_per_s"),
                          v, sizeof(v));
        fprintf(out,
                "Total       %s over %.0f of %.0f targets, %.0f flows; Jain's index %.4f; "
                "%.0f retransmits\n            started within %.1f us of each other\n",
                v, jnum(sum, "targets_ok"), jnum(sum, "targets"), jnum(sum, "flows"),
                jnum(sum, "jain_index"), jnum(sum, "retransmits"), jnum(sum, "start_spread_us"));
    }
    fprintf(out, "compare or export its runs as group:%lld (netrig show RUN for each)\n",
            (long long)g->id);
}

static cJSON *group_json(const struct store_group *g, cJSON *targets, cJSON *sum,
                         const struct group_runs *gr)
{
    cJSON *o = cJSON_CreateObject(), *t;
    uint32_t i = 0;

    cJSON_AddNumberToObject(o, "group", (double)g->id);
    cJSON_AddStringToObject(o, "kind", g->kind);
    cJSON_AddStringToObject(o, "test", g->test);
    cJSON_AddStringToObject(o, "started_at", g->started_at);
    cJSON_AddStringToObject(o, "from", g->source);
    cJSON_ArrayForEach(t, targets)
    {
        int64_t id = i < gr->n ? gr->run[i] : 0;
        cJSON_DeleteItemFromObjectCaseSensitive(t, "run");
        if (id)
            cJSON_AddNumberToObject(t, "run", (double)id);
        else
            cJSON_AddNullToObject(t, "run");
        i++;
    }
    cJSON_AddItemToObject(o, "targets", targets);
    cJSON_AddItemToObject(o, "summary", sum);
    return o;
}

int cli_group_show(struct store *st, long long id, bool json, FILE *out)
{
    struct store_group g;
    struct group_runs gr = {0};
    cJSON *targets, *sum;
    char err[512];

    if (store_group_get(st, id, &g, err, sizeof(err))) {
        cli_error("%s", err);
        return -1;
    }
    targets = cJSON_Parse(g.targets);
    sum = cJSON_Parse(g.summary);
    if (!cJSON_IsArray(targets))
        cJSON_Delete(targets), targets = cJSON_CreateArray();
    if (!cJSON_IsObject(sum))
        cJSON_Delete(sum), sum = cJSON_CreateObject();
    gr.n = (uint32_t)cJSON_GetArraySize(targets);
    gr.run = calloc(gr.n ? gr.n : 1, sizeof(*gr.run));
    if (gr.run)
        store_group_runs(st, id, note_run, &gr);
    else
        gr.n = 0;
    if (json) {
        cJSON *doc = group_json(&g, targets, sum, &gr);
        char *text = doc ? cJSON_Print(doc) : NULL;
        if (text)
            fprintf(out, "%s\n", text);
        free(text);
        cJSON_Delete(doc);
    } else {
        show_group_text(st, &g, targets, sum, &gr, out);
        cJSON_Delete(targets);
        cJSON_Delete(sum);
    }
    free(gr.run);
    store_group_free(&g);
    return 0;
}
