/* result_doc: a run's -J document (docs/json.md) read back into the result model — the
 * parameters, summary, flows, placement, CPU figures and warnings the reports print — for a
 * run another host measured and sent as that document (a third-party test's daemon). The
 * document came from the network: the parameters are checked as a daemon checks them, every
 * number is clamped into its field's range, and strings are cut to size with bytes outside
 * printable ASCII replaced. No intervals, histogram or host snapshot are read. */
#ifndef NETRIG_RESULT_DOC_H
#define NETRIG_RESULT_DOC_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "result.h"

/* Fills r (result_fini frees it, also after a failure). 0, or -EINVAL (not an object, invalid
 * parameters) or -ENOMEM with one line in err. */
int result_from_doc(const cJSON *doc, struct run_result *r, char *err, size_t errlen);

#endif
