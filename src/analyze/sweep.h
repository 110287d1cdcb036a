/* sweep: a test run over the cartesian product of varied parameters. A sweep definition is
 * the test, its options as typed, the --vary lists, the repeat cap and the confidence target;
 * each point's command line is built from it and parsed by the test's own option parser, and
 * a point is finished when the confidence interval of its metric is narrow enough or the
 * repeat cap is reached (netperf's -I/-i idea). Pure logic: cli_sweep.c runs and stores. */
#ifndef NETRIG_SWEEP_H
#define NETRIG_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "params.h"

#define SWEEP_MAX_VARY   8
#define SWEEP_MAX_VALUES 64
#define SWEEP_MAX_POINTS 4096
#define SWEEP_MAX_ARGS   128

struct sweep_vary {
    char name[48];   /* as typed: flows, window, C, ... */
    char option[64]; /* what the test parser gets: --parallel, -C, ... */
    bool flag;       /* an on/off option (--nodelay, --reverse, ...) */
    bool direction;  /* "direction": forward, reverse, bidir */
    uint32_t nvalues;
    char values[SWEEP_MAX_VALUES][64];
};

struct sweep_def {
    enum params_test kind;
    int nbase;
    char base[SWEEP_MAX_ARGS][256]; /* the test's options as typed */
    uint32_t nvary;
    struct sweep_vary vary[SWEEP_MAX_VARY];
    uint32_t repeat; /* repetitions at most (exactly, without a CI target) */
    double ci_level; /* e.g. 0.95 */
    double ci_pct;   /* target half-width in % of the mean; 0 = none */
    char metric[40];
};

/* Parses "NAME=V1,V2,..." into v; err names what is wrong. */
int sweep_parse_vary(const char *arg, struct sweep_vary *v, char *err, size_t errlen);
/* Parses "--ci LEVEL[,WIDTH%]" such as "95,2%" (width defaults to 2%). */
int sweep_parse_ci(const char *arg, double *level, double *pct, char *err, size_t errlen);

/* Number of points (product of the value counts); 0 when over SWEEP_MAX_POINTS. */
uint32_t sweep_npoints(const struct sweep_def *d);
/* Value index of each vary at point idx; the first --vary changes slowest. */
void sweep_point_index(const struct sweep_def *d, uint32_t idx, uint32_t *vi);
/* The test's argv for point idx: command name, base options, then the varied ones.
 * Strings are malloc'd: free with sweep_free_argv. */
int sweep_point_argv(const struct sweep_def *d, uint32_t idx, int *argc, char ***argv);
void sweep_free_argv(int argc, char **argv);
/* "flows=2 window=4M" */
void sweep_point_label(const struct sweep_def *d, uint32_t idx, char *buf, size_t len);
/* {"flows":"2","window":"4M"} (malloc'd) */
char *sweep_point_settings(const struct sweep_def *d, uint32_t idx);
/* The whole definition as canonical JSON (malloc'd): equal text = the same sweep. */
char *sweep_definition(const struct sweep_def *d);

/* Did a point meet the confidence target ci_pct (0: there is none, always met)? Its LEVEL
 * interval's half-width must be within ci_pct % of the mean, over 2 runs or more. A point
 * stopped by the repeat cap without it is finished but did not reach it. */
bool sweep_ci_reached(double ci_pct, uint32_t runs, double mean, double half);
/* The half-width as % of the mean (0 for a zero mean). */
double sweep_ci_pct(double mean, double half);

/* Is a point with these metric values finished? Fills the mean and the CI half-width. At
 * least min(3, repeat) values are needed before the CI target can end a point early. */
bool sweep_point_done(const struct sweep_def *d, const double *vals, size_t n, double *mean,
                      double *half);

#endif
