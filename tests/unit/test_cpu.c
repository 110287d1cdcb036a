/* Unit tests for cpu.c: /proc/stat and thread stat parsing, and the usage derived from two
 * snapshots. */
#define _GNU_SOURCE
#include "test_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu.h"

/* A 2-CPU /proc/stat as a 6.1 kernel writes it (the intr line shortened). */
static const char stat_2cpu[] =
    "cpu  10132153 290696 3084719 46828483 16683 7 25195 3 175628 0\n"
    "cpu0 1393280 32966 572056 13343292 6130 0 17875 0 23933 0\n"
    "cpu1 1335934 23370 524316 13324123 4545 0 2950 0 22700 0\n"
    "intr 199292 41 22 0 0 0 0 0 0 1 0 0 0 4 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
    "ctxt 2158634\n"
    "btime 1700000000\n"
    "processes 40000\n"
    "procs_running 2\n"
    "procs_blocked 0\n"
    "softirq 123456 10 2000 30 400 5000 0 60 70000 8 9000\n";

static void test_parse_stat_values(void **state)
{
    struct cpu_sys_snap s;

    (void)state;
    memset(&s, 0xa5, sizeof(s));
    assert_int_equal(cpu_parse_stat(stat_2cpu, &s), 0);
    assert_int_equal(s.user, 10132153);
    assert_int_equal(s.nice, 290696);
    assert_int_equal(s.system, 3084719);
    assert_int_equal(s.idle, 46828483);
    assert_int_equal(s.iowait, 16683);
    assert_int_equal(s.irq, 7);
    assert_int_equal(s.softirq, 25195);
    assert_int_equal(s.steal, 3);
    assert_int_equal(s.intr, 199292);
    assert_int_equal(s.ncpu, 2);
}

static void test_parse_stat_old_kernel_four_fields(void **state)
{
    struct cpu_sys_snap s;

    (void)state;
    assert_int_equal(cpu_parse_stat("cpu  100 20 30 400\ncpu0 100 20 30 400", &s), 0);
    assert_int_equal(s.user, 100);
    assert_int_equal(s.nice, 20);
    assert_int_equal(s.system, 30);
    assert_int_equal(s.idle, 400);
    assert_int_equal(s.iowait, 0);
    assert_int_equal(s.softirq, 0);
    assert_int_equal(s.steal, 0);
    assert_int_equal(s.intr, 0);
    assert_int_equal(s.ncpu, 1);
}

static void test_parse_stat_rejects(void **state)
{
    static const char *const bad[] = {
        "",
        "garbage\n",
        "hello world",
        "cpu0 1 2 3 4\ncpu1 1 2 3 4\n",    /* no total line */
        "cpu 1 2 3\ncpu0 1 2 3\n",         /* too few fields */
        "cpu  a b c d\ncpu0 1 2 3 4\n",    /* not numbers */
        "cpu  1 2 3 4\nintr 5\n",          /* no per-CPU lines */
        "cpufreq 1 2 3 4\ncpu0 1 2 3 4\n", /* "cpu" without the space */
        "intr 1\nctxt 2\n",
    };
    struct cpu_sys_snap s;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = cpu_parse_stat(bad[i], &s);
        if (rc != -EINVAL)
            fail_msg("cpu_parse_stat(bad[%zu]) = %d, expected -EINVAL", i, rc);
    }
}

static void test_sample_system_fixture(void **state)
{
    char root[64], proc[96], file[128];
    struct cpu_sys_snap s;
    FILE *f;

    (void)state;
    snprintf(root, sizeof(root), "/tmp/netrig-cpu-XXXXXX");
    assert_non_null(mkdtemp(root));
    snprintf(proc, sizeof(proc), "%s/proc", root);
    snprintf(file, sizeof(file), "%s/stat", proc);
    assert_int_equal(mkdir(proc, 0755), 0);
    f = fopen(file, "w");
    assert_non_null(f);
    fputs(stat_2cpu, f);
    fclose(f);

    int rc = cpu_sample_system(root, &s);
    unlink(file);
    rmdir(proc);
    rmdir(root);
    assert_int_equal(rc, 0);
    assert_int_equal(s.user, 10132153);
    assert_int_equal(s.intr, 199292);
    assert_int_equal(s.ncpu, 2);
    /* a sysroot without /proc/stat reports the error */
    assert_int_equal(cpu_sample_system(root, &s), -ENOENT);
}

/* ---- per-thread stat ---- */

static void test_thread_stat_comm_with_paren(void **state)
{
    /* comm "a) b": a space and a ')' inside; utime 250 and stime 75 ticks */
    static const char line[] =
        "1234 (a) b) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 1 0 12345 "
        "1000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 5 0 0 0 0 0";
    struct cpu_thread_snap t = {0, 0};

    (void)state;
    assert_int_equal(cpu_parse_thread_stat(line, 100, &t), 0);
    assert_int_equal(t.user_us, 2500000);
    assert_int_equal(t.sys_us, 750000);
    /* it adds: a second thread sums in */
    assert_int_equal(cpu_parse_thread_stat(line, 100, &t), 0);
    assert_int_equal(t.user_us, 5000000);
    assert_int_equal(t.sys_us, 1500000);
}

static void test_thread_last_cpu(void **state)
{
    /* field 39 ("processor") is 5; the comm holds ") " to mislead a naive field count */
    static const char line[] =
        "1234 (a) b) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 1 0 12345 "
        "1000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 5 0 0 0 0 0";
    long n = sysconf(_SC_NPROCESSORS_CONF);
    int cpu;

    (void)state;
    assert_int_equal(cpu_parse_thread_last_cpu(line), 5);
    assert_int_equal(cpu_parse_thread_last_cpu("1234 (a) S 1 2 3"), -1);
    assert_int_equal(cpu_parse_thread_last_cpu("no parenthesis"), -1);
    cpu = cpu_thread_last_cpu((pid_t)gettid());
    assert_in_range(cpu, 0, n - 1);
    assert_int_equal(cpu_thread_last_cpu(0x7ffffff0), -1);
}

static void test_thread_stat_other_tick_rate(void **state)
{
    static const char line[] = "77 (netrig-w0) R 1 77 77 0 -1 0 0 0 0 0 3 1000 0 0 20 0 1 0 5";
    struct cpu_thread_snap t = {0, 0};

    (void)state;
    assert_int_equal(cpu_parse_thread_stat(line, 1000, &t), 0);
    assert_int_equal(t.user_us, 3000);
    assert_int_equal(t.sys_us, 1000000);
}

static void test_thread_stat_rejects(void **state)
{
    static const char *const bad[] = {
        "",
        "1234 a S 1 2 3",                          /* no parentheses */
        "1234 (x) S 1 1234 1234 0 -1 4194560 100", /* truncated before utime */
        "1234 (x) S 1 1234 1234 0 -1 4194560 100 0 0 0 abc def",
    };
    static const char good[] = "1 (x) S 1 1 1 0 -1 0 0 0 0 0 250 75";
    struct cpu_thread_snap t = {11, 22};

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int rc = cpu_parse_thread_stat(bad[i], 100, &t);
        if (rc != -EINVAL)
            fail_msg("cpu_parse_thread_stat(bad[%zu]) = %d, expected -EINVAL", i, rc);
    }
    assert_int_equal(cpu_parse_thread_stat(good, 0, &t), -EINVAL);
    assert_int_equal(cpu_parse_thread_stat(good, -100, &t), -EINVAL);
    /* failures leave the sums alone */
    assert_int_equal(t.user_us, 11);
    assert_int_equal(t.sys_us, 22);
}

static void test_sample_threads_missing_tid(void **state)
{
    pid_t tids[1] = {0x7ffffff0}; /* not a thread of ours */
    struct cpu_thread_snap t = {123, 456};

    (void)state;
    cpu_sample_threads(tids, 1, &t);
    assert_int_equal(t.user_us, 0);
    assert_int_equal(t.sys_us, 0);
}

/* ---- usage between two snapshots ---- */

static void test_usage_between_exact(void **state)
{
    /* deltas: user 300 + nice 100, system 200, idle 1200, iowait 50, irq 50, softirq 80,
     * steal 20: 2000 ticks in all */
    struct cpu_sys_snap a = {.user = 1000,
                             .nice = 10,
                             .system = 500,
                             .idle = 9000,
                             .iowait = 5,
                             .irq = 1,
                             .softirq = 2,
                             .steal = 0,
                             .intr = 1000,
                             .ncpu = 2};
    struct cpu_sys_snap b = {.user = 1300,
                             .nice = 110,
                             .system = 700,
                             .idle = 10200,
                             .iowait = 55,
                             .irq = 51,
                             .softirq = 82,
                             .steal = 20,
                             .intr = 21000,
                             .ncpu = 2};
    struct cpu_thread_snap ta = {.user_us = 500000, .sys_us = 100000};
    struct cpu_thread_snap tb = {.user_us = 1500000, .sys_us = 500000};
    struct cpu_usage u;

    (void)state;
    cpu_usage_between(&a, &b, &ta, &tb, 2.0, &u);
    assert_true(u.valid);
    assert_int_equal(u.ncpu, 2);
    assert_dbl_near(u.user_pct, 20.0, 1e-9);
    assert_dbl_near(u.system_pct, 10.0, 1e-9);
    assert_dbl_near(u.idle_pct, 60.0, 1e-9);
    assert_dbl_near(u.iowait_pct, 2.5, 1e-9);
    assert_dbl_near(u.irq_pct, 2.5, 1e-9);
    assert_dbl_near(u.softirq_pct, 4.0, 1e-9);
    assert_dbl_near(u.steal_pct, 1.0, 1e-9);
    assert_dbl_near(u.busy_pct, 40.0, 1e-9);
    assert_dbl_near(u.busy_cores, 0.8, 1e-9);
    assert_dbl_near(u.intr_per_s, 10000.0, 1e-9);
    /* threads: 1 s user and 0.4 s system over 2 s x 2 CPUs */
    assert_dbl_near(u.threads_user_pct, 25.0, 1e-9);
    assert_dbl_near(u.threads_system_pct, 10.0, 1e-9);
}

/* A run of 1.2 ms whose threads were charged one 10 ms tick: a share of the machine is at
 * most 100 %, or a peer rejects the whole result (result_json's range check). */
static void test_usage_between_short_period(void **state)
{
    struct cpu_sys_snap a = {.user = 0, .idle = 0, .ncpu = 2};
    struct cpu_sys_snap b = {.user = 0, .idle = 0, .ncpu = 2};
    struct cpu_thread_snap ta = {.user_us = 0, .sys_us = 0};
    struct cpu_thread_snap tb = {.user_us = 10000, .sys_us = 2000};
    struct cpu_usage u;

    (void)state;
    cpu_usage_between(&a, &b, &ta, &tb, 0.0012, &u);
    assert_dbl_near(u.threads_user_pct, 100.0, 0);
    assert_dbl_near(u.threads_system_pct, 2000 * 100.0 / (0.0012 * 1e6 * 2), 1e-9);
}

static void test_usage_between_no_threads(void **state)
{
    struct cpu_sys_snap a = {.user = 0, .idle = 0, .ncpu = 4};
    struct cpu_sys_snap b = {.user = 100, .idle = 300, .intr = 50, .ncpu = 4};
    struct cpu_usage u;

    (void)state;
    cpu_usage_between(&a, &b, NULL, NULL, 0.5, &u);
    assert_true(u.valid);
    assert_dbl_near(u.user_pct, 25.0, 1e-9);
    assert_dbl_near(u.busy_pct, 25.0, 1e-9);
    assert_dbl_near(u.busy_cores, 1.0, 1e-9);
    assert_dbl_near(u.intr_per_s, 100.0, 1e-9);
    assert_dbl_near(u.threads_user_pct, 0.0, 0);
    assert_dbl_near(u.threads_system_pct, 0.0, 0);
}

static void test_usage_between_empty_interval(void **state)
{
    struct cpu_sys_snap a = {.user = 5, .idle = 7, .intr = 9, .ncpu = 2};
    struct cpu_usage u;

    (void)state;
    memset(&u, 0xa5, sizeof(u));
    cpu_usage_between(&a, &a, NULL, NULL, 0.0, &u);
    assert_false(u.valid);
    assert_dbl_near(u.busy_pct, 0.0, 0);
    assert_dbl_near(u.idle_pct, 0.0, 0);
    assert_dbl_near(u.busy_cores, 0.0, 0);
    assert_dbl_near(u.intr_per_s, 0.0, 0);
}

static void test_usage_between_threads_went_backwards(void **state)
{
    /* a thread that exited between samples: the sum drops, which must not wrap around */
    struct cpu_sys_snap a = {.idle = 0, .ncpu = 1};
    struct cpu_sys_snap b = {.idle = 100, .ncpu = 1};
    struct cpu_thread_snap ta = {.user_us = 900000, .sys_us = 900000};
    struct cpu_thread_snap tb = {.user_us = 100000, .sys_us = 100000};
    struct cpu_usage u;

    (void)state;
    cpu_usage_between(&a, &b, &ta, &tb, 1.0, &u);
    assert_dbl_near(u.threads_user_pct, 0.0, 0);
    assert_dbl_near(u.threads_system_pct, 0.0, 0);
    assert_dbl_near(u.idle_pct, 100.0, 1e-9);
    assert_dbl_near(u.busy_pct, 0.0, 1e-9);
}

/* proc(5): "the value of iowait field in /proc/stat will decrease in certain conditions".
 * A counter that went backwards must count as no time, not wrap around to 2^64. */
static void test_usage_between_counter_went_backwards(void **state)
{
    struct cpu_sys_snap a = {.user = 1000, .idle = 5000, .iowait = 100, .ncpu = 2};
    struct cpu_sys_snap b = {.user = 1100, .idle = 5300, .iowait = 90, .ncpu = 2};
    struct cpu_usage u;

    (void)state;
    cpu_usage_between(&a, &b, NULL, NULL, 1.0, &u);
    assert_true(u.valid);
    assert_dbl_near(u.iowait_pct, 0.0, 1e-9);
    assert_dbl_near(u.user_pct, 25.0, 1e-9);
    assert_dbl_near(u.idle_pct, 75.0, 1e-9);
    assert_dbl_near(u.busy_pct, 25.0, 1e-9);
}

/* The basis of the cost figures: the machine's busy time on a quiet host, netrig's own when
 * other work shares it or a cgroup quota is below the machine (issue 26.4). */
static void test_usage_own_basis(void **state)
{
    struct cpu_usage u = {.valid = 1, .ncpu = 2, .busy_cores = 0.6, .softirq_pct = 5};
    struct cpu_proc_snap pa = {1000000, 2000000}, pb = {1100000, 2400000};
    struct cgcpu_snap ga = {.version = 1,
                            .path = "/t",
                            .has_usage = true,
                            .usage_ns = 1000000000,
                            .has_throttle = true,
                            .nr_periods = 10,
                            .nr_throttled = 1},
                      gb = ga;
    (void)state;

    /* 0.5 s of own CPU in 1 s beside 0.1 softirq cores: nothing else ran */
    cpu_usage_own(&pa, &pb, NULL, NULL, 1.0, &u);
    assert_true(u.own_valid);
    assert_dbl_near(u.own_user_s, 0.1, 1e-12);
    assert_dbl_near(u.own_system_s, 0.4, 1e-12);
    assert_dbl_near(u.other_cores, 0.0, 1e-12);
    assert_false(u.own_basis);
    assert_dbl_near(cpu_usage_cost_cores(&u), 0.6, 1e-12);
    /* a busy loop beside it: the machine is busy 1.6 cores, the cost counts the own 0.5 */
    u.busy_cores = 1.6;
    cpu_usage_own(&pa, &pb, NULL, NULL, 1.0, &u);
    assert_dbl_near(u.other_cores, 1.0, 1e-12);
    assert_true(u.own_basis);
    assert_dbl_near(cpu_usage_cost_cores(&u), 0.5, 1e-12);
    /* quiet again, but a quota of 0.5 CPU on a 2-CPU machine */
    u.busy_cores = 0.6;
    gb.usage_ns += 500000000, gb.nr_periods += 10, gb.nr_throttled += 4, gb.throttled_ns = 7;
    ga.quota_cores = gb.quota_cores = 0.5;
    cpu_usage_own(&pa, &pb, &ga, &gb, 1.0, &u);
    assert_true(u.own_basis);
    assert_int_equal(u.cg_version, 1);
    assert_dbl_near(u.cg_usage_s, 0.5, 1e-12);
    assert_dbl_near(u.cg_periods, 10, 1e-12);
    assert_dbl_near(u.cg_throttled, 4, 1e-12);
    /* the process moved to another cgroup between the samples: no cgroup figures */
    snprintf(gb.path, sizeof(gb.path), "/other");
    cpu_usage_own(&pa, &pb, &ga, &gb, 1.0, &u);
    assert_int_equal(u.cg_version, 0);
    /* the root cgroup without a quota is the machine: not reported as a cgroup */
    snprintf(ga.path, sizeof(ga.path), "/");
    gb = ga;
    ga.quota_cores = gb.quota_cores = 0;
    cpu_usage_own(&pa, &pb, &ga, &gb, 1.0, &u);
    assert_false(u.own_basis);
    assert_int_equal(u.cg_version, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_stat_values),
        cmocka_unit_test(test_parse_stat_old_kernel_four_fields),
        cmocka_unit_test(test_parse_stat_rejects),
        cmocka_unit_test(test_sample_system_fixture),
        cmocka_unit_test(test_thread_stat_comm_with_paren),
        cmocka_unit_test(test_thread_last_cpu),
        cmocka_unit_test(test_thread_stat_other_tick_rate),
        cmocka_unit_test(test_thread_stat_rejects),
        cmocka_unit_test(test_sample_threads_missing_tid),
        cmocka_unit_test(test_usage_between_exact),
        cmocka_unit_test(test_usage_between_no_threads),
        cmocka_unit_test(test_usage_between_empty_interval),
        cmocka_unit_test(test_usage_between_short_period),
        cmocka_unit_test(test_usage_between_threads_went_backwards),
        cmocka_unit_test(test_usage_between_counter_went_backwards),
        cmocka_unit_test(test_usage_own_basis),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
