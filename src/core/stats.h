/* stats: the small statistics netrig needs to say whether a difference is real: mean, sample
 * standard deviation, Student's t distribution (its CDF through the regularized incomplete beta
 * function, its quantiles by bisection), confidence intervals of a mean and Welch's t-test. */
#ifndef NETRIG_STATS_H
#define NETRIG_STATS_H

#include <stdbool.h>
#include <stddef.h>

struct stats_sample {
    size_t n;
    double mean;
    double sd; /* sample standard deviation (n - 1 in the denominator); 0 when n < 2 */
};

/* Mean and sample standard deviation of x[0..n-1] (two passes, so large means lose nothing). */
void stats_describe(const double *x, size_t n, struct stats_sample *out);

/* Regularized incomplete beta function I_x(a, b), a, b > 0, 0 <= x <= 1. */
double stats_betai(double a, double b, double x);

/* Student's t with df degrees of freedom (df > 0, not necessarily whole). */
double stats_t_cdf(double t, double df);
/* The t with P(T <= t) = p, 0 < p < 1. */
double stats_t_quantile(double p, double df);

/* Half-width of the two-sided `level` (e.g. 0.95) confidence interval of the mean:
 * t_{(1+level)/2, n-1} * sd / sqrt(n). 0 when n < 2. */
double stats_ci_half(const struct stats_sample *s, double level);

struct stats_welch {
    bool valid; /* false when neither side has two values (no variance to test against) */
    double t;   /* (mean_b - mean_a) / standard error */
    double df;  /* Welch-Satterthwaite degrees of freedom */
    double p;   /* two-sided p-value */
};

/* Welch's unequal-variance t-test of b against a. A side with one value counts as a constant
 * (variance 0), which makes this the one-sample t-test of the other side. Both variances 0:
 * p is 1 when the means are equal, else 0. */
void stats_welch(const struct stats_sample *a, const struct stats_sample *b,
                 struct stats_welch *out);

#endif
