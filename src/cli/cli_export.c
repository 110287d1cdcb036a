/* cli_export: `netrig export`: stored runs as CSV (one line per run: identity, parameters,
 * every metric) or as a JSON array of the documents 'netrig show -J' prints. */
#include "cli.h"
#include "cli_history.h"

#include "load_result.h"
#include "metric.h"
#include "samples_json.h"
#include "store.h"
#include "store_run.h"
#include "store_samples.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

void cli_help_export(FILE *out)
{
    fprintf(
        out,
        "usage: netrig export RUN... --csv|--json [--samples] [--db PATH]\n"
        "\n"
        "Stored runs for other tools: --csv one line per run (identity, parameters, every\n"
        "metric), --json an array of the documents 'netrig show -J' prints.\n"
        "\n"
        "      --samples         the time series instead: with --csv one line per sample\n"
        "                        (--sample) and per latency probe (netrig load); with --json\n"
        "                        each document gets \"samples\" (and a load run's \"probes\")\n\n");
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

/* ---- --samples ---- */

static const char *const parts[] = {"", "up", "down"}, *const sides[] = {"client", "server"};

static void csv_sample(FILE *out, const struct store_run *r, const char *part, const char *side,
                       const struct samples *s)
{
    for (uint32_t f = 0; f < s->nflows; f++)
        for (uint32_t k = 0; s->kind[f] != SAMPLES_NONE && k < s->n; k++) {
            const struct sample *x = samples_row(s, k, f);
            fprintf(out, "%lld,sample,%s,%s,%u,%u,%.6f,%llu,%.0f,", (long long)r->id, part, side, f,
                    k, s->t_s[k], (unsigned long long)x->bytes, samples_bps(s, k, f));
            if (x->tcp)
                fprintf(out, "%u,%u,%u,%u,%llu,%llu,%llu,%llu,%llu,", x->cwnd, x->rtt_us,
                        x->retrans, x->mss, (unsigned long long)x->delivery_rate_bps,
                        (unsigned long long)x->pacing_rate_bps, (unsigned long long)x->busy_us,
                        (unsigned long long)x->rwnd_limited_us,
                        (unsigned long long)x->sndbuf_limited_us);
            else
                fputs(",,,,,,,,,", out);
            fputc('\n', out);
        }
}

static void csv_probes(FILE *out, struct store *st, const struct store_run *r, const char *probe)
{
    struct txnlog log;
    char err[256];

    if (store_run_probes(st, r->id, probe, &log, err, sizeof(err)) != 1)
        return;
    for (uint32_t i = 0; i < log.n; i++) {
        fprintf(out, "%lld,probe,%s,client,0,%u,%.6f,,,,,,,,,,,,", (long long)r->id, probe, i,
                (double)log.rec[i].t_ns / 1e9);
        if (log.rec[i].lat_ns != TXNLOG_LOST)
            fprintf(out, "%.3f", (double)log.rec[i].lat_ns / 1e3);
        fputc('\n', out);
    }
    txnlog_fini(&log);
}

/* One run's series as CSV lines (the header is csv_series_header's). */
static void csv_series(FILE *out, struct store *st, const struct store_run *r)
{
    bool load = !strcmp(r->test, "load");
    char err[256];

    for (size_t p = load ? 1 : 0; p < (load ? 3u : 1u); p++)
        for (int sd = 0; sd < 2; sd++) {
            struct samples *s = NULL;
            if (store_run_samples(st, r->id, parts[p], sides[sd], &s, err, sizeof(err)) == 1)
                csv_sample(out, r, parts[p], sides[sd], s);
            samples_free(s);
        }
    if (load) {
        csv_probes(out, st, r, "udp");
        csv_probes(out, st, r, "tcp");
        for (uint32_t c = 1; c < dsclass_count(DSCLASS_RRUL); c++) { /* --classes */
            char name[16];
            csv_probes(out, st, r, load_class_probe(DSCLASS_RRUL, c, name, sizeof(name)));
        }
    }
}

static const char csv_series_header[] =
    "run,series,part,side,flow,seq,t_s,bytes,throughput_bps,cwnd,rtt_us,retransmits,mss,"
    "delivery_rate_bps,pacing_rate_bps,busy_us,rwnd_limited_us,sndbuf_limited_us,latency_us\n";

static cJSON *side_series(struct store *st, int64_t id, const char *part)
{
    cJSON *o = cJSON_CreateObject();
    char err[256];

    for (int sd = 0; sd < 2; sd++) {
        struct samples *s = NULL;
        cJSON *j = store_run_samples(st, id, part, sides[sd], &s, err, sizeof(err)) == 1
                       ? samples_json(s, NULL)
                       : cJSON_CreateNull();
        if (s && part[0])
            cJSON_AddNumberToObject(j, "offset_s", s->origin_s);
        cJSON_AddItemToObject(o, sides[sd], j);
        samples_free(s);
    }
    return o;
}

static cJSON *probe_series(struct store *st, int64_t id, const char *probe)
{
    struct txnlog log;
    cJSON *o, *t, *l;
    char err[256];

    if (store_run_probes(st, id, probe, &log, err, sizeof(err)) != 1)
        return cJSON_CreateNull();
    o = cJSON_CreateObject();
    t = cJSON_AddArrayToObject(o, "t_s");
    l = cJSON_AddArrayToObject(o, "latency_us");
    for (uint32_t i = 0; i < log.n; i++) {
        cJSON_AddItemToArray(t, cJSON_CreateNumber((double)log.rec[i].t_ns / 1e9));
        cJSON_AddItemToArray(l, log.rec[i].lat_ns == TXNLOG_LOST
                                    ? cJSON_CreateNull()
                                    : cJSON_CreateNumber((double)log.rec[i].lat_ns / 1e3));
    }
    txnlog_fini(&log);
    return o;
}

/* The run's series in the layout of -J --samples (netrig load's for a load run). */
static void json_series(cJSON *doc, struct store *st, const struct store_run *r)
{
    cJSON *smp, *pr;

    cJSON_DeleteItemFromObjectCaseSensitive(doc, "samples");
    if (strcmp(r->test, "load")) {
        cJSON_AddItemToObject(doc, "samples", side_series(st, r->id, ""));
        return;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "probes");
    smp = cJSON_AddObjectToObject(doc, "samples");
    cJSON_AddItemToObject(smp, "up", side_series(st, r->id, "up"));
    cJSON_AddItemToObject(smp, "down", side_series(st, r->id, "down"));
    pr = cJSON_AddObjectToObject(doc, "probes");
    cJSON_AddItemToObject(pr, "udp", probe_series(st, r->id, "udp"));
    cJSON_AddItemToObject(pr, "tcp", probe_series(st, r->id, "tcp"));
    for (uint32_t c = 1; c < dsclass_count(DSCLASS_RRUL); c++) { /* --classes: when stored */
        char name[16];
        cJSON *x = probe_series(st, r->id, load_class_probe(DSCLASS_RRUL, c, name, sizeof(name)));
        if (cJSON_IsNull(x))
            cJSON_Delete(x);
        else
            cJSON_AddItemToObject(pr, name, x);
    }
}

int cli_export(int argc, char **argv, _Atomic int *stop)
{
    static const int allowed[] = {HIST_OPT_DB, HIST_OPT_CSV, 'J', HIST_OPT_SAMPLES, 0};
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
        hc.samples ? (void)fputs(csv_series_header, stdout) : csv_header(stdout);
    else if (!rc)
        arr = cJSON_CreateArray();
    for (size_t i = 0; !rc && i < n; i++) {
        if ((rc = store_run_get(st, ids[i], &r, err, sizeof(err))) != 0)
            cli_error("%s", err);
        else if (arr) {
            cJSON *doc = cli_history_run_json(st, &r);
            if (hc.samples)
                json_series(doc, st, &r);
            cJSON_AddItemToArray(arr, doc);
        } else if (hc.samples) {
            csv_series(stdout, st, &r);
        } else {
            csv_row(st, &r, stdout);
        }
    }
    if (!rc && arr)
        cli_history_print_json(arr);
    else
        cJSON_Delete(arr);
    free(ids);
    store_close(st);
    return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
