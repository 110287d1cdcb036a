/* audit_bufcap: how much of a socket buffer TCP can fill with data, so "a tcp_rmem max of X
 * caps one flow at Y" counts the kernel's overhead (issue 14: 437 kB "capped" a flow at 87.4
 * Mbit/s at 40 ms, which ran at 55). The buffer limits count memory (skb truesize: the data
 * plus the sk_buff, its shared info and the rest of each page), not data.
 *
 * Receive: the window the receiver offers is its buffer times a share.
 *   - before Linux 6.6, tcp_adv_win_scale fixes it: 1 - 2^-s for s > 0 (1: 1/2, 2: 3/4),
 *     2^s for s <= 0 (-2: 1/4). One value.
 *   - from 6.6 the sysctl is ignored: each connection measures payload/truesize of the
 *     segments it receives (1/2 until it has measured). 1500-byte frames in 2-4 KiB buffers
 *     give about 0.5-0.7 (0.63-0.66 measured through TUN and on ENA), 64 KB GRO/TSO
 *     aggregates about 0.88-0.93 (0.88 measured on veth). The model takes 1/2 to 0.93.
 * Send: the data in flight is the send buffer times a share: each skb in the write queue
 *   carries its truesize overhead (0.98 of a buffer of 64 KB TSO skbs is data, measured on
 *   veth), the application is woken to refill only when a third of the buffer is free, so
 *   in flight swings between 2/3 and all of it, and a paced sender (bbr) keeps part of the
 *   buffer unsent. Measured at 40 ms with 4 MiB: 0.69-0.75 with cubic, 0.57-0.64 with bbr.
 *   The model takes 0.5 to 0.98.
 * A buffer caps one flow at buffer x share x 8 / RTT, from the low share to the high one;
 * netrig proposes the smallest power of two (at least 4 MiB, at most INT_MAX) that covers
 * the BDP at the low share, and never less than 2 x BDP. */
#ifndef NETRIG_AUDIT_BUFCAP_H
#define NETRIG_AUDIT_BUFCAP_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define AUDIT_BUFCAP_AWS_UNKNOWN INT_MIN

enum audit_bufcap_side { AUDIT_BUFCAP_RECEIVE, AUDIT_BUFCAP_SEND };

struct audit_bufcap {
    double lo, hi;   /* the share of the buffer that carries data: worst and best case */
    char basis[160]; /* why: "tcp_adv_win_scale 2: 3/4", "payload/truesize ratio ..." */
};

/* The model for one side on a kernel major.minor (0.0: unknown, taken as recent) with its
 * tcp_adv_win_scale (AUDIT_BUFCAP_AWS_UNKNOWN when absent or unreadable). */
void audit_bufcap_model(enum audit_bufcap_side side, int kmajor, int kminor, int adv_win_scale,
                        struct audit_bufcap *m);

/* What one flow can reach with buf bytes at rtt_s seconds: bits per second, worst and best. */
void audit_bufcap_rate(const struct audit_bufcap *m, double buf, double rtt_s, double *lo_bps,
                       double *hi_bps);

/* The buffer to propose for a BDP: the smallest power of two >= 4 MiB whose low share covers
 * bdp and which is at least 2 x bdp; INT_MAX when more than the kernel takes. */
uint64_t audit_bufcap_size_for(const struct audit_bufcap *m, double bdp);

#endif
