/* pmtu: does the path to a peer carry packets of a given size? ICMP echo requests of exactly
 * that size on the wire, sent with the don't-fragment bit (IP_PMTUDISC_PROBE /
 * IPV6_PMTUDISC_PROBE: DF set, the kernel's cached path MTU ignored, so every probe tests the
 * path afresh) through a raw ICMP socket (root: CAP_NET_RAW). Only the peer's echo reply of the
 * same size proves the whole path, both ways, carries it. A router whose next hop is smaller
 * answers "fragmentation needed" / "packet too big" with its MTU, which is read from the same
 * socket (and which the kernel learns too); a hop that drops big packets silently is told
 * apart from a peer that answers nothing by a small echo. IPv4 and IPv6. */
#ifndef NETRIG_PMTU_H
#define NETRIG_PMTU_H

#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

struct pmtu_peer {
    char host[256]; /* as given */
    char addr[INET6_ADDRSTRLEN];
    struct sockaddr_storage sa;
    socklen_t salen;
    int family;
};

enum pmtu_verdict {
    PMTU_CARRIED,   /* an echo reply of the full size came back */
    PMTU_TOO_BIG,   /* a router said its next hop carries only `mtu` bytes */
    PMTU_LOCAL,     /* this host cannot send it: its interface or route is smaller */
    PMTU_SILENT,    /* no reply of that size (the caller tells a black hole from silence) */
    PMTU_UNREACHED, /* a router said the peer cannot be reached */
};

struct pmtu_result {
    enum pmtu_verdict verdict;
    unsigned mtu;                /* PMTU_TOO_BIG: the MTU the router gave (0: it gave none) */
    char from[INET6_ADDRSTRLEN]; /* who said so */
    unsigned sent;               /* probes sent */
    double rtt_ms;               /* PMTU_CARRIED: the round trip of the reply */
};

/* Resolves host (an address or a name) for probing. 0, or -1 with err. */
int pmtu_resolve(const char *host, struct pmtu_peer *p, char *err, size_t errlen);

/* The interface the route to the peer leaves by, and the path MTU the kernel knows for it now
 * (the route's or the interface's, or a smaller one learned from ICMP). 0, or -1 with err. */
int pmtu_route(const struct pmtu_peer *p, char ifname[IF_NAMESIZE], unsigned *mtu, char *err,
               size_t errlen);

/* Sends echo requests of size bytes (the whole IP packet) with DF, one every interval_ms, until
 * a reply of that size comes back, a router says the packet is too big, or timeout_ms passes.
 * 0 with r filled, or -1 with err (no raw socket: not root; size out of range). */
int pmtu_probe(const struct pmtu_peer *p, unsigned size, unsigned timeout_ms, unsigned interval_ms,
               struct pmtu_result *r, char *err, size_t errlen);

/* The smallest and largest packet a probe can be (IPv4: 28..65535; IPv6: 1280..65535). */
unsigned pmtu_min_size(int family);

#endif
