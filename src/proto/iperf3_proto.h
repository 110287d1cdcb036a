/* iperf3_proto: the iperf3 control protocol, as an unmodified iperf3 (3.12 and later) speaks
 * it: the 37-byte cookie, the one-byte state codes and their order, length-prefixed JSON with
 * size caps and timeouts, the parameter object (to and from struct params) and the results
 * object (to and from a side_result). Everything but the two socket helpers is pure, so the
 * hostile-input cases are unit-tested. docs/protocol.md, "iperf3 compatibility", describes what
 * is supported and what is refused. */
#ifndef NETRIG_IPERF3_PROTO_H
#define NETRIG_IPERF3_PROTO_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "params.h"
#include "result.h"

#define IPERF3_DEFAULT_PORT    5201
#define IPERF3_COOKIE_LEN      37          /* 36 characters of [a-z2-7] and a NUL */
#define IPERF3_MAX_STREAMS     128         /* iperf3's -P limit (per direction) */
#define IPERF3_MAX_PARAMS      (64 * 1024) /* parameter JSON we accept */
#define IPERF3_MAX_RESULTS     (16 << 20)  /* results JSON we accept (server output included) */
#define IPERF3_MAX_TIME_S      86400
#define IPERF3_MAX_OUTPUT_TEXT (1 << 20) /* server_output_text we keep */

/* State bytes (a signed char on the wire). */
enum iperf3_state {
    IPERF3_TEST_START = 1,
    IPERF3_TEST_RUNNING = 2,
    IPERF3_TEST_END = 4,
    IPERF3_PARAM_EXCHANGE = 9,
    IPERF3_CREATE_STREAMS = 10,
    IPERF3_SERVER_TERMINATE = 11,
    IPERF3_CLIENT_TERMINATE = 12,
    IPERF3_EXCHANGE_RESULTS = 13,
    IPERF3_DISPLAY_RESULTS = 14,
    IPERF3_IPERF_DONE = 16,
    IPERF3_ACCESS_DENIED = -1,
    IPERF3_SERVER_ERROR = -2,
};

/* iperf3 error codes (i_errno) we send after SERVER_ERROR; an iperf3 client prints its own
 * text for each ("iperf3: error - ..."), with strerror(errno) for some. */
enum iperf3_err {
    IPERF3_IEDURATION = 5,
    IPERF3_IENUMSTREAMS = 6,
    IPERF3_IEBLOCKSIZE = 7,
    IPERF3_IEBUFSIZE = 8,
    IPERF3_IEMSS = 10,
    IPERF3_IEOMIT = 12,
    IPERF3_IEUNIMP = 13,
    IPERF3_IEBURST = 15,
    IPERF3_IEENDCONDITIONS = 16,
    IPERF3_IENOSCTP = 18,
    IPERF3_IEUDPBLOCKSIZE = 20,
    IPERF3_IEREVERSEBIDIR = 25,
    IPERF3_IETOTALRATE = 27,
    IPERF3_IEMAXDURATION = 37, /* 3.20 and later: over the server's maximum duration */
    IPERF3_IEINITTEST = 101,
    IPERF3_IEMESSAGE = 110,
    IPERF3_IERECVPARAMS = 114,
    IPERF3_IERECVRESULTS = 117,
    IPERF3_IESETTOS = 125,
    IPERF3_IESETFLOW = 127,
    IPERF3_IESETCONGESTION = 134,
    IPERF3_IEAUTHTEST = 142,
    IPERF3_IESETDONTFRAGMENT = 145,
    IPERF3_IESTREAMLISTEN = 202,
    IPERF3_IESTREAMACCEPT = 204,
};

/* ---- cookie ---- */
/* 36 random characters of [a-z2-7] and a NUL. 0, or -EIO when no randomness is available. */
int iperf3_proto_cookie_make(char cookie[IPERF3_COOKIE_LEN]);
/* Exactly a cookie: 36 characters of the alphabet then a NUL. */
bool iperf3_proto_cookie_valid(const uint8_t *buf, size_t len);
/* The first bytes of a new connection: IPERF3_SNIFF_MORE while they could still be a cookie. */
enum iperf3_sniff { IPERF3_SNIFF_NO, IPERF3_SNIFF_MORE, IPERF3_SNIFF_COOKIE, IPERF3_SNIFF_BAD };
enum iperf3_sniff iperf3_proto_cookie_sniff(const uint8_t *buf, size_t len);

/* ---- states ---- */
const char *iperf3_proto_state_name(int state);
/* Client side: the server sent `next` while we were in `cur` (0 before anything). Returns next
 * when it is the legal successor, or -ECONNREFUSED (access denied: busy), -EREMOTEIO (server
 * error: its code follows), -ECONNABORTED (server terminated) or -EPROTO (out of order). */
int iperf3_proto_client_step(int cur, int next);
/* Server side, while the test runs: 1 = the client ended the test (TEST_END), 0 = ignore
 * (TEST_START, IPERF_DONE), -ECONNABORTED = the client terminated, -EPROTO = anything else. */
int iperf3_proto_server_running_step(int msg);

/* ---- framing ---- */
/* Is buf valid UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF)? */
bool iperf3_proto_utf8_valid(const uint8_t *buf, size_t len);
/* Parses one JSON payload: valid UTF-8, one JSON object and nothing after it. */
int iperf3_proto_json_decode(const uint8_t *buf, size_t len, cJSON **out, char *err, size_t errlen);
/* Reads a 4-byte big-endian length (1 .. cap) and that much JSON, all within timeout_ms.
 * 0, -ETIMEDOUT, -ENODATA (peer closed), -EMSGSIZE (length over cap: not read), -EPROTO. */
int iperf3_proto_json_recv(int fd, size_t cap, int timeout_ms, cJSON **out, char *err,
                           size_t errlen);
int iperf3_proto_json_send(int fd, const cJSON *j, int timeout_ms);
int iperf3_proto_state_send(int fd, int state, int timeout_ms);
/* One state byte; -ETIMEDOUT, -ENODATA or -errno. */
int iperf3_proto_state_recv(int fd, int *state, int timeout_ms);
/* SERVER_ERROR, then the iperf3 error code and errno as big-endian int32. */
int iperf3_proto_error_send(int fd, int code, int err_no, int timeout_ms);
/* After SERVER_ERROR: the code and errno (either may be missing: 3.12 closes early). */
void iperf3_proto_error_recv(int fd, int *code, int *err_no, int timeout_ms);

/* ---- parameters ---- */
struct iperf3_params {
    struct params p; /* what the test runs (p.iperf3_wire set) */
    bool get_server_output;
    char client_version[32]; /* informational, "" when absent */
    uint32_t ignored;        /* how many understood-but-ignored options were present */
    char ignored_names[128]; /* their names, comma-separated (for the log) */
};

/* Server: reads an iperf3 client's parameter object. Every member is type- and range-checked;
 * absent members take iperf3's defaults. On refusal returns -EINVAL (or -EOPNOTSUPP for an
 * unsupported option) with *code/ *err_no to send and a one-line err naming the value. */
int iperf3_proto_params_decode(const cJSON *j, struct iperf3_params *out, int *code, int *err_no,
                               char *err, size_t errlen);
/* Client: the parameter object for p (whole seconds; UDP for its kind's UDP variant). */
cJSON *iperf3_proto_params_encode(const struct params *p, const char *client_version);

/* ---- results ---- */
struct iperf3_stream_result {
    int32_t id;
    uint64_t bytes;
    int64_t retransmits; /* -1 = unknown */
    double jitter_s;
    int64_t errors, packets;
    double start_s, end_s;
};

struct iperf3_results {
    double cpu_total, cpu_user, cpu_system; /* % of one CPU, the peer's process */
    int sender_has_retransmits;             /* 1, 0 or -1 */
    char congestion_used[PARAMS_CC_LEN];
    uint32_t nstreams;
    struct iperf3_stream_result *streams;
    char *server_output_text; /* NULL when absent; capped */
    bool has_server_output_json;
};

/* Stream ids on the wire: 1, 3, 4, 5, ... for flow 0, 1, 2, ... (iperf3 skips 2). */
int32_t iperf3_proto_stream_id(uint32_t flow);
/* The flow of a stream id, or -1 when the id is not one of n flows. */
int64_t iperf3_proto_stream_flow(int32_t id, uint32_t n);

/* Reads a results object: required members present with the right types and ranges, at most
 * max_streams streams, ids distinct. */
int iperf3_proto_results_decode(const cJSON *j, uint32_t max_streams, struct iperf3_results *out,
                                char *err, size_t errlen);
void iperf3_proto_results_free(struct iperf3_results *r);
/* Our side's results in iperf3's form (is_server: which end we are; both follow iperf3's rule
 * that sender_has_retransmits is -1 for an end that sent nothing). server_output (may be
 * NULL) is added as server_output_text. */
cJSON *iperf3_proto_results_encode(const struct side_result *s, const struct params *p,
                                   bool is_server, const char *server_output);

#endif
