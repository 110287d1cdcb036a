/* flow_iperf3_udp: UDP streams in iperf3's datagram format, for tests with an iperf3 peer.
 * A datagram starts with the send time (u32 seconds, u32 microseconds, CLOCK_REALTIME) and a
 * sequence number counted from 1 (u32, or u64 with --udp-counters-64bit), all big-endian; the
 * rest is filler. The sender is paced like flow_udp.c (a timer schedule, sendmmsg batches);
 * the receiver counts as iperf3 does: a jump in sequence numbers is loss, a step back is
 * out-of-order, jitter per RFC 1889. Its highest sequence number is kept in
 * udp->max_seq_plus1: with numbering from 1 that is how many datagrams were sent up to it. */
#define _GNU_SOURCE
#include "flow.h"
#include "clock.h"

#include "worker.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>

#define I3UDP_BATCH       32
#define I3UDP_RX_DRAIN_NS 300000000ULL /* receivers listen this long after stop */
#define I3UDP_HDR32       12
#define I3UDP_HDR64       16

struct i3udp_tx {
    uint32_t len;
    uint64_t period_ns;
    uint64_t next_ns;
    uint64_t seq; /* the last number sent; the first datagram carries 1 */
    bool seq64;
};

struct i3udp_rx {
    bool seq64;
};

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8),
    p[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

size_t flow_iperf3_udp_header(uint8_t *buf, uint64_t sec, uint32_t usec, uint64_t seq, bool seq64)
{
    put_be32(buf, (uint32_t)sec);
    put_be32(buf + 4, usec);
    if (!seq64) {
        put_be32(buf + 8, (uint32_t)seq);
        return I3UDP_HDR32;
    }
    put_be32(buf + 8, (uint32_t)(seq >> 32));
    put_be32(buf + 12, (uint32_t)seq);
    return I3UDP_HDR64;
}

int flow_iperf3_udp_parse(const uint8_t *buf, size_t len, bool seq64, uint64_t *send_ns,
                          uint64_t *seq)
{
    uint32_t usec;

    if (len < (seq64 ? I3UDP_HDR64 : I3UDP_HDR32))
        return -EINVAL;
    usec = get_be32(buf + 4);
    if (usec >= 1000000)
        usec = 999999; /* a broken sender's clock: keep the datagram, bound the time */
    *send_ns = (uint64_t)get_be32(buf) * 1000000000ULL + (uint64_t)usec * 1000ULL;
    *seq = seq64 ? (uint64_t)get_be32(buf + 8) << 32 | get_be32(buf + 12) : get_be32(buf + 8);
    return 0;
}

void flow_iperf3_udp_account(struct flow_udp_rx *rx, uint64_t seq)
{
    rx->received++;
    if (seq > rx->max_seq_plus1) {
        rx->max_seq_plus1 = seq; /* a gap before it counts as loss until the rest arrive */
        return;
    }
    rx->out_of_order++; /* went back (or repeated): it fills an earlier gap */
}

int flow_iperf3_udp_init(struct flow *f, const struct params *p, bool is_client)
{
    (void)is_client;
    if (!f->sender) {
        struct i3udp_rx *r = calloc(1, sizeof(*r));
        f->udp = calloc(1, sizeof(*f->udp));
        if (!r || !f->udp) {
            free(r);
            return -ENOMEM;
        }
        r->seq64 = p->iperf3_udp64;
        f->udp->owd_min_ns = UINT64_MAX;
        f->priv = r;
        f->ops = &flow_iperf3_udp_recv_ops;
        return 0;
    }
    struct i3udp_tx *t = calloc(1, sizeof(*t));
    if (!t)
        return -ENOMEM;
    t->len = p->write_size;
    t->seq64 = p->iperf3_udp64;
    t->period_ns =
        (uint64_t)(8e9 * p->write_size / (double)(p->udp_rate_bps ? p->udp_rate_bps : 1));
    if (!t->period_ns)
        t->period_ns = 1;
    f->priv = t;
    f->ops = &flow_iperf3_udp_send_ops;
    return 0;
}

static int i3_send_start(struct worker *w, struct flow *f, uint64_t now)
{
    struct i3udp_tx *t = f->priv;

    (void)w;
    t->next_ns = now;
    f->due_ns = now;
    return 0;
}

static int i3_send_timer(struct worker *w, struct flow *f, uint64_t now)
{
    struct i3udp_tx *t = f->priv;
    uint64_t due = (now - t->next_ns) / t->period_ns + 1;
    uint32_t cap = (uint32_t)(w->buflen / t->len), n;
    struct mmsghdr mm[I3UDP_BATCH];
    struct iovec iov[I3UDP_BATCH];
    uint64_t now_real = clock_real_ns();
    int sent;

    if (cap > I3UDP_BATCH)
        cap = I3UDP_BATCH;
    if (cap < 1)
        cap = 1;
    n = due < cap ? (uint32_t)due : cap;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *d = (uint8_t *)w->buf + (size_t)i * t->len;
        flow_iperf3_udp_header(d, now_real / 1000000000ULL,
                               (uint32_t)(now_real % 1000000000ULL / 1000), t->seq + 1 + i,
                               t->seq64);
        iov[i].iov_base = d;
        iov[i].iov_len = t->len;
        memset(&mm[i], 0, sizeof(mm[i]));
        mm[i].msg_hdr.msg_iov = &iov[i];
        mm[i].msg_hdr.msg_iovlen = 1;
    }
    sent = sendmmsg(f->fd, mm, n, MSG_DONTWAIT);
    if (sent < 0 && errno != EAGAIN && errno != ENOBUFS && errno != ECONNREFUSED &&
        errno != EINTR) {
        worker_flow_finish(w, f, errno);
        return 1;
    }
    if (sent < 0)
        sent = 0;
    flow_add(&f->sent_pkts, (uint64_t)sent);
    flow_add(&f->send_drops, n - (uint64_t)sent);
    flow_add(&f->bytes, (uint64_t)sent * t->len);
    t->seq += n; /* refused datagrams keep their numbers: they show as loss */
    t->next_ns += n * t->period_ns;
    f->due_ns = t->next_ns;
    return 0;
}

static int i3_recv_event(struct worker *w, struct flow *f, uint32_t events)
{
    struct i3udp_rx *r = f->priv;
    uint64_t moved = 0;

    (void)events;
    for (int i = 0; i < 64; i++) {
        ssize_t n = recv(f->fd, w->buf, w->buflen, MSG_DONTWAIT);
        uint64_t send_ns, seq;

        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            break;
        if (n < 0 && errno == ECONNREFUSED)
            continue;
        if (n < 0) {
            worker_flow_finish(w, f, errno);
            return 1;
        }
        /* too short for a header: a repeated 4-byte connect datagram, or not iperf3's */
        if (flow_iperf3_udp_parse((const uint8_t *)w->buf, (size_t)n, r->seq64, &send_ns, &seq))
            continue;
        flow_iperf3_udp_account(f->udp, seq);
        flow_udp_timing(f->udp, send_ns, clock_real_ns());
        moved += (uint64_t)n;
    }
    if (moved) {
        flow_add(&f->bytes, moved);
        atomic_store_explicit(&f->last_ns, clock_mono_ns(), memory_order_relaxed);
    }
    return 0;
}

static int i3_recv_stop(struct worker *w, struct flow *f)
{
    (void)w;
    f->due_ns = clock_mono_ns() + I3UDP_RX_DRAIN_NS;
    return 0;
}

static int i3_recv_timer(struct worker *w, struct flow *f, uint64_t now)
{
    (void)now;
    worker_flow_finish(w, f, 0);
    return 1;
}

const struct flow_ops flow_iperf3_udp_send_ops = {
    .name = "iperf3-udp-send",
    .events = 0,
    .on_event = flow_udp_send_event,
    .on_stop = flow_udp_send_stop,
    .on_timer = i3_send_timer,
    .on_start = i3_send_start,
};

const struct flow_ops flow_iperf3_udp_recv_ops = {
    .name = "iperf3-udp-recv",
    .events = EPOLLIN,
    .on_event = i3_recv_event,
    .on_stop = i3_recv_stop,
    .on_timer = i3_recv_timer,
};
