#!/usr/bin/env bash
# stream_ctrl_c: SIGINT (Ctrl-C) during a test ends it at once with exit status 130 and the
# results so far, marked partial: -J against the built-in server, --json-stream, and a
# daemon-backed run (which must leave the daemon serving).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

# interrupt NAME SIGNAL ARGS...: starts `netrig stream -t 10 ARGS`, signals it after 1.5 s,
# and waits (bounded); sets RC and EL (ms from the signal to the exit)
_connected_or_gone() { ss -Htnp state established 2>/dev/null | grep -q "pid=$1," || ! alive "$1"; }

interrupt() {
    local name=$1 sig=$2 pid t_sig
    shift 2
    "$NETRIG" stream -t 10 "$@" >"$T/$name.out" 2>"$T/$name.err" &
    pid=$!
    track_pid "$pid"
    # the signal goes in once the test runs (its data connection is up), then 1 s later: a
    # fixed sleep raced the start under valgrind, whose start-up on a busy machine outlasted
    # it (the run then never saw the signal and ended after its 10 s with 0)
    wait_until 30 "$name: the run's connections" _connected_or_gone "$pid" || true
    sleep 1 # not a readiness wait: the signal is meant to land in the middle of the run
    t_sig=$(now_ms)
    kill -"$sig" "$pid" || fail "$name: netrig ended before SIG$sig"
    if wait_exit "$pid" 15; then
        RC=$WAIT_RC
    else
        RC=124
        kill -KILL "$pid" 2>/dev/null || true
    fi
    EL=$(($(now_ms) - t_sig))
    check "$name: exits 130 after SIG$sig (got $RC; stderr: $(head -c 300 "$T/$name.err"))" test "$RC" -eq 130
    check "$name: exits quickly after SIG$sig (< 8 s; took $EL ms)" test "$EL" -lt 8000
}

# ---- -J, built-in loopback server
interrupt json INT -J
check_jq "json: stdout is one JSON document" "$T/json.out" 'length == 1' -s
check_jq "json: partial is true" "$T/json.out" '.partial == true'
check_jq "json: summary.bytes > 0" "$T/json.out" '.summary.bytes > 0'
check_jq "json: the error says it was interrupted" "$T/json.out" '.error | test("interrupt")'
check_jq "json: measured time is about the 1.5 s run, not 10 s" "$T/json.out" \
    '.summary.seconds > 0.5 and .summary.seconds < 5'
check_jq "json: intervals cover the time run" "$T/json.out" '(.intervals | length) >= 1'

# ---- --json-stream: intervals, then the end document, still partial
interrupt jsonstream INT --json-stream -i 0.5
if jq -e . "$T/jsonstream.out" >/dev/null 2>&1; then
    check_jq "json-stream: interval lines before the end" "$T/jsonstream.out" \
        '[.[] | select(.event == "interval")] | length >= 1' -s
    check_jq "json-stream: last line is the end document, partial, bytes > 0" "$T/jsonstream.out" \
        '.[-1] | .event == "end" and .partial == true and .summary.bytes > 0' -s
else
    fail "json-stream: stdout is not a sequence of JSON objects: $(head -c 300 "$T/jsonstream.out")"
fi

# ---- against a daemon: the client ends cleanly and the daemon keeps serving
start_server
interrupt daemon INT -c 127.0.0.1 -p "$SRV_PORT" -J -R
check_jq "daemon: partial with bytes > 0" "$T/daemon.out" '.partial == true and .summary.bytes > 0'
check_jq "daemon: the server's side came back (sender bytes known)" "$T/daemon.out" \
    '.summary.sender_bytes > 0'
check "daemon: still alive" alive "$SRV_PID"
rc=0
"$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -t 1 -J >"$T/after.json" 2>"$T/after.err" || rc=$?
check "daemon: serves the next test (rc $rc: $(head -c 200 "$T/after.err"))" test "$rc" -eq 0

# ---- interrupted during the warm-up (-O): what ran is reported, still partial
interrupt warmup INT -O 5 -J
check_jq "warmup: partial with bytes > 0" "$T/warmup.out" '.partial == true and .summary.bytes > 0'

# ---- SIGTERM is treated like SIGINT
interrupt term TERM -J
check_jq "term: partial with bytes > 0" "$T/term.out" '.partial == true and .summary.bytes > 0'

finish
