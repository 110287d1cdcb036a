#!/usr/bin/env bash
# Many hosts: four network namespaces (h1..h4, 10.233.0.1-4) and a controller namespace
# (10.233.0.100) on one bridge that lives in its own namespace, each host running
# `netrig serve --allow-third-party 10.233.0.100/32`.
#   - a multi-target stream from the controller to h1 and h2: both targets report, the total
#     equals the sum of the targets, and the two started together (overlapping in time);
#   - a full-mesh rr plan: all 12 ordered pairs complete, and are stored in a private history
#     (--db): 12 runs naming their source and destination, the plan as mesh 1, whose matrix
#     `show mesh:1` prints and `report mesh:1` draws as a 4x4 HTML table;
#   - the same plan with h4's daemon killed midway: h4's cells fail with a reason, the others
#     complete; the stored mesh 2 and its page carry the reasons;
#   - a daemon without --allow-third-party refuses a third-party request.
# Needs root, ip netns, veth and bridge; exits 77 (skipped) without them. Traffic goes only to
# the namespace-internal 10.233.0.0/24 addresses.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

[[ $(id -u) -eq 0 ]] || skip "needs root for network namespaces"
command -v ip >/dev/null 2>&1 || skip "needs ip (iproute2)"

BR=nrmb-$$
CTL=nrmc-$$
hosts=(1 2 3 4)
ns_of() { echo "nrmh$1-$$"; }

# namespaces left by an earlier run that was killed before its trap ran
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^nrm(b|c|h[0-9])-[0-9]+$' || true); do
    kill -0 "${ns##*-}" 2>/dev/null || ip netns del "$ns" 2>/dev/null || true
done

all_ns="$BR $CTL"
for h in "${hosts[@]}"; do all_ns="$all_ns $(ns_of "$h")"; done
on_exit "for ns in $all_ns; do ip netns del \$ns; done"
for ns in $all_ns; do
    ip netns add "$ns" 2>"$T/ns.err" || skip "cannot create a network namespace: $(cat "$T/ns.err")"
    ip -n "$ns" link set lo up
done
ip -n "$BR" link add br0 type bridge 2>"$T/br.err" || skip "cannot create a bridge: $(cat "$T/br.err")"
ip -n "$BR" link set br0 up

# plug namespace $1 into the bridge with address $2
plug() {
    local ns=$1 addr=$2 port=p$3
    ip link add name eth0 netns "$ns" type veth peer name "$port" netns "$BR" 2>"$T/veth.err" ||
        skip "cannot create a veth pair: $(cat "$T/veth.err")"
    ip -n "$BR" link set "$port" master br0
    ip -n "$BR" link set "$port" up
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
}
plug "$CTL" 10.233.0.100 0
for h in "${hosts[@]}"; do plug "$(ns_of "$h")" "10.233.0.$h" "$h"; done

# a daemon in each host namespace
declare -A PID
start_host() {
    local h=$1
    ip netns exec "$(ns_of "$h")" "$NETRIG" serve -p 5301 --allow-third-party 10.233.0.100/32 \
        --allow-third-party-target 10.233.0.0/24 \
        2>"$T/h$h.log" &
    PID[$h]=$!
    track_pid "${PID[$h]}"
}
for h in "${hosts[@]}"; do start_host "$h"; done
# the daemons listen and the bridge forwards: wait until the controller reaches all four
for h in "${hosts[@]}"; do
    ok=0
    for _ in $(seq 100); do
        if ip netns exec "$CTL" timeout 1 bash -c "exec 3<>/dev/tcp/10.233.0.$h/5301" 2>/dev/null; then
            ok=1
            break
        fi
        sleep 0.1
    done
    ((ok)) || skip "controller cannot reach h$h through the bridge"
done
inctl() { ip netns exec "$CTL" "$NETRIG" "$@"; }

# ---- multi-target stream
inctl stream -c 10.233.0.1 -c 10.233.0.2 -P 2 -t 2 -J >"$T/multi.json" 2>"$T/multi.err" ||
    fail "multi-target stream: $(cat "$T/multi.err")"
check_jq "two targets, both complete" "$T/multi.json" \
    '(.targets | length) == 2 and all(.targets[]; .status == "complete" and .summary.throughput_bps > 0)'
check_jq "total is the sum of the targets (1%)" "$T/multi.json" \
    '([.targets[].summary.throughput_bps] | add) as $s | (.summary.throughput_bps - $s | fabs) <= 0.01 * $s'
check_jq "jain over all 4 flows" "$T/multi.json" '.summary.flows == 4 and .summary.jain_index > 0'
check_jq "started together (< 20 ms apart) and overlapping" "$T/multi.json" \
    '.summary.start_spread_us < 20000 and all(.targets[]; .summary.seconds > 1.9)'
check_jq "clock offsets measured" "$T/multi.json" \
    'all(.targets[]; (.clock_offset_us | type) == "number" and .clock_probe_rtt_us > 0)'

# ---- full-mesh rr plan
cat >"$T/plan.json" <<JSON
{"hosts": [{"name":"h1","address":"10.233.0.1"},{"name":"h2","address":"10.233.0.2"},
           {"name":"h3","address":"10.233.0.3"},{"name":"h4","address":"10.233.0.4"}],
 "tests": [{"test":"rr","params":{"duration_s":0.5}}],
 "pairs": "full", "timeout_s": 3}
JSON
DB=$T/mesh.db
ip netns exec "$CTL" "$NETRIG" mesh "$T/plan.json" -J --db "$DB" >"$T/mesh.json" 2>"$T/mesh.err" ||
    fail "mesh: $(tail -3 "$T/mesh.err")"
check_jq "12 ordered pairs, all complete" "$T/mesh.json" \
    '(.cells | length) == 12 and all(.cells[]; .status == "complete" and .result.summary.transactions_per_s > 0)'
check_jq "every ordered pair present once" "$T/mesh.json" \
    '[.cells[] | "\(.source)>\(.destination)"] | unique | length == 12'
check "progress shown on stderr" grep -q 'mesh \[12/12\]' "$T/mesh.err"
check_jq "-J names the stored mesh and each cell's run" "$T/mesh.json" \
    '.mesh_id == 1 and ([.cells[].run_id] | unique | length) == 12'

# ---- the plan's results in the history
"$NETRIG" history --db "$DB" --last 0 -J >"$T/hist.json" 2>"$T/hist.err" ||
    fail "history: $(cat "$T/hist.err")"
check_jq "history holds the 12 cells' runs" "$T/hist.json" \
    '[.[] | select(.mesh.id == 1)] | length == 12'
check_jq "each run names its source and destination (title and mesh field)" "$T/hist.json" \
    'all(.[]; .test == "rr" and .title == "mesh 1: \(.mesh.source) -> \(.mesh.destination) rr"
              and .summary.transactions_per_s > 0 and .summary.latency_p50_us > 0)'
check_jq "every ordered pair of h1..h4 once" "$T/hist.json" \
    '([.[] | "\(.mesh.source)>\(.mesh.destination)"] | unique | length == 12) and
     all(.[]; .mesh.source != .mesh.destination and (.mesh.source | test("^h[1-4]$")))'
check_jq "a cell's peer is its destination's address" "$T/hist.json" \
    'all(.[]; .peer == "10.233.0.\(.mesh.destination[1:]):5301")'
"$NETRIG" history --db "$DB" --meshes -J >"$T/meshes.json" 2>&1 || fail "history --meshes"
check_jq "the plan is stored as mesh 1, done, 12 cells, none failed" "$T/meshes.json" \
    'length == 1 and .[0].id == 1 and .[0].status == "done" and .[0].cells == 12 and
     .[0].failed == 0 and (.[0].plan | endswith("/plan.json"))'
"$NETRIG" show mesh:1 --db "$DB" >"$T/show.txt" 2>"$T/show.err" || fail "show mesh:1: $(cat "$T/show.err")"
check "show mesh:1 prints the rr matrix" grep -q '^rr (transactions/s), source down, destination across:' "$T/show.txt"
check "show mesh:1: a row per source with 3 figures and itself" \
    test "$(grep -cE '^h[1-4] +([0-9]+|-) +([0-9]+|-) +([0-9]+|-) +([0-9]+|-)$' "$T/show.txt")" -eq 4
"$NETRIG" show mesh:1 --db "$DB" -J >"$T/show.json" 2>&1 || fail "show mesh:1 -J"
check_jq "show mesh:1 -J: 12 complete cells with their runs and documents" "$T/show.json" \
    '(.cells | length) == 12 and all(.cells[]; .status == "complete" and .run_id > 0 and
     .result.summary.transactions_per_s > 0) and (.hosts | length) == 4'
"$NETRIG" report mesh:1 --db "$DB" -o "$T/mesh.html" 2>"$T/report.err" ||
    fail "report mesh:1: $(cat "$T/report.err")"
cells() { grep -o "class=\"cell $1" "$T/$2" | wc -l; }
check "report mesh:1: a 4x4 matrix ($(cells '' mesh.html) cells)" test "$(cells '' mesh.html)" -eq 16
check "report mesh:1: 12 coloured cells and 4 on the diagonal" \
    test "$(cells 'ok" style="background:hsl(' mesh.html)" -eq 12 -a "$(cells 'self' mesh.html)" -eq 4
check "report mesh:1: 4 rows and 4 columns of hosts" \
    test "$(grep -c '^<tr><th>h[1-4]</th><td class="cell' "$T/mesh.html")" -eq 4
check "report mesh:1: loads nothing (no src= or external href)" \
    bash -c "! grep -qiE '(src|href)=\"?(https?:|//)' '$T/mesh.html'"

# ---- one daemon killed midway: its cells fail with a reason, the others complete
sed 's/"duration_s":0.5/"duration_s":1/' "$T/plan.json" >"$T/plan2.json"
( sleep 2; kill -KILL "${PID[4]}" ) &
track_pid $!
rc=0
ip netns exec "$CTL" "$NETRIG" mesh "$T/plan2.json" -J --db "$DB" >"$T/mesh2.json" 2>"$T/mesh2.err" || rc=$?
check "mesh with a dead host exits 1 (got $rc)" test "$rc" -eq 1
check_jq "h4's cells after the kill failed with a reason" "$T/mesh2.json" \
    'any(.cells[]; (.source == "h4" or .destination == "h4") and .status != "complete" and (.error | length) > 0)'
check_jq "no cell without h4 failed" "$T/mesh2.json" \
    'all(.cells[]; (.source == "h4" or .destination == "h4") or .status == "complete")'
check_jq "all 12 cells reported" "$T/mesh2.json" '(.cells | length) == 12'
# the failed cells are stored with their reasons; only the complete ones have runs
"$NETRIG" show mesh:2 --db "$DB" -J >"$T/show2.json" 2>&1 || fail "show mesh:2 -J"
check_jq "mesh 2 stored: h4's failed cells with reasons and no run, the others with runs" "$T/show2.json" \
    '.mesh_id == 2 and any(.cells[]; .status == "failed") and
     all(.cells[]; if .status == "failed" then (.error | length) > 0 and .run_id == null
                   else .run_id > 0 end)'
"$NETRIG" history --db "$DB" --meshes -J >"$T/meshes2.json" 2>&1 || fail "history --meshes (2)"
check_jq "history --meshes counts mesh 2's failed cells" "$T/meshes2.json" \
    '.[1].id == 2 and .[1].failed == ([$x[0].cells[] | select(.status == "failed")] | length)' \
    --slurpfile x "$T/show2.json"
"$NETRIG" show mesh:2 --db "$DB" >"$T/show2.txt" 2>&1 || fail "show mesh:2"
check "show mesh:2 lists the failed cells with their reasons" \
    grep -qE '^  (h4 -> h[1-3]|h[1-3] -> h4) rr: .{10,}' "$T/show2.txt"
"$NETRIG" report mesh:2 --db "$DB" -o "$T/mesh2.html" 2>"$T/report2.err" ||
    fail "report mesh:2: $(cat "$T/report2.err")"
check "report mesh:2: 16 cells, failed ones marked with the reason on hover" \
    test "$(cells '' mesh2.html)" -eq 16 -a "$(grep -cE 'class="cell failed" title="(h4 -&gt; h[1-3]|h[1-3] -&gt; h4) rr: failed: .{10,}"' "$T/mesh2.html")" -ge 1

# ---- a daemon without --allow-third-party refuses
ip netns exec "$(ns_of 1)" "$NETRIG" serve -p 5302 2>"$T/h1b.log" &
track_pid $!
wait_until 10 "the daemon on 10.233.0.1:5302" ip netns exec "$(ns_of 1)" bash -c \
    '[[ -n $(ss -Hltn "sport = :5302") ]]' || true
out=$(ip netns exec "$CTL" "$NETRIG" stream --from 10.233.0.1:5302 -c 10.233.0.2 -t 0.5 2>&1 >/dev/null || true)
check "third party refused without --allow-third-party ($out)" grep -q "allow-third-party" <<<"$out"
out=$(ip netns exec "$CTL" "$NETRIG" stream --from 10.233.0.1 -c 10.233.0.2 -t 0.5 2>&1) ||
    fail "third party allowed: $out"
check "third party allowed with --allow-third-party" grep -q "complete" <<<"$out"
finish
