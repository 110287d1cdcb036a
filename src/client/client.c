/* client: the client side of a stream test: control exchange, data connections, the local
 * engine, and the join of both sides' results. */
#include "client.h"
#include "client_flows.h"
#include "clock.h"

#include "cpulist.h"
#include "auth.h"
#include "ctl.h"
#include "dsclass.h"
#include "engine.h"
#include "flow_kinds.h"
#include "hostfs.h"
#include "ivjoin.h"
#include "log.h"
#include "result_json.h"
#include "sock.h"
#include "tcpinfo.h"
#include "test_kind.h"
#include "units.h"

#include <arpa/inet.h>
#include <errno.h>
#include <openssl/crypto.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CLIENT_QUEUE_WAIT_MS (10 * 60 * 1000) /* --exclusive servers may queue us this long */

struct client_ctx {
    struct client_view view; /* first: the engine's interval hook reads it */
    const struct client_opts *o;
    struct run_result *r;
    int ctl;
    char failure[256];
    cJSON *early_result; /* the server ended the test itself (shutting down) */
    uint64_t t_start;    /* CLOCK_MONOTONIC when our engine started */
    bool peer_sent;      /* -n/-k: the server's senders have sent their part ("sent") */
};

struct sock_local client_local(const struct client_opts *o, int flow)
{
    struct sock_local l = {.addr = o->bind, .dev = o->bind_dev};

    if (flow >= 0 && o->cport)
        l.port = (uint16_t)(o->cport + flow);
    return l;
}

const char *client_end_name(const struct params *p, int engine_end)
{
    switch ((enum engine_end)engine_end) {
    case ENGINE_END_TIME: return "time";
    case ENGINE_END_BUDGET: return params_limit_name(p);
    case ENGINE_END_SIGNAL: return "interrupted";
    case ENGINE_END_WATCH:
    case ENGINE_END_LIMIT: return "server";
    case ENGINE_END_FLOWS: return "flows";
    default: return "error";
    }
}

/* What an iperf3 or iperf2 server answers to our hello, and what to tell the user. */
static int name_server(const uint8_t *b, ssize_t n, const char *where, bool stream, char *err,
                       size_t errlen)
{
    if ((b[0] == 9 || b[0] == 0xff || b[0] == 0xfe) && !stream) { /* iperf3 has no rr, crr */
        snprintf(err, errlen,
                 "%s is an iperf3 server, not a netrig one: iperf3 has no request-response "
                 "test, so run 'netrig serve' there for rr and crr",
                 where);
        return 1;
    }
    if (b[0] == 9 || b[0] == 0xff || b[0] == 0xfe) { /* PARAM_EXCHANGE, busy, error */
        snprintf(err, errlen,
                 "%s is an iperf3 server, not a netrig one: add --iperf3 to test against it "
                 "(netrig stream --iperf3 -c HOST[:PORT])",
                 where);
        return 1;
    }
    if (n >= 4 && !b[0] && !b[1] && !b[2] && b[3] >= 1 && b[3] <= 5) { /* iperf2's header ack */
        snprintf(err, errlen,
                 "%s is an iperf2 server, whose protocol netrig does not speak: test it with "
                 "iperf2's own client (iperf -c HOST), or run 'netrig serve' there",
                 where);
        return 1;
    }
    if (n < 4 && !b[0])
        return 0; /* perhaps iperf2: wait for the rest */
    snprintf(err, errlen,
             "%s does not speak netrig's protocol (it answered %02x %02x %02x %02x): is 'netrig "
             "serve' running on that port?",
             where, b[0], n > 1 ? b[1] : 0, n > 2 ? b[2] : 0, n > 3 ? b[3] : 0);
    return 1;
}

int client_sniff_server(int ctl, const char *where, bool stream, int timeout_ms, char *err,
                        size_t errlen)
{
    int64_t deadline = clock_mono_ms() + timeout_ms;

    for (;;) {
        struct pollfd pf = {.fd = ctl, .events = POLLIN};
        int64_t left = deadline - clock_mono_ms();
        uint8_t b[4];
        ssize_t n;

        if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
            return 0; /* silence: the caller's own wait reports it */
        n = recv(ctl, b, sizeof(b), MSG_PEEK | MSG_DONTWAIT);
        if (n <= 0)
            return 0; /* closed or failed: the caller's read says so */
        if (b[0] == ctl_magic[0] && (n < 2 || b[1] == ctl_magic[1]))
            return 0; /* netrig */
        if (name_server(b, n, where, stream, err, errlen))
            return 1;
        if (n >= 4)
            return 0;
        usleep(10000); /* part of a header: let the rest arrive */
    }
}

int client_view_interval(void *ctx, const struct side_result *s, const struct interval *iv)
{
    const struct client_view *v = ctx;
    /* the engine's result is this run's own: the view notes the server's part in it */
    struct side_result *side = (struct side_result *)s;
    struct interval *mine = (struct interval *)iv;

    if (v->join) {
        ivjoin_local(v->join, side, mine, clock_mono_ns());
        return 0;
    }
    /* no server intervals come (an iperf3 server): its part stays unknown */
    mine->peer =
        result_server_sends_tcp(&v->r->params) ? INTERVAL_PEER_PENDING : INTERVAL_PEER_NONE;
    run_observer_interval(v->observer, v->r, s, iv);
    return 0;
}

/* The peer's "message", escaped (log_escape) into buf: never printed raw. */
static const char *msg_text_in(const cJSON *m, char *buf, size_t len)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(m, "message");

    log_escape(cJSON_IsString(t) ? t->valuestring : "(no message)", buf, len);
    return buf;
}
#define msg_text(m) msg_text_in((m), (char[512]){0}, 512)

/* During the run the server speaks only to report a failure. */
static int on_watch(void *arg)
{
    struct client_ctx *c = arg;
    cJSON *m = NULL;
    char err[256];
    int rc = ctl_recv(c->ctl, CTL_MAX_RESPONSE, 2000, &m, err, sizeof(err));

    if (!rc && !strcmp(ctl_type(m), "interval") && c->view.join) {
        ivjoin_remote(c->view.join, m, clock_mono_ns()); /* a malformed one is ignored */
        cJSON_Delete(m);
        return 0;
    }
    if (rc == -ENODATA)
        snprintf(c->failure, sizeof(c->failure), "server closed the control connection mid-test");
    else if (rc)
        snprintf(c->failure, sizeof(c->failure), "server control channel failed: %s", err);
    else if (!strcmp(ctl_type(m), "error"))
        snprintf(c->failure, sizeof(c->failure), "server reported: %s", msg_text(m));
    else if (!strcmp(ctl_type(m), "sent")) {
        c->peer_sent = true; /* -n/-k: the server's part of the transfer is on its way */
        cJSON_Delete(m);
        return 0;
    } else if (!strcmp(ctl_type(m), "ending")) {
        snprintf(c->failure, sizeof(c->failure), "server ended the test early: %s", msg_text(m));
        cJSON_Delete(m);
        return 1; /* stop now and collect what the server measured */
    } else if (!strcmp(ctl_type(m), "result")) {
        snprintf(c->failure, sizeof(c->failure), "server ended the test early (shutting down?)");
        c->early_result = m;
        return -1;
    } else
        snprintf(c->failure, sizeof(c->failure), "server sent an unexpected '%s' message",
                 ctl_type(m));
    cJSON_Delete(m);
    return -1;
}

struct client_auth {
    const char *user;
    const char *secret;
};

/* What a wait may meet on the way besides the message it wants (NULL: none of it). */
struct expect_extra {
    const struct client_auth *auth; /* "challenge": answered */
    struct ivjoin *join;            /* "interval": the server's last ones come before result */
    char *ending;                   /* "ending": the server ended the test; its reason, kept */
    size_t ending_len;
};

/* Waits for a message of the wanted type; "error", "queued" and what x allows are handled
 * here. */
static int expect_auth(int ctl, const char *want, int timeout_ms, const struct run_observer *obs,
                       const struct expect_extra *x, cJSON **msg, char *err, size_t errlen)
{
    const struct client_auth *auth = x ? x->auth : NULL;
    struct ivjoin *join = x ? x->join : NULL;

    for (;;) {
        cJSON *m = NULL;
        int rc = ctl_recv(ctl, CTL_MAX_RESPONSE, timeout_ms, &m, err, errlen);

        if (rc == -ENODATA) {
            snprintf(err, errlen, "server closed the connection while we waited for '%s'", want);
            return rc;
        }
        if (rc)
            return rc;
        if (!strcmp(ctl_type(m), want)) {
            *msg = m;
            return 0;
        }
        if (!strcmp(ctl_type(m), "interval") && join) { /* the last ones come before result */
            ivjoin_remote(join, m, clock_mono_ns());
            cJSON_Delete(m);
            continue;
        }
        if (!strcmp(ctl_type(m), "ending") && x && x->ending) { /* it crossed our own end */
            snprintf(x->ending, x->ending_len, "server ended the test early: %s", msg_text(m));
            cJSON_Delete(m);
            continue;
        }
        if (!strcmp(ctl_type(m), "challenge") && auth) {
            rc = auth_answer_challenge(ctl, m, auth->user, auth->secret, timeout_ms, err, errlen);
            cJSON_Delete(m);
            if (rc)
                return rc;
            continue;
        }
        if (!strcmp(ctl_type(m), "queued")) {
            const cJSON *ahead = cJSON_GetObjectItemCaseSensitive(m, "ahead");
            run_observer_queued(obs, cJSON_IsNumber(ahead) ? ahead->valueint : 1);
            cJSON_Delete(m);
            timeout_ms = CLIENT_QUEUE_WAIT_MS;
            continue;
        }
        rc = -EPROTO;
        if (!strcmp(ctl_type(m), "error")) {
            snprintf(err, errlen, "server %s the test: %s",
                     strcmp(want, "result") ? "refused" : "stopped", msg_text(m));
            rc = -EREMOTEIO; /* a netrig server answered, and said no */
        } else if (!strcmp(ctl_type(m), "sent")) {
            cJSON_Delete(m);
            continue; /* -n/-k: the server's "my part is sent" can cross our stop */
        } else {
            snprintf(err, errlen, "server sent '%s' where '%s' was expected", ctl_type(m), want);
        }
        cJSON_Delete(m);
        return rc;
    }
}

static int expect(int ctl, const char *want, int timeout_ms, const struct run_observer *obs,
                  cJSON **msg, char *err, size_t errlen)
{
    return expect_auth(ctl, want, timeout_ms, obs, NULL, msg, err, errlen);
}

/* Does the client ask the server to stream its intervals? When it sends TCP flows whose
 * retransmits our intervals show. */
static bool asks_intervals(const struct params *p)
{
    return p->interval_ns && result_server_sends_tcp(p);
}

static int hello(const struct client_opts *o, int ctl, uint8_t id[CTL_TEST_ID_LEN],
                 struct run_result *r, cJSON **accept, char *err, size_t errlen)
{
    cJSON *m = ctl_msg_new("hello"), *reply = NULL;
    const cJSON *hex, *ver;
    char secret[AUTH_SECRET_MAX] = "";
    struct client_auth ca;
    struct expect_extra x = {.auth = &ca};
    int rc;

    cJSON_AddNumberToObject(m, "proto", CTL_PROTO_VERSION);
    cJSON_AddStringToObject(m, "netrig_version", NETRIG_VERSION);
    cJSON_AddStringToObject(m, "test", params_test_name(o->p.test));
    cJSON_AddItemToObject(m, "params", params_to_json(&o->p));
    if (asks_intervals(&o->p)) /* its retransmits are the server's to count */
        cJSON_AddBoolToObject(m, "intervals", true);
    if (o->user[0])
        cJSON_AddStringToObject(m, "user", o->user);
    rc = ctl_send(ctl, m, o->timeout_ms);
    cJSON_Delete(m);
    if (rc) {
        snprintf(err, errlen, "cannot send the test request: %s", strerror(-rc));
        return rc;
    }
    int64_t t0 = clock_mono_ms(), left;
    if (client_sniff_server(ctl, r->server, test_kind_is(&o->p, TEST_KIND_BULK), o->timeout_ms, err,
                            errlen))
        return -EPROTO; /* an iperf3 or iperf2 server: said so at once */
    left = (int64_t)o->timeout_ms - (clock_mono_ms() - t0); /* one --timeout for the answer */
    if (left <= 0) {
        snprintf(err, errlen,
                 "control channel: %s accepted the connection but answered nothing in %g s "
                 "(--timeout): is 'netrig serve' running on that port?",
                 r->server, o->timeout_ms / 1e3);
        return -ETIMEDOUT;
    }
    if (o->user[0]) {
        rc = auth_client_secret(o->credentials[0] ? o->credentials : NULL, o->user, secret,
                                sizeof(secret), err, errlen);
        if (rc)
            return rc;
    }
    ca.user = o->user;
    ca.secret = o->user[0] ? secret : NULL;
    rc = expect_auth(ctl, "accept", (int)left, &o->observer, &x, &reply, err, errlen);
    OPENSSL_cleanse(secret, sizeof(secret));
    if (rc)
        return rc;
    hex = cJSON_GetObjectItemCaseSensitive(reply, "test_id");
    ver = cJSON_GetObjectItemCaseSensitive(reply, "netrig_version");
    if (!cJSON_IsString(hex) || ctl_id_from_hex(hex->valuestring, id)) {
        snprintf(err, errlen, "server's accept message lacks a valid test id");
        rc = -EPROTO;
    }
    if (cJSON_IsString(ver))
        snprintf(r->remote.version, sizeof(r->remote.version), "%s", ver->valuestring);
    if (rc)
        cJSON_Delete(reply);
    else
        *accept = reply;
    return rc;
}

/* The server samples on its own clock; allow for its intervals being a little shifted. */
static uint32_t max_intervals(const struct params *p)
{
    uint64_t total = params_time_cap_ns(p) + p->omit_ns;
    /* a server enforcing --max-rate samples every second even when we asked for none */
    uint64_t iv = p->interval_ns && p->interval_ns < 1000000000ULL ? p->interval_ns : 1000000000ULL;
    return (uint32_t)(total / iv + 8);
}

/* How long the server may take to answer "stop", by our own clock: a server receiving our TCP
 * stream drains it until our FIN, at most until CTL_END_GRACE_NS past the scheduled end (it
 * shuts everything down then); any other test it answers at once (its UDP receivers listen
 * 0.3 s more). Then --timeout for the reply itself. A stalled server costs no more. */
static int result_wait_ms(const struct client_ctx *c)
{
    const struct params *p = &c->o->p;
    bool drains = test_kind_is(p, TEST_KIND_DRAINS) && p->dir != PARAMS_DIR_REVERSE;
    uint64_t now = clock_mono_ns(),
             end = c->t_start + p->duration_ns + p->omit_ns + CTL_END_GRACE_NS;
    uint64_t drain = !drains ? 300000000ULL : end > now ? end - now : 0;

    return c->o->timeout_ms + (int)(drain / 1000000);
}

/* The server's sample ticks at most: thinning only ever drops ticks. A transfer of -n/-k
 * without -t runs until it is done, up to the longest test a side allows. */
static uint32_t max_ticks(const struct params *p)
{
    uint64_t total = params_time_cap_ns(p) + p->omit_ns;
    uint64_t n = p->sample_ns ? total / p->sample_ns + 8 : 0;

    return n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
}

/* Ends the run: tell the server, stop our side, collect the server's side. */
static void conclude(struct client_ctx *c, struct engine *e, bool ctl_ok)
{
    cJSON *m;
    char err[256] = "", ending[sizeof(c->r->error)] = "";
    struct expect_extra x = {.join = c->view.join, .ending = ending, .ending_len = sizeof(ending)};

    engine_stop(e); /* our senders stop now; telling the server takes a moment */
    if (ctl_ok) {
        m = ctl_msg_new("stop");
        ctl_ok = ctl_send(c->ctl, m, c->o->timeout_ms) == 0;
        cJSON_Delete(m);
    }
    engine_finish(e, &c->r->local);
    if (c->view.join)
        ivjoin_rebase(c->view.join, &c->r->local);
    m = c->early_result;
    c->early_result = NULL;
    if (!ctl_ok && !m) {
        if (!c->r->partial) {
            c->r->partial = true;
            snprintf(c->r->error, sizeof(c->r->error),
                     "could not ask the server to stop: it reported no results");
        }
        return;
    }
    if ((!m && expect_auth(c->ctl, "result", result_wait_ms(c), &c->o->observer, &x, &m, err,
                           sizeof(err))) ||
        result_json_side_parse(cJSON_GetObjectItemCaseSensitive(m, "side"),
                               test_kind_server_flows(&c->o->p), max_intervals(&c->o->p),
                               max_ticks(&c->o->p), &c->r->remote, err, sizeof(err))) {
        c->r->partial = true;
        snprintf(c->r->error, sizeof(c->r->error), "no results from the server: %s", err);
    } else if (ending[0]) { /* our flows ended first (its senders stopped): its reason */
        c->r->partial = true;
        snprintf(c->r->error, sizeof(c->r->error), "%s", ending);
        snprintf(c->r->ended_by, sizeof(c->r->ended_by), "%s",
                 client_end_name(&c->o->p, ENGINE_END_WATCH));
    }
    cJSON_Delete(m);
}

/* A server with --max-rate names each flow's share: our senders pace to it. */
static void apply_rate_limit(const cJSON *accept, struct params *p, struct run_result *r)
{
    uint64_t lim = ctl_accept_flow_rate(accept);

    if (!lim)
        return;
    if (!p->fq_rate_bps || p->fq_rate_bps > lim) {
        p->fq_rate_bps = lim;
        r->params.fq_rate_bps = p->fq_rate_bps;
        char rate[32];
        units_format_rate((double)lim, rate, sizeof(rate));
        snprintf(r->note, sizeof(r->note), "the server's --max-rate paces each flow to %s", rate);
    }
}

static void stamp_start(struct run_result *r)
{
    time_t now = time(NULL);
    struct tm tm;

    gmtime_r(&now, &tm);
    strftime(r->started_at, sizeof(r->started_at), "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* crr's classic failure: no local port left for a new connection. */
static void ports_exhausted(char *msg, size_t len)
{
    char buf[4096], range[64] = "?";
    const char *tw;
    unsigned long long n_tw = 0;

    if (hostfs_read(NULL, "/proc/net/sockstat", buf, sizeof(buf)) > 0 && (tw = strstr(buf, " tw ")))
        n_tw = strtoull(tw + 4, NULL, 10);
    hostfs_read(NULL, "/proc/sys/net/ipv4/ip_local_port_range", range, sizeof(range));
    for (char *p = range; *p; p++)
        if (*p == '\t')
            *p = '-';
    snprintf(msg, len,
             "out of local ports (EADDRNOTAVAIL) with %llu sockets in TIME_WAIT: widen "
             "net.ipv4.ip_local_port_range (now %s), set net.ipv4.tcp_tw_reuse=1, or add "
             "source addresses with -B",
             n_tw, range);
}

/* How the run ended decides what is partial and whether the server can still answer. */
static void run_end(struct client_ctx *c, struct engine *e, enum engine_end why)
{
    int first_err = 0;

    snprintf(c->r->ended_by, sizeof(c->r->ended_by), "%s", client_end_name(&c->o->p, why));
    switch (why) {
    case ENGINE_END_TIME:
    case ENGINE_END_BUDGET: conclude(c, e, true); break;
    case ENGINE_END_WATCH: /* the server ended the test and will send its results */
        c->r->partial = true;
        snprintf(c->r->error, sizeof(c->r->error), "%s", c->failure);
        conclude(c, e, true);
        break;
    case ENGINE_END_SIGNAL:
        c->r->partial = true;
        snprintf(c->r->error, sizeof(c->r->error), "interrupted: results cover the time run");
        conclude(c, e, true);
        break;
    case ENGINE_END_FLOWS:
        c->r->partial = true;
        engine_failed_flows(e, &first_err);
        if (first_err == EADDRNOTAVAIL)
            ports_exhausted(c->r->error, sizeof(c->r->error));
        else
            snprintf(c->r->error, sizeof(c->r->error), "every flow ended early%s%s",
                     first_err ? ": " : "", first_err ? strerror(first_err) : "");
        conclude(c, e, true);
        break;
    default:
        c->r->partial = true;
        snprintf(c->r->error, sizeof(c->r->error), "%s", c->failure);
        conclude(c, e, false);
        break;
    }
}

static int run_engine(struct client_ctx *c, struct engine *e, _Atomic int *stop)
{
    struct engine_hooks h = {
        .run_ns = c->o->p.duration_ns ? c->o->p.duration_ns + c->o->p.omit_ns : 0,
        .watch_fd = c->ctl,
        .on_watch = on_watch,
        .on_interval = client_view_interval,
        .stop_flag = stop,
        .ctx = c,
        .peer_sent = &c->peer_sent,
    };
    enum engine_end why = engine_run(e, &h);

    run_end(c, e, why);
    if (c->view.join) /* the intervals still held, with what the server's results add */
        ivjoin_finish(c->view.join, c->r->remote.valid ? &c->r->remote : NULL);
    return c->r->partial ? 1 : 0;
}

struct client_session {
    struct client_opts o;
    struct run_result *r;
    struct client_ctx c;
    struct sock_addr to;
    struct engine *e;
    cJSON *accept;
};

void client_session_free(struct client_session *s)
{
    if (!s)
        return;
    cJSON_Delete(s->accept);
    engine_destroy(s->e);
    if (s->c.ctl >= 0)
        close(s->c.ctl);
    ivjoin_free(s->c.view.join);
    free(s);
}

/* omit_rtts: the warm-up from the handshake's round trip (TCP_INFO of the control connection
 * right after connect holds the SYN/SYN-ACK sample), before the parameters go to the server. */
static void scale_omit(struct client_session *s)
{
    struct tcpinfo ti;
    uint64_t want;

    if (!s->o.omit_rtts || tcpinfo_read(s->c.ctl, &ti) || !ti.valid)
        return;
    want = (uint64_t)s->o.omit_rtts * (ti.min_rtt_us ? ti.min_rtt_us : ti.rtt_us) * 1000;
    if (want < s->o.omit_min_ns)
        want = s->o.omit_min_ns;
    if (want > CLIENT_OMIT_MAX_NS)
        want = CLIENT_OMIT_MAX_NS;
    if (want > s->o.p.omit_ns)
        s->o.p.omit_ns = s->r->params.omit_ns = want;
}

static int session_setup(struct client_session *s, char *err, size_t errlen)
{
    const struct client_opts *o = &s->o;
    struct run_result *r = s->r;
    struct cpulist cpus;
    uint8_t id[CTL_TEST_ID_LEN];
    char host[INET6_ADDRSTRLEN + 8], note[320];
    cJSON *ready = NULL;
    struct params p;
    struct sock_local local = client_local(o, -1);
    int rc = sock_resolve(o->host, o->port, o->family, &s->to, err, errlen);

    if (rc)
        return rc;
    sock_addr_str((struct sockaddr *)&s->to.ss, r->server, sizeof(r->server));
    sock_addr_host((struct sockaddr *)&s->to.ss, host, sizeof(host));
    rc = cpulist_resolve(NULL, o->cpus, host, &cpus, err, errlen, note, sizeof(note));
    if (rc)
        return rc;
    if (!strcmp(o->cpus, "auto") && !cpus.n)
        result_warn(r, "-A %s: the client's workers were not pinned", note);
    else if (note[0])
        LOG_INFO("%s", note);
    s->c.ctl = sock_connect(&s->to, &local, NULL, o->timeout_ms, err, errlen);
    if (s->c.ctl < 0)
        return s->c.ctl;
    scale_omit(s);
    rc = hello(o, s->c.ctl, id, r, &s->accept, err, errlen);
    if (rc)
        return rc;
    if (o->p.classes && ctl_accept_classes(s->accept) != o->p.classes) {
        snprintf(err, errlen,
                 "the server does not mark its flows by class (--classes %s): it runs an older "
                 "netrig; upgrade it",
                 dsclass_set_name(o->p.classes));
        return -EPROTO;
    }
    p = o->p;
    apply_rate_limit(s->accept, &p, r);
    s->e = engine_create(flow_kind_for(&p, true), &p, true, &cpus, err, errlen);
    if (!s->e)
        return -ENOMEM;
    rc = client_flows_open(o, &s->to, id, s->accept, s->c.ctl, s->e, err, errlen);
    if (!rc)
        rc = expect(s->c.ctl, "ready", o->timeout_ms, &o->observer, &ready, err, errlen);
    cJSON_Delete(ready);
    return rc;
}

int client_prepare(const struct client_opts *o, struct run_result *r, struct client_session **out,
                   char *err, size_t errlen)
{
    struct client_session *s = calloc(1, sizeof(*s));
    int rc;

    *out = NULL;
    memset(r, 0, sizeof(*r));
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    s->o = *o;
    s->r = r;
    s->c.o = &s->o;
    s->c.r = r;
    s->c.view.observer = &s->o.observer;
    s->c.view.r = r;
    s->c.ctl = -1;
    snprintf(r->test, sizeof(r->test), "%s", params_test_name(o->p.test));
    r->params = o->p;
    stamp_start(r);
    if (asks_intervals(&o->p) && !(s->c.view.join = ivjoin_new(&s->o.observer, r, true))) {
        free(s);
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    rc = session_setup(s, err, errlen);
    if (rc) {
        client_session_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int client_clock_offset(struct client_session *s, int64_t *offset_ns, uint64_t *rtt_ns)
{
    uint64_t best = UINT64_MAX;
    char err[256];

    for (int i = 0; i < 5; i++) {
        cJSON *m = ctl_msg_new("time"), *reply = NULL;
        uint64_t t1 = clock_real_ns(), t3;
        const cJSON *t2;
        int rc = ctl_send(s->c.ctl, m, s->o.timeout_ms);

        cJSON_Delete(m);
        if (!rc)
            rc =
                expect(s->c.ctl, "time", s->o.timeout_ms, &s->o.observer, &reply, err, sizeof(err));
        if (rc)
            return rc;
        t3 = clock_real_ns();
        t2 = cJSON_GetObjectItemCaseSensitive(reply, "t_ns");
        /* the fastest exchange bounds the error best (NTP's idea) */
        if (cJSON_IsNumber(t2) && t3 - t1 < best) {
            best = t3 - t1;
            *offset_ns = (int64_t)t2->valuedouble - (int64_t)(t1 + (t3 - t1) / 2);
        }
        cJSON_Delete(reply);
    }
    if (best == UINT64_MAX)
        return -EPROTO;
    *rtt_ns = best;
    return 0;
}

/* Waits (bounded, interruptible by the stop flag) until CLOCK_REALTIME reaches at_ns. */
static void wait_until(uint64_t at_ns, _Atomic int *stop)
{
    while (!(stop && *stop)) {
        uint64_t now = clock_real_ns();
        struct timespec ts;
        if (now >= at_ns)
            return;
        at_ns - now > 50000000ULL ? (ts.tv_sec = 0, ts.tv_nsec = 50000000L)
                                  : (ts.tv_sec = 0, ts.tv_nsec = (long)(at_ns - now));
        nanosleep(&ts, NULL);
    }
}

int client_go(struct client_session *s, _Atomic int *stop, uint64_t start_at_ns,
              int64_t server_offset_ns, char *err, size_t errlen)
{
    cJSON *m = ctl_msg_new("start");
    int rc;

    if (start_at_ns)
        cJSON_AddNumberToObject(m, "at_ns", (double)((int64_t)start_at_ns + server_offset_ns));
    run_observer_start(&s->o.observer, s->r);
    rc = ctl_send(s->c.ctl, m, s->o.timeout_ms);
    cJSON_Delete(m);
    if (start_at_ns)
        wait_until(start_at_ns, stop);
    s->r->start_unix_ns = clock_real_ns();
    s->c.t_start = clock_mono_ns();
    /* our receivers wait for the server's end no longer than it may take to come */
    engine_set_limits(s->e, &(struct engine_limits){.hard_ns = params_time_cap_ns(&s->o.p) +
                                                               s->o.p.omit_ns + CTL_END_GRACE_NS +
                                                               1000000000ULL});
    if (!rc)
        rc = engine_start(s->e, err, errlen);
    if (rc) {
        if (!err[0])
            snprintf(err, errlen, "cannot start the test: %s", strerror(-rc));
        return rc;
    }
    rc = run_engine(&s->c, s->e, stop);
    result_merge(s->r);
    return rc;
}

int client_run(const struct client_opts *o, _Atomic int *stop, struct run_result *r, char *err,
               size_t errlen)
{
    struct client_session *s;
    int rc = client_prepare(o, r, &s, err, errlen);

    if (rc)
        return rc;
    rc = client_go(s, stop, 0, 0, err, errlen);
    client_session_free(s);
    return rc;
}
