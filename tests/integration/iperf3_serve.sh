#!/usr/bin/env bash
# iperf3_serve: Debian's iperf3 client against the netrig daemon on loopback (the other half of
# iperf3_compat, which judges rates and runs alone; nothing here judges a rate, so it runs beside
# other tests): TCP -P 1/4, -R, --bidir, UDP (forward, bidir, reverse with 64-bit counters), -J
# checked with jq, --get-server-output, several iperf3 clients at once (TCP and UDP), refusals an
# iperf3 client prints (SCTP, --auth-file, --max-tests), and hostile openings (bad cookie,
# oversized parameters, a stream arriving after its test started) that are logged while the
# daemon keeps serving; a test from an iperf3 client lands in --db's history.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/iperf3_lib.sh"

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
wait_until 10 "the daemon to log the bad cookie" grep -q 'malformed iperf3 cookie' "$SRV_LOG" || true
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
wait_until 10 "the daemon to log the terminated test" grep -q 'terminated the test' "$SRV_LOG" || true
check "late stream logged" grep -q 'not accepting streams' "$SRV_LOG"
check "client terminate logged" grep -q 'terminated the test' "$SRV_LOG"

ic after -t 1
check "daemon alive after the hostile openings" alive "$SRV_PID"

# --max-tests 1: a second iperf3 client is told the server is busy
start_server --max-tests 1
run m_holder iperf3 -c 127.0.0.1 -p "$SRV_PORT" -t 3 &
holder=$!
# its test runs once its control and data connections are established
wait_until 10 "the holder's connections to the daemon" conns_at "$SRV_PORT" 2 || true
run m_busy iperf3 -c 127.0.0.1 -p "$SRV_PORT" -t 1
check "--max-tests 1: iperf3 says the server is busy" grep -q 'busy' "$T/m_busy.err"
wait "$holder" || true
check "--max-tests 1: the first test completed" grep -q 'receiver' "$T/m_holder.json"

# serve --db: a test from an iperf3 client lands in the history like a native one
start_server --db "$T/history.db"
ic h_run -t 1 -P 2
wait_until 10 "the daemon to save the test" grep -q 'saved as run' "$SRV_LOG" || true
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
