/* store_sweep: a sweep stored as one unit — its definition, one row per point (settings,
 * status, repetitions, mean and confidence half-width of its metric) and the runs of each
 * point — so an interrupted sweep keeps every finished point and can be resumed. */
#ifndef NETRIG_STORE_SWEEP_H
#define NETRIG_STORE_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct store_sweep {
    int64_t id;
    char test[16];
    char title[128];
    char created_at[32], finished_at[32];
    char status[16]; /* running, interrupted, done */
    char metric[40];
    uint32_t repeat_max;
    double ci_level, ci_pct; /* ci_pct 0: no CI target, exactly repeat_max runs */
    char *definition;        /* JSON (malloc'd) */
};

struct store_sweep_point {
    int64_t id;
    uint32_t idx;
    char settings[512]; /* JSON object: varied name -> value as typed */
    char status[16];    /* pending, done */
    uint32_t runs;
    double mean, ci_half;
};

/* Creates a sweep and its points (settings[i] as JSON text), status "running". */
int store_sweep_create(struct store *st, const struct store_sweep *sw, const char *const *settings,
                       uint32_t npoints, int64_t *id, char *err, size_t errlen);
/* The newest sweep that is not done whose definition is exactly def; -ENOENT when none. */
int store_sweep_find_unfinished(struct store *st, const char *def, int64_t *id);
/* Fills sw (free with store_sweep_free); -ENOENT with err when there is no such sweep. */
int store_sweep_get(struct store *st, int64_t id, struct store_sweep *sw, char *err, size_t errlen);
void store_sweep_free(struct store_sweep *sw);
/* The points of a sweep by idx (malloc'd array). */
int store_sweep_points(struct store *st, int64_t id, struct store_sweep_point **pts, uint32_t *n,
                       char *err, size_t errlen);
/* The metric's values over the complete runs of a point (malloc'd), oldest first. */
int store_sweep_point_values(struct store *st, int64_t point, const char *metric, double **vals,
                             size_t *n);
/* Every run of a point (partial ones too), oldest first (malloc'd). */
int store_sweep_point_runs(struct store *st, int64_t point, int64_t **ids, size_t *n);
int store_sweep_point_update(struct store *st, const struct store_sweep_point *p, char *err,
                             size_t errlen);
int store_sweep_set_status(struct store *st, int64_t id, const char *status, char *err,
                           size_t errlen);
/* Every sweep, oldest first (definition left NULL). */
int store_sweep_list(struct store *st, int (*fn)(const struct store_sweep *sw, void *arg),
                     void *arg);

#endif
