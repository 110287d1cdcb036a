#!/usr/bin/env bash
# The daemon's access control and limits: each check would fail without its feature.
#   --auth-file: right secret accepted, wrong one / none / unknown user refused
#   --allow/--deny: refused addresses get no test, allowed ones do
#   --max-duration, --max-flows, --max-client-tests, --max-rate (TCP paced, UDP refused)
#   --timeout: a client that sends nothing is dropped within the bound
#   SIGHUP: the log is reopened and the daemon keeps serving
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

run() { "$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -i 0 "$@"; }

# ---- authentication
printf 'alice s3cret\nbob b0b\n' >"$T/auth"
chmod 600 "$T/auth"
start_server --auth-file "$T/auth"
check "right secret accepted" bash -c "NETRIG_SECRET=s3cret '$NETRIG' stream -c 127.0.0.1 -p $SRV_PORT -t 0.3 -i 0 --user alice >/dev/null"
out=$(NETRIG_SECRET=wrong "$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -t 0.3 --user alice 2>&1 >/dev/null || true)
check "wrong secret refused ($out)" grep -q "authentication failed for user 'alice'" <<<"$out"
out=$(run -t 0.3 2>&1 >/dev/null || true)
check "no user refused ($out)" grep -q "requires authentication" <<<"$out"
out=$(NETRIG_SECRET=x "$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -t 0.3 --user mallory 2>&1 >/dev/null || true)
check "unknown user refused ($out)" grep -q "authentication failed" <<<"$out"
printf 'bob b0b\n' >"$T/creds"
chmod 600 "$T/creds"
check "credentials file accepted" bash -c "'$NETRIG' stream -c 127.0.0.1 -p $SRV_PORT -t 0.3 -i 0 --user bob --credentials '$T/creds' >/dev/null"
chmod 644 "$T/creds"
out=$("$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -t 0.3 --user bob --credentials "$T/creds" 2>&1 >/dev/null || true)
check "world-readable credentials refused ($out)" grep -q "chmod 600" <<<"$out"
chmod 644 "$T/auth"
out=$("$NETRIG" serve -p 0 --auth-file "$T/auth" 2>&1 || true)
check "world-readable auth file refused ($out)" grep -q "readable by others" <<<"$out"
kill "$SRV_PID"; wait "$SRV_PID" 2>/dev/null || true

# ---- address lists
start_server --allow 192.0.2.0/24
out=$(run -t 0.3 2>&1 >/dev/null || true)
check "address outside --allow refused ($out)" test -n "$out"
check "refusal logged" grep -q "not allowed by --allow/--deny" "$SRV_LOG"
kill "$SRV_PID"; wait "$SRV_PID" 2>/dev/null || true
start_server --allow 127.0.0.0/8 --deny 127.0.0.2
check "allowed address served" bash -c "'$NETRIG' stream -c 127.0.0.1 -p $SRV_PORT -t 0.3 -i 0 >/dev/null"
out=$("$NETRIG" stream -c 127.0.0.1 -B 127.0.0.2 -p "$SRV_PORT" -t 0.3 2>&1 >/dev/null || true)
check "denied address refused even inside --allow ($out)" test -n "$out"
kill "$SRV_PID"; wait "$SRV_PID" 2>/dev/null || true

# ---- limits
start_server --max-duration 2s --max-flows 4 --max-client-tests 1 --max-rate 400M --timeout 1s
out=$(run -t 3 2>&1 >/dev/null || true)
check "--max-duration named ($out)" grep -q "max-duration" <<<"$out"
out=$(run -t 1 -O 1.5 2>&1 >/dev/null || true)
check "--max-duration counts the omit ($out)" grep -q "max-duration" <<<"$out"
out=$(run -t 0.3 -P 5 2>&1 >/dev/null || true)
check "--max-flows named ($out)" grep -q "max-flows" <<<"$out"
out=$(run -t 0.3 --bidir -P 3 2>&1 >/dev/null || true)
check "--max-flows counts both directions ($out)" grep -q "max-flows" <<<"$out"
out=$(run -u -b 500M -t 0.3 2>&1 >/dev/null || true)
check "UDP above --max-rate refused ($out)" grep -q "max-rate" <<<"$out"
check "UDP below --max-rate served" bash -c "'$NETRIG' stream -c 127.0.0.1 -p $SRV_PORT -u -b 100M -t 0.5 -i 0 >/dev/null"
run -t 1.5 -P 2 -J >"$T/paced.json"
check_jq "TCP paced to --max-rate (under 400 Mbit/s + 10 %)" "$T/paced.json" '.summary.throughput_bps < 440e6'
# (the floor needs the CPU for 400 Mbit/s: under TSan beside another test it was 0.3 short)
if judge_rates; then
    check_jq "TCP paced to --max-rate, not below it (400 Mbit/s - 10 %)" "$T/paced.json" '.summary.throughput_bps > 360e6'
fi
check_jq "the pacing is reported" "$T/paced.json" 'any(.warnings[]; test("max-rate"))'
kill "$SRV_PID"; wait "$SRV_PID" 2>/dev/null || true

# ---- --max-client-tests: a second test from one address while the first runs. The first is
# long (60 s) and stopped with SIGINT once the second was answered, so that it runs for the
# whole check however slowly the second starts (under valgrind beside the sanitizer lanes and a
# busy loop the second took over 5 s: a 5 s first test had ended, and the second was admitted
# rightly)
start_server --max-client-tests 1 --timeout 1s
"$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -i 0 -t 60 >"$T/long.txt" 2>&1 &
first=$!
track_pid "$first"
# the first test is admitted: its control and data connections are established
wait_until 30 "the first test's connections" conns_at "$SRV_PORT" 2 || true
out=$(run -t 0.3 2>&1 >/dev/null || true)
if alive "$first"; then
    check "second test from one address refused by --max-client-tests ($out)" grep -q "max-client-tests" <<<"$out"
else
    fail "the first test had ended before the second was answered ($out): --max-client-tests not tested"
fi
# the first, stopped by SIGINT, reports its measurement as partial (exit 130), never a refusal
kill -INT "$first" 2>/dev/null || true
WAIT_RC=none
wait_exit "$first" 30 || fail "the first test did not stop within 30 s of SIGINT"
check "first test unaffected: it ran until stopped (exit $WAIT_RC, 130 for SIGINT)" test "$WAIT_RC" = 130
check "first test unaffected: its partial results ($(tail -c 300 "$T/long.txt"))" \
    grep -q "^PARTIAL .*interrupted" "$T/long.txt"
check "first test unaffected: it received data" grep -Eq "^Throughput +[0-9.]+ [GM]bit/s received" "$T/long.txt"

# ---- a client that connects and says nothing is dropped within --timeout (1 s)
exec 7<>"/dev/tcp/127.0.0.1/$SRV_PORT"
t0=$(now_ms)
timeout 15 cat <&7 >/dev/null || true
dt=$(($(now_ms) - t0))
exec 7<&-
check "silent client dropped after ${dt} ms (at all: within 10 s)" test "$dt" -lt 10000
if judge_rates; then # a deadline: valgrind's slowdown beside other work is not the daemon's
    check "silent client dropped after ${dt} ms (bound 1000 ms + slack)" test "$dt" -lt 2500
fi

# ---- SIGHUP reopens the log and the daemon carries on
kill -HUP "$SRV_PID"
wait_until 10 "the daemon's log reopened" grep -q "log reopened" "$SRV_LOG" || true
check "daemon alive after SIGHUP" kill -0 "$SRV_PID"
check "SIGHUP logged" grep -q "log reopened" "$SRV_LOG"
check "daemon serves after SIGHUP" bash -c "'$NETRIG' stream -c 127.0.0.1 -p $SRV_PORT -t 0.3 -i 0 >/dev/null"
finish
