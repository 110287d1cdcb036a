#!/usr/bin/env bash
# history: short loopback runs saved to a private --db, then `netrig history`, `show`,
# `export`, `tag` and `compare` checked with jq; --no-save; the default XDG path; and the
# refusal of a database with a newer schema.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

DB=$T/history.db
nr() { "$NETRIG" "$@" --db "$DB"; }
jqq() { jq -e "$@" >/dev/null; }

# --- six runs: three streams titled "base", one more stream, rr, crr; one with --no-save
for i in 1 2 3; do
    nr stream -t 0.5 -i 0.25 --title "base $i" -J >"$T/s$i.json" 2>"$T/s$i.err" ||
        fail "stream $i: exit status $? ($(head -c 300 "$T/s$i.err"))"
done
nr stream -t 0.5 -P 2 --title tuned >"$T/s4.txt" 2>"$T/s4.err" || fail "stream 4 failed"
check "text mode says where the run was saved" grep -q '^saved as run 4 (netrig show 4)' "$T/s4.txt"
nr rr -t 0.5 -J >"$T/rr.json" 2>/dev/null || fail "rr failed"
nr crr -t 0.5 -J >"$T/crr.json" 2>/dev/null || fail "crr failed"
nr stream -t 0.3 --no-save -J >/dev/null 2>&1 || fail "--no-save run failed"
for f in s1 s2 s3; do
    check "-J output of $f stays one clean document" jqq '.test == "stream"' "$T/$f.json"
done

# --- history
nr history -J --last 0 >"$T/h.json" || fail "history -J failed"
check_jq "history: 6 runs (--no-save stored nothing)" "$T/h.json" 'length == 6'
check_jq "history: ids 1..6, oldest first" "$T/h.json" '[.[].id] == [1,2,3,4,5,6]'
check_jq "history: each run has id, test, title, started_at, summary" "$T/h.json" \
    'all(.[]; has("id") and has("test") and has("title") and has("started_at") and (.summary | type == "object"))'
check_jq "history: tests" "$T/h.json" '[.[].test] == ["stream","stream","stream","stream","rr","crr"]'
check_jq "history: stream summaries carry throughput" "$T/h.json" \
    'all(.[] | select(.test == "stream"); .summary.throughput_bps > 0)'
check_jq "history: rr summary carries latency percentiles" "$T/h.json" \
    '.[4].summary.transactions_per_s > 0 and .[4].summary.latency_p99_us > 0'
nr history -J --last 2 >"$T/h2.json"
check_jq "history --last 2" "$T/h2.json" '[.[].id] == [5,6]'
nr history -J --title 'base*' >"$T/h3.json"
check_jq "history --title glob" "$T/h3.json" '[.[].id] == [1,2,3]'
nr history -J --title TUNED >"$T/h4.json"
check_jq "history --title substring, case-blind" "$T/h4.json" '[.[].id] == [4]'
nr history -J --since 1h >"$T/h5.json"
check_jq "history --since 1h" "$T/h5.json" 'length == 6'
nr history -J --since 2099-01-01 >"$T/h6.json"
check_jq "history --since a future date" "$T/h6.json" 'length == 0'
nr history >"$T/h.txt"
check "history text lists run 6 as crr" grep -qE '^ +6 .* crr ' "$T/h.txt"
rc=0; nr history --since yesterday 2>"$T/since.err" || rc=$?
check "history --since garbage: exit 2 (got $rc)" test "$rc" -eq 2
check "history --since garbage: one-line error" grep -q "invalid date 'yesterday' for --since" "$T/since.err"

# --- show: the stored document is exactly what -J printed
nr show 1 -J >"$T/show1.json"
check "show -J: the stored -J document round-trips" \
    jqq --slurpfile orig "$T/s1.json" 'del(.id, .role, .tags, .metrics, .host, .peer_host, .peer_host_note) == $orig[0]' "$T/show1.json"
check_jq "show -J: host snapshot with the kernel release" "$T/show1.json" \
    '.host["kernel.osrelease"] == $k' --arg k "$(uname -r)"
check_jq "show -J: host snapshot with tcp_rmem and an interface" "$T/show1.json" \
    '(.host["net.ipv4.tcp_rmem"] | length) > 0 and (.host | keys | any(startswith("iface.lo.")))'
check_jq "show -J: metrics" "$T/show1.json" '.metrics.throughput_bps == .summary.throughput_bps'
nr show last >"$T/show6.txt"
check "show text: header" grep -q '^run 6: crr' "$T/show6.txt"
check "show text: summary and host" grep -q 'transactions/s' "$T/show6.txt"
rc=0; nr show 999 2>"$T/show.err" || rc=$?
check "show 999: exit 1 (got $rc)" test "$rc" -eq 1
check "show 999: says so" grep -q "no run 999" "$T/show.err"

# --- tag and compare
nr tag 1-3 before >/dev/null || fail "tag before failed"
nr tag 4 after >/dev/null || fail "tag after failed"
nr compare before after -J >"$T/cmp.json" || fail "compare before after failed"
check_jq "compare: the sets" "$T/cmp.json" '.a.runs == [1,2,3] and .b.runs == [4]'
check_jq "compare: throughput with a change in % and Welch's test (3 runs vs 1)" "$T/cmp.json" \
    '.metrics[] | select(.name == "throughput_bps") | (.change_pct | type == "number") and .a.n == 3 and .b.n == 1 and (.welch.p >= 0 and .welch.p <= 1)'
check_jq "compare: host_differences is an array" "$T/cmp.json" '.host_differences | type == "array"'
nr compare 1 2 -J >"$T/cmp12.json"
check_jq "compare 1 2: no test with one run each" "$T/cmp12.json" \
    'all(.metrics[]; .welch == null and .significant == false)'
nr compare before after >"$T/cmp.txt"
check "compare text: names both sides" grep -q '^A: before (3 runs: 1 2 3)' "$T/cmp.txt"
nr history -J --last 0 >"$T/h7.json"
check_jq "tags show in history" "$T/h7.json" '.[0].tags == ["before"] and .[3].tags == ["after"]'
rc=0; nr tag 1 9lives 2>/dev/null || rc=$?
check "tag with a bad name: exit 2 (got $rc)" test "$rc" -eq 2
# what was compared: parameter rows, warnings, the refusal of rr against stream (issue 15)
check_jq "compare: the flows row (-P 2 in B)" "$T/cmp.json" \
    '[.parameters[] | select(.name == "flows")] == [{"name":"flows","label":"flows","a":"1","b":"2","mixed":false}]'
check_jq "compare: only what differs is a row" "$T/cmp.json" '[.parameters[].name] == ["flows"]'
check_jq "compare: no warnings for like tests" "$T/cmp.json" '.warnings == []'
check_jq "compare: the client's host compared, the server's not recorded and why" "$T/cmp.json" \
    '.hosts.client.compared and (.hosts.server.compared | not) and (.hosts.server.not_recorded | length) == 4 and (.hosts.server.not_recorded[0].reason | test("ran on this host at a loopback address"))'
check "compare text: the parameter row above the metrics" \
    awk '/^parameters that differ/{p=NR} /^  flows +1 -> 2$/{f=NR} /^metric /{m=NR} END{exit !(p && f == p + 1 && m > f)}' "$T/cmp.txt"
check "compare text: the server's settings were not recorded, and why" \
    grep -q "^server host settings: not compared, not recorded for runs 1, 2, 3, 4: the server ran on this host at a loopback address: its settings are the client's$" "$T/cmp.txt"
nr compare 1,4 2 -J >"$T/cmpmix.json"
check_jq "compare: a set mixing flows warns, in JSON" "$T/cmpmix.json" \
    '[.warnings[] | select(.kind == "mixed_parameters") | .message] == ["set A mixes parameters (flows 1 | 2): its means blend different tests"]'
nr compare 1,4 2 >"$T/cmpmix.txt"
check "compare: a set mixing flows warns, in text" grep -q '^warning: set A mixes parameters (flows 1 | 2)' "$T/cmpmix.txt"
rc=0; nr compare 1 5 >"$T/cmprr.txt" 2>"$T/cmprr.err" || rc=$?
check "compare stream against rr: exit 2 (got $rc)" test "$rc" -eq 2
check "compare stream against rr: one line naming --force" \
    bash -c "[[ \$(wc -l <'$T/cmprr.err') -eq 1 ]] && grep -q 'A holds stream runs and B rr runs.*--force' '$T/cmprr.err'"
check "compare stream against rr: nothing on standard output" test ! -s "$T/cmprr.txt"
rc=0; nr compare 1 5 --force -J >"$T/cmprrf.json" 2>/dev/null || rc=$?
check "compare stream against rr --force: exit 0 (got $rc)" test "$rc" -eq 0
check_jq "compare --force: warns that the tests differ in kind" "$T/cmprrf.json" \
    'any(.warnings[]; .kind == "test_kind") and ([.parameters[] | select(.name == "test")][0] | .a == "stream" and .b == "rr")'
nr compare 5 6 -J >"$T/cmprc.json" || fail "compare rr against crr failed"
check_jq "compare rr against crr: compared, with a warning" "$T/cmprc.json" 'any(.warnings[]; .kind == "test_kind")'
rc=0; nr report compare 1 5 -o "$T/cmprr.html" 2>"$T/rep.err" || rc=$?
check "report compare stream against rr: exit 2 (got $rc)" test "$rc" -eq 2
check "report compare refused: no page left" test ! -e "$T/cmprr.html"
rc=0; nr report compare 1 5 --force -o "$T/cmprr.html" 2>/dev/null || rc=$?
check "report compare --force: exit 0 (got $rc)" test "$rc" -eq 0
check "report compare: what was compared, and the warning" \
    grep -q 'What was compared.*' "$T/cmprr.html"
check "report compare: the test row" grep -q '<td>test</td><td>stream</td><td>rr</td>' "$T/cmprr.html"
check "report compare: the warning" grep -q 'warning: the tests differ in kind' "$T/cmprr.html"
rc=0; nr report 1 --force -o "$T/r1.html" 2>"$T/rf.err" || rc=$?
check "report RUN --force: refused, exit 2 (got $rc)" test "$rc" -eq 2
check_jq "show -J: no server settings, and why" "$T/show1.json" \
    '.peer_host == null and (.peer_host_note | test("loopback address"))'
rc=0; nr compare before nosuch 2>"$T/cmp.err" || rc=$?
check "compare with an unknown tag: exit 1 (got $rc)" test "$rc" -eq 1
check "compare with an unknown tag: names it" grep -q "'nosuch' is neither" "$T/cmp.err"

# --- export
nr export 1 2 5 --csv >"$T/e.csv"
check "export --csv: header and 3 rows" test "$(wc -l <"$T/e.csv")" -eq 4
check "export --csv: header starts with id,test" grep -q '^id,test,udp,role,title' "$T/e.csv"
check "export --csv: rr row has transactions_per_s" \
    awk -F, 'NR==1{for(i=1;i<=NF;i++) if($i=="transactions_per_s") c=i} NR==4{exit !($c > 0)}' "$T/e.csv"
nr export before --json >"$T/e.json"
check_jq "export --json: an array of the runs' documents" "$T/e.json" \
    'length == 3 and all(.[]; .test == "stream" and (.intervals | length) >= 1 and .tags == ["before"])'

# --- the default path is under XDG_DATA_HOME
XDG_DATA_HOME=$T/xdg "$NETRIG" stream -t 0.3 >/dev/null 2>&1 || fail "stream with XDG_DATA_HOME failed"
check "default history under \$XDG_DATA_HOME/netrig/history.db" test -s "$T/xdg/netrig/history.db"
XDG_DATA_HOME=$T/xdg "$NETRIG" history -J >"$T/xdg.json" 2>/dev/null || fail "history (default db) failed"
check_jq "default history holds that run" "$T/xdg.json" 'length == 1'
rc=0; "$NETRIG" history --db "$T/none.db" 2>"$T/none.err" || rc=$?
check "history of a missing db: exit 1 (got $rc)" test "$rc" -eq 1
check "history of a missing db: says so" grep -q "no history database" "$T/none.err"

# --- serve --db stores the server's side of the tests it serves
start_server -B 127.0.0.1 --db "$T/served.db"
"$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -t 0.5 -R --no-save >/dev/null 2>&1 || fail "stream to serve --db"
for _ in $(seq 50); do
    "$NETRIG" history -J --db "$T/served.db" >"$T/served.json" 2>/dev/null && jq -e 'length == 1' "$T/served.json" >/dev/null && break
    sleep 0.1
done
check_jq "serve --db: the server's side stored as a served stream run" "$T/served.json" \
    'length == 1 and .[0].role == "server" and .[0].test == "stream" and .[0].summary.throughput_bps > 0 and (.[0].peer | startswith("127.0.0.1:"))'
check "serve --db: logged" grep -q 'saved as run 1' "$SRV_LOG"

# --- a database from a newer netrig is refused and left alone
export -f one_line
if command -v sqlite3 >/dev/null 2>&1; then
    cp "$DB" "$T/newer.db"
    sqlite3 "$T/newer.db" 'PRAGMA user_version = 99'
    rc=0; "$NETRIG" history --db "$T/newer.db" 2>"$T/newer.err" || rc=$?
    check "newer schema: exit 1 (got $rc)" test "$rc" -eq 1
    check "newer schema: one clear line" grep -q 'schema version 99, newer than this netrig' "$T/newer.err"
    rc=0; "$NETRIG" stream -t 0.3 --db "$T/newer.db" >"$T/newer2.out" 2>"$T/newer2.err" || rc=$?
    check "an explicit --db that cannot be written fails before the test (exit 2, got $rc)" test "$rc" -eq 2
    check "... in one line, nothing run" bash -c "one_line '$T/newer2.err' && grep -q 'schema version 99.*nothing was run' '$T/newer2.err' && ! grep -q Throughput '$T/newer2.out'"
    check "newer db untouched" test "$(sqlite3 "$T/newer.db" 'PRAGMA user_version')" = 99
fi
finish
