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
    uint32_t window;        /* SO_SNDBUF and SO_RCVBUF */
    uint32_t mss;           /* TCP_MAXSEG, before connect */
    const char *congestion; /* TCP_CONGESTION; NULL or "" = the system's */
    bool nodelay;           /* TCP_NODELAY */
    uint64_t fq_rate_bps;   /* SO_MAX_PACING_RATE (senders), bits/s */
    bool zerocopy;          /* SO_ZEROCOPY (senders) */
};

/* Connects (blocking, bounded by timeout_ms). fo: a data flow's pre-connect options (window,
 * MSS; TCP_NODELAY only if asked), NULL for a control connection (TCP_NODELAY). bind_addr may
 * be NULL. Returns fd or -errno with err filled. */
int sock_connect(const struct sock_addr *to, const char *bind_addr, const struct sock_flow_opts *fo,
                 int timeout_ms, char *err, size_t errlen);
/* Listens on bind_addr (NULL: all addresses, IPv6 dual-stack when possible) and port
 * (0: ephemeral). Returns fd or -errno. */
int sock_listen(const char *bind_addr, uint16_t port, int family, char *err, size_t errlen);
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
