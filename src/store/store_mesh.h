/* store_mesh: a mesh plan's run stored as one unit — the plan file, its hosts and tests, when
 * it ran and how it ended, and one row per cell (source, destination, test, status, error and
 * the run holding the cell's results, added from the document the source daemon sent back,
 * store_doc.h) — so the matrix can be shown and drawn again (`show mesh:N`, `report mesh:N`)
 * and a mesh cut short keeps every finished cell. */
#ifndef NETRIG_STORE_MESH_H
#define NETRIG_STORE_MESH_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct store_mesh {
    int64_t id;
    char plan[1024]; /* the plan file */
    char started_at[32], finished_at[32];
    char status[16]; /* running, interrupted, done */
    bool parallel;
    uint32_t ncells, nfailed; /* read back: cells, and those failed */
    char *hosts;              /* JSON array of {"name", "address", "port"}, in plan order */
    char *tests;              /* JSON array of params objects, in plan order */
};

struct store_mesh_cell {
    uint32_t idx;            /* position in the plan's cell list */
    uint32_t test, src, dst; /* indexes into the tests and hosts arrays */
    char test_name[16];      /* stream, rr, crr */
    char source[64], destination[64];
    char status[16]; /* pending, complete, partial, failed */
    char error[256];
    int64_t run_id; /* the cell's run; 0 when none is stored */
};

/* Creates a mesh (status running; m->hosts and m->tests as JSON text) and its n cells (status
 * pending). Inside store_begin .. store_commit. */
int store_mesh_create(struct store *st, const struct store_mesh *m,
                      const struct store_mesh_cell *cells, uint32_t n, int64_t *id, char *err,
                      size_t errlen);
/* Records cell c's outcome (c->idx, status, error). With doc, the -J document of its run, the
 * run is added too, titled "mesh N: SOURCE -> DESTINATION TEST[ TITLE]", and *run_id set
 * (else 0). Inside store_begin .. store_commit. */
int store_mesh_cell_done(struct store *st, int64_t mesh, const struct store_mesh_cell *c,
                         const cJSON *doc, int64_t *run_id, char *err, size_t errlen);
/* running, interrupted or done; the last two set finished_at. */
int store_mesh_set_status(struct store *st, int64_t id, const char *status, char *err,
                          size_t errlen);
/* Fills m (free with store_mesh_free); -ENOENT with err when there is no such mesh. */
int store_mesh_get(struct store *st, int64_t id, struct store_mesh *m, char *err, size_t errlen);
void store_mesh_free(struct store_mesh *m);
/* The cells of a mesh by idx (malloc'd array). */
int store_mesh_cells(struct store *st, int64_t id, struct store_mesh_cell **cells, uint32_t *n,
                     char *err, size_t errlen);
/* Every mesh, oldest first (hosts and tests left NULL); fn's non-zero return stops. */
int store_mesh_list(struct store *st, int (*fn)(const struct store_mesh *m, void *arg), void *arg);

#endif
