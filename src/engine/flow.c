/* flow: sets a flow up as its kind says, and the socket options of data flows. */
#include "flow.h"
#include "test_kind.h"

#include "dsclass.h"
#include "sock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int flow_init(struct flow *f, uint32_t id, const struct flow_kind *kind, const struct params *p,
              bool is_client)
{
    int rc;

    memset(f, 0, sizeof(*f));
    f->fd = -1;
    f->id = id;
    rc = kind->init(f, p, is_client);
    if (rc)
        return rc;
    /* zero-copy receive polls the socket's queue: it needs the event loop */
    f->can_run_alone = f->ops->run_alone && kind->may_run_alone &&
                       kind->may_run_alone(p, is_client) && f->rx != FLOW_RX_ZEROCOPY;
    return 0;
}

void flow_fini(struct flow *f)
{
    if (f->ops && f->ops->fini)
        f->ops->fini(f);
    free(f->priv);
    f->priv = NULL;
}

void flow_sock_opts(const struct params *p, bool tcp, uint32_t flow, struct sock_flow_opts *out)
{
    memset(out, 0, sizeof(*out));
    out->tcp = tcp;
    out->window = p->window;
    out->tos = dsclass_flow_tos(p->classes, p->tos, flow);
    /* MPTCP sockets have no SO_MAX_PACING_RATE: a daemon's --max-rate holds them by the
     * application's pacing it sets too (policy.c) */
    out->fq_rate_bps = tcp && test_kind_is(p, TEST_KIND_MPTCP) ? 0 : p->fq_rate_bps;
    if (!tcp) {
        out->dont_fragment = p->dont_fragment;
        return; /* a datagram socket: buffers, TOS, don't-fragment and the pacing cap */
    }
    out->mss = p->mss;
    out->congestion = p->congestion;
    out->nodelay = p->nodelay;
    out->zerocopy = p->zerocopy;
    out->notsent_lowat = p->notsent_lowat > 0 ? (uint32_t)p->notsent_lowat : 0;
    out->mptcp = test_kind_is(p, TEST_KIND_MPTCP);
}
