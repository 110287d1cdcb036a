/* server: the daemon's listener and its acceptor loop, which sorts new connections by their
 * first bytes (with a deadline): a control connection whose hello is in starts a session, a
 * data connection goes to its test through the registry of admit.h, an iperf3 cookie to
 * iperf3_server. No thread is started for a connection before its whole hello is in, and then
 * only within admit.h's handshake caps (the others wait in the table). The table of
 * connections not yet sorted is bounded in all (a quarter of the descriptors, at most 4096)
 * and per address (32): a new connection that finds it full pushes out the one that waited
 * longest. When accept fails for want of descriptors the acceptor frees one the same way, or
 * pauses 100 ms, never spins. It creates the state the tests share (admit.h: the descriptor
 * and --max-memory budgets) and their configuration (served.h), hands both down, and at
 * shutdown waits (bounded) for the tests to end. The top of daemon/: only loopsrv and the CLI
 * include this header. */
#ifndef NETRIG_SERVER_H
#define NETRIG_SERVER_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "acl.h"
#include "auth.h"
#include "served.h"

struct server_opts {
    char bind[256];
    uint16_t port;
    int family;
    enum served_hostsnap host_snapshot; /* SEND; --no-host-snapshot: DECLINE */

    uint32_t max_tests;            /* tests running at once */
    bool exclusive;                /* throughput tests run one at a time; others queue */
    int timeout_ms;                /* each control stage and each new connection's first bytes */
    uint32_t max_client_tests;     /* tests at once from one client address; 0 = no limit */
    uint64_t max_duration_ns;      /* longest test (omit included); 0 = no limit */
    uint32_t max_flows;            /* most flows in one test; 0 = no limit */
    uint64_t max_rate_bps;         /* most bits/s one test may move; 0 = no limit */
    uint64_t max_memory;           /* bytes all tests may hold together; 0 = a quarter of RAM */
    const struct acl *acl;         /* --allow / --deny; NULL = everyone */
    const struct auth *auth;       /* --auth-file; NULL = no authentication */
    struct metrics *metrics;       /* --metrics: events are counted here; NULL = none */
    const struct acl *third_party; /* --allow-third-party: controllers we run tests for */
    /* --allow-third-party-target: where such tests may go besides the controller itself */
    const struct acl *third_party_targets;
    const char *history_db;   /* --db: store the server's side of each test here; NULL = no */
    bool one_off;             /* -1: one test (max_tests 1), then server_run returns */
    uint64_t idle_timeout_ns; /* --idle-timeout: no test and no connection this long: reopen
                               * the listener (iperf3's restart), or with one_off return */
};

/* Why server_run returned. */
enum server_end {
    SERVER_END_STOP,    /* *stop was set */
    SERVER_END_ONE_OFF, /* one_off: its test ran and ended */
    SERVER_END_IDLE,    /* one_off with idle_timeout_ns: no test came in time */
};

struct server;

struct server *server_create(const struct server_opts *o, char *err, size_t errlen);
uint16_t server_port(const struct server *s);
/* The memory budget in force (--max-memory, or its default). */
uint64_t server_max_memory(const struct server *s);
/* Serves until *stop is set (or, with one_off, its test ended or the idle time ran out);
 * then waits (bounded) for running tests to end. An enum server_end, or -errno. */
int server_run(struct server *s, _Atomic int *stop);
void server_destroy(struct server *s);

#endif
