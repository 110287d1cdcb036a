/* client: runs a measurement (stream, rr, crr; TCP or UDP) against a netrig server (or an
 * in-process one) and fills a run_result; what it shows while it runs is the observer's. */
#ifndef NETRIG_CLIENT_H
#define NETRIG_CLIENT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "params.h"
#include "result.h"
#include "run_observer.h"
#include "sock.h"

struct client_opts {
    struct params p;
    char host[256];
    uint16_t port;
    int family;                   /* 0, 4 or 6 */
    char bind[256];               /* -B */
    char bind_dev[16];            /* --bind-dev: SO_BINDTODEVICE on every socket */
    uint16_t cport;               /* --cport: data flow i uses local port cport + i */
    char cpus[256];               /* -A: cpulist, "auto" or "" */
    int timeout_ms;               /* connect and control replies */
    char user[64];                /* --user: answer the server's challenge as this user */
    char credentials[256];        /* --credentials FILE (else $NETRIG_SECRET) */
    struct run_observer observer; /* what the run shows while it goes; zeroed: nothing */
    /* a warm-up (-O) that scales with the path: at least omit_rtts round trips of the control
     * connection's handshake and omit_min_ns (0: -O as given) */
    uint32_t omit_rtts;
    uint64_t omit_min_ns;
};

#define CLIENT_OMIT_MAX_NS (30ULL * 1000000000ULL) /* the scaled warm-up's cap */

/* Returns 0 on a complete run, 1 when results are partial (r->error says why), or a negative
 * errno when no result could be had (err says why). */
int client_run(const struct client_opts *o, _Atomic int *stop, struct run_result *r, char *err,
               size_t errlen);

/* The same in steps, for runs against several servers at once (multi.c): prepare sets up the
 * control exchange and the data paths; clock_offset measures the server's clock against ours
 * (server - client, from the fastest of five probes); go starts at start_at_ns on our
 * CLOCK_REALTIME (0 = now), telling the server its own start time, and runs to the end. */
struct client_session;
int client_prepare(const struct client_opts *o, struct run_result *r, struct client_session **out,
                   char *err, size_t errlen);
int client_clock_offset(struct client_session *s, int64_t *offset_ns, uint64_t *rtt_ns);
int client_go(struct client_session *s, _Atomic int *stop, uint64_t start_at_ns,
              int64_t server_offset_ns, char *err, size_t errlen);
void client_session_free(struct client_session *s);

/* What an engine's interval hook needs to show the interval: a client run's hook context
 * (client.c's, iperf3_client.c's) starts with one, so client_view_interval is the engine's
 * on_interval for both. */
struct ivjoin;
struct client_view {
    const struct run_observer *observer;
    const struct run_result *r;
    struct ivjoin *join; /* joins the server's streamed intervals; NULL: none streamed */
};
int client_view_interval(void *ctx, const struct side_result *s, const struct interval *iv);

/* Where the client's sockets start from: -B and --bind-dev, and for data flow `flow` (or -1
 * for the control connection) the --cport port. */
struct sock_local client_local(const struct client_opts *o, int flow);
/* What ends a run, for run_result.ended_by: "time", "bytes", "blocks", "interrupted", ... */
const char *client_end_name(const struct params *p, int engine_end);
/* The first bytes a server sent after our hello, when they are not netrig's: names the
 * server (iperf3, iperf2) and what to do. 1 = identified (err says), 0 = netrig (or nothing
 * yet). Waits at most timeout_ms for the first byte. stream: the test is a stream (an iperf3
 * server could run it with --iperf3; rr and crr it cannot). */
int client_sniff_server(int ctl, const char *where, bool stream, int timeout_ms, char *err,
                        size_t errlen);

#endif
