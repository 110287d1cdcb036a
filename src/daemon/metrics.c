/* metrics: the daemon's counters and their Prometheus exposition. */
#include "metrics.h"
#include "cgcpu.h"
#include "clock.h"
#include "cpu.h"

#include "sock.h"
#include "test_kind.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The metrics count tests by the kind's slot (test_kind.h): (test, protocol). */
#define KINDS TEST_KIND_SLOTS

static const char *const refusal_name[METRICS_REFUSED_N] = {"busy", "limit", "auth_failed",
                                                            "bad_request", "acl"};
static const char *const stage_name[METRICS_STAGE_N] = {"connect", "hello", "setup", "run"};

/* The last test of one kind from one client. */
struct kind_last {
    bool set;
    double at, bytes, seconds, retransmits, transactions;
    bool complete;
};

/* A client address and its last test of each kind: a test of one kind never hides the
 * series of another. */
struct client_last {
    char client[64]; /* "" = free slot */
    uint64_t seq;    /* larger = more recent (its latest test of any kind) */
    struct kind_last k[KINDS];
};

struct metrics_state {
    double started_at;
    uint64_t running[KINDS], served[KINDS], partial[KINDS], flows[KINDS];
    double bytes_rx[KINDS], bytes_tx[KINDS], seconds[KINDS];
    uint64_t refused[METRICS_REFUSED_N];
    uint64_t ctl_errors[METRICS_STAGE_N];
    uint64_t seq;
    struct client_last clients[METRICS_MAX_CLIENTS];
};

struct metrics {
    pthread_mutex_t lock;
    struct metrics_state s;
};

static int kind_of(const struct params *p) { return (int)test_kind_of(p)->slot; }

struct metrics *metrics_create(void)
{
    struct metrics *m = calloc(1, sizeof(*m));

    if (!m)
        return NULL;
    pthread_mutex_init(&m->lock, NULL);
    m->s.started_at = clock_real_s();
    return m;
}

void metrics_destroy(struct metrics *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->lock);
    free(m);
}

void metrics_test_started(struct metrics *m, const struct params *p)
{
    if (!m)
        return;
    pthread_mutex_lock(&m->lock);
    m->s.running[kind_of(p)]++;
    pthread_mutex_unlock(&m->lock);
}

/* The slot for this client: its own, a free one, or the least recently used. */
static struct client_last *client_slot(struct metrics_state *s, const char *client)
{
    struct client_last *oldest = &s->clients[0];

    for (int i = 0; i < METRICS_MAX_CLIENTS; i++) {
        struct client_last *c = &s->clients[i];
        if (!strcmp(c->client, client))
            return c;
        if (!c->client[0] || (oldest->client[0] && c->seq < oldest->seq))
            oldest = c;
    }
    return oldest;
}

/* What the server's side of a test moved. rr and crr servers read requests (their flows'
 * bytes) and write one response per request answered; their flows do not time the last byte,
 * so the measured period is the side's. */
struct side_figures {
    double rx, tx, secs, retr, txns;
};

static void side_figures(const struct params *p, const struct side_result *side,
                         struct side_figures *f)
{
    *f = (struct side_figures){0};
    for (uint32_t i = 0; i < side->nflows; i++) {
        const struct side_flow *sf = &side->flows[i];
        if (sf->sender) {
            f->tx += (double)sf->bytes;
            f->retr += sf->ti.valid ? sf->ti.total_retrans : 0;
        } else {
            f->rx += (double)sf->bytes;
        }
        f->txns += (double)sf->txns;
        if (sf->seconds > f->secs)
            f->secs = sf->seconds;
    }
    if (params_is_transactional(p)) {
        if (!p->connect_only)
            f->tx += f->txns * (double)p->resp_size;
        f->secs = side->seconds;
    } else if (f->secs <= 0) {
        f->secs = side->seconds;
    }
}

void metrics_test_done(struct metrics *m, const struct params *p, const struct sockaddr *peer,
                       const struct side_result *side, bool complete)
{
    struct side_figures f;
    char host[64] = "?";
    int k = kind_of(p);

    if (!m)
        return;
    side_figures(p, side, &f);
    if (peer)
        sock_addr_host(peer, host, sizeof(host));
    pthread_mutex_lock(&m->lock);
    struct metrics_state *s = &m->s;
    if (s->running[k])
        s->running[k]--;
    s->served[k]++;
    s->partial[k] += !complete;
    s->flows[k] += side->nflows;
    s->bytes_rx[k] += f.rx;
    s->bytes_tx[k] += f.tx;
    s->seconds[k] += f.secs;
    struct client_last *c = client_slot(s, host);
    if (strcmp(c->client, host)) { /* a new client in this slot: forget the old one's */
        memset(c, 0, sizeof(*c));
        snprintf(c->client, sizeof(c->client), "%s", host);
    }
    c->seq = ++s->seq;
    c->k[k] = (struct kind_last){.set = true,
                                 .at = clock_real_s(),
                                 .bytes = f.rx + f.tx,
                                 .seconds = f.secs,
                                 .retransmits = f.retr,
                                 .transactions = f.txns,
                                 .complete = complete};
    pthread_mutex_unlock(&m->lock);
}

void metrics_refused(struct metrics *m, enum metrics_refusal why)
{
    if (!m || why >= METRICS_REFUSED_N)
        return;
    pthread_mutex_lock(&m->lock);
    m->s.refused[why]++;
    pthread_mutex_unlock(&m->lock);
}

void metrics_control_error(struct metrics *m, enum metrics_stage stage)
{
    if (!m || stage >= METRICS_STAGE_N)
        return;
    pthread_mutex_lock(&m->lock);
    m->s.ctl_errors[stage]++;
    pthread_mutex_unlock(&m->lock);
}

/* One family with a sample per kind of test. */
static void per_kind(struct prom_buf *b, const char *name, const char *type, const char *help,
                     const double *v)
{
    char labels[64];
    const char *test, *proto;

    prom_family(b, name, type, help);
    for (int k = 0; k < KINDS; k++) {
        if (!test_kind_slot((unsigned)k, &test, &proto))
            continue;
        snprintf(labels, sizeof(labels), "test=\"%s\",protocol=\"%s\"", test, proto);
        prom_sample(b, name, labels, v[k]);
    }
}

static void render_kinds(struct prom_buf *b, const struct metrics_state *s)
{
    double v[KINDS];
    char labels[80];
    const char *test, *proto;

#define KIND_FAMILY(name, type, help, expr)                                                        \
    do {                                                                                           \
        for (int k = 0; k < KINDS; k++)                                                            \
            v[k] = (double)(expr);                                                                 \
        per_kind(b, name, type, help, v);                                                          \
    } while (0)
    KIND_FAMILY("netrig_tests_running", "gauge", "Tests running now.", s->running[k]);
    KIND_FAMILY("netrig_tests_served_total", "counter",
                "Tests served (run to their end or "
                "stopped early).",
                s->served[k]);
    KIND_FAMILY("netrig_tests_partial_total", "counter",
                "Tests that ended early (client gone, "
                "limit, shutdown).",
                s->partial[k]);
    KIND_FAMILY("netrig_served_flows_total", "counter", "Flows of the tests served.", s->flows[k]);
    KIND_FAMILY("netrig_served_seconds_total", "counter", "Measured time of the tests served.",
                s->seconds[k]);
#undef KIND_FAMILY
    prom_family(b, "netrig_served_bytes_total", "counter",
                "Bytes the daemon received and sent in tests (after warm-up).");
    for (int k = 0; k < KINDS; k++) {
        if (!test_kind_slot((unsigned)k, &test, &proto))
            continue;
        for (int dir = 0; dir < 2; dir++) {
            snprintf(labels, sizeof(labels), "test=\"%s\",protocol=\"%s\",direction=\"%s\"", test,
                     proto, dir ? "sent" : "received");
            prom_sample(b, "netrig_served_bytes_total", labels,
                        dir ? s->bytes_tx[k] : s->bytes_rx[k]);
        }
    }
}

/* The labels of one client's series of kind k. */
static void client_labels(const struct client_last *c, int k, char *labels, size_t len)
{
    char esc[140];
    const char *test, *proto;

    prom_escape(c->client, esc, sizeof(esc));
    test_kind_slot((unsigned)k, &test, &proto);
    snprintf(labels, len, "client=\"%s\",test=\"%s\",protocol=\"%s\"", esc, test, proto);
}

static void render_clients(struct prom_buf *b, const struct metrics_state *s)
{
    static const struct {
        const char *name, *help;
        size_t off;
    } fam[] = {
        {"netrig_client_last_test_timestamp_seconds", "When the client's last test ended.",
         offsetof(struct kind_last, at)},
        {"netrig_client_last_bytes", "Bytes the client's last test moved (both directions).",
         offsetof(struct kind_last, bytes)},
        {"netrig_client_last_duration_seconds", "Measured time of the client's last test.",
         offsetof(struct kind_last, seconds)},
        {"netrig_client_last_retransmits",
         "TCP retransmits of the daemon's sending flows in "
         "the client's last test.",
         offsetof(struct kind_last, retransmits)},
        {"netrig_client_last_transactions",
         "Transactions the daemon answered in the client's "
         "last rr/crr test.",
         offsetof(struct kind_last, transactions)},
    };
    char labels[200];

    for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
        prom_family(b, fam[f].name, "gauge", fam[f].help);
        for (int i = 0; i < METRICS_MAX_CLIENTS; i++) {
            const struct client_last *c = &s->clients[i];
            for (int k = 0; c->client[0] && k < KINDS; k++) {
                if (!c->k[k].set)
                    continue;
                client_labels(c, k, labels, sizeof(labels));
                prom_sample(b, fam[f].name, labels,
                            *(const double *)((const char *)&c->k[k] + fam[f].off));
            }
        }
    }
    for (int f = 0; f < 2; f++) { /* each family's samples together, as the format wants */
        prom_family(
            b, f ? "netrig_client_last_complete" : "netrig_client_last_throughput_bytes_per_second",
            "gauge",
            f ? "1 when the client's last test ran to its end, else 0."
              : "Bytes per second of the client's last test (both directions).");
        for (int i = 0; i < METRICS_MAX_CLIENTS; i++) {
            const struct client_last *c = &s->clients[i];
            for (int k = 0; c->client[0] && k < KINDS; k++) {
                const struct kind_last *l = &c->k[k];
                if (!l->set)
                    continue;
                client_labels(c, k, labels, sizeof(labels));
                if (f)
                    prom_sample(b, "netrig_client_last_complete", labels, l->complete);
                else
                    prom_sample(b, "netrig_client_last_throughput_bytes_per_second", labels,
                                l->seconds > 0 ? l->bytes / l->seconds : 0);
            }
        }
    }
}

/* The daemon's own CPU and its cgroup's, read at the scrape: what a pod's quota leaves it. */
static void render_cpu(struct prom_buf *b)
{
    struct cpu_proc_snap p;
    struct cgcpu_snap g;

    cpu_sample_process(&p);
    prom_family(b, "netrig_process_cpu_seconds_total", "counter",
                "CPU time of the netrig serve process (all its threads), by mode.");
    prom_sample(b, "netrig_process_cpu_seconds_total", "mode=\"user\"", (double)p.user_us / 1e6);
    prom_sample(b, "netrig_process_cpu_seconds_total", "mode=\"system\"", (double)p.sys_us / 1e6);
    if (cgcpu_sample(NULL, &g) || !g.version)
        return;
    prom_family(b, "netrig_cgroup_cpu_quota_cores", "gauge",
                "CPU quota of the daemon's cgroup, the tightest up to the root (0: none).");
    prom_sample(b, "netrig_cgroup_cpu_quota_cores", NULL, g.quota_cores);
    if (g.has_usage) {
        prom_family(b, "netrig_cgroup_cpu_usage_seconds_total", "counter",
                    "CPU time of every task in the daemon's cgroup.");
        prom_sample(b, "netrig_cgroup_cpu_usage_seconds_total", NULL, (double)g.usage_ns / 1e9);
    }
    if (g.has_throttle) {
        prom_family(b, "netrig_cgroup_cpu_periods_total", "counter",
                    "Scheduler periods of the daemon's cgroup's quota (cpu.stat nr_periods).");
        prom_sample(b, "netrig_cgroup_cpu_periods_total", NULL, (double)g.nr_periods);
        prom_family(b, "netrig_cgroup_cpu_throttled_periods_total", "counter",
                    "Periods in which the quota stopped the cgroup (cpu.stat nr_throttled).");
        prom_sample(b, "netrig_cgroup_cpu_throttled_periods_total", NULL, (double)g.nr_throttled);
        prom_family(b, "netrig_cgroup_cpu_throttled_seconds_total", "counter",
                    "Time the quota stopped the cgroup for (cpu.stat throttled time).");
        prom_sample(b, "netrig_cgroup_cpu_throttled_seconds_total", NULL,
                    (double)g.throttled_ns / 1e9);
    }
}

void metrics_render(void *ctx, struct prom_buf *b)
{
    struct metrics *m = ctx;
    struct metrics_state *s = malloc(sizeof(*s)); /* a copy: sessions never wait on a scrape */
    char labels[64];

    if (!s) {
        b->oom = true;
        return;
    }
    pthread_mutex_lock(&m->lock);
    *s = m->s;
    pthread_mutex_unlock(&m->lock);
    prom_family(b, "netrig_build_info", "gauge", "netrig's version (always 1).");
    prom_sample(b, "netrig_build_info", "version=\"" NETRIG_VERSION "\",role=\"serve\"", 1);
    prom_family(b, "netrig_start_time_seconds", "gauge", "When the daemon started (Unix time).");
    prom_sample(b, "netrig_start_time_seconds", NULL, s->started_at);
    render_kinds(b, s);
    prom_family(b, "netrig_refusals_total", "counter", "Test requests refused, by reason.");
    for (int i = 0; i < METRICS_REFUSED_N; i++) {
        snprintf(labels, sizeof(labels), "reason=\"%s\"", refusal_name[i]);
        prom_sample(b, "netrig_refusals_total", labels, (double)s->refused[i]);
    }
    prom_family(b, "netrig_control_errors_total", "counter",
                "Control connections that failed (timeout, hang-up, garbage), by stage.");
    for (int i = 0; i < METRICS_STAGE_N; i++) {
        snprintf(labels, sizeof(labels), "stage=\"%s\"", stage_name[i]);
        prom_sample(b, "netrig_control_errors_total", labels, (double)s->ctl_errors[i]);
    }
    render_clients(b, s);
    render_cpu(b);
    free(s);
}
