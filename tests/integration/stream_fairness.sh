#!/usr/bin/env bash
# stream_fairness: 400 TCP flows on 2 worker threads per end (loopback, built-in server, 2 s)
# must share the link. Each worker owns 200 flows, all ready most of the time; a flow's turn
# moves at most the worker's quantum (32 MiB / 200 flows = 164 KiB), so one round over them
# is short and every flow gets many turns in 2 s even on a busy machine. Before the quantum a
# turn could move 16 MiB and, at 1000 flows on a loaded host, most flows never got a turn
# (Jain 0.05-0.09, hundreds of flows at 0 bytes).
# Flow i runs on worker i mod 2 at both ends. How the kernel shares the CPUs between the
# worker threads is the scheduler's business, not the engine's: on a busy machine one thread
# gets half the CPU time of the other now and then (measured: every even flow at 8.2 MB, every
# odd one at 16.4, Jain 0.93 over all flows), so the checks are per worker, where the engine's
# turns decide. Checks (tolerances are honest, not tight: the test measures sharing, not speed):
#   - every flow moved data, none below half of its worker's median flow (without the quantum
#     flows stuck at one filled send buffer, 4,161,536 bytes, against a median of 9.7 MB);
#   - Jain's index over each worker's flows >= 0.9 (0.99+ here with the quantum; before it,
#     flows that never got a turn made it fall far below);
#   - summary.jain_index matches Jain's formula over flows[].throughput_bps.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

out=$T/fair.json
rc=0
timeout -s KILL 60 "$NETRIG" stream -P 400 -T 2 --server-threads 2 -t 2 -J --no-save \
    >"$out" 2>"$T/fair.err" || rc=$?
if [[ $rc -ne 0 ]] || ! jq -e . "$out" >/dev/null 2>&1; then
    fail "stream -P 400: exit $rc: $(head -c 300 "$T/fair.err")"
    finish
fi
log "$(jq -c '{jain: .summary.jain_index, gbps: (.summary.throughput_bps / 1e7 | round / 100),
    min: ([.flows[].bytes] | min), median: ([.flows[].bytes] | sort | .[length / 2 | floor]),
    max: ([.flows[].bytes] | max)}' "$out")"
check_jq "400 flows reported, run complete" "$out" '(.flows | length) == 400 and .partial == false'
# the flows of worker W (0 or 1): id mod 2 == W
per_worker='def worker($w): [.flows | to_entries[] | select(.key % 2 == $w) | .value];
    def jain: (map(.throughput_bps) | add) as $s | ($s * $s) / (length * (map(.throughput_bps * .throughput_bps) | add));'
jains=$(jq -c "$per_worker"' [worker(0), worker(1) | jain]' "$out")
check_jq "every flow moved data, none below half of its worker's median" "$out" \
    "$per_worker"' all(worker(0), worker(1); [.[].bytes] as $b | ($b | sort | .[length / 2 | floor]) as $m
     | ($b | min) > 0 and ($b | min) >= $m / 2)'
check_jq "Jain's index over each worker's flows >= 0.9 (got $jains)" "$out" \
    "$per_worker"' all(worker(0), worker(1); jain >= 0.9)'
check_jq "jain_index = (sum x)^2 / (n sum x^2) over flows[].throughput_bps" "$out" \
    '[.flows[].throughput_bps] as $x | (($x | add) * ($x | add) / (($x | length) * ($x | map(. * .) | add))) as $j
     | ((.summary.jain_index - $j) | fabs) < 1e-9'
finish
