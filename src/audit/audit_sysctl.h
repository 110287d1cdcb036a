/* audit_sysctl: the kernel TCP and socket-buffer checks (net.ipv4.tcp_*, net.core.*mem*,
 * somaxconn, port range, conntrack), judged against the audit's target. */
#ifndef NETRIG_AUDIT_SYSCTL_H
#define NETRIG_AUDIT_SYSCTL_H

#include "audit.h"

/* Kernel TCP group: kernel release, congestion control, MTU probing, metrics cache, idle
 * restart, notsent_lowat, window scaling / timestamps / SACK, obsolete knobs, somaxconn,
 * local port range, conntrack. */
void audit_sysctl_tcp(struct audit_ctx *ctx);

/* Socket buffers group: tcp_rmem/tcp_wmem max, rmem_max/wmem_max, optmem_max, tcp_mem. */
void audit_sysctl_buffers(struct audit_ctx *ctx);

/* The buffer sizes it recommends come from audit_bufcap.h: they cover the BDP with the
 * kernel's skb overhead counted. */

#endif
