/* tune_plan: the audit's fix commands parsed into values to write, with the values read now. */
#define _GNU_SOURCE
#include "tune_plan.h"

#include "cpulist.h"
#include "hostfs.h"
#include "hostwr.h"
#include "nicset.h"
#include "tune_risk.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_TOKENS 40
#define TOKEN_LEN  TUNE_VALUE_LEN

/* ---- values ------------------------------------------------------------------------------ */

static bool hexish(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isxdigit((unsigned char)s[i]) && s[i] != ',')
            return false;
    return n > 0;
}

/* Compares one whitespace-free token: masks and numbers without commas and leading zeros. */
static bool same_token(const char *a, size_t na, const char *b, size_t nb)
{
    char x[TUNE_VALUE_LEN], y[TUNE_VALUE_LEN];
    size_t nx = 0, ny = 0;

    if (!hexish(a, na) || !hexish(b, nb))
        return na == nb && !memcmp(a, b, na);
    for (size_t i = 0; i < na && nx < sizeof(x) - 1; i++)
        if (a[i] != ',' && (nx || a[i] != '0'))
            x[nx++] = (char)tolower((unsigned char)a[i]);
    for (size_t i = 0; i < nb && ny < sizeof(y) - 1; i++)
        if (b[i] != ',' && (ny || b[i] != '0'))
            y[ny++] = (char)tolower((unsigned char)b[i]);
    return nx == ny && !memcmp(x, y, nx);
}

bool tune_plan_same_value(const char *a, const char *b)
{
    for (;;) {
        while (isspace((unsigned char)*a))
            a++;
        while (isspace((unsigned char)*b))
            b++;
        if (!*a || !*b)
            return !*a && !*b;
        size_t na = strcspn(a, " \t\r\n"), nb = strcspn(b, " \t\r\n");
        if (!same_token(a, na, b, nb))
            return false;
        a += na;
        b += nb;
    }
}

void tune_plan_squash(const char *in, char *out, size_t len)
{
    size_t n = 0;
    bool space = false;

    if (!len)
        return;
    for (; *in && n + 1 < len; in++) {
        if (isspace((unsigned char)*in)) {
            space = n > 0;
            continue;
        }
        if (space && n + 2 < len)
            out[n++] = ' ';
        space = false;
        out[n++] = *in;
    }
    out[n] = '\0';
}

/* ---- fix commands ------------------------------------------------------------------------ */

/* Splits a shell-like segment into words: blanks separate, '...' and "..." group (quotes
 * dropped), '>' is its own word. Returns the count, or -1 on an unclosed quote or overflow. */
static int split_words(const char *s, char words[][TOKEN_LEN], int max)
{
    int n = 0;

    for (;;) {
        size_t len = 0;
        char quote = 0;
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            return n;
        if (n >= max)
            return -1;
        if (*s == '>') {
            snprintf(words[n++], TOKEN_LEN, ">");
            s++;
            continue;
        }
        while (*s && (quote || (*s != ' ' && *s != '\t' && *s != '>'))) {
            if (!quote && (*s == '"' || *s == '\'')) {
                quote = *s++;
                continue;
            }
            if (quote && *s == quote) {
                quote = 0;
                s++;
                continue;
            }
            if (len + 1 >= TOKEN_LEN)
                return -1;
            words[n][len++] = *s++;
        }
        if (quote)
            return -1;
        words[n++][len] = '\0';
    }
}

static bool all_of(const char *s, const char *set) { return *s && strspn(s, set) == strlen(s); }

#define DIGITS    "0123456789"
#define IFCHARS   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:@-"
#define SYSCHARS  "abcdefghijklmnopqrstuvwxyz0123456789_./-"
#define MASKCHARS "0123456789abcdefABCDEF,-"

static bool printable_value(const char *s)
{
    for (; *s; s++)
        if (!isprint((unsigned char)*s) || *s == '"' || *s == '\'' || *s == '\\')
            return false;
    return true;
}

/* net.ipv4.tcp_rmem -> /proc/sys/net/ipv4/tcp_rmem ('/' in a name stands for a '.') */
static int sysctl_path(const char *name, char *path, size_t len)
{
    int n = snprintf(path, len, "/proc/sys/%s", name);

    if (n < 0 || (size_t)n >= len)
        return -1;
    for (char *p = path + strlen("/proc/sys/"); *p; p++)
        *p = *p == '.' ? '/' : (*p == '/' ? '.' : *p);
    return 0;
}

static struct tune_step *next_step(struct tune_step *steps, size_t max, size_t *n)
{
    if (*n >= max)
        return NULL;
    memset(&steps[*n], 0, sizeof(steps[*n]));
    return &steps[(*n)++];
}

/* sysctl -w a=b c="d e" */
static int parse_sysctl(char w[][TOKEN_LEN], int nw, struct tune_step *steps, size_t max, size_t *n)
{
    size_t start = *n;

    if (nw < 3 || strcmp(w[1], "-w"))
        return -1;
    for (int i = 2; i < nw; i++) {
        char *eq = strchr(w[i], '=');
        struct tune_step *s;
        if (!eq || eq == w[i])
            goto bad;
        *eq = '\0';
        if (!all_of(w[i], SYSCHARS) || strstr(w[i], "..") || !printable_value(eq + 1) || !eq[1] ||
            !(s = next_step(steps, max, n)))
            goto bad;
        s->kind = TUNE_STEP_SYSCTL;
        snprintf(s->name, sizeof(s->name), "%s", w[i]);
        snprintf(s->value, sizeof(s->value), "%s", eq + 1);
        if (sysctl_path(s->name, s->path, sizeof(s->path)))
            goto bad;
    }
    return 0;
bad:
    *n = start;
    return -1;
}

/* ip link set [dev] IF txqueuelen N | mtu N */
static int parse_ip_link(char w[][TOKEN_LEN], int nw, struct tune_step *steps, size_t max,
                         size_t *n)
{
    int i = 3;
    const char *attr;
    struct tune_step *s;

    if (nw < 6 || strcmp(w[1], "link") || strcmp(w[2], "set"))
        return -1;
    if (!strcmp(w[i], "dev"))
        i++;
    if (nw != i + 3 || !all_of(w[i], IFCHARS) || strlen(w[i]) >= IF_NAMESIZE ||
        !all_of(w[i + 2], DIGITS) || strlen(w[i + 2]) > 9)
        return -1;
    if (!strcmp(w[i + 1], "txqueuelen"))
        attr = "tx_queue_len";
    else if (!strcmp(w[i + 1], "mtu"))
        attr = "mtu";
    else
        return -1;
    if (!(s = next_step(steps, max, n)))
        return -1;
    s->kind = TUNE_STEP_SYSFS;
    snprintf(s->name, sizeof(s->name), "%s %s", w[i], w[i + 1]);
    snprintf(s->path, sizeof(s->path), "/sys/class/net/%s/%s", w[i], attr);
    snprintf(s->value, sizeof(s->value), "%s", w[i + 2]);
    return 0;
}

/* echo MASK > /sys/class/net/IF/queues/rx-N/rps_cpus, or > /proc/irq/N/smp_affinity_list */
static int parse_echo(char w[][TOKEN_LEN], int nw, struct tune_step *steps, size_t max, size_t *n)
{
    const char *p;
    struct tune_step *s;
    char ifname[IF_NAMESIZE + 1];
    unsigned q, irq;
    int used = 0;

    if (nw != 4 || strcmp(w[2], ">") || !all_of(w[1], MASKCHARS) || strstr(w[3], ".."))
        return -1;
    p = w[3];
    if (sscanf(p, "/sys/class/net/%16[^/]/queues/rx-%u/rps_cpus%n", ifname, &q, &used) == 2 &&
        p[used] == '\0' && all_of(ifname, IFCHARS) && strlen(ifname) < IF_NAMESIZE &&
        !strchr(w[1], '-')) {
        if (!(s = next_step(steps, max, n)))
            return -1;
        snprintf(s->name, sizeof(s->name), "%s rx-%u rps_cpus", ifname, q);
    } else if (sscanf(p, "/proc/irq/%u/smp_affinity_list%n", &irq, &used) == 1 && p[used] == '\0') {
        if (!(s = next_step(steps, max, n)))
            return -1;
        snprintf(s->name, sizeof(s->name), "irq %u affinity", irq);
    } else {
        return -1;
    }
    s->kind = TUNE_STEP_SYSFS;
    snprintf(s->path, sizeof(s->path), "%s", p);
    snprintf(s->value, sizeof(s->value), "%s", w[1]);
    return 0;
}

/* cpupower frequency-set -g GOV */
static int parse_cpupower(char w[][TOKEN_LEN], int nw, struct tune_step *steps, size_t max,
                          size_t *n)
{
    struct tune_step *s;

    if (nw != 4 || strcmp(w[1], "frequency-set") || strcmp(w[2], "-g") ||
        !all_of(w[3], "abcdefghijklmnopqrstuvwxyz_") || !(s = next_step(steps, max, n)))
        return -1;
    s->kind = TUNE_STEP_GOVERNOR;
    snprintf(s->name, sizeof(s->name), "governor");
    snprintf(s->value, sizeof(s->value), "%s", w[3]);
    return 0;
}

/* ethtool -G|-C|-L|-A|-K IF key value ... */
static int parse_ethtool(char w[][TOKEN_LEN], int nw, struct tune_step *steps, size_t max,
                         size_t *n)
{
    int g = nw >= 5 && w[1][0] == '-' && w[1][2] == '\0' ? nicset_group_from_option(w[1][1]) : -1;
    struct tune_step *s;
    char value[TUNE_VALUE_LEN] = "";

    if (g < 0 || !all_of(w[2], IFCHARS) || strchr(w[2], ':') || strlen(w[2]) >= IF_NAMESIZE)
        return -1;
    for (int i = 3; i < nw; i++)
        snprintf(value + strlen(value), sizeof(value) - strlen(value), "%s%s", i > 3 ? " " : "",
                 w[i]);
    if (nicset_check((enum nicset_group)g, value) || !(s = next_step(steps, max, n)))
        return -1;
    s->kind = TUNE_STEP_ETHTOOL;
    snprintf(s->name, sizeof(s->name), "%s %s", w[2], nicset_group_name((enum nicset_group)g));
    snprintf(s->path, sizeof(s->path), "ethtool:%s:%s", w[2],
             nicset_group_name((enum nicset_group)g));
    snprintf(s->value, sizeof(s->value), "%s", value);
    return 0;
}

/* One `&&`-separated part: 0 parsed (steps added), 1 recognized but nothing to write
 * (modprobe: writing the sysctl as root loads the module), -1 not something netrig applies. */
static int parse_segment(const char *seg, struct tune_step *steps, size_t max, size_t *n)
{
    char(*words)[TOKEN_LEN] = calloc(MAX_TOKENS, TOKEN_LEN);
    int nw, rc = -1;

    if (!words)
        return -1;
    nw = split_words(seg, words, MAX_TOKENS);
    if (nw <= 0)
        rc = -1;
    else if (!strcmp(words[0], "sysctl"))
        rc = parse_sysctl(words, nw, steps, max, n);
    else if (!strcmp(words[0], "modprobe") && nw == 2 && all_of(words[1], SYSCHARS))
        rc = 1;
    else if (!strcmp(words[0], "ip"))
        rc = parse_ip_link(words, nw, steps, max, n);
    else if (!strcmp(words[0], "echo"))
        rc = parse_echo(words, nw, steps, max, n);
    else if (!strcmp(words[0], "cpupower"))
        rc = parse_cpupower(words, nw, steps, max, n);
    else if (!strcmp(words[0], "ethtool"))
        rc = parse_ethtool(words, nw, steps, max, n);
    free(words);
    return rc;
}

static void append_manual(char *manual, size_t len, const char *seg, size_t seglen)
{
    size_t used = strlen(manual);

    if (used && used + 4 < len) {
        memcpy(manual + used, " && ", 4);
        used += 4;
        manual[used] = '\0';
    }
    if (used + seglen >= len)
        seglen = len - used - 1;
    memcpy(manual + used, seg, seglen);
    manual[used + seglen] = '\0';
}

int tune_plan_parse_fix(const char *fix, struct tune_step *steps, size_t max, char *manual,
                        size_t manual_len)
{
    size_t n = 0;
    const char *p = fix;

    manual[0] = '\0';
    if (!fix || !*fix)
        return 0;
    while (*p) {
        const char *end = p;
        char quote = 0, seg[AUDIT_TEXT_LEN];
        size_t len;
        while (*end && (quote || strncmp(end, "&&", 2))) {
            if (!quote && (*end == '"' || *end == '\''))
                quote = *end;
            else if (quote && *end == quote)
                quote = 0;
            end++;
        }
        while (*p == ' ')
            p++;
        len = (size_t)(end - p);
        while (len && p[len - 1] == ' ')
            len--;
        if (len >= sizeof(seg))
            return -1;
        memcpy(seg, p, len);
        seg[len] = '\0';
        if (len && parse_segment(seg, steps, max, &n) < 0)
            append_manual(manual, manual_len, seg, len);
        p = *end ? end + 2 : end;
    }
    return (int)n;
}

/* ---- reading and writing a change's value ------------------------------------------------- */

static const char *const kind_names[] = {"sysctl", "sysfs", "ethtool"};

const char *tune_plan_kind_name(enum tune_kind k)
{
    return (unsigned)k <= TUNE_ETHTOOL ? kind_names[k] : "?";
}

int tune_plan_kind_from_name(const char *name)
{
    for (int k = 0; k <= TUNE_ETHTOOL; k++)
        if (!strcmp(name, kind_names[k]))
            return k;
    return -1;
}

/* "ethtool:eth0:ring" -> "eth0", NICSET_RING */
static int ethtool_path(const char *path, char *ifname, int *group)
{
    char g[16];
    int used = 0;

    if (sscanf(path, "ethtool:%15[^:]:%15[a-z]%n", ifname, g, &used) != 2 || path[used])
        return -EINVAL;
    *group = nicset_group_from_name(g);
    return *group < 0 ? -EINVAL : 0;
}

long tune_plan_read(const char *sysroot, enum tune_kind kind, const char *path, const char *like,
                    char *buf, size_t len)
{
    char ifname[IF_NAMESIZE];
    int g, rc;

    if (kind != TUNE_ETHTOOL)
        return hostfs_read(sysroot, path, buf, len);
    if (sysroot && *sysroot)
        return -EXDEV; /* no NIC to ask under a sysroot */
    if ((rc = ethtool_path(path, ifname, &g)))
        return rc;
    rc = nicset_get(ifname, (enum nicset_group)g, like, buf, len);
    return rc ? rc : (long)strlen(buf);
}

int tune_plan_write(const char *sysroot, enum tune_kind kind, const char *path, const char *value)
{
    char ifname[IF_NAMESIZE];
    int g, rc;

    if (kind != TUNE_ETHTOOL)
        return hostwr_write(sysroot, path, value);
    if (sysroot && *sysroot)
        return -EXDEV;
    if ((rc = ethtool_path(path, ifname, &g)))
        return rc;
    return nicset_set(ifname, (enum nicset_group)g, value);
}

/* ---- where a change can be made ---------------------------------------------------------- */

/* Global sysctls: one value for the whole host, absent or read-only in a child namespace. */
static const char *const global_sysctls[] = {
    "net.core.rmem_max",
    "net.core.wmem_max",
    "net.core.rmem_default",
    "net.core.wmem_default",
    "net.core.netdev_max_backlog",
    "net.core.netdev_budget",
    "net.core.netdev_budget_usecs",
    "net.core.default_qdisc",
    "net.core.busy_read",
    "net.core.busy_poll",
    "net.core.rps_sock_flow_entries",
    "net.ipv4.tcp_mem",
    "net.ipv4.udp_mem",
    NULL,
};

bool tune_plan_is_global(const char *name)
{
    for (size_t i = 0; global_sysctls[i]; i++)
        if (!strcmp(name, global_sysctls[i]))
            return true;
    return false;
}

#define CC_NAME "net.ipv4.tcp_congestion_control"

static void explain_cc(const char *sysroot, const struct tune_change *c, char *buf, size_t len)
{
    char allowed[TUNE_VALUE_LEN] = "";

    if (hostfs_read(sysroot, "/proc/sys/net/ipv4/tcp_allowed_congestion_control", allowed,
                    sizeof(allowed)) < 0)
        snprintf(allowed, sizeof(allowed), "unknown");
    snprintf(buf, len,
             "%s=%s is refused inside this network namespace: only "
             "tcp_allowed_congestion_control (%s) may be chosen there; add %s to "
             "net.ipv4.tcp_allowed_congestion_control on the host",
             c->name, c->new_value, allowed, c->new_value);
}

static void explain_absent(int child, const struct tune_change *c, char *buf, size_t len)
{
    if (c->kind == TUNE_SYSCTL && tune_plan_is_global(c->name))
        snprintf(buf, len, "%s is global and %s: set it on the host", c->name,
                 child == 1 ? "not visible inside this network namespace"
                            : "not visible here (a network namespace, or a kernel without it)");
    else if (c->kind == TUNE_SYSCTL)
        snprintf(buf, len, "%s does not exist in this kernel: nothing to set", c->name);
    else if (c->iface[0])
        snprintf(buf, len, "%s does not exist here: is %s in this network namespace?", c->path,
                 c->iface);
    else
        snprintf(buf, len, "%s does not exist here: nothing to set", c->path);
}

static void explain_ethtool(const struct tune_change *c, int err, char *buf, size_t len)
{
    if (err == -EXDEV)
        snprintf(buf, len,
                 "NIC driver settings change through ethtool ioctls on the live host "
                 "only, not under --sysroot");
    else if (err == -ENODEV)
        snprintf(buf, len, "%s is not an interface in this network namespace", c->iface);
    else if (err == -EOPNOTSUPP)
        snprintf(buf, len,
                 "the driver of %s does not let ethtool read or set that: run '%s' "
                 "to see what it says",
                 c->iface, c->command);
    else if (err == -EINVAL)
        snprintf(buf, len, "the driver of %s refused '%s' for %s", c->iface, c->new_value, c->name);
    else if (err == -EPERM || err == -EACCES)
        snprintf(buf, len, "not allowed to change %s: run netrig tune --apply as root", c->name);
    else if (err == -EBUSY)
        snprintf(buf, len, "the driver of %s refused %s: the device is busy", c->iface, c->name);
    else
        snprintf(buf, len, "ethtool request for %s failed: %s", c->name, strerror(-err));
}

void tune_plan_explain(const char *sysroot, int child, const struct tune_change *c, int err,
                       char *buf, size_t len)
{
    mode_t mode = 0644;
    bool ro =
        c->kind != TUNE_ETHTOOL && hostwr_mode(sysroot, c->path, &mode) == 0 && !(mode & 0222);

    if (c->kind == TUNE_ETHTOOL) {
        explain_ethtool(c, err, buf, len);
        return;
    }
    if (err == -ENOENT && !strcmp(c->name, CC_NAME) && child != 1)
        snprintf(buf, len,
                 "congestion control %s is not available: this kernel has no "
                 "tcp_%s module",
                 c->new_value, c->new_value);
    else if (err == -ENOENT)
        explain_absent(child, c, buf, len);
    else if (!strcmp(c->name, CC_NAME) && (err == -EPERM || err == -EACCES) && child != 0)
        explain_cc(sysroot, c, buf, len);
    else if ((err == -EACCES || err == -EPERM || err == -EROFS) && c->kind == TUNE_SYSCTL &&
             tune_plan_is_global(c->name) && (ro || child == 1))
        snprintf(buf, len,
                 "%s is global and read-only inside this network namespace: set it "
                 "on the host",
                 c->name);
    else if ((err == -EACCES || err == -EPERM) && ro)
        snprintf(buf, len, "%s is read-only here (mode %04o): change it where it is writable",
                 c->name, (unsigned)mode);
    else if (err == -EACCES || err == -EPERM)
        snprintf(buf, len, "not allowed to write %s (%s): run netrig tune --apply as root", c->path,
                 strerror(-err));
    else if (err == -EROFS)
        snprintf(buf, len,
                 "%s is on a read-only file system here (a container?): change it "
                 "on the host",
                 c->path);
    else if (err == -EINVAL)
        snprintf(buf, len, "the kernel refused %s for %s (invalid value)", c->new_value, c->name);
    else if (err == -EBUSY)
        snprintf(buf, len, "the kernel refused %s for %s: the device is busy", c->new_value,
                 c->name);
    else
        snprintf(buf, len, "writing %s failed: %s", c->path, strerror(-err));
}

static bool cc_allowed(const char *sysroot, const char *cc)
{
    char list[TUNE_VALUE_LEN];
    size_t n = strlen(cc);

    if (hostfs_read(sysroot, "/proc/sys/net/ipv4/tcp_allowed_congestion_control", list,
                    sizeof(list)) < 0)
        return true; /* cannot tell: let the kernel decide */
    for (const char *p = list; (p = strstr(p, cc)) != NULL; p += n)
        if ((p == list || isspace((unsigned char)p[-1])) && (!p[n] || isspace((unsigned char)p[n])))
            return true;
    return false;
}

/* Marks a change netrig will not attempt here, and why. */
static void check_here(const char *sysroot, int child, struct tune_change *c, long read_rc)
{
    mode_t mode;

    if (read_rc == -ENOENT)
        tune_plan_explain(sysroot, child, c, -ENOENT, c->blocked, sizeof(c->blocked));
    else if (c->kind == TUNE_SYSFS && child == 1 && strncmp(c->path, "/sys/class/net/", 15))
        snprintf(c->blocked, sizeof(c->blocked),
                 "%s is host-wide: netrig does not change it "
                 "from inside a network namespace; run netrig tune on the host",
                 c->name);
    else if (hostwr_mode(sysroot, c->path, &mode) == 0 && !(mode & 0222))
        tune_plan_explain(sysroot, child, c, -EACCES, c->blocked, sizeof(c->blocked));
    else if (child == 1 && !strcmp(c->name, CC_NAME) && !cc_allowed(sysroot, c->new_value))
        explain_cc(sysroot, c, c->blocked, sizeof(c->blocked));
}

/* ---- building ---------------------------------------------------------------------------- */

/* Room for one more element in an array of n with capacity *cap. */
static int grow(void **arr, size_t n, size_t *cap, size_t size)
{
    void *p;

    if (n < *cap)
        return 0;
    p = realloc(*arr, (*cap ? *cap * 2 : 16) * size);
    if (!p)
        return -1;
    *arr = p;
    *cap = *cap ? *cap * 2 : 16;
    return 0;
}

static const struct tune_change *find_path(const struct tune_plan *plan, const char *path)
{
    for (size_t i = 0; i < plan->nchanges; i++)
        if (!strcmp(plan->changes[i].path, path))
            return &plan->changes[i];
    return NULL;
}

static int add_change(struct tune_plan *plan, const char *sysroot, const struct audit_finding *f,
                      enum tune_kind kind, const char *name, const char *path, const char *value)
{
    struct tune_change c;
    long rc;

    if (find_path(plan, path))
        return 0;
    memset(&c, 0, sizeof(c));
    c.kind = kind;
    snprintf(c.name, sizeof(c.name), "%s", name);
    snprintf(c.path, sizeof(c.path), "%s", path);
    snprintf(c.new_value, sizeof(c.new_value), "%s", value);
    rc = tune_plan_read(sysroot, kind, path, value, c.old_value, sizeof(c.old_value));
    c.old_known = rc >= 0;
    if (rc < 0)
        c.old_value[0] = '\0';
    if (c.old_known && tune_plan_same_value(c.old_value, c.new_value))
        return 0; /* already there */
    snprintf(c.finding, sizeof(c.finding), "%s", f->id);
    snprintf(c.iface, sizeof(c.iface), "%s", f->iface);
    c.status = f->status;
    snprintf(c.reason, sizeof(c.reason), "%s", f->reason);
    snprintf(c.command, sizeof(c.command), "%s", f->fix);
    c.per_netns = f->per_netns;
    if (kind != TUNE_ETHTOOL)
        check_here(sysroot, plan->netns_child, &c, rc);
    else if (rc < 0)
        explain_ethtool(&c, (int)rc, c.blocked, sizeof(c.blocked));
    tune_risk_classify(&c);
    if (grow((void **)&plan->changes, plan->nchanges, &plan->cap_changes, sizeof(c)))
        return -1;
    plan->changes[plan->nchanges++] = c;
    return 0;
}

/* cpupower frequency-set -g GOV: one change per online CPU that has cpufreq. */
static int add_governor(struct tune_plan *plan, const char *sysroot, const struct audit_finding *f,
                        const char *gov)
{
    char online[512], path[TUNE_PATH_LEN], name[TUNE_NAME_LEN], probe[64];
    struct cpulist *cl = malloc(sizeof(*cl));
    int rc = 0;

    if (!cl)
        return -1;
    if (hostfs_read(sysroot, "/sys/devices/system/cpu/online", online, sizeof(online)) < 0 ||
        cpulist_parse(online, cl))
        cl->n = 0;
    for (int i = 0; i < cl->n && !rc; i++) {
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor",
                 cl->cpu[i]);
        if (hostfs_read(sysroot, path, probe, sizeof(probe)) < 0)
            continue; /* no cpufreq on this CPU */
        snprintf(name, sizeof(name), "cpu%d governor", cl->cpu[i]);
        rc = add_change(plan, sysroot, f, TUNE_SYSFS, name, path, gov);
    }
    free(cl);
    return rc;
}

static const struct {
    const char *prefix, *why;
} manual_why[] = {
    {"ethtool", "an ethtool option netrig does not apply (it applies -G, -C, -L, -A and -K)"},
    {"tc ", "replaces the qdisc of a live interface: run it when a short stall is fine"},
    {"setpci", "PCI configuration space: a wrong value can hang the device, so run it yourself"},
    {"systemctl", "a service: netrig does not start, stop or disable services"},
    {"echo off > /sys/devices/system/cpu/smt", "takes CPUs offline: run it yourself"},
    {"cpupower idle-set", "disables CPU idle states for the whole host: run it yourself"},
    {"set_irq_affinity", "a vendor script: run it yourself with irqbalance stopped"},
    {"echo ", "a file netrig does not write (only rps_cpus and IRQ affinity)"},
    {"sysctl", "a sysctl command netrig could not read: run it yourself"},
    {"ip ", "an ip command netrig does not apply (only txqueuelen and mtu)"},
    {"modprobe", "loads a module: run it yourself"},
};

static bool classify_manual(const char *cmd, char *why, size_t len)
{
    for (size_t i = 0; i < sizeof(manual_why) / sizeof(manual_why[0]); i++)
        if (!strncmp(cmd, manual_why[i].prefix, strlen(manual_why[i].prefix))) {
            snprintf(why, len, "%s", manual_why[i].why);
            return true;
        }
    snprintf(why, len, "%s",
             *cmd ? "a hardware, firmware, boot or site decision: do it yourself"
                  : "the audit names no command: see the reason");
    return false;
}

static int add_manual(struct tune_plan *plan, const struct audit_finding *f, const char *cmd)
{
    struct tune_manual m;

    memset(&m, 0, sizeof(m));
    snprintf(m.finding, sizeof(m.finding), "%s", f->id);
    snprintf(m.iface, sizeof(m.iface), "%s", f->iface);
    m.status = f->status;
    snprintf(m.reason, sizeof(m.reason), "%s", f->reason);
    snprintf(m.command, sizeof(m.command), "%s", cmd);
    m.is_command = classify_manual(cmd, m.why, sizeof(m.why));
    if (grow((void **)&plan->manual, plan->nmanual, &plan->cap_manual, sizeof(m)))
        return -1;
    plan->manual[plan->nmanual++] = m;
    return 0;
}

static int add_finding(struct tune_plan *plan, const char *sysroot, const struct audit_finding *f)
{
    struct tune_step steps[TUNE_MAX_STEPS];
    char manual[AUDIT_TEXT_LEN];
    int n = tune_plan_parse_fix(f->fix, steps, TUNE_MAX_STEPS, manual, sizeof(manual));
    int rc = 0;

    if (n < 0) {
        n = 0;
        snprintf(manual, sizeof(manual), "%s", f->fix);
    }
    for (int i = 0; i < n && !rc; i++) {
        if (steps[i].kind == TUNE_STEP_GOVERNOR)
            rc = add_governor(plan, sysroot, f, steps[i].value);
        else
            rc = add_change(plan, sysroot, f,
                            steps[i].kind == TUNE_STEP_SYSCTL
                                ? TUNE_SYSCTL
                                : (steps[i].kind == TUNE_STEP_ETHTOOL ? TUNE_ETHTOOL : TUNE_SYSFS),
                            steps[i].name, steps[i].path, steps[i].value);
    }
    if (!rc && (manual[0] || (n == 0 && !f->fix[0])))
        rc = add_manual(plan, f, manual);
    return rc;
}

int tune_plan_build(const struct audit_ctx *ctx, struct tune_plan *plan, char *err, size_t errlen)
{
    const struct audit_finding *f;
    const char *sysroot = audit_sysroot(ctx);
    size_t n;

    memset(plan, 0, sizeof(*plan));
    plan->target = *audit_get_target(ctx);
    plan->profile = audit_get_profile(ctx);
    plan->netns_child = hostwr_netns_child(sysroot);
    f = audit_findings(ctx, &n);
    for (size_t i = 0; i < n; i++) {
        if (f[i].status != AUDIT_WARN && f[i].status != AUDIT_BAD)
            continue;
        if (add_finding(plan, sysroot, &f[i])) {
            snprintf(err, errlen,
                     "out of memory building the tuning plan: free some memory "
                     "and retry");
            tune_plan_free(plan);
            return -1;
        }
    }
    return 0;
}

void tune_plan_free(struct tune_plan *plan)
{
    free(plan->changes);
    free(plan->manual);
    plan->changes = NULL;
    plan->manual = NULL;
    plan->nchanges = plan->nmanual = plan->cap_changes = plan->cap_manual = 0;
}
