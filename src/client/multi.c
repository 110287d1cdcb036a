/* multi: synchronized tests against several servers. */
#include "multi.h"
#include "clock.h"

#include "log.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MULTI_START_MARGIN_NS 300000000ULL /* lead time for the start message to arrive */

int multi_parse_target(const char *s, uint16_t default_port, struct multi_target *t)
{
    const char *colon = strrchr(s, ':');
    size_t hostlen;
    char *end;
    long port = default_port;

    memset(t, 0, sizeof(*t));
    if (s[0] == '[') { /* [v6]:port or [v6] */
        const char *close = strchr(s, ']');
        if (!close)
            return -EINVAL;
        hostlen = (size_t)(close - s - 1);
        s++;
        colon = close[1] == ':' ? close + 1 : NULL;
        if (!colon && close[1])
            return -EINVAL;
    } else if (colon && strchr(s, ':') == colon) { /* name:port (one colon) */
        hostlen = (size_t)(colon - s);
    } else { /* a name, or a bare IPv6 address */
        hostlen = strlen(s);
        colon = NULL;
    }
    if (hostlen == 0 || hostlen >= sizeof(t->host))
        return -EINVAL;
    memcpy(t->host, s, hostlen);
    if (colon) {
        port = strtol(colon + 1, &end, 10);
        if (!colon[1] || *end || port < 1 || port > 65535)
            return -EINVAL;
    }
    t->port = (uint16_t)port;
    return 0;
}

/* Bounded string copy between fields of one result (snprintf there trips -Wrestrict). */
static void copy_reason(char *dst, size_t len, const char *src)
{
    size_t n = strnlen(src, len - 1);

    memcpy(dst, src, n);
    dst[n] = '\0';
}

struct runner {
    struct client_session *s;
    _Atomic int *stop;
    uint64_t start_at;
    int64_t offset;
    int rc;
    char err[256];
};

static void *run_one(void *arg)
{
    struct runner *r = arg;

    r->rc = client_go(r->s, r->stop, r->start_at, r->offset, r->err, sizeof(r->err));
    return NULL;
}

/* Totals across the targets that produced results. */
static void aggregate(struct multi_result *m)
{
    double *tp;
    uint32_t k = 0, cap = 0;
    uint64_t first = UINT64_MAX, last = 0;

    for (uint32_t t = 0; t < m->n; t++)
        cap += m->rc[t] >= 0 ? m->runs[t].nflows : 0;
    tp = calloc(cap ? cap : 1, sizeof(*tp));
    for (uint32_t t = 0; t < m->n; t++) {
        const struct run_result *r = &m->runs[t];
        if (m->rc[t] < 0)
            continue;
        m->ok++;
        m->throughput_bps += r->summary.throughput_bps;
        m->transactions_per_s += r->summary.transactions_per_s;
        m->bytes += r->summary.bytes;
        m->retransmits += r->summary.retransmits;
        for (uint32_t i = 0; tp && i < r->nflows; i++)
            tp[k++] = params_is_transactional(&r->params) ? r->flows[i].transactions_per_s
                                                          : r->flows[i].throughput_bps;
        if (r->start_unix_ns < first)
            first = r->start_unix_ns;
        if (r->start_unix_ns > last)
            last = r->start_unix_ns;
    }
    m->flows = k;
    m->jain_index = result_jain(tp, k);
    m->start_spread_ns = last >= first ? last - first : 0;
    free(tp);
}

/* Prepares every target; those that fail keep their error and are left out. */
static uint32_t prepare_all(const struct client_opts *base, struct multi_result *m,
                            struct runner *run)
{
    uint32_t ready = 0;

    for (uint32_t t = 0; t < m->n; t++) {
        struct client_opts o = *base;
        snprintf(o.host, sizeof(o.host), "%s", m->targets[t].host);
        o.port = m->targets[t].port;
        /* the targets' progress is not shown, only a wait in a server's queue */
        o.observer =
            (struct run_observer){.on_queued = base->observer.on_queued, .ctx = base->observer.ctx};
        m->rc[t] = client_prepare(&o, &m->runs[t], &run[t].s, m->err[t], sizeof(m->err[t]));
        if (m->rc[t] == 0)
            m->rc[t] = client_clock_offset(run[t].s, &m->offset_ns[t], &m->rtt_ns[t]);
        if (m->rc[t] < 0) {
            if (!m->err[t][0])
                snprintf(m->err[t], sizeof(m->err[t]), "clock probe failed: %s",
                         strerror(-m->rc[t]));
            LOG_WARN("target %s: %s", m->targets[t].host, m->err[t]);
            client_session_free(run[t].s);
            run[t].s = NULL;
            continue;
        }
        ready++;
    }
    return ready;
}

int multi_run(const struct client_opts *base, struct multi_result *m, _Atomic int *stop, char *err,
              size_t errlen)
{
    struct runner run[MULTI_MAX_TARGETS] = {0};
    pthread_t th[MULTI_MAX_TARGETS];
    uint64_t start_at, max_rtt = 0;
    uint32_t ready = prepare_all(base, m, run);
    int worst = 0;

    if (!ready) {
        snprintf(err, errlen, "no target could start: %s", m->err[0]);
        return -ECONNREFUSED;
    }
    for (uint32_t t = 0; t < m->n; t++)
        if (run[t].s && m->rtt_ns[t] > max_rtt)
            max_rtt = m->rtt_ns[t];
    start_at = clock_real_ns() + MULTI_START_MARGIN_NS + 2 * max_rtt;
    for (uint32_t t = 0; t < m->n; t++) {
        if (!run[t].s)
            continue;
        run[t].stop = stop;
        run[t].start_at = start_at;
        run[t].offset = m->offset_ns[t];
        if (pthread_create(&th[t], NULL, run_one, &run[t])) {
            run[t].rc = -EAGAIN;
            snprintf(run[t].err, sizeof(run[t].err), "cannot start a thread for this target");
            client_session_free(run[t].s);
            run[t].s = NULL;
        }
    }
    for (uint32_t t = 0; t < m->n; t++) {
        if (!run[t].s) {
            if (run[t].rc) {
                m->rc[t] = run[t].rc;
                copy_reason(m->err[t], sizeof(m->err[t]), run[t].err);
            }
            continue;
        }
        pthread_join(th[t], NULL);
        m->rc[t] = run[t].rc;
        if (run[t].rc < 0)
            copy_reason(m->err[t], sizeof(m->err[t]), run[t].err);
        else if (run[t].rc > 0)
            copy_reason(m->err[t], sizeof(m->err[t]), m->runs[t].error);
        client_session_free(run[t].s);
    }
    aggregate(m);
    for (uint32_t t = 0; t < m->n; t++)
        if (m->rc[t] != 0)
            worst = 1;
    return worst;
}
