/* metric: the named figures of a run that history, compare, sweep and plots work with
 * (throughput_bps, latency_p99_us, ...): their units, which way is better, and their values
 * read from a run_result (or, for runs a daemon served, from its side_result, or from a -J
 * document that another host sent back). */
#ifndef NETRIG_METRIC_H
#define NETRIG_METRIC_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "result.h"

enum metric_unit { METRIC_BPS, METRIC_US, METRIC_PCT, METRIC_COUNT, METRIC_RATIO, METRIC_PER_S };

struct metric_def {
    const char *name;
    const char *label; /* a few words for tables and axes */
    enum metric_unit unit;
    bool higher_is_better;
};

struct metric_value {
    const struct metric_def *def;
    double value;
};

#define METRIC_MAX 48

/* Every metric, in display order. */
const struct metric_def *metric_all(size_t *n);
/* The definition of a name, or NULL. */
const struct metric_def *metric_find(const char *name);
/* The figure a test is judged by: throughput_bps for streams, latency_increase_p50_us for load
 * runs, transactions_per_s otherwise. */
const char *metric_primary(const char *test);

/* The metrics that apply to a client's run; returns how many were written (at most max). */
size_t metric_from_run(const struct run_result *r, struct metric_value *out, size_t max);
/* The metrics of a daemon's own side of a test. */
size_t metric_from_side(const struct params *p, const struct side_result *s,
                        struct metric_value *out, size_t max);

/* The same metrics read from a run's -J document (docs/json.md) and its parameters p: for a
 * run whose results came back as that document (a daemon's third-party test, a mesh cell). */
size_t metric_from_doc(const struct params *p, const cJSON *doc, struct metric_value *out,
                       size_t max);

/* The metrics of a load run (netrig load): throughput each way under load, the latency
 * increase and the probe figures behind it. */
struct load_result;
size_t metric_from_load(const struct load_result *lr, struct metric_value *out, size_t max);

/* "21.37 Gbit/s", "12.3 us", "0.52 %", "1234": a value in the metric's unit for people. */
void metric_format(const struct metric_def *d, double v, char *buf, size_t len);
/* The unit as a short suffix for axis labels: "bit/s", "us", "%", "". */
const char *metric_unit_name(enum metric_unit u);

#endif
