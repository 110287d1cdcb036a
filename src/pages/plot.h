/* plot: charts of stored runs and sweeps through gnuplot — per-flow and total throughput over
 * time with retransmits, rr/crr transaction rate and latency CDF, sweep curves with confidence
 * error bars, and a comparison's values side by side. The data and a script go into a private
 * temporary directory; gnuplot's exit status is checked. Reads the history only. */
#ifndef NETRIG_PLOT_H
#define NETRIG_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

enum plot_format { PLOT_SVG, PLOT_PNG };

/* Which chart of a run (--chart): the run's own (a load run's is ALL), a load run's "all in
 * one" or its latency CDF, or the flows' cwnd and RTT over time (runs with samples). */
enum plot_chart { PLOT_CHART_DEFAULT, PLOT_CHART_ALL, PLOT_CHART_CDF, PLOT_CHART_FLOWS };
/* "all", "cdf", "flows" -> the chart, or -1. */
int plot_chart_of(const char *name);

struct plot_out {
    enum plot_format format;
    const char *path; /* where to write; NULL: return SVG text in svg instead */
    char *svg;        /* malloc'd when path is NULL */
};

/* PLOT_SVG or PLOT_PNG from a file name's extension, or -1. */
int plot_format_of(const char *path);

/* One run's chart (a load run's: PLOT_CHART_ALL). */
int plot_run(struct store *st, int64_t id, struct plot_out *o, char *err, size_t errlen);
/* One of a run's charts. */
int plot_run_chart(struct store *st, int64_t id, enum plot_chart chart, struct plot_out *o,
                   char *err, size_t errlen);
/* A sweep's metric (NULL: the sweep's own) against its first --vary, one line per combination
 * of the others, with confidence-interval error bars. */
int plot_sweep(struct store *st, int64_t id, const char *metric, struct plot_out *o, char *err,
               size_t errlen);
/* Each run's metric in sets a and b, with each set's mean and 95% interval; the axis names
 * the sets name_a and name_b (their tags: before, after; NULL: "A", "B"). */
int plot_compare(struct store *st, const int64_t *a, size_t na, const int64_t *b, size_t nb,
                 const char *name_a, const char *name_b, const char *metric, struct plot_out *o,
                 char *err, size_t errlen);

#endif
