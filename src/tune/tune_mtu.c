/* tune_mtu: path-MTU probes before and right after an MTU change. */
#define _GNU_SOURCE
#include "tune_mtu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMALL_PROBE    64   /* bytes: any path carries it */
#define PROBE_MS       2000 /* preflight probes */
#define VERIFY_MS      6000 /* after the change: a NIC may take seconds to bring its link up */
#define PROBE_EVERY_MS 250

int tune_mtu_open(const char *host, struct tune_mtu_peer *mp, char *err, size_t errlen)
{
    memset(mp, 0, sizeof(*mp));
    mp->verify_ms = VERIFY_MS;
    if (pmtu_resolve(host, &mp->p, err, errlen) ||
        pmtu_route(&mp->p, mp->route_if, &mp->route_mtu, err, errlen))
        return -1;
    return 0;
}

static unsigned value_of(const char *s)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);

    return end != s && v <= 65535 ? (unsigned)v : 0;
}

/* Holds c back with why, unless something else holds it already. */
static void hold(struct tune_change *c, const char *why)
{
    snprintf(c->held, sizeof(c->held), "%s", why);
}

static void preflight_one(struct tune_change *c, const struct tune_mtu_peer *mp,
                          const struct pmtu_result *small, unsigned now)
{
    const char *peer = mp->p.host;
    struct pmtu_result r;
    char err[256], why[AUDIT_TEXT_LEN];

    if (small->verdict == PMTU_UNREACHED) {
        snprintf(why, sizeof(why),
                 "%s says %s cannot be reached: the path cannot be proved, so "
                 "the MTU stays",
                 small->from, peer);
        hold(c, why);
        return;
    }
    if (small->verdict != PMTU_CARRIED) {
        snprintf(why, sizeof(why),
                 "%s does not answer ping (ICMP echo): the path cannot be proved, so the MTU "
                 "stays; give a --peer that answers ping",
                 peer);
        hold(c, why);
        return;
    }
    if (pmtu_probe(&mp->p, now, PROBE_MS, PROBE_EVERY_MS, &r, err, sizeof(err))) {
        hold(c, err);
        return;
    }
    if (r.verdict == PMTU_CARRIED) {
        snprintf(c->probe, sizeof(c->probe),
                 "%s answers don't-fragment pings of %u bytes (%s's MTU now) in %.1f ms; %s is "
                 "tried right after the change and kept only if %s answers %s-byte ones too, "
                 "else %u is put back at once",
                 peer, now, c->iface, r.rtt_ms, c->new_value, peer, c->new_value, now);
        return;
    }
    if (r.verdict == PMTU_TOO_BIG)
        snprintf(why, sizeof(why),
                 "the path to %s carries only %u-byte packets (%s says so), less than %s's %u "
                 "now: a larger MTU would only be dropped there",
                 peer, r.mtu, r.from, c->iface, now);
    else if (r.verdict == PMTU_LOCAL)
        snprintf(why, sizeof(why),
                 "this host cannot send %u-byte packets toward %s (its route allows %u): fix the "
                 "route's MTU first",
                 now, peer, mp->route_mtu);
    else
        snprintf(why, sizeof(why),
                 "%s answers small pings but not %u-byte ones (%s's MTU now): a hop drops big "
                 "packets without saying so (a path-MTU black hole); fix that before raising "
                 "the MTU",
                 peer, now, c->iface);
    hold(c, why);
}

int tune_mtu_preflight(struct tune_plan *plan, const struct tune_mtu_peer *mp, char *err,
                       size_t errlen)
{
    struct pmtu_result small;
    bool probed = false;

    snprintf(plan->peer, sizeof(plan->peer), "%s", mp->p.host);
    snprintf(plan->peer_addr, sizeof(plan->peer_addr), "%s", mp->p.addr);
    snprintf(plan->peer_route, sizeof(plan->peer_route), "%s", mp->route_if);
    plan->peer_mtu = mp->route_mtu;
    for (size_t i = 0; i < plan->nchanges; i++) {
        struct tune_change *c = &plan->changes[i];
        unsigned now = value_of(c->old_value);
        if (!c->mtu || c->blocked[0] || !strncmp(c->held, "not named", 9))
            continue;
        if (strcmp(c->iface, mp->route_if)) {
            char why[AUDIT_TEXT_LEN];
            snprintf(why, sizeof(why),
                     "the route to %s leaves by %s, not %s: a probe toward it says nothing "
                     "about %s's path; give a --peer reached through %s",
                     mp->p.host, mp->route_if, c->iface, c->iface, c->iface);
            hold(c, why);
            continue;
        }
        if (!probed &&
            pmtu_probe(&mp->p, SMALL_PROBE, PROBE_MS, PROBE_EVERY_MS, &small, err, errlen))
            return -1;
        probed = plan->peer_probed = true;
        if (now < SMALL_PROBE) {
            hold(c, "the interface's MTU now cannot be read: nothing to probe from");
            continue;
        }
        preflight_one(c, mp, &small, now);
    }
    return 0;
}

int tune_mtu_verify(void *arg, const struct tune_change *c, char *why, size_t len)
{
    const struct tune_mtu_peer *mp = arg;
    const char *peer = mp->p.host;
    unsigned want = value_of(c->new_value);
    struct pmtu_result r, small;
    char err[256];

    if (!want || pmtu_probe(&mp->p, want, mp->verify_ms, PROBE_EVERY_MS, &r, err, sizeof(err))) {
        snprintf(why, len, "no probe could be sent (%s)", want ? err : "bad MTU");
        return -1;
    }
    if (r.verdict == PMTU_CARRIED) {
        snprintf(why, len, "%s answered a %u-byte don't-fragment ping in %.1f ms", peer, want,
                 r.rtt_ms);
        return 0;
    }
    if (r.verdict == PMTU_TOO_BIG)
        snprintf(why, len, "%s says the path to %s carries only %u-byte packets", r.from, peer,
                 r.mtu);
    else if (r.verdict == PMTU_LOCAL)
        snprintf(why, len, "this host could not send %u-byte packets toward %s", want, peer);
    else if (r.verdict == PMTU_UNREACHED)
        snprintf(why, len, "%s says %s cannot be reached", r.from, peer);
    else if (!pmtu_probe(&mp->p, SMALL_PROBE, PROBE_MS, PROBE_EVERY_MS, &small, err, sizeof(err)) &&
             small.verdict == PMTU_CARRIED)
        snprintf(why, len,
                 "%s answers small pings but no %u-byte one came back in %.0f s: a hop drops "
                 "big packets without saying so (a path-MTU black hole)",
                 peer, want, mp->verify_ms / 1e3);
    else
        snprintf(why, len, "%s stopped answering pings after the change (is the link up?)", peer);
    return -1;
}
