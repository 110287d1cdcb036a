/* served: the common part of every test the daemon serves: its hold on the shared state, its
 * refusal and its teardown. */
#define _GNU_SOURCE
#include "served.h"

#include "clock.h"
#include "ctl.h"
#include "engine.h"
#include "iperf3_proto.h"
#include "log.h"
#include "policy.h"
#include "sock.h"
#include "units.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SERVED_REFUSAL_SEND_MS 2000 /* sending the refusal to a client that may be gone */

void served_init(struct served *t, const struct served_conf *c, struct admit *a, const char *label,
                 bool iperf3, int ctl, const struct sockaddr_storage *peer)
{
    memset(t, 0, sizeof(*t));
    t->conf = c;
    t->admit = a;
    t->label = label;
    t->iperf3 = iperf3;
    t->ctl = ctl;
    t->peer = *peer;
    t->pipe_rd = t->pipe_wr = -1;
    t->handshaking = true;
    sock_addr_str((const struct sockaddr *)peer, t->who, sizeof(t->who));
}

int served_spawn(struct served *t, void *(*main)(void *), void *arg)
{
    pthread_attr_t attr;
    pthread_t th;
    int rc;

    admit_thread_started(t->admit);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    rc = pthread_create(&th, &attr, main, arg);
    pthread_attr_destroy(&attr);
    if (!rc)
        return 0;
    LOG_ERR("cannot start a thread for %s %s: %s", t->label, t->who, strerror(rc));
    served_release(t);
    admit_thread_done(t->admit);
    close(t->ctl);
    t->ctl = -1;
    return -rc;
}

/* ---------------------------------------------------------------- the hold */

int served_admit(struct served *t, uint32_t *running)
{
    int rc = admit_enter(t->admit, (const struct sockaddr *)&t->peer, running);

    t->admitted = rc == 0;
    if (t->admitted && t->handshaking)
        admit_handshake_leave(t->admit, (const struct sockaddr *)&t->peer);
    t->handshaking = t->handshaking && !t->admitted;
    return rc;
}

int served_charge(struct served *t, const struct flow_kind *kind, const struct params *p, char *msg,
                  size_t len)
{
    const struct admit_limits *l = admit_limits(t->admit);
    struct engine_plan plan;
    struct admit_usage want, used;
    char need[32], budget[32], held[32], buf[32];
    int rc;

    engine_plan(kind, p, false, &plan);
    want.bytes = plan.bytes + policy_result_bytes(plan.nflows, plan.cap_intervals);
    want.fds = plan.fds;
    rc = admit_charge(t->admit, (const struct sockaddr *)&t->peer, &want, &used);
    if (!rc) {
        t->charged = want;
        return 0;
    }
    units_format_bytes((double)want.bytes, need, sizeof(need));
    units_format_bytes((double)l->max_memory, budget, sizeof(budget));
    units_format_bytes((double)used.bytes, held, sizeof(held));
    units_format_bytes((double)plan.buflen, buf, sizeof(buf));
    if (rc == -ENOMEM)
        snprintf(msg, len,
                 "test needs %s of server memory (%u thread(s) with a %s buffer each, %u "
                 "flow(s), its intervals): over this server's --max-memory of %s, of which "
                 "other tests hold %s; use fewer flows or a smaller -l, or try later",
                 need, plan.nworkers, buf, plan.nflows, budget, held);
    else if (rc == -EDQUOT)
        snprintf(msg, len,
                 "test needs %u file descriptors (%u flow(s)): over the %u one client address "
                 "may hold (1/%d of the %u this server has for tests), of which its other tests "
                 "hold %u; use fewer flows, or try later",
                 want.fds, plan.nflows, admit_fd_share(l), ADMIT_FD_SHARE_DIV, l->max_fds,
                 used.fds);
    else
        snprintf(msg, len,
                 "test needs %u file descriptors (%u flow(s)): over the %u this server has "
                 "for tests (ulimit -n), of which other tests hold %u; use fewer flows, or try "
                 "later",
                 want.fds, plan.nflows, l->max_fds, used.fds);
    return rc;
}

int served_exclusive(struct served *t, int wait_ms, void (*queued)(void *ctx, uint32_t ahead),
                     void *ctx)
{
    int rc = admit_exclusive_acquire(t->admit, wait_ms, t->conf->stop, queued, ctx);

    t->exclusive = rc == 0;
    return rc;
}

void served_release(struct served *t)
{
    if (t->charged.bytes || t->charged.fds)
        admit_uncharge(t->admit, (const struct sockaddr *)&t->peer, &t->charged);
    memset(&t->charged, 0, sizeof(t->charged));
    served_release_slot(t);
}

void served_release_slot(struct served *t)
{
    const struct sockaddr *peer = (const struct sockaddr *)&t->peer;

    if (t->exclusive)
        admit_exclusive_release(t->admit);
    if (t->admitted)
        admit_leave(t->admit, peer);
    if (t->handshaking)
        admit_handshake_leave(t->admit, peer);
    t->exclusive = t->admitted = t->handshaking = false;
}

/* ---------------------------------------------------------------- the registry */

int served_register(struct served *t, enum admit_key kind, const void *key)
{
    int fds[2], rc;

    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK))
        return -errno;
    t->pipe_rd = fds[0];
    t->pipe_wr = fds[1];
    t->kind = kind;
    memcpy(t->key, key, admit_key_len(kind));
    rc = admit_register(t->admit, kind, t->key, t->pipe_wr);
    t->registered = rc == 0;
    return rc;
}

/* Connections routed to us that we will not take. */
static void drain(struct served *t)
{
    struct admit_conn c;

    if (t->pipe_rd >= 0)
        while (read(t->pipe_rd, &c, sizeof(c)) == (ssize_t)sizeof(c))
            close(c.fd);
}

void served_close(struct served *t)
{
    if (t->registered)
        admit_close(t->admit, t->kind, t->key);
    drain(t);
}

void served_unregister(struct served *t)
{
    if (!t->registered)
        return;
    admit_unregister(t->admit, t->kind, t->key);
    t->registered = false;
    drain(t);
}

/* ---------------------------------------------------------------- the ends */

static void tell(struct served *t, struct served_refusal r, const char *verb, const char *fmt,
                 va_list ap)
{
    char text[512];

    vsnprintf(text, sizeof(text), fmt, ap);
    if (!r.quiet)
        LOG_WARN("%s %s: %s: %s", t->label, t->who, verb, text);
    if (r.count == SERVED_SETUP_ERROR)
        metrics_control_error(t->conf->metrics, METRICS_STAGE_SETUP);
    else if (r.count >= 0)
        metrics_refused(t->conf->metrics, (enum metrics_refusal)r.count);
    if (!t->iperf3)
        ctl_send_error(t->ctl, r.code, "%s", text);
    else if (r.i3_code)
        iperf3_proto_error_send(t->ctl, r.i3_code, r.i3_errno, SERVED_REFUSAL_SEND_MS);
    else
        iperf3_proto_state_send(t->ctl, IPERF3_ACCESS_DENIED, SERVED_REFUSAL_SEND_MS);
}

void served_refuse(struct served *t, struct served_refusal r, const char *fmt, ...)
{
    va_list ap;

    served_release(t);
    va_start(ap, fmt);
    tell(t, r, "refused", fmt, ap);
    va_end(ap);
}

void served_stop(struct served *t, struct served_refusal r, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    tell(t, r, "stopped", fmt, ap);
    va_end(ap);
}

int served_authenticate(struct served *t, const char *user, struct served_refusal r)
{
    const struct sockaddr *peer = (const struct sockaddr *)&t->peer;
    uint64_t suppressed, until;
    char err[320];
    uint32_t wait_ms;
    bool log;
    int rc;

    if (!t->conf->auth)
        return 0;
    rc = policy_authenticate(t->ctl, t->conf->auth, user, t->conf->timeout_ms, err, sizeof(err));
    if (!rc) {
        admit_auth_ok(t->admit, peer, user);
        return 0;
    }
    wait_ms = admit_auth_failed(t->admit, peer, user, &log, &suppressed);
    if (suppressed)
        LOG_WARN("%llu authentication failure(s) not logged in the last second (at most one "
                 "a second is)",
                 (unsigned long long)suppressed);
    until = clock_mono_ns() + (uint64_t)wait_ms * 1000000ULL;
    while (clock_mono_ns() < until && !(t->conf->stop && *t->conf->stop)) {
        uint64_t left = until - clock_mono_ns();
        struct timespec ts = {.tv_nsec = (long)(left < 100000000ULL ? left : 100000000ULL)};
        nanosleep(&ts, NULL);
    }
    r.quiet = !log;
    served_refuse(t, r, "%s", err);
    return rc < 0 ? rc : -EACCES;
}

void served_ran(struct served *t) { t->ran = true; }

void served_teardown(struct served *t)
{
    served_unregister(t);
    if (t->pipe_rd >= 0)
        close(t->pipe_rd);
    if (t->pipe_wr >= 0)
        close(t->pipe_wr);
    t->pipe_rd = t->pipe_wr = -1;
    served_release(t);
    if (t->ctl >= 0)
        close(t->ctl);
    t->ctl = -1;
    if (t->ran)
        admit_test_ran(t->admit);
    admit_thread_done(t->admit);
}
