/* thirdparty_serve: running a test toward another daemon for a controller. */
#include "thirdparty_serve.h"
#include "clock.h"

#include "acl.h"
#include "client.h"
#include "ctl.h"
#include "dataconn.h"
#include "hostsnap.h"
#include "log.h"
#include "multi.h"
#include "policy.h"
#include "result_json.h"
#include "sock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* A run that reaches no netrig daemon is told this many --timeouts after its start. */
#define THIRDPARTY_UNREACHED_TIMEOUTS 2

/* The target queued the run behind exclusive ones: the daemon's log says so. */
static void on_queued(void *ctx, int ahead)
{
    (void)ctx;
    LOG_INFO("server is busy with %d exclusive test(s); waiting our turn", ahead);
}

/* Sleeps until until (CLOCK_MONOTONIC ns), in slices that look at the daemon's stop flag. */
static void pad_until(const struct served *t, uint64_t until)
{
    uint64_t now;

    while ((now = clock_mono_ns()) < until && !(t->conf->stop && *t->conf->stop)) {
        uint64_t left = until - now > 100000000ULL ? 100000000ULL : until - now;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)left};
        nanosleep(&ts, NULL);
    }
}

/* The target, resolved once (the test goes to this address, not to a second lookup's), must be
 * the controller itself or inside --allow-third-party-target. Every refusal (a name that does
 * not resolve, an address outside the lists) has one text, naming the target as the controller
 * gave it, and is told one --timeout after the request: neither tells what DNS answered. */
static int check_target(const struct served *t, const struct multi_target *mt,
                        struct client_opts *o, char *err, size_t errlen)
{
    const struct acl *targets = t->conf->third_party_targets;
    const struct sockaddr *peer = (const struct sockaddr *)&t->peer;
    uint64_t t0 = clock_mono_ns();
    struct sock_addr to;
    char addr[64], why[256];

    if (sock_resolve(mt->host, mt->port, 0, &to, why, sizeof(why))) {
        LOG_INFO("controller %s: target %s: %s", t->who, mt->host, why);
    } else {
        sock_addr_host((struct sockaddr *)&to.ss, addr, sizeof(addr));
        if (dataconn_same_host((struct sockaddr *)&to.ss, peer) ||
            (targets && acl_permits(targets, (struct sockaddr *)&to.ss))) {
            snprintf(o->host, sizeof(o->host), "%s", addr);
            o->port = mt->port;
            return 0;
        }
        LOG_INFO("controller %s: target %s is %s, outside the lists", t->who, mt->host, addr);
    }
    snprintf(err, errlen,
             "this daemon runs tests only toward the controller's own address or those in its "
             "--allow-third-party-target lists: target '%s' refused",
             mt->host);
    pad_until(t, t0 + (uint64_t)t->conf->timeout_ms * 1000000ULL);
    return -EPERM;
}

/* Reads the request into client options; refuses what this daemon does not allow. */
static int parse_request(const struct served *t, const cJSON *msg, struct client_opts *o,
                         const char **code, char *err, size_t errlen)
{
    const struct served_conf *so = t->conf;
    const cJSON *target = cJSON_GetObjectItemCaseSensitive(msg, "target");
    const cJSON *test = cJSON_GetObjectItemCaseSensitive(msg, "test");
    struct multi_target mt;
    uint64_t flow_rate;
    int kind;

    *code = "bad_request";
    if (!so->third_party || !acl_permits(so->third_party, (const struct sockaddr *)&t->peer)) {
        *code = "third_party_refused";
        snprintf(err, errlen,
                 "this daemon runs no tests for other hosts' controllers: start it "
                 "with --allow-third-party CIDR covering the controller");
        return -EPERM;
    }
    if (!cJSON_IsString(target) ||
        multi_parse_target(target->valuestring, SOCK_DEFAULT_PORT, &mt)) {
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
    if (strcmp(test->valuestring, params_test_name(o->p.test))) { /* the wire names agree */
        snprintf(err, errlen, "run request names test '%s' but its parameters say '%s'",
                 test->valuestring, params_test_name(o->p.test));
        return -EINVAL;
    }
    if (policy_check_limits(&so->limits, &o->p, &flow_rate, err, errlen)) {
        *code = "limit";
        return -EPERM;
    }
    if (check_target(t, &mt, o, err, errlen)) {
        *code = "third_party_refused";
        return -EPERM;
    }
    o->timeout_ms = so->timeout_ms;
    o->observer.on_queued = on_queued;
    return 0;
}

/* A run that did not reach a netrig daemon: one text for every way that happens (refused,
 * unreachable, silent, not netrig), told THIRDPARTY_UNREACHED_TIMEOUTS timeouts after the
 * start (a silent service takes about two, waiting for answers), so that neither
 * the text nor the time tells an open port from a closed one. A refusal from a netrig daemon
 * that was reached keeps its own text. */
static void unreached(const struct served *t, const struct client_opts *o, uint64_t t0, char *err,
                      size_t errlen)
{
    LOG_INFO("controller %s: run toward %s:%u failed: %s", t->who, o->host, o->port, err);
    snprintf(err, errlen, "could not run the test: no netrig daemon answered at %s:%u", o->host,
             o->port);
    pad_until(t, t0 + THIRDPARTY_UNREACHED_TIMEOUTS * (uint64_t)o->timeout_ms * 1000000ULL);
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
    struct served_refusal how = {.count = SERVED_UNCOUNTED, .code = "auth_failed"};
    struct client_opts o;
    struct run_result r;
    char err[512] = "";
    uint32_t running;
    uint64_t t0;
    cJSON *reply;
    const cJSON *user = cJSON_GetObjectItemCaseSensitive(msg, "user");
    int rc;

    t->label = "controller";
    if (served_authenticate(t, cJSON_IsString(user) ? user->valuestring : "", how))
        return;
    if (parse_request(t, msg, &o, &how.code, err, sizeof(err))) {
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
    t0 = clock_mono_ns();
    rc = client_run(&o, t->conf->stop, &r, err, sizeof(err));
    served_release(t);
    if (rc < 0 && rc != -EREMOTEIO)
        unreached(t, &o, t0, err, sizeof(err));
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
