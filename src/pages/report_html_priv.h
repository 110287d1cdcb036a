/* report_html_priv: what the HTML report's files share and nothing else includes. */
#ifndef NETRIG_REPORT_HTML_PRIV_H
#define NETRIG_REPORT_HTML_PRIV_H

#include <stddef.h>
#include <stdio.h>

#include "plot.h"
#include "store.h"
#include "store_run.h"
#include "test_kind.h"

/* s with HTML's special characters escaped. */
void report_html_esc(FILE *out, const char *s);
/* A gnuplot SVG without its XML prologue (freed), or a note why there is none (also in note,
 * when that is still empty). */
void report_html_chart(FILE *out, struct plot_out *po, int rc, const char *err, char *note,
                       size_t notelen);
/* A load run's verdict, phases, advice and its other charts; for other runs the flows' cwnd and
 * RTT over time when the run has TCP_INFO samples (report_html_load.c). */
void report_html_series(FILE *out, struct store *st, const struct store_run *r, char *note,
                        size_t notelen);

/* Does a run of this wire test ("stream", "rr", ...) measure transactions (latency figures)? */
static inline bool report_html_txn(const char *test)
{
    return !test_kind_named_is(test, TEST_KIND_BULK);
}

#endif
