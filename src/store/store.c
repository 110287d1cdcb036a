/* store: the SQLite history — open, schema migrations, and adding runs. */
#include "store.h"

#include "store_priv.h"

#include "histo.h"
#include "metric.h"
#include "result_json.h"
#include "store_samples.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void store_time_iso(long long t, char *buf, size_t len)
{
    time_t tt = (time_t)t;
    struct tm tm;

    gmtime_r(&tt, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int mkdir_p(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0700) && errno != EEXIST) {
            *p = '/';
            return -errno;
        }
        *p = '/';
    }
    if (mkdir(path, 0700) && errno != EEXIST)
        return -errno;
    return 0;
}

int store_default_path(char *out, size_t len, bool mkdirs, char *err, size_t errlen)
{
    const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    char dir[4096];
    int n, rc;

    if (xdg && xdg[0] == '/')
        n = snprintf(dir, sizeof(dir), "%s/netrig", xdg);
    else if (home && home[0] == '/')
        n = snprintf(dir, sizeof(dir), "%s/.local/share/netrig", home);
    else {
        snprintf(err, errlen,
                 "no place for the history: HOME and XDG_DATA_HOME are unset; "
                 "give --db PATH");
        return -ENOENT;
    }
    if (n < 0 || (size_t)n >= sizeof(dir) || (size_t)n + 12 >= len) {
        snprintf(err, errlen, "history directory path is too long; give --db PATH");
        return -ENAMETOOLONG;
    }
    if (mkdirs && (rc = mkdir_p(dir)) != 0) {
        snprintf(err, errlen, "cannot create history directory '%s': %s; give --db PATH", dir,
                 strerror(-rc));
        return rc;
    }
    snprintf(out, len, "%s/history.db", dir);
    return 0;
}

sqlite3 *store_sqlite(struct store *st) { return st->db; }

const char *store_path(const struct store *st) { return st->path; }

int store_fail(struct store *st, char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "history database '%s': %s: %s", st->path, what, sqlite3_errmsg(st->db));
    return -EIO;
}

sqlite3_stmt *store_prepare(struct store *st, const char *sql, char *err, size_t errlen)
{
    sqlite3_stmt *s = NULL;

    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) {
        store_fail(st, err, errlen, "cannot prepare a query");
        return NULL;
    }
    return s;
}

int store_bindv(sqlite3_stmt *s, const char *types, va_list ap)
{
    int rc = SQLITE_OK;

    for (int i = 1; *types && rc == SQLITE_OK; types++, i++) {
        switch (*types) {
        case 'i': rc = sqlite3_bind_int64(s, i, va_arg(ap, int64_t)); break;
        case 'u': rc = sqlite3_bind_int64(s, i, va_arg(ap, uint32_t)); break;
        case 'd': rc = sqlite3_bind_double(s, i, va_arg(ap, double)); break;
        case 't': {
            const char *t = va_arg(ap, const char *);
            rc = t ? sqlite3_bind_text(s, i, t, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(s, i);
            break;
        }
        default: rc = sqlite3_bind_null(s, i); break;
        }
    }
    return rc == SQLITE_OK ? 0 : -EIO;
}

int store_exec(struct store *st, char *err, size_t errlen, const char *sql, const char *types, ...)
{
    sqlite3_stmt *s = store_prepare(st, sql, err, errlen);
    va_list ap;
    int rc;

    if (!s)
        return -EIO;
    va_start(ap, types);
    rc = store_bindv(s, types, ap);
    va_end(ap);
    if (!rc) {
        int step;
        while ((step = sqlite3_step(s)) == SQLITE_ROW)
            ;
        if (step != SQLITE_DONE)
            rc = store_fail(st, err, errlen, "write failed");
    } else {
        store_fail(st, err, errlen, "cannot bind a value");
    }
    sqlite3_finalize(s);
    return rc;
}

/* A statement whose first column is one integer. */
static int query_int(struct store *st, const char *sql, int64_t *out)
{
    sqlite3_stmt *s = NULL;
    int rc = -EIO;

    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW) {
        *out = sqlite3_column_int64(s, 0);
        rc = 0;
    }
    sqlite3_finalize(s);
    return rc;
}

int store_begin(struct store *st, char *err, size_t errlen)
{
    if (st->readonly) {
        snprintf(err, errlen, "history database '%s' was opened read-only", st->path);
        return -EROFS;
    }
    if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return store_fail(st, err, errlen,
                          "cannot start a write (is it locked by another netrig?)");
    return 0;
}

int store_commit(struct store *st, char *err, size_t errlen)
{
    if (sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        int rc = store_fail(st, err, errlen, "cannot commit");
        store_rollback(st);
        return rc;
    }
    return 0;
}

void store_rollback(struct store *st)
{
    if (!sqlite3_get_autocommit(st->db))
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

/* A copy of the whole database, taken with SQLite's online backup (WAL contents included). */
static int backup(struct store *st, int version, char *err, size_t errlen)
{
    char path[4200];
    sqlite3 *dst = NULL;
    sqlite3_backup *b;
    int rc;

    snprintf(path, sizeof(path), "%s.schema-v%d.bak", st->path, version);
    unlink(path);
    if (sqlite3_open_v2(path, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        snprintf(err, errlen, "cannot create backup '%s' before migrating the history: %s", path,
                 dst ? sqlite3_errmsg(dst) : "out of memory");
        sqlite3_close(dst);
        return -EIO;
    }
    b = sqlite3_backup_init(dst, "main", st->db, "main");
    rc = b ? sqlite3_backup_step(b, -1) : SQLITE_ERROR;
    if (b)
        sqlite3_backup_finish(b);
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "cannot write backup '%s' before migrating the history: %s", path,
                 sqlite3_errmsg(dst));
        sqlite3_close(dst);
        unlink(path);
        return -EIO;
    }
    sqlite3_close(dst);
    return 0;
}

/* Applies every step past the current version in one transaction. */
int store_migrate(struct store *st, char *err, size_t errlen)
{
    int64_t v = 0;
    char pragma[96];

    if (store_begin(st, err, errlen))
        return -EIO;
    /* another netrig may have migrated while we waited for the lock */
    if (query_int(st, "PRAGMA user_version", &v)) {
        store_rollback(st);
        return store_fail(st, err, errlen, "cannot read the schema version");
    }
    for (int64_t step = v + 1; step <= STORE_SCHEMA_VERSION; step++) {
        if (sqlite3_exec(st->db, store_migration_sql((int)step), NULL, NULL, NULL) != SQLITE_OK) {
            snprintf(pragma, sizeof(pragma), "migration to schema %lld failed", (long long)step);
            store_fail(st, err, errlen, pragma);
            store_rollback(st);
            return -EIO;
        }
    }
    snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d; PRAGMA application_id = %d",
             STORE_SCHEMA_VERSION, STORE_APPLICATION_ID);
    if (sqlite3_exec(st->db, pragma, NULL, NULL, NULL) != SQLITE_OK) {
        store_fail(st, err, errlen, "cannot set the schema version");
        store_rollback(st);
        return -EIO;
    }
    return store_commit(st, err, errlen);
}

/* Refuses what is not ours or too new; *v is the schema version. */
int store_check_identity(struct store *st, int64_t *v, char *err, size_t errlen)
{
    int64_t app = 0, tables = 0;

    if (query_int(st, "PRAGMA user_version", v) || query_int(st, "PRAGMA application_id", &app) ||
        query_int(st, "SELECT count(*) FROM sqlite_master", &tables))
        return store_fail(st, err, errlen, "cannot read it (is it an SQLite file?)");
    if ((app && app != STORE_APPLICATION_ID) || (!app && tables > 0)) {
        snprintf(err, errlen,
                 "'%s' is an SQLite database but not a netrig history: give "
                 "another --db PATH",
                 st->path);
        return -EINVAL;
    }
    if (*v > STORE_SCHEMA_VERSION) {
        snprintf(err, errlen,
                 "history database '%s' has schema version %lld, newer than this "
                 "netrig %s understands (%d): upgrade netrig, or give another --db PATH",
                 st->path, (long long)*v, NETRIG_VERSION, STORE_SCHEMA_VERSION);
        return -EPROTO;
    }
    return 0;
}

/* Refuses what is not ours or too new; backs up and migrates what is older. */
static int check_schema(struct store *st, char *err, size_t errlen)
{
    int64_t v = 0;
    int rc = store_check_identity(st, &v, err, errlen);

    if (rc)
        return rc;
    if (sqlite3_exec(st->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL) != SQLITE_OK)
        return store_fail(st, err, errlen, "cannot switch to WAL mode");
    if (v == STORE_SCHEMA_VERSION)
        return 0;
    if (v > 0 && backup(st, (int)v, err, errlen))
        return -EIO;
    return store_migrate(st, err, errlen);
}

/* A one-line reason a write-mode open failed for lack of permission, or 0. */
static int explain_unwritable(struct store *st, char *err, size_t errlen)
{
    int code = st->db ? sqlite3_errcode(st->db) : SQLITE_OK;

    if (code != SQLITE_READONLY && code != SQLITE_CANTOPEN && code != SQLITE_PERM)
        return 0;
    if (access(st->path, F_OK) || (!access(st->path, W_OK) && code == SQLITE_CANTOPEN))
        return 0;
    snprintf(err, errlen,
             "cannot write history database '%s': saving, tagging and sweeps need write access "
             "to the file and its directory (history, show, export and compare only read it); "
             "give another --db PATH",
             st->path);
    return -EACCES;
}

struct store *store_open(const char *path, bool create, char *err, size_t errlen)
{
    struct store *st = calloc(1, sizeof(*st));
    int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);

    if (!st) {
        snprintf(err, errlen, "out of memory opening the history");
        return NULL;
    }
    snprintf(st->path, sizeof(st->path), "%s", path);
    if (!create && access(path, F_OK)) {
        snprintf(err, errlen, "no history database at '%s': run a test first, or give --db PATH",
                 path);
        free(st);
        return NULL;
    }
    if (sqlite3_open_v2(path, &st->db, flags, NULL) != SQLITE_OK) {
        if (!explain_unwritable(st, err, errlen))
            snprintf(err, errlen, "cannot open history database '%s': %s; give another --db PATH",
                     path, st->db ? sqlite3_errmsg(st->db) : "out of memory");
        store_close(st);
        return NULL;
    }
    sqlite3_busy_timeout(st->db, STORE_BUSY_MS);
    sqlite3_exec(st->db, "PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL", NULL, NULL, NULL);
    if (check_schema(st, err, errlen)) {
        explain_unwritable(st, err, errlen);
        store_close(st);
        return NULL;
    }
    return st;
}

void store_close(struct store *st)
{
    if (!st)
        return;
    sqlite3_close(st->db);
    free(st);
}

/* ---- adding runs (inside store_begin .. store_commit) ---- */

/* Steps s with the given bindings, then resets it for the next row. */
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
        return store_fail(st, err, errlen, "cannot store a row");
    return 0;
}

int store_add_metrics(struct store *st, int64_t id, const struct metric_value *m, size_t n,
                      char *err, size_t errlen)
{
    sqlite3_stmt *s = store_prepare(st, "INSERT INTO metrics VALUES (?,?,?)", err, errlen);
    int rc = s ? 0 : -EIO;

    for (size_t i = 0; !rc && i < n; i++)
        rc = row(st, s, err, errlen, "itd", id, m[i].def->name, m[i].value);
    sqlite3_finalize(s);
    return rc;
}

int store_add_host(struct store *st, int64_t id, const char *side, const struct hostsnap *hs,
                   const char *note, char *err, size_t errlen)
{
    sqlite3_stmt *s;
    int rc;

    if (store_exec(st, err, errlen, "INSERT OR REPLACE INTO host_sides VALUES (?,?,?,?)", "itit",
                   id, side, (int64_t)(hs != NULL), hs || !note ? "" : note) ||
        store_exec(st, err, errlen, "DELETE FROM host WHERE run_id = ? AND side = ?", "it", id,
                   side))
        return -EIO;
    if (!hs)
        return 0;
    s = store_prepare(st, "INSERT INTO host VALUES (?,?,?,?)", err, errlen);
    rc = s ? 0 : -EIO;
    for (uint32_t i = 0; !rc && i < hs->n; i++)
        rc = row(st, s, err, errlen, "ittt", id, side, hs->e[i].key, hs->e[i].value);
    sqlite3_finalize(s);
    return rc;
}

/* Is the server's address a loopback one ("127.0.0.1:5301", "[::1]:5301", "localhost:...")?
 * Such a server shares the client's host and network namespace. */
static bool loopback_server(const char *server)
{
    return !strncmp(server, "127.", 4) || !strncmp(server, "[::1]", 5) || !strcmp(server, "::1") ||
           !strncmp(server, "localhost", 9);
}

/* Why a client's run has no server settings, when the result does not say. */
static void server_host_note(const struct run_result *r, char *buf, size_t len)
{
    if (r->remote.host_note[0])
        snprintf(buf, len, "%s", r->remote.host_note);
    else if (loopback_server(r->server))
        snprintf(buf, len,
                 "the server ran on this host at a loopback address: its settings are the "
                 "client's");
    else if (r->remote.version[0])
        snprintf(buf, len, "the server (netrig %s) did not send its settings", r->remote.version);
    else
        snprintf(buf, len, "the server did not send its settings");
}

static int add_intervals(struct store *st, int64_t id, const char *side,
                         const struct side_result *sr, char *err, size_t errlen)
{
    sqlite3_stmt *s =
        store_prepare(st, "INSERT INTO intervals VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", err, errlen);
    int rc = s ? 0 : -EIO;

    for (uint32_t i = 0; !rc && i < sr->nintervals; i++) {
        const struct interval *iv = &sr->intervals[i];
        if (iv->cpu.valid)
            rc = row(st, s, err, errlen, "ituddiiiiiid", id, side, i, iv->start_s, iv->end_s,
                     (int64_t)iv->omitted, (int64_t)iv->sent_bytes, (int64_t)iv->recv_bytes,
                     (int64_t)iv->retrans, (int64_t)iv->txns, (int64_t)iv->lat_sum_ns,
                     iv->cpu.busy_pct);
        else
            rc = row(st, s, err, errlen, "ituddiiiiiin", id, side, i, iv->start_s, iv->end_s,
                     (int64_t)iv->omitted, (int64_t)iv->sent_bytes, (int64_t)iv->recv_bytes,
                     (int64_t)iv->retrans, (int64_t)iv->txns, (int64_t)iv->lat_sum_ns);
    }
    sqlite3_finalize(s);
    return rc;
}

/* The client's per-flow interval cells, when it kept them. */
static int add_cells(struct store *st, int64_t id, const struct side_result *sr, char *err,
                     size_t errlen)
{
    sqlite3_stmt *s;
    int rc;

    if (!sr->cells || !sr->nintervals)
        return 0;
    s = store_prepare(st, "INSERT INTO interval_flows VALUES (?,?,?,?,?,?,?)", err, errlen);
    rc = s ? 0 : -EIO;
    for (uint32_t i = 0; !rc && i < sr->nintervals; i++) {
        const struct interval_flow *c = sr->intervals[i].flows;
        for (uint32_t f = 0; !rc && c && f < sr->nflows; f++)
            rc = row(st, s, err, errlen, "iuuiuuu", id, i, f, (int64_t)c[f].bytes, c[f].retrans,
                     c[f].rtt_us, c[f].cwnd);
    }
    sqlite3_finalize(s);
    return rc;
}

static int add_latency(struct store *st, int64_t id, const struct histo *h, char *err,
                       size_t errlen)
{
    sqlite3_stmt *s;
    int rc;

    if (!h || !h->count)
        return 0;
    s = store_prepare(st, "INSERT INTO latency VALUES (?,?,?,?)", err, errlen);
    rc = s ? 0 : -EIO;
    for (uint32_t i = 0; !rc && i < HISTO_NBUCKETS; i++) {
        uint64_t lo, hi;
        if (!h->bucket[i])
            continue;
        histo_bucket_range(i, &lo, &hi);
        rc = row(st, s, err, errlen, "iiii", id, (int64_t)lo, (int64_t)hi, (int64_t)h->bucket[i]);
    }
    sqlite3_finalize(s);
    return rc;
}

static const char flow_sql[] =
    "INSERT INTO flows VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";

int store_add_flows(struct store *st, int64_t id, const struct run_result *r, uint32_t base,
                    char *err, size_t errlen)
{
    sqlite3_stmt *s = store_prepare(st, flow_sql, err, errlen);
    bool txn = params_is_transactional(&r->params);
    bool udp = r->summary.udp;
    int rc = s ? 0 : -EIO;

    for (uint32_t i = 0; !rc && i < r->nflows; i++) {
        const struct flow_summary *f = &r->flows[i];
        bool ti = f->has_sender_tcpinfo;
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_int64(s, 2, base + f->id);
        sqlite3_bind_text(s, 3, f->client_sends ? "client_to_server" : "server_to_client", -1,
                          SQLITE_STATIC);
        sqlite3_bind_int64(s, 4, (int64_t)f->bytes);
        sqlite3_bind_int64(s, 5, (int64_t)f->sent_bytes);
        sqlite3_bind_double(s, 6, f->throughput_bps);
        sqlite3_bind_double(s, 7, f->sender_bps);
        if (ti) {
            sqlite3_bind_int64(s, 8, f->retransmits);
            sqlite3_bind_int64(s, 9, f->rtt_us);
            sqlite3_bind_int64(s, 10, f->min_rtt_us);
            sqlite3_bind_int64(s, 11, f->cwnd);
            sqlite3_bind_int64(s, 12, f->snd_wnd);
            sqlite3_bind_double(s, 13, (double)f->delivery_rate_bps);
            sqlite3_bind_int64(s, 14, (int64_t)f->busy_us);
            sqlite3_bind_int64(s, 15, (int64_t)f->rwnd_limited_us);
            sqlite3_bind_int64(s, 16, (int64_t)f->sndbuf_limited_us);
        }
        sqlite3_bind_int64(s, 17, f->client_cpu);
        sqlite3_bind_int64(s, 18, f->server_cpu);
        if (txn) {
            sqlite3_bind_int64(s, 19, (int64_t)f->txns);
            sqlite3_bind_int64(s, 20, (int64_t)f->timeouts);
        }
        if (udp) {
            sqlite3_bind_int64(s, 21, (int64_t)f->udp_sent);
            sqlite3_bind_int64(s, 22, (int64_t)f->udp_received);
            sqlite3_bind_int64(s, 23, (int64_t)f->udp_lost);
            sqlite3_bind_double(s, 24, f->udp_jitter_us);
        }
        if (sqlite3_step(s) != SQLITE_DONE)
            rc = store_fail(st, err, errlen, "cannot store a flow");
    }
    sqlite3_finalize(s);
    return rc;
}

static char *params_text(const struct params *p)
{
    cJSON *o = params_to_json(p);
    char *t = cJSON_PrintUnformatted(o);

    cJSON_Delete(o);
    return t;
}

static int add_run_row(struct store *st, const struct run_result *r, int64_t sweep_point,
                       int64_t *id, char *err, size_t errlen)
{
    char now[32], *params = params_text(&r->params), *doc;
    cJSON *d = result_json_run(r);
    int rc;

    doc = cJSON_PrintUnformatted(d);
    cJSON_Delete(d);
    store_time_iso(time(NULL), now, sizeof(now));
    if (!params || !doc) {
        free(params);
        free(doc);
        snprintf(err, errlen, "out of memory storing a run");
        return -ENOMEM;
    }
    rc = store_exec(st, err, errlen,
                    "INSERT INTO runs (test, udp, role, title, started_at, saved_at, peer,"
                    " client_version, server_version, partial, error, params, document,"
                    " sweep_point_id) VALUES (?,?,'client',?,?,?,?,?,?,?,?,?,?,?)",
                    sweep_point ? "tittttttittti" : "tittttttittt", r->test, (int64_t)r->params.udp,
                    r->params.title, r->started_at[0] ? r->started_at : now, now, r->server,
                    NETRIG_VERSION, r->remote.version, (int64_t)r->partial, r->error, params, doc,
                    sweep_point);
    free(params);
    free(doc);
    *id = sqlite3_last_insert_rowid(st->db);
    return rc;
}

int store_add_run(struct store *st, const struct run_result *r, const struct hostsnap *hs,
                  int64_t sweep_point, int64_t *id, char *err, size_t errlen)
{
    struct metric_value m[METRIC_MAX];
    size_t nm = metric_from_run(r, m, METRIC_MAX);
    char note[200];

    if (add_run_row(st, r, sweep_point, id, err, errlen) ||
        store_add_metrics(st, *id, m, nm, err, errlen) ||
        store_add_flows(st, *id, r, 0, err, errlen) ||
        add_intervals(st, *id, "client", &r->local, err, errlen) ||
        (r->remote.valid && add_intervals(st, *id, "server", &r->remote, err, errlen)) ||
        add_cells(st, *id, &r->local, err, errlen) ||
        add_latency(st, *id, r->local.lat, err, errlen) ||
        store_add_samples(st, *id, "", "client", r->local.samples, 0, err, errlen) ||
        store_add_samples(st, *id, "", "server", r->remote.samples, 0, err, errlen))
        return -EIO;
    server_host_note(r, note, sizeof(note));
    if (store_add_host(st, *id, "client", hs ? hs : r->local.host, "no snapshot was taken", err,
                       errlen) ||
        store_add_host(st, *id, "server", r->remote.host, note, err, errlen))
        return -EIO;
    return 0;
}

static int add_side_flows(struct store *st, int64_t id, const struct params *p,
                          const struct side_result *sr, char *err, size_t errlen)
{
    sqlite3_stmt *s = store_prepare(st, flow_sql, err, errlen);
    int rc = s ? 0 : -EIO;

    for (uint32_t i = 0; !rc && i < sr->nflows; i++) {
        const struct side_flow *f = &sr->flows[i];
        double bps = f->seconds > 0 ? (double)f->bytes * 8 / f->seconds : 0;
        bool ti = f->sender && f->ti.valid;
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_int64(s, 2, f->id);
        sqlite3_bind_text(s, 3, f->sender ? "server_to_client" : "client_to_server", -1,
                          SQLITE_STATIC);
        sqlite3_bind_int64(s, 4, f->sender ? 0 : (int64_t)f->bytes);
        sqlite3_bind_int64(s, 5, f->sender ? (int64_t)f->bytes : 0);
        sqlite3_bind_double(s, 6, f->sender ? 0 : bps);
        sqlite3_bind_double(s, 7, f->sender ? bps : 0);
        if (ti) {
            sqlite3_bind_int64(s, 8, f->ti.total_retrans);
            sqlite3_bind_int64(s, 9, f->ti.rtt_us);
            sqlite3_bind_int64(s, 10, f->ti.min_rtt_us);
            sqlite3_bind_int64(s, 11, f->ti.snd_cwnd);
            sqlite3_bind_int64(s, 12, f->ti.snd_wnd);
            sqlite3_bind_double(s, 13, (double)f->ti.delivery_rate_bps);
        }
        sqlite3_bind_int64(s, 18, f->cpu);
        if (params_is_transactional(p))
            sqlite3_bind_int64(s, 19, (int64_t)f->txns);
        if (sqlite3_step(s) != SQLITE_DONE)
            rc = store_fail(st, err, errlen, "cannot store a flow");
    }
    sqlite3_finalize(s);
    return rc;
}

int store_add_server_run(struct store *st, const struct params *p, const struct side_result *s,
                         const char *client, const char *started_at, const struct hostsnap *hs,
                         int64_t *id, char *err, size_t errlen)
{
    struct metric_value m[METRIC_MAX];
    size_t nm = metric_from_side(p, s, m, METRIC_MAX);
    cJSON *d = cJSON_CreateObject();
    char now[32], *params = params_text(p), *doc;
    int rc;

    cJSON_AddStringToObject(d, "role", "server");
    cJSON_AddStringToObject(d, "client", client);
    cJSON_AddItemToObject(d, "params", params_to_json(p));
    cJSON_AddItemToObject(d, "side", result_json_side(s));
    /* the samples have a table of their own */
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(d, "side"), "samples");
    doc = cJSON_PrintUnformatted(d);
    cJSON_Delete(d);
    store_time_iso(time(NULL), now, sizeof(now));
    rc = params && doc ? 0 : -ENOMEM;
    if (!rc)
        rc = store_exec(st, err, errlen,
                        "INSERT INTO runs (test, udp, role, title, started_at, saved_at, peer,"
                        " server_version, params, document) VALUES (?,?,'server',?,?,?,?,?,?,?)",
                        "tittttttt", params_test_name(p->test), (int64_t)p->udp, p->title,
                        started_at && *started_at ? started_at : now, now, client, NETRIG_VERSION,
                        params, doc);
    else
        snprintf(err, errlen, "out of memory storing a run");
    free(params);
    free(doc);
    if (rc)
        return rc;
    *id = sqlite3_last_insert_rowid(st->db);
    if (store_add_metrics(st, *id, m, nm, err, errlen) ||
        add_side_flows(st, *id, p, s, err, errlen) ||
        add_intervals(st, *id, "server", s, err, errlen) ||
        store_add_samples(st, *id, "", "server", s->samples, 0, err, errlen) ||
        store_add_host(st, *id, "server", hs, "no snapshot was taken", err, errlen) ||
        store_add_host(st, *id, "client", NULL,
                       "a run this host's daemon served: only the server's settings are kept", err,
                       errlen))
        return -EIO;
    return 0;
}

int store_tag(struct store *st, const int64_t *ids, size_t n, const char *name, char *err,
              size_t errlen)
{
    for (size_t i = 0; i < n; i++)
        if (store_exec(st, err, errlen, "INSERT OR IGNORE INTO tags VALUES (?, ?)", "ti", name,
                       ids[i]))
            return -EIO;
    return 0;
}

int store_untag(struct store *st, const int64_t *ids, size_t n, const char *name, char *err,
                size_t errlen)
{
    for (size_t i = 0; i < n; i++)
        if (store_exec(st, err, errlen, "DELETE FROM tags WHERE name = ? AND run_id = ?", "ti",
                       name, ids[i]))
            return -EIO;
    return 0;
}

int store_annotate(struct store *st, int64_t id, const char *key, const char *json,
                   const char *title, char *err, size_t errlen)
{
    char path[80];

    snprintf(path, sizeof(path), "$.%s", key);
    return store_exec(st, err, errlen,
                      "UPDATE runs SET document = json_set(document, ?, json(?)), "
                      "title = CASE title WHEN '' THEN ? ELSE title END WHERE id = ?",
                      "ttti", path, json, title, id);
}

int store_save_served(const char *path, const struct params *p, const struct side_result *s,
                      const char *client, int64_t *id, char *err, size_t errlen)
{
    struct hostsnap *hs = hostsnap_new();
    struct store *st = hs ? store_open(path, true, err, errlen) : NULL;
    char started[32];
    int rc = -EIO;

    if (!hs)
        snprintf(err, errlen, "out of memory saving a served run");
    if (st) {
        /* the measured period ended just now; the warm-up came before it */
        store_time_iso((long long)time(NULL) - (long long)(s->seconds + p->omit_ns / 1e9), started,
                       sizeof(started));
        if (!s->host) /* the session took none (it declines to send them) */
            hostsnap_take(NULL, hs);
        rc = store_begin(st, err, errlen);
        if (!rc && (rc = store_add_server_run(st, p, s, client, started, s->host ? s->host : hs, id,
                                              err, errlen)) == 0)
            rc = store_commit(st, err, errlen);
        if (rc)
            store_rollback(st);
    }
    store_close(st);
    hostsnap_free(hs);
    return rc;
}
