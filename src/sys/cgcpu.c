/* cgcpu: a process's cgroup, its CPU usage, throttling and quota (v1 and v2). */
#define _GNU_SOURCE
#include "cgcpu.h"

#include "hostfs.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy(char *dst, size_t len, const char *src, size_t n)
{
    if (n >= len)
        n = len - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Whether the comma-separated controller list ctl names c. */
static bool names(const char *ctl, size_t n, const char *c)
{
    size_t cl = strlen(c);
    const char *p = ctl, *end = ctl + n;

    while (p < end) {
        const char *q = memchr(p, ',', (size_t)(end - p));
        size_t len = q ? (size_t)(q - p) : (size_t)(end - p);
        if (len == cl && !memcmp(p, c, cl))
            return true;
        p += len + 1;
    }
    return false;
}

int cgcpu_parse_self(const char *text, struct cgcpu_where *out)
{
    const char *line = text;

    memset(out, 0, sizeof(*out));
    while (line && *line) {
        /* hierarchy-ID:controller-list:cgroup-path */
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        const char *c1 = memchr(line, ':', len);
        const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;

        if (c2) {
            const char *ctl = c1 + 1, *path = c2 + 1;
            size_t cn = (size_t)(c2 - ctl), pn = len - (size_t)(path - line);
            if (cn == 0 && c1 - line == 1 && line[0] == '0') {
                copy(out->v2, sizeof(out->v2), path, pn);
                out->has_v2 = true;
            }
            if (cn && names(ctl, cn, "cpu")) {
                copy(out->v1_cpu_ctl, sizeof(out->v1_cpu_ctl), ctl, cn);
                copy(out->v1_cpu, sizeof(out->v1_cpu), path, pn);
            }
            if (cn && names(ctl, cn, "cpuacct")) {
                copy(out->v1_acct_ctl, sizeof(out->v1_acct_ctl), ctl, cn);
                copy(out->v1_acct, sizeof(out->v1_acct), path, pn);
            }
        }
        line = eol ? eol + 1 : NULL;
    }
    return out->has_v2 || out->v1_cpu_ctl[0] || out->v1_acct_ctl[0] ? 0 : -ENOENT;
}

void cgcpu_parse_stat(const char *text, int version, struct cgcpu_snap *out)
{
    const char *line = text;
    int have = 0;

    while (line && *line) {
        char key[32];
        unsigned long long v;

        if (sscanf(line, "%31s %llu", key, &v) == 2) {
            uint64_t us = version == 2 ? 1000 : 1; /* v2 counts usec, v1's throttled_time ns */
            if (!strcmp(key, "nr_periods"))
                out->nr_periods = v, have |= 1;
            else if (!strcmp(key, "nr_throttled"))
                out->nr_throttled = v, have |= 2;
            else if (!strcmp(key, version == 2 ? "throttled_usec" : "throttled_time"))
                out->throttled_ns = v * us, have |= 4;
            else if (version == 2 && !strcmp(key, "usage_usec"))
                out->usage_ns = v * 1000, out->has_usage = true;
            else if (version == 2 && !strcmp(key, "user_usec"))
                out->user_ns = v * 1000, have |= 8;
            else if (version == 2 && !strcmp(key, "system_usec"))
                out->system_ns = v * 1000, have |= 16;
        }
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    out->has_throttle = (have & 7) == 7;
    if (version == 2)
        out->has_user_sys = (have & 24) == 24;
}

double cgcpu_parse_max(const char *text)
{
    char q[32];
    unsigned long long quota, period;

    if (sscanf(text, "%31s %llu", q, &period) != 2 || period == 0)
        return -1;
    if (!strcmp(q, "max"))
        return 0;
    if (sscanf(q, "%llu", &quota) != 1)
        return -1;
    return (double)quota / (double)period;
}

/* dir/path/file under the sysroot's cgroup mount; path "/" is the mount itself. */
static long cg_read(const char *sysroot, const char *mount, const char *path, const char *file,
                    char *buf, size_t len)
{
    char p[768];

    if (snprintf(p, sizeof(p), "/sys/fs/cgroup/%s%s%s/%s", mount, path[0] == '/' ? "" : "/",
                 strcmp(path, "/") ? path : "", file) >= (int)sizeof(p))
        return -ENAMETOOLONG;
    return hostfs_read(sysroot, p, buf, len);
}

/* The v1 mount of a hierarchy: its controller list, else each controller's name alone. */
static const char *v1_mount(const char *sysroot, const char *ctl, const char *path,
                            const char *file, const char *alone)
{
    char buf[64];

    if (cg_read(sysroot, ctl, path, file, buf, sizeof(buf)) >= 0)
        return ctl;
    if (cg_read(sysroot, alone, path, file, buf, sizeof(buf)) >= 0)
        return alone;
    return NULL;
}

/* One cgroup's own CPU limit in cores (0 when it sets none). */
typedef double (*cg_limit_fn)(const char *sysroot, const char *mount, const char *path);

static double v1_limit(const char *sysroot, const char *mount, const char *path)
{
    char buf[64];
    long long q;
    unsigned long long per;

    if (cg_read(sysroot, mount, path, "cpu.cfs_quota_us", buf, sizeof(buf)) >= 0 &&
        sscanf(buf, "%lld", &q) == 1 && q > 0 &&
        cg_read(sysroot, mount, path, "cpu.cfs_period_us", buf, sizeof(buf)) >= 0 &&
        sscanf(buf, "%llu", &per) == 1 && per > 0)
        return (double)q / (double)per;
    return 0;
}

static double v2_limit(const char *sysroot, const char *mount, const char *path)
{
    char buf[64];

    return cg_read(sysroot, mount, path, "cpu.max", buf, sizeof(buf)) >= 0 ? cgcpu_parse_max(buf)
                                                                           : 0;
}

/* The tightest limit on the path up to the root: each cgroup's own, the smallest. */
static double path_quota(const char *sysroot, const char *mount, const char *path,
                         cg_limit_fn limit)
{
    char p[256];
    double best = 0;

    snprintf(p, sizeof(p), "%s", path);
    for (;;) {
        char *slash;
        double c = limit(sysroot, mount, p);

        if (c > 0 && (best == 0 || c < best))
            best = c;
        slash = strrchr(p, '/');
        if (!slash || (slash == p && !p[1]))
            break;
        slash[slash == p ? 1 : 0] = '\0';
    }
    return best;
}

static void sample_v1(const char *sysroot, const struct cgcpu_where *w, struct cgcpu_snap *out)
{
    char buf[4096];
    const char *acct = w->v1_acct_ctl[0] ? v1_mount(sysroot, w->v1_acct_ctl, w->v1_acct,
                                                    "cpuacct.usage", "cpuacct")
                                         : NULL;
    const char *cpu =
        w->v1_cpu_ctl[0] ? v1_mount(sysroot, w->v1_cpu_ctl, w->v1_cpu, "cpu.stat", "cpu") : NULL;
    uint64_t u, s;

    if (acct) {
        out->version = 1;
        snprintf(out->path, sizeof(out->path), "%s", w->v1_acct);
        if (cg_read(sysroot, acct, w->v1_acct, "cpuacct.usage", buf, sizeof(buf)) >= 0)
            out->has_usage = sscanf(buf, "%" SCNu64, &out->usage_ns) == 1;
        if (cg_read(sysroot, acct, w->v1_acct, "cpuacct.usage_user", buf, sizeof(buf)) >= 0 &&
            sscanf(buf, "%" SCNu64, &u) == 1 &&
            cg_read(sysroot, acct, w->v1_acct, "cpuacct.usage_sys", buf, sizeof(buf)) >= 0 &&
            sscanf(buf, "%" SCNu64, &s) == 1)
            out->user_ns = u, out->system_ns = s, out->has_user_sys = true;
    }
    if (cpu) {
        out->version = 1;
        if (!acct)
            snprintf(out->path, sizeof(out->path), "%s", w->v1_cpu);
        if (cg_read(sysroot, cpu, w->v1_cpu, "cpu.stat", buf, sizeof(buf)) >= 0)
            cgcpu_parse_stat(buf, 1, out);
        out->quota_cores = path_quota(sysroot, cpu, w->v1_cpu, v1_limit);
    }
}

static void sample_v2(const char *sysroot, const struct cgcpu_where *w, struct cgcpu_snap *out)
{
    static const char *const mounts[] = {"", "unified"};
    char buf[4096];

    for (size_t i = 0; i < sizeof(mounts) / sizeof(mounts[0]); i++) {
        const char *m = mounts[i];
        char probe[64];

        /* the v2 mount has cgroup.controllers; a v1 hierarchy at the same place has not */
        if (cg_read(sysroot, m, "/", "cgroup.controllers", probe, sizeof(probe)) < 0)
            continue;
        if (cg_read(sysroot, m, w->v2, "cpu.stat", buf, sizeof(buf)) < 0)
            continue;
        out->version = 2;
        snprintf(out->path, sizeof(out->path), "%s", w->v2);
        cgcpu_parse_stat(buf, 2, out);
        out->quota_cores = path_quota(sysroot, m, w->v2, v2_limit);
        return;
    }
}

int cgcpu_sample(const char *sysroot, struct cgcpu_snap *out)
{
    char buf[4096];
    struct cgcpu_where w;
    long n = hostfs_read(sysroot, "/proc/self/cgroup", buf, sizeof(buf));

    memset(out, 0, sizeof(*out));
    if (n < 0)
        return (int)n;
    if (cgcpu_parse_self(buf, &w))
        return 0;
    if (w.v1_cpu_ctl[0] || w.v1_acct_ctl[0])
        sample_v1(sysroot, &w, out);
    if (!out->version && w.has_v2)
        sample_v2(sysroot, &w, out);
    return 0;
}
