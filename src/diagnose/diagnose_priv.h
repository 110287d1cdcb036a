/* diagnose_priv: what the diagnose modules share — evidence lines, number formatting, the
 * derived figures — and the rules (diagnose_rules.c, diagnose_cpu.c), each filling the
 * verdict and returning true when it matches. */
#ifndef NETRIG_DIAGNOSE_PRIV_H
#define NETRIG_DIAGNOSE_PRIV_H

#include "diagnose.h"

#include <stdbool.h>
#include <stddef.h>

/* Appends one evidence line (printf format); lines past DIAG_MAX_EVIDENCE are dropped. */
void diag_evidence(struct diagnose_verdict *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Each formats into its own buffer of at least 32 bytes and returns it. */
const char *diag_rate(double bps, char *buf);
const char *diag_bytes(double b, char *buf);
const char *diag_usec(double us, char *buf);

/* "--rate 10G --rtt 1ms" as the user gave it, or with placeholders. */
void diag_target_args(const struct diagnose_sample *s, char *buf, size_t len);

/* Figures shared by the rules. */
bool diag_has_queue(const struct diagnose_sample *s, const struct diagnose_verdict *v);
bool diag_has_strong_queue(const struct diagnose_sample *s, const struct diagnose_verdict *v);
/* A data thread that wanted a CPU half the time and waited for one a quarter of it. */
bool diag_end_starved(const struct diagnose_end *e);
/* srtt grown by the CPUs, not by a path: both ends on one kernel and a data thread starved (on
 * veth with a 4.7 kB window and the host loaded by other work: +0.56 ms) */
bool diag_cpu_delay(const struct diagnose_sample *s);
/* a strong queue that no CPU delay explains: the path's */
bool diag_path_queue(const struct diagnose_sample *s, const struct diagnose_verdict *v);
bool diag_window_caps(const struct diagnose_sample *s, const struct diagnose_verdict *v);
bool diag_is_bbr(const struct diagnose_sample *s);
bool diag_sender_waited(const struct diagnose_sample *s); /* >= DIAG_NET_WAIT, or unknown */
bool diag_probes_flat(const struct diagnose_sample *s);
bool diag_probes_scale(const struct diagnose_sample *s);
void diag_probe_evidence(const struct diagnose_sample *s, struct diagnose_verdict *v);

/* The rules, in the order diagnose_judge tries them. */
bool diag_rule_paced(const struct diagnose_sample *s, struct diagnose_verdict *v);
bool diag_rule_sender_app(const struct diagnose_sample *s, struct diagnose_verdict *v);
bool diag_rule_rx_cpu(const struct diagnose_sample *s, struct diagnose_verdict *v);
bool diag_rule_link_rate(const struct diagnose_sample *s, struct diagnose_verdict *v);
bool diag_rule_rwnd(const struct diagnose_sample *s, struct diagnose_verdict *v);
bool diag_rule_sndbuf(const struct diagnose_sample *s, struct diagnose_verdict *v);
/* An end whose cgroup's CPU quota stopped it in more than share of the periods (0: any). */
bool diag_rule_cpu_quota(const struct diagnose_sample *s, struct diagnose_verdict *v, double share);
bool diag_rule_cpu_starved(const struct diagnose_sample *s, struct diagnose_verdict *v);
bool diag_rule_link_strong_queue(const struct diagnose_sample *s, struct diagnose_verdict *v);
bool diag_rule_link_queue(const struct diagnose_sample *s, struct diagnose_verdict *v);
bool diag_rule_loss(const struct diagnose_sample *s, struct diagnose_verdict *v);
bool diag_rule_link_cc(const struct diagnose_sample *s, struct diagnose_verdict *v);
bool diag_rule_app_busy(const struct diagnose_sample *s, struct diagnose_verdict *v);

#endif
