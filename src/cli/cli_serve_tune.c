/* cli_serve_tune: the netrig_tune_* families beside the daemon's metrics. */
#include "cli_serve_tune.h"

#include "log.h"
#include "metrics.h"
#include "tune_drift.h"

#include <stdio.h>
#include <stdlib.h>

void cli_tune_metrics_render(void *ctx, struct prom_buf *b)
{
    const struct cli_tune_metrics *tm = ctx;
    struct tune_drift *d = malloc(sizeof(*d));
    char err[512] = "", labels[2 * TUNE_NAME_LEN + 64], name[2 * TUNE_NAME_LEN];
    int rc;

    metrics_render(tm->metrics, b);
    if (!d) {
        b->oom = true;
        return;
    }
    rc = tune_drift_scan(tm->state_dir, d, err, sizeof(err));
    if (rc)
        LOG_WARN("--tune-state: %s", err);
    prom_family(b, "netrig_tune_scan_ok", "gauge",
                "1 when the tune journals of --tune-state could be read, else 0 (logged).");
    prom_sample(b, "netrig_tune_scan_ok", NULL, rc == 0);
    if (rc) {
        free(d);
        return;
    }
    prom_family(b, "netrig_tune_journals", "gauge",
                "netrig tune --apply journals whose values are still applied (not reverted).");
    prom_sample(b, "netrig_tune_journals", NULL, d->journals);
    prom_family(b, "netrig_tune_applied_timestamp_seconds", "gauge",
                "When the newest of them finished (Unix time; 0 = none or unknown).");
    prom_sample(b, "netrig_tune_applied_timestamp_seconds", NULL, d->applied_unix);
    prom_family(b, "netrig_tune_values", "gauge",
                "sysctl and sysfs values netrig tune applied, followed here.");
    prom_sample(b, "netrig_tune_values", NULL, (double)d->n);
    prom_family(b, "netrig_tune_drifted_values", "gauge",
                "Of those, how many hold another value now (or cannot be read).");
    prom_sample(b, "netrig_tune_drifted_values", NULL, d->drifted);
    prom_family(b, "netrig_tune_drifted", "gauge",
                "1 when the setting no longer holds the value netrig tune applied, else 0.");
    for (size_t i = 0; i < d->n; i++) {
        prom_escape(d->item[i].name, name, sizeof(name));
        snprintf(labels, sizeof(labels), "kind=\"%s\",name=\"%s\"", d->item[i].kind, name);
        prom_sample(b, "netrig_tune_drifted", labels, d->item[i].drifted);
    }
    free(d);
}
