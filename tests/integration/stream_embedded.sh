#!/usr/bin/env bash
# stream_embedded: `netrig stream` without -c runs against its built-in loopback server:
# the text report, -J, and --json-stream (one object per line, then an "end" line).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

# --- text report
rc=0
"$NETRIG" stream -t 1 >"$T/text.out" 2>"$T/text.err" || rc=$?
check "text: exit status 0 (got $rc; stderr: $(head -c 300 "$T/text.err"))" test "$rc" -eq 0
check "text: report contains 'Throughput'" grep -q 'Throughput' "$T/text.out"
check "text: nothing on stderr" test ! -s "$T/text.err"

# --- -J
rc=0
"$NETRIG" stream -t 1 -J >"$T/doc.json" 2>"$T/doc.err" || rc=$?
check "-J: exit status 0 (got $rc; stderr: $(head -c 300 "$T/doc.err"))" test "$rc" -eq 0
check_jq "-J: stdout is one JSON document" "$T/doc.json" 'length == 1 and (.[0] | type == "object")' -s
check_jq "-J: test is stream, not partial" "$T/doc.json" '.test == "stream" and .partial == false'
check_jq "-J: server is the built-in loopback one" "$T/doc.json" '.server | startswith("127.0.0.1:")'
check_jq "-J: one flow, throughput > 0" "$T/doc.json" \
    '(.flows | length) == 1 and .summary.throughput_bps > 0 and .flows[0].bytes > 0'
check_jq "-J: intervals non-empty" "$T/doc.json" '(.intervals | length) >= 1'

# --- --json-stream
rc=0
"$NETRIG" stream --json-stream -t 2 -i 0.5 >"$T/stream.out" 2>"$T/stream.err" || rc=$?
check "--json-stream: exit status 0 (got $rc; stderr: $(head -c 300 "$T/stream.err"))" test "$rc" -eq 0
nlines=$(wc -l <"$T/stream.out")
check "--json-stream: at least 4 lines (>= 3 intervals + end), got $nlines" test "$nlines" -ge 4
bad=0
lineno=0
while IFS= read -r line; do
    lineno=$((lineno + 1))
    if ! jq -e 'type == "object"' <<<"$line" >/dev/null 2>&1; then
        fail "--json-stream: line $lineno is not a JSON object: ${line:0:120}"
        bad=1
    fi
done <"$T/stream.out"
if [[ $bad -eq 0 && $nlines -ge 1 ]]; then
    head -n $((nlines - 1)) "$T/stream.out" >"$T/intervals.jsonl"
    tail -n 1 "$T/stream.out" >"$T/end.json"
    niv=$(jq -s 'length' "$T/intervals.jsonl")
    check "--json-stream: >= 3 interval lines (got $niv)" test "$niv" -ge 3
    check_jq "--json-stream: every line but the last has event \"interval\"" "$T/intervals.jsonl" \
        'all(.[]; .event == "interval" and .test == "stream")' -s
    check_jq "--json-stream: intervals have bytes and throughput_bps > 0" "$T/intervals.jsonl" \
        'all(.[]; (.bytes | type == "number") and .throughput_bps > 0)' -s
    # the run ends at 2 s: a loop that wakes late samples its last interval past that, and the
    # time its sampling takes then (25-30 ms under valgrind, with a whole 1 MiB write or none)
    # is no interval of the test
    check_jq "--json-stream: no interval starts at or after the end of the run (2 s)" \
        "$T/intervals.jsonl" 'all(.[]; .start_s < 2)' -s
    check_jq "--json-stream: interval times increase" "$T/intervals.jsonl" \
        '[.[] | .start_s] as $s | $s == ($s | sort) and all(.[]; .end_s > .start_s)' -s
    check_jq "--json-stream: last line has event \"end\" and is the full document" "$T/end.json" \
        '.event == "end" and .test == "stream" and .summary.throughput_bps > 0 and (.flows | length) == 1'
fi

finish
