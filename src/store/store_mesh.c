/* store_mesh: mesh plans and their cells in the history. */
#include "store_mesh.h"
#include "store_priv.h"

#include "store_doc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int store_mesh_create(struct store *st, const struct store_mesh *m,
                      const struct store_mesh_cell *cells, uint32_t n, int64_t *id, char *err,
                      size_t errlen)
{
    char now[32];

    store_time_iso(time(NULL), now, sizeof(now));
    if (store_exec(st, err, errlen,
                   "INSERT INTO meshes (plan, started_at, status, parallel, hosts, tests)"
                   " VALUES (?,?,'running',?,?,?)",
                   "ttitt", m->plan, m->started_at[0] ? m->started_at : now, (int64_t)m->parallel,
                   m->hosts, m->tests))
        return -EIO;
    *id = sqlite3_last_insert_rowid(store_sqlite(st));
    for (uint32_t i = 0; i < n; i++) {
        const struct store_mesh_cell *c = &cells[i];
        if (store_exec(st, err, errlen,
                       "INSERT INTO mesh_cells (mesh_id, idx, test_idx, src, dst, test, source,"
                       " destination, status) VALUES (?,?,?,?,?,?,?,?,'pending')",
                       "iuuuuttt", *id, c->idx, c->test, c->src, c->dst, c->test_name, c->source,
                       c->destination))
            return -EIO;
    }
    return 0;
}

int store_mesh_cell_done(struct store *st, int64_t mesh, const struct store_mesh_cell *c,
                         const cJSON *doc, int64_t *run_id, char *err, size_t errlen)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(doc, "title");
    char title[256];

    *run_id = 0;
    if (doc) {
        snprintf(title, sizeof(title), "mesh %lld: %s -> %s %s%s%.100s", (long long)mesh, c->source,
                 c->destination, c->test_name, cJSON_IsString(t) && *t->valuestring ? " " : "",
                 cJSON_IsString(t) ? t->valuestring : "");
        if (store_doc_add(st, doc, title, run_id, err, errlen))
            return -EIO;
    }
    /* run_id 0 binds NULL: no run */
    if (store_exec(st, err, errlen,
                   "UPDATE mesh_cells SET status = ?, error = ?, run_id = nullif(?, 0)"
                   " WHERE mesh_id = ? AND idx = ?",
                   "ttiiu", c->status, c->error, *run_id, mesh, c->idx))
        return -EIO;
    if (sqlite3_changes(store_sqlite(st)) != 1) {
        snprintf(err, errlen, "mesh %lld has no cell %u in '%s'", (long long)mesh, c->idx,
                 store_path(st));
        return -ENOENT;
    }
    return 0;
}

int store_mesh_set_status(struct store *st, int64_t id, const char *status, char *err,
                          size_t errlen)
{
    char now[32];

    store_time_iso(time(NULL), now, sizeof(now));
    return store_exec(st, err, errlen, "UPDATE meshes SET status = ?, finished_at = ? WHERE id = ?",
                      "tti", status, strcmp(status, "running") ? now : NULL, id);
}

static void col_str(sqlite3_stmt *s, int c, char *dst, size_t len)
{
    const unsigned char *t = sqlite3_column_text(s, c);

    snprintf(dst, len, "%s", t ? (const char *)t : "");
}

#define MESH_COLS                                                                                  \
    "m.id, m.plan, m.started_at, coalesce(m.finished_at, ''), m.status, m.parallel,"               \
    " (SELECT count(*) FROM mesh_cells c WHERE c.mesh_id = m.id),"                                 \
    " (SELECT count(*) FROM mesh_cells c WHERE c.mesh_id = m.id AND c.status = 'failed')"

static void read_mesh(sqlite3_stmt *s, struct store_mesh *m)
{
    memset(m, 0, sizeof(*m));
    m->id = sqlite3_column_int64(s, 0);
    col_str(s, 1, m->plan, sizeof(m->plan));
    col_str(s, 2, m->started_at, sizeof(m->started_at));
    col_str(s, 3, m->finished_at, sizeof(m->finished_at));
    col_str(s, 4, m->status, sizeof(m->status));
    m->parallel = sqlite3_column_int(s, 5) != 0;
    m->ncells = (uint32_t)sqlite3_column_int64(s, 6);
    m->nfailed = (uint32_t)sqlite3_column_int64(s, 7);
}

int store_mesh_get(struct store *st, int64_t id, struct store_mesh *m, char *err, size_t errlen)
{
    sqlite3_stmt *s = store_prepare(st,
                                    "SELECT " MESH_COLS ", m.hosts, m.tests FROM meshes m"
                                    " WHERE m.id = ?",
                                    err, errlen);
    int rc = -ENOENT;

    memset(m, 0, sizeof(*m));
    if (!s)
        return -EIO;
    sqlite3_bind_int64(s, 1, id);
    if (sqlite3_step(s) == SQLITE_ROW) {
        read_mesh(s, m);
        m->hosts = strdup((const char *)sqlite3_column_text(s, 8));
        m->tests = strdup((const char *)sqlite3_column_text(s, 9));
        rc = m->hosts && m->tests ? 0 : -ENOMEM;
        if (rc) {
            store_mesh_free(m);
            snprintf(err, errlen, "out of memory reading mesh %lld", (long long)id);
        }
    } else {
        snprintf(err, errlen, "no mesh %lld in '%s': see 'netrig history --meshes'", (long long)id,
                 store_path(st));
    }
    sqlite3_finalize(s);
    return rc;
}

void store_mesh_free(struct store_mesh *m)
{
    free(m->hosts);
    free(m->tests);
    m->hosts = m->tests = NULL;
}

int store_mesh_cells(struct store *st, int64_t id, struct store_mesh_cell **cells, uint32_t *n,
                     char *err, size_t errlen)
{
    sqlite3_stmt *s =
        store_prepare(st,
                      "SELECT idx, test_idx, src, dst, test, source, destination, status, error,"
                      " coalesce(run_id, 0) FROM mesh_cells WHERE mesh_id = ? ORDER BY idx",
                      err, errlen);
    struct store_mesh_cell *v = NULL, *nv, *c;
    uint32_t cnt = 0;

    *cells = NULL;
    *n = 0;
    if (!s)
        return -EIO;
    sqlite3_bind_int64(s, 1, id);
    while (sqlite3_step(s) == SQLITE_ROW) {
        nv = realloc(v, (cnt + 1) * sizeof(*v));
        if (!nv) {
            free(v);
            sqlite3_finalize(s);
            snprintf(err, errlen, "out of memory reading mesh %lld", (long long)id);
            return -ENOMEM;
        }
        v = nv;
        c = &v[cnt++];
        c->idx = (uint32_t)sqlite3_column_int64(s, 0);
        c->test = (uint32_t)sqlite3_column_int64(s, 1);
        c->src = (uint32_t)sqlite3_column_int64(s, 2);
        c->dst = (uint32_t)sqlite3_column_int64(s, 3);
        col_str(s, 4, c->test_name, sizeof(c->test_name));
        col_str(s, 5, c->source, sizeof(c->source));
        col_str(s, 6, c->destination, sizeof(c->destination));
        col_str(s, 7, c->status, sizeof(c->status));
        col_str(s, 8, c->error, sizeof(c->error));
        c->run_id = sqlite3_column_int64(s, 9);
    }
    sqlite3_finalize(s);
    *cells = v;
    *n = cnt;
    return 0;
}

int store_mesh_list(struct store *st, int (*fn)(const struct store_mesh *m, void *arg), void *arg)
{
    char err[256];
    sqlite3_stmt *s =
        store_prepare(st, "SELECT " MESH_COLS " FROM meshes m ORDER BY m.id", err, sizeof(err));
    struct store_mesh m;
    int rc = 0;

    if (!s)
        return -EIO;
    while (!rc && sqlite3_step(s) == SQLITE_ROW) {
        read_mesh(s, &m);
        rc = fn(&m, arg);
    }
    sqlite3_finalize(s);
    return rc;
}
