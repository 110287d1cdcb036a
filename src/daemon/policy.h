/* policy: what a daemon allows a client: authentication (challenge-response, see auth.h) and
 * the per-test limits (--max-duration, --max-flows, --max-rate). */
#ifndef NETRIG_POLICY_H
#define NETRIG_POLICY_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "params.h"
#include "result.h"

struct server_opts;

/* Server: checks p against the limits. Returns 0, or -EPERM with a one-line message naming
 * the limit. Under --max-rate, TCP tests get per-flow pacing: p->fq_rate_bps is lowered to the
 * test's share and *flow_rate_bps tells the client to pace its senders likewise. */
int policy_check_limits(const struct server_opts *o, struct params *p, uint64_t *flow_rate_bps,
                        char *msg, size_t len);

/* Server: sends a challenge and checks the answer for user. 0, or -EACCES / -errno with err. */
int policy_authenticate(int ctl, const struct auth *a, const char *user, int timeout_ms, char *err,
                        size_t errlen);

/* Client: answers a "challenge" message. */
int policy_answer_challenge(int ctl, const cJSON *challenge, const char *user, const char *secret,
                            int timeout_ms, char *err, size_t errlen);

/* Server: did this interval move more than the limit allows (10% slack)? */
int policy_rate_exceeded(uint64_t limit_bps, const struct interval *iv);

#endif
