# lib.sh: helpers shared by the netrig integration tests. Sourced, never run.
#
# A test script starts with:
#     set -euo pipefail
#     source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
# and gets:
#     NETRIG             the binary under test (first argument)
#     T                  a private temporary directory, removed on exit
#     start_server ...   a `netrig serve -p 0 ...` in the background; sets SRV_PID,
#                        SRV_PORT, SRV_LOG (killed on exit)
#     track_pid PID      kill PID on exit too
#     on_exit 'CMD'      run CMD on exit (after the tracked pids are killed; last added first)
#     check DESC CMD...  run CMD; a failure is counted and reported, the test goes on
#     check_jq DESC FILE FILTER [jq args]   check that `jq -e FILTER FILE` is true
#     finish             exit 1 if any check failed, else 0
#     skip MSG           exit 77 (ctest SKIP_RETURN_CODE) with MSG on stderr
#     now_ms             monotonic-enough wall clock in milliseconds
#     listener_pids PORT / kill_listeners PORT...   find / kill detached daemons by port
#
# Every background process a test starts is killed, and every temporary file removed,
# by the EXIT trap, whether the test passes, fails, or is interrupted.

NETRIG=${1:?usage: $0 PATH_TO_NETRIG}
if [[ ! -x $NETRIG ]]; then
    echo "netrig binary '$NETRIG' is not executable" >&2
    exit 1
fi
NETRIG=$(cd "$(dirname "$NETRIG")" && pwd)/$(basename "$NETRIG")
TEST_NAME=$(basename "$0" .sh)

if ! command -v jq >/dev/null 2>&1; then
    echo "$TEST_NAME: jq is not installed" >&2
    exit 77
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/netrig-$TEST_NAME.XXXXXX")
# runs are saved to a history database: keep the tests' own, never the user's
export XDG_DATA_HOME=$T/data

# NETRIG_VALGRIND=1: every netrig the test runs goes through valgrind memcheck; the EXIT trap
# fails the test when any of them reported an error or a definite leak.
if [[ -n ${NETRIG_VALGRIND:-} ]]; then
    command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 77; }
    _REAL_NETRIG=$NETRIG
    mkdir -p "$T/vg"
    NETRIG=$T/netrig-under-valgrind
    printf '#!/bin/sh\nexec valgrind -q --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --log-file=%s/vg/%%p.log %s "$@"\n' \
        "$T" "$_REAL_NETRIG" >"$NETRIG"
    chmod +x "$NETRIG"
fi
_PIDS=()
_EXIT_HOOKS=()
FAILS=0

track_pid() { _PIDS+=("$1"); }
on_exit() { _EXIT_HOOKS+=("$1"); }

_cleanup() {
    local rc=$? pid i
    set +e
    trap - EXIT INT TERM
    # only processes that are still our own children: a reaped pid may have been reused
    local mine=()
    for pid in "${_PIDS[@]}"; do
        [[ $(ps -o ppid= -p "$pid" 2>/dev/null | tr -d ' ') == "$$" ]] && mine+=("$pid")
    done
    for pid in "${mine[@]}"; do
        kill -TERM "$pid" 2>/dev/null
    done
    for pid in "${mine[@]}"; do
        for _ in $(seq 30); do
            alive "$pid" || break
            sleep 0.1
        done
        alive "$pid" && kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    for ((i = ${#_EXIT_HOOKS[@]} - 1; i >= 0; i--)); do
        eval "${_EXIT_HOOKS[i]}" >/dev/null 2>&1
    done
    if [[ -n ${NETRIG_VALGRIND:-} ]] && grep -lE 'ERROR SUMMARY: [1-9]|definitely lost: [1-9]|Invalid (read|write)|uninitialised' "$T"/vg/*.log >/dev/null 2>&1; then
        echo "$TEST_NAME: valgrind reported errors:" >&2
        cat "$T"/vg/*.log >&2
        rc=1
    fi
    rm -rf "$T"
    exit "$rc"
}
trap _cleanup EXIT
trap 'echo "$TEST_NAME: interrupted" >&2; exit 130' INT TERM

log() { echo "[$TEST_NAME] $*"; }

fail() {
    FAILS=$((FAILS + 1))
    echo "FAIL: $*" >&2
}

check() {
    local desc=$1
    shift
    if "$@"; then
        return 0
    fi
    fail "$desc"
    return 0
}

check_jq() {
    local desc=$1 file=$2 filter=$3
    shift 3
    if jq -e "$@" "$filter" "$file" >/dev/null 2>"$T/jq.err"; then
        return 0
    fi
    fail "$desc  [jq: $(tr -s ' \n' ' ' <<<"$filter") on $(basename "$file")$( [[ -s $T/jq.err ]] && echo "; $(head -c 300 "$T/jq.err")")]"
    return 0
}

finish() {
    if ((FAILS > 0)); then
        echo "$TEST_NAME: $FAILS check(s) failed" >&2
        exit 1
    fi
    log "all checks passed"
    exit 0
}

skip() {
    echo "$TEST_NAME: skipped: $*" >&2
    exit 77
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# wait_for_port LOGFILE PID: prints the port a `netrig serve -p 0` logged (bounded wait).
wait_for_port() {
    local logf=$1 pid=$2 port=""
    for _ in $(seq 100); do
        port=$(sed -n 's/.*listening on .* port \([0-9][0-9]*\) .*/\1/p' "$logf" 2>/dev/null | head -n1)
        [[ -n $port ]] && break
        if ! kill -0 "$pid" 2>/dev/null; then
            break
        fi
        sleep 0.05
    done
    if [[ -z $port ]]; then
        echo "server did not report its port within 5 s; its log:" >&2
        cat "$logf" >&2 || true
        return 1
    fi
    echo "$port"
}

# start_server [serve options]: background daemon on a free port.
_SRV_N=0
start_server() {
    _SRV_N=$((_SRV_N + 1))
    SRV_LOG=$T/serve.$_SRV_N.log
    "$NETRIG" serve -p 0 "$@" 2>"$SRV_LOG" &
    SRV_PID=$!
    track_pid "$SRV_PID"
    SRV_PORT=$(wait_for_port "$SRV_LOG" "$SRV_PID")
}

# alive PID: the process exists and is not a zombie
alive() {
    local st
    kill -0 "$1" 2>/dev/null || return 1
    st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
    [[ $st != Z* ]]
}

# wait_exit PID SECONDS: waits for a child to exit; sets WAIT_RC; returns 1 on timeout.
wait_exit() {
    local pid=$1 limit=$2 i
    for ((i = 0; i < limit * 20; i++)); do
        if ! alive "$pid"; then
            WAIT_RC=0
            wait "$pid" || WAIT_RC=$?
            return 0
        fi
        sleep 0.05
    done
    return 1
}

# listener_pids PORT: pids of the processes listening on TCP PORT (needs ss; root sees all)
listener_pids() {
    ss -Hltnp "sport = :$1" 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u || true
}

# kill_listeners PORT...: SIGKILL the detached `$NETRIG serve` daemons this test started
# there; a process with another command line (the port was reused) is left alone.
kill_listeners() {
    local port pid cmd
    for port in "$@"; do
        for pid in $(listener_pids "$port"); do
            cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || continue
            [[ $cmd == "$NETRIG serve "* ]] && kill -KILL "$pid" 2>/dev/null
        done
    done
    return 0
}

# one_line FILE: the file holds exactly one line
one_line() { [[ $(wc -l <"$1") -eq 1 ]]; }
