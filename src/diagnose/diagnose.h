/* diagnose: why a TCP transfer was as fast as it was. The rules (docs/diagnose.md) are pure
 * functions over a small struct of samples — the sender's TCP_INFO figures summed over the
 * flows and averaged over the measured intervals, what the sending and the receiving
 * applications saw (time waiting on the socket, socket buffers, their threads' CPU), both
 * hosts' counters and the test's own numbers — so unit tests feed them recorded numbers.
 * diagnose_from_run fills the sample from a run_result. */
#ifndef NETRIG_DIAGNOSE_H
#define NETRIG_DIAGNOSE_H

#include "cpu.h"
#include "hostctr.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct run_result;

enum diagnose_id {
    DIAG_OK,
    DIAG_RWND_LIMITED,
    DIAG_SNDBUF_LIMITED,
    DIAG_LOSS_LIMITED,
    DIAG_APP_LIMITED,
    DIAG_RX_CPU_LIMITED,
    DIAG_LINK_CAPACITY,
    DIAG_TX_CPU_LIMITED,
    DIAG_ID_COUNT
};

/* Thresholds; docs/diagnose.md gives the arithmetic behind each. */
#define DIAG_PARTLY    0.10 /* f_rwnd, f_snd: "partly" */
#define DIAG_DOMINANT  0.50 /* ...: "mostly" */
#define DIAG_BUSY_FULL 0.90 /* the sender had data in flight this share of the time */
#define DIAG_BUSY_APP  0.80 /* below: the application did not keep the socket fed */
#define DIAG_APP_WAIT                                                                              \
    0.10                         /* a sender that waited on its socket less than this was not      \
                                  * held back by the network */
#define DIAG_NET_WAIT       0.50 /* ... one that waited at least this was */
#define DIAG_THREAD_FULL    0.80 /* a thread on a CPU or waiting for one this share: CPU-bound */
#define DIAG_RUNQ_CONTENDED 0.20 /* ... waiting for a CPU this share: other work took it */
/* a data thread that wanted a CPU (on one or waiting for one) this share of the time ... */
#define DIAG_THREAD_WANTS 0.50
/* ... and waited for one this share: the host's CPUs are the limit */
#define DIAG_RUNQ_STARVED 0.25
#define DIAG_WND_FULL     0.75 /* data in flight / the peer's window: the window is full */
/* the peer's window at the measured round trip allows less than this x what moved: it caps the
 * rate, however busy the sender's CPU was (a tiny window makes tiny segments, each costing it) */
#define DIAG_WND_CAPS      1.5
#define DIAG_RX_BUF_WINDOW 0.25 /* window / SO_RCVBUF at or above: the buffer's size is the cap */
#define DIAG_BUF_FULL      0.40 /* data in flight / SO_SNDBUF: the send buffer is full */
#define DIAG_QUEUE_MIN_US  500  /* mean srtt - min_rtt from which a queue is standing ... */
#define DIAG_QUEUE_FRAC    0.02 /* ... and at least this share of min_rtt */
#define DIAG_QUEUE_STRONG                                                                          \
    0.25                        /* a queue this share of min_rtt is more than the bursts of a      \
                                 * window- or buffer-limited sender make: the link is full */
#define DIAG_AT_RATE       0.90 /* share of the goodput --rate allows that counts as full */
#define DIAG_PACED_LO      0.85 /* throughput / (pacing x flows) that counts as "as paced" */
#define DIAG_PACED_HI      1.10
#define DIAG_MATHIS_NEAR   2.0  /* loss explains the rate when its bound is within this factor */
#define DIAG_BBR_LOSS      0.15 /* bbr (v1) reacts to loss only from ~20 % (its policer check) */
#define DIAG_PLATEAU       0.80 /* share of intervals within +-20 % of the median: a plateau */
#define DIAG_PROBE_FLAT    1.15 /* more flows carried at most this much more: a shared limit */
#define DIAG_PROBE_SCALE   1.50 /* ... at least this much more: a per-flow limit */
#define DIAG_SOFTIRQ_FULL  0.90 /* one CPU's share of time in softirq */
#define DIAG_SQUEEZE_PER_S 100  /* softnet time_squeeze growth per second */
#define DIAG_WARMUP_RTTS   15   /* warm-up, in round trips, that diagnose leaves out */
/* an end whose cgroup's quota stopped it in this share of the periods: its CPU limit is the
 * limit, whatever TCP shows; any throttled period keeps a test from being called ok */
#define DIAG_THROTTLED 0.10

#define DIAG_MAX_EVIDENCE 10
#define DIAG_TEXT_LEN     320
#define DIAG_MAX_PROBES   4

/* One end of the transfer as its application saw it. */
struct diagnose_end {
    bool known;   /* this end reported the figures below (a netrig of this version) */
    bool local;   /* the end is this host */
    double wait;  /* share of the measured time its flows waited on the socket (mean) */
    uint32_t buf; /* SO_SNDBUF (sender) / SO_RCVBUF (receiver) per flow, mean, 0 unknown */
    /* its busiest data thread (of those that send, or receive) */
    bool thread_known;
    int cpu;          /* where it ran, -1 unknown */
    double run, runq; /* shares of the measured time on a CPU, waiting for one (-1) */
    double cpu_busy;  /* that CPU's busy share (host-wide), -1 unknown */
    bool host_known;
    struct hostctr_delta host;
    /* its process's CPU over the measured period as its side reported it; the cgroup's part
     * (cg_*: a CPU quota, 0 = none, and how often it stopped the cgroup, cpu.stat's nr_periods
     * and nr_throttled) is what the quota rule reads */
    struct cpu_usage usage;
};

/* The end's cgroup throttle counts are known (a cgroup was found and reported them). */
bool diagnose_end_cg_known(const struct diagnose_end *e);

struct diagnose_probe {
    uint32_t flows;
    double throughput_bps;
};

struct diagnose_sample {
    /* the test */
    uint32_t flows;        /* flows with the sender's TCP_INFO */
    double seconds;        /* measured period, averaged over those flows */
    double warmup_s;       /* left out before it (-O) */
    double throughput_bps; /* all flows, the receivers' view */
    uint64_t pacing_bps;   /* --fq-rate per flow, 0 = unpaced */
    uint64_t target_bps;   /* --rate, 0 = not given */
    double target_rtt_s;   /* --rtt, 0 = not given */
    bool local_receives;   /* this host received data (-R, or both ends here) */
    bool same_host;        /* both ends ran on one kernel (equal boot ids: loopback, veth) */
    char cc[16];           /* the senders' congestion control, "" unknown */
    /* the sender's TCP_INFO over the measured period, summed over flows */
    uint64_t busy_us, rwnd_us, sndbuf_us; /* busy_us includes the two limited times */
    uint64_t retrans, segs_out;
    uint32_t mss;      /* bytes, 0 = unknown */
    double srtt_us;    /* mean over flows at the end */
    double min_rtt_us; /* smallest over flows */
    uint64_t snd_wnd;  /* smallest peer receive window seen at the end, bytes */
    uint64_t cwnd;     /* mean congestion window, packets */
    /* the same sampled at every interval of the measured period, means per flow */
    uint32_t samples;                            /* 0: none (use the end values) */
    double rtt_mean_us, wnd_mean, inflight_mean; /* us, bytes, bytes */
    /* the receivers' throughput per interval */
    uint32_t nrates;
    double rate_median_bps, plateau; /* share of intervals within +-20 % of the median */
    /* the two ends */
    struct diagnose_end snd, rcv;
    /* --probe-flows: the same test with more flows */
    uint32_t nprobes;
    struct diagnose_probe probe[DIAG_MAX_PROBES];
};

struct diagnose_verdict {
    enum diagnose_id id;
    char title[96];
    size_t nevidence;
    char evidence[DIAG_MAX_EVIDENCE][DIAG_TEXT_LEN];
    char advice[2 * DIAG_TEXT_LEN];
    char tune[DIAG_TEXT_LEN]; /* the netrig tune change that addresses it; "" = none */
    /* derived figures (also in the JSON); -1 where the sample had no figure */
    double busy, f_rwnd, f_sndbuf, loss, queue_us, bdp_bytes, mathis_bps, goodput_bps;
    double srtt_us, window_use, buffer_use, window_bps, probe_gain;
};

/* Applies the rules in order: paced sender; a sender that did not wait for the network (its
 * CPU, or the application); the receiving host's CPU; the link (at --rate, or as flat as
 * flows are added); receive window; send buffer; a data thread starved of CPU; a queue of a
 * quarter of the round trip;
 * loss that explains the rate; a smaller standing queue; the congestion control holding a
 * rate nothing on the hosts limited (bbr, a plateau); else ok. */
void diagnose_judge(const struct diagnose_sample *s, struct diagnose_verdict *v);

/* Fills s from a finished stream test (the sender may be either side). Returns 0, or -1 with
 * err when no flow has the sender's TCP_INFO. */
int diagnose_from_run(const struct run_result *r, struct diagnose_sample *s, char *err,
                      size_t errlen);

const char *diagnose_id_name(enum diagnose_id id); /* "rwnd_limited", ... */

#endif
