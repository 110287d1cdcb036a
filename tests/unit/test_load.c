/* Unit tests for the load run's analysis (load_result.c, load_advice.c, load_json.c) on parts
 * built by hand: the phases from the load's actual start and stop, the loaded phase's first
 * second left out, nearest-rank percentiles and loss per phase, the increase and its band (at
 * the band edges), the TCP probe judging when the UDP one had no answers, a probe rate not
 * kept, the advice (a queue sized for the rate, a kernel without fq_codel and cake, reno
 * named) and the document's keys; with --classes the probe split by class, each class's
 * figures, metric and document, and the advice on whether the queue spared EF. */
#include "test_util.h"

#include <stdlib.h>

#include "load_json.h"
#include "load_result.h"
#include "metric.h"

#define S 1000000000ULL

/* A probe log: every 10 ms from 0 to 20 s; idle answers in 200 us, loaded (5..15 s) in 20 ms
 * plus i us, with every hundredth loaded probe lost (or all, with all_lost). */
static struct txnlog *probe_log(bool all_lost)
{
    struct txnlog *l = calloc(1, sizeof(*l));

    assert_int_equal(txnlog_init(l, 2000), 0);
    for (uint32_t i = 0; i < 2000; i++) {
        uint64_t t = (uint64_t)i * 10000000ULL, lat = 200000;
        bool loaded = t >= 5 * S && t < 15 * S;
        if (loaded)
            lat = 20000000ULL + i * 1000ULL;
        if (loaded && (all_lost || i % 100 == 0))
            lat = TXNLOG_LOST;
        txnlog_add(l, t, lat);
    }
    return l;
}

static void build(struct load_result *lr, bool udp_all_lost)
{
    memset(lr, 0, sizeof(*lr));
    load_params_defaults(&lr->lp);
    lr->lp.down = false;
    for (int p = LOAD_UDP_PROBE; p <= LOAD_UP; p++)
        lr->wanted[p] = lr->ran[p] = true;
    for (int p = LOAD_UDP_PROBE; p <= LOAD_TCP_PROBE; p++) {
        struct side_result *l = &lr->part[p].local;
        assert_int_equal(result_side_init(l, 1, 1), 0);
        l->log = probe_log(p == LOAD_UDP_PROBE && udp_all_lost);
        l->start_mono_ns = 1000;
        l->stop_mono_ns = 1000 + 20 * S;
        l->seconds = 20;
        l->flows[0].reqs_sent = 2000;
        l->flows[0].reqs_late = p == LOAD_TCP_PROBE ? 400 : 0;
        lr->part[p].summary.transactions = 1980;
    }
    /* the load ran 5.0 .. 15.0 s on the probes' clock */
    lr->part_off_ns[LOAD_UP] = (int64_t)(5 * S);
    lr->part[LOAD_UP].local.start_mono_ns = 7000;
    lr->part[LOAD_UP].local.stop_mono_ns = 7000 + 10 * S;
    lr->part[LOAD_UP].summary.up_bps = 95e6;
    snprintf(lr->part[LOAD_UP].local.congestion, PARAMS_CC_LEN, "reno");
    lr->kernel = (struct load_kernel){0, 0, 0, "tried"};
}

static void test_phases_and_verdict(void **state)
{
    struct load_result lr;
    const struct load_phase_stats *idle, *busy, *rec;
    char adv[8][400];
    size_t n;

    (void)state;
    build(&lr, false);
    load_analyze(&lr);
    idle = &lr.phase[LOAD_BASELINE];
    busy = &lr.phase[LOAD_LOADED];
    rec = &lr.phase[LOAD_RECOVERY];
    assert_dbl_near(idle->end_s, 5, 1e-9);
    assert_dbl_near(busy->start_s, 5, 1e-9);
    assert_dbl_near(busy->from_s, 6, 1e-9); /* the first second of the load left out */
    assert_dbl_near(busy->end_s, 15, 1e-9);
    assert_dbl_near(rec->end_s, 20, 1e-9);
    assert_int_equal(idle->probe[LOAD_UDP_PROBE].sent, 500);
    assert_dbl_near(idle->probe[LOAD_UDP_PROBE].p50_us, 200, 1e-9);
    /* loaded: probes 600..1499, 9 lost (every hundredth), p50 by nearest rank */
    assert_int_equal(busy->probe[LOAD_UDP_PROBE].sent, 900);
    assert_int_equal(busy->probe[LOAD_UDP_PROBE].lost, 9);
    assert_int_equal(busy->probe[LOAD_UDP_PROBE].answered, 891);
    assert_dbl_near(busy->probe[LOAD_UDP_PROBE].loss_pct, 1.0, 1e-9);
    assert_dbl_near(busy->probe[LOAD_UDP_PROBE].min_us, 20601, 1e-9);
    assert_dbl_near(busy->probe[LOAD_UDP_PROBE].max_us, 21499, 1e-9);
    assert_dbl_near(busy->probe[LOAD_UDP_PROBE].p50_us, 21050, 1e-9);
    assert_dbl_near(busy->up_bps, 95e6, 1e-3);
    assert_int_equal(rec->probe[LOAD_UDP_PROBE].sent, 500);
    assert_int_equal(lr.judged_by, LOAD_UDP_PROBE);
    assert_dbl_near(lr.increase_p50_us, 21050 - 200, 1e-9);
    assert_int_equal(lr.band, 1);
    assert_string_equal(load_band_grade(lr.band), "A");
    assert_string_equal(lr.cc_up, "reno");
    assert_true(lr.rate[LOAD_UDP_PROBE].kept);
    assert_dbl_near(lr.rate[LOAD_TCP_PROBE].late_pct, 20, 1e-9);

    n = load_advice(&lr, adv, 8);
    assert_true(n >= 4);
    assert_contains(adv[0], "20.9 ms");
    assert_contains(adv[0], "241.8 KiB at 95.00 Mbit/s up"); /* the queue at the measured rate */
    assert_contains(adv[1], "lacks both");
    assert_contains(adv[2], "90.25 Mbit/s in all"); /* pacing at 95 % */
    assert_contains(adv[3], "reno, a loss-based congestion control");
    load_result_fini(&lr);
}

static void test_bands(void **state)
{
    (void)state;
    assert_int_equal(load_band_of(-3000), 0);
    assert_int_equal(load_band_of(5000), 0);
    assert_int_equal(load_band_of(5001), 1);
    assert_int_equal(load_band_of(30000), 1);
    assert_int_equal(load_band_of(60000), 2);
    assert_int_equal(load_band_of(200000), 3);
    assert_int_equal(load_band_of(400000), 4);
    assert_int_equal(load_band_of(400001), 5);
    assert_string_equal(load_band_grade(5), "F");
    assert_true(isinf(load_band_limit_ms(5)));
    /* a loaded p50 30 us under the idle one is shown as +0.0 ms, never -0.0 */
    assert_false(signbit(load_ms_shown(-30)));
    assert_dbl_near(load_ms_shown(-30), 0, 0);
    assert_dbl_near(load_ms_shown(-60), -0.06, 1e-12);
    assert_dbl_near(load_ms_shown(20850), 20.85, 1e-12);
}

/* UDP dropped under load (a firewall, a policer): the TCP probe judges; a probe that sent too
 * little says so, with both rates. */
static void test_tcp_judges_and_rate_not_kept(void **state)
{
    struct load_result lr;
    char w[8][320];
    size_t n;
    cJSON *doc;

    (void)state;
    build(&lr, true);
    lr.part[LOAD_UDP_PROBE].local.flows[0].reqs_sent = 1000; /* half the 100/s it owed */
    load_analyze(&lr);
    assert_int_equal(lr.phase[LOAD_LOADED].probe[LOAD_UDP_PROBE].answered, 0);
    assert_int_equal(lr.judged_by, LOAD_TCP_PROBE);
    assert_false(lr.rate[LOAD_UDP_PROBE].kept);
    assert_dbl_near(lr.rate[LOAD_UDP_PROBE].sent_per_s, 50, 1e-9);
    load_warnings(&lr, w, &n, 8);
    assert_true(n >= 2);
    assert_contains(w[0], "did not keep its rate: 100/s intended, 50/s sent");
    assert_contains(w[1], "20.0 % of the TCP probes left more than 1 ms after their time");

    doc = load_json(&lr, true);
    assert_string_equal(cJSON_GetObjectItem(doc, "test")->valuestring, "load");
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "latency_increase"), "probe")->valuestring,
        "tcp");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "phases")), 3);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(
                         cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "probes"), "udp"), "t_s")),
                     2000);
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "kernel"), "cake")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "parts"), "down")));
    cJSON_Delete(doc);
    load_result_fini(&lr);
}

/* No load ran: nothing is judged, and the advice says why. */
static void test_not_judged(void **state)
{
    struct load_result lr;
    char adv[8][400];

    (void)state;
    build(&lr, false);
    lr.ran[LOAD_UP] = false;
    load_analyze(&lr);
    assert_int_equal(lr.band, -1);
    assert_int_equal(load_advice(&lr, adv, 8), 1);
    assert_contains(adv[0], "No verdict: no load ran");
    load_result_fini(&lr);
}

/* One-way delays: idle up 3 ms + a clock offset of -1 s (down 200 us - the rest); loaded, up
 * +15 ms and down +5 ms. The drain: after the stop at 15 s the first 20 probes still high, a
 * single quick one among them (not a drain), then all quick: drained at 15.2 s. */
static void test_one_way_and_drain(void **state)
{
    struct load_result lr;
    const int64_t off = -1000000000LL;
    char adv[8][400];
    size_t n;
    cJSON *doc, *inc;

    (void)state;
    build(&lr, false);
    txnlog_fini(lr.part[LOAD_UDP_PROBE].local.log);
    free(lr.part[LOAD_UDP_PROBE].local.log);
    lr.part[LOAD_UDP_PROBE].local.log = calloc(1, sizeof(struct txnlog));
    assert_int_equal(txnlog_init(lr.part[LOAD_UDP_PROBE].local.log, 2000), 0);
    for (uint32_t i = 0; i < 2000; i++) {
        uint64_t t = (uint64_t)i * 10000000ULL;
        int64_t up = 3000000, down = 200000;
        if ((t >= 5 * S && t < 15 * S) || (i >= 1500 && i < 1520 && i != 1505))
            up += 15000000, down += 5000000;
        txnlog_add_owd(lr.part[LOAD_UDP_PROBE].local.log, 0, t, (uint64_t)(up + down), up + off);
    }
    load_analyze(&lr);
    assert_true(lr.owd_judged);
    assert_dbl_near(lr.increase_p50_us, 20000, 1e-6);
    assert_dbl_near(lr.increase_up_p50_us, 15000, 1e-6);
    assert_dbl_near(lr.increase_down_p50_us, 5000, 1e-6);
    assert_int_equal(lr.phase[LOAD_LOADED].probe[LOAD_UDP_PROBE].owd_n, 900);
    assert_true(lr.drained);
    assert_dbl_near(lr.drain_s, 0.2, 1e-6);
    assert_dbl_near(lr.phase[LOAD_RECOVERY].from_s, 15.2, 1e-6);
    assert_int_equal(lr.phase[LOAD_RECOVERY].probe[LOAD_UDP_PROBE].sent, 480);
    n = load_advice(&lr, adv, 8);
    assert_true(n >= 1);
    assert_non_null(strstr(adv[0], "the way up took +15.0 ms"));
    assert_non_null(strstr(adv[0], "the way down +5.0 ms"));
    doc = load_json(&lr, false);
    inc = cJSON_GetObjectItem(doc, "latency_increase");
    assert_dbl_near(cJSON_GetObjectItem(inc, "up_p50_us")->valuedouble, 15000, 1e-6);
    assert_dbl_near(cJSON_GetObjectItem(inc, "drain_s")->valuedouble, 0.2, 1e-6);
    cJSON_Delete(doc);
    load_result_fini(&lr);
}

/* test_classes' document: the set, each class with its probe, the classes' records. */
static void classes_document(const struct load_result *lr)
{
    cJSON *doc, *a, *ef, *probes;

    doc = load_json(lr, true);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "params"), "classes")->valuestring, "rrul");
    a = cJSON_GetObjectItem(doc, "classes");
    assert_int_equal(cJSON_GetArraySize(a), 4);
    ef = cJSON_GetArrayItem(a, 3);
    assert_string_equal(cJSON_GetObjectItem(ef, "name")->valuestring, "EF");
    assert_int_equal(cJSON_GetObjectItem(ef, "dscp")->valueint, 46);
    assert_string_equal(cJSON_GetObjectItem(ef, "probe")->valuestring, "udp_ef");
    assert_dbl_near(cJSON_GetObjectItem(ef, "increase_p50_us")->valuedouble, 800, 1e-9);
    assert_dbl_near(cJSON_GetObjectItem(ef, "up_bps")->valuedouble, 40e6, 1e-3);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(ef, "down_bps"))); /* not loaded down */
    assert_dbl_near(
        cJSON_GetObjectItem(
            cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(ef, "phases"), "loaded"),
                                "latency_us"),
            "p50")
            ->valuedouble,
        1000, 1e-9);
    probes = cJSON_GetObjectItem(doc, "probes");
    assert_int_equal(
        cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(probes, "udp_ef"), "t_s")),
        2000);
    assert_int_equal(
        cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(probes, "udp"), "t_s")), 2000);
    cJSON_Delete(doc);
}

/* --classes rrul: the UDP probe's records of four flows, one per class, every 2.5 ms (each
 * class at 100/s); idle all answer in 200 us, under load BE in 20 ms, BK in 30 ms, CS5 in 5
 * ms and EF in 1 ms (a queue that favours the high classes). The split leaves BE's in the UDP
 * log (the verdict is best effort's), the classes get their own figures, the up test's four
 * flows their class's goodput, and the document names each class with its probe. */
static void build_classes(struct load_result *lr, const uint64_t loaded_ns[4])
{
    struct txnlog *log;

    build(lr, false);
    lr->lp.classes = DSCLASS_RRUL;
    log = lr->part[LOAD_UDP_PROBE].local.log;
    log->n = 0;
    txnlog_fini(log);
    assert_int_equal(txnlog_init(log, 8000), 0);
    for (uint32_t i = 0; i < 8000; i++) {
        uint64_t t = (uint64_t)i * 2500000ULL;
        bool loaded = t >= 5 * S && t < 15 * S;
        txnlog_add_owd(log, i % 4, t, loaded ? loaded_ns[i % 4] : 200000, TXNLOG_NO_OWD);
    }
    lr->part[LOAD_UDP_PROBE].local.flows[0].reqs_sent = 8000;
    lr->part[LOAD_UP].nflows = 4;
    lr->part[LOAD_UP].flows = calloc(4, sizeof(struct flow_summary));
    for (uint32_t f = 0; f < 4; f++)
        lr->part[LOAD_UP].flows[f] =
            (struct flow_summary){.id = f, .throughput_bps = 10e6 * (f + 1)};
}

/* The advice line on the classes, or NULL. */
static const char *class_advice(const struct load_result *lr, char (*adv)[400])
{
    size_t n = load_advice(lr, adv, 8);

    for (size_t i = 0; i < n; i++)
        if (strstr(adv[i], "DSCP") || strstr(adv[i], "favours EF"))
            return adv[i];
    return NULL;
}

/* The advice on the classes: a queue that spares EF said so; one where every class waited
 * alike named, with what would spare EF; none when best effort waited little. */
static void test_classes_advice(void **state)
{
    static const uint64_t favours[4] = {20000000, 30000000, 5000000, 1000000};
    static const uint64_t alike[4] = {20000000, 20500000, 19800000, 20100000};
    static const uint64_t idle[4] = {300000, 300000, 300000, 300000};
    struct load_result lr;
    char adv[8][400];
    const char *a;

    (void)state;
    build_classes(&lr, favours);
    assert_int_equal(load_split_classes(&lr), 0);
    load_analyze(&lr);
    a = class_advice(&lr, adv);
    assert_non_null(a);
    assert_contains(a, "honours DSCP: EF waited +0.8 ms under load against best effort's +19.8");
    load_result_fini(&lr);
    build_classes(&lr, alike);
    assert_int_equal(load_split_classes(&lr), 0);
    load_analyze(&lr);
    a = class_advice(&lr, adv);
    assert_non_null(a);
    assert_contains(a, "Every class waited alike under load (EF +19.9 ms");
    assert_contains(a, "cake's diffserv4 mode (not in this kernel)");
    load_result_fini(&lr);
    build_classes(&lr, idle);
    assert_int_equal(load_split_classes(&lr), 0);
    load_analyze(&lr);
    assert_null(class_advice(&lr, adv));
    load_result_fini(&lr);
}

static void test_classes(void **state)
{
    static const uint64_t loaded_ns[4] = {20000000, 30000000, 5000000, 1000000};
    struct txnlog *log;
    struct load_result lr;
    char name[16];
    cJSON *doc;
    struct metric_value mv[METRIC_MAX];
    double ef_metric = -1;
    size_t m;

    (void)state;
    build_classes(&lr, loaded_ns);
    log = lr.part[LOAD_UDP_PROBE].local.log;
    assert_int_equal(load_split_classes(&lr), 0);
    assert_int_equal(lr.nclasses, 4);
    assert_int_equal(log->n, 2000); /* BE's records stay */
    for (uint32_t c = 1; c < 4; c++)
        assert_int_equal(lr.class_log[c].n, 2000);
    assert_ptr_equal(load_class_log(&lr, 0), log);
    assert_null(load_class_log(&lr, 4));
    load_analyze(&lr);
    assert_dbl_near(lr.phase[LOAD_LOADED].probe[LOAD_UDP_PROBE].p50_us, 20000, 1e-9);
    assert_dbl_near(lr.increase_p50_us, 19800, 1e-9);
    assert_dbl_near(lr.rate[LOAD_UDP_PROBE].intended_per_s, 400, 1e-9);
    assert_true(lr.rate[LOAD_UDP_PROBE].kept);
    for (uint32_t c = 0; c < 4; c++) {
        const struct load_class_stats *cs = &lr.cls[c];
        assert_true(cs->judged);
        assert_int_equal(cs->probe[LOAD_BASELINE].sent, 500);
        assert_int_equal(cs->probe[LOAD_LOADED].sent, 900);
        assert_dbl_near(cs->probe[LOAD_BASELINE].p50_us, 200, 1e-9);
        assert_dbl_near(cs->probe[LOAD_LOADED].p50_us, loaded_ns[c] / 1e3, 1e-9);
        assert_dbl_near(cs->increase_p50_us, loaded_ns[c] / 1e3 - 200, 1e-9);
        assert_dbl_near(cs->up_bps, 10e6 * (c + 1), 1e-3);
        assert_dbl_near(cs->down_bps, 0, 1e-9);
    }
    assert_string_equal(load_class_probe(DSCLASS_RRUL, 0, name, sizeof(name)), "udp");
    assert_string_equal(load_class_probe(DSCLASS_RRUL, 2, name, sizeof(name)), "udp_cs5");
    assert_string_equal(load_class_probe(DSCLASS_RRUL, 3, name, sizeof(name)), "udp_ef");

    classes_document(&lr);
    m = metric_from_load(&lr, mv, METRIC_MAX);
    for (size_t i = 0; i < m; i++)
        if (!strcmp(mv[i].def->name, "ef_latency_increase_p50_us"))
            ef_metric = mv[i].value;
    assert_dbl_near(ef_metric, 800, 1e-9);
    lr.lp.classes = DSCLASS_NONE; /* without classes: null */
    lr.nclasses = 0;
    doc = load_json(&lr, false);
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(doc, "classes")));
    cJSON_Delete(doc);
    load_result_fini(&lr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_phases_and_verdict),
        cmocka_unit_test(test_bands),
        cmocka_unit_test(test_tcp_judges_and_rate_not_kept),
        cmocka_unit_test(test_not_judged),
        cmocka_unit_test(test_one_way_and_drain),
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_classes_advice),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
