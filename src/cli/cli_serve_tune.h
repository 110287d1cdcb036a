/* cli_serve_tune: `netrig serve --metrics --tune-state DIR`: the daemon's metrics followed by
 * the host's drift from what `netrig tune --apply` journaled in DIR (tune_drift). */
#ifndef NETRIG_CLI_SERVE_TUNE_H
#define NETRIG_CLI_SERVE_TUNE_H

#include "prom.h"

struct cli_tune_metrics {
    void *metrics;        /* the daemon's (metrics_render's ctx) */
    char state_dir[4096]; /* absolute: the daemon changes to "/" */
};

/* A prom_render_fn: ctx is a struct cli_tune_metrics. */
void cli_tune_metrics_render(void *ctx, struct prom_buf *b);

#endif
