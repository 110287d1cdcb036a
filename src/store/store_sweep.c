/* store_sweep: sweeps and their points in the history. */
#include "store_sweep.h"
#include "store_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int store_sweep_create(struct store *st, const struct store_sweep *sw, const char *const *settings,
                       uint32_t npoints, int64_t *id, char *err, size_t errlen)
{
    char now[32];

    store_time_iso(time(NULL), now, sizeof(now));
    if (store_exec(st, err, errlen,
                   "INSERT INTO sweeps (test, title, created_at, status, definition, metric,"
                   " repeat_max, ci_level, ci_pct) VALUES (?,?,?,'running',?,?,?,?,?)",
                   "tttttudd", sw->test, sw->title, now, sw->definition, sw->metric, sw->repeat_max,
                   sw->ci_level, sw->ci_pct))
        return -EIO;
    *id = sqlite3_last_insert_rowid(store_sqlite(st));
    for (uint32_t i = 0; i < npoints; i++)
        if (store_exec(st, err, errlen,
                       "INSERT INTO sweep_points (sweep_id, idx, settings, status)"
                       " VALUES (?,?,?,'pending')",
                       "iut", *id, i, settings[i]))
            return -EIO;
    return 0;
}

int store_sweep_find_unfinished(struct store *st, const char *def, int64_t *id)
{
    char err[256];
    sqlite3_stmt *s = store_prepare(st,
                                    "SELECT id FROM sweeps WHERE status != 'done' AND"
                                    " definition = ? ORDER BY id DESC LIMIT 1",
                                    err, sizeof(err));
    int rc = -ENOENT;

    if (!s)
        return -EIO;
    sqlite3_bind_text(s, 1, def, -1, SQLITE_STATIC);
    if (sqlite3_step(s) == SQLITE_ROW) {
        *id = sqlite3_column_int64(s, 0);
        rc = 0;
    }
    sqlite3_finalize(s);
    return rc;
}

static void col_str(sqlite3_stmt *s, int c, char *dst, size_t len)
{
    const unsigned char *t = sqlite3_column_text(s, c);

    snprintf(dst, len, "%s", t ? (const char *)t : "");
}

#define SWEEP_COLS                                                                                 \
    "id, test, title, created_at, coalesce(finished_at, ''), status, metric,"                      \
    " repeat_max, ci_level, ci_pct"

static void read_sweep(sqlite3_stmt *s, struct store_sweep *sw)
{
    memset(sw, 0, sizeof(*sw));
    sw->id = sqlite3_column_int64(s, 0);
    col_str(s, 1, sw->test, sizeof(sw->test));
    col_str(s, 2, sw->title, sizeof(sw->title));
    col_str(s, 3, sw->created_at, sizeof(sw->created_at));
    col_str(s, 4, sw->finished_at, sizeof(sw->finished_at));
    col_str(s, 5, sw->status, sizeof(sw->status));
    col_str(s, 6, sw->metric, sizeof(sw->metric));
    sw->repeat_max = (uint32_t)sqlite3_column_int64(s, 7);
    sw->ci_level = sqlite3_column_double(s, 8);
    sw->ci_pct = sqlite3_column_double(s, 9);
}

int store_sweep_get(struct store *st, int64_t id, struct store_sweep *sw, char *err, size_t errlen)
{
    sqlite3_stmt *s = store_prepare(st,
                                    "SELECT " SWEEP_COLS ", definition FROM sweeps"
                                    " WHERE id = ?",
                                    err, errlen);
    int rc = -ENOENT;

    if (!s)
        return -EIO;
    sqlite3_bind_int64(s, 1, id);
    if (sqlite3_step(s) == SQLITE_ROW) {
        read_sweep(s, sw);
        sw->definition = strdup((const char *)sqlite3_column_text(s, 10));
        rc = sw->definition ? 0 : -ENOMEM;
    } else {
        snprintf(err, errlen, "no sweep %lld in '%s': see 'netrig history'", (long long)id,
                 store_path(st));
    }
    sqlite3_finalize(s);
    return rc;
}

void store_sweep_free(struct store_sweep *sw)
{
    free(sw->definition);
    sw->definition = NULL;
}

int store_sweep_points(struct store *st, int64_t id, struct store_sweep_point **pts, uint32_t *n,
                       char *err, size_t errlen)
{
    sqlite3_stmt *s = store_prepare(
        st,
        "SELECT p.id, p.idx, p.settings, p.status, (SELECT count(*) FROM runs r"
        " WHERE r.sweep_point_id = p.id AND r.partial = 0), coalesce(p.mean, 0),"
        " coalesce(p.ci_half, 0) FROM sweep_points p WHERE p.sweep_id = ? ORDER BY p.idx",
        err, errlen);
    struct store_sweep_point *v = NULL, *nv;
    uint32_t cnt = 0;

    if (!s)
        return -EIO;
    sqlite3_bind_int64(s, 1, id);
    while (sqlite3_step(s) == SQLITE_ROW) {
        nv = realloc(v, (cnt + 1) * sizeof(*v));
        if (!nv) {
            free(v);
            sqlite3_finalize(s);
            snprintf(err, errlen, "out of memory reading sweep %lld", (long long)id);
            return -ENOMEM;
        }
        v = nv;
        v[cnt].id = sqlite3_column_int64(s, 0);
        v[cnt].idx = (uint32_t)sqlite3_column_int64(s, 1);
        col_str(s, 2, v[cnt].settings, sizeof(v[cnt].settings));
        col_str(s, 3, v[cnt].status, sizeof(v[cnt].status));
        v[cnt].runs = (uint32_t)sqlite3_column_int64(s, 4);
        v[cnt].mean = sqlite3_column_double(s, 5);
        v[cnt].ci_half = sqlite3_column_double(s, 6);
        cnt++;
    }
    sqlite3_finalize(s);
    *pts = v;
    *n = cnt;
    return 0;
}

int store_sweep_point_values(struct store *st, int64_t point, const char *metric, double **vals,
                             size_t *n)
{
    char err[256];
    sqlite3_stmt *s =
        store_prepare(st,
                      "SELECT m.value FROM runs r JOIN metrics m ON m.run_id = r.id AND m.name = ?"
                      " WHERE r.sweep_point_id = ? AND r.partial = 0 ORDER BY r.id",
                      err, sizeof(err));
    double *v = NULL, *nv;
    size_t cnt = 0;

    if (!s)
        return -EIO;
    sqlite3_bind_text(s, 1, metric, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, point);
    while (sqlite3_step(s) == SQLITE_ROW) {
        nv = realloc(v, (cnt + 1) * sizeof(*v));
        if (!nv) {
            free(v);
            sqlite3_finalize(s);
            return -ENOMEM;
        }
        v = nv;
        v[cnt++] = sqlite3_column_double(s, 0);
    }
    sqlite3_finalize(s);
    *vals = v;
    *n = cnt;
    return 0;
}

int store_sweep_point_update(struct store *st, const struct store_sweep_point *p, char *err,
                             size_t errlen)
{
    return store_exec(st, err, errlen,
                      "UPDATE sweep_points SET status = ?, runs = ?, mean = ?, ci_half = ?"
                      " WHERE id = ?",
                      "tuddi", p->status, p->runs, p->mean, p->ci_half, p->id);
}

int store_sweep_set_status(struct store *st, int64_t id, const char *status, char *err,
                           size_t errlen)
{
    char now[32];

    store_time_iso(time(NULL), now, sizeof(now));
    return store_exec(st, err, errlen, "UPDATE sweeps SET status = ?, finished_at = ? WHERE id = ?",
                      "tti", status, strcmp(status, "running") ? now : NULL, id);
}

int store_sweep_list(struct store *st, int (*fn)(const struct store_sweep *sw, void *arg),
                     void *arg)
{
    char err[256];
    sqlite3_stmt *s =
        store_prepare(st, "SELECT " SWEEP_COLS " FROM sweeps ORDER BY id", err, sizeof(err));
    struct store_sweep sw;
    int rc = 0;

    if (!s)
        return -EIO;
    while (!rc && sqlite3_step(s) == SQLITE_ROW) {
        read_sweep(s, &sw);
        rc = fn(&sw, arg);
    }
    sqlite3_finalize(s);
    return rc;
}

int store_sweep_point_runs(struct store *st, int64_t point, int64_t **ids, size_t *n)
{
    char err[256];
    sqlite3_stmt *s = store_prepare(st,
                                    "SELECT id FROM runs WHERE sweep_point_id = ?"
                                    " ORDER BY id",
                                    err, sizeof(err));
    int64_t *v = NULL, *nv;
    size_t cnt = 0;

    if (!s)
        return -EIO;
    sqlite3_bind_int64(s, 1, point);
    while (sqlite3_step(s) == SQLITE_ROW) {
        nv = realloc(v, (cnt + 1) * sizeof(*v));
        if (!nv) {
            free(v);
            sqlite3_finalize(s);
            return -ENOMEM;
        }
        v = nv;
        v[cnt++] = sqlite3_column_int64(s, 0);
    }
    sqlite3_finalize(s);
    *ids = v;
    *n = cnt;
    return 0;
}
