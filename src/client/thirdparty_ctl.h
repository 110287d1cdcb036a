/* thirdparty: tests a daemon runs on a controller's behalf, from itself toward another daemon
 * (`netrig stream --from A -c B`, and every cell of a mesh plan). A daemon does this only for
 * controllers inside its --allow-third-party lists; the test's results go back to the
 * controller as the -J document. */
#ifndef NETRIG_THIRDPARTY_H
#define NETRIG_THIRDPARTY_H

#include <cjson/cJSON.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "client.h"

struct server;

/* Server: msg is the controller's "run" request on ctl. Answers it (refusal or results). */
void thirdparty_serve(struct server *srv, int ctl, const cJSON *msg, const struct sockaddr *peer,
                      const char *who);

/* Controller: asks the daemon at from_host:from_port to run o's test toward o->host:o->port.
 * On success *doc is the -J document of that run (status in "third_party_status").
 * Returns 0, or a negative errno with err filled. */
int thirdparty_request(const char *from_host, uint16_t from_port, const struct client_opts *o,
                       cJSON **doc, char *err, size_t errlen);

#endif
