#!/usr/bin/env bash
# seed001_wan: the 2007 WAN transfer of seed 001, end to end on an emulated path. A 1 Gbit/s
# line (goodput 1e9 x 1448/1514 = 956.4 Mbit/s) with a 40 ms round trip (lib.sh `path 40ms 1G`);
# the receiver (the daemon's namespace) has the 2007 defaults of seed 001, tcp_rmem "4096 87380
# 174760"; the sender a modern tcp_wmem (16 MB: only the receiver is 2007's).
#  1. Three 3 s streams: each moves about the receiver's window per round trip, and no more:
#     throughput within 15 % of (the window it offered, mean of the intervals) x 8 / srtt, and
#     that window is 174760 x 0.5 to 0.93 (the share of a receive buffer that becomes window,
#     audit_bufcap): 17.4 to 32.4 Mbit/s.
#  2. diagnose --rate 1G --rtt 40ms: rwnd_limited, the window >= 75 % full, the BDP (5 MB) in the
#     evidence and the fix "on the receiver: netrig tune --apply --rate 1G --rtt 40ms".
#  3. That tune --apply inside the receiver's namespace raises net.ipv4.tcp_rmem there (and says
#     net.core.rmem_max is read-only in a namespace, if the plan has it).
#  4. Three streams again: >= 10x faster than before and >= 85 % of the link (813 Mbit/s), and
#     diagnose now says link_capacity.
#  5. compare of the client's runs (before vs after): throughput 'better', significant (Welch's
#     t-test at 95 %), the change in %; the server's settings not recorded by the client (the
#     daemon does not send its snapshot to clients yet: the reason is shown). compare of the
#     daemon's own served runs (serve --db keeps its side and its snapshot) names
#     net.ipv4.tcp_rmem under the server with both values, and the same speed-up.
# Needs root, ip/tc, /dev/net/tun, tbf and chrt; exits 77 without them. The emulator runs at
# SCHED_FIFO 10 and netrig's ends at SCHED_FIFO 5. Traffic stays in the namespaces.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh" "$@"

need_netns
command -v chrt >/dev/null 2>&1 || skip "needs chrt (util-linux)"
[[ -c /dev/net/tun ]] || skip "needs /dev/net/tun"

RMEM_2007="4096 87380 174760"
GOODPUT=$(awk 'BEGIN { printf "%.0f", 1e9 * 1448 / 1514 }')
CDB=$T/client.db
SDB=$T/served.db
STATE=$T/state

path 40ms 1G
SND=$PATH_NS_A RCV=$PATH_NS_B
ip netns exec "$SND" sysctl -qw net.ipv4.tcp_wmem="4096 16384 16777216"
ip netns exec "$SND" sysctl -qw net.ipv4.tcp_rmem="4096 131072 16777216"
ip netns exec "$RCV" sysctl -qw net.ipv4.tcp_rmem="$RMEM_2007"

SRV_PID=
serve_start() {
    SRV_LOG=$T/serve.$RANDOM.log
    ip netns exec "$RCV" chrt -f 5 "$NETRIG" serve -p 0 -B "$PATH_B" --db "$SDB" 2>"$SRV_LOG" &
    SRV_PID=$!
    track_pid "$SRV_PID"
    SRV_PORT=$(wait_for_port "$SRV_LOG" "$SRV_PID")
}
serve_stop() {
    kill -TERM "$SRV_PID" 2>/dev/null || true
    wait "$SRV_PID" 2>/dev/null || true
}

# stream NAME: a 3 s stream after a 1 s warm-up (25 round trips), saved to the client's history
stream() {
    local rc=0
    ip netns exec "$SND" timeout -s KILL 60 chrt -f 5 "$NETRIG" stream -c "$PATH_B" \
        -p "$SRV_PORT" -t 3 -O 1 -i 0.25 --title "$1" --db "$CDB" -J >"$T/$1.json" \
        2>"$T/$1.err" || rc=$?
    if [[ $rc -ne 0 ]] || ! jq -e .summary.throughput_bps "$T/$1.json" >/dev/null 2>&1; then
        fail "$1: netrig stream exit $rc ($(head -c 300 "$T/$1.err"))"
        echo '{"summary": {"throughput_bps": 0}, "flows": [{}]}' >"$T/$1.json"
    fi
    log "$1: $(jq -r '"\(.summary.throughput_bps / 1e4 | round / 100) Mbit/s; window \(.flows[0].snd_wnd_mean // 0 | round) B, srtt \(.flows[0].rtt_mean_us // 0 | round) us"' "$T/$1.json")"
}

# diagnose NAME: netrig diagnose -J --rate 1G --rtt 40ms from the sender
diagnose() {
    local rc=0
    ip netns exec "$SND" timeout -s KILL 60 chrt -f 5 "$NETRIG" diagnose -c "$PATH_B" \
        -p "$SRV_PORT" --rate 1G --rtt 40ms -J >"$T/$1.json" 2>"$T/$1.err" || rc=$?
    if [[ $rc -ne 0 ]]; then
        fail "$1: diagnose exit $rc ($(head -c 300 "$T/$1.err"))"
        echo '{}' >"$T/$1.json"
    fi
    log "$1: $(jq -r '"\(.verdict.id // "?"): \(.test.throughput_bps // 0 | . / 1e4 | round / 100) Mbit/s; window \(.verdict.figures.window_use // 0 | . * 100 | round)% full"' "$T/$1.json")"
}

mean_bps() { # NAME...: the mean throughput of those runs
    for n in "$@"; do jq .summary.throughput_bps "$T/$n.json"; done |
        awk '{ s += $1 } END { printf "%.0f", s / NR }'
}

# ---- 1. the 2007 receiver ----------------------------------------------------------------
serve_start
for i in 1 2 3; do stream before$i; done
for i in 1 2 3; do
    check_jq "before$i: throughput within 15 % of the window it was offered per srtt" \
        "$T/before$i.json" '.flows[0] as $f | ($f.snd_wnd_mean * 8 / ($f.rtt_mean_us / 1e6)) as $w |
        .summary.throughput_bps >= 0.85 * $w and .summary.throughput_bps <= 1.15 * $w'
    check_jq "before$i: the window is 0.5-0.93 of the 2007 tcp_rmem max 174760" \
        "$T/before$i.json" '.flows[0].snd_wnd_mean >= 0.5 * 174760 and
        .flows[0].snd_wnd_mean <= 0.93 * 174760'
done
BEFORE=$(mean_bps before1 before2 before3)

# ---- 2. diagnose -------------------------------------------------------------------------
diagnose diag_before
check_jq "diagnose: rwnd_limited" "$T/diag_before.json" '.verdict.id == "rwnd_limited"'
check_jq "diagnose: the window was full (>= 75 %)" "$T/diag_before.json" \
    '.verdict.figures.window_use >= 0.75'
check_jq "diagnose: the BDP at 1 Gbit/s x 40 ms, 5e6 B (4.77 MiB), in the figures and the evidence" \
    "$T/diag_before.json" '.verdict.figures.bdp_bytes == 5000000 and
    any(.verdict.evidence[]; test("BDP, 4.77 MiB"))'
check_jq "diagnose: the fix is tune on the receiver with the target" "$T/diag_before.json" \
    '(.verdict.tune | test("on the receiver: netrig tune --apply --rate 1G --rtt 40ms")) and
     (.verdict.advice | test("net.ipv4.tcp_rmem"))'
check_jq "diagnose: warm-up of 15 round trips (0.6 s at 40 ms)" "$T/diag_before.json" \
    '.test.warmup_s >= 0.6 and .test.warmup_s < 0.7'

# ---- 3. tune --apply in the receiver's namespace -----------------------------------------
rc=0
ip netns exec "$RCV" "$NETRIG" tune --state-dir "$STATE" --apply --rate 1G --rtt 40ms \
    >"$T/apply.txt" 2>&1 || rc=$?
log "tune --apply: exit $rc; $(grep -E '^  applied +net.ipv4.tcp_rmem' "$T/apply.txt" | tr -s ' ')"
check "tune --apply exits 0 or 1 (some global settings are not settable here), got $rc" \
    test "$rc" -le 1
check "tune --apply raised net.ipv4.tcp_rmem from the 2007 value" \
    grep -qE "applied +net.ipv4.tcp_rmem: 4096 87380 174760 -> " "$T/apply.txt"
RMEM_AFTER=$(ip netns exec "$RCV" sysctl -n net.ipv4.tcp_rmem | tr -s ' \t' ' ')
check "the receiver's tcp_rmem max now covers 2 x BDP (now $RMEM_AFTER)" \
    test "$(awk '{print $3}' <<<"$RMEM_AFTER")" -ge 10000000

# ---- 4. again ----------------------------------------------------------------------------
serve_stop
serve_start
for i in 1 2 3; do stream after$i; done
AFTER=$(mean_bps after1 after2 after3)
log "mean throughput $BEFORE -> $AFTER bit/s (goodput of the link $GOODPUT)"
check "after tune: >= 10x faster ($BEFORE -> $AFTER bit/s)" \
    awk -v a="$BEFORE" -v b="$AFTER" 'BEGIN { exit !(a > 0 && b >= 10 * a) }'
check "after tune: >= 85 % of the link's goodput $GOODPUT ($AFTER)" \
    awk -v b="$AFTER" -v g="$GOODPUT" 'BEGIN { exit !(b >= 0.85 * g) }'
diagnose diag_after
check_jq "diagnose after tune: link_capacity" "$T/diag_after.json" '.verdict.id == "link_capacity"'
serve_stop

# ---- 5. compare --------------------------------------------------------------------------
"$NETRIG" compare 1-3 4-6 -J --db "$CDB" >"$T/cmp.json" 2>"$T/cmp.err" ||
    fail "compare of the client's runs failed: $(head -c 200 "$T/cmp.err")"
"$NETRIG" compare 1-3 4-6 --db "$CDB" >"$T/cmp.txt" 2>&1 || true
log "compare (client's runs): $(grep -i throughput "$T/cmp.txt" | head -n1 | tr -s ' ')"
check_jq "compare: throughput better, significant at 95 %, >= +900 %" "$T/cmp.json" \
    'any(.metrics[]; .name == "throughput_bps" and .significant and .verdict == "better" and
     .change_pct >= 900 and .welch.p < 0.05)'
# the daemon sends its settings with its results: the fix on the receiver shows in the
# client's own history (issue 15), under the server, with both values
check_jq "compare of the client's runs names net.ipv4.tcp_rmem under the server, both values" \
    "$T/cmp.json" 'any(.host_differences[]; .side == "server" and .key == "net.ipv4.tcp_rmem" and
     .a == $a and .b == $b)' --arg a "$RMEM_2007" --arg b "$RMEM_AFTER"
# the daemon's served runs: 3 streams, diagnose, 3 streams, diagnose
"$NETRIG" compare 1-3 5-7 -J --db "$SDB" >"$T/scmp.json" 2>"$T/scmp.err" ||
    fail "compare of the served runs failed: $(head -c 200 "$T/scmp.err")"
"$NETRIG" compare 1-3 5-7 --db "$SDB" >"$T/scmp.txt" 2>&1 || true
log "compare (served runs): $(grep 'net.ipv4.tcp_rmem' "$T/scmp.txt" | tr -s ' ')"
check_jq "compare of the served runs names net.ipv4.tcp_rmem under the server, both values" \
    "$T/scmp.json" 'any(.host_differences[]; .side == "server" and .key == "net.ipv4.tcp_rmem" and
     .a == $a and .b == $b)' --arg a "$RMEM_2007" --arg b "$RMEM_AFTER"
check_jq "compare of the served runs: the speed-up, significant" "$T/scmp.json" \
    'any(.metrics[]; .name == "throughput_bps" and .significant and .change_pct >= 900)'
check "compare text: the server's tcp_rmem change with both values" \
    grep -qF "net.ipv4.tcp_rmem" "$T/scmp.txt"
finish
