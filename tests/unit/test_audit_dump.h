/* Shared helpers for the audit unit tests: run an audit on a fixture tree, find a finding,
 * and (with NETRIG_AUDIT_DUMP=1 in the environment) print the findings as a C table, which
 * is how the expected tables in test_audit.c were first written and then checked by hand. */
#ifndef NETRIG_TEST_AUDIT_DUMP_H
#define NETRIG_TEST_AUDIT_DUMP_H

#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"

#ifndef NETRIG_FIXTURES
#error "NETRIG_FIXTURES must name tests/fixtures/host"
#endif

/* One expected finding: id, iface ("" for host-wide), status, current, recommended. */
struct want {
    const char *id, *iface, *status, *current, *recommended;
};

static inline struct audit_ctx *audit_fixture(const char *root, uint64_t rate_bps, uint64_t rtt_ns,
                                              enum audit_profile profile, const char *record)
{
    struct audit_opts o = {.sysroot = root,
                           .record_dir = record,
                           .rate_bps = rate_bps,
                           .rtt_ns = rtt_ns,
                           .profile = profile};
    char err[640] = "";
    struct audit_ctx *ctx = audit_create(&o, err, sizeof(err));

    if (!ctx)
        fail_msg("audit_create(%s): %s", root, err);
    if (audit_run(ctx, err, sizeof(err)))
        fail_msg("audit_run(%s): %s", root, err);
    return ctx;
}

static inline const struct audit_finding *audit_find(const struct audit_ctx *ctx, const char *id,
                                                     const char *iface)
{
    size_t n;
    const struct audit_finding *f = audit_findings(ctx, &n);

    for (size_t i = 0; i < n; i++)
        if (!strcmp(f[i].id, id) && !strcmp(f[i].iface, iface ? iface : ""))
            return &f[i];
    return NULL;
}

static inline void audit_dump(const struct audit_ctx *ctx, const char *name)
{
    size_t n;
    const struct audit_finding *f = audit_findings(ctx, &n);

    if (!getenv("NETRIG_AUDIT_DUMP"))
        return;
    printf("/* %s */\n", name);
    for (size_t i = 0; i < n; i++)
        printf("    {\"%s\", \"%s\", \"%s\", \"%s\", \"%s\"},\n", f[i].id, f[i].iface,
               audit_status_name(f[i].status), f[i].current, f[i].recommended);
}

/* The findings are exactly want[], in order. */
static inline void audit_expect(const struct audit_ctx *ctx, const struct want *w, size_t nw)
{
    size_t n;
    const struct audit_finding *f = audit_findings(ctx, &n);

    for (size_t i = 0; i < n && i < nw; i++) {
        const char *st = audit_status_name(f[i].status);
        if (strcmp(f[i].id, w[i].id) || strcmp(f[i].iface, w[i].iface) || strcmp(st, w[i].status) ||
            strcmp(f[i].current, w[i].current) || strcmp(f[i].recommended, w[i].recommended))
            fail_msg("finding %zu: got {%s, %s, %s, \"%s\", \"%s\"} (reason: %s), want "
                     "{%s, %s, %s, \"%s\", \"%s\"}",
                     i, f[i].id, f[i].iface, st, f[i].current, f[i].recommended, f[i].reason,
                     w[i].id, w[i].iface, w[i].status, w[i].current, w[i].recommended);
    }
    if (n != nw)
        fail_msg("%zu findings, want %zu (first extra: %s)", n, nw, n > nw ? f[nw].id : w[n].id);
}

#endif
