/* stats: descriptive statistics, Student's t distribution, confidence intervals, Welch's test.
 * The incomplete beta function is evaluated by its continued fraction (modified Lentz method),
 * which converges quickly for x < (a+1)/(a+b+2); the symmetry I_x(a,b) = 1 - I_{1-x}(b,a)
 * covers the rest. */
#include "stats.h"

#include <math.h>

#define STATS_EPS      1e-15
#define STATS_TINY     1e-300
#define STATS_MAX_ITER 500

void stats_describe(const double *x, size_t n, struct stats_sample *out)
{
    double sum = 0, sq = 0;

    out->n = n;
    out->mean = 0;
    out->sd = 0;
    if (n == 0)
        return;
    for (size_t i = 0; i < n; i++)
        sum += x[i];
    out->mean = sum / (double)n;
    if (n < 2)
        return;
    for (size_t i = 0; i < n; i++)
        sq += (x[i] - out->mean) * (x[i] - out->mean);
    out->sd = sqrt(sq / (double)(n - 1));
}

static double lgam(double v)
{
    int sign;

    return lgamma_r(v, &sign);
}

/* The continued fraction of I_x(a, b) without its prefactor. */
static double beta_cf(double a, double b, double x)
{
    double qab = a + b, qap = a + 1, qam = a - 1;
    double c = 1, d = 1 - qab * x / qap, h;

    if (fabs(d) < STATS_TINY)
        d = STATS_TINY;
    d = 1 / d;
    h = d;
    for (int m = 1; m <= STATS_MAX_ITER; m++) {
        int m2 = 2 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2)), del;

        d = 1 + aa * d;
        d = fabs(d) < STATS_TINY ? STATS_TINY : d;
        c = 1 + aa / c;
        c = fabs(c) < STATS_TINY ? STATS_TINY : c;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1 + aa * d;
        d = fabs(d) < STATS_TINY ? STATS_TINY : d;
        c = 1 + aa / c;
        c = fabs(c) < STATS_TINY ? STATS_TINY : c;
        d = 1 / d;
        del = d * c;
        h *= del;
        if (fabs(del - 1) < STATS_EPS)
            break;
    }
    return h;
}

double stats_betai(double a, double b, double x)
{
    double front;

    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    front = exp(lgam(a + b) - lgam(a) - lgam(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1) / (a + b + 2))
        return front * beta_cf(a, b, x) / a;
    return 1 - front * beta_cf(b, a, 1 - x) / b;
}

double stats_t_cdf(double t, double df)
{
    double tail;

    if (isinf(t))
        return t > 0 ? 1 : 0;
    /* P(|T| > |t|) = I_{df/(df+t^2)}(df/2, 1/2) */
    tail = 0.5 * stats_betai(df / 2, 0.5, df / (df + t * t));
    return t > 0 ? 1 - tail : tail;
}

double stats_t_quantile(double p, double df)
{
    double lo, hi = 1;

    if (p <= 0)
        return -INFINITY;
    if (p >= 1)
        return INFINITY;
    if (p == 0.5)
        return 0;
    if (p < 0.5)
        return -stats_t_quantile(1 - p, df);
    while (stats_t_cdf(hi, df) < p && hi < 1e300)
        hi *= 2;
    lo = 0;
    for (int i = 0; i < 300 && hi - lo > 1e-13 * hi; i++) {
        double mid = (lo + hi) / 2;
        if (stats_t_cdf(mid, df) < p)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

double stats_ci_half(const struct stats_sample *s, double level)
{
    if (s->n < 2)
        return 0;
    return stats_t_quantile((1 + level) / 2, (double)(s->n - 1)) * s->sd / sqrt((double)s->n);
}

void stats_welch(const struct stats_sample *a, const struct stats_sample *b,
                 struct stats_welch *out)
{
    double va = a->n > 1 ? a->sd * a->sd / (double)a->n : 0;
    double vb = b->n > 1 ? b->sd * b->sd / (double)b->n : 0;
    double se2 = va + vb, den = 0;

    out->valid = a->n > 1 || b->n > 1;
    out->t = out->df = 0;
    out->p = 1;
    if (!out->valid || a->n == 0 || b->n == 0) {
        out->valid = false;
        return;
    }
    if (se2 <= 0) {
        /* no spread on either side: any difference at all is certain */
        out->t = b->mean == a->mean ? 0 : copysign(INFINITY, b->mean - a->mean);
        out->df = (double)(a->n + b->n - 2);
        out->p = b->mean == a->mean ? 1 : 0;
        return;
    }
    out->t = (b->mean - a->mean) / sqrt(se2);
    if (a->n > 1)
        den += va * va / (double)(a->n - 1);
    if (b->n > 1)
        den += vb * vb / (double)(b->n - 1);
    out->df = se2 * se2 / den;
    out->p = 2 * stats_t_cdf(-fabs(out->t), out->df);
}
