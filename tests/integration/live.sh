#!/usr/bin/env bash
# live: the --live view in a real terminal (tmux).
#  - a 12 s run on a terminal is live by default: while it runs the pane holds exactly one
#    table, redrawn in place (same lines, nothing scrolled into the history), with the time
#    left going down; afterwards one table and then the summary;
#  - --no-live and TERM=dumb give interval lines instead;
#  - piped output never carries escape sequences, even with --live; --live with -J is a
#    usage error.
# Skipped (77) without tmux.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

command -v tmux >/dev/null 2>&1 || skip "tmux is not installed (apt-get install tmux)"
SOCK=netrig-live-$$
tmx() { tmux -L "$SOCK" "$@"; }
on_exit 'tmux -L "$SOCK" kill-server'
export HOME=$T # the history database, were anything saved

# run_in_pane NAME 'ENV...' ARGS...: runs netrig in a fresh 100x40 pane; exit status in $T/NAME.rc
run_in_pane() {
    local name=$1 envs=$2
    shift 2
    tmx new-session -d -s "$name" -x 100 -y 40 \
        "env $envs '$NETRIG' $* --no-save; echo \$? >'$T/$name.rc'; sleep 120"
}
pane() { tmx capture-pane -p -t "$1"; }
history_and_pane() { tmx capture-pane -p -S - -t "$1"; }
wait_rc() { # NAME SECONDS
    for _ in $(seq $(($2 * 10))); do [[ -s $T/$1.rc ]] && return 0; sleep 0.1; done
    return 1
}
count() { grep -cE -- "$1" "$2" || true; }
HEAD='^flow dir +rate +retr +rtt' # the live table's heading (the summary's differs)

# ---- 1. a run longer than 10 s on a terminal: live by default
run_in_pane auto "TERM=xterm-256color" stream -t 12 -P 2
sleep 4.5
pane auto >"$T/a1"
history_and_pane auto >"$T/a1h"
sleep 4
pane auto >"$T/a2"
history_and_pane auto >"$T/a2h"
for f in a1 a2; do
    check "$f: the pane shows one table heading (got $(count "$HEAD" "$T/$f")): $(head -c 600 "$T/$f")" \
        test "$(count "$HEAD" "$T/$f")" -eq 1
    check "$f: one total line (got $(count '^total ' "$T/$f"))" test "$(count '^total ' "$T/$f")" -eq 1
    check "$f: one title line (got $(count '^netrig stream to ' "$T/$f"))" test "$(count '^netrig stream to ' "$T/$f")" -eq 1
    check "$f: no scrolling interval lines" test "$(count '^\[ *[0-9.]*- *[0-9.]* s\]' "$T/$f")" -eq 0
    check "$f: two flow rows" test "$(grep -cE '^ +[01] up +[0-9.]+ [KMGT]?bit/s' "$T/$f" || true)" -eq 2
    check "$f: nothing scrolled into the history (headings there: $(count "$HEAD" "$T/${f}h"))" \
        test "$(count "$HEAD" "$T/${f}h")" -eq 1
done
l1=$(grep -nE "$HEAD" "$T/a1" | cut -d: -f1)
l2=$(grep -nE "$HEAD" "$T/a2" | cut -d: -f1)
check "the table is redrawn in place (heading on line $l1, then $l2)" test "${l1:-x}" == "${l2:-y}"
left1=$(sed -n 's/.* \([0-9.]*\) s left.*/\1/p' "$T/a1")
left2=$(sed -n 's/.* \([0-9.]*\) s left.*/\1/p' "$T/a2")
check "time left goes down ($left1 then $left2)" awk -v a="${left1:-0}" -v b="${left2:-0}" 'BEGIN { exit !(a > b && b > 0) }'
check "the CPU line is shown" grep -q '^CPU client .*% busy' "$T/a2"
check "the live run ends (exit 0)" wait_rc auto 20
check "the live run exits 0 ($(cat "$T/auto.rc" 2>/dev/null))" test "$(cat "$T/auto.rc" 2>/dev/null)" == 0
history_and_pane auto >"$T/a3"
check "after the run: still one table ($(count "$HEAD" "$T/a3"))" test "$(count "$HEAD" "$T/a3")" -eq 1
check "after the run: the summary follows" grep -q '^Throughput ' "$T/a3"

# ---- 2. --no-live and TERM=dumb: interval lines
run_in_pane nolive "TERM=xterm" stream -t 2 --no-live
run_in_pane dumb "TERM=dumb" stream -t 2 --live
check "--no-live run ends" wait_rc nolive 20
check "TERM=dumb run ends" wait_rc dumb 20
for n in nolive dumb; do
    pane "$n" >"$T/$n"
    # the first interval ends near 1 s (a loaded machine may print 1.01)
    # one live line for the first second (with its transfer), and the receiver's Intervals
    # table after the run repeats it as what crossed the path (rates only)
    check "$n: interval lines ($(count '^\[' "$T/$n"))" test "$(count '^\[ *0\.00- *1\.[0-9][0-9] s\] +[0-9.]+ [KMGT]?i?B ' "$T/$n")" -eq 1
    check "$n: the receiver's Intervals table follows" grep -q '^interval  *received  *sender wrote' "$T/$n"
    check "$n: no live table" test "$(count "$HEAD" "$T/$n")" -eq 0
    check "$n: exit 0" test "$(cat "$T/$n.rc")" == 0
done

# ---- 3. piped: no escape sequences, even when asked for --live
rc=0
TERM=xterm timeout 30 "$NETRIG" stream -t 2 --live --no-save 2>"$T/pipe.err" | cat >"$T/pipe.out" || rc=$?
check "piped --live run exits 0 ($rc)" test "$rc" -eq 0
check "piped output has no escape sequences" bash -c "! grep -q $'\\e' '$T/pipe.out' '$T/pipe.err'"
check "piped output has interval lines" grep -q '^\[ *0\.00- *1\.[0-9][0-9] s\]' "$T/pipe.out"
rc=0
timeout 30 "$NETRIG" stream -t 12 --no-save </dev/null >"$T/long.out" 2>&1 || rc=$?
check "a 12 s run to a file has no escape sequences (rc $rc)" bash -c "! grep -q $'\\e' '$T/long.out'"

# ---- 4. --live with -J: a usage error naming both
rc=0
timeout 10 "$NETRIG" stream -t 1 --live -J --no-save >"$T/j.out" 2>"$T/j.err" || rc=$?
check "--live -J exits 2 (got $rc)" test "$rc" -eq 2
check "--live -J: one line naming --live and -J ($(cat "$T/j.err"))" \
    bash -c "[[ \$(wc -l <'$T/j.err') -eq 1 ]] && grep -q -- '--live' '$T/j.err' && grep -q -- '-J' '$T/j.err'"
finish
