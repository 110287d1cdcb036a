/* audit_nic: what netrig audit asks a network interface through the kernel's ethtool ioctls
 * (ETHTOOL_GDRVINFO, GSSET_INFO + GSTRINGS + GFEATURES, GRINGPARAM, GCOALESCE, GCHANNELS,
 * GPAUSEPARAM) and an rtnetlink qdisc dump, behind one small API. Under --sysroot the answers
 * come from the recorded text file DIR/netrig/ethtool/IFACE instead; audit_nic_format writes
 * that file for --record. Only "get" requests are made: nothing is changed. */
#ifndef NETRIG_AUDIT_NIC_H
#define NETRIG_AUDIT_NIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum audit_nic_feature {
    AUDIT_NIC_TSO,    /* tx-tcp-segmentation */
    AUDIT_NIC_GSO,    /* tx-generic-segmentation */
    AUDIT_NIC_GRO,    /* rx-gro */
    AUDIT_NIC_LRO,    /* rx-lro */
    AUDIT_NIC_RXHASH, /* rx-hashing */
    AUDIT_NIC_RXCSUM, /* rx-checksum */
    AUDIT_NIC_FEATURE_COUNT,
};

/* Each *_err is 0 when that answer is known, else a positive errno: EOPNOTSUPP (driver does
 * not implement it), EPERM, ENODEV, ..., ENODATA (absent from the recorded answers) or
 * EBADMSG (the recorded answer could not be parsed). */
struct audit_nic {
    int drv_err;
    char driver[32], version[32], firmware[32], bus_info[32];
    int feat_err;
    struct {
        bool known, active, fixed; /* fixed: the driver does not let it change */
    } feat[AUDIT_NIC_FEATURE_COUNT];
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
void audit_nic_answer_path(const char *ifname, char *buf, size_t len);

/* Fills out for ifname: through ioctls and rtnetlink when sysroot is NULL or "", else from
 * sysroot/netrig/ethtool/IFNAME. Never fails as a whole: each part carries its own error. */
void audit_nic_query(const char *sysroot, const char *ifname, struct audit_nic *out);

/* Parses recorded answers. Lines are "<section> key value ..." or "<section> error NAME";
 * a section that is missing gets ENODATA, one that cannot be parsed EBADMSG. */
void audit_nic_parse(const char *text, struct audit_nic *out);

/* Writes the recorded-answers text for nic. Returns the length (truncated to len - 1). */
size_t audit_nic_format(const struct audit_nic *nic, const char *ifname, char *buf, size_t len);

const char *audit_nic_feature_name(enum audit_nic_feature f);
/* "EOPNOTSUPP" for EOPNOTSUPP, ...; "E<number>" for others */
const char *audit_nic_errname(int err, char *buf, size_t len);
/* A reason fragment: "the driver does not report it", "needs CAP_NET_ADMIN", ... */
const char *audit_nic_errtext(int err);

#endif
