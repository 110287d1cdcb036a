/* client: runs a test (stream, rr, crr; TCP or UDP) against a netrig server (or an in-process one) and fills a run_result. */
#ifndef NETRIG_CLIENT_H
#define NETRIG_CLIENT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "params.h"
#include "result.h"

enum client_output { CLIENT_OUT_TEXT, CLIENT_OUT_JSON, CLIENT_OUT_JSON_STREAM };

struct client_opts {
    struct params p;
    char host[256];
    uint16_t port;
    int family;           /* 0, 4 or 6 */
    char bind[256];       /* -B */
    char cpus[256];       /* -A: cpulist, "auto" or "" */
    enum client_output output;
    int timeout_ms;       /* connect and control replies */
    FILE *out;
    char user[64];        /* --user: answer the server's challenge as this user */
    char credentials[256]; /* --credentials FILE (else $NETRIG_SECRET) */
};

/* Returns 0 on a complete test, 1 when results are partial (r->error says why), or a negative
 * errno when no result could be had (err says why). */
int client_run(const struct client_opts *o, volatile sig_atomic_t *stop,
                      struct run_result *r, char *err, size_t errlen);

#endif
