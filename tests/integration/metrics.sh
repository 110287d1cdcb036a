#!/usr/bin/env bash
# metrics: Prometheus metrics of 'netrig serve --metrics' and 'netrig exporter'.
#  1. a daemon with --metrics on loopback: series present before any test, then counted
#     tests by kind, bytes, flows, refusals by reason (limit, acl, bad_request), last results
#     per client; 404 elsewhere, 405 for POST;
#  2. the exporter: a reachable target (stream) and an rr target report results and run
#     counts; a refused one and a silent one show netrig_probe_success 0 and
#     netrig_probe_failed{reason=...} 1; scrapes stay fast while a probe hangs;
#  3. invalid configuration files are refused at start with FILE:LINE and the problem;
#  4. Debian's prometheus scrapes both and a metric comes back through /api/v1/query.
# Part 4 needs prometheus: without it the rest runs and the test reports itself skipped (77).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

command -v curl >/dev/null 2>&1 || skip "curl is not installed"
export HOME=$T

scrape() { curl -sS --max-time 5 "http://127.0.0.1:$1/metrics"; }
# value FILE SERIES: the value of the sample whose name and labels start with SERIES
value() { awk -v s="$2" 'index($0, s) == 1 { print $NF; exit }' "$1"; }
has_value() { # DESC FILE SERIES AWK_COND (on v)
    local v
    v=$(value "$2" "$3")
    check "$1 ($3 = ${v:-missing})" awk -v v="${v:-x}" "BEGIN { if (v == \"x\") exit 1; exit !($4) }"
}
wait_metrics_port() { # LOG PID: the port a 'metrics at http://ADDR:PORT/metrics' line names
    local port=""
    for _ in $(seq 100); do
        port=$(sed -n 's/.*metrics at http:\/\/[^ ]*:\([0-9][0-9]*\)\/metrics.*/\1/p' "$1" | head -n1)
        [[ -n $port ]] && break
        alive "$2" || break
        sleep 0.05
    done
    [[ -n $port ]] || { echo "no metrics port in $1: $(cat "$1")" >&2; return 1; }
    echo "$port"
}

# ---- 1. the daemon
start_server -B 127.0.0.1 --metrics 127.0.0.1:0 --max-duration 5s --deny 127.0.0.2/32
MPORT=$(wait_metrics_port "$SRV_LOG" "$SRV_PID")
log "daemon on port $SRV_PORT, metrics on $MPORT"
scrape "$MPORT" >"$T/m0"
check "scrape has the build info" grep -q '^netrig_build_info{version="[0-9.]*",role="serve"} 1$' "$T/m0"
check "Prometheus text format: a TYPE line per family" grep -q '^# TYPE netrig_tests_served_total counter$' "$T/m0"
has_value "nothing served yet" "$T/m0" 'netrig_tests_served_total{test="stream",protocol="tcp"}' 'v == 0'
has_value "busy refusals exist before any" "$T/m0" 'netrig_refusals_total{reason="busy"}' 'v == 0'
has_value "acl refusals exist before any" "$T/m0" 'netrig_refusals_total{reason="acl"}' 'v == 0'
ctype=$(curl -sS -o /dev/null -w '%{content_type}' "http://127.0.0.1:$MPORT/metrics")
check "content type is the text format ($ctype)" grep -q 'text/plain; version=0.0.4' <<<"$ctype"
code=$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MPORT/nothing")
check "other paths are 404 ($code)" test "$code" == 404
code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST -d x=1 "http://127.0.0.1:$MPORT/metrics")
check "POST is 405 ($code)" test "$code" == 405

rc=0
timeout 10 "$NETRIG" serve -p 0 -B 127.0.0.1 --metrics "127.0.0.1:$MPORT" >/dev/null 2>"$T/busy.err" || rc=$?
check "--metrics on a port in use: exit 1 naming it ($rc: $(cat "$T/busy.err"))" \
    bash -c "[[ $rc -eq 1 ]] && grep -q -- '--metrics 127.0.0.1:$MPORT: cannot listen' '$T/busy.err'"
rc=0
"$NETRIG" serve --metrics nowhere >/dev/null 2>"$T/bad.err" || rc=$?
check "--metrics nowhere: usage error ($rc: $(cat "$T/bad.err"))" \
    bash -c "[[ $rc -eq 2 ]] && grep -q \"invalid address 'nowhere' for --metrics\" '$T/bad.err'"

C=(-c 127.0.0.1 -p "$SRV_PORT" --no-save)
"$NETRIG" stream "${C[@]}" -t 1 -P 2 >/dev/null 2>"$T/c1.err" || fail "stream test failed: $(cat "$T/c1.err")"
"$NETRIG" stream "${C[@]}" -t 1 -R >/dev/null 2>"$T/c2.err" || fail "reverse stream test failed: $(cat "$T/c2.err")"
"$NETRIG" rr "${C[@]}" -t 1 >/dev/null 2>"$T/c3.err" || fail "rr test failed: $(cat "$T/c3.err")"
"$NETRIG" crr "${C[@]}" -t 1 -r 10,100 >/dev/null 2>"$T/c5.err" || fail "crr test failed: $(cat "$T/c5.err")"
"$NETRIG" stream "${C[@]}" -t 1 -u -b 10M >/dev/null 2>"$T/c4.err" || fail "udp test failed: $(cat "$T/c4.err")"
"$NETRIG" stream "${C[@]}" -t 20 >/dev/null 2>&1 && fail "a 20 s test passed --max-duration 5s"
"$NETRIG" stream "${C[@]}" -B 127.0.0.2 -t 1 --timeout 2s >/dev/null 2>&1 && fail "a denied client ran a test"
# a control message that is not JSON: bad_request
bash -c "exec 3<>/dev/tcp/127.0.0.1/$SRV_PORT; printf 'NRG\\001\\000\\000\\000\\003abc' >&3; timeout 3 cat <&3 >/dev/null" || true
for _ in $(seq 50); do # the refusals are counted as the daemon sees them
    scrape "$MPORT" >"$T/m1"
    [[ $(value "$T/m1" 'netrig_refusals_total{reason="bad_request"}') == 1 &&
       $(value "$T/m1" 'netrig_refusals_total{reason="acl"}') == 1 ]] && break
    sleep 0.1
done
has_value "two TCP stream tests served" "$T/m1" 'netrig_tests_served_total{test="stream",protocol="tcp"}' 'v == 2'
has_value "one rr test served" "$T/m1" 'netrig_tests_served_total{test="rr",protocol="tcp"}' 'v == 1'
has_value "one UDP stream served" "$T/m1" 'netrig_tests_served_total{test="stream",protocol="udp"}' 'v == 1'
has_value "no test running" "$T/m1" 'netrig_tests_running{test="stream",protocol="tcp"}' 'v == 0'
has_value "bytes received from uploads" "$T/m1" 'netrig_served_bytes_total{test="stream",protocol="tcp",direction="received"}' 'v > 1000000'
has_value "bytes sent for the reverse test" "$T/m1" 'netrig_served_bytes_total{test="stream",protocol="tcp",direction="sent"}' 'v > 1000000'
has_value "flows counted" "$T/m1" 'netrig_served_flows_total{test="stream",protocol="tcp"}' 'v == 3'
has_value "limit refusal counted" "$T/m1" 'netrig_refusals_total{reason="limit"}' 'v == 1'
has_value "acl refusal counted" "$T/m1" 'netrig_refusals_total{reason="acl"}' 'v == 1'
has_value "bad_request refusal counted" "$T/m1" 'netrig_refusals_total{reason="bad_request"}' 'v == 1'
has_value "the client's last test is kept" "$T/m1" 'netrig_client_last_throughput_bytes_per_second{client="127.0.0.1",test="stream",protocol="udp"}' 'v > 0'
has_value "the client's last test completed" "$T/m1" 'netrig_client_last_complete{client="127.0.0.1"' 'v == 1'
# one row per client address and kind: an rr or UDP test does not hide the TCP stream's
check "one row per client and kind (stream tcp, rr tcp, crr tcp, stream udp)" test "$(grep -c '^netrig_client_last_bytes{' "$T/m1")" -eq 4
has_value "the TCP stream series outlives the rr and UDP tests" "$T/m1" 'netrig_client_last_throughput_bytes_per_second{client="127.0.0.1",test="stream",protocol="tcp"}' 'v > 1000000'
has_value "rr: measured seconds" "$T/m1" 'netrig_client_last_duration_seconds{client="127.0.0.1",test="rr",protocol="tcp"}' 'v > 0.5 && v < 3'
has_value "rr: transactions answered" "$T/m1" 'netrig_client_last_transactions{client="127.0.0.1",test="rr",protocol="tcp"}' 'v > 100'
has_value "rr: bytes both ways (1-byte requests and responses: 2 per transaction)" "$T/m1" 'netrig_client_last_bytes{client="127.0.0.1",test="rr",protocol="tcp"}' 'v > 200'
has_value "rr: throughput" "$T/m1" 'netrig_client_last_throughput_bytes_per_second{client="127.0.0.1",test="rr",protocol="tcp"}' 'v > 100'
has_value "rr: responses counted as sent" "$T/m1" 'netrig_served_bytes_total{test="rr",protocol="tcp",direction="sent"}' 'v > 100'
has_value "crr: measured seconds" "$T/m1" 'netrig_client_last_duration_seconds{client="127.0.0.1",test="crr",protocol="tcp"}' 'v > 0.5 && v < 3'
has_value "crr: 10-byte requests in, 100-byte responses out" "$T/m1" 'netrig_client_last_bytes{client="127.0.0.1",test="crr",protocol="tcp"}' 'v > 1100'
has_value "rr: measured time counted" "$T/m1" 'netrig_served_seconds_total{test="rr",protocol="tcp"}' 'v > 0.5'
check "every sample line parses as NAME{LABELS} VALUE" \
    bash -c "grep -v '^#' '$T/m1' | grep -vqE '^[a-z_]+(\{([a-z_]+=\"[^\"]*\",?)*\})? [-+0-9.eE]+(Inf|NaN)?$' && exit 1 || exit 0"

# ---- 2. the exporter
python3 - "$T/silent.port" <<'EOF' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
time.sleep(90)  # accepts (the kernel does) and never answers
EOF
track_pid $!
for _ in $(seq 50); do [[ -s $T/silent.port ]] && break; sleep 0.1; done
SILENT=$(cat "$T/silent.port")
cat >"$T/exporter.conf" <<EOF
# netrig exporter test configuration
listen = 127.0.0.1:0
min_interval = 1s
max_duration = 5s

[target loop]
host = 127.0.0.1
port = $SRV_PORT
duration = 1s
interval = 4s

[target lat]
host = 127.0.0.1
port = $SRV_PORT
test = rr
duration = 0.5s
interval = 6s

[target dead]
host = 127.0.0.1
port = 1          # nothing listens there: refused
duration = 1s
interval = 5s

[target silent]
host = 127.0.0.1
port = $SILENT
timeout = 3s
duration = 1s
interval = 20s
EOF
"$NETRIG" exporter --config "$T/exporter.conf" --check >"$T/check.out" 2>&1 ||
    fail "--check refused a valid file: $(cat "$T/check.out")"
"$NETRIG" exporter --config "$T/exporter.conf" 2>"$T/exporter.log" &
EXP_PID=$!
track_pid "$EXP_PID"
EPORT=$(wait_metrics_port "$T/exporter.log" "$EXP_PID")
slow=0
for _ in $(seq 150); do # until every target has run once (bounded: 15 s)
    t0=$(now_ms)
    scrape "$EPORT" >"$T/e1" || true
    (($(now_ms) - t0 > 1000)) && slow=$((slow + 1))
    [[ $(value "$T/e1" 'netrig_probe_runs_total{target="silent"') == 1 ]] && break
    sleep 0.1
done
check "no scrape took over 1 s while probes ran ($slow did)" test "$slow" -eq 0
has_value "loop target ran" "$T/e1" 'netrig_probe_runs_total{target="loop",test="stream",protocol="tcp"}' 'v >= 1'
has_value "loop target succeeded" "$T/e1" 'netrig_probe_success{target="loop"' 'v == 1'
has_value "loop throughput" "$T/e1" 'netrig_probe_throughput_bytes_per_second{target="loop"' 'v > 1000000'
has_value "rr target rate" "$T/e1" 'netrig_probe_transactions_per_second{target="lat",test="rr"' 'v > 100'
has_value "rr target p99 latency" "$T/e1" 'netrig_probe_latency_seconds{target="lat",test="rr",protocol="tcp",quantile="0.99"}' 'v > 0 && v < 1'
has_value "dead target failed" "$T/e1" 'netrig_probe_success{target="dead"' 'v == 0'
has_value "dead target: reason refused" "$T/e1" 'netrig_probe_failed{target="dead",test="stream",protocol="tcp",reason="refused"}' 'v == 1'
has_value "dead target: not timeout" "$T/e1" 'netrig_probe_failed{target="dead",test="stream",protocol="tcp",reason="timeout"}' 'v == 0'
has_value "dead target: failures counted" "$T/e1" 'netrig_probe_failures_total{target="dead",test="stream",protocol="tcp",reason="refused"}' 'v >= 1'
has_value "silent target: reason timeout" "$T/e1" 'netrig_probe_failed{target="silent",test="stream",protocol="tcp",reason="timeout"}' 'v == 1'
check "the dead target has no throughput series (no stale figures)" \
    bash -c "! grep -q '^netrig_probe_throughput_bytes_per_second{target=\"dead\"' '$T/e1'"
check "the exporter logs the failure with its reason" grep -q 'target dead: stream probe failed (refused)' "$T/exporter.log"

# ---- 3. invalid configuration files
bad_config() { # DESC LINE PATTERN: the file $T/bad.conf is refused naming LINE and PATTERN
    local rc=0
    "$NETRIG" exporter --config "$T/bad.conf" --check >"$T/bad.out" 2>"$T/bad.err" || rc=$?
    check "$1: exit 2 (got $rc)" test "$rc" -eq 2
    check "$1: one line naming $T/bad.conf:$2 and [$3] ($(cat "$T/bad.err"))" \
        names_line_and "$T/bad.err" "$T/bad.conf:$2: " "$3"
}
names_line_and() { # FILE PREFIX TEXT: one line holding both
    [[ $(wc -l <"$1") -eq 1 ]] && grep -qF -- "$2" "$1" && grep -qF -- "$3" "$1"
}
printf '[target a]\nhost = h\ncolour = red\n' >"$T/bad.conf"
bad_config "unknown key" 3 "unknown key 'colour'"
printf '[target a]\nhost = h\nduration = 10 parsecs\n' >"$T/bad.conf"
bad_config "bad duration" 3 "invalid duration '10 parsecs'"
printf 'min_interval = 30s\n\n[target a]\nhost = h\ninterval = 5s\n' >"$T/bad.conf"
bad_config "interval below min_interval" 5 "below min_interval"
printf 'max_duration = 10s\n[target a]\nhost = h\nduration = 1m\ninterval = 1h\n' >"$T/bad.conf"
bad_config "duration over max_duration" 4 "exceeds max_duration"
printf '[target a]\nport = 5301\n' >"$T/bad.conf"
bad_config "no host" 1 "has no 'host"
printf '[target a]\nhost = h\n[target a]\nhost = h\n' >"$T/bad.conf"
bad_config "duplicate target" 3 "defined twice"
printf '[target a]\nhost = h\ntest = crr\nprotocol = udp\n' >"$T/bad.conf"
bad_config "crr over udp" 4 "crr runs over TCP only"
printf '# nothing\n[targets]\n' >"$T/bad.conf"
bad_config "unknown section" 2 "unknown section"
printf 'listen = nowhere\n' >"$T/bad.conf"
bad_config "bad listen address" 1 "invalid listen 'nowhere'"
printf '# only comments\n' >"$T/bad.conf"
rc=0
"$NETRIG" exporter --config "$T/bad.conf" >/dev/null 2>"$T/bad.err" || rc=$?
check "no targets: exit 2, one line ($rc: $(cat "$T/bad.err"))" \
    bash -c "[[ $rc -eq 2 && \$(wc -l <'$T/bad.err') -eq 1 ]] && grep -q 'no \[target NAME\] section' '$T/bad.err'"
rc=0
"$NETRIG" exporter --config "$T/missing.conf" >/dev/null 2>"$T/bad.err" || rc=$?
check "a missing file: exit 2 naming it ($rc: $(cat "$T/bad.err"))" \
    bash -c "[[ $rc -eq 2 ]] && grep -qF '$T/missing.conf' '$T/bad.err'"

# ---- 4. Debian's prometheus scrapes both and answers a query
PROM=$(command -v prometheus || true)
if [[ -z $PROM ]]; then
    log "prometheus is not installed: the Prometheus round trip is skipped"
    ((FAILS == 0)) && skip "prometheus is not installed (apt-get install prometheus); everything else passed"
    finish
fi
PPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$T/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: netrig-serve
    static_configs:
      - targets: ['127.0.0.1:$MPORT']
  - job_name: netrig-exporter
    static_configs:
      - targets: ['127.0.0.1:$EPORT']
EOF
"$PROM" --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
    --web.listen-address="127.0.0.1:$PPORT" --log.level=warn >"$T/prometheus.log" 2>&1 &
track_pid $!
query() { curl -sS --max-time 2 --get "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1"; }
got=""
for _ in $(seq 60); do # bounded: 30 s for Prometheus to start and scrape twice
    if query 'netrig_tests_served_total{test="rr",protocol="tcp"}' >"$T/q1.json" 2>/dev/null &&
        jq -e '.data.result | length == 1' "$T/q1.json" >/dev/null 2>&1 &&
        query 'netrig_probe_success{target="loop"}' >"$T/q2.json" 2>/dev/null &&
        jq -e '.data.result | length == 1' "$T/q2.json" >/dev/null 2>&1; then
        got=1
        break
    fi
    sleep 0.5
done
check "Prometheus answered queries for netrig metrics within 30 s ($(head -c 300 "$T/q1.json" 2>/dev/null); $(tail -n 3 "$T/prometheus.log"))" test -n "$got"
check_jq "Prometheus has the daemon's rr count (ours and the exporter's)" "$T/q1.json" '.status == "success" and (.data.result[0].value[1] | tonumber) >= 1'
check_jq "Prometheus has the exporter's probe result" "$T/q2.json" '.data.result[0].value[1] == "1" and .data.result[0].metric.job == "netrig-exporter"'
query 'up{job=~"netrig-.*"}' >"$T/q3.json" || true
check_jq "both netrig endpoints are up for Prometheus" "$T/q3.json" '[.data.result[].value[1]] == ["1","1"]'
finish
