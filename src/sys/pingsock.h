/* pingsock: ICMP echo to one peer, for a latency probe beside the UDP and TCP ones (paths often
 * treat ICMP differently, and ping is what people compare with). A ping socket (SOCK_DGRAM,
 * IPPROTO_ICMP/ICMPV6: the kernel fills the identifier and checksum and hands back only our
 * replies) where net.ipv4.ping_group_range admits this process's group, else a raw socket
 * (needs CAP_NET_RAW; we filter the replies by identifier). Replies carry the kernel's receive
 * time (SO_TIMESTAMPNS, CLOCK_REALTIME). IPv4 and IPv6. */
#ifndef NETRIG_PINGSOCK_H
#define NETRIG_PINGSOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct pingsock {
    int fd;
    int family;
    bool raw;                   /* a raw socket (CAP_NET_RAW), not a ping socket */
    uint16_t id;                /* raw: the identifier we send and accept */
    struct sockaddr_storage to; /* the peer */
    socklen_t tolen;
};

/* Opens the socket toward peer (its port is ignored). 0, or -errno with one line in err
 * naming why neither kind could be opened and what to do. */
int pingsock_open(struct pingsock *ps, const struct sockaddr *peer, socklen_t len, char *err,
                  size_t errlen);
void pingsock_close(struct pingsock *ps);
/* "ping socket" or "raw socket" */
const char *pingsock_kind(const struct pingsock *ps);
/* One echo request numbered seq, with a 56-byte payload as ping's. 0 or -errno. */
int pingsock_send(struct pingsock *ps, uint16_t seq);
/* One datagram, without waiting: 1 and *seq, *at_real_ns (the kernel's receive time, else
 * CLOCK_REALTIME now) for an echo reply of ours; 0 for anything else or nothing (-EAGAIN
 * then); -errno on error. */
int pingsock_recv(struct pingsock *ps, uint16_t *seq, uint64_t *at_real_ns);

/* The Internet checksum of len bytes (for the raw IPv4 socket; exposed for tests). */
uint16_t pingsock_checksum(const void *buf, size_t len);

#endif
