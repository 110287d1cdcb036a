/* audit_report: renders an audit's findings as the human report (grouped, 80 columns, colour
 * only when asked) or as one JSON document. It only reads the audit. */
#ifndef NETRIG_AUDIT_REPORT_H
#define NETRIG_AUDIT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

struct audit_ctx;

/* Grouped text ending in the one-line verdict. */
void audit_report_text(const struct audit_ctx *ctx, FILE *out, bool colour);

/* {"target": {...}, "verdict": {...}, "findings": [...]}; returns 0 or -ENOMEM. */
int audit_report_json(const struct audit_ctx *ctx, FILE *out);

/* The same document as a string (caller frees), or NULL on allocation failure. */
char *audit_report_json_string(const struct audit_ctx *ctx);

#endif
