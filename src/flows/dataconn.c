/* dataconn: UDP flow sockets and crr listeners. */
#define _GNU_SOURCE
#include "dataconn.h"
#include "clock.h"

#include "dsclass.h"
#include "engine.h"
#include "flow.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static socklen_t addr_len(const struct sockaddr_storage *a)
{
    return a->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

static uint16_t port_of(int fd) { return sock_local_port(fd); }

int dataconn_local_addr(int fd, struct sockaddr_storage *out)
{
    socklen_t len = sizeof(*out);

    if (getsockname(fd, (struct sockaddr *)out, &len))
        return -errno;
    if (out->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)out)->sin6_port = 0;
    else
        ((struct sockaddr_in *)out)->sin_port = 0;
    return 0;
}

int dataconn_tcp_connect(const struct sock_addr *to, const struct sock_local *local,
                         const struct params *p, uint32_t flow, int timeout_ms, char *err,
                         size_t errlen)
{
    struct sock_flow_opts fo;

    flow_sock_opts(p, true, flow, &fo);
    return sock_connect(to, local, &fo, timeout_ms, err, errlen);
}

int dataconn_udp_open(const struct sockaddr_storage *local, uint32_t n, int *fds, uint16_t *ports,
                      char *err, size_t errlen)
{
    for (uint32_t i = 0; i < n; i++)
        fds[i] = -1;
    for (uint32_t i = 0; i < n; i++) {
        fds[i] = socket(local->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fds[i] < 0 || bind(fds[i], (const struct sockaddr *)local, addr_len(local))) {
            snprintf(err, errlen, "cannot open UDP socket %u of %u: %s", i + 1, n, strerror(errno));
            return -errno;
        }
        ports[i] = port_of(fds[i]);
    }
    return 0;
}

/* An address as 16 bytes, IPv4 as IPv4-mapped IPv6. */
static bool addr16(const struct sockaddr *sa, uint8_t out[16])
{
    memset(out, 0, 16);
    if (sa->sa_family == AF_INET) {
        out[10] = out[11] = 0xff;
        memcpy(out + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        return true;
    }
    if (sa->sa_family == AF_INET6) {
        memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
        return true;
    }
    return false;
}

bool dataconn_same_host(const struct sockaddr *from, const struct sockaddr *peer)
{
    uint8_t a[16], b[16];

    return addr16(from, a) && addr16(peer, b) && !memcmp(a, b, 16);
}

/* Reads the datagrams waiting on fd (a bounded number): a hello of this test and flow from
 * the client's address connects fd to its sender. 1 = got it, 0 = not (yet). */
static int take_hello(int fd, uint32_t flow, const uint8_t id[CTL_TEST_ID_LEN],
                      const struct sockaddr *peer)
{
    for (int i = 0; i < 64; i++) {
        uint8_t buf[64], got_id[CTL_TEST_ID_LEN];
        struct sockaddr_storage from;
        socklen_t flen = sizeof(from);
        uint32_t got_flow;
        ssize_t n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC,
                             (struct sockaddr *)&from, &flen);

        if (n < 0)
            return 0;
        if (n != CTL_DATA_HELLO_LEN || ctl_data_hello_decode(buf, got_id, &got_flow) ||
            memcmp(got_id, id, CTL_TEST_ID_LEN) || got_flow != flow ||
            !dataconn_same_host((struct sockaddr *)&from, peer))
            continue; /* stray, or from elsewhere (a forged source): ignore it */
        return connect(fd, (struct sockaddr *)&from, flen) == 0;
    }
    return 0;
}

int dataconn_udp_gather(int ctl, const struct sockaddr *peer, int *fds, uint32_t n,
                        const uint8_t id[CTL_TEST_ID_LEN], struct engine *e, int timeout_ms,
                        char *err, size_t errlen)
{
    struct pollfd *pf = calloc((size_t)n + 1, sizeof(*pf));
    uint64_t end = clock_mono_ns() + (uint64_t)timeout_ms * 1000000ULL;
    uint32_t have = 0;
    int rc = 0;

    if (!pf) {
        snprintf(err, errlen, "out of memory for %u UDP flows", n);
        return -ENOMEM;
    }
    while (have < n && !rc) {
        uint64_t now = clock_mono_ns();
        pf[0] = (struct pollfd){.fd = ctl, .events = POLLIN};
        for (uint32_t i = 0; i < n; i++) /* a negative fd is skipped: attached already */
            pf[i + 1] = (struct pollfd){.fd = fds[i], .events = POLLIN};
        if (now >= end) {
            snprintf(err, errlen, "only %u of %u UDP flows said hello within %d ms", have, n,
                     timeout_ms);
            rc = -ETIMEDOUT;
        } else if (poll(pf, (nfds_t)n + 1, (int)((end - now) / 1000000) + 1) < 0 &&
                   errno != EINTR) {
            rc = -errno;
            snprintf(err, errlen, "waiting for UDP hellos: %s", strerror(-rc));
        } else if (pf[0].revents) {
            snprintf(err, errlen, "client left while opening UDP flows");
            rc = -ECONNRESET;
        }
        for (uint32_t i = 0; i < n && !rc; i++) {
            if (!(pf[i + 1].revents & POLLIN) || !take_hello(fds[i], i, id, peer))
                continue;
            rc = engine_attach(e, i, fds[i], err, errlen);
            if (!rc) {
                fds[i] = -1; /* the engine owns it now */
                have++;
            }
        }
    }
    free(pf);
    return rc;
}

int dataconn_udp_connect(const struct sock_addr *server, uint16_t port,
                         const struct sock_local *local, const struct params *p, uint32_t flow,
                         char *err, size_t errlen)
{
    struct sock_addr to = *server;
    uint8_t tos = dsclass_flow_tos(p->classes, p->tos, flow);
    int fd, rc;

    if (to.ss.ss_family == AF_INET6)
        ((struct sockaddr_in6 *)&to.ss)->sin6_port = htons(port);
    else
        ((struct sockaddr_in *)&to.ss)->sin_port = htons(port);
    fd = socket(to.ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open a UDP socket: %s", strerror(errno));
        return -errno;
    }
    rc = sock_bind_local(fd, to.ss.ss_family, local, err, errlen);
    if (!rc && tos && (rc = sock_set_tos(fd, tos)))
        snprintf(err, errlen, "cannot set the TOS byte %u (-S/--dscp, --classes): %s", tos,
                 strerror(-rc));
    if (rc) {
        close(fd);
        return rc;
    }
    if (connect(fd, (struct sockaddr *)&to.ss, to.len)) {
        int e = errno;
        snprintf(err, errlen, "cannot reach the server's UDP port %u: %s", port, strerror(e));
        close(fd);
        return -e;
    }
    return fd;
}

void dataconn_udp_hello(int fd, const uint8_t id[CTL_TEST_ID_LEN], uint32_t flow)
{
    uint8_t buf[CTL_DATA_HELLO_LEN];

    ctl_data_hello_encode(buf, id, flow);
    if (send(fd, buf, sizeof(buf), MSG_DONTWAIT) < 0) {
        /* lost hellos are sent again until the server says ready */
    }
}

bool dataconn_fd_from(int fd, const struct sockaddr *peer)
{
    struct sockaddr_storage from;
    socklen_t len = sizeof(from);

    return !getpeername(fd, (struct sockaddr *)&from, &len) &&
           dataconn_same_host((struct sockaddr *)&from, peer);
}

/* A classic BPF filter passing only packets whose network header comes from peer's address
 * (IPv4, IPv4-mapped IPv6 included, or IPv6): on a listener it drops every other SYN, so a
 * host that is not the test's client never completes a handshake. prog holds 12 slots. */
static int peer_filter(const struct sockaddr *peer, struct sock_filter *prog)
{
    uint8_t a[16];
    bool v4;
    int k = 0, words;

    if (!addr16(peer, a))
        return -EAFNOSUPPORT;
    v4 = !memcmp(a, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12);
    words = v4 ? 1 : 4;
    prog[k++] =
        (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_PROTOCOL);
    prog[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, v4 ? ETH_P_IP : ETH_P_IPV6, 0,
                                           (uint8_t)(2 * words));
    k++;
    for (int i = 0; i < words; i++) {
        uint32_t w;
        memcpy(&w, a + (v4 ? 12 : 4 * i), 4);
        prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                                 (uint32_t)SKF_NET_OFF + (v4 ? 12 : 8 + 4 * i));
        prog[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ntohl(w), 0,
                                               (uint8_t)(2 * (words - i) - 1));
        k++;
    }
    prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0xffffffffU);
    prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, 0);
    return k;
}

int dataconn_crr_listen(const struct sockaddr_storage *local, const struct sockaddr *peer,
                        uint32_t n, int *fds, uint16_t *port, char *err, size_t errlen)
{
    struct sockaddr_storage a = *local;
    struct sock_filter prog[12];
    struct sock_fprog fp = {.filter = prog};
    int one = 1, len = peer_filter(peer, prog);

    for (uint32_t i = 0; i < n; i++)
        fds[i] = -1;
    if (len < 0) {
        snprintf(err, errlen, "cannot open crr listeners: the client's address is not IP");
        return len;
    }
    fp.len = (unsigned short)len;
    for (uint32_t i = 0; i < n; i++) {
        fds[i] = socket(a.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fds[i] < 0 || setsockopt(fds[i], SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
            setsockopt(fds[i], SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp)) ||
            bind(fds[i], (struct sockaddr *)&a, addr_len(&a)) || listen(fds[i], 4096)) {
            snprintf(err, errlen, "cannot open crr listener %u of %u: %s", i + 1, n,
                     strerror(errno));
            return -errno;
        }
        if (i == 0) { /* the others share the port the first one got */
            *port = port_of(fds[0]);
            if (a.ss_family == AF_INET6)
                ((struct sockaddr_in6 *)&a)->sin6_port = htons(*port);
            else
                ((struct sockaddr_in *)&a)->sin_port = htons(*port);
        }
    }
    return 0;
}
