/* server: the daemon's listener, its acceptor loop (which sorts new connections into control
 * and data by their first bytes, with a deadline), and the registry of running tests. */
#ifndef NETRIG_SERVER_H
#define NETRIG_SERVER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "acl.h"
#include "auth.h"
#include "ctl.h"
#include "policy.h"

struct server_opts {
    char bind[256];
    uint16_t port;
    int family;
    uint32_t max_tests;            /* tests running at once */
    bool exclusive;                /* throughput tests run one at a time; others queue */
    int timeout_ms;                /* each control stage and each new connection's first bytes */
    uint32_t max_client_tests;     /* tests at once from one client address; 0 = no limit */
    uint64_t max_duration_ns;      /* longest test (omit included); 0 = no limit */
    uint32_t max_flows;            /* most flows in one test; 0 = no limit */
    uint64_t max_rate_bps;         /* most bits/s one test may move; 0 = no limit */
    const struct acl *acl;         /* --allow / --deny; NULL = everyone */
    const struct auth *auth;       /* --auth-file; NULL = no authentication */
    struct metrics *metrics;       /* --metrics: events are counted here; NULL = none */
    const struct acl *third_party; /* --allow-third-party: controllers we run tests for */
    const char *history_db;        /* --db: store the server's side of each test here; NULL = no */
};

struct server;

struct server *server_create(const struct server_opts *o, char *err, size_t errlen);
uint16_t server_port(const struct server *s);
/* Serves until *stop is set; then waits (bounded) for running tests to end. */
int server_run(struct server *s, volatile sig_atomic_t *stop);
void server_destroy(struct server *s);

/* ---- used by session.c ---- */
const struct server_opts *server_opts(const struct server *s);
/* The per-test limits of the options (--max-duration, --max-flows, --max-rate). */
const struct policy_limits *server_limits(const struct server *s);
volatile sig_atomic_t *server_stop_flag(const struct server *s);
/* Admission: 0; -EBUSY when --max-tests tests run (their count in *running); -EUSERS when
 * this client address already runs --max-client-tests (its count in *running). */
int server_admit(struct server *s, const struct sockaddr *peer, uint32_t *running);
void server_release(struct server *s, const struct sockaddr *peer);
/* --exclusive: blocks up to wait_ms for the turn; *ahead tells how many hold or wait. */
int server_exclusive_acquire(struct server *s, int wait_ms, void (*queued)(void *, uint32_t),
                             void *ctx);
void server_exclusive_release(struct server *s);
/* Data connections for id are written to pipe_wr as (flow, fd) pairs until unregistered. */
int server_register(struct server *s, const uint8_t id[CTL_TEST_ID_LEN], int pipe_wr);
void server_unregister(struct server *s, const uint8_t id[CTL_TEST_ID_LEN]);
void server_session_started(struct server *s);
void server_session_done(struct server *s);
/* ---- used by iperf3_server.c ---- */
/* The daemon's registry of iperf3 tests (cookies routing their streams, the UDP turn). */
struct iperf3_registry *server_iperf3(struct server *s);

#endif
