/* cli_history: the history commands history, show and tag (export is cli_export.c), what
 * they share (cli_history.h), and saving a measurement's run to the history. */
#include "cli.h"
#include "test_kind.h"
#include "cli_history.h"

#include "hostsnap.h"
#include "load_result.h"
#include "metric.h"
#include "store.h"
#include "store_run.h"
#include "store_sweep.h"
#include "units.h"
#include "wrap.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char cli_history_help_db[] =
    "      --db PATH         history database (default $XDG_DATA_HOME/netrig/history.db,\n"
    "                        else ~/.local/share/netrig/history.db)\n";

const char cli_history_help_runs[] =
    "RUN names one run or a set: an id (12), a range (10-14), a list (3,5,9), a tag\n"
    "('netrig tag'), 'last' (the newest run), sweep:N (every run of sweep N), mesh:N\n"
    "(every run of mesh N) or group:N (the runs of one -c A -c B or --from command).\n";

void cli_help_history(FILE *out)
{
    fprintf(out,
            "usage: netrig history [--last N] [--title PATTERN] [--tag NAME] [--since DATE]\n"
            "                      [--sweeps|--meshes] [-J] [--db PATH]\n"
            "\n"
            "The stored runs, oldest first, with their main result.\n"
            "\n"
            "      --last N          the newest N runs (default 20; 0 = all)\n"
            "      --title PATTERN   titles matching a glob (bbr*), or containing PATTERN\n"
            "      --tag NAME        runs tagged NAME ('netrig tag', diagnose --tag)\n"
            "      --since DATE      runs started since DATE (UTC): 2026-11-30, 2026-11-30T15:00,\n"
            "                        or a time ago: 30m, 12h, 7d, 2w\n"
            "      --sweeps          list the stored sweeps instead\n"
            "      --meshes          list the stored mesh plans instead\n"
            "  -J, --json            a JSON array: id, test, title, started_at, summary, ...\n");
    fputs(cli_history_help_db, out);
}

void cli_help_show(FILE *out)
{
    fprintf(out,
            "usage: netrig show RUN|sweep:N|mesh:N|group:N [-J] [--db PATH]\n"
            "\n"
            "One stored run: parameters, summary, flows, tags and the host snapshot. -J prints\n"
            "the run's -J document with its id, tags, metrics and host snapshot added. sweep:N\n"
            "shows a sweep's points; mesh:N a mesh plan's matrix (-J: every cell); group:N the\n"
            "targets of a -c A -c B or --from command, their runs and totals.\n\n");
    fputs(cli_history_help_db, out);
    fputs(cli_history_help_runs, out);
}

void cli_help_tag(FILE *out)
{
    fprintf(out,
            "usage: netrig tag [-d] RUN NAME [--db PATH]\n"
            "\n"
            "Names a run or a set of runs, e.g. 'netrig tag 10-14 before', so 'netrig compare\n"
            "before after' compares the sets. A name starts with a letter and holds letters,\n"
            "digits, '.', '_' and '-'.\n"
            "\n"
            "  -d, --delete          remove the tag from those runs instead\n");
    fputs(cli_history_help_db, out);
    fputs(cli_history_help_runs, out);
}

/* ---- opening and saving ---- */

struct store *cli_history_open(const char *db, bool create)
{
    char path[4096], err[512];
    struct store *st;

    if (!db) {
        if (store_default_path(path, sizeof(path), create, err, sizeof(err))) {
            cli_error("%s", err);
            return NULL;
        }
        db = path;
    }
    st = store_open(db, create, err, sizeof(err));
    if (!st)
        cli_error("%s", err);
    return st;
}

struct store *cli_history_read(const char *db)
{
    char path[4096], err[1024];
    struct store *st;

    if (!db) {
        if (store_default_path(path, sizeof(path), false, err, sizeof(err))) {
            cli_error("%s", err);
            return NULL;
        }
        db = path;
    }
    st = store_open_read(db, err, sizeof(err));
    if (!st)
        cli_error("%s", err);
    else if (store_notice(st)[0])
        cli_error("note: %s", store_notice(st));
    return st;
}

/* ---- shared option parsing ---- */

static int field(const char *s, int at, int n)
{
    int v = 0;

    for (int i = 0; i < n; i++)
        v = v * 10 + (s[at + i] - '0');
    return v;
}

/* "2026-11-30", "2026-11-30T15:00[:05][Z]" (UTC, T or a space) or "30m", "12h", "7d", "2w" ago. */
static int parse_since(const char *arg, char *out, size_t len)
{
    static const char tmpl[] = "0000-00-00T00:00:00";
    size_t l = strlen(arg), body = l > 0 && arg[l - 1] == 'Z' ? l - 1 : l;
    char unit = 0;
    long long v;
    int n = 0, y, mo, d, h = 0, mi = 0, sec = 0;

    if (sscanf(arg, "%lld%c%n", &v, &unit, &n) == 2 && (size_t)n == l && v >= 0 &&
        isdigit((unsigned char)arg[0]) && strchr("smhdw", unit)) {
        long long mult = unit == 's'   ? 1
                         : unit == 'm' ? 60
                         : unit == 'h' ? 3600
                         : unit == 'd' ? 86400
                                       : 604800;
        store_time_iso((long long)time(NULL) - v * mult, out, len);
        return 0;
    }
    if (body != 10 && body != 16 && body != 19)
        goto bad;
    if (body == 10 && l != 10)
        goto bad;
    for (size_t i = 0; i < body; i++) {
        bool ok = tmpl[i] == '0'   ? isdigit((unsigned char)arg[i])
                  : tmpl[i] == 'T' ? (arg[i] == 'T' || arg[i] == ' ')
                                   : arg[i] == tmpl[i];
        if (!ok)
            goto bad;
    }
    y = field(arg, 0, 4), mo = field(arg, 5, 2), d = field(arg, 8, 2);
    if (body >= 16)
        h = field(arg, 11, 2), mi = field(arg, 14, 2);
    if (body == 19)
        sec = field(arg, 17, 2);
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
        goto bad;
    snprintf(out, len, "%04d-%02d-%02dT%02d:%02d:%02dZ", y, mo, d, h, mi, sec);
    return 0;
bad:
    cli_error("invalid date '%s' for --since: use 2026-11-30, 2026-11-30T15:00[:SS][Z] (UTC) "
              "or a time ago such as 30m, 12h, 7d",
              arg);
    return -1;
}

static int hist_opt(int c, const char *arg, struct hist_cli *hc)
{
    uint32_t n;

    switch (c) {
    case HIST_OPT_DB: hc->db = arg; return 0;
    case 'J': hc->json = true; return 0;
    case HIST_OPT_CSV: hc->csv = true; return 0;
    case 'd': hc->del = true; return 0;
    case HIST_OPT_SWEEPS: hc->sweeps = true; return 0;
    case HIST_OPT_MESHES: hc->meshes = true; return 0;
    case HIST_OPT_SAMPLES: hc->samples = true; return 0;
    case HIST_OPT_LAST:
        if (cli_parse_u32("--last", arg, 0, UINT32_MAX, &n))
            return -1;
        hc->f.last = n;
        return 0;
    case HIST_OPT_TITLE: hc->f.title = arg; return 0;
    case HIST_OPT_TAG: hc->f.tag = arg; return 0;
    case HIST_OPT_SINCE:
        if (parse_since(arg, hc->since, sizeof(hc->since)))
            return -1;
        hc->f.since = hc->since;
        return 0;
    default: return -1;
    }
}

static const struct option hist_long[] = {
    {"db", required_argument, NULL, HIST_OPT_DB},
    {"json", no_argument, NULL, 'J'},
    {"last", required_argument, NULL, HIST_OPT_LAST},
    {"title", required_argument, NULL, HIST_OPT_TITLE},
    {"tag", required_argument, NULL, HIST_OPT_TAG},
    {"since", required_argument, NULL, HIST_OPT_SINCE},
    {"csv", no_argument, NULL, HIST_OPT_CSV},
    {"delete", no_argument, NULL, 'd'},
    {"sweeps", no_argument, NULL, HIST_OPT_SWEEPS},
    {"meshes", no_argument, NULL, HIST_OPT_MESHES},
    {"samples", no_argument, NULL, HIST_OPT_SAMPLES},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* Options every history command shares; `allowed` lists the ones cmd takes (as codes). */
int cli_history_parse(const char *cmd, int argc, char **argv, const int *allowed,
                      void (*help)(FILE *), struct hist_cli *hc)
{
    int c;

    memset(hc, 0, sizeof(*hc));
    hc->f.last = 20;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":Jdh", hist_long, NULL)) != -1) {
        bool ok = false;
        if (c == 'h') {
            help(stdout);
            return 1;
        }
        for (const int *a = allowed; *a; a++)
            ok |= *a == c;
        if (c == '?' || c == ':' || !ok)
            return cli_opt_error(c, argv, cmd);
        if (hist_opt(c, optarg, hc))
            return -1;
    }
    return 0;
}

/* ---- history ---- */

static void primary(struct store *st, const struct store_run *r, char *buf, size_t len)
{
    const struct metric_def *d = metric_find(metric_primary(r->test));
    double v, p99;

    buf[0] = '\0';
    if (!d || store_run_metric(st, r->id, d->name, &v))
        return;
    if (!strcmp(r->test, "load")) { /* the latency increase under load and its band */
        snprintf(buf, len, "%+.1f ms (%s)", load_ms_shown(v), load_band_grade(load_band_of(v)));
        return;
    }
    metric_format(d, v, buf, len);
    if (!test_kind_named_is(r->test, TEST_KIND_BULK) &&
        !store_run_metric(st, r->id, "latency_p99_us", &p99)) {
        size_t l = strlen(buf);
        snprintf(buf + l, len - l, " p99 %.1f us", p99);
    }
}

/* Was run id measured with --skip-rx-copy (throughput without the receiver's copy)? */
static bool rx_copy_skipped(struct store *st, int64_t id)
{
    char *text = store_run_params(st, id);
    cJSON *p = text ? cJSON_Parse(text) : NULL;
    bool skipped = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "skip_rx_copy"));

    cJSON_Delete(p);
    free(text);
    return skipped;
}

struct list_ctx {
    struct store *st;
    cJSON *arr;
    FILE *out;
};

static cJSON *tags_json(const char *tags)
{
    cJSON *a = cJSON_CreateArray();
    char *copy = strdup(tags), *save = NULL;

    for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save))
        cJSON_AddItemToArray(a, cJSON_CreateString(t));
    free(copy);
    return a;
}

static cJSON *metrics_json(struct store *st, int64_t id)
{
    struct metric_value m[METRIC_MAX];
    size_t n = store_run_metrics(st, id, m, METRIC_MAX);
    cJSON *o = cJSON_CreateObject();

    for (size_t i = 0; i < n; i++)
        cJSON_AddNumberToObject(o, m[i].def->name, m[i].value);
    return o;
}

/* The group a run is in: {"id", "kind", "target", "from"}. */
static void add_group(cJSON *o, const struct store_run *r)
{
    cJSON *g;

    if (!r->group)
        return;
    g = cJSON_AddObjectToObject(o, "group");
    cJSON_AddNumberToObject(g, "id", (double)r->group);
    cJSON_AddStringToObject(g, "kind", r->group_kind);
    cJSON_AddNumberToObject(g, "target", r->group_idx);
    cJSON_AddStringToObject(g, "from", r->group_source);
}

/* The mesh cell a run is: {"id", "source", "destination"}. */
static void add_mesh(cJSON *o, const struct store_run *r)
{
    cJSON *m;

    if (!r->mesh)
        return;
    m = cJSON_AddObjectToObject(o, "mesh");
    cJSON_AddNumberToObject(m, "id", (double)r->mesh);
    cJSON_AddStringToObject(m, "source", r->mesh_source);
    cJSON_AddStringToObject(m, "destination", r->mesh_destination);
}

static int list_one(const struct store_run *r, void *arg)
{
    struct list_ctx *lc = arg;
    char res[96], kind[32], grp[256] = "";

    if (lc->arr) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "id", (double)r->id);
        cJSON_AddStringToObject(o, "test", r->test);
        cJSON_AddBoolToObject(o, "udp", r->udp);
        cJSON_AddStringToObject(o, "role", r->role);
        cJSON_AddStringToObject(o, "title", r->title);
        cJSON_AddStringToObject(o, "started_at", r->started_at);
        cJSON_AddStringToObject(o, "peer", r->peer);
        cJSON_AddBoolToObject(o, "partial", r->partial);
        cJSON_AddBoolToObject(o, "receiver_copy_counted", !rx_copy_skipped(lc->st, r->id));
        cJSON_AddItemToObject(o, "tags", tags_json(r->tags));
        if (r->sweep_point)
            cJSON_AddNumberToObject(o, "sweep_point", (double)r->sweep_point);
        add_mesh(o, r);
        add_group(o, r);
        cJSON_AddItemToObject(o, "summary", metrics_json(lc->st, r->id));
        cJSON_AddItemToArray(lc->arr, o);
        return 0;
    }
    primary(lc->st, r, res, sizeof(res));
    if (res[0] && rx_copy_skipped(lc->st, r->id) && strlen(res) + 12 < sizeof(res))
        memcpy(res + strlen(res), " (rx-nocopy)", 13); /* the receiver's copy not counted */
    snprintf(kind, sizeof(kind), "%s%s%s", r->test, r->udp ? "/udp" : "",
             strcmp(r->role, "server") ? "" : " (served)");
    if (r->group)
        snprintf(grp, sizeof(grp), "%sgroup:%lld%s%.200s", r->title[0] || r->tags[0] ? " " : "",
                 (long long)r->group, r->group_source[0] ? " from " : "", r->group_source);
    fprintf(lc->out, "%6lld  %.10s %.8s  %-16s %-26s %s%s%s%s%s%s\n", (long long)r->id,
            r->started_at, r->started_at[10] ? r->started_at + 11 : "", kind, res,
            r->partial ? "(partial) " : "", r->title, r->tags[0] ? " [" : "", r->tags,
            r->tags[0] ? "]" : "", grp);
    return 0;
}

static int list_sweep(const struct store_sweep *sw, void *arg)
{
    FILE *out = arg;

    fprintf(out, "%6lld  %.10s %.8s  %-8s %-12s %-16s %s\n", (long long)sw->id, sw->created_at,
            sw->created_at + 11, sw->test, sw->status, sw->metric, sw->title);
    return 0;
}

void cli_history_print_json(cJSON *doc)
{
    char *t = cJSON_Print(doc);

    if (t)
        printf("%s\n", t);
    free(t);
    cJSON_Delete(doc);
}

int cli_history(int argc, char **argv, _Atomic int *stop)
{
    static const int allowed[] = {HIST_OPT_DB,
                                  'J',
                                  HIST_OPT_LAST,
                                  HIST_OPT_TITLE,
                                  HIST_OPT_TAG,
                                  HIST_OPT_SINCE,
                                  HIST_OPT_SWEEPS,
                                  HIST_OPT_MESHES,
                                  0};
    struct hist_cli hc;
    struct list_ctx lc = {.out = stdout};
    char err[512];
    int rc = cli_history_parse("history", argc, argv, allowed, cli_help_history, &hc);

    (void)stop;
    if (rc)
        return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    if (optind < argc) {
        cli_error("unexpected argument '%s' for history: filters are --last, --title, --tag, "
                  "--since",
                  argv[optind]);
        return CLI_EXIT_USAGE;
    }
    if ((hc.sweeps || hc.meshes) && (hc.f.title || hc.f.tag || hc.f.since)) {
        cli_error("--title, --tag and --since filter runs: they do not go with %s",
                  hc.sweeps ? "--sweeps" : "--meshes");
        return CLI_EXIT_USAGE;
    }
    lc.st = cli_history_read(hc.db);
    if (!lc.st)
        return CLI_EXIT_FAIL;
    if (hc.meshes) {
        rc = cli_mesh_list(lc.st, hc.json, stdout);
        store_close(lc.st);
        return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    }
    if (hc.sweeps) {
        printf("%6s  %-19s  %-8s %-12s %-16s %s\n", "sweep", "created (UTC)", "test", "status",
               "metric", "title");
        rc = store_sweep_list(lc.st, list_sweep, stdout);
        store_close(lc.st);
        return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    }
    if (hc.json)
        lc.arr = cJSON_CreateArray();
    else
        printf("%6s  %-19s  %-16s %-26s %s\n", "id", "started (UTC)", "test", "result",
               "title [tags]");
    rc = store_run_list(lc.st, &hc.f, list_one, &lc, err, sizeof(err));
    if (rc)
        cli_error("%s", err);
    else if (lc.arr)
        cli_history_print_json(lc.arr), lc.arr = NULL;
    cJSON_Delete(lc.arr);
    store_close(lc.st);
    return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/* ---- show ---- */

/* Resolves the run-set arguments argv[from..argc-1]; prints the error. */
int cli_history_resolve(struct store *st, int argc, char **argv, int from, int64_t **ids, size_t *n)
{
    int64_t *all = NULL, *part;
    size_t total = 0, np;
    char err[512];

    for (int i = from; i < argc; i++) {
        if (store_run_resolve(st, argv[i], &part, &np, err, sizeof(err))) {
            cli_error("%s", err);
            free(all);
            return -1;
        }
        int64_t *grown = realloc(all, (total + np) * sizeof(*all));
        if (!grown) {
            free(part);
            free(all);
            cli_error("out of memory resolving runs");
            return -1;
        }
        all = grown;
        memcpy(all + total, part, np * sizeof(*part));
        total += np;
        free(part);
    }
    *ids = all;
    *n = total;
    return 0;
}

static cJSON *snap_json(const struct hostsnap *hs)
{
    cJSON *o = cJSON_CreateObject();

    for (uint32_t i = 0; hs && i < hs->n; i++)
        cJSON_AddStringToObject(o, hs->e[i].key, hs->e[i].value);
    return o;
}

/* "host": the run's own side (the client's; the server's for a run a daemon served);
 * "peer_host": the other side's, or null with "peer_host_note" saying why. */
static void hosts_json(cJSON *doc, struct store *st, const struct store_run *r)
{
    struct hostsnap *hs = hostsnap_new();
    bool served = !strcmp(r->role, "server");
    char note[200] = "";

    if (hs)
        store_run_host_side(st, r->id, served ? "server" : "client", hs, note, sizeof(note));
    cJSON_AddItemToObject(doc, "host", snap_json(hs));
    if (hs &&
        store_run_host_side(st, r->id, served ? "client" : "server", hs, note, sizeof(note)) == 1)
        cJSON_AddItemToObject(doc, "peer_host", snap_json(hs));
    else
        cJSON_AddNullToObject(doc, "peer_host");
    cJSON_AddStringToObject(doc, "peer_host_note", note);
    hostsnap_free(hs);
}

/* The stored document with what the history knows about the run added. */
cJSON *cli_history_run_json(struct store *st, const struct store_run *r)
{
    char *text = store_run_document(st, r->id);
    cJSON *doc = text ? cJSON_Parse(text) : NULL;

    free(text);
    if (!cJSON_IsObject(doc)) {
        cJSON_Delete(doc);
        doc = cJSON_CreateObject();
    }
    cJSON_AddNumberToObject(doc, "id", (double)r->id);
    cJSON_AddStringToObject(doc, "role", r->role);
    cJSON_AddItemToObject(doc, "tags", tags_json(r->tags));
    if (r->sweep_point)
        cJSON_AddNumberToObject(doc, "sweep_point", (double)r->sweep_point);
    add_mesh(doc, r);
    add_group(doc, r);
    cJSON_AddItemToObject(doc, "metrics", metrics_json(st, r->id));
    hosts_json(doc, st, r);
    return doc;
}

static void show_params(struct store *st, int64_t id, FILE *out)
{
    char *text = store_run_document(st, id), line[8192];
    cJSON *doc = text ? cJSON_Parse(text) : NULL, *p, *v;
    size_t n = 0;

    free(text);
    p = cJSON_GetObjectItemCaseSensitive(doc, "params");
    line[0] = '\0';
    cJSON_ArrayForEach(v, p)
    {
        if (n >= sizeof(line) || (cJSON_IsString(v) && !v->valuestring[0]))
            continue;
        if (cJSON_IsString(v))
            n += (size_t)snprintf(line + n, sizeof(line) - n, " %s=%s", v->string, v->valuestring);
        else if (cJSON_IsBool(v))
            n += (size_t)snprintf(line + n, sizeof(line) - n, " %s=%s", v->string,
                                  cJSON_IsTrue(v) ? "yes" : "no");
        else
            n += (size_t)snprintf(line + n, sizeof(line) - n, " %s=%.10g", v->string,
                                  v->valuedouble);
    }
    fputs("parameters:\n", out);
    wrap_print(out, NULL, 2, line);
    cJSON_Delete(doc);
}

static int show_flow(const struct store_flow *f, void *arg)
{
    FILE *out = arg;
    char rt[32];

    units_format_rate(f->throughput_bps, rt, sizeof(rt));
    fprintf(out, "  %5u %-17s %15llu %14s", f->flow, f->direction, (unsigned long long)f->bytes,
            rt);
    if (f->retransmits >= 0)
        fprintf(out, " %8lld %8lld %6lld", (long long)f->retransmits, (long long)f->rtt_us,
                (long long)f->cwnd);
    if (f->transactions >= 0)
        fprintf(out, " %12lld", (long long)f->transactions);
    fputc('\n', out);
    return 0;
}

static int count_iv(const struct store_interval *iv, void *arg)
{
    (void)iv;
    (*(uint32_t *)arg)++;
    return 0;
}

static void show_text(struct store *st, const struct store_run *r, FILE *out)
{
    struct metric_value m[METRIC_MAX];
    size_t n = store_run_metrics(st, r->id, m, METRIC_MAX);
    struct hostsnap *hs = hostsnap_new();
    uint32_t nci = 0, nsi = 0;
    char v[64];

    fprintf(out, "run %lld: %s%s%s, started %s\n", (long long)r->id, r->test,
            r->udp ? " (udp)" : "",
            strcmp(r->role, "server") ? "" : ", served by this host's daemon", r->started_at);
    fprintf(out, "  %s %s, netrig %s / %s\n", strcmp(r->role, "server") ? "server" : "client",
            r->peer, r->client_version[0] ? r->client_version : "-",
            r->server_version[0] ? r->server_version : "-");
    if (r->title[0])
        fprintf(out, "  title: %s\n", r->title);
    if (r->tags[0])
        fprintf(out, "  tags: %s\n", r->tags);
    if (r->sweep_point)
        fprintf(out, "  sweep point %lld\n", (long long)r->sweep_point);
    if (r->mesh)
        fprintf(out, "  mesh %lld: %s -> %s (netrig show mesh:%lld)\n", (long long)r->mesh,
                r->mesh_source, r->mesh_destination, (long long)r->mesh);
    if (r->group && r->group_source[0])
        fprintf(out, "  group %lld: run by the daemon at %s (netrig show group:%lld)\n",
                (long long)r->group, r->group_source, (long long)r->group);
    else if (r->group)
        fprintf(out,
                "  group %lld: target %u of a test against several servers (netrig show "
                "group:%lld)\n",
                (long long)r->group, r->group_idx, (long long)r->group);
    if (r->partial)
        fprintf(out, "  PARTIAL: %s\n", r->error);
    if (rx_copy_skipped(st, r->id))
        fputs("  NOTE: --skip-rx-copy: throughput and CPU leave out the receiver's copy\n", out);
    show_params(st, r->id, out);
    fputs("summary:\n", out);
    for (size_t i = 0; i < n; i++) {
        metric_format(m[i].def, m[i].value, v, sizeof(v));
        fprintf(out, "  %-24s %16s   (%s)\n", m[i].def->label, v, m[i].def->name);
    }
    fprintf(out, "flows:\n  %5s %-17s %15s %14s %8s %8s %6s\n", "id", "direction", "bytes", "rate",
            "retr", "rtt_us", "cwnd");
    store_run_flows(st, r->id, show_flow, out);
    store_run_intervals(st, r->id, "client", count_iv, &nci);
    store_run_intervals(st, r->id, "server", count_iv, &nsi);
    fprintf(out, "intervals: %u client, %u server (netrig export %lld --json)\n", nci, nsi,
            (long long)r->id);
    for (int side = 0; hs && side < 2; side++) {
        const char *name = side ? "server" : "client";
        char note[200];
        if (store_run_host_side(st, r->id, name, hs, note, sizeof(note)) != 1) {
            fprintf(out, "%s host: not recorded (%s)\n", name, note);
            continue;
        }
        fprintf(out, "%s host (%u settings):\n", name, hs->n);
        for (uint32_t i = 0; i < hs->n; i++)
            fprintf(out, "  %-44s %s\n", hs->e[i].key, hs->e[i].value);
    }
    hostsnap_free(hs);
}

int cli_show(int argc, char **argv, _Atomic int *stop)
{
    static const int allowed[] = {HIST_OPT_DB, 'J', 0};
    struct hist_cli hc;
    struct store *st;
    struct store_run r;
    enum store_run_ref kind;
    int64_t *ids = NULL, ref;
    size_t n = 0;
    char err[512];
    int rc = cli_history_parse("show", argc, argv, allowed, cli_help_show, &hc);

    (void)stop;
    if (rc)
        return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    if (optind + 1 != argc) {
        cli_error("show takes one RUN (an id, a tag or 'last'): see 'netrig help show'");
        return CLI_EXIT_USAGE;
    }
    st = cli_history_read(hc.db);
    if (!st)
        return CLI_EXIT_FAIL;
    kind = store_run_ref_parse(argv[optind], &ref);
    if (kind != STORE_RUN_REF_NONE) {
        rc = kind == STORE_RUN_REF_SWEEP  ? cli_sweep_show(st, ref, hc.json, stdout, NULL)
             : kind == STORE_RUN_REF_MESH ? cli_mesh_show(st, ref, hc.json, stdout)
                                          : cli_group_show(st, ref, hc.json, stdout);
        store_close(st);
        return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    }
    rc = cli_history_resolve(st, argc, argv, optind, &ids, &n);
    if (!rc && n > 1)
        fprintf(stderr, "netrig: '%s' names %zu runs; showing the newest, %lld\n", argv[optind], n,
                (long long)ids[n - 1]);
    if (!rc && (rc = store_run_get(st, ids[n - 1], &r, err, sizeof(err))) != 0)
        cli_error("%s", err);
    if (!rc) {
        if (hc.json)
            cli_history_print_json(cli_history_run_json(st, &r));
        else
            show_text(st, &r, stdout);
    }
    free(ids);
    store_close(st);
    return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/* ---- tag ---- */

static bool tag_name_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 64 || !isalpha((unsigned char)s[0]) || !strcmp(s, "last"))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
            return false;
    return true;
}

int cli_tag(int argc, char **argv, _Atomic int *stop)
{
    static const int allowed[] = {HIST_OPT_DB, 'd', 0};
    struct hist_cli hc;
    struct store *st;
    int64_t *ids = NULL;
    size_t n = 0;
    char err[512];
    const char *name;
    int rc = cli_history_parse("tag", argc, argv, allowed, cli_help_tag, &hc);

    (void)stop;
    if (rc)
        return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    if (optind + 2 != argc) {
        cli_error("tag takes RUN and NAME: e.g. 'netrig tag 12 before'");
        return CLI_EXIT_USAGE;
    }
    name = argv[optind + 1];
    if (!tag_name_ok(name)) {
        cli_error("invalid tag name '%s': start with a letter; use letters, digits, '.', '_', "
                  "'-' (at most 64; not 'last')",
                  name);
        return CLI_EXIT_USAGE;
    }
    st = cli_history_open(hc.db, false);
    if (!st)
        return CLI_EXIT_FAIL;
    rc = cli_history_resolve(st, optind + 1, argv, optind, &ids, &n);
    if (!rc && !(rc = store_begin(st, err, sizeof(err)))) {
        for (size_t i = 0; !rc && i < n; i++)
            rc = hc.del ? store_untag(st, &ids[i], 1, name, err, sizeof(err))
                        : store_tag(st, &ids[i], 1, name, err, sizeof(err));
        rc = rc ? (store_rollback(st), rc) : store_commit(st, err, sizeof(err));
        if (rc)
            cli_error("%s", err);
        else
            printf("%s %zu run%s %s '%s'\n", hc.del ? "untagged" : "tagged", n, n == 1 ? "" : "s",
                   hc.del ? "from" : "as", name);
    }
    free(ids);
    store_close(st);
    return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
