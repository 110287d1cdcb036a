/* hostctr: TcpExt, softnet, per-CPU busy/softirq and NIC drop counters, before and after. */
#define _GNU_SOURCE
#include "hostctr.h"

#include "hostfs.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *table, *name;
} ctr_names[HOSTCTR_COUNT] = {
    {"TcpExt:", "TCPToZeroWindowAdv"}, {"TcpExt:", "TCPWantZeroWindowAdv"},
    {"TcpExt:", "TCPRcvQDrop"},        {"TcpExt:", "PruneCalled"},
    {"TcpExt:", "TCPRcvCollapsed"},    {"TcpExt:", "TCPBacklogDrop"},
    {"TcpExt:", "ListenOverflows"},    {"TcpExt:", "TCPTimeouts"},
    {"Tcp:", "RetransSegs"},           {"Tcp:", "OutSegs"},
};

const char *hostctr_name(enum hostctr_ctr c)
{
    return (unsigned)c < HOSTCTR_COUNT ? ctr_names[c].name : "?";
}

int hostctr_from_name(const char *name)
{
    for (int c = 0; c < HOSTCTR_COUNT; c++)
        if (!strcmp(name, ctr_names[c].name))
            return c;
    return -1;
}

/* The n-th whitespace-separated word of a line (0 = the table name), as a span. */
static const char *word(const char *line, const char *end, int n, size_t *len)
{
    const char *p = line;

    for (int i = 0;; i++) {
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        if (p >= end)
            return NULL;
        const char *w = p;
        while (p < end && *p != ' ' && *p != '\t')
            p++;
        if (i == n) {
            *len = (size_t)(p - w);
            return w;
        }
    }
}

/* One "Table: names" line followed by its "Table: values" line. */
static void parse_pair(const char *names, const char *nend, const char *vals, const char *vend,
                       struct hostctr_snap *s)
{
    size_t tlen, len, vlen;
    const char *table = word(names, nend, 0, &tlen);

    for (int c = 0; c < HOSTCTR_COUNT; c++) {
        if (strlen(ctr_names[c].table) != tlen || strncmp(table, ctr_names[c].table, tlen))
            continue;
        for (int i = 1;; i++) {
            const char *w = word(names, nend, i, &len), *v;
            if (!w)
                break;
            if (len != strlen(ctr_names[c].name) || strncmp(w, ctr_names[c].name, len))
                continue;
            v = word(vals, vend, i, &vlen);
            if (v && vlen < 21 && strspn(v, "0123456789") >= vlen) {
                char num[24];
                memcpy(num, v, vlen);
                num[vlen] = '\0';
                s->ctr[c] = strtoull(num, NULL, 10);
                s->have_ctr[c] = true;
            }
            break;
        }
    }
}

int hostctr_parse_netstat(const char *text, struct hostctr_snap *s)
{
    const char *p = text;
    int pairs = 0;

    while (*p) {
        const char *e1 = strchr(p, '\n'), *v, *e2;
        size_t t1, t2;
        if (!e1)
            break;
        v = e1 + 1;
        e2 = strchr(v, '\n');
        if (!e2)
            e2 = v + strlen(v);
        const char *n1 = word(p, e1, 0, &t1), *n2 = word(v, e2, 0, &t2);
        if (!n1 || !n2 || t1 != t2 || strncmp(n1, n2, t1) || n1[t1 - 1] != ':')
            return pairs ? 0 : -EINVAL;
        parse_pair(p, e1, v, e2, s);
        pairs++;
        p = *e2 ? e2 + 1 : e2;
    }
    return pairs ? 0 : -EINVAL;
}

int hostctr_parse_softnet(const char *text, struct hostctr_snap *s)
{
    const char *p = text;
    uint64_t dropped = 0, squeeze = 0;
    int rows = 0;

    while (*p) {
        unsigned long long processed, d, q;
        int used = 0;
        if (sscanf(p, "%llx %llx %llx%n", &processed, &d, &q, &used) != 3)
            return -EINVAL;
        dropped += d;
        squeeze += q;
        rows++;
        p = strchr(p, '\n');
        if (!p)
            break;
        p++;
    }
    if (!rows)
        return -EINVAL;
    s->have_softnet = true;
    s->softnet_dropped = dropped;
    s->softnet_squeeze = squeeze;
    return 0;
}

int hostctr_parse_stat(const char *text, struct hostctr_snap *s)
{
    const char *p = text;

    s->ncpu = 0;
    while (p && *p) {
        unsigned long long v[8] = {0};
        int id, n = sscanf(p, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &id, &v[0], &v[1],
                           &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
        if (n >= 8 && p[3] >= '0' && p[3] <= '9' && s->ncpu < HOSTCTR_MAX_CPUS) {
            s->cpu_id[s->ncpu] = id;
            s->cpu_softirq[s->ncpu] = v[6];
            s->cpu_idle[s->ncpu] = v[3] + v[4]; /* idle + iowait */
            s->cpu_total[s->ncpu] = 0;
            for (int i = 0; i < n - 1; i++)
                s->cpu_total[s->ncpu] += v[i];
            s->ncpu++;
        }
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    return s->ncpu ? 0 : -EINVAL;
}

static int add_iface(const char *name, void *arg)
{
    struct hostctr_snap *s = arg;

    if (strcmp(name, "lo") && strlen(name) < IF_NAMESIZE && s->niface < HOSTCTR_MAX_IFACES)
        snprintf(s->iface[s->niface++], IF_NAMESIZE, "%s", name);
    return 0;
}

/* Reads a file's text into a heap buffer (the per-CPU files grow with the CPU count). */
static char *read_text(const char *sysroot, const char *path, size_t max)
{
    char *buf = malloc(max);
    long n;

    if (!buf)
        return NULL;
    n = hostfs_read(sysroot, path, buf, max);
    if (n < 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

void hostctr_sample(const char *sysroot, struct hostctr_snap *s)
{
    char *text, path[160];

    memset(s, 0, sizeof(*s));
    if ((text = read_text(sysroot, "/proc/net/netstat", 1 << 16)))
        hostctr_parse_netstat(text, s);
    free(text);
    if ((text = read_text(sysroot, "/proc/net/snmp", 1 << 16)))
        hostctr_parse_netstat(text, s);
    free(text);
    if ((text = read_text(sysroot, "/proc/net/softnet_stat", 1 << 20)))
        hostctr_parse_softnet(text, s);
    free(text);
    if ((text = read_text(sysroot, "/proc/stat", 1 << 20)))
        hostctr_parse_stat(text, s);
    free(text);
    hostfs_list(sysroot, "/sys/class/net", add_iface, s);
    for (int i = 0; i < s->niface; i++) {
        snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/rx_dropped", s->iface[i]);
        hostfs_read_u64(sysroot, path, &s->rx_dropped[i]);
        snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/rx_missed_errors", s->iface[i]);
        hostfs_read_u64(sysroot, path, &s->rx_missed[i]);
    }
}

static uint64_t sub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

/* Keeps c in the delta's list of the busiest CPUs (busiest first). */
static void keep_busiest(struct hostctr_delta *out, const struct hostctr_cpu *c)
{
    int at = out->ncpu;

    while (at > 0 && out->cpu[at - 1].busy < c->busy)
        at--;
    if (at >= HOSTCTR_TOP_CPUS)
        return;
    if (out->ncpu < HOSTCTR_TOP_CPUS)
        out->ncpu++;
    memmove(&out->cpu[at + 1], &out->cpu[at], (size_t)(out->ncpu - 1 - at) * sizeof(*c));
    out->cpu[at] = *c;
}

static void cpu_delta(const struct hostctr_snap *a, const struct hostctr_snap *b,
                      struct hostctr_delta *out)
{
    out->softirq_max = 0;
    out->softirq_cpu = -1;
    for (int i = 0; i < b->ncpu; i++) {
        for (int j = 0; j < a->ncpu; j++) {
            if (a->cpu_id[j] != b->cpu_id[i])
                continue;
            uint64_t tot = sub(b->cpu_total[i], a->cpu_total[j]);
            struct hostctr_cpu c = {.id = b->cpu_id[i]};
            if (tot) {
                c.softirq = (double)sub(b->cpu_softirq[i], a->cpu_softirq[j]) / (double)tot;
                c.busy = 1 - (double)sub(b->cpu_idle[i], a->cpu_idle[j]) / (double)tot;
                c.busy = c.busy < 0 ? 0 : c.busy;
            }
            if (c.softirq > out->softirq_max) {
                out->softirq_max = c.softirq;
                out->softirq_cpu = c.id;
            }
            keep_busiest(out, &c);
            break;
        }
    }
}

const struct hostctr_cpu *hostctr_cpu_find(const struct hostctr_delta *d, int id)
{
    for (int i = 0; i < d->ncpu && i < HOSTCTR_TOP_CPUS; i++)
        if (d->cpu[i].id == id)
            return &d->cpu[i];
    return NULL;
}

static void nic_delta(const struct hostctr_snap *a, const struct hostctr_snap *b,
                      struct hostctr_delta *out)
{
    uint64_t worst = 0;

    for (int i = 0; i < b->niface; i++) {
        for (int j = 0; j < a->niface; j++) {
            if (strcmp(a->iface[j], b->iface[i]))
                continue;
            uint64_t d = sub(b->rx_dropped[i], a->rx_dropped[j]);
            uint64_t m = sub(b->rx_missed[i], a->rx_missed[j]);
            out->nic_rx_dropped += d;
            out->nic_rx_missed += m;
            if (d + m > worst) {
                worst = d + m;
                snprintf(out->nic_worst, sizeof(out->nic_worst), "%s", b->iface[i]);
            }
            break;
        }
    }
}

void hostctr_delta(const struct hostctr_snap *a, const struct hostctr_snap *b,
                   struct hostctr_delta *out)
{
    memset(out, 0, sizeof(*out));
    for (int c = 0; c < HOSTCTR_COUNT; c++) {
        out->have_ctr[c] = a->have_ctr[c] && b->have_ctr[c];
        out->ctr[c] = out->have_ctr[c] ? sub(b->ctr[c], a->ctr[c]) : 0;
    }
    out->have_softnet = a->have_softnet && b->have_softnet;
    if (out->have_softnet) {
        out->softnet_dropped = sub(b->softnet_dropped, a->softnet_dropped);
        out->softnet_squeeze = sub(b->softnet_squeeze, a->softnet_squeeze);
    }
    cpu_delta(a, b, out);
    nic_delta(a, b, out);
    out->valid = true;
}
