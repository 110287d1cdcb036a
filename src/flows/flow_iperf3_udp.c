/* flow_iperf3_udp: iperf3's UDP datagram format, a codec for flow_udp.c's loops in tests with
 * an iperf3 peer. A datagram starts with the send time (u32 seconds, u32 microseconds,
 * CLOCK_REALTIME) and a sequence number counted from 1 (u32, or u64 with
 * --udp-counters-64bit), all big-endian; the rest is filler. The sender is paced by flow_udp.c
 * (a timer schedule, sendmmsg batches, never GSO with this format); the receiver counts as
 * iperf3 does: a jump in sequence numbers is loss, a step back is out-of-order, jitter per
 * RFC 1889. Its highest sequence number is kept in max_seq_plus1: with numbering from 1 that is
 * how many datagrams were sent up to it. */
#define _GNU_SOURCE
#include "flow_iperf3_udp.h"

#include <errno.h>

#define I3UDP_HDR32 12
#define I3UDP_HDR64 16

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8),
    p[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

size_t flow_iperf3_udp_header(uint8_t *buf, uint64_t sec, uint32_t usec, uint64_t seq, bool seq64)
{
    put_be32(buf, (uint32_t)sec);
    put_be32(buf + 4, usec);
    if (!seq64) {
        put_be32(buf + 8, (uint32_t)seq);
        return I3UDP_HDR32;
    }
    put_be32(buf + 8, (uint32_t)(seq >> 32));
    put_be32(buf + 12, (uint32_t)seq);
    return I3UDP_HDR64;
}

int flow_iperf3_udp_parse(const uint8_t *buf, size_t len, bool seq64, uint64_t *send_ns,
                          uint64_t *seq)
{
    uint32_t usec;

    if (len < (seq64 ? I3UDP_HDR64 : I3UDP_HDR32))
        return -EINVAL;
    usec = get_be32(buf + 4);
    if (usec >= 1000000)
        usec = 999999; /* a broken sender's clock: keep the datagram, bound the time */
    *send_ns = (uint64_t)get_be32(buf) * 1000000000ULL + (uint64_t)usec * 1000ULL;
    *seq = seq64 ? (uint64_t)get_be32(buf + 8) << 32 | get_be32(buf + 12) : get_be32(buf + 8);
    return 0;
}

void flow_iperf3_udp_account(struct flow_udp_rx *rx, uint64_t seq)
{
    rx->received++;
    if (seq > rx->max_seq_plus1) {
        rx->max_seq_plus1 = seq; /* a gap before it counts as loss until the rest arrive */
        return;
    }
    rx->out_of_order++; /* went back (or repeated): it fills an earlier gap */
}

static void stamp(uint8_t *buf, size_t stride, uint32_t n, uint64_t seq, uint64_t real_ns,
                  bool seq64)
{
    for (uint32_t i = 0; i < n; i++)
        flow_iperf3_udp_header(buf + (size_t)i * stride, real_ns / 1000000000ULL,
                               (uint32_t)(real_ns % 1000000000ULL / 1000), seq + i, seq64);
}

static void stamp32(uint8_t *buf, size_t stride, uint32_t n, uint64_t seq, uint64_t real_ns)
{
    stamp(buf, stride, n, seq, real_ns, false);
}

static void stamp64(uint8_t *buf, size_t stride, uint32_t n, uint64_t seq, uint64_t real_ns)
{
    stamp(buf, stride, n, seq, real_ns, true);
}

static int parse32(const uint8_t *buf, size_t len, uint64_t *send_ns, uint64_t *seq)
{
    return flow_iperf3_udp_parse(buf, len, false, send_ns, seq);
}

static int parse64(const uint8_t *buf, size_t len, uint64_t *send_ns, uint64_t *seq)
{
    return flow_iperf3_udp_parse(buf, len, true, send_ns, seq);
}

const struct flow_udp_codec flow_iperf3_udp_codec32 = {
    .name = "iperf3",
    .first_seq = 1,
    .gso = false,
    .stamp = stamp32,
    .parse = parse32,
    .account = flow_iperf3_udp_account,
};

const struct flow_udp_codec flow_iperf3_udp_codec64 = {
    .name = "iperf3-64bit",
    .first_seq = 1,
    .gso = false,
    .stamp = stamp64,
    .parse = parse64,
    .account = flow_iperf3_udp_account,
};

int flow_iperf3_udp_init(struct flow *f, const struct params *p, bool is_client)
{
    return flow_udp_setup(f, p, is_client,
                          p->iperf3_udp64 ? &flow_iperf3_udp_codec64 : &flow_iperf3_udp_codec32);
}
