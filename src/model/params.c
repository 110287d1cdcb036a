/* params: defaults, validation and the JSON form of test parameters. Everything a peer sends
 * is checked here before any other module sees it. */
#include "params.h"

#include "dsclass.h"
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void params_defaults(struct params *p)
{
    memset(p, 0, sizeof(*p));
    p->flows = 1;
    p->threads = 1;
    p->server_threads = 0; /* 0: same as threads */
    p->duration_ns = 10ULL * 1000000000ULL;
    p->interval_ns = 1000000000ULL;
    /* 1 MiB writes: a quarter of the syscalls of iperf3's 128 KiB, which on a fast path
     * (loopback: 22 -> 35+ Gbit/s for one flow here) is where the CPU goes */
    p->write_size = 1024 * 1024;
    p->notsent_lowat = PARAMS_NOTSENT_AUTO;
    p->dir = PARAMS_DIR_FORWARD;
    p->test = PARAMS_TEST_STREAM;
    p->req_size = 1;
    p->resp_size = 1;
    p->depth = 1;
    p->udp_rate_bps = 1000000; /* iperf3's UDP default */
    p->txn_timeout_ns = 2ULL * 1000000000ULL;
}

const char *params_test_name(enum params_test t)
{
    switch (t) {
    case PARAMS_TEST_RR: return "rr";
    case PARAMS_TEST_CRR: return "crr";
    default: return "stream";
    }
}

int params_test_from_name(const char *s)
{
    if (!strcmp(s, "stream"))
        return PARAMS_TEST_STREAM;
    if (!strcmp(s, "rr"))
        return PARAMS_TEST_RR;
    if (!strcmp(s, "crr"))
        return PARAMS_TEST_CRR;
    return -1;
}

bool params_is_transactional(const struct params *p) { return p->test != PARAMS_TEST_STREAM; }

const char *params_dir_name(enum params_dir d)
{
    switch (d) {
    case PARAMS_DIR_REVERSE: return "reverse";
    case PARAMS_DIR_BIDIR: return "bidir";
    default: return "forward";
    }
}

bool params_has_limit(const struct params *p) { return p->bytes_limit || p->blocks_limit; }

const char *params_limit_name(const struct params *p)
{
    return p->bytes_limit ? "bytes" : p->blocks_limit ? "blocks" : "";
}

uint64_t params_limit_units(const struct params *p, uint32_t *tail)
{
    uint64_t len = p->write_size ? p->write_size : 1;

    if (tail)
        *tail = p->write_size;
    if (!p->udp)
        return p->bytes_limit ? p->bytes_limit : p->blocks_limit * len;
    if (!p->bytes_limit)
        return p->blocks_limit;
    if (tail && p->bytes_limit % len)
        *tail = (uint32_t)(p->bytes_limit % len);
    return (p->bytes_limit + len - 1) / len;
}

void params_span(const struct params *p, char *buf, size_t len)
{
    char size[32] = "", time[32] = "";
    const char *each = p->dir == PARAMS_DIR_BIDIR ? " each way" : "";

    if (p->duration_ns)
        snprintf(time, sizeof(time), "%.4gs", p->duration_ns / 1e9);
    if (p->bytes_limit)
        units_format_bytes((double)p->bytes_limit, size, sizeof(size));
    else if (p->blocks_limit)
        snprintf(size, sizeof(size), "%llu %s", (unsigned long long)p->blocks_limit,
                 p->udp ? "datagrams" : "blocks");
    snprintf(buf, len, "%s%s%s%s", time, time[0] && size[0] ? " or " : "", size,
             size[0] ? each : "");
}

uint64_t params_time_cap_ns(const struct params *p)
{
    return p->duration_ns ? p->duration_ns : PARAMS_MAX_DURATION_NS;
}

uint32_t params_total_flows(const struct params *p)
{
    return p->dir == PARAMS_DIR_BIDIR ? 2 * p->flows : p->flows;
}

bool params_flow_client_sends(const struct params *p, uint32_t i)
{
    switch (p->dir) {
    case PARAMS_DIR_REVERSE: return false;
    case PARAMS_DIR_BIDIR: return i < p->flows;
    default: return true;
    }
}

uint64_t params_send_rate(const struct params *p, bool client_sends)
{
    if (p->down_rate_set && !client_sends)
        return p->down_rate_bps;
    return p->udp ? p->udp_rate_bps : p->app_rate_bps;
}

uint64_t params_min_sample(const struct params *p)
{
    uint64_t ns = (uint64_t)params_total_flows(p) * 1000000000ULL / PARAMS_MAX_SAMPLE_RATE;

    return ns < PARAMS_MIN_SAMPLE_NS ? PARAMS_MIN_SAMPLE_NS : ns;
}

uint64_t params_default_sample(const struct params *p)
{
    uint64_t lo = params_min_sample(p);

    if (!p->interval_ns)
        return 0;
    return p->interval_ns < lo ? lo : p->interval_ns;
}

/* strtol with base 0 over the whole string, within [0, hi] */
static int parse_small(const char *s, long hi, long *out)
{
    char *end = NULL;
    long v;

    if (!s || !*s || !isdigit((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    v = strtol(s, &end, 0);
    if (errno || *end || v < 0 || v > hi)
        return -EINVAL;
    *out = v;
    return 0;
}

int params_parse_tos(const char *s, uint8_t *tos)
{
    long v;

    if (parse_small(s, 255, &v))
        return -EINVAL;
    *tos = (uint8_t)v;
    return 0;
}

int params_parse_dscp(const char *s, uint8_t *tos)
{
    static const struct {
        const char *name;
        uint8_t dscp;
    } names[] = {
        {"cs0", 0},   {"cs1", 8},   {"cs2", 16},  {"cs3", 24},  {"cs4", 32},  {"cs5", 40},
        {"cs6", 48},  {"cs7", 56},  {"af11", 10}, {"af12", 12}, {"af13", 14}, {"af21", 18},
        {"af22", 20}, {"af23", 22}, {"af31", 26}, {"af32", 28}, {"af33", 30}, {"af41", 34},
        {"af42", 36}, {"af43", 38}, {"ef", 46},   {"va", 44},   {"le", 1},
    };
    long v;

    for (size_t i = 0; s && i < sizeof(names) / sizeof(names[0]); i++)
        if (!strcasecmp(s, names[i].name)) {
            *tos = (uint8_t)(names[i].dscp << 2);
            return 0;
        }
    if (parse_small(s, 63, &v))
        return -EINVAL;
    *tos = (uint8_t)(v << 2);
    return 0;
}

static bool printable(const char *s)
{
    for (; *s; s++)
        if (!isprint((unsigned char)*s))
            return false;
    return true;
}

static bool cc_name_ok(const char *s)
{
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
            return false;
    return true;
}

/* -n and -k: one of them, on stream tests, a transfer a JSON number holds exactly, and for
 * UDP a last datagram that still holds a header. */
static int limits_invalid(const struct params *p, char *err, size_t errlen)
{
    uint32_t tail = 0;

    if (!params_has_limit(p))
        return 0;
    if (p->bytes_limit && p->blocks_limit) {
        snprintf(err, errlen, "-n and -k both end the test: give one of them");
        return -EINVAL;
    }
    if (p->test != PARAMS_TEST_STREAM) {
        snprintf(err, errlen, "-%c (a transfer of a fixed size) applies to stream tests only",
                 p->bytes_limit ? 'n' : 'k');
        return -EINVAL;
    }
    if (p->bytes_limit > PARAMS_MAX_LIMIT || p->blocks_limit > PARAMS_MAX_LIMIT ||
        (!p->udp && p->blocks_limit > PARAMS_MAX_LIMIT / (p->write_size ? p->write_size : 1))) {
        snprintf(err, errlen, "-%c %llu is too large: at most 2^53 bytes in all",
                 p->bytes_limit ? 'n' : 'k',
                 (unsigned long long)(p->bytes_limit ? p->bytes_limit : p->blocks_limit));
        return -EINVAL;
    }
    params_limit_units(p, &tail);
    if (p->udp && p->bytes_limit && tail < PARAMS_UDP_HEADER) {
        snprintf(err, errlen,
                 "-n %llu with %u-byte datagrams (-l) leaves a last datagram of %u bytes, "
                 "shorter than the %d-byte header: use -n %llu or %llu, or -k",
                 (unsigned long long)p->bytes_limit, p->write_size, tail, PARAMS_UDP_HEADER,
                 (unsigned long long)(p->bytes_limit - tail),
                 (unsigned long long)(p->bytes_limit - tail + PARAMS_UDP_HEADER));
        return -EINVAL;
    }
    return 0;
}

/* --pps, -b on TCP and its burst, --dont-fragment: where each applies. */
static int pacing_invalid(const struct params *p, char *err, size_t errlen)
{
#define FAIL(...)                                                                                  \
    do {                                                                                           \
        snprintf(err, errlen, __VA_ARGS__);                                                        \
        return -EINVAL;                                                                            \
    } while (0)
    if (!p->udp && p->udp_pps)
        FAIL("--pps %llu applies to UDP streams (-u) only: pace TCP with -b RATE",
             (unsigned long long)p->udp_pps);
    if (!p->udp && p->dont_fragment)
        FAIL("--dont-fragment applies to UDP (-u) only: TCP never sends fragments");
    if (p->app_rate_bps && (p->udp || p->test != PARAMS_TEST_STREAM))
        FAIL("application pacing of TCP (-b %llu) applies to TCP streams only",
             (unsigned long long)p->app_rate_bps);
    if (p->down_rate_set && (p->dir != PARAMS_DIR_BIDIR || p->test != PARAMS_TEST_STREAM))
        FAIL("-b UP,DOWN applies to --bidir streams only: give one rate, e.g. -b 100M");
    if (p->down_rate_set && p->udp_pps)
        FAIL("-b UP,DOWN and --pps exclude each other: give the rates with -b UP,DOWN");
    if (p->down_rate_set && p->udp && !p->down_rate_bps)
        FAIL("-b UP,0 sends nothing from the server: give a DOWN rate above 0, e.g. -b 20M,100M");
    if (p->burst > PARAMS_MAX_BURST)
        FAIL("burst (-b RATE/%u) is out of range: use 1 to %u", p->burst, PARAMS_MAX_BURST);
    if (p->burst > 1 && p->test != PARAMS_TEST_STREAM)
        FAIL("a burst (-b RATE/%u) applies to stream tests only", p->burst);
    if (p->burst > 1 && !p->udp && !p->app_rate_bps && !p->down_rate_bps)
        FAIL("a burst (-b RATE/%u) needs a rate: give -b RATE/%u with RATE above 0", p->burst,
             p->burst);
    return 0;
#undef FAIL
}

/* --mptcp: TCP stream and rr only, without the options MPTCP sockets refuse */
static int mptcp_invalid(const struct params *p, char *err, size_t errlen)
{
    const char *what = NULL;

    if (!p->mptcp)
        return 0;
    if (p->udp)
        what = "-u (MPTCP carries TCP only)";
    else if (p->test == PARAMS_TEST_CRR)
        what = "crr (each transaction would open an MPTCP connection of its own)";
    else if (p->zerocopy)
        what = "-Z (MPTCP sockets have no MSG_ZEROCOPY)";
    else if (p->zerocopy_rx)
        what = "--zerocopy-rx (MPTCP sockets have no TCP_ZEROCOPY_RECEIVE)";
    else if (p->fq_rate_bps)
        what = "--fq-rate (MPTCP sockets have no SO_MAX_PACING_RATE: pace with -b RATE)";
    if (!what)
        return 0;
    snprintf(err, errlen, "--mptcp does not apply with %s", what);
    return -EINVAL;
}

/* --sample: 0, or a period from 10 ms (longer with many flows) to a day */
static int sample_invalid(const struct params *p, char *err, size_t errlen)
{
    if (p->sample_ns && p->sample_ns < PARAMS_MIN_SAMPLE_NS)
        snprintf(err, errlen, "sample period (--sample) %.3gms is too short: use at least 10ms",
                 p->sample_ns / 1e6);
    else if (p->sample_ns > PARAMS_MAX_DURATION_NS)
        snprintf(err, errlen, "sample period (--sample) %.3gs is too long: use at most 86400s",
                 p->sample_ns / 1e9);
    else if (p->sample_ns && p->sample_ns < params_min_sample(p))
        snprintf(err, errlen,
                 "sample period (--sample) %.3gms with %u flows reads more than %d sockets a "
                 "second: use at least %.0fms",
                 p->sample_ns / 1e6, params_total_flows(p), PARAMS_MAX_SAMPLE_RATE,
                 ceil(params_min_sample(p) / 1e6));
    else
        return 0;
    return -EINVAL;
}

/* --classes: a known set, not beside a TOS byte of its own, not on crr. */
static bool classes_invalid(const struct params *p, char *err, size_t errlen)
{
    if (!p->classes)
        return false;
    if (!dsclass_count(p->classes))
        snprintf(err, errlen, "class set %u is unknown", p->classes);
    else if (p->tos)
        snprintf(err, errlen,
                 "the classes (--classes %s) mark each flow: a TOS byte (%u, -S/--dscp) does not "
                 "combine with them",
                 dsclass_set_name(p->classes), p->tos);
    else if (p->test == PARAMS_TEST_CRR)
        snprintf(err, errlen,
                 "the classes (--classes %s) mark stream and rr flows: crr does not take them",
                 dsclass_set_name(p->classes));
    else
        return false;
    return true;
}

int params_validate(const struct params *p, char *err, size_t errlen)
{
#define FAIL(...)                                                                                  \
    do {                                                                                           \
        snprintf(err, errlen, __VA_ARGS__);                                                        \
        return -EINVAL;                                                                            \
    } while (0)
    if (p->flows < 1 || p->flows > PARAMS_MAX_FLOWS)
        FAIL("flows (-P) %u is out of range: use 1 to %u", p->flows, PARAMS_MAX_FLOWS);
    if (p->threads < 1 || p->threads > PARAMS_MAX_THREADS)
        FAIL("threads (-T) %u is out of range: use 1 to %u", p->threads, PARAMS_MAX_THREADS);
    if (p->server_threads > PARAMS_MAX_THREADS)
        FAIL("server threads %u is out of range: use 1 to %u", p->server_threads,
             PARAMS_MAX_THREADS);
    if ((p->duration_ns || !params_has_limit(p)) &&
        (p->duration_ns < PARAMS_MIN_INTERVAL_NS || p->duration_ns > PARAMS_MAX_DURATION_NS))
        FAIL("duration (-t) %.3gs is out of range: use 0.1s to 86400s", p->duration_ns / 1e9);
    if (p->omit_ns > PARAMS_MAX_DURATION_NS)
        FAIL("omit (-O) %.3gs is out of range: use 0 to 86400s", p->omit_ns / 1e9);
    if (p->interval_ns && p->interval_ns < PARAMS_MIN_INTERVAL_NS)
        FAIL("interval (-i) %.3gs is too short: use 0 (off) or at least 0.1s",
             p->interval_ns / 1e9);
    if (p->interval_ns > PARAMS_MAX_DURATION_NS)
        FAIL("interval (-i) %.3gs is too long: use at most 86400s", p->interval_ns / 1e9);
    if (p->write_size < 1 || p->write_size > PARAMS_MAX_WRITE)
        FAIL("write size (-l) %u is out of range: use 1 to 16M", p->write_size);
    if (p->window > PARAMS_MAX_WINDOW)
        FAIL("window (-w) %u is out of range: use at most 1G", p->window);
    if (p->mss && (p->mss < 88 || p->mss > 65535))
        FAIL("MSS (--mss) %u is out of range: use 88 to 65535", p->mss);
    if ((unsigned)p->dir > PARAMS_DIR_BIDIR)
        FAIL("direction %d is unknown", (int)p->dir);
    if (!cc_name_ok(p->congestion))
        FAIL("congestion control '%s' is not a valid algorithm name", p->congestion);
    if (!printable(p->server_cpus) || !printable(p->title))
        FAIL("title or server CPU list holds unprintable characters");
    if ((unsigned)p->test > PARAMS_TEST_CRR)
        FAIL("test kind %d is unknown", (int)p->test);
    if (p->test == PARAMS_TEST_CRR && p->udp)
        FAIL("crr is a TCP test: -u does not apply");
    if (p->udp && p->test == PARAMS_TEST_STREAM &&
        (p->write_size < 16 || p->write_size > PARAMS_MAX_UDP_DATAGRAM))
        FAIL("UDP datagram size (-l) %u is out of range: use 16 to %u (sequence number and "
             "timestamp take 16 bytes)",
             p->write_size, PARAMS_MAX_UDP_DATAGRAM);
    if (p->udp && p->test == PARAMS_TEST_STREAM && p->udp_rate_bps == 0 && p->udp_pps == 0)
        FAIL("UDP rate (-b) of 0 sends nothing: give a rate such as 100M, or --pps");
    if (p->udp && p->test == PARAMS_TEST_STREAM && p->zerocopy)
        FAIL("-Z applies to TCP streams only");
    if ((p->zerocopy_rx || p->skip_rx_copy) && (p->udp || p->test != PARAMS_TEST_STREAM))
        FAIL("%s applies to TCP stream tests only (not -u, rr or crr)",
             p->zerocopy_rx ? "--zerocopy-rx" : "--skip-rx-copy");
    if (p->notsent_lowat < PARAMS_NOTSENT_AUTO || p->notsent_lowat > (int32_t)PARAMS_MAX_WINDOW)
        FAIL("--notsent-lowat %d is out of range: use 0 (off) to 1G", (int)p->notsent_lowat);
    if (p->notsent_lowat != PARAMS_NOTSENT_AUTO && (p->udp || p->test != PARAMS_TEST_STREAM))
        FAIL("--notsent-lowat applies to TCP stream tests only (not -u, rr or crr)");
    if (p->zerocopy_rx && p->skip_rx_copy)
        FAIL("--zerocopy-rx and --skip-rx-copy exclude each other: pick one way to receive");
    if (mptcp_invalid(p, err, errlen))
        return -EINVAL;
    if (pacing_invalid(p, err, errlen) || limits_invalid(p, err, errlen) ||
        sample_invalid(p, err, errlen) || classes_invalid(p, err, errlen))
        return -EINVAL;
    if (p->test != PARAMS_TEST_STREAM) {
        uint32_t max = p->udp ? PARAMS_MAX_UDP_DATAGRAM : PARAMS_MAX_WRITE;
        if (p->req_size < 1 || p->req_size > max || p->resp_size > max ||
            (p->resp_size < 1 && !p->connect_only))
            FAIL("request/response sizes (-r) %u,%u are out of range: use 1 to %u bytes",
                 p->req_size, p->resp_size, max);
        if (p->depth < 1 || p->depth > PARAMS_MAX_DEPTH)
            FAIL("depth (--depth) %u is out of range: use 1 to %u", p->depth, PARAMS_MAX_DEPTH);
        if (p->rate_tps > PARAMS_MAX_TPS)
            FAIL("rate (--rate) %llu is out of range: use 1 to %llu transactions/s",
                 (unsigned long long)p->rate_tps, (unsigned long long)PARAMS_MAX_TPS);
        if (p->dir != PARAMS_DIR_FORWARD)
            FAIL("-R and --bidir apply to stream tests only");
        if (p->txn_timeout_ns < 1000000ULL || p->txn_timeout_ns > 600ULL * 1000000000ULL)
            FAIL("transaction timeout %.3gs is out of range: use 1ms to 600s",
                 p->txn_timeout_ns / 1e9);
    }
    return 0;
#undef FAIL
}

cJSON *params_to_json(const struct params *p)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "flows", p->flows);
    cJSON_AddNumberToObject(o, "threads", p->threads);
    cJSON_AddNumberToObject(o, "server_threads",
                            p->server_threads ? p->server_threads : p->threads);
    cJSON_AddNumberToObject(o, "duration_s", p->duration_ns / 1e9);
    cJSON_AddNumberToObject(o, "omit_s", p->omit_ns / 1e9);
    cJSON_AddNumberToObject(o, "interval_s", p->interval_ns / 1e9);
    cJSON_AddNumberToObject(o, "write_size", p->write_size);
    cJSON_AddNumberToObject(o, "window", p->window);
    cJSON_AddNumberToObject(o, "mss", p->mss);
    cJSON_AddBoolToObject(o, "nodelay", p->nodelay);
    cJSON_AddBoolToObject(o, "zerocopy", p->zerocopy);
    cJSON_AddBoolToObject(o, "zerocopy_rx", p->zerocopy_rx);
    cJSON_AddBoolToObject(o, "skip_rx_copy", p->skip_rx_copy);
    cJSON_AddNumberToObject(o, "fq_rate_bps", (double)p->fq_rate_bps);
    cJSON_AddNumberToObject(o, "notsent_lowat", p->notsent_lowat);
    cJSON_AddStringToObject(o, "direction", params_dir_name(p->dir));
    cJSON_AddStringToObject(o, "congestion", p->congestion);
    cJSON_AddStringToObject(o, "server_cpus", p->server_cpus);
    cJSON_AddStringToObject(o, "title", p->title);
    cJSON_AddStringToObject(o, "test", params_test_name(p->test));
    cJSON_AddBoolToObject(o, "udp", p->udp);
    cJSON_AddNumberToObject(o, "req_size", p->req_size);
    cJSON_AddNumberToObject(o, "resp_size", p->resp_size);
    cJSON_AddNumberToObject(o, "depth", p->depth);
    cJSON_AddNumberToObject(o, "rate_tps", (double)p->rate_tps);
    cJSON_AddBoolToObject(o, "connect_only", p->connect_only);
    cJSON_AddBoolToObject(o, "busy_poll", p->busy_poll);
    if (p->mptcp) /* absent: plain TCP (and what an older server reads) */
        cJSON_AddTrueToObject(o, "mptcp");
    cJSON_AddNumberToObject(o, "udp_rate_bps", (double)p->udp_rate_bps);
    cJSON_AddNumberToObject(o, "udp_pps", (double)p->udp_pps);
    cJSON_AddNumberToObject(o, "txn_timeout_s", p->txn_timeout_ns / 1e9);
    cJSON_AddNumberToObject(o, "sample_s", p->sample_ns / 1e9);
    cJSON_AddNumberToObject(o, "bytes_limit", (double)p->bytes_limit);
    cJSON_AddNumberToObject(o, "blocks_limit", (double)p->blocks_limit);
    cJSON_AddNumberToObject(o, "app_rate_bps", (double)p->app_rate_bps);
    cJSON_AddNumberToObject(o, "burst", p->burst);
    cJSON_AddNumberToObject(o, "tos", p->tos);
    cJSON_AddBoolToObject(o, "dont_fragment", p->dont_fragment);
    if (p->classes) /* absent: every flow gets tos */
        cJSON_AddStringToObject(o, "classes", dsclass_set_name(p->classes));
    if (p->down_rate_set) /* absent: the server's flows go at the one rate */
        cJSON_AddNumberToObject(o, "down_rate_bps", (double)p->down_rate_bps);
    return o;
}

/* A number field: absent keeps the default; present must be a finite number in [lo, hi]. */
static int get_num(const cJSON *o, const char *key, double lo, double hi, double *out, char *err,
                   size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    if (!v)
        return 1;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
        v->valuedouble > hi) {
        snprintf(err, errlen, "parameter '%s' must be a number from %g to %g", key, lo, hi);
        return -EINVAL;
    }
    /* counts and sizes are whole numbers; only the *_s fields take fractions */
    size_t klen = strlen(key);
    bool seconds = klen > 2 && !strcmp(key + klen - 2, "_s");

    if (!seconds && v->valuedouble != floor(v->valuedouble)) {
        snprintf(err, errlen, "parameter '%s' must be a whole number", key);
        return -EINVAL;
    }
    *out = v->valuedouble;
    return 0;
}

static int get_str(const cJSON *o, const char *key, char *dst, size_t dstlen, char *err,
                   size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    if (!v)
        return 1;
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= dstlen) {
        snprintf(err, errlen, "parameter '%s' must be a string of at most %zu bytes", key,
                 dstlen - 1);
        return -EINVAL;
    }
    memcpy(dst, v->valuestring, strlen(v->valuestring) + 1);
    return 0;
}

static int get_bool(const cJSON *o, const char *key, bool *out, char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    if (!v)
        return 1;
    if (!cJSON_IsBool(v)) {
        snprintf(err, errlen, "parameter '%s' must be true or false", key);
        return -EINVAL;
    }
    *out = cJSON_IsTrue(v);
    return 0;
}

int params_from_json(const cJSON *o, struct params *p, char *err, size_t errlen)
{
    double v;
    char dir[16] = "", test[16] = "", classes[16] = "";
    int rc;

    params_defaults(p);
    if (!cJSON_IsObject(o)) {
        snprintf(err, errlen, "parameters must be a JSON object");
        return -EINVAL;
    }
#define NUM(key, lo, hi, stmt)                                                                     \
    do {                                                                                           \
        rc = get_num(o, key, lo, hi, &v, err, errlen);                                             \
        if (rc < 0)                                                                                \
            return rc;                                                                             \
        if (rc == 0)                                                                               \
            stmt;                                                                                  \
    } while (0)
    NUM("flows", 1, PARAMS_MAX_FLOWS, p->flows = (uint32_t)v);
    NUM("threads", 1, PARAMS_MAX_THREADS, p->threads = (uint32_t)v);
    NUM("server_threads", 1, PARAMS_MAX_THREADS, p->server_threads = (uint32_t)v);
    NUM("duration_s", 0, 86400, p->duration_ns = (uint64_t)llround(v * 1e9));
    NUM("omit_s", 0, 86400, p->omit_ns = (uint64_t)llround(v * 1e9));
    NUM("interval_s", 0, 86400, p->interval_ns = (uint64_t)llround(v * 1e9));
    NUM("write_size", 1, PARAMS_MAX_WRITE, p->write_size = (uint32_t)v);
    NUM("window", 0, PARAMS_MAX_WINDOW, p->window = (uint32_t)v);
    NUM("mss", 0, 65535, p->mss = (uint32_t)v);
    NUM("fq_rate_bps", 0, 1e15, p->fq_rate_bps = (uint64_t)v);
    NUM("notsent_lowat", PARAMS_NOTSENT_AUTO, PARAMS_MAX_WINDOW, p->notsent_lowat = (int32_t)v);
    NUM("req_size", 0, PARAMS_MAX_WRITE, p->req_size = (uint32_t)v);
    NUM("resp_size", 0, PARAMS_MAX_WRITE, p->resp_size = (uint32_t)v);
    NUM("depth", 1, PARAMS_MAX_DEPTH, p->depth = (uint32_t)v);
    NUM("rate_tps", 0, (double)PARAMS_MAX_TPS, p->rate_tps = (uint64_t)v);
    NUM("udp_rate_bps", 0, 1e15, p->udp_rate_bps = (uint64_t)v);
    NUM("udp_pps", 0, 1e10, p->udp_pps = (uint64_t)v);
    NUM("txn_timeout_s", 0.001, 600, p->txn_timeout_ns = (uint64_t)llround(v * 1e9));
    NUM("sample_s", 0, 86400, p->sample_ns = (uint64_t)llround(v * 1e9));
    NUM("bytes_limit", 0, (double)PARAMS_MAX_LIMIT, p->bytes_limit = (uint64_t)v);
    NUM("blocks_limit", 0, (double)PARAMS_MAX_LIMIT, p->blocks_limit = (uint64_t)v);
    NUM("app_rate_bps", 0, 1e15, p->app_rate_bps = (uint64_t)v);
    NUM("down_rate_bps", 0, 1e15, (p->down_rate_bps = (uint64_t)v, p->down_rate_set = true));
    NUM("burst", 0, PARAMS_MAX_BURST, p->burst = (uint32_t)v);
    NUM("tos", 0, 255, p->tos = (uint8_t)v);
#undef NUM
    if (get_bool(o, "nodelay", &p->nodelay, err, errlen) < 0 ||
        get_bool(o, "zerocopy", &p->zerocopy, err, errlen) < 0 ||
        get_bool(o, "zerocopy_rx", &p->zerocopy_rx, err, errlen) < 0 ||
        get_bool(o, "skip_rx_copy", &p->skip_rx_copy, err, errlen) < 0 ||
        get_str(o, "congestion", p->congestion, sizeof(p->congestion), err, errlen) < 0 ||
        get_str(o, "server_cpus", p->server_cpus, sizeof(p->server_cpus), err, errlen) < 0 ||
        get_str(o, "title", p->title, sizeof(p->title), err, errlen) < 0 ||
        get_str(o, "direction", dir, sizeof(dir), err, errlen) < 0 ||
        get_str(o, "test", test, sizeof(test), err, errlen) < 0 ||
        get_str(o, "classes", classes, sizeof(classes), err, errlen) < 0 ||
        get_bool(o, "udp", &p->udp, err, errlen) < 0 ||
        get_bool(o, "connect_only", &p->connect_only, err, errlen) < 0 ||
        get_bool(o, "busy_poll", &p->busy_poll, err, errlen) < 0 ||
        get_bool(o, "mptcp", &p->mptcp, err, errlen) < 0 ||
        get_bool(o, "dont_fragment", &p->dont_fragment, err, errlen) < 0)
        return -EINVAL;
    if (*test) {
        int t = params_test_from_name(test);
        if (t < 0) {
            snprintf(err, errlen, "parameter 'test' must be stream, rr or crr");
            return -EINVAL;
        }
        p->test = (enum params_test)t;
    }
    if (dsclass_parse(classes, &p->classes)) {
        snprintf(err, errlen, "parameter 'classes' must be \"rrul\" or \"\"");
        return -EINVAL;
    }
    if (!strcmp(dir, "reverse"))
        p->dir = PARAMS_DIR_REVERSE;
    else if (!strcmp(dir, "bidir"))
        p->dir = PARAMS_DIR_BIDIR;
    else if (*dir && strcmp(dir, "forward")) {
        snprintf(err, errlen, "parameter 'direction' must be forward, reverse or bidir");
        return -EINVAL;
    }
    return params_validate(p, err, errlen);
}
