/* tune_drift: how far a host has drifted from what `netrig tune --apply` set. Reads the
 * journals of a state directory (oldest first; a later journal's value for a setting replaces
 * an earlier one's; a reverted journal counts no more) and compares each applied sysctl and
 * sysfs value with the one the file holds now, under the sysroot the journal recorded. For
 * `netrig serve --metrics --tune-state DIR` (netrig_tune_* metrics, docs/fleet.md). */
#ifndef NETRIG_TUNE_DRIFT_H
#define NETRIG_TUNE_DRIFT_H

#include "tune_plan.h"

#include <stdbool.h>
#include <stddef.h>

#define TUNE_DRIFT_MAX 128 /* settings followed; more are counted in `untracked` */

struct tune_drift_item {
    char kind[8]; /* "sysctl", "sysfs" */
    char name[TUNE_NAME_LEN];
    bool drifted;    /* the file holds another value now, or cannot be read */
    bool unreadable; /* ... because it cannot be read */
};

struct tune_drift {
    unsigned journals;   /* journals with values still applied */
    double applied_unix; /* when the newest of them finished (0: unknown) */
    unsigned drifted, untracked;
    size_t n;
    struct tune_drift_item item[TUNE_DRIFT_MAX];
};

/* Fills d from the journals in state_dir (a missing directory: nothing applied). 0, or -1
 * with one line in err (an untrusted directory or a malformed journal). */
int tune_drift_scan(const char *state_dir, struct tune_drift *d, char *err, size_t errlen);
/* Two values the same but for the blanks between fields (the kernel writes tabs). */
bool tune_drift_same(const char *a, const char *b);

#endif
