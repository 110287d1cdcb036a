/* server: listener, acceptor loop and the table of connections not yet sorted. */
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
#include "mptcpinfo.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#define SERVER_PENDING_MAX  4096        /* connections not yet sorted, at most */
#define SERVER_PENDING_PEER 32          /* ... from one address */
#define SERVER_FD_RESERVE   64          /* descriptors kept for the daemon: log, --db, --metrics */
#define SERVER_BACKOFF_MS   100         /* accept pauses this long when no descriptor is left */
#define SERVER_HELLO_WHOLE  16384       /* a hello up to this long is read whole before a thread */
#define SERVER_ACCEPT_BATCH 64          /* accepts per wake-up: pending connections get a turn */
#define SERVER_DRAIN_MS     (30 * 1000) /* waiting for running tests at shutdown */

enum pending_what { PENDING_OPEN, PENDING_NETRIG, PENDING_IPERF3 };

struct pending {
    int fd;
    enum pending_what what; /* not OPEN: its hello is in, it waits for a handshake slot */
    uint64_t since, deadline;
    uint8_t key[16]; /* the peer's address (IPv4-mapped folded), port ignored */
    struct sockaddr_storage peer;
};

struct server {
    struct server_opts o;
    int lfd;
    struct served_conf conf; /* what every test reads */
    struct admit *admit;     /* what every test shares */
    uint32_t cap, npending, nwaiting;
    bool listening;                    /* the listener is in the epoll set */
    uint64_t backoff_until;            /* when it goes back in, after EMFILE */
    uint64_t dropped, drop_log_at;     /* connections evicted, and when we last said so */
    uint64_t backoffs, backoff_log_at; /* accept pauses, and when we last said so */
    uint64_t busy_ns;   /* when a connection or a test was last seen (--idle-timeout) */
    bool reopen_failed; /* --idle-timeout could not reopen the listener: said once */
    struct pending pend[];
};

static void conf_from_opts(struct served_conf *c, const struct server_opts *o, uint16_t port)
{
    bool mptcp = c->mptcp;
    char note[sizeof(c->mptcp_note)];

    memcpy(note, c->mptcp_note, sizeof(note)); /* listen_open's, kept */
    *c = (struct served_conf){
        .mptcp = mptcp,
        .timeout_ms = o->timeout_ms,
        .exclusive = o->exclusive,
        .limits = {.max_duration_ns = o->max_duration_ns,
                   .max_flows = o->max_flows,
                   .max_rate_bps = o->max_rate_bps},
        .auth = o->auth,
        .metrics = o->metrics,
        .third_party = o->third_party,
        .third_party_targets = o->third_party_targets,
        .history_db = o->history_db,
        .port = port,
        .host_snapshot = o->host_snapshot,
    };
    memcpy(c->mptcp_note, note, sizeof(note));
}

/* The daemon's listener: MPTCP where this kernel and namespace have it (plain TCP clients
 * still get plain TCP sockets from it), else TCP with the reason kept for --mptcp clients. */
static int listen_open(struct server *s, uint16_t port, char *err, size_t errlen)
{
    const char *bind = s->o.bind[0] ? s->o.bind : NULL;
    int fd = -1;

    if (!mptcpinfo_why_not(NULL, s->conf.mptcp_note, sizeof(s->conf.mptcp_note)))
        fd = sock_listen_proto(bind, port, s->o.family, mptcpinfo_proto(), s->conf.mptcp_note,
                               sizeof(s->conf.mptcp_note));
    s->conf.mptcp = fd >= 0;
    if (fd >= 0)
        s->conf.mptcp_note[0] = 0;
    else
        fd = sock_listen(bind, port, s->o.family, err, errlen);
    return fd;
}

/* The descriptors the daemon may use: the soft limit raised to the hard one (a daemon's
 * due), a quarter for the pending table, a reserve for itself, the rest for the tests. */
static void fd_budget(uint32_t *pending, uint32_t *tests)
{
    struct rlimit rl;
    uint64_t n = 1024;

    if (!getrlimit(RLIMIT_NOFILE, &rl)) {
        if (rl.rlim_cur < rl.rlim_max && rl.rlim_cur < (1u << 20)) {
            rl.rlim_cur = rl.rlim_max < (1u << 20) ? rl.rlim_max : (1u << 20);
            setrlimit(RLIMIT_NOFILE, &rl);
            getrlimit(RLIMIT_NOFILE, &rl);
        }
        n = rl.rlim_cur == RLIM_INFINITY ? (1u << 20) : rl.rlim_cur;
    }
    *pending = (uint32_t)(n / 4 < 16                   ? 16
                          : n / 4 > SERVER_PENDING_MAX ? SERVER_PENDING_MAX
                                                       : n / 4);
    *tests = n > *pending + 2 * SERVER_FD_RESERVE ? (uint32_t)(n - *pending - SERVER_FD_RESERVE)
                                                  : SERVER_FD_RESERVE;
}

/* --max-memory when not given: a quarter of the machine's memory. */
static uint64_t default_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

    return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size / 4 : 1ULL << 30;
}

struct server *server_create(const struct server_opts *o, char *err, size_t errlen)
{
    struct admit_limits al = {.max_tests = o->one_off ? 1 : o->max_tests,
                              .max_client_tests = o->max_client_tests,
                              .one_off = o->one_off};
    uint32_t cap;
    struct server *s;

    fd_budget(&cap, &al.max_fds);
    al.max_memory = o->max_memory ? o->max_memory : default_memory();
    s = calloc(1, sizeof(*s) + cap * sizeof(struct pending));
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->o = *o;
    s->o.max_memory = al.max_memory;
    s->cap = cap;
    s->lfd = listen_open(s, o->port, err, errlen);
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
    LOG_DBG("listener: %s", s->conf.mptcp ? "MPTCP" : s->conf.mptcp_note);
    for (uint32_t i = 0; i < cap; i++)
        s->pend[i].fd = -1;
    LOG_DBG("budget: %u unsorted connections, %u descriptors and %llu MiB for tests", cap,
            al.max_fds, (unsigned long long)(al.max_memory >> 20));
    return s;
}

uint16_t server_port(const struct server *s) { return s->conf.port; }

uint64_t server_max_memory(const struct server *s) { return s->o.max_memory; }

/* ---------------------------------------------------------------- the pending table */

/* A peer's address as a key (IPv4-mapped IPv6 folded to IPv4), port ignored. */
static void peer_key(const struct sockaddr_storage *sa, uint8_t key[16])
{
    memset(key, 0, 16);
    if (sa->ss_family == AF_INET) {
        memcpy(key + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        key[10] = key[11] = 0xff;
    } else if (sa->ss_family == AF_INET6) {
        memcpy(key, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
    }
}

/* The acceptor no longer waits on p: it was handed on or dropped. */
static void pending_release(struct server *s, int epfd, struct pending *p)
{
    epoll_ctl(epfd, EPOLL_CTL_DEL, p->fd, NULL);
    if (p->what != PENDING_OPEN)
        s->nwaiting--;
    p->fd = -1;
    p->what = PENDING_OPEN;
    s->npending--;
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

/* Makes room: drops the connection waiting longest (from key's address only, unless NULL).
 * A client says what it is within a round trip, so the longest waiting is the likeliest
 * to be idle on purpose. Returns whether one was dropped. */
static bool evict_oldest(struct server *s, int epfd, const uint8_t *key)
{
    struct pending *old = NULL;

    for (uint32_t i = 0; i < s->cap; i++) {
        struct pending *p = &s->pend[i];
        if (p->fd >= 0 && (!key || !memcmp(p->key, key, 16)) && (!old || p->since < old->since))
            old = p;
    }
    if (!old)
        return false;
    metrics_control_error(s->conf.metrics, METRICS_STAGE_CONNECT);
    pending_drop(s, epfd, old, NULL);
    s->dropped++;
    return true;
}

static uint32_t count_peer(const struct server *s, const uint8_t key[16])
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < s->cap; i++)
        n += s->pend[i].fd >= 0 && !memcmp(s->pend[i].key, key, 16);
    return n;
}

/* One line a second at most, however many connections were dropped. */
static void log_pressure(struct server *s, uint64_t now)
{
    if (s->dropped && now >= s->drop_log_at) {
        LOG_WARN("dropped %llu idle connection(s) that had not said what they are: at most "
                 "%u wait at once, %d from one address",
                 (unsigned long long)s->dropped, s->cap, SERVER_PENDING_PEER);
        s->dropped = 0;
        s->drop_log_at = now + 1000000000ULL;
    }
    if (s->backoffs && now >= s->backoff_log_at) {
        LOG_WARN("out of file descriptors: accepting paused %d ms, %llu time(s)", SERVER_BACKOFF_MS,
                 (unsigned long long)s->backoffs);
        s->backoffs = 0;
        s->backoff_log_at = now + 1000000000ULL;
    }
}

/* ---------------------------------------------------------------- accepting */

static void listen_set(struct server *s, int epfd, bool on)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};

    if (on == s->listening || s->lfd < 0)
        return;
    epoll_ctl(epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, s->lfd, &ev);
    s->listening = on;
}

static bool refused_by_acl(struct server *s, int fd, const struct sockaddr_storage *peer)
{
    char who[80];

    if (!s->o.acl || acl_permits(s->o.acl, (const struct sockaddr *)peer))
        return false;
    sock_addr_str((const struct sockaddr *)peer, who, sizeof(who));
    LOG_WARN("refused connection from %s: not allowed by --allow/--deny", who);
    metrics_refused(s->conf.metrics, METRICS_REFUSED_ACL);
    close(fd);
    return true;
}

/* A new connection into the table, making room first: its address's oldest beyond
 * SERVER_PENDING_PEER, the oldest of all when the table is full. */
static struct pending *pending_add(struct server *s, int epfd, int fd,
                                   const struct sockaddr_storage *peer)
{
    struct pending *slot = NULL;
    uint8_t key[16];

    peer_key(peer, key);
    if (count_peer(s, key) >= SERVER_PENDING_PEER)
        evict_oldest(s, epfd, key);
    if (s->npending >= s->cap)
        evict_oldest(s, epfd, NULL);
    for (uint32_t i = 0; i < s->cap && !slot; i++)
        if (s->pend[i].fd < 0)
            slot = &s->pend[i];
    *slot = (struct pending){.fd = fd, .what = PENDING_OPEN, .peer = *peer};
    memcpy(slot->key, key, 16);
    slot->since = clock_mono_ns();
    slot->deadline = slot->since + (uint64_t)s->o.timeout_ms * 1000000ULL;
    s->npending++;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET | EPOLLRDHUP, .data.ptr = slot};
    epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
    return slot;
}

static void classify(struct server *s, int epfd, struct pending *p);

static void accept_new(struct server *s, int epfd)
{
    for (int i = 0; i < SERVER_ACCEPT_BATCH; i++) {
        struct sockaddr_storage peer;
        socklen_t plen = sizeof(peer);
        int fd = accept4(s->lfd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)) {
            /* no descriptor left: free one held by an idle connection, or pause (a level-
             * triggered listener would otherwise wake us at once, forever) */
            if (evict_oldest(s, epfd, NULL))
                continue;
            listen_set(s, epfd, false);
            s->backoff_until = clock_mono_ns() + SERVER_BACKOFF_MS * 1000000ULL;
            s->backoffs++;
            return;
        }
        if (fd < 0)
            return;
        s->busy_ns = clock_mono_ns();
        /* sorted at once when its first bytes came with the handshake, as a client's do */
        if (!refused_by_acl(s, fd, &peer))
            classify(s, epfd, pending_add(s, epfd, fd, &peer));
    }
}

/* ---------------------------------------------------------------- sorting */

/* Its hello is in: a thread for it when a handshake slot is free, else it waits its turn in
 * the table (until its deadline). */
static void try_spawn(struct server *s, int epfd, struct pending *p, enum pending_what what)
{
    int fd = p->fd;
    struct sockaddr_storage peer = p->peer;

    if (p->what == PENDING_OPEN) {
        p->what = what;
        s->nwaiting++;
    }
    if (admit_handshake_enter(s->admit, (const struct sockaddr *)&peer))
        return;
    pending_release(s, epfd, p);
    sock_set_nonblock(fd, false);
    if (what == PENDING_IPERF3)
        iperf3_server_spawn(&s->conf, s->admit, fd, &peer);
    else
        session_spawn(&s->conf, s->admit, fd, &peer);
}

/* A netrig control connection: is its hello frame whole in the socket? A frame too long to
 * wait for (or a header the session will refuse) goes to a thread as it is. */
static bool hello_whole(int fd, const uint8_t *buf, ssize_t n)
{
    uint32_t len;
    int avail = 0;

    if (n < 8)
        return false;
    len = (uint32_t)buf[4] << 24 | (uint32_t)buf[5] << 16 | (uint32_t)buf[6] << 8 | buf[7];
    if (buf[3] != ctl_magic[3] || len == 0 || len > SERVER_HELLO_WHOLE)
        return true;
    return ioctl(fd, FIONREAD, &avail) == 0 && (uint32_t)avail >= 8 + len;
}

static void take_data_conn(struct server *s, int epfd, struct pending *p)
{
    uint8_t buf[CTL_DATA_HELLO_LEN], id[CTL_TEST_ID_LEN];
    uint32_t flow;
    int fd = p->fd;
    char who[80];

    if (recv(fd, buf, CTL_DATA_HELLO_LEN, MSG_DONTWAIT) != CTL_DATA_HELLO_LEN ||
        ctl_data_hello_decode(buf, id, &flow)) {
        pending_drop(s, epfd, p, "malformed data connection hello");
        return;
    }
    sock_addr_str((struct sockaddr *)&p->peer, who, sizeof(who));
    pending_release(s, epfd, p);
    LOG_DBG("data connection for flow %u", flow);
    if (admit_route(s->admit, ADMIT_KEY_NETRIG, id, flow, fd) <= 0) {
        LOG_WARN("dropped connection from %s: data connection names no running test", who);
        close(fd);
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
        if (hello_whole(p->fd, buf, n))
            try_spawn(s, epfd, p, PENDING_NETRIG);
        return;
    }
    if (!memcmp(buf, ctl_data_magic, 4)) {
        if (n >= CTL_DATA_HELLO_LEN)
            take_data_conn(s, epfd, p);
        return;
    }
    i3 = iperf3_proto_cookie_sniff(buf, (size_t)n); /* an iperf3 client: control or a stream */
    if (i3 == IPERF3_SNIFF_MORE)
        return;
    if (i3 == IPERF3_SNIFF_COOKIE) {
        int fd = p->fd;
        struct sockaddr_storage peer = p->peer;
        if (admit_registered(s->admit, ADMIT_KEY_IPERF3, buf) == 0) {
            try_spawn(s, epfd, p, PENDING_IPERF3); /* a new test */
            return;
        }
        pending_release(s, epfd, p);
        iperf3_server_stream(s->admit, fd, &peer);
        return;
    }
    pending_drop(s, epfd, p,
                 i3 == IPERF3_SNIFF_BAD ? "malformed iperf3 cookie"
                                        : "not a netrig client (unknown first bytes)");
}

/* Deadlines, and hellos waiting for a handshake slot. */
static void sweep_pending(struct server *s, int epfd, uint64_t now)
{
    for (uint32_t i = 0; i < s->cap; i++) {
        struct pending *p = &s->pend[i];
        if (p->fd < 0)
            continue;
        if (now >= p->deadline)
            pending_drop(s, epfd, p,
                         p->what == PENDING_OPEN
                             ? "sent nothing usable before the timeout"
                             : "too many connections in their handshake: waited until the timeout");
        else if (p->what != PENDING_OPEN)
            try_spawn(s, epfd, p, p->what);
    }
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

/* How long the loop may sleep: 100 ms, less while accepting is paused or hellos wait. */
static int loop_wait_ms(const struct server *s, uint64_t now)
{
    int ms = s->nwaiting ? 10 : 100;

    if (!s->listening) {
        uint64_t left = s->backoff_until > now ? (s->backoff_until - now) / 1000000 + 1 : 0;
        if ((int)left < ms)
            ms = (int)left;
    }
    return ms;
}

/* --idle-timeout without -1: a fresh listening socket on the same port, as iperf3 restarts an
 * idle server (whatever state the old one was in goes with it). Tried again on the next
 * round while the port cannot be had. */
static void listener_reopen(struct server *s, int epfd)
{
    char err[256];
    int fd;

    listen_set(s, epfd, false);
    if (s->lfd >= 0)
        close(s->lfd);
    s->lfd = -1;
    fd = listen_open(s, s->conf.port, err, sizeof(err));
    if (fd < 0) {
        if (!s->reopen_failed)
            LOG_ERR("--idle-timeout: cannot reopen the listening socket: %s; trying again", err);
        s->reopen_failed = true;
        return;
    }
    sock_set_nonblock(fd, true);
    s->lfd = fd;
    listen_set(s, epfd, true);
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

int server_run(struct server *s, _Atomic int *stop)
{
    int epfd = epoll_create1(EPOLL_CLOEXEC), hupfd;
    enum server_end end = SERVER_END_STOP;
    char hup_tag;

    if (epfd < 0)
        return -errno;
    s->conf.stop = stop;
    s->busy_ns = clock_mono_ns();
    listen_set(s, epfd, true);
    hupfd = hup_open(epfd, &hup_tag);
    while (!*stop) {
        struct epoll_event evs[64];
        uint64_t now = clock_mono_ns();
        int n;

        if (!s->listening && now >= s->backoff_until)
            listen_set(s, epfd, true);
        n = epoll_wait(epfd, evs, 64, loop_wait_ms(s, now));
        for (int i = 0; i < n; i++) {
            if (!evs[i].data.ptr)
                accept_new(s, epfd);
            else if (evs[i].data.ptr == &hup_tag)
                hup_handle(hupfd);
            else if (((struct pending *)evs[i].data.ptr)->fd >= 0 &&
                     ((struct pending *)evs[i].data.ptr)->what == PENDING_OPEN)
                classify(s, epfd, evs[i].data.ptr);
        }
        now = clock_mono_ns();
        sweep_pending(s, epfd, now);
        log_pressure(s, now);
        if (server_round(s, epfd, &end))
            break;
    }
    for (uint32_t i = 0; i < s->cap; i++)
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
