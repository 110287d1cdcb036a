/* cli_stream: `netrig stream` options, the built-in loopback server, and the report. */
#include "cli.h"

#include "client.h"
#include "log.h"
#include "params.h"
#include "report_json.h"
#include "report_text.h"
#include "server.h"
#include "sock.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

void cli_help_stream(FILE *out)
{
    fprintf(out,
"usage: netrig stream [-c HOST] [OPTIONS]\n"
"\n"
"TCP throughput between this host and a 'netrig serve' daemon. Without -c, a server\n"
"is started inside this process on loopback, so the command works on its own.\n"
"\n"
"connection:\n"
"  -c, --client HOST       server to test against (name or address)\n"
"  -p, --port PORT         server port (default %d)\n"
"  -4, -6                  IPv4 or IPv6 only\n"
"  -B, --bind ADDR         local address for every connection\n"
"      --timeout TIME      connect and control-reply timeout (default 10s)\n"
"test:\n"
"  -t, --time TIME         duration, after the omitted warm-up (default 10s)\n"
"  -O, --omit TIME         warm-up left out of the results (default 0)\n"
"  -i, --interval TIME     interval reports (default 1s; 0 = none)\n"
"  -P, --parallel N        flows (per direction with --bidir; default 1, max %d)\n"
"  -T, --threads N         client worker threads, each one epoll loop (default 1)\n"
"      --server-threads N  server worker threads (default: as -T)\n"
"  -R, --reverse           server sends, client receives\n"
"      --bidir             both directions at once (-P flows each way)\n"
"  -l, --length SIZE       bytes per write (default 128K)\n"
"  -w, --window SIZE       socket buffer (SO_SNDBUF/SO_RCVBUF) on both ends\n"
"  -C, --congestion ALGO   congestion control (e.g. bbr, cubic, reno)\n"
"  -M, --mss BYTES         TCP maximum segment size\n"
"  -N, --nodelay           TCP_NODELAY on data flows\n"
"      --fq-rate RATE      per-flow pacing (SO_MAX_PACING_RATE), bits/s: 500M, 2G\n"
"  -Z, --zerocopy          MSG_ZEROCOPY sends (falls back to copying, with a note)\n"
"  -A, --affinity CPUS     pin client workers round-robin to CPUS (0-3,8 or auto)\n"
"      --server-cpus CPUS  pin server workers likewise; auto = CPUs local to the NIC\n"
"      --title TEXT        label stored with the results\n"
"output:\n"
"  -J, --json              one JSON document at the end (docs/json.md)\n"
"      --json-stream       one JSON object per line per interval, then the document\n"
"\n"
"Sizes take K, M, G (powers of 1024); rates take K, M, G bits/s (powers of 1000)\n"
"or a B suffix for bytes/s; times take s, ms, m, h.\n"
"Exit status: 0 done, 1 failed or partial, 2 bad usage, 130 interrupted (partial\n"
"results printed).\n",
            SOCK_DEFAULT_PORT, PARAMS_MAX_FLOWS);
}

enum {
    OPT_SERVER_THREADS = 256, OPT_BIDIR, OPT_FQ_RATE, OPT_SERVER_CPUS, OPT_TITLE,
    OPT_JSON_STREAM, OPT_TIMEOUT,
};

static const struct option stream_long[] = {
    {"client", required_argument, NULL, 'c'},      {"port", required_argument, NULL, 'p'},
    {"bind", required_argument, NULL, 'B'},        {"time", required_argument, NULL, 't'},
    {"omit", required_argument, NULL, 'O'},        {"interval", required_argument, NULL, 'i'},
    {"parallel", required_argument, NULL, 'P'},    {"threads", required_argument, NULL, 'T'},
    {"reverse", no_argument, NULL, 'R'},           {"length", required_argument, NULL, 'l'},
    {"window", required_argument, NULL, 'w'},      {"congestion", required_argument, NULL, 'C'},
    {"mss", required_argument, NULL, 'M'},         {"nodelay", no_argument, NULL, 'N'},
    {"zerocopy", no_argument, NULL, 'Z'},          {"affinity", required_argument, NULL, 'A'},
    {"json", no_argument, NULL, 'J'},              {"help", no_argument, NULL, 'h'},
    {"server-threads", required_argument, NULL, OPT_SERVER_THREADS},
    {"bidir", no_argument, NULL, OPT_BIDIR},
    {"fq-rate", required_argument, NULL, OPT_FQ_RATE},
    {"server-cpus", required_argument, NULL, OPT_SERVER_CPUS},
    {"title", required_argument, NULL, OPT_TITLE},
    {"json-stream", no_argument, NULL, OPT_JSON_STREAM},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
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

/* One option; returns 0, or -1 after printing the error. */
static int stream_opt(int c, const char *arg, struct client_opts *o)
{
    struct params *p = &o->p;
    uint64_t v;

    switch (c) {
    case 'c': return copy_str("-c", arg, o->host, sizeof(o->host));
    case 'p': return cli_parse_port(arg, &o->port);
    case 'B': return copy_str("-B", arg, o->bind, sizeof(o->bind));
    case '4': o->family = 4; return 0;
    case '6': o->family = 6; return 0;
    case 't': return cli_parse_duration("-t", arg, &p->duration_ns);
    case 'O': return cli_parse_duration("-O", arg, &p->omit_ns);
    case 'i': return cli_parse_duration("-i", arg, &p->interval_ns);
    case 'P': return cli_parse_u32("-P", arg, 1, PARAMS_MAX_FLOWS, &p->flows);
    case 'T': return cli_parse_u32("-T", arg, 1, PARAMS_MAX_THREADS, &p->threads);
    case OPT_SERVER_THREADS:
        return cli_parse_u32("--server-threads", arg, 1, PARAMS_MAX_THREADS, &p->server_threads);
    case 'R': p->dir = PARAMS_DIR_REVERSE; return 0;
    case OPT_BIDIR: p->dir = PARAMS_DIR_BIDIR; return 0;
    case 'l': return cli_parse_size("-l", arg, PARAMS_MAX_WRITE, &p->write_size);
    case 'w': return cli_parse_size("-w", arg, PARAMS_MAX_WINDOW, &p->window);
    case 'C': return copy_str("-C", arg, p->congestion, sizeof(p->congestion));
    case 'M': return cli_parse_u32("--mss", arg, 88, 65535, &p->mss);
    case 'N': p->nodelay = true; return 0;
    case 'Z': p->zerocopy = true; return 0;
    case OPT_FQ_RATE:
        if (cli_parse_rate("--fq-rate", arg, &v))
            return -1;
        p->fq_rate_bps = v;
        return 0;
    case 'A': return copy_str("-A", arg, o->cpus, sizeof(o->cpus));
    case OPT_SERVER_CPUS: return copy_str("--server-cpus", arg, p->server_cpus, sizeof(p->server_cpus));
    case OPT_TITLE: return copy_str("--title", arg, p->title, sizeof(p->title));
    case 'J': o->output = CLIENT_OUT_JSON; return 0;
    case OPT_JSON_STREAM: o->output = CLIENT_OUT_JSON_STREAM; return 0;
    case OPT_TIMEOUT:
        if (cli_parse_duration("--timeout", arg, &v))
            return -1;
        if (v < 100000000ULL || v > 600000000000ULL) {
            cli_error("--timeout %s is out of range: use 0.1s to 600s", arg);
            return -1;
        }
        o->timeout_ms = (int)(v / 1000000);
        return 0;
    default: return -1;
    }
}

static int parse_stream(int argc, char **argv, struct client_opts *o)
{
    char err[256];
    int c;

    memset(o, 0, sizeof(*o));
    params_defaults(&o->p);
    o->port = SOCK_DEFAULT_PORT;
    o->timeout_ms = 10000;
    o->out = stdout;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":c:p:B:46t:O:i:P:T:Rl:w:C:M:NZA:Jh", stream_long, NULL)) != -1) {
        if (c == 'h') {
            cli_help_stream(stdout);
            return 1;
        }
        if (c == '?') {
            cli_error("unknown option '%s' for stream: see 'netrig help stream'", argv[optind - 1]);
            return -1;
        }
        if (c == ':') {
            cli_error("option '%s' needs a value: see 'netrig help stream'", argv[optind - 1]);
            return -1;
        }
        if (stream_opt(c, optarg, o))
            return -1;
    }
    if (optind < argc) {
        cli_error("unexpected argument '%s': the server is given with -c HOST", argv[optind]);
        return -1;
    }
    if (params_validate(&o->p, err, sizeof(err))) {
        cli_error("%s", err);
        return -1;
    }
    return 0;
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

struct embedded {
    struct server *srv;
    pthread_t th;
    volatile sig_atomic_t stop;
};

static void *embedded_main(void *arg)
{
    struct embedded *em = arg;
    server_run(em->srv, &em->stop);
    return NULL;
}

static int embedded_start(struct embedded *em, struct client_opts *o)
{
    struct server_opts so = {.port = 0, .family = o->family, .max_tests = 1, .timeout_ms = 10000};
    char err[256];

    snprintf(so.bind, sizeof(so.bind), "%s", o->family == 6 ? "::1" : "127.0.0.1");
    em->stop = 0;
    em->srv = server_create(&so, err, sizeof(err));
    if (!em->srv) {
        cli_error("cannot start the built-in loopback server: %s", err);
        return -1;
    }
    snprintf(o->host, sizeof(o->host), "%s", so.bind);
    o->port = server_port(em->srv);
    if (pthread_create(&em->th, NULL, embedded_main, em)) {
        cli_error("cannot start the built-in loopback server thread");
        server_destroy(em->srv);
        return -1;
    }
    return 0;
}

static void embedded_stop(struct embedded *em)
{
    em->stop = 1;
    pthread_join(em->th, NULL);
    server_destroy(em->srv);
}

/* -J prints the document indented; --json-stream keeps to one object per line. */
static void print_json(FILE *out, cJSON *doc, bool one_line)
{
    char *text = one_line ? cJSON_PrintUnformatted(doc) : cJSON_Print(doc);

    if (text)
        fprintf(out, "%s\n", text);
    free(text);
    cJSON_Delete(doc);
}

static void print_failure_json(FILE *out, const char *err)
{
    cJSON *doc = cJSON_CreateObject();

    cJSON_AddStringToObject(doc, "netrig_version", NETRIG_VERSION);
    cJSON_AddStringToObject(doc, "test", "stream");
    cJSON_AddStringToObject(doc, "error", err);
    print_json(out, doc, false);
}

int cli_stream(int argc, char **argv, volatile sig_atomic_t *stop)
{
    struct client_opts o;
    struct embedded em;
    struct run_result r;
    char err[512] = "";
    bool embedded = false;
    int rc = parse_stream(argc, argv, &o);

    if (rc)
        return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    log_setup("netrig", false, LOG_LVL_WARN);
    raise_fd_limit(2 * params_total_flows(&o.p) + 16);
    if (!o.host[0]) {
        if (embedded_start(&em, &o))
            return CLI_EXIT_FAIL;
        embedded = true;
    }
    rc = client_run_stream(&o, stop, &r, err, sizeof(err));
    if (embedded)
        embedded_stop(&em);
    if (rc < 0) {
        cli_error("%s", err);
        if (o.output != CLIENT_OUT_TEXT)
            print_failure_json(o.out, err);
        result_fini(&r);
        return CLI_EXIT_FAIL;
    }
    if (o.output == CLIENT_OUT_TEXT)
        report_text_summary(o.out, &r);
    else if (o.output == CLIENT_OUT_JSON)
        print_json(o.out, report_json_run(&r), false);
    else {
        cJSON *doc = report_json_run(&r);
        cJSON_AddStringToObject(doc, "event", "end");
        print_json(o.out, doc, true);
    }
    if (r.partial && !*stop)
        cli_error("%s", r.error);
    result_fini(&r);
    if (*stop)
        return CLI_EXIT_INTERRUPTED;
    return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
