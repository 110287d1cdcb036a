/* ivjoin: the client's intervals joined with the server's, so that every interval shows the
 * senders' retransmits. In a test where the server sends TCP flows (-R, --bidir) it is the
 * server's TCP_INFO that counts them: the client asks the server to stream its intervals
 * ("interval" messages on the control connection), holds each of its own intervals until the
 * server's for the same period is in (or hold_ns has passed: then it is shown with the server's
 * part unknown), adds the server's retransmits (per flow too, when the server lists them),
 * and hands it to the observer, in order. What is still unknown when the run ends is filled in
 * from the server's final results. Everything runs on the engine's thread, then the caller's. */
#ifndef NETRIG_IVJOIN_H
#define NETRIG_IVJOIN_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "result.h"
#include "run_observer.h"

/* Our intervals held at most, waiting for the server's; past it the oldest is shown. */
#define IVJOIN_MAX_HELD 256
/* The server's intervals kept at most while ours for the same period has not closed. */
#define IVJOIN_MAX_EARLY 64

struct ivjoin;

/* obs and r outlive the join. streams: the server was asked to stream its intervals (so ours
 * wait for them); without, an interval that needs the server's part is shown at once with it
 * unknown (an iperf3 server). NULL when out of memory. */
struct ivjoin *ivjoin_new(const struct run_observer *obs, const struct run_result *r, bool streams);
void ivjoin_free(struct ivjoin *j);

/* Our engine closed interval iv of side s (s->intervals[k]), at now_ns (monotonic). */
void ivjoin_local(struct ivjoin *j, struct side_result *s, struct interval *iv, uint64_t now_ns);
/* An "interval" message from the server. 0, or -EINVAL when it is malformed (ignored). */
int ivjoin_remote(struct ivjoin *j, const cJSON *msg, uint64_t now_ns);
/* Our intervals moved (engine_finish hands them to the run result): use s from now on. */
void ivjoin_rebase(struct ivjoin *j, struct side_result *s);
/* The run is over: fills what is still unknown from the server's final intervals (remote,
 * when it reported), and shows every interval still held. */
void ivjoin_finish(struct ivjoin *j, const struct side_result *remote);

#endif
