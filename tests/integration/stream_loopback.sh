#!/usr/bin/env bash
# stream_loopback: `netrig stream -J` against a `netrig serve` daemon on loopback, over a
# matrix of directions, flow counts and thread counts, checking the JSON document's shape
# and its figures. Every check runs; failures are listed and make the test fail at the end.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

start_server
log "server pid $SRV_PID on port $SRV_PORT"

# check_doc FILE P DIR: the common checks of one -J document.
#   P: flows per direction (-P); DIR: forward, reverse or bidir.
check_doc() {
    local f=$1 p=$2 dir=$3 what=$4 n=$2
    [[ $dir == bidir ]] && n=$((2 * p))

    check_jq "$what: netrig_version is a non-empty string" "$f" '.netrig_version | type == "string" and length > 0'
    check_jq "$what: test is \"stream\"" "$f" '.test == "stream"'
    check_jq "$what: params is an object naming $p flow(s), direction $dir" "$f" \
        '.params | type == "object" and .flows == $p and .direction == $dir' \
        --argjson p "$p" --arg dir "$dir"
    check_jq "$what: partial is false" "$f" '.partial == false'
    check_jq "$what: no error member" "$f" 'has("error") | not'
    check_jq "$what: intervals is a non-empty array" "$f" '.intervals | type == "array" and length > 0'
    check_jq "$what: flows is an array of $n" "$f" '.flows | type == "array" and length == $n' --argjson n "$n"
    check_jq "$what: flow ids are 0..$((n - 1)) in order" "$f" '[.flows[].id] == [range(0; $n)]' --argjson n "$n"
    check_jq "$what: every flow has id, direction, bytes, throughput_bps, retransmits, rtt_us" "$f" \
        'all(.flows[]; (.id | type == "number") and (.direction | type == "string")
                       and (.bytes | type == "number") and (.throughput_bps | type == "number")
                       and (.retransmits | type == "number") and (.rtt_us | type == "number"))'
    check_jq "$what: every flow moved data (bytes > 0, throughput_bps > 0)" "$f" \
        'all(.flows[]; .bytes > 0 and .throughput_bps > 0)'
    check_jq "$what: retransmits known (>= 0) for every flow" "$f" 'all(.flows[]; .retransmits >= 0)'
    case $dir in
    forward)
        check_jq "$what: all flows client_to_server" "$f" 'all(.flows[]; .direction == "client_to_server")' ;;
    reverse)
        check_jq "$what: all flows server_to_client" "$f" 'all(.flows[]; .direction == "server_to_client")' ;;
    bidir)
        check_jq "$what: $p flows client_to_server and $p server_to_client" "$f" \
            '([.flows[] | select(.direction == "client_to_server")] | length) == $p and
             ([.flows[] | select(.direction == "server_to_client")] | length) == $p' --argjson p "$p"
        check_jq "$what: flows 0..$((p - 1)) go up, $p..$((n - 1)) go down" "$f" \
            'all(.flows[]; .direction == (if .id < $p then "client_to_server" else "server_to_client" end))' \
            --argjson p "$p"
        check_jq "$what: both summary directions carry traffic" "$f" \
            '.summary.client_to_server_bps > 0 and .summary.server_to_client_bps > 0' ;;
    esac
    check_jq "$what: summary.throughput_bps > 0" "$f" '.summary.throughput_bps > 0'
    check_jq "$what: summary.bytes is the sum of flows[].bytes" "$f" '.summary.bytes == ([.flows[].bytes] | add)'
    check_jq "$what: summary.jain_index in [0, 1]" "$f" \
        '.summary.jain_index | type == "number" and . >= 0 and . <= 1.000001'
    for side in local remote; do
        check_jq "$what: summary.cpu.$side has user_pct, system_pct, softirq_pct" "$f" \
            '.summary.cpu[$s] | (.user_pct | type == "number") and (.system_pct | type == "number")
                               and (.softirq_pct | type == "number")' --arg s "$side"
    done
    # The engine half-closes each sending socket at the end and the receiver drains it to EOF,
    # so with no warm-up (-O 0) what the receiver counted is exactly what the sender wrote.
    if ! jq -e 'all(.flows[]; .bytes == .sender_bytes)' "$f" >/dev/null; then
        fail "$what: receiver bytes != sender bytes: $(jq -c '[.flows[] | select(.bytes != .sender_bytes)
              | {id, direction, received: .bytes, sent: .sender_bytes, diff: (.bytes - .sender_bytes)}]
              | .[:4]' "$f")"
    fi
}

# run_case WHAT DIR P T [extra stream options]
run_case() {
    local what=$1 dir=$2 p=$3 thr=$4 out rc=0 dopt=()
    shift 4
    out=$T/$(echo "$what" | tr -c 'A-Za-z0-9\n' '_').json
    LAST_OUT=$out
    case $dir in
    reverse) dopt=(-R) ;;
    bidir) dopt=(--bidir) ;;
    esac
    "$NETRIG" stream -c "${HOST:-127.0.0.1}" -p "$SRV_PORT" -t 1 -P "$p" -T "$thr" "${dopt[@]}" -J "$@" \
        >"$out" 2>"$T/err" || rc=$?
    if [[ $rc -ne 0 ]]; then
        fail "$what: exit status $rc (stderr: $(head -c 300 "$T/err"))"
        return 0
    fi
    if ! jq -e . "$out" >/dev/null 2>&1; then
        fail "$what: stdout is not one valid JSON document"
        return 0
    fi
    log "$what: $(jq -r '"\(.summary.throughput_bps / 1e9 * 100 | round / 100) Gbit/s, jain \(.summary.jain_index * 1000 | round / 1000)"' "$out")"
    check_doc "$out" "$p" "$dir" "$what"
}

run_case "forward -P 1 -T 1" forward 1 1
run_case "forward -P 4 -T 2" forward 4 2
run_case "forward -P 16 -T 1" forward 16 1
run_case "reverse -P 1 -T 2" reverse 1 2
run_case "reverse -P 4 -T 1" reverse 4 1
run_case "reverse -P 16 -T 2" reverse 16 2
run_case "bidir -P 1 -T 1" bidir 1 1
run_case "bidir -P 4 -T 2" bidir 4 2
run_case "bidir -P 16 -T 2" bidir 16 2

# IPv6 once, against ::1 (the daemon listens on all addresses, IPv4 and IPv6)
if [[ -r /proc/net/if_inet6 ]] && grep -q '^0\{31\}1 ' /proc/net/if_inet6; then
    HOST=::1 run_case "ipv6 -6 ::1 forward -P 2" forward 2 1 -6
    check_jq "ipv6: server is [::1]:port" "$LAST_OUT" \
        '.server | startswith("[::1]:")'
else
    log "::1 is not configured: IPv6 case skipped"
fi

check "daemon still alive after the matrix" alive "$SRV_PID"
finish
