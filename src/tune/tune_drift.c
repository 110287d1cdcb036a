/* tune_drift: applied values against the files now. */
#include "tune_drift.h"

#include "hostfs.h"
#include "tune_journal.h"
#include "tune_state.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

bool tune_drift_same(const char *a, const char *b)
{
    for (;;) {
        while (isspace((unsigned char)*a) && isspace((unsigned char)a[1]))
            a++;
        while (isspace((unsigned char)*b) && isspace((unsigned char)b[1]))
            b++;
        if (isspace((unsigned char)*a) && isspace((unsigned char)*b)) {
            a++, b++;
            continue;
        }
        if (*a != *b)
            return false;
        if (!*a)
            return true;
        a++, b++;
    }
}

/* The item of that setting, a new one, or NULL when the table is full. */
static struct tune_drift_item *slot(struct tune_drift *d, const char *kind, const char *name)
{
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->item[i].kind, kind) && !strcmp(d->item[i].name, name))
            return &d->item[i];
    if (d->n == TUNE_DRIFT_MAX)
        return NULL;
    snprintf(d->item[d->n].kind, sizeof(d->item[d->n].kind), "%s", kind);
    snprintf(d->item[d->n].name, sizeof(d->item[d->n].name), "%s", name);
    return &d->item[d->n++];
}

static void follow(struct tune_drift *d, const struct tune_journal *j)
{
    bool any = false;

    for (size_t i = 0; i < j->n; i++) {
        const struct tune_journal_entry *e = &j->e[i];
        struct tune_drift_item *it;
        char now[4096];
        long rc;

        if (e->state != TUNE_J_APPLIED || !e->new_value ||
            (strcmp(e->kind, "sysctl") && strcmp(e->kind, "sysfs")))
            continue;
        any = true;
        it = slot(d, e->kind, e->name);
        if (!it) {
            d->untracked++;
            continue;
        }
        rc = hostfs_read(j->sysroot, e->path, now, sizeof(now));
        it->unreadable = rc < 0;
        it->drifted = rc < 0 || !tune_drift_same(now, e->new_value);
    }
    if (any) {
        d->journals++;
        if (j->done_unix > d->applied_unix)
            d->applied_unix = j->done_unix;
    }
}

int tune_drift_scan(const char *state_dir, struct tune_drift *d, char *err, size_t errlen)
{
    char **names = NULL, path[4096];
    size_t n = 0;
    bool exists = false;
    int rc = 0;

    memset(d, 0, sizeof(*d));
    if (tune_state_check_dir(state_dir, false, &exists, err, errlen))
        return -1;
    if (!exists)
        return 0;
    if (tune_journal_list(state_dir, &names, &n, err, errlen))
        return -1;
    for (size_t i = 0; i < n && !rc; i++) {
        struct tune_journal j;
        snprintf(path, sizeof(path), "%s/%s", state_dir, names[i]);
        if (tune_journal_load(path, &j, err, errlen)) {
            rc = -1;
            break;
        }
        if (!j.reverted)
            follow(d, &j);
        tune_journal_free(&j);
    }
    tune_journal_names_free(names, n);
    for (size_t i = 0; i < d->n; i++)
        d->drifted += d->item[i].drifted;
    return rc;
}
