/* audit_pci: the PCIe group: link speed and width against the card's maximum and the port's
 * rate (sysfs), MaxPayload and MaxReadReq from the device's config space. Config space is
 * read with libpci on the live host, and from the recorded text dump
 * DIR/netrig/pci/DDDD:BB:DD.F (lspci -xxx layout) under --sysroot. */
#ifndef NETRIG_AUDIT_PCI_H
#define NETRIG_AUDIT_PCI_H

#include "audit.h"

struct audit_iface;

struct audit_pci_info {
    uint16_t vendor, device;
    int cap;                /* offset of the PCI Express capability */
    uint16_t devctl;        /* Device Control (cap + 8) */
    uint32_t devcap;        /* Device Capabilities (cap + 4) */
    int mps, mps_max, mrrs; /* bytes */
};

/* Finds the PCI Express capability (ID 0x10) by walking the list from 0x34 and decodes
 * MaxPayload = 128 << ((DevCtl >> 5) & 7), MaxReadReq = 128 << ((DevCtl >> 12) & 7).
 * Returns 0, -ENOENT (no PCIe capability), -EACCES (the list goes past the bytes read,
 * i.e. only the unprivileged first 64 were readable) or -EINVAL (malformed). */
int audit_pci_decode(const uint8_t *cfg, size_t len, struct audit_pci_info *out);

/* Parses a recorded dump: "#" comments, "OO: hh hh ... (16 bytes)" lines in order from 0,
 * and an optional "error NAME" line saying why the read stopped. Returns 0 or -EINVAL;
 * *len gets the bytes, *read_err the recorded error as a negative errno (0 if none). */
int audit_pci_parse_dump(const char *text, uint8_t *cfg, size_t cap, size_t *len, int *read_err);

/* Writes the dump text for len bytes of config space and the read error. */
size_t audit_pci_format_dump(const char *bdf, const uint8_t *cfg, size_t len, int read_err,
                             char *buf, size_t buflen);

/* "8.0 GT/s PCIe" -> 8.0; returns -EINVAL for "Unknown" or garbage. */
int audit_pci_parse_speed(const char *s, double *gts);

/* pcie.link, pcie.bandwidth, pcie.max_payload, pcie.max_read_req for one interface */
void audit_pci_iface(struct audit_ctx *ctx, struct audit_iface *ifc);

#endif
