/* txnlog: per-transaction records, merged and sorted after the run. */
#include "txnlog.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int txnlog_init(struct txnlog *l, uint32_t cap)
{
    memset(l, 0, sizeof(*l));
    if (cap > TXNLOG_MAX_CAP)
        cap = TXNLOG_MAX_CAP;
    if (!cap)
        return 0;
    l->rec = malloc((size_t)cap * sizeof(*l->rec));
    if (!l->rec)
        return -ENOMEM;
    l->cap = cap;
    return 0;
}

void txnlog_fini(struct txnlog *l)
{
    free(l->rec);
    memset(l, 0, sizeof(*l));
}

static int by_time(const void *a, const void *b)
{
    const struct txnlog_rec *x = a, *y = b;

    return (x->t_ns > y->t_ns) - (x->t_ns < y->t_ns);
}

int txnlog_merge(struct txnlog *dst, const struct txnlog *const *src, size_t n, uint64_t t0_ns)
{
    uint64_t total = 0, dropped = 0;

    for (size_t i = 0; i < n; i++) {
        total += src[i]->n;
        dropped += src[i]->dropped;
    }
    txnlog_fini(dst);
    if (total && txnlog_init(dst, total > TXNLOG_MAX_CAP ? TXNLOG_MAX_CAP : (uint32_t)total))
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        for (uint32_t k = 0; k < src[i]->n; k++) {
            struct txnlog_rec r = src[i]->rec[k];
            r.t_ns = r.t_ns > t0_ns ? r.t_ns - t0_ns : 0;
            if (dst->n < dst->cap)
                dst->rec[dst->n++] = r;
            else
                dropped++;
        }
    dst->dropped = dropped;
    if (dst->n > 1)
        qsort(dst->rec, dst->n, sizeof(*dst->rec), by_time);
    return 0;
}
