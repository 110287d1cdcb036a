/* cpu: /proc/stat and thread stat parsing, and the percentages derived from them. */
#define _GNU_SOURCE
#include "cpu.h"

#include "hostfs.h"

#include <errno.h>
#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

int cpu_parse_stat(const char *text, struct cpu_sys_snap *out)
{
    const char *line = text;
    int have_total = 0;

    memset(out, 0, sizeof(*out));
    while (line && *line) {
        if (!strncmp(line, "cpu ", 4)) {
            unsigned long long v[8] = {0};
            int n = sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                           &v[3], &v[4], &v[5], &v[6], &v[7]);
            if (n < 4)
                return -EINVAL;
            out->user = v[0], out->nice = v[1], out->system = v[2], out->idle = v[3];
            out->iowait = v[4], out->irq = v[5], out->softirq = v[6], out->steal = v[7];
            have_total = 1;
        } else if (!strncmp(line, "cpu", 3) && line[3] >= '0' && line[3] <= '9') {
            out->ncpu++;
        } else if (!strncmp(line, "intr ", 5)) {
            unsigned long long intr;
            if (sscanf(line + 5, "%llu", &intr) == 1)
                out->intr = intr;
        }
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    if (!have_total || out->ncpu == 0)
        return -EINVAL;
    return 0;
}

int cpu_sample_system(const char *sysroot, struct cpu_sys_snap *out)
{
    /* /proc/stat with "intr" lists every IRQ: a few KB per CPU on big hosts. */
    size_t len = 1 << 20;
    char *buf = malloc(len);
    long n;
    int rc;

    if (!buf)
        return -ENOMEM;
    n = hostfs_read(sysroot, "/proc/stat", buf, len);
    rc = n < 0 ? (int)n : cpu_parse_stat(buf, out);
    free(buf);
    return rc;
}

int cpu_parse_thread_stat(const char *line, long clk_tck, struct cpu_thread_snap *out)
{
    /* comm (field 2) may hold spaces and parentheses: fields resume after the last ')'. */
    const char *p = strrchr(line, ')');
    unsigned long long ut, st;

    if (!p)
        return -EINVAL;
    /* after ')': state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
     * utime(14) stime(15) */
    if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -EINVAL;
    if (clk_tck <= 0)
        return -EINVAL;
    out->user_us += ut * 1000000ULL / (unsigned long long)clk_tck;
    out->sys_us += st * 1000000ULL / (unsigned long long)clk_tck;
    return 0;
}

int cpu_parse_thread_last_cpu(const char *line)
{
    const char *p = strrchr(line, ')');
    int cpu;

    if (!p)
        return -1;
    /* after ')', 37 spaces lead to "processor", field 39 of the line */
    for (int i = 0; i < 37; i++) {
        p = strchr(p, ' ');
        if (!p)
            return -1;
        p++;
    }
    return sscanf(p, "%d", &cpu) == 1 && cpu >= 0 ? cpu : -1;
}

int cpu_thread_last_cpu(pid_t tid)
{
    char path[64], buf[1024];

    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
    if (hostfs_read(NULL, path, buf, sizeof(buf)) <= 0)
        return -1;
    return cpu_parse_thread_last_cpu(buf);
}

int cpu_parse_schedstat(const char *text, struct cpu_sched *out)
{
    unsigned long long run, wait;

    if (sscanf(text, "%llu %llu", &run, &wait) != 2)
        return -1;
    out->run_ns = run;
    out->wait_ns = wait;
    return 0;
}

int cpu_thread_sched(pid_t tid, struct cpu_sched *out)
{
    char path[64], buf[128];

    snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)tid);
    if (hostfs_read(NULL, path, buf, sizeof(buf)) <= 0)
        return -1;
    return cpu_parse_schedstat(buf, out);
}

void cpu_sample_threads(const pid_t *tids, int n, struct cpu_thread_snap *out)
{
    char path[64], buf[1024];
    long tck = sysconf(_SC_CLK_TCK);

    out->user_us = out->sys_us = 0;
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tids[i]);
        if (hostfs_read(NULL, path, buf, sizeof(buf)) > 0)
            cpu_parse_thread_stat(buf, tck, out);
    }
}

void cpu_sample_self_thread(struct cpu_thread_snap *out)
{
    struct rusage ru;

    memset(out, 0, sizeof(*out));
    if (getrusage(RUSAGE_THREAD, &ru))
        return;
    out->user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000ULL + (uint64_t)ru.ru_utime.tv_usec;
    out->sys_us = (uint64_t)ru.ru_stime.tv_sec * 1000000ULL + (uint64_t)ru.ru_stime.tv_usec;
}

static uint64_t delta(uint64_t before, uint64_t after)
{
    return after > before ? after - before : 0;
}

static double pct(uint64_t part, uint64_t total)
{
    return total ? 100.0 * (double)part / (double)total : 0.0;
}

void cpu_usage_between(const struct cpu_sys_snap *a, const struct cpu_sys_snap *b,
                       const struct cpu_thread_snap *ta, const struct cpu_thread_snap *tb,
                       double seconds, struct cpu_usage *out)
{
    /* iowait (and, on some kernels, idle) may go backwards: such a delta counts as 0 */
    uint64_t du = delta(a->user, b->user) + delta(a->nice, b->nice);
    uint64_t ds = delta(a->system, b->system), di = delta(a->idle, b->idle);
    uint64_t dw = delta(a->iowait, b->iowait), dq = delta(a->irq, b->irq);
    uint64_t dsq = delta(a->softirq, b->softirq), dst = delta(a->steal, b->steal);
    uint64_t total = du + ds + di + dw + dq + dsq + dst;

    memset(out, 0, sizeof(*out));
    out->ncpu = b->ncpu;
    out->user_pct = pct(du, total);
    out->system_pct = pct(ds, total);
    out->softirq_pct = pct(dsq, total);
    out->irq_pct = pct(dq, total);
    out->iowait_pct = pct(dw, total);
    out->steal_pct = pct(dst, total);
    out->idle_pct = pct(di, total);
    out->busy_pct = total ? 100.0 - out->idle_pct : 0.0;
    out->busy_cores = out->busy_pct * out->ncpu / 100.0;
    if (seconds > 0) {
        out->intr_per_s = (double)delta(a->intr, b->intr) / seconds;
        if (ta && tb && out->ncpu > 0) {
            /* thread times advance in scheduler ticks: over a period of a few ms one tick
             * reads as more than the whole machine, which no share can be */
            double cap = seconds * 1e6 * out->ncpu;
            out->threads_user_pct = fmin(100.0, pct(delta(ta->user_us, tb->user_us), 1) / cap);
            out->threads_system_pct = fmin(100.0, pct(delta(ta->sys_us, tb->sys_us), 1) / cap);
        }
    }
    out->valid = total > 0;
}

void cpu_sample_process(struct cpu_proc_snap *out)
{
    struct rusage ru;

    memset(out, 0, sizeof(*out));
    out->pid = (int)getpid();
    if (getrusage(RUSAGE_SELF, &ru))
        return;
    out->user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000ULL + (uint64_t)ru.ru_utime.tv_usec;
    out->sys_us = (uint64_t)ru.ru_stime.tv_sec * 1000000ULL + (uint64_t)ru.ru_stime.tv_usec;
}

static double dsec(uint64_t a, uint64_t b, double unit) { return (double)delta(a, b) / unit; }

static void own_cgroup(const struct cgcpu_snap *a, const struct cgcpu_snap *b,
                       struct cpu_usage *out)
{
    /* a cgroup that changed between the two samples (the process moved) says nothing */
    if (!a->version || a->version != b->version || strcmp(a->path, b->path))
        return;
    /* the root cgroup without a quota is the whole machine, which the figures above count;
     * a namespaced root (a container's) shows its quota */
    if (!strcmp(b->path, "/") && b->quota_cores <= 0)
        return;
    out->cg_version = b->version;
    out->cg_quota_cores = b->quota_cores;
    out->cg_has_usage = a->has_usage && b->has_usage;
    if (out->cg_has_usage)
        out->cg_usage_s = dsec(a->usage_ns, b->usage_ns, 1e9);
    if (a->has_user_sys && b->has_user_sys) {
        out->cg_user_s = dsec(a->user_ns, b->user_ns, 1e9);
        out->cg_system_s = dsec(a->system_ns, b->system_ns, 1e9);
    }
    out->cg_has_throttle = a->has_throttle && b->has_throttle;
    if (out->cg_has_throttle) {
        out->cg_periods = (double)delta(a->nr_periods, b->nr_periods);
        out->cg_throttled = (double)delta(a->nr_throttled, b->nr_throttled);
        out->cg_throttled_s = dsec(a->throttled_ns, b->throttled_ns, 1e9);
    }
}

void cpu_usage_own(const struct cpu_proc_snap *pa, const struct cpu_proc_snap *pb,
                   const struct cgcpu_snap *ga, const struct cgcpu_snap *gb, double seconds,
                   struct cpu_usage *out)
{
    double own, irq;

    out->cg_version = 0;
    out->cg_has_usage = out->cg_has_throttle = false;
    out->cg_quota_cores = 0;
    if (seconds <= 0)
        return;
    out->seconds = seconds;
    out->own_valid = true;
    out->own_user_s = dsec(pa->user_us, pb->user_us, 1e6);
    out->own_system_s = dsec(pa->sys_us, pb->sys_us, 1e6);
    out->own_pid = pb->pid;
    out->own_threads = false;
    if (ga && gb)
        own_cgroup(ga, gb, out);
    own = (out->own_user_s + out->own_system_s) / seconds;
    irq = (out->softirq_pct + out->irq_pct) * out->ncpu / 100.0;
    out->other_cores = out->valid ? fmax(0.0, out->busy_cores - own - irq) : 0.0;
    out->own_basis = !out->valid || out->other_cores > CPU_SHARED_CORES ||
                     (out->cg_quota_cores > 0 && out->cg_quota_cores < out->ncpu);
}

double cpu_usage_cost_cores(const struct cpu_usage *c)
{
    if (c->own_valid && c->own_basis && c->seconds > 0)
        return (c->own_user_s + c->own_system_s) / c->seconds;
    return c->valid ? c->busy_cores : 0.0;
}
