# shellcheck shell=bash disable=SC2034,SC2001
# (SC2034: the variables set here are the callers'.)
# bench/lib.sh: shell helpers shared by bench/rr, bench/crr and bench/udp.
# Sourced, never run. bench/stream predates it and keeps its own copies.
#
# The caller sets SELF, defines usage(), sources this file, then calls, in order:
#   bench_args "$@"          --markdown / --help
#   bench_env                ROUNDS DURATION PIN SERVER_CPU CLIENT_CPU SETTLE NETRIG (validated)
#   bench_need TOOL...       every external tool the script runs
#   bench_outdir NAME        OUTDIR (a new /tmp/netrig-bench-NAME.XXXXXX unless set)
#   runs_init COLUMN...      OUTDIR/runs.tsv with that header
# and then start_server, run_client, runs_add, stats, paired and the formatting helpers.
# Everything runs on 127.0.0.1; servers started here are stopped by the EXIT trap.

HOST=127.0.0.1

die() { echo "$SELF: $*" >&2; exit 2; }
log() { echo "$*" >&2; }
isint() { [[ $1 =~ ^[0-9]+$ ]]; }

# ---------------------------------------------------------------- setup

bench_args() {
    MARKDOWN=0
    local arg
    for arg in "$@"; do
        case $arg in
        --markdown) MARKDOWN=1 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "$SELF: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
        esac
    done
}

# bench_env [EXTRA_INT_VAR...]: reads and checks the variables every script shares, plus the
# caller's integer variables (ports and the like), and sets the placement prefixes.
bench_env() {
    ROUNDS=${ROUNDS:-3}
    DURATION=${DURATION:-10}
    PIN=${PIN:-0}
    SERVER_CPU=${SERVER_CPU:-0}
    CLIENT_CPU=${CLIENT_CPU:-1}
    SETTLE=${SETTLE:-1}
    if [[ -z ${NETRIG:-} ]]; then
        NETRIG=$REPO/build-bench/netrig
        [[ -x $NETRIG ]] || NETRIG=$REPO/build/netrig
    fi
    local v
    for v in ROUNDS DURATION SETTLE SERVER_CPU CLIENT_CPU "$@"; do
        isint "${!v}" || die "$v must be a non-negative integer, not '${!v}'"
    done
    ((ROUNDS >= 1 && ROUNDS <= 100)) || die "ROUNDS must be 1..100"
    ((DURATION >= 1 && DURATION <= 3600)) || die "DURATION must be 1..3600 seconds"
    ((SETTLE <= 60)) || die "SETTLE must be 0..60 seconds"
    [[ $PIN == 0 || $PIN == 1 ]] || die "PIN must be 0 or 1"
    [[ -x $NETRIG ]] || die "no netrig binary at $NETRIG; build it: cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF && cmake --build build-bench -j2 (or set NETRIG=)"

    NCPU=$(getconf _NPROCESSORS_ONLN)
    HZ=$(getconf CLK_TCK)
    if ((PIN)); then
        ((SERVER_CPU < NCPU && CLIENT_CPU < NCPU)) || die "PIN=1 needs CPUs $SERVER_CPU and $CLIENT_CPU; this host has $NCPU"
        SRV_PFX=(taskset -c "$SERVER_CPU")
        CLI_PFX=(taskset -c "$CLIENT_CPU")
        PLACEMENT="pinned: every server on CPU $SERVER_CPU, every client on CPU $CLIENT_CPU (taskset, all tools alike)"
        PLACEMENT_SHORT="pinned(server=$SERVER_CPU,client=$CLIENT_CPU)"
        REF_COL=pin
    else
        SRV_PFX=()
        CLI_PFX=()
        PLACEMENT="free: unpinned, the scheduler places servers and clients (set PIN=1 to pin)"
        PLACEMENT_SHORT=free
        REF_COL=free
    fi
}

bench_need() {
    local t
    for t in "$@" jq taskset timeout ss awk getconf sort; do
        command -v "$t" >/dev/null || die "'$t' is needed but not found"
    done
}

bench_outdir() {
    if [[ -z ${OUTDIR:-} ]]; then
        OUTDIR=$(mktemp -d "/tmp/netrig-bench-$1.XXXXXX")
    else
        mkdir -p "$OUTDIR"
    fi
}

# ---------------------------------------------------------------- servers and cleanup

SERVER_PIDS=()
declare -A SRV_PID=()
CLIENT_PID=
# reap PID: waits up to 3 s for a server told to stop, then kills it
reap() {
    local i
    for ((i = 0; i < 30; i++)); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}
cleanup() {
    local pid
    if [[ -n $CLIENT_PID ]]; then
        kill -TERM "$CLIENT_PID" 2>/dev/null || true
    fi
    for pid in "${SERVER_PIDS[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    for pid in "${SERVER_PIDS[@]}"; do
        reap "$pid"
    done
    SERVER_PIDS=()
}
trap cleanup EXIT
trap 'log "$SELF: interrupted"; exit 130' INT TERM
set -E
trap 'log "$SELF: unexpected failure at line $LINENO: $BASH_COMMAND"' ERR

# listening tcp|udp PORT
listening() {
    if [[ $1 == udp ]]; then
        [[ -n $(ss -Hlun "sport = :$2" 2>/dev/null) ]]
    else
        [[ -n $(ss -Hltn "sport = :$2" 2>/dev/null) ]]
    fi
}

# start_server NAME tcp|udp PORT PORTVAR CMD...: start CMD in the background (placed on the
# server CPU with PIN=1) and wait until it listens on PORT. The process started is CMD itself
# (taskset execs it), so its pid is what the trap stops.
start_server() {
    local name=$1 proto=$2 port=$3 var=$4 pid i
    shift 4
    listening "$proto" "$port" && die "$proto port $port (for $name) is already in use; set $var"
    "${SRV_PFX[@]}" "$@" >"$OUTDIR/server-$name.log" 2>&1 &
    pid=$!
    SERVER_PIDS+=("$pid")
    for ((i = 0; i < 100; i++)); do
        listening "$proto" "$port" && break
        kill -0 "$pid" 2>/dev/null || die "$name server exited: $(tail -3 "$OUTDIR/server-$name.log")"
        sleep 0.05
    done
    listening "$proto" "$port" || die "$name server does not listen on $proto port $port after 5 s"
    SRV_PID[$name]=$pid
}

# stop_server NAME: stops a server start_server started (for a server that must not run
# while other tools are measured, e.g. one that spins while idle)
stop_server() {
    local pid=${SRV_PID[$1]:-} i keep=()
    [[ -n $pid ]] || return 0
    kill -TERM "$pid" 2>/dev/null || true
    reap "$pid"
    for i in "${SERVER_PIDS[@]}"; do [[ $i == "$pid" ]] || keep+=("$i"); done
    SERVER_PIDS=("${keep[@]}")
    unset "SRV_PID[$1]"
}

# ---------------------------------------------------------------- running a client

# prints "busy total" jiffies of all CPUs from /proc/stat
cpu_jiffies() {
    local _c user nice system idle iowait irq softirq steal _rest
    read -r _c user nice system idle iowait irq softirq steal _rest </proc/stat
    echo "$((user + nice + system + irq + softirq + steal)) $((user + nice + system + irq + softirq + steal + idle + iowait))"
}

now_s() { date +%s.%N; }

# run_client BASE TIMEOUT_S CMD...: runs CMD under `timeout` and the client placement, stdout
# to BASE.out, stderr to BASE.err, its exact command line in BASE.cmd. Sets RC (exit
# status), CPU_S (busy CPU-seconds of the whole machine from client start to exit, from
# /proc/stat) and WALL_S.
run_client() {
    local base=$1 tmo=$2 j0 j1 t0 t1 b0 b1
    shift 2
    local cmd=(timeout -k 5 "$tmo" "${CLI_PFX[@]}" "$@")
    printf '%q ' "${cmd[@]}" >"$base.cmd"
    echo >>"$base.cmd"
    j0=$(cpu_jiffies)
    t0=$(now_s)
    "${cmd[@]}" >"$base.out" 2>"$base.err" &
    CLIENT_PID=$!
    RC=0
    wait "$CLIENT_PID" || RC=$?
    CLIENT_PID=
    t1=$(now_s)
    j1=$(cpu_jiffies)
    read -r b0 _ <<<"$j0"
    read -r b1 _ <<<"$j1"
    CPU_S=$(awk -v b=$((b1 - b0)) -v hz="$HZ" 'BEGIN { printf "%.3f\n", b / hz }')
    WALL_S=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }')
}

# report_failure BASE TEXT: log a failed run with the tail of its output
report_failure() {
    log "  FAILED: $2; see $1.out / $1.err:"
    tail -n 3 "$1.err" "$1.out" 2>/dev/null | sed 's/^/    /' >&2 || true
}

idle_busy_cores() {
    local b0 t0 b1 t1
    read -r b0 t0 <<<"$(cpu_jiffies)"
    sleep 1
    read -r b1 t1 <<<"$(cpu_jiffies)"
    awk -v b=$((b1 - b0)) -v t=$((t1 - t0)) -v n="$NCPU" 'BEGIN { printf "%.2f\n", (t > 0 ? b / t * n : 0) }'
}

# bench_start TITLE: the header lines on stderr and the background-load check
bench_start() {
    NETRIG_VERSION=$("$NETRIG" -V 2>&1 | head -1 || true)
    CPU_MODEL=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
    STARTED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    log "$SELF: $ROUNDS rounds x ${DURATION}s on $HOST; scenarios: $SCENARIOS"
    log "placement: $PLACEMENT"
    log "raw output: $OUTDIR"
    BACKGROUND=$(idle_busy_cores)
    log "background load before start: $BACKGROUND busy cores of $NCPU"
    if awk -v b="$BACKGROUND" 'BEGIN { exit !(b > 0.10) }'; then
        log "WARNING: the machine is not idle; rates, latencies and CPU figures include other load"
    fi
    if ((ROUNDS < 3)); then log "note: fewer than 3 rounds; medians say little (smoke test only)"; fi
}

# bench_loop: every round runs, for each scenario of $SCENARIOS in order, the tools of
# ${TOOLS[scenario]}, the starting tool rotating by one place per round; run_one ROUND
# SCENARIO TOOL is the caller's. With ROTATE_SCENARIOS=1 the scenario order rotates too
# (round r starts r-1 places later), for scripts whose scenarios have one tool each.
bench_loop() {
    local r sc k n j tool first=1
    local -a tl sl order
    read -r -a sl <<<"$SCENARIOS"
    for ((r = 1; r <= ROUNDS; r++)); do
        log "round $r/$ROUNDS"
        order=()
        for ((j = 0; j < ${#sl[@]}; j++)); do
            if ((${ROTATE_SCENARIOS:-0})); then order+=("${sl[$(((j + r - 1) % ${#sl[@]}))]}"); else order+=("${sl[$j]}"); fi
        done
        for sc in "${order[@]}"; do
            read -r -a tl <<<"${TOOLS[$sc]}"
            n=${#tl[@]}
            for ((k = 0; k < n; k++)); do
                tool=${tl[$(((k + r - 1) % n))]}
                ((first)) || sleep "$SETTLE"
                first=0
                run_one "$r" "$sc" "$tool"
            done
        done
    done
}

# ---------------------------------------------------------------- runs.tsv and statistics

runs_init() {
    RUNS=$OUTDIR/runs.tsv
    local IFS=$'\t'
    echo "$*" >"$RUNS"
}
runs_add() {
    local IFS=$'\t'
    echo "$*" >>"$RUNS"
}
# colno NAME: column number of NAME in runs.tsv
colno() {
    awk -F'\t' -v n="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) { print i; exit } }' "$RUNS"
}

# stats SCENARIO TOOL COLUMN_NAME: "median min max n" over the successful runs, or "NA NA NA 0"
stats() {
    local c
    c=$(colno "$3")
    [[ -n $c ]] || die "internal: no column $3"
    awk -F'\t' -v s="$1" -v t="$2" -v c="$c" 'NR > 1 && $2 == s && $3 == t && $4 == "ok" && $c != "NA" { print $c }' "$RUNS" |
        sort -g | awk '{ a[NR] = $1 } END {
            if (NR == 0) { print "NA NA NA 0"; exit }
            m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
            print m, a[1], a[NR], NR }'
}

# paired SCENARIO TOOL COLUMN_NAME [SCENARIO_OF_TOOL]: min and max over the rounds of netrig's
# value / TOOL's value in the same round, "NA NA" when no round has both
paired() {
    local c
    c=$(colno "$3")
    awk -F'\t' -v s="$1" -v t="$2" -v s2="${4:-$1}" -v c="$c" 'NR > 1 && $4 == "ok" && $c != "NA" {
            if ($2 == s && $3 == "netrig") n[$1] = $c; else if ($2 == s2 && $3 == t) a[$1] = $c }
        END { for (r in n) if ((r in a) && a[r] > 0) { x = n[r] / a[r]; if (!k++ || x < lo) lo = x; if (k == 1 || x > hi) hi = x }
              if (k) printf "%.2f %.2f\n", lo, hi; else print "NA NA" }' "$RUNS"
}

div() { awk -v a="$1" -v b="$2" -v f="${3:-%.2f}" 'BEGIN { if (a == "NA" || b == "NA" || b + 0 == 0) print "NA"; else printf f "\n", a / b }'; }
fmt() { awk -v a="$1" -v f="${2:-%.2f}" 'BEGIN { if (a == "NA" || a == "") print "NA"; else printf f "\n", a }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "NA" && b != "NA" && a + 0 >= b + 0) }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "NA" && b != "NA" && a + 0 <= b + 0) }'; }
xfmt() { if [[ $1 == NA ]]; then echo NA; else echo "${1}x"; fi; }
# range MED MIN MAX [FORMAT]: "med (min-max)", or just "med" for a single run
range() {
    local f=${4:-%.1f}
    if [[ $1 == NA ]]; then echo NA; elif [[ $2 == "$3" ]]; then fmt "$1" "$f"; else echo "$(fmt "$1" "$f") ($(fmt "$2" "$f")-$(fmt "$3" "$f"))"; fi
}
# md TEXT: TEXT as a Markdown table cell: an en dash in "(min-max)" and for a lone "-"
md() {
    if [[ $1 == - ]]; then echo "–"; else sed 's/(\([^()]*\)-\([^()]*\))/(\1–\2)/' <<<"$1"; fi
}

# ---------------------------------------------------------------- netperf (a bench-only tool)

# shellcheck source=bench/netperf.sh
. "$REPO/bench/netperf.sh"

# start_netserver PORT PORTVAR: netserver in the foreground (-D; it forks one child per test)
# on 127.0.0.1, as a server of start_server (named netperf)
start_netserver() {
    start_server netperf tcp "$1" "$2" "$NETSERVER" -D -4 -L "$HOST" -p "$1"
}
