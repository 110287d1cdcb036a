#!/usr/bin/env bash
# netns_tbf: throughput through a known bottleneck. Two network namespaces joined by a veth
# pair, each end's egress shaped by tbf to 200 Mbit/s; `netrig serve` in one namespace,
# `netrig stream` in the other. With MTU 1500 TCP carries 1448 payload bytes (timestamps
# on) per 1514-byte frame as tbf counts it, so the goodput is 200 * 1448 / 1514 =
# 191.28 Mbit/s (what iperf3 measures on the same set-up). Forward and reverse must land
# within 5 % of it, with the four flows sharing fairly (Jain >= 0.9).
# The text report's interval table of a forward run shows the receiver's rate per interval.
# Needs root, `ip netns`, veth and sch_tbf; exits 77 (skipped) without them.
# Traffic goes only to the namespace-internal addresses 10.231.1.1 and 10.231.1.2.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

RATE_MBIT=200
EXPECT_BPS=$(awk -v r=$RATE_MBIT 'BEGIN { printf "%.0f", r * 1e6 * 1448 / 1514 }')
TOL=0.05

# two namespaces joined by a veth pair, tbf at RATE_MBIT on both egresses (lib.sh)
veth_pair ${RATE_MBIT}M
NS_S=$VETH_NS_A
NS_C=$VETH_NS_B
SRV_ADDR=$VETH_A
mtu=$(ip -n "$NS_C" -o link show "$VETH_DEV_B" | sed -n 's/.* mtu \([0-9]*\) .*/\1/p')
[[ $mtu -eq 1500 ]] || fail "veth MTU is $mtu, the expected goodput assumes 1500"

SRV_LOG=$T/serve.log
ip netns exec "$NS_S" "$NETRIG" serve -p 0 -B "$SRV_ADDR" 2>"$SRV_LOG" &
SRV_PID=$!
track_pid "$SRV_PID"
SRV_PORT=$(wait_for_port "$SRV_LOG" "$SRV_PID")
log "namespaces $NS_S / $NS_C, tbf ${RATE_MBIT}mbit both ways, daemon on $SRV_ADDR:$SRV_PORT"
log "expected goodput $(awk -v e="$EXPECT_BPS" 'BEGIN { printf "%.2f", e / 1e6 }') Mbit/s +-5 %"

shaped_run() { # NAME [stream options]
    local name=$1 rc=0 out=$T/$1.json
    shift
    ip netns exec "$NS_C" "$NETRIG" stream -c "$SRV_ADDR" -p "$SRV_PORT" -t 4 -O 1 -P 4 -J "$@" \
        >"$out" 2>"$T/$name.err" || rc=$?
    if [[ $rc -ne 0 ]]; then
        fail "$name: exit status $rc ($(head -c 300 "$T/$name.err"))"
        return 0
    fi
    log "$name: $(jq -r '"\(.summary.throughput_bps / 1e4 | round / 100) Mbit/s, jain \(.summary.jain_index * 1000 | round / 1000), \(.summary.retransmits) retransmits"' "$out")"
    check_jq "$name: 4 flows, complete" "$out" '(.flows | length) == 4 and .partial == false'
    check_jq "$name: summary.throughput_bps within 5 % of $EXPECT_BPS (got $(jq .summary.throughput_bps "$out"))" \
        "$out" '.summary.throughput_bps >= $e * (1 - $t) and .summary.throughput_bps <= $e * (1 + $t)' \
        --argjson e "$EXPECT_BPS" --argjson t "$TOL"
    check_jq "$name: summary.jain_index >= 0.9 (got $(jq .summary.jain_index "$out"))" "$out" \
        '.summary.jain_index >= 0.9'
    check_jq "$name: sender's rate agrees too (within 5 %)" "$out" \
        '.summary.sender_throughput_bps >= $e * (1 - $t) and .summary.sender_throughput_bps <= $e * (1 + $t)' \
        --argjson e "$EXPECT_BPS" --argjson t "$TOL"
}

shaped_run forward
check_jq "forward: every flow client_to_server" "$T/forward.json" 'all(.flows[]; .direction == "client_to_server")'
shaped_run reverse -R
check_jq "reverse: every flow server_to_client" "$T/reverse.json" 'all(.flows[]; .direction == "server_to_client")'

# The text report's interval table after a forward run shows what crossed the path: the
# receiver's rate per interval, which through tbf cannot exceed the goodput (191.3 Mbit/s) (the sender's writes in
# the first interval may, as they fill its socket buffer). No -O: the first interval is the one.
ip netns exec "$NS_C" "$NETRIG" stream -c "$SRV_ADDR" -p "$SRV_PORT" -t 3 -i 1 --no-save \
    >"$T/text.out" 2>"$T/text.err" || fail "text run: exit status $? ($(head -c 300 "$T/text.err"))"
# first row after the "received  sender wrote" header: "[ 0.00- 1.00 s] R unit S unit"
row=$(awk '/^Intervals +received = what crossed the path/ { t = 1; next }
           t == 1 && /^interval +received +sender wrote/ { t = 2; next }
           t == 2 { print; exit }' "$T/text.out")
to_bps() { awk -v v="$1" -v u="$2" 'BEGIN { m = u ~ /^G/ ? 1e9 : u ~ /^M/ ? 1e6 : u ~ /^k/ ? 1e3 : 1; printf "%.0f", v * m }'; }
read -r _ _ _ _ rv ru sv su _ <<<"$row" || true
if [[ -z ${rv:-} || -z ${su:-} ]]; then
    fail "text run: no receiver's interval table (row '$row'; $(head -c 400 "$T/text.out"))"
else
    rx=$(to_bps "$rv" "$ru")
    tx=$(to_bps "$sv" "$su")
    log "text run: first interval received $rv $ru, sender wrote $sv $su"
    # tbf's burst (~64 KB) adds at most 0.6 Mbit/s to a 1 s interval
    check "first interval's received rate $rx <= goodput x 1.05 ($((EXPECT_BPS * 105 / 100)))" \
        test "$rx" -le $((EXPECT_BPS * 105 / 100))
    check "first interval's received rate $rx is the path's (>= half the goodput)" \
        test "$rx" -ge $((EXPECT_BPS / 2))
    check "the sender's writes sit beside it ($tx bps, not below what was received)" \
        test "$tx" -ge $((rx * 95 / 100))
fi
grep -q "^  (what the sender wrote; what crossed the path follows the run)" "$T/text.out" ||
    fail "text run: the live table does not say it shows the sender's writes"

check "daemon alive after both runs" alive "$SRV_PID"
finish
