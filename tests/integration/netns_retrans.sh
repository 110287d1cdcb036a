#!/usr/bin/env bash
# netns_retrans: with -R the server sends, so every interval's retransmits are the server's
# (issue 16: they read 0 on the client). A veth pair whose server-side egress is a tbf with a
# 2 ms queue drops, so the server's TCP retransmits for sure; the client's intervals in -J,
# --json-stream and the text report must carry those counts, and -J's must add up to the
# server's own intervals.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

veth_pair
NS_S=$VETH_NS_A
NS_C=$VETH_NS_B
# the server's egress: 50 Mbit/s with a queue of 2 ms (12.5 KB), which TCP overflows
ip netns exec "$NS_S" tc qdisc add dev "$VETH_DEV_A" root tbf rate 50mbit burst 16kb latency 2ms \
    2>"$T/tc.err" || skip "cannot add a tbf qdisc: $(cat "$T/tc.err")"

SRV_LOG=$T/serve.log
ip netns exec "$NS_S" "$NETRIG" serve -p 0 -B "$VETH_A" 2>"$SRV_LOG" &
SRV_PID=$!
track_pid "$SRV_PID"
SRV_PORT=$(wait_for_port "$SRV_LOG" "$SRV_PID")

run() { # NAME ARGS...: -R from the client's namespace, stdout in $T/NAME
    local name=$1 rc=0
    shift
    ip netns exec "$NS_C" timeout 30 "$NETRIG" stream -c "$VETH_A" -p "$SRV_PORT" -R -P 2 -t 1.5 \
        -i 0.5 --no-save "$@" >"$T/$name" 2>"$T/$name.err" || rc=$?
    check "$name: exit 0 ($rc): $(head -c 300 "$T/$name.err")" test "$rc" -eq 0
}

# ---- -J: the client's intervals are the server's
run json -J
# the server may close one more, short interval after the client's last (its flows end a
# moment later): the client's intervals are the server's first ones
n=$(jq '.intervals | length' "$T/json")
srv=$(jq "[.server_intervals[:$n][].retransmits] | add" "$T/json")
cli=$(jq '[.intervals[].retransmits] | add' "$T/json")
log "-J: server intervals $(jq -c '[.server_intervals[].retransmits]' "$T/json"), client intervals $(jq -c '[.intervals[].retransmits]' "$T/json"), summary $(jq .summary.retransmits "$T/json")"
check "-J: the server retransmitted through a 2 ms tbf queue ($srv)" test "${srv:-0}" -gt 0
check_jq "-J: each client interval carries its server interval's count" "$T/json" \
    '[.intervals[].retransmits] == [.server_intervals[:(.intervals | length)][].retransmits]'
check_jq "-J: no interval is unknown (-1)" "$T/json" 'all(.intervals[]; .retransmits >= 0)'
check_jq "-J: per-flow interval counts add up to the interval's" "$T/json" \
    'all(.intervals[]; .retransmits == ([.flows[].retransmits] | add))'
check_jq "-J: the summary holds at least what the intervals do" "$T/json" ".summary.retransmits >= $cli"

# ---- --json-stream: interval lines as they come (one may be -1 if the server's was late)
run stream --json-stream
check "--json-stream: the interval events carry the server's retransmits ($(jq -c 'select(.event == "interval") | .retransmits' "$T/stream" | tr '\n' ' '))" \
    jq -e -s '[.[] | select(.event == "interval") | .retransmits | select(. > 0)] | length > 0' "$T/stream"
check "--json-stream: the final document's intervals all known and as its server's" \
    jq -e -s '.[-1] | [.intervals[].retransmits] == [.server_intervals[:(.intervals | length)][].retransmits] and all(.intervals[]; .retransmits >= 0)' "$T/stream"

# ---- text: the interval lines' retransmit column (after bytes and rate) is not always 0
run text
retr=$(sed -n 's/^\[ *[0-9.]*- *[0-9.]* s\]//p' "$T/text" | awk '{ print $5 }' | tr '\n' ' ')
check "text: the interval lines' retransmits ($retr) are not all 0" \
    bash -c "tr ' ' '\n' <<<'$retr' | grep -qE '^[1-9][0-9]*$'"

finish
