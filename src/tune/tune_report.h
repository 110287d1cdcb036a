/* tune_report: `netrig tune` output, text (80 columns) and JSON. It only reads the plan, the
 * apply and revert results and the journals; it changes nothing. */
#ifndef NETRIG_TUNE_REPORT_H
#define NETRIG_TUNE_REPORT_H

#include "tune_apply.h"
#include "tune_journal.h"
#include "tune_persist.h"
#include "tune_plan.h"

#include <cjson/cJSON.h>
#include <stdio.h>

/* The plan. res NULL = dry run; preview/npreview: the files --persist would write (dry run).
 * apply_cmd: after a dry run, the command line that applies it; after --apply (res set; the
 * changes were printed as they were made), the command that undoes it. */
void tune_report_plan_text(FILE *out, const struct tune_plan *plan,
                           const struct tune_apply_result *res, const struct tune_file *preview,
                           size_t npreview, const char *apply_cmd);
cJSON *tune_report_plan_json(const struct tune_plan *plan, const struct tune_apply_result *res,
                             const struct tune_file *preview, size_t npreview);

void tune_report_revert_text(FILE *out, const struct tune_revert_result *res);
cJSON *tune_report_revert_json(const struct tune_revert_result *res);

/* --list: the journals in dir (names as tune_journal_list gives them). The text shows those
 * applied here (this network namespace and host under sysroot) and counts the others in one
 * line; the JSON lists all, each with its place and "here". */
void tune_report_list_text(FILE *out, const char *dir, const char *sysroot, char **names, size_t n);
cJSON *tune_report_list_json(const char *dir, const char *sysroot, char **names, size_t n);

#endif
