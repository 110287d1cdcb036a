/* cpulist: CPU lists as Linux writes them ("0-17,36-53") and as users pass them to -A. */
#ifndef NETRIG_CPULIST_H
#define NETRIG_CPULIST_H

#include <stddef.h>

#define CPULIST_MAX 1024 /* CPUs we can name in one list */

struct cpulist {
    int n;
    int cpu[CPULIST_MAX];
};

/* Parses "0-3,8,10-11" (spaces and a trailing newline tolerated). Returns 0 or -EINVAL. */
int cpulist_parse(const char *s, struct cpulist *out);

/* Formats back into the compact range form. */
void cpulist_format(const struct cpulist *cl, char *buf, size_t len);

/* CPUs local to the network interface that routes to host (a numeric address):
 * sysroot/sys/class/net/IF/device/local_cpulist. On failure (loopback, virtual NIC)
 * returns a negative errno and writes the reason into why. ifname receives the interface. */
int cpulist_for_peer(const char *sysroot, const char *peer_addr, struct cpulist *out, char *ifname,
                     size_t iflen, char *why, size_t whylen);

/* Resolves a -A / --server-cpus value: "" = no pinning (empty list), "auto" = the CPUs local
 * to the NIC that routes to peer (falls back to no pinning, with the reason in note), or an
 * explicit list, each CPU checked against the CPUs this process may use. */
int cpulist_resolve(const char *sysroot, const char *spec, const char *peer, struct cpulist *out,
                    char *err, size_t errlen, char *note, size_t notelen);

/* The CPUs this process may run on. */
int cpulist_online(struct cpulist *out);

#endif
