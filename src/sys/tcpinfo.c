/* tcpinfo: the only place that knows struct tcp_info. */
#include "tcpinfo.h"

#include <errno.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#define HAS(field) (len >= offsetof(struct tcp_info, field) + sizeof(ti.field))

/* Converts the first len bytes of a struct tcp_info (from getsockopt or from a sock_diag
 * INET_DIAG_INFO attribute); fields beyond len stay 0. */
static void from_tcp_info(const struct tcp_info *src, size_t len, struct tcpinfo *out)
{
    struct tcp_info ti;

    memset(&ti, 0, sizeof(ti));
    memcpy(&ti, src, len < sizeof(ti) ? len : sizeof(ti));
    memset(out, 0, sizeof(*out));
    out->valid = true;
    out->ca_state = ti.tcpi_ca_state;
    out->rtt_us = ti.tcpi_rtt;
    out->rttvar_us = ti.tcpi_rttvar;
    out->snd_cwnd = ti.tcpi_snd_cwnd;
    out->snd_mss = ti.tcpi_snd_mss;
    out->pmtu = ti.tcpi_pmtu;
    out->total_retrans = ti.tcpi_total_retrans;
    out->unacked = ti.tcpi_unacked;
    if (HAS(tcpi_min_rtt))
        out->min_rtt_us = ti.tcpi_min_rtt;
    if (HAS(tcpi_notsent_bytes))
        out->notsent_bytes = ti.tcpi_notsent_bytes;
    if (HAS(tcpi_pacing_rate))
        out->pacing_rate_bps = ti.tcpi_pacing_rate == ~0ULL ? 0 : ti.tcpi_pacing_rate * 8;
    if (HAS(tcpi_bytes_acked))
        out->bytes_acked = ti.tcpi_bytes_acked;
    if (HAS(tcpi_bytes_received))
        out->bytes_received = ti.tcpi_bytes_received;
    if (HAS(tcpi_data_segs_out))
        out->data_segs_out = ti.tcpi_data_segs_out;
    if (HAS(tcpi_delivery_rate))
        out->delivery_rate_bps = ti.tcpi_delivery_rate * 8;
    if (HAS(tcpi_sndbuf_limited)) {
        out->busy_us = ti.tcpi_busy_time;
        out->rwnd_limited_us = ti.tcpi_rwnd_limited;
        out->sndbuf_limited_us = ti.tcpi_sndbuf_limited;
    }
    if (HAS(tcpi_bytes_sent))
        out->bytes_sent = ti.tcpi_bytes_sent;
    if (HAS(tcpi_bytes_retrans))
        out->bytes_retrans = ti.tcpi_bytes_retrans;
    if (HAS(tcpi_snd_wnd))
        out->snd_wnd = ti.tcpi_snd_wnd;
}

int tcpinfo_read(int fd, struct tcpinfo *out)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);

    memset(out, 0, sizeof(*out));
    memset(&ti, 0, sizeof(ti));
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len))
        return -errno;
    from_tcp_info(&ti, len, out);
    return 0;
}

int tcpinfo_from_raw(const void *buf, size_t len, struct tcpinfo *out)
{
    if (!buf || len < offsetof(struct tcp_info, tcpi_rcv_rtt)) {
        memset(out, 0, sizeof(*out));
        return -EINVAL;
    }
    from_tcp_info(buf, len, out);
    return 0;
}

static uint64_t sub64(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

void tcpinfo_since(struct tcpinfo *now, const struct tcpinfo *before)
{
    if (!before->valid || !now->valid)
        return;
    now->total_retrans = (uint32_t)sub64(now->total_retrans, before->total_retrans);
    now->busy_us = sub64(now->busy_us, before->busy_us);
    now->rwnd_limited_us = sub64(now->rwnd_limited_us, before->rwnd_limited_us);
    now->sndbuf_limited_us = sub64(now->sndbuf_limited_us, before->sndbuf_limited_us);
    now->bytes_acked = sub64(now->bytes_acked, before->bytes_acked);
    now->bytes_received = sub64(now->bytes_received, before->bytes_received);
    now->bytes_retrans = sub64(now->bytes_retrans, before->bytes_retrans);
    now->bytes_sent = sub64(now->bytes_sent, before->bytes_sent);
    now->data_segs_out = (uint32_t)sub64(now->data_segs_out, before->data_segs_out);
}
