#!/usr/bin/env bash
# audit_host: `netrig audit` on this machine. -J is one valid JSON document whose findings all
# carry the required keys; loopback and virtual interfaces are reported as skipped with a
# reason; --record DIR then --sysroot DIR gives the same findings; a bad --sysroot is exit
# status 2 with one line on stderr; run as nobody it degrades to skipped checks; and it never
# writes to the host (the sysctls it reads are unchanged afterwards).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

REQUIRED='["id","iface","group","status","current","recommended","reason","fix","persist",
"persistent","per_netns"]'

# snapshot of a few writable host settings, to prove the audit changed nothing
host_state() {
    cat /proc/sys/net/core/default_qdisc /proc/sys/net/ipv4/tcp_rmem \
        /proc/sys/net/core/rmem_max /proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null
    for q in /sys/class/net/*/queues/rx-*/rps_cpus; do cat "$q" 2>/dev/null; done
    tc qdisc show 2>/dev/null || true
}
host_state >"$T/before.state"

# --- -J on the real host
rc=0
"$NETRIG" audit -J >"$T/live.json" 2>"$T/live.err" || rc=$?
check "-J: exit status 0 or 1 (got $rc; stderr: $(head -c 300 "$T/live.err"))" \
    test "$rc" -eq 0 -o "$rc" -eq 1
check_jq "-J: stdout is one JSON object" "$T/live.json" 'length == 1 and (.[0] | type == "object")' -s
check_jq "-J: findings is a non-empty array" "$T/live.json" '(.findings | type == "array") and (.findings | length > 0)'
check_jq "-J: every finding has the required keys" "$T/live.json" \
    'all(.findings[]; . as $f | all($req[]; . as $k | $f | has($k)))' --argjson req "$REQUIRED"
check_jq "-J: statuses are ok/warn/bad/info/skipped" "$T/live.json" \
    'all(.findings[]; .status | IN("ok", "warn", "bad", "info", "skipped"))'
check_jq "-J: persistent and per_netns are booleans" "$T/live.json" \
    'all(.findings[]; (.persistent | type == "boolean") and (.per_netns | type == "boolean"))'
check_jq "-J: ids are dotted names without the interface" "$T/live.json" \
    'all(.findings[]; . as $f | ($f.id | test("^[a-z]+\\.[a-z0-9_]+$")) and ($f.iface == null or ($f.id | contains($f.iface) | not)))'
check_jq "-J: target has rate_bps, rtt_s, bdp_bytes = rate x RTT / 8" "$T/live.json" \
    '.target.rate_bps > 0 and .target.rtt_s > 0 and ((.target.bdp_bytes - .target.rate_bps * .target.rtt_s / 8) | fabs) < 1'
check_jq "-J: verdict matches the exit status ($rc)" "$T/live.json" \
    '.verdict.exit_status == $rc and ((.verdict.counts.warn + .verdict.counts.bad > 0) == ($rc == 1))' \
    --argjson rc "$rc"
check_jq "-J: every skipped finding says why" "$T/live.json" \
    'all(.findings[] | select(.status == "skipped"); .reason | length > 0)'

# loopback and interfaces without a device are skipped with their reason
for dev in /sys/class/net/*; do
    name=$(basename "$dev")
    if [[ $name == lo ]]; then
        check_jq "lo is skipped as loopback" "$T/live.json" \
            'any(.findings[]; .id == "nic.interface" and .iface == $n and .status == "skipped" and (.reason | test("loopback")))' \
            --arg n "$name"
    elif [[ ! -e $dev/device ]]; then
        check_jq "$name (virtual) is skipped with a reason" "$T/live.json" \
            'any(.findings[]; .id == "nic.interface" and .iface == $n and .status == "skipped" and (.reason | test("virtual")))' \
            --arg n "$name"
    fi
done

# the kernel's qdisc set is reported: in use, or absent with the reason
check_jq "qdisc.fq_available is reported" "$T/live.json" \
    'any(.findings[]; .id == "qdisc.fq_available")'
if [[ -r /proc/config.gz ]] && zcat /proc/config.gz | grep -q '^# CONFIG_NET_SCH_FQ is not set'; then
    check_jq "fq absent from this kernel is said plainly" "$T/live.json" \
        'any(.findings[]; .id == "qdisc.fq_available" and (.reason | test("fq is not available in this kernel \\(no sch_fq")))'
fi

# --- text report: grouped, 80 columns, verdict last
rc=0
"$NETRIG" audit >"$T/live.txt" 2>&1 || rc=$?
check "text: exit status 0 or 1 (got $rc)" test "$rc" -eq 0 -o "$rc" -eq 1
check "text: ends with the verdict" grep -q '^verdict: ' "$T/live.txt"
check "text: no line longer than 80 columns" test -z "$(awk 'length($0) > 80' "$T/live.txt")"
check "text: no colour when not on a terminal" test -z "$(grep -l $'\033' "$T/live.txt")"

# --- --record, then --sysroot on the record: the same findings
rc=0
"$NETRIG" audit --record "$T/rec" -J >"$T/recorded.json" 2>"$T/record.err" || rc=$?
check "--record: exit status 0 or 1 (got $rc; stderr: $(head -c 300 "$T/record.err"))" \
    test "$rc" -eq 0 -o "$rc" -eq 1
check "--record: the tree has proc/sys" test -d "$T/rec/proc/sys/net"
check "--record: tells how to replay" grep -q -- "--sysroot $T/rec" "$T/record.err"
rc2=0
"$NETRIG" audit --sysroot "$T/rec" -J >"$T/replayed.json" 2>"$T/replay.err" || rc2=$?
check "--sysroot: same exit status as the recorded run ($rc2 vs $rc)" test "$rc2" -eq "$rc"
jq -S '.findings' "$T/recorded.json" >"$T/a.json" 2>/dev/null || true
jq -S '.findings' "$T/replayed.json" >"$T/b.json" 2>/dev/null || true
check "--sysroot on the record gives the same findings ($(diff "$T/a.json" "$T/b.json" | head -c 400))" \
    cmp -s "$T/a.json" "$T/b.json"
check_jq "--sysroot: the JSON names the sysroot" "$T/replayed.json" '.sysroot == $d' --arg d "$T/rec"

# --- errors: a bad --sysroot or --record is exit status 2 and one line on stderr
rc=0
"$NETRIG" audit --sysroot "$T/does-not-exist" -J >"$T/bad.out" 2>"$T/bad.err" || rc=$?
check "bad --sysroot: exit status 2 (got $rc)" test "$rc" -eq 2
check "bad --sysroot: one line naming the value" grep -q "does-not-exist" "$T/bad.err"
check "bad --sysroot: nothing on stdout" test ! -s "$T/bad.out"
rc=0
"$NETRIG" audit --record "$T/rec" >/dev/null 2>"$T/bad2.err" || rc=$?
check "--record into a non-empty directory: exit status 2 (got $rc)" test "$rc" -eq 2
rc=0
"$NETRIG" audit --rate fast >/dev/null 2>&1 || rc=$?
check "--rate fast: exit status 2 (got $rc)" test "$rc" -eq 2
rc=0
"$NETRIG" audit -I no-such-if0 >/dev/null 2>"$T/bad3.err" || rc=$?
check "-I unknown: exit status 2 (got $rc)" test "$rc" -eq 2
check "-I unknown: says which interfaces exist" grep -q "interfaces here are" "$T/bad3.err"

# --- as an unprivileged user: fewer checks, reported as skipped, never a failure
if [[ $(id -u) -eq 0 ]] && command -v setpriv >/dev/null; then
    U=$(mktemp -d /tmp/netrig-audit-nobody.XXXXXX)
    on_exit "rm -rf '$U'"
    chmod 755 "$U"
    cp "${_REAL_NETRIG:-$NETRIG}" "$U/netrig"
    chmod 755 "$U/netrig"
    rc=0
    (cd / && setpriv --reuid=65534 --regid=65534 --clear-groups "$U/netrig" audit -J) \
        >"$T/nobody.json" 2>"$T/nobody.err" || rc=$?
    check "nobody: exit status 0 or 1 (got $rc; stderr: $(head -c 300 "$T/nobody.err"))" \
        test "$rc" -eq 0 -o "$rc" -eq 1
    check_jq "nobody: valid JSON with findings" "$T/nobody.json" '.findings | length > 0'
    jq -c '[.findings[] | {id, iface, status}]' "$T/live.json" >"$T/root.f"
    jq -c '[.findings[] | {id, iface, status}]' "$T/nobody.json" >"$T/nobody.f"
    check_jq "nobody: the same checks as root" "$T/nobody.f" \
        '[.[] | [.id, .iface]] == [$r[0][] | [.id, .iface]]' --slurpfile r "$T/root.f"
    check_jq "nobody: a check that differs from root's is skipped" "$T/nobody.f" \
        '[., $r[0]] | transpose | all(.[]; .[0].status == .[1].status or .[0].status == "skipped")' \
        --slurpfile r "$T/root.f"
    if jq -e 'any(.findings[]; (.id | startswith("pcie.max_")) and .status != "skipped")' \
        "$T/live.json" >/dev/null ||
        jq -e 'any(.findings[]; .id == "pcie.max_payload" and (.reason | test("no PCI Express")))' \
            "$T/live.json" >/dev/null; then
        check_jq "nobody: config space past 64 bytes is skipped as needing root" "$T/nobody.json" \
            'any(.findings[]; .id == "pcie.max_payload" and .status == "skipped" and (.reason | test("needs root")))'
    fi
else
    log "not root or no setpriv: the unprivileged run is not checked"
fi

host_state >"$T/after.state"
check "the audit changed nothing on the host" cmp -s "$T/before.state" "$T/after.state"

finish
