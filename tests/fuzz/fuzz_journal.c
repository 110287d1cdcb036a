/* libFuzzer target: the tune journal reader. `netrig tune --revert` and `--list` read journals
 * from the state directory, where a kill, a full disk or a hand edit can leave anything. The
 * input becomes the content of a file in a private temporary directory that tune_journal_load
 * reads by its path (a plain file: the loader opens journals with O_NOFOLLOW, so the memfd's
 * /proc/self/fd link would be refused). A journal that loads must hold what the loader promises
 * --revert: change records numbered 1..n, each with a new value, an old one unless it is a file
 * that did not exist, and known states. What --revert does with each value before writing it
 * (squash it for display, compare it, check an ethtool value's keys) runs on it, nothing is
 * written; the --list reports (text and JSON) then read it as a journal in a directory. Nothing may
 * crash, leak or hang. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nicset.h"
#include "tune_journal.h"
#include "tune_plan.h"
#include "tune_report.h"

static int mfd = -1;
static FILE *devnull;
static char dir[] = "/tmp/netrig-fuzz-journal-XXXXXX";
static char name[] = "tune-fuzz.jsonl";
static char path[sizeof(dir) + sizeof(name) + 1];

static void cleanup(void)
{
    unlink(path);
    rmdir(dir);
}

static void check(const struct tune_journal *j)
{
    for (size_t i = 0; i < j->n; i++) {
        const struct tune_journal_entry *e = &j->e[i];
        if (e->seq != i + 1 || !e->new_value || (!e->old_value && strcmp(e->kind, "file")) ||
            (unsigned)e->state > TUNE_J_UNVERIFIED || (unsigned)e->revert > TUNE_R_FAILED ||
            !memchr(e->kind, 0, sizeof(e->kind)) || !memchr(e->path, 0, sizeof(e->path)))
            abort();
    }
}

/* The pure part of undoing each change (tune_apply.c undo_one, nicset_set's value check). */
static void revert_dry(const struct tune_journal *j)
{
    static char shown[TUNE_VALUE_LEN];

    for (size_t i = 0; i < j->n; i++) {
        const struct tune_journal_entry *e = &j->e[i];
        const char *group = strrchr(e->path, ':');
        if (!strcmp(e->kind, "file"))
            continue;
        (void)tune_plan_kind_from_name(e->kind);
        tune_plan_squash(e->old_value, shown, sizeof(shown));
        tune_plan_squash(e->new_value, shown, sizeof(shown));
        (void)tune_plan_same_value(e->old_value, e->new_value);
        if (!strcmp(e->kind, "ethtool") && group) {
            int g = nicset_group_from_name(group + 1);
            if (g >= 0) {
                (void)nicset_check((enum nicset_group)g, e->old_value);
                (void)nicset_check((enum nicset_group)g, e->new_value);
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[PATH_MAX + 512];
    char *names[1] = {name};
    struct tune_journal j;
    cJSON *list;

    if (mfd < 0) {
        if (!mkdtemp(dir))
            abort();
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        mfd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        devnull = fopen("/dev/null", "w");
        if (mfd < 0 || !devnull)
            abort();
        atexit(cleanup);
    }
    if (ftruncate(mfd, 0) || (size && pwrite(mfd, data, size, 0) != (ssize_t)size))
        abort();

    if (tune_journal_load(path, &j, err, sizeof(err)) == 0) {
        check(&j);
        revert_dry(&j);
        tune_journal_free(&j);
        /* each report loads the journal again: only for one that loads (a load allocates
         * TUNE_JOURNAL_MAX_BYTES, which is slow under ASan) */
        tune_report_list_text(devnull, dir, NULL, names, 1);
        list = tune_report_list_json(dir, NULL, names, 1);
        cJSON_Delete(list);
    }
    return 0;
}
