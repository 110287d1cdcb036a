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

/* The time ms milliseconds from now on clock id, as the absolute timespec a timed wait takes
 * (pthread_cond_timedwait reads CLOCK_REALTIME unless its condition's attributes name another). */
static inline struct timespec clock_deadline_ts(clockid_t id, int64_t ms)
{
    uint64_t ns = clock_read_ns(id) + (uint64_t)(ms > 0 ? ms : 0) * 1000000ULL;

    return (struct timespec){.tv_sec = (time_t)(ns / 1000000000ULL),
                             .tv_nsec = (long)(ns % 1000000000ULL)};
}

#endif
