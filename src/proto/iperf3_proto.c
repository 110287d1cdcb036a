/* iperf3_proto: cookie, states, framing and the JSON objects of the iperf3 control protocol.
 * Written from the protocol description (docs/protocol.md) and iperf3's observable behaviour;
 * every value a peer sends is checked here before anything else uses it. */
#define _GNU_SOURCE
#include "iperf3_proto.h"
#include "clock.h"

#include "sock.h"
#include "test_kind.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define I3_UDP_DEFAULT_LEN   1460 /* iperf3's UDP block size when none is sent */
#define I3_TCP_DEFAULT_LEN   (128 * 1024)
#define I3_UDP_UNLIMITED_BPS 100000000000ULL /* -b 0 on UDP: as fast as we can send */
#define I3_MAX_MSS           9216
#define I3_MAX_BURST         1000
#define I3_MAX_EXACT         9007199254740992.0     /* 2^53: integers a double holds exactly */
#define I3_MINUS_ONE_U64     18446744073709551616.0 /* (uint64_t)-1 as the double it parses to */

/* ---------------------------------------------------------------- cookie */

static const char cookie_chars[] = "abcdefghijklmnopqrstuvwxyz234567";

static bool cookie_char(uint8_t c) { return (c >= 'a' && c <= 'z') || (c >= '2' && c <= '7'); }

int iperf3_proto_cookie_make(char cookie[IPERF3_COOKIE_LEN])
{
    uint8_t r[IPERF3_COOKIE_LEN - 1];

    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
        return -EIO;
    for (size_t i = 0; i < sizeof(r); i++)
        cookie[i] = cookie_chars[r[i] % 32];
    cookie[IPERF3_COOKIE_LEN - 1] = '\0';
    return 0;
}

enum iperf3_sniff iperf3_proto_cookie_sniff(const uint8_t *buf, size_t len)
{
    size_t n = len < IPERF3_COOKIE_LEN ? len : IPERF3_COOKIE_LEN;

    for (size_t i = 0; i < n; i++) {
        if (i == IPERF3_COOKIE_LEN - 1)
            return buf[i] == '\0' ? IPERF3_SNIFF_COOKIE : IPERF3_SNIFF_BAD;
        if (!cookie_char(buf[i]))
            return i >= 8 ? IPERF3_SNIFF_BAD : IPERF3_SNIFF_NO; /* 8 letters: meant as one */
    }
    return len ? IPERF3_SNIFF_MORE : IPERF3_SNIFF_NO;
}

bool iperf3_proto_cookie_valid(const uint8_t *buf, size_t len)
{
    return len >= IPERF3_COOKIE_LEN && iperf3_proto_cookie_sniff(buf, len) == IPERF3_SNIFF_COOKIE;
}

/* ---------------------------------------------------------------- states */

const char *iperf3_proto_state_name(int state)
{
    switch (state) {
    case IPERF3_TEST_START: return "TEST_START";
    case IPERF3_TEST_RUNNING: return "TEST_RUNNING";
    case IPERF3_TEST_END: return "TEST_END";
    case IPERF3_PARAM_EXCHANGE: return "PARAM_EXCHANGE";
    case IPERF3_CREATE_STREAMS: return "CREATE_STREAMS";
    case IPERF3_SERVER_TERMINATE: return "SERVER_TERMINATE";
    case IPERF3_CLIENT_TERMINATE: return "CLIENT_TERMINATE";
    case IPERF3_EXCHANGE_RESULTS: return "EXCHANGE_RESULTS";
    case IPERF3_DISPLAY_RESULTS: return "DISPLAY_RESULTS";
    case IPERF3_IPERF_DONE: return "IPERF_DONE";
    case IPERF3_ACCESS_DENIED: return "ACCESS_DENIED";
    case IPERF3_SERVER_ERROR: return "SERVER_ERROR";
    default: return "unknown";
    }
}

int iperf3_proto_client_step(int cur, int next)
{
    static const int order[] = {0,
                                IPERF3_PARAM_EXCHANGE,
                                IPERF3_CREATE_STREAMS,
                                IPERF3_TEST_START,
                                IPERF3_TEST_RUNNING,
                                IPERF3_EXCHANGE_RESULTS,
                                IPERF3_DISPLAY_RESULTS};

    switch (next) {
    case IPERF3_ACCESS_DENIED: return -ECONNREFUSED;
    case IPERF3_SERVER_ERROR: return -EREMOTEIO;
    case IPERF3_SERVER_TERMINATE: return -ECONNABORTED;
    default: break;
    }
    for (size_t i = 0; i + 1 < sizeof(order) / sizeof(order[0]); i++)
        if (order[i] == cur && order[i + 1] == next)
            return next;
    return -EPROTO;
}

int iperf3_proto_server_running_step(int msg)
{
    switch (msg) {
    case IPERF3_TEST_END: return 1;
    case IPERF3_TEST_START:
    case IPERF3_IPERF_DONE: return 0;
    case IPERF3_CLIENT_TERMINATE: return -ECONNABORTED;
    default: return -EPROTO;
    }
}

/* ---------------------------------------------------------------- framing */

bool iperf3_proto_utf8_valid(const uint8_t *s, size_t len)
{
    size_t i = 0;

    while (i < len) {
        uint8_t c = s[i];
        size_t n;
        uint32_t cp;

        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf)
            n = 1, cp = c & 0x1f;
        else if (c >= 0xe0 && c <= 0xef)
            n = 2, cp = c & 0x0f;
        else if (c >= 0xf0 && c <= 0xf4)
            n = 3, cp = c & 0x07;
        else
            return false; /* continuation byte first, overlong 0xc0/0xc1, or above 0xf4 */
        if (len - i <= n) /* truncated sequence */
            return false;
        for (size_t k = 1; k <= n; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return false;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += n + 1;
    }
    return true;
}

int iperf3_proto_json_decode(const uint8_t *buf, size_t len, cJSON **out, char *err, size_t errlen)
{
    const char *end = NULL;
    cJSON *j;

    *out = NULL;
    for (size_t i = 0; i < len; i++) {
        if (buf[i] < 0x20 && buf[i] != '\t' && buf[i] != '\n' && buf[i] != '\r') {
            snprintf(err, errlen, "iperf3 JSON holds control byte 0x%02x at offset %zu", buf[i], i);
            return -EPROTO;
        }
    }
    if (!iperf3_proto_utf8_valid(buf, len)) {
        snprintf(err, errlen, "iperf3 JSON of %zu bytes is not valid UTF-8", len);
        return -EPROTO;
    }
    j = cJSON_ParseWithLengthOpts((const char *)buf, len, &end, 0);
    if (!j) {
        snprintf(err, errlen, "iperf3 message of %zu bytes is not valid JSON", len);
        return -EPROTO;
    }
    while (end && end < (const char *)buf + len && isspace((unsigned char)*end))
        end++;
    if (!cJSON_IsObject(j) || end != (const char *)buf + len) {
        snprintf(err, errlen, "iperf3 message is not one JSON object");
        cJSON_Delete(j);
        return -EPROTO;
    }
    *out = j;
    return 0;
}

static const char *io_text(int rc)
{
    switch (rc) {
    case -ETIMEDOUT: return "timed out";
    case -ENODATA: return "peer closed the connection";
    default: return strerror(-rc);
    }
}

int iperf3_proto_json_recv(int fd, size_t cap, int timeout_ms, cJSON **out, char *err,
                           size_t errlen)
{
    int64_t start = clock_mono_ms(), left;
    uint8_t hdr[4], *buf;
    uint32_t len;
    int rc;

    *out = NULL;
    rc = sock_read_full(fd, hdr, sizeof(hdr), timeout_ms);
    if (rc) {
        snprintf(err, errlen, "reading iperf3 JSON length: %s", io_text(rc));
        return rc;
    }
    len = (uint32_t)hdr[0] << 24 | (uint32_t)hdr[1] << 16 | (uint32_t)hdr[2] << 8 | hdr[3];
    if (len == 0 || len > cap) {
        snprintf(err, errlen, "iperf3 JSON length %u is outside 1 to %zu bytes", len, cap);
        return -EMSGSIZE;
    }
    buf = malloc(len);
    if (!buf) {
        snprintf(err, errlen, "out of memory for %u bytes of iperf3 JSON", len);
        return -ENOMEM;
    }
    left = timeout_ms - (clock_mono_ms() - start);
    rc = left > 0 ? sock_read_full(fd, buf, len, (int)left) : -ETIMEDOUT;
    if (rc)
        snprintf(err, errlen, "reading %u bytes of iperf3 JSON: %s", len, io_text(rc));
    else
        rc = iperf3_proto_json_decode(buf, len, out, err, errlen);
    free(buf);
    return rc;
}

int iperf3_proto_json_send(int fd, const cJSON *j, int timeout_ms)
{
    char *text = cJSON_PrintUnformatted(j);
    size_t len;
    uint8_t *buf;
    int rc;

    if (!text)
        return -ENOMEM;
    len = strlen(text);
    buf = malloc(len + 4);
    if (!buf || len > UINT32_MAX) {
        free(buf);
        free(text);
        return -ENOMEM;
    }
    buf[0] = (uint8_t)(len >> 24), buf[1] = (uint8_t)(len >> 16);
    buf[2] = (uint8_t)(len >> 8), buf[3] = (uint8_t)len;
    memcpy(buf + 4, text, len);
    rc = sock_write_full(fd, buf, len + 4, timeout_ms);
    free(buf);
    free(text);
    return rc;
}

int iperf3_proto_state_send(int fd, int state, int timeout_ms)
{
    int8_t b = (int8_t)state;
    return sock_write_full(fd, &b, 1, timeout_ms);
}

int iperf3_proto_state_recv(int fd, int *state, int timeout_ms)
{
    int8_t b;
    int rc = sock_read_full(fd, &b, 1, timeout_ms);

    if (!rc)
        *state = b;
    return rc;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8),
    p[3] = (uint8_t)v;
}

int iperf3_proto_error_send(int fd, int code, int err_no, int timeout_ms)
{
    uint8_t b[9];

    b[0] = (uint8_t)(int8_t)IPERF3_SERVER_ERROR;
    put_be32(b + 1, (uint32_t)code);
    put_be32(b + 5, (uint32_t)err_no);
    return sock_write_full(fd, b, sizeof(b), timeout_ms);
}

void iperf3_proto_error_recv(int fd, int *code, int *err_no, int timeout_ms)
{
    uint8_t b[4];

    *code = *err_no = -1;
    if (sock_read_full(fd, b, 4, timeout_ms))
        return;
    *code = (int32_t)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]);
    if (sock_read_full(fd, b, 4, timeout_ms))
        return;
    *err_no = (int32_t)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]);
}

/* ---------------------------------------------------------------- parameters */

struct pdec {
    const cJSON *j;
    int *code, *err_no;
    char *err;
    size_t errlen;
};

static int refuse(struct pdec *d, int code, int err_no, int rc, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int refuse(struct pdec *d, int code, int err_no, int rc, const char *fmt, ...)
{
    va_list ap;

    *d->code = code;
    *d->err_no = err_no;
    va_start(ap, fmt);
    vsnprintf(d->err, d->errlen, fmt, ap);
    va_end(ap);
    return rc;
}

/* A whole number member: absent leaves *v; present must be a number in [lo, hi]. */
static int num_in(struct pdec *d, const char *key, double lo, double hi, int code, double *v)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(d->j, key);

    if (!m)
        return 0;
    if (!cJSON_IsNumber(m) || !isfinite(m->valuedouble) || m->valuedouble != floor(m->valuedouble))
        return refuse(d, IPERF3_IERECVPARAMS, EINVAL, -EINVAL,
                      "iperf3 parameter '%s' must be a whole number", key);
    if (m->valuedouble < lo || m->valuedouble > hi)
        return refuse(d, code, 0, -EINVAL,
                      "iperf3 parameter '%s' = %.17g is outside %.17g to %.17g", key,
                      m->valuedouble, lo, hi);
    *v = m->valuedouble;
    return 0;
}

/* A flag: absent = false; true/false, or a number (non-zero = set), as iperf3 sends them. */
static int flag(struct pdec *d, const char *key, bool *v)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(d->j, key);

    *v = false;
    if (!m)
        return 0;
    if (cJSON_IsBool(m))
        *v = cJSON_IsTrue(m);
    else if (cJSON_IsNumber(m) && isfinite(m->valuedouble))
        *v = m->valuedouble != 0;
    else
        return refuse(d, IPERF3_IERECVPARAMS, EINVAL, -EINVAL,
                      "iperf3 parameter '%s' must be true, false or a number", key);
    return 0;
}

/* A string copied as printable ASCII ('?' for anything else), truncated to len - 1. */
static int text(struct pdec *d, const char *key, char *dst, size_t len)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(d->j, key);
    size_t i = 0;

    if (!m)
        return 0;
    if (!cJSON_IsString(m))
        return refuse(d, IPERF3_IERECVPARAMS, EINVAL, -EINVAL,
                      "iperf3 parameter '%s' must be a string", key);
    if (dst)
        for (const char *s = m->valuestring; *s && i + 1 < len; s++)
            dst[i++] = isprint((unsigned char)*s) ? *s : '?';
    if (dst && len)
        dst[i] = '\0';
    return 1;
}

static void note_ignored(struct iperf3_params *ip, const char *name)
{
    size_t used = strlen(ip->ignored_names);

    ip->ignored++;
    snprintf(ip->ignored_names + used, sizeof(ip->ignored_names) - used, "%s%s", used ? "," : "",
             name);
}

struct i3_raw {
    bool tcp, udp, sctp, nodelay, reverse, bidir, udp64, zerocopy, mptcp;
    double omit, time, num, blocks, parallel, len, window, mss, bandwidth, fqrate;
    double tos, flowlabel, dontfrag, burst, dummy;
};

/* Options we cannot honour: the client is told with the iperf3 code it prints best. */
static int check_unsupported(struct pdec *d, const struct i3_raw *r)
{
    if (r->sctp)
        return refuse(d, IPERF3_IENOSCTP, 0, -EOPNOTSUPP, "SCTP (--sctp) is not supported");
    if (cJSON_GetObjectItemCaseSensitive(d->j, "authtoken"))
        return refuse(d, IPERF3_IEAUTHTEST, 0, -EOPNOTSUPP,
                      "RSA authentication (--username) is not supported");
    if (r->num && r->blocks)
        return refuse(d, IPERF3_IEENDCONDITIONS, 0, -EINVAL, "both -n %.0f and -k %.0f given",
                      r->num, r->blocks);
    if (r->time == 0 && !r->num && !r->blocks)
        return refuse(d, IPERF3_IEUNIMP, 0, -EOPNOTSUPP,
                      "an unlimited duration (-t 0) is not supported");
    if (r->flowlabel)
        return refuse(d, IPERF3_IESETFLOW, 0, -EOPNOTSUPP,
                      "IPv6 flow labels (-L) are not supported");
    if (r->reverse && r->bidir)
        return refuse(d, IPERF3_IEREVERSEBIDIR, 0, -EINVAL, "-R and --bidir together");
    return 0;
}

static int read_numbers(struct pdec *d, struct i3_raw *r)
{
    const double big = 1e15;

    if (num_in(d, "omit", 0, IPERF3_MAX_TIME_S, IPERF3_IEOMIT, &r->omit) ||
        num_in(d, "time", 0, IPERF3_MAX_TIME_S, IPERF3_IEDURATION, &r->time) ||
        num_in(d, "num", 0, I3_MAX_EXACT, IPERF3_IERECVPARAMS, &r->num) ||
        num_in(d, "blockcount", 0, I3_MAX_EXACT, IPERF3_IERECVPARAMS, &r->blocks) ||
        num_in(d, "parallel", 1, IPERF3_MAX_STREAMS, IPERF3_IENUMSTREAMS, &r->parallel) ||
        num_in(d, "window", 0, PARAMS_MAX_WINDOW, IPERF3_IEBUFSIZE, &r->window) ||
        num_in(d, "MSS", 0, I3_MAX_MSS, IPERF3_IEMSS, &r->mss) ||
        num_in(d, "bandwidth", 0, big, IPERF3_IERECVPARAMS, &r->bandwidth) ||
        num_in(d, "fqrate", 0, big, IPERF3_IERECVPARAMS, &r->fqrate) ||
        num_in(d, "TOS", 0, 255, IPERF3_IESETTOS, &r->tos) ||
        num_in(d, "flowlabel", 0, 0xfffff, IPERF3_IESETFLOW, &r->flowlabel) ||
        num_in(d, "dont_fragment", 0, 1, IPERF3_IESETDONTFRAGMENT, &r->dontfrag) ||
        num_in(d, "burst", 0, I3_MAX_BURST, IPERF3_IEBURST, &r->burst) ||
        num_in(d, "pacing_timer", 0, 1e9, IPERF3_IERECVPARAMS, &r->dummy) ||
        num_in(d, "server_affinity", -1, 65535, IPERF3_IERECVPARAMS, &r->dummy))
        return -EINVAL;
    return num_in(d, "len", 1, PARAMS_MAX_WRITE, IPERF3_IEBLOCKSIZE, &r->len);
}

static int read_flags(struct pdec *d, struct i3_raw *r, struct iperf3_params *ip)
{
    bool dummy;

    if (flag(d, "tcp", &r->tcp) || flag(d, "udp", &r->udp) || flag(d, "sctp", &r->sctp) ||
        flag(d, "nodelay", &r->nodelay) || flag(d, "reverse", &r->reverse) ||
        flag(d, "bidirectional", &r->bidir) || flag(d, "udp_counters_64bit", &r->udp64) ||
        flag(d, "zerocopy", &r->zerocopy) || flag(d, "mptcp", &r->mptcp) ||
        flag(d, "get_server_output", &ip->get_server_output))
        return -EINVAL;
    /* understood, harmless to leave out: noted for the log */
    static const char *const ignored[] = {"repeating_payload", "skip_rx_copy", "gso", "gro"};
    for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++) {
        if (flag(d, ignored[i], &dummy))
            return -EINVAL;
        if (dummy)
            note_ignored(ip, ignored[i]);
    }
    if (r->burst > 1 && !r->bandwidth)
        note_ignored(ip, "burst");
    if (cJSON_GetObjectItemCaseSensitive(d->j, "server_affinity"))
        note_ignored(ip, "server_affinity");
    return 0;
}

static int read_strings(struct pdec *d, struct iperf3_params *ip)
{
    struct params *p = &ip->p;
    int rc;

    if (text(d, "title", p->title, sizeof(p->title)) < 0 ||
        text(d, "client_version", ip->client_version, sizeof(ip->client_version)) < 0 ||
        text(d, "extra_data", NULL, 0) < 0 || text(d, "congestion_used", NULL, 0) < 0 ||
        text(d, "authtoken", NULL, 0) < 0)
        return -EINVAL;
    rc = text(d, "congestion", p->congestion, sizeof(p->congestion));
    if (rc < 0)
        return rc;
    if (rc > 0) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(d->j, "congestion");
        size_t n = strlen(m->valuestring);
        bool ok = n > 0 && n < PARAMS_CC_LEN;
        for (const char *s = m->valuestring; ok && *s; s++)
            ok = isalnum((unsigned char)*s) || *s == '_' || *s == '-';
        if (!ok)
            return refuse(d, IPERF3_IESETCONGESTION, 0, -EINVAL,
                          "iperf3 congestion control '%s' is not a valid algorithm name",
                          p->congestion);
    }
    return 0;
}

/* iperf3 sends whole UDP datagrams until it has sent -n bytes: a last datagram too short for a
 * header becomes a whole one, as iperf3's own senders would send it. */
static void limit_whole_datagrams(struct params *p)
{
    uint32_t tail = 0;

    params_limit_units(p, &tail);
    if (p->bytes_limit && tail < PARAMS_UDP_HEADER)
        p->bytes_limit += p->write_size - tail;
}

/* The test iperf3's options describe, in netrig's terms. */
static void to_params(const struct i3_raw *r, struct params *p)
{
    /* a stream; -u its UDP variant, -m its MPTCP one (the daemon's listener must be MPTCP) */
    test_kind_apply(test_kind_at(r->udp     ? TEST_KIND_STREAM_UDP
                                 : r->mptcp ? TEST_KIND_STREAM_MPTCP
                                            : TEST_KIND_STREAM),
                    p);
    p->mptcp |= r->mptcp; /* -u -m: no kind; params_validate refuses it */
    p->iperf3_wire = true;
    p->iperf3_udp64 = r->udp64;
    p->flows = (uint32_t)r->parallel;
    p->dir = r->reverse ? PARAMS_DIR_REVERSE : r->bidir ? PARAMS_DIR_BIDIR : PARAMS_DIR_FORWARD;
    p->duration_ns = (uint64_t)r->time * 1000000000ULL;
    p->omit_ns = (uint64_t)r->omit * 1000000000ULL;
    p->interval_ns = 1000000000ULL;
    p->write_size = r->len ? (uint32_t)r->len : r->udp ? I3_UDP_DEFAULT_LEN : I3_TCP_DEFAULT_LEN;
    p->window = (uint32_t)r->window;
    p->mss = (uint32_t)r->mss;
    p->nodelay = r->nodelay;
    p->tos = (uint8_t)r->tos;
    p->fq_rate_bps = (uint64_t)r->fqrate;
    p->bytes_limit = (uint64_t)r->num;
    p->blocks_limit = (uint64_t)r->blocks;
    if (r->udp) {
        p->udp_rate_bps = r->bandwidth ? (uint64_t)r->bandwidth : I3_UDP_UNLIMITED_BPS;
        p->burst = (uint32_t)r->burst;
        p->dont_fragment = r->dontfrag != 0;
        limit_whole_datagrams(p);
    } else {
        /* -b on TCP: iperf3 paces each stream in the application, and so do we */
        p->app_rate_bps = (uint64_t)r->bandwidth;
        p->burst = r->bandwidth ? (uint32_t)r->burst : 0;
        p->zerocopy = r->zerocopy;
        /* --dont-fragment on TCP: Linux TCP sets DF on every segment already */
    }
}

int iperf3_proto_params_decode(const cJSON *j, struct iperf3_params *out, int *code, int *err_no,
                               char *err, size_t errlen)
{
    struct pdec d = {.j = j, .code = code, .err_no = err_no, .err = err, .errlen = errlen};
    struct i3_raw r = {.parallel = 1, .time = 10};
    char verr[256];
    int rc;

    memset(out, 0, sizeof(*out));
    params_defaults(&out->p);
    *code = *err_no = 0;
    if (!cJSON_IsObject(j))
        return refuse(&d, IPERF3_IERECVPARAMS, EINVAL, -EINVAL,
                      "iperf3 parameters are not an object");
    rc = read_numbers(&d, &r);
    if (!rc)
        rc = read_flags(&d, &r, out);
    if (!rc)
        rc = read_strings(&d, out);
    if (!rc)
        rc = check_unsupported(&d, &r);
    if (rc)
        return rc;
    if (r.udp && (r.len && (r.len < 16 || r.len > PARAMS_MAX_UDP_DATAGRAM)))
        return refuse(&d, IPERF3_IEUDPBLOCKSIZE, 0, -EINVAL,
                      "iperf3 UDP block size %.0f is outside 16 to %u bytes", r.len,
                      PARAMS_MAX_UDP_DATAGRAM);
    if (r.mss && r.mss < 88)
        return refuse(&d, IPERF3_IEMSS, 0, -EINVAL, "iperf3 MSS %.0f is below 88 bytes", r.mss);
    to_params(&r, &out->p);
    if (params_validate(&out->p, verr, sizeof(verr)))
        return refuse(&d, IPERF3_IERECVPARAMS, EINVAL, -EINVAL, "iperf3 parameters: %s", verr);
    return 0;
}

cJSON *iperf3_proto_params_encode(const struct params *p, const char *client_version)
{
    cJSON *j = cJSON_CreateObject();

    if (!j)
        return NULL;
    cJSON_AddTrueToObject(j, test_kind_is(p, TEST_KIND_DATAGRAMS) ? "udp" : "tcp");
    cJSON_AddNumberToObject(j, "omit", (double)(p->omit_ns / 1000000000ULL));
    cJSON_AddNumberToObject(j, "time", (double)(p->duration_ns / 1000000000ULL));
    cJSON_AddNumberToObject(j, "num", (double)p->bytes_limit);
    cJSON_AddNumberToObject(j, "blockcount", (double)p->blocks_limit);
    if (p->mss)
        cJSON_AddNumberToObject(j, "MSS", p->mss);
    if (p->nodelay)
        cJSON_AddTrueToObject(j, "nodelay");
    cJSON_AddNumberToObject(j, "parallel", p->flows);
    if (p->dir == PARAMS_DIR_REVERSE)
        cJSON_AddTrueToObject(j, "reverse");
    if (p->dir == PARAMS_DIR_BIDIR)
        cJSON_AddTrueToObject(j, "bidirectional");
    if (p->window)
        cJSON_AddNumberToObject(j, "window", p->window);
    cJSON_AddNumberToObject(j, "len", p->write_size);
    if (test_kind_is(p, TEST_KIND_DATAGRAMS) ||
        p->app_rate_bps) /* -b: UDP's rate, or TCP's application pacing */
        cJSON_AddNumberToObject(
            j, "bandwidth",
            (double)(test_kind_is(p, TEST_KIND_DATAGRAMS) ? p->udp_rate_bps : p->app_rate_bps));
    if (p->fq_rate_bps) /* the server's senders are paced by their sockets too */
        cJSON_AddNumberToObject(j, "fqrate", (double)p->fq_rate_bps);
    if (p->burst > 1)
        cJSON_AddNumberToObject(j, "burst", p->burst);
    if (p->tos)
        cJSON_AddNumberToObject(j, "TOS", p->tos);
    if (p->dont_fragment)
        cJSON_AddNumberToObject(j, "dont_fragment", 1);
    if (p->title[0])
        cJSON_AddStringToObject(j, "title", p->title);
    if (p->congestion[0])
        cJSON_AddStringToObject(j, "congestion", p->congestion);
    if (test_kind_is(p, TEST_KIND_DATAGRAMS) && p->iperf3_udp64)
        cJSON_AddNumberToObject(j, "udp_counters_64bit", 1);
    cJSON_AddStringToObject(j, "client_version", client_version);
    return j;
}

/* ---------------------------------------------------------------- results */

int32_t iperf3_proto_stream_id(uint32_t flow) { return flow == 0 ? 1 : (int32_t)flow + 2; }

int64_t iperf3_proto_stream_flow(int32_t id, uint32_t n)
{
    int64_t f = id == 1 ? 0 : id >= 3 ? (int64_t)id - 2 : -1;

    return f >= 0 && f < (int64_t)n ? f : -1;
}

/* A number member within [lo, hi]; whole when asked. 1 = absent, 0 = read, <0 = bad. */
static int rnum(const cJSON *o, const char *key, double lo, double hi, bool whole, double *v,
                char *err, size_t errlen)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, key);
    double x = cJSON_IsNumber(m) ? m->valuedouble : NAN;

    if (!m)
        return 1;
    if (lo < 0 && x == I3_MINUS_ONE_U64)
        x = -1; /* iperf3 3.12 prints -1 as the unsigned 64-bit 18446744073709551615 */
    if (!isfinite(x) || x < lo || x > hi || (whole && x != floor(x))) {
        snprintf(err, errlen, "iperf3 results: '%s' must be a %snumber from %g to %g", key,
                 whole ? "whole " : "", lo, hi);
        return -EPROTO;
    }
    *v = x;
    return 0;
}

static int decode_stream(const cJSON *s, struct iperf3_stream_result *r, char *err, size_t errlen)
{
    double v[8] = {0};
    static const struct {
        const char *key;
        double lo, hi;
        bool whole, required;
    } f[] = {
        {"id", 1, 1e6, true, true},
        {"bytes", 0, I3_MAX_EXACT, true, true},
        {"retransmits", -1, I3_MAX_EXACT, true, true},
        {"jitter", 0, 1e6, false, true},
        {"errors", -2147483648.0, I3_MAX_EXACT, true, true},
        {"packets", 0, I3_MAX_EXACT, true, true},
        {"start_time", 0, 1e7, false, false},
        {"end_time", 0, 1e7, false, false},
    };

    if (!cJSON_IsObject(s)) {
        snprintf(err, errlen, "iperf3 results: a stream is not an object");
        return -EPROTO;
    }
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
        int rc = rnum(s, f[i].key, f[i].lo, f[i].hi, f[i].whole, &v[i], err, errlen);
        if (rc < 0)
            return rc;
        if (rc > 0 && f[i].required) {
            snprintf(err, errlen, "iperf3 results: a stream lacks '%s'", f[i].key);
            return -EPROTO;
        }
    }
    if (v[7] < v[6]) {
        snprintf(err, errlen, "iperf3 results: stream %.0f ends (%g s) before it starts (%g s)",
                 v[0], v[7], v[6]);
        return -EPROTO;
    }
    r->id = (int32_t)v[0];
    r->bytes = (uint64_t)v[1];
    r->retransmits = (int64_t)v[2];
    r->jitter_s = v[3];
    r->errors = (int64_t)v[4];
    r->packets = (int64_t)v[5];
    r->start_s = v[6];
    r->end_s = v[7];
    return 0;
}

static int decode_top(const cJSON *j, struct iperf3_results *out, char *err, size_t errlen)
{
    const char *keys[] = {"cpu_util_total", "cpu_util_user", "cpu_util_system"};
    double *dst[] = {&out->cpu_total, &out->cpu_user, &out->cpu_system};
    const cJSON *cc = cJSON_GetObjectItemCaseSensitive(j, "congestion_used");
    const cJSON *txt = cJSON_GetObjectItemCaseSensitive(j, "server_output_text");
    double shr = 0;
    int rc;

    for (int i = 0; i < 3; i++) {
        rc = rnum(j, keys[i], -1, 1e6, false, dst[i], err, errlen);
        if (rc)
            goto missing;
    }
    rc = rnum(j, "sender_has_retransmits", -1, 1, true, &shr, err, errlen);
    if (rc)
        goto missing;
    out->sender_has_retransmits = (int)shr;
    if (cJSON_IsString(cc) && strlen(cc->valuestring) < PARAMS_CC_LEN) {
        bool ok = true;
        for (const char *s = cc->valuestring; ok && *s; s++)
            ok = isalnum((unsigned char)*s) || *s == '_' || *s == '-';
        if (ok)
            snprintf(out->congestion_used, sizeof(out->congestion_used), "%s", cc->valuestring);
    }
    if (cJSON_IsString(txt)) {
        size_t n = strnlen(txt->valuestring, IPERF3_MAX_OUTPUT_TEXT);
        out->server_output_text = strndup(txt->valuestring, n);
    }
    out->has_server_output_json =
        cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(j, "server_output_json"));
    return 0;
missing:
    if (rc > 0)
        snprintf(err, errlen, "iperf3 results lack the CPU or retransmit summary");
    return -EPROTO;
}

int iperf3_proto_results_decode(const cJSON *j, uint32_t max_streams, struct iperf3_results *out,
                                char *err, size_t errlen)
{
    const cJSON *streams = cJSON_GetObjectItemCaseSensitive(j, "streams");
    int n = 0, rc;

    memset(out, 0, sizeof(*out));
    if (!cJSON_IsObject(j)) {
        snprintf(err, errlen, "iperf3 results are not an object");
        return -EPROTO;
    }
    rc = decode_top(j, out, err, errlen);
    if (rc)
        goto fail;
    if (!cJSON_IsArray(streams) || (n = cJSON_GetArraySize(streams)) > (int)max_streams) {
        snprintf(err, errlen, "iperf3 results: 'streams' must be an array of at most %u",
                 max_streams);
        rc = -EPROTO;
        goto fail;
    }
    out->streams = calloc(n ? (size_t)n : 1, sizeof(*out->streams));
    if (!out->streams) {
        rc = -ENOMEM;
        goto fail;
    }
    for (int i = 0; i < n; i++) {
        rc = decode_stream(cJSON_GetArrayItem(streams, i), &out->streams[i], err, errlen);
        for (uint32_t k = 0; !rc && k < out->nstreams; k++)
            if (out->streams[k].id == out->streams[i].id) {
                snprintf(err, errlen, "iperf3 results: stream id %d appears twice",
                         out->streams[i].id);
                rc = -EPROTO;
            }
        if (rc)
            goto fail;
        out->nstreams++;
    }
    return 0;
fail:
    iperf3_proto_results_free(out);
    return rc;
}

void iperf3_proto_results_free(struct iperf3_results *r)
{
    free(r->streams);
    free(r->server_output_text);
    r->streams = NULL;
    r->server_output_text = NULL;
    r->nstreams = 0;
}

/* iperf3 numbers datagrams from 1: a receiver's highest sequence number is what was sent up
 * to it (flow_iperf3_udp.c keeps it in max_seq_plus1). */
static void udp_counts(const struct side_flow *f, int64_t *packets, int64_t *errors)
{
    if (f->sender) {
        *packets = (int64_t)(f->sent_pkts + f->send_drops);
        *errors = 0;
    } else if (f->has_udp_rx) {
        *packets = (int64_t)f->udp.max_seq_plus1;
        *errors = *packets > (int64_t)f->udp.received ? *packets - (int64_t)f->udp.received : 0;
    } else {
        *packets = *errors = 0;
    }
}

cJSON *iperf3_proto_results_encode(const struct side_result *s, const struct params *p,
                                   bool is_server, const char *server_output)
{
    cJSON *j = cJSON_CreateObject(), *arr;
    double ncpu = s->cpu.valid && s->cpu.ncpu > 0 ? s->cpu.ncpu : 0;
    bool sends = false;

    (void)is_server; /* both ends follow iperf3's rule: -1 when this end sent nothing */
    if (!j)
        return NULL;
    for (uint32_t i = 0; i < s->nflows; i++)
        sends |= s->flows[i].sender;
    cJSON_AddNumberToObject(j, "cpu_util_total",
                            (s->cpu.threads_user_pct + s->cpu.threads_system_pct) * ncpu);
    cJSON_AddNumberToObject(j, "cpu_util_user", s->cpu.threads_user_pct * ncpu);
    cJSON_AddNumberToObject(j, "cpu_util_system", s->cpu.threads_system_pct * ncpu);
    cJSON_AddNumberToObject(j, "sender_has_retransmits",
                            !sends                                 ? -1
                            : test_kind_is(p, TEST_KIND_DATAGRAMS) ? 0
                                                                   : 1);
    if (!test_kind_is(p, TEST_KIND_DATAGRAMS) && s->congestion[0])
        cJSON_AddStringToObject(j, "congestion_used", s->congestion);
    if (server_output)
        cJSON_AddStringToObject(j, "server_output_text", server_output);
    arr = cJSON_AddArrayToObject(j, "streams");
    for (uint32_t i = 0; arr && i < s->nflows; i++) {
        const struct side_flow *f = &s->flows[i];
        cJSON *o = cJSON_CreateObject();
        int64_t packets = 0, errors = 0;

        if (test_kind_is(p, TEST_KIND_DATAGRAMS))
            udp_counts(f, &packets, &errors);
        cJSON_AddNumberToObject(o, "id", iperf3_proto_stream_id(f->id));
        cJSON_AddNumberToObject(o, "bytes", (double)f->bytes);
        cJSON_AddNumberToObject(o, "retransmits",
                                f->sender && !test_kind_is(p, TEST_KIND_DATAGRAMS) && f->ti.valid
                                    ? (double)f->ti.total_retrans
                                    : -1.0);
        cJSON_AddNumberToObject(o, "jitter",
                                !f->sender && f->has_udp_rx ? f->udp.jitter_ns / 1e9 : 0);
        cJSON_AddNumberToObject(o, "errors", (double)errors);
        cJSON_AddNumberToObject(o, "packets", (double)packets);
        cJSON_AddNumberToObject(o, "start_time", 0);
        cJSON_AddNumberToObject(o, "end_time", f->seconds);
        cJSON_AddItemToArray(arr, o);
    }
    return j;
}
