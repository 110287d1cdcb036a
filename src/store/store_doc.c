/* store_doc: runs added from their -J documents. */
#include "store_doc.h"
#include "store_priv.h"

#include "metric.h"
#include "test_kind.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const cJSON *item(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = item(o, key);

    return cJSON_IsNumber(v) && isfinite(v->valuedouble) ? v->valuedouble : 0;
}

/* A whole number for an INTEGER column, clamped to what int64_t holds. */
static int64_t whole(const cJSON *o, const char *key)
{
    double v = num(o, key);

    return v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : (int64_t)llround(v);
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = item(o, key);

    return cJSON_IsString(v) ? v->valuestring : "";
}

static int fail(struct store *st, char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "history database '%s': %s: %s", store_path(st), what,
             sqlite3_errmsg(store_sqlite(st)));
    return -EIO;
}

/* Binds types (store_bindv) to s and steps it once, then resets it for the next row. */
static int row(struct store *st, sqlite3_stmt *s, char *err, size_t errlen, const char *types, ...)
{
    va_list ap;
    int rc;

    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    va_start(ap, types);
    rc = store_bindv(s, types, ap);
    va_end(ap);
    if (rc || sqlite3_step(s) != SQLITE_DONE)
        return fail(st, err, errlen, "cannot store a row of a run document");
    return 0;
}

/* "YYYY-MM-DDTHH:MM:SSZ", as netrig writes started_at. */
static bool iso_time(const char *s)
{
    static const char tmpl[] = "0000-00-00T00:00:00Z";

    if (strlen(s) != sizeof(tmpl) - 1)
        return false;
    for (size_t i = 0; tmpl[i]; i++)
        if (tmpl[i] == '0' ? (s[i] < '0' || s[i] > '9') : s[i] != tmpl[i])
            return false;
    return true;
}

static int add_run_row(struct store *st, const cJSON *doc, const struct params *p,
                       const char *title, int64_t *id, char *err, size_t errlen)
{
    cJSON *pj = params_to_json(p);
    char now[32], *params = cJSON_PrintUnformatted(pj), *text = cJSON_PrintUnformatted(doc);
    const char *started = str(doc, "started_at");
    int rc;

    cJSON_Delete(pj);
    store_time_iso(time(NULL), now, sizeof(now));
    if (!params || !text) {
        snprintf(err, errlen, "out of memory storing a run document");
        rc = -ENOMEM;
    } else {
        rc = store_exec(st, err, errlen,
                        "INSERT INTO runs (test, udp, role, title, started_at, saved_at, peer,"
                        " client_version, server_version, partial, error, params, document)"
                        " VALUES (?,?,'client',?,?,?,?,?,?,?,?,?,?)",
                        "tittttttittt", params_test_name(p->test), (int64_t)p->udp,
                        title ? title : p->title, iso_time(started) ? started : now, now,
                        str(doc, "server"), str(doc, "netrig_version"), str(doc, "server_version"),
                        (int64_t)cJSON_IsTrue(item(doc, "partial")), str(doc, "error"), params,
                        text);
        *id = sqlite3_last_insert_rowid(store_sqlite(st));
    }
    free(params);
    free(text);
    return rc;
}

/* One flow of the document's flows[]; columns as store.c's flows rows. */
static int add_flow(struct store *st, sqlite3_stmt *s, int64_t id, const struct params *p,
                    const cJSON *f, char *err, size_t errlen)
{
    const char *dir = str(f, "direction");
    const cJSON *rt = item(f, "retransmits");
    bool ti = cJSON_IsNumber(rt) && rt->valuedouble >= 0;

    if (strcmp(dir, "client_to_server") && strcmp(dir, "server_to_client")) {
        snprintf(err, errlen, "run document: flow %lld has no valid direction ('%.40s')",
                 (long long)whole(f, "id"), dir);
        return -EINVAL;
    }
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_int64(s, 2, whole(f, "id"));
    sqlite3_bind_text(s, 3, dir, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 4, whole(f, "bytes"));
    sqlite3_bind_int64(s, 5, whole(f, "sender_bytes"));
    sqlite3_bind_double(s, 6, num(f, "throughput_bps"));
    sqlite3_bind_double(s, 7, num(f, "sender_throughput_bps"));
    if (ti) {
        static const char *const cols[] = {"retransmits", "rtt_us", "min_rtt_us", "cwnd",
                                           "snd_wnd"};
        for (int c = 0; c < 5; c++)
            sqlite3_bind_int64(s, 8 + c, whole(f, cols[c]));
        sqlite3_bind_double(s, 13, num(f, "delivery_rate_bps"));
        sqlite3_bind_int64(s, 14, whole(f, "busy_us"));
        sqlite3_bind_int64(s, 15, whole(f, "rwnd_limited_us"));
        sqlite3_bind_int64(s, 16, whole(f, "sndbuf_limited_us"));
    }
    sqlite3_bind_int64(s, 17, whole(f, "client_cpu"));
    sqlite3_bind_int64(s, 18, whole(f, "server_cpu"));
    if (params_is_transactional(p)) {
        sqlite3_bind_int64(s, 19, whole(f, "transactions"));
        sqlite3_bind_int64(s, 20, whole(f, "timeouts"));
    }
    if (test_kind_is(p, TEST_KIND_DATAGRAMS)) {
        sqlite3_bind_int64(s, 21, whole(f, "datagrams_sent"));
        sqlite3_bind_int64(s, 22, whole(f, "datagrams_received"));
        sqlite3_bind_int64(s, 23, whole(f, "datagrams_lost"));
        sqlite3_bind_double(s, 24, num(f, "jitter_us"));
    }
    if (sqlite3_step(s) != SQLITE_DONE)
        return fail(st, err, errlen, "cannot store a flow of a run document");
    return 0;
}

static int add_flows(struct store *st, int64_t id, const struct params *p, const cJSON *doc,
                     char *err, size_t errlen)
{
    sqlite3_stmt *s = store_prepare(st,
                                    "INSERT INTO flows VALUES"
                                    " (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                                    err, errlen);
    const cJSON *f;
    int rc = s ? 0 : -EIO;

    cJSON_ArrayForEach(f, item(doc, "flows"))
    {
        if (rc)
            break;
        rc = add_flow(st, s, id, p, f, err, errlen);
    }
    sqlite3_finalize(s);
    return rc;
}

/* The client's per-flow cells of interval seq. */
static int add_cells(struct store *st, sqlite3_stmt *s, int64_t id, uint32_t seq, const cJSON *iv,
                     char *err, size_t errlen)
{
    const cJSON *c;
    int rc = 0;

    cJSON_ArrayForEach(c, item(iv, "flows"))
    {
        if (rc)
            break;
        rc = row(st, s, err, errlen, "iuiiiii", id, seq, whole(c, "id"), whole(c, "bytes"),
                 whole(c, "retransmits"), whole(c, "rtt_us"), whole(c, "cwnd"));
    }
    return rc;
}

/* intervals[] (the client's, with their cells) or server_intervals[]. */
static int add_intervals(struct store *st, int64_t id, const char *side, const cJSON *arr,
                         char *err, size_t errlen)
{
    sqlite3_stmt *s =
        store_prepare(st, "INSERT INTO intervals VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", err, errlen);
    sqlite3_stmt *cs =
        store_prepare(st, "INSERT INTO interval_flows VALUES (?,?,?,?,?,?,?)", err, errlen);
    const cJSON *iv;
    uint32_t seq = 0;
    int rc = s && cs ? 0 : -EIO;

    cJSON_ArrayForEach(iv, arr)
    {
        const cJSON *cpu = item(iv, "cpu");
        double txns = num(iv, "transactions");
        int64_t lat = llround(fmax(0, fmin(num(iv, "latency_mean_us") * 1e3 * txns, 9e18)));
        if (rc)
            break;
        if (cJSON_IsTrue(item(cpu, "valid")))
            rc = row(st, s, err, errlen, "ituddiiiiiid", id, side, seq, num(iv, "start_s"),
                     num(iv, "end_s"), (int64_t)cJSON_IsTrue(item(iv, "omitted")),
                     whole(iv, "sent_bytes"), whole(iv, "received_bytes"), whole(iv, "retransmits"),
                     whole(iv, "transactions"), lat, num(cpu, "busy_pct"));
        else
            rc = row(st, s, err, errlen, "ituddiiiiiin", id, side, seq, num(iv, "start_s"),
                     num(iv, "end_s"), (int64_t)cJSON_IsTrue(item(iv, "omitted")),
                     whole(iv, "sent_bytes"), whole(iv, "received_bytes"), whole(iv, "retransmits"),
                     whole(iv, "transactions"), lat);
        if (!rc && !strcmp(side, "client"))
            rc = add_cells(st, cs, id, seq, iv, err, errlen);
        seq++;
    }
    sqlite3_finalize(s);
    sqlite3_finalize(cs);
    return rc;
}

int store_doc_add(struct store *st, const cJSON *doc, const char *title, int64_t *id, char *err,
                  size_t errlen)
{
    static const char mesh_note[] =
        "the test ran between other hosts, which sent no settings with its results";
    const struct store_doc_hosts none = {.client_note = mesh_note, .server_note = mesh_note};

    return store_doc_add_hosts(st, doc, title, &none, id, err, errlen);
}

int store_doc_add_hosts(struct store *st, const cJSON *doc, const char *title,
                        const struct store_doc_hosts *h, int64_t *id, char *err, size_t errlen)
{
    struct metric_value m[METRIC_MAX];
    struct params p;
    char perr[256];
    size_t nm;

    if (!cJSON_IsObject(doc) || params_from_json(item(doc, "params"), &p, perr, sizeof(perr))) {
        snprintf(err, errlen, "run document: %s", cJSON_IsObject(doc) ? perr : "not an object");
        return -EINVAL;
    }
    nm = metric_from_doc(&p, doc, m, METRIC_MAX);
    if (add_run_row(st, doc, &p, title, id, err, errlen) ||
        store_add_metrics(st, *id, m, nm, err, errlen) ||
        add_flows(st, *id, &p, doc, err, errlen) ||
        add_intervals(st, *id, "client", item(doc, "intervals"), err, errlen) ||
        add_intervals(st, *id, "server", item(doc, "server_intervals"), err, errlen) ||
        store_add_host(st, *id, "client", h->client, h->client_note, err, errlen) ||
        store_add_host(st, *id, "server", h->server, h->server_note, err, errlen))
        return -EIO;
    return 0;
}
