/* store_load: a load run (netrig load) stored as one run of test "load": its parameters and
 * document, its metrics (the latency increase under load first), the load's flows (up flows
 * first, then down), each part's time series and each probe's records on the load's clock,
 * and both hosts' settings. */
#ifndef NETRIG_STORE_LOAD_H
#define NETRIG_STORE_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "hostsnap.h"
#include "load_result.h"
#include "store.h"

/* Inside store_begin .. store_commit; hs: this host's snapshot (NULL: none). */
int store_add_load(struct store *st, const struct load_result *lr, const struct hostsnap *hs,
                   int64_t *id, char *err, size_t errlen);

#endif
