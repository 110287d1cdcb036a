#!/usr/bin/env bash
# metrics_fleet: netrig as Prometheus' probe engine, with the shipped rules and dashboard.
#  1. two daemons (serve --metrics), each in a namespace of its own, joined by veth pairs to a
#     hub namespace where `netrig exporter` runs a scheduled rr target and a refused one and
#     answers /probe; daemon A follows a tune journal on a fixture tree (--tune-state);
#  2. /probe by hand: a stream to daemon A answers probe_success 1 and its throughput; a second
#     probe of A while the first runs answers in_progress; past --probes 1, probe_limit; a refused port answers reason
#     "refused"; bad queries are 400 naming the parameter;
#  3. Debian's prometheus in the hub scrapes /probe with the blackbox-style relabeling of
#     docs/exporter.md (stream to A, rr to B, a refused port), the exporter's /metrics and both
#     daemons, loads deploy/prometheus/netrig.rules.yml (group intervals cut to 1 s): every
#     rule evaluates healthy and every panel query of deploy/grafana/netrig-fleet.json returns
#     data; /probe's duration stays under the scrape timeout; the failing probe shows as a
#     pending NetrigProbeFailing alert;
#  2b. tuning drift: A's netrig_tune_drifted is 1 for the value the fixture no longer holds and
#     0 for the one it does, and 0 once the file holds the applied value again;
#  4. promtool check rules and promtool test rules pass on the shipped files.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RULES=$ROOT/deploy/prometheus/netrig.rules.yml
DASH=$ROOT/deploy/grafana/netrig-fleet.json
command -v curl >/dev/null 2>&1 || skip "curl is not installed"
PROM=$(command -v prometheus || true)
PROMTOOL=$(command -v promtool || true)
[[ -n $PROM && -n $PROMTOOL ]] || skip "prometheus is not installed (apt-get install prometheus)"
need_netns

# ---- 4 first (no processes): the shipped rules
check "promtool check rules ($(promtool check rules "$RULES" 2>&1 | tail -n 2 | tr '\n' ' '))" \
    "$PROMTOOL" check rules "$RULES"
(cd "$ROOT/deploy/prometheus" && "$PROMTOOL" test rules netrig.rules.test.yml >"$T/ptest.out" 2>&1) ||
    fail "promtool test rules: $(tail -n 20 "$T/ptest.out")"

# ---- 1. hub and two daemon namespaces
new_netns hub; HUB=$NETNS
new_netns da; NSA=$NETNS
new_netns db; NSB=$NETNS
join() { # NS N: a veth from the hub (10.233.N.1) to NS (10.233.N.2)
    ip link add "h$2" netns "$HUB" type veth peer name "d$2" netns "$1"
    ip -n "$HUB" addr add "10.233.$2.1/24" dev "h$2"
    ip -n "$1" addr add "10.233.$2.2/24" dev "d$2"
    ip -n "$HUB" link set "h$2" up
    ip -n "$1" link set "d$2" up
}
join "$NSA" 1
join "$NSB" 2
A=10.233.1.2
B=10.233.2.2
in_hub() { ip netns exec "$HUB" "$@"; }
# a tune journal (docs/tune.md's format) of two sysctls applied to a fixture tree
mkdir -p "$T/root/proc/sys/net/ipv4" "$T/root/proc/sys/net/core" "$T/tune"
chmod 700 "$T/tune"
printf '4096\t131072\t6291456\n' >"$T/root/proc/sys/net/ipv4/tcp_rmem"   # not what was applied
printf '4096\n' >"$T/root/proc/sys/net/core/somaxconn"                     # what was applied
cat >"$T/tune/tune-20261207T010000Z-1.jsonl" <<EOF
{"netrig_tune_journal":1,"created":"2026-12-07T01:00:00Z","created_unix":1796518800,"pid":1,"target":"lab","profile":"throughput","sysroot":"$T/root","netns":"host","planned":2}
{"seq":1,"kind":"sysctl","name":"net.ipv4.tcp_rmem","path":"/proc/sys/net/ipv4/tcp_rmem","old":"4096\t131072\t6291456","new":"4096 131072 33554432"}
{"seq":1,"result":"applied","now":"4096\t131072\t33554432"}
{"seq":2,"kind":"sysctl","name":"net.core.somaxconn","path":"/proc/sys/net/core/somaxconn","old":"1024","new":"4096"}
{"seq":2,"result":"applied","now":"4096"}
{"done":true,"applied":2,"refused":0,"unverified":0,"at":"2026-12-07T01:00:01Z","at_unix":1796518801}
EOF
chmod 600 "$T/tune/tune-20261207T010000Z-1.jsonl"
ip netns exec "$NSA" "$NETRIG" serve -p 5301 --metrics :9464 --tune-state "$T/tune" 2>"$T/serve.a.log" &
track_pid $!
ip netns exec "$NSB" "$NETRIG" serve -p 5301 --metrics :9464 2>"$T/serve.b.log" &
track_pid $!
# a second daemon in A's namespace for the load probes (one test per target: its own port)
ip netns exec "$NSA" "$NETRIG" serve -p 5302 2>"$T/serve.a2.log" &
track_pid $!
listening() { ip netns exec "$1" ss -Htln "sport = :$2" | grep -q .; }
wait_until 10 "daemon A listening" listening "$NSA" 5301
wait_until 10 "daemon B listening" listening "$NSB" 5301
wait_until 10 "daemon A2 listening" listening "$NSA" 5302
wait_until 10 "daemon A metrics" listening "$NSA" 9464
wait_until 10 "daemon B metrics" listening "$NSB" 9464

cat >"$T/exporter.conf" <<EOF
listen = 127.0.0.1:9465
min_interval = 1s
[target sched-rr]
host = $B
test = rr
duration = 500ms
interval = 2s
[target sched-refused]
host = $A
port = 5999
duration = 500ms
interval = 2s
EOF
ip netns exec "$HUB" "$NETRIG" exporter --config "$T/exporter.conf" --probes 3 2>"$T/exporter.log" &
EXP_PID=$!
track_pid $EXP_PID
wait_until 10 "the exporter listening" listening "$HUB" 9465
# a second exporter allowed one probe at a time
ip netns exec "$HUB" "$NETRIG" exporter --listen 127.0.0.1:9466 --probes 1 2>"$T/exporter1.log" &
track_pid $!
wait_until 10 "the one-probe exporter listening" listening "$HUB" 9466
check "the exporter announces /probe" grep -q 'probes at http://127.0.0.1:9465/probe, at most 3' "$T/exporter.log"

# ---- 2. /probe by hand
probe() { in_hub curl -sS --max-time 10 -H "X-Prometheus-Scrape-Timeout-Seconds: ${TMO:-3}" -o "$T/$1" -w '%{http_code}' "http://127.0.0.1:9465/probe?$2"; }
value() { awk -v s="$2" 'index($0, s) == 1 { print $NF; exit }' "$T/$1"; }
code=$(probe p1 "target=$A:5301&test=stream&duration=300ms")
check "stream probe of A: 200 ($code)" test "$code" == 200
check "stream probe of A succeeded ($(grep -v '^#' "$T/p1" | head -n 3 | tr '\n' ' '))" test "$(value p1 'probe_success ')" == 1
check "stream probe of A has its throughput" grep -q '^netrig_probe_throughput_bytes_per_second{test="stream",protocol="tcp"} [1-9]' "$T/p1"
check "no failure reason is set on success" bash -c "! grep -q '^netrig_probe_failed{.*} 1$' '$T/p1'"
d=$(value p1 'probe_duration_seconds ')
check "probe_duration_seconds covers the 300 ms test, under the 3 s timeout ($d)" \
    awk -v d="$d" 'BEGIN { exit !(d >= 0.3 && d < 3) }'
# one per target: a second probe of A while a 2 s one runs (A idle first: the probe before
# may still be counted as running there)
running_on_a() { in_hub curl -sS --max-time 2 "http://$A:9464/metrics" | grep -q '^netrig_tests_running{[^}]*} [1-9]\|^netrig_tests_running [1-9]'; }
idle_a() { ! running_on_a; }
wait_until 10 "A idle" idle_a
TMO=5 probe p2 "target=$A&test=stream&duration=2s" >/dev/null &
P2=$!
wait_until 10 "the first probe running on A" running_on_a
code=$(probe p3 "target=$A:5301&module=rr&duration=200ms")
check "a second probe of A while one runs: in_progress ($code: $(grep -v '^#' "$T/p3" | grep ' 1$' | tr '\n' ' '))" \
    bash -c "[[ $code == 200 ]] && grep -q '^netrig_probe_failed{reason=\"in_progress\"} 1$' '$T/p3' && grep -q '^probe_success 0$' '$T/p3'"
wait "$P2" || true
check "the 2 s probe of A succeeded" grep -q '^probe_success 1$' "$T/p2"
# --probes 1: a probe of B while one of A runs answers probe_limit
wait_until 10 "A idle after the first probes" idle_a
in_hub curl -sS --max-time 10 -H "X-Prometheus-Scrape-Timeout-Seconds: 5" -o "$T/p8" \
    "http://127.0.0.1:9466/probe?target=$A&test=rr&duration=2s" &
P8=$!
wait_until 10 "the one-probe exporter's probe running on A" running_on_a
code=$(in_hub curl -sS --max-time 10 -o "$T/p9" -w '%{http_code}' "http://127.0.0.1:9466/probe?target=$B&test=rr&duration=200ms")
check "past --probes 1: probe_limit ($code: $(grep -v '^#' "$T/p9" | grep ' 1$' | tr '\n' ' '))" \
    bash -c "[[ $code == 200 ]] && grep -q '^netrig_probe_failed{reason=\"probe_limit\"} 1$' '$T/p9' && grep -q '^probe_success 0$' '$T/p9'"
wait "$P8" || true
check "the one probe it ran succeeded" grep -q '^probe_success 1$' "$T/p8"
code=$(probe p4 "target=$A:5999&test=rr")
check "a refused port: reason refused ($code)" grep -q '^netrig_probe_failed{reason="refused"} 1$' "$T/p4"
code=$(probe p5 "target=$A&test=load&size=64")
check "test=load with size: 400 naming size ($code: $(cat "$T/p5"))" bash -c "[[ $code == 400 ]] && grep -q \"bad parameter 'size'\" '$T/p5'"
code=$(probe p6 "target=$A&test=stream&duration=5s")
check "a duration past the timeout: 400 naming duration ($code: $(cat "$T/p6"))" \
    bash -c "[[ $code == 400 ]] && grep -q \"bad parameter 'duration'\" '$T/p6'"
code=$(probe p7 "target=$A&color=red")
check "an unknown parameter: 400 naming it ($code)" bash -c "[[ $code == 400 ]] && grep -q \"unknown parameter 'color'\" '$T/p7'"

# ---- 2b. tuning drift on A
in_hub curl -sS --max-time 3 "http://$A:9464/metrics" >"$T/ma"
check "A follows one journal of two values ($(grep '^netrig_tune' "$T/ma" | tr '\n' ' '))" \
    bash -c "grep -q '^netrig_tune_values 2$' '$T/ma' && grep -q '^netrig_tune_journals 1$' '$T/ma'"
check "tcp_rmem drifted" grep -q '^netrig_tune_drifted{kind="sysctl",name="net.ipv4.tcp_rmem"} 1$' "$T/ma"
check "somaxconn holds" grep -q '^netrig_tune_drifted{kind="sysctl",name="net.core.somaxconn"} 0$' "$T/ma"
check "B has no tune metrics (no --tune-state)" bash -c "! ip netns exec '$HUB' curl -sS --max-time 3 'http://$B:9464/metrics' | grep -q '^netrig_tune'"
printf '4096\t131072\t33554432\n' >"$T/root/proc/sys/net/ipv4/tcp_rmem"
in_hub curl -sS --max-time 3 "http://$A:9464/metrics" >"$T/ma2"
check "mended: nothing drifted" bash -c "grep -q '^netrig_tune_drifted_values 0$' '$T/ma2' && grep -q 'tcp_rmem\"} 0$' '$T/ma2'"
printf '4096\t131072\t6291456\n' >"$T/root/proc/sys/net/ipv4/tcp_rmem"   # drifted again for Prometheus

# ---- 3. Prometheus
sed 's/^\(    interval: \)1m$/\11s/' "$RULES" >"$T/rules.yml"
check "the test's rules differ from the shipped ones only in the group interval" \
    bash -c "diff '$RULES' '$T/rules.yml' | grep '^[<>]' | grep -qv 'interval: 1[ms]' && exit 1 || exit 0"
relabel='    relabel_configs:
      - source_labels: [__address__]
        target_label: __param_target
      - source_labels: [__param_target]
        target_label: instance
      - target_label: __address__
        replacement: 127.0.0.1:9465'
# Scrape timeouts bound the probes' tests (what is checked); a sanitizer build sets up and runs
# a test several times slower, so there they are twice as long (and the wait for data with them)
S=1
judge_rates || S=2
cat >"$T/prometheus.yml" <<EOF
global:
  scrape_interval: $((2 * S))s
  scrape_timeout: $((1500 * S))ms
  evaluation_interval: 1s
rule_files: [$T/rules.yml]
scrape_configs:
  - job_name: netrig-probe-stream
    metrics_path: /probe
    params: {test: [stream], duration: [300ms]}
    static_configs: [{targets: ['$A:5301']}]
$relabel
  - job_name: netrig-probe-rr
    metrics_path: /probe
    params: {module: [rr]}
    static_configs: [{targets: ['$B:5301']}]
$relabel
  - job_name: netrig-probe-load
    metrics_path: /probe
    scrape_interval: $((4 * S))s
    scrape_timeout: $((3 * S))s
    params: {test: [load], parallel: [1]}
    static_configs: [{targets: ['$A:5302']}]
$relabel
  - job_name: netrig-probe-refused
    metrics_path: /probe
    params: {module: [stream]}
    static_configs: [{targets: ['$A:5999']}]
$relabel
  - job_name: netrig-exporter
    static_configs: [{targets: ['127.0.0.1:9465']}]
  - job_name: netrig-daemon
    static_configs: [{targets: ['$A:9464', '$B:9464']}]
EOF
"$PROMTOOL" check config "$T/prometheus.yml" >"$T/pcheck.out" 2>&1 || fail "promtool check config: $(cat "$T/pcheck.out")"
ip netns exec "$HUB" "$PROM" --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
    --web.listen-address=127.0.0.1:9090 --log.level=warn >"$T/prometheus.log" 2>&1 &
track_pid $!
query() { in_hub curl -sS --max-time 3 --get "http://127.0.0.1:9090/api/v1/query" --data-urlencode "query=$1"; }
has_data() { query "$1" | jq -e '.status == "success" and (.data.result | length) > 0' >/dev/null 2>&1; }
jq -r '.panels[].targets[].expr' "$DASH" >"$T/exprs"
check "the dashboard has panel queries ($(wc -l <"$T/exprs"))" test "$(wc -l <"$T/exprs")" -ge 10
all_data() {
    local e
    while IFS= read -r e; do has_data "$e" || return 1; done <"$T/exprs"
}
start=$(now_ms)
wait_until $((35 * S)) "every dashboard query to return data" all_data || true
log "dashboard queries answered after $(($(now_ms) - start)) ms"
while IFS= read -r e; do
    check "dashboard query returns data: $e ($(query "$e" | head -c 200))" has_data "$e"
done <"$T/exprs"
in_hub curl -sS --max-time 3 http://127.0.0.1:9090/api/v1/rules >"$T/rules.json"
nrules=$(grep -cE '^ *- (record|alert):' "$RULES")
check_jq "all $nrules rules loaded" "$T/rules.json" "[.data.groups[].rules[]] | length == $nrules"
check_jq "every rule evaluated healthy" "$T/rules.json" '[.data.groups[].rules[] | select(.health != "ok")] | length == 0'
query 'probe_success' >"$T/q1.json"
check_jq "Prometheus' /probe of A (stream), B (rr) and A2 (load) succeeded" "$T/q1.json" \
    '[.data.result[] | select(.metric.job != "netrig-probe-refused" and .value[1] == "1")] | length == 3'
query 'netrig_probe_failed{job="netrig-probe-refused",reason="refused"}' >"$T/q2.json"
check_jq "the refused port: reason refused, instance is the target" "$T/q2.json" \
    ".data.result[0].value[1] == \"1\" and .data.result[0].metric.instance == \"$A:5999\""
query 'max(max_over_time(probe_duration_seconds{job=~"netrig-probe.*",job!="netrig-probe-load"}[1m]))' >"$T/q3.json"
query 'max(max_over_time(probe_duration_seconds{job="netrig-probe-load"}[1m]))' >"$T/q3l.json"
check_jq "the load probe stays within its $((3 * S)) s scrape timeout" "$T/q3l.json" \
    "(.data.result[0].value[1] | tonumber) < $((3 * S)) and (.data.result[0].value[1] | tonumber) > $((2 * S))"
check_jq "/probe stays within the $((1500 * S)) ms scrape timeout" "$T/q3.json" \
    "(.data.result[0].value[1] | tonumber) < $((1500 * S)) / 1000 and (.data.result[0].value[1] | tonumber) > 0.3"
query 'ALERTS{alertname="NetrigProbeFailing"}' >"$T/q4.json"
check_jq "the failing probes are a NetrigProbeFailing alert (pending)" "$T/q4.json" \
    '[.data.result[] | .metric.target // .metric.instance] | any(. == "'"$A"':5999") and any(. == "sched-refused")'
query 'netrig_probe_success{target="sched-rr"}' >"$T/q5.json"
check_jq "the scheduled rr target succeeded" "$T/q5.json" '.data.result[0].value[1] == "1"'
query 'up{job=~"netrig.*"} == 0' >"$T/q6.json"
check_jq "every netrig endpoint is up" "$T/q6.json" '.data.result | length == 0'
finish
