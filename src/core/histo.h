/* histo: a log-linear latency histogram (HDR-style). Values are nanoseconds; each power-of-two
 * range is split into 128 buckets, so any reported percentile is within 0.4% of a recorded
 * value (bucket midpoint) and memory is fixed (about 35 KiB) whatever the duration. One per
 * worker thread, merged after join. */
#ifndef NETRIG_HISTO_H
#define NETRIG_HISTO_H

#include <stdint.h>
#include <stdio.h>

#define HISTO_SUB_BITS 7
#define HISTO_SUB      (1u << HISTO_SUB_BITS)
#define HISTO_MAX_BIT  40 /* values up to 2^40 ns (about 18 minutes); larger ones are clamped */
#define HISTO_NBUCKETS ((HISTO_MAX_BIT - HISTO_SUB_BITS + 2) * HISTO_SUB)

struct histo {
    uint64_t count;
    uint64_t sum_ns;
    uint64_t min_ns, max_ns;
    uint64_t bucket[HISTO_NBUCKETS];
};

void histo_init(struct histo *h);
void histo_record(struct histo *h, uint64_t ns);
void histo_merge(struct histo *dst, const struct histo *src);
/* p in [0, 100]; 0 when empty. */
uint64_t histo_percentile(const struct histo *h, double p);
double histo_mean(const struct histo *h);

/* Bucket index of a value, and the [lo, hi] range a bucket covers. */
uint32_t histo_index(uint64_t ns);
void histo_bucket_range(uint32_t idx, uint64_t *lo, uint64_t *hi);

/* Writes the distribution as text: one line per non-empty bucket,
 * "lo_us hi_us count cumulative_fraction". Returns 0 or -errno. */
int histo_write(const struct histo *h, FILE *out);

#endif
