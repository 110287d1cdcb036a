/* thirdparty: running a test for a controller, and asking a daemon to run one. */
#include "thirdparty.h"

#include "auth.h"
#include "ctl.h"
#include "log.h"
#include "multi.h"
#include "policy.h"
#include "result_json.h"
#include "server.h"
#include "sock.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define THIRDPARTY_GRACE_MS 30000 /* beyond the test's own duration */

/* The target queued the run behind exclusive ones: the daemon's log says so. */
static void on_queued(void *ctx, int ahead)
{
    (void)ctx;
    LOG_INFO("server is busy with %d exclusive test(s); waiting our turn", ahead);
}

/* Reads the request into client options; refuses what this daemon does not allow. */
static int parse_request(struct server *srv, const cJSON *msg, const struct sockaddr *peer,
                         struct client_opts *o, const char **code, char *err, size_t errlen)
{
    const struct server_opts *so = server_opts(srv);
    const cJSON *target = cJSON_GetObjectItemCaseSensitive(msg, "target");
    const cJSON *test = cJSON_GetObjectItemCaseSensitive(msg, "test");
    struct multi_target t;
    uint64_t flow_rate;
    int kind;

    *code = "bad_request";
    if (!so->third_party || !acl_permits(so->third_party, peer)) {
        *code = "third_party_refused";
        snprintf(err, errlen,
                 "this daemon runs no tests for other hosts' controllers: start it "
                 "with --allow-third-party CIDR covering the controller");
        return -EPERM;
    }
    if (!cJSON_IsString(target) || multi_parse_target(target->valuestring, SOCK_DEFAULT_PORT, &t)) {
        snprintf(err, errlen, "a run request needs \"target\": \"HOST[:PORT]\"");
        return -EINVAL;
    }
    kind = cJSON_IsString(test) ? params_test_from_name(test->valuestring) : -1;
    if (kind < 0) {
        snprintf(err, errlen, "a run request needs \"test\": stream, rr or crr");
        return -EINVAL;
    }
    memset(o, 0, sizeof(*o));
    if (params_from_json(cJSON_GetObjectItemCaseSensitive(msg, "params"), &o->p, err, errlen))
        return -EINVAL;
    if ((int)o->p.test != kind) {
        snprintf(err, errlen, "run request names test '%s' but its parameters say '%s'",
                 test->valuestring, params_test_name(o->p.test));
        return -EINVAL;
    }
    if (policy_check_limits(so, &o->p, &flow_rate, err, errlen)) {
        *code = "limit";
        return -EPERM;
    }
    snprintf(o->host, sizeof(o->host), "%s", t.host);
    o->port = t.port;
    o->timeout_ms = so->timeout_ms;
    o->observer.on_queued = on_queued;
    return 0;
}

static int authenticate(struct server *srv, int ctl, const cJSON *msg, char *err, size_t errlen)
{
    const struct server_opts *so = server_opts(srv);
    const cJSON *user = cJSON_GetObjectItemCaseSensitive(msg, "user");

    if (!so->auth)
        return 0;
    return policy_authenticate(ctl, so->auth, cJSON_IsString(user) ? user->valuestring : "",
                               so->timeout_ms, err, errlen);
}

void thirdparty_serve(struct server *srv, int ctl, const cJSON *msg, const struct sockaddr *peer,
                      const char *who)
{
    struct client_opts o;
    struct run_result r;
    const char *code = "bad_request";
    char err[512] = "";
    uint32_t running;
    cJSON *reply;
    int rc;

    if (authenticate(srv, ctl, msg, err, sizeof(err))) {
        LOG_WARN("controller %s: refused: %s", who, err);
        ctl_send_error(ctl, "auth_failed", "%s", err);
        return;
    }
    if (parse_request(srv, msg, peer, &o, &code, err, sizeof(err))) {
        LOG_WARN("controller %s: refused: %s", who, err);
        ctl_send_error(ctl, code, "%s", err);
        return;
    }
    if (server_admit(srv, peer, &running)) {
        ctl_send_error(ctl, "busy", "server busy: %u tests running; try again later", running);
        return;
    }
    LOG_INFO("controller %s: running %s toward %s:%u", who, params_test_name(o.p.test), o.host,
             o.port);
    rc = client_run(&o, server_stop_flag(srv), &r, err, sizeof(err));
    server_release(srv, peer);
    reply = ctl_msg_new("run_result");
    cJSON_AddStringToObject(reply, "status", rc == 0 ? "complete" : rc > 0 ? "partial" : "failed");
    if (rc)
        cJSON_AddStringToObject(reply, "message", rc < 0 ? err : r.error);
    if (rc >= 0)
        cJSON_AddItemToObject(reply, "result", result_json_run(&r));
    ctl_send(ctl, reply, server_opts(srv)->timeout_ms);
    cJSON_Delete(reply);
    result_fini(&r);
}

/* Reads the daemon's answer, answering an authentication challenge on the way. */
static int await_result(int ctl, const struct client_opts *o, int timeout_ms, cJSON **doc,
                        char *err, size_t errlen)
{
    char secret[AUTH_SECRET_MAX] = "";

    for (;;) {
        cJSON *m = NULL;
        const cJSON *msg;
        int rc = ctl_recv(ctl, CTL_MAX_RESPONSE, timeout_ms, &m, err, errlen);

        if (rc)
            return rc;
        msg = cJSON_GetObjectItemCaseSensitive(m, "message");
        if (!strcmp(ctl_type(m), "challenge")) {
            rc = o->user[0] ? auth_client_secret(o->credentials[0] ? o->credentials : NULL, o->user,
                                                 secret, sizeof(secret), err, errlen)
                            : 0;
            if (!rc)
                rc = policy_answer_challenge(ctl, m, o->user, o->user[0] ? secret : NULL,
                                             o->timeout_ms, err, errlen);
            OPENSSL_cleanse(secret, sizeof(secret));
            cJSON_Delete(m);
            if (rc)
                return rc;
            continue;
        }
        if (!strcmp(ctl_type(m), "error")) {
            snprintf(err, errlen, "%s", cJSON_IsString(msg) ? msg->valuestring : "refused");
            cJSON_Delete(m);
            return -EPERM;
        }
        if (strcmp(ctl_type(m), "run_result")) {
            snprintf(err, errlen, "daemon sent '%s' where 'run_result' was expected", ctl_type(m));
            cJSON_Delete(m);
            return -EPROTO;
        }
        *doc = m;
        return 0;
    }
}

int thirdparty_request(const char *from_host, uint16_t from_port, const struct client_opts *o,
                       cJSON **doc, char *err, size_t errlen)
{
    struct sock_addr from;
    char target[300];
    cJSON *m;
    int ctl, rc, wait_ms;

    *doc = NULL;
    rc = sock_resolve(from_host, from_port, o->family, &from, err, errlen);
    if (rc)
        return rc;
    ctl = sock_connect(&from, o->bind[0] ? o->bind : NULL, NULL, o->timeout_ms, err, errlen);
    if (ctl < 0)
        return ctl;
    snprintf(target, sizeof(target), strchr(o->host, ':') ? "[%s]:%u" : "%s:%u", o->host, o->port);
    m = ctl_msg_new("run");
    cJSON_AddNumberToObject(m, "proto", CTL_PROTO_VERSION);
    cJSON_AddStringToObject(m, "target", target);
    cJSON_AddStringToObject(m, "test", params_test_name(o->p.test));
    cJSON_AddItemToObject(m, "params", params_to_json(&o->p));
    if (o->user[0])
        cJSON_AddStringToObject(m, "user", o->user);
    rc = ctl_send(ctl, m, o->timeout_ms);
    cJSON_Delete(m);
    wait_ms =
        (int)((o->p.duration_ns + o->p.omit_ns) / 1000000) + o->timeout_ms + THIRDPARTY_GRACE_MS;
    if (rc)
        snprintf(err, errlen, "cannot send the run request: %s", strerror(-rc));
    else
        rc = await_result(ctl, o, wait_ms, doc, err, errlen);
    close(ctl);
    return rc;
}
