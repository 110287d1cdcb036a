/* tune_apply: journal, write, verify; and the reverse. */
#define _GNU_SOURCE
#include "tune_apply.h"

#include "hostfs.h"
#include "hostwr.h"
#include "tune_place.h"
#include "tune_state.h"
#include "wrap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void say(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(FILE *f, const char *fmt, ...)
{
    va_list ap;

    if (!f)
        return;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fflush(f); /* a kill between two changes leaves every line so far on the terminal */
}

/* One progress line, "  STATUS      text", wrapped under the text. */
static void line(FILE *f, const char *status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void line(FILE *f, const char *status, const char *fmt, ...)
{
    char text[1024], lead[32];
    va_list ap;

    if (!f)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    snprintf(lead, sizeof(lead), "  %-11s ", status);
    wrap_print(f, lead, 14, text);
    fflush(f);
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

static enum tune_journal_state jstate(enum tune_outcome o)
{
    return o == TUNE_O_APPLIED ? TUNE_J_APPLIED
                               : (o == TUNE_O_REFUSED ? TUNE_J_REFUSED : TUNE_J_UNVERIFIED);
}

/* Reads the value back after writing it and judges the outcome. */
static void verify(const struct tune_plan *plan, const char *sysroot, const struct tune_change *c,
                   const char *old, int wrc, struct tune_done *d)
{
    char a[TUNE_VALUE_LEN], b[TUNE_VALUE_LEN];
    long n = tune_plan_read(sysroot, c->kind, c->path, c->new_value, d->now, sizeof(d->now));

    if (n < 0)
        d->now[0] = '\0';
    if (wrc) {
        tune_plan_explain(sysroot, plan->netns_child, c, wrc, d->error, sizeof(d->error));
        d->outcome = TUNE_O_REFUSED;
        if (n >= 0 && !tune_plan_same_value(d->now, old)) { /* a vector half taken */
            tune_plan_squash(d->now, a, sizeof(a));
            snprintf(d->error + strlen(d->error), sizeof(d->error) - strlen(d->error),
                     " (the kernel took part of it: it reads '%s' now)", a);
            d->outcome = TUNE_O_UNVERIFIED;
        }
    } else if (n < 0 || !tune_plan_same_value(d->now, c->new_value)) {
        tune_plan_squash(d->now, a, sizeof(a));
        tune_plan_squash(c->new_value, b, sizeof(b));
        snprintf(d->error, sizeof(d->error), "wrote '%s' but %s reads back as '%s'", b, c->name,
                 n < 0 ? "(unreadable)" : a);
        d->outcome = TUNE_O_UNVERIFIED;
    } else {
        d->outcome = TUNE_O_APPLIED;
    }
}

/* An MTU change was just written: the path must carry it, or the old MTU goes back at once
 * (journaled as refused when it reads back as before: nothing to revert; as unverified
 * otherwise, so --revert tries again). */
static void mtu_check(const struct tune_apply_opts *o, const struct tune_change *c, const char *old,
                      struct tune_done *d)
{
    char why[AUDIT_TEXT_LEN] = "no path-MTU probe was asked for", now[TUNE_VALUE_LEN];
    int rc;

    if (o->mtu_verify && !o->mtu_verify(o->mtu_arg, c, why, sizeof(why))) {
        snprintf(d->note, sizeof(d->note), "%s", why);
        return;
    }
    rc = tune_plan_write(o->sysroot, c->kind, c->path, old);
    if (!rc && tune_plan_read(o->sysroot, c->kind, c->path, old, now, sizeof(now)) >= 0 &&
        tune_plan_same_value(now, old)) {
        snprintf(d->error, sizeof(d->error),
                 "the path does not carry %s-byte packets: %s; put back %s", c->new_value, why,
                 old);
        snprintf(d->now, sizeof(d->now), "%s", now);
        d->outcome = TUNE_O_REFUSED;
        return;
    }
    snprintf(d->error, sizeof(d->error),
             "the path does not carry %s-byte packets: %s; putting back %s failed (%s): run "
             "netrig tune --revert",
             c->new_value, why, old, rc ? strerror(-rc) : "it reads back otherwise");
    d->outcome = TUNE_O_UNVERIFIED;
}

/* One change: 0 done (whatever the kernel said), -1 the journal could not be written. */
static int apply_one(const struct tune_plan *plan, const struct tune_apply_opts *o,
                     struct tune_journal_writer *w, unsigned *seq, const struct tune_change *c,
                     struct tune_done *d, char *err, size_t errlen)
{
    char old[TUNE_VALUE_LEN], a[TUNE_VALUE_LEN], b[TUNE_VALUE_LEN];
    long n = tune_plan_read(o->sysroot, c->kind, c->path, c->new_value, old, sizeof(old));
    int rc;

    if (n < 0) { /* gone since the plan was made: nothing written, nothing journaled */
        tune_plan_explain(o->sysroot, plan->netns_child, c, (int)n, d->error, sizeof(d->error));
        d->outcome = TUNE_O_REFUSED;
        return 0;
    }
    (*seq)++;
    if (tune_journal_change(w, *seq, tune_plan_kind_name(c->kind), c->name, c->path, old,
                            c->new_value, err, errlen))
        return -1;
    rc = tune_plan_write(o->sysroot, c->kind, c->path, c->new_value);
    verify(plan, o->sysroot, c, old, rc, d);
    if (c->mtu && d->outcome == TUNE_O_APPLIED)
        mtu_check(o, c, old, d);
    tune_plan_squash(old, a, sizeof(a));
    tune_plan_squash(d->now, b, sizeof(b));
    if (d->outcome == TUNE_O_APPLIED)
        line(o->progress, "applied", "%s: %s -> %s%s%s%s", c->name, a, b, d->note[0] ? " (" : "",
             d->note, d->note[0] ? ")" : "");
    else
        line(o->progress, d->outcome == TUNE_O_REFUSED ? "refused" : "unverified", "%s: %s",
             c->name, d->error);
    return tune_journal_result(w, *seq, jstate(d->outcome), d->now, d->error, err, errlen);
}

static int dir_of(const char *path, char *out, size_t len)
{
    const char *slash = strrchr(path, '/');

    if (!slash || (size_t)(slash - path) >= len)
        return -1;
    memcpy(out, path, (size_t)(slash - path));
    out[slash - path] = '\0';
    return 0;
}

/* One persistent file, journaled like a value: the old content (or absent) first. */
static int apply_file(const struct tune_apply_opts *o, struct tune_journal_writer *w, unsigned *seq,
                      const struct tune_file *f, struct tune_done *d, char *err, size_t errlen)
{
    char dir[TUNE_PATH_LEN], *now = NULL;
    int rc;

    (*seq)++;
    if (tune_journal_change(w, *seq, "file", f->path, f->path, f->old_content, f->new_content, err,
                            errlen))
        return -1;
    rc = dir_of(f->path, dir, sizeof(dir)) ? -EINVAL : hostwr_mkdirs(o->sysroot, dir, 0755);
    if (!rc)
        rc = hostwr_replace(o->sysroot, f->path, f->new_content, 0644);
    if (!rc)
        rc = hostwr_slurp(o->sysroot, f->path, TUNE_FILE_MAX, &now);
    d->outcome = TUNE_O_APPLIED;
    if (rc) {
        snprintf(d->error, sizeof(d->error), "cannot write %s: %s", f->path, strerror(-rc));
        d->outcome = TUNE_O_REFUSED;
    } else if (strcmp(now, f->new_content)) {
        snprintf(d->error, sizeof(d->error), "%s reads back different from what was written",
                 f->path);
        d->outcome = TUNE_O_UNVERIFIED;
    }
    free(now);
    snprintf(d->now, sizeof(d->now), "%s", d->outcome == TUNE_O_APPLIED ? "(written)" : "");
    if (d->outcome == TUNE_O_APPLIED)
        line(o->progress, "persisted", "%s (%s)", f->path, f->old_content ? "updated" : "new");
    else
        line(o->progress, "refused", "%s: %s", f->path, d->error);
    return tune_journal_result(w, *seq, jstate(d->outcome), NULL, d->error, err, errlen);
}

static int persist(const struct tune_plan *plan, const struct tune_apply_opts *o,
                   struct tune_journal_writer *w, unsigned *seq, struct tune_apply_result *res,
                   char *err, size_t errlen)
{
    bool *want = calloc(plan->nchanges + 1, sizeof(*want));
    int rc;

    if (!want) {
        snprintf(err, errlen, "out of memory building the persistent files");
        return -1;
    }
    for (size_t i = 0; i < plan->nchanges; i++)
        want[i] = res->done[i].outcome == TUNE_O_APPLIED;
    rc = tune_persist_build(o->sysroot, plan, want, o->stamp ? o->stamp : "", res->files,
                            &res->nfiles, res->persist_skipped, sizeof(res->persist_skipped), err,
                            errlen);
    free(want);
    for (size_t i = 0; !rc && i < res->nfiles; i++)
        rc = apply_file(o, w, seq, &res->files[i], &res->file_done[i], err, errlen);
    if (!rc && res->persist_skipped[0])
        line(o->progress, "not kept",
             "%s: no file netrig writes holds them (use tuned, a "
             "systemd .link file or a oneshot unit)",
             res->persist_skipped);
    return rc;
}

static void count(struct tune_apply_result *res, enum tune_outcome o)
{
    if (o == TUNE_O_APPLIED)
        res->applied++;
    else if (o == TUNE_O_REFUSED)
        res->refused++;
    else if (o == TUNE_O_UNVERIFIED)
        res->unverified++;
    else if (o == TUNE_O_BLOCKED)
        res->blocked++;
    else if (o == TUNE_O_HELD)
        res->held++;
}

/* Marks what is not attempted (blocked, held) and says so. */
static void skip_unattempted(const struct tune_plan *plan, const struct tune_apply_opts *o,
                             struct tune_apply_result *res)
{
    for (size_t i = 0; i < plan->nchanges; i++) {
        const struct tune_change *c = &plan->changes[i];
        struct tune_done *d = &res->done[i];
        if (!c->blocked[0] && !c->held[0])
            continue;
        d->outcome = c->held[0] ? TUNE_O_HELD : TUNE_O_BLOCKED;
        snprintf(d->error, sizeof(d->error), "%s", c->held[0] ? c->held : c->blocked);
        line(o->progress, c->held[0] ? "held back" : "n/a here", "%s: %s", c->name, d->error);
        count(res, d->outcome);
    }
}

static int apply_all(const struct tune_plan *plan, const struct tune_apply_opts *o,
                     struct tune_journal_writer *w, struct tune_apply_result *res, char *err,
                     size_t errlen)
{
    unsigned seq = 0, tried = 0;

    skip_unattempted(plan, o, res);
    /* the safe changes first: if a disruptive one cuts the link, they are done and journaled */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < plan->nchanges; i++) {
            const struct tune_change *c = &plan->changes[i];
            if (c->blocked[0] || c->held[0] || (c->risk == TUNE_RISK_SAFE) != (pass == 0))
                continue;
            if (tried++ && o->pause_ms)
                sleep_ms(o->pause_ms);
            if (apply_one(plan, o, w, &seq, c, &res->done[i], err, errlen))
                return -1;
            count(res, res->done[i].outcome);
        }
    if (o->persist && persist(plan, o, w, &seq, res, err, errlen))
        return -1;
    return tune_journal_done(w, res->applied, res->refused, res->unverified, err, errlen);
}

int tune_apply_run(const struct tune_plan *plan, const struct tune_apply_opts *o,
                   struct tune_apply_result *res, char *err, size_t errlen)
{
    struct tune_journal_header h = {
        .target = o->target, .profile = o->profile, .sysroot = o->sysroot};
    struct tune_journal_writer w = {.fd = -1};
    int lock, rc;

    memset(res, 0, sizeof(*res));
    res->n = plan->nchanges;
    res->done = calloc(plan->nchanges + 1, sizeof(*res->done));
    if (!res->done) {
        snprintf(err, errlen, "out of memory: nothing was changed");
        return -1;
    }
    for (size_t i = 0; i < plan->nchanges; i++)
        res->done[i].outcome = TUNE_O_NOT_RUN;
    for (size_t i = 0; i < plan->nchanges; i++)
        h.planned += !plan->changes[i].blocked[0] && !plan->changes[i].held[0];
    h.netns = plan->netns_child == 1 ? "child" : (plan->netns_child == 0 ? "host" : "unknown");
    lock = tune_journal_lock(o->state_dir, err, errlen);
    if (lock < 0)
        return -1;
    if ((o->check && o->check(o->hook_arg, err, errlen)) ||
        tune_journal_create(o->state_dir, &h, &w, err, errlen)) {
        tune_journal_unlock(lock);
        return -1;
    }
    if (o->started && o->started(o->hook_arg, w.path, &w, err, errlen)) {
        tune_journal_close(&w);
        unlink(w.path); /* only its header: nothing was changed */
        tune_journal_unlock(lock);
        return -1;
    }
    snprintf(res->journal, sizeof(res->journal), "%s", w.path);
    if (o->banner)
        say(o->progress, "%s\n", o->banner);
    say(o->progress, "journal %s\n", w.path);
    rc = apply_all(plan, o, &w, res, err, errlen);
    tune_journal_close(&w);
    tune_journal_unlock(lock);
    return rc;
}

static bool same_root(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];

    a = a && *a ? a : NULL;
    b = b && *b ? b : NULL;
    if (!a || !b)
        return !a && !b;
    return realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

/* A plan of the values journal j applied (files aside), each marked applied in res. */
static int plan_of_journal(const struct tune_journal *j, struct tune_plan *plan,
                           struct tune_apply_result *res)
{
    memset(plan, 0, sizeof(*plan));
    plan->changes = calloc(j->n + 1, sizeof(*plan->changes));
    res->done = calloc(j->n + 1, sizeof(*res->done));
    if (!plan->changes || !res->done)
        return -1;
    for (size_t i = 0; i < j->n; i++) {
        const struct tune_journal_entry *e = &j->e[i];
        struct tune_change *c = &plan->changes[plan->nchanges];
        int k = tune_plan_kind_from_name(e->kind);
        if (k < 0 || e->state != TUNE_J_APPLIED)
            continue;
        c->kind = (enum tune_kind)k;
        snprintf(c->name, sizeof(c->name), "%s", e->name);
        snprintf(c->path, sizeof(c->path), "%s", e->path);
        snprintf(c->new_value, sizeof(c->new_value), "%s", e->new_value);
        snprintf(c->finding, sizeof(c->finding), "%s", e->name);
        res->done[plan->nchanges++].outcome = TUNE_O_APPLIED;
    }
    res->n = plan->nchanges;
    return 0;
}

int tune_apply_persist_journal(const char *journal, const struct tune_apply_opts *o,
                               struct tune_apply_result *res, char *err, size_t errlen)
{
    struct tune_journal j;
    struct tune_journal_writer w = {.fd = -1};
    struct tune_plan plan = {0};
    unsigned seq;
    int lock, rc = -1;

    memset(res, 0, sizeof(*res));
    snprintf(res->journal, sizeof(res->journal), "%s", journal);
    if ((lock = tune_journal_lock(o->state_dir, err, errlen)) < 0)
        return -1;
    if (tune_journal_load(journal, &j, err, errlen)) {
        tune_journal_unlock(lock);
        return -1;
    }
    if (!same_root(j.sysroot, o->sysroot))
        snprintf(err, errlen, "journal '%s' was applied to another --sysroot: nothing persisted",
                 journal);
    else if (!strcmp(j.netns, "child"))
        snprintf(err, errlen,
                 "journal '%s' was applied inside a network namespace: --persist would write "
                 "the host's /etc with the namespace's values; nothing persisted",
                 journal);
    else if (j.reverts)
        snprintf(err, errlen, "journal '%s' was reverted: nothing to persist", journal);
    else if (plan_of_journal(&j, &plan, res))
        snprintf(err, errlen, "out of memory: nothing persisted");
    else if (!tune_journal_reopen(journal, &w, err, errlen)) {
        seq = (unsigned)j.n;
        rc = persist(&plan, o, &w, &seq, res, err, errlen);
    }
    tune_journal_close(&w);
    tune_journal_unlock(lock);
    tune_journal_free(&j);
    free(plan.changes);
    return rc;
}

void tune_apply_result_free(struct tune_apply_result *res)
{
    free(res->done);
    res->done = NULL;
    tune_persist_free(res->files, res->nfiles);
    res->nfiles = 0;
}

/* ---- revert ------------------------------------------------------------------------------ */

int tune_apply_pick_journal(const char *state_dir, const char *sysroot, const char *path, char *out,
                            size_t len, char *err, size_t errlen)
{
    char **names, full[PATH_MAX], why[2 * PATH_MAX + 512] = "";
    struct hostwr_place here;
    int here_child, rc = -1;
    unsigned foreign = 0;
    size_t n;

    if (path && *path) {
        snprintf(out, len, "%s", path);
        return 0;
    }
    if (tune_journal_list(state_dir, &names, &n, err, errlen))
        return -1;
    sysroot = sysroot && *sysroot ? sysroot : NULL;
    hostwr_place(sysroot, &here);
    here_child = hostwr_netns_child(sysroot);
    snprintf(err, errlen,
             n ? "every journal in '%s' is reverted already: nothing to do"
               : "no journal in '%s': nothing to revert (netrig tune --apply writes "
                 "one there; --state-dir names another directory)",
             state_dir);
    for (size_t i = n; i-- > 0;) {
        struct tune_journal j;
        snprintf(full, sizeof(full), "%s/%s", state_dir, names[i]);
        if (tune_journal_load(full, &j, err, errlen))
            break; /* a damaged newest journal is reported, not skipped */
        bool finished = j.reverted && !j.revert_failed;
        char one[sizeof(why)];
        bool mine = finished || tune_place_here(&j, &here, here_child, one, sizeof(one)) == 1;
        if (!mine && !foreign++) { /* the newest one says where */
            if (j.place_known)
                tune_place_text(&j.place, why, sizeof(why));
            else
                snprintf(why, sizeof(why), "a%s network namespace an older netrig did not name",
                         !strcmp(j.netns, "child") ? " child" : "nother");
        }
        tune_journal_free(&j);
        if (!finished && mine) {
            snprintf(out, len, "%s", full);
            rc = 0;
            break;
        }
    }
    if (rc && foreign) {
        char place[192];
        tune_place_text(&here, place, sizeof(place));
        snprintf(err, errlen,
                 "nothing to revert in this %s: %u journal(s) in '%s' were applied elsewhere "
                 "and are left alone (the newest in %s); run netrig tune --revert there",
                 place, foreign, state_dir, why);
    }
    tune_journal_names_free(names, n);
    return rc;
}

/* Restores one value (or file); fills u. */
static void undo_one(const char *sysroot, const struct tune_journal_entry *e, struct tune_undo *u)
{
    char now[TUNE_VALUE_LEN], *text = NULL;
    int rc;

    u->outcome = 1;
    if (!strcmp(e->kind, "file")) {
        rc = e->old_value ? hostwr_replace(sysroot, e->path, e->old_value, 0644)
                          : hostwr_remove(sysroot, e->path);
        snprintf(u->to, sizeof(u->to), "%s", e->old_value ? "(previous content)" : "(removed)");
        hostwr_remove_temps(sysroot, e->path); /* left by a kill during --persist */
        if (!rc) {
            int r = hostwr_slurp(sysroot, e->path, TUNE_FILE_MAX, &text);
            if (e->old_value ? (r || strcmp(text, e->old_value)) : r != -ENOENT)
                rc = -EIO;
            free(text);
        }
    } else {
        enum tune_kind k = (enum tune_kind)tune_plan_kind_from_name(e->kind);
        tune_plan_squash(e->old_value, u->to, sizeof(u->to));
        rc = tune_plan_write(sysroot, k, e->path, e->old_value);
        if (!rc && (tune_plan_read(sysroot, k, e->path, e->old_value, now, sizeof(now)) < 0 ||
                    !tune_plan_same_value(now, e->old_value)))
            rc = -EIO;
    }
    if (rc) {
        u->outcome = -1;
        snprintf(u->error, sizeof(u->error),
                 rc == -EIO ? "%s does not read back as what was "
                              "restored: check it by hand"
                            : "cannot restore %s: %s",
                 e->name, strerror(-rc));
    }
}

static int revert_all(const struct tune_journal *j, const char *sysroot, FILE *progress,
                      struct tune_journal_writer *w, struct tune_revert_result *res, char *err,
                      size_t errlen)
{
    for (size_t i = j->n; i-- > 0;) {
        const struct tune_journal_entry *e = &j->e[i];
        struct tune_undo *u = &res->undo[res->n++];
        u->seq = e->seq;
        snprintf(u->kind, sizeof(u->kind), "%s", e->kind);
        snprintf(u->name, sizeof(u->name), "%s", e->name);
        snprintf(u->path, sizeof(u->path), "%s", e->path);
        if (e->state == TUNE_J_REFUSED) {
            u->outcome = 0;
            snprintf(u->error, sizeof(u->error), "refused at apply: nothing to restore");
            res->skipped++;
            line(progress, "unchanged", "%s (refused when applied)", e->name);
        } else {
            undo_one(sysroot, e, u);
            if (u->outcome > 0) {
                res->restored++;
                line(progress, "restored", "%s: %s", e->name, u->to);
            } else {
                res->failed++;
                line(progress, "FAILED", "%s: %s", e->name, u->error);
            }
        }
        if (tune_journal_revert_one(w, e->seq, u->outcome >= 0, u->error, err, errlen))
            return -1;
    }
    return tune_journal_revert_done(w, res->restored + res->skipped, res->failed, err, errlen);
}

int tune_apply_revert_opts(const char *journal, const char *sysroot, const char *state_dir,
                           FILE *progress, const struct tune_revert_opts *ro,
                           struct tune_revert_result *res, char *err, size_t errlen)
{
    struct tune_journal j;
    struct tune_journal_writer w = {.fd = -1};
    char jdir[PATH_MAX];
    struct hostwr_place here;
    struct stat st;
    bool exists;
    int lock, rc = -1;

    memset(res, 0, sizeof(*res));
    sysroot = sysroot && *sysroot ? sysroot : NULL;
    hostwr_place(sysroot, &here);
    snprintf(res->journal, sizeof(res->journal), "%s", journal);
    if (tune_state_dirname(journal, jdir, sizeof(jdir))) {
        snprintf(err, errlen, "journal path '%s' is too long", journal);
        return -1;
    }
    if (tune_state_check_dir(jdir, false, NULL, err, errlen) ||
        tune_state_check_dir(state_dir, false, &exists, err, errlen))
        return -1;
    if (lstat(journal, &st) && errno == ENOENT) {
        snprintf(err, errlen,
                 "journal '%s' does not exist: run 'netrig tune --list' to see the "
                 "journals",
                 journal);
        return -1;
    }
    if (!exists) { /* the lock lives there: never create it just to revert */
        snprintf(err, errlen,
                 "the state directory '%s' does not exist: nothing was changed; pass the "
                 "--state-dir the apply used",
                 state_dir);
        return -1;
    }
    /* the lock first, then the journal: what it says (confirmed, reverted) cannot change
     * between reading it and acting on it */
    if ((lock = tune_journal_lock_wait(state_dir, ro->lock_wait_ms, err, errlen)) < 0)
        return -1;
    if (tune_journal_load(journal, &j, err, errlen)) {
        tune_journal_unlock(lock);
        return -1;
    }
    if (!same_root(j.sysroot, sysroot)) {
        snprintf(err, errlen,
                 "journal '%s' was applied to %s%s, not to %s%s: nothing was "
                 "changed; run the revert with the same --sysroot",
                 journal, j.sysroot[0] ? "--sysroot " : "this host", j.sysroot,
                 sysroot && *sysroot ? "--sysroot " : "this host", sysroot ? sysroot : "");
    } else if (j.place_known &&
               !tune_place_here(&j, &here, hostwr_netns_child(sysroot), err, errlen)) {
        /* another namespace's values written into this one would be the wrong values in
         * the wrong place: nothing is changed, the journal is not touched */
        snprintf(err + strlen(err), errlen - strlen(err),
                 ": nothing was changed; run the revert there%s%s%s",
                 j.place.netns_name[0] ? " (ip netns exec " : "", j.place.netns_name,
                 j.place.netns_name[0] ? " netrig tune --revert ...)" : "");
    } else if (ro->unless_confirmed && j.confirmed) {
        snprintf(err, errlen, "journal '%s' was confirmed (%s): nothing to revert", journal,
                 j.confirmed_at);
        rc = 2;
    } else if (j.reverted && !j.revert_failed) {
        snprintf(err, errlen, "journal '%s' was reverted already (%s): nothing to do", journal,
                 j.reverted_at);
    } else if (!(res->undo = calloc(j.n + 1, sizeof(*res->undo)))) {
        snprintf(err, errlen, "out of memory: nothing was changed");
    } else if (!tune_journal_reopen(journal, &w, err, errlen) &&
               !tune_journal_revert_start(&w, ro->by, err, errlen)) {
        say(progress, "reverting %s (%zu changes, newest first)\n", journal, j.n);
        rc = revert_all(&j, sysroot, progress, &w, res, err, errlen);
        if (rc == 0 && res->failed)
            rc = 1;
    }
    tune_journal_close(&w);
    tune_journal_unlock(lock);
    tune_journal_free(&j);
    if (rc < 0 || rc == 2)
        tune_apply_revert_free(res);
    return rc;
}

int tune_apply_revert(const char *journal, const char *sysroot, const char *state_dir,
                      FILE *progress, struct tune_revert_result *res, char *err, size_t errlen)
{
    const struct tune_revert_opts ro = {0};

    return tune_apply_revert_opts(journal, sysroot, state_dir, progress, &ro, res, err, errlen);
}

void tune_apply_revert_free(struct tune_revert_result *res)
{
    free(res->undo);
    res->undo = NULL;
    res->n = 0;
}
