/* histo: log-linear buckets. Level 0 holds values 0..127 exactly; level L >= 1 holds
 * [2^(L+6), 2^(L+7)) in 128 equal steps of 2^(L-1). */
#include "histo.h"

#include <string.h>

void histo_init(struct histo *h)
{
    memset(h, 0, sizeof(*h));
    h->min_ns = UINT64_MAX;
}

uint32_t histo_index(uint64_t ns)
{
    uint32_t k, level;

    if (ns >= (1ULL << HISTO_MAX_BIT))
        ns = (1ULL << HISTO_MAX_BIT) - 1;
    if (ns < HISTO_SUB)
        return (uint32_t)ns;
    k = 63u - (uint32_t)__builtin_clzll(ns); /* 2^k <= ns < 2^(k+1), k >= 7 */
    level = k - HISTO_SUB_BITS + 1;
    return level * HISTO_SUB + (uint32_t)((ns >> (k - HISTO_SUB_BITS)) - HISTO_SUB);
}

void histo_bucket_range(uint32_t idx, uint64_t *lo, uint64_t *hi)
{
    uint32_t level = idx / HISTO_SUB, sub = idx % HISTO_SUB;
    uint32_t shift;

    if (level == 0) {
        *lo = *hi = sub;
        return;
    }
    shift = level - 1;
    *lo = (uint64_t)(HISTO_SUB + sub) << shift;
    *hi = *lo + (1ULL << shift) - 1;
}

void histo_record(struct histo *h, uint64_t ns)
{
    h->bucket[histo_index(ns)]++;
    h->count++;
    h->sum_ns += ns;
    if (ns < h->min_ns)
        h->min_ns = ns;
    if (ns > h->max_ns)
        h->max_ns = ns;
}

void histo_merge(struct histo *dst, const struct histo *src)
{
    if (!src->count)
        return;
    for (uint32_t i = 0; i < HISTO_NBUCKETS; i++)
        dst->bucket[i] += src->bucket[i];
    dst->count += src->count;
    dst->sum_ns += src->sum_ns;
    if (src->min_ns < dst->min_ns)
        dst->min_ns = src->min_ns;
    if (src->max_ns > dst->max_ns)
        dst->max_ns = src->max_ns;
}

uint64_t histo_percentile(const struct histo *h, double p)
{
    uint64_t rank, seen = 0;

    if (!h->count)
        return 0;
    if (p <= 0)
        return h->min_ns;
    if (p >= 100)
        return h->max_ns;
    /* the smallest value with at least p% of samples at or below it */
    rank = (uint64_t)((p / 100.0) * (double)h->count + 0.999999);
    if (rank < 1)
        rank = 1;
    for (uint32_t i = 0; i < HISTO_NBUCKETS; i++) {
        seen += h->bucket[i];
        if (seen >= rank) {
            uint64_t lo, hi, mid;
            histo_bucket_range(i, &lo, &hi);
            mid = lo + (hi - lo) / 2;
            if (mid < h->min_ns)
                mid = h->min_ns;
            if (mid > h->max_ns)
                mid = h->max_ns;
            return mid;
        }
    }
    return h->max_ns;
}

double histo_mean(const struct histo *h)
{
    return h->count ? (double)h->sum_ns / (double)h->count : 0.0;
}

int histo_write(const struct histo *h, FILE *out)
{
    uint64_t seen = 0;

    fprintf(out, "# netrig latency histogram: %llu samples\n# lo_us hi_us count cumulative\n",
            (unsigned long long)h->count);
    for (uint32_t i = 0; i < HISTO_NBUCKETS; i++) {
        uint64_t lo, hi;
        if (!h->bucket[i])
            continue;
        seen += h->bucket[i];
        histo_bucket_range(i, &lo, &hi);
        fprintf(out, "%.3f %.3f %llu %.6f\n", lo / 1e3, (hi + 1) / 1e3,
                (unsigned long long)h->bucket[i], (double)seen / (double)h->count);
    }
    return ferror(out) ? -5 : 0;
}
