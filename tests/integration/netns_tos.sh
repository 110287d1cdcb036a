#!/usr/bin/env bash
# netns_tos: what -S/--dscp, --dont-fragment and --bind-dev do to the packets, seen on the wire.
# In a namespace of its own (so nothing else is captured), a netrig daemon on 127.0.0.1 and ::1;
# tests/integration/pktcap.py counts the TOS byte (IPv6 traffic class) and the DF flag of every
# TCP and UDP packet with a payload, on lo, with an AF_PACKET socket:
#   -S 0x28 forward: the client's data packets carry 0x28 (IPv4 and IPv6);
#   --dscp EF -R: the daemon's data packets carry 0xb8 (the client's value, applied there);
#   an iperf3 client's -S: the daemon applies it to its own packets too;
#   UDP --dscp AF11 --dont-fragment: datagrams carry 0x28 and DF both ways;
#   load --classes rrul (IPv4, IPv6): BK 0x20, CS5 0xa0, EF 0xb8 on each class's TCP flow both
#     ways (the daemon marks its own) and on its UDP probe;
#   --bind-dev: lo reaches 127.0.0.1, a veth does not (and the error says where it was bound).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

need_netns
command -v python3 >/dev/null 2>&1 || skip "python3 is needed for the packet capture"
CAP=$(dirname "${BASH_SOURCE[0]}")/pktcap.py
new_netns tos
NS=$NETNS
ip -n "$NS" addr add ::1/128 dev lo 2>/dev/null || true
in_ns() { ip netns exec "$NS" "$@"; }

# (ip netns exec execs the command: $! is the daemon itself, which the cleanup can stop)
ip netns exec "$NS" "$NETRIG" serve -p 0 -v 2>"$T/serve.log" &
SRV_PID=$!
track_pid "$SRV_PID"
SRV_PORT=$(wait_for_port "$T/serve.log" "$SRV_PID")
log "daemon in $NS on port $SRV_PORT"

# capture NAME CMD...: runs CMD in the namespace while pktcap counts; the counts in $T/NAME.cap
capture() {
    local name=$1 pid rc=0
    shift
    ip netns exec "$NS" python3 "$CAP" lo "$SRV_PORT" "$T/$name.cap" >"$T/$name.ready" 2>"$T/$name.caperr" &
    pid=$!
    track_pid "$pid"
    for _ in $(seq 100); do # until it captures (bounded: 5 s)
        grep -q ready "$T/$name.ready" 2>/dev/null && break
        sleep 0.05
    done
    timeout 30 ip netns exec "$NS" "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" || true
    check "$name: the run exited 0 (got $rc: $(head -c 300 "$T/$name.err"))" test "$rc" -eq 0
    check "$name: the capture wrote its counts ($(head -c 200 "$T/$name.caperr"))" test -s "$T/$name.cap"
    log "$name: $(cat "$T/$name.cap" 2>/dev/null)"
}
# count NAME KEY: packets of that class ("tcp4 to 0x28", ...)
count() { jq --arg k "$2" '.classes[$k] // 0' "$T/$1.cap"; }
at_least() { [[ $(count "$1" "$2") -ge $3 ]]; }

C=(-c 127.0.0.1 -p "$SRV_PORT" --no-save -t 1)

capture fwd "$NETRIG" stream "${C[@]}" -S 0x28
check "-S 0x28: the client's data packets carry TOS 0x28 ($(count fwd 'tcp4 to 0x28'))" \
    at_least fwd "tcp4 to 0x28" 50
check "-S 0x28: none of its data packets carries 0" test "$(count fwd 'tcp4 to 0x00')" -le 5

capture rev "$NETRIG" stream "${C[@]}" --dscp EF -R
check "--dscp EF -R: the daemon's data packets carry 0xb8 ($(count rev 'tcp4 from 0xb8'))" \
    at_least rev "tcp4 from 0xb8" 50

capture v6 "$NETRIG" stream -c ::1 -p "$SRV_PORT" --no-save -t 1 -6 -S 0x28 --bidir
check "-6 -S 0x28 --bidir: traffic class 0x28 from the client ($(count v6 'tcp6 to 0x28'))" \
    at_least v6 "tcp6 to 0x28" 50
check "-6 -S 0x28 --bidir: and from the daemon ($(count v6 'tcp6 from 0x28'))" \
    at_least v6 "tcp6 from 0x28" 50

capture udp "$NETRIG" stream "${C[@]}" -u -b 20M --dscp AF11 --dont-fragment --bidir
check "UDP --dscp AF11 --bidir: datagrams carry 0x28 ($(count udp 'udp4 other 0x28'))" \
    at_least udp "udp4 other 0x28" 1000
check "UDP --dont-fragment: every datagram has DF set" \
    jq -e '.udp4_df >= 1000 and .udp4_no_df == 0' "$T/udp.cap" >/dev/null

# load --classes rrul: each class's mark on its TCP flow both ways and on its UDP probe (BE is
# 0x00, like the control connections and the TCP probe: not told apart here)
for fam in 4 6; do
    host=127.0.0.1
    [[ $fam == 6 ]] && host=::1
    capture "cls$fam" "$NETRIG" load -c "$host" -p "$SRV_PORT" -$fam --classes rrul --no-save \
        --baseline 0.3 -t 1 --recovery 0.3 --probe-rate 50
    for tos in 0x20 0xa0 0xb8; do
        check "load -$fam --classes rrul: client's flow with $tos ($(count "cls$fam" "tcp$fam to $tos"))" \
            at_least "cls$fam" "tcp$fam to $tos" 50
        check "load -$fam --classes rrul: the daemon's flow with $tos ($(count "cls$fam" "tcp$fam from $tos"))" \
            at_least "cls$fam" "tcp$fam from $tos" 50
        check "load -$fam --classes rrul: that class's UDP probe with $tos ($(count "cls$fam" "udp$fam other $tos"))" \
            at_least "cls$fam" "udp$fam other $tos" 20
    done
done

if command -v iperf3 >/dev/null 2>&1; then
    capture i3 iperf3 -c 127.0.0.1 -p "$SRV_PORT" -t 1 -S 0x20 -R
    check "iperf3 -S 0x20 -R: the daemon sends with TOS 0x20 ($(count i3 'tcp4 from 0x20'))" \
        at_least i3 "tcp4 from 0x20" 50
else
    log "iperf3 is not installed: its -S is not checked"
fi

# --bind-dev: through lo 127.0.0.1 answers; through a veth (up, with an address) it cannot
ip -n "$NS" link add "nrtv$$" type veth peer name "nrtw$$"
ip -n "$NS" addr add 10.251.0.1/24 dev "nrtv$$"
ip -n "$NS" link set "nrtv$$" up
ip -n "$NS" link set "nrtw$$" up
rc=0
in_ns "$NETRIG" stream "${C[@]}" --bind-dev lo >"$T/bd.out" 2>"$T/bd.err" || rc=$?
check "--bind-dev lo: exit 0 (got $rc: $(head -c 200 "$T/bd.err"))" test "$rc" -eq 0
rc=0
in_ns "$NETRIG" stream "${C[@]}" --bind-dev "nrtv$$" --timeout 1 >"$T/bd2.out" 2>"$T/bd2.err" || rc=$?
check "--bind-dev on a veth: 127.0.0.1 is not reached there, exit 1 (got $rc)" test "$rc" -eq 1
check "--bind-dev on a veth: the error names the interface ($(head -c 300 "$T/bd2.err"))" \
    grep -q "interface 'nrtv$$', --bind-dev" "$T/bd2.err"

finish
