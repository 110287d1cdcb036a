#!/usr/bin/env bash
# rr_crr_udp: request/response, connection rate and UDP streams against a `netrig serve`
# daemon on 127.0.0.1.
#   rr TCP and UDP: transactions, rate, latency percentiles in order, the server's count
#     agreeing with the client's; -P 4 -T 2 --depth 4; open loop --rate 2000 (±5 %);
#     -r 64,1K (bytes moved per transaction); --histogram FILE parsed back.
#   rr and crr --busy-poll with both ends on one CPU: thousands of transactions, not a
#     scheduler slice each.
#   crr; crr -r 4M,200K (a request over several sends, a response over many segments: every
#     byte arrives) alone and -P 2 -T 1; crr --connect-only -P 4 -T 2.
#   stream -u at -b 100M (sent and received rates within ±5 %, loss < 1 %), -R -b 50M,
#     --pps 10000; when the kernel's RcvbufErrors show the receiver was kept off a busy CPU,
#     the received rate is reported not measurable and the loss must be those drops.
#   bad input: one line on stderr naming the value, exit 2.
#   a server that stops answering mid-run (SIGSTOP): the client ends within 15 s, reports
#     partial results or fails, counts the timed-out transactions, never hangs (TCP and UDP).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
# runs are saved to a history database under $XDG_DATA_HOME: keep ours out of the user's
export XDG_DATA_HOME=$T/data

ADDR=127.0.0.1
TOL=0.05

start_server
log "daemon on $ADDR:$SRV_PORT"

# run NAME CMD [args]: `netrig CMD -c ADDR -p PORT -J args` into $T/NAME.json; checks exit 0
# and a complete JSON document. Returns 1 (and counts a failure) when there is nothing to check.
run() {
    local name=$1 rc=0 t0
    shift
    local cmd=$1
    shift
    t0=$(now_ms)
    timeout -s KILL 60 "$NETRIG" "$cmd" -c "$ADDR" -p "$SRV_PORT" -J "$@" >"$T/$name.json" \
        2>"$T/$name.err" || rc=$?
    log "$name: netrig $cmd $* -> exit $rc in $(($(now_ms) - t0)) ms"
    if [[ $rc -ne 0 ]]; then
        fail "$name: exit status $rc, want 0 ($(head -c 300 "$T/$name.err"))"
        jq -e . "$T/$name.json" >/dev/null 2>&1 || return 1
    fi
    if ! jq -e . "$T/$name.json" >/dev/null 2>&1; then
        fail "$name: stdout is not a JSON document: $(head -c 300 "$T/$name.json")"
        return 1
    fi
    check_jq "$name: complete (partial false, no error)" "$T/$name.json" \
        '.partial == false and (.error // null) == null'
    return 0
}

# transactional NAME TEST FLOWS MIN_TXNS: checks shared by rr and crr runs
transactional() {
    local name=$1 test=$2 flows=$3 min=$4 f=$T/$1.json
    log "$name: $(jq -r '.summary | "\(.transactions) transactions, \(.transactions_per_s | round)/s, server \(.server_transactions), timeouts \(.timeouts); latency us min \(.latency_us.min) p50 \(.latency_us.p50) p99 \(.latency_us.p99) max \(.latency_us.max)"' "$f")"
    check_jq "$name: test is $test with $flows flow(s)" "$f" \
        '.test == $t and (.flows | length) == $n and .params.flows == $n' --arg t "$test" --argjson n "$flows"
    check_jq "$name: summary.transactions > $min (got $(jq .summary.transactions "$f"))" "$f" \
        '.summary.transactions > $m' --argjson m "$min"
    check_jq "$name: summary.transactions_per_s > 0" "$f" '.summary.transactions_per_s > 0'
    check_jq "$name: transactions_per_s = transactions / seconds (within 1 %)" "$f" \
        '.summary | (.transactions / .seconds - .transactions_per_s | fabs) <= 0.01 * .transactions_per_s'
    check_jq "$name: the flows' transactions add up to summary.transactions" "$f" \
        '([.flows[].transactions] | add) == .summary.transactions'
    check_jq "$name: every flow completed transactions" "$f" 'all(.flows[]; .transactions > 0)'
    check_jq "$name: latency_us min <= p50 <= p90 <= p99 <= p999 <= max ($(jq -c .summary.latency_us "$f"))" "$f" \
        '.summary.latency_us | .min > 0 and .min <= .p50 and .p50 <= .p90 and .p90 <= .p99
         and .p99 <= .p999 and .p999 <= .max and .p999 <= .p9999 and .p9999 <= .max'
    check_jq "$name: latency mean between min and max" "$f" \
        '.summary.latency_us | .mean >= .min and .mean <= .max'
    check_jq "$name: server_transactions within 1 % of transactions (client $(jq .summary.transactions "$f"), server $(jq .summary.server_transactions "$f"))" \
        "$f" '.summary | (.server_transactions - .transactions | fabs) <= 0.01 * .transactions'
}

# ---- rr, TCP, one flow; --histogram writes the full distribution
if run rr_tcp rr -t 2 --histogram "$T/rr_tcp.hist"; then
    transactional rr_tcp rr 1 1000
    check_jq "rr_tcp: TCP" "$T/rr_tcp.json" '.params.udp == false'
    check_jq "rr_tcp: no timeouts on loopback" "$T/rr_tcp.json" '.summary.timeouts == 0'
    # the histogram: "# ..." header lines, then "lo_us hi_us count cumulative" per bucket
    if [[ -s $T/rr_tcp.hist ]]; then
        hist=$(awk '
            /^#/ { if (match($0, /: [0-9]+ samples/)) hdr = substr($0, RSTART + 2, RLENGTH - 10) + 0; next }
            NF != 4 || $1 !~ /^[0-9.]+$/ || $2 !~ /^[0-9.]+$/ || $3 !~ /^[0-9]+$/ || $4 !~ /^[0-9.]+$/ { bad++; next }
            { if ($1 + 0 >= $2 + 0 || $1 + 0 < prev_hi - 1e-9 || $4 + 0 < prev_cum) order++
              prev_hi = $2 + 0; prev_cum = $4 + 0; sum += $3; n++; last = $4 }
            END { printf "%d %d %d %d %d %s\n", n, sum, hdr, bad, order, last }' "$T/rr_tcp.hist")
        read -r h_lines h_sum h_hdr h_bad h_order h_last <<<"$hist"
        log "rr_tcp: histogram: $h_lines buckets, $h_sum samples (header says $h_hdr), last cumulative $h_last"
        check "rr_tcp: histogram lines all parse ($h_bad bad)" test "$h_bad" -eq 0
        check "rr_tcp: histogram buckets ascend, cumulative never falls ($h_order out of order)" test "$h_order" -eq 0
        check "rr_tcp: histogram has buckets" test "$h_lines" -gt 0
        check "rr_tcp: histogram counts sum to its header ($h_sum vs $h_hdr)" test "$h_sum" -eq "$h_hdr"
        check "rr_tcp: histogram cumulative ends at 1.000000 (got $h_last)" test "$h_last" = 1.000000
        check_jq "rr_tcp: histogram counts ($h_sum) within 1 % of summary.transactions" "$T/rr_tcp.json" \
            '(.summary.transactions - $s | fabs) <= 0.01 * .summary.transactions' --argjson s "$h_sum"
        check_jq "rr_tcp: histogram range covers min and max latency" "$T/rr_tcp.json" \
            '.summary.latency_us.min >= $lo - 0.001 and .summary.latency_us.max <= $hi + 0.001' \
            --argjson lo "$(awk '!/^#/ { print $1; exit }' "$T/rr_tcp.hist")" \
            --argjson hi "$(awk '!/^#/ { hi = $2 } END { print hi }' "$T/rr_tcp.hist")"
    else
        fail "rr_tcp: --histogram $T/rr_tcp.hist was not written (or is empty)"
    fi
fi

# ---- rr, UDP
if run rr_udp rr -u -t 2; then
    transactional rr_udp rr 1 1000
    check_jq "rr_udp: UDP" "$T/rr_udp.json" '.params.udp == true'
    check_jq "rr_udp: timeouts (lost datagrams) under 0.1 % on loopback" "$T/rr_udp.json" \
        '.summary.timeouts <= 0.001 * .summary.transactions'
fi

# ---- rr, 4 flows on 2 threads, 4 transactions in flight each
if run rr_par rr -P 4 -T 2 --depth 4 -t 2; then
    transactional rr_par rr 4 1000
    check_jq "rr_par: params depth 4, 2 threads" "$T/rr_par.json" \
        '.params.depth == 4 and .params.threads == 2 and .placement.client_threads == 2'
    check_jq "rr_par: no timeouts" "$T/rr_par.json" '.summary.timeouts == 0'
fi

# ---- rr, open loop at 2000 transactions/s
if run rr_rate rr --rate 2000 -t 2; then
    transactional rr_rate rr 1 1000
    check_jq "rr_rate: transactions_per_s within 5 % of 2000 (got $(jq .summary.transactions_per_s "$T/rr_rate.json"))" \
        "$T/rr_rate.json" '.summary.transactions_per_s >= 2000 * (1 - $t) and .summary.transactions_per_s <= 2000 * (1 + $t)' \
        --argjson t "$TOL"
    check_jq "rr_rate: params.rate_tps 2000" "$T/rr_rate.json" '.params.rate_tps == 2000'
fi

# ---- rr, 64-byte requests, 1 KiB responses
if run rr_size rr -r 64,1K -t 2; then
    transactional rr_size rr 1 1000
    f=$T/rr_size.json
    log "rr_size: bytes: flow $(jq -c '.flows[0] | {bytes, sender_bytes}' "$f"), summary $(jq -c '.summary | {bytes, sender_bytes, throughput_bps}' "$f")"
    check_jq "rr_size: params req_size 64, resp_size 1024" "$f" '.params.req_size == 64 and .params.resp_size == 1024'
    # requests: 64 bytes each, as the server read them (a partial request at the end at most);
    # responses: 1024 bytes each, as the client read them. Some byte count in the document
    # must show each.
    check_jq "rr_size: a byte count shows the requests: 64 x server_transactions ($(jq '.summary.server_transactions * 64' "$f"))" "$f" \
        '.summary.server_transactions as $n
         | [.flows[0].bytes, .flows[0].sender_bytes, .summary.bytes, .summary.sender_bytes]
         | any(. >= 64 * $n and . < 64 * ($n + 1))'
    check_jq "rr_size: a byte count shows the responses: 1024 x transactions ($(jq '.summary.transactions * 1024' "$f"))" "$f" \
        '.summary.transactions as $n
         | [.flows[0].bytes, .flows[0].sender_bytes, .summary.bytes, .summary.sender_bytes]
         | any(. >= 1024 * $n and . < 1024 * ($n + 1))'
    # docs/json.md: summary.bytes is the sum of the flows' bytes, throughput_bps the sum of
    # their throughput_bps
    check_jq "rr_size: summary.bytes ($(jq .summary.bytes "$f")) = sum of flows[].bytes ($(jq '[.flows[].bytes] | add' "$f")) (docs/json.md)" \
        "$f" '.summary.bytes == ([.flows[].bytes] | add)'
    check_jq "rr_size: summary.throughput_bps ($(jq .summary.throughput_bps "$f")) = sum of flows[].throughput_bps ($(jq '[.flows[].throughput_bps] | add' "$f")) (docs/json.md)" \
        "$f" '(.summary.throughput_bps - ([.flows[].throughput_bps] | add) | fabs) <= 0.01 * ([.flows[].throughput_bps] | add)'
fi

# ---- crr: connect, request, response, close
if run crr crr -t 2; then
    transactional crr crr 1 500
    check_jq "crr: no timeouts" "$T/crr.json" '.summary.timeouts == 0'
fi
# Requests larger than a socket takes in one send (the rest goes when it is writable again)
# and responses over many segments (the server corks them: the last part leaves with its
# FIN): every byte of every answered connection arrives, alone on a worker (poll) and two
# flows on one worker (epoll).
for v in "1 1" "2 1"; do
    read -r np nt <<<"$v"
    if run "crr_big$np" crr -r 4M,200K -P "$np" -T "$nt" -t 2; then
        transactional "crr_big$np" crr "$np" 20
        check_jq "crr_big$np: no timeouts" "$T/crr_big$np.json" '.summary.timeouts == 0'
        check_jq "crr_big$np: bytes = transactions x 204800 (got $(jq .summary.bytes "$T/crr_big$np.json"))" \
            "$T/crr_big$np.json" '.summary.bytes == .summary.transactions * 204800'
    fi
done
if run crr_co crr --connect-only -P 4 -T 2 -t 2; then
    transactional crr_co crr 4 500
    check_jq "crr_co: params.connect_only" "$T/crr_co.json" '.params.connect_only == true'
fi

# ---- --busy-poll with both ends on one CPU (a one-CPU container): the spinning waits yield,
# so the other end runs at once; before they did, each transaction took a scheduler slice
# (about 130 a second, 8 ms each). Built-in loopback server, both ends in this process.
cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[-,].*//')
for test in rr crr; do
    f=$T/spin1_$test.json rc=0
    timeout -s KILL 60 taskset -c "$cpu" "$NETRIG" "$test" --busy-poll -t 2 -J --no-save >"$f" \
        2>"$T/spin1_$test.err" || rc=$?
    if [[ $rc -ne 0 ]] || ! jq -e . "$f" >/dev/null 2>&1; then
        fail "spin1_$test: netrig $test --busy-poll on CPU $cpu: exit $rc ($(head -c 300 "$T/spin1_$test.err"))"
        continue
    fi
    log "spin1_$test: on CPU $cpu: $(jq -r '.summary | "\(.transactions) transactions, p50 \(.latency_us.p50) us"' "$f")"
    check_jq "spin1_$test: --busy-poll on one CPU: more than 5000 transactions in 2 s (got $(jq .summary.transactions "$f"))" \
        "$f" '.summary.transactions > 5000 and .params.busy_poll == true'
done

# ---- UDP streams
# udp_checks NAME DIRECTION EXPECT_BPS EXPECT_PPS KDROPS: the sent rate within 5 % of the
# target and the counts consistent with each other, always; the received rate (payload bits/s,
# the datagrams' bytes as result.c counts them, and received_pps x datagram size x 8) within
# 5 % and loss under 1 % when the kernel dropped no more than 0.5 % of the datagrams at full
# receive buffers during the run (KDROPS, RcvbufErrors). This VM's 2 CPUs are shared: a
# receiver kept off the CPU for tens of ms overflows its socket buffer, which the kernel counts
# there; then what arrived is the host's figure, not netrig's, and the test says so and checks
# instead that the kernel's drops account for the loss (within 1 % of what was sent).
udp_checks() {
    local name=$1 dir=$2 bps=$3 pps=$4 kdrops=$5 f=$T/$1.json sent lost
    log "$name: $(jq -r '.summary | "\(.throughput_bps / 1e4 | round / 100) Mbit/s received; sent \(.udp.datagrams_sent), received \(.udp.datagrams_received), lost \(.udp.datagrams_lost) (\(.udp.loss_pct) %), \(.udp.received_pps | round) pps, jitter \(.udp.jitter_us) us"' "$f")"
    check_jq "$name: one flow $dir" "$f" '(.flows | length) == 1 and .flows[0].direction == $d' --arg d "$dir"
    check_jq "$name: udp.sent_pps within 5 % of $pps (got $(jq .summary.udp.sent_pps "$f"))" "$f" \
        '.summary.udp.sent_pps >= $e * (1 - $t) and .summary.udp.sent_pps <= $e * (1 + $t)' \
        --argjson e "$pps" --argjson t "$TOL"
    check_jq "$name: datagrams_lost = sent - received" "$f" \
        '.summary.udp | .datagrams_lost == ([.datagrams_sent - .datagrams_received, 0] | max)'
    check_jq "$name: loss_pct = 100 x lost / sent" "$f" \
        '.summary.udp | (.loss_pct - 100 * .datagrams_lost / .datagrams_sent | fabs) < 1e-9'
    check_jq "$name: received bytes = datagrams received x datagram size" "$f" \
        '.summary.bytes == .summary.udp.datagrams_received * .params.write_size'
    check_jq "$name: one clock on loopback; one-way delay min <= mean <= max, jitter >= 0" "$f" \
        '.summary.udp | .shared_clock == true and .one_way_delay_us.min <= .one_way_delay_us.mean
         and .one_way_delay_us.mean <= .one_way_delay_us.max and .jitter_us >= 0'
    sent=$(jq '.summary.udp.datagrams_sent // 0' "$f")
    lost=$(jq '.summary.udp.datagrams_lost // 0' "$f")
    if [[ -n $kdrops ]] && ((kdrops * 200 > sent)); then
        log "$name: the received rate was not measurable: the kernel dropped $kdrops of $sent datagrams at full receive buffers (RcvbufErrors; load $(cut -d' ' -f1-3 /proc/loadavg)), a receiver kept off a busy CPU"
        check "$name: the loss ($lost) is the kernel's receive-buffer drops ($kdrops), within 1 % of $sent sent" \
            test $((100 * (lost - (kdrops < lost ? kdrops : lost)))) -lt "$sent"
        return 0
    fi
    check_jq "$name: summary.throughput_bps within 5 % of $bps (got $(jq .summary.throughput_bps "$f"))" "$f" \
        '.summary.throughput_bps >= $e * (1 - $t) and .summary.throughput_bps <= $e * (1 + $t)' \
        --argjson e "$bps" --argjson t "$TOL"
    check_jq "$name: udp.received_pps x $(jq .params.write_size "$f") bytes x 8 within 5 % of $bps" "$f" \
        '(.summary.udp.received_pps * .params.write_size * 8) as $r | $r >= $e * (1 - $t) and $r <= $e * (1 + $t)' \
        --argjson e "$bps" --argjson t "$TOL"
    check_jq "$name: udp.received_pps within 5 % of $pps (got $(jq .summary.udp.received_pps "$f"))" "$f" \
        '.summary.udp.received_pps >= $e * (1 - $t) and .summary.udp.received_pps <= $e * (1 + $t)' \
        --argjson e "$pps" --argjson t "$TOL"
    check_jq "$name: udp.loss_pct < 1 (got $(jq .summary.udp.loss_pct "$f"))" "$f" '.summary.udp.loss_pct < 1'
}

# The kernel's count of datagrams dropped because a UDP receive buffer was full (all sockets).
rcvbuf_errors() {
    awk '$1 == "Udp:" && !h { for (i = 2; i <= NF; i++) if ($i == "RcvbufErrors") c = i; h = 1; next }
         $1 == "Udp:" && h && c { print $c; exit }' /proc/net/snmp 2>/dev/null || true
}

# udp_run NAME DIRECTION EXPECT_BPS EXPECT_PPS stream-args...: runs once, then udp_checks with
# the kernel's receive-buffer drops during the run
udp_run() {
    local name=$1 dir=$2 bps=$3 pps=$4 rb0 rb1 kdrops=
    shift 4
    rb0=$(rcvbuf_errors)
    run "$name" "$@" || return 0
    rb1=$(rcvbuf_errors)
    if [[ -n $rb0 && -n $rb1 ]]; then
        kdrops=$((rb1 - rb0))
        log "$name: kernel UDP receive-buffer drops during the run (RcvbufErrors): $kdrops; netrig counted $(jq '.summary.udp.datagrams_lost // 0' "$T/$name.json") lost"
    fi
    udp_checks "$name" "$dir" "$bps" "$pps" "$kdrops"
}

udp_run udp_100m client_to_server 100000000 "$(awk 'BEGIN { print 100e6 / (1400 * 8) }')" \
    stream -u -b 100M -t 3
udp_run udp_rev server_to_client 50000000 "$(awk 'BEGIN { print 50e6 / (1400 * 8) }')" \
    stream -u -R -b 50M -t 2
udp_run udp_pps client_to_server "$(awk 'BEGIN { print 10000 * 1400 * 8 }')" 10000 \
    stream -u --pps 10000 -t 2

# ---- bad input: exit 2, one line on stderr starting "netrig:" and naming the value
# bad DESC PATTERN... -- netrig args
bad() {
    local desc=$1 rc=0 pat
    local pats=()
    shift
    while [[ $1 != -- ]]; do
        pats+=("$1")
        shift
    done
    shift
    timeout 30 "$NETRIG" "$@" >"$T/bad.out" 2>"$T/bad.err" || rc=$?
    check "$desc: exit status 2 (got $rc)" test "$rc" -eq 2
    check "$desc: stderr is one line (got $(wc -l <"$T/bad.err"): $(head -c 300 "$T/bad.err"))" one_line "$T/bad.err"
    check "$desc: stderr starts with 'netrig:' ($(head -c 200 "$T/bad.err"))" grep -q '^netrig: ' "$T/bad.err"
    for pat in "${pats[@]}"; do
        check "$desc: stderr names '$pat' ($(head -c 300 "$T/bad.err"))" grep -qF -- "$pat" "$T/bad.err"
    done
    check "$desc: nothing on stdout ($(head -c 200 "$T/bad.out"))" test ! -s "$T/bad.out"
}
bad "stream -u -l 0" "-l" " 0 " -- stream -u -l 0 -c "$ADDR" -p "$SRV_PORT"
bad "stream -u -l 70000" "-l" "70000" -- stream -u -l 70000 -c "$ADDR" -p "$SRV_PORT"
# the range the message suggests must itself be valid: -l below 16 is refused for UDP
check "stream -u -l 70000: the suggested range starts at the real minimum, not 1 ($(head -c 300 "$T/bad.err"))" \
    bash -c '! grep -q "use 1 to" "$1"' _ "$T/bad.err"
bad "stream -u -l 65508" "65508" -- stream -u -l 65508 -c "$ADDR" -p "$SRV_PORT"
bad "stream -u -b 0" "-b" "'0'" -- stream -u -b 0 -c "$ADDR" -p "$SRV_PORT"
bad "stream -u --pps 0" "--pps" "'0'" -- stream -u --pps 0 -c "$ADDR" -p "$SRV_PORT"
bad "rr --depth 0" "--depth" "'0'" -- rr --depth 0 -c "$ADDR" -p "$SRV_PORT"
bad "rr --depth 1025" "--depth" "1025" -- rr --depth 1025 -c "$ADDR" -p "$SRV_PORT"
bad "rr -r 0" "-r" "0" -- rr -r 0 -c "$ADDR" -p "$SRV_PORT"
bad "rr -r 64,0" "-r" "64,0" -- rr -r 64,0 -c "$ADDR" -p "$SRV_PORT"
bad "rr -u -r 70000" "-r" "70000" -- rr -u -r 70000 -c "$ADDR" -p "$SRV_PORT"
bad "rr --rate 0" "--rate" "'0'" -- rr --rate 0 -c "$ADDR" -p "$SRV_PORT"
bad "crr -u" "-u" "crr" -- crr -u -c "$ADDR" -p "$SRV_PORT"
bad "rr -R" "-R" "rr" -- rr -R -c "$ADDR" -p "$SRV_PORT"
check "daemon alive after the runs and the bad input" alive "$SRV_PID"

# ---- a server that stops answering mid-run
# Two daemons, one for TCP rr and one for UDP rr; both clients run at once, and both daemons
# are stopped (SIGSTOP) 2 s into the 6 s test. --timeout 3s bounds every control reply, so a
# client that honours its timeouts ends well within 15 s.
STALL_LIMIT_MS=15000
declare -A S_PID S_PORT C_PID C_T0 C_END C_RC
for kind in tcp udp; do
    start_server
    S_PID[$kind]=$SRV_PID
    S_PORT[$kind]=$SRV_PORT
done
for kind in tcp udp; do
    extra=()
    [[ $kind == udp ]] && extra=(-u)
    C_T0[$kind]=$(now_ms)
    timeout -s KILL 60 "$NETRIG" rr "${extra[@]}" -c "$ADDR" -p "${S_PORT[$kind]}" -t 6 \
        --txn-timeout 500ms --timeout 3s -J >"$T/stall_$kind.json" 2>"$T/stall_$kind.err" &
    C_PID[$kind]=$!
    track_pid "${C_PID[$kind]}"
done
on_exit "kill -CONT ${S_PID[tcp]} ${S_PID[udp]}"
sleep 2
for kind in tcp udp; do
    kill -STOP "${S_PID[$kind]}" || fail "stall_$kind: the daemon was gone before SIGSTOP"
done
log "stall: both daemons stopped 2 s into the test"
for ((i = 0; i < 60 * 20; i++)); do
    for kind in tcp udp; do
        if [[ -z ${C_END[$kind]:-} ]] && ! alive "${C_PID[$kind]}"; then
            C_END[$kind]=$(now_ms)
            C_RC[$kind]=0
            wait "${C_PID[$kind]}" || C_RC[$kind]=$?
        fi
    done
    [[ -n ${C_END[tcp]:-} && -n ${C_END[udp]:-} ]] && break
    sleep 0.05
done
for kind in tcp udp; do
    f=$T/stall_$kind.json
    if [[ -z ${C_END[$kind]:-} ]]; then
        fail "stall_$kind: the client still runs after 60 s: it hangs"
        continue
    fi
    el=$((C_END[$kind] - C_T0[$kind]))
    log "stall_$kind: exit ${C_RC[$kind]} after $el ms; $(jq -c '{partial, error, transactions: .summary.transactions, timeouts: .summary.timeouts}' "$f" 2>/dev/null || echo 'no JSON'); stderr: $(tr '\n' ' ' <"$T/stall_$kind.err" | head -c 300)"
    check "stall_$kind: not killed by the 60 s guard (exit ${C_RC[$kind]})" test "${C_RC[$kind]}" -ne 137
    check "stall_$kind: the client ends within $((STALL_LIMIT_MS / 1000)) s of starting (took $el ms)" \
        test "$el" -le "$STALL_LIMIT_MS"
    if jq -e . "$f" >/dev/null 2>&1; then
        check_jq "stall_$kind: non-zero exit or partial:true (exit ${C_RC[$kind]})" "$f" \
            '$rc != 0 or .partial == true' --argjson rc "${C_RC[$kind]}"
        check_jq "stall_$kind: summary.timeouts >= 1 (got $(jq .summary.timeouts "$f"))" "$f" '.summary.timeouts >= 1'
        check_jq "stall_$kind: transactions before the stop were counted" "$f" '.summary.transactions > 0'
    else
        fail "stall_$kind: stdout is not a JSON document: $(head -c 300 "$f")"
    fi
done
for kind in tcp udp; do
    kill -CONT "${S_PID[$kind]}" 2>/dev/null || true
done
# resumed, the daemon serves again
SRV_PORT=${S_PORT[tcp]}
if run after_stall rr -t 0.5; then
    check_jq "after_stall: the resumed daemon answers" "$T/after_stall.json" '.summary.transactions > 0'
fi

finish
