/* load_json: a load run as JSON — what 'netrig load -J' prints and the history stores — with
 * its parts' run documents inside, and with series the probes' records and the load flows'
 * time series (--samples). docs/json.md describes every key. */
#ifndef NETRIG_LOAD_JSON_H
#define NETRIG_LOAD_JSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "load_result.h"

cJSON *load_json(const struct load_result *lr, bool series);
/* The notes a reader of the result must see (a probe that did not keep its rate, a part that
 * failed or ended early), at most max. */
void load_warnings(const struct load_result *lr, char (*w)[320], size_t *n, size_t max);

#endif
