/* report_mptcp: each --mptcp flow's subflows in the text report. Rows are the sending end's
 * subflows (its sockets' TCP_INFO over each subflow's life: acked is what the receiver
 * acknowledged on it, share its part of the flow's acked bytes; bytes sent with retransmits
 * are in -J); "received" is the receiving end's count on the subflow with the same two
 * addresses, "-" when it reported none. */
#include "report_mptcp.h"
#include "test_kind.h"
#include "units.h"

#include <string.h>

#define MAX_FLOWS_SHOWN 16

static bool same_addr(const struct mptcpinfo_addr *a, const struct mptcpinfo_addr *b)
{
    return a->family && a->family == b->family && a->port == b->port &&
           !memcmp(a->addr, b->addr, sizeof(a->addr));
}

/* The receiver's subflow of the sender's s (local and remote swapped), or NULL. */
static const struct mptcpinfo_sub *peer_sub(const struct mptcpinfo *rx,
                                            const struct mptcpinfo_sub *s)
{
    for (uint32_t i = 0; rx && rx->valid && i < rx->nsub; i++)
        if (same_addr(&rx->sub[i].local, &s->remote) && same_addr(&rx->sub[i].remote, &s->local))
            return &rx->sub[i];
    return NULL;
}

static const struct mptcpinfo *side_mp(const struct side_result *s, uint32_t id)
{
    return s->mptcp && id < s->nmptcp && s->mptcp[id].valid ? &s->mptcp[id] : NULL;
}

static uint32_t sub_retrans(const struct mptcpinfo *m)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < m->nsub; i++)
        n += m->sub[i].retransmits;
    return n;
}

static void flow_rows(FILE *out, const struct mptcpinfo *tx, const struct mptcpinfo *rx)
{
    uint64_t total = 0;

    for (uint32_t i = 0; i < tx->nsub; i++)
        total += tx->sub[i].bytes_acked;
    for (uint32_t i = 0; i < tx->nsub; i++) {
        const struct mptcpinfo_sub *s = &tx->sub[i], *p = peer_sub(rx, s);
        char from[64], to[64], acked[32], recv[32] = "-", path[136];

        mptcpinfo_addr_str(&s->local, from, sizeof(from));
        mptcpinfo_addr_str(&s->remote, to, sizeof(to));
        snprintf(path, sizeof(path), "%s > %s", from, to);
        units_format_bytes((double)s->bytes_acked, acked, sizeof(acked));
        if (p)
            units_format_bytes((double)p->bytes_received, recv, sizeof(recv));
        fprintf(out, "  %-31s %10s %10s %5u %6.2fms %5.1f%%\n", path, acked, recv, s->retransmits,
                s->rtt_us / 1e3, total ? 100.0 * (double)s->bytes_acked / (double)total : 0.0);
    }
}

void report_mptcp_text(FILE *out, const struct run_result *r)
{
    uint32_t shown = 0;

    if (!test_kind_is(&r->params, TEST_KIND_MPTCP))
        return;
    fprintf(out, "\nMPTCP       each flow's subflows, counted by the sending end's sockets over "
                 "their life\n            (acked); received: the receiving end's count on the "
                 "same subflow\n");
    for (uint32_t i = 0; i < r->nflows; i++) {
        const struct flow_summary *f = &r->flows[i];
        const struct side_result *txs = f->client_sends ? &r->local : &r->remote;
        const struct side_result *rxs = f->client_sends ? &r->remote : &r->local;
        const struct mptcpinfo *tx = side_mp(txs, f->id), *rx = side_mp(rxs, f->id);
        const char *who = f->client_sends ? "client" : "server";

        if (shown++ == MAX_FLOWS_SHOWN) {
            fprintf(out, "  (%u more flows: their subflows are in the -J output)\n",
                    r->nflows - MAX_FLOWS_SHOWN);
            break;
        }
        if (!tx) {
            fprintf(out, "flow %u (%s): the %s reported no MPTCP figures%s\n", f->id,
                    f->client_sends ? "up" : "down", who,
                    f->client_sends ? "" : " (a server without MPTCP support?)");
            continue;
        }
        if (tx->fallback) {
            fprintf(out,
                    "flow %u (%s): fell back to plain TCP (the peer or the path did not "
                    "agree to MPTCP)\n",
                    f->id, f->client_sends ? "up" : "down");
            continue;
        }
        fprintf(out, "flow %u (%s, sent by the %s): %u subflow%s, %u retransmits in all\n", f->id,
                f->client_sends ? "up" : "down", who, tx->subflows, tx->subflows == 1 ? "" : "s",
                sub_retrans(tx));
        fprintf(out, "  %-31s %10s %10s %5s %8s %6s\n", "subflow: sender > receiver", "acked",
                "received", "retr", "rtt", "share");
        flow_rows(out, tx, rx);
    }
}
