/* hostwr: every change netrig makes to the host — a value written to /proc/sys or /sys, a
 * configuration file under /etc, the tune state directory — relative to a sysroot like hostfs,
 * so tests write into a copy of a fixture tree. sysroot NULL or "" means "/". Each call is one
 * bounded system-level step and returns 0 or a negative errno; nothing here prints. */
#ifndef NETRIG_HOSTWR_H
#define NETRIG_HOSTWR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Writes value plus a newline to sysroot/path in one write(2), the way `sysctl -w` and
 * `echo V > file` do (the file is not created; a regular file under a sysroot is truncated
 * first). Returns 0 or the errno the kernel gave (EACCES/EROFS: read-only here, EINVAL:
 * value refused, ENOENT: no such setting, EPERM: not allowed here). */
int hostwr_write(const char *sysroot, const char *path, const char *value);

/* The permission bits of sysroot/path (stat), or a negative errno. */
int hostwr_mode(const char *sysroot, const char *path, mode_t *mode);

/* 1 when this process runs in a child network namespace (e.g. `ip netns exec`), 0 in the
 * host's, -1 when it cannot tell. Compares sysroot/proc/self/ns/net with pid 1's (or, when pid
 * 1 hides it, kthreadd's); failing that, a namespace whose /proc/sys/net/core has somaxconn
 * but not the global netdev_max_backlog is a child. */
int hostwr_netns_child(const char *sysroot);

/* Where netrig runs, so a record of changes names it: the network namespace (its inode and,
 * when `ip netns add` named it, its name under /run/netns), the host and the boot. */
struct hostwr_place {
    unsigned long long netns_inode; /* /proc/self/ns/net; 0 unknown */
    char netns_name[64];            /* the /run/netns entry bound to it; "" none */
    char host[72];                  /* /proc/sys/kernel/hostname; "" unknown */
    char machine_id[40];            /* /etc/machine-id; "" unknown */
    char boot_id[40];               /* /proc/sys/kernel/random/boot_id; "" unknown */
};

/* Fills p for this process under sysroot; fields that cannot be read stay 0 or "". */
void hostwr_place(const char *sysroot, struct hostwr_place *p);

/* mkdir -p sysroot/dir with mode for the directories it creates. */
int hostwr_mkdirs(const char *sysroot, const char *dir, mode_t mode);

/* Replaces sysroot/path with content atomically: a temporary file in the same directory,
 * fsync, rename, fsync of the directory. The directory must exist. */
int hostwr_replace(const char *sysroot, const char *path, const char *content, mode_t mode);

/* Removes the temporary files hostwr_replace leaves when it is killed between creating and
 * renaming one: "NAME.netrig-PID" next to sysroot/path, for any PID. Returns how many were
 * removed, or a negative errno when the directory cannot be read (absent: 0). */
int hostwr_remove_temps(const char *sysroot, const char *path);

/* Removes sysroot/path and fsyncs its directory; 0 also when it was already absent. */
int hostwr_remove(const char *sysroot, const char *path);

/* Reads the whole regular file sysroot/path (at most max bytes) into a new NUL-terminated
 * string. -ENOENT when absent, -EFBIG when larger than max. */
int hostwr_slurp(const char *sysroot, const char *path, size_t max, char **out);

/* fsync of the directory sysroot/dir (after creating or renaming a file in it). */
int hostwr_sync_dir(const char *sysroot, const char *dir);

#endif
