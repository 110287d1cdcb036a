/* flow: picks a flow's kind from the test parameters and sets up its state. */
#include "flow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int flow_init(struct flow *f, uint32_t id, const struct params *p, bool is_client)
{
    memset(f, 0, sizeof(*f));
    f->fd = -1;
    f->id = id;
    switch (p->test) {
    case PARAMS_TEST_RR: return flow_rr_init(f, p, is_client);
    case PARAMS_TEST_CRR: return flow_crr_init(f, p, is_client);
    default:
        f->sender = params_flow_client_sends(p, id) == is_client;
        if (p->udp && p->iperf3_wire)
            return flow_iperf3_udp_init(f, p, is_client);
        if (p->udp)
            return flow_udp_init(f, p, is_client);
        f->ops = f->sender ? &flow_stream_send_ops : &flow_stream_recv_ops;
        f->can_run_alone = true;
        return 0;
    }
}

void flow_fini(struct flow *f)
{
    if (f->ops && f->ops->fini)
        f->ops->fini(f);
    free(f->priv);
    free(f->udp);
    f->priv = NULL;
    f->udp = NULL;
}

void flow_sock_opts(const struct params *p, bool tcp, struct sock_flow_opts *out)
{
    memset(out, 0, sizeof(*out));
    out->window = p->window;
    if (!tcp)
        return; /* a datagram socket: only the buffers apply */
    out->mss = p->mss;
    out->congestion = p->congestion;
    out->nodelay = p->nodelay;
    out->fq_rate_bps = p->fq_rate_bps;
    out->zerocopy = p->zerocopy;
}
