/* hostsnap_take: reading a host's settings into a snapshot — files through hostfs (relative to
 * a sysroot), NIC driver settings through nicinfo (ethtool ioctls and rtnetlink, or the answers
 * recorded under the sysroot). */
#define _GNU_SOURCE
#include "hostsnap.h"

#include "cpulist.h"
#include "hostfs.h"
#include "nicinfo.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IRQS      2048
#define MAX_CPU_SUMS  8 /* distinct values listed in a per-CPU summary */
#define FILE_READ_MAX (HOSTSNAP_VAL_MAX * 2)

/* Sysctls by their dotted names (the file is /proc/sys/ with dots turned into slashes): every
 * one netrig audit reads (tests/unit/test_hostsnap.c checks), and more that shape transfers. */
static const char *const sysctls[] = {
    "kernel.osrelease",
    "net.core.rmem_max",
    "net.core.wmem_max",
    "net.core.rmem_default",
    "net.core.wmem_default",
    "net.core.optmem_max",
    "net.core.netdev_max_backlog",
    "net.core.netdev_budget",
    "net.core.netdev_budget_usecs",
    "net.core.somaxconn",
    "net.core.default_qdisc",
    "net.core.busy_poll",
    "net.core.busy_read",
    "net.core.rps_sock_flow_entries",
    "net.ipv4.ip_forward",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_mem",
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.tcp_available_congestion_control",
    "net.ipv4.tcp_window_scaling",
    "net.ipv4.tcp_timestamps",
    "net.ipv4.tcp_sack",
    "net.ipv4.tcp_mtu_probing",
    "net.ipv4.tcp_slow_start_after_idle",
    "net.ipv4.tcp_no_metrics_save",
    "net.ipv4.tcp_notsent_lowat",
    "net.ipv4.tcp_low_latency",
    "net.ipv4.tcp_ecn",
    "net.ipv4.tcp_autocorking",
    "net.ipv4.tcp_limit_output_bytes",
    "net.ipv4.tcp_adv_win_scale",
    "net.ipv4.tcp_moderate_rcvbuf",
    "net.ipv4.tcp_tw_reuse",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_max_syn_backlog",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.udp_mem",
    "net.ipv4.udp_rmem_min",
    "net.ipv4.udp_wmem_min",
    "net.ipv4.tcp_fastopen",
    "net.netfilter.nf_conntrack_max",
};

/* per-interface files under /sys/class/net/NAME/ (the key is the last path element) */
static const char *const iface_files[] = {
    "mtu",
    "tx_queue_len",
    "speed",
    "duplex",
    "operstate",
    "gro_flush_timeout",
    "napi_defer_hard_irqs",
    "device/numa_node",
};

const char *const *hostsnap_sysctls(size_t *n)
{
    *n = sizeof(sysctls) / sizeof(sysctls[0]);
    return sysctls;
}

static void read_into(const char *sysroot, struct hostsnap *hs, const char *key, const char *path)
{
    char buf[FILE_READ_MAX];

    if (hostfs_read(sysroot, path, buf, sizeof(buf)) >= 0)
        hostsnap_set(hs, key, buf);
}

static void setf(struct hostsnap *hs, const char *value, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* hostsnap_set with a formatted key */
static void setf(struct hostsnap *hs, const char *value, const char *fmt, ...)
{
    char key[HOSTSNAP_KEY_MAX];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(key, sizeof(key), fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n < sizeof(key))
        hostsnap_set(hs, key, value);
}

/* The value of "iface.NM.LEAF", or NULL. */
static const char *iface_get(const struct hostsnap *hs, const char *nm, const char *leaf)
{
    char key[HOSTSNAP_KEY_MAX];

    snprintf(key, sizeof(key), "iface.%s.%s", nm, leaf);
    return hostsnap_get(hs, key);
}

static void take_sysctls(const char *sysroot, struct hostsnap *hs)
{
    char path[128];

    for (size_t i = 0; i < sizeof(sysctls) / sizeof(sysctls[0]); i++) {
        snprintf(path, sizeof(path), "/proc/sys/%s", sysctls[i]);
        for (char *p = path + 10; *p; p++)
            if (*p == '.')
                *p = '/';
        read_into(sysroot, hs, sysctls[i], path);
    }
    /* the table's fill changes with traffic: only whether conntrack is there is a setting */
    hostsnap_set(hs, "netfilter.conntrack",
                 hostsnap_get(hs, "net.netfilter.nf_conntrack_max") ? "loaded" : "not loaded");
}

struct pid_scan {
    const char *sysroot;
    bool found;
};

static int find_irqbalance(const char *name, void *arg)
{
    struct pid_scan *sc = arg;
    char path[64], comm[32];

    if (!isdigit((unsigned char)name[0]) || strlen(name) > 10)
        return 0;
    snprintf(path, sizeof(path), "/proc/%s/comm", name);
    if (hostfs_read(sc->sysroot, path, comm, sizeof(comm)) > 0 && !strcmp(comm, "irqbalance")) {
        sc->found = true;
        return 1;
    }
    return 0;
}

static void take_irqbalance(const char *sysroot, struct hostsnap *hs)
{
    struct pid_scan sc = {sysroot, false};

    if (hostfs_list(sysroot, "/proc", find_irqbalance, &sc) >= 0)
        hostsnap_set(hs, "irqbalance", sc.found ? "running" : "not running");
}

/* ---- CPUs ---- */

/* "model name : Intel(R) ..." from the first processor in /proc/cpuinfo, and the mean of its
 * "cpu MHz" lines (the current clock when cpufreq has no scaling_cur_freq). */
static void take_cpuinfo(const char *sysroot, struct hostsnap *hs, bool have_freq)
{
    char *buf = malloc(1 << 20), *line, *colon;
    double sum = 0;
    int n = 0;

    if (!buf || hostfs_read(sysroot, "/proc/cpuinfo", buf, 1 << 20) < 0) {
        free(buf);
        return;
    }
    for (line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        colon = strchr(line, ':');
        if (!colon || colon > strchrnul(line, '\n'))
            continue;
        if (!strncmp(line, "model name", 10) && !hostsnap_get(hs, "cpu.model")) {
            char model[256];
            size_t len = (size_t)(strchrnul(colon, '\n') - colon - 1);
            snprintf(model, sizeof(model), "%.*s", (int)(len < 255 ? len : 255), colon + 1);
            hostsnap_set(hs, "cpu.model", model);
        } else if (!strncmp(line, "cpu MHz", 7)) {
            sum += strtod(colon + 1, NULL);
            n++;
        }
    }
    if (!have_freq && n > 0) {
        char mhz[32];
        snprintf(mhz, sizeof(mhz), "%.0f", sum / n);
        hostsnap_set(hs, "cpu.freq_mhz", mhz);
    }
    free(buf);
}

struct cpu_sum {
    char value[MAX_CPU_SUMS][64];
    struct cpulist cpus[MAX_CPU_SUMS];
    int n;
    bool more; /* more distinct values than listed */
};

static void sum_add(struct cpu_sum *s, int cpu, const char *v)
{
    int i;

    for (i = 0; i < s->n && strcmp(s->value[i], v); i++)
        ;
    if (i == s->n) {
        if (s->n == MAX_CPU_SUMS) {
            s->more = true;
            return;
        }
        snprintf(s->value[s->n], sizeof(s->value[0]), "%s", v);
        s->cpus[s->n++].n = 0;
    }
    if (s->cpus[i].n < CPULIST_MAX)
        s->cpus[i].cpu[s->cpus[i].n++] = cpu;
}

/* One per-CPU cpufreq file summed up: "performance", or "performance (0-3), powersave (4-7)"
 * when CPUs differ or only some have it. */
static void take_per_cpu(const char *sysroot, struct hostsnap *hs, const struct cpulist *online,
                         const char *leaf, const char *key, struct cpu_sum *s)
{
    char path[128], v[64], out[HOSTSNAP_VAL_MAX], list[256];
    size_t o = 0;

    memset(s, 0, sizeof(*s));
    for (int i = 0; i < online->n; i++) {
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpufreq/%s", online->cpu[i],
                 leaf);
        if (hostfs_read(sysroot, path, v, sizeof(v)) > 0)
            sum_add(s, online->cpu[i], v);
    }
    if (!s->n)
        return;
    if (s->n == 1 && !s->more && s->cpus[0].n == online->n) {
        hostsnap_set(hs, key, s->value[0]);
        return;
    }
    for (int i = 0; i < s->n && o < sizeof(out); i++) {
        cpulist_format(&s->cpus[i], list, sizeof(list));
        o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%s (%s)", i ? ", " : "", s->value[i],
                              list);
    }
    if (s->more && o < sizeof(out))
        snprintf(out + o, sizeof(out) - o, ", ...");
    hostsnap_set(hs, key, out);
}

/* The mean current clock of the online CPUs in MHz (an observation, not a setting). */
static void take_cur_freq(const char *sysroot, struct hostsnap *hs, const struct cpulist *online)
{
    char path[128], v[64];
    double sum = 0;
    int n = 0;

    for (int i = 0; i < online->n; i++) {
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq",
                 online->cpu[i]);
        if (hostfs_read(sysroot, path, v, sizeof(v)) > 0) {
            sum += strtod(v, NULL);
            n++;
        }
    }
    if (n) {
        snprintf(v, sizeof(v), "%.0f", sum / n / 1000);
        hostsnap_set(hs, "cpu.freq_mhz", v);
    }
}

/* cpu0's idle states: "POLL C1 C1E C6", a disabled one as "C6(disabled)". */
static void take_cpuidle(const char *sysroot, struct hostsnap *hs)
{
    char path[96], name[32], dis[8], out[512] = "";
    size_t o = 0;

    for (int i = 0; i < 16; i++) {
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cpuidle/state%d/name", i);
        if (hostfs_read(sysroot, path, name, sizeof(name)) <= 0)
            break;
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cpuidle/state%d/disable", i);
        if (hostfs_read(sysroot, path, dis, sizeof(dis)) <= 0)
            dis[0] = '0';
        if (o < sizeof(out))
            o += (size_t)snprintf(out + o, sizeof(out) - o, "%s%s%s", o ? " " : "", name,
                                  dis[0] == '1' ? "(disabled)" : "");
    }
    if (out[0])
        hostsnap_set(hs, "cpu.idle_states", out);
}

static void take_cpu(const char *sysroot, struct hostsnap *hs)
{
    static const char *const files[][2] = {
        {"scaling_driver", "cpu.scaling_driver"},    {"scaling_governor", "cpu.governor"},
        {"scaling_min_freq", "cpu.scaling_min_khz"}, {"scaling_max_freq", "cpu.scaling_max_khz"},
        {"cpuinfo_max_freq", "cpu.max_khz"},
    };
    struct cpulist *online = malloc(sizeof(*online));
    struct cpu_sum *s = malloc(sizeof(*s));
    char buf[4096];

    read_into(sysroot, hs, "cpu.smt_active", "/sys/devices/system/cpu/smt/active");
    take_cpuidle(sysroot, hs);
    if (online && s &&
        hostfs_read(sysroot, "/sys/devices/system/cpu/online", buf, sizeof(buf)) > 0 &&
        !cpulist_parse(buf, online)) {
        hostsnap_set(hs, "cpu.online", buf);
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
            take_per_cpu(sysroot, hs, online, files[i][0], files[i][1], s);
        take_cur_freq(sysroot, hs, online);
    }
    take_cpuinfo(sysroot, hs, hostsnap_get(hs, "cpu.freq_mhz") != NULL);
    free(online);
    free(s);
}

/* ---- interfaces ---- */

struct name_list {
    char (*names)[64];
    uint32_t n, max;
    bool more;
};

static int add_name(const char *name, void *arg)
{
    struct name_list *l = arg;
    size_t len = strlen(name);

    if (len == 0 || len >= sizeof(l->names[0]))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (name[i] < '!' || name[i] > '~')
            return 0; /* a name that cannot be a key */
    if (l->n == l->max) {
        l->more = true;
        return 0;
    }
    snprintf(l->names[l->n++], sizeof(l->names[0]), "%s", name);
    return 0;
}

static int cmp_name(const void *a, const void *b) { return hostsnap_keycmp(a, b); }

/* "rx-12" -> 12 for prefix "rx-"; -1 otherwise */
static int queue_index(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    char *end;
    long v;

    if (strncmp(name, prefix, n) || !isdigit((unsigned char)name[n]))
        return -1;
    v = strtol(name + n, &end, 10);
    return *end || v < 0 || v >= 1000000 ? -1 : (int)v;
}

struct queue_walk {
    int rx[HOSTSNAP_MAX_QUEUES], tx[HOSTSNAP_MAX_QUEUES];
    uint32_t nrx, ntx, all_rx, all_tx;
};

static int add_queue(const char *name, void *arg)
{
    struct queue_walk *q = arg;
    int rx = queue_index(name, "rx-"), tx = queue_index(name, "tx-");

    if (rx >= 0 && q->all_rx++ < HOSTSNAP_MAX_QUEUES)
        q->rx[q->nrx++] = rx;
    if (tx >= 0 && q->all_tx++ < HOSTSNAP_MAX_QUEUES)
        q->tx[q->ntx++] = tx;
    return 0;
}

/* Queue counts, and each queue's RPS and XPS settings. */
static void take_queues(const char *sysroot, struct hostsnap *hs, const char *nm)
{
    struct queue_walk *q = calloc(1, sizeof(*q));
    char path[256], num[32], buf[FILE_READ_MAX];

    snprintf(path, sizeof(path), "/sys/class/net/%s/queues", nm);
    if (!q || hostfs_list(sysroot, path, add_queue, q) < 0) {
        free(q);
        return;
    }
    snprintf(num, sizeof(num), "%u", q->all_rx);
    setf(hs, num, "iface.%s.rx_queues", nm);
    snprintf(num, sizeof(num), "%u", q->all_tx);
    setf(hs, num, "iface.%s.tx_queues", nm);
    for (uint32_t i = 0; i < q->nrx; i++) {
        snprintf(path, sizeof(path), "/sys/class/net/%s/queues/rx-%d/rps_cpus", nm, q->rx[i]);
        if (hostfs_read(sysroot, path, buf, sizeof(buf)) >= 0)
            setf(hs, buf, "iface.%s.rx-%d.rps_cpus", nm, q->rx[i]);
        snprintf(path, sizeof(path), "/sys/class/net/%s/queues/rx-%d/rps_flow_cnt", nm, q->rx[i]);
        if (hostfs_read(sysroot, path, buf, sizeof(buf)) >= 0)
            setf(hs, buf, "iface.%s.rx-%d.rps_flow_cnt", nm, q->rx[i]);
    }
    for (uint32_t i = 0; i < q->ntx; i++) {
        snprintf(path, sizeof(path), "/sys/class/net/%s/queues/tx-%d/xps_cpus", nm, q->tx[i]);
        if (hostfs_read(sysroot, path, buf, sizeof(buf)) >= 0)
            setf(hs, buf, "iface.%s.tx-%d.xps_cpus", nm, q->tx[i]);
    }
    free(q);
}

static const char *on_off(uint32_t v) { return v ? "on" : "off"; }

static void set_num(struct hostsnap *hs, const char *nm, const char *what, uint32_t v)
{
    char num[16];

    snprintf(num, sizeof(num), "%u", v);
    setf(hs, num, "iface.%s.%s", nm, what);
}

static const char *const offload_keys[NICINFO_FEATURE_COUNT] = {
    [NICINFO_TSO] = "tso",
    [NICINFO_GSO] = "gso",
    [NICINFO_GRO] = "gro",
    [NICINFO_LRO] = "lro",
    [NICINFO_RXHASH] = "rxhash",
    [NICINFO_RXCSUM] = "rx-checksum",
    [NICINFO_TXCSUM] = "tx-checksum",
};

/* What the driver says: offloads, rings, coalescing, channels, pause, the root qdisc. */
static void take_nic(const char *sysroot, struct hostsnap *hs, const char *nm)
{
    struct nicinfo *n = malloc(sizeof(*n));

    if (!n)
        return;
    nicinfo_query(sysroot, nm, n);
    if (!n->drv_err && n->driver[0])
        setf(hs, n->driver, "iface.%s.driver", nm);
    if (!n->drv_err && n->firmware[0])
        setf(hs, n->firmware, "iface.%s.firmware", nm);
    for (int f = 0; !n->feat_err && f < NICINFO_FEATURE_COUNT; f++)
        if (n->feat[f].known)
            setf(hs,
                 n->feat[f].fixed ? (n->feat[f].active ? "on [fixed]" : "off [fixed]")
                                  : on_off(n->feat[f].active),
                 "iface.%s.offload.%s", nm, offload_keys[f]);
    if (!n->ring_err) {
        set_num(hs, nm, "ring.rx", n->rx);
        set_num(hs, nm, "ring.tx", n->tx);
    }
    if (!n->coal_err) {
        setf(hs, on_off(n->adaptive_rx), "iface.%s.coalesce.adaptive-rx", nm);
        setf(hs, on_off(n->adaptive_tx), "iface.%s.coalesce.adaptive-tx", nm);
        set_num(hs, nm, "coalesce.rx-usecs", n->rx_usecs);
        set_num(hs, nm, "coalesce.rx-frames", n->rx_frames);
        set_num(hs, nm, "coalesce.tx-usecs", n->tx_usecs);
        set_num(hs, nm, "coalesce.tx-frames", n->tx_frames);
    }
    if (!n->chan_err) {
        set_num(hs, nm, "channels.rx", n->ch_rx);
        set_num(hs, nm, "channels.tx", n->ch_tx);
        set_num(hs, nm, "channels.combined", n->ch_combined);
    }
    if (!n->pause_err) {
        setf(hs, on_off(n->pause_autoneg), "iface.%s.pause.autoneg", nm);
        setf(hs, on_off(n->pause_rx), "iface.%s.pause.rx", nm);
        setf(hs, on_off(n->pause_tx), "iface.%s.pause.tx", nm);
    }
    if (!n->qdisc_err && n->qdisc_root[0])
        setf(hs, n->qdisc_root, "iface.%s.qdisc", nm);
    if (!n->qdisc_err && n->qdisc_leaf[0])
        setf(hs, n->qdisc_leaf, "iface.%s.qdisc_leaf", nm);
    free(n);
}

/* PCI_SLOT_NAME from the device's uevent ("0000:5e:00.0"), checked to be one. */
static bool pci_slot(const char *sysroot, const char *nm, char *out, size_t len)
{
    char path[256], buf[2048], *p;
    size_t n;

    snprintf(path, sizeof(path), "/sys/class/net/%s/device/uevent", nm);
    if (hostfs_read(sysroot, path, buf, sizeof(buf)) < 0)
        return false;
    for (p = buf; p && strncmp(p, "PCI_SLOT_NAME=", 14); p = strchr(p, '\n'), p = p ? p + 1 : p)
        ;
    if (!p)
        return false;
    p += 14;
    n = strcspn(p, "\n");
    if (n == 0 || n >= len || strspn(p, "0123456789abcdefABCDEF:.") < n)
        return false;
    snprintf(out, len, "%.*s", (int)n, p);
    return true;
}

struct irq_set {
    int irq[MAX_IRQS];
    int n;
};

static int add_irq(const char *name, void *arg)
{
    struct irq_set *s = arg;
    char *end;
    long v = strtol(name, &end, 10);

    if (isdigit((unsigned char)name[0]) && !*end && v >= 0 && v < 1000000 && s->n < MAX_IRQS)
        s->irq[s->n++] = (int)v;
    return 0;
}

static int cmp_int(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static const char *const irq_files[] = {
    "affinity_hint",     "effective_affinity", "effective_affinity_list", "node", "smp_affinity",
    "smp_affinity_list", "spurious",
};

struct irq_name {
    char *out;
    size_t len;
    int found;
};

/* An entry of /proc/irq/N that is not one of its files: the name its driver gave it. */
static int note_action(const char *name, void *arg)
{
    struct irq_name *in = arg;
    size_t n = strlen(name);

    for (size_t i = 0; i < sizeof(irq_files) / sizeof(irq_files[0]); i++)
        if (!strcmp(name, irq_files[i]))
            return 0;
    for (size_t i = 0; i < n; i++)
        if (name[i] < '!' || name[i] > '~')
            return 0;
    if (n && n < in->len) {
        snprintf(in->out, in->len, "%s", name);
        in->found++;
    }
    return 0;
}

/* The IRQ's action name ("mlx5_comp3@pci:0000:5e:00.0", "eth0-TxRx-3"): it names the queue
 * and stays the same across reboots, where the IRQ's number may not. False when it has none
 * or several (a shared IRQ). */
static bool irq_action(const char *sysroot, int irq, char *out, size_t len)
{
    struct irq_name in = {out, len, 0};
    char path[48];

    snprintf(path, sizeof(path), "/proc/irq/%d", irq);
    return hostfs_list(sysroot, path, note_action, &in) == 0 && in.found == 1;
}

/* The device behind the interface: its PCIe link and where each of its IRQs may run
 * (/proc/irq/N/smp_affinity_list, the setting; the kernel may narrow it further). */
static void take_device(const char *sysroot, struct hostsnap *hs, const char *nm)
{
    struct irq_set *s = malloc(sizeof(*s));
    char pci[32], path[160], speed[64], width[16], v[FILE_READ_MAX];

    if (!s || !pci_slot(sysroot, nm, pci, sizeof(pci))) {
        free(s);
        return;
    }
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", pci);
    if (!iface_get(hs, nm, "numa_node") && hostfs_read(sysroot, path, v, sizeof(v)) > 0)
        setf(hs, v, "iface.%s.numa_node", nm);
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/current_link_speed", pci);
    if (hostfs_read(sysroot, path, speed, sizeof(speed)) > 0) {
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/current_link_width", pci);
        if (hostfs_read(sysroot, path, width, sizeof(width)) > 0) {
            snprintf(v, sizeof(v), "%s x%s", speed, width);
            setf(hs, v, "iface.%s.pcie_link", nm);
        }
    }
    s->n = 0;
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/msi_irqs", pci);
    if (hostfs_list(sysroot, path, add_irq, s) < 0 || !s->n) {
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/irq", pci); /* legacy INTx */
        if (hostfs_read(sysroot, path, v, sizeof(v)) > 0)
            add_irq(v, s);
    }
    qsort(s->irq, (size_t)s->n, sizeof(s->irq[0]), cmp_int);
    for (int i = 0; i < s->n; i++) {
        char name[64];
        snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", s->irq[i]);
        if (hostfs_read(sysroot, path, v, sizeof(v)) <= 0)
            continue;
        if (irq_action(sysroot, s->irq[i], name, sizeof(name)))
            setf(hs, v, "iface.%s.irq.%s", nm, name);
        else
            setf(hs, v, "iface.%s.irq.%d", nm, s->irq[i]);
    }
    free(s);
}

static void take_iface(const char *sysroot, struct hostsnap *hs, const char *nm)
{
    char path[256];

    for (size_t f = 0; f < sizeof(iface_files) / sizeof(iface_files[0]); f++) {
        const char *leaf = strrchr(iface_files[f], '/');
        char buf[FILE_READ_MAX];
        snprintf(path, sizeof(path), "/sys/class/net/%s/%s", nm, iface_files[f]);
        if (hostfs_read(sysroot, path, buf, sizeof(buf)) >= 0)
            setf(hs, buf, "iface.%s.%s", nm, leaf ? leaf + 1 : iface_files[f]);
    }
    take_queues(sysroot, hs, nm);
    take_nic(sysroot, hs, nm);
    take_device(sysroot, hs, nm);
}

static void take_ifaces(const char *sysroot, struct hostsnap *hs)
{
    struct name_list l = {.max = HOSTSNAP_MAX_IFACES};
    char num[32];

    l.names = calloc(HOSTSNAP_MAX_IFACES, sizeof(*l.names));
    if (!l.names || hostfs_list(sysroot, "/sys/class/net", add_name, &l) < 0) {
        free(l.names);
        return;
    }
    qsort(l.names, l.n, sizeof(l.names[0]), cmp_name);
    for (uint32_t i = 0; i < l.n; i++)
        take_iface(sysroot, hs, l.names[i]);
    if (l.more) {
        snprintf(num, sizeof(num), "the first %u by name", l.n);
        hostsnap_set(hs, "host.interfaces_recorded", num);
    }
    free(l.names);
}

void hostsnap_take(const char *sysroot, struct hostsnap *hs)
{
    char v[8];

    hostsnap_clear(hs);
    snprintf(v, sizeof(v), "%d", HOSTSNAP_VERSION);
    hostsnap_set(hs, "host.snapshot", v);
    read_into(sysroot, hs, "host.name", "/proc/sys/kernel/hostname");
    read_into(sysroot, hs, "kernel.cmdline", "/proc/cmdline");
    take_sysctls(sysroot, hs);
    take_irqbalance(sysroot, hs);
    take_cpu(sysroot, hs);
    take_ifaces(sysroot, hs);
}
