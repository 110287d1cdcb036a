#!/usr/bin/env bash
# tune_diagnose: `netrig diagnose` names what limits a transfer and `netrig tune` fixes a host
# setting, journaled and reversible. Two network namespaces joined by a veth pair: a receiver
# (the daemon) and a sender (the client). Nothing runs on, or changes, the host itself: every
# tune runs inside the receiver's namespace with --state-dir in this test's temporary
# directory, and the host's own sysctls are compared before and after.
#  1. receiver's tcp_rmem "4096 4096 8192": diagnose says rwnd_limited; `tune --apply` inside
#     the receiver's namespace fixes it and says plainly that net.core.rmem_max is global and
#     read-only there; the rerun is >= 3x faster; `tune --revert` restores every sysctl of
#     the namespace exactly (snapshots of all of net.ipv4.* and net.core.* compared).
#  2. kill -9 during --apply, between its first and second change (NETRIG_TUNE_PAUSE_MS pauses
#     before each further change), then --revert: every value back.
#  3. sender's tcp_wmem "4096 4096 8192" on a 20 ms path (the WAN emulator, lib.sh `path`) ->
#     sndbuf_limited. (This test used to fake the RTT with a reverse bulk flow filling a tbf on
#     the ACK path; srtt cannot tell a queue on the ACK path from one on the data path, and a
#     queue of a quarter of the round trip now reads as a full link.)
#  4. the sender's egress shaped by tbf to 200 Mbit/s -> link_capacity (queueing; and with
#     --rate 200M, >= 90 % of the goodput that rate allows); --during on a running stream too.
#  5. the client paced with --fq-rate 50M x 2 flows below that 200 Mbit/s link -> app_limited.
# Needs root, `ip netns`, veth and sch_tbf; exits 77 (skipped) without them.
# Traffic goes only to namespace-internal addresses in 10.234.N.0/24.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
export XDG_DATA_HOME=$T/data # runs are saved to a history database: keep ours out of the user's

NET=10.234.$((20 + $$ % 200))
SRV_ADDR=$NET.1
CLI_ADDR=$NET.2
STATE=$T/state
TINY="4096 4096 8192"

[[ $(id -u) -eq 0 ]] || skip "needs root for network namespaces"
command -v ip >/dev/null 2>&1 || skip "needs ip (iproute2)"
command -v tc >/dev/null 2>&1 || skip "needs tc (iproute2)"

NS_R=nrtd-r-$$
NS_S=nrtd-s-$$

# namespaces left by an earlier run that was killed before its trap ran (its pid is gone)
for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E '^nrtd-[rs]-[0-9]+$' || true); do
    owner=${ns##*-}
    kill -0 "$owner" 2>/dev/null || ip netns del "$ns" 2>/dev/null || true
done

# snap / snap_ns NS: every readable net.ipv4.* and net.core.* sysctl as PATH=VALUE (values
# exactly as read, tabs kept), of the host or of namespace NS; one grep, not a process per file
# (that took a second a snapshot on a loaded host, and the test takes a dozen)
snap() { { grep -Hs '' /proc/sys/net/ipv4/* /proc/sys/net/core/* || true; } | sed 's/:/=/'; }
snap_ns() { ip netns exec "$1" bash -c "$(declare -f snap); snap"; }

HOST_BEFORE=$T/host.before
snap >"$HOST_BEFORE"
host_journals() { { find /var/lib/netrig/tune -name "tune-*.jsonl" 2>/dev/null || true; } | wc -l; }
HOST_JOURNALS=$(host_journals)
etc_files() { { cat /etc/sysctl.d/90-netrig.conf /etc/udev/rules.d/90-netrig.rules 2>/dev/null || true; } | md5sum; }
ETC_BEFORE=$(etc_files)

on_exit "ip netns del $NS_R; ip netns del $NS_S"
ip netns add "$NS_R" 2>"$T/ns.err" || skip "cannot create a network namespace: $(cat "$T/ns.err")"
ip netns add "$NS_S" 2>"$T/ns.err" || skip "cannot create a network namespace: $(cat "$T/ns.err")"
# the veth ends are created inside the namespaces: nothing is left in the host's namespace
ip link add name veth-r netns "$NS_R" type veth peer name veth-s netns "$NS_S" 2>"$T/veth.err" ||
    skip "cannot create a veth pair: $(cat "$T/veth.err")"
ip -n "$NS_R" link set lo up
ip -n "$NS_S" link set lo up
ip -n "$NS_R" addr add "$SRV_ADDR/24" dev veth-r
ip -n "$NS_S" addr add "$CLI_ADDR/24" dev veth-s
ip -n "$NS_R" link set veth-r up
ip -n "$NS_S" link set veth-s up
ip netns exec "$NS_S" tc qdisc add dev veth-s root tbf rate 1gbit burst 64kb latency 50ms \
    2>"$T/tc.err" || skip "cannot add a tbf qdisc: $(cat "$T/tc.err")"
ip netns exec "$NS_S" tc qdisc del dev veth-s root

up=0
for _ in $(seq 50); do
    probe=$(ip netns exec "$NS_S" timeout 2 bash -c "exec 3<>/dev/tcp/$SRV_ADDR/9" 2>&1 || true)
    if [[ $probe == *refused* ]]; then
        up=1
        break
    fi
    sleep 0.1
done
[[ $up -eq 1 ]] || fail "no answer from $SRV_ADDR inside the namespaces"

# The daemon in the receiver's namespace. A listener's buffers are fixed when it is created,
# so it is restarted after its namespace's sysctls change.
SRV_PID=
server_start() {
    SRV_LOG=$T/serve.$RANDOM.log
    ip netns exec "$NS_R" "$NETRIG" serve -p 0 -B "$SRV_ADDR" 2>"$SRV_LOG" &
    SRV_PID=$!
    track_pid "$SRV_PID"
    SRV_PORT=$(wait_for_port "$SRV_LOG" "$SRV_PID")
}
server_stop() {
    kill -TERM "$SRV_PID" 2>/dev/null || true
    wait "$SRV_PID" 2>/dev/null || true
}

# diag NAME [options]: netrig diagnose -J from the sender's namespace into $T/NAME.json
diag() {
    local name=$1 rc=0
    shift
    ip netns exec "$NS_S" timeout -s KILL 90 "$NETRIG" diagnose -c "$SRV_ADDR" -p "$SRV_PORT" \
        -J "$@" >"$T/$name.json" 2>"$T/$name.err" || rc=$?
    if [[ $rc -ne 0 ]]; then
        fail "$name: diagnose exit status $rc ($(head -c 300 "$T/$name.err"))"
        echo '{}' >"$T/$name.json"
        return 0
    fi
    log "$name: $(jq -r '"\(.verdict.id): \(.test.throughput_bps / 1e4 | round / 100) Mbit/s; busy \(.sender.busy_fraction * 100 | round)%, rwnd \(.sender.rwnd_limited_fraction * 100 | round)%, sndbuf \(.sender.sndbuf_limited_fraction * 100 | round)%, srtt \(.sender.srtt_us) us, min_rtt \(.sender.min_rtt_us) us"' "$T/$name.json")"
}

# check_verdict NAME ID: the verdict, with evidence (numbers) and advice
check_verdict() {
    check_jq "$1: verdict.id is $2 (got $(jq -r .verdict.id "$T/$1.json"))" "$T/$1.json" \
        '.verdict.id == $id' --arg id "$2"
    [[ $(jq -r .verdict.id "$T/$1.json") == "$2" ]] ||
        log "$1: the verdict's evidence: $(jq -c '.verdict.evidence' "$T/$1.json")"
    check_jq "$1: evidence with numbers and advice" "$T/$1.json" \
        '(.verdict.evidence | length) >= 1 and all(.verdict.evidence[]; test("[0-9]")) and
         (.verdict.advice | length) > 20'
}

tune_ns() { ip netns exec "$NS_R" "$NETRIG" tune --state-dir "$STATE" "$@"; }

# ---- 1. receive window -------------------------------------------------------------------
ip netns exec "$NS_R" sysctl -qw net.ipv4.tcp_rmem="$TINY"
NS_BEFORE=$T/ns.before
snap_ns "$NS_R" >"$NS_BEFORE"
server_start
log "namespaces $NS_R (receiver, daemon on $SRV_ADDR:$SRV_PORT) / $NS_S (sender)"
diag rwnd --rate 10G --rtt 1ms -t 3
check_verdict rwnd rwnd_limited
check_jq "rwnd: advice names net.ipv4.tcp_rmem, verdict.tune the netrig tune change" \
    "$T/rwnd.json" '(.verdict.advice | test("net.ipv4.tcp_rmem")) and
                    (.verdict.tune | test("netrig tune --apply --rate 10G --rtt 1ms"))'
BPS_SLOW=$(jq '.test.throughput_bps // 0' "$T/rwnd.json")

# a --rtt at which the host's net.core.rmem_max is below the BDP, so the plan has it too and
# must say it cannot be changed in the namespace
RMEM_MAX=$(cat /proc/sys/net/core/rmem_max)
RTT_MS=$(awk -v m="$RMEM_MAX" 'BEGIN { r = int(m * 8 / 10e9 * 1000) + 2; print (r < 10 ? 10 : r) }')
log "tune target 10G x ${RTT_MS}ms (host net.core.rmem_max $RMEM_MAX)"

rc=0
tune_ns --rate 10G --rtt "${RTT_MS}ms" >"$T/dry.txt" 2>&1 || rc=$?
check "dry run exits 0 (got $rc)" test "$rc" -eq 0
check "dry run says it changed nothing" grep -q "dry run, nothing changed" "$T/dry.txt"
check "dry run plans net.ipv4.tcp_rmem from the tiny value" grep -q "4096 4096 8192 -> " "$T/dry.txt"
check "dry run changed nothing" test "$(snap_ns "$NS_R")" == "$(cat "$NS_BEFORE")"
tune_ns --rate 10G --rtt "${RTT_MS}ms" -J >"$T/dry.json" 2>&1 || true
check_jq "dry run -J: tcp_rmem change with old, new, reason, command" "$T/dry.json" \
    '.mode == "dry_run" and .netns == "child" and any(.changes[]; .setting == "net.ipv4.tcp_rmem" and
     .old == "4096\t4096\t8192" and (.new | endswith(" 33554432") or endswith("0")) and
     (.reason | test("BDP")) and (.command | startswith("sysctl -w")))'

# --persist would write the host's /etc (ip netns exec shares it): refused, nothing done. In
# case a netrig did write anyway, it runs with empty tmpfs over /etc/sysctl.d and /etc/udev,
# mounted in the private mount namespace `ip netns exec` gives it, so the host's never change.
rc=0
ip netns exec "$NS_R" bash -c 'for d in /etc/sysctl.d /etc/udev; do
        [[ -d $d ]] && { mount -t tmpfs netrig-test "$d" || exit 3; }
    done
    exec "$0" tune --state-dir "$1" --apply --persist --rate 10G --rtt "$2"' \
    "$NETRIG" "$STATE" "${RTT_MS}ms" >"$T/persist.txt" 2>&1 || rc=$?
check "--persist inside the namespace is refused (exit 2, got $rc)" test "$rc" -eq 2
check "... with one line" one_line "$T/persist.txt"
check "... and changes nothing" test "$(snap_ns "$NS_R")" == "$(cat "$NS_BEFORE")"
check "... and writes no /etc file" test "$(etc_files)" == "$ETC_BEFORE"

rc=0
tune_ns --apply --rate 10G --rtt "${RTT_MS}ms" >"$T/apply.txt" 2>&1 || rc=$?
log "apply: exit $rc; $(grep -c '^  applied' "$T/apply.txt") applied"
check "apply exits 0: the changes not applicable in a namespace are no failure (got $rc)" test "$rc" -eq 0
check "... and says so" grep -Eq "not applicable here [1-9]" "$T/apply.txt"
check "apply changed net.ipv4.tcp_rmem" grep -q "applied     net.ipv4.tcp_rmem: 4096 4096 8192 -> " "$T/apply.txt"
check "apply says plainly that net.core.rmem_max cannot be changed in the namespace" \
    grep -q "net.core.rmem_max is global and read-only inside this network namespace: set it on the host" \
    <(tr '\n' ' ' <"$T/apply.txt" | tr -s ' ')
NEW_MAX=$(ip netns exec "$NS_R" cat /proc/sys/net/ipv4/tcp_rmem | awk '{print $3}')
check "tcp_rmem max raised in the namespace (now $NEW_MAX)" test "$NEW_MAX" -ge 4194304
check "the host's tcp_rmem is untouched" test "$(cat /proc/sys/net/ipv4/tcp_rmem)" == "$(grep '^/proc/sys/net/ipv4/tcp_rmem=' "$HOST_BEFORE" | cut -d= -f2-)"
tune_ns --list -J >"$T/list1.json"
check_jq "--list: one journal, applied" "$T/list1.json" \
    '(.journals | length) == 1 and .journals[0].state == "applied" and .journals[0].applied >= 1'

server_stop
server_start
diag fixed --rate 10G --rtt 1ms -t 3
BPS_FAST=$(jq '.test.throughput_bps // 0' "$T/fixed.json")
log "throughput $BPS_SLOW -> $BPS_FAST bit/s"
check "after tune the stream is >= 3x faster ($BPS_SLOW -> $BPS_FAST)" \
    awk -v a="$BPS_SLOW" -v b="$BPS_FAST" 'BEGIN { exit !(a > 0 && b >= 3 * a) }'
check_jq "after tune: no longer receive-window limited" "$T/fixed.json" '.verdict.id != "rwnd_limited"'
server_stop

rc=0
tune_ns --revert >"$T/revert.txt" 2>&1 || rc=$?
check "revert exits 0 (got $rc: $(tail -n 2 "$T/revert.txt"))" test "$rc" -eq 0
snap_ns "$NS_R" >"$T/ns.after"
check "revert restores every net.ipv4/net.core sysctl of the namespace exactly" \
    diff "$NS_BEFORE" "$T/ns.after"
check "tcp_rmem is the tiny value again" test "$(ip netns exec "$NS_R" cat /proc/sys/net/ipv4/tcp_rmem)" == "$(printf '4096\t4096\t8192')"
tune_ns --list -J >"$T/list2.json"
check_jq "--list: the journal is reverted" "$T/list2.json" '.journals[0].state == "reverted"'
rc=0
tune_ns --revert >"$T/revert2.txt" 2>&1 || rc=$?
check "a second --revert has nothing to do (exit 2)" test "$rc" -eq 2
check "... and says so in one line" one_line "$T/revert2.txt"

# ---- 2. kill -9 between two changes, then --revert ---------------------------------------
snap_ns "$NS_R" >"$T/ns.before2"
ls "$STATE" >"$T/journals.before"
# The pause before each change after the first is the hook's longest, 60 s: the apply is
# killed during the pause after its first change whatever the load (a 600 ms pause was
# sometimes over before a loaded host's poll saw the second result, and the apply finished).
NETRIG_TUNE_PAUSE_MS=60000 ip netns exec "$NS_R" "$NETRIG" tune --state-dir "$STATE" --apply \
    --rate 10G --rtt "${RTT_MS}ms" >"$T/killed.txt" 2>&1 &
KPID=$!
track_pid "$KPID"
J=
for _ in $(seq 600); do # the new journal, once it holds a result (up to 30 s)
    J=$(ls "$STATE" | grep -vxF -f "$T/journals.before" | head -n1 || true)
    J=${J:+$STATE/$J}
    [[ -n $J ]] && [[ $(grep -c '"result"' "$J" || true) -ge 1 ]] && break
    sleep 0.05
done
kill -KILL "$KPID" 2>/dev/null || true
wait "$KPID" 2>/dev/null || true
log "killed the apply after $(grep -c '"result"' "$J") change(s): $(wc -l <"$J") journal lines"
check "the killed apply had changed something" test "$(snap_ns "$NS_R")" != "$(cat "$T/ns.before2")"
check "the killed journal has no end record" bash -c "! grep -q '\"done\"' '$J'"
tune_ns --list -J >"$T/list3.json"
check_jq "--list: apply interrupted" "$T/list3.json" 'any(.journals[]; .state == "apply interrupted")'
rc=0
tune_ns --revert >"$T/revert3.txt" 2>&1 || rc=$?
check "revert after kill exits 0 (got $rc)" test "$rc" -eq 0
check "revert after kill restores every value" diff "$T/ns.before2" <(snap_ns "$NS_R")

# a damaged journal: one clear line, nothing changed
tune_ns --apply --rate 10G --rtt "${RTT_MS}ms" >/dev/null 2>&1 || true
J=$(ls -t "$STATE"/tune-*.jsonl | head -n1)
snap_ns "$NS_R" >"$T/ns.applied"
cp "$J" "$T/journal.bak"
head -c -7 "$T/journal.bak" >"$J" # the last line cut short
rc=0
tune_ns --revert >"$T/revert4.txt" 2>&1 || rc=$?
check "damaged journal: revert fails with exit 2 (got $rc)" test "$rc" -eq 2
check "damaged journal: one line" one_line "$T/revert4.txt"
check "damaged journal: it names the line and says truncated" \
    grep -q "line [0-9]* is truncated" "$T/revert4.txt"
check "damaged journal: nothing was changed" diff "$T/ns.applied" <(snap_ns "$NS_R")
cp "$T/journal.bak" "$J"
tune_ns --revert >/dev/null 2>&1 || fail "revert of the repaired journal failed"
check "the repaired journal reverts everything" diff "$T/ns.before2" <(snap_ns "$NS_R")
ip netns exec "$NS_R" sysctl -qw net.ipv4.tcp_rmem="4096 131072 6291456"

# ---- 3. send buffer ----------------------------------------------------------------------
path 20ms
PSRV_LOG=$T/pserve.log
ip netns exec "$PATH_NS_B" "$NETRIG" serve -p 0 -B "$PATH_B" 2>"$PSRV_LOG" &
PSRV_PID=$!
track_pid "$PSRV_PID"
PSRV_PORT=$(wait_for_port "$PSRV_LOG" "$PSRV_PID")
ip netns exec "$PATH_NS_A" sysctl -qw net.ipv4.tcp_wmem="$TINY"
rc=0
ip netns exec "$PATH_NS_A" "$NETRIG" diagnose -c "$PATH_B" -p "$PSRV_PORT" -J -t 3 \
    >"$T/sndbuf.json" 2>"$T/sndbuf.err" || rc=$?
check "sndbuf: diagnose exits 0 (got $rc: $(head -c 200 "$T/sndbuf.err"))" test "$rc" -eq 0
log "sndbuf: $(jq -r '"\(.verdict.id): \(.test.throughput_bps / 1e4 | round / 100) Mbit/s; buffer \(.verdict.figures.buffer_use * 100 | round)% full, srtt \(.verdict.figures.srtt_us) us"' "$T/sndbuf.json")"
check_verdict sndbuf sndbuf_limited
check_jq "sndbuf: advice names net.ipv4.tcp_wmem" "$T/sndbuf.json" \
    '(.verdict.advice | test("net.ipv4.tcp_wmem")) and (.verdict.tune | test("on the sender"))'
kill -TERM "$PSRV_PID" 2>/dev/null || true
wait "$PSRV_PID" 2>/dev/null || true
path_down || fail "the emulated path did not come down cleanly"

# ---- 4. link capacity ---------------------------------------------------------------------
server_start
ip netns exec "$NS_S" tc qdisc add dev veth-s root tbf rate 200mbit burst 64kb latency 50ms
diag tbf -t 4
check_verdict tbf link_capacity
check_jq "tbf: the evidence shows the standing queue" "$T/tbf.json" \
    'any(.verdict.evidence[]; test("standing queue"))'
diag tbf_rate -t 4 --rate 200M
check_verdict tbf_rate link_capacity
check_jq "tbf --rate 200M: >= 90 % of the goodput 200M allows" "$T/tbf_rate.json" \
    '.test.throughput_bps >= 0.9 * .verdict.figures.goodput_at_rate_bps'
# --during attaches to the connections that exist when it starts: it starts once the stream
# has reported its first interval (both data connections open and moving data; a fixed sleep
# was too short on a loaded host); the stream runs 8 s, --during 2 s of them.
ip netns exec "$NS_S" "$NETRIG" stream -c "$SRV_ADDR" -p "$SRV_PORT" -t 8 -P 2 -i 0.25 \
    --json-stream --no-save >"$T/bg.jsonl" 2>"$T/bg.err" &
BG=$!
track_pid "$BG"
for _ in $(seq 400); do # up to 20 s
    grep -q '"event":"interval"' "$T/bg.jsonl" 2>/dev/null && break
    alive "$BG" || break
    sleep 0.05
done
check "the background stream reports intervals ($(head -c 200 "$T/bg.err"))" \
    grep -q '"event":"interval"' "$T/bg.jsonl"
rc=0
ip netns exec "$NS_S" timeout -s KILL 60 "$NETRIG" diagnose --during -c "$SRV_ADDR" \
    -p "$SRV_PORT" -t 2 -J >"$T/during.json" 2>"$T/during.err" || rc=$?
check "--during exits 0 (got $rc: $(head -c 200 "$T/during.err"))" test "$rc" -eq 0
log "during: $(jq -r '"\(.verdict.id): \(.test.throughput_bps / 1e4 | round / 100) Mbit/s over \(.sender.flows) flows; busy \(.sender.busy_fraction * 100 | round)%, queue \(.verdict.figures.queue_delay_us) us"' "$T/during.json" 2>/dev/null)"
check_jq "--during on a running stream through the tbf: link_capacity over 2 connections" \
    "$T/during.json" '.verdict.id == "link_capacity" and .sender.flows == 2'
check "the background stream was still running after --during" alive "$BG"
wait_exit "$BG" 60 || fail "the background stream did not end within 60 s"

# ---- 5. paced below the link --------------------------------------------------------------
diag paced -t 3 -P 2 --fq-rate 50M
check_verdict paced app_limited
check_jq "paced: the evidence names the pacing" "$T/paced.json" \
    'any(.verdict.evidence[]; test("pacing asked for"))'
ip netns exec "$NS_S" tc qdisc del dev veth-s root
server_stop

# ---- the host is untouched ----------------------------------------------------------------
check "the host's net.ipv4/net.core sysctls are unchanged" diff "$HOST_BEFORE" <(snap)
check "the host's /etc/sysctl.d/90-netrig.conf and udev rule are as they were" \
    test "$(etc_files)" == "$ETC_BEFORE"
check "no journal was written to the host's state directory" \
    test "$(host_journals)" -eq "$HOST_JOURNALS"
finish
