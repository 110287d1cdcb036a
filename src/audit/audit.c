/* audit: context, reads with recording, findings, the check registry and runner, target,
 * verdict and exit status. */
#define _GNU_SOURCE
#include "audit.h"

#include "audit_cpu.h"
#include "audit_iface.h"
#include "audit_irq.h"
#include "audit_pci.h"
#include "audit_queue.h"
#include "audit_sysctl.h"
#include "hostfs.h"
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct audit_ctx {
    struct audit_opts opts;
    char sysroot[PATH_MAX];
    char record_dir[PATH_MAX];
    struct audit_target target;
    struct audit_host host;
    struct audit_finding *findings;
    size_t n, cap;
    struct audit_finding scratch; /* handed out when the array cannot grow */
    bool oom;
    int record_errno;
    char record_failed[PATH_MAX];
    struct audit_iface *ifaces;
    size_t n_ifaces;
    char only[IF_NAMESIZE]; /* -I, "" = all */
};

static const char *const status_names[AUDIT_STATUS_COUNT] = {"ok", "info", "skipped", "warn",
                                                             "bad"};
static const char *const group_keys[AUDIT_G_COUNT] = {"tcp", "buffers", "queueing", "nic",
                                                      "irq", "pcie",    "cpu"};
static const char *const group_titles[AUDIT_G_COUNT] = {
    "Kernel TCP", "Socket buffers", "Queueing", "NIC", "NUMA and IRQs", "PCIe", "CPU"};

const char *audit_status_name(enum audit_status s)
{
    return s < AUDIT_STATUS_COUNT ? status_names[s] : "?";
}

const char *audit_group_key(enum audit_group g) { return g < AUDIT_G_COUNT ? group_keys[g] : "?"; }

const char *audit_group_title(enum audit_group g)
{
    return g < AUDIT_G_COUNT ? group_titles[g] : "?";
}

/* --- options and context ----------------------------------------------------------------- */

static int is_dir(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int check_sysroot(const char *dir, char *err, size_t errlen)
{
    char proc[PATH_MAX];

    if (!is_dir(dir)) {
        snprintf(err, errlen,
                 "--sysroot '%s' is not a directory: give a tree written by "
                 "'netrig audit --record DIR'",
                 dir);
        return -1;
    }
    snprintf(proc, sizeof(proc), "%s/proc", dir);
    if (!is_dir(proc)) {
        snprintf(err, errlen,
                 "--sysroot '%s' has no proc/ directory: give a tree written by "
                 "'netrig audit --record DIR'",
                 dir);
        return -1;
    }
    return 0;
}

static int dir_is_empty(const char *name, void *arg)
{
    (void)name;
    (void)arg;
    return 1; /* any entry: not empty */
}

static int check_record_dir(const char *dir, char *err, size_t errlen)
{
    int rc;

    if (mkdir(dir, 0755) == 0)
        return 0;
    if (errno != EEXIST || !is_dir(dir)) {
        snprintf(err, errlen,
                 "cannot create --record directory '%s' (%s): give a new directory "
                 "in a writable place",
                 dir, strerror(errno));
        return -1;
    }
    rc = hostfs_list(dir, "", dir_is_empty, NULL);
    if (rc != 0) {
        snprintf(err, errlen, "--record directory '%s' %s: give a new or empty directory", dir,
                 rc > 0 ? "is not empty" : "cannot be read");
        return -1;
    }
    return 0;
}

struct audit_ctx *audit_create(const struct audit_opts *opts, char *err, size_t errlen)
{
    struct audit_ctx *ctx;
    const char *root = opts->sysroot && *opts->sysroot ? opts->sysroot : NULL;

    if (root && check_sysroot(root, err, errlen))
        return NULL;
    if (opts->record_dir) {
        if (root && !strcmp(root, opts->record_dir)) {
            snprintf(err, errlen,
                     "--record '%s' is the --sysroot itself: record into another "
                     "directory",
                     opts->record_dir);
            return NULL;
        }
        if (check_record_dir(opts->record_dir, err, errlen))
            return NULL;
    }
    if (opts->iface &&
        (!*opts->iface || strlen(opts->iface) >= IF_NAMESIZE || strchr(opts->iface, '/'))) {
        snprintf(err, errlen,
                 "interface name '%s' for -I is not valid: give a name from "
                 "'ip link' (at most %d characters)",
                 opts->iface, IF_NAMESIZE - 1);
        return NULL;
    }
    ctx = calloc(1, sizeof(*ctx));
    if (ctx)
        ctx->ifaces = calloc(AUDIT_MAX_IFACES, sizeof(*ctx->ifaces));
    if (!ctx || !ctx->ifaces) {
        free(ctx);
        snprintf(err, errlen, "out of memory starting the audit: free some memory and retry");
        return NULL;
    }
    ctx->opts = *opts;
    if (root)
        snprintf(ctx->sysroot, sizeof(ctx->sysroot), "%s", root);
    if (opts->record_dir)
        snprintf(ctx->record_dir, sizeof(ctx->record_dir), "%s", opts->record_dir);
    ctx->opts.sysroot = root ? ctx->sysroot : NULL;
    ctx->opts.record_dir = opts->record_dir ? ctx->record_dir : NULL;
    if (opts->iface)
        snprintf(ctx->only, sizeof(ctx->only), "%s", opts->iface);
    ctx->opts.iface = NULL; /* ctx->only holds it */
    return ctx;
}

void audit_destroy(struct audit_ctx *ctx)
{
    if (!ctx)
        return;
    free(ctx->findings);
    free(ctx->ifaces);
    free(ctx);
}

const struct audit_finding *audit_findings(const struct audit_ctx *ctx, size_t *n)
{
    *n = ctx->n;
    return ctx->findings;
}

const struct audit_target *audit_get_target(const struct audit_ctx *ctx) { return &ctx->target; }

enum audit_profile audit_get_profile(const struct audit_ctx *ctx) { return ctx->opts.profile; }

const struct audit_host *audit_get_host(const struct audit_ctx *ctx) { return &ctx->host; }

const char *audit_sysroot(const struct audit_ctx *ctx) { return ctx->opts.sysroot; }

bool audit_is_live(const struct audit_ctx *ctx) { return ctx->opts.sysroot == NULL; }

bool audit_recording(const struct audit_ctx *ctx) { return ctx->opts.record_dir != NULL; }

struct audit_iface *audit_ifaces(struct audit_ctx *ctx, size_t *n)
{
    *n = ctx->n_ifaces;
    return ctx->ifaces;
}

bool audit_kernel_at_least(const struct audit_ctx *ctx, int major, int minor)
{
    if (ctx->host.kmajor == 0)
        return true;
    return ctx->host.kmajor > major || (ctx->host.kmajor == major && ctx->host.kminor >= minor);
}

/* --- reading and recording ----------------------------------------------------------------- */

static int mkdir_parents(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0755) && errno != EEXIST) {
            *p = '/';
            return -errno;
        }
        *p = '/';
    }
    return 0;
}

void audit_record(struct audit_ctx *ctx, const char *path, const void *data, size_t len)
{
    char full[PATH_MAX];
    size_t done = 0;
    int fd, rc;

    if (!ctx->opts.record_dir || ctx->record_errno)
        return;
    if (hostfs_path(ctx->opts.record_dir, path, full, sizeof(full)) || strstr(path, "/../")) {
        rc = ENAMETOOLONG;
        goto fail;
    }
    rc = -mkdir_parents(full);
    if (rc)
        goto fail;
    fd = open(full, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        rc = errno;
        goto fail;
    }
    while (done < len) {
        ssize_t w = write(fd, (const char *)data + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = w < 0 ? errno : EIO;
            close(fd);
            goto fail;
        }
        done += (size_t)w;
    }
    if (close(fd) == 0)
        return;
    rc = errno;
fail:
    ctx->record_errno = rc ? rc : EIO;
    snprintf(ctx->record_failed, sizeof(ctx->record_failed), "%s", full);
}

long audit_read(struct audit_ctx *ctx, const char *path, char *buf, size_t len)
{
    long n = hostfs_read(ctx->opts.sysroot, path, buf, len);

    if (n >= 0 && ctx->opts.record_dir) {
        /* hostfs_read dropped the trailing newlines: put one back, as the kernel writes it */
        bool room = (size_t)n + 1 < len;
        if (room)
            buf[n] = '\n';
        audit_record(ctx, path, buf, (size_t)n + room);
        buf[n] = '\0';
    }
    return n;
}

long audit_read_raw(struct audit_ctx *ctx, const char *path, void *buf, size_t len)
{
    long n = hostfs_read_raw(ctx->opts.sysroot, path, buf, len);

    if (n >= 0)
        audit_record(ctx, path, buf, (size_t)n);
    return n;
}

int audit_list(struct audit_ctx *ctx, const char *dir, int (*fn)(const char *name, void *arg),
               void *arg)
{
    return hostfs_list(ctx->opts.sysroot, dir, fn, arg);
}

/* --- parsing ------------------------------------------------------------------------------- */

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n')
        p++;
    return p;
}

static int next_u64(const char **pp, uint64_t *out)
{
    const char *p = *pp;
    uint64_t v = 0;

    if (!isdigit((unsigned char)*p))
        return -EINVAL;
    for (; isdigit((unsigned char)*p); p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -ERANGE;
        v = v * 10 + d;
    }
    if (*p && *p != ' ' && *p != '\t' && *p != '\n')
        return -EINVAL;
    *out = v;
    *pp = p;
    return 0;
}

int audit_parse_u64s(const char *s, uint64_t *out, int n)
{
    const char *p;

    if (!s)
        return -EINVAL;
    p = skip_ws(s);
    for (int i = 0; i < n; i++) {
        int rc = next_u64(&p, &out[i]);
        if (rc)
            return rc;
        p = skip_ws(p);
    }
    return *p ? -EINVAL : 0;
}

int audit_parse_u64(const char *s, uint64_t *out) { return audit_parse_u64s(s, out, 1); }

int audit_parse_i64(const char *s, int64_t *out)
{
    const char *p;
    uint64_t v;
    int rc;
    bool neg;

    if (!s)
        return -EINVAL;
    p = skip_ws(s);
    neg = *p == '-';
    rc = audit_parse_u64(p + neg, &v);
    if (rc)
        return rc;
    if (v > (uint64_t)INT64_MAX)
        return -ERANGE;
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 0;
}

/* --- findings ------------------------------------------------------------------------------ */

void audit_fmt(char *dst, size_t len, const char *fmt, ...)
{
    va_list ap;

    if (!len)
        return;
    va_start(ap, fmt);
    vsnprintf(dst, len, fmt, ap);
    va_end(ap);
    for (unsigned char *p = (unsigned char *)dst; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            *p = '?';
}

struct audit_finding *audit_add(struct audit_ctx *ctx, const char *id, const char *iface,
                                enum audit_group group, enum audit_status status)
{
    struct audit_finding *f;

    if (ctx->n == ctx->cap) {
        size_t cap = ctx->cap ? ctx->cap * 2 : 64;
        struct audit_finding *grown = realloc(ctx->findings, cap * sizeof(*grown));
        if (!grown) {
            ctx->oom = true;
            memset(&ctx->scratch, 0, sizeof(ctx->scratch));
            return &ctx->scratch;
        }
        ctx->findings = grown;
        ctx->cap = cap;
    }
    f = &ctx->findings[ctx->n++];
    memset(f, 0, sizeof(*f));
    snprintf(f->id, sizeof(f->id), "%s", id);
    AUDIT_SET(f->iface, "%s", iface ? iface : "");
    f->group = group;
    f->status = status;
    return f;
}

struct audit_finding *audit_skip_read(struct audit_ctx *ctx, const char *id, const char *iface,
                                      enum audit_group group, const char *path, long rc)
{
    struct audit_finding *f = audit_add(ctx, id, iface, group, AUDIT_SKIPPED);
    int e = (int)-rc;

    if (e == ENOENT || e == ENOTDIR)
        AUDIT_SET(f->reason, "%s is absent (%s%s%s, or not visible in this network namespace)",
                  path, ctx->host.kernel[0] ? "kernel " : "not in this kernel", ctx->host.kernel,
                  ctx->host.kernel[0] ? " lacks it" : "");
    else if (e == EACCES || e == EPERM)
        AUDIT_SET(f->reason, "reading %s needs root: run netrig audit as root", path);
    else
        AUDIT_SET(f->reason, "cannot read %s: %s", path, strerror(e));
    return f;
}

/* The start of hostile text, quoted safely: printable ASCII only, at most 24 characters. */
static void excerpt(const char *text, char *buf, size_t len)
{
    size_t j = 0, i = 0;

    for (; text[i] && j + 1 < len && i < 24; i++)
        buf[j++] = isprint((unsigned char)text[i]) ? text[i] : '?';
    buf[j] = '\0';
    if (text[i] && j + 4 < len)
        snprintf(buf + j, len - j, "...");
}

struct audit_finding *audit_unreadable(struct audit_ctx *ctx, const char *id, const char *iface,
                                       enum audit_group group, const char *path, const char *text,
                                       const char *expected)
{
    struct audit_finding *f = audit_add(ctx, id, iface, group, AUDIT_SKIPPED);
    char ex[40];

    excerpt(text ? text : "", ex, sizeof(ex));
    AUDIT_SET(f->current, "unreadable");
    AUDIT_SET(f->reason, "cannot parse %s ('%s'): expected %s", path, ex, expected);
    return f;
}

void audit_fix_sysctl(struct audit_finding *f, const char *name, const char *value)
{
    bool spaces = strchr(value, ' ') != NULL;

    AUDIT_SET(f->fix, "sysctl -w %s=%s%s%s", name, spaces ? "\"" : "", value, spaces ? "\"" : "");
    AUDIT_SET(f->persist, "add '%s = %s' to /etc/sysctl.d/90-netrig.conf", name, value);
    f->persistent = false;
}

/* --- the run ------------------------------------------------------------------------------- */

static void read_host_facts(struct audit_ctx *ctx)
{
    char buf[128];
    uint64_t fwd;

    if (audit_read(ctx, "/proc/sys/kernel/osrelease", buf, sizeof(buf)) > 0) {
        int maj = 0, min = 0;
        AUDIT_SET(ctx->host.kernel, "%.100s", buf);
        if (sscanf(buf, "%d.%d", &maj, &min) == 2 && maj > 0 && maj < 100 && min >= 0 &&
            min < 1000) {
            ctx->host.kmajor = maj;
            ctx->host.kminor = min;
        }
    }
    if (audit_read(ctx, "/proc/sys/net/ipv4/ip_forward", buf, sizeof(buf)) > 0 &&
        !audit_parse_u64(buf, &fwd))
        ctx->host.forwarding = fwd != 0;
}

static void set_target(struct audit_ctx *ctx)
{
    struct audit_target *t = &ctx->target;
    int64_t best = -1;
    const char *best_name = NULL;

    for (size_t i = 0; i < ctx->n_ifaces; i++) {
        const struct audit_iface *ifc = &ctx->ifaces[i];
        if (ifc->audited && ifc->speed_mbps > best) {
            best = ifc->speed_mbps;
            best_name = ifc->name;
        }
    }
    if (ctx->opts.rate_bps) {
        t->rate_bps = (double)ctx->opts.rate_bps;
        snprintf(t->rate_source, sizeof(t->rate_source), "--rate");
    } else if (best > 0) {
        t->rate_bps = (double)best * 1e6;
        snprintf(t->rate_source, sizeof(t->rate_source), "link speed of %s", best_name);
    } else {
        t->rate_bps = (double)AUDIT_DEFAULT_RATE_BPS;
        snprintf(t->rate_source, sizeof(t->rate_source),
                 "default: no link speed known (pass --rate)");
    }
    if (ctx->opts.rtt_ns) {
        t->rtt_s = (double)ctx->opts.rtt_ns / 1e9;
        snprintf(t->rtt_source, sizeof(t->rtt_source), "--rtt");
    } else {
        t->rtt_s = (double)AUDIT_DEFAULT_RTT_NS / 1e9;
        snprintf(t->rtt_source, sizeof(t->rtt_source), "default 1 ms (pass --rtt)");
    }
    t->bdp_bytes = t->rate_bps * t->rtt_s / 8;
}

/* The registry: host-wide checks, then per-interface checks for each audited interface,
 * then the host-wide checks that read interface facts. Order = order in the JSON output. */
static void (*const host_checks_first[])(struct audit_ctx *) = {
    audit_sysctl_tcp,
    audit_sysctl_buffers,
    audit_queue_host,
};
static void (*const iface_checks[])(struct audit_ctx *, struct audit_iface *) = {
    audit_iface_checks,
    audit_queue_iface,
    audit_irq_iface,
    audit_pci_iface,
};
static void (*const host_checks_last[])(struct audit_ctx *) = {
    audit_irq_host,
    audit_cpu_host,
};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

int audit_run(struct audit_ctx *ctx, char *err, size_t errlen)
{
    read_host_facts(ctx);
    if (audit_iface_discover(ctx, ctx->only[0] ? ctx->only : NULL, ctx->ifaces, AUDIT_MAX_IFACES,
                             &ctx->n_ifaces, err, errlen))
        return -1;
    for (size_t i = 0; i < ctx->n_ifaces; i++) {
        struct audit_iface *ifc = &ctx->ifaces[i];
        if (!ifc->audited)
            continue;
        audit_iface_query(ctx, ifc);
        if (ifc->have_mtu && ifc->mtu > 1500)
            ctx->host.jumbo = true;
    }
    set_target(ctx);
    for (size_t c = 0; c < COUNT_OF(host_checks_first); c++)
        host_checks_first[c](ctx);
    for (size_t i = 0; i < ctx->n_ifaces; i++) {
        struct audit_iface *ifc = &ctx->ifaces[i];
        if (!ifc->audited) {
            struct audit_finding *f =
                audit_add(ctx, "nic.interface", ifc->name, AUDIT_G_NIC, AUDIT_SKIPPED);
            AUDIT_SET(f->reason, "%s", ifc->skip_reason);
            continue;
        }
        for (size_t c = 0; c < COUNT_OF(iface_checks); c++)
            iface_checks[c](ctx, ifc);
    }
    for (size_t c = 0; c < COUNT_OF(host_checks_last); c++)
        host_checks_last[c](ctx);
    if (ctx->oom) {
        snprintf(err, errlen, "out of memory while auditing: free some memory and retry");
        return -1;
    }
    if (ctx->record_errno) {
        snprintf(err, errlen,
                 "cannot write '%s' for --record (%s): check the directory's space "
                 "and permissions",
                 ctx->record_failed, strerror(ctx->record_errno));
        return -1;
    }
    return 0;
}

void audit_count(const struct audit_ctx *ctx, size_t counts[AUDIT_STATUS_COUNT])
{
    memset(counts, 0, AUDIT_STATUS_COUNT * sizeof(counts[0]));
    for (size_t i = 0; i < ctx->n; i++)
        counts[ctx->findings[i].status]++;
}

int audit_exit_status(const struct audit_ctx *ctx)
{
    size_t c[AUDIT_STATUS_COUNT];

    audit_count(ctx, c);
    return c[AUDIT_WARN] || c[AUDIT_BAD] ? 1 : 0;
}

void audit_verdict(const struct audit_ctx *ctx, char *buf, size_t len)
{
    size_t c[AUDIT_STATUS_COUNT];
    char rate[32], rtt[32], what[64];

    audit_count(ctx, c);
    units_format_rate(ctx->target.rate_bps, rate, sizeof(rate));
    units_format_duration(ctx->target.rtt_s, rtt, sizeof(rtt));
    if (c[AUDIT_BAD] && c[AUDIT_WARN])
        snprintf(what, sizeof(what), "fix %zu bad, %zu warn", c[AUDIT_BAD], c[AUDIT_WARN]);
    else if (c[AUDIT_BAD] || c[AUDIT_WARN])
        snprintf(what, sizeof(what), "fix %zu %s", c[AUDIT_BAD] ? c[AUDIT_BAD] : c[AUDIT_WARN],
                 c[AUDIT_BAD] ? "bad" : "warn");
    else
        snprintf(what, sizeof(what), "nothing to fix");
    snprintf(buf, len, "%s for %s x %s (%zu ok, %zu info, %zu skipped)", what, rate, rtt,
             c[AUDIT_OK], c[AUDIT_INFO], c[AUDIT_SKIPPED]);
}
