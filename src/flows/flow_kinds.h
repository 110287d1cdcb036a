/* flow_kinds: the kinds of flow netrig runs, each a const table (struct flow_kind, engine/flow.h)
 * for engine_create, and each test kind's (model/test_kind.h) flows on either side. A test
 * kind whose flows run as an existing kind's needs only its row in by_test_kind; a new kind of
 * flow: its flow_<kind>.c, a table here and that row. */
#ifndef NETRIG_FLOW_KINDS_H
#define NETRIG_FLOW_KINDS_H

#include <stdbool.h>

#include "flow.h"
#include "params.h"

extern const struct flow_kind flow_kind_stream;     /* TCP bulk transfer */
extern const struct flow_kind flow_kind_udp;        /* paced UDP, netrig's datagrams */
extern const struct flow_kind flow_kind_iperf3_udp; /* paced UDP, iperf3's datagrams */
extern const struct flow_kind flow_kind_rr;         /* request/response over TCP */
extern const struct flow_kind flow_kind_rr_udp;     /* request/response over UDP */
extern const struct flow_kind flow_kind_crr_client; /* a connection per transaction */
extern const struct flow_kind flow_kind_crr_server; /* a listener per worker thread */

/* The kind one side (is_client: the client's) of test p runs. */
const struct flow_kind *flow_kind_for(const struct params *p, bool is_client);

#endif
