/* store_read: opening the history for reading only — no pragma, no WAL switch, no migration,
 * no backup — so that a file the user may read but not write works (docs/history.md). */
#include "store.h"

#include "store_priv.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "file:PATH?immutable=1" with PATH percent-encoded (RFC 3986 unreserved characters and '/'
 * kept). */
static int immutable_uri(const char *path, char *out, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = (size_t)snprintf(out, len, "file:");

    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (o + 4 >= len)
            return -ENAMETOOLONG;
        if (isalnum(*p) || strchr("/-._~", *p)) {
            out[o++] = (char)*p;
        } else {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    if (o + sizeof("?immutable=1") > len)
        return -ENAMETOOLONG;
    memcpy(out + o, "?immutable=1", sizeof("?immutable=1"));
    return 0;
}

/* Does PATH-wal hold frames (committed changes not yet copied into the database file)? */
static bool wal_has_frames(const char *path)
{
    char wal[4200];
    struct stat sb;

    snprintf(wal, sizeof(wal), "%s-wal", path);
    return !stat(wal, &sb) && sb.st_size > 0;
}

static int probe(sqlite3 *db)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &s, NULL);

    if (rc == SQLITE_OK)
        rc = sqlite3_step(s) == SQLITE_ROW ? SQLITE_OK : sqlite3_extended_errcode(db);
    else
        rc = sqlite3_extended_errcode(db);
    sqlite3_finalize(s);
    return rc;
}

/* Opens st->path read-only. A WAL-mode file needs its -shm index, which a reader without
 * write access to the directory cannot create: when the WAL holds nothing the database file
 * alone is read (immutable=1); otherwise the error says how to make it readable. */
static int open_readonly(struct store *st, char *err, size_t errlen)
{
    char uri[8400];
    int rc;

    if (sqlite3_open_v2(st->path, &st->db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        (rc = probe(st->db)) == SQLITE_OK)
        return 0;
    rc = st->db ? sqlite3_extended_errcode(st->db) : SQLITE_NOMEM;
    if ((rc & 0xff) != SQLITE_READONLY && (rc & 0xff) != SQLITE_CANTOPEN) {
        store_fail(st, err, errlen, "cannot read it (is it an SQLite file?)");
        return -EIO;
    }
    if (wal_has_frames(st->path)) {
        snprintf(err, errlen,
                 "history database '%s' has changes in '%s-wal' that cannot be read without "
                 "write access to its directory: ask its owner to checkpoint it (sqlite3 '%s' "
                 "'PRAGMA wal_checkpoint(TRUNCATE)') or to stop the netrig writing it, or copy "
                 "the file and its -wal to a directory you own and give --db COPY",
                 st->path, st->path, st->path);
        return -EACCES;
    }
    sqlite3_close(st->db);
    st->db = NULL;
    if (immutable_uri(st->path, uri, sizeof(uri))) {
        snprintf(err, errlen, "history database path '%s' is too long; give --db PATH", st->path);
        return -ENAMETOOLONG;
    }
    if (sqlite3_open_v2(uri, &st->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK ||
        probe(st->db) != SQLITE_OK) {
        store_fail(st, err, errlen, "cannot read it (is it an SQLite file?)");
        return -EIO;
    }
    return 0;
}

/* An older schema read-only: the database is copied into memory and the copy migrated, so the
 * file is never written. */
static int migrate_copy(struct store *st, int64_t v, char *err, size_t errlen)
{
    sqlite3 *mem = NULL;
    sqlite3_backup *b;
    int rc;

    if (sqlite3_open_v2(":memory:", &mem, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        sqlite3_close(mem);
        snprintf(err, errlen, "out of memory reading the history '%s'", st->path);
        return -ENOMEM;
    }
    b = sqlite3_backup_init(mem, "main", st->db, "main");
    rc = b ? sqlite3_backup_step(b, -1) : SQLITE_ERROR;
    if (b)
        sqlite3_backup_finish(b);
    if (rc != SQLITE_DONE) {
        store_fail(st, err, errlen, "cannot copy it to read its older schema");
        sqlite3_close(mem);
        return -EIO;
    }
    sqlite3_close(st->db);
    st->db = mem;
    sqlite3_exec(st->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
    if (store_migrate(st, err, errlen))
        return -EIO;
    snprintf(st->notice, sizeof(st->notice),
             "history database '%s' has schema version %lld: read through an upgraded copy in "
             "memory (the next netrig that saves a run there upgrades the file)",
             st->path, (long long)v);
    return 0;
}

struct store *store_open_read(const char *path, char *err, size_t errlen)
{
    struct store *st = calloc(1, sizeof(*st));
    int64_t v = 0;

    if (!st) {
        snprintf(err, errlen, "out of memory opening the history");
        return NULL;
    }
    snprintf(st->path, sizeof(st->path), "%s", path);
    if (access(path, F_OK) || access(path, R_OK)) {
        if (errno == ENOENT)
            snprintf(err, errlen,
                     "no history database at '%s': run a test first, or give --db PATH", path);
        else
            snprintf(err, errlen,
                     "cannot read history database '%s': %s; ask its owner for read access, or "
                     "give another --db PATH",
                     path, strerror(errno));
        free(st);
        return NULL;
    }
    if (open_readonly(st, err, errlen) || store_check_identity(st, &v, err, errlen) ||
        (v < STORE_SCHEMA_VERSION && migrate_copy(st, v, err, errlen))) {
        store_close(st);
        return NULL;
    }
    sqlite3_busy_timeout(st->db, STORE_BUSY_MS);
    st->readonly = true;
    return st;
}

bool store_is_readonly(const struct store *st) { return st->readonly; }

const char *store_notice(const struct store *st) { return st->notice; }
