/* audit_bufcap: the share of a socket buffer that carries data (see the header). */
#include "audit_bufcap.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#define RX_SHARE_LO 0.5  /* the kernel's own starting ratio, and 1500-byte frames at worst */
#define RX_SHARE_HI 0.93 /* 64 KB GRO/TSO aggregates */
#define TX_SHARE_LO 0.5  /* refilled at two thirds; paced (bbr): part of it waits unsent */
#define TX_SHARE_HI 0.98 /* a full buffer of 64 KB TSO skbs */

static void receive_model(int kmajor, int kminor, int s, struct audit_bufcap *m)
{
    bool ignored = kmajor == 0 || kmajor > 6 || (kmajor == 6 && kminor >= 6);

    if (ignored || s == AUDIT_BUFCAP_AWS_UNKNOWN) {
        m->lo = RX_SHARE_LO;
        m->hi = RX_SHARE_HI;
        snprintf(m->basis, sizeof(m->basis),
                 "%s: the kernel's payload/truesize ratio, 1/2 until it measures, up to 0.93",
                 ignored ? "6.6+" : "tcp_adv_win_scale unknown");
        return;
    }
    if (s > 30)
        s = 30;
    if (s < -30)
        s = -30;
    m->lo = m->hi = s > 0 ? 1 - ldexp(1, -s) : ldexp(1, s);
    snprintf(m->basis, sizeof(m->basis), "tcp_adv_win_scale %d: %g of it", s, m->lo);
}

void audit_bufcap_model(enum audit_bufcap_side side, int kmajor, int kminor, int adv_win_scale,
                        struct audit_bufcap *m)
{
    if (side == AUDIT_BUFCAP_RECEIVE) {
        receive_model(kmajor, kminor, adv_win_scale, m);
        return;
    }
    m->lo = TX_SHARE_LO;
    m->hi = TX_SHARE_HI;
    snprintf(m->basis, sizeof(m->basis),
             "skb overhead, refills when a third is free, unsent data a paced sender holds: "
             "0.5-0.98 of it");
}

void audit_bufcap_rate(const struct audit_bufcap *m, double buf, double rtt_s, double *lo_bps,
                       double *hi_bps)
{
    double r = rtt_s > 0 ? buf * 8 / rtt_s : 0;

    *lo_bps = r * m->lo;
    *hi_bps = r * m->hi;
}

uint64_t audit_bufcap_size_for(const struct audit_bufcap *m, double bdp)
{
    double need = fmax(2 * bdp, m->lo > 0 ? bdp / m->lo : 2 * bdp);
    uint64_t v = 4ULL << 20;

    while ((double)v < need && v < (1ULL << 31))
        v <<= 1;
    return v > INT_MAX ? INT_MAX : v;
}
