#!/usr/bin/env bash
# stream_rx_copy: --zerocopy-rx and --skip-rx-copy on whichever end receives.
# Against a `netrig serve` daemon on loopback, forward (the server receives), reverse (the
# client receives) and bidir (both), each checks:
#   - every flow's received bytes equal its sent bytes (the sender half-closes, the receiver
#     reads to EOF: nothing may be lost or counted twice by the new receive paths);
#   - each side's recv_method is what was asked ("" on a side that receives nothing);
#   - --skip-rx-copy: receiver_copy_counted is false, the text summary says so, the history
#     line and `show` mark the run;
#   - --zerocopy-rx: per-flow rx_zerocopy_bytes <= bytes, rx_zerocopy_fraction =
#     rx_zerocopy_bytes / bytes, and rx_note names the share mapped (loopback maps ~0 %: the
#     kernel refuses the sender's pages; the test asserts the arithmetic, not the share).
# Refusals: UDP, rr, crr and both flags at once exit 2 with one line naming the option.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

start_server

run() { # NAME [stream options]: JSON into $T/NAME.json
    local name=$1 rc=0
    shift
    timeout -s KILL 30 "$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -t 1 -J "$@" \
        >"$T/$name.json" 2>"$T/$name.err" || rc=$?
    if [[ $rc -ne 0 ]] || ! jq -e . "$T/$name.json" >/dev/null 2>&1; then
        fail "$name: exit $rc: $(head -c 300 "$T/$name.err")"
        return 1
    fi
    log "$name: $(jq -c '.summary | {tp: (.throughput_bps / 1e6 | round), client_recv_method,
        server_recv_method, receiver_copy_counted, rx_zerocopy_fraction}' "$T/$name.json")"
}

bytes_match() { # NAME
    check_jq "$1: every flow received what was sent ($(jq -c '[.flows[] | [.bytes, .sender_bytes]]' "$T/$1.json"))" \
        "$T/$1.json" 'all(.flows[]; .bytes == .sender_bytes and .bytes > 0) and .partial == false'
}

methods() { # NAME CLIENT_METHOD SERVER_METHOD
    check_jq "$1: recv methods client '$2', server '$3'" "$T/$1.json" \
        '.summary.client_recv_method == $c and .summary.server_recv_method == $s' \
        --arg c "$2" --arg s "$3"
}

# ---- --skip-rx-copy ------------------------------------------------------------------------
for spec in "skip_fwd::skip_copy" "skip_rev:skip_copy:" "skip_bidir:skip_copy:skip_copy"; do
    IFS=: read -r name cm sm <<<"$spec"
    case $name in
    skip_fwd) args=() ;;
    skip_rev) args=(-R) ;;
    skip_bidir) args=(--bidir -P 2 -T 2) ;;
    esac
    run "$name" --skip-rx-copy "${args[@]}" || continue
    bytes_match "$name"
    methods "$name" "$cm" "$sm"
    check_jq "$name: receiver_copy_counted is false, rx_note says why" "$T/$name.json" \
        '.summary.receiver_copy_counted == false and (.summary.rx_note | test("MSG_TRUNC"))
         and .params.skip_rx_copy == true'
done

# ---- --zerocopy-rx -------------------------------------------------------------------------
for spec in "zc_fwd::zerocopy" "zc_rev:zerocopy:" "zc_bidir:zerocopy:zerocopy"; do
    IFS=: read -r name cm sm <<<"$spec"
    case $name in
    zc_fwd) args=() ;;
    zc_rev) args=(-R -Z) ;;
    zc_bidir) args=(--bidir -P 2 -T 2) ;;
    esac
    run "$name" --zerocopy-rx "${args[@]}" || continue
    bytes_match "$name"
    methods "$name" "$cm" "$sm"
    check_jq "$name: per flow 0 <= rx_zerocopy_bytes <= bytes, fraction = mapped / bytes" \
        "$T/$name.json" 'all(.flows[]; .rx_zerocopy_bytes >= 0 and .rx_zerocopy_bytes <= .bytes
            and ((.rx_zerocopy_fraction - .rx_zerocopy_bytes / .bytes) | fabs) < 1e-9)'
    check_jq "$name: summary fraction = sum mapped / sum received; copy counted; note" \
        "$T/$name.json" '.summary as $s | ($s.rx_zerocopy_bytes == ([.flows[].rx_zerocopy_bytes] | add))
            and (($s.rx_zerocopy_fraction - $s.rx_zerocopy_bytes / $s.bytes) | fabs) < 1e-9
            and $s.receiver_copy_counted == true and ($s.rx_note | test("--zerocopy-rx"))'
done

# a plain run: copy on the receiving side, counted, no note
if run plain; then
    methods plain "" copy
    check_jq "plain: receiver_copy_counted, no rx_note, no zero-copy fields" "$T/plain.json" \
        '.summary.receiver_copy_counted == true and .summary.rx_note == ""
         and (.summary | has("rx_zerocopy_fraction") | not)'
fi

# ---- text, history, show -------------------------------------------------------------------
timeout -s KILL 30 "$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -t 0.5 --skip-rx-copy \
    >"$T/text.out" 2>&1 || fail "text run: $(head -c 300 "$T/text.out")"
check "text summary marks the receiver's copy as not counted" \
    grep -q "^Cost .*receiver's copy not counted" "$T/text.out"
check "text summary has a Receive line" grep -q "^Receive .*MSG_TRUNC" "$T/text.out"
timeout -s KILL 30 "$NETRIG" stream -c 127.0.0.1 -p "$SRV_PORT" -t 0.5 --zerocopy-rx -R \
    >"$T/text_zc.out" 2>&1 || fail "text zc run: $(head -c 300 "$T/text_zc.out")"
check "zero-copy text: the flow table has a mapped column" \
    grep -Eq '^flow .* mapped$' "$T/text_zc.out"
check "zero-copy text: the flow's share mapped, as a percentage" \
    grep -Eq '^ +0 down .* [0-9]+\.[0-9]{2}%$' "$T/text_zc.out"
check "zero-copy text: a Receive line with the share mapped" \
    grep -Eq '^Receive +--zerocopy-rx: .*[0-9.]+% of the bytes received' "$T/text_zc.out"
"$NETRIG" history >"$T/hist.out" 2>&1 || fail "history: $(cat "$T/hist.out")"
check "history marks skip-copy runs (rx-nocopy) and no others" \
    test "$(grep -c 'rx-nocopy' "$T/hist.out")" -eq 4
last=$(awk '$1 ~ /^[0-9]+$/ && /rx-nocopy/ { id = $1 } END { print id }' "$T/hist.out")
"$NETRIG" show "$last" >"$T/show.out" 2>&1 || fail "show $last: $(cat "$T/show.out")"
check "show marks the skip-copy run" grep -q "NOTE: --skip-rx-copy" "$T/show.out"
first=$(awk '$1 ~ /^[0-9]+$/ && !/rx-nocopy/ { print $1; exit }' "$T/hist.out")
"$NETRIG" show "$first" >"$T/show1.out" 2>&1 || fail "show $first: $(cat "$T/show1.out")"
check "show does not mark a copy run" bash -c '! grep -q "NOTE: --skip-rx-copy" "$1"' _ "$T/show1.out"
"$NETRIG" history --json >"$T/hist.json" 2>&1 || fail "history --json"
check_jq "history --json: receiver_copy_counted false on exactly the 4 skip-copy runs" \
    "$T/hist.json" '[.[] | select(.receiver_copy_counted == false)] | length == 4'

# ---- refusals ------------------------------------------------------------------------------
refuse() { # DESC PATTERN ARGS...
    local desc=$1 pat=$2 rc=0
    shift 2
    "$NETRIG" "$@" -c 127.0.0.1 -p "$SRV_PORT" -t 1 >"$T/ref.out" 2>"$T/ref.err" || rc=$?
    check "$desc: exit 2 (got $rc)" test "$rc" -eq 2
    check "$desc: one line naming $pat ($(cat "$T/ref.err"))" \
        bash -c '[[ $(wc -l <"$1") -eq 1 ]] && grep -q -- "$2" "$1"' _ "$T/ref.err" "$pat"
}
refuse "UDP --skip-rx-copy" --skip-rx-copy stream -u -b 1M --skip-rx-copy
refuse "UDP --zerocopy-rx" --zerocopy-rx stream -u -b 1M --zerocopy-rx
refuse "rr --zerocopy-rx" --zerocopy-rx rr --zerocopy-rx
refuse "crr --skip-rx-copy" --skip-rx-copy crr --skip-rx-copy
refuse "both at once" "exclude each other" stream --zerocopy-rx --skip-rx-copy
check "daemon alive" alive "$SRV_PID"
finish
