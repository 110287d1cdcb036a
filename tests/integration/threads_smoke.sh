#!/usr/bin/env bash
# threads_smoke: every test kind with several flows on several worker threads and a 0.1 s
# sampler against one daemon, at once two clients: what the ThreadSanitizer stage needs to see
# (the sampler reading flows while crr workers open and close connections, the daemon's
# sessions side by side), with no rate judged, so it holds under any sanitizer's slowdown.
# Each run must exit 0 and count its transactions or bytes on both ends.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

start_server
runs=("crr -P 3 -T 2" "crr --connect-only -P 2 -T 2" "rr -P 4 -T 2 --depth 2" "rr -u -P 2 -T 2"
      "stream -P 4 -T 2" "stream --bidir -P 2 -T 2" "stream -u -P 2 -T 2 -b 20M --server-threads 2")
i=0
for args in "${runs[@]}"; do
    i=$((i + 1))
    # shellcheck disable=SC2086 # the options are words
    "$NETRIG" $args -c 127.0.0.1 -p "$SRV_PORT" -t 1 -i 0.1 -J --no-save >"$T/a$i.json" 2>"$T/a$i.err" &
    pa=$!
    # shellcheck disable=SC2086
    "$NETRIG" $args -c 127.0.0.1 -p "$SRV_PORT" -t 1 -i 0.1 -J --no-save >"$T/b$i.json" 2>"$T/b$i.err" &
    pb=$!
    rca=0 rcb=0
    wait "$pa" || rca=$?
    wait "$pb" || rcb=$?
    check "$args: both clients exit 0 (got $rca, $rcb: $(head -c 200 "$T/a$i.err") $(head -c 200 "$T/b$i.err"))" \
        test "$rca" -eq 0 -a "$rcb" -eq 0
    for c in a b; do
        check_jq "$args ($c): something moved, in intervals" "$T/$c$i.json" \
            '(.summary.bytes > 0 or (.summary.transactions // 0) > 0) and (.intervals | length) >= 3'
    done
done
check "daemon alive" alive "$SRV_PID"
finish
