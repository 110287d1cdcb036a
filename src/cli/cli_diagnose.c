/* cli_diagnose: `netrig diagnose` — runs a short stream test (or, with --during, watches the
 * test already running on this host's sockets), samples this host's counters around it, and
 * prints the verdict with its evidence and advice. Exit status: 0 verdict printed, 1 the test
 * failed or was partial, 2 bad command line, 130 interrupted. */
#include "cli.h"

#include "loopsrv.h"

#include "client.h"
#include "diagnose.h"
#include "diagnose_attach.h"
#include "diagnose_report.h"
#include "log.h"
#include "report_text.h"
#include "server.h"
#include "sock.h"
#include "store.h"
#include "test_kind.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void cli_help_diagnose(FILE *out)
{
    fprintf(out,
            "usage: netrig diagnose [-c HOST] [-t TIME] [-P N] [-R] [--rate RATE]\n"
            "                       [--rtt TIME] [--probe-flows] [--tag NAME] [--db PATH |\n"
            "                       --no-save] [-J] [stream options]\n"
            "       netrig diagnose --during [-c HOST] [-p PORT] [-t TIME] [--rate RATE]\n"
            "                       [--rtt TIME] [-J]\n"
            "\n"
            "Why is this transfer as fast as it is? Runs a short TCP stream test (default\n"
            "5 s after a warm-up of %d round trips, at least 0.25 s; no -c: a built-in\n"
            "loopback server), reads the sender's TCP_INFO at every interval (busy, window\n"
            "and buffer limited time, srtt, the peer's window, data in flight, retransmits),\n"
            "what both applications saw (time waiting on the socket, socket buffers, their\n"
            "threads' CPU) and both hosts' counters (TcpExt, softnet_stat, per-CPU busy and\n"
            "softirq time, NIC drops), and names the limit: rwnd_limited, sndbuf_limited,\n"
            "loss_limited, link_capacity, tx_cpu_limited, rx_cpu_limited, app_limited or ok,\n"
            "with the numbers behind it, the advice, and the 'netrig tune' change that fixes\n"
            "it when it is a host setting (docs/diagnose.md).\n"
            "\n"
            "  -c, -p, -t, -P, -T, -R, -w, -C, -O, --fq-rate ...  as for 'netrig stream'\n"
            "  --rate RATE   the rate the path should carry (link or target): checks for\n"
            "                link capacity and sizes the BDP in the advice\n"
            "  --rtt TIME    the path's round-trip time for the BDP (default: min_rtt)\n"
            "  --probe-flows run the test again with 2x and 4x the flows: a sum that stays\n"
            "                flat is a limit the flows share (the link), one that grows a\n"
            "                limit of each flow\n"
            "  --during      run no test: watch the TCP connections with HOST:PORT (default\n"
            "                port %d) for -t seconds, e.g. a 'netrig stream' running now\n"
            "  --tag NAME    tag the saved run (before, after: netrig compare before after)\n"
            "  --db PATH     the history to save to (default as for 'netrig stream')\n"
            "  --no-save     do not save the run; by default it is saved like any test,\n"
            "                its document carrying the verdict and evidence ('diagnose')\n"
            "  -J, --json    one JSON document: {test, sender, ends: {sender, receiver},\n"
            "                verdict: {id, evidence, advice, tune, figures}, run}\n"
            "\n"
            "A netrig daemon sends its own threads' CPU and host counters with its results,\n"
            "so the receiver's drops and CPU count from either end. Exit status: 0 verdict\n"
            "printed, 1 the test failed, 2 bad usage, 130 interrupted.\n",
            DIAG_WARMUP_RTTS, SOCK_DEFAULT_PORT);
}

struct diag_cli {
    struct client_opts o;
    uint64_t rate_bps, rtt_ns, during_ns;
    bool json, during, port_given, omit_given, probe_flows, no_save;
    const char *host, *db, *tag;
};

#define DIAG_WARMUP_MIN_NS 250000000ULL /* the scaled warm-up's floor */
#define DIAG_PROBE_MAX     1024         /* --probe-flows: at most this many flows */

static int take_value(int *i, int argc, char **argv, const char **val)
{
    const char *eq = strchr(argv[*i], '=');

    if (eq && !strncmp(argv[*i], "--", 2)) {
        *val = eq + 1;
        return 0;
    }
    if (*i + 1 >= argc)
        return cli_opt_no_value(argv[*i], "diagnose");
    *val = argv[++*i];
    return 0;
}

static bool is_opt(const char *arg, const char *name)
{
    size_t n = strlen(name);

    return !strncmp(arg, name, n) && (arg[n] == '\0' || arg[n] == '=');
}

/* Options that are diagnose's own; everything else goes to the stream parser. */
static int own_opt(int *i, int argc, char **argv, struct diag_cli *dc)
{
    const char *a = argv[*i], *v;

    if (is_opt(a, "--rate") || is_opt(a, "--rtt")) {
        bool is_rate = is_opt(a, "--rate");
        if (take_value(i, argc, argv, &v))
            return -1;
        if (is_rate)
            return cli_parse_rate("--rate", v, &dc->rate_bps) ? -1 : 1;
        return cli_parse_duration("--rtt", v, &dc->rtt_ns) ? -1 : 1;
    }
    if (!strcmp(a, "--during"))
        return dc->during = true, 1;
    if (!strcmp(a, "--no-save"))
        return dc->no_save = true, 1;
    if (is_opt(a, "--db") || is_opt(a, "--tag")) {
        bool db = is_opt(a, "--db");
        if (take_value(i, argc, argv, db ? &dc->db : &dc->tag))
            return -1;
        if (!db && (!*dc->tag || strlen(dc->tag) > 64 ||
                    strspn(dc->tag, "0123456789") == strlen(dc->tag))) {
            cli_error("invalid value '%s' for --tag: a name of 1 to 64 characters, not a "
                      "number (numbers are run ids)",
                      dc->tag);
            return -1;
        }
        return 1;
    }
    if (!strcmp(a, "--probe-flows"))
        return dc->probe_flows = true, 1;
    if (!strcmp(a, "-J") || !strcmp(a, "--json"))
        return dc->json = true, 1;
    if (!strcmp(a, "--udp") || !strcmp(a, "-u") || !strcmp(a, "--bidir") ||
        !strcmp(a, "--iperf3") || is_opt(a, "--from") || !strcmp(a, "--json-stream") ||
        !strcmp(a, "--live")) {
        cli_error("option %s does not apply to 'netrig diagnose': it runs one TCP stream in one "
                  "direction (-R for the other)",
                  a);
        return -1;
    }
    if (!strcmp(a, "--mptcp")) {
        cli_error("option --mptcp does not apply to 'netrig diagnose': its rules read one TCP "
                  "connection per flow, an MPTCP flow has several (use 'netrig stream --mptcp')");
        return -1;
    }
    return 0;
}

/* Splits argv: diagnose's options here, the rest (after a default -t 5) to cli_measure_parse. */
static int parse_diag(int argc, char **argv, struct diag_cli *dc)
{
    char **fwd = calloc((size_t)argc + 6, sizeof(*fwd));
    int n = 0, rc = 0, targets = 0;

    memset(dc, 0, sizeof(*dc));
    if (!fwd)
        return -1;
    fwd[n++] = argv[0];
    fwd[n++] = "-t";
    fwd[n++] = "5";
    fwd[n++] = "-i"; /* the TCP_INFO samples the means come from */
    fwd[n++] = "0.25";
    for (int i = 1; i < argc && rc >= 0; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            cli_help_diagnose(stdout);
            free(fwd);
            return 1;
        }
        rc = own_opt(&i, argc, argv, dc);
        if (rc == 0) {
            targets += !strcmp(argv[i], "-c") || is_opt(argv[i], "--client");
            dc->port_given |= !strcmp(argv[i], "-p") || is_opt(argv[i], "--port");
            dc->omit_given |= !strncmp(argv[i], "-O", 2) || is_opt(argv[i], "--omit");
            fwd[n++] = argv[i];
        }
    }
    if (rc >= 0 && targets > 1) {
        cli_error("netrig diagnose takes one -c: diagnose one path at a time");
        rc = -1;
    }
    if (rc >= 0)
        rc = cli_measure_parse(test_kind_command("stream"), n, fwd, &dc->o, "diagnose");
    free(fwd);
    if (rc)
        return rc;
    dc->during_ns = dc->o.p.duration_ns;
    dc->o.observer = report_text_quiet_observer(); /* the verdict comes at the end */
    if (!dc->omit_given) { /* leave out slow start and the buffers' growth: 15 round trips */
        dc->o.omit_rtts = DIAG_WARMUP_RTTS;
        dc->o.omit_min_ns = DIAG_WARMUP_MIN_NS;
    }
    if (dc->during && dc->probe_flows) {
        cli_error("--probe-flows runs tests of its own: it does not go with --during");
        return -1;
    }
    if (dc->during && (dc->db || dc->tag || dc->no_save)) {
        cli_error("--during runs no test of its own, so nothing is saved: --db, --tag and "
                  "--no-save do not go with it");
        return -1;
    }
    if (dc->no_save && (dc->db || dc->tag)) {
        cli_error("--no-save saves nothing: it does not go with %s", dc->db ? "--db" : "--tag");
        return -1;
    }
    return 0;
}

static void judge_and_print(const struct diag_cli *dc, const char *what, struct diagnose_sample *s,
                            const struct run_result *r, struct diagnose_verdict *v)
{
    s->target_bps = dc->rate_bps;
    s->target_rtt_s = dc->rtt_ns / 1e9;
    diagnose_judge(s, v);
    if (dc->json) {
        cJSON *doc = diagnose_report_json(what, s, v, r);
        char *text = doc ? cJSON_Print(doc) : NULL;
        if (text)
            printf("%s\n", text);
        free(text);
        cJSON_Delete(doc);
    } else {
        diagnose_report_text(stdout, what, s, v);
    }
}

struct diag_save {
    const struct run_result *r;
    const struct diagnose_sample *s;
    const struct diagnose_verdict *v;
    const char *what, *tag;
};

/* The run as any test's, its document carrying the diagnosis ("diagnose": the -J document
 * without its run), its title naming the verdict unless --title gave one, and --tag. */
static int add_diagnosis(struct store *st, const void *item, const struct hostsnap *hs, int64_t *id,
                         char *err, size_t errlen)
{
    const struct diag_save *ds = item;
    cJSON *doc = diagnose_report_json(ds->what, ds->s, ds->v, NULL);
    char *text = doc ? cJSON_PrintUnformatted(doc) : NULL, title[160];
    int rc = text ? store_add_run(st, ds->r, hs, 0, id, err, errlen) : -1;

    cJSON_Delete(doc);
    if (!text)
        snprintf(err, errlen, "out of memory");
    snprintf(title, sizeof(title), "diagnose: %s", diagnose_id_name(ds->v->id));
    if (!rc)
        rc = store_annotate(st, *id, "diagnose", text, title, err, errlen);
    if (!rc && ds->tag)
        rc = store_tag(st, id, 1, ds->tag, err, errlen);
    free(text);
    return rc;
}

static void save_diagnosis(const struct diag_cli *dc, const struct diag_save *ds)
{
    int64_t id;

    if (dc->no_save)
        return;
    id = cli_history_save_one(dc->db, add_diagnosis, ds);
    if (id && !dc->json)
        printf("saved as run %lld with its verdict%s%s (netrig show %lld; netrig compare "
               "A B compares two diagnoses)\n",
               (long long)id, ds->tag ? ", tag " : "", ds->tag ? ds->tag : "", (long long)id);
}

/* --probe-flows: the same test with 2x and 4x the flows; their sums go into the sample. */
static void run_probes(struct diag_cli *dc, _Atomic int *stop, struct diagnose_sample *s)
{
    uint32_t base = dc->o.p.flows;

    for (uint32_t k = 2; k <= 4 && !*stop && s->nprobes < DIAG_MAX_PROBES; k *= 2) {
        struct client_opts o = dc->o;
        struct run_result r;
        char err[512] = "";
        int rc;

        if (base * k > DIAG_PROBE_MAX)
            break;
        o.p.flows = base * k;
        rc = client_run(&o, stop, &r, err, sizeof(err));
        if (rc < 0) {
            cli_error("--probe-flows with %u flows: %s", o.p.flows, err);
            return;
        }
        if (!r.partial) {
            s->probe[s->nprobes].flows = o.p.flows;
            s->probe[s->nprobes++].throughput_bps = r.summary.throughput_bps;
        }
        result_fini(&r);
    }
}

/* Runs the test (both ends sample their threads and hosts around the measured period). */
static int run_test(struct diag_cli *dc, _Atomic int *stop)
{
    struct diagnose_sample s;
    struct loopsrv em = {0};
    struct run_result r;
    char err[512] = "", what[400];
    bool embedded = !dc->o.host[0];
    int rc;

    if (embedded && loopsrv_start(&em, dc->o.family, err, sizeof(err))) {
        cli_error("%s", err);
        return CLI_EXIT_FAIL;
    }
    if (embedded) {
        snprintf(dc->o.host, sizeof(dc->o.host), "%s", em.host);
        dc->o.port = em.port;
    }
    memset(&s, 0, sizeof(s));
    rc = client_run(&dc->o, stop, &r, err, sizeof(err));
    if (rc >= 0 && dc->probe_flows && !r.partial)
        run_probes(dc, stop, &s);
    if (embedded)
        loopsrv_stop(&em);
    if (rc < 0) {
        cli_error("%s", err);
        return CLI_EXIT_FAIL;
    }
    s.local_receives = embedded;
    if (diagnose_from_run(&r, &s, err, sizeof(err))) {
        cli_error("%s", err);
        result_fini(&r);
        return CLI_EXIT_FAIL;
    }
    if (embedded)
        s.snd.local = s.rcv.local = true;
    snprintf(what, sizeof(what), "%s:%u%s, %u flow(s), %s sends", dc->o.host, dc->o.port,
             embedded ? " (built-in loopback server)" : "", s.flows,
             dc->o.p.dir == PARAMS_DIR_REVERSE ? "server" : "client");
    struct diagnose_verdict v;
    judge_and_print(dc, what, &s, &r, &v);
    if (!*stop) {
        struct diag_save ds = {.r = &r, .s = &s, .v = &v, .what = what, .tag = dc->tag};
        save_diagnosis(dc, &ds);
    }
    if (r.partial && !*stop)
        cli_error("the test ended early (%s): the verdict covers what was measured", r.error);
    rc = r.partial ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    result_fini(&r);
    return *stop ? CLI_EXIT_INTERRUPTED : rc;
}

/* --during: watch the sockets of a test that is already running. */
static int run_during(struct diag_cli *dc, _Atomic int *stop)
{
    struct diagnose_attach_opts ao = {
        .host = dc->o.host, .port = dc->o.port, .duration_ns = dc->during_ns};
    struct diagnose_sample s;
    char err[512], what[400];

    memset(&s, 0, sizeof(s));
    if (diagnose_attach_run(&ao, stop, &s, what, sizeof(what), err, sizeof(err))) {
        cli_error("%s", err);
        return *stop ? CLI_EXIT_INTERRUPTED : CLI_EXIT_FAIL;
    }
    struct diagnose_verdict v;
    judge_and_print(dc, what, &s, NULL, &v);
    return *stop ? CLI_EXIT_INTERRUPTED : CLI_EXIT_OK;
}

int cli_diagnose(int argc, char **argv, _Atomic int *stop)
{
    struct diag_cli dc;
    int rc = parse_diag(argc, argv, &dc);

    if (rc)
        return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    log_setup("netrig", false, LOG_LVL_WARN);
    if (dc.rate_bps && (dc.rate_bps < 1000 || dc.rate_bps > 10000000000000ULL)) {
        cli_error("--rate is out of range: use 1K to 10T");
        return CLI_EXIT_USAGE;
    }
    if (dc.rtt_ns && (dc.rtt_ns < 1000 || dc.rtt_ns > 10000000000ULL)) {
        cli_error("--rtt is out of range: use 1us to 10s");
        return CLI_EXIT_USAGE;
    }
    if (!dc.no_save && cli_history_check_db(dc.db))
        return CLI_EXIT_USAGE;
    return dc.during ? run_during(&dc, stop) : run_test(&dc, stop);
}
