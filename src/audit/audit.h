/* audit: the read-only host audit behind `netrig audit`. It owns the check registry and
 * runner, the findings, the target (rate x RTT and the BDP it implies), the verdict and the
 * exit status. Checks live in audit_sysctl.c, audit_queue.c, audit_iface.c, audit_irq.c,
 * audit_pci.c and audit_cpu.c; each reads the host only through audit_read* (sysroot-aware,
 * copied into the --record directory) and adds findings with audit_add. Nothing here writes
 * to the host. */
#ifndef NETRIG_AUDIT_H
#define NETRIG_AUDIT_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Ordered from harmless to serious; the verdict is the worst status seen. */
enum audit_status {
    AUDIT_OK,
    AUDIT_INFO,
    AUDIT_SKIPPED,
    AUDIT_WARN,
    AUDIT_BAD,
    AUDIT_STATUS_COUNT
};

/* Report groups, in the order the text report prints them. */
enum audit_group {
    AUDIT_G_TCP,     /* kernel TCP */
    AUDIT_G_BUFFERS, /* socket buffers */
    AUDIT_G_QUEUE,   /* queueing */
    AUDIT_G_NIC,     /* NIC */
    AUDIT_G_IRQ,     /* NUMA and IRQs */
    AUDIT_G_PCIE,    /* PCIe */
    AUDIT_G_CPU,     /* CPU */
    AUDIT_G_COUNT,
};

enum audit_profile { AUDIT_PROFILE_THROUGHPUT, AUDIT_PROFILE_LATENCY };

#define AUDIT_ID_LEN           40
#define AUDIT_VALUE_LEN        160
#define AUDIT_TEXT_LEN         480
#define AUDIT_DEFAULT_RTT_NS   1000000ULL     /* 1 ms: a data-centre path */
#define AUDIT_DEFAULT_RATE_BPS 10000000000ULL /* when no link speed is known */
#define AUDIT_MAX_IFACES       256

struct audit_finding {
    char id[AUDIT_ID_LEN];   /* stable, e.g. "sysctl.tcp_rmem_max", "nic.lro" */
    char iface[IF_NAMESIZE]; /* "" for host-wide findings */
    enum audit_group group;
    enum audit_status status;
    char current[AUDIT_VALUE_LEN];     /* "" = not known */
    char recommended[AUDIT_VALUE_LEN]; /* "" = nothing to recommend */
    char reason[AUDIT_TEXT_LEN];       /* one line, with the arithmetic */
    char fix[AUDIT_TEXT_LEN];          /* the command that fixes it, "" = none */
    char persist[AUDIT_TEXT_LEN];      /* how to make the fix survive a reboot, "" = n/a */
    bool persistent;                   /* the fix command itself survives a reboot */
    bool per_netns;                    /* the setting is per network namespace */
};

struct audit_opts {
    const char *sysroot;    /* NULL or "" = this host */
    const char *record_dir; /* NULL = do not record */
    const char *iface;      /* NULL = every physical interface that is up */
    uint64_t rate_bps;      /* 0 = the fastest audited link */
    uint64_t rtt_ns;        /* 0 = AUDIT_DEFAULT_RTT_NS */
    enum audit_profile profile;
};

struct audit_target {
    double rate_bps, rtt_s, bdp_bytes;
    char rate_source[96]; /* "--rate", "link speed of eth3", "default (no link speed known)" */
    char rtt_source[64];
};

struct audit_ctx;
struct audit_iface;

/* Checks the options (sysroot readable, record directory creatable and empty). On failure
 * returns NULL with one line in err naming the value and what to do. */
struct audit_ctx *audit_create(const struct audit_opts *opts, char *err, size_t errlen);
void audit_destroy(struct audit_ctx *ctx);

/* Runs every check. Returns 0, or -1 with err filled when the audit itself failed (an
 * interface named with -I does not exist, out of memory, the record directory unwritable). */
int audit_run(struct audit_ctx *ctx, char *err, size_t errlen);

const struct audit_finding *audit_findings(const struct audit_ctx *ctx, size_t *n);
const struct audit_target *audit_get_target(const struct audit_ctx *ctx);
enum audit_profile audit_get_profile(const struct audit_ctx *ctx);
/* counts[status] over all findings */
void audit_count(const struct audit_ctx *ctx, size_t counts[AUDIT_STATUS_COUNT]);
/* 0 nothing at warn or bad, 1 otherwise */
int audit_exit_status(const struct audit_ctx *ctx);
/* One line: "2 bad, 5 warn, ...: fix ..." */
void audit_verdict(const struct audit_ctx *ctx, char *buf, size_t len);

const char *audit_status_name(enum audit_status s);
const char *audit_group_key(enum audit_group g);   /* "tcp", "buffers", ... (JSON) */
const char *audit_group_title(enum audit_group g); /* "Kernel TCP", ... (text) */

/* --- for the check modules ------------------------------------------------------------ */

/* Host facts gathered before the checks run. */
struct audit_host {
    char kernel[128];   /* /proc/sys/kernel/osrelease, "" if unreadable */
    int kmajor, kminor; /* 0.0 if unknown */
    bool forwarding;    /* net.ipv4.ip_forward = 1 */
    bool jumbo;         /* an audited interface has MTU > 1500 */
};

const struct audit_host *audit_get_host(const struct audit_ctx *ctx);
/* The kernel is at least major.minor (true when the version is unknown). */
bool audit_kernel_at_least(const struct audit_ctx *ctx, int major, int minor);
const char *audit_sysroot(const struct audit_ctx *ctx);
bool audit_is_live(const struct audit_ctx *ctx); /* no --sysroot: ioctls and libpci run */
struct audit_iface *audit_ifaces(struct audit_ctx *ctx, size_t *n);

/* Reads sysroot/path like hostfs_read; on success also copies it into the record directory.
 * Returns the length or a negative errno. */
long audit_read(struct audit_ctx *ctx, const char *path, char *buf, size_t len);
/* Binary-safe variant (hostfs_read_raw), recorded the same way. */
long audit_read_raw(struct audit_ctx *ctx, const char *path, void *buf, size_t len);
/* Lists a directory (hostfs_list). Entries are not recorded; record what you read. */
int audit_list(struct audit_ctx *ctx, const char *dir, int (*fn)(const char *name, void *arg),
               void *arg);
/* Writes data as record_dir/path (the checks' answers that are not files, e.g. ethtool).
 * No-op without --record. */
void audit_record(struct audit_ctx *ctx, const char *path, const void *data, size_t len);
bool audit_recording(const struct audit_ctx *ctx);

/* Strict parsers for kernel text: decimal, whitespace-separated, nothing else.
 * Return 0, -EINVAL (garbage, empty, wrong count) or -ERANGE (too large). */
int audit_parse_u64(const char *s, uint64_t *out);
int audit_parse_i64(const char *s, int64_t *out);
int audit_parse_u64s(const char *s, uint64_t *out, int n);

/* Adds a finding and returns it for the caller to fill (never NULL: on allocation failure
 * a scratch finding is returned and the audit fails). */
struct audit_finding *audit_add(struct audit_ctx *ctx, const char *id, const char *iface,
                                enum audit_group group, enum audit_status status);
/* printf into a finding field; non-printable bytes become '?'. */
void audit_fmt(char *dst, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define AUDIT_SET(field, ...) audit_fmt((field), sizeof(field), __VA_ARGS__)

/* A check that could not read its input: status skipped, with the reason for rc
 * (absent, needs root, ...). */
struct audit_finding *audit_skip_read(struct audit_ctx *ctx, const char *id, const char *iface,
                                      enum audit_group group, const char *path, long rc);
/* A check whose input was there but could not be parsed: status skipped, current
 * "unreadable", the reason quotes the start of the text and what was expected. */
struct audit_finding *audit_unreadable(struct audit_ctx *ctx, const char *id, const char *iface,
                                       enum audit_group group, const char *path, const char *text,
                                       const char *expected);
/* Fills fix and persist for a sysctl: "sysctl -w name=value" and the sysctl.d line. */
void audit_fix_sysctl(struct audit_finding *f, const char *name, const char *value);

#endif
