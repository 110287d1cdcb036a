/* cli_measure: what 'netrig stream|rr|crr|mptcp' parsed from its command line (cli_measure.c), and
 * the run it asks for (cli_measure_run.c). Private to those two files. */
#ifndef NETRIG_CLI_MEASURE_H
#define NETRIG_CLI_MEASURE_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "client.h"
#include "multi.h"
#include "report_live.h"
#include "test_kind.h"

enum measure_output { OUT_TEXT, OUT_JSON, OUT_JSON_STREAM };

struct measure_cli {
    struct client_opts o;
    enum measure_output output;             /* -J, --json-stream, else text */
    FILE *out;                              /* the report */
    const char *targets[MULTI_MAX_TARGETS]; /* -c, given once or more */
    const char *from;                       /* --from: a daemon runs the measurement for us */
    uint32_t ntargets;
    const struct test_kind *kind; /* the command's base kind (-u, --mptcp may vary it) */
    const char *histogram;        /* --histogram FILE */
    const char *db;               /* --db PATH: the history (NULL = default) */
    bool no_save;                 /* --no-save */
    bool pps_given;               /* --pps: UDP only, refused on TCP streams */
    bool iperf3, port_given;      /* --iperf3: an iperf3 server, port 5201 unless -p */
    struct cli_data_opts data;    /* -n, -k, -b, -S, --dscp, --cport, ... (cli_measure_data.c) */
    enum report_live_mode live;   /* --live / --no-live (default: auto) */
    bool sample_given, samples;   /* --sample TIME, --samples */
    struct cli_output oo;         /* --logfile, --timestamps, --forceflush */
    const char *caller;           /* parsed for 'netrig sweep' or 'diagnose': no output options */
};

/* Runs what mc asks (one server, several, or a third-party test) and prints the report; the
 * command's exit status. */
int cli_measure_run(struct measure_cli *mc, _Atomic int *stop);

#endif
