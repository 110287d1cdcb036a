/* engine_priv: the engine's state, shared by engine.c (timing, sampling) and engine_collect.c
 * (what a side's flows and threads did over the measured period). Private to the engine. */
#ifndef NETRIG_ENGINE_PRIV_H
#define NETRIG_ENGINE_PRIV_H

#include "engine.h"
#include "cpu.h"
#include "hostctr.h"
#include "tcpinfo.h"
#include "worker.h"

#include <sys/types.h>

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
    uint64_t prev_t;
    uint64_t next_sample; /* --sample: when the next tick is due (0 = off) */
    struct cpu_sys_snap cpu_start, cpu_meas, cpu_prev;
    struct tcpinfo *base_ti; /* per-flow TCP_INFO at the end of omit (retransmits etc.) */
    struct cpu_thread_snap thr_meas, thr_prev;
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

/* engine_collect.c: at the end of the run, into e->res and the side's flows. */
void engine_set_send_method(struct engine *e);
void engine_set_recv_method(struct engine *e);
void engine_collect_app(const struct engine *e, struct flow *f, struct side_flow *sf);
void engine_collect_load(struct engine *e);
void engine_budget_figures(const struct engine *e, struct flow *f, struct side_flow *sf);
void engine_collect_counts(const struct engine *e, struct flow *f, struct side_flow *sf);

#endif
