/* hostsnap: a snapshot of the host settings that shape network performance — kernel release,
 * key sysctls, CPU and interface settings — as sorted key/value text, read through hostfs so
 * tests can use fixture trees. Two snapshots can be diffed to say what changed between runs. */
#ifndef NETRIG_HOSTSNAP_H
#define NETRIG_HOSTSNAP_H

#include <stddef.h>
#include <stdint.h>

#define HOSTSNAP_MAX        320
#define HOSTSNAP_KEY_LEN    80
#define HOSTSNAP_VAL_LEN    160
#define HOSTSNAP_MAX_IFACES 32

struct hostsnap_entry {
    char key[HOSTSNAP_KEY_LEN];   /* e.g. "net.ipv4.tcp_rmem", "iface.eth0.mtu" */
    char value[HOSTSNAP_VAL_LEN]; /* whitespace runs collapsed to one space */
};

struct hostsnap {
    uint32_t n;
    struct hostsnap_entry e[HOSTSNAP_MAX]; /* sorted by key */
};

/* Reads this host's settings (sysroot NULL = "/"). Unreadable settings are left out. */
void hostsnap_take(const char *sysroot, struct hostsnap *hs);

void hostsnap_clear(struct hostsnap *hs);
/* Adds or replaces key; the value is normalized. Returns 0, or -ENOSPC when full or a key
 * is too long. */
int hostsnap_set(struct hostsnap *hs, const char *key, const char *value);
/* The value of key, or NULL. */
const char *hostsnap_get(const struct hostsnap *hs, const char *key);

/* Calls fn for every key whose value differs between a and b, in key order; a value absent
 * from one side is passed as NULL. Returns the number of differences (fn may be NULL). */
size_t hostsnap_diff(const struct hostsnap *a, const struct hostsnap *b,
                     void (*fn)(const char *key, const char *va, const char *vb, void *arg),
                     void *arg);

#endif
