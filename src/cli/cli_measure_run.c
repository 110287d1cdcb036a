/* cli_measure_run: a parsed measurement command run: against one server (or the built-in
 * loopback one), several at once, or from another daemon (--from), and its report. */
#include "cli_measure.h"

#include "histo.h"
#include "iperf3_client.h"
#include "log.h"
#include "loopsrv.h"
#include "report_json.h"
#include "result_json.h"
#include "result_doc.h"
#include "report_text.h"
#include "sock.h"
#include "thirdparty_ctl.h"
#include "units.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* Flows need file descriptors: two per flow on loopback (both ends in this process). */
static void raise_fd_limit(uint32_t need)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < need + 64) {
        rl.rlim_cur = rl.rlim_max < need + 64 ? rl.rlim_max : need + 64;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static void print_failure_json(FILE *out, const struct test_kind *kind, const char *err,
                               bool one_line)
{
    report_json_print(out, report_json_failure(params_test_name(kind->test), err, one_line),
                      one_line);
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
    cJSON *doc;

    if (mc->output == OUT_TEXT) {
        report_text_summary(mc->out, r);
        return;
    }
    doc = report_json_document(r, false);
    if (mc->samples)
        cJSON_AddItemToObject(doc, "samples", result_json_samples(r));
    if (stream) /* "event" stays the last member */
        cJSON_AddStringToObject(doc, "event", "end");
    report_json_print(mc->out, doc, stream);
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
static int run_multi(struct measure_cli *mc, _Atomic int *stop)
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

/* One run against one server (or the built-in one), reported as asked. */
static int run_one(struct measure_cli *mc, _Atomic int *stop)
{
    struct client_opts *o = &mc->o;
    struct report_live live;
    struct loopsrv em;
    struct run_result r;
    char err[512] = "";
    bool embedded = false;
    int rc;

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
            print_failure_json(mc->out, mc->kind, err, mc->output == OUT_JSON_STREAM);
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

int cli_measure_run(struct measure_cli *mc, _Atomic int *stop)
{
    struct client_opts *o = &mc->o;
    int rc;

    if (mc->live == REPORT_LIVE_ON && (mc->ntargets > 1 || mc->from)) {
        cli_error("--live draws one test's progress: tests against several servers and "
                  "third-party tests show none; drop --live");
        return CLI_EXIT_USAGE;
    }
    if (!mc->no_save && cli_history_check_db(mc->db))
        return CLI_EXIT_USAGE;
    if (cli_output_open(&mc->oo, &mc->out))
        return CLI_EXIT_FAIL;
    log_setup("netrig", false, LOG_LVL_WARN);
    raise_fd_limit(2 * params_total_flows(&o->p) * (mc->ntargets ? mc->ntargets : 1) + 16);
    if (mc->ntargets > 1 && !mc->from)
        rc = run_multi(mc, stop);
    else if (mc->from)
        rc = run_third_party(mc);
    else
        rc = run_one(mc, stop);
    cli_output_close(&mc->oo);
    return rc;
}
