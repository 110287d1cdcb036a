/* cli: the table of commands (dispatch, --help, help CMD) and shared option parsing. */
#include "cli.h"

#include "log.h"
#include "test_kind.h"
#include "units.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int run_help(int argc, char **argv, _Atomic int *stop);

/* Every command but the test kinds' (model/test_kind.h, which come first), in the order
 * 'netrig --help' lists them. */
static const struct cli_command commands[] = {
    {"load", cli_load, "latency under load: probes idle, under TCP load both ways, after",
     cli_help_load},
    {"mesh", cli_mesh, "run a plan of tests between many daemons, print the matrix", cli_help_mesh},
    {"serve", cli_serve,
     "run the daemon that answers these tests from other hosts\n"
     "(stream, rr and crr with no -c start a built-in loopback server)",
     cli_help_serve},
    {"exporter", cli_exporter, "scheduled tests toward listed targets, results for Prometheus",
     cli_help_exporter},
    {"audit", cli_audit, "read-only check of this host's tuning for a target rate and RTT",
     cli_help_audit},
    {"tune", cli_tune,
     "apply the audit's fixes, journaled (dry run without --apply);\n"
     "--revert undoes them",
     cli_help_tune},
    {"diagnose", cli_diagnose, "why a transfer is slow: a short test, TCP_INFO and host counters",
     cli_help_diagnose},
    {"history", cli_history, "the stored runs (every test is saved; --no-save skips it)",
     cli_help_history},
    {"show", cli_show, "one stored run: parameters, results, host snapshot", cli_help_show},
    {"export", cli_export, "stored runs as CSV or JSON", cli_help_export},
    {"tag", cli_tag, "name runs or sets of runs, e.g. before and after a change", cli_help_tag},
    {"compare", cli_compare, "two runs or sets side by side: % change, t-test, host changes",
     cli_help_compare},
    {"sweep", cli_sweep, "a test over every combination of --vary values, repeated to a CI",
     cli_help_sweep},
    {"plot", cli_plot, "a run or sweep as an SVG or PNG chart (gnuplot)", cli_help_plot},
    {"report", cli_report, "one self-contained HTML report of a run, sweep or comparison",
     cli_help_report},
    {"help", run_help, "show help for a command: netrig help stream", NULL},
};

static const struct cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

/* "  name     summary", each further line of the summary under the first. */
static void list_command(FILE *out, const char *name, const char *line)
{
    const char *nl;

    fprintf(out, "  %-8s ", name);
    while ((nl = strchr(line, '\n'))) {
        fprintf(out, "%.*s\n%11s", (int)(nl - line), line, "");
        line = nl + 1;
    }
    fprintf(out, "%s\n", line);
}

static void list_commands(FILE *out)
{
    const struct test_kind *k;

    for (unsigned i = 0; (k = test_kind_at(i)); i++)
        if (k->command)
            list_command(out, k->command, k->summary);
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        list_command(out, commands[i].name, commands[i].summary);
}

static void help_main(FILE *out)
{
    fprintf(out,
            "netrig %s: measure a network path, find its bottleneck, and prove the fix\n"
            "\n"
            "usage: netrig COMMAND [OPTIONS]\n"
            "\n"
            "commands:\n",
            NETRIG_VERSION);
    list_commands(out);
    fputs("\n"
          "options:\n"
          "  -h, --help      this text\n"
          "  -V, --version   version and built-in features\n"
          "\n"
          "Examples:\n"
          "  netrig stream                          # 10 s loopback test, shows the report\n"
          "  netrig serve -D                        # daemon on port 5301\n"
          "  netrig stream -c HOST -P 4 -T 2 -t 30  # 4 flows on 2 threads for 30 s\n"
          "  netrig stream -c HOST -R -J            # server sends, JSON report\n"
          "  netrig rr -c HOST -P 4 -T 2            # 1-byte request/response latency\n"
          "  netrig crr -c HOST --connect-only      # connections per second\n"
          "  netrig stream -c HOST -u -b 1G         # UDP at 1 Gbit/s: loss and jitter\n",
          out);
}

/* netrig help [COMMAND] */
static int run_help(int argc, char **argv, _Atomic int *stop)
{
    const struct cli_command *c = argc > 1 ? find_command(argv[1]) : NULL;
    const struct test_kind *k = argc > 1 ? test_kind_command(argv[1]) : NULL;

    (void)stop;
    if (argc < 2) {
        help_main(stdout);
        return CLI_EXIT_OK;
    }
    if (k) {
        cli_help_measure(k, stdout);
        return CLI_EXIT_OK;
    }
    if (!c || !c->help) {
        cli_error("no help for '%s': run 'netrig --help' for the list of commands", argv[1]);
        return CLI_EXIT_USAGE;
    }
    c->help(stdout);
    return CLI_EXIT_OK;
}

static void version(void)
{
    printf("netrig %s\nfeatures: stream(tcp,udp) rr(tcp,udp) crr serve json json-stream tcp_info "
           "msg_zerocopy udp_gso latency-histogram cpu-affinity live-view metrics(prometheus) "
           "exporter\n",
           NETRIG_VERSION);
}

void cli_error(const char *fmt, ...)
{
    char raw[2048], text[8192];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    log_escape(raw, text, sizeof(text)); /* a peer's text in it never drives the terminal */
    fprintf(stderr, "netrig: %s\n", text);
}

int cli_opt_error(int c, char *const argv[], const char *cmd)
{
    const char *arg = optind > 0 ? argv[optind - 1] : "?";
    int opt = c == '?' || c == ':' ? optopt : c; /* getopt_long names a refused one in optopt */
    char one[3];

    if (c != '?' && c != ':' && optarg && optarg == arg && optind > 1)
        arg = argv[optind - 2]; /* "--chart x": the option, not its value */
    if (opt > ' ' && opt < 127 && opt != '?' && strncmp(arg, "--", 2)) {
        snprintf(one, sizeof(one), "-%c", opt);
        arg = one;
    }
    if (c == ':')
        return cli_opt_no_value(arg, cmd);
    cli_error("unknown option '%s' for %s: see 'netrig help %s'", arg, cmd, cmd);
    return -1;
}

int cli_opt_no_value(const char *opt, const char *cmd)
{
    cli_error("option '%s' for %s needs a value: see 'netrig help %s'", opt, cmd, cmd);
    return -1;
}

int cli_parse_u32(const char *opt, const char *val, uint32_t lo, uint32_t hi, uint32_t *out)
{
    uint64_t v;

    if (units_parse_count(val, &v) || v < lo || v > hi) {
        cli_error("invalid value '%s' for %s: use a whole number from %u to %u", val, opt, lo, hi);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

int cli_parse_port(const char *val, uint16_t *out)
{
    uint32_t v;

    if (cli_parse_u32("-p", val, 0, 65535, &v))
        return -1;
    *out = (uint16_t)v;
    return 0;
}

int cli_parse_duration(const char *opt, const char *val, uint64_t *ns)
{
    if (units_parse_duration(val, ns)) {
        cli_error("invalid duration '%s' for %s: use a positive time such as 10, 10s, 500ms or 2m",
                  val, opt);
        return -1;
    }
    return 0;
}

/* A limit as typed on the command line: "16M" when it is a whole number of K, M, G or T. */
static void size_text(uint64_t v, char *buf, size_t len)
{
    static const char suffix[] = "KMGT";
    int i = -1;

    while (i < 3 && v && v % 1024 == 0) {
        v /= 1024;
        i++;
    }
    if (i < 0)
        snprintf(buf, len, "%llu", (unsigned long long)v);
    else
        snprintf(buf, len, "%llu%c", (unsigned long long)v, suffix[i]);
}

int cli_parse_size(const char *opt, const char *val, uint64_t hi, uint32_t *out)
{
    uint64_t v;
    char max[32];

    size_text(hi, max, sizeof(max));
    if (units_parse_size(val, &v)) {
        cli_error("invalid size '%s' for %s: use bytes with an optional K, M, G or T suffix "
                  "(powers of 1024), e.g. 64K; at most %s",
                  val, opt, max);
        return -1;
    }
    if (v > hi) {
        cli_error("size '%s' for %s is too large: at most %s (%llu bytes)", val, opt, max,
                  (unsigned long long)hi);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

int cli_parse_sample(const char *val, uint64_t *ns)
{
    if (units_parse_duration(val, ns)) {
        cli_error("invalid duration '%s' for --sample: use a time such as 100ms or 1s", val);
        return -1;
    }
    if (*ns && *ns < PARAMS_MIN_SAMPLE_NS) {
        cli_error("--sample %s is too short: use at least 10ms (or 0 for none)", val);
        return -1;
    }
    if (*ns > PARAMS_MAX_DURATION_NS) {
        cli_error("--sample %s is too long: use at most 86400s", val);
        return -1;
    }
    return 0;
}

int cli_parse_rate(const char *opt, const char *val, uint64_t *out)
{
    if (units_parse_rate(val, out)) {
        cli_error("invalid rate '%s' for %s: use bits/s with an optional K, M, G or T suffix "
                  "(powers of 1000, e.g. 500M), or bytes/s as 60MB",
                  val, opt);
        return -1;
    }
    return 0;
}

int cli_main(int argc, char **argv, _Atomic int *stop)
{
    const char *name = argc > 1 ? argv[1] : NULL;
    const struct cli_command *c;

    if (!name || !strcmp(name, "-h") || !strcmp(name, "--help")) {
        help_main(name ? stdout : stderr);
        return name ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    }
    if (!strcmp(name, "-V") || !strcmp(name, "--version")) {
        version();
        return CLI_EXIT_OK;
    }
    if (test_kind_command(name))
        return cli_measure(argc - 1, argv + 1, stop);
    c = find_command(name);
    if (!c) {
        cli_error("unknown command '%s': run 'netrig --help' for the list", name);
        return CLI_EXIT_USAGE;
    }
    return c->run(argc - 1, argv + 1, stop);
}
