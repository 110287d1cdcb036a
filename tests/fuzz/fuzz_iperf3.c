/* libFuzzer target: everything an iperf3 peer can send. The input is taken three ways:
 *  - as the bytes that open a connection (cookie sniffing and validation) and as a run of
 *    state bytes (the client's state machine);
 *  - as one JSON payload (iperf3_proto_json_decode), read as the client's parameter object and
 *    as a results object, as the server and the client do;
 *  - as the raw control stream (a 4-byte big-endian length, then JSON) through the framed
 *    reader iperf3_proto_json_recv, over a socket pair holding the input then end-of-file;
 *  - as UDP test datagrams: the first byte picks 32- or 64-bit sequence numbers, the rest is
 *    cut into iperf3 datagram headers, read and accounted as flow_iperf3_udp.c's receiver
 *    does (and the sequence numbers also through netrig's own UDP receive window).
 * Parameters that decode are encoded again, as netrig's client would send them, and must
 * decode to the same test. Nothing may crash, leak or hang. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flow_iperf3_udp.h"
#include "iperf3_proto.h"

static void parse_objects(const cJSON *j)
{
    struct iperf3_params ip, again;
    struct iperf3_results res;
    char err[256];
    int code, err_no;

    if (iperf3_proto_params_decode(j, &ip, &code, &err_no, err, sizeof(err)) == 0) {
        cJSON *enc = iperf3_proto_params_encode(&ip.p, ip.client_version);
        if (enc) {
            const struct params *a = &ip.p, *b = &again.p;
            if (iperf3_proto_params_decode(enc, &again, &code, &err_no, err, sizeof(err)) ||
                a->udp != b->udp || a->flows != b->flows || a->dir != b->dir ||
                a->duration_ns != b->duration_ns || a->omit_ns != b->omit_ns ||
                a->write_size != b->write_size || a->window != b->window || a->mss != b->mss ||
                a->nodelay != b->nodelay || (a->udp && a->iperf3_udp64 != b->iperf3_udp64) ||
                a->udp_rate_bps != b->udp_rate_bps || a->fq_rate_bps != b->fq_rate_bps ||
                strcmp(a->congestion, b->congestion) || strcmp(a->title, b->title))
                abort(); /* netrig's own client would send what its server refuses or misreads */
            cJSON_Delete(enc);
        }
    }
    if (iperf3_proto_results_decode(j, 2 * IPERF3_MAX_STREAMS, &res, err, sizeof(err)) == 0)
        iperf3_proto_results_free(&res);
}

static void framed(const uint8_t *data, size_t size)
{
    int sv[2];
    cJSON *j = NULL;
    char err[256];

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
        return;
    /* what does not fit in the socket buffer is left out: a shorter stream, never a wait */
    if (size)
        (void)send(sv[1], data, size, MSG_DONTWAIT | MSG_NOSIGNAL);
    shutdown(sv[1], SHUT_WR);
    if (iperf3_proto_json_recv(sv[0], IPERF3_MAX_PARAMS, 2000, &j, err, sizeof(err)) == 0) {
        parse_objects(j);
        cJSON_Delete(j);
    }
    close(sv[0]);
    close(sv[1]);
}

static void datagrams(const uint8_t *data, size_t size)
{
    struct flow_udp_rx i3 = {.owd_min_ns = UINT64_MAX}, own = {.owd_min_ns = UINT64_MAX};
    bool seq64 = size && (data[0] & 1);
    size_t hdr = seq64 ? 16 : 12;
    uint64_t recv_ns = 1796000000000000000ULL; /* CLOCK_REALTIME in 2026 */

    for (size_t off = 1; off < size; off += hdr) {
        uint64_t send_ns, seq;
        if (flow_iperf3_udp_parse(data + off, size - off, seq64, &send_ns, &seq))
            break;
        flow_iperf3_udp_account(&i3, seq);
        flow_udp_timing(&i3, send_ns, recv_ns += 1000);
        flow_udp_account(&own, seq);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *j = NULL;
    char err[256];
    int state = 0;

    (void)iperf3_proto_cookie_sniff(data, size);
    (void)iperf3_proto_cookie_valid(data, size);
    for (size_t i = 0; i < size && i < 16 && state >= 0; i++)
        state = iperf3_proto_client_step(state, (int8_t)data[i]);
    if (size)
        (void)iperf3_proto_server_running_step((int8_t)data[0]);

    if (iperf3_proto_json_decode(data, size, &j, err, sizeof(err)) == 0) {
        parse_objects(j);
        cJSON_Delete(j);
    }
    framed(data, size);
    datagrams(data, size);
    return 0;
}
