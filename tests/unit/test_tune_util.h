/* Helpers shared by the netrig tune unit tests (test_tune.c, test_tune_apply.c): temporary
 * copies of the fixture hosts, byte-for-byte tree comparison, plans built from an audit. */
#ifndef NETRIG_TEST_TUNE_UTIL_H
#define NETRIG_TEST_TUNE_UTIL_H

#include "test_util.h"

#include "audit.h"
#include "hostfs.h"
#include "hostwr.h"
#include "tune_apply.h"
#include "tune_plan.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define FIX(name) NETRIG_FIXTURES "/" name
#define G         1000000000ULL
#define MS        1000000ULL

/* ---- helpers ----------------------------------------------------------------------------- */

static __attribute__((unused)) char copy_src[PATH_MAX], copy_dst[PATH_MAX];

static __attribute__((unused)) int copy_entry(const char *path, const struct stat *sb, int flag,
                                              struct FTW *ftw)
{
    char to[PATH_MAX * 2], link[PATH_MAX];
    (void)ftw;

    snprintf(to, sizeof(to), "%s%s", copy_dst, path + strlen(copy_src));
    if (flag == FTW_D)
        return mkdir(to, 0755) && errno != EEXIST;
    if (flag == FTW_SL) {
        ssize_t n = readlink(path, link, sizeof(link) - 1);
        if (n < 0)
            return -1;
        link[n] = '\0';
        return symlink(link, to);
    }
    char buf[1 << 16];
    int in = open(path, O_RDONLY),
        outfd = open(to, O_WRONLY | O_CREAT | O_TRUNC, sb->st_mode & 0777);
    ssize_t n = 0;
    while (in >= 0 && outfd >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
        if (write(outfd, buf, (size_t)n) != n)
            n = -1;
    if (in >= 0)
        close(in);
    if (outfd >= 0)
        close(outfd);
    return in < 0 || outfd < 0 || n < 0 ? -1 : 0;
}

/* A fresh copy of fixture `name` in a temporary directory (the path is in out). */
static __attribute__((unused)) void copy_fixture(const char *name, char *out, size_t len)
{
    char tmpl[] = "/tmp/netrig-tune-XXXXXX";

    assert_non_null(mkdtemp(tmpl));
    snprintf(out, len, "%s/root", tmpl);
    snprintf(copy_src, sizeof(copy_src), NETRIG_FIXTURES "/%s", name);
    snprintf(copy_dst, sizeof(copy_dst), "%s", out);
    assert_int_equal(nftw(copy_src, copy_entry, 16, FTW_PHYS), 0);
}

static __attribute__((unused)) int rm_entry(const char *path, const struct stat *sb, int flag,
                                            struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static __attribute__((unused)) void rm_tree(const char *root)
{
    char top[PATH_MAX];

    snprintf(top, sizeof(top), "%s", root);
    *strrchr(top, '/') = '\0'; /* the mkdtemp directory */
    nftw(top, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static __attribute__((unused)) void read_value(const char *root, const char *path, char *buf,
                                               size_t len)
{
    assert_true(hostfs_read(root, path, buf, len) >= 0);
}

/* Every file under fixture `name` has the same bytes in the copy at root. */
static __attribute__((unused)) char cmp_root[PATH_MAX];
static __attribute__((unused)) int cmp_failures;

static __attribute__((unused)) int cmp_entry(const char *path, const struct stat *sb, int flag,
                                             struct FTW *ftw)
{
    char other[PATH_MAX * 2], a[1 << 16], b[1 << 16];
    long na, nb;
    (void)sb;
    (void)ftw;

    if (flag != FTW_F)
        return 0;
    snprintf(other, sizeof(other), "%s%s", cmp_root, path + strlen(copy_src));
    na = hostfs_read_raw(NULL, path, a, sizeof(a));
    nb = hostfs_read_raw(NULL, other, b, sizeof(b));
    if (na != nb || na < 0 || memcmp(a, b, (size_t)na)) {
        fprintf(stderr, "differs after revert: %s\n", other);
        cmp_failures++;
    }
    return 0;
}

static __attribute__((unused)) void assert_same_tree(const char *name, const char *root)
{
    snprintf(copy_src, sizeof(copy_src), NETRIG_FIXTURES "/%s", name);
    snprintf(cmp_root, sizeof(cmp_root), "%s", root);
    cmp_failures = 0;
    assert_int_equal(nftw(copy_src, cmp_entry, 16, FTW_PHYS), 0);
    assert_int_equal(cmp_failures, 0);
}

static __attribute__((unused)) struct audit_ctx *run_audit(const char *root, uint64_t rate,
                                                           uint64_t rtt)
{
    struct audit_opts ao = {.sysroot = root, .rate_bps = rate, .rtt_ns = rtt};
    char err[512];
    struct audit_ctx *ctx = audit_create(&ao, err, sizeof(err));

    if (!ctx)
        fail_msg("audit_create: %s", err);
    if (audit_run(ctx, err, sizeof(err)))
        fail_msg("audit_run: %s", err);
    return ctx;
}

static __attribute__((unused)) void build_plan(const char *root, uint64_t rate, uint64_t rtt,
                                               struct tune_plan *plan)
{
    struct audit_ctx *ctx = run_audit(root, rate, rtt);
    char err[256];

    assert_int_equal(tune_plan_build(ctx, plan, err, sizeof(err)), 0);
    audit_destroy(ctx);
}

static __attribute__((unused)) const struct tune_change *change(const struct tune_plan *p,
                                                                const char *name)
{
    for (size_t i = 0; i < p->nchanges; i++)
        if (!strcmp(p->changes[i].name, name))
            return &p->changes[i];
    static const struct tune_change none;
    fail_msg("no change named %s in the plan", name);
    return &none;
}

static __attribute__((unused)) const struct tune_manual *manual(const struct tune_plan *p,
                                                                const char *finding)
{
    for (size_t i = 0; i < p->nmanual; i++)
        if (!strcmp(p->manual[i].finding, finding))
            return &p->manual[i];
    static const struct tune_manual none;
    fail_msg("no manual step for %s", finding);
    return &none;
}

static __attribute__((unused)) void state_dir(const char *root, char *out, size_t len)
{
    snprintf(out, len, "%s/var/lib/netrig/tune", root);
}

static __attribute__((unused)) int apply(const char *root, const struct tune_plan *plan,
                                         bool persist, struct tune_apply_result *res)
{
    char dir[PATH_MAX], err[1024];
    struct tune_apply_opts o = {.sysroot = root,
                                .state_dir = dir,
                                .target = "10 Gbit/s x 30 ms",
                                .stamp = "test",
                                .profile = "throughput",
                                .persist = persist};
    int rc;

    state_dir(root, dir, sizeof(dir));
    rc = tune_apply_run(plan, &o, res, err, sizeof(err));
    if (rc)
        fail_msg("tune_apply_run: %s", err);
    return rc;
}

#endif
