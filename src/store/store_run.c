/* store_run: queries over stored runs, and run-set names. */
#include "store_run.h"
#include "store_priv.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUN_COLS                                                                                   \
    "r.id, r.test, r.udp, r.role, r.title, r.started_at, r.peer, r.client_version,"                \
    " r.server_version, r.partial, r.error, coalesce(r.sweep_point_id, 0),"                        \
    " coalesce((SELECT group_concat(name, ',') FROM tags t WHERE t.run_id = r.id), ''),"           \
    " coalesce(mc.mesh_id, 0), coalesce(mc.source, ''), coalesce(mc.destination, ''),"             \
    " coalesce(r.group_id, 0), coalesce(r.group_idx, 0), coalesce(g.kind, ''),"                    \
    " coalesce(g.source, '')"
/* a run is the cell of at most one mesh, in at most one group */
#define RUN_FROM                                                                                   \
    " FROM runs r LEFT JOIN mesh_cells mc ON mc.run_id = r.id"                                     \
    " LEFT JOIN run_groups g ON g.id = r.group_id"

static void col_str(sqlite3_stmt *s, int c, char *dst, size_t len)
{
    const unsigned char *t = sqlite3_column_text(s, c);

    snprintf(dst, len, "%s", t ? (const char *)t : "");
}

static void read_run(sqlite3_stmt *s, struct store_run *r)
{
    memset(r, 0, sizeof(*r));
    r->id = sqlite3_column_int64(s, 0);
    col_str(s, 1, r->test, sizeof(r->test));
    r->udp = sqlite3_column_int(s, 2) != 0;
    col_str(s, 3, r->role, sizeof(r->role));
    col_str(s, 4, r->title, sizeof(r->title));
    col_str(s, 5, r->started_at, sizeof(r->started_at));
    col_str(s, 6, r->peer, sizeof(r->peer));
    col_str(s, 7, r->client_version, sizeof(r->client_version));
    col_str(s, 8, r->server_version, sizeof(r->server_version));
    r->partial = sqlite3_column_int(s, 9) != 0;
    col_str(s, 10, r->error, sizeof(r->error));
    r->sweep_point = sqlite3_column_int64(s, 11);
    col_str(s, 12, r->tags, sizeof(r->tags));
    r->mesh = sqlite3_column_int64(s, 13);
    col_str(s, 14, r->mesh_source, sizeof(r->mesh_source));
    col_str(s, 15, r->mesh_destination, sizeof(r->mesh_destination));
    r->group = sqlite3_column_int64(s, 16);
    r->group_idx = (uint32_t)sqlite3_column_int64(s, 17);
    col_str(s, 18, r->group_kind, sizeof(r->group_kind));
    col_str(s, 19, r->group_source, sizeof(r->group_source));
}

static bool has_wildcard(const char *s) { return strpbrk(s, "*?[") != NULL; }

int store_run_list(struct store *st, const struct store_run_filter *f,
                   int (*fn)(const struct store_run *r, void *arg), void *arg, char *err,
                   size_t errlen)
{
    char sql[1024];
    sqlite3_stmt *s;
    struct store_run r;
    int rc = 0, step, bind = 1;

    snprintf(sql, sizeof(sql),
             "SELECT * FROM (SELECT " RUN_COLS RUN_FROM " WHERE 1 %s %s %s"
             " ORDER BY r.id DESC LIMIT ?) ORDER BY 1",
             !f->title                ? ""
             : has_wildcard(f->title) ? "AND r.title GLOB ?"
                                      : "AND instr(lower(r.title), lower(?)) > 0",
             f->since ? "AND r.started_at >= ?" : "",
             f->tag ? "AND r.id IN (SELECT run_id FROM tags WHERE name = ?)" : "");
    s = store_prepare(st, sql, err, errlen);
    if (!s)
        return -EIO;
    if (f->title)
        sqlite3_bind_text(s, bind++, f->title, -1, SQLITE_STATIC);
    if (f->since)
        sqlite3_bind_text(s, bind++, f->since, -1, SQLITE_STATIC);
    if (f->tag)
        sqlite3_bind_text(s, bind++, f->tag, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, bind, f->last ? (int64_t)f->last : -1);
    while (!rc && (step = sqlite3_step(s)) == SQLITE_ROW) {
        read_run(s, &r);
        rc = fn(&r, arg);
    }
    if (!rc && step != SQLITE_DONE) {
        snprintf(err, errlen, "cannot read the history: %s", sqlite3_errmsg(store_sqlite(st)));
        rc = -EIO;
    }
    sqlite3_finalize(s);
    return rc;
}

int store_run_get(struct store *st, int64_t id, struct store_run *out, char *err, size_t errlen)
{
    sqlite3_stmt *s = store_prepare(st, "SELECT " RUN_COLS RUN_FROM " WHERE r.id = ?", err, errlen);
    int rc = -ENOENT;

    if (!s)
        return -EIO;
    sqlite3_bind_int64(s, 1, id);
    if (sqlite3_step(s) == SQLITE_ROW) {
        read_run(s, out);
        rc = 0;
    } else {
        snprintf(err, errlen, "no run %lld in '%s': see 'netrig history'", (long long)id,
                 store_path(st));
    }
    sqlite3_finalize(s);
    return rc;
}

size_t store_run_metrics(struct store *st, int64_t id, struct metric_value *out, size_t max)
{
    size_t nd, n = 0;
    const struct metric_def *defs = metric_all(&nd);
    sqlite3_stmt *s;
    char err[256];

    s = store_prepare(st, "SELECT value FROM metrics WHERE run_id = ? AND name = ?", err,
                      sizeof(err));
    if (!s)
        return 0;
    for (size_t i = 0; i < nd && n < max; i++) {
        sqlite3_reset(s);
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_text(s, 2, defs[i].name, -1, SQLITE_STATIC);
        if (sqlite3_step(s) == SQLITE_ROW)
            out[n++] = (struct metric_value){&defs[i], sqlite3_column_double(s, 0)};
    }
    sqlite3_finalize(s);
    return n;
}

int store_run_metric(struct store *st, int64_t id, const char *name, double *out)
{
    char err[256];
    sqlite3_stmt *s = store_prepare(st, "SELECT value FROM metrics WHERE run_id = ? AND name = ?",
                                    err, sizeof(err));
    int rc = -ENOENT;

    if (!s)
        return -EIO;
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW) {
        *out = sqlite3_column_double(s, 0);
        rc = 0;
    }
    sqlite3_finalize(s);
    return rc;
}

int store_run_host_side(struct store *st, int64_t id, const char *side, struct hostsnap *hs,
                        char *note, size_t notelen)
{
    char err[256];
    sqlite3_stmt *s = store_prepare(st,
                                    "SELECT recorded, note FROM host_sides"
                                    " WHERE run_id = ? AND side = ?",
                                    err, sizeof(err));
    int rc = 0;

    hostsnap_clear(hs);
    snprintf(note, notelen, "no snapshot was stored with this run");
    if (!s)
        return -EIO;
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_text(s, 2, side, -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW) {
        rc = sqlite3_column_int(s, 0) != 0;
        col_str(s, 1, note, notelen);
    }
    sqlite3_finalize(s);
    if (!rc)
        return 0;
    s = store_prepare(st, "SELECT key, value FROM host WHERE run_id = ? AND side = ?", err,
                      sizeof(err));
    if (!s)
        return -EIO;
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_text(s, 2, side, -1, SQLITE_STATIC);
    while (sqlite3_step(s) == SQLITE_ROW)
        hostsnap_set(hs, (const char *)sqlite3_column_text(s, 0),
                     (const char *)sqlite3_column_text(s, 1));
    sqlite3_finalize(s);
    note[0] = '\0';
    return 1;
}

void store_run_host(struct store *st, int64_t id, struct hostsnap *hs)
{
    char err[256], role[8] = "client", note[8];
    sqlite3_stmt *s = store_prepare(st, "SELECT role FROM runs WHERE id = ?", err, sizeof(err));

    if (s) {
        sqlite3_bind_int64(s, 1, id);
        if (sqlite3_step(s) == SQLITE_ROW)
            col_str(s, 0, role, sizeof(role));
        sqlite3_finalize(s);
    }
    store_run_host_side(st, id, strcmp(role, "server") ? "client" : "server", hs, note,
                        sizeof(note));
}

/* One text column of a run (malloc'd), or NULL. */
static char *run_text(struct store *st, int64_t id, const char *sql)
{
    char err[256], *doc = NULL;
    sqlite3_stmt *s = store_prepare(st, sql, err, sizeof(err));

    if (!s)
        return NULL;
    sqlite3_bind_int64(s, 1, id);
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
        doc = strdup((const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    return doc;
}

char *store_run_params(struct store *st, int64_t id)
{
    return run_text(st, id, "SELECT params FROM runs WHERE id = ?");
}

char *store_run_document(struct store *st, int64_t id)
{
    return run_text(st, id, "SELECT document FROM runs WHERE id = ?");
}

int store_run_intervals(struct store *st, int64_t id, const char *side,
                        int (*fn)(const struct store_interval *iv, void *arg), void *arg)
{
    char err[256];
    sqlite3_stmt *s = store_prepare(
        st,
        "SELECT seq, start_s, end_s, omitted, sent_bytes, received_bytes, retransmits,"
        " transactions, latency_sum_ns, coalesce(cpu_busy_pct, -1) FROM intervals"
        " WHERE run_id = ? AND side = ? ORDER BY seq",
        err, sizeof(err));
    struct store_interval iv;
    int rc = 0;

    if (!s)
        return -EIO;
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_text(s, 2, side, -1, SQLITE_STATIC);
    while (!rc && sqlite3_step(s) == SQLITE_ROW) {
        iv.seq = (uint32_t)sqlite3_column_int64(s, 0);
        iv.start_s = sqlite3_column_double(s, 1);
        iv.end_s = sqlite3_column_double(s, 2);
        iv.omitted = sqlite3_column_int(s, 3) != 0;
        iv.sent_bytes = (uint64_t)sqlite3_column_int64(s, 4);
        iv.recv_bytes = (uint64_t)sqlite3_column_int64(s, 5);
        iv.retrans = (uint32_t)sqlite3_column_int64(s, 6);
        iv.txns = (uint64_t)sqlite3_column_int64(s, 7);
        iv.lat_sum_ns = (uint64_t)sqlite3_column_int64(s, 8);
        iv.cpu_busy_pct = sqlite3_column_double(s, 9);
        rc = fn(&iv, arg);
    }
    sqlite3_finalize(s);
    return rc;
}

int store_run_cells(struct store *st, int64_t id,
                    int (*fn)(uint32_t seq, uint32_t flow, uint64_t bytes, uint32_t retrans,
                              void *arg),
                    void *arg)
{
    char err[256];
    sqlite3_stmt *s = store_prepare(st,
                                    "SELECT seq, flow, bytes, retransmits FROM interval_flows"
                                    " WHERE run_id = ? ORDER BY seq, flow",
                                    err, sizeof(err));
    int rc = 0;

    if (!s)
        return -EIO;
    sqlite3_bind_int64(s, 1, id);
    while (!rc && sqlite3_step(s) == SQLITE_ROW)
        rc = fn((uint32_t)sqlite3_column_int64(s, 0), (uint32_t)sqlite3_column_int64(s, 1),
                (uint64_t)sqlite3_column_int64(s, 2), (uint32_t)sqlite3_column_int64(s, 3), arg);
    sqlite3_finalize(s);
    return rc;
}

int store_run_latency(struct store *st, int64_t id,
                      int (*fn)(uint64_t lo_ns, uint64_t hi_ns, uint64_t count, void *arg),
                      void *arg)
{
    char err[256];
    sqlite3_stmt *s = store_prepare(st,
                                    "SELECT lo_ns, hi_ns, count FROM latency"
                                    " WHERE run_id = ? ORDER BY lo_ns",
                                    err, sizeof(err));
    int rc = 0;

    if (!s)
        return -EIO;
    sqlite3_bind_int64(s, 1, id);
    while (!rc && sqlite3_step(s) == SQLITE_ROW)
        rc = fn((uint64_t)sqlite3_column_int64(s, 0), (uint64_t)sqlite3_column_int64(s, 1),
                (uint64_t)sqlite3_column_int64(s, 2), arg);
    sqlite3_finalize(s);
    return rc;
}

static int64_t col_opt(sqlite3_stmt *s, int c)
{
    return sqlite3_column_type(s, c) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, c);
}

int store_run_flows(struct store *st, int64_t id, int (*fn)(const struct store_flow *f, void *arg),
                    void *arg)
{
    char err[256];
    sqlite3_stmt *s =
        store_prepare(st,
                      "SELECT flow, direction, max(bytes, sender_bytes), max(throughput_bps,"
                      " sender_throughput_bps), retransmits, rtt_us, cwnd, transactions FROM flows"
                      " WHERE run_id = ? ORDER BY flow",
                      err, sizeof(err));
    struct store_flow f;
    int rc = 0;

    if (!s)
        return -EIO;
    sqlite3_bind_int64(s, 1, id);
    while (!rc && sqlite3_step(s) == SQLITE_ROW) {
        f.flow = (uint32_t)sqlite3_column_int64(s, 0);
        col_str(s, 1, f.direction, sizeof(f.direction));
        f.bytes = (uint64_t)sqlite3_column_int64(s, 2);
        f.throughput_bps = sqlite3_column_double(s, 3);
        f.retransmits = col_opt(s, 4);
        f.rtt_us = col_opt(s, 5);
        f.cwnd = col_opt(s, 6);
        f.transactions = col_opt(s, 7);
        rc = fn(&f, arg);
    }
    sqlite3_finalize(s);
    return rc;
}

/* ---- run sets ---- */

struct idset {
    int64_t *v;
    size_t n, cap;
};

static int idset_add(struct idset *s, int64_t id)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == id)
            return 0;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        int64_t *v = realloc(s->v, cap * sizeof(*v));
        if (!v)
            return -ENOMEM;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = id;
    return 0;
}

/* Adds the ids a query returns; -ENOENT when it returns none. */
static int add_query(struct store *st, struct idset *set, const char *sql, const char *types, ...)
{
    char err[256];
    sqlite3_stmt *s = store_prepare(st, sql, err, sizeof(err));
    va_list ap;
    size_t rows = 0;
    int rc = 0;

    if (!s)
        return -EIO;
    va_start(ap, types);
    store_bindv(s, types, ap);
    va_end(ap);
    while (!rc && sqlite3_step(s) == SQLITE_ROW) {
        rc = idset_add(set, sqlite3_column_int64(s, 0));
        rows++;
    }
    sqlite3_finalize(s);
    return rc ? rc : rows ? 0 : -ENOENT;
}

static bool all_digits(const char *s, size_t n)
{
    if (n == 0 || n > 18)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    return true;
}

enum store_run_ref store_run_ref_parse(const char *s, int64_t *id)
{
    static const struct {
        const char *prefix;
        enum store_run_ref kind;
    } refs[] = {{"sweep:", STORE_RUN_REF_SWEEP},
                {"mesh:", STORE_RUN_REF_MESH},
                {"group:", STORE_RUN_REF_GROUP}};

    *id = 0;
    for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
        size_t n = strlen(refs[i].prefix);
        const char *num = s + n;
        int64_t v;

        if (strncmp(s, refs[i].prefix, n) || !all_digits(num, strlen(num)))
            continue;
        v = strtoll(num, NULL, 10); /* at most 18 digits: no overflow */
        if (!v)
            return STORE_RUN_REF_NONE;
        *id = v;
        return refs[i].kind;
    }
    return STORE_RUN_REF_NONE;
}

/* The query and the "has no runs" error of a sweep, mesh or group. */
static int resolve_ref(struct store *st, enum store_run_ref kind, int64_t id, struct idset *set,
                       char *err, size_t errlen)
{
    static const char *const sql[] = {
        [STORE_RUN_REF_SWEEP] = "SELECT r.id FROM runs r JOIN sweep_points p"
                                " ON r.sweep_point_id = p.id WHERE p.sweep_id = ? ORDER BY r.id",
        [STORE_RUN_REF_MESH] = "SELECT run_id FROM mesh_cells WHERE mesh_id = ?"
                               " AND run_id IS NOT NULL ORDER BY run_id",
        [STORE_RUN_REF_GROUP] = "SELECT id FROM runs WHERE group_id = ? ORDER BY group_idx, id",
    };
    static const char *const name[] = {[STORE_RUN_REF_SWEEP] = "sweep",
                                       [STORE_RUN_REF_MESH] = "mesh",
                                       [STORE_RUN_REF_GROUP] = "group"};
    int rc = add_query(st, set, sql[kind], "i", id);

    if (rc == -ENOENT)
        snprintf(err, errlen, "%s %lld has no runs: see 'netrig history%s'", name[kind],
                 (long long)id, kind == STORE_RUN_REF_MESH ? " --meshes" : "");
    return rc;
}

/* One item of a run set. */
static int resolve_item(struct store *st, const char *item, struct idset *set, char *err,
                        size_t errlen)
{
    const char *dash = strchr(item, '-');
    size_t len = strlen(item);
    enum store_run_ref kind;
    int64_t ref;
    int rc;

    if (all_digits(item, len)) {
        rc = add_query(st, set, "SELECT id FROM runs WHERE id = ?", "i",
                       (int64_t)strtoll(item, NULL, 10));
        if (rc == -ENOENT)
            snprintf(err, errlen, "no run %s in '%s': see 'netrig history'", item, store_path(st));
    } else if (dash && all_digits(item, (size_t)(dash - item)) &&
               all_digits(dash + 1, strlen(dash + 1))) {
        rc = add_query(st, set, "SELECT id FROM runs WHERE id BETWEEN ? AND ? ORDER BY id", "ii",
                       (int64_t)strtoll(item, NULL, 10), (int64_t)strtoll(dash + 1, NULL, 10));
        if (rc == -ENOENT)
            snprintf(err, errlen, "no runs in range %s: see 'netrig history'", item);
    } else if (!strcmp(item, "last")) {
        rc = add_query(st, set, "SELECT max(id) FROM runs HAVING count(*) > 0", "");
        if (rc == -ENOENT)
            snprintf(err, errlen, "the history '%s' holds no runs yet", store_path(st));
    } else if ((kind = store_run_ref_parse(item, &ref)) != STORE_RUN_REF_NONE) {
        rc = resolve_ref(st, kind, ref, set, err, errlen);
    } else {
        rc =
            add_query(st, set, "SELECT run_id FROM tags WHERE name = ? ORDER BY run_id", "t", item);
        if (rc == -ENOENT)
            snprintf(err, errlen,
                     "'%s' is neither a run id, a range A-B, 'last', sweep:N, "
                     "mesh:N, group:N nor a tag of any run: see 'netrig history'",
                     item);
    }
    if (rc && rc != -ENOENT)
        snprintf(err, errlen, "cannot read the history '%s'", store_path(st));
    return rc;
}

int store_run_resolve(struct store *st, const char *spec, int64_t **ids, size_t *n, char *err,
                      size_t errlen)
{
    struct idset set = {0};
    char *copy = strdup(spec), *save = NULL, *item;
    int rc = copy ? 0 : -ENOMEM;

    for (item = copy ? strtok_r(copy, ",", &save) : NULL; !rc && item;
         item = strtok_r(NULL, ",", &save))
        rc = resolve_item(st, item, &set, err, errlen);
    free(copy);
    if (!rc && set.n == 0) {
        snprintf(err, errlen, "no runs named by '%s'", spec);
        rc = -ENOENT;
    }
    if (rc) {
        free(set.v);
        return rc;
    }
    *ids = set.v;
    *n = set.n;
    return 0;
}
