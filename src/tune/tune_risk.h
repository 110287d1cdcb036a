/* tune_risk: how much a change can hurt, what the operator calls it, and which changes an
 * --apply may make. Every change in a plan gets a class:
 *   safe        applied by --apply: sysctls (socket buffers, backlogs, congestion control and
 *               the rest: sockets and packets pick them up, nothing is reset), txqueuelen, RPS
 *               masks, IRQ affinity, the CPU governor, software offloads (gro, gso);
 *   disruptive  only with --allow-disruptive or when named with --only: MTU (and then only
 *               after a path-MTU probe toward --peer), NIC rings, channels, coalescing, pause
 *               frames and hardware offloads, which many drivers apply by resetting the link;
 *   manual      never run by netrig (BIOS, firmware, boot parameters, tc, services...).
 * Each change also gets an item name for --only: the sysctl's own name
 * ("net.ipv4.tcp_rmem"), or GROUP:TARGET ("mtu:eth0", "txqueuelen:eth0", "rps:eth0:rx-0",
 * "irq:217", "governor:cpu3", "ring:eth0", "coalesce:eth0", "channels:eth0", "pause:eth0",
 * "features:eth0"). A word of --only selects the items equal to it or starting with it and a
 * ':' ("mtu" = every MTU change, "rps:eth0" = every queue of eth0), and "sysctl" selects every
 * sysctl. */
#ifndef NETRIG_TUNE_RISK_H
#define NETRIG_TUNE_RISK_H

#include "tune_change.h"

#include <stdbool.h>
#include <stddef.h>

struct tune_select {
    bool allow_disruptive; /* --allow-disruptive */
    const char *only;      /* --only LIST (comma-separated items), NULL = no restriction */
    const char *peer;      /* --peer HOST: MTU changes may be applied after a probe */
};

/* "safe", "disruptive", "manual" */
const char *tune_risk_name(enum tune_risk r);

/* Sets c->risk, c->risk_why, c->item and c->mtu from its kind, path and value. */
void tune_risk_classify(struct tune_change *c);

/* Decides, for a plan about to be applied (or shown), which changes --apply leaves alone:
 * sets each change's held ("" = it will be applied). Returns 0, or -1 with err when --only
 * names something the plan does not have, or an MTU change without --peer (bad command line:
 * nothing is done). */
int tune_risk_select(struct tune_plan *plan, const struct tune_select *sel, char *err,
                     size_t errlen);

/* True when the --only word names change c. */
bool tune_risk_matches(const char *word, const struct tune_change *c);

#endif
