/* worker: one thread, one epoll loop, the flows it owns and one I/O buffer shared by them.
 * The hot path (send/recv) allocates nothing, prints nothing and takes no lock: it only
 * bumps per-flow counters that the engine reads with relaxed atomic loads. */
#ifndef NETRIG_WORKER_H
#define NETRIG_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpu.h"

enum flow_state { FLOW_ACTIVE, FLOW_DONE };

/* How a sender moves bytes into its socket (-Z picks the zero-copy ones). */
enum flow_tx {
    FLOW_TX_COPY,          /* send(): one copy from our buffer into the kernel */
    FLOW_TX_MSG_ZEROCOPY,  /* send(MSG_ZEROCOPY): pages pinned, completions on the error queue */
    FLOW_TX_SENDFILE,      /* sendfile() from a memory file: pages referenced, not copied */
};

struct flow {
    int fd;
    uint32_t id;
    bool sender;
    _Atomic int tx;           /* enum flow_tx; the worker may switch MSG_ZEROCOPY to sendfile */
    uint32_t worker;
    _Atomic uint64_t bytes;   /* written only by the owning worker */
    _Atomic uint64_t last_ns; /* receiver: CLOCK_MONOTONIC time of the last byte */
    _Atomic int state;
    _Atomic int err;          /* errno when the flow failed */
    uint64_t zc_sent, zc_done;
    _Atomic bool zc_copied;   /* the kernel copied MSG_ZEROCOPY sends (local receiver) */
};

struct worker {
    uint32_t id;
    int cpu;                  /* -1: not pinned */
    int epfd, stopfd;
    pthread_t thread;
    bool running;
    _Atomic pid_t tid;
    struct flow **flows;
    uint32_t nflows, cap;
    char *buf;
    int memfd;                /* -Z: the send buffer as a memory file for sendfile(), else -1 */
    size_t buflen;            /* buffer size: the most one recv takes */
    size_t send_len;          /* bytes per send (-l) */
    uint64_t drain_ns;        /* how long receivers wait for EOF after stop */
    int err;
    struct cpu_thread_snap cpu_at_exit; /* the thread's own CPU time, taken as it ends */
};

int worker_init(struct worker *w, uint32_t id, int cpu, size_t send_len, uint32_t cap_flows,
                uint64_t drain_ns, bool zerocopy);
int worker_add_flow(struct worker *w, struct flow *f);
int worker_start(struct worker *w);
/* Asks the thread to stop sending; receivers drain until EOF or drain_ns. */
void worker_stop(struct worker *w);
void worker_join(struct worker *w);
void worker_fini(struct worker *w);

uint64_t worker_now_ns(void);

#endif
