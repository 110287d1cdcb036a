/* tune_journal: fsync'd JSON-lines journal of every value `netrig tune --apply` changes. */
#define _GNU_SOURCE
#include "tune_journal.h"

#include "clock.h"
#include "hostwr.h"
#include "tune_state.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const state_names[] = {"pending", "applied", "refused", "unverified"};

const char *tune_journal_state_name(enum tune_journal_state st)
{
    return (unsigned)st < 4 ? state_names[st] : "?";
}

static void utc_now(char *buf, size_t len, double *unix_s)
{
    uint64_t ns = clock_real_ns();
    time_t sec = (time_t)(ns / 1000000000ULL);
    struct tm tm;

    gmtime_r(&sec, &tm);
    snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%06luZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             (unsigned long)(ns % 1000000000ULL / 1000));
    if (unix_s)
        *unix_s = (double)ns / 1e9;
}

/* ---- writing ----------------------------------------------------------------------------- */

/* Appends o (consumed) as one line with one write(2), then fsync. A short write is cut back
 * so the file never ends in half a line. */
static int append(struct tune_journal_writer *w, cJSON *o, char *err, size_t errlen)
{
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    size_t n;
    off_t at;
    ssize_t wr;
    int e = 0;

    cJSON_Delete(o);
    if (!text) {
        snprintf(err, errlen,
                 "out of memory writing the journal '%s': free some memory and "
                 "retry",
                 w->path);
        return -1;
    }
    n = strlen(text);
    text[n] = '\n'; /* cJSON's buffer has room: the NUL becomes the newline */
    at = lseek(w->fd, 0, SEEK_END);
    do {
        wr = write(w->fd, text, n + 1);
    } while (wr < 0 && errno == EINTR);
    if (wr != (ssize_t)(n + 1)) {
        e = wr < 0 ? errno : ENOSPC;
        int cut = at >= 0 ? ftruncate(w->fd, at) : 0; /* keep whole lines only */
        (void)cut;
    } else if (fsync(w->fd)) {
        e = errno;
    }
    free(text);
    if (e) {
        snprintf(err, errlen,
                 "cannot write the journal '%s': %s: nothing more is changed; "
                 "free space or fix the state directory, then run netrig tune --revert",
                 w->path, strerror(e));
        return -1;
    }
    return 0;
}

static cJSON *place_json(const char *sysroot)
{
    struct hostwr_place p;
    cJSON *o = cJSON_CreateObject();

    hostwr_place(sysroot && *sysroot ? sysroot : NULL, &p);
    cJSON_AddNumberToObject(o, "netns_inode", (double)p.netns_inode);
    if (p.netns_name[0])
        cJSON_AddStringToObject(o, "netns_name", p.netns_name);
    else
        cJSON_AddNullToObject(o, "netns_name");
    cJSON_AddStringToObject(o, "host", p.host);
    cJSON_AddStringToObject(o, "machine_id", p.machine_id);
    cJSON_AddStringToObject(o, "boot_id", p.boot_id);
    return o;
}

int tune_journal_create(const char *dir, const struct tune_journal_header *h,
                        struct tune_journal_writer *w, char *err, size_t errlen)
{
    char now[40], name[96];
    double unix_s;
    struct tm tm;
    time_t t;
    cJSON *o;
    int rc;

    w->fd = -1;
    if (tune_state_check_dir(dir, true, NULL, err, errlen))
        return -1;
    utc_now(now, sizeof(now), &unix_s);
    t = (time_t)unix_s;
    gmtime_r(&t, &tm);
    snprintf(name, sizeof(name), "tune-%04d%02d%02dT%02d%02d%02d.%06ldZ-%ld.jsonl",
             tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
             (long)((unix_s - (double)t) * 1e6) % 1000000, (long)getpid());
    snprintf(w->path, sizeof(w->path), "%s/%s", dir, name);
    w->fd = open(w->path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (w->fd < 0) {
        snprintf(err, errlen,
                 "cannot create the journal '%s': %s: nothing was changed; pass "
                 "--state-dir DIR with a writable directory",
                 w->path, strerror(errno));
        return -1;
    }
    o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "netrig_tune_journal", TUNE_JOURNAL_VERSION);
    cJSON_AddStringToObject(o, "created", now);
    cJSON_AddNumberToObject(o, "created_unix", unix_s);
    cJSON_AddNumberToObject(o, "pid", (double)getpid());
    cJSON_AddStringToObject(o, "target", h->target ? h->target : "");
    cJSON_AddStringToObject(o, "profile", h->profile ? h->profile : "");
    if (h->sysroot && *h->sysroot)
        cJSON_AddStringToObject(o, "sysroot", h->sysroot);
    else
        cJSON_AddNullToObject(o, "sysroot");
    cJSON_AddStringToObject(o, "netns", h->netns ? h->netns : "unknown");
    cJSON_AddNumberToObject(o, "planned", h->planned);
    cJSON_AddItemToObject(o, "place", place_json(h->sysroot));
    if (append(w, o, err, errlen)) {
        tune_journal_close(w);
        return -1;
    }
    rc = hostwr_sync_dir(NULL, dir);
    if (rc) {
        snprintf(err, errlen, "cannot sync the state directory '%s': %s: nothing was changed", dir,
                 strerror(-rc));
        tune_journal_close(w);
        return -1;
    }
    return 0;
}

int tune_journal_reopen(const char *path, struct tune_journal_writer *w, char *err, size_t errlen)
{
    snprintf(w->path, sizeof(w->path), "%s", path);
    w->fd = tune_state_open(path, O_WRONLY | O_APPEND, 0, "journal", err, errlen);
    return w->fd < 0 ? -1 : 0;
}

void tune_journal_close(struct tune_journal_writer *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
}

int tune_journal_change(struct tune_journal_writer *w, unsigned seq, const char *kind,
                        const char *name, const char *path, const char *old_value,
                        const char *new_value, char *err, size_t errlen)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "seq", seq);
    cJSON_AddStringToObject(o, "kind", kind);
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddStringToObject(o, "path", path);
    if (old_value)
        cJSON_AddStringToObject(o, "old", old_value);
    else
        cJSON_AddNullToObject(o, "old");
    cJSON_AddStringToObject(o, "new", new_value);
    return append(w, o, err, errlen);
}

int tune_journal_result(struct tune_journal_writer *w, unsigned seq, enum tune_journal_state st,
                        const char *now, const char *error, char *err, size_t errlen)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "seq", seq);
    cJSON_AddStringToObject(o, "result", tune_journal_state_name(st));
    if (now)
        cJSON_AddStringToObject(o, "now", now);
    if (error && *error)
        cJSON_AddStringToObject(o, "error", error);
    return append(w, o, err, errlen);
}

int tune_journal_done(struct tune_journal_writer *w, unsigned applied, unsigned refused,
                      unsigned unverified, char *err, size_t errlen)
{
    cJSON *o = cJSON_CreateObject();

    char now[40];
    double unix_s;

    utc_now(now, sizeof(now), &unix_s);
    cJSON_AddTrueToObject(o, "done");
    cJSON_AddNumberToObject(o, "applied", applied);
    cJSON_AddNumberToObject(o, "refused", refused);
    cJSON_AddNumberToObject(o, "unverified", unverified);
    cJSON_AddStringToObject(o, "at", now);
    cJSON_AddNumberToObject(o, "at_unix", unix_s);
    return append(w, o, err, errlen);
}

int tune_journal_revert_start(struct tune_journal_writer *w, const char *by, char *err,
                              size_t errlen)
{
    char now[40];
    cJSON *o = cJSON_CreateObject();

    utc_now(now, sizeof(now), NULL);
    cJSON_AddStringToObject(o, "revert", "start");
    cJSON_AddStringToObject(o, "at", now);
    if (by)
        cJSON_AddStringToObject(o, "by", by);
    return append(w, o, err, errlen);
}

int tune_journal_confirm_pending(struct tune_journal_writer *w, unsigned within_ms, long pid,
                                 const char *boot_id, char *err, size_t errlen)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "confirm", "pending");
    cJSON_AddNumberToObject(o, "within_ms", within_ms);
    cJSON_AddNumberToObject(o, "watchdog_pid", (double)pid);
    cJSON_AddStringToObject(o, "boot_id", boot_id ? boot_id : "");
    return append(w, o, err, errlen);
}

int tune_journal_confirm_done(struct tune_journal_writer *w, char *err, size_t errlen)
{
    char now[40];
    cJSON *o = cJSON_CreateObject();

    utc_now(now, sizeof(now), NULL);
    cJSON_AddStringToObject(o, "confirm", "done");
    cJSON_AddStringToObject(o, "at", now);
    return append(w, o, err, errlen);
}

int tune_journal_revert_one(struct tune_journal_writer *w, unsigned seq, bool restored,
                            const char *error, char *err, size_t errlen)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "revert_seq", seq);
    cJSON_AddStringToObject(o, "result", restored ? "restored" : "failed");
    if (error && *error)
        cJSON_AddStringToObject(o, "error", error);
    return append(w, o, err, errlen);
}

int tune_journal_revert_done(struct tune_journal_writer *w, unsigned restored, unsigned failed,
                             char *err, size_t errlen)
{
    char now[40];
    cJSON *o = cJSON_CreateObject();

    utc_now(now, sizeof(now), NULL);
    cJSON_AddStringToObject(o, "revert", "done");
    cJSON_AddStringToObject(o, "at", now);
    cJSON_AddNumberToObject(o, "restored", restored);
    cJSON_AddNumberToObject(o, "failed", failed);
    return append(w, o, err, errlen);
}

/* ---- reading ----------------------------------------------------------------------------- */

struct load_ctx {
    struct tune_journal *j;
    unsigned line;
    size_t cap;
    char *err;
    size_t errlen;
};

static int bad(struct load_ctx *lc, const char *what)
{
    snprintf(lc->err, lc->errlen,
             "journal '%s' line %u %s: nothing was changed; repair or remove that line (the old "
             "values are on the lines before it) and run netrig tune --revert again",
             lc->j->path, lc->line, what);
    return -1;
}

static const char *get_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int get_uint(const cJSON *o, const char *key, unsigned *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 4294967295.0 ||
        v->valuedouble != floor(v->valuedouble))
        return -1;
    *out = (unsigned)v->valuedouble;
    return 0;
}

static int copy_field(char *dst, size_t len, const char *src)
{
    if (!src || strlen(src) >= len)
        return -1;
    memcpy(dst, src, strlen(src) + 1);
    return 0;
}

/* The header's place: absent in an older netrig's journal (place_known stays false). */
static int load_place(struct load_ctx *lc, const cJSON *o)
{
    struct hostwr_place *p = &lc->j->place;
    const cJSON *ino = cJSON_GetObjectItemCaseSensitive(o, "netns_inode");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "netns_name");

    if (!o)
        return 0;
    if (!cJSON_IsObject(o) || !cJSON_IsNumber(ino) || ino->valuedouble < 0 ||
        ino->valuedouble > 9007199254740992.0 || ino->valuedouble != floor(ino->valuedouble) ||
        !(cJSON_IsNull(name) ||
          (cJSON_IsString(name) &&
           !copy_field(p->netns_name, sizeof(p->netns_name), name->valuestring))) ||
        copy_field(p->host, sizeof(p->host), get_str(o, "host")) ||
        copy_field(p->machine_id, sizeof(p->machine_id), get_str(o, "machine_id")) ||
        copy_field(p->boot_id, sizeof(p->boot_id), get_str(o, "boot_id")))
        return bad(lc, "is a header with a malformed place");
    p->netns_inode = (unsigned long long)ino->valuedouble;
    lc->j->place_known = true;
    return 0;
}

static int load_header(struct load_ctx *lc, const cJSON *o)
{
    struct tune_journal *j = lc->j;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "netrig_tune_journal");
    const cJSON *root = cJSON_GetObjectItemCaseSensitive(o, "sysroot");
    const cJSON *cu = cJSON_GetObjectItemCaseSensitive(o, "created_unix");
    unsigned pid;

    if (!cJSON_IsNumber(v))
        return bad(lc, "is not a netrig tune journal header");
    if (v->valuedouble != TUNE_JOURNAL_VERSION)
        return bad(lc, "has a journal version this netrig does not know (a newer netrig wrote "
                       "it: revert with that one)");
    if (copy_field(j->created, sizeof(j->created), get_str(o, "created")) ||
        copy_field(j->target, sizeof(j->target), get_str(o, "target")) ||
        copy_field(j->profile, sizeof(j->profile), get_str(o, "profile")) ||
        copy_field(j->netns, sizeof(j->netns), get_str(o, "netns")) ||
        get_uint(o, "planned", &j->planned) || get_uint(o, "pid", &pid) || !cJSON_IsNumber(cu) ||
        !(cJSON_IsNull(root) || cJSON_IsString(root)))
        return bad(lc, "is a header with a missing or malformed field");
    if (cJSON_IsString(root) && copy_field(j->sysroot, sizeof(j->sysroot), root->valuestring))
        return bad(lc, "names a sysroot that is too long");
    j->pid = (long)pid;
    j->created_unix = cu->valuedouble;
    return load_place(lc, cJSON_GetObjectItemCaseSensitive(o, "place"));
}

/* Only the places netrig changes: a tampered journal cannot make --revert write elsewhere. */
static bool allowed_path(const char *kind, const char *path)
{
    char ifname[IF_NAMESIZE], group[16];
    int used = 0;

    if (!strcmp(kind, "ethtool"))
        return sscanf(path, "ethtool:%15[A-Za-z0-9_.@-]%n", ifname, &used) == 1 &&
               sscanf(path + used, ":%15[a-z]", group) == 1 &&
               (!strcmp(group, "ring") || !strcmp(group, "coalesce") ||
                !strcmp(group, "channels") || !strcmp(group, "pause") ||
                !strcmp(group, "features")) &&
               strlen(path) == (size_t)used + 1 + strlen(group);
    if (path[0] != '/' || strstr(path, "/../") || strstr(path, "/./") || strstr(path, "//"))
        return false;
    if (!strcmp(kind, "sysctl"))
        return !strncmp(path, "/proc/sys/", 10);
    if (!strcmp(kind, "sysfs"))
        return !strncmp(path, "/sys/", 5) || !strncmp(path, "/proc/irq/", 10);
    if (!strcmp(kind, "file")) /* the only files netrig ever writes */
        return !strcmp(path, TUNE_SYSCTL_CONF) || !strcmp(path, TUNE_UDEV_RULES);
    return false;
}

static int load_change(struct load_ctx *lc, const cJSON *o)
{
    struct tune_journal *j = lc->j;
    struct tune_journal_entry e;
    const cJSON *old = cJSON_GetObjectItemCaseSensitive(o, "old");
    const char *nv = get_str(o, "new");

    memset(&e, 0, sizeof(e));
    if (get_uint(o, "seq", &e.seq) || copy_field(e.kind, sizeof(e.kind), get_str(o, "kind")) ||
        copy_field(e.name, sizeof(e.name), get_str(o, "name")) ||
        copy_field(e.path, sizeof(e.path), get_str(o, "path")) || !nv ||
        !(cJSON_IsString(old) || (cJSON_IsNull(old) && !strcmp(e.kind, "file"))))
        return bad(lc, "is a change record with a missing or malformed field");
    if (e.seq != j->n + 1)
        return bad(lc, "is a change record out of order (its seq does not follow the one before)");
    if (!allowed_path(e.kind, e.path))
        return bad(lc, "names a path netrig never changes");
    if (j->n == lc->cap) {
        size_t cap = lc->cap ? lc->cap * 2 : 16;
        void *p = realloc(j->e, cap * sizeof(*j->e));
        if (!p)
            return bad(lc, "could not be read: out of memory");
        j->e = p;
        lc->cap = cap;
    }
    e.new_value = strdup(nv);
    e.old_value = cJSON_IsString(old) ? strdup(old->valuestring) : NULL;
    if (!e.new_value || (cJSON_IsString(old) && !e.old_value)) {
        free(e.new_value);
        free(e.old_value);
        return bad(lc, "could not be read: out of memory");
    }
    j->e[j->n++] = e;
    return 0;
}

static struct tune_journal_entry *entry(struct tune_journal *j, unsigned seq)
{
    return seq >= 1 && seq <= j->n ? &j->e[seq - 1] : NULL;
}

static int load_result(struct load_ctx *lc, const cJSON *o)
{
    const char *res = get_str(o, "result"), *error = get_str(o, "error");
    struct tune_journal_entry *e;
    unsigned seq;
    int st = -1;

    if (get_uint(o, "seq", &seq) || !res)
        return bad(lc, "is a result record with a missing or malformed field");
    for (int i = TUNE_J_APPLIED; i <= TUNE_J_UNVERIFIED; i++)
        if (!strcmp(res, state_names[i]))
            st = i;
    if (st < 0)
        return bad(lc, "is a result record with an unknown result");
    e = entry(lc->j, seq);
    if (!e || e->state != TUNE_J_PENDING)
        return bad(lc, "is a result for a change that is not recorded before it, or a second one");
    e->state = (enum tune_journal_state)st;
    snprintf(e->error, sizeof(e->error), "%s", error ? error : "");
    return 0;
}

static int load_revert(struct load_ctx *lc, const cJSON *o)
{
    struct tune_journal *j = lc->j;
    const char *what = get_str(o, "revert"), *res = get_str(o, "result");
    struct tune_journal_entry *e;
    unsigned seq;

    if (what && !strcmp(what, "start") && get_str(o, "at")) {
        const char *by = get_str(o, "by");
        j->reverts++;
        j->reverted = false;
        snprintf(j->reverted_by, sizeof(j->reverted_by), "%s",
                 by && !strcmp(by, "watchdog") ? "watchdog" : "");
        return 0;
    }
    if (what && !strcmp(what, "done") && get_str(o, "at") && j->reverts &&
        !get_uint(o, "failed", &j->revert_failed)) {
        j->reverted = true;
        snprintf(j->reverted_at, sizeof(j->reverted_at), "%s", get_str(o, "at"));
        return 0;
    }
    if (what || get_uint(o, "revert_seq", &seq) || !res || !j->reverts ||
        (strcmp(res, "restored") && strcmp(res, "failed")))
        return bad(lc, "is a malformed revert record");
    if (!(e = entry(j, seq)))
        return bad(lc, "is a revert record for a change the journal does not hold");
    e->revert = strcmp(res, "restored") ? TUNE_R_FAILED : TUNE_R_RESTORED;
    return 0;
}

static int load_done(struct load_ctx *lc, const cJSON *o)
{
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(o, "at_unix");

    if (lc->j->done)
        return bad(lc, "is a second end-of-apply record");
    lc->j->done = true;
    lc->j->done_unix = cJSON_IsNumber(at) && at->valuedouble > 0 ? at->valuedouble : 0;
    return 0;
}

static int load_confirm(struct load_ctx *lc, const cJSON *o)
{
    struct tune_journal *j = lc->j;
    const char *what = get_str(o, "confirm"), *boot = get_str(o, "boot_id");
    unsigned within, pid;

    if (what && !strcmp(what, "pending") && !j->confirm && !j->n &&
        !get_uint(o, "within_ms", &within) && !get_uint(o, "watchdog_pid", &pid) && boot &&
        !copy_field(j->boot_id, sizeof(j->boot_id), boot)) {
        j->confirm = true;
        j->confirm_within_ms = within;
        j->watchdog_pid = (long)pid;
        return 0;
    }
    if (what && !strcmp(what, "done") && j->confirm && !j->confirmed &&
        !copy_field(j->confirmed_at, sizeof(j->confirmed_at), get_str(o, "at"))) {
        j->confirmed = true;
        return 0;
    }
    return bad(lc, "is a malformed or misplaced confirmation record");
}

static int load_line(struct load_ctx *lc, const char *text)
{
    cJSON *o = cJSON_ParseWithOpts(text, NULL, 1);
    int rc;

    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return bad(lc, "is not a JSON object (damaged)");
    }
    if (lc->line == 1)
        rc = load_header(lc, o);
    else if (cJSON_GetObjectItemCaseSensitive(o, "netrig_tune_journal"))
        rc = bad(lc, "is a second header");
    else if (cJSON_GetObjectItemCaseSensitive(o, "kind"))
        rc = load_change(lc, o);
    else if (cJSON_GetObjectItemCaseSensitive(o, "seq"))
        rc = load_result(lc, o);
    else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "done")))
        rc = load_done(lc, o);
    else if (cJSON_GetObjectItemCaseSensitive(o, "confirm"))
        rc = load_confirm(lc, o);
    else if (cJSON_GetObjectItemCaseSensitive(o, "revert") ||
             cJSON_GetObjectItemCaseSensitive(o, "revert_seq"))
        rc = load_revert(lc, o);
    else
        rc = bad(lc, "is a record netrig does not know");
    cJSON_Delete(o);
    return rc;
}

/* Reads all of fd (at most max bytes, then one more to tell it is larger) into a new buffer
 * sized from the file, growing it if the file grew. Returns the count (> max: too large), or
 * -1 (errno set). */
static ssize_t read_all(int fd, size_t max, char **out)
{
    struct stat st;
    size_t cap, n = 0;
    char *buf = NULL;

    if (fstat(fd, &st))
        return -1;
    cap = (size_t)st.st_size < max ? (size_t)st.st_size + 4096 : max + 1;
    for (;;) {
        char *p = realloc(buf, cap + 1);
        if (!p) {
            free(buf);
            errno = ENOMEM;
            return -1;
        }
        buf = p;
        while (n < cap) {
            ssize_t r = read(fd, buf + n, cap - n);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0) {
                free(buf);
                return -1;
            }
            if (r == 0)
                break;
            n += (size_t)r;
        }
        if (n < cap || cap > max)
            break;
        cap = cap * 2 > max + 1 ? max + 1 : cap * 2; /* it grew while being read */
    }
    buf[n] = '\0';
    *out = buf;
    return (ssize_t)n;
}

/* Reads the whole journal (O_NOFOLLOW, checked like every state file) into a new string. */
static int read_journal(const char *path, char **out, char *err, size_t errlen)
{
    int fd = tune_state_open(path, O_RDONLY, 0, "journal", err, errlen);
    char *buf = NULL;
    ssize_t n;

    *out = NULL;
    if (fd < 0)
        return -1;
    n = read_all(fd, TUNE_JOURNAL_MAX_BYTES, &buf);
    close(fd);
    if (n < 0)
        snprintf(err, errlen, "cannot read journal '%s': %s", path, strerror(errno));
    else if ((size_t)n > TUNE_JOURNAL_MAX_BYTES)
        snprintf(err, errlen,
                 "journal '%s' is larger than %u MiB: not a netrig tune journal; nothing was "
                 "changed",
                 path, TUNE_JOURNAL_MAX_BYTES >> 20);
    else if (strlen(buf) != (size_t)n)
        snprintf(err, errlen,
                 "journal '%s' is not a text file: not a netrig tune journal; nothing was "
                 "changed",
                 path);
    else {
        *out = buf;
        return 0;
    }
    free(buf);
    return -1;
}

int tune_journal_load(const char *path, struct tune_journal *j, char *err, size_t errlen)
{
    struct load_ctx lc = {.j = j, .err = err, .errlen = errlen};
    char *buf, *p;
    int rc = 0;

    memset(j, 0, sizeof(*j));
    snprintf(j->path, sizeof(j->path), "%s", path);
    if (read_journal(path, &buf, err, errlen))
        return -1;
    if (!*buf) {
        snprintf(err, errlen,
                 "journal '%s' is empty: its apply stopped before writing anything, "
                 "so nothing was changed; remove the file",
                 path);
        free(buf);
        return -1;
    }
    for (p = buf; *p && !rc;) {
        char *nl = strchr(p, '\n');
        lc.line++;
        if (!nl) {
            rc = bad(&lc, "is truncated (no newline at its end: the apply was cut off while "
                          "writing it)");
            break;
        }
        *nl = '\0';
        rc = load_line(&lc, p);
        p = nl + 1;
    }
    free(buf);
    if (rc)
        tune_journal_free(j);
    return rc;
}

void tune_journal_free(struct tune_journal *j)
{
    for (size_t i = 0; i < j->n; i++) {
        free(j->e[i].old_value);
        free(j->e[i].new_value);
    }
    free(j->e);
    j->e = NULL;
    j->n = 0;
}

/* ---- the state directory ----------------------------------------------------------------- */

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool journal_name(const char *name)
{
    size_t n = strlen(name);

    return !strncmp(name, "tune-", 5) && n > 11 && !strcmp(name + n - 6, ".jsonl");
}

int tune_journal_list(const char *dir, char ***names, size_t *n, char *err, size_t errlen)
{
    DIR *d;
    struct dirent *de;
    size_t cap = 0;
    bool exists;

    *names = NULL;
    *n = 0;
    if (tune_state_check_dir(dir, false, &exists, err, errlen))
        return -1;
    if (!exists)
        return 0;
    d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "cannot read the state directory '%s': %s", dir, strerror(errno));
        return -1;
    }
    while ((de = readdir(d)) != NULL) {
        if (!journal_name(de->d_name))
            continue;
        if (*n == cap) {
            char **p = realloc(*names, (cap ? cap * 2 : 16) * sizeof(*p));
            if (!p)
                goto oom;
            *names = p;
            cap = cap ? cap * 2 : 16;
        }
        if (!((*names)[*n] = strdup(de->d_name)))
            goto oom;
        (*n)++;
    }
    closedir(d);
    if (*n) /* qsort of NULL, even of nothing, is undefined */
        qsort(*names, *n, sizeof(**names), cmp_names);
    return 0;
oom:
    closedir(d);
    tune_journal_names_free(*names, *n);
    *names = NULL;
    *n = 0;
    snprintf(err, errlen, "out of memory listing '%s'", dir);
    return -1;
}

void tune_journal_names_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int tune_journal_lock_wait(const char *dir, unsigned wait_ms, char *err, size_t errlen)
{
    char path[PATH_MAX];
    int fd;

    if (tune_state_check_dir(dir, true, NULL, err, errlen))
        return -1;
    snprintf(path, sizeof(path), "%s/.lock", dir);
    fd = tune_state_open(path, O_RDWR | O_CREAT, 0600, "lock", err, errlen);
    if (fd < 0)
        return -1;
    for (unsigned waited = 0;; waited += 50) {
        if (!flock(fd, LOCK_EX | LOCK_NB))
            return fd;
        if (errno != EWOULDBLOCK && errno != EINTR) {
            snprintf(err, errlen, "cannot lock '%s': %s", path, strerror(errno));
            break;
        }
        if (waited >= wait_ms) {
            snprintf(err, errlen,
                     "another netrig tune is applying or reverting (it holds '%s'): "
                     "wait for it to finish",
                     path);
            break;
        }
        struct timespec ts = {.tv_nsec = 50 * 1000000L};
        nanosleep(&ts, NULL);
    }
    close(fd);
    return -1;
}

int tune_journal_lock(const char *dir, char *err, size_t errlen)
{
    return tune_journal_lock_wait(dir, 0, err, errlen);
}

void tune_journal_unlock(int fd)
{
    if (fd >= 0)
        close(fd);
}
