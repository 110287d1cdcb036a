/* sockdiag: NETLINK_SOCK_DIAG dump of established TCP sockets with their tcp_info. */
#define _GNU_SOURCE
#include "sockdiag.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF_LEN 32768

static int send_request(int fd, int family)
{
    struct {
        struct nlmsghdr nlh;
        struct inet_diag_req_v2 r;
    } req;
    struct sockaddr_nl nl = {.nl_family = AF_NETLINK};

    memset(&req, 0, sizeof(req));
    req.nlh.nlmsg_len = sizeof(req);
    req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    req.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    req.nlh.nlmsg_seq = 1;
    req.r.sdiag_family = (uint8_t)family;
    req.r.sdiag_protocol = IPPROTO_TCP;
    req.r.idiag_ext =
        1 << (INET_DIAG_INFO - 1) | 1 << (INET_DIAG_CONG - 1) | 1 << (INET_DIAG_SKMEMINFO - 1);
    req.r.idiag_states = 1u << TCP_ESTABLISHED;
    if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&nl, sizeof(nl)) < 0)
        return -errno;
    return 0;
}

/* SK_MEMINFO_SNDBUF / RCVBUF of an INET_DIAG_SKMEMINFO attribute (an array of u32). */
static void mem_info(const char *data, struct sockdiag_tcp *s)
{
    uint32_t v[SK_MEMINFO_VARS];

    memcpy(v, data, sizeof(v));
    s->sndbuf = v[SK_MEMINFO_SNDBUF];
    s->rcvbuf = v[SK_MEMINFO_RCVBUF];
}

/* One inet_diag_msg: the socket's identity, its TCP_INFO, congestion control and buffers. */
static int one_msg(const struct nlmsghdr *h, int (*fn)(const struct sockdiag_tcp *, void *),
                   void *arg)
{
    const struct inet_diag_msg *m = NLMSG_DATA(h);
    const struct nlattr *a;
    int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*m));
    struct sockdiag_tcp s;

    if (len < 0)
        return 0;
    memset(&s, 0, sizeof(s));
    s.family = m->idiag_family;
    s.sport = ntohs(m->id.idiag_sport);
    s.dport = ntohs(m->id.idiag_dport);
    memcpy(&s.src, m->id.idiag_src, sizeof(s.src));
    memcpy(&s.dst, m->id.idiag_dst, sizeof(s.dst));
    s.cookie = (uint64_t)m->id.idiag_cookie[0] | (uint64_t)m->id.idiag_cookie[1] << 32;
    for (a = (const struct nlattr *)(m + 1);
         len >= (int)sizeof(*a) && a->nla_len >= sizeof(*a) && (int)a->nla_len <= len;) {
        const char *data = (const char *)a + NLA_HDRLEN;
        size_t dlen = a->nla_len - NLA_HDRLEN;
        int type = a->nla_type & NLA_TYPE_MASK;
        if (type == INET_DIAG_INFO)
            tcpinfo_from_raw(data, dlen, &s.ti);
        else if (type == INET_DIAG_CONG && dlen > 0)
            snprintf(s.cc, sizeof(s.cc), "%.*s", (int)strnlen(data, dlen), data);
        else if (type == INET_DIAG_SKMEMINFO && dlen >= SK_MEMINFO_VARS * sizeof(uint32_t))
            mem_info(data, &s);
        len -= NLA_ALIGN(a->nla_len);
        a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
    }
    return s.ti.valid ? fn(&s, arg) : 0;
}

/* Reads the dump's replies to its end. */
static int read_dump(int fd, char *buf, int (*fn)(const struct sockdiag_tcp *, void *), void *arg)
{
    for (;;) {
        ssize_t n = recv(fd, buf, BUF_LEN, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return -EPROTO;
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
             h = NLMSG_NEXT(h, n)) {
            int rc;
            if (h->nlmsg_type == NLMSG_DONE)
                return 0;
            if (h->nlmsg_type == NLMSG_ERROR) {
                const struct nlmsgerr *e = NLMSG_DATA(h);
                return e->error ? e->error : -EPROTO;
            }
            if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
                continue;
            rc = one_msg(h, fn, arg);
            if (rc)
                return rc;
        }
    }
}

int sockdiag_tcp_dump(int (*fn)(const struct sockdiag_tcp *s, void *arg), void *arg)
{
    static const int families[] = {AF_INET, AF_INET6};
    char *buf = malloc(BUF_LEN);
    int rc = 0;

    if (!buf)
        return -ENOMEM;
    for (size_t i = 0; i < 2 && !rc; i++) {
        int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
        if (fd < 0) {
            rc = -errno;
            break;
        }
        rc = send_request(fd, families[i]);
        if (!rc)
            rc = read_dump(fd, buf, fn, arg);
        close(fd);
        if (rc == -ENOENT && families[i] == AF_INET6)
            rc = 0; /* no IPv6 in this kernel */
    }
    free(buf);
    return rc;
}
