/* mptcpinfo: Multipath TCP sockets: whether this kernel and namespace offer them, and what
 * an MPTCP connection's subflows carried (getsockopt SOL_MPTCP: MPTCP_INFO, MPTCP_TCPINFO,
 * MPTCP_SUBFLOW_ADDRS). The only place that knows the kernel's MPTCP structures. */
#ifndef NETRIG_MPTCPINFO_H
#define NETRIG_MPTCPINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* subflows kept per connection (the kernel's path manager allows at most 8) */
#define MPTCPINFO_MAX_SUB 8

struct mptcpinfo_addr {
    uint8_t family; /* 4, 6; 0 = not known */
    uint8_t addr[16];
    uint16_t port;
};

/* One subflow: a TCP connection between two addresses, as its TCP_INFO counts it over its
 * life (bytes_sent includes retransmitted bytes, as tcpi_bytes_sent does). */
struct mptcpinfo_sub {
    struct mptcpinfo_addr local, remote;
    uint64_t bytes_sent, bytes_acked, bytes_received;
    uint32_t retransmits; /* segments retransmitted (tcpi_total_retrans) */
    uint32_t rtt_us;      /* smoothed RTT */
};

struct mptcpinfo {
    bool valid;           /* an MPTCP socket that answered MPTCP_INFO */
    bool fallback;        /* the connection fell back to plain TCP (no MPTCP option agreed) */
    uint32_t subflows;    /* subflows the kernel listed (may exceed nsub) */
    uint32_t nsub;        /* entries in sub[] */
    uint32_t retransmits; /* MPTCP-level (data sequence) retransmits */
    uint64_t bytes_sent, bytes_received, bytes_acked, bytes_retrans; /* MPTCP level */
    struct mptcpinfo_sub sub[MPTCPINFO_MAX_SUB];
};

/* Whether an MPTCP socket can be opened here: 0, or -errno with why the short cause (no MPTCP
 * in the kernel; net.mptcp.enabled = 0 under sysroot's /proc). */
int mptcpinfo_why_not(const char *sysroot, char *why, size_t len);
/* The same with err one line for the command line: the cause and what to do. */
int mptcpinfo_check(const char *sysroot, char *err, size_t errlen);
/* The protocol number for socket(): IPPROTO_MPTCP. */
int mptcpinfo_proto(void);
/* Is fd an MPTCP socket (not a plain TCP one, such as an MPTCP listener hands out for a
 * client that did not ask for MPTCP)? */
bool mptcpinfo_is_mptcp(int fd);

/* Reads fd's MPTCP figures into out (no allocation: buffers on the stack). 0, or -errno
 * (-EOPNOTSUPP: not an MPTCP socket); out->valid false then. */
int mptcpinfo_read(int fd, struct mptcpinfo *out);

/* The parsers behind mptcpinfo_read, over the bytes getsockopt returned (len of them), for
 * tests with fixed buffers. The connection-level figures (struct mptcp_info) of any kernel
 * size; fields beyond len stay 0; len 0 means a fallen-back connection: */
int mptcpinfo_parse_info(const void *buf, size_t len, struct mptcpinfo *out);
/* MPTCP_TCPINFO: a struct mptcp_subflow_data header, then one struct tcp_info per subflow
 * (each size_user bytes long). Sets subflows, nsub and each sub's counters. 0 or -EINVAL. */
int mptcpinfo_parse_tcpinfo(const void *buf, size_t len, struct mptcpinfo *out);
/* MPTCP_SUBFLOW_ADDRS: the same header, then one struct mptcp_subflow_addrs per subflow.
 * Sets each of the first nsub subs' addresses. 0 or -EINVAL. */
int mptcpinfo_parse_addrs(const void *buf, size_t len, struct mptcpinfo *out);

/* "10.0.1.1:5301" or "[fd00::1]:5301"; "?" when not known. */
void mptcpinfo_addr_str(const struct mptcpinfo_addr *a, char *buf, size_t len);
/* Parses what mptcpinfo_addr_str wrote. 0 or -EINVAL. */
int mptcpinfo_addr_parse(const char *s, struct mptcpinfo_addr *out);

#endif
