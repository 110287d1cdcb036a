/* policy: limits and authentication on the daemon's side. */
#include "policy.h"

#include "ctl.h"
#include "test_kind.h"
#include "units.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

/* The rate a UDP test declares: -b (or --pps x datagram) per flow, over all flows. */
static double udp_rate(const struct params *p)
{
    double up = p->udp_pps ? (double)p->udp_pps * p->write_size * 8.0 : (double)p->udp_rate_bps;
    double down = p->down_rate_set ? (double)p->down_rate_bps : up;

    if (p->dir != PARAMS_DIR_BIDIR)
        return up * params_total_flows(p);
    return (up + down) * p->flows;
}

int policy_check_limits(const struct policy_limits *o, struct params *p, uint64_t *flow_rate_bps,
                        char *msg, size_t len)
{
    uint64_t total_ns = p->duration_ns + p->omit_ns;

    *flow_rate_bps = 0;
    if (o->max_duration_ns && total_ns > o->max_duration_ns) {
        snprintf(msg, len,
                 "test of %.4gs (omit included) exceeds this server's --max-duration "
                 "of %.4gs",
                 total_ns / 1e9, o->max_duration_ns / 1e9);
        return -EPERM;
    }
    if (o->max_flows && params_total_flows(p) > o->max_flows) {
        snprintf(msg, len, "test of %u flows exceeds this server's --max-flows of %u",
                 params_total_flows(p), o->max_flows);
        return -EPERM;
    }
    if (!o->max_rate_bps)
        return 0;
    /* the meter works on intervals: sample at least once a second */
    if (!p->interval_ns || p->interval_ns > 1000000000ULL)
        p->interval_ns = 1000000000ULL;
    if (test_kind_is(p, TEST_KIND_DATAGRAMS) && udp_rate(p) > (double)o->max_rate_bps) {
        char want[32], lim[32];
        units_format_rate(udp_rate(p), want, sizeof(want));
        units_format_rate((double)o->max_rate_bps, lim, sizeof(lim));
        snprintf(msg, len, "UDP test at %s exceeds this server's --max-rate of %s", want, lim);
        return -EPERM;
    }
    if (test_kind_is(p, TEST_KIND_UDP))
        return 0; /* the daemon's rate gate and meter hold UDP request/response */
    /* TCP: every flow is paced to its share, on both ends */
    *flow_rate_bps = o->max_rate_bps / params_total_flows(p);
    if (*flow_rate_bps == 0)
        *flow_rate_bps = 1;
    if (!p->fq_rate_bps || p->fq_rate_bps > *flow_rate_bps)
        p->fq_rate_bps = *flow_rate_bps;
    /* and paced by the application too: kernel pacing alone lets the first socket buffer's
     * worth out at once, which the in-run check would count against the test */
    if (!p->app_rate_bps || p->app_rate_bps > *flow_rate_bps)
        p->app_rate_bps = *flow_rate_bps;
    if (p->down_rate_set && (!p->down_rate_bps || p->down_rate_bps > *flow_rate_bps))
        p->down_rate_bps = *flow_rate_bps;
    return 0;
}

uint32_t policy_server_threads(struct params *p, uint32_t ncpu)
{
    uint32_t want = p->server_threads ? p->server_threads : p->threads;
    uint32_t most = test_kind_is(p, TEST_KIND_CONN_PER_TXN) ? p->flows : params_total_flows(p);

    if (ncpu && most > ncpu)
        most = ncpu;
    if (most < 1)
        most = 1;
    if (want <= most) {
        p->server_threads = want;
        return 0;
    }
    p->server_threads = most;
    return want;
}

uint64_t policy_result_bytes(uint32_t nflows, uint32_t nintervals)
{
    /* a cJSON node is about 64 bytes with its name, its text about 20: a flow is about 40
     * members with its TCP_INFO, an interval 12, an interval's flow cell 5 */
    uint64_t kept = nintervals < 100000 ? nintervals : 100000, cells = kept * nflows;

    if (cells > (1u << 20))
        cells = 0; /* too many to keep: the result carries none */
    return (uint64_t)nflows * 40 * 84 + kept * 12 * 84 + cells * 5 * 84 + 64 * 1024;
}

bool policy_meter_add(struct policy_meter *m, const struct interval *iv, double *bps)
{
    double cap, len;

    if (!m->limit_bps)
        return false;
    cap = (double)m->limit_bps / 8.0 + POLICY_METER_SLACK;
    if (!m->started) {
        m->started = true;
        m->tokens = cap;
        m->last_s = iv->start_s;
    }
    len = iv->end_s - m->last_s;
    if (len < 0)
        len = 0;
    m->last_s = iv->end_s;
    m->tokens += len * 1.1 * (double)m->limit_bps / 8.0 - (double)iv->wire_bytes;
    m->window_s += len;
    m->window_bytes += (double)iv->wire_bytes;
    if (m->tokens >= cap) { /* full again: the rate named in a refusal starts here */
        m->tokens = cap;
        m->window_s = m->window_bytes = 0;
    }
    if (m->tokens >= 0)
        return false;
    *bps = m->window_s > 0 ? m->window_bytes * 8.0 / m->window_s : 0;
    return true;
}

int policy_authenticate(int ctl, const struct auth *a, const char *user, int timeout_ms, char *err,
                        size_t errlen)
{
    uint8_t nonce[AUTH_NONCE_LEN];
    char hex[2 * AUTH_NONCE_LEN + 1];
    cJSON *m, *reply = NULL;
    const cJSON *u, *mac;
    int rc;

    if (!user || !*user) {
        snprintf(err, errlen,
                 "this server requires authentication: use --user NAME with "
                 "NETRIG_SECRET or --credentials FILE");
        return -EACCES;
    }
    if (getrandom(nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce)) {
        snprintf(err, errlen, "cannot draw a random challenge");
        return -EIO;
    }
    auth_hex(nonce, sizeof(nonce), hex);
    m = ctl_msg_new("challenge");
    cJSON_AddStringToObject(m, "nonce", hex);
    rc = ctl_send(ctl, m, timeout_ms);
    cJSON_Delete(m);
    if (!rc)
        rc = ctl_recv(ctl, CTL_MAX_REQUEST, timeout_ms, &reply, err, errlen);
    if (rc)
        return rc;
    u = cJSON_GetObjectItemCaseSensitive(reply, "user");
    mac = cJSON_GetObjectItemCaseSensitive(reply, "mac");
    rc = -EACCES;
    if (strcmp(ctl_type(reply), "auth") || !cJSON_IsString(u) || !cJSON_IsString(mac) ||
        strcmp(u->valuestring, user))
        snprintf(err, errlen, "authentication failed: expected an 'auth' answer for user '%s'",
                 user);
    else if (!auth_verify(a, user, nonce, mac->valuestring))
        snprintf(err, errlen, "authentication failed for user '%s'", user);
    else
        rc = 0;
    cJSON_Delete(reply);
    return rc;
}
