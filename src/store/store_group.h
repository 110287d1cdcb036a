/* store_group: the runs of one command that measured several targets at once (`-c A -c B`,
 * one run per target that returned results) or through another host (`--from A -c B`, its one
 * run), linked by a group: its kind, test and start, the --from daemon, every target's outcome
 * in command-line order (a target that failed to run has no run but keeps its error) and the
 * totals the command printed. Each run is an ordinary run besides; `group:N` names them. */
#ifndef NETRIG_STORE_GROUP_H
#define NETRIG_STORE_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct store_group {
    int64_t id;
    char kind[16];       /* "multi" (-c A -c B) or "third_party" (--from) */
    char test[16];       /* stream, rr, crr */
    char started_at[32]; /* UTC ISO 8601 */
    char source[280];    /* third_party: the --from daemon as typed; "" for multi */
    char *targets;       /* JSON array: {"target", "status", "error", ...} per target, in order */
    char *summary;       /* JSON object: the totals over the targets ({} when none) */
    uint32_t nruns;      /* read back: runs still in the group */
};

/* Creates a group (g->targets and g->summary as JSON text; summary NULL = {}). Inside
 * store_begin .. store_commit. */
int store_group_create(struct store *st, const struct store_group *g, int64_t *id, char *err,
                       size_t errlen);
/* Puts run into group as its target number idx (the place in the group's targets). */
int store_group_add_run(struct store *st, int64_t group, uint32_t idx, int64_t run, char *err,
                        size_t errlen);
/* Fills g (free with store_group_free); -ENOENT with err when there is no such group. */
int store_group_get(struct store *st, int64_t id, struct store_group *g, char *err, size_t errlen);
void store_group_free(struct store_group *g);
/* The runs of a group in target order: fn(run id, its target number); non-zero stops. */
int store_group_runs(struct store *st, int64_t id, int (*fn)(int64_t run, uint32_t idx, void *arg),
                     void *arg);

#endif
