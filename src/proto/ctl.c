/* ctl: control-frame encoding and decoding, with every size and type checked. */
#include "ctl.h"
#include "log.h"
#include "clock.h"

#include "dsclass.h"
#include "sock.h"

#include <ctype.h>
#include <errno.h>
#include <linux/sockios.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

const unsigned char ctl_magic[4] = {'N', 'R', 'G', CTL_PROTO_VERSION};
const unsigned char ctl_data_magic[4] = {'N', 'R', 'D', 'T'};

static uint32_t get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8),
    p[3] = (uint8_t)v;
}

static int check_header(const uint8_t *hdr, size_t maxlen, uint32_t *len, char *err, size_t errlen)
{
    if (memcmp(hdr, ctl_magic, 3)) {
        snprintf(err, errlen, "not a netrig control message (bad magic)");
        return -EPROTO;
    }
    if (hdr[3] != CTL_PROTO_VERSION) {
        snprintf(err, errlen,
                 "peer speaks control protocol version %u, this netrig speaks %u: "
                 "use the same netrig version on both ends",
                 hdr[3], CTL_PROTO_VERSION);
        return -EPROTO;
    }
    *len = get_be32(hdr + 4);
    if (*len == 0 || *len > maxlen) {
        snprintf(err, errlen, "control message of %u bytes is outside the limit of 1 to %zu", *len,
                 maxlen);
        return -EMSGSIZE;
    }
    return 0;
}

static int parse_payload(const char *payload, size_t len, cJSON **out, char *err, size_t errlen)
{
    const char *end = NULL;
    cJSON *msg = cJSON_ParseWithLengthOpts(payload, len, &end, 0);
    const cJSON *type;

    if (!msg) {
        snprintf(err, errlen, "control message is not valid JSON");
        return -EPROTO;
    }
    while (end && end < payload + len && isspace((unsigned char)*end))
        end++;
    if (end != payload + len) {
        snprintf(err, errlen, "control message has bytes after its JSON object");
        cJSON_Delete(msg);
        return -EPROTO;
    }
    type = cJSON_GetObjectItemCaseSensitive(msg, "type");
    if (!cJSON_IsObject(msg) || !cJSON_IsString(type) || strlen(type->valuestring) == 0 ||
        strlen(type->valuestring) > CTL_TYPE_MAX) {
        snprintf(err, errlen, "control message lacks a valid \"type\"");
        cJSON_Delete(msg);
        return -EPROTO;
    }
    *out = msg;
    return 0;
}

int ctl_decode(const uint8_t *buf, size_t len, size_t maxlen, cJSON **out, char *err, size_t errlen)
{
    uint32_t plen;
    int rc;

    *out = NULL;
    if (len < CTL_HDR_LEN) {
        snprintf(err, errlen, "control message truncated in its header");
        return -EPROTO;
    }
    rc = check_header(buf, maxlen, &plen, err, errlen);
    if (rc)
        return rc;
    if (len - CTL_HDR_LEN != plen) {
        snprintf(err, errlen, "control message length %u does not match the %zu bytes sent", plen,
                 len - CTL_HDR_LEN);
        return -EPROTO;
    }
    return parse_payload((const char *)buf + CTL_HDR_LEN, plen, out, err, errlen);
}

static const char *io_reason(int rc)
{
    switch (rc) {
    case -ETIMEDOUT: return "timed out waiting for the peer";
    case -ENODATA: return "peer closed the connection";
    default: return strerror(-rc);
    }
}

int ctl_recv(int fd, size_t maxlen, int timeout_ms, cJSON **out, char *err, size_t errlen)
{
    uint8_t hdr[CTL_HDR_LEN];
    uint32_t plen;
    char *payload;
    int64_t start = clock_mono_ms(), left;
    int rc;

    *out = NULL;
    rc = sock_read_full(fd, hdr, sizeof(hdr), timeout_ms);
    if (rc) {
        snprintf(err, errlen, "control channel: %s", io_reason(rc));
        return rc;
    }
    rc = check_header(hdr, maxlen, &plen, err, errlen);
    if (rc)
        return rc;
    payload = malloc(plen);
    if (!payload) {
        snprintf(err, errlen, "out of memory for a %u-byte control message", plen);
        return -ENOMEM;
    }
    left = timeout_ms - (clock_mono_ms() - start); /* one bound for the whole message */
    rc = left > 0 ? sock_read_full(fd, payload, plen, (int)left) : -ETIMEDOUT;
    if (rc)
        snprintf(err, errlen, "control channel: %s", io_reason(rc));
    else
        rc = parse_payload(payload, plen, out, err, errlen);
    free(payload);
    return rc;
}

/* msg as one frame (malloc'd), of *len bytes. */
static uint8_t *frame_of(const cJSON *msg, size_t *len)
{
    char *text = cJSON_PrintUnformatted(msg);
    size_t n;
    uint8_t *frame;

    if (!text)
        return NULL;
    n = strlen(text);
    frame = malloc(CTL_HDR_LEN + n);
    if (frame) {
        memcpy(frame, ctl_magic, 4);
        put_be32(frame + 4, (uint32_t)n);
        memcpy(frame + CTL_HDR_LEN, text, n);
        *len = CTL_HDR_LEN + n;
    }
    free(text);
    return frame;
}

int ctl_send(int fd, const cJSON *msg, int timeout_ms)
{
    size_t len;
    uint8_t *frame = frame_of(msg, &len);
    int rc;

    if (!frame)
        return -ENOMEM;
    rc = sock_write_full(fd, frame, len, timeout_ms);
    free(frame);
    return rc;
}

int ctl_send_if_room(int fd, const cJSON *msg, int timeout_ms)
{
    int queued = 0, sndbuf = 0;
    socklen_t sl = sizeof(sndbuf);
    size_t len;
    uint8_t *frame = frame_of(msg, &len);
    int rc = -EAGAIN;

    if (!frame)
        return -ENOMEM;
    /* SO_SNDBUF reads back twice what the kernel lets the data use: half of it is ours */
    if (!ioctl(fd, SIOCOUTQ, &queued) && !getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl) &&
        queued >= 0 && (uint64_t)queued + 2 * len <= (uint64_t)sndbuf / 2)
        rc = sock_write_full(fd, frame, len, timeout_ms);
    free(frame);
    return rc;
}

const char *ctl_type(const cJSON *msg)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(msg, "type");
    return cJSON_IsString(t) ? t->valuestring : "";
}

cJSON *ctl_msg_new(const char *type)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "type", type);
    return m;
}

static cJSON *error_new_v(const char *code, const char *fmt, va_list ap)
{
    char raw[512], text[512];
    cJSON *m = ctl_msg_new("error");

    vsnprintf(raw, sizeof(raw), fmt, ap);
    log_escape(raw, text, sizeof(text)); /* what a peer sent us is never echoed raw */
    cJSON_AddStringToObject(m, "code", code);
    cJSON_AddStringToObject(m, "message", text);
    return m;
}

cJSON *ctl_error_new(const char *code, const char *fmt, ...)
{
    va_list ap;
    cJSON *m;

    va_start(ap, fmt);
    m = error_new_v(code, fmt, ap);
    va_end(ap);
    return m;
}

void ctl_send_error(int fd, const char *code, const char *fmt, ...)
{
    va_list ap;
    cJSON *m;

    va_start(ap, fmt);
    m = error_new_v(code, fmt, ap);
    va_end(ap);
    ctl_send(fd, m, 2000);
    cJSON_Delete(m);
}

void ctl_data_hello_encode(uint8_t out[CTL_DATA_HELLO_LEN], const uint8_t id[CTL_TEST_ID_LEN],
                           uint32_t flow)
{
    memcpy(out, ctl_data_magic, 4);
    memcpy(out + 4, id, CTL_TEST_ID_LEN);
    put_be32(out + 20, flow);
    put_be32(out + 24, 0);
}

int ctl_data_hello_decode(const uint8_t in[CTL_DATA_HELLO_LEN], uint8_t id[CTL_TEST_ID_LEN],
                          uint32_t *flow)
{
    if (memcmp(in, ctl_data_magic, 4))
        return -EPROTO;
    memcpy(id, in + 4, CTL_TEST_ID_LEN);
    *flow = get_be32(in + 20);
    return 0;
}

void ctl_id_to_hex(const uint8_t id[CTL_TEST_ID_LEN], char hex[2 * CTL_TEST_ID_LEN + 1])
{
    for (int i = 0; i < CTL_TEST_ID_LEN; i++)
        snprintf(hex + 2 * i, 3, "%02x", id[i]);
}

int ctl_id_from_hex(const char *hex, uint8_t id[CTL_TEST_ID_LEN])
{
    if (strlen(hex) != 2 * CTL_TEST_ID_LEN)
        return -EINVAL;
    for (const char *p = hex; *p; p++)
        if (!isxdigit((unsigned char)*p))
            return -EINVAL;
    for (int i = 0; i < CTL_TEST_ID_LEN; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1)
            return -EINVAL;
        id[i] = (uint8_t)v;
    }
    return 0;
}

void ctl_accept_set_flow_rate(cJSON *accept, uint64_t bps)
{
    if (bps)
        cJSON_AddNumberToObject(accept, "flow_rate_limit_bps", (double)bps);
}

void ctl_accept_set_classes(cJSON *accept, uint8_t set)
{
    if (dsclass_count(set))
        cJSON_AddStringToObject(accept, "classes", dsclass_set_name(set));
}

uint8_t ctl_accept_classes(const cJSON *accept)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(accept, "classes");
    uint8_t set = DSCLASS_NONE;

    if (!cJSON_IsString(c) || dsclass_parse(c->valuestring, &set))
        return DSCLASS_NONE;
    return set;
}

uint64_t ctl_accept_flow_rate(const cJSON *accept)
{
    const cJSON *lim = cJSON_GetObjectItemCaseSensitive(accept, "flow_rate_limit_bps");

    if (!cJSON_IsNumber(lim) || lim->valuedouble < 1 || lim->valuedouble > 1e15)
        return 0;
    return (uint64_t)lim->valuedouble;
}
