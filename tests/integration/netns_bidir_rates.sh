#!/usr/bin/env bash
# netns_bidir_rates: --bidir with a rate each way (-b UP,DOWN) through a known bottleneck. Two
# namespaces joined by a veth pair shaped by tbf to 200 Mbit/s each way (1514-byte frames: TCP
# goodput 200 x 1448/1514 = 191.28 Mbit/s). The arithmetic:
#   TCP -b 40M,0: up paced to 40 Mbit/s of payload, down unpaced, so down fills the link:
#     up 40.00 and down 191.28 Mbit/s received, within 5 %.
#   UDP -b 30M,120M (1400-byte datagrams, 1442-byte frames: 120M of payload is 123.6 Mbit/s on
#     the wire, below the link): up 30 and down 120 Mbit/s received, within 5 %, and the
#     params record both rates.
# And where two rates do not apply they are refused (exit 2): without --bidir, with a UDP DOWN
# of 0, with --iperf3.
# Needs root, `ip netns`, veth and sch_tbf; exits 77 (skipped) without them.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

TOL=0.05
LINK=$(awk 'BEGIN { printf "%.0f", 200e6 * 1448 / 1514 }')

veth_pair 200M
NS_S=$VETH_NS_A
NS_C=$VETH_NS_B
SRV_LOG=$T/serve.log
ip netns exec "$NS_S" "$NETRIG" serve -p 0 -B "$VETH_A" 2>"$SRV_LOG" &
SRV_PID=$!
track_pid "$SRV_PID"
SRV_PORT=$(wait_for_port "$SRV_LOG" "$SRV_PID")

within() { # FILE JQ-PATH EXPECT NAME
    check_jq "$4: $2 within 5 % of $3 (got $(jq "$2" "$1"))" "$1" \
        "$2 >= \$e * (1 - \$t) and $2 <= \$e * (1 + \$t)" --argjson e "$3" --argjson t "$TOL"
}

run() { # NAME [options]
    local name=$1 rc=0
    shift
    ip netns exec "$NS_C" "$NETRIG" stream -c "$VETH_A" -p "$SRV_PORT" --bidir -t 3 -O 1 -J \
        --no-save "$@" >"$T/$name.json" 2>"$T/$name.err" || rc=$?
    [[ $rc -eq 0 ]] || fail "$name: exit status $rc ($(head -c 300 "$T/$name.err"))"
    log "$name: up $(jq '.summary.client_to_server_bps / 1e4 | round / 100' "$T/$name.json")," \
        "down $(jq '.summary.server_to_client_bps / 1e4 | round / 100' "$T/$name.json") Mbit/s"
}

run tcp -b 40M,0
within "$T/tcp.json" .summary.client_to_server_bps 40000000 "TCP -b 40M,0 up"
within "$T/tcp.json" .summary.server_to_client_bps "$LINK" "TCP -b 40M,0 down (the link)"
check_jq "TCP: params record UP 40M and DOWN 0" "$T/tcp.json" \
    '.params.app_rate_bps == 40000000 and .params.down_rate_bps == 0'

run udp -u -b 30M,120M
within "$T/udp.json" .summary.client_to_server_bps 30000000 "UDP -b 30M,120M up"
within "$T/udp.json" .summary.server_to_client_bps 120000000 "UDP -b 30M,120M down"
check_jq "UDP: params record UP 30M and DOWN 120M" "$T/udp.json" \
    '.params.udp_rate_bps == 30000000 and .params.down_rate_bps == 120000000'

refused() { # NAME WORDS [options]
    local name=$1 words=$2 rc=0
    shift 2
    ip netns exec "$NS_C" "$NETRIG" stream -c "$VETH_A" -p "$SRV_PORT" -t 1 --no-save "$@" \
        >/dev/null 2>"$T/$name.err" || rc=$?
    check "$name: refused with exit 2 (got $rc)" test "$rc" -eq 2
    check "$name: says '$words' ($(head -c 200 "$T/$name.err"))" grep -q -- "$words" "$T/$name.err"
}
refused nobidir "apply to --bidir only" -b 10M,20M
refused reverse "apply to --bidir only" -R -b 10M,20M
refused udpzero "sends nothing" -u --bidir -b 10M,0
refused iperf3 "iperf3 server sends at the one rate" --iperf3 --bidir -b 10M,20M

check "daemon alive after the runs" alive "$SRV_PID"
finish
