/* cli: dispatch and shared option parsing. */
#include "cli.h"

#include "units.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void help_main(FILE *out)
{
    fprintf(out,
            "netrig %s: measure a network path, find its bottleneck, and prove the fix\n"
            "\n"
            "usage: netrig COMMAND [OPTIONS]\n"
            "\n"
            "commands:\n"
            "  stream   throughput: TCP, or paced UDP with -u (loss, jitter)\n"
            "  rr       request/response latency and rate, TCP or UDP\n"
            "  crr      connection rate: connect, request, response, close\n"
            "  mesh     run a plan of tests between many daemons, print the matrix\n"
            "  serve    run the daemon that answers these tests from other hosts\n"
            "           (stream, rr and crr with no -c start a built-in loopback server)\n"
            "  exporter scheduled tests toward listed targets, results for Prometheus\n"
            "  audit    read-only check of this host's tuning for a target rate and RTT\n"
            "  tune     apply the audit's fixes, journaled (dry run without --apply);\n"
            "           --revert undoes them\n"
            "  diagnose why a transfer is slow: a short test, TCP_INFO and host counters\n"
            "  history  the stored runs (every test is saved; --no-save skips it)\n"
            "  show     one stored run: parameters, results, host snapshot\n"
            "  export   stored runs as CSV or JSON\n"
            "  tag      name runs or sets of runs, e.g. before and after a change\n"
            "  compare  two runs or sets side by side: %% change, t-test, host changes\n"
            "  sweep    a test over every combination of --vary values, repeated to a CI\n"
            "  plot     a run or sweep as an SVG or PNG chart (gnuplot)\n"
            "  report   one self-contained HTML report of a run, sweep or comparison\n"
            "  help     show help for a command: netrig help stream\n"
            "\n"
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
            NETRIG_VERSION);
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
    va_list ap;

    fputs("netrig: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
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

int cli_parse_size(const char *opt, const char *val, uint64_t hi, uint32_t *out)
{
    uint64_t v;

    if (units_parse_size(val, &v) || v > hi) {
        cli_error("invalid size '%s' for %s: use bytes with an optional K, M or G suffix "
                  "(at most %llu)",
                  val, opt, (unsigned long long)hi);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

int cli_parse_rate(const char *opt, const char *val, uint64_t *out)
{
    if (units_parse_rate(val, out)) {
        cli_error("invalid rate '%s' for %s: use bits/s with an optional K, M or G suffix "
                  "(e.g. 500M), or bytes/s as 60MB",
                  val, opt);
        return -1;
    }
    return 0;
}

int cli_main(int argc, char **argv, volatile sig_atomic_t *stop)
{
    const char *cmd = argc > 1 ? argv[1] : NULL;

    if (!cmd || !strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
        help_main(cmd ? stdout : stderr);
        return cmd ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    }
    if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
        version();
        return CLI_EXIT_OK;
    }
    if (!strcmp(cmd, "help")) {
        if (argc < 3)
            help_main(stdout);
        else if (!strcmp(argv[2], "stream"))
            cli_help_stream(stdout);
        else if (!strcmp(argv[2], "rr"))
            cli_help_rr(stdout);
        else if (!strcmp(argv[2], "crr"))
            cli_help_crr(stdout);
        else if (!strcmp(argv[2], "serve"))
            cli_help_serve(stdout);
        else if (!strcmp(argv[2], "mesh"))
            cli_help_mesh(stdout);
        else if (!strcmp(argv[2], "audit"))
            cli_help_audit(stdout);
        else if (!strcmp(argv[2], "tune"))
            cli_help_tune(stdout);
        else if (!strcmp(argv[2], "diagnose"))
            cli_help_diagnose(stdout);
        else if (!strcmp(argv[2], "exporter"))
            cli_help_exporter(stdout);
        else if (cli_history_help(argv[2], stdout) == 0) {
            /* history, show, export, tag, compare, sweep, plot, report */
        } else {
            cli_error("no help for '%s': run 'netrig --help' for the list of commands", argv[2]);
            return CLI_EXIT_USAGE;
        }
        return CLI_EXIT_OK;
    }
    if (!strcmp(cmd, "stream"))
        return cli_test(PARAMS_TEST_STREAM, argc - 1, argv + 1, stop);
    if (!strcmp(cmd, "rr"))
        return cli_test(PARAMS_TEST_RR, argc - 1, argv + 1, stop);
    if (!strcmp(cmd, "crr"))
        return cli_test(PARAMS_TEST_CRR, argc - 1, argv + 1, stop);
    if (!strcmp(cmd, "serve"))
        return cli_serve(argc - 1, argv + 1, stop);
    if (!strcmp(cmd, "mesh"))
        return cli_mesh(argc - 1, argv + 1, stop);
    if (!strcmp(cmd, "audit"))
        return cli_audit(argc - 1, argv + 1, stop);
    if (!strcmp(cmd, "tune"))
        return cli_tune(argc - 1, argv + 1, stop);
    if (!strcmp(cmd, "diagnose"))
        return cli_diagnose(argc - 1, argv + 1, stop);
    if (!strcmp(cmd, "exporter"))
        return cli_exporter(argc - 1, argv + 1, stop);
    if (cli_history_command(cmd))
        return cli_history(cmd, argc - 1, argv + 1, stop);
    cli_error("unknown command '%s': run 'netrig --help' for the list", cmd);
    return CLI_EXIT_USAGE;
}
