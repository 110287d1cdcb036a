#!/usr/bin/env bash
# stream_errors: bad input and unreachable servers give a non-zero exit status and one clear
# line on stderr that names the offending value; usage errors exit 2, run failures exit 1.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

# expect_fail DESC WANT_RC 'GREP_PATTERN|...' -- netrig args...
#   runs netrig; checks the exit status, that stderr is exactly one line, that it starts
#   with "netrig:" and contains every fixed string given before --, and that no JSON or
#   report went to stdout (unless -J was asked for).
expect_fail() {
    local desc=$1 want=$2 rc=0 pat
    local pats=()
    shift 2
    while [[ $1 != -- ]]; do
        pats+=("$1")
        shift
    done
    shift
    timeout 30 "$NETRIG" "$@" >"$T/out" 2>"$T/err" || rc=$?
    check "$desc: exit status $want (got $rc)" test "$rc" -eq "$want"
    check "$desc: stderr is exactly one line (got $(wc -l <"$T/err"): $(head -c 400 "$T/err"))" one_line "$T/err"
    check "$desc: stderr starts with 'netrig:' ($(head -c 200 "$T/err"))" grep -q '^netrig: ' "$T/err"
    for pat in "${pats[@]}"; do
        check "$desc: stderr mentions '$pat' ($(head -c 300 "$T/err"))" grep -qF -- "$pat" "$T/err"
    done
    if [[ " $* " != *" -J "* && " $* " != *" --json-stream "* ]]; then
        check "$desc: nothing on stdout ($(head -c 200 "$T/out"))" test ! -s "$T/out"
    fi
    ERR_OUT=$T/out
}

# ---- usage errors: exit 2, the value named
expect_fail "-t -5" 2 "-5" "-t" -- stream -t -5
expect_fail "-t 0" 2 "-t" -- stream -t 0
expect_fail "-t 5x" 2 "5x" -- stream -t 5x
expect_fail "-P 0" 2 "'0'" "-P" -- stream -P 0
expect_fail "-P 100000" 2 "100000" "-P" -- stream -P 100000
expect_fail "-l 0" 2 "-l" "0" -- stream -l 0
expect_fail "-T 0" 2 "-T" -- stream -T 0
expect_fail "-p 70000" 2 "70000" -- stream -c 127.0.0.1 -p 70000
expect_fail "--timeout 0.01s" 2 "0.01s" -- stream --timeout 0.01s
expect_fail "-M 10" 2 "'10'" -- stream -M 10
expect_fail "-w 1T" 2 "1T" "-w" "at most 1G" -- stream -w 1T
# a size too large names the limit; a bad suffix lists every suffix the README promises
expect_fail "-l 10T" 2 "'10T'" "-l" "too large" "at most 16M" -- stream -l 10T
expect_fail "-l 10X" 2 "'10X'" "K, M, G or T" -- stream -l 10X
expect_fail "-b 5Q" 2 "'5Q'" "K, M, G or T" -- stream -u -b 5Q
expect_fail "--fq-rate abc" 2 "abc" "--fq-rate" -- stream --fq-rate abc
expect_fail "-A with a CPU that does not exist" 2 "999" -- stream -A 999
expect_fail "unknown long option" 2 "--no-such-option" -- stream --no-such-option
expect_fail "unknown short option" 2 "-x" -- stream -x
expect_fail "missing value" 2 "-t" -- stream -t
expect_fail "stray argument" 2 "stray" -- stream stray
expect_fail "serve: unknown option" 2 "--no-such-option" -- serve --no-such-option
# one getopt error path (cli_opt_error) for every command: the option named alone, in one form
expect_fail "unknown option inside a group" 2 "unknown option '-x' for stream" -- stream -Jx
expect_fail "load: missing value" 2 "option '-t' for load needs a value" -- load -t
expect_fail "report: an option of another command, with its value" 2 \
    "unknown option '--chart' for report: see 'netrig help report'" -- report --chart x
expect_fail "serve: --max-tests 0" 2 "--max-tests" -- serve --max-tests 0
expect_fail "unknown command" 2 "nosuchcmd" -- nosuchcmd

# ---- help
rc=0
"$NETRIG" help stream >"$T/help.out" 2>"$T/help.err" || rc=$?
check "help stream: exit 0 (got $rc)" test "$rc" -eq 0
check "help stream: usage on stdout" grep -q '^usage: netrig stream' "$T/help.out"
check "help stream: nothing on stderr" test ! -s "$T/help.err"
rc=0
"$NETRIG" stream --help >"$T/help2.out" 2>&1 || rc=$?
check "stream --help: exit 0 (got $rc)" test "$rc" -eq 0
check "stream --help: prints the same usage" cmp -s "$T/help.out" "$T/help2.out"

# ---- run failures against servers: exit 1
start_server
log "server on port $SRV_PORT"

expect_fail "-C nosuchcc" 1 "nosuchcc" "reno" -- stream -c 127.0.0.1 -p "$SRV_PORT" -t 1 -C nosuchcc
expect_fail "-C nosuchcc -J" 1 "nosuchcc" -- stream -c 127.0.0.1 -p "$SRV_PORT" -t 1 -C nosuchcc -J
check_jq "-C nosuchcc -J: stdout is a JSON document with the error" "$ERR_OUT" \
    '.error | contains("nosuchcc")'
check_jq "-C nosuchcc -J: the error-only document names the test (docs/json.md: \"test\": \"stream\")" \
    "$ERR_OUT" '.test == "stream" and (.netrig_version | type == "string")'

expect_fail "unknown host" 1 "no.such.host.invalid" -- stream -c no.such.host.invalid -p "$SRV_PORT" -t 1

expect_fail "-6 with an IPv4 address" 1 "127.0.0.1" -- stream -6 -c 127.0.0.1 -p "$SRV_PORT" -t 1
expect_fail "-B with an address not on this host" 1 "192.0.2.1" -- stream -c 127.0.0.1 -p "$SRV_PORT" -t 1 -B 192.0.2.1
expect_fail "--server-cpus with a CPU that does not exist" 1 "999" -- stream -c 127.0.0.1 -p "$SRV_PORT" -t 1 --server-cpus 999

# a port that was just free: a daemon's, after it exited
"$NETRIG" serve -p 0 -B 127.0.0.1 2>"$T/closed.log" &
cpid=$!
track_pid "$cpid"
closed_port=$(wait_for_port "$T/closed.log" "$cpid")
kill -TERM "$cpid" || fail "daemon on port $closed_port died early"
wait_exit "$cpid" 10 || fail "daemon on port $closed_port did not exit on SIGTERM"
expect_fail "connection refused" 1 "refused" "$closed_port" -- stream -c 127.0.0.1 -p "$closed_port" -t 1
expect_fail "connection refused -J" 1 "refused" -- stream -c 127.0.0.1 -p "$closed_port" -t 1 -J
check_jq "connection refused -J: stdout has the error" "$ERR_OUT" '.error | test("refused")'
expect_fail "connection refused --json-stream" 1 "refused" -- stream -c 127.0.0.1 -p "$closed_port" -t 1 --json-stream
check "connection refused --json-stream: stdout is one line ($(wc -l <"$ERR_OUT") lines)" one_line "$ERR_OUT"
check_jq "connection refused --json-stream: that line is a JSON object with the error" "$ERR_OUT" \
    '.error | test("refused")'

# the wrong port: something that is not netrig listens there
if command -v python3 >/dev/null 2>&1; then
    python3 - "$T/http.port" <<'EOF' &
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(4)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.settimeout(20)
try:
    while True:
        c, _ = s.accept()
        c.settimeout(5)
        try:
            c.recv(4096)
            c.sendall(b"HTTP/1.0 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        except OSError:
            pass
        c.close()
except OSError:
    pass
EOF
    track_pid $!
    for _ in $(seq 100); do [[ -s $T/http.port ]] && break; sleep 0.05; done
    http_port=$(cat "$T/http.port")
    t0=$(now_ms)
    expect_fail "wrong port (an HTTP server)" 1 "netrig" -- stream -c 127.0.0.1 -p "$http_port" -t 1 --timeout 3s
    el=$(($(now_ms) - t0))
    check "wrong port: fails within 5 s (took ${el} ms)" test "$el" -lt 5000
else
    log "python3 missing: wrong-port case skipped"
fi

# none of this disturbed the daemon
rc=0
"$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -t 1 -J >"$T/ok.json" 2>"$T/ok.err" || rc=$?
check "daemon still serves after the errors (rc $rc: $(head -c 200 "$T/ok.err"))" test "$rc" -eq 0
check_jq "daemon still serves: throughput > 0" "$T/ok.json" '.summary.throughput_bps > 0'

finish
