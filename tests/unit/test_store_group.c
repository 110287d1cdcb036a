/* Unit tests for run groups in the history (issue 15): a multi-target group's runs with each
 * server's snapshot, a third-party run added from its document with both ends' settings, the
 * group read back and named as `group:N`; and the migration of a hand-built schema-4 database
 * (backup first, read-only through a copy in memory). */
#define STORE_TEST_NAME "store-group"
#include "test_store_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "result_json.h"
#include "store.h"
#include "store_doc.h"
#include "store_group.h"
#include "store_run.h"

/* A one-flow rr run against server, which sent rmem as its tcp_rmem (NULL: no settings). */
static void make_run(struct run_result *r, const char *server, const char *rmem)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->test, sizeof(r->test), "rr");
    snprintf(r->server, sizeof(r->server), "%s", server);
    snprintf(r->started_at, sizeof(r->started_at), "2026-02-03T04:05:06Z");
    params_defaults(&r->params);
    r->params.test = PARAMS_TEST_RR;
    assert_int_equal(result_side_init(&r->local, 1, 1), 0);
    assert_int_equal(result_side_init(&r->remote, 1, 1), 0);
    r->local.valid = r->remote.valid = true;
    snprintf(r->remote.version, sizeof(r->remote.version), "0.1.0");
    r->local.seconds = r->remote.seconds = 1.0;
    r->local.flows[0].txns = r->remote.flows[0].txns = 1000;
    r->local.flows[0].seconds = 1.0;
    if (rmem) {
        r->remote.host = hostsnap_new();
        assert_non_null(r->remote.host);
        hostsnap_set(r->remote.host, "net.ipv4.tcp_rmem", rmem);
    } else {
        r->remote.host_declined = true;
        snprintf(r->remote.host_note, sizeof(r->remote.host_note),
                 "the server declined to send its settings (serve --no-host-snapshot)");
    }
    assert_int_equal(result_merge(r), 0);
}

static int collect(int64_t run, uint32_t idx, void *arg)
{
    int64_t *v = arg;

    assert_true(idx < 3);
    v[idx] = run;
    return 0;
}

/* Each target's server settings apart: sent (id[0]), or declined with why (id[1]). */
static void check_sides(struct store *st, const int64_t *id)
{
    struct hostsnap *back = hostsnap_new();
    char note[200];

    assert_int_equal(store_run_host_side(st, id[0], "server", back, note, sizeof(note)), 1);
    assert_string_equal(hostsnap_get(back, "net.ipv4.tcp_rmem"), "4096 131072 33554432");
    assert_int_equal(store_run_host_side(st, id[1], "server", back, note, sizeof(note)), 0);
    assert_contains(note, "declined to send its settings");
    assert_int_equal(store_run_host_side(st, id[1], "client", back, note, sizeof(note)), 1);
    assert_string_equal(hostsnap_get(back, "net.ipv4.tcp_rmem"), "4096 87380 6291456");
    hostsnap_free(back);
}

static void test_multi_group(void **state)
{
    char path[300], err[512];
    struct hostsnap *own = hostsnap_new();
    struct store_group g = {.kind = "multi",
                            .test = "rr",
                            .started_at = "2026-02-03T04:05:06Z",
                            .targets = "[{\"target\":\"a:1\"},{\"target\":\"b:1\","
                                       "\"status\":\"failed\"},{\"target\":\"c:1\"}]",
                            .summary = "{\"targets\":3}"};
    struct store_group back_g;
    struct run_result r[2];
    struct store_run sr;
    struct store *st;
    int64_t gid, id[2], runs[3] = {0}, *ids;
    size_t n;

    (void)state;
    db_path("group.db", path, sizeof(path));
    st = store_open(path, true, err, sizeof(err));
    assert_non_null(st);
    hostsnap_set(own, "net.ipv4.tcp_rmem", "4096 87380 6291456");
    make_run(&r[0], "192.0.2.1:5301", "4096 131072 33554432");
    make_run(&r[1], "192.0.2.3:5301", NULL);
    /* a run outside any group first */
    assert_int_equal(store_begin(st, err, sizeof(err)), 0);
    assert_int_equal(store_add_run(st, &r[0], own, 0, &id[0], err, sizeof(err)), 0);
    /* the group: targets 0 and 2 ran, target 1 failed */
    assert_int_equal(store_group_create(st, &g, &gid, err, sizeof(err)), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(store_add_run(st, &r[i], own, 0, &id[i], err, sizeof(err)), 0);
        assert_int_equal(store_group_add_run(st, gid, i ? 2 : 0, id[i], err, sizeof(err)), 0);
    }
    assert_int_equal(store_commit(st, err, sizeof(err)), 0);
    assert_int_equal(gid, 1);

    assert_int_equal(store_group_get(st, gid, &back_g, err, sizeof(err)), 0);
    assert_string_equal(back_g.kind, "multi");
    assert_string_equal(back_g.test, "rr");
    assert_string_equal(back_g.source, "");
    assert_string_equal(back_g.targets, g.targets);
    assert_string_equal(back_g.summary, g.summary);
    assert_int_equal(back_g.nruns, 2);
    store_group_free(&back_g);
    assert_int_equal(store_group_runs(st, gid, collect, runs), 0);
    assert_true(runs[0] == id[0] && runs[1] == 0 && runs[2] == id[1]);

    /* each run knows its group, and group:N names them in target order */
    assert_int_equal(store_run_get(st, id[1], &sr, err, sizeof(err)), 0);
    assert_int_equal(sr.group, gid);
    assert_int_equal(sr.group_idx, 2);
    assert_string_equal(sr.group_kind, "multi");
    assert_int_equal(store_run_get(st, 1, &sr, err, sizeof(err)), 0);
    assert_int_equal(sr.group, 0);
    assert_int_equal(store_run_resolve(st, "group:1", &ids, &n, err, sizeof(err)), 0);
    assert_true(n == 2 && ids[0] == id[0] && ids[1] == id[1]);
    free(ids);
    assert_int_equal(store_run_resolve(st, "group:7", &ids, &n, err, sizeof(err)), -ENOENT);
    assert_contains(err, "group 7 has no runs");
    assert_int_equal(store_group_get(st, 7, &back_g, err, sizeof(err)), -ENOENT);
    assert_contains(err, "no group 7");

    check_sides(st, id);

    /* deleting a run leaves the group; deleting the group unlinks its runs */
    assert_int_equal(store_exec(st, err, sizeof(err), "DELETE FROM runs WHERE id = ?", "i", id[0]),
                     0);
    assert_int_equal(store_group_get(st, gid, &back_g, err, sizeof(err)), 0);
    assert_int_equal(back_g.nruns, 1);
    store_group_free(&back_g);
    assert_int_equal(store_exec(st, err, sizeof(err), "DELETE FROM run_groups", ""), 0);
    assert_int_equal(store_run_get(st, id[1], &sr, err, sizeof(err)), 0);
    assert_int_equal(sr.group, 0);
    assert_int_equal(sql_int(store_sqlite(st), "PRAGMA foreign_key_check"), -1); /* no rows */
    store_close(st);
    result_fini(&r[0]);
    result_fini(&r[1]);
    hostsnap_free(own);
}

/* A --from run: its document and both ends' settings, as the controller stores them. */
static void test_third_party_doc(void **state)
{
    char path[300], err[512], note[200];
    struct hostsnap *a = hostsnap_new(), *back = hostsnap_new();
    struct store_group g = {.kind = "third_party", .source = "198.51.100.1"};
    struct store_doc_hosts h = {.client = a, .server_note = "the server did not send them"};
    struct run_result r;
    struct store_run sr;
    struct store *st;
    cJSON *doc;
    int64_t gid, id;
    double v;

    (void)state;
    db_path("third.db", path, sizeof(path));
    st = store_open(path, true, err, sizeof(err));
    assert_non_null(st);
    hostsnap_set(a, "net.core.rmem_max", "212992");
    make_run(&r, "192.0.2.5:5301", "1 2 3");
    doc = result_json_run(&r);
    snprintf(g.test, sizeof(g.test), "rr");
    snprintf(g.started_at, sizeof(g.started_at), "%s", r.started_at);
    g.targets = "[{\"target\":\"192.0.2.5\",\"status\":\"complete\",\"error\":\"\"}]";
    assert_int_equal(store_begin(st, err, sizeof(err)), 0);
    assert_int_equal(store_doc_add_hosts(st, doc, NULL, &h, &id, err, sizeof(err)), 0);
    assert_int_equal(store_group_create(st, &g, &gid, err, sizeof(err)), 0);
    assert_int_equal(store_group_add_run(st, gid, 0, id, err, sizeof(err)), 0);
    assert_int_equal(store_commit(st, err, sizeof(err)), 0);
    cJSON_Delete(doc);
    assert_int_equal(store_run_get(st, id, &sr, err, sizeof(err)), 0);
    assert_int_equal(sr.group, gid);
    assert_string_equal(sr.group_kind, "third_party");
    assert_string_equal(sr.group_source, "198.51.100.1");
    assert_string_equal(sr.peer, "192.0.2.5:5301");
    /* its metrics came from the document: the latency percentiles are there */
    assert_int_equal(store_run_metric(st, id, "transactions_per_s", &v), 0);
    assert_dbl_near(v, 1000, 1e-6);
    assert_int_equal(store_run_host_side(st, id, "client", back, note, sizeof(note)), 1);
    assert_string_equal(hostsnap_get(back, "net.core.rmem_max"), "212992");
    assert_int_equal(store_run_host_side(st, id, "server", back, note, sizeof(note)), 0);
    assert_string_equal(note, "the server did not send them");
    store_close(st);
    result_fini(&r);
    hostsnap_free(a);
    hostsnap_free(back);
}

/* A schema-4 database by hand: one client's run with its snapshot, as netrig wrote it. */
static void make_v4(const char *path)
{
    sqlite3 *db;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    for (int v = 1; v <= 4; v++)
        assert_int_equal(sqlite3_exec(db, store_migration_sql(v), NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db,
                     "INSERT INTO runs (test, role, started_at, saved_at, params, document) VALUES"
                     " ('rr', 'client', '2025-10-01T00:00:00Z', '2025-10-01T00:00:10Z', '{}',"
                     " '{}');"
                     "INSERT INTO metrics VALUES (1, 'transactions_per_s', 5000);"
                     "INSERT INTO host VALUES (1, 'client', 'net.ipv4.tcp_rmem', '1 2 3');"
                     "INSERT INTO host_sides VALUES (1, 'client', 1, ''),"
                     " (1, 'server', 0, 'the server did not send its settings');"
                     "PRAGMA user_version = 4; PRAGMA application_id = 1314015060;",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
}

static void check_v4_run(struct store *st)
{
    char err[512];
    struct store_run sr;
    double v;

    assert_int_equal(store_run_get(st, 1, &sr, err, sizeof(err)), 0);
    assert_string_equal(sr.test, "rr");
    assert_int_equal(sr.group, 0);
    assert_string_equal(sr.group_kind, "");
    assert_int_equal(store_run_metric(st, 1, "transactions_per_s", &v), 0);
    assert_dbl_near(v, 5000, 0);
}

static void test_migrate_v4(void **state)
{
    char path[300], bak[320], err[512];
    struct store_group g = {.kind = "multi", .test = "rr", .started_at = "2026-01-01T00:00:00Z"};
    struct store *st;
    sqlite3 *db;
    int64_t gid;

    (void)state;
    assert_true(STORE_SCHEMA_VERSION >= 5);
    db_path("v4.db", path, sizeof(path));
    make_v4(path);
    /* read-only: through a migrated copy in memory, the file untouched */
    st = store_open_read(path, err, sizeof(err));
    if (!st)
        fail_msg("%s", err);
    assert_contains(store_notice(st), "schema version 4");
    check_v4_run(st);
    store_close(st);
    snprintf(bak, sizeof(bak), "%s.schema-v4.bak", path);
    assert_int_not_equal(access(bak, F_OK), 0);
    /* read-write: backed up, then migrated */
    st = store_open(path, false, err, sizeof(err));
    if (!st)
        fail_msg("%s", err);
    assert_int_equal(sql_int(store_sqlite(st), "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    check_v4_run(st);
    assert_int_equal(sql_int(store_sqlite(st), "SELECT count(*) FROM run_groups"), 0);
    /* the new column and table work on the old run */
    assert_int_equal(store_begin(st, err, sizeof(err)), 0);
    assert_int_equal(store_group_create(st, &g, &gid, err, sizeof(err)), 0);
    assert_int_equal(store_group_add_run(st, gid, 0, 1, err, sizeof(err)), 0);
    assert_int_equal(store_commit(st, err, sizeof(err)), 0);
    assert_int_equal(sql_int(store_sqlite(st), "SELECT group_id FROM runs WHERE id = 1"), gid);
    assert_int_equal(sql_int(store_sqlite(st), "PRAGMA foreign_key_check"), -1);
    store_close(st);
    assert_int_equal(sqlite3_open_v2(bak, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sql_int(db, "PRAGMA user_version"), 4);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM runs"), 1);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'run_groups'"),
                     0);
    sqlite3_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_multi_group),
        cmocka_unit_test(test_third_party_doc),
        cmocka_unit_test(test_migrate_v4),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
