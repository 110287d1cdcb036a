/* cli_tune: `netrig tune` options; runs the audit, builds the plan, then the dry run, --apply,
 * --revert or --list. Exit status: 0 done (every change that applies here applied, every
 * value restored; a setting that cannot be set in this place, such as net.core.rmem_max in a
 * network namespace, is not applicable and no failure), 1 some applicable change refused or
 * unverified (or a value not restored), 2 nothing could be done (bad option, not root, journal
 * or audit failure). */
#include "cli.h"

#include "audit.h"
#include "tune_apply.h"
#include "tune_confirm.h"
#include "tune_journal.h"
#include "tune_mtu.h"
#include "tune_persist.h"
#include "tune_plan.h"
#include "tune_report.h"
#include "tune_risk.h"
#include "units.h"

#include <cjson/cJSON.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void cli_help_tune(FILE *out)
{
    fprintf(out, "usage: netrig tune [--rate RATE] [--rtt TIME] [--profile throughput|latency]\n"
                 "                   [-I IFACE] [--apply [--persist]] [--allow-disruptive]\n"
                 "                   [--only ITEMS] [--peer HOST] [--confirm-within TIME]\n"
                 "                   [--state-dir DIR] [--sysroot DIR] [-J]\n"
                 "       netrig tune --confirm [--state-dir DIR] [--sysroot DIR] [-J]\n"
                 "       netrig tune --revert [JOURNAL] [--state-dir DIR] [--sysroot DIR] [-J]\n"
                 "       netrig tune --list [--state-dir DIR] [--sysroot DIR] [-J]\n"
                 "\n"
                 "Turns what 'netrig audit' finds at warn or bad into changes, each with its old\n"
                 "value, new value, reason and command. Without --apply it is a dry run that\n"
                 "changes nothing. netrig itself writes sysctls, txqueuelen, MTU, RPS masks, the\n"
                 "CPU governor and NIC rings, coalescing, channels, pause and offloads (ethtool\n"
                 "ioctls); tc, setpci, services and boot settings are manual steps, never run.\n"
                 "\n"
                 "  --rate, --rtt, --profile, -I  the target, as for 'netrig audit'\n"
                 "  --apply            journal every old value (fsync'd), then apply the safe\n"
                 "                     changes, read back and report; a change the kernel\n"
                 "                     refuses is reported and the rest go on (root)\n"
                 "  --allow-disruptive with --apply: also the disruptive changes (MTU, rings,\n"
                 "                     channels, coalescing, pause, hardware offloads), which\n"
                 "                     may reset the link\n"
                 "  --only ITEMS       apply only these items (comma-separated; the plan shows\n"
                 "                     each change's item: mtu:eth0, ring:eth0,\n"
                 "                     net.ipv4.tcp_rmem; a group such as mtu or sysctl names\n"
                 "                     them all); a disruptive item named here is applied\n"
                 "  --peer HOST        a host past the path (answering ping): an MTU change is\n"
                 "                     probed toward it with don't-fragment pings, and applied\n"
                 "                     only if HOST answers the new size (else put back at once);\n"
                 "                     without --peer an MTU change is advice, never applied\n"
                 "  --persist          with --apply: also write /etc/sysctl.d/90-netrig.conf and\n"
                 "                     /etc/udev/rules.d/90-netrig.rules (journaled, undone by\n"
                 "                     --revert); without --apply: show what they would hold\n"
                 "  --confirm-within TIME  with --apply: a detached watchdog reverts the apply\n"
                 "                     TIME after it finished (1s to 24h) unless\n"
                 "                     'netrig tune --confirm' runs first, so a change that cuts\n"
                 "                     you off undoes itself (not with --persist)\n"
                 "  --confirm          keep the apply that waits for a confirmation (root)\n"
                 "  --revert [JOURNAL] restore every value of JOURNAL (default: the newest not\n"
                 "                     reverted) in reverse order and verify it (root)\n"
                 "  --list             the journals: time, changes, applied or reverted\n"
                 "  --state-dir DIR    where journals live (default " TUNE_JOURNAL_DEFAULT_DIR ")\n"
                 "  --db PATH          with --apply: the history that records the apply (its\n"
                 "                     place, target, changes) for compare and report\n"
                 "  --no-save          with --apply: do not record it in the history\n"
                 "  --sysroot DIR      read and write DIR/proc, DIR/sys and DIR/etc (a recorded\n"
                 "                     tree) instead of this host; the state directory too\n"
                 "  -J, --json         one JSON document\n"
                 "\n"
                 "Every change has a class: safe (sysctls, txqueuelen, RPS, IRQ affinity,\n"
                 "governor: --apply makes them), disruptive (may reset the link: only with\n"
                 "--allow-disruptive or --only) or manual (never run).\n"
                 "Inside a network namespace only per-namespace settings change; global ones\n"
                 "(such as net.core.rmem_max) are reported as not applicable there.\n"
                 "Exit status: 0 every change that applies here was made (not applicable\n"
                 "and held-back changes are no failure), 1 an applicable change was refused\n"
                 "or unverified, 2 nothing done.\n"
                 "\n"
                 "Examples:\n"
                 "  netrig tune --rate 10G --rtt 30ms            # the plan, nothing changed\n"
                 "  netrig tune --rate 10G --rtt 30ms --apply    # apply it, journaled\n"
                 "  netrig tune --revert                         # undo the newest apply\n"
                 "  netrig tune --apply --confirm-within 60s     # undone in 60 s unless...\n"
                 "  netrig tune --confirm                        # ...this keeps it\n");
}

enum {
    OPT_RATE = 256,
    OPT_RTT,
    OPT_PROFILE,
    OPT_SYSROOT,
    OPT_APPLY,
    OPT_PERSIST,
    OPT_REVERT,
    OPT_LIST,
    OPT_STATE_DIR,
    OPT_ALLOW_DISRUPTIVE,
    OPT_ONLY,
    OPT_PEER,
    OPT_CONFIRM_WITHIN,
    OPT_CONFIRM,
    OPT_DB,
    OPT_NO_SAVE,
};

static const struct option tune_long[] = {
    {"interface", required_argument, NULL, 'I'},
    {"json", no_argument, NULL, 'J'},
    {"help", no_argument, NULL, 'h'},
    {"rate", required_argument, NULL, OPT_RATE},
    {"rtt", required_argument, NULL, OPT_RTT},
    {"profile", required_argument, NULL, OPT_PROFILE},
    {"sysroot", required_argument, NULL, OPT_SYSROOT},
    {"apply", no_argument, NULL, OPT_APPLY},
    {"persist", no_argument, NULL, OPT_PERSIST},
    {"revert", no_argument, NULL, OPT_REVERT},
    {"list", no_argument, NULL, OPT_LIST},
    {"state-dir", required_argument, NULL, OPT_STATE_DIR},
    {"allow-disruptive", no_argument, NULL, OPT_ALLOW_DISRUPTIVE},
    {"only", required_argument, NULL, OPT_ONLY},
    {"peer", required_argument, NULL, OPT_PEER},
    {"confirm-within", required_argument, NULL, OPT_CONFIRM_WITHIN},
    {"confirm", no_argument, NULL, OPT_CONFIRM},
    {"db", required_argument, NULL, OPT_DB},
    {"no-save", no_argument, NULL, OPT_NO_SAVE},
    {NULL, 0, NULL, 0},
};

struct tune_cli {
    struct audit_opts ao;
    char sysroot[PATH_MAX];   /* canonical */
    char state_dir[PATH_MAX]; /* joined with the sysroot */
    const char *state_opt, *journal, *db;
    bool json, apply, persist, revert, list, confirm, target_set, no_save;
    uint64_t confirm_ns;    /* --confirm-within */
    struct tune_select sel; /* --allow-disruptive, --only, --peer */
    unsigned pause_ms;
};

static int target_opt(int c, const char *arg, struct tune_cli *tc)
{
    struct audit_opts *ao = &tc->ao;

    tc->target_set = true;
    if (c == OPT_RATE) {
        if (cli_parse_rate("--rate", arg, &ao->rate_bps))
            return -1;
        if (ao->rate_bps < 1000000 || ao->rate_bps > 10000000000000ULL) {
            cli_error("--rate %s is out of range: use 1M to 10T", arg);
            return -1;
        }
        return 0;
    }
    if (c == OPT_RTT) {
        if (cli_parse_duration("--rtt", arg, &ao->rtt_ns))
            return -1;
        if (ao->rtt_ns < 1000 || ao->rtt_ns > 10000000000ULL) {
            cli_error("--rtt %s is out of range: use 1us to 10s", arg);
            return -1;
        }
        return 0;
    }
    if (!strcmp(arg, "throughput") || !strcmp(arg, "latency")) {
        ao->profile = arg[0] == 't' ? AUDIT_PROFILE_THROUGHPUT : AUDIT_PROFILE_LATENCY;
        return 0;
    }
    cli_error("invalid value '%s' for --profile: use throughput or latency", arg);
    return -1;
}

static int tune_opt(int c, const char *arg, struct tune_cli *tc)
{
    switch (c) {
    case 'I': tc->ao.iface = arg; return 0;
    case 'J': tc->json = true; return 0;
    case OPT_RATE:
    case OPT_RTT:
    case OPT_PROFILE: return target_opt(c, arg, tc);
    case OPT_SYSROOT:
        if (!realpath(arg, tc->sysroot)) {
            cli_error("--sysroot '%s' does not exist: give a tree written by 'netrig audit "
                      "--record DIR'",
                      arg);
            return -1;
        }
        tc->ao.sysroot = strcmp(tc->sysroot, "/") ? tc->sysroot : NULL; /* "/" is this host */
        return 0;
    case OPT_APPLY: tc->apply = true; return 0;
    case OPT_PERSIST: tc->persist = true; return 0;
    case OPT_REVERT: tc->revert = true; return 0;
    case OPT_LIST: tc->list = true; return 0;
    case OPT_STATE_DIR: tc->state_opt = arg; return 0;
    case OPT_ALLOW_DISRUPTIVE: tc->sel.allow_disruptive = true; return 0;
    case OPT_ONLY: tc->sel.only = arg; return 0;
    case OPT_PEER: tc->sel.peer = arg; return 0;
    case OPT_CONFIRM: tc->confirm = true; return 0;
    case OPT_DB: tc->db = arg; return 0;
    case OPT_NO_SAVE: tc->no_save = true; return 0;
    case OPT_CONFIRM_WITHIN:
        if (cli_parse_duration("--confirm-within", arg, &tc->confirm_ns))
            return -1;
        if (tc->confirm_ns < TUNE_CONFIRM_MIN_MS * 1000000ULL ||
            tc->confirm_ns > TUNE_CONFIRM_MAX_MS * 1000000ULL) {
            cli_error("--confirm-within %s is out of range: use 1s to 24h", arg);
            return -1;
        }
        return 0;
    default: return -1;
    }
}

/* Checks the combination of modes and sets the state directory. */
static int tune_check(struct tune_cli *tc, int argc, char **argv)
{
    const char *dir = tc->state_opt ? tc->state_opt : TUNE_JOURNAL_DEFAULT_DIR;
    int n;

    if (tc->apply + tc->revert + tc->list + tc->confirm > 1) {
        cli_error("--apply, --revert, --list and --confirm are different jobs: give one of them");
        return -1;
    }
    if (tc->confirm_ns && !tc->apply) {
        cli_error("--confirm-within goes with --apply: it undoes that apply unless confirmed");
        return -1;
    }
    if (tc->confirm_ns && tc->persist) {
        cli_error("--persist with --confirm-within would keep an unconfirmed change across a "
                  "reboot (the watchdog does not survive one): apply with --confirm-within, "
                  "then 'netrig tune --confirm --persist' writes the files once you keep it");
        return -1;
    }
    if (optind < argc && tc->revert && optind + 1 == argc)
        tc->journal = argv[optind];
    else if (optind < argc) {
        cli_error("unexpected argument '%s' for tune: only --revert takes one (a journal)",
                  argv[optind]);
        return -1;
    }
    if ((tc->revert || tc->list || tc->confirm) && (tc->target_set || tc->ao.iface)) {
        cli_error("--revert, --list and --confirm take no target (--rate, --rtt, --profile, "
                  "-I): the journal holds what was changed");
        return -1;
    }
    if ((tc->db || tc->no_save) && (!tc->apply || (tc->db && tc->no_save))) {
        cli_error("%s", tc->apply ? "--no-save saves nothing: it does not go with --db"
                                  : "--db and --no-save go with --apply: only an apply is "
                                    "recorded in the history");
        return -1;
    }
    if ((tc->revert || tc->list) && tc->persist) {
        cli_error("--persist goes with --apply (or --confirm): --revert and --list take none");
        return -1;
    }
    if ((tc->revert || tc->list || tc->confirm) &&
        (tc->sel.allow_disruptive || tc->sel.only || tc->sel.peer)) {
        cli_error("--allow-disruptive, --only and --peer choose what a plan applies: they do "
                  "not go with --revert, --list or --confirm");
        return -1;
    }
    if (tc->sel.peer && tc->ao.sysroot) {
        cli_error("--peer probes the live network, which a --sysroot tree is not part of: drop "
                  "one of them");
        return -1;
    }
    if (tc->ao.sysroot && dir[0] != '/') {
        cli_error("--state-dir '%s' must be an absolute path with --sysroot (it is taken "
                  "under the sysroot)",
                  dir);
        return -1;
    }
    n = snprintf(tc->state_dir, sizeof(tc->state_dir), "%s%s", tc->ao.sysroot ? tc->ao.sysroot : "",
                 dir);
    if (n < 0 || (size_t)n >= sizeof(tc->state_dir)) {
        cli_error("--state-dir '%s' is too long", dir);
        return -1;
    }
    return 0;
}

static int parse_tune(int argc, char **argv, struct tune_cli *tc)
{
    int c;

    memset(tc, 0, sizeof(*tc));
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":I:Jh", tune_long, NULL)) != -1) {
        if (c == 'h') {
            cli_help_tune(stdout);
            return 1;
        }
        if (c == '?' || c == ':')
            return cli_opt_error(c, argv, "tune");
        if (tune_opt(c, optarg, tc))
            return -1;
    }
    return tune_check(tc, argc, argv);
}

/* --apply and --revert write kernel settings: root only, unless every write goes into a
 * --sysroot tree (unit tests use fixture copies). */
static int need_root(const struct tune_cli *tc, const char *what)
{
    if (geteuid() == 0 || tc->ao.sysroot)
        return 0;
    cli_error("netrig tune %s changes kernel settings and needs root: run it as root (sudo "
              "netrig tune %s), or without it for the dry run",
              what, what);
    return -1;
}

static void print_doc(cJSON *doc)
{
    char *text = doc ? cJSON_Print(doc) : NULL;

    if (text)
        printf("%s\n", text);
    else
        cli_error("out of memory writing the JSON document");
    free(text);
    cJSON_Delete(doc);
}

static int run_list(const struct tune_cli *tc)
{
    char **names, err[PATH_MAX + 128];
    size_t n;

    if (tune_journal_list(tc->state_dir, &names, &n, err, sizeof(err))) {
        cli_error("%s", err);
        return 2;
    }
    if (tc->json)
        print_doc(tune_report_list_json(tc->state_dir, tc->ao.sysroot, names, n));
    else
        tune_report_list_text(stdout, tc->state_dir, tc->ao.sysroot, names, n);
    tune_journal_names_free(names, n);
    return 0;
}

static int run_revert(const struct tune_cli *tc)
{
    char path[PATH_MAX], err[2 * PATH_MAX + 256];
    struct tune_revert_result res;
    int rc;

    if (need_root(tc, "--revert"))
        return 2;
    if (tune_apply_pick_journal(tc->state_dir, tc->ao.sysroot, tc->journal, path, sizeof(path), err,
                                sizeof(err))) {
        cli_error("%s", err);
        return 2;
    }
    rc = tune_apply_revert(path, tc->ao.sysroot, tc->state_dir, tc->json ? NULL : stdout, &res, err,
                           sizeof(err));
    if (rc < 0) {
        cli_error("%s", err);
        tune_apply_revert_free(&res);
        return 2;
    }
    if (tc->json)
        print_doc(tune_report_revert_json(&res));
    else
        tune_report_revert_text(stdout, &res);
    if (rc > 0)
        cli_error("%u value(s) of %s were not restored: see the lines above and set them by hand",
                  res.failed, path);
    tune_apply_revert_free(&res);
    return rc ? 1 : 0;
}

static int confirm_persist(const struct tune_cli *tc, const char *journal, cJSON *doc)
{
    char err[2 * PATH_MAX + 256], stamp[96];
    time_t now = time(NULL);
    struct tm tm;
    struct tune_apply_opts o = {.sysroot = tc->ao.sysroot,
                                .state_dir = tc->state_dir,
                                .persist = true,
                                .stamp = stamp,
                                .progress = tc->json ? NULL : stdout};
    struct tune_apply_result res;
    int rc;

    gmtime_r(&now, &tm);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ, confirmed", &tm);
    rc = tune_apply_persist_journal(journal, &o, &res, err, sizeof(err));
    if (doc) {
        cJSON *arr = cJSON_AddArrayToObject(doc, "persist");
        for (size_t i = 0; !rc && i < res.nfiles; i++) {
            cJSON *f = cJSON_CreateObject();
            cJSON_AddStringToObject(f, "path", res.files[i].path);
            cJSON_AddBoolToObject(f, "written", res.file_done[i].outcome == TUNE_O_APPLIED);
            cJSON_AddItemToArray(arr, f);
        }
    }
    if (rc)
        cli_error("%s", err);
    for (size_t i = 0; !rc && i < res.nfiles; i++)
        rc = res.file_done[i].outcome == TUNE_O_APPLIED ? 0 : 1;
    tune_apply_result_free(&res);
    return rc ? 1 : 0;
}

static int run_confirm(const struct tune_cli *tc)
{
    char path[PATH_MAX], why[2 * PATH_MAX + 256], err[2 * PATH_MAX + 256];
    bool too_late = false;
    cJSON *doc = NULL;
    int n, rc = 0;

    if (need_root(tc, "--confirm"))
        return 2;
    n = tune_confirm_run(tc->state_dir, tc->ao.sysroot, path, sizeof(path), why, sizeof(why),
                         &too_late, err, sizeof(err));
    if (n <= 0) {
        cli_error("%s", n < 0 ? err : why);
        return n < 0 || !too_late ? 2 : 1;
    }
    if (tc->json) {
        doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "mode", "confirm");
        cJSON_AddStringToObject(doc, "journal", path);
        cJSON_AddNumberToObject(doc, "confirmed", n);
    } else {
        printf("confirmed %s: its watchdog will not revert it%s\n", path,
               n > 1 ? " (and older journals that waited)" : "");
    }
    if (tc->persist)
        rc = confirm_persist(tc, path, doc);
    if (doc)
        print_doc(doc);
    return rc;
}

/* "10 Gbit/s x 30 ms" and a UTC time, for the journal and the persist header. */
static void describe(const struct tune_plan *plan, char *target, size_t len, char *stamp,
                     size_t slen)
{
    char rate[32];
    time_t now = time(NULL);
    struct tm tm;

    units_format_rate(plan->target.rate_bps, rate, sizeof(rate));
    snprintf(target, len, "%s x %g ms", rate, plan->target.rtt_s * 1e3);
    gmtime_r(&now, &tm);
    snprintf(stamp, slen, "%04d-%02d-%02dT%02d:%02d:%02dZ for %s", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, target);
}

/* "netrig tune WHAT [--sysroot R] [--state-dir D]": the command to run next */
static void again(const struct tune_cli *tc, const char *what, char *out, size_t len)
{
    snprintf(out, len, "netrig tune %s%s%s%s%s", what, tc->ao.sysroot ? " --sysroot " : "",
             tc->ao.sysroot ? tc->ao.sysroot : "", tc->state_opt ? " --state-dir " : "",
             tc->state_opt ? tc->state_opt : "");
}

struct apply_hooks {
    const struct tune_cli *tc;
    struct tune_confirm_job job; /* --confirm-within */
};

/* No apply while another one waits for its confirmation: its watchdog would revert over it. */
static int refuse_pending(void *arg, char *err, size_t errlen)
{
    const struct apply_hooks *h = arg;
    char path[PATH_MAX], why[PATH_MAX + 256], confirm[PATH_MAX + 64];
    int rc = tune_confirm_pending(h->tc->state_dir, h->tc->ao.sysroot, path, sizeof(path), why,
                                  sizeof(why), err, errlen);

    if (rc <= 0)
        return rc;
    again(h->tc, "--confirm", confirm, sizeof(confirm));
    snprintf(err, errlen,
             "%s; nothing was changed: run '%s' to keep it (or --revert to undo it), then "
             "apply again",
             why, confirm);
    return -1;
}

static int start_watchdog(void *arg, const char *journal, struct tune_journal_writer *w, char *err,
                          size_t errlen)
{
    struct apply_hooks *h = arg;

    return h->job.within_ms ? tune_confirm_start(&h->job, journal, w, err, errlen) : 0;
}

/* What the operator must do next, after an apply with --confirm-within. */
static void confirm_note(const struct tune_cli *tc, const struct apply_hooks *h, cJSON *doc)
{
    char cmd[PATH_MAX + 64], at[32];
    time_t t = time(NULL) + (time_t)(h->job.within_ms / 1000);
    struct tm tm;

    gmtime_r(&t, &tm);
    strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%SZ", &tm);
    again(tc, "--confirm", cmd, sizeof(cmd));
    if (doc) {
        cJSON *c = cJSON_AddObjectToObject(doc, "confirm");
        cJSON_AddNumberToObject(c, "within_ms", h->job.within_ms);
        cJSON_AddNumberToObject(c, "watchdog_pid", (double)h->job.pid);
        cJSON_AddStringToObject(c, "deadline", at);
        cJSON_AddStringToObject(c, "command", cmd);
        return;
    }
    printf("Keep it with '%s' within %g s (by %s): otherwise its watchdog (pid %ld) reverts "
           "it.\n",
           cmd, h->job.within_ms / 1e3, at, h->job.pid);
}

static int run_apply(const struct tune_cli *tc, const struct tune_plan *plan,
                     struct tune_mtu_peer *mp)
{
    struct apply_hooks hooks = {.tc = tc};
    char target[96], stamp[160], err[2 * PATH_MAX + 256], undo[3 * PATH_MAX], banner[160];
    struct tune_apply_opts o = {.sysroot = tc->ao.sysroot,
                                .state_dir = tc->state_dir,
                                .persist = tc->persist,
                                .pause_ms = tc->pause_ms,
                                .mtu_verify = tc->sel.peer ? tune_mtu_verify : NULL,
                                .mtu_arg = mp,
                                .check = refuse_pending,
                                .started = start_watchdog,
                                .hook_arg = &hooks,
                                .profile = plan->profile == AUDIT_PROFILE_LATENCY ? "latency"
                                                                                  : "throughput"};
    struct tune_apply_result res;
    size_t here = 0, held = 0;
    int rc;

    if (tc->persist && plan->netns_child == 1) {
        cli_error("--persist writes /etc/sysctl.d and /etc/udev/rules.d, which the host reads at "
                  "boot: from inside a network namespace that would set the host's values; "
                  "apply without --persist and set the namespace's sysctls where it is created");
        return 2;
    }
    for (size_t i = 0; i < plan->nchanges; i++) {
        here += !plan->changes[i].blocked[0] && !plan->changes[i].held[0];
        held += plan->changes[i].held[0] != 0;
    }
    if (!here) { /* no journal for an apply that would change nothing */
        if (tc->json)
            print_doc(tune_report_plan_json(plan, NULL, NULL, 0));
        else
            tune_report_plan_text(stdout, plan, NULL, NULL, 0, NULL);
        cli_error("nothing to apply: %s",
                  held ? "every change that can be made here is held back (see 'HELD BACK' "
                         "above)"
                  : plan->nchanges ? "no planned change can be made here (see 'NOT HERE' above)"
                                   : "no finding at warn or bad that netrig applies");
        return 0; /* nothing applicable failed: it is all held back or not applicable here */
    }
    snprintf(hooks.job.state_dir, sizeof(hooks.job.state_dir), "%s", tc->state_dir);
    snprintf(hooks.job.sysroot, sizeof(hooks.job.sysroot), "%s",
             tc->ao.sysroot ? tc->ao.sysroot : "");
    hooks.job.within_ms = (unsigned)(tc->confirm_ns / 1000000ULL);
    describe(plan, target, sizeof(target), stamp, sizeof(stamp));
    o.target = target;
    o.stamp = stamp;
    o.progress = tc->json ? NULL : stdout;
    snprintf(banner, sizeof(banner), "netrig tune --apply: %zu change(s) for %s", plan->nchanges,
             target);
    o.banner = banner;
    rc = tune_apply_run(plan, &o, &res, err, sizeof(err));
    if (rc && !res.journal[0]) {
        cli_error("%s", err);
        tune_apply_result_free(&res);
        return 2;
    }
    snprintf(undo, sizeof(undo), "Undo it with: ");
    again(tc, "--revert", undo + strlen(undo), sizeof(undo) - strlen(undo));
    if (tc->json) {
        cJSON *doc = tune_report_plan_json(plan, &res, NULL, 0);
        if (hooks.job.within_ms && doc)
            confirm_note(tc, &hooks, doc);
        print_doc(doc);
    } else {
        tune_report_plan_text(stdout, plan, &res, NULL, 0, undo);
        if (hooks.job.within_ms)
            confirm_note(tc, &hooks, NULL);
    }
    if (!tc->no_save && !tc->ao.sysroot)
        cli_tune_save(tc->db, res.journal, tc->json ? NULL : stdout);
    if (rc)
        cli_error("%s", err);
    /* not applicable here (blocked) and held back are no failure of the apply */
    rc = rc ? 2 : (res.refused || res.unverified ? 1 : 0);
    for (size_t i = 0; i < res.nfiles; i++)
        if (res.file_done[i].outcome != TUNE_O_APPLIED && rc == 0)
            rc = 1;
    tune_apply_result_free(&res);
    return rc;
}

static int run_dry(const struct tune_cli *tc, const struct tune_plan *plan, int argc, char **argv)
{
    struct tune_file files[TUNE_PERSIST_MAX];
    char cmd[1024] = "Apply it with:", skipped[AUDIT_TEXT_LEN], err[512];
    size_t nfiles = 0;

    if (tc->persist && tune_persist_build(tc->ao.sysroot, plan, NULL, "preview", files, &nfiles,
                                          skipped, sizeof(skipped), err, sizeof(err))) {
        cli_error("%s", err);
        return 2;
    }
    snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " netrig tune");
    for (int i = 1; i < argc; i++)
        snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " %s", argv[i]);
    snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd),
             " --apply (as root; every old "
             "value is journaled first and 'netrig tune --revert' undoes it)");
    if (tc->json)
        print_doc(tune_report_plan_json(plan, NULL, files, nfiles));
    else
        tune_report_plan_text(stdout, plan, NULL, files, nfiles, cmd);
    tune_persist_free(files, nfiles);
    return 0;
}

/* What --apply makes (--allow-disruptive, --only) and, with --peer, the MTU preflight probes.
 * 0, or -1 after printing the error (bad command line, no raw socket). */
static int select_changes(const struct tune_cli *tc, struct tune_plan *plan,
                          struct tune_mtu_peer *mp)
{
    char err[1024];

    memset(mp, 0, sizeof(*mp));
    if (tune_risk_select(plan, &tc->sel, err, sizeof(err)) ||
        (tc->sel.peer && (tune_mtu_open(tc->sel.peer, mp, err, sizeof(err)) ||
                          tune_mtu_preflight(plan, mp, err, sizeof(err))))) {
        cli_error("%s", err);
        return -1;
    }
    return 0;
}

static unsigned pause_hook(void)
{
    const char *s = getenv("NETRIG_TUNE_PAUSE_MS"); /* test hook: kill -9 between changes */
    long v = s ? strtol(s, NULL, 10) : 0;

    return v > 0 && v <= 60000 ? (unsigned)v : 0;
}

int cli_tune(int argc, char **argv, _Atomic int *stop)
{
    struct tune_cli tc;
    struct audit_ctx *ctx;
    struct tune_plan plan;
    struct tune_mtu_peer mp;
    char err[640];
    int rc = parse_tune(argc, argv, &tc);

    (void)stop; /* a change is journaled before it is made: an interrupt needs no clean-up */
    if (rc)
        return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
    tc.pause_ms = pause_hook();
    if (tc.list)
        return run_list(&tc);
    if (tc.revert)
        return run_revert(&tc);
    if (tc.confirm)
        return run_confirm(&tc);
    if (tc.apply && need_root(&tc, "--apply"))
        return 2;
    if (tc.apply && !tc.no_save && cli_history_check_db(tc.db))
        return 2;
    ctx = audit_create(&tc.ao, err, sizeof(err));
    if (!ctx || audit_run(ctx, err, sizeof(err)) || tune_plan_build(ctx, &plan, err, sizeof(err))) {
        cli_error("%s", err);
        audit_destroy(ctx);
        return 2;
    }
    if (select_changes(&tc, &plan, &mp))
        rc = 2;
    else
        rc = tc.apply ? run_apply(&tc, &plan, &mp) : run_dry(&tc, &plan, argc, argv);
    tune_plan_free(&plan);
    audit_destroy(ctx);
    return fflush(stdout) ? 2 : rc;
}
