/* cli_sweep: `netrig sweep`: options, the built-in server, running every point until its
 * confidence target or repeat cap, storing each repetition with its point in one transaction
 * (so a crash keeps every finished run), resuming, and the sweep's summary. */
#include "cli.h"

#include "loopsrv.h"

#include "client.h"
#include "log.h"
#include "metric.h"
#include "report_text.h"
#include "server.h"
#include "stats.h"
#include "store.h"
#include "store_run.h"
#include "store_sweep.h"
#include "sweep.h"
#include "test_kind.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

void cli_help_sweep(FILE *out)
{
    fprintf(
        out,
        "usage: netrig sweep stream|rr|crr [TEST OPTIONS] --vary NAME=V1,V2,... [--vary ...]\n"
        "                    [--repeat N] [--ci LEVEL,WIDTH%%] [--ci-best-effort]\n"
        "                    [--metric NAME] [--resume]\n"
        "                    [-J] [--db PATH]\n"
        "\n"
        "Runs the test at every combination of the --vary values, each point repeated until\n"
        "the confidence interval of its metric is within WIDTH %% of the mean or N runs are\n"
        "done, and stores the whole sweep in the history as one unit. Every finished run is\n"
        "kept if the sweep is interrupted (Ctrl-C, kill); --resume finishes it.\n"
        "\n"
        "  --vary NAME=V1,...    a test option by its long name (window, threads, length,\n"
        "                        congestion, ...) or parameter name (flows, write_size), a\n"
        "                        flag with on,off (nodelay=on,off), or direction=forward,\n"
        "                        reverse,bidir. Repeat --vary for more dimensions\n"
        "  --repeat N            runs per point at most (default 1; 10 with --ci); without\n"
        "                        --ci exactly N\n"
        "  --ci LEVEL,WIDTH%%     stop a point once its LEVEL %% interval is within +-WIDTH %%\n"
        "                        of the mean (after at least 3 runs), e.g. 95,2%%; a point\n"
        "                        that reaches --repeat first is a failure (exit 1)\n"
        "  --ci-best-effort      accept points that reached --repeat without the --ci target\n"
        "                        (they are still reported; exit 0)\n"
        "  --metric NAME         the figure judged (default throughput_bps for stream,\n"
        "                        transactions_per_s for rr and crr; see docs/history.md)\n"
        "  --resume              finish the unfinished sweep of exactly this command line\n"
        "  -J, --json            the sweep's summary as JSON (progress goes to stderr)\n"
        "      --db PATH         history database (default ~/.local/share/netrig/history.db)\n"
        "\n"
        "Example: netrig sweep stream -c HOST -t 5 --vary flows=1,2,4,8 --vary window=256K,4M\n"
        "         --repeat 5 --ci 95,2%%\n");
}

struct sweep_cli {
    struct sweep_def d;
    const struct test_kind *kind; /* the test's command's kind */
    const char *db;
    bool json, resume, repeat_given;
    bool ci_best_effort; /* --ci-best-effort: a point capped by --repeat is not a failure */
    FILE *log;           /* progress lines */
};

/* Takes "--name V" or "--name=V"; returns the value or NULL. */
static const char *opt_value(const char *name, int argc, char **argv, int *i)
{
    size_t n = strlen(name);

    if (!strncmp(argv[*i], name, n) && argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (strcmp(argv[*i], name))
        return NULL;
    if (*i + 1 >= argc) {
        cli_opt_no_value(name, "sweep");
        return "";
    }
    return argv[++*i];
}

static int sweep_opt(struct sweep_cli *sc, int argc, char **argv, int *i)
{
    struct sweep_def *d = &sc->d;
    const char *v;
    char err[320];

    if ((v = opt_value("--vary", argc, argv, i))) {
        if (!*v)
            return -1;
        if (d->nvary >= SWEEP_MAX_VARY) {
            cli_error("too many --vary options: at most %d", SWEEP_MAX_VARY);
            return -1;
        }
        if (sweep_parse_vary(v, &d->vary[d->nvary], err, sizeof(err))) {
            cli_error("%s", err);
            return -1;
        }
        d->nvary++;
    } else if ((v = opt_value("--repeat", argc, argv, i))) {
        sc->repeat_given = true;
        return !*v || cli_parse_u32("--repeat", v, 1, 1000, &d->repeat) ? -1 : 0;
    } else if ((v = opt_value("--ci", argc, argv, i))) {
        if (!*v || sweep_parse_ci(v, &d->ci_level, &d->ci_pct, err, sizeof(err))) {
            if (*v)
                cli_error("%s", err);
            return -1;
        }
    } else if ((v = opt_value("--metric", argc, argv, i))) {
        if (!*v || !metric_find(v)) {
            if (*v)
                cli_error("unknown metric '%s' for --metric: e.g. throughput_bps, "
                          "transactions_per_s, latency_p99_us (docs/history.md lists them)",
                          v);
            return -1;
        }
        snprintf(d->metric, sizeof(d->metric), "%s", v);
    } else if ((v = opt_value("--db", argc, argv, i))) {
        if (!*v)
            return -1;
        sc->db = v;
    } else {
        return 1; /* not ours */
    }
    return 0;
}

/* argv[0] is "sweep", argv[1] the test. */
static int parse_sweep(int argc, char **argv, struct sweep_cli *sc)
{
    struct sweep_def *d = &sc->d;
    int rc, clients = 0;

    memset(sc, 0, sizeof(*sc));
    d->repeat = 1;
    d->ci_level = 0.95;
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        cli_help_sweep(argc < 2 ? stderr : stdout);
        return argc < 2 ? -1 : 1;
    }
    sc->kind = test_kind_command(argv[1]);
    if (!sc->kind) {
        char names[64];
        test_kind_commands(names, sizeof(names));
        cli_error("unknown test '%s' for sweep: use %s", argv[1], names);
        return -1;
    }
    d->kind = sc->kind->test;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            cli_help_sweep(stdout);
            return 1;
        }
        if (!strcmp(a, "-J") || !strcmp(a, "--json")) {
            sc->json = true;
            continue;
        }
        if (!strcmp(a, "--resume")) {
            sc->resume = true;
            continue;
        }
        if (!strcmp(a, "--ci-best-effort")) {
            sc->ci_best_effort = true;
            continue;
        }
        if ((!strcmp(a, "-c") || !strncmp(a, "--client", 8)) && ++clients > 1) {
            cli_error("a sweep runs against one server: give -c once");
            return -1;
        }
        rc = sweep_opt(sc, argc, argv, &i);
        if (rc < 0)
            return -1;
        if (rc == 0)
            continue;
        if (d->nbase >= SWEEP_MAX_ARGS || strlen(a) >= sizeof(d->base[0])) {
            cli_error("too many or too long test options for a sweep (at most %d)", SWEEP_MAX_ARGS);
            return -1;
        }
        snprintf(d->base[d->nbase++], sizeof(d->base[0]), "%s", a);
    }
    if (!d->nvary) {
        cli_error("a sweep needs at least one --vary NAME=V1,V2,...: see 'netrig help sweep'");
        return -1;
    }
    if (!sweep_npoints(d)) {
        cli_error("the --vary lists make more than %d points: vary fewer values", SWEEP_MAX_POINTS);
        return -1;
    }
    if (sc->ci_best_effort && d->ci_pct <= 0) {
        cli_error("--ci-best-effort applies to a sweep with --ci LEVEL,WIDTH%%: add --ci, or "
                  "drop it");
        return -1;
    }
    if (d->ci_pct > 0 && !sc->repeat_given)
        d->repeat = 10;
    if (!d->metric[0])
        snprintf(d->metric, sizeof(d->metric), "%s", metric_primary(params_test_name(d->kind)));
    return 0;
}

/* Parses point idx's command line into o; prints the parser's error with the point named. */
static int point_opts(const struct sweep_cli *sc, uint32_t idx, struct client_opts *o)
{
    char **av, label[512];
    int ac, rc;

    if (sweep_point_argv(&sc->d, idx, &ac, &av)) {
        cli_error("out of memory building sweep point %u", idx + 1);
        return -1;
    }
    rc = cli_measure_parse(sc->kind, ac, av, o, "sweep");
    sweep_free_argv(ac, av);
    if (rc == -2) /* an option no point can apply: said once, without the point */
        return -1;
    if (rc) {
        sweep_point_label(&sc->d, idx, label, sizeof(label));
        cli_error("sweep point %u (%s) has invalid options: see above", idx + 1, label);
        return -1;
    }
    return 0;
}

/* Every point must parse before anything runs. */
static int check_points(const struct sweep_cli *sc, bool *need_server, uint32_t *max_flows)
{
    struct client_opts *o = malloc(sizeof(*o));
    uint32_t n = sweep_npoints(&sc->d);
    int rc = o ? 0 : -1;

    *need_server = false;
    *max_flows = 1;
    for (uint32_t i = 0; !rc && i < n; i++) {
        rc = point_opts(sc, i, o);
        if (!rc && !o->host[0])
            *need_server = true;
        if (!rc && params_total_flows(&o->p) > *max_flows)
            *max_flows = params_total_flows(&o->p);
    }
    free(o);
    return rc;
}

static void raise_fd_limit(uint32_t flows)
{
    struct rlimit rl;
    rlim_t need = 2 * (rlim_t)flows + 80;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < need) {
        rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* ---- running ---- */

struct sweep_run {
    struct sweep_cli *sc;
    struct store *st;
    int64_t id;
    uint32_t npoints;
    struct loopsrv srv; /* the built-in loopback server, shared by every point */
    struct hostsnap *hs;
    struct client_opts o;
    _Atomic int *stop;
};

static void progress(struct sweep_run *sr, const struct store_sweep_point *pt, int64_t run_id,
                     double v)
{
    const struct metric_def *d = metric_find(sr->sc->d.metric);
    char label[512], val[48], mean[48];

    sweep_point_label(&sr->sc->d, pt->idx, label, sizeof(label));
    metric_format(d, v, val, sizeof(val));
    metric_format(d, pt->mean, mean, sizeof(mean));
    fprintf(sr->sc->log, "[%u/%u %s] run %u (id %lld): %s; mean %s", pt->idx + 1, sr->npoints,
            label, pt->runs, (long long)run_id, val, mean);
    if (pt->runs > 1 && pt->mean != 0)
        fprintf(sr->sc->log, " +-%.2f%%",
                100 * pt->ci_half / (pt->mean < 0 ? -pt->mean : pt->mean));
    if (!strcmp(pt->status, "done") &&
        !sweep_ci_reached(sr->sc->d.ci_pct, pt->runs, pt->mean, pt->ci_half))
        fprintf(sr->sc->log, " (stopped at --repeat %u: the CI target +-%.4g%% was not reached)\n",
                sr->sc->d.repeat, sr->sc->d.ci_pct);
    else
        fprintf(sr->sc->log, "%s\n", strcmp(pt->status, "done") ? "" : " (done)");
    fflush(sr->sc->log);
}

/* Stores a run with its point's new state in one transaction. */
static int store_rep(struct sweep_run *sr, struct store_sweep_point *pt, const struct run_result *r,
                     int64_t *run_id, char *err, size_t errlen)
{
    double *vals = NULL;
    size_t n = 0;
    int rc = store_begin(sr->st, err, errlen);

    if (!rc)
        rc = store_add_run(sr->st, r, sr->hs, pt->id, run_id, err, errlen);
    if (!rc && store_sweep_point_values(sr->st, pt->id, sr->sc->d.metric, &vals, &n))
        rc = -EIO, snprintf(err, errlen, "cannot read the sweep point back");
    if (!rc) {
        bool done = sweep_point_done(&sr->sc->d, vals, n, &pt->mean, &pt->ci_half);
        pt->runs = (uint32_t)n;
        snprintf(pt->status, sizeof(pt->status), "%s", done ? "done" : "pending");
        rc = store_sweep_point_update(sr->st, pt, err, errlen);
    }
    free(vals);
    if (!rc)
        return store_commit(sr->st, err, errlen);
    store_rollback(sr->st);
    return rc;
}

/* One repetition: 0 stored, 1 interrupted (nothing stored), -1 failed (error printed). */
static int run_once(struct sweep_run *sr, struct store_sweep_point *pt)
{
    struct client_opts *o = &sr->o;
    struct run_result r;
    char err[512], label[512];
    int64_t run_id = 0;
    double v = 0;
    bool bad;
    int rc;

    if (point_opts(sr->sc, pt->idx, o))
        return -1;
    if (!o->host[0]) {
        snprintf(o->host, sizeof(o->host), "%s", sr->srv.host);
        o->port = sr->srv.port;
    }
    o->observer = report_text_quiet_observer(); /* nothing printed while it runs */
    sweep_point_label(&sr->sc->d, pt->idx, label, sizeof(label));
    if (o->p.title[0])
        snprintf(o->p.title + strlen(o->p.title), sizeof(o->p.title) - strlen(o->p.title), " %s",
                 label);
    else
        snprintf(o->p.title, sizeof(o->p.title), "sweep %lld: %s", (long long)sr->id, label);
    rc = client_run(o, sr->stop, &r, err, sizeof(err));
    if (rc < 0) {
        cli_error("sweep point %u (%s): %s", pt->idx + 1, label, err);
        return -1;
    }
    if (*sr->stop) {
        result_fini(&r);
        return 1;
    }
    hostsnap_take(NULL, sr->hs);
    rc = store_rep(sr, pt, &r, &run_id, err, sizeof(err));
    bad = rc != 0 || r.partial;
    if (rc) {
        cli_error("%s", err);
    } else if (r.partial) {
        cli_error("sweep point %u (%s): run %lld ended early (%s); it is kept but not counted",
                  pt->idx + 1, label, (long long)run_id, r.error);
    } else if (store_run_metric(sr->st, run_id, sr->sc->d.metric, &v)) {
        cli_error("sweep point %u (%s): run %lld has no %s: choose another --metric", pt->idx + 1,
                  label, (long long)run_id, sr->sc->d.metric);
        bad = true;
    } else {
        progress(sr, pt, run_id, v);
    }
    result_fini(&r);
    return bad ? -1 : 0;
}

/* Repeats a point until it is done: 0, 1 interrupted, -1 failed. */
static int run_point(struct sweep_run *sr, struct store_sweep_point *pt)
{
    char err[512];

    while (strcmp(pt->status, "done")) {
        double *vals = NULL;
        size_t n = 0;
        int rc;

        if (store_sweep_point_values(sr->st, pt->id, sr->sc->d.metric, &vals, &n)) {
            cli_error("cannot read sweep point %u back from the history", pt->idx + 1);
            return -1;
        }
        if (sweep_point_done(&sr->sc->d, vals, n, &pt->mean, &pt->ci_half)) {
            /* finished by the runs already stored (a resumed sweep) */
            pt->runs = (uint32_t)n;
            snprintf(pt->status, sizeof(pt->status), "done");
            free(vals);
            if (store_sweep_point_update(sr->st, pt, err, sizeof(err))) {
                cli_error("%s", err);
                return -1;
            }
            return 0;
        }
        free(vals);
        if (*sr->stop)
            return 1;
        rc = run_once(sr, pt);
        if (rc)
            return rc;
    }
    return 0;
}

static int run_points(struct sweep_run *sr)
{
    struct store_sweep_point *pts = NULL;
    uint32_t n = 0;
    char err[512];
    int rc;

    if (store_sweep_points(sr->st, sr->id, &pts, &n, err, sizeof(err))) {
        cli_error("%s", err);
        return -1;
    }
    rc = n == sr->npoints ? 0 : -1;
    if (rc)
        cli_error("sweep %lld has %u points, not %u: the history does not match this command",
                  (long long)sr->id, n, sr->npoints);
    for (uint32_t i = 0; !rc && i < n; i++)
        rc = run_point(sr, &pts[i]);
    free(pts);
    return rc;
}

/* Finds the sweep to resume, or creates a new one. */
static int open_sweep(struct sweep_run *sr)
{
    struct sweep_def *d = &sr->sc->d;
    struct store_sweep sw = {0};
    char *def = sweep_definition(d), err[512], **settings;
    int rc = 0;

    if (!def)
        return -1;
    if (sr->sc->resume) {
        if (store_sweep_find_unfinished(sr->st, def, &sr->id)) {
            cli_error("no unfinished sweep in '%s' matches this command line: run it without "
                      "--resume to start one",
                      store_path(sr->st));
            rc = -1;
        } else {
            fprintf(sr->sc->log, "resuming sweep %lld\n", (long long)sr->id);
        }
        free(def);
        return rc ? rc : store_sweep_set_status(sr->st, sr->id, "running", err, sizeof(err));
    }
    settings = calloc(sr->npoints, sizeof(*settings));
    for (uint32_t i = 0; settings && i < sr->npoints; i++)
        if (!(settings[i] = sweep_point_settings(d, i)))
            rc = -1;
    snprintf(sw.test, sizeof(sw.test), "%s", params_test_name(d->kind));
    snprintf(sw.title, sizeof(sw.title), "%s", sr->o.p.title);
    snprintf(sw.metric, sizeof(sw.metric), "%s", d->metric);
    sw.definition = def;
    sw.repeat_max = d->repeat;
    sw.ci_level = d->ci_level;
    sw.ci_pct = d->ci_pct;
    if (!settings || rc || store_begin(sr->st, err, sizeof(err)) ||
        store_sweep_create(sr->st, &sw, (const char *const *)settings, sr->npoints, &sr->id, err,
                           sizeof(err)) ||
        store_commit(sr->st, err, sizeof(err))) {
        store_rollback(sr->st);
        cli_error("cannot store the sweep: %s", settings ? err : "out of memory");
        rc = -1;
    } else {
        fprintf(sr->sc->log, "sweep %lld: %u points, metric %s\n", (long long)sr->id, sr->npoints,
                d->metric);
    }
    for (uint32_t i = 0; settings && i < sr->npoints; i++)
        free(settings[i]);
    free(settings);
    free(def);
    return rc;
}

int cli_sweep(int argc, char **argv, _Atomic int *stop)
{
    struct sweep_cli *sc = calloc(1, sizeof(*sc));
    struct sweep_run *sr = calloc(1, sizeof(*sr));
    bool need_server = false;
    uint32_t max_flows = 1, missed = 0;
    char err[512];
    int rc = sc && sr ? parse_sweep(argc, argv, sc) : -1;

    if (rc) {
        free(sc);
        free(sr);
        return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    }
    sc->log = sc->json ? stderr : stdout;
    sr->sc = sc;
    sr->stop = stop;
    sr->npoints = sweep_npoints(&sc->d);
    log_setup("netrig", false, LOG_LVL_WARN);
    rc = check_points(sc, &need_server, &max_flows) || point_opts(sc, 0, &sr->o) ? CLI_EXIT_USAGE
                                                                                 : CLI_EXIT_OK;
    sr->hs = rc ? NULL : hostsnap_new();
    if (!rc && (!sr->hs || !(sr->st = cli_history_open(sc->db, true)) || open_sweep(sr)))
        rc = CLI_EXIT_FAIL;
    raise_fd_limit(max_flows);
    if (!rc && need_server && loopsrv_start(&sr->srv, 0, err, sizeof(err))) {
        cli_error("%s", err);
        rc = CLI_EXIT_FAIL;
    }
    if (!rc) {
        int run = run_points(sr);
        const char *status = run == 0 ? "done" : "interrupted";
        loopsrv_stop(&sr->srv);
        if (store_sweep_set_status(sr->st, sr->id, status, err, sizeof(err)))
            cli_error("%s", err);
        if (run)
            fprintf(stderr,
                    "netrig: sweep %lld %s: every finished run is stored; the same "
                    "command with --resume finishes it\n",
                    (long long)sr->id, run > 0 ? "interrupted" : "stopped");
        cli_sweep_show(sr->st, sr->id, sc->json, stdout, &missed);
        rc = run == 0 ? CLI_EXIT_OK : *stop ? CLI_EXIT_INTERRUPTED : CLI_EXIT_FAIL;
        if (rc == CLI_EXIT_OK && missed && !sc->ci_best_effort) {
            cli_error("sweep %lld: %u point%s missed the confidence target (see the warning): "
                      "exit 1; --ci-best-effort accepts them",
                      (long long)sr->id, missed, missed == 1 ? "" : "s");
            rc = CLI_EXIT_FAIL;
        }
    }
    loopsrv_stop(&sr->srv);
    store_close(sr->st);
    hostsnap_free(sr->hs);
    free(sr);
    free(sc);
    return rc;
}

/* ---- the summary ---- */

static void settings_label(const char *json, char *buf, size_t len)
{
    cJSON *o = cJSON_Parse(json), *v;
    size_t n = 0;

    buf[0] = '\0';
    cJSON_ArrayForEach(v, o)
    {
        int w = snprintf(buf + n, len - n, "%s%s=%s", n ? " " : "", v->string,
                         cJSON_IsString(v) ? v->valuestring : "?");
        if (w < 0 || (size_t)w >= len - n)
            break;
        n += (size_t)w;
    }
    cJSON_Delete(o);
}

/* Points the repeat cap finished without their CI target (unfinished ones do not count);
 * *widest: the widest of their intervals, in % of the mean. */
static uint32_t ci_missed(const struct store_sweep *sw, const struct store_sweep_point *pts,
                          uint32_t n, double *widest)
{
    uint32_t k = 0;

    *widest = 0;
    for (uint32_t i = 0; i < n; i++) {
        double pct = sweep_ci_pct(pts[i].mean, pts[i].ci_half);
        if (strcmp(pts[i].status, "done") ||
            sweep_ci_reached(sw->ci_pct, pts[i].runs, pts[i].mean, pts[i].ci_half))
            continue;
        k++;
        if (pct > *widest)
            *widest = pct;
    }
    return k;
}

static void ci_warning(const struct store_sweep *sw, uint32_t missed, uint32_t n, double widest,
                       char *buf, size_t len)
{
    snprintf(buf, len,
             "%u of %u points stopped at --repeat %u without their %.4g%% confidence interval "
             "within +-%.4g%% (widest +-%.1f%%): raise --repeat, widen --ci, or accept with "
             "--ci-best-effort",
             missed, n, sw->repeat_max, sw->ci_level * 100, sw->ci_pct, widest);
}

static cJSON *sweep_json(struct store *st, const struct store_sweep *sw,
                         const struct store_sweep_point *pts, uint32_t n)
{
    cJSON *o = cJSON_CreateObject(), *arr;

    cJSON_AddNumberToObject(o, "sweep", (double)sw->id);
    cJSON_AddStringToObject(o, "test", sw->test);
    cJSON_AddStringToObject(o, "title", sw->title);
    cJSON_AddStringToObject(o, "status", sw->status);
    cJSON_AddStringToObject(o, "created_at", sw->created_at);
    cJSON_AddStringToObject(o, "finished_at", sw->finished_at);
    cJSON_AddStringToObject(o, "metric", sw->metric);
    cJSON_AddNumberToObject(o, "repeat", sw->repeat_max);
    cJSON_AddNumberToObject(o, "ci_level", sw->ci_level);
    cJSON_AddNumberToObject(o, "ci_target_pct", sw->ci_pct);
    cJSON_AddItemToObject(o, "definition", cJSON_Parse(sw->definition));
    arr = cJSON_AddArrayToObject(o, "points");
    for (uint32_t i = 0; i < n; i++) {
        cJSON *p = cJSON_CreateObject(), *ids = cJSON_CreateArray();
        int64_t *runs = NULL;
        size_t nr = 0;
        cJSON_AddNumberToObject(p, "index", pts[i].idx);
        cJSON_AddItemToObject(p, "settings", cJSON_Parse(pts[i].settings));
        cJSON_AddStringToObject(p, "status", pts[i].status);
        cJSON_AddNumberToObject(p, "runs", pts[i].runs);
        cJSON_AddNumberToObject(p, "mean", pts[i].mean);
        cJSON_AddNumberToObject(p, "ci_half", pts[i].ci_half);
        cJSON_AddNumberToObject(
            p, "ci_pct",
            pts[i].mean != 0 ? 100 * pts[i].ci_half / (pts[i].mean < 0 ? -pts[i].mean : pts[i].mean)
                             : 0);
        if (!store_sweep_point_runs(st, pts[i].id, &runs, &nr))
            for (size_t k = 0; k < nr; k++)
                cJSON_AddItemToArray(ids, cJSON_CreateNumber((double)runs[k]));
        free(runs);
        cJSON_AddItemToObject(p, "run_ids", ids);
        cJSON_AddBoolToObject(
            p, "ci_reached",
            sweep_ci_reached(sw->ci_pct, pts[i].runs, pts[i].mean, pts[i].ci_half));
        cJSON_AddItemToArray(arr, p);
    }
    {
        cJSON *warn = cJSON_AddArrayToObject(o, "warnings");
        double widest;
        uint32_t missed = ci_missed(sw, pts, n, &widest);
        char text[320];
        if (missed) {
            ci_warning(sw, missed, n, widest, text, sizeof(text));
            cJSON_AddItemToArray(warn, cJSON_CreateString(text));
        }
    }
    return o;
}

static void sweep_text(const struct store_sweep *sw, const struct store_sweep_point *pts,
                       uint32_t n, FILE *out)
{
    const struct metric_def *d = metric_find(sw->metric);
    char label[512], mean[48], half[48];

    double widest;
    uint32_t missed = ci_missed(sw, pts, n, &widest);

    fprintf(out, "sweep %lld: %s, %u point%s, metric %s, %s%s\n", (long long)sw->id, sw->test, n,
            n == 1 ? "" : "s", sw->metric, sw->status,
            missed ? " without the CI target on some points" : "");
    if (sw->ci_pct > 0)
        fprintf(out, "  target: %.4g%% confidence interval within +-%.4g%%, at most %u runs\n",
                sw->ci_level * 100, sw->ci_pct, sw->repeat_max);
    else
        fprintf(out, "  %u run%s per point; +- is the %.4g%% confidence interval\n", sw->repeat_max,
                sw->repeat_max == 1 ? "" : "s", sw->ci_level * 100);
    fprintf(out, "  %5s  %-30s %4s %16s %14s %7s\n", "point", "settings", "runs", "mean", "+-",
            "+-%");
    for (uint32_t i = 0; i < n; i++) {
        settings_label(pts[i].settings, label, sizeof(label));
        if (d) {
            metric_format(d, pts[i].mean, mean, sizeof(mean));
            metric_format(d, pts[i].ci_half, half, sizeof(half));
        }
        fprintf(out, "  %5u  %-30s %4u %16s %14s %6.2f%s\n", pts[i].idx + 1, label, pts[i].runs,
                pts[i].runs ? mean : "-", pts[i].runs > 1 ? half : "-",
                pts[i].mean != 0
                    ? 100 * pts[i].ci_half / (pts[i].mean < 0 ? -pts[i].mean : pts[i].mean)
                    : 0,
                strcmp(pts[i].status, "done") ? " (unfinished)"
                : !sweep_ci_reached(sw->ci_pct, pts[i].runs, pts[i].mean, pts[i].ci_half)
                    ? " (CI target missed)"
                    : "");
    }
    if (missed) {
        char text[320];
        ci_warning(sw, missed, n, widest, text, sizeof(text));
        fprintf(out, "warning: %s\n", text);
    }
}

int cli_sweep_show(struct store *st, long long id, bool json, FILE *out, uint32_t *missed)
{
    struct store_sweep sw = {0};
    struct store_sweep_point *pts = NULL;
    uint32_t n = 0;
    char err[512];
    double widest;

    if (store_sweep_get(st, id, &sw, err, sizeof(err)) ||
        store_sweep_points(st, id, &pts, &n, err, sizeof(err))) {
        cli_error("%s", err);
        store_sweep_free(&sw);
        return -1;
    }
    if (json) {
        cJSON *o = sweep_json(st, &sw, pts, n);
        char *t = cJSON_Print(o);
        if (t)
            fprintf(out, "%s\n", t);
        free(t);
        cJSON_Delete(o);
    } else {
        sweep_text(&sw, pts, n, out);
    }
    if (missed)
        *missed = ci_missed(&sw, pts, n, &widest);
    free(pts);
    store_sweep_free(&sw);
    return 0;
}
