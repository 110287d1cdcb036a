/* server: listener, acceptor loop and test registry of `netrig serve`. */
#define _GNU_SOURCE
#include "server.h"
#include "clock.h"

#include "iperf3_proto.h"
#include "iperf3_server.h"
#include "log.h"
#include "metrics.h"
#include "session.h"
#include "sock.h"
#include "worker.h"

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

#define SERVER_MAX_PENDING 4096 /* connections that have not yet said what they are */
#define SERVER_REG_CAP     1024

struct pending {
    int fd;
    uint64_t deadline_ns;
    struct sockaddr_storage peer;
};

#define SERVER_CLIENTS_MAX 1024 /* client addresses with tests running at once */

struct client_count {
    uint8_t key[16];
    uint32_t running;
};

struct reg_entry {
    bool used;
    uint8_t id[CTL_TEST_ID_LEN];
    int pipe_wr;
};

struct server {
    struct server_opts o;
    struct policy_limits limits;
    int lfd;
    volatile sig_atomic_t *stop;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    uint32_t sessions; /* session threads alive */
    uint32_t running;  /* admitted tests */
    uint32_t excl_holders, excl_waiting;
    uint32_t npending;
    bool accept_paused; /* every pending slot taken: new connections wait in the backlog */
    struct reg_entry reg[SERVER_REG_CAP];
    struct client_count clients[SERVER_CLIENTS_MAX];
    struct pending pend[SERVER_MAX_PENDING];
    struct iperf3_registry *i3; /* iperf3 clients' tests (iperf3_server.c) */
};

struct server *server_create(const struct server_opts *o, char *err, size_t errlen)
{
    struct server *s = calloc(1, sizeof(*s));

    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->o = *o;
    s->limits = (struct policy_limits){.max_duration_ns = o->max_duration_ns,
                                       .max_flows = o->max_flows,
                                       .max_rate_bps = o->max_rate_bps};
    s->lfd = sock_listen(o->bind[0] ? o->bind : NULL, o->port, o->family, err, errlen);
    s->i3 = s->lfd >= 0 ? iperf3_server_registry_new() : NULL;
    if (s->lfd < 0 || !s->i3) {
        if (s->lfd >= 0) {
            close(s->lfd);
            snprintf(err, errlen, "out of memory");
        }
        free(s);
        return NULL;
    }
    sock_set_nonblock(s->lfd, true);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    for (int i = 0; i < SERVER_MAX_PENDING; i++)
        s->pend[i].fd = -1;
    return s;
}

struct iperf3_registry *server_iperf3(struct server *s) { return s->i3; }

uint16_t server_port(const struct server *s) { return sock_local_port(s->lfd); }

const struct server_opts *server_opts(const struct server *s) { return &s->o; }

const struct policy_limits *server_limits(const struct server *s) { return &s->limits; }

volatile sig_atomic_t *server_stop_flag(const struct server *s) { return s->stop; }

/* A peer's address as a key (IPv4-mapped IPv6 folded to IPv4), ports ignored. */
static void peer_key(const struct sockaddr *sa, uint8_t key[16])
{
    memset(key, 0, 16);
    if (sa->sa_family == AF_INET) {
        memcpy(key + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        key[10] = key[11] = 0xff;
    } else if (sa->sa_family == AF_INET6) {
        memcpy(key, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
    }
}

/* The per-client slot of this peer (creating it with add); NULL when none or full. */
static struct client_count *client_slot(struct server *s, const uint8_t key[16], bool add)
{
    struct client_count *free_slot = NULL;

    for (int i = 0; i < SERVER_CLIENTS_MAX; i++) {
        if (s->clients[i].running && !memcmp(s->clients[i].key, key, 16))
            return &s->clients[i];
        if (!s->clients[i].running && !free_slot)
            free_slot = &s->clients[i];
    }
    if (add && free_slot)
        memcpy(free_slot->key, key, 16);
    return add ? free_slot : NULL;
}

int server_admit(struct server *s, const struct sockaddr *peer, uint32_t *running)
{
    struct client_count *cc;
    uint8_t key[16];
    int rc = 0;

    peer_key(peer, key);
    pthread_mutex_lock(&s->lock);
    cc = client_slot(s, key, true);
    if (s->running >= s->o.max_tests) {
        rc = -EBUSY;
        *running = s->running;
    } else if (!cc) { /* every per-address slot taken: busy as a whole */
        rc = -EBUSY;
        *running = s->running;
    } else if (s->o.max_client_tests && cc->running >= s->o.max_client_tests) {
        rc = -EUSERS;
        *running = cc ? cc->running : 0;
    } else {
        s->running++;
        cc->running++;
        *running = s->running;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

void server_release(struct server *s, const struct sockaddr *peer)
{
    struct client_count *cc;
    uint8_t key[16];

    peer_key(peer, key);
    pthread_mutex_lock(&s->lock);
    s->running--;
    cc = client_slot(s, key, false);
    if (cc)
        cc->running--;
    pthread_mutex_unlock(&s->lock);
}

int server_exclusive_acquire(struct server *s, int wait_ms, void (*queued)(void *, uint32_t),
                             void *ctx)
{
    uint64_t deadline = clock_mono_ns() + (uint64_t)wait_ms * 1000000ULL;
    bool told = false;
    int rc = 0;

    pthread_mutex_lock(&s->lock);
    s->excl_waiting++;
    while (s->excl_holders > 0) {
        struct timespec ts;
        if (!told && queued) {
            uint32_t ahead = s->excl_holders + s->excl_waiting - 1;
            pthread_mutex_unlock(&s->lock);
            queued(ctx, ahead);
            pthread_mutex_lock(&s->lock);
            told = true;
            continue;
        }
        if ((s->stop && *s->stop) || clock_mono_ns() >= deadline) {
            rc = -ETIMEDOUT;
            break;
        }
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&s->cond, &s->lock, &ts);
    }
    s->excl_waiting--;
    if (!rc)
        s->excl_holders++;
    pthread_mutex_unlock(&s->lock);
    return rc;
}

void server_exclusive_release(struct server *s)
{
    pthread_mutex_lock(&s->lock);
    s->excl_holders--;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

int server_register(struct server *s, const uint8_t id[CTL_TEST_ID_LEN], int pipe_wr)
{
    int rc = -ENOSPC;

    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < SERVER_REG_CAP; i++) {
        if (!s->reg[i].used) {
            s->reg[i].used = true;
            memcpy(s->reg[i].id, id, CTL_TEST_ID_LEN);
            s->reg[i].pipe_wr = pipe_wr;
            rc = 0;
            break;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

void server_unregister(struct server *s, const uint8_t id[CTL_TEST_ID_LEN])
{
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < SERVER_REG_CAP; i++)
        if (s->reg[i].used && !memcmp(s->reg[i].id, id, CTL_TEST_ID_LEN))
            s->reg[i].used = false;
    pthread_mutex_unlock(&s->lock);
}

void server_session_done(struct server *s)
{
    pthread_mutex_lock(&s->lock);
    s->sessions--;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

/* Hands a data connection to the test that owns its id; false when no test does. */
static bool route_data(struct server *s, const uint8_t id[CTL_TEST_ID_LEN], uint32_t flow, int fd)
{
    struct session_data_conn dc = {.flow = flow, .fd = fd};
    bool ok = false;

    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < SERVER_REG_CAP && !ok; i++)
        if (s->reg[i].used && !memcmp(s->reg[i].id, id, CTL_TEST_ID_LEN))
            ok = write(s->reg[i].pipe_wr, &dc, sizeof(dc)) == (ssize_t)sizeof(dc);
    pthread_mutex_unlock(&s->lock);
    return ok;
}

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
        metrics_control_error(s->o.metrics, METRICS_STAGE_CONNECT);
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
        if (s->o.acl && !acl_permits(s->o.acl, (struct sockaddr *)&peer)) {
            char who[80];
            sock_addr_str((struct sockaddr *)&peer, who, sizeof(who));
            LOG_WARN("refused connection from %s: not allowed by --allow/--deny", who);
            metrics_refused(s->o.metrics, METRICS_REFUSED_ACL);
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
        session_spawn(s, fd, &p->peer);
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
        if (!route_data(s, id, flow, fd)) {
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
        iperf3_server_take(s, fd, &p->peer);
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

static void wait_sessions(struct server *s)
{
    uint64_t deadline = clock_mono_ns() + 30ULL * 1000000000ULL;

    pthread_mutex_lock(&s->lock);
    while (s->sessions > 0 && clock_mono_ns() < deadline) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&s->cond, &s->lock, &ts);
    }
    if (s->sessions)
        LOG_WARN("%u test(s) still running at exit", s->sessions);
    pthread_mutex_unlock(&s->lock);
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

int server_run(struct server *s, volatile sig_atomic_t *stop)
{
    int epfd = epoll_create1(EPOLL_CLOEXEC), hupfd;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    char hup_tag;

    if (epfd < 0)
        return -errno;
    s->stop = stop;
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
    }
    for (int i = 0; i < SERVER_MAX_PENDING; i++)
        if (s->pend[i].fd >= 0)
            pending_drop(s, epfd, &s->pend[i], NULL);
    close(epfd);
    if (hupfd >= 0)
        close(hupfd);
    wait_sessions(s);
    return 0;
}

void server_destroy(struct server *s)
{
    if (!s)
        return;
    close(s->lfd);
    iperf3_server_registry_free(s->i3);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->cond);
    free(s);
}

void server_session_started(struct server *s)
{
    pthread_mutex_lock(&s->lock);
    s->sessions++;
    pthread_mutex_unlock(&s->lock);
}
