/* audit_cpu: governor, clock, C-states, SMT and IOMMU. */
#include "audit_cpu.h"

#include "cpulist.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GOVERNORS  8
#define DEEP_CSTATE_US 20

struct governors {
    char name[MAX_GOVERNORS][32];
    int count[MAX_GOVERNORS];
    int kinds, cpus, unreadable_cpu;
    char bad[64];
};

static bool word_ok(const char *s)
{
    if (!*s || strlen(s) > 31)
        return false;
    for (; *s; s++)
        if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '_' && *s != '-')
            return false;
    return true;
}

/* The online CPUs, or NULL (a finding is added) when unknown. */
static struct cpulist *online_cpus(struct audit_ctx *ctx, const char *id)
{
    static const char *const path = "/sys/devices/system/cpu/online";
    struct cpulist *cl = malloc(sizeof(*cl));
    char buf[4096];
    long rc = audit_read(ctx, path, buf, sizeof(buf));

    if (!cl)
        return NULL;
    if (rc < 0)
        audit_skip_read(ctx, id, NULL, AUDIT_G_CPU, path, rc);
    else if (cpulist_parse(buf, cl))
        audit_unreadable(ctx, id, NULL, AUDIT_G_CPU, path, buf, "a CPU list such as 0-71");
    else
        return cl;
    free(cl);
    return NULL;
}

/* 0, -ENOENT (no cpufreq on any CPU) or -EINVAL (g->unreadable_cpu is garbage). */
static int tally_governors(struct audit_ctx *ctx, const struct cpulist *cl, struct governors *g)
{
    char path[96], buf[64];

    memset(g, 0, sizeof(*g));
    for (int i = 0; i < cl->n; i++) {
        int k;
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor",
                 cl->cpu[i]);
        if (audit_read(ctx, path, buf, sizeof(buf)) < 0)
            continue;
        if (!word_ok(buf)) {
            g->unreadable_cpu = cl->cpu[i];
            snprintf(g->bad, sizeof(g->bad), "%s", buf);
            return -EINVAL;
        }
        g->cpus++;
        for (k = 0; k < g->kinds && strcmp(g->name[k], buf); k++)
            ;
        if (k == g->kinds && g->kinds < MAX_GOVERNORS)
            snprintf(g->name[g->kinds++], sizeof(g->name[0]), "%s", buf);
        if (k < g->kinds)
            g->count[k]++;
    }
    return g->cpus ? 0 : -ENOENT;
}

static void check_governor(struct audit_ctx *ctx, const struct cpulist *cl)
{
    static const char *const id = "cpu.governor";
    struct governors g;
    char path[96];
    size_t used = 0;
    struct audit_finding *f;
    int rc = tally_governors(ctx, cl, &g);
    bool perf;

    if (rc == -EINVAL) {
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor",
                 g.unreadable_cpu);
        audit_unreadable(ctx, id, NULL, AUDIT_G_CPU, path, g.bad, "a governor name");
        return;
    }
    if (rc) {
        f = audit_add(ctx, id, NULL, AUDIT_G_CPU, AUDIT_SKIPPED);
        AUDIT_SET(f->reason, "no cpufreq in sysfs: the clock is set by the firmware (BIOS "
                             "power profile) or the hypervisor");
        return;
    }
    perf = g.kinds == 1 && !strcmp(g.name[0], "performance");
    f = audit_add(ctx, id, NULL, AUDIT_G_CPU, perf ? AUDIT_OK : AUDIT_WARN);
    for (int k = 0; k < g.kinds && used < sizeof(f->current); k++) {
        int n = g.kinds == 1 ? snprintf(f->current, sizeof(f->current), "%s", g.name[0])
                             : snprintf(f->current + used, sizeof(f->current) - used, "%s%s on %d",
                                        k ? ", " : "", g.name[k], g.count[k]);
        used += n > 0 ? (size_t)n : 0;
    }
    AUDIT_SET(f->recommended, "performance");
    if (perf) {
        AUDIT_SET(f->reason, "all %d CPUs with cpufreq run at full clock", g.cpus);
        return;
    }
    AUDIT_SET(f->reason,
              "the clock drops between bursts and ramps up too late (seed 000: 1000 "
              "-> 2301 MHz); ESnet: about 3 GHz per 30 Gbit/s flow; %d CPUs checked",
              g.cpus);
    AUDIT_SET(f->fix, "cpupower frequency-set -g performance");
    AUDIT_SET(f->persist, "tuned-adm profile network-throughput (or network-latency), or the "
                          "distribution's cpupower service");
}

int audit_cpu_parse_cpuinfo_mhz(const char *text, double *mhz)
{
    bool any = false;

    *mhz = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        const char *colon;
        char *end;
        double v;
        if (strncmp(p, "cpu MHz", 7))
            continue;
        colon = strchr(p, ':');
        if (!colon || (strchr(p, '\n') && colon > strchr(p, '\n')))
            return -EINVAL;
        v = strtod(colon + 1, &end);
        while (*end == ' ' || *end == '\t')
            end++;
        if (end == colon + 1 || (*end && *end != '\n') || !(v > 0 && v < 1e6))
            return -EINVAL;
        if (v > *mhz)
            *mhz = v;
        any = true;
    }
    return any ? 0 : -EINVAL;
}

static void check_frequency(struct audit_ctx *ctx, const struct cpulist *cl)
{
    static const char *const id = "cpu.frequency";
    uint64_t cur, max, lo = UINT64_MAX, top = 0;
    char path[96], buf[64], *info;
    double mhz;
    struct audit_finding *f;

    for (int i = 0; i < cl->n; i++) {
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq",
                 cl->cpu[i]);
        if (audit_read(ctx, path, buf, sizeof(buf)) < 0 || audit_parse_u64(buf, &cur) || cur == 0 ||
            cur > 100000000)
            continue;
        lo = cur < lo ? cur : lo;
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpufreq/cpuinfo_max_freq",
                 cl->cpu[i]);
        if (audit_read(ctx, path, buf, sizeof(buf)) >= 0 && !audit_parse_u64(buf, &max) &&
            max < 100000000 && max > top)
            top = max;
    }
    if (lo != UINT64_MAX) {
        f = audit_add(ctx, id, NULL, AUDIT_G_CPU, AUDIT_INFO);
        AUDIT_SET(f->current, "%llu MHz", (unsigned long long)(lo / 1000));
        if (top)
            AUDIT_SET(f->reason,
                      "the slowest CPU runs at %llu MHz now (maximum %llu MHz); "
                      "ESnet: about 3 GHz per 30 Gbit/s flow, so one flow at this "
                      "clock reaches about %.0f Gbit/s",
                      (unsigned long long)(lo / 1000), (unsigned long long)(top / 1000),
                      (double)lo / 1e5);
        else
            AUDIT_SET(f->reason,
                      "the slowest CPU runs at %llu MHz now; ESnet: about 3 GHz per "
                      "30 Gbit/s flow, so one flow at this clock reaches about "
                      "%.0f Gbit/s",
                      (unsigned long long)(lo / 1000), (double)lo / 1e5);
        return;
    }
    info = malloc(1 << 20);
    if (!info)
        return;
    if (audit_read(ctx, "/proc/cpuinfo", info, 1 << 20) < 0) {
        audit_skip_read(ctx, id, NULL, AUDIT_G_CPU, "/proc/cpuinfo", -ENOENT);
    } else if (audit_cpu_parse_cpuinfo_mhz(info, &mhz)) {
        audit_unreadable(ctx, id, NULL, AUDIT_G_CPU, "/proc/cpuinfo", info, "'cpu MHz : N' lines");
    } else {
        f = audit_add(ctx, id, NULL, AUDIT_G_CPU, AUDIT_INFO);
        AUDIT_SET(f->current, "%.0f MHz", mhz);
        AUDIT_SET(f->reason,
                  "from /proc/cpuinfo (no cpufreq); ESnet: about 3 GHz per 30 Gbit/s "
                  "flow, so one flow at this clock reaches about %.0f Gbit/s",
                  mhz / 100);
    }
    free(info);
}

struct cstate {
    char name[16];
    uint64_t latency_us;
    bool disabled;
};

/* cpu0's idle states; returns how many, -ENOENT when none, -EINVAL on garbage (*bad = path). */
static int read_cstates(struct audit_ctx *ctx, struct cstate *st, int max, char *bad, size_t badlen,
                        char *text, size_t textlen)
{
    static const char *const base = "/sys/devices/system/cpu/cpu0/cpuidle/state";
    char path[96];
    int n = 0;

    for (int k = 0; k < max; k++) {
        uint64_t v;
        snprintf(path, sizeof(path), "%s%d/name", base, k);
        if (audit_read(ctx, path, text, textlen) < 0)
            break;
        if (!*text || strlen(text) >= sizeof(st[n].name)) {
            snprintf(bad, badlen, "%s", path);
            return -EINVAL;
        }
        for (char *c = text; *c; c++)
            if (!isprint((unsigned char)*c)) {
                snprintf(bad, badlen, "%s", path);
                return -EINVAL;
            }
        snprintf(st[n].name, sizeof(st[n].name), "%s", text);
        snprintf(path, sizeof(path), "%s%d/latency", base, k);
        if (audit_read(ctx, path, text, textlen) < 0 || audit_parse_u64(text, &v)) {
            snprintf(bad, badlen, "%s", path);
            return -EINVAL;
        }
        st[n].latency_us = v;
        snprintf(path, sizeof(path), "%s%d/disable", base, k);
        st[n].disabled =
            audit_read(ctx, path, text, textlen) >= 0 && !audit_parse_u64(text, &v) && v != 0;
        n++;
    }
    return n ? n : -ENOENT;
}

static void check_cstates(struct audit_ctx *ctx)
{
    static const char *const id = "cpu.cstates";
    bool tp = audit_get_profile(ctx) == AUDIT_PROFILE_THROUGHPUT;
    struct cstate st[16];
    char bad[128], text[64], deep[96] = "";
    size_t used = 0, dused = 0;
    int n = read_cstates(ctx, st, 16, bad, sizeof(bad), text, sizeof(text));
    struct audit_finding *f;

    if (n == -EINVAL) {
        audit_unreadable(ctx, id, NULL, AUDIT_G_CPU, bad, text, "a state name and latency");
        return;
    }
    if (n < 0) {
        f = audit_add(ctx, id, NULL, AUDIT_G_CPU, AUDIT_SKIPPED);
        AUDIT_SET(f->reason, "no cpuidle states in sysfs: idle is handled by the firmware or "
                             "the hypervisor");
        return;
    }
    f = audit_add(ctx, id, NULL, AUDIT_G_CPU, AUDIT_OK);
    for (int k = 0; k < n; k++) {
        if (st[k].disabled)
            continue;
        used +=
            (size_t)snprintf(f->current + used, sizeof(f->current) - used, "%s%s %lluus",
                             used ? ", " : "", st[k].name, (unsigned long long)st[k].latency_us);
        if (st[k].latency_us >= DEEP_CSTATE_US && dused < sizeof(deep))
            dused += (size_t)snprintf(deep + dused, sizeof(deep) - dused, "%s%s", dused ? " " : "",
                                      st[k].name);
        if (used >= sizeof(f->current))
            used = sizeof(f->current) - 1;
    }
    if (!deep[0]) {
        AUDIT_SET(f->recommended, "%s", f->current);
        AUDIT_SET(f->reason, "no enabled idle state takes %d us or more to leave", DEEP_CSTATE_US);
        return;
    }
    f->status = tp ? AUDIT_INFO : AUDIT_WARN;
    AUDIT_SET(f->recommended, "no state of %d us or more (%s off)", DEEP_CSTATE_US, deep);
    AUDIT_SET(f->reason,
              "deep idle states (%s) add wake-up latency after every pause; the BIOS "
              "performance profile gave seed 002 +4 Gbit/s",
              deep);
    AUDIT_SET(f->fix, "cpupower idle-set -D %d", DEEP_CSTATE_US - 1);
    AUDIT_SET(f->persist, "tuned's network-latency profile (force_latency) or the BIOS C-state "
                          "setting");
}

static void check_smt(struct audit_ctx *ctx)
{
    static const char *const id = "cpu.smt";
    static const char *const path = "/sys/devices/system/cpu/smt/active";
    char buf[32];
    uint64_t v;
    long rc = audit_read(ctx, path, buf, sizeof(buf));
    struct audit_finding *f;

    if (rc < 0) {
        audit_skip_read(ctx, id, NULL, AUDIT_G_CPU, path, rc);
        return;
    }
    if (audit_parse_u64(buf, &v) || v > 1) {
        audit_unreadable(ctx, id, NULL, AUDIT_G_CPU, path, buf, "0 or 1");
        return;
    }
    f = audit_add(ctx, id, NULL, AUDIT_G_CPU, v ? AUDIT_INFO : AUDIT_OK);
    AUDIT_SET(f->current, "%s", v ? "on" : "off");
    AUDIT_SET(f->recommended, "off");
    AUDIT_SET(f->reason, "%s",
              v ? "sibling threads share a core's caches and ports: ESnet turns "
                  "SMT off for 100G hosts; at least keep flows and their IRQs on "
                  "different physical cores"
                : "one thread per core");
    if (!v)
        return;
    AUDIT_SET(f->fix, "echo off > /sys/devices/system/cpu/smt/control");
    AUDIT_SET(f->persist, "add nosmt to the kernel command line, or disable SMT in the BIOS");
}

struct iommu_scan {
    struct audit_ctx *ctx;
    int n;
};

static int count_iommu(const char *name, void *arg)
{
    struct iommu_scan *sc = arg;
    char path[160], buf[256];

    snprintf(path, sizeof(path), "/sys/class/iommu/%s/uevent", name);
    audit_read(sc->ctx, path, buf, sizeof(buf)); /* for the record: keeps the entry */
    sc->n++;
    return 0;
}

static bool has_word(const char *cmdline, const char *w)
{
    size_t n = strlen(w);

    for (const char *p = cmdline; (p = strstr(p, w)) != NULL; p += n)
        if ((p == cmdline || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
            return true;
    return false;
}

static void check_iommu(struct audit_ctx *ctx)
{
    static const char *const id = "cpu.iommu";
    bool tp = audit_get_profile(ctx) == AUDIT_PROFILE_THROUGHPUT, pt;
    struct iommu_scan sc = {.ctx = ctx, .n = 0};
    char cmd[4096];
    long rc = audit_read(ctx, "/proc/cmdline", cmd, sizeof(cmd));
    struct audit_finding *f;

    if (rc < 0) {
        audit_skip_read(ctx, id, NULL, AUDIT_G_CPU, "/proc/cmdline", rc);
        return;
    }
    audit_list(ctx, "/sys/class/iommu", count_iommu, &sc);
    pt = has_word(cmd, "iommu=pt") || has_word(cmd, "iommu.passthrough=1");
    f = audit_add(ctx, id, NULL, AUDIT_G_CPU,
                  !sc.n || pt ? AUDIT_OK
                  : tp        ? AUDIT_WARN
                              : AUDIT_INFO);
    AUDIT_SET(f->current, "%s", !sc.n ? "off" : pt ? "on, passthrough" : "on, translated");
    AUDIT_SET(f->recommended, "%s", !sc.n || pt ? f->current : "on, passthrough (iommu=pt)");
    if (!sc.n) {
        AUDIT_SET(f->reason, "no IOMMU translates DMA (/sys/class/iommu is empty)");
        return;
    }
    if (pt) {
        AUDIT_SET(f->reason, "%d IOMMU unit%s; host devices bypass translation (iommu=pt)", sc.n,
                  sc.n == 1 ? "" : "s");
        return;
    }
    AUDIT_SET(f->reason,
              "%d IOMMU unit%s translate every DMA mapping: at 100G the map/unmap "
              "cost shows; iommu=pt keeps the IOMMU for VMs and bypasses it for "
              "the host (mlnx_tune checks this)",
              sc.n, sc.n == 1 ? "" : "s");
    AUDIT_SET(f->fix, "add iommu=pt to GRUB_CMDLINE_LINUX in /etc/default/grub, run "
                      "update-grub and reboot");
    f->persistent = true;
}

void audit_cpu_host(struct audit_ctx *ctx)
{
    struct cpulist *cl = online_cpus(ctx, "cpu.governor");

    if (cl) {
        check_governor(ctx, cl);
        check_frequency(ctx, cl);
        free(cl);
    } else {
        struct audit_finding *f = audit_add(ctx, "cpu.frequency", NULL, AUDIT_G_CPU, AUDIT_SKIPPED);
        AUDIT_SET(f->reason, "the list of online CPUs is unknown (see cpu.governor)");
    }
    check_cstates(ctx);
    check_smt(ctx);
    check_iommu(ctx);
}
