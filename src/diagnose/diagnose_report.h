/* diagnose_report: `netrig diagnose` output, text (80 columns) and JSON. It only reads the
 * sample and the verdict (and the run, for the JSON's "run" member). */
#ifndef NETRIG_DIAGNOSE_REPORT_H
#define NETRIG_DIAGNOSE_REPORT_H

#include "diagnose.h"

#include <cjson/cJSON.h>
#include <stdio.h>

struct run_result;

/* what: "10.234.1.1:5301, 1 flow, client sends" or "attached to ..." */
void diagnose_report_text(FILE *out, const char *what, const struct diagnose_sample *s,
                          const struct diagnose_verdict *v);
/* run may be NULL (--during: there is no run of ours). */
cJSON *diagnose_report_json(const char *what, const struct diagnose_sample *s,
                            const struct diagnose_verdict *v, const struct run_result *run);

#endif
