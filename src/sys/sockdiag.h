/* sockdiag: this network namespace's TCP sockets and their TCP_INFO, read with a
 * NETLINK_SOCK_DIAG dump (INET_DIAG_INFO), so netrig can watch connections other processes
 * own. Needs no privilege for the caller's namespace. */
#ifndef NETRIG_SOCKDIAG_H
#define NETRIG_SOCKDIAG_H

#include "tcpinfo.h"

#include <netinet/in.h>
#include <stdint.h>

struct sockdiag_tcp {
    uint64_t cookie;          /* the kernel's socket cookie: stable for the socket's life */
    int family;               /* AF_INET or AF_INET6 */
    struct in6_addr src, dst; /* IPv4 as the first 4 bytes */
    uint16_t sport, dport;    /* host byte order */
    struct tcpinfo ti;
    char cc[16];             /* congestion control (INET_DIAG_CONG), "" when not given */
    uint32_t sndbuf, rcvbuf; /* SO_SNDBUF / SO_RCVBUF (INET_DIAG_SKMEMINFO), 0 unknown */
};

/* Calls fn for every established TCP socket (IPv4, then IPv6) until fn returns non-zero.
 * Returns 0, fn's non-zero value, or a negative errno (no sock_diag in this kernel: -EPROTO
 * or -ENOENT). */
int sockdiag_tcp_dump(int (*fn)(const struct sockdiag_tcp *s, void *arg), void *arg);

#endif
