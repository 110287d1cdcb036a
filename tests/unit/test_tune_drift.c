/* tune_drift: applied values against a fixture tree: same, drifted, unreadable, superseded by a
 * later journal, forgotten after a revert; a missing state directory has nothing. */
#define _GNU_SOURCE
#include "test_tune_util.h"

#include "tune_drift.h"

static void write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
}

static char top[PATH_MAX];

/* A journal in top/state applying seq 1..n of (name, new) to top/root, optionally reverted. */
static void journal(const char *file, const char *const *kv, unsigned n, bool reverted)
{
    char text[8192], path[PATH_MAX + 64];
    size_t len;

    len = (size_t)snprintf(text, sizeof(text),
                           "{\"netrig_tune_journal\":1,\"created\":\"2026-12-07T01:00:00Z\","
                           "\"created_unix\":1796518800,\"pid\":1,\"target\":\"t\",\"profile\":"
                           "\"throughput\",\"sysroot\":\"%s/root\",\"netns\":\"host\","
                           "\"planned\":%u}\n",
                           top, n);
    for (unsigned i = 0; i < n; i++) {
        const char *name = kv[2 * i], *v = kv[2 * i + 1];
        char p[256];
        snprintf(p, sizeof(p), "/proc/sys/%s", name);
        for (char *c = p + 10; *c; c++)
            if (*c == '.')
                *c = '/';
        len += (size_t)snprintf(text + len, sizeof(text) - len,
                                "{\"seq\":%u,\"kind\":\"sysctl\",\"name\":\"%s\",\"path\":\"%s\","
                                "\"old\":\"1\",\"new\":\"%s\"}\n"
                                "{\"seq\":%u,\"result\":\"applied\",\"now\":\"%s\"}\n",
                                i + 1, name, p, v, i + 1, v);
    }
    len += (size_t)snprintf(text + len, sizeof(text) - len,
                            "{\"done\":true,\"applied\":%u,\"refused\":0,\"unverified\":0,"
                            "\"at\":\"2026-12-07T01:00:01Z\",\"at_unix\":1796518801}\n",
                            n);
    if (reverted) {
        len += (size_t)snprintf(text + len, sizeof(text) - len,
                                "{\"revert\":\"start\",\"at\":\"2026-12-07T01:00:02Z\"}\n");
        for (unsigned i = 0; i < n; i++)
            len += (size_t)snprintf(text + len, sizeof(text) - len,
                                    "{\"revert_seq\":%u,\"result\":\"restored\"}\n", n - i);
        snprintf(text + len, sizeof(text) - len,
                 "{\"revert\":\"done\",\"restored\":%u,\"failed\":0,\"at\":"
                 "\"2026-12-07T01:00:03Z\"}\n",
                 n);
    }
    snprintf(path, sizeof(path), "%s/state/%s", top, file);
    write_file(path, text, 0600);
}

static void value(const char *rel, const char *v)
{
    char path[PATH_MAX + 64];

    snprintf(path, sizeof(path), "%s/root/proc/sys/%s", top, rel);
    write_file(path, v, 0644);
}

static void drift(void **state)
{
    static const char *const first[] = {"net.ipv4.tcp_rmem",  "4096 131072 33554432",
                                        "net.core.somaxconn", "4096",
                                        "net.core.busy_poll", "50"};
    static const char *const later[] = {"net.core.somaxconn", "8192"};
    static const char *const undone[] = {"net.ipv4.tcp_wmem", "1 2 3"};
    char d1[PATH_MAX + 64], err[1024];
    struct tune_drift *d = calloc(1, sizeof(*d));

    (void)state;
    snprintf(top, sizeof(top), "/tmp/netrig-drift-XXXXXX");
    assert_non_null(mkdtemp(top));
    snprintf(d1, sizeof(d1), "%s/root/proc/sys/net/ipv4", top);
    assert_int_equal(hostwr_mkdirs(NULL, d1, 0755), 0);
    snprintf(d1, sizeof(d1), "%s/root/proc/sys/net/core", top);
    assert_int_equal(hostwr_mkdirs(NULL, d1, 0755), 0);
    snprintf(d1, sizeof(d1), "%s/state", top);
    /* no state directory yet: nothing applied */
    assert_int_equal(tune_drift_scan(d1, d, err, sizeof(err)), 0);
    assert_int_equal(d->n, 0);
    assert_int_equal(mkdir(d1, 0700), 0);
    value("net/ipv4/tcp_rmem", "4096\t131072\t33554432\n"); /* tabs, as the kernel writes */
    value("net/core/somaxconn", "4096\n");
    /* busy_poll's file is missing: unreadable counts as drifted */
    journal("tune-20261207T010000Z-1.jsonl", first, 3, false);
    journal("tune-20261207T010100Z-2.jsonl", undone, 1, true);
    assert_int_equal(tune_drift_scan(d1, d, err, sizeof(err)), 0);
    assert_int_equal(d->journals, 1);
    assert_int_equal(d->n, 3);
    assert_int_equal(d->drifted, 1);
    assert_string_equal(d->item[2].name, "net.core.busy_poll");
    assert_true(d->item[2].drifted && d->item[2].unreadable);
    assert_false(d->item[0].drifted);
    /* someone changes tcp_rmem; a later journal sets somaxconn to 8192 (the file says 4096) */
    value("net/ipv4/tcp_rmem", "4096\t131072\t6291456\n");
    journal("tune-20261207T010200Z-3.jsonl", later, 1, false);
    assert_int_equal(tune_drift_scan(d1, d, err, sizeof(err)), 0);
    assert_int_equal(d->journals, 2);
    assert_int_equal(d->n, 3);
    assert_int_equal(d->drifted, 3);
    assert_true(d->applied_unix > 1796518800);
    /* a damaged journal: an error naming it */
    snprintf(d1, sizeof(d1), "%s/state/tune-20261207T010300Z-4.jsonl", top);
    write_file(d1, "{\"netrig_tune_journal\":1,\n", 0600);
    snprintf(d1, sizeof(d1), "%s/state", top);
    assert_int_equal(tune_drift_scan(d1, d, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "tune-20261207T010300Z-4.jsonl"));
    snprintf(d1, sizeof(d1), "%s/x", top);
    rm_tree(d1);
    free(d);
    assert_true(tune_drift_same("4096\t131072  6291456", "4096 131072 6291456"));
    assert_false(tune_drift_same("4096 131072", "4096 131073"));
    assert_false(tune_drift_same("4096", "40 96"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(drift),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
