/* diagnose_host: this host's counters that say where packets were dropped or the receiving
 * CPU ran out of time, sampled before and after a test through hostfs (sysroot-aware):
 * TcpExt in /proc/net/netstat and Tcp in /proc/net/snmp (per network namespace),
 * /proc/net/softnet_stat (per CPU, host-wide), the softirq share of each CPU in /proc/stat,
 * and /sys/class/net/IF/statistics/{rx_dropped,rx_missed_errors}. */
#ifndef NETRIG_DIAGNOSE_HOST_H
#define NETRIG_DIAGNOSE_HOST_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#define DIAGNOSE_MAX_CPUS   1024
#define DIAGNOSE_MAX_IFACES 64

/* TcpExt and Tcp counters netrig looks at, in this order. */
enum diagnose_ctr {
    DIAG_C_ZERO_WINDOW_ADV,  /* TcpExt TCPToZeroWindowAdv */
    DIAG_C_WANT_ZERO_WINDOW, /* TcpExt TCPWantZeroWindowAdv */
    DIAG_C_RCVQ_DROP,        /* TcpExt TCPRcvQDrop */
    DIAG_C_PRUNE_CALLED,     /* TcpExt PruneCalled */
    DIAG_C_RCV_COLLAPSED,    /* TcpExt TCPRcvCollapsed */
    DIAG_C_BACKLOG_DROP,     /* TcpExt TCPBacklogDrop */
    DIAG_C_LISTEN_OVERFLOWS, /* TcpExt ListenOverflows */
    DIAG_C_TIMEOUTS,         /* TcpExt TCPTimeouts */
    DIAG_C_RETRANS_SEGS,     /* Tcp RetransSegs */
    DIAG_C_OUT_SEGS,         /* Tcp OutSegs */
    DIAG_C_COUNT
};

/* One snapshot. */
struct diagnose_snap {
    bool have_ctr[DIAG_C_COUNT];
    uint64_t ctr[DIAG_C_COUNT];
    bool have_softnet;
    uint64_t softnet_dropped, softnet_squeeze; /* columns 2 and 3, summed over CPUs */
    int ncpu;                                  /* per-CPU /proc/stat rows read */
    int cpu_id[DIAGNOSE_MAX_CPUS];
    uint64_t cpu_softirq[DIAGNOSE_MAX_CPUS], cpu_total[DIAGNOSE_MAX_CPUS];
    int niface;
    char iface[DIAGNOSE_MAX_IFACES][IF_NAMESIZE];
    uint64_t rx_dropped[DIAGNOSE_MAX_IFACES], rx_missed[DIAGNOSE_MAX_IFACES];
};

/* What changed between two snapshots. */
struct diagnose_host {
    bool valid;
    bool have_ctr[DIAG_C_COUNT];
    uint64_t ctr[DIAG_C_COUNT];
    bool have_softnet;
    uint64_t softnet_dropped, softnet_squeeze;
    double softirq_max; /* largest share of one CPU's time spent in softirq, 0..1 */
    int softirq_cpu;    /* that CPU, -1 when unknown */
    uint64_t nic_rx_dropped, nic_rx_missed; /* summed over interfaces other than lo */
    char nic_worst[IF_NAMESIZE];            /* the interface with the most of them, "" none */
};

/* Reads every counter it can; what is missing stays marked absent. */
void diagnose_host_sample(const char *sysroot, struct diagnose_snap *s);
void diagnose_host_delta(const struct diagnose_snap *a, const struct diagnose_snap *b,
                         struct diagnose_host *out);

/* Parsers for the text of the files (exported for unit tests). Each returns 0 or -EINVAL. */
int diagnose_host_parse_netstat(const char *text, struct diagnose_snap *s);
int diagnose_host_parse_softnet(const char *text, struct diagnose_snap *s);
int diagnose_host_parse_stat(const char *text, struct diagnose_snap *s);

const char *diagnose_host_ctr_name(enum diagnose_ctr c);

#endif
