/* Unit tests for netrig tune --apply, --revert and the journal, against temporary copies of
 * the fixture hosts (tests/fixtures/host): a byte-for-byte restore, a global sysctl that is
 * read-only here and a write the kernel refuses, a journal that ends where a kill -9 cut it,
 * --persist files, the journal's round trip and 15 kinds of damaged journal (one line naming
 * the line, nothing changed), choosing the journal to revert, and the lock. */
#define _GNU_SOURCE
#include "test_tune_util.h"

#include "tune_journal.h"
#include "tune_persist.h"

/* ---- apply and revert -------------------------------------------------------------------- */

static void test_apply_revert_exact(void **state)
{
    char root[PATH_MAX], v[256], err[1024], dir[PATH_MAX];
    struct tune_plan p;
    struct tune_apply_result res;
    struct tune_revert_result rr;
    struct tune_journal j;
    (void)state;

    copy_fixture("seed001-wan", root, sizeof(root));
    build_plan(root, 10 * G, 30 * MS, &p);
    assert_int_equal(apply(root, &p, false, &res), 0);
    assert_int_equal(res.applied, 9);
    assert_int_equal(res.refused + res.blocked + res.unverified, 0);
    read_value(root, "/proc/sys/net/ipv4/tcp_rmem", v, sizeof(v));
    assert_string_equal(v, "4096 87380 134217728");
    read_value(root, "/sys/class/net/eth3/tx_queue_len", v, sizeof(v));
    assert_string_equal(v, "10000");
    /* the journal holds every old value, exactly as read */
    assert_int_equal(tune_journal_load(res.journal, &j, err, sizeof(err)), 0);
    assert_int_equal(j.n, 9);
    assert_true(j.done);
    assert_string_equal(j.sysroot, root);
    for (size_t i = 0; i < j.n; i++)
        assert_int_equal(j.e[i].state, TUNE_J_APPLIED);
    assert_string_equal(j.e[3].name, "net.ipv4.tcp_rmem");
    assert_string_equal(j.e[3].old_value, "4096\t87380\t174760");
    tune_journal_free(&j);
    /* revert: every byte of the tree as it was */
    state_dir(root, dir, sizeof(dir));
    assert_int_equal(tune_apply_revert(res.journal, root, dir, NULL, &rr, err, sizeof(err)), 0);
    assert_int_equal(rr.restored, 9);
    assert_int_equal(rr.failed, 0);
    assert_string_equal(rr.undo[0].name, "eth3 txqueuelen"); /* newest first */
    assert_same_tree("seed001-wan", root);
    /* a second revert of the same journal is refused */
    tune_apply_revert_free(&rr);
    assert_int_equal(tune_apply_revert(res.journal, root, dir, NULL, &rr, err, sizeof(err)), -1);
    assert_contains(err, "reverted already");
    tune_apply_revert_free(&rr);
    tune_apply_result_free(&res);
    tune_plan_free(&p);
    rm_tree(root);
}

/* A global sysctl that is read-only where netrig runs is not attempted and says why; a value
 * the kernel refuses is reported, journaled as refused, and the rest still apply. */
static void test_apply_refused_and_not_here(void **state)
{
    char root[PATH_MAX], path[PATH_MAX + 64], v[256], err[1024], dir[PATH_MAX];
    struct tune_plan p;
    struct tune_apply_result res;
    struct tune_revert_result rr;
    struct tune_journal j;
    (void)state;

    copy_fixture("seed001-wan", root, sizeof(root));
    snprintf(path, sizeof(path), "%s/proc/sys/net/core/rmem_max", root);
    assert_int_equal(chmod(path, 0444), 0); /* as in a child network namespace since 6.11 */
    build_plan(root, 10 * G, 30 * MS, &p);
    assert_string_equal(change(&p, "net.core.rmem_max")->blocked,
                        "net.core.rmem_max is global and read-only inside this network "
                        "namespace: set it on the host");
    /* the kernel refuses tcp_mtu_probing: a symlink cannot be opened for writing here */
    snprintf(path, sizeof(path), "%s/proc/sys/net/ipv4/tcp_mtu_probing", root);
    snprintf(v, sizeof(v), "%s/proc/sys/net/ipv4/mtu_probing_real", root);
    assert_int_equal(rename(path, v), 0);
    assert_int_equal(symlink("mtu_probing_real", path), 0);
    assert_int_equal(apply(root, &p, false, &res), 0);
    assert_int_equal(res.applied, 7);
    assert_int_equal(res.blocked, 1);
    assert_int_equal(res.refused, 1);
    for (size_t i = 0; i < p.nchanges; i++) {
        if (!strcmp(p.changes[i].name, "net.core.rmem_max"))
            assert_int_equal(res.done[i].outcome, TUNE_O_BLOCKED);
        if (!strcmp(p.changes[i].name, "net.ipv4.tcp_mtu_probing")) {
            assert_int_equal(res.done[i].outcome, TUNE_O_REFUSED);
            assert_contains(res.done[i].error, "writing /proc/sys/net/ipv4/tcp_mtu_probing failed");
        }
    }
    read_value(root, "/proc/sys/net/core/rmem_max", v, sizeof(v));
    assert_string_equal(v, "131071");
    read_value(root, "/proc/sys/net/ipv4/tcp_mtu_probing", v, sizeof(v));
    assert_string_equal(v, "0");
    assert_int_equal(tune_journal_load(res.journal, &j, err, sizeof(err)), 0);
    assert_int_equal(j.n, 8); /* not-here changes are not journaled; refused ones are */
    assert_int_equal(j.e[1].state, TUNE_J_REFUSED);
    tune_journal_free(&j);
    state_dir(root, dir, sizeof(dir));
    assert_int_equal(tune_apply_revert(res.journal, root, dir, NULL, &rr, err, sizeof(err)), 0);
    assert_int_equal(rr.restored, 7);
    assert_int_equal(rr.skipped, 1);
    read_value(root, "/proc/sys/net/ipv4/tcp_rmem", v, sizeof(v));
    assert_string_equal(v, "4096\t87380\t174760");
    tune_apply_revert_free(&rr);
    tune_apply_result_free(&res);
    tune_plan_free(&p);
    rm_tree(root);
}

/* kill -9 between two changes: the journal ends with a change record without its result;
 * --revert restores everything, that one included. */
static void test_revert_after_kill(void **state)
{
    char root[PATH_MAX], dir[PATH_MAX], err[1024], v[256];
    struct tune_journal_header h = {.target = "t", .profile = "throughput"};
    struct tune_journal_writer w;
    struct tune_revert_result rr;
    struct tune_journal j;
    (void)state;

    copy_fixture("seed001-wan", root, sizeof(root));
    state_dir(root, dir, sizeof(dir));
    h.sysroot = root;
    assert_int_equal(tune_journal_create(dir, &h, &w, err, sizeof(err)), 0);
    assert_int_equal(tune_journal_change(&w, 1, "sysctl", "net.ipv4.tcp_rmem",
                                         "/proc/sys/net/ipv4/tcp_rmem", "4096\t87380\t174760",
                                         "1 2 3", err, sizeof(err)),
                     0);
    assert_int_equal(hostwr_write(root, "/proc/sys/net/ipv4/tcp_rmem", "1 2 3"), 0);
    assert_int_equal(tune_journal_result(&w, 1, TUNE_J_APPLIED, "1 2 3", NULL, err, sizeof(err)),
                     0);
    assert_int_equal(tune_journal_change(&w, 2, "sysctl", "net.core.rmem_max",
                                         "/proc/sys/net/core/rmem_max", "131071", "9", err,
                                         sizeof(err)),
                     0);
    assert_int_equal(hostwr_write(root, "/proc/sys/net/core/rmem_max", "9"), 0);
    /* killed here: no result record for seq 2, no done record */
    tune_journal_close(&w);
    assert_int_equal(tune_journal_load(w.path, &j, err, sizeof(err)), 0);
    assert_int_equal(j.n, 2);
    assert_int_equal(j.e[1].state, TUNE_J_PENDING);
    assert_false(j.done);
    tune_journal_free(&j);
    assert_int_equal(tune_apply_revert(w.path, root, dir, NULL, &rr, err, sizeof(err)), 0);
    assert_int_equal(rr.restored, 2);
    read_value(root, "/proc/sys/net/core/rmem_max", v, sizeof(v));
    assert_string_equal(v, "131071");
    assert_same_tree("seed001-wan", root);
    tune_apply_revert_free(&rr);
    rm_tree(root);
}

/* --persist: sysctl.d and udev files, lines others wrote kept, removed/restored by --revert */
static void test_persist(void **state)
{
    char root[PATH_MAX], path[PATH_MAX + 64], dir[PATH_MAX], err[1024], *text = NULL;
    struct tune_plan p;
    struct tune_apply_result res;
    struct tune_revert_result rr;
    static const char before[] = "# site settings\nvm.swappiness = 10\nnet.core.rmem_max = 1\n";
    FILE *f;
    (void)state;

    copy_fixture("seed001-wan", root, sizeof(root));
    assert_int_equal(hostwr_mkdirs(root, "/etc/sysctl.d", 0755), 0);
    snprintf(path, sizeof(path), "%s%s", root, TUNE_SYSCTL_CONF);
    assert_non_null(f = fopen(path, "w"));
    fputs(before, f);
    fclose(f);
    build_plan(root, 10 * G, 30 * MS, &p);
    assert_int_equal(apply(root, &p, true, &res), 0);
    assert_int_equal(res.nfiles, 2);
    assert_int_equal(hostwr_slurp(root, TUNE_SYSCTL_CONF, 1 << 20, &text), 0);
    assert_contains(text, "# Written by netrig tune (test).");
    assert_contains(text, "vm.swappiness = 10\n");
    assert_contains(text, "net.ipv4.tcp_rmem = 4096 87380 134217728\n");
    assert_contains(text, "net.core.rmem_max = 134217728\n");
    assert_null(strstr(text, "net.core.rmem_max = 1\n"));
    free(text);
    assert_int_equal(hostwr_slurp(root, TUNE_UDEV_RULES, 1 << 20, &text), 0);
    assert_contains(text, "ACTION==\"add\", SUBSYSTEM==\"net\", KERNEL==\"eth3\", "
                          "ATTR{tx_queue_len}=\"10000\"\n");
    free(text);
    state_dir(root, dir, sizeof(dir));
    assert_int_equal(tune_apply_revert(res.journal, root, dir, NULL, &rr, err, sizeof(err)), 0);
    assert_int_equal(hostwr_slurp(root, TUNE_SYSCTL_CONF, 1 << 20, &text), 0);
    assert_string_equal(text, before);
    free(text);
    assert_int_equal(hostwr_slurp(root, TUNE_UDEV_RULES, 1 << 20, &text), -ENOENT);
    assert_same_tree("seed001-wan", root);
    tune_apply_revert_free(&rr);
    tune_apply_result_free(&res);
    tune_plan_free(&p);
    rm_tree(root);
}

/* ---- the journal ------------------------------------------------------------------------- */

static void test_journal_round_trip(void **state)
{
    char dir[] = "/tmp/netrig-tune-XXXXXX", err[1024];
    struct tune_journal_header h = {
        .target = "10 Gbit/s x 1 ms", .profile = "latency", .netns = "child", .planned = 3};
    struct tune_journal_writer w;
    struct tune_journal j;
    static const char odd[] = "a \"quoted\"\tvalue\nwith a newline and \\ backslash";
    (void)state;

    assert_non_null(mkdtemp(dir));
    assert_int_equal(tune_journal_create(dir, &h, &w, err, sizeof(err)), 0);
    assert_int_equal(tune_journal_change(&w, 1, "sysctl", "net.ipv4.tcp_rmem",
                                         "/proc/sys/net/ipv4/tcp_rmem", "4096\t87380\t6291456",
                                         "4096 87380 33554432", err, sizeof(err)),
                     0);
    assert_int_equal(
        tune_journal_result(&w, 1, TUNE_J_APPLIED, "4096\t87380\t33554432", NULL, err, sizeof(err)),
        0);
    assert_int_equal(tune_journal_change(&w, 2, "sysfs", "eth0 mtu", "/sys/class/net/eth0/mtu",
                                         "1500", "9000", err, sizeof(err)),
                     0);
    assert_int_equal(
        tune_journal_result(&w, 2, TUNE_J_REFUSED, "1500", "the device is busy", err, sizeof(err)),
        0);
    assert_int_equal(tune_journal_change(&w, 3, "file", TUNE_SYSCTL_CONF, TUNE_SYSCTL_CONF, NULL,
                                         odd, err, sizeof(err)),
                     0);
    assert_int_equal(tune_journal_done(&w, 1, 1, 0, err, sizeof(err)), 0);
    assert_int_equal(tune_journal_revert_start(&w, NULL, err, sizeof(err)), 0);
    assert_int_equal(tune_journal_revert_one(&w, 3, true, NULL, err, sizeof(err)), 0);
    assert_int_equal(tune_journal_revert_one(&w, 1, false, "x", err, sizeof(err)), 0);
    tune_journal_close(&w);

    assert_int_equal(tune_journal_load(w.path, &j, err, sizeof(err)), 0);
    assert_string_equal(j.target, "10 Gbit/s x 1 ms");
    assert_string_equal(j.profile, "latency");
    assert_string_equal(j.netns, "child");
    assert_string_equal(j.sysroot, "");
    assert_int_equal(j.planned, 3);
    assert_int_equal(j.pid, getpid());
    assert_int_equal(j.n, 3);
    assert_string_equal(j.e[0].old_value, "4096\t87380\t6291456");
    assert_int_equal(j.e[0].state, TUNE_J_APPLIED);
    assert_int_equal(j.e[0].revert, TUNE_R_FAILED);
    assert_int_equal(j.e[1].state, TUNE_J_REFUSED);
    assert_string_equal(j.e[1].error, "the device is busy");
    assert_null(j.e[2].old_value);
    assert_string_equal(j.e[2].new_value, odd);
    assert_int_equal(j.e[2].state, TUNE_J_PENDING);
    assert_int_equal(j.e[2].revert, TUNE_R_RESTORED);
    assert_true(j.done);
    assert_int_equal(j.reverts, 1);
    assert_false(j.reverted); /* started, not finished */
    tune_journal_free(&j);
    unlink(w.path);
    rmdir(dir);
}

/* Writes text as a journal file and expects tune_journal_load to refuse it naming the line. */
static void expect_bad(const char *dir, const char *text, const char *want)
{
    char path[PATH_MAX], err[1024];
    struct tune_journal j;
    FILE *f;

    snprintf(path, sizeof(path), "%s/tune-bad.jsonl", dir);
    assert_non_null(f = fopen(path, "w"));
    fputs(text, f);
    fclose(f);
    if (tune_journal_load(path, &j, err, sizeof(err)) == 0)
        fail_msg("journal accepted:\n%s", text);
    assert_contains(err, want);
    assert_contains(err, path);
    assert_null(strchr(err, '\n')); /* one line */
    unlink(path);
}

#define HDR                                                                                        \
    "{\"netrig_tune_journal\":1,\"created\":\"2024-01-01T00:00:00.000000Z\","                      \
    "\"created_unix\":1,\"pid\":1,\"target\":\"t\",\"profile\":\"throughput\","                    \
    "\"sysroot\":null,\"netns\":\"host\",\"planned\":1}\n"
#define CH1                                                                                        \
    "{\"seq\":1,\"kind\":\"sysctl\",\"name\":\"n\",\"path\":\"/proc/sys/net/core/rmem_max\","      \
    "\"old\":\"1\",\"new\":\"2\"}\n"

static void test_journal_damaged(void **state)
{
    char dir[] = "/tmp/netrig-tune-XXXXXX", path[PATH_MAX], err[1024];
    struct tune_journal j;
    (void)state;

    assert_non_null(mkdtemp(dir));
    expect_bad(dir, HDR CH1 "{\"seq\":1,\"resu", "line 3 is truncated");
    expect_bad(dir, HDR "{\"seq\":1,\"kind\":\"sys\n" CH1, "line 2 is not a JSON object");
    expect_bad(dir,
               HDR "{\"seq\":2,\"kind\":\"sysctl\",\"name\":\"n\",\"path\":\"/proc/sys/x\","
                   "\"old\":\"1\",\"new\":\"2\"}\n",
               "line 2 is a change record out of order");
    expect_bad(dir,
               HDR "{\"seq\":1,\"kind\":\"sysctl\",\"name\":\"n\",\"path\":\"/etc/passwd\","
                   "\"old\":\"1\",\"new\":\"2\"}\n",
               "line 2 names a path netrig never changes");
    expect_bad(dir,
               HDR "{\"seq\":1,\"kind\":\"sysfs\",\"name\":\"n\",\"path\":\"/sys/../etc/x\","
                   "\"old\":\"1\",\"new\":\"2\"}\n",
               "line 2 names a path netrig never changes");
    expect_bad(dir,
               HDR "{\"seq\":1,\"kind\":\"sysctl\",\"name\":\"n\",\"path\":\"/proc/sys/x\","
                   "\"old\":null,\"new\":\"2\"}\n",
               "line 2 is a change record with a missing");
    expect_bad(dir, HDR CH1 "{\"seq\":2,\"result\":\"applied\"}\n",
               "line 3 is a result for a change");
    expect_bad(dir, HDR CH1 "{\"seq\":1,\"result\":\"maybe\"}\n",
               "line 3 is a result record with an unknown");
    expect_bad(dir, CH1, "line 1 is not a netrig tune journal header");
    expect_bad(dir, "{\"netrig_tune_journal\":2}\n", "journal version");
    expect_bad(dir, HDR HDR, "line 2 is a second header");
    expect_bad(dir, HDR "[1,2]\n", "line 2 is not a JSON object");
    expect_bad(dir, HDR "{\"what\":1}\n", "line 2 is a record netrig does not know");
    expect_bad(dir, HDR CH1 "{\"revert_seq\":1,\"result\":\"restored\"}\n", "malformed revert");
    expect_bad(dir, "", "is empty");
    snprintf(path, sizeof(path), "%s/none.jsonl", dir);
    assert_int_equal(tune_journal_load(path, &j, err, sizeof(err)), -1);
    assert_contains(err, "does not exist");
    rmdir(dir);
}

/* A damaged journal makes --revert change nothing at all. */
static void test_revert_damaged_changes_nothing(void **state)
{
    char root[PATH_MAX], dir[PATH_MAX], err[1024], v[256], *text;
    struct tune_plan p;
    struct tune_apply_result res;
    struct tune_revert_result rr;
    FILE *f;
    (void)state;

    copy_fixture("seed001-wan", root, sizeof(root));
    build_plan(root, 10 * G, 30 * MS, &p);
    assert_int_equal(apply(root, &p, false, &res), 0);
    assert_int_equal(hostwr_slurp(NULL, res.journal, 1 << 20, &text), 0);
    text[strlen(text) - 5] = '\0'; /* cut the last line short */
    assert_non_null(f = fopen(res.journal, "w"));
    fputs(text, f);
    fclose(f);
    free(text);
    state_dir(root, dir, sizeof(dir));
    assert_int_equal(tune_apply_revert(res.journal, root, dir, NULL, &rr, err, sizeof(err)), -1);
    assert_contains(err, "is truncated");
    assert_contains(err, "nothing was changed");
    read_value(root, "/proc/sys/net/ipv4/tcp_rmem", v, sizeof(v));
    assert_string_equal(v, "4096 87380 134217728"); /* still as applied */
    /* and a journal applied to another tree is not reverted onto this one */
    assert_int_equal(tune_apply_revert(res.journal, "/tmp", dir, NULL, &rr, err, sizeof(err)), -1);
    tune_apply_revert_free(&rr);
    tune_apply_result_free(&res);
    tune_plan_free(&p);
    rm_tree(root);
}

static void test_pick_and_lock(void **state)
{
    char root[PATH_MAX], dir[PATH_MAX], err[1024], pick[PATH_MAX], first[PATH_MAX];
    struct tune_plan p;
    struct tune_apply_result res;
    struct tune_revert_result rr;
    int lock;
    (void)state;

    copy_fixture("seed001-wan", root, sizeof(root));
    state_dir(root, dir, sizeof(dir));
    assert_int_equal(tune_apply_pick_journal(dir, root, NULL, pick, sizeof(pick), err, sizeof(err)),
                     -1);
    assert_contains(err, "no journal in");
    build_plan(root, 10 * G, 30 * MS, &p);
    assert_int_equal(apply(root, &p, false, &res), 0);
    snprintf(first, sizeof(first), "%s", res.journal);
    tune_apply_result_free(&res);
    tune_plan_free(&p);
    build_plan(root, 10 * G, 300 * MS, &p); /* a second apply on top */
    assert_true(p.nchanges > 0);
    assert_int_equal(apply(root, &p, false, &res), 0);
    assert_int_equal(tune_apply_pick_journal(dir, root, NULL, pick, sizeof(pick), err, sizeof(err)),
                     0);
    assert_string_equal(pick, res.journal); /* the newest */
    lock = tune_journal_lock(dir, err, sizeof(err));
    assert_true(lock >= 0);
    assert_int_equal(tune_apply_revert(pick, root, dir, NULL, &rr, err, sizeof(err)), -1);
    assert_contains(err, "another netrig tune is applying or reverting");
    tune_journal_unlock(lock);
    assert_int_equal(tune_apply_revert(pick, root, dir, NULL, &rr, err, sizeof(err)), 0);
    tune_apply_revert_free(&rr);
    assert_int_equal(tune_apply_pick_journal(dir, root, NULL, pick, sizeof(pick), err, sizeof(err)),
                     0);
    assert_string_equal(pick, first); /* the newest not reverted yet */
    assert_int_equal(tune_apply_revert(pick, root, dir, NULL, &rr, err, sizeof(err)), 0);
    tune_apply_revert_free(&rr);
    assert_same_tree("seed001-wan", root);
    assert_int_equal(tune_apply_pick_journal(dir, root, NULL, pick, sizeof(pick), err, sizeof(err)),
                     -1);
    assert_contains(err, "reverted already");
    tune_apply_result_free(&res);
    tune_plan_free(&p);
    rm_tree(root);
}

/* Seeded random damage (flipped bytes, cuts, duplicated lines) to a real journal: each load
 * either succeeds or fails with one line; none crashes (the suite also runs under ASan). */
static void test_journal_mutations(void **state)
{
    char root[PATH_MAX], path[PATH_MAX], err[2048], *good = NULL;
    struct tune_plan p;
    struct tune_apply_result res;
    struct tune_journal j;
    unsigned seed = 6, failed = 0;
    (void)state;

    copy_fixture("seed001-wan", root, sizeof(root));
    build_plan(root, 10 * G, 30 * MS, &p);
    assert_int_equal(apply(root, &p, true, &res), 0);
    assert_int_equal(hostwr_slurp(NULL, res.journal, 1 << 20, &good), 0);
    snprintf(path, sizeof(path), "%s/mutant.jsonl", root);
    for (int i = 0; i < 600; i++) {
        size_t n = strlen(good);
        char *m = malloc(2 * n + 2);
        FILE *f;
        assert_non_null(m);
        memcpy(m, good, n + 1);
        switch (rand_r(&seed) % 4) {
        case 0: m[rand_r(&seed) % n] = (char)(rand_r(&seed) % 255 + 1); break;
        case 1: m[rand_r(&seed) % n] = '\0'; break;
        case 2: m[rand_r(&seed) % n] = '\n'; break;
        default: memcpy(m + n, good, n + 1); break; /* every record twice */
        }
        assert_non_null(f = fopen(path, "w"));
        fputs(m, f);
        fclose(f);
        free(m);
        if (tune_journal_load(path, &j, err, sizeof(err)) == 0)
            tune_journal_free(&j);
        else {
            failed++;
            assert_null(strchr(err, '\n'));
        }
    }
    assert_true(failed > 300); /* most damage is caught */
    free(good);
    tune_apply_result_free(&res);
    tune_plan_free(&p);
    rm_tree(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_apply_revert_exact),
        cmocka_unit_test(test_apply_refused_and_not_here),
        cmocka_unit_test(test_revert_after_kill),
        cmocka_unit_test(test_persist),
        cmocka_unit_test(test_journal_round_trip),
        cmocka_unit_test(test_journal_damaged),
        cmocka_unit_test(test_revert_damaged_changes_nothing),
        cmocka_unit_test(test_pick_and_lock),
        cmocka_unit_test(test_journal_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
