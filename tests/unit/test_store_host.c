/* Unit tests for the history's host snapshots and read-only opening: each side of a run (the
 * client's, the server's as it sent it, or why it is missing), migration of a hand-built
 * schema-3 database to snapshots per side (with its backup, and read-only through a copy in
 * memory), read-only opening that never writes the file, and the questions the CLI asks of
 * a stored run (a tag taken off, a diagnosis added to its document). */
#define STORE_TEST_NAME "store-host"
#include "test_store_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "store.h"
#include "store_run.h"

/* A one-flow stream run against a server at 192.0.2.7 running netrig 0.0.9. */
static void make_run(struct run_result *r)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->test, sizeof(r->test), "stream");
    snprintf(r->server, sizeof(r->server), "192.0.2.7:5301");
    snprintf(r->started_at, sizeof(r->started_at), "2026-01-02T03:04:05Z");
    params_defaults(&r->params);
    assert_int_equal(result_side_init(&r->local, 1, 1), 0);
    assert_int_equal(result_side_init(&r->remote, 1, 1), 0);
    r->local.valid = r->remote.valid = true;
    snprintf(r->remote.version, sizeof(r->remote.version), "0.0.9");
    r->local.seconds = r->remote.seconds = 1.0;
    r->local.flows[0].sender = true;
    r->local.flows[0].bytes = r->remote.flows[0].bytes = 1000000;
    r->local.flows[0].seconds = r->remote.flows[0].seconds = 1.0;
    assert_int_equal(result_merge(r), 0);
}

static int64_t add(struct store *st, const struct run_result *r, const struct hostsnap *hs)
{
    char err[512];
    int64_t id = 0;

    assert_int_equal(store_begin(st, err, sizeof(err)), 0);
    if (store_add_run(st, r, hs, 0, &id, err, sizeof(err)))
        fail_msg("store_add_run: %s", err);
    assert_int_equal(store_commit(st, err, sizeof(err)), 0);
    return id;
}

static void test_host_sides(void **state)
{
    char path[300], err[512], note[200];
    struct hostsnap *hs = hostsnap_new(), *back = hostsnap_new();
    struct run_result r;
    struct store *st;
    int64_t id;

    (void)state;
    db_path("sides.db", path, sizeof(path));
    st = store_open(path, true, err, sizeof(err));
    assert_non_null(st);
    make_run(&r);
    hostsnap_set(hs, "net.ipv4.tcp_congestion_control", "bbr");
    hostsnap_set(hs, "kernel.osrelease", "6.1.0");
    r.remote.host = hostsnap_new();
    assert_non_null(r.remote.host);
    hostsnap_set(r.remote.host, "net.ipv4.tcp_rmem", "4096\t131072\t33554432");
    id = add(st, &r, hs);
    /* each side apart: the client's as given, the server's as it sent it */
    assert_int_equal(store_run_host_side(st, id, "client", back, note, sizeof(note)), 1);
    assert_int_equal(back->n, 2);
    assert_string_equal(note, "");
    assert_int_equal(store_run_host_side(st, id, "server", back, note, sizeof(note)), 1);
    assert_int_equal(back->n, 1);
    assert_string_equal(hostsnap_get(back, "net.ipv4.tcp_rmem"), "4096 131072 33554432");
    /* a server that sent none: not recorded, with why */
    hostsnap_free(r.remote.host);
    r.remote.host = NULL;
    id = add(st, &r, hs);
    assert_int_equal(store_run_host_side(st, id, "server", back, note, sizeof(note)), 0);
    assert_int_equal(back->n, 0);
    assert_string_equal(note, "the server (netrig 0.0.9) did not send its settings");
    /* a server at a loopback address shares this host */
    snprintf(r.server, sizeof(r.server), "127.0.0.1:5301");
    id = add(st, &r, hs);
    assert_int_equal(store_run_host_side(st, id, "server", back, note, sizeof(note)), 0);
    assert_contains(note, "ran on this host at a loopback address");
    snprintf(r.remote.host_note, sizeof(r.remote.host_note), "the daemon declined");
    id = add(st, &r, NULL);
    assert_int_equal(store_run_host_side(st, id, "server", back, note, sizeof(note)), 0);
    assert_string_equal(note, "the daemon declined");
    assert_int_equal(store_run_host_side(st, id, "client", back, note, sizeof(note)), 0);
    assert_string_equal(note, "no snapshot was taken");
    result_fini(&r);
    /* deleting a run takes both sides with it */
    assert_int_equal(store_exec(st, err, sizeof(err), "DELETE FROM runs", ""), 0);
    assert_int_equal(sql_int(store_sqlite(st), "SELECT (SELECT count(*) FROM host) + "
                                               "(SELECT count(*) FROM host_sides)"),
                     0);
    store_close(st);
    hostsnap_free(hs);
    hostsnap_free(back);
}

/* Builds a schema-3 database by hand, as netrig wrote it before host snapshots were kept per
 * side: a client's run with its snapshot, a run the daemon served with its own, a mesh cell's
 * run and a client's run without one. */
static void make_v3(const char *path)
{
    sqlite3 *db;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    for (int v = 1; v <= 3; v++)
        assert_int_equal(sqlite3_exec(db, store_migration_sql(v), NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(
            db,
            "INSERT INTO runs (test, role, started_at, saved_at, params, document) VALUES"
            " ('stream', 'client', '2025-09-01T00:00:00Z', '2025-09-01T00:00:10Z', '{}', '{}'),"
            " ('stream', 'server', '2025-09-01T00:01:00Z', '2025-09-01T00:01:10Z', '{}', '{}'),"
            " ('rr', 'client', '2025-09-01T00:02:00Z', '2025-09-01T00:02:10Z', '{}', '{}'),"
            " ('crr', 'client', '2025-09-01T00:03:00Z', '2025-09-01T00:03:10Z', '{}', '{}');"
            "INSERT INTO host VALUES (1, 'net.ipv4.tcp_rmem', '4096 131072 6291456'),"
            " (1, 'kernel.osrelease', '6.1.0'), (2, 'net.ipv4.tcp_rmem', '4096 87380 6291456');"
            "INSERT INTO meshes (plan, started_at, status, hosts, tests)"
            " VALUES ('/p', '2025-09-01T00:02:00Z', 'done', '[]', '[]');"
            "INSERT INTO mesh_cells VALUES (1, 0, 0, 0, 1, 'rr', 'h1', 'h2', 'complete', '', 3);"
            "PRAGMA user_version = 3; PRAGMA application_id = 1314015060;",
            NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
}

/* What make_v3's runs hold once migrated, through store (writable or read-only). */
static void check_v3_hosts(struct store *st)
{
    struct hostsnap *hs = hostsnap_new();
    char note[200];

    assert_int_equal(store_run_host_side(st, 1, "client", hs, note, sizeof(note)), 1);
    assert_int_equal(hs->n, 2);
    assert_string_equal(hostsnap_get(hs, "net.ipv4.tcp_rmem"), "4096 131072 6291456");
    assert_int_equal(hostsnap_version(hs), 1);
    assert_int_equal(store_run_host_side(st, 1, "server", hs, note, sizeof(note)), 0);
    assert_contains(note, "recorded only the client's settings");
    /* a run the daemon served: its rows are the server's */
    assert_int_equal(store_run_host_side(st, 2, "server", hs, note, sizeof(note)), 1);
    assert_string_equal(hostsnap_get(hs, "net.ipv4.tcp_rmem"), "4096 87380 6291456");
    assert_int_equal(store_run_host_side(st, 2, "client", hs, note, sizeof(note)), 0);
    assert_contains(note, "daemon served");
    store_run_host(st, 2, hs);
    assert_int_equal(hs->n, 1);
    assert_int_equal(store_run_host_side(st, 3, "client", hs, note, sizeof(note)), 0);
    assert_contains(note, "mesh cell");
    assert_int_equal(store_run_host_side(st, 4, "client", hs, note, sizeof(note)), 0);
    assert_string_equal(note, "no snapshot was stored with this run");
    hostsnap_free(hs);
}

static void test_migrate_v3(void **state)
{
    char path[300], bak[320], err[512], ok[16];
    struct store *st;
    sqlite3 *db;

    (void)state;
    assert_true(STORE_SCHEMA_VERSION >= 4);
    db_path("v3.db", path, sizeof(path));
    make_v3(path);
    /* read-only first: the migrated copy in memory, the file untouched */
    st = store_open_read(path, err, sizeof(err));
    if (!st)
        fail_msg("%s", err);
    check_v3_hosts(st);
    store_close(st);
    st = store_open(path, false, err, sizeof(err));
    if (!st)
        fail_msg("%s", err);
    assert_int_equal(sql_int(store_sqlite(st), "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    check_v3_hosts(st);
    assert_int_equal(sql_int(store_sqlite(st), "SELECT count(*) FROM host_sides"), 8);
    assert_int_equal(sql_int(store_sqlite(st), "PRAGMA foreign_key_check"), -1); /* no rows */
    sql_text(store_sqlite(st), "PRAGMA integrity_check", ok, sizeof(ok));
    assert_string_equal(ok, "ok");
    /* deleting a run still takes its host rows with it */
    assert_int_equal(store_exec(st, err, sizeof(err), "DELETE FROM runs WHERE id = 1", ""), 0);
    assert_int_equal(sql_int(store_sqlite(st), "SELECT count(*) FROM host WHERE run_id = 1"), 0);
    store_close(st);
    snprintf(bak, sizeof(bak), "%s.schema-v3.bak", path);
    assert_int_equal(sqlite3_open_v2(bak, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sql_int(db, "PRAGMA user_version"), 3);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM host"), 3);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'host_sides'"),
                     0);
    sqlite3_close(db);
}

/* Read commands open read-only: an older schema is read through a migrated copy in memory, and
 * the file is left exactly as it was (no migration, no backup, no WAL switch); writing through
 * a read-only store is refused. */
static void test_read_only(void **state)
{
    char path[300], bak[320], err[512];
    struct store_run sr;
    struct store *st;
    sqlite3 *db;
    char mode[32];

    (void)state;
    db_path("ro-v3.db", path, sizeof(path));
    make_v3(path);
    st = store_open_read(path, err, sizeof(err));
    if (!st)
        fail_msg("%s", err);
    assert_true(store_is_readonly(st));
    assert_contains(store_notice(st), "schema version 3");
    assert_int_equal(store_run_get(st, 1, &sr, err, sizeof(err)), 0);
    assert_string_equal(sr.test, "stream");
    assert_int_equal(store_begin(st, err, sizeof(err)), -EROFS);
    assert_contains(err, "read-only");
    store_close(st);
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sql_int(db, "PRAGMA user_version"), 3);
    sql_text(db, "PRAGMA journal_mode", mode, sizeof(mode));
    assert_string_equal(mode, "delete"); /* never switched to WAL */
    sqlite3_close(db);
    snprintf(bak, sizeof(bak), "%s.schema-v3.bak", path);
    assert_int_not_equal(access(bak, F_OK), 0);

    /* the current schema: read in place, no notice */
    db_path("ro-new.db", path, sizeof(path));
    st = store_open(path, true, err, sizeof(err));
    assert_non_null(st);
    store_close(st);
    st = store_open_read(path, err, sizeof(err));
    assert_non_null(st);
    assert_string_equal(store_notice(st), "");
    store_close(st);

    /* missing, newer and foreign files: the same refusals as for writing */
    db_path("ro-missing.db", path, sizeof(path));
    assert_null(store_open_read(path, err, sizeof(err)));
    assert_contains(err, "no history database");
    assert_int_not_equal(access(path, F_OK), 0);
    db_path("ro-foreign.db", path, sizeof(path));
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_exec(db, "CREATE TABLE t (x); INSERT INTO t VALUES (1)", NULL, NULL, NULL);
    sqlite3_close(db);
    assert_null(store_open_read(path, err, sizeof(err)));
    assert_contains(err, "not a netrig history");
    db_path("ro-newer.db", path, sizeof(path));
    make_v3(path);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL);
    sqlite3_close(db);
    assert_null(store_open_read(path, err, sizeof(err)));
    assert_contains(err, "schema version 99");
}

/* store_untag takes a tag off the runs named only; store_annotate adds a value to a run's
 * document under its key and titles the run only when it has no title. */
static void test_untag_annotate(void **state)
{
    char path[300], err[512], sql[200];
    struct run_result r;
    struct store *st;
    int64_t *ids, a, b;
    size_t n;

    (void)state;
    db_path("annotate.db", path, sizeof(path));
    st = store_open(path, true, err, sizeof(err));
    assert_non_null(st);
    make_run(&r);
    a = add(st, &r, NULL);
    b = add(st, &r, NULL);
    result_fini(&r);
    assert_int_equal(store_tag(st, (int64_t[]){a, b}, 2, "before", err, sizeof(err)), 0);
    assert_int_equal(store_untag(st, &a, 1, "before", err, sizeof(err)), 0);
    assert_int_equal(store_untag(st, &a, 1, "before", err, sizeof(err)), 0); /* not tagged: as is */
    assert_int_equal(store_run_resolve(st, "before", &ids, &n, err, sizeof(err)), 0);
    assert_true(n == 1 && ids[0] == b);
    free(ids);
    snprintf(sql, sizeof(sql),
             "SELECT json_extract(document, '$.diagnose.id') || '|' || title FROM runs "
             "WHERE id = %lld",
             (long long)b);
    assert_int_equal(
        store_annotate(st, b, "diagnose", "{\"id\":\"cpu\"}", "diagnose: cpu", err, sizeof(err)),
        0);
    sql_text(store_sqlite(st), sql, err, sizeof(err));
    assert_string_equal(err, "cpu|diagnose: cpu");
    assert_int_equal(
        store_annotate(st, b, "diagnose", "{\"id\":\"nic\"}", "diagnose: nic", err, sizeof(err)),
        0);
    sql_text(store_sqlite(st), sql, err, sizeof(err));
    assert_string_equal(err, "nic|diagnose: cpu"); /* the value replaced, the title kept */
    store_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_sides),
        cmocka_unit_test(test_migrate_v3),
        cmocka_unit_test(test_read_only),
        cmocka_unit_test(test_untag_annotate),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
