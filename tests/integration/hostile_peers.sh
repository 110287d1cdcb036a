#!/usr/bin/env bash
# Hostile peers, round three (issue 30): each attack reproduced, the limit holding by the
# daemon's own counters, and a real client served meanwhile.
#   1. one rr flow asking a 16 MiB response under --max-rate 10M: paced to the last byte, the
#      test ends with limit, the client says the server stopped it
#   2. a host in --deny (and any host not the test's client) gets nothing from a crr data port
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
command -v python3 >/dev/null || skip "python3 is not installed"
H=$(dirname "$0")/hostile.py
hostile() { timeout 60 python3 "$H" "$@"; }
client() { timeout 30 "$NETRIG" "$@" -c 127.0.0.1 -p "$SRV_PORT" -i 0 --no-save -J; }
stop_server() { kill "$SRV_PID" && wait "$SRV_PID" 2>/dev/null || true; }

# ---- 1. rr: a response larger than the test's time allows at --max-rate
start_server --max-rate 10M --deny 127.0.0.66/32
for t in 1 0.1; do
    if client rr -t "$t" -r 1,16M >"$T/rr.$t.json" 2>"$T/rr.$t.err"; then
        fail "rr -r 1,16M -t $t under --max-rate 10M completed: $(jq -c .summary "$T/rr.$t.json")"
        continue
    fi
    log "rr -t $t: $(jq -c '[.summary.bytes, .summary.seconds]' "$T/rr.$t.json"); $(head -c 300 "$T/rr.$t.err")"
    check "rr -t $t: the client says the server stopped the test by its --max-rate" \
        grep -q 'server stopped the test: .*--max-rate of 10.00 Mbit/s' "$T/rr.$t.err"
    # 10 Mbit/s over the measured time, plus the gate's 50 ms burst and one write (128 KiB)
    check_jq "rr -t $t: no more than --max-rate reached the client" "$T/rr.$t.json" \
        '.summary.bytes <= 10e6 / 8 * .summary.seconds * 1.1 + 62500 + 131072'
done
check "the daemon logged the limit" grep -q 'stopped: .*held back by this server.s --max-rate' "$SRV_LOG"
client rr -t 0.3 -r 1K,1K >"$T/rr.real.json" 2>"$T/rr.real.err" ||
    fail "a real rr client after the limit: $(head -c 300 "$T/rr.real.err")"

# ---- 2. crr data port: only the test's client
hostile crrsteal "$SRV_PORT" 127.0.0.66 >"$T/crr.deny.json"
hostile crrsteal "$SRV_PORT" 127.0.0.67 >"$T/crr.other.json"
log "crr port, denied host: $(cat "$T/crr.deny.json"); another host: $(cat "$T/crr.other.json")"
for f in deny other; do
    check_jq "crr port: the test's client is answered, $f host gets nothing" "$T/crr.$f.json" \
        '.client_bytes == 65536 and .stranger_bytes == 0'
done
client crr -t 0.3 >"$T/crr.real.json" 2>"$T/crr.real.err" ||
    fail "a real crr client: $(head -c 300 "$T/crr.real.err")"
stop_server

check "daemon alive to the end" true
finish
