#!/usr/bin/env bash
# Hostile peers, round three (issue 30): each attack reproduced, the limit holding by the
# daemon's own counters, and a real client served meanwhile.
#   1. one rr flow asking a 16 MiB response under --max-rate 10M: paced to the last byte, the
#      test ends with limit, the client says the server stopped it
#   2. a host in --deny (and any host not the test's client) gets nothing from a crr data port
#   3. 20,000 GET /metrics pipelined on one connection get 16 answers; 32 connections from 8
#      addresses flooding: a real Prometheus (when installed) scrapes on time throughout
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/hostile_lib.sh"

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
    # 10 Mbit/s over the measured time, plus the gate's 50 ms burst and one step (62.5 kB each)
    check_jq "rr -t $t: no more than --max-rate reached the client" "$T/rr.$t.json" \
        '.summary.bytes <= 10e6 / 8 * .summary.seconds * 1.1 + 2 * 62500'
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

# ---- 3. pipelined scrapes: bounded per connection and per address, a real Prometheus on time
start_server --metrics 127.0.0.1:0
mport=$(metrics_port "$SRV_LOG")
[[ -n $mport ]] || fail "no metrics port in the log: $(head -c 300 "$SRV_LOG")"
python3 - "$mport" >"$T/pipe.json" <<'PY'
import json, socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 20000)
got = b""
try:
    while True:
        c = s.recv(1 << 20)
        if not c:
            break
        got += c
except OSError:
    pass
print(json.dumps({"bytes": len(got), "ok": got.count(b"HTTP/1.1 200"), "too_many": got.count(b"HTTP/1.1 429")}))
PY
log "20000 pipelined scrapes on one connection: $(cat "$T/pipe.json")"
check_jq "one connection: 16 scrapes answered, the 16th closes it" "$T/pipe.json" \
    '.ok == 16 and .too_many == 0'
if command -v prometheus >/dev/null; then
    pport=$(low_port)
    cat >"$T/prom.yml" <<YML
global: {scrape_interval: 1s, scrape_timeout: 900ms}
scrape_configs:
  - job_name: netrig
    static_configs: [{targets: ["127.0.0.1:$mport"]}]
YML
    prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/tsdb" \
        --web.listen-address="127.0.0.1:$pport" >"$T/prom.log" 2>&1 &
    track_pid $!
    pq() { curl -s -m 2 "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" |
        jq -r '.data.result[0].value[1] // "0"'; }
    wait_until 20 "Prometheus scraping netrig" bash -c "[[ \$(curl -s -m 1 'http://127.0.0.1:$pport/api/v1/query?query=up' | jq -r '.data.result[0].value[1] // 0') == 1 ]]" ||
        fail "Prometheus never scraped: $(tail -c 300 "$T/prom.log")"
    hostile scrapeflood "$mport" 4 8 4 >"$T/flood.json"
    log "scrape flood, 8 addresses x 4 connections for 4 s: $(cat "$T/flood.json")"
    # the last 4 s of Prometheus' own record of its scrapes: every one up, none missed
    ups=$(pq 'sum_over_time(up{job="netrig"}[4s])')
    cnt=$(pq 'count_over_time(up{job="netrig"}[4s])')
    log "Prometheus during the flood: $ups of $cnt scrapes up"
    check "Prometheus scraped netrig during the flood: every scrape up ($ups of $cnt)" \
        test "$ups" = "$cnt" -a "$cnt" -ge 3
    check_jq "the flood got 429s, and no more than 20/s per address (+ bursts) answered" "$T/flood.json" \
        '.too_many > 0 and .ok <= 8 * (20 * .seconds + 20 + 16)'
else
    log "prometheus is not installed: the real scraper is not checked"
fi
stop_server

finish
