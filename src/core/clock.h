/* The clocks netrig reads: the monotonic clock for every deadline, interval and latency, and
 * the wall clock for timestamps that leave the process (one-way delay, start times, records).
 * The one place that calls clock_gettime for a plain reading; inline because the hot path of
 * every flow kind reads the monotonic clock. */
#ifndef NETRIG_CLOCK_H
#define NETRIG_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_read_ns(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in nanoseconds, milliseconds and seconds */
static inline uint64_t clock_mono_ns(void) { return clock_read_ns(CLOCK_MONOTONIC); }
static inline int64_t clock_mono_ms(void) { return (int64_t)(clock_mono_ns() / 1000000ULL); }
static inline double clock_mono_s(void) { return (double)clock_mono_ns() / 1e9; }

/* CLOCK_REALTIME (Unix time) in nanoseconds and seconds */
static inline uint64_t clock_real_ns(void) { return clock_read_ns(CLOCK_REALTIME); }
static inline double clock_real_s(void) { return (double)clock_real_ns() / 1e9; }

#endif
