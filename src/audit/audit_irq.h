/* audit_irq: the NUMA and IRQs group: the NIC's NUMA node and local CPUs, where its queue
 * IRQs may run, RPS on its receive queues, and whether irqbalance is running. */
#ifndef NETRIG_AUDIT_IRQ_H
#define NETRIG_AUDIT_IRQ_H

#include "audit.h"

struct audit_iface;

/* nic.numa, nic.irq_affinity, nic.rps for one audited interface */
void audit_irq_iface(struct audit_ctx *ctx, struct audit_iface *ifc);

/* irq.irqbalance */
void audit_irq_host(struct audit_ctx *ctx);

/* Parses a CPU mask as the kernel writes it ("ff", "00000000,0000ffff"): the number of CPUs
 * set, or -EINVAL. */
int audit_irq_mask_count(const char *mask);

#endif
