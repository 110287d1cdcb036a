#!/usr/bin/env bash
# flent_side_by_side: netrig load and flent's rrul_be on the same shaped path, each against the
# queues' ground truth. Two namespaces joined by a veth pair, each egress shaped by tbf to
# 100 Mbit/s with a 250,000-byte queue (at most 20 ms each way), reno both ends. While each tool
# runs, `tc -s qdisc` is read on both ends every 100 ms; the truth is the mean of both backlogs
# x 8 / rate over the tool's loaded span. flent (with netperf's netserver in the far namespace)
# runs rrul_be: 4 TCP flows each way and ICMP ping (asked every 50 ms; flent 2.1.1 pings 5 a
# second); its increase is the median ping
# loaded (from 1 s into the load to its end) minus the median idle (the delay before the load).
# netrig load -P 4 -C reno gives latency_increase.p50_us over its own loaded phase. Each must be
# within 20 % of its own truth; both are logged side by side.
# Skipped (77) without flent (Debian main) or netperf/netserver (Debian's non-free component:
# absent from CI unless installed by hand), and without root, netns, veth or tbf.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

command -v flent >/dev/null 2>&1 || skip "needs flent (apt-get install flent)"
command -v netperf >/dev/null 2>&1 && command -v netserver >/dev/null 2>&1 ||
    skip "needs netperf and netserver (Debian non-free: apt-get install netperf)"
command -v ping >/dev/null 2>&1 || skip "needs ping (flent's ICMP latency)"

RATE_MBIT=100 LIMIT=250000
veth_pair
NS_S=$VETH_NS_A
NS_C=$VETH_NS_B
for end in "$NS_S $VETH_DEV_A" "$NS_C $VETH_DEV_B"; do
    read -r ns dev <<<"$end"
    ip netns exec "$ns" tc qdisc add dev "$dev" root tbf rate ${RATE_MBIT}mbit burst 16kb \
        limit $LIMIT 2>"$T/tc.err" || skip "cannot add a tbf qdisc: $(cat "$T/tc.err")"
    ip netns exec "$ns" sysctl -qw net.ipv4.tcp_congestion_control=reno
done

ip netns exec "$NS_S" "$NETRIG" serve -p 0 -B "$VETH_A" 2>"$T/serve.log" &
track_pid $!
SRV_PORT=$(wait_for_port "$T/serve.log" $!)
ip netns exec "$NS_S" netserver -D -L "$VETH_A" >"$T/netserver.log" 2>&1 &
track_pid $!
wait_until 5 "netserver listening" bash -c \
    "ip netns exec $NS_S ss -ltn 2>/dev/null | grep -q ':12865 '"

backlog_sampler "$NS_C" "$VETH_DEV_B" "$T/up.log"
backlog_sampler "$NS_S" "$VETH_DEV_A" "$T/down.log"
truth() { # FROM TO (unix s): "MS N", both queues' mean delay over [FROM, TO)
    awk -v f="$1" -v e="$2" -v r=$RATE_MBIT '$1 >= f && $1 < e { s += $2; n++ }
        END { printf "%.3f %d\n", n ? s / n * 8 / (r * 1e6) * 1e3 : 0, n }' "$3"
}
truth_both() {
    local a b
    read -r a na < <(truth "$1" "$2" "$T/up.log")
    read -r b nb < <(truth "$1" "$2" "$T/down.log")
    awk -v a="$a" -v b="$b" -v na="$na" -v nb="$nb" 'BEGIN { printf "%.3f %d\n", a + b, na < nb ? na : nb }'
}
close() { # NAME REPORTED TRUTH
    check "$1: +$2 ms within 20 % of the queues' $3 ms" \
        awk -v a="$2" -v b="$3" 'BEGIN { exit !(b > 0 && a >= 0.8 * b && a <= 1.2 * b) }'
}

# flent rrul_be: 2 s idle, 5 s loaded, 2 s after
rc=0
(cd "$T" && ip netns exec "$NS_C" flent rrul_be -H "$VETH_A" -l 5 -d 2 -s 0.05 -D "$T" \
    -t side >"$T/flent.out" 2>&1) || rc=$?
[[ $rc -eq 0 ]] || fail "flent: exit status $rc ($(tail -c 400 "$T/flent.out"))"
FLENT_FILE=$(ls "$T"/rrul_be-*.flent.gz 2>/dev/null | head -1)
[[ -n $FLENT_FILE ]] || fail "flent wrote no data file ($(tail -c 300 "$T/flent.out"))"
read -r F_INC F_FROM F_TO F_N < <(/usr/bin/python3 - "$FLENT_FILE" <<'PY'
import gzip, json, statistics, sys
d = json.load(gzip.open(sys.argv[1]))
delay, length = 2.0, 5.0
# each ping's Unix time; the first went out at the test's start
ping = [(p["t"], p["val"]) for p in d["raw_values"]["Ping (ms) ICMP"] if p.get("val") is not None]
start = ping[0][0] if ping else 0
idle = [v for t, v in ping if t < start + delay]
busy = [v for t, v in ping if start + delay + 1 <= t < start + delay + length]
inc = statistics.median(busy) - statistics.median(idle) if idle and busy else -1
print("%.3f %.3f %.3f %d" % (inc, start + delay + 1, start + delay + length, len(busy)))
PY
)
read -r F_GT F_GTN < <(truth_both "$F_FROM" "$F_TO")

# netrig load on the same path
rc=0
ip netns exec "$NS_C" "$NETRIG" load -c "$VETH_A" -p "$SRV_PORT" --baseline 2 -t 5 --recovery 1 \
    -P 4 -C reno -J --no-save >"$T/load.json" 2>"$T/load.err" || rc=$?
backlog_samplers_stop
[[ $rc -eq 0 ]] || fail "netrig load: exit status $rc ($(head -c 300 "$T/load.err"))"
N_INC=$(jq '.latency_increase.p50_us / 1000' "$T/load.json")
N_FROM=$(jq '.start_unix_s + .phases[1].from_s' "$T/load.json")
N_TO=$(jq '.start_unix_s + .phases[1].end_s' "$T/load.json")
read -r N_GT N_GTN < <(truth_both "$N_FROM" "$N_TO")

log "flent rrul_be: +$F_INC ms ($F_N pings), its queues held $F_GT ms ($F_GTN samples)"
log "netrig load:   +$N_INC ms, its queues held $N_GT ms ($N_GTN samples)"
check "flent: enough pings and qdisc samples ($F_N, $F_GTN)" test "$F_N" -ge 15 -a "$F_GTN" -ge 20
check "netrig: enough qdisc samples ($N_GTN)" test "$N_GTN" -ge 20
close "flent rrul_be" "$F_INC" "$F_GT"
close "netrig load" "$N_INC" "$N_GT"
finish
