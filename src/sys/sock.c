/* sock: set-up and control-channel socket helpers. */
#define _GNU_SOURCE
#include "sock.h"
#include "mptcpinfo.h"
#include "clock.h"

#include "hostfs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif

int sock_resolve(const char *host, uint16_t port, int family, struct sock_addr *out, char *err,
                 size_t errlen)
{
    struct addrinfo hints = {0}, *res = NULL;
    char portstr[8];
    int rc;

    hints.ai_family = family == 4 ? AF_INET : family == 6 ? AF_INET6 : AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_ADDRCONFIG;
    snprintf(portstr, sizeof(portstr), "%u", port);
    rc = getaddrinfo(host, portstr, &hints, &res);
    if (rc == EAI_ADDRFAMILY || rc == EAI_NONAME || rc == EAI_NODATA) {
        /* AI_ADDRCONFIG hides ::1 on hosts without IPv6 addresses but loopback */
        hints.ai_flags = 0;
        rc = getaddrinfo(host, portstr, &hints, &res);
    }
    if (rc) {
        snprintf(err, errlen, "cannot resolve host '%s': %s", host, gai_strerror(rc));
        return -EHOSTUNREACH;
    }
    memcpy(&out->ss, res->ai_addr, res->ai_addrlen);
    out->len = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

void sock_addr_host(const struct sockaddr *sa, char *buf, size_t len)
{
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

    /* a dual-stack listener sees IPv4 peers as ::ffff:a.b.c.d: show them as IPv4 */
    if (sa->sa_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
        inet_ntop(AF_INET, &s6->sin6_addr.s6_addr[12], buf, (socklen_t)len);
        return;
    }
    if (getnameinfo(sa,
                    sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                              : sizeof(struct sockaddr_in),
                    buf, (socklen_t)len, NULL, 0, NI_NUMERICHOST))
        snprintf(buf, len, "?");
}

void sock_addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
    char host[INET6_ADDRSTRLEN + 16];
    uint16_t port = sa->sa_family == AF_INET6 ? ntohs(((const struct sockaddr_in6 *)sa)->sin6_port)
                                              : ntohs(((const struct sockaddr_in *)sa)->sin_port);

    sock_addr_host(sa, host, sizeof(host));
    if (strchr(host, ':'))
        snprintf(buf, len, "[%s]:%u", host, port);
    else
        snprintf(buf, len, "%s:%u", host, port);
}

int sock_set_nonblock(int fd, bool on)
{
    int fl = fcntl(fd, F_GETFL);

    if (fl < 0)
        return -errno;
    fl = on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK;
    return fcntl(fd, F_SETFL, fl) ? -errno : 0;
}

static int set_window(int fd, uint32_t window)
{
    int w = (int)window;

    if (!window)
        return 0;
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &w, sizeof(w)) ||
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &w, sizeof(w)))
        return -errno;
    return 0;
}

int sock_dev_check(const char *dev, char *err, size_t errlen)
{
    if (strlen(dev) >= IFNAMSIZ || !if_nametoindex(dev)) {
        snprintf(err, errlen, "no network interface named '%s' here: see 'ip link' for the names",
                 dev);
        return -ENODEV;
    }
    return 0;
}

static int bind_dev(int fd, const char *dev, char *err, size_t errlen)
{
    int e;

    if (!setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev, (socklen_t)strlen(dev)))
        return 0;
    e = errno;
    if (e == ENODEV)
        return sock_dev_check(dev, err, errlen) ? -ENODEV : -ENODEV;
    snprintf(err, errlen, "cannot bind to interface '%s' (--bind-dev): %s%s", dev, strerror(e),
             e == EPERM ? ": it needs CAP_NET_RAW here (run as root)" : "");
    return -e;
}

static void set_port(struct sockaddr_storage *ss, uint16_t port)
{
    if (ss->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
    else
        ((struct sockaddr_in *)ss)->sin_port = htons(port);
}

int sock_bind_local(int fd, int af, const struct sock_local *local, char *err, size_t errlen)
{
    struct sock_addr a;
    int rc, one = 1;

    if (!local)
        return 0;
    if (local->dev && *local->dev && (rc = bind_dev(fd, local->dev, err, errlen)))
        return rc;
    if (local->addr && *local->addr) {
        if (sock_resolve(local->addr, 0, af == AF_INET6 ? 6 : 4, &a, err, errlen))
            return -EINVAL;
    } else if (local->port) {
        memset(&a, 0, sizeof(a));
        a.ss.ss_family = (sa_family_t)af;
        a.len = af == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    } else {
        return 0;
    }
    set_port(&a.ss, local->port);
    /* a port just used by the previous test may linger in TIME_WAIT on our side */
    if (local->port)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&a.ss, a.len)) {
        int e = errno;
        char where[INET6_ADDRSTRLEN + 16];
        sock_addr_str((struct sockaddr *)&a.ss, where, sizeof(where));
        if (!local->port)
            snprintf(err, errlen, "cannot bind to '%s': %s", local->addr, strerror(e));
        else
            snprintf(err, errlen, "cannot use local port %u (--cport) at %s: %s%s", local->port,
                     where, strerror(e),
                     e == EADDRINUSE ? ": another socket holds it; choose another --cport" : "");
        return -e;
    }
    return 0;
}

int sock_set_tos(int fd, uint8_t tos)
{
    int v = tos, fam = 0;
    socklen_t fl = sizeof(fam);

    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &fam, &fl))
        return -errno;
    if (fam == AF_INET6) {
        if (setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &v, sizeof(v)))
            return -errno;
        /* an IPv6 socket talking to an IPv4-mapped peer sends IPv4 packets */
        setsockopt(fd, IPPROTO_IP, IP_TOS, &v, sizeof(v));
        return 0;
    }
    return setsockopt(fd, IPPROTO_IP, IP_TOS, &v, sizeof(v)) ? -errno : 0;
}

static int set_dont_fragment(int fd)
{
    int fam = 0, v4 = IP_PMTUDISC_DO, v6 = IPV6_PMTUDISC_DO;
    socklen_t fl = sizeof(fam);

    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &fam, &fl))
        return -errno;
    if (fam == AF_INET6) {
        if (setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &v6, sizeof(v6)))
            return -errno;
        setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v4, sizeof(v4)); /* IPv4-mapped peers */
        return 0;
    }
    return setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &v4, sizeof(v4)) ? -errno : 0;
}

int sock_connect(const struct sock_addr *to, const struct sock_local *local,
                 const struct sock_flow_opts *fo, int timeout_ms, char *err, size_t errlen)
{
    char where[INET6_ADDRSTRLEN + 16];
    int fd, rc, one = 1;
    struct pollfd pfd;
    socklen_t elen = sizeof(rc);

    sock_addr_str((const struct sockaddr *)&to->ss, where, sizeof(where));
    fd = socket(to->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
                fo && fo->mptcp ? mptcpinfo_proto() : 0);
    if (fd < 0) {
        rc = -errno;
        snprintf(err, errlen, "cannot create %ssocket: %s", fo && fo->mptcp ? "an MPTCP " : "",
                 strerror(-rc));
        return rc;
    }
    rc = sock_bind_local(fd, to->ss.ss_family, local, err, errlen);
    if (rc)
        goto fail_quiet;
    if (fo) {
        if (set_window(fd, fo->window) ||
            (fo->mss && setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &fo->mss, sizeof(fo->mss)))) {
            rc = -errno;
            snprintf(err, errlen, "cannot set window/MSS: %s", strerror(-rc));
            goto fail_quiet;
        }
        /* before connect, so the handshake carries it too */
        if (fo->tos && (rc = sock_set_tos(fd, fo->tos))) {
            snprintf(err, errlen, "cannot set the TOS byte %u (-S/--dscp): %s", fo->tos,
                     strerror(-rc));
            goto fail_quiet;
        }
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (const struct sockaddr *)&to->ss, to->len) && errno != EINPROGRESS) {
        rc = -errno;
        goto fail;
    }
    pfd.fd = fd;
    pfd.events = POLLOUT;
    rc = poll(&pfd, 1, timeout_ms);
    if (rc == 0) {
        rc = -ETIMEDOUT;
        goto fail;
    }
    if (rc < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &rc, &elen)) {
        rc = -errno;
        goto fail;
    }
    if (rc) {
        rc = -rc;
        goto fail;
    }
    if (fo && !fo->nodelay) {
        int zero = 0; /* control connections keep NODELAY; data flows only on request */
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &zero, sizeof(zero));
    }
    sock_set_nonblock(fd, false);
    return fd;
fail:
    if (rc == -ECONNREFUSED)
        snprintf(err, errlen,
                 "connection refused by %s: is 'netrig serve' running there, on that port?", where);
    else if (rc == -ETIMEDOUT)
        snprintf(err, errlen, "no answer from %s within %d ms: check the host, port and firewall",
                 where, timeout_ms);
    else
        snprintf(err, errlen, "cannot connect to %s: %s", where, strerror(-rc));
    if (local && local->dev && *local->dev) {
        size_t n = strlen(err);
        snprintf(err + n, errlen - n,
                 " (through interface '%s', --bind-dev: does a route to it "
                 "go there?)",
                 local->dev);
    }
fail_quiet:
    close(fd);
    return rc;
}

int sock_listen(const char *bind_addr, uint16_t port, int family, char *err, size_t errlen)
{
    return sock_listen_proto(bind_addr, port, family, 0, err, errlen);
}

int sock_listen_proto(const char *bind_addr, uint16_t port, int family, int proto, char *err,
                      size_t errlen)
{
    struct sock_addr a;
    int fd, one = 1, zero = 0, rc;

    if (bind_addr && *bind_addr) {
        if (sock_resolve(bind_addr, port, family, &a, err, errlen))
            return -EINVAL;
    } else {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&a.ss;
        struct sockaddr_in *s4 = (struct sockaddr_in *)&a.ss;
        memset(&a, 0, sizeof(a));
        if (family == 4) {
            s4->sin_family = AF_INET;
            s4->sin_port = htons(port);
            a.len = sizeof(*s4);
        } else {
            s6->sin6_family = AF_INET6;
            s6->sin6_port = htons(port);
            s6->sin6_addr = in6addr_any;
            a.len = sizeof(*s6);
        }
    }
    fd = socket(a.ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, proto);
    if (fd < 0 && a.ss.ss_family == AF_INET6 && !(bind_addr && *bind_addr) && family != 6)
        return sock_listen_proto(NULL, port, 4, proto, err, errlen); /* no IPv6 on this host */
    if (fd < 0) {
        rc = -errno;
        snprintf(err, errlen, "cannot create socket: %s", strerror(-rc));
        return rc;
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (a.ss.ss_family == AF_INET6 && !(bind_addr && *bind_addr))
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, family == 6 ? &one : &zero, sizeof(int));
    if (bind(fd, (struct sockaddr *)&a.ss, a.len) || listen(fd, 1024)) {
        char where[INET6_ADDRSTRLEN + 16];
        rc = -errno;
        sock_addr_str((struct sockaddr *)&a.ss, where, sizeof(where));
        snprintf(err, errlen, "cannot listen on %s: %s%s", where, strerror(-rc),
                 rc == -EADDRINUSE ? " (choose another port with -p)" : "");
        close(fd);
        return rc;
    }
    return fd;
}

uint16_t sock_local_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);

    if (getsockname(fd, (struct sockaddr *)&ss, &len))
        return 0;
    return ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
                                    : ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

int sock_cc_available(const char *sysroot, char *buf, size_t len)
{
    /* root may pick any loaded algorithm; others only the allowed ones */
    const char *first = geteuid() == 0 ? "/proc/sys/net/ipv4/tcp_available_congestion_control"
                                       : "/proc/sys/net/ipv4/tcp_allowed_congestion_control";
    long n = hostfs_read(sysroot, first, buf, len);

    if (n <= 0)
        n = hostfs_read(sysroot, "/proc/sys/net/ipv4/tcp_available_congestion_control", buf, len);
    return n < 0 ? (int)n : 0;
}

static int set_pacing(int fd, uint64_t bps, char *err, size_t errlen)
{
    uint64_t rate = bps / 8;

    if (setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate))) {
        int e = errno;
        snprintf(err, errlen, "cannot set pacing rate (--fq-rate): %s", strerror(e));
        return -e;
    }
    return 0;
}

static void window_warn(int fd, uint32_t window, bool sender, char *warn, size_t warnlen)
{
    int got = 0;
    socklen_t gl = sizeof(got);

    set_window(fd, window);
    getsockopt(fd, SOL_SOCKET, sender ? SO_SNDBUF : SO_RCVBUF, &got, &gl);
    /* the kernel doubles the request, then caps it at {r,w}mem_max x 2 */
    if (warn && (uint32_t)got < window)
        snprintf(warn, warnlen, "window %u was capped to %d by net.core.%s: raise it to use -w %u",
                 window, got / 2, sender ? "wmem_max" : "rmem_max", window);
}

/* A datagram socket: the buffers and, on senders, the pacing cap (which the kernel applies to
 * UDP only under the fq qdisc). */
static int udp_opts(int fd, const struct sock_flow_opts *fo, bool sender, char *err, size_t errlen,
                    char *warn, size_t warnlen)
{
    if (fo->window)
        window_warn(fd, fo->window, sender, warn, warnlen);
    if (sender && fo->fq_rate_bps)
        return set_pacing(fd, fo->fq_rate_bps, err, errlen);
    return 0;
}

int sock_apply_flow_opts(int fd, const struct sock_flow_opts *fo, bool sender, char *err,
                         size_t errlen, char *warn, size_t warnlen)
{
    int one = 1;

    if (warn && warnlen)
        warn[0] = '\0';
    if (fo->tos) {
        int rc = sock_set_tos(fd, fo->tos);
        if (rc) {
            snprintf(err, errlen, "cannot set the TOS byte %u (-S/--dscp): %s", fo->tos,
                     strerror(-rc));
            return rc;
        }
    }
    if (fo->dont_fragment) {
        int rc = set_dont_fragment(fd);
        if (rc) {
            snprintf(err, errlen, "cannot set don't-fragment (--dont-fragment): %s", strerror(-rc));
            return rc;
        }
    }
    if (!fo->tcp)
        return udp_opts(fd, fo, sender, err, errlen, warn, warnlen);
    if (fo->congestion && fo->congestion[0] &&
        setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, fo->congestion, strlen(fo->congestion))) {
        int e = errno;
        char avail[256] = "unknown";
        sock_cc_available(NULL, avail, sizeof(avail));
        snprintf(err, errlen,
                 "congestion control '%s' is not available here (%s): choose one of: %s",
                 fo->congestion, strerror(e), avail);
        return -e;
    }
    if (fo->nodelay)
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (fo->window)
        window_warn(fd, fo->window, sender, warn, warnlen);
    if (sender && fo->fq_rate_bps) {
        int rc = set_pacing(fd, fo->fq_rate_bps, err, errlen);
        if (rc)
            return rc;
    }
    if (sender && fo->notsent_lowat &&
        setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &fo->notsent_lowat,
                   sizeof(fo->notsent_lowat)) &&
        !fo->notsent_auto) {
        int e = errno;
        snprintf(err, errlen, "cannot set --notsent-lowat %u on this socket: %s: drop the option",
                 fo->notsent_lowat, strerror(e));
        return -e;
    }
    if (sender && fo->zerocopy && setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one))) {
        if (warn)
            snprintf(warn, warnlen, "-Z: MSG_ZEROCOPY unavailable (%s): using sendfile()",
                     strerror(errno));
    }
    return 0;
}

/* Moves len bytes in (want POLLIN) or out (POLLOUT) of fd within timeout_ms in total. */
static int io_full(int fd, char *buf, size_t len, int timeout_ms, short want)
{
    int64_t deadline = clock_mono_ms() + timeout_ms;
    size_t done = 0;

    while (done < len) {
        struct pollfd pfd = {.fd = fd, .events = want};
        int64_t left = deadline - clock_mono_ms();
        ssize_t n;
        int rc;

        if (left <= 0)
            return -ETIMEDOUT;
        rc = poll(&pfd, 1, (int)left);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc < 0)
            return -errno;
        if (rc == 0)
            return -ETIMEDOUT;
        n = want == POLLIN ? recv(fd, buf + done, len - done, MSG_DONTWAIT)
                           : send(fd, buf + done, len - done, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n == 0 && want == POLLIN)
            return -ENODATA;
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                continue;
            return -errno;
        }
        done += (size_t)n;
    }
    return 0;
}

int sock_read_full(int fd, void *buf, size_t len, int timeout_ms)
{
    return io_full(fd, buf, len, timeout_ms, POLLIN);
}

int sock_write_full(int fd, const void *buf, size_t len, int timeout_ms)
{
    return io_full(fd, (char *)buf, len, timeout_ms, POLLOUT);
}
