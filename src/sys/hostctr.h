/* hostctr: this host's counters that say where packets were dropped or a CPU ran out of time,
 * sampled before and after a test through hostfs (sysroot-aware): TcpExt in /proc/net/netstat
 * and Tcp in /proc/net/snmp (per network namespace), /proc/net/softnet_stat (per CPU,
 * host-wide), each CPU's busy and softirq time in /proc/stat, and
 * /sys/class/net/IF/statistics/{rx_dropped,rx_missed_errors}. Both ends of a test take them
 * (the engine does, around the measured period), so a server sends its own with its results. */
#ifndef NETRIG_HOSTCTR_H
#define NETRIG_HOSTCTR_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#define HOSTCTR_MAX_CPUS   1024
#define HOSTCTR_MAX_IFACES 64
#define HOSTCTR_TOP_CPUS   16 /* CPUs a delta keeps: the busiest */

/* TcpExt and Tcp counters netrig looks at, in this order. */
enum hostctr_ctr {
    HOSTCTR_ZERO_WINDOW_ADV,  /* TcpExt TCPToZeroWindowAdv */
    HOSTCTR_WANT_ZERO_WINDOW, /* TcpExt TCPWantZeroWindowAdv */
    HOSTCTR_RCVQ_DROP,        /* TcpExt TCPRcvQDrop */
    HOSTCTR_PRUNE_CALLED,     /* TcpExt PruneCalled */
    HOSTCTR_RCV_COLLAPSED,    /* TcpExt TCPRcvCollapsed */
    HOSTCTR_BACKLOG_DROP,     /* TcpExt TCPBacklogDrop */
    HOSTCTR_LISTEN_OVERFLOWS, /* TcpExt ListenOverflows */
    HOSTCTR_TIMEOUTS,         /* TcpExt TCPTimeouts */
    HOSTCTR_RETRANS_SEGS,     /* Tcp RetransSegs */
    HOSTCTR_OUT_SEGS,         /* Tcp OutSegs */
    HOSTCTR_COUNT
};

/* One snapshot. */
struct hostctr_snap {
    bool have_ctr[HOSTCTR_COUNT];
    uint64_t ctr[HOSTCTR_COUNT];
    bool have_softnet;
    uint64_t softnet_dropped, softnet_squeeze; /* columns 2 and 3, summed over CPUs */
    int ncpu;                                  /* per-CPU /proc/stat rows read */
    int cpu_id[HOSTCTR_MAX_CPUS];
    uint64_t cpu_softirq[HOSTCTR_MAX_CPUS], cpu_idle[HOSTCTR_MAX_CPUS]; /* idle + iowait */
    uint64_t cpu_total[HOSTCTR_MAX_CPUS];
    int niface;
    char iface[HOSTCTR_MAX_IFACES][IF_NAMESIZE];
    uint64_t rx_dropped[HOSTCTR_MAX_IFACES], rx_missed[HOSTCTR_MAX_IFACES];
};

/* One CPU over the period: shares of its time, 0..1. */
struct hostctr_cpu {
    int id;
    double busy, softirq;
};

/* What changed between two snapshots. */
struct hostctr_delta {
    bool valid;
    bool have_ctr[HOSTCTR_COUNT];
    uint64_t ctr[HOSTCTR_COUNT];
    bool have_softnet;
    uint64_t softnet_dropped, softnet_squeeze;
    double softirq_max; /* largest share of one CPU's time spent in softirq, 0..1 */
    int softirq_cpu;    /* that CPU, -1 when unknown */
    int ncpu;           /* CPUs in cpu[]: the busiest HOSTCTR_TOP_CPUS, busiest first */
    struct hostctr_cpu cpu[HOSTCTR_TOP_CPUS];
    uint64_t nic_rx_dropped, nic_rx_missed; /* summed over interfaces other than lo */
    char nic_worst[IF_NAMESIZE];            /* the interface with the most of them, "" none */
};

/* Reads every counter it can; what is missing stays marked absent. */
void hostctr_sample(const char *sysroot, struct hostctr_snap *s);
void hostctr_delta(const struct hostctr_snap *a, const struct hostctr_snap *b,
                   struct hostctr_delta *out);
/* The delta's record of CPU id, or NULL when it was not among the busiest kept. */
const struct hostctr_cpu *hostctr_cpu_find(const struct hostctr_delta *d, int id);

/* Parsers for the text of the files (exported for unit tests). Each returns 0 or -EINVAL. */
int hostctr_parse_netstat(const char *text, struct hostctr_snap *s);
int hostctr_parse_softnet(const char *text, struct hostctr_snap *s);
int hostctr_parse_stat(const char *text, struct hostctr_snap *s);

const char *hostctr_name(enum hostctr_ctr c);
/* The counter named name ("TCPRcvQDrop"), or -1. */
int hostctr_from_name(const char *name);

#endif
