/* load_json: the document of a load run (docs/json.md, "netrig load"). */
#include "load_json.h"

#include "result_json.h"
#include "samples_json.h"

#include <math.h>
#include <stdio.h>

static cJSON *probe_json(const struct load_probe_stats *ps)
{
    cJSON *o = cJSON_CreateObject(), *l;

    cJSON_AddNumberToObject(o, "sent", (double)ps->sent);
    cJSON_AddNumberToObject(o, "answered", (double)ps->answered);
    cJSON_AddNumberToObject(o, "lost", (double)ps->lost);
    cJSON_AddNumberToObject(o, "loss_pct", ps->loss_pct);
    l = cJSON_AddObjectToObject(o, "latency_us");
    cJSON_AddNumberToObject(l, "min", ps->min_us);
    cJSON_AddNumberToObject(l, "mean", ps->mean_us);
    cJSON_AddNumberToObject(l, "p50", ps->p50_us);
    cJSON_AddNumberToObject(l, "p90", ps->p90_us);
    cJSON_AddNumberToObject(l, "p99", ps->p99_us);
    cJSON_AddNumberToObject(l, "max", ps->max_us);
    if (ps->owd_n) { /* the UDP probe's answers with the server's stamp */
        l = cJSON_AddObjectToObject(o, "one_way_us");
        cJSON_AddNumberToObject(l, "answers", (double)ps->owd_n);
        cJSON_AddNumberToObject(l, "up_p50", ps->up_p50_us);
        cJSON_AddNumberToObject(l, "down_p50", ps->down_p50_us);
    }
    return o;
}

static cJSON *phases_json(const struct load_result *lr)
{
    cJSON *a = cJSON_CreateArray();

    for (int ph = 0; ph < LOAD_NPHASES; ph++) {
        const struct load_phase_stats *s = &lr->phase[ph];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", load_phase_name((enum load_phase)ph));
        cJSON_AddNumberToObject(o, "start_s", s->start_s);
        cJSON_AddNumberToObject(o, "end_s", s->end_s);
        cJSON_AddNumberToObject(o, "from_s", s->from_s);
        cJSON_AddNumberToObject(o, "up_bps", s->up_bps);
        cJSON_AddNumberToObject(o, "down_bps", s->down_bps);
        for (int p = LOAD_UDP_PROBE; p <= LOAD_TCP_PROBE; p++)
            cJSON_AddItemToObject(o, load_part_name((enum load_part)p),
                                  lr->ran[p] ? probe_json(&s->probe[p]) : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "icmp_probe",
                              lr->icmp_ran ? probe_json(&s->icmp) : cJSON_CreateNull());
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *increase_json(const struct load_result *lr)
{
    cJSON *o = cJSON_CreateObject();
    bool judged = lr->band >= 0;

    cJSON_AddItemToObject(o, "probe",
                          judged
                              ? cJSON_CreateString(lr->judged_by == LOAD_UDP_PROBE ? "udp" : "tcp")
                              : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "p50_us",
                          judged ? cJSON_CreateNumber(lr->increase_p50_us) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "p99_us",
                          judged ? cJSON_CreateNumber(lr->increase_p99_us) : cJSON_CreateNull());
    cJSON_AddItemToObject(
        o, "band", judged ? cJSON_CreateString(load_band_grade(lr->band)) : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "band_limit_ms",
                          judged && isfinite(load_band_limit_ms(lr->band))
                              ? cJSON_CreateNumber(load_band_limit_ms(lr->band))
                              : cJSON_CreateNull());
    cJSON_AddStringToObject(o, "verdict", load_band_words(lr->band));
    cJSON_AddItemToObject(o, "up_p50_us",
                          lr->owd_judged ? cJSON_CreateNumber(lr->increase_up_p50_us)
                                         : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "down_p50_us",
                          lr->owd_judged ? cJSON_CreateNumber(lr->increase_down_p50_us)
                                         : cJSON_CreateNull());
    cJSON_AddItemToObject(o, "icmp_p50_us",
                          lr->icmp_judged ? cJSON_CreateNumber(lr->icmp_increase_p50_us)
                                          : cJSON_CreateNull());
    cJSON_AddNumberToObject(o, "drain_s", lr->drain_s);
    cJSON_AddBoolToObject(o, "drained", lr->drained);
    return o;
}

/* --icmp: how the ICMP probe ran (null without --icmp) */
static cJSON *icmp_json(const struct load_result *lr)
{
    cJSON *o;

    if (!lr->lp.icmp)
        return cJSON_CreateNull();
    o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ran", lr->icmp_ran);
    cJSON_AddStringToObject(o, "socket", lr->icmp_kind);
    cJSON_AddNumberToObject(o, "sent", (double)lr->icmp_sent);
    cJSON_AddNumberToObject(
        o, "late_pct", lr->icmp_sent ? 100.0 * (double)lr->icmp_late / (double)lr->icmp_sent : 0);
    cJSON_AddStringToObject(o, "error", lr->icmp_error);
    return o;
}

/* --classes: each class's mark, probe per phase, increase and goodput (null without) */
static cJSON *classes_json(const struct load_result *lr)
{
    cJSON *a;

    if (!lr->nclasses)
        return cJSON_CreateNull();
    a = cJSON_CreateArray();
    for (uint32_t c = 0; c < lr->nclasses; c++) {
        const struct load_class_stats *cs = &lr->cls[c];
        cJSON *o = cJSON_CreateObject(), *ph;
        char probe[16];
        cJSON_AddStringToObject(o, "name", dsclass_name(lr->lp.classes, c));
        cJSON_AddNumberToObject(o, "dscp", dsclass_dscp(lr->lp.classes, c));
        cJSON_AddStringToObject(o, "probe",
                                load_class_probe(lr->lp.classes, c, probe, sizeof(probe)));
        cJSON_AddItemToObject(
            o, "up_bps", lr->ran[LOAD_UP] ? cJSON_CreateNumber(cs->up_bps) : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "down_bps",
                              lr->ran[LOAD_DOWN] ? cJSON_CreateNumber(cs->down_bps)
                                                 : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "increase_p50_us",
                              cs->judged ? cJSON_CreateNumber(cs->increase_p50_us)
                                         : cJSON_CreateNull());
        ph = cJSON_AddObjectToObject(o, "phases");
        for (int i = 0; i < LOAD_NPHASES; i++)
            cJSON_AddItemToObject(ph, load_phase_name((enum load_phase)i),
                                  load_class_log(lr, c) ? probe_json(&cs->probe[i])
                                                        : cJSON_CreateNull());
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *rates_json(const struct load_result *lr)
{
    cJSON *o = cJSON_CreateObject();

    for (int p = LOAD_UDP_PROBE; p <= LOAD_TCP_PROBE; p++) {
        const struct load_probe_rate *r = &lr->rate[p];
        cJSON *x;
        if (!lr->ran[p]) {
            cJSON_AddNullToObject(o, load_part_name((enum load_part)p));
            continue;
        }
        x = cJSON_AddObjectToObject(o, load_part_name((enum load_part)p));
        cJSON_AddNumberToObject(x, "intended_per_s", r->intended_per_s);
        cJSON_AddNumberToObject(x, "sent_per_s", r->sent_per_s);
        cJSON_AddNumberToObject(x, "answered_per_s", r->answered_per_s);
        cJSON_AddNumberToObject(x, "late_pct", r->late_pct);
        cJSON_AddBoolToObject(x, "kept", r->kept);
    }
    return o;
}

static cJSON *tri(int v) { return v < 0 ? cJSON_CreateNull() : cJSON_CreateBool(v); }

static cJSON *kernel_json(const struct load_kernel *k)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddItemToObject(o, "fq_codel", tri(k->fq_codel));
    cJSON_AddItemToObject(o, "cake", tri(k->cake));
    cJSON_AddItemToObject(o, "fq", tri(k->fq));
    cJSON_AddStringToObject(o, "how", k->how);
    return o;
}

static cJSON *parts_json(const struct load_result *lr)
{
    cJSON *o = cJSON_CreateObject();

    for (int p = 0; p < LOAD_NPARTS; p++) {
        const char *name = load_part_name((enum load_part)p);
        if (lr->ran[p]) {
            cJSON *d = result_json_run(&lr->part[p]);
            cJSON_AddNumberToObject(d, "start_offset_s", (double)lr->part_off_ns[p] / 1e9);
            cJSON_AddItemToObject(o, name, d);
        } else if (lr->wanted[p]) {
            cJSON *e = cJSON_AddObjectToObject(o, name);
            cJSON_AddStringToObject(e, "error", lr->part_error[p]);
        } else {
            cJSON_AddNullToObject(o, name);
        }
    }
    return o;
}

void load_warnings(const struct load_result *lr, char (*w)[320], size_t *n, size_t max)
{
    *n = 0;
    for (int p = LOAD_UDP_PROBE; p <= LOAD_TCP_PROBE && *n < max; p++) {
        const struct load_probe_rate *r = &lr->rate[p];
        const struct txnlog *log = lr->part[p].local.log;
        const char *kind = p == LOAD_UDP_PROBE ? "UDP" : "TCP";
        if (lr->ran[p] && !r->kept)
            snprintf(w[(*n)++], sizeof(w[0]),
                     "the %s probe did not keep its rate: %.0f/s intended, %.0f/s sent, %.0f/s "
                     "answered (this host or the path could not keep it)",
                     kind, r->intended_per_s, r->sent_per_s, r->answered_per_s);
        if (lr->ran[p] && r->late_pct > 5 && *n < max)
            snprintf(w[(*n)++], sizeof(w[0]),
                     "%.1f %% of the %s probes left more than 1 ms after their time (this host "
                     "was busy): the schedule slipped, and each one's latency counts from when it "
                     "left",
                     r->late_pct, kind);
        if (lr->ran[p] && log && log->dropped && *n < max)
            snprintf(w[(*n)++], sizeof(w[0]),
                     "the %s probe's log was full: %llu probes are missing from the phases", kind,
                     (unsigned long long)log->dropped);
    }
    for (int p = 0; p < LOAD_NPARTS && *n < max; p++)
        if (lr->wanted[p] && !lr->ran[p])
            snprintf(w[(*n)++], sizeof(w[0]), "the %s test did not run: %s",
                     load_part_name((enum load_part)p), lr->part_error[p]);
        else if (lr->ran[p] && lr->part[p].partial && !(lr->probes_cut && p <= LOAD_TCP_PROBE))
            snprintf(w[(*n)++], sizeof(w[0]), "the %s test is partial: %s",
                     load_part_name((enum load_part)p), lr->part[p].error);
    if (lr->probes_cut && *n < max)
        snprintf(w[(*n)++], sizeof(w[0]), "the probes stopped early: no load could run");
}

/* A probe's records on the load's clock: their send times and latencies (null: lost). */
static cJSON *probe_records(const struct txnlog *log, int64_t off_ns)
{
    cJSON *x = cJSON_CreateObject();
    cJSON *t = cJSON_AddArrayToObject(x, "t_s"), *l = cJSON_AddArrayToObject(x, "latency_us");

    for (uint32_t i = 0; i < log->n; i++) {
        cJSON_AddItemToArray(t,
                             cJSON_CreateNumber(((double)log->rec[i].t_ns + (double)off_ns) / 1e9));
        cJSON_AddItemToArray(l, log->rec[i].lat_ns == TXNLOG_LOST
                                    ? cJSON_CreateNull()
                                    : cJSON_CreateNumber((double)log->rec[i].lat_ns / 1e3));
    }
    return x;
}

/* --samples: each part's time series and each probe's records, on the load's clock. */
static cJSON *series_json(const struct load_result *lr)
{
    cJSON *o = cJSON_CreateObject(), *smp = cJSON_AddObjectToObject(o, "samples");
    cJSON *pr = cJSON_AddObjectToObject(o, "probes");

    for (int p = LOAD_UP; p <= LOAD_DOWN; p++) {
        cJSON *x = cJSON_AddObjectToObject(smp, load_part_name((enum load_part)p));
        const struct side_result *sides[2] = {&lr->part[p].local, &lr->part[p].remote};
        for (int s = 0; s < 2; s++) {
            cJSON *j = lr->ran[p] && sides[s]->samples ? samples_json(sides[s]->samples, NULL)
                                                       : cJSON_CreateNull();
            if (!cJSON_IsNull(j))
                cJSON_AddNumberToObject(j, "offset_s", (double)lr->part_off_ns[p] / 1e9);
            cJSON_AddItemToObject(x, s ? "server" : "client", j);
        }
    }
    for (int p = LOAD_UDP_PROBE; p <= LOAD_TCP_PROBE; p++) {
        const struct txnlog *log = lr->ran[p] ? lr->part[p].local.log : NULL;
        const char *name = p == LOAD_UDP_PROBE ? "udp" : "tcp";
        cJSON_AddItemToObject(pr, name,
                              log ? probe_records(log, lr->part_off_ns[p]) : cJSON_CreateNull());
    }
    for (uint32_t c = 1; c < lr->nclasses; c++) { /* --classes: the first is "udp" */
        const struct txnlog *log = load_class_log(lr, c);
        char name[16];
        cJSON_AddItemToObject(pr, load_class_probe(lr->lp.classes, c, name, sizeof(name)),
                              log ? probe_records(log, lr->part_off_ns[LOAD_UDP_PROBE])
                                  : cJSON_CreateNull());
    }
    return o;
}

static const char *server_version(const struct load_result *lr)
{
    for (int p = 0; p < LOAD_NPARTS; p++)
        if (lr->ran[p] && lr->part[p].remote.version[0])
            return lr->part[p].remote.version;
    return "";
}

cJSON *load_json(const struct load_result *lr, bool series)
{
    cJSON *o = cJSON_CreateObject(), *cc, *a;
    char adv[8][400], warn[8][320];
    size_t na = load_advice(lr, adv, 8), nw;

    cJSON_AddStringToObject(o, "netrig_version", NETRIG_VERSION);
    cJSON_AddStringToObject(o, "test", "load");
    cJSON_AddStringToObject(o, "title", lr->lp.title);
    cJSON_AddStringToObject(o, "started_at", lr->started_at);
    cJSON_AddNumberToObject(o, "start_unix_s", (double)lr->start_unix_ns / 1e9);
    cJSON_AddStringToObject(o, "server", lr->server);
    cJSON_AddStringToObject(o, "server_version", server_version(lr));
    cJSON_AddItemToObject(o, "params", load_params_json(&lr->lp));
    cc = cJSON_AddObjectToObject(o, "congestion");
    cJSON_AddStringToObject(cc, "up", lr->cc_up);
    cJSON_AddStringToObject(cc, "down", lr->cc_down);
    cJSON_AddItemToObject(o, "phases", phases_json(lr));
    cJSON_AddItemToObject(o, "latency_increase", increase_json(lr));
    cJSON_AddItemToObject(o, "probe_rate", rates_json(lr));
    cJSON_AddItemToObject(o, "icmp", icmp_json(lr));
    cJSON_AddItemToObject(o, "classes", classes_json(lr));
    cJSON_AddItemToObject(o, "kernel", kernel_json(&lr->kernel));
    a = cJSON_AddArrayToObject(o, "advice");
    for (size_t i = 0; i < na; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(adv[i]));
    cJSON_AddItemToObject(o, "parts", parts_json(lr));
    if (series) {
        cJSON *s = series_json(lr);
        cJSON_AddItemToObject(o, "samples", cJSON_DetachItemFromObject(s, "samples"));
        cJSON_AddItemToObject(o, "probes", cJSON_DetachItemFromObject(s, "probes"));
        cJSON_Delete(s);
    }
    load_warnings(lr, warn, &nw, 8);
    a = cJSON_AddArrayToObject(o, "warnings");
    for (size_t i = 0; i < nw; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(warn[i]));
    cJSON_AddBoolToObject(o, "partial", lr->partial);
    if (lr->partial)
        cJSON_AddStringToObject(o, "error", lr->error);
    return o;
}
