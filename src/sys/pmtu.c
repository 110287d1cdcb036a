/* pmtu: DF-marked ICMP echo probes of one size toward a peer, and what came back. */
#define _GNU_SOURCE
#include "pmtu.h"

#include "clock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/icmp6.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#ifndef ICMP_FILTER
#define ICMP_FILTER 1 /* <linux/icmp.h>, which clashes with <netinet/ip_icmp.h> */
#endif

#define TOKEN_LEN  16
#define RECV_BYTES 65536
#define SEQ_SLOTS  64

unsigned pmtu_min_size(int family)
{
    return family == AF_INET6 ? 40 + 8 + TOKEN_LEN : 20 + 8 + TOKEN_LEN;
}

int pmtu_resolve(const char *host, struct pmtu_peer *p, char *err, size_t errlen)
{
    struct addrinfo hints = {.ai_socktype = SOCK_DGRAM}, *res = NULL;
    int rc;

    memset(p, 0, sizeof(*p));
    if (!host || !*host || strlen(host) >= sizeof(p->host)) {
        snprintf(err, errlen, "--peer '%s' is not a host name or address", host ? host : "");
        return -1;
    }
    rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc || !res) {
        snprintf(err, errlen, "--peer '%s': cannot resolve it (%s): give its address", host,
                 rc ? gai_strerror(rc) : "no address");
        if (res)
            freeaddrinfo(res);
        return -1;
    }
    snprintf(p->host, sizeof(p->host), "%s", host);
    memcpy(&p->sa, res->ai_addr, res->ai_addrlen);
    p->salen = res->ai_addrlen;
    p->family = res->ai_family;
    freeaddrinfo(res);
    if (getnameinfo((struct sockaddr *)&p->sa, p->salen, p->addr, sizeof(p->addr), NULL, 0,
                    NI_NUMERICHOST))
        snprintf(p->addr, sizeof(p->addr), "%s", host);
    return 0;
}

static bool same_addr(const struct sockaddr *a, const struct sockaddr *b)
{
    if (a->sa_family != b->sa_family)
        return false;
    if (a->sa_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                   &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
}

int pmtu_route(const struct pmtu_peer *p, char ifname[IF_NAMESIZE], unsigned *mtu, char *err,
               size_t errlen)
{
    struct sockaddr_storage to = p->sa, me;
    socklen_t melen = sizeof(me), ml = sizeof(int);
    struct ifaddrs *ifs = NULL;
    int fd = socket(p->family, SOCK_DGRAM | SOCK_CLOEXEC, 0), m = 0, rc = -1;

    ifname[0] = '\0';
    if (p->family == AF_INET)
        ((struct sockaddr_in *)&to)->sin_port = htons(9);
    else
        ((struct sockaddr_in6 *)&to)->sin6_port = htons(9);
    if (fd < 0 || connect(fd, (struct sockaddr *)&to, p->salen) ||
        getsockname(fd, (struct sockaddr *)&me, &melen) ||
        getsockopt(fd, p->family == AF_INET ? IPPROTO_IP : IPPROTO_IPV6,
                   p->family == AF_INET ? IP_MTU : IPV6_MTU, &m, &ml)) {
        snprintf(err, errlen, "no route to --peer %s (%s): check the address", p->host,
                 strerror(errno));
        goto out;
    }
    *mtu = m > 0 ? (unsigned)m : 0;
    if (getifaddrs(&ifs)) {
        snprintf(err, errlen, "cannot list this host's interfaces: %s", strerror(errno));
        goto out;
    }
    for (struct ifaddrs *i = ifs; i && !ifname[0]; i = i->ifa_next)
        if (i->ifa_addr && same_addr(i->ifa_addr, (struct sockaddr *)&me))
            snprintf(ifname, IF_NAMESIZE, "%s", i->ifa_name);
    if (!ifname[0])
        snprintf(err, errlen, "cannot tell which interface the route to --peer %s leaves by",
                 p->host);
    rc = ifname[0] ? 0 : -1;
out:
    if (ifs)
        freeifaddrs(ifs);
    if (fd >= 0)
        close(fd);
    return rc;
}

/* ---- probing ----------------------------------------------------------------------------- */

struct prober {
    const struct pmtu_peer *p;
    int fd;
    uint16_t id, seq;
    unsigned size;
    unsigned char token[TOKEN_LEN];
    unsigned char *pkt, *buf;
    double sent_at[SEQ_SLOTS];
};

static uint16_t checksum(const unsigned char *d, size_t n)
{
    uint32_t sum = 0;

    for (size_t i = 0; i + 1 < n; i += 2)
        sum += (uint32_t)(d[i] << 8 | d[i + 1]);
    if (n & 1)
        sum += (uint32_t)(d[n - 1] << 8);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return htons((uint16_t)~sum);
}

static int open_socket(struct prober *pr, char *err, size_t errlen)
{
    bool v4 = pr->p->family == AF_INET;
    int probe = v4 ? IP_PMTUDISC_PROBE : IPV6_PMTUDISC_PROBE;

    pr->fd = socket(pr->p->family, SOCK_RAW | SOCK_CLOEXEC, v4 ? IPPROTO_ICMP : IPPROTO_ICMPV6);
    if (pr->fd < 0) {
        snprintf(err, errlen,
                 errno == EPERM || errno == EACCES
                     ? "probing the path MTU needs a raw ICMP socket: run netrig tune as root (%s)"
                     : "cannot open a raw ICMP socket to probe the path MTU: %s",
                 strerror(errno));
        return -1;
    }
    if (setsockopt(pr->fd, v4 ? IPPROTO_IP : IPPROTO_IPV6, v4 ? IP_MTU_DISCOVER : IPV6_MTU_DISCOVER,
                   &probe, sizeof(probe))) {
        snprintf(err, errlen, "cannot set the don't-fragment bit on the probe socket: %s",
                 strerror(errno));
        return -1;
    }
    if (v4) { /* only echo replies and the errors a probe can draw */
        uint32_t drop = ~((1u << ICMP_ECHOREPLY) | (1u << ICMP_DEST_UNREACH));
        (void)setsockopt(pr->fd, SOL_RAW, ICMP_FILTER, &drop, sizeof(drop));
    } else {
        struct icmp6_filter f;
        ICMP6_FILTER_SETBLOCKALL(&f);
        ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &f);
        ICMP6_FILTER_SETPASS(ICMP6_PACKET_TOO_BIG, &f);
        ICMP6_FILTER_SETPASS(ICMP6_DST_UNREACH, &f);
        (void)setsockopt(pr->fd, IPPROTO_ICMPV6, ICMP6_FILTER, &f, sizeof(f));
    }
    return 0;
}

/* One echo request; 0 sent, or the errno of sendto. */
static int send_one(struct prober *pr)
{
    bool v4 = pr->p->family == AF_INET;
    size_t n = pr->size - (v4 ? 20 : 40); /* the ICMP message */
    struct icmphdr *h = (struct icmphdr *)pr->pkt;

    pr->seq++;
    memset(pr->pkt, 0, 8);
    h->type = v4 ? ICMP_ECHO : ICMP6_ECHO_REQUEST; /* same layout for ICMPv6 */
    h->un.echo.id = htons(pr->id);
    h->un.echo.sequence = htons(pr->seq);
    memcpy(pr->pkt + 8, pr->token, TOKEN_LEN);
    for (size_t i = 8 + TOKEN_LEN; i < n; i++)
        pr->pkt[i] = (unsigned char)i;
    if (v4)
        h->checksum = checksum(pr->pkt, n); /* the kernel fills it for ICMPv6 */
    pr->sent_at[pr->seq % SEQ_SLOTS] = clock_mono_s();
    if (sendto(pr->fd, pr->pkt, n, 0, (const struct sockaddr *)&pr->p->sa, pr->p->salen) < 0)
        return errno;
    return 0;
}

/* Our echo request inside an ICMP error (the original header and at least 8 bytes of it). */
static bool ours_inside(const struct prober *pr, const unsigned char *in, size_t n)
{
    const struct icmphdr *h;

    if (pr->p->family == AF_INET) {
        const struct iphdr *ip = (const struct iphdr *)in;
        size_t ihl;
        if (n < sizeof(*ip) || (ihl = (size_t)ip->ihl * 4) < 20 || n < ihl + 8 ||
            ip->protocol != IPPROTO_ICMP ||
            ip->daddr != ((const struct sockaddr_in *)&pr->p->sa)->sin_addr.s_addr)
            return false;
        h = (const struct icmphdr *)(in + ihl);
        return h->type == ICMP_ECHO && ntohs(h->un.echo.id) == pr->id;
    }
    const struct ip6_hdr *ip6 = (const struct ip6_hdr *)in;
    if (n < sizeof(*ip6) + 8 || ip6->ip6_nxt != IPPROTO_ICMPV6 ||
        memcmp(&ip6->ip6_dst, &((const struct sockaddr_in6 *)&pr->p->sa)->sin6_addr, 16))
        return false;
    h = (const struct icmphdr *)(in + sizeof(*ip6));
    return h->type == ICMP6_ECHO_REQUEST && ntohs(h->un.echo.id) == pr->id;
}

/* One received ICMP message (after any IPv4 header): 1 when it decides the probe. */
static int judge(struct prober *pr, const unsigned char *m, size_t n, size_t wire,
                 const struct sockaddr *from, struct pmtu_result *r)
{
    bool v4 = pr->p->family == AF_INET;
    const struct icmphdr *h = (const struct icmphdr *)m;

    if (n < 8)
        return 0;
    if (h->type == (v4 ? ICMP_ECHOREPLY : ICMP6_ECHO_REPLY)) {
        uint16_t seq = ntohs(h->un.echo.sequence);
        if (ntohs(h->un.echo.id) != pr->id || n < 8 + TOKEN_LEN ||
            memcmp(m + 8, pr->token, TOKEN_LEN) || wire != pr->size ||
            !same_addr(from, (const struct sockaddr *)&pr->p->sa))
            return 0;
        r->verdict = PMTU_CARRIED;
        r->rtt_ms = (clock_mono_s() - pr->sent_at[seq % SEQ_SLOTS]) * 1e3;
        return 1;
    }
    if (!ours_inside(pr, m + 8, n - 8))
        return 0;
    if (v4 && h->type == ICMP_DEST_UNREACH && h->code == ICMP_FRAG_NEEDED) {
        r->verdict = PMTU_TOO_BIG;
        r->mtu = ntohs(h->un.frag.mtu);
    } else if (!v4 && h->type == ICMP6_PACKET_TOO_BIG) {
        r->verdict = PMTU_TOO_BIG;
        r->mtu = ntohl(((const struct icmp6_hdr *)m)->icmp6_mtu);
    } else {
        r->verdict = PMTU_UNREACHED;
    }
    return 1;
}

static int receive(struct prober *pr, struct pmtu_result *r)
{
    struct sockaddr_storage from;
    socklen_t fl = sizeof(from);
    ssize_t n = recvfrom(pr->fd, pr->buf, RECV_BYTES, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
    const unsigned char *m = pr->buf;
    size_t wire = (size_t)n + 40;
    int done;

    if (n <= 0)
        return 0;
    if (pr->p->family == AF_INET) { /* a raw IPv4 socket hands over the IP header too */
        const struct iphdr *ip = (const struct iphdr *)pr->buf;
        size_t ihl = (size_t)ip->ihl * 4;
        if ((size_t)n < sizeof(*ip) || ihl < 20 || (size_t)n < ihl)
            return 0;
        wire = ntohs(ip->tot_len);
        m += ihl;
        n -= (ssize_t)ihl;
    }
    done = judge(pr, m, (size_t)n, wire, (struct sockaddr *)&from, r);
    if (done && r->verdict != PMTU_CARRIED)
        getnameinfo((struct sockaddr *)&from, fl, r->from, sizeof(r->from), NULL, 0,
                    NI_NUMERICHOST);
    return done;
}

static int run(struct prober *pr, unsigned timeout_ms, unsigned interval_ms, struct pmtu_result *r)
{
    double start = clock_mono_s(), deadline = start + timeout_ms / 1e3, next = start;

    for (;;) {
        double t = clock_mono_s();
        if (t >= deadline)
            return 0; /* r->verdict stays PMTU_SILENT */
        if (t >= next) {
            int e = send_one(pr);
            r->sent++;
            if (e == EMSGSIZE) {
                r->verdict = PMTU_LOCAL;
                return 0;
            }
            if (e == ENETUNREACH || e == EHOSTUNREACH) {
                r->verdict = PMTU_UNREACHED;
                snprintf(r->from, sizeof(r->from), "this host");
                return 0;
            }
            next = t + interval_ms / 1e3;
        }
        double until = next < deadline ? next : deadline;
        struct pollfd pfd = {.fd = pr->fd, .events = POLLIN};
        int ms = (int)((until - clock_mono_s()) * 1e3) + 1;
        if (poll(&pfd, 1, ms > 0 ? ms : 0) > 0)
            while (!(pfd.revents & ~POLLIN) && receive(pr, r) == 0)
                if (poll(&pfd, 1, 0) <= 0)
                    break;
        if (r->verdict != PMTU_SILENT)
            return 0;
    }
}

int pmtu_probe(const struct pmtu_peer *p, unsigned size, unsigned timeout_ms, unsigned interval_ms,
               struct pmtu_result *r, char *err, size_t errlen)
{
    struct prober pr = {.p = p, .fd = -1, .size = size};
    int rc = -1;

    memset(r, 0, sizeof(*r));
    r->verdict = PMTU_SILENT;
    if (size < pmtu_min_size(p->family) || size > 65535) {
        snprintf(err, errlen, "a probe of %u bytes cannot be sent: use %u to 65535", size,
                 pmtu_min_size(p->family));
        return -1;
    }
    pr.pkt = malloc(size);
    pr.buf = malloc(RECV_BYTES);
    if (!pr.pkt || !pr.buf) {
        snprintf(err, errlen, "out of memory for the path-MTU probe");
        goto out;
    }
    if (getrandom(pr.token, sizeof(pr.token), 0) != sizeof(pr.token) ||
        getrandom(&pr.id, sizeof(pr.id), 0) != sizeof(pr.id)) {
        snprintf(err, errlen, "cannot draw a random probe id: %s", strerror(errno));
        goto out;
    }
    if (open_socket(&pr, err, errlen))
        goto out;
    rc = run(&pr, timeout_ms, interval_ms ? interval_ms : 200, r);
out:
    if (pr.fd >= 0)
        close(pr.fd);
    free(pr.pkt);
    free(pr.buf);
    return rc;
}
