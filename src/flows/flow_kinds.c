/* flow_kinds: one const table per kind of flow, and the choice of one for a test. */
#include "flow_kinds.h"

#include "flow_crr.h"
#include "flow_iperf3_udp.h"
#include "flow_rr.h"
#include "flow_stream.h"
#include "flow_udp.h"
#include "test_kind.h"

const struct flow_kind flow_kind_stream = {
    .name = "stream",
    .init = flow_stream_init,
    .tcp = true,
    .has_tcpinfo = true,
    .may_run_alone = flow_stream_may_run_alone,
    .needs = flow_stream_needs,
};

const struct flow_kind flow_kind_udp = {
    .name = "udp",
    .init = flow_udp_init,
    .collect = flow_udp_collect,
    .needs = flow_udp_needs,
};

const struct flow_kind flow_kind_iperf3_udp = {
    .name = "iperf3-udp",
    .init = flow_iperf3_udp_init,
    .collect = flow_udp_collect,
    .needs = flow_udp_needs,
};

const struct flow_kind flow_kind_rr = {
    .name = "rr",
    .init = flow_rr_init,
    .tcp = true,
    .has_tcpinfo = true,
    .transactional = true,
    .may_run_alone = flow_rr_may_run_alone,
    .needs = flow_rr_needs,
    .collect = flow_rr_collect,
};

const struct flow_kind flow_kind_rr_udp = {
    .name = "rr-udp",
    .init = flow_rr_init,
    .transactional = true,
    .may_run_alone = flow_rr_may_run_alone,
    .needs = flow_rr_needs,
    .collect = flow_rr_collect,
};

/* A new connection per transaction: no one connection for TCP_INFO to describe. */
const struct flow_kind flow_kind_crr_client = {
    .name = "crr-client",
    .init = flow_crr_init,
    .tcp = true,
    .transactional = true,
    .set_target = flow_crr_set_target,
    .may_run_alone = flow_crr_may_run_alone,
    .needs = flow_crr_needs,
};

const struct flow_kind flow_kind_crr_server = {
    .name = "crr-server",
    .init = flow_crr_init,
    .flow_per_worker = true,
    .tcp = true,
    .transactional = true,
    .needs = flow_crr_needs,
};

/* Each test kind's flows (test_kind.h): the client's, the server's, and the client's when
 * the peer is iperf3 (NULL: as the client's). */
static const struct {
    const struct flow_kind *client, *server, *iperf3;
} by_test_kind[TEST_KIND_COUNT] = {
    [TEST_KIND_STREAM] = {&flow_kind_stream, &flow_kind_stream, NULL},
    [TEST_KIND_STREAM_UDP] = {&flow_kind_udp, &flow_kind_udp, &flow_kind_iperf3_udp},
    [TEST_KIND_RR] = {&flow_kind_rr, &flow_kind_rr, NULL},
    [TEST_KIND_RR_UDP] = {&flow_kind_rr_udp, &flow_kind_rr_udp, NULL},
    [TEST_KIND_CRR] = {&flow_kind_crr_client, &flow_kind_crr_server, NULL},
    [TEST_KIND_STREAM_MPTCP] = {&flow_kind_stream, &flow_kind_stream, NULL},
    [TEST_KIND_RR_MPTCP] = {&flow_kind_rr, &flow_kind_rr, NULL},
};

const struct flow_kind *flow_kind_for(const struct params *p, bool is_client)
{
    enum test_kind_id id = test_kind_of(p)->id;

    if (p->iperf3_wire && by_test_kind[id].iperf3)
        return by_test_kind[id].iperf3;
    return is_client ? by_test_kind[id].client : by_test_kind[id].server;
}
