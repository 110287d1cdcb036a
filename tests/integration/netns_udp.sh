#!/usr/bin/env bash
# netns_udp: a UDP stream sent at twice what the path carries must show up as about 50 % loss
# at the receiver, not as a sender that quietly slows down. Two network namespaces joined by
# a veth pair, each end's egress shaped by tbf to 200 Mbit/s; `netrig serve` in one namespace,
# `netrig stream -u -b 400M` from the other, forward (client's egress shaped) and reverse
# (server's egress shaped).
#   A 1400-byte datagram is a 1442-byte frame as tbf counts it (+8 UDP, +20 IPv4, +14
#   Ethernet): 400 Mbit/s of payload offers 35714 datagrams/s, the link passes
#   200e6 / (1442 x 8) = 17337 of them: 51.5 % loss, 194.2 Mbit/s of payload received.
# Checks: loss_pct between 40 and 60, the sender kept its 400 Mbit/s schedule (sent_pps within
# 5 %), and the received payload rate near what the link carries (-25 %/+10 %: tbf's timer).
# Needs root, `ip netns`, veth and sch_tbf; exits 77 (skipped) without them.
# Traffic goes only to namespace-internal addresses in 10.231.1.0/24.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
# runs are saved to a history database under $XDG_DATA_HOME: keep ours out of the user's
export XDG_DATA_HOME=$T/data

RATE_MBIT=200
SEND_RATE=400M
DGRAM=1400
OFFERED_PPS=$(awk -v l=$DGRAM 'BEGIN { printf "%.1f", 400e6 / (l * 8) }')
CARRIED_BPS=$(awk -v r=$RATE_MBIT -v l=$DGRAM 'BEGIN { printf "%.0f", r * 1e6 * l / (l + 42) }')

# two namespaces joined by a veth pair, tbf at RATE_MBIT on both egresses (lib.sh)
veth_pair ${RATE_MBIT}M
NS_S=$VETH_NS_A
NS_C=$VETH_NS_B
SRV_ADDR=$VETH_A
mtu=$(ip -n "$NS_C" -o link show "$VETH_DEV_B" | sed -n 's/.* mtu \([0-9]*\) .*/\1/p')
[[ $mtu -ge $((DGRAM + 28)) ]] || fail "veth MTU is $mtu: a $DGRAM-byte datagram does not fit"

SRV_LOG=$T/serve.log
ip netns exec "$NS_S" "$NETRIG" serve -p 0 -B "$SRV_ADDR" 2>"$SRV_LOG" &
SRV_PID=$!
track_pid "$SRV_PID"
SRV_PORT=$(wait_for_port "$SRV_LOG" "$SRV_PID")
log "namespaces $NS_S / $NS_C, tbf ${RATE_MBIT}mbit, daemon on $SRV_ADDR:$SRV_PORT"
log "offered $OFFERED_PPS datagrams/s; the link carries $(awk -v c="$CARRIED_BPS" 'BEGIN { printf "%.1f", c / 1e6 }') Mbit/s of payload"

overload_run() { # NAME DIRECTION [stream options]
    local name=$1 dir=$2 rc=0 out=$T/$1.json t0
    shift 2
    t0=$(now_ms)
    ip netns exec "$NS_C" timeout -s KILL 45 "$NETRIG" stream -u -b "$SEND_RATE" -l "$DGRAM" -t 4 \
        -c "$SRV_ADDR" -p "$SRV_PORT" -J "$@" >"$out" 2>"$T/$name.err" || rc=$?
    log "$name: exit $rc in $(($(now_ms) - t0)) ms"
    if [[ $rc -ne 0 ]] || ! jq -e . "$out" >/dev/null 2>&1; then
        fail "$name: exit status $rc ($(head -c 300 "$T/$name.err"); stdout $(head -c 200 "$out"))"
        return 0
    fi
    log "$name: $(jq -r '.summary | "sent \(.udp.datagrams_sent) (\(.udp.sent_pps | round)/s, \(.udp.send_drops) refused by the socket), received \(.udp.datagrams_received) (\(.udp.received_pps | round)/s, \(.throughput_bps / 1e4 | round / 100) Mbit/s), loss \(.udp.loss_pct * 100 | round / 100) %"' "$out")"
    check_jq "$name: complete, one flow $dir" "$out" \
        '.partial == false and (.flows | length) == 1 and .flows[0].direction == $d' --arg d "$dir"
    check_jq "$name: udp.loss_pct between 40 and 60 (got $(jq .summary.udp.loss_pct "$out"))" "$out" \
        '.summary.udp.loss_pct >= 40 and .summary.udp.loss_pct <= 60'
    check_jq "$name: the sender kept its schedule: sent_pps within 5 % of $OFFERED_PPS (got $(jq .summary.udp.sent_pps "$out"))" \
        "$out" '.summary.udp.sent_pps >= $e * 0.95 and .summary.udp.sent_pps <= $e * 1.05' \
        --argjson e "$OFFERED_PPS"
    # tbf releases packets from a timer: on a busy 2-CPU VM it delivers up to ~12 % less than
    # its rate, so this is a sanity bound (the receiver is not the bottleneck, nothing extra)
    check_jq "$name: received payload within -25 %/+10 % of the $CARRIED_BPS bit/s the link carries (got $(jq .summary.throughput_bps "$out"))" \
        "$out" '.summary.throughput_bps >= $e * 0.75 and .summary.throughput_bps <= $e * 1.1' \
        --argjson e "$CARRIED_BPS"
    check_jq "$name: datagrams_lost = sent - received, loss_pct = 100 x lost / sent" "$out" \
        '.summary.udp | .datagrams_lost == .datagrams_sent - .datagrams_received
         and (.loss_pct - 100 * .datagrams_lost / .datagrams_sent | fabs) < 1e-9'
    check_jq "$name: no duplicates on a veth" "$out" '.summary.udp.duplicates == 0'
}

overload_run forward client_to_server
overload_run reverse server_to_client -R

check "daemon alive after both runs" alive "$SRV_PID"
finish
