/* audit_iface: interface discovery and the NIC group's checks (link, MTU, txqueuelen,
 * driver, offloads, rings, coalescing, channels, pause). Sysfs through audit_read, ethtool
 * answers through nicinfo. */
#include "audit_iface.h"

#include "cpulist.h"
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ARPHRD_LOOPBACK_TYPE 772

/* --- discovery ---------------------------------------------------------------------------- */

struct name_list {
    char (*names)[IF_NAMESIZE];
    size_t n, max, dropped;
};

static int collect_name(const char *name, void *arg)
{
    struct name_list *l = arg;

    if (strlen(name) >= IF_NAMESIZE || name[0] == '.')
        return 0;
    if (l->n == l->max) {
        l->dropped++;
        return 0;
    }
    snprintf(l->names[l->n++], IF_NAMESIZE, "%s", name);
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* Value of KEY= in a uevent text, or "" */
static void uevent_value(const char *text, const char *key, char *out, size_t len)
{
    size_t klen = strlen(key);

    out[0] = '\0';
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (!strncmp(p, key, klen) && p[klen] == '=') {
            size_t n = strcspn(p + klen + 1, "\n");
            snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), p + klen + 1);
            for (char *c = out; *c; c++)
                if (!isprint((unsigned char)*c))
                    *c = '?';
            return;
        }
    }
}

static bool read_u64_file(struct audit_ctx *ctx, const char *path, uint64_t *v)
{
    char buf[64];

    return audit_read(ctx, path, buf, sizeof(buf)) >= 0 && !audit_parse_u64(buf, v);
}

static void describe_iface(struct audit_ctx *ctx, struct audit_iface *ifc, bool named)
{
    char path[160], buf[1024], state[32] = "";
    uint64_t type = 0;
    int64_t speed;
    bool has_dev;

    snprintf(path, sizeof(path), "/sys/class/net/%s/type", ifc->name);
    read_u64_file(ctx, path, &type);
    ifc->type = type;
    snprintf(path, sizeof(path), "/sys/class/net/%s/operstate", ifc->name);
    if (audit_read(ctx, path, state, sizeof(state)) < 0)
        state[0] = '\0';
    snprintf(path, sizeof(path), "/sys/class/net/%s/device/uevent", ifc->name);
    has_dev = audit_read(ctx, path, buf, sizeof(buf)) >= 0;
    if (has_dev) {
        uevent_value(buf, "DRIVER", ifc->dev_driver, sizeof(ifc->dev_driver));
        uevent_value(buf, "PCI_SLOT_NAME", ifc->pci, sizeof(ifc->pci));
    }
    snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", ifc->name);
    ifc->have_mtu = read_u64_file(ctx, path, &ifc->mtu);
    snprintf(path, sizeof(path), "/sys/class/net/%s/tx_queue_len", ifc->name);
    ifc->have_txqlen = read_u64_file(ctx, path, &ifc->txqlen);
    snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifc->name);
    ifc->speed_mbps = -1;
    if (audit_read(ctx, path, buf, 64) >= 0 && !audit_parse_i64(buf, &speed) && speed > 0 &&
        speed < 100000000)
        ifc->speed_mbps = speed;

    ifc->audited = false;
    if (type == ARPHRD_LOOPBACK_TYPE || !strcmp(ifc->name, "lo"))
        AUDIT_SET(ifc->skip_reason, "loopback: there is no NIC to tune");
    else if (!has_dev && !named)
        AUDIT_SET(ifc->skip_reason,
                  "virtual interface (no device behind it: bridge, veth, "
                  "bond, tunnel, ifb, ...): tune the physical NIC under it, "
                  "or pass -I %s to audit it anyway",
                  ifc->name);
    else if (!named && strcmp(state, "up") && strcmp(state, "unknown"))
        AUDIT_SET(ifc->skip_reason, "not up (operstate '%s'): pass -I %s to audit it anyway",
                  state[0] ? state : "unreadable", ifc->name);
    else
        ifc->audited = true;
}

int audit_iface_discover(struct audit_ctx *ctx, const char *only, struct audit_iface *out,
                         size_t max, size_t *n, char *err, size_t errlen)
{
    struct name_list l = {.names = calloc(max, IF_NAMESIZE), .max = max};
    int rc;

    *n = 0;
    if (!l.names) {
        snprintf(err, errlen, "out of memory listing interfaces: free some memory and retry");
        return -ENOMEM;
    }
    rc = audit_list(ctx, "/sys/class/net", collect_name, &l);
    qsort(l.names, l.n, IF_NAMESIZE, cmp_name);
    if (only) {
        size_t i;
        for (i = 0; i < l.n && strcmp(l.names[i], only); i++)
            ;
        if (i == l.n) {
            char have[512] = "";
            for (size_t j = 0; j < l.n && strlen(have) < 400; j++)
                snprintf(have + strlen(have), sizeof(have) - strlen(have), "%s%s", j ? ", " : "",
                         l.names[j]);
            snprintf(err, errlen, "no interface '%s' in /sys/class/net%s: %s%s", only,
                     rc < 0 ? " (unreadable)" : "", l.n ? "interfaces here are " : "none found",
                     have);
            free(l.names);
            return -ENODEV;
        }
        snprintf(l.names[0], IF_NAMESIZE, "%s", only);
        l.n = 1;
        l.dropped = 0;
    }
    for (size_t i = 0; i < l.n; i++) {
        memset(&out[i], 0, sizeof(out[i]));
        snprintf(out[i].name, sizeof(out[i].name), "%s", l.names[i]);
        describe_iface(ctx, &out[i], only != NULL);
    }
    *n = l.n;
    if (rc < 0 || l.dropped) {
        struct audit_finding *f = audit_add(ctx, "nic.interface", NULL, AUDIT_G_NIC, AUDIT_SKIPPED);
        if (rc < 0)
            AUDIT_SET(f->reason, "cannot list /sys/class/net (%s): no interface audited",
                      strerror((int)-rc));
        else
            AUDIT_SET(f->reason,
                      "%zu more interfaces not audited: netrig audits at most %zu; "
                      "name one with -I",
                      l.dropped, max);
    }
    free(l.names);
    return 0;
}

/* "0000:5e:00.0" */
static bool is_pci_address(const char *s)
{
    unsigned dom, bus, dev, fn;
    char tail;

    return strlen(s) == 12 && sscanf(s, "%4x:%2x:%2x.%1u%c", &dom, &bus, &dev, &fn, &tail) == 4;
}

static int count_rx(const char *name, void *arg)
{
    if (!strncmp(name, "rx-", 3))
        (*(uint32_t *)arg)++;
    return 0;
}

void audit_iface_query(struct audit_ctx *ctx, struct audit_iface *ifc)
{
    char path[160], text[8192];
    size_t len;

    nicinfo_query(audit_sysroot(ctx), ifc->name, &ifc->nic);
    if (audit_recording(ctx)) {
        nicinfo_answer_path(ifc->name, path, sizeof(path));
        len = nicinfo_format(&ifc->nic, ifc->name, text, sizeof(text));
        audit_record(ctx, path, text, len);
    }
    if (!ifc->nic.drv_err && is_pci_address(ifc->nic.bus_info))
        snprintf(ifc->pci, sizeof(ifc->pci), "%s", ifc->nic.bus_info);
    else if (!is_pci_address(ifc->pci))
        ifc->pci[0] = '\0';
    snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifc->name);
    ifc->rx_queues = 0;
    audit_list(ctx, path, count_rx, &ifc->rx_queues);
}

/* --- checks ------------------------------------------------------------------------------- */

static bool throughput(struct audit_ctx *ctx)
{
    return audit_get_profile(ctx) == AUDIT_PROFILE_THROUGHPUT;
}

/* LRO is recommended on end hosts aiming at 40 Gbit/s or more (seed 000). */
static bool lro_wanted(struct audit_ctx *ctx)
{
    return throughput(ctx) && !audit_get_host(ctx)->forwarding &&
           audit_get_target(ctx)->rate_bps >= 40e9;
}

/* A skipped finding for an ethtool answer that is missing. */
static void skip_nic(struct audit_ctx *ctx, const char *id, const struct audit_iface *ifc,
                     const char *request, int err)
{
    struct audit_finding *f = audit_add(ctx, id, ifc->name, AUDIT_G_NIC, AUDIT_SKIPPED);

    if (err == EBADMSG)
        AUDIT_SET(f->current, "unreadable");
    AUDIT_SET(f->reason, "%s on %s: %s%s", request, ifc->name, nicinfo_errtext(err),
              err == ENODATA || err == EBADMSG ? " (netrig/ethtool/ in the sysroot)" : "");
}

/* An attribute that did not parse at discovery: skipped (cannot read) or unreadable. */
static void report_bad_attr(struct audit_ctx *ctx, const char *id, const struct audit_iface *ifc,
                            const char *attr, const char *expected)
{
    char path[160], buf[64];
    long rc;

    snprintf(path, sizeof(path), "/sys/class/net/%s/%s", ifc->name, attr);
    rc = audit_read(ctx, path, buf, sizeof(buf));
    if (rc < 0)
        audit_skip_read(ctx, id, ifc->name, AUDIT_G_NIC, path, rc);
    else
        audit_unreadable(ctx, id, ifc->name, AUDIT_G_NIC, path, buf, expected);
}

/* The speed file holds garbage (not a number, not -1). */
static bool speed_garbage(struct audit_ctx *ctx, const struct audit_iface *ifc)
{
    char path[160], buf[64];
    int64_t v;

    snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifc->name);
    return audit_read(ctx, path, buf, sizeof(buf)) >= 0 &&
           (audit_parse_i64(buf, &v) || v >= 100000000);
}

static void check_link(struct audit_ctx *ctx, struct audit_iface *ifc)
{
    const struct audit_target *t = audit_get_target(ctx);
    char link[32], rate[32];
    bool slow = ifc->speed_mbps > 0 && (double)ifc->speed_mbps * 1e6 < t->rate_bps;
    struct audit_finding *f;

    if (ifc->speed_mbps < 0 && speed_garbage(ctx, ifc)) {
        report_bad_attr(ctx, "nic.link", ifc, "speed", "Mb/s as a whole number, or -1");
        return;
    }
    f = audit_add(ctx, "nic.link", ifc->name, AUDIT_G_NIC,
                  ifc->speed_mbps < 0 ? AUDIT_INFO
                  : slow              ? AUDIT_BAD
                                      : AUDIT_OK);
    if (ifc->speed_mbps < 0) {
        AUDIT_SET(f->current, "unknown");
        AUDIT_SET(f->reason, "the driver reports no link speed (virtual NIC, or link down)");
        return;
    }
    units_format_rate((double)ifc->speed_mbps * 1e6, link, sizeof(link));
    units_format_rate(t->rate_bps, rate, sizeof(rate));
    AUDIT_SET(f->current, "%lld Mb/s", (long long)ifc->speed_mbps);
    AUDIT_SET(f->recommended, "%s", f->current);
    if (!slow) {
        AUDIT_SET(f->reason, "link %s for a %s target", link, rate);
        return;
    }
    AUDIT_SET(f->recommended, "%.0f Mb/s", t->rate_bps / 1e6);
    AUDIT_SET(f->reason,
              "the link runs at %s, below the %s target: check the cable or optic "
              "and autonegotiation",
              link, rate);
    AUDIT_SET(f->fix, "ethtool %s   # check 'Speed' and 'Supported link modes'", ifc->name);
    f->persistent = true;
}

static void check_mtu(struct audit_ctx *ctx, struct audit_iface *ifc)
{
    const struct audit_target *t = audit_get_target(ctx);
    double link = ifc->speed_mbps > 0 ? (double)ifc->speed_mbps * 1e6 : t->rate_bps;
    char at[32], at9k[32];
    enum audit_status st;
    struct audit_finding *f;

    if (!ifc->have_mtu) {
        report_bad_attr(ctx, "nic.mtu", ifc, "mtu", "bytes as a whole number");
        return;
    }
    st = ifc->mtu >= 9000 || !throughput(ctx) ? AUDIT_OK
         : t->rate_bps >= 40e9                ? AUDIT_WARN
                                              : AUDIT_INFO;
    f = audit_add(ctx, "nic.mtu", ifc->name, AUDIT_G_NIC, st);
    AUDIT_SET(f->current, "%llu", (unsigned long long)ifc->mtu);
    AUDIT_SET(f->recommended, "%s", st == AUDIT_OK ? f->current : "9000");
    /* best TCP goodput on Ethernet: link x (MTU - 52) / (MTU + 38) */
    units_format_rate(link * ((double)ifc->mtu - 52) / ((double)ifc->mtu + 38), at, sizeof(at));
    units_format_rate(link * (9000.0 - 52) / (9000.0 + 38), at9k, sizeof(at9k));
    if (ifc->mtu < 128)
        AUDIT_SET(f->reason, "an MTU this small cannot carry TCP efficiently");
    else if (st == AUDIT_OK && ifc->mtu >= 9000 && ifc->type != 1)
        AUDIT_SET(f->reason,
                  "large packets cut per-packet cost; pays off only if the whole "
                  "path carries %llu-byte packets (see tcp_mtu_probing)",
                  (unsigned long long)ifc->mtu);
    else if (st == AUDIT_OK && ifc->mtu >= 9000)
        AUDIT_SET(f->reason,
                  "best TCP goodput %s on this link; pays off only if the whole path "
                  "carries %llu-byte packets (tracepath; see tcp_mtu_probing)",
                  at, (unsigned long long)ifc->mtu);
    else if (st == AUDIT_OK)
        AUDIT_SET(f->reason, "MTU %llu is fine for this profile", (unsigned long long)ifc->mtu);
    else
        AUDIT_SET(f->reason,
                  "at MTU %llu TCP goodput tops out at %s (%s at 9000) and every "
                  "packet costs CPU; use 9000 where the whole path allows",
                  (unsigned long long)ifc->mtu, at, at9k);
    if (st == AUDIT_OK)
        return;
    AUDIT_SET(f->fix, "ip link set dev %s mtu 9000", ifc->name);
    AUDIT_SET(f->persist, "MTUBytes=9000 in a systemd .link file (or the distribution's "
                          "interface configuration)");
}

static void check_txqueuelen(struct audit_ctx *ctx, struct audit_iface *ifc)
{
    const struct audit_target *t = audit_get_target(ctx);
    bool low = throughput(ctx) && t->rate_bps >= 10e9 && ifc->txqlen < 10000;
    char rate[32];
    struct audit_finding *f;

    if (!ifc->have_txqlen) {
        report_bad_attr(ctx, "nic.txqueuelen", ifc, "tx_queue_len", "packets as a whole number");
        return;
    }
    f = audit_add(ctx, "nic.txqueuelen", ifc->name, AUDIT_G_NIC, low ? AUDIT_WARN : AUDIT_OK);
    AUDIT_SET(f->current, "%llu", (unsigned long long)ifc->txqlen);
    AUDIT_SET(f->recommended, "%s", low ? "10000" : f->current);
    units_format_rate(t->rate_bps, rate, sizeof(rate));
    if (!low) {
        AUDIT_SET(f->reason, "the transmit queue is long enough for a %s target", rate);
        return;
    }
    AUDIT_SET(f->reason,
              "%llu packets drain in %.0f us at %s: a burst from several flows "
              "overflows it; the seeds use 10000-20000",
              (unsigned long long)ifc->txqlen, (double)ifc->txqlen * 1500 * 8 / t->rate_bps * 1e6,
              rate);
    AUDIT_SET(f->fix, "ip link set dev %s txqueuelen 10000", ifc->name);
    AUDIT_SET(f->persist, "TransmitQueueLength=10000 in a systemd .link file");
}

static void check_driver(struct audit_ctx *ctx, struct audit_iface *ifc)
{
    const struct nicinfo *n = &ifc->nic;
    struct audit_finding *f;

    if (n->drv_err && !ifc->dev_driver[0]) {
        skip_nic(ctx, "nic.driver", ifc, "ETHTOOL_GDRVINFO", n->drv_err);
        return;
    }
    f = audit_add(ctx, "nic.driver", ifc->name, AUDIT_G_NIC, AUDIT_INFO);
    if (n->drv_err) {
        AUDIT_SET(f->current, "%s", ifc->dev_driver);
        AUDIT_SET(f->reason, "ETHTOOL_GDRVINFO: %s; driver from sysfs",
                  nicinfo_errtext(n->drv_err));
        return;
    }
    AUDIT_SET(f->current, "%s %s, firmware %s", n->driver, n->version[0] ? n->version : "-",
              n->firmware[0] ? n->firmware : "-");
    AUDIT_SET(f->reason,
              "bus %s; check the vendor's release notes for known issues with this "
              "driver and firmware",
              n->bus_info[0] ? n->bus_info : "-");
}

struct feature_rule {
    const char *id, *ethtool_name, *why_off;
    enum nicinfo_feature feat;
};

static const struct feature_rule feature_rules[] = {
    {"nic.tso", "tso", "the CPU cuts every 64 KB send into MTU-sized packets", NICINFO_TSO},
    {"nic.gso", "gso", "segmentation happens per packet in the stack", NICINFO_GSO},
    {"nic.gro", "gro", "every received packet travels the stack alone", NICINFO_GRO},
    {"nic.rx_checksum", "rx", "the CPU checksums every received byte", NICINFO_RXCSUM},
};

static struct audit_finding *add_feature(struct audit_ctx *ctx, const char *id,
                                         const struct audit_iface *ifc, enum audit_status st,
                                         enum nicinfo_feature feat)
{
    struct audit_finding *f = audit_add(ctx, id, ifc->name, AUDIT_G_NIC, st);

    AUDIT_SET(f->current, "%s%s", ifc->nic.feat[feat].active ? "on" : "off",
              ifc->nic.feat[feat].fixed ? " [fixed]" : "");
    return f;
}

static void feature_fix(struct audit_finding *f, const char *ifname, const char *name, bool on)
{
    AUDIT_SET(f->recommended, "%s", on ? "on" : "off");
    AUDIT_SET(f->fix, "ethtool -K %s %s %s", ifname, name, on ? "on" : "off");
    AUDIT_SET(f->persist, "run it from a systemd oneshot unit or NetworkManager's ethtool "
                          "settings");
}

/* A feature netrig cannot judge: skipped (unknown) or info (fixed off). Returns true when
 * handled. */
static bool feature_unusable(struct audit_ctx *ctx, const char *id, const struct audit_iface *ifc,
                             enum nicinfo_feature feat)
{
    const struct nicinfo *n = &ifc->nic;
    struct audit_finding *f;

    if (n->feat_err) {
        skip_nic(ctx, id, ifc, "ETHTOOL_GFEATURES", n->feat_err);
        return true;
    }
    if (!n->feat[feat].known) {
        f = audit_add(ctx, id, ifc->name, AUDIT_G_NIC, AUDIT_SKIPPED);
        AUDIT_SET(f->reason, "the kernel does not list the feature %s", nicinfo_feature_name(feat));
        return true;
    }
    if (!n->feat[feat].active && n->feat[feat].fixed) {
        f = add_feature(ctx, id, ifc, AUDIT_INFO, feat);
        AUDIT_SET(f->reason, "%s cannot be turned on for this device (driver %s)",
                  nicinfo_feature_name(feat), n->driver[0] ? n->driver : ifc->dev_driver);
        return true;
    }
    return false;
}

static void check_offloads(struct audit_ctx *ctx, struct audit_iface *ifc)
{
    const struct nicinfo *n = &ifc->nic;
    struct audit_finding *f;

    for (size_t i = 0; i < sizeof(feature_rules) / sizeof(feature_rules[0]); i++) {
        const struct feature_rule *r = &feature_rules[i];
        bool on = n->feat[r->feat].active;
        if (feature_unusable(ctx, r->id, ifc, r->feat))
            continue;
        f = add_feature(ctx, r->id, ifc, on ? AUDIT_OK : AUDIT_WARN, r->feat);
        AUDIT_SET(f->recommended, "on");
        if (on) {
            AUDIT_SET(f->reason, "%s is on", nicinfo_feature_name(r->feat));
            continue;
        }
        AUDIT_SET(f->reason, "%s is off: %s", nicinfo_feature_name(r->feat), r->why_off);
        feature_fix(f, ifc->name, r->ethtool_name, true);
    }
    if (!feature_unusable(ctx, "nic.lro", ifc, NICINFO_LRO)) {
        bool on = n->feat[NICINFO_LRO].active, fwd = audit_get_host(ctx)->forwarding;
        bool want = !fwd && (on || lro_wanted(ctx));
        enum audit_status st = on == want        ? AUDIT_OK
                               : fwd             ? AUDIT_BAD
                               : lro_wanted(ctx) ? AUDIT_WARN
                                                 : AUDIT_INFO;
        f = add_feature(ctx, "nic.lro", ifc, st, NICINFO_LRO);
        AUDIT_SET(f->recommended, "%s", want ? "on" : "off");
        if (fwd)
            AUDIT_SET(f->reason, "this host forwards IPv4: LRO merges packets it must forward "
                                 "unchanged; keep it off (GRO is safe)");
        else
            AUDIT_SET(f->reason, "LRO merges packets in the NIC before GRO, cutting per-packet "
                                 "cost on an end host at 40 Gbit/s and up (seed 000 turned it "
                                 "on)");
        if (st != AUDIT_OK)
            feature_fix(f, ifc->name, "lro", want);
    }
    if (!feature_unusable(ctx, "nic.rxhash", ifc, NICINFO_RXHASH)) {
        bool on = n->feat[NICINFO_RXHASH].active, multi = ifc->rx_queues > 1;
        f = add_feature(ctx, "nic.rxhash", ifc,
                        on      ? AUDIT_OK
                        : multi ? AUDIT_WARN
                                : AUDIT_INFO,
                        NICINFO_RXHASH);
        AUDIT_SET(f->recommended, "on");
        AUDIT_SET(f->reason, "%s",
                  on ? "receive hashing lets RSS spread flows over the queues"
                     : "receive hashing is off: RSS cannot spread flows over "
                       "the receive queues");
        if (!on)
            feature_fix(f, ifc->name, "rxhash", true);
    }
}

/* Receive drops for lack of host buffers since boot, or -1 when unknown. */
static int64_t rx_drops(struct audit_ctx *ctx, const struct audit_iface *ifc)
{
    static const char *const names[] = {"rx_missed_errors", "rx_fifo_errors"};
    char path[160];
    int64_t sum = -1;
    uint64_t v;

    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s", ifc->name, names[i]);
        if (read_u64_file(ctx, path, &v) && v < INT64_MAX / 4)
            sum = (sum < 0 ? 0 : sum) + (int64_t)v;
    }
    return sum;
}

static void check_rings(struct audit_ctx *ctx, struct audit_iface *ifc)
{
    const struct nicinfo *n = &ifc->nic;
    bool full = n->rx >= n->rx_max && n->tx >= n->tx_max;
    int64_t drops;
    enum audit_status st;
    struct audit_finding *f;

    if (n->ring_err) {
        skip_nic(ctx, "nic.rings", ifc, "ETHTOOL_GRINGPARAM", n->ring_err);
        return;
    }
    drops = rx_drops(ctx, ifc);
    st = full ? AUDIT_OK : drops > 0 ? AUDIT_WARN : throughput(ctx) ? AUDIT_INFO : AUDIT_OK;
    f = audit_add(ctx, "nic.rings", ifc->name, AUDIT_G_NIC, st);
    AUDIT_SET(f->current, "rx %u tx %u", n->rx, n->tx);
    if (st == AUDIT_OK)
        AUDIT_SET(f->recommended, "%s", f->current);
    else
        AUDIT_SET(f->recommended, "rx %u tx %u", n->rx_max > n->rx ? n->rx_max : n->rx,
                  n->tx_max > n->tx ? n->tx_max : n->tx);
    if (drops >= 0)
        AUDIT_SET(f->reason,
                  "rx ring %u of %u, tx %u of %u; %lld receive drops for lack of "
                  "buffers since boot (rx_missed_errors + rx_fifo_errors)",
                  n->rx, n->rx_max, n->tx, n->tx_max, (long long)drops);
    else
        AUDIT_SET(f->reason, "rx ring %u of %u, tx %u of %u; receive drop counters unknown", n->rx,
                  n->rx_max, n->tx, n->tx_max);
    if (st == AUDIT_OK)
        return;
    AUDIT_SET(f->fix, "ethtool -G %s %s", ifc->name, f->recommended);
    AUDIT_SET(f->persist, "RxBufferSize= and TxBufferSize= in a systemd .link file");
}

static void coalesce_text(const struct nicinfo *n, char *buf, size_t len)
{
    snprintf(buf, len, "adaptive-rx %s rx-usecs %u rx-frames %u", n->adaptive_rx ? "on" : "off",
             n->rx_usecs, n->rx_frames);
}

static void check_coalesce(struct audit_ctx *ctx, struct audit_iface *ifc)
{
    const struct nicinfo *n = &ifc->nic;
    bool mlx5 = !strcmp(n->driver, "mlx5_core") || !strcmp(ifc->dev_driver, "mlx5_core");
    bool lro = n->feat[NICINFO_LRO].known &&
               (n->feat[NICINFO_LRO].active || (!n->feat[NICINFO_LRO].fixed && lro_wanted(ctx)));
    enum audit_status st;
    const char *rec, *why;
    struct audit_finding *f;

    if (n->coal_err) {
        skip_nic(ctx, "nic.coalesce", ifc, "ETHTOOL_GCOALESCE", n->coal_err);
        return;
    }
    if (!throughput(ctx)) {
        bool slow = n->adaptive_rx || n->rx_usecs > 8;
        st = slow ? AUDIT_WARN : AUDIT_OK;
        rec = "adaptive-rx off rx-usecs 0";
        why = slow ? "for latency, interrupt at once: adaptive-rx off and rx-usecs 0-8"
                   : "interrupts come within 8 us of a packet";
    } else if (mlx5 && lro && n->adaptive_rx) {
        st = AUDIT_WARN;
        rec = "adaptive-rx off rx-usecs 8 rx-frames 128";
        why = "ConnectX-4/5 with hardware LRO and adaptive-rx can stall near 60 Gbit/s "
              "(mlx5 release notes, issue 1241056; seed 000)";
    } else if (n->adaptive_rx) {
        st = AUDIT_OK;
        rec = NULL;
        why = "adaptive-rx on: the driver trades interrupts against latency by load";
    } else if (mlx5 && lro && n->rx_usecs >= 8) {
        st = AUDIT_OK;
        rec = NULL;
        why = "static coalescing, as recommended for ConnectX-4/5 with hardware LRO";
    } else {
        st = AUDIT_INFO;
        rec = "adaptive-rx on";
        why = "ESnet leaves adaptive-rx on where the driver supports it";
    }
    f = audit_add(ctx, "nic.coalesce", ifc->name, AUDIT_G_NIC, st);
    coalesce_text(n, f->current, sizeof(f->current));
    AUDIT_SET(f->recommended, "%s", st == AUDIT_OK || !rec ? f->current : rec);
    AUDIT_SET(f->reason, "%s", why);
    if (st == AUDIT_OK)
        return;
    AUDIT_SET(f->fix, "ethtool -C %s %s", ifc->name, rec);
    AUDIT_SET(f->persist, "run it from a systemd oneshot unit or NetworkManager's ethtool "
                          "settings");
}

/* CPUs local to the NIC (or online ones): how many queues are worth having. */
static int local_cpu_count(struct audit_ctx *ctx, const struct audit_iface *ifc)
{
    struct cpulist cl;
    char path[160], buf[4096];

    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/local_cpulist", ifc->pci);
    if (ifc->pci[0] && audit_read(ctx, path, buf, sizeof(buf)) > 0 && !cpulist_parse(buf, &cl))
        return cl.n;
    if (audit_read(ctx, "/sys/devices/system/cpu/online", buf, sizeof(buf)) > 0 &&
        !cpulist_parse(buf, &cl))
        return cl.n;
    return 1;
}

static void check_channels(struct audit_ctx *ctx, struct audit_iface *ifc)
{
    const struct nicinfo *n = &ifc->nic;
    uint32_t have = n->ch_combined + n->ch_rx, max = n->ch_combined_max + n->ch_rx_max, want;
    int local;
    struct audit_finding *f;

    if (n->chan_err) {
        if (ifc->rx_queues == 0) {
            skip_nic(ctx, "nic.channels", ifc, "ETHTOOL_GCHANNELS", n->chan_err);
            return;
        }
        f = audit_add(ctx, "nic.channels", ifc->name, AUDIT_G_NIC,
                      ifc->rx_queues > 1 ? AUDIT_OK : AUDIT_INFO);
        AUDIT_SET(f->current, "%u rx queue%s", ifc->rx_queues, ifc->rx_queues == 1 ? "" : "s");
        AUDIT_SET(f->recommended, "%s", f->current);
        AUDIT_SET(f->reason, "ETHTOOL_GCHANNELS: %s; counted in sysfs%s",
                  nicinfo_errtext(n->chan_err),
                  ifc->rx_queues > 1 ? ""
                                     : "; one queue means one CPU takes all receive "
                                       "interrupts (see nic.rps)");
        return;
    }
    local = local_cpu_count(ctx, ifc);
    max = max ? max : have;
    want = (uint32_t)(local / 2 > 1 ? local / 2 : 1);
    want = want < max ? want : max;
    f = audit_add(ctx, "nic.channels", ifc->name, AUDIT_G_NIC,
                  have >= want ? AUDIT_OK
                  : have == 1  ? AUDIT_WARN
                               : AUDIT_INFO);
    AUDIT_SET(f->current, "%u", have);
    AUDIT_SET(f->recommended, "%u", have >= want ? have : want);
    AUDIT_SET(f->reason,
              "%u queues (the NIC allows %u) for %d local CPUs: about one per "
              "physical core spreads receive work%s",
              have, max, local,
              have == 1 ? "; one queue means one CPU takes all receive interrupts" : "");
    if (have >= want)
        return;
    AUDIT_SET(f->fix, "ethtool -L %s %s %u", ifc->name, n->ch_combined_max ? "combined" : "rx",
              want);
    AUDIT_SET(f->persist, "CombinedChannels= (or RxChannels=) in a systemd .link file");
}

static void check_pause(struct audit_ctx *ctx, struct audit_iface *ifc)
{
    const struct nicinfo *n = &ifc->nic;
    bool on = n->pause_rx && n->pause_tx;
    struct audit_finding *f;

    if (n->pause_err) {
        skip_nic(ctx, "nic.pause", ifc, "ETHTOOL_GPAUSEPARAM", n->pause_err);
        return;
    }
    f = audit_add(ctx, "nic.pause", ifc->name, AUDIT_G_NIC, on ? AUDIT_OK : AUDIT_INFO);
    AUDIT_SET(f->current, "autoneg %s rx %s tx %s", n->pause_autoneg ? "on" : "off",
              n->pause_rx ? "on" : "off", n->pause_tx ? "on" : "off");
    AUDIT_SET(f->recommended, "%s", on ? f->current : "rx on tx on");
    AUDIT_SET(f->reason, "%s",
              on ? "flow control lets the NIC slow the sender instead of "
                   "dropping"
                 : "ESnet turns pause frames on (some drivers default off); "
                   "site policy decides");
    if (on)
        return;
    AUDIT_SET(f->fix, "ethtool -A %s rx on tx on", ifc->name);
    AUDIT_SET(f->persist, "run it from a systemd oneshot unit or NetworkManager's ethtool "
                          "settings");
}

void audit_iface_checks(struct audit_ctx *ctx, struct audit_iface *ifc)
{
    check_link(ctx, ifc);
    check_mtu(ctx, ifc);
    check_txqueuelen(ctx, ifc);
    check_driver(ctx, ifc);
    check_offloads(ctx, ifc);
    check_rings(ctx, ifc);
    check_coalesce(ctx, ifc);
    check_channels(ctx, ifc);
    check_pause(ctx, ifc);
}
