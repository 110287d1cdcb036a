/* sock: socket set-up helpers (resolve, connect, listen, options) and bounded blocking I/O
 * for the control channel. Nothing here runs on the data hot path. */
#ifndef NETRIG_SOCK_H
#define NETRIG_SOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define SOCK_DEFAULT_PORT 5301

struct sock_addr {
    struct sockaddr_storage ss;
    socklen_t len;
};

/* family: 0 any, 4 or 6. Numeric or DNS names; first usable answer. */
int sock_resolve(const char *host, uint16_t port, int family, struct sock_addr *out, char *err,
                 size_t errlen);
/* "127.0.0.1:5301" or "[::1]:5301". */
void sock_addr_str(const struct sockaddr *sa, char *buf, size_t len);
/* Numeric host part only. */
void sock_addr_host(const struct sockaddr *sa, char *buf, size_t len);

/* A data flow's socket options, filled by the flow layer from the test's parameters. Zero
 * values leave the kernel's defaults. */
struct sock_flow_opts {
    bool tcp;               /* a TCP socket: the TCP options apply */
    uint32_t window;        /* SO_SNDBUF and SO_RCVBUF */
    uint32_t mss;           /* TCP_MAXSEG, before connect */
    const char *congestion; /* TCP_CONGESTION; NULL or "" = the system's */
    bool nodelay;           /* TCP_NODELAY */
    uint64_t fq_rate_bps;   /* SO_MAX_PACING_RATE (senders), bits/s */
    bool zerocopy;          /* SO_ZEROCOPY (senders) */
    uint8_t tos;            /* IP_TOS, or IPV6_TCLASS on IPv6 sockets (both set there) */
    bool dont_fragment;     /* IP_MTU_DISCOVER / IPV6_MTU_DISCOVER = PMTUDISC_DO (UDP) */
    bool mptcp;             /* a Multipath TCP socket (IPPROTO_MPTCP; sock_connect) */
    uint32_t notsent_lowat; /* TCP_NOTSENT_LOWAT (senders), bytes; 0 = the kernel's */
    bool notsent_auto;      /* notsent_lowat is netrig's choice: a kernel without it is no error */
};

/* Where a client's sockets start from: -B, --bind-dev, --cport. NULL: anywhere. */
struct sock_local {
    const char *addr; /* -B: local address; NULL or "" = any */
    const char *dev;  /* --bind-dev: SO_BINDTODEVICE; NULL or "" = any */
    uint16_t port;    /* --cport: local port of this socket; 0 = ephemeral */
};

/* Binds fd (of family af) as local says: device first, then address and port. 0, or -errno
 * with err naming the value and what to do. */
int sock_bind_local(int fd, int af, const struct sock_local *local, char *err, size_t errlen);
/* Checks that an interface of that name exists (for the command line). */
int sock_dev_check(const char *dev, char *err, size_t errlen);
/* The IP TOS byte (traffic class on IPv6 sockets, and IP_TOS too for IPv4-mapped peers). */
int sock_set_tos(int fd, uint8_t tos);

/* Connects (blocking, bounded by timeout_ms). fo: a data flow's pre-connect options (window,
 * MSS, TOS; TCP_NODELAY only if asked), NULL for a control connection (TCP_NODELAY). local
 * may be NULL. Returns fd or -errno with err filled. */
int sock_connect(const struct sock_addr *to, const struct sock_local *local,
                 const struct sock_flow_opts *fo, int timeout_ms, char *err, size_t errlen);
/* Listens on bind_addr (NULL: all addresses, IPv6 dual-stack when possible) and port
 * (0: ephemeral). Returns fd or -errno. */
int sock_listen(const char *bind_addr, uint16_t port, int family, char *err, size_t errlen);
/* The same with a protocol for socket(): 0 (TCP) or mptcpinfo_proto() (an MPTCP listener,
 * which hands out plain TCP sockets to clients that do not ask for MPTCP). */
int sock_listen_proto(const char *bind_addr, uint16_t port, int family, int proto, char *err,
                      size_t errlen);
uint16_t sock_local_port(int fd);

/* Per-flow options after connect/accept: window, congestion control, nodelay, pacing,
 * zero-copy. warn receives non-fatal notes (e.g. a capped window). */
int sock_apply_flow_opts(int fd, const struct sock_flow_opts *fo, bool sender, char *err,
                         size_t errlen, char *warn, size_t warnlen);
int sock_set_nonblock(int fd, bool on);

/* Whole-buffer I/O with a deadline. 0, -ETIMEDOUT, -ENODATA (peer closed) or -errno. */
int sock_read_full(int fd, void *buf, size_t len, int timeout_ms);
int sock_write_full(int fd, const void *buf, size_t len, int timeout_ms);

/* Space-separated list of congestion control algorithms this process may use here
 * (all loaded ones as root, tcp_allowed_congestion_control otherwise). */
int sock_cc_available(const char *sysroot, char *buf, size_t len);

#endif
