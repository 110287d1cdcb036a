/* hostfs: every read of /proc and /sys goes through here, relative to a sysroot,
 * so tests can point the program at fixture trees. sysroot NULL or "" means "/". */
#ifndef NETRIG_HOSTFS_H
#define NETRIG_HOSTFS_H

#include <stddef.h>
#include <stdint.h>

/* Reads at most len-1 bytes of sysroot/path into buf, NUL-terminated; trailing newline
 * stripped. Returns the length read, or a negative errno. */
long hostfs_read(const char *sysroot, const char *path, char *buf, size_t len);

/* Reads one unsigned integer (decimal) from a file. */
int hostfs_read_u64(const char *sysroot, const char *path, uint64_t *out);

/* Builds sysroot/path into out. Returns -ENAMETOOLONG when it does not fit. */
int hostfs_path(const char *sysroot, const char *path, char *out, size_t len);

#endif
