/* prom: Prometheus exposition. A text-format writer (HELP/TYPE lines, escaped label values,
 * samples) and a small HTTP endpoint (libmicrohttpd) that serves GET /metrics by calling a
 * render function. Used by 'netrig serve --metrics' (metrics.c) and 'netrig exporter'. */
#ifndef NETRIG_PROM_H
#define NETRIG_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growing text buffer; on allocation failure it keeps what it has and sets oom. */
struct prom_buf {
    char *data;
    size_t len, cap;
    bool oom;
};

void prom_buf_free(struct prom_buf *b);
void prom_printf(struct prom_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "# HELP name help" and "# TYPE name type" (type: counter, gauge). */
void prom_family(struct prom_buf *b, const char *name, const char *type, const char *help);
/* "name{labels} value\n"; labels is the inside of the braces ("" or NULL for none). */
void prom_sample(struct prom_buf *b, const char *name, const char *labels, double value);
/* A label value with \, " and newline escaped as the text format wants; cut to fit. */
void prom_escape(const char *in, char *out, size_t outlen);

/* ADDR:PORT, [IPV6]:PORT or :PORT (all addresses) into host ("" = all) and port. 0 or -1. */
int prom_parse_listen(const char *spec, char *host, size_t hostlen, uint16_t *port);

/* Fills b with the current exposition; called on the endpoint's thread. */
typedef void (*prom_render_fn)(void *ctx, struct prom_buf *b);

/* A request to a route (a path other than /metrics, e.g. /probe): its query arguments and
 * headers, valid during the route's call. */
struct prom_request;
/* The header's value, NULL when absent. */
const char *prom_request_header(const struct prom_request *r, const char *name);
/* The i-th query argument (from 0): 0 with name and value (value "" when bare), -1 past the last.
 */
int prom_request_arg(const struct prom_request *r, unsigned i, const char **name,
                     const char **value);
/* Answers a route's request into b (text format when 200, a one-line message otherwise) and
 * returns the HTTP status. Called on the request's own thread: it may take seconds. */
typedef unsigned (*prom_route_fn)(void *ctx, const struct prom_request *r, struct prom_buf *b);
struct prom_route {
    const char *path; /* "/probe" */
    prom_route_fn fn;
    void *ctx;
    unsigned max_s; /* how long its requests may last (the reaper's bound for the connection) */
};

struct prom_http;
/* prom_http_start, also serving route (NULL: none); with a route, each connection has a
 * thread of its own so a slow route never holds up /metrics. */
struct prom_http *prom_http_start_route(const char *spec, prom_render_fn fn, void *ctx,
                                        const struct prom_route *route, char *err, size_t errlen);
/* Listens on spec (see prom_parse_listen; port 0 picks a free one) and serves
 * GET /metrics on a thread of its own. NULL with err set on failure. */
struct prom_http *prom_http_start(const char *spec, prom_render_fn fn, void *ctx, char *err,
                                  size_t errlen);
/* "127.0.0.1:9464" or "[::]:9464": where it listens. */
void prom_http_where(const struct prom_http *h, char *buf, size_t len);
void prom_http_stop(struct prom_http *h);

#endif
