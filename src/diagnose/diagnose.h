/* diagnose: why a TCP transfer was as fast as it was. The rules (section 2 of the tuning
 * reference) are pure functions over a small struct of samples — the sender's TCP_INFO
 * figures summed over the flows, the test's own numbers and this host's counters — so unit
 * tests feed them recorded numbers. diagnose_from_run fills the sample from a run_result. */
#ifndef NETRIG_DIAGNOSE_H
#define NETRIG_DIAGNOSE_H

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
    DIAG_ID_COUNT
};

/* Thresholds (tool defaults, docs/tune.md). */
#define DIAG_PARTLY        0.10 /* f_rwnd, f_snd: "partly" */
#define DIAG_DOMINANT      0.50 /* ...: "mostly" */
#define DIAG_BUSY_FULL     0.90 /* the sender had data in flight this share of the time */
#define DIAG_BUSY_APP      0.80 /* below: the application did not keep the socket fed */
#define DIAG_LOSS_LAN      1e-3
#define DIAG_LOSS_WAN      1e-4
#define DIAG_WAN_RTT_US    5000 /* min_rtt from which a path counts as WAN */
#define DIAG_QUEUE_US      1000 /* srtt - min_rtt from which a queue is standing */
#define DIAG_AT_RATE       0.90 /* share of the goodput --rate allows that counts as full */
#define DIAG_PACED_LO      0.85 /* throughput / (pacing x flows) that counts as "as paced" */
#define DIAG_PACED_HI      1.10
#define DIAG_SOFTIRQ_FULL  0.90 /* one CPU's share of time in softirq */
#define DIAG_SQUEEZE_PER_S 100  /* softnet time_squeeze growth per second */

#define DIAG_MAX_EVIDENCE 8
#define DIAG_TEXT_LEN     320

struct diagnose_sample {
    /* the test */
    uint32_t flows;        /* flows with the sender's TCP_INFO */
    double seconds;        /* measured period, averaged over those flows */
    double throughput_bps; /* all flows, the receivers' view */
    uint64_t pacing_bps;   /* --fq-rate per flow, 0 = unpaced */
    uint64_t target_bps;   /* --rate, 0 = not given */
    double target_rtt_s;   /* --rtt, 0 = not given */
    bool local_receives;   /* this host received data (-R, or both ends here) */
    /* the sender's TCP_INFO over the measured period, summed over flows */
    uint64_t busy_us, rwnd_us, sndbuf_us; /* busy_us includes the two limited times */
    uint64_t retrans, segs_out;
    uint32_t mss;      /* bytes, 0 = unknown */
    double srtt_us;    /* mean over flows at the end */
    double min_rtt_us; /* smallest over flows */
    uint64_t snd_wnd;  /* smallest peer receive window seen at the end, bytes */
    uint64_t cwnd;     /* mean congestion window, packets */
    /* this host over the test */
    struct hostctr_delta host;
};

struct diagnose_verdict {
    enum diagnose_id id;
    char title[96];
    size_t nevidence;
    char evidence[DIAG_MAX_EVIDENCE][DIAG_TEXT_LEN];
    char advice[2 * DIAG_TEXT_LEN];
    char tune[DIAG_TEXT_LEN]; /* the netrig tune change that addresses it; "" = none */
    /* derived figures (also in the JSON) */
    double busy, f_rwnd, f_sndbuf, loss, queue_us, bdp_bytes, mathis_bps, goodput_bps;
};

/* Applies the rules in order: paced sender, receive window, send buffer, receiving host's
 * CPU, link capacity (rate reached or a standing queue), loss, application, else ok. */
void diagnose_judge(const struct diagnose_sample *s, struct diagnose_verdict *v);

/* Fills the TCP part of s from a finished stream test (the sender may be either side).
 * Returns 0, or -1 with err when no flow has the sender's TCP_INFO. */
int diagnose_from_run(const struct run_result *r, struct diagnose_sample *s, char *err,
                      size_t errlen);

const char *diagnose_id_name(enum diagnose_id id); /* "rwnd_limited", ... */

#endif
