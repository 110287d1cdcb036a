/* cli_measure: the measurement commands (stream, rr, crr): their options, the built-in
 * loopback server, and the report. */
#include "cli.h"

#include "client.h"
#include "cpulist.h"
#include "histo.h"
#include "loopsrv.h"
#include "multi.h"
#include "thirdparty_ctl.h"
#include "iperf3_client.h"
#include "iperf3_proto.h"
#include "units.h"
#include "log.h"
#include "params.h"
#include "result_doc.h"
#include "report_json.h"
#include "report_live.h"
#include "report_text.h"
#include "server.h"
#include "sock.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static const char help_common[] =
    "connection:\n"
    "  -c, --client HOST       server to test against: HOST, HOST:PORT or [IPV6]:PORT;\n"
    "                          repeat -c to test several servers at once, started\n"
    "                          together; without -c a server runs inside this process\n"
    "  -p, --port PORT         server port (default %d)\n"
    "  -4, -6                  IPv4 or IPv6 only\n"
    "  -B, --bind ADDR         local address for every connection\n"
    "      --bind-dev IFACE    send and receive only through this interface\n"
    "                          (SO_BINDTODEVICE)\n"
    "      --timeout TIME      connect and control-reply timeout (default 10s)\n"
    "      --from HOST[:PORT]  third party: the daemon at HOST runs the test toward -c\n"
    "                          (it must allow us with --allow-third-party)\n"
    "      --user NAME         authenticate as NAME (secret from $NETRIG_SECRET or\n"
    "      --credentials FILE  a 'user secret' file of mode 0600)\n"
    "timing and placement:\n"
    "  -t, --time TIME         duration, after the omitted warm-up (default 10s)\n"
    "  -O, --omit TIME         warm-up left out of the results (default 0)\n"
    "  -i, --interval TIME     interval reports (default 1s; 0 = none)\n"
    "  -S, --tos N             IP TOS byte of the data packets, 0-255 (52, 0x34 or 064);\n"
    "                          the IPv6 traffic class on IPv6; the server's too\n"
    "      --dscp CODE         the same as a DSCP: AF11..AF43, EF, VA, LE, CS0..CS7 or 0-63\n"
    "  -P, --parallel N        flows (max %d)\n"
    "  -T, --threads N         client worker threads, each one epoll loop (default 1)\n"
    "      --server-threads N  server worker threads (default: as -T)\n"
    "  -A, --affinity CPUS     pin client workers round-robin to CPUS (0-3,8 or auto)\n"
    "      --server-cpus CPUS  pin server workers; auto = CPUs local to the NIC\n"
    "      --title TEXT        label stored with the results\n"
    "output:\n"
    "  -J, --json              one JSON document at the end (docs/json.md)\n"
    "      --json-stream       one JSON object per line per interval, then the document\n"
    "      --live              redraw one table in place every interval (default on a\n"
    "                          terminal for runs over 10 s, never when piped or -J)\n"
    "      --no-live           interval lines even on a terminal\n"
    "history:\n"
    "      --db PATH           save the run in this history database (default\n"
    "                          ~/.local/share/netrig/history.db; see 'netrig help history')\n"
    "      --no-save           do not save the run\n";

static const char help_units[] =
    "\nSizes take K, M, G, T (powers of 1024); rates take K, M, G, T bits/s (powers of\n"
    "1000) or a B suffix for bytes/s (100MB = 800 Mbit/s); times take s, ms, us, m, h.\n"
    "Exit status: 0 done, 1 failed or partial, 2 bad usage, 130 interrupted (partial\n"
    "results printed).\n";

void cli_help_stream(FILE *out)
{
    fprintf(out,
            "usage: netrig stream [-c HOST] [OPTIONS]\n"
            "\n"
            "Throughput between this host and a 'netrig serve' daemon: TCP by default, or paced\n"
            "UDP with -u (loss, jitter, one-way delay).\n"
            "\n");
    fprintf(out, help_common, SOCK_DEFAULT_PORT, PARAMS_MAX_FLOWS);
    fprintf(out,
            "stream:\n"
            "  -R, --reverse           server sends, client receives\n"
            "      --bidir             both directions at once (-P flows each way)\n"
            "  -n, --bytes SIZE        end after SIZE bytes (K, M, G, T: powers of 1024) over all\n"
            "                          flows, exactly (with --bidir: each way); with -t, the\n"
            "                          first limit reached ends the test\n"
            "  -k, --blocks N          end after N writes of -l bytes (UDP: N datagrams)\n"
            "  -b, --bitrate RATE[/N]  pace each flow in the application to RATE bits/s (TCP:\n"
            "                          N writes back to back per round; unpaced by default)\n"
            "      --cport PORT        local port of the data flows: flow i uses PORT + i\n"
            "  -l, --length SIZE       bytes per write (default 1M, 128K with -Z; UDP: datagram,\n"
            "                          1400)\n"
            "  -w, --window SIZE       socket buffer (SO_SNDBUF/SO_RCVBUF) on both ends\n"
            "  -C, --congestion ALGO   congestion control (e.g. bbr, cubic, reno)\n"
            "  -M, --mss BYTES         TCP maximum segment size\n"
            "  -N, --nodelay           TCP_NODELAY on data flows\n"
            "      --fq-rate RATE      per-flow pacing (SO_MAX_PACING_RATE), bits/s: 500M, 2G\n"
            "  -Z, --zerocopy          MSG_ZEROCOPY sends; sendfile() when the kernel would copy\n"
            "      --zerocopy-rx       receivers map the socket's pages (TCP_ZEROCOPY_RECEIVE),\n"
            "                          recv() for what cannot be mapped; both ends\n"
            "      --skip-rx-copy      receivers discard data in the kernel (MSG_TRUNC): measures\n"
            "                          the network and the sender; the receiver's copy is not\n"
            "                          counted\n"
            "UDP:\n"
            "  -u, --udp               paced UDP datagrams with sequence numbers and timestamps\n"
            "  -b, --bitrate RATE[/N]  per-flow rate (default 1M); N datagrams back to back\n"
            "      --pps N             per-flow datagrams per second (instead of -b)\n"
            "      --dont-fragment     never fragment datagrams (IP_PMTUDISC_DO): over the path\n"
            "                          MTU they fail instead\n"
            "iperf3:\n"
            "      --iperf3            test against an iperf3 server ('iperf3 -s', default port\n"
            "                          5201): -P, -R, --bidir, -t, -O, -n, -k, -l, -w, -C, -b,\n"
            "                          -S; -u with -b\n");
    fputs(help_units, out);
}

void cli_help_rr(FILE *out)
{
    fprintf(out,
            "usage: netrig rr [-c HOST] [OPTIONS]\n"
            "\n"
            "Request/response latency and rate (netperf's TCP_RR): each flow sends a request and\n"
            "waits for the response; latency percentiles come from a log-linear histogram.\n"
            "\n");
    fprintf(out, help_common, SOCK_DEFAULT_PORT, PARAMS_MAX_FLOWS);
    fprintf(out,
            "request/response:\n"
            "  -r, --size REQ[,RESP]   request and response bytes (default 1,1)\n"
            "  -u, --udp               UDP request/response (a lost datagram counts as a timeout)\n"
            "      --depth N           transactions in flight per flow (default 1, closed loop)\n"
            "      --rate TPS          open loop: TPS transactions/s over all flows; latency\n"
            "                          counts from the intended send time\n"
            "      --txn-timeout TIME  give up on an unanswered transaction (default 2s)\n"
            "      --busy-poll         spin on the sockets instead of sleeping in epoll\n"
            "      --histogram FILE    write the full latency distribution to FILE\n"
            "  -w, --window SIZE       socket buffers; -C ALGO congestion control\n"
            "      --cport PORT        local port of the flows: flow i uses PORT + i\n"
            "      --dont-fragment     UDP: never fragment datagrams (IP_PMTUDISC_DO)\n");
    fputs(help_units, out);
}

void cli_help_crr(FILE *out)
{
    fprintf(out,
            "usage: netrig crr [-c HOST] [OPTIONS]\n"
            "\n"
            "Connection rate (netperf's TCP_CRR): each transaction connects, sends a request,\n"
            "reads the response and closes. The server accepts on one SO_REUSEPORT listener per\n"
            "worker thread and closes first, so TIME_WAIT stays on the server.\n"
            "\n");
    fprintf(out, help_common, SOCK_DEFAULT_PORT, PARAMS_MAX_FLOWS);
    fprintf(out, "connect/request/response:\n"
                 "  -r, --size REQ[,RESP]   request and response bytes (default 1,1)\n"
                 "      --connect-only      connect and close only: pure connection rate\n"
                 "      --txn-timeout TIME  give up on a transaction (default 2s)\n"
                 "      --busy-poll         spin on the sockets instead of sleeping in epoll\n"
                 "      --histogram FILE    write the full latency distribution to FILE\n"
                 "  -C ALGO                 congestion control\n");
    fputs(help_units, out);
}

enum {
    OPT_SERVER_THREADS = 256,
    OPT_BIDIR,
    OPT_FQ_RATE,
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
    {"bytes", required_argument, NULL, 'n'},
    {"blocks", required_argument, NULL, 'k'},
    {"tos", required_argument, NULL, 'S'},
    {"dscp", required_argument, NULL, CLI_OPT_DSCP},
    {"cport", required_argument, NULL, CLI_OPT_CPORT},
    {"bind-dev", required_argument, NULL, CLI_OPT_BIND_DEV},
    {"dont-fragment", no_argument, NULL, CLI_OPT_DONT_FRAGMENT},
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

enum measure_output { OUT_TEXT, OUT_JSON, OUT_JSON_STREAM };

struct measure_cli {
    struct client_opts o;
    enum measure_output output;             /* -J, --json-stream, else text */
    FILE *out;                              /* the report */
    const char *targets[MULTI_MAX_TARGETS]; /* -c, given once or more */
    const char *from;                       /* --from: a daemon runs the measurement for us */
    uint32_t ntargets;
    enum params_test kind;
    const char *histogram;      /* --histogram FILE */
    const char *db;             /* --db PATH: the history (NULL = default) */
    bool no_save;               /* --no-save */
    bool iperf3, port_given;    /* --iperf3: an iperf3 server, port 5201 unless -p */
    struct cli_data_opts data;  /* -n, -k, -b, -S, --dscp, --cport, ... (cli_measure_data.c) */
    enum report_live_mode live; /* --live / --no-live (default: auto) */
};

#define K_STREAM (1u << PARAMS_TEST_STREAM)
#define K_RR     (1u << PARAMS_TEST_RR)
#define K_CRR    (1u << PARAMS_TEST_CRR)
#define K_TXN    (K_RR | K_CRR)

/* Options that only some measurement commands take. */
static const struct {
    int opt;
    const char *name;
    unsigned kinds;
} opt_kinds[] = {
    {'R', "-R", K_STREAM},
    {OPT_BIDIR, "--bidir", K_STREAM},
    {'l', "-l", K_STREAM},
    {'M', "--mss", K_STREAM | K_RR},
    {'N', "-N", K_STREAM},
    {'Z', "-Z", K_STREAM},
    {OPT_ZEROCOPY_RX, "--zerocopy-rx", K_STREAM},
    {OPT_SKIP_RX_COPY, "--skip-rx-copy", K_STREAM},
    {OPT_FQ_RATE, "--fq-rate", K_STREAM},
    {'b', "-b", K_STREAM},
    {OPT_PPS, "--pps", K_STREAM},
    {'u', "-u", K_STREAM | K_RR},
    {'n', "-n", K_STREAM},
    {'k', "-k", K_STREAM},
    {CLI_OPT_CPORT, "--cport", K_STREAM | K_RR},
    {CLI_OPT_DONT_FRAGMENT, "--dont-fragment", K_STREAM | K_RR},
    {'r', "-r", K_TXN},
    {OPT_DEPTH, "--depth", K_RR},
    {OPT_RATE, "--rate", K_RR},
    {OPT_CONNECT_ONLY, "--connect-only", K_CRR},
    {OPT_BUSY_POLL, "--busy-poll", K_TXN},
    {OPT_HISTOGRAM, "--histogram", K_TXN},
    {OPT_TXN_TIMEOUT, "--txn-timeout", K_TXN},
    {'w', "-w", K_STREAM | K_RR},
    {OPT_IPERF3, "--iperf3", K_STREAM},
};

static int check_kind(int c, enum params_test kind)
{
    for (size_t i = 0; i < sizeof(opt_kinds) / sizeof(opt_kinds[0]); i++) {
        if (opt_kinds[i].opt != c || (opt_kinds[i].kinds & (1u << kind)))
            continue;
        cli_error("option %s does not apply to 'netrig %s': see 'netrig help %s'",
                  opt_kinds[i].name, params_test_name(kind), params_test_name(kind));
        return -1;
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

/* One option; returns 0, or -1 after printing the error. */
static int measure_opt(int c, const char *arg, struct measure_cli *mc)
{
    struct client_opts *o = &mc->o;
    struct params *p = &o->p;
    uint64_t v;

    if (check_kind(c, mc->kind))
        return -1;
    switch (c) {
    case 'c':
        if (mc->ntargets >= MULTI_MAX_TARGETS) {
            cli_error("too many servers (-c): at most %d", MULTI_MAX_TARGETS);
            return -1;
        }
        mc->targets[mc->ntargets++] = arg;
        return 0;
    case 'p': mc->port_given = true; return cli_parse_port(arg, &o->port);
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
    case 'R': p->dir = PARAMS_DIR_REVERSE; return 0;
    case OPT_BIDIR: p->dir = PARAMS_DIR_BIDIR; return 0;
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
    case OPT_TIMEOUT:
        if (parse_timeout("--timeout", arg, 100000000ULL, &v))
            return -1;
        o->timeout_ms = (int)(v / 1000000);
        return 0;
    default: return txn_opt(c, arg, mc);
    }
}

static void help_for(enum params_test kind, FILE *out)
{
    if (kind == PARAMS_TEST_RR)
        cli_help_rr(out);
    else if (kind == PARAMS_TEST_CRR)
        cli_help_crr(out);
    else
        cli_help_stream(out);
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
    const char *name = params_test_name(mc->kind);
    struct client_opts *o = &mc->o;
    char err[256];
    int c;

    memset(o, 0, sizeof(*o));
    params_defaults(&o->p);
    o->p.test = mc->kind;
    o->port = SOCK_DEFAULT_PORT;
    o->timeout_ms = 10000;
    mc->out = stdout;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":c:p:B:46t:O:i:P:T:Rl:w:C:M:NZA:Jhub:r:n:k:S:",
                            measure_long, NULL)) != -1) {
        if (c == 'h') {
            help_for(mc->kind, stdout);
            return 1;
        }
        if (c == '?') {
            cli_error("unknown option '%s' for %s: see 'netrig help %s'", argv[optind - 1], name,
                      name);
            return -1;
        }
        if (c == ':') {
            cli_error("option '%s' needs a value: see 'netrig help %s'", argv[optind - 1], name);
            return -1;
        }
        if (measure_opt(c, optarg, mc))
            return -1;
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
    if (o->p.udp && mc->kind == PARAMS_TEST_STREAM && !mc->data.length_given)
        o->p.write_size = 1400; /* fits a 1500-byte MTU with IPv6 and UDP headers */
    /* zero-copy sends gain nothing from large writes (no copy to save per call) and
     * sendfile() of 128 KiB measured fastest here: 33 against 20 Gbit/s with 1 MiB */
    if (o->p.zerocopy && !mc->data.length_given)
        o->p.write_size = 128 * 1024;
    if (cli_data_finish(o, &mc->data, mc->from != NULL, mc->ntargets))
        return -1;
    if (params_validate(&o->p, err, sizeof(err)) ||
        (mc->iperf3 && iperf3_client_check(o, err, sizeof(err)))) {
        cli_error("%s", err);
        return -1;
    }
    return check_cpus(o->cpus);
}

/* Flows need file descriptors: two per flow on loopback (both ends in this process). */
static void raise_fd_limit(uint32_t need)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < need + 64) {
        rl.rlim_cur = rl.rlim_max < need + 64 ? rl.rlim_max : need + 64;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static void print_failure_json(FILE *out, enum params_test kind, const char *err, bool one_line)
{
    report_json_print(out, report_json_failure(params_test_name(kind), err, one_line), one_line);
}

/* --histogram FILE: the client's whole latency distribution. */
static int write_histogram(const char *path, const struct run_result *r)
{
    FILE *f;
    int rc;

    if (!r->local.lat) {
        cli_error("no latency histogram to write to '%s'", path);
        return -1;
    }
    f = fopen(path, "w");
    if (!f) {
        cli_error("cannot write histogram file '%s': %s", path, strerror(errno));
        return -1;
    }
    rc = histo_write(r->local.lat, f);
    if (fclose(f) || rc) {
        cli_error("cannot write histogram file '%s': %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

static void print_report(const struct measure_cli *mc, const struct run_result *r)
{
    bool stream = mc->output == OUT_JSON_STREAM;

    if (mc->output == OUT_TEXT)
        report_text_summary(mc->out, r);
    else
        report_json_print(mc->out, report_json_document(r, stream), stream);
}

int cli_measure_parse(enum params_test kind, int argc, char **argv, struct client_opts *o)
{
    struct measure_cli mc = {.kind = kind};
    int rc = parse_measure(argc, argv, &mc);

    *o = mc.o;
    return rc;
}

/* The report of a run document a daemon sent back (third-party runs): the same summary as a
 * run of our own, read from the document; A's figures are the client's. */
static void print_remote_summary(FILE *out, const char *from, const cJSON *msg)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(msg, "status");
    struct run_result r;
    char err[256];
    int rc = result_from_doc(cJSON_GetObjectItemCaseSensitive(msg, "result"), &r, err, sizeof(err));

    fprintf(out, "third-party test from %s to %s: %s\n", from, rc ? "?" : r.server,
            cJSON_IsString(st) && !strcmp(st->valuestring, "partial")    ? "partial"
            : cJSON_IsString(st) && !strcmp(st->valuestring, "complete") ? "complete"
                                                                         : "failed");
    if (!rc) {
        fprintf(out, "(the client below is the daemon at %s)\n", from);
        report_text_summary(out, &r);
    }
    result_fini(&r);
}

/* --from A -c B: the daemon at A runs the measurement toward B and sends us its document. */
static int run_third_party(struct measure_cli *mc)
{
    struct client_opts *o = &mc->o;
    struct multi_target from;
    cJSON *doc = NULL, *res, *st;
    char err[512] = "";
    int rc;

    if (mc->ntargets != 1) {
        cli_error("--from needs exactly one -c: the daemon the test goes to");
        return CLI_EXIT_USAGE;
    }
    if (multi_parse_target(mc->from, SOCK_DEFAULT_PORT, &from)) {
        cli_error("invalid daemon '%s' for --from: use HOST, HOST:PORT or [IPV6]:PORT", mc->from);
        return CLI_EXIT_USAGE;
    }
    rc = thirdparty_request(from.host, from.port, o, &doc, err, sizeof(err));
    if (rc) {
        cli_error("%s:%u: %s", from.host, from.port, err);
        if (mc->output != OUT_TEXT)
            print_failure_json(mc->out, mc->kind, err, mc->output == OUT_JSON_STREAM);
        return CLI_EXIT_FAIL;
    }
    st = cJSON_GetObjectItemCaseSensitive(doc, "status");
    if (mc->output == OUT_TEXT) {
        print_remote_summary(mc->out, mc->from, doc);
    } else {
        /* a copy: the history keeps the document as it came */
        res = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(doc, "result"), true);
        if (!res)
            res = cJSON_CreateObject();
        cJSON_AddStringToObject(res, "third_party_from", mc->from);
        cJSON_AddStringToObject(res, "third_party_status",
                                cJSON_IsString(st) ? st->valuestring : "?");
        {
            const cJSON *why = cJSON_GetObjectItemCaseSensitive(doc, "message");
            if (cJSON_IsString(why))
                cJSON_AddStringToObject(res, "third_party_error", why->valuestring);
        }
        report_json_print(mc->out, res, mc->output == OUT_JSON_STREAM);
    }
    if (!mc->no_save)
        cli_history_save_third_party(mc->db, mc->from, mc->targets[0], doc,
                                     mc->output == OUT_TEXT ? mc->out : NULL);
    rc = cJSON_IsString(st) && !strcmp(st->valuestring, "complete") ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    if (rc) {
        const cJSON *msg = cJSON_GetObjectItemCaseSensitive(doc, "message");
        cli_error("third-party test %s: %s", cJSON_IsString(st) ? st->valuestring : "failed",
                  cJSON_IsString(msg) ? msg->valuestring : "no detail");
    }
    cJSON_Delete(doc);
    return rc;
}

/* -c A -c B ...: one run against each at once, started together. */
static int run_multi(struct measure_cli *mc, volatile sig_atomic_t *stop)
{
    struct client_opts *o = &mc->o;
    struct multi_result *m = calloc(1, sizeof(*m));
    char err[512] = "";
    int rc;

    if (!m) {
        cli_error("out of memory");
        return CLI_EXIT_FAIL;
    }
    for (uint32_t t = 0; t < mc->ntargets; t++) {
        if (multi_parse_target(mc->targets[t], o->port, &m->targets[t])) {
            cli_error("invalid server '%s' for -c: use HOST, HOST:PORT or [IPV6]:PORT",
                      mc->targets[t]);
            free(m);
            return CLI_EXIT_USAGE;
        }
    }
    m->n = mc->ntargets;
    o->observer = report_text_quiet_observer(); /* the targets' progress is not shown */
    rc = multi_run(o, m, stop, err, sizeof(err));
    if (rc < 0) {
        cli_error("%s", err);
        if (mc->output != OUT_TEXT)
            print_failure_json(mc->out, mc->kind, err, mc->output == OUT_JSON_STREAM);
    } else if (mc->output == OUT_TEXT) {
        report_text_multi(mc->out, m);
    } else {
        report_json_print(mc->out, report_json_multi(m), mc->output == OUT_JSON_STREAM);
    }
    if (rc >= 0 && !mc->no_save)
        cli_history_save_multi(mc->db, m, mc->output == OUT_TEXT ? mc->out : NULL);
    for (uint32_t t = 0; rc > 0 && t < m->n; t++)
        if (m->rc[t] != 0)
            cli_error("%s:%u: %s", m->targets[t].host, m->targets[t].port, m->err[t]);
    multi_result_fini(m);
    free(m);
    if (*stop)
        return CLI_EXIT_INTERRUPTED;
    return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/* What the run shows while it goes: the live table, interval lines, or JSON lines. */
static void observe(struct measure_cli *mc, struct report_live *live)
{
    struct client_opts *o = &mc->o;

    if (report_live_wanted(mc->live, mc->out, mc->output == OUT_TEXT && !mc->iperf3,
                           o->p.duration_ns + o->p.omit_ns))
        o->observer = report_live_observer(live, mc->out);
    else if (mc->output == OUT_TEXT)
        o->observer = report_text_observer(mc->out);
    else
        o->observer = report_json_observer(mc->out, mc->output == OUT_JSON_STREAM);
}

int cli_measure(enum params_test kind, int argc, char **argv, volatile sig_atomic_t *stop)
{
    struct measure_cli t = {.kind = kind}, *mc = &t;
    struct client_opts *o = &mc->o;
    struct report_live live;
    struct loopsrv em;
    struct run_result r;
    char err[512] = "";
    bool embedded = false;
    int rc = parse_measure(argc, argv, mc);

    if (rc)
        return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    log_setup("netrig", false, LOG_LVL_WARN);
    raise_fd_limit(2 * params_total_flows(&o->p) * (mc->ntargets ? mc->ntargets : 1) + 16);
    if (mc->ntargets > 1 && !mc->from)
        return run_multi(mc, stop);
    if (mc->from)
        return run_third_party(mc);
    if (mc->live == REPORT_LIVE_ON && mc->output != OUT_TEXT) {
        cli_error("--live draws the text report: drop it, or drop -J/--json-stream");
        return CLI_EXIT_USAGE;
    }
    observe(mc, &live);
    if (!o->host[0]) {
        if (loopsrv_start(&em, o->family, err, sizeof(err))) {
            cli_error("%s", err);
            return CLI_EXIT_FAIL;
        }
        snprintf(o->host, sizeof(o->host), "%s", em.host);
        o->port = em.port;
        embedded = true;
    }
    rc = mc->iperf3 ? iperf3_client_run(o, stop, &r, err, sizeof(err))
                    : client_run(o, stop, &r, err, sizeof(err));
    if (embedded)
        loopsrv_stop(&em);
    if (rc < 0) {
        cli_error("%s", err);
        if (mc->output != OUT_TEXT)
            print_failure_json(mc->out, kind, err, mc->output == OUT_JSON_STREAM);
        result_fini(&r);
        return CLI_EXIT_FAIL;
    }
    print_report(mc, &r);
    if (!mc->no_save)
        cli_history_save(mc->db, &r, mc->output == OUT_TEXT ? mc->out : NULL);
    if (r.partial && !*stop)
        cli_error("%s", r.error);
    if (mc->histogram && write_histogram(mc->histogram, &r))
        rc = 1;
    result_fini(&r);
    if (*stop)
        return CLI_EXIT_INTERRUPTED;
    return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
