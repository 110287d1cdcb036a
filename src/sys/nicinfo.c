/* nicinfo: ethtool "get" ioctls and an rtnetlink qdisc dump for one interface, or the same
 * answers from a recorded text file. The only place netrig talks SIOCETHTOOL. */
#define _GNU_SOURCE
#include "nicinfo.h"

#include "hostfs.h"

#include <ctype.h>
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define MAX_FEATURES 1024 /* sanity bound on the kernel's feature string count */

static const char *const feature_names[NICINFO_FEATURE_COUNT] = {
    "tx-tcp-segmentation", "tx-generic-segmentation", "rx-gro", "rx-lro", "rx-hashing",
    "rx-checksum",         "tx-checksumming",
};

/* the kernel's features that ethtool -k sums up as "tx-checksumming" */
static bool is_tx_checksum(const char *name)
{
    return !strcmp(name, "tx-checksum-ipv4") || !strcmp(name, "tx-checksum-ip-generic") ||
           !strcmp(name, "tx-checksum-ipv6");
}

const char *nicinfo_feature_name(enum nicinfo_feature f)
{
    return f < NICINFO_FEATURE_COUNT ? feature_names[f] : "?";
}

static const struct {
    int err;
    const char *name, *text;
} errs[] = {
    {EOPNOTSUPP, "EOPNOTSUPP", "the driver does not report it"},
    {EPERM, "EPERM", "the kernel requires CAP_NET_ADMIN for it"},
    {EACCES, "EACCES", "permission denied"},
    {ENODEV, "ENODEV", "the interface is gone"},
    {EINVAL, "EINVAL", "the driver rejected the request"},
    {ENOENT, "ENOENT", "no such interface"},
    {ENODATA, "ENODATA", "not in the recorded answers"},
    {EBADMSG, "EBADMSG", "the recorded answers cannot be parsed"},
    {EIO, "EIO", "the device did not answer"},
    {EBUSY, "EBUSY", "the device is busy"},
    {ENOMEM, "ENOMEM", "out of memory"},
};

const char *nicinfo_errname(int err, char *buf, size_t len)
{
    for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
        if (errs[i].err == err)
            return errs[i].name;
    snprintf(buf, len, "E%d", err);
    return buf;
}

const char *nicinfo_errtext(int err)
{
    for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
        if (errs[i].err == err)
            return errs[i].text;
    return "the request failed";
}

static int errno_from_name(const char *name)
{
    char *end;
    long v;

    for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++)
        if (!strcmp(errs[i].name, name))
            return errs[i].err;
    if (name[0] != 'E' || !isdigit((unsigned char)name[1]))
        return 0;
    v = strtol(name + 1, &end, 10);
    return *end || v <= 0 || v > 4095 ? 0 : (int)v;
}

void nicinfo_answer_path(const char *ifname, char *buf, size_t len)
{
    snprintf(buf, len, "/netrig/ethtool/%s", ifname);
}

/* --- live: ioctls and rtnetlink ----------------------------------------------------------- */

static int ethtool_get(int fd, const char *ifname, void *data)
{
    struct ifreq ifr;

    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
    ifr.ifr_data = data;
    return ioctl(fd, SIOCETHTOOL, &ifr) ? errno : 0;
}

static void copy_str(char *dst, size_t len, const char *src, size_t srclen)
{
    size_t n = strnlen(src, srclen);

    if (n >= len)
        n = len - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
    for (size_t i = 0; i < n; i++)
        if (!isprint((unsigned char)dst[i]))
            dst[i] = '?';
}

static void query_drvinfo(int fd, const char *ifname, struct nicinfo *out)
{
    struct ethtool_drvinfo d;

    memset(&d, 0, sizeof(d));
    d.cmd = ETHTOOL_GDRVINFO;
    out->drv_err = ethtool_get(fd, ifname, &d);
    if (out->drv_err)
        return;
    copy_str(out->driver, sizeof(out->driver), d.driver, sizeof(d.driver));
    copy_str(out->version, sizeof(out->version), d.version, sizeof(d.version));
    copy_str(out->firmware, sizeof(out->firmware), d.fw_version, sizeof(d.fw_version));
    copy_str(out->bus_info, sizeof(out->bus_info), d.bus_info, sizeof(d.bus_info));
}

/* ETHTOOL_GFEATURES needs the feature names (GSSET_INFO + GSTRINGS) to find the bits. */
static int query_features(int fd, const char *ifname, struct nicinfo *out)
{
    struct ethtool_sset_info *ss = calloc(1, sizeof(*ss) + sizeof(uint32_t));
    struct ethtool_gstrings *gs = NULL;
    struct ethtool_gfeatures *gf = NULL;
    uint32_t n = 0, blocks;
    int rc = ENOMEM;
    struct nicinfo_feat *tx = &out->feat[NICINFO_TXCSUM];

    if (!ss)
        return ENOMEM;
    ss->cmd = ETHTOOL_GSSET_INFO;
    ss->sset_mask = 1ULL << ETH_SS_FEATURES;
    rc = ethtool_get(fd, ifname, ss);
    if (!rc && !(ss->sset_mask & (1ULL << ETH_SS_FEATURES)))
        rc = EOPNOTSUPP;
    if (!rc) {
        n = ss->data[0];
        rc = n == 0 || n > MAX_FEATURES ? EOPNOTSUPP : 0;
    }
    blocks = (n + 31) / 32;
    if (!rc) {
        gs = calloc(1, sizeof(*gs) + (size_t)n * ETH_GSTRING_LEN);
        gf = calloc(1, sizeof(*gf) + blocks * sizeof(gf->features[0]));
        rc = gs && gf ? 0 : ENOMEM;
    }
    if (!rc) {
        gs->cmd = ETHTOOL_GSTRINGS;
        gs->string_set = ETH_SS_FEATURES;
        gs->len = n;
        gf->cmd = ETHTOOL_GFEATURES;
        gf->size = blocks;
        rc = ethtool_get(fd, ifname, gs);
        if (!rc)
            rc = ethtool_get(fd, ifname, gf);
    }
    for (uint32_t i = 0; !rc && i < n && i < gs->len; i++) {
        char name[ETH_GSTRING_LEN + 1];
        uint32_t bit = 1U << (i % 32);
        const struct ethtool_get_features_block *b = &gf->features[i / 32];

        bool active = (b->active & bit) != 0;
        bool fixed = !(b->available & bit) || (b->never_changed & bit);

        copy_str(name, sizeof(name), (const char *)gs->data + (size_t)i * ETH_GSTRING_LEN,
                 ETH_GSTRING_LEN);
        if (is_tx_checksum(name)) {
            tx->fixed = tx->known ? tx->fixed && fixed : fixed;
            tx->known = true;
            tx->active |= active;
            continue;
        }
        for (int f = 0; f < NICINFO_FEATURE_COUNT; f++) {
            if (strcmp(name, feature_names[f]))
                continue;
            out->feat[f].known = true;
            out->feat[f].active = active;
            out->feat[f].fixed = fixed;
        }
    }
    free(ss);
    free(gs);
    free(gf);
    return rc;
}

static void query_params(int fd, const char *ifname, struct nicinfo *out)
{
    struct ethtool_ringparam r = {.cmd = ETHTOOL_GRINGPARAM};
    struct ethtool_coalesce c = {.cmd = ETHTOOL_GCOALESCE};
    struct ethtool_channels ch = {.cmd = ETHTOOL_GCHANNELS};
    struct ethtool_pauseparam p = {.cmd = ETHTOOL_GPAUSEPARAM};

    out->ring_err = ethtool_get(fd, ifname, &r);
    out->rx = r.rx_pending, out->rx_max = r.rx_max_pending;
    out->tx = r.tx_pending, out->tx_max = r.tx_max_pending;
    out->coal_err = ethtool_get(fd, ifname, &c);
    out->adaptive_rx = c.use_adaptive_rx_coalesce, out->adaptive_tx = c.use_adaptive_tx_coalesce;
    out->rx_usecs = c.rx_coalesce_usecs, out->rx_frames = c.rx_max_coalesced_frames;
    out->tx_usecs = c.tx_coalesce_usecs, out->tx_frames = c.tx_max_coalesced_frames;
    out->chan_err = ethtool_get(fd, ifname, &ch);
    out->ch_rx = ch.rx_count, out->ch_rx_max = ch.max_rx;
    out->ch_tx = ch.tx_count, out->ch_tx_max = ch.max_tx;
    out->ch_combined = ch.combined_count, out->ch_combined_max = ch.max_combined;
    out->pause_err = ethtool_get(fd, ifname, &p);
    out->pause_autoneg = p.autoneg, out->pause_rx = p.rx_pause, out->pause_tx = p.tx_pause;
}

/* One qdisc from the dump: remember the root's kind and the kinds below it. */
static void note_qdisc(const struct nlmsghdr *nh, unsigned idx, struct nicinfo *out)
{
    const struct tcmsg *tc = NLMSG_DATA(nh);
    const struct rtattr *a = TCA_RTA(tc);
    int alen = (int)TCA_PAYLOAD(nh);
    char kind[16] = "";

    if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*tc)) || (unsigned)tc->tcm_ifindex != idx)
        return;
    for (; RTA_OK(a, alen); a = RTA_NEXT(a, alen))
        if (a->rta_type == TCA_KIND)
            copy_str(kind, sizeof(kind), RTA_DATA(a), RTA_PAYLOAD(a));
    if (!kind[0] || tc->tcm_parent == TC_H_INGRESS)
        return;
    if (tc->tcm_parent == TC_H_ROOT)
        snprintf(out->qdisc_root, sizeof(out->qdisc_root), "%s", kind);
    else if (!out->qdisc_leaf[0])
        snprintf(out->qdisc_leaf, sizeof(out->qdisc_leaf), "%s", kind);
    else if (strcmp(out->qdisc_leaf, kind))
        snprintf(out->qdisc_leaf, sizeof(out->qdisc_leaf), "mixed");
}

static int query_qdisc(const char *ifname, struct nicinfo *out)
{
    struct {
        struct nlmsghdr nh;
        struct tcmsg tc;
    } req;
    struct timeval tv = {.tv_sec = 2};
    unsigned idx = if_nametoindex(ifname);
    char *buf;
    int fd, rc = 0;
    bool done = false;

    if (!idx)
        return errno;
    fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0)
        return errno;
    buf = malloc(32768);
    memset(&req, 0, sizeof(req));
    req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.tc));
    req.nh.nlmsg_type = RTM_GETQDISC;
    req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    req.nh.nlmsg_seq = 1;
    req.tc.tcm_family = AF_UNSPEC;
    req.tc.tcm_ifindex = (int)idx;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (!buf || send(fd, &req, req.nh.nlmsg_len, 0) < 0)
        rc = buf ? errno : ENOMEM;
    while (!rc && !done) {
        int len = (int)recv(fd, buf, 32768, 0);
        if (len < 0 && errno == EINTR)
            continue;
        if (len <= 0) {
            rc = len < 0 ? errno : EIO;
            break;
        }
        for (struct nlmsghdr *nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, len);
             nh = NLMSG_NEXT(nh, len)) {
            if (nh->nlmsg_type == NLMSG_DONE) {
                done = true;
                break;
            }
            if (nh->nlmsg_type == NLMSG_ERROR) {
                const struct nlmsgerr *e = NLMSG_DATA(nh);
                rc = e->error ? -e->error : EIO;
                break;
            }
            if (nh->nlmsg_type == RTM_NEWQDISC)
                note_qdisc(nh, idx, out);
        }
    }
    free(buf);
    close(fd);
    if (!rc && !out->qdisc_root[0])
        rc = ENOENT;
    if (strcmp(out->qdisc_root, "mq") && strcmp(out->qdisc_root, "mqprio"))
        out->qdisc_leaf[0] = '\0';
    return rc;
}

static void query_live(const char *ifname, struct nicinfo *out)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

    if (fd < 0)
        fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        out->drv_err = out->feat_err = out->ring_err = out->coal_err = e;
        out->chan_err = out->pause_err = e;
    } else {
        query_drvinfo(fd, ifname, out);
        out->feat_err = query_features(fd, ifname, out);
        query_params(fd, ifname, out);
        close(fd);
    }
    out->qdisc_err = query_qdisc(ifname, out);
}

/* --- recorded answers --------------------------------------------------------------------- */

struct section {
    const char *name;
    size_t err_off;
};

static const struct section sections[] = {
    {"drvinfo", offsetof(struct nicinfo, drv_err)},
    {"feature", offsetof(struct nicinfo, feat_err)},
    {"ring", offsetof(struct nicinfo, ring_err)},
    {"coalesce", offsetof(struct nicinfo, coal_err)},
    {"channels", offsetof(struct nicinfo, chan_err)},
    {"pause", offsetof(struct nicinfo, pause_err)},
    {"qdisc", offsetof(struct nicinfo, qdisc_err)},
};
#define N_SECTIONS (sizeof(sections) / sizeof(sections[0]))

struct num_key {
    int section; /* index into sections */
    const char *key;
    size_t off;
};

static const struct num_key num_keys[] = {
    {2, "rx", offsetof(struct nicinfo, rx)},
    {2, "rx_max", offsetof(struct nicinfo, rx_max)},
    {2, "tx", offsetof(struct nicinfo, tx)},
    {2, "tx_max", offsetof(struct nicinfo, tx_max)},
    {3, "adaptive_rx", offsetof(struct nicinfo, adaptive_rx)},
    {3, "adaptive_tx", offsetof(struct nicinfo, adaptive_tx)},
    {3, "rx_usecs", offsetof(struct nicinfo, rx_usecs)},
    {3, "rx_frames", offsetof(struct nicinfo, rx_frames)},
    {3, "tx_usecs", offsetof(struct nicinfo, tx_usecs)},
    {3, "tx_frames", offsetof(struct nicinfo, tx_frames)},
    {4, "rx", offsetof(struct nicinfo, ch_rx)},
    {4, "rx_max", offsetof(struct nicinfo, ch_rx_max)},
    {4, "tx", offsetof(struct nicinfo, ch_tx)},
    {4, "tx_max", offsetof(struct nicinfo, ch_tx_max)},
    {4, "combined", offsetof(struct nicinfo, ch_combined)},
    {4, "combined_max", offsetof(struct nicinfo, ch_combined_max)},
    {5, "autoneg", offsetof(struct nicinfo, pause_autoneg)},
    {5, "rx", offsetof(struct nicinfo, pause_rx)},
    {5, "tx", offsetof(struct nicinfo, pause_tx)},
};
#define N_NUM_KEYS (sizeof(num_keys) / sizeof(num_keys[0]))

#define FIELD(nic, off, type) ((type *)((char *)(nic) + (off)))

static int parse_u32(const char *s, uint32_t *out)
{
    char *end;
    unsigned long v;

    if (!isdigit((unsigned char)*s) || strlen(s) > 10)
        return -1;
    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno || *end || v > UINT32_MAX)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* A string value: printable, at most len - 1 characters. */
static int parse_str(const char *s, char *dst, size_t len)
{
    if (strlen(s) >= len)
        return -1;
    for (const char *p = s; *p; p++)
        if (!isprint((unsigned char)*p))
            return -1;
    snprintf(dst, len, "%s", s);
    return 0;
}

static int parse_feature(const char *key, const char *val, struct nicinfo *out)
{
    bool on = !strncmp(val, "on", 2), off = !strncmp(val, "off", 3);
    const char *rest = val + (on ? 2 : 3);

    if ((!on && !off) || (*rest && strcmp(rest, " fixed")))
        return -1;
    for (int f = 0; f < NICINFO_FEATURE_COUNT; f++) {
        if (strcmp(key, feature_names[f]))
            continue;
        out->feat[f].known = true;
        out->feat[f].active = on;
        out->feat[f].fixed = *rest != '\0';
    }
    return 0; /* names netrig does not judge are accepted and ignored */
}

/* One "section key value" line. Returns the section index, or -1 when malformed. */
static int parse_line(char *line, struct nicinfo *out, unsigned *seen_keys)
{
    char *key, *val;
    size_t s;

    key = strchr(line, ' ');
    if (!key)
        return -1;
    *key++ = '\0';
    val = strchr(key, ' ');
    if (!val)
        return -1;
    *val++ = '\0';
    for (s = 0; s < N_SECTIONS && strcmp(line, sections[s].name); s++)
        ;
    if (s == N_SECTIONS)
        return -1;
    if (!strcmp(key, "error")) {
        int e = errno_from_name(val);
        if (!e)
            return -1;
        *FIELD(out, sections[s].err_off, int) = e;
        return (int)s;
    }
    if (s == 0) {
        char *dst = !strcmp(key, "driver")     ? out->driver
                    : !strcmp(key, "version")  ? out->version
                    : !strcmp(key, "firmware") ? out->firmware
                    : !strcmp(key, "bus_info") ? out->bus_info
                                               : NULL;
        return dst && !parse_str(val, dst, 32) ? 0 : -1;
    }
    if (s == 1)
        return parse_feature(key, val, out) ? -1 : 1;
    if (s == 6) {
        char *dst = !strcmp(key, "root")   ? out->qdisc_root
                    : !strcmp(key, "leaf") ? out->qdisc_leaf
                                           : NULL;
        return dst && !parse_str(val, dst, sizeof(out->qdisc_root)) ? 6 : -1;
    }
    for (size_t k = 0; k < N_NUM_KEYS; k++) {
        if (num_keys[k].section != (int)s || strcmp(num_keys[k].key, key))
            continue;
        if (parse_u32(val, FIELD(out, num_keys[k].off, uint32_t)))
            return -1;
        *seen_keys |= 1U << k;
        return (int)s;
    }
    return -1;
}

void nicinfo_parse(const char *text, struct nicinfo *out)
{
    bool seen[N_SECTIONS] = {false}, bad = false;
    unsigned seen_keys = 0;
    char line[256];

    memset(out, 0, sizeof(*out));
    for (const char *p = text; *p && !bad;) {
        size_t n = strcspn(p, "\n");
        int s;

        if (n >= sizeof(line)) {
            bad = true;
            break;
        }
        memcpy(line, p, n);
        line[n] = '\0';
        p += n + (p[n] == '\n');
        if (!line[0] || line[0] == '#')
            continue;
        s = parse_line(line, out, &seen_keys);
        if (s < 0)
            bad = true;
        else
            seen[s] = true;
    }
    for (size_t s = 0; s < N_SECTIONS; s++) {
        int *err = FIELD(out, sections[s].err_off, int);
        if (bad)
            *err = EBADMSG;
        else if (!seen[s])
            *err = ENODATA;
    }
    if (bad)
        return;
    /* a numeric section without an error must carry all its keys */
    for (size_t k = 0; k < N_NUM_KEYS; k++) {
        int *err = FIELD(out, sections[num_keys[k].section].err_off, int);
        if (!*err && !(seen_keys & (1U << k)))
            *err = EBADMSG;
    }
    if (!out->drv_err && !out->driver[0])
        out->drv_err = EBADMSG;
    if (!out->qdisc_err && !out->qdisc_root[0])
        out->qdisc_err = EBADMSG;
}

size_t nicinfo_format(const struct nicinfo *nic, const char *ifname, char *buf, size_t len)
{
    size_t used = 0;
    char en[16];

#define EMIT(...)                                                                                  \
    do {                                                                                           \
        if (used < len)                                                                            \
            used += (size_t)snprintf(buf + used, len - used, __VA_ARGS__);                         \
    } while (0)

    EMIT("# netrig audit: ethtool and rtnetlink answers recorded for %s\n", ifname);
    for (size_t s = 0; s < N_SECTIONS; s++) {
        int err = *FIELD((struct nicinfo *)nic, sections[s].err_off, int);
        if (err) {
            EMIT("%s error %s\n", sections[s].name, nicinfo_errname(err, en, sizeof(en)));
            continue;
        }
        if (s == 0)
            EMIT("drvinfo driver %s\ndrvinfo version %s\ndrvinfo firmware %s\n"
                 "drvinfo bus_info %s\n",
                 nic->driver, nic->version, nic->firmware, nic->bus_info);
        for (int f = 0; s == 1 && f < NICINFO_FEATURE_COUNT; f++)
            if (nic->feat[f].known)
                EMIT("feature %s %s%s\n", feature_names[f], nic->feat[f].active ? "on" : "off",
                     nic->feat[f].fixed ? " fixed" : "");
        for (size_t k = 0; k < N_NUM_KEYS; k++)
            if (num_keys[k].section == (int)s)
                EMIT("%s %s %u\n", sections[s].name, num_keys[k].key,
                     *FIELD((struct nicinfo *)nic, num_keys[k].off, uint32_t));
        if (s == 6) {
            EMIT("qdisc root %s\n", nic->qdisc_root);
            if (nic->qdisc_leaf[0])
                EMIT("qdisc leaf %s\n", nic->qdisc_leaf);
        }
    }
#undef EMIT
    if (used >= len && len)
        used = len - 1;
    return used;
}

void nicinfo_query(const char *sysroot, const char *ifname, struct nicinfo *out)
{
    char path[128], text[8192];
    long n;

    memset(out, 0, sizeof(*out));
    if (!sysroot || !*sysroot) {
        query_live(ifname, out);
        return;
    }
    nicinfo_answer_path(ifname, path, sizeof(path));
    n = hostfs_read(sysroot, path, text, sizeof(text));
    if (n < 0) {
        int e = n == -ENOENT ? ENODATA : (int)-n;
        out->drv_err = out->feat_err = out->ring_err = out->coal_err = e;
        out->chan_err = out->pause_err = out->qdisc_err = e;
        return;
    }
    nicinfo_parse(text, out);
}
