/* thirdparty_ctl: asking a daemon to run a test on our behalf. */
#include "thirdparty_ctl.h"

#include "auth.h"
#include "ctl.h"
#include "sock.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define THIRDPARTY_GRACE_MS 30000 /* beyond the test's own duration */

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
                rc = auth_answer_challenge(ctl, m, o->user, o->user[0] ? secret : NULL,
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
    struct sock_local local;
    char target[300];
    cJSON *m;
    int ctl, rc, wait_ms;

    *doc = NULL;
    rc = sock_resolve(from_host, from_port, o->family, &from, err, errlen);
    if (rc)
        return rc;
    local = client_local(o, -1);
    ctl = sock_connect(&from, &local, NULL, o->timeout_ms, err, errlen);
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
