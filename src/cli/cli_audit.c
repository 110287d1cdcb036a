/* cli_audit: `netrig audit` options -> audit_opts, then the report and the exit status
 * (0 nothing at warn or bad, 1 findings at warn or bad, 2 the audit itself failed). */
#include "cli.h"

#include "audit.h"
#include "audit_report.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cli_help_audit(FILE *out)
{
    fprintf(
        out,
        "usage: netrig audit [-I IFACE] [--rate RATE] [--rtt TIME] [--profile throughput|latency]\n"
        "                    [--sysroot DIR] [--record DIR] [-J]\n"
        "\n"
        "Reads this host's network tuning (sysctls, qdiscs, NIC offloads, rings, coalescing,\n"
        "queues, IRQs, PCIe, CPU) in one read-only pass and says, for the target rate and RTT,\n"
        "what is wrong, why, and the command that fixes it. Changes nothing. Runs as any user;\n"
        "checks that need root are reported as skipped.\n"
        "\n"
        "  -I, --interface IFACE  audit IFACE only (default: every physical interface that is up)\n"
        "      --rate RATE        target rate, e.g. 100G (default: the fastest audited link)\n"
        "      --rtt TIME         target round-trip time, e.g. 30ms (default 1ms)\n"
        "      --profile P        throughput (default) or latency\n"
        "      --sysroot DIR      read DIR/proc, DIR/sys and DIR/netrig (recorded ethtool and PCI\n"
        "                         answers) instead of this host\n"
        "      --record DIR       also copy every file the checks read into DIR (new or empty),\n"
        "                         to attach to a bug report; replay with --sysroot DIR\n"
        "  -J, --json             one JSON document: {target, verdict, findings: [...]}\n"
        "\n"
        "Exit status: 0 nothing at warn or bad, 1 findings at warn or bad, 2 the audit failed.\n"
        "\n"
        "Examples:\n"
        "  netrig audit --rate 100G --rtt 1ms          # a 100G data-centre host\n"
        "  netrig audit -I eth3 --rate 10G --rtt 30ms  # a WAN path\n"
        "  netrig audit --record /tmp/myhost           # capture this host for a bug report\n");
}

enum { OPT_RATE = 256, OPT_RTT, OPT_PROFILE, OPT_SYSROOT, OPT_RECORD };

static const struct option audit_long[] = {
    {"interface", required_argument, NULL, 'I'},
    {"json", no_argument, NULL, 'J'},
    {"help", no_argument, NULL, 'h'},
    {"rate", required_argument, NULL, OPT_RATE},
    {"rtt", required_argument, NULL, OPT_RTT},
    {"profile", required_argument, NULL, OPT_PROFILE},
    {"sysroot", required_argument, NULL, OPT_SYSROOT},
    {"record", required_argument, NULL, OPT_RECORD},
    {NULL, 0, NULL, 0},
};

struct audit_cli {
    struct audit_opts ao;
    bool json;
};

static int audit_opt(int c, const char *arg, struct audit_cli *ac)
{
    switch (c) {
    case 'I': ac->ao.iface = arg; return 0;
    case 'J': ac->json = true; return 0;
    case OPT_RATE:
        if (cli_parse_rate("--rate", arg, &ac->ao.rate_bps))
            return -1;
        if (ac->ao.rate_bps < 1000000 || ac->ao.rate_bps > 10000000000000ULL) {
            cli_error("--rate %s is out of range: use 1M to 10T", arg);
            return -1;
        }
        return 0;
    case OPT_RTT:
        if (cli_parse_duration("--rtt", arg, &ac->ao.rtt_ns))
            return -1;
        if (ac->ao.rtt_ns < 1000 || ac->ao.rtt_ns > 10000000000ULL) {
            cli_error("--rtt %s is out of range: use 1us to 10s", arg);
            return -1;
        }
        return 0;
    case OPT_PROFILE:
        if (!strcmp(arg, "throughput"))
            ac->ao.profile = AUDIT_PROFILE_THROUGHPUT;
        else if (!strcmp(arg, "latency"))
            ac->ao.profile = AUDIT_PROFILE_LATENCY;
        else {
            cli_error("invalid value '%s' for --profile: use throughput or latency", arg);
            return -1;
        }
        return 0;
    case OPT_SYSROOT: ac->ao.sysroot = arg; return 0;
    case OPT_RECORD: ac->ao.record_dir = arg; return 0;
    default: return -1;
    }
}

static int parse_audit(int argc, char **argv, struct audit_cli *ac)
{
    int c;

    memset(ac, 0, sizeof(*ac));
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":I:Jh", audit_long, NULL)) != -1) {
        if (c == 'h') {
            cli_help_audit(stdout);
            return 1;
        }
        if (c == '?' || c == ':')
            return cli_opt_error(c, argv, "audit");
        if (audit_opt(c, optarg, ac))
            return -1;
    }
    if (optind < argc) {
        cli_error("unexpected argument '%s' for audit: see 'netrig help audit'", argv[optind]);
        return -1;
    }
    return 0;
}

static bool want_colour(void)
{
    const char *term = getenv("TERM");

    return isatty(STDOUT_FILENO) && !getenv("NO_COLOR") && term && strcmp(term, "dumb");
}

int cli_audit(int argc, char **argv, _Atomic int *stop)
{
    struct audit_cli ac;
    struct audit_ctx *ctx;
    char err[640];
    int rc = parse_audit(argc, argv, &ac), status;

    (void)stop; /* one short read-only pass: nothing to interrupt cleanly */
    if (rc)
        return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    ctx = audit_create(&ac.ao, err, sizeof(err));
    if (!ctx) {
        cli_error("%s", err);
        return 2;
    }
    if (audit_run(ctx, err, sizeof(err))) {
        cli_error("%s", err);
        audit_destroy(ctx);
        return 2;
    }
    if (ac.json) {
        if (audit_report_json(ctx, stdout)) {
            cli_error("out of memory writing the JSON report: free some memory and retry");
            audit_destroy(ctx);
            return 2;
        }
    } else {
        audit_report_text(ctx, stdout, want_colour());
    }
    if (ac.ao.record_dir)
        cli_error("recorded what the checks read into '%s': replay with 'netrig audit "
                  "--sysroot %s'",
                  ac.ao.record_dir, ac.ao.record_dir);
    status = audit_exit_status(ctx);
    audit_destroy(ctx);
    return fflush(stdout) ? 2 : status;
}
