/* session: one test on the server, from the client's hello to the results it gets back. */
#define _GNU_SOURCE
#include "session.h"
#include "clock.h"

#include "cpulist.h"
#include "ctl.h"
#include "policy.h"
#include "thirdparty_serve.h"
#include "dataconn.h"
#include "engine.h"
#include "hostsnap.h"
#include "flow_kinds.h"
#include "log.h"
#include "metrics.h"
#include "result_json.h"
#include "sock.h"
#include "store.h"
#include "test_kind.h"
#include "units.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define SESSION_GRACE_NS          CTL_END_GRACE_NS /* past duration + omit: the hard end */
#define SESSION_EXCLUSIVE_WAIT_MS (10 * 60 * 1000)

struct session {
    struct served t; /* control connection, peer, hold on the daemon's shared state */
    char host[64];
    struct params p;
    const struct test_kind *kind; /* p's, resolved once the hello is read */
    uint8_t id[CTL_TEST_ID_LEN];
    char idhex[2 * CTL_TEST_ID_LEN + 1];
    int *side_fds; /* UDP sockets / crr listeners not yet handed to the engine */
    uint32_t n_side_fds;
    struct engine *e;
    char user[AUTH_NAME_MAX];  /* from the hello, checked when the server has --auth-file */
    uint64_t flow_rate_bps;    /* --max-rate: each flow's share, 0 = unlimited */
    struct policy_meter meter; /* --max-rate, on the wire */
    char cpu_note[300];        /* --server-cpus auto that pinned nothing: the client is told */
    bool stream_intervals;     /* the client asked for our intervals during the run */
    struct hostsnap *snap;     /* this host's settings, sent with the results (NULL: none) */
};

/* --metrics: where events are counted (NULL: not counted) */
static struct metrics *mx(const struct session *ss) { return ss->t.conf->metrics; }

static int timeout_ms(const struct session *ss) { return ss->t.conf->timeout_ms; }

/* Refusals as netrig clients are told them. */
static struct served_refusal how(int count, const char *code)
{
    return (struct served_refusal){.count = count, .code = code};
}

/* Reads and checks the client's hello. On failure the client has been told why. */
static int read_hello(struct session *ss)
{
    cJSON *m = NULL;
    const cJSON *proto, *test;
    char err[256];
    int rc = ctl_recv(ss->t.ctl, CTL_MAX_REQUEST, timeout_ms(ss), &m, err, sizeof(err));

    if (rc == -EPROTO || rc == -EMSGSIZE) {
        served_refuse(&ss->t, how(METRICS_REFUSED_BAD_REQUEST, "bad_request"), "%s", err);
        return rc;
    }
    if (rc) {
        LOG_WARN("client %s: %s", ss->t.who, err);
        metrics_control_error(mx(ss), METRICS_STAGE_HELLO);
        return rc;
    }
    proto = cJSON_GetObjectItemCaseSensitive(m, "proto");
    test = cJSON_GetObjectItemCaseSensitive(m, "test");
    {
        const cJSON *user = cJSON_GetObjectItemCaseSensitive(m, "user");
        if (cJSON_IsString(user) && strlen(user->valuestring) < sizeof(ss->user))
            snprintf(ss->user, sizeof(ss->user), "%s", user->valuestring);
    }
    ss->stream_intervals = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "intervals"));
    if (!strcmp(ctl_type(m), "run")) { /* a controller: a test from us toward another daemon */
        thirdparty_serve(&ss->t, m);
        cJSON_Delete(m);
        return -ECANCELED; /* answered: nothing more on this connection */
    }
    rc = -EPROTO;
    if (strcmp(ctl_type(m), "hello"))
        snprintf(err, sizeof(err), "expected a 'hello' message, got '%s'", ctl_type(m));
    else if (!cJSON_IsNumber(proto) || proto->valueint != CTL_PROTO_VERSION)
        snprintf(err, sizeof(err), "control protocol version mismatch: server speaks %d",
                 CTL_PROTO_VERSION);
    else if (!cJSON_IsString(test) || params_test_from_name(test->valuestring) < 0)
        snprintf(err, sizeof(err), "test '%s' is not supported by this server",
                 cJSON_IsString(test) ? test->valuestring : "?");
    else
        rc = params_from_json(cJSON_GetObjectItemCaseSensitive(m, "params"), &ss->p, err,
                              sizeof(err));
    if (!rc && strcmp(test->valuestring, params_test_name(ss->p.test))) { /* the wire names agree */
        snprintf(err, sizeof(err), "hello names test '%s' but its parameters say '%s'",
                 test->valuestring, params_test_name(ss->p.test));
        rc = -EPROTO;
    }
    cJSON_Delete(m);
    ss->kind = test_kind_of(&ss->p);
    if (rc)
        served_refuse(&ss->t, how(METRICS_REFUSED_BAD_REQUEST, "bad_request"), "%s", err);
    return rc;
}

static void tell_queued(void *arg, uint32_t ahead)
{
    struct session *ss = arg;
    cJSON *m = ctl_msg_new("queued");

    cJSON_AddNumberToObject(m, "ahead", ahead);
    ctl_send(ss->t.ctl, m, timeout_ms(ss));
    cJSON_Delete(m);
}

/* MPTCP asked of a listener that is not MPTCP; a congestion control the kernel refuses (the
 * refusal names the ones it offers). */
static int check_congestion(struct session *ss)
{
    int fd;
    char avail[256] = "?";

    if ((ss->kind->flags & TEST_KIND_MPTCP) && !ss->t.conf->mptcp) {
        served_refuse(&ss->t, how(METRICS_REFUSED_BAD_REQUEST, "bad_request"),
                      "this server's listener is not MPTCP (%s): run without --mptcp, or "
                      "enable MPTCP on the server's host and restart the daemon",
                      ss->t.conf->mptcp_note[0] ? ss->t.conf->mptcp_note : "no MPTCP there");
        return -EINVAL;
    }
    if (!ss->p.congestion[0])
        return 0;
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 &&
        !setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, ss->p.congestion, strlen(ss->p.congestion))) {
        close(fd);
        return 0;
    }
    if (fd >= 0)
        close(fd);
    sock_cc_available(NULL, avail, sizeof(avail));
    served_refuse(&ss->t, how(METRICS_REFUSED_BAD_REQUEST, "bad_request"),
                  "congestion control '%s' is not available on the server: choose one of: %s",
                  ss->p.congestion, avail);
    return -EINVAL;
}

/* --max-tests and --max-client-tests, then (--exclusive) the turn of throughput tests. */
static int take_slot(struct session *ss)
{
    const struct admit_limits *al = admit_limits(ss->t.admit);
    uint32_t running;
    int rc = served_admit(&ss->t, &running);

    if (rc == -EUSERS)
        served_refuse(&ss->t, how(METRICS_REFUSED_BUSY, "busy"),
                      "server busy: this address already runs %u tests (its "
                      "--max-client-tests is %u); try again later",
                      running, al->max_client_tests);
    else if (rc && al->one_off)
        served_refuse(&ss->t, how(METRICS_REFUSED_BUSY, "busy"),
                      "server busy: it serves one test and then exits (serve -1), and that test "
                      "is running");
    else if (rc)
        served_refuse(&ss->t, how(METRICS_REFUSED_BUSY, "busy"),
                      "server busy: %u tests running (its --max-tests is %u); try again later",
                      running, al->max_tests);
    if (rc)
        return -EBUSY;
    if (!ss->t.conf->exclusive) /* every kind of test queues for the host */
        return 0;
    if (served_exclusive(&ss->t, SESSION_EXCLUSIVE_WAIT_MS, tell_queued, ss)) {
        served_refuse(&ss->t, how(METRICS_REFUSED_BUSY, "busy"),
                      "waited too long for an exclusive slot");
        return -EBUSY;
    }
    return 0;
}

/* The server's side shaped to this machine, charged, then built. */
static int build_engine(struct session *ss, const struct cpulist *cpus)
{
    const struct flow_kind *kind = flow_kind_for(&ss->p, false);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t asked = policy_server_threads(&ss->p, ncpu > 0 ? (uint32_t)ncpu : 0);
    char err[512];

    if (asked)
        LOG_INFO("client %s: %u server threads asked, %u used (at most the flows and the CPUs)",
                 ss->t.who, asked, ss->p.server_threads);
    if (served_charge(&ss->t, kind, &ss->p, err, sizeof(err))) {
        served_refuse(&ss->t, how(METRICS_REFUSED_LIMIT, "limit"), "%s", err);
        return -ENOMEM;
    }
    ss->e = engine_create(kind, &ss->p, false, cpus, err, sizeof(err));
    if (!ss->e) {
        served_refuse(&ss->t, how(SERVED_UNCOUNTED, "server_error"), "%s", err);
        return -ENOMEM;
    }
    return 0;
}

/* Authentication, limits, admission, congestion control and CPU checks, then the engine. */
static int admission(struct session *ss)
{
    const struct served_conf *o = ss->t.conf;
    struct cpulist cpus;
    char err[320], note[320];

    if (served_authenticate(&ss->t, ss->user, how(METRICS_REFUSED_AUTH_FAILED, "auth_failed")))
        return -EACCES;
    if (policy_check_limits(&o->limits, &ss->p, &ss->flow_rate_bps, err, sizeof(err))) {
        served_refuse(&ss->t, how(METRICS_REFUSED_LIMIT, "limit"), "%s", err);
        return -EPERM;
    }
    if (take_slot(ss) || check_congestion(ss))
        return -EBUSY;
    if (cpulist_resolve(NULL, ss->p.server_cpus, ss->host, &cpus, err, sizeof(err), note,
                        sizeof(note))) {
        served_refuse(&ss->t, how(METRICS_REFUSED_BAD_REQUEST, "bad_request"), "server CPUs: %s",
                      err);
        return -EINVAL;
    }
    if (!strcmp(ss->p.server_cpus, "auto") && !cpus.n)
        snprintf(ss->cpu_note, sizeof(ss->cpu_note),
                 "--server-cpus %s: the server's workers were not pinned", note);
    if (note[0])
        LOG_INFO("client %s: %s", ss->t.who, note);
    return build_engine(ss, &cpus);
}

/* UDP: one socket per flow, their ports in the accept message. */
static int open_dgram(struct session *ss, const struct sockaddr_storage *local, uint32_t n,
                      cJSON *accept, char *err, size_t errlen)
{
    uint16_t *ports = calloc(n, sizeof(*ports));
    int rc;

    if (!ports)
        return -ENOMEM;
    rc = dataconn_udp_open(local, n, ss->side_fds, ports, err, errlen);
    if (!rc) {
        cJSON *arr = cJSON_AddArrayToObject(accept, "udp_ports");
        for (uint32_t i = 0; i < n; i++)
            cJSON_AddItemToArray(arr, cJSON_CreateNumber(ports[i]));
    }
    free(ports);
    return rc;
}

/* A connection per transaction: one listener per worker, its port in the accept message. */
static int open_listeners(struct session *ss, const struct sockaddr_storage *local, uint32_t n,
                          cJSON *accept, char *err, size_t errlen)
{
    uint16_t port = 0;
    int rc = dataconn_crr_listen(local, (const struct sockaddr *)&ss->t.peer, n, ss->side_fds,
                                 &port, err, errlen);

    for (uint32_t i = 0; !rc && i < n; i++) {
        rc = engine_attach(ss->e, i, ss->side_fds[i], err, errlen);
        if (!rc)
            ss->side_fds[i] = -1; /* the engine owns it */
    }
    if (!rc)
        cJSON_AddNumberToObject(accept, "crr_port", port);
    return rc;
}

static int gather_dgram(struct session *ss);
static int gather_conns(struct session *ss);

/* The server's end of each way a kind's data paths open (test_kind.h): what it opens before
 * the accept message (NULL: nothing, connections come through the daemon's own port), and
 * how it collects the flows after. */
static const struct {
    int (*open)(struct session *ss, const struct sockaddr_storage *local, uint32_t n, cJSON *accept,
                char *err, size_t errlen);
    int (*gather)(struct session *ss);
} side_paths[TEST_KIND_NPATHS] = {
    [TEST_KIND_PATH_CONN] = {NULL, gather_conns},
    [TEST_KIND_PATH_DGRAM] = {open_dgram, gather_dgram},
    [TEST_KIND_PATH_LISTENER] = {open_listeners, gather_conns},
};

static int open_side_paths(struct session *ss, cJSON *accept)
{
    struct sockaddr_storage local;
    char err[256];
    uint32_t n;
    int rc;

    if (!side_paths[ss->kind->path].open)
        return 0;
    if (dataconn_local_addr(ss->t.ctl, &local))
        return -EIO;
    n = engine_flow_count(ss->e);
    ss->side_fds = calloc(n, sizeof(int));
    if (!ss->side_fds)
        return -ENOMEM;
    ss->n_side_fds = n;
    rc = side_paths[ss->kind->path].open(ss, &local, n, accept, err, sizeof(err));
    if (rc)
        served_refuse(&ss->t, how(SERVED_UNCOUNTED, "server_error"), "%s", err);
    return rc;
}

static int register_test(struct session *ss)
{
    cJSON *m;
    int rc = -EIO;

    if (getrandom(ss->id, sizeof(ss->id), 0) == (ssize_t)sizeof(ss->id))
        rc = served_register(&ss->t, ADMIT_KEY_NETRIG, ss->id);
    if (rc == -EEXIST || rc == -ENOSPC) {
        served_refuse(&ss->t, how(SERVED_UNCOUNTED, "busy"), "server's test registry is full");
        return -EBUSY;
    }
    if (rc) {
        served_refuse(&ss->t, how(SERVED_UNCOUNTED, "server_error"),
                      "cannot create a test id or pipe");
        return -EIO;
    }
    ctl_id_to_hex(ss->id, ss->idhex);
    m = ctl_msg_new("accept");
    cJSON_AddStringToObject(m, "test_id", ss->idhex);
    cJSON_AddStringToObject(m, "netrig_version", NETRIG_VERSION);
    ctl_accept_set_flow_rate(m, ss->flow_rate_bps);
    ctl_accept_set_classes(m, ss->p.classes);
    rc = open_side_paths(ss, m);
    if (!rc)
        rc = ctl_send(ss->t.ctl, m, timeout_ms(ss));
    cJSON_Delete(m);
    return rc;
}

/* UDP: the hellos on each flow's socket. */
static int gather_dgram(struct session *ss)
{
    char err[256];
    int rc = dataconn_udp_gather(ss->t.ctl, (const struct sockaddr *)&ss->t.peer, ss->side_fds,
                                 ss->n_side_fds, ss->id, ss->e, timeout_ms(ss), err, sizeof(err));

    if (rc)
        served_refuse(&ss->t, how(SERVED_SETUP_ERROR, "timeout"), "%s", err);
    served_unregister(&ss->t);
    return rc;
}

/* The data connections the acceptor routes to us (none for a kind with listeners). */
static int gather_conns(struct session *ss)
{
    uint64_t deadline_ms = (uint64_t)timeout_ms(ss);
    char err[256];
    uint64_t deadline = clock_mono_ns() + deadline_ms * 1000000ULL;

    while (!engine_complete(ss->e)) {
        struct pollfd pf[2] = {{.fd = ss->t.pipe_rd, .events = POLLIN},
                               {.fd = ss->t.ctl, .events = POLLIN}};
        struct admit_conn dc;
        uint64_t now = clock_mono_ns();
        int rc = now < deadline ? poll(pf, 2, (int)((deadline - now) / 1000000) + 1) : 0;

        if (rc == 0) {
            served_refuse(&ss->t, how(SERVED_SETUP_ERROR, "timeout"),
                          "data connections did not all arrive within %d ms", timeout_ms(ss));
            return -ETIMEDOUT;
        }
        if (pf[1].revents) {
            LOG_WARN("test %.8s: client %s left while opening data connections", ss->idhex,
                     ss->t.who);
            metrics_control_error(mx(ss), METRICS_STAGE_SETUP);
            return -ECONNRESET;
        }
        while (read(ss->t.pipe_rd, &dc, sizeof(dc)) == (ssize_t)sizeof(dc)) {
            if (!dataconn_fd_from(dc.fd, (const struct sockaddr *)&ss->t.peer)) {
                close(dc.fd); /* another host with this test's id: it gets nothing */
                metrics_refused(mx(ss), METRICS_REFUSED_ACL);
                continue;
            }
            if (engine_attach(ss->e, dc.flow, dc.fd, err, sizeof(err))) {
                close(dc.fd);
                served_refuse(&ss->t, how(METRICS_REFUSED_BAD_REQUEST, "bad_request"), "%s", err);
                return -EPROTO;
            }
        }
    }
    served_unregister(&ss->t);
    return 0;
}

/* A start at an agreed time (tests against several servers): wait for it, at most 10 s. */
static void start_at(const cJSON *at)
{
    uint64_t now = clock_real_ns(), when;

    if (!cJSON_IsNumber(at) || at->valuedouble <= (double)now ||
        at->valuedouble > (double)now + 10e9)
        return; /* past, absent or absurd: start now */
    when = (uint64_t)at->valuedouble;
    while ((now = clock_real_ns()) < when) {
        uint64_t left = when - now;
        struct timespec ts = {.tv_sec = 0,
                              .tv_nsec = (long)(left < 50000000ULL ? left : 50000000ULL)};
        nanosleep(&ts, NULL);
    }
}

/* After "ready" the client may probe our clock ("time") before it says "start": each message
 * within --timeout, the whole stage within two (a client cannot hold its admission by probing
 * slowly). */
static int expect_start(struct session *ss)
{
    uint64_t end = clock_mono_ns() + 2ULL * (uint64_t)timeout_ms(ss) * 1000000ULL;
    cJSON *m = ctl_msg_new("ready");
    char err[256] = "";
    int rc = ctl_send(ss->t.ctl, m, timeout_ms(ss));

    cJSON_Delete(m);
    for (int probes = 0; !rc; probes++) {
        uint64_t now = clock_mono_ns();
        int wait = now >= end ? 0 : (int)((end - now) / 1000000) + 1;

        rc = wait > 0
                 ? ctl_recv(ss->t.ctl, CTL_MAX_REQUEST,
                            wait < timeout_ms(ss) ? wait : timeout_ms(ss), &m, err, sizeof(err))
                 : -ETIMEDOUT;
        if (rc)
            break;
        if (!strcmp(ctl_type(m), "start")) {
            start_at(cJSON_GetObjectItemCaseSensitive(m, "at_ns"));
            cJSON_Delete(m);
            return 0;
        }
        if (strcmp(ctl_type(m), "time") || probes >= 32) {
            cJSON_Delete(m);
            return -EPROTO;
        }
        cJSON_Delete(m);
        m = ctl_msg_new("time");
        cJSON_AddNumberToObject(m, "t_ns", (double)clock_real_ns());
        rc = ctl_send(ss->t.ctl, m, timeout_ms(ss));
        cJSON_Delete(m);
    }
    if (rc == -ETIMEDOUT)
        LOG_WARN("client %s: no start in time after ready (%d ms for each message, %d in all)",
                 ss->t.who, timeout_ms(ss), 2 * timeout_ms(ss));
    else
        LOG_WARN("client %s: %s", ss->t.who, err[0] ? err : strerror(-rc));
    metrics_control_error(mx(ss), METRICS_STAGE_SETUP); /* the client never said start */
    return rc;
}

/* During the run the client speaks once: "stop". Anything else ends the test too. */
static int on_watch(void *arg)
{
    struct session *ss = arg;
    cJSON *m = NULL;
    char err[256];
    int rc = ctl_recv(ss->t.ctl, CTL_MAX_REQUEST, timeout_ms(ss), &m, err, sizeof(err));

    if (!rc && !strcmp(ctl_type(m), "stop")) {
        cJSON_Delete(m);
        return 1;
    }
    LOG_WARN("test %.8s: client %s: %s", ss->idhex, ss->t.who,
             rc ? err : "unexpected message during the test");
    metrics_control_error(mx(ss), METRICS_STAGE_RUN);
    cJSON_Delete(m);
    return -1;
}

/* The client's intervals show our senders' retransmits: it gets each of ours as it closes.
 * Only when the control connection has room: a client that does not read makes us stop
 * sending them (it then takes them from the results), never wait. */
static void send_interval(struct session *ss, const struct side_result *s,
                          const struct interval *iv)
{
    cJSON *m = ctl_msg_new("interval");
    int rc;

    result_json_add_peer_interval(m, s, iv);
    rc = ctl_send_if_room(ss->t.ctl, m, timeout_ms(ss));
    cJSON_Delete(m);
    if (rc == -EAGAIN) {
        LOG_WARN("test %.8s: client %s does not read its control connection: its intervals "
                 "come with the results",
                 ss->idhex, ss->t.who);
        ss->stream_intervals = false;
    }
}

/* Our intervals to the client (when asked); --max-rate: the bytes the kernel moved, once a
 * second; a client that ignores its pacing (or a flood the gate cannot hold back, UDP) is
 * stopped. */
static int on_interval(void *arg, const struct side_result *s, const struct interval *iv)
{
    struct session *ss = arg;
    char lim[32], got[32];
    double bps;

    if (ss->stream_intervals)
        send_interval(ss, s, iv);
    if (!policy_meter_add(&ss->meter, iv, &bps))
        return 0;
    units_format_rate((double)ss->meter.limit_bps, lim, sizeof(lim));
    units_format_rate(bps, got, sizeof(got));
    served_stop(&ss->t, how(SERVED_UNCOUNTED, "limit"),
                "test moved %s, above this server's --max-rate of %s", got, lim);
    return 1;
}

/* This host's settings (its network namespace's), sent with the results unless the daemon
 * declines. Taken once admitted and before the accept: no data connection is in flight yet
 * and the test has not started, so the reads (some 20 ms) delay neither. Out of memory: none
 * is sent. Always 0. */
static int take_snapshot(struct session *ss)
{
    if (ss->t.conf->host_snapshot != SERVED_HOSTSNAP_SEND)
        return 0;
    ss->snap = hostsnap_new();
    if (ss->snap)
        hostsnap_take(NULL, ss->snap);
    return 0;
}

/* serve --db: the server's side of the test goes into the history (after the client has its
 * results, so storing never delays them). */
static void save_history(struct session *ss, const struct side_result *side)
{
    char err[512];
    int64_t id;

    if (store_save_served(ss->t.conf->history_db, &ss->p, side, ss->t.who, &id, err, sizeof(err)))
        LOG_WARN("test %.8s: not saved to the history: %s", ss->idhex, err);
    else
        LOG_INFO("test %.8s saved as run %lld", ss->idhex, (long long)id);
}

/* -n/-k: our senders have sent our part of the transfer; the client ends the test once it has
 * its part too (a UDP receiver cannot tell by itself). */
static void on_sent(void *arg)
{
    struct session *ss = arg;
    cJSON *m = ctl_msg_new("sent");

    ctl_send(ss->t.ctl, m, timeout_ms(ss));
    cJSON_Delete(m);
}

/* How long the test may run on our clock: its time plus the grace; a test that only -n/-k
 * ends runs at most --max-duration (or the longest test there is). */
static uint64_t run_limit_ns(const struct session *ss)
{
    uint64_t max = ss->t.conf->limits.max_duration_ns;

    if (ss->p.duration_ns)
        return ss->p.duration_ns + ss->p.omit_ns + SESSION_GRACE_NS;
    return max ? max : PARAMS_MAX_DURATION_NS + ss->p.omit_ns;
}

/* The engine's hard deadline: every data socket shut down both ways then, whatever the client
 * sends. A timed test's run ends there already; a -n/-k one is told it is over at its limit,
 * and its flows get the grace to drain. */
static uint64_t hard_limit_ns(const struct session *ss)
{
    return run_limit_ns(ss) + (ss->p.duration_ns ? 0 : SESSION_GRACE_NS);
}

/* Every flow ended before the client said stop: a client that finished sends its "stop"
 * right after closing its flows, so wait for it (bounded) before calling the client gone. */
static enum engine_end wait_client_stop(struct session *ss)
{
    struct pollfd pf = {.fd = ss->t.ctl, .events = POLLIN};
    int r;

    if (poll(&pf, 1, (int)(SESSION_GRACE_NS / 1000000)) <= 0)
        return ENGINE_END_FLOWS;
    r = on_watch(ss);
    return r > 0 ? ENGINE_END_WATCH : r < 0 ? ENGINE_END_ERROR : ENGINE_END_FLOWS;
}

/* The test ends early on our side: the client is told why, stops, and gets our results. */
static void tell_ending(struct session *ss, enum engine_end why)
{
    char msg[160], lim[32];
    cJSON *m;

    if (why == ENGINE_END_SIGNAL) {
        snprintf(msg, sizeof(msg), "the server is shutting down");
    } else if (why == ENGINE_END_TIME && !ss->p.duration_ns && ss->t.conf->limits.max_duration_ns) {
        snprintf(lim, sizeof(lim), "%.4gs", ss->t.conf->limits.max_duration_ns / 1e9);
        snprintf(msg, sizeof(msg),
                 "the transfer (-%c) did not complete within this server's --max-duration of %s",
                 ss->p.bytes_limit ? 'n' : 'k', lim);
    } else {
        return;
    }
    /* tell the client now, so its senders stop and ours can drain at once */
    m = ctl_msg_new("ending");
    cJSON_AddStringToObject(m, "message", msg);
    ctl_send(ss->t.ctl, m, timeout_ms(ss));
    cJSON_Delete(m);
}

/* --max-rate held back part of a response (rr/crr, paced to the last byte) until the test
 * ended: the limit stopped the test, and the client is told so instead of getting results. */
static enum engine_end held_back(struct session *ss, enum engine_end why)
{
    uint64_t held = engine_gate_held(ss->e);
    char lim[32];

    if (!held)
        return why;
    units_format_rate((double)ss->meter.limit_bps, lim, sizeof(lim));
    served_stop(&ss->t, how(SERVED_UNCOUNTED, "limit"),
                "%llu bytes of a response were still held back by this server's --max-rate of "
                "%s when the test ended",
                (unsigned long long)held, lim);
    return ENGINE_END_LIMIT;
}

/* The run, whatever the client does: it ends at the latest at the engine's hard deadline,
 * every data socket then shut down both ways (set at start); a broken limit or a vanished
 * client ends it at once, without draining. */
static enum engine_end run(struct session *ss)
{
    struct engine_hooks h = {
        .run_ns = run_limit_ns(ss),
        .watch_fd = ss->t.ctl,
        .on_watch = on_watch,
        .on_interval = ss->meter.limit_bps || ss->stream_intervals ? on_interval : NULL,
        .stop_flag = ss->t.conf->stop,
        .ctx = ss,
        .on_sent = on_sent,
        .await_stop = true,
    };
    enum engine_end why = engine_run(ss->e, &h);

    if (why == ENGINE_END_LIMIT || why == ENGINE_END_ERROR)
        engine_kill(ss->e);
    else if (why == ENGINE_END_FLOWS)
        why = wait_client_stop(ss);
    tell_ending(ss, why);
    return why;
}

static const char *end_text(const struct session *ss, enum engine_end why)
{
    switch (why) {
    case ENGINE_END_WATCH: return "complete";
    case ENGINE_END_LIMIT: return "stopped: over --max-rate";
    case ENGINE_END_SIGNAL: return "server shutting down";
    case ENGINE_END_TIME:
        return ss->p.duration_ns ? "ended by the server: the client never said stop"
                                 : "stopped: over --max-duration";
    case ENGINE_END_FLOWS: return "every flow ended, and the client never said stop";
    default: return "client gone";
    }
}

static void log_done(const struct session *ss, const struct side_result *side, enum engine_end why)
{
    char rate[32];
    double bytes = 0, secs = 0;
    uint64_t txns = 0;

    for (uint32_t i = 0; i < side->nflows; i++) {
        bytes += (double)side->flows[i].bytes;
        txns += side->flows[i].txns;
        if (side->flows[i].seconds > secs)
            secs = side->flows[i].seconds;
    }
    if (params_is_transactional(&ss->p))
        snprintf(rate, sizeof(rate), "%llu transactions", (unsigned long long)txns);
    else
        units_format_rate(secs > 0 ? bytes * 8 / secs : 0, rate, sizeof(rate));
    LOG_INFO("test %.8s from %s done: %s (%s)", ss->idhex, ss->t.who, rate, end_text(ss, why));
}

/* Once the run is over its sockets are closed and its admission given back at once (the
 * client may start its next test as soon as it has these results); the memory stays charged
 * until the results are sent; the history is written last. */
static void run_and_report(struct session *ss)
{
    enum engine_end why = run(ss);
    struct side_result side;
    cJSON *m;

    engine_finish(ss->e, &side);
    if (why != ENGINE_END_LIMIT && why != ENGINE_END_ERROR && why != ENGINE_END_SIGNAL)
        why = held_back(ss, why);
    engine_destroy(ss->e);
    ss->e = NULL;
    served_release_slot(&ss->t);
    if (ss->cpu_note[0]) /* the side has one note: an earlier one (buffers capped) comes first */
        snprintf(side.warning + strlen(side.warning), sizeof(side.warning) - strlen(side.warning),
                 "%s%s", side.warning[0] ? "; " : "", ss->cpu_note);
    metrics_test_done(mx(ss), &ss->p, (struct sockaddr *)&ss->t.peer, &side,
                      why == ENGINE_END_WATCH);
    log_done(ss, &side, why);
    side.host = ss->snap; /* the side owns it now */
    ss->snap = NULL;
    side.host_declined = ss->t.conf->host_snapshot == SERVED_HOSTSNAP_DECLINE;
    if (why != ENGINE_END_ERROR && why != ENGINE_END_LIMIT) {
        m = ctl_msg_new("result");
        cJSON_AddItemToObject(m, "side", result_json_side(&side));
        ctl_send(ss->t.ctl, m, timeout_ms(ss));
        cJSON_Delete(m);
    }
    served_release(&ss->t);
    if (why != ENGINE_END_ERROR && why != ENGINE_END_LIMIT) {
        /* wait (bounded) for the client to read and hang up */
        struct pollfd pf = {.fd = ss->t.ctl, .events = POLLIN};
        poll(&pf, 1, timeout_ms(ss));
    }
    if (ss->t.conf->history_db && why != ENGINE_END_ERROR)
        save_history(ss, &side);
    result_side_fini(&side);
}

static void session_cleanup(struct session *ss)
{
    for (uint32_t i = 0; i < ss->n_side_fds; i++)
        if (ss->side_fds[i] >= 0)
            close(ss->side_fds[i]);
    free(ss->side_fds);
    hostsnap_free(ss->snap);
    engine_destroy(ss->e);
    served_teardown(&ss->t);
    free(ss);
}

static void *session_main(void *arg)
{
    struct session *ss = arg;
    char err[256], span[80];

    if (read_hello(ss) || admission(ss) || take_snapshot(ss) || register_test(ss) ||
        side_paths[ss->kind->path].gather(ss) || expect_start(ss))
        goto done;
    params_span(&ss->p, span, sizeof(span));
    LOG_INFO("test %.8s from %s: %s%s, %u flow(s) %s, %s", ss->idhex, ss->t.who,
             params_test_name(ss->p.test), ss->kind->label, ss->p.flows, params_dir_name(ss->p.dir),
             span);
    ss->meter.limit_bps = ss->t.conf->limits.max_rate_bps;
    engine_set_limits(ss->e, &(struct engine_limits){
                                 .hard_ns = hard_limit_ns(ss),
                                 .rate_bps = ss->meter.limit_bps,
                             });
    if (engine_start(ss->e, err, sizeof(err))) {
        served_refuse(&ss->t, how(SERVED_UNCOUNTED, "server_error"), "%s", err);
        goto done;
    }
    metrics_test_started(mx(ss), &ss->p);
    served_ran(&ss->t);
    run_and_report(ss);
done:
    session_cleanup(ss);
    return NULL;
}

int session_spawn(const struct served_conf *c, struct admit *a, int fd,
                  const struct sockaddr_storage *peer)
{
    struct session *ss = calloc(1, sizeof(*ss));
    int rc;

    if (!ss) {
        close(fd);
        return -ENOMEM;
    }
    served_init(&ss->t, c, a, "client", false, fd, peer);
    sock_addr_host((const struct sockaddr *)peer, ss->host, sizeof(ss->host));
    rc = served_spawn(&ss->t, session_main, ss);
    if (rc)
        free(ss);
    return rc;
}
