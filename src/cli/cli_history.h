/* cli_history: what the history commands share (cli_history.c, cli_export.c): their options,
 * the run-set arguments, a run's JSON document with what the history knows added. */
#ifndef NETRIG_CLI_HISTORY_H
#define NETRIG_CLI_HISTORY_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "store_run.h"

/* Help lines: --db, and what RUN may be. */
extern const char cli_history_help_db[];
extern const char cli_history_help_runs[];

/* The options' codes, for the list a command allows (with 'J' and 'd'). */
enum {
    HIST_OPT_DB = 300,
    HIST_OPT_LAST,
    HIST_OPT_TITLE,
    HIST_OPT_SINCE,
    HIST_OPT_CSV,
    HIST_OPT_SWEEPS,
    HIST_OPT_MESHES,
    HIST_OPT_SAMPLES,
    HIST_OPT_TAG,
};

struct hist_cli {
    const char *db;
    bool json, csv, del, sweeps, meshes, samples;
    struct store_run_filter f;
    char since[32];
};

/* Parses the options of cmd into hc; `allowed` lists the codes cmd takes (0-terminated). 0, 1
 * when help was printed, -1 after printing the error. The arguments start at optind. */
int cli_history_parse(const char *cmd, int argc, char **argv, const int *allowed,
                      void (*help)(FILE *), struct hist_cli *hc);
/* Resolves the run-set arguments argv[from..argc-1] into ids (freed by the caller); prints the
 * error. */
struct store;
int cli_history_resolve(struct store *st, int argc, char **argv, int from, int64_t **ids,
                        size_t *n);
/* The stored document of run r with its id, role, tags, metrics and host snapshot added. */
cJSON *cli_history_run_json(struct store *st, const struct store_run *r);
/* Prints doc indented on stdout and frees it. */
void cli_history_print_json(cJSON *doc);

#endif
