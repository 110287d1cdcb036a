/* cli_save: a measurement written to the history — the database to open, the transaction
 * with this host's settings, and the one-line warning when it fails (runs, load runs and the
 * groups of cli_group share it). */
#include "cli.h"

#include "hostsnap.h"
#include "store.h"

#include <stdio.h>

struct store *cli_history_begin_save(const char *db, char *err, size_t errlen)
{
    char path[4096];
    struct store *st;

    if (!db) {
        if (store_default_path(path, sizeof(path), true, err, errlen))
            return NULL;
        db = path;
    }
    st = store_open(db, true, err, errlen);
    if (st && store_begin(st, err, errlen)) {
        store_close(st);
        return NULL;
    }
    return st;
}

int cli_history_check_db(const char *db)
{
    char err[512];
    struct store *st;

    if (!db)
        return 0;
    st = cli_history_begin_save(db, err, sizeof(err));
    if (!st) {
        cli_error("%s: nothing was run (--no-save runs without saving)", err);
        return -1;
    }
    store_rollback(st);
    store_close(st);
    return 0;
}

int cli_history_finish_save(struct store *st, int rc, const char *db, const char *what, char *err,
                            size_t errlen)
{
    if (!rc)
        rc = store_commit(st, err, errlen);
    if (rc) {
        if (st)
            store_rollback(st);
        cli_error("warning: %s not saved to the history: %s%s", what, err,
                  db ? "" : " (--no-save skips saving)");
    }
    store_close(st);
    return rc;
}

int64_t cli_history_save_one(const char *db, cli_history_add_fn add, const void *item)
{
    struct hostsnap *hs = hostsnap_new();
    char err[512] = "out of memory";
    struct store *st = NULL;
    int64_t id = 0;
    int rc = hs ? 0 : -1;

    if (!rc) {
        hostsnap_take(NULL, hs);
        st = cli_history_begin_save(db, err, sizeof(err));
        rc = st ? 0 : -1;
    }
    if (!rc)
        rc = add(st, item, hs, &id, err, sizeof(err));
    rc = cli_history_finish_save(st, rc, db, "the run was", err, sizeof(err));
    hostsnap_free(hs);
    return rc ? 0 : id;
}

static int add_run(struct store *st, const void *item, const struct hostsnap *hs, int64_t *id,
                   char *err, size_t errlen)
{
    return store_add_run(st, item, hs, 0, id, err, errlen);
}

long long cli_history_save(const char *db, const struct run_result *r, FILE *note)
{
    int64_t id = cli_history_save_one(db, add_run, r);

    if (id && note)
        fprintf(note, "saved as run %lld (netrig show %lld)\n", (long long)id, (long long)id);
    return id;
}
