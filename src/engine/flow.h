/* flow: one flow of a test and the operations its kind defines. A flow is owned by one worker
 * thread; its counters are written by that thread only and read by the engine with relaxed
 * atomic loads. Each kind (stream, rr, crr, udp) lives in its own flow_<kind>.c and is chosen
 * by flow_init from the test parameters. */
#ifndef NETRIG_FLOW_H
#define NETRIG_FLOW_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "params.h"
#include "sock.h"

struct worker;
struct flow;

enum flow_state { FLOW_ACTIVE, FLOW_DONE };

/* How a sender moves bytes into its socket (-Z picks the zero-copy ones). */
enum flow_tx {
    FLOW_TX_COPY,         /* send(): one copy from our buffer into the kernel */
    FLOW_TX_MSG_ZEROCOPY, /* send(MSG_ZEROCOPY): pages pinned, completions on the error queue */
    FLOW_TX_SENDFILE,     /* sendfile() from a memory file: pages referenced, not copied */
};

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
    /* releases what the kind holds besides priv (e.g. accepted sockets); may be NULL */
    void (*fini)(struct flow *f);
    /* a worker that owns only this flow may run it with blocking calls instead of epoll
     * (one wake-up less per write); returns when the flow ended. May be NULL. */
    void (*run_alone)(struct worker *w, struct flow *f);
};

/* UDP receive accounting (flow_udp.c). */
struct flow_udp_rx {
    uint64_t received, duplicates, out_of_order;
    uint64_t max_seq_plus1; /* highest sequence number seen + 1 */
    double jitter_ns;       /* RFC 3550 estimator */
    int64_t last_transit_ns;
    bool have_transit;
    double owd_sum_ns; /* one-way delay (meaningful only with a shared clock) */
    uint64_t owd_min_ns, owd_max_ns;
    uint64_t window_base; /* bitmap of recent sequence numbers, for duplicates */
    uint64_t window[16];
};

struct flow {
    int fd;
    uint32_t id;
    bool sender;        /* this side originates the data / the requests */
    bool can_run_alone; /* its kind may use run_alone when it has a worker to itself */
    uint32_t worker;
    const struct flow_ops *ops;
    void *priv;                  /* kind-specific state, allocated by flow_init */
    _Atomic int tx;              /* enum flow_tx; the worker may switch MSG_ZEROCOPY to sendfile */
    _Atomic uint64_t bytes;      /* payload bytes moved */
    _Atomic uint64_t last_ns;    /* receiver: CLOCK_MONOTONIC time of the last byte */
    _Atomic uint64_t txns;       /* transactions completed (rr, crr) */
    _Atomic uint64_t lat_sum_ns; /* their latencies summed (interval means) */
    _Atomic uint64_t timeouts;   /* transactions given up on */
    _Atomic uint64_t sent_pkts, send_drops; /* UDP sender: datagrams sent / not accepted */
    _Atomic int state;
    _Atomic int err; /* errno when the flow failed */
    uint64_t due_ns; /* next timer, 0 = none (worker-owned) */
    uint64_t zc_sent, zc_done;
    _Atomic bool zc_copied;  /* the kernel copied MSG_ZEROCOPY sends (local receiver) */
    struct flow_udp_rx *udp; /* UDP receivers only; read by the engine after join */
};

/* Picks the flow's kind from p and allocates its state. is_client: this is the client side.
 * Returns 0 or -ENOMEM. */
int flow_init(struct flow *f, uint32_t id, const struct params *p, bool is_client);
void flow_fini(struct flow *f);

/* The socket options of a data flow of test p: all of them on TCP, the buffers only on a
 * datagram socket. */
void flow_sock_opts(const struct params *p, bool tcp, struct sock_flow_opts *out);

/* Per-kind operations (flow_stream.c, flow_rr.c, flow_crr.c, flow_udp.c). */
extern const struct flow_ops flow_stream_send_ops, flow_stream_recv_ops;
extern const struct flow_ops flow_rr_client_ops, flow_rr_server_ops;
extern const struct flow_ops flow_crr_client_ops, flow_crr_server_ops;
extern const struct flow_ops flow_udp_send_ops, flow_udp_recv_ops;

/* Kind set-up helpers used by flow_init. */
int flow_rr_init(struct flow *f, const struct params *p, bool is_client);
int flow_crr_init(struct flow *f, const struct params *p, bool is_client);
int flow_udp_init(struct flow *f, const struct params *p, bool is_client);
/* UDP receive accounting, one datagram at a time (exposed for tests): sequence numbers
 * (received, duplicates, late ones within a 1024-datagram window), and RFC 3550 jitter with
 * one-way delay from the send time in the datagram. */
void flow_udp_account(struct flow_udp_rx *rx, uint64_t seq);
void flow_udp_timing(struct flow_udp_rx *rx, uint64_t send_ns, uint64_t recv_ns);

/* A UDP stream's datagram format: what the sender writes at the head of each datagram and how
 * the receiver reads and accounts it. flow_udp.c's loops call it. */
struct flow_udp_codec {
    const char *name;
    uint64_t first_seq; /* the number the first datagram carries */
    bool gso;           /* the sender may batch with UDP GSO */
    /* writes the headers of n datagrams `stride` bytes apart, numbered from seq, sent at real_ns
     * (CLOCK_REALTIME) */
    void (*stamp)(uint8_t *buf, size_t stride, uint32_t n, uint64_t seq, uint64_t real_ns);
    /* reads one datagram's header: 0, or -EINVAL when it is not a data datagram of the format */
    int (*parse)(const uint8_t *buf, size_t len, uint64_t *send_ns, uint64_t *seq);
    void (*account)(struct flow_udp_rx *rx, uint64_t seq); /* one datagram's sequence number */
};
/* netrig's own format: sequence number from 0 and send time in ns, big-endian u64 each */
extern const struct flow_udp_codec flow_udp_codec;
/* A UDP flow (sender or receiver as f->sender says) in the given datagram format. */
int flow_udp_setup(struct flow *f, const struct params *p, const struct flow_udp_codec *codec);

/* iperf3's UDP datagram format, for tests with an iperf3 peer (flow_iperf3_udp.c; chosen by
 * flow_init when p->iperf3_wire): the header (send time, sequence number from 1, big-endian)
 * written into buf (its length returned) and read back, and iperf3's receive accounting. */
extern const struct flow_udp_codec flow_iperf3_udp_codec32, flow_iperf3_udp_codec64;
int flow_iperf3_udp_init(struct flow *f, const struct params *p, bool is_client);
size_t flow_iperf3_udp_header(uint8_t *buf, uint64_t sec, uint32_t usec, uint64_t seq, bool seq64);
int flow_iperf3_udp_parse(const uint8_t *buf, size_t len, bool seq64, uint64_t *send_ns,
                          uint64_t *seq);
void flow_iperf3_udp_account(struct flow_udp_rx *rx, uint64_t seq);

/* crr client flows connect to this address (set by the engine before start). */
int flow_crr_set_target(struct flow *f, const struct sockaddr *to, socklen_t len,
                        const char *bind_addr);

/* Single-writer counter bump. */
static inline void flow_add(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

#endif
