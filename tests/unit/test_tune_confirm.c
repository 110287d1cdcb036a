/* Unit tests for --confirm-within (issue 15 item 2) on temporary copies of a fixture tree: the
 * watchdog reverts an apply nobody confirmed (every byte back, "by":"watchdog" in the
 * journal), leaves a confirmed one alone and ends, refuses a second apply while one waits,
 * never replays a journal that was replaced under it, does nothing for a journal reverted by
 * hand, and --confirm --persist writes the files into the same journal. The integration test
 * tune_safety.sh does the same with real sysctls in a network namespace and a kill -9. */
#define _GNU_SOURCE
#include "test_tune_util.h"

#include "tune_confirm.h"
#include "tune_journal.h"
#include "tune_persist.h"

#include <signal.h>
#include <time.h>

#define WITHIN_MS 1000 /* a watchdog the test lets expire */
/* a watchdog the test confirms or reverts first: long enough that a loaded machine (the
 * whole suite at once, ASan) never lets it expire before the test acts */
#define OPERATOR_MS 30000

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* The process is gone or a zombie waiting for init. */
static bool ended(long pid)
{
    char path[64], buf[512], *p;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    if (hostfs_read(NULL, path, buf, sizeof(buf)) < 0)
        return true;
    p = strrchr(buf, ')');
    return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

static bool wait_ended(long pid, unsigned ms)
{
    for (unsigned t = 0; t < ms; t += 20) {
        if (ended(pid))
            return true;
        sleep_ms(20);
    }
    return ended(pid);
}

static int apply_confirmed(const char *root, int within_ms, struct tune_confirm_job *job,
                           struct tune_apply_result *res, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    struct tune_plan p;
    struct tune_apply_opts o = {.sysroot = root,
                                .state_dir = dir,
                                .target = "t",
                                .profile = "throughput",
                                .started = tune_confirm_start,
                                .hook_arg = job};
    int rc;

    state_dir(root, dir, sizeof(dir));
    memset(job, 0, sizeof(*job));
    snprintf(job->state_dir, sizeof(job->state_dir), "%s", dir);
    snprintf(job->sysroot, sizeof(job->sysroot), "%s", root);
    job->within_ms = within_ms;
    build_plan(root, 10 * G, 30 * MS, &p);
    rc = tune_apply_run(&p, &o, res, err, errlen);
    tune_plan_free(&p);
    return rc;
}

static void test_unconfirmed_is_reverted(void **state)
{
    char root[PATH_MAX], err[1024], v[256];
    struct tune_confirm_job job;
    struct tune_apply_result res;
    struct tune_journal j;
    (void)state;

    copy_fixture("seed001-wan", root, sizeof(root));
    assert_int_equal(apply_confirmed(root, WITHIN_MS, &job, &res, err, sizeof(err)), 0);
    assert_true(job.pid > 0);
    assert_int_equal(res.applied, 9);
    read_value(root, "/proc/sys/net/ipv4/tcp_rmem", v, sizeof(v));
    assert_string_equal(v, "4096 87380 134217728");
    assert_int_equal(tune_journal_load(res.journal, &j, err, sizeof(err)), 0);
    assert_true(j.confirm);
    assert_int_equal(j.confirm_within_ms, WITHIN_MS);
    assert_int_equal(j.watchdog_pid, job.pid);
    assert_false(ended(job.pid));
    tune_journal_free(&j);
    assert_true(wait_ended(job.pid, WITHIN_MS + 5000));
    assert_same_tree("seed001-wan", root);
    assert_int_equal(tune_journal_load(res.journal, &j, err, sizeof(err)), 0);
    assert_true(j.reverted);
    assert_string_equal(j.reverted_by, "watchdog");
    tune_journal_free(&j);
    tune_apply_result_free(&res);
    rm_tree(root);
}

static void test_confirmed_is_kept(void **state)
{
    char root[PATH_MAX], err[1024], v[256], path[PATH_MAX], why[PATH_MAX + 256];
    struct tune_confirm_job job;
    struct tune_apply_result res, res2;
    bool too_late = true;
    (void)state;

    copy_fixture("seed001-wan", root, sizeof(root));
    assert_int_equal(apply_confirmed(root, OPERATOR_MS, &job, &res, err, sizeof(err)), 0);
    /* a second apply while this one waits: refused, nothing changed (the CLI's check) */
    assert_int_equal(tune_confirm_pending(job.state_dir, job.sysroot, path, sizeof(path), why,
                                          sizeof(why), err, sizeof(err)),
                     1);
    assert_string_equal(path, res.journal);
    assert_contains(why, "waits for its confirmation");
    assert_int_equal(tune_confirm_run(job.state_dir, job.sysroot, path, sizeof(path), why,
                                      sizeof(why), &too_late, err, sizeof(err)),
                     1);
    assert_string_equal(path, res.journal);
    assert_true(wait_ended(job.pid, 5000)); /* it saw the confirmation and left */
    sleep_ms(200);
    read_value(root, "/proc/sys/net/ipv4/tcp_rmem", v, sizeof(v));
    assert_string_equal(v, "4096 87380 134217728");
    assert_int_equal(tune_confirm_pending(job.state_dir, job.sysroot, path, sizeof(path), why,
                                          sizeof(why), err, sizeof(err)),
                     0);
    /* nothing waits now */
    assert_int_equal(tune_confirm_run(job.state_dir, job.sysroot, path, sizeof(path), why,
                                      sizeof(why), &too_late, err, sizeof(err)),
                     0);
    assert_false(too_late);
    assert_contains(why, "was confirmed already");
    /* --confirm --persist on a journal of the host: the files, journaled in it */
    struct tune_apply_opts o = {
        .sysroot = root, .state_dir = job.state_dir, .persist = true, .stamp = "test"};
    assert_int_equal(tune_apply_persist_journal(res.journal, &o, &res2, err, sizeof(err)), 0);
    assert_int_equal(res2.nfiles, 2);
    char *text = NULL;
    assert_int_equal(hostwr_slurp(root, TUNE_SYSCTL_CONF, 1 << 20, &text), 0);
    assert_contains(text, "net.ipv4.tcp_rmem = 4096 87380 134217728\n");
    free(text);
    tune_apply_result_free(&res2);
    /* and its revert takes everything back, the files too */
    struct tune_revert_result rr;
    assert_int_equal(
        tune_apply_revert(res.journal, root, job.state_dir, NULL, &rr, err, sizeof(err)), 0);
    assert_int_equal(hostwr_slurp(root, TUNE_SYSCTL_CONF, 1 << 20, &text), -ENOENT);
    assert_same_tree("seed001-wan", root);
    tune_apply_revert_free(&rr);
    tune_apply_result_free(&res);
    rm_tree(root);
}

/* Reverted by hand before the deadline: the watchdog sees it and ends without a change. A
 * journal replaced under a watchdog is not replayed. */
static void test_watchdog_leaves_alone(void **state)
{
    char root[PATH_MAX], err[1024], v[256], copy[PATH_MAX + 8], path[PATH_MAX], why[PATH_MAX + 256];
    struct tune_confirm_job job;
    struct tune_apply_result res;
    struct tune_revert_result rr;
    bool too_late = false;
    char *text = NULL;
    FILE *f;
    (void)state;

    copy_fixture("seed001-wan", root, sizeof(root));
    assert_int_equal(apply_confirmed(root, OPERATOR_MS, &job, &res, err, sizeof(err)), 0);
    assert_int_equal(
        tune_apply_revert(res.journal, root, job.state_dir, NULL, &rr, err, sizeof(err)), 0);
    tune_apply_revert_free(&rr);
    assert_true(wait_ended(job.pid, 5000));
    assert_same_tree("seed001-wan", root);
    tune_apply_result_free(&res);

    /* a new apply; its journal swapped for a copy (another inode) with the same content */
    assert_int_equal(apply_confirmed(root, WITHIN_MS, &job, &res, err, sizeof(err)), 0);
    assert_int_equal(hostwr_slurp(NULL, res.journal, 1 << 20, &text), 0);
    snprintf(copy, sizeof(copy), "%s.new", res.journal);
    assert_non_null(f = fopen(copy, "w"));
    fputs(text, f);
    fclose(f);
    free(text);
    assert_int_equal(chmod(copy, 0600), 0);
    assert_int_equal(rename(copy, res.journal), 0);
    assert_true(wait_ended(job.pid, WITHIN_MS + 5000));
    read_value(root, "/proc/sys/net/ipv4/tcp_rmem", v, sizeof(v));
    assert_string_equal(v, "4096 87380 134217728"); /* not replayed by the watchdog */
    /* the operator can still confirm or revert it */
    assert_int_equal(tune_confirm_run(job.state_dir, job.sysroot, path, sizeof(path), why,
                                      sizeof(why), &too_late, err, sizeof(err)),
                     1);
    tune_apply_result_free(&res);
    rm_tree(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unconfirmed_is_reverted),
        cmocka_unit_test(test_confirmed_is_kept),
        cmocka_unit_test(test_watchdog_leaves_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
