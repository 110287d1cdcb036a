/* thirdparty_serve: running a test toward another daemon for a controller. */
#include "thirdparty_serve.h"

#include "acl.h"
#include "client.h"
#include "ctl.h"
#include "hostsnap.h"
#include "log.h"
#include "multi.h"
#include "policy.h"
#include "result_json.h"
#include "sock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The target queued the run behind exclusive ones: the daemon's log says so. */
static void on_queued(void *ctx, int ahead)
{
    (void)ctx;
    LOG_INFO("server is busy with %d exclusive test(s); waiting our turn", ahead);
}

/* Reads the request into client options; refuses what this daemon does not allow. */
static int parse_request(const struct served_conf *so, const cJSON *msg,
                         const struct sockaddr *peer, struct client_opts *o, const char **code,
                         char *err, size_t errlen)
{
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
    if (policy_check_limits(&so->limits, &o->p, &flow_rate, err, errlen)) {
        *code = "limit";
        return -EPERM;
    }
    snprintf(o->host, sizeof(o->host), "%s", t.host);
    o->port = t.port;
    o->timeout_ms = so->timeout_ms;
    o->observer.on_queued = on_queued;
    return 0;
}

static int authenticate(const struct served_conf *so, int ctl, const cJSON *msg, char *err,
                        size_t errlen)
{
    const cJSON *user = cJSON_GetObjectItemCaseSensitive(msg, "user");

    if (!so->auth)
        return 0;
    return policy_authenticate(ctl, so->auth, cJSON_IsString(user) ? user->valuestring : "",
                               so->timeout_ms, err, errlen);
}

/* Both ends' settings for the controller: ours (taken now, after the test: off its path)
 * unless we decline, and the target's as it sent them to us. */
static void add_hosts(const struct served_conf *so, cJSON *reply, const struct run_result *r)
{
    struct hostsnap *own = NULL;

    if (so->host_snapshot == SERVED_HOSTSNAP_SEND && (own = hostsnap_new()) != NULL)
        hostsnap_take(NULL, own);
    result_json_add_host(reply, "client_host", own, so->host_snapshot == SERVED_HOSTSNAP_DECLINE);
    result_json_add_host(reply, "server_host", r->remote.host, r->remote.host_declined);
    if (!r->remote.host && !r->remote.host_declined && r->remote.host_note[0])
        cJSON_AddStringToObject(reply, "server_host_note", r->remote.host_note); /* why none */
    hostsnap_free(own);
}

void thirdparty_serve(struct served *t, const cJSON *msg)
{
    const struct sockaddr *peer = (const struct sockaddr *)&t->peer;
    struct served_refusal how = {.count = SERVED_UNCOUNTED, .code = "auth_failed"};
    struct client_opts o;
    struct run_result r;
    char err[512] = "";
    uint32_t running;
    cJSON *reply;
    int rc;

    t->label = "controller";
    if (authenticate(t->conf, t->ctl, msg, err, sizeof(err)) ||
        parse_request(t->conf, msg, peer, &o, &how.code, err, sizeof(err))) {
        served_refuse(t, how, "%s", err);
        return;
    }
    if (served_admit(t, &running)) {
        how.code = "busy";
        served_refuse(t, how, "server busy: %u tests running; try again later", running);
        return;
    }
    LOG_INFO("controller %s: running %s toward %s:%u", t->who, params_test_name(o.p.test), o.host,
             o.port);
    served_ran(t);
    rc = client_run(&o, t->conf->stop, &r, err, sizeof(err));
    served_release(t);
    reply = ctl_msg_new("run_result");
    cJSON_AddStringToObject(reply, "status", rc == 0 ? "complete" : rc > 0 ? "partial" : "failed");
    if (rc)
        cJSON_AddStringToObject(reply, "message", rc < 0 ? err : r.error);
    if (rc >= 0) {
        cJSON_AddItemToObject(reply, "result", result_json_run(&r));
        add_hosts(t->conf, reply, &r);
    }
    ctl_send(t->ctl, reply, t->conf->timeout_ms);
    cJSON_Delete(reply);
    result_fini(&r);
}
