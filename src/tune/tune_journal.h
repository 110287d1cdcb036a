/* tune_journal: the record `netrig tune --apply` writes before it changes anything, and that
 * `--revert` restores from. One file per apply in the state directory, one JSON object per
 * line, each line written with one write(2) and fsync'd before the next step:
 *
 *   {"netrig_tune_journal":1,"created":"...Z","created_unix":..,"pid":..,"target":"..",
 *    "profile":"throughput","sysroot":null,"netns":"child","planned":3,
 *    "place":{"netns_inode":4026532301,"netns_name":"wA","host":"h1","machine_id":"..",
 *             "boot_id":".."}}                                 header
 * The place names where the journal was written: --revert, --list, --confirm and the
 * watchdog leave another network namespace's or host's journal alone (tune_place).
 *   {"seq":1,"kind":"sysctl","name":"net.ipv4.tcp_rmem","path":"/proc/sys/net/ipv4/tcp_rmem",
 *    "old":"4096\t4096\t8192","new":"4096 4096 4194304"}       before the value is written
 *   {"seq":1,"result":"applied","now":"4096\t4096\t4194304"}   after (refused: "error")
 *   {"done":true,"applied":1,"refused":0,"unverified":0,"at":"...Z","at_unix":..}
 *                                                              the apply finished
 *   {"revert":"start","at":"...Z"} {"revert_seq":1,"result":"restored"} {"revert":"done",...}
 * With --confirm-within, right after the header (before any change):
 *   {"confirm":"pending","within_ms":60000,"watchdog_pid":..,"boot_id":"..."}
 * and, from netrig tune --confirm, {"confirm":"done","at":"...Z"}; a watchdog that reverts
 * because no confirmation came writes "by":"watchdog" in its revert start record.
 *
 * A kill between any two steps leaves whole lines: a change record without its result is
 * restored too. A file change ("kind":"file") has "old":null when the file did not exist. */
#ifndef NETRIG_TUNE_JOURNAL_H
#define NETRIG_TUNE_JOURNAL_H

#include "hostwr.h"
#include "tune_plan.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#define TUNE_JOURNAL_VERSION     1
#define TUNE_JOURNAL_DEFAULT_DIR "/var/lib/netrig/tune"
#define TUNE_JOURNAL_MAX_BYTES   (16u << 20)
#define TUNE_FILE_MAX            (256u << 10) /* a configuration file netrig replaces */
/* the only files a journal may name: what --persist writes (tune_persist.c) */
#define TUNE_SYSCTL_CONF "/etc/sysctl.d/90-netrig.conf"
#define TUNE_UDEV_RULES  "/etc/udev/rules.d/90-netrig.rules"

enum tune_journal_state {
    TUNE_J_PENDING, /* the change record is there, its result is not (killed in between) */
    TUNE_J_APPLIED,
    TUNE_J_REFUSED,    /* the kernel refused it: nothing changed */
    TUNE_J_UNVERIFIED, /* written, but reading it back gave another value */
};

enum tune_journal_revert { TUNE_R_NONE, TUNE_R_RESTORED, TUNE_R_FAILED };

struct tune_journal_entry {
    unsigned seq;
    char kind[8]; /* "sysctl", "sysfs", "ethtool" (path "ethtool:IF:GROUP"), "file" */
    char name[TUNE_NAME_LEN];
    char path[TUNE_PATH_LEN];
    char *old_value; /* NULL: the file did not exist (kind "file" only) */
    char *new_value;
    enum tune_journal_state state;
    char error[AUDIT_TEXT_LEN];
    enum tune_journal_revert revert;
};

struct tune_journal {
    char path[PATH_MAX];
    char created[40];
    double created_unix;
    long pid;
    char target[96], profile[16], netns[16];
    char sysroot[PATH_MAX]; /* "" = the host itself */
    unsigned planned;
    size_t n;
    struct tune_journal_entry *e;
    bool done;              /* the apply ran to its end */
    unsigned reverts;       /* revert runs started */
    bool reverted;          /* the last revert run finished */
    unsigned revert_failed; /* ...with this many values not restored */
    char reverted_at[40];
    char reverted_by[16];      /* "watchdog" when no confirmation came in time, else "" */
    double done_unix;          /* when the apply finished (0: unknown or not finished) */
    struct hostwr_place place; /* where it was written */
    bool place_known;          /* false: an older netrig wrote it without its place */
    /* --confirm-within */
    bool confirm; /* the apply asked for a confirmation */
    unsigned confirm_within_ms;
    long watchdog_pid;
    char boot_id[40]; /* the boot the watchdog runs in */
    bool confirmed;
    char confirmed_at[40];
};

struct tune_journal_header {
    const char *target, *profile, *netns;
    const char *sysroot; /* NULL or "" = the host */
    unsigned planned;
};

/* An open journal being appended to. */
struct tune_journal_writer {
    int fd;
    char path[PATH_MAX];
};

/* Creates dir (mode 0700) and a new journal in it named tune-<UTC time>-<pid>.jsonl, writes
 * and syncs the header. dir is a path on this machine (already joined with any sysroot). */
int tune_journal_create(const char *dir, const struct tune_journal_header *h,
                        struct tune_journal_writer *w, char *err, size_t errlen);
/* Opens an existing journal to append revert records. */
int tune_journal_reopen(const char *path, struct tune_journal_writer *w, char *err, size_t errlen);
void tune_journal_close(struct tune_journal_writer *w);

/* Each appends one line and fsyncs it; 0, or -1 with err. */
int tune_journal_change(struct tune_journal_writer *w, unsigned seq, const char *kind,
                        const char *name, const char *path, const char *old_value,
                        const char *new_value, char *err, size_t errlen);
int tune_journal_result(struct tune_journal_writer *w, unsigned seq, enum tune_journal_state st,
                        const char *now, const char *error, char *err, size_t errlen);
int tune_journal_done(struct tune_journal_writer *w, unsigned applied, unsigned refused,
                      unsigned unverified, char *err, size_t errlen);
/* by: "watchdog" when the confirm watchdog reverts, NULL otherwise */
int tune_journal_revert_start(struct tune_journal_writer *w, const char *by, char *err,
                              size_t errlen);
int tune_journal_confirm_pending(struct tune_journal_writer *w, unsigned within_ms, long pid,
                                 const char *boot_id, char *err, size_t errlen);
int tune_journal_confirm_done(struct tune_journal_writer *w, char *err, size_t errlen);
int tune_journal_revert_one(struct tune_journal_writer *w, unsigned seq, bool restored,
                            const char *error, char *err, size_t errlen);
int tune_journal_revert_done(struct tune_journal_writer *w, unsigned restored, unsigned failed,
                             char *err, size_t errlen);

/* Reads and checks the whole journal. Any malformed, out-of-order or truncated line fails
 * with one line in err naming the file and the line; nothing else is done. */
int tune_journal_load(const char *path, struct tune_journal *j, char *err, size_t errlen);
void tune_journal_free(struct tune_journal *j);

/* The journals in dir (tune-*.jsonl), oldest first (the names sort by time). *names is an
 * array of n strings, freed with tune_journal_names_free. A missing dir gives 0 names. */
int tune_journal_list(const char *dir, char ***names, size_t *n, char *err, size_t errlen);
void tune_journal_names_free(char **names, size_t n);

/* Takes the state directory's lock (dir/.lock, flock) so two applies or reverts never
 * interleave. Returns the lock fd, or -1 with err (another netrig tune holds it). */
int tune_journal_lock(const char *dir, char *err, size_t errlen);
/* The same, waiting up to wait_ms for another holder to let go. */
int tune_journal_lock_wait(const char *dir, unsigned wait_ms, char *err, size_t errlen);
void tune_journal_unlock(int fd);

const char *tune_journal_state_name(enum tune_journal_state st);

#endif
