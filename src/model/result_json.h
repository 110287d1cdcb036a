/* result_json: results as JSON, the one encoding the client, the daemon and the history share:
 * the run document (what -J prints, what the history stores, what a daemon sends back for a
 * third-party run) and a side's results as they travel from server to client (decoded
 * defensively). docs/json.md lists every field with its unit. */
#ifndef NETRIG_RESULT_JSON_H
#define NETRIG_RESULT_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "result.h"

/* The run document. */
cJSON *result_json_run(const struct run_result *r);
/* The fields of one interval of side s (of r), added to o: the document's "intervals" and the
 * --json-stream lines share them. */
void result_json_add_interval(cJSON *o, const struct run_result *r, const struct side_result *s,
                              const struct interval *iv);

/* A side's results on the wire, and back. The parser checks every value; expect_flows bounds
 * the flow ids accepted (each at most once), max_intervals the interval count. */
#define RESULT_JSON_MAX_WIRE_INTERVALS 100000
cJSON *result_json_side(const struct side_result *s);
int result_json_side_parse(const cJSON *o, uint32_t expect_flows, uint32_t max_intervals,
                           struct side_result *out, char *err, size_t errlen);

/* Adds to o an interval this end measured, as the server streams it during the run when the
 * client asks (the "interval" message's members; docs/protocol.md). */
void result_json_add_peer_interval(cJSON *o, const struct side_result *s,
                                   const struct interval *iv);
/* Reads one: every number checked (index up to max_index, flow ids below nflows, each once).
 * 0, or -EINVAL/-ENOMEM with out empty. */
int result_json_peer_interval_parse(const cJSON *o, uint32_t nflows, uint32_t max_index,
                                    struct peer_interval *out);

#endif
