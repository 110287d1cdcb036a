/* tune_report: the plan, what --apply did, what --revert restored, and the journals. */
#define _GNU_SOURCE
#include "tune_report.h"

#include "tune_confirm.h"
#include "tune_place.h"
#include "tune_risk.h"
#include "units.h"
#include "wrap.h"

#include <time.h>

#include <limits.h>
#include <string.h>

static const char *outcome_name(enum tune_outcome o)
{
    static const char *const names[] = {"applied",  "refused", "unverified",
                                        "not_here", "not_run", "held"};

    return (unsigned)o < 6 ? names[o] : "?";
}

static void target_line(FILE *out, const struct tune_plan *plan, const char *what)
{
    char rate[32], bdp[32];

    units_format_rate(plan->target.rate_bps, rate, sizeof(rate));
    units_format_bytes(plan->target.bdp_bytes, bdp, sizeof(bdp));
    fprintf(out, "netrig tune: %s x %g ms (BDP %s), %s profile%s; %s\n", rate,
            plan->target.rtt_s * 1e3, bdp,
            plan->profile == AUDIT_PROFILE_LATENCY ? "latency" : "throughput",
            plan->netns_child == 1 ? ", in a child network namespace" : "", what);
}

/* Changes after c that only repeat it for another file (one governor per CPU). */
static size_t same_as(const struct tune_change *c, const struct tune_change *end)
{
    size_t n = 0;

    for (const struct tune_change *d = c + 1; d < end; d++, n++)
        if (strcmp(d->finding, c->finding) || strcmp(d->old_value, c->old_value) ||
            strcmp(d->new_value, c->new_value) || strcmp(d->blocked, c->blocked) ||
            strcmp(d->iface, c->iface))
            break;
    return n;
}

static void change_text(FILE *out, const struct tune_change *c, size_t more)
{
    char old[TUNE_VALUE_LEN], nv[TUNE_VALUE_LEN], line[2 * TUNE_VALUE_LEN + 64];

    tune_plan_squash(c->old_value, old, sizeof(old));
    tune_plan_squash(c->new_value, nv, sizeof(nv));
    if (more)
        fprintf(out, "  %s and %zu more like it  [%s %s]  %s\n", c->name, more,
                audit_status_name(c->status), c->finding, tune_risk_name(c->risk));
    else
        fprintf(out, "  %s  [%s %s%s%s]  %s%s%s%s\n", c->name, audit_status_name(c->status),
                c->finding, c->iface[0] ? " " : "", c->iface, tune_risk_name(c->risk),
                strcmp(c->item, c->name) ? " (item " : "", strcmp(c->item, c->name) ? c->item : "",
                strcmp(c->item, c->name) ? ")" : "");
    snprintf(line, sizeof(line), "%s -> %s",
             c->old_known
                 ? old
                 : (c->kind == TUNE_ETHTOOL ? "(asked of the NIC when applied)" : "(unreadable)"),
             nv);
    wrap_print(out, NULL, 4, line);
    wrap_print(out, NULL, 4, c->reason);
    snprintf(line, sizeof(line), "$ %s", c->command);
    wrap_print(out, NULL, 4, line);
    snprintf(line, sizeof(line), "%s: %s", tune_risk_name(c->risk), c->risk_why);
    wrap_print(out, NULL, 4, line);
    if (c->probe[0]) {
        snprintf(line, sizeof(line), "probe: %s", c->probe);
        wrap_print(out, NULL, 4, line);
    }
    if (c->blocked[0]) {
        snprintf(line, sizeof(line), "NOT HERE: %s", c->blocked);
        wrap_print(out, NULL, 4, line);
    } else if (c->held[0]) {
        snprintf(line, sizeof(line), "HELD BACK: %s", c->held);
        wrap_print(out, NULL, 4, line);
    }
}

static void manual_text(FILE *out, const struct tune_plan *plan)
{
    char line[2 * AUDIT_TEXT_LEN];

    if (!plan->nmanual)
        return;
    fprintf(out, "\nManual steps (%zu): shown with their command, never run by netrig\n",
            plan->nmanual);
    for (size_t i = 0; i < plan->nmanual; i++) {
        const struct tune_manual *m = &plan->manual[i];
        fprintf(out, "  %s%s%s  [%s]\n", m->finding, m->iface[0] ? " " : "", m->iface,
                audit_status_name(m->status));
        wrap_print(out, NULL, 4, m->reason);
        if (m->command[0]) {
            snprintf(line, sizeof(line), "%s %s", m->is_command ? "$" : "fix:", m->command);
            wrap_print(out, NULL, 4, line);
        }
        snprintf(line, sizeof(line), "manual (netrig never runs it): %s", m->why);
        wrap_print(out, NULL, 4, line);
    }
}

static void peer_text(FILE *out, const struct tune_plan *plan)
{
    char line[AUDIT_TEXT_LEN];

    if (!plan->peer[0])
        return;
    if (plan->peer_probed)
        snprintf(line, sizeof(line),
                 "Path-MTU probes went to --peer %s (%s), through %s (path MTU %u as the kernel "
                 "knows it now): see 'probe:' above.",
                 plan->peer, plan->peer_addr, plan->peer_route, plan->peer_mtu);
    else
        snprintf(line, sizeof(line),
                 "--peer %s: no MTU change in this plan to probe for, so nothing was sent (the "
                 "route to it leaves by %s, path MTU %u).",
                 plan->peer, plan->peer_route, plan->peer_mtu);
    fputc('\n', out);
    wrap_print(out, NULL, 0, line);
}

static void preview_text(FILE *out, const struct tune_file *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fprintf(out, "\n--persist would %s %s:\n", f[i].old_content ? "rewrite" : "create",
                f[i].path);
        for (const char *p = f[i].new_content; p && *p;) {
            const char *nl = strchr(p, '\n');
            int len = nl ? (int)(nl - p) : (int)strlen(p);
            fprintf(out, "  | %.*s\n", len, p);
            p += len + (nl != NULL);
        }
    }
}

static void apply_summary(FILE *out, const struct tune_apply_result *res, const char *undo)
{
    fprintf(out, "\nApplied %u, refused %u, not applicable here %u, held back %u, unverified %u.\n",
            res->applied, res->refused, res->blocked, res->held, res->unverified);
    if (!res->refused && !res->unverified)
        fprintf(out, "Every change that applies here was made%s.\n",
                res->blocked ? " (the ones not applicable here are no failure: exit 0)" : "");
    for (size_t i = 0; i < res->nfiles; i++)
        fprintf(out, "Persisted in %s (%s).\n", res->files[i].path,
                outcome_name(res->file_done[i].outcome));
    fprintf(out, "Journal: %s\n", res->journal);
    if (undo)
        wrap_print(out, NULL, 0, undo);
}

void tune_report_plan_text(FILE *out, const struct tune_plan *plan,
                           const struct tune_apply_result *res, const struct tune_file *preview,
                           size_t npreview, const char *apply_cmd)
{
    size_t here = 0, held = 0, disruptive = 0;

    if (res) { /* the changes were listed as they were made */
        manual_text(out, plan);
        apply_summary(out, res, apply_cmd);
        return;
    }
    target_line(out, plan, "dry run, nothing changed");
    for (size_t i = 0; i < plan->nchanges; i++) {
        here += !plan->changes[i].blocked[0] && !plan->changes[i].held[0];
        held += plan->changes[i].held[0] != 0;
        disruptive += plan->changes[i].risk == TUNE_RISK_DISRUPTIVE;
    }
    if (!plan->nchanges)
        fprintf(out, "\nNothing for netrig to change: no finding at warn or bad that it "
                     "applies.\n");
    else
        fprintf(out,
                "\nChanges (%zu: %zu safe, %zu disruptive; --apply would make %zu, hold back "
                "%zu):\n",
                plan->nchanges, plan->nchanges - disruptive, disruptive, here, held);
    for (size_t i = 0; i < plan->nchanges; i++) {
        size_t more = same_as(&plan->changes[i], plan->changes + plan->nchanges);
        change_text(out, &plan->changes[i], more);
        i += more;
    }
    manual_text(out, plan);
    peer_text(out, plan);
    preview_text(out, preview, npreview);
    if (here && apply_cmd) {
        fputc('\n', out);
        wrap_print(out, NULL, 0, apply_cmd);
    }
}

static cJSON *str_or_null(const char *s)
{
    return s && *s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static cJSON *change_json(const struct tune_change *c, const struct tune_done *d)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "setting", c->name);
    cJSON_AddStringToObject(o, "kind", tune_plan_kind_name(c->kind));
    cJSON_AddStringToObject(o, "path", c->path);
    cJSON_AddItemToObject(o, "old",
                          c->old_known ? cJSON_CreateString(c->old_value) : cJSON_CreateNull());
    cJSON_AddStringToObject(o, "new", c->new_value);
    cJSON_AddStringToObject(o, "finding", c->finding);
    cJSON_AddItemToObject(o, "iface", str_or_null(c->iface));
    cJSON_AddStringToObject(o, "status", audit_status_name(c->status));
    cJSON_AddStringToObject(o, "reason", c->reason);
    cJSON_AddStringToObject(o, "command", c->command);
    cJSON_AddBoolToObject(o, "per_netns", c->per_netns);
    cJSON_AddBoolToObject(o, "settable_here", !c->blocked[0]);
    cJSON_AddItemToObject(o, "not_here", str_or_null(c->blocked));
    cJSON_AddStringToObject(o, "class", tune_risk_name(c->risk));
    cJSON_AddStringToObject(o, "class_why", c->risk_why);
    cJSON_AddStringToObject(o, "item", c->item);
    cJSON_AddItemToObject(o, "held", str_or_null(c->held));
    cJSON_AddItemToObject(o, "probe", str_or_null(c->probe));
    if (d) {
        cJSON_AddStringToObject(o, "result", outcome_name(d->outcome));
        cJSON_AddItemToObject(o, "now",
                              d->outcome == TUNE_O_BLOCKED || d->outcome == TUNE_O_NOT_RUN
                                  ? cJSON_CreateNull()
                                  : cJSON_CreateString(d->now));
        cJSON_AddItemToObject(o, "error", str_or_null(d->error));
        cJSON_AddItemToObject(o, "note", str_or_null(d->note));
    }
    return o;
}

static cJSON *manual_json(const struct tune_manual *m)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "finding", m->finding);
    cJSON_AddItemToObject(o, "iface", str_or_null(m->iface));
    cJSON_AddStringToObject(o, "status", audit_status_name(m->status));
    cJSON_AddStringToObject(o, "reason", m->reason);
    cJSON_AddItemToObject(o, "command", str_or_null(m->command));
    cJSON_AddStringToObject(o, "class", tune_risk_name(TUNE_RISK_MANUAL));
    cJSON_AddStringToObject(o, "why_manual", m->why);
    return o;
}

static cJSON *files_json(const struct tune_file *f, const struct tune_done *d, size_t n)
{
    cJSON *arr = cJSON_CreateArray();

    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", f[i].path);
        cJSON_AddItemToObject(
            o, "old", f[i].old_content ? cJSON_CreateString(f[i].old_content) : cJSON_CreateNull());
        cJSON_AddStringToObject(o, "new", f[i].new_content ? f[i].new_content : "");
        if (d)
            cJSON_AddStringToObject(o, "result", outcome_name(d[i].outcome));
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static cJSON *peer_json(const struct tune_plan *plan)
{
    cJSON *p;

    if (!plan->peer[0])
        return cJSON_CreateNull();
    p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "host", plan->peer);
    cJSON_AddStringToObject(p, "address", plan->peer_addr);
    cJSON_AddStringToObject(p, "route_interface", plan->peer_route);
    cJSON_AddNumberToObject(p, "path_mtu", plan->peer_mtu);
    cJSON_AddBoolToObject(p, "probed", plan->peer_probed);
    return p;
}

static cJSON *target_json(const struct tune_plan *plan)
{
    cJSON *t = cJSON_CreateObject();

    cJSON_AddNumberToObject(t, "rate_bps", plan->target.rate_bps);
    cJSON_AddNumberToObject(t, "rtt_s", plan->target.rtt_s);
    cJSON_AddNumberToObject(t, "bdp_bytes", plan->target.bdp_bytes);
    cJSON_AddStringToObject(t, "rate_source", plan->target.rate_source);
    cJSON_AddStringToObject(t, "rtt_source", plan->target.rtt_source);
    cJSON_AddStringToObject(t, "profile",
                            plan->profile == AUDIT_PROFILE_LATENCY ? "latency" : "throughput");
    return t;
}

cJSON *tune_report_plan_json(const struct tune_plan *plan, const struct tune_apply_result *res,
                             const struct tune_file *preview, size_t npreview)
{
    cJSON *o = cJSON_CreateObject(), *ch = cJSON_CreateArray(), *man = cJSON_CreateArray();
    cJSON *sum = cJSON_CreateObject();
    size_t here = 0, held = 0, disruptive = 0;

    cJSON_AddStringToObject(o, "mode", res ? "apply" : "dry_run");
    cJSON_AddItemToObject(o, "target", target_json(plan));
    cJSON_AddStringToObject(o, "netns",
                            plan->netns_child == 1 ? "child"
                                                   : (plan->netns_child == 0 ? "host" : "unknown"));
    for (size_t i = 0; i < plan->nchanges; i++) {
        const struct tune_change *c = &plan->changes[i];
        cJSON_AddItemToArray(ch, change_json(c, res ? &res->done[i] : NULL));
        here += !c->blocked[0];
        held += c->held[0] != 0;
        disruptive += c->risk == TUNE_RISK_DISRUPTIVE;
    }
    cJSON_AddItemToObject(o, "changes", ch);
    for (size_t i = 0; i < plan->nmanual; i++)
        cJSON_AddItemToArray(man, manual_json(&plan->manual[i]));
    cJSON_AddItemToObject(o, "manual", man);
    cJSON_AddItemToObject(o, "persist",
                          res ? files_json(res->files, res->file_done, res->nfiles)
                              : files_json(preview, NULL, npreview));
    cJSON_AddItemToObject(o, "journal", str_or_null(res ? res->journal : NULL));
    cJSON_AddItemToObject(o, "peer", peer_json(plan));
    cJSON_AddNumberToObject(sum, "planned", (double)plan->nchanges);
    cJSON_AddNumberToObject(sum, "settable_here", (double)here);
    cJSON_AddNumberToObject(sum, "safe", (double)(plan->nchanges - disruptive));
    cJSON_AddNumberToObject(sum, "disruptive", (double)disruptive);
    cJSON_AddNumberToObject(sum, "held", (double)held);
    cJSON_AddNumberToObject(sum, "manual", (double)plan->nmanual);
    if (res) {
        cJSON_AddNumberToObject(sum, "applied", res->applied);
        cJSON_AddNumberToObject(sum, "refused", res->refused);
        cJSON_AddNumberToObject(sum, "not_here", res->blocked);
        cJSON_AddNumberToObject(sum, "unverified", res->unverified);
    }
    cJSON_AddItemToObject(o, "summary", sum);
    return o;
}

/* ---- revert ------------------------------------------------------------------------------ */

void tune_report_revert_text(FILE *out, const struct tune_revert_result *res)
{
    fprintf(out, "\nRestored %u, unchanged %u (refused when applied), failed %u, from %s.\n",
            res->restored, res->skipped, res->failed, res->journal);
}

cJSON *tune_report_revert_json(const struct tune_revert_result *res)
{
    cJSON *o = cJSON_CreateObject(), *arr = cJSON_CreateArray(), *sum = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "mode", "revert");
    cJSON_AddStringToObject(o, "journal", res->journal);
    for (size_t i = 0; i < res->n; i++) {
        const struct tune_undo *u = &res->undo[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "seq", u->seq);
        cJSON_AddStringToObject(e, "setting", u->name);
        cJSON_AddStringToObject(e, "kind", u->kind);
        cJSON_AddStringToObject(e, "path", u->path);
        cJSON_AddStringToObject(e, "value", u->to);
        cJSON_AddStringToObject(
            e, "result", u->outcome > 0 ? "restored" : (u->outcome == 0 ? "unchanged" : "failed"));
        cJSON_AddItemToObject(e, "error", str_or_null(u->outcome < 0 ? u->error : NULL));
        cJSON_AddItemToArray(arr, e);
    }
    cJSON_AddItemToObject(o, "restored", arr);
    cJSON_AddNumberToObject(sum, "restored", res->restored);
    cJSON_AddNumberToObject(sum, "unchanged", res->skipped);
    cJSON_AddNumberToObject(sum, "failed", res->failed);
    cJSON_AddItemToObject(o, "summary", sum);
    return o;
}

/* ---- --list ------------------------------------------------------------------------------ */

/* "applied", "reverted", "partly reverted", "revert interrupted", "apply interrupted", with
 * the confirmation when one was asked for */
static const char *journal_state(const struct tune_journal *j)
{
    if (j->reverted)
        return j->revert_failed ? "partly reverted" : "reverted";
    if (j->reverts)
        return "revert interrupted";
    return j->done ? "applied" : "apply interrupted";
}

static void confirm_state(const struct tune_journal *j, char *buf, size_t len)
{
    char at[32];
    time_t t = (time_t)tune_confirm_deadline(j);
    struct tm tm;

    buf[0] = '\0';
    if (!j->confirm)
        return;
    gmtime_r(&t, &tm);
    strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (j->reverts && !strcmp(j->reverted_by, "watchdog"))
        snprintf(buf, len, "by its watchdog: not confirmed in time");
    else if (j->confirmed)
        snprintf(buf, len, "confirmed %s", j->confirmed_at);
    else if (!j->reverts)
        snprintf(buf, len,
                 "waits for 'netrig tune --confirm': its watchdog (pid %ld) reverts it "
                 "at %s",
                 j->watchdog_pid, at);
}

static void journal_counts(const struct tune_journal *j, unsigned c[4])
{
    memset(c, 0, 4 * sizeof(*c));
    for (size_t i = 0; i < j->n; i++)
        c[j->e[i].state]++;
}

void tune_report_list_text(FILE *out, const char *dir, const char *sysroot, char **names, size_t n)
{
    char path[PATH_MAX], err[PATH_MAX + 256], conf[256], where[192], why[2 * PATH_MAX + 512];
    struct hostwr_place here;
    int here_child;
    unsigned c[4], elsewhere = 0;

    if (!n) {
        fprintf(out, "no journals in %s\n", dir);
        return;
    }
    sysroot = sysroot && *sysroot ? sysroot : NULL;
    hostwr_place(sysroot, &here);
    here_child = hostwr_netns_child(sysroot);
    tune_place_text(&here, where, sizeof(where));
    fprintf(out, "journals in %s applied in this %s, oldest first:\n", dir, where);
    for (size_t i = 0; i < n; i++) {
        struct tune_journal j;
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        if (tune_journal_load(path, &j, err, sizeof(err))) {
            fprintf(out, "  %s  DAMAGED\n", names[i]);
            wrap_print(out, NULL, 4, err);
            continue;
        }
        if (tune_place_here(&j, &here, here_child, why, sizeof(why)) != 1) {
            elsewhere++;
            tune_journal_free(&j);
            continue;
        }
        journal_counts(&j, c);
        confirm_state(&j, conf, sizeof(conf));
        fprintf(out,
                "  %.19sZ  %zu changes (%u applied, %u refused, %u unverified, %u "
                "unfinished)  %s%s%s\n    %s  [%s]\n",
                j.created, j.n, c[TUNE_J_APPLIED], c[TUNE_J_REFUSED], c[TUNE_J_UNVERIFIED],
                c[TUNE_J_PENDING], journal_state(&j), j.reverted ? " " : "",
                j.reverted ? j.reverted_at : "", path, j.target);
        if (conf[0])
            wrap_print(out, NULL, 4, conf);
        tune_journal_free(&j);
    }
    if (elsewhere)
        fprintf(out,
                "%u journal(s) applied in another network namespace or host not shown: "
                "--list there shows them (-J lists every journal with its place)\n",
                elsewhere);
}

static cJSON *confirm_json(const struct tune_journal *j)
{
    cJSON *c;
    char state[256];

    if (!j->confirm)
        return cJSON_CreateNull();
    c = cJSON_CreateObject();
    confirm_state(j, state, sizeof(state));
    cJSON_AddNumberToObject(c, "within_ms", j->confirm_within_ms);
    cJSON_AddNumberToObject(c, "deadline_unix", tune_confirm_deadline(j));
    cJSON_AddNumberToObject(c, "watchdog_pid", (double)j->watchdog_pid);
    cJSON_AddStringToObject(c, "state",
                            j->confirmed                                        ? "confirmed"
                            : j->reverts && !strcmp(j->reverted_by, "watchdog") ? "expired"
                            : j->reverts                                        ? "reverted"
                                                                                : "waiting");
    cJSON_AddItemToObject(c, "confirmed_at", str_or_null(j->confirmed_at));
    cJSON_AddStringToObject(c, "text", state);
    return c;
}

static cJSON *place_json(const struct hostwr_place *p)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddNumberToObject(o, "netns_inode", (double)p->netns_inode);
    cJSON_AddItemToObject(o, "netns_name", str_or_null(p->netns_name));
    cJSON_AddItemToObject(o, "host", str_or_null(p->host));
    cJSON_AddItemToObject(o, "machine_id", str_or_null(p->machine_id));
    return o;
}

cJSON *tune_report_list_json(const char *dir, const char *sysroot, char **names, size_t n)
{
    cJSON *o = cJSON_CreateObject(), *arr = cJSON_CreateArray();
    char path[PATH_MAX], err[PATH_MAX + 256], why[2 * PATH_MAX + 512];
    struct hostwr_place here;
    int here_child;
    unsigned c[4];

    sysroot = sysroot && *sysroot ? sysroot : NULL;
    hostwr_place(sysroot, &here);
    here_child = hostwr_netns_child(sysroot);
    cJSON_AddStringToObject(o, "state_dir", dir);
    cJSON_AddItemToObject(o, "place", place_json(&here));
    for (size_t i = 0; i < n; i++) {
        struct tune_journal j;
        cJSON *e = cJSON_CreateObject();
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        cJSON_AddStringToObject(e, "path", path);
        cJSON_AddItemToArray(arr, e);
        if (tune_journal_load(path, &j, err, sizeof(err))) {
            cJSON_AddStringToObject(e, "state", "damaged");
            cJSON_AddStringToObject(e, "error", err);
            continue;
        }
        journal_counts(&j, c);
        cJSON_AddStringToObject(e, "created", j.created);
        cJSON_AddStringToObject(e, "target", j.target);
        cJSON_AddItemToObject(e, "sysroot", str_or_null(j.sysroot));
        cJSON_AddItemToObject(e, "place",
                              j.place_known ? place_json(&j.place) : cJSON_CreateNull());
        cJSON_AddBoolToObject(e, "here",
                              tune_place_here(&j, &here, here_child, why, sizeof(why)) == 1);
        cJSON_AddNumberToObject(e, "changes", (double)j.n);
        cJSON_AddNumberToObject(e, "applied", c[TUNE_J_APPLIED]);
        cJSON_AddNumberToObject(e, "refused", c[TUNE_J_REFUSED]);
        cJSON_AddNumberToObject(e, "unverified", c[TUNE_J_UNVERIFIED]);
        cJSON_AddNumberToObject(e, "unfinished", c[TUNE_J_PENDING]);
        cJSON_AddStringToObject(e, "state", journal_state(&j));
        cJSON_AddItemToObject(e, "reverted_at", str_or_null(j.reverted_at));
        cJSON_AddItemToObject(e, "reverted_by", str_or_null(j.reverted_by));
        cJSON_AddItemToObject(e, "confirm", confirm_json(&j));
        tune_journal_free(&j);
    }
    cJSON_AddItemToObject(o, "journals", arr);
    return o;
}
