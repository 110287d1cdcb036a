/* load_result: what 'netrig load' measured — latency under load, flent's RRUL in one command.
 * The run has parts, each an ordinary run against the same daemon: a UDP and a TCP latency
 * probe (open-loop request/response at a fixed rate, every probe's time and latency kept)
 * running throughout, and the load (TCP streams up and down) in the middle. load_analyze cuts
 * the probes into phases — baseline (idle), loaded, recovery — and derives per phase the probe
 * latency percentiles and loss, the throughput each way, the latency increase under load, its
 * verdict band and the advice that fits. Pure: the client fills the parts, text, JSON, the
 * history and the plots read the result. */
#ifndef NETRIG_LOAD_RESULT_H
#define NETRIG_LOAD_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dsclass.h"
#include "params.h"
#include "result.h"
#include "txnlog.h"

enum load_part { LOAD_UDP_PROBE, LOAD_TCP_PROBE, LOAD_UP, LOAD_DOWN, LOAD_NPARTS };
enum load_phase { LOAD_BASELINE, LOAD_LOADED, LOAD_RECOVERY, LOAD_NPHASES };

#define LOAD_PROBE_SIZE    64     /* request and response bytes: room for the probe's number */
#define LOAD_MAX_PROBE_TPS 100000 /* --probe-rate at most */
#define LOAD_SETTLE_NS     1000000000ULL /* the loaded phase's figures skip its start (<= 1/4) */
#define LOAD_NBANDS        6

struct load_params {
    uint32_t flows;   /* -P: TCP flows per direction */
    uint32_t threads; /* -T: worker threads of each load test */
    bool up, down;    /* directions loaded */
    uint64_t baseline_ns, loaded_ns, recovery_ns;
    uint64_t probe_rate; /* probes a second, each kind; 0 = no probes */
    uint64_t sample_ns;  /* the load flows' time series; 0 = none */
    uint32_t window;     /* -w */
    bool icmp;           /* --icmp: an ICMP echo probe beside them */
    /* --classes: one load flow per class each way and the UDP probe with one flow per class,
     * each marked with its class (dsclass.h); DSCLASS_NONE = unmarked, -P flows */
    uint8_t classes;
    char congestion[PARAMS_CC_LEN]; /* -C; "" = the hosts' default */
    char title[128];
};

/* One probe kind over one phase; the probes counted are those meant to be sent in it. */
struct load_probe_stats {
    uint64_t sent, answered, lost; /* lost: given up on after the timeout */
    double loss_pct;
    double min_us, mean_us, p50_us, p90_us, p99_us, max_us; /* 0 when none was answered */
    /* UDP probe against a server that stamps its answers: the answers with one-way delays and
     * the medians of each way, clock offset included (only differences between phases are
     * delays); 0 when owd_n is 0 */
    uint64_t owd_n;
    double up_p50_us, down_p50_us;
};

struct load_phase_stats {
    double start_s, end_s; /* since the probes started */
    double from_s;         /* its figures count from here (the loaded phase skips its start) */
    struct load_probe_stats probe[2]; /* LOAD_UDP_PROBE, LOAD_TCP_PROBE */
    double up_bps, down_bps;          /* TCP goodput each way; 0 outside the loaded phase */
    struct load_probe_stats icmp;     /* --icmp: the ICMP echo probe */
};

/* Whether a probe kept its rate: intended against what it sent. */
struct load_probe_rate {
    double intended_per_s, sent_per_s, answered_per_s;
    double late_pct; /* requests that left over 1 ms after their time */
    bool kept;       /* sent at least 95 % of the intended rate */
};

/* --classes: one class's figures. Its probe is the UDP probe's flow marked with the class, at
 * the probe rate; its throughput is the goodput of its load flow each way (receiver's view). */
struct load_class_stats {
    struct load_probe_stats probe[LOAD_NPHASES];
    double up_bps, down_bps; /* over the load's test; 0 for a direction not loaded */
    bool judged;             /* answers in the baseline and under load */
    double increase_p50_us;  /* loaded p50 - baseline p50 */
};

/* What the kernel of this host offers against bufferbloat: 1 has it, 0 lacks it, -1 not known. */
struct load_kernel {
    int fq_codel, cake, fq;
    char how[200]; /* how that was found out, or why it could not be */
};

struct load_result {
    struct load_params lp;
    char server[280];
    char started_at[32];
    struct run_result part[LOAD_NPARTS];
    bool ran[LOAD_NPARTS];    /* the part produced results */
    bool wanted[LOAD_NPARTS]; /* the part was asked for */
    char part_error[LOAD_NPARTS][256];
    int64_t part_off_ns[LOAD_NPARTS]; /* when each part started, since the probes started */
    uint64_t start_unix_ns;           /* when the probes started (CLOCK_REALTIME): time 0 */
    /* derived by load_analyze */
    struct load_phase_stats phase[LOAD_NPHASES];
    struct load_probe_rate rate[2];
    int judged_by; /* the probe the increase comes from, -1: none could judge */
    double increase_p50_us, increase_p99_us;
    /* the median increase of each way, from the UDP probe's one-way delays (the clocks' offset
     * cancels); owd_judged false: the server did not stamp its answers, or no UDP probe */
    bool owd_judged;
    double increase_up_p50_us, increase_down_p50_us;
    /* the queue's drain after the load stopped: from the load's stop to the first probe sent
     * that came back within the baseline's p99 (the recovery phase's figures count from
     * there); drained false: none did before the end (drain_s is then the whole recovery) */
    bool drained;
    double drain_s;
    int band; /* 0 (<= 5 ms) .. 5 (> 400 ms); -1 when not judged */
    char cc_up[PARAMS_CC_LEN], cc_down[PARAMS_CC_LEN]; /* what the load's senders ran */
    struct load_kernel kernel;
    /* --icmp: the ICMP echo probe (not a daemon's part): its records (t_ns since its start,
     * icmp_off_ns on the probes' clock), the socket it used, why it did not run ("": it ran);
     * its increase (loaded p50 - baseline p50) beside the judged one, when it had answers */
    bool icmp_ran, icmp_judged;
    struct txnlog icmp_log;
    int64_t icmp_off_ns;
    uint64_t icmp_start_mono_ns;
    uint64_t icmp_sent, icmp_late;
    char icmp_kind[16];
    char icmp_error[256];
    double icmp_increase_p50_us;
    /* --classes: each class's figures (dsclass order; nclasses of them). The UDP probe's log
     * (part[LOAD_UDP_PROBE].local.log) keeps the first class's (BE) records, so its phases,
     * the verdict and the drain are best effort's; class_log[c] holds class c's (c >= 1). */
    uint32_t nclasses;
    struct load_class_stats cls[DSCLASS_MAX];
    struct txnlog class_log[DSCLASS_MAX];
    bool partial;
    bool probes_cut; /* the probes were stopped early: no load part could run */
    char error[256];
};

void load_params_defaults(struct load_params *lp);
/* The parameters as JSON (the run's "params" in the history) and back. */
cJSON *load_params_json(const struct load_params *lp);
int load_params_from_json(const cJSON *o, struct load_params *lp);

/* The phases, probe statistics, increase, band and congestion controls from the parts. */
void load_analyze(struct load_result *lr);
/* --classes: moves the UDP probe's records of every class but the first into class_log (its
 * flow tells the class); before load_analyze. 0, or -ENOMEM (the log is left whole). */
int load_split_classes(struct load_result *lr);
/* The records of class c's probe (the UDP probe's log for c = 0), NULL when none. */
const struct txnlog *load_class_log(const struct load_result *lr, uint32_t c);
/* The probe name of class c in the history and the --samples JSON: "udp" for the first
 * (BE), "udp_bk", "udp_cs5", "udp_ef" for the others; buf gets it. */
const char *load_class_probe(uint8_t set, uint32_t c, char *buf, size_t len);
void load_result_fini(struct load_result *lr);

/* Bands of the latency increase, as the public bufferbloat graders draw them. */
const char *load_band_grade(int band); /* "A+", "A", "B", "C", "D", "F" */
const char *load_band_words(int band); /* "no bufferbloat", ... */
double load_band_limit_ms(int band);   /* 5, 30, 60, 200, 400, INFINITY */
int load_band_of(double increase_us);
/* An increase in ms for a "%+.1f": under 0.05 ms either way is 0 ("+0.0", never "-0.0"). */
double load_ms_shown(double increase_us);

/* The advice that fits the result, one line each (at most max); returns how many. */
size_t load_advice(const struct load_result *lr, char (*lines)[400], size_t max);

/* Name of a part ("udp_probe", "tcp_probe", "up", "down") and of a phase. */
const char *load_part_name(enum load_part p);
const char *load_phase_name(enum load_phase p);

#endif
