#!/usr/bin/env bash
# load_classes: netrig load --classes rrul against a queue that honours DSCP. Three namespaces,
# client -- router -- server, joined by veth pairs; the router's egress toward each end is an
# htb with two classes and no borrowing: EF (DSCP 46, matched by a u32 filter on the DS field)
# gets EF_MBIT with a short bfifo of EF_LIMIT bytes, everything else OTHER_MBIT with a long one
# of OTHER_LIMIT bytes. `netrig serve` in the server's namespace, `netrig load --classes rrul
# -C reno` (one flow per class each way, one UDP probe flow per class) in the client's. Checked:
#  - the marks reach the wire both ways: the EF class toward the client carried the daemon's
#    EF flow (megabytes, where the EF probe's answers alone are a few hundred KB), which only
#    happens if the daemon marked its own sockets (the class set travels in the hello);
#  - EF's latency increase under load is at most what its queues can hold, both ways, at its
#    rate (the configured bound, plus 3 ms for a busy host); BE's is what the other class's
#    queues held on average (sampled every 100 ms from tc over the loaded phase, both ways,
#    within 30 %), at most what they can hold, and clearly above EF's; the advice says the
#    queue honours DSCP;
#  - each class's goodput is in the report; EF's up and down stay within its class's rate;
#  - the history keeps the classes' probes and the chart names the classes; the text report
#    lists them; -P with --classes and an unknown set are refused with a one-line error.
# Needs root, `ip netns`, veth, sch_htb and cls_u32; exits 77 (skipped) without them.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

EF_MBIT=10
EF_LIMIT=6000 # 4 frames: at most 4.8 ms at 10 Mbit/s
OTHER_MBIT=30
OTHER_LIMIT=150000 # 40 ms at 30 Mbit/s
FRAME=1514
# a rate or timing check: not judged under a sanitizer (lib.sh judge_rates)
judged() { if judge_rates; then "$@"; fi; }

# refused before anything runs (no daemon needed)
rc=0
"$NETRIG" load --classes rrul -P 2 --no-save >"$T/p.out" 2>"$T/p.err" || rc=$?
check "-P with --classes: exit 2 (got $rc)" test "$rc" -eq 2
check "-P with --classes: one line naming both" \
    bash -c '[[ $(wc -l <"$1") -eq 1 ]] && grep -q -- "-P 2 does not combine with --classes rrul" "$1"' _ "$T/p.err"
rc=0
"$NETRIG" load --classes wmm --no-save >"$T/w.out" 2>"$T/w.err" || rc=$?
check "--classes wmm: exit 2 (got $rc), naming the value" \
    bash -c '[[ $0 -eq 2 ]] && grep -q "invalid value .wmm. for --classes" "$1"' "$rc" "$T/w.err"
# the text report: a short run on loopback (the embedded daemon)
"$NETRIG" load --classes rrul --baseline 0.3 -t 0.5 --recovery 0.3 --no-save >"$T/text.out" 2>&1 ||
    fail "load --classes on loopback: $(head -c 300 "$T/text.out")"
check "the text report has a row per class" \
    bash -c 'for c in BE BK CS5 EF; do grep -qE "^$c +[0-9]+ " "$0" || exit 1; done' "$T/text.out"

# client -- router -- server, the router's egress toward each end the queue that honours DSCP.
# The queue is on a router, not on a sender: a sender's own qdisc holds at most what TCP small
# queues let each flow put there (a few frames), a router's what its limit lets in.
need_netns
new_netns cls; NS_S=$NETNS
new_netns clr; NS_R=$NETNS
new_netns clc; NS_C=$NETNS
SRV_ADDR=10.232.1.1
ip link add name s0 netns "$NS_S" type veth peer name rs netns "$NS_R" 2>"$T/veth.err" ||
    skip "cannot create a veth pair: $(cat "$T/veth.err")"
ip link add name c0 netns "$NS_C" type veth peer name rc netns "$NS_R"
ip -n "$NS_S" addr add $SRV_ADDR/24 dev s0
ip -n "$NS_R" addr add 10.232.1.2/24 dev rs
ip -n "$NS_R" addr add 10.232.2.2/24 dev rc
ip -n "$NS_C" addr add 10.232.2.1/24 dev c0
for l in "$NS_S s0" "$NS_R rs" "$NS_R rc" "$NS_C c0"; do
    read -r ns dev <<<"$l"
    # one frame per packet: htb sends a GSO packet (up to 64 KB) whole and then waits off its
    # debt, a wait its queue's backlog does not show
    ip -n "$ns" link set dev "$dev" gso_max_segs 1 2>"$T/gso.err" ||
        skip "cannot set gso_max_segs: $(cat "$T/gso.err")"
    ip -n "$ns" link set dev "$dev" up
done
ip -n "$NS_S" route add default via 10.232.1.2
ip -n "$NS_C" route add default via 10.232.2.2
ip netns exec "$NS_R" sysctl -qw net.ipv4.ip_forward=1
for dev in rs rc; do
    tcn() { ip netns exec "$NS_R" tc "$@"; }
    tcn qdisc add dev "$dev" root handle 1: htb default 20 2>"$T/tc.err" ||
        skip "cannot add an htb qdisc: $(cat "$T/tc.err")"
    tcn class add dev "$dev" parent 1: classid 1:10 htb rate ${EF_MBIT}mbit ceil ${EF_MBIT}mbit quantum 1514
    tcn class add dev "$dev" parent 1: classid 1:20 htb rate ${OTHER_MBIT}mbit ceil ${OTHER_MBIT}mbit quantum 1514
    tcn qdisc add dev "$dev" parent 1:10 handle 10: bfifo limit $EF_LIMIT
    tcn qdisc add dev "$dev" parent 1:20 handle 20: bfifo limit $OTHER_LIMIT
    tcn filter add dev "$dev" parent 1: protocol ip prio 1 u32 match ip dsfield 0xb8 0xfc \
        flowid 1:10 2>"$T/tc.err" || skip "cannot add a u32 filter: $(cat "$T/tc.err")"
done
for l in "$NS_S s0" "$NS_R rs" "$NS_R rc" "$NS_C c0"; do
    read -r ns dev <<<"$l"
    wait_link_up "$ns" "$dev" || fail "$dev did not come up"
done
wait_path_up "$NS_C" $SRV_ADDR

ip netns exec "$NS_S" "$NETRIG" serve -p 0 -B $SRV_ADDR 2>"$T/serve.log" &
SRV_PID=$!
track_pid "$SRV_PID"
SRV_PORT=$(wait_for_port "$T/serve.log" "$SRV_PID")
log "daemon in $NS_S on $SRV_ADDR:$SRV_PORT; the router's htb EF ${EF_MBIT} Mbit/s (${EF_LIMIT} B), others ${OTHER_MBIT} Mbit/s (${OTHER_LIMIT} B)"

# "unix_time backlog_bytes" of the other classes' bfifo (handle 20:) every 100 ms
other_sampler() { # NS DEV FILE
    [[ -p $T/tick ]] || mkfifo "$T/tick"
    ip netns exec "$1" bash -c 'exec 3<>"$1"; while :; do
        o=$(tc -s qdisc show dev "$2" | sed -n "/^qdisc bfifo 20:/,/^qdisc/p")
        [[ $o =~ backlog\ ([0-9]+)b ]] && echo "$EPOCHREALTIME ${BASH_REMATCH[1]}"
        read -rt 0.1 -u 3 || :; done' sampler "$T/tick" "$2" >"$3" &
    track_pid $!
    BACKLOG_PIDS+=("$!")
}
other_sampler "$NS_R" rc "$T/bl-s.log" # toward the client: the way down
other_sampler "$NS_R" rs "$T/bl-c.log" # toward the server: the way up
ef_bytes() { # NS DEV: bytes class 1:10 has sent
    ip netns exec "$1" tc -s class show dev "$2" classid 1:10 | awk '/Sent/ { print $2; exit }'
}
EF_S0=$(ef_bytes "$NS_R" rc)

DB=$T/history.db
rc=0
timeout 60 ip netns exec "$NS_C" "$NETRIG" load -c "$SRV_ADDR:$SRV_PORT" --classes rrul -C reno \
    --baseline 2 -t 6 --recovery 1 -J --db "$DB" >"$T/load.json" 2>"$T/load.err" || rc=$?
backlog_samplers_stop
check "load --classes rrul exit 0 (got $rc: $(head -c 300 "$T/load.err"))" test "$rc" -eq 0
EF_S=$(($(ef_bytes "$NS_R" rc) - EF_S0))
D=$T/load.json
jq -c '.classes[] | {name, up_bps, down_bps, increase_p50_us,
    idle: .phases.baseline.latency_us.p50, loaded: .phases.loaded.latency_us.p50,
    answered: .phases.loaded.answered}' "$D" | while read -r l; do log "$l"; done

check_jq "the document names the set" "$D" '.params.classes == "rrul"'
check_jq "four classes in flent's order with their DSCPs" "$D" \
    '[.classes[] | "\(.name)=\(.dscp)"] == ["BE=0", "BK=8", "CS5=40", "EF=46"]'
check_jq "every class answered probes idle and loaded" "$D" \
    '[.classes[] | .phases.baseline.answered > 0 and .phases.loaded.answered > 0] | all'

# the daemon marked its EF flow: the way down's EF class carried it (the EF probe's answers
# alone: about 0.1 MB)
EF_DOWN=$(jq '.classes[3].down_bps' "$D")
check "the way down's EF class sent $EF_S bytes: the daemon's EF flow was marked (>= 1 MB)" \
    test "$EF_S" -ge 1000000
judged check "EF's down goodput $EF_DOWN is within its class's ${EF_MBIT} Mbit/s" \
    awk -v x="$EF_DOWN" -v r=$EF_MBIT 'BEGIN { exit !(x > 0.5e6 && x <= r * 1e6 * 1.02) }'
judged check_jq "EF's up goodput is within its class's rate" "$D" \
    ".classes[3].up_bps > 0.5e6 and .classes[3].up_bps <= $EF_MBIT * 1e6 * 1.02"
judged check_jq "the other classes' goodput up shares the other class's rate" "$D" \
    "([.classes[0:3][] | .up_bps] | add) <= $OTHER_MBIT * 1e6 * 1.02 and ([.classes[0:3][] | .up_bps] | min) > 0"

# EF's bound: its queue full both ways, plus the frame in service each way, at its rate
EF_BOUND_US=$(awk -v l=$EF_LIMIT -v f=$FRAME -v r=$EF_MBIT 'BEGIN { printf "%.0f", 2 * (l + f) * 8 / r }')
EF_INC=$(jq '.classes[3].increase_p50_us' "$D")
BE_INC=$(jq '.classes[0].increase_p50_us' "$D")
# what the other classes' queues held on average over the loaded phase, both ways, in us
start=$(jq .start_unix_s "$D")
from=$(jq '.phases[1].from_s' "$D")
end=$(jq '.phases[1].end_s' "$D")
mean_q() {
    awk -v s="$start" -v f="$from" -v e="$end" \
        '$1 >= s + f && $1 < s + e { n++; sum += $2 } END { printf "%.0f %d", n ? sum / n : 0, n }' "$1"
}
read -r QS NS_ <<<"$(mean_q "$T/bl-s.log")"
read -r QC NC_ <<<"$(mean_q "$T/bl-c.log")"
GT_US=$(awk -v a="$QS" -v b="$QC" -v r=$OTHER_MBIT 'BEGIN { printf "%.0f", (a + b) * 8 / r }')
log "EF +${EF_INC} us (bound ${EF_BOUND_US} us); BE +${BE_INC} us; other queues held ${QC} B up, ${QS} B down ($NC_, $NS_ samples): ${GT_US} us"
judged check "the other queues were sampled under load ($NC_ and $NS_ samples)" \
    bash -c '[[ $0 -ge 20 && $1 -ge 20 ]]' "$NC_" "$NS_"
judged check "EF's increase ${EF_INC} us is within its queue's bound ${EF_BOUND_US} us (+3 ms)" \
    awk -v x="$EF_INC" -v b="$EF_BOUND_US" 'BEGIN { exit !(x <= b + 3000) }'
judged check "BE's increase ${BE_INC} us is the queued ${GT_US} us (within 30 %)" \
    awk -v x="$BE_INC" -v g="$GT_US" 'BEGIN { exit !(g > 10000 && x >= 0.7 * g - 1000 && x <= 1.3 * g + 2000) }'
BE_BOUND_US=$(awk -v l=$OTHER_LIMIT -v f=$FRAME -v r=$OTHER_MBIT 'BEGIN { printf "%.0f", 2 * (l + f) * 8 / r }')
judged check "BE's increase ${BE_INC} us is within its queues' bound ${BE_BOUND_US} us (+3 ms)" \
    awk -v x="$BE_INC" -v b="$BE_BOUND_US" 'BEGIN { exit !(x <= b + 3000) }'
judged check "BE's increase ${BE_INC} us is clearly above EF's ${EF_INC} us" \
    awk -v be="$BE_INC" -v ef="$EF_INC" 'BEGIN { exit !(be >= 2 * ef + 10000) }'
judged check_jq "the advice says the queue honours DSCP" "$D" '.advice | any(test("honours DSCP: EF waited"))'
check_jq "the verdict is BE's (the UDP probe's figures are the first class's)" "$D" \
    '.latency_increase.probe == "udp" and (.latency_increase.p50_us - .classes[0].increase_p50_us | fabs) < 1'

# the history keeps each class's probe records, and the chart draws them
"$NETRIG" export last --samples --json --db "$DB" >"$T/series.json" 2>"$T/export.err"
check_jq "the history keeps every class's probe records" "$T/series.json" \
    '[.[0].probes | .udp, .udp_bk, .udp_cs5, .udp_ef | (.t_s | length) > 100] | all'
if command -v gnuplot >/dev/null 2>&1; then
    "$NETRIG" plot last --db "$DB" -o "$T/load.svg" 2>"$T/plot.err"
    check "the chart names each class ($(head -c 200 "$T/plot.err"))" \
        bash -c 'grep -q "EF up" "$0" && grep -q "UDP EF probes" "$0"' "$T/load.svg"
fi
finish
