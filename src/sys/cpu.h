/* cpu: CPU accounting from /proc/stat (whole machine) and per-thread stat files
 * (the test's own threads), as netperf does it: busy = everything but idle. */
#ifndef NETRIG_CPU_H
#define NETRIG_CPU_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgcpu.h"

struct cpu_sys_snap {
    uint64_t user, nice, system, idle, iowait, irq, softirq, steal; /* ticks, all CPUs */
    uint64_t intr;                                                  /* interrupts since boot */
    int ncpu;
};

struct cpu_thread_snap {
    uint64_t user_us, sys_us; /* summed over the sampled threads */
};

/* What a report shows: percentages of the whole machine (100 = all CPUs busy). */
struct cpu_usage {
    double user_pct, system_pct, softirq_pct, irq_pct, iowait_pct, steal_pct, idle_pct;
    double busy_pct; /* 100 - idle */
    double intr_per_s;
    int ncpu;
    double threads_user_pct; /* the test's own threads, as % of the whole machine */
    double threads_system_pct;
    double busy_cores; /* busy_pct * ncpu / 100 */
    int valid;
    /* The process's own CPU over the period: all its threads, user and system (which holds
     * the kernel work done in its context: system calls, and the protocol work they run). */
    bool own_valid;
    double seconds; /* the period */
    double own_user_s, own_system_s;
    int own_pid;      /* the process's id, to tell when both ends ran in one process */
    bool own_threads; /* both ends ran in one process (a built-in loopback server): own_*
                       * count this end's worker threads instead, to split the process */
    /* The process's cgroup over the period (cgcpu.h); cg_version 0 = none found. */
    int cg_version;
    bool cg_has_usage, cg_has_throttle;
    double cg_usage_s, cg_user_s, cg_system_s;
    double cg_quota_cores; /* 0 = no limit */
    double cg_periods, cg_throttled, cg_throttled_s;
    /* Which CPU the cost figures (cores per 10 Gbit/s, ns per byte, us per transaction) count:
     * the process's own when other work shares the host (other_cores) or a quota caps it
     * below the machine; else the whole machine's busy time. */
    bool own_basis;
    double other_cores; /* busy cores that are neither this process nor interrupt work */
};

/* Other work above this many cores makes the host shared: the cost counts netrig's own CPU. */
#define CPU_SHARED_CORES 0.2

/* The process's own CPU time since it started (getrusage RUSAGE_SELF). */
struct cpu_proc_snap {
    uint64_t user_us, sys_us;
    int pid;
};
void cpu_sample_process(struct cpu_proc_snap *out);

/* Parses the text of /proc/stat. Returns 0 or -EINVAL. */
int cpu_parse_stat(const char *text, struct cpu_sys_snap *out);
/* Reads sysroot/proc/stat. */
int cpu_sample_system(const char *sysroot, struct cpu_sys_snap *out);

/* Parses one /proc/PID/task/TID/stat line (times in clock ticks of clk_tck per second) and
 * adds its user and system time to out. */
int cpu_parse_thread_stat(const char *line, long clk_tck, struct cpu_thread_snap *out);
/* Sums the CPU time of the given thread ids of this process. Unreadable threads are skipped. */
void cpu_sample_threads(const pid_t *tids, int n, struct cpu_thread_snap *out);
/* The CPU a thread of this process last ran on (field 39 of its stat line), or -1. */
int cpu_parse_thread_last_cpu(const char *line);
int cpu_thread_last_cpu(pid_t tid);

/* A thread's scheduler figures (/proc/self/task/TID/schedstat, CONFIG_SCHED_INFO): time on a
 * CPU and time runnable but waiting for one, in ns. Returns 0, or -1 when the kernel does not
 * say (then fall back to cpu_sample_threads' user + system time). */
struct cpu_sched {
    uint64_t run_ns, wait_ns;
};
int cpu_parse_schedstat(const char *text, struct cpu_sched *out);
int cpu_thread_sched(pid_t tid, struct cpu_sched *out);

/* The calling thread's own CPU time (getrusage), e.g. taken by a thread as it exits. */
void cpu_sample_self_thread(struct cpu_thread_snap *out);

/* Turns two snapshots taken seconds apart into usage. Thread snapshots may be NULL. */
void cpu_usage_between(const struct cpu_sys_snap *a, const struct cpu_sys_snap *b,
                       const struct cpu_thread_snap *ta, const struct cpu_thread_snap *tb,
                       double seconds, struct cpu_usage *out);

/* Adds the process's own and its cgroup's figures over the same period to out (filled by
 * cpu_usage_between) and chooses the basis of the cost figures. */
void cpu_usage_own(const struct cpu_proc_snap *pa, const struct cpu_proc_snap *pb,
                   const struct cgcpu_snap *ga, const struct cgcpu_snap *gb, double seconds,
                   struct cpu_usage *out);
/* The cores the cost figures count: own cores or the machine's busy cores. */
double cpu_usage_cost_cores(const struct cpu_usage *c);

#endif
