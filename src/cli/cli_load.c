/* cli_load: 'netrig load': latency under load (flent's RRUL) — its options, the built-in
 * loopback server, the report and saving the run. */
#include "cli.h"

#include "load.h"
#include "multi.h"
#include "load_json.h"
#include "log.h"
#include "loopsrv.h"
#include "report_json.h"
#include "report_load.h"
#include "report_text.h"
#include "sock.h"
#include "store.h"
#include "store_load.h"
#include "units.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

void cli_help_load(FILE *out)
{
    fprintf(
        out,
        "usage: netrig load [-c HOST] [OPTIONS]\n"
        "\n"
        "Latency under load (what flent's RRUL test shows): a baseline with latency probes\n"
        "only, then TCP flows loading the path both ways while the probes go on, then a\n"
        "recovery. Reports per phase the probes' latency (p50/p90/p99/max) and loss and the\n"
        "throughput each way, the latency increase under load with its verdict band\n"
        "(5, 30, 60, 200, 400 ms), the congestion control the load ran, and what to change.\n"
        "The probes are UDP and TCP request/response at a fixed rate, timed from their\n"
        "intended send time. The daemon runs four tests at once for it.\n"
        "\n"
        "connection:\n"
        "  -c, --client HOST       the daemon ('netrig serve'): HOST, HOST:PORT or [IPV6]:PORT;\n"
        "                          without -c a server runs inside this process\n"
        "  -p, --port PORT         its port (default %d)\n"
        "  -4, -6                  IPv4 or IPv6 only\n"
        "  -B, --bind ADDR         local address for every connection\n"
        "      --timeout TIME      connect and control-reply timeout (default 10s)\n"
        "      --user NAME         authenticate as NAME (secret from $NETRIG_SECRET or\n"
        "      --credentials FILE  a 'user secret' file of mode 0600)\n"
        "phases:\n"
        "      --baseline TIME     probes only, before the load (default 5s)\n"
        "  -t, --time TIME         the loaded phase (default 10s)\n"
        "      --recovery TIME     probes only, after the load (default 5s)\n"
        "load:\n"
        "  -P, --parallel N        TCP flows each way (default 4)\n"
        "      --classes rrul      flent's RRUL classes: one TCP flow each way and one UDP\n"
        "                          probe per class, marked BE (DSCP 0), BK (CS1), CS5 and EF\n"
        "                          on both ends; each class's throughput and latency (not\n"
        "                          with -P)\n"
        "      --up                load from this host to the daemon only\n"
        "      --down              load from the daemon to this host only\n"
        "  -T, --threads N         worker threads of each direction's test (default 1)\n"
        "  -C, --congestion ALGO   congestion control of the load (default: each host's)\n"
        "  -w, --window SIZE       socket buffers of the load\n"
        "probes:\n"
        "      --probe-rate N      probes a second, UDP and TCP each (default 100; 0 = none)\n"
        "      --icmp              an ICMP echo probe at that rate too (a ping socket, else\n"
        "                          a raw one: root)\n"
        "      --sample TIME       the load flows' bytes and TCP_INFO this often (default\n"
        "                          100ms; at least 10ms; 0 = off)\n"
        "output:\n"
        "  -J, --json              one JSON document at the end (docs/json.md)\n"
        "      --samples           add the probes' records and the flows' time series to it\n"
        "      --title TEXT        label stored with the results\n"
        "      --db PATH           save the run in this history database\n"
        "      --no-save           do not save the run\n"
        "\n"
        "Plot a saved run with 'netrig plot RUN -o load.svg' (--chart all, cdf or flows) or\n"
        "'netrig report RUN -o report.html'. Exit status: 0 done, 1 failed or partial, 2 bad\n"
        "usage, 130 interrupted.\n",
        SOCK_DEFAULT_PORT);
}

enum {
    OPT_BASELINE = 256,
    OPT_RECOVERY,
    OPT_UP,
    OPT_DOWN,
    OPT_PROBE_RATE,
    OPT_SAMPLE,
    OPT_SAMPLES,
    OPT_ICMP,
    OPT_CLASSES,
    OPT_TITLE,
    OPT_DB,
    OPT_NO_SAVE,
    OPT_TIMEOUT,
    OPT_USER,
    OPT_CREDENTIALS,
};

static const struct option load_long[] = {
    {"client", required_argument, NULL, 'c'},
    {"port", required_argument, NULL, 'p'},
    {"bind", required_argument, NULL, 'B'},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"user", required_argument, NULL, OPT_USER},
    {"credentials", required_argument, NULL, OPT_CREDENTIALS},
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"time", required_argument, NULL, 't'},
    {"recovery", required_argument, NULL, OPT_RECOVERY},
    {"parallel", required_argument, NULL, 'P'},
    {"up", no_argument, NULL, OPT_UP},
    {"down", no_argument, NULL, OPT_DOWN},
    {"threads", required_argument, NULL, 'T'},
    {"congestion", required_argument, NULL, 'C'},
    {"window", required_argument, NULL, 'w'},
    {"probe-rate", required_argument, NULL, OPT_PROBE_RATE},
    {"sample", required_argument, NULL, OPT_SAMPLE},
    {"json", no_argument, NULL, 'J'},
    {"samples", no_argument, NULL, OPT_SAMPLES},
    {"icmp", no_argument, NULL, OPT_ICMP},
    {"classes", required_argument, NULL, OPT_CLASSES},
    {"title", required_argument, NULL, OPT_TITLE},
    {"db", required_argument, NULL, OPT_DB},
    {"no-save", no_argument, NULL, OPT_NO_SAVE},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

struct load_cli {
    struct load_opts o;
    const char *target; /* -c */
    bool json, samples, no_save, up, down;
    bool flows_given; /* -P */
    const char *db;
};

static int copy(const char *opt, const char *val, char *dst, size_t len)
{
    if (strlen(val) >= len) {
        cli_error("value for %s is too long (at most %zu characters)", opt, len - 1);
        return -1;
    }
    memcpy(dst, val, strlen(val) + 1);
    return 0;
}

static int phase_time(const char *opt, const char *arg, uint64_t *ns)
{
    if (cli_parse_duration(opt, arg, ns))
        return -1;
    if (*ns > 86400ULL * 1000000000ULL) {
        cli_error("%s %s is too long: use at most 86400s", opt, arg);
        return -1;
    }
    return 0;
}

static int load_opt(int c, const char *arg, struct load_cli *lc)
{
    struct client_opts *b = &lc->o.base;
    struct load_params *lp = &lc->o.lp;
    uint64_t v;

    switch (c) {
    case 'c': lc->target = arg; return 0;
    case 'p': return cli_parse_port(arg, &b->port);
    case 'B': return copy("-B", arg, b->bind, sizeof(b->bind));
    case '4': b->family = 4; return 0;
    case '6': b->family = 6; return 0;
    case OPT_TIMEOUT:
        if (cli_parse_duration("--timeout", arg, &v))
            return -1;
        if (v < 100000000ULL || v > 600000000000ULL) {
            cli_error("--timeout %s is out of range: use 0.1s to 600s", arg);
            return -1;
        }
        b->timeout_ms = (int)(v / 1000000);
        return 0;
    case OPT_USER: return copy("--user", arg, b->user, sizeof(b->user));
    case OPT_CREDENTIALS: return copy("--credentials", arg, b->credentials, sizeof(b->credentials));
    case OPT_BASELINE: return phase_time("--baseline", arg, &lp->baseline_ns);
    case 't': return phase_time("-t", arg, &lp->loaded_ns);
    case OPT_RECOVERY: return phase_time("--recovery", arg, &lp->recovery_ns);
    case 'P':
        lc->flows_given = true;
        return cli_parse_u32("-P", arg, 1, PARAMS_MAX_FLOWS, &lp->flows);
    case OPT_CLASSES:
        if (dsclass_parse(arg, &lp->classes)) {
            cli_error("invalid value '%s' for --classes: use rrul (BE, BK, CS5 and EF)", arg);
            return -1;
        }
        return 0;
    case OPT_UP: lc->up = true; return 0;
    case OPT_DOWN: lc->down = true; return 0;
    case 'T': return cli_parse_u32("-T", arg, 1, PARAMS_MAX_THREADS, &lp->threads);
    case 'C': return copy("-C", arg, lp->congestion, sizeof(lp->congestion));
    case 'w': return cli_parse_size("-w", arg, PARAMS_MAX_WINDOW, &lp->window);
    case OPT_PROBE_RATE:
        if (units_parse_count(arg, &v) || v > LOAD_MAX_PROBE_TPS) {
            cli_error("invalid value '%s' for --probe-rate: use 0 (no probes) to %d probes a "
                      "second",
                      arg, LOAD_MAX_PROBE_TPS);
            return -1;
        }
        lp->probe_rate = v;
        return 0;
    case OPT_SAMPLE: return cli_parse_sample(arg, &lp->sample_ns);
    case 'J': lc->json = true; return 0;
    case OPT_SAMPLES: lc->samples = true; return 0;
    case OPT_ICMP: lp->icmp = true; return 0;
    case OPT_TITLE: return copy("--title", arg, lp->title, sizeof(lp->title));
    case OPT_DB: lc->db = arg; return 0;
    case OPT_NO_SAVE: lc->no_save = true; return 0;
    default: return -1;
    }
}

/* The load's own parameters checked as its parts will be (-C, -w, -P with --sample). */
static int check_parts(const struct load_params *lp)
{
    struct params p;
    char err[320];

    params_defaults(&p);
    p.flows = dsclass_count(lp->classes) ? dsclass_count(lp->classes) : lp->flows;
    p.classes = lp->classes;
    p.threads = lp->threads;
    p.window = lp->window;
    p.duration_ns = lp->loaded_ns;
    p.sample_ns = lp->sample_ns;
    snprintf(p.congestion, sizeof(p.congestion), "%s", lp->congestion);
    if (params_validate(&p, err, sizeof(err)) || load_validate(lp, err, sizeof(err))) {
        cli_error("%s", err);
        return -1;
    }
    return 0;
}

/* 0, 1 after help, -1 after an error. */
static int parse_load(int argc, char **argv, struct load_cli *lc)
{
    struct client_opts *b = &lc->o.base;
    int c;

    memset(lc, 0, sizeof(*lc));
    load_params_defaults(&lc->o.lp);
    b->port = SOCK_DEFAULT_PORT;
    b->timeout_ms = 10000;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":c:p:B:46t:P:T:C:w:Jh", load_long, NULL)) != -1) {
        if (c == 'h') {
            cli_help_load(stdout);
            return 1;
        }
        if (c == '?' || c == ':')
            return cli_opt_error(c, argv, "load");
        if (load_opt(c, optarg, lc))
            return -1;
    }
    if (optind < argc) {
        cli_error("unexpected argument '%s': the daemon is given with -c HOST", argv[optind]);
        return -1;
    }
    if (lc->up != lc->down) { /* one of them: that direction only; neither or both: both */
        lc->o.lp.up = lc->up;
        lc->o.lp.down = lc->down;
    }
    if (lc->o.lp.classes && lc->flows_given) {
        cli_error("-P %u does not combine with --classes %s, which runs one flow per class each "
                  "way (%u): drop -P",
                  lc->o.lp.flows, dsclass_set_name(lc->o.lp.classes),
                  dsclass_count(lc->o.lp.classes));
        return -1;
    }
    if (lc->o.lp.classes)
        lc->o.lp.flows = dsclass_count(lc->o.lp.classes);
    if (lc->samples && !lc->json) {
        cli_error("--samples adds the series to the JSON document: give -J too");
        return -1;
    }
    if (lc->target) {
        struct multi_target t;
        if (multi_parse_target(lc->target, b->port, &t)) {
            cli_error("invalid server '%s' for -c: use HOST, HOST:PORT or [IPV6]:PORT", lc->target);
            return -1;
        }
        snprintf(b->host, sizeof(b->host), "%s", t.host);
        b->port = t.port;
    }
    return check_parts(&lc->o.lp);
}

static int add_load(struct store *st, const void *item, const struct hostsnap *hs, int64_t *id,
                    char *err, size_t errlen)
{
    return store_add_load(st, item, hs, id, err, errlen);
}

static long long save(const struct load_cli *lc, const struct load_result *lr, FILE *note)
{
    int64_t id = cli_history_save_one(lc->db, add_load, lr);

    if (id && note)
        fprintf(note, "saved as run %lld (netrig show %lld; netrig plot %lld -o load.svg)\n",
                (long long)id, (long long)id, (long long)id);
    return id;
}

static void plan(FILE *out, const struct load_params *lp)
{
    fprintf(out, "baseline %.3gs, loaded %.3gs, recovery %.3gs: about %.0fs ...\n",
            lp->baseline_ns / 1e9, lp->loaded_ns / 1e9, lp->recovery_ns / 1e9,
            (lp->baseline_ns + lp->loaded_ns + lp->recovery_ns) / 1e9 + 1);
    fflush(out);
}

int cli_load(int argc, char **argv, _Atomic int *stop)
{
    struct load_cli lc;
    struct load_result *lr;
    struct loopsrv em;
    bool embedded = false;
    char err[512] = "";
    int rc = parse_load(argc, argv, &lc);

    if (rc)
        return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    log_setup("netrig", false, LOG_LVL_WARN);
    lc.o.base.observer = report_text_quiet_observer();
    lr = calloc(1, sizeof(*lr));
    if (!lr) {
        cli_error("out of memory");
        return CLI_EXIT_FAIL;
    }
    if (!lc.o.base.host[0]) {
        if (loopsrv_start_tests(&em, lc.o.base.family, LOAD_NPARTS, err, sizeof(err))) {
            cli_error("%s", err);
            free(lr);
            return CLI_EXIT_FAIL;
        }
        snprintf(lc.o.base.host, sizeof(lc.o.base.host), "%s", em.host);
        lc.o.base.port = em.port;
        embedded = true;
    }
    if (!lc.json)
        plan(stdout, &lc.o.lp);
    rc = load_run(&lc.o, stop, lr, err, sizeof(err));
    if (embedded)
        loopsrv_stop(&em);
    if (rc < 0) {
        cli_error("%s", err);
        if (lc.json)
            report_json_print(stdout, report_json_failure("load", err, false), false);
    } else {
        if (lc.json)
            report_json_print(stdout, load_json(lr, lc.samples), false);
        else
            report_load_text(stdout, lr);
        if (!lc.no_save)
            save(&lc, lr, lc.json ? NULL : stdout);
        if (lr->partial && !*stop)
            cli_error("%s", lr->error);
    }
    load_result_fini(lr);
    free(lr);
    if (*stop)
        return CLI_EXIT_INTERRUPTED;
    return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
