/* store_tune: the tune journals the history keeps (schema v7, table tune_journals): what
 * `netrig tune --apply` changed, on which host, in which network namespace, and when, so
 * `compare` and `report` name the change between a run before it and one after. */
#ifndef NETRIG_STORE_TUNE_H
#define NETRIG_STORE_TUNE_H

#include "store.h"

#include <stdint.h>

struct store_tune {
    int64_t id;
    char applied_at[32]; /* "YYYY-MM-DDTHH:MM:SSZ" */
    char journal[512];   /* the journal file's path */
    char host[72], machine_id[40], netns_name[64];
    unsigned long long netns_inode;
    char target[96];
    const char *changes; /* JSON array [{name, old, new, result}] (owned by the caller, or by
                          * store_tune_between during fn) */
};

/* Adds one; 0 with *id, or a negative errno with err. */
int store_add_tune(struct store *st, const struct store_tune *t, int64_t *id, char *err,
                   size_t errlen);
/* Calls fn for each journal applied from from to to, both included (whole seconds; either
 * NULL: open),
 * oldest first; a non-zero return of fn stops and is returned. */
int store_tune_between(struct store *st, const char *from, const char *to,
                       int (*fn)(const struct store_tune *t, void *arg), void *arg, char *err,
                       size_t errlen);

#endif
