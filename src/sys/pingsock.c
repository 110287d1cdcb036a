/* pingsock: ICMP echo through a ping socket, else a raw one. */
#define _GNU_SOURCE
#include "pingsock.h"

#include "clock.h"

#include <errno.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define PING_PAYLOAD 56

uint16_t pingsock_checksum(const void *buf, size_t len)
{
    const uint8_t *b = buf;
    uint32_t sum = 0;

    for (size_t i = 0; i + 1 < len; i += 2)
        sum += (uint32_t)(b[i] << 8 | b[i + 1]);
    if (len & 1)
        sum += (uint32_t)b[len - 1] << 8;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

int pingsock_open(struct pingsock *ps, const struct sockaddr *peer, socklen_t len, char *err,
                  size_t errlen)
{
    int v6 = peer->sa_family == AF_INET6, proto = v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP, one = 1;
    int e1, e2;

    memset(ps, 0, sizeof(*ps));
    ps->family = peer->sa_family;
    if (len > sizeof(ps->to))
        return -EINVAL;
    memcpy(&ps->to, peer, len);
    ps->tolen = len;
    ps->fd = socket(ps->family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
    e1 = ps->fd < 0 ? errno : 0;
    if (ps->fd < 0) {
        ps->fd = socket(ps->family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
        e2 = ps->fd < 0 ? errno : 0;
        if (ps->fd < 0) {
            snprintf(err, errlen,
                     "cannot send ICMP echo: a ping socket is refused (%s: this group is "
                     "outside net.ipv4.ping_group_range) and a raw one too (%s: needs "
                     "CAP_NET_RAW); widen the range (sysctl net.ipv4.ping_group_range='0 "
                     "2147483647') or run as root, or drop --icmp",
                     strerror(e1), strerror(e2));
            return -e2;
        }
        ps->raw = true;
        if (getrandom(&ps->id, sizeof(ps->id), 0) != sizeof(ps->id))
            ps->id = (uint16_t)getpid();
    }
    setsockopt(ps->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
    if (!ps->raw && connect(ps->fd, peer, len) < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot send ICMP echo to the server: %s", strerror(e));
        close(ps->fd);
        ps->fd = -1;
        return -e;
    }
    return 0;
}

void pingsock_close(struct pingsock *ps)
{
    if (ps->fd >= 0)
        close(ps->fd);
    ps->fd = -1;
}

const char *pingsock_kind(const struct pingsock *ps)
{
    return ps->raw ? "raw socket" : "ping socket";
}

int pingsock_send(struct pingsock *ps, uint16_t seq)
{
    uint8_t pkt[8 + PING_PAYLOAD] = {0};
    bool v6 = ps->family == AF_INET6;
    uint16_t sum;
    ssize_t n;

    pkt[0] = v6 ? ICMP6_ECHO_REQUEST : ICMP_ECHO;
    pkt[4] = (uint8_t)(ps->id >> 8), pkt[5] = (uint8_t)ps->id; /* a ping socket sets its own */
    pkt[6] = (uint8_t)(seq >> 8), pkt[7] = (uint8_t)seq;
    if (ps->raw && !v6) { /* the kernel sums ping sockets and ICMPv6 */
        sum = pingsock_checksum(pkt, sizeof(pkt));
        pkt[2] = (uint8_t)(sum >> 8), pkt[3] = (uint8_t)sum;
    }
    n = ps->raw ? sendto(ps->fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&ps->to, ps->tolen)
                : send(ps->fd, pkt, sizeof(pkt), 0);
    if (n < 0 && errno != EAGAIN && errno != ENOBUFS)
        return -errno;
    return 0;
}

int pingsock_recv(struct pingsock *ps, uint16_t *seq, uint64_t *at_real_ns)
{
    uint8_t buf[1500], ctl[CMSG_SPACE(sizeof(struct timespec))];
    struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
    struct sockaddr_storage from;
    struct msghdr mh = {.msg_name = &from,
                        .msg_namelen = sizeof(from),
                        .msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = ctl,
                        .msg_controllen = sizeof(ctl)};
    bool v6 = ps->family == AF_INET6;
    const uint8_t *icmp = buf;
    ssize_t n = recvmsg(ps->fd, &mh, MSG_DONTWAIT);
    size_t left;

    if (n < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -errno;
    left = (size_t)n;
    if (ps->raw && !v6) { /* a raw IPv4 socket hands over the IP header too */
        size_t ihl = left ? (size_t)(buf[0] & 0x0f) * 4 : 0;
        if (ihl < 20 || ihl > left)
            return 0;
        icmp += ihl;
        left -= ihl;
    }
    if (left < 8 || icmp[0] != (v6 ? ICMP6_ECHO_REPLY : ICMP_ECHOREPLY))
        return 0;
    if (ps->raw) {
        uint16_t id = (uint16_t)(icmp[4] << 8 | icmp[5]);
        const struct sockaddr_in6 *a6 = (const void *)&from, *b6 = (const void *)&ps->to;
        const struct sockaddr_in *a4 = (const void *)&from, *b4 = (const void *)&ps->to;
        bool same = v6 ? !memcmp(&a6->sin6_addr, &b6->sin6_addr, sizeof(a6->sin6_addr))
                       : a4->sin_addr.s_addr == b4->sin_addr.s_addr;
        if (id != ps->id || !same)
            return 0; /* someone else's ping, or another host's reply */
    }
    *seq = (uint16_t)(icmp[6] << 8 | icmp[7]);
    *at_real_ns = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
            struct timespec ts;
            memcpy(&ts, CMSG_DATA(c), sizeof(ts));
            *at_real_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
        }
    if (!*at_real_ns)
        *at_real_ns = clock_real_ns();
    return 1;
}
