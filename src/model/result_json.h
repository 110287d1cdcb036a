/* report_json: the JSON forms of results: the -J document, --json-stream lines, and a side's
 * results as they travel from server to client (decoded defensively). docs/json.md lists
 * every field with its unit. */
#ifndef NETRIG_REPORT_JSON_H
#define NETRIG_REPORT_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "result.h"

cJSON *report_json_cpu(const struct cpu_usage *c);
/* The whole -J document. */
cJSON *report_json_run(const struct run_result *r);
/* One --json-stream line: {"event":"interval", ...}. */
cJSON *report_json_interval(const struct run_result *r, const struct side_result *s,
                            const struct interval *iv);

/* Tests against several servers: each target's document plus the totals (multi.h). */
struct multi_result;
cJSON *report_json_multi(const struct multi_result *m);

/* A side's results on the wire, and back. The parser checks every value; expect_flows bounds
 * the flow ids accepted (each at most once), max_intervals the interval count. */
#define REPORT_JSON_MAX_WIRE_INTERVALS 100000
cJSON *report_json_side(const struct side_result *s);
int report_json_side_parse(const cJSON *o, uint32_t expect_flows, uint32_t max_intervals,
                           struct side_result *out, char *err, size_t errlen);

#endif
