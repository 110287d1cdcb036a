/* engine_priv: the engine's own state, shared by its modules (engine.c runs a side,
 * engine_sample.c samples and collects its figures). Only src/engine/ includes this. */
#ifndef NETRIG_ENGINE_PRIV_H
#define NETRIG_ENGINE_PRIV_H

#include "engine.h"
#include "flow.h"
#include "hostctr.h"
#include "tcpinfo.h"
#include "worker.h"

struct engine {
    const struct flow_kind *kind;
    struct params p;
    bool is_client;
    uint32_t nflows, nworkers, attached;
    struct flow *flows;
    struct worker *workers;
    pid_t *tids;
    uint64_t t0, t_meas, t_stop; /* start, end of omit, stop (CLOCK_MONOTONIC ns) */
    uint64_t t_end;              /* when engine_run returned */
    bool omit_done, started, finished;
    uint64_t *base;        /* per-flow bytes at the end of omit */
    uint64_t *base_mapped; /* per-flow bytes received zero-copy at the end of omit */
    uint64_t *prev;        /* per-flow bytes at the previous interval */
    uint32_t *prev_retrans;
    uint64_t *prev_txns, *prev_lat, *base_txns, *base_timeouts;
    uint64_t *prev_wire; /* per-flow bytes on the wire, both ways, at the previous interval */
    uint64_t prev_t;
    uint64_t next_sample; /* --sample: when the next tick is due (0 = off) */
    struct engine_limits lim;
    struct cpu_sys_snap cpu_start, cpu_meas, cpu_prev;
    struct tcpinfo *base_ti;   /* per-flow TCP_INFO at the end of omit (retransmits etc.) */
    struct mptcpinfo *mp_prev; /* --mptcp with interval cells: each flow at the last interval */
    struct cpu_thread_snap thr_meas, thr_prev;
    struct cpu_proc_snap proc_meas; /* the process's own CPU and its cgroup's, at measure start */
    struct cgcpu_snap cg_meas;
    uint64_t *base_wait, *end_wait; /* per-flow wait_ns at the end of omit, at stop */
    struct flow_trace *trace;       /* per-flow TCP_INFO sums over the measured intervals */
    struct thread_mark *mark;       /* per-worker scheduler figures at measure start and stop */
    struct hostctr_snap *hosts;     /* this host's counters at measure start [0] and stop [1] */
    long clk_tck;
    uint64_t cpus_seen[CPULIST_MAX / 64]; /* CPUs the workers were seen running on */
    struct side_result res;               /* intervals fill as the test runs */
    int notify_fd;                        /* workers bump it when a flow ends */
    struct flow_budget budget;            /* -n/-k, shared by this side's senders */
    bool has_budget, sent_told;           /* sent_told: on_sent was called */
};

/* Sums of a sending flow's TCP_INFO over the measured intervals. */
struct flow_trace {
    uint32_t n;
    double rtt_us, snd_wnd, inflight;
};

/* A worker thread's time on a CPU and waiting for one, at measure start and at stop. */
struct thread_mark {
    struct cpu_sched at[2];
    bool sched[2]; /* schedstat was readable (else at[].run_ns is user + system time) */
    int cpu;       /* where it last ran, at stop */
};

/* ---- engine_sample.c: counters, TCP_INFO, CPU and scheduler figures, off the hot path */

/* A worker thread's scheduler figures at measure start (at 0) or stop (at 1). */
void engine_sample_thread(struct engine *e, uint32_t w, int at);
/* The warm-up is over: every baseline is taken now. */
void engine_sample_measure_start(struct engine *e, uint64_t now);
/* One interval of every flow and the CPU; returns the interval hook's verdict (non-zero ends
 * the run). */
int engine_sample_interval(struct engine *e, uint64_t now, bool omitted,
                           const struct engine_hooks *h);
/* Where the workers run now, and the set of CPUs seen as text in the result. */
void engine_sample_cpus(struct engine *e);
void engine_sample_cpus_format(struct engine *e);
/* The figures engine_finish collects into the result. */
void engine_sample_send_method(struct engine *e);
void engine_sample_app(const struct engine *e, struct flow *f, struct side_flow *sf);
void engine_sample_load(struct engine *e);
/* --mptcp: each flow's MPTCP connection and subflows at the end (res.mptcp) */
void engine_sample_mptcp(struct engine *e);
/* --mptcp: room for each interval's subflow counts when the flows x intervals are few enough
 * (engine_create; 0 or -ENOMEM), and their bytes for flow i in interval k (the engine's thread,
 * at each interval: stack buffers, no allocation) */
int engine_sample_mptcp_init(struct engine *e, uint32_t cap_intervals);
void engine_sample_mptcp_interval(struct engine *e, uint32_t k, uint32_t i);
/* what engine_sample_mptcp_init takes for p, as engine_plan counts it */
uint64_t engine_sample_mptcp_bytes(const struct params *p, uint32_t nflows, uint32_t cap_iv);
void engine_sample_recv_method(struct engine *e);
void engine_sample_budget(const struct engine *e, struct flow *f, struct side_flow *sf);
void engine_sample_counts(const struct engine *e, struct flow *f, struct side_flow *sf);

#endif
