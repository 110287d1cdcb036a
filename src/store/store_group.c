/* store_group: groups of runs one command measured together. */
#include "store_group.h"
#include "store_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int store_group_create(struct store *st, const struct store_group *g, int64_t *id, char *err,
                       size_t errlen)
{
    int rc = store_exec(st, err, errlen,
                        "INSERT INTO run_groups (kind, test, started_at, source, targets, summary)"
                        " VALUES (?,?,?,?,?,?)",
                        "tttttt", g->kind, g->test, g->started_at, g->source,
                        g->targets ? g->targets : "[]", g->summary ? g->summary : "{}");

    if (!rc)
        *id = sqlite3_last_insert_rowid(store_sqlite(st));
    return rc;
}

int store_group_add_run(struct store *st, int64_t group, uint32_t idx, int64_t run, char *err,
                        size_t errlen)
{
    return store_exec(st, err, errlen, "UPDATE runs SET group_id = ?, group_idx = ? WHERE id = ?",
                      "iui", group, idx, run);
}

static void col_str(sqlite3_stmt *s, int c, char *dst, size_t len)
{
    const unsigned char *t = sqlite3_column_text(s, c);

    snprintf(dst, len, "%s", t ? (const char *)t : "");
}

static char *col_dup(sqlite3_stmt *s, int c, const char *dflt)
{
    const unsigned char *t = sqlite3_column_text(s, c);

    return strdup(t ? (const char *)t : dflt);
}

int store_group_get(struct store *st, int64_t id, struct store_group *g, char *err, size_t errlen)
{
    sqlite3_stmt *s = store_prepare(st,
                                    "SELECT id, kind, test, started_at, source, targets, summary,"
                                    " (SELECT count(*) FROM runs r WHERE r.group_id = g.id)"
                                    " FROM run_groups g WHERE id = ?",
                                    err, errlen);
    int rc = -ENOENT;

    memset(g, 0, sizeof(*g));
    if (!s)
        return -EIO;
    sqlite3_bind_int64(s, 1, id);
    if (sqlite3_step(s) == SQLITE_ROW) {
        g->id = sqlite3_column_int64(s, 0);
        col_str(s, 1, g->kind, sizeof(g->kind));
        col_str(s, 2, g->test, sizeof(g->test));
        col_str(s, 3, g->started_at, sizeof(g->started_at));
        col_str(s, 4, g->source, sizeof(g->source));
        g->targets = col_dup(s, 5, "[]");
        g->summary = col_dup(s, 6, "{}");
        g->nruns = (uint32_t)sqlite3_column_int64(s, 7);
        rc = g->targets && g->summary ? 0 : -ENOMEM;
        if (rc)
            snprintf(err, errlen, "out of memory reading group %lld", (long long)id);
    } else {
        snprintf(err, errlen, "no group %lld in '%s': see 'netrig history'", (long long)id,
                 store_path(st));
    }
    sqlite3_finalize(s);
    if (rc)
        store_group_free(g);
    return rc;
}

void store_group_free(struct store_group *g)
{
    free(g->targets);
    free(g->summary);
    g->targets = g->summary = NULL;
}

int store_group_runs(struct store *st, int64_t id, int (*fn)(int64_t run, uint32_t idx, void *arg),
                     void *arg)
{
    char err[256];
    sqlite3_stmt *s = store_prepare(st,
                                    "SELECT id, coalesce(group_idx, 0) FROM runs"
                                    " WHERE group_id = ? ORDER BY group_idx, id",
                                    err, sizeof(err));
    int rc = 0;

    if (!s)
        return -EIO;
    sqlite3_bind_int64(s, 1, id);
    while (!rc && sqlite3_step(s) == SQLITE_ROW)
        rc = fn(sqlite3_column_int64(s, 0), (uint32_t)sqlite3_column_int64(s, 1), arg);
    sqlite3_finalize(s);
    return rc;
}
