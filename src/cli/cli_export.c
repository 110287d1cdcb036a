/* cli_export: `netrig export`: stored runs as CSV (one line per run: identity, parameters,
 * every metric) or as a JSON array of the documents 'netrig show -J' prints. */
#include "cli.h"
#include "cli_history.h"

#include "metric.h"
#include "store.h"
#include "store_run.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

void cli_help_export(FILE *out)
{
    fprintf(out,
            "usage: netrig export RUN... --csv|--json [--db PATH]\n"
            "\n"
            "Stored runs for other tools: --csv one line per run (identity, parameters, every\n"
            "metric), --json an array of the documents 'netrig show -J' prints.\n\n");
    fputs(cli_history_help_db, out);
    fputs(cli_history_help_runs, out);
}

static void csv_field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static const char *const csv_params[] = {
    "flows",       "threads",      "server_threads", "duration_s", "omit_s",      "write_size",
    "window",      "mss",          "nodelay",        "zerocopy",   "fq_rate_bps", "direction",
    "congestion",  "req_size",     "resp_size",      "depth",      "rate_tps",    "udp_rate_bps",
    "zerocopy_rx", "skip_rx_copy",
};

static void csv_param(FILE *out, const cJSON *p, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(p, key);

    if (cJSON_IsString(v))
        csv_field(out, v->valuestring);
    else if (cJSON_IsBool(v))
        fputs(cJSON_IsTrue(v) ? "1" : "0", out);
    else if (cJSON_IsNumber(v))
        fprintf(out, "%.10g", v->valuedouble);
}

static void csv_row(struct store *st, const struct store_run *r, FILE *out)
{
    size_t nd;
    const struct metric_def *defs = metric_all(&nd);
    char *text = store_run_document(st, r->id);
    cJSON *doc = text ? cJSON_Parse(text) : NULL;
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(doc, "params");
    double v;

    free(text);
    fprintf(out, "%lld,%s,%d,%s,", (long long)r->id, r->test, r->udp, r->role);
    csv_field(out, r->title);
    fprintf(out, ",%s,", r->started_at);
    csv_field(out, r->peer);
    fprintf(out, ",%d,", r->partial);
    csv_field(out, r->tags);
    if (r->group)
        fprintf(out, ",%lld", (long long)r->group);
    else
        fputc(',', out);
    for (size_t i = 0; i < sizeof(csv_params) / sizeof(csv_params[0]); i++) {
        fputc(',', out);
        csv_param(out, p, csv_params[i]);
    }
    for (size_t i = 0; i < nd; i++) {
        fputc(',', out);
        if (!store_run_metric(st, r->id, defs[i].name, &v))
            fprintf(out, "%.15g", v);
    }
    fputc('\n', out);
    cJSON_Delete(doc);
}

static void csv_header(FILE *out)
{
    size_t nd;
    const struct metric_def *defs = metric_all(&nd);

    fputs("id,test,udp,role,title,started_at,peer,partial,tags,group", out);
    for (size_t i = 0; i < sizeof(csv_params) / sizeof(csv_params[0]); i++)
        fprintf(out, ",%s", csv_params[i]);
    for (size_t i = 0; i < nd; i++)
        fprintf(out, ",%s", defs[i].name);
    fputc('\n', out);
}

int cli_export(int argc, char **argv, volatile sig_atomic_t *stop)
{
    static const int allowed[] = {HIST_OPT_DB, HIST_OPT_CSV, 'J', 0};
    struct hist_cli hc;
    struct store *st;
    struct store_run r;
    int64_t *ids = NULL;
    size_t n = 0;
    char err[512];
    cJSON *arr = NULL;
    int rc = cli_history_parse("export", argc, argv, allowed, cli_help_export, &hc);

    (void)stop;
    if (rc)
        return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    if (hc.csv == hc.json || optind >= argc) {
        cli_error("export needs RUN... and one of --csv or --json: see 'netrig help export'");
        return CLI_EXIT_USAGE;
    }
    st = cli_history_read(hc.db);
    if (!st)
        return CLI_EXIT_FAIL;
    rc = cli_history_resolve(st, argc, argv, optind, &ids, &n);
    if (!rc && hc.csv)
        csv_header(stdout);
    else if (!rc)
        arr = cJSON_CreateArray();
    for (size_t i = 0; !rc && i < n; i++) {
        if ((rc = store_run_get(st, ids[i], &r, err, sizeof(err))) != 0)
            cli_error("%s", err);
        else if (arr)
            cJSON_AddItemToArray(arr, cli_history_run_json(st, &r));
        else
            csv_row(st, &r, stdout);
    }
    if (!rc && arr)
        cli_history_print_json(arr);
    else
        cJSON_Delete(arr);
    free(ids);
    store_close(st);
    return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
