/* policy: what a daemon allows a client: authentication (it sends the challenge of auth.h and
 * checks the answer), the per-test limits (--max-duration, --max-flows, --max-rate), the shape
 * of the server's side (threads at most the flows and the CPUs), what a test's results cost,
 * and the in-run rate meter (over the bytes the kernel moved, once a second). The client's half
 * (answering the challenge, the pacing named in `accept`) is in proto/: auth_answer_challenge,
 * ctl_accept_flow_rate. */
#ifndef NETRIG_POLICY_H
#define NETRIG_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "params.h"
#include "result.h"

/* The daemon's per-test limits; 0 means no limit. */
struct policy_limits {
    uint64_t max_duration_ns; /* longest test (omit included) */
    uint32_t max_flows;       /* most flows in one test */
    uint64_t max_rate_bps;    /* most bits/s one test may move */
};

/* Checks p against the limits. Returns 0, or -EPERM with a one-line message naming the limit.
 * Under --max-rate, tests of every kind are sampled at least once a second (the meter), and
 * TCP tests get per-flow pacing: p->fq_rate_bps and p->app_rate_bps are lowered to the test's
 * share for our senders and *flow_rate_bps tells the client to pace its senders likewise (a
 * client that cannot be told, an iperf3 one, has our receivers read at that share:
 * p->recv_rate_bps). */
int policy_check_limits(const struct policy_limits *l, struct params *p, uint64_t *flow_rate_bps,
                        char *msg, size_t len);

/* Sends a challenge and checks the answer for user. 0, or -EACCES / -errno with err. */
int policy_authenticate(int ctl, const struct auth *a, const char *user, int timeout_ms, char *err,
                        size_t errlen);

/* The server's worker threads for p on a machine with ncpu CPUs: at most the flows it runs
 * (a crr server: a listener per thread, at most the client's flows) and ncpu. Lowers
 * p->server_threads; returns the number asked for when it did, else 0. */
uint32_t policy_server_threads(struct params *p, uint32_t ncpu);

/* Memory the daemon takes to send a result of nflows flows and nintervals intervals (the JSON
 * tree and its text), for the memory charge. */
uint64_t policy_result_bytes(uint32_t nflows, uint32_t nintervals);

/* --max-rate, measured on the wire: intervals are summed until they span a second, then the
 * rate over that window is compared with the limit (10 % slack). */
/* --max-rate on the wire: a token bucket filled at the limit plus 10 % (the measurement's
 * tolerance), one second of the limit deep plus POLICY_METER_SLACK (a TCP connection's start
 * and the socket buffers' fill come in a burst the pacing cannot smooth). A test at the limit
 * never empties it; one over it by more than 10 % empties it within seconds, a flood within its
 * first interval. */
#define POLICY_METER_SLACK (1024.0 * 1024.0) /* bytes */
struct policy_meter {
    uint64_t limit_bps;
    bool started;
    double last_s; /* end of the last interval added */
    double tokens; /* bytes the test may still move at once */
    double window_s, window_bytes;
};

bool policy_meter_add(struct policy_meter *m, const struct interval *iv, double *bps);

#endif
