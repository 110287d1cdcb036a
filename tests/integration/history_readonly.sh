#!/usr/bin/env bash
# history_readonly: the read commands (history, show, export, compare, report) on a history
# the user may read but not write — a root-owned database of mode 0444 in a root-owned
# directory, read as nobody — with no -wal file, with a -wal file held by a writer, and with a
# -wal that cannot be read without write access (one clear line naming the fix). The file is
# never changed; the writing commands (tag, a test saving its run) say why they cannot.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

[[ $(id -u) -eq 0 ]] || skip "needs root to read as another user"
command -v setpriv >/dev/null || skip "setpriv is missing"
command -v python3 >/dev/null || skip "python3 is missing"

# nobody must reach the binary and the test directory, but may write nowhere in it but out/
chmod 755 "$T"
RO=$T/ro
mkdir -m 755 "$RO" "$T/out"
chmod 777 "$T/out"
DB=$RO/history.db
as_nobody() { setpriv --reuid nobody --regid nogroup --clear-groups -- "$@"; }
probe=$(as_nobody "$NETRIG" --version 2>&1) || skip "nobody cannot run $NETRIG ($probe)"

"$NETRIG" stream -t 0.3 --title first --db "$DB" >/dev/null 2>&1 || fail "first run failed"
"$NETRIG" stream -t 0.3 -P 2 --title second --db "$DB" >/dev/null 2>&1 || fail "second run failed"
"$NETRIG" tag 1 before --db "$DB" >/dev/null || fail "tag failed"
chmod 444 "$DB"
check "no -wal or -shm after a clean close" test ! -e "$DB-wal" -a ! -e "$DB-shm"
sum_before=$(sha256sum "$DB" | cut -d' ' -f1)

# reads every read command makes; $1 names the case
read_all() {
    local c=$1 rc
    rc=0; as_nobody "$NETRIG" history -J --db "$DB" >"$T/out/h.$c.json" 2>"$T/out/h.$c.err" || rc=$?
    check "$c: history exits 0 (got $rc: $(head -c 300 "$T/out/h.$c.err"))" test "$rc" -eq 0
    check_jq "$c: history lists both runs" "$T/out/h.$c.json" '[.[].id] == [1,2]'
    rc=0; as_nobody "$NETRIG" show 2 -J --db "$DB" >"$T/out/s.$c.json" 2>"$T/out/s.$c.err" || rc=$?
    check "$c: show exits 0 (got $rc: $(head -c 300 "$T/out/s.$c.err"))" test "$rc" -eq 0
    check_jq "$c: show has the run's parameters" "$T/out/s.$c.json" '.id == 2 and .params.flows == 2'
    rc=0; as_nobody "$NETRIG" export 1 2 --csv --db "$DB" >"$T/out/e.$c.csv" 2>"$T/out/e.$c.err" || rc=$?
    check "$c: export exits 0 (got $rc: $(head -c 300 "$T/out/e.$c.err"))" test "$rc" -eq 0
    check "$c: export writes a header and two rows" test "$(wc -l <"$T/out/e.$c.csv")" -eq 3
    rc=0; as_nobody "$NETRIG" compare before 2 -J --db "$DB" >"$T/out/c.$c.json" 2>"$T/out/c.$c.err" || rc=$?
    check "$c: compare exits 0 (got $rc: $(head -c 300 "$T/out/c.$c.err"))" test "$rc" -eq 0
    check_jq "$c: compare has metrics" "$T/out/c.$c.json" '(.metrics | length) > 0'
    rc=0; as_nobody "$NETRIG" report 2 -o "$T/out/r.$c.html" --db "$DB" >/dev/null 2>"$T/out/r.$c.err" || rc=$?
    check "$c: report exits 0 (got $rc: $(head -c 300 "$T/out/r.$c.err"))" test "$rc" -eq 0
}

# --- 1. no -wal: the database file alone is read
read_all nowal
check "nowal: no -wal or -shm created" test ! -e "$DB-wal" -a ! -e "$DB-shm"
check "nowal: the file is unchanged" test "$(sha256sum "$DB" | cut -d' ' -f1)" = "$sum_before"
check "nowal: no backup made" test -z "$(ls "$RO" | grep -v '^history.db$')"

# the writing commands refuse with one line that says why
rc=0; as_nobody "$NETRIG" tag 2 after --db "$DB" >/dev/null 2>"$T/out/tag.err" || rc=$?
check "tag as nobody fails (got $rc)" test "$rc" -eq 1
check "tag: one line" one_line "$T/out/tag.err"
check "tag: says it needs write access" grep -q "need write access" "$T/out/tag.err"
rc=0; as_nobody "$NETRIG" stream -t 0.2 --db "$DB" >"$T/out/run.txt" 2>"$T/out/run.err" || rc=$?
check "a run whose explicit --db cannot be written fails before the test (exit 2, got $rc)" test "$rc" -eq 2
check "... with one line saying why, nothing run" bash -c "[[ \$(wc -l <'$T/out/run.err') -eq 1 ]] && grep -q 'write access.*nothing was run' '$T/out/run.err' && ! grep -q Throughput '$T/out/run.txt'"

# --- 2. a writer holds the database open with changes in its -wal (and a readable -shm)
chmod 644 "$DB"
python3 - "$DB" "$T/holder.ready" <<'EOF' &
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA wal_autocheckpoint = 0")
db.execute("INSERT INTO tags VALUES ('walonly', 2)")
open(sys.argv[2], "w").close()
time.sleep(60)
EOF
HOLDER=$!
track_pid "$HOLDER"
for _ in $(seq 100); do [[ -e $T/holder.ready ]] && break; sleep 0.05; done
chmod 444 "$DB"
check "the writer left frames in the -wal" test -s "$DB-wal"
read_all wal
check_jq "wal: the change still in the -wal is read" "$T/out/h.wal.json" '.[1].tags == ["walonly"]'

# --- 3. the writer died: a stale -wal and -shm are still read
kill -KILL "$HOLDER"
wait "$HOLDER" 2>/dev/null || true
check "a stale -wal is left" test -s "$DB-wal"
read_all stale
check_jq "stale: the change in the -wal is read" "$T/out/h.stale.json" '.[1].tags == ["walonly"]'

# --- 4. a -wal with changes but no -shm index, in a directory nobody may write: the fix named
rm -f "$DB-shm"
sum_wal=$(sha256sum "$DB" "$DB-wal")
rc=0; as_nobody "$NETRIG" history --db "$DB" >/dev/null 2>"$T/out/nowal.err" || rc=$?
check "unreadable -wal: exit 1 (got $rc)" test "$rc" -eq 1
check "unreadable -wal: one line" one_line "$T/out/nowal.err"
check "unreadable -wal: names the -wal and the fix" \
    grep -q -- "-wal' that cannot be read without write access.*checkpoint.*copy" "$T/out/nowal.err"
check "unreadable -wal: nothing changed" test "$(sha256sum "$DB" "$DB-wal")" = "$sum_wal"
check "unreadable -wal: no -shm created" test ! -e "$DB-shm"

# --- 5. an unreadable file: its own message
chmod 600 "$DB"
rc=0; as_nobody "$NETRIG" history --db "$DB" >/dev/null 2>"$T/out/perm.err" || rc=$?
check "unreadable file: exit 1 (got $rc)" test "$rc" -eq 1
check "unreadable file: asks for read access" grep -q "cannot read history database.*Permission denied.*read access" "$T/out/perm.err"

finish
