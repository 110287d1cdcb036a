/* server: listener, acceptor loop and test registry of `netrig serve`. */
#define _GNU_SOURCE
#include "server.h"
#include "clock.h"

#include "admit.h"
#include "ctl.h"
#include "iperf3_proto.h"
#include "iperf3_server.h"
#include "log.h"
#include "metrics.h"
#include "served.h"
#include "session.h"
#include "sock.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#define SERVER_MAX_PENDING 4096        /* connections not yet sorted */
#define SERVER_DRAIN_MS    (30 * 1000) /* waiting for running tests at shutdown */

struct pending {
    int fd;
    uint64_t deadline_ns;
    struct sockaddr_storage peer;
};

struct server {
    struct server_opts o;
    int lfd;
    struct served_conf conf; /* what every test reads */
    struct admit *admit;     /* what every test shares */
    uint32_t npending;
    bool accept_paused; /* every pending slot taken: new connections wait in the backlog */
    uint64_t busy_ns;   /* when a connection or a test was last seen (--idle-timeout) */
    bool reopen_failed; /* --idle-timeout could not reopen the listener: said once */
    struct pending pend[SERVER_MAX_PENDING];
};

static void conf_from_opts(struct served_conf *c, const struct server_opts *o, uint16_t port)
{
    *c = (struct served_conf){
        .timeout_ms = o->timeout_ms,
        .exclusive = o->exclusive,
        .limits = {.max_duration_ns = o->max_duration_ns,
                   .max_flows = o->max_flows,
                   .max_rate_bps = o->max_rate_bps},
        .auth = o->auth,
        .metrics = o->metrics,
        .third_party = o->third_party,
        .history_db = o->history_db,
        .port = port,
        .host_snapshot = o->host_snapshot,
    };
}

struct server *server_create(const struct server_opts *o, char *err, size_t errlen)
{
    struct admit_limits al = {.max_tests = o->one_off ? 1 : o->max_tests,
                              .max_client_tests = o->max_client_tests,
                              .one_off = o->one_off};
    struct server *s = calloc(1, sizeof(*s));

    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->o = *o;
    s->lfd = sock_listen(o->bind[0] ? o->bind : NULL, o->port, o->family, err, errlen);
    s->admit = s->lfd >= 0 ? admit_create(&al) : NULL;
    if (s->lfd < 0 || !s->admit) {
        if (s->lfd >= 0) {
            close(s->lfd);
            snprintf(err, errlen, "out of memory");
        }
        free(s);
        return NULL;
    }
    sock_set_nonblock(s->lfd, true);
    conf_from_opts(&s->conf, o, sock_local_port(s->lfd));
    for (int i = 0; i < SERVER_MAX_PENDING; i++)
        s->pend[i].fd = -1;
    return s;
}

uint16_t server_port(const struct server *s) { return s->conf.port; }

static void accept_resume(struct server *s, int epfd)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};

    if (s->accept_paused && s->npending < SERVER_MAX_PENDING) {
        epoll_ctl(epfd, EPOLL_CTL_ADD, s->lfd, &ev);
        s->accept_paused = false;
    }
}

/* The acceptor no longer waits on p: it was handed on or dropped. */
static void pending_release(struct server *s, int epfd, struct pending *p)
{
    epoll_ctl(epfd, EPOLL_CTL_DEL, p->fd, NULL);
    p->fd = -1;
    s->npending--;
    accept_resume(s, epfd);
}

static void pending_drop(struct server *s, int epfd, struct pending *p, const char *why)
{
    int fd = p->fd;

    char who[80];

    if (why) {
        sock_addr_str((struct sockaddr *)&p->peer, who, sizeof(who));
        LOG_WARN("dropped connection from %s: %s", who, why);
        metrics_control_error(s->conf.metrics, METRICS_STAGE_CONNECT);
    }
    pending_release(s, epfd, p);
    close(fd);
}

static void accept_new(struct server *s, int epfd)
{
    for (;;) {
        struct sockaddr_storage peer;
        socklen_t plen = sizeof(peer);
        int fd = accept4(s->lfd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
        struct pending *slot = NULL;

        if (fd < 0)
            return;
        s->busy_ns = clock_mono_ns();
        if (s->o.acl && !acl_permits(s->o.acl, (struct sockaddr *)&peer)) {
            char who[80];
            sock_addr_str((struct sockaddr *)&peer, who, sizeof(who));
            LOG_WARN("refused connection from %s: not allowed by --allow/--deny", who);
            metrics_refused(s->conf.metrics, METRICS_REFUSED_ACL);
            close(fd);
            continue;
        }
        for (int i = 0; i < SERVER_MAX_PENDING && !slot; i++)
            if (s->pend[i].fd < 0)
                slot = &s->pend[i];
        slot->fd = fd; /* a slot is free: we stop accepting when none is */
        if (++s->npending == SERVER_MAX_PENDING) {
            epoll_ctl(epfd, EPOLL_CTL_DEL, s->lfd, NULL);
            s->accept_paused = true;
        }
        slot->peer = peer;
        slot->deadline_ns = clock_mono_ns() + (uint64_t)s->o.timeout_ms * 1000000ULL;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLET | EPOLLRDHUP, .data.ptr = slot};
        epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
        if (s->accept_paused)
            return;
    }
}

/* A pending connection has bytes: sort it by its first bytes. */
static void classify(struct server *s, int epfd, struct pending *p)
{
    uint8_t buf[IPERF3_COOKIE_LEN]; /* the longest opening we sort by */
    ssize_t n = recv(p->fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
    enum iperf3_sniff i3;

    if (n == 0 || (n < 0 && errno != EAGAIN)) {
        pending_drop(s, epfd, p, NULL);
        return;
    }
    if (n < 4)
        return; /* wait for more, until the deadline */
    if (!memcmp(buf, ctl_magic, 3)) {
        int fd = p->fd;
        char who[80];
        sock_addr_str((struct sockaddr *)&p->peer, who, sizeof(who));
        LOG_DBG("control connection from %s", who);
        pending_release(s, epfd, p);
        sock_set_nonblock(fd, false);
        session_spawn(&s->conf, s->admit, fd, &p->peer);
        return;
    }
    if (!memcmp(buf, ctl_data_magic, 4)) {
        uint8_t id[CTL_TEST_ID_LEN];
        uint32_t flow;
        int fd = p->fd;

        if (n < CTL_DATA_HELLO_LEN)
            return;
        if (recv(fd, buf, CTL_DATA_HELLO_LEN, MSG_DONTWAIT) != CTL_DATA_HELLO_LEN ||
            ctl_data_hello_decode(buf, id, &flow)) {
            pending_drop(s, epfd, p, "malformed data connection hello");
            return;
        }
        pending_release(s, epfd, p);
        LOG_DBG("data connection for flow %u", flow);
        if (admit_route(s->admit, ADMIT_KEY_NETRIG, id, flow, fd) <= 0) {
            char who[80];
            sock_addr_str((struct sockaddr *)&p->peer, who, sizeof(who));
            LOG_WARN("dropped connection from %s: data connection names no running test", who);
            close(fd);
        }
        return;
    }
    i3 = iperf3_proto_cookie_sniff(buf, (size_t)n); /* an iperf3 client: control or a stream */
    if (i3 == IPERF3_SNIFF_MORE)
        return;
    if (i3 == IPERF3_SNIFF_COOKIE) {
        int fd = p->fd;
        pending_release(s, epfd, p);
        iperf3_server_take(&s->conf, s->admit, fd, &p->peer);
        return;
    }
    pending_drop(s, epfd, p,
                 i3 == IPERF3_SNIFF_BAD ? "malformed iperf3 cookie"
                                        : "not a netrig client (unknown first bytes)");
}

static void expire_pending(struct server *s, int epfd)
{
    uint64_t now = clock_mono_ns();

    for (int i = 0; i < SERVER_MAX_PENDING; i++)
        if (s->pend[i].fd >= 0 && now >= s->pend[i].deadline_ns)
            pending_drop(s, epfd, &s->pend[i], "sent nothing usable before the timeout");
}

static void wait_tests(struct server *s)
{
    uint32_t left = admit_wait_threads(s->admit, SERVER_DRAIN_MS);

    if (left)
        LOG_WARN("%u test(s) still running at exit", left);
}

/* SIGHUP, when the caller blocked it: reopen the log. */
static int hup_open(int epfd, void *tag)
{
    sigset_t set, cur;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = tag};
    int fd;

    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    if (!sigismember(&cur, SIGHUP))
        return -1;
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd >= 0)
        epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
    return fd;
}

static void hup_handle(int fd)
{
    struct signalfd_siginfo si;

    while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        log_reopen();
        LOG_INFO("SIGHUP: log reopened");
    }
}

/* --idle-timeout without -1: a fresh listening socket on the same port, as iperf3 restarts an
 * idle server (whatever state the old one was in goes with it). Tried again on the next
 * round while the port cannot be had. */
static void listener_reopen(struct server *s, int epfd)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    char err[256];
    int fd;

    if (s->lfd >= 0) {
        epoll_ctl(epfd, EPOLL_CTL_DEL, s->lfd, NULL);
        close(s->lfd);
    }
    s->lfd = -1;
    fd = sock_listen(s->o.bind[0] ? s->o.bind : NULL, s->conf.port, s->o.family, err, sizeof(err));
    if (fd < 0) {
        if (!s->reopen_failed)
            LOG_ERR("--idle-timeout: cannot reopen the listening socket: %s; trying again", err);
        s->reopen_failed = true;
        return;
    }
    sock_set_nonblock(fd, true);
    s->lfd = fd;
    epoll_ctl(epfd, EPOLL_CTL_ADD, s->lfd, &ev);
    LOG_INFO("idle for %.4gs: listening socket reopened on port %u (--idle-timeout)",
             s->o.idle_timeout_ns / 1e9, s->conf.port);
    s->reopen_failed = false;
}

/* What the loop does after each round: 1 to return with *end set, else 0. */
static int server_round(struct server *s, int epfd, enum server_end *end)
{
    uint64_t now = clock_mono_ns();

    if (s->o.one_off && admit_tests_ran(s->admit)) {
        *end = SERVER_END_ONE_OFF;
        return 1;
    }
    if (s->npending || admit_threads_alive(s->admit))
        s->busy_ns = now;
    if (s->lfd < 0) /* a reopen failed: try again */
        listener_reopen(s, epfd);
    if (!s->o.idle_timeout_ns || now - s->busy_ns < s->o.idle_timeout_ns)
        return 0;
    if (s->o.one_off) {
        *end = SERVER_END_IDLE;
        return 1;
    }
    listener_reopen(s, epfd);
    s->busy_ns = now;
    return 0;
}

int server_run(struct server *s, volatile sig_atomic_t *stop)
{
    int epfd = epoll_create1(EPOLL_CLOEXEC), hupfd;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    enum server_end end = SERVER_END_STOP;
    char hup_tag;

    if (epfd < 0)
        return -errno;
    s->conf.stop = stop;
    s->busy_ns = clock_mono_ns();
    epoll_ctl(epfd, EPOLL_CTL_ADD, s->lfd, &ev);
    hupfd = hup_open(epfd, &hup_tag);
    while (!*stop) {
        struct epoll_event evs[64];
        int n = epoll_wait(epfd, evs, 64, 100);

        for (int i = 0; i < n; i++) {
            if (!evs[i].data.ptr)
                accept_new(s, epfd);
            else if (evs[i].data.ptr == &hup_tag)
                hup_handle(hupfd);
            else if (((struct pending *)evs[i].data.ptr)->fd >= 0)
                classify(s, epfd, evs[i].data.ptr);
        }
        expire_pending(s, epfd);
        if (server_round(s, epfd, &end))
            break;
    }
    for (int i = 0; i < SERVER_MAX_PENDING; i++)
        if (s->pend[i].fd >= 0)
            pending_drop(s, epfd, &s->pend[i], NULL);
    close(epfd);
    if (hupfd >= 0)
        close(hupfd);
    wait_tests(s);
    return (int)end;
}

void server_destroy(struct server *s)
{
    if (!s)
        return;
    if (s->lfd >= 0)
        close(s->lfd);
    admit_destroy(s->admit);
    free(s);
}
