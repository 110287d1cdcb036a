/* thirdparty_serve: tests a daemon runs on a controller's behalf, from itself toward another
 * daemon (the controller's side is client/thirdparty_ctl). A daemon does this only for
 * controllers inside its --allow-third-party lists; the test's results go back to the
 * controller as the -J document. */
#ifndef NETRIG_THIRDPARTY_SERVE_H
#define NETRIG_THIRDPARTY_SERVE_H

#include <cjson/cJSON.h>

#include "served.h"

/* msg is the controller's "run" request on t's control connection (a session's). Answers it:
 * a refusal, or the run's results. Its admission lasts as long as the run. */
void thirdparty_serve(struct served *t, const cJSON *msg);

#endif
