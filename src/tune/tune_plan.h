/* tune_plan: what `netrig tune` would change. Built from the audit's findings at warn or bad:
 * each finding's fix command is parsed into structured changes (a value written to one file
 * under /proc/sys or /sys, with the value read there now), and whatever netrig does not apply
 * itself (ethtool, setpci, tc, systemctl, the kernel command line...) becomes a manual step
 * that is shown with its command and never run. */
#ifndef NETRIG_TUNE_PLAN_H
#define NETRIG_TUNE_PLAN_H

#include "audit.h"
#include "tune_change.h"

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>

/* One parsed step of a fix command. */
enum tune_step_kind { TUNE_STEP_SYSCTL, TUNE_STEP_SYSFS, TUNE_STEP_GOVERNOR, TUNE_STEP_ETHTOOL };
struct tune_step {
    enum tune_step_kind kind;
    char name[TUNE_NAME_LEN]; /* sysctl name, "IF txqueuelen", "governor" */
    char path[TUNE_PATH_LEN]; /* "" for TUNE_STEP_GOVERNOR (one file per CPU) */
    char value[TUNE_VALUE_LEN];
};

/* Parses a fix command: `sysctl -w a=b c="d e"`, `modprobe tcp_X && sysctl -w ...`,
 * `ip link set [dev] IF txqueuelen|mtu N`, `echo MASK > /sys/class/net/IF/queues/rx-N/rps_cpus`
 * (or /proc/irq/N/smp_affinity_list), `cpupower frequency-set -g GOV`,
 * `ethtool -G|-C|-L|-A|-K IF key value...`, joined by `&&`.
 * Fills up to max steps and returns how many; the parts it does not apply itself are copied
 * into manual ("" when none). Returns -1 when the command cannot be read at all. */
int tune_plan_parse_fix(const char *fix, struct tune_step *steps, size_t max, char *manual,
                        size_t manual_len);

/* Builds the plan from an audit that has run: every finding at warn or bad. Reads the current
 * values under the audit's sysroot. Returns 0, or -1 with err (out of memory). */
int tune_plan_build(const struct audit_ctx *ctx, struct tune_plan *plan, char *err, size_t errlen);
void tune_plan_free(struct tune_plan *plan);

/* True for sysctls with one value for the whole host (absent or read-only in a child network
 * namespace): net.core.rmem_max, netdev_max_backlog, default_qdisc, tcp_mem... */
bool tune_plan_is_global(const char *name);

/* One line saying plainly why a change cannot be made here, for err (a negative errno from
 * writing it, or -EACCES for a read-only file): "net.core.rmem_max is global and read-only
 * inside this network namespace: set it on the host". child as hostwr_netns_child. */
void tune_plan_explain(const char *sysroot, int child, const struct tune_change *c, int err,
                       char *buf, size_t len);

/* "sysctl", "sysfs", "ethtool" (the journal's kind) and back (-1 for another name). */
const char *tune_plan_kind_name(enum tune_kind k);
int tune_plan_kind_from_name(const char *name);

/* Reads the value of a change's path: a file under sysroot, or for TUNE_ETHTOOL the keys of
 * `like` from the NIC (no NIC under a sysroot: -EXDEV). Returns >= 0 or a negative errno. */
long tune_plan_read(const char *sysroot, enum tune_kind kind, const char *path, const char *like,
                    char *buf, size_t len);
/* Writes a value there (hostwr_write, or nicset_set). Returns 0 or a negative errno. */
int tune_plan_write(const char *sysroot, enum tune_kind kind, const char *path, const char *value);

/* Whitespace-insensitive comparison of two values ("4096\t87380" equals "4096 87380"), and
 * of hex masks with or without leading zeros and commas ("00,000000ff" equals "ff"). */
bool tune_plan_same_value(const char *a, const char *b);

/* A value for display: runs of whitespace become one space ("4096\t87380" -> "4096 87380"). */
void tune_plan_squash(const char *in, char *out, size_t len);

#endif
