/* run_observer: what a run shows while it goes. The client calls it at three moments; the CLI
 * builds one from report_text, report_live or report_json (report_*_observer), so the client
 * never knows how (or whether) its progress is drawn. Every callback may be NULL, and a zeroed
 * observer shows nothing. */
#ifndef NETRIG_RUN_OBSERVER_H
#define NETRIG_RUN_OBSERVER_H

#include "result.h"

struct run_observer {
    /* The server put the run in its queue behind `ahead` exclusive runs; the client waits. */
    void (*on_queued)(void *ctx, int ahead);
    /* The run starts now: r holds the parameters, the server and the start time. */
    void (*on_start)(void *ctx, const struct run_result *r);
    /* Our side closed interval iv (on the engine's thread, outside the hot path). */
    void (*on_interval)(void *ctx, const struct run_result *r, const struct side_result *s,
                        const struct interval *iv);
    void *ctx;
};

static inline void run_observer_queued(const struct run_observer *o, int ahead)
{
    if (o && o->on_queued)
        o->on_queued(o->ctx, ahead);
}

static inline void run_observer_start(const struct run_observer *o, const struct run_result *r)
{
    if (o && o->on_start)
        o->on_start(o->ctx, r);
}

static inline void run_observer_interval(const struct run_observer *o, const struct run_result *r,
                                         const struct side_result *s, const struct interval *iv)
{
    if (o && o->on_interval)
        o->on_interval(o->ctx, r, s, iv);
}

#endif
