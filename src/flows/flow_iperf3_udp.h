/* flow_iperf3_udp: iperf3's UDP datagram format, a codec for flow_udp.c's loops in tests with
 * an iperf3 peer (flow_iperf3_udp.c); its table is in flow_kinds.c. */
#ifndef NETRIG_FLOW_IPERF3_UDP_H
#define NETRIG_FLOW_IPERF3_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flow_udp.h"

/* 32- and 64-bit (--udp-counters-64bit) sequence numbers */
extern const struct flow_udp_codec flow_iperf3_udp_codec32, flow_iperf3_udp_codec64;

/* A UDP flow in iperf3's format (64-bit numbers when p->iperf3_udp64). */
int flow_iperf3_udp_init(struct flow *f, const struct params *p, bool is_client);
/* The header (send time, sequence number from 1, big-endian) written into buf (its length
 * returned) and read back (-EINVAL when len is too short), and iperf3's receive accounting. */
size_t flow_iperf3_udp_header(uint8_t *buf, uint64_t sec, uint32_t usec, uint64_t seq, bool seq64);
int flow_iperf3_udp_parse(const uint8_t *buf, size_t len, bool seq64, uint64_t *send_ns,
                          uint64_t *seq);
void flow_iperf3_udp_account(struct flow_udp_rx *rx, uint64_t seq);

#endif
