/* flow: one flow of a test, the operations its kind defines, and the kind's description the
 * engine runs it by. A flow is owned by one worker thread; its counters are written by that
 * thread only and read by the engine with relaxed atomic loads. The kinds themselves (their
 * const tables and code) live in flows/; the engine's caller picks one and hands it to
 * engine_create, so nothing here names a kind. */
#ifndef NETRIG_FLOW_H
#define NETRIG_FLOW_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "params.h"

struct worker;
struct flow;
struct side_flow;      /* result.h */
struct sock_flow_opts; /* sock.h */
struct sock_local;     /* sock.h */

/* A transfer of a fixed size (-n, -k) shared by the sending flows of one side: each flow
 * reserves what its next write (or batch of datagrams) needs from `left` with one atomic
 * compare-and-swap, so no lock is taken and the sum of what the flows send stops exactly at
 * the limit. Units are bytes for TCP, datagrams for UDP. Before `armed` (the warm-up) the
 * flows send freely and reserve nothing. */
struct flow_budget {
    _Atomic uint64_t left; /* units not yet reserved by any flow */
    _Atomic bool armed;    /* counting: the warm-up is over */
};

enum flow_state { FLOW_ACTIVE, FLOW_DONE };

/* How a sender moves bytes into its socket (-Z picks the zero-copy ones). */
enum flow_tx {
    FLOW_TX_COPY,         /* send(): one copy from our buffer into the kernel */
    FLOW_TX_MSG_ZEROCOPY, /* send(MSG_ZEROCOPY): pages pinned, completions on the error queue */
    FLOW_TX_SENDFILE,     /* sendfile() from a memory file: pages referenced, not copied */
};

/* How a receiver takes bytes off its socket (--zerocopy-rx, --skip-rx-copy pick the others). */
enum flow_rx {
    FLOW_RX_COPY,      /* recv(): one copy from the kernel into our buffer */
    FLOW_RX_ZEROCOPY,  /* TCP_ZEROCOPY_RECEIVE: the socket's pages mapped, recv() for the rest */
    FLOW_RX_SKIP_COPY, /* recv(MSG_TRUNC): data discarded in the kernel, the copy not counted */
};

/* What one flow does on its worker's thread. */
struct flow_ops {
    const char *name;
    uint32_t events; /* epoll interest when the flow is added to its worker */
    /* readiness on the flow's fd: returns 1 when the flow has ended */
    int (*on_event)(struct worker *w, struct flow *f, uint32_t events);
    /* the worker was told to stop: returns 1 when the flow has ended */
    int (*on_stop)(struct worker *w, struct flow *f);
    /* f->due_ns has passed (paced or open-loop flows); may be NULL */
    int (*on_timer)(struct worker *w, struct flow *f, uint64_t now);
    /* the worker is about to run its loop (connect, first request, first timer); may be NULL */
    int (*on_start)(struct worker *w, struct flow *f, uint64_t now);
    /* f->fd was just handed over (before the worker runs): set-up that needs the socket,
     * e.g. a mapping. A failure falls back to a plainer method and leaves a one-line note
     * in note (else note stays ""). May be NULL. */
    void (*attach)(struct flow *f, char *note, size_t notelen);
    /* releases what the kind holds besides priv (e.g. accepted sockets); may be NULL */
    void (*fini)(struct flow *f);
    /* a worker that owns only this flow may run it with blocking calls instead of epoll
     * (one wake-up less per write); returns when the flow ended. May be NULL. */
    void (*run_alone)(struct worker *w, struct flow *f);
    /* run_alone spins on non-blocking calls under --busy-poll (instead of leaving the flow
     * to the spinning event loop: one syscall a turn instead of two) */
    bool alone_spins;
    /* run_alone waits in poll() slices and looks at the stop request and the deadlines
     * itself: the worker must not shut its socket down to wake it (crr opens one per
     * transaction, so by then another thread may hold that number) */
    bool alone_polls;
};

/* What one flow of a kind needs besides the engine's own bookkeeping, so that a test's memory
 * and descriptors are known before anything is allocated (engine_plan). */
struct flow_needs {
    size_t buf;   /* bytes one call of its worker moves at most (the worker's buffer); 0: the
                     default receive chunk will do (its sends and receives are chunked) */
    size_t state; /* the kind's own memory for this flow (f->priv and what hangs off it) */
    uint32_t fds; /* descriptors it may hold besides its own socket (e.g. accepted ones) */
};

/* A kind of flow, as one side of a test runs it: a const table owned by the caller of
 * engine_create (flows/flow_kinds.h has them and picks one from the test parameters). */
struct flow_kind {
    const char *name;
    /* Sets up flow f (f->id set, the rest zero) for this side: f->ops, f->sender and the
     * kind's own state in f->priv (freed by flow_fini). Returns 0 or -ENOMEM. */
    int (*init)(struct flow *f, const struct params *p, bool is_client);
    /* One flow per worker thread (e.g. a listener each) instead of one per flow of the test. */
    bool flow_per_worker;
    bool tcp;           /* data sockets are TCP: TCP options apply, congestion is reported */
    bool has_tcpinfo;   /* a flow's fd is one TCP connection for the whole test: TCP_INFO */
    bool transactional; /* flows count transactions; the client records their latencies */
    /* May a flow of this side, alone on its worker, run with blocking calls (run_alone)?
     * NULL: never. */
    bool (*may_run_alone)(const struct params *p, bool is_client);
    /* Flows connect by themselves to `to` (no engine_attach), from `local` (may be NULL);
     * NULL when they are handed a connected socket. */
    int (*set_target)(struct flow *f, const struct sockaddr *to, socklen_t len,
                      const struct sock_local *local);
    /* Adds the kind's own figures to a flow's result after the workers joined; may be NULL. */
    void (*collect)(const struct flow *f, struct side_flow *out);
    /* What each flow of this side of test p needs (engine_plan); NULL: a buffer of the largest
     * of -l and the message sizes, nothing else worth counting. */
    void (*needs)(const struct params *p, bool is_client, struct flow_needs *out);
};

struct flow {
    int fd; /* worker-owned; the engine's sampler reads it only for has_tcpinfo kinds, whose
               fd is set before the workers start and kept until they are joined */
    uint32_t id;
    bool sender;        /* this side originates the data / the requests */
    bool can_run_alone; /* its kind lets it use run_alone when it has a worker to itself */
    uint32_t worker;
    const struct flow_ops *ops;
    void *priv;                  /* the kind's own state, allocated by its init */
    _Atomic int tx;              /* enum flow_tx; the worker may switch MSG_ZEROCOPY to sendfile */
    _Atomic int rx;              /* enum flow_rx; zero-copy may fall back to copy at attach */
    _Atomic uint64_t bytes;      /* payload bytes moved */
    _Atomic uint64_t sent;       /* bytes written back by a flow whose `bytes` counts what it
                                    reads (rr and crr answers): the wire meter counts both */
    _Atomic uint64_t rx_mapped;  /* receiver: bytes of them taken by mapping pages (no copy) */
    _Atomic uint64_t last_ns;    /* receiver: CLOCK_MONOTONIC time of the last byte */
    _Atomic uint64_t txns;       /* transactions completed (transactional kinds) */
    _Atomic uint64_t lat_sum_ns; /* their latencies summed (interval means) */
    _Atomic uint64_t timeouts;   /* transactions given up on */
    /* stream flows: ns the application waited on the socket (a sender for room, a receiver
     * for data): two clock reads per wait, none per byte */
    _Atomic uint64_t wait_ns;
    _Atomic int state;
    _Atomic int err;        /* errno when the flow failed */
    uint64_t due_ns;        /* next timer, 0 = none (worker-owned) */
    _Atomic bool zc_copied; /* the kernel copied MSG_ZEROCOPY sends (local receiver) */
    /* -n/-k (worker-owned but for budget, which the engine sets before the workers run) */
    struct flow_budget *budget;  /* NULL: send until told to stop */
    uint64_t allow;              /* units this flow reserved and has not sent yet */
    bool budget_last;            /* its reservations include the very last unit */
    bool budget_counting;        /* it has seen the budget armed (base_bytes is set) */
    _Atomic uint64_t base_bytes; /* bytes at that moment: what it sent before is warm-up */
    _Atomic bool budget_done;    /* it ended because the transfer was complete */
};

/* Sets flow id up as `kind` does for this side (is_client: the client's). Returns 0 or
 * -ENOMEM; flow_fini releases what it holds either way. */
int flow_init(struct flow *f, uint32_t id, const struct flow_kind *kind, const struct params *p,
              bool is_client);
void flow_fini(struct flow *f);

/* The socket options of data flow number flow of test p (its TOS: its class under
 * params.classes): all of them on TCP; on a datagram socket the
 * buffers, TOS, don't-fragment and the pacing cap. */
void flow_sock_opts(const struct params *p, bool tcp, uint32_t flow, struct sock_flow_opts *out);

/* How many of `want` units the flow may send now: all of them without a budget (or before it
 * is armed); otherwise what it has reserved, topping the reservation up to `want` from the
 * shared count. 0 means the transfer is complete. After sending, flow_budget_spend. */
static inline uint64_t flow_budget_grant(struct flow *f, uint64_t want)
{
    struct flow_budget *b = f->budget;
    uint64_t left, take;

    if (!b)
        return want;
    if (!f->budget_counting) {
        if (!atomic_load_explicit(&b->armed, memory_order_acquire))
            return want;
        f->budget_counting = true;
        atomic_store_explicit(&f->base_bytes, atomic_load_explicit(&f->bytes, memory_order_relaxed),
                              memory_order_relaxed);
    }
    if (f->allow >= want)
        return want;
    left = atomic_load_explicit(&b->left, memory_order_relaxed);
    do {
        take = want - f->allow < left ? want - f->allow : left;
        if (!take)
            return f->allow;
    } while (!atomic_compare_exchange_weak_explicit(&b->left, &left, left - take,
                                                    memory_order_relaxed, memory_order_relaxed));
    if (take == left)
        f->budget_last = true;
    f->allow += take;
    return f->allow;
}

static inline void flow_budget_spend(struct flow *f, uint64_t n)
{
    if (f->budget_counting)
        f->allow -= n < f->allow ? n : f->allow;
}

/* Single-writer counter bump. */
static inline void flow_add(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

#endif
