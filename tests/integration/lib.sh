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
#     wait_until SECS DESC CMD...   poll CMD until it succeeds or SECS pass (the one readiness wait)
#     judge_rates        true unless a sanitizer build runs (NETRIG_SANITIZER, set by run.sh):
#                        wrap rate/timing checks of a "threads" test in `if judge_rates; then`
#     backlog_sampler NS DEV FILE / backlog_samplers_stop   sample a qdisc's backlog every 100 ms
#     listener_pids PORT / kill_listeners PORT...   find / kill detached daemons by port
#     conns_at PORT MIN  at least MIN established connections at local port PORT (wait_until)
#     need_netns         skip (77) unless root with `ip`, `tc` and network namespaces
#     new_netns TAG      a namespace nrlib-TAG-$$ (loopback up), deleted on exit; sets NETNS
#     veth_pair [RATE]   two namespaces joined by a veth pair (optionally tbf at RATE on both
#                        egresses): VETH_NS_A/B, VETH_A/B (addresses), VETH_DEV_A/B
#     path RTT [RATE [LOSS]]   two namespaces joined by the WAN emulator (tests/tools/wanem):
#                        PATH_NS_A/B, PATH_A/B (IPv4), PATH_A6/B6, PATH_DEV_A/B, PATH_PID,
#                        PATH_STATS; path_stats, path_dev_drops, path_down (below)
#     wait_path_up NS ADDR   bounded wait until ADDR answers from NS (a RST is enough)
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

# backlog_sampler NS DEV FILE: "unix_time backlog_bytes" of DEV's qdisc in NS every 100 ms into
# FILE until backlog_samplers_stop (or exit); the wait is a read timeout on a FIFO nobody
# writes: one process fewer per sample than sleep
BACKLOG_PIDS=()
backlog_sampler() {
    [[ -p $T/tick ]] || mkfifo "$T/tick"
    ip netns exec "$1" bash -c 'exec 3<>"$1"; while :; do o=$(tc -s qdisc show dev "$2")
        [[ $o =~ backlog\ ([0-9]+)b ]] && echo "$EPOCHREALTIME ${BASH_REMATCH[1]}"
        read -rt 0.1 -u 3 || :; done' sampler "$T/tick" "$2" >"$3" &
    track_pid $!
    BACKLOG_PIDS+=("$!")
}
backlog_samplers_stop() {
    kill "${BACKLOG_PIDS[@]}" 2>/dev/null || true
    wait "${BACKLOG_PIDS[@]}" 2>/dev/null || true
    BACKLOG_PIDS=()
}
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

# wait_until SECONDS DESC CMD...: the one way a test waits for readiness (a port listening, a link
# up, a file written, a process gone). Runs CMD every 50 ms until it succeeds (returns 0) or
# SECONDS of wall time have passed (prints "timed out after SECONDS s waiting for DESC" on
# standard error and returns 1). SECONDS may be fractional. Never a fixed sleep instead.
wait_until() {
    local secs=$1 desc=$2 deadline
    shift 2
    deadline=$(($(date +%s%N) / 1000000 + $(awk -v s="$secs" 'BEGIN { printf "%d", s * 1000 }')))
    while :; do
        "$@" && return 0
        (($(date +%s%N) / 1000000 >= deadline)) && break
        sleep 0.05
    done
    echo "timed out after $secs s waiting for $desc" >&2
    return 1
}

# wait_for_port LOGFILE PID: prints the port a `netrig serve -p 0` logged (waits at most
# NETRIG_START_WAIT seconds, default 20: a busy host may take a while to start a sanitizer
# build; a daemon that exits ends the wait at once).
_logged_port() {
    _PORT=$(sed -n 's/.*listening on .* port \([0-9][0-9]*\) .*/\1/p' "$1" 2>/dev/null | head -n1)
    [[ -n $_PORT ]] || ! kill -0 "$2" 2>/dev/null
}
wait_for_port() {
    local logf=$1 pid=$2 port=""
    _PORT=
    wait_until "${NETRIG_START_WAIT:-20}" "the daemon's port in $logf" _logged_port "$logf" "$pid" ||
        true
    port=$_PORT
    if [[ -z $port ]]; then
        echo "server did not report its port within ${NETRIG_START_WAIT:-20} s; its log:" >&2
        cat "$logf" >&2 || true
        return 1
    fi
    echo "$port"
}

# metrics_port LOG: the port of the daemon's --metrics endpoint, once its log names it (the
# line comes after the data port's, and later still on a slow build); empty after 10 s
_logged_metrics_port() { [[ -n $(_metrics_port_in "$1") ]]; }
_metrics_port_in() { sed -n 's/.*http:\/\/[^ ]*:\([0-9][0-9]*\)\/metrics.*/\1/p' "$1" | head -n1; }
metrics_port() {
    wait_until 10 "the metrics endpoint in $1" _logged_metrics_port "$1" || true
    _metrics_port_in "$1"
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

# low_port [COUNT]: prints a port in 20000-31999, below the ephemeral range (32768-) where no
# client connection takes a port, such that it and the COUNT-1 after it (default 1) have no TCP
# or UDP socket here in any state: for tool servers and --cport. Returns 1 after 100 draws.
low_port() {
    local n=${1:-1} p i
    for _ in $(seq 100); do
        p=$((RANDOM % (12000 - n) + 20000))
        for ((i = 0; i < n; i++)); do
            [[ -z $(ss -Hatun "sport = :$((p + i))" 2>/dev/null) ]] || continue 2
        done
        echo "$p"
        return 0
    done
    return 1
}

# start_tool_server LOG CMD...: a third-party server (iperf3 -s, iperf -s) in the background on a
# free port below the ephemeral range (32768-), where no client connection takes a port; the word
# PORT in CMD is replaced by it. Sets TOOL_PORT and TOOL_PID once it listens; if the tool exits
# (the port was bound after all) another port is tried. Returns 1 after 5 tries.
start_tool_server() {
    local logf=$1 p a try
    shift
    for try in 1 2 3 4 5; do
        p=$(low_port) || return 1
        local argv=()
        for a in "$@"; do [[ $a == PORT ]] && argv+=("$p") || argv+=("$a"); done
        "${argv[@]}" >"$logf.$try" 2>&1 &
        TOOL_PID=$!
        track_pid "$TOOL_PID"
        wait_until 10 "$1 listening on $p" _listening_or_gone "$p" "$TOOL_PID" 2>/dev/null || true
        if [[ -n $(ss -Hltn "sport = :$p" 2>/dev/null) ]]; then
            TOOL_PORT=$p
            return 0
        fi
        kill "$TOOL_PID" 2>/dev/null || true
        log "$1 did not listen on port $p: $(tail -n 2 "$logf.$try" | tr '\n' ' ')"
    done
    return 1
}

_listening_or_gone() { [[ -n $(ss -Hltn "sport = :$1" 2>/dev/null) ]] || ! alive "$2"; }

# alive PID: the process exists and is not a zombie
alive() {
    local st
    kill -0 "$1" 2>/dev/null || return 1
    st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
    [[ $st != Z* ]]
}

# wait_exit PID SECONDS: waits for a child to exit; sets WAIT_RC; returns 1 on timeout.
wait_exit() {
    local pid=$1 limit=$2
    wait_until "$limit" "process $pid to exit" _gone "$pid" 2>/dev/null || return 1
    WAIT_RC=0
    wait "$pid" || WAIT_RC=$?
    return 0
}
_gone() { ! alive "$1"; }

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

# conns_at PORT MIN: at least MIN established TCP connections whose local port is PORT (the
# daemon's side of its clients' connections), for wait_until
conns_at() { (($(ss -Htn state established "sport = :$1" 2>/dev/null | wc -l) >= $2)); }

# judge_rates: rates and timings mean something in this build (not under a sanitizer, whose
# slowdown is not the code's speed); logs once that they are not judged otherwise
_RATES_LOGGED=
judge_rates() {
    [[ -z ${NETRIG_SANITIZER:-} ]] && return 0
    [[ -n $_RATES_LOGGED ]] || log "rates and timings not judged under $NETRIG_SANITIZER (its slowdown is not netrig's speed)"
    _RATES_LOGGED=1
    return 1
}

# one_line FILE: the file holds exactly one line
one_line() { [[ $(wc -l <"$1") -eq 1 ]]; }

# ---- network namespaces ------------------------------------------------------------------
# Every namespace is named nrlib-TAG-PID after the test's shell; one left behind by a run that
# was killed before its trap ran (its PID gone) is deleted by the next run that makes one.

need_netns() {
    [[ $(id -u) -eq 0 ]] || skip "needs root for network namespaces"
    command -v ip >/dev/null 2>&1 || skip "needs ip (iproute2)"
    command -v tc >/dev/null 2>&1 || skip "needs tc (iproute2)"
}

_NETNS_REAPED=
_reap_stale_netns() {
    local ns owner
    [[ -n $_NETNS_REAPED ]] && return 0
    _NETNS_REAPED=1
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^nrlib-[a-z0-9]+-[0-9]+$' || true); do
        owner=${ns##*-}
        kill -0 "$owner" 2>/dev/null || ip netns del "$ns" 2>/dev/null || true
    done
}

# new_netns TAG: creates nrlib-TAG-$$ with its loopback up and sets NETNS to its name; deleted
# on exit (after the tracked processes are killed). TAG: lower-case letters and digits.
new_netns() {
    _reap_stale_netns
    NETNS=nrlib-$1-$$
    ip netns add "$NETNS" 2>"$T/netns.err" || skip "cannot create a network namespace: $(cat "$T/netns.err")"
    on_exit "ip netns del $NETNS"
    ip -n "$NETNS" link set lo up
}

# _bits RATE: a rate such as 500M, 1G, 2.5G, 100k or 200000000 in bit/s (decimal prefixes)
_bits() {
    awk -v r="$1" 'BEGIN {
        m = 1; u = substr(r, length(r)); n = r
        if (u == "k" || u == "K") m = 1e3; else if (u == "m" || u == "M") m = 1e6;
        else if (u == "g" || u == "G") m = 1e9
        if (m > 1) n = substr(r, 1, length(r) - 1)
        if (n !~ /^[0-9]+(\.[0-9]+)?$/) exit 1
        printf "%.0f\n", n * m }'
}

# _usecs TIME: 10ms, 500us, 1.5ms, 1s or a plain number of ms, in microseconds
_usecs() {
    awk -v t="$1" 'BEGIN {
        m = 1000; n = t
        if (t ~ /us$/) { m = 1; n = substr(t, 1, length(t) - 2) }
        else if (t ~ /ms$/) { n = substr(t, 1, length(t) - 2) }
        else if (t ~ /s$/) { m = 1e6; n = substr(t, 1, length(t) - 1) }
        if (n !~ /^[0-9]+(\.[0-9]+)?$/) exit 1
        printf "%.0f\n", n * m }'
}

# wait_path_up NS ADDR: waits (at most 20 s) until a TCP connect from NS to ADDR port 9 is
# refused: a RST from the far namespace means the path works both ways. Each probe may take
# the whole remaining time (a SYN lost before the path is up is retried by TCP itself).
_path_refuses() {
    local probe
    probe=$(ip netns exec "$1" timeout 5 bash -c "exec 3<>/dev/tcp/$2/9" 2>&1 || true)
    [[ $probe == *refused* ]]
}
wait_path_up() {
    wait_until 20 "an answer from $2 inside namespace $1" _path_refuses "$1" "$2"
}

# wait_link_up NS DEV: waits (at most 5 s) until DEV's operstate inside NS reads "up". The
# kernel sets it from its link-watch work, up to a second after `ip link set up`: a snapshot
# taken before then records "down" for a link that already carries traffic.
_link_up() { [[ $(ip netns exec "$1" cat "/sys/class/net/$2/operstate" 2>/dev/null) == up ]]; }
wait_link_up() {
    wait_until 10 "$2 in namespace $1 up (operstate)" _link_up "$1" "$2"
}

# _tbf NS DEV RATE_BITS LATENCY_US: tbf at RATE on DEV's egress in NS. The burst (PATH_BURST
# bytes, default 1 ms at the rate and at least 128 KB) holds the largest super-packet a device
# with TSO hands over (64 KB plus the headers of its segments, which tbf counts): a smaller
# burst makes tbf cut every super-packet into segments, and the emulator then moves one packet
# per segment. At low rates 128 KB lets a burst through at once after an idle period; a burst
# of a few packets costs accuracy instead (measured at 20M: 128 KB gives the arithmetic's
# 19.13 Mbit/s, 3028 bytes 18.3: tbf's timer fires late on a VM).
_tbf() {
    local burst=${PATH_BURST:-}
    [[ -n $burst ]] ||
        burst=$(awk -v r="$3" 'BEGIN { b = r / 8 / 1000; printf "%.0f", (b < 131072 ? 131072 : b) }')
    ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "${3}bit" burst "$burst" latency "${4}us" \
        2>"$T/tc.err" || skip "cannot add a tbf qdisc: $(cat "$T/tc.err")"
}

# veth_pair [RATE]: two namespaces (nrlib-vaN-$$, nrlib-vbN-$$, N counting the pairs) joined
# by a veth pair created with its ends inside them (nothing is ever in the host's namespace),
# 10.231.N.1/24 and .2/24; with RATE (200M, 1G), tbf at RATE (burst 64 KB, latency 50 ms) on
# both egresses, which on a veth counts 1514-byte frames. Sets VETH_NS_A/B, VETH_DEV_A/B
# (veth-a, veth-b), VETH_A/B. Waits until the link works.
_VETH_N=0
veth_pair() {
    local rate=${1:-}
    _VETH_N=$((_VETH_N + 1))
    need_netns
    new_netns "va$_VETH_N"; VETH_NS_A=$NETNS
    new_netns "vb$_VETH_N"; VETH_NS_B=$NETNS
    VETH_DEV_A=veth-a
    VETH_DEV_B=veth-b
    VETH_A=10.231.$_VETH_N.1
    VETH_B=10.231.$_VETH_N.2
    ip link add name "$VETH_DEV_A" netns "$VETH_NS_A" type veth peer name "$VETH_DEV_B" \
        netns "$VETH_NS_B" 2>"$T/veth.err" || skip "cannot create a veth pair: $(cat "$T/veth.err")"
    ip -n "$VETH_NS_A" addr add "$VETH_A/24" dev "$VETH_DEV_A"
    ip -n "$VETH_NS_B" addr add "$VETH_B/24" dev "$VETH_DEV_B"
    ip -n "$VETH_NS_A" link set "$VETH_DEV_A" up
    ip -n "$VETH_NS_B" link set "$VETH_DEV_B" up
    if [[ -n $rate ]]; then
        local bits
        bits=$(_bits "$rate") || { echo "veth_pair: bad rate '$rate'" >&2; return 1; }
        ip netns exec "$VETH_NS_A" tc qdisc add dev "$VETH_DEV_A" root tbf rate "${bits}bit" \
            burst 64kb latency 50ms 2>"$T/tc.err" || skip "cannot add a tbf qdisc: $(cat "$T/tc.err")"
        ip netns exec "$VETH_NS_B" tc qdisc add dev "$VETH_DEV_B" root tbf rate "${bits}bit" \
            burst 64kb latency 50ms
    fi
    wait_link_up "$VETH_NS_A" "$VETH_DEV_A"
    wait_link_up "$VETH_NS_B" "$VETH_DEV_B"
    wait_path_up "$VETH_NS_A" "$VETH_B"
}

# ---- the WAN emulator ----------------------------------------------------------------------
# path RTT [RATE [LOSS]]: two namespaces (nrlib-waN-$$, nrlib-wbN-$$) joined through two TUN
# devices (wanem-a, wanem-b) by tests/tools/wanem, which holds each packet RTT/2 each way.
#   RTT   10ms, 500us, 1.5ms, 0 (a plain number is ms)
#   RATE  the line rate of an Ethernet link (500M, 1G, 2.5G; "" or - for none): tbf on both
#         devices' egress. tbf on a TUN device counts IP bytes (there is no link header), so
#         it shapes at RATE x 1500/1514: MTU-sized packets then leave at exactly the rate
#         1514-byte frames would on Ethernet, and TCP at MSS 1448 gets RATE x 1448/1514 of
#         goodput, the same arithmetic as on a veth shaped to RATE. Its queue holds
#         PATH_QUEUE (default: the RTT, at least 5 ms) at the rate; its burst, PATH_BURST
#         bytes (default: 1 ms at the rate, at least 128 KB; see _tbf).
#   LOSS  per wire segment, both ways: 1% or 0.01 (seeded random, seed PATH_SEED or 1),
#         every:N (every Nth segment), or per direction X,Y (a->b, b->a)
# PATH_WANEM_OPTS adds emulator options (--jitter, --reorder, --limit ...); PATH_RT (default
# 10) is the emulator's SCHED_FIFO priority, 0 for none. The devices keep MTU 1500 (MSS 1448);
# TSO lets the kernel hand the emulator 64 KB super-packets. Sets:
#   PATH_NS_A, PATH_NS_B     the namespaces
#   PATH_A, PATH_B           10.99.N.1 and .2 (IPv4); PATH_A6, PATH_B6: fd99::N:1 and :2
#   PATH_DEV_A, PATH_DEV_B   the devices (in PATH_NS_A and PATH_NS_B)
#   PATH_PID                 the emulator (killed on exit; path_down stops it cleanly)
#   PATH_STATS               its counters (JSON; path_stats refreshes them)
#   PATH_ID                  N: with several paths, `path_select N` sets the PATH_* of path
#                            N again (path_stats, path_dev_drops, path_down use them)
# Waits until the path works. Nothing of it is in the host's namespace: the emulator runs
# there but creates each device inside its namespace, and a device lives only as long as the
# emulator holds it open.
_PATH_N=0
path() {
    local rtt=${1:?usage: path RTT [RATE [LOSS]]} rate=${2:-} loss=${3:-} rtt_us bits lat_us
    local opts=()
    need_netns
    WANEM=${NETRIG_WANEM:-$(dirname "$NETRIG")/tests/tools/wanem}
    [[ -x $WANEM ]] || { echo "path: the emulator '$WANEM' is not built (set NETRIG_WANEM)" >&2; return 1; }
    [[ -c /dev/net/tun ]] || skip "needs /dev/net/tun"
    rtt_us=$(_usecs "$rtt") || { echo "path: bad RTT '$rtt'" >&2; return 1; }
    [[ $rate == - ]] && rate=
    _PATH_N=$((_PATH_N + 1))
    new_netns "wa$_PATH_N"; PATH_NS_A=$NETNS
    new_netns "wb$_PATH_N"; PATH_NS_B=$NETNS
    PATH_DEV_A=wanem-a
    PATH_DEV_B=wanem-b
    PATH_A=10.99.$_PATH_N.1
    PATH_B=10.99.$_PATH_N.2
    PATH_A6=fd99::$_PATH_N:1
    PATH_B6=fd99::$_PATH_N:2
    PATH_STATS=$T/wanem.$_PATH_N.json
    if [[ $loss == every:* ]]; then
        opts+=(--loss-every "${loss#every:}")
    elif [[ -n $loss ]]; then
        opts+=(--loss "$loss")
    fi
    [[ ${PATH_RT:-10} != 0 ]] && opts+=(--rt "${PATH_RT:-10}")
    # shellcheck disable=SC2206 # word splitting of the extra options is the point
    opts+=(--seed "${PATH_SEED:-1}" ${PATH_WANEM_OPTS:-})
    rm -f "$T/wanem.ready"
    "$WANEM" --ns-a "$PATH_NS_A" --ns-b "$PATH_NS_B" --rtt "${rtt_us}us" "${opts[@]}" \
        --ready "$T/wanem.ready" --stats "$PATH_STATS" --die-with-parent \
        2>"$T/wanem.$_PATH_N.err" &
    PATH_PID=$!
    track_pid "$PATH_PID"
    wait_until 20 "the emulator's ready file" _ready_or_gone "$T/wanem.ready" "$PATH_PID" || true
    if [[ ! -s $T/wanem.ready ]]; then
        echo "path: the emulator did not start: $(head -c 300 "$T/wanem.$_PATH_N.err")" >&2
        return 1
    fi
    ip -n "$PATH_NS_A" addr add "$PATH_A/24" dev "$PATH_DEV_A"
    ip -n "$PATH_NS_B" addr add "$PATH_B/24" dev "$PATH_DEV_B"
    ip -n "$PATH_NS_A" addr add "$PATH_A6/112" dev "$PATH_DEV_A" nodad
    ip -n "$PATH_NS_B" addr add "$PATH_B6/112" dev "$PATH_DEV_B" nodad
    # a long transmit ring: a brief stall of the emulator must not drop packets at the device
    ip -n "$PATH_NS_A" link set "$PATH_DEV_A" mtu 1500 txqueuelen 4000 up
    ip -n "$PATH_NS_B" link set "$PATH_DEV_B" mtu 1500 txqueuelen 4000 up
    if [[ -n $rate ]]; then
        bits=$(_bits "$rate") || { echo "path: bad rate '$rate'" >&2; return 1; }
        bits=$(awk -v b="$bits" 'BEGIN { printf "%.0f", b * 1500 / 1514 }')
        lat_us=$(_usecs "${PATH_QUEUE:-${rtt_us}us}") || { echo "path: bad PATH_QUEUE" >&2; return 1; }
        ((lat_us < 5000)) && lat_us=5000
        _tbf "$PATH_NS_A" "$PATH_DEV_A" "$bits" "$lat_us"
        _tbf "$PATH_NS_B" "$PATH_DEV_B" "$bits" "$lat_us"
    fi
    PATH_ID=$_PATH_N
    _PATH_SAVED[PATH_ID]="$PATH_NS_A $PATH_NS_B $PATH_A $PATH_B $PATH_A6 $PATH_B6 $PATH_PID $PATH_STATS"
    wait_path_up "$PATH_NS_A" "$PATH_B"
}

_ready_or_gone() { [[ -s $1 ]] || ! alive "$2"; }

# path_select N: makes path N (its PATH_ID) the current one again
_PATH_SAVED=()
path_select() {
    local saved=${_PATH_SAVED[$1]:?no path $1}
    read -r PATH_NS_A PATH_NS_B PATH_A PATH_B PATH_A6 PATH_B6 PATH_PID PATH_STATS <<<"$saved"
    PATH_ID=$1
}

# path_stats: asks the emulator for its counters (SIGUSR1) and waits (at most 10 s) until
# PATH_STATS holds them
path_stats() {
    rm -f "$PATH_STATS"
    kill -USR1 "$PATH_PID" 2>/dev/null || return 1
    wait_until 10 "the emulator's counters (pid $PATH_PID)" test -s "$PATH_STATS"
}

# path_dev_drops: packets the two TUN devices dropped on transmit (their ring was full: the
# emulator did not read fast enough) since they were created
path_dev_drops() {
    local a b
    a=$(ip -n "$PATH_NS_A" -s -j link show "$PATH_DEV_A" | jq '.[0].stats64.tx.dropped')
    b=$(ip -n "$PATH_NS_B" -s -j link show "$PATH_DEV_B" | jq '.[0].stats64.tx.dropped')
    echo $((a + b))
}

# path_down: stops the emulator with SIGTERM (its final counters go to PATH_STATS) and
# deletes both namespaces; returns 1 (with a message) if it did not exit with status 0 within
# 5 s or its devices outlived it
path_down() {
    local rc=0 dev
    rm -f "$PATH_STATS"
    kill -TERM "$PATH_PID" 2>/dev/null || true
    if wait_exit "$PATH_PID" 5; then
        [[ $WAIT_RC -eq 0 ]] || { echo "path_down: the emulator exited with $WAIT_RC" >&2; rc=1; }
    else
        kill -KILL "$PATH_PID" 2>/dev/null
        echo "path_down: the emulator did not stop on SIGTERM within 5 s" >&2
        rc=1
    fi
    for dev in "$PATH_NS_A $PATH_DEV_A" "$PATH_NS_B $PATH_DEV_B"; do
        # shellcheck disable=SC2086 # two words: namespace and device
        set -- $dev
        if ip -n "$1" link show "$2" >/dev/null 2>&1; then
            echo "path_down: device $2 is still in $1 after the emulator exited" >&2
            rc=1
        fi
    done
    ip netns del "$PATH_NS_A" 2>/dev/null || true
    ip netns del "$PATH_NS_B" 2>/dev/null || true
    return $rc
}
