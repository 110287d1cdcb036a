#!/usr/bin/env bash
# mptcp_paths: `netrig stream --mptcp` over two paths. Two namespaces (client, server) joined by
# TWO veth pairs, 10.232.1.0/24 (path 1) and 10.232.2.0/24 (path 2); the client's egress on
# path 1 shaped by tbf to 50 Mbit/s, on path 2 to 100 Mbit/s. The test configures MPTCP in
# both namespaces: `ip mptcp limits set subflows 2 add_addr_accepted 2`, and on the client
# `ip mptcp endpoint add 10.232.2.1 dev mpc2 subflow` with a routing rule that sends what
# leaves from 10.232.2.1 out of path 2, so the kernel's path manager opens a second subflow
# from 10.232.2.1 to the daemon's 10.232.1.2 over path 2.
#
# The arithmetic. tbf counts whole 1514-byte frames at MTU 1500. Plain TCP carries 1448
# payload bytes in each (1500 - 20 IP - 20 TCP - 12 timestamps). An MPTCP subflow's data
# segment also carries a DSS option: 4 bytes of kind/length/subtype/flags, a 32-bit data ACK
# (4), and the mapping (64-bit data sequence number 8, subflow sequence number 4, data-level
# length 2) = 22 bytes, padded to 24 - so 1424 payload bytes per frame (the subflow's TCP_INFO
# still says mss 1448: the option is taken off each segment). Frame overhead 90 bytes, not 66.
#   path 1: 50 x 1424/1514 = 47.03 Mbit/s, path 2: 100 x 1424/1514 = 94.05, sum 141.08
#   plain TCP on path 1: 50 x 1448/1514 = 47.82 Mbit/s
# The checks: both ends report 2 subflows, one per path (by the client's address); the
# receiver's per-subflow bytes split 1:2 as the rates; the total within 5 % of 141.08 Mbit/s;
# the overhead per frame, from tbf's byte and packet counters against the receiver's subflow
# bytes, is 90 on each path (66 for plain TCP); the plain-TCP control on the same set-up
# reaches 47.82 Mbit/s and sends nothing on path 2. Congestion control reno: bbr's probing
# across two subflows of one send buffer leaves it 5-10 % short here. Without MPTCP in a
# namespace (net.mptcp.enabled=0) the client refuses --mptcp, and a daemon whose listener
# could not be MPTCP refuses the test, each with a one-line reason.
# Needs root, ip (with `ip mptcp`), tc, veth, sch_tbf and a kernel with MPTCP: exits 77 without.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

need_netns
[[ -r /proc/sys/net/mptcp/enabled ]] || skip "this kernel has no MPTCP (no /proc/sys/net/mptcp)"
ip mptcp limits show >/dev/null 2>&1 || skip "ip (iproute2) cannot configure MPTCP (ip mptcp)"

new_netns mpc
NS_C=$NETNS
new_netns mps
NS_S=$NETNS
[[ $(ip netns exec "$NS_C" sysctl -n net.mptcp.enabled) == 1 ]] ||
    skip "MPTCP is disabled in new namespaces (net.mptcp.enabled = 0)"
for i in 1 2; do
    ip link add name "mpc$i" netns "$NS_C" type veth peer name "mps$i" netns "$NS_S" \
        2>"$T/veth.err" || skip "cannot create a veth pair: $(cat "$T/veth.err")"
    ip -n "$NS_C" addr add "10.232.$i.1/24" dev "mpc$i"
    ip -n "$NS_S" addr add "10.232.$i.2/24" dev "mps$i"
    ip -n "$NS_C" link set "mpc$i" up
    ip -n "$NS_S" link set "mps$i" up
done
_tbf "$NS_C" mpc1 50000000 50000
_tbf "$NS_C" mpc2 100000000 50000
for ns in "$NS_C" "$NS_S"; do
    ip -n "$ns" mptcp limits set subflows 2 add_addr_accepted 2
done
ip -n "$NS_C" mptcp endpoint add 10.232.2.1 dev mpc2 subflow
ip -n "$NS_C" rule add from 10.232.2.1 table 102
ip -n "$NS_C" route add 10.232.1.0/24 dev mpc2 table 102
for i in 1 2; do
    wait_link_up "$NS_C" "mpc$i"
    wait_path_up "$NS_C" "10.232.$i.2"
done

SRV_LOG=$T/serve.log
ip netns exec "$NS_S" "$NETRIG" serve -p 0 -B 10.232.1.2 2>"$SRV_LOG" &
SRV_PID=$!
track_pid "$SRV_PID"
SRV_PORT=$(wait_for_port "$SRV_LOG" "$SRV_PID")
log "client $NS_C, server $NS_S on 10.232.1.2:$SRV_PORT; tbf 50 and 100 Mbit/s"

# tbf's counters on the client's egress: "bytes packets"
tbf_ctr() { ip netns exec "$NS_C" tc -s -j qdisc show dev "$1" | jq -r '.[0] | "\(.bytes) \(.packets) \(.drops)"'; }
mbit() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1e6 }'; }

# ---- MPTCP over both paths
read -r b1 p1 _ <<<"$(tbf_ctr mpc1)"
read -r b2 p2 _ <<<"$(tbf_ctr mpc2)"
OUT=$T/mptcp.json
rc=0
ip netns exec "$NS_C" "$NETRIG" stream --mptcp -C reno -c 10.232.1.2 -p "$SRV_PORT" -t 4 -J \
    --no-save >"$OUT" 2>"$T/mptcp.err" || rc=$?
[[ $rc -eq 0 ]] || fail "mptcp run: exit status $rc ($(head -c 300 "$T/mptcp.err"))"
read -r e1 q1 d1 <<<"$(tbf_ctr mpc1)"
read -r e2 q2 d2 <<<"$(tbf_ctr mpc2)"
# the senders are local to the shaped devices, so TCP small queues hold them back before tbf's
# queue overflows: no drops, so no retransmitted frames in the counts below
log "mptcp: tbf dropped $d1 frames on path 1, $d2 on path 2 (so far)"
check_jq "mptcp: complete, params.mptcp in the document" "$OUT" '.partial == false and .params.mptcp == true'
check_jq "mptcp: both ends report 2 subflows, no fallback" "$OUT" \
    '.flows[0].mptcp | [.client, .server] | all(.fallback == false and .subflow_count == 2 and (.subflows | length) == 2)'
check_jq "mptcp: the client's subflows start one from each path's address" "$OUT" \
    '[.flows[0].mptcp.client.subflows[].local | sub(":[0-9]+$"; "")] | sort == ["10.232.1.1", "10.232.2.1"]'
# what each path carried: the receiver's count on the subflow from that path's address
rx1=$(jq '[.flows[0].mptcp.server.subflows[] | select(.remote | startswith("10.232.1.1:")) | .bytes_received] | add // 0' "$OUT")
rx2=$(jq '[.flows[0].mptcp.server.subflows[] | select(.remote | startswith("10.232.2.1:")) | .bytes_received] | add // 0' "$OUT")
tp=$(jq '.summary.throughput_bps' "$OUT")
log "mptcp: $(mbit "$tp") Mbit/s (expected 141.08); path 1 received $rx1 B in $((q1 - p1)) frames, path 2 $rx2 B in $((q2 - p2))"
if ((rx1 > 0 && rx2 > 0 && q1 > p1 && q2 > p2)); then
    share1=$(awk -v a="$rx1" -v b="$rx2" 'BEGIN { printf "%.4f", a / (a + b) }')
    ovh1=$(awk -v t=$((e1 - b1)) -v r="$rx1" -v n=$((q1 - p1)) 'BEGIN { printf "%.2f", (t - r) / n }')
    ovh2=$(awk -v t=$((e2 - b2)) -v r="$rx2" -v n=$((q2 - p2)) 'BEGIN { printf "%.2f", (t - r) / n }')
    log "mptcp: path 1 carried $share1 of the bytes (rates say 0.3333); bytes per frame beyond the payload: path 1 $ovh1, path 2 $ovh2 (90 with the DSS option)"
    # counters, not rates: the headers and options each frame carries (a few handshake and
    # control-connection frames add under a byte to the mean)
    check "mptcp: path 1 frames carry 90 bytes beside the payload (got $ovh1)" \
        awk -v o="$ovh1" 'BEGIN { exit !(o >= 89.5 && o < 92) }'
    check "mptcp: path 2 frames carry 90 bytes beside the payload (got $ovh2)" \
        awk -v o="$ovh2" 'BEGIN { exit !(o >= 89.5 && o < 92) }'
    if judge_rates; then
        check "mptcp: path 1's share $share1 is its rate's (1/3 +- 0.05)" \
            awk -v s="$share1" 'BEGIN { exit !(s > 0.2833 && s < 0.3833) }'
    fi
else
    fail "mptcp: a path carried nothing (path 1 $rx1 B, path 2 $rx2 B)"
fi
# per interval (the client's socket, -i 1 by default): each interval lists both subflows, and
# what each interval's deltas add up to is what the end-of-test counts say (the last bytes
# acknowledged after the last interval aside)
check_jq "mptcp: every interval lists the flow's subflows" "$OUT" \
    '(.intervals | length) >= 3 and all(.intervals[1:][]; (.flows[0].mptcp_subflows | length) == 2)'
check_jq "mptcp: the intervals' acked bytes per subflow add up to no more than its end count, and to most of it" "$OUT" \
    '.flows[0].mptcp.client.subflows as $fin | [.intervals[].flows[0].mptcp_subflows[]] | group_by(.local) |
     all(.[]; . as $g | ($g | map(.bytes_acked) | add) as $sum |
         ([$fin[] | select(.local == $g[0].local) | .bytes_acked] | add // 0) as $e |
         $sum <= $e and $sum >= 0.8 * $e)'
if judge_rates; then
    p1=$(jq -c '[.intervals[1:][] | .flows[0].mptcp_subflows | (map(select(.local | startswith("10.232.1.1:")) | .bytes_acked) | add) / (map(.bytes_acked) | add) * 1000 | round / 1000]' "$OUT")
    log "mptcp: path 1's share of each interval after the first: $p1"
    check_jq "mptcp: path 1 carried 1/3 (+-0.08) of every interval after the first (got $p1)" "$OUT" \
        'all(.intervals[1:][] | .flows[0].mptcp_subflows; (map(select(.local | startswith("10.232.1.1:")) | .bytes_acked) | add) / (map(.bytes_acked) | add) | . > 0.2533 and . < 0.4133)'
    check_jq "mptcp: throughput within 5 % of 141.08 Mbit/s, the two paths' sum (got $(mbit "$tp"))" \
        "$OUT" '.summary.throughput_bps > 134.03e6 and .summary.throughput_bps < 148.13e6'
fi

# ---- the text report names the subflows
# (netrig mptcp: the kind of its own the test-kind table adds; the same test as stream --mptcp)
ip netns exec "$NS_C" "$NETRIG" mptcp -C reno -c 10.232.1.2 -p "$SRV_PORT" -t 1 \
    --no-save >"$T/text.out" 2>"$T/text.err" || fail "text run: exit status $? ($(head -c 300 "$T/text.err"))"
check "text: the MPTCP section lists 2 subflows of flow 0" grep -q '^flow 0 (up, sent by the client): 2 subflows, [0-9]* retransmits in all$' "$T/text.out"
check "text: a row for each path" bash -c "grep -q '^  10.232.1.1:[0-9]* > 10.232.1.2:$SRV_PORT ' '$T/text.out' &&
    grep -q '^  10.232.2.1:[0-9]* > 10.232.1.2:$SRV_PORT ' '$T/text.out'"

# ---- the plain-TCP control: one path only
read -r b1 p1 _ <<<"$(tbf_ctr mpc1)"
read -r b2 p2 _ <<<"$(tbf_ctr mpc2)"
TCP=$T/tcp.json
ip netns exec "$NS_C" "$NETRIG" stream -C reno -c 10.232.1.2 -p "$SRV_PORT" -t 3 -J --no-save \
    >"$TCP" 2>"$T/tcp.err" || fail "tcp run: exit status $? ($(head -c 300 "$T/tcp.err"))"
read -r e1 q1 _ <<<"$(tbf_ctr mpc1)"
read -r e2 q2 _ <<<"$(tbf_ctr mpc2)"
tcp_rx=$(jq '.summary.bytes' "$TCP")
log "tcp: $(mbit "$(jq .summary.throughput_bps "$TCP")") Mbit/s (expected 47.82); path 2 sent $((q2 - p2)) frames"
check_jq "tcp: no mptcp member without --mptcp" "$TCP" '(.flows[0] | has("mptcp") | not) and (.params | has("mptcp") | not)'
check "tcp: path 2 carried no data (at most 5 frames, got $((q2 - p2)))" test $((q2 - p2)) -le 5
ovh=$(awk -v t=$((e1 - b1)) -v r="$tcp_rx" -v n=$((q1 - p1)) 'BEGIN { printf "%.2f", (t - r) / n }')
log "tcp: bytes per frame beyond the measured payload on path 1: $ovh (66 for plain TCP)"
check "tcp: path 1 frames carry about 66 bytes beside the payload (got $ovh)" \
    awk -v o="$ovh" 'BEGIN { exit !(o >= 65.5 && o < 70) }'
if judge_rates; then
    check_jq "tcp: throughput within 5 % of 47.82 Mbit/s, path 1 alone" "$TCP" \
        '.summary.throughput_bps > 45.43e6 and .summary.throughput_bps < 50.21e6'
fi

# ---- no MPTCP: the client says so; a daemon without an MPTCP listener refuses the test
ip netns exec "$NS_C" sysctl -qw net.mptcp.enabled=0
rc=0
ip netns exec "$NS_C" "$NETRIG" stream --mptcp -c 10.232.1.2 -p "$SRV_PORT" -t 1 --no-save \
    >"$T/off.out" 2>"$T/off.err" || rc=$?
check "disabled client: exit status 2 (got $rc)" test "$rc" -eq 2
check "disabled client: one line naming net.mptcp.enabled ($(head -c 200 "$T/off.err"))" \
    bash -c "one_line() { [[ \$(wc -l <\"\$1\") -eq 1 ]]; }; one_line '$T/off.err' && grep -q 'net.mptcp.enabled = 0' '$T/off.err'"
ip netns exec "$NS_C" sysctl -qw net.mptcp.enabled=1
ip netns exec "$NS_S" sysctl -qw net.mptcp.enabled=0
SRV2_LOG=$T/serve2.log
ip netns exec "$NS_S" "$NETRIG" serve -p 0 -B 10.232.1.2 2>"$SRV2_LOG" &
SRV2_PID=$!
track_pid "$SRV2_PID"
SRV2_PORT=$(wait_for_port "$SRV2_LOG" "$SRV2_PID")
rc=0
ip netns exec "$NS_C" "$NETRIG" stream --mptcp -c 10.232.1.2 -p "$SRV2_PORT" -t 1 --no-save \
    >"$T/srv_off.out" 2>"$T/srv_off.err" || rc=$?
check "daemon without MPTCP: the client fails (exit $rc)" test "$rc" -ne 0
check "daemon without MPTCP: the refusal says its listener is not MPTCP ($(head -c 300 "$T/srv_off.err"))" \
    grep -q "listener is not MPTCP (MPTCP is disabled in the network namespace" "$T/srv_off.err"
finish
