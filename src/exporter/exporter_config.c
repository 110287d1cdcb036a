/* exporter_config: parses and checks the exporter's configuration file. */
#include "exporter_config.h"

#include "params.h"
#include "prom.h"
#include "sock.h"
#include "test_kind.h"
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_LEN        1024
#define DEFAULT_DURATION_NS (5ULL * 1000000000ULL)

/* The keys of a [target] section; each may be given once. */
enum key {
    K_HOST,
    K_PORT,
    K_TEST,
    K_PROTOCOL,
    K_INTERVAL,
    K_DURATION,
    K_OMIT,
    K_PARALLEL,
    K_THREADS,
    K_DIRECTION,
    K_BITRATE,
    K_SIZE,
    K_WINDOW,
    K_CONGESTION,
    K_TIMEOUT,
    K_USER,
    K_CREDENTIALS,
    K_N
};
static const char *const key_name[K_N] = {
    "host",   "port",       "test",    "protocol",  "interval",    "duration",
    "omit",   "parallel",   "threads", "direction", "bitrate",     "size",
    "window", "congestion", "timeout", "user",      "credentials",
};

struct parser {
    const char *name;
    int line;
    struct exporter_config *c;
    struct exporter_target *cur;  /* the section being read, NULL before the first */
    int key_line[K_N];            /* where each key of the current section was given, 0 = not */
    const struct test_kind *kind; /* test = (the section's command), applied when it is read */
    bool udp;                     /* protocol = udp: the kind's UDP variant */
    char *err;
    size_t errlen;
};

static int fail_at(struct parser *ps, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_at(struct parser *ps, int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (line > 0)
        snprintf(ps->err, ps->errlen, "%s:%d: %s", ps->name, line, msg);
    else
        snprintf(ps->err, ps->errlen, "%s: %s", ps->name, msg);
    return -1;
}

static int duration(struct parser *ps, const char *key, const char *v, uint64_t lo, uint64_t hi,
                    uint64_t *ns)
{
    if (units_parse_duration(v, ns) || *ns < lo || *ns > hi)
        return fail_at(ps, ps->line,
                       "invalid %s '%s': use a time from %gs to %gs, e.g. 30s, "
                       "500ms or 5m",
                       key, v, lo / 1e9, hi / 1e9);
    return 0;
}

static int count(struct parser *ps, const char *key, const char *v, uint64_t lo, uint64_t hi,
                 uint32_t *out)
{
    uint64_t n;

    if (units_parse_count(v, &n) || n < lo || n > hi)
        return fail_at(ps, ps->line, "invalid %s '%s': use a whole number from %llu to %llu", key,
                       v, (unsigned long long)lo, (unsigned long long)hi);
    *out = (uint32_t)n;
    return 0;
}

static int text(struct parser *ps, const char *key, const char *v, char *dst, size_t len)
{
    if (!*v || strlen(v) >= len)
        return fail_at(ps, ps->line, "invalid %s '%s': give 1 to %zu characters", key, v, len - 1);
    memcpy(dst, v, strlen(v) + 1);
    return 0;
}

static int one_of(struct parser *ps, const char *key, const char *v, const char *const *names,
                  int n, const char *choices)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i]))
            return i;
    return fail_at(ps, ps->line, "invalid %s '%s': use %s", key, v, choices);
}

/* REQ[,RESP] in bytes */
static int sizes(struct parser *ps, const char *v, struct params *p)
{
    char req[64];
    const char *comma = strchr(v, ',');
    size_t n = comma ? (size_t)(comma - v) : strlen(v);
    uint64_t a, b;

    if (n == 0 || n >= sizeof(req))
        return fail_at(ps, ps->line, "invalid size '%s': use REQ or REQ,RESP bytes, e.g. 1,1", v);
    memcpy(req, v, n);
    req[n] = '\0';
    if (units_parse_size(req, &a) || a < 1 || a > PARAMS_MAX_WRITE ||
        units_parse_size(comma ? comma + 1 : req, &b) || b < 1 || b > PARAMS_MAX_WRITE)
        return fail_at(ps, ps->line,
                       "invalid size '%s': use REQ or REQ,RESP bytes from 1 to "
                       "%u, e.g. 64,1K",
                       v, PARAMS_MAX_WRITE);
    p->req_size = (uint32_t)a;
    p->resp_size = (uint32_t)b;
    return 0;
}

/* test = a test kind's command */
static int test_kind_key(struct parser *ps, const char *v)
{
    char names[64];

    ps->kind = test_kind_command(v);
    test_kind_commands(names, sizeof(names));
    return ps->kind ? 0 : fail_at(ps, ps->line, "invalid test '%s': use %s", v, names);
}

static int target_key(struct parser *ps, enum key k, const char *v)
{
    static const char *const protos[] = {"tcp", "udp"};
    static const char *const dirs[] = {"forward", "reverse", "bidir"};
    struct exporter_target *t = ps->cur;
    struct params *p = &t->o.p;
    uint64_t v64;
    int i;

    switch (k) {
    case K_HOST: return text(ps, "host", v, t->o.host, sizeof(t->o.host));
    case K_PORT: {
        uint32_t port = 0;
        if (count(ps, "port", v, 1, 65535, &port))
            return -1;
        t->o.port = (uint16_t)port;
        return 0;
    }
    case K_TEST: return test_kind_key(ps, v);
    case K_PROTOCOL:
        if ((i = one_of(ps, "protocol", v, protos, 2, "tcp or udp")) < 0)
            return -1;
        ps->udp = i == 1;
        return 0;
    case K_INTERVAL:
        return duration(ps, "interval", v, EXPORTER_FLOOR_INTERVAL_NS, 86400ULL * 1000000000ULL,
                        &t->interval_ns);
    case K_DURATION:
        return duration(ps, "duration", v, 100000000ULL, EXPORTER_CEIL_DURATION_NS,
                        &p->duration_ns);
    case K_OMIT: return duration(ps, "omit", v, 0, EXPORTER_CEIL_DURATION_NS, &p->omit_ns);
    case K_PARALLEL: return count(ps, "parallel", v, 1, PARAMS_MAX_FLOWS, &p->flows);
    case K_THREADS: return count(ps, "threads", v, 1, PARAMS_MAX_THREADS, &p->threads);
    case K_DIRECTION:
        if ((i = one_of(ps, "direction", v, dirs, 3, "forward, reverse or bidir")) < 0)
            return -1;
        p->dir = (enum params_dir)i;
        return 0;
    case K_BITRATE:
        if (units_parse_rate(v, &v64) || v64 == 0 || v64 > 1000000000000000ULL)
            return fail_at(ps, ps->line,
                           "invalid bitrate '%s': use bits/s above 0 with an "
                           "optional K, M, G or T suffix, e.g. 100M",
                           v);
        p->udp_rate_bps = v64;
        return 0;
    case K_SIZE: return sizes(ps, v, p);
    case K_WINDOW:
        if (units_parse_size(v, &v64) || v64 > PARAMS_MAX_WINDOW)
            return fail_at(ps, ps->line,
                           "invalid window '%s': use bytes with an optional K, M, "
                           "G or T suffix (at most 1G)",
                           v);
        p->window = (uint32_t)v64;
        return 0;
    case K_CONGESTION: return text(ps, "congestion", v, p->congestion, sizeof(p->congestion));
    case K_TIMEOUT:
        if (duration(ps, "timeout", v, 100000000ULL, 600000000000ULL, &v64))
            return -1;
        t->o.timeout_ms = (int)(v64 / 1000000);
        return 0;
    case K_USER: return text(ps, "user", v, t->o.user, sizeof(t->o.user));
    case K_CREDENTIALS:
        return text(ps, "credentials", v, t->o.credentials, sizeof(t->o.credentials));
    default: return -1;
    }
}

static int global_key(struct parser *ps, const char *k, const char *v)
{
    struct exporter_config *c = ps->c;
    char host[256];
    uint16_t port;

    if (!strcmp(k, "listen")) {
        if (prom_parse_listen(v, host, sizeof(host), &port) || strlen(v) >= sizeof(c->listen))
            return fail_at(ps, ps->line,
                           "invalid listen '%s': use ADDR:PORT, [IPV6]:PORT or "
                           ":PORT, e.g. 127.0.0.1:9465",
                           v);
        snprintf(c->listen, sizeof(c->listen), "%s", v);
        return 0;
    }
    if (!strcmp(k, "min_interval"))
        return duration(ps, "min_interval", v, EXPORTER_FLOOR_INTERVAL_NS, 86400ULL * 1000000000ULL,
                        &c->min_interval_ns);
    if (!strcmp(k, "max_duration"))
        return duration(ps, "max_duration", v, 100000000ULL, EXPORTER_CEIL_DURATION_NS,
                        &c->max_duration_ns);
    for (int i = 0; i < K_N; i++)
        if (!strcmp(k, key_name[i]))
            return fail_at(ps, ps->line, "'%s' belongs in a [target NAME] section", k);
    return fail_at(ps, ps->line,
                   "unknown key '%s': before the first [target] use listen, "
                   "min_interval or max_duration",
                   k);
}

static int key_line(const struct parser *ps, enum key k)
{
    return ps->key_line[k] ? ps->key_line[k] : ps->cur->line;
}

/* The whole section read: defaults, combinations, limits. */
static int target_done(struct parser *ps)
{
    struct exporter_target *t = ps->cur;
    const struct params *p;
    const struct test_kind *kind;
    uint64_t run;
    char err[256];

    if (!t)
        return 0;
    test_kind_apply(ps->kind, &t->o.p);
    t->o.p.udp = ps->udp; /* the kind's UDP variant, where it has one (refused below if not) */
    p = &t->o.p;
    kind = test_kind_of(p);
    run = p->duration_ns + p->omit_ns;
    if (!t->o.host[0])
        return fail_at(ps, t->line, "target '%s' has no 'host = HOST' line", t->name);
    if (!t->interval_ns)
        t->interval_ns = ps->c->min_interval_ns;
    if (ps->udp && !(ps->kind->opts & TEST_KIND_OPT_UDP))
        return fail_at(ps, key_line(ps, K_PROTOCOL), "target '%s': %s runs over TCP only", t->name,
                       ps->kind->command);
    if (ps->key_line[K_BITRATE] && !(kind->flags & TEST_KIND_DATAGRAMS))
        return fail_at(ps, ps->key_line[K_BITRATE],
                       "target '%s': bitrate applies to "
                       "'test = stream' with 'protocol = udp' only",
                       t->name);
    if (ps->key_line[K_SIZE] && !(kind->opts & TEST_KIND_OPT_SIZES))
        return fail_at(ps, ps->key_line[K_SIZE], "target '%s': size applies to rr and crr only",
                       t->name);
    if (ps->key_line[K_DIRECTION] && !(kind->opts & TEST_KIND_OPT_DIR))
        return fail_at(ps, ps->key_line[K_DIRECTION],
                       "target '%s': direction applies to stream and mptcp only", t->name);
    if (run > ps->c->max_duration_ns)
        return fail_at(ps, key_line(ps, K_DURATION),
                       "target '%s': a test of %gs (omit included) "
                       "exceeds max_duration %gs",
                       t->name, run / 1e9, ps->c->max_duration_ns / 1e9);
    if (t->interval_ns < ps->c->min_interval_ns)
        return fail_at(ps, key_line(ps, K_INTERVAL),
                       "target '%s': interval %gs is below "
                       "min_interval %gs",
                       t->name, t->interval_ns / 1e9, ps->c->min_interval_ns / 1e9);
    if (t->interval_ns <= run)
        return fail_at(ps, key_line(ps, K_INTERVAL),
                       "target '%s': interval %gs leaves no time "
                       "between tests of %gs: make it longer",
                       t->name, t->interval_ns / 1e9, run / 1e9);
    if ((kind->flags & TEST_KIND_DATAGRAMS) && p->write_size > 1400)
        t->o.p.write_size = 1400; /* a datagram that fits a 1500-byte MTU */
    if (params_validate(p, err, sizeof(err)))
        return fail_at(ps, t->line, "target '%s': %s", t->name, err);
    return 0;
}

static int section(struct parser *ps, char *s)
{
    char *end = strchr(s, ']'), *name;
    size_t n;

    if (!end || end[1])
        return fail_at(ps, ps->line, "malformed section header: use [target NAME]");
    *end = '\0';
    if (strncmp(s + 1, "target", 6) || !isspace((unsigned char)s[7]))
        return fail_at(ps, ps->line, "unknown section '[%s]': use [target NAME]", s + 1);
    for (name = s + 7; isspace((unsigned char)*name); name++)
        ;
    n = strlen(name);
    while (n && isspace((unsigned char)name[n - 1]))
        name[--n] = '\0';
    if (!n || n >= EXPORTER_NAME_LEN ||
        strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNO"
                     "PQRSTUVWXYZ0123456789_.:-") != n)
        return fail_at(ps, ps->line,
                       "invalid target name '%s': use 1 to %d letters, digits, "
                       "'_', '.', ':' or '-'",
                       name, EXPORTER_NAME_LEN - 1);
    if (target_done(ps))
        return -1;
    for (uint32_t i = 0; i < ps->c->ntargets; i++)
        if (!strcmp(ps->c->t[i].name, name))
            return fail_at(ps, ps->line, "target '%s' is defined twice (first on line %d)", name,
                           ps->c->t[i].line);
    if (ps->c->ntargets >= EXPORTER_MAX_TARGETS)
        return fail_at(ps, ps->line, "too many targets: at most %d", EXPORTER_MAX_TARGETS);
    ps->cur = &ps->c->t[ps->c->ntargets++];
    memset(ps->key_line, 0, sizeof(ps->key_line));
    ps->kind = test_kind_command("stream");
    ps->udp = false;
    snprintf(ps->cur->name, sizeof(ps->cur->name), "%s", name);
    ps->cur->line = ps->line;
    params_defaults(&ps->cur->o.p);
    ps->cur->o.p.duration_ns = DEFAULT_DURATION_NS;
    ps->cur->o.port = SOCK_DEFAULT_PORT;
    ps->cur->o.timeout_ms = 10000;
    return 0;
}

/* One line, its comment and surrounding blanks already cut off. */
static int line(struct parser *ps, char *s)
{
    char *eq, *k, *v;
    size_t n;

    if (s[0] == '[')
        return section(ps, s);
    eq = strchr(s, '=');
    if (!eq)
        return fail_at(ps, ps->line, "expected 'key = value' or [target NAME], got '%.60s'", s);
    *eq = '\0';
    k = s;
    v = eq + 1;
    for (n = strlen(k); n && isspace((unsigned char)k[n - 1]);)
        k[--n] = '\0';
    while (isspace((unsigned char)*v))
        v++;
    if (!n || strspn(k, "abcdefghijklmnopqrstuvwxyz_") != n)
        return fail_at(ps, ps->line, "invalid key '%.60s': keys are lower-case words", k);
    if (!*v)
        return fail_at(ps, ps->line, "'%s' has no value", k);
    if (!ps->cur)
        return global_key(ps, k, v);
    for (int i = 0; i < K_N; i++) {
        if (strcmp(k, key_name[i]))
            continue;
        if (ps->key_line[i])
            return fail_at(ps, ps->line, "'%s' is given twice in target '%s' (first on line %d)", k,
                           ps->cur->name, ps->key_line[i]);
        ps->key_line[i] = ps->line;
        return target_key(ps, (enum key)i, v);
    }
    if (!strcmp(k, "listen") || !strcmp(k, "min_interval") || !strcmp(k, "max_duration"))
        return fail_at(ps, ps->line, "'%s' belongs before the first [target] section", k);
    return fail_at(ps, ps->line, "unknown key '%s' in target '%s' (see docs/exporter.md)", k,
                   ps->cur->name);
}

/* Cuts a comment ('#' at the start or after a blank) and the blanks around the text. */
static char *strip(char *s)
{
    char *e;

    for (char *p = s; *p; p++)
        if (*p == '#' && (p == s || isspace((unsigned char)p[-1]))) {
            *p = '\0';
            break;
        }
    while (isspace((unsigned char)*s))
        s++;
    e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

static int duty_check(struct parser *ps)
{
    double busy = 0;

    for (uint32_t i = 0; i < ps->c->ntargets; i++) {
        const struct exporter_target *t = &ps->c->t[i];
        busy += (double)(t->o.p.duration_ns + t->o.p.omit_ns) / (double)t->interval_ns;
    }
    if (busy > 1.0)
        return fail_at(ps, 0,
                       "the targets need %.0f%% of the time for testing, and tests run "
                       "one at a time: lengthen their intervals or shorten their durations",
                       busy * 100);
    return 0;
}

int exporter_config_parse(const char *text_in, const char *name, struct exporter_config *c,
                          char *err, size_t errlen)
{
    struct parser ps = {.name = name, .c = c, .err = err, .errlen = errlen};
    char buf[LINE_MAX_LEN + 2];

    memset(c, 0, sizeof(*c));
    c->min_interval_ns = EXPORTER_MIN_INTERVAL_NS;
    c->max_duration_ns = EXPORTER_MAX_DURATION_NS;
    for (const char *p = text_in; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);

        ps.line++;
        if (n > LINE_MAX_LEN)
            return fail_at(&ps, ps.line, "line longer than %d characters", LINE_MAX_LEN);
        memcpy(buf, p, n);
        buf[n] = '\0';
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)buf[i] < 0x20 && buf[i] != '\t' && buf[i] != '\r')
                return fail_at(&ps, ps.line, "control character 0x%02x in the line",
                               (unsigned char)buf[i]);
        char *s = strip(buf);
        if (*s && line(&ps, s))
            return -1;
        p += n + (nl ? 1 : 0);
    }
    ps.line = 0;
    if (target_done(&ps))
        return -1;
    if (!c->ntargets)
        return fail_at(&ps, 0, "no [target NAME] section: nothing to run");
    return duty_check(&ps);
}

int exporter_config_load(const char *path, struct exporter_config *c, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *buf;
    size_t n;
    int rc;

    if (!f) {
        snprintf(err, errlen, "cannot read config file '%s': %s", path, strerror(errno));
        return -1;
    }
    buf = malloc(EXPORTER_MAX_FILE + 1);
    if (!buf) {
        fclose(f);
        snprintf(err, errlen, "out of memory reading '%s'", path);
        return -1;
    }
    n = fread(buf, 1, EXPORTER_MAX_FILE + 1, f);
    fclose(f);
    buf[n > EXPORTER_MAX_FILE ? EXPORTER_MAX_FILE : n] = '\0';
    if (n > EXPORTER_MAX_FILE)
        snprintf(err, errlen, "%s: larger than %d bytes", path, EXPORTER_MAX_FILE);
    else if (strlen(buf) != n) {
        int line = 1;
        for (const char *p = buf; *p; p++)
            line += *p == '\n';
        snprintf(err, errlen, "%s:%d: a NUL byte: this is not a text file", path, line);
    }
    rc = n > EXPORTER_MAX_FILE || strlen(buf) != n
             ? -1
             : exporter_config_parse(buf, path, c, err, errlen);
    free(buf);
    return rc;
}
