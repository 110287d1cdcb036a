#!/usr/bin/env bash
# seed001_variants: the other limits of seed 001's path (1 Gbit/s x 40 ms, lib.sh `path`), each
# diagnosed with its numbers:
#  1. send buffer: the sender has seed 001's 2007 tcp_wmem max, 131072; the receiver is modern.
#     diagnose (no --rate) says sndbuf_limited, with the buffer full (>= 40 % of SO_SNDBUF in
#     flight) and a throughput within what the buffer allows: 131072 x 0.5 to 0.98 (the share
#     of a send buffer that is data in flight, audit_bufcap) x 8 / srtt = 13.0 to 25.5 Mbit/s,
#     10 % either side; with --probe-flows 2 and 4 flows (a buffer each) carry >= 1.6x and >= 3x,
#     a limit of each flow. tune --apply in the sender's namespace raises tcp_wmem there, and
#     diagnose then runs >= 10x faster and says link_capacity.
#  2. loss: 1 % random loss each way, big buffers. reno: loss_limited, the throughput within a
#     factor 2 of its Mathis bound (MSS/srtt x 1.22/sqrt(p)), and the advice names bbr; bbr:
#     link_capacity at >= 10x its Mathis bound (bbr rides through random loss), never "use bbr".
#  3. a 200 Mbit/s line (goodput 200 x 1448/1514 = 191.3 Mbit/s) with big buffers, no --rate:
#     link_capacity for reno and bbr, the throughput within 5 % of the goodput; with
#     --probe-flows 2 and 4 flows carry no more (within 15 %): a limit the flows share.
# Needs root, ip/tc, /dev/net/tun, tbf and chrt; exits 77 without them. Traffic stays in the
# namespaces.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh" "$@"

need_netns
command -v chrt >/dev/null 2>&1 || skip "needs chrt (util-linux)"
[[ -c /dev/net/tun ]] || skip "needs /dev/net/tun"

BIG="4096 131072 67108864"
STATE=$T/state

SRV_PID=
serve_start() { # in PATH_NS_B
    SRV_LOG=$T/serve.$RANDOM.log
    ip netns exec "$PATH_NS_B" chrt -f 5 "$NETRIG" serve -p 0 -B "$PATH_B" 2>"$SRV_LOG" &
    SRV_PID=$!
    track_pid "$SRV_PID"
    SRV_PORT=$(wait_for_port "$SRV_LOG" "$SRV_PID")
}
serve_stop() {
    kill -TERM "$SRV_PID" 2>/dev/null || true
    wait "$SRV_PID" 2>/dev/null || true
}
big_buffers() {
    for ns in "$PATH_NS_A" "$PATH_NS_B"; do
        ip netns exec "$ns" sysctl -qw net.ipv4.tcp_rmem="$BIG" net.ipv4.tcp_wmem="$BIG"
    done
}

# diag NAME [options]: diagnose -J from namespace a (the sender) into NAME.json
diag() {
    local name=$1 rc=0
    shift
    ip netns exec "$PATH_NS_A" timeout -s KILL 60 chrt -f 5 "$NETRIG" diagnose -c "$PATH_B" \
        -p "$SRV_PORT" -t 3 -J "$@" >"$T/$name.json" 2>"$T/$name.err" || rc=$?
    if [[ $rc -ne 0 ]]; then
        fail "$name: diagnose exit $rc ($(head -c 300 "$T/$name.err"))"
        echo '{}' >"$T/$name.json"
    fi
    log "$name: $(jq -r '"\(.verdict.id // "?"): \(.test.throughput_bps // 0 | . / 1e4 | round / 100) Mbit/s; buffer \(.verdict.figures.buffer_use // 0 | . * 100 | round)% full, SO_SNDBUF \(.ends.sender.socket_buffer // 0); loss \(.verdict.figures.loss // 0 | . * 1e5 | round / 1e3)%, Mathis \(.verdict.figures.mathis_bound_bps // 0 | . / 1e4 | round / 100) Mbit/s; srtt \(.verdict.figures.srtt_us // 0 | round) us"' "$T/$name.json")"
}

# ---- 1. the 2007 send buffer ----------------------------------------------------------------
path 40ms 1G
big_buffers
ip netns exec "$PATH_NS_A" sysctl -qw net.ipv4.tcp_wmem="4096 16384 131072"
serve_start
diag sndbuf
check_jq "sndbuf: sndbuf_limited" "$T/sndbuf.json" '.verdict.id == "sndbuf_limited"'
check_jq "sndbuf: the buffer was full (>= 40 % of SO_SNDBUF in flight)" "$T/sndbuf.json" \
    '.verdict.figures.buffer_use >= 0.4'
check_jq "sndbuf: throughput within what 131072 bytes allow (0.5-0.98 of it per srtt, +-10 %)" \
    "$T/sndbuf.json" '(131072 * 8 / (.verdict.figures.srtt_us / 1e6)) as $b |
    .test.throughput_bps >= 0.9 * 0.5 * $b and .test.throughput_bps <= 1.1 * 0.98 * $b'
diag sndbuf_probe --probe-flows
check_jq "sndbuf --probe-flows: 2 and 4 flows, each with its own buffer, carry >= 1.6x and >= 3x" \
    "$T/sndbuf_probe.json" '.verdict.id == "sndbuf_limited" and
    ([.test.probes[] | .flows] == [2, 4]) and
    .test.probes[0].throughput_bps >= 1.6 * .test.throughput_bps and
    .test.probes[1].throughput_bps >= 3 * .test.throughput_bps and
    any(.verdict.evidence[]; test("grows with the flows"))'
check_jq "sndbuf: the fix is tune on the sender; the evidence counts the kernel's overhead" \
    "$T/sndbuf.json" '(.verdict.tune | test("on the sender")) and
    (.verdict.advice | test("net.ipv4.tcp_wmem")) and
    any(.verdict.evidence[]; test("by the kernel.s accounting .* a buffer of 128.0 KiB gives"))'
rc=0
ip netns exec "$PATH_NS_A" "$NETRIG" tune --state-dir "$STATE" --apply --rate 1G --rtt 40ms \
    >"$T/apply.txt" 2>&1 || rc=$?
check "tune --apply on the sender raised net.ipv4.tcp_wmem (exit $rc)" \
    grep -qE "applied +net.ipv4.tcp_wmem: 4096 16384 131072 -> " "$T/apply.txt"
diag sndbuf_fixed
check_jq "sndbuf fixed: link_capacity" "$T/sndbuf_fixed.json" '.verdict.id == "link_capacity"'
check "sndbuf fixed: >= 10x faster" awk -v a="$(jq '.test.throughput_bps // 0' "$T/sndbuf.json")" \
    -v b="$(jq '.test.throughput_bps // 0' "$T/sndbuf_fixed.json")" 'BEGIN { exit !(a > 0 && b >= 10 * a) }'
serve_stop
path_down || fail "the path did not come down cleanly"

# ---- 2. 1 % loss ----------------------------------------------------------------------------
path 40ms 1G 1%
big_buffers
serve_start
diag loss_reno -C reno
check_jq "loss, reno: loss_limited" "$T/loss_reno.json" '.verdict.id == "loss_limited"'
check_jq "loss, reno: about 1 % of the segments retransmitted (0.5-2 %)" "$T/loss_reno.json" \
    '.verdict.figures.loss >= 0.005 and .verdict.figures.loss <= 0.02'
check_jq "loss, reno: throughput within a factor 2 of the Mathis bound" "$T/loss_reno.json" \
    '.verdict.figures.mathis_bound_bps as $m | .test.throughput_bps >= $m / 2 and
     .test.throughput_bps <= 2 * $m'
check_jq "loss, reno: the advice names bbr" "$T/loss_reno.json" '.verdict.advice | test("use bbr")'
diag loss_bbr -C bbr
check_jq "loss, bbr: link_capacity, not loss" "$T/loss_bbr.json" '.verdict.id == "link_capacity"'
check_jq "loss, bbr: >= 10x its Mathis bound" "$T/loss_bbr.json" \
    '.test.throughput_bps >= 10 * .verdict.figures.mathis_bound_bps'
check_jq "loss, bbr: no advice to use bbr" "$T/loss_bbr.json" \
    '(.verdict.advice | test("use bbr") | not) and .sender.congestion == "bbr"'
serve_stop
path_down || fail "the path did not come down cleanly"

# ---- 3. a 200 Mbit/s line, no --rate ---------------------------------------------------------
GOODPUT=$(awk 'BEGIN { printf "%.0f", 200e6 * 1448 / 1514 }')
path 40ms 200M
big_buffers
serve_start
for cc in reno bbr; do
    diag link_$cc -C "$cc"
    check_jq "200M link, $cc: link_capacity without --rate" "$T/link_$cc.json" \
        '.verdict.id == "link_capacity"'
    check_jq "200M link, $cc: throughput within 5 % of $GOODPUT" "$T/link_$cc.json" \
        '.test.throughput_bps >= 0.95 * $g and .test.throughput_bps <= 1.05 * $g' \
        --argjson g "$GOODPUT"
done
diag link_probe -C bbr --probe-flows
check_jq "200M link --probe-flows: 2 and 4 flows carry the same (within 15 %): link_capacity" \
    "$T/link_probe.json" '.verdict.id == "link_capacity" and ([.test.probes[] | .flows] == [2, 4]) and
    all(.test.probes[]; .throughput_bps <= 1.15 * $g) and
    any(.verdict.evidence[]; test("the sum stays flat"))' --argjson g "$GOODPUT"
serve_stop
finish
