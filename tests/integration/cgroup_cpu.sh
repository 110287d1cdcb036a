#!/bin/bash
# CPU figures that hold in a container (issue 24 item 4, issue 26 item 4). The server runs in a
# cgroup v1 made here (cpu + cpuacct, a quota of 0.3 CPU) while a bounded busy loop outside it
# keeps a core busy:
#  - what netrig reports for the server (its process's own CPU, and its cgroup's usage) matches
#    the cgroup's own counter, cpuacct.usage, read around the test: within 5 %;
#  - the throttled periods it reports match the cgroup's cpu.stat, and diagnose (under a quota
#    of 0.1 CPU) names the quota as the limit and reports each end's cgroup;
#  - a -b 10M test beside the busy loop costs netrig's own CPU per 10 Gbit/s (about 10 cores), not
#    the whole machine's busy time (the busy loop's core alone is 1000 cores/10G at 10 Mbit/s);
#  - compare of that run and one without the busy loop sets own CPU against own CPU.
# The cgroup is removed at exit.
source "$(dirname "$0")/lib.sh"

[[ $(id -u) == 0 ]] || skip "needs root to make a cgroup"
CPU=/sys/fs/cgroup/cpu ACCT=/sys/fs/cgroup/cpuacct
[[ -w $CPU/cgroup.procs && -w $ACCT/cgroup.procs && -f $CPU/cpu.cfs_quota_us ]] ||
    skip "no writable cgroup v1 cpu and cpuacct hierarchies at $CPU and $ACCT"
CG=netrig-cgcpu-$$ CL=netrig-cgcpu-$$-client
mkdir "$CPU/$CG" "$ACCT/$CG" "$CPU/$CL" || skip "cannot make cgroups $CG, $CL"
on_exit "for d in $CPU/$CG $ACCT/$CG $CPU/$CL; do while read -r p; do echo \$p >\${d%/*}/cgroup.procs; done <\$d/cgroup.procs; rmdir \$d; done"
echo 100000 >"$CPU/$CG/cpu.cfs_period_us"
echo 30000 >"$CPU/$CG/cpu.cfs_quota_us"
# large weights, the client's in a cgroup of its own without a quota: on a loaded machine the
# server's quota, not the other tasks, is what holds it
echo 65536 >"$CPU/$CG/cpu.shares"
echo 65536 >"$CPU/$CL/cpu.shares"
# in_client CMD...: runs CMD in the client's cgroup
in_client() { bash -c "echo \$\$ >$CPU/$CL/cgroup.procs && exec \"\$@\"" in_client "$@"; }

# a core kept busy outside the cgroup, bounded
timeout 25 bash -c 'while :; do :; done' &
HOG=$!
track_pid $HOG

SRV_LOG=$T/serve.log
bash -c "echo \$\$ >$CPU/$CG/cgroup.procs && echo \$\$ >$ACCT/$CG/cgroup.procs && exec \"$NETRIG\" serve -p 0 -B 127.0.0.1 --metrics 127.0.0.1:0" 2>"$SRV_LOG" &
SRV_PID=$!
track_pid "$SRV_PID"
SRV_PORT=$(wait_for_port "$SRV_LOG" "$SRV_PID") || { fail "server did not start"; finish; }
check "the server runs in the cgroup" grep -qx "$SRV_PID" "$ACCT/$CG/cgroup.procs"

stat_of() { awk -v k="$1" '$1 == k { print $2 }' "$CPU/$CG/cpu.stat"; }

# (a) the server sends (-R: on loopback the sender does the TCP work of both ends, so it wants
# more than its quota) and its figures meet the cgroup's own counters over the whole test (no omit)
u0=$(cat "$ACCT/$CG/cpuacct.usage") t0=$(stat_of nr_throttled)
in_client "$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -R -t 2 -O 0 -J --no-save >"$T/a.json" 2>"$T/a.err" ||
    fail "stream into the cgroup failed: $(head -c 300 "$T/a.err")"
wait_until 5 "the server's session to end" bash -c "[[ -z \$(ss -Htn state established '( sport = :$SRV_PORT )') ]]"
u1=$(cat "$ACCT/$CG/cpuacct.usage") t1=$(stat_of nr_throttled)
cg=$(awk -v a="$u0" -v b="$u1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }')
own=$(jq -r '.summary.cpu.remote.own | .user_s + .system_s' "$T/a.json")
rep=$(jq -r '.summary.cpu.remote.cgroup.usage_s' "$T/a.json")
thr=$(jq -r '.summary.cpu.remote.cgroup.throttled_periods' "$T/a.json")
log "cgroup cpuacct.usage delta $cg s; netrig: server process $own s, its cgroup $rep s; throttled periods: cgroup $((t1 - t0)), netrig $thr"
near() { awk -v x="$1" -v y="$2" -v f="$3" 'BEGIN { d = x - y; if (d < 0) d = -d; exit !(y > 0 && d <= f * y) }'; }
check "the server used CPU in the cgroup ($cg s)" awk -v c="$cg" 'BEGIN { exit !(c > 0.2) }'
# The counter also holds the session's set-up and tear-down, outside netrig's measured window:
# a few milliseconds, within 5 %; under a sanitizer thread start and join cost several times
# more (TSan: 5.3 % seen), so 10 % there, and never above the counter (a subset of it)
tol=0.05
judge_rates || tol=0.10
pct=$(awk -v t="$tol" 'BEGIN { print t * 100 }')
check "the server's own CPU ($own s) within $pct % of the cgroup's cpuacct.usage ($cg s)" near "$own" "$cg" "$tol"
check "the cgroup usage netrig reports ($rep s) within $pct % of cpuacct.usage ($cg s)" near "$rep" "$cg" "$tol"
check "the figures are not above the counter they are part of ($own, $rep <= $cg s + 1 %)" \
    awk -v a="$own" -v b="$rep" -v c="$cg" 'BEGIN { exit !(a <= c * 1.01 && b <= c * 1.01) }'
check_jq "the server names its cgroup's quota, 0.3 CPU" "$T/a.json" \
    '.summary.cpu.remote.cgroup | .version == 1 and (.quota_cores > 0.299 and .quota_cores < 0.301)'
check "the cgroup was throttled (cpu.stat nr_throttled +$((t1 - t0)))" test $((t1 - t0)) -gt 0
check "netrig's throttled periods ($thr) are the cgroup's ($((t1 - t0)))" \
    awk -v a="$thr" -v b=$((t1 - t0)) 'BEGIN { exit !(a > 0 && a <= b) }'
check_jq "the server's cost counts its own CPU (quota below the machine)" "$T/a.json" \
    '.summary.cpu.remote.cost_basis == "own" and
     (.summary.cores_per_10gbps.remote - .summary.own_cores_per_10gbps.remote | fabs) < 1e-9'

# diagnose: the throttled sender (the server, -R) is the limit, named with its quota. A quota
# of 0.1 CPU here, so that the sender is the slower end by a wide margin: on loopback the
# receiver's CPU does much of the sender's TCP work (the transmits its ACKs clock out run in its
# softirq), and a receiver on a CPU shared with the busy loop and CI's builds ran at 0.8 CPU,
# data always queued, while the sender at 0.3 CPU was not throttled: the receiver was the limit
# then, and diagnose rightly said so (CI, Dec 7)
echo 10000 >"$CPU/$CG/cpu.cfs_quota_us"
in_client "$NETRIG" diagnose -c 127.0.0.1 -p "$SRV_PORT" -R -t 1 -J >"$T/d.json" 2>"$T/d.err" ||
    fail "diagnose failed: $(head -c 300 "$T/d.err")"
echo 30000 >"$CPU/$CG/cpu.cfs_quota_us"
log "diagnose: $(jq -r '.verdict.id + ": " + .verdict.title' "$T/d.json" 2>/dev/null)"
log "diagnose: the ends' cgroups: $(jq -c '[.ends.sender.cgroup, .ends.receiver.cgroup]' "$T/d.json" 2>/dev/null)"
check_jq "diagnose reports the sender's cgroup, its quota and its periods" "$T/d.json" \
    '.ends.sender.cgroup | .quota_cores > 0.099 and .quota_cores < 0.101 and .periods > 0 and .throttled_periods <= .periods'
# the evidence, so that a verdict other than the quota explains itself in the log
jq -r '.verdict.evidence[]? | "  evidence: " + .' "$T/d.json" 2>/dev/null | head -n 12 >&2 || true
check_jq "diagnose does not call the throttled server ok" "$T/d.json" '.verdict.id == "tx_cpu_limited"'
check_jq "the verdict names the cgroup's quota" "$T/d.json" '.verdict.title | test("quota of 0.10 CPU on the server")'
check_jq "the throttled periods are the evidence" "$T/d.json" '[.verdict.evidence[] | test("throttled in [0-9]+ of [0-9]+ scheduler periods")] | any'

# the daemon's Prometheus metrics: its own CPU and its cgroup's quota and throttling
MPORT=$(sed -n 's/.*metrics at http:\/\/[^ ]*:\([0-9][0-9]*\)\/metrics.*/\1/p' "$SRV_LOG" | head -n1)
if [[ -n $MPORT ]] && command -v curl >/dev/null; then
    curl -sS --max-time 5 "http://127.0.0.1:$MPORT/metrics" >"$T/m.txt" || fail "scrape failed"
    check "metrics: the cgroup's quota" grep -qx 'netrig_cgroup_cpu_quota_cores 0.3' "$T/m.txt"
    check "metrics: throttled periods" awk '$1 == "netrig_cgroup_cpu_throttled_periods_total" && $2 > 0 { ok = 1 } END { exit !ok }' "$T/m.txt"
    check "metrics: the daemon's own CPU" grep -q '^netrig_process_cpu_seconds_total{mode="system"} ' "$T/m.txt"
else
    fail "no metrics port in the server's log (or no curl)"
fi

# (b) a paced test beside the busy loop: netrig's own CPU per 10 Gbit/s
"$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -t 2 -b 10M -J --db "$T/h.db" >"$T/b.json" 2>"$T/b.err" ||
    fail "the -b 10M test failed: $(head -c 300 "$T/b.err")"
"$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -t 1 -b 10M --no-save >"$T/b.txt" 2>&1 ||
    fail "the -b 10M text test failed"
log "-b 10M: client cost $(jq -r '.summary.cores_per_10gbps.local' "$T/b.json") cores/10G ($(jq -r '.summary.cpu.local.cost_basis' "$T/b.json")); machine busy $(jq -r '.summary.cpu.local.busy_cores' "$T/b.json") cores, other work $(jq -r '.summary.cpu.local.other_cores' "$T/b.json")"
check_jq "the busy loop is other work on the client's host (over 0.2 cores)" "$T/b.json" '.summary.cpu.local.other_cores > 0.2'
check_jq "the busy loop's work is left out: the whole machine's figure exceeds the cost by 200+" "$T/b.json" \
    '.summary.cpu.local.busy_cores / (.summary.throughput_bps / 1e10) > .summary.cores_per_10gbps.local + 200'
check_jq "the client's cost counts netrig's own CPU" "$T/b.json" \
    '.summary.cpu.local.cost_basis == "own" and
     (.summary.cores_per_10gbps.local - .summary.own_cores_per_10gbps.local | fabs) < 1e-9'
# (about 10 here; a sanitizer's slower code may cost several times that, never the thousands
# the busy loop's core makes at 10 Mbit/s)
check_jq "the client's cost is a sane figure (0 < x < 500 cores/10G)" "$T/b.json" \
    '.summary.cores_per_10gbps.local > 0 and .summary.cores_per_10gbps.local < 500'
check "the text says what the cost counts" grep -q "cores/10Gbit/s counting netrig's own CPU (the host is shared" "$T/b.txt"
check "the text shows the server's cgroup" grep -q "cgroup v1 (every task in it): used .* quota 0.30 CPU, throttled" "$T/b.txt"

# compare (issue 26): the same test without the busy loop; the cost rows set netrig's own CPU
# against its own, never the busy loop's core against an idler machine
kill "$HOG" 2>/dev/null
wait "$HOG" 2>/dev/null
"$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -t 1 -b 10M -J --db "$T/h.db" >"$T/q.json" 2>"$T/q.err" ||
    fail "the -b 10M test without the busy loop failed: $(head -c 300 "$T/q.err")"
"$NETRIG" compare 1 2 --db "$T/h.db" -J >"$T/c.json" 2>"$T/c.err" || fail "compare failed: $(head -c 300 "$T/c.err")"
log "compare: client cores/10G $(jq -r '.metrics[] | select(.name == "local_cores_per_10g") | "\(.a.mean) -> \(.b.mean) (\(.cpu_basis // "machine"))"' "$T/c.json"); the whole machine's: $(jq -r '.summary.cpu.local.busy_cores / (.summary.throughput_bps / 1e10)' "$T/b.json") -> $(jq -r '.summary.cpu.local.busy_cores / (.summary.throughput_bps / 1e10)' "$T/q.json")"
check_jq "compare's client cost row counts netrig's own CPU on both sides" "$T/c.json" \
    '[.metrics[] | select(.name == "local_cores_per_10g") | .cpu_basis == "own"] == [true]'
check_jq "its figures are the runs' own cores/10G" "$T/c.json" \
    '.metrics[] | select(.name == "local_cores_per_10g") | (.a.mean - $b[0].summary.own_cores_per_10gbps.local | fabs) < 1e-6' \
    --slurpfile b "$T/b.json"
finish
