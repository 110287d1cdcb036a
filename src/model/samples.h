/* samples: a side's time series of its flows (--sample): at each tick, every flow's byte
 * counter and, for flows this side sends over TCP, its TCP_INFO (cwnd, smoothed RTT,
 * retransmits, delivery and pacing rates, busy and limited times). The engine fills it off the
 * hot path; the JSON form (samples_json.c), the history and the plots read it. At most
 * SAMPLES_MAX_ROWS rows are kept: when a run would need more, every other tick is dropped and
 * the period doubles, so the series always covers the whole run. */
#ifndef NETRIG_SAMPLES_H
#define NETRIG_SAMPLES_H

#include <stdbool.h>
#include <stdint.h>

#define SAMPLES_MAX_ROWS (1u << 17) /* ticks x flows kept per side */

/* What a flow's rows hold. */
enum samples_flow { SAMPLES_NONE, SAMPLES_BYTES, SAMPLES_TCP };

struct sample {
    uint64_t bytes; /* moved on the flow so far, warm-up included */
    /* TCP_INFO of the sending socket (rows of SAMPLES_TCP flows whose read worked: tcp) */
    uint64_t delivery_rate_bps, pacing_rate_bps;
    uint64_t busy_us, rwnd_limited_us, sndbuf_limited_us; /* over the connection's life */
    uint32_t cwnd, rtt_us, retrans, mss; /* retrans: segments over the connection's life */
    bool tcp;
};

struct samples {
    uint32_t nflows;
    uint64_t asked_ns;   /* the period asked for */
    uint64_t period_ns;  /* the series' period now: asked_ns doubled once per thinning */
    uint32_t thinned;    /* how often every other tick was dropped to stay in SAMPLES_MAX_ROWS */
    uint32_t n, cap;     /* ticks held, ticks of room */
    double origin_s;     /* when the series began, on the clock of t_s (0 but in a load run) */
    double cpu_s;        /* CPU time the sampling took (the engine's thread, all ticks) */
    double *t_s;         /* each tick's time: seconds since that side started its workers */
    uint8_t *kind;       /* per flow, enum samples_flow */
    struct sample *rows; /* [tick * nflows + flow] */
};

/* Room for the ticks of span_ns (a run's length) at period_ns, within SAMPLES_MAX_ROWS; every
 * flow SAMPLES_BYTES until the caller says otherwise. NULL when out of memory or when nflows
 * is 0 or so large that fewer than 4 ticks would fit. */
struct samples *samples_new(uint32_t nflows, uint64_t period_ns, uint64_t span_ns);
void samples_free(struct samples *s);

/* A new tick at t_s (not before the last one): its nflows rows, zeroed. When the series is full
 * every other tick is dropped first (period_ns doubles). */
struct sample *samples_tick(struct samples *s, double t_s);
/* The row of flow f at tick k. */
static inline const struct sample *samples_row(const struct samples *s, uint32_t k, uint32_t f)
{
    return &s->rows[(uint64_t)k * s->nflows + f];
}
/* Flow f's throughput over tick k: its bytes since the previous tick (tick 0: since origin_s)
 * x 8 over the time between them. */
double samples_bps(const struct samples *s, uint32_t k, uint32_t f);

#endif
