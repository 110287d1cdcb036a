#!/usr/bin/env bash
# multi_group: runs measured together are saved like any run (issue 15). Three daemons on
# loopback: A on 127.0.0.2, B on 127.0.0.3 with --no-host-snapshot, C on 127.0.0.4 allowing
# third-party runs.
#   - rr -c A -c B: the text report has each target's latency percentiles and CPU; two runs
#     saved in one group that history, show, show group:N and export name; A's run holds A's
#     settings as the server's, B's says B declined, and compare says so
#   - a target that cannot run: the group names it with its error, without a run
#   - rr --from C -c A: percentiles in the report; saved with C's settings as the client's and
#     A's as the server's, in a group naming C; -J keeps its document and is saved too
#   - --no-save: nothing saved
#   - rr -c A -c B -J: each target's percentiles (ordered) and both ends' CPU, saved as reported;
#     stream -c A -c B: each target's retransmits and CPU in the text, saved as reported, and
#     in -J; crr --from C -c A -J: percentiles, saved as reported; crr -c A -c B: each
#     target's percentiles
# Short runs (0.3 s) on 127.0.0.0/8 only.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

start_server -B 127.0.0.2
A=127.0.0.2:$SRV_PORT
start_server -B 127.0.0.3 --no-host-snapshot
B=127.0.0.3:$SRV_PORT
start_server -B 127.0.0.4 --allow-third-party 127.0.0.0/8 --allow-third-party-target 127.0.0.2/32 \
    --allow-third-party-target 127.0.0.3/32
C=127.0.0.4:$SRV_PORT
DB=$T/h.db
nr() { "$NETRIG" "$@" --db "$DB"; }

# ---- rr against A and B at once
nr rr -c "$A" -c "$B" -t 0.3 -i 0 >"$T/multi.txt" 2>"$T/multi.err" ||
    fail "rr -c A -c B: $(tail -3 "$T/multi.err")"
check "each target's report has its latency percentiles" \
    test "$(grep -cE '^Latency us  min [0-9.]+  p50 [0-9.]+  p90 [0-9.]+  p99 [1-9][0-9.]*' "$T/multi.txt")" -eq 2
check "each target's report has both ends' CPU" \
    test "$(grep -cE '^CPU (local|remote) ' "$T/multi.txt")" -eq 4
check "the target that declined to send its settings says so" \
    grep -q '^Note        the server declined to send its settings' "$T/multi.txt"
check "the totals follow the targets" grep -qE '^Total +[0-9.]+ transactions/s over 2 of 2' "$T/multi.txt"
check "text mode says where the runs went" \
    grep -qx 'saved as runs 1-2 in group 1 (netrig show group:1)' "$T/multi.txt"

nr history -J >"$T/h.json"
check_jq "history: two runs, in group 1 as targets 0 and 1" "$T/h.json" \
    '[.[].group] == [{"id":1,"kind":"multi","target":0,"from":""},{"id":1,"kind":"multi","target":1,"from":""}]'
check_jq "history: each run against its own server" "$T/h.json" '[.[].peer] == [$a, $b]' \
    --arg a "$A" --arg b "$B"
check_jq "history: each run has its rate and latency p99" "$T/h.json" \
    'all(.[]; .summary.transactions_per_s > 0 and .summary.latency_p99_us > 0)'
nr history >"$T/h.txt"
check "history text: both runs marked group:1" test "$(grep -c ' group:1$' "$T/h.txt")" -eq 2

nr show group:1 -J >"$T/g1.json"
check_jq "show group:1 -J: the targets, in order, with their runs" "$T/g1.json" \
    '.kind == "multi" and .test == "rr" and ([.targets[] | [.target, .status, .run]] == [[$a, "complete", 1], [$b, "complete", 2]])' \
    --arg a "$A" --arg b "$B"
check_jq "show group:1 -J: the totals" "$T/g1.json" \
    '.summary.targets == 2 and .summary.targets_ok == 2 and .summary.transactions_per_s > 0'
nr show group:1 >"$T/g1.txt"
check "show group:1: the kind and both runs" \
    awk '/^group 1: rr against several servers/{k=1} /^ +[01] 127\.0\.0\.[23]:[0-9]+ +complete +[12] /{n++} END{exit !(k && n == 2)}' "$T/g1.txt"
nr export group:1 --csv >"$T/e.csv"
check "export --csv: the group column" \
    awk -F, 'NR==1{for(i=1;i<=NF;i++) if($i=="group") c=i} NR>1 && $c==1{n++} END{exit !(c && n == 2)}' "$T/e.csv"

nr show 1 -J >"$T/s1.json"
check_jq "run 1 holds A's settings as the server's" "$T/s1.json" \
    '(.peer_host["net.ipv4.tcp_rmem"] | length) > 0 and .peer_host_note == "" and .group.id == 1'
nr show 2 -J >"$T/s2.json"
check_jq "run 2: B declined, and why" "$T/s2.json" \
    '.peer_host == null and (.peer_host_note | test("^the server declined to send its settings"))'
nr compare 1 2 >"$T/c.txt"
check "compare says the server declined" \
    grep -q '^server host settings: not compared, not recorded for run 2: the server declined to send its settings' "$T/c.txt"

# ---- a target nothing listens on: named in the group with its error
rc=0
nr rr -c "$A" -c 127.0.0.5:1 -t 0.3 -i 0 -J >"$T/m2.json" 2>/dev/null || rc=$?
check "a failed target: exit 1 (got $rc)" test "$rc" -eq 1
check_jq "-J stays the multi-target document" "$T/m2.json" \
    '(.targets | length) == 2 and .targets[1].status == "failed"'
nr show group:2 -J >"$T/g2.json"
check_jq "group 2: the failed target has its error and no run" "$T/g2.json" \
    '[.targets[].status] == ["complete", "failed"] and .targets[0].run == 3 and .targets[1].run == null and (.targets[1].error | length) > 0'

# ---- third party: C runs the test toward A
nr rr --from "$C" -c "$A" -t 0.3 -i 0 >"$T/from.txt" 2>"$T/from.err" ||
    fail "rr --from: $(tail -3 "$T/from.err")"
check "--from: latency percentiles in the report" \
    grep -qE '^Latency us  min [0-9.]+  p50 [0-9.]+  p90 [0-9.]+  p99 [1-9]' "$T/from.txt"
check "--from: says where it was saved" \
    grep -qx 'saved as run 4 in group 3 (netrig show group:3)' "$T/from.txt"
nr show 4 -J >"$T/s4.json"
check_jq "--from run: in a third-party group naming C" "$T/s4.json" \
    '.group == {"id": 3, "kind": "third_party", "target": 0, "from": $c}' --arg c "$C"
check_jq "--from run: C's settings as the client's, A's as the server's" "$T/s4.json" \
    '(.host["net.ipv4.tcp_rmem"] | length) > 0 and (.peer_host["net.ipv4.tcp_rmem"] | length) > 0'
check_jq "--from run: its latency metrics" "$T/s4.json" \
    '.metrics.latency_p99_us > 0 and .metrics.transactions_per_s > 0 and .server == $a' --arg a "$A"
nr rr --from "$C" -c "$B" -t 0.3 -i 0 -J >"$T/from.json" 2>/dev/null || fail "rr --from -J"
check_jq "--from -J: the document as before" "$T/from.json" \
    '.third_party_status == "complete" and .summary.latency_us.p99 > 0'
nr show 5 -J >"$T/s5.json"
check_jq "--from toward B: B declined, and why" "$T/s5.json" \
    '.group.id == 4 and .peer_host == null and (.peer_host_note | test("declined"))'

# ---- --no-save
nr rr -c "$A" -c "$B" -t 0.3 -i 0 --no-save >/dev/null 2>&1 || fail "--no-save run"
nr rr --from "$C" -c "$A" -t 0.3 -i 0 --no-save >/dev/null 2>&1 || fail "--no-save --from run"
nr history -J >"$T/h2.json"
check_jq "--no-save: still 5 runs" "$T/h2.json" 'length == 5'

# ---- -J: every target's latency percentiles and CPU, and the history keeps what was reported
ORDERED='.min > 0 and .min <= .p50 and .p50 <= .p90 and .p90 <= .p99 and .p99 <= .p999 and .p999 <= .max'
nr rr -c "$A" -c "$B" -t 0.3 -i 0 -J >"$T/m3.json" 2>/dev/null || fail "rr -c A -c B -J"
check_jq "rr -J: both targets complete with ordered percentiles" "$T/m3.json" \
    "[.targets[] | select(.status == \"complete\") | .summary.latency_us | $ORDERED] == [true, true]"
check_jq "rr -J: both ends' CPU for each target" "$T/m3.json" \
    'all(.targets[]; .summary.cpu.local.valid and .summary.cpu.remote.valid and .summary.cpu_us_per_transaction.local > 0)'
for i in 0 1; do
    nr show $((6 + i)) -J >"$T/s$((6 + i)).json"
    check_jq "rr -J: run $((6 + i)) is target $i of group 5, its p50/p99 and rate as reported" \
        "$T/s$((6 + i)).json" \
        "(\$m[0].targets[$i].summary) as \$t | .group.id == 5 and .group.target == $i and .metrics.latency_p50_us == \$t.latency_us.p50 and .metrics.latency_p99_us == \$t.latency_us.p99 and .metrics.transactions_per_s == \$t.transactions_per_s" \
        --slurpfile m "$T/m3.json"
done

# ---- stream: each target's retransmits and CPU, in the text and the history alike
nr stream -c "$A" -c "$B" -t 0.3 -i 0 >"$T/st.txt" 2>"$T/st.err" ||
    fail "stream -c A -c B: $(tail -3 "$T/st.err")"
mapfile -t retr < <(sed -nE 's/^Fairness .*; ([0-9]+) retransmits;.*/\1/p' "$T/st.txt")
check "stream: each target's report has its retransmits (${retr[*]})" test "${#retr[@]}" -eq 2
check "stream: each target's report has both ends' CPU" \
    test "$(grep -cE '^CPU (local|remote) +[0-9.]+% busy' "$T/st.txt")" -eq 4
for i in 0 1; do
    nr show $((8 + i)) -J >"$T/s$((8 + i)).json"
    check_jq "stream: run $((8 + i)) keeps target $i's retransmits (${retr[$i]:-none}) and CPU" \
        "$T/s$((8 + i)).json" \
        '.group.id == 6 and .metrics.retransmits == ($r | tonumber) and .metrics.local_cpu_busy_pct > 0 and .metrics.remote_cpu_busy_pct > 0' \
        --arg r "${retr[$i]:--1}"
done
nr stream -c "$A" -c "$B" -t 0.3 -i 0 -J --no-save >"$T/st.json" 2>/dev/null || fail "stream -J"
check_jq "stream -J: each target's retransmits and both ends' CPU" "$T/st.json" \
    '[.targets[].summary | (.retransmits | type) == "number" and .cpu.local.valid and .cpu.remote.valid] == [true, true]'

# ---- crr --from -J: the percentiles, saved as reported
nr crr --from "$C" -c "$A" -t 0.3 -i 0 -J >"$T/cf.json" 2>/dev/null || fail "crr --from -J"
check_jq "crr --from -J: ordered percentiles" "$T/cf.json" \
    ".third_party_status == \"complete\" and (.summary.latency_us | $ORDERED)"
nr show 10 -J >"$T/s10.json"
check_jq "crr --from: run 10 in group 7, p99 as reported" "$T/s10.json" \
    '.test == "crr" and .group.id == 7 and .group.kind == "third_party" and .metrics.latency_p99_us == $m[0].summary.latency_us.p99' \
    --slurpfile m "$T/cf.json"
nr crr -c "$A" -c "$B" -t 0.3 -i 0 --no-save >"$T/cm.txt" 2>"$T/cm.err" ||
    fail "crr -c A -c B: $(tail -3 "$T/cm.err")"
check "crr -c A -c B: each target's report has its latency percentiles" \
    test "$(grep -cE '^Latency us  min [0-9.]+  p50 [0-9.]+  p90 [0-9.]+  p99 [1-9][0-9.]*' "$T/cm.txt")" -eq 2
finish
