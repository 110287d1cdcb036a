/* txnlog: the send time and latency of each transaction, for runs that need the series as well
 * as the histogram (netrig load's latency probes: latency over time, per-phase percentiles and
 * loss). Fixed capacity, allocated before the run; one writer (a worker thread, on its hot path:
 * a store into the array, nothing else); the logs of several workers are merged after join. */
#ifndef NETRIG_TXNLOG_H
#define NETRIG_TXNLOG_H

#include <stddef.h>
#include <stdint.h>

#define TXNLOG_LOST    UINT64_MAX /* lat_ns of a transaction given up on (lost or timed out) */
#define TXNLOG_MAX_CAP (1u << 22) /* records a log holds at most (128 MiB) */

#define TXNLOG_NO_OWD INT64_MIN /* up_ns when the answer carried no receive stamp */

struct txnlog_rec {
    uint64_t t_ns;   /* when the request was (meant to be) sent */
    uint64_t lat_ns; /* its latency, or TXNLOG_LOST */
    /* the request's way out: the server's receive stamp minus the send time, each on its own
     * host's CLOCK_REALTIME, so it holds the clocks' offset too (only differences between
     * records mean a delay); lat_ns - up_ns is the way back. TXNLOG_NO_OWD: not known. */
    int64_t up_ns;
    uint32_t flow; /* the flow it went on (a probe per class: its class), 0 if not known */
};

struct txnlog {
    uint32_t n, cap;
    uint64_t dropped; /* records that found the log full */
    struct txnlog_rec *rec;
};

/* Room for cap records (at most TXNLOG_MAX_CAP). 0 or -ENOMEM. */
int txnlog_init(struct txnlog *l, uint32_t cap);
void txnlog_fini(struct txnlog *l);

static inline void txnlog_add(struct txnlog *l, uint64_t t_ns, uint64_t lat_ns)
{
    if (l->n < l->cap)
        l->rec[l->n++] = (struct txnlog_rec){t_ns, lat_ns, TXNLOG_NO_OWD, 0};
    else
        l->dropped++;
}

/* As txnlog_add, with the way out (see txnlog_rec.up_ns; TXNLOG_NO_OWD: not known) and the
 * flow. */
static inline void txnlog_add_owd(struct txnlog *l, uint32_t flow, uint64_t t_ns, uint64_t lat_ns,
                                  int64_t up_ns)
{
    if (l->n < l->cap)
        l->rec[l->n++] = (struct txnlog_rec){t_ns, lat_ns, up_ns, flow};
    else
        l->dropped++;
}

/* dst (empty, initialised with txnlog_init(dst, 0)) gets every record of src[0..n-1] with t_ns
 * made relative to t0_ns (records before it count from 0), in time order. 0 or -ENOMEM. */
int txnlog_merge(struct txnlog *dst, const struct txnlog *const *src, size_t n, uint64_t t0_ns);

#endif
