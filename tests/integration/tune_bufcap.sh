#!/usr/bin/env bash
# tune_bufcap: the socket-buffer model netrig audit and tune state ("a tcp_rmem max of X gives
# a window of A-B, which caps one flow at C-D") against this kernel (issue 14).
#  1. Two namespaces joined by a veth: the receiver's tcp_rmem max at 437000; the largest
#     window the sender sees during a stream (ss snd_wnd) lies in the range the audit states,
#     and well below the buffer itself (the old claim).
#  2. With the WAN emulator (lib.sh's `path`, tests/tools/wanem; skipped where it is not
#     there): a window-limited and a send-buffer-limited stream over 40 ms each run at a rate
#     inside the range the audit gives for that buffer, and below buffer x 8 / RTT.
# Needs root and ip netns; exits 77 without them. Nothing changes on the host: every sysctl is
# set inside the test's namespaces, which the EXIT trap removes.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

[[ $(id -u) -eq 0 ]] || skip "needs root for network namespaces"
command -v ip >/dev/null 2>&1 || skip "needs ip (iproute2)"
command -v ss >/dev/null 2>&1 || skip "needs ss (iproute2)"

NET=10.236.$((20 + $$ % 200))
NS_R=nrtb-r-$$
NS_S=nrtb-s-$$
RMEM=437000

on_exit "ip netns del $NS_R; ip netns del $NS_S"
ip netns add "$NS_R" 2>"$T/ns.err" || skip "cannot create a network namespace: $(cat "$T/ns.err")"
ip netns add "$NS_S"
ip link add name bc-r netns "$NS_R" type veth peer name bc-s netns "$NS_S" 2>"$T/veth.err" ||
    skip "cannot create a veth pair: $(cat "$T/veth.err")"
ip -n "$NS_R" addr add "$NET.1/24" dev bc-r
ip -n "$NS_S" addr add "$NET.2/24" dev bc-s
ip -n "$NS_R" link set bc-r up
ip -n "$NS_S" link set bc-s up

# range FILE ID WHAT UNIT: "LO HI" from the finding's reason ("a window of 213.4-396.9 KiB"),
# scaled to base units (KiB -> bytes, Mbit/s -> bit/s)
range() {
    jq -r --arg id "$2" --arg re "$3 (?<lo>[0-9.]+)(-(?<hi>[0-9.]+))? $4" --argjson k "$5" \
        '.findings[] | select(.id == $id) | .reason | capture($re) |
         "\(.lo | tonumber * $k) \((.hi // .lo) | tonumber * $k)"' "$1"
}

# ---- 1. the window on a veth ----------------------------------------------------------------
ip netns exec "$NS_R" sysctl -qw net.ipv4.tcp_rmem="4096 131072 $RMEM"
ip netns exec "$NS_R" "$NETRIG" audit --rate 1G --rtt 40ms -J >"$T/audit_r.json" || true
read -r WLO WHI < <(range "$T/audit_r.json" sysctl.tcp_rmem_max "a window of" KiB 1024)
log "the audit says a tcp_rmem max of $RMEM opens a window of $WLO-$WHI bytes"
check "the audit states a window below the buffer ($WLO-$WHI)" \
    awk -v l="$WLO" -v h="$WHI" -v b="$RMEM" 'BEGIN { exit !(l > 0 && l < h && h < b) }'

ip netns exec "$NS_R" "$NETRIG" serve -p 0 -B "$NET.1" 2>"$T/serve.log" &
SRV_PID=$!
track_pid "$SRV_PID"
SRV_PORT=$(wait_for_port "$T/serve.log" "$SRV_PID")
ip netns exec "$NS_S" "$NETRIG" stream -c "$NET.1" -p "$SRV_PORT" -t 2 --no-save \
    >/dev/null 2>"$T/stream1.err" &
CPID=$!
track_pid "$CPID"
# the receiver's window as the sender sees it, 20 times in its 2 s (one shell in the namespace)
MAXW=$(ip netns exec "$NS_S" bash -c 'sleep 0.3; for _ in $(seq 20); do
        ss -Htin dst "$1" 2>/dev/null | grep -o "snd_wnd:[0-9]*" | cut -d: -f2; sleep 0.02
    done' sample "$NET.1:$SRV_PORT" | sort -n | tail -n1)
MAXW=${MAXW:-0}
wait "$CPID" || fail "the stream over the veth failed: $(head -c 300 "$T/stream1.err")"
log "largest window the sender saw: $MAXW bytes (buffer $RMEM)"
check "the window the kernel offered ($MAXW) lies in the audit's range $WLO-$WHI" \
    awk -v w="$MAXW" -v l="$WLO" -v h="$WHI" 'BEGIN { exit !(w >= l && w <= h) }'
kill -TERM "$SRV_PID" 2>/dev/null || true
wait "$SRV_PID" 2>/dev/null || true

# ---- 2. measured window- and send-buffer-limited runs over 40 ms ----------------------------
if ! declare -F path >/dev/null || ! path 40ms 1G 2>"$T/path.err"; then
    log "no WAN emulator here ($(head -c 200 "$T/path.err" 2>/dev/null || echo 'lib.sh has no path')):" \
        "the rate checks over 40 ms are skipped"
    finish
fi

# rate NAME: a 9 s stream from A to B (the first 3 s omitted: slow start), its goodput
rate() {
    ip netns exec "$PATH_NS_B" "$NETRIG" serve -p 0 -B "$PATH_B" 2>"$T/serve.$1.log" &
    local spid=$! port
    track_pid "$spid"
    port=$(wait_for_port "$T/serve.$1.log" "$spid")
    ip netns exec "$PATH_NS_A" "$NETRIG" stream -c "$PATH_B" -p "$port" -t 9 -O 3 -J --no-save \
        >"$T/$1.json" 2>"$T/$1.err" || fail "$1: the stream failed: $(head -c 300 "$T/$1.err")"
    kill -TERM "$spid" 2>/dev/null || true
    wait "$spid" 2>/dev/null || true
    jq '.summary.throughput_bps // 0' "$T/$1.json"
}

# the receiver's window: tcp_rmem max 437000 in B
ip netns exec "$PATH_NS_B" sysctl -qw net.ipv4.tcp_rmem="4096 131072 $RMEM"
ip netns exec "$PATH_NS_B" "$NETRIG" audit --rate 1G --rtt 40ms -J >"$T/audit_b.json" || true
read -r RLO RHI < <(range "$T/audit_b.json" sysctl.tcp_rmem_max "caps one flow at" Mbit/s 1e6)
BPS=$(rate rwnd)
log "tcp_rmem max $RMEM over 40 ms: $BPS bit/s measured; the audit says $RLO-$RHI"
check "window-limited run: $BPS bit/s inside the audit's $RLO-$RHI" \
    awk -v r="$BPS" -v l="$RLO" -v h="$RHI" 'BEGIN { exit !(r >= 0.95 * l && r <= 1.02 * h) }'
check "... and below the buffer x 8 / RTT the old model claimed" \
    awk -v r="$BPS" -v b="$RMEM" 'BEGIN { exit !(r < b * 8 / 0.040) }'

# the sender's buffer: tcp_wmem max 4 MiB in A, the receiver's window out of the way
WMEM=4194304
ip netns exec "$PATH_NS_B" sysctl -qw net.ipv4.tcp_rmem="4096 131072 33554432"
ip netns exec "$PATH_NS_A" sysctl -qw net.ipv4.tcp_wmem="4096 16384 $WMEM"
ip netns exec "$PATH_NS_A" "$NETRIG" audit --rate 1G --rtt 40ms -J >"$T/audit_a.json" || true
read -r SLO SHI < <(range "$T/audit_a.json" sysctl.tcp_wmem_max "which caps one flow at" Mbit/s 1e6)
BPS=$(rate sndbuf)
log "tcp_wmem max $WMEM over 40 ms: $BPS bit/s measured; the audit says $SLO-$SHI"
check "send-buffer-limited run: $BPS bit/s inside the audit's $SLO-$SHI" \
    awk -v r="$BPS" -v l="$SLO" -v h="$SHI" 'BEGIN { exit !(r >= 0.95 * l && r <= 1.02 * h) }'
finish
