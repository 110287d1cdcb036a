/* load: 'netrig load', latency under load, built from what the client and daemon already do.
 * Four ordinary runs against one daemon, each with its own control connection: a UDP and a TCP
 * latency probe (open-loop request/response at --probe-rate, every probe's time and latency
 * kept) from start to end, and between the baseline and the recovery the load — -P TCP streams
 * up and -P down — each prepared just before its start and started at an agreed instant. With
 * --classes the load has one flow per class each way and the UDP probe one flow per class, each
 * marked with its class on both ends (params.classes); the TCP probe stays unmarked. The
 * parts' results go into a load_result, which load_analyze cuts into phases. */
#ifndef NETRIG_LOAD_H
#define NETRIG_LOAD_H

#include <signal.h>
#include <stddef.h>

#include "client.h"
#include "load_result.h"

struct load_opts {
    struct client_opts base; /* the daemon, the connection options, the observer (its queue
                                notice only); base.p is not used */
    struct load_params lp;
};

/* Checks lp: one line in err, -EINVAL. */
int load_validate(const struct load_params *lp, char *err, size_t errlen);

/* Runs the load test and analyzes it. 0 when every part ran to its end, 1 when some part
 * failed or ended early (lr->error says which), <0 when nothing could run (err says why). */
int load_run(const struct load_opts *o, _Atomic int *stop, struct load_result *lr, char *err,
             size_t errlen);

/* What this host's kernel offers against bufferbloat (fq_codel, cake, fq), for the advice. */
void load_check_kernel(struct load_kernel *k);

#endif
