#!/usr/bin/env bash
# diagnose_matrix: `netrig diagnose` against injected bottlenecks on real round-trip times. Each
# cell is a path from lib.sh (`path RTT 1G [LOSS]`: two namespaces, the WAN emulator, tbf at a
# 1 Gbit/s line rate, goodput 956 Mbit/s), one bottleneck put on it, one congestion control
# (reno as the loss-based one: cubic is not allowed inside a network namespace here), and
# diagnose run without --rate (client sends) or with --rate 1G (-R: the server sends, so its
# figures come over the wire). The bottlenecks and the verdict each must give:
#   link    buffers of 256 MB at both ends: the tbf link       -> link_capacity
#   rwnd    the receiver's tcp_rmem max = BDP/2                -> rwnd_limited
#   sndbuf  the sender's tcp_wmem max = BDP/2                  -> sndbuf_limited
#   loss    1 % random loss each way, big buffers           -> reno: loss_limited (its Mathis
#           bound is 1.4 to 110 Mbit/s from 80 to 1 ms, far below the link); bbr: link_capacity
#           (bbr v1 keeps its rate through random loss below ~20 %: the link is what limits it)
#   paced   --fq-rate 100M                                     -> app_limited
#   cpu     1-byte writes (-l 1): the sending thread is CPU-bound -> tx_cpu_limited (24-29
#           Mbit/s on a 2026 Xeon vCPU; 64-byte writes reached the 956 Mbit/s link there)
# It prints one line per cell and a table (bottleneck x congestion control rows, RTT x rate
# columns), and fails on any wrong cell. BDP = 1 Gbit/s x RTT (1 ms: 125 kB).
#
# Which cells: MATRIX_CELLS ("row:cc:rtt:mode ...", mode "plain" or "rate"), or the product of
# MATRIX_ROWS x MATRIX_CCS x MATRIX_RTTS x MATRIX_MODES when MATRIX_CELLS=all. The default is the
# CI set, 10 cells on three paths (10 ms, 40 ms, 40 ms with 1 % loss): every bottleneck, each
# with both congestion controls or both modes between its cells, the link found both without
# --rate (bbr's small queue) and at --rate; bench/diagnose runs all 96. MATRIX_TIME: seconds
# measured per cell after diagnose's own warm-up (15 round trips, at least 0.25 s) [2].
# MATRIX_OUT: a file that receives the table too.
# Needs root, ip/tc, /dev/net/tun, tbf and chrt; exits 77 without them. The emulator runs at
# SCHED_FIFO 10 and netrig's ends at SCHED_FIFO 5, so other work on a busy host does not decide
# the verdicts; traffic stays in the namespaces (10.99.N.0/24).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh" "$@"

need_netns
command -v chrt >/dev/null 2>&1 || skip "needs chrt (util-linux)"
[[ -c /dev/net/tun ]] || skip "needs /dev/net/tun"

LINK=1G
LINK_BPS=1000000000
BIG=$((256 << 20))
TIME=${MATRIX_TIME:-2}
CI_CELLS="link:bbr:40:plain link:reno:40:rate rwnd:reno:40:plain rwnd:bbr:10:rate
sndbuf:reno:10:plain sndbuf:bbr:40:rate loss:reno:40:plain loss:bbr:40:rate
paced:bbr:10:plain cpu:reno:10:rate"
CELLS=${MATRIX_CELLS:-$CI_CELLS}
if [[ $CELLS == all ]]; then
    CELLS=
    for row in ${MATRIX_ROWS:-link rwnd sndbuf loss paced cpu}; do
        for cc in ${MATRIX_CCS:-reno bbr}; do
            for rtt in ${MATRIX_RTTS:-1 10 40 80}; do
                for mode in ${MATRIX_MODES:-plain rate}; do
                    CELLS+="$row:$cc:$rtt:$mode "
                done
            done
        done
    done
fi

expected() { # ROW CC
    case $1 in
    link) echo link_capacity ;;
    rwnd) echo rwnd_limited ;;
    sndbuf) echo sndbuf_limited ;;
    loss) [[ $2 == bbr ]] && echo link_capacity || echo loss_limited ;;
    paced) echo app_limited ;;
    cpu) echo tx_cpu_limited ;;
    esac
}

# big_buffers NS: the autotuning maximum of both buffers at 256 MB (80 ms x 1 Gbit/s needs 10 MB
# in flight, and reno fills the tbf queue of another BDP on top)
big_buffers() {
    ip netns exec "$1" sysctl -qw net.ipv4.tcp_rmem="4096 131072 $BIG" \
        net.ipv4.tcp_wmem="4096 16384 $BIG"
}

SRV_PID=
serve_stop() {
    if [[ -n $SRV_PID ]]; then
        kill -TERM "$SRV_PID" 2>/dev/null || true
        wait "$SRV_PID" 2>/dev/null || true
        SRV_PID=
    fi
}
# serve_start: the daemon in namespace b (a socket's default buffers are its namespace's at
# creation: the daemon restarts after they change)
serve_start() {
    serve_stop
    SRV_LOG=$T/serve.$RANDOM.log
    ip netns exec "$PATH_NS_B" chrt -f 5 "$NETRIG" serve -p 0 -B "$PATH_B" 2>"$SRV_LOG" &
    SRV_PID=$!
    track_pid "$SRV_PID"
    SRV_PORT=$(wait_for_port "$SRV_LOG" "$SRV_PID")
}

CUR_PATH=
# use_path RTT LOSS: the path for the next cells (a new one when they differ)
use_path() {
    local want="$1:$2"
    [[ $CUR_PATH == "$want" ]] && return 0
    serve_stop
    [[ -n $CUR_PATH ]] && path_down >/dev/null 2>&1
    CUR_PATH=$want
    if [[ -n $2 ]]; then path "${1}ms" "$LINK" "$2"; else path "${1}ms" "$LINK"; fi
    big_buffers "$PATH_NS_A"
    big_buffers "$PATH_NS_B"
    serve_start
}

# run_cell ROW CC RTT MODE: sets GOT, BPS, LINE
run_cell() {
    local row=$1 cc=$2 rtt=$3 mode=$4 snd_ns rcv_ns half args=(-C "$cc" -t "$TIME") rc=0
    local f=$T/$row.$cc.$rtt.$mode.json
    half=$((LINK_BPS / 8 * rtt / 1000 / 2))
    snd_ns=$PATH_NS_A rcv_ns=$PATH_NS_B
    if [[ $mode == rate ]]; then
        args+=(--rate "$LINK" -R)
        snd_ns=$PATH_NS_B rcv_ns=$PATH_NS_A
    fi
    case $row in
    rwnd) ip netns exec "$rcv_ns" sysctl -qw net.ipv4.tcp_rmem="4096 $((half / 2)) $half" ;;
    sndbuf) ip netns exec "$snd_ns" sysctl -qw net.ipv4.tcp_wmem="4096 $((half / 2)) $half" ;;
    paced) args+=(--fq-rate 100M) ;;
    cpu) args+=(-l 1) ;;
    esac
    [[ $row == rwnd || $row == sndbuf ]] && serve_start
    ip netns exec "$PATH_NS_A" timeout -s KILL 90 chrt -f 5 "$NETRIG" diagnose -c "$PATH_B" \
        -p "$SRV_PORT" -J "${args[@]}" >"$f" 2>"$T/diag.err" || rc=$?
    big_buffers "$PATH_NS_A"
    big_buffers "$PATH_NS_B"
    [[ $row == rwnd || $row == sndbuf ]] && serve_start
    if [[ $rc -ne 0 ]] || ! jq -e .verdict.id "$f" >/dev/null 2>&1; then
        GOT="exit$rc"
        BPS=0
        LINE="diagnose failed: $(head -c 200 "$T/diag.err" | tr '\n' ' ')"
        return 0
    fi
    GOT=$(jq -r .verdict.id "$f")
    BPS=$(jq '.test.throughput_bps / 1e6 | round' "$f")
    LINE=$(jq -r '"\(.test.throughput_bps / 1e6 | round) Mbit/s; srtt-min \(.verdict.figures.queue_delay_us / 1000 * 100 | round / 100) ms; window \(.verdict.figures.window_use * 100 | round)%, buffer \(.verdict.figures.buffer_use * 100 | round)% full; sender waited \(.ends.sender.wait_fraction * 100 | round)%; loss \(.verdict.figures.loss * 100 * 1000 | round / 1000)%, Mathis \(.verdict.figures.mathis_bound_bps / 1e6 | round) Mbit/s; plateau \(.test.plateau * 100 | round)%"' "$f")
}

declare -A RESULT
WRONG=0
N=0
# the cells sorted by the path they need, so each path is built once
mapfile -t SORTED < <(for c in $CELLS; do
    IFS=: read -r row cc rtt mode <<<"$c"
    loss=
    [[ $row == loss ]] && loss=1%
    printf '%s %s %s\n' "$rtt" "${loss:-none}" "$c"
done | sort -n -k1,1 -k2,2)
START=$(now_ms)
for entry in "${SORTED[@]}"; do
    read -r rtt loss cell <<<"$entry"
    IFS=: read -r row cc _ mode <<<"$cell"
    [[ $loss == none ]] && loss=
    use_path "$rtt" "$loss"
    want=$(expected "$row" "$cc")
    run_cell "$row" "$cc" "$rtt" "$mode"
    N=$((N + 1))
    mark=ok
    if [[ $GOT != "$want" ]]; then
        mark=WRONG
        WRONG=$((WRONG + 1))
        fail "$row $cc ${rtt}ms $mode: verdict $GOT, expected $want ($LINE)"
    fi
    RESULT[$row:$cc:$rtt:$mode]=$mark:$GOT
    log "$(printf '%-6s %-4s %2s ms %-5s %-15s %-5s %s' "$row" "$cc" "$rtt" "$mode" "$GOT" "$mark" "$LINE")"
done
serve_stop

# the table: a row per bottleneck and congestion control, a column per RTT and rate mode
table() {
    local rtts modes row cc rtt mode r
    rtts=$(for c in $CELLS; do echo "${c#*:*:}" | cut -d: -f1; done | sort -nu | tr '\n' ' ')
    modes="plain rate"
    printf '%-13s' "cell"
    for rtt in $rtts; do for mode in $modes; do
        printf ' %-16s' "${rtt}ms $([[ $mode == rate ]] && echo "--rate" || echo "")"
    done; done
    echo
    for row in link rwnd sndbuf loss paced cpu; do
        for cc in reno bbr; do
            printf '%-13s' "$row/$cc"
            for rtt in $rtts; do for mode in $modes; do
                r=${RESULT[$row:$cc:$rtt:$mode]:-}
                if [[ -z $r ]]; then printf ' %-16s' "."; continue; fi
                [[ $r == ok:* ]] && printf ' %-16s' "${r#ok:}" || printf ' %-16s' "!${r#WRONG:}"
            done; done
            echo
        done
    done
    echo "$N cells, $WRONG wrong (! marks a wrong verdict), $(( ($(now_ms) - START) / 1000 )) s"
}
table | tee "${MATRIX_OUT:-/dev/null}"
finish
