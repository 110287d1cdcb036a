/* Unit tests for the socket-buffer model (audit_bufcap.c, issue 14): the share of a buffer
 * that carries data per kernel and tcp_adv_win_scale, the rate a buffer allows against the
 * runs measured on this project's paths, and that every size netrig proposes reaches the
 * target with the overhead counted. */
#include "test_util.h"

#include "audit_bufcap.h"

static void test_shares(void **state)
{
    static const struct {
        enum audit_bufcap_side side;
        int kmajor, kminor, aws;
        double lo, hi;
    } cases[] = {
        /* before 6.6 tcp_adv_win_scale decides: 1 - 2^-s, or 2^s for s <= 0 */
        {AUDIT_BUFCAP_RECEIVE, 4, 13, 1, 0.5, 0.5},
        {AUDIT_BUFCAP_RECEIVE, 2, 6, 2, 0.75, 0.75},
        {AUDIT_BUFCAP_RECEIVE, 3, 10, 3, 0.875, 0.875},
        {AUDIT_BUFCAP_RECEIVE, 5, 15, 0, 1, 1},
        {AUDIT_BUFCAP_RECEIVE, 5, 15, -2, 0.25, 0.25},
        {AUDIT_BUFCAP_RECEIVE, 6, 5, 1, 0.5, 0.5},
        /* from 6.6 it is ignored: the measured payload/truesize, 1/2 to 0.93 */
        {AUDIT_BUFCAP_RECEIVE, 6, 6, 1, 0.5, 0.93},
        {AUDIT_BUFCAP_RECEIVE, 6, 18, 2, 0.5, 0.93},
        {AUDIT_BUFCAP_RECEIVE, 7, 0, -2, 0.5, 0.93},
        /* unknown kernel or sysctl: the ratio model */
        {AUDIT_BUFCAP_RECEIVE, 0, 0, 1, 0.5, 0.93},
        {AUDIT_BUFCAP_RECEIVE, 5, 4, AUDIT_BUFCAP_AWS_UNKNOWN, 0.5, 0.93},
        /* the send side does not depend on either */
        {AUDIT_BUFCAP_SEND, 2, 6, 2, 0.5, 0.98},
        {AUDIT_BUFCAP_SEND, 6, 18, 1, 0.5, 0.98},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct audit_bufcap m;
        audit_bufcap_model(cases[i].side, cases[i].kmajor, cases[i].kminor, cases[i].aws, &m);
        if (fabs(m.lo - cases[i].lo) > 1e-9 || fabs(m.hi - cases[i].hi) > 1e-9)
            fail_msg("case %zu: %g-%g, want %g-%g (%s)", i, m.lo, m.hi, cases[i].lo, cases[i].hi,
                     m.basis);
        assert_true(m.basis[0] != '\0');
    }
}

/* The runs issue 14 measured at 40 ms (a TUN delay line, 6.x kernel), the same runs through
 * tests/tools/wanem here (tune_bufcap.sh; the machine busy, so figures vary by 10 %) and seed
 * 001's: the model's range holds each measured rate, where buffer x 8 / RTT did not. */
static void test_rates_against_runs(void **state)
{
    static const struct {
        enum audit_bufcap_side side;
        int kmajor, kminor, aws;
        double buf, rtt_s, measured_bps, lo_bps, hi_bps;
    } runs[] = {
        /* receiver tcp_rmem max 437 kB: 87.4 Mbit/s claimed, 55 measured */
        {AUDIT_BUFCAP_RECEIVE, 6, 18, 1, 437000, 0.040, 55e6, 43.7e6, 81.282e6},
        /* sender tcp_wmem max 4 MiB: 839 Mbit/s claimed, 534 measured (bbr) */
        {AUDIT_BUFCAP_SEND, 6, 18, 1, 4194304, 0.040, 534e6, 419.43e6, 822.08e6},
        /* the same through tests/tools/wanem on this kernel: bbr 475-532, cubic 579 */
        {AUDIT_BUFCAP_SEND, 6, 18, 1, 4194304, 0.040, 475e6, 419.43e6, 822.08e6},
        {AUDIT_BUFCAP_SEND, 6, 18, 1, 4194304, 0.040, 579e6, 419.43e6, 822.08e6},
        /* and the receiver's 437 kB there: 53-56 Mbit/s */
        {AUDIT_BUFCAP_RECEIVE, 6, 18, 1, 437000, 0.040, 53e6, 43.7e6, 81.282e6},
        /* seed 001: iperf -w 4M got 2 x 131071 of send buffer, 56 Mbit/s at 30 ms */
        {AUDIT_BUFCAP_SEND, 2, 6, 2, 262142, 0.030, 56e6, 34.95e6, 68.51e6},
    };
    (void)state;

    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        struct audit_bufcap m;
        double lo, hi;
        audit_bufcap_model(runs[i].side, runs[i].kmajor, runs[i].kminor, runs[i].aws, &m);
        audit_bufcap_rate(&m, runs[i].buf, runs[i].rtt_s, &lo, &hi);
        assert_dbl_near(lo, runs[i].lo_bps, runs[i].lo_bps * 1e-4);
        assert_dbl_near(hi, runs[i].hi_bps, runs[i].hi_bps * 1e-4);
        assert_true(lo <= runs[i].measured_bps && runs[i].measured_bps <= hi);
        assert_true(runs[i].buf * 8 / runs[i].rtt_s > 1.2 * runs[i].measured_bps);
    }
    struct audit_bufcap m;
    double lo = 1, hi = 1;
    audit_bufcap_model(AUDIT_BUFCAP_RECEIVE, 6, 18, 1, &m);
    audit_bufcap_rate(&m, 1e6, 0, &lo, &hi);
    assert_true(lo == 0 && hi == 0); /* no RTT: no rate */
}

static void test_sizes(void **state)
{
    static const struct {
        enum audit_bufcap_side side;
        int kmajor, kminor, aws;
        double bdp;
        uint64_t want;
    } cases[] = {
        {AUDIT_BUFCAP_RECEIVE, 6, 18, 1, 5e6, 16777216},     /* 1G x 40 ms */
        {AUDIT_BUFCAP_RECEIVE, 6, 18, 1, 37.5e6, 134217728}, /* 10G x 30 ms */
        {AUDIT_BUFCAP_RECEIVE, 4, 13, 1, 12.5e6, 33554432},  /* 100G x 1 ms */
        {AUDIT_BUFCAP_RECEIVE, 2, 6, 2, 37.5e6, 134217728},  /* 3/4, but never < 2 x BDP */
        {AUDIT_BUFCAP_RECEIVE, 5, 15, -2, 5e6, 33554432},    /* 1/4: 4 x BDP */
        {AUDIT_BUFCAP_SEND, 6, 18, 1, 5e6, 16777216},
        {AUDIT_BUFCAP_SEND, 6, 18, 1, 1, 4194304},           /* at least 4 MiB */
        {AUDIT_BUFCAP_SEND, 6, 18, 1, 1e12, 2147483647},     /* INT_MAX, the kernel's cap */
        {AUDIT_BUFCAP_RECEIVE, 6, 18, 1, 600e6, 2147483647}, /* 1.2 GB > 1 GiB: capped */
    };
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct audit_bufcap m;
        audit_bufcap_model(cases[i].side, cases[i].kmajor, cases[i].kminor, cases[i].aws, &m);
        if (audit_bufcap_size_for(&m, cases[i].bdp) != cases[i].want)
            fail_msg("case %zu: %llu, want %llu", i,
                     (unsigned long long)audit_bufcap_size_for(&m, cases[i].bdp),
                     (unsigned long long)cases[i].want);
    }
    /* every proposal below the kernel's cap reaches the BDP at the worst share */
    static const int aws[] = {-3, -2, -1, 0, 1, 2, 3};
    for (int side = 0; side < 2; side++)
        for (size_t a = 0; a < sizeof(aws) / sizeof(aws[0]); a++)
            for (double bdp = 1e3; bdp < 2e9; bdp *= 1.37) {
                struct audit_bufcap m;
                audit_bufcap_model((enum audit_bufcap_side)side, a & 1 ? 4 : 6, 19, aws[a], &m);
                uint64_t v = audit_bufcap_size_for(&m, bdp);
                if (v < 2147483647 && ((double)v * m.lo < bdp || (double)v < 2 * bdp))
                    fail_msg("bdp %g: %llu x %g does not cover it", bdp, (unsigned long long)v,
                             m.lo);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shares),
        cmocka_unit_test(test_rates_against_runs),
        cmocka_unit_test(test_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
