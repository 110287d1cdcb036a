/* multi: one test against several servers at once (`-c A -c B`). Each target is prepared in
 * turn (control exchange, data paths), its clock offset is measured over the control
 * connection, then all start at one agreed instant and run side by side; the result holds
 * each target's run and the totals across them. */
#ifndef NETRIG_MULTI_H
#define NETRIG_MULTI_H

#include <signal.h>
#include <stdint.h>

#include "client.h"
#include "result.h"

#define MULTI_MAX_TARGETS 32

struct multi_target {
    char host[256];
    uint16_t port;
};

struct multi_result {
    uint32_t n;
    struct multi_target targets[MULTI_MAX_TARGETS];
    struct run_result runs[MULTI_MAX_TARGETS];
    int rc[MULTI_MAX_TARGETS];            /* 0 complete, 1 partial, <0 failed */
    char err[MULTI_MAX_TARGETS][256];     /* why a target failed */
    int64_t offset_ns[MULTI_MAX_TARGETS]; /* server clock minus ours */
    uint64_t rtt_ns[MULTI_MAX_TARGETS];   /* of the probe that set the offset */
    uint64_t start_spread_ns;             /* latest minus earliest start */
    /* totals over the targets that ran */
    uint32_t ok, flows;
    double throughput_bps, jain_index, transactions_per_s;
    uint64_t bytes;
    uint32_t retransmits;
};

/* Parses "HOST", "HOST:PORT" or "[V6]:PORT" (default_port when none). */
int multi_parse_target(const char *s, uint16_t default_port, struct multi_target *t);

/* Runs the test of base against every target. Returns 0 when all completed, 1 when some
 * failed or were partial (see rc/err), <0 when none could run (err filled). */
int multi_run(const struct client_opts *base, struct multi_result *m, _Atomic int *stop, char *err,
              size_t errlen);
void multi_result_fini(struct multi_result *m);

#endif
