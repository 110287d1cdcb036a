/* plot_load: the charts of 'netrig load' runs — flent's "all in one" (throughput up and down
 * and every probe's latency over time, the phases shaded), the probes' latency idle against
 * loaded as 1 - CDF on log scales (the tail) — and for any run with --sample time series each
 * TCP flow's congestion window and smoothed RTT over time. Reads the history only. */
#ifndef NETRIG_PLOT_LOAD_H
#define NETRIG_PLOT_LOAD_H

#include <stdint.h>

#include "plot.h"
#include "store.h"

/* PLOT_CHART_ALL or _CDF (load runs), _FLOWS (any run with samples). 0, or -1 with err. */
int plot_load_chart(struct store *st, int64_t id, enum plot_chart chart, struct plot_out *o,
                    char *err, size_t errlen);

#endif
