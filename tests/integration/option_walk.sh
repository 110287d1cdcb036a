#!/usr/bin/env bash
# option_walk: every option of the measurement commands (stream, rr, crr) against every test
# kind — TCP stream, UDP stream, reverse, bidir, TCP rr, UDP rr, crr, a stream to an iperf3
# server, and the stream diagnose runs — is either accepted AND applied (exit 0, and the JSON
# or text shows its effect), or refused with exit 2, one line on stderr that names it, and
# nothing on stdout. Never ignored.
#
# The options come from the getopt table in src/cli/cli_measure.c: one the table below does
# not describe fails the test, so a new option cannot skip this walk. Then the commands that
# run those tests their own way (sweep, diagnose) refuse the command-line-only options.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SRC=$ROOT/src/cli/cli_measure.c

# ---- servers: netrig, and iperf3 when it is installed
start_server
NR_PORT=$SRV_PORT
I3_PORT=
if command -v iperf3 >/dev/null 2>&1; then
    start_tool_server "$T/iperf3-s.log" iperf3 -s -p PORT && I3_PORT=$TOOL_PORT
else
    log "iperf3 is not installed: the iperf3 kind is not walked"
fi

# ---- the test kinds: the command and the arguments that make the kind
declare -A KIND=(
    [st]="stream"
    [su]="stream -u -b 20M"
    [sr]="stream -R"
    [sb]="stream --bidir"
    [rt]="rr"
    [ru]="rr -u"
    [cr]="crr"
    [i3]="stream --iperf3"
    [dg]="diagnose"
)
KINDS="st su sr sb rt ru cr dg"
[[ -n $I3_PORT ]] && KINDS+=" i3"
ALL="st su sr sb rt ru cr i3"
# -b paces UDP streams, and TCP streams in the application (-b RATE[/BURST])
BITRATE="st su sr sb i3 dg"

# ---- what each option does, per kind:
#   NAME|ARGS|KINDS THAT ACCEPT IT|CHECK
# NAME is the getopt table's long name (or 4/6); ARGS are appended to the kind's command line
# (@T@ is the scratch directory). CHECK is a jq filter on the -J document that proves the
# option was applied; text:CMD runs CMD with the text report in $OUT instead (no -J);
# sh:CMD runs CMD after a -J run (the document in $OUT). "base" options are on every command
# line (-c, -p, -t, -i, -J) and checked on every accepted run.
SPEC=$(cat <<'EOF'
client|base
port|base
time|base
interval|-i 0.1|ALL dg|.params.interval_s == 0.1 and (.intervals | length) >= 1
json|base
help|help
4|-4|ALL dg|.server | startswith("127.0.0.1")
6|-6|ALL dg|.server | startswith("[::1]")
bind|-B 127.0.0.2|ALL dg|.params.test != null
omit|-O 0.1|st su sr sb rt ru cr dg|.params.omit_s == 0.1
parallel|-P 2|ALL dg|.params.flows == 2 and (.flows | length) == (if .params.direction == "bidir" then 4 else 2 end)
threads|-T 2 -P 2|ALL dg|.params.threads == 2 and .placement.client_threads == 2
server-threads|--server-threads 2 -P 2|st su sr sb rt ru cr dg|.params.server_threads == 2 and .placement.server_threads == 2
reverse|-R|st su sr i3 dg|.params.direction == "reverse"
bidir|--bidir|st su sb i3|.params.direction == "bidir"
length|-l 1200|st su sr sb i3 dg|.params.write_size == 1200
window|-w 256K|st su sr sb rt ru i3 dg|.params.window == 262144
congestion|-C reno|st sr sb rt cr i3 dg|.params.congestion == "reno"
mss|-M 1000|st sr sb rt i3 dg|.params.mss == 1000
nodelay|-N|st sr sb i3 dg|.params.nodelay == true
zerocopy|-Z|st sr sb i3 dg|.params.zerocopy == true
zerocopy-rx|--zerocopy-rx|st sr sb dg|.params.zerocopy_rx == true
skip-rx-copy|--skip-rx-copy|st sr sb dg|.params.skip_rx_copy == true
fq-rate|--fq-rate 2G|st sr sb i3 dg|.params.fq_rate_bps == 2000000000
notsent-lowat|--notsent-lowat 64K|st sr sb i3 dg|.params.notsent_lowat == 65536 and ([.flows[] | select(.notsent_lowat == 65536)] | length) >= 1
affinity|-A 0|ALL dg|.placement.client_cpus == "0"
server-cpus|--server-cpus 0|st su sr sb rt ru cr dg|.placement.server_cpus == "0"
title|--title walk-x|ALL dg|.params.title == "walk-x"
sample|--sample 100ms|ALL dg|.params.sample_s == 0.1
samples|--samples --sample 50ms|ALL|.samples.client != null
timeout|--timeout 3s|ALL dg|.params.test != null
udp|-u|st su sr sb rt ru i3|.params.udp == true
bitrate|-b 30M|@BITRATE@|.params.udp_rate_bps == 30000000 or .params.app_rate_bps == 30000000
pps|--pps 2000|su|.params.udp_pps == 2000
size|-r 64,1K|rt ru cr|.params.req_size == 64 and .params.resp_size == 1024
depth|--depth 4|rt ru|.params.depth == 4
rate|--rate 500|rt ru|.params.rate_tps == 500
connect-only|--connect-only|cr|.params.connect_only == true
busy-poll|--busy-poll|rt ru cr|.params.busy_poll == true
txn-timeout|--txn-timeout 1s|rt ru cr|.params.txn_timeout_s == 1
histogram|--histogram @T@/h|rt ru cr|sh:[[ -s $T/h ]] && rm -f "$T/h"
db|--db @T@/walk.db|ALL dg|sh:[[ -s $T/walk.db ]] && rm -f "$T/walk.db"*
no-save|--no-save|ALL dg|sh:[[ ! -e $T/data/netrig/history.db ]]
json-stream|--json-stream -i 0.1|ALL|sh:[[ $(jq -s length "$OUT") -eq $(wc -l <"$OUT") ]] && jq -e -s 'length >= 2 and (.[-1].params.interval_s == 0.1) and (.[0].params == null)' "$OUT" >/dev/null
live|--live|st su sr sb rt ru cr|text:grep -qE '^(Throughput|Rate) ' "$OUT" && ! grep -q $'\e' "$OUT"
no-live|--no-live|ALL|text:grep -qE '^(Throughput|Rate) ' "$OUT" && ! grep -q $'\e' "$OUT"
logfile|--logfile @T@/log|ALL|text:[[ ! -s $OUT ]] && grep -qE '^(Throughput|Rate) ' "$T/log" && rm -f "$T/log"
timestamps|--timestamps=@%s@ |ALL|text:grep -qE '^@[0-9]{10}@ (Throughput|Rate) ' "$OUT" && ! grep -qvE '^(@[0-9]{10}@ .*)?$' "$OUT"
forceflush|--forceflush|ALL|text:grep -qE '^(Throughput|Rate) ' "$OUT"
iperf3|kind i3
bytes|-n 1M|st su sr sb i3 dg|.params.bytes_limit == 1048576
blocks|-k 10|st su sr sb i3 dg|.params.blocks_limit == 10
tos|-S 0x20|ALL dg|.params.tos == 32
dscp|--dscp AF11|ALL dg|.params.tos == 40
cport|--cport @CPORT@|st su sr sb rt ru i3 dg|.params.test != null
bind-dev|--bind-dev lo|ALL dg|.params.test != null
dont-fragment|--dont-fragment|su ru|.params.dont_fragment == true
mptcp|--mptcp|st sr sb rt|.params.mptcp == true and all(.flows[]; .mptcp.client.subflow_count >= 1 and .mptcp.server.subflow_count >= 1)
user|elsewhere serve_access.sh (--auth-file)
credentials|elsewhere serve_access.sh (--auth-file)
from|elsewhere netns_mesh.sh (third-party tests)
EOF
)

declare -A S_ARGS S_OK S_CHECK SEEN
while IFS='|' read -r name args ok check; do
    [[ -z $name ]] && continue
    S_ARGS[$name]=$args
    ok=${ok/ALL/$ALL}
    S_OK[$name]=${ok/@BITRATE@/$BITRATE}
    S_CHECK[$name]=$check
done <<<"$SPEC"

# ---- every option of the getopt table is described
table=$(grep -oE '\{"[a-z0-9-]+", *(no|required|optional)_argument' "$SRC" | sed -E 's/\{"([^"]+)".*/\1/')
[[ -n $table ]] || fail "no getopt table found in $SRC"
for name in $table 4 6; do
    [[ -n ${S_ARGS[$name]+x} ]] || fail "option --$name of $SRC is not in the walk: describe it in $0"
done

# refused CMD...: exit 2, one line naming the option on stderr, nothing on stdout
refused() {
    local what=$1 opt=$2 rc=0
    shift 2
    timeout 30 "$@" >"$T/out" 2>"$T/err" </dev/null || rc=$?
    if [[ $rc -ne 2 || $(wc -l <"$T/err") -ne 1 || -s $T/out ]]; then
        fail "$what: expected a refusal (exit 2, one line, no output); got exit $rc, stderr: $(head -c 300 "$T/err") stdout: $(head -c 200 "$T/out")"
        return
    fi
    grep -qiE -- "$opt" "$T/err" || fail "$what: the refusal does not name the option ($opt): $(cat "$T/err")"
}

base_args() { # KIND
    local port=$NR_PORT t=0.1
    [[ $1 == i3 ]] && port=$I3_PORT t=1
    echo "-c 127.0.0.1 -p $port -t $t -i 0"
}

# the option's names as a refusal may spell them: -X or --name
opt_re() {
    local name=$1 args=$2 short
    short=$(grep -oE "^-[A-Za-z0-9]\b" <<<"$args" || true)
    echo "--$name${short:+|$short( |:|$)|$short\b}"
}

walk() { # NAME KIND
    local name=$1 kind=$2 args check mode=json rc=0 cmd host cport
    args=${S_ARGS[$name]//@T@/$T}
    # a --cport no socket holds (not the iperf3 server's, no TIME_WAIT of an earlier walk)
    if [[ $args == *@CPORT@* ]]; then
        cport=$(low_port 8) || fail "no free ports for --cport below 32768"
        args=${args//@CPORT@/$cport}
    fi
    check=${S_CHECK[$name]}
    read -ra cmd <<<"${KIND[$kind]}"
    read -ra base <<<"$(base_args "$kind")"
    [[ $name == 6 ]] && base[1]=::1
    [[ $check == text:* ]] && mode=text
    # --timestamps=FORMAT holds a space: one word
    local extra=()
    if [[ $name == timestamps ]]; then extra=("$args"); else read -ra extra <<<"$args"; fi
    local argv=("$NETRIG" "${cmd[@]}" "${base[@]}")
    [[ $mode == json ]] && argv+=(-J)
    # nothing but the db and no-save rows writes the history (diagnose saves like any test)
    [[ $name != db && $name != no-save ]] && argv+=(--no-save)
    argv+=("${extra[@]}")
    local what="${KIND[$kind]} $args"
    if [[ " ${S_OK[$name]} " != *" $kind "* ]]; then
        refused "$what" "$(opt_re "$name" "$args")" "${argv[@]}"
        return
    fi
    rm -rf "$XDG_DATA_HOME"
    OUT=$T/out
    timeout 60 "${argv[@]}" >"$OUT" 2>"$T/err" </dev/null || rc=$?
    if [[ $rc -ne 0 ]]; then
        fail "$what: expected to be accepted, got exit $rc: $(head -c 300 "$T/err")"
        return
    fi
    # diagnose's document holds the run's as .run
    if [[ $kind == dg && $mode == json ]] && jq -e .run "$OUT" >/dev/null 2>&1; then
        jq .run "$OUT" >"$OUT.run" && mv "$OUT.run" "$OUT"
    fi
    case $check in
    text:*) bash -c "OUT='$OUT' T='$T'; ${check#text:}" || fail "$what: not applied (${check#text:}): $(head -c 300 "$OUT")" ;;
    sh:*) bash -c "OUT='$OUT' T='$T'; ${check#sh:}" || fail "$what: not applied (${check#sh:})" ;;
    *)
        local d=".params.duration_s == $([[ $kind == i3 ]] && echo 1 || echo 0.1)"
        jq -e "($d) and ($check)" "$OUT" >/dev/null 2>&1 ||
            fail "$what: not applied ($d and $check): $(jq -c '{params, placement, server}' "$OUT" 2>/dev/null | head -c 600)"
        ;;
    esac
}

# walk_kind KIND: every option against one kind, in a scratch directory of its own (T and the
# history are per kind), its failures as FAIL: lines on stdout
walk_kind() {
    local kind=$1 name n=0 t0=$SECONDS
    T=$T_ROOT/k.$kind
    mkdir -p "$T"
    export XDG_DATA_HOME=$T/data
    for name in $table 4 6; do
        case ${S_ARGS[$name]} in base | help | kind* | elsewhere*) continue ;; esac
        walk "$name" "$kind"
        n=$((n + 1))
    done
    log "$kind (${KIND[$kind]}): $n options walked in $((SECONDS - t0)) s, $FAILS failed"
}

# four lanes at once: the runs mostly wait (connect, teardown), the kinds share nothing but
# the servers
T_ROOT=$T
lanes=("i3 st" "su sr" "sb rt dg" "ru cr")
pids=()
for lane in "${lanes[@]}"; do
    (
        FAILS=0
        for kind in $lane; do
            if [[ " $KINDS " == *" $kind "* ]]; then walk_kind "$kind"; fi
        done
    ) >"$T/lane.${#pids[@]}" 2>&1 &
    pids+=($!)
    track_pid $!
done
for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || fail "walk lane ${lanes[$i]} ended with status $?"
    grep -v '^FAIL: ' "$T/lane.$i" || true
    while IFS= read -r line; do fail "${line#FAIL: }"; done < <(grep '^FAIL: ' "$T/lane.$i")
done

# the base options, applied on every accepted run above; --iperf3 is refused by rr and crr
refused "rr --iperf3" "--iperf3" "$NETRIG" rr --iperf3 -c 127.0.0.1 -t 1
refused "crr --iperf3" "--iperf3" "$NETRIG" crr --iperf3 -c 127.0.0.1 -t 1

# ---- sweep and diagnose run their tests their own way: the command-line-only options of a
# test are refused there, never ignored
for opt in --json-stream --live --no-live --no-save --iperf3 --from=h --logfile=x --timestamps \
    --forceflush; do
    refused "sweep stream $opt" "${opt%%=*}" "$NETRIG" sweep stream "$opt" --vary flows=1,2 --db "$T/sw.db"
    # diagnose saves its runs like any test, so --no-save applies to it (walked above)
    [[ $opt == --no-save ]] || refused "diagnose $opt" "${opt%%=*}" "$NETRIG" diagnose "$opt" -t 1
done
refused "sweep rr --histogram" "--histogram" "$NETRIG" sweep rr --histogram=x --vary flows=1,2 --db "$T/sw.db"
refused "sweep stream -r" "-r" "$NETRIG" sweep stream -r 10 --vary flows=1,2 --db "$T/sw.db"

finish
