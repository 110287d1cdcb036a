#!/usr/bin/env bash
# serve_concurrency: one `netrig serve` daemon and several clients: two tests at once,
# --max-tests refusing a second one as busy, garbage and idle connections that must not
# disturb it, SIGKILL of the daemon mid-test, SIGTERM of an idle daemon, and -D --pidfile.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

# stream_bg NAME ARGS...: a client in the background; its pid in BG_PID, output in $T/NAME.*
stream_bg() {
    local name=$1
    shift
    "$NETRIG" stream "$@" >"$T/$name.json" 2>"$T/$name.err" &
    BG_PID=$!
    track_pid "$BG_PID"
}

# wait_client NAME PID SECONDS: bounded wait; sets RC (124 when it did not exit in time)
wait_client() {
    if wait_exit "$2" "$3"; then
        RC=$WAIT_RC
    else
        RC=124
        fail "$1: still running after $3 s"
        kill -KILL "$2" 2>/dev/null || true
    fi
}

# ok_doc NAME: a successful -J run
ok_doc() {
    local name=$1
    check "$name: exit status 0 (got $RC; stderr: $(head -c 300 "$T/$name.err"))" test "$RC" -eq 0
    check_jq "$name: complete result with throughput > 0" "$T/$name.json" \
        '.partial == false and .summary.throughput_bps > 0 and (.flows | length) >= 1'
}

# ---------------------------------------------------------------- two clients at once
start_server
log "daemon pid $SRV_PID port $SRV_PORT"
stream_bg a -c 127.0.0.1 -p "$SRV_PORT" -t 2 -J
pa=$BG_PID
stream_bg b -c 127.0.0.1 -p "$SRV_PORT" -t 2 -J
pb=$BG_PID
wait_client "client a" "$pa" 20
ok_doc a
wait_client "client b" "$pb" 20
ok_doc b
# they really overlapped: the daemon ran two tests between the first start and first end
check "two concurrent clients: daemon logged two tests" \
    test "$(grep -c 'done:' "$SRV_LOG")" -eq 2
check "two concurrent clients: both started before either finished" \
    awk '/: stream, /{s++} /done:/{if (s < 2) bad = 1} END {exit bad || s != 2}' "$SRV_LOG"

# ---------------------------------------------------------------- garbage and idle connections
send_garbage() { # BYTES (printf format)
    # shellcheck disable=SC2059 # the argument is a printf format on purpose (\x escapes)
    printf "$1" | timeout 3 bash -c "cat > /dev/tcp/127.0.0.1/$SRV_PORT" 2>/dev/null || true
}
send_garbage 'GET / HTTP/1.0\r\n\r\n'
send_garbage '\x00\x01\x02\x03\x04\x05\x06\x07'
send_garbage 'NRG\x01\xff\xff\xff\xff'              # control magic, absurd length
send_garbage 'NRG\x01\x00\x00\x00\x05nope!'        # control magic, not JSON
send_garbage 'NRDT0123456789abcdef\x00\x00\x00\x00\x00\x00\x00\x00'   # data hello, no such test
send_garbage 'N'                                   # too short to tell, then gone
exec {idle_fd}<>"/dev/tcp/127.0.0.1/$SRV_PORT"     # connects and says nothing
exec {idle_ctl_fd}<>"/dev/tcp/127.0.0.1/$SRV_PORT" # starts a control frame, then stalls
printf 'NRG\x01' >&"$idle_ctl_fd"
wait_until 10 "the daemon's accept of the two idle connections" conns_at "$SRV_PORT" 2 || true
rc=0
"$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -t 1 -J >"$T/after.json" 2>"$T/after.err" || rc=$?
RC=$rc
ok_doc after
check "daemon alive after garbage and idle connections" alive "$SRV_PID"
check "daemon logged the garbage as dropped" grep -q 'dropped connection' "$SRV_LOG"
exec {idle_fd}>&- {idle_ctl_fd}>&-

# ---------------------------------------------------------------- SIGTERM to an idle daemon
kill -TERM "$SRV_PID" || fail "idle daemon died before SIGTERM"
if wait_exit "$SRV_PID" 10; then
    check "SIGTERM to an idle daemon: exit status 0 (got $WAIT_RC)" test "$WAIT_RC" -eq 0
else
    fail "SIGTERM to an idle daemon: still running after 10 s"
fi

# ---------------------------------------------------------------- --max-tests 1
start_server --max-tests 1
busy_log=$SRV_LOG
stream_bg first -c 127.0.0.1 -p "$SRV_PORT" -t 2 -J
pf=$BG_PID
for _ in $(seq 100); do # until the daemon has admitted the first test
    grep -q ': stream, ' "$busy_log" && break
    sleep 0.05
done
check "--max-tests 1: first test admitted" grep -q ': stream, ' "$busy_log"
# an idle connection does not take the one slot either
exec {idle_fd}<>"/dev/tcp/127.0.0.1/$SRV_PORT"
rc=0
timeout 20 "$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -t 1 -J >"$T/second.json" 2>"$T/second.err" || rc=$?
check "--max-tests 1: second client exits 1 (got $rc)" test "$rc" -eq 1
check "--max-tests 1: second client says busy ($(head -c 300 "$T/second.err"))" grep -qi 'busy' "$T/second.err"
check "--max-tests 1: second client's stderr is one line" one_line "$T/second.err"
check_jq "--max-tests 1: second client's -J output carries the error" "$T/second.json" '.error | test("busy")'
wait_client "first client" "$pf" 20
ok_doc first
rc=0
"$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -t 1 -J >"$T/third.json" 2>"$T/third.err" || rc=$?
RC=$rc
ok_doc third # the slot is free again, with the idle connection still open
exec {idle_fd}>&-

# ---------------------------------------------------------------- --exclusive
# throughput tests take turns: the second is told it is queued, waits, then runs alone; a
# client refused while it waits (rr is not queued and runs alongside) does not take the turn
start_server --exclusive
excl_log=$SRV_LOG
stream_bg x1 -c 127.0.0.1 -p "$SRV_PORT" -t 2 -J
p1=$BG_PID
for _ in $(seq 100); do # until the daemon has admitted the first test
    grep -q ': stream, ' "$excl_log" && break
    sleep 0.05
done
stream_bg x2 -c 127.0.0.1 -p "$SRV_PORT" -t 1 -J
p2=$BG_PID
rc=0
"$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -t 1 --congestion no-such-cc -J \
    >"$T/xbad.json" 2>"$T/xbad.err" || rc=$?
check "--exclusive: a refused test is refused (exit $rc)" test "$rc" -ne 0
wait_client "exclusive first" "$p1" 20
ok_doc x1
wait_client "exclusive second" "$p2" 30
ok_doc x2
check "--exclusive: the second client was told to wait ($(head -c 300 "$T/x2.err"))" \
    grep -q 'waiting our turn' "$T/x2.err"
check "--exclusive: the two throughput tests did not overlap" \
    awk '/: stream, /{s++; if (s - d > 1) bad = 1} /done:/{d++} END {exit bad || s != 2 || d != 2}' \
    "$excl_log"
kill -TERM "$SRV_PID" 2>/dev/null || true
wait_exit "$SRV_PID" 10 || fail "--exclusive daemon: still running 10 s after SIGTERM"

# ---------------------------------------------------------------- SIGKILL mid-test
for dir in forward reverse; do
    dopt=()
    [[ $dir == reverse ]] && dopt=(-R)
    start_server
    kpid=$SRV_PID
    t0=$(now_ms)
    stream_bg "killed_$dir" -c 127.0.0.1 -p "$SRV_PORT" -t 5 "${dopt[@]}" -J
    pc=$BG_PID
    sleep 1.5
    kill -KILL "$kpid" || fail "daemon (pid $kpid) died before SIGKILL"
    wait "$kpid" 2>/dev/null || true
    wait_client "client of a killed daemon ($dir)" "$pc" 20
    el=$(($(now_ms) - t0))
    what="SIGKILL mid-test ($dir)"
    check "$what: client exits non-zero (got $RC)" test "$RC" -ne 0 -a "$RC" -ne 124
    check "$what: client exits 1 (got $RC)" test "$RC" -eq 1
    check "$what: client done within 20 s (took $el ms)" test "$el" -lt 20000
    check "$what: one line on stderr ($(head -c 300 "$T/killed_$dir.err"))" one_line "$T/killed_$dir.err"
    check_jq "$what: partial results with bytes > 0" "$T/killed_$dir.json" \
        '.partial == true and .summary.bytes > 0 and (.error | type == "string")'
done

# ---------------------------------------------------------------- SIGTERM mid-test
# The daemon ends its tests, sends the client what it measured, and exits 0. (A forward
# test's receiver drains for up to 5 s first, hence the 8 s bound.)
for dir in forward reverse; do
    dopt=()
    [[ $dir == reverse ]] && dopt=(-R)
    start_server
    tpid=$SRV_PID
    stream_bg "term_$dir" -c 127.0.0.1 -p "$SRV_PORT" -t 20 "${dopt[@]}" -J
    pc=$BG_PID
    sleep 1.5
    t0=$(now_ms)
    kill -TERM "$tpid" || fail "daemon (pid $tpid) died before SIGTERM"
    what="SIGTERM mid-test ($dir)"
    if wait_exit "$tpid" 8; then
        check "$what: daemon exits 0 (got $WAIT_RC)" test "$WAIT_RC" -eq 0
    else
        fail "$what: daemon still running 8 s after SIGTERM"
    fi
    wait_client "$what: client" "$pc" 15
    el=$(($(now_ms) - t0))
    check "$what: client exits 1 (got $RC) within 15 s (took $el ms)" test "$RC" -eq 1
    check "$what: one line on stderr ($(head -c 300 "$T/term_$dir.err"))" one_line "$T/term_$dir.err"
    check_jq "$what: partial results with bytes > 0 and the server's side" "$T/term_$dir.json" \
        '.partial == true and .summary.bytes > 0 and .summary.sender_bytes > 0'
done

# ---------------------------------------------------------------- -D --pidfile
pidf=$T/netrig.pid
rc=0
"$NETRIG" serve -p 0 -B 127.0.0.1 -D --pidfile "$pidf" 2>"$T/daemon.log" || rc=$?
dport=$(sed -n 's/.*listening on .* port \([0-9][0-9]*\) .*/\1/p' "$T/daemon.log" | head -n1)
# not our child: found by its port at exit, whatever became of the pid file
[[ -n $dport ]] && on_exit "kill_listeners $dport"
check "-D: the foreground command exits 0 (got $rc)" test "$rc" -eq 0
check "-D: the port was logged before detaching" test -n "$dport"
for _ in $(seq 100); do [[ -s $pidf ]] && break; sleep 0.05; done
if [[ ! -s $pidf ]]; then
    fail "-D --pidfile: no pid file within 5 s"
else
    dpid=$(cat "$pidf")
    check "-D: pid file holds a live pid ($dpid)" alive "$dpid"
    check "-D: the pid file names the process listening on port $dport ($(listener_pids "${dport:-1}" | tr '\n' ' '))" \
        test "$(listener_pids "${dport:-1}")" = "$dpid"
    check "-D: the daemon is detached (new session, not our child)" \
        test "$(ps -o sid= -p "$dpid" | tr -d ' ')" != "$(ps -o sid= -p $$ | tr -d ' ')" \
        -a "$(ps -o ppid= -p "$dpid" | tr -d ' ')" != "$$"
    rc=0
    "$NETRIG" stream -c 127.0.0.1 -p "${dport:-1}" -t 1 -J >"$T/daemon.json" 2>"$T/daemon.err" || rc=$?
    RC=$rc
    ok_doc daemon
    kill -TERM "$dpid" || fail "-D: daemon (pid $dpid) gone before SIGTERM"
    gone=0
    for _ in $(seq 100); do
        if ! kill -0 "$dpid" 2>/dev/null; then gone=1; break; fi
        sleep 0.05
    done
    check "-D: the daemon exits on SIGTERM via its pid" test "$gone" -eq 1
    check "-D: the daemon removes its pid file on exit" test ! -e "$pidf"
fi

finish
