#!/usr/bin/env bash
# load_oneway: netrig load attributes the latency increase to each way, and measures the drain.
# Two namespaces joined by a veth pair shaped unequally, as cable and DSL are: the client's
# egress (up) by tbf to 20 Mbit/s with a 100,000-byte queue (at most 40 ms), the server's (down)
# to 100 Mbit/s with a 125,000-byte queue (at most 10 ms). `netrig load -C reno -P 2` loads both
# ways at once; while it runs `tc -s qdisc` is read on both ends every 100 ms. Ground truth per
# way: the mean backlog x 8 / rate over netrig's loaded phase. Checked:
#  - the UDP probe's one-way increases (latency_increase.up_p50_us, down_p50_us) are each within
#    25 % (or 2 ms) of their own queue's delay, never over that queue's limit, and they add up
#    to the round-trip increase within 25 %;
#  - the drain: drained, and drain_s within 0.3 s of when the sampled backlogs emptied after
#    the load stopped; the recovery's figures count from there (from_s = start_s + drain_s)
#    and its p50 is back under 1 ms;
#  - --icmp: the ICMP echo probe crosses the same queues: its increase is within 25 % (or 2 ms)
#    of the UDP probe's round trip; as a user outside net.ipv4.ping_group_range and without
#    CAP_NET_RAW, --icmp is refused before anything runs with a line naming both and the fix;
#    with that user's group in the range, a ping socket serves it.
# Needs root, `ip netns`, veth and sch_tbf; exits 77 (skipped) without them.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

UP_MBIT=50 UP_LIMIT=62500
DOWN_MBIT=100 DOWN_LIMIT=375000

veth_pair
NS_S=$VETH_NS_A
NS_C=$VETH_NS_B
ip netns exec "$NS_C" tc qdisc add dev "$VETH_DEV_B" root tbf rate ${UP_MBIT}mbit burst 16kb \
    limit $UP_LIMIT 2>"$T/tc.err" || skip "cannot add a tbf qdisc: $(cat "$T/tc.err")"
ip netns exec "$NS_S" tc qdisc add dev "$VETH_DEV_A" root tbf rate ${DOWN_MBIT}mbit burst 16kb \
    limit $DOWN_LIMIT

SRV_LOG=$T/serve.log
ip netns exec "$NS_S" "$NETRIG" serve -p 0 -B "$VETH_A" 2>"$SRV_LOG" &
SRV_PID=$!
track_pid "$SRV_PID"
SRV_PORT=$(wait_for_port "$SRV_LOG" "$SRV_PID")

backlog_sampler "$NS_C" "$VETH_DEV_B" "$T/up.log"
backlog_sampler "$NS_S" "$VETH_DEV_A" "$T/down.log"
rc=0
ip netns exec "$NS_C" "$NETRIG" load -c "$VETH_A" -p "$SRV_PORT" --baseline 2 -t 5 --recovery 2 \
    -P 4 -C reno -J --samples --icmp --no-save >"$T/load.json" 2>"$T/load.err" || rc=$?
backlog_samplers_stop
[[ $rc -eq 0 ]] || fail "load: exit status $rc ($(head -c 400 "$T/load.err"))"
DOC=$T/load.json

START=$(jq .start_unix_s "$DOC")
FROM=$(jq '.phases[1].from_s' "$DOC")
END=$(jq '.phases[1].end_s' "$DOC")
queue_ms() { # LOG MBIT: "MS N", the mean backlog's delay over the loaded phase
    awk -v s="$START" -v f="$FROM" -v e="$END" -v r="$2" '$1 >= s + f && $1 < s + e { n++; sum += $2 }
        END { printf "%.3f %d\n", n ? sum / n * 8 / (r * 1e6) * 1e3 : 0, n }' "$1"
}
read -r GT_UP N_UP < <(queue_ms "$T/up.log" $UP_MBIT)
read -r GT_DOWN N_DOWN < <(queue_ms "$T/down.log" $DOWN_MBIT)
REP_UP=$(jq '.latency_increase.up_p50_us / 1000' "$DOC")
REP_DOWN=$(jq '.latency_increase.down_p50_us / 1000' "$DOC")
REP=$(jq '.latency_increase.p50_us / 1000' "$DOC")
log "up: reported +$REP_UP ms, queue held $GT_UP ms ($N_UP samples); down: +$REP_DOWN ms," \
    "queue held $GT_DOWN ms ($N_DOWN samples); round trip +$REP ms"

# a rate or timing check: not judged under a sanitizer (lib.sh judge_rates)
judged() { if judge_rates; then "$@"; fi; }
close() { # NAME REPORTED TRUTH
    check "$1: reported $2 ms within 25 % or 2 ms of the queue's $3 ms" \
        awk -v a="$2" -v b="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.25 * b || d <= 2) }'
}
judged check "at least 12 qdisc samples each way (got $N_UP, $N_DOWN)" test "$N_UP" -ge 12 -a "$N_DOWN" -ge 12
judged close "up" "$REP_UP" "$GT_UP"
judged close "down" "$REP_DOWN" "$GT_DOWN"
MAX_UP=$(awk -v l=$UP_LIMIT -v r=$UP_MBIT 'BEGIN { printf "%.3f", l * 8 / (r * 1e6) * 1e3 }')
MAX_DOWN=$(awk -v l=$DOWN_LIMIT -v r=$DOWN_MBIT 'BEGIN { printf "%.3f", l * 8 / (r * 1e6) * 1e3 }')
judged check "up +$REP_UP ms not over its queue's $MAX_UP ms" awk -v a="$REP_UP" -v m="$MAX_UP" 'BEGIN { exit !(a <= m + 0.5) }'
judged check "down +$REP_DOWN ms not over its queue's $MAX_DOWN ms" awk -v a="$REP_DOWN" -v m="$MAX_DOWN" 'BEGIN { exit !(a <= m + 0.5) }'
judged check "the ways add up to the round trip's +$REP ms (25 %)" \
    awk -v u="$REP_UP" -v d="$REP_DOWN" -v r="$REP" 'BEGIN { s = u + d - r; if (s < 0) s = -s; exit !(s <= 0.25 * r) }'
check_jq "JSON: one-way medians in every phase of the UDP probe" "$DOC" \
    'all(.phases[0, 1].udp_probe.one_way_us; .answers > 100)'

# the drain: when both sampled backlogs held at most one frame after the load stopped
STOP=$(jq '.phases[2].start_s' "$DOC")
UP_EMPTY=$(awk -v s="$START" -v e="$STOP" '$1 >= s + e && $2 <= 1514 { printf "%.3f", $1 - s - e; exit }' "$T/up.log")
DOWN_EMPTY=$(awk -v s="$START" -v e="$STOP" '$1 >= s + e && $2 <= 1514 { printf "%.3f", $1 - s - e; exit }' "$T/down.log")
GT_DRAIN=$(awk -v a="${UP_EMPTY:-99}" -v b="${DOWN_EMPTY:-99}" 'BEGIN { print (a > b ? a : b) }')
DRAIN=$(jq .latency_increase.drain_s "$DOC")
log "after the stop (s, up, down backlog): $(awk -v s="$START" -v e="$STOP" '$1 >= s + e - 0.2 && $1 < s + e + 0.5 { printf "%.2f:%s ", $1 - s - e, $2 }' "$T/up.log") / $(awk -v s="$START" -v e="$STOP" '$1 >= s + e - 0.2 && $1 < s + e + 0.5 { printf "%.2f:%s ", $1 - s - e, $2 }' "$T/down.log")"
log "drain: reported $DRAIN s, backlogs emptied at $GT_DRAIN s (up $UP_EMPTY, down $DOWN_EMPTY)"
judged check_jq "drained before the end" "$DOC" '.latency_increase.drained == true'
judged check "drain $DRAIN s within 0.3 s of the backlogs' $GT_DRAIN s" \
    awk -v a="$DRAIN" -v b="$GT_DRAIN" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.3) }'
judged check "drain $DRAIN s at least the down queue's +$REP_DOWN ms (a queue takes its delay to empty)" \
    awk -v a="$DRAIN" -v q="$REP_DOWN" 'BEGIN { exit !(a * 1000 >= q) }'
judged check_jq "recovery counts from the drain" "$DOC" \
    '(.phases[2].from_s - .phases[2].start_s - .latency_increase.drain_s) | fabs < 0.001'
judged check_jq "recovery p50 back under 1 ms" "$DOC" '.phases[2].udp_probe.latency_us.p50 < 1000'

# the up line of the chart: what the server acknowledged, not what was written. Both ends
# sample every 100 ms from the same start: at each tick the client's count may run ahead of
# what the server had received by at most what was in flight (the 62,500-byte queue, the 16 KB
# burst) and 50 ms of goodput for a tick read late on a busy host; the writes run ahead by
# what waits in the socket buffers besides
GOOD=$(awk -v r=$UP_MBIT 'BEGIN { printf "%.0f", r * 1e6 * 1448 / 1514 }')
UP_AHEAD=$(jq '.samples.up as $u | [range(0; [($u.client.t_s | length), ($u.server.t_s | length)] | min) as $k
    | ([$u.client.flows[] | .bytes[$k]] | add) - ([$u.server.flows[] | .bytes[$k]] | add)] | max' "$DOC")
UP_ALLOW=$(awk -v g="$GOOD" -v q=$UP_LIMIT 'BEGIN { printf "%.0f", q + 16384 + g / 8 * 0.05 }')
log "up series: at most $UP_AHEAD bytes ahead of the server's receipts (allowed $UP_ALLOW)"
judged check "up series (acknowledged) at most $UP_ALLOW bytes ahead of the receiver (got $UP_AHEAD)" \
    test "$UP_AHEAD" -le "$UP_ALLOW"

ICMP=$(jq '.latency_increase.icmp_p50_us / 1000' "$DOC")
log "ICMP echo ($(jq -r .icmp.socket "$DOC")): +$ICMP ms; UDP round trip +$REP ms"
check_jq "ICMP probe ran, answered in every phase" "$DOC" \
    '.icmp.ran and all(.phases[]; .icmp_probe.answered > 50)'
judged close "ICMP" "$ICMP" "$REP"

# neither a ping socket (this namespace's ping_group_range is '1 0') nor a raw one (no caps)
if command -v setpriv >/dev/null 2>&1; then
    rc=0
    ip netns exec "$NS_C" setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps -all \
        --bounding-set -all "$NETRIG" load -c "$VETH_A" -p "$SRV_PORT" --icmp --no-save -t 1 \
        >/dev/null 2>"$T/noicmp.err" || rc=$?
    check "--icmp without a ping or raw socket: exit 1 (got $rc)" test "$rc" -eq 1
    check "--icmp refused with the reason and the fix ($(head -c 300 "$T/noicmp.err"))" \
        grep -q "ping_group_range.*CAP_NET_RAW" "$T/noicmp.err"
    # the same user inside the range: a ping socket, no privilege
    ip netns exec "$NS_C" sysctl -qw net.ipv4.ping_group_range="65534 65534"
    rc=0
    ip netns exec "$NS_C" setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps -all \
        --bounding-set -all "$NETRIG" load -c "$VETH_A" -p "$SRV_PORT" --icmp --no-save -J \
        --baseline 0.5 -t 0.5 --recovery 1 -P 1 >"$T/ping.json" 2>"$T/ping.err" || rc=$?
    check "--icmp as an unprivileged user in ping_group_range: exit 0 (got $rc: $(head -c 200 "$T/ping.err"))" \
        test "$rc" -eq 0
    # 100 probes a second: 50 a 0.5 s phase; the recovery phase is 1 s because it counts from
    # the drain (a quiet run had 30 answers in 0.5 s of recovery, a loaded one 10 or fewer);
    # more than 10 unless a sanitizer slows the prober
    # (under TSan a phase got 10 or fewer), where any answer in every phase is the check
    MIN_ANSWERS=10
    judge_rates || MIN_ANSWERS=0
    check_jq "... through a ping socket, answered in every phase (more than $MIN_ANSWERS)" "$T/ping.json" \
        '.icmp.socket == "ping socket" and all(.phases[]; .icmp_probe.answered > $min)' \
        --argjson min "$MIN_ANSWERS"
    log "ping socket: $(jq -c '[.icmp.socket, [.phases[] | {name, icmp_probe}]]' "$T/ping.json" 2>/dev/null | head -c 600)"
else
    log "setpriv absent: the refusal of --icmp is not exercised"
fi
finish
