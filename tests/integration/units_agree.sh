#!/usr/bin/env bash
# units_agree: one run printed by `netrig diagnose` and by the reports (`netrig show`, the
# stream text) says its throughput in the same words, every rate and size either command
# prints is in the one set of units core/units prints (bit/s .. Tbit/s, B .. TiB), and both
# print round-trip times as durations with their unit: issue 27, diagnose had its own
# formatter (kbit/s, kB, MB) and the stream table printed "1599us".
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

DB=$T/units.db
# a built-in loopback server, 1 s after the warm-up, saved so the reports can print the same run
"$NETRIG" diagnose -t 1 --db "$DB" >"$T/diag.txt" 2>"$T/diag.err" ||
    fail "diagnose: exit status $? ($(head -c 300 "$T/diag.err"))"
"$NETRIG" show last --db "$DB" >"$T/show.txt" 2>"$T/show.err" ||
    fail "show last: exit status $? ($(head -c 300 "$T/show.err"))"
"$NETRIG" stream -t 0.5 --no-save >"$T/stream.txt" 2>"$T/stream.err" ||
    fail "stream: exit status $? ($(head -c 300 "$T/stream.err"))"

DIAG=$(grep -oE '^  throughput [0-9.]+ [A-Za-z]+/s' "$T/diag.txt" | awk '{print $2, $3}' || true)
SHOW=$(grep -oE '^  throughput +[0-9.]+ [A-Za-z]+/s' "$T/show.txt" | awk '{print $2, $3}' || true)
log "diagnose says $DIAG, show says $SHOW for the same run"
check "diagnose printed a throughput ($(head -c 200 "$T/diag.txt"))" test -n "$DIAG"
check "the run's report prints the same throughput as diagnose ('$DIAG' vs '$SHOW')" \
    test "$DIAG" == "$SHOW"

# every number with a rate or size unit, in all three outputs
units() { grep -oE '[0-9.]+ ?[A-Za-z]*(bit/s|B)\b' "$1" | sed -E 's/^[0-9.]+ ?//' | sort -u; }
for f in diag show stream; do
    bad=$(units "$T/$f.txt" | grep -vxE '(|K|M|G|T)bit/s|B|KiB|MiB|GiB|TiB' || true)
    check "$f: every rate and size in core/units' units (others: '${bad//$'\n'/ }')" test -z "$bad"
done
check "diagnose prints sizes as the reports do (KiB/MiB)" grep -qE '[0-9] (KiB|MiB|GiB)' "$T/diag.txt"
check "diagnose prints no decimal kB/MB or kbit/s" \
    bash -c "! grep -qE '[0-9] (kB|MB|GB|kbit/s)' '$T/diag.txt'"
# round-trip times: diagnose's srtt and the stream table's rtt column both as "874 us", "1.6 ms"
check "diagnose: srtt as a duration with its unit ($(grep -m1 srtt "$T/diag.txt"))" \
    grep -qE '^  srtt [0-9.]+ (us|ms|s) ' "$T/diag.txt"
check "stream: the flow's rtt in the same form ($(grep -A1 '^flow' "$T/stream.txt" | tail -1))" \
    grep -qE '^ +0 up .* [0-9.]+ (us|ms|s) +[0-9]+ seg' "$T/stream.txt"
