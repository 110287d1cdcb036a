/* engine: one side of a stream test. It owns the flows and worker threads, keeps time
 * (omit, intervals, duration), samples counters, TCP_INFO and CPU, and fills a side_result.
 * Client and server both run their side through it. */
#ifndef NETRIG_ENGINE_H
#define NETRIG_ENGINE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "cpulist.h"
#include "flow.h"
#include "params.h"
#include "result.h"

struct engine;

/* How long receivers wait for the sender's FIN after stop. */
#define ENGINE_DRAIN_NS (5ULL * 1000000000ULL)
/* TCP_NOTSENT_LOWAT on a sending socket whose worker takes turns over several flows (unless
 * --notsent-lowat says otherwise): without it each socket queued up to its whole send buffer
 * of unsent data, copied long before it left, and the receivers fell behind (4 flows on 2
 * threads, loopback: 30-41 Gbit/s with thousands of zero windows a run; 128 KiB: 50-60 with
 * none; one flow alone lost a third with it, so a lone flow keeps the kernel's default;
 * docs/performance.md) */
#define ENGINE_NOTSENT_AUTO (128u << 10)

/* What one side of a test will take, worked out from its parameters before anything is
 * allocated (engine_create follows the same plan), so that a daemon can charge it first. */
struct engine_plan {
    uint32_t nworkers, nflows;
    uint32_t cap_intervals;
    size_t buflen;  /* each worker's I/O buffer */
    uint64_t bytes; /* memory the engine may take, all told (buffers, flows, intervals,
                       the kinds' state, a share for each thread's stack) */
    uint32_t fds;   /* descriptors its flows and workers may hold */
};

/* Limits a daemon puts on its side, whatever the peer does (engine_set_limits). */
struct engine_limits {
    /* from engine_start: past it every data socket is shut down both ways and the workers
     * end, draining or not (0: none). engine_run returns ENGINE_END_TIME by then. */
    uint64_t hard_ns;
    /* bits/s this side's sockets may move, both ways together: the workers pause over it
     * (each its share by flows), so TCP's flow control slows the peer (0: none) */
    uint64_t rate_bps;
};

enum engine_end {
    ENGINE_END_TIME,   /* the duration elapsed */
    ENGINE_END_WATCH,  /* the watch hook asked to stop (control message) */
    ENGINE_END_SIGNAL, /* the stop flag was raised (Ctrl-C, SIGTERM) */
    ENGINE_END_FLOWS,  /* every flow ended before time (peer gone) */
    ENGINE_END_ERROR,  /* the watch hook reported a failure */
    ENGINE_END_LIMIT,  /* the interval hook ended the run */
    ENGINE_END_BUDGET, /* the -n/-k transfer is complete, in both directions */
};

struct engine_hooks {
    uint64_t run_ns; /* stop after this long (omit included); 0 = no limit */
    int watch_fd;    /* -1: none */
    /* watch_fd is readable: return 1 to stop, 0 to go on, <0 on failure */
    int (*on_watch)(void *ctx);
    /* an interval was sampled (on the engine's thread, outside the hot path); return
     * non-zero to end the run (a limit was exceeded) */
    int (*on_interval)(void *ctx, const struct side_result *s, const struct interval *iv);
    _Atomic int *stop_flag;
    void *ctx;
    /* -n/-k: this side's senders have moved the whole transfer (called once, on the engine's
     * thread); may be NULL */
    void (*on_sent)(void *ctx);
    /* -n/-k: the peer said its senders are done (on_watch sets it); NULL when it cannot */
    const bool *peer_sent;
    /* -n/-k: our receivers are done once they have this many bytes (a peer whose senders do not
     * stop or close by themselves); 0 = at end-of-file or peer_sent */
    uint64_t recv_target;
    /* -n/-k: keep running when the transfer is complete, until the peer says stop (a server) */
    bool await_stop;
};

/* The plan for this side of test p (see struct engine_plan). */
void engine_plan(const struct flow_kind *kind, const struct params *p, bool is_client,
                 struct engine_plan *out);

/* kind: what this side's flows are (a const table the caller keeps, flows/flow_kinds.h);
 * is_client selects which flows this side sends. cpus: worker pinning, NULL or empty = none. */
struct engine *engine_create(const struct flow_kind *kind, const struct params *p, bool is_client,
                             const struct cpulist *cpus, char *err, size_t errlen);
/* Hands a connected data socket for flow id to the engine (options applied here). */
int engine_attach(struct engine *e, uint32_t id, int fd, char *err, size_t errlen);
bool engine_complete(const struct engine *e); /* every flow attached */
/* Flows this side runs (one per worker thread for kinds with flow_per_worker). */
uint32_t engine_flow_count(const struct engine *e);
/* Bytes this side's receivers have read since the start, warm-up included (any thread). */
uint64_t engine_bytes_received(const struct engine *e);
/* Bytes the rate gate (--max-rate) still held back when the flows ended: a response the
 * limit kept from completing within the test (0: none). */
uint64_t engine_gate_held(const struct engine *e);
/* Kinds with set_target: every flow connects to `to` itself (no attach); -EOPNOTSUPP for
 * the others. */
int engine_set_target(struct engine *e, const struct sockaddr *to, socklen_t len,
                      const struct sock_local *local);
/* Before engine_start. */
void engine_set_limits(struct engine *e, const struct engine_limits *l);
int engine_start(struct engine *e, char *err, size_t errlen);
enum engine_end engine_run(struct engine *e, const struct engine_hooks *h);
/* Tells the workers to stop (senders half-close now); does not wait. */
void engine_stop(struct engine *e);
/* Ends the test now, without draining: every data socket is shut down both ways (a limit was
 * broken); engine_finish then returns at once. */
void engine_kill(struct engine *e);
/* Stops the workers if not yet done, waits for receivers to drain, writes the final figures. */
void engine_finish(struct engine *e, struct side_result *out);
/* After a complete transfer: waits (at most timeout_ms) until the peer has acknowledged every
 * byte our TCP senders wrote, so a peer that reads until told to stop has read them all. */
void engine_wait_acked(struct engine *e, int timeout_ms);
/* Number of flows that failed with an error (not counting clean EOF). */
uint32_t engine_failed_flows(const struct engine *e, int *first_err);
void engine_destroy(struct engine *e);

#endif
