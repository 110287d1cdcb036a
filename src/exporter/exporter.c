/* exporter: the scheduler of 'netrig exporter' and the exposition of its results. */
#include "exporter.h"
#include "clock.h"

#include "client.h"
#include "log.h"
#include "test_kind.h"
#include "units.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const reason_names[EXPORTER_REASONS] = {
    "resolve", "refused", "timeout", "unreachable", "busy", "auth", "rejected", "partial", "error",
};

/* What one target's probes have shown. Scrapes read a copy. */
struct probe {
    uint64_t runs, failures[EXPORTER_REASONS];
    bool ran, success, running, have; /* have: a successful run's figures below */
    int reason;                       /* of the last run when it failed */
    double last_run_at, last_success_at, wall_s;
    /* the last successful run */
    double seconds, bytes, bytes_per_s, retransmits, tps, lat_s[3], loss_ratio, jitter_s;
    double cpu_local, cpu_remote;
    bool cpu_local_valid, cpu_remote_valid;
};

struct exporter {
    const struct exporter_config *c;
    uint64_t next[EXPORTER_MAX_TARGETS]; /* the scheduler's own: monotonic due times */
    pthread_mutex_t lock;                /* guards probes */
    struct probe probes[EXPORTER_MAX_TARGETS];
};

const char *exporter_reason_name(enum exporter_reason r)
{
    return r < EXPORTER_REASONS ? reason_names[r] : "error";
}

enum exporter_reason exporter_classify(int rc, const char *err)
{
    if (rc == 1)
        return EXPORTER_PARTIAL;
    if (!strncmp(err, "cannot resolve", 14))
        return EXPORTER_RESOLVE;
    if (strstr(err, "auth") || strstr(err, "secret") || strstr(err, "credentials"))
        return EXPORTER_AUTH;
    if (strstr(err, "server refused the test"))
        return strstr(err, "busy") ? EXPORTER_BUSY : EXPORTER_REJECTED;
    switch (-rc) {
    case ECONNREFUSED: return EXPORTER_REFUSED;
    case ETIMEDOUT: return EXPORTER_TIMEOUT;
    case EHOSTUNREACH:
    case ENETUNREACH:
    case EHOSTDOWN:
    case ENETDOWN: return EXPORTER_UNREACHABLE;
    default: return EXPORTER_ERROR;
    }
}

struct exporter *exporter_create(const struct exporter_config *c)
{
    struct exporter *x = calloc(1, sizeof(*x));

    if (!x)
        return NULL;
    x->c = c;
    pthread_mutex_init(&x->lock, NULL);
    return x;
}

void exporter_destroy(struct exporter *x)
{
    if (!x)
        return;
    pthread_mutex_destroy(&x->lock);
    free(x);
}

/* A successful run's figures into pr (called with the lock held). */
static void keep_figures(struct probe *pr, const struct run_result *r)
{
    const struct run_summary *s = &r->summary;

    pr->have = true;
    pr->seconds = r->local.seconds;
    pr->bytes = (double)s->bytes;
    pr->bytes_per_s = s->throughput_bps / 8;
    pr->retransmits = s->retransmits;
    pr->tps = s->transactions_per_s;
    pr->lat_s[0] = s->latency.p50_us / 1e6;
    pr->lat_s[1] = s->latency.p90_us / 1e6;
    pr->lat_s[2] = s->latency.p99_us / 1e6;
    pr->loss_ratio = s->u.loss_pct / 100;
    pr->jitter_s = s->u.jitter_us / 1e6;
    pr->cpu_local_valid = r->local.cpu.valid;
    pr->cpu_local = r->local.cpu.busy_pct / 100;
    pr->cpu_remote_valid = r->remote.cpu.valid;
    pr->cpu_remote = r->remote.cpu.busy_pct / 100;
}

static void log_run(const struct exporter_target *t, int rc, const char *err,
                    const struct run_result *r)
{
    char rate[32];

    if (rc) {
        LOG_WARN("target %s: %s probe failed (%s): %s", t->name, params_test_name(t->o.p.test),
                 exporter_reason_name(exporter_classify(rc, err)), rc > 0 ? r->error : err);
    } else if (params_is_transactional(&t->o.p)) {
        LOG_INFO("target %s: %s %.0f transactions/s, p99 %.1f us", t->name,
                 params_test_name(t->o.p.test), r->summary.transactions_per_s,
                 r->summary.latency.p99_us);
    } else {
        units_format_rate(r->summary.throughput_bps, rate, sizeof(rate));
        LOG_INFO("target %s: stream%s %s, %u retransmits", t->name, test_kind_of(&t->o.p)->label,
                 rate, r->summary.retransmits);
    }
}

static void probe(struct exporter *x, uint32_t i, _Atomic int *stop)
{
    const struct exporter_target *t = &x->c->t[i];
    struct client_opts o = t->o;
    struct probe *pr = &x->probes[i];
    struct run_result r;
    char err[512] = "";
    uint64_t t0 = clock_mono_ns();
    int rc;

    pthread_mutex_lock(&x->lock);
    pr->running = true;
    pthread_mutex_unlock(&x->lock);
    rc = client_run(&o, stop, &r, err, sizeof(err));
    pthread_mutex_lock(&x->lock);
    pr->running = false;
    if (!*stop) { /* a run cut short by our own shutdown says nothing about the target */
        pr->runs++;
        pr->ran = true;
        pr->success = rc == 0;
        pr->last_run_at = clock_real_s();
        pr->wall_s = (double)(clock_mono_ns() - t0) / 1e9;
        if (rc) {
            pr->reason = exporter_classify(rc, err);
            pr->failures[pr->reason]++;
        } else {
            pr->last_success_at = pr->last_run_at;
            keep_figures(pr, &r);
        }
    }
    pthread_mutex_unlock(&x->lock);
    if (!*stop)
        log_run(t, rc, err, &r);
    result_fini(&r);
}

void exporter_run(struct exporter *x, _Atomic int *stop)
{
    uint64_t start = clock_mono_ns();

    for (uint32_t i = 0; i < x->c->ntargets; i++)
        x->next[i] = start;
    while (!*stop && !x->c->ntargets) { /* /probe only: nothing scheduled */
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 100000000L};
        nanosleep(&ts, NULL);
    }
    while (!*stop) {
        uint32_t due = 0;
        uint64_t now = clock_mono_ns(), t0;

        for (uint32_t i = 1; i < x->c->ntargets; i++)
            if (x->next[i] < x->next[due])
                due = i;
        if (x->next[due] > now) {
            uint64_t wait = x->next[due] - now;
            struct timespec ts = {.tv_sec = 0,
                                  .tv_nsec = (long)(wait < 100000000ULL ? wait : 100000000ULL)};
            nanosleep(&ts, NULL);
            continue;
        }
        t0 = clock_mono_ns();
        probe(x, due, stop);
        x->next[due] = t0 + x->c->t[due].interval_ns;
    }
}

/* ---- exposition ---- */

static void labels_of(const struct exporter_target *t, char *buf, size_t len)
{
    char name[2 * EXPORTER_NAME_LEN];

    prom_escape(t->name, name, sizeof(name));
    snprintf(buf, len, "target=\"%s\",test=\"%s\",protocol=\"%s\"", name,
             params_test_name(t->o.p.test), test_kind_protocol(test_kind_of(&t->o.p)));
}

/* One gauge or counter family with a sample per target, from a field of struct probe;
 * want() picks the targets that have the figure. */
static void family(struct prom_buf *b, const struct exporter *x, const struct probe *pr,
                   const char *name, const char *type, const char *help,
                   double (*get)(const struct probe *),
                   bool (*want)(const struct probe *, const struct params *))
{
    char labels[256];

    prom_family(b, name, type, help);
    for (uint32_t i = 0; i < x->c->ntargets; i++) {
        if (want && !want(&pr[i], &x->c->t[i].o.p))
            continue;
        labels_of(&x->c->t[i], labels, sizeof(labels));
        prom_sample(b, name, labels, get(&pr[i]));
    }
}

static double g_running(const struct probe *p) { return p->running; }
static double g_runs(const struct probe *p) { return (double)p->runs; }
static double g_success(const struct probe *p) { return p->ran && p->success; }
static double g_last_run(const struct probe *p) { return p->last_run_at; }
static double g_last_success(const struct probe *p) { return p->last_success_at; }
static double g_wall(const struct probe *p) { return p->wall_s; }
static double g_seconds(const struct probe *p) { return p->seconds; }
static double g_bytes(const struct probe *p) { return p->bytes; }
static double g_rate(const struct probe *p) { return p->bytes_per_s; }
static double g_retr(const struct probe *p) { return p->retransmits; }
static double g_tps(const struct probe *p) { return p->tps; }
static double g_loss(const struct probe *p) { return p->loss_ratio; }
static double g_jitter(const struct probe *p) { return p->jitter_s; }

static bool w_have(const struct probe *p, const struct params *q)
{
    (void)q;
    return p->have;
}
static bool w_stream(const struct probe *p, const struct params *q)
{
    return p->have && test_kind_is(q, TEST_KIND_BULK);
}
static bool w_txn(const struct probe *p, const struct params *q)
{
    return p->have && test_kind_is(q, TEST_KIND_TXN);
}
static bool w_udp(const struct probe *p, const struct params *q)
{
    return p->have && test_kind_is(q, TEST_KIND_DATAGRAMS);
}

/* Families with a second label: the failure reasons, latency quantiles, CPU ends. */
static void render_labelled(struct prom_buf *b, const struct exporter *x, const struct probe *pr)
{
    static const char *const quantile[3] = {"0.5", "0.9", "0.99"};
    char labels[256], more[320];

    prom_family(b, "netrig_probe_failures_total", "counter", "Probes that failed, by reason.");
    prom_family(b, "netrig_probe_failed", "gauge",
                "1 for the reason the last probe failed, else 0 (all 0 after a success).");
    for (uint32_t i = 0; i < x->c->ntargets; i++) {
        labels_of(&x->c->t[i], labels, sizeof(labels));
        for (int r = 0; r < EXPORTER_REASONS; r++) {
            snprintf(more, sizeof(more), "%s,reason=\"%s\"", labels, reason_names[r]);
            prom_sample(b, "netrig_probe_failures_total", more, (double)pr[i].failures[r]);
            prom_sample(b, "netrig_probe_failed", more,
                        pr[i].ran && !pr[i].success && pr[i].reason == r);
        }
    }
    prom_family(b, "netrig_probe_latency_seconds", "gauge",
                "Transaction latency quantiles of the last successful rr/crr probe.");
    for (uint32_t i = 0; i < x->c->ntargets; i++) {
        if (!w_txn(&pr[i], &x->c->t[i].o.p))
            continue;
        labels_of(&x->c->t[i], labels, sizeof(labels));
        for (int q = 0; q < 3; q++) {
            snprintf(more, sizeof(more), "%s,quantile=\"%s\"", labels, quantile[q]);
            prom_sample(b, "netrig_probe_latency_seconds", more, pr[i].lat_s[q]);
        }
    }
    prom_family(b, "netrig_probe_cpu_busy_ratio", "gauge",
                "Busy share of all CPUs during the last successful probe, by end.");
    for (uint32_t i = 0; i < x->c->ntargets; i++) {
        if (!pr[i].have)
            continue;
        labels_of(&x->c->t[i], labels, sizeof(labels));
        snprintf(more, sizeof(more), "%s,end=\"local\"", labels);
        if (pr[i].cpu_local_valid)
            prom_sample(b, "netrig_probe_cpu_busy_ratio", more, pr[i].cpu_local);
        snprintf(more, sizeof(more), "%s,end=\"remote\"", labels);
        if (pr[i].cpu_remote_valid)
            prom_sample(b, "netrig_probe_cpu_busy_ratio", more, pr[i].cpu_remote);
    }
}

void exporter_render(void *ctx, struct prom_buf *b)
{
    struct exporter *x = ctx;
    struct probe *pr = malloc(sizeof(x->probes)); /* a copy: the scheduler never waits on us */

    if (!pr) {
        b->oom = true;
        return;
    }
    pthread_mutex_lock(&x->lock);
    memcpy(pr, x->probes, sizeof(x->probes));
    pthread_mutex_unlock(&x->lock);
    prom_family(b, "netrig_exporter_build_info", "gauge", "netrig's version (always 1).");
    prom_sample(b, "netrig_exporter_build_info", "version=\"" NETRIG_VERSION "\"", 1);
    prom_family(b, "netrig_exporter_targets", "gauge", "Targets in the configuration.");
    prom_sample(b, "netrig_exporter_targets", NULL, x->c->ntargets);
    family(b, x, pr, "netrig_probe_running", "gauge", "1 while the target's test runs.", g_running,
           NULL);
    family(b, x, pr, "netrig_probe_runs_total", "counter", "Probes run (ended or failed).", g_runs,
           NULL);
    family(b, x, pr, "netrig_probe_success", "gauge",
           "1 when the last probe completed, 0 when it failed or none has ended yet.", g_success,
           NULL);
    family(b, x, pr, "netrig_probe_last_run_timestamp_seconds", "gauge",
           "When the last probe ended (Unix time; 0 = never).", g_last_run, NULL);
    family(b, x, pr, "netrig_probe_last_success_timestamp_seconds", "gauge",
           "When the last successful probe ended (Unix time; 0 = never).", g_last_success, NULL);
    family(b, x, pr, "netrig_probe_duration_seconds", "gauge",
           "Wall time of the last probe, set-up included.", g_wall, NULL);
    render_labelled(b, x, pr);
    family(b, x, pr, "netrig_probe_measured_seconds", "gauge",
           "Measured time of the last successful probe.", g_seconds, w_have);
    family(b, x, pr, "netrig_probe_bytes", "gauge", "Bytes received in the last successful probe.",
           g_bytes, w_have);
    family(b, x, pr, "netrig_probe_throughput_bytes_per_second", "gauge",
           "Throughput of the last successful stream probe (receivers' view).", g_rate, w_stream);
    family(b, x, pr, "netrig_probe_retransmits", "gauge",
           "TCP retransmits in the last successful probe.", g_retr, w_have);
    family(b, x, pr, "netrig_probe_transactions_per_second", "gauge",
           "Transactions per second of the last successful rr/crr probe.", g_tps, w_txn);
    family(b, x, pr, "netrig_probe_loss_ratio", "gauge",
           "Datagrams lost in the last successful UDP stream probe (0 to 1).", g_loss, w_udp);
    family(b, x, pr, "netrig_probe_jitter_seconds", "gauge",
           "Jitter (RFC 3550) of the last successful UDP stream probe.", g_jitter, w_udp);
    free(pr);
}
