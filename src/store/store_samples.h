/* store_samples: the time series of a run in the history — each side's samples (--sample) and
 * the latency probes of 'netrig load' — written with the run and read back for plots, reports
 * and 'netrig export --samples'. */
#ifndef NETRIG_STORE_SAMPLES_H
#define NETRIG_STORE_SAMPLES_H

#include <stddef.h>
#include <stdint.h>

#include "samples.h"
#include "store.h"
#include "txnlog.h"

/* part: "" for a test's run, or the part of a load run ("up", "down", "tcp_probe"); side
 * "client" or "server"; t_off_s is added to every tick time (a load run's parts share its
 * clock). Inside store_begin .. store_commit. */
int store_add_samples(struct store *st, int64_t id, const char *part, const char *side,
                      const struct samples *s, double t_off_s, char *err, size_t errlen);
/* A load run's probe ("udp" or "tcp"): every record of log, shifted by t_off_ns. */
int store_add_probes(struct store *st, int64_t id, const char *probe, const struct txnlog *log,
                     int64_t t_off_ns, char *err, size_t errlen);

/* One side's samples of run id: 1 with *out (samples_free it), 0 when that side has none, or a
 * negative errno with err. */
int store_run_samples(struct store *st, int64_t id, const char *part, const char *side,
                      struct samples **out, char *err, size_t errlen);
/* A load run's probe records, in time order: 1 with out filled (txnlog_fini it), 0 when none. */
int store_run_probes(struct store *st, int64_t id, const char *probe, struct txnlog *out, char *err,
                     size_t errlen);

#endif
