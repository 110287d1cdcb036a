/* result_json: results as JSON, the one encoding the client, the daemon and the history share:
 * the run document (what -J prints, what the history stores, what a daemon sends back for a
 * third-party run) and a side's results as they travel from server to client (decoded
 * defensively). docs/json.md lists every field with its unit. */
#ifndef NETRIG_RESULT_JSON_H
#define NETRIG_RESULT_JSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "result.h"

/* The run document. */
cJSON *result_json_run(const struct run_result *r);
/* The fields of one interval of side s (of r), added to o: the document's "intervals" and the
 * --json-stream lines share them. */
void result_json_add_interval(cJSON *o, const struct run_result *r, const struct side_result *s,
                              const struct interval *iv);

/* Both sides' time series (--sample), {"client": ..., "server": ...} (null for a side without). */
cJSON *result_json_samples(const struct run_result *r);

/* The item at a dotted path ("cpu.local.busy_pct") under o, or NULL: for readers of a -J
 * document (metrics, the load report). */
const cJSON *result_json_at(const cJSON *o, const char *path);

/* The decoders' number reader: o[key] when it is a finite number in [lo, hi] (0), def when
 * absent (0), anything else -EINVAL. Shared by result_json*.c. */
int result_json_num(const cJSON *o, const char *key, double lo, double hi, double def, double *out);

/* A side's load (result_json_hostload.c): null when l is NULL; the parser sets *out to NULL for
 * an absent or null object, else allocates it. 0, -EINVAL or -ENOMEM. */
cJSON *result_json_hostload(const struct side_hostload *l);
cJSON *result_json_hostload_host(const struct hostctr_delta *h); /* the "host" member alone */
int result_json_hostload_parse(const cJSON *o, struct side_hostload **out);

/* A side's results on the wire, and back. The parser checks every value; expect_flows bounds
 * the flow ids accepted (each at most once), max_intervals the interval count, max_ticks the
 * samples' ticks (0: none accepted but an absent or null "samples"). */
#define RESULT_JSON_MAX_WIRE_INTERVALS 100000
cJSON *result_json_side(const struct side_result *s);
int result_json_side_parse(const cJSON *o, uint32_t expect_flows, uint32_t max_intervals,
                           uint32_t max_ticks, struct side_result *out, char *err, size_t errlen);

/* Adds to o an interval this end measured, as the server streams it during the run when the
 * client asks (the "interval" message's members; docs/protocol.md). */
void result_json_add_peer_interval(cJSON *o, const struct side_result *s,
                                   const struct interval *iv);
/* Reads one: every number checked (index up to max_index, flow ids below nflows, each once).
 * 0, or -EINVAL/-ENOMEM with out empty. */
int result_json_peer_interval_parse(const cJSON *o, uint32_t nflows, uint32_t max_index,
                                    struct peer_interval *out);
/* A host snapshot in an object: o[key] the settings (hostsnap_to_json), or o[key_declined]
 * true when a daemon was told not to send them (serve --no-host-snapshot), or o[key_omitted]
 * (a one-line reason) when their text would pass RESULT_JSON_HOST_WIRE_MAX; nothing when hs is
 * NULL. The bound keeps a large host's settings from pushing the results it travels with past
 * CTL_MAX_RESPONSE (a side of 8192 flows and 100,000 intervals stays far under it). */
#define RESULT_JSON_HOST_WIRE_MAX (4u << 20)
void result_json_add_host(cJSON *o, const char *key, const struct hostsnap *hs, bool declined);
/* Reads what result_json_add_host wrote, from a peer (who: "the server", "the daemon at A"):
 * 1 with *out the settings (owned), 0 when there are none (note says why when the peer said:
 * declined, omitted, or o[key_note]: a relay's note on why it has none), or a negative errno when
 * they were refused (out of range, not strings, too many, over RESULT_JSON_HOST_WIRE_MAX: note says
 * why, printable). The caller's results stand either way. */
int result_json_host_parse(const cJSON *o, const char *key, const char *who, struct hostsnap **out,
                           char *note, size_t notelen);

#endif
