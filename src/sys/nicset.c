/* nicset: ethtool get/set ioctls for rings, coalescing, channels, pause and features. */
#define _GNU_SOURCE
#include "nicset.h"

#include <ctype.h>
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_PAIRS 12
#define WORD_LEN  ETH_GSTRING_LEN

static const char *const group_names[] = {"ring", "coalesce", "channels", "pause", "features"};

const char *nicset_group_name(enum nicset_group g)
{
    return (unsigned)g <= NICSET_FEATURES ? group_names[g] : "?";
}

int nicset_group_from_option(char opt)
{
    static const char opts[] = "GCLAK";
    const char *p = opt ? strchr(opts, opt) : NULL;

    return p ? (int)(p - opts) : -1;
}

int nicset_group_from_name(const char *name)
{
    for (int g = 0; g <= NICSET_FEATURES; g++)
        if (!strcmp(name, group_names[g]))
            return g;
    return -1;
}

/* The u32 fields of the fixed-size ethtool structs, by the ethtool command's key words. */
static const struct {
    enum nicset_group g;
    const char *key;
    size_t off;
    bool flag; /* on/off */
} keys[] = {
    {NICSET_RING, "rx", offsetof(struct ethtool_ringparam, rx_pending), false},
    {NICSET_RING, "rx-mini", offsetof(struct ethtool_ringparam, rx_mini_pending), false},
    {NICSET_RING, "rx-jumbo", offsetof(struct ethtool_ringparam, rx_jumbo_pending), false},
    {NICSET_RING, "tx", offsetof(struct ethtool_ringparam, tx_pending), false},
    {NICSET_COALESCE, "adaptive-rx", offsetof(struct ethtool_coalesce, use_adaptive_rx_coalesce),
     true},
    {NICSET_COALESCE, "adaptive-tx", offsetof(struct ethtool_coalesce, use_adaptive_tx_coalesce),
     true},
    {NICSET_COALESCE, "rx-usecs", offsetof(struct ethtool_coalesce, rx_coalesce_usecs), false},
    {NICSET_COALESCE, "rx-frames", offsetof(struct ethtool_coalesce, rx_max_coalesced_frames),
     false},
    {NICSET_COALESCE, "tx-usecs", offsetof(struct ethtool_coalesce, tx_coalesce_usecs), false},
    {NICSET_COALESCE, "tx-frames", offsetof(struct ethtool_coalesce, tx_max_coalesced_frames),
     false},
    {NICSET_CHANNELS, "rx", offsetof(struct ethtool_channels, rx_count), false},
    {NICSET_CHANNELS, "tx", offsetof(struct ethtool_channels, tx_count), false},
    {NICSET_CHANNELS, "other", offsetof(struct ethtool_channels, other_count), false},
    {NICSET_CHANNELS, "combined", offsetof(struct ethtool_channels, combined_count), false},
    {NICSET_PAUSE, "autoneg", offsetof(struct ethtool_pauseparam, autoneg), true},
    {NICSET_PAUSE, "rx", offsetof(struct ethtool_pauseparam, rx_pause), true},
    {NICSET_PAUSE, "tx", offsetof(struct ethtool_pauseparam, tx_pause), true},
};

static const struct {
    uint32_t get, set;
} cmds[] = {
    [NICSET_RING] = {ETHTOOL_GRINGPARAM, ETHTOOL_SRINGPARAM},
    [NICSET_COALESCE] = {ETHTOOL_GCOALESCE, ETHTOOL_SCOALESCE},
    [NICSET_CHANNELS] = {ETHTOOL_GCHANNELS, ETHTOOL_SCHANNELS},
    [NICSET_PAUSE] = {ETHTOOL_GPAUSEPARAM, ETHTOOL_SPAUSEPARAM},
};

/* ethtool -K short names for the kernel's feature names */
static const struct {
    const char *alias, *name;
} aliases[] = {
    {"rx", "rx-checksum"},
    {"sg", "tx-scatter-gather"},
    {"tso", "tx-tcp-segmentation"},
    {"gso", "tx-generic-segmentation"},
    {"gro", "rx-gro"},
    {"lro", "rx-lro"},
    {"rxhash", "rx-hashing"},
    {"ntuple", "rx-ntuple-filter"},
    {"rxvlan", "rx-vlan-hw-parse"},
    {"txvlan", "tx-vlan-hw-insert"},
};

static int key_index(enum nicset_group g, const char *key)
{
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (keys[i].g == g && !strcmp(keys[i].key, key))
            return (int)i;
    return -1;
}

static const char *feature_name(const char *word)
{
    for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
        if (!strcmp(word, aliases[i].alias))
            return aliases[i].name;
    return word;
}

/* "k v k v" -> pairs; -1 on an odd count, too many or too long words */
static int split_pairs(const char *s, char k[][WORD_LEN], char v[][WORD_LEN])
{
    int n = 0, w = 0;

    for (;;) {
        size_t len;
        while (isspace((unsigned char)*s))
            s++;
        if (!*s)
            return w % 2 ? -1 : n;
        len = strcspn(s, " \t\n");
        if (len >= WORD_LEN || n >= MAX_PAIRS)
            return -1;
        memcpy(w % 2 ? v[n] : k[n], s, len);
        (w % 2 ? v[n] : k[n])[len] = '\0';
        n += w % 2;
        w++;
        s += len;
    }
}

static bool flag_word(const char *v, uint32_t *out)
{
    if (!strcmp(v, "on") || !strcmp(v, "off")) {
        *out = v[1] == 'n';
        return true;
    }
    return false;
}

static bool number_word(const char *v, uint32_t *out)
{
    char *end;
    unsigned long n;

    if (!isdigit((unsigned char)v[0]))
        return false;
    errno = 0;
    n = strtoul(v, &end, 10);
    if (errno || *end || n > UINT32_MAX)
        return false;
    *out = (uint32_t)n;
    return true;
}

int nicset_check(enum nicset_group g, const char *value)
{
    char k[MAX_PAIRS][WORD_LEN], v[MAX_PAIRS][WORD_LEN];
    int n = split_pairs(value, k, v);
    uint32_t x;

    if (n <= 0 || (unsigned)g > NICSET_FEATURES)
        return -EINVAL;
    for (int i = 0; i < n; i++) {
        int ki = g == NICSET_FEATURES ? 0 : key_index(g, k[i]);
        bool ok = g == NICSET_FEATURES
                      ? strspn(k[i], "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(k[i]) &&
                            flag_word(v[i], &x)
                      : ki >= 0 && (keys[ki].flag ? flag_word(v[i], &x) : number_word(v[i], &x));
        if (!ok)
            return -EINVAL;
    }
    return 0;
}

static int eth_ioctl(const char *ifname, void *data)
{
    struct ifreq ifr;
    int fd, rc;

    if (strlen(ifname) >= IFNAMSIZ)
        return -ENODEV;
    memset(&ifr, 0, sizeof(ifr));
    memcpy(ifr.ifr_name, ifname, strlen(ifname));
    ifr.ifr_data = data;
    fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    rc = ioctl(fd, SIOCETHTOOL, &ifr);
    rc = rc < 0 ? -errno : rc;
    close(fd);
    return rc;
}

static void append(char *out, size_t len, const char *k, const char *v)
{
    size_t used = strlen(out);

    snprintf(out + used, len - used, "%s%s %s", used ? " " : "", k, v);
}

/* ---- features: names from ETH_SS_FEATURES, bits in GFEATURES/SFEATURES blocks -------------- */

struct features {
    uint32_t n;
    struct ethtool_gstrings *names;
    struct ethtool_gfeatures *cur;
};

static void features_free(struct features *f)
{
    free(f->names);
    free(f->cur);
}

static int features_read(const char *ifname, struct features *f)
{
    struct {
        struct ethtool_sset_info hdr;
        uint32_t count;
    } info = {.hdr = {.cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ULL << ETH_SS_FEATURES}};
    uint32_t blocks;
    int rc;

    memset(f, 0, sizeof(*f));
    if ((rc = eth_ioctl(ifname, &info)) < 0)
        return rc;
    if (!info.hdr.sset_mask || !info.count || info.count > 4096)
        return -EOPNOTSUPP;
    f->n = info.count;
    blocks = (f->n + 31) / 32;
    f->names = calloc(1, sizeof(*f->names) + (size_t)f->n * ETH_GSTRING_LEN);
    f->cur = calloc(1, sizeof(*f->cur) + blocks * sizeof(f->cur->features[0]));
    if (!f->names || !f->cur) {
        features_free(f);
        return -ENOMEM;
    }
    f->names->cmd = ETHTOOL_GSTRINGS;
    f->names->string_set = ETH_SS_FEATURES;
    f->names->len = f->n;
    f->cur->cmd = ETHTOOL_GFEATURES;
    f->cur->size = blocks;
    if ((rc = eth_ioctl(ifname, f->names)) < 0 || (rc = eth_ioctl(ifname, f->cur)) < 0) {
        features_free(f);
        return rc;
    }
    return 0;
}

static int feature_bit(const struct features *f, const char *word)
{
    const char *name = feature_name(word);

    for (uint32_t i = 0; i < f->n; i++)
        if (!strncmp((const char *)f->names->data + (size_t)i * ETH_GSTRING_LEN, name,
                     ETH_GSTRING_LEN))
            return (int)i;
    return -1;
}

static int features_get(const char *ifname, char k[][WORD_LEN], int n, char *out, size_t len)
{
    struct features f;
    int rc = features_read(ifname, &f);

    if (rc)
        return rc;
    for (int i = 0; i < n && !rc; i++) {
        int bit = feature_bit(&f, k[i]);
        if (bit < 0)
            rc = -EOPNOTSUPP;
        else
            append(out, len, k[i],
                   f.cur->features[bit / 32].active & (1u << (bit % 32)) ? "on" : "off");
    }
    features_free(&f);
    return rc;
}

static int features_set(const char *ifname, char k[][WORD_LEN], char v[][WORD_LEN], int n)
{
    struct features f;
    struct ethtool_sfeatures *s;
    uint32_t on;
    int rc = features_read(ifname, &f);

    if (rc)
        return rc;
    s = calloc(1, sizeof(*s) + f.cur->size * sizeof(s->features[0]));
    if (!s) {
        features_free(&f);
        return -ENOMEM;
    }
    s->cmd = ETHTOOL_SFEATURES;
    s->size = f.cur->size;
    for (int i = 0; i < n && !rc; i++) {
        int bit = feature_bit(&f, k[i]);
        if (bit < 0 || !flag_word(v[i], &on)) {
            rc = bit < 0 ? -EOPNOTSUPP : -EINVAL;
            break;
        }
        s->features[bit / 32].valid |= 1u << (bit % 32);
        if (on)
            s->features[bit / 32].requested |= 1u << (bit % 32);
    }
    if (!rc) {
        rc = eth_ioctl(ifname, s);
        if (rc > 0) /* flags: what the driver did not do */
            rc = rc & ETHTOOL_F_UNSUPPORTED ? -EOPNOTSUPP : 0;
    }
    free(s);
    features_free(&f);
    return rc;
}

/* ---- the fixed-size groups ------------------------------------------------------------------ */

int nicset_get(const char *ifname, enum nicset_group g, const char *like, char *out, size_t len)
{
    char k[MAX_PAIRS][WORD_LEN], v[MAX_PAIRS][WORD_LEN], num[16];
    uint32_t buf[64];
    int n = split_pairs(like, k, v), rc;

    if (!len)
        return -EINVAL;
    out[0] = '\0';
    if (n <= 0)
        return -EINVAL;
    if (g == NICSET_FEATURES)
        return features_get(ifname, k, n, out, len);
    if ((unsigned)g > NICSET_PAUSE)
        return -EINVAL;
    memset(buf, 0, sizeof(buf));
    buf[0] = cmds[g].get;
    if ((rc = eth_ioctl(ifname, buf)) < 0)
        return rc;
    for (int i = 0; i < n; i++) {
        int ki = key_index(g, k[i]);
        uint32_t x;
        if (ki < 0)
            return -EINVAL;
        memcpy(&x, (const char *)buf + keys[ki].off, sizeof(x));
        if (keys[ki].flag)
            snprintf(num, sizeof(num), "%s", x ? "on" : "off");
        else
            snprintf(num, sizeof(num), "%u", x);
        append(out, len, k[i], num);
    }
    return 0;
}

int nicset_set(const char *ifname, enum nicset_group g, const char *value)
{
    char k[MAX_PAIRS][WORD_LEN], v[MAX_PAIRS][WORD_LEN];
    uint32_t buf[64];
    int n, rc = nicset_check(g, value);

    if (rc)
        return rc;
    n = split_pairs(value, k, v);
    if (g == NICSET_FEATURES)
        return features_set(ifname, k, v, n);
    memset(buf, 0, sizeof(buf));
    buf[0] = cmds[g].get;
    if ((rc = eth_ioctl(ifname, buf)) < 0)
        return rc;
    for (int i = 0; i < n; i++) {
        int ki = key_index(g, k[i]);
        uint32_t x;
        if (!(keys[ki].flag ? flag_word(v[i], &x) : number_word(v[i], &x)))
            return -EINVAL;
        memcpy((char *)buf + keys[ki].off, &x, sizeof(x));
    }
    buf[0] = cmds[g].set;
    rc = eth_ioctl(ifname, buf);
    return rc < 0 ? rc : 0;
}
