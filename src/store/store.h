/* store: the results history, an SQLite database (docs/history.md). Opening it checks and
 * migrates the schema (a backup copy first; a newer schema is refused); adding a run stores
 * what the result model holds — parameters, per-interval and per-flow results, summary metrics,
 * the -J document — with a host snapshot. The store only reads results. */
#ifndef NETRIG_STORE_H
#define NETRIG_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hostsnap.h"
#include "result.h"

#define STORE_SCHEMA_VERSION 8
#define STORE_APPLICATION_ID 0x4e524754 /* "NRGT" */
#define STORE_BUSY_MS        15000

struct store;

/* $XDG_DATA_HOME/netrig/history.db, else $HOME/.local/share/netrig/history.db. With mkdirs
 * the directories are created (mode 0700). */
int store_default_path(char *out, size_t len, bool mkdirs, char *err, size_t errlen);

/* Opens the history at path; with create a missing file is made. An older schema is copied to
 * "<path>.schema-vN.bak" and migrated; a newer one, or a file that is not a netrig history, is
 * refused. NULL and a one-line err on failure. */
struct store *store_open(const char *path, bool create, char *err, size_t errlen);
/* Opens the history at path for reading only (SQLITE_OPEN_READONLY): nothing is written — no
 * pragma, no WAL switch, no migration, no backup — so a file the user may only read works. A
 * WAL-mode file whose directory the user cannot write is read without its -shm index when its
 * -wal is empty; when the -wal holds changes, err says how to make them readable. An older
 * schema is read through a migrated copy in memory (store_notice says so). Writes through the
 * returned store fail. */
struct store *store_open_read(const char *path, char *err, size_t errlen);
bool store_is_readonly(const struct store *st);
/* "" or one line a reader should be told (e.g. the file's schema is older). */
const char *store_notice(const struct store *st);
void store_close(struct store *st);
const char *store_path(const struct store *st);

/* BEGIN IMMEDIATE / COMMIT / ROLLBACK: the add functions below run inside one of these, so a
 * crash leaves each run either wholly stored or absent. */
int store_begin(struct store *st, char *err, size_t errlen);
int store_commit(struct store *st, char *err, size_t errlen);
void store_rollback(struct store *st);

/* A client's run (r as measured) with this host's snapshot (hs; NULL: r->local.host, or none)
 * and the server's (r->remote.host, or r->remote.host_note saying why there is none);
 * sweep_point 0 = none. */
int store_add_run(struct store *st, const struct run_result *r, const struct hostsnap *hs,
                  int64_t sweep_point, int64_t *id, char *err, size_t errlen);
/* A daemon's own side of a test it served to client (an address). */
int store_add_server_run(struct store *st, const struct params *p, const struct side_result *s,
                         const char *client, const char *started_at, const struct hostsnap *hs,
                         int64_t *id, char *err, size_t errlen);
/* For a daemon: opens the history at path, snapshots this host and adds its side of a test
 * it just served, in one call (each session thread has its own connection). */
int store_save_served(const char *path, const struct params *p, const struct side_result *s,
                      const char *client, int64_t *id, char *err, size_t errlen);
/* One side ("client" or "server") of run id: its host snapshot, or (hs NULL) that it was not
 * recorded and why (note). Replaces what that side had. */
int store_add_host(struct store *st, int64_t id, const char *side, const struct hostsnap *hs,
                   const char *note, char *err, size_t errlen);
/* Metric rows of run id (store_doc.c and the add functions above). */
struct metric_value;
int store_add_metrics(struct store *st, int64_t id, const struct metric_value *m, size_t n,
                      char *err, size_t errlen);
/* Tags runs ids[0..n-1] with name (idempotent). */
int store_tag(struct store *st, const int64_t *ids, size_t n, const char *name, char *err,
              size_t errlen);
/* Takes tag name off runs ids[0..n-1] (a run without it is left as it is). */
int store_untag(struct store *st, const int64_t *ids, size_t n, const char *name, char *err,
                size_t errlen);
/* Adds json (one JSON value as text) to run id's stored document under key, and titles the
 * run title when it has no title yet: what a later step knew of a run it saved (a diagnosis
 * of it). */
int store_annotate(struct store *st, int64_t id, const char *key, const char *json,
                   const char *title, char *err, size_t errlen);

/* "YYYY-MM-DDTHH:MM:SSZ" for t (UTC). */
void store_time_iso(long long t, char *buf, size_t len);

#endif
