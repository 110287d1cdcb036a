/* exporter_probe: the /probe endpoint of 'netrig exporter', as Prometheus' blackbox_exporter
 * answers it: GET /probe?target=HOST[:PORT]&test=stream|rr|crr&... runs that test when
 * scraped and answers probe_success, probe_duration_seconds and netrig's figures of the run.
 * The test's length fits in the scrape timeout Prometheus sends
 * (X-Prometheus-Scrape-Timeout-Seconds) less a margin; one test per target at a time; at most
 * max probes at once. A bad parameter is a 400 naming it. */
#ifndef NETRIG_EXPORTER_PROBE_H
#define NETRIG_EXPORTER_PROBE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "client.h"
#include "load.h"
#include "prom.h"

#include <stdbool.h>

#define EXPORTER_PROBE_DEFAULT_TIMEOUT_S 10.0 /* without the header: blackbox's default */
#define EXPORTER_PROBE_MAX_TIMEOUT_S     300.0
#define EXPORTER_PROBE_MAX               64 /* --probes at most */

struct exporter_probes;

/* At most max probes at once (1..EXPORTER_PROBE_MAX); stop ends running probes. NULL: OOM. */
struct exporter_probes *exporter_probes_create(unsigned max, _Atomic int *stop);
void exporter_probes_destroy(struct exporter_probes *p);
/* The prom_route_fn of /probe (ctx: the struct exporter_probes). */
unsigned exporter_probe_serve(void *ctx, const struct prom_request *r, struct prom_buf *b);

/* Parses a probe's arguments (names[i] = values[i], n of them) and the scrape timeout (seconds,
 * <= 0: absent) into o and the test length budget. 0, or -1 with err naming the parameter. */
int exporter_probe_parse(const char *const *names, const char *const *values, unsigned n,
                         double timeout_s, struct client_opts *o, char *err, size_t errlen);
/* test=load (or module=load) among the arguments: latency under load, its own parameters. */
bool exporter_probe_is_load(const char *const *names, const char *const *values, unsigned n);
/* target, duration and parallel into lo: a fifth of the length baseline, three fifths loaded,
 * a fifth recovery. 0, or -1 with err naming the parameter. */
int exporter_probe_parse_load(const char *const *names, const char *const *values, unsigned n,
                              double timeout_s, struct load_opts *lo, char *err, size_t errlen);
void exporter_probe_render_load(struct prom_buf *b, const struct load_result *lr);
/* HOST, HOST:PORT, [V6] or [V6]:PORT into host and port ("" when not given). 0 or -1. */
int exporter_probe_split_target(const char *v, char *host, size_t hlen, char *port, size_t plen);
/* The margin kept between the test's length and the scrape timeout t (seconds). */
double exporter_probe_margin(double t);

#endif
