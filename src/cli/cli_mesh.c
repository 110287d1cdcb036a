/* cli_mesh: `netrig mesh PLAN`: runs a plan of third-party tests, prints the matrix and stores
 * the plan's run in the history; `netrig show mesh:N` and `history --meshes` read it back. */
#include "cli.h"

#include "client.h"
#include "log.h"
#include "mesh.h"
#include "store.h"
#include "store_mesh.h"
#include "store_run.h"
#include "units.h"

#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

void cli_help_mesh(FILE *out)
{
    fprintf(
        out,
        "usage: netrig mesh PLAN [-J] [-o FILE] [--db PATH | --no-save]\n"
        "                   [--user NAME [--credentials FILE]]\n"
        "\n"
        "Runs every test of PLAN between its hosts: each cell is asked of the source host's\n"
        "daemon (started with --allow-third-party covering this host), one test per host at a\n"
        "time unless the plan says \"parallel\": true. Progress goes to stderr; a host that is\n"
        "down fails its cells with the reason and the rest of the plan runs. Every cell is saved\n"
        "in the history as it finishes, the plan as mesh N ('netrig show mesh:N', 'netrig report\n"
        "mesh:N -o FILE.html'). docs/mesh.md describes the plan file.\n"
        "\n"
        "  -J, --json           print every cell's results as one JSON document\n"
        "  -o, --output FILE    also write that JSON document to FILE\n"
        "      --db PATH        save in this history database (default\n"
        "                       ~/.local/share/netrig/history.db)\n"
        "      --no-save        do not save the results\n"
        "      --user NAME      authenticate to the daemons (secret: $NETRIG_SECRET)\n"
        "      --credentials F  secrets file of mode 0600 instead of $NETRIG_SECRET\n"
        "Exit status: 0 every cell complete, 1 some failed, 2 bad usage or plan.\n");
}

static double cell_value(const struct mesh_plan *p, const struct mesh_cell *c)
{
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(c->result, "summary");
    const char *key =
        params_is_transactional(&p->tests[c->test]) ? "transactions_per_s" : "throughput_bps";
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(sum, key);

    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static void print_matrix(FILE *out, const struct mesh_plan *p, uint32_t t)
{
    bool txn = params_is_transactional(&p->tests[t]);

    fprintf(out, "\n%s (%s), source down, destination across:\n%-12s",
            params_test_name(p->tests[t].test), txn ? "transactions/s" : "throughput", "");
    for (uint32_t d = 0; d < p->nhosts; d++)
        fprintf(out, " %13.13s", p->hosts[d].name);
    fputc('\n', out);
    for (uint32_t s = 0; s < p->nhosts; s++) {
        fprintf(out, "%-12.12s", p->hosts[s].name);
        for (uint32_t d = 0; d < p->nhosts; d++) {
            char cell[32] = "-";
            for (uint32_t i = 0; i < p->ncells; i++) {
                const struct mesh_cell *c = &p->cells[i];
                if (c->test != t || c->src != s || c->dst != d)
                    continue;
                if (c->status < 0)
                    snprintf(cell, sizeof(cell), "FAILED");
                else if (c->status == 0)
                    snprintf(cell, sizeof(cell), "not run");
                else if (txn)
                    snprintf(cell, sizeof(cell), "%.0f", cell_value(p, c));
                else
                    units_format_rate(cell_value(p, c), cell, sizeof(cell));
            }
            fprintf(out, " %13s", cell);
        }
        fputc('\n', out);
    }
}

static const char *status_name(int status)
{
    return status == 1 ? "complete" : status == 2 ? "partial" : status == 0 ? "pending" : "failed";
}

/* Every cell with its status, error and document; mesh > 0: as stored in the history. */
static cJSON *plan_json(const struct mesh_plan *p, int64_t mesh)
{
    cJSON *o = cJSON_CreateObject(), *arr;

    cJSON_AddStringToObject(o, "netrig_version", NETRIG_VERSION);
    cJSON_AddStringToObject(o, "test", "mesh");
    if (mesh)
        cJSON_AddNumberToObject(o, "mesh_id", (double)mesh);
    arr = cJSON_AddArrayToObject(o, "cells");
    for (uint32_t i = 0; i < p->ncells; i++) {
        const struct mesh_cell *c = &p->cells[i];
        cJSON *co = cJSON_CreateObject();
        cJSON_AddStringToObject(co, "source", p->hosts[c->src].name);
        cJSON_AddStringToObject(co, "destination", p->hosts[c->dst].name);
        cJSON_AddStringToObject(co, "test", params_test_name(p->tests[c->test].test));
        cJSON_AddStringToObject(co, "status", status_name(c->status));
        if (c->status != 1)
            cJSON_AddStringToObject(co, "error", c->error);
        if (c->run_id)
            cJSON_AddNumberToObject(co, "run_id", (double)c->run_id);
        if (c->result)
            cJSON_AddItemToObject(co, "result", cJSON_Duplicate(c->result, 1));
        cJSON_AddItemToArray(arr, co);
    }
    return o;
}

static int print_doc(FILE *f, const cJSON *doc)
{
    char *text = cJSON_Print(doc);
    int rc = text && fprintf(f, "%s\n", text) >= 0 ? 0 : -1;

    free(text);
    return rc;
}

static int write_json(const char *path, cJSON *doc)
{
    FILE *f = path ? fopen(path, "w") : stdout;
    int rc = f ? print_doc(f, doc) : -1;

    if (f && f != stdout && fclose(f))
        rc = -1;
    if (rc)
        cli_error("cannot write the mesh results to '%s'", path ? path : "stdout");
    return rc;
}

/* ---- saving to the history ---- */

struct mesh_save {
    struct store *st; /* NULL: not saving (--no-save, or the history failed) */
    int64_t id;       /* the mesh's id once created */
};

static char *hosts_text(const struct mesh_plan *p)
{
    cJSON *a = cJSON_CreateArray();
    char *t;

    for (uint32_t i = 0; i < p->nhosts; i++) {
        cJSON *h = cJSON_CreateObject();
        cJSON_AddStringToObject(h, "name", p->hosts[i].name);
        cJSON_AddStringToObject(h, "address", p->hosts[i].address);
        cJSON_AddNumberToObject(h, "port", p->hosts[i].port);
        cJSON_AddItemToArray(a, h);
    }
    t = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    return t;
}

static char *tests_text(const struct mesh_plan *p)
{
    cJSON *a = cJSON_CreateArray();
    char *t;

    for (uint32_t i = 0; i < p->ntests; i++)
        cJSON_AddItemToArray(a, params_to_json(&p->tests[i]));
    t = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    return t;
}

static void cell_row(const struct mesh_plan *p, const struct mesh_cell *c,
                     struct store_mesh_cell *sc)
{
    memset(sc, 0, sizeof(*sc));
    sc->idx = (uint32_t)(c - p->cells);
    sc->test = c->test, sc->src = c->src, sc->dst = c->dst;
    snprintf(sc->test_name, sizeof(sc->test_name), "%s", params_test_name(p->tests[c->test].test));
    snprintf(sc->source, sizeof(sc->source), "%s", p->hosts[c->src].name);
    snprintf(sc->destination, sizeof(sc->destination), "%s", p->hosts[c->dst].name);
    snprintf(sc->status, sizeof(sc->status), "%s", status_name(c->status));
    snprintf(sc->error, sizeof(sc->error), "%s", c->status == 1 ? "" : c->error);
}

/* Opens the history and creates the mesh with its cells pending; a failure is a warning. */
static void save_start(struct mesh_save *sv, const char *db, const char *plan_path,
                       const struct mesh_plan *p)
{
    struct store_mesh m = {.parallel = p->parallel};
    struct store_mesh_cell *cells = calloc(p->ncells ? p->ncells : 1, sizeof(*cells));
    char path[4096], abs[PATH_MAX], err[512] = "out of memory";
    int rc = -1;

    if (!db && !store_default_path(path, sizeof(path), true, err, sizeof(err)))
        db = path;
    if (db)
        sv->st = store_open(db, true, err, sizeof(err));
    snprintf(m.plan, sizeof(m.plan), "%s", realpath(plan_path, abs) ? abs : plan_path);
    m.hosts = hosts_text(p);
    m.tests = tests_text(p);
    for (uint32_t i = 0; cells && i < p->ncells; i++)
        cell_row(p, &p->cells[i], &cells[i]);
    if (sv->st && m.hosts && m.tests && cells && !store_begin(sv->st, err, sizeof(err))) {
        rc = store_mesh_create(sv->st, &m, cells, p->ncells, &sv->id, err, sizeof(err));
        rc = rc ? rc : store_commit(sv->st, err, sizeof(err));
    }
    if (rc) {
        cli_error("warning: the mesh will not be saved to the history: %s%s", err,
                  db ? "" : " (--no-save skips saving)");
        if (sv->st)
            store_rollback(sv->st);
        store_close(sv->st);
        sv->st = NULL;
        sv->id = 0;
    }
    free(m.hosts);
    free(m.tests);
    free(cells);
}

/* The cell's outcome (and its run, with doc) in one transaction. */
static int save_txn(struct mesh_save *sv, const struct store_mesh_cell *sc, const cJSON *doc,
                    int64_t *run_id, char *err, size_t errlen)
{
    if (store_begin(sv->st, err, errlen) ||
        store_mesh_cell_done(sv->st, sv->id, sc, doc, run_id, err, errlen) ||
        store_commit(sv->st, err, errlen)) {
        store_rollback(sv->st);
        *run_id = 0;
        return -1;
    }
    return 0;
}

/* mesh_run's callback: each cell is saved as it finishes. */
static void save_cell(struct mesh_plan *p, struct mesh_cell *c, void *arg)
{
    struct mesh_save *sv = arg;
    struct store_mesh_cell sc;
    char err[512];

    if (!sv->st)
        return;
    cell_row(p, c, &sc);
    if (c->result) {
        if (!save_txn(sv, &sc, c->result, &c->run_id, err, sizeof(err)))
            return;
        /* a document the history does not take: keep the cell's outcome without its run */
        cli_error("warning: mesh %lld: the results of %s -> %s %s are not saved: %s",
                  (long long)sv->id, sc.source, sc.destination, sc.test_name, err);
        snprintf(sc.error, sizeof(sc.error), "results not saved: %s", err);
    }
    if (save_txn(sv, &sc, NULL, &c->run_id, err, sizeof(err))) {
        cli_error("warning: mesh %lld: cells from %s -> %s %s on are not saved: %s",
                  (long long)sv->id, sc.source, sc.destination, sc.test_name, err);
        store_close(sv->st);
        sv->st = NULL;
    }
}

static void save_finish(struct mesh_save *sv, bool interrupted)
{
    char err[512];

    if (sv->st && store_mesh_set_status(sv->st, sv->id, interrupted ? "interrupted" : "done", err,
                                        sizeof(err)))
        cli_error("warning: mesh %lld: its end is not saved: %s", (long long)sv->id, err);
    store_close(sv->st);
    sv->st = NULL;
}

enum { OPT_USER = 300, OPT_CREDENTIALS, OPT_DB, OPT_NO_SAVE };

struct mesh_cli {
    struct client_opts base;
    const char *outfile, *db;
    bool json, no_save;
};

/* 0, 1 when help was printed, -1 after printing the error. */
static int parse_mesh(int argc, char **argv, struct mesh_cli *mc)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'J'},
        {"output", required_argument, NULL, 'o'},
        {"user", required_argument, NULL, OPT_USER},
        {"credentials", required_argument, NULL, OPT_CREDENTIALS},
        {"db", required_argument, NULL, OPT_DB},
        {"no-save", no_argument, NULL, OPT_NO_SAVE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct client_opts *b = &mc->base;
    int c;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":Jo:h", opts, NULL)) != -1) {
        switch (c) {
        case 'J': mc->json = true; break;
        case 'o': mc->outfile = optarg; break;
        case OPT_USER: snprintf(b->user, sizeof(b->user), "%s", optarg); break;
        case OPT_CREDENTIALS: snprintf(b->credentials, sizeof(b->credentials), "%s", optarg); break;
        case OPT_DB: mc->db = optarg; break;
        case OPT_NO_SAVE: mc->no_save = true; break;
        case 'h': cli_help_mesh(stdout); return 1;
        default: return cli_opt_error(c, argv, "mesh");
        }
    }
    if (optind != argc - 1) {
        cli_error("mesh takes one plan file: netrig mesh PLAN");
        return -1;
    }
    return 0;
}

int cli_mesh(int argc, char **argv, _Atomic int *stop)
{
    struct mesh_cli mc = {.base = {.timeout_ms = 10000}};
    struct mesh_save sv = {0};
    struct mesh_plan plan;
    char err[512];
    uint32_t failed;
    int rc = parse_mesh(argc, argv, &mc);

    if (rc)
        return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    if (mesh_load(argv[optind], &plan, err, sizeof(err))) {
        cli_error("%s", err);
        mesh_free(&plan);
        return CLI_EXIT_USAGE;
    }
    log_setup("netrig", false, LOG_LVL_WARN);
    if (!mc.no_save)
        save_start(&sv, mc.db, argv[optind], &plan);
    failed = mesh_run(&plan, &mc.base, stderr, save_cell, &sv, stop);
    save_finish(&sv, *stop);
    if (mc.json || mc.outfile) {
        cJSON *doc = plan_json(&plan, sv.id);
        if ((mc.json && write_json(NULL, doc)) || (mc.outfile && write_json(mc.outfile, doc)))
            rc = CLI_EXIT_FAIL;
        cJSON_Delete(doc);
    }
    if (!mc.json) {
        for (uint32_t t = 0; t < plan.ntests; t++)
            print_matrix(stdout, &plan, t);
        if (sv.id)
            printf("\nsaved as mesh %lld (netrig show mesh:%lld)\n", (long long)sv.id,
                   (long long)sv.id);
    }
    if (failed)
        cli_error("%u of %u cells failed", failed, plan.ncells);
    mesh_free(&plan);
    if (*stop)
        return CLI_EXIT_INTERRUPTED;
    return failed || rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/* ---- a stored mesh ---- */

static int stored_hosts(const cJSON *arr, struct mesh_plan *p)
{
    const cJSON *h;

    cJSON_ArrayForEach(h, arr)
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(h, "name");
        const cJSON *addr = cJSON_GetObjectItemCaseSensitive(h, "address");
        const cJSON *port = cJSON_GetObjectItemCaseSensitive(h, "port");
        struct mesh_host *mh = &p->hosts[p->nhosts];

        if (p->nhosts >= MESH_MAX_HOSTS || !cJSON_IsString(name) || !cJSON_IsString(addr) ||
            !cJSON_IsNumber(port))
            return -1;
        snprintf(mh->name, sizeof(mh->name), "%s", name->valuestring);
        snprintf(mh->address, sizeof(mh->address), "%s", addr->valuestring);
        mh->port =
            port->valuedouble >= 1 && port->valuedouble <= 65535 ? (uint16_t)port->valuedouble : 0;
        p->nhosts++;
    }
    return p->nhosts ? 0 : -1;
}

static int stored_tests(const cJSON *arr, struct mesh_plan *p)
{
    const cJSON *t;
    char err[256];

    cJSON_ArrayForEach(t, arr)
    {
        if (p->ntests >= MESH_MAX_TESTS ||
            params_from_json(t, &p->tests[p->ntests], err, sizeof(err)))
            return -1;
        p->ntests++;
    }
    return p->ntests ? 0 : -1;
}

static int stored_cell(struct store *st, const struct store_mesh_cell *sc, struct mesh_plan *p)
{
    struct mesh_cell *c = &p->cells[p->ncells];
    char *text;

    if (sc->test >= p->ntests || sc->src >= p->nhosts || sc->dst >= p->nhosts)
        return -1;
    c->test = sc->test, c->src = sc->src, c->dst = sc->dst;
    c->status = !strcmp(sc->status, "complete")  ? 1
                : !strcmp(sc->status, "partial") ? 2
                : !strcmp(sc->status, "pending") ? 0
                                                 : -1;
    snprintf(c->error, sizeof(c->error), "%s", sc->error);
    c->run_id = sc->run_id;
    text = sc->run_id ? store_run_document(st, sc->run_id) : NULL;
    c->result = text ? cJSON_Parse(text) : NULL;
    free(text);
    p->ncells++;
    return 0;
}

/* The stored mesh as the plan it ran, each cell with its stored document. */
static int load_stored(struct store *st, int64_t id, struct store_mesh *m, struct mesh_plan *p,
                       char *err, size_t errlen)
{
    struct store_mesh_cell *sc = NULL;
    uint32_t n = 0;
    cJSON *hosts, *tests;
    int rc = 0;

    memset(p, 0, sizeof(*p));
    if (store_mesh_get(st, id, m, err, errlen) || store_mesh_cells(st, id, &sc, &n, err, errlen))
        return -1;
    hosts = cJSON_Parse(m->hosts);
    tests = cJSON_Parse(m->tests);
    p->parallel = m->parallel;
    p->cells = calloc(n ? n : 1, sizeof(*p->cells));
    if (!p->cells || stored_hosts(hosts, p) || stored_tests(tests, p))
        rc = -1;
    for (uint32_t i = 0; !rc && i < n; i++)
        rc = stored_cell(st, &sc[i], p);
    if (rc)
        snprintf(err, errlen,
                 "mesh %lld in '%s' cannot be read back: its hosts, tests or cells "
                 "are damaged",
                 (long long)id, store_path(st));
    cJSON_Delete(hosts);
    cJSON_Delete(tests);
    free(sc);
    return rc;
}

static void show_text(const struct store_mesh *m, const struct mesh_plan *p, FILE *out)
{
    uint32_t nfail = 0;

    fprintf(out, "mesh %lld: plan %s\n  started %s, %s%s%s; %u cells, %u failed\n",
            (long long)m->id, m->plan, m->started_at, m->status, m->finished_at[0] ? " " : "",
            m->finished_at, m->ncells, m->nfailed);
    fputs("hosts:\n", out);
    for (uint32_t h = 0; h < p->nhosts; h++)
        fprintf(out, "  %-16s %s port %u\n", p->hosts[h].name, p->hosts[h].address,
                p->hosts[h].port);
    for (uint32_t t = 0; t < p->ntests; t++)
        print_matrix(out, p, t);
    for (uint32_t i = 0; i < p->ncells; i++) {
        const struct mesh_cell *c = &p->cells[i];
        if (c->status >= 0)
            continue;
        fprintf(out, "%s  %s -> %s %s: %s\n", nfail++ ? "" : "\nfailed cells:\n",
                p->hosts[c->src].name, p->hosts[c->dst].name,
                params_test_name(p->tests[c->test].test), c->error);
    }
    fprintf(out,
            "\nthe runs: netrig export mesh:%lld --csv; the matrix as a page: netrig "
            "report mesh:%lld -o mesh.html\n",
            (long long)m->id, (long long)m->id);
}

int cli_mesh_show(struct store *st, long long id, bool json, FILE *out)
{
    struct store_mesh m;
    struct mesh_plan plan;
    char err[512];
    int rc = load_stored(st, id, &m, &plan, err, sizeof(err));

    if (rc) {
        cli_error("%s", err);
    } else if (json) {
        cJSON *doc = plan_json(&plan, id);
        cJSON_AddStringToObject(doc, "plan", m.plan);
        cJSON_AddStringToObject(doc, "started_at", m.started_at);
        cJSON_AddStringToObject(doc, "finished_at", m.finished_at);
        cJSON_AddStringToObject(doc, "status", m.status);
        cJSON_AddBoolToObject(doc, "parallel", m.parallel);
        cJSON_AddItemToObject(doc, "hosts", cJSON_Parse(m.hosts));
        cJSON_AddItemToObject(doc, "tests", cJSON_Parse(m.tests));
        rc = print_doc(out, doc);
        cJSON_Delete(doc);
    } else {
        show_text(&m, &plan, out);
    }
    store_mesh_free(&m);
    mesh_free(&plan);
    return rc;
}

struct list_ctx {
    cJSON *arr; /* -J: the array being filled */
    FILE *out;
};

static int list_one(const struct store_mesh *m, void *arg)
{
    struct list_ctx *lc = arg;
    cJSON *o;

    if (!lc->arr) {
        fprintf(lc->out, "%6lld  %.10s %.8s  %-12s %6u %6u  %s\n", (long long)m->id, m->started_at,
                m->started_at[10] ? m->started_at + 11 : "", m->status, m->ncells, m->nfailed,
                m->plan);
        return 0;
    }
    o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "id", (double)m->id);
    cJSON_AddStringToObject(o, "plan", m->plan);
    cJSON_AddStringToObject(o, "started_at", m->started_at);
    cJSON_AddStringToObject(o, "finished_at", m->finished_at);
    cJSON_AddStringToObject(o, "status", m->status);
    cJSON_AddBoolToObject(o, "parallel", m->parallel);
    cJSON_AddNumberToObject(o, "cells", m->ncells);
    cJSON_AddNumberToObject(o, "failed", m->nfailed);
    cJSON_AddItemToArray(lc->arr, o);
    return 0;
}

int cli_mesh_list(struct store *st, bool json, FILE *out)
{
    struct list_ctx lc = {json ? cJSON_CreateArray() : NULL, out};
    int rc;

    if (!json)
        fprintf(out, "%6s  %-19s  %-12s %6s %6s  %s\n", "mesh", "started (UTC)", "status", "cells",
                "failed", "plan");
    rc = store_mesh_list(st, list_one, &lc);
    if (json && !rc)
        rc = print_doc(out, lc.arr);
    cJSON_Delete(lc.arr);
    return rc;
}
