/* tune_state: who may have written the state directory, its journals and its lock. */
#define _GNU_SOURCE
#include "tune_state.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool trusted_owner(uid_t uid) { return uid == 0 || uid == geteuid(); }

static const char *owner_words(void) { return geteuid() == 0 ? "root" : "root or you"; }

/* One directory on the way down (last: the state directory itself). */
static int check_one(const char *shown, const char *state, const struct stat *st, bool last,
                     char *err, size_t errlen)
{
    mode_t m = st->st_mode & 07777;

    if (!S_ISDIR(st->st_mode)) {
        snprintf(err, errlen, "'%s' is not a directory: pass --state-dir with a directory", shown);
        return -1;
    }
    if (!trusted_owner(st->st_uid)) {
        snprintf(err, errlen,
                 "%s '%s'%s%s belongs to uid %u, not %s: whoever owns it could plant a journal "
                 "that --revert replays as root; nothing was done; use a --state-dir that "
                 "only %s can change",
                 last ? "state directory" : "directory", shown, last ? "" : ", above ",
                 last ? "" : state, (unsigned)st->st_uid, owner_words(), owner_words());
        return -1;
    }
    if ((m & 022) && (last || !(m & S_ISVTX))) {
        snprintf(err, errlen,
                 "%s '%s'%s%s is writable by %s (mode %04o): anyone could plant a journal that "
                 "--revert replays as root; nothing was done; run chmod go-w '%s' or use "
                 "another --state-dir",
                 last ? "state directory" : "directory", shown, last ? "" : ", above ",
                 last ? "" : state, (m & 002) ? "everyone" : "its group", (unsigned)m, shown);
        return -1;
    }
    return 0;
}

/* The longest existing prefix of abs, resolved (symlinks, "..") into out, and the rest (the
 * part still to create) into rest. */
static int resolve(const char *abs, char *out, char *rest, size_t len)
{
    char head[PATH_MAX];
    size_t n = strlen(abs);

    if (n >= sizeof(head))
        return -ENAMETOOLONG;
    memcpy(head, abs, n + 1);
    for (;;) {
        if (realpath(head, out)) {
            snprintf(rest, len, "%s", abs + strlen(head));
            return 0;
        }
        if (errno != ENOENT)
            return -errno;
        char *slash = strrchr(head, '/');
        if (!slash || slash == head) {
            snprintf(out, len, "/");
            snprintf(rest, len, "%s", abs);
            return 0;
        }
        *slash = '\0';
    }
}

/* Walks path from "/" down, opening each component without following links (it was resolved:
 * a link now means it changed under us), creating missing ones when asked. */
static int walk(const char *path, const char *shown, bool create, bool *exists, char *err,
                size_t errlen)
{
    char copy[PATH_MAX], sofar[PATH_MAX] = "";
    char *save = NULL, *comp;
    struct stat st;
    int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), rc = 0;

    *exists = true;
    snprintf(copy, sizeof(copy), "%s", path);
    if (fd < 0 || fstat(fd, &st) || check_one("/", shown, &st, !strcmp(path, "/"), err, errlen))
        rc = -1;
    for (comp = strtok_r(copy, "/", &save); !rc && comp; comp = strtok_r(NULL, "/", &save)) {
        bool last = !save || !*save;
        int next;
        snprintf(sofar + strlen(sofar), sizeof(sofar) - strlen(sofar), "/%s", comp);
        if (!strcmp(comp, "..") || !strcmp(comp, ".")) {
            snprintf(err, errlen,
                     "--state-dir '%s' has '%s' after a directory that does not "
                     "exist yet: give a plain path",
                     shown, comp);
            rc = -1;
            break;
        }
        next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 && errno == ENOENT && !create) {
            *exists = false;
            break;
        }
        if (next < 0 && errno == ENOENT && (!mkdirat(fd, comp, 0700) || errno == EEXIST))
            next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0) {
            snprintf(err, errlen,
                     errno == ELOOP || errno == ENOTDIR
                         ? "'%s' changed while netrig checked it (it is a symbolic link or not a "
                           "directory now): nothing was done"
                         : "cannot open or create the state directory '%s': %s: pass "
                           "--state-dir DIR with a directory root can write",
                     sofar, strerror(errno));
            rc = -1;
            break;
        }
        close(fd);
        fd = next;
        if (fstat(fd, &st) || check_one(sofar, shown, &st, last, err, errlen))
            rc = -1;
    }
    if (fd >= 0)
        close(fd);
    return rc;
}

int tune_state_check_dir(const char *dir, bool create, bool *exists, char *err, size_t errlen)
{
    char abs[PATH_MAX], real[PATH_MAX], rest[PATH_MAX], full[2 * PATH_MAX];
    bool dummy;
    int rc;

    exists = exists ? exists : &dummy;
    if (!dir || !*dir) {
        snprintf(err, errlen, "--state-dir is empty: give a directory");
        return -1;
    }
    if (dir[0] != '/') {
        if (!getcwd(abs, sizeof(abs) - 1)) {
            snprintf(err, errlen, "cannot tell the working directory for --state-dir '%s': %s", dir,
                     strerror(errno));
            return -1;
        }
        snprintf(abs + strlen(abs), sizeof(abs) - strlen(abs), "/%s", dir);
    } else {
        snprintf(abs, sizeof(abs), "%s", dir);
    }
    rc = resolve(abs, real, rest, sizeof(real));
    if (rc) {
        snprintf(err, errlen, "cannot resolve the state directory '%s': %s", dir, strerror(-rc));
        return -1;
    }
    snprintf(full, sizeof(full), "%s%s%s", real, strcmp(real, "/") && rest[0] != '/' ? "/" : "",
             rest);
    for (size_t n = strlen(full); n > 1 && full[n - 1] == '/'; n--)
        full[n - 1] = '\0';
    if (strlen(full) >= PATH_MAX) {
        snprintf(err, errlen, "the state directory '%s' is too long", dir);
        return -1;
    }
    return walk(full, dir, create, exists, err, errlen);
}

int tune_state_check_fd(int fd, const char *path, const char *what, char *err, size_t errlen)
{
    struct stat st;

    if (fstat(fd, &st)) {
        snprintf(err, errlen, "cannot check the %s '%s': %s", what, path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "the %s '%s' is not a plain file: nothing was done; remove it", what,
                 path);
        return -1;
    }
    if (!trusted_owner(st.st_uid) || (st.st_mode & 022) || st.st_nlink != 1) {
        snprintf(err, errlen,
                 "the %s '%s' %s: netrig did not write it that way and will not trust it; "
                 "nothing was done; remove it if you did not put it there",
                 what, path,
                 !trusted_owner(st.st_uid) ? "belongs to another user"
                 : (st.st_mode & 022)      ? "is writable by others"
                                           : "has more than one link");
        return -1;
    }
    return 0;
}

int tune_state_open(const char *path, int flags, mode_t mode, const char *what, char *err,
                    size_t errlen)
{
    int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode);

    if (fd < 0) {
        if (errno == ELOOP)
            snprintf(err, errlen,
                     "the %s '%s' is a symbolic link: netrig never makes one there; nothing "
                     "was done; remove it",
                     what, path);
        else if (errno == ENOENT)
            snprintf(err, errlen,
                     "%s '%s' does not exist: run 'netrig tune --list' to see the "
                     "journals",
                     what, path);
        else
            snprintf(err, errlen, "cannot open the %s '%s': %s", what, path, strerror(errno));
        return -1;
    }
    if (tune_state_check_fd(fd, path, what, err, errlen)) {
        close(fd);
        return -1;
    }
    return fd;
}

int tune_state_dirname(const char *path, char *out, size_t len)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;

    if (!slash) {
        snprintf(out, len, ".");
        return 0;
    }
    if (n == 0)
        n = 1; /* "/x" -> "/" */
    if (n >= len)
        return -1;
    memcpy(out, path, n);
    out[n] = '\0';
    return 0;
}
