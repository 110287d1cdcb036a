/* cpujson: the CPU figures beyond the machine's as JSON, shared by the result exchange, the
 * -J document and the history: the process's own CPU ("own"), its cgroup's ("cgroup") and
 * the basis of the cost figures ("cost_basis"). A peer or document without them (an older
 * netrig) leaves own_valid false and cg_version 0. */
#ifndef NETRIG_CPUJSON_H
#define NETRIG_CPUJSON_H

#include <cjson/cJSON.h>

#include "cpu.h"

/* Adds "own", "cgroup" (when one was found), "cost_basis" and "other_cores" to the cpu
 * object o. */
void cpujson_add(cJSON *o, const struct cpu_usage *c);
/* The "cgroup" object alone (version, usage, quota_cores with 0 for none, the throttle counts
 * when known), or NULL when no cgroup was found: also each end's in diagnose's document. */
cJSON *cpujson_cgroup(const struct cpu_usage *c);
/* Reads them back from the cpu object o. Returns 0, or -EINVAL when a member present is out
 * of range (what was in range is kept). */
int cpujson_parse(const cJSON *o, struct cpu_usage *c);

#endif
