/* cli_exporter: `netrig exporter` options: the configuration file, the metrics endpoint. */
#include "cli.h"
#include "test_kind.h"

#include "exporter.h"
#include "exporter_config.h"
#include "exporter_probe.h"
#include "log.h"
#include "prom.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define EXPORTER_DEFAULT_LISTEN "127.0.0.1:9465"
#define EXPORTER_DEFAULT_PROBES 4

void cli_help_exporter(FILE *out)
{
    fputs("usage: netrig exporter [--config FILE] [--probes N] [--listen ADDR:PORT] [--check]\n"
          "                       [-v]\n"
          "\n"
          "Runs scheduled tests (stream, rr, crr, mptcp) toward the targets in FILE, one at a\n"
          "time, each every its interval, and serves their latest results and run counts to\n"
          "Prometheus at http://ADDR:PORT/metrics. A target that cannot be reached shows as\n"
          "netrig_probe_success 0 with the reason in netrig_probe_failed{reason=...}; a scrape\n"
          "never waits for a running test. FILE is described in docs/exporter.md.\n"
          "Also answers blackbox-style probes: GET "
          "/probe?target=HOST[:PORT]&test=stream|rr|crr|mptcp|load\n"
          "runs that test when scraped, within Prometheus' scrape timeout, and answers\n"
          "probe_success, probe_duration_seconds and the test's figures (docs/exporter.md).\n"
          "\n"
          "      --config FILE       targets and limits; refused at start with the line and\n"
          "                          the problem when invalid (optional with /probe only)\n"
          "      --probes N          at most N /probe tests at once, one per target (default\n"
          "                          4, at most 64; 0 turns /probe off)\n"
          "      --listen ADDR:PORT  where to serve /metrics (default: the file's 'listen',\n"
          "                          else " EXPORTER_DEFAULT_LISTEN "); [IPV6]:PORT or :PORT\n"
          "      --check             check FILE, print the schedule and exit\n"
          "  -v, --verbose           log debug detail\n"
          "\n"
          "Exit status: 0 stopped by SIGTERM/SIGINT (or --check passed), 1 the endpoint could\n"
          "not start, 2 bad command line or configuration.\n",
          out);
}

enum { OPT_CONFIG = 256, OPT_LISTEN, OPT_CHECK, OPT_PROBES };

static const struct option exporter_long[] = {
    {"config", required_argument, NULL, OPT_CONFIG},
    {"listen", required_argument, NULL, OPT_LISTEN},
    {"check", no_argument, NULL, OPT_CHECK},
    {"probes", required_argument, NULL, OPT_PROBES},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

struct exporter_cli {
    const char *config, *listen;
    bool check, verbose;
    unsigned probes;
};

/* 0, 1 when help was printed, -1 after printing the error. */
static int parse(int argc, char **argv, struct exporter_cli *ec)
{
    int c;

    memset(ec, 0, sizeof(*ec));
    ec->probes = EXPORTER_DEFAULT_PROBES;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":vh", exporter_long, NULL)) != -1) {
        switch (c) {
        case 'h': cli_help_exporter(stdout); return 1;
        case 'v': ec->verbose = true; break;
        case OPT_CONFIG: ec->config = optarg; break;
        case OPT_LISTEN: ec->listen = optarg; break;
        case OPT_CHECK: ec->check = true; break;
        case OPT_PROBES: {
            char *end;
            unsigned long n = strtoul(optarg, &end, 10);
            if (end == optarg || *end || optarg[0] == '-' || n > EXPORTER_PROBE_MAX) {
                cli_error("invalid value '%s' for --probes: use a whole number from 0 to %d",
                          optarg, EXPORTER_PROBE_MAX);
                return -1;
            }
            ec->probes = (unsigned)n;
            break;
        }
        default: return cli_opt_error(c, argv, "exporter");
        }
    }
    if (optind < argc) {
        cli_error("unexpected argument '%s' for exporter", argv[optind]);
        return -1;
    }
    if (ec->listen) {
        char host[256];
        uint16_t port;
        if (prom_parse_listen(ec->listen, host, sizeof(host), &port)) {
            cli_error("invalid address '%s' for --listen: use ADDR:PORT, [IPV6]:PORT or :PORT, "
                      "e.g. 127.0.0.1:9465",
                      ec->listen);
            return -1;
        }
    }
    if (!ec->config && !ec->probes) {
        cli_error("exporter with --probes 0 needs --config FILE (see docs/exporter.md)");
        return -1;
    }
    if (!ec->config && ec->check) {
        cli_error("--check checks a --config FILE: give one");
        return -1;
    }
    return 0;
}

static void print_schedule(const struct exporter_config *c, const char *listen)
{
    printf("%s: %u target%s, metrics at http://%s/metrics\n", "ok", c->ntargets,
           c->ntargets == 1 ? "" : "s", listen);
    for (uint32_t i = 0; i < c->ntargets; i++) {
        const struct exporter_target *t = &c->t[i];
        printf("  %-20s %-6s %s to %s port %u, %gs every %gs\n", t->name,
               params_test_name(t->o.p.test), test_kind_protocol(test_kind_of(&t->o.p)), t->o.host,
               t->o.port, (t->o.p.duration_ns + t->o.p.omit_ns) / 1e9, t->interval_ns / 1e9);
    }
}

int cli_exporter(int argc, char **argv, _Atomic int *stop)
{
    struct exporter_cli ec;
    struct exporter_config *c;
    struct exporter *x = NULL;
    struct prom_http *http = NULL;
    struct exporter_probes *probes = NULL;
    struct prom_route route = {.path = "/probe",
                               .fn = exporter_probe_serve,
                               .max_s = (unsigned)EXPORTER_PROBE_MAX_TIMEOUT_S};
    const char *listen;
    char err[700], where[300];
    int rc = parse(argc, argv, &ec);

    if (rc)
        return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    c = calloc(1, sizeof(*c));
    if (!c) {
        cli_error("out of memory");
        return CLI_EXIT_FAIL;
    }
    rc = CLI_EXIT_USAGE;
    if (ec.config && exporter_config_load(ec.config, c, err, sizeof(err))) {
        cli_error("%s", err);
        goto out;
    }
    listen = ec.listen ? ec.listen : c->listen[0] ? c->listen : EXPORTER_DEFAULT_LISTEN;
    if (ec.check) {
        print_schedule(c, listen);
        rc = CLI_EXIT_OK;
        goto out;
    }
    log_setup("netrig", false, ec.verbose ? LOG_LVL_DBG : LOG_LVL_INFO);
    rc = CLI_EXIT_FAIL;
    x = exporter_create(c);
    probes = ec.probes ? exporter_probes_create(ec.probes, stop) : NULL;
    route.ctx = probes;
    if (x && (probes || !ec.probes))
        http = prom_http_start_route(listen, exporter_render, x, probes ? &route : NULL, err,
                                     sizeof(err));
    if (!http) {
        cli_error("%s", x && (probes || !ec.probes) ? err : "out of memory");
        goto out;
    }
    prom_http_where(http, where, sizeof(where));
    LOG_INFO("exporter: %u target%s, metrics at http://%s/metrics", c->ntargets,
             c->ntargets == 1 ? "" : "s", where);
    if (probes)
        LOG_INFO("exporter: probes at http://%s/probe, at most %u at once", where, ec.probes);
    exporter_run(x, stop);
    LOG_INFO("stopped");
    rc = CLI_EXIT_OK;
out:
    prom_http_stop(http);
    exporter_probes_destroy(probes);
    exporter_destroy(x);
    free(c);
    return rc;
}
