/* hostsnap: a snapshot of the settings of one host that shape network performance — kernel,
 * sysctls, CPU governor and frequency limits, irqbalance, conntrack, and per interface its MTU,
 * queue length, qdisc, offloads, rings, channels, coalescing, RPS/XPS masks, IRQ affinity and
 * NUMA node — as key/value text in natural key order. hostsnap_take reads a host through
 * hostfs and nicinfo, so tests use fixture trees; the JSON form travels between hosts (a
 * daemon sends its own); the diff lists what changed between two runs. */
#ifndef NETRIG_HOSTSNAP_H
#define NETRIG_HOSTSNAP_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Stored as "host.snapshot". 1 (the key absent): kernel, sysctls, CPU model and governor,
 * basic interface files. 2: also NIC settings, queues, IRQs, CPU frequency, irqbalance,
 * conntrack, the boot command line. */
#define HOSTSNAP_VERSION    2
#define HOSTSNAP_MAX        16384 /* entries in one snapshot */
#define HOSTSNAP_KEY_MAX    128   /* bytes of a key, its NUL included */
#define HOSTSNAP_VAL_MAX    1024  /* bytes of a value, its NUL included */
#define HOSTSNAP_MAX_IFACES 64    /* interfaces read, in name order */
#define HOSTSNAP_MAX_QUEUES 256   /* queues read per direction and interface */

struct hostsnap_entry {
    char *key;   /* e.g. "net.ipv4.tcp_rmem", "iface.eth0.rx-0.rps_cpus" */
    char *value; /* whitespace runs collapsed to one space, non-printable bytes as '?' */
};

struct hostsnap {
    uint32_t n, cap;
    struct hostsnap_entry *e; /* sorted by hostsnap_keycmp */
};

/* An empty snapshot (NULL when out of memory); hostsnap_free releases it. */
struct hostsnap *hostsnap_new(void);
void hostsnap_free(struct hostsnap *hs);
void hostsnap_clear(struct hostsnap *hs);

/* Reads this host's settings (sysroot NULL = "/", else a tree as `netrig audit --record`
 * writes it). Unreadable settings are left out. In a network namespace the interfaces and
 * net.* sysctls are the namespace's own. */
void hostsnap_take(const char *sysroot, struct hostsnap *hs);
/* The sysctls a snapshot records (dotted names), for tests. */
const char *const *hostsnap_sysctls(size_t *n);

/* Adds or replaces key; the value is normalized and cut at HOSTSNAP_VAL_MAX - 1 bytes.
 * Returns 0, -EINVAL for a key that is empty, too long or holds a byte outside '!'..'~',
 * -ENOSPC past HOSTSNAP_MAX entries, -ENOMEM. */
int hostsnap_set(struct hostsnap *hs, const char *key, const char *value);
/* The value of key, or NULL. */
const char *hostsnap_get(const struct hostsnap *hs, const char *key);
/* Natural order: runs of digits compare by value ("rx-2" before "rx-10"). */
int hostsnap_keycmp(const char *a, const char *b);
/* HOSTSNAP_VERSION of the netrig that took it: 1 when it has no "host.snapshot" key. */
int hostsnap_version(const struct hostsnap *hs);
/* A value observed when the snapshot was taken rather than a setting (the current CPU
 * frequency): shown, never reported as a difference. */
bool hostsnap_is_observation(const char *key);

/* Calls fn for every key whose value differs between a and b, in key order, observations
 * aside; a value absent from one side is passed as NULL. Returns the number of differences
 * (fn may be NULL). */
size_t hostsnap_diff(const struct hostsnap *a, const struct hostsnap *b,
                     void (*fn)(const char *key, const char *va, const char *vb, void *arg),
                     void *arg);

/* {"key": "value", ...} in key order; NULL when out of memory. */
cJSON *hostsnap_to_json(const struct hostsnap *hs);
/* The bytes of hostsnap_to_json's unformatted text (cJSON_PrintUnformatted), its NUL aside,
 * counted without building it: what the snapshot costs on the wire. */
size_t hostsnap_json_size(const struct hostsnap *hs);
/* Reads a snapshot another host sent: an object of at most HOSTSNAP_MAX string members, each
 * key valid for hostsnap_set and each value shorter than HOSTSNAP_VAL_MAX. Anything else is
 * refused whole: -EINVAL (or -ENOMEM) with one line in err, and hs left empty. */
int hostsnap_from_json(const cJSON *obj, struct hostsnap *hs, char *err, size_t errlen);

#endif
