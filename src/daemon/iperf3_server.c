/* iperf3_server: one iperf3 client's test on the daemon, from its cookie to IPERF_DONE. */
#define _GNU_SOURCE
#include "iperf3_server.h"
#include "clock.h"

#include "dataconn.h"
#include "engine.h"
#include "flow_kinds.h"
#include "iperf3_proto.h"
#include "log.h"
#include "metrics.h"
#include "policy.h"
#include "server.h"
#include "sock.h"
#include "store.h"
#include "units.h"
#include "worker.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define I3S_REG_CAP            256
#define I3S_WATCHDOG_NS        (40ULL * 1000000000ULL) /* iperf3's own grace past time + omit */
#define I3S_MAX_CLIENT_RESULTS (1 << 20)
#define I3S_MAX_THREADS        4
#define I3S_OUTPUT_CAP         (256 * 1024)

/* iperf3's UDP "connect" exchange, as bytes on the wire (iperf3 writes host-order integers;
 * every release since 3.0 on little-endian hosts puts these bytes out). */
static const uint8_t udp_reply[4] = {'6', '7', '8', '9'};

struct reg_slot {
    bool used, open; /* open: still gathering streams */
    char cookie[IPERF3_COOKIE_LEN];
    int pipe_wr;
};

struct iperf3_registry {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool udp_busy; /* a test is setting up UDP streams on the shared port */
    struct reg_slot slot[I3S_REG_CAP];
};

struct i3s {
    struct server *srv;
    struct iperf3_registry *reg;
    int ctl;
    struct sockaddr_storage peer;
    char who[80];
    char cookie[IPERF3_COOKIE_LEN];
    char tag[9]; /* the cookie's start, for the log */
    struct iperf3_params ip;
    struct engine *e;
    uint32_t nflows;
    int *fds; /* flow sockets (owned by the engine once attached) */
    int pipe_rd, pipe_wr, udp_listen;
    bool registered, udp_turn, admitted, exclusive, terminated;
    struct side_result side;
};

/* ---------------------------------------------------------------- registry */

struct iperf3_registry *iperf3_server_registry_new(void)
{
    struct iperf3_registry *r = calloc(1, sizeof(*r));

    if (r) {
        pthread_mutex_init(&r->lock, NULL);
        pthread_cond_init(&r->cond, NULL);
    }
    return r;
}

void iperf3_server_registry_free(struct iperf3_registry *r)
{
    if (!r)
        return;
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->cond);
    free(r);
}

static struct reg_slot *reg_find(struct iperf3_registry *r, const char *cookie)
{
    for (int i = 0; i < I3S_REG_CAP; i++)
        if (r->slot[i].used && !memcmp(r->slot[i].cookie, cookie, IPERF3_COOKIE_LEN))
            return &r->slot[i];
    return NULL;
}

static int reg_add(struct iperf3_registry *r, const char *cookie, int pipe_wr)
{
    int rc = -ENOSPC;

    pthread_mutex_lock(&r->lock);
    if (reg_find(r, cookie))
        rc = -EEXIST;
    for (int i = 0; rc == -ENOSPC && i < I3S_REG_CAP; i++) {
        if (r->slot[i].used)
            continue;
        r->slot[i] = (struct reg_slot){.used = true, .open = true, .pipe_wr = pipe_wr};
        memcpy(r->slot[i].cookie, cookie, IPERF3_COOKIE_LEN);
        rc = 0;
    }
    pthread_mutex_unlock(&r->lock);
    return rc;
}

static void reg_set(struct iperf3_registry *r, const char *cookie, bool remove)
{
    struct reg_slot *e;

    pthread_mutex_lock(&r->lock);
    e = reg_find(r, cookie);
    if (e && remove)
        e->used = false;
    else if (e)
        e->open = false;
    pthread_mutex_unlock(&r->lock);
}

/* 1 = handed to its test, 0 = no test has this cookie, -1 = its test has all its streams. */
static int reg_route(struct iperf3_registry *r, const char *cookie, int fd)
{
    struct reg_slot *e;
    int rc = 0;

    pthread_mutex_lock(&r->lock);
    e = reg_find(r, cookie);
    if (e && !e->open)
        rc = -1;
    else if (e)
        rc = write(e->pipe_wr, &fd, sizeof(fd)) == (ssize_t)sizeof(fd) ? 1 : -1;
    pthread_mutex_unlock(&r->lock);
    return rc;
}

static int udp_turn_take(struct iperf3_registry *r, int wait_ms)
{
    struct timespec ts;
    int rc = 0;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += wait_ms / 1000;
    ts.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&r->lock);
    while (r->udp_busy && rc == 0)
        rc = pthread_cond_timedwait(&r->cond, &r->lock, &ts);
    if (!r->udp_busy) {
        r->udp_busy = true;
        rc = 0;
    }
    pthread_mutex_unlock(&r->lock);
    return rc ? -EBUSY : 0;
}

static void udp_turn_give(struct iperf3_registry *r)
{
    pthread_mutex_lock(&r->lock);
    r->udp_busy = false;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
}

/* ---------------------------------------------------------------- set-up */

static int tmo(const struct i3s *ss) { return server_opts(ss->srv)->timeout_ms; }

/* --metrics: where events are counted (NULL: not counted) */
static struct metrics *mx(const struct i3s *ss) { return server_opts(ss->srv)->metrics; }

/* How a refusal is counted: a metrics_refusal, or a control error while setting up. */
enum {
    I3S_BAD = METRICS_REFUSED_BAD_REQUEST,
    I3S_LIMIT = METRICS_REFUSED_LIMIT,
    I3S_AUTH = METRICS_REFUSED_AUTH_FAILED,
    I3S_SETUP = -1
};

/* Refuses the test: SERVER_ERROR with the iperf3 code the client prints, and a log line. */
static int refuse(struct i3s *ss, int kind, int code, int err_no, const char *why)
{
    LOG_WARN("iperf3 client %s: refused: %s", ss->who, why);
    if (kind >= 0)
        metrics_refused(mx(ss), (enum metrics_refusal)kind);
    else
        metrics_control_error(mx(ss), METRICS_STAGE_SETUP);
    iperf3_proto_error_send(ss->ctl, code, err_no, 2000);
    return -EPERM;
}

static int admit(struct i3s *ss)
{
    const struct server_opts *o = server_opts(ss->srv);
    uint32_t running;
    int rc;

    if (o->auth)
        return refuse(ss, I3S_AUTH, IPERF3_IEAUTHTEST, 0,
                      "this server requires netrig authentication "
                      "(--auth-file), which iperf3 clients cannot give");
    rc = server_admit(ss->srv, (struct sockaddr *)&ss->peer, &running);
    if (rc) {
        LOG_WARN("iperf3 client %s: refused: busy (%u tests %s)", ss->who, running,
                 rc == -EUSERS ? "from this address" : "running");
        metrics_refused(mx(ss), METRICS_REFUSED_BUSY);
        iperf3_proto_state_send(ss->ctl, IPERF3_ACCESS_DENIED, 2000);
        return -EBUSY;
    }
    ss->admitted = true;
    if (o->exclusive) {
        if (server_exclusive_acquire(ss->srv, tmo(ss), NULL, NULL)) {
            LOG_WARN("iperf3 client %s: refused: another test holds the exclusive turn", ss->who);
            metrics_refused(mx(ss), METRICS_REFUSED_BUSY);
            iperf3_proto_state_send(ss->ctl, IPERF3_ACCESS_DENIED, 2000);
            return -EBUSY;
        }
        ss->exclusive = true;
    }
    return 0;
}

/* --max-duration, --max-flows, --max-rate and the congestion control, as iperf3 codes. */
static int check_limits(struct i3s *ss)
{
    const struct server_opts *o = server_opts(ss->srv);
    struct params *p = &ss->ip.p;
    uint64_t flow_rate;
    char msg[256];
    int fd, code;

    if (policy_check_limits(o, p, &flow_rate, msg, sizeof(msg))) {
        code = o->max_duration_ns && p->duration_ns + p->omit_ns > o->max_duration_ns
                   ? IPERF3_IEDURATION
               : o->max_flows && params_total_flows(p) > o->max_flows ? IPERF3_IENUMSTREAMS
                                                                      : IPERF3_IETOTALRATE;
        return refuse(ss, I3S_LIMIT, code, 0, msg);
    }
    if (!p->congestion[0])
        return 0;
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    code = fd >= 0 &&
           !setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, p->congestion, strlen(p->congestion));
    if (fd >= 0)
        close(fd);
    if (code)
        return 0;
    snprintf(msg, sizeof(msg), "congestion control '%s' is not available here", p->congestion);
    return refuse(ss, I3S_BAD, IPERF3_IESETCONGESTION, 0, msg);
}

static int exchange_params(struct i3s *ss)
{
    cJSON *j = NULL;
    char err[256];
    int code, err_no, rc;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

    if (iperf3_proto_state_send(ss->ctl, IPERF3_PARAM_EXCHANGE, tmo(ss)))
        return -EIO;
    rc = iperf3_proto_json_recv(ss->ctl, IPERF3_MAX_PARAMS, tmo(ss), &j, err, sizeof(err));
    if (rc == -EMSGSIZE || rc == -EPROTO)
        return refuse(ss, I3S_BAD, IPERF3_IERECVPARAMS, rc == -EMSGSIZE ? EMSGSIZE : EINVAL, err);
    if (rc) {
        LOG_WARN("iperf3 client %s: no parameters: %s", ss->who, err);
        return rc;
    }
    rc = iperf3_proto_params_decode(j, &ss->ip, &code, &err_no, err, sizeof(err));
    cJSON_Delete(j);
    if (rc)
        return refuse(ss, I3S_BAD, code, err_no, err);
    if (ss->ip.ignored)
        LOG_INFO("iperf3 test %s: ignoring option(s) %s", ss->tag, ss->ip.ignored_names);
    ss->nflows = params_total_flows(&ss->ip.p);
    ss->ip.p.server_threads = ss->nflows;
    if (ss->ip.p.server_threads > I3S_MAX_THREADS)
        ss->ip.p.server_threads = I3S_MAX_THREADS;
    if (ncpu > 0 && ss->ip.p.server_threads > (uint32_t)ncpu)
        ss->ip.p.server_threads = (uint32_t)ncpu;
    return check_limits(ss);
}

/* A UDP socket on the daemon's port, at the control connection's local address. */
static int udp_listener(struct i3s *ss)
{
    struct sockaddr_storage a;
    uint16_t port = server_port(ss->srv);
    int one = 1, fd;

    if (dataconn_local_addr(ss->ctl, &a))
        return -errno;
    if (a.ss_family == AF_INET6)
        ((struct sockaddr_in6 *)&a)->sin6_port = htons(port);
    else
        ((struct sockaddr_in *)&a)->sin_port = htons(port);
    fd = socket(a.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&a,
             a.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in))) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

/* TCP: the cookie in the registry; UDP: the set-up turn and a listener. Then CREATE_STREAMS. */
static int prepare_streams(struct i3s *ss)
{
    char err[320];
    int fds[2], rc;

    ss->e =
        engine_create(flow_kind_for(&ss->ip.p, false), &ss->ip.p, false, NULL, err, sizeof(err));
    ss->fds = calloc(ss->nflows, sizeof(*ss->fds));
    if (!ss->e || !ss->fds)
        return refuse(ss, I3S_SETUP, IPERF3_IEINITTEST, ENOMEM, ss->e ? "out of memory" : err);
    if (ss->ip.p.udp) {
        if (udp_turn_take(ss->reg, tmo(ss)))
            return refuse(ss, I3S_SETUP, IPERF3_IESTREAMLISTEN, EBUSY,
                          "another iperf3 UDP test kept the port's set-up turn too long");
        ss->udp_turn = true;
        ss->udp_listen = udp_listener(ss);
        if (ss->udp_listen < 0) {
            snprintf(err, sizeof(err), "cannot open UDP port %u: %s", server_port(ss->srv),
                     strerror(-ss->udp_listen));
            return refuse(ss, I3S_SETUP, IPERF3_IESTREAMLISTEN, -ss->udp_listen, err);
        }
    } else {
        if (pipe2(fds, O_CLOEXEC | O_NONBLOCK))
            return refuse(ss, I3S_SETUP, IPERF3_IEINITTEST, errno, "cannot create a pipe");
        ss->pipe_rd = fds[0];
        ss->pipe_wr = fds[1];
        rc = reg_add(ss->reg, ss->cookie, ss->pipe_wr);
        if (rc)
            return refuse(ss, I3S_SETUP, IPERF3_IEINITTEST, -rc,
                          rc == -EEXIST ? "its cookie is already in use"
                                        : "too many iperf3 tests at once");
        ss->registered = true;
    }
    return iperf3_proto_state_send(ss->ctl, IPERF3_CREATE_STREAMS, tmo(ss)) ? -EIO : 0;
}

static int attach(struct i3s *ss, uint32_t idx, int fd)
{
    char err[256];

    if (engine_attach(ss->e, idx, fd, err, sizeof(err))) {
        close(fd);
        return refuse(ss, I3S_SETUP, IPERF3_IESTREAMACCEPT, EPROTO, err);
    }
    ss->fds[idx] = fd;
    return 0;
}

/* One UDP stream: the client's datagram names its address; the listener becomes the stream's
 * socket (connected to it), a new listener takes its place, then the reply goes out. Returns 0
 * (a stream), 1 (nothing yet), 2 (a stray datagram, ignored) or -errno. */
static int udp_accept_one(struct i3s *ss, uint32_t idx)
{
    struct sockaddr_storage from;
    socklen_t flen = sizeof(from);
    uint8_t buf[64];
    int fd = ss->udp_listen, next;
    ssize_t n =
        recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *)&from, &flen);

    if (n < 0)
        return errno == EAGAIN ? 1 : -errno;
    if (n != 4) { /* iperf3 clients send 4 bytes; a late datagram of an old stream is not one */
        LOG_DBG("iperf3 test %s: ignored a %zd-byte datagram on the UDP port", ss->tag, n);
        return 2;
    }
    if (connect(fd, (struct sockaddr *)&from, flen))
        return -errno;
    next = udp_listener(ss);
    if (next < 0)
        return next;
    ss->udp_listen = next;
    if (send(fd, udp_reply, sizeof(udp_reply), MSG_DONTWAIT) < 0)
        LOG_DBG("iperf3 test %s: UDP reply for stream %u: %s", ss->tag, idx, strerror(errno));
    return attach(ss, idx, fd) ? -EPROTO : 0;
}

/* Streams arrive in order: TCP through the acceptor (pipe), UDP on the listener. The limit
 * is the server's --timeout without a new stream (stray datagrams do not extend it); the
 * control connection speaking means the client gave up. */
static int gather_streams(struct i3s *ss)
{
    uint64_t deadline = clock_mono_ns() + (uint64_t)tmo(ss) * 1000000ULL;
    uint32_t have = 0;
    int rc;

    while (have < ss->nflows) {
        struct pollfd pf[2] = {
            {.fd = ss->ip.p.udp ? ss->udp_listen : ss->pipe_rd, .events = POLLIN},
            {.fd = ss->ctl, .events = POLLIN}};
        uint64_t now = clock_mono_ns();
        uint32_t before = have;
        int fd;

        rc = now < deadline ? poll(pf, 2, (int)((deadline - now) / 1000000ULL) + 1) : 0;
        if (rc == 0) {
            char why[128];
            snprintf(why, sizeof(why), "only %u of %u streams arrived within %d ms", have,
                     ss->nflows, tmo(ss));
            return refuse(ss, I3S_SETUP, IPERF3_IESTREAMACCEPT, ETIMEDOUT, why);
        }
        if (rc < 0 && errno != EINTR)
            return -errno;
        if (pf[1].revents) {
            LOG_WARN("iperf3 test %s: client %s left while opening streams", ss->tag, ss->who);
            return -ECONNRESET;
        }
        if (!(pf[0].revents & POLLIN))
            continue;
        if (ss->ip.p.udp) {
            rc = udp_accept_one(ss, have);
            if (rc < 0)
                return rc == -EPROTO ? rc
                                     : refuse(ss, I3S_SETUP, IPERF3_IESTREAMACCEPT, -rc,
                                              "UDP stream set-up failed");
            have += rc == 0;
        } else {
            while (have < ss->nflows && read(ss->pipe_rd, &fd, sizeof(fd)) == (ssize_t)sizeof(fd))
                if (attach(ss, have++, fd))
                    return -EPROTO;
        }
        if (have > before)
            deadline = clock_mono_ns() + (uint64_t)tmo(ss) * 1000000ULL;
    }
    return 0;
}

/* Streams complete: later ones with this cookie are refused; the UDP turn passes on. */
static void close_setup(struct i3s *ss)
{
    int fd;

    if (ss->registered)
        reg_set(ss->reg, ss->cookie, false);
    if (ss->pipe_rd >= 0) /* routed before we closed the door */
        while (read(ss->pipe_rd, &fd, sizeof(fd)) == (ssize_t)sizeof(fd))
            close(fd);
    if (ss->udp_listen >= 0)
        close(ss->udp_listen);
    ss->udp_listen = -1;
    if (ss->udp_turn)
        udp_turn_give(ss->reg);
    ss->udp_turn = false;
}

static int start(struct i3s *ss)
{
    char err[256];

    if (iperf3_proto_state_send(ss->ctl, IPERF3_TEST_START, tmo(ss)) ||
        iperf3_proto_state_send(ss->ctl, IPERF3_TEST_RUNNING, tmo(ss)))
        return -EIO;
    if (engine_start(ss->e, err, sizeof(err)))
        return refuse(ss, I3S_SETUP, IPERF3_IEINITTEST, EIO, err);
    metrics_test_started(mx(ss), &ss->ip.p);
    LOG_INFO("iperf3 test %s from %s: %s, %u stream(s) %s, %.4gs%s%s", ss->tag, ss->who,
             ss->ip.p.udp ? "udp" : "tcp", ss->ip.p.flows, params_dir_name(ss->ip.p.dir),
             ss->ip.p.duration_ns / 1e9, ss->ip.client_version[0] ? ", client " : "",
             ss->ip.client_version);
    return 0;
}

/* ---------------------------------------------------------------- run and results */

static int on_watch(void *arg)
{
    struct i3s *ss = arg;
    int st = 0, rc = iperf3_proto_state_recv(ss->ctl, &st, tmo(ss));

    if (rc) {
        LOG_WARN("iperf3 test %s: client %s: control connection %s", ss->tag, ss->who,
                 rc == -ENODATA ? "closed" : strerror(-rc));
        return -1;
    }
    rc = iperf3_proto_server_running_step(st);
    if (rc == -ECONNABORTED) {
        ss->terminated = true;
        LOG_INFO("iperf3 test %s: client %s terminated the test", ss->tag, ss->who);
    } else if (rc < 0) {
        LOG_WARN("iperf3 test %s: client %s sent state %d (%s) during the test", ss->tag, ss->who,
                 st, iperf3_proto_state_name(st));
    }
    return rc < 0 ? -1 : rc;
}

static int on_interval(void *arg, const struct side_result *s, const struct interval *iv)
{
    struct i3s *ss = arg;
    uint64_t limit = server_opts(ss->srv)->max_rate_bps;

    (void)s;
    if (!limit || iv->omitted || !policy_rate_exceeded(limit, iv))
        return 0;
    refuse(ss, I3S_LIMIT, IPERF3_IETOTALRATE, 0, "over --max-rate: stopped");
    return 1;
}

/* What `iperf3 --get-server-output` prints: our side's intervals and per-stream totals. */
static char *server_output(const struct i3s *ss)
{
    const struct side_result *s = &ss->side;
    char *out = malloc(I3S_OUTPUT_CAP), b[32], r[32];
    size_t n = 0;

#define PUT(...)                                                                                   \
    do {                                                                                           \
        if (n < I3S_OUTPUT_CAP)                                                                    \
            n += (size_t)snprintf(out + n, I3S_OUTPUT_CAP - n, __VA_ARGS__);                       \
    } while (0)
    if (!out)
        return NULL;
    PUT("netrig %s serving iperf3 client %s: %s, %u stream(s) %s\n", NETRIG_VERSION, ss->who,
        ss->ip.p.udp ? "UDP" : "TCP", ss->ip.p.flows, params_dir_name(ss->ip.p.dir));
    PUT("[ ID] Interval           Transfer       Bitrate\n");
    for (uint32_t i = 0; i < s->nintervals; i++) {
        const struct interval *iv = &s->intervals[i];
        double bytes = (double)(iv->sent_bytes + iv->recv_bytes), len = iv->end_s - iv->start_s;
        units_format_bytes(bytes, b, sizeof(b));
        units_format_rate(len > 0 ? bytes * 8 / len : 0, r, sizeof(r));
        PUT("[SUM] %6.2f-%-6.2f sec %12s %15s%s\n", iv->start_s, iv->end_s, b, r,
            iv->omitted ? "  (omitted)" : "");
    }
    PUT("- - - - - - - - - - - - - - - - - - - - - - - - -\n");
    for (uint32_t i = 0; i < s->nflows; i++) {
        const struct side_flow *f = &s->flows[i];
        units_format_bytes((double)f->bytes, b, sizeof(b));
        units_format_rate(f->seconds > 0 ? f->bytes * 8.0 / f->seconds : 0, r, sizeof(r));
        PUT("[%3d] %6.2f-%-6.2f sec %12s %15s  %s\n", iperf3_proto_stream_id(f->id), 0.0,
            f->seconds, b, r, f->sender ? "sender" : "receiver");
    }
#undef PUT
    return out;
}

static void log_client_results(struct i3s *ss, const cJSON *j)
{
    struct iperf3_results res;
    char err[256], rate[32];
    double bytes = 0, secs = 0;

    if (iperf3_proto_results_decode(j, 2 * IPERF3_MAX_STREAMS, &res, err, sizeof(err))) {
        LOG_WARN("iperf3 test %s: client %s: %s", ss->tag, ss->who, err);
        return;
    }
    for (uint32_t i = 0; i < res.nstreams; i++) {
        bytes += (double)res.streams[i].bytes;
        if (res.streams[i].end_s - res.streams[i].start_s > secs)
            secs = res.streams[i].end_s - res.streams[i].start_s;
    }
    units_format_rate(secs > 0 ? bytes * 8 / secs : 0, rate, sizeof(rate));
    LOG_INFO("iperf3 test %s: client %s reports %s over %u stream(s), CPU %.1f%%", ss->tag, ss->who,
             rate, res.nstreams, res.cpu_total);
    iperf3_proto_results_free(&res);
}

/* EXCHANGE_RESULTS: theirs, then ours; DISPLAY_RESULTS; then (bounded) IPERF_DONE. */
static void exchange_results(struct i3s *ss)
{
    cJSON *j = NULL;
    char err[256], *text = NULL;
    int st, rc;

    if (iperf3_proto_state_send(ss->ctl, IPERF3_EXCHANGE_RESULTS, tmo(ss)))
        return;
    rc = iperf3_proto_json_recv(ss->ctl, I3S_MAX_CLIENT_RESULTS, tmo(ss), &j, err, sizeof(err));
    if (rc) {
        LOG_WARN("iperf3 test %s: client %s results: %s", ss->tag, ss->who, err);
        if (rc == -EMSGSIZE || rc == -EPROTO)
            iperf3_proto_error_send(ss->ctl, IPERF3_IERECVRESULTS, EINVAL, 2000);
        return;
    }
    log_client_results(ss, j);
    cJSON_Delete(j);
    if (ss->ip.get_server_output)
        text = server_output(ss);
    j = iperf3_proto_results_encode(&ss->side, &ss->ip.p, true, text);
    free(text);
    rc = j ? iperf3_proto_json_send(ss->ctl, j, tmo(ss)) : -ENOMEM;
    cJSON_Delete(j);
    if (rc || iperf3_proto_state_send(ss->ctl, IPERF3_DISPLAY_RESULTS, tmo(ss)))
        return;
    rc = iperf3_proto_state_recv(ss->ctl, &st, tmo(ss));
    if (!rc && st != IPERF3_IPERF_DONE)
        LOG_DBG("iperf3 test %s: client ended with state %d", ss->tag, st);
}

/* serve --db: our side of the test goes into the history like a native test's (after the
 * client has its results, so storing never delays them). */
static void save_history(struct i3s *ss)
{
    char err[512];
    int64_t id;

    if (store_save_served(server_opts(ss->srv)->history_db, &ss->ip.p, &ss->side, ss->who, &id, err,
                          sizeof(err)))
        LOG_WARN("iperf3 test %s: not saved to the history: %s", ss->tag, err);
    else
        LOG_INFO("iperf3 test %s saved as run %lld", ss->tag, (long long)id);
}

static const char *end_text(enum engine_end why, const struct i3s *ss)
{
    switch (why) {
    case ENGINE_END_WATCH: return "complete";
    case ENGINE_END_LIMIT: return "stopped: over --max-rate";
    case ENGINE_END_SIGNAL: return "server shutting down";
    case ENGINE_END_TIME: return "watchdog: the client never ended the test";
    case ENGINE_END_FLOWS: return "every stream ended";
    default: return ss->terminated ? "client terminated the test" : "client gone";
    }
}

static void run_and_report(struct i3s *ss)
{
    struct engine_hooks h = {
        .run_ns = ss->ip.p.duration_ns + ss->ip.p.omit_ns + I3S_WATCHDOG_NS,
        .watch_fd = ss->ctl,
        .on_watch = on_watch,
        .on_interval = on_interval,
        .stop_flag = server_stop_flag(ss->srv),
        .ctx = ss,
    };
    enum engine_end why = engine_run(ss->e, &h);
    double bytes = 0, secs = 0;
    char rate[32];
    int st;

    /* every stream gone before TEST_END (the client closed them): TEST_END may follow */
    if (why == ENGINE_END_FLOWS && !iperf3_proto_state_recv(ss->ctl, &st, tmo(ss)) &&
        iperf3_proto_server_running_step(st) == 1)
        why = ENGINE_END_WATCH;
    engine_stop(ss->e);
    /* iperf3 clients keep their streams open until the end: our receivers take what has
     * arrived, then end (a read shutdown makes the socket report end-of-file once empty) */
    for (uint32_t i = 0; !ss->ip.p.udp && i < ss->nflows; i++)
        if (params_flow_client_sends(&ss->ip.p, i) && ss->fds[i] >= 0)
            shutdown(ss->fds[i], SHUT_RD);
    engine_finish(ss->e, &ss->side);
    metrics_test_done(mx(ss), &ss->ip.p, (struct sockaddr *)&ss->peer, &ss->side,
                      why == ENGINE_END_WATCH);
    for (uint32_t i = 0; i < ss->side.nflows; i++) {
        bytes += (double)ss->side.flows[i].bytes;
        if (ss->side.flows[i].seconds > secs)
            secs = ss->side.flows[i].seconds;
    }
    units_format_rate(secs > 0 ? bytes * 8 / secs : 0, rate, sizeof(rate));
    LOG_INFO("iperf3 test %s from %s done: %s (%s)", ss->tag, ss->who, rate, end_text(why, ss));
    if (why == ENGINE_END_WATCH)
        exchange_results(ss);
    else if (why == ENGINE_END_SIGNAL)
        iperf3_proto_state_send(ss->ctl, IPERF3_SERVER_TERMINATE, 2000);
    if (server_opts(ss->srv)->history_db && why != ENGINE_END_ERROR)
        save_history(ss);
}

/* ---------------------------------------------------------------- thread */

static void cleanup(struct i3s *ss)
{
    close_setup(ss);
    if (ss->registered)
        reg_set(ss->reg, ss->cookie, true);
    engine_destroy(ss->e); /* closes the attached flow sockets */
    free(ss->fds);
    if (ss->pipe_rd >= 0)
        close(ss->pipe_rd);
    if (ss->pipe_wr >= 0)
        close(ss->pipe_wr);
    result_side_fini(&ss->side);
    if (ss->exclusive)
        server_exclusive_release(ss->srv);
    if (ss->admitted)
        server_release(ss->srv, (struct sockaddr *)&ss->peer);
    close(ss->ctl);
    server_session_done(ss->srv);
    free(ss);
}

static void *i3s_main(void *arg)
{
    struct i3s *ss = arg;
    int one = 1;

    setsockopt(ss->ctl, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (!admit(ss) && !exchange_params(ss) && !prepare_streams(ss) && !gather_streams(ss)) {
        close_setup(ss);
        if (!start(ss))
            run_and_report(ss);
    }
    cleanup(ss);
    return NULL;
}

static void spawn(struct server *s, int fd, const struct sockaddr_storage *peer, const char *cookie,
                  const char *who)
{
    struct i3s *ss = calloc(1, sizeof(*ss));
    pthread_attr_t attr;
    pthread_t th;
    int rc;

    if (!ss) {
        close(fd);
        return;
    }
    ss->srv = s;
    ss->reg = server_iperf3(s);
    ss->ctl = fd;
    ss->peer = *peer;
    ss->pipe_rd = ss->pipe_wr = ss->udp_listen = -1;
    snprintf(ss->who, sizeof(ss->who), "%s", who);
    memcpy(ss->cookie, cookie, IPERF3_COOKIE_LEN);
    snprintf(ss->tag, sizeof(ss->tag), "%.8s", cookie);
    sock_set_nonblock(fd, false);
    server_session_started(s);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&th, &attr, i3s_main, ss);
    pthread_attr_destroy(&attr);
    if (rc) {
        LOG_ERR("cannot start a thread for iperf3 client %s: %s", who, strerror(rc));
        server_session_done(s);
        close(fd);
        free(ss);
    }
}

void iperf3_server_take(struct server *s, int fd, const struct sockaddr_storage *peer)
{
    uint8_t cookie[IPERF3_COOKIE_LEN];
    int8_t denied = IPERF3_ACCESS_DENIED;
    char who[80];
    int rc;

    sock_addr_str((const struct sockaddr *)peer, who, sizeof(who));
    if (recv(fd, cookie, sizeof(cookie), MSG_DONTWAIT) != (ssize_t)sizeof(cookie) ||
        !iperf3_proto_cookie_valid(cookie, sizeof(cookie))) {
        LOG_WARN("dropped connection from %s: malformed iperf3 cookie", who);
        close(fd);
        return;
    }
    rc = reg_route(server_iperf3(s), (const char *)cookie, fd);
    if (rc > 0) {
        LOG_DBG("iperf3 stream from %s for test %.8s", who, (const char *)cookie);
        return;
    }
    if (rc < 0) {
        LOG_WARN("refused iperf3 stream from %s: test %.8s is not accepting streams", who,
                 (const char *)cookie);
        if (send(fd, &denied, 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
            LOG_DBG("iperf3 stream from %s: %s", who, strerror(errno));
        close(fd);
        return;
    }
    LOG_DBG("iperf3 control connection from %s", who);
    spawn(s, fd, peer, (const char *)cookie, who);
}
