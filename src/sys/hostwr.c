/* hostwr: sysroot-relative writes to the host, each one bounded and synced where it matters. */
#define _GNU_SOURCE
#include "hostwr.h"

#include "hostfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int hostwr_write(const char *sysroot, const char *path, const char *value)
{
    char full[PATH_MAX], line[4096];
    int n, fd, rc = hostfs_path(sysroot, path, full, sizeof(full));
    ssize_t w;

    if (rc)
        return rc;
    n = snprintf(line, sizeof(line), "%s\n", value);
    if (n < 0 || (size_t)n >= sizeof(line))
        return -E2BIG;
    fd = open(full, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    do {
        w = write(fd, line, (size_t)n);
    } while (w < 0 && errno == EINTR);
    rc = w < 0 ? -errno : (w != n ? -EIO : 0);
    if (close(fd) && !rc && errno != EINTR)
        rc = -errno;
    return rc;
}

int hostwr_mode(const char *sysroot, const char *path, mode_t *mode)
{
    char full[PATH_MAX];
    struct stat st;
    int rc = hostfs_path(sysroot, path, full, sizeof(full));

    if (rc)
        return rc;
    if (stat(full, &st))
        return -errno;
    *mode = st.st_mode & 07777;
    return 0;
}

static int ns_link(const char *sysroot, const char *path, char *out, size_t len)
{
    char full[PATH_MAX];
    ssize_t n;
    int rc = hostfs_path(sysroot, path, full, sizeof(full));

    if (rc)
        return rc;
    n = readlink(full, out, len - 1);
    if (n < 0)
        return -errno;
    out[n] = '\0';
    return 0;
}

static bool exists(const char *sysroot, const char *path)
{
    char full[PATH_MAX];
    struct stat st;

    return !hostfs_path(sysroot, path, full, sizeof(full)) && stat(full, &st) == 0;
}

int hostwr_netns_child(const char *sysroot)
{
    char self[128], init[128], comm[32];

    if (!ns_link(sysroot, "/proc/self/ns/net", self, sizeof(self))) {
        if (!ns_link(sysroot, "/proc/1/ns/net", init, sizeof(init)))
            return strcmp(self, init) != 0;
        /* pid 1 may hide its links; kthreadd (pid 2) always lives in the host's namespace */
        if (hostfs_read(sysroot, "/proc/2/comm", comm, sizeof(comm)) > 0 &&
            !strcmp(comm, "kthreadd") && !ns_link(sysroot, "/proc/2/ns/net", init, sizeof(init)))
            return strcmp(self, init) != 0;
    }
    /* the kernel registers its global net.core sysctls in the host's namespace only */
    if (exists(sysroot, "/proc/sys/net/core/somaxconn"))
        return !exists(sysroot, "/proc/sys/net/core/netdev_max_backlog");
    return -1;
}

/* one line of sysroot/path, without its newline and surrounding blanks */
static void read_line(const char *sysroot, const char *path, char *out, size_t len)
{
    char buf[128];
    long n = hostfs_read(sysroot, path, buf, sizeof(buf));
    size_t b = 0;

    out[0] = '\0';
    if (n <= 0)
        return;
    buf[n < (long)sizeof(buf) ? n : (long)sizeof(buf) - 1] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    while (buf[b] == ' ' || buf[b] == '\t')
        b++;
    snprintf(out, len, "%s", buf + b);
}

/* the /run/netns entry that is a bind mount of the namespace at dev:ino */
static void netns_name(const char *sysroot, dev_t dev, ino_t ino, char *out, size_t len)
{
    char dir[PATH_MAX], full[PATH_MAX + 256];
    struct dirent *d;
    struct stat st;
    DIR *dh;

    if (hostfs_path(sysroot, "/run/netns", dir, sizeof(dir)) || !(dh = opendir(dir)))
        return;
    while ((d = readdir(dh))) {
        if (d->d_name[0] == '.')
            continue;
        snprintf(full, sizeof(full), "%s/%s", dir, d->d_name);
        if (!stat(full, &st) && st.st_dev == dev && st.st_ino == ino) {
            snprintf(out, len, "%s", d->d_name);
            break;
        }
    }
    closedir(dh);
}

void hostwr_place(const char *sysroot, struct hostwr_place *p)
{
    char link[128], full[PATH_MAX];
    struct stat st;

    memset(p, 0, sizeof(*p));
    if (!ns_link(sysroot, "/proc/self/ns/net", link, sizeof(link)))
        sscanf(link, "net:[%llu]", &p->netns_inode);
    if (!hostfs_path(sysroot, "/proc/self/ns/net", full, sizeof(full)) && !stat(full, &st) &&
        (!p->netns_inode || p->netns_inode == (unsigned long long)st.st_ino)) {
        p->netns_inode = (unsigned long long)st.st_ino;
        netns_name(sysroot, st.st_dev, st.st_ino, p->netns_name, sizeof(p->netns_name));
    }
    read_line(sysroot, "/proc/sys/kernel/hostname", p->host, sizeof(p->host));
    read_line(sysroot, "/etc/machine-id", p->machine_id, sizeof(p->machine_id));
    read_line(sysroot, "/proc/sys/kernel/random/boot_id", p->boot_id, sizeof(p->boot_id));
}

int hostwr_mkdirs(const char *sysroot, const char *dir, mode_t mode)
{
    char full[PATH_MAX];
    size_t skip = sysroot ? strlen(sysroot) : 0;
    int rc = hostfs_path(sysroot, dir, full, sizeof(full));

    if (rc)
        return rc;
    /* create each component after the sysroot, which must exist already */
    for (char *p = full + skip + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(full, mode) && errno != EEXIST)
            return -errno;
        *p = c;
        if (c == '\0')
            break;
    }
    struct stat st;
    if (stat(full, &st))
        return -errno;
    return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static int dir_of(const char *path, char *out, size_t len)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;

    if (n == 0) {
        snprintf(out, len, "/");
        return 0;
    }
    if (n >= len)
        return -ENAMETOOLONG;
    memcpy(out, path, n);
    out[n] = '\0';
    return 0;
}

int hostwr_sync_dir(const char *sysroot, const char *dir)
{
    char full[PATH_MAX];
    int fd, rc = hostfs_path(sysroot, dir, full, sizeof(full));

    if (rc)
        return rc;
    fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    rc = fsync(fd) ? -errno : 0;
    close(fd);
    return rc;
}

static int write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

int hostwr_replace(const char *sysroot, const char *path, const char *content, mode_t mode)
{
    char full[PATH_MAX], tmp[PATH_MAX + 32], dir[PATH_MAX];
    int fd, rc = hostfs_path(sysroot, path, full, sizeof(full));

    if (rc || (rc = dir_of(path, dir, sizeof(dir))))
        return rc;
    snprintf(tmp, sizeof(tmp), "%s.netrig-%ld", full, (long)getpid());
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0)
        return -errno;
    rc = write_all(fd, content, strlen(content));
    if (!rc && fchmod(fd, mode))
        rc = -errno;
    if (!rc && fsync(fd))
        rc = -errno;
    if (close(fd) && !rc)
        rc = -errno;
    if (!rc && rename(tmp, full))
        rc = -errno;
    if (rc) {
        unlink(tmp);
        return rc;
    }
    return hostwr_sync_dir(sysroot, dir);
}

int hostwr_remove_temps(const char *sysroot, const char *path)
{
    char full[PATH_MAX], dir[PATH_MAX];
    const char *base;
    size_t blen;
    struct dirent *de;
    DIR *d;
    int rc = hostfs_path(sysroot, path, full, sizeof(full)), removed = 0;

    if (rc || (rc = dir_of(full, dir, sizeof(dir))))
        return rc;
    base = strrchr(full, '/') ? strrchr(full, '/') + 1 : full;
    blen = strlen(base);
    if (!(d = opendir(dir)))
        return errno == ENOENT ? 0 : -errno;
    while ((de = readdir(d)) != NULL) {
        const char *tail = de->d_name + blen;
        if (strncmp(de->d_name, base, blen) || strncmp(tail, ".netrig-", 8) || !tail[8] ||
            strspn(tail + 8, "0123456789") != strlen(tail + 8))
            continue;
        if (!unlinkat(dirfd(d), de->d_name, 0))
            removed++;
    }
    closedir(d);
    if (removed)
        hostwr_sync_dir(NULL, dir);
    return removed;
}

int hostwr_remove(const char *sysroot, const char *path)
{
    char full[PATH_MAX], dir[PATH_MAX];
    int rc = hostfs_path(sysroot, path, full, sizeof(full));

    if (rc || (rc = dir_of(path, dir, sizeof(dir))))
        return rc;
    if (unlink(full)) {
        if (errno == ENOENT)
            return 0;
        return -errno;
    }
    return hostwr_sync_dir(sysroot, dir);
}

int hostwr_slurp(const char *sysroot, const char *path, size_t max, char **out)
{
    char full[PATH_MAX];
    struct stat st;
    char *buf;
    long n;
    int rc = hostfs_path(sysroot, path, full, sizeof(full));

    *out = NULL;
    if (rc)
        return rc;
    if (stat(full, &st))
        return -errno;
    if (!S_ISREG(st.st_mode))
        return -EINVAL;
    if ((size_t)st.st_size > max)
        return -EFBIG;
    buf = malloc(max + 1);
    if (!buf)
        return -ENOMEM;
    n = hostfs_read_raw(sysroot, path, buf, max + 1);
    if (n < 0 || (size_t)n > max) {
        free(buf);
        return n < 0 ? (int)n : -EFBIG;
    }
    buf[n] = '\0';
    if (strlen(buf) != (size_t)n) { /* a NUL byte inside: not a text file */
        free(buf);
        return -EINVAL;
    }
    *out = buf;
    return 0;
}
