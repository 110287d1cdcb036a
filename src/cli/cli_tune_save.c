/* cli_tune_save: `netrig tune --apply` records its journal in the history (which host, which
 * network namespace, which changes, when), so compare and report name the change between a
 * run before it and one after. */
#include "cli.h"

#include "store.h"
#include "store_tune.h"
#include "tune_journal.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* "4096\t87380\t6291456" as "4096 87380 6291456" */
static void add_value(cJSON *o, const char *key, const char *v)
{
    char *copy = v ? strdup(v) : NULL;

    if (!copy) {
        cJSON_AddNullToObject(o, key);
        return;
    }
    for (char *p = copy; *p; p++)
        if (*p == '\t' || *p == '\n')
            *p = ' ';
    cJSON_AddStringToObject(o, key, copy);
    free(copy);
}

static int add_tune(struct store *st, const void *item, const struct hostsnap *hs, int64_t *id,
                    char *err, size_t errlen)
{
    (void)hs;
    return store_add_tune(st, item, id, err, errlen);
}

long long cli_tune_save(const char *db, const char *journal, FILE *note)
{
    struct store_tune t;
    struct tune_journal j;
    char err[PATH_MAX + 256];
    cJSON *arr;
    char *changes;
    int64_t id;

    if (tune_journal_load(journal, &j, err, sizeof(err))) {
        cli_error("warning: the apply was not recorded in the history: %s", err);
        return 0;
    }
    arr = cJSON_CreateArray();
    for (size_t i = 0; i < j.n; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "name", j.e[i].name);
        add_value(c, "old", j.e[i].old_value);
        add_value(c, "new", j.e[i].new_value);
        cJSON_AddStringToObject(c, "result", tune_journal_state_name(j.e[i].state));
        cJSON_AddItemToArray(arr, c);
    }
    changes = cJSON_PrintUnformatted(arr);
    cJSON_Delete(arr);
    memset(&t, 0, sizeof(t));
    snprintf(t.applied_at, sizeof(t.applied_at), "%.19sZ", j.created);
    snprintf(t.journal, sizeof(t.journal), "%s", journal);
    snprintf(t.host, sizeof(t.host), "%s", j.place.host);
    snprintf(t.machine_id, sizeof(t.machine_id), "%s", j.place.machine_id);
    snprintf(t.netns_name, sizeof(t.netns_name), "%s", j.place.netns_name);
    snprintf(t.target, sizeof(t.target), "%s", j.target);
    t.netns_inode = j.place.netns_inode;
    t.changes = changes;
    tune_journal_free(&j);
    id = changes ? cli_history_save_one(db, add_tune, &t) : 0;
    free(changes);
    if (id && note)
        fprintf(note,
                "Recorded in the history as tune journal %lld (netrig compare names it "
                "between a run before and one after).\n",
                (long long)id);
    return id;
}
