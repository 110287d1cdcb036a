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

struct prom_http;
/* Listens on spec (see prom_parse_listen; port 0 picks a free one) and serves
 * GET /metrics on a thread of its own. NULL with err set on failure. */
struct prom_http *prom_http_start(const char *spec, prom_render_fn fn, void *ctx, char *err,
                                  size_t errlen);
/* "127.0.0.1:9464" or "[::]:9464": where it listens. */
void prom_http_where(const struct prom_http *h, char *buf, size_t len);
void prom_http_stop(struct prom_http *h);

#endif
