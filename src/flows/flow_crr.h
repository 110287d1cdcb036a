/* flow_crr: the connect/request/response/close kind (flow_crr.c); its tables are in
 * flow_kinds.c. */
#ifndef NETRIG_FLOW_CRR_H
#define NETRIG_FLOW_CRR_H

#include <stdbool.h>
#include <sys/socket.h>

#include "flow.h"

/* Client: a flow that connects once per transaction. Server: a listener with its pool of
 * connection slots (one per worker thread). */
int flow_crr_init(struct flow *f, const struct params *p, bool is_client);
/* The client's flows may run alone (blocking in poll, no epoll set); the server's never. */
bool flow_crr_may_run_alone(const struct params *p, bool is_client);
void flow_crr_needs(const struct params *p, bool is_client, struct flow_needs *out);
/* Client flows connect to this address, from `local` (its address and device; NULL: any). */
int flow_crr_set_target(struct flow *f, const struct sockaddr *to, socklen_t len,
                        const struct sock_local *local);

#endif
