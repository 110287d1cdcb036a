/* result: the result model. Measurement fills it; text, JSON and (later) the store only read it.
 * A side_result is what one end measured; a run_result joins the client's and the server's
 * sides and derives per-flow and total figures. */
#ifndef NETRIG_RESULT_H
#define NETRIG_RESULT_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu.h"
#include "histo.h"
#include "hostctr.h"
#include "hostsnap.h"
#include "params.h"
#include "samples.h"
#include "mptcpinfo.h"
#include "tcpinfo.h"
#include "txnlog.h"

/* An open-loop request sent later than this after its intended time was sent late. */
#define RESULT_LATE_NS 1000000ULL

/* Warnings a run keeps (result_warn), and their length. */
#define RESULT_MAX_WARNINGS 8
#define RESULT_WARNING_LEN  256

/* A UDP sender below this share of its -b (or --pps) rate is reported: CPU or NIC bound. */
#define RESULT_UDP_RATE_SHARE 0.95

/* Per-flow interval cells kept at most (flows x intervals); past it only totals are kept. */
#define RESULT_MAX_INTERVAL_CELLS (1u << 20)

/* What a UDP receiver counted. */
struct result_udp_rx {
    uint64_t received, duplicates, out_of_order;
    uint64_t max_seq_plus1;
    double jitter_ns;
    double owd_sum_ns;
    uint64_t owd_min_ns, owd_max_ns;
};

struct side_flow {
    uint32_t id;
    bool sender;          /* this side wrote the flow's data */
    uint64_t bytes;       /* moved after the omit period */
    uint64_t rx_zc_bytes; /* receiver: of them, taken by TCP_ZEROCOPY_RECEIVE (no copy) */
    double seconds;       /* sender: omit end to stop; receiver: omit end to last byte */
    int cpu;              /* CPU the worker was pinned to, -1 when unpinned */
    int worker;
    int err; /* errno if the flow failed, else 0 */
    struct tcpinfo ti;
    uint64_t txns;     /* rr/crr: transactions completed (client) or answered (server) */
    uint64_t timeouts; /* rr/crr: transactions given up on */
    uint64_t sent_pkts, send_drops; /* UDP sender: datagrams sent / refused by the socket */
    /* the application's view (stream flows, measured period): the time it waited for the
     * socket, a sender for room to write, a receiver for data to read (< 0: not measured) */
    double wait_s;
    uint32_t sndbuf, rcvbuf; /* SO_SNDBUF / SO_RCVBUF at the end, bytes (0: not known) */
    uint32_t notsent_lowat;  /* a sender's TCP_NOTSENT_LOWAT, bytes (0: not set, the kernel's) */
    /* TCP_INFO sampled at each interval of the measured period: the means (samples = 0:
     * none), srtt in us, the peer's window and the data in flight (unacked x mss) in bytes */
    uint32_t samples;
    double rtt_mean_us, snd_wnd_mean, inflight_mean;
    /* open-loop rr client (this side only, not on the wire): requests sent, and those that
     * left more than RESULT_LATE_NS after their intended time */
    uint64_t reqs_sent, reqs_late;
    bool has_udp_rx;
    struct result_udp_rx udp;
};

/* --mptcp: what one subflow of a flow moved in one interval, as this side's socket counted */
struct interval_subflow {
    struct mptcpinfo_addr local, remote;
    uint64_t bytes_acked, bytes_received;
};

/* A flow's subflows in one interval: side_result.mptcp_cells[interval * nflows + flow] */
struct interval_mptcp {
    uint32_t n;
    struct interval_subflow sub[MPTCPINFO_MAX_SUB];
};

/* the flows x intervals an MPTCP test keeps per-interval subflow counts for (~1.8 MB) */
#define RESULT_MAX_MPTCP_CELLS 4096u

struct interval_flow {
    uint64_t bytes;
    uint32_t retrans; /* delta over the interval (sender side) */
    uint32_t rtt_us;
    uint32_t cwnd;
};

/* An interval's retransmits in a test where the server sends TCP flows (-R, --bidir): the
 * server measures those (its TCP_INFO) and streams its intervals; the client adds them to its
 * own when they come (client/ivjoin.c). */
enum interval_peer {
    INTERVAL_PEER_NONE,    /* the server sends no TCP flow: retrans is complete */
    INTERVAL_PEER_PENDING, /* the server's part is not (yet) known: retrans holds ours only */
    INTERVAL_PEER_TOTAL,   /* retrans includes the server's total */
    INTERVAL_PEER_CELLS,   /* ... and the cells of the flows it sends hold its per-flow counts */
};

struct interval {
    double start_s, end_s; /* since the test started, omit included */
    bool omitted;
    uint64_t sent_bytes, recv_bytes;
    uint64_t wire_bytes; /* both ways as the kernel moved them (TCP_INFO bytes acked and
                            received; other kinds: what they wrote and read), omit included.
                            The daemon's --max-rate meter; not in the JSON */
    uint32_t retrans;    /* the senders' retransmits known (see peer) */
    uint8_t peer;        /* enum interval_peer */
    uint64_t txns;       /* rr/crr transactions completed in the interval */
    uint64_t lat_sum_ns; /* and their latencies summed */
    struct cpu_usage cpu;
    struct interval_flow *flows; /* nflows cells, or NULL when not kept */
};

/* One worker thread of a side over the measured period. */
struct side_thread {
    int cpu;       /* the CPU it last ran on, -1 unknown */
    bool sends;    /* it owns flows this side sends */
    double run_s;  /* on a CPU */
    double runq_s; /* runnable, waiting for a CPU; < 0 when the kernel does not say */
};

#define SIDE_MAX_THREADS 256 /* PARAMS_MAX_THREADS */

/* What a side's host did during the measured period: its data threads' CPU and the host's
 * counters (hostctr). A server sends its own with its results. */
struct side_hostload {
    double seconds;
    uint32_t nthreads;
    struct side_thread thread[SIDE_MAX_THREADS];
    struct hostctr_delta host;
};

struct side_result {
    bool valid;
    char version[32];
    uint32_t nflows;
    struct side_flow *flows;
    uint32_t nintervals, cap_intervals;
    struct interval *intervals;
    struct interval_flow *cells; /* storage behind intervals[].flows */
    /* --mptcp, at most RESULT_MAX_MPTCP_CELLS flows x intervals: each interval's subflow
     * counts per flow, [interval * nflows + flow] (owned; NULL: none kept) */
    struct interval_mptcp *mptcp_cells;
    struct cpu_usage cpu; /* over the measured period (after omit) */
    double seconds;       /* measured period */
    uint32_t threads;
    char cpus[256];      /* CPUs the workers were pinned to; "" = unpinned */
    char cpus_seen[256]; /* CPUs the workers were seen running on */
    char congestion[PARAMS_CC_LEN];
    char send_method[16]; /* copy, msg_zerocopy, sendfile, mixed; "" = sent nothing */
    char recv_method[16]; /* TCP streams: copy, zerocopy, skip_copy, mixed; "" = none */
    char warning[256];
    char boot_id[40];   /* the kernel's boot id: equal on both ends = one clock */
    bool host_declined; /* a daemon told not to send its settings (serve --no-host-snapshot) */
    struct histo *lat;  /* rr/crr client: latencies of every transaction */
    /* with params.probe: each transaction's send time (since this side's start) and
     * latency, in time order (owned; NULL: not kept) */
    struct txnlog *log;
    struct samples *samples; /* --sample: the flows' time series (owned; NULL: none) */
    /* CLOCK_MONOTONIC when this side started its workers and when it stopped them (0: never);
     * for callers in the same process, not on the wire */
    uint64_t start_mono_ns, stop_mono_ns;
    /* this side's host settings as it sent them (owned; NULL: not sent), and when NULL why,
     * if known (e.g. "the daemon declined to send its settings") */
    struct hostsnap *host;
    char host_note[160];
    struct side_hostload *hostload; /* owned; NULL: not measured or not sent */
    /* --mptcp: each flow's MPTCP connection as this side's socket saw it at the end, nflows
     * of them (owned; NULL: not an MPTCP test, or an older peer's side), nmptcp entries */
    struct mptcpinfo *mptcp;
    uint32_t nmptcp;
};

struct flow_summary {
    uint32_t id;
    bool client_sends;
    uint64_t bytes; /* received */
    uint64_t sent_bytes;
    uint64_t rx_zc_bytes;  /* received by mapping pages (--zerocopy-rx) */
    double rx_zc_fraction; /* rx_zc_bytes / bytes; 0 when nothing was received */
    double throughput_bps; /* receiver's view */
    double sender_bps;
    double recv_seconds, send_seconds;
    uint32_t retransmits;
    uint32_t rtt_us, min_rtt_us, cwnd, snd_wnd;
    uint64_t delivery_rate_bps, busy_us, rwnd_limited_us, sndbuf_limited_us;
    bool has_sender_tcpinfo;
    double send_wait_s, recv_wait_s; /* side_flow.wait_s of the sender, the receiver (-1) */
    uint32_t sndbuf, rcvbuf;         /* the sender's SO_SNDBUF, the receiver's SO_RCVBUF */
    uint32_t notsent_lowat;          /* the sender's TCP_NOTSENT_LOWAT (0: not set) */
    double rtt_mean_us, snd_wnd_mean, inflight_mean; /* the sender's interval means */
    int client_cpu, server_cpu;
    uint64_t txns, timeouts; /* rr/crr (client's count) */
    double transactions_per_s;
    uint64_t udp_sent, udp_received, udp_lost; /* UDP streams */
    double udp_jitter_us;
};

struct run_latency {
    double min_us, mean_us, p50_us, p90_us, p99_us, p999_us, p9999_us, max_us;
};

struct run_udp {
    uint64_t sent, received, lost, duplicates, out_of_order, send_drops;
    double loss_pct, jitter_us;
    bool shared_clock; /* both ends on one kernel: one-way delay is meaningful */
    double owd_mean_us, owd_min_us, owd_max_us;
    double sent_pps, received_pps;
};

struct run_summary {
    uint64_t bytes, sent_bytes;
    double throughput_bps; /* sum over flows, receivers' view */
    double sender_bps;
    double up_bps, down_bps; /* client→server and server→client */
    double jain_index;
    uint32_t retransmits;
    uint64_t rx_zc_bytes;  /* received without a copy by TCP_ZEROCOPY_RECEIVE */
    double rx_zc_fraction; /* of all bytes received */
    /* some receiver discarded data with MSG_TRUNC (--skip-rx-copy): throughput and CPU leave
     * out the receiver's copy */
    bool rx_copy_skipped;
    /* the cost figures count each end's CPU on its basis (cpu_usage.own_basis): the process's
     * own time when its host is shared or its quota below the machine, else the machine's */
    double local_cores_per_10g, remote_cores_per_10g;
    double local_cpu_ns_per_byte, remote_cpu_ns_per_byte;
    /* the same counting the process's own CPU whatever the basis; -1 when not measured (an
     * older peer): what compare sets side by side */
    double local_own_cores_per_10g, remote_own_cores_per_10g;
    /* rr / crr */
    uint64_t transactions, timeouts, server_transactions;
    double transactions_per_s;
    double local_cpu_us_per_txn, remote_cpu_us_per_txn;         /* CPU time per transaction */
    double local_own_cpu_us_per_txn, remote_own_cpu_us_per_txn; /* own CPU; -1 unmeasured */
    struct run_latency latency;
    /* UDP streams */
    bool udp;
    struct run_udp u;
};

struct run_result {
    char test[16];
    char server[280];
    char started_at[32];    /* ISO 8601 UTC */
    uint64_t start_unix_ns; /* when this side's engine started (CLOCK_REALTIME) */
    struct params params;
    struct side_result local, remote;
    uint32_t nflows;
    struct flow_summary *flows;
    struct run_summary summary;
    bool partial;
    char error[256];
    char note[256]; /* something the run's set-up changed (e.g. pacing a server imposed) */
    /* what the user should know about the run and would not see otherwise: a rate not
     * reached, threads left idle, pinning that found nothing (result_warn) */
    uint32_t nwarnings;
    char warnings[RESULT_MAX_WARNINGS][RESULT_WARNING_LEN];
    /* what ended the run: "time" (-t), "bytes" (-n), "blocks" (-k), or for partial runs
     * "interrupted", "server", "flows", "error"; "" when it never ran */
    char ended_by[16];
};

/* Allocates flows and room for cap_intervals intervals (per-flow cells when they fit). */
int result_side_init(struct side_result *s, uint32_t nflows, uint32_t cap_intervals);
void result_side_fini(struct side_result *s);
/* Next interval slot, or NULL when full. */
struct interval *result_side_next_interval(struct side_result *s);

/* Jain's fairness index of n values: (sum x)^2 / (n sum x^2); 1 for n == 0 or all zero. */
double result_jain(const double *x, uint32_t n);

/* One line on how the receivers read when not by plain copy (--zerocopy-rx, --skip-rx-copy):
 * what share was mapped, why not more, that the receiver's copy is left out; "" otherwise. */
void result_rx_note(const struct run_result *r, char *buf, size_t len);
/* Joins local (client) and remote (server) sides into flows[] and summary, then adds the
 * warnings the figures call for (result_warn_figures). */
int result_merge(struct run_result *r);
/* Does the server send TCP flows in this test (a TCP stream, -R or --bidir)? Their
 * retransmits are the server's to count. */
bool result_server_sends_tcp(const struct params *p);
/* Interval iv's retransmits: -1 while the server's part is unknown. */
int64_t result_interval_retrans(const struct interval *iv);
/* Flow i's retransmits in iv (cells kept): -1 for a flow the server sends whose count it has
 * not streamed. */
int64_t result_interval_flow_retrans(const struct params *p, const struct interval *iv, uint32_t i);

/* One interval the server streams during the run ("interval" message, docs/protocol.md):
 * its totals and, for the flows it sends, their retransmits. */
#define RESULT_PEER_MAX_PAIRS 4096 /* flows with retransmits listed at most; past it, none */
struct peer_interval {
    uint32_t index; /* the server's interval number, 0 first (warm-up included) */
    double start_s, end_s;
    bool omitted;
    uint64_t sent_bytes, recv_bytes;
    uint32_t retrans;
    bool has_flows;  /* the pairs below list every flow the server sends with retransmits */
    uint32_t npairs; /* flows listed (their ids and retransmits) */
    uint32_t *ids, *flow_retrans; /* npairs each (malloc'd: result_peer_interval_fini) */
};
void result_peer_interval_fini(struct peer_interval *pi);

/* Adds a warning to r: a text already there is not added twice; past RESULT_MAX_WARNINGS
 * the rest is dropped. */
void result_warn(struct run_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The warnings the merged figures call for: UDP senders that reached less than
 * RESULT_UDP_RATE_SHARE of the rate asked, worker threads asked for that had no flow. */
void result_warn_figures(struct run_result *r);
void result_fini(struct run_result *r);

#endif
