/* audit_queue: the queueing group: default qdisc and whether fq exists in this kernel,
 * each interface's root qdisc, the backlog and NAPI budget against /proc/net/softnet_stat,
 * and busy polling. */
#ifndef NETRIG_AUDIT_QUEUE_H
#define NETRIG_AUDIT_QUEUE_H

#include "audit.h"

struct audit_iface;

/* qdisc.default, qdisc.fq_available, sysctl.netdev_max_backlog, sysctl.netdev_budget,
 * sysctl.busy_poll */
void audit_queue_host(struct audit_ctx *ctx);

/* qdisc.root for one audited interface */
void audit_queue_iface(struct audit_ctx *ctx, struct audit_iface *ifc);

/* Parses /proc/net/softnet_stat (hex columns, one row per CPU): sums of column 2 (dropped)
 * and 3 (time_squeeze). Returns the number of CPU rows, or -EINVAL. */
int audit_queue_parse_softnet(const char *text, uint64_t *dropped, uint64_t *squeezed);

/* Looks for "CONFIG_SYM=y|m" or "# CONFIG_SYM is not set" in kernel config text.
 * Returns 'y', 'm' or 'n' (not set or absent). */
char audit_queue_kconfig(const char *config, const char *sym);

#endif
