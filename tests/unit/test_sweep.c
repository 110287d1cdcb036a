/* Unit tests for sweep.c: --vary and --ci parsing, the cartesian product, each point's
 * command line, the canonical definition, and the rule that ends a point. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>

#include "sweep.h"

static void test_parse_vary(void **state)
{
    struct sweep_vary v;
    char err[256];

    (void)state;
    assert_int_equal(sweep_parse_vary("flows=1,2,4,8", &v, err, sizeof(err)), 0);
    assert_string_equal(v.option, "--parallel");
    assert_int_equal(v.nvalues, 4);
    assert_string_equal(v.values[3], "8");
    assert_false(v.flag);
    assert_int_equal(sweep_parse_vary("window=256K,4M", &v, err, sizeof(err)), 0);
    assert_string_equal(v.option, "--window");
    assert_int_equal(sweep_parse_vary("server_threads=1,2", &v, err, sizeof(err)), 0);
    assert_string_equal(v.option, "--server-threads");
    assert_int_equal(sweep_parse_vary("C=cubic,bbr", &v, err, sizeof(err)), 0);
    assert_string_equal(v.option, "-C");
    assert_int_equal(sweep_parse_vary("nodelay=on,off", &v, err, sizeof(err)), 0);
    assert_true(v.flag);
    assert_int_equal(sweep_parse_vary("direction=forward,bidir", &v, err, sizeof(err)), 0);
    assert_true(v.direction);

    assert_int_not_equal(sweep_parse_vary("flows", &v, err, sizeof(err)), 0);
    assert_contains(err, "NAME=V1,V2");
    assert_int_not_equal(sweep_parse_vary("flows=", &v, err, sizeof(err)), 0);
    assert_int_not_equal(sweep_parse_vary("flows=1,,2", &v, err, sizeof(err)), 0);
    assert_int_not_equal(sweep_parse_vary("flows=1,2,", &v, err, sizeof(err)), 0);
    assert_int_not_equal(sweep_parse_vary("nodelay=maybe", &v, err, sizeof(err)), 0);
    assert_contains(err, "on or off");
    assert_int_not_equal(sweep_parse_vary("direction=up", &v, err, sizeof(err)), 0);
    assert_int_not_equal(sweep_parse_vary("db=a,b", &v, err, sizeof(err)), 0);
    assert_contains(err, "not a test parameter");
    assert_int_not_equal(sweep_parse_vary("fl ows=1", &v, err, sizeof(err)), 0);
}

static void test_parse_ci(void **state)
{
    double level, pct;
    char err[256];

    (void)state;
    assert_int_equal(sweep_parse_ci("95,2%", &level, &pct, err, sizeof(err)), 0);
    assert_dbl_near(level, 0.95, 1e-12);
    assert_dbl_near(pct, 2, 0);
    assert_int_equal(sweep_parse_ci("99,0.5", &level, &pct, err, sizeof(err)), 0);
    assert_dbl_near(pct, 0.5, 0);
    assert_int_equal(sweep_parse_ci("90", &level, &pct, err, sizeof(err)), 0);
    assert_dbl_near(pct, 2, 0);
    assert_int_not_equal(sweep_parse_ci("100,2%", &level, &pct, err, sizeof(err)), 0);
    assert_int_not_equal(sweep_parse_ci("95,0%", &level, &pct, err, sizeof(err)), 0);
    assert_int_not_equal(sweep_parse_ci("95,2%x", &level, &pct, err, sizeof(err)), 0);
    assert_int_not_equal(sweep_parse_ci("abc", &level, &pct, err, sizeof(err)), 0);
    assert_contains(err, "95,2%");
}

static void def2x2(struct sweep_def *d)
{
    char err[256];

    memset(d, 0, sizeof(*d));
    d->kind = PARAMS_TEST_STREAM;
    d->nbase = 2;
    snprintf(d->base[0], sizeof(d->base[0]), "-t");
    snprintf(d->base[1], sizeof(d->base[1]), "1");
    assert_int_equal(sweep_parse_vary("flows=1,2", &d->vary[0], err, sizeof(err)), 0);
    assert_int_equal(sweep_parse_vary("nodelay=off,on", &d->vary[1], err, sizeof(err)), 0);
    d->nvary = 2;
    d->repeat = 5;
    d->ci_level = 0.95;
    d->ci_pct = 2;
    snprintf(d->metric, sizeof(d->metric), "throughput_bps");
}

static void test_points(void **state)
{
    struct sweep_def *d = malloc(sizeof(*d));
    uint32_t vi[SWEEP_MAX_VARY];
    char label[128], *s;
    char **av;
    int ac;

    (void)state;
    def2x2(d);
    assert_int_equal(sweep_npoints(d), 4);
    sweep_point_index(d, 1, vi);
    assert_int_equal(vi[0], 0); /* the first --vary changes slowest */
    assert_int_equal(vi[1], 1);
    sweep_point_label(d, 2, label, sizeof(label));
    assert_string_equal(label, "flows=2 nodelay=off");
    s = sweep_point_settings(d, 3);
    assert_string_equal(s, "{\"flows\":\"2\",\"nodelay\":\"on\"}");
    free(s);
    assert_int_equal(sweep_point_argv(d, 3, &ac, &av), 0);
    assert_int_equal(ac, 5);
    assert_string_equal(av[0], "stream");
    assert_string_equal(av[1], "-t");
    assert_string_equal(av[3], "--parallel=2");
    assert_string_equal(av[4], "--nodelay");
    assert_null(av[5]);
    sweep_free_argv(ac, av);
    assert_int_equal(sweep_point_argv(d, 0, &ac, &av), 0);
    assert_int_equal(ac, 4); /* nodelay=off adds nothing */
    sweep_free_argv(ac, av);
    s = sweep_definition(d);
    assert_contains(s, "\"vary\":[{\"name\":\"flows\",\"values\":[\"1\",\"2\"]}");
    free(s);
    for (uint32_t i = 0; i < 5; i++) /* 64^5 points is too many */
        d->vary[i] = d->vary[0], d->vary[i].nvalues = SWEEP_MAX_VALUES;
    d->nvary = 5;
    assert_int_equal(sweep_npoints(d), 0);
    free(d);
}

static void test_point_done(void **state)
{
    struct sweep_def *d = malloc(sizeof(*d));
    static const double tight[] = {100, 100.5, 99.5};
    static const double loose[] = {100, 120, 80};
    double mean, half;

    (void)state;
    def2x2(d);
    /* fewer than 3 values never end a point early */
    assert_false(sweep_point_done(d, tight, 2, &mean, &half));
    /* 3 values, 95% CI: 4.303 * 0.5 / sqrt(3) = 1.24 = 1.24% of 100 */
    assert_true(sweep_point_done(d, tight, 3, &mean, &half));
    assert_dbl_near(mean, 100, 1e-12);
    assert_dbl_near(half, 4.302652730 * 0.5 / sqrt(3), 1e-6);
    assert_false(sweep_point_done(d, loose, 3, &mean, &half));
    d->repeat = 3; /* the cap ends it whatever the spread */
    assert_true(sweep_point_done(d, loose, 3, &mean, &half));
    d->ci_pct = 0; /* no target: exactly repeat runs */
    d->repeat = 5;
    assert_false(sweep_point_done(d, tight, 3, &mean, &half));
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_vary),
        cmocka_unit_test(test_parse_ci),
        cmocka_unit_test(test_points),
        cmocka_unit_test(test_point_done),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
