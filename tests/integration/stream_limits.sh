#!/usr/bin/env bash
# stream_limits: the data side of an iperf3 user's habits, against a netrig daemon on loopback.
#   -n / -k: a transfer of a fixed size, exact in total over all flows (receiver bytes summed),
#     forward, -R, --bidir (each way), UDP (datagrams; a short last one), with -t (first wins),
#     with -O; the JSON says what ended the test; the daemon's --max-duration ends an endless one.
#   -b RATE[/BURST] on TCP: within 5% of the rate over 3 s (sender and receiver).
#   --cport: the daemon sees the data connections come from PORT, PORT + 1.
#   Options that do not apply are refused with exit 2 (--pps, --dont-fragment on TCP, -n on
#   rr, --cport on crr, bad -S/--dscp/--bind-dev values).
#   Server detection: an iperf3 server (and an iperf2 one, when installed) is named at once.
# Rates are measured, so the test runs alone (RUN_SERIAL).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

# run NAME ARGS...: netrig ARGS (bounded) with stdout in $T/NAME.json, stderr in $T/NAME.err; RC
run() {
    local name=$1
    shift
    RC=0
    timeout 60 "$NETRIG" "$@" >"$T/$name.json" 2>"$T/$name.err" || RC=$?
}
ok() { check "$1: exit status 0 (got $RC; $(head -c 300 "$T/$1.err"))" test "$RC" -eq 0; }

start_server
log "daemon pid $SRV_PID port $SRV_PORT"
S=(-c 127.0.0.1 -p "$SRV_PORT" --no-save -J)
MiB=1048576

# ---------------------------------------------------------------- -n and -k, exact
run n4 stream "${S[@]}" -n 100M -P 4
ok n4
check_jq "-n 100M -P 4: the receivers got exactly 100 MiB in all, the senders sent it" "$T/n4.json" \
    '([.flows[].bytes] | add) == 100 * $m and ([.flows[].sender_bytes] | add) == 100 * $m and
     (.flows | length) == 4 and all(.flows[]; .bytes > 0 and .bytes == .sender_bytes) and
     .ended_by == "bytes" and .partial == false and .params.bytes_limit == 100 * $m and
     .params.duration_s == 0' --argjson m "$MiB"
run nrev stream "${S[@]}" -n 30M -P 3 -R -T 2
ok nrev
check_jq "-n 30M -P 3 -R: the server's senders stopped at exactly 30 MiB" "$T/nrev.json" \
    '([.flows[].bytes] | add) == 30 * $m and ([.flows[].sender_bytes] | add) == 30 * $m and
     all(.flows[]; .direction == "server_to_client") and .ended_by == "bytes"' --argjson m "$MiB"
run nbidir stream "${S[@]}" -n 20M -P 2 --bidir
ok nbidir
check_jq "-n 20M --bidir: 20 MiB each way, exactly" "$T/nbidir.json" \
    '([.flows[] | select(.direction == "client_to_server") | .bytes] | add) == 20 * $m and
     ([.flows[] | select(.direction == "server_to_client") | .bytes] | add) == 20 * $m and
     .ended_by == "bytes"' --argjson m "$MiB"
run k stream "${S[@]}" -k 100 -l 64K -P 2
ok k
check_jq "-k 100 -l 64K -P 2: 100 writes of 64 KiB in all" "$T/k.json" \
    '([.flows[].bytes] | add) == 100 * 65536 and .ended_by == "blocks" and
     .params.blocks_limit == 100'
run nudp stream "${S[@]}" -u -b 100M -n 1M -P 2
ok nudp
check_jq "-u -n 1M: 749 datagrams of 1400 bytes, the last 1376, sent in all" "$T/nudp.json" \
    '([.flows[].sender_bytes] | add) == $m and .summary.udp.datagrams_sent == 749 and
     .summary.udp.send_drops == 0 and .ended_by == "bytes" and .summary.udp.datagrams_received > 0' \
    --argjson m "$MiB"
run kudp stream "${S[@]}" -u -b 50M -k 500 -R
ok kudp
check_jq "-u -k 500 -R: the server sent exactly 500 datagrams and said so" "$T/kudp.json" \
    '.summary.udp.datagrams_sent == 500 and .summary.sender_bytes == 500 * 1400 and
     .ended_by == "blocks" and .partial == false'
run nt stream "${S[@]}" -n 100G -t 1 -b 1G
ok nt
check_jq "-n 100G -t 1: the time came first" "$T/nt.json" \
    '.ended_by == "time" and .summary.bytes < 100 * 1073741824 and .summary.bytes > 0'
run nomit stream "${S[@]}" -n 50M -O 1 -b 2G
ok nomit
check_jq "-n 50M -O 1: after the warm-up the senders sent exactly 50 MiB" "$T/nomit.json" \
    '.summary.sender_bytes == 50 * $m and ([.intervals[] | select(.omitted)] | length) > 0 and
     .ended_by == "bytes"' --argjson m "$MiB"
"$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" --no-save -n 10M >"$T/ntext.out" 2>&1 || true
check "-n 10M, text: the header names the transfer" grep -q 'forward, 10.00 MiB' "$T/ntext.out"

# ---------------------------------------------------------------- -b on TCP
# (3 s at 200 Mbit/s: each side's figure within 5 %; tokens accrue by the nanosecond)
run b200 stream "${S[@]}" -b 200M -t 3
ok b200
check_jq "-b 200M -t 3: received and sent within 5% of 200 Mbit/s" "$T/b200.json" \
    '(.summary.throughput_bps / 200e6 - 1 | fabs) < 0.05 and
     (.summary.sender_throughput_bps / 200e6 - 1 | fabs) < 0.05'
log "-b 200M: $(jq -c '[.summary.throughput_bps, .summary.sender_throughput_bps]' "$T/b200.json")"
run bburst stream "${S[@]}" -b 100M/4 -R -P 2 -t 2
ok bburst
check_jq "-b 100M/4 -R -P 2: the server paced each flow, 200 Mbit/s in all (5%)" "$T/bburst.json" \
    '(.summary.throughput_bps / 200e6 - 1 | fabs) < 0.05 and .params.burst == 4 and
     .params.app_rate_bps == 100e6'
log "-b 100M/4 -R -P 2: $(jq -c '[.summary.throughput_bps, .summary.sender_throughput_bps, [.intervals[].throughput_bps]]' "$T/bburst.json")"

# ---------------------------------------------------------------- --cport, seen by the daemon
CP=$(low_port 2) || fail "no free pair of ports for --cport" # below the ephemeral range
"$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" --no-save -J -t 3 -b 10M -P 2 --cport "$CP" \
    >"$T/cport.json" 2>"$T/cport.err" &
cpid=$!
seen=""
for _ in $(seq 50); do # until both data connections are up (bounded: 5 s)
    seen=$(ss -Htn state established "( sport = :$SRV_PORT )" | awk '{print $4}' | sed 's/.*://' | sort -n | tr '\n' ' ')
    [[ " $seen " == *" $CP "* && " $seen " == *" $((CP + 1)) "* ]] && break
    sleep 0.1
done
wait "$cpid" && RC=0 || RC=$?
ok cport
has_peer_port() { [[ " $seen " == *" $1 "* ]]; }
check "--cport $CP -P 2: the daemon sees a data connection from port $CP (peers: $seen)" \
    has_peer_port "$CP"
check "--cport $CP -P 2: and one from port $((CP + 1))" has_peer_port $((CP + 1))

# ---------------------------------------------------------------- the daemon's --max-duration
start_server --max-duration 1s
run maxd stream -c 127.0.0.1 -p "$SRV_PORT" --no-save -J -n 100G -b 200M
check "-n against --max-duration 1s: exit 1 (got $RC)" test "$RC" -eq 1
check_jq "-n against --max-duration 1s: partial, the daemon's limit named, its figures in" \
    "$T/maxd.json" '.partial and (.error | test("--max-duration of 1s")) and .ended_by == "server" and
     .summary.bytes > 0 and .summary.seconds < 1.5'

# ---------------------------------------------------------------- refused: exit 2
usage() { # DESC PATTERN ARGS...
    local desc=$1 pat=$2
    shift 2
    RC=0
    timeout 20 "$NETRIG" "$@" >"$T/u.out" 2>"$T/u.err" || RC=$?
    check "$desc: exit 2 (got $RC)" test "$RC" -eq 2
    check "$desc: one line naming '$pat' ($(head -c 200 "$T/u.err"))" grep -qF -- "$pat" "$T/u.err"
    check "$desc: one line" one_line "$T/u.err"
}
usage "--pps on TCP" "--pps 1000 applies to UDP" stream --pps 1000 -t 1
usage "--dont-fragment on TCP" "--dont-fragment applies to UDP" stream --dont-fragment -t 1
usage "-n on rr" "option -n does not apply to 'netrig rr'" rr -n 1M
usage "-k on crr" "option -k does not apply" crr -k 10
usage "-b on rr" "option -b does not apply" rr -b 1M
usage "--cport on crr" "option --cport does not apply" crr --cport 40000
usage "-n and -k" "-n and -k both end the test" stream -n 1M -k 10
usage "-S 256" "invalid TOS '256'" stream -S 256
usage "--dscp AF14" "invalid DSCP 'AF14'" stream --dscp AF14
usage "-S with --dscp" "give one of them" stream -S 8 --dscp EF
usage "--bind-dev unknown" "no network interface named 'nrnone$$'" stream --bind-dev "nrnone$$"
usage "-b RATE/0" "-b RATE/BURST" stream -b 1G/0
usage "UDP -n with a short last datagram" "shorter than the 16-byte header" \
    stream -u -n 1410 -l 1400
usage "--cport past 65535" "runs past port 65535" stream --cport 65535 -P 2
usage "--cport with --from" "--cport and --bind-dev" stream --from 127.0.0.1 -c 127.0.0.2 --cport 5000

# ---------------------------------------------------------------- servers that are not netrig
if command -v iperf3 >/dev/null 2>&1; then
    check "iperf3 -s listens" start_tool_server "$T/iperf3-s.log" iperf3 -s -p PORT
    I3=$TOOL_PORT
    t0=$(now_ms)
    run at_i3 stream -c 127.0.0.1 -p "$I3" --no-save -t 1
    ms=$(($(now_ms) - t0))
    check "against iperf3 -s: exit 1 (got $RC)" test "$RC" -eq 1
    check "against iperf3 -s: one line naming --iperf3 ($(cat "$T/at_i3.err"))" \
        grep -q 'is an iperf3 server.*add --iperf3' "$T/at_i3.err"
    check "against iperf3 -s: said within a second (${ms} ms)" test "$ms" -lt 1000
    run at_i3_rr rr -c 127.0.0.1 -p "$I3" --no-save -t 1
    check "rr against iperf3 -s: exit 1 (got $RC), says rr needs netrig serve, not --iperf3" \
        bash -c "[[ $RC -eq 1 ]] && grep -q 'no request-response test' '$T/at_i3_rr.err' && ! grep -q 'add --iperf3' '$T/at_i3_rr.err'"
fi
iperf2_version=$(iperf -v 2>&1 || true) # (it exits 1 after printing its version)
if [[ $iperf2_version == "iperf version 2"* ]]; then
    check "iperf -s listens" start_tool_server "$T/iperf2-s.log" iperf -s -p PORT
    I2=$TOOL_PORT
    t0=$(now_ms)
    run at_i2 stream -c 127.0.0.1 -p "$I2" --no-save -t 1
    ms=$(($(now_ms) - t0))
    check "against iperf2 (iperf -s): exit 1 (got $RC)" test "$RC" -eq 1
    check "against iperf2: one line naming iperf2 and its client ($(cat "$T/at_i2.err"))" \
        grep -q "is an iperf2 server.*iperf2's own client" "$T/at_i2.err"
    check "against iperf2: said within a second (${ms} ms)" test "$ms" -lt 1000
else
    log "iperf2 (Debian package iperf) is not installed: its detection is not checked"
fi

finish
