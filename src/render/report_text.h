/* report_text: the human report, aligned for an 80-column terminal. Reads the result model. */
#ifndef NETRIG_REPORT_TEXT_H
#define NETRIG_REPORT_TEXT_H

#include <stdio.h>

#include "result.h"
#include "run_observer.h"

void report_text_header(FILE *out, const struct run_result *r);
void report_text_interval(FILE *out, const struct run_result *r, const struct side_result *s,
                          const struct interval *iv);
void report_text_summary(FILE *out, const struct run_result *r);
struct multi_result;
void report_text_multi(FILE *out, const struct multi_result *m);

/* An observer (run_observer.h) that prints the header and one line per interval on out. */
struct run_observer report_text_observer(FILE *out);
/* An observer for runs whose progress is not shown: it only says that a server queued the
 * run. */
struct run_observer report_text_quiet_observer(void);
/* The on_queued of every report observer: one line on stderr, never into the report (ctx is
 * not used). */
void report_text_queued(void *ctx, int ahead);

#endif
