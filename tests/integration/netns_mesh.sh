#!/usr/bin/env bash
# Many hosts: four network namespaces (h1..h4, 10.233.0.1-4) and a controller namespace
# (10.233.0.100) on one bridge that lives in its own namespace, each host running
# `netrig serve --allow-third-party 10.233.0.100/32`.
#   - a multi-target stream from the controller to h1 and h2: both targets report, the total
#     equals the sum of the targets, and the two started together (overlapping in time);
#   - a full-mesh rr plan: all 12 ordered pairs complete;
#   - the same plan with h4's daemon killed midway: h4's cells fail with a reason, the others
#     complete;
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
ip netns exec "$CTL" "$NETRIG" mesh "$T/plan.json" -J >"$T/mesh.json" 2>"$T/mesh.err" ||
    fail "mesh: $(tail -3 "$T/mesh.err")"
check_jq "12 ordered pairs, all complete" "$T/mesh.json" \
    '(.cells | length) == 12 and all(.cells[]; .status == "complete" and .result.summary.transactions_per_s > 0)'
check_jq "every ordered pair present once" "$T/mesh.json" \
    '[.cells[] | "\(.source)>\(.destination)"] | unique | length == 12'
check "progress shown on stderr" grep -q 'mesh \[12/12\]' "$T/mesh.err"

# ---- one daemon killed midway: its cells fail with a reason, the others complete
sed 's/"duration_s":0.5/"duration_s":1/' "$T/plan.json" >"$T/plan2.json"
( sleep 2; kill -KILL "${PID[4]}" ) &
track_pid $!
rc=0
ip netns exec "$CTL" "$NETRIG" mesh "$T/plan2.json" -J >"$T/mesh2.json" 2>"$T/mesh2.err" || rc=$?
check "mesh with a dead host exits 1 (got $rc)" test "$rc" -eq 1
check_jq "h4's cells after the kill failed with a reason" "$T/mesh2.json" \
    'any(.cells[]; (.source == "h4" or .destination == "h4") and .status != "complete" and (.error | length) > 0)'
check_jq "no cell without h4 failed" "$T/mesh2.json" \
    'all(.cells[]; (.source == "h4" or .destination == "h4") or .status == "complete")'
check_jq "all 12 cells reported" "$T/mesh2.json" '(.cells | length) == 12'

# ---- a daemon without --allow-third-party refuses
ip netns exec "$(ns_of 1)" "$NETRIG" serve -p 5302 2>"$T/h1b.log" &
track_pid $!
sleep 0.5
out=$(ip netns exec "$CTL" "$NETRIG" stream --from 10.233.0.1:5302 -c 10.233.0.2 -t 0.5 2>&1 >/dev/null || true)
check "third party refused without --allow-third-party ($out)" grep -q "allow-third-party" <<<"$out"
out=$(ip netns exec "$CTL" "$NETRIG" stream --from 10.233.0.1 -c 10.233.0.2 -t 0.5 2>&1) ||
    fail "third party allowed: $out"
check "third party allowed with --allow-third-party" grep -q "complete" <<<"$out"
finish
