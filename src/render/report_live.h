/* report_live: the --live view of a running test. Every interval it redraws one compact
 * table in place with plain ANSI escapes (cursor up, erase down): per-flow and total rate,
 * retransmits, RTT, CPU, time left. Reads the result model only. */
#ifndef NETRIG_REPORT_LIVE_H
#define NETRIG_REPORT_LIVE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "result.h"
#include "run_observer.h"

enum report_live_mode {
    REPORT_LIVE_AUTO, /* on a capable terminal for runs longer than 10 s */
    REPORT_LIVE_ON,   /* --live: on a capable terminal */
    REPORT_LIVE_OFF,  /* --no-live */
};

/* What one redraw needs to remember: the height of the frame drawn last. Zero it to start. */
struct report_live {
    int drawn;
    FILE *out; /* where report_live_observer draws */
};

/* Runs (omit included) longer than this are drawn live by default. */
#define REPORT_LIVE_AUTO_NS (10ULL * 1000000000ULL)

/* A terminal the view can be drawn on: out is a tty and TERM is set and not "dumb". */
bool report_live_capable(FILE *out);
/* Whether to draw live: text output to a capable terminal, and with AUTO a run longer than
 * REPORT_LIVE_AUTO_NS. Everything else (pipes, files, -J, a dumb terminal) gets lines. */
bool report_live_wanted(enum report_live_mode m, FILE *out, bool text_output, uint64_t run_ns);

/* Draws the frame for interval iv of side s (the client's), over the previous frame. */
void report_live_interval(struct report_live *l, FILE *out, const struct run_result *r,
                          const struct side_result *s, const struct interval *iv);

/* An observer (run_observer.h) that redraws the table on out every interval; l keeps what was
 * drawn and must outlive the run. No header: the table has its own title. */
struct run_observer report_live_observer(struct report_live *l, FILE *out);

/* The frame's text without escapes, for tests: at most rows lines of at most cols - 1
 * characters into buf. Returns the number of lines. */
int report_live_frame(char *buf, size_t len, int rows, int cols, const struct run_result *r,
                      const struct side_result *s, const struct interval *iv);

#endif
