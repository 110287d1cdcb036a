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
    CLI_EXIT_FAIL = 1,  /* the command failed, or a run's results are partial */
    CLI_EXIT_USAGE = 2, /* bad command line */
    CLI_EXIT_INTERRUPTED = 130,
};

int cli_main(int argc, char **argv, _Atomic int *stop);

/* One command of the command line (cli.c holds the table of them all): `netrig NAME ARGS`
 * calls run with argv[0] = NAME, `netrig help NAME` and `netrig NAME --help` print help, and
 * `netrig --help` lists every name with its summary. run returns the exit status (cli_exit). */
struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv, _Atomic int *stop);
    const char *summary;     /* for 'netrig --help'; a '\n' goes on on an indented line */
    void (*help)(FILE *out); /* NULL: no help of its own */
};

/* The commands' entry points and help texts, each in its cli_NAME.c (stream, rr and crr in
 * cli_measure.c; history, show and tag in cli_history.c; compare, plot and report in
 * cli_analyze.c). */
struct test_kind;
/* A test kind's command (model/test_kind.h: stream, rr, crr, mptcp): argv[0] names it. */
int cli_measure(int argc, char **argv, _Atomic int *stop);
void cli_help_measure(const struct test_kind *kind, FILE *out);
int cli_load(int argc, char **argv, _Atomic int *stop);
void cli_help_load(FILE *out);
int cli_serve(int argc, char **argv, _Atomic int *stop);
void cli_help_serve(FILE *out);
int cli_mesh(int argc, char **argv, _Atomic int *stop);
void cli_help_mesh(FILE *out);
int cli_exporter(int argc, char **argv, _Atomic int *stop);
void cli_help_exporter(FILE *out);
int cli_audit(int argc, char **argv, _Atomic int *stop);
void cli_help_audit(FILE *out);
int cli_tune(int argc, char **argv, _Atomic int *stop);
void cli_help_tune(FILE *out);
int cli_diagnose(int argc, char **argv, _Atomic int *stop);
void cli_help_diagnose(FILE *out);
int cli_history(int argc, char **argv, _Atomic int *stop);
void cli_help_history(FILE *out);
int cli_show(int argc, char **argv, _Atomic int *stop);
void cli_help_show(FILE *out);
int cli_export(int argc, char **argv, _Atomic int *stop);
void cli_help_export(FILE *out);
int cli_tag(int argc, char **argv, _Atomic int *stop);
void cli_help_tag(FILE *out);
int cli_compare(int argc, char **argv, _Atomic int *stop);
void cli_help_compare(FILE *out);
int cli_sweep(int argc, char **argv, _Atomic int *stop);
void cli_help_sweep(FILE *out);
int cli_plot(int argc, char **argv, _Atomic int *stop);
void cli_help_plot(FILE *out);
int cli_report(int argc, char **argv, _Atomic int *stop);
void cli_help_report(FILE *out);

/* cli_measure.c: parses the options of 'netrig stream|rr|crr' (argv[0] is the command) into
 * o, for the command caller ("sweep", "diagnose"), which runs the test its own way: the
 * options of the command line itself (-J, --json-stream, --live, --no-live, --db, --no-save,
 * --histogram, --iperf3, --from, --logfile, --timestamps, --forceflush) are refused. 0, 1
 * when help was printed, -1 after printing the error, -2 after printing that an option is
 * one of those. */
struct client_opts;
int cli_measure_parse(const struct test_kind *kind, int argc, char **argv, struct client_opts *o,
                      const char *caller);

/* cli_measure_data.c: the options that shape a test's data: -n, -k, -b RATE[/BURST], -S,
 * --dscp, --cport, --bind-dev, --dont-fragment. */
enum { CLI_OPT_DSCP = 700, CLI_OPT_CPORT, CLI_OPT_BIND_DEV, CLI_OPT_DONT_FRAGMENT };
struct cli_data_opts {
    const char *bitrate;           /* -b RATE[/BURST]: applied once -u is known */
    const char *tos_opt;           /* "-S" or "--dscp" once given: they exclude each other */
    bool time_given, length_given; /* -t, -l */
};
/* One of those options (c as getopt_long returns it): 0, or -1 after printing the error. */
int cli_data_opt(int c, const char *arg, struct client_opts *o, struct cli_data_opts *d);
/* Once every option is read: -b applied to UDP or TCP (and TCP's write size for it), -n/-k
 * without -t, and --cport/--bind-dev where they cannot apply. 0, or -1 after the error. */
int cli_data_finish(struct client_opts *o, const struct cli_data_opts *d, bool third_party,
                    uint32_t ntargets);

/* cli_mesh.c: a stored mesh (`show mesh:N`): its matrix as text, or its cells as JSON; the
 * stored meshes (`history --meshes`). 0, or -1 after printing the error. */
struct store;
int cli_mesh_show(struct store *st, long long id, bool json, FILE *out);
int cli_mesh_list(struct store *st, bool json, FILE *out);
/* cli_sweep.c: a stored sweep's points, means and confidence intervals, as text or JSON;
 * *missed (unless NULL): the points that stopped at --repeat without the --ci target. */
int cli_sweep_show(struct store *st, long long id, bool json, FILE *out, uint32_t *missed);
/* cli_group.c: runs measured together saved as a group — one run per target of `-c A -c B`
 * that returned results, with this host's settings and each server's; the run of `--from A`
 * from the daemon's run_result message, with the settings both ends sent. A failure is a
 * one-line warning; with note, says where they went. Return the group id, or 0. `show
 * group:N`: a stored group's targets, their runs and totals, as text or JSON. */
struct multi_result;
long long cli_history_save_multi(const char *db, const struct multi_result *m, FILE *note);
long long cli_history_save_third_party(const char *db, const char *from, const char *target,
                                       const cJSON *msg, FILE *note);
int cli_group_show(struct store *st, long long id, bool json, FILE *out);

/* cli_save.c: saves a measurement's run to the history at db (NULL: the default path); a
 * failure is a one-line warning. With note, says where it went. Returns the run id, or 0. */
struct run_result;
long long cli_history_save(const char *db, const struct run_result *r, FILE *note);
/* The pieces of every save: the history to write (db, else the default path) with its
 * transaction begun, or NULL with err; a save's end (commit, or roll back and warn in one line
 * naming WHAT, "the run was"), which closes st and returns rc or the commit's error; one record
 * saved in a transaction with this host's settings, ADD writing it (returns its id, or 0 after
 * the warning). */
struct store;
struct hostsnap;
struct store *cli_history_begin_save(const char *db, char *err, size_t errlen);
int cli_history_finish_save(struct store *st, int rc, const char *db, const char *what, char *err,
                            size_t errlen);
typedef int (*cli_history_add_fn)(struct store *st, const void *item, const struct hostsnap *hs,
                                  int64_t *id, char *err, size_t errlen);
int64_t cli_history_save_one(const char *db, cli_history_add_fn add, const void *item);
/* An explicit --db (db not NULL) that cannot be written: one line and -1, before any test
 * runs; 0 when it can (or db is NULL: the default path is made when the run is saved). */
int cli_history_check_db(const char *db);
/* cli_tune_save.c: records the tune journal (a path) in the history at db (NULL: the
 * default): its place, target and changes. A failure is a one-line warning. With note, says
 * where it went. Returns its id, or 0. */
long long cli_tune_save(const char *db, const char *journal, FILE *note);
/* Opens the history at db (NULL: the default), printing a one-line error on failure. */
struct store *cli_history_open(const char *db, bool create);
/* Opens it read-only (history, show, export, compare, plot, report); prints a one-line error,
 * or the store's notice. */
struct store *cli_history_read(const char *db);

/* cli_output.c: --logfile FILE, --timestamps[=FORMAT] and --forceflush, as iperf3 has them.
 * The getopt codes of the three options, for every command table that takes them. */
enum cli_output_optcode { CLI_OPT_LOGFILE = 720, CLI_OPT_TIMESTAMPS, CLI_OPT_FORCEFLUSH };
#define CLI_STAMP_DEFAULT "%c " /* iperf3's: the date and time as ctime(3) writes them */
#define CLI_STAMP_MAX     100   /* characters of a --timestamps format */
struct cli_output {
    const char *logfile; /* --logfile: stdout and stderr appended to it */
    const char *stamp;   /* --timestamps: strftime format of each line's prefix; NULL: none */
    bool forceflush;     /* --forceflush: every line written as it ends */
    FILE *out, *err, *prev_err; /* while open: the stamping streams, and the stderr they hide */
};
/* One of the three options (opt: a CLI_OPT_ code; arg NULL for --timestamps alone): 0, or -1
 * after printing the error. */
int cli_output_opt(struct cli_output *co, int opt, const char *arg);
/* Applies them: the log file takes standard output and error; with stamps, *report (else
 * stdout) and stderr stamp each line. 0, or -1 after printing the error. */
int cli_output_open(struct cli_output *co, FILE **report);
/* Flushes and puts stderr back (the log file stays). */
void cli_output_close(struct cli_output *co);

/* Shared parsers: print one line naming the option and value on failure. */
int cli_parse_u32(const char *opt, const char *val, uint32_t lo, uint32_t hi, uint32_t *out);
int cli_parse_port(const char *val, uint16_t *out);
int cli_parse_duration(const char *opt, const char *val, uint64_t *ns);
int cli_parse_size(const char *opt, const char *val, uint64_t hi, uint32_t *out);
int cli_parse_rate(const char *opt, const char *val, uint64_t *out);
/* --sample TIME: 0 (none) or 10ms to 86400s. */
int cli_parse_sample(const char *val, uint64_t *ns);
/* Prints "netrig: <line>" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The one error for an option on cmd's command line, right after getopt_long returned c: c '?'
 * (getopt_long knows no such option), ':' (its value is missing), or an option it parsed that
 * cmd does not take. Prints "unknown option '-x' for cmd: see 'netrig help cmd'" or "option
 * '-t' for cmd needs a value: ..." (a short option named alone, also inside a group like -Jx)
 * and returns -1. */
int cli_opt_error(int c, char *const argv[], const char *cmd);
/* Its "option 'opt' for cmd needs a value: ..." alone, for the options diagnose and sweep pick
 * out of their command lines before getopt_long sees them. Returns -1. */
int cli_opt_no_value(const char *opt, const char *cmd);

#endif
