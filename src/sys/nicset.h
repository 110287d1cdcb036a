/* nicset: NIC driver settings read and changed through the kernel's ethtool ioctls
 * (ETHTOOL_G* / ETHTOOL_S*: rings, coalescing, channels, pause, features) — the only place
 * netrig changes them. A value is text in the ethtool command's own words, key then value:
 * "rx 4096 tx 4096" (ring), "adaptive-rx off rx-usecs 8 rx-frames 128" (coalesce),
 * "combined 8" (channels), "rx on tx on" (pause), "lro on gro on" (features: ethtool -K short
 * names or the kernel's feature names). Live host only: there is no sysroot form. */
#ifndef NETRIG_NICSET_H
#define NETRIG_NICSET_H

#include <stddef.h>

enum nicset_group { NICSET_RING, NICSET_COALESCE, NICSET_CHANNELS, NICSET_PAUSE, NICSET_FEATURES };

/* "ring", "coalesce", "channels", "pause", "features" */
const char *nicset_group_name(enum nicset_group g);
/* From the ethtool option letter: 'G', 'C', 'L', 'A', 'K'. Returns -1 for any other. */
int nicset_group_from_option(char opt);
/* From the name nicset_group_name gives. Returns -1 for any other. */
int nicset_group_from_name(const char *name);

/* Checks a value's keys and values without touching a NIC: 0 or -EINVAL. */
int nicset_check(enum nicset_group g, const char *value);

/* Reads the current values of the keys that appear in `like` (a value of the same group),
 * in the same order, into out: nicset_get("eth0", NICSET_RING, "rx 8192 tx 8192", ...) gives
 * "rx 1024 tx 1024". Returns 0 or a negative errno (EOPNOTSUPP: the driver does not say;
 * ENODEV: no such interface; EINVAL: a key the group does not have). */
int nicset_get(const char *ifname, enum nicset_group g, const char *like, char *out, size_t len);

/* Sets the keys in value, leaving the group's other settings as they are (read, change,
 * write). Returns 0 or a negative errno (EOPNOTSUPP, EINVAL: the driver refuses the value,
 * EPERM: not root, EBUSY). */
int nicset_set(const char *ifname, enum nicset_group g, const char *value);

#endif
