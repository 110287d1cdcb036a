/* tune_persist: sysctl.d and udev rule files for the changes netrig made. */
#define _GNU_SOURCE
#include "tune_persist.h"

#include "hostwr.h"
#include "tune_journal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_MARK "# Written by netrig tune"

/* A growing string. */
struct sbuf {
    char *s;
    size_t len, cap;
    bool oom;
};

static void sb_add(struct sbuf *b, const char *text, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *p = realloc(b->s, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, text, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n > 0)
        sb_add(b, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* The key of a sysctl.d line ("net.core.rmem_max = 1" -> "net.core.rmem_max"), "" for
 * comments and blank lines. */
static void conf_key(const char *line, size_t n, char *key, size_t len)
{
    size_t i = 0, k = 0;

    while (i < n && (line[i] == ' ' || line[i] == '\t' || line[i] == '-'))
        i++;
    if (i >= n || line[i] == '#' || line[i] == ';') {
        key[0] = '\0';
        return;
    }
    while (i < n && line[i] != '=' && line[i] != ' ' && line[i] != '\t' && k + 1 < len)
        key[k++] = line[i] == '/' ? '.' : line[i], i++;
    key[k] = '\0';
}

/* The key of a udev rule line: everything up to and including ATTR{name}. */
static void rule_key(const char *line, size_t n, char *key, size_t len)
{
    const char *a = memmem(line, n, "ATTR{", 5);
    const char *end = a ? memchr(a, '}', n - (size_t)(a - line)) : NULL;
    size_t k = end ? (size_t)(end - line) + 1 : 0;

    if (line[0] == '#' || !k || k >= len)
        k = 0;
    memcpy(key, line, k);
    key[k] = '\0';
}

/* Copies the lines of old that netrig did not write and that set nothing in keys. */
static void keep_old_lines(struct sbuf *b, const char *old, char keys[][160], size_t nkeys,
                           void (*keyfn)(const char *, size_t, char *, size_t))
{
    for (const char *p = old; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char key[160];
        bool drop = !strncmp(p, HEADER_MARK, strlen(HEADER_MARK)) ||
                    !strncmp(p, "# 'netrig tune --revert'", 24);
        keyfn(p, n, key, sizeof(key));
        for (size_t i = 0; key[0] && i < nkeys && !drop; i++)
            drop = !strcmp(key, keys[i]);
        if (!drop) {
            sb_add(b, p, n);
            sb_add(b, "\n", 1);
        }
        p = nl ? nl + 1 : p + n;
    }
}

static bool wanted(const struct tune_plan *plan, const bool *want, size_t i)
{
    return want ? want[i] : !plan->changes[i].blocked[0];
}

/* "eth3 txqueuelen" -> udev rule for /sys/class/net/eth3/tx_queue_len; "" when it is not
 * a sysfs value udev can set. */
static void udev_rule(const struct tune_change *c, char *rule, size_t len, char *key, size_t klen)
{
    char ifname[32], attr[32];
    unsigned q;
    int used = 0;

    rule[0] = key[0] = '\0';
    if (c->kind != TUNE_SYSFS)
        return; /* ethtool settings: a .link file or a oneshot unit, not a udev ATTR */
    if (sscanf(c->path, "/sys/class/net/%31[^/]/%31[a-z_]%n", ifname, attr, &used) == 2 &&
        !c->path[used] && (!strcmp(attr, "tx_queue_len") || !strcmp(attr, "mtu"))) {
        snprintf(key, klen, "ACTION==\"add\", SUBSYSTEM==\"net\", KERNEL==\"%s\", ATTR{%s}", ifname,
                 attr);
    } else if (sscanf(c->path, "/sys/class/net/%31[^/]/queues/rx-%u/rps_cpus%n", ifname, &q,
                      &used) == 2 &&
               !c->path[used]) {
        snprintf(key, klen,
                 "ACTION==\"add\", SUBSYSTEM==\"queues\", KERNEL==\"rx-%u\", "
                 "DEVPATH==\"*/net/%s/queues/rx-%u\", ATTR{rps_cpus}",
                 q, ifname, q);
    } else {
        return;
    }
    snprintf(rule, len, "%s=\"%s\"\n", key, c->new_value);
}

static int finish_file(struct tune_file *f, const char *path, struct sbuf *b, char *err,
                       size_t errlen)
{
    if (b->oom) {
        free(b->s);
        free(f->old_content);
        f->old_content = NULL;
        snprintf(err, errlen, "out of memory building %s", path);
        return -1;
    }
    snprintf(f->path, sizeof(f->path), "%s", path);
    f->new_content = b->s;
    return 0;
}

static int read_old(const char *sysroot, const char *path, char **out, char *err, size_t errlen)
{
    int rc = hostwr_slurp(sysroot, path, TUNE_FILE_MAX, out);

    if (rc == -ENOENT) {
        *out = NULL;
        return 0;
    }
    if (rc) {
        snprintf(err, errlen, "cannot read %s to update it: %s: fix or remove it, then retry", path,
                 strerror(-rc));
        return -1;
    }
    return 0;
}

static int build_sysctl(const char *sysroot, const struct tune_plan *plan, const bool *want,
                        const char *stamp, struct tune_file *f, bool *made, char *err,
                        size_t errlen)
{
    char(*keys)[160] = calloc(plan->nchanges + 1, 160);
    struct sbuf b = {0};
    size_t nk = 0;

    *made = false;
    if (!keys) {
        snprintf(err, errlen, "out of memory building %s", TUNE_SYSCTL_CONF);
        return -1;
    }
    for (size_t i = 0; i < plan->nchanges; i++)
        if (wanted(plan, want, i) && plan->changes[i].kind == TUNE_SYSCTL)
            snprintf(keys[nk++], 160, "%s", plan->changes[i].name);
    if (nk == 0 || read_old(sysroot, TUNE_SYSCTL_CONF, &f->old_content, err, errlen)) {
        free(keys);
        return nk ? -1 : 0;
    }
    sb_printf(&b,
              "%s (%s).\n# 'netrig tune --revert' puts back this file as it was (or "
              "removes it).\n",
              HEADER_MARK, stamp);
    keep_old_lines(&b, f->old_content, keys, nk, conf_key);
    for (size_t i = 0; i < plan->nchanges; i++)
        if (wanted(plan, want, i) && plan->changes[i].kind == TUNE_SYSCTL)
            sb_printf(&b, "%s = %s\n", plan->changes[i].name, plan->changes[i].new_value);
    free(keys);
    *made = true;
    return finish_file(f, TUNE_SYSCTL_CONF, &b, err, errlen);
}

static int build_udev(const char *sysroot, const struct tune_plan *plan, const bool *want,
                      const char *stamp, struct tune_file *f, bool *made, char *skipped,
                      size_t skippedlen, char *err, size_t errlen)
{
    char(*keys)[160] = calloc(plan->nchanges + 1, 160), rule[512];
    struct sbuf b = {0};
    size_t nk = 0;

    *made = false;
    if (!keys) {
        snprintf(err, errlen, "out of memory building %s", TUNE_UDEV_RULES);
        return -1;
    }
    for (size_t i = 0; i < plan->nchanges; i++) {
        const struct tune_change *c = &plan->changes[i];
        if (!wanted(plan, want, i) || c->kind == TUNE_SYSCTL)
            continue;
        udev_rule(c, rule, sizeof(rule), keys[nk], 160);
        if (keys[nk][0])
            nk++;
        else if (!strstr(skipped, c->finding))
            snprintf(skipped + strlen(skipped), skippedlen - strlen(skipped), "%s%s",
                     *skipped ? ", " : "", c->finding);
    }
    if (nk == 0 || read_old(sysroot, TUNE_UDEV_RULES, &f->old_content, err, errlen)) {
        free(keys);
        return nk ? -1 : 0;
    }
    sb_printf(&b,
              "%s (%s).\n# 'netrig tune --revert' puts back this file as it was (or "
              "removes it).\n",
              HEADER_MARK, stamp);
    keep_old_lines(&b, f->old_content, keys, nk, rule_key);
    for (size_t i = 0; i < plan->nchanges; i++) {
        char key[160];
        if (!wanted(plan, want, i) || plan->changes[i].kind != TUNE_SYSFS)
            continue;
        udev_rule(&plan->changes[i], rule, sizeof(rule), key, sizeof(key));
        sb_add(&b, rule, strlen(rule));
    }
    free(keys);
    *made = true;
    return finish_file(f, TUNE_UDEV_RULES, &b, err, errlen);
}

int tune_persist_build(const char *sysroot, const struct tune_plan *plan, const bool *want,
                       const char *stamp, struct tune_file files[TUNE_PERSIST_MAX], size_t *n,
                       char *skipped, size_t skippedlen, char *err, size_t errlen)
{
    bool made;

    *n = 0;
    skipped[0] = '\0';
    memset(files, 0, TUNE_PERSIST_MAX * sizeof(*files));
    if (build_sysctl(sysroot, plan, want, stamp, &files[*n], &made, err, errlen))
        return -1;
    *n += made;
    if (build_udev(sysroot, plan, want, stamp, &files[*n], &made, skipped, skippedlen, err,
                   errlen)) {
        tune_persist_free(files, *n);
        *n = 0;
        return -1;
    }
    *n += made;
    return 0;
}

void tune_persist_free(struct tune_file *files, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(files[i].old_content);
        free(files[i].new_content);
        files[i].old_content = files[i].new_content = NULL;
    }
}
