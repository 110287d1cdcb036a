/* flow_udp: paced UDP streams. The sender keeps a timer schedule (-b or --pps per flow) and
 * writes datagrams carrying a sequence number and a send timestamp, in batches (UDP GSO when
 * the kernel and the datagram format allow it, else sendmmsg). Datagrams the socket refuses
 * still take their sequence number, so sending faster than the path allows shows up as loss at
 * the receiver. The receiver counts received, lost, duplicate and out-of-order datagrams,
 * jitter (RFC 3550) and one-way delay. The datagram format is a codec: netrig's own (below) or
 * iperf3's (flow_iperf3_udp.c); the loops are the same for both. */
#define _GNU_SOURCE
#include "flow_udp.h"
#include "clock.h"

#include "ctl.h"
#include "result.h"
#include "worker.h"

#include <endian.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

#define UDP_BATCH       32           /* datagrams per send call at most */
#define UDP_RX_DRAIN_NS 300000000ULL /* receivers listen this long after stop */
#define UDP_HDR         16           /* sequence number and send time */
#define UDP_WINDOW_BITS 1024

struct udp_tx {
    const struct flow_udp_codec *codec;
    uint64_t sent_pkts, send_drops; /* datagrams sent / not accepted by the socket */
    uint32_t len;
    uint32_t tail;       /* -n: the transfer's last datagram is this long */
    uint32_t burst;      /* -b RATE/BURST: datagrams back to back per round */
    uint32_t burst_left; /* of the current round */
    uint64_t period_ns;  /* time between datagrams */
    uint64_t next_ns;    /* when the next datagram is due */
    uint64_t seq;        /* the number the next datagram carries */
    bool gso;            /* UDP_SEGMENT works on this socket */
};

struct udp_rx {
    const struct flow_udp_codec *codec;
    struct flow_udp_rx acc;
};

static const struct flow_ops udp_send_ops, udp_recv_ops;

/* netrig's own format: the sequence number from 0 and the send time, both big-endian u64 */
struct udp_hdr {
    uint64_t seq;     /* big-endian on the wire, like the rest of the protocol */
    uint64_t send_ns; /* CLOCK_REALTIME, big-endian */
};

static void own_stamp(uint8_t *buf, size_t stride, uint32_t n, uint64_t seq, uint64_t real_ns)
{
    for (uint32_t i = 0; i < n; i++) {
        struct udp_hdr h = {.seq = htobe64(seq + i), .send_ns = htobe64(real_ns)};
        memcpy(buf + (size_t)i * stride, &h, sizeof(h));
    }
}

static int own_parse(const uint8_t *buf, size_t len, uint64_t *send_ns, uint64_t *seq)
{
    struct udp_hdr h;

    if (len < UDP_HDR || !memcmp(buf, ctl_data_magic, 4))
        return -EINVAL; /* a repeated hello, or not ours */
    memcpy(&h, buf, sizeof(h));
    *seq = be64toh(h.seq);
    *send_ns = be64toh(h.send_ns);
    return 0;
}

const struct flow_udp_codec flow_udp_codec = {
    .name = "netrig",
    .first_seq = 0,
    .gso = true,
    .stamp = own_stamp,
    .parse = own_parse,
    .account = flow_udp_account,
};

int flow_udp_setup(struct flow *f, const struct params *p, bool is_client,
                   const struct flow_udp_codec *codec)
{
    f->sender = params_flow_client_sends(p, f->id) == is_client;
    if (!f->sender) {
        struct udp_rx *r = calloc(1, sizeof(*r));
        if (!r)
            return -ENOMEM;
        r->codec = codec;
        r->acc.owd_min_ns = UINT64_MAX;
        f->priv = r;
        f->ops = &udp_recv_ops;
        return 0;
    }
    struct udp_tx *t = calloc(1, sizeof(*t));
    if (!t)
        return -ENOMEM;
    t->codec = codec;
    t->len = p->write_size;
    params_limit_units(p, &t->tail);
    t->burst = p->burst;
    t->seq = codec->first_seq;
    if (p->udp_pps)
        t->period_ns = 1000000000ULL / p->udp_pps;
    else {
        uint64_t bps = params_send_rate(p, params_flow_client_sends(p, f->id));
        t->period_ns = (uint64_t)(8e9 * p->write_size / (double)(bps ? bps : 1));
    }
    if (!t->period_ns)
        t->period_ns = 1;
    f->priv = t;
    f->ops = &udp_send_ops;
    return 0;
}

int flow_udp_init(struct flow *f, const struct params *p, bool is_client)
{
    return flow_udp_setup(f, p, is_client, &flow_udp_codec);
}

void flow_udp_needs(const struct params *p, bool is_client, struct flow_needs *out)
{
    (void)is_client;
    /* a batch of datagrams back to back: the default chunk holds several */
    *out = (struct flow_needs){.buf = p->write_size,
                               .state = sizeof(struct udp_tx) > sizeof(struct udp_rx)
                                            ? sizeof(struct udp_tx)
                                            : sizeof(struct udp_rx)};
}

struct flow_udp_rx *flow_udp_rx(struct flow *f)
{
    return f->sender ? NULL : &((struct udp_rx *)f->priv)->acc;
}

void flow_udp_collect(const struct flow *f, struct side_flow *out)
{
    const struct flow_udp_rx *rx;

    if (f->sender) {
        const struct udp_tx *t = f->priv;
        out->sent_pkts = t->sent_pkts;
        out->send_drops = t->send_drops;
        return;
    }
    rx = &((const struct udp_rx *)f->priv)->acc;
    out->has_udp_rx = true;
    out->udp.received = rx->received;
    out->udp.duplicates = rx->duplicates;
    out->udp.out_of_order = rx->out_of_order;
    out->udp.max_seq_plus1 = rx->max_seq_plus1;
    out->udp.jitter_ns = rx->jitter_ns;
    out->udp.owd_sum_ns = rx->owd_sum_ns;
    out->udp.owd_min_ns = rx->owd_min_ns == UINT64_MAX ? 0 : rx->owd_min_ns;
    out->udp.owd_max_ns = rx->owd_max_ns;
}

static int udp_send_start(struct worker *w, struct flow *f, uint64_t now)
{
    struct udp_tx *t = f->priv;
    int seg = (int)t->len;

    (void)w;
    t->gso = t->codec->gso && setsockopt(f->fd, IPPROTO_UDP, UDP_SEGMENT, &seg, sizeof(seg)) == 0;
    if (t->gso) {
        seg = 0; /* per-call only: set it back, we pass it in a control message */
        setsockopt(f->fd, IPPROTO_UDP, UDP_SEGMENT, &seg, sizeof(seg));
    }
    t->next_ns = now;
    f->due_ns = now;
    return 0;
}

/* n datagrams of t->len bytes, the last one `last` bytes long */
static ssize_t send_gso(struct worker *w, struct flow *f, struct udp_tx *t, uint32_t n,
                        uint32_t last)
{
    char control[CMSG_SPACE(sizeof(uint16_t))] = {0};
    struct iovec iov = {.iov_base = w->buf, .iov_len = (size_t)(n - 1) * t->len + last};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    struct cmsghdr *cm;

    if (n > 1) { /* the kernel cuts it into t->len segments; the last may be shorter */
        msg.msg_control = control;
        msg.msg_controllen = sizeof(control);
        cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = IPPROTO_UDP;
        cm->cmsg_type = UDP_SEGMENT;
        cm->cmsg_len = CMSG_LEN(sizeof(uint16_t));
        *(uint16_t *)CMSG_DATA(cm) = (uint16_t)t->len;
    }
    return sendmsg(f->fd, &msg, MSG_DONTWAIT) < 0 ? -1 : (ssize_t)n;
}

static ssize_t send_mmsg(struct worker *w, struct flow *f, struct udp_tx *t, uint32_t n,
                         uint32_t last)
{
    struct mmsghdr mm[UDP_BATCH];
    struct iovec iov[UDP_BATCH];

    for (uint32_t i = 0; i < n; i++) {
        iov[i].iov_base = w->buf + (size_t)i * t->len;
        iov[i].iov_len = i + 1 == n ? last : t->len;
        memset(&mm[i], 0, sizeof(mm[i]));
        mm[i].msg_hdr.msg_iov = &iov[i];
        mm[i].msg_hdr.msg_iovlen = 1;
    }
    return sendmmsg(f->fd, mm, n, MSG_DONTWAIT);
}

/* How many datagrams to send now: those due, a whole round with a burst, at most a batch. */
static uint32_t udp_batch(const struct worker *w, struct udp_tx *t, uint64_t now)
{
    /* within a round the schedule runs ahead of the clock */
    uint64_t due = now >= t->next_ns ? (now - t->next_ns) / t->period_ns + 1 : 1;
    uint32_t cap = (uint32_t)(w->buflen / t->len);

    if (cap > UDP_BATCH)
        cap = UDP_BATCH;
    if (t->gso && (size_t)cap * t->len > 65000)
        cap = (uint32_t)(65000 / t->len);
    if (cap < 1)
        cap = 1;
    if (t->burst > 1) {
        if (!t->burst_left)
            t->burst_left = t->burst;
        if (due < t->burst_left)
            due = t->burst_left; /* the whole round (the clock may be behind within it) */
    }
    return due < cap ? (uint32_t)due : cap;
}

static int udp_send_timer(struct worker *w, struct flow *f, uint64_t now)
{
    struct udp_tx *t = f->priv;
    uint32_t n = udp_batch(w, t, now), last = t->len;
    ssize_t sent;

    if (f->budget) { /* -n/-k: reserve these datagrams; none left means the transfer is done */
        uint64_t g = flow_budget_grant(f, n);
        if (!g) {
            worker_flow_complete(w, f);
            return 1;
        }
        n = (uint32_t)g;
        if (f->budget_last && f->allow == n)
            last = t->tail; /* this batch ends the whole transfer */
    }
    /* n datagrams back to back in the worker's buffer, the payload behind each header */
    t->codec->stamp((uint8_t *)w->buf, t->len, n, t->seq, clock_real_ns());
    sent = t->gso ? send_gso(w, f, t, n, last) : send_mmsg(w, f, t, n, last);
    if (sent < 0 && errno != EAGAIN && errno != ENOBUFS && errno != ECONNREFUSED &&
        errno != EINTR) {
        worker_flow_finish(w, f, errno);
        return 1;
    }
    if (sent < 0)
        sent = 0;
    t->sent_pkts += (uint64_t)sent;
    t->send_drops += n - (uint64_t)sent;
    flow_add(&f->bytes, (uint64_t)sent * t->len - ((uint32_t)sent == n ? t->len - last : 0));
    flow_budget_spend(f, (uint64_t)sent); /* refused datagrams are sent again, numbered anew */
    t->seq += n;
    t->next_ns += n * t->period_ns;
    t->burst_left -= t->burst_left < n ? t->burst_left : n;
    f->due_ns = t->burst_left ? now : t->next_ns; /* a round goes out back to back */
    return 0;
}

static int udp_send_event(struct worker *w, struct flow *f, uint32_t events)
{
    int soerr = 0;
    socklen_t len = sizeof(soerr);

    (void)w;
    (void)events;
    /* only errors (an ICMP port unreachable) arrive here: reading clears them */
    getsockopt(f->fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
    return 0;
}

static int udp_send_stop(struct worker *w, struct flow *f)
{
    worker_flow_finish(w, f, 0);
    return 1;
}

/* ---- receiver ---- */

static bool window_test_set(struct flow_udp_rx *rx, uint64_t seq)
{
    uint64_t bit = seq % UDP_WINDOW_BITS, word = bit / 64, mask = 1ULL << (bit % 64);
    bool was = rx->window[word] & mask;

    rx->window[word] |= mask;
    return was;
}

/* Accounts one datagram's sequence number. */
void flow_udp_account(struct flow_udp_rx *rx, uint64_t seq)
{
    if (seq >= rx->max_seq_plus1) {
        /* forget the sequence numbers the window now leaves behind (a peer chooses seq:
         * no arithmetic here may wrap) */
        uint64_t gap = seq - rx->max_seq_plus1; /* new numbers beyond seq itself */
        if (gap >= UDP_WINDOW_BITS - 1)
            memset(rx->window, 0, sizeof(rx->window));
        else
            for (uint64_t k = 0; k <= gap; k++) {
                uint64_t s = rx->max_seq_plus1 + k;
                rx->window[(s % UDP_WINDOW_BITS) / 64] &= ~(1ULL << (s % 64));
            }
        rx->max_seq_plus1 = seq == UINT64_MAX ? UINT64_MAX : seq + 1;
        window_test_set(rx, seq);
        rx->received++;
        return;
    }
    if (rx->max_seq_plus1 - seq > UDP_WINDOW_BITS) { /* too old to tell: a late one */
        rx->out_of_order++;
        rx->received++;
        return;
    }
    if (window_test_set(rx, seq)) {
        rx->duplicates++;
        return;
    }
    rx->out_of_order++;
    rx->received++;
}

/* a - b for peer-chosen values, saturating instead of overflowing */
static int64_t sat_diff(uint64_t a, uint64_t b)
{
    if (a >= b)
        return a - b > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)(a - b);
    return b - a > (uint64_t)INT64_MAX ? -INT64_MAX : -(int64_t)(b - a);
}

void flow_udp_timing(struct flow_udp_rx *rx, uint64_t send_ns, uint64_t recv_ns)
{
    /* the send time comes from the peer: no arithmetic here may overflow */
    int64_t transit = sat_diff(recv_ns, send_ns), d;
    uint64_t owd = transit > 0 ? (uint64_t)transit : 0;

    if (rx->have_transit) {
        if (__builtin_sub_overflow(transit, rx->last_transit_ns, &d))
            d = transit > 0 ? INT64_MAX : -INT64_MAX;
        rx->jitter_ns += (fabs((double)d) - rx->jitter_ns) / 16.0;
    }
    rx->last_transit_ns = transit;
    rx->have_transit = true;
    rx->owd_sum_ns += (double)owd;
    if (owd < rx->owd_min_ns)
        rx->owd_min_ns = owd;
    if (owd > rx->owd_max_ns)
        rx->owd_max_ns = owd;
}

static int udp_recv_event(struct worker *w, struct flow *f, uint32_t events)
{
    struct udp_rx *r = f->priv;
    const struct flow_udp_codec *codec = r->codec;
    struct flow_udp_rx *rx = &r->acc;
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
        /* too short for a header: a repeated hello, or not a datagram of this format */
        if (codec->parse((const uint8_t *)w->buf, (size_t)n, &send_ns, &seq))
            continue;
        codec->account(rx, seq);
        flow_udp_timing(rx, send_ns, clock_real_ns());
        moved += (uint64_t)n;
    }
    if (moved) {
        flow_add(&f->bytes, moved);
        atomic_store_explicit(&f->last_ns, worker_now(w), memory_order_relaxed);
    }
    return 0;
}

static int udp_recv_stop(struct worker *w, struct flow *f)
{
    (void)w;
    f->due_ns = worker_now(w) + UDP_RX_DRAIN_NS; /* datagrams still in flight */
    return 0;
}

static int udp_recv_timer(struct worker *w, struct flow *f, uint64_t now)
{
    (void)now;
    worker_flow_finish(w, f, 0);
    return 1;
}

static const struct flow_ops udp_send_ops = {
    .name = "udp-send",
    .events = 0, /* epoll reports errors always; the timer schedule drives sending */
    .on_event = udp_send_event,
    .on_stop = udp_send_stop,
    .on_timer = udp_send_timer,
    .on_start = udp_send_start,
};

static const struct flow_ops udp_recv_ops = {
    .name = "udp-recv",
    .events = EPOLLIN,
    .on_event = udp_recv_event,
    .on_stop = udp_recv_stop,
    .on_timer = udp_recv_timer,
};
