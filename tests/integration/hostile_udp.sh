#!/usr/bin/env bash
# Hostile clients, UDP (issue 17 item 4): spoofed UDP hellos must not turn the daemon into a
# reflector. In a private namespace (raw sockets forge the source address; a packet socket on
# its lo counts every datagram toward the victim):
#   - a native UDP test (reverse stream, rr with 60000-byte answers to 1-byte requests) whose
#     hellos and requests come from another address: zero bytes toward it, and the test is
#     refused by the daemon's own timeout;
#   - the counter works: the same spoof from the control connection's own address is answered;
#   - iperf3's UDP set-up flooded with "9876" datagrams from another address during three real
#     `iperf3 -u -R` runs: all three complete, zero bytes toward the flooder's address.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
command -v python3 >/dev/null || skip "python3 is not installed"
need_netns
new_netns hu
H=$(dirname "$0")/hostile.py
VICTIM=127.0.0.99
inns() { ip netns exec "$NETNS" "$@"; }

SRV_LOG=$T/serve.log
# ip execs the program: SRV_PID is the daemon itself
ip netns exec "$NETNS" "$NETRIG" serve -p 0 --timeout 2s --deny "$VICTIM/32" 2>"$SRV_LOG" &
SRV_PID=$!
track_pid "$SRV_PID"
SRV_PORT=$(wait_for_port "$SRV_LOG" "$SRV_PID")

for kind in rr stream-reverse; do
    inns timeout 30 python3 "$H" spoof "$SRV_PORT" "$VICTIM" "$kind" >"$T/spoof.$kind.json"
    log "spoof $kind: $(cat "$T/spoof.$kind.json")"
    check_jq "spoof $kind: accepted, then refused (no UDP hello from the control peer)" \
        "$T/spoof.$kind.json" '.accept == "accept" and .then != "result"'
    check_jq "spoof $kind: zero bytes toward $VICTIM" "$T/spoof.$kind.json" \
        '.victim_packets == 0 and .victim_bytes == 0'
done

# the positive control: hellos from the control peer's own address are taken, and the rr
# answers counted (so the zero above is the daemon's doing, not a blind counter)
inns timeout 30 python3 "$H" spoof "$SRV_PORT" 127.0.0.1 rr answers >"$T/spoof.self.json"
log "spoof from the control peer's address: $(cat "$T/spoof.self.json")"
check_jq "control: the daemon answers its own client's address" "$T/spoof.self.json" \
    '.then == "ready" and .victim_packets > 0'

if command -v iperf3 >/dev/null; then
    ip netns exec "$NETNS" timeout 30 python3 "$H" i3spoof "$SRV_PORT" "$VICTIM" 8 >"$T/i3spoof.json" &
    flood=$!
    track_pid "$flood"
    ok=0
    for i in 1 2 3; do
        if inns timeout 20 iperf3 -c 127.0.0.1 -p "$SRV_PORT" -u -R -b 10M -l 1200 -t 1 -J \
            >"$T/i3.$i.json" 2>&1 &&
            jq -e '.end.sum.bytes > 1000000' "$T/i3.$i.json" >/dev/null; then
            ok=$((ok + 1))
        else
            fail "iperf3 -u -R run $i under a spoofed flood: $(jq -r '.error // empty' "$T/i3.$i.json" 2>/dev/null | head -c 300)"
        fi
    done
    wait "$flood" || true
    log "iperf3 set-up flood: $(cat "$T/i3spoof.json"); $ok of 3 real runs complete"
    check_jq "iperf3 flood: datagrams were sent" "$T/i3spoof.json" '.spoofed > 100'
    check_jq "iperf3 flood: zero bytes toward $VICTIM" "$T/i3spoof.json" \
        '.victim_packets == 0 and .victim_bytes == 0'
else
    log "iperf3 is not installed: its UDP set-up is not tried"
fi
check "daemon alive" alive "$SRV_PID"
finish
