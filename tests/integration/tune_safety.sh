#!/usr/bin/env bash
# tune_safety: a netrig tune that cannot cut you off (issue 15 items 1-2, issue 17 item 9).
# Four network namespaces: T (the host being tuned, its interfaces at MTU 1400 like a cloud
# VM's), P (a peer on T's first veth, MTU 9000), R (a router: 9000 toward T, 1500 on) and C
# (a peer behind R). Every tune runs inside T with its state directory in this test's
# temporary directory; nothing runs on, or changes, the host itself.
#  1. Risk classes and the MTU rule: the MTU change is disruptive; without --peer it is
#     advice, never applied (not by --apply, not with --allow-disruptive; --only with it and no
#     --peer is a bad command line); with --peer P the probe proposes it and --apply --only
#     makes it (P answers 9000-byte DF pings); toward C behind R, --apply raises the MTU, R
#     answers "fragmentation needed, 1500", and 1400 is put back at once (refused, exit 1); with
#     R at 1300, smaller than T's 1400, the dry run already holds it back; a --peer reached
#     through another interface proves nothing and holds it back too.
#  2. Confirm or roll back: --apply --confirm-within 2s and no confirmation -> every sysctl of
#     T back as it was; --confirm -> kept, and a second apply meanwhile refused; kill -9 of the
#     applying process between two changes -> still reverted by the watchdog.
#  3. The state directory: a world-writable one with a planted journal is refused with one
#     line and nothing written (under --sysroot, so not even a broken netrig could touch /etc);
#     a lock that is a symbolic link is refused.
# Needs root, ip netns and veth; exits 77 without them.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

[[ $(id -u) -eq 0 ]] || skip "needs root for network namespaces"
command -v ip >/dev/null 2>&1 || skip "needs ip (iproute2)"

N=$((20 + $$ % 200))
NS_T=nrts-t-$$
NS_P=nrts-p-$$
NS_R=nrts-r-$$
NS_C=nrts-c-$$
STATE=$T/state
P_ADDR=10.238.$N.2
C_ADDR=10.240.$N.2

on_exit "for ns in $NS_T $NS_P $NS_R $NS_C; do ip netns del \$ns; done"
# watchdogs this test started and that are still waiting (each journal names its own)
on_exit 'for j in '"$STATE"'/tune-*.jsonl; do
    pid=$(sed -n "s/.*\"watchdog_pid\":\([0-9]*\).*/\1/p" "$j" | head -n1)
    [[ -n $pid && $(cat /proc/$pid/comm 2>/dev/null) == netrig-confirm ]] && kill -KILL "$pid"
done'

# every readable net.ipv4.* and net.core.* sysctl, of the host or (snap_ns) a namespace, in one
# process: fast enough to run between an apply and its watchdog's deadline
snap() { grep -s '' /proc/sys/net/ipv4/* /proc/sys/net/core/* || true; }
snap_ns() { ip netns exec "$1" grep -s '' /proc/sys/net/ipv4/* /proc/sys/net/core/* || true; }
HOST_BEFORE=$T/host.before
snap >"$HOST_BEFORE"
host_journals() { { find /var/lib/netrig/tune -name "tune-*.jsonl" 2>/dev/null || true; } | wc -l; }
HOST_JOURNALS=$(host_journals)

ip netns add "$NS_T" 2>"$T/ns.err" || skip "cannot create a network namespace: $(cat "$T/ns.err")"
for ns in "$NS_P" "$NS_R" "$NS_C"; do ip netns add "$ns"; done
# veth ADDR_NS DEV MTU ADDR  PEER_NS PEER_DEV PEER_MTU PEER_ADDR
veth() {
    ip link add name "$2" netns "$1" type veth peer name "$6" netns "$5" 2>"$T/veth.err" ||
        skip "cannot create a veth pair: $(cat "$T/veth.err")"
    ip -n "$1" link set "$2" mtu "$3" up
    ip -n "$1" addr add "$4/24" dev "$2"
    ip -n "$5" link set "$6" mtu "$7" up
    ip -n "$5" addr add "$8/24" dev "$6"
}
veth "$NS_T" t0 1400 10.238.$N.1 "$NS_P" p0 9000 "$P_ADDR"
veth "$NS_T" t1 1400 10.239.$N.1 "$NS_R" r0 9000 10.239.$N.2
veth "$NS_R" r1 1500 10.240.$N.1 "$NS_C" c0 9000 "$C_ADDR"
for ns in "$NS_T" "$NS_P" "$NS_R" "$NS_C"; do ip -n "$ns" link set lo up; done
ip -n "$NS_T" route add 10.240.$N.0/24 via 10.239.$N.2
ip -n "$NS_C" route add 10.239.$N.0/24 via 10.240.$N.1
ip netns exec "$NS_R" sysctl -qw net.ipv4.ip_forward=1
ip netns exec "$NS_T" ping -c1 -W2 "$C_ADDR" >/dev/null 2>&1 || fail "no route from T to C"

tune() { ip netns exec "$NS_T" "$NETRIG" tune --state-dir "$STATE" "$@"; }
mtu_of() { ip netns exec "$NS_T" cat "/sys/class/net/$1/mtu"; }
# run NAME ARGS...: netrig tune ARGS in T; output in $T/NAME.out (stdout and stderr), status
# in RC
run() {
    local name=$1
    shift
    RC=0
    tune "$@" >"$T/$name.out" 2>&1 || RC=$?
}
revert_all() { while tune --revert >/dev/null 2>&1; do :; done; }
TARGET=(--rate 100G --rtt 1ms)

# ---- 1. risk classes and the MTU rule --------------------------------------------------------
run dry -I t0 "${TARGET[@]}" -J
check "dry run exits 0 (got $RC)" test "$RC" -eq 0
check_jq "the MTU change is disruptive, item mtu:t0, advice without --peer" "$T/dry.out" \
    'any(.changes[]; .item == "mtu:t0" and .class == "disruptive" and .old == "1400" and
         .new == "9000" and (.held | test("advice only")) and .probe == null)'
check_jq "txqueuelen is safe and would be applied; every change has a class and why" \
    "$T/dry.out" 'any(.changes[]; .item == "txqueuelen:t0" and .class == "safe" and .held == null)
                  and all(.changes[]; (.class | IN("safe", "disruptive")) and (.class_why | length) > 10)
                  and all(.manual[]; .class == "manual")'

run apply_plain -I t0 "${TARGET[@]}" --apply
check "--apply exits 0 or 1 (global sysctls are not settable here), got $RC" test "$RC" -le 1
check "--apply left the MTU alone ($(mtu_of t0))" test "$(mtu_of t0)" -eq 1400
check "--apply made the safe changes (txqueuelen)" grep -q "applied     t0 txqueuelen: 1000 -> 10000" "$T/apply_plain.out"
check "--apply says why it held the MTU back" grep -q "held back   t0 mtu: advice only" "$T/apply_plain.out"
revert_all

run apply_allow -I t0 "${TARGET[@]}" --apply --allow-disruptive
check "--allow-disruptive without --peer: MTU still 1400" test "$(mtu_of t0)" -eq 1400
revert_all

run only_nopeer -I t0 "${TARGET[@]}" --apply --only mtu:t0
check "--only mtu:t0 without --peer: exit 2 (got $RC)" test "$RC" -eq 2
check "... in one line naming what to add" bash -c "[[ \$(wc -l <'$T/only_nopeer.out') -eq 1 ]] && grep -q 'add --peer HOST' '$T/only_nopeer.out'"
run only_bad -I t0 "${TARGET[@]}" --apply --only mtu:eth9
check "--only naming nothing in the plan: exit 2 (got $RC), one line listing the items" \
    bash -c "[[ $RC -eq 2 && \$(wc -l <'$T/only_bad.out') -eq 1 ]] && grep -q 'its items are' '$T/only_bad.out'"
run peer_bad -I t0 "${TARGET[@]}" --peer 10.250.250.250
check "--peer without a route: exit 2 (got $RC), one line" bash -c "[[ $RC -eq 2 && \$(wc -l <'$T/peer_bad.out') -eq 1 ]]"

# the path to P carries 9000: proposed, then applied with --only
run probe_p -I t0 "${TARGET[@]}" --peer "$P_ADDR" --only mtu:t0 -J
check_jq "--peer P: the probe answers at 1400 and proposes 9000" "$T/probe_p.out" \
    'any(.changes[]; .item == "mtu:t0" and .held == null and (.probe | test("answers don.t-fragment pings of 1400 bytes")))
     and .peer.route_interface == "t0"'
run apply_p -I t0 "${TARGET[@]}" --peer "$P_ADDR" --apply --only mtu:t0
check "--apply --only mtu:t0 --peer P: exit 0 (got $RC: $(tail -n1 "$T/apply_p.out"))" test "$RC" -eq 0
check "... t0 is at 9000 now" test "$(mtu_of t0)" -eq 9000
check "... after P answered a 9000-byte ping" grep -q "applied     t0 mtu: 1400 -> 9000 ($P_ADDR answered a 9000-byte" "$T/apply_p.out"
check "... and nothing else changed (txqueuelen held: not named)" grep -q "held back   t0 txqueuelen: not named in --only" "$T/apply_p.out"
revert_all
check "--revert put t0 back at 1400" test "$(mtu_of t0)" -eq 1400

# C sits behind R, whose next hop is 1500: proposed (T's 1400 passes), refused when tried
run probe_c -I t1 "${TARGET[@]}" --peer "$C_ADDR" -J
check_jq "--peer C: the preflight passes at 1400" "$T/probe_c.out" \
    'any(.changes[]; .item == "mtu:t1" and (.probe | length) > 0)'
run apply_c -I t1 "${TARGET[@]}" --peer "$C_ADDR" --apply --allow-disruptive
check "--apply toward C: exit 1 (a change refused), got $RC" test "$RC" -eq 1
check "... R said 1500 and 1400 was put back" \
    grep -q "carries only 1500-byte packets; put back 1400" <(tr '\n' ' ' <"$T/apply_c.out" | tr -s ' ')
check "... t1 is at 1400" test "$(mtu_of t1)" -eq 1400
tune --list -J >"$T/list_c.json"
check_jq "... journaled as refused (nothing for --revert to do)" "$T/list_c.json" \
    '.journals[-1].refused == 1'
revert_all

ip -n "$NS_R" link set r1 mtu 1300
run probe_c2 -I t1 "${TARGET[@]}" --peer "$C_ADDR" --only mtu:t1 -J
check_jq "R at 1300, below T's 1400: the dry run holds it back, saying so" "$T/probe_c2.out" \
    'any(.changes[]; .item == "mtu:t1" and (.held | test("carries only 1300-byte packets")))'
run apply_c2 -I t1 "${TARGET[@]}" --peer "$C_ADDR" --apply --only mtu:t1
check "... and --apply changes nothing (t1 at $(mtu_of t1))" test "$(mtu_of t1)" -eq 1400
ip -n "$NS_R" link set r1 mtu 1500
run probe_wrong -I t0 "${TARGET[@]}" --peer "$C_ADDR" -J
check_jq "a --peer reached through t1 proves nothing about t0" "$T/probe_wrong.out" \
    'any(.changes[]; .item == "mtu:t0" and (.held | test("leaves by t1, not t0")))'

# ---- 2. confirm or roll back -----------------------------------------------------------------
ip netns exec "$NS_T" sysctl -qw net.ipv4.tcp_rmem="4096 4096 8192" net.ipv4.tcp_wmem="4096 4096 8192"
BEFORE=$T/t.before
snap_ns "$NS_T" >"$BEFORE"
# wait_restored SECONDS: until T's sysctls are as before (bounded)
wait_restored() {
    for _ in $(seq $(($1 * 10))); do
        diff -q "$BEFORE" <(snap_ns "$NS_T") >/dev/null && return 0
        sleep 0.1
    done
    return 1
}
watchdog_of() { sed -n 's/.*"watchdog_pid":\([0-9]*\).*/\1/p' "$1" | head -n1; }
changed() { ! diff -q "$BEFORE" <(snap_ns "$NS_T") >/dev/null; }
# gone PID: the watchdog exited (or is a zombie waiting for init to reap it)
gone() { [[ $(cat "/proc/$1/comm" 2>/dev/null) != netrig-confirm ]] || grep -q '^State:.*Z' "/proc/$1/status"; }
newest() { ls -t "$STATE"/tune-*.jsonl | head -n1; }

run conf1 --rate 10G --rtt 10ms --apply --confirm-within 3s
check "... it changed T" changed
check "--confirm-within: the apply exits 0 or 1 (got $RC)" test "$RC" -le 1
check "... and says how to keep it" grep -q "Keep it with 'netrig tune --confirm --state-dir $STATE' within 3 s" "$T/conf1.out"
J1=$(newest)
WD=$(watchdog_of "$J1")
check "... a watchdog (pid $WD) runs, detached" test "$(cat /proc/"$WD"/comm 2>/dev/null)" == netrig-confirm
check "no confirmation: T's sysctls are back as they were within 3 s + 5 s" wait_restored 8
tune --list -J >"$T/list1.json"
check_jq "--list: reverted by the watchdog" "$T/list1.json" \
    'any(.journals[]; .reverted_by == "watchdog" and .confirm.state == "expired")'
run late --confirm
check "--confirm after the deadline: exit 1, 'too late' (got $RC)" \
    bash -c "[[ $RC -eq 1 ]] && grep -q 'too late' '$T/late.out'"

run conf2 --rate 10G --rtt 10ms --apply --confirm-within 8s -J
AFTER=$T/t.after
snap_ns "$NS_T" >"$AFTER"
DEADLINE=$(($(date +%s) + 9))
J2=$(newest)
check_jq "-J: the confirmation's deadline and watchdog" "$T/conf2.out" \
    '.confirm.within_ms == 8000 and .confirm.watchdog_pid > 0 and (.confirm.command | test("--confirm"))'
run again --rate 10G --rtt 300ms --apply
check "a second apply while one waits: exit 2 (got $RC), one line" \
    bash -c "[[ $RC -eq 2 && \$(wc -l <'$T/again.out') -eq 1 ]] && grep -q 'waits for its confirmation' '$T/again.out'"
run keep --confirm
check "--confirm: exit 0 (got $RC: $(head -c 200 "$T/keep.out"))" test "$RC" -eq 0
WD=$(watchdog_of "$J2")
for _ in $(seq 50); do gone "$WD" && break; sleep 0.1; done
check "... its watchdog saw it and left" gone "$WD"
while (($(date +%s) <= DEADLINE)); do sleep 0.2; done
check "confirmed: T keeps the new values past the deadline" diff "$AFTER" <(snap_ns "$NS_T")
run nothing --confirm
check "--confirm with nothing waiting: exit 2 (got $RC), one line" \
    bash -c "[[ $RC -eq 2 && \$(wc -l <'$T/nothing.out') -eq 1 ]]"
revert_all
check "reverted by hand after the confirmation" wait_restored 1

# kill -9 of the applying process between two changes: the watchdog still reverts
ls "$STATE" >"$T/journals.before"
NETRIG_TUNE_PAUSE_MS=600 ip netns exec "$NS_T" "$NETRIG" tune --state-dir "$STATE" --apply \
    --rate 10G --rtt 10ms --confirm-within 2s >"$T/killed.out" 2>&1 &
KPID=$!
track_pid "$KPID"
J3=
for _ in $(seq 100); do # the new journal, once it holds a result (in the pause after it)
    J3=$(ls "$STATE" | grep -vxF -f "$T/journals.before" | grep '^tune-' | head -n1 || true)
    J3=${J3:+$STATE/$J3}
    [[ -n $J3 && $(grep -c '"result"' "$J3" || true) -ge 1 ]] && break
    sleep 0.05
done
kill -KILL "$KPID" 2>/dev/null || true
wait "$KPID" 2>/dev/null || true
check "the killed apply had changed T" changed
check "the killed apply left no end record" bash -c "! grep -q '\"done\"' '$J3'"
check "kill -9 of the apply: the watchdog reverts T all the same" wait_restored 7
tune --list -J >"$T/list3.json"
check_jq "--list: that journal reverted by its watchdog" "$T/list3.json" \
    '.journals[-1].reverted_by == "watchdog"'

# ---- 3. the state directory ------------------------------------------------------------------
ROOT=$T/root
mkdir -p "$ROOT/proc/sys/net/ipv4" "$ROOT/bad"
echo "4096 4096 8192" >"$ROOT/proc/sys/net/ipv4/tcp_rmem"
chmod 0777 "$ROOT/bad"
cat >"$ROOT/bad/tune-20240101T000000.000000Z-1.jsonl" <<EOF
{"netrig_tune_journal":1,"created":"2024-01-01T00:00:00.000000Z","created_unix":1,"pid":1,"target":"t","profile":"throughput","sysroot":"$ROOT","netns":"host","planned":1}
{"seq":1,"kind":"file","name":"x","path":"/etc/sudoers.d/netrig-$$","old":"nobody ALL=(ALL) NOPASSWD: ALL\n","new":""}
{"seq":1,"result":"applied"}
EOF
chmod 0600 "$ROOT/bad/"tune-*.jsonl
rc=0
"$NETRIG" tune --revert --sysroot "$ROOT" --state-dir /bad >"$T/planted.out" 2>&1 || rc=$?
check "a planted journal in a world-writable --state-dir: exit 2 (got $rc), one line" \
    bash -c "[[ $rc -eq 2 && \$(wc -l <'$T/planted.out') -eq 1 ]]"
check "... saying the directory is writable by everyone" grep -q "writable by everyone (mode 0777)" "$T/planted.out"
check "... and nothing was written" test ! -e "$ROOT/etc/sudoers.d/netrig-$$"
rc=0
"$NETRIG" tune --list --sysroot "$ROOT" --state-dir /bad >"$T/planted_list.out" 2>&1 || rc=$?
check "--list there: exit 2 (got $rc)" test "$rc" -eq 2
mkdir -m 0700 "$ROOT/good"
ln -s /etc/passwd "$ROOT/good/.lock"
rc=0
"$NETRIG" tune --apply --sysroot "$ROOT" --state-dir /good --rate 10G --rtt 10ms >"$T/lock.out" 2>&1 || rc=$?
check "a lock that is a symbolic link: exit 2 (got $rc), named" \
    bash -c "[[ $rc -eq 2 ]] && grep -q 'is a symbolic link' '$T/lock.out'"
check "... and nothing changed" test "$(cat "$ROOT/proc/sys/net/ipv4/tcp_rmem")" == "4096 4096 8192"

# ---- the host is untouched -------------------------------------------------------------------
check "the host's net.ipv4/net.core sysctls are unchanged" diff "$HOST_BEFORE" <(snap)
check "no journal was written to the host's state directory" test "$(host_journals)" -eq "$HOST_JOURNALS"
finish
