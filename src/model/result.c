/* result: storage of measured sides, and the derived per-flow and total figures. */
#include "result.h"

#include "test_kind.h"
#include "units.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int result_side_init(struct side_result *s, uint32_t nflows, uint32_t cap_intervals)
{
    memset(s, 0, sizeof(*s));
    s->nflows = nflows;
    s->flows = calloc(nflows ? nflows : 1, sizeof(*s->flows));
    s->cap_intervals = cap_intervals;
    s->intervals = calloc(cap_intervals ? cap_intervals : 1, sizeof(*s->intervals));
    if (!s->flows || !s->intervals)
        goto nomem;
    if ((uint64_t)nflows * cap_intervals <= RESULT_MAX_INTERVAL_CELLS && nflows && cap_intervals) {
        s->cells = calloc((size_t)nflows * cap_intervals, sizeof(*s->cells));
        if (!s->cells)
            goto nomem;
        for (uint32_t i = 0; i < cap_intervals; i++)
            s->intervals[i].flows = s->cells + (size_t)i * nflows;
    }
    for (uint32_t i = 0; i < nflows; i++) {
        s->flows[i].id = i;
        s->flows[i].cpu = -1;
        s->flows[i].wait_s = -1;
    }
    return 0;
nomem:
    result_side_fini(s);
    return -ENOMEM;
}

void result_side_fini(struct side_result *s)
{
    free(s->lat);
    if (s->log)
        txnlog_fini(s->log);
    free(s->log);
    samples_free(s->samples);
    free(s->flows);
    free(s->intervals);
    free(s->cells);
    hostsnap_free(s->host);
    free(s->hostload);
    free(s->mptcp);
    free(s->mptcp_cells);
    memset(s, 0, sizeof(*s));
}

struct interval *result_side_next_interval(struct side_result *s)
{
    if (s->nintervals >= s->cap_intervals)
        return NULL;
    return &s->intervals[s->nintervals++];
}

double result_jain(const double *x, uint32_t n)
{
    double sum = 0, sq = 0;

    for (uint32_t i = 0; i < n; i++) {
        sum += x[i];
        sq += x[i] * x[i];
    }
    if (n == 0 || sq == 0)
        return 1.0;
    return sum * sum / (n * sq);
}

static const struct side_flow *find_flow(const struct side_result *s, uint32_t id)
{
    if (id < s->nflows && s->flows[id].id == id)
        return &s->flows[id];
    for (uint32_t i = 0; i < s->nflows; i++)
        if (s->flows[i].id == id)
            return &s->flows[i];
    return NULL;
}

static double rate(uint64_t bytes, double seconds)
{
    return seconds > 0 ? (double)bytes * 8.0 / seconds : 0.0;
}

/* One flow from the sender's and receiver's records; either may be missing. */
static void merge_flow(struct flow_summary *f, const struct side_flow *snd,
                       const struct side_flow *rcv)
{
    f->send_wait_s = snd ? snd->wait_s : -1;
    f->recv_wait_s = rcv ? rcv->wait_s : -1;
    f->sndbuf = snd ? snd->sndbuf : 0;
    f->notsent_lowat = snd ? snd->notsent_lowat : 0;
    f->rcvbuf = rcv ? rcv->rcvbuf : 0;
    if (snd && snd->samples) {
        f->rtt_mean_us = snd->rtt_mean_us;
        f->snd_wnd_mean = snd->snd_wnd_mean;
        f->inflight_mean = snd->inflight_mean;
    }
    if (snd) {
        f->sent_bytes = snd->bytes;
        f->send_seconds = snd->seconds;
        f->sender_bps = rate(snd->bytes, snd->seconds);
        if (snd->ti.valid) {
            f->has_sender_tcpinfo = true;
            f->retransmits = snd->ti.total_retrans;
            f->rtt_us = snd->ti.rtt_us;
            f->min_rtt_us = snd->ti.min_rtt_us;
            f->cwnd = snd->ti.snd_cwnd;
            f->snd_wnd = snd->ti.snd_wnd;
            f->delivery_rate_bps = snd->ti.delivery_rate_bps;
            f->busy_us = snd->ti.busy_us;
            f->rwnd_limited_us = snd->ti.rwnd_limited_us;
            f->sndbuf_limited_us = snd->ti.sndbuf_limited_us;
        }
    }
    if (rcv) {
        f->bytes = rcv->bytes;
        f->rx_zc_bytes = rcv->rx_zc_bytes <= rcv->bytes ? rcv->rx_zc_bytes : rcv->bytes;
        f->rx_zc_fraction = rcv->bytes ? (double)f->rx_zc_bytes / (double)rcv->bytes : 0;
        f->recv_seconds = rcv->seconds;
        f->throughput_bps = rate(rcv->bytes, rcv->seconds);
    } else {
        /* the receiving side did not report (server died): fall back to what was sent */
        f->bytes = f->sent_bytes;
        f->recv_seconds = f->send_seconds;
        f->throughput_bps = f->sender_bps;
    }
}

static double cores_per_10g(const struct cpu_usage *c, double bps)
{
    return (c->valid || c->own_valid) && bps > 0 ? cpu_usage_cost_cores(c) / (bps / 1e10) : 0.0;
}

/* cores x 1e9 ns/s over bytes/s: CPU nanoseconds per byte moved */
static double ns_per_byte(const struct cpu_usage *c, double bps)
{
    return (c->valid || c->own_valid) && bps > 0 ? cpu_usage_cost_cores(c) * 1e9 / (bps / 8.0)
                                                 : 0.0;
}

/* The process's own cores over the period, whatever the basis; -1 when not measured. */
static double own_cores(const struct cpu_usage *c)
{
    return c->own_valid && c->seconds > 0 ? (c->own_user_s + c->own_system_s) / c->seconds : -1;
}

static double own_per(const struct cpu_usage *c, double per, double scale)
{
    double o = own_cores(c);

    return o >= 0 && per > 0 ? o * scale / per : -1;
}

static double us(uint64_t ns) { return (double)ns / 1e3; }

/* rr/crr: the client counted every transaction and holds the latency histogram. */
static void merge_transactions(struct run_result *r)
{
    struct run_summary *s = &r->summary;
    const struct histo *h = r->local.lat;
    const struct test_kind *k = test_kind_of(&r->params);

    for (uint32_t i = 0; i < r->nflows && i < r->local.nflows; i++) {
        struct flow_summary *f = &r->flows[i];
        const struct side_flow *lf = &r->local.flows[i];
        f->txns = lf->txns;
        f->timeouts = lf->timeouts;
        f->bytes = lf->bytes;
        f->throughput_bps = rate(lf->bytes, lf->seconds);
        f->transactions_per_s = lf->seconds > 0 ? (double)lf->txns / lf->seconds : 0;
        s->transactions += lf->txns;
        s->timeouts += lf->timeouts;
    }
    for (uint32_t i = 0; r->remote.valid && i < r->remote.nflows; i++)
        if (r->remote.flows[i].id != UINT32_MAX)
            s->server_transactions += r->remote.flows[i].txns;
    /* bytes: the responses the client read; sender_bytes: the requests the server read
     * (per flow for rr; a crr server counts per listener, so only the total is known) */
    s->bytes = 0;
    s->sent_bytes = 0;
    for (uint32_t i = 0; i < r->nflows; i++) {
        const struct side_flow *rf = !(k->flags & TEST_KIND_CONN_PER_TXN) && r->remote.valid
                                         ? find_flow(&r->remote, i)
                                         : NULL;
        r->flows[i].sent_bytes = rf ? rf->bytes : 0;
        s->bytes += r->flows[i].bytes;
    }
    for (uint32_t i = 0; r->remote.valid && i < r->remote.nflows; i++)
        if (r->remote.flows[i].id != UINT32_MAX)
            s->sent_bytes += r->remote.flows[i].bytes;
    s->throughput_bps = rate(s->bytes, r->local.seconds);
    s->sender_bps = rate(s->sent_bytes, r->local.seconds);
    s->up_bps = 0;
    s->down_bps = s->throughput_bps;
    /* fairness between flows is about their transaction rates here */
    {
        double *tps = calloc(r->nflows ? r->nflows : 1, sizeof(*tps));
        for (uint32_t i = 0; tps && i < r->nflows; i++)
            tps[i] = r->flows[i].transactions_per_s;
        if (tps)
            s->jain_index = result_jain(tps, r->nflows);
        free(tps);
    }
    s->transactions_per_s = r->local.seconds > 0 ? (double)s->transactions / r->local.seconds : 0;
    if (s->transactions_per_s > 0) {
        s->local_cpu_us_per_txn = cpu_usage_cost_cores(&r->local.cpu) * 1e6 / s->transactions_per_s;
        s->remote_cpu_us_per_txn =
            cpu_usage_cost_cores(&r->remote.cpu) * 1e6 / s->transactions_per_s;
    }
    s->local_own_cpu_us_per_txn = own_per(&r->local.cpu, s->transactions_per_s, 1e6);
    s->remote_own_cpu_us_per_txn = own_per(&r->remote.cpu, s->transactions_per_s, 1e6);
    if (h && h->count) {
        s->latency.min_us = us(h->min_ns);
        s->latency.mean_us = histo_mean(h) / 1e3;
        s->latency.p50_us = us(histo_percentile(h, 50));
        s->latency.p90_us = us(histo_percentile(h, 90));
        s->latency.p99_us = us(histo_percentile(h, 99));
        s->latency.p999_us = us(histo_percentile(h, 99.9));
        s->latency.p9999_us = us(histo_percentile(h, 99.99));
        s->latency.max_us = us(h->max_ns);
    }
}

/* UDP streams: datagrams sent (every sequence number issued) against those received. */
static void merge_udp(struct run_result *r)
{
    struct run_udp *u = &r->summary.u;
    double jitter = 0, owd_sum = 0, owd_n = 0, send_s = 0, recv_s = 0;
    uint32_t nj = 0;

    u->owd_min_us = -1;
    for (uint32_t i = 0; i < r->nflows; i++) {
        struct flow_summary *f = &r->flows[i];
        bool cs = f->client_sends;
        /* a server that did not report contributes nothing */
        const struct side_flow *snd =
            cs || r->remote.valid ? find_flow(cs ? &r->local : &r->remote, i) : NULL;
        const struct side_flow *rcv =
            !cs || r->remote.valid ? find_flow(cs ? &r->remote : &r->local, i) : NULL;

        if (snd) {
            f->udp_sent = snd->sent_pkts + snd->send_drops;
            u->send_drops += snd->send_drops;
            if (snd->seconds > send_s)
                send_s = snd->seconds;
        }
        if (rcv && rcv->has_udp_rx) {
            const struct result_udp_rx *x = &rcv->udp;
            f->udp_received = x->received;
            if (!snd) /* the sender did not report: the highest sequence number bounds it */
                f->udp_sent = x->max_seq_plus1;
            f->udp_jitter_us = x->jitter_ns / 1e3;
            u->duplicates += x->duplicates;
            u->out_of_order += x->out_of_order;
            jitter += f->udp_jitter_us;
            nj++;
            owd_sum += x->owd_sum_ns;
            owd_n += (double)(x->received + x->duplicates);
            if (x->received && (u->owd_min_us < 0 || x->owd_min_ns / 1e3 < u->owd_min_us))
                u->owd_min_us = x->owd_min_ns / 1e3;
            if (x->owd_max_ns / 1e3 > u->owd_max_us)
                u->owd_max_us = x->owd_max_ns / 1e3;
            if (rcv->seconds > recv_s)
                recv_s = rcv->seconds;
        }
        f->udp_lost = f->udp_sent > f->udp_received ? f->udp_sent - f->udp_received : 0;
        u->sent += f->udp_sent;
        u->received += f->udp_received;
        u->lost += f->udp_lost;
    }
    u->loss_pct = u->sent ? 100.0 * (double)u->lost / (double)u->sent : 0;
    u->jitter_us = nj ? jitter / nj : 0;
    u->owd_mean_us = owd_n > 0 ? owd_sum / owd_n / 1e3 : 0;
    if (u->owd_min_us < 0)
        u->owd_min_us = 0;
    u->shared_clock = r->local.boot_id[0] && !strcmp(r->local.boot_id, r->remote.boot_id);
    u->sent_pps = send_s > 0 ? (double)u->sent / send_s : 0;
    u->received_pps = recv_s > 0 ? (double)u->received / recv_s : 0;
}

/* One direction's totals: its bytes over the longest time any of its flows took, so flows
 * that drained their queues late do not inflate the sum of per-flow rates. */
struct dir_total {
    uint64_t bytes, sent;
    double recv_s, send_s;
};

static void dir_add(struct dir_total *d, const struct flow_summary *f)
{
    d->bytes += f->bytes;
    d->sent += f->sent_bytes;
    if (f->recv_seconds > d->recv_s)
        d->recv_s = f->recv_seconds;
    if (f->send_seconds > d->send_s)
        d->send_s = f->send_seconds;
}

/* Both ends in one process (a built-in loopback server): the process's CPU is both ends',
 * so each end's own CPU becomes its worker threads' (their user and system time). */
static void split_one_process(struct run_result *r)
{
    struct cpu_usage *l = &r->local.cpu, *m = &r->remote.cpu;

    if (!l->own_valid || !m->own_valid || l->own_pid <= 0 || l->own_pid != m->own_pid ||
        !r->local.boot_id[0] || strcmp(r->local.boot_id, r->remote.boot_id))
        return;
    for (int i = 0; i < 2; i++) {
        struct cpu_usage *c = i ? m : l;
        if (c->own_threads)
            continue;
        c->own_threads = true;
        c->own_user_s = c->threads_user_pct * c->ncpu / 100.0 * c->seconds;
        c->own_system_s = c->threads_system_pct * c->ncpu / 100.0 * c->seconds;
    }
}

int result_merge(struct run_result *r)
{
    uint32_t n = params_total_flows(&r->params);
    struct dir_total up = {0}, down = {0};
    double *tp;

    free(r->flows);
    r->flows = calloc(n ? n : 1, sizeof(*r->flows));
    tp = calloc(n ? n : 1, sizeof(*tp));
    if (!r->flows || !tp) {
        free(tp);
        return -ENOMEM;
    }
    r->nflows = n;
    memset(&r->summary, 0, sizeof(r->summary));
    for (uint32_t i = 0; i < n; i++) {
        struct flow_summary *f = &r->flows[i];
        const struct side_flow *lf = find_flow(&r->local, i);
        const struct side_flow *rf = r->remote.valid ? find_flow(&r->remote, i) : NULL;
        bool cs = params_flow_client_sends(&r->params, i);

        f->id = i;
        f->client_sends = cs;
        f->client_cpu = lf ? lf->cpu : -1;
        f->server_cpu = rf ? rf->cpu : -1;
        merge_flow(f, cs ? lf : rf, cs ? rf : lf);
        r->summary.bytes += f->bytes;
        r->summary.sent_bytes += f->sent_bytes;
        r->summary.retransmits += f->retransmits;
        r->summary.rx_zc_bytes += f->rx_zc_bytes;
        dir_add(cs ? &up : &down, f);
        tp[i] = f->throughput_bps;
    }
    r->summary.up_bps = rate(up.bytes, up.recv_s);
    r->summary.down_bps = rate(down.bytes, down.recv_s);
    r->summary.throughput_bps = r->summary.up_bps + r->summary.down_bps;
    r->summary.sender_bps = rate(up.sent, up.send_s) + rate(down.sent, down.send_s);
    r->summary.jain_index = result_jain(tp, n);
    if (r->params.down_rate_set && n == 2 * r->params.flows) {
        /* -b UP,DOWN: the two ways are meant to differ; fairness is within each way */
        double ju = result_jain(tp, r->params.flows),
               jd = result_jain(tp + r->params.flows, r->params.flows);
        r->summary.jain_index = ju < jd ? ju : jd;
    }
    r->summary.rx_zc_fraction =
        r->summary.bytes ? (double)r->summary.rx_zc_bytes / (double)r->summary.bytes : 0;
    r->summary.rx_copy_skipped =
        !strcmp(r->local.recv_method, "skip_copy") || !strcmp(r->remote.recv_method, "skip_copy");
    split_one_process(r);
    r->summary.local_cores_per_10g = cores_per_10g(&r->local.cpu, r->summary.throughput_bps);
    r->summary.remote_cores_per_10g = cores_per_10g(&r->remote.cpu, r->summary.throughput_bps);
    r->summary.local_cpu_ns_per_byte = ns_per_byte(&r->local.cpu, r->summary.throughput_bps);
    r->summary.remote_cpu_ns_per_byte = ns_per_byte(&r->remote.cpu, r->summary.throughput_bps);
    r->summary.local_own_cores_per_10g = own_per(&r->local.cpu, r->summary.throughput_bps, 1e10);
    r->summary.remote_own_cores_per_10g = own_per(&r->remote.cpu, r->summary.throughput_bps, 1e10);
    if (params_is_transactional(&r->params))
        merge_transactions(r);
    if (test_kind_is(&r->params, TEST_KIND_DATAGRAMS)) {
        r->summary.udp = true;
        merge_udp(r);
    }
    free(tp);
    result_warn_figures(r);
    return 0;
}

bool result_server_sends_tcp(const struct params *p)
{
    return test_kind_is(p, TEST_KIND_DRAINS) && p->dir != PARAMS_DIR_FORWARD;
}

int64_t result_interval_retrans(const struct interval *iv)
{
    return iv->peer == INTERVAL_PEER_PENDING ? -1 : (int64_t)iv->retrans;
}

int64_t result_interval_flow_retrans(const struct params *p, const struct interval *iv, uint32_t i)
{
    if (!iv->flows)
        return -1;
    if (iv->peer != INTERVAL_PEER_NONE && iv->peer != INTERVAL_PEER_CELLS &&
        result_server_sends_tcp(p) && !params_flow_client_sends(p, i))
        return -1;
    return iv->flows[i].retrans;
}

void result_peer_interval_fini(struct peer_interval *pi)
{
    free(pi->ids);
    free(pi->flow_retrans);
    pi->ids = pi->flow_retrans = NULL;
    pi->npairs = 0;
}

void result_warn(struct run_result *r, const char *fmt, ...)
{
    char text[RESULT_WARNING_LEN];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    for (uint32_t i = 0; i < r->nwarnings; i++)
        if (!strcmp(r->warnings[i], text))
            return;
    if (r->nwarnings < RESULT_MAX_WARNINGS)
        memcpy(r->warnings[r->nwarnings++], text, sizeof(text));
}

/* The UDP senders of one direction against -b (or --pps x datagram size) per flow. */
static void warn_udp_rate(struct run_result *r, bool client_sends)
{
    const struct params *p = &r->params;
    double want = p->udp_pps ? (double)p->udp_pps * p->write_size * 8.0
                             : (double)params_send_rate(p, client_sends);
    double got = 0;
    uint32_t n = 0;
    char g[32], w[32], why[200];

    for (uint32_t i = 0; i < r->nflows; i++) {
        const struct flow_summary *f = &r->flows[i];
        const struct side_result *s = client_sends ? &r->local : &r->remote;
        if (f->client_sends != client_sends)
            continue;
        if (!s->valid && !client_sends)
            return; /* the server did not report what it sent */
        got += f->sender_bps;
        n++;
    }
    want *= n;
    if (!n || want <= 0 || got >= RESULT_UDP_RATE_SHARE * want)
        return;
    units_format_rate(got, g, sizeof(g));
    units_format_rate(want, w, sizeof(w));
    /* datagrams the sending host refused (ENOBUFS from a full local qdisc or device queue, or
     * a full socket buffer) mean this host's own queue toward a slower link set the pace */
    snprintf(why, sizeof(why), "%s",
             r->summary.u.send_drops
                 ? "the sending host refused datagrams (its local qdisc or device queue full, "
                   "ENOBUFS, or its socket buffer): a slower link or qdisc on the sender's "
                   "host set the pace, not its CPU"
                 : "CPU or NIC bound");
    result_warn(r, "UDP: the %s sender%s reached %s of the %s asked (%s%s%.0u%s, %.1f%%): %s",
                client_sends ? "client's" : "server's", n == 1 ? "" : "s", g, w,
                p->udp_pps          ? "--pps x datagram size"
                : !p->down_rate_set ? "-b"
                : client_sends      ? "-b UP"
                                    : "-b DOWN",
                n > 1 ? " x " : "", n > 1 ? n : 0, n > 1 ? " flows" : "", 100.0 * got / want, why);
}

void result_warn_figures(struct run_result *r)
{
    const struct params *p = &r->params;
    uint32_t flows = params_total_flows(p);
    uint32_t st = p->server_threads ? p->server_threads : p->threads;

    if (test_kind_is(p, TEST_KIND_DATAGRAMS) && !r->partial) {
        if (p->dir != PARAMS_DIR_REVERSE)
            warn_udp_rate(r, true);
        if (p->dir != PARAMS_DIR_FORWARD)
            warn_udp_rate(r, false);
    }
    /* a worker thread needs a flow (a crr server runs one listener per thread instead; an
     * iperf3 server is its own) */
    bool server_idle = st > flows && !test_kind_is(p, TEST_KIND_CONN_PER_TXN) && !p->iperf3_wire;
    if (p->threads > flows)
        result_warn(r,
                    "-T %u with %u flow%s: %u worker thread%s %s had no flow and did not run; "
                    "raise -P to use them",
                    p->threads, flows, flows == 1 ? "" : "s", p->threads - flows,
                    p->threads - flows == 1 ? "" : "s",
                    server_idle && !p->server_threads ? "on each end" : "of the client");
    if (server_idle && p->server_threads)
        result_warn(r,
                    "--server-threads %u with %u flow%s: %u of the server's worker threads had "
                    "no flow and did not run",
                    st, flows, flows == 1 ? "" : "s", st - flows);
}

void result_fini(struct run_result *r)
{
    result_side_fini(&r->local);
    result_side_fini(&r->remote);
    free(r->flows);
    r->flows = NULL;
    r->nflows = 0;
}

/* Did every side that receives flows of r receive by `method`? A side that receives nothing
 * reports "". */
static bool rx_as_asked(const struct run_result *r, const char *method)
{
    bool client_rx = r->params.dir != PARAMS_DIR_FORWARD;
    bool server_rx = r->params.dir != PARAMS_DIR_REVERSE;

    return (!client_rx || !strcmp(r->local.recv_method, method)) &&
           (!server_rx || !r->remote.valid || !strcmp(r->remote.recv_method, method));
}

void result_rx_note(const struct run_result *r, char *buf, size_t len)
{
    const struct run_summary *s = &r->summary;
    const struct params *p = &r->params;

    buf[0] = '\0';
    if (p->skip_rx_copy)
        snprintf(buf, len, "%s",
                 rx_as_asked(r, "skip_copy")
                     ? "--skip-rx-copy: receivers discarded the data in the kernel (MSG_TRUNC): "
                       "throughput and CPU do not count the receiver's copy"
                     : "--skip-rx-copy was not honoured by every receiver (an older netrig?): "
                       "some received by copy");
    else if (p->zerocopy_rx && !rx_as_asked(r, "zerocopy"))
        snprintf(buf, len,
                 "--zerocopy-rx: %.2f%% of the bytes received were mapped; not every receiver "
                 "could map its socket (see the notes below, or an older netrig)",
                 100 * s->rx_zc_fraction);
    else if (p->zerocopy_rx && s->rx_zc_fraction < 0.5)
        snprintf(buf, len,
                 "--zerocopy-rx: only %.2f%% of the bytes received were mapped, the rest copied: "
                 "the kernel maps only whole, unshared order-0 pages (a NIC with header split "
                 "and a 4 KiB-multiple MSS); loopback and veth hand over the sender's pages, "
                 "which it (almost always) refuses",
                 100 * s->rx_zc_fraction);
    else if (p->zerocopy_rx)
        snprintf(buf, len, "--zerocopy-rx: %.2f%% of the bytes received were mapped, not copied",
                 100 * s->rx_zc_fraction);
}
