/* ctl: the control protocol's framing. A frame is "NRG" + version byte, a 32-bit big-endian
 * payload length, then that many bytes of JSON: an object whose "type" names the message.
 * Data connections instead open with a fixed 28-byte hello naming their test and flow.
 * docs/protocol.md describes the exchange. */
#ifndef NETRIG_CTL_H
#define NETRIG_CTL_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#define CTL_PROTO_VERSION  1
#define CTL_HDR_LEN        8
#define CTL_MAX_REQUEST    (64 * 1024) /* client → server messages */
#define CTL_MAX_RESPONSE   (32 << 20)  /* server → client (results of many flows) */
#define CTL_TYPE_MAX       32
#define CTL_TEST_ID_LEN    16
#define CTL_DATA_HELLO_LEN 28
/* A server ends a test this long past its duration and warm-up at the latest, whatever the
 * client does: every data socket is then shut down, and the results follow. */
#define CTL_END_GRACE_NS (1500ULL * 1000000ULL)

extern const unsigned char ctl_magic[4];      /* "NRG\1" */
extern const unsigned char ctl_data_magic[4]; /* "NRDT" */

/* Decodes one complete frame held in buf. Checks magic, version, length (<= maxlen),
 * JSON syntax, that the payload is an object with a short string "type". */
int ctl_decode(const uint8_t *buf, size_t len, size_t maxlen, cJSON **out, char *err,
               size_t errlen);
/* Reads one frame from fd; every read bounded by timeout_ms in total.
 * Returns 0, -ETIMEDOUT, -ENODATA (peer closed), -EPROTO or -EMSGSIZE with err filled. */
int ctl_recv(int fd, size_t maxlen, int timeout_ms, cJSON **out, char *err, size_t errlen);
/* Frames and writes msg. */
int ctl_send(int fd, const cJSON *msg, int timeout_ms);
/* The same, but only when the socket's send buffer has room for the whole frame with half of
 * it to spare (a peer that does not read never makes the sender wait): -EAGAIN when not,
 * and nothing is written. */
int ctl_send_if_room(int fd, const cJSON *msg, int timeout_ms);

/* The message's type (validated by decode). */
const char *ctl_type(const cJSON *msg);
cJSON *ctl_msg_new(const char *type);
/* {"type":"error","code":code,"message":text} */
cJSON *ctl_error_new(const char *code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Convenience: build and send an error message, ignoring failures (the peer may be gone). */
void ctl_send_error(int fd, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* accept's "flow_rate_limit_bps": the pace the server's --max-rate gives each flow. The
 * setter adds nothing for 0; the getter returns 0 when absent or outside 1 bit/s to 1 Pbit/s. */
void ctl_accept_set_flow_rate(cJSON *accept, uint64_t bps);
uint64_t ctl_accept_flow_rate(const cJSON *accept);
/* The class set (params.classes) the server marks its flows with, in its accept: the client
 * refuses a server that does not say it (an older one would send its flows unmarked). */
void ctl_accept_set_classes(cJSON *accept, uint8_t set);
uint8_t ctl_accept_classes(const cJSON *accept);

/* Data connection hello: magic, test id, flow index (big-endian), reserved. */
void ctl_data_hello_encode(uint8_t out[CTL_DATA_HELLO_LEN], const uint8_t id[CTL_TEST_ID_LEN],
                           uint32_t flow);
int ctl_data_hello_decode(const uint8_t in[CTL_DATA_HELLO_LEN], uint8_t id[CTL_TEST_ID_LEN],
                          uint32_t *flow);

/* Test ids travel as 32 hex digits in JSON. */
void ctl_id_to_hex(const uint8_t id[CTL_TEST_ID_LEN], char hex[2 * CTL_TEST_ID_LEN + 1]);
int ctl_id_from_hex(const char *hex, uint8_t id[CTL_TEST_ID_LEN]);

#endif
