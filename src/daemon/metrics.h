/* metrics: what 'netrig serve --metrics' exposes to Prometheus. The daemon's sessions report
 * a few events (a test started or ended, a refusal, a control error); a scrape renders the
 * counters. Thread-safe behind one mutex: nothing here is on the data hot path. Every call
 * accepts a NULL registry and then does nothing, so a daemon without --metrics pays nothing. */
#ifndef NETRIG_METRICS_H
#define NETRIG_METRICS_H

#include <stdbool.h>
#include <sys/socket.h>

#include "params.h"
#include "prom.h"
#include "result.h"

/* Last results are kept for this many client addresses (the least recent is forgotten). */
#define METRICS_MAX_CLIENTS 64

enum metrics_refusal {
    METRICS_REFUSED_BUSY,        /* --max-tests, --max-client-tests, --exclusive queue */
    METRICS_REFUSED_LIMIT,       /* --max-duration, --max-flows, --max-rate */
    METRICS_REFUSED_AUTH_FAILED, /* --auth-file */
    METRICS_REFUSED_BAD_REQUEST, /* malformed or unsupported request */
    METRICS_REFUSED_ACL,         /* --allow / --deny */
    METRICS_REFUSED_N
};

/* Where a control connection failed without a refusal (timeouts, hang-ups, garbage). */
enum metrics_stage {
    METRICS_STAGE_CONNECT, /* before saying what it is (unknown bytes, silence, stray data) */
    METRICS_STAGE_HELLO,   /* reading the test request */
    METRICS_STAGE_SETUP,   /* data connections, ready/start */
    METRICS_STAGE_RUN,     /* during the test */
    METRICS_STAGE_N
};

struct metrics;

struct metrics *metrics_create(void);
void metrics_destroy(struct metrics *m);

void metrics_test_started(struct metrics *m, const struct params *p);
/* The server's side of a test that ran; complete: the client asked to stop on time. */
void metrics_test_done(struct metrics *m, const struct params *p, const struct sockaddr *peer,
                       const struct side_result *side, bool complete);
void metrics_refused(struct metrics *m, enum metrics_refusal why);
void metrics_control_error(struct metrics *m, enum metrics_stage stage);

/* The exposition (a prom_render_fn: ctx is the struct metrics). */
void metrics_render(void *m, struct prom_buf *b);

#endif
