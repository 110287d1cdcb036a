/* engine_series: what a side records over time besides its intervals — the --sample time
 * series of its flows (bytes and TCP_INFO at each tick) and, for netrig load's probes, every
 * transaction's log, one per worker merged after join. Read off the hot path. */
#ifndef NETRIG_ENGINE_SERIES_H
#define NETRIG_ENGINE_SERIES_H

#include "flow.h"
#include "samples.h"
#include "worker.h"

#include <stdbool.h>
#include <stdint.h>

/* A log per worker, sized for an open loop of rate_tps over total_ns (a closed loop's length is
 * not known: what does not fit is counted); 0 or -ENOMEM. */
int engine_series_logs(struct worker *workers, uint32_t nworkers, uint64_t rate_tps,
                       uint64_t total_ns);
/* The workers' logs merged in time order, times since t0 (owned; NULL: out of memory). */
struct txnlog *engine_series_merge(struct worker *workers, uint32_t nworkers, uint64_t t0);
/* Room for the series of nflows flows every period_ns over total_ns; the flows that send over
 * TCP (when the kind has TCP_INFO) get its columns. NULL: out of memory. */
struct samples *engine_series_new(const struct flow *flows, uint32_t nflows, bool has_tcpinfo,
                                  uint64_t period_ns, uint64_t total_ns);
/* One tick at t_s seconds since the side's start: every flow's bytes, TCP_INFO where kept; what
 * it costs goes to smp->cpu_s. */
void engine_series_tick(struct samples *smp, const struct flow *flows, uint32_t nflows, double t_s);

#endif
