#!/usr/bin/env bash
# serve_oneoff: iperf3's server habits and the client's output options (issue 16).
#  - serve -1 exits 0 after one test, from a netrig client and from an iperf3 client; a test
#    refused before it runs does not count;
#  - serve --idle-timeout reopens the listener when idle (and still serves), with -1 exits;
#  - --logfile takes all output (errors too) and --timestamps=FORMAT stamps every line, on the
#    daemon's log and on the client's report;
#  - warnings are never silent: UDP below -b, idle threads, -A auto that pinned nothing, in
#    the text report and in JSON.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

# serve_bg NAME ARGS...: a daemon on a free port logging to $T/NAME.log; sets PID, PORT
serve_bg() {
    local name=$1
    shift
    "$NETRIG" serve -p 0 --logfile "$T/$name.log" "$@" >"$T/$name.out" 2>&1 &
    PID=$!
    track_pid "$PID"
    PORT=$(wait_for_port "$T/$name.log" "$PID")
}

stream() { timeout 30 "$NETRIG" stream -c 127.0.0.1 -p "$PORT" --no-save "$@"; }

# ---- serve -1, a netrig client; a refused test first does not count
serve_bg one -1 --max-flows 1
rc=0
stream -t 0.2 -i 0 -P 2 >/dev/null 2>"$T/refused.err" || rc=$?
check "a test over --max-flows is refused (exit $rc): $(cat "$T/refused.err")" test "$rc" -ne 0
check "serve -1 still runs after a refused test" alive "$PID"
rc=0
stream -t 0.2 -i 0 -J >"$T/one.json" 2>"$T/one.err" || rc=$?
check "the one test runs (exit $rc): $(head -c 300 "$T/one.err")" test "$rc" -eq 0
WAIT_RC=
wait_exit "$PID" 10 || true
check "serve -1 exits 0 after one netrig test (status ${WAIT_RC:-still running})" test "${WAIT_RC:-x}" = 0
check "serve -1 wrote nothing outside its --logfile" test ! -s "$T/one.out"

# ---- serve -1, an iperf3 client
if command -v iperf3 >/dev/null 2>&1; then
    serve_bg i3one -1
    rc=0
    timeout 30 iperf3 -c 127.0.0.1 -p "$PORT" -t 1 -J >"$T/i3.json" 2>&1 || rc=$?
    check "iperf3 -c against serve -1 exits 0 ($rc): $(jq -r '.error // empty' "$T/i3.json" 2>/dev/null)" test "$rc" -eq 0
    WAIT_RC=
    wait_exit "$PID" 10 || true
    check "serve -1 exits 0 after one iperf3 test (status ${WAIT_RC:-still running})" test "${WAIT_RC:-x}" = 0
else
    log "iperf3 is not installed: serve -1 with an iperf3 client not tried"
fi

# ---- --idle-timeout: the listener is reopened while idle, the daemon still serves; the log
# lines all carry the --timestamps format
serve_bg idle --idle-timeout 0.5s --timestamps='<%s> '
for _ in $(seq 100); do
    [[ $(grep -c 'reopened' "$T/idle.log" || true) -ge 2 ]] && break
    sleep 0.05
done
check "idle: the listener was reopened twice within 5 s: $(cat "$T/idle.log")" \
    test "$(grep -c 'listening socket reopened' "$T/idle.log")" -ge 2
rc=0
stream -t 0.2 -i 0 >/dev/null 2>"$T/idle.err" || rc=$?
check "a test after the reopening runs (exit $rc): $(cat "$T/idle.err")" test "$rc" -eq 0
check "every daemon log line starts with the --timestamps format: $(grep -vE '^<[0-9]{10}> netrig: ' "$T/idle.log" | head -3)" \
    bash -c "! grep -qvE '^<[0-9]{10}> netrig: ' '$T/idle.log'"
kill "$PID"
wait_exit "$PID" 10 || true

# ---- -1 --idle-timeout: nobody comes, the daemon exits 0
t0=$(now_ms)
serve_bg idleone -1 --idle-timeout 1s
WAIT_RC=
wait_exit "$PID" 10 || true
el=$(($(now_ms) - t0))
check "-1 --idle-timeout 1s exits 0 with no client (status ${WAIT_RC:-still running})" test "${WAIT_RC:-x}" = 0
check "-1 --idle-timeout 1s waited at least 1 s (${el} ms)" test "$el" -ge 1000

# ---- the client's --logfile and --timestamps: interval lines stamped, stdout empty; errors
# go to the log file too
serve_bg cli
rc=0
stream -t 0.4 -i 0.1 --logfile "$T/client.log" --timestamps='%%%s| ' >"$T/client.out" 2>&1 || rc=$?
check "client --logfile run exits 0 ($rc)" test "$rc" -eq 0
check "client --logfile: nothing on stdout or stderr ($(head -c 200 "$T/client.out"))" test ! -s "$T/client.out"
check "client --logfile has stamped interval lines" grep -qE '^%[0-9]{10}\| \[ *0\.[0-9]+- *0\.[0-9]+ s\]' "$T/client.log"
check "client --logfile: every non-empty line stamped: $(grep -vE '^(%[0-9]{10}\| .*)?$' "$T/client.log" | head -3)" \
    bash -c "! grep -qvE '^(%[0-9]{10}\\| .*)?$' '$T/client.log'"
rc=0
timeout 30 "$NETRIG" stream -c 127.0.0.1 -p 1 -t 0.2 --no-save --logfile "$T/client.log" >"$T/fail.out" 2>&1 || rc=$?
check "a failed run with --logfile exits 1 ($rc)" test "$rc" -eq 1
check "its error is in the log file, not on the terminal" \
    bash -c "[[ ! -s '$T/fail.out' ]] && tail -n 1 '$T/client.log' | grep -q 'netrig: '"

# ---- warnings: never silent, text and JSON
stream -u -b 1000T -t 0.3 -i 0 -J >"$T/udp.json" 2>/dev/null
check_jq "UDP -b 1000T: a warning that the sender did not reach the rate" "$T/udp.json" \
    'any(.warnings[]; test("reached .* of the 1000.0 Tbit/s"))'
stream -u -b 1000T -t 0.3 -i 0 >"$T/udp.txt" 2>/dev/null
check "UDP -b 1000T: the warning in the text report" grep -qE '^Warning +UDP: .*reached' "$T/udp.txt"
# (a paced sender catches up after a late start, but what it is behind when the run stops
# stays unsent: 65 ms of lag under ASan on a loaded machine read 93.4 % of a 1 s run; over
# 3 s the same lag is 2 %, inside the 95 % the warning allows)
stream -u -b 2M -t 3 -i 0 -J >"$T/udp2.json" 2>/dev/null
check "UDP -b 2M on loopback: reached, no warning ($(jq -c .warnings "$T/udp2.json"))" \
    jq -e '.warnings == []' "$T/udp2.json"
stream -T 2 -t 0.2 -i 0 -J >"$T/idle_thr.json" 2>/dev/null
check_jq "-T 2 -P 1: the idle thread is a warning" "$T/idle_thr.json" 'any(.warnings[]; test("-T 2 with 1 flow"))'
stream -T 2 -P 2 -t 0.2 -i 0 -J >"$T/busy_thr.json" 2>/dev/null
check_jq "-T 2 -P 2: no idle thread warning" "$T/busy_thr.json" '.warnings == []'
stream -A auto -t 0.2 -i 0 -J >"$T/auto.json" 2>/dev/null
check_jq "-A auto on loopback: a warning that nothing was pinned" "$T/auto.json" 'any(.warnings[]; test("-A .auto.*not pinned"))'

finish
