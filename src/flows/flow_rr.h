/* flow_rr: the request/response kind over TCP or UDP (flow_rr.c); its tables are in
 * flow_kinds.c. */
#ifndef NETRIG_FLOW_RR_H
#define NETRIG_FLOW_RR_H

#include <stdbool.h>

#include "flow.h"

/* The client sends the requests; the server answers them. */
int flow_rr_init(struct flow *f, const struct params *p, bool is_client);
/* A client's requests sent and sent late (open loop), for its result. */
void flow_rr_collect(const struct flow *f, struct side_flow *out);
/* The server always; a client only closed-loop at depth 1 (a blocking ping-pong). */
bool flow_rr_may_run_alone(const struct params *p, bool is_client);
void flow_rr_needs(const struct params *p, bool is_client, struct flow_needs *out);

#endif
