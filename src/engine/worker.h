/* worker: one thread, one epoll loop, the flows it owns and one I/O buffer shared by them.
 * The hot path allocates nothing, prints nothing and takes no lock: flows bump their own
 * counters, which the engine reads with relaxed atomic loads; latencies go into the worker's
 * own histogram, merged after join. Two limits hold whatever the peer does: a hard deadline
 * (past it every socket of the worker is shut down both ways and the thread ends), and a rate
 * gate (a token bucket of bytes moved both ways: over it, the worker reads and writes nothing
 * until the bucket refills, so TCP's flow control slows the peer down). */
#ifndef NETRIG_WORKER_H
#define NETRIG_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "clock.h"
#include "cpu.h"
#include "flow.h"
#include "histo.h"
#include "params.h"
#include "txnlog.h"

#define WORKER_RECV_CHUNK (128 * 1024) /* the least buffer: what one receive takes at most */

/* The rate gate: bytes this worker may move, refilled at rate_Bps up to burst. */
struct worker_gate {
    uint64_t rate_Bps; /* 0: no gate */
    int64_t tokens;    /* may go below 0 by one call's worth: then the worker waits */
    int64_t burst;
    uint64_t last_ns;
};

/* What one round over a worker's ready flows aims at, and the least a flow's turn moves: at
 * 4,000 flows a turn of 64 KiB cost 2.5x the CPU per bit of one of 512 KiB (small
 * syscalls and a wake-up per few segments); 256 KiB and 1 MiB measured within noise of 512 KiB
 * there, and a round over 2,000 flows a worker stays near 1 GiB (docs/performance.md). */
#define WORKER_ROUND_BYTES (32u << 20)
#define WORKER_QUANTUM_MIN (512u << 10)
/* A sending turn moves at most this (or one write, when -l is larger): with a few flows a
 * worker, turns of several MiB filled each socket buffer before the receiver read it, and the
 * receiver copied data that had left the cache (-P 10 -T 2: 22-25 Gbit/s; with 1 MiB turns
 * 31-45, docs/performance.md). Receiving turns keep the whole quantum. */
#define WORKER_TX_TURN_MAX (1u << 20)

struct worker {
    uint32_t id;
    int cpu; /* -1: not pinned */
    int epfd, stopfd;
    int notify_fd; /* an eventfd bumped whenever a flow ends (the engine polls it), or -1 */
    pthread_t thread;
    bool running;
    _Atomic pid_t tid;
    const struct params *p;
    struct flow **flows;
    uint32_t nflows, cap;
    char *buf;
    int memfd;       /* -Z: the send buffer as a memory file for sendfile(), else -1 */
    size_t buflen;   /* buffer size: the most one recv takes */
    size_t send_len; /* bytes per send (-l) */
    /* bytes one flow may move per wake-up, so that a round over all of this worker's flows
     * stays near WORKER_ROUND_BYTES whatever their number (fairness at thousands of flows) */
    size_t quantum;
    size_t tx_turn;    /* a sending flow's turn: the quantum, at most worker_tx_turn's cap */
    uint64_t drain_ns; /* how long receivers wait for EOF after stop */
    /* CLOCK_MONOTONIC ns after which every socket is shut down and the thread ends (0: none);
     * the engine may bring it forward (engine_kill) while the thread runs */
    _Atomic uint64_t hard_at;
    struct worker_gate gate;    /* set before the thread starts; the thread's own afterwards */
    _Atomic uint64_t gate_held; /* bytes the gate held back at the end (worker_gate_held) */
    bool stopping;
    _Atomic bool stop_requested; /* checked between events: a busy loop sees stop at once */
    bool has_timers;             /* some flow uses due_ns */
    bool no_pwait2;              /* epoll_pwait2 is missing here: epoll_wait instead */
    uint64_t spin_off_until;     /* --busy-poll: waits block until then (worker_spin_pause) */
    bool alone;                  /* one flow, run with blocking calls (flow_ops.run_alone) */
    int err;
    struct histo *lat;      /* transactional kinds: this thread's latencies */
    struct txnlog *log;     /* params.probe: each transaction's time and latency, or NULL */
    _Atomic bool measuring; /* past the omit period: latencies count */
    struct cpu_thread_snap cpu_at_exit; /* the thread's own CPU time, taken as it ends */
    struct cpu_sched sched_at_exit;     /* its scheduler figures then (sched_exit_ok) */
    bool sched_exit_ok;
    int cpu_exit; /* the CPU it ended on, -1 unknown */
    /* a test's fake clock for worker_now (NULL: CLOCK_MONOTONIC), set before the worker runs */
    uint64_t (*fake_now)(void *ctx);
    void *fake_ctx;
};

/* buflen: the I/O buffer (0: the default for p). lat: the flows complete transactions, whose
 * latencies go into the worker's histogram. */
int worker_init(struct worker *w, uint32_t id, int cpu, const struct params *p, uint32_t cap_flows,
                size_t buflen, uint64_t drain_ns, bool lat);
/* The buffer a worker of test p gets without a plan: the largest of -l, the message sizes and
 * the 128 KiB receive chunk. */
size_t worker_default_buflen(const struct params *p);
/* The rate gate: at most rate_bps bits/s through this worker's sockets (0: none). Before
 * worker_start. */
void worker_set_rate(struct worker *w, uint64_t rate_bps);
int worker_add_flow(struct worker *w, struct flow *f);
int worker_start(struct worker *w);
/* The per-flow quantum for a worker owning nflows flows (see struct worker). */
size_t worker_quantum(uint32_t nflows);
/* A sending flow's turn for that quantum and write length (see WORKER_TX_TURN_MAX). */
size_t worker_tx_turn(size_t quantum, size_t send_len);
/* Does the worker run its one flow on its own calls instead of the event loop (a lone flow
 * whose kind can; under --busy-poll only a kind whose lone loop spins)? */
bool worker_runs_alone(const struct worker *w);
/* Asks the thread to stop: each flow's on_stop decides (senders half-close, receivers drain
 * until EOF or drain_ns). */
void worker_stop(struct worker *w);
/* Moves the hard deadline to now: the thread shuts its sockets down both ways and ends (a
 * blocking lone flow within its 100 ms call slice). */
void worker_kill(struct worker *w);
void worker_join(struct worker *w);
void worker_fini(struct worker *w);

/* ---- for flow kinds, on the worker's own thread ---- */
/* The time on the worker's thread (deadlines, timers, latencies): CLOCK_MONOTONIC in ns, or
 * the fake clock a test installed. One predictable branch on the hot path. */
static inline uint64_t worker_now(const struct worker *w)
{
    if (__builtin_expect(w->fake_now != NULL, 0))
        return w->fake_now(w->fake_ctx);
    return clock_mono_ns();
}
/* A transaction of flow `flow` completed (lat_ns) or was given up on (TXNLOG_LOST), sent (or
 * meant to be) at t_ns: into the worker's log when it keeps one. */
static inline void worker_log_txn(struct worker *w, uint32_t flow, uint64_t t_ns, uint64_t lat_ns)
{
    if (w->log)
        txnlog_add_owd(w->log, flow, t_ns, lat_ns, TXNLOG_NO_OWD);
}
static inline void worker_log_txn_owd(struct worker *w, uint32_t flow, uint64_t t_ns,
                                      uint64_t lat_ns, int64_t up_ns)
{
    if (w->log)
        txnlog_add_owd(w->log, flow, t_ns, lat_ns, up_ns);
}
/* Has the engine asked this worker to stop? (relaxed load, for blocking loops) */
bool worker_stop_requested(struct worker *w);
/* Has the hard deadline passed? Then the caller ends the flow (worker_flow_finish). */
bool worker_past_deadline(struct worker *w);
/* Does the next wait spin? With --busy-poll, except for WORKER_SPIN_BACKOFF_NS after
 * worker_spin_pause found the CPU held by other work: then waits block, as without it. */
bool worker_spins(struct worker *w);
/* A spinning wait that found nothing gives the CPU to whatever else is runnable on it, such
 * as the other end of a loopback test on one CPU (without it the two spin in turns of a
 * scheduler slice: 8 ms a transaction); on a CPU of its own it returns at once. When the CPU
 * came back only after WORKER_SPIN_SHARED_NS, other work shares it: the worker's waits block
 * for a while (a woken thread gets the CPU back sooner than a yielding one). */
void worker_spin_pause(struct worker *w);
#define WORKER_SPIN_SHARED_NS  500000ULL
#define WORKER_SPIN_BACKOFF_NS 20000000ULL
/* Counts n bytes moved through the rate gate: true when the worker is over its budget (an
 * event loop stops its batch; the worker waits before the next event). */
bool worker_gate_take(struct worker *w, uint64_t n);
/* Is the worker over its rate budget now (without counting anything)? */
static inline bool worker_gate_closed(const struct worker *w)
{
    return w->gate.rate_Bps && w->gate.tokens < 0;
}
/* A blocking lone flow over budget: sleeps until the gate refills, the stop request or the
 * hard deadline, whichever comes first. */
void worker_gate_wait(struct worker *w);
/* A blocking lone flow gives up n bytes the gate still held back when the test ended: more
 * than the gate's burst (50 ms of the rate) are counted (engine_gate_held), so the test can
 * say the limit stopped it. */
void worker_gate_held(struct worker *w, uint64_t n);
/* Shuts f's socket down both ways (the hard deadline) and ends it. */
void worker_flow_kill(struct worker *w, struct flow *f);
void worker_flow_finish(struct worker *w, struct flow *f, int err);
/* A sender whose part of the -n/-k transfer is sent: it ends cleanly, noting when. */
void worker_flow_complete(struct worker *w, struct flow *f);
/* Changes what the worker waits for on fd (op: EPOLL_CTL_ADD, _MOD or _DEL). */
int worker_watch(struct worker *w, struct flow *f, int fd, int op, uint32_t events);

#endif
