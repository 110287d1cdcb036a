#!/usr/bin/env bash
# iperf3_rates: netrig's client against Debian's iperf3 server on loopback, the rates: UDP sent
# at the asked rate (forward, reverse), and TCP and UDP totals within 3% of what `iperf3 -c`
# reports against the same server. It judges rates, so it runs alone; the wire checks without
# a rate are iperf3_compat.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/iperf3_lib.sh"

# within PCT A B: |A/B - 1| <= PCT/100
within() { awk -v a="$2" -v b="$3" -v p="$1" 'BEGIN { exit !(b > 0 && (a / b - 1) ^ 2 <= (p / 100) ^ 2) }'; }

start_tool_server "$T/iperf3-s.log" iperf3 -s -p PORT || fail "iperf3 -s did not listen"
I3_PORT=$TOOL_PORT

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

finish
