/* served: what the daemon gives every test it serves (session.c, iperf3_server.c,
 * thirdparty_serve.c) besides the shared state of admit.h: its configuration. */
#ifndef NETRIG_SERVED_H
#define NETRIG_SERVED_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "acl.h"
#include "admit.h"
#include "auth.h"
#include "metrics.h"
#include "policy.h"

/* Set by the acceptor before the first test starts; read-only for the tests. */
struct served_conf {
    int timeout_ms;                /* each control stage */
    bool exclusive;                /* --exclusive: throughput tests run one at a time */
    struct policy_limits limits;   /* --max-duration, --max-flows, --max-rate */
    const struct auth *auth;       /* --auth-file; NULL = no authentication */
    struct metrics *metrics;       /* --metrics: events are counted here; NULL = none */
    const struct acl *third_party; /* --allow-third-party: controllers we run tests for */
    const char *history_db;        /* --db: the server's side of each test goes here; NULL = no */
    uint16_t port;                 /* the daemon's port (iperf3 UDP streams use it on UDP too) */
    volatile sig_atomic_t *stop;   /* raised when the daemon shuts down */
};

#endif
