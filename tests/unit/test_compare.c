/* Unit tests for compare: the parameter rows (what differs between the sets, and within one),
 * the warnings (kinds, roles, mixed sets), the refusal of rr against stream without --force,
 * the client's and the server's host differences apart with both values, a side that was not
 * recorded (and why), settings only a newer snapshot records, and the JSON and text forms. */
#include "test_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "compare.h"
#include "store.h"
#include "store_run.h"

static char dir[256];
static struct store *st;

static int setup(void **state)
{
    char path[300], err[512];

    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/netrig-test-compare.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof(path), "%s/c.db", dir);
    st = store_open(path, true, err, sizeof(err));
    return st ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[400];

    (void)state;
    store_close(st);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A one-flow run of kind test ("stream", "rr"), bps bits/s (or transactions/s for rr). */
static void make(struct run_result *r, const char *test, double rate)
{
    memset(r, 0, sizeof(*r));
    snprintf(r->test, sizeof(r->test), "%s", test);
    snprintf(r->server, sizeof(r->server), "192.0.2.7:%d", 5000 + rand() % 1000);
    snprintf(r->started_at, sizeof(r->started_at), "2026-01-02T03:04:05Z");
    params_defaults(&r->params);
    r->params.test = params_test_from_name(test);
    assert_int_equal(result_side_init(&r->local, 1, 1), 0);
    assert_int_equal(result_side_init(&r->remote, 1, 1), 0);
    r->local.valid = r->remote.valid = true;
    snprintf(r->remote.version, sizeof(r->remote.version), "0.1.0");
    r->local.seconds = r->remote.seconds = 1.0;
    r->local.flows[0].sender = strcmp(test, "stream") == 0;
    r->local.flows[0].bytes = r->remote.flows[0].bytes = (uint64_t)(rate / 8);
    r->local.flows[0].seconds = r->remote.flows[0].seconds = 1.0;
    r->local.flows[0].txns = r->remote.flows[0].txns = (uint64_t)rate;
}

/* Stores r with a client snapshot of the given pairs ("key=value", NULL-terminated) and, when
 * server is non-NULL, a server snapshot of those pairs. */
static int64_t add(struct run_result *r, const char *const *client, const char *const *server)
{
    struct hostsnap *c = hostsnap_new();
    char err[512];
    int64_t id = 0;

    for (const char *const *p = client; p && *p; p++) {
        char k[128];
        const char *eq = strchr(*p, '=');
        snprintf(k, sizeof(k), "%.*s", (int)(eq - *p), *p);
        hostsnap_set(c, k, eq + 1);
    }
    if (server) {
        r->remote.host = hostsnap_new();
        for (const char *const *p = server; *p; p++) {
            char k[128];
            const char *eq = strchr(*p, '=');
            snprintf(k, sizeof(k), "%.*s", (int)(eq - *p), *p);
            hostsnap_set(r->remote.host, k, eq + 1);
        }
    }
    assert_int_equal(result_merge(r), 0);
    assert_int_equal(store_begin(st, err, sizeof(err)), 0);
    if (store_add_run(st, r, c, 0, &id, err, sizeof(err)))
        fail_msg("store_add_run: %s", err);
    assert_int_equal(store_commit(st, err, sizeof(err)), 0);
    hostsnap_free(c);
    result_fini(r);
    return id;
}

static const struct compare_param *param(const struct compare_result *c, const char *name)
{
    for (size_t i = 0; i < c->nparams; i++)
        if (!strcmp(c->params[i].name, name))
            return &c->params[i];
    return NULL;
}

static const struct compare_warning *warning(const struct compare_result *c, const char *kind)
{
    for (size_t i = 0; i < c->nwarnings; i++)
        if (!strcmp(c->warnings[i].kind, kind))
            return &c->warnings[i];
    return NULL;
}

static const char *const host_v2[] = {"host.snapshot=2", "net.ipv4.tcp_rmem=4096 131072 6291456",
                                      "iface.eth0.rx-0.rps_cpus=0", NULL};

static void test_param_rows(void **state)
{
    struct run_result r;
    struct compare_result c;
    int64_t a, b;
    char err[512];

    (void)state;
    make(&r, "stream", 1e9);
    a = add(&r, host_v2, NULL);
    make(&r, "stream", 2e9);
    r.params.flows = 4;
    snprintf(r.params.congestion, sizeof(r.params.congestion), "bbr");
    r.params.window = 4 << 20;
    r.params.fq_rate_bps = 1000000000;
    r.params.dir = PARAMS_DIR_REVERSE;
    b = add(&r, host_v2, NULL);
    assert_int_equal(compare_sets(st, &a, 1, &b, 1, 0, &c, err, sizeof(err)), 0);
    assert_non_null(param(&c, "flows"));
    assert_string_equal(param(&c, "flows")->a, "1");
    assert_string_equal(param(&c, "flows")->b, "4");
    assert_string_equal(param(&c, "congestion")->a, "default");
    assert_string_equal(param(&c, "congestion")->b, "bbr");
    assert_string_equal(param(&c, "window")->a, "auto");
    assert_string_equal(param(&c, "window")->b, "4.00 MiB");
    assert_string_equal(param(&c, "fq_rate_bps")->a, "off");
    assert_string_equal(param(&c, "direction")->b, "reverse");
    assert_string_equal(param(&c, "fq_rate_bps")->label, "pacing");
    /* what is alike is not listed: the test, its server (port aside), write size, duration */
    assert_null(param(&c, "test"));
    assert_null(param(&c, "server"));
    assert_null(param(&c, "write_size"));
    assert_null(param(&c, "duration_s"));
    assert_null(param(&c, "req_size")); /* no rr run in either set */
    assert_int_equal(c.nparams, 5);
    assert_int_equal(c.nwarnings, 0);
    compare_free(&c);
}

static void test_mixed_set_and_kinds(void **state)
{
    struct run_result r;
    struct compare_result c;
    int64_t a[2], b, rr, udp;
    char err[512];

    (void)state;
    make(&r, "stream", 1e9);
    a[0] = add(&r, host_v2, NULL);
    make(&r, "stream", 1e9);
    r.params.flows = 2;
    a[1] = add(&r, host_v2, NULL);
    make(&r, "stream", 1e9);
    r.params.flows = 2;
    b = add(&r, host_v2, NULL);
    make(&r, "rr", 10000);
    rr = add(&r, host_v2, NULL);
    make(&r, "stream", 1e9);
    r.params.udp = true;
    r.params.flows = 2;
    udp = add(&r, host_v2, NULL);

    /* set A mixes flows 1 and 2: a row and a warning naming it */
    assert_int_equal(compare_sets(st, a, 2, &b, 1, 0, &c, err, sizeof(err)), 0);
    assert_string_equal(param(&c, "flows")->a, "1 | 2");
    assert_string_equal(param(&c, "flows")->b, "2");
    assert_true(param(&c, "flows")->mixed);
    assert_non_null(warning(&c, "mixed_parameters"));
    assert_contains(warning(&c, "mixed_parameters")->message,
                    "set A mixes parameters (flows 1 | 2)");
    compare_free(&c);

    /* rr against stream: refused, unless forced, then with a warning */
    assert_int_equal(compare_sets(st, &b, 1, &rr, 1, 0, &c, err, sizeof(err)), -EDOM);
    assert_contains(err, "A holds stream runs and B rr runs");
    assert_contains(err, "--force");
    assert_int_equal(compare_sets(st, &b, 1, &rr, 1, COMPARE_FORCE, &c, err, sizeof(err)), 0);
    assert_non_null(warning(&c, "test_kind"));
    assert_string_equal(param(&c, "test")->a, "stream");
    assert_string_equal(param(&c, "test")->b, "rr");
    assert_string_equal(param(&c, "req_size")->a, "n/a");
    compare_free(&c);
    /* a set that mixes rr and stream is refused too */
    int64_t mix[2] = {b, rr};
    assert_int_equal(compare_sets(st, mix, 2, &b, 1, 0, &c, err, sizeof(err)), -EDOM);

    /* UDP against TCP streams: compared, with a warning */
    assert_int_equal(compare_sets(st, &b, 1, &udp, 1, 0, &c, err, sizeof(err)), 0);
    assert_non_null(warning(&c, "test_kind"));
    assert_contains(warning(&c, "test_kind")->message, "A: stream; B: stream/udp");
    assert_string_equal(param(&c, "test")->b, "stream/udp");
    compare_free(&c);
}

static void test_host_sides(void **state)
{
    static const char *const srv_a[] = {"host.snapshot=2", "net.ipv4.tcp_rmem=4096 87380 212992",
                                        NULL};
    static const char *const srv_b[] = {"host.snapshot=2", "net.ipv4.tcp_rmem=4096 87380 33554432",
                                        NULL};
    static const char *const cli_b[] = {"host.snapshot=2", "net.ipv4.tcp_rmem=4096 131072 6291456",
                                        "iface.eth0.rx-0.rps_cpus=ff", NULL};
    struct run_result r;
    struct compare_result c;
    int64_t a, b, none;
    char err[512], *text = NULL;
    size_t len = 0;
    FILE *mem;
    cJSON *j;

    (void)state;
    make(&r, "stream", 55e6);
    a = add(&r, host_v2, srv_a);
    make(&r, "stream", 534e6);
    b = add(&r, cli_b, srv_b);
    assert_int_equal(compare_sets(st, &a, 1, &b, 1, 0, &c, err, sizeof(err)), 0);
    /* the client: RPS changed on rx-0; the server: its tcp_rmem */
    assert_string_equal(c.side[0].name, "client");
    assert_true(c.side[0].compared);
    assert_int_equal(c.side[0].ndiff, 1);
    assert_string_equal(c.side[0].diff[0].key, "iface.eth0.rx-0.rps_cpus");
    assert_string_equal(c.side[0].diff[0].a, "0");
    assert_string_equal(c.side[0].diff[0].b, "ff");
    assert_true(c.side[1].compared);
    assert_int_equal(c.side[1].ndiff, 1);
    assert_string_equal(c.side[1].diff[0].key, "net.ipv4.tcp_rmem");
    assert_string_equal(c.side[1].diff[0].a, "4096 87380 212992");
    assert_string_equal(c.side[1].diff[0].b, "4096 87380 33554432");
    j = compare_json(&c, "slow", "fixed");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "host_differences")), 2);
    text = cJSON_PrintUnformatted(j);
    assert_contains(text, "{\"side\":\"server\",\"key\":\"net.ipv4.tcp_rmem\","
                          "\"a\":\"4096 87380 212992\",\"b\":\"4096 87380 33554432\"}");
    free(text);
    cJSON_Delete(j);
    mem = open_memstream(&text, &len);
    compare_text(&c, "slow", "fixed", mem);
    fclose(mem);
    assert_contains(text, "client host settings that differ (A -> B):\n"
                          "  iface.eth0.rx-0.rps_cpus                 0 -> ff\n");
    assert_contains(text, "server host settings that differ (A -> B):\n"
                          "  net.ipv4.tcp_rmem                        4096 87380 212992 -> 4096 "
                          "87380 33554432\n");
    free(text);
    compare_free(&c);

    /* a run whose server sent nothing: the server is not compared, and the text says why */
    make(&r, "stream", 534e6);
    snprintf(r.remote.host_note, sizeof(r.remote.host_note), "the daemon declined");
    none = add(&r, cli_b, NULL);
    assert_int_equal(compare_sets(st, &a, 1, &none, 1, 0, &c, err, sizeof(err)), 0);
    assert_false(c.side[1].compared);
    assert_int_equal(c.side[1].nmissing, 1);
    assert_int_equal(c.side[1].missing[0].run, none);
    assert_string_equal(c.side[1].missing[0].note, "the daemon declined");
    mem = open_memstream(&text, &len);
    compare_text(&c, "slow", "fixed", mem);
    fclose(mem);
    assert_contains(text, "server host settings: not compared, not recorded for run");
    assert_contains(text, ": the daemon declined\n");
    free(text);
    j = compare_json(&c, "a", "b");
    text = cJSON_PrintUnformatted(j);
    assert_contains(text, "\"server\":{\"compared\":false");
    assert_contains(text, "\"reason\":\"the daemon declined\"");
    free(text);
    cJSON_Delete(j);
    compare_free(&c);
}

/* A snapshot from an older netrig lacks what it never recorded: no difference, counted. */
static void test_older_snapshot(void **state)
{
    static const char *const v1[] = {"net.ipv4.tcp_rmem=4096 131072 6291456",
                                     "net.core.rmem_max=212992", NULL};
    static const char *const v2[] = {"host.snapshot=2",
                                     "net.ipv4.tcp_rmem=4096 131072 6291456",
                                     "net.core.rmem_max=67108864",
                                     "iface.eth0.offload.tso=on",
                                     "iface.eth0.ring.rx=1024",
                                     NULL};
    struct run_result r;
    struct compare_result c;
    int64_t a, b;
    char err[512];

    (void)state;
    make(&r, "stream", 1e9);
    a = add(&r, v1, NULL);
    make(&r, "stream", 1e9);
    b = add(&r, v2, NULL);
    assert_int_equal(compare_sets(st, &a, 1, &b, 1, 0, &c, err, sizeof(err)), 0);
    assert_int_equal(c.side[0].ndiff, 1);
    assert_string_equal(c.side[0].diff[0].key, "net.core.rmem_max");
    assert_string_equal(c.side[0].diff[0].a, "212992");
    assert_string_equal(c.side[0].diff[0].b, "67108864");
    assert_int_equal(c.side[0].unrecorded, 3); /* host.snapshot, offload.tso, ring.rx */
    compare_free(&c);
}

/* The % change only between figures above 0: a latency increase from -27.7 us to 7.8 us has
 * none (not "+128 %"). */
static const struct compare_row *row(const struct compare_result *c, const char *name)
{
    for (size_t i = 0; i < c->nrows; i++)
        if (!strcmp(c->rows[i].def->name, name))
            return &c->rows[i];
    return NULL;
}

/* The client's CPU at 1 Gbit/s for 1 s: the machine busy busy_cores of 2, netrig's process
 * own cores (own < 0: not measured, an older netrig). */
static int64_t add_cpu(double busy_cores, double own)
{
    struct run_result r;

    make(&r, "stream", 1e9);
    r.local.cpu.valid = r.remote.cpu.valid = 1;
    r.local.cpu.ncpu = r.remote.cpu.ncpu = 2;
    r.local.cpu.busy_cores = r.remote.cpu.busy_cores = busy_cores;
    r.local.cpu.busy_pct = r.remote.cpu.busy_pct = 50 * busy_cores;
    if (own >= 0) {
        r.local.cpu.own_valid = true;
        r.local.cpu.seconds = 1;
        r.local.cpu.own_user_s = own / 4, r.local.cpu.own_system_s = own * 3 / 4;
        r.local.cpu.other_cores = busy_cores - own;
        r.local.cpu.own_basis = r.local.cpu.other_cores > CPU_SHARED_CORES;
    }
    return add(&r, NULL, NULL);
}

/* Issue 26: a run beside other work (2 cores busy, netrig 0.1) against a quiet one (0.2 busy,
 * netrig 0.1): the whole machine's figures differ 10x, netrig's own do not; compare sets own
 * against own, and refuses to set own against a machine figure. */
static void test_cpu_basis(void **state)
{
    int64_t busy = add_cpu(2.0, 0.1), quiet = add_cpu(0.2, 0.1), old = add_cpu(0.2, -1);
    struct compare_result c;
    const struct compare_row *r;
    char err[256];
    (void)state;

    assert_int_equal(compare_sets(st, &busy, 1, &quiet, 1, 0, &c, err, sizeof(err)), 0);
    r = row(&c, "local_cores_per_10g");
    assert_non_null(r);
    assert_true(r->own_basis);
    assert_dbl_near(r->a.mean, 1.0, 1e-9); /* 0.1 cores per 1 Gbit/s */
    assert_dbl_near(r->b.mean, 1.0, 1e-9);
    assert_dbl_near(row(&c, "local_cpu_ns_per_byte")->a.mean, 0.8, 1e-9);
    assert_null(row(&c, "local_own_cores_per_10g"));
    assert_null(warning(&c, "cpu_basis"));
    /* the server measured no own figures in either run: its machine figures, as stored */
    r = row(&c, "remote_cores_per_10g");
    assert_non_null(r);
    assert_false(r->own_basis);
    compare_free(&c);

    assert_int_equal(compare_sets(st, &busy, 1, &old, 1, 0, &c, err, sizeof(err)), 0);
    assert_null(row(&c, "local_cores_per_10g"));
    assert_null(row(&c, "local_cpu_ns_per_byte"));
    assert_non_null(warning(&c, "cpu_basis"));
    assert_non_null(strstr(warning(&c, "cpu_basis")->message, "1 of the 2 runs"));
    compare_free(&c);
}

static void test_change_pct(void **state)
{
    (void)state;
    assert_dbl_near(compare_change_pct(200, 150), -25, 1e-12);
    assert_dbl_near(compare_change_pct(20000, 5000), -75, 1e-12);
    assert_dbl_near(compare_change_pct(10, 0), -100, 1e-12);
    assert_true(isnan(compare_change_pct(-27.7, 7.8)));
    assert_true(isnan(compare_change_pct(0, 5)));
    assert_true(isnan(compare_change_pct(5, -1)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_param_rows), cmocka_unit_test(test_mixed_set_and_kinds),
        cmocka_unit_test(test_host_sides), cmocka_unit_test(test_older_snapshot),
        cmocka_unit_test(test_change_pct), cmocka_unit_test(test_cpu_basis),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
