/* cli_mesh: `netrig mesh PLAN`: runs a plan of third-party tests and prints the matrix. */
#include "cli.h"

#include "client.h"
#include "log.h"
#include "mesh.h"
#include "units.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

void cli_help_mesh(FILE *out)
{
    fprintf(out,
"usage: netrig mesh PLAN [-J] [-o FILE] [--user NAME [--credentials FILE]]\n"
"\n"
"Runs every test of PLAN between its hosts: each cell is asked of the source host's\n"
"daemon (started with --allow-third-party covering this host), one test per host at a\n"
"time unless the plan says \"parallel\": true. Progress goes to stderr; a host that is\n"
"down fails its cells with the reason and the rest of the plan runs. docs/mesh.md\n"
"describes the plan file.\n"
"\n"
"  -J, --json           print every cell's results as one JSON document\n"
"  -o, --output FILE    also write that JSON document to FILE\n"
"      --user NAME      authenticate to the daemons (secret: $NETRIG_SECRET)\n"
"      --credentials F  secrets file of mode 0600 instead of $NETRIG_SECRET\n"
"Exit status: 0 every cell complete, 1 some failed, 2 bad usage or plan.\n");
}

static double cell_value(const struct mesh_plan *p, const struct mesh_cell *c)
{
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(c->result, "summary");
    const char *key = params_is_transactional(&p->tests[c->test]) ? "transactions_per_s"
                                                                   : "throughput_bps";
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

static cJSON *plan_json(const struct mesh_plan *p)
{
    cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, "cells");

    cJSON_AddStringToObject(o, "netrig_version", NETRIG_VERSION);
    cJSON_AddStringToObject(o, "test", "mesh");
    for (uint32_t i = 0; i < p->ncells; i++) {
        const struct mesh_cell *c = &p->cells[i];
        cJSON *co = cJSON_CreateObject();
        cJSON_AddStringToObject(co, "source", p->hosts[c->src].name);
        cJSON_AddStringToObject(co, "destination", p->hosts[c->dst].name);
        cJSON_AddStringToObject(co, "test", params_test_name(p->tests[c->test].test));
        cJSON_AddStringToObject(co, "status", c->status == 1 ? "complete"
                                              : c->status == 2 ? "partial" : "failed");
        if (c->status != 1)
            cJSON_AddStringToObject(co, "error", c->error);
        if (c->result)
            cJSON_AddItemToObject(co, "result", cJSON_Duplicate(c->result, 1));
        cJSON_AddItemToArray(arr, co);
    }
    return o;
}

static int write_json(const char *path, cJSON *doc)
{
    char *text = cJSON_Print(doc);
    FILE *f = path ? fopen(path, "w") : stdout;
    int rc = 0;

    if (!text || !f || fprintf(f, "%s\n", text) < 0)
        rc = -1;
    if (f && f != stdout && fclose(f))
        rc = -1;
    free(text);
    if (rc)
        cli_error("cannot write the mesh results to '%s'", path ? path : "stdout");
    return rc;
}

int cli_mesh(int argc, char **argv, volatile sig_atomic_t *stop)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'J'},       {"output", required_argument, NULL, 'o'},
        {"user", required_argument, NULL, 'u'}, {"credentials", required_argument, NULL, 'C'},
        {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
    };
    struct client_opts base = {.timeout_ms = 10000, .out = stderr, .output = CLIENT_OUT_NONE};
    struct mesh_plan plan;
    const char *outfile = NULL;
    char err[512];
    bool json = false;
    uint32_t failed;
    int c, rc = 0;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":Jo:h", opts, NULL)) != -1) {
        switch (c) {
        case 'J': json = true; break;
        case 'o': outfile = optarg; break;
        case 'u': snprintf(base.user, sizeof(base.user), "%s", optarg); break;
        case 'C': snprintf(base.credentials, sizeof(base.credentials), "%s", optarg); break;
        case 'h': cli_help_mesh(stdout); return CLI_EXIT_OK;
        default:
            cli_error("%s option '%s' for mesh: see 'netrig help mesh'",
                      c == ':' ? "missing value for" : "unknown", argv[optind - 1]);
            return CLI_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        cli_error("mesh takes one plan file: netrig mesh PLAN");
        return CLI_EXIT_USAGE;
    }
    if (mesh_load(argv[optind], &plan, err, sizeof(err))) {
        cli_error("%s", err);
        mesh_free(&plan);
        return CLI_EXIT_USAGE;
    }
    log_setup("netrig", false, LOG_LVL_WARN);
    failed = mesh_run(&plan, &base, stderr, stop);
    if (json || outfile) {
        cJSON *doc = plan_json(&plan);
        if ((json && write_json(NULL, doc)) || (outfile && write_json(outfile, doc)))
            rc = CLI_EXIT_FAIL;
        cJSON_Delete(doc);
    }
    if (!json)
        for (uint32_t t = 0; t < plan.ntests; t++)
            print_matrix(stdout, &plan, t);
    if (failed)
        cli_error("%u of %u cells failed", failed, plan.ncells);
    mesh_free(&plan);
    if (*stop)
        return CLI_EXIT_INTERRUPTED;
    return failed || rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
