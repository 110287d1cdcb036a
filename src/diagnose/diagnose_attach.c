/* diagnose_attach: sock_diag samples of a running test's connections -> a sample: the first
 * and the last give the deltas of TCP's counters, the ones between (every 250 ms) the means of
 * srtt, the peer's window and the data in flight. */
#define _GNU_SOURCE
#include "diagnose_attach.h"
#include "clock.h"

#include "hostctr.h"
#include "sockdiag.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ACTIVE_BYTES 65536 /* a connection that moved less is a control connection */

#define TRACE_NS 250000000ULL /* the samples between the first and the last */

struct seen {
    uint64_t cookie;
    struct tcpinfo ti;
    char cc[16];
    uint32_t sndbuf;
};

/* A connection's sums over the samples between, by cookie. */
struct trace {
    uint64_t cookie;
    uint32_t n;
    double rtt_us, snd_wnd, inflight;
};

struct collect {
    const struct diagnose_attach_opts *o;
    const struct addrinfo *peers;
    struct seen *v;
    size_t n, cap;
    int oom;
};

static bool peer_is(const struct collect *c, const struct sockdiag_tcp *s)
{
    for (const struct addrinfo *p = c->peers; p; p = p->ai_next) {
        if (p->ai_family == AF_INET && s->family == AF_INET &&
            !memcmp(&s->dst, &((const struct sockaddr_in *)p->ai_addr)->sin_addr, 4))
            return true;
        if (p->ai_family == AF_INET6 && s->family == AF_INET6 &&
            !memcmp(&s->dst, &((const struct sockaddr_in6 *)p->ai_addr)->sin6_addr, 16))
            return true;
    }
    return c->peers == NULL;
}

static int collect_one(const struct sockdiag_tcp *s, void *arg)
{
    struct collect *c = arg;

    if ((s->sport != c->o->port && s->dport != c->o->port) || !peer_is(c, s))
        return 0;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        struct seen *p = cap <= 65536 ? realloc(c->v, cap * sizeof(*p)) : NULL;
        if (!p) {
            c->oom = 1;
            return -ENOMEM;
        }
        c->v = p;
        c->cap = cap;
    }
    c->v[c->n].cookie = s->cookie;
    c->v[c->n].ti = s->ti;
    c->v[c->n].sndbuf = s->sndbuf;
    snprintf(c->v[c->n].cc, sizeof(c->v[c->n].cc), "%s", s->cc);
    c->n++;
    return 0;
}

static int sample(struct collect *c, char *err, size_t errlen)
{
    int rc;

    c->n = 0;
    rc = sockdiag_tcp_dump(collect_one, c);
    if (rc) {
        snprintf(err, errlen, "cannot list this host's TCP connections (sock_diag): %s",
                 strerror(-rc));
        return -1;
    }
    return 0;
}

/* Sleeps ns, waking every 100 ms to look at the stop flag. */
static int nap(uint64_t ns, _Atomic int *stop)
{
    while (ns > 0 && !*stop) {
        uint64_t step = ns < 100000000ULL ? ns : 100000000ULL;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)step};
        nanosleep(&ts, NULL);
        ns -= step;
    }
    return *stop ? -1 : 0;
}

/* Adds a sample's connections that the first sample saw to their traces. */
static void trace_add(const struct collect *first, const struct collect *now, struct trace *tr)
{
    for (size_t i = 0; i < now->n; i++)
        for (size_t j = 0; j < first->n; j++) {
            const struct tcpinfo *t = &now->v[i].ti;
            if (first->v[j].cookie != now->v[i].cookie)
                continue;
            tr[j].cookie = first->v[j].cookie;
            tr[j].n++;
            tr[j].rtt_us += t->rtt_us;
            tr[j].snd_wnd += t->snd_wnd;
            tr[j].inflight += (double)t->unacked * t->snd_mss;
            break;
        }
}

/* The time between the first and the last sample, with a sample every TRACE_NS. */
static int watch_between(const struct diagnose_attach_opts *o, _Atomic int *stop,
                         struct collect c[2], struct trace *tr, char *err, size_t errlen)
{
    uint64_t left = o->duration_ns;

    while (left > TRACE_NS) {
        if (nap(TRACE_NS, stop) || sample(&c[1], err, errlen))
            return -1;
        trace_add(&c[0], &c[1], tr);
        left -= TRACE_NS;
    }
    return nap(left, stop);
}

static const struct seen *find(const struct seen *v, size_t n, uint64_t cookie)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].cookie == cookie)
            return &v[i];
    return NULL;
}

/* Adds one sending connection's deltas to s. */
static void add_sender(struct diagnose_sample *s, const struct tcpinfo *d, double *rtt_sum,
                       double *bytes)
{
    if (!s->flows || (d->min_rtt_us && d->min_rtt_us < s->min_rtt_us))
        s->min_rtt_us = d->min_rtt_us;
    if (!s->flows || d->snd_wnd < s->snd_wnd)
        s->snd_wnd = d->snd_wnd;
    if (!s->mss)
        s->mss = d->snd_mss;
    s->flows++;
    s->busy_us += d->busy_us;
    s->rwnd_us += d->rwnd_limited_us;
    s->sndbuf_us += d->sndbuf_limited_us;
    s->retrans += d->total_retrans;
    s->segs_out += d->data_segs_out;
    s->cwnd += d->snd_cwnd;
    *rtt_sum += d->rtt_us;
    *bytes += (double)d->bytes_acked;
}

/* The means of one sending connection's trace. */
static void add_trace(struct diagnose_sample *s, const struct trace *t, const struct seen *last,
                      double *m)
{
    if (!t || !t->n)
        return;
    m[0]++;
    m[1] += t->n;
    m[2] += t->rtt_us / t->n;
    m[3] += t->snd_wnd / t->n;
    m[4] += t->inflight / t->n;
    m[5] += last->sndbuf;
    if (!s->cc[0])
        snprintf(s->cc, sizeof(s->cc), "%s", last->cc);
}

static int build(const struct collect *a, const struct collect *b, const struct trace *tr,
                 double dt, struct diagnose_sample *s, unsigned *receivers)
{
    double rtt_sum = 0, bytes = 0, m[6] = {0};

    *receivers = 0;
    for (size_t i = 0; i < b->n; i++) {
        const struct seen *before = find(a->v, a->n, b->v[i].cookie);
        struct tcpinfo d = b->v[i].ti;
        if (!before)
            continue; /* opened after the first sample */
        tcpinfo_since(&d, &before->ti);
        if (d.bytes_received >= ACTIVE_BYTES)
            (*receivers)++;
        if (d.bytes_acked >= ACTIVE_BYTES) {
            add_sender(s, &d, &rtt_sum, &bytes);
            add_trace(s, &tr[before - a->v], &b->v[i], m);
        }
    }
    if (m[0] > 0) {
        s->samples = (uint32_t)(m[1] / m[0]);
        s->rtt_mean_us = m[2] / m[0];
        s->wnd_mean = m[3] / m[0];
        s->inflight_mean = m[4] / m[0];
        s->snd.buf = (uint32_t)(m[5] / m[0]);
    }
    s->local_receives = *receivers > 0;
    if (!s->flows)
        return -1;
    s->seconds = dt;
    s->srtt_us = rtt_sum / s->flows;
    s->cwnd /= s->flows;
    s->throughput_bps = bytes * 8 / dt;
    return 0;
}

static int watch(const struct diagnose_attach_opts *o, _Atomic int *stop, struct collect c[2],
                 struct trace **tr, struct diagnose_sample *s, double *dt, char *err, size_t errlen)
{
    struct hostctr_snap *snap = calloc(2, sizeof(*snap));
    double t0;

    if (!snap) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    hostctr_sample(NULL, &snap[0]);
    t0 = clock_mono_s();
    if (sample(&c[0], err, errlen) || !(*tr = calloc(c[0].n ? c[0].n : 1, sizeof(**tr))) ||
        watch_between(o, stop, c, *tr, err, errlen) || sample(&c[1], err, errlen)) {
        if (*stop)
            snprintf(err, errlen, "interrupted before the second sample: nothing to diagnose");
        else if (!*tr)
            snprintf(err, errlen, "out of memory");
        free(snap);
        return -1;
    }
    *dt = clock_mono_s() - t0;
    hostctr_sample(NULL, &snap[1]);
    hostctr_delta(&snap[0], &snap[1], &s->snd.host);
    s->snd.host_known = true;
    s->snd.local = true;
    free(snap);
    return 0;
}

int diagnose_attach_run(const struct diagnose_attach_opts *o, _Atomic int *stop,
                        struct diagnose_sample *s, char *what, size_t whatlen, char *err,
                        size_t errlen)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *peers = NULL;
    struct collect c[2] = {{.o = o}, {.o = o}};
    const char *host = o->host && *o->host ? o->host : NULL;
    unsigned receivers = 0;
    struct trace *tr = NULL;
    double dt = 0;
    int rc = -1;

    if (host && getaddrinfo(host, NULL, &hints, &peers)) {
        snprintf(err, errlen, "cannot resolve '%s' for -c: give the peer's name or address", host);
        return -1;
    }
    c[0].peers = c[1].peers = peers;
    memset(s, 0, sizeof(*s));
    if (!watch(o, stop, c, &tr, s, &dt, err, errlen)) {
        rc = build(&c[0], &c[1], tr, dt, s, &receivers);
        if (s->local_receives) { /* both ends here (loopback): the receiver's host is ours */
            s->rcv.host = s->snd.host;
            s->rcv.host_known = true;
            s->rcv.local = true;
            s->same_host = true;
        }
        if (rc && receivers)
            snprintf(err, errlen,
                     "this host only receives on the %u busy connection(s) with %s "
                     "port %u: run 'netrig diagnose --during' on the sender, whose TCP_INFO says "
                     "why",
                     receivers, host ? host : "any peer on", o->port);
        else if (rc)
            snprintf(err, errlen,
                     "no TCP connection with %s port %u moved data in %.1f s: start "
                     "the test first, then run diagnose --during while it runs",
                     host ? host : "any peer on", o->port, dt);
        snprintf(what, whatlen, "attached to %u sending connection(s) with %s port %u for %.1f s",
                 s->flows, host ? host : "any peer on", o->port, dt);
    }
    free(tr);
    free(c[0].v);
    free(c[1].v);
    if (peers)
        freeaddrinfo(peers);
    return rc;
}
