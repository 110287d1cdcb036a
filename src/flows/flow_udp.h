/* flow_udp: the paced UDP stream kind (flow_udp.c), its receive accounting, and the datagram
 * formats (codecs) its loops run; its tables are in flow_kinds.c. */
#ifndef NETRIG_FLOW_UDP_H
#define NETRIG_FLOW_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flow.h"

/* UDP receive accounting. */
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

/* A UDP flow in netrig's format; flow_udp_setup: in the given one. Flow f->id sends when the
 * test says this side sends it. */
int flow_udp_init(struct flow *f, const struct params *p, bool is_client);
int flow_udp_setup(struct flow *f, const struct params *p, bool is_client,
                   const struct flow_udp_codec *codec);
/* What a UDP stream flow needs (engine_plan): its datagram size, its accounting. */
void flow_udp_needs(const struct params *p, bool is_client, struct flow_needs *out);
/* The sender's datagram counts, or the receiver's accounting, into the flow's result. */
void flow_udp_collect(const struct flow *f, struct side_flow *out);
/* A receiver flow's accounting (NULL for a sender). */
struct flow_udp_rx *flow_udp_rx(struct flow *f);

/* UDP receive accounting, one datagram at a time (exposed for tests): sequence numbers
 * (received, duplicates, late ones within a 1024-datagram window), and RFC 3550 jitter with
 * one-way delay from the send time in the datagram. */
void flow_udp_account(struct flow_udp_rx *rx, uint64_t seq);
void flow_udp_timing(struct flow_udp_rx *rx, uint64_t send_ns, uint64_t recv_ns);

#endif
