/* cgcpu: the CPU accounting and limit of the cgroup this process runs in, under a sysroot so
 * tests can use fixture trees. cgroup v1 (cpuacct.usage*, cpu.cfs_quota_us/cfs_period_us,
 * cpu.stat's nr_periods/nr_throttled/throttled_time) and v2 (cpu.stat's usage_usec,
 * user_usec, system_usec, nr_periods, nr_throttled, throttled_usec; cpu.max). The process's
 * cgroup comes from sysroot/proc/self/cgroup; the v1 hierarchies are looked up under
 * sysroot/sys/fs/cgroup/<controllers> (or one controller's name), v2 under sys/fs/cgroup or
 * sys/fs/cgroup/unified. When a v1 cpu or cpuacct hierarchy names the process, v1 is used. */
#ifndef NETRIG_CGCPU_H
#define NETRIG_CGCPU_H

#include <stdbool.h>
#include <stdint.h>

struct cgcpu_snap {
    int version;       /* 1 or 2; 0 = no cgroup CPU accounting found */
    char path[256];    /* the cgroup, as /proc/self/cgroup names it */
    bool has_usage;    /* usage_ns read */
    uint64_t usage_ns; /* CPU time used by every task of the cgroup, since it was made */
    bool has_user_sys; /* user_ns and system_ns read */
    uint64_t user_ns, system_ns;
    bool has_throttle; /* cpu.stat's throttling counters read */
    uint64_t nr_periods, nr_throttled, throttled_ns;
    double quota_cores; /* the tightest quota/period on the path to the root; 0 = no limit */
};

/* The cgroup paths in the text of /proc/self/cgroup: v1's cpu and cpuacct hierarchies (with
 * their controller fields, e.g. "cpu,cpuacct") and v2's. Empty strings when absent. */
struct cgcpu_where {
    char v1_cpu_ctl[64], v1_cpu[256];
    char v1_acct_ctl[64], v1_acct[256];
    char v2[256];
    bool has_v2;
};
int cgcpu_parse_self(const char *text, struct cgcpu_where *out);

/* Parses the text of a cpu.stat file (v1 or v2) into the snapshot's counters. */
void cgcpu_parse_stat(const char *text, int version, struct cgcpu_snap *out);
/* Parses v2's cpu.max ("max 100000" or "30000 100000"): cores, or 0 for no limit. -1 when
 * the text is not cpu.max. */
double cgcpu_parse_max(const char *text);

/* Reads the calling process's cgroup. Returns 0 (out->version says what was found: 0 when
 * neither hierarchy can be read) or a negative errno when /proc/self/cgroup cannot be read. */
int cgcpu_sample(const char *sysroot, struct cgcpu_snap *out);

#endif
