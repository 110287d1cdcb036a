/* report_json: the JSON output of the measurement commands: the -J document, --json-stream
 * lines, the multi-target document. The run document itself is result_json's; docs/json.md
 * lists every field. */
#ifndef NETRIG_REPORT_JSON_H
#define NETRIG_REPORT_JSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

#include "result.h"
#include "run_observer.h"

/* The document at the end of a run: -J's, or with stream the last --json-stream line (the same
 * document with "event": "end"). */
cJSON *report_json_document(const struct run_result *r, bool stream);
/* The document of a run that could not start: {netrig_version, test, error} ("event": "error"
 * first with stream). */
cJSON *report_json_failure(const char *test, const char *err, bool stream);
/* One --json-stream line: {"event":"interval", ...}. */
cJSON *report_json_interval(const struct run_result *r, const struct side_result *s,
                            const struct interval *iv);

/* An observer (run_observer.h) for JSON output: with stream (--json-stream) it prints one
 * interval line on out as each interval ends; without (-J) nothing until the document. */
struct run_observer report_json_observer(FILE *out, bool stream);

/* Tests against several servers: each target's document plus the totals (multi.h). */
struct multi_result;
cJSON *report_json_multi(const struct multi_result *m);

/* Prints doc on out and frees it: indented, or on one line (--json-stream). */
void report_json_print(FILE *out, cJSON *doc, bool one_line);

#endif
