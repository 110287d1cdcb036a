/* tune_persist: what `netrig tune --apply --persist` writes so the changes survive a reboot:
 * the sysctls in /etc/sysctl.d/90-netrig.conf and the sysfs values (txqueuelen, MTU, RPS
 * masks) as udev rules in /etc/udev/rules.d/90-netrig.rules. Lines netrig did not write are
 * kept; a line for a setting netrig sets again is replaced. The files are journaled like any
 * other change (old content, or absent), so --revert puts them back or removes them. */
#ifndef NETRIG_TUNE_PERSIST_H
#define NETRIG_TUNE_PERSIST_H

#include "tune_plan.h"

#include <stdbool.h>
#include <stddef.h>

#define TUNE_PERSIST_MAX 2

struct tune_file {
    char path[TUNE_PATH_LEN];
    char *old_content; /* NULL: the file does not exist */
    char *new_content;
};

/* Builds the files for the plan's changes with want[i] set (NULL: every change that is not
 * blocked), reading what is there now under sysroot. stamp goes into the header comment.
 * Settings a file cannot hold (CPU governor, IRQ affinity) are listed in skipped ("" when
 * none). Returns 0, or -1 with err (an existing file unreadable, out of memory). */
int tune_persist_build(const char *sysroot, const struct tune_plan *plan, const bool *want,
                       const char *stamp, struct tune_file files[TUNE_PERSIST_MAX], size_t *n,
                       char *skipped, size_t skippedlen, char *err, size_t errlen);
void tune_persist_free(struct tune_file *files, size_t n);

#endif
