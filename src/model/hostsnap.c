/* hostsnap: host settings that shape network performance, read through hostfs. */
#define _GNU_SOURCE
#include "hostsnap.h"

#include "hostfs.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* sysctls by their dotted names; the file is /proc/sys/ with dots turned into slashes */
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
};

/* per-interface files under /sys/class/net/NAME/ */
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

void hostsnap_clear(struct hostsnap *hs) { hs->n = 0; }

static void normalize(const char *in, char *out, size_t len)
{
    size_t o = 0;
    bool space = false;

    while (*in && isspace((unsigned char)*in))
        in++;
    for (; *in && o + 1 < len; in++) {
        if (isspace((unsigned char)*in)) {
            space = true;
            continue;
        }
        if (space && o + 2 < len)
            out[o++] = ' ';
        space = false;
        out[o++] = isprint((unsigned char)*in) ? *in : '?';
    }
    out[o] = '\0';
}

int hostsnap_set(struct hostsnap *hs, const char *key, const char *value)
{
    uint32_t lo = 0, hi = hs->n;

    if (strlen(key) >= HOSTSNAP_KEY_LEN)
        return -ENOSPC;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        int c = strcmp(hs->e[mid].key, key);
        if (c == 0) {
            normalize(value, hs->e[mid].value, sizeof(hs->e[mid].value));
            return 0;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (hs->n >= HOSTSNAP_MAX)
        return -ENOSPC;
    memmove(&hs->e[lo + 1], &hs->e[lo], (hs->n - lo) * sizeof(hs->e[0]));
    snprintf(hs->e[lo].key, sizeof(hs->e[lo].key), "%s", key);
    normalize(value, hs->e[lo].value, sizeof(hs->e[lo].value));
    hs->n++;
    return 0;
}

const char *hostsnap_get(const struct hostsnap *hs, const char *key)
{
    uint32_t lo = 0, hi = hs->n;

    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        int c = strcmp(hs->e[mid].key, key);
        if (c == 0)
            return hs->e[mid].value;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static void read_into(const char *sysroot, struct hostsnap *hs, const char *key, const char *path)
{
    char buf[HOSTSNAP_VAL_LEN * 2];

    if (hostfs_read(sysroot, path, buf, sizeof(buf)) >= 0)
        hostsnap_set(hs, key, buf);
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
}

/* "model name : Intel(R) ..." from the first processor in /proc/cpuinfo */
static void take_cpu_model(const char *sysroot, struct hostsnap *hs)
{
    char buf[8192], *line, *colon;

    if (hostfs_read(sysroot, "/proc/cpuinfo", buf, sizeof(buf)) < 0)
        return;
    line = strstr(buf, "model name");
    if (!line)
        return;
    colon = strchr(line, ':');
    if (!colon)
        return;
    *strchrnul(colon, '\n') = '\0';
    hostsnap_set(hs, "cpu.model", colon + 1);
}

static void take_cpu(const char *sysroot, struct hostsnap *hs)
{
    read_into(sysroot, hs, "cpu.online", "/sys/devices/system/cpu/online");
    read_into(sysroot, hs, "cpu.governor", "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    read_into(sysroot, hs, "cpu.smt_active", "/sys/devices/system/cpu/smt/active");
    take_cpu_model(sysroot, hs);
}

struct iface_walk {
    const char *sysroot;
    struct hostsnap *hs;
    char names[HOSTSNAP_MAX_IFACES][64];
    uint32_t n;
    uint32_t rx, tx; /* queue counting */
};

static int add_iface(const char *name, void *arg)
{
    struct iface_walk *w = arg;

    if (w->n < HOSTSNAP_MAX_IFACES && strlen(name) < sizeof(w->names[0]))
        snprintf(w->names[w->n++], sizeof(w->names[0]), "%s", name);
    return 0;
}

static int count_queue(const char *name, void *arg)
{
    struct iface_walk *w = arg;

    if (!strncmp(name, "rx-", 3))
        w->rx++;
    else if (!strncmp(name, "tx-", 3))
        w->tx++;
    return 0;
}

static int cmp_name(const void *a, const void *b) { return strcmp(a, b); }

static void take_ifaces(const char *sysroot, struct hostsnap *hs)
{
    struct iface_walk *w = calloc(1, sizeof(*w));
    char path[256], key[HOSTSNAP_KEY_LEN], num[32];

    if (!w)
        return;
    w->sysroot = sysroot;
    w->hs = hs;
    hostfs_list(sysroot, "/sys/class/net", add_iface, w);
    qsort(w->names, w->n, sizeof(w->names[0]), cmp_name);
    for (uint32_t i = 0; i < w->n; i++) {
        const char *nm = w->names[i];
        for (size_t f = 0; f < sizeof(iface_files) / sizeof(iface_files[0]); f++) {
            const char *leaf = strrchr(iface_files[f], '/');
            snprintf(path, sizeof(path), "/sys/class/net/%s/%s", nm, iface_files[f]);
            snprintf(key, sizeof(key), "iface.%s.%s", nm, leaf ? leaf + 1 : iface_files[f]);
            read_into(sysroot, hs, key, path);
        }
        w->rx = w->tx = 0;
        snprintf(path, sizeof(path), "/sys/class/net/%s/queues", nm);
        if (hostfs_list(sysroot, path, count_queue, w) == 0) {
            snprintf(key, sizeof(key), "iface.%s.rx_queues", nm);
            snprintf(num, sizeof(num), "%u", w->rx);
            hostsnap_set(hs, key, num);
            snprintf(key, sizeof(key), "iface.%s.tx_queues", nm);
            snprintf(num, sizeof(num), "%u", w->tx);
            hostsnap_set(hs, key, num);
        }
    }
    free(w);
}

void hostsnap_take(const char *sysroot, struct hostsnap *hs)
{
    hostsnap_clear(hs);
    read_into(sysroot, hs, "host.name", "/proc/sys/kernel/hostname");
    take_sysctls(sysroot, hs);
    take_cpu(sysroot, hs);
    take_ifaces(sysroot, hs);
}

size_t hostsnap_diff(const struct hostsnap *a, const struct hostsnap *b,
                     void (*fn)(const char *key, const char *va, const char *vb, void *arg),
                     void *arg)
{
    uint32_t i = 0, j = 0;
    size_t n = 0;

    while (i < a->n || j < b->n) {
        int c = i >= a->n ? 1 : j >= b->n ? -1 : strcmp(a->e[i].key, b->e[j].key);
        if (c < 0) {
            if (fn)
                fn(a->e[i].key, a->e[i].value, NULL, arg);
            i++, n++;
        } else if (c > 0) {
            if (fn)
                fn(b->e[j].key, NULL, b->e[j].value, arg);
            j++, n++;
        } else {
            if (strcmp(a->e[i].value, b->e[j].value)) {
                if (fn)
                    fn(a->e[i].key, a->e[i].value, b->e[j].value, arg);
                n++;
            }
            i++, j++;
        }
    }
    return n;
}
