/* Unit tests for histo.c: bucket index and range agree for every value, percentiles against
 * exact ones computed by sorting on generated distributions (fixed-seed PRNG), min, max and
 * mean exact, the empty histogram, merge, clamping past 2^40 ns, and the text written by
 * histo_write parsed back. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>

#include "histo.h"

/* the highest value kept in its own bucket; larger ones land in the same bucket */
#define TOP_VALUE ((1ULL << HISTO_MAX_BIT) - 1)

/* ---- a fixed-seed PRNG (splitmix64): the same numbers on every run and machine ---- */

static uint64_t rng_state;

static void rng_seed(uint64_t s) { rng_state = s; }

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* uniform in (0, 1) */
static double rng_unit(void) { return ((double)(rng_next() >> 11) + 0.5) / 9007199254740992.0; }

/* normal (Box-Muller) */
static double rng_normal(double mean, double sd)
{
    double u1 = rng_unit(), u2 = rng_unit();
    return mean + sd * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

static uint64_t clamp_ns(double v)
{
    if (v < 0)
        return 0;
    if (v > (double)TOP_VALUE)
        return TOP_VALUE;
    return (uint64_t)v;
}

static struct histo *histo_new(void)
{
    struct histo *h = malloc(sizeof(*h));
    assert_non_null(h);
    histo_init(h);
    return h;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- index and bucket ranges ---- */

static void check_value(uint64_t v)
{
    uint64_t lo, hi;
    uint32_t idx = histo_index(v);

    if (idx >= HISTO_NBUCKETS)
        fail_msg("histo_index(%llu) = %u is outside the %u buckets", (unsigned long long)v, idx,
                 (unsigned)HISTO_NBUCKETS);
    histo_bucket_range(idx, &lo, &hi);
    if (v <= TOP_VALUE && (v < lo || v > hi))
        fail_msg("value %llu maps to bucket %u = [%llu, %llu], which does not contain it",
                 (unsigned long long)v, idx, (unsigned long long)lo, (unsigned long long)hi);
}

/* Every value 0..2^20: its bucket contains it, buckets follow each other without gaps, and a
 * bucket is at most 1/128 of its lower bound wide (the relative-precision promise). */
static void test_index_range_exhaustive(void **state)
{
    uint32_t prev_idx = 0;
    uint64_t prev_hi = 0;

    (void)state;
    for (uint64_t v = 0; v <= (1ULL << 20); v++) {
        uint64_t lo, hi;
        uint32_t idx = histo_index(v);

        check_value(v);
        if (v == 0) {
            assert_int_equal(idx, 0);
            continue;
        }
        /* monotonic and contiguous: the next value stays in its bucket or opens the next */
        if (idx != prev_idx && idx != prev_idx + 1)
            fail_msg("histo_index(%llu) = %u after histo_index(%llu) = %u", (unsigned long long)v,
                     idx, (unsigned long long)(v - 1), prev_idx);
        if (idx == prev_idx + 1) {
            histo_bucket_range(idx, &lo, &hi);
            if (lo != prev_hi + 1)
                fail_msg("bucket %u starts at %llu, the previous one ended at %llu", idx,
                         (unsigned long long)lo, (unsigned long long)prev_hi);
        }
        histo_bucket_range(idx, &lo, &hi);
        if (v >= HISTO_SUB && (hi - lo + 1) * HISTO_SUB > lo)
            fail_msg("bucket %u = [%llu, %llu] is wider than 1/%u of its start", idx,
                     (unsigned long long)lo, (unsigned long long)hi, (unsigned)HISTO_SUB);
        if (v < HISTO_SUB && (lo != v || hi != v))
            fail_msg("value %llu below %u is not in its own bucket ([%llu, %llu])",
                     (unsigned long long)v, (unsigned)HISTO_SUB, (unsigned long long)lo,
                     (unsigned long long)hi);
        prev_idx = idx;
        prev_hi = hi;
    }
}

/* Every bucket a value up to 2^40 can reach: both ends map back to it, and they tile. */
static void test_bucket_ranges_tile(void **state)
{
    uint32_t top = histo_index(TOP_VALUE);
    uint64_t lo, hi, prev_hi = 0;

    (void)state;
    assert_true(top < HISTO_NBUCKETS);
    for (uint32_t idx = 0; idx <= top; idx++) {
        histo_bucket_range(idx, &lo, &hi);
        assert_true(lo <= hi);
        if (idx > 0 && lo != prev_hi + 1)
            fail_msg("bucket %u starts at %llu, bucket %u ended at %llu", idx,
                     (unsigned long long)lo, idx - 1, (unsigned long long)prev_hi);
        if (histo_index(lo) != idx || histo_index(hi) != idx)
            fail_msg("bucket %u = [%llu, %llu]: its ends map to %u and %u", idx,
                     (unsigned long long)lo, (unsigned long long)hi, histo_index(lo),
                     histo_index(hi));
        prev_hi = hi;
    }
    /* the last bucket ends exactly at the largest value kept */
    assert_int_equal(prev_hi, TOP_VALUE);
}

/* Random values of every magnitude up to 2^40, and the edges around each power of two. */
static void test_index_range_random_large(void **state)
{
    (void)state;
    rng_seed(0x5eed0001);
    for (int i = 0; i < 2000000; i++) {
        unsigned bits = (unsigned)(rng_next() % HISTO_MAX_BIT) + 1; /* 1..40 */
        uint64_t v = rng_next() & ((1ULL << bits) - 1);
        check_value(v);
    }
    for (unsigned k = 1; k < HISTO_MAX_BIT; k++) {
        uint64_t p = 1ULL << k;
        check_value(p - 1);
        check_value(p);
        check_value(p + 1);
    }
    check_value(TOP_VALUE);
}

/* ---- percentiles against exact ones ---- */

/* percentiles in millionths of a percent-point scale: p = pm / 10000 */
static const uint32_t PCT_PM[] = {0,      1000,   10000,  100000, 250000, 500000, 750000,
                                  900000, 950000, 990000, 999000, 999900, 999990, 1000000};

/* The exact percentile as histo.h defines it: the smallest recorded value with at least p%
 * of the samples at or below it, i.e. sorted[ceil(p/100 * n) - 1]; p0 = min, p100 = max. */
static uint64_t exact_percentile(const uint64_t *sorted, size_t n, uint32_t pm)
{
    uint64_t rank;

    if (pm == 0)
        return sorted[0];
    rank = ((uint64_t)pm * n + 999999) / 1000000; /* ceil, in integers */
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

struct dist_stats {
    double max_rel_err;
    double worst_p;
};

/* Records v[0..n) into a fresh histogram and checks it against the sorted values. */
static void check_distribution(const char *name, uint64_t *v, size_t n, struct dist_stats *st)
{
    struct histo *h = histo_new();
    uint64_t sum = 0, prev = 0;

    for (size_t i = 0; i < n; i++) {
        histo_record(h, v[i]);
        sum += v[i];
    }
    qsort(v, n, sizeof(*v), cmp_u64);

    assert_int_equal(h->count, n);
    /* p0 and p100 are min and max exactly, and so are the fields */
    if (histo_percentile(h, 0) != v[0] || h->min_ns != v[0])
        fail_msg("%s: p0 = %llu, min_ns = %llu, exact min %llu", name,
                 (unsigned long long)histo_percentile(h, 0), (unsigned long long)h->min_ns,
                 (unsigned long long)v[0]);
    if (histo_percentile(h, 100) != v[n - 1] || h->max_ns != v[n - 1])
        fail_msg("%s: p100 = %llu, max_ns = %llu, exact max %llu", name,
                 (unsigned long long)histo_percentile(h, 100), (unsigned long long)h->max_ns,
                 (unsigned long long)v[n - 1]);
    /* the mean is exact: the sum is kept, not estimated from buckets */
    assert_int_equal(h->sum_ns, sum);
    assert_dbl_near(histo_mean(h), (double)sum / (double)n, 1e-9 * ((double)sum / n + 1));

    st->max_rel_err = 0;
    st->worst_p = 0;
    for (size_t i = 0; i < sizeof(PCT_PM) / sizeof(PCT_PM[0]); i++) {
        double p = PCT_PM[i] / 10000.0;
        uint64_t got = histo_percentile(h, p), want = exact_percentile(v, n, PCT_PM[i]);
        double rel;

        if (got < prev)
            fail_msg("%s: p%g = %llu is below the previous percentile %llu", name, p,
                     (unsigned long long)got, (unsigned long long)prev);
        prev = got;
        if (want < HISTO_SUB) {
            /* small values have one bucket each: exact */
            if (got != want)
                fail_msg("%s: p%g = %llu, exact %llu (values below %u are exact)", name, p,
                         (unsigned long long)got, (unsigned long long)want, (unsigned)HISTO_SUB);
            continue;
        }
        rel = fabs((double)got - (double)want) / (double)want;
        if (rel > st->max_rel_err) {
            st->max_rel_err = rel;
            st->worst_p = p;
        }
        /* the bound: 1 % */
        if (rel > 0.01)
            fail_msg("%s: p%g = %llu, exact %llu: relative error %.4f%% > 1%%", name, p,
                     (unsigned long long)got, (unsigned long long)want, rel * 100);
        /* histo.h's own promise: within half a bucket, 1/256 of the value (0.4 %) */
        if (rel > 1.0 / 256 + 1e-12)
            fail_msg("%s: p%g = %llu, exact %llu: relative error %.4f%% > 0.39%% (histo.h)", name,
                     p, (unsigned long long)got, (unsigned long long)want, rel * 100);
    }
    print_message("  %-12s n=%zu min=%llu p50=%llu max=%llu, worst relative error %.4f%% at p%g\n",
                  name, n, (unsigned long long)v[0], (unsigned long long)histo_percentile(h, 50),
                  (unsigned long long)v[n - 1], st->max_rel_err * 100, st->worst_p);
    free(h);
}

#define NSAMPLES 200000

static void test_percentiles_uniform(void **state)
{
    uint64_t *v = malloc(NSAMPLES * sizeof(*v));
    struct dist_stats st;

    (void)state;
    assert_non_null(v);
    rng_seed(0x5eed0002);
    for (size_t i = 0; i < NSAMPLES; i++)
        v[i] = 1000 + rng_next() % 999001; /* 1 us .. 1 ms */
    check_distribution("uniform", v, NSAMPLES, &st);
    free(v);
}

static void test_percentiles_exponential(void **state)
{
    uint64_t *v = malloc(NSAMPLES * sizeof(*v));
    struct dist_stats st;

    (void)state;
    assert_non_null(v);
    rng_seed(0x5eed0003);
    for (size_t i = 0; i < NSAMPLES; i++)
        v[i] = 5000 + clamp_ns(-50000.0 * log(rng_unit())); /* 5 us floor, mean 55 us */
    check_distribution("exponential", v, NSAMPLES, &st);
    free(v);
}

static void test_percentiles_bimodal(void **state)
{
    uint64_t *v = malloc(NSAMPLES * sizeof(*v));
    struct dist_stats st;

    (void)state;
    assert_non_null(v);
    rng_seed(0x5eed0004);
    for (size_t i = 0; i < NSAMPLES; i++) {
        if (rng_next() % 10 < 7)
            v[i] = clamp_ns(rng_normal(20000, 2000)); /* 70 %: around 20 us */
        else
            v[i] = clamp_ns(rng_normal(2000000, 100000)); /* 30 %: around 2 ms */
    }
    check_distribution("bimodal", v, NSAMPLES, &st);
    free(v);
}

static void test_percentiles_constant(void **state)
{
    uint64_t *v = malloc(NSAMPLES * sizeof(*v));
    struct histo *h = histo_new();
    struct dist_stats st;

    (void)state;
    assert_non_null(v);
    for (size_t i = 0; i < NSAMPLES; i++) {
        v[i] = 12345;
        histo_record(h, 12345);
    }
    check_distribution("constant", v, NSAMPLES, &st);
    /* one value only: every percentile is that value exactly (clamped to min and max) */
    for (size_t i = 0; i < sizeof(PCT_PM) / sizeof(PCT_PM[0]); i++)
        assert_int_equal(histo_percentile(h, PCT_PM[i] / 10000.0), 12345);
    assert_dbl_near(histo_mean(h), 12345.0, 0);
    free(h);
    free(v);
}

static void test_percentiles_heavy_tail(void **state)
{
    uint64_t *v = malloc(NSAMPLES * sizeof(*v));
    struct dist_stats st;

    (void)state;
    assert_non_null(v);
    rng_seed(0x5eed0005);
    /* Pareto, alpha 1.1, from 10 us: a long tail up to seconds */
    for (size_t i = 0; i < NSAMPLES; i++)
        v[i] = clamp_ns(10000.0 / pow(rng_unit(), 1.0 / 1.1));
    /* and a few huge ones: 100 s, about 9 min, and the largest value kept */
    v[17] = 100000000000ULL;
    v[1234] = 1ULL << 39;
    v[99999] = TOP_VALUE;
    v[150000] = 3000000000ULL;
    check_distribution("heavy-tail", v, NSAMPLES, &st);
    free(v);
}

/* Small values, 0 included: every one has its own bucket, so percentiles are exact. */
static void test_percentiles_small_values(void **state)
{
    uint64_t *v = malloc(NSAMPLES * sizeof(*v));
    struct dist_stats st;

    (void)state;
    assert_non_null(v);
    rng_seed(0x5eed0006);
    for (size_t i = 0; i < NSAMPLES; i++)
        v[i] = rng_next() % 300; /* 0 .. 299 ns: both sides of 128 */
    check_distribution("small", v, NSAMPLES, &st);
    free(v);
}

/* A few samples: rank arithmetic at the edges (1, 2, 3 samples). */
static void test_percentiles_few_samples(void **state)
{
    struct histo *h = histo_new();
    uint64_t vals[] = {1000000, 3000000, 2000000};

    (void)state;
    histo_record(h, 1000000);
    assert_int_equal(histo_percentile(h, 0), 1000000);
    assert_int_equal(histo_percentile(h, 50), 1000000);
    assert_int_equal(histo_percentile(h, 99.99), 1000000);
    assert_int_equal(histo_percentile(h, 100), 1000000);
    histo_init(h);
    for (int i = 0; i < 3; i++)
        histo_record(h, vals[i]);
    /* 1 of 3 samples is 33.3 %: p30 is the smallest, p50 the middle one, p90 the largest */
    assert_true(fabs((double)histo_percentile(h, 30) - 1e6) <= 1e6 / 256);
    assert_true(fabs((double)histo_percentile(h, 50) - 2e6) <= 2e6 / 256);
    assert_true(fabs((double)histo_percentile(h, 90) - 3e6) <= 3e6 / 256);
    assert_int_equal(histo_percentile(h, 100), 3000000);
    assert_int_equal(histo_percentile(h, 0), 1000000);
    free(h);
}

/* ---- empty ---- */

static void test_empty(void **state)
{
    struct histo *h = histo_new();

    (void)state;
    assert_int_equal(h->count, 0);
    assert_int_equal(histo_percentile(h, 0), 0);
    assert_int_equal(histo_percentile(h, 50), 0);
    assert_int_equal(histo_percentile(h, 99.9), 0);
    assert_int_equal(histo_percentile(h, 100), 0);
    assert_dbl_near(histo_mean(h), 0.0, 0);
    free(h);
}

/* ---- merge ---- */

static void assert_histo_equal(const struct histo *a, const struct histo *b)
{
    assert_int_equal(a->count, b->count);
    assert_int_equal(a->sum_ns, b->sum_ns);
    assert_int_equal(a->min_ns, b->min_ns);
    assert_int_equal(a->max_ns, b->max_ns);
    for (uint32_t i = 0; i < HISTO_NBUCKETS; i++)
        if (a->bucket[i] != b->bucket[i])
            fail_msg("bucket %u: %llu vs %llu", i, (unsigned long long)a->bucket[i],
                     (unsigned long long)b->bucket[i]);
}

static void test_merge_halves(void **state)
{
    struct histo *all = histo_new(), *a = histo_new(), *b = histo_new(), *m = histo_new();

    (void)state;
    rng_seed(0x5eed0007);
    for (int i = 0; i < 100000; i++) {
        /* mixed magnitudes so many buckets are used; the halves differ in range */
        uint64_t v = clamp_ns(1000.0 / pow(rng_unit(), 1.0 / 1.5));
        if (i == 500)
            v = 3; /* the smallest value is in the first half */
        histo_record(all, v);
        histo_record(i % 3 == 0 ? a : b, v); /* uneven halves */
    }
    histo_record(all, 1ULL << 36);
    histo_record(b, 1ULL << 36); /* the largest in the second half */

    histo_merge(m, a); /* into an empty histogram */
    histo_merge(m, b);
    assert_histo_equal(m, all);
    /* percentiles of the merged histogram are those of the whole */
    for (size_t i = 0; i < sizeof(PCT_PM) / sizeof(PCT_PM[0]); i++)
        assert_int_equal(histo_percentile(m, PCT_PM[i] / 10000.0),
                         histo_percentile(all, PCT_PM[i] / 10000.0));
    /* the other order gives the same */
    histo_init(m);
    histo_merge(m, b);
    histo_merge(m, a);
    assert_histo_equal(m, all);

    /* merging an empty histogram changes nothing, min included */
    histo_init(b);
    histo_merge(m, b);
    assert_histo_equal(m, all);
    /* empty into empty stays empty: min is not taken from the empty source */
    histo_init(a);
    histo_merge(a, b);
    assert_int_equal(a->count, 0);
    assert_int_equal(histo_percentile(a, 50), 0);
    free(all);
    free(a);
    free(b);
    free(m);
}

/* ---- values past 2^40 ns ---- */

static void test_clamp_large_values(void **state)
{
    struct histo *h = histo_new();
    uint32_t top = histo_index(TOP_VALUE);
    const uint64_t big[] = {1ULL << HISTO_MAX_BIT, (1ULL << HISTO_MAX_BIT) + 1, 1ULL << 50,
                            1ULL << 62, UINT64_MAX};
    uint64_t lo, hi;

    (void)state;
    for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
        uint32_t idx = histo_index(big[i]);
        if (idx != top)
            fail_msg("histo_index(%llu) = %u, expected the last bucket %u",
                     (unsigned long long)big[i], idx, top);
    }
    histo_bucket_range(top, &lo, &hi);
    assert_int_equal(hi, TOP_VALUE);

    /* record them (2^62 twice fits the sum) next to ordinary values */
    for (int i = 0; i < 1000; i++)
        histo_record(h, 50000);
    histo_record(h, 1ULL << 50);
    histo_record(h, 1ULL << 62);
    assert_int_equal(h->count, 1002);
    assert_int_equal(h->bucket[top], 2);
    assert_int_equal(h->max_ns, 1ULL << 62);
    assert_int_equal(histo_percentile(h, 100), 1ULL << 62);
    assert_true(histo_percentile(h, 50) >= 50000 - 50000 / 256 &&
                histo_percentile(h, 50) <= 50000 + 50000 / 256);
    /* the top percentile lands in the clamped bucket: at least its start, at most max */
    assert_true(histo_percentile(h, 99.99) >= lo);
    assert_true(histo_percentile(h, 99.99) <= 1ULL << 62);
    assert_dbl_near(histo_mean(h),
                    (1000.0 * 50000 + (double)(1ULL << 50) + (double)(1ULL << 62)) / 1002,
                    1e-6 * histo_mean(h));

    /* only huge values: the percentiles stay within [min, max] */
    histo_init(h);
    histo_record(h, 1ULL << 50);
    histo_record(h, 1ULL << 51);
    for (int p = 0; p <= 100; p += 10) {
        uint64_t v = histo_percentile(h, p);
        assert_true(v >= 1ULL << 50 && v <= 1ULL << 51);
    }

    /* the largest possible value does not crash anything */
    histo_init(h);
    histo_record(h, UINT64_MAX);
    assert_int_equal(h->count, 1);
    assert_int_equal(h->bucket[top], 1);
    assert_int_equal(histo_percentile(h, 50), UINT64_MAX);
    assert_int_equal(histo_percentile(h, 100), UINT64_MAX);
    free(h);
}

/* ---- histo_write ---- */

struct parsed {
    unsigned long long header_samples;
    unsigned long long total;
    size_t lines;
    double last_cum;
    char last_cum_text[32];
};

/* Parses histo_write's text: checks every line's shape and order as it goes. */
static void parse_written(const char *text, const struct histo *h, struct parsed *out)
{
    const char *line = text;
    double prev_hi = -1, prev_cum = 0;
    int header = 0;

    memset(out, 0, sizeof(*out));
    while (*line) {
        const char *nl = strchr(line, '\n');
        char buf[256];
        size_t len;

        if (!nl)
            fail_msg("histo_write: last line is not terminated: \"%s\"", line);
        len = (size_t)(nl - line);
        assert_true(len < sizeof(buf));
        memcpy(buf, line, len);
        buf[len] = '\0';
        line = nl + 1;
        if (buf[0] == '#') {
            if (header == 0 &&
                sscanf(buf, "# netrig latency histogram: %llu samples", &out->header_samples) != 1)
                fail_msg("histo_write: first header line is \"%s\"", buf);
            header++;
            continue;
        }
        double lo_us, hi_us, cum;
        unsigned long long count;
        char cum_text[32];
        int used = 0;
        if (sscanf(buf, "%lf %lf %llu %31s%n", &lo_us, &hi_us, &count, cum_text, &used) != 4 ||
            (size_t)used != len)
            fail_msg("histo_write: cannot parse \"%s\"", buf);
        cum = strtod(cum_text, NULL);
        if (!(lo_us < hi_us) || lo_us < prev_hi - 1e-9 || count == 0 || cum < prev_cum || cum > 1.0)
            fail_msg("histo_write: line \"%s\" out of order or malformed (previous hi %.3f, "
                     "cumulative %.6f)",
                     buf, prev_hi, prev_cum);
        prev_hi = hi_us;
        prev_cum = cum;
        out->total += count;
        out->lines++;
        out->last_cum = cum;
        snprintf(out->last_cum_text, sizeof(out->last_cum_text), "%s", cum_text);
    }
    assert_int_equal(header, 2);
    (void)h;
}

static char *write_to_string(const struct histo *h)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);

    assert_non_null(f);
    assert_int_equal(histo_write(h, f), 0);
    assert_int_equal(fclose(f), 0);
    assert_non_null(text);
    return text;
}

static void test_write_format(void **state)
{
    struct histo *h = histo_new();
    struct parsed p;
    uint32_t nonempty = 0;
    char *text;

    (void)state;
    rng_seed(0x5eed0008);
    for (int i = 0; i < 54321; i++)
        histo_record(h, i % 97 == 0 ? (uint64_t)(rng_next() % 100)
                                    : clamp_ns(-30000.0 * log(rng_unit())));
    histo_record(h, 1ULL << 45); /* a clamped one too */
    for (uint32_t i = 0; i < HISTO_NBUCKETS; i++)
        nonempty += h->bucket[i] != 0;

    text = write_to_string(h);
    parse_written(text, h, &p);
    assert_int_equal(p.header_samples, h->count);
    assert_int_equal(p.total, h->count);
    assert_int_equal(p.lines, nonempty); /* one line per non-empty bucket */
    assert_string_equal(p.last_cum_text, "1.000000");
    free(text);

    /* a value's line: the bucket of 50 us covers it, in microseconds */
    histo_init(h);
    histo_record(h, 50000);
    text = write_to_string(h);
    parse_written(text, h, &p);
    assert_int_equal(p.lines, 1);
    assert_int_equal(p.total, 1);
    {
        double lo_us, hi_us;
        const char *l = strstr(text, "\n# lo_us");
        assert_non_null(l);
        l = strchr(l + 1, '\n');
        assert_non_null(l);
        assert_int_equal(sscanf(l + 1, "%lf %lf", &lo_us, &hi_us), 2);
        assert_true(lo_us <= 50.0 && 50.0 < hi_us);
        assert_true(hi_us - lo_us <= 50.0 / 128 + 1e-9);
    }
    free(text);
    free(h);
}

static void test_write_empty(void **state)
{
    struct histo *h = histo_new();
    struct parsed p;
    char *text;

    (void)state;
    text = write_to_string(h);
    parse_written(text, h, &p);
    assert_int_equal(p.header_samples, 0);
    assert_int_equal(p.lines, 0);
    free(text);
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_index_range_exhaustive),
        cmocka_unit_test(test_bucket_ranges_tile),
        cmocka_unit_test(test_index_range_random_large),
        cmocka_unit_test(test_percentiles_uniform),
        cmocka_unit_test(test_percentiles_exponential),
        cmocka_unit_test(test_percentiles_bimodal),
        cmocka_unit_test(test_percentiles_constant),
        cmocka_unit_test(test_percentiles_heavy_tail),
        cmocka_unit_test(test_percentiles_small_values),
        cmocka_unit_test(test_percentiles_few_samples),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_merge_halves),
        cmocka_unit_test(test_clamp_large_values),
        cmocka_unit_test(test_write_format),
        cmocka_unit_test(test_write_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
