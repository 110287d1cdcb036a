/* tune_confirm: the confirm-or-revert watchdog, and `netrig tune --confirm`. */
#define _GNU_SOURCE
#include "tune_confirm.h"

#include "clock.h"
#include "hostfs.h"
#include "tune_apply.h"
#include "tune_place.h"
#include "tune_state.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOCK_WAIT_MS    60000 /* the watchdog waits this long for another apply or revert */
#define REVERT_TRIES    30
#define READY_WAIT_MS   5000
#define POLL_AT_MOST_MS 1000 /* rereads the journal at least this often, inotify or not */

struct ready_msg {
    int ok;
    long pid;
    char err[240];
};

void tune_confirm_boot_id(char *out, size_t len)
{
    if (hostfs_read(NULL, "/proc/sys/kernel/random/boot_id", out, len) < 0)
        out[0] = '\0';
}

double tune_confirm_deadline(const struct tune_journal *j)
{
    if (!j->confirm)
        return 0;
    return (j->done_unix > 0 ? j->done_unix : j->created_unix) + j->confirm_within_ms / 1e3;
}

/* counts a suspend: the deadline is wall time */
static double boottime(void) { return (double)clock_read_ns(CLOCK_BOOTTIME) / 1e9; }

/* ---- the watchdog process ---------------------------------------------------------------- */

/* Descriptors: keep only keep (moved to 3), stdio on /dev/null. */
static int detach_fds(int keep)
{
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);

    if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
        return -1;
    if (keep != 3 && dup3(keep, 3, O_CLOEXEC) < 0)
        return -1;
    if (close_range(4, ~0U, 0))
        for (int fd = 4; fd < 65536; fd++)
            close(fd);
    return 3;
}

/* 1 when path is still the file (device, inode) the watchdog was started for. */
static bool same_file(const char *path, const struct stat *was)
{
    struct stat st;

    return !lstat(path, &st) && S_ISREG(st.st_mode) && st.st_dev == was->st_dev &&
           st.st_ino == was->st_ino;
}

/* Waits until the deadline; 0 to revert, 1 when there is nothing to do any more. */
static int watch(const char *journal, const struct stat *was, int ino, unsigned within_ms)
{
    double deadline = boottime() + within_ms / 1e3;
    bool done_seen = false;
    char err[1024], events[4096];

    for (;;) {
        struct tune_journal j;
        if (!same_file(journal, was))
            return 1; /* removed or replaced: not the journal this watchdog is for */
        if (!tune_journal_load(journal, &j, err, sizeof(err))) { /* half a line: next time */
            bool over = j.confirmed || j.reverts > 0;
            if (j.done && !done_seen) {
                done_seen = true;
                deadline = boottime() + within_ms / 1e3;
            }
            tune_journal_free(&j);
            if (over)
                return 1;
        }
        double left = deadline - boottime();
        if (left <= 0)
            return 0;
        struct pollfd pfd = {.fd = ino, .events = POLLIN};
        int ms = left * 1e3 < POLL_AT_MOST_MS ? (int)(left * 1e3) + 1 : POLL_AT_MOST_MS;
        if (poll(&pfd, ino >= 0 ? 1 : 0, ms) > 0)
            while (read(ino, events, sizeof(events)) > 0)
                ;
    }
}

static void revert_now(const struct tune_confirm_job *job, const char *journal)
{
    const struct tune_revert_opts ro = {
        .lock_wait_ms = LOCK_WAIT_MS, .by = "watchdog", .unless_confirmed = true};
    char err[2048];

    for (int i = 0; i < REVERT_TRIES; i++) {
        struct tune_revert_result res;
        int rc = tune_apply_revert_opts(journal, job->sysroot[0] ? job->sysroot : NULL,
                                        job->state_dir, NULL, &ro, &res, err, sizeof(err));
        if (rc >= 0)
            tune_apply_revert_free(&res);
        if (rc >= 0 || !strstr(err, "another netrig tune"))
            return; /* done, confirmed meanwhile, or an error waiting will not cure */
    }
}

static void __attribute__((noreturn))
watchdog(const struct tune_confirm_job *job, const char *journal, int ready)
{
    struct ready_msg m = {.pid = getpid()};
    struct stat was;
    int fd, ino = -1;

    signal(SIGHUP, SIG_IGN); /* the session it came from may end */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    prctl(PR_SET_NAME, "netrig-confirm");
    umask(077);
    if (chdir("/") || (ready = detach_fds(ready)) < 0) {
        snprintf(m.err, sizeof(m.err), "cannot detach the confirm watchdog: %s", strerror(errno));
    } else if ((fd = open(journal, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0 || fstat(fd, &was)) {
        snprintf(m.err, sizeof(m.err), "the confirm watchdog cannot open '%s': %s", journal,
                 strerror(errno));
    } else {
        close(fd);
        ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (ino >= 0 &&
            inotify_add_watch(ino, journal, IN_MODIFY | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF) <
                0) {
            close(ino);
            ino = -1; /* fall back on rereading it every second */
        }
        m.ok = 1;
    }
    if (write(ready, &m, sizeof(m)) != (ssize_t)sizeof(m) || !m.ok)
        _exit(1);
    close(ready);
    if (watch(journal, &was, ino, job->within_ms) == 0)
        revert_now(job, journal);
    _exit(0);
}

/* Forks the watchdog (twice, with setsid in between, so init adopts it) and waits for its
 * word that it runs. */
static int spawn(const struct tune_confirm_job *job, const char *journal, long *pid, char *err,
                 size_t errlen)
{
    struct ready_msg m = {0};
    int p[2], status;
    pid_t c;

    if (pipe2(p, O_CLOEXEC)) {
        snprintf(err, errlen, "cannot start the confirm watchdog (pipe: %s): nothing was changed",
                 strerror(errno));
        return -1;
    }
    fflush(NULL);
    c = fork();
    if (c == 0) {
        close(p[0]);
        if (setsid() < 0)
            _exit(1);
        pid_t g = fork();
        if (g == 0)
            watchdog(job, journal, p[1]);
        _exit(g < 0 ? 1 : 0);
    }
    close(p[1]);
    if (c > 0)
        while (waitpid(c, &status, 0) < 0 && errno == EINTR)
            ;
    struct pollfd pfd = {.fd = p[0], .events = POLLIN};
    if (c > 0 && poll(&pfd, 1, READY_WAIT_MS) > 0 && read(p[0], &m, sizeof(m)) == sizeof(m) && m.ok)
        *pid = m.pid;
    else
        snprintf(err, errlen, "cannot start the confirm watchdog (%s): nothing was changed",
                 c < 0 ? strerror(errno) : (m.err[0] ? m.err : "it did not report back"));
    close(p[0]);
    return c > 0 && m.ok ? 0 : -1;
}

int tune_confirm_start(void *arg, const char *journal, struct tune_journal_writer *w, char *err,
                       size_t errlen)
{
    struct tune_confirm_job *job = arg;
    char boot[40];
    long pid = 0;

    if (spawn(job, journal, &pid, err, errlen))
        return -1;
    tune_confirm_boot_id(boot, sizeof(boot));
    if (tune_journal_confirm_pending(w, job->within_ms, pid, boot, err, errlen)) {
        kill((pid_t)pid, SIGKILL); /* nothing was changed: no watchdog needed */
        return -1;
    }
    job->pid = pid;
    return 0;
}

/* ---- pending journals and --confirm ------------------------------------------------------ */

/* Calls fn on each journal of dir that loads, newest first, until it returns non-zero. */
static int each_journal(const char *dir, int (*fn)(const char *, struct tune_journal *, void *),
                        void *arg, char *err, size_t errlen)
{
    char **names, path[PATH_MAX];
    size_t n;
    int rc = 0;

    if (tune_journal_list(dir, &names, &n, err, errlen))
        return -1;
    for (size_t i = n; i-- > 0 && !rc;) {
        struct tune_journal j;
        char e[PATH_MAX + 256];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        if (tune_journal_load(path, &j, e, sizeof(e)))
            continue;
        rc = fn(path, &j, arg);
        tune_journal_free(&j);
    }
    tune_journal_names_free(names, n);
    return rc;
}

struct pending_ctx {
    char boot[40];
    struct hostwr_place here; /* journals applied elsewhere are left alone */
    int here_child;
    unsigned elsewhere; /* journals of another namespace or host that wait */
    char *out, *why;
    size_t len, whylen;
    unsigned found;
    /* --confirm */
    char *err;
    size_t errlen;
    bool failed, too_late;
};

static bool waiting(const struct tune_journal *j, const char *boot)
{
    /* from another boot: the watchdog died with it, and so did the runtime values */
    return j->confirm && !j->confirmed && !j->reverts && !strcmp(j->boot_id, boot);
}

static void when(double unix_s, char *buf, size_t len)
{
    time_t t = (time_t)unix_s;
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* j waits for its confirmation and was applied here; one applied elsewhere is counted */
static bool waiting_here(struct pending_ctx *pc, const struct tune_journal *j)
{
    char why[2 * PATH_MAX];

    if (!waiting(j, pc->boot))
        return false;
    if (tune_place_here(j, &pc->here, pc->here_child, why, sizeof(why)) == 1)
        return true;
    pc->elsewhere++;
    return false;
}

static void pending_init(struct pending_ctx *pc, const char *sysroot)
{
    sysroot = sysroot && *sysroot ? sysroot : NULL;
    tune_confirm_boot_id(pc->boot, sizeof(pc->boot));
    hostwr_place(sysroot, &pc->here);
    pc->here_child = hostwr_netns_child(sysroot);
}

static int find_pending(const char *path, struct tune_journal *j, void *arg)
{
    struct pending_ctx *pc = arg;
    char at[32];

    if (!waiting_here(pc, j))
        return 0;
    when(tune_confirm_deadline(j), at, sizeof(at));
    snprintf(pc->out, pc->len, "%s", path);
    snprintf(pc->why, pc->whylen,
             "journal '%s' waits for its confirmation: its watchdog (pid %ld) reverts it at %s "
             "unless 'netrig tune --confirm' runs first%s",
             path, j->watchdog_pid, at,
             kill((pid_t)j->watchdog_pid, 0) && errno == ESRCH
                 ? " (but that watchdog is gone: confirm or revert it by hand)"
                 : "");
    return 1;
}

int tune_confirm_pending(const char *dir, const char *sysroot, char *out, size_t len, char *why,
                         size_t whylen, char *err, size_t errlen)
{
    struct pending_ctx pc = {.out = out, .why = why, .len = len, .whylen = whylen};

    pending_init(&pc, sysroot);
    return each_journal(dir, find_pending, &pc, err, errlen);
}

static int confirm_one(const char *path, struct tune_journal *j, void *arg)
{
    struct pending_ctx *pc = arg;
    struct tune_journal_writer w = {.fd = -1};
    char at[32];

    if (waiting_here(pc, j)) {
        if (tune_journal_reopen(path, &w, pc->err, pc->errlen) ||
            tune_journal_confirm_done(&w, pc->err, pc->errlen)) {
            tune_journal_close(&w);
            pc->failed = true;
            return 1;
        }
        tune_journal_close(&w);
        if (!pc->found++)
            snprintf(pc->out, pc->len, "%s", path);
        return 0;
    }
    if (pc->found || pc->why[0] || !j->confirm ||
        tune_place_here(j, &pc->here, pc->here_child, at, 0) != 1)
        return 0;
    /* the newest journal that asked for a confirmation says why there is nothing to do */
    if (j->confirmed)
        snprintf(pc->why, pc->whylen,
                 "nothing waits for a confirmation: '%s' was confirmed "
                 "already (%s)",
                 path, j->confirmed_at);
    else if (j->reverts && !strcmp(j->reverted_by, "watchdog") && (pc->too_late = true))
        snprintf(pc->why, pc->whylen,
                 "too late: '%s' was reverted by its watchdog at %s because no confirmation "
                 "came in time; apply it again",
                 path, j->reverted_at[0] ? j->reverted_at : "its deadline");
    else if (j->reverts)
        snprintf(pc->why, pc->whylen, "nothing waits for a confirmation: '%s' was reverted", path);
    else {
        when(tune_confirm_deadline(j), at, sizeof(at));
        snprintf(pc->why, pc->whylen,
                 "nothing waits for a confirmation: '%s' was applied in another boot (due %s)",
                 path, at);
    }
    return 0;
}

int tune_confirm_run(const char *dir, const char *sysroot, char *out, size_t len, char *why,
                     size_t whylen, bool *too_late, char *err, size_t errlen)
{
    struct pending_ctx pc = {
        .out = out, .why = why, .len = len, .whylen = whylen, .err = err, .errlen = errlen};
    bool exists;
    int lock;

    why[0] = '\0';
    *too_late = false;
    if (tune_state_check_dir(dir, false, &exists, err, errlen))
        return -1;
    if (!exists) { /* nothing was ever applied there: do not create it */
        snprintf(why, whylen, "nothing waits for a confirmation: there is no '%s'", dir);
        return 0;
    }
    if ((lock = tune_journal_lock_wait(dir, 2000, err, errlen)) < 0)
        return -1;
    pending_init(&pc, sysroot);
    if (each_journal(dir, confirm_one, &pc, err, errlen) < 0 || pc.failed) {
        tune_journal_unlock(lock);
        return -1;
    }
    tune_journal_unlock(lock);
    *too_late = !pc.found && pc.too_late;
    if (!pc.found && !why[0] && pc.elsewhere) {
        char place[192];
        tune_place_text(&pc.here, place, sizeof(place));
        snprintf(why, whylen,
                 "nothing waits for a confirmation in this %s: %u journal(s) in '%s' that wait "
                 "were applied in another network namespace or host and are left alone; "
                 "confirm them there",
                 place, pc.elsewhere, dir);
    } else if (!pc.found && !why[0]) {
        snprintf(why, whylen,
                 "nothing waits for a confirmation in '%s' (netrig tune --apply "
                 "--confirm-within TIME asks for one)",
                 dir);
    }
    return (int)pc.found;
}
