/* compare: two runs or two sets of runs side by side — every metric's mean on each side, the
 * change in %, Welch's t-test at 95% where either side has repetitions — and the host
 * settings that differ between the two sides' snapshots. Reads the history only. */
#ifndef NETRIG_COMPARE_H
#define NETRIG_COMPARE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "metric.h"
#include "stats.h"
#include "store.h"

#define COMPARE_LEVEL 0.95

struct compare_row {
    const struct metric_def *def;
    struct stats_sample a, b;
    double change_pct; /* (b - a) / |a| x 100; NAN when a's mean is 0 */
    struct stats_welch w;
    bool significant; /* w.valid and p < 1 - COMPARE_LEVEL */
};

struct compare_host {
    char key[HOSTSNAP_KEY_LEN];
    char a[HOSTSNAP_VAL_LEN], b[HOSTSNAP_VAL_LEN]; /* "" when absent; "x | y" when it varies */
};

struct compare_result {
    const int64_t *a, *b;
    size_t na, nb;
    struct compare_row rows[METRIC_MAX];
    size_t nrows;
    struct compare_host *host;
    size_t nhost;
};

/* Compares set b against set a. */
int compare_sets(struct store *st, const int64_t *a, size_t na, const int64_t *b, size_t nb,
                 struct compare_result *out, char *err, size_t errlen);
void compare_free(struct compare_result *c);

/* "better", "worse", or "" when not significant or untested. */
const char *compare_verdict(const struct compare_row *r);
cJSON *compare_json(const struct compare_result *c, const char *name_a, const char *name_b);
void compare_text(const struct compare_result *c, const char *name_a, const char *name_b,
                  FILE *out);

#endif
