/* exporter_probe: /probe of 'netrig exporter': a test run when Prometheus scrapes. */
#include "exporter_probe.h"

#include "clock.h"
#include "exporter.h"
#include "exporter_config.h"
#include "log.h"
#include "params.h"
#include "test_kind.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_ARGS_MAX   16
#define PROBE_TEXT_MAX   4096
#define PROBE_HEADER     "X-Prometheus-Scrape-Timeout-Seconds"
#define PROBE_HEAD_LINES 5 /* the fixed lines before the query's keys in the parsed text */

/* The query's parameters beside target: each is the configuration file's key of that name. */
static const char *const probe_keys[] = {
    "test",      "module",  "protocol", "duration", "omit",       "parallel", "threads",
    "direction", "bitrate", "size",     "window",   "congestion", "user",
};
#define PROBE_NKEYS (sizeof(probe_keys) / sizeof(probe_keys[0]))

/* Reasons of this endpoint's own beside exporter_reason's. */
enum { PROBE_IN_PROGRESS = EXPORTER_REASONS, PROBE_LIMIT, PROBE_REASONS };

struct exporter_probes {
    pthread_mutex_t lock; /* guards running and busy */
    unsigned max, running;
    char busy[EXPORTER_PROBE_MAX][280]; /* "HOST PORT" of each probe running, "" = free */
    _Atomic int *stop;
};

static const char *reason_name(int r)
{
    if (r == PROBE_IN_PROGRESS)
        return "in_progress";
    if (r == PROBE_LIMIT)
        return "probe_limit";
    return exporter_reason_name((enum exporter_reason)r);
}

double exporter_probe_margin(double t) { return 0.5 + 0.1 * t; }

struct exporter_probes *exporter_probes_create(unsigned max, _Atomic int *stop)
{
    struct exporter_probes *p;

    if (max < 1 || max > EXPORTER_PROBE_MAX)
        return NULL;
    p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->max = max;
    p->stop = stop;
    pthread_mutex_init(&p->lock, NULL);
    return p;
}

void exporter_probes_destroy(struct exporter_probes *p)
{
    if (!p)
        return;
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* HOST, HOST:PORT, [V6] or [V6]:PORT (a bare V6 address has more than one ':'). */
int exporter_probe_split_target(const char *v, char *host, size_t hlen, char *port, size_t plen)
{
    const char *colon = strrchr(v, ':');
    size_t n;

    port[0] = '\0';
    if (v[0] == '[') {
        const char *end = strchr(v, ']');
        if (!end || (end[1] && end[1] != ':'))
            return -1;
        n = (size_t)(end - v - 1);
        if (end[1] == ':')
            snprintf(port, plen, "%s", end + 2);
        v++;
    } else if (colon && strchr(v, ':') == colon) {
        n = (size_t)(colon - v);
        snprintf(port, plen, "%s", colon + 1);
    } else {
        n = strlen(v);
    }
    if (!n || n >= hlen)
        return -1;
    memcpy(host, v, n);
    host[n] = '\0';
    return 0;
}

/* The query parameter a line of the parsed text came from: "PATH:LINE: ..." in err. */
static const char *param_of(const char *err, const char *const *lines, unsigned nlines)
{
    const char *c = strchr(err, ':');
    long line = c ? strtol(c + 1, NULL, 10) : 0;

    if (line > PROBE_HEAD_LINES && (unsigned)(line - PROBE_HEAD_LINES - 1) < nlines)
        return lines[line - PROBE_HEAD_LINES - 1];
    return "target";
}

/* The parser's "probe:LINE: target 'probe': msg" as "msg". */
static const char *message_of(const char *err)
{
    const char *m = strstr(err, ": ");

    m = m ? m + 2 : err;
    if (!strncmp(m, "target 'probe': ", 16))
        m += 16;
    return m;
}

static int check_value(const char *name, const char *v, char *err, size_t errlen)
{
    for (const char *s = v; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == '#' || *s == 0x7f) {
            snprintf(err, errlen, "bad parameter '%s': '%.60s' has a character not allowed", name,
                     v);
            return -1;
        }
    if (!*v) {
        snprintf(err, errlen, "bad parameter '%s': it has no value", name);
        return -1;
    }
    return 0;
}

/* Which of probe_keys name is (PROBE_NKEYS: none); "module" stands for "test". */
static unsigned key_index(const char *name)
{
    for (unsigned k = 0; k < PROBE_NKEYS; k++)
        if (!strcmp(name, probe_keys[k]))
            return k;
    return PROBE_NKEYS;
}

/* The query as the configuration file's text of one target, checked by its parser. */
static int parse_text(const char *const *names, const char *const *values, unsigned n,
                      const char *target, struct exporter_config *c, const char **lines,
                      unsigned *nlines, char *err, size_t errlen)
{
    char text[PROBE_TEXT_MAX], host[256], port[32], perr[512];
    size_t len;

    if (exporter_probe_split_target(target, host, sizeof(host), port, sizeof(port))) {
        snprintf(err, errlen,
                 "bad parameter 'target': '%.80s' is not HOST, HOST:PORT or [IPV6]:PORT", target);
        return -1;
    }
    len = (size_t)snprintf(text, sizeof(text),
                           "max_duration = 1h\nmin_interval = 1s\n[target probe]\nhost = %s\n"
                           "interval = 86400s\n",
                           host);
    *nlines = 0;
    if (port[0]) {
        len += (size_t)snprintf(text + len, sizeof(text) - len, "port = %s\n", port);
        lines[(*nlines)++] = "target";
    }
    for (unsigned i = 0; i < n && len < sizeof(text); i++) {
        const char *key = strcmp(names[i], "module") ? names[i] : "test";
        len += (size_t)snprintf(text + len, sizeof(text) - len, "%s = %s\n", key, values[i]);
        lines[(*nlines)++] = names[i];
    }
    if (len >= sizeof(text)) {
        snprintf(err, errlen, "the query is too long");
        return -1;
    }
    if (exporter_config_parse(text, "probe", c, perr, sizeof(perr))) {
        snprintf(err, errlen, "bad parameter '%s': %s", param_of(perr, lines, *nlines),
                 message_of(perr));
        return -1;
    }
    return 0;
}

/* The test's length within the scrape timeout: duration when given must fit, else all of it. */
static int fit_length(struct client_opts *o, bool have_duration, double timeout_s, char *err,
                      size_t errlen)
{
    double margin = exporter_probe_margin(timeout_s), budget = timeout_s - margin;
    double run = (double)(o->p.duration_ns + o->p.omit_ns) / 1e9;

    if (have_duration && run > budget + 1e-9) {
        snprintf(err, errlen,
                 "bad parameter 'duration': %gs (omit included) does not fit the scrape timeout "
                 "%gs less a margin of %gs: shorten it or raise scrape_timeout",
                 run, timeout_s, margin);
        return -1;
    }
    if (!have_duration) {
        double d = budget - (double)o->p.omit_ns / 1e9;
        if (d < 0.1) {
            snprintf(err, errlen,
                     "bad parameter 'omit': the scrape timeout %gs less a margin of %gs leaves "
                     "under 0.1s to measure: shorten omit or raise scrape_timeout",
                     timeout_s, margin);
            return -1;
        }
        o->p.duration_ns = (uint64_t)(d * 1e9);
    }
    o->timeout_ms = (int)(margin * 1000) < 1000 ? 1000 : (int)(margin * 1000);
    return 0;
}

int exporter_probe_parse(const char *const *names, const char *const *values, unsigned n,
                         double timeout_s, struct client_opts *o, char *err, size_t errlen)
{
    const char *target = NULL, *lines[PROBE_ARGS_MAX + 1];
    const char *kept_n[PROBE_ARGS_MAX], *kept_v[PROBE_ARGS_MAX];
    bool seen[PROBE_NKEYS] = {false}, have_duration = false;
    struct exporter_config *c;
    unsigned nk = 0, nlines;
    int rc;

    for (unsigned i = 0; i < n; i++) {
        unsigned k = key_index(names[i]);
        if (check_value(names[i], values[i], err, errlen))
            return -1;
        if (!strcmp(names[i], "target")) {
            if (target) {
                snprintf(err, errlen, "bad parameter 'target': given twice");
                return -1;
            }
            target = values[i];
            continue;
        }
        if (k == PROBE_NKEYS) {
            snprintf(err, errlen,
                     "unknown parameter '%.40s': use target, test (or module), protocol, "
                     "duration, omit, parallel, threads, direction, bitrate, size, window, "
                     "congestion or user",
                     names[i]);
            return -1;
        }
        if (seen[k] || (k <= 1 && (seen[0] || seen[1]))) {
            snprintf(err, errlen, "bad parameter '%s': given twice (module is test's other name)",
                     names[i]);
            return -1;
        }
        seen[k] = true;
        have_duration |= !strcmp(names[i], "duration");
        kept_n[nk] = names[i];
        kept_v[nk++] = values[i];
    }
    if (!target) {
        snprintf(err, errlen, "missing parameter 'target': give target=HOST[:PORT]");
        return -1;
    }
    if (timeout_s <= 0)
        timeout_s = EXPORTER_PROBE_DEFAULT_TIMEOUT_S;
    c = calloc(1, sizeof(*c));
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    rc = parse_text(kept_n, kept_v, nk, target, c, lines, &nlines, err, errlen);
    if (!rc) {
        *o = c->t[0].o;
        rc = fit_length(o, have_duration, timeout_s, err, errlen);
    }
    free(c);
    return rc;
}

/* ---- running one ---- */

/* Takes a slot for host/port: 0, or the reason it cannot run now. */
static int claim(struct exporter_probes *p, const char *key, unsigned *slot)
{
    int rc = PROBE_LIMIT;

    pthread_mutex_lock(&p->lock);
    for (unsigned i = 0; i < p->max; i++)
        if (!strcmp(p->busy[i], key)) {
            pthread_mutex_unlock(&p->lock);
            return PROBE_IN_PROGRESS;
        }
    for (unsigned i = 0; i < p->max && p->running < p->max; i++)
        if (!p->busy[i][0]) {
            snprintf(p->busy[i], sizeof(p->busy[i]), "%s", key);
            p->running++;
            *slot = i;
            rc = 0;
            break;
        }
    pthread_mutex_unlock(&p->lock);
    return rc;
}

static void release(struct exporter_probes *p, unsigned slot)
{
    pthread_mutex_lock(&p->lock);
    p->busy[slot][0] = '\0';
    p->running--;
    pthread_mutex_unlock(&p->lock);
}

static void render_figures(struct prom_buf *b, const struct client_opts *o,
                           const struct run_result *r)
{
    static const char *const quantile[3] = {"0.5", "0.9", "0.99"};
    const struct run_summary *s = &r->summary;
    const struct params *p = &o->p;
    const struct test_kind *k = test_kind_of(p);
    char lab[96], more[128];

    snprintf(lab, sizeof(lab), "test=\"%s\",protocol=\"%s\"", params_test_name(p->test),
             test_kind_protocol(k));
    prom_family(b, "netrig_probe_measured_seconds", "gauge", "Measured time of the test.");
    prom_sample(b, "netrig_probe_measured_seconds", lab, r->local.seconds);
    prom_family(b, "netrig_probe_bytes", "gauge", "Bytes received in the test.");
    prom_sample(b, "netrig_probe_bytes", lab, (double)s->bytes);
    prom_family(b, "netrig_probe_retransmits", "gauge", "TCP retransmits in the test.");
    prom_sample(b, "netrig_probe_retransmits", lab, s->retransmits);
    if (k->flags & TEST_KIND_BULK) {
        prom_family(b, "netrig_probe_throughput_bytes_per_second", "gauge",
                    "Throughput of the stream test (receivers' view).");
        prom_sample(b, "netrig_probe_throughput_bytes_per_second", lab, s->throughput_bps / 8);
        if (k->flags & TEST_KIND_DATAGRAMS) {
            prom_family(b, "netrig_probe_loss_ratio", "gauge", "Datagrams lost (0 to 1).");
            prom_sample(b, "netrig_probe_loss_ratio", lab, s->u.loss_pct / 100);
            prom_family(b, "netrig_probe_jitter_seconds", "gauge", "Jitter (RFC 3550).");
            prom_sample(b, "netrig_probe_jitter_seconds", lab, s->u.jitter_us / 1e6);
        }
        return;
    }
    prom_family(b, "netrig_probe_transactions_per_second", "gauge",
                "Transactions per second of the rr/crr test.");
    prom_sample(b, "netrig_probe_transactions_per_second", lab, s->transactions_per_s);
    prom_family(b, "netrig_probe_latency_seconds", "gauge",
                "Transaction latency quantiles of the rr/crr test.");
    for (int q = 0; q < 3; q++) {
        double us = q == 0 ? s->latency.p50_us : q == 1 ? s->latency.p90_us : s->latency.p99_us;
        snprintf(more, sizeof(more), "%s,quantile=\"%s\"", lab, quantile[q]);
        prom_sample(b, "netrig_probe_latency_seconds", more, us / 1e6);
    }
}

static void render(struct prom_buf *b, const struct client_opts *o, int reason,
                   const struct run_result *r, const struct load_result *lr, double wall_s)
{
    char lab[64];

    prom_family(b, "probe_success", "gauge", "1 when the test completed, else 0.");
    prom_sample(b, "probe_success", NULL, reason < 0);
    prom_family(b, "probe_duration_seconds", "gauge", "Wall time of the probe, set-up included.");
    prom_sample(b, "probe_duration_seconds", NULL, wall_s);
    prom_family(b, "netrig_probe_failed", "gauge",
                "1 for the reason the probe failed, else 0 (all 0 on success).");
    for (int i = 0; i < PROBE_REASONS; i++) {
        snprintf(lab, sizeof(lab), "reason=\"%s\"", reason_name(i));
        prom_sample(b, "netrig_probe_failed", lab, reason == i);
    }
    if (reason < 0 && lr)
        exporter_probe_render_load(b, lr);
    else if (reason < 0)
        render_figures(b, o, r);
}

unsigned exporter_probe_serve(void *ctx, const struct prom_request *rq, struct prom_buf *b)
{
    struct exporter_probes *p = ctx;
    const char *names[PROBE_ARGS_MAX], *values[PROBE_ARGS_MAX], *hdr;
    struct client_opts o;
    struct load_opts lo;
    struct load_result *lr = NULL;
    struct run_result r;
    char err[512] = "", key[280], *end;
    double timeout_s = 0, t0 = (double)clock_mono_ns() / 1e9;
    unsigned n = 0, slot = 0;
    int reason = -1, rc;
    bool load;

    while (prom_request_arg(rq, n, &names[n], &values[n]) == 0)
        if (++n == PROBE_ARGS_MAX) {
            prom_printf(b, "too many parameters: at most %d\n", PROBE_ARGS_MAX - 1);
            return 400;
        }
    hdr = prom_request_header(rq, PROBE_HEADER);
    if (hdr) {
        timeout_s = strtod(hdr, &end);
        if (end == hdr || *end || !(timeout_s > 0) || timeout_s > EXPORTER_PROBE_MAX_TIMEOUT_S) {
            prom_printf(b, "bad header %s: '%.40s': seconds above 0, at most %g\n", PROBE_HEADER,
                        hdr, EXPORTER_PROBE_MAX_TIMEOUT_S);
            return 400;
        }
    }
    load = exporter_probe_is_load(names, values, n);
    if (load ? exporter_probe_parse_load(names, values, n, timeout_s, &lo, err, sizeof(err))
             : exporter_probe_parse(names, values, n, timeout_s, &o, err, sizeof(err))) {
        prom_printf(b, "%s\n", err);
        return 400;
    }
    if (load)
        o = lo.base;
    snprintf(key, sizeof(key), "%s %u", o.host, o.port);
    reason = claim(p, key, &slot);
    if (reason) {
        render(b, &o, reason, NULL, NULL, (double)clock_mono_ns() / 1e9 - t0);
        LOG_INFO("probe %s port %u: not run (%s)", o.host, o.port, reason_name(reason));
        return 200;
    }
    if (load) {
        if (!(lr = calloc(1, sizeof(*lr)))) {
            release(p, slot);
            b->oom = true;
            return 500;
        }
        rc = load_run(&lo, p->stop, lr, err, sizeof(err));
    } else {
        rc = client_run(&o, p->stop, &r, err, sizeof(err));
    }
    release(p, slot);
    reason = rc ? (int)exporter_classify(rc, err) : -1;
    if (rc)
        LOG_WARN("probe %s port %u: %s failed (%s): %s", o.host, o.port,
                 load ? "load" : params_test_name(o.p.test), reason_name(reason),
                 rc > 0 ? (load ? lr->error : r.error) : err);
    render(b, &o, reason, &r, lr, (double)clock_mono_ns() / 1e9 - t0);
    if (load) {
        load_result_fini(lr);
        free(lr);
    } else {
        result_fini(&r);
    }
    return 200;
}
