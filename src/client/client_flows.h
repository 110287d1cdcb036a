/* client_flows: the client's data connections for a netrig server, as its accept message
 * names them: TCP through the daemon's port, UDP to the ports it opened, crr to its crr port.
 * Private to src/client/. */
#ifndef NETRIG_CLIENT_FLOWS_H
#define NETRIG_CLIENT_FLOWS_H

#include "client.h"
#include "ctl.h"
#include "engine.h"
#include "sock.h"

#include <cjson/cJSON.h>

/* Hands every flow of e its socket (or, crr, its target); ctl is the control connection the
 * server confirms UDP flows on. 0, or -errno with err set. */
int client_flows_open(const struct client_opts *o, const struct sock_addr *to,
                      const uint8_t id[CTL_TEST_ID_LEN], const cJSON *accept, int ctl,
                      struct engine *e, char *err, size_t errlen);

#endif
