/* nicinfo: what a network interface's driver says about its settings, through the kernel's
 * ethtool ioctls (ETHTOOL_GDRVINFO, GSSET_INFO + GSTRINGS + GFEATURES, GRINGPARAM, GCOALESCE,
 * GCHANNELS, GPAUSEPARAM) and an rtnetlink qdisc dump, behind one small API: the reader behind
 * netrig audit and the host snapshot. Under a sysroot the answers come from the recorded text
 * file SYSROOT/netrig/ethtool/IFACE instead (netrig audit --record writes it with
 * nicinfo_format), so tests use fixture trees. Only "get" requests are made: nothing is
 * changed (nicset.c changes NIC settings). */
#ifndef NETRIG_NICINFO_H
#define NETRIG_NICINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum nicinfo_feature {
    NICINFO_TSO,    /* tx-tcp-segmentation */
    NICINFO_GSO,    /* tx-generic-segmentation */
    NICINFO_GRO,    /* rx-gro */
    NICINFO_LRO,    /* rx-lro */
    NICINFO_RXHASH, /* rx-hashing */
    NICINFO_RXCSUM, /* rx-checksum */
    NICINFO_TXCSUM, /* "tx-checksumming", as ethtool -k says: any of tx-checksum-ipv4,
                       tx-checksum-ip-generic, tx-checksum-ipv6 (fixed: all of them fixed) */
    NICINFO_FEATURE_COUNT,
};

/* Each *_err is 0 when that answer is known, else a positive errno: EOPNOTSUPP (driver does
 * not implement it), EPERM, ENODEV, ..., ENODATA (absent from the recorded answers) or
 * EBADMSG (the recorded answer could not be parsed). */
struct nicinfo {
    int drv_err;
    char driver[32], version[32], firmware[32], bus_info[32];
    int feat_err;
    struct nicinfo_feat {
        bool known, active, fixed; /* fixed: the driver does not let it change */
    } feat[NICINFO_FEATURE_COUNT];
    int ring_err;
    uint32_t rx, rx_max, tx, tx_max;
    int coal_err;
    uint32_t adaptive_rx, adaptive_tx, rx_usecs, rx_frames, tx_usecs, tx_frames;
    int chan_err;
    uint32_t ch_rx, ch_rx_max, ch_tx, ch_tx_max, ch_combined, ch_combined_max;
    int pause_err;
    uint32_t pause_autoneg, pause_rx, pause_tx;
    int qdisc_err;
    char qdisc_root[16]; /* kind of the root qdisc, e.g. "mq", "fq", "pfifo_fast" */
    char qdisc_leaf[16]; /* kind of the per-queue children of a root mq; "" none; "mixed" */
};

/* The path of the recorded answers for ifname, relative to a sysroot. */
void nicinfo_answer_path(const char *ifname, char *buf, size_t len);

/* Fills out for ifname: through ioctls and rtnetlink when sysroot is NULL or "", else from
 * sysroot/netrig/ethtool/IFNAME. Never fails as a whole: each part carries its own error. */
void nicinfo_query(const char *sysroot, const char *ifname, struct nicinfo *out);

/* Parses recorded answers. Lines are "<section> key value ..." or "<section> error NAME";
 * a section that is missing gets ENODATA, one that cannot be parsed EBADMSG. */
void nicinfo_parse(const char *text, struct nicinfo *out);

/* Writes the recorded-answers text for nic. Returns the length (truncated to len - 1). */
size_t nicinfo_format(const struct nicinfo *nic, const char *ifname, char *buf, size_t len);

const char *nicinfo_feature_name(enum nicinfo_feature f);
/* "EOPNOTSUPP" for EOPNOTSUPP, ...; "E<number>" for others */
const char *nicinfo_errname(int err, char *buf, size_t len);
/* A reason fragment: "the driver does not report it", "needs CAP_NET_ADMIN", ... */
const char *nicinfo_errtext(int err);

#endif
