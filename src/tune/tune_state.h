/* tune_state: the trust checks on netrig tune's state directory, sshd StrictModes style.
 * --revert replays a journal as root, so a journal anyone else could have written must never
 * be read: the state directory must belong to root (or, under --sysroot without root, to the
 * user running netrig) and be writable by nobody else, and so must every directory above it
 * (a directory above may be world-writable only with the sticky bit, like /tmp, which stops
 * others from renaming what root put there). Journals and the lock are opened with
 * O_NOFOLLOW and must be plain files of that owner, writable by nobody else, with one link. */
#ifndef NETRIG_TUNE_STATE_H
#define NETRIG_TUNE_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* Checks dir and every directory above it. With create, missing directories are made (mode
 * 0700, owned by whoever runs netrig); without, a missing dir is fine (*exists false: there is
 * nothing in it to trust). dir may be relative (taken from the working directory). Returns 0,
 * or -1 with one line in err saying what is wrong and what to do. */
int tune_state_check_dir(const char *dir, bool create, bool *exists, char *err, size_t errlen);

/* Checks an open state file (journal or lock) against the same rules: a regular file owned by
 * root or this user, not writable by group or others, one link. what names it in err
 * ("journal", "lock"). Returns 0 or -1 with err. */
int tune_state_check_fd(int fd, const char *path, const char *what, char *err, size_t errlen);

/* Opens path with O_NOFOLLOW (flags as for open) and checks it with tune_state_check_fd.
 * Returns the fd, or -1 with err (a symbolic link is named as such). */
int tune_state_open(const char *path, int flags, mode_t mode, const char *what, char *err,
                    size_t errlen);

/* The directory part of path ("." when it has none) into out. 0, or -1 when too long. */
int tune_state_dirname(const char *path, char *out, size_t len);

#endif
