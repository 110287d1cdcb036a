/* audit_queue: qdiscs, backlog, NAPI budget and busy polling. Whether fq exists is decided
 * read-only: a qdisc already in use, a loaded sch_fq module, or the kernel's own config
 * (/proc/config.gz, /boot/config-RELEASE). Nothing is created or loaded to find out. */
#include "audit_queue.h"

#include "audit_iface.h"
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define CONFIG_GZ_MAX   (1 << 20)
#define CONFIG_TEXT_MAX (8 << 20)
#define SOFTNET_MAX     (512 << 10)

enum avail { AVAIL_UNKNOWN, AVAIL_YES, AVAIL_NO };

struct qdisc_avail {
    enum avail fq, fq_codel;
    char fq_how[160], fq_codel_how[160];
};

char audit_queue_kconfig(const char *config, const char *sym)
{
    size_t n = strlen(sym);

    for (const char *p = config; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (!strncmp(p, sym, n) && p[n] == '=' && (p[n + 1] == 'y' || p[n + 1] == 'm'))
            return p[n + 1];
        if (!strncmp(p, "# ", 2) && !strncmp(p + 2, sym, n) &&
            !strncmp(p + 2 + n, " is not set", 11))
            return 'n';
    }
    return 'n';
}

/* The running kernel's config as text (caller frees), from /proc/config.gz or
 * /boot/config-RELEASE; src names the file. NULL when neither is readable. */
static char *kernel_config(struct audit_ctx *ctx, char *src, size_t srclen)
{
    unsigned char *gz = malloc(CONFIG_GZ_MAX);
    char *text = malloc(CONFIG_TEXT_MAX);
    long n = gz && text ? audit_read_raw(ctx, "/proc/config.gz", gz, CONFIG_GZ_MAX) : -ENOMEM;
    char path[192];

    if (n > 0) {
        z_stream zs;
        int rc;
        memset(&zs, 0, sizeof(zs));
        zs.next_in = gz;
        zs.avail_in = (uInt)n;
        zs.next_out = (Bytef *)text;
        zs.avail_out = CONFIG_TEXT_MAX - 1;
        rc = inflateInit2(&zs, 16 + MAX_WBITS);
        if (rc == Z_OK) {
            rc = inflate(&zs, Z_FINISH);
            inflateEnd(&zs);
        }
        if (rc == Z_STREAM_END) {
            text[zs.total_out] = '\0';
            snprintf(src, srclen, "/proc/config.gz");
            free(gz);
            return text;
        }
    }
    free(gz);
    snprintf(path, sizeof(path), "/boot/config-%s", audit_get_host(ctx)->kernel);
    if (text && audit_get_host(ctx)->kernel[0] &&
        audit_read(ctx, path, text, CONFIG_TEXT_MAX) > 0) {
        snprintf(src, srclen, "%s", path);
        return text;
    }
    free(text);
    return NULL;
}

static bool in_use(struct audit_ctx *ctx, const char *kind, const char *dflt)
{
    size_t n;
    struct audit_iface *ifs = audit_ifaces(ctx, &n);

    if (!strcmp(dflt, kind))
        return true;
    for (size_t i = 0; i < n; i++)
        if (ifs[i].audited && !ifs[i].nic.qdisc_err &&
            (!strcmp(ifs[i].nic.qdisc_root, kind) || !strcmp(ifs[i].nic.qdisc_leaf, kind)))
            return true;
    return false;
}

static void judge_avail(struct audit_ctx *ctx, const char *kind, const char *sym,
                        const char *config, const char *src, const char *dflt, enum avail *out,
                        char *how, size_t howlen)
{
    char path[96], state[32];

    snprintf(path, sizeof(path), "/sys/module/sch_%s/initstate", kind);
    if (in_use(ctx, kind, dflt)) {
        *out = AVAIL_YES;
        snprintf(how, howlen, "%s is in use", kind);
    } else if (audit_read(ctx, path, state, sizeof(state)) > 0 && !strcmp(state, "live")) {
        *out = AVAIL_YES;
        snprintf(how, howlen, "module sch_%s is loaded", kind);
    } else if (config) {
        char v = audit_queue_kconfig(config, sym);
        *out = v == 'n' ? AVAIL_NO : AVAIL_YES;
        if (v == 'y')
            snprintf(how, howlen, "built in (%s=y in %s)", sym, src);
        else if (v == 'm')
            snprintf(how, howlen, "a module (%s=m in %s): modprobe sch_%s loads it", sym, src,
                     kind);
        else
            snprintf(how, howlen, "no sch_%s: %s does not enable %s", kind, src, sym);
    } else {
        *out = AVAIL_UNKNOWN;
        snprintf(how, howlen,
                 "cannot tell: no /proc/config.gz or /boot/config-%s, and sch_%s "
                 "is not loaded",
                 audit_get_host(ctx)->kernel, kind);
    }
}

static void find_avail(struct audit_ctx *ctx, const char *dflt, struct qdisc_avail *a)
{
    char src[192] = "";
    char *config = NULL;

    memset(a, 0, sizeof(*a));
    if (!in_use(ctx, "fq", dflt) || !in_use(ctx, "fq_codel", dflt))
        config = kernel_config(ctx, src, sizeof(src));
    judge_avail(ctx, "fq", "CONFIG_NET_SCH_FQ", config, src, dflt, &a->fq, a->fq_how,
                sizeof(a->fq_how));
    judge_avail(ctx, "fq_codel", "CONFIG_NET_SCH_FQ_CODEL", config, src, dflt, &a->fq_codel,
                a->fq_codel_how, sizeof(a->fq_codel_how));
    free(config);
}

static bool kind_ok(const char *s)
{
    if (!*s || strlen(s) > 15)
        return false;
    for (; *s; s++)
        if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '_')
            return false;
    return true;
}

/* Availability without findings (for the per-interface check). */
static void avail_quiet(struct audit_ctx *ctx, struct qdisc_avail *a)
{
    char dflt[64];

    if (audit_read(ctx, "/proc/sys/net/core/default_qdisc", dflt, sizeof(dflt)) < 0 ||
        !kind_ok(dflt))
        dflt[0] = '\0';
    find_avail(ctx, dflt, a);
}

/* "fq is not available in this kernel (no sch_fq): ..." */
static void fix_no_fq(struct audit_finding *f)
{
    AUDIT_SET(f->fix, "fq is not available in this kernel (no sch_fq): boot a kernel built "
                      "with CONFIG_NET_SCH_FQ=y or =m, then sysctl -w net.core.default_qdisc=fq");
    f->persistent = true;
}

/* Reads default_qdisc; "" when unreadable (a finding says why). */
static void check_default(struct audit_ctx *ctx, char *dflt, size_t len, struct qdisc_avail *a)
{
    static const char *const id = "qdisc.default";
    static const char *const path = "/proc/sys/net/core/default_qdisc";
    bool tp = audit_get_profile(ctx) == AUDIT_PROFILE_THROUGHPUT;
    long n = audit_read(ctx, path, dflt, len);
    enum audit_status st;
    struct audit_finding *f;

    if (n < 0 || !kind_ok(dflt)) {
        if (n < 0)
            audit_skip_read(ctx, id, NULL, AUDIT_G_QUEUE, path, n);
        else
            audit_unreadable(ctx, id, NULL, AUDIT_G_QUEUE, path, dflt, "a qdisc name");
        dflt[0] = '\0';
        find_avail(ctx, "", a);
        return;
    }
    find_avail(ctx, dflt, a);
    st = !strcmp(dflt, "fq")         ? AUDIT_OK
         : !strcmp(dflt, "fq_codel") ? (tp ? AUDIT_INFO : AUDIT_OK)
                                     : AUDIT_WARN;
    f = audit_add(ctx, id, NULL, AUDIT_G_QUEUE, st);
    AUDIT_SET(f->current, "%s", dflt);
    AUDIT_SET(f->recommended, "%s", st == AUDIT_OK ? dflt : "fq");
    if (st == AUDIT_OK)
        AUDIT_SET(f->reason, "%s paces and isolates flows on interfaces created from now on", dflt);
    else
        AUDIT_SET(f->reason,
                  "%s does not pace flows: bursts at line rate overflow shallow "
                  "switch buffers; fq paces each flow (BBR relies on it before "
                  "4.13)%s%s",
                  dflt, a->fq == AVAIL_NO ? "; " : "", a->fq == AVAIL_NO ? a->fq_how : "");
    if (st == AUDIT_OK)
        return;
    if (a->fq == AVAIL_NO)
        fix_no_fq(f);
    else
        audit_fix_sysctl(f, "net.core.default_qdisc", "fq");
}

static void check_avail(struct audit_ctx *ctx, const struct qdisc_avail *a)
{
    struct audit_finding *f;

    if (a->fq == AVAIL_UNKNOWN) {
        f = audit_add(ctx, "qdisc.fq_available", NULL, AUDIT_G_QUEUE, AUDIT_SKIPPED);
        AUDIT_SET(f->reason, "%s", a->fq_how);
        return;
    }
    f = audit_add(ctx, "qdisc.fq_available", NULL, AUDIT_G_QUEUE,
                  a->fq == AVAIL_YES ? AUDIT_OK : AUDIT_INFO);
    AUDIT_SET(f->current, "fq %s, fq_codel %s", a->fq == AVAIL_YES ? "yes" : "no",
              a->fq_codel == AVAIL_YES  ? "yes"
              : a->fq_codel == AVAIL_NO ? "no"
                                        : "unknown");
    if (a->fq == AVAIL_YES)
        AUDIT_SET(f->reason, "%s; fq_codel: %s", a->fq_how, a->fq_codel_how);
    else
        AUDIT_SET(f->reason, "fq is not available in this kernel (%s); fq_codel: %s", a->fq_how,
                  a->fq_codel_how);
    if (a->fq == AVAIL_NO)
        fix_no_fq(f);
}

int audit_queue_parse_softnet(const char *text, uint64_t *dropped, uint64_t *squeezed)
{
    int rows = 0;

    *dropped = *squeezed = 0;
    for (const char *p = text; *p;) {
        uint64_t col[3] = {0, 0, 0};
        int ncol = 0;

        while (*p && *p != '\n') {
            char *end;
            unsigned long long v;
            while (*p == ' ' || *p == '\t')
                p++;
            if (!*p || *p == '\n')
                break;
            if (!isxdigit((unsigned char)*p))
                return -EINVAL;
            errno = 0;
            v = strtoull(p, &end, 16);
            if (errno || end - p > 16 || (*end && *end != ' ' && *end != '\t' && *end != '\n'))
                return -EINVAL;
            if (ncol < 3)
                col[ncol] = v;
            ncol++;
            p = end;
        }
        if (*p == '\n')
            p++;
        if (ncol == 0)
            continue;
        if (ncol < 3)
            return -EINVAL;
        if (*dropped > UINT64_MAX - col[1] || *squeezed > UINT64_MAX - col[2])
            return -EINVAL;
        *dropped += col[1];
        *squeezed += col[2];
        rows++;
    }
    return rows ? rows : -EINVAL;
}

/* Reads softnet_stat; returns the CPU rows or a negative errno, *text set for messages. */
static int read_softnet(struct audit_ctx *ctx, char *buf, size_t len, uint64_t *dropped,
                        uint64_t *squeezed)
{
    long n = audit_read(ctx, "/proc/net/softnet_stat", buf, len);

    if (n < 0)
        return (int)n;
    return audit_queue_parse_softnet(buf, dropped, squeezed);
}

static void check_backlog(struct audit_ctx *ctx, int rows, uint64_t dropped)
{
    static const char *const id = "sysctl.netdev_max_backlog";
    static const char *const path = "/proc/sys/net/core/netdev_max_backlog";
    const struct audit_target *t = audit_get_target(ctx);
    bool tp = audit_get_profile(ctx) == AUDIT_PROFILE_THROUGHPUT;
    uint64_t want = !tp ? 1000 : t->rate_bps >= 40e9 ? 250000 : t->rate_bps >= 10e9 ? 30000 : 1000;
    char buf[64], rate[32], evidence[128], wants[16];
    uint64_t v;
    enum audit_status st;
    struct audit_finding *f;
    long n = audit_read(ctx, path, buf, sizeof(buf));

    if (n < 0 || audit_parse_u64(buf, &v)) {
        if (n < 0)
            audit_skip_read(ctx, id, NULL, AUDIT_G_QUEUE, path, n);
        else
            audit_unreadable(ctx, id, NULL, AUDIT_G_QUEUE, path, buf, "one whole number");
        return;
    }
    st = rows > 0 && dropped > 0 ? (v < want ? AUDIT_BAD : AUDIT_WARN)
         : v < want              ? AUDIT_WARN
                                 : AUDIT_OK;
    units_format_rate(t->rate_bps, rate, sizeof(rate));
    if (rows > 0)
        snprintf(evidence, sizeof(evidence),
                 "softnet_stat: %llu backlog drops since boot on %d "
                 "CPUs",
                 (unsigned long long)dropped, rows);
    else
        snprintf(evidence, sizeof(evidence), "softnet_stat unreadable, drops unknown");
    f = audit_add(ctx, id, NULL, AUDIT_G_QUEUE, st);
    AUDIT_SET(f->current, "%llu", (unsigned long long)v);
    snprintf(wants, sizeof(wants), "%llu", (unsigned long long)(v > want ? v : want));
    AUDIT_SET(f->recommended, "%s", st == AUDIT_OK ? f->current : wants);
    if (st == AUDIT_OK)
        AUDIT_SET(f->reason, "per-CPU input backlog is deep enough for %s; %s", rate, evidence);
    else if (v < want)
        AUDIT_SET(f->reason,
                  "per-CPU input backlog of %llu packets for %s (ESnet: 250000 at "
                  "40-100G, 30000 at 10G); %s",
                  (unsigned long long)v, rate, evidence);
    else
        AUDIT_SET(f->reason,
                  "the backlog still overflowed: %s; the receiving CPUs are too slow "
                  "(see nic.rps and nic.irq_affinity)",
                  evidence);
    if (st != AUDIT_OK)
        audit_fix_sysctl(f, "net.core.netdev_max_backlog", wants);
}

static void check_budget(struct audit_ctx *ctx, int rows, uint64_t squeezed, const char *snet)
{
    static const char *const id = "sysctl.netdev_budget";
    static const char *const path = "/proc/sys/net/core/netdev_budget";
    char buf[64], ubuf[64], usecs[48] = "";
    uint64_t v, u;
    struct audit_finding *f;
    long n = audit_read(ctx, path, buf, sizeof(buf));

    if (n < 0 || audit_parse_u64(buf, &v)) {
        if (n < 0)
            audit_skip_read(ctx, id, NULL, AUDIT_G_QUEUE, path, n);
        else
            audit_unreadable(ctx, id, NULL, AUDIT_G_QUEUE, path, buf, "one whole number");
        return;
    }
    if (rows == -EINVAL || rows == 0) {
        audit_unreadable(ctx, id, NULL, AUDIT_G_QUEUE, "/proc/net/softnet_stat", snet,
                         "rows of hex counters, at least 3 per CPU");
        return;
    }
    if (rows < 0) {
        audit_skip_read(ctx, id, NULL, AUDIT_G_QUEUE, "/proc/net/softnet_stat", rows);
        return;
    }
    if (audit_read(ctx, "/proc/sys/net/core/netdev_budget_usecs", ubuf, sizeof(ubuf)) > 0 &&
        !audit_parse_u64(ubuf, &u))
        snprintf(usecs, sizeof(usecs), ", netdev_budget_usecs %llu", (unsigned long long)u);
    f = audit_add(ctx, id, NULL, AUDIT_G_QUEUE, squeezed ? AUDIT_INFO : AUDIT_OK);
    AUDIT_SET(f->current, "%llu", (unsigned long long)v);
    AUDIT_SET(f->recommended, "%s", squeezed && v < 600 ? "600" : f->current);
    AUDIT_SET(f->reason, "softnet_stat: %llu time squeezes since boot on %d CPUs%s%s",
              (unsigned long long)squeezed, rows, usecs,
              squeezed ? " (NAPI ran out of budget; if it grows under load, raise the budget)"
                       : "");
    if (squeezed && v < 600) {
        AUDIT_SET(f->fix, "sysctl -w net.core.netdev_budget=600 net.core.netdev_budget_usecs=8000");
        AUDIT_SET(f->persist, "add 'net.core.netdev_budget = 600' and "
                              "'net.core.netdev_budget_usecs = 8000' to "
                              "/etc/sysctl.d/90-netrig.conf");
    }
}

static void check_busy_poll(struct audit_ctx *ctx)
{
    static const char *const id = "sysctl.busy_poll";
    static const char *const rd = "/proc/sys/net/core/busy_read";
    static const char *const pl = "/proc/sys/net/core/busy_poll";
    bool lat = audit_get_profile(ctx) == AUDIT_PROFILE_LATENCY;
    char a[64], b[64];
    uint64_t r, p;
    long n1 = audit_read(ctx, rd, a, sizeof(a)), n2 = audit_read(ctx, pl, b, sizeof(b));
    struct audit_finding *f;

    if (n1 < 0 || n2 < 0) {
        audit_skip_read(ctx, id, NULL, AUDIT_G_QUEUE, n1 < 0 ? rd : pl, n1 < 0 ? n1 : n2);
        return;
    }
    if (audit_parse_u64(a, &r) || audit_parse_u64(b, &p)) {
        audit_unreadable(ctx, id, NULL, AUDIT_G_QUEUE, audit_parse_u64(a, &r) ? rd : pl,
                         audit_parse_u64(a, &r) ? a : b, "one whole number");
        return;
    }
    f = audit_add(ctx, id, NULL, AUDIT_G_QUEUE, lat && !r && !p ? AUDIT_INFO : AUDIT_OK);
    AUDIT_SET(f->current, "busy_read %llu busy_poll %llu", (unsigned long long)r,
              (unsigned long long)p);
    AUDIT_SET(f->recommended, "%s",
              f->status == AUDIT_INFO ? "busy_read 50 busy_poll 50" : f->current);
    AUDIT_SET(f->reason, "%s",
              lat ? "busy polling trades CPU for lower receive latency "
                    "(tuned network-latency uses 50 us)"
                  : "busy polling is a latency tool; off suits throughput");
    if (f->status == AUDIT_INFO) {
        AUDIT_SET(f->fix, "sysctl -w net.core.busy_read=50 net.core.busy_poll=50");
        AUDIT_SET(f->persist, "add 'net.core.busy_read = 50' and 'net.core.busy_poll = 50' to "
                              "/etc/sysctl.d/90-netrig.conf");
    }
}

void audit_queue_host(struct audit_ctx *ctx)
{
    char dflt[64], *snet = malloc(SOFTNET_MAX);
    struct qdisc_avail a;
    uint64_t dropped = 0, squeezed = 0;
    int rows;

    check_default(ctx, dflt, sizeof(dflt), &a);
    check_avail(ctx, &a);
    rows = snet ? read_softnet(ctx, snet, SOFTNET_MAX, &dropped, &squeezed) : -ENOMEM;
    check_backlog(ctx, rows, dropped);
    check_budget(ctx, rows, squeezed, snet ? snet : "");
    check_busy_poll(ctx);
    free(snet);
}

void audit_queue_iface(struct audit_ctx *ctx, struct audit_iface *ifc)
{
    const struct nicinfo *n = &ifc->nic;
    bool tp = audit_get_profile(ctx) == AUDIT_PROFILE_THROUGHPUT;
    bool multi = !strcmp(n->qdisc_root, "mq") || !strcmp(n->qdisc_root, "mqprio");
    const char *kind = multi ? n->qdisc_leaf : n->qdisc_root;
    struct qdisc_avail a;
    enum audit_status st;
    struct audit_finding *f;

    if (n->qdisc_err) {
        f = audit_add(ctx, "qdisc.root", ifc->name, AUDIT_G_QUEUE, AUDIT_SKIPPED);
        AUDIT_SET(f->reason, "rtnetlink qdisc dump for %s: %s", ifc->name,
                  nicinfo_errtext(n->qdisc_err));
        return;
    }
    st = !strcmp(kind, "fq")                                  ? AUDIT_OK
         : !strcmp(kind, "fq_codel") || !strcmp(kind, "cake") ? (tp ? AUDIT_INFO : AUDIT_OK)
         : !strcmp(kind, "htb") || !strcmp(kind, "tbf") || !strcmp(kind, "hfsc") ||
                 !strcmp(kind, "noqueue")
             ? AUDIT_INFO
             : AUDIT_WARN;
    f = audit_add(ctx, "qdisc.root", ifc->name, AUDIT_G_QUEUE, st);
    if (multi)
        AUDIT_SET(f->current, "%s (%s per queue)", n->qdisc_root, kind[0] ? kind : "none");
    else
        AUDIT_SET(f->current, "%s", n->qdisc_root);
    AUDIT_SET(f->recommended, "%s",
              st == AUDIT_OK ? f->current
              : multi        ? "mq (fq per queue)"
                             : "fq");
    if (st == AUDIT_OK) {
        AUDIT_SET(f->reason, "fq paces each flow on %s", ifc->name);
        return;
    }
    if (!strcmp(kind, "htb") || !strcmp(kind, "tbf") || !strcmp(kind, "hfsc")) {
        AUDIT_SET(f->reason, "%s shapes traffic on %s: make sure that is intended", kind,
                  ifc->name);
        return;
    }
    AUDIT_SET(f->reason,
              "%s does not pace: flows leave %s in line-rate bursts; changing "
              "default_qdisc does not touch existing interfaces",
              kind[0] ? kind : n->qdisc_root, ifc->name);
    avail_quiet(ctx, &a);
    if (a.fq == AVAIL_NO) {
        fix_no_fq(f);
        return;
    }
    if (multi)
        AUDIT_SET(f->fix,
                  "sysctl -w net.core.default_qdisc=fq && tc qdisc replace dev %s root "
                  "handle 1: mq",
                  ifc->name);
    else
        AUDIT_SET(f->fix, "tc qdisc replace dev %s root fq", ifc->name);
    AUDIT_SET(f->persist, "set 'net.core.default_qdisc = fq' in /etc/sysctl.d/90-netrig.conf: "
                          "interfaces created at boot then get fq");
}
