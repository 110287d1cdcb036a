/* cli: subcommand dispatch, option parsing and help. Each subcommand parses its options into
 * the option structs of the module that runs it, then hands over. */
#ifndef NETRIG_CLI_H
#define NETRIG_CLI_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "params.h"

enum cli_exit {
    CLI_EXIT_OK = 0,
    CLI_EXIT_FAIL = 1,     /* the test could not run, or its results are partial */
    CLI_EXIT_USAGE = 2,    /* bad command line */
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

/* Shared parsers: print one line naming the option and value on failure. */
int cli_parse_u32(const char *opt, const char *val, uint32_t lo, uint32_t hi, uint32_t *out);
int cli_parse_port(const char *val, uint16_t *out);
int cli_parse_duration(const char *opt, const char *val, uint64_t *ns);
int cli_parse_size(const char *opt, const char *val, uint64_t hi, uint32_t *out);
int cli_parse_rate(const char *opt, const char *val, uint64_t *out);
/* Prints "netrig: <line>" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
