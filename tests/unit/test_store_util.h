/* Shared set-up of the history unit tests: each test file gets a scratch directory for its
 * databases (define STORE_TEST_NAME before including), and two one-value SQL readers. */
#ifndef NETRIG_TEST_STORE_UTIL_H
#define NETRIG_TEST_STORE_UTIL_H

#include "store_priv.h"
#include "test_util.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef STORE_TEST_NAME
#error "define STORE_TEST_NAME (the scratch directory's name) before including test_store_util.h"
#endif

static char dir[256];

static inline void db_path(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/netrig-test-%s.XXXXXX", STORE_TEST_NAME);
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[400];

    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* The first column of the first row as an integer (-1: no row). */
static inline int64_t sql_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *s;
    int64_t v = -1;

    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
    if (sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

/* The first column of the first row as text (there must be a row). */
static inline void sql_text(sqlite3 *db, const char *sql, char *buf, size_t len)
{
    sqlite3_stmt *s;

    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(s), SQLITE_ROW);
    snprintf(buf, len, "%s", (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
}

#endif
