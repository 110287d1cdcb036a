/* hostfs: bounded, sysroot-relative reads of kernel text files. */
#include "hostfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int hostfs_path(const char *sysroot, const char *path, char *out, size_t len)
{
    int n = snprintf(out, len, "%s%s", sysroot ? sysroot : "", path);

    if (n < 0 || (size_t)n >= len)
        return -ENAMETOOLONG;
    return 0;
}

long hostfs_read(const char *sysroot, const char *path, char *buf, size_t len)
{
    char full[4096];
    size_t got = 0;
    int fd, rc;

    if (len == 0)
        return -EINVAL;
    rc = hostfs_path(sysroot, path, full, sizeof(full));
    if (rc)
        return rc;
    fd = open(full, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    while (got < len - 1) {
        ssize_t n = read(fd, buf + got, len - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = -errno;
            close(fd);
            return rc;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    buf[got] = '\0';
    while (got > 0 && buf[got - 1] == '\n')
        buf[--got] = '\0';
    return (long)got;
}

int hostfs_read_u64(const char *sysroot, const char *path, uint64_t *out)
{
    char buf[64], *end;
    long n = hostfs_read(sysroot, path, buf, sizeof(buf));

    if (n < 0)
        return (int)n;
    if (n == 0 || buf[0] < '0' || buf[0] > '9')
        return -EINVAL;
    errno = 0;
    *out = strtoull(buf, &end, 10);
    if (errno || (*end && *end != '\n' && *end != ' '))
        return -EINVAL;
    return 0;
}

long hostfs_read_raw(const char *sysroot, const char *path, void *buf, size_t len)
{
    char full[4096];
    size_t got = 0;
    int fd, rc = hostfs_path(sysroot, path, full, sizeof(full));

    if (rc)
        return rc;
    fd = open(full, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    while (got < len) {
        ssize_t n = read(fd, (char *)buf + got, len - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = -errno;
            close(fd);
            return rc;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    return (long)got;
}

int hostfs_list(const char *sysroot, const char *dir, int (*fn)(const char *name, void *arg),
                void *arg)
{
    char full[4096];
    struct dirent *e;
    DIR *d;
    int rc = hostfs_path(sysroot, dir, full, sizeof(full));

    if (rc)
        return rc;
    d = opendir(full);
    if (!d)
        return -errno;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        rc = fn(e->d_name, arg);
        if (rc)
            break;
    }
    closedir(d);
    return rc;
}
