/* Unit tests for stats.c against published values: Student's t quantiles from the standard
 * tables, the incomplete beta function's closed forms, a 95% interval worked by hand, and
 * Welch's test on the two samples of the worked example in the Wikipedia article "Welch's
 * t-test" (t = 2.455, df = 24.99, p = 0.0214). */
#include "test_util.h"

#include "stats.h"

static void test_describe(void **state)
{
    static const double x[] = {2, 4, 4, 4, 5, 5, 7, 9};
    static const double big[] = {1e9 + 1, 1e9 + 2, 1e9 + 3};
    struct stats_sample s;

    (void)state;
    stats_describe(x, 8, &s);
    assert_int_equal(s.n, 8);
    assert_dbl_near(s.mean, 5, 1e-12);
    assert_dbl_near(s.sd, sqrt(32.0 / 7), 1e-12);
    stats_describe(big, 3, &s);
    assert_dbl_near(s.sd, 1, 1e-6);
    stats_describe(x, 1, &s);
    assert_dbl_near(s.mean, 2, 0);
    assert_dbl_near(s.sd, 0, 0);
    stats_describe(NULL, 0, &s);
    assert_int_equal(s.n, 0);
}

static void test_betai(void **state)
{
    (void)state;
    assert_dbl_near(stats_betai(2.5, 2.5, 0.5), 0.5, 1e-12);
    assert_dbl_near(stats_betai(1, 1, 0.3), 0.3, 1e-12);
    assert_dbl_near(stats_betai(3, 1, 0.7), 0.343, 1e-12);           /* x^a */
    assert_dbl_near(stats_betai(1, 4, 0.2), 1 - pow(0.8, 4), 1e-12); /* 1-(1-x)^b */
    assert_dbl_near(stats_betai(2, 3, 0), 0, 0);
    assert_dbl_near(stats_betai(2, 3, 1), 1, 0);
}

static void test_t_cdf(void **state)
{
    (void)state;
    assert_dbl_near(stats_t_cdf(0, 7), 0.5, 1e-15);
    /* df = 1 is the Cauchy distribution */
    assert_dbl_near(stats_t_cdf(1, 1), 0.75, 1e-12);
    assert_dbl_near(stats_t_cdf(-3, 1), 0.5 + atan(-3) / M_PI, 1e-12);
    /* df = 2 has a closed form: 1/2 + t / (2 sqrt(t^2 + 2)) */
    assert_dbl_near(stats_t_cdf(1.5, 2), 0.5 + 1.5 / (2 * sqrt(1.5 * 1.5 + 2)), 1e-12);
    assert_dbl_near(stats_t_cdf(2.228138852, 10), 0.975, 1e-9);
}

static void test_t_quantile_table(void **state)
{
    /* two-sided 95% (p = 0.975) critical values, as printed in every t table */
    static const struct {
        double p, df, t;
    } tab[] = {
        {0.975, 1, 12.706204736}, {0.975, 2, 4.302652730},    {0.975, 3, 3.182446305},
        {0.975, 4, 2.776445105},  {0.975, 5, 2.570581836},    {0.975, 10, 2.228138852},
        {0.975, 30, 2.042272456}, {0.975, 120, 1.979930405},  {0.95, 10, 1.812461123},
        {0.995, 5, 4.032142984},  {0.9995, 1, 636.619248768},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
        assert_dbl_near(stats_t_quantile(tab[i].p, tab[i].df), tab[i].t, 1e-6 * tab[i].t);
    assert_dbl_near(stats_t_quantile(0.025, 5), -2.570581836, 1e-6);
    assert_dbl_near(stats_t_quantile(0.5, 3), 0, 0);
    /* large df approaches the normal 1.959964 */
    assert_dbl_near(stats_t_quantile(0.975, 1e7), 1.959964, 1e-5);
}

static void test_ci_half(void **state)
{
    static const double x[] = {1, 2, 3, 4, 5};
    struct stats_sample s;

    (void)state;
    stats_describe(x, 5, &s);
    /* t(0.975, 4) = 2.776445, sd = sqrt(2.5): 2.776445 * 1.581139 / sqrt(5) */
    assert_dbl_near(stats_ci_half(&s, 0.95), 1.9632431614775607, 1e-7);
    stats_describe(x, 1, &s);
    assert_dbl_near(stats_ci_half(&s, 0.95), 0, 0);
}

static void test_welch_wikipedia(void **state)
{
    static const double a1[] = {27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1,
                                21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4};
    static const double a2[] = {27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0,
                                24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4};
    struct stats_sample a, b;
    struct stats_welch w;

    (void)state;
    stats_describe(a1, 15, &a);
    stats_describe(a2, 15, &b);
    stats_welch(&a, &b, &w);
    assert_true(w.valid);
    assert_dbl_near(w.t, 2.45535639828601, 1e-9);
    assert_dbl_near(w.df, 24.98852929023142, 1e-8);
    assert_dbl_near(w.p, 0.021378, 2e-6);
    stats_welch(&b, &a, &w);
    assert_dbl_near(w.t, -2.45535639828601, 1e-9);
    assert_dbl_near(w.p, 0.021378, 2e-6);
}

static void test_welch_edges(void **state)
{
    static const double one[] = {10};
    static const double many[] = {11, 12, 13};
    static const double same[] = {5, 5, 5};
    struct stats_sample a, b;
    struct stats_welch w;

    (void)state;
    /* one value each: nothing to test */
    stats_describe(one, 1, &a);
    stats_describe(one, 1, &b);
    stats_welch(&a, &b, &w);
    assert_false(w.valid);
    /* one value against three: the one-sample t-test of {11,12,13} against 10 */
    stats_describe(many, 3, &b);
    stats_welch(&a, &b, &w);
    assert_true(w.valid);
    assert_dbl_near(w.t, 2 / (1 / sqrt(3)), 1e-12);
    assert_dbl_near(w.df, 2, 1e-12);
    assert_dbl_near(w.p, 2 * stats_t_cdf(-w.t, 2), 1e-15);
    /* no spread on either side */
    stats_describe(same, 3, &a);
    stats_describe(same, 3, &b);
    stats_welch(&a, &b, &w);
    assert_true(w.valid);
    assert_dbl_near(w.p, 1, 0);
    stats_describe(one, 1, &b);
    stats_welch(&a, &b, &w);
    assert_dbl_near(w.p, 0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_describe),    cmocka_unit_test(test_betai),
        cmocka_unit_test(test_t_cdf),       cmocka_unit_test(test_t_quantile_table),
        cmocka_unit_test(test_ci_half),     cmocka_unit_test(test_welch_wikipedia),
        cmocka_unit_test(test_welch_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
