/* multi_result: what one test against several servers at once (`-c A -c B`, client/multi.c)
 * measured: each target's run, how well their starts agreed, and the totals across them. The
 * renderers read it; only the client fills it. */
#ifndef NETRIG_MULTI_RESULT_H
#define NETRIG_MULTI_RESULT_H

#include <stdint.h>

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

/* Frees what each target's run holds. */
void multi_result_fini(struct multi_result *m);

#endif
