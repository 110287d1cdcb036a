# shellcheck shell=bash
# Helpers shared by iperf3_compat.sh, iperf3_rates.sh and iperf3_serve.sh (sourced after
# lib.sh): all need Debian's iperf3, and all run commands into $T/NAME.json and check their
# exit status.

command -v iperf3 >/dev/null 2>&1 || skip "iperf3 is not installed (apt-get install iperf3)"
log "$(iperf3 --version | head -n1)"

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

# nr NAME ARGS...: netrig stream --iperf3 -J against the iperf3 server on I3_PORT, exit 0
nr() {
    local name=$1
    shift
    run "$name" "$NETRIG" stream --iperf3 -c 127.0.0.1 -p "$I3_PORT" --no-save -J "$@"
    ok "$name"
}
