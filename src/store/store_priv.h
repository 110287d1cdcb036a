/* store_priv: what the store's own files share and nothing else includes — the connection
 * and the schema steps. */
#ifndef NETRIG_STORE_PRIV_H
#define NETRIG_STORE_PRIV_H

#include <sqlite3.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store {
    sqlite3 *db;
    char path[4096];
    bool readonly;    /* store_open_read: nothing is ever written */
    char notice[640]; /* what a reader should know (an old schema read through a copy) */
};

sqlite3 *store_sqlite(struct store *st);
/* The SQL that takes a database from schema v-1 to v (1 <= v <= STORE_SCHEMA_VERSION). */
const char *store_migration_sql(int v);
/* One statement with parameters bound from types: 'i' int64_t, 'u' unsigned (uint32_t),
 * 'd' double, 't' text (NULL binds NULL), 'n' NULL (no argument). Returns 0 or -EIO with err. */
int store_exec(struct store *st, char *err, size_t errlen, const char *sql, const char *types, ...);
int store_bindv(sqlite3_stmt *s, const char *types, va_list ap);
/* Prepares sql; NULL with err set on failure. */
sqlite3_stmt *store_prepare(struct store *st, const char *sql, char *err, size_t errlen);
/* err = "history database 'PATH': what: <sqlite's message>"; returns -EIO. */
int store_fail(struct store *st, char *err, size_t errlen, const char *what);
/* Refuses a file that is not a netrig history, or of a newer schema; *v is its version. */
int store_check_identity(struct store *st, int64_t *v, char *err, size_t errlen);
/* The flows of r as rows of run id, numbered from base (a load run's parts share its rows). */
struct run_result;
int store_add_flows(struct store *st, int64_t id, const struct run_result *r, uint32_t base,
                    char *err, size_t errlen);
/* Applies every schema step past the current version in one transaction. */
int store_migrate(struct store *st, char *err, size_t errlen);

#endif
