#!/usr/bin/env bash
# iperf3_compat: iperf3 wire compatibility on loopback, both ways, with Debian's iperf3.
#   netrig client -> iperf3 server: TCP -P 1/4, -R, --bidir, UDP (forward, reverse), -O -w -C -l;
#     totals within 3% of what `iperf3 -c` reports against the same server; busy server.
#   iperf3 client -> netrig daemon: the same shapes, -J checked with jq, --get-server-output,
#     several iperf3 clients at once (TCP and UDP), refusals an iperf3 client prints (SCTP,
#     --auth-file, --max-tests), and hostile openings (bad cookie, oversized parameters, a
#     stream arriving after its test started) that are logged while the daemon keeps serving.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

command -v iperf3 >/dev/null 2>&1 || skip "iperf3 is not installed (apt-get install iperf3)"
log "$(iperf3 --version | head -n1)"

# within PCT A B: |A/B - 1| <= PCT/100
within() { awk -v a="$2" -v b="$3" -v p="$1" 'BEGIN { exit !(b > 0 && (a / b - 1) ^ 2 <= (p / 100) ^ 2) }'; }

# run NAME CMD...: runs CMD (bounded) with stdout in $T/NAME.json, stderr in $T/NAME.err; RC
run() {
    local name=$1
    shift
    RC=0
    timeout 60 "$@" >"$T/$name.json" 2>"$T/$name.err" || RC=$?
}

ok() { # NAME: exit status 0
    check "$1: exit status 0 (got $RC; stderr: $(head -c 300 "$T/$1.err"))" test "$RC" -eq 0
}

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

# ================================================================ iperf3 client, netrig daemon
start_server
log "netrig daemon pid $SRV_PID port $SRV_PORT"

ic() { # NAME ARGS...: iperf3 -c against the netrig daemon, -J
    local name=$1
    shift
    run "$name" iperf3 -c 127.0.0.1 -p "$SRV_PORT" -J "$@"
    ok "$name"
    check_jq "$name: no error in iperf3's JSON" "$T/$name.json" '.error == null'
}

ic c_tcp1 -t 2 --get-server-output
check_jq "c_tcp1: received and sent > 0, sender and receiver agree (1%)" "$T/c_tcp1.json" \
    '.end.sum_received.bits_per_second > 0 and .end.sum_sent.bits_per_second > 0 and
     (.end.sum_received.bytes / .end.sum_sent.bytes - 1 | fabs) < 0.01'
check_jq "c_tcp1: --get-server-output brought our side" "$T/c_tcp1.json" \
    '(.server_output_text | test("netrig")) and (.server_output_text | test("receiver"))'
ic c_tcp4 -t 2 -P 4
check_jq "c_tcp4: four streams, all received" "$T/c_tcp4.json" \
    '(.end.streams | length) == 4 and all(.end.streams[]; .receiver.bytes > 0) and
     .end.sum_received.bits_per_second > 0'
ic c_rev -t 2 -R
check_jq "c_rev: the daemon sent, retransmits reported" "$T/c_rev.json" \
    '.end.sum_received.bits_per_second > 0 and (.end.sum_sent.retransmits | type) == "number"'
ic c_bidir -t 2 --bidir -P 2
check_jq "c_bidir: both directions" "$T/c_bidir.json" \
    '.end.sum_received.bits_per_second > 0 and .end.sum_received_bidir_reverse.bits_per_second > 0'
ic c_udp -t 2 -u -b 100M
log "c_udp: $(jq -c '.end.sum | {bits_per_second, lost_percent, packets}' "$T/c_udp.json")"
check_jq "c_udp: 100 Mbit/s (+-5%), the daemon counted datagrams" "$T/c_udp.json" \
    '(.end.sum.bits_per_second / 100e6 - 1 | fabs) < 0.05 and .end.sum.lost_percent < 30 and
     .end.sum.packets > 0 and .end.sum_received.bytes > 0'
ic c_udp_bidir -t 2 -u -b 20M --bidir -P 2
check_jq "c_udp_bidir: both directions" "$T/c_udp_bidir.json" \
    '.end.sum_received.bits_per_second > 0 and .end.sum_received_bidir_reverse.bits_per_second > 0'
ic c_udp_rev64 -t 2 -u -b 20M -R --udp-counters-64bit
check_jq "c_udp_rev64: 64-bit counters, the daemon sent" "$T/c_udp_rev64.json" \
    '.end.sum.bits_per_second > 0 and .end.sum.lost_percent < 30 and .end.sum.packets > 0'
run c_text iperf3 -c 127.0.0.1 -p "$SRV_PORT" -t 1 --get-server-output
ok c_text
check "c_text: iperf3 printed our output" grep -q 'Server output:' "$T/c_text.json"

# several iperf3 clients at once (iperf3's own server takes one)
log_lines=$(wc -l <"$SRV_LOG")
pids=()
for n in 1 2 3; do
    args=(-t 3)
    [[ $n == 3 ]] && args=(-t 3 -u -b 30M)
    run "conc$n" iperf3 -c 127.0.0.1 -p "$SRV_PORT" -J "${args[@]}" &
    pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || true; done
for n in 1 2 3; do
    check_jq "concurrent client $n completed" "$T/conc$n.json" \
        '.error == null and .end.sum_received.bits_per_second > 0'
done
tail -n +$((log_lines + 1)) "$SRV_LOG" >"$T/conc.log"
check "concurrent clients: all three ran before any finished" \
    awk '/iperf3 test .* from .*: (tcp|udp),/ {s++} /iperf3 test .* done:/ {if (!d++) first = s}
         END {exit !(first >= 3)}' "$T/conc.log"

# refusals an iperf3 client prints
run r_sctp iperf3 -c 127.0.0.1 -p "$SRV_PORT" -t 1 --sctp
check "--sctp: refused (exit $RC) with iperf3's SCTP message" grep -q 'no SCTP support' "$T/r_sctp.err"
check "refusals logged with the reason" grep -q 'refused: SCTP' "$SRV_LOG"

# hostile openings, by hand
cookie=abcdefghijklmnopqrstuvwxyz234567abcd
be32() { printf "\\x$(printf %02x $(($1 >> 24 & 255)))\\x$(printf %02x $(($1 >> 16 & 255)))\\x$(printf %02x $(($1 >> 8 & 255)))\\x$(printf %02x $(($1 & 255)))"; }
byte() { timeout 5 dd bs=1 count=1 status=none <&"$1" | od -An -tx1 | tr -d ' '; }
exec {h}<>"/dev/tcp/127.0.0.1/$SRV_PORT"
printf '%s\0' "${cookie:0:30}AAAAAA" >&"$h" # outside the alphabet
sleep 0.3
exec {h}>&-
exec {h}<>"/dev/tcp/127.0.0.1/$SRV_PORT"
printf '%s\0' "$cookie" >&"$h"
check "oversized params: PARAM_EXCHANGE first" test "$(byte "$h")" = 09
be32 4294967295 >&"$h"
check "oversized params: SERVER_ERROR" test "$(byte "$h")" = fe
exec {h}>&-
check "bad cookie logged" grep -q 'malformed iperf3 cookie' "$SRV_LOG"
check "oversized params logged" grep -q 'outside 1 to 65536' "$SRV_LOG"

# a stream that arrives after its test has all its streams is refused with ACCESS_DENIED
c2=bbcdefghijklmnopqrstuvwxyz234567abcd
params='{"tcp":true,"time":2,"parallel":1,"len":1024}'
exec {ctl}<>"/dev/tcp/127.0.0.1/$SRV_PORT"
printf '%s\0' "$c2" >&"$ctl"
check "late stream: PARAM_EXCHANGE" test "$(byte "$ctl")" = 09
{ be32 ${#params}; printf '%s' "$params"; } >&"$ctl"
check "late stream: CREATE_STREAMS" test "$(byte "$ctl")" = 0a
exec {s1}<>"/dev/tcp/127.0.0.1/$SRV_PORT"
printf '%s\0' "$c2" >&"$s1"
check "late stream: TEST_START" test "$(byte "$ctl")" = 01
check "late stream: TEST_RUNNING" test "$(byte "$ctl")" = 02
exec {s2}<>"/dev/tcp/127.0.0.1/$SRV_PORT"
printf '%s\0' "$c2" >&"$s2"
check "late stream: refused with ACCESS_DENIED" test "$(byte "$s2")" = ff
printf '\x0c' >&"$ctl" # CLIENT_TERMINATE
exec {s2}>&- {s1}>&- {ctl}>&-
sleep 0.3
check "late stream logged" grep -q 'not accepting streams' "$SRV_LOG"
check "client terminate logged" grep -q 'terminated the test' "$SRV_LOG"

ic after -t 1
check "daemon alive after the hostile openings" alive "$SRV_PID"

# --max-tests 1: a second iperf3 client is told the server is busy
start_server --max-tests 1
run m_holder iperf3 -c 127.0.0.1 -p "$SRV_PORT" -t 3 &
holder=$!
sleep 0.7
run m_busy iperf3 -c 127.0.0.1 -p "$SRV_PORT" -t 1
check "--max-tests 1: iperf3 says the server is busy" grep -q 'busy' "$T/m_busy.err"
wait "$holder" || true
check "--max-tests 1: the first test completed" grep -q 'receiver' "$T/m_holder.json"

# serve --db: a test from an iperf3 client lands in the history like a native one
start_server --db "$T/history.db"
ic h_run -t 1 -P 2
for _ in $(seq 50); do grep -q 'saved as run' "$SRV_LOG" && break; sleep 0.1; done
check "--db: the daemon saved the iperf3 test" grep -q 'iperf3 test .* saved as run' "$SRV_LOG"
if command -v sqlite3 >/dev/null 2>&1; then
    check "--db: one server-side run in the history" test \
        "$(sqlite3 "$T/history.db" "SELECT count(*) FROM runs WHERE role = 'server'")" = 1
fi

# --auth-file: iperf3 clients cannot authenticate, and are told so
printf 'alice s3cret\n' >"$T/auth"
chmod 600 "$T/auth"
start_server --auth-file "$T/auth"
run a_refused iperf3 -c 127.0.0.1 -p "$SRV_PORT" -t 1
check "--auth-file: iperf3 prints 'test authorization failed'" \
    grep -q 'authorization failed' "$T/a_refused.err"

finish
