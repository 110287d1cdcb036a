/* compare_params: what the two sets' tests were — the parameters that differ between the sets
 * or within one, the warnings, and the refusal of rr against stream. */
#include "compare.h"
#include "test_kind.h"

#include "store_run.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The runs a parameter means something for. */
enum applies { P_ALL, P_STREAM, P_TXN, P_TCP, P_UDP_STREAM, P_CRR, P_LOAD };
/* How its JSON value reads. */
enum fmt {
    F_TEXT,
    F_NUM,
    F_BYTES,
    F_WINDOW,
    F_CC,
    F_PACING,
    F_MSS,
    F_SECONDS,
    F_BOOL,
    F_CPUS,
    F_TPS,
    F_RATE,
    F_PPS
};

static const struct pdef {
    const char *name, *label;
    enum applies ap;
    enum fmt f;
} pdefs[] = {
    {"direction", "direction", P_ALL, F_TEXT},
    {"flows", "flows", P_ALL, F_NUM},
    {"threads", "threads", P_ALL, F_NUM},
    {"write_size", "write size", P_STREAM, F_BYTES},
    {"window", "window", P_ALL, F_WINDOW},
    {"congestion", "congestion control", P_TCP, F_CC},
    {"fq_rate_bps", "pacing", P_ALL, F_PACING},
    {"mss", "MSS", P_TCP, F_MSS},
    {"duration_s", "duration", P_ALL, F_SECONDS},
    {"server_threads", "server threads", P_ALL, F_NUM},
    {"omit_s", "omitted start", P_ALL, F_SECONDS},
    {"nodelay", "TCP_NODELAY", P_TCP, F_BOOL},
    {"zerocopy", "zero-copy", P_STREAM, F_BOOL},
    {"zerocopy_rx", "zero-copy receive", P_STREAM, F_BOOL},
    {"skip_rx_copy", "receiver's copy skipped", P_STREAM, F_BOOL},
    {"busy_poll", "busy polling", P_ALL, F_BOOL},
    {"server_cpus", "server CPUs", P_ALL, F_CPUS},
    {"req_size", "request size", P_TXN, F_BYTES},
    {"resp_size", "response size", P_TXN, F_BYTES},
    {"depth", "depth", P_TXN, F_NUM},
    {"rate_tps", "transaction rate", P_TXN, F_TPS},
    {"connect_only", "connect only", P_CRR, F_BOOL},
    {"txn_timeout_s", "transaction timeout", P_TXN, F_SECONDS},
    {"udp_rate_bps", "UDP rate", P_UDP_STREAM, F_RATE},
    {"udp_pps", "UDP packet rate", P_UDP_STREAM, F_PPS},
    {"up", "load up", P_LOAD, F_BOOL},
    {"down", "load down", P_LOAD, F_BOOL},
    {"baseline_s", "baseline", P_LOAD, F_SECONDS},
    {"loaded_s", "loaded phase", P_LOAD, F_SECONDS},
    {"recovery_s", "recovery", P_LOAD, F_SECONDS},
    {"probe_rate", "probe rate", P_LOAD, F_TPS},
};
#define NPDEFS (sizeof(pdefs) / sizeof(pdefs[0]))

struct run_info {
    char kind[24]; /* "stream", "rr/udp", ... */
    char server[280];
    bool txn, udp, crr, served, load;
    cJSON *params; /* NULL when unreadable */
};

static void read_run(struct store *st, int64_t id, struct run_info *ri)
{
    struct store_run r;
    char err[256], *text;

    memset(ri, 0, sizeof(*ri));
    if (store_run_get(st, id, &r, err, sizeof(err)))
        return;
    snprintf(ri->kind, sizeof(ri->kind), "%s%s", r.test, r.udp ? "/udp" : "");
    ri->load = !strcmp(r.test, "load");
    ri->txn = !test_kind_named_is(r.test, TEST_KIND_BULK) && !ri->load;
    ri->crr = test_kind_named_is(r.test, TEST_KIND_CONN_PER_TXN);
    ri->udp = r.udp;
    ri->served = !strcmp(r.role, "server");
    if (ri->served) {
        snprintf(ri->server, sizeof(ri->server), "this host (a run its daemon served)");
    } else {
        /* the address without its port: a built-in loopback server's port changes each run */
        const char *colon = strrchr(r.peer, ':');
        bool v6 = r.peer[0] == '[';
        int n = colon && (v6 ? colon[-1] == ']' : strchr(r.peer, ':') == colon)
                    ? (int)(colon - r.peer)
                    : (int)strlen(r.peer);
        snprintf(ri->server, sizeof(ri->server), "%.*s", n, r.peer);
    }
    text = store_run_params(st, id);
    ri->params = text ? cJSON_Parse(text) : NULL;
    free(text);
}

static bool applies(const struct pdef *d, const struct run_info *ri)
{
    switch (d->ap) {
    case P_STREAM: return !ri->txn;
    case P_TXN: return ri->txn;
    case P_TCP: return !ri->udp;
    case P_UDP_STREAM: return ri->udp && !ri->txn;
    case P_CRR: return ri->crr;
    case P_LOAD: return ri->load;
    default: return true;
    }
}

/* The parameter's value in words; false when the run does not have it. */
static bool format_value(const struct pdef *d, const cJSON *v, char *buf, size_t len)
{
    double x = cJSON_IsNumber(v) ? v->valuedouble : 0;

    if (cJSON_IsString(v)) {
        const char *s = v->valuestring;
        snprintf(buf, len, "%s",
                 s[0]             ? s
                 : d->f == F_CC   ? "default"
                 : d->f == F_CPUS ? "unpinned"
                                  : "-");
        return true;
    }
    if (cJSON_IsBool(v) || (!v && d->f == F_BOOL)) { /* runs older than the flag: off */
        snprintf(buf, len, "%s", cJSON_IsTrue(v) ? "on" : "off");
        return true;
    }
    if (!cJSON_IsNumber(v) || !isfinite(x))
        return false;
    if (x == 0 && (d->f == F_WINDOW || d->f == F_MSS || d->f == F_PACING || d->f == F_TPS)) {
        snprintf(buf, len, "%s",
                 d->f == F_WINDOW ? "auto"
                 : d->f == F_MSS  ? "default"
                 : d->f == F_TPS  ? "closed loop"
                                  : "off");
        return true;
    }
    switch (d->f) {
    case F_BYTES:
    case F_WINDOW: units_format_bytes(x, buf, len); break;
    case F_PACING:
    case F_RATE: units_format_rate(x, buf, len); break;
    case F_SECONDS: snprintf(buf, len, "%.6g s", x); break;
    case F_TPS: snprintf(buf, len, "%.6g/s", x); break;
    case F_PPS: snprintf(buf, len, "%.6g packets/s", x); break;
    default: snprintf(buf, len, "%.10g", x); break;
    }
    return true;
}

/* Row which of run ri: -2 the test's kind, -1 the server, else pdefs[which]. False when the
 * run does not have it. */
static bool run_value(int which, const struct run_info *ri, char *buf, size_t len)
{
    if (!ri->kind[0])
        return false; /* the run could not be read */
    if (which == -2) {
        snprintf(buf, len, "%s", ri->kind);
        return true;
    }
    if (which == -1) {
        snprintf(buf, len, "%s", ri->server);
        return ri->server[0] != '\0';
    }
    return ri->params && applies(&pdefs[which], ri) &&
           format_value(&pdefs[which],
                        cJSON_GetObjectItemCaseSensitive(ri->params, pdefs[which].name), buf, len);
}

/* One set's values of row which: "x | y"; "n/a" when none of its runs has it (*any false). */
static char *set_values(int which, const struct run_info *ri, size_t n, bool *mixed, bool *any)
{
    char *list = NULL, buf[300];
    size_t distinct = 0;

    *mixed = false;
    for (size_t i = 0; i < n; i++) {
        int rc;
        if (!run_value(which, &ri[i], buf, sizeof(buf)))
            continue;
        rc = compare_join(&list, buf);
        if (rc < 0) {
            free(list);
            return NULL;
        }
        distinct += (size_t)rc;
    }
    *mixed = distinct > 1;
    *any = list != NULL;
    return list ? list : strdup("n/a");
}

static int add_row(struct compare_result *c, int which, const struct run_info *ra,
                   const struct run_info *rb, char *mixed_a, char *mixed_b, size_t mlen)
{
    bool ma, mb, any_a, any_b;
    char *va = set_values(which, ra, c->na, &ma, &any_a);
    char *vb = set_values(which, rb, c->nb, &mb, &any_b);
    struct compare_param *p;
    const char *label = which == -2 ? "test" : which == -1 ? "server" : pdefs[which].label;

    if (!va || !vb) {
        free(va), free(vb);
        return -ENOMEM;
    }
    if ((!any_a && !any_b) || (!ma && !mb && !strcmp(va, vb))) {
        free(va), free(vb);
        return 0;
    }
    p = &c->params[c->nparams++];
    p->name = which == -2 ? "test" : which == -1 ? "server" : pdefs[which].name;
    p->label = label;
    p->a = va, p->b = vb, p->mixed = ma || mb;
    if (ma && strlen(mixed_a) + strlen(label) + strlen(va) + 8 < mlen)
        snprintf(mixed_a + strlen(mixed_a), mlen - strlen(mixed_a), "%s%s %s",
                 mixed_a[0] ? "; " : "", label, va);
    if (mb && strlen(mixed_b) + strlen(label) + strlen(vb) + 8 < mlen)
        snprintf(mixed_b + strlen(mixed_b), mlen - strlen(mixed_b), "%s%s %s",
                 mixed_b[0] ? "; " : "", label, vb);
    return 0;
}

/* Runs measured with --skip-rx-copy leave the receiver's copy out of throughput and CPU. */
static int judge_rx_copy(struct compare_result *c, const struct run_info *ra,
                         const struct run_info *rb)
{
    size_t sa = 0, sb = 0;

    for (size_t i = 0; i < c->na + c->nb; i++) {
        const struct run_info *r = i < c->na ? &ra[i] : &rb[i - c->na];
        const cJSON *v =
            r->params ? cJSON_GetObjectItemCaseSensitive(r->params, "skip_rx_copy") : NULL;
        if (cJSON_IsTrue(v))
            *(i < c->na ? &sa : &sb) += 1;
    }
    if (!sa && !sb)
        return 0;
    return compare_warn(c, "rx_copy_skipped",
                        "%zu of A's and %zu of B's runs used --skip-rx-copy: their throughput and "
                        "CPU leave out the receiver's copy",
                        sa, sb);
}

/* Kinds: refuse a transactional test against a stream, warn when kinds or roles differ. */
static int judge_kinds(struct compare_result *c, const struct run_info *ra,
                       const struct run_info *rb, unsigned flags, char *err, size_t errlen)
{
    bool stream = false, txn = false, load = false, served = false, client = false;
    char *ka = NULL, *kb = NULL, *all = NULL;
    int rc = 0;

    for (size_t i = 0; i < c->na + c->nb; i++) {
        const struct run_info *r = i < c->na ? &ra[i] : &rb[i - c->na];
        if (!r->kind[0])
            continue;
        stream |= !r->txn && !r->load, txn |= r->txn, load |= r->load;
        served |= r->served, client |= !r->served;
        if (compare_join(i < c->na ? &ka : &kb, r->kind) < 0 || compare_join(&all, r->kind) < 0)
            rc = -ENOMEM;
    }
    if (!rc && load && (stream || txn) && !(flags & COMPARE_FORCE)) {
        snprintf(err, errlen,
                 "A holds %s runs and B %s runs: a load run's latency under load does not "
                 "compare with a single test's figures; compare load runs with load runs, or add "
                 "--force",
                 ka ? ka : "no", kb ? kb : "no");
        rc = -EDOM;
    }
    if (!rc && stream && txn && !(flags & COMPARE_FORCE)) {
        snprintf(err, errlen,
                 "A holds %s runs and B %s runs: a stream's throughput and a request/response "
                 "test's transactions do not compare; compare runs of one kind, or add --force",
                 ka ? ka : "no", kb ? kb : "no");
        rc = -EDOM;
    }
    if (!rc && all && strchr(all, '|'))
        rc = compare_warn(c, "test_kind",
                          "the tests differ in kind (A: %s; B: %s): their metrics mean different "
                          "things, and metrics only one kind has are left out",
                          ka ? ka : "-", kb ? kb : "-");
    if (!rc && served && client)
        rc = compare_warn(c, "role",
                          "the sets mix runs this host's daemon served (the server's view of a "
                          "test) with runs a client measured");
    free(ka), free(kb), free(all);
    return rc;
}

int compare_params(struct store *st, struct compare_result *c, unsigned flags, char *err,
                   size_t errlen)
{
    struct run_info *ra = calloc(c->na + 1, sizeof(*ra)), *rb = calloc(c->nb + 1, sizeof(*rb));
    char mixed_a[600] = "", mixed_b[600] = "";
    int rc = ra && rb ? 0 : -ENOMEM;

    c->params = calloc(NPDEFS + 2, sizeof(*c->params));
    if (!c->params)
        rc = -ENOMEM;
    for (size_t i = 0; !rc && i < c->na; i++)
        read_run(st, c->a[i], &ra[i]);
    for (size_t i = 0; !rc && i < c->nb; i++)
        read_run(st, c->b[i], &rb[i]);
    if (!rc)
        rc = judge_kinds(c, ra, rb, flags, err, errlen);
    if (!rc)
        rc = judge_rx_copy(c, ra, rb);
    for (int w = -2; !rc && w < (int)NPDEFS; w++)
        rc = add_row(c, w, ra, rb, mixed_a, mixed_b, sizeof(mixed_a));
    if (!rc && mixed_a[0])
        rc = compare_warn(c, "mixed_parameters",
                          "set A mixes parameters (%s): its means blend different tests", mixed_a);
    if (!rc && mixed_b[0])
        rc = compare_warn(c, "mixed_parameters",
                          "set B mixes parameters (%s): its means blend different tests", mixed_b);
    if (rc == -ENOMEM)
        snprintf(err, errlen, "out of memory comparing the runs' parameters");
    for (size_t i = 0; ra && i < c->na; i++)
        cJSON_Delete(ra[i].params);
    for (size_t i = 0; rb && i < c->nb; i++)
        cJSON_Delete(rb[i].params);
    free(ra), free(rb);
    return rc;
}

void compare_params_free(struct compare_result *c)
{
    for (size_t i = 0; i < c->nparams; i++) {
        free(c->params[i].a);
        free(c->params[i].b);
    }
    free(c->params);
    c->params = NULL;
    c->nparams = 0;
}
