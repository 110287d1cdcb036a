/* mesh: a plan of tests between hosts that run `netrig serve --allow-third-party`, each cell
 * asked of its source daemon (thirdparty_ctl.h), scheduled so that no host takes part in two tests
 * at once unless the plan says "parallel". A host that is down fails its cells with the
 * reason; the rest of the plan runs. */
#ifndef NETRIG_MESH_H
#define NETRIG_MESH_H

#include <cjson/cJSON.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "client.h"
#include "params.h"

#define MESH_MAX_HOSTS 64
#define MESH_MAX_TESTS 16

struct mesh_host {
    char name[64];
    char address[256];
    uint16_t port;
};

struct mesh_cell {
    uint32_t test, src, dst;
    int status; /* 0 not run, 1 complete, 2 partial, -1 failed */
    char error[256];
    cJSON *result;  /* the run document the source daemon sent back */
    int64_t run_id; /* the run it is stored as in the history; 0 = not stored */
};

struct mesh_plan {
    uint32_t nhosts, ntests, ncells;
    struct mesh_host hosts[MESH_MAX_HOSTS];
    struct params tests[MESH_MAX_TESTS];
    bool parallel;
    int timeout_ms;
    struct mesh_cell *cells;
};

/* Reads a plan (JSON; docs/mesh.md). Errors name the file and the element at fault. */
int mesh_load(const char *path, struct mesh_plan *plan, char *err, size_t errlen);
/* Runs every cell; progress lines go to progress (NULL: quiet). base supplies the client
 * options that are not in the plan (user, credentials, bind). done (may be NULL) is called on
 * this thread once for every cell: as it finishes, after its progress line, and at the end
 * for cells an interruption left unrun. Returns the failed cell count. */
uint32_t mesh_run(struct mesh_plan *plan, const struct client_opts *base, FILE *progress,
                  void (*done)(struct mesh_plan *plan, struct mesh_cell *c, void *arg), void *arg,
                  _Atomic int *stop);
void mesh_free(struct mesh_plan *plan);

#endif
