/* samples_json: a side's time series as JSON — in the -J document with --samples, in the
 * server's results on the wire (decoded defensively: a server's answer is input from the
 * network), and in 'netrig export --samples'. The layout is by column: one array per field and
 * flow, the tick times once (docs/json.md). */
#ifndef NETRIG_SAMPLES_JSON_H
#define NETRIG_SAMPLES_JSON_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "samples.h"

/* The object of one side. ids: the flow number each flow is shown as (NULL: its index). */
cJSON *samples_json(const struct samples *s, const uint32_t *ids);
/* Reads what samples_json wrote: at most expect_flows flows (ids 0..expect_flows-1, each once)
 * and max_ticks ticks, every value in range, times in order. 0 with *out set (NULL when o is
 * absent or null), or -EPROTO with a one-line err. */
int samples_json_parse(const cJSON *o, uint32_t expect_flows, uint32_t max_ticks,
                       struct samples **out, char *err, size_t errlen);

#endif
