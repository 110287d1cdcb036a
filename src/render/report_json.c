/* report_json: the JSON output of the measurement commands. */
#include "report_json.h"

#include "multi_result.h"
#include "report_text.h"
#include "result_json.h"

#include <stdlib.h>

cJSON *report_json_document(const struct run_result *r, bool stream)
{
    cJSON *doc = result_json_run(r);

    if (stream)
        cJSON_AddStringToObject(doc, "event", "end");
    return doc;
}

cJSON *report_json_failure(const char *test, const char *err, bool stream)
{
    cJSON *doc = cJSON_CreateObject();

    if (stream)
        cJSON_AddStringToObject(doc, "event", "error");
    cJSON_AddStringToObject(doc, "netrig_version", NETRIG_VERSION);
    cJSON_AddStringToObject(doc, "test", test);
    cJSON_AddStringToObject(doc, "error", err);
    return doc;
}

cJSON *report_json_interval(const struct run_result *r, const struct side_result *s,
                            const struct interval *iv)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "event", "interval");
    cJSON_AddStringToObject(o, "test", r->test);
    result_json_add_interval(o, r, s, iv);
    return o;
}

static void stream_interval(void *ctx, const struct run_result *r, const struct side_result *s,
                            const struct interval *iv)
{
    FILE *out = ctx;
    cJSON *j = report_json_interval(r, s, iv);
    char *text = j ? cJSON_PrintUnformatted(j) : NULL;

    if (text) {
        fprintf(out, "%s\n", text);
        fflush(out);
    }
    free(text);
    cJSON_Delete(j);
}

struct run_observer report_json_observer(FILE *out, bool stream)
{
    return (struct run_observer){
        .on_queued = report_text_queued,
        .on_interval = stream ? stream_interval : NULL,
        .ctx = out,
    };
}

static const char *target_status(int rc)
{
    return rc == 0 ? "complete" : rc > 0 ? "partial" : "failed";
}

cJSON *report_json_multi(const struct multi_result *m)
{
    cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, "targets"), *s;
    const char *test = m->n ? params_test_name(m->runs[0].params.test) : "stream";

    for (uint32_t t = 0; t < m->n; t++) {
        const struct run_result *r = &m->runs[t];
        cJSON *to = m->rc[t] >= 0 ? result_json_run(r) : cJSON_CreateObject();
        char where[300];

        snprintf(where, sizeof(where), "%s:%u", m->targets[t].host, m->targets[t].port);
        cJSON_AddStringToObject(to, "target", where);
        cJSON_AddStringToObject(to, "status", target_status(m->rc[t]));
        if (m->rc[t] != 0)
            cJSON_AddStringToObject(to, "target_error", m->err[t]);
        cJSON_AddNumberToObject(to, "clock_offset_us", (double)m->offset_ns[t] / 1e3);
        cJSON_AddNumberToObject(to, "clock_probe_rtt_us", (double)m->rtt_ns[t] / 1e3);
        cJSON_AddNumberToObject(to, "start_unix_ns", (double)r->start_unix_ns);
        cJSON_AddItemToArray(arr, to);
    }
    cJSON_AddStringToObject(o, "netrig_version", NETRIG_VERSION);
    cJSON_AddStringToObject(o, "test", test);
    s = cJSON_AddObjectToObject(o, "summary");
    cJSON_AddNumberToObject(s, "targets", m->n);
    cJSON_AddNumberToObject(s, "targets_ok", m->ok);
    cJSON_AddNumberToObject(s, "throughput_bps", m->throughput_bps);
    cJSON_AddNumberToObject(s, "bytes", (double)m->bytes);
    cJSON_AddNumberToObject(s, "flows", m->flows);
    cJSON_AddNumberToObject(s, "jain_index", m->jain_index);
    cJSON_AddNumberToObject(s, "retransmits", m->retransmits);
    cJSON_AddNumberToObject(s, "transactions_per_s", m->transactions_per_s);
    cJSON_AddNumberToObject(s, "start_spread_us", (double)m->start_spread_ns / 1e3);
    cJSON_AddBoolToObject(o, "partial", m->ok < m->n);
    return o;
}

void report_json_print(FILE *out, cJSON *doc, bool one_line)
{
    char *text = one_line ? cJSON_PrintUnformatted(doc) : cJSON_Print(doc);

    if (text)
        fprintf(out, "%s\n", text);
    free(text);
    cJSON_Delete(doc);
}
