/* worker: one thread, one epoll loop, the flows it owns and one I/O buffer shared by them.
 * The hot path allocates nothing, prints nothing and takes no lock: flows bump their own
 * counters, which the engine reads with relaxed atomic loads; latencies go into the worker's
 * own histogram, merged after join. */
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

/* What one round over a worker's ready flows moves at most, and the least a flow's turn
 * moves (a few segments, or the syscalls would cost more than the bytes). */
#define WORKER_ROUND_BYTES (32u << 20)
#define WORKER_QUANTUM_MIN (64u << 10)

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
    uint64_t drain_ns; /* how long receivers wait for EOF after stop */
    bool stopping;
    _Atomic bool stop_requested; /* checked between events: a busy loop sees stop at once */
    bool has_timers;             /* some flow uses due_ns */
    bool no_pwait2;              /* epoll_pwait2 is missing here: epoll_wait instead */
    bool alone;                  /* one flow, run with blocking calls (flow_ops.run_alone) */
    int err;
    struct histo *lat;                  /* transactional kinds: this thread's latencies */
    _Atomic bool measuring;             /* past the omit period: latencies count */
    struct cpu_thread_snap cpu_at_exit; /* the thread's own CPU time, taken as it ends */
    struct cpu_sched sched_at_exit;     /* its scheduler figures then (sched_exit_ok) */
    bool sched_exit_ok;
    int cpu_exit; /* the CPU it ended on, -1 unknown */
    /* a test's fake clock for worker_now (NULL: CLOCK_MONOTONIC), set before the worker runs */
    uint64_t (*fake_now)(void *ctx);
    void *fake_ctx;
};

/* lat: the flows complete transactions, whose latencies go into the worker's histogram. */
int worker_init(struct worker *w, uint32_t id, int cpu, const struct params *p, uint32_t cap_flows,
                uint64_t drain_ns, bool lat);
int worker_add_flow(struct worker *w, struct flow *f);
int worker_start(struct worker *w);
/* The per-flow quantum for a worker owning nflows flows (see struct worker). */
size_t worker_quantum(uint32_t nflows);
/* Asks the thread to stop: each flow's on_stop decides (senders half-close, receivers drain
 * until EOF or drain_ns). */
void worker_stop(struct worker *w);
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
/* Has the engine asked this worker to stop? (relaxed load, for blocking loops) */
bool worker_stop_requested(struct worker *w);
void worker_flow_finish(struct worker *w, struct flow *f, int err);
/* A sender whose part of the -n/-k transfer is sent: it ends cleanly, noting when. */
void worker_flow_complete(struct worker *w, struct flow *f);
/* Changes what the worker waits for on fd (op: EPOLL_CTL_ADD, _MOD or _DEL). */
int worker_watch(struct worker *w, struct flow *f, int fd, int op, uint32_t events);

#endif
