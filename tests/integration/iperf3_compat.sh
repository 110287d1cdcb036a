#!/usr/bin/env bash
# iperf3_compat: netrig's client against Debian's iperf3 server on loopback: TCP -P 1/4, -R,
# --bidir, -O -w -C -l, the text report's unknown server figures; a busy iperf3 server says so.
# No rate is judged, so it shares the machine: the rates (UDP pacing, totals against iperf3's
# own) are iperf3_rates, which runs alone. The other way, iperf3 clients against the netrig
# daemon, is iperf3_serve.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/iperf3_lib.sh"

# ================================================================ netrig client, iperf3 server
start_tool_server "$T/iperf3-s.log" iperf3 -s -p PORT || fail "iperf3 -s did not listen"
I3_PORT=$TOOL_PORT

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
nr opts -t 2 -O 1 -w 512K -C cubic -l 64K
check_jq "-O -w -C -l: complete, cubic used" "$T/opts.json" \
    '.partial == false and .summary.congestion == "cubic" and .summary.throughput_bps > 0'

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
