/* audit_pci: PCIe link and config-space checks. libpci reads config space on the live host
 * (the first 64 bytes for anyone, the rest for root); a recorded text dump replaces it under
 * --sysroot. */
#include "audit_pci.h"

#include "audit_iface.h"
#include "hostfs.h"
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pci/pci.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CFG_MAX         4096
#define CFG_READ        256 /* the standard header and capability list */
#define VENDOR_MELLANOX 0x15b3

static uint16_t rd16(const uint8_t *c, int off) { return (uint16_t)(c[off] | c[off + 1] << 8); }

static uint32_t rd32(const uint8_t *c, int off)
{
    return (uint32_t)rd16(c, off) | (uint32_t)rd16(c, off + 2) << 16;
}

int audit_pci_decode(const uint8_t *cfg, size_t len, struct audit_pci_info *out)
{
    int ptr, hops = 0;

    memset(out, 0, sizeof(*out));
    if (len < 64)
        return -EINVAL;
    out->vendor = rd16(cfg, 0);
    out->device = rd16(cfg, 2);
    if (out->vendor == 0xffff || out->vendor == 0)
        return -EINVAL;
    if (!(rd16(cfg, 6) & 0x10)) /* Status: capability list */
        return -ENOENT;
    for (ptr = cfg[0x34] & 0xfc; ptr; ptr = cfg[ptr + 1] & 0xfc) {
        if (ptr < 0x40 || ptr > 0xfc || ++hops > 48)
            return -EINVAL;
        if ((size_t)ptr + 12 > len)
            return len <= 64 ? -EACCES : -EINVAL;
        if (cfg[ptr] != 0x10)
            continue;
        out->cap = ptr;
        out->devcap = rd32(cfg, ptr + 4);
        out->devctl = rd16(cfg, ptr + 8);
        out->mps_max = 128 << (out->devcap & 7);
        out->mps = 128 << ((out->devctl >> 5) & 7);
        out->mrrs = 128 << ((out->devctl >> 12) & 7);
        return 0;
    }
    return -ENOENT;
}

static int hexval(int c) { return isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : -1; }

/* "00: b3 15 ..." -> 16 bytes at cfg + off; the offset must be off. */
static int parse_dump_line(const char *line, size_t off, uint8_t *cfg)
{
    char *end;
    unsigned long o = strtoul(line, &end, 16);

    if (!isxdigit((unsigned char)line[0]) || *end != ':' || o != off)
        return -EINVAL;
    for (int i = 0; i < 16; i++) {
        const char *b = end + 1 + 3 * i;
        int hi, lo;
        if (b[0] != ' ' || (hi = hexval((unsigned char)b[1])) < 0 ||
            (lo = hexval((unsigned char)b[2])) < 0)
            return -EINVAL;
        cfg[off + (size_t)i] = (uint8_t)(hi << 4 | lo);
    }
    return end[1 + 48] == '\0' ? 0 : -EINVAL;
}

int audit_pci_parse_dump(const char *text, uint8_t *cfg, size_t cap, size_t *len, int *read_err)
{
    char line[128];

    *len = 0;
    *read_err = 0;
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        if (n >= sizeof(line))
            return -EINVAL;
        memcpy(line, p, n);
        line[n] = '\0';
        p += n + (p[n] == '\n');
        if (!line[0] || line[0] == '#')
            continue;
        if (!strncmp(line, "error ", 6)) {
            const char *e = line + 6;
            *read_err = !strcmp(e, "EACCES")  ? -EACCES
                        : !strcmp(e, "EPERM") ? -EPERM
                        : !strcmp(e, "EIO")   ? -EIO
                                              : 0;
            if (!*read_err)
                return -EINVAL;
            continue;
        }
        if (*len + 16 > cap || parse_dump_line(line, *len, cfg))
            return -EINVAL;
        *len += 16;
    }
    return *len >= 64 ? 0 : -EINVAL;
}

size_t audit_pci_format_dump(const char *bdf, const uint8_t *cfg, size_t len, int read_err,
                             char *buf, size_t buflen)
{
    size_t used = (size_t)snprintf(buf, buflen,
                                   "# netrig audit: PCI config space of %s "
                                   "(lspci -xxx layout)\n",
                                   bdf);

    for (size_t off = 0; off + 16 <= len && used < buflen; off += 16) {
        used += (size_t)snprintf(buf + used, buflen - used, "%02zx:", off);
        for (size_t i = 0; i < 16 && used < buflen; i++)
            used += (size_t)snprintf(buf + used, buflen - used, " %02x", cfg[off + i]);
        if (used < buflen)
            used += (size_t)snprintf(buf + used, buflen - used, "\n");
    }
    if (read_err && used < buflen)
        used += (size_t)snprintf(buf + used, buflen - used, "error %s\n",
                                 read_err == -EACCES  ? "EACCES"
                                 : read_err == -EPERM ? "EPERM"
                                                      : "EIO");
    return used < buflen ? used : buflen - 1;
}

int audit_pci_parse_speed(const char *s, double *gts)
{
    char *end;
    double v;

    if (!isdigit((unsigned char)s[0]))
        return -EINVAL;
    v = strtod(s, &end);
    if (strncmp(end, " GT/s", 5) || !(v > 0 && v < 1000))
        return -EINVAL;
    *gts = v;
    return 0;
}

/* --- reading config space ------------------------------------------------------------------ */

/* libpci's fatal-error hook must not return; it is only reachable through misuse of the
 * library (the sysfs method never calls it for reads), so report and stop. */
static void PCI_NONRET pci_fatal(char *msg, ...)
{
    va_list ap;

    fputs("netrig: libpci: ", stderr);
    va_start(ap, msg);
    vfprintf(stderr, msg, ap);
    va_end(ap);
    fputs(": the audit cannot continue\n", stderr);
    exit(2);
}

static void pci_quiet(char *msg, ...) { (void)msg; }

/* Live: libpci over /sys/bus/pci. Returns the bytes read (>= 64) or a negative errno;
 * *more_err says why the read stopped at 64 bytes. */
static long read_config_live(const char *bdf, uint8_t *cfg, int *more_err)
{
    unsigned dom, bus, dev, fn;
    struct pci_access *pa;
    struct pci_dev *d;
    long got = -EIO;

    *more_err = 0;
    if (sscanf(bdf, "%x:%x:%x.%u", &dom, &bus, &dev, &fn) != 4)
        return -EINVAL;
    if (access("/sys/bus/pci", R_OK))
        return -errno;
    pa = pci_alloc();
    pa->method = PCI_ACCESS_SYS_BUS_PCI;
    pa->error = pci_fatal;
    pa->warning = pci_quiet;
    pa->debug = pci_quiet;
    pci_init(pa);
    d = pci_get_dev(pa, (int)dom, (int)bus, (int)dev, (int)fn);
    if (d && pci_read_block(d, 0, cfg, 64)) {
        got = 64;
        if (pci_read_block(d, 64, cfg + 64, CFG_READ - 64))
            got = CFG_READ;
        else
            *more_err = geteuid() ? -EACCES : -EIO;
    }
    if (d)
        pci_free_dev(d);
    pci_cleanup(pa);
    return got;
}

/* Config space of bdf from libpci or the recorded dump; records it. Returns the length or a
 * negative errno (-EBADMSG: the recorded dump is malformed). */
static long read_config(struct audit_ctx *ctx, const char *bdf, uint8_t *cfg, int *more_err)
{
    char path[96], *text = malloc(CFG_MAX * 4);
    size_t len = 0;
    long rc;

    if (!text)
        return -ENOMEM;
    snprintf(path, sizeof(path), "/netrig/pci/%s", bdf);
    if (audit_is_live(ctx)) {
        rc = read_config_live(bdf, cfg, more_err);
    } else {
        rc = hostfs_read(audit_sysroot(ctx), path, text, CFG_MAX * 4);
        if (rc >= 0)
            rc = audit_pci_parse_dump(text, cfg, CFG_MAX, &len, more_err) ? -EBADMSG : (long)len;
    }
    if (rc >= 0 && audit_recording(ctx)) {
        size_t n = audit_pci_format_dump(bdf, cfg, (size_t)rc, *more_err, text, CFG_MAX * 4);
        audit_record(ctx, path, text, n);
    }
    free(text);
    return rc;
}

/* --- checks ------------------------------------------------------------------------------- */

struct pcie_link {
    double cur_gts, max_gts;
    uint64_t cur_w, max_w;
};

/* Raw Gbit/s per lane after line coding, by transfer rate. */
static double lane_gbps(double gts)
{
    static const struct {
        double gts, gbps;
    } gens[] = {{2.5, 2.0}, {5.0, 4.0}, {8.0, 7.877}, {16.0, 15.754}, {32.0, 31.508}, {64.0, 60.5}};

    for (size_t i = 0; i < sizeof(gens) / sizeof(gens[0]); i++)
        if (fabs(gts - gens[i].gts) < 0.05)
            return gens[i].gbps;
    return gts * 0.8; /* unknown generation: assume 8b/10b, the worst coding */
}

static void skip_all(struct audit_ctx *ctx, const struct audit_iface *ifc, const char *reason,
                     const char *const *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct audit_finding *f = audit_add(ctx, ids[i], ifc->name, AUDIT_G_PCIE, AUDIT_SKIPPED);
        AUDIT_SET(f->reason, "%s", reason);
    }
}

/* Reads the four link attributes. 0, or -1 after adding skipped/unreadable findings. */
static int read_link(struct audit_ctx *ctx, const struct audit_iface *ifc, struct pcie_link *l)
{
    static const char *const ids[] = {"pcie.link", "pcie.bandwidth"};
    static const char *const attrs[] = {"current_link_speed", "max_link_speed",
                                        "current_link_width", "max_link_width"};
    char path[160], buf[4][64], why[256];

    for (int i = 0; i < 4; i++) {
        long rc;
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/%s", ifc->pci, attrs[i]);
        rc = audit_read(ctx, path, buf[i], sizeof(buf[i]));
        if (rc < 0) {
            snprintf(why, sizeof(why),
                     "%s has no %s in sysfs (%s): conventional PCI or PCI-X, "
                     "a virtual function, or a virtual machine",
                     ifc->pci, attrs[i], rc == -ENOENT ? "absent" : strerror((int)-rc));
            skip_all(ctx, ifc, why, ids, 2);
            return -1;
        }
    }
    if (audit_pci_parse_speed(buf[0], &l->cur_gts) || audit_pci_parse_speed(buf[1], &l->max_gts) ||
        audit_parse_u64(buf[2], &l->cur_w) || audit_parse_u64(buf[3], &l->max_w) || l->cur_w == 0 ||
        l->cur_w > 32 || l->max_w == 0 || l->max_w > 32) {
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/*_link_{speed,width}", ifc->pci);
        snprintf(why, sizeof(why), "%s | %s | %s | %s", buf[0], buf[1], buf[2], buf[3]);
        for (int i = 0; i < 2; i++)
            audit_unreadable(ctx, ids[i], ifc->name, AUDIT_G_PCIE, path, why,
                             "'8.0 GT/s PCIe' speeds and widths of 1 to 32 lanes");
        return -1;
    }
    return 0;
}

static void check_link(struct audit_ctx *ctx, const struct audit_iface *ifc,
                       const struct pcie_link *l)
{
    bool below = l->cur_gts + 0.05 < l->max_gts || l->cur_w < l->max_w;
    struct audit_finding *f =
        audit_add(ctx, "pcie.link", ifc->name, AUDIT_G_PCIE, below ? AUDIT_BAD : AUDIT_OK);

    AUDIT_SET(f->current, "%.1f GT/s x%llu", l->cur_gts, (unsigned long long)l->cur_w);
    AUDIT_SET(f->recommended, "%.1f GT/s x%llu", l->max_gts, (unsigned long long)l->max_w);
    if (!below) {
        AUDIT_SET(f->reason, "%s trained at its maximum", ifc->pci);
        return;
    }
    AUDIT_SET(f->reason,
              "%s trained at %s but can do %s: wrong slot, riser or BIOS link "
              "setting",
              ifc->pci, f->current, f->recommended);
    AUDIT_SET(f->fix, "move the card to a slot wired for %s, or fix the slot's BIOS setting",
              f->recommended);
    f->persistent = true;
}

static void check_bandwidth(struct audit_ctx *ctx, const struct audit_iface *ifc,
                            const struct pcie_link *l)
{
    double raw = lane_gbps(l->cur_gts) * (double)l->cur_w * 1e9;
    double port =
        ifc->speed_mbps > 0 ? (double)ifc->speed_mbps * 1e6 : audit_get_target(ctx)->rate_bps;
    char rraw[32], rport[32], rneed[32];
    enum audit_status st = raw < port ? AUDIT_BAD : raw < 1.25 * port ? AUDIT_WARN : AUDIT_OK;
    struct audit_finding *f = audit_add(ctx, "pcie.bandwidth", ifc->name, AUDIT_G_PCIE, st);

    units_format_rate(raw, rraw, sizeof(rraw));
    units_format_rate(port, rport, sizeof(rport));
    units_format_rate(1.25 * port, rneed, sizeof(rneed));
    AUDIT_SET(f->current, "%s raw", rraw);
    AUDIT_SET(f->recommended, st == AUDIT_OK ? "%s raw" : ">= %s raw",
              st == AUDIT_OK ? rraw : rneed);
    AUDIT_SET(f->reason,
              "%.1f GT/s x%llu carries %s raw, 10-20%% less after TLP overhead, for "
              "a %s %s; needs >= 1.25 x port = %s",
              l->cur_gts, (unsigned long long)l->cur_w, rraw, rport,
              ifc->speed_mbps > 0 ? "port" : "target", rneed);
    if (st == AUDIT_OK)
        return;
    AUDIT_SET(f->fix, "use a slot with more lanes or a newer PCIe generation (100G needs Gen3 "
                      "x16 or Gen4 x8, 200G Gen4 x16, 400G Gen5 x16)");
    f->persistent = true;
}

static void check_config(struct audit_ctx *ctx, const struct audit_iface *ifc)
{
    static const char *const ids[] = {"pcie.max_payload", "pcie.max_read_req"};
    uint8_t *cfg = calloc(1, CFG_MAX);
    struct audit_pci_info pi;
    char why[256], path[96];
    int more_err = 0, rc;
    long len;
    bool tp = audit_get_profile(ctx) == AUDIT_PROFILE_THROUGHPUT;
    struct audit_finding *f;

    if (!cfg)
        return;
    len = read_config(ctx, ifc->pci, cfg, &more_err);
    rc = len < 0 ? (int)len : audit_pci_decode(cfg, (size_t)len, &pi);
    snprintf(path, sizeof(path), "%s/netrig/pci/%s", audit_is_live(ctx) ? "" : "<sysroot>",
             ifc->pci);
    if (rc == -EBADMSG || rc == -EINVAL) {
        for (int i = 0; i < 2; i++)
            audit_unreadable(ctx, ids[i], ifc->name, AUDIT_G_PCIE,
                             audit_is_live(ctx) ? "config space" : path, "(malformed)",
                             "a standard PCI header and capability list");
        free(cfg);
        return;
    }
    if (rc) {
        if (rc == -ENOENT && len >= 0)
            snprintf(why, sizeof(why),
                     "%s has no PCI Express capability (conventional PCI or "
                     "PCI-X): MaxPayload/MaxReadReq do not apply",
                     ifc->pci);
        else if (rc == -EACCES || more_err == -EACCES)
            snprintf(why, sizeof(why),
                     "reading %s's config space past 64 bytes needs root: "
                     "run netrig audit as root",
                     ifc->pci);
        else
            snprintf(why, sizeof(why), "cannot read %s's config space: %s", ifc->pci,
                     len == -ENOENT && !audit_is_live(ctx) ? "not in the recorded answers"
                                                           : strerror(-rc));
        skip_all(ctx, ifc, why, ids, 2);
        free(cfg);
        return;
    }
    f = audit_add(ctx, ids[0], ifc->name, AUDIT_G_PCIE,
                  pi.mps >= pi.mps_max ? AUDIT_OK : AUDIT_INFO);
    AUDIT_SET(f->current, "%d", pi.mps);
    AUDIT_SET(f->recommended, "%d", pi.mps);
    AUDIT_SET(f->reason,
              "MaxPayload %d bytes (the device supports %d): the platform sets the "
              "largest size every device on the path supports; pci=pcie_bus_perf "
              "can raise it",
              pi.mps, pi.mps_max);
    if (pi.vendor == VENDOR_MELLANOX)
        f = audit_add(ctx, ids[1], ifc->name, AUDIT_G_PCIE,
                      pi.mrrs >= 4096 ? AUDIT_OK
                      : tp            ? AUDIT_WARN
                                      : AUDIT_INFO);
    else
        f = audit_add(ctx, ids[1], ifc->name, AUDIT_G_PCIE, AUDIT_INFO);
    AUDIT_SET(f->current, "%d", pi.mrrs);
    AUDIT_SET(f->recommended, "%d", pi.vendor == VENDOR_MELLANOX ? 4096 : pi.mrrs);
    if (pi.vendor != VENDOR_MELLANOX) {
        AUDIT_SET(f->reason,
                  "MaxReadReq %d bytes; the right value is vendor-specific (Mellanox "
                  "wants 4096 for its adapters): see the vendor's tuning guide",
                  pi.mrrs);
    } else if (pi.mrrs >= 4096) {
        AUDIT_SET(f->reason, "MaxReadReq 4096 bytes, as Mellanox recommends");
    } else {
        AUDIT_SET(f->reason,
                  "MaxReadReq %d bytes: the NIC fetches send data from memory in "
                  "small reads; Mellanox recommends 4096 (seed 000: 512 -> 4096)",
                  pi.mrrs);
        AUDIT_SET(f->fix, "setpci -s %s %x.w=%04x", ifc->pci, pi.cap + 8,
                  (unsigned)((pi.devctl & ~0x7000u) | 0x5000u));
        AUDIT_SET(f->persist, "setpci is lost on reboot and driver reload: run it from a "
                              "oneshot unit at boot (or boot with pci=pcie_bus_perf)");
    }
    free(cfg);
}

void audit_pci_iface(struct audit_ctx *ctx, struct audit_iface *ifc)
{
    static const char *const all[] = {"pcie.link", "pcie.bandwidth", "pcie.max_payload",
                                      "pcie.max_read_req"};
    struct pcie_link l;
    char why[160];

    if (!ifc->pci[0]) {
        snprintf(why, sizeof(why), "%s has no PCI device behind it", ifc->name);
        skip_all(ctx, ifc, why, all, 4);
        return;
    }
    if (read_link(ctx, ifc, &l) == 0) {
        check_link(ctx, ifc, &l);
        check_bandwidth(ctx, ifc, &l);
    }
    check_config(ctx, ifc);
}
