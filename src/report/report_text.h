/* report_text: the human report, aligned for an 80-column terminal. Reads the result model. */
#ifndef NETRIG_REPORT_TEXT_H
#define NETRIG_REPORT_TEXT_H

#include <stdio.h>

#include "result.h"

void report_text_header(FILE *out, const struct run_result *r);
void report_text_interval(FILE *out, const struct run_result *r, const struct side_result *s,
                          const struct interval *iv);
void report_text_summary(FILE *out, const struct run_result *r);
struct multi_result;
void report_text_multi(FILE *out, const struct multi_result *m);

#endif
