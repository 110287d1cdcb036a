/* exporter: 'netrig exporter' at run time. One scheduler runs the configured tests one at a
 * time through client_run(), each target every interval; scrapes render the latest results
 * and run counts from a copy taken under a mutex, so a scrape never waits for a test. A
 * target that fails keeps its series: netrig_probe_success 0 and the reason in a label. */
#ifndef NETRIG_EXPORTER_H
#define NETRIG_EXPORTER_H

#include <signal.h>

#include "exporter_config.h"
#include "prom.h"

/* Why a probe failed: the values of the reason label. */
enum exporter_reason {
    EXPORTER_RESOLVE,     /* the host name does not resolve */
    EXPORTER_REFUSED,     /* connection refused: no daemon on that port */
    EXPORTER_TIMEOUT,     /* no answer in time (connect or control) */
    EXPORTER_UNREACHABLE, /* no route to the host or network */
    EXPORTER_BUSY,        /* the daemon was busy (its --max-tests and the like) */
    EXPORTER_AUTH,        /* authentication failed or credentials missing */
    EXPORTER_REJECTED,    /* the daemon refused the test (limits, bad request) */
    EXPORTER_PARTIAL,     /* the test ran but ended early */
    EXPORTER_ERROR,       /* anything else */
    EXPORTER_REASONS
};

const char *exporter_reason_name(enum exporter_reason r);
/* Sorts client_run()'s failure (its return code and message) into a reason. */
enum exporter_reason exporter_classify(int rc, const char *err);

struct exporter;

/* c must outlive the exporter. NULL when out of memory. */
struct exporter *exporter_create(const struct exporter_config *c);
/* Runs the schedule on the calling thread until *stop is raised. */
void exporter_run(struct exporter *x, _Atomic int *stop);
/* The exposition (a prom_render_fn: ctx is the struct exporter). */
void exporter_render(void *x, struct prom_buf *b);
void exporter_destroy(struct exporter *x);

#endif
