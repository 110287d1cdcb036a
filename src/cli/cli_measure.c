/* cli_measure: the measurement commands (stream, rr, crr): their options, the built-in
 * loopback server, and the report. */
#include "cli.h"
#include "cli_measure.h"

#include "cpulist.h"
#include "iperf3_client.h"
#include "iperf3_proto.h"
#include "mptcpinfo.h"
#include "units.h"
#include "params.h"
#include "sock.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_SERVER_THREADS = 256,
    OPT_BIDIR,
    OPT_FQ_RATE,
    OPT_NOTSENT_LOWAT,
    OPT_SERVER_CPUS,
    OPT_TITLE,
    OPT_JSON_STREAM,
    OPT_TIMEOUT,
    OPT_PPS,
    OPT_DEPTH,
    OPT_RATE,
    OPT_CONNECT_ONLY,
    OPT_BUSY_POLL,
    OPT_HISTOGRAM,
    OPT_TXN_TIMEOUT,
    OPT_DB,
    OPT_NO_SAVE,
    OPT_USER,
    OPT_CREDENTIALS,
    OPT_FROM,
    OPT_ZEROCOPY_RX,
    OPT_SKIP_RX_COPY,
};

enum { OPT_IPERF3 = 512 };            /* --iperf3 */
enum { OPT_LIVE = 600, OPT_NO_LIVE }; /* --live, --no-live */
/* --sample TIME, --samples (cli.h has 700-: data options, and the output options) */
enum { OPT_SAMPLE = 800, OPT_SAMPLES };
enum { OPT_MPTCP = 900 }; /* --mptcp */

static const struct option measure_long[] = {
    {"client", required_argument, NULL, 'c'},
    {"port", required_argument, NULL, 'p'},
    {"bind", required_argument, NULL, 'B'},
    {"time", required_argument, NULL, 't'},
    {"omit", required_argument, NULL, 'O'},
    {"interval", required_argument, NULL, 'i'},
    {"parallel", required_argument, NULL, 'P'},
    {"threads", required_argument, NULL, 'T'},
    {"reverse", no_argument, NULL, 'R'},
    {"length", required_argument, NULL, 'l'},
    {"window", required_argument, NULL, 'w'},
    {"congestion", required_argument, NULL, 'C'},
    {"mss", required_argument, NULL, 'M'},
    {"nodelay", no_argument, NULL, 'N'},
    {"zerocopy", no_argument, NULL, 'Z'},
    {"zerocopy-rx", no_argument, NULL, OPT_ZEROCOPY_RX},
    {"skip-rx-copy", no_argument, NULL, OPT_SKIP_RX_COPY},
    {"affinity", required_argument, NULL, 'A'},
    {"json", no_argument, NULL, 'J'},
    {"help", no_argument, NULL, 'h'},
    {"server-threads", required_argument, NULL, OPT_SERVER_THREADS},
    {"bidir", no_argument, NULL, OPT_BIDIR},
    {"fq-rate", required_argument, NULL, OPT_FQ_RATE},
    {"notsent-lowat", required_argument, NULL, OPT_NOTSENT_LOWAT},
    {"server-cpus", required_argument, NULL, OPT_SERVER_CPUS},
    {"title", required_argument, NULL, OPT_TITLE},
    {"json-stream", no_argument, NULL, OPT_JSON_STREAM},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"udp", no_argument, NULL, 'u'},
    {"bitrate", required_argument, NULL, 'b'},
    {"pps", required_argument, NULL, OPT_PPS},
    {"size", required_argument, NULL, 'r'},
    {"depth", required_argument, NULL, OPT_DEPTH},
    {"rate", required_argument, NULL, OPT_RATE},
    {"connect-only", no_argument, NULL, OPT_CONNECT_ONLY},
    {"busy-poll", no_argument, NULL, OPT_BUSY_POLL},
    {"histogram", required_argument, NULL, OPT_HISTOGRAM},
    {"txn-timeout", required_argument, NULL, OPT_TXN_TIMEOUT},
    {"db", required_argument, NULL, OPT_DB},
    {"no-save", no_argument, NULL, OPT_NO_SAVE},
    {"user", required_argument, NULL, OPT_USER},
    {"credentials", required_argument, NULL, OPT_CREDENTIALS},
    {"from", required_argument, NULL, OPT_FROM},
    {"iperf3", no_argument, NULL, OPT_IPERF3},
    {"live", no_argument, NULL, OPT_LIVE},
    {"no-live", no_argument, NULL, OPT_NO_LIVE},
    {"sample", required_argument, NULL, OPT_SAMPLE},
    {"samples", no_argument, NULL, OPT_SAMPLES},
    {"logfile", required_argument, NULL, CLI_OPT_LOGFILE},
    {"timestamps", optional_argument, NULL, CLI_OPT_TIMESTAMPS},
    {"forceflush", no_argument, NULL, CLI_OPT_FORCEFLUSH},
    {"bytes", required_argument, NULL, 'n'},
    {"blocks", required_argument, NULL, 'k'},
    {"tos", required_argument, NULL, 'S'},
    {"dscp", required_argument, NULL, CLI_OPT_DSCP},
    {"cport", required_argument, NULL, CLI_OPT_CPORT},
    {"bind-dev", required_argument, NULL, CLI_OPT_BIND_DEV},
    {"dont-fragment", no_argument, NULL, CLI_OPT_DONT_FRAGMENT},
    {"mptcp", no_argument, NULL, OPT_MPTCP},
    {NULL, 0, NULL, 0},
};

static int copy_str(const char *opt, const char *val, char *dst, size_t len)
{
    if (strlen(val) >= len) {
        cli_error("value for %s is too long (%zu characters; at most %zu)", opt, strlen(val),
                  len - 1);
        return -1;
    }
    memcpy(dst, val, strlen(val) + 1);
    return 0;
}

/* Options that only some measurement commands take: the kind's option mask says which. */
static const struct {
    int opt;
    const char *name;
    uint32_t bit;
} opt_kinds[] = {
    {'R', "-R", TEST_KIND_OPT_DIR},
    {OPT_BIDIR, "--bidir", TEST_KIND_OPT_DIR},
    {'l', "-l", TEST_KIND_OPT_LENGTH},
    {'M', "--mss", TEST_KIND_OPT_MSS},
    {'N', "-N", TEST_KIND_OPT_NODELAY},
    {'Z', "-Z", TEST_KIND_OPT_ZEROCOPY},
    {OPT_ZEROCOPY_RX, "--zerocopy-rx", TEST_KIND_OPT_ZEROCOPY_RX},
    {OPT_SKIP_RX_COPY, "--skip-rx-copy", TEST_KIND_OPT_SKIP_RX_COPY},
    {OPT_FQ_RATE, "--fq-rate", TEST_KIND_OPT_FQ_RATE},
    {OPT_NOTSENT_LOWAT, "--notsent-lowat", TEST_KIND_OPT_NOTSENT},
    {'b', "-b", TEST_KIND_OPT_BITRATE},
    {OPT_PPS, "--pps", TEST_KIND_OPT_PPS},
    {'u', "-u", TEST_KIND_OPT_UDP},
    {'n', "-n", TEST_KIND_OPT_LIMIT},
    {'k', "-k", TEST_KIND_OPT_LIMIT},
    {CLI_OPT_CPORT, "--cport", TEST_KIND_OPT_CPORT},
    {CLI_OPT_DONT_FRAGMENT, "--dont-fragment", TEST_KIND_OPT_DF},
    {'r', "-r", TEST_KIND_OPT_SIZES},
    {OPT_DEPTH, "--depth", TEST_KIND_OPT_DEPTH},
    {OPT_RATE, "--rate", TEST_KIND_OPT_TPS},
    {OPT_CONNECT_ONLY, "--connect-only", TEST_KIND_OPT_CONNECT_ONLY},
    {OPT_BUSY_POLL, "--busy-poll", TEST_KIND_OPT_BUSY_POLL},
    {OPT_HISTOGRAM, "--histogram", TEST_KIND_OPT_HISTOGRAM},
    {OPT_TXN_TIMEOUT, "--txn-timeout", TEST_KIND_OPT_TXN_TIMEOUT},
    {'w', "-w", TEST_KIND_OPT_WINDOW},
    {OPT_IPERF3, "--iperf3", TEST_KIND_OPT_IPERF3},
    {OPT_MPTCP, "--mptcp", TEST_KIND_OPT_MPTCP},
};

static int check_kind(int c, const struct measure_cli *mc)
{
    const char *kind = mc->kind->command;

    for (size_t i = 0; i < sizeof(opt_kinds) / sizeof(opt_kinds[0]); i++) {
        if (opt_kinds[i].opt != c || (opt_kinds[i].bit & mc->kind->opts))
            continue;
        if (mc->caller)
            cli_error("option %s does not apply to the %s test 'netrig %s' runs: see 'netrig "
                      "help %s'",
                      opt_kinds[i].name, kind, mc->caller, kind);
        else
            cli_error("option %s does not apply to 'netrig %s': see 'netrig help %s'",
                      opt_kinds[i].name, kind, kind);
        return -1;
    }
    return 0;
}

/* Options of the command line itself (output, history, where to run): a sweep or a diagnosis
 * that parses a test's options runs the test its own way, so it cannot apply them. */
static const int command_only[] = {
    'J',      OPT_JSON_STREAM, OPT_LIVE,           OPT_NO_LIVE,
    OPT_DB,   OPT_NO_SAVE,     OPT_HISTOGRAM,      OPT_IPERF3,
    OPT_FROM, CLI_OPT_LOGFILE, CLI_OPT_TIMESTAMPS, CLI_OPT_FORCEFLUSH,
};

/* -p: a server's -p 0 means any free port; a client needs the real one */
static int client_port(const char *arg, uint16_t *port)
{
    if (!strcmp(arg, "0")) {
        cli_error("invalid value '0' for -p: a client connects to a port from 1 to 65535 "
                  "(the one 'netrig serve' reports; -p 0 is for serve)");
        return -1;
    }
    return cli_parse_port(arg, port);
}

/* -2 (after the error) when the caller cannot apply option c. */
static int check_caller(int c, const struct measure_cli *mc)
{
    const char *name = c == 'J' ? "-J" : "?";

    if (!mc->caller)
        return 0;
    for (size_t i = 0; i < sizeof(command_only) / sizeof(command_only[0]); i++) {
        if (command_only[i] != c)
            continue;
        for (const struct option *lo = measure_long; lo->name && c != 'J'; lo++)
            if (lo->val == c)
                name = lo->name;
        cli_error("option %s%s does not apply to 'netrig %s', which runs its tests its own way: "
                  "see 'netrig help %s'",
                  c == 'J' ? "" : "--", name, mc->caller, mc->caller);
        return -2;
    }
    return 0;
}

/* -r REQ[,RESP] */
static int parse_rr_sizes(const char *arg, struct params *p)
{
    char req[64];
    const char *comma = strchr(arg, ',');
    size_t n = comma ? (size_t)(comma - arg) : strlen(arg);

    if (n == 0 || n >= sizeof(req)) {
        cli_error("invalid sizes '%s' for -r: use REQ or REQ,RESP in bytes, e.g. 1 or 64,1K", arg);
        return -1;
    }
    memcpy(req, arg, n);
    req[n] = '\0';
    if (cli_parse_size("-r", req, PARAMS_MAX_WRITE, &p->req_size))
        return -1;
    if (!comma) {
        p->resp_size = p->req_size;
        return 0;
    }
    return cli_parse_size("-r", comma + 1, PARAMS_MAX_WRITE, &p->resp_size);
}

static int parse_timeout(const char *opt, const char *arg, uint64_t lo_ns, uint64_t *ns)
{
    if (cli_parse_duration(opt, arg, ns))
        return -1;
    if (*ns < lo_ns || *ns > 600000000000ULL) {
        cli_error("%s %s is out of range: use %gs to 600s", opt, arg, lo_ns / 1e9);
        return -1;
    }
    return 0;
}

/* Options only the transactional and UDP runs take. */
static int txn_opt(int c, const char *arg, struct measure_cli *mc)
{
    struct params *p = &mc->o.p;
    uint64_t v;

    switch (c) {
    case 'u': p->udp = true; return 0;
    case 'b': mc->data.bitrate = arg; return 0;
    case OPT_PPS:
        if (units_parse_count(arg, &v) || v == 0 || v > 100000000ULL) {
            cli_error("invalid value '%s' for --pps: use 1 to 100000000 datagrams/s", arg);
            return -1;
        }
        p->udp_pps = v;
        mc->pps_given = true;
        return 0;
    case 'r': return parse_rr_sizes(arg, p);
    case OPT_DEPTH: return cli_parse_u32("--depth", arg, 1, PARAMS_MAX_DEPTH, &p->depth);
    case OPT_RATE:
        if (units_parse_count(arg, &v) || v == 0 || v > PARAMS_MAX_TPS) {
            cli_error("invalid rate '%s' for --rate: use 1 to %llu transactions/s", arg,
                      (unsigned long long)PARAMS_MAX_TPS);
            return -1;
        }
        p->rate_tps = v;
        return 0;
    case OPT_CONNECT_ONLY: p->connect_only = true; return 0;
    case OPT_BUSY_POLL: p->busy_poll = true; return 0;
    case OPT_HISTOGRAM: mc->histogram = arg; return 0;
    case OPT_TXN_TIMEOUT:
        return parse_timeout("--txn-timeout", arg, 1000000ULL, &p->txn_timeout_ns);
    default: return cli_data_opt(c, arg, &mc->o, &mc->data) ? -1 : 0;
    }
}

/* -R or --bidir: one of them, never both (the last would win unseen). */
static int set_dir(struct params *p, enum params_dir dir)
{
    if (p->dir != PARAMS_DIR_FORWARD && p->dir != dir) {
        cli_error("-R and --bidir contradict each other: -R sends from the server only, "
                  "--bidir both ways; give one");
        return -1;
    }
    p->dir = dir;
    return 0;
}

/* --notsent-lowat SIZE: 0 turns netrig's default off */
static int opt_notsent(const char *arg, struct params *p)
{
    uint32_t n;

    if (cli_parse_size("--notsent-lowat", arg, PARAMS_MAX_WINDOW, &n))
        return -1;
    p->notsent_lowat = (int32_t)n;
    return 0;
}

/* One option; returns 0, or -1 after printing the error. */
static int measure_opt(int c, const char *arg, struct measure_cli *mc)
{
    struct client_opts *o = &mc->o;
    struct params *p = &o->p;
    uint64_t v;

    if (check_kind(c, mc))
        return -2; /* no point of a sweep can apply it either */
    if (check_caller(c, mc))
        return -2;
    switch (c) {
    case 'c':
        if (mc->ntargets >= MULTI_MAX_TARGETS) {
            cli_error("too many servers (-c): at most %d", MULTI_MAX_TARGETS);
            return -1;
        }
        mc->targets[mc->ntargets++] = arg;
        return 0;
    case 'p': mc->port_given = true; return client_port(arg, &o->port);
    case OPT_IPERF3: mc->iperf3 = p->iperf3_wire = true; return 0;
    case 'B': return copy_str("-B", arg, o->bind, sizeof(o->bind));
    case '4': o->family = 4; return 0;
    case '6': o->family = 6; return 0;
    case 't': mc->data.time_given = true; return cli_parse_duration("-t", arg, &p->duration_ns);
    case 'O': return cli_parse_duration("-O", arg, &p->omit_ns);
    case 'i': return cli_parse_duration("-i", arg, &p->interval_ns);
    case 'P': return cli_parse_u32("-P", arg, 1, PARAMS_MAX_FLOWS, &p->flows);
    case 'T': return cli_parse_u32("-T", arg, 1, PARAMS_MAX_THREADS, &p->threads);
    case OPT_SERVER_THREADS:
        return cli_parse_u32("--server-threads", arg, 1, PARAMS_MAX_THREADS, &p->server_threads);
    case 'R': return set_dir(p, PARAMS_DIR_REVERSE);
    case OPT_BIDIR: return set_dir(p, PARAMS_DIR_BIDIR);
    case 'l':
        mc->data.length_given = true;
        return cli_parse_size("-l", arg, PARAMS_MAX_WRITE, &p->write_size);
    case 'w': return cli_parse_size("-w", arg, PARAMS_MAX_WINDOW, &p->window);
    case 'C': return copy_str("-C", arg, p->congestion, sizeof(p->congestion));
    case 'M': return cli_parse_u32("--mss", arg, 88, 65535, &p->mss);
    case 'N': p->nodelay = true; return 0;
    case 'Z': p->zerocopy = true; return 0;
    case OPT_ZEROCOPY_RX: p->zerocopy_rx = true; return 0;
    case OPT_SKIP_RX_COPY: p->skip_rx_copy = true; return 0;
    case OPT_MPTCP: p->mptcp = true; return 0;
    case OPT_NOTSENT_LOWAT: return opt_notsent(arg, p);
    case OPT_FQ_RATE:
        if (cli_parse_rate("--fq-rate", arg, &v))
            return -1;
        if (v > 1000000000000000ULL) {
            cli_error("rate '%s' for --fq-rate is too high: at most 1000T", arg);
            return -1;
        }
        p->fq_rate_bps = v;
        return 0;
    case 'A': return copy_str("-A", arg, o->cpus, sizeof(o->cpus));
    case OPT_SERVER_CPUS:
        return copy_str("--server-cpus", arg, p->server_cpus, sizeof(p->server_cpus));
    case OPT_TITLE: return copy_str("--title", arg, p->title, sizeof(p->title));
    case OPT_USER: return copy_str("--user", arg, o->user, sizeof(o->user));
    case OPT_FROM: mc->from = arg; return 0;
    case OPT_CREDENTIALS:
        return copy_str("--credentials", arg, o->credentials, sizeof(o->credentials));
    case 'J': mc->output = OUT_JSON; return 0;
    case OPT_DB: mc->db = arg; return 0;
    case OPT_NO_SAVE: mc->no_save = true; return 0;
    case OPT_JSON_STREAM: mc->output = OUT_JSON_STREAM; return 0;
    case OPT_LIVE: mc->live = REPORT_LIVE_ON; return 0;
    case OPT_NO_LIVE: mc->live = REPORT_LIVE_OFF; return 0;
    case OPT_SAMPLE: mc->sample_given = true; return cli_parse_sample(arg, &p->sample_ns);
    case OPT_SAMPLES: mc->samples = true; return 0;
    case CLI_OPT_LOGFILE:
    case CLI_OPT_TIMESTAMPS:
    case CLI_OPT_FORCEFLUSH: return cli_output_opt(&mc->oo, c, arg);
    case OPT_TIMEOUT:
        if (parse_timeout("--timeout", arg, 100000000ULL, &v))
            return -1;
        o->timeout_ms = (int)(v / 1000000);
        return 0;
    default: return txn_opt(c, arg, mc);
    }
}

/* -A must name CPUs this host has (auto is resolved once the peer is known). */
static int check_cpus(const char *spec)
{
    struct cpulist cl;
    char err[320], note[320];

    if (!*spec || !strcmp(spec, "auto"))
        return 0;
    if (cpulist_resolve(NULL, spec, "127.0.0.1", &cl, err, sizeof(err), note, sizeof(note))) {
        cli_error("%s", err);
        return -1;
    }
    return 0;
}

/* Options only TCP sockets take, with -u; and what a test run elsewhere cannot apply: with
 * --from the daemon there runs it (its own sockets, CPUs, no histogram, not saved here),
 * with several -c nothing is saved and no histogram is written. */
static int check_modes(const struct measure_cli *mc)
{
    const struct params *p = &mc->o.p;
    const char *no = NULL;

    if (mc->pps_given && !test_kind_is(p, TEST_KIND_DATAGRAMS)) {
        cli_error("--pps paces UDP streams (-u): pace a TCP stream with -b RATE (in the "
                  "application) or --fq-rate RATE (in the kernel)");
        return -1;
    }
    if (test_kind_is(p, TEST_KIND_UDP))
        no = p->congestion[0] ? "-C"
             : p->mss         ? "--mss"
             : p->nodelay     ? "-N"
             : p->fq_rate_bps ? "--fq-rate"
             : p->zerocopy    ? "-Z"
                              : NULL;
    if (no) {
        cli_error("%s applies to TCP sockets: a UDP test (-u) does not use it; drop it%s", no,
                  !strcmp(no, "--fq-rate") ? " and pace UDP with -b or --pps" : "");
        return -1;
    }
    if (mc->from && (mc->o.cpus[0] || mc->o.bind[0] || mc->histogram))
        no = mc->o.cpus[0] ? "-A" : mc->o.bind[0] ? "-B" : "--histogram";
    if (no) {
        cli_error("%s does not apply with --from: the daemon there runs the test on its own "
                  "sockets and CPUs and writes no histogram here; drop it",
                  no);
        return -1;
    }
    if (mc->ntargets > 1 && mc->histogram) {
        cli_error("--histogram does not apply to tests against several servers: they write no "
                  "histogram; test one server to use it");
        return -1;
    }
    return 0;
}

/* --timestamps stamps the text report's lines, which --live redraws in place and JSON has
 * none of; --live draws text. */
static int check_output(const struct measure_cli *mc)
{
    if (mc->live == REPORT_LIVE_ON && mc->iperf3) {
        cli_error("--live draws netrig servers' tests: a test against an iperf3 server "
                  "(--iperf3) prints interval lines; drop --live");
        return -1;
    }
    if (mc->live == REPORT_LIVE_ON && mc->output != OUT_TEXT) {
        cli_error("--live draws the text report: drop it, or drop -J/--json-stream");
        return -1;
    }
    if (mc->oo.stamp && mc->output != OUT_TEXT) {
        cli_error("--timestamps stamps the lines of the text report: drop it, or drop "
                  "-J/--json-stream");
        return -1;
    }
    if (mc->oo.stamp && mc->live == REPORT_LIVE_ON) {
        cli_error("--timestamps stamps interval lines, which --live redraws in place: drop one");
        return -1;
    }
    return 0;
}

/* --mptcp: on netrig servers, and this kernel must have it (with --from the daemon there
 * opens the sockets, and its kernel answers) */
static int check_mptcp(const struct measure_cli *mc)
{
    char err[256];

    if (!test_kind_is(&mc->o.p, TEST_KIND_MPTCP))
        return 0;
    if (mc->iperf3) {
        cli_error("--mptcp applies to tests against netrig servers: drop --iperf3 (or --mptcp)");
        return -1;
    }
    if (!mc->from && mptcpinfo_check(NULL, err, sizeof(err))) {
        cli_error("--mptcp: %s", err);
        return -1;
    }
    return 0;
}

/* One -c: HOST, HOST:PORT or [V6]:PORT (a port there wins over -p). */
static int parse_one_target(struct measure_cli *mc)
{
    struct multi_target t;

    if (multi_parse_target(mc->targets[0], mc->o.port, &t)) {
        cli_error("invalid server '%s' for -c: use HOST, HOST:PORT or [IPV6]:PORT", mc->targets[0]);
        return -1;
    }
    snprintf(mc->o.host, sizeof(mc->o.host), "%s", t.host);
    mc->o.port = t.port;
    return 0;
}

static int parse_measure(int argc, char **argv, struct measure_cli *mc)
{
    const char *name = mc->kind->command;
    struct client_opts *o = &mc->o;
    char err[256];
    int c, rc;

    memset(o, 0, sizeof(*o));
    params_defaults(&o->p);
    test_kind_apply(mc->kind, &o->p);
    o->port = SOCK_DEFAULT_PORT;
    o->timeout_ms = 10000;
    mc->out = stdout;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":c:p:B:46t:O:i:P:T:Rl:w:C:M:NZA:Jhub:r:n:k:S:",
                            measure_long, NULL)) != -1) {
        if (c == 'h') {
            cli_help_measure(mc->kind, stdout);
            return 1;
        }
        if (c == '?' || c == ':')
            return cli_opt_error(c, argv, name);
        if ((rc = measure_opt(c, optarg, mc)))
            return rc;
    }
    if (optind < argc) {
        cli_error("unexpected argument '%s': the server is given with -c HOST", argv[optind]);
        return -1;
    }
    if (mc->iperf3 && (mc->ntargets > 1 || mc->from)) {
        cli_error("--iperf3 talks to one iperf3 server: give a single -c and no --from");
        return -1;
    }
    if (mc->iperf3 && !mc->port_given)
        o->port = IPERF3_DEFAULT_PORT; /* before -c, so HOST:PORT there still wins */
    if (mc->ntargets == 1 && parse_one_target(mc))
        return -1;
    if (test_kind_is(&o->p, TEST_KIND_DATAGRAMS) && !mc->data.length_given)
        o->p.write_size = 1400; /* fits a 1500-byte MTU with IPv6 and UDP headers */
    /* zero-copy sends gain nothing from large writes (no copy to save per call) and
     * sendfile() of 128 KiB measured fastest here: 33 against 20 Gbit/s with 1 MiB */
    if (o->p.zerocopy && !mc->data.length_given && !test_kind_is(&o->p, TEST_KIND_UDP))
        o->p.write_size = 128 * 1024;
    if (cli_data_finish(o, &mc->data, mc->from != NULL, mc->ntargets))
        return -1;
    if (!mc->sample_given)
        o->p.sample_ns = params_default_sample(&o->p);
    if (mc->samples && (mc->output == OUT_TEXT || mc->ntargets > 1 || mc->from)) {
        cli_error("--samples adds the time series to the JSON document of one run: give -J or "
                  "--json-stream, one -c and no --from");
        return -1;
    }
    if (mc->samples && !o->p.sample_ns) {
        cli_error("--samples: this run takes no time series (--sample 0, or -i 0 and no "
                  "--sample): give --sample TIME, e.g. --sample 100ms");
        return -1;
    }
    if (params_validate(&o->p, err, sizeof(err)) ||
        (mc->iperf3 && iperf3_client_check(o, err, sizeof(err)))) {
        cli_error("%s", err);
        return -1;
    }
    return check_output(mc) || check_modes(mc) || check_mptcp(mc) || check_cpus(o->cpus) ? -1 : 0;
}

int cli_measure_parse(const struct test_kind *kind, int argc, char **argv, struct client_opts *o,
                      const char *caller)
{
    struct measure_cli mc = {.kind = kind, .caller = caller};
    int rc = parse_measure(argc, argv, &mc);

    *o = mc.o;
    return rc;
}

int cli_measure(int argc, char **argv, _Atomic int *stop)
{
    struct measure_cli t = {.kind = test_kind_command(argv[0])};
    int rc = parse_measure(argc, argv, &t);

    if (rc)
        return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    return cli_measure_run(&t, stop);
}
