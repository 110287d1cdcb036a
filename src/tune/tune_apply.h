/* tune_apply: makes a tuning plan real and undoes it. --apply journals each change before it
 * writes it (tune_journal), writes through hostwr, reads the value back to verify, and goes on
 * past a change the kernel refuses; --revert restores a journal's old values in reverse order
 * and verifies each. Both take the state directory's lock. */
#ifndef NETRIG_TUNE_APPLY_H
#define NETRIG_TUNE_APPLY_H

#include "tune_journal.h"
#include "tune_persist.h"
#include "tune_plan.h"

#include <stdbool.h>
#include <stdio.h>

enum tune_outcome {
    TUNE_O_APPLIED,
    TUNE_O_REFUSED,    /* the kernel refused it; the value is as before */
    TUNE_O_UNVERIFIED, /* written, but it reads back as another value */
    TUNE_O_BLOCKED,    /* not attempted: cannot be changed where netrig runs (plan's blocked) */
    TUNE_O_NOT_RUN,    /* not attempted: the apply stopped before it (journal unwritable) */
    TUNE_O_HELD,       /* not attempted: disruptive, not in --only, or an unproved MTU (held) */
};

struct tune_apply_opts {
    const char *sysroot;   /* NULL = this host */
    const char *state_dir; /* on this machine, already joined with the sysroot */
    const char *target;    /* "10 Gbit/s x 1 ms", for the journal */
    const char *stamp;     /* time and target, for the header comment of persisted files */
    const char *profile;
    bool persist;
    unsigned pause_ms;  /* test hook: sleep this long before each change but the first */
    FILE *progress;     /* one line per change as it happens; NULL = quiet */
    const char *banner; /* printed to progress once the journal exists (NULL: none) */
    /* Right after an MTU change is written: 0 when the path carries the new size (why says
     * how it was shown), -1 with why when not, and the old MTU is put back at once. NULL:
     * MTU changes are never made (tune_risk_select holds them without --peer). */
    int (*mtu_verify)(void *arg, const struct tune_change *c, char *why, size_t len);
    void *mtu_arg;
    /* With the state directory's lock held: check() before the journal is created (non-zero:
     * nothing is done, err says why), started() right after (the confirm watchdog; non-zero:
     * the journal is removed, nothing was changed). Either may be NULL. */
    int (*check)(void *arg, char *err, size_t errlen);
    int (*started)(void *arg, const char *journal, struct tune_journal_writer *w, char *err,
                   size_t errlen);
    void *hook_arg;
};

struct tune_done {
    enum tune_outcome outcome;
    char now[TUNE_VALUE_LEN];   /* read back after the write */
    char error[AUDIT_TEXT_LEN]; /* why it was refused, blocked, held or unverified */
    char note[AUDIT_TEXT_LEN];  /* applied MTU changes: how the path was shown to carry it */
};

struct tune_apply_result {
    char journal[PATH_MAX];
    size_t n;               /* = plan->nchanges */
    struct tune_done *done; /* per plan change */
    size_t nfiles;          /* --persist */
    struct tune_file files[TUNE_PERSIST_MAX];
    struct tune_done file_done[TUNE_PERSIST_MAX];
    char persist_skipped[AUDIT_TEXT_LEN]; /* findings no file can keep */
    unsigned applied, refused, unverified, blocked, held;
};

/* Makes every change that is neither blocked (cannot be changed here) nor held (tune_risk
 * select), the safe ones first, then the disruptive ones. Returns 0 when the journal held
 * every step (changes may still have been refused: see the counts), or -1 with err when
 * nothing could be started (lock, journal) or the journal could not be written any more (the
 * apply stops there; what it changed is journaled). */
int tune_apply_run(const struct tune_plan *plan, const struct tune_apply_opts *o,
                   struct tune_apply_result *res, char *err, size_t errlen);
void tune_apply_result_free(struct tune_apply_result *res);

/* `netrig tune --confirm --persist`: writes the --persist files for the values journal applied
 * (o: sysroot, state_dir, stamp, progress), journaled in that same journal, so its --revert
 * undoes them too. 0, or -1 with err. */
int tune_apply_persist_journal(const char *journal, const struct tune_apply_opts *o,
                               struct tune_apply_result *res, char *err, size_t errlen);

struct tune_undo {
    unsigned seq;
    char kind[8], name[TUNE_NAME_LEN], path[TUNE_PATH_LEN];
    char to[TUNE_VALUE_LEN]; /* the value put back ("(removed)" for a file that was absent) */
    int outcome; /* 1 restored, 0 skipped (refused at apply: nothing changed), -1 failed */
    char error[AUDIT_TEXT_LEN];
};

struct tune_revert_result {
    char journal[PATH_MAX];
    size_t n;
    struct tune_undo *undo; /* in the order they were restored (reverse of the apply) */
    unsigned restored, skipped, failed;
};

/* Picks the journal to revert: path as given, or the newest in state_dir that is not fully
 * reverted and was applied here (tune_place_here under sysroot: this network namespace
 * and host; others are skipped). Returns 0 with out filled, or -1 with err. */
int tune_apply_pick_journal(const char *state_dir, const char *sysroot, const char *path, char *out,
                            size_t len, char *err, size_t errlen);

/* Reads the whole journal first (nothing is changed when any line is bad), checks it was
 * written for this sysroot and, when it names one, in this network namespace and host
 * (another's is refused: nothing is changed), then restores every value in reverse order and
 * verifies it. Returns 0 when everything was restored, 1 when some values failed, -1 with err when
 * nothing was done. */
int tune_apply_revert(const char *journal, const char *sysroot, const char *state_dir,
                      FILE *progress, struct tune_revert_result *res, char *err, size_t errlen);
void tune_apply_revert_free(struct tune_revert_result *res);

/* The same with options: how long to wait for the state directory's lock (another apply or
 * revert), who reverts ("watchdog" goes into the journal), and, for the confirm watchdog,
 * leave a journal alone that was confirmed meanwhile (returns 2 then, err saying so). */
struct tune_revert_opts {
    unsigned lock_wait_ms;
    const char *by;
    bool unless_confirmed;
};
int tune_apply_revert_opts(const char *journal, const char *sysroot, const char *state_dir,
                           FILE *progress, const struct tune_revert_opts *ro,
                           struct tune_revert_result *res, char *err, size_t errlen);

#endif
