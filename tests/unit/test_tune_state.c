/* Unit tests for the trust checks on netrig tune's state directory (issue 17 item 9): a state
 * directory, or one above it, that others can write or that another user owns is refused with
 * one line and nothing is done; the lock and journals are opened without following links and
 * must be plain files of root (or this user) that nobody else can write; a journal planted in a
 * world-writable --state-dir is never replayed; a journal naming a file netrig never writes is
 * refused; --revert removes the temporary files a kill during --persist leaves. */
#define _GNU_SOURCE
#include "test_tune_util.h"

#include "tune_journal.h"
#include "tune_persist.h"
#include "tune_place.h"
#include "tune_state.h"

#include <dirent.h>

static void make_dir(char *out, size_t len)
{
    char tmpl[] = "/tmp/netrig-state-XXXXXX";

    assert_non_null(mkdtemp(tmpl));
    snprintf(out, len, "%s", tmpl);
}

static void rm_dir(const char *top)
{
    char t[PATH_MAX + 8];

    snprintf(t, sizeof(t), "%s/x", top); /* rm_tree removes the parent of its argument */
    rm_tree(t);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
}

static void test_dir_modes(void **state)
{
    char top[PATH_MAX], dir[PATH_MAX + 32], err[1024];
    bool exists;
    (void)state;

    make_dir(top, sizeof(top));
    snprintf(dir, sizeof(dir), "%s/a/b/tune", top);
    /* missing: fine without create (nothing there to trust), made with create */
    assert_int_equal(tune_state_check_dir(dir, false, &exists, err, sizeof(err)), 0);
    assert_false(exists);
    assert_int_equal(tune_state_check_dir(dir, true, &exists, err, sizeof(err)), 0);
    assert_true(exists);
    /* the state directory itself writable by others: refused, even with the sticky bit */
    assert_int_equal(chmod(dir, 01777), 0);
    assert_int_equal(tune_state_check_dir(dir, false, &exists, err, sizeof(err)), -1);
    assert_contains(err, "is writable by everyone (mode 1777)");
    assert_contains(err, "chmod go-w");
    assert_null(strchr(err, '\n'));
    assert_int_equal(chmod(dir, 0770), 0);
    assert_int_equal(tune_state_check_dir(dir, false, &exists, err, sizeof(err)), -1);
    assert_contains(err, "writable by its group");
    assert_int_equal(chmod(dir, 0755), 0);
    assert_int_equal(tune_state_check_dir(dir, false, &exists, err, sizeof(err)), 0);
    /* a directory above it writable by its group, no sticky bit: refused and named */
    snprintf(dir, sizeof(dir), "%s/a", top);
    assert_int_equal(chmod(dir, 0775), 0);
    snprintf(dir, sizeof(dir), "%s/a/b/tune", top);
    assert_int_equal(tune_state_check_dir(dir, true, &exists, err, sizeof(err)), -1);
    assert_contains(err, "/a', above ");
    /* ... with the sticky bit (like /tmp, which every test here sits under): fine */
    snprintf(dir, sizeof(dir), "%s/a", top);
    assert_int_equal(chmod(dir, 01777), 0);
    snprintf(dir, sizeof(dir), "%s/a/b/tune", top);
    assert_int_equal(tune_state_check_dir(dir, true, &exists, err, sizeof(err)), 0);
    /* relative paths are taken from the working directory */
    assert_int_equal(chdir(top), 0);
    assert_int_equal(tune_state_check_dir("a/b/tune", false, &exists, err, sizeof(err)), 0);
    assert_true(exists);
    assert_int_equal(chdir("/"), 0);
    rm_dir(top);
}

/* Owned by someone else (root only: chown). */
static void test_dir_owner(void **state)
{
    char top[PATH_MAX], dir[PATH_MAX + 32], err[1024];
    (void)state;

    if (geteuid() != 0)
        skip();
    make_dir(top, sizeof(top));
    snprintf(dir, sizeof(dir), "%s/tune", top);
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(chown(dir, 65534, 65534), 0);
    assert_int_equal(tune_state_check_dir(dir, false, NULL, err, sizeof(err)), -1);
    assert_contains(err, "belongs to uid 65534, not root");
    assert_int_equal(chown(dir, 0, 0), 0);
    assert_int_equal(chown(top, 65534, 65534), 0); /* the directory above */
    assert_int_equal(tune_state_check_dir(dir, false, NULL, err, sizeof(err)), -1);
    assert_contains(err, "above");
    assert_int_equal(chown(top, 0, 0), 0);
    rm_dir(top);
}

/* The lock and a journal: no symbolic links, no files others can write, one link. */
static void test_files(void **state)
{
    char top[PATH_MAX], p[PATH_MAX + 32], q[PATH_MAX + 32], err[1024];
    struct tune_journal j;
    int fd;
    (void)state;

    make_dir(top, sizeof(top));
    snprintf(p, sizeof(p), "%s/.lock", top);
    assert_int_equal(symlink("/etc/passwd", p), 0);
    assert_int_equal(tune_journal_lock(top, err, sizeof(err)), -1);
    assert_contains(err, "is a symbolic link");
    unlink(p);
    fd = tune_journal_lock(top, err, sizeof(err));
    assert_true(fd >= 0);
    tune_journal_unlock(fd);

    snprintf(q, sizeof(q), "%s/real.jsonl", top);
    write_file(q, "{}\n", 0600);
    snprintf(p, sizeof(p), "%s/tune-1.jsonl", top);
    assert_int_equal(symlink(q, p), 0);
    assert_int_equal(tune_journal_load(p, &j, err, sizeof(err)), -1);
    assert_contains(err, "is a symbolic link");
    unlink(p);
    assert_int_equal(link(q, p), 0); /* two links */
    assert_int_equal(tune_journal_load(p, &j, err, sizeof(err)), -1);
    assert_contains(err, "has more than one link");
    unlink(p);
    write_file(p, "{}\n", 0666);
    assert_int_equal(tune_journal_load(p, &j, err, sizeof(err)), -1);
    assert_contains(err, "is writable by others");
    assert_null(strchr(err, '\n'));
    rm_dir(top);
}

#define HDR                                                                                        \
    "{\"netrig_tune_journal\":1,\"created\":\"2024-01-01T00:00:00.000000Z\","                      \
    "\"created_unix\":1,\"pid\":1,\"target\":\"t\",\"profile\":\"throughput\","                    \
    "\"sysroot\":null,\"netns\":\"host\",\"planned\":1}\n"

/* The attack of issue 17: a world-writable --state-dir with a planted journal whose "old
 * content" of a file is a sudoers line. Nothing is read, nothing is written. */
static void test_planted_journal(void **state)
{
    char top[PATH_MAX], p[PATH_MAX + 32], err[1024], pick[PATH_MAX];
    struct tune_revert_result rr;
    struct tune_journal j;
    static const char planted[] =
        HDR "{\"seq\":1,\"kind\":\"file\",\"name\":\"x\",\"path\":\"/etc/sudoers.d/x\","
            "\"old\":\"nobody ALL=(ALL) NOPASSWD: ALL\\n\",\"new\":\"\"}\n"
            "{\"seq\":1,\"result\":\"applied\"}\n";
    (void)state;

    make_dir(top, sizeof(top));
    assert_int_equal(chmod(top, 0777), 0);
    snprintf(p, sizeof(p), "%s/tune-20240101T000000.000000Z-1.jsonl", top);
    write_file(p, planted, 0600);
    assert_int_equal(tune_apply_pick_journal(top, NULL, NULL, pick, sizeof(pick), err, sizeof(err)),
                     -1);
    assert_contains(err, "writable by everyone");
    assert_int_equal(tune_apply_revert(p, "/nonexistent", top, NULL, &rr, err, sizeof(err)), -1);
    assert_contains(err, "writable by everyone");
    tune_apply_revert_free(&rr);
    /* in a directory only root can write, the file itself is still one netrig never writes */
    assert_int_equal(chmod(top, 0700), 0);
    assert_int_equal(tune_journal_load(p, &j, err, sizeof(err)), -1);
    assert_contains(err, "line 2 names a path netrig never changes");
    rm_dir(top);
}

static size_t count_temps(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    size_t n = 0;

    assert_non_null(d);
    while ((de = readdir(d)) != NULL)
        n += strstr(de->d_name, ".netrig-") != NULL;
    closedir(d);
    return n;
}

/* kill -9 during --persist leaves "90-netrig.conf.netrig-PID": --revert removes it, and
 * only files of that pattern. */
static void test_revert_removes_temps(void **state)
{
    char root[PATH_MAX], dir[PATH_MAX], etc[PATH_MAX + 32], p[PATH_MAX + 64], err[1024];
    struct tune_plan plan;
    struct tune_apply_result res;
    struct tune_revert_result rr;
    (void)state;

    copy_fixture("seed001-wan", root, sizeof(root));
    build_plan(root, 10 * G, 30 * MS, &plan);
    assert_int_equal(apply(root, &plan, true, &res), 0);
    snprintf(etc, sizeof(etc), "%s/etc/sysctl.d", root);
    snprintf(p, sizeof(p), "%s/90-netrig.conf.netrig-4242", etc);
    write_file(p, "half", 0644);
    snprintf(p, sizeof(p), "%s/90-netrig.conf.netrig-x", etc); /* not ours: kept */
    write_file(p, "keep", 0644);
    snprintf(p, sizeof(p), "%s/etc/udev/rules.d/90-netrig.rules.netrig-7", root);
    write_file(p, "half", 0644);
    assert_int_equal(count_temps(etc), 2);
    state_dir(root, dir, sizeof(dir));
    assert_int_equal(tune_apply_revert(res.journal, root, dir, NULL, &rr, err, sizeof(err)), 0);
    assert_int_equal(count_temps(etc), 1);
    assert_int_equal(access(p, F_OK), -1);
    snprintf(p, sizeof(p), "%s/90-netrig.conf.netrig-x", etc);
    assert_int_equal(access(p, F_OK), 0);
    tune_apply_revert_free(&rr);
    tune_apply_result_free(&res);
    tune_plan_free(&plan);
    rm_tree(root);
}

/* A journal belongs to the network namespace (inode, name), host and, for a child namespace,
 * boot it was applied in; one of an older netrig (no place) only to the host's namespace. */
static void test_place(void **state)
{
    struct hostwr_place here = {
        .netns_inode = 4026532301, .host = "h1", .machine_id = "m1", .boot_id = "b1"};
    struct tune_journal j;
    char why[1024];
    (void)state;

    snprintf(here.netns_name, sizeof(here.netns_name), "wA");
    memset(&j, 0, sizeof(j));
    snprintf(j.path, sizeof(j.path), "/s/tune-1.jsonl");
    snprintf(j.netns, sizeof(j.netns), "child");
    j.place = here;
    j.place_known = true;
    assert_int_equal(tune_place_here(&j, &here, 1, why, sizeof(why)), 1);
    j.place.netns_inode = 4026532302; /* another namespace, same name (recreated) */
    assert_int_equal(tune_place_here(&j, &here, 1, why, sizeof(why)), 0);
    assert_contains(why, "in another network namespace");
    assert_contains(why, "inode 4026532302");
    j.place = here;
    snprintf(j.place.netns_name, sizeof(j.place.netns_name), "wB"); /* inode reused */
    assert_int_equal(tune_place_here(&j, &here, 1, why, sizeof(why)), 0);
    assert_contains(why, "network namespace wB (inode 4026532301) on host h1; this is network "
                         "namespace wA");
    j.place = here;
    snprintf(j.place.machine_id, sizeof(j.place.machine_id), "m2");
    assert_int_equal(tune_place_here(&j, &here, 1, why, sizeof(why)), 0);
    assert_contains(why, "on another host");
    j.place = here;
    snprintf(j.place.boot_id, sizeof(j.place.boot_id), "b0"); /* the namespace died with it */
    assert_int_equal(tune_place_here(&j, &here, 1, why, sizeof(why)), 0);
    assert_contains(why, "earlier boot");
    snprintf(j.netns, sizeof(j.netns), "host"); /* the host's namespace outlives a boot */
    assert_int_equal(tune_place_here(&j, &here, 0, why, sizeof(why)), 1);
    j.place_known = false; /* an older netrig's journal */
    assert_int_equal(tune_place_here(&j, &here, 0, why, sizeof(why)), 1);
    assert_int_equal(tune_place_here(&j, &here, 1, why, sizeof(why)), 0);
    snprintf(j.netns, sizeof(j.netns), "child");
    assert_int_equal(tune_place_here(&j, &here, 1, why, sizeof(why)), 0);
    assert_contains(why, "names no network namespace");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dir_modes), cmocka_unit_test(test_dir_owner),
        cmocka_unit_test(test_files),     cmocka_unit_test(test_planted_journal),
        cmocka_unit_test(test_place),     cmocka_unit_test(test_revert_removes_temps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
