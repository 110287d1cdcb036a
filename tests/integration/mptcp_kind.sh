#!/usr/bin/env bash
# mptcp_kind: `netrig mptcp`, the test kind added through the kind table alone
# (model/test_kind.c's row, flows/flow_kinds.c's row, its help text): the command is listed and
# has its help; on loopback in a namespace of its own it runs end to end against the built-in
# server and against a daemon, both ways, with the same document as `netrig stream --mptcp`
# (the wire and the JSON are a stream's with "mptcp": true); it refuses what MPTCP sockets
# cannot do (-Z, --zerocopy-rx, --fq-rate) and -u, naming the option; the daemon's metrics
# count it as a TCP stream. One path only, so one subflow per flow: mptcp_paths measures two.
# Needs root (a namespace) and a kernel with MPTCP enabled: exits 77 without.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

need_netns
[[ -r /proc/sys/net/mptcp/enabled ]] || skip "this kernel has no MPTCP (no /proc/sys/net/mptcp)"
new_netns mpk
NS=$NETNS
[[ $(ip netns exec "$NS" sysctl -n net.mptcp.enabled) == 1 ]] ||
    skip "MPTCP is disabled in new namespaces (net.mptcp.enabled = 0)"
in_ns() { ip netns exec "$NS" "$NETRIG" "$@"; }

# ---- the command: listed, its help
"$NETRIG" --help >"$T/help.out"
check "--help lists the mptcp command" grep -q '^  mptcp  *throughput over Multipath TCP' "$T/help.out"
"$NETRIG" help mptcp >"$T/help_mptcp.out"
check "help mptcp: its usage line" grep -q '^usage: netrig mptcp \[-c HOST\] \[OPTIONS\]$' "$T/help_mptcp.out"
"$NETRIG" mptcp --help >"$T/help_mptcp2.out"
check "mptcp --help: the same text" cmp -s "$T/help_mptcp.out" "$T/help_mptcp2.out"

# ---- end to end against the built-in loopback server
OUT=$T/builtin.json
rc=0
in_ns mptcp -t 1 -P 2 -J --no-save >"$OUT" 2>"$T/builtin.err" || rc=$?
check "built-in server: exit 0 (got $rc: $(head -c 300 "$T/builtin.err"))" test "$rc" -eq 0
check_jq "built-in server: a complete stream with params.mptcp" "$OUT" \
    '.partial == false and .test == "stream" and .params.test == "stream" and .params.mptcp == true and (.params.udp // false) == false'
check_jq "built-in server: every flow's MPTCP connection, both ends, no fallback" "$OUT" \
    '(.flows | length) == 2 and all(.flows[]; .mptcp.client.fallback == false and .mptcp.server.fallback == false and .mptcp.client.subflow_count >= 1)'
check_jq "built-in server: it moved data" "$OUT" '.summary.throughput_bps > 0 and .summary.bytes > 0'

# ---- the same document as stream --mptcp: same keys in params, summary and each flow
in_ns stream --mptcp -t 1 -P 2 -J --no-save >"$T/stream.json" 2>"$T/stream.err" ||
    fail "stream --mptcp: exit status $? ($(head -c 300 "$T/stream.err"))"
shape='[(.params | keys), (.summary | keys), (.flows[0] | keys), (.flows[0].mptcp.client | keys)]'
check "the document has the shape of stream --mptcp's" \
    test "$(jq -c "$shape" "$OUT")" == "$(jq -c "$shape" "$T/stream.json")"

# ---- against a daemon, with its metrics: forward and reverse
SRV_LOG=$T/serve.log
ip netns exec "$NS" "$NETRIG" serve -p 0 -B 127.0.0.1 --metrics 127.0.0.1:0 2>"$SRV_LOG" &
SRV_PID=$!
track_pid "$SRV_PID"
SRV_PORT=$(wait_for_port "$SRV_LOG" "$SRV_PID")
MPORT=$(metrics_port "$SRV_LOG")
for dir in "" -R; do
    name=daemon${dir:+_reverse}
    rc=0
    in_ns mptcp -c 127.0.0.1 -p "$SRV_PORT" -t 1 $dir -J --no-save >"$T/$name.json" \
        2>"$T/$name.err" || rc=$?
    check "$name: exit 0 (got $rc: $(head -c 300 "$T/$name.err"))" test "$rc" -eq 0
    check_jq "$name: complete, the server's end of the MPTCP connection reported" "$T/$name.json" \
        '.partial == false and .params.mptcp == true and .flows[0].mptcp.server.fallback == false and .summary.throughput_bps > 0'
done
check_jq "reverse: the server sent" "$T/daemon_reverse.json" '.params.direction == "reverse" and .flows[0].direction == "server_to_client"'
if [[ -n $MPORT ]]; then
    ip netns exec "$NS" curl -s "http://127.0.0.1:$MPORT/metrics" >"$T/metrics.txt" || true
    check "the daemon's metrics count both as MPTCP streams" \
        grep -q '^netrig_tests_served_total{test="stream",protocol="mptcp"} 2$' "$T/metrics.txt"
    check "... and none as plain TCP" \
        grep -q '^netrig_tests_served_total{test="stream",protocol="tcp"} 0$' "$T/metrics.txt"
else
    fail "the daemon logged no metrics port"
fi

# ---- what MPTCP sockets cannot do, and -u, refused with the option named (exit 2)
for opt in -u -Z --zerocopy-rx "--fq-rate 1G" --iperf3 "-r 1"; do
    rc=0
    # shellcheck disable=SC2086
    in_ns mptcp -t 1 $opt --no-save >"$T/refused.out" 2>"$T/refused.err" || rc=$?
    first=${opt%% *}
    check "mptcp $opt: exit 2 (got $rc)" test "$rc" -eq 2
    check "mptcp $opt: one line naming $first ($(head -c 200 "$T/refused.err"))" \
        bash -c "[[ \$(wc -l <'$T/refused.err') -eq 1 ]] && grep -qF -- \"option $first does not apply to 'netrig mptcp'\" '$T/refused.err'"
done

# ---- the text report: the MPTCP section
in_ns mptcp -t 1 --no-save >"$T/text.out" 2>"$T/text.err" ||
    fail "text run: exit status $? ($(head -c 300 "$T/text.err"))"
check "text: the MPTCP section lists flow 0's subflows" \
    grep -q '^flow 0 (up, sent by the client): [0-9]* subflows\?, [0-9]* retransmits in all$' "$T/text.out"
finish
