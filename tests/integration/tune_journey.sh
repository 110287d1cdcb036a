#!/usr/bin/env bash
# tune_journey: the loop a user walks (issue 26), on a WAN-emulated path whose two ends are
# two network namespaces sharing one tune --state-dir (as every `ip netns exec` on a host
# shares the default one).
#  1. tune --apply in A and in B, each exits 0 although net.core.rmem_max/wmem_max are not
#     applicable in a namespace (item 2); each journal names its namespace (inode, name) and
#     host; --list in A shows A's journal and counts B's in one line; --revert in A restores
#     A only (B stays tuned); a second --revert in A, and --revert of B's journal by name from
#     A, are refused with one line and change nothing (item 1).
#  2. The watchdog: A applies with --confirm-within 2s; B's --confirm does not confirm it
#     and B's apply is not held up by it; A's watchdog reverts A, B keeps its values.
#  3. diagnose -> tune -> diagnose -> compare (item 3): B (the receiver) with a 64 KiB
#     tcp_rmem; diagnose from A names rwnd_limited and saves the run with its verdict (tag
#     before); tune --apply in B records its journal in the same history; after it, diagnose
#     (tag after) no longer names the window, and compare before after shows both verdicts,
#     the journal (B's namespace, tcp_rmem old -> new) and a throughput at least 3x higher;
#     report compare before after tells it on one page (before, change, after, gain), its
#     chart's axis naming the sides before and after.
# Needs root, ip netns and /dev/net/tun (tests/tools/wanem); exits 77 without them.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

need_netns
path 20ms 100M
NA=$PATH_NS_A
NB=$PATH_NS_B
STATE=$T/state
mkdir -m 0700 "$STATE"
# watchdogs this test started that still wait (each journal names its own)
on_exit 'for j in '"$STATE"'/tune-*.jsonl; do
    pid=$(sed -n "s/.*\"watchdog_pid\":\([0-9]*\).*/\1/p" "$j" | head -n1)
    [[ -n $pid && $(cat /proc/$pid/comm 2>/dev/null) == netrig-confirm ]] && kill -KILL "$pid"
done'

# tune NS NAME ARGS...: netrig tune ARGS in NS; output in $T/NAME.out (both streams), RC
tune() {
    local ns=$1 name=$2
    shift 2
    RC=0
    ip netns exec "$ns" "$NETRIG" tune --state-dir "$STATE" "$@" >"$T/$name.out" 2>&1 || RC=$?
}
export -f one_line
wmem() { ip netns exec "$1" cat /proc/sys/net/ipv4/tcp_wmem | tr -s '\t ' ' '; }
inode() { stat -L -c %i "/run/netns/$1"; }
journal_of() { grep -l "\"netns_name\":\"$1\"" "$STATE"/tune-*.jsonl | tail -n1; }

WMEM0=$(wmem "$NA")
check "the two ends start alike" test "$WMEM0" == "$(wmem "$NB")"

# ---- 1. two namespaces, one state directory --------------------------------------------------
tune "$NA" applyA --rate 1G --rtt 36ms --apply
check "apply in A exits 0 (got $RC): net.core.rmem_max is not applicable there, no failure" \
    test "$RC" -eq 0
check "... the apply says so ($(grep Applied "$T/applyA.out"))" grep -q "not applicable here 2" "$T/applyA.out"
check "... and names rmem_max n/a" grep -q "^  n/a here    net.core.rmem_max" "$T/applyA.out"
tune "$NB" applyB --rate 1G --rtt 36ms --apply
check "apply in B exits 0 (got $RC)" test "$RC" -eq 0
WMEM1=$(wmem "$NA")
check "both ends tuned ($WMEM0 -> $WMEM1, B $(wmem "$NB"))" bash -c "[[ '$WMEM1' != '$WMEM0' && '$(wmem "$NB")' == '$WMEM1' ]]"
JA=$(journal_of "$NA")
JB=$(journal_of "$NB")
check "A's journal names A's namespace by inode and name, and the host" \
    bash -c "head -n1 '$JA' | jq -e '.place.netns_inode == $(inode "$NA") and .place.host == \"$(hostname)\" and .place.machine_id != null' >/dev/null"
check "B's journal names B's namespace" test "$(head -n1 "$JB" | jq -r .place.netns_inode)" == "$(inode "$NB")"

tune "$NA" listA --list
check "--list in A shows A's journal" grep -q "$JA" "$T/listA.out"
check "... not B's" bash -c "! grep -q '$JB' '$T/listA.out'"
check "... and counts B's in one line" grep -q "^1 journal(s) applied in another network namespace or host not shown" "$T/listA.out"
tune "$NA" listJ --list -J
check_jq "--list -J: every journal with its place and whether it is here" "$T/listJ.out" \
    '(.journals | length) == 2 and ([.journals[] | select(.here)] | length) == 1
     and ([.journals[] | select(.here)][0].place.netns_name == $a)' --arg a "$NA"

tune "$NA" revertA --revert
check "--revert in A exits 0 (got $RC)" test "$RC" -eq 0
check "... it reverted A's journal" grep -q "reverting $JA" "$T/revertA.out"
check "... A is back" test "$(wmem "$NA")" == "$WMEM0"
check "... B keeps its values" test "$(wmem "$NB")" == "$WMEM1"
check "... and B's journal is untouched" bash -c "! grep -q '\"revert\"' '$JB'"
tune "$NA" revertA2 --revert
check "a second --revert in A: exit 2 (got $RC), one line naming B's journal as elsewhere" \
    bash -c "[[ $RC -eq 2 ]] && one_line '$T/revertA2.out' && grep -q 'applied elsewhere and are left alone (the newest in network namespace $NB (inode $(inode "$NB"))' '$T/revertA2.out'"
tune "$NA" revertAB --revert "$JB"
check "--revert of B's journal by name from A: exit 2 (got $RC), one line" \
    bash -c "[[ $RC -eq 2 ]] && one_line '$T/revertAB.out' && grep -q 'was applied in another network namespace.*run the revert there (ip netns exec $NB ' '$T/revertAB.out'"
check "... nothing changed in A or B" bash -c "[[ '$(wmem "$NA")' == '$WMEM0' && '$(wmem "$NB")' == '$WMEM1' ]]"
check "... and B's journal is still untouched" bash -c "! grep -q '\"revert\"' '$JB'"

# ---- 2. the watchdog, beside another namespace ------------------------------------------------
tune "$NB" revertB --revert
check "--revert in B restores B (exit $RC)" bash -c "[[ $RC -eq 0 && '$(wmem "$NB")' == '$WMEM0' ]]"
tune "$NA" confA --rate 1G --rtt 36ms --apply --confirm-within 2s
check "A applies with --confirm-within 2s (exit $RC)" bash -c "[[ $RC -eq 0 && '$(wmem "$NA")' == '$WMEM1' ]]"
JA2=$(journal_of "$NA")
tune "$NB" confB --confirm
check "B's --confirm does not confirm A's journal: exit 2 (got $RC), one line" \
    bash -c "[[ $RC -eq 2 ]] && one_line '$T/confB.out' && grep -q 'in another network namespace or host and are left alone' '$T/confB.out'"
check "... A's journal has no confirmation" bash -c "! grep -q '\"confirm\":\"done\"' '$JA2'"
tune "$NB" applyB2 --rate 1G --rtt 36ms --apply
check "B's apply is not held up by A's pending confirmation (exit $RC)" test "$RC" -eq 0
restored_a() { [[ $(wmem "$NA") == "$WMEM0" ]]; }
check "A's watchdog reverts A within 2 s + 5 s" wait_until 7 "A's watchdog" restored_a
check "... by the watchdog ($(grep revert "$JA2"))" grep -q '"by":"watchdog"' "$JA2"
WD=$(sed -n 's/.*"watchdog_pid":\([0-9]*\).*/\1/p' "$JA2" | head -n1)
wd_gone() { [[ $(cat "/proc/$WD/comm" 2>/dev/null) != netrig-confirm ]] || grep -q '^State:.*Z' "/proc/$WD/status"; }
check "... and the watchdog is gone (its lock released)" wait_until 5 "the watchdog's exit" wd_gone
check "... and B keeps its values" test "$(wmem "$NB")" == "$WMEM1"
tune "$NB" revertB2 --revert
check "B reverts its own (exit $RC)" bash -c "[[ $RC -eq 0 && '$(wmem "$NB")' == '$WMEM0' ]]"

# ---- 3. diagnose -> tune -> diagnose -> compare ------------------------------------------------
DB=$T/history.db
ip netns exec "$NB" sysctl -qw net.ipv4.tcp_rmem="4096 65536 65536"
serve_b() {
    SRV_LOG=$T/serve.$RANDOM.log
    ip netns exec "$NB" "$NETRIG" serve -p 0 -B "$PATH_B" 2>"$SRV_LOG" &
    SRV_PID=$!
    track_pid "$SRV_PID"
    SRV_PORT=$(wait_for_port "$SRV_LOG" "$SRV_PID")
}
# diag TAG: diagnose from A into B, saved with TAG; the verdict's id in $T/TAG.json
diag() {
    local rc=0
    ip netns exec "$NA" timeout -s KILL 60 "$NETRIG" diagnose -c "$PATH_B" -p "$SRV_PORT" -t 2 \
        --rate 100M --rtt 20ms --db "$DB" --tag "$1" -J >"$T/$1.json" 2>"$T/$1.err" || rc=$?
    check "diagnose ($1) exits 0 (got $rc: $(head -c 200 "$T/$1.err"))" test "$rc" -eq 0
}
serve_b
diag before
check_jq "before: the receiver's window limits (rwnd_limited)" "$T/before.json" '.verdict.id == "rwnd_limited"'
ip netns exec "$NA" timeout -s KILL 60 "$NETRIG" diagnose -c "$PATH_B" -p "$SRV_PORT" -t 1 \
    --rate 100M --rtt 20ms --no-save >"$T/before.txt" 2>&1 || true
check "the Fix line names the receiver: the server and its address (item 14)" \
    grep -q "^Fix: on the receiver (the server, $PATH_B:$SRV_PORT): netrig tune" "$T/before.txt"
kill "$SRV_PID"
wait_exit "$SRV_PID" 5 || true
"$NETRIG" history --db "$DB" --tag before -J >"$T/hist_before.json"
check_jq "the diagnosis is saved like any test, its verdict in the title, tagged before" \
    "$T/hist_before.json" 'length == 1 and .[0].title == "diagnose: rwnd_limited"'
tune "$NB" fix --rate 100M --rtt 20ms --apply --db "$DB"
check "tune --apply in B exits 0 (got $RC)" test "$RC" -eq 0
check "... and is recorded in the history" grep -q "Recorded in the history as tune journal" "$T/fix.out"
serve_b # a listener keeps the buffer sizes of when it was made
diag after
check_jq "after: the window no longer limits" "$T/after.json" '.verdict.id != "rwnd_limited"'
"$NETRIG" compare before after --db "$DB" -J >"$T/compare.json"
"$NETRIG" compare before after --db "$DB" >"$T/compare.txt"
check_jq "compare shows both verdicts" "$T/compare.json" \
    '.diagnose.a == "rwnd_limited" and .diagnose.b != null and .diagnose.b != "rwnd_limited"'
check_jq "compare names the tune between them: B's namespace, tcp_rmem raised" "$T/compare.json" \
    '(.tune_between | length) == 1 and (.tune_between[0].where | contains($b))
     and any(.tune_between[0].changes[]; .name == "net.ipv4.tcp_rmem" and .old == "4096 65536 65536"
             and .result == "applied")' --arg b "$NB"
log "throughput before -> after: $(jq -r '.metrics[] | select(.name == "throughput_bps") | "\(.a.mean / 1e6) -> \(.b.mean / 1e6) Mbit/s"' "$T/compare.json"), verdict $(jq -r .diagnose.b "$T/compare.json")"
check_jq "compare: throughput at least 3x higher after" "$T/compare.json" \
    'any(.metrics[]; .name == "throughput_bps" and .b.mean >= 3 * .a.mean)'
check "compare's text says it in lines" bash -c "grep -q 'diagnose verdict (A -> B): rwnd_limited -> ' '$T/compare.txt' && grep -q 'tune applied between A and B: .* in network namespace $NB ' '$T/compare.txt'"
rc=0
"$NETRIG" report compare before after --db "$DB" -o "$T/story.html" 2>"$T/report.err" || rc=$?
check "report compare before after exits 0 (got $rc: $(head -c 200 "$T/report.err"))" test "$rc" -eq 0
check "report: before with its verdict" grep -q "<tr><th>before</th><td>before: diagnose verdict <b>rwnd_limited</b>" "$T/story.html"
check "report: the change, B's namespace and tcp_rmem" grep -Eq "<tr><th>change</th><td>netrig tune --apply at .* in network namespace $NB .*net.ipv4.tcp_rmem 4096 65536 65536 -&gt; " "$T/story.html"
check "report: after with its verdict" grep -q "<tr><th>after</th><td>after: diagnose verdict <b>" "$T/story.html"
check "report: the gain and its significance" grep -Eq "<tr><th>gain</th><td>throughput .* -&gt; .* \(\+[0-9.]+%\), significance untested: one run each" "$T/story.html"
if command -v gnuplot >/dev/null 2>&1; then
    check "report: the chart's axis names the sides by their tags" \
        bash -c "grep -q '>before<' '$T/story.html' && grep -q '>after<' '$T/story.html' && grep -q 'after against before' '$T/story.html'"
fi
tune "$NB" undo --revert
check "B reverts the fix (exit $RC)" test "$RC" -eq 0

finish
