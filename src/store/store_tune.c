/* store_tune: tune journals in the history. */
#include "store_tune.h"

#include "store_priv.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

int store_add_tune(struct store *st, const struct store_tune *t, int64_t *id, char *err,
                   size_t errlen)
{
    int rc = store_exec(st, err, errlen,
                        "INSERT INTO tune_journals (applied_at, journal, host, machine_id,"
                        " netns_inode, netns_name, target, changes) VALUES (?,?,?,?,?,?,?,?)",
                        "ttttittt", t->applied_at, t->journal, t->host, t->machine_id,
                        (int64_t)t->netns_inode, t->netns_name, t->target,
                        t->changes ? t->changes : "[]");

    if (!rc)
        *id = sqlite3_last_insert_rowid(store_sqlite(st));
    return rc;
}

static void col(sqlite3_stmt *s, int i, char *out, size_t len)
{
    const unsigned char *v = sqlite3_column_text(s, i);

    snprintf(out, len, "%s", v ? (const char *)v : "");
}

int store_tune_between(struct store *st, const char *from, const char *to,
                       int (*fn)(const struct store_tune *t, void *arg), void *arg, char *err,
                       size_t errlen)
{
    sqlite3_stmt *s = store_prepare(st,
                                    "SELECT id, applied_at, journal, host, machine_id, netns_inode,"
                                    " netns_name, target, changes FROM tune_journals"
                                    " WHERE (?1 IS NULL OR applied_at >= ?1)"
                                    " AND (?2 IS NULL OR applied_at <= ?2) ORDER BY applied_at, id",
                                    err, errlen);
    int rc = 0, step;

    if (!s)
        return -EIO;
    if (from)
        sqlite3_bind_text(s, 1, from, -1, SQLITE_STATIC);
    if (to)
        sqlite3_bind_text(s, 2, to, -1, SQLITE_STATIC);
    while (!rc && (step = sqlite3_step(s)) == SQLITE_ROW) {
        struct store_tune t;
        memset(&t, 0, sizeof(t));
        t.id = sqlite3_column_int64(s, 0);
        col(s, 1, t.applied_at, sizeof(t.applied_at));
        col(s, 2, t.journal, sizeof(t.journal));
        col(s, 3, t.host, sizeof(t.host));
        col(s, 4, t.machine_id, sizeof(t.machine_id));
        t.netns_inode = (unsigned long long)sqlite3_column_int64(s, 5);
        col(s, 6, t.netns_name, sizeof(t.netns_name));
        col(s, 7, t.target, sizeof(t.target));
        t.changes = (const char *)sqlite3_column_text(s, 8);
        rc = fn(&t, arg);
    }
    if (!rc && step != SQLITE_DONE)
        rc = store_fail(st, err, errlen, "cannot read the tune journals");
    sqlite3_finalize(s);
    return rc;
}
