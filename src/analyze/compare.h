/* compare: two runs or two sets of runs side by side — first what was compared (the tests'
 * parameters that differ, and warnings when the tests differ in kind or a set mixes
 * parameters; rr against stream is refused unless forced), then every metric's mean on each
 * side with the change in % and Welch's t-test at 95% where either side has repetitions, then
 * the host settings that differ, the client's and the server's apart. Reads the history only.
 * compare_params.c and compare_host.c hold the parameter and host parts. */
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
#define COMPARE_FORCE 1u /* compare_sets flag: compare rr and crr against stream anyway */

struct compare_row {
    const struct metric_def *def;
    struct stats_sample a, b;
    double change_pct; /* (b - a) / |a| x 100; NAN when a's mean is 0 */
    struct stats_welch w;
    bool significant; /* w.valid and p < 1 - COMPARE_LEVEL */
    bool own_basis;   /* a CPU cost row counting netrig's own CPU on both sides */
};

/* A test parameter whose values differ between the sets, or within one. */
struct compare_param {
    const char *name;  /* as in the params JSON: "flows", "write_size", ...; "test", "server" */
    const char *label; /* "flows", "write size", ... */
    char *a, *b;       /* each set's values, "x | y" when it mixes them; "n/a" when none of its
                          runs has the parameter */
    bool mixed;        /* a set holds more than one value */
};

/* A tune journal the history recorded between the two sets (store_tune). */
struct compare_tune {
    char applied_at[32], where[200], target[96];
    char *changes; /* JSON array [{name, old, new, result}] */
};

struct compare_warning {
    const char *kind; /* "test_kind", "role", "mixed_parameters" */
    char *message;
};

/* One host setting that differs: each set's values ("" when absent, "x | y" when they vary
 * within the set). */
struct compare_host {
    char *key, *a, *b;
};

/* A run of a set whose side was not recorded. */
struct compare_missing {
    int64_t run;
    char set; /* 'a' or 'b' */
    char note[200];
};

/* One side's host settings: the client's or the server's. */
struct compare_side {
    const char *name; /* "client", "server" */
    bool compared;    /* both sets have a run with this side recorded */
    struct compare_host *diff;
    size_t ndiff;
    struct compare_missing *missing;
    size_t nmissing;
    size_t unrecorded; /* settings only a newer snapshot records: not compared */
};

struct compare_result {
    const int64_t *a, *b;
    size_t na, nb;
    struct compare_param *params;
    size_t nparams;
    struct compare_warning *warnings;
    size_t nwarnings;
    struct compare_row rows[METRIC_MAX];
    size_t nrows;
    struct compare_side side[2]; /* client, server */
    /* netrig diagnose's verdicts of each set's runs ("rwnd_limited | ok"), NULL when none of
     * its runs is a diagnosis */
    char *verdict[2];
    /* netrig tune --apply runs the history recorded after A's last run started and before
     * B's first one did */
    struct compare_tune *tunes;
    size_t ntunes;
    bool cost_mixed; /* the runs' CPU cost figures are on different bases: rows left out */
};

/* t's changes as "NAME OLD -> NEW; ..." (with "(refused)" etc. after one not applied). */
void compare_tune_changes(const struct compare_tune *t, char *buf, size_t len);

/* Compares set b against set a. A transactional test (rr, crr) against a stream is refused
 * with -EDOM and a one-line err unless flags has COMPARE_FORCE. */
int compare_sets(struct store *st, const int64_t *a, size_t na, const int64_t *b, size_t nb,
                 unsigned flags, struct compare_result *out, char *err, size_t errlen);
void compare_free(struct compare_result *c);
/* B's mean against A's in %: NAN (no row figure) unless A is above 0 and B not below it; a
 * ratio of figures that can be 0 or negative (a latency increase of -0.03 ms, say) means
 * nothing. */
double compare_change_pct(double a, double b);

/* "better", "worse", or "" when not significant or untested. */
const char *compare_verdict(const struct compare_row *r);
cJSON *compare_json(const struct compare_result *c, const char *name_a, const char *name_b);
void compare_text(const struct compare_result *c, const char *name_a, const char *name_b,
                  FILE *out);

/* Adds v to the " | "-separated distinct values in *list (malloc'd). 0 or -ENOMEM. */
int compare_join(char **list, const char *v);
/* Adds a warning (message printf-formatted). 0 or -ENOMEM. */
int compare_warn(struct compare_result *c, const char *kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* compare_params.c: the parameter rows and warnings of c (c->a, c->b set); -EDOM with err
 * for rr against stream without COMPARE_FORCE. */
int compare_params(struct store *st, struct compare_result *c, unsigned flags, char *err,
                   size_t errlen);
void compare_params_free(struct compare_result *c);
/* compare_host.c: both sides' host differences of c. 0 or -ENOMEM. */
int compare_host(struct store *st, struct compare_result *c);
void compare_host_free(struct compare_result *c);

#endif
