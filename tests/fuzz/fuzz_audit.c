/* libFuzzer target: the text `netrig audit` and `netrig diagnose` read from the host or from a
 * recorded tree (--sysroot): sysctl values (audit_parse_*), the recorded ethtool answers
 * (netrig/ethtool/IFACE), the recorded PCI config space dump (netrig/pci/BDF) and the config
 * space itself, PCIe link speeds, /proc/cpuinfo, /proc/net/softnet_stat, kernel config text,
 * and diagnose's /proc/net/netstat, /proc/net/snmp, softnet_stat and /proc/stat parsers.
 * Every parser reads every input. What a recorded answer parses to must record and read back
 * the same (audit --record, then audit --sysroot). Nothing may crash, leak or hang. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "audit_cpu.h"
#include "nicinfo.h"
#include "audit_pci.h"
#include "audit_queue.h"
#include "hostctr.h"

#define CFG_CAP 4096 /* as audit_pci.c reads it */

static void nic(const char *text)
{
    static char out1[8192], out2[8192];
    struct nicinfo a, b;
    size_t n1, n2;

    nicinfo_parse(text, &a);
    /* A "feature" section that names none of the six features netrig judges parses as known
     * (feat_err 0) but nicinfo_format writes no feature line for it, so it reads back as
     * ENODATA: a known difference between the two, not checked here. */
    bool any = false;
    for (int f = 0; f < NICINFO_FEATURE_COUNT; f++)
        any |= a.feat[f].known;
    if (!a.feat_err && !any)
        a.feat_err = ENODATA;
    n1 = nicinfo_format(&a, "eth0", out1, sizeof(out1));
    nicinfo_parse(out1, &b);
    n2 = nicinfo_format(&b, "eth0", out2, sizeof(out2));
    if (n1 != n2 || memcmp(out1, out2, n1))
        abort(); /* a recorded answer that does not read back as it was written */
}

static void pci(const char *text, const uint8_t *raw, size_t size)
{
    static uint8_t cfg[CFG_CAP], cfg2[CFG_CAP];
    static char dump[CFG_CAP * 4];
    struct audit_pci_info info;
    size_t len, len2;
    int rerr, rerr2;
    double gts;

    if (audit_pci_parse_dump(text, cfg, sizeof(cfg), &len, &rerr) == 0) {
        size_t n = audit_pci_format_dump("0000:00:00.0", cfg, len, rerr, dump, sizeof(dump));
        if (n >= sizeof(dump) || audit_pci_parse_dump(dump, cfg2, sizeof(cfg2), &len2, &rerr2) ||
            len2 != len || rerr2 != rerr || memcmp(cfg, cfg2, len))
            abort();
        (void)audit_pci_decode(cfg, len, &info);
    }
    /* config space as libpci reads it on a live host: binary, any length */
    (void)audit_pci_decode(raw, size, &info);
    (void)audit_pci_parse_speed(text, &gts);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct hostctr_snap snap;
    char *text = malloc(size + 1);
    uint64_t u[4], d, q;
    int64_t i64;
    double mhz;

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    (void)audit_parse_u64(text, &u[0]);
    (void)audit_parse_i64(text, &i64);
    (void)audit_parse_u64s(text, u, 2);
    (void)audit_parse_u64s(text, u, 3);
    nic(text);
    pci(text, data, size);
    (void)audit_cpu_parse_cpuinfo_mhz(text, &mhz);
    (void)audit_queue_parse_softnet(text, &d, &q);
    (void)audit_queue_kconfig(text, "CONFIG_NET_SCH_FQ");

    memset(&snap, 0, sizeof(snap));
    (void)hostctr_parse_netstat(text, &snap);
    (void)hostctr_parse_softnet(text, &snap);
    (void)hostctr_parse_stat(text, &snap);
    free(text);
    return 0;
}
