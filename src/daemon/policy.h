/* policy: what a daemon allows a client: authentication (it sends the challenge of auth.h and
 * checks the answer), the per-test limits (--max-duration, --max-flows, --max-rate) and the
 * in-run rate check. The client's half (answering the challenge, the pacing named in
 * `accept`) is in proto/: auth_answer_challenge, ctl_accept_flow_rate. */
#ifndef NETRIG_POLICY_H
#define NETRIG_POLICY_H

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
 * Under --max-rate, TCP tests get per-flow pacing: p->fq_rate_bps and p->app_rate_bps are
 * lowered to the test's share for our senders and *flow_rate_bps tells the client to pace its
 * senders likewise (a client that cannot be told, an iperf3 one, has our receivers read at that
 * share: p->recv_rate_bps). */
int policy_check_limits(const struct policy_limits *l, struct params *p, uint64_t *flow_rate_bps,
                        char *msg, size_t len);

/* Sends a challenge and checks the answer for user. 0, or -EACCES / -errno with err. */
int policy_authenticate(int ctl, const struct auth *a, const char *user, int timeout_ms, char *err,
                        size_t errlen);

/* Did this interval move more than the limit allows (10% slack)? */
int policy_rate_exceeded(uint64_t limit_bps, const struct interval *iv);

#endif
