/* Unit tests for the history: schema creation, migration of schema-1 and schema-2 databases
 * built here by hand (with their backups), refusal of a newer schema and of foreign files, a
 * run_result built by hand stored and read back, the same run stored from its -J document
 * (metrics equal to those of the run_result), run-set names, tags, sweeps and mesh plans. */
#define STORE_TEST_NAME "store"
#include "test_store_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "histo.h"
#include "metric.h"
#include "result_json.h"
#include "store.h"
#include "store_doc.h"
#include "store_mesh.h"
#include "store_run.h"
#include "store_sweep.h"
#include "store_tune.h"

static void test_create(void **state)
{
    char path[300], err[512], mode[32];
    struct store *st;

    (void)state;
    db_path("new.db", path, sizeof(path));
    st = store_open(path, false, err, sizeof(err));
    assert_null(st);
    assert_contains(err, "no history database");
    st = store_open(path, true, err, sizeof(err));
    assert_non_null(st);
    assert_int_equal(sql_int(store_sqlite(st), "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    assert_int_equal(sql_int(store_sqlite(st), "PRAGMA application_id"), STORE_APPLICATION_ID);
    assert_int_equal(sql_int(store_sqlite(st), "PRAGMA foreign_keys"), 1);
    sql_text(store_sqlite(st), "PRAGMA journal_mode", mode, sizeof(mode));
    assert_string_equal(mode, "wal");
    assert_int_equal(sql_int(store_sqlite(st),
                             "SELECT count(*) FROM sqlite_master WHERE name IN "
                             "('runs','sweeps','sweep_points','tags','meshes','mesh_cells')"),
                     6);
    store_close(st);
    /* reopening changes nothing and makes no backup */
    st = store_open(path, false, err, sizeof(err));
    assert_non_null(st);
    store_close(st);
    db_path("new.db.schema-v1.bak", path, sizeof(path));
    assert_int_not_equal(access(path, F_OK), 0);
}

/* A stream run as the client would have measured it: 2 flows, 3 client intervals with cells,
 * 2 server intervals. */
static void make_run(struct run_result *r)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->test, sizeof(r->test), "stream");
    snprintf(r->server, sizeof(r->server), "192.0.2.7:5301");
    snprintf(r->started_at, sizeof(r->started_at), "2026-01-02T03:04:05Z");
    params_defaults(&r->params);
    r->params.flows = 2;
    snprintf(r->params.title, sizeof(r->params.title), "unit, \"quoted\"");
    assert_int_equal(result_side_init(&r->local, 2, 3), 0);
    assert_int_equal(result_side_init(&r->remote, 2, 2), 0);
    r->local.valid = r->remote.valid = true;
    snprintf(r->local.version, sizeof(r->local.version), "0.1.0");
    snprintf(r->remote.version, sizeof(r->remote.version), "0.0.9");
    r->local.seconds = r->remote.seconds = 1.0;
    r->local.cpu = (struct cpu_usage){.busy_pct = 50, .busy_cores = 1, .ncpu = 2, .valid = 1};
    for (uint32_t i = 0; i < 2; i++) {
        struct side_flow *l = &r->local.flows[i], *s = &r->remote.flows[i];
        l->sender = true;
        l->bytes = s->bytes = 1000000000ULL * (i + 1);
        l->seconds = s->seconds = 1.0;
        l->ti.valid = true;
        l->ti.rtt_us = 100 + 100 * i;
        l->ti.total_retrans = 3 * i;
    }
    for (uint32_t k = 0; k < 3; k++) {
        struct interval *iv = result_side_next_interval(&r->local);
        iv->start_s = k / 3.0;
        iv->end_s = (k + 1) / 3.0;
        iv->sent_bytes = 1000000000ULL;
        iv->retrans = k;
        for (uint32_t f = 0; f < 2; f++)
            iv->flows[f].bytes = 500000000ULL;
    }
    for (uint32_t k = 0; k < 2; k++) {
        struct interval *iv = result_side_next_interval(&r->remote);
        iv->start_s = k / 2.0;
        iv->end_s = (k + 1) / 2.0;
        iv->recv_bytes = 1500000000ULL;
    }
    assert_int_equal(result_merge(r), 0);
}

static int count_iv(const struct store_interval *iv, void *arg)
{
    (void)iv;
    (*(int *)arg)++;
    return 0;
}

static int count_cell(uint32_t seq, uint32_t flow, uint64_t bytes, uint32_t retrans, void *arg)
{
    (void)seq, (void)flow, (void)retrans;
    assert_int_equal(bytes, 500000000ULL);
    (*(int *)arg)++;
    return 0;
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

static void test_round_trip(void **state)
{
    char path[300], err[512], *doc;
    struct hostsnap *hs = hostsnap_new(), *back = hostsnap_new();
    struct run_result r;
    struct store_run sr;
    struct store *st;
    double v;
    int n = 0;
    int64_t id;

    (void)state;
    db_path("rt.db", path, sizeof(path));
    st = store_open(path, true, err, sizeof(err));
    assert_non_null(st);
    make_run(&r);
    hostsnap_set(hs, "net.ipv4.tcp_congestion_control", "bbr");
    hostsnap_set(hs, "kernel.osrelease", "6.1.0");
    id = add(st, &r, hs);
    assert_true(id > 0);
    assert_int_equal(store_run_get(st, id, &sr, err, sizeof(err)), 0);
    assert_string_equal(sr.test, "stream");
    assert_string_equal(sr.role, "client");
    assert_string_equal(sr.title, "unit, \"quoted\"");
    assert_string_equal(sr.started_at, "2026-01-02T03:04:05Z");
    assert_string_equal(sr.peer, "192.0.2.7:5301");
    assert_string_equal(sr.server_version, "0.0.9");
    assert_false(sr.partial);
    assert_int_equal(store_run_metric(st, id, "throughput_bps", &v), 0);
    assert_dbl_near(v, r.summary.throughput_bps, 1e-3);
    assert_dbl_near(v, 24e9, 1);
    assert_int_equal(store_run_metric(st, id, "retransmits", &v), 0);
    assert_dbl_near(v, 3, 0);
    assert_int_equal(store_run_metric(st, id, "rtt_us", &v), 0);
    assert_dbl_near(v, 150, 1e-9);
    assert_int_equal(store_run_metric(st, id, "latency_p99_us", &v), -ENOENT);
    store_run_intervals(st, id, "client", count_iv, &n);
    assert_int_equal(n, 3);
    n = 0;
    store_run_intervals(st, id, "server", count_iv, &n);
    assert_int_equal(n, 2);
    n = 0;
    store_run_cells(st, id, count_cell, &n);
    assert_int_equal(n, 6);
    store_run_host(st, id, back);
    assert_int_equal(back->n, 2);
    assert_string_equal(hostsnap_get(back, "net.ipv4.tcp_congestion_control"), "bbr");
    doc = store_run_document(st, id);
    assert_contains(doc, "\"throughput_bps\"");
    free(doc);
    assert_int_equal(store_run_get(st, id + 100, &sr, err, sizeof(err)), -ENOENT);
    assert_contains(err, "no run");
    /* deleting a run takes everything it owns with it (foreign keys) */
    assert_int_equal(store_exec(st, err, sizeof(err), "DELETE FROM runs", ""), 0);
    assert_int_equal(sql_int(store_sqlite(st),
                             "SELECT (SELECT count(*) FROM metrics) + "
                             "(SELECT count(*) FROM intervals) + (SELECT count(*) FROM host) + "
                             "(SELECT count(*) FROM interval_flows) + "
                             "(SELECT count(*) FROM host_sides)"),
                     0);
    result_fini(&r);
    store_close(st);
    hostsnap_free(hs);
    hostsnap_free(back);
}

static void test_resolve_and_tags(void **state)
{
    char path[300], err[512];
    struct run_result r;
    struct store *st;
    int64_t *ids, a, b, c;
    size_t n;

    (void)state;
    db_path("sets.db", path, sizeof(path));
    st = store_open(path, true, err, sizeof(err));
    assert_non_null(st);
    make_run(&r);
    a = add(st, &r, NULL);
    b = add(st, &r, NULL);
    c = add(st, &r, NULL);
    result_fini(&r);
    assert_int_equal(store_tag(st, (int64_t[]){a, c}, 2, "before", err, sizeof(err)), 0);
    assert_int_equal(store_tag(st, &a, 1, "before", err, sizeof(err)), 0); /* idempotent */
    assert_int_equal(store_run_resolve(st, "before", &ids, &n, err, sizeof(err)), 0);
    assert_int_equal(n, 2);
    assert_true(ids[0] == a && ids[1] == c);
    free(ids);
    assert_int_equal(store_run_resolve(st, "last", &ids, &n, err, sizeof(err)), 0);
    assert_true(n == 1 && ids[0] == c);
    free(ids);
    snprintf(path, sizeof(path), "%lld-%lld,%lld", (long long)a, (long long)b, (long long)a);
    assert_int_equal(store_run_resolve(st, path, &ids, &n, err, sizeof(err)), 0);
    assert_true(n == 2 && ids[0] == a && ids[1] == b);
    free(ids);
    assert_int_equal(store_run_resolve(st, "nosuchtag", &ids, &n, err, sizeof(err)), -ENOENT);
    assert_contains(err, "nosuchtag");
    assert_int_equal(store_run_resolve(st, "999", &ids, &n, err, sizeof(err)), -ENOENT);
    assert_contains(err, "no run 999");
    store_close(st);
}

/* Builds a schema-1 database by hand, as netrig 0.1 wrote it, with one run in it. */
static void make_v1(const char *path)
{
    sqlite3 *db;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, store_migration_sql(1), NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db,
                     "INSERT INTO runs (test, started_at, saved_at, params, document) VALUES"
                     " ('stream', '2025-01-01T00:00:00Z', '2025-01-01T00:00:10Z', '{}', '{}');"
                     "INSERT INTO metrics VALUES (1, 'throughput_bps', 1e9);"
                     "PRAGMA user_version = 1; PRAGMA application_id = 1314015060;",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
}

static void test_migrate_v1(void **state)
{
    char path[300], bak[320], err[512];
    struct store_run sr;
    struct store *st;
    sqlite3 *db;
    double v;

    (void)state;
    assert_int_equal(STORE_APPLICATION_ID, 1314015060);
    db_path("old.db", path, sizeof(path));
    make_v1(path);
    st = store_open(path, false, err, sizeof(err));
    if (!st)
        fail_msg("%s", err);
    assert_int_equal(sql_int(store_sqlite(st), "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    /* the old run survived and has the new column */
    assert_int_equal(store_run_get(st, 1, &sr, err, sizeof(err)), 0);
    assert_int_equal(sr.sweep_point, 0);
    assert_int_equal(store_run_metric(st, 1, "throughput_bps", &v), 0);
    assert_dbl_near(v, 1e9, 0);
    assert_int_equal(sql_int(store_sqlite(st), "SELECT count(*) FROM sweeps"), 0);
    store_close(st);
    /* the backup is the untouched schema-1 file */
    snprintf(bak, sizeof(bak), "%s.schema-v1.bak", path);
    assert_int_equal(sqlite3_open_v2(bak, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sql_int(db, "PRAGMA user_version"), 1);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM runs"), 1);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'sweeps'"), 0);
    sqlite3_close(db);
}

static void test_refuse_newer_and_foreign(void **state)
{
    char path[300], err[512];
    sqlite3 *db;

    (void)state;
    db_path("newer.db", path, sizeof(path));
    make_v1(path);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL);
    sqlite3_close(db);
    assert_null(store_open(path, true, err, sizeof(err)));
    assert_contains(err, "schema version 99");
    assert_contains(err, "newer than this netrig");
    assert_contains(err, "upgrade netrig");
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sql_int(db, "PRAGMA user_version"), 99); /* untouched */
    sqlite3_close(db);

    db_path("foreign.db", path, sizeof(path));
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_exec(db, "CREATE TABLE t (x); INSERT INTO t VALUES (1)", NULL, NULL, NULL);
    sqlite3_close(db);
    assert_null(store_open(path, true, err, sizeof(err)));
    assert_contains(err, "not a netrig history");

    db_path("garbage.db", path, sizeof(path));
    FILE *f = fopen(path, "w");
    fputs("this is not a database, not even close, but long enough to look like a header", f);
    fclose(f);
    assert_null(store_open(path, true, err, sizeof(err)));
    assert_contains(err, "garbage.db");
}

static void test_sweep_store(void **state)
{
    char path[300], err[512];
    const char *settings[] = {"{\"flows\":\"1\"}", "{\"flows\":\"2\"}"};
    struct store_sweep sw = {0}, back = {0};
    struct store_sweep_point *pts;
    struct run_result r;
    struct store *st;
    uint32_t n;
    int64_t id, found, run_id, *rids;
    double *vals;
    size_t nv;

    (void)state;
    db_path("sweep.db", path, sizeof(path));
    st = store_open(path, true, err, sizeof(err));
    assert_non_null(st);
    snprintf(sw.test, sizeof(sw.test), "stream");
    snprintf(sw.metric, sizeof(sw.metric), "throughput_bps");
    sw.definition = "{\"def\":1}";
    sw.repeat_max = 3;
    sw.ci_level = 0.95;
    assert_int_equal(store_begin(st, err, sizeof(err)), 0);
    assert_int_equal(store_sweep_create(st, &sw, settings, 2, &id, err, sizeof(err)), 0);
    assert_int_equal(store_commit(st, err, sizeof(err)), 0);
    assert_int_equal(store_sweep_find_unfinished(st, "{\"def\":1}", &found), 0);
    assert_int_equal(found, id);
    assert_int_equal(store_sweep_find_unfinished(st, "{\"def\":2}", &found), -ENOENT);
    assert_int_equal(store_sweep_points(st, id, &pts, &n, err, sizeof(err)), 0);
    assert_int_equal(n, 2);
    assert_string_equal(pts[1].settings, "{\"flows\":\"2\"}");
    assert_string_equal(pts[0].status, "pending");
    make_run(&r);
    assert_int_equal(store_begin(st, err, sizeof(err)), 0);
    assert_int_equal(store_add_run(st, &r, NULL, pts[0].id, &run_id, err, sizeof(err)), 0);
    pts[0].runs = 1;
    pts[0].mean = 24e9;
    snprintf(pts[0].status, sizeof(pts[0].status), "done");
    assert_int_equal(store_sweep_point_update(st, &pts[0], err, sizeof(err)), 0);
    assert_int_equal(store_commit(st, err, sizeof(err)), 0);
    result_fini(&r);
    assert_int_equal(store_sweep_point_values(st, pts[0].id, "throughput_bps", &vals, &nv), 0);
    assert_int_equal(nv, 1);
    assert_dbl_near(vals[0], 24e9, 1);
    free(vals);
    free(pts);
    assert_int_equal(store_sweep_set_status(st, id, "done", err, sizeof(err)), 0);
    assert_int_equal(store_sweep_find_unfinished(st, "{\"def\":1}", &found), -ENOENT);
    assert_int_equal(store_sweep_get(st, id, &back, err, sizeof(err)), 0);
    assert_string_equal(back.status, "done");
    assert_string_equal(back.definition, "{\"def\":1}");
    assert_true(back.finished_at[0] != '\0');
    store_sweep_free(&back);
    assert_int_equal(store_run_resolve(st, "sweep:1", &rids, &nv, err, sizeof(err)), 0);
    assert_int_equal(nv, 1);
    assert_int_equal(rids[0], run_id);
    free(rids);
    store_close(st);
}

/* Builds a schema-2 database by hand, as netrig wrote it before mesh plans were stored: a
 * tagged run in a sweep. */
static void make_v2(const char *path)
{
    sqlite3 *db;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    for (int v = 1; v <= 2; v++)
        assert_int_equal(sqlite3_exec(db, store_migration_sql(v), NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(
            db,
            "INSERT INTO sweeps (test, created_at, status, definition, metric, repeat_max, "
            "ci_level,"
            " ci_pct) VALUES ('stream', '2025-06-01T00:00:00Z', 'done', '{}', 'throughput_bps', 1,"
            " 0.95, 0);"
            "INSERT INTO sweep_points (sweep_id, idx, settings, status, runs)"
            " VALUES (1, 0, '{}', 'done', 1);"
            "INSERT INTO runs (test, started_at, saved_at, params, document, sweep_point_id) VALUES"
            " ('stream', '2025-06-01T00:00:00Z', '2025-06-01T00:00:10Z', '{}', '{}', 1);"
            "INSERT INTO metrics VALUES (1, 'throughput_bps', 2e9);"
            "INSERT INTO tags VALUES ('before', 1);"
            "PRAGMA user_version = 2; PRAGMA application_id = 1314015060;",
            NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
}

static void test_migrate_v2(void **state)
{
    char path[300], bak[320], err[512];
    struct store_run sr;
    struct store *st;
    int64_t *ids;
    size_t n;
    sqlite3 *db;
    double v;

    (void)state;
    db_path("v2.db", path, sizeof(path));
    make_v2(path);
    st = store_open(path, false, err, sizeof(err));
    if (!st)
        fail_msg("%s", err);
    assert_int_equal(sql_int(store_sqlite(st), "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    /* the old run, its sweep and its tag survived; it is in no mesh */
    assert_int_equal(store_run_get(st, 1, &sr, err, sizeof(err)), 0);
    assert_int_equal(sr.sweep_point, 1);
    assert_string_equal(sr.tags, "before");
    assert_int_equal(sr.mesh, 0);
    assert_string_equal(sr.mesh_source, "");
    assert_int_equal(store_run_metric(st, 1, "throughput_bps", &v), 0);
    assert_dbl_near(v, 2e9, 0);
    assert_int_equal(store_run_resolve(st, "sweep:1", &ids, &n, err, sizeof(err)), 0);
    assert_true(n == 1 && ids[0] == 1);
    free(ids);
    assert_int_equal(sql_int(store_sqlite(st), "SELECT count(*) FROM meshes"), 0);
    assert_int_equal(store_run_resolve(st, "mesh:1", &ids, &n, err, sizeof(err)), -ENOENT);
    assert_contains(err, "mesh 1 has no runs");
    assert_int_equal(sql_int(store_sqlite(st), "PRAGMA foreign_key_check"), -1); /* no rows */
    store_close(st);
    /* the backup is the untouched schema-2 file */
    snprintf(bak, sizeof(bak), "%s.schema-v2.bak", path);
    assert_int_equal(sqlite3_open_v2(bak, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sql_int(db, "PRAGMA user_version"), 2);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM runs"), 1);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'meshes'"), 0);
    sqlite3_close(db);
    /* opening it again migrates nothing and makes no other backup */
    st = store_open(path, false, err, sizeof(err));
    assert_non_null(st);
    store_close(st);
    snprintf(bak, sizeof(bak), "%s.schema-v%d.bak", path, STORE_SCHEMA_VERSION);
    assert_int_not_equal(access(bak, F_OK), 0);
}

/* An rr run as the client would have measured it: 1 flow, 1000 transactions in 2 s. */
static void make_rr(struct run_result *r)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->test, sizeof(r->test), "rr");
    snprintf(r->server, sizeof(r->server), "192.0.2.8:5301");
    snprintf(r->started_at, sizeof(r->started_at), "2026-01-02T03:04:05Z");
    params_defaults(&r->params);
    r->params.test = PARAMS_TEST_RR;
    assert_int_equal(result_side_init(&r->local, 1, 2), 0);
    assert_int_equal(result_side_init(&r->remote, 1, 2), 0);
    r->local.valid = r->remote.valid = true;
    r->local.seconds = r->remote.seconds = 2.0;
    r->local.cpu = (struct cpu_usage){.busy_pct = 25, .busy_cores = 0.5, .ncpu = 2, .valid = 1};
    r->remote.cpu = (struct cpu_usage){.busy_pct = 10, .busy_cores = 0.2, .ncpu = 2, .valid = 1};
    r->local.flows[0].txns = r->remote.flows[0].txns = 1000;
    r->local.flows[0].bytes = r->remote.flows[0].bytes = 1000;
    r->local.flows[0].seconds = r->remote.flows[0].seconds = 2.0;
    r->local.lat = calloc(1, sizeof(*r->local.lat));
    assert_non_null(r->local.lat);
    histo_init(r->local.lat);
    for (uint64_t i = 0; i < 1000; i++)
        histo_record(r->local.lat, 20000 + 37 * i);
    for (uint32_t k = 0; k < 2; k++) {
        struct interval *iv = result_side_next_interval(&r->local);
        iv->start_s = k;
        iv->end_s = k + 1;
        iv->txns = 500;
        iv->lat_sum_ns = 500 * 38000ULL;
    }
    assert_int_equal(result_merge(r), 0);
}

/* metric_from_doc over r's -J document gives exactly what metric_from_run gives over r. */
static void same_metrics(const struct run_result *r, size_t expect_at_least)
{
    struct metric_value a[METRIC_MAX], b[METRIC_MAX];
    cJSON *doc = result_json_run(r);
    size_t na = metric_from_run(r, a, METRIC_MAX);
    size_t nb = metric_from_doc(&r->params, doc, b, METRIC_MAX);

    assert_true(na >= expect_at_least);
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++) {
        assert_string_equal(a[i].def->name, b[i].def->name);
        assert_dbl_near(b[i].value, a[i].value, 1e-12 * fabs(a[i].value));
    }
    cJSON_Delete(doc);
}

static int count_flow(const struct store_flow *f, void *arg)
{
    assert_true(f->bytes > 0);
    (*(int *)arg)++;
    return 0;
}

static void test_doc_run(void **state)
{
    char path[300], err[512], *text, *stored;
    struct metric_value ma[METRIC_MAX], mb[METRIC_MAX];
    struct run_result r, rr;
    struct store_run a, b;
    struct store *st;
    cJSON *doc;
    int64_t ia, ib;
    int n = 0;
    size_t na, nb;

    (void)state;
    make_run(&r);
    make_rr(&rr);
    same_metrics(&r, 8);
    same_metrics(&rr, 14);
    db_path("doc.db", path, sizeof(path));
    st = store_open(path, true, err, sizeof(err));
    assert_non_null(st);
    ia = add(st, &r, NULL);
    doc = result_json_run(&r);
    assert_int_equal(store_begin(st, err, sizeof(err)), 0);
    if (store_doc_add(st, doc, "from its document", &ib, err, sizeof(err)))
        fail_msg("store_doc_add: %s", err);
    assert_int_equal(store_commit(st, err, sizeof(err)), 0);
    /* the same run as store_add_run keeps it, but for the title and the host snapshot */
    assert_int_equal(store_run_get(st, ia, &a, err, sizeof(err)), 0);
    assert_int_equal(store_run_get(st, ib, &b, err, sizeof(err)), 0);
    assert_string_equal(b.title, "from its document");
    assert_string_equal(b.test, a.test);
    assert_string_equal(b.role, "client");
    assert_string_equal(b.peer, a.peer);
    assert_string_equal(b.started_at, a.started_at);
    assert_string_equal(b.client_version, a.client_version);
    assert_string_equal(b.server_version, a.server_version);
    assert_int_equal(b.partial, a.partial);
    na = store_run_metrics(st, ia, ma, METRIC_MAX);
    nb = store_run_metrics(st, ib, mb, METRIC_MAX);
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++) {
        assert_ptr_equal(ma[i].def, mb[i].def);
        assert_dbl_near(mb[i].value, ma[i].value, 1e-12 * fabs(ma[i].value));
    }
    store_run_intervals(st, ib, "client", count_iv, &n);
    assert_int_equal(n, 3);
    n = 0;
    store_run_intervals(st, ib, "server", count_iv, &n);
    assert_int_equal(n, 2);
    n = 0;
    store_run_cells(st, ib, count_cell, &n);
    assert_int_equal(n, 6);
    n = 0;
    store_run_flows(st, ib, count_flow, &n);
    assert_int_equal(n, 2);
    /* the document is kept as it came */
    text = cJSON_PrintUnformatted(doc);
    stored = store_run_document(st, ib);
    assert_string_equal(stored, text);
    free(text);
    free(stored);
    /* a document whose parameters a daemon would refuse is refused, nothing stored */
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(doc, "params"), "flows", cJSON_CreateNumber(0));
    assert_int_equal(store_begin(st, err, sizeof(err)), 0);
    assert_int_equal(store_doc_add(st, doc, NULL, &ib, err, sizeof(err)), -EINVAL);
    store_rollback(st);
    assert_contains(err, "run document");
    assert_contains(err, "flows");
    assert_int_equal(sql_int(store_sqlite(st), "SELECT count(*) FROM runs"), 2);
    cJSON_Delete(doc);
    result_fini(&r);
    result_fini(&rr);
    store_close(st);
}

static const char mesh_hosts[] = "[{\"name\":\"h1\",\"address\":\"198.51.100.1\",\"port\":5301},"
                                 "{\"name\":\"h2\",\"address\":\"198.51.100.2\",\"port\":5301}]";

static void mesh_cell(struct store_mesh_cell *c, uint32_t idx, const char *src, const char *dst)
{
    memset(c, 0, sizeof(*c));
    c->idx = idx;
    c->src = idx, c->dst = 1 - idx;
    snprintf(c->test_name, sizeof(c->test_name), "stream");
    snprintf(c->source, sizeof(c->source), "%s", src);
    snprintf(c->destination, sizeof(c->destination), "%s", dst);
}

static int count_mesh(const struct store_mesh *m, void *arg)
{
    assert_null(m->hosts);
    (*(int *)arg)++;
    return 0;
}

static void test_mesh_store(void **state)
{
    char path[300], err[512];
    struct store_mesh m = {0}, back;
    struct store_mesh_cell cells[2], *got;
    struct store_run sr;
    struct run_result r;
    struct store *st;
    cJSON *doc;
    int64_t id, run, none, *ids;
    uint32_t n;
    size_t nids;
    int nm = 0;

    (void)state;
    db_path("mesh.db", path, sizeof(path));
    st = store_open(path, true, err, sizeof(err));
    assert_non_null(st);
    snprintf(m.plan, sizeof(m.plan), "/etc/netrig/nightly.json");
    m.hosts = (char *)mesh_hosts;
    m.tests = "[{\"test\":\"stream\",\"flows\":2}]";
    mesh_cell(&cells[0], 0, "h1", "h2");
    mesh_cell(&cells[1], 1, "h2", "h1");
    assert_int_equal(store_begin(st, err, sizeof(err)), 0);
    assert_int_equal(store_mesh_create(st, &m, cells, 2, &id, err, sizeof(err)), 0);
    assert_int_equal(store_commit(st, err, sizeof(err)), 0);
    assert_int_equal(store_mesh_get(st, id, &back, err, sizeof(err)), 0);
    assert_string_equal(back.status, "running");
    assert_string_equal(back.plan, "/etc/netrig/nightly.json");
    assert_string_equal(back.hosts, mesh_hosts);
    assert_true(back.ncells == 2 && back.nfailed == 0 && back.finished_at[0] == '\0');
    store_mesh_free(&back);
    assert_int_equal(store_mesh_cells(st, id, &got, &n, err, sizeof(err)), 0);
    assert_int_equal(n, 2);
    assert_string_equal(got[1].status, "pending");
    assert_true(got[1].src == 1 && got[1].dst == 0 && got[1].run_id == 0);
    free(got);

    /* h1 -> h2 completes: its run is stored from the document; h2 -> h1 fails */
    make_run(&r);
    doc = result_json_run(&r);
    snprintf(cells[0].status, sizeof(cells[0].status), "complete");
    snprintf(cells[1].status, sizeof(cells[1].status), "failed");
    snprintf(cells[1].error, sizeof(cells[1].error), "connection refused by 198.51.100.1:5301");
    assert_int_equal(store_begin(st, err, sizeof(err)), 0);
    if (store_mesh_cell_done(st, id, &cells[0], doc, &run, err, sizeof(err)) ||
        store_mesh_cell_done(st, id, &cells[1], NULL, &none, err, sizeof(err)))
        fail_msg("store_mesh_cell_done: %s", err);
    assert_int_equal(store_commit(st, err, sizeof(err)), 0);
    assert_true(run > 0 && none == 0);
    assert_int_equal(store_run_get(st, run, &sr, err, sizeof(err)), 0);
    assert_string_equal(sr.title, "mesh 1: h1 -> h2 stream unit, \"quoted\"");
    assert_int_equal(sr.mesh, id);
    assert_string_equal(sr.mesh_source, "h1");
    assert_string_equal(sr.mesh_destination, "h2");
    assert_int_equal(store_mesh_cells(st, id, &got, &n, err, sizeof(err)), 0);
    assert_string_equal(got[0].status, "complete");
    assert_int_equal(got[0].run_id, run);
    assert_string_equal(got[1].status, "failed");
    assert_string_equal(got[1].error, "connection refused by 198.51.100.1:5301");
    free(got);
    assert_int_equal(store_run_resolve(st, "mesh:1", &ids, &nids, err, sizeof(err)), 0);
    assert_true(nids == 1 && ids[0] == run);
    free(ids);
    assert_int_equal(store_mesh_set_status(st, id, "done", err, sizeof(err)), 0);
    assert_int_equal(store_mesh_get(st, id, &back, err, sizeof(err)), 0);
    assert_true(back.nfailed == 1 && !strcmp(back.status, "done") && back.finished_at[0]);
    store_mesh_free(&back);
    assert_int_equal(store_mesh_list(st, count_mesh, &nm), 0);
    assert_int_equal(nm, 1);

    /* a cell the mesh does not have; a mesh that does not exist */
    cells[0].idx = 7;
    assert_int_equal(store_mesh_cell_done(st, id, &cells[0], NULL, &none, err, sizeof(err)),
                     -ENOENT);
    assert_int_equal(store_mesh_get(st, 99, &back, err, sizeof(err)), -ENOENT);
    assert_contains(err, "no mesh 99");
    /* deleting the run unlinks its cell; deleting the mesh takes its cells, not the runs */
    assert_int_equal(store_exec(st, err, sizeof(err), "DELETE FROM runs WHERE id = ?", "i", run),
                     0);
    assert_int_equal(sql_int(store_sqlite(st), "SELECT count(*) FROM mesh_cells"
                                               " WHERE run_id IS NULL"),
                     2);
    run = 0;
    cells[0].idx = 0;
    assert_int_equal(store_mesh_cell_done(st, id, &cells[0], doc, &run, err, sizeof(err)), 0);
    assert_int_equal(store_exec(st, err, sizeof(err), "DELETE FROM meshes WHERE id = ?", "i", id),
                     0);
    assert_int_equal(sql_int(store_sqlite(st), "SELECT count(*) FROM mesh_cells"), 0);
    assert_int_equal(sql_int(store_sqlite(st), "SELECT count(*) FROM runs"), 1);
    assert_int_equal(store_run_get(st, run, &sr, err, sizeof(err)), 0);
    assert_int_equal(sr.mesh, 0);
    cJSON_Delete(doc);
    result_fini(&r);
    store_close(st);
}

static int count_tune(const struct store_tune *t, void *arg)
{
    char *seen = arg;

    snprintf(seen + strlen(seen), 256 - strlen(seen), "%s%s@%s:%llu", seen[0] ? "," : "", t->target,
             t->netns_name, t->netns_inode);
    assert_non_null(strstr(t->changes, "tcp_rmem"));
    return 0;
}

/* tune journals (v7): stored with their place, read back between two times, ends included */
static void test_tune_journals(void **state)
{
    char path[300], err[512], seen[256] = "";
    struct store_tune t = {.netns_inode = 4026532301, .changes = "[{\"name\":\"tcp_rmem\"}]"};
    struct store *st;
    int64_t id;

    (void)state;
    db_path("tune.db", path, sizeof(path));
    st = store_open(path, true, err, sizeof(err));
    assert_non_null(st);
    snprintf(t.netns_name, sizeof(t.netns_name), "wB");
    snprintf(t.target, sizeof(t.target), "first");
    snprintf(t.applied_at, sizeof(t.applied_at), "2026-12-07T01:00:00Z");
    assert_int_equal(store_add_tune(st, &t, &id, err, sizeof(err)), 0);
    assert_int_equal(id, 1);
    snprintf(t.target, sizeof(t.target), "second");
    snprintf(t.applied_at, sizeof(t.applied_at), "2026-12-07T02:00:00Z");
    assert_int_equal(store_add_tune(st, &t, &id, err, sizeof(err)), 0);
    assert_int_equal(store_tune_between(st, "2026-12-07T01:30:00Z", "2026-12-07T02:00:00Z",
                                        count_tune, seen, err, sizeof(err)),
                     0);
    assert_string_equal(seen, "second@wB:4026532301");
    seen[0] = '\0';
    assert_int_equal(store_tune_between(st, NULL, NULL, count_tune, seen, err, sizeof(err)), 0);
    assert_string_equal(seen, "first@wB:4026532301,second@wB:4026532301");
    store_close(st);
}

/* The one reader of run references: the kind and N, and everything else refused as one. */
static void test_run_ref_parse(void **state)
{
    static const struct {
        const char *s;
        enum store_run_ref kind;
        int64_t id;
    } cases[] = {
        {"sweep:4", STORE_RUN_REF_SWEEP, 4},
        {"mesh:2", STORE_RUN_REF_MESH, 2},
        {"group:3", STORE_RUN_REF_GROUP, 3},
        {"group:007", STORE_RUN_REF_GROUP, 7},
        {"sweep:999999999999999999", STORE_RUN_REF_SWEEP, 999999999999999999LL},
        {"sweep:9999999999999999999", STORE_RUN_REF_NONE, 0}, /* 19 digits */
        {"sweep:", STORE_RUN_REF_NONE, 0},
        {"sweep:0", STORE_RUN_REF_NONE, 0},
        {"mesh:-1", STORE_RUN_REF_NONE, 0},
        {"mesh:+1", STORE_RUN_REF_NONE, 0},
        {"group:3x", STORE_RUN_REF_NONE, 0},
        {"group: 3", STORE_RUN_REF_NONE, 0},
        {"sweep:1,sweep:2", STORE_RUN_REF_NONE, 0}, /* a list: store_run_resolve's */
        {"Sweep:1", STORE_RUN_REF_NONE, 0},
        {"sweeps:1", STORE_RUN_REF_NONE, 0},
        {"12", STORE_RUN_REF_NONE, 0},
        {"10-14", STORE_RUN_REF_NONE, 0},
        {"last", STORE_RUN_REF_NONE, 0},
        {"", STORE_RUN_REF_NONE, 0},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t id = -1;
        enum store_run_ref k = store_run_ref_parse(cases[i].s, &id);
        if (k != cases[i].kind || id != cases[i].id)
            fail_msg("store_run_ref_parse(\"%s\") = %d, %lld; expected %d, %lld", cases[i].s, k,
                     (long long)id, cases[i].kind, (long long)cases[i].id);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create),        cmocka_unit_test(test_run_ref_parse),
        cmocka_unit_test(test_round_trip),    cmocka_unit_test(test_resolve_and_tags),
        cmocka_unit_test(test_migrate_v1),    cmocka_unit_test(test_refuse_newer_and_foreign),
        cmocka_unit_test(test_sweep_store),   cmocka_unit_test(test_migrate_v2),
        cmocka_unit_test(test_doc_run),       cmocka_unit_test(test_mesh_store),
        cmocka_unit_test(test_tune_journals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
