/* flow_stream: the TCP bulk-transfer kind (flow_stream.c); its table is in flow_kinds.c. */
#ifndef NETRIG_FLOW_STREAM_H
#define NETRIG_FLOW_STREAM_H

#include <stdbool.h>

#include "flow.h"

/* Flow f->id sends when the test says this side sends it (-R, --bidir). */
int flow_stream_init(struct flow *f, const struct params *p, bool is_client);
bool flow_stream_may_run_alone(const struct params *p, bool is_client);
void flow_stream_needs(const struct params *p, bool is_client, struct flow_needs *out);

#endif
