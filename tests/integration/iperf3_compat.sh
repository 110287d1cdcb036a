#!/usr/bin/env bash
# iperf3_compat: netrig's client against Debian's iperf3 server on loopback: TCP -P 1/4, -R,
# --bidir, UDP (forward, reverse), -O -w -C -l; totals within 3% of what `iperf3 -c` reports
# against the same server (rates: it runs alone); a busy iperf3 server says so. The other way,
# iperf3 clients against the netrig daemon, is iperf3_serve.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/iperf3_lib.sh"

# within PCT A B: |A/B - 1| <= PCT/100
within() { awk -v a="$2" -v b="$3" -v p="$1" 'BEGIN { exit !(b > 0 && (a / b - 1) ^ 2 <= (p / 100) ^ 2) }'; }

# ================================================================ netrig client, iperf3 server
start_tool_server "$T/iperf3-s.log" iperf3 -s -p PORT || fail "iperf3 -s did not listen"
I3_PORT=$TOOL_PORT

nr() { # NAME ARGS...: netrig stream --iperf3 against the iperf3 server, -J
    local name=$1
    shift
    run "$name" "$NETRIG" stream --iperf3 -c 127.0.0.1 -p "$I3_PORT" --no-save -J "$@"
    ok "$name"
}

nr tcp1 -t 2
check_jq "tcp1: complete, the server's receive figures in" "$T/tcp1.json" \
    '.partial == false and .server_version == "iperf3" and (.flows | length) == 1 and
     .summary.throughput_bps > 0 and .summary.bytes > 0 and .flows[0].bytes > 0'
# the text report: the server's cost and per-interval receive figures are unknown, and says so
run txt "$NETRIG" stream --iperf3 -c 127.0.0.1 -p "$I3_PORT" --no-save -t 1 -i 1
ok txt
check "txt: the server's cost is '-' (not measured), not 0.00 ($(grep '^Cost' "$T/txt.json"))" \
    grep -q '^Cost .*, - server (not measured)' "$T/txt.json"
check "txt: says the receiver's intervals are not known" \
    grep -q '^Intervals   the lines above are what the sender wrote; the receiver' "$T/txt.json"
nr tcp4 -t 2 -P 4
check_jq "tcp4: four flows, each moved data" "$T/tcp4.json" \
    '.partial == false and (.flows | length) == 4 and all(.flows[]; .bytes > 0)'
nr rev -t 2 -R -P 2
check_jq "rev: the server sent, we received" "$T/rev.json" \
    '.partial == false and .summary.server_to_client_bps > 0 and .summary.client_to_server_bps == 0'
nr bidir -t 2 --bidir
check_jq "bidir: both directions moved data" "$T/bidir.json" \
    '.partial == false and (.flows | length) == 2 and .summary.server_to_client_bps > 0 and
     .summary.client_to_server_bps > 0'
# (UDP on a loaded 2-CPU loopback loses datagrams now and then, iperf3 to iperf3 as well:
# rates are checked at the sender, and what arrived only loosely)
nr udp -t 2 -u -b 50M
check_jq "udp: sent at 50 Mbit/s (+-5%), the server counted datagrams" "$T/udp.json" \
    '.partial == false and .summary.udp.datagrams_received > 0 and
     (.summary.sender_throughput_bps / 50e6 - 1 | fabs) < 0.05 and .summary.udp.loss_pct < 30'
nr udp_rev -t 2 -u -b 30M -R -P 2
check_jq "udp -R -P 2: the server sent 60 Mbit/s (+-5%), datagrams arrived here" "$T/udp_rev.json" \
    '.partial == false and (.summary.sender_throughput_bps / 60e6 - 1 | fabs) < 0.05 and
     .summary.udp.datagrams_received > 0 and .summary.udp.loss_pct < 30'
nr opts -t 2 -O 1 -w 512K -C cubic -l 64K
check_jq "-O -w -C -l: complete, cubic used" "$T/opts.json" \
    '.partial == false and .summary.congestion == "cubic" and .summary.throughput_bps > 0'

# the same server, measured by iperf3 itself and by us: paced, so both runs are comparable
run ref_tcp iperf3 -c 127.0.0.1 -p "$I3_PORT" -t 3 -P 2 --fq-rate 400M -J
ok ref_tcp
nr ours_tcp -t 3 -P 2 --fq-rate 400M
ref=$(jq '.end.sum_received.bits_per_second' "$T/ref_tcp.json")
ours=$(jq '.summary.throughput_bps' "$T/ours_tcp.json")
check "TCP total within 3% of iperf3's (ours $ours, iperf3 $ref)" within 3 "$ours" "$ref"
run ref_udp iperf3 -c 127.0.0.1 -p "$I3_PORT" -t 3 -u -b 50M -l 1400 -J
ok ref_udp
nr ours_udp -t 3 -u -b 50M -l 1400
ref=$(jq '.end.sum.bits_per_second' "$T/ref_udp.json")
ours=$(jq '.summary.sender_throughput_bps' "$T/ours_udp.json")
check "UDP sent total within 3% of iperf3's (ours $ours, iperf3 $ref)" within 3 "$ours" "$ref"
# what the server received: iperf3's figure less its loss, ours as measured; 3% plus the loss
# (iperf3's loss L makes its figure (1 - L) of the rate: ours may be 1 / (1 - L) - 1 above it)
ref=$(jq '.end.sum.bits_per_second * (1 - .end.sum.lost_percent / 100)' "$T/ref_udp.json")
ours=$(jq '.summary.throughput_bps' "$T/ours_udp.json")
slack=$(jq -n --slurpfile a "$T/ref_udp.json" --slurpfile b "$T/ours_udp.json" \
    '$a[0].end.sum.lost_percent as $l | 3 + 100 * $l / (100 - ([$l, 99] | min)) +
     $b[0].summary.udp.loss_pct')
check "UDP received total within $slack% of iperf3's (ours $ours, iperf3 $ref)" \
    within "$slack" "$ours" "$ref"

# a busy iperf3 server says so
run busy_holder iperf3 -c 127.0.0.1 -p "$I3_PORT" -t 3 &
holder=$!
# the holder's test is running: its control and data connections are established
wait_until 10 "the holder's connections to iperf3" conns_at "$I3_PORT" 2 || true
run busy "$NETRIG" stream --iperf3 -c 127.0.0.1 -p "$I3_PORT" --no-save -t 1
check "busy iperf3 server: exit 1 (got $RC)" test "$RC" -eq 1
check "busy iperf3 server: says busy ($(head -c 200 "$T/busy.err"))" grep -q 'busy' "$T/busy.err"
check "busy iperf3 server: one line on stderr" one_line "$T/busy.err"
wait "$holder" || true
run frac "$NETRIG" stream --iperf3 -c 127.0.0.1 -p "$I3_PORT" -t 1.5
check "--iperf3 -t 1.5: usage error (got $RC)" test "$RC" -eq 2
check "--iperf3 -t 1.5: says whole seconds" grep -q 'whole seconds' "$T/frac.err"

finish
