/* served: what every test the daemon serves has in common, whatever its protocol (a netrig
 * client in session.c, an iperf3 client in iperf3_server.c, a controller's run request in
 * thirdparty_serve.c): the daemon's configuration (served_conf); its control connection and
 * peer; what it holds of the shared state of admit.h (its admission, the exclusive turn, its
 * entry in the routing registry and the pipe behind it, its thread); and the two ways every
 * test ends: refused (served_refuse: the hold given back, one log line, the --metrics count,
 * the error in the client's protocol) or torn down (served_teardown: everything given back). */
#ifndef NETRIG_SERVED_H
#define NETRIG_SERVED_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "acl.h"
#include "admit.h"
#include "flow.h"
#include "auth.h"
#include "metrics.h"
#include "policy.h"

/* What a daemon does with its host's settings (hostsnap) at the end of a test. */
enum served_hostsnap {
    SERVED_HOSTSNAP_SEND,    /* take them (in its namespace) and send them with the results */
    SERVED_HOSTSNAP_DECLINE, /* serve --no-host-snapshot: send none, and say it declined */
    SERVED_HOSTSNAP_NONE,    /* the built-in loopback server: the client's host, sent by nobody */
};

/* Set by the acceptor before the first test starts; read-only for the tests. */
struct served_conf {
    int timeout_ms;                        /* each control stage */
    bool exclusive;                        /* --exclusive: throughput tests run one at a time */
    struct policy_limits limits;           /* --max-duration, --max-flows, --max-rate */
    const struct auth *auth;               /* --auth-file; NULL = no authentication */
    struct metrics *metrics;               /* --metrics: events are counted here; NULL = none */
    const struct acl *third_party;         /* --allow-third-party: controllers we run tests for */
    const struct acl *third_party_targets; /* --allow-third-party-target; NULL: none */
    const char *history_db; /* --db: the server's side of each test goes here; NULL = no */
    uint16_t port;          /* the daemon's port (iperf3 UDP streams use it on UDP too) */
    bool mptcp;             /* the listener is MPTCP: --mptcp clients' data connections are */
    char mptcp_note[160];   /* when not, why (mptcpinfo_why_not) */
    _Atomic int *stop;      /* raised when the daemon shuts down */

    /* this host's settings with a test's results (and a third-party run's) */
    enum served_hostsnap host_snapshot;
};

/* One test being served. Embedded in each kind's own state; served_init fills it. */
struct served {
    const struct served_conf *conf;
    struct admit *admit;
    const char *label; /* how log lines name the peer: "client", "iperf3 client", "controller" */
    bool iperf3;       /* refused in iperf3's words rather than netrig's */
    int ctl;           /* the control connection (owned: teardown closes it) */
    struct sockaddr_storage peer;
    char who[80];               /* peer as text */
    bool handshaking;           /* counted by admit_handshake_enter (until admitted) */
    bool admitted, exclusive;   /* counted by admit_enter; holds the exclusive turn */
    struct admit_usage charged; /* memory and descriptors charged to the test */
    bool registered;            /* key is in the routing registry */
    enum admit_key kind;        /* ... under this kind */
    uint8_t key[ADMIT_KEY_MAX]; /* the test id or iperf3 cookie */
    int pipe_rd, pipe_wr;       /* where the registry hands connections (-1: none) */
    bool ran;                   /* its run started (served_ran): counted when it ends */
};

/* The caller (the acceptor) entered a handshake for peer (admit_handshake_enter): the test
 * holds it until it is admitted or ends. */
void served_init(struct served *t, const struct served_conf *c, struct admit *a, const char *label,
                 bool iperf3, int ctl, const struct sockaddr_storage *peer);
/* Starts main(arg) on a detached thread counted by admit (served_teardown ends the count).
 * 0, or -errno when no thread could be started: then ctl is closed and the caller frees. */
int served_spawn(struct served *t, void *(*main)(void *), void *arg);

/* admit_enter for this test (its handshake ends): 0, -EBUSY or -EUSERS with *running as
 * there. */
int served_admit(struct served *t, uint32_t *running);
/* Charges what the server's side of test p takes (engine_plan for kind, the result on its way
 * back) before any of it is allocated: 0, or -ENOMEM (over --max-memory) / -EMFILE (over the
 * descriptors left) with msg naming the need, the budget and what other tests hold. */
int served_charge(struct served *t, const struct flow_kind *kind, const struct params *p, char *msg,
                  size_t len);
/* admit_exclusive_acquire for this test (gives up when the daemon stops): 0 or -ETIMEDOUT. */
int served_exclusive(struct served *t, int wait_ms, void (*queued)(void *ctx, uint32_t ahead),
                     void *ctx);
/* Gives back the handshake, the admission and the exclusive turn, if held; the memory stays
 * charged (a test that ran: its results are still to be sent). */
void served_release_slot(struct served *t);
/* The same and the charge (refusal and teardown do it). */
void served_release(struct served *t);
/* The test's run starts (its workers, or a third-party client run): teardown then counts it
 * as a test that ran (admit_test_ran; serve -1 exits after the first). */
void served_ran(struct served *t);

/* Opens the pipe and registers key (CTL_TEST_ID_LEN or IPERF3_COOKIE_LEN bytes by kind):
 * 0, -EEXIST or -ENOSPC (admit_register), or -errno when no pipe could be made. */
int served_register(struct served *t, enum admit_key kind, const void *key);
/* All its connections are in: later ones are refused; those routed meanwhile are closed. */
void served_close(struct served *t);
/* Out of the registry; connections routed meanwhile are closed. */
void served_unregister(struct served *t);

/* How a refusal is counted in --metrics: an enum metrics_refusal, or one of these. */
#define SERVED_SETUP_ERROR (-1) /* a control error while setting up (METRICS_STAGE_SETUP) */
#define SERVED_UNCOUNTED   (-2)

/* What a refused client is told, in its protocol. */
struct served_refusal {
    int count;        /* see above */
    const char *code; /* netrig: the error message's code ("busy", "limit", "bad_request", ...) */
    int i3_code;      /* iperf3: the error number its client prints; 0: ACCESS_DENIED (busy) */
    int i3_errno;     /* iperf3: the errno that goes with it */
    bool quiet;       /* not logged (the log's rate of such refusals is spent) */
};

/* Refuses the test: gives back its admission and exclusive turn first (so that the client,
 * told, may retry at once), logs "<label> <who>: refused: <text>", counts it, and sends the
 * error: a netrig "error" message with r.code and the text, or iperf3's error or ACCESS_DENIED
 * state. */
void served_refuse(struct served *t, struct served_refusal r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A running test the server stops (over --max-rate): the same log ("stopped:"), count and
 * error, but its hold stays until teardown, after the engine has ended. */
void served_stop(struct served *t, struct served_refusal r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* --auth-file: the challenge for user (the client's name; "" = none given). A failure is
 * answered after the address's and the user's back-off (admit_auth_failed), refused with r
 * (logged at most once a second, with the count of those not logged), and returned as -errno;
 * a success clears both back-offs. No --auth-file: 0. */
int served_authenticate(struct served *t, const char *user, struct served_refusal r);

/* Gives everything back: registry entry (closing what was routed meanwhile), pipe, admission,
 * exclusive turn, the control connection and the thread count. The caller destroys its own
 * engine and sockets first, and frees the memory that holds t after. */
void served_teardown(struct served *t);

#endif
