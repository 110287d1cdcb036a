/* store_doc: a run stored from its -J document (docs/json.md) instead of a run_result — the
 * results of a test another host ran and sent back whole, such as a mesh cell run by the
 * source host's daemon. The document is kept as it came; the parameters (checked as a daemon
 * checks them), metrics, flows and per-interval results are read from it. Such a run has no
 * host snapshot (it did not run on this host) and no latency histogram (the document holds
 * the percentiles only) — unless the hosts sent their settings along (store_doc_add_hosts). */
#ifndef NETRIG_STORE_DOC_H
#define NETRIG_STORE_DOC_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* Adds the run doc describes as a client's run toward the document's server, titled title
 * (NULL: the document's own title). Runs inside store_begin .. store_commit. Returns 0, or a
 * negative errno with a one-line err (a document whose parameters are not valid is refused). */
int store_doc_add(struct store *st, const cJSON *doc, const char *title, int64_t *id, char *err,
                  size_t errlen);

/* Both ends' settings of such a run, when the hosts sent them: the client's (the host that
 * ran the test) and the server's; NULL with a note saying why not. */
struct store_doc_hosts {
    const struct hostsnap *client, *server;
    const char *client_note, *server_note;
};
/* store_doc_add with those settings (store_doc_add records none, as for a mesh cell). */
int store_doc_add_hosts(struct store *st, const cJSON *doc, const char *title,
                        const struct store_doc_hosts *hosts, int64_t *id, char *err, size_t errlen);

#endif
