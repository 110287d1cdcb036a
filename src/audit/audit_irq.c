/* audit_irq: NUMA locality, IRQ affinity, RPS and irqbalance, from sysfs and /proc/irq. */
#include "audit_irq.h"

#include "audit_iface.h"
#include "cpulist.h"
#include "hostfs.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IRQS       2048
#define INTERRUPTS_MAX (1 << 20)

/* --- NUMA --------------------------------------------------------------------------------- */

/* The NIC's local CPUs: 0, a negative errno when unreadable, -EINVAL (text holds the
 * start of it) when it does not parse. */
static int local_cpus(struct audit_ctx *ctx, const struct audit_iface *ifc, struct cpulist *cl,
                      char *text, size_t len)
{
    char path[160];
    long rc;

    cl->n = 0;
    text[0] = '\0';
    if (!ifc->pci[0])
        return -ENOENT;
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/local_cpulist", ifc->pci);
    rc = audit_read(ctx, path, text, len);
    if (rc < 0)
        return (int)rc;
    return cpulist_parse(text, cl) ? -EINVAL : 0;
}

static void check_numa(struct audit_ctx *ctx, struct audit_iface *ifc)
{
    static const char *const id = "nic.numa";
    char path[160], node[64], list[4096], fmt[256];
    struct cpulist *cl = malloc(sizeof(*cl));
    int64_t nn;
    long rc;
    struct audit_finding *f;

    if (!cl)
        return;
    if (!ifc->pci[0]) {
        f = audit_add(ctx, id, ifc->name, AUDIT_G_IRQ, AUDIT_SKIPPED);
        AUDIT_SET(f->reason, "%s has no PCI device: NUMA locality unknown", ifc->name);
        free(cl);
        return;
    }
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", ifc->pci);
    rc = audit_read(ctx, path, node, sizeof(node));
    if (rc < 0) {
        audit_skip_read(ctx, id, ifc->name, AUDIT_G_IRQ, path, rc);
    } else if (audit_parse_i64(node, &nn) || nn < -1 || nn > 4095) {
        audit_unreadable(ctx, id, ifc->name, AUDIT_G_IRQ, path, node, "a node number or -1");
    } else if ((rc = local_cpus(ctx, ifc, cl, list, sizeof(list))) != 0) {
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/local_cpulist", ifc->pci);
        if (rc == -EINVAL)
            audit_unreadable(ctx, id, ifc->name, AUDIT_G_IRQ, path, list, "a CPU list");
        else
            audit_skip_read(ctx, id, ifc->name, AUDIT_G_IRQ, path, rc);
    } else {
        cpulist_format(cl, fmt, sizeof(fmt));
        f = audit_add(ctx, id, ifc->name, AUDIT_G_IRQ, AUDIT_INFO);
        if (nn < 0)
            AUDIT_SET(f->current, "node unknown, CPUs %s", fmt);
        else
            AUDIT_SET(f->current, "node %lld, CPUs %s", (long long)nn, fmt);
        AUDIT_SET(f->reason,
                  "%srun the application and the queue IRQs on these CPUs "
                  "(netrig stream -A auto, taskset, numactl)",
                  nn < 0 ? "the firmware names no node (-1: one node, or not reported); " : "");
    }
    free(cl);
}

/* --- IRQ affinity ------------------------------------------------------------------------- */

struct irq_set {
    int irq[MAX_IRQS];
    int n;
};

static int collect_irq(const char *name, void *arg)
{
    struct irq_set *s = arg;
    char *end;
    long v = strtol(name, &end, 10);

    if (*end || !isdigit((unsigned char)name[0]) || v < 0 || v > 1000000 || s->n == MAX_IRQS)
        return 0;
    s->irq[s->n++] = (int)v;
    return 0;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* name occurs in text as its own token (not "eth3" inside "eth30") */
static bool has_token(const char *text, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = text; (p = strstr(p, name)) != NULL; p++) {
        char before = p == text ? ' ' : p[-1], after = p[n];
        if ((before == ' ' || before == ',' || before == ':' || before == '@') &&
            !isalnum((unsigned char)after))
            return true;
    }
    return false;
}

/* Fallback without msi_irqs: /proc/interrupts lines naming the interface or its PCI address. */
static void irqs_from_interrupts(struct audit_ctx *ctx, const struct audit_iface *ifc,
                                 struct irq_set *s)
{
    char *buf = malloc(INTERRUPTS_MAX), *save = NULL;

    if (!buf || audit_read(ctx, "/proc/interrupts", buf, INTERRUPTS_MAX) <= 0) {
        free(buf);
        return;
    }
    for (char *line = strtok_r(buf, "\n", &save); line && s->n < MAX_IRQS;
         line = strtok_r(NULL, "\n", &save)) {
        char *colon = strchr(line, ':'), *end;
        long v = strtol(line, &end, 10);
        if (!colon || end != colon || v < 0)
            continue;
        if (has_token(colon + 1, ifc->name) || (ifc->pci[0] && has_token(colon + 1, ifc->pci)))
            s->irq[s->n++] = (int)v;
    }
    free(buf);
}

struct affinity {
    int n, outside, unreadable_irq;
    bool single_same; /* every IRQ pinned to the same one CPU */
    int first_cpu;
    char bad_text[64];
    unsigned char used[CPULIST_MAX];
};

/* Reads where one IRQ may run: effective_affinity_list when the kernel has it. */
static int irq_cpus(struct audit_ctx *ctx, int irq, struct cpulist *cl, char *text, size_t len)
{
    char path[96];

    snprintf(path, sizeof(path), "/proc/irq/%d/effective_affinity_list", irq);
    if (audit_read(ctx, path, text, len) <= 0) {
        snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq);
        long rc = audit_read(ctx, path, text, len);
        if (rc < 0)
            return (int)rc;
    }
    return cpulist_parse(text, cl);
}

static bool in_list(const struct cpulist *cl, int cpu)
{
    for (int i = 0; i < cl->n; i++)
        if (cl->cpu[i] == cpu)
            return true;
    return false;
}

static int judge_irqs(struct audit_ctx *ctx, const struct irq_set *s, const struct cpulist *local,
                      struct affinity *a)
{
    struct cpulist *cl = malloc(sizeof(*cl));
    char text[4096];

    if (!cl)
        return -ENOMEM;
    memset(a, 0, sizeof(*a));
    a->single_same = true;
    a->first_cpu = -1;
    for (int i = 0; i < s->n; i++) {
        int rc = irq_cpus(ctx, s->irq[i], cl, text, sizeof(text));
        bool outside = false;
        if (rc == -ENOENT)
            continue; /* the IRQ went away */
        if (rc) {
            a->unreadable_irq = s->irq[i];
            snprintf(a->bad_text, sizeof(a->bad_text), "%.60s", text);
            free(cl);
            return -EINVAL;
        }
        a->n++;
        for (int c = 0; c < cl->n; c++) {
            if (cl->cpu[c] < CPULIST_MAX)
                a->used[cl->cpu[c]] = 1;
            if (local->n && !in_list(local, cl->cpu[c]))
                outside = true;
        }
        a->outside += outside;
        if (cl->n != 1 || (a->first_cpu >= 0 && a->first_cpu != cl->cpu[0]))
            a->single_same = false;
        else
            a->first_cpu = cl->cpu[0];
    }
    free(cl);
    return 0;
}

static void fill_affinity(struct audit_finding *f, const struct audit_iface *ifc,
                          const struct affinity *a, const char *local, struct cpulist *tmp)
{
    char used[256];

    tmp->n = 0;
    for (int c = 0; c < CPULIST_MAX; c++)
        if (a->used[c])
            tmp->cpu[tmp->n++] = c;
    cpulist_format(tmp, used, sizeof(used));
    AUDIT_SET(f->current, "%d IRQ%s on CPUs %s", a->n, a->n == 1 ? "" : "s", used);
    AUDIT_SET(f->recommended, "%s", f->status == AUDIT_OK ? f->current : "");
    if (a->outside)
        AUDIT_SET(f->reason,
                  "%d of %d queue IRQs may run on CPUs outside the NIC's local CPUs "
                  "%s: every packet then crosses the NUMA interconnect",
                  a->outside, a->n, local);
    else if (f->status == AUDIT_WARN)
        AUDIT_SET(f->reason,
                  "all %d queue IRQs run on CPU %d: one CPU takes every receive "
                  "interrupt",
                  a->n, a->first_cpu);
    else
        AUDIT_SET(f->reason, "%d queue IRQ%s, all on the NIC's local CPUs%s%s", a->n,
                  a->n == 1 ? "" : "s", local[0] ? " " : "", local);
    if (f->status != AUDIT_WARN)
        return;
    AUDIT_SET(f->recommended, "spread over local CPUs %s", local[0] ? local : "(unknown)");
    AUDIT_SET(f->fix,
              "set_irq_affinity_cpulist.sh %s %s (mlnx-tools), or echo CPU > "
              "/proc/irq/N/smp_affinity_list for each queue IRQ of %s",
              local[0] ? local : "CPUS", ifc->name, ifc->name);
    AUDIT_SET(f->persist, "apply it from a oneshot unit at boot, with irqbalance stopped or "
                          "banned from these CPUs (IRQBALANCE_BANNED_CPULIST)");
}

static void check_irq_affinity(struct audit_ctx *ctx, struct audit_iface *ifc)
{
    static const char *const id = "nic.irq_affinity";
    struct irq_set *s = calloc(1, sizeof(*s));
    struct cpulist *local = malloc(sizeof(*local)), *tmp = malloc(sizeof(*tmp));
    struct affinity *a = malloc(sizeof(*a));
    char path[160], ltext[4096], lfmt[256] = "";
    struct audit_finding *f;

    if (!s || !local || !tmp || !a)
        goto out;
    if (ifc->pci[0]) {
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/msi_irqs", ifc->pci);
        audit_list(ctx, path, collect_irq, s);
        qsort(s->irq, (size_t)s->n, sizeof(s->irq[0]), cmp_int);
        for (int i = 0; i < s->n && audit_recording(ctx); i++) {
            char p2[192], mode[32];
            snprintf(p2, sizeof(p2), "%s/%d", path, s->irq[i]);
            audit_read(ctx, p2, mode, sizeof(mode)); /* "msi"/"msix": keeps the entry */
        }
    }
    if (s->n == 0)
        irqs_from_interrupts(ctx, ifc, s);
    if (s->n == 0) {
        f = audit_add(ctx, id, ifc->name, AUDIT_G_IRQ, AUDIT_SKIPPED);
        AUDIT_SET(f->reason,
                  "no IRQs found for %s (no msi_irqs, no /proc/interrupts line names "
                  "it): a virtual NIC, or its IRQs are named otherwise",
                  ifc->name);
        goto out;
    }
    if (local_cpus(ctx, ifc, local, ltext, sizeof(ltext)) == 0)
        cpulist_format(local, lfmt, sizeof(lfmt));
    else
        local->n = 0;
    if (judge_irqs(ctx, s, local, a)) {
        snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", a->unreadable_irq);
        audit_unreadable(ctx, id, ifc->name, AUDIT_G_IRQ, path, a->bad_text, "a CPU list");
        goto out;
    }
    f = audit_add(ctx, id, ifc->name, AUDIT_G_IRQ,
                  a->outside || (a->n > 1 && a->single_same) ? AUDIT_WARN : AUDIT_OK);
    fill_affinity(f, ifc, a, lfmt, tmp);
out:
    free(s);
    free(local);
    free(tmp);
    free(a);
}

/* --- RPS ---------------------------------------------------------------------------------- */

int audit_irq_mask_count(const char *mask)
{
    int bits = 0, digits = 0;

    for (const char *p = mask; *p && *p != '\n'; p++) {
        if (*p == ',')
            continue;
        if (!isxdigit((unsigned char)*p) || ++digits > CPULIST_MAX / 4)
            return -EINVAL;
        int v = isdigit((unsigned char)*p) ? *p - '0' : tolower((unsigned char)*p) - 'a' + 10;
        bits += __builtin_popcount((unsigned)v);
    }
    return digits ? bits : -EINVAL;
}

static void check_rps(struct audit_ctx *ctx, struct audit_iface *ifc)
{
    static const char *const id = "nic.rps";
    bool tp = audit_get_profile(ctx) == AUDIT_PROFILE_THROUGHPUT;
    char path[160], mask[512], local[512] = "", first[512] = "";
    uint32_t on = 0, nq = ifc->rx_queues < 64 ? ifc->rx_queues : 64;
    struct audit_finding *f;

    if (nq == 0) {
        f = audit_add(ctx, id, ifc->name, AUDIT_G_IRQ, AUDIT_SKIPPED);
        AUDIT_SET(f->reason, "no queues/rx-* under /sys/class/net/%s", ifc->name);
        return;
    }
    for (uint32_t q = 0; q < nq; q++) {
        long rc;
        int bits;
        snprintf(path, sizeof(path), "/sys/class/net/%s/queues/rx-%u/rps_cpus", ifc->name, q);
        rc = audit_read(ctx, path, mask, sizeof(mask));
        if (rc < 0) {
            audit_skip_read(ctx, id, ifc->name, AUDIT_G_IRQ, path, rc);
            return;
        }
        bits = audit_irq_mask_count(mask);
        if (bits < 0) {
            audit_unreadable(ctx, id, ifc->name, AUDIT_G_IRQ, path, mask, "a hex CPU mask");
            return;
        }
        on += bits > 0;
        if (q == 0)
            snprintf(first, sizeof(first), "%s", mask);
    }
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/local_cpus", ifc->pci);
    if (!ifc->pci[0] || audit_read(ctx, path, local, sizeof(local)) <= 0 ||
        audit_irq_mask_count(local) <= 0)
        local[0] = '\0';
    f = audit_add(ctx, id, ifc->name, AUDIT_G_IRQ,
                  on || nq > 1 ? AUDIT_OK
                  : tp         ? AUDIT_WARN
                               : AUDIT_INFO);
    if (nq == 1)
        AUDIT_SET(f->current, "rps_cpus %s", first);
    else
        AUDIT_SET(f->current, "%u rx queues, RPS %s", ifc->rx_queues, on ? "on" : "off");
    if (f->status == AUDIT_OK) {
        AUDIT_SET(f->recommended, "%s", f->current);
        AUDIT_SET(f->reason, "%s",
                  on ? "RPS spreads receive processing over several CPUs"
                     : "several receive queues: RSS spreads flows, RPS is not "
                       "needed");
        return;
    }
    AUDIT_SET(f->recommended, "rps_cpus %s", local[0] ? local : "<the NIC's local_cpus mask>");
    AUDIT_SET(f->reason, "one receive queue and RPS off: one CPU runs all receive softirq work; "
                         "RPS spreads it over the NIC's local CPUs (seed 002: 20 -> 23 Gbit/s)");
    AUDIT_SET(f->fix, "echo %s > /sys/class/net/%s/queues/rx-0/rps_cpus", local[0] ? local : "MASK",
              ifc->name);
    AUDIT_SET(f->persist, "write it from a udev rule or a oneshot unit at boot");
}

void audit_irq_iface(struct audit_ctx *ctx, struct audit_iface *ifc)
{
    check_numa(ctx, ifc);
    check_irq_affinity(ctx, ifc);
    check_rps(ctx, ifc);
}

/* --- irqbalance --------------------------------------------------------------------------- */

struct irqb_scan {
    struct audit_ctx *ctx;
    long pid;
};

static int find_irqbalance(const char *name, void *arg)
{
    struct irqb_scan *sc = arg;
    char path[64], comm[32];
    char *end;
    long pid = strtol(name, &end, 10);

    if (*end || !isdigit((unsigned char)name[0]) || pid <= 0)
        return 0;
    snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
    /* read without recording: only the match goes into the record */
    if (hostfs_read(audit_sysroot(sc->ctx), path, comm, sizeof(comm)) < 0 ||
        strcmp(comm, "irqbalance"))
        return 0;
    audit_record(sc->ctx, path, "irqbalance\n", 11);
    sc->pid = pid;
    return 1;
}

void audit_irq_host(struct audit_ctx *ctx)
{
    struct irqb_scan sc = {.ctx = ctx, .pid = 0};
    int rc = audit_list(ctx, "/proc", find_irqbalance, &sc);
    struct audit_finding *f;

    if (rc < 0) {
        audit_skip_read(ctx, "irq.irqbalance", NULL, AUDIT_G_IRQ, "/proc", rc);
        return;
    }
    f = audit_add(ctx, "irq.irqbalance", NULL, AUDIT_G_IRQ, sc.pid ? AUDIT_WARN : AUDIT_OK);
    if (!sc.pid) {
        AUDIT_SET(f->current, "not running");
        AUDIT_SET(f->recommended, "not running");
        AUDIT_SET(f->reason, "IRQ affinity stays where it is set");
        return;
    }
    AUDIT_SET(f->current, "running (pid %ld)", sc.pid);
    AUDIT_SET(f->recommended, "not running");
    AUDIT_SET(f->reason, "irqbalance moves queue IRQs every few seconds and undoes manual "
                         "affinity (seed 000 stopped it); or ban the NIC's CPUs with "
                         "IRQBALANCE_BANNED_CPULIST");
    AUDIT_SET(f->fix, "systemctl disable --now irqbalance");
    f->persistent = true;
}
