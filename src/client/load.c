/* load: the probes and the load as parts run side by side against one daemon. */
#include "load.h"
#include "clock.h"

#include "load_icmp.h"
#include "qdiscprobe.h"
#include "sock.h"
#include "test_kind.h"

#include <errno.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LOAD_START_MARGIN_NS      300000000ULL  /* lead time for the start messages */
#define LOAD_PREPARE_LEAD_NS      1000000000ULL /* the load connects this long before it starts */
#define LOAD_TCP_PROBE_TIMEOUT_NS (10ULL * 1000000000ULL) /* a TCP probe cannot skip a lost one */

int load_validate(const struct load_params *lp, char *err, size_t errlen)
{
    uint64_t total = lp->baseline_ns + lp->loaded_ns + lp->recovery_ns;

    if (!lp->up && !lp->down) {
        snprintf(err, errlen, "no direction to load: give --up, --down or neither (both)");
        return -EINVAL;
    }
    if (lp->loaded_ns < PARAMS_MIN_INTERVAL_NS || total > PARAMS_MAX_DURATION_NS) {
        snprintf(err, errlen, "the loaded phase (-t) must last 0.1s to 86400s in all");
        return -EINVAL;
    }
    if (lp->probe_rate &&
        (lp->baseline_ns < PARAMS_MIN_INTERVAL_NS || lp->recovery_ns < PARAMS_MIN_INTERVAL_NS)) {
        snprintf(err, errlen,
                 "--baseline and --recovery must last at least 0.1s: latency under load is "
                 "judged against the idle baseline");
        return -EINVAL;
    }
    if (lp->probe_rate > LOAD_MAX_PROBE_TPS) {
        snprintf(err, errlen, "--probe-rate %llu is too high: use 0 (no probes) to %d a second",
                 (unsigned long long)lp->probe_rate, LOAD_MAX_PROBE_TPS);
        return -EINVAL;
    }
    if (lp->icmp && !lp->probe_rate) {
        snprintf(err, errlen,
                 "--icmp pings at --probe-rate, which is 0: give a rate or drop --icmp");
        return -EINVAL;
    }
    return 0;
}

/* The TCP probe's socket buffers: a quarter second of probes (16 KiB to 1 MiB). Probes a path
 * cannot carry then wait in netrig (their latency grows) instead of piling up in the kernel,
 * where the end of the run would have to drain them. */
static uint32_t probe_window(uint64_t rate)
{
    uint64_t w = rate * LOAD_PROBE_SIZE / 4;

    return (uint32_t)(w < 16384 ? 16384 : w > 1048576 ? 1048576 : w);
}

/* The options of one part: a probe for the whole run, or the load in one direction. */
static void part_opts(const struct load_opts *o, enum load_part part, struct client_opts *co)
{
    const struct load_params *lp = &o->lp;
    struct params *p = &co->p;

    *co = o->base;
    co->observer =
        (struct run_observer){.on_queued = o->base.observer.on_queued, .ctx = o->base.observer.ctx};
    params_defaults(p);
    snprintf(p->title, sizeof(p->title), "%s", lp->title);
    if (part == LOAD_UDP_PROBE || part == LOAD_TCP_PROBE) {
        test_kind_apply(test_kind_at(part == LOAD_UDP_PROBE ? TEST_KIND_RR_UDP : TEST_KIND_RR), p);
        p->nodelay = true; /* no probe waits for the previous one's ACK */
        p->req_size = p->resp_size = LOAD_PROBE_SIZE;
        p->rate_tps = lp->probe_rate;
        p->duration_ns = lp->baseline_ns + lp->loaded_ns + lp->recovery_ns;
        p->probe = true;
        if (part == LOAD_UDP_PROBE && dsclass_count(lp->classes)) {
            /* one flow per class, each at the probe rate */
            p->classes = lp->classes;
            p->flows = dsclass_count(lp->classes);
            p->rate_tps = lp->probe_rate * p->flows;
        }
        if (part == LOAD_TCP_PROBE) {
            p->txn_timeout_ns = LOAD_TCP_PROBE_TIMEOUT_NS;
            p->window = probe_window(lp->probe_rate);
        }
        return;
    }
    p->flows = dsclass_count(lp->classes) ? dsclass_count(lp->classes) : lp->flows;
    p->classes = lp->classes;
    p->threads = lp->threads;
    p->dir = part == LOAD_UP ? PARAMS_DIR_FORWARD : PARAMS_DIR_REVERSE;
    p->duration_ns = lp->loaded_ns;
    p->window = lp->window;
    p->sample_ns = lp->sample_ns;
    snprintf(p->congestion, sizeof(p->congestion), "%s", lp->congestion);
}

struct part_run {
    const struct load_opts *o;
    struct load_result *lr;
    enum load_part part;
    _Atomic int *stop;
    struct client_session *s; /* prepared (probes: before the threads start) */
    uint64_t prepare_at;      /* CLOCK_REALTIME: connect then (the load), 0: prepared */
    uint64_t start_at;        /* CLOCK_REALTIME: start then */
    int rc;
    atomic_bool done; /* part_main returned (rc is final) */
};

/* Sleeps until CLOCK_REALTIME reaches at_ns, or the stop flag is raised. */
static void sleep_until(uint64_t at_ns, _Atomic int *stop)
{
    uint64_t now;

    while (!(stop && *stop) && (now = clock_real_ns()) < at_ns) {
        uint64_t left = at_ns - now;
        struct timespec ts = {0, (long)(left < 50000000ULL ? left : 50000000ULL)};
        nanosleep(&ts, NULL);
    }
}

static int prepare(struct part_run *pr)
{
    struct client_opts co;
    char *err = pr->lr->part_error[pr->part];

    part_opts(pr->o, pr->part, &co);
    pr->rc = client_prepare(&co, &pr->lr->part[pr->part], &pr->s, err, 256);
    return pr->rc;
}

static void part_body(struct part_run *pr)
{
    char *err = pr->lr->part_error[pr->part];
    int64_t offset = 0;
    uint64_t rtt;

    if (pr->prepare_at) {
        sleep_until(pr->prepare_at, pr->stop);
        if (pr->stop && *pr->stop) {
            pr->rc = -EINTR;
            snprintf(err, 256, "interrupted before it started");
            return;
        }
        if (prepare(pr))
            return;
    }
    if (client_clock_offset(pr->s, &offset, &rtt))
        offset = 0; /* an old daemon: it starts when the start message arrives */
    pr->rc = client_go(pr->s, pr->stop, pr->start_at, offset, err, 256);
}

static void *part_main(void *arg)
{
    struct part_run *pr = arg;

    part_body(pr);
    atomic_store(&pr->done, true);
    return NULL;
}

static void stamp(struct load_result *lr)
{
    time_t now = time(NULL);
    struct tm tm;

    gmtime_r(&now, &tm);
    strftime(lr->started_at, sizeof(lr->started_at), "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The probes connect first; with neither able to, nothing runs. */
static int prepare_probes(struct part_run *run, struct load_result *lr, char *err, size_t errlen)
{
    int ready = 0;

    for (int p = LOAD_UDP_PROBE; p <= LOAD_TCP_PROBE; p++) {
        if (!lr->wanted[p])
            continue;
        if (prepare(&run[p]) == 0)
            ready++;
        else if (run[p].rc == -ECONNREFUSED || run[p].rc == -ETIMEDOUT ||
                 run[p].rc == -EHOSTUNREACH || run[p].rc == -ENETUNREACH)
            break; /* the daemon is not there: the second would fail the same way */
    }
    if (!ready && (lr->wanted[LOAD_UDP_PROBE] || lr->wanted[LOAD_TCP_PROBE])) {
        snprintf(err, errlen, "%s",
                 lr->part_error[lr->wanted[LOAD_UDP_PROBE] ? LOAD_UDP_PROBE : LOAD_TCP_PROBE]);
        return run[LOAD_UDP_PROBE].rc ? run[LOAD_UDP_PROBE].rc : -EPROTO;
    }
    return 0;
}

/* Times on the probes' clock: each part's start since the first probe started. */
static void offsets(struct load_result *lr)
{
    uint64_t origin = UINT64_MAX;

    for (int p = LOAD_UDP_PROBE; p <= LOAD_TCP_PROBE; p++)
        if (lr->ran[p] && lr->part[p].local.start_mono_ns &&
            lr->part[p].local.start_mono_ns < origin)
            origin = lr->part[p].local.start_mono_ns;
    if (origin == UINT64_MAX) /* no probes: the load starts after the planned baseline */
        for (int p = LOAD_UP; p <= LOAD_DOWN; p++)
            if (lr->ran[p] && lr->part[p].local.start_mono_ns &&
                lr->part[p].local.start_mono_ns - lr->lp.baseline_ns < origin)
                origin = lr->part[p].local.start_mono_ns - lr->lp.baseline_ns;
    for (int p = 0; p < LOAD_NPARTS; p++) {
        if (!lr->ran[p] || !lr->part[p].local.start_mono_ns || origin == UINT64_MAX)
            continue;
        lr->part_off_ns[p] = (int64_t)(lr->part[p].local.start_mono_ns - origin);
        if (!lr->start_unix_ns) /* the same instant on the wall clock */
            lr->start_unix_ns = lr->part[p].start_unix_ns - (uint64_t)lr->part_off_ns[p];
    }
    if (lr->icmp_ran && origin != UINT64_MAX)
        lr->icmp_off_ns = (int64_t)lr->icmp_start_mono_ns - (int64_t)origin;
}

/* --icmp: the socket toward the daemon's host, before anything runs (a user's error: refused
 * here, with what to do). */
static int icmp_open(const struct load_opts *o, struct load_icmp *li, char *err, size_t errlen)
{
    struct sock_addr to;
    int rc = sock_resolve(o->base.host, o->base.port, o->base.family, &to, err, errlen);

    return rc ? rc : load_icmp_open(li, (struct sockaddr *)&to.ss, to.len, err, errlen);
}

/* The ICMP probe's records into the result. */
static void icmp_conclude(struct load_result *lr, struct load_icmp *li, bool started)
{
    if (!started)
        return;
    lr->icmp_ran = li->rc == 0 && li->start_mono_ns;
    snprintf(lr->icmp_kind, sizeof(lr->icmp_kind), "%s", pingsock_kind(&li->ps));
    snprintf(lr->icmp_error, sizeof(lr->icmp_error), "%s", li->err);
    lr->icmp_start_mono_ns = li->start_mono_ns;
    lr->icmp_sent = li->sent;
    lr->icmp_late = li->late;
    lr->icmp_log = li->log; /* handed over */
    memset(&li->log, 0, sizeof(li->log));
}

/* Which parts ran, and the run's overall state. */
static int conclude(struct load_result *lr, struct part_run *run)
{
    static const enum load_part order[LOAD_NPARTS] = {LOAD_UP, LOAD_DOWN, LOAD_UDP_PROBE,
                                                      LOAD_TCP_PROBE}; /* the load's error first */
    int worst = 0;

    for (int i = 0; i < LOAD_NPARTS; i++) {
        enum load_part p = order[i];
        if (!lr->wanted[p])
            continue;
        lr->ran[p] = run[p].rc >= 0;
        if (run[p].rc < 0 && strstr(lr->part_error[p], "server busy"))
            snprintf(lr->part_error[p] + strlen(lr->part_error[p]),
                     sizeof(lr->part_error[p]) - strlen(lr->part_error[p]),
                     " (netrig load runs %d tests at once: the daemon's --max-tests and "
                     "--max-client-tests must allow them)",
                     LOAD_NPARTS);
        if (run[p].rc > 0 && !lr->part_error[p][0]) {
            size_t n = strnlen(lr->part[p].error, sizeof(lr->part_error[p]) - 1);
            memcpy(lr->part_error[p], lr->part[p].error, n); /* (snprintf: a false -Wrestrict) */
            lr->part_error[p][n] = '\0';
        }
        if (run[p].rc != 0 && !lr->partial) {
            lr->partial = true;
            snprintf(lr->error, sizeof(lr->error), "the %s test %s: %s",
                     load_part_name((enum load_part)p),
                     run[p].rc < 0 ? "did not run" : "ended early", lr->part_error[p]);
        }
        if (run[p].rc != 0)
            worst = 1;
        if (!lr->server[0] && lr->part[p].server[0])
            snprintf(lr->server, sizeof(lr->server), "%s", lr->part[p].server);
    }
    return worst;
}

/* Until every part started is done: passes the user's stop on to the parts, and stops the
 * probes as soon as every load part has failed to run (refused, say), instead of probing an
 * idle path to the end of the recovery. */
static void watch(struct part_run *run, const bool *started, _Atomic int *stop, _Atomic int *halt)
{
    for (;;) {
        bool running = false, load_left = false, load_wanted = false;

        for (int p = 0; p < LOAD_NPARTS; p++) {
            bool done = !started[p] || atomic_load(&run[p].done);
            running |= !done;
            if (p >= LOAD_UP && run[p].lr->wanted[p]) {
                load_wanted = true;
                load_left |= !done || run[p].rc >= 0;
            }
        }
        if (!running)
            return;
        if (!*halt && !(stop && *stop) && load_wanted && !load_left && running)
            run[0].lr->probes_cut = true;
        if ((stop && *stop) || (load_wanted && !load_left))
            *halt = 1;
        struct timespec ts = {0, 20000000L};
        nanosleep(&ts, NULL);
    }
}

int load_run(const struct load_opts *o, _Atomic int *stop, struct load_result *lr, char *err,
             size_t errlen)
{
    struct part_run run[LOAD_NPARTS] = {0};
    pthread_t th[LOAD_NPARTS];
    bool started[LOAD_NPARTS] = {0};
    _Atomic int halt = 0; /* the parts' stop flag: the user's, or no load could run */
    uint64_t t0, load_at;
    struct load_icmp icmp = {.ps = {.fd = -1}};
    pthread_t icmp_th;
    bool icmp_started = false;
    int rc;

    memset(lr, 0, sizeof(*lr));
    lr->lp = o->lp;
    lr->wanted[LOAD_UDP_PROBE] = lr->wanted[LOAD_TCP_PROBE] = o->lp.probe_rate > 0;
    lr->wanted[LOAD_UP] = o->lp.up;
    lr->wanted[LOAD_DOWN] = o->lp.down;
    stamp(lr);
    for (int p = 0; p < LOAD_NPARTS; p++)
        run[p] = (struct part_run){.o = o, .lr = lr, .part = (enum load_part)p, .stop = &halt};
    if (o->lp.icmp && (rc = icmp_open(o, &icmp, err, errlen)))
        goto out;
    rc = prepare_probes(run, lr, err, errlen);
    if (rc)
        goto out;
    t0 = clock_real_ns() + LOAD_START_MARGIN_NS;
    load_at = t0 + o->lp.baseline_ns;
    if (o->lp.icmp) {
        icmp.rate = o->lp.probe_rate;
        icmp.start_at = t0;
        /* until the daemon's probes end (finish), which the load's set-up makes later than
         * the plan: the plan and a minute more at most */
        icmp.duration_ns =
            o->lp.baseline_ns + o->lp.loaded_ns + o->lp.recovery_ns + 60 * 1000000000ULL;
        icmp.stop = &halt;
        icmp_started = !pthread_create(&icmp_th, NULL, load_icmp_main, &icmp);
        if (!icmp_started)
            snprintf(lr->icmp_error, sizeof(lr->icmp_error), "cannot start a thread");
    }
    for (int p = 0; p < LOAD_NPARTS; p++) {
        if (!lr->wanted[p] || (p <= LOAD_TCP_PROBE && !run[p].s))
            continue;
        run[p].start_at = p <= LOAD_TCP_PROBE ? t0 : load_at;
        if (p >= LOAD_UP)
            run[p].prepare_at =
                load_at - (o->lp.baseline_ns < 2 * LOAD_PREPARE_LEAD_NS ? o->lp.baseline_ns / 2
                                                                        : LOAD_PREPARE_LEAD_NS);
        if (pthread_create(&th[p], NULL, part_main, &run[p])) {
            run[p].rc = -EAGAIN;
            snprintf(lr->part_error[p], sizeof(lr->part_error[p]), "cannot start a thread");
            continue;
        }
        started[p] = true;
    }
    watch(run, started, stop, &halt);
    if (icmp_started) { /* the daemon's probes have ended: so does this one, replies waited for */
        atomic_store(&icmp.finish, true);
        pthread_join(icmp_th, NULL);
    }
    for (int p = 0; p < LOAD_NPARTS; p++)
        if (started[p])
            pthread_join(th[p], NULL);
    icmp_conclude(lr, &icmp, icmp_started);
    rc = conclude(lr, run);
    if (load_split_classes(lr) && !lr->partial) {
        lr->partial = true;
        snprintf(lr->error, sizeof(lr->error), "out of memory for the classes' probes");
        rc = 1;
    }
    offsets(lr);
    load_check_kernel(&lr->kernel);
    load_analyze(lr);
out:
    load_icmp_fini(&icmp);
    for (int p = 0; p < LOAD_NPARTS; p++)
        client_session_free(run[p].s);
    return rc;
}

void load_check_kernel(struct load_kernel *k)
{
    char a[160], b[160], c[160];

    k->fq_codel = qdiscprobe_kind("fq_codel", a, sizeof(a));
    k->cake = qdiscprobe_kind("cake", b, sizeof(b));
    k->fq = qdiscprobe_kind("fq", c, sizeof(c));
    if (k->fq_codel < 0)
        snprintf(k->how, sizeof(k->how), "%s", a);
    else
        snprintf(k->how, sizeof(k->how),
                 "fq_codel, cake and fq tried in a scratch network namespace: %s%s%s%s%s%s",
                 k->fq_codel ? "fq_codel known" : "no fq_codel", ", ",
                 k->cake        ? "cake known"
                 : k->cake == 0 ? "no cake"
                                : "cake unknown",
                 ", ",
                 k->fq        ? "fq known"
                 : k->fq == 0 ? "no fq"
                              : "fq unknown",
                 "");
}
