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

/* Reads up to len bytes of sysroot/path exactly as stored (binary-safe: nothing stripped, no
 * NUL added). Returns the length read, or a negative errno. */
long hostfs_read_raw(const char *sysroot, const char *path, void *buf, size_t len);

/* Calls fn(name, arg) for each entry of the directory sysroot/dir except "." and "..", in
 * the order the kernel returns them. Stops at the first non-zero return of fn and returns it;
 * returns 0 after the last entry, or a negative errno when the directory cannot be opened. */
int hostfs_list(const char *sysroot, const char *dir, int (*fn)(const char *name, void *arg),
                void *arg);

#endif
