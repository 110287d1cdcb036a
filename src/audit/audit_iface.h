/* audit_iface: which interfaces netrig audit looks at (physical and up, or the one named
 * with -I) and the per-interface NIC checks: link speed, MTU, txqueuelen, driver and
 * firmware, offloads, rings, coalescing, channels and pause. */
#ifndef NETRIG_AUDIT_IFACE_H
#define NETRIG_AUDIT_IFACE_H

#include "audit.h"
#include "nicinfo.h"

struct audit_iface {
    char name[IF_NAMESIZE];
    bool audited;
    char skip_reason[200];
    int64_t speed_mbps; /* -1 = unknown */
    uint64_t type;      /* ARPHRD_*: 1 Ethernet, 32 InfiniBand, 772 loopback */
    uint64_t mtu, txqlen;
    bool have_mtu, have_txqlen;
    char pci[32];        /* PCI address (DDDD:BB:DD.F) of the NIC, "" if none */
    char dev_driver[32]; /* DRIVER= from device/uevent */
    uint32_t rx_queues;  /* queues/rx-N directories, 0 if none */
    struct nicinfo nic;
};

/* Lists sysroot/sys/class/net and decides which interfaces to audit. With only set, that
 * interface alone (audited even when down); -ENODEV with err filled when it does not exist.
 * Interfaces not audited are reported as skipped findings with their reason. */
int audit_iface_discover(struct audit_ctx *ctx, const char *only, struct audit_iface *out,
                         size_t max, size_t *n, char *err, size_t errlen);

/* Queries the NIC (ethtool answers) for an audited interface and records them. */
void audit_iface_query(struct audit_ctx *ctx, struct audit_iface *ifc);

/* The NIC group's checks for one audited interface. */
void audit_iface_checks(struct audit_ctx *ctx, struct audit_iface *ifc);

#endif
