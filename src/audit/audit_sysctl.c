/* audit_sysctl: kernel TCP and socket-buffer checks. Each reads /proc/sys (and, for
 * evidence, /proc/net/netstat and /proc/net/sockstat) through audit_read and judges the value
 * against the target rate x RTT (BDP) and profile. */
#include "audit_sysctl.h"

#include "audit_bufcap.h"
#include "units.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_BYTES 4096.0 /* tcp_mem is in pages; 4 KiB on every platform netrig targets */

/* "/proc/sys/net/ipv4/tcp_rmem" -> "net.ipv4.tcp_rmem" */
static void sysctl_name(const char *path, char *buf, size_t len)
{
    const char *p = strncmp(path, "/proc/sys/", 10) ? path : path + 10;

    snprintf(buf, len, "%s", p);
    for (char *c = buf; *c; c++)
        if (*c == '/')
            *c = '.';
}

/* Reads a sysctl as text; a read failure becomes a skipped finding. */
static bool knob_text(struct audit_ctx *ctx, const char *id, enum audit_group g, const char *path,
                      char *buf, size_t len)
{
    long n = audit_read(ctx, path, buf, len);

    if (n < 0) {
        audit_skip_read(ctx, id, NULL, g, path, n);
        return false;
    }
    return true;
}

/* Reads n numbers; failures become skipped or unreadable findings. */
static bool knob_u64s(struct audit_ctx *ctx, const char *id, enum audit_group g, const char *path,
                      uint64_t *v, int n)
{
    char buf[256];

    if (!knob_text(ctx, id, g, path, buf, sizeof(buf)))
        return false;
    if (audit_parse_u64s(buf, v, n)) {
        audit_unreadable(ctx, id, NULL, g, path, buf,
                         n == 1   ? "one whole number"
                         : n == 2 ? "two whole numbers"
                                  : "three whole numbers");
        return false;
    }
    return true;
}

static struct audit_finding *add_sysctl(struct audit_ctx *ctx, const char *id, enum audit_group g,
                                        enum audit_status st, bool per_netns)
{
    struct audit_finding *f = audit_add(ctx, id, NULL, g, st);

    f->per_netns = per_netns;
    return f;
}

/* The target as "BDP 37.5 MB at 10 Gbit/s x 30 ms" */
static void target_text(const struct audit_target *t, char *buf, size_t len)
{
    char bdp[32], rate[32], rtt[32];

    units_format_bytes(t->bdp_bytes, bdp, sizeof(bdp));
    units_format_rate(t->rate_bps, rate, sizeof(rate));
    units_format_duration(t->rtt_s, rtt, sizeof(rtt));
    snprintf(buf, len, "BDP %s at %s x %s", bdp, rate, rtt);
}

/* --- kernel TCP --------------------------------------------------------------------------- */

static void check_kernel(struct audit_ctx *ctx)
{
    const struct audit_host *h = audit_get_host(ctx);
    struct audit_finding *f;

    if (!h->kernel[0]) {
        audit_skip_read(ctx, "host.kernel", NULL, AUDIT_G_TCP, "/proc/sys/kernel/osrelease",
                        -ENOENT);
        return;
    }
    f = audit_add(ctx, "host.kernel", NULL, AUDIT_G_TCP, AUDIT_INFO);
    AUDIT_SET(f->current, "%s", h->kernel);
    AUDIT_SET(f->reason,
              "defaults and per-namespace behaviour of the settings below follow "
              "this release%s",
              h->forwarding ? "; IPv4 forwarding is on" : "");
}

static bool word_in(const char *list, const char *word)
{
    size_t n = strlen(word);

    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ' || p[-1] == '\t') &&
            (p[n] == '\0' || p[n] == ' ' || p[n] == '\t' || p[n] == '\n'))
            return true;
    return false;
}

static bool cc_name_ok(const char *s)
{
    if (!*s || strlen(s) > 15)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

static void check_congestion(struct audit_ctx *ctx)
{
    static const char *const id = "sysctl.congestion_control";
    static const char *const path = "/proc/sys/net/ipv4/tcp_congestion_control";
    const struct audit_target *t = audit_get_target(ctx);
    bool tp = audit_get_profile(ctx) == AUDIT_PROFILE_THROUGHPUT, long_path = t->rtt_s >= 0.010;
    char cur[64], avail[512] = "", rtt[32];
    const char *rec;
    enum audit_status st;
    struct audit_finding *f;

    if (!knob_text(ctx, id, AUDIT_G_TCP, path, cur, sizeof(cur)))
        return;
    if (!cc_name_ok(cur)) {
        audit_unreadable(ctx, id, NULL, AUDIT_G_TCP, path, cur, "an algorithm name");
        return;
    }
    if (audit_read(ctx, "/proc/sys/net/ipv4/tcp_available_congestion_control", avail,
                   sizeof(avail)) < 0)
        avail[0] = '\0';
    rec = word_in(avail, "bbr") || (!word_in(avail, "htcp") && audit_kernel_at_least(ctx, 4, 9))
              ? "bbr"
              : "htcp";
    units_format_duration(t->rtt_s, rtt, sizeof(rtt));
    if (!strcmp(cur, "bbr") || !strcmp(cur, "htcp") || !strcmp(cur, "bbr2") || !strcmp(cur, "bbr3"))
        st = AUDIT_OK;
    else if (!strcmp(cur, "reno"))
        st = tp ? AUDIT_WARN : AUDIT_INFO;
    else if (!tp)
        st = AUDIT_OK;
    else
        st = long_path ? AUDIT_WARN : AUDIT_INFO;
    f = add_sysctl(ctx, id, AUDIT_G_TCP, st, audit_kernel_at_least(ctx, 4, 15));
    AUDIT_SET(f->current, "%s", cur);
    AUDIT_SET(f->recommended, "%s", st == AUDIT_OK ? cur : rec);
    if (st == AUDIT_OK)
        AUDIT_SET(f->reason, "%s suits %s; available: %s", cur,
                  tp ? "long fast paths" : "this profile", avail[0] ? avail : "unknown");
    else if (st == AUDIT_INFO && strcmp(cur, "reno"))
        AUDIT_SET(f->reason,
                  "%s is fine on a %s path; on long lossy paths %s (with fq pacing) "
                  "recovers faster; available: %s",
                  cur, rtt, rec, avail[0] ? avail : "unknown");
    else
        AUDIT_SET(f->reason,
                  "%s cuts cwnd on every loss and regrows it slowly over %s of RTT; "
                  "%s (with fq pacing) keeps a long fast path full; available: %s",
                  cur, rtt, rec, avail[0] ? avail : "unknown");
    if (st == AUDIT_OK)
        return;
    if (word_in(avail, rec))
        audit_fix_sysctl(f, "net.ipv4.tcp_congestion_control", rec);
    else {
        AUDIT_SET(f->fix, "modprobe tcp_%s && sysctl -w net.ipv4.tcp_congestion_control=%s", rec,
                  rec);
        AUDIT_SET(f->persist,
                  "add tcp_%s to /etc/modules-load.d/netrig.conf and "
                  "'net.ipv4.tcp_congestion_control = %s' to /etc/sysctl.d/"
                  "90-netrig.conf",
                  rec, rec);
    }
}

static void check_mtu_probing(struct audit_ctx *ctx)
{
    static const char *const id = "sysctl.tcp_mtu_probing";
    uint64_t v;
    bool jumbo = audit_get_host(ctx)->jumbo;
    struct audit_finding *f;

    if (!knob_u64s(ctx, id, AUDIT_G_TCP, "/proc/sys/net/ipv4/tcp_mtu_probing", &v, 1))
        return;
    f = add_sysctl(ctx, id, AUDIT_G_TCP,
                   v       ? AUDIT_OK
                   : jumbo ? AUDIT_WARN
                           : AUDIT_INFO,
                   audit_kernel_at_least(ctx, 4, 1));
    AUDIT_SET(f->current, "%llu", (unsigned long long)v);
    AUDIT_SET(f->recommended, "%llu", v ? (unsigned long long)v : 1ULL);
    if (v)
        AUDIT_SET(f->reason, "TCP finds a working segment size itself when a path drops big "
                             "packets and filters the ICMP that would say so");
    else
        AUDIT_SET(f->reason,
                  "%s: when a path drops big packets and filters the ICMP that would "
                  "say so, connections stall (1 = probe after a blackhole)",
                  jumbo ? "an audited interface uses jumbo frames" : "no jumbo frames here yet");
    if (!v)
        audit_fix_sysctl(f, "net.ipv4.tcp_mtu_probing", "1");
}

/* Knobs with one right value: id, file, wanted value, status when wrong per profile, why. */
struct bool_knob {
    const char *id, *path;
    uint64_t want;
    enum audit_status wrong_tp, wrong_lat;
    const char *why_wrong, *why_ok;
};

static const struct bool_knob bool_knobs[] = {
    {"sysctl.tcp_no_metrics_save", "/proc/sys/net/ipv4/tcp_no_metrics_save", 1, AUDIT_WARN,
     AUDIT_WARN, "0 caches ssthresh per destination, so one lossy run starts the next one low",
     "each connection starts fresh instead of from a cached ssthresh"},
    {"sysctl.tcp_slow_start_after_idle", "/proc/sys/net/ipv4/tcp_slow_start_after_idle", 0,
     AUDIT_INFO, AUDIT_WARN,
     "1 drops cwnd back to the initial window after an idle RTO: bursty and request/response "
     "traffic restarts slowly (a continuous stream is not affected)",
     "cwnd survives idle periods"},
    {"sysctl.tcp_timestamps", "/proc/sys/net/ipv4/tcp_timestamps", 1, AUDIT_WARN, AUDIT_WARN,
     "0 loses PAWS protection against wrapped sequence numbers and per-ACK RTT samples "
     "(seed 002 set 0)",
     "PAWS and per-ACK RTT samples are on"},
    {"sysctl.tcp_sack", "/proc/sys/net/ipv4/tcp_sack", 1, AUDIT_WARN, AUDIT_WARN,
     "without SACK one loss costs up to a whole window of retransmissions",
     "losses are repaired selectively"},
};

static void check_bool_knob(struct audit_ctx *ctx, const struct bool_knob *k)
{
    bool tp = audit_get_profile(ctx) == AUDIT_PROFILE_THROUGHPUT;
    char name[96], want[8];
    uint64_t v;
    bool right;
    struct audit_finding *f;

    if (!knob_u64s(ctx, k->id, AUDIT_G_TCP, k->path, &v, 1))
        return;
    right = k->want ? v != 0 : v == 0;
    f = add_sysctl(ctx, k->id, AUDIT_G_TCP,
                   right ? AUDIT_OK
                   : tp  ? k->wrong_tp
                         : k->wrong_lat,
                   audit_kernel_at_least(ctx, 4, 15));
    AUDIT_SET(f->current, "%llu", (unsigned long long)v);
    snprintf(want, sizeof(want), "%llu", (unsigned long long)k->want);
    AUDIT_SET(f->recommended, "%s", right ? f->current : want);
    AUDIT_SET(f->reason, "%s", right ? k->why_ok : k->why_wrong);
    if (!right) {
        sysctl_name(k->path, name, sizeof(name));
        audit_fix_sysctl(f, name, want);
    }
}

static void check_window_scaling(struct audit_ctx *ctx)
{
    static const char *const id = "sysctl.tcp_window_scaling";
    const struct audit_target *t = audit_get_target(ctx);
    char cap[32], rtt[32];
    uint64_t v;
    struct audit_finding *f;

    if (!knob_u64s(ctx, id, AUDIT_G_TCP, "/proc/sys/net/ipv4/tcp_window_scaling", &v, 1))
        return;
    f = add_sysctl(ctx, id, AUDIT_G_TCP, v ? AUDIT_OK : AUDIT_BAD,
                   audit_kernel_at_least(ctx, 4, 15));
    AUDIT_SET(f->current, "%llu", (unsigned long long)v);
    AUDIT_SET(f->recommended, "1");
    units_format_rate(65535 * 8 / t->rtt_s, cap, sizeof(cap));
    units_format_duration(t->rtt_s, rtt, sizeof(rtt));
    if (v) {
        AUDIT_SET(f->reason, "windows may exceed 64 KiB");
        return;
    }
    AUDIT_SET(f->reason,
              "without window scaling the window stops at 64 KiB: one flow gets at "
              "most %s at %s",
              cap, rtt);
    audit_fix_sysctl(f, "net.ipv4.tcp_window_scaling", "1");
}

static void check_notsent_lowat(struct audit_ctx *ctx)
{
    static const char *const id = "sysctl.tcp_notsent_lowat";
    bool tp = audit_get_profile(ctx) == AUDIT_PROFILE_THROUGHPUT;
    static const char *const path = "/proc/sys/net/ipv4/tcp_notsent_lowat";
    uint64_t v, want = tp ? 131072 : 16384;
    int64_t sv;
    char wants[16], buf[64];
    struct audit_finding *f;

    if (!knob_text(ctx, id, AUDIT_G_TCP, path, buf, sizeof(buf)))
        return;
    /* kernels before 4.x print the unsigned default as -1 */
    if (audit_parse_i64(buf, &sv) || sv < -1 || sv > (int64_t)UINT32_MAX) {
        audit_unreadable(ctx, id, NULL, AUDIT_G_TCP, path, buf, "a byte count");
        return;
    }
    v = sv < 0 ? UINT32_MAX : (uint64_t)sv;
    f = add_sysctl(ctx, id, AUDIT_G_TCP,
                   v <= want ? AUDIT_OK
                   : tp      ? AUDIT_INFO
                             : AUDIT_WARN,
                   audit_kernel_at_least(ctx, 4, 15));
    AUDIT_SET(f->current, "%llu", (unsigned long long)v);
    snprintf(wants, sizeof(wants), "%llu", (unsigned long long)want);
    AUDIT_SET(f->recommended, "%s", v <= want ? f->current : wants);
    if (v <= want) {
        AUDIT_SET(f->reason, "unsent data queued in the kernel is bounded");
        return;
    }
    AUDIT_SET(f->reason,
              "unsent data may pile up in the socket without bound, adding latency "
              "and memory; tuned uses %s",
              tp ? "131072 (network-throughput)" : "16384 for latency");
    audit_fix_sysctl(f, "net.ipv4.tcp_notsent_lowat", wants);
}

/* Obsolete knobs: harmless, but a line in sysctl.conf that does nothing misleads. */
static void check_obsolete(struct audit_ctx *ctx)
{
    static const char *const ll = "/proc/sys/net/ipv4/tcp_low_latency";
    static const char *const aws = "/proc/sys/net/ipv4/tcp_adv_win_scale";
    char buf[64];
    int64_t v;
    struct audit_finding *f;

    if (audit_read(ctx, ll, buf, sizeof(buf)) < 0) {
        f = add_sysctl(ctx, "sysctl.tcp_low_latency", AUDIT_G_TCP, AUDIT_OK, true);
        AUDIT_SET(f->current, "absent");
        AUDIT_SET(f->reason, "not in this kernel: nothing to clean up");
    } else if (audit_parse_i64(buf, &v)) {
        audit_unreadable(ctx, "sysctl.tcp_low_latency", NULL, AUDIT_G_TCP, ll, buf, "0 or 1");
    } else {
        bool gone = audit_kernel_at_least(ctx, 4, 14);
        f = add_sysctl(ctx, "sysctl.tcp_low_latency", AUDIT_G_TCP, v ? AUDIT_INFO : AUDIT_OK, true);
        AUDIT_SET(f->current, "%lld", (long long)v);
        AUDIT_SET(f->recommended, "%s", v && gone ? "0" : f->current);
        AUDIT_SET(f->reason, "%s",
                  !v     ? "not set"
                  : gone ? "set, but a no-op since Linux 4.14: remove it"
                         : "disables the prequeue (kernels before 4.14)");
        if (v && gone)
            AUDIT_SET(f->fix, "remove net.ipv4.tcp_low_latency from /etc/sysctl.conf and "
                              "/etc/sysctl.d/*.conf");
    }
    if (audit_read(ctx, aws, buf, sizeof(buf)) < 0)
        return;
    if (audit_parse_i64(buf, &v) || v < -31 || v > 31) {
        audit_unreadable(ctx, "sysctl.tcp_adv_win_scale", NULL, AUDIT_G_TCP, aws, buf,
                         "a number from -31 to 31");
        return;
    }
    f = add_sysctl(ctx, "sysctl.tcp_adv_win_scale", AUDIT_G_TCP,
                   v != 1 && audit_kernel_at_least(ctx, 6, 6) ? AUDIT_INFO : AUDIT_OK, true);
    AUDIT_SET(f->current, "%lld", (long long)v);
    AUDIT_SET(f->recommended, "%s", f->current);
    if (audit_kernel_at_least(ctx, 6, 6))
        AUDIT_SET(f->reason, "%s",
                  v == 1 ? "default; ignored since 6.6, which measures the "
                           "payload/truesize ratio"
                         : "set, but ignored since 6.6: remove it");
    else
        AUDIT_SET(f->reason,
                  "the window gets %.0f%% of the receive buffer (skb overhead takes "
                  "the rest)",
                  v > 0 ? 100.0 * (1 - ldexp(1, (int)-v)) : 100.0 * ldexp(1, (int)v));
}

/* TcpExt ListenOverflows from /proc/net/netstat, or -1 when unknown. */
static int64_t listen_overflows(struct audit_ctx *ctx)
{
    char buf[16384], *save = NULL, *names = NULL, *values = NULL;

    if (audit_read(ctx, "/proc/net/netstat", buf, sizeof(buf)) <= 0)
        return -1;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, "TcpExt:", 7))
            continue;
        if (!names)
            names = line;
        else {
            values = line;
            break;
        }
    }
    if (!names || !values)
        return -1;
    for (char *sn = NULL, *sv = NULL, *n = strtok_r(names + 7, " ", &sn),
              *v = strtok_r(values + 7, " ", &sv);
         n && v; n = strtok_r(NULL, " ", &sn), v = strtok_r(NULL, " ", &sv)) {
        int64_t x;
        if (!strcmp(n, "ListenOverflows"))
            return audit_parse_i64(v, &x) || x < 0 ? -1 : x;
    }
    return -1;
}

static void check_somaxconn(struct audit_ctx *ctx)
{
    static const char *const id = "sysctl.somaxconn";
    uint64_t v;
    int64_t ovf;
    struct audit_finding *f;

    if (!knob_u64s(ctx, id, AUDIT_G_TCP, "/proc/sys/net/core/somaxconn", &v, 1))
        return;
    ovf = listen_overflows(ctx);
    f = add_sysctl(ctx, id, AUDIT_G_TCP,
                   v >= 4096 ? AUDIT_OK
                   : ovf > 0 ? AUDIT_WARN
                             : AUDIT_INFO,
                   true);
    AUDIT_SET(f->current, "%llu", (unsigned long long)v);
    AUDIT_SET(f->recommended, "%s", v >= 4096 ? f->current : "4096");
    if (ovf >= 0)
        AUDIT_SET(f->reason,
                  "caps every listen() backlog (4096 is the default since 5.4); "
                  "TcpExt ListenOverflows %lld since boot",
                  (long long)ovf);
    else
        AUDIT_SET(f->reason, "caps every listen() backlog (4096 is the default since 5.4); "
                             "ListenOverflows unknown (/proc/net/netstat unreadable)");
    if (v < 4096)
        audit_fix_sysctl(f, "net.core.somaxconn", "4096");
}

static void check_port_range(struct audit_ctx *ctx)
{
    static const char *const id = "sysctl.ip_local_port_range";
    static const char *const path = "/proc/sys/net/ipv4/ip_local_port_range";
    uint64_t v[2], span;
    struct audit_finding *f;
    char buf[64];

    if (!knob_text(ctx, id, AUDIT_G_TCP, path, buf, sizeof(buf)))
        return;
    if (audit_parse_u64s(buf, v, 2) || v[0] > v[1] || v[1] > 65535) {
        audit_unreadable(ctx, id, NULL, AUDIT_G_TCP, path, buf, "two port numbers, low high");
        return;
    }
    span = v[1] - v[0] + 1;
    f = add_sysctl(ctx, id, AUDIT_G_TCP, span >= 28232 ? AUDIT_OK : AUDIT_WARN, true);
    AUDIT_SET(f->current, "%llu %llu", (unsigned long long)v[0], (unsigned long long)v[1]);
    AUDIT_SET(f->recommended, "%s", span >= 28232 ? f->current : "32768 60999");
    AUDIT_SET(f->reason,
              "%llu ports: about %llu new connections/s to one destination "
              "address and port before TIME_WAIT (60 s) runs out of ports, unless "
              "tcp_tw_reuse",
              (unsigned long long)span, (unsigned long long)(span / 60));
    if (span < 28232)
        audit_fix_sysctl(f, "net.ipv4.ip_local_port_range", "32768 60999");
}

static void check_conntrack(struct audit_ctx *ctx)
{
    static const char *const id = "netfilter.conntrack";
    static const char *const cnt = "/proc/sys/net/netfilter/nf_conntrack_count";
    static const char *const max = "/proc/sys/net/netfilter/nf_conntrack_max";
    char buf[64];
    uint64_t c, m;
    long n = audit_read(ctx, cnt, buf, sizeof(buf));
    struct audit_finding *f;

    if (n == -ENOENT) {
        f = add_sysctl(ctx, id, AUDIT_G_TCP, AUDIT_OK, true);
        AUDIT_SET(f->current, "not loaded");
        AUDIT_SET(f->reason, "no connection tracking: packets skip the conntrack lookup");
        return;
    }
    if (n < 0) {
        audit_skip_read(ctx, id, NULL, AUDIT_G_TCP, cnt, n);
        return;
    }
    if (audit_parse_u64(buf, &c)) {
        audit_unreadable(ctx, id, NULL, AUDIT_G_TCP, cnt, buf, "one whole number");
        return;
    }
    if (!knob_u64s(ctx, id, AUDIT_G_TCP, max, &m, 1))
        return;
    f = add_sysctl(ctx, id, AUDIT_G_TCP, m && c * 10 >= m * 9 ? AUDIT_BAD : AUDIT_INFO, true);
    AUDIT_SET(f->current, "%llu of %llu entries", (unsigned long long)c, (unsigned long long)m);
    if (f->status == AUDIT_BAD)
        AUDIT_SET(f->reason, "the conntrack table is nearly full: new connections get dropped");
    else
        AUDIT_SET(f->reason, "conntrack is loaded: every packet pays a table lookup (seed 003: "
                             "a firewall adds CPU cost); exempt test traffic from tracking");
    AUDIT_SET(f->fix, "iptables -t raw -I PREROUTING -p tcp --dport 5301 -j NOTRACK && "
                      "iptables -t raw -I OUTPUT -p tcp --sport 5301 -j NOTRACK");
    AUDIT_SET(f->persist, "save the raw-table rules with your firewall's configuration");
}

void audit_sysctl_tcp(struct audit_ctx *ctx)
{
    check_kernel(ctx);
    check_congestion(ctx);
    check_mtu_probing(ctx);
    for (size_t i = 0; i < sizeof(bool_knobs) / sizeof(bool_knobs[0]); i++)
        check_bool_knob(ctx, &bool_knobs[i]);
    check_window_scaling(ctx);
    check_notsent_lowat(ctx);
    check_obsolete(ctx);
    check_somaxconn(ctx);
    check_port_range(ctx);
    check_conntrack(ctx);
}

/* --- socket buffers ----------------------------------------------------------------------- */

/* "43.7-81.3 Mbit/s", "819 kbit/s-1.52 Mbit/s" or one value when lo == hi */
static void fmt_range(double lo, double hi, void (*fmt)(double, char *, size_t), char *buf,
                      size_t len)
{
    char a[32], b[32];
    const char *ua, *ub;

    fmt(lo, a, sizeof(a));
    fmt(hi, b, sizeof(b));
    if (!strcmp(a, b)) {
        snprintf(buf, len, "%s", a);
        return;
    }
    ua = strchr(a, ' ');
    ub = strchr(b, ' ');
    if (ua && ub && !strcmp(ua, ub))
        snprintf(buf, len, "%.*s-%s", (int)(ua - a), a, b);
    else
        snprintf(buf, len, "%s-%s", a, b);
}

/* The buffer model for a side, with this host's kernel and tcp_adv_win_scale. */
static void bufcap(struct audit_ctx *ctx, enum audit_bufcap_side side, struct audit_bufcap *m)
{
    const struct audit_host *h = audit_get_host(ctx);
    char buf[64];
    int64_t v;
    int aws = AUDIT_BUFCAP_AWS_UNKNOWN;

    if (side == AUDIT_BUFCAP_RECEIVE &&
        audit_read(ctx, "/proc/sys/net/ipv4/tcp_adv_win_scale", buf, sizeof(buf)) > 0 &&
        !audit_parse_i64(buf, &v) && v >= -31 && v <= 31)
        aws = (int)v;
    audit_bufcap_model(side, h->kmajor, h->kminor, aws, m);
}

/* "a window of 219-406 kB (why), which caps one flow at 43.7-81.3 Mbit/s" (or "... kB in
 * flight") for a buffer of buf bytes (the kernel's own size, after any doubling). */
static void cap_text(const struct audit_bufcap *m, enum audit_bufcap_side side, double buf,
                     double rtt_s, const char *who, char *out, size_t len)
{
    char bytes[48], rate[48];
    double lo, hi;

    fmt_range(buf * m->lo, buf * m->hi, units_format_bytes, bytes, sizeof(bytes));
    audit_bufcap_rate(m, buf, rtt_s, &lo, &hi);
    fmt_range(lo, hi, units_format_rate, rate, sizeof(rate));
    snprintf(out, len, "%s%s%s (%s), which caps %s at %s",
             side == AUDIT_BUFCAP_RECEIVE ? "a window of " : "", bytes,
             side == AUDIT_BUFCAP_RECEIVE ? "" : " in flight", m->basis, who, rate);
}

/* tcp_rmem / tcp_wmem: the window (or the data in flight) the autotuning maximum allows,
 * skb overhead counted, against the BDP. */
static void check_tcp_mem_max(struct audit_ctx *ctx, const char *id, const char *path,
                              const char *name, enum audit_bufcap_side side)
{
    const struct audit_target *t = audit_get_target(ctx);
    struct audit_bufcap m;
    uint64_t v[3], rec;
    char tgt[96], have[32], cap[320], atrec[32], value[96];
    enum audit_status st;
    struct audit_finding *f;

    if (!knob_u64s(ctx, id, AUDIT_G_BUFFERS, path, v, 3))
        return;
    bufcap(ctx, side, &m);
    rec = audit_bufcap_size_for(&m, t->bdp_bytes);
    st = (double)v[2] * m.lo >= t->bdp_bytes   ? AUDIT_OK
         : (double)v[2] * m.hi >= t->bdp_bytes ? AUDIT_WARN
                                               : AUDIT_BAD;
    f = add_sysctl(ctx, id, AUDIT_G_BUFFERS, st, audit_kernel_at_least(ctx, 4, 15));
    target_text(t, tgt, sizeof(tgt));
    units_format_bytes((double)v[2], have, sizeof(have));
    cap_text(&m, side, (double)v[2], t->rtt_s, "one flow", cap, sizeof(cap));
    AUDIT_SET(f->current, "%llu", (unsigned long long)v[2]);
    AUDIT_SET(f->recommended, "%llu", (unsigned long long)(st == AUDIT_OK ? v[2] : rec));
    if (st == AUDIT_OK) {
        AUDIT_SET(f->reason, "%s; %s max %s gives %s: enough", tgt, name, have, cap);
        return;
    }
    units_format_bytes((double)rec * m.lo, atrec, sizeof(atrec));
    AUDIT_SET(f->reason, "%s; %s max %s gives %s; %llu gives %s%s%s%s", tgt, name, have, cap,
              (unsigned long long)rec, side == AUDIT_BUFCAP_RECEIVE ? "a window of " : "", atrec,
              side == AUDIT_BUFCAP_RECEIVE ? " or more" : " or more in flight",
              (double)rec * m.lo < t->bdp_bytes ? ", less than the BDP: use parallel flows"
                                                : ", more than the BDP");
    snprintf(value, sizeof(value), "%llu %llu %llu", (unsigned long long)v[0],
             (unsigned long long)v[1], (unsigned long long)rec);
    audit_fix_sysctl(f, name, value);
}

/* rmem_max / wmem_max: what an explicit SO_RCVBUF / SO_SNDBUF may reach (the kernel doubles
 * the request, then the same model as above). */
static void check_core_max(struct audit_ctx *ctx, const char *id, const char *path,
                           const char *name, const char *opt, enum audit_bufcap_side side)
{
    const struct audit_target *t = audit_get_target(ctx);
    struct audit_bufcap m;
    uint64_t v, rec;
    char tgt[96], got[32], cap[320], value[32];
    bool ok;
    struct audit_finding *f;

    if (!knob_u64s(ctx, id, AUDIT_G_BUFFERS, path, &v, 1))
        return;
    bufcap(ctx, side, &m);
    rec = audit_bufcap_size_for(&m, t->bdp_bytes);
    ok = 2.0 * (double)v * m.lo >= t->bdp_bytes;
    f = add_sysctl(ctx, id, AUDIT_G_BUFFERS, ok ? AUDIT_OK : AUDIT_BAD, false);
    target_text(t, tgt, sizeof(tgt));
    units_format_bytes(2.0 * (double)v, got, sizeof(got));
    cap_text(&m, side, 2.0 * (double)v, t->rtt_s, "that flow", cap, sizeof(cap));
    AUDIT_SET(f->current, "%llu", (unsigned long long)v);
    AUDIT_SET(f->recommended, "%llu", (unsigned long long)(ok ? v : rec));
    if (ok) {
        AUDIT_SET(f->reason,
                  "%s; an app's %s (iperf -w) up to the BDP is honoured (the kernel "
                  "doubles it)",
                  tgt, opt);
        return;
    }
    AUDIT_SET(f->reason,
              "%s; an app that sets %s (iperf -w) gets at most 2 x %llu = %s: %s "
              "(autotuned sockets are not limited by it)",
              tgt, opt, (unsigned long long)v, got, cap);
    snprintf(value, sizeof(value), "%llu", (unsigned long long)rec);
    audit_fix_sysctl(f, name, value);
}

static void check_optmem(struct audit_ctx *ctx)
{
    static const char *const id = "sysctl.optmem_max";
    uint64_t v;
    struct audit_finding *f;

    if (!knob_u64s(ctx, id, AUDIT_G_BUFFERS, "/proc/sys/net/core/optmem_max", &v, 1))
        return;
    f = add_sysctl(ctx, id, AUDIT_G_BUFFERS, v >= 1048576 ? AUDIT_OK : AUDIT_INFO,
                   audit_kernel_at_least(ctx, 6, 8));
    AUDIT_SET(f->current, "%llu", (unsigned long long)v);
    AUDIT_SET(f->recommended, "%s", v >= 1048576 ? f->current : "1048576");
    AUDIT_SET(f->reason, "MSG_ZEROCOPY (netrig -Z) keeps completion notifications in option "
                         "memory; ESnet uses 1 MiB");
    if (v < 1048576)
        audit_fix_sysctl(f, "net.core.optmem_max", "1048576");
}

/* "TCP: inuse 1 orphan 0 tw 5 alloc 4 mem 490" -> 490 (pages), or -1 */
static int64_t sockstat_tcp_pages(struct audit_ctx *ctx)
{
    char buf[2048], *p;
    int64_t v;

    if (audit_read(ctx, "/proc/net/sockstat", buf, sizeof(buf)) <= 0)
        return -1;
    p = strstr(buf, "TCP:");
    p = p ? strstr(p, " mem ") : NULL;
    if (!p)
        return -1;
    p += 5;
    p[strcspn(p, " \n")] = '\0';
    return audit_parse_i64(p, &v) || v < 0 ? -1 : v;
}

static void check_tcp_mem(struct audit_ctx *ctx)
{
    static const char *const id = "sysctl.tcp_mem";
    const struct audit_target *t = audit_get_target(ctx);
    uint64_t v[3], pages;
    int64_t used;
    char maxb[32], need[32], value[96];
    enum audit_status st;
    struct audit_finding *f;

    if (!knob_u64s(ctx, id, AUDIT_G_BUFFERS, "/proc/sys/net/ipv4/tcp_mem", v, 3))
        return;
    used = sockstat_tcp_pages(ctx);
    st = (double)v[2] * PAGE_BYTES < 2 * t->bdp_bytes ? AUDIT_BAD
         : used >= 0 && (uint64_t)used >= v[1]        ? AUDIT_WARN
                                                      : AUDIT_OK;
    f = add_sysctl(ctx, id, AUDIT_G_BUFFERS, st, false);
    units_format_bytes((double)v[2] * PAGE_BYTES, maxb, sizeof(maxb));
    units_format_bytes(2 * t->bdp_bytes, need, sizeof(need));
    AUDIT_SET(f->current, "%llu %llu %llu", (unsigned long long)v[0], (unsigned long long)v[1],
              (unsigned long long)v[2]);
    AUDIT_SET(f->recommended, "%s", f->current);
    if (st == AUDIT_WARN) {
        AUDIT_SET(f->reason,
                  "TCP uses %lld pages now, at or above the pressure mark %llu: "
                  "socket buffers are being trimmed",
                  (long long)used, (unsigned long long)v[1]);
        return;
    }
    if (st == AUDIT_OK) {
        if (used >= 0)
            AUDIT_SET(f->reason,
                      "all TCP sockets may use up to %s (4 KiB pages); pages in use "
                      "now: %lld, below the pressure mark %llu",
                      maxb, (long long)used, (unsigned long long)v[1]);
        else
            AUDIT_SET(f->reason,
                      "all TCP sockets may use up to %s (4 KiB pages); current use "
                      "unknown (/proc/net/sockstat unreadable)",
                      maxb);
        return;
    }
    /* room for four flows at 2 x BDP each, pressure at three quarters */
    pages = (uint64_t)ceil(8 * t->bdp_bytes / PAGE_BYTES);
    snprintf(value, sizeof(value), "%llu %llu %llu", (unsigned long long)(pages / 2),
             (unsigned long long)(pages / 4 * 3), (unsigned long long)pages);
    AUDIT_SET(f->recommended, "%s", value);
    AUDIT_SET(f->reason,
              "all TCP sockets together may use %s (4 KiB pages), less than the "
              "2 x BDP = %s one flow at the target needs; recommended leaves room "
              "for four",
              maxb, need);
    audit_fix_sysctl(f, "net.ipv4.tcp_mem", value);
}

void audit_sysctl_buffers(struct audit_ctx *ctx)
{
    check_tcp_mem_max(ctx, "sysctl.tcp_rmem_max", "/proc/sys/net/ipv4/tcp_rmem",
                      "net.ipv4.tcp_rmem", AUDIT_BUFCAP_RECEIVE);
    check_tcp_mem_max(ctx, "sysctl.tcp_wmem_max", "/proc/sys/net/ipv4/tcp_wmem",
                      "net.ipv4.tcp_wmem", AUDIT_BUFCAP_SEND);
    check_core_max(ctx, "sysctl.rmem_max", "/proc/sys/net/core/rmem_max", "net.core.rmem_max",
                   "SO_RCVBUF", AUDIT_BUFCAP_RECEIVE);
    check_core_max(ctx, "sysctl.wmem_max", "/proc/sys/net/core/wmem_max", "net.core.wmem_max",
                   "SO_SNDBUF", AUDIT_BUFCAP_SEND);
    check_optmem(ctx);
    check_tcp_mem(ctx);
}
