/* report_html: one self-contained HTML page (inline SVG charts, inline CSS, no scripts and no
 * network fetches — its Content-Security-Policy forbids them) for a stored run, a sweep or a
 * comparison, and a mesh plan's matrices: charts, tables and the host snapshot. Reads the
 * history only. */
#ifndef NETRIG_REPORT_HTML_H
#define NETRIG_REPORT_HTML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "store.h"

/* Each writes a whole page to out. A chart that cannot be drawn (no gnuplot) becomes a note
 * in the page and in note (else note is ""); err is set only when nothing could be written. */
int report_html_run(struct store *st, int64_t id, FILE *out, char *note, size_t notelen, char *err,
                    size_t errlen);
int report_html_sweep(struct store *st, int64_t id, FILE *out, char *note, size_t notelen,
                      char *err, size_t errlen);
/* A mesh plan's run: a matrix per test (source rows, destination columns), each cell
 * coloured by throughput (stream) or latency p50 (rr, crr), failed cells with their reason. */
int report_html_mesh(struct store *st, int64_t id, FILE *out, char *note, size_t notelen, char *err,
                     size_t errlen);
/* compare A B: what compare prints — the parameters that differ and the warnings, the metrics,
 * the client's and the server's host settings that differ. flags as for compare_sets; returns
 * its error (-EDOM: rr against stream without COMPARE_FORCE) with err. */
int report_html_compare(struct store *st, const int64_t *a, size_t na, const char *name_a,
                        const int64_t *b, size_t nb, const char *name_b, unsigned flags, FILE *out,
                        char *note, size_t notelen, char *err, size_t errlen);

#endif
