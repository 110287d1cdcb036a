/* tune_plan: what `netrig tune` would change. Built from the audit's findings at warn or bad:
 * each finding's fix command is parsed into structured changes (a value written to one file
 * under /proc/sys or /sys, with the value read there now), and whatever netrig does not apply
 * itself (ethtool, setpci, tc, systemctl, the kernel command line...) becomes a manual step
 * that is shown with its command and never run. */
#ifndef NETRIG_TUNE_PLAN_H
#define NETRIG_TUNE_PLAN_H

#include "audit.h"

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>

#define TUNE_VALUE_LEN 256
#define TUNE_PATH_LEN  256
#define TUNE_NAME_LEN  96
#define TUNE_MAX_STEPS 8 /* parsed steps of one fix command */
#define TUNE_WHY_LEN   224

/* How much a change can hurt (tune_risk.c). */
enum tune_risk {
    TUNE_RISK_SAFE,       /* --apply makes it */
    TUNE_RISK_DISRUPTIVE, /* only with --allow-disruptive or --only: may reset the link */
    TUNE_RISK_MANUAL,     /* never run by netrig */
};

enum tune_kind {
    TUNE_SYSCTL,  /* /proc/sys/... written like `sysctl -w` */
    TUNE_SYSFS,   /* /sys/... or /proc/irq/... written like `echo V > file` */
    TUNE_ETHTOOL, /* "ethtool:IF:GROUP", through the ethtool ioctls (nicset), live host only */
};

/* One value netrig would write. */
struct tune_change {
    enum tune_kind kind;
    char name[TUNE_NAME_LEN];       /* "net.ipv4.tcp_rmem", "eth3 txqueuelen", "cpu2 governor" */
    char path[TUNE_PATH_LEN];       /* "/proc/sys/net/ipv4/tcp_rmem", "ethtool:eth0:ring" */
    char old_value[TUNE_VALUE_LEN]; /* as read now (newline stripped); "" when unreadable */
    bool old_known;
    char new_value[TUNE_VALUE_LEN];
    char finding[AUDIT_ID_LEN]; /* the audit finding it comes from */
    char iface[IF_NAMESIZE];
    enum audit_status status; /* warn or bad */
    char reason[AUDIT_TEXT_LEN];
    char command[AUDIT_TEXT_LEN]; /* the finding's fix */
    bool per_netns;
    /* non-empty: netrig cannot change it where it runs, and says why (global and read-only
     * inside this network namespace, host-wide setting seen from a namespace, absent...);
     * --apply skips it and reports it */
    char blocked[AUDIT_TEXT_LEN];
    enum tune_risk risk;
    char risk_why[TUNE_WHY_LEN]; /* why that class */
    char item[TUNE_NAME_LEN];    /* its name for --only: "net.ipv4.tcp_rmem", "mtu:eth0" */
    bool mtu;                    /* an MTU change: applied only after a path-MTU probe */
    /* non-empty: --apply leaves it alone, and why (disruptive, not named in --only, an MTU
     * change without a probe that says the path carries it); set by tune_risk_select and
     * the MTU preflight (tune_mtu.c) */
    char held[AUDIT_TEXT_LEN];
    char probe[AUDIT_TEXT_LEN]; /* MTU changes with --peer: what the path-MTU probe found */
};

/* A fix netrig shows but never runs. */
struct tune_manual {
    char finding[AUDIT_ID_LEN];
    char iface[IF_NAMESIZE];
    enum audit_status status;
    char reason[AUDIT_TEXT_LEN];
    char command[AUDIT_TEXT_LEN]; /* what to run by hand ("" when the audit gives none) */
    char why[160];                /* why netrig leaves it to you */
    bool is_command;              /* command is a shell command, not advice in words */
};

struct tune_plan {
    struct audit_target target;
    enum audit_profile profile;
    int netns_child; /* 1 in a child network namespace, 0 in the host's, -1 unknown */
    /* --peer: the host MTU changes are probed toward (tune_mtu.c); "" without --peer */
    char peer[256], peer_addr[64], peer_route[IF_NAMESIZE];
    unsigned peer_mtu; /* the path MTU the kernel knows toward it now */
    bool peer_probed;  /* some MTU change was probed */
    size_t nchanges, nmanual, cap_changes, cap_manual;
    struct tune_change *changes;
    struct tune_manual *manual;
};

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
