/* thirdparty_serve: tests a daemon runs on a controller's behalf, from itself toward another
 * daemon (the controller's side is client/thirdparty_ctl). A daemon does this only for
 * controllers inside its --allow-third-party lists; the test's results go back to the
 * controller as the -J document. */
#ifndef NETRIG_THIRDPARTY_SERVE_H
#define NETRIG_THIRDPARTY_SERVE_H

#include <cjson/cJSON.h>
#include <sys/socket.h>

#include "admit.h"
#include "served.h"

/* msg is the controller's "run" request on ctl. Answers it (refusal or results). */
void thirdparty_serve(const struct served_conf *c, struct admit *a, int ctl, const cJSON *msg,
                      const struct sockaddr *peer, const char *who);

#endif
