/* cpulist: parsing CPU lists, and finding the CPUs local to the NIC that reaches a peer. */
#define _GNU_SOURCE
#include "cpulist.h"

#include "hostfs.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *skip_space(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n')
        p++;
    return p;
}

static int read_int(const char **p, int *v)
{
    char *end;
    long x;

    if (!isdigit((unsigned char)**p))
        return -EINVAL;
    x = strtol(*p, &end, 10);
    if (x < 0 || x >= 65536)
        return -EINVAL;
    *v = (int)x;
    *p = end;
    return 0;
}

int cpulist_parse(const char *s, struct cpulist *out)
{
    const char *p = skip_space(s);

    out->n = 0;
    if (!*p)
        return -EINVAL;
    while (*p) {
        int lo, hi;

        if (read_int(&p, &lo))
            return -EINVAL;
        hi = lo;
        if (*p == '-') {
            p++;
            if (read_int(&p, &hi) || hi < lo)
                return -EINVAL;
        }
        for (int c = lo; c <= hi; c++) {
            if (out->n >= CPULIST_MAX)
                return -EINVAL;
            out->cpu[out->n++] = c;
        }
        p = skip_space(p);
        if (*p == ',') {
            p = skip_space(p + 1);
            if (!*p)
                return -EINVAL; /* a trailing comma */
        } else if (*p) {
            return -EINVAL;
        }
    }
    return 0;
}

void cpulist_format(const struct cpulist *cl, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int i = 0; i < cl->n && used < len; i++) {
        int j = i;
        int n;

        while (j + 1 < cl->n && cl->cpu[j + 1] == cl->cpu[j] + 1)
            j++;
        if (j > i)
            n = snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", cl->cpu[i],
                         cl->cpu[j]);
        else
            n = snprintf(buf + used, len - used, "%s%d", used ? "," : "", cl->cpu[i]);
        if (n < 0)
            return;
        used += (size_t)n;
        i = j;
    }
}

int cpulist_online(struct cpulist *out)
{
    cpu_set_t set;

    out->n = 0;
    if (sched_getaffinity(0, sizeof(set), &set))
        return -errno;
    for (int c = 0; c < CPU_SETSIZE && out->n < CPULIST_MAX; c++)
        if (CPU_ISSET(c, &set))
            out->cpu[out->n++] = c;
    return out->n ? 0 : -ENOENT;
}

/* The local address the kernel would use to reach peer (a UDP connect sends nothing). */
static int route_source(const char *peer, struct sockaddr_storage *src)
{
    struct sockaddr_storage dst = {0};
    socklen_t slen = sizeof(*src);
    int fd, rc = 0;

    if (inet_pton(AF_INET, peer, &((struct sockaddr_in *)&dst)->sin_addr) == 1) {
        dst.ss_family = AF_INET;
        ((struct sockaddr_in *)&dst)->sin_port = htons(9);
    } else if (inet_pton(AF_INET6, peer, &((struct sockaddr_in6 *)&dst)->sin6_addr) == 1) {
        dst.ss_family = AF_INET6;
        ((struct sockaddr_in6 *)&dst)->sin6_port = htons(9);
    } else {
        return -EINVAL;
    }
    fd = socket(dst.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&dst, sizeof(dst)) ||
        getsockname(fd, (struct sockaddr *)src, &slen))
        rc = -errno;
    close(fd);
    return rc;
}

static int addr_equal(const struct sockaddr *a, const struct sockaddr_storage *b)
{
    if (a->sa_family != b->ss_family)
        return 0;
    if (a->sa_family == AF_INET)
        return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
               ((const struct sockaddr_in *)b)->sin_addr.s_addr;
    return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
                   &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr));
}

static int iface_of(const struct sockaddr_storage *src, char *ifname, size_t iflen)
{
    struct ifaddrs *ifs, *i;
    int rc = -ENODEV;

    if (getifaddrs(&ifs))
        return -errno;
    for (i = ifs; i; i = i->ifa_next) {
        if (i->ifa_addr && addr_equal(i->ifa_addr, src)) {
            snprintf(ifname, iflen, "%s", i->ifa_name);
            rc = 0;
            break;
        }
    }
    freeifaddrs(ifs);
    return rc;
}

int cpulist_for_peer(const char *sysroot, const char *peer_addr, struct cpulist *out, char *ifname,
                     size_t iflen, char *why, size_t whylen)
{
    struct sockaddr_storage src;
    char path[256], buf[4096];
    int rc = route_source(peer_addr, &src);

    if (rc) {
        snprintf(why, whylen, "no route to %s", peer_addr);
        return rc;
    }
    rc = iface_of(&src, ifname, iflen);
    if (rc) {
        snprintf(why, whylen, "no interface holds the source address toward %s", peer_addr);
        return rc;
    }
    snprintf(path, sizeof(path), "/sys/class/net/%s/device/local_cpulist", ifname);
    if (hostfs_read(sysroot, path, buf, sizeof(buf)) < 0) {
        snprintf(why, whylen, "%s has no PCI device: a virtual or loopback interface", ifname);
        return -ENOENT;
    }
    if (cpulist_parse(buf, out)) {
        snprintf(why, whylen, "cannot parse %s", path);
        return -EINVAL;
    }
    return 0;
}

int cpulist_resolve(const char *sysroot, const char *spec, const char *peer, struct cpulist *out,
                    char *err, size_t errlen, char *note, size_t notelen)
{
    struct cpulist online;
    char ifname[64] = "", why[256];

    out->n = 0;
    if (note && notelen)
        note[0] = '\0';
    if (!spec || !*spec)
        return 0;
    if (!strcmp(spec, "auto")) {
        if (cpulist_for_peer(sysroot, peer, out, ifname, sizeof(ifname), why, sizeof(why))) {
            out->n = 0;
            if (note)
                snprintf(note, notelen, "'auto' found no NIC-local CPUs (%s)", why);
            return 0;
        }
        if (note)
            snprintf(note, notelen, "CPU pinning 'auto': CPUs local to %s", ifname);
    } else if (cpulist_parse(spec, out)) {
        snprintf(err, errlen, "CPU list '%s' is not valid: use e.g. 0-3,8 or auto", spec);
        return -EINVAL;
    }
    if (cpulist_online(&online))
        return 0;
    for (int i = 0; i < out->n; i++) {
        int ok = 0;
        for (int j = 0; j < online.n && !ok; j++)
            ok = online.cpu[j] == out->cpu[i];
        if (!ok) {
            char avail[256];
            cpulist_format(&online, avail, sizeof(avail));
            snprintf(err, errlen, "CPU %d in '%s' is not available here: use CPUs from %s",
                     out->cpu[i], spec, avail);
            return -EINVAL;
        }
    }
    return 0;
}
