/* audit_cpu: the CPU group: frequency governor, current clock, deep C-states, SMT and the
 * IOMMU mode, from /sys/devices/system/cpu, /proc/cpuinfo, /proc/cmdline and
 * /sys/class/iommu. */
#ifndef NETRIG_AUDIT_CPU_H
#define NETRIG_AUDIT_CPU_H

#include "audit.h"

/* cpu.governor, cpu.frequency, cpu.cstates, cpu.smt, cpu.iommu */
void audit_cpu_host(struct audit_ctx *ctx);

/* The highest "cpu MHz" in /proc/cpuinfo text; -EINVAL when there is none or one is
 * garbage. */
int audit_cpu_parse_cpuinfo_mhz(const char *text, double *mhz);

#endif
