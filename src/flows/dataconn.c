/* dataconn: UDP flow sockets and crr listeners. */
#define _GNU_SOURCE
#include "dataconn.h"

#include "engine.h"
#include "flow.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
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
                         const struct params *p, int timeout_ms, char *err, size_t errlen)
{
    struct sock_flow_opts fo;

    flow_sock_opts(p, true, &fo);
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

/* Reads one hello datagram on fd; connects fd to its sender. 1 = got it, 0 = not (yet). */
static int take_hello(int fd, uint32_t flow, const uint8_t id[CTL_TEST_ID_LEN])
{
    uint8_t buf[64], got_id[CTL_TEST_ID_LEN];
    struct sockaddr_storage from;
    socklen_t flen = sizeof(from);
    uint32_t got_flow;
    ssize_t n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &flen);

    if (n != CTL_DATA_HELLO_LEN || ctl_data_hello_decode(buf, got_id, &got_flow) ||
        memcmp(got_id, id, CTL_TEST_ID_LEN) || got_flow != flow)
        return 0; /* stray datagram: ignore it */
    return connect(fd, (struct sockaddr *)&from, flen) == 0;
}

int dataconn_udp_gather(int ctl, int *fds, uint32_t n, const uint8_t id[CTL_TEST_ID_LEN],
                        struct engine *e, int timeout_ms, char *err, size_t errlen)
{
    struct pollfd pf[2];
    uint32_t have = 0;
    int left = timeout_ms;

    while (have < n) {
        int rc;
        for (uint32_t i = 0; i < n; i++) {
            if (fds[i] < 0 || !take_hello(fds[i], i, id))
                continue;
            rc = engine_attach(e, i, fds[i], err, errlen);
            if (rc)
                return rc;
            fds[i] = -1; /* the engine owns it now */
            have++;
        }
        if (have == n)
            break;
        pf[0].fd = ctl;
        pf[0].events = POLLIN;
        pf[1].fd = -1;
        rc = poll(pf, 1, 50); /* a hello may also be waiting: poll the sockets often */
        if (rc > 0) {
            snprintf(err, errlen, "client left while opening UDP flows");
            return -ECONNRESET;
        }
        left -= 50;
        if (left <= 0) {
            snprintf(err, errlen, "only %u of %u UDP flows said hello within %d ms", have, n,
                     timeout_ms);
            return -ETIMEDOUT;
        }
    }
    return 0;
}

int dataconn_udp_connect(const struct sock_addr *server, uint16_t port,
                         const struct sock_local *local, const struct params *p, char *err,
                         size_t errlen)
{
    struct sock_addr to = *server;
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
    if (!rc && p->tos && (rc = sock_set_tos(fd, p->tos)))
        snprintf(err, errlen, "cannot set the TOS byte %u (-S/--dscp): %s", p->tos, strerror(-rc));
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

int dataconn_crr_listen(const struct sockaddr_storage *local, uint32_t n, int *fds, uint16_t *port,
                        char *err, size_t errlen)
{
    struct sockaddr_storage a = *local;
    int one = 1;

    for (uint32_t i = 0; i < n; i++)
        fds[i] = -1;
    for (uint32_t i = 0; i < n; i++) {
        fds[i] = socket(a.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fds[i] < 0 || setsockopt(fds[i], SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
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
