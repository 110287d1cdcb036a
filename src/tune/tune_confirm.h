/* tune_confirm: `netrig tune --apply --confirm-within T`, the "commit confirmed" of network
 * operating systems. Before the first change is made, a watchdog process is started: forked
 * twice and detached (setsid, no open descriptors but its own, stdio on /dev/null), so it
 * outlives the tune process, a kill -9 of it and the ssh session it ran in. It watches the
 * journal it was started for (inotify, and at least once a second) and, unless
 * `netrig tune --confirm` writes a confirmation record into it first, reverts exactly that
 * journal T after the apply finished (or T after it started, when the apply never finished),
 * with the state directory's lock held, recording "by":"watchdog". It checks the journal's
 * identity (device and inode) each time, so a journal replaced under it is not replayed; a
 * journal that is confirmed, reverted or gone ends it without a change. A second apply while a
 * journal waits for its confirmation is refused. */
#ifndef NETRIG_TUNE_CONFIRM_H
#define NETRIG_TUNE_CONFIRM_H

#include "tune_journal.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#define TUNE_CONFIRM_MIN_MS 1000u
#define TUNE_CONFIRM_MAX_MS (24u * 3600u * 1000u)

struct tune_confirm_job {
    char state_dir[PATH_MAX];
    char sysroot[PATH_MAX]; /* "" = this host */
    unsigned within_ms;
    long pid; /* set by tune_confirm_start: the watchdog's */
};

/* Called by tune_apply_run right after it created the journal (arg: a struct
 * tune_confirm_job): starts the watchdog for that journal and records it (pid, boot) in the
 * journal. 0, or -1 with err (then nothing is changed). */
int tune_confirm_start(void *arg, const char *journal, struct tune_journal_writer *w, char *err,
                       size_t errlen);

/* A journal in dir that still waits for its confirmation in this boot and was applied here
 * (this network namespace and host under sysroot, tune_place_here): 1 with its path in out
 * and a line for the operator in why, 0 when there is none, -1 with err. */
int tune_confirm_pending(const char *dir, const char *sysroot, char *out, size_t len, char *why,
                         size_t whylen, char *err, size_t errlen);

/* `netrig tune --confirm`: writes the confirmation into every journal of dir that waits for
 * one and was applied here (another namespace's or host's is left alone and why says so when
 * nothing else waits). Returns how many (>= 1), or 0 with why (nothing waits: never asked,
 * confirmed already, or reverted by its watchdog, with when: then *too_late), or -1 with err. The
 * newest confirmed journal's path goes into out. */
int tune_confirm_run(const char *dir, const char *sysroot, char *out, size_t len, char *why,
                     size_t whylen, bool *too_late, char *err, size_t errlen);

/* The boot id (/proc/sys/kernel/random/boot_id of the running kernel), "" when unreadable. */
void tune_confirm_boot_id(char *out, size_t len);

/* When the watchdog of j reverts it (Unix time; 0 when j asked for no confirmation). */
double tune_confirm_deadline(const struct tune_journal *j);

#endif
