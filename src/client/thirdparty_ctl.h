/* thirdparty_ctl: the controller's side of a third-party test (`netrig stream --from A -c B`,
 * and every cell of a mesh plan): asks the daemon at A to run a test toward B and waits for
 * its results. The daemon's side is daemon/thirdparty_serve. */
#ifndef NETRIG_THIRDPARTY_CTL_H
#define NETRIG_THIRDPARTY_CTL_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "client.h"

/* Asks the daemon at from_host:from_port to run o's test toward o->host:o->port.
 * On success *doc is the -J document of that run (status in "third_party_status").
 * Returns 0, or a negative errno with err filled. */
int thirdparty_request(const char *from_host, uint16_t from_port, const struct client_opts *o,
                       cJSON **doc, char *err, size_t errlen);

#endif
