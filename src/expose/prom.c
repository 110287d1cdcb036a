/* prom: Prometheus text format and the HTTP endpoint that serves it (libmicrohttpd). */
#include "prom.h"
#include "prom_guard.h"

#include "clock.h"
#include "sock.h"

#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <pthread.h>
#include <time.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PROM_MAX_CONNECTIONS 32    /* scrapers at once; more are closed at once */
#define PROM_PER_IP          4     /* ... from one address */
#define PROM_CONN_TIMEOUT_S  10    /* an idle scraper is dropped after this */
#define PROM_HEADERS_MS      2000  /* a request's headers must be in this soon after connecting */
#define PROM_LIFETIME_MS     10000 /* and a connection is closed this long after, whatever */
#define PROM_REAP_MS         200   /* how often those two are looked at */
#define PROM_CACHE_MS        100   /* a rendering serves every scrape this long after it */
#define PROM_CONTENT_TYPE    "text/plain; version=0.0.4; charset=utf-8"

/* With a route: its requests last seconds and one Prometheus sends them all (the route bounds
 * its own work, e.g. the exporter's --probes), so more at once, from one address too. */
enum { PROM_ROUTE_CONNECTIONS = 96 };

void prom_buf_free(struct prom_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof(*b));
}

static bool reserve(struct prom_buf *b, size_t more)
{
    size_t cap = b->cap ? b->cap : 4096;
    char *p;

    if (b->oom)
        return false;
    if (b->len + more + 1 <= b->cap)
        return true;
    while (cap < b->len + more + 1)
        cap *= 2;
    p = realloc(b->data, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void prom_printf(struct prom_buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void prom_family(struct prom_buf *b, const char *name, const char *type, const char *help)
{
    prom_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void prom_sample(struct prom_buf *b, const char *name, const char *labels, double v)
{
    const char *open = labels && labels[0] ? "{" : "", *close = labels && labels[0] ? "}" : "";

    if (!labels)
        labels = "";
    if (isnan(v))
        prom_printf(b, "%s%s%s%s NaN\n", name, open, labels, close);
    else if (isinf(v))
        prom_printf(b, "%s%s%s%s %sInf\n", name, open, labels, close, v > 0 ? "+" : "-");
    else if (v == floor(v) && fabs(v) < 1e15)
        prom_printf(b, "%s%s%s%s %.0f\n", name, open, labels, close, v);
    else
        prom_printf(b, "%s%s%s%s %.15g\n", name, open, labels, close, v);
}

void prom_escape(const char *in, char *out, size_t outlen)
{
    size_t o = 0;

    if (!outlen)
        return;
    for (; in && *in; in++) {
        bool esc = *in == '\\' || *in == '"' || *in == '\n';
        if (o + (esc ? 2 : 1) >= outlen)
            break;
        if (esc) {
            out[o++] = '\\';
            out[o++] = *in == '\n' ? 'n' : *in;
        } else {
            out[o++] = *in;
        }
    }
    out[o] = '\0';
}

int prom_parse_listen(const char *spec, char *host, size_t hostlen, uint16_t *port)
{
    const char *colon, *h = spec;
    size_t n;
    char *end;
    unsigned long v;

    if (!spec || !*spec)
        return -1;
    if (spec[0] == '[') {
        const char *close = strchr(spec, ']');
        if (!close || close[1] != ':')
            return -1;
        h = spec + 1;
        n = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(spec, ':');
        if (!colon || memchr(spec, ':', (size_t)(colon - spec)))
            return -1; /* a bare IPv6 address needs brackets */
        n = (size_t)(colon - spec);
    }
    if (n >= hostlen || !colon[1])
        return -1;
    errno = 0;
    v = strtoul(colon + 1, &end, 10);
    if (errno || *end || v > 65535 || colon[1] < '0' || colon[1] > '9')
        return -1;
    memcpy(host, h, n);
    host[n] = '\0';
    *port = (uint16_t)v;
    return 0;
}

/* A connection libmicrohttpd serves, as the reaper sees it: libmicrohttpd's own timeout is
 * for idleness, so a client trickling a byte a second would hold its slot for ever. */
struct prom_conn {
    int fd; /* -1: a free entry */
    uint64_t since;
    bool headers;      /* a request's headers came in whole */
    uint32_t requests; /* requests it made: the PROM_GUARD_PER_CONN-th answer closes it */
};

struct prom_http {
    struct MHD_Daemon *d;
    prom_render_fn fn;
    void *ctx;
    char where[300];
    struct prom_route route; /* route.fn NULL: none */
    uint64_t lifetime_ms;    /* a connection is closed this long after it opened */
    pthread_mutex_t lock;    /* conns, stop: libmicrohttpd's thread and the reaper */
    pthread_cond_t wake;
    bool stop, reaping;
    pthread_t reaper;
    struct prom_conn conns[PROM_ROUTE_CONNECTIONS + 8];
    /* libmicrohttpd's thread only: */
    struct prom_guard guard;
    struct MHD_Response *cached; /* the last rendering of /metrics (NULL: none yet) */
    char *cached_body;           /* its text (the response owns it) */
    size_t cached_len;
    uint64_t cached_at;
};

/* libmicrohttpd opened or closed a connection (on its thread). */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct prom_http *h = cls;
    struct prom_conn *pc = *socket_context;
    const union MHD_ConnectionInfo *ci;

    pthread_mutex_lock(&h->lock);
    if (code == MHD_CONNECTION_NOTIFY_CLOSED && pc) {
        pc->fd = -1; /* before libmicrohttpd closes it: the reaper never sees its number again */
        *socket_context = NULL;
    } else if (code == MHD_CONNECTION_NOTIFY_STARTED &&
               (ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD))) {
        for (size_t i = 0; i < sizeof(h->conns) / sizeof(h->conns[0]); i++) {
            if (h->conns[i].fd >= 0)
                continue;
            h->conns[i] =
                (struct prom_conn){.fd = ci->connect_fd, .since = (uint64_t)clock_mono_ms()};
            *socket_context = &h->conns[i];
            break;
        }
    }
    pthread_mutex_unlock(&h->lock);
}

/* A request's headers are in (the first call for it): how many requests its connection has
 * made, this one included. */
static uint32_t headers_in(struct prom_http *h, struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    struct prom_conn *pc = ci ? ci->socket_context : NULL;
    uint32_t n = 0;

    pthread_mutex_lock(&h->lock);
    if (pc) {
        pc->headers = true;
        n = ++pc->requests;
    }
    pthread_mutex_unlock(&h->lock);
    return n;
}

/* Shuts down connections whose headers are late, or that lived too long: libmicrohttpd then
 * sees them end and closes them. */
static void *reaper_main(void *arg)
{
    struct prom_http *h = arg;

    pthread_mutex_lock(&h->lock);
    while (!h->stop) {
        struct timespec ts;
        uint64_t now = (uint64_t)clock_mono_ms();

        for (size_t i = 0; i < sizeof(h->conns) / sizeof(h->conns[0]); i++) {
            struct prom_conn *pc = &h->conns[i];
            if (pc->fd >= 0 && (now - pc->since >= h->lifetime_ms ||
                                (!pc->headers && now - pc->since >= PROM_HEADERS_MS)))
                shutdown(pc->fd, SHUT_RDWR);
        }
        ts = clock_deadline_ts(CLOCK_MONOTONIC, PROM_REAP_MS);
        pthread_cond_timedwait(&h->wake, &h->lock, &ts);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
                             char *body, size_t len, bool owned)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(
        len, body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    enum MHD_Result rc;

    if (!r) {
        if (owned)
            free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

struct prom_request {
    struct MHD_Connection *c;
};

const char *prom_request_header(const struct prom_request *r, const char *name)
{
    return MHD_lookup_connection_value(r->c, MHD_HEADER_KIND, name);
}

struct arg_walk {
    unsigned want, at;
    const char *name, *value;
};

static enum MHD_Result arg_at(void *cls, enum MHD_ValueKind kind, const char *key,
                              const char *value)
{
    struct arg_walk *w = cls;

    (void)kind;
    if (w->at++ != w->want)
        return MHD_YES;
    w->name = key;
    w->value = value ? value : "";
    return MHD_NO;
}

int prom_request_arg(const struct prom_request *r, unsigned i, const char **name,
                     const char **value)
{
    struct arg_walk w = {.want = i};

    MHD_get_connection_values(r->c, MHD_GET_ARGUMENT_KIND, arg_at, &w);
    if (!w.name)
        return -1;
    *name = w.name;
    *value = w.value;
    return 0;
}

/* /metrics: within its address's rate (prom_guard)? Else 429 with Retry-After, and the
 * connection closed after it. */
static enum MHD_Result too_many(struct MHD_Connection *c)
{
    static char text[] = "too many requests: at most 20 a second per address\n";
    struct MHD_Response *r =
        MHD_create_response_from_buffer(sizeof(text) - 1, text, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result rc;

    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    rc = MHD_queue_response(c, MHD_HTTP_TOO_MANY_REQUESTS, r);
    MHD_destroy_response(r);
    return rc;
}

/* /metrics: a connection's first request gets a fresh rendering; its later ones (pipelined)
 * the rendering of the last PROM_CACHE_MS, so they cost a copy each, not a rendering. The
 * PROM_GUARD_PER_CONN-th answer on a connection closes it (requests pipelined past it are
 * never read). */
static enum MHD_Result on_metrics(struct prom_http *h, struct MHD_Connection *c, uint32_t nth)
{
    struct MHD_Response *r;
    enum MHD_Result rc;

    if (!h->cached || nth <= 1 || (uint64_t)clock_mono_ms() - h->cached_at >= PROM_CACHE_MS) {
        struct prom_buf b = {0};
        h->fn(h->ctx, &b);
        if (b.oom || !(r = MHD_create_response_from_buffer(b.len, b.data ? b.data : strdup(""),
                                                           MHD_RESPMEM_MUST_FREE))) {
            static char oom[] = "out of memory\n";
            prom_buf_free(&b);
            return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", oom, sizeof(oom) - 1,
                         false);
        }
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, PROM_CONTENT_TYPE);
        if (h->cached)
            MHD_destroy_response(h->cached); /* connections still sending it keep their hold */
        h->cached = r;
        h->cached_body = b.data;
        h->cached_len = b.len;
        h->cached_at = (uint64_t)clock_mono_ms();
    }
    if (nth < PROM_GUARD_PER_CONN)
        return MHD_queue_response(c, MHD_HTTP_OK, h->cached);
    r = MHD_create_response_from_buffer(h->cached_len, h->cached_body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, PROM_CONTENT_TYPE);
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    rc = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result on_route(struct prom_http *h, struct MHD_Connection *c)
{
    struct prom_request rq = {.c = c};
    struct prom_buf b = {0};
    unsigned status = h->route.fn(h->route.ctx, &rq, &b);

    if (b.oom) {
        static char oom[] = "out of memory\n";
        prom_buf_free(&b);
        return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", oom, sizeof(oom) - 1, false);
    }
    return reply(c, status, status == MHD_HTTP_OK ? PROM_CONTENT_TYPE : "text/plain",
                 b.data ? b.data : strdup(""), b.len, true);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    static char not_found[] = "not found: metrics are at /metrics\n";
    static char not_allowed[] = "only GET and HEAD are served\n";
    static char home[] = "<html><body><a href=\"/metrics\">netrig metrics</a></body></html>\n";
    struct prom_http *h = cls;
    const union MHD_ConnectionInfo *ci;

    (void)version;
    (void)upload_data;
    if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
        *upload_data_size = 0; /* a body is not read: the reply closes the exchange */
        return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", not_allowed,
                     sizeof(not_allowed) - 1, false);
    }
    if (!*con_cls) { /* first call for this request: headers only, answer on the next */
        *con_cls = (void *)(uintptr_t)headers_in(h, c);
        if (!*con_cls)
            *con_cls = (void *)(uintptr_t)1;
        ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        if (!strcmp(url, "/metrics") &&
            !prom_guard_admit(&h->guard, ci ? ci->client_addr : NULL, (uint64_t)clock_mono_ms()))
            return too_many(c);
        return MHD_YES;
    }
    if (!strcmp(url, "/"))
        return reply(c, MHD_HTTP_OK, "text/html", home, sizeof(home) - 1, false);
    if (h->route.fn && !strcmp(url, h->route.path))
        return on_route(h, c);
    if (strcmp(url, "/metrics"))
        return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", not_found, sizeof(not_found) - 1, false);
    return on_metrics(h, c, (uint32_t)(uintptr_t)*con_cls);
}

static int reaper_start(struct prom_http *h)
{
    pthread_condattr_t ca;

    for (size_t i = 0; i < sizeof(h->conns) / sizeof(h->conns[0]); i++)
        h->conns[i].fd = -1;
    pthread_mutex_init(&h->lock, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&h->wake, &ca);
    pthread_condattr_destroy(&ca);
    h->reaping = pthread_create(&h->reaper, NULL, reaper_main, h) == 0;
    return h->reaping ? 0 : -1;
}

static void reaper_stop(struct prom_http *h)
{
    pthread_mutex_lock(&h->lock);
    h->stop = true;
    pthread_cond_signal(&h->wake);
    pthread_mutex_unlock(&h->lock);
    if (h->reaping)
        pthread_join(h->reaper, NULL);
    pthread_cond_destroy(&h->wake);
    pthread_mutex_destroy(&h->lock);
}

struct prom_http *prom_http_start(const char *spec, prom_render_fn fn, void *ctx, char *err,
                                  size_t errlen)
{
    return prom_http_start_route(spec, fn, ctx, NULL, err, errlen);
}

struct prom_http *prom_http_start_route(const char *spec, prom_render_fn fn, void *ctx,
                                        const struct prom_route *route, char *err, size_t errlen)
{
    struct prom_http *h;
    char host[256];
    uint16_t port;
    int fd;

    if (prom_parse_listen(spec, host, sizeof(host), &port)) {
        snprintf(err, errlen,
                 "invalid listen address '%s': use ADDR:PORT, [IPV6]:PORT or "
                 ":PORT, e.g. 127.0.0.1:9464",
                 spec);
        return NULL;
    }
    fd = sock_listen(host[0] ? host : NULL, port, 0, err, errlen);
    if (fd < 0) {
        char *hint = strstr(err, " (choose another port with -p)"); /* the daemon's option */
        if (hint)
            *hint = '\0';
        return NULL;
    }
    h = calloc(1, sizeof(*h));
    if (!h) {
        close(fd);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    h->fn = fn;
    h->ctx = ctx;
    h->lifetime_ms = PROM_LIFETIME_MS;
    if (route) {
        h->route = *route;
        h->lifetime_ms += (uint64_t)route->max_s * 1000;
    }
    sock_set_nonblock(fd, true);
    {
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);
        if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
            sock_addr_str((struct sockaddr *)&ss, h->where, sizeof(h->where));
    }
    if (reaper_start(h)) {
        snprintf(err, errlen, "cannot start a thread for the HTTP endpoint");
        close(fd);
        free(h);
        return NULL;
    }
    h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
                                (route ? MHD_USE_THREAD_PER_CONNECTION : 0),
                            0, NULL, NULL, on_request, h, MHD_OPTION_LISTEN_SOCKET, fd,
                            MHD_OPTION_CONNECTION_LIMIT,
                            (unsigned)(route ? PROM_ROUTE_CONNECTIONS : PROM_MAX_CONNECTIONS),
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                            (unsigned)(route ? PROM_ROUTE_CONNECTIONS : PROM_PER_IP),
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)PROM_CONN_TIMEOUT_S,
                            MHD_OPTION_NOTIFY_CONNECTION, on_connection, h, MHD_OPTION_END);
    if (!h->d) {
        snprintf(err, errlen, "cannot start the HTTP endpoint on %s", spec);
        close(fd);
        reaper_stop(h);
        free(h);
        return NULL;
    }
    return h;
}

void prom_http_where(const struct prom_http *h, char *buf, size_t len)
{
    snprintf(buf, len, "%s", h->where);
}

void prom_http_stop(struct prom_http *h)
{
    if (!h)
        return;
    MHD_stop_daemon(h->d); /* closes the listening socket too */
    if (h->cached)
        MHD_destroy_response(h->cached);
    reaper_stop(h);
    free(h);
}
