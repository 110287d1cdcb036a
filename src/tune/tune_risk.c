/* tune_risk: each change's class and item name, and which of them an --apply makes. */
#define _GNU_SOURCE
#include "tune_risk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tune_risk_name(enum tune_risk r)
{
    return r == TUNE_RISK_SAFE ? "safe" : (r == TUNE_RISK_DISRUPTIVE ? "disruptive" : "manual");
}

static void set(struct tune_change *c, enum tune_risk r, const char *why)
{
    c->risk = r;
    snprintf(c->risk_why, sizeof(c->risk_why), "%s", why);
}

static void classify_sysctl(struct tune_change *c)
{
    const char *n = c->name;

    snprintf(c->item, sizeof(c->item), "%s", n);
    if (strstr(n, "mem"))
        set(c, TUNE_RISK_SAFE,
            "a socket-buffer limit: sockets grow into it as they need; "
            "nothing is reset");
    else if (strstr(n, "congestion_control"))
        set(c, TUNE_RISK_SAFE, "new connections use it, open ones keep theirs; nothing is reset");
    else if (strstr(n, "backlog") || strstr(n, "somaxconn") || strstr(n, "budget"))
        set(c, TUNE_RISK_SAFE, "a queue or budget size: traffic keeps flowing while it changes");
    else if (strstr(n, "default_qdisc"))
        set(c, TUNE_RISK_SAFE,
            "the qdisc of interfaces set up from now on; running ones keep "
            "theirs");
    else
        set(c, TUNE_RISK_SAFE,
            "a kernel setting sockets and packets pick up as they come; no "
            "interface is reset");
}

static void classify_sysfs(struct tune_change *c)
{
    char ifname[IF_NAMESIZE + 1], attr[32];
    unsigned q, n;
    int used = 0;

    if (sscanf(c->path, "/sys/class/net/%16[^/]/%31[a-z_]%n", ifname, attr, &used) == 2 &&
        !c->path[used] && !strcmp(attr, "mtu")) {
        snprintf(c->item, sizeof(c->item), "mtu:%s", ifname);
        c->mtu = true;
        set(c, TUNE_RISK_DISRUPTIVE,
            "many drivers reset the link to change it, and a path that does not carry the new "
            "size drops the big packets (a path-MTU black hole)");
    } else if (used && !c->path[used] && !strcmp(attr, "tx_queue_len")) {
        snprintf(c->item, sizeof(c->item), "txqueuelen:%s", ifname);
        set(c, TUNE_RISK_SAFE, "the length of the interface's transmit queue: nothing is reset");
    } else if (sscanf(c->path, "/sys/class/net/%16[^/]/queues/rx-%u/rps_cpus%n", ifname, &q,
                      &used) == 2 &&
               !c->path[used]) {
        snprintf(c->item, sizeof(c->item), "rps:%s:rx-%u", ifname, q);
        set(c, TUNE_RISK_SAFE, "which CPUs take received packets in software: nothing is reset");
    } else if (sscanf(c->path, "/proc/irq/%u/smp_affinity_list%n", &n, &used) == 1 &&
               !c->path[used]) {
        snprintf(c->item, sizeof(c->item), "irq:%u", n);
        set(c, TUNE_RISK_SAFE, "which CPU takes the interrupt: nothing is reset");
    } else if (sscanf(c->path, "/sys/devices/system/cpu/cpu%u/cpufreq/scaling_governor%n", &n,
                      &used) == 1 &&
               !c->path[used]) {
        snprintf(c->item, sizeof(c->item), "governor:cpu%u", n);
        set(c, TUNE_RISK_SAFE, "the CPU's frequency policy: the network is not touched");
    } else {
        snprintf(c->item, sizeof(c->item), "%s", c->path);
        set(c, TUNE_RISK_DISRUPTIVE, "a device setting netrig cannot vouch for");
    }
}

/* gro and gso are the stack's own: switching them never touches the NIC. */
static bool software_features(const char *value)
{
    static const char *const soft[] = {"gro", "gso", "generic-receive-offload",
                                       "generic-segmentation-offload"};
    char copy[TUNE_VALUE_LEN], *save = NULL;
    bool key = true, any = false;

    snprintf(copy, sizeof(copy), "%s", value);
    for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save), key = !key) {
        bool ok = false;
        if (!key)
            continue;
        for (size_t i = 0; i < sizeof(soft) / sizeof(soft[0]); i++)
            ok = ok || !strcmp(w, soft[i]);
        if (!ok)
            return false;
        any = true;
    }
    return any;
}

static void classify_ethtool(struct tune_change *c)
{
    char ifname[IF_NAMESIZE + 1] = "", group[16] = "";
    static const struct {
        const char *group, *why;
    } whys[] = {
        {"ring", "drivers such as mlx5, ixgbe and i40e reset the link to resize their rings"},
        {"channels", "the driver rebuilds its queues, which resets the link on most NICs"},
        {"coalesce", "some drivers (ixgbe, mlx5 for CQE modes) restart their queues to change "
                     "interrupt moderation"},
        {"pause", "changing flow control restarts autonegotiation: the link goes down for a "
                  "moment"},
        {"features", "the driver reprograms the NIC for hardware offloads (lro, rxhash, ntuple, "
                     "vlan, checksums, tso), resetting the link on many drivers"},
    };

    sscanf(c->path, "ethtool:%16[^:]:%15s", ifname, group);
    snprintf(c->item, sizeof(c->item), "%s:%s", group, ifname);
    if (!strcmp(group, "features") && software_features(c->new_value)) {
        set(c, TUNE_RISK_SAFE,
            "software offloads: the stack switches them without touching "
            "the NIC");
        return;
    }
    set(c, TUNE_RISK_DISRUPTIVE, "a NIC driver setting that may reset the link");
    for (size_t i = 0; i < sizeof(whys) / sizeof(whys[0]); i++)
        if (!strcmp(group, whys[i].group))
            set(c, TUNE_RISK_DISRUPTIVE, whys[i].why);
}

void tune_risk_classify(struct tune_change *c)
{
    c->mtu = false;
    if (c->kind == TUNE_SYSCTL)
        classify_sysctl(c);
    else if (c->kind == TUNE_SYSFS)
        classify_sysfs(c);
    else
        classify_ethtool(c);
}

/* ---- selection --------------------------------------------------------------------------- */

bool tune_risk_matches(const char *word, const struct tune_change *c)
{
    size_t n = strlen(word);

    if (!n)
        return false;
    if (!strcmp(word, "sysctl"))
        return c->kind == TUNE_SYSCTL;
    return !strcmp(word, c->item) || (!strncmp(c->item, word, n) && c->item[n] == ':') ||
           !strcmp(word, c->name);
}

/* Calls fn for each word of a comma-separated list (blanks around a word dropped, an empty
 * word passed as ""); stops at the first non-zero. */
static int each_word(const char *list, int (*fn)(const char *, void *), void *arg)
{
    char word[TUNE_NAME_LEN + 1];
    int rc = 0;

    for (const char *p = list; !rc;) {
        size_t n = strcspn(p, ",");
        const char *w = p;
        while (n && *w == ' ')
            w++, n--;
        while (n && w[n - 1] == ' ')
            n--;
        snprintf(word, sizeof(word), "%.*s", (int)(n < TUNE_NAME_LEN ? n : TUNE_NAME_LEN), w);
        rc = fn(word, arg);
        p += strcspn(p, ",");
        if (!*p++)
            break;
    }
    return rc;
}

struct check_ctx {
    const struct tune_plan *plan;
    const struct tune_select *sel;
    const struct tune_change *c; /* for named() */
    char *err;
    size_t errlen;
};

static void list_items(const struct tune_plan *plan, char *out, size_t len)
{
    out[0] = '\0';
    for (size_t i = 0; i < plan->nchanges && strlen(out) + 40 < len; i++) {
        const char *item = plan->changes[i].item;
        bool seen = false;
        for (size_t k = 0; k < i && !seen; k++)
            seen = !strcmp(plan->changes[k].item, item);
        if (!seen)
            snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? ", " : "", item);
    }
}

static int check_word(const char *w, void *arg)
{
    struct check_ctx *cc = arg;
    const struct tune_plan *plan = cc->plan;
    char items[512];
    size_t hits = 0;

    if (!*w) {
        snprintf(cc->err, cc->errlen,
                 "--only '%s' has an empty item: separate items with one "
                 "comma",
                 cc->sel->only);
        return -1;
    }
    for (size_t i = 0; i < plan->nchanges; i++) {
        const struct tune_change *c = &plan->changes[i];
        if (!tune_risk_matches(w, c))
            continue;
        hits++;
        if (c->mtu && !c->blocked[0] && !cc->sel->peer) {
            snprintf(cc->err, cc->errlen,
                     "--only %s: an MTU change is applied only after a path-MTU probe shows the "
                     "whole path carries %s-byte packets: add --peer HOST (a host past that "
                     "path that answers ping)",
                     w, c->new_value);
            return -1;
        }
    }
    if (hits)
        return 0;
    list_items(plan, items, sizeof(items));
    snprintf(cc->err, cc->errlen, "--only %s names no change in this plan: %s%s", w,
             items[0] ? "its items are " : "the plan has no changes", items[0] ? items : "");
    return -1;
}

static int match_word(const char *w, void *arg)
{
    const struct check_ctx *cc = arg;

    return tune_risk_matches(w, cc->c);
}

static void hold(struct tune_change *c, const struct tune_select *sel, bool named)
{
    if (sel->only && !named)
        snprintf(c->held, sizeof(c->held), "not named in --only %s", sel->only);
    else if (c->mtu && !sel->peer)
        snprintf(c->held, sizeof(c->held),
                 "advice only: an MTU change is applied only after a path-MTU probe toward "
                 "--peer HOST shows the whole path carries %s-byte packets (then with "
                 "--allow-disruptive or --only %s)",
                 c->new_value, c->item);
    else if (c->risk == TUNE_RISK_DISRUPTIVE && !sel->allow_disruptive && !named)
        snprintf(c->held, sizeof(c->held),
                 "disruptive: apply it with --allow-disruptive or --only %s", c->item);
}

int tune_risk_select(struct tune_plan *plan, const struct tune_select *sel, char *err,
                     size_t errlen)
{
    struct check_ctx cc = {.plan = plan, .sel = sel, .err = err, .errlen = errlen};

    if (sel->only) {
        if (strlen(sel->only) >= 1024 || !sel->only[strspn(sel->only, ", ")]) {
            snprintf(err, errlen,
                     "--only '%s' names nothing: give items such as mtu:eth0 or "
                     "net.ipv4.tcp_rmem, separated by commas",
                     sel->only);
            return -1;
        }
        if (each_word(sel->only, check_word, &cc))
            return -1;
    }
    for (size_t i = 0; i < plan->nchanges; i++) {
        struct tune_change *c = &plan->changes[i];
        bool named = false;
        c->held[0] = '\0';
        cc.c = c;
        if (sel->only)
            named = each_word(sel->only, match_word, &cc) != 0;
        if (!c->blocked[0] || (sel->only && !named)) /* what --only leaves out is no failure */
            hold(c, sel, named);
    }
    return 0;
}
