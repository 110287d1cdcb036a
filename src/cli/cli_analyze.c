/* cli_analyze: `netrig compare`, `netrig plot` and `netrig report` over the stored history. */
#include "cli.h"

#include "compare.h"
#include "plot.h"
#include "report_html.h"
#include "store.h"
#include "store_run.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char help_names[] =
    "RUN is an id (12), a range (10-14), a list (3,5,9), a tag, 'last', sweep:N or mesh:N.\n"
    "      --db PATH         history database (default ~/.local/share/netrig/history.db)\n";

void cli_help_compare(FILE *out)
{
    fprintf(out,
            "usage: netrig compare A B [-J] [--force] [--db PATH]\n"
            "\n"
            "Compares B against A, where each is a run or a set of runs (e.g. tags 'before' and\n"
            "'after'): first the tests' parameters that differ (direction, flows, threads, write\n"
            "size, window, congestion control, pacing, MSS, duration, server, ...) with a warning\n"
            "when the tests differ in kind or a set mixes parameters; then every metric's mean\n"
            "side by side with the change in %%, Welch's t-test at 95%% where a side has several\n"
            "runs (significant: p < 0.05; 'better' or 'worse' by the metric's direction); then\n"
            "the host settings that differ, the client's and the server's apart, each with both\n"
            "values. rr or crr against stream is refused (exit 2) unless --force.\n"
            "\n"
            "  -J, --json            the comparison as JSON\n"
            "      --force           compare rr or crr runs against stream runs anyway\n");
    fputs(help_names, out);
}

void cli_help_plot(FILE *out)
{
    fprintf(
        out,
        "usage: netrig plot RUN|sweep:N -o FILE.svg|FILE.png [--chart NAME] [--db PATH]\n"
        "\n"
        "Draws a chart with gnuplot (Debian: apt-get install gnuplot-nox): for a stream run\n"
        "the total and per-flow throughput over time with retransmits; for rr and crr the\n"
        "transaction rate and mean latency over time and the latency CDF; for a load run\n"
        "throughput up and down and the probes' latency over time, phases shaded; for a\n"
        "sweep its metric against the first --vary, one line per combination of the others,\n"
        "with confidence-interval error bars.\n"
        "\n"
        "  -o, --output FILE     the chart; .svg or .png chooses the format\n"
        "      --chart NAME      all: a load run's all-in-one chart (its default); cdf: its\n"
        "                        probes' latency idle and loaded as 1 - CDF; flows: each TCP\n"
        "                        flow's cwnd and smoothed RTT over time (runs with --sample)\n");
    fputs(help_names, out);
}

void cli_help_report(FILE *out)
{
    fprintf(out, "usage: netrig report RUN|sweep:N|mesh:N|compare A B [--force] -o FILE.html\n"
                 "                     [--db PATH]\n"
                 "\n"
                 "Writes one self-contained HTML page: charts as inline SVG, tables and the host\n"
                 "snapshot; no scripts and nothing fetched from the network. Charts need gnuplot;\n"
                 "without it the page says so and keeps the tables. mesh:N draws a mesh plan as a\n"
                 "matrix per test (source rows, destination columns), each cell coloured by its\n"
                 "throughput or latency, failed cells with their reason. compare A B shows what\n"
                 "netrig compare prints: parameters, warnings, metrics, host settings.\n"
                 "\n"
                 "  -o, --output FILE     the page to write\n"
                 "      --force           (compare) compare rr or crr runs against stream runs\n");
    fputs(help_names, out);
}

struct an_cli {
    const char *db, *output, *chart;
    bool json, force;
};

enum { OPT_DB = 400, OPT_CHART };

static int parse_an(const char *cmd, int argc, char **argv, void (*help)(FILE *),
                    const char *allowed, struct an_cli *ac)
{
    static const struct option lo[] = {
        {"db", required_argument, NULL, OPT_DB},
        {"json", no_argument, NULL, 'J'},
        {"output", required_argument, NULL, 'o'},
        {"force", no_argument, NULL, 'F'}, /* long only: 'F' is not in the short options */
        {"chart", required_argument, NULL, OPT_CHART},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;

    memset(ac, 0, sizeof(*ac));
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":Jo:h", lo, NULL)) != -1) {
        if (c == 'h') {
            help(stdout);
            return 1;
        }
        if (c == '?' || c == ':' ||
            (c != OPT_DB && (c == OPT_CHART ? !strchr(allowed, 'c') : !strchr(allowed, c))))
            return cli_opt_error(c, argv, cmd);
        if (c == OPT_DB)
            ac->db = optarg;
        else if (c == 'J')
            ac->json = true;
        else if (c == 'F')
            ac->force = true;
        else if (c == OPT_CHART)
            ac->chart = optarg;
        else
            ac->output = optarg;
    }
    return 0;
}

/* Resolves one run-set argument; prints the error. */
static int resolve(struct store *st, const char *spec, int64_t **ids, size_t *n)
{
    char err[512];

    if (store_run_resolve(st, spec, ids, n, err, sizeof(err))) {
        cli_error("%s", err);
        return -1;
    }
    return 0;
}

int cli_compare(int argc, char **argv, _Atomic int *stop)
{
    struct an_cli ac;
    struct compare_result c;
    struct store *st;
    int64_t *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    char err[512];
    int rc = parse_an("compare", argc, argv, cli_help_compare, "JF", &ac);

    (void)stop;
    if (rc)
        return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    if (argc - optind != 2) {
        cli_error("compare takes two runs or sets, A and B: e.g. 'netrig compare 12 13' or "
                  "'netrig compare before after'");
        return CLI_EXIT_USAGE;
    }
    st = cli_history_read(ac.db);
    if (!st)
        return CLI_EXIT_FAIL;
    rc = resolve(st, argv[optind], &a, &na) || resolve(st, argv[optind + 1], &b, &nb) ? -1 : 0;
    if (!rc && (rc = compare_sets(st, a, na, b, nb, ac.force ? COMPARE_FORCE : 0, &c, err,
                                  sizeof(err))) != 0)
        cli_error("%s", err);
    if (!rc) {
        if (ac.json) {
            cJSON *o = compare_json(&c, argv[optind], argv[optind + 1]);
            char *t = cJSON_Print(o);
            if (t)
                printf("%s\n", t);
            free(t);
            cJSON_Delete(o);
        } else {
            compare_text(&c, argv[optind], argv[optind + 1], stdout);
        }
        compare_free(&c);
    }
    free(a);
    free(b);
    store_close(st);
    return rc == -EDOM ? CLI_EXIT_USAGE : rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/* N of "sweep:N", else 0. */
static int64_t sweep_id(const char *s)
{
    int64_t id;

    return store_run_ref_parse(s, &id) == STORE_RUN_REF_SWEEP ? id : 0;
}

int cli_plot(int argc, char **argv, _Atomic int *stop)
{
    struct an_cli ac;
    struct plot_out po = {0};
    struct store *st;
    int64_t *ids = NULL;
    size_t n = 0;
    char err[512];
    int chart = PLOT_CHART_DEFAULT, fmt,
        rc = parse_an("plot", argc, argv, cli_help_plot, "oc", &ac);

    (void)stop;
    if (rc)
        return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    if (argc - optind != 1 || !ac.output) {
        cli_error("plot takes one RUN or sweep:N and -o FILE.svg|FILE.png");
        return CLI_EXIT_USAGE;
    }
    fmt = plot_format_of(ac.output);
    if (fmt < 0) {
        cli_error("cannot tell the chart format of '%s': name it FILE.svg or FILE.png", ac.output);
        return CLI_EXIT_USAGE;
    }
    if (ac.chart && (chart = plot_chart_of(ac.chart)) < 0) {
        cli_error("unknown chart '%s' for --chart: use all, cdf or flows", ac.chart);
        return CLI_EXIT_USAGE;
    }
    if (ac.chart && sweep_id(argv[optind])) {
        cli_error("--chart applies to a run, not to a sweep");
        return CLI_EXIT_USAGE;
    }
    po.format = (enum plot_format)fmt;
    po.path = ac.output;
    st = cli_history_read(ac.db);
    if (!st)
        return CLI_EXIT_FAIL;
    if (sweep_id(argv[optind]))
        rc = plot_sweep(st, sweep_id(argv[optind]), NULL, &po, err, sizeof(err));
    else if (!(rc = resolve(st, argv[optind], &ids, &n)))
        rc = plot_run_chart(st, ids[n - 1], (enum plot_chart)chart, &po, err, sizeof(err));
    else
        err[0] = '\0';
    if (rc && err[0])
        cli_error("%s", err);
    else if (!rc && n > 1)
        fprintf(stderr, "netrig: '%s' names %zu runs; plotted the newest, %lld\n", argv[optind], n,
                (long long)ids[n - 1]);
    free(ids);
    store_close(st);
    return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

static int report_write(struct store *st, char **argv, unsigned flags, FILE *f, char *note,
                        size_t notelen, char *err, size_t errlen)
{
    int64_t *a = NULL, *b = NULL, ref;
    enum store_run_ref kind;
    size_t na = 0, nb = 0;
    int rc;

    err[0] = '\0';
    if (!strcmp(argv[optind], "compare")) {
        rc = resolve(st, argv[optind + 1], &a, &na) || resolve(st, argv[optind + 2], &b, &nb)
                 ? -1
                 : report_html_compare(st, a, na, argv[optind + 1], b, nb, argv[optind + 2], flags,
                                       f, note, notelen, err, errlen);
    } else if ((kind = store_run_ref_parse(argv[optind], &ref)) == STORE_RUN_REF_SWEEP) {
        rc = report_html_sweep(st, ref, f, note, notelen, err, errlen);
    } else if (kind == STORE_RUN_REF_MESH) {
        rc = report_html_mesh(st, ref, f, note, notelen, err, errlen);
    } else {
        rc = resolve(st, argv[optind], &a, &na)
                 ? -1
                 : report_html_run(st, a[na - 1], f, note, notelen, err, errlen);
    }
    free(a);
    free(b);
    return rc;
}

int cli_report(int argc, char **argv, _Atomic int *stop)
{
    struct an_cli ac;
    struct store *st;
    char err[512], note[512];
    FILE *f;
    int rc = parse_an("report", argc, argv, cli_help_report, "oF", &ac);

    (void)stop;
    if (rc)
        return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    if (!ac.output || optind >= argc ||
        (strcmp(argv[optind], "compare") ? argc - optind != 1 : argc - optind != 3)) {
        cli_error("report takes RUN, sweep:N, mesh:N or 'compare A B', and -o FILE.html");
        return CLI_EXIT_USAGE;
    }
    if (ac.force && strcmp(argv[optind], "compare")) {
        cli_error("--force applies to 'report compare A B' only");
        return CLI_EXIT_USAGE;
    }
    st = cli_history_read(ac.db);
    if (!st)
        return CLI_EXIT_FAIL;
    f = fopen(ac.output, "w");
    if (!f) {
        cli_error("cannot write report '%s': %s", ac.output, strerror(errno));
        store_close(st);
        return CLI_EXIT_FAIL;
    }
    rc = report_write(st, argv, ac.force ? COMPARE_FORCE : 0, f, note, sizeof(note), err,
                      sizeof(err));
    if (fclose(f) && !rc) {
        snprintf(err, sizeof(err), "cannot write report '%s': %s", ac.output, strerror(errno));
        rc = -1;
    }
    if (rc) {
        if (err[0])
            cli_error("%s", err);
        unlink(ac.output);
    } else if (note[0]) {
        cli_error("warning: %s (the report has its tables but no chart)", note);
    }
    store_close(st);
    return rc == -EDOM ? CLI_EXIT_USAGE : rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
