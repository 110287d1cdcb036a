/* tune_mtu: an MTU change is applied only when a probe toward --peer shows the whole path
 * carries the new size. Packets larger than this host's interface MTU cannot leave it, so the
 * proof comes in two steps:
 *   preflight (dry run and --apply, before anything changes): the route to the peer leaves by
 *     the interface the change is for, the peer answers ping, and it answers DF pings of the
 *     interface's present MTU (a hop that is already smaller, or drops big packets silently,
 *     holds the change back with what the probe saw);
 *   verify (--apply, right after the new MTU is written): the peer must answer a DF ping of the
 *     new size within a few seconds; a router that says "fragmentation needed", or silence,
 *     makes --apply put the old MTU back at once and report why.
 * The probes are pmtu.c's (raw ICMP echo, root). */
#ifndef NETRIG_TUNE_MTU_H
#define NETRIG_TUNE_MTU_H

#include "pmtu.h"
#include "tune_plan.h"

#include <stddef.h>

struct tune_mtu_peer {
    struct pmtu_peer p;
    char route_if[IF_NAMESIZE]; /* the interface the route to the peer leaves by */
    unsigned route_mtu;         /* the path MTU the kernel knows now */
    unsigned verify_ms;         /* how long verify waits for the new size (link resets) */
};

/* Resolves --peer and looks up its route. 0, or -1 with err (bad command line). */
int tune_mtu_open(const char *host, struct tune_mtu_peer *mp, char *err, size_t errlen);

/* For every MTU change of the plan that is not blocked or left out of --only: probes as above
 * and fills its probe text, or holds it back (its held) with what the probe found. 0, or -1
 * with err when no probe can be sent at all (not root). */
int tune_mtu_preflight(struct tune_plan *plan, const struct tune_mtu_peer *mp, char *err,
                       size_t errlen);

/* tune_apply's check right after an MTU change (arg: the struct tune_mtu_peer): 0 when the
 * peer answered a DF ping of the new size (why: what it took), -1 with why otherwise. */
int tune_mtu_verify(void *arg, const struct tune_change *c, char *why, size_t len);

#endif
