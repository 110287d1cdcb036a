/* tcpinfo: the TCP_INFO figures netrig reports, read from a socket and kept in units. */
#ifndef NETRIG_TCPINFO_H
#define NETRIG_TCPINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tcpinfo {
    bool valid;
    uint32_t rtt_us, rttvar_us, min_rtt_us;
    uint32_t snd_cwnd; /* packets */
    uint32_t snd_mss, pmtu;
    uint32_t snd_wnd;       /* bytes, peer's advertised window (0 if kernel < 5.4) */
    uint32_t total_retrans; /* segments retransmitted over the connection's life */
    uint32_t notsent_bytes;
    uint32_t unacked;           /* segments in flight (sent, not yet acknowledged) */
    uint64_t delivery_rate_bps; /* bits/s (the kernel gives bytes/s) */
    uint64_t pacing_rate_bps;
    uint64_t busy_us, rwnd_limited_us, sndbuf_limited_us;
    uint64_t bytes_acked, bytes_received, bytes_retrans;
    uint64_t bytes_sent; /* retransmitted bytes included (tcpi_bytes_sent, 4.19+) */
    uint32_t data_segs_out;
    uint8_t ca_state;
};

/* getsockopt(TCP_INFO); fields the running kernel lacks stay 0. Returns 0 or -errno. */
int tcpinfo_read(int fd, struct tcpinfo *out);

/* The same from the raw bytes of a struct tcp_info another way gave them (the INET_DIAG_INFO
 * attribute of a NETLINK_SOCK_DIAG dump), len bytes long. Returns 0 or -EINVAL (too short). */
int tcpinfo_from_raw(const void *buf, size_t len, struct tcpinfo *out);

/* Makes the life-long counters of now (retransmits, chrono times, bytes) relative to an
 * earlier sample of the same socket; an invalid `before` changes nothing. */
void tcpinfo_since(struct tcpinfo *now, const struct tcpinfo *before);

#endif
