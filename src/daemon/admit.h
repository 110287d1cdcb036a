/* admit: the state that the daemon's tests share, behind one lock: admission (--max-tests,
 * --max-client-tests), the connections between their hello and their admission (the
 * handshakes: capped in all and per address, sshd's MaxStartups idea), the resources the
 * admitted tests hold (memory, --max-memory, and file descriptors), the exclusive turn
 * (--exclusive), the registry that routes a data
 * connection to the test that owns it (by netrig test id or iperf3 cookie), the UDP set-up turn
 * of iperf3 tests (they share the daemon's port), and the count of test threads alive. The
 * acceptor (server.c) creates it and hands it down; the tests (session.c, iperf3_server.c,
 * thirdparty_serve.c) draw on it through this handle and never call back up. Every limit
 * here is the daemon's own counter: nothing depends on what a client says. */
#ifndef NETRIG_ADMIT_H
#define NETRIG_ADMIT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define ADMIT_CLIENTS_MAX         1024 /* client addresses with tests admitted at once */
#define ADMIT_NETRIG_MAX          1024 /* netrig tests gathering data connections at once */
#define ADMIT_IPERF3_MAX          256  /* iperf3 tests registered at once */
#define ADMIT_KEY_MAX             40   /* bytes, at least the longest key below */
#define ADMIT_HANDSHAKES_MAX      64   /* connections past their hello, not yet admitted */
#define ADMIT_HANDSHAKES_PER_PEER 8    /* ... from one address */
#define ADMIT_UDP_WAITERS         64   /* iperf3 UDP set-ups waiting for the turn */
#define ADMIT_UDP_WAIT_TURNS      8    /* a waiter waits for at most this many turns */
#define ADMIT_FD_SHARE_DIV        2    /* one address holds at most 1/this of the descriptors */

struct admit_limits {
    uint32_t max_tests;        /* tests admitted at once */
    uint32_t max_client_tests; /* tests at once from one client address; 0 = no limit */
    uint64_t max_memory;       /* bytes the admitted tests may hold together; 0 = no limit */
    uint32_t max_fds;          /* descriptors they may hold together; 0 = no limit */
    bool one_off;              /* serve -1: max_tests is 1 because one test is all it runs */
};

struct admit;

/* NULL when out of memory. */
struct admit *admit_create(const struct admit_limits *l);
void admit_destroy(struct admit *a);
const struct admit_limits *admit_limits(const struct admit *a);

/* ---- admission: what counts against --max-tests and --max-client-tests */

/* 0: admitted (*running: the tests admitted now). -EBUSY: max_tests tests are admitted, or
 * ADMIT_CLIENTS_MAX addresses hold tests (*running: the tests admitted). -EUSERS: this address
 * (IPv4-mapped IPv6 counted as IPv4, port ignored) already runs max_client_tests (*running:
 * its count). */
int admit_enter(struct admit *a, const struct sockaddr *peer, uint32_t *running);
void admit_leave(struct admit *a, const struct sockaddr *peer);

/* ---- handshakes: a connection that said hello, until its test is admitted or refused */

/* 0, -EBUSY (ADMIT_HANDSHAKES_MAX are under way) or -EUSERS (this address has
 * ADMIT_HANDSHAKES_PER_PEER under way, or ADMIT_CLIENTS_MAX addresses are busy). */
int admit_handshake_enter(struct admit *a, const struct sockaddr *peer);
void admit_handshake_leave(struct admit *a, const struct sockaddr *peer);

/* ---- resources the admitted tests hold (charged before they are allocated) */

struct admit_usage {
    uint64_t bytes; /* memory */
    uint32_t fds;
};

/* Charges a test of peer (admitted: admit_enter) its memory and descriptors: 0, or -ENOMEM
 * (over max_memory) / -EMFILE (over max_fds) with *in_use: what the other tests hold, or
 * -EDQUOT: over the address's share of max_fds (admit_fd_share), in_use->fds: what the
 * address's other tests hold. A reservation lasts until admit_uncharge: the tests give it back
 * when their data connections miss the set-up deadline. */
int admit_charge(struct admit *a, const struct sockaddr *peer, const struct admit_usage *want,
                 struct admit_usage *in_use);
void admit_uncharge(struct admit *a, const struct sockaddr *peer, const struct admit_usage *held);
/* The descriptors the tests of one client address may hold together: 1/ADMIT_FD_SHARE_DIV of
 * max_fds, so that no one address can take the whole budget. */
uint32_t admit_fd_share(const struct admit_limits *l);

/* ---- the exclusive turn: one holder at a time, the others wait */

/* Waits up to wait_ms for the turn. Before waiting it calls queued(ctx, ahead) once (unless
 * NULL) with the number of tests holding or waiting. 0 (taken), or -ETIMEDOUT when the time ran
 * out or *stop was set. */
int admit_exclusive_acquire(struct admit *a, int wait_ms, const _Atomic int *stop,
                            void (*queued)(void *ctx, uint32_t ahead), void *ctx);
void admit_exclusive_release(struct admit *a);

/* ---- routing: data connections to the test that owns them */

enum admit_key {
    ADMIT_KEY_NETRIG, /* a 16-byte test id (CTL_TEST_ID_LEN), from the data connection hello */
    ADMIT_KEY_IPERF3, /* a 37-byte iperf3 cookie (IPERF3_COOKIE_LEN), each stream's first bytes */
};

/* The length of a key of this kind. */
size_t admit_key_len(enum admit_key kind);

/* What a test's pipe carries for each connection routed to it (flow: 0 for iperf3). */
struct admit_conn {
    uint32_t flow;
    int fd;
};

/* Connections for key are written to pipe_wr (non-blocking) until it is closed or removed.
 * 0, -EEXIST (the key is registered) or -ENOSPC (the registry of that kind is full). */
int admit_register(struct admit *a, enum admit_key kind, const void *key, int pipe_wr);
/* The test has all its connections: later ones for key are refused (admit_route: -1). */
void admit_close(struct admit *a, enum admit_key kind, const void *key);
void admit_unregister(struct admit *a, enum admit_key kind, const void *key);
/* Is key registered? 1 (taking connections), 0 (no) or -1 (it has all of them). */
int admit_registered(struct admit *a, enum admit_key kind, const void *key);
/* Hands fd to the test registered under key. 1 (its pipe has it), 0 (no such test) or -1
 * (closed, or its pipe is full): fd stays the caller's unless 1. */
int admit_route(struct admit *a, enum admit_key kind, const void *key, uint32_t flow, int fd);

/* ---- iperf3 UDP set-up: one test at a time sorts the datagrams on the daemon's UDP port */

/* 0, or -EBUSY when other tests kept the turn (or ADMIT_UDP_WAITERS wait already). Fair by
 * address: a turn given back goes to the waiter whose address (peer) had the turn least
 * recently, and a waiter waits wait_ms for the holder plus wait_ms for each other address
 * waiting (ADMIT_UDP_WAIT_TURNS in all at most), so set-ups queued from some addresses cannot
 * starve another's. */
int admit_udp_turn_take(struct admit *a, const struct sockaddr *peer, int wait_ms);
void admit_udp_turn_give(struct admit *a);

/* ---- authentication failures: a back-off per address and per user, and the log's rate */

#define ADMIT_AUTH_FREE      3     /* failures without delay, per address and per user */
#define ADMIT_AUTH_BASE_MS   100   /* the first delay after them; each next one doubles ... */
#define ADMIT_AUTH_CAP_MS    2000  /* ... up to this */
#define ADMIT_AUTH_FORGET_MS 60000 /* a key with no failure this long starts afresh */
#define ADMIT_AUTH_KEYS      512   /* addresses and users remembered (the oldest forgotten) */

/* A failed authentication from peer as user: how long (ms) the daemon waits before it answers
 * this one (the larger of the address's and the user's back-off). *log: whether this failure
 * may be logged (one a second), *suppressed: how many were not logged before it. */
uint32_t admit_auth_failed(struct admit *a, const struct sockaddr *peer, const char *user,
                           bool *log, uint64_t *suppressed);
/* A success: the address and the user start afresh. */
void admit_auth_ok(struct admit *a, const struct sockaddr *peer, const char *user);

/* ---- test threads, so that shutdown can wait for them */

void admit_thread_started(struct admit *a);
void admit_thread_done(struct admit *a);
/* Waits up to wait_ms for every test thread to end; returns how many are still alive. */
uint32_t admit_wait_threads(struct admit *a, int wait_ms);
/* Test threads alive now (tests running, being set up or refused). */
uint32_t admit_threads_alive(struct admit *a);

/* ---- tests that ran (serve -1 ends after the first) */

/* A test that started its run has ended (whatever its outcome). */
void admit_test_ran(struct admit *a);
/* How many have. */
uint64_t admit_tests_ran(struct admit *a);

#endif
