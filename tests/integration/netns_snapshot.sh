#!/usr/bin/env bash
# netns_snapshot: the host snapshot is taken in the namespace a test runs in, and compare names
# what changed between two runs with both values. Two namespaces joined by veth; a daemon
# with --db in one, the client in the other. Between two runs the client namespace's veth
# gets RPS on its receive queue and the server namespace's tcp_rmem changes. compare of the
# client's runs names the rps_cpus change under the client and, from the snapshot the daemon
# sent with its results, tcp_rmem under the server; compare of the daemon's served runs names
# tcp_rmem under the server. A second daemon in the server namespace with --no-host-snapshot:
# its run says the server declined, in the report, show and compare, and the client's own
# settings are still compared.
# Needs root, `ip netns` and veth; exits 77 (skipped) without them. Only the namespaces'
# settings change; traffic goes to 10.231.15.1 inside them.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

SRV_ADDR=10.231.15.1
CLI_ADDR=10.231.15.2

[[ $(id -u) -eq 0 ]] || skip "needs root for network namespaces"
command -v ip >/dev/null 2>&1 || skip "needs ip (iproute2)"

NS_S=nrsn-s-$$
NS_C=nrsn-c-$$
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^nrsn-[sc]-[0-9]+$' || true); do
    owner=${ns##*-}
    kill -0 "$owner" 2>/dev/null || ip netns del "$ns" 2>/dev/null || true
done
on_exit "ip netns del $NS_S; ip netns del $NS_C"
ip netns add "$NS_S" 2>"$T/ns.err" || skip "cannot create a network namespace: $(cat "$T/ns.err")"
ip netns add "$NS_C" 2>"$T/ns.err" || skip "cannot create a network namespace: $(cat "$T/ns.err")"
ip link add name veth-s netns "$NS_S" type veth peer name veth-c netns "$NS_C" 2>"$T/veth.err" ||
    skip "cannot create a veth pair: $(cat "$T/veth.err")"
for end in "$NS_S veth-s $SRV_ADDR" "$NS_C veth-c $CLI_ADDR"; do
    read -r ns dev addr <<<"$end"
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$addr/24" dev "$dev"
    ip -n "$ns" link set "$dev" up
done
# the snapshot records operstate: both ends must read "up" before the first run
wait_link_up "$NS_S" veth-s || fail "veth-s did not come up"
wait_link_up "$NS_C" veth-c || fail "veth-c did not come up"
inc() { ip netns exec "$NS_C" "$@"; }
ins() { ip netns exec "$NS_S" "$@"; }
RPS=/sys/class/net/veth-c/queues/rx-0/rps_cpus
inc test -w "$RPS" || skip "the veth has no writable rps_cpus"

CDB=$T/client.db
SDB=$T/server.db
SRV_LOG=$T/serve.log
# started directly, not through ins: a backgrounded function would be a subshell whose
# daemon the exit trap could not reach
ip netns exec "$NS_S" "$NETRIG" serve -p 0 -B "$SRV_ADDR" --db "$SDB" 2>"$SRV_LOG" &
SRV_PID=$!
track_pid "$SRV_PID"
SRV_PORT=$(wait_for_port "$SRV_LOG" "$SRV_PID")

run() {
    inc "$NETRIG" stream -c "$SRV_ADDR" -p "$SRV_PORT" -t 0.3 --title "$1" --db "$CDB" \
        >"$T/run.$1.txt" 2>&1 || fail "run $1 failed: $(tail -c 300 "$T/run.$1.txt")"
}
# the daemon saves its side when the session ends: wait (bounded) for it
served() {
    local want=$1 n=0
    for _ in $(seq 100); do
        n=$("$NETRIG" history -J --db "$SDB" 2>/dev/null | jq length 2>/dev/null || echo 0)
        ((n >= want)) && return 0
        sleep 0.05
    done
    fail "the daemon saved $n runs, expected $want"
}

rps_before=$(inc cat "$RPS")
rmem_before=$(ins sysctl -n net.ipv4.tcp_rmem | tr -s ' \t' ' ')
run before
served 1
inc sh -c "echo 1 > $RPS"
ins sysctl -qw net.ipv4.tcp_rmem="4096 65536 1048576"
rps_after=$(inc cat "$RPS")
rmem_after=$(ins sysctl -n net.ipv4.tcp_rmem | tr -s ' \t' ' ')
check "the namespace's rps_cpus changed ($rps_before -> $rps_after)" test "$rps_before" != "$rps_after"
run after
served 2

# --- the client's runs: the snapshot is the client namespace's, and names the change
"$NETRIG" show 1 -J --db "$CDB" >"$T/show1.json"
check_jq "the client snapshot sees the namespace's interfaces only" "$T/show1.json" \
    '[.host | keys[] | select(startswith("iface.")) | split(".")[1]] | unique == ["lo", "veth-c"]'
check_jq "the client snapshot has the veth's queue settings" "$T/show1.json" \
    '.host["iface.veth-c.rx-0.rps_cpus"] == $v' --arg v "$rps_before"
"$NETRIG" compare 1 2 -J --db "$CDB" >"$T/cmp.json" || fail "compare of the client's runs failed"
check_jq "compare names rps_cpus under the client, with both values" "$T/cmp.json" \
    '[.host_differences[] | select(.side == "client")] == [{"side":"client","key":"iface.veth-c.rx-0.rps_cpus","a":$a,"b":$b}]' \
    --arg a "$rps_before" --arg b "$rps_after"
check_jq "the client's runs name the server namespace's tcp_rmem under the server" "$T/cmp.json" \
    '.hosts.server.compared and any(.host_differences[]; . == {"side":"server","key":"net.ipv4.tcp_rmem","a":$a,"b":$b})' \
    --arg a "$rmem_before" --arg b "$rmem_after"
check_jq "the server's snapshot is its namespace's: no client interface in it" "$T/cmp.json" \
    'all(.host_differences[] | select(.side == "server"); (.key | contains("veth-c")) | not)'
check_jq "the client's snapshot does not see the server's tcp_rmem change" "$T/cmp.json" \
    'all(.host_differences[] | select(.side == "client"); .key != "net.ipv4.tcp_rmem")'
"$NETRIG" show 1 -J --db "$CDB" >"$T/show1.json"
check_jq "the server's snapshot sees the server namespace's veth" "$T/show1.json" \
    '[.peer_host | keys[] | select(startswith("iface.")) | split(".")[1]] | unique == ["lo", "veth-s"]'
"$NETRIG" compare 1 2 --db "$CDB" >"$T/cmp.txt"
check "compare text: the client's change with both values" \
    grep -qE "^  iface\.veth-c\.rx-0\.rps_cpus +$rps_before -> $rps_after$" "$T/cmp.txt"
check "compare text: the server's change under the server, with both values" \
    awk -v a="$rmem_before" -v b="$rmem_after" \
    '/^server host settings that differ/{s=1} s && index($0, "net.ipv4.tcp_rmem") && index($0, a " -> " b){f=1} END{exit !f}' "$T/cmp.txt"
check "compare text: the parameters are alike" grep -q '^parameters: no differences$' "$T/cmp.txt"

# --- the daemon's served runs: its snapshot is the server namespace's
"$NETRIG" compare 1 2 -J --db "$SDB" >"$T/scmp.json" || fail "compare of the served runs failed"
check_jq "compare names tcp_rmem under the server, with both values" "$T/scmp.json" \
    'any(.host_differences[]; . == {"side":"server","key":"net.ipv4.tcp_rmem","a":$a,"b":$b})' \
    --arg a "$rmem_before" --arg b "$rmem_after"
check_jq "the served runs' server snapshot has no client namespace interface" "$T/scmp.json" \
    'all(.host_differences[]; (.key | contains("veth-c")) | not)'
check_jq "a served run keeps no client settings, and says why" "$T/scmp.json" \
    '(.hosts.client.compared | not) and (.hosts.client.not_recorded[0].reason | test("daemon served"))'
"$NETRIG" compare 1 2 --db "$SDB" >"$T/scmp.txt"
check "compare text: the server's change under the server" \
    awk -v a="$rmem_before" -v b="$rmem_after" \
    '/^server host settings that differ/{s=1} s && index($0, "net.ipv4.tcp_rmem") && index($0, a " -> " b){f=1} END{exit !f}' "$T/scmp.txt"

# --- a daemon that declines to send its settings
ip netns exec "$NS_S" "$NETRIG" serve -p 0 -B "$SRV_ADDR" --no-host-snapshot 2>"$T/serve2.log" &
SRV2_PID=$!
track_pid "$SRV2_PID"
SRV_PORT=$(wait_for_port "$T/serve2.log" "$SRV2_PID")
inc sh -c "echo 0 > $RPS"
run declined
check "the report notes that the server declined" \
    grep -q '^Note        the server declined to send its settings (serve --no-host-snapshot)' \
    "$T/run.declined.txt"
"$NETRIG" show 3 -J --db "$CDB" >"$T/show3.json"
check_jq "run 3 keeps no server settings, and says why" "$T/show3.json" \
    '.peer_host == null and (.peer_host_note | startswith("the server declined to send its settings"))'
check_jq "run 3 keeps the client namespace's settings" "$T/show3.json" \
    '.host["iface.veth-c.rx-0.rps_cpus"] == $v' --arg v "$rps_before"
"$NETRIG" compare 2 3 -J --db "$CDB" >"$T/dcmp.json" || fail "compare 2 3 failed"
check_jq "compare: the server's side not compared, the decline named for run 3" "$T/dcmp.json" \
    '(.hosts.server.compared | not) and .hosts.server.not_recorded == [{"run":3,"set":"b","reason":.hosts.server.not_recorded[0].reason}] and (.hosts.server.not_recorded[0].reason | startswith("the server declined"))'
check_jq "compare: no server differences, the client's rps_cpus back, with both values" \
    "$T/dcmp.json" \
    '.host_differences == [{"side":"client","key":"iface.veth-c.rx-0.rps_cpus","a":$a,"b":$b}]' \
    --arg a "$rps_after" --arg b "$rps_before"
"$NETRIG" compare 2 3 --db "$CDB" >"$T/dcmp.txt"
check "compare text: the server declined" \
    grep -q '^server host settings: not compared, not recorded for run 3: the server declined to send its settings' \
    "$T/dcmp.txt"

finish
