#!/usr/bin/env bash
# serve_daemon: what scripts need from `netrig serve -D --pidfile FILE`:
#  - when the command returns, FILE already exists and names the running daemon, so that
#    `netrig serve -D --pidfile F && kill $(cat F)` works;
#  - a relative FILE is taken relative to the caller's working directory;
#  - a FILE that cannot be written makes the command fail (non-zero, message on stderr)
#    instead of returning 0 while the daemon dies unseen (its message goes to syslog).
# The first and last need the foreground process to wait until the daemon is ready (or has
# failed), e.g. over a pipe, instead of exiting right after the first fork.
# serve_concurrency covers the working path (detach, serve, kill via the pid).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

# Every daemon started here is found by its listening port and killed by pid at exit,
# whether or not it wrote the pid file where we expected.
command -v ss >/dev/null 2>&1 || skip "ss (iproute2) is needed to find detached daemons"
DAEMON_PORTS=()
on_exit 'kill_listeners "${DAEMON_PORTS[@]}"'

# start_daemon LOG PIDFILE: runs `serve -p 0 -B 127.0.0.1 -D --pidfile PIDFILE` in $T;
# sets D_RC, D_PORT, and D_HAD_PIDFILE (the pid file existed the moment the command returned)
start_daemon() {
    local logf=$1 pidf=$2
    D_RC=0
    D_HAD_PIDFILE=0
    (cd "$T" && exec "$NETRIG" serve -p 0 -B 127.0.0.1 -D --pidfile "$pidf") 2>"$logf" || D_RC=$?
    (cd "$T" && [[ -s $pidf ]]) && D_HAD_PIDFILE=1
    D_PORT=$(sed -n 's/.*listening on .* port \([0-9][0-9]*\) .*/\1/p' "$logf" | head -n1)
    [[ -n $D_PORT ]] && DAEMON_PORTS+=("$D_PORT")
    return 0
}

# ---- 1. the pid file is there when the command returns (checked 5 times: it is a race)
missing=0
wrong=0
for i in 1 2 3 4 5; do
    pidf=$T/d$i.pid
    start_daemon "$T/d$i.log" "$pidf"
    check "run $i: serve -D exits 0 (got $D_RC)" test "$D_RC" -eq 0
    [[ $D_HAD_PIDFILE -eq 1 ]] || missing=$((missing + 1))
    for _ in $(seq 100); do [[ -s $pidf ]] && break; sleep 0.05; done
    dpid=$(cat "$pidf" 2>/dev/null || true)
    # the named process holds the listening socket (the short-lived intermediate processes
    # of the double fork may hold it too for a moment, so: one of the holders)
    if [[ -z $dpid ]] || ! listener_pids "${D_PORT:-1}" | grep -qx "$dpid"; then
        wrong=$((wrong + 1))
    fi
    kill_listeners "${D_PORT:-1}"
done
check "pid file exists as soon as 'serve -D --pidfile' returns (missing in $missing of 5 runs)" \
    test "$missing" -eq 0
check "pid file names the daemon listening on the port (wrong in $wrong of 5 runs)" test "$wrong" -eq 0

# ---- 2. a relative pid file path is relative to where the command was run
rel=netrig-it-$$.pid
on_exit "rm -f '/$rel'"
start_daemon "$T/rel.log" "$rel"
check "relative --pidfile: serve -D exits 0 (got $D_RC)" test "$D_RC" -eq 0
for _ in $(seq 40); do [[ -s $T/$rel || -s /$rel ]] && break; sleep 0.05; done
check "relative --pidfile $rel: written in the caller's directory, not in / ($(ls "/$rel" 2>/dev/null))" \
    test -s "$T/$rel"
kill_listeners "${D_PORT:-1}"

# ---- 3. an unwritable pid file is an error the caller sees
start_daemon "$T/bad.log" "$T/no/such/dir/netrig.pid"
sleep 0.5
bpid=$(listener_pids "${D_PORT:-1}" | head -n1)
check "unwritable --pidfile: serve -D exits non-zero (got $D_RC; daemon still running: ${bpid:-no})" \
    test "$D_RC" -ne 0
check "unwritable --pidfile: the error is on stderr ($(tr '\n' '|' <"$T/bad.log" | head -c 300))" \
    grep -q 'pid file' "$T/bad.log"

finish
