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
#include "sock.h"
#include "test_kind.h"
#include "store.h"
#include "units.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define I3S_GRACE_NS           CTL_END_GRACE_NS /* past time + omit: the test's hard end */
#define I3S_MAX_CLIENT_RESULTS (1 << 20)
#define I3S_MAX_THREADS        4
#define I3S_OUTPUT_CAP         (256 * 1024)

/* iperf3's UDP "connect" exchange, as bytes on the wire (iperf3 writes host-order integers;
 * every release since 3.0 on little-endian hosts puts these bytes out). */
static const uint8_t udp_reply[4] = {'6', '7', '8', '9'};

struct i3s {
    struct served t; /* control connection, peer, hold on the daemon's shared state */
    char cookie[IPERF3_COOKIE_LEN];
    char tag[9]; /* the cookie's start, for the log */
    struct iperf3_params ip;
    struct engine *e;
    uint32_t nflows;
    int *fds; /* flow sockets (owned by the engine once attached) */
    int udp_listen;
    bool udp_turn, terminated;
    uint64_t
        setup_end; /* CLOCK_MONOTONIC: every stream in by then (one deadline, not per stream) */
    struct policy_meter meter; /* --max-rate, on the wire */
    struct side_result side;
};

/* ---------------------------------------------------------------- set-up */

static int tmo(const struct i3s *ss) { return ss->t.conf->timeout_ms; }

/* --metrics: where events are counted (NULL: not counted) */
static struct metrics *mx(const struct i3s *ss) { return ss->t.conf->metrics; }

/* How a refusal is counted: a metrics_refusal, or a control error while setting up. */
enum {
    I3S_BAD = METRICS_REFUSED_BAD_REQUEST,
    I3S_LIMIT = METRICS_REFUSED_LIMIT,
    I3S_AUTH = METRICS_REFUSED_AUTH_FAILED,
    I3S_SETUP = SERVED_SETUP_ERROR
};

/* Refuses the test: SERVER_ERROR with the iperf3 code the client prints, and a log line. */
static int refuse(struct i3s *ss, int count, int code, int err_no, const char *why)
{
    served_refuse(&ss->t,
                  (struct served_refusal){.count = count, .i3_code = code, .i3_errno = err_no},
                  "%s", why);
    return -EPERM;
}

/* iperf3 clients cannot authenticate; then --max-tests, --max-client-tests, --exclusive
 * (a busy server answers ACCESS_DENIED, as iperf3 does). */
static int take_slot(struct i3s *ss)
{
    const struct served_refusal busy = {.count = METRICS_REFUSED_BUSY};
    uint32_t running;
    int rc;

    if (ss->t.conf->auth)
        return refuse(ss, I3S_AUTH, IPERF3_IEAUTHTEST, 0,
                      "this server requires netrig authentication "
                      "(--auth-file), which iperf3 clients cannot give");
    rc = served_admit(&ss->t, &running);
    if (rc) {
        served_refuse(&ss->t, busy, "busy (%u tests %s)", running,
                      rc == -EUSERS ? "from this address" : "running");
        return -EBUSY;
    }
    if (ss->t.conf->exclusive && served_exclusive(&ss->t, tmo(ss), NULL, NULL)) {
        served_refuse(&ss->t, busy, "another test holds the exclusive turn");
        return -EBUSY;
    }
    return 0;
}

/* Does the client's iperf3 know code 37, "client's requested duration exceeds the server's
 * maximum permitted limit" (3.20 and later)? Older ones print only their own 86400 s. */
static bool knows_max_duration_code(const struct i3s *ss)
{
    unsigned major = 0, minor = 0;

    return sscanf(ss->ip.client_version, "%u.%u", &major, &minor) == 2 &&
           (major > 3 || (major == 3 && minor >= 20));
}

/* The iperf3 code for a test over --max-duration: the true text where the client has one. */
static int duration_code(const struct i3s *ss)
{
    return knows_max_duration_code(ss) ? IPERF3_IEMAXDURATION : IPERF3_IEDURATION;
}

/* --max-duration, --max-flows, --max-rate and the congestion control, as iperf3 codes. */
static int check_limits(struct i3s *ss)
{
    const struct policy_limits *o = &ss->t.conf->limits;
    struct params *p = &ss->ip.p;
    uint64_t flow_rate;
    char msg[256];
    int fd, code;

    if (policy_check_limits(o, p, &flow_rate, msg, sizeof(msg))) {
        code = o->max_duration_ns && p->duration_ns + p->omit_ns > o->max_duration_ns
                   ? duration_code(ss)
               : o->max_flows && params_total_flows(p) > o->max_flows ? IPERF3_IENUMSTREAMS
                                                                      : IPERF3_IETOTALRATE;
        return refuse(ss, I3S_LIMIT, code, 0, msg);
    }
    /* --max-rate: an iperf3 client cannot be told its share, so our receivers read no faster
     * than it and TCP's flow control paces the client (our senders are paced by policy) */
    if (!test_kind_is(p, TEST_KIND_DATAGRAMS))
        p->recv_rate_bps = flow_rate;
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

    if (iperf3_proto_state_send(ss->t.ctl, IPERF3_PARAM_EXCHANGE, tmo(ss)))
        return -EIO;
    rc = iperf3_proto_json_recv(ss->t.ctl, IPERF3_MAX_PARAMS, tmo(ss), &j, err, sizeof(err));
    if (rc == -EMSGSIZE || rc == -EPROTO)
        return refuse(ss, I3S_BAD, IPERF3_IERECVPARAMS, rc == -EMSGSIZE ? EMSGSIZE : EINVAL, err);
    if (rc) {
        LOG_WARN("iperf3 client %s: no parameters: %s", ss->t.who, err);
        return rc;
    }
    rc = iperf3_proto_params_decode(j, &ss->ip, &code, &err_no, err, sizeof(err));
    cJSON_Delete(j);
    if (rc)
        return refuse(ss, I3S_BAD, code, err_no, err);
    if (test_kind_is(&ss->ip.p, TEST_KIND_MPTCP) && !ss->t.conf->mptcp) {
        snprintf(err, sizeof(err), "MPTCP (-m): this server's listener is not MPTCP (%s)",
                 ss->t.conf->mptcp_note[0] ? ss->t.conf->mptcp_note : "no MPTCP there");
        return refuse(ss, I3S_BAD, IPERF3_IEUNIMP, 0, err);
    }
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
    uint16_t port = ss->t.conf->port;
    int one = 1, fd;

    if (dataconn_local_addr(ss->t.ctl, &a))
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
    struct params run = ss->ip.p;
    const struct flow_kind *kind;
    char err[512];
    int rc;

    /* iperf3 clients end -n/-k tests when they have received the transfer: a UDP datagram of
     * it lost on the way must not leave them waiting, so our UDP senders go on (as iperf3's
     * do) until TEST_END. TCP senders stop at the exact count. */
    if (run.udp)
        run.bytes_limit = run.blocks_limit = 0;
    kind = flow_kind_for(&run, false);
    if (served_charge(&ss->t, kind, &run, err, sizeof(err)))
        return refuse(ss, I3S_LIMIT, IPERF3_IEINITTEST, ENOMEM, err);
    ss->e = engine_create(kind, &run, false, NULL, err, sizeof(err));
    ss->fds = calloc(ss->nflows, sizeof(*ss->fds));
    if (!ss->e || !ss->fds)
        return refuse(ss, I3S_SETUP, IPERF3_IEINITTEST, ENOMEM, ss->e ? "out of memory" : err);
    if (test_kind_is(&ss->ip.p, TEST_KIND_DATAGRAMS)) {
        if (admit_udp_turn_take(ss->t.admit, (const struct sockaddr *)&ss->t.peer, tmo(ss) + 500))
            return refuse(ss, I3S_SETUP, IPERF3_IESTREAMLISTEN, EBUSY,
                          "another iperf3 UDP test kept the port's set-up turn too long");
        ss->udp_turn = true;
        ss->udp_listen = udp_listener(ss);
        if (ss->udp_listen < 0) {
            snprintf(err, sizeof(err), "cannot open UDP port %u: %s", ss->t.conf->port,
                     strerror(-ss->udp_listen));
            return refuse(ss, I3S_SETUP, IPERF3_IESTREAMLISTEN, -ss->udp_listen, err);
        }
    } else {
        rc = served_register(&ss->t, ADMIT_KEY_IPERF3, ss->cookie);
        if (rc)
            return refuse(ss, I3S_SETUP, IPERF3_IEINITTEST, -rc,
                          rc == -EEXIST   ? "its cookie is already in use"
                          : rc == -ENOSPC ? "too many iperf3 tests at once"
                                          : "cannot create a pipe");
    }
    /* the streams' one deadline: from here (the UDP turn is held from here on) */
    ss->setup_end = clock_mono_ns() + (uint64_t)tmo(ss) * 1000000ULL;
    return iperf3_proto_state_send(ss->t.ctl, IPERF3_CREATE_STREAMS, tmo(ss)) ? -EIO : 0;
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
    /* only the control connection's client may open streams: a datagram's source can be
     * forged, and the stream would send toward it */
    if (!dataconn_same_host((struct sockaddr *)&from, (struct sockaddr *)&ss->t.peer)) {
        LOG_DBG("iperf3 test %s: ignored a datagram from another address", ss->tag);
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

/* Streams arrive in order: TCP through the acceptor (pipe), UDP on the listener. Every one
 * within the server's --timeout of CREATE_STREAMS (one deadline for all: a client cannot hold
 * the UDP set-up turn by opening its streams slowly); the control connection speaking means
 * the client gave up. */
static int gather_streams(struct i3s *ss)
{
    uint64_t deadline = ss->setup_end;
    uint32_t have = 0;
    int rc;

    while (have < ss->nflows) {
        struct pollfd pf[2] = {
            {.fd = test_kind_is(&ss->ip.p, TEST_KIND_DATAGRAMS) ? ss->udp_listen : ss->t.pipe_rd,
             .events = POLLIN},
            {.fd = ss->t.ctl, .events = POLLIN}};
        uint64_t now = clock_mono_ns();
        struct admit_conn c;

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
            LOG_WARN("iperf3 test %s: client %s left while opening streams", ss->tag, ss->t.who);
            return -ECONNRESET;
        }
        if (!(pf[0].revents & POLLIN))
            continue;
        if (test_kind_is(&ss->ip.p, TEST_KIND_DATAGRAMS)) {
            rc = udp_accept_one(ss, have);
            if (rc < 0)
                return rc == -EPROTO ? rc
                                     : refuse(ss, I3S_SETUP, IPERF3_IESTREAMACCEPT, -rc,
                                              "UDP stream set-up failed");
            have += rc == 0;
        } else {
            while (have < ss->nflows && read(ss->t.pipe_rd, &c, sizeof(c)) == (ssize_t)sizeof(c))
                if (!dataconn_fd_from(c.fd, (const struct sockaddr *)&ss->t.peer))
                    close(c.fd); /* another host with this test's cookie: it gets nothing */
                else if (attach(ss, have++, c.fd))
                    return -EPROTO;
        }
    }
    return 0;
}

/* Streams complete: later ones with this cookie are refused; the UDP turn passes on. */
static void close_setup(struct i3s *ss)
{
    served_close(&ss->t);
    if (ss->udp_listen >= 0)
        close(ss->udp_listen);
    ss->udp_listen = -1;
    if (ss->udp_turn)
        admit_udp_turn_give(ss->t.admit);
    ss->udp_turn = false;
}

/* How long the test may run on our clock: its time plus the grace; one that only -n/-k ends
 * runs at most --max-duration (or the longest test there is). */
static uint64_t run_limit_ns(const struct i3s *ss)
{
    uint64_t max = ss->t.conf->limits.max_duration_ns;

    if (ss->ip.p.duration_ns)
        return ss->ip.p.duration_ns + ss->ip.p.omit_ns + I3S_GRACE_NS;
    return max ? max : PARAMS_MAX_DURATION_NS + ss->ip.p.omit_ns;
}

/* The engine's hard deadline: a timed test's run ends there already; a -n/-k one is stopped at
 * its limit, and its streams get the grace to drain. */
static uint64_t hard_limit_ns(const struct i3s *ss)
{
    return run_limit_ns(ss) + (ss->ip.p.duration_ns ? 0 : I3S_GRACE_NS);
}

static int start(struct i3s *ss)
{
    char err[256], span[80];

    if (iperf3_proto_state_send(ss->t.ctl, IPERF3_TEST_START, tmo(ss)))
        return -EIO;
    ss->meter.limit_bps = ss->t.conf->limits.max_rate_bps;
    engine_set_limits(ss->e, &(struct engine_limits){
                                 .hard_ns = hard_limit_ns(ss),
                                 .rate_bps = ss->meter.limit_bps,
                             });
    /* our workers run before the client sends: its first datagrams find a reader, not a
     * socket buffer of a few datagrams that a slow thread start lets overflow */
    if (engine_start(ss->e, err, sizeof(err)))
        return refuse(ss, I3S_SETUP, IPERF3_IEINITTEST, EIO, err);
    if (iperf3_proto_state_send(ss->t.ctl, IPERF3_TEST_RUNNING, tmo(ss)))
        return -EIO;
    metrics_test_started(mx(ss), &ss->ip.p);
    served_ran(&ss->t);
    params_span(&ss->ip.p, span, sizeof(span));
    LOG_INFO("iperf3 test %s from %s: %s, %u stream(s) %s, %s%s%s", ss->tag, ss->t.who,
             test_kind_protocol(test_kind_of(&ss->ip.p)), ss->ip.p.flows,
             params_dir_name(ss->ip.p.dir), span, ss->ip.client_version[0] ? ", client " : "",
             ss->ip.client_version);
    return 0;
}

/* ---------------------------------------------------------------- run and results */

static int on_watch(void *arg)
{
    struct i3s *ss = arg;
    int st = 0, rc = iperf3_proto_state_recv(ss->t.ctl, &st, tmo(ss));

    if (rc) {
        LOG_WARN("iperf3 test %s: client %s: control connection %s", ss->tag, ss->t.who,
                 rc == -ENODATA ? "closed" : strerror(-rc));
        return -1;
    }
    rc = iperf3_proto_server_running_step(st);
    if (rc == -ECONNABORTED) {
        ss->terminated = true;
        LOG_INFO("iperf3 test %s: client %s terminated the test", ss->tag, ss->t.who);
    } else if (rc < 0) {
        LOG_WARN("iperf3 test %s: client %s sent state %d (%s) during the test", ss->tag, ss->t.who,
                 st, iperf3_proto_state_name(st));
    }
    return rc < 0 ? -1 : rc;
}

static int on_interval(void *arg, const struct side_result *s, const struct interval *iv)
{
    struct i3s *ss = arg;
    double bps;
    char got[32];

    (void)s;
    if (!policy_meter_add(&ss->meter, iv, &bps))
        return 0;
    units_format_rate(bps, got, sizeof(got));
    served_stop(&ss->t, (struct served_refusal){.count = I3S_LIMIT, .i3_code = IPERF3_IETOTALRATE},
                "over --max-rate: %s", got);
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
    PUT("netrig %s serving iperf3 client %s: %s, %u stream(s) %s\n", NETRIG_VERSION, ss->t.who,
        test_kind_is(&ss->ip.p, TEST_KIND_DATAGRAMS) ? "UDP" : "TCP", ss->ip.p.flows,
        params_dir_name(ss->ip.p.dir));
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
        LOG_WARN("iperf3 test %s: client %s: %s", ss->tag, ss->t.who, err);
        return;
    }
    for (uint32_t i = 0; i < res.nstreams; i++) {
        bytes += (double)res.streams[i].bytes;
        if (res.streams[i].end_s - res.streams[i].start_s > secs)
            secs = res.streams[i].end_s - res.streams[i].start_s;
    }
    units_format_rate(secs > 0 ? bytes * 8 / secs : 0, rate, sizeof(rate));
    LOG_INFO("iperf3 test %s: client %s reports %s over %u stream(s), CPU %.1f%%", ss->tag,
             ss->t.who, rate, res.nstreams, res.cpu_total);
    iperf3_proto_results_free(&res);
}

/* EXCHANGE_RESULTS: theirs, then ours; DISPLAY_RESULTS; then (bounded) IPERF_DONE. */
static void exchange_results(struct i3s *ss)
{
    cJSON *j = NULL;
    char err[256], *text = NULL;
    int st, rc;

    if (iperf3_proto_state_send(ss->t.ctl, IPERF3_EXCHANGE_RESULTS, tmo(ss)))
        return;
    rc = iperf3_proto_json_recv(ss->t.ctl, I3S_MAX_CLIENT_RESULTS, tmo(ss), &j, err, sizeof(err));
    if (rc) {
        LOG_WARN("iperf3 test %s: client %s results: %s", ss->tag, ss->t.who, err);
        if (rc == -EMSGSIZE || rc == -EPROTO)
            iperf3_proto_error_send(ss->t.ctl, IPERF3_IERECVRESULTS, EINVAL, 2000);
        return;
    }
    log_client_results(ss, j);
    cJSON_Delete(j);
    if (ss->ip.get_server_output)
        text = server_output(ss);
    j = iperf3_proto_results_encode(&ss->side, &ss->ip.p, true, text);
    free(text);
    rc = j ? iperf3_proto_json_send(ss->t.ctl, j, tmo(ss)) : -ENOMEM;
    cJSON_Delete(j);
    if (rc || iperf3_proto_state_send(ss->t.ctl, IPERF3_DISPLAY_RESULTS, tmo(ss)))
        return;
    rc = iperf3_proto_state_recv(ss->t.ctl, &st, tmo(ss));
    if (!rc && st != IPERF3_IPERF_DONE)
        LOG_DBG("iperf3 test %s: client ended with state %d", ss->tag, st);
}

/* serve --db: our side of the test goes into the history like a native test's (after the
 * client has its results, so storing never delays them). */
static void save_history(struct i3s *ss)
{
    char err[512];
    int64_t id;

    if (store_save_served(ss->t.conf->history_db, &ss->ip.p, &ss->side, ss->t.who, &id, err,
                          sizeof(err)))
        LOG_WARN("iperf3 test %s: not saved to the history: %s", ss->tag, err);
    else
        LOG_INFO("iperf3 test %s saved as run %lld", ss->tag, (long long)id);
}

static const char *end_text(enum engine_end why, const struct i3s *ss)
{
    switch (why) {
    case ENGINE_END_WATCH: return "complete";
    case ENGINE_END_LIMIT: return "stopped: over a limit";
    case ENGINE_END_SIGNAL: return "server shutting down";
    case ENGINE_END_TIME: return "ended by the server: the client never sent TEST_END";
    case ENGINE_END_FLOWS: return "every stream ended";
    default: return ss->terminated ? "client terminated the test" : "client gone";
    }
}

static void log_done(const struct i3s *ss, enum engine_end why)
{
    double bytes = 0, secs = 0;
    char rate[32];

    for (uint32_t i = 0; i < ss->side.nflows; i++) {
        bytes += (double)ss->side.flows[i].bytes;
        if (ss->side.flows[i].seconds > secs)
            secs = ss->side.flows[i].seconds;
    }
    units_format_rate(secs > 0 ? bytes * 8 / secs : 0, rate, sizeof(rate));
    LOG_INFO("iperf3 test %s from %s done: %s (%s)", ss->tag, ss->t.who, rate, end_text(why, ss));
}

/* An iperf3 client sends TEST_END when its last -n/-k write is in its own socket buffer,
 * not at our end: up to a buffer of it is still on the way. Our receivers read on until the
 * whole transfer is in (at most 2 s), or the read shutdown would cut it short. */
static void await_transfer(struct i3s *ss)
{
    const struct params *p = &ss->ip.p;
    uint64_t want = test_kind_is(p, TEST_KIND_DATAGRAMS) || p->dir == PARAMS_DIR_REVERSE
                        ? 0
                        : params_limit_units(p, NULL);
    uint64_t until = clock_mono_ns() + 2000000000ULL;

    while (want && engine_bytes_received(ss->e) < want && clock_mono_ns() < until)
        poll(NULL, 0, 2);
}

/* The run ends at TEST_END, or at the latest I3S_GRACE_NS past time and omit (the engine's
 * hard deadline, every stream then shut down; a -n/-k test at --max-duration); a broken limit or a
 * vanished client ends it at once. Its sockets are closed and its admission given back before the
 * results go out; the memory stays charged until they have. */
static void run_and_report(struct i3s *ss)
{
    struct engine_hooks h = {
        .run_ns = run_limit_ns(ss),
        .watch_fd = ss->t.ctl,
        .on_watch = on_watch,
        .on_interval = ss->meter.limit_bps ? on_interval : NULL,
        .stop_flag = ss->t.conf->stop,
        .ctx = ss,
        .await_stop = true, /* -n/-k: the client says when it has its part */
    };
    enum engine_end why = engine_run(ss->e, &h);
    int st;

    /* a -n/-k test our clock ended at --max-duration */
    if (why == ENGINE_END_TIME && !ss->ip.p.duration_ns && ss->t.conf->limits.max_duration_ns) {
        served_stop(&ss->t,
                    (struct served_refusal){.count = I3S_LIMIT, .i3_code = duration_code(ss)},
                    "the transfer did not complete within --max-duration of %.4gs",
                    ss->t.conf->limits.max_duration_ns / 1e9);
        why = ENGINE_END_LIMIT;
    }
    /* every stream gone before TEST_END (the client closed them): TEST_END may follow */
    if (why == ENGINE_END_FLOWS &&
        !iperf3_proto_state_recv(ss->t.ctl, &st, (int)(I3S_GRACE_NS / 1000000)) &&
        iperf3_proto_server_running_step(st) == 1)
        why = ENGINE_END_WATCH;
    if (why == ENGINE_END_LIMIT || why == ENGINE_END_ERROR)
        engine_kill(ss->e);
    engine_stop(ss->e);
    if (why == ENGINE_END_WATCH)
        await_transfer(ss);
    /* iperf3 clients keep their streams open until the end: our receivers take what has
     * arrived, then end (a read shutdown makes the socket report end-of-file once empty) */
    for (uint32_t i = 0; !test_kind_is(&ss->ip.p, TEST_KIND_DATAGRAMS) && i < ss->nflows; i++)
        if (params_flow_client_sends(&ss->ip.p, i) && ss->fds[i] >= 0)
            shutdown(ss->fds[i], SHUT_RD);
    engine_finish(ss->e, &ss->side);
    engine_destroy(ss->e); /* closes the attached flow sockets */
    ss->e = NULL;
    served_release_slot(&ss->t);
    metrics_test_done(mx(ss), &ss->ip.p, (struct sockaddr *)&ss->t.peer, &ss->side,
                      why == ENGINE_END_WATCH);
    log_done(ss, why);
    if (why == ENGINE_END_WATCH)
        exchange_results(ss);
    else if (why == ENGINE_END_SIGNAL)
        iperf3_proto_state_send(ss->t.ctl, IPERF3_SERVER_TERMINATE, 2000);
    served_release(&ss->t);
    if (ss->t.conf->history_db && why != ENGINE_END_ERROR)
        save_history(ss);
}

/* ---------------------------------------------------------------- thread */

static void cleanup(struct i3s *ss)
{
    close_setup(ss);
    engine_destroy(ss->e); /* closes the attached flow sockets */
    free(ss->fds);
    result_side_fini(&ss->side);
    served_teardown(&ss->t);
    free(ss);
}

static void *i3s_main(void *arg)
{
    struct i3s *ss = arg;
    int one = 1;

    setsockopt(ss->t.ctl, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (!take_slot(ss) && !exchange_params(ss) && !prepare_streams(ss) && !gather_streams(ss)) {
        close_setup(ss);
        if (!start(ss))
            run_and_report(ss);
    }
    cleanup(ss);
    return NULL;
}

void iperf3_server_spawn(const struct served_conf *c, struct admit *a, int fd,
                         const struct sockaddr_storage *peer)
{
    struct i3s *ss = calloc(1, sizeof(*ss));
    char cookie[IPERF3_COOKIE_LEN];

    if (!ss || recv(fd, cookie, sizeof(cookie), MSG_DONTWAIT) != (ssize_t)sizeof(cookie)) {
        admit_handshake_leave(a, (const struct sockaddr *)peer);
        free(ss);
        close(fd);
        return;
    }
    served_init(&ss->t, c, a, "iperf3 client", true, fd, peer);
    ss->udp_listen = -1;
    memcpy(ss->cookie, cookie, IPERF3_COOKIE_LEN);
    snprintf(ss->tag, sizeof(ss->tag), "%.8s", cookie);
    LOG_DBG("iperf3 control connection from %s", ss->t.who);
    if (served_spawn(&ss->t, i3s_main, ss))
        free(ss);
}

void iperf3_server_stream(struct admit *a, int fd, const struct sockaddr_storage *peer)
{
    uint8_t cookie[IPERF3_COOKIE_LEN];
    int8_t denied = IPERF3_ACCESS_DENIED;
    char who[80];

    sock_addr_str((const struct sockaddr *)peer, who, sizeof(who));
    if (recv(fd, cookie, sizeof(cookie), MSG_DONTWAIT) != (ssize_t)sizeof(cookie)) {
        close(fd);
        return;
    }
    if (admit_route(a, ADMIT_KEY_IPERF3, cookie, 0, fd) > 0) {
        LOG_DBG("iperf3 stream from %s for test %.8s", who, (const char *)cookie);
        return;
    }
    LOG_WARN("refused iperf3 stream from %s: test %.8s is not accepting streams", who,
             (const char *)cookie);
    if (send(fd, &denied, 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
        LOG_DBG("iperf3 stream from %s: %s", who, strerror(errno));
    close(fd);
}
