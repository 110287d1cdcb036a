#!/usr/bin/env bash
# Soak: for SOAK_SECONDS (default 30, at most 60) a few hundred hostile connections (garbage,
# truncated and oversized messages, slow senders, resets, connect floods, stray data) hit one
# daemon while real tests run against it. Afterwards the daemon still answers, every real test
# completed with sender and receiver agreeing, and its fd count and memory are back to where
# they were.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
command -v python3 >/dev/null || skip "python3 is not installed"
secs=${SOAK_SECONDS:-30}
((secs > 60)) && secs=60

start_server --timeout 2s --max-tests 8
fds() { ls "/proc/$SRV_PID/fd" | wc -l; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$SRV_PID/status"; }

# a first real test sets the baseline (threads, arenas and buffers exist once)
"$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -t 0.5 -P 2 -J >"$T/warm.json"
# the daemon has closed that test's connections before its fds are counted
_no_conns() { ! conns_at "$SRV_PORT" 1; }
wait_until 10 "the daemon closing the first test's connections" _no_conns || true
base_fds=$(fds)
base_rss=$(rss_kb)
log "baseline: $base_fds fds, $base_rss KiB RSS"

python3 "$(dirname "$0")/soak_clients.py" "$SRV_PORT" "$secs" 8 >"$T/hostile.txt" 2>&1 &
hostile=$!
track_pid "$hostile"

real=0 ok=0
end=$(($(now_ms) + secs * 1000))
while (($(now_ms) < end)); do
    real=$((real + 1))
    if timeout 30 "$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -t 0.5 -P 2 -J \
        >"$T/real.$real.json" 2>"$T/real.$real.err" &&
        jq -e '.partial == false and .summary.throughput_bps > 0 and
               all(.flows[]; .bytes == .sender_bytes and .bytes > 0)' \
            "$T/real.$real.json" >/dev/null; then
        ok=$((ok + 1))
    else
        fail "real test $real: $(head -c 300 "$T/real.$real.err")"
    fi
done
wait "$hostile" || true
log "$(cat "$T/hostile.txt")"
log "real tests: $ok of $real complete and consistent"
# (one real test per 3 s at the least: 10 in the default 30 s)
check "at least $((secs / 3)) real tests ran in $secs s" test "$real" -ge $((secs / 3))

# connections still waiting on the daemon's 2 s stage timeouts may take a moment to go
for _ in $(seq 50); do
    (($(fds) <= base_fds)) && break
    sleep 0.2
done
check "daemon alive" kill -0 "$SRV_PID"
check "daemon fds back to baseline ($base_fds, now $(fds))" test "$(fds)" -le "$base_fds"
# Under a sanitizer RSS says nothing of the daemon's own memory: ASan keeps freed memory in
# quarantine (its leak checker does the job there), and TSan maps shadow memory for every address
# touched and keeps each ended thread's history, so 400 short sessions raise it by tens of MiB.
# (grep reads all of ldd's output: with -q it could exit first, and under pipefail ldd's SIGPIPE
# made the test take a sanitizer build, now and then, for a plain one)
if san=$(ldd "$NETRIG" 2>/dev/null | grep -oE 'lib[at]san' | head -n1) && [[ -n $san ]]; then
    log "${san#lib} build: RSS check skipped (the sanitizer's own memory, not the daemon's)"
else
    check "daemon RSS within 16 MiB of baseline ($base_rss KiB, now $(rss_kb) KiB)" \
        test "$(rss_kb)" -le $((base_rss + 16384))
fi
check "daemon still serves" bash -c "\"$NETRIG\" stream -c 127.0.0.1 -p $SRV_PORT -t 0.3 -i 0 -J >/dev/null"
finish
