#!/usr/bin/env bash
# iperf3_release: iperf3's own release checklist (test_commands.sh in its source tree), run
# from Debian's iperf3 client against `netrig serve` on loopback, each with -J: every command
# exits 0 and its JSON holds no error and the figures that command should produce. Durations
# are 1 s instead of 5 (CI time); -A 2/2 becomes -A 1/1 (CI has 2 CPUs). --sctp is refused
# with iperf3's own text. Then what netrig adds for iperf3 clients:
#   -n / -k / -u -n / -u -k: the daemon's receivers got exactly what the client's count says;
#   --max-rate paces an iperf3 client (forward, -R, --bidir) as it paces a netrig one;
#   --max-duration / --max-flows refusals name the daemon's real limit in its log.
# Its rates are bounds a loaded machine cannot break (--fq-rate's and --max-rate's ceilings, the
# latter's floor a quarter of the cap): it runs beside other tests.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

command -v iperf3 >/dev/null 2>&1 || skip "iperf3 is not installed (apt-get install iperf3)"
log "$(iperf3 --version | head -n1)"

start_server
log "daemon pid $SRV_PID port $SRV_PORT"

# i3 NAME JQ ARGS...: iperf3 -c 127.0.0.1 ARGS -J (bounded); exit 0, no error, JQ holds
i3() {
    local name=$1 cond=$2 host=127.0.0.1 rc=0
    shift 2
    [[ " $* " == *" -6 "* ]] && host=::1
    timeout 40 iperf3 -c "$host" -p "$SRV_PORT" -J "$@" >"$T/$name.raw" 2>"$T/$name.err" || rc=$?
    sed -n '/^{/,$p' "$T/$name.raw" >"$T/$name.json" # (-V prints its version line first)
    check "iperf3 $*: exit 0 (got $rc: $(jq -r '.error // empty' "$T/$name.json" 2>/dev/null | head -c 200))" \
        test "$rc" -eq 0
    check_jq "iperf3 $*: sane JSON ($cond)" "$T/$name.json" ".error == null and ($cond)"
}
TCP='.end.sum_sent.bytes > 0 and .end.sum_received.bytes > 0 and
     (.end.sum_received.bytes / .end.sum_sent.bytes) > 0.9'
UDP='.end.sum.packets > 0 and .end.sum.bytes > 0 and .end.sum.lost_percent < 50'
# -b1G in bursts of 100 datagrams of 32 KiB (lo's MTU) overflows any receive buffer; iperf3's
# own server loses as much: the JSON is sane when datagrams arrived and were counted
UDPFAST='.end.sum.packets > 0 and .end.sum.bytes > 0 and .end.sum.lost_packets < .end.sum.packets'
STREAMS() { echo "(.end.streams | length) == $1"; }

# ---------------------------------------------------------------- test_commands.sh
i3 basic "$TCP and .title == \"test1\"" -V -t 1 -T test1
i3 udp "$UDP" -u -V -t 1
i3 omit "$TCP and ([.intervals[] | select(.sum.omitted)] | length) > 0" -i .3 -O 1 -t 1
i3 json "$TCP and (.intervals | length) >= 1" -i 1 -t 1
i3 v4 "$TCP" -4 -t 1
i3 v4u "$UDP" -4 -u -t 1
i3 v6 "$TCP and (.start.connected[0].remote_host | test(\":\"))" -6 -t 1
i3 v6u "$UDP" -6 -u -t 1
# (--fq-rate: what the client wrote includes its socket buffer; what arrived is paced, after
# a first window that leaves unpaced: in 1 s well under 12 Mbit/s, where unpaced is Gbit/s)
i3 fq ".end.sum_received.bytes > 0 and .end.sum_received.bits_per_second < 12e6" -V -t 1 --fq-rate 5m
i3 fqu "$UDP" -u -V -t 1 --fq-rate 5m
i3 p3 "$TCP and $(STREAMS 3)" -P 3 -t 1
i3 p3u "$UDP and $(STREAMS 3)" -u -P 3 -t 1
i3 rev "$TCP and $(STREAMS 2) and .start.test_start.reverse == 1" -P 2 -t 1 -R
i3 revu "$UDP and $(STREAMS 2)" -u -P 2 -t 1 -R
i3 bidir "$TCP and .end.sum_received_bidir_reverse.bytes > 0 and $(STREAMS 4)" -P 2 -t 1 --bidir
i3 bidiru "$UDP and .end.sum_bidir_reverse.packets > 0" -u -P 2 -t 1 --bidir
i3 zc "$TCP" -Z -t 1
i3 zcrev "$TCP" -Z -t 1 -R
i3 win "$TCP" -t 1 -w 8M
i3 n5 "$TCP and .end.sum_received.bytes == 5242880 and .end.sum_sent.bytes == 5242880" -n 5M
i3 n5u ".end.sum.bytes == 5242880 and .end.sum.packets > 0" -n 5M -u -b1G
RC=0 # (iperf3 itself refuses this one, before it connects)
timeout 20 iperf3 -c 127.0.0.1 -p "$SRV_PORT" -n 5M -t 5 >"$T/n5t.out" 2>&1 || RC=$?
check "iperf3 -n 5M -t 5: iperf3 refuses the conflict, exit 1 (got $RC)" test "$RC" -eq 1
check "iperf3 -n 5M -t 5: its own message" grep -q 'only one test end condition' "$T/n5t.out"
i3 k1 "$TCP and .end.sum_received.bytes == 1024 * 131072" -k 1K
i3 k1u ".end.sum.packets == 1024" -k 1K -u -b1G
i3 aff "$TCP" -A 1/1 -t 1
i3 affu "$UDPFAST" -A 1/1 -u -b1G -t 1
i3 burst "$UDPFAST" -u -b1G/100 -t 1
i3 mss "$TCP" -M 1000 -V -t 1
i3 reno "$TCP and .end.receiver_tcp_congestion == \"reno\"" -C reno -V -t 1

RC=0
timeout 20 iperf3 -c 127.0.0.1 -p "$SRV_PORT" --sctp -V -t 1 >"$T/sctp.out" 2>&1 || RC=$?
check "iperf3 --sctp: exit 1 (got $RC)" test "$RC" -eq 1
check "iperf3 --sctp: iperf3's own SCTP text ($(tail -n1 "$T/sctp.out"))" \
    grep -qE 'no SCTP support|not supported|SCTP' "$T/sctp.out"

# ---------------------------------------------------------------- exact transfers, our side
# (the daemon's receive counts in its log line: "... done: RATE ... received BYTES")
# (iperf3 counts whole writes: -n 7M -l 100K sends 72 writes of 100 KiB; all of them arrive)
i3 n7 ".end.sum_received.bytes == 72 * 102400 and .end.sum_sent.bytes == 72 * 102400" -n 7M -P 3 -l 100K
i3 n7r "$TCP and .end.sum_sent.bytes == 7 * 1048576" -n 7M -P 3 -R
i3 k9u ".end.sum.packets == 9000 and .end.sum.bytes == 9000 * 1200" -u -b 500M -k 9000 -l 1200

# ---------------------------------------------------------------- --max-rate paces iperf3 clients
# (an iperf3 client is held by our receivers reading at the share; after the stop they drain
# what the kernel had buffered, up to the autotuned window, so the total runs over the rate by
# window / duration: 5 s keeps that within the daemon's own 10 %)
start_server --max-rate 200M
for shape in "" "-R" "--bidir" "-P 2"; do
    name=mr${shape//[^a-zA-Z0-9]/}
    # shellcheck disable=SC2086
    i3 "$name" "$TCP" -t 5 $shape
    log "--max-rate 200M, iperf3 $shape: $(jq -c '[.end.sum_received.bits_per_second, .end.sum_received_bidir_reverse.bits_per_second]' "$T/$name.json")"
    check_jq "--max-rate 200M, iperf3 -t 5 $shape: paced to the limit (received < 220 Mbit/s in all, the daemon's own 10 %)" \
        "$T/$name.json" '(.end.sum_received.bits_per_second + (.end.sum_received_bidir_reverse.bits_per_second // 0)) < 220e6 and
         .end.sum_received.bits_per_second > 50e6'
done
check "--max-rate: no iperf3 test was stopped" bash -c "! grep -q 'over --max-rate' '$SRV_LOG'"

# ---------------------------------------------------------------- limits named in the log
start_server --max-duration 2s --max-flows 2
RC=0
timeout 20 iperf3 -c 127.0.0.1 -p "$SRV_PORT" -t 5 >"$T/md.out" 2>&1 || RC=$?
check "--max-duration 2s, iperf3 -t 5: refused, exit 1 (got $RC)" test "$RC" -eq 1
check "--max-duration 2s: iperf3 prints its duration error ($(tail -n1 "$T/md.out"))" \
    grep -q 'duration' "$T/md.out"
check "--max-duration 2s: the daemon's log names 2s" grep -q 'max-duration of 2s' "$SRV_LOG"
RC=0
timeout 20 iperf3 -c 127.0.0.1 -p "$SRV_PORT" -t 1 -P 3 >"$T/mf.out" 2>&1 || RC=$?
check "--max-flows 2, iperf3 -P 3: refused, exit 1 (got $RC)" test "$RC" -eq 1
check "--max-flows 2: iperf3 prints its streams error ($(tail -n1 "$T/mf.out"))" \
    grep -q 'parallel streams' "$T/mf.out"
check "--max-flows 2: the daemon's log names 2" grep -q 'max-flows of 2' "$SRV_LOG"
i3 mfok "$TCP" -t 1 -P 2

finish
