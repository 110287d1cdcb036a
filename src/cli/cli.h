/* cli: subcommand dispatch, option parsing and help. Each subcommand parses its options into
 * the option structs of the module that runs it, then hands over. */
#ifndef NETRIG_CLI_H
#define NETRIG_CLI_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "params.h"

enum cli_exit {
    CLI_EXIT_OK = 0,
    CLI_EXIT_FAIL = 1,  /* the test could not run, or its results are partial */
    CLI_EXIT_USAGE = 2, /* bad command line */
    CLI_EXIT_INTERRUPTED = 130,
};

int cli_main(int argc, char **argv, volatile sig_atomic_t *stop);

/* per-subcommand entry points (cli_test.c: stream, rr, crr; cli_serve.c) */
int cli_test(enum params_test kind, int argc, char **argv, volatile sig_atomic_t *stop);
int cli_serve(int argc, char **argv, volatile sig_atomic_t *stop);
void cli_help_stream(FILE *out);
void cli_help_rr(FILE *out);
void cli_help_crr(FILE *out);
void cli_help_serve(FILE *out);
int cli_mesh(int argc, char **argv, volatile sig_atomic_t *stop); /* cli_mesh.c */
void cli_help_mesh(FILE *out);
/* A stored mesh (`show mesh:N`): its matrix as text, or its cells as JSON; the stored meshes
 * (`history --meshes`). 0, or -1 after printing the error. */
struct store;
int cli_mesh_show(struct store *st, long long id, bool json, FILE *out);
int cli_mesh_list(struct store *st, bool json, FILE *out);
int cli_audit(int argc, char **argv, volatile sig_atomic_t *stop);    /* cli_audit.c */
int cli_exporter(int argc, char **argv, volatile sig_atomic_t *stop); /* cli_exporter.c */
void cli_help_exporter(FILE *out);
void cli_help_audit(FILE *out);
int cli_tune(int argc, char **argv, volatile sig_atomic_t *stop); /* cli_tune.c */
void cli_help_tune(FILE *out);
int cli_diagnose(int argc, char **argv, volatile sig_atomic_t *stop); /* cli_diagnose.c */
void cli_help_diagnose(FILE *out);

/* the history commands (cli_history.c: history, show, export, tag; cli_sweep.c: sweep;
 * cli_analyze.c: compare, plot, report) */
struct run_result;
struct client_opts;
struct store;
bool cli_history_command(const char *cmd);
int cli_history(const char *cmd, int argc, char **argv, volatile sig_atomic_t *stop);
int cli_history_help(const char *cmd, FILE *out); /* -1 when cmd is not one of them */
/* Saves a test's run to the history at db (NULL: the default path); a failure is a one-line
 * warning. With note, says where it went. Returns the run id, or 0. */
long long cli_history_save(const char *db, const struct run_result *r, FILE *note);
/* Opens the history at db (NULL: the default), printing a one-line error on failure. */
struct store *cli_history_open(const char *db, bool create);
/* Opens it read-only (history, show, export, compare, plot, report); prints a one-line error,
 * or the store's notice. */
struct store *cli_history_read(const char *db);
int cli_sweep(int argc, char **argv, volatile sig_atomic_t *stop);
void cli_sweep_help(FILE *out);
/* A stored sweep's points, means and confidence intervals, as text or JSON. */
int cli_sweep_show(struct store *st, long long id, bool json, FILE *out);
bool cli_analyze_command(const char *cmd);
int cli_analyze(const char *cmd, int argc, char **argv);
int cli_analyze_help(const char *cmd, FILE *out);
/* cli_test.c: parses the options of 'netrig stream|rr|crr' (argv[0] is the command) into o.
 * 0, 1 when help was printed, -1 after printing the error. */
int cli_test_parse(enum params_test kind, int argc, char **argv, struct client_opts *o);

/* Shared parsers: print one line naming the option and value on failure. */
int cli_parse_u32(const char *opt, const char *val, uint32_t lo, uint32_t hi, uint32_t *out);
int cli_parse_port(const char *val, uint16_t *out);
int cli_parse_duration(const char *opt, const char *val, uint64_t *ns);
int cli_parse_size(const char *opt, const char *val, uint64_t hi, uint32_t *out);
int cli_parse_rate(const char *opt, const char *val, uint64_t *out);
/* Prints "netrig: <line>" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
