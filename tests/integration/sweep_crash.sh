#!/usr/bin/env bash
# sweep_crash: a running sweep is killed with SIGKILL again and again while it writes runs to
# the history. After every kill the database passes `PRAGMA integrity_check`, every point it
# marked done still has all its runs, and no stored run is lost; `--resume` then finishes the
# sweep with exactly the planned runs per point.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

command -v sqlite3 >/dev/null 2>&1 || skip "the sqlite3 command-line tool is not installed"

DB=$T/crash.db
args=(sweep stream -t 0.25 -i 0.1 --vary flows=1,2,3 --vary window=128K,1M --repeat 3 --db "$DB")
planned=18
q() { sqlite3 "$DB" "$1"; }

# first start: wait until the sweep is stored, then kill it mid-run
"$NETRIG" "${args[@]}" >"$T/run0.log" 2>&1 &
pid=$!
track_pid "$pid"
for _ in $(seq 100); do
    grep -q '\] run 1 (id 1)' "$T/run0.log" 2>/dev/null && break
    sleep 0.05
done
kill -KILL "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true

prev=0
kills=1
for i in $(seq 1 8); do
    integ=$(q 'PRAGMA integrity_check')
    check "kill $kills: integrity_check is ok (got '$integ')" test "$integ" = ok
    fk=$(q 'PRAGMA foreign_key_check' | wc -l)
    check "kill $kills: no dangling foreign keys" test "$fk" -eq 0
    runs=$(q 'SELECT count(*) FROM runs WHERE sweep_point_id IS NOT NULL AND partial = 0')
    check "kill $kills: no stored run lost ($runs >= $prev)" test "$runs" -ge "$prev"
    prev=$runs
    bad=$(q "SELECT count(*) FROM sweep_points p WHERE p.status = 'done' AND
             (SELECT count(*) FROM runs r WHERE r.sweep_point_id = p.id AND r.partial = 0) != 3")
    check "kill $kills: every point marked done has its 3 runs" test "$bad" -eq 0
    orphan=$(q 'SELECT count(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM metrics m WHERE m.run_id = r.id)')
    check "kill $kills: every stored run is whole (has its metrics)" test "$orphan" -eq 0
    ((runs >= planned - 2)) && break
    # resume and kill again at a random moment, mostly inside a run or its write
    "$NETRIG" "${args[@]}" --resume >"$T/run$i.log" 2>&1 &
    pid=$!
    track_pid "$pid"
    sleep "0.$((RANDOM % 6 + 3))"
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    kills=$((kills + 1))
done
log "$kills kills, $prev of $planned runs stored before the final resume"
check "the sweep is still marked unfinished" test "$(q 'SELECT status FROM sweeps WHERE id = 1')" != done

rc=0
"$NETRIG" "${args[@]}" --resume -J >"$T/final.json" 2>"$T/final.err" || rc=$?
check "--resume finishes it: exit 0 (got $rc; $(tail -c 300 "$T/final.err"))" test "$rc" -eq 0
check "--resume says which sweep" grep -q '^resuming sweep 1' "$T/final.err"
check_jq "final: done, 6 points of 3 runs" "$T/final.json" \
    '.status == "done" and (.points | length) == 6 and all(.points[]; .status == "done" and .runs == 3)'
check "final: exactly $planned complete runs in the sweep" \
    test "$(q 'SELECT count(*) FROM runs WHERE sweep_point_id IS NOT NULL AND partial = 0')" -eq "$planned"
check "final: integrity_check is ok" test "$(q 'PRAGMA integrity_check')" = ok
check "final: only one sweep was created" test "$(q 'SELECT count(*) FROM sweeps')" -eq 1
finish
