/* prom: Prometheus text format and the HTTP endpoint that serves it (libmicrohttpd). */
#include "prom.h"

#include "sock.h"

#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PROM_MAX_CONNECTIONS 32 /* scrapers at once; more wait in the backlog */
#define PROM_CONN_TIMEOUT_S  10 /* an idle or slow scraper is dropped after this */
#define PROM_CONTENT_TYPE    "text/plain; version=0.0.4; charset=utf-8"

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

struct prom_http {
    struct MHD_Daemon *d;
    prom_render_fn fn;
    void *ctx;
    char where[300];
};

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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    static char not_found[] = "not found: metrics are at /metrics\n";
    static char not_allowed[] = "only GET and HEAD are served\n";
    static char home[] = "<html><body><a href=\"/metrics\">netrig metrics</a></body></html>\n";
    struct prom_http *h = cls;
    struct prom_buf b = {0};

    (void)version;
    (void)upload_data;
    if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
        *upload_data_size = 0; /* a body is not read: the reply closes the exchange */
        return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", not_allowed,
                     sizeof(not_allowed) - 1, false);
    }
    if (!*con_cls) { /* first call for this request: headers only, answer on the next */
        *con_cls = h;
        return MHD_YES;
    }
    if (!strcmp(url, "/"))
        return reply(c, MHD_HTTP_OK, "text/html", home, sizeof(home) - 1, false);
    if (strcmp(url, "/metrics"))
        return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", not_found, sizeof(not_found) - 1, false);
    h->fn(h->ctx, &b);
    if (b.oom) {
        static char oom[] = "out of memory\n";
        prom_buf_free(&b);
        return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain", oom, sizeof(oom) - 1, false);
    }
    return reply(c, MHD_HTTP_OK, PROM_CONTENT_TYPE, b.data ? b.data : strdup(""), b.len, true);
}

struct prom_http *prom_http_start(const char *spec, prom_render_fn fn, void *ctx, char *err,
                                  size_t errlen)
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
    sock_set_nonblock(fd, true);
    {
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);
        if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
            sock_addr_str((struct sockaddr *)&ss, h->where, sizeof(h->where));
    }
    h->d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL, NULL, on_request, h,
        MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_LIMIT, (unsigned)PROM_MAX_CONNECTIONS,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)PROM_CONN_TIMEOUT_S, MHD_OPTION_END);
    if (!h->d) {
        snprintf(err, errlen, "cannot start the HTTP endpoint on %s", spec);
        close(fd);
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
    free(h);
}
