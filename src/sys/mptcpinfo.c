/* mptcpinfo: MPTCP sockets and their subflows. The only place that knows the kernel's MPTCP
 * structures; struct mptcp_info is read by offset because the headers a build has may be
 * older than the running kernel (6.1's ends at csum_enabled, 6.18's carries byte counters). */
#include "mptcpinfo.h"
#include "hostfs.h"
#include "tcpinfo.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SOL_MPTCP
#define SOL_MPTCP 284
#endif
#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
/* getsockopt names (linux/mptcp.h) */
#define OPT_INFO    1
#define OPT_TCPINFO 2
#define OPT_ADDRS   3

/* struct mptcp_info: offsets of the fields read (the kernel's uapi layout) */
#define INFO_FLAGS          8  /* u32: bit 0 fallback */
#define INFO_RETRANSMITS    44 /* u32 (6.7+) */
#define INFO_BYTES_RETRANS  48 /* u64 (6.7+) */
#define INFO_BYTES_SENT     56
#define INFO_BYTES_RECEIVED 64
#define INFO_BYTES_ACKED    72
#define INFO_FLAG_FALLBACK  1u
#define INFO_BUF            256

/* struct mptcp_subflow_data: four u32, 8-byte aligned */
struct sfdata {
    uint32_t size_subflow_data, num_subflows, size_kernel, size_user;
} __attribute__((aligned(8)));

/* struct mptcp_subflow_addrs: two sockaddr_storage-sized unions, local then remote */
#define ADDRS_SIZE 256
#define ADDR_HALF  128

int mptcpinfo_proto(void) { return IPPROTO_MPTCP; }

int mptcpinfo_why_not(const char *sysroot, char *why, size_t len)
{
    uint64_t enabled = 1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_MPTCP), e;

    if (fd >= 0) {
        close(fd);
        return 0;
    }
    e = errno;
    if (!hostfs_read_u64(sysroot, "/proc/sys/net/mptcp/enabled", &enabled) && !enabled)
        snprintf(why, len, "MPTCP is disabled in the network namespace (net.mptcp.enabled = 0)");
    else if (e == EPROTONOSUPPORT || e == ENOPROTOOPT || e == EINVAL || e == EAFNOSUPPORT)
        snprintf(why, len, "the kernel has no MPTCP (socket(IPPROTO_MPTCP): %s)", strerror(e));
    else
        snprintf(why, len, "cannot open an MPTCP socket: %s", strerror(e));
    return -e;
}

int mptcpinfo_check(const char *sysroot, char *err, size_t errlen)
{
    char why[160];
    int rc = mptcpinfo_why_not(sysroot, why, sizeof(why));

    if (rc)
        snprintf(err, errlen, "%s: %s, or leave out --mptcp", why,
                 strstr(why, "enabled = 0")    ? "enable it with 'sysctl -w net.mptcp.enabled=1'"
                 : strstr(why, "has no MPTCP") ? "run on a kernel built with CONFIG_MPTCP"
                                               : "see the error");
    return rc;
}

bool mptcpinfo_is_mptcp(int fd)
{
    int proto = 0;
    socklen_t len = sizeof(proto);

    return !getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) && proto == IPPROTO_MPTCP;
}

static uint32_t get32(const uint8_t *b, size_t len, size_t off)
{
    uint32_t v = 0;

    if (len >= off + sizeof(v))
        memcpy(&v, b + off, sizeof(v));
    return v;
}

static uint64_t get64(const uint8_t *b, size_t len, size_t off)
{
    uint64_t v = 0;

    if (len >= off + sizeof(v))
        memcpy(&v, b + off, sizeof(v));
    return v;
}

int mptcpinfo_parse_info(const void *buf, size_t len, struct mptcpinfo *out)
{
    const uint8_t *b = buf;

    if (!buf && len)
        return -EINVAL;
    out->valid = true;
    /* a connection that fell back answers with nothing (or with the flag, 6.x) */
    out->fallback = len < INFO_FLAGS + 4 || (get32(b, len, INFO_FLAGS) & INFO_FLAG_FALLBACK);
    out->retransmits = get32(b, len, INFO_RETRANSMITS);
    out->bytes_retrans = get64(b, len, INFO_BYTES_RETRANS);
    out->bytes_sent = get64(b, len, INFO_BYTES_SENT);
    out->bytes_received = get64(b, len, INFO_BYTES_RECEIVED);
    out->bytes_acked = get64(b, len, INFO_BYTES_ACKED);
    return 0;
}

/* The header both subflow options start with; *stride, *n: each element's size and how many
 * of them the buffer holds (at most MPTCPINFO_MAX_SUB); *total: how many the kernel has. */
static int sfdata_parse(const void *buf, size_t len, size_t *stride, uint32_t *n, uint32_t *total)
{
    struct sfdata d;
    size_t room;

    if (!buf || len < sizeof(d))
        return -EINVAL;
    memcpy(&d, buf, sizeof(d));
    if (d.size_subflow_data < sizeof(d) || d.size_subflow_data > len)
        return -EINVAL;
    *n = *total = 0;
    *stride = 1;
    if (!d.num_subflows)
        return (int)d.size_subflow_data;
    if (!d.size_user)
        return -EINVAL;
    room = (len - d.size_subflow_data) / d.size_user;
    *stride = d.size_user;
    *total = d.num_subflows;
    *n = d.num_subflows < room ? d.num_subflows : (uint32_t)room;
    if (*n > MPTCPINFO_MAX_SUB)
        *n = MPTCPINFO_MAX_SUB;
    return (int)d.size_subflow_data;
}

int mptcpinfo_parse_tcpinfo(const void *buf, size_t len, struct mptcpinfo *out)
{
    size_t stride;
    uint32_t n, total;
    int off = sfdata_parse(buf, len, &stride, &n, &total);

    if (off < 0)
        return off;
    out->subflows = total;
    out->nsub = n;
    for (uint32_t i = 0; i < n; i++) {
        struct mptcpinfo_sub *s = &out->sub[i];
        struct tcpinfo ti;

        if (tcpinfo_from_raw((const uint8_t *)buf + off + i * stride, stride, &ti)) {
            out->nsub = i; /* shorter than the oldest struct tcp_info */
            return -EINVAL;
        }
        s->bytes_sent = ti.bytes_sent;
        s->bytes_acked = ti.bytes_acked;
        s->bytes_received = ti.bytes_received;
        s->retransmits = ti.total_retrans;
        s->rtt_us = ti.rtt_us;
    }
    return 0;
}

static void addr_from(const uint8_t *sa, struct mptcpinfo_addr *a)
{
    sa_family_t fam;

    memset(a, 0, sizeof(*a));
    memcpy(&fam, sa, sizeof(fam));
    if (fam == AF_INET) {
        struct sockaddr_in s;
        memcpy(&s, sa, sizeof(s));
        a->family = 4;
        memcpy(a->addr, &s.sin_addr, 4);
        a->port = ntohs(s.sin_port);
    } else if (fam == AF_INET6) {
        struct sockaddr_in6 s;
        memcpy(&s, sa, sizeof(s));
        a->family = 6;
        memcpy(a->addr, &s.sin6_addr, 16);
        a->port = ntohs(s.sin6_port);
    }
}

int mptcpinfo_parse_addrs(const void *buf, size_t len, struct mptcpinfo *out)
{
    size_t stride;
    uint32_t n, total;
    int off = sfdata_parse(buf, len, &stride, &n, &total);

    if (off < 0)
        return off;
    if (n && stride < ADDRS_SIZE)
        return -EINVAL;
    for (uint32_t i = 0; i < n && i < out->nsub; i++) {
        const uint8_t *e = (const uint8_t *)buf + off + i * stride;
        addr_from(e, &out->sub[i].local);
        addr_from(e + ADDR_HALF, &out->sub[i].remote);
    }
    return 0;
}

int mptcpinfo_read(int fd, struct mptcpinfo *out)
{
    uint8_t info[INFO_BUF];
    struct {
        struct sfdata d;
        uint8_t e[MPTCPINFO_MAX_SUB][sizeof(struct tcp_info)];
    } ti;
    struct {
        struct sfdata d;
        uint8_t e[MPTCPINFO_MAX_SUB][ADDRS_SIZE];
    } ad;
    socklen_t len = sizeof(info);

    memset(out, 0, sizeof(*out));
    if (getsockopt(fd, SOL_MPTCP, OPT_INFO, info, &len))
        return -errno;
    mptcpinfo_parse_info(info, len, out);
    memset(&ti.d, 0, sizeof(ti.d));
    ti.d.size_subflow_data = sizeof(ti.d);
    ti.d.size_user = sizeof(ti.e[0]);
    len = sizeof(ti);
    if (!getsockopt(fd, SOL_MPTCP, OPT_TCPINFO, &ti, &len))
        mptcpinfo_parse_tcpinfo(&ti, len, out);
    memset(&ad.d, 0, sizeof(ad.d));
    ad.d.size_subflow_data = sizeof(ad.d);
    ad.d.size_user = sizeof(ad.e[0]);
    len = sizeof(ad);
    if (!getsockopt(fd, SOL_MPTCP, OPT_ADDRS, &ad, &len))
        mptcpinfo_parse_addrs(&ad, len, out);
    return 0;
}

void mptcpinfo_addr_str(const struct mptcpinfo_addr *a, char *buf, size_t len)
{
    char h[INET6_ADDRSTRLEN];

    if (a->family == 4 && inet_ntop(AF_INET, a->addr, h, sizeof(h)))
        snprintf(buf, len, "%s:%u", h, a->port);
    else if (a->family == 6 && inet_ntop(AF_INET6, a->addr, h, sizeof(h)))
        snprintf(buf, len, "[%s]:%u", h, a->port);
    else
        snprintf(buf, len, "?");
}

int mptcpinfo_addr_parse(const char *s, struct mptcpinfo_addr *out)
{
    char h[INET6_ADDRSTRLEN + 2], *end;
    const char *colon = strrchr(s, ':');
    size_t hl;
    unsigned long port;

    memset(out, 0, sizeof(*out));
    if (!strcmp(s, "?"))
        return 0;
    if (!colon || colon == s)
        return -EINVAL;
    hl = (size_t)(colon - s);
    if (hl >= sizeof(h))
        return -EINVAL;
    memcpy(h, s, hl);
    h[hl] = 0;
    errno = 0;
    port = strtoul(colon + 1, &end, 10);
    if (*end || end == colon + 1 || port > 65535 || errno)
        return -EINVAL;
    out->port = (uint16_t)port;
    if (h[0] == '[' && hl > 2 && h[hl - 1] == ']') {
        h[hl - 1] = 0;
        if (inet_pton(AF_INET6, h + 1, out->addr) != 1)
            return -EINVAL;
        out->family = 6;
        return 0;
    }
    if (inet_pton(AF_INET, h, out->addr) != 1)
        return -EINVAL;
    out->family = 4;
    return 0;
}
