/* flow_kinds: one const table per kind of flow, and the choice of one for a test. */
#include "flow_kinds.h"

#include "flow_crr.h"
#include "flow_iperf3_udp.h"
#include "flow_rr.h"
#include "flow_stream.h"
#include "flow_udp.h"

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

const struct flow_kind *flow_kind_for(const struct params *p, bool is_client)
{
    switch (p->test) {
    case PARAMS_TEST_RR: return p->udp ? &flow_kind_rr_udp : &flow_kind_rr;
    case PARAMS_TEST_CRR: return is_client ? &flow_kind_crr_client : &flow_kind_crr_server;
    default:
        if (p->udp)
            return p->iperf3_wire ? &flow_kind_iperf3_udp : &flow_kind_udp;
        return &flow_kind_stream;
    }
}
