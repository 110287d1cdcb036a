/* diagnose_attach: `netrig diagnose --during` — no test of our own: the established TCP
 * connections with an end on PORT (and the other at HOST, when given) are sampled twice,
 * duration apart (sockdiag), with this host's counters around it, and the connections that
 * sent data in between become the diagnosis sample. */
#ifndef NETRIG_DIAGNOSE_ATTACH_H
#define NETRIG_DIAGNOSE_ATTACH_H

#include "diagnose.h"

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

struct diagnose_attach_opts {
    const char *host;     /* "" or NULL = any peer */
    uint16_t port;        /* the test's port (the server's) */
    uint64_t duration_ns; /* time between the two samples */
};

/* Returns 0 with s and what filled, or -1 with err (no such connection moved data, this host
 * only receives on them, sock_diag unavailable, interrupted). */
int diagnose_attach_run(const struct diagnose_attach_opts *o, _Atomic int *stop,
                        struct diagnose_sample *s, char *what, size_t whatlen, char *err,
                        size_t errlen);

#endif
