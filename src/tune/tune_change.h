/* tune_change: the data a tune passes from module to module: one change netrig would make,
 * with its risk class, a fix it only shows, and the plan that holds both (built by tune_plan,
 * classified and selected by tune_risk, journaled by tune_journal, applied by tune_apply).
 * Types only, so the modules that read a plan need not depend on the one that builds it. */
#ifndef NETRIG_TUNE_CHANGE_H
#define NETRIG_TUNE_CHANGE_H

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

#endif
