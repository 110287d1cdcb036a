/* Unit tests for the time series in the history (schema 6, store_samples.c): a schema-4 file
 * and a schema-5 one (run groups) built here from the shipped steps are backed up and migrated (its
 * runs intact, the new tables empty), read-only readers see it through a migrated copy; a run's
 * client and server samples and a load run's probes are stored and read back exactly (TCP_INFO
 * columns NULL where a row had none, lost probes NULL), and go with their run when it is deleted.
 */
#define STORE_TEST_NAME "store-samples"
#include "test_store_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "store.h"
#include "store_run.h"
#include "store_samples.h"

/* A history at schema `from` (4: before run groups; 5: main's run groups, before time series)
 * as the netrig of that version wrote it, with one run — at 5 inside a group of its own. */
static void make_old(const char *path, int from)
{
    sqlite3 *db;
    char pragma[128];

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    for (int v = 1; v <= from; v++)
        assert_int_equal(sqlite3_exec(db, store_migration_sql(v), NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db,
                     "INSERT INTO runs (id, test, started_at, saved_at, params, document) VALUES"
                     " (1, 'stream', '2026-01-01T00:00:00Z', '2026-01-01T00:00:10Z', '{}', '{}');",
                     NULL, NULL, NULL),
        SQLITE_OK);
    if (from >= 5)
        assert_int_equal(
            sqlite3_exec(db,
                         "INSERT INTO run_groups (id, kind, test, started_at, targets) VALUES"
                         " (7, 'multi', 'stream', '2026-01-01T00:00:00Z', '[]');"
                         "UPDATE runs SET group_id = 7, group_idx = 0 WHERE id = 1;",
                         NULL, NULL, NULL),
            SQLITE_OK);
    snprintf(pragma, sizeof(pragma),
             "PRAGMA user_version = %d; PRAGMA application_id = 1314015060;", from);
    assert_int_equal(sqlite3_exec(db, pragma, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

/* The new tables exist and are empty, the old run is there (and its group, from 5). */
static void check_migrated(sqlite3 *db, int from)
{
    assert_int_equal(sql_int(db, "SELECT count(*) FROM runs"), 1);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM samples"), 0);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM probes"), 0);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM sample_series"), 0);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM run_groups"), from >= 5 ? 1 : 0);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM runs WHERE group_id IS NULL"),
                     from >= 5 ? 0 : 1);
}

static void migrate_from(int from)
{
    char path[300], bak[320], err[512], note[64];
    struct store_run r;
    struct store *st;
    sqlite3 *db;

    snprintf(path, sizeof(path), "%s/v%d.db", dir, from);
    make_old(path, from);
    /* a reader sees the new (empty) tables through a copy; the file keeps its version */
    st = store_open_read(path, err, sizeof(err));
    if (!st)
        fail_msg("%s", err);
    snprintf(note, sizeof(note), "schema version %d", from);
    assert_contains(store_notice(st), note);
    check_migrated(store_sqlite(st), from);
    store_close(st);
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sql_int(db, "PRAGMA user_version"), from);
    sqlite3_close(db);
    st = store_open(path, false, err, sizeof(err));
    if (!st)
        fail_msg("%s", err);
    assert_int_equal(sql_int(store_sqlite(st), "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    assert_int_equal(store_run_get(st, 1, &r, err, sizeof(err)), 0);
    assert_string_equal(r.test, "stream");
    check_migrated(store_sqlite(st), from);
    store_close(st);
    /* the backup is the untouched older file */
    snprintf(bak, sizeof(bak), "%s.schema-v%d.bak", path, from);
    assert_int_equal(sqlite3_open_v2(bak, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sql_int(db, "PRAGMA user_version"), from);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM runs"), 1);
    assert_int_equal(sql_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'samples'"), 0);
    sqlite3_close(db);
}

static void test_migrate_v4(void **state)
{
    (void)state;
    /* v7 (tune journals) and v8 (the probes' names beyond udp and tcp) follow */
    assert_int_equal(STORE_SCHEMA_VERSION, 8);
    migrate_from(4);
}

/* main's schema 5 (run groups) gains the time series as step 6, its groups intact */
static void test_migrate_v5(void **state)
{
    (void)state;
    migrate_from(5);
}

static struct samples *series(uint32_t nflows, uint32_t ticks, bool tcp)
{
    struct samples *s = samples_new(nflows, 100000000ULL, (uint64_t)ticks * 100000000ULL);

    for (uint32_t f = 0; f < nflows; f++)
        s->kind[f] = tcp && f == 0 ? SAMPLES_TCP : SAMPLES_BYTES;
    for (uint32_t k = 0; k < ticks; k++) {
        struct sample *row = samples_tick(s, 0.1 * (k + 1) + 0.0000011);
        for (uint32_t f = 0; f < nflows; f++) {
            row[f].bytes = 123456789ULL * (k + 1) + f;
            if (s->kind[f] != SAMPLES_TCP || k == 2)
                continue;
            row[f] = (struct sample){.bytes = row[f].bytes,
                                     .delivery_rate_bps = 99000000000ULL + k,
                                     .pacing_rate_bps = 120000000000ULL,
                                     .busy_us = 1000 * k,
                                     .rwnd_limited_us = k,
                                     .sndbuf_limited_us = 7 * k,
                                     .cwnd = 10 + k,
                                     .rtt_us = 20000 + k,
                                     .retrans = k / 2,
                                     .mss = 1448,
                                     .tcp = true};
        }
    }
    return s;
}

static void same(const struct samples *a, const struct samples *b)
{
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->nflows, b->nflows);
    assert_int_equal(a->period_ns, b->period_ns);
    assert_int_equal(a->asked_ns, b->asked_ns);
    for (uint32_t f = 0; f < a->nflows; f++)
        assert_int_equal(a->kind[f], b->kind[f]);
    for (uint32_t k = 0; k < a->n; k++) {
        assert_dbl_near(a->t_s[k], b->t_s[k], 1e-6);
        for (uint32_t f = 0; f < a->nflows; f++) {
            const struct sample *x = samples_row(a, k, f), *y = samples_row(b, k, f);
            assert_int_equal(x->bytes, y->bytes);
            assert_int_equal(x->tcp, y->tcp);
            assert_int_equal(x->cwnd, y->cwnd);
            assert_int_equal(x->rtt_us, y->rtt_us);
            assert_int_equal(x->retrans, y->retrans);
            assert_int_equal(x->mss, y->mss);
            assert_int_equal(x->delivery_rate_bps, y->delivery_rate_bps);
            assert_int_equal(x->pacing_rate_bps, y->pacing_rate_bps);
            assert_int_equal(x->busy_us, y->busy_us);
            assert_int_equal(x->rwnd_limited_us, y->rwnd_limited_us);
            assert_int_equal(x->sndbuf_limited_us, y->sndbuf_limited_us);
        }
    }
}

static void test_round_trip(void **state)
{
    char path[300], err[512];
    struct samples *c = series(3, 30, true), *sv = series(3, 29, false), *back;
    struct txnlog log, lb;
    struct store *st;

    (void)state;
    snprintf(path, sizeof(path), "%s/rt.db", dir);
    st = store_open(path, true, err, sizeof(err));
    assert_non_null(st);
    assert_int_equal(store_exec(st, err, sizeof(err),
                                "INSERT INTO runs (id, test, started_at, saved_at, params,"
                                " document) VALUES (7, 'load', 'x', 'y', '{}', '{}')",
                                ""),
                     0);
    assert_int_equal(txnlog_init(&log, 8), 0);
    txnlog_add(&log, 10000000, 250000);
    txnlog_add(&log, 20000000, TXNLOG_LOST);
    txnlog_add(&log, 30000000, 16200500);
    assert_int_equal(store_begin(st, err, sizeof(err)), 0);
    assert_int_equal(store_add_samples(st, 7, "up", "client", c, 0, err, sizeof(err)), 0);
    assert_int_equal(store_add_samples(st, 7, "up", "server", sv, 0, err, sizeof(err)), 0);
    assert_int_equal(store_add_probes(st, 7, "udp", &log, 5000000, err, sizeof(err)), 0);
    /* schema 8: load --icmp's probe and load --classes' marked ones; nothing else */
    assert_int_equal(store_add_probes(st, 7, "icmp", &log, 0, err, sizeof(err)), 0);
    assert_int_equal(store_add_probes(st, 7, "udp_ef", &log, 0, err, sizeof(err)), 0);
    assert_int_not_equal(store_add_probes(st, 7, "udp_xx", &log, 0, err, sizeof(err)), 0);
    assert_int_equal(store_commit(st, err, sizeof(err)), 0);
    assert_int_equal(store_run_probes(st, 7, "udp_ef", &lb, err, sizeof(err)), 1);
    assert_int_equal(lb.n, 3);
    txnlog_fini(&lb);

    assert_int_equal(store_run_samples(st, 7, "up", "client", &back, err, sizeof(err)), 1);
    same(c, back);
    samples_free(back);
    assert_int_equal(store_run_samples(st, 7, "up", "server", &back, err, sizeof(err)), 1);
    same(sv, back);
    samples_free(back);
    assert_int_equal(store_run_samples(st, 7, "down", "client", &back, err, sizeof(err)), 0);
    assert_null(back);
    assert_int_equal(sql_int(store_sqlite(st), "SELECT count(*) FROM samples WHERE cwnd IS NULL"),
                     30 * 2 + 1 + 29 * 3);

    assert_int_equal(store_run_probes(st, 7, "udp", &lb, err, sizeof(err)), 1);
    assert_int_equal(lb.n, 3);
    assert_int_equal(lb.rec[0].t_ns, 15000000);
    assert_int_equal(lb.rec[0].lat_ns, 250000);
    assert_true(lb.rec[1].lat_ns == TXNLOG_LOST);
    assert_int_equal(lb.rec[2].lat_ns, 16200500);
    txnlog_fini(&lb);
    assert_int_equal(store_run_probes(st, 7, "tcp", &lb, err, sizeof(err)), 0);

    /* deleting the run takes its series with it */
    assert_int_equal(store_exec(st, err, sizeof(err), "DELETE FROM runs WHERE id = 7", ""), 0);
    assert_int_equal(sql_int(store_sqlite(st), "SELECT count(*) FROM samples"), 0);
    assert_int_equal(sql_int(store_sqlite(st), "SELECT count(*) FROM sample_series"), 0);
    assert_int_equal(sql_int(store_sqlite(st), "SELECT count(*) FROM probes"), 0);
    store_close(st);
    txnlog_fini(&log);
    samples_free(c);
    samples_free(sv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_migrate_v4),
        cmocka_unit_test(test_migrate_v5),
        cmocka_unit_test(test_round_trip),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
