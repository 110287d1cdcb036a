/* iperf3_client: the client side of iperf3's control protocol around our own engine. */
#define _GNU_SOURCE
#include "iperf3_client.h"
#include "clock.h"

#include "cpulist.h"
#include "dataconn.h"
#include "engine.h"
#include "flow_kinds.h"
#include "iperf3_proto.h"
#include "log.h"
#include "sock.h"
#include "test_kind.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define I3C_RUN_MSG_MS    2000  /* a state byte arriving mid-test is read within this */
#define I3C_END_GRACE_MS  10000 /* past --timeout, for the server to wrap up after TEST_END */
#define I3C_UDP_STRAY_MAX 64    /* datagrams before the connect reply (reverse: data) */

static const uint8_t udp_hello[4] = {'9', '8', '7', '6'};
static const uint8_t udp_reply[4] = {'6', '7', '8', '9'};
static const uint8_t udp_reply_legacy[4] = {0xb1, 0x68, 0xde, 0x3a}; /* 987654321, LE */

struct i3c {
    struct client_view view; /* first: the engine's interval hook reads it */
    const struct client_opts *o;
    struct run_result *r;
    int ctl;
    int state;         /* the last state the server sent */
    char failure[256]; /* why the run ended early */
    bool ctl_dead;     /* no TEST_END to send: the server is gone or said why it stopped */
};

int iperf3_client_check(const struct client_opts *o, char *err, size_t errlen)
{
    const struct params *p = &o->p;

#define NO(...)                                                                                    \
    do {                                                                                           \
        snprintf(err, errlen, __VA_ARGS__);                                                        \
        return -EINVAL;                                                                            \
    } while (0)
    if (!test_kind_is(p, TEST_KIND_BULK))
        NO("--iperf3 runs stream tests only (iperf3 has no %s)", params_test_name(p->test));
    if (p->flows > IPERF3_MAX_STREAMS)
        NO("-P %u is more than an iperf3 server takes: use at most %d", p->flows,
           IPERF3_MAX_STREAMS);
    if ((p->duration_ns || !params_has_limit(p)) &&
        (p->duration_ns % 1000000000ULL || p->duration_ns < 1000000000ULL))
        NO("-t %.4gs: iperf3 servers take whole seconds: use -t 1 or more, e.g. -t %llu",
           p->duration_ns / 1e9, (unsigned long long)(p->duration_ns / 1000000000ULL + 1));
    if (p->omit_ns % 1000000000ULL)
        NO("-O %.4gs: iperf3 servers take whole seconds, e.g. -O %llu", p->omit_ns / 1e9,
           (unsigned long long)(p->omit_ns / 1000000000ULL + 1));
    if (p->down_rate_set)
        NO("-b UP,DOWN: an iperf3 server sends at the one rate it is given: use -b RATE");
    if (p->udp_pps)
        NO("--pps: an iperf3 server takes a bit rate, not a packet rate: use -b");
    if (p->server_cpus[0] || p->server_threads)
        NO("--server-cpus and --server-threads do not apply to an iperf3 server");
    if (o->user[0] || o->credentials[0])
        NO("--user: iperf3 servers authenticate with RSA keys, which netrig does not support");
    if ((p->zerocopy_rx || p->skip_rx_copy) && p->dir != PARAMS_DIR_REVERSE)
        NO("%s: an iperf3 server receives on its own terms: use it with -R (netrig receives)",
           p->zerocopy_rx ? "--zerocopy-rx" : "--skip-rx-copy");
    if (test_kind_is(p, TEST_KIND_DATAGRAMS) && p->write_size < 16)
        NO("-l %u: iperf3 UDP datagrams need at least 16 bytes", p->write_size);
#undef NO
    return 0;
}

/* What an iperf3 client would print for code (and errno). */
static void error_text(int code, int err_no, char *buf, size_t len)
{
    static const struct {
        int code;
        const char *text;
    } known[] = {
        {IPERF3_IEDURATION, "test duration too long"},
        {IPERF3_IENUMSTREAMS, "number of parallel streams too large"},
        {IPERF3_IEBLOCKSIZE, "block size too large"},
        {IPERF3_IEBUFSIZE, "socket buffer size too large"},
        {IPERF3_IEMSS, "TCP MSS too large"},
        {IPERF3_IEOMIT, "bogus value for --omit"},
        {IPERF3_IEUNIMP, "an option you are trying to set is not implemented yet"},
        {IPERF3_IENOSCTP, "no SCTP support available"},
        {IPERF3_IEUDPBLOCKSIZE, "block size invalid"},
        {IPERF3_IETOTALRATE, "total required bandwidth is larger than server limit"},
        {IPERF3_IEINITTEST, "test initialization failed"},
        {IPERF3_IERECVPARAMS, "unable to receive parameters from client"},
        {IPERF3_IESETCONGESTION, "unable to set TCP_CONGESTION"},
        {IPERF3_IEAUTHTEST, "test authorization failed"},
        {IPERF3_IESTREAMLISTEN, "unable to start stream listener"},
        {IPERF3_IESTREAMACCEPT, "unable to accept stream connection"},
    };
    const char *t = NULL;

    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]) && !t; i++)
        if (known[i].code == code)
            t = known[i].text;
    if (code < 0)
        snprintf(buf, len, "the server reported an error without saying which");
    else if (err_no > 0 && err_no < 4096)
        snprintf(buf, len, "%s (iperf3 error %d): %s", t ? t : "error", code, strerror(err_no));
    else
        snprintf(buf, len, "%s (iperf3 error %d)", t ? t : "error", code);
}

static void fill_flow(const struct iperf3_stream_result *r, const struct params *p, bool sender,
                      struct side_flow *sf)
{
    sf->sender = sender;
    sf->bytes = r->bytes;
    sf->seconds = r->end_s > r->start_s ? r->end_s - r->start_s : p->duration_ns / 1e9;
    if (!test_kind_is(p, TEST_KIND_DATAGRAMS) && sender && r->retransmits >= 0) {
        sf->ti.valid = true;
        sf->ti.total_retrans = r->retransmits > UINT32_MAX ? UINT32_MAX : (uint32_t)r->retransmits;
    }
    if (!test_kind_is(p, TEST_KIND_DATAGRAMS))
        return;
    if (sender) {
        sf->sent_pkts = (uint64_t)r->packets;
        return;
    }
    sf->has_udp_rx = true;
    sf->udp.max_seq_plus1 = (uint64_t)r->packets;
    sf->udp.received = r->errors <= 0            ? (uint64_t)r->packets
                       : r->errors >= r->packets ? 0
                                                 : (uint64_t)(r->packets - r->errors);
    sf->udp.jitter_ns = r->jitter_s * 1e9;
}

int iperf3_client_remote_side(const struct iperf3_results *res, const struct params *p,
                              bool peer_is_server, struct side_result *out, char *err,
                              size_t errlen)
{
    uint32_t n = params_total_flows(p);

    if (result_side_init(out, n, 1)) {
        snprintf(err, errlen, "out of memory for %u flows", n);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < res->nstreams; i++) {
        const struct iperf3_stream_result *r = &res->streams[i];
        int64_t flow = iperf3_proto_stream_flow(r->id, n);
        bool client_sends;

        if (flow < 0) {
            snprintf(err, errlen,
                     "iperf3 results name stream id %d, which this test of %u "
                     "streams does not have",
                     r->id, n);
            result_side_fini(out);
            return -EPROTO;
        }
        client_sends = params_flow_client_sends(p, (uint32_t)flow);
        fill_flow(r, p, peer_is_server ? !client_sends : client_sends, &out->flows[flow]);
    }
    out->valid = true;
    snprintf(out->version, sizeof(out->version), "iperf3");
    snprintf(out->congestion, sizeof(out->congestion), "%s", res->congestion_used);
    snprintf(out->warning, sizeof(out->warning),
             "iperf3 reports bytes, retransmits, jitter and loss only; its process used %.1f%% "
             "of one CPU (user %.1f, system %.1f)",
             res->cpu_total, res->cpu_user, res->cpu_system);
    return 0;
}

/* The next state byte from the server, checked against the protocol's order. */
static int next_state(struct i3c *c, int timeout_ms, char *err, size_t errlen)
{
    int st = 0, code, err_no, rc = iperf3_proto_state_recv(c->ctl, &st, timeout_ms);
    char text[320];

    if (rc) {
        const char *after = c->state ? iperf3_proto_state_name(c->state) : "our cookie";
        c->ctl_dead = rc == -ENODATA;
        if (rc == -ENODATA && !c->state)
            snprintf(err, errlen,
                     "%s closed the connection without answering our cookie: is it an iperf3 "
                     "server? (iperf2 servers do this: test them with iperf2's own client)",
                     c->r->server);
        else if (rc == -ENODATA)
            snprintf(err, errlen, "the iperf3 server closed the connection after %s", after);
        else
            snprintf(err, errlen, "no answer from the iperf3 server within %d ms after %s (%s)",
                     timeout_ms, after, strerror(-rc));
        return rc;
    }
    rc = iperf3_proto_client_step(c->state, st);
    if (rc >= 0) {
        c->state = st;
        return 0;
    }
    c->ctl_dead = true;
    if (rc == -ECONNREFUSED) {
        snprintf(err, errlen, "the iperf3 server is busy running a test: try again later");
    } else if (rc == -EREMOTEIO) {
        iperf3_proto_error_recv(c->ctl, &code, &err_no, 2000);
        error_text(code, err_no, text, sizeof(text));
        snprintf(err, errlen, "the iperf3 server refused the test: %s", text);
    } else if (rc == -ECONNABORTED) {
        snprintf(err, errlen, "the iperf3 server terminated the test");
    } else {
        snprintf(err, errlen, "the iperf3 server sent state %d (%s) after %s", st,
                 iperf3_proto_state_name(st),
                 c->state ? iperf3_proto_state_name(c->state) : "our cookie");
    }
    return rc;
}

/* TCP: one connection per stream, each opening with the test's cookie. */
static int open_tcp(struct i3c *c, const struct sock_addr *to, const char *cookie, struct engine *e,
                    char *err, size_t errlen)
{
    const struct client_opts *o = c->o;

    for (uint32_t i = 0; i < params_total_flows(&o->p); i++) {
        struct sock_local local = client_local(o, (int)i);
        int fd = dataconn_tcp_connect(to, &local, &o->p, i, o->timeout_ms, err, errlen);
        int rc;

        if (fd < 0)
            return fd;
        rc = sock_write_full(fd, cookie, IPERF3_COOKIE_LEN, o->timeout_ms);
        if (rc) {
            snprintf(err, errlen, "cannot open stream %u: %s", i + 1, strerror(-rc));
            close(fd);
            return rc;
        }
        rc = engine_attach(e, i, fd, err, errlen);
        if (rc) {
            close(fd);
            return rc;
        }
    }
    return 0;
}

/* UDP: a 4-byte datagram to the server's port; its reply says the stream exists (all within
 * timeout_ms, whatever else arrives first). */
static int udp_handshake(int fd, uint32_t i, int timeout_ms, char *err, size_t errlen)
{
    uint8_t buf[2048];
    int strays = 0;
    int64_t deadline = clock_mono_ms() + timeout_ms;

    if (send(fd, udp_hello, sizeof(udp_hello), 0) < 0) {
        snprintf(err, errlen, "cannot send UDP stream %u's connect datagram: %s", i + 1,
                 strerror(errno));
        return -errno;
    }
    while (strays < I3C_UDP_STRAY_MAX) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        int64_t left = deadline - clock_mono_ms();
        ssize_t n;

        if (left <= 0 || poll(&pf, 1, (int)left) <= 0) {
            snprintf(err, errlen,
                     "no reply to UDP stream %u's connect datagram within %d ms "
                     "(is UDP blocked on the path?)",
                     i + 1, timeout_ms);
            return -ETIMEDOUT;
        }
        n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0 && errno == ECONNREFUSED) {
            snprintf(err, errlen, "the server's UDP port refused stream %u", i + 1);
            return -ECONNREFUSED;
        }
        if (n == 4 && (!memcmp(buf, udp_reply, 4) || !memcmp(buf, udp_reply_legacy, 4)))
            return 0;
        strays++; /* in a reverse test the server's data may come first */
    }
    snprintf(err, errlen, "UDP stream %u: no connect reply among %d datagrams", i + 1, strays);
    return -EPROTO;
}

static int open_udp(struct i3c *c, const struct sock_addr *to, const char *cookie, struct engine *e,
                    char *err, size_t errlen)
{
    (void)cookie;
    const struct client_opts *o = c->o;
    uint16_t port = o->port;

    for (uint32_t i = 0; i < params_total_flows(&o->p); i++) {
        struct sock_local local = client_local(o, (int)i);
        int fd = dataconn_udp_connect(to, port, &local, &o->p, i, err, errlen), rc;

        if (fd < 0)
            return fd;
        rc = udp_handshake(fd, i, o->timeout_ms, err, errlen);
        if (!rc)
            rc = engine_attach(e, i, fd, err, errlen);
        if (rc) {
            close(fd);
            return rc;
        }
    }
    return 0;
}

/* During the run an iperf3 server speaks only to stop us. */
static int on_watch(void *arg)
{
    struct i3c *c = arg;
    char err[256];

    if (next_state(c, I3C_RUN_MSG_MS, err, sizeof(err)) == 0)
        snprintf(c->failure, sizeof(c->failure), "the iperf3 server sent %s mid-test",
                 iperf3_proto_state_name(c->state));
    else
        snprintf(c->failure, sizeof(c->failure), "%s", err);
    c->ctl_dead = true;
    return -1;
}

/* EXCHANGE_RESULTS: ours out, theirs in (checked), then DISPLAY_RESULTS and IPERF_DONE. */
static int exchange_results(struct i3c *c, char *err, size_t errlen)
{
    const struct client_opts *o = c->o;
    struct iperf3_results res;
    cJSON *j;
    int rc = next_state(c, o->timeout_ms + I3C_END_GRACE_MS, err, errlen);

    if (rc)
        return rc;
    j = iperf3_proto_results_encode(&c->r->local, &o->p, false, NULL);
    rc = j ? iperf3_proto_json_send(c->ctl, j, o->timeout_ms) : -ENOMEM;
    cJSON_Delete(j);
    if (rc) {
        snprintf(err, errlen, "cannot send our results: %s", strerror(-rc));
        return rc;
    }
    rc = iperf3_proto_json_recv(c->ctl, IPERF3_MAX_RESULTS, o->timeout_ms, &j, err, errlen);
    if (rc)
        return rc;
    rc = iperf3_proto_results_decode(j, params_total_flows(&o->p), &res, err, errlen);
    cJSON_Delete(j);
    if (rc)
        return rc;
    rc = iperf3_client_remote_side(&res, &o->p, true, &c->r->remote, err, errlen);
    iperf3_proto_results_free(&res);
    if (rc)
        return rc;
    if (next_state(c, o->timeout_ms, err, errlen) == 0)
        iperf3_proto_state_send(c->ctl, IPERF3_IPERF_DONE, o->timeout_ms);
    return 0; /* the results are in even if the goodbye failed */
}

/* Ends the run: TEST_END, our side's figures, then the server's. */
static void conclude(struct i3c *c, struct engine *e)
{
    char err[320] = "";

    engine_stop(e);
    if (!c->ctl_dead && iperf3_proto_state_send(c->ctl, IPERF3_TEST_END, c->o->timeout_ms))
        c->ctl_dead = true;
    engine_finish(e, &c->r->local);
    if (c->ctl_dead) {
        c->r->partial = true;
        if (!c->r->error[0])
            snprintf(c->r->error, sizeof(c->r->error), "no results from the iperf3 server");
        return;
    }
    if (exchange_results(c, err, sizeof(err))) {
        c->r->partial = true;
        snprintf(c->r->error, sizeof(c->r->error), "no results from the iperf3 server: %s", err);
    }
}

static int run_engine(struct i3c *c, struct engine *e, _Atomic int *stop)
{
    const struct params *p = &c->o->p;
    struct engine_hooks h = {
        .run_ns = p->duration_ns ? p->duration_ns + p->omit_ns : 0,
        .watch_fd = c->ctl,
        .on_watch = on_watch,
        .on_interval = client_view_interval,
        .stop_flag = stop,
        .ctx = c,
        /* -n/-k: an iperf3 server's senders neither stop exactly nor close their streams: our
         * part is in when we have received the transfer, as an iperf3 client counts it */
        .recv_target = test_kind_is(p, TEST_KIND_DATAGRAMS)
                           ? p->bytes_limit ? p->bytes_limit : p->blocks_limit * p->write_size
                           : params_limit_units(p, NULL),
    };
    enum engine_end why = engine_run(e, &h);
    int first_err = 0;

    snprintf(c->r->ended_by, sizeof(c->r->ended_by), "%s", client_end_name(p, why));
    if (why == ENGINE_END_BUDGET) {
        /* the server reads until it gets TEST_END: let it read what we sent first */
        engine_wait_acked(e, 1000);
        usleep(50000);
    }
    if (why == ENGINE_END_SIGNAL) {
        c->r->partial = true;
        snprintf(c->r->error, sizeof(c->r->error), "interrupted: results cover the time run");
    } else if (why == ENGINE_END_FLOWS) {
        c->r->partial = true;
        engine_failed_flows(e, &first_err);
        snprintf(c->r->error, sizeof(c->r->error), "every stream ended early%s%s",
                 first_err ? ": " : "", first_err ? strerror(first_err) : "");
    } else if (why != ENGINE_END_TIME && why != ENGINE_END_BUDGET) {
        c->r->partial = true;
        snprintf(c->r->error, sizeof(c->r->error), "%s", c->failure);
    }
    conclude(c, e);
    return c->r->partial ? 1 : 0;
}

/* An iperf2 server answers a cookie with its header acknowledgement (00 00 00 02 ...) where an
 * iperf3 server sends one state byte: say so rather than "state 0". 1 = it is iperf2. */
static int sniff_iperf2(struct i3c *c, char *err, size_t errlen)
{
    int64_t deadline = clock_mono_ms() + c->o->timeout_ms;
    uint8_t b[4];
    ssize_t n = 0;

    while (n < 4) {
        struct pollfd pf = {.fd = c->ctl, .events = POLLIN};
        int64_t left = deadline - clock_mono_ms();

        if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
            return 0;
        n = recv(c->ctl, b, sizeof(b), MSG_PEEK | MSG_DONTWAIT);
        if (n <= 0 || b[0] != 0)
            return 0; /* a state byte (or an error the next read reports) */
        if (n < 4)
            usleep(10000);
    }
    if (b[1] || b[2] || b[3] < 1 || b[3] > 5)
        return 0;
    snprintf(err, errlen,
             "%s is an iperf2 server, whose protocol netrig does not speak: test it with "
             "iperf2's own client (iperf -c HOST), or run 'netrig serve' there",
             c->r->server);
    return 1;
}

/* Cookie, PARAM_EXCHANGE and our parameters, CREATE_STREAMS. */
static int negotiate(struct i3c *c, const char *cookie, char *err, size_t errlen)
{
    char version[48];
    cJSON *j;
    int rc = sock_write_full(c->ctl, cookie, IPERF3_COOKIE_LEN, c->o->timeout_ms);

    if (rc) {
        snprintf(err, errlen, "cannot send the test cookie: %s", strerror(-rc));
        return rc;
    }
    if (sniff_iperf2(c, err, errlen))
        return -EPROTO;
    rc = next_state(c, c->o->timeout_ms, err, errlen);
    if (rc)
        return rc;
    snprintf(version, sizeof(version), "netrig %s", NETRIG_VERSION);
    j = iperf3_proto_params_encode(&c->o->p, version);
    rc = j ? iperf3_proto_json_send(c->ctl, j, c->o->timeout_ms) : -ENOMEM;
    cJSON_Delete(j);
    if (rc) {
        snprintf(err, errlen, "cannot send the test parameters: %s", strerror(-rc));
        return rc;
    }
    return next_state(c, c->o->timeout_ms, err, errlen);
}

static void stamp_start(struct run_result *r)
{
    time_t now = time(NULL);
    struct tm tm;

    gmtime_r(&now, &tm);
    strftime(r->started_at, sizeof(r->started_at), "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Streams, TEST_START and TEST_RUNNING: then our engine starts. */
static int setup_streams(struct i3c *c, const struct sock_addr *to, const char *cookie,
                         struct engine *e, char *err, size_t errlen)
{
    /* iperf3's streams for each way a kind's data paths open (test_kind.h) */
    static int (*const open[TEST_KIND_NPATHS])(struct i3c *, const struct sock_addr *, const char *,
                                               struct engine *, char *, size_t) = {
        [TEST_KIND_PATH_CONN] = open_tcp,
        [TEST_KIND_PATH_DGRAM] = open_udp,
    };
    int rc = open[test_kind_of(&c->o->p)->path](c, to, cookie, e, err, errlen);

    if (!rc)
        rc = next_state(c, c->o->timeout_ms, err, errlen);
    if (!rc)
        rc = next_state(c, c->o->timeout_ms, err, errlen);
    if (!rc && c->state != IPERF3_TEST_RUNNING) {
        snprintf(err, errlen, "the iperf3 server did not start the test");
        rc = -EPROTO;
    }
    return rc;
}

int iperf3_client_run(const struct client_opts *o, _Atomic int *stop, struct run_result *r,
                      char *err, size_t errlen)
{
    struct i3c c = {.view = {&o->observer, r}, .o = o, .r = r, .ctl = -1};
    char cookie[IPERF3_COOKIE_LEN], host[64], note[320];
    struct engine *e = NULL;
    struct cpulist cpus;
    struct sock_addr to;
    struct sock_local local;
    int rc;

    memset(r, 0, sizeof(*r));
    snprintf(r->test, sizeof(r->test), "%s", params_test_name(o->p.test));
    r->params = o->p;
    r->params.iperf3_wire = true;
    stamp_start(r);
    rc = iperf3_client_check(o, err, errlen);
    if (!rc)
        rc = iperf3_proto_cookie_make(cookie);
    if (!rc)
        rc = sock_resolve(o->host, o->port, o->family, &to, err, errlen);
    if (rc) {
        if (!err[0])
            snprintf(err, errlen, "cannot draw a random test cookie");
        return rc;
    }
    sock_addr_str((struct sockaddr *)&to.ss, r->server, sizeof(r->server));
    sock_addr_host((struct sockaddr *)&to.ss, host, sizeof(host));
    rc = cpulist_resolve(NULL, o->cpus, host, &cpus, err, errlen, note, sizeof(note));
    if (rc)
        return rc;
    if (!strcmp(o->cpus, "auto") && !cpus.n)
        result_warn(r, "-A %s: the client's workers were not pinned", note);
    local = client_local(o, -1);
    c.ctl = sock_connect(&to, &local, NULL, o->timeout_ms, err, errlen);
    if (c.ctl < 0)
        return c.ctl;
    rc = negotiate(&c, cookie, err, errlen);
    if (!rc &&
        !(e = engine_create(flow_kind_for(&r->params, true), &r->params, true, &cpus, err, errlen)))
        rc = -ENOMEM;
    if (!rc)
        rc = setup_streams(&c, &to, cookie, e, err, errlen);
    if (!rc)
        run_observer_start(&o->observer, r);
    if (!rc)
        rc = engine_start(e, err, errlen);
    if (!rc) {
        rc = run_engine(&c, e, stop);
        result_merge(r);
        /* iperf3's results carry no settings: the history says so for the server's side */
        snprintf(r->remote.host_note, sizeof(r->remote.host_note),
                 "an iperf3 server sends no host settings");
    }
    engine_destroy(e);
    close(c.ctl);
    return rc;
}
