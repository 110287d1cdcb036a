/* cli_serve: `netrig serve` options, daemonizing and the pid file. */
#include "cli.h"

#include "acl.h"
#include "auth.h"
#include "log.h"
#include "metrics.h"
#include "cli_serve_tune.h"
#include "params.h"
#include "prom.h"
#include "server.h"
#include "sock.h"
#include "store.h"
#include "units.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cli_help_serve(FILE *out)
{
    fprintf(out,
            "usage: netrig serve [OPTIONS]\n"
            "\n"
            "The daemon that answers 'netrig stream -c THIS_HOST'. It serves several clients at\n"
            "once, each test on its own worker threads, and measures its own side too.\n"
            "\n"
            "  -p, --port PORT       listen port (default %d; 0 picks a free one and logs it)\n"
            "  -B, --bind ADDR       listen on one address only (default: all, IPv4 and IPv6)\n"
            "  -4, -6                IPv4 or IPv6 only\n"
            "      --max-tests N     tests at once (default 16); more are refused as busy\n"
            "      --exclusive       one test at a time, of every kind; the others queue\n"
            "      --timeout TIME    limit for each control step and a new connection's hello\n"
            "                        (default 10s)\n"
            "limits and access:\n"
            "      --max-client-tests N  tests at once from one client address\n"
            "      --max-duration TIME   longest test accepted (omit included)\n"
            "      --max-flows N         most flows in one test\n"
            "      --max-rate RATE       most bits/s per test, both ways on the wire, every kind:\n"
            "                            TCP flows are paced to their share, the server's side\n"
            "                            pauses over it, UDP streams declaring more are refused,\n"
            "                            offenders are stopped\n"
            "      --max-memory SIZE     memory all tests may take together (default a quarter\n"
            "                            of RAM): a test that would go over is refused\n"
            "      --allow CIDR          accept only these addresses (repeatable)\n"
            "      --deny CIDR           refuse these addresses (repeatable; wins over --allow)\n"
            "      --auth-file FILE      require HMAC challenge-response; FILE has 'user secret'\n"
            "                            lines and must be mode 0600\n"
            "      --allow-third-party CIDR  run tests from this host toward another daemon when\n"
            "                            a controller in CIDR asks (netrig stream --from, mesh)\n"
            "      --allow-third-party-target CIDR  where such tests may go (repeatable); without\n"
            "                            it only toward the controller's own address\n"
            "      --no-host-snapshot    send clients no copy of this host's settings (sysctls,\n"
            "                            NICs, CPUs) with their results; they record it declined\n"
            "daemon:\n"
            "  -1, --one-off         serve one test, then exit (status 0); tests refused before\n"
            "                        they run do not count; others are busy meanwhile\n"
            "      --idle-timeout TIME  no test and no connection for TIME: reopen the listening\n"
            "                        socket (iperf3's restart); with -1, exit (status 0)\n"
            "  -D, --daemon          detach and log to syslog (or to --logfile)\n"
            "      --pidfile FILE    write the daemon's pid here\n"
            "      --syslog          log to syslog even in the foreground\n"
            "      --logfile FILE    append the log (and any other output) to FILE; reopened on\n"
            "                        SIGHUP\n"
            "      --timestamps[=FORMAT]  start each log line with the local time, in strftime\n"
            "                        FORMAT (default '%%c ', as iperf3)\n"
            "      --metrics ADDR:PORT  Prometheus metrics at http://ADDR:PORT/metrics (tests\n"
            "                        running and served, bytes, refusals, last results per\n"
            "                        client); [IPV6]:PORT, or :PORT for all addresses\n"
            "      --tune-state DIR  with --metrics: also how far this host drifted from\n"
            "                        what 'netrig tune --apply' journaled in DIR\n"
            "      --db PATH         save the server's side of every test in this history\n"
            "                        database (see 'netrig help history')\n"
            "  -v, --verbose         log debug detail\n",
            SOCK_DEFAULT_PORT);
}

enum {
    OPT_MAX_TESTS = 256,
    OPT_EXCLUSIVE,
    OPT_PIDFILE,
    OPT_SYSLOG,
    OPT_TIMEOUT,
    OPT_MAX_CLIENT,
    OPT_MAX_DURATION,
    OPT_MAX_FLOWS,
    OPT_MAX_RATE,
    OPT_ALLOW,
    OPT_DENY,
    OPT_AUTH_FILE,
    OPT_THIRD_PARTY,
    OPT_HISTORY_DB,
    OPT_MAX_MEMORY,
    OPT_TP_TARGET,
    OPT_NO_HOST_SNAPSHOT,
};

enum { OPT_METRICS = 600, OPT_IDLE_TIMEOUT, OPT_TUNE_STATE }; /* --metrics, --idle-timeout */

static const struct option serve_long[] = {
    {"port", required_argument, NULL, 'p'},
    {"bind", required_argument, NULL, 'B'},
    {"daemon", no_argument, NULL, 'D'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"max-tests", required_argument, NULL, OPT_MAX_TESTS},
    {"exclusive", no_argument, NULL, OPT_EXCLUSIVE},
    {"pidfile", required_argument, NULL, OPT_PIDFILE},
    {"syslog", no_argument, NULL, OPT_SYSLOG},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"max-client-tests", required_argument, NULL, OPT_MAX_CLIENT},
    {"max-duration", required_argument, NULL, OPT_MAX_DURATION},
    {"max-flows", required_argument, NULL, OPT_MAX_FLOWS},
    {"max-rate", required_argument, NULL, OPT_MAX_RATE},
    {"allow", required_argument, NULL, OPT_ALLOW},
    {"deny", required_argument, NULL, OPT_DENY},
    {"auth-file", required_argument, NULL, OPT_AUTH_FILE},
    {"metrics", required_argument, NULL, OPT_METRICS},
    {"tune-state", required_argument, NULL, OPT_TUNE_STATE},
    {"allow-third-party", required_argument, NULL, OPT_THIRD_PARTY},
    {"allow-third-party-target", required_argument, NULL, OPT_TP_TARGET},
    {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
    {"db", required_argument, NULL, OPT_HISTORY_DB},
    {"one-off", no_argument, NULL, '1'},
    {"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
    {"logfile", required_argument, NULL, CLI_OPT_LOGFILE},
    {"timestamps", optional_argument, NULL, CLI_OPT_TIMESTAMPS},
    {"no-host-snapshot", no_argument, NULL, OPT_NO_HOST_SNAPSHOT},
    {NULL, 0, NULL, 0},
};

struct serve_cli;
static int history_db_opt(const char *arg, struct serve_cli *sc);

struct serve_cli {
    struct server_opts so;
    bool daemonize, use_syslog, verbose;
    const char *pidfile;
    char db[4096]; /* --db, made absolute: the daemon changes to "/" */
    const char *auth_file;
    const char *metrics;          /* --metrics ADDR:PORT */
    const char *tune_state;       /* --tune-state DIR */
    struct cli_tune_metrics tune; /* its render context */
    struct cli_output oo;         /* --logfile, --timestamps (of the log lines) */
    char logpath[4096];           /* --logfile, made absolute: the daemon changes to "/" */
    bool max_tests_given;         /* --max-tests (which -1 replaces) */
    struct acl acl;
    struct acl third_party;
    struct acl third_party_targets;
    struct auth auth;
};

static int acl_opt(const char *opt, const char *arg, struct serve_cli *sc, bool deny)
{
    int rc = acl_add(&sc->acl, arg, deny);

    if (rc == -ENOSPC)
        cli_error("too many %s entries: at most %d", opt, ACL_MAX);
    else if (rc)
        cli_error("invalid address '%s' for %s: use CIDR such as 192.0.2.0/24 or 2001:db8::/32",
                  arg, opt);
    return rc ? -1 : 0;
}

/* --max-* limits, --allow/--deny and --auth-file. */
static int limit_opt(int c, const char *arg, struct serve_cli *sc)
{
    switch (c) {
    case OPT_MAX_CLIENT:
        return cli_parse_u32("--max-client-tests", arg, 1, 1000, &sc->so.max_client_tests);
    case OPT_MAX_DURATION:
        if (cli_parse_duration("--max-duration", arg, &sc->so.max_duration_ns))
            return -1;
        if (sc->so.max_duration_ns < 100000000ULL) {
            cli_error("--max-duration %s is too short: use at least 0.1s", arg);
            return -1;
        }
        return 0;
    case OPT_MAX_FLOWS:
        return cli_parse_u32("--max-flows", arg, 1, 2 * PARAMS_MAX_FLOWS, &sc->so.max_flows);
    case OPT_MAX_RATE:
        if (cli_parse_rate("--max-rate", arg, &sc->so.max_rate_bps))
            return -1;
        if (!sc->so.max_rate_bps) {
            cli_error("--max-rate %s allows nothing: give a rate above 0, e.g. 1G", arg);
            return -1;
        }
        return 0;
    case OPT_ALLOW: return acl_opt("--allow", arg, sc, false);
    case OPT_DENY: return acl_opt("--deny", arg, sc, true);
    case OPT_AUTH_FILE: sc->auth_file = arg; return 0;
    case OPT_THIRD_PARTY:
    case OPT_TP_TARGET: {
        struct acl *list = c == OPT_TP_TARGET ? &sc->third_party_targets : &sc->third_party;
        if (acl_add(list, arg, false)) {
            cli_error("invalid address '%s' for %s: use CIDR such as 192.0.2.0/24 (at most %d "
                      "entries)",
                      arg,
                      c == OPT_TP_TARGET ? "--allow-third-party-target" : "--allow-third-party",
                      ACL_MAX);
            return -1;
        }
        if (c == OPT_TP_TARGET)
            sc->so.third_party_targets = list;
        else
            sc->so.third_party = list;
        return 0;
    }
    case OPT_MAX_MEMORY:
        if (units_parse_size(arg, &sc->so.max_memory) || sc->so.max_memory < (16ULL << 20)) {
            cli_error("invalid size '%s' for --max-memory: use at least 16M (K, M, G or T "
                      "suffixes)",
                      arg);
            return -1;
        }
        return 0;
    default: return -1;
    }
}

static int serve_opt(int c, const char *arg, struct serve_cli *sc)
{
    uint64_t ns;

    switch (c) {
    case 'p': return cli_parse_port(arg, &sc->so.port);
    case 'B':
        if (strlen(arg) >= sizeof(sc->so.bind)) {
            cli_error("address '%s' for -B is too long", arg);
            return -1;
        }
        snprintf(sc->so.bind, sizeof(sc->so.bind), "%s", arg);
        return 0;
    case '4': sc->so.family = 4; return 0;
    case '6': sc->so.family = 6; return 0;
    case 'D': sc->daemonize = true; return 0;
    case 'v': sc->verbose = true; return 0;
    case OPT_MAX_TESTS:
        sc->max_tests_given = true;
        return cli_parse_u32("--max-tests", arg, 1, 1000, &sc->so.max_tests);
    case '1': sc->so.one_off = true; return 0;
    case OPT_IDLE_TIMEOUT:
        if (cli_parse_duration("--idle-timeout", arg, &ns))
            return -1;
        if (ns < 100000000ULL) {
            cli_error("--idle-timeout %s is too short: use at least 0.1s", arg);
            return -1;
        }
        sc->so.idle_timeout_ns = ns;
        return 0;
    case CLI_OPT_LOGFILE:
    case CLI_OPT_TIMESTAMPS: return cli_output_opt(&sc->oo, c, arg);
    case OPT_EXCLUSIVE: sc->so.exclusive = true; return 0;
    case OPT_PIDFILE: sc->pidfile = arg; return 0;
    case OPT_SYSLOG: sc->use_syslog = true; return 0;
    case OPT_METRICS: {
        char host[256];
        uint16_t port;
        if (prom_parse_listen(arg, host, sizeof(host), &port) == 0 && (sc->metrics = arg))
            return 0;
        cli_error("invalid address '%s' for --metrics: use ADDR:PORT, [IPV6]:PORT or :PORT, "
                  "e.g. 127.0.0.1:9464",
                  arg);
        return -1;
    }
    case OPT_HISTORY_DB: return history_db_opt(arg, sc);
    case OPT_TUNE_STATE: sc->tune_state = arg; return 0;
    case OPT_NO_HOST_SNAPSHOT: sc->so.host_snapshot = SERVED_HOSTSNAP_DECLINE; return 0;
    case OPT_TIMEOUT:
        if (cli_parse_duration("--timeout", arg, &ns))
            return -1;
        if (ns < 100000000ULL || ns > 600000000000ULL) {
            cli_error("--timeout %s is out of range: use 0.1s to 600s", arg);
            return -1;
        }
        sc->so.timeout_ms = (int)(ns / 1000000);
        return 0;
    default: return limit_opt(c, arg, sc);
    }
}

/* --db PATH: checked now (a newer schema is refused before serving), kept absolute. */
static int history_db_opt(const char *arg, struct serve_cli *sc)
{
    char cwd[2048], err[512];
    struct store *st;

    if (arg[0] == '/')
        snprintf(sc->db, sizeof(sc->db), "%s", arg);
    else if (getcwd(cwd, sizeof(cwd)) && strlen(cwd) + strlen(arg) + 2 <= sizeof(sc->db))
        snprintf(sc->db, sizeof(sc->db), "%s/%s", cwd, arg);
    else {
        cli_error("cannot resolve history path '%s' for --db", arg);
        return -1;
    }
    st = store_open(sc->db, true, err, sizeof(err));
    if (!st) {
        cli_error("%s", err);
        return -1;
    }
    store_close(st);
    sc->so.history_db = sc->db;
    return 0;
}

/* "path" made absolute from the working directory into buf (the daemon changes to "/"). */
static int absolute(const char *what, const char *path, char *buf, size_t len)
{
    char cwd[2048];

    if (path[0] == '/' && strlen(path) < len) {
        snprintf(buf, len, "%s", path);
        return 0;
    }
    if (!getcwd(cwd, sizeof(cwd)) || snprintf(buf, len, "%s/%s", cwd, path) >= (int)len) {
        cli_error("cannot resolve %s path '%s'", what, path);
        return -1;
    }
    return 0;
}

/* Options that exclude each other. */
static int check_serve(struct serve_cli *sc)
{
    if (sc->so.one_off && (sc->max_tests_given || sc->so.exclusive || sc->so.max_client_tests)) {
        cli_error("-1 serves one test at a time and then exits: --max-tests, --exclusive and "
                  "--max-client-tests do not apply; drop them");
        return -1;
    }
    if (sc->oo.logfile && sc->use_syslog) {
        cli_error("--logfile and --syslog both say where the log goes: give one");
        return -1;
    }
    if (sc->oo.logfile && absolute("log file", sc->oo.logfile, sc->logpath, sizeof(sc->logpath)))
        return -1;
    if (sc->oo.logfile)
        sc->oo.logfile = sc->logpath;
    if (sc->tune_state && !sc->metrics) {
        cli_error("--tune-state %s shows tuning drift in the metrics: give --metrics ADDR:PORT "
                  "too",
                  sc->tune_state);
        return -1;
    }
    if (sc->tune_state &&
        absolute("tune state", sc->tune_state, sc->tune.state_dir, sizeof(sc->tune.state_dir)))
        return -1;
    return 0;
}

static int parse_serve(int argc, char **argv, struct serve_cli *sc)
{
    int c;

    memset(sc, 0, sizeof(*sc));
    sc->so.port = SOCK_DEFAULT_PORT;
    sc->so.max_tests = 16;
    sc->so.timeout_ms = 10000;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":p:B:46Dvh1", serve_long, NULL)) != -1) {
        if (c == 'h') {
            cli_help_serve(stdout);
            return 1;
        }
        if (c == '?' || c == ':')
            return cli_opt_error(c, argv, "serve");
        if (serve_opt(c, optarg, sc))
            return -1;
    }
    if (optind < argc) {
        cli_error("unexpected argument '%s' for serve", argv[optind]);
        return -1;
    }
    if (check_serve(sc))
        return -1;
    if (sc->auth_file) {
        char err[512];
        if (auth_load(sc->auth_file, &sc->auth, err, sizeof(err))) {
            cli_error("%s", err);
            return -1;
        }
        sc->so.auth = &sc->auth;
    }
    if (sc->acl.nallow || sc->acl.ndeny)
        sc->so.acl = &sc->acl;
    return 0;
}

static int write_pidfile(const char *path, char *err, size_t errlen)
{
    char buf[32];
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());

    if (fd < 0 || write(fd, buf, (size_t)n) != n) {
        snprintf(err, errlen, "cannot write pid file '%s': %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

/* Double fork. The first parent waits on a pipe until the daemon is ready (pid file written)
 * or has failed, so `serve -D --pidfile F && kill $(cat F)` works and errors reach the caller.
 * Returns 0 in the daemon (ready_fd receives its verdict), or exits in the parent. */
static int detach(int *ready_fd)
{
    int fds[2], fd;
    pid_t pid;

    if (pipe(fds))
        return -1;
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid > 0) { /* the caller's process: relay the daemon's verdict */
        char msg[512];
        ssize_t n;
        close(fds[1]);
        n = read(fds[0], msg, sizeof(msg) - 1);
        if (n <= 0)
            _exit(CLI_EXIT_FAIL); /* the daemon died before saying anything */
        msg[n] = '\0';
        if (msg[0] == 'o' && msg[1] == 'k')
            _exit(CLI_EXIT_OK);
        fprintf(stderr, "netrig: %s\n", msg);
        _exit(CLI_EXIT_FAIL);
    }
    close(fds[0]);
    setsid();
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid > 0)
        _exit(0);
    if (chdir("/")) {
        /* nothing we need from the old working directory */
    }
    fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
        dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
        if (fd > 2)
            close(fd);
    }
    *ready_fd = fds[1];
    return 0;
}

/* Tells the waiting parent (if any) how start-up went. */
static void report_ready(int *ready_fd, const char *msg)
{
    if (*ready_fd < 0)
        return;
    if (write(*ready_fd, msg, strlen(msg)) < 0) {
        /* the parent is gone: nobody to tell */
    }
    close(*ready_fd);
    *ready_fd = -1;
}

/* --metrics: the endpoint, started after detaching (threads do not survive fork). */
static struct prom_http *metrics_start(const struct serve_cli *sc, int *ready_fd, char *err,
                                       size_t errlen)
{
    struct prom_http *h =
        sc->tune_state
            ? prom_http_start(sc->metrics, cli_tune_metrics_render, (void *)&sc->tune, err, errlen)
            : prom_http_start(sc->metrics, metrics_render, sc->so.metrics, err, errlen);
    char where[300];

    if (!h) {
        char msg[600];
        snprintf(msg, sizeof(msg), "--metrics %s: %s", sc->metrics, err);
        snprintf(err, errlen, "%s", msg);
        LOG_ERR("%s", err);
        report_ready(ready_fd, err);
        return NULL;
    }
    prom_http_where(h, where, sizeof(where));
    LOG_INFO("metrics at http://%s/metrics", where);
    return h;
}

/* The log: standard error (or --logfile), lines stamped with --timestamps. */
static int start_log(const struct serve_cli *sc)
{
    char err[4200];

    log_setup("netrig", false, sc->verbose ? LOG_LVL_DBG : LOG_LVL_INFO);
    log_stamp(sc->oo.stamp);
    if (sc->oo.logfile && log_to_file(sc->oo.logfile, err, sizeof(err))) {
        cli_error("%s", err);
        return -1;
    }
    return 0;
}

int cli_serve(int argc, char **argv, _Atomic int *stop)
{
    struct prom_http *http = NULL;
    struct serve_cli sc; /* about 90 KiB (secrets, address lists): fine on the main stack */
    struct server *s;
    char err[4200], pidpath[4096];
    sigset_t hup;
    int ready_fd = -1;
    int rc = parse_serve(argc, argv, &sc);

    if (rc)
        return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    /* the daemon changes to "/": a relative pid file path is taken from here */
    if (sc.pidfile) {
        if (absolute("pid file", sc.pidfile, pidpath, sizeof(pidpath)))
            return CLI_EXIT_USAGE;
        sc.pidfile = pidpath;
    }
    /* SIGHUP (reopen logs) is read from a signalfd by the acceptor: block it everywhere */
    sigemptyset(&hup);
    sigaddset(&hup, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &hup, NULL);
    if (start_log(&sc))
        return CLI_EXIT_FAIL;
    if (sc.metrics && !(sc.so.metrics = metrics_create())) {
        cli_error("out of memory for --metrics");
        return CLI_EXIT_FAIL;
    }
    sc.tune.metrics = sc.so.metrics;
    s = server_create(&sc.so, err, sizeof(err));
    if (!s) {
        cli_error("%s", err);
        metrics_destroy(sc.so.metrics);
        return CLI_EXIT_FAIL;
    }
    if (sc.so.one_off)
        LOG_INFO("listening on %s port %u (one test, then exit; %llu MiB for tests)",
                 sc.so.bind[0] ? sc.so.bind : "all addresses", server_port(s),
                 (unsigned long long)(server_max_memory(s) >> 20));
    else
        LOG_INFO("listening on %s port %u (max %u tests at once%s, %llu MiB for tests)",
                 sc.so.bind[0] ? sc.so.bind : "all addresses", server_port(s), sc.so.max_tests,
                 sc.so.exclusive ? ", exclusive" : "",
                 (unsigned long long)(server_max_memory(s) >> 20));
    if (sc.daemonize && detach(&ready_fd)) {
        cli_error("cannot detach: %s", strerror(errno));
        server_destroy(s);
        return CLI_EXIT_FAIL;
    }
    if (sc.oo.logfile && sc.daemonize)
        log_reopen(); /* detaching pointed standard output and error at /dev/null */
    else if (sc.daemonize || sc.use_syslog)
        log_setup("netrig", true, sc.verbose ? LOG_LVL_DBG : LOG_LVL_INFO);
    if ((sc.metrics && !(http = metrics_start(&sc, &ready_fd, err, sizeof(err)))) ||
        (sc.pidfile && write_pidfile(sc.pidfile, err, sizeof(err)))) {
        if (!sc.metrics || http)
            LOG_ERR("%s", err);
        report_ready(&ready_fd, err);
        prom_http_stop(http);
        server_destroy(s);
        metrics_destroy(sc.so.metrics);
        return CLI_EXIT_FAIL;
    }
    report_ready(&ready_fd, "ok");
    rc = server_run(s, stop);
    if (rc == SERVER_END_ONE_OFF)
        LOG_INFO("one test served (-1): exiting");
    else if (rc == SERVER_END_IDLE)
        LOG_INFO("no test for %.4gs (-1 --idle-timeout): exiting", sc.so.idle_timeout_ns / 1e9);
    else
        LOG_INFO("stopped");
    if (sc.pidfile)
        unlink(sc.pidfile);
    prom_http_stop(http);
    server_destroy(s);
    metrics_destroy(sc.so.metrics);
    OPENSSL_cleanse(&sc.auth, sizeof(sc.auth));
    return CLI_EXIT_OK;
}
