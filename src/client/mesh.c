/* mesh: plan files, scheduling and running of third-party test matrices. */
#include "mesh.h"

#include "log.h"
#include "sock.h"
#include "thirdparty_ctl.h"
#include "units.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int plan_error(char *err, size_t errlen, const char *path, const char *what)
{
    snprintf(err, errlen, "plan '%s': %s", path, what);
    return -EINVAL;
}

static int load_hosts(const cJSON *arr, struct mesh_plan *p, const char *path, char *err,
                      size_t errlen)
{
    const cJSON *h;
    char what[200];

    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 2 ||
        cJSON_GetArraySize(arr) > MESH_MAX_HOSTS)
        return plan_error(err, errlen, path, "\"hosts\" must be an array of 2 to 64 hosts");
    cJSON_ArrayForEach(h, arr)
    {
        struct mesh_host *mh = &p->hosts[p->nhosts];
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(h, "name");
        const cJSON *addr = cJSON_GetObjectItemCaseSensitive(h, "address");
        const cJSON *port = cJSON_GetObjectItemCaseSensitive(h, "port");

        if (!cJSON_IsString(name) || !*name->valuestring || strlen(name->valuestring) >= 64 ||
            !cJSON_IsString(addr) || !*addr->valuestring || strlen(addr->valuestring) >= 256 ||
            (port &&
             (!cJSON_IsNumber(port) || port->valuedouble < 1 || port->valuedouble > 65535))) {
            snprintf(what, sizeof(what),
                     "hosts[%u] needs \"name\", \"address\" and an optional "
                     "\"port\" from 1 to 65535",
                     p->nhosts);
            return plan_error(err, errlen, path, what);
        }
        for (uint32_t k = 0; k < p->nhosts; k++) {
            if (!strcmp(p->hosts[k].name, name->valuestring)) {
                snprintf(what, sizeof(what), "hosts[%u]: name '%s' is used twice", p->nhosts,
                         name->valuestring);
                return plan_error(err, errlen, path, what);
            }
        }
        snprintf(mh->name, sizeof(mh->name), "%s", name->valuestring);
        snprintf(mh->address, sizeof(mh->address), "%s", addr->valuestring);
        mh->port = port ? (uint16_t)port->valuedouble : SOCK_DEFAULT_PORT;
        p->nhosts++;
    }
    return 0;
}

static int load_tests(const cJSON *arr, struct mesh_plan *p, const char *path, char *err,
                      size_t errlen)
{
    const cJSON *t;
    char what[400], perr[256];

    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) < 1 ||
        cJSON_GetArraySize(arr) > MESH_MAX_TESTS)
        return plan_error(err, errlen, path, "\"tests\" must be an array of 1 to 16 tests");
    cJSON_ArrayForEach(t, arr)
    {
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(t, "test");
        const cJSON *params = cJSON_GetObjectItemCaseSensitive(t, "params");
        cJSON *pj = params ? cJSON_Duplicate(params, 1) : cJSON_CreateObject();
        int k = cJSON_IsString(kind) ? params_test_from_name(kind->valuestring) : -1, rc;

        if (k < 0 || !cJSON_IsObject(pj)) {
            cJSON_Delete(pj);
            snprintf(what, sizeof(what),
                     "tests[%u] needs \"test\": stream, rr or crr, and an "
                     "optional \"params\" object",
                     p->ntests);
            return plan_error(err, errlen, path, what);
        }
        cJSON_DeleteItemFromObjectCaseSensitive(pj, "test");
        cJSON_AddStringToObject(pj, "test", kind->valuestring);
        rc = params_from_json(pj, &p->tests[p->ntests], perr, sizeof(perr));
        cJSON_Delete(pj);
        if (rc) {
            snprintf(what, sizeof(what), "tests[%u].params: %s", p->ntests, perr);
            return plan_error(err, errlen, path, what);
        }
        p->ntests++;
    }
    return 0;
}

static int host_index(const struct mesh_plan *p, const cJSON *name)
{
    for (uint32_t i = 0; cJSON_IsString(name) && i < p->nhosts; i++)
        if (!strcmp(p->hosts[i].name, name->valuestring))
            return (int)i;
    return -1;
}

/* "full" (every ordered pair) or [["a","b"], ...]. */
static int load_pairs(const cJSON *pairs, struct mesh_plan *p, const char *path, char *err,
                      size_t errlen)
{
    uint32_t npairs = 0, (*pr)[2];
    const cJSON *pair;
    char what[200];

    pr = calloc((size_t)MESH_MAX_HOSTS * MESH_MAX_HOSTS, sizeof(*pr));
    if (!pr)
        return -ENOMEM;
    if (!pairs || (cJSON_IsString(pairs) && !strcmp(pairs->valuestring, "full"))) {
        for (uint32_t a = 0; a < p->nhosts; a++)
            for (uint32_t b = 0; b < p->nhosts; b++)
                if (a != b)
                    pr[npairs][0] = a, pr[npairs++][1] = b;
    } else if (cJSON_IsArray(pairs)) {
        cJSON_ArrayForEach(pair, pairs)
        {
            int a = host_index(p, cJSON_GetArrayItem(pair, 0));
            int b = host_index(p, cJSON_GetArrayItem(pair, 1));
            if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2 || a < 0 || b < 0 || a == b ||
                npairs >= MESH_MAX_HOSTS * MESH_MAX_HOSTS) {
                snprintf(what, sizeof(what),
                         "pairs[%u] must be [\"source\", \"destination\"], "
                         "two different host names",
                         npairs);
                free(pr);
                return plan_error(err, errlen, path, what);
            }
            pr[npairs][0] = (uint32_t)a, pr[npairs++][1] = (uint32_t)b;
        }
    } else {
        free(pr);
        return plan_error(err, errlen, path, "\"pairs\" must be \"full\" or a list of pairs");
    }
    p->ncells = npairs * p->ntests;
    p->cells = calloc(p->ncells ? p->ncells : 1, sizeof(*p->cells));
    for (uint32_t t = 0; p->cells && t < p->ntests; t++)
        for (uint32_t i = 0; i < npairs; i++) {
            struct mesh_cell *c = &p->cells[t * npairs + i];
            c->test = t, c->src = pr[i][0], c->dst = pr[i][1];
        }
    free(pr);
    return p->cells ? 0 : -ENOMEM;
}

int mesh_load(const char *path, struct mesh_plan *p, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char *text;
    long len;
    cJSON *doc;
    const cJSON *par, *to;
    int rc;

    memset(p, 0, sizeof(*p));
    if (!f) {
        snprintf(err, errlen, "cannot read plan '%s': %s", path, strerror(errno));
        return -errno;
    }
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    rewind(f);
    if (len <= 0 || len > (1 << 20)) {
        fclose(f);
        return plan_error(err, errlen, path, "empty, or larger than 1 MiB");
    }
    text = calloc(1, (size_t)len + 1);
    if (!text || fread(text, 1, (size_t)len, f) != (size_t)len) {
        fclose(f);
        free(text);
        return plan_error(err, errlen, path, "cannot be read");
    }
    fclose(f);
    doc = cJSON_Parse(text);
    if (!doc) {
        const char *at = cJSON_GetErrorPtr();
        long off = at && at >= text && at <= text + len ? (long)(at - text) : -1;
        int line = 1;
        for (long i = 0; i < off; i++)
            line += text[i] == '\n';
        free(text);
        snprintf(err, errlen, "plan '%s': line %d: not valid JSON", path, line);
        return -EINVAL;
    }
    free(text);
    rc = load_hosts(cJSON_GetObjectItemCaseSensitive(doc, "hosts"), p, path, err, errlen);
    if (!rc)
        rc = load_tests(cJSON_GetObjectItemCaseSensitive(doc, "tests"), p, path, err, errlen);
    if (!rc)
        rc = load_pairs(cJSON_GetObjectItemCaseSensitive(doc, "pairs"), p, path, err, errlen);
    par = cJSON_GetObjectItemCaseSensitive(doc, "parallel");
    to = cJSON_GetObjectItemCaseSensitive(doc, "timeout_s");
    p->parallel = cJSON_IsTrue(par);
    p->timeout_ms = cJSON_IsNumber(to) && to->valuedouble >= 0.1 && to->valuedouble <= 600
                        ? (int)(to->valuedouble * 1000)
                        : 10000;
    cJSON_Delete(doc);
    return rc;
}

struct cell_job {
    struct mesh_plan *p;
    struct mesh_cell *c;
    const struct client_opts *base;
    bool threaded;
};

static void *run_cell(void *arg)
{
    struct cell_job *j = arg;
    struct mesh_cell *c = j->c;
    const struct mesh_host *src = &j->p->hosts[c->src], *dst = &j->p->hosts[c->dst];
    struct client_opts o = *j->base;
    cJSON *doc = NULL;
    const cJSON *st, *msg;

    o.p = j->p->tests[c->test];
    snprintf(o.host, sizeof(o.host), "%s", dst->address);
    o.port = dst->port;
    o.timeout_ms = j->p->timeout_ms;
    if (thirdparty_request(src->address, src->port, &o, &doc, c->error, sizeof(c->error))) {
        c->status = -1;
        return NULL;
    }
    st = cJSON_GetObjectItemCaseSensitive(doc, "status");
    msg = cJSON_GetObjectItemCaseSensitive(doc, "message");
    c->status = cJSON_IsString(st) && !strcmp(st->valuestring, "complete")  ? 1
                : cJSON_IsString(st) && !strcmp(st->valuestring, "partial") ? 2
                                                                            : -1;
    if (c->status != 1)
        log_escape(cJSON_IsString(msg) ? msg->valuestring : "failed", c->error, sizeof(c->error));
    c->result = cJSON_DetachItemFromObjectCaseSensitive(doc, "result");
    cJSON_Delete(doc);
    return NULL;
}

static void progress_line(FILE *out, const struct mesh_plan *p, const struct mesh_cell *c,
                          uint32_t done)
{
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(c->result, "summary");
    const cJSON *tp = cJSON_GetObjectItemCaseSensitive(sum, "throughput_bps");
    const cJSON *tps = cJSON_GetObjectItemCaseSensitive(sum, "transactions_per_s");
    char val[48] = "";

    if (!out)
        return;
    if (c->status > 0 && params_is_transactional(&p->tests[c->test]) && cJSON_IsNumber(tps))
        snprintf(val, sizeof(val), "%.1f transactions/s", tps->valuedouble);
    else if (c->status > 0 && cJSON_IsNumber(tp))
        units_format_rate(tp->valuedouble, val, sizeof(val));
    fprintf(out, "mesh [%u/%u] %s -> %s %s: %s%s%s\n", done, p->ncells, p->hosts[c->src].name,
            p->hosts[c->dst].name, params_test_name(p->tests[c->test].test),
            c->status == 1   ? "ok "
            : c->status == 2 ? "partial "
                             : "FAILED ",
            c->status > 0 ? val : "", c->status != 1 ? c->error : "");
    fflush(out);
}

/* The next round: cells whose hosts are all free (every pending cell when parallel). */
static uint32_t pick_round(struct mesh_plan *p, bool *picked, uint32_t *round)
{
    bool busy[MESH_MAX_HOSTS] = {false};
    uint32_t n = 0;

    for (uint32_t i = 0; i < p->ncells; i++) {
        struct mesh_cell *c = &p->cells[i];
        if (picked[i] || (!p->parallel && (busy[c->src] || busy[c->dst])))
            continue;
        if (n && p->cells[round[0]].test != c->test)
            continue; /* one test kind per round */
        picked[i] = true;
        busy[c->src] = busy[c->dst] = true;
        round[n++] = i;
    }
    return n;
}

uint32_t mesh_run(struct mesh_plan *p, const struct client_opts *base, FILE *progress,
                  void (*done_fn)(struct mesh_plan *plan, struct mesh_cell *c, void *arg),
                  void *arg, _Atomic int *stop)
{
    bool *picked = calloc(p->ncells ? p->ncells : 1, sizeof(*picked));
    uint32_t *round = calloc(p->ncells ? p->ncells : 1, sizeof(*round));
    struct cell_job *jobs = calloc(p->ncells ? p->ncells : 1, sizeof(*jobs));
    pthread_t *th = calloc(p->ncells ? p->ncells : 1, sizeof(*th));
    uint32_t done = 0, failed = 0, n;

    while (picked && round && jobs && th && !(stop && *stop) &&
           (n = pick_round(p, picked, round)) > 0) {
        for (uint32_t k = 0; k < n; k++) {
            jobs[k] = (struct cell_job){.p = p, .c = &p->cells[round[k]], .base = base};
            jobs[k].threaded = pthread_create(&th[k], NULL, run_cell, &jobs[k]) == 0;
            if (!jobs[k].threaded)
                run_cell(&jobs[k]); /* no thread to spare: run it here */
        }
        for (uint32_t k = 0; k < n; k++) {
            if (jobs[k].threaded)
                pthread_join(th[k], NULL);
            progress_line(progress, p, &p->cells[round[k]], ++done);
            if (done_fn)
                done_fn(p, &p->cells[round[k]], arg);
        }
    }
    for (uint32_t i = 0; i < p->ncells; i++) {
        if (!p->cells[i].status) {
            p->cells[i].status = -1;
            snprintf(p->cells[i].error, sizeof(p->cells[i].error), "not run: interrupted");
            if (done_fn)
                done_fn(p, &p->cells[i], arg);
        }
        failed += p->cells[i].status < 0;
    }
    free(picked);
    free(round);
    free(jobs);
    free(th);
    return failed;
}

void mesh_free(struct mesh_plan *p)
{
    for (uint32_t i = 0; p->cells && i < p->ncells; i++)
        cJSON_Delete(p->cells[i].result);
    free(p->cells);
    p->cells = NULL;
}
