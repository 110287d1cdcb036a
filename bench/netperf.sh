# shellcheck shell=bash
# bench/netperf.sh: netperf, a tool only the benchmarks use: its installation and its
# command line and output. Sourced, never run, by bench/lib.sh (bench/rr, bench/crr) and by
# bench/stream; the caller defines die, log, HOST and DURATION.

# bench_netperf: sets NETPERF and NETSERVER [netperf, netserver] and makes sure both run.
# Debian ships netperf (2.7.0 in Debian 12) in its non-free component, which .ci/packages
# cannot name (CI installs from main only; tests/depcheck.py lists netperf as optional with
# that reason). When they are missing, the script, as root and unless NETPERF_INSTALL=0,
# adds non-free in an apt sources file of its own (NETPERF_SOURCES) and installs the package;
# otherwise it stops and says how.
NETPERF_SOURCES=/etc/apt/sources.list.d/netrig-bench-non-free.sources
bench_netperf() {
    NETPERF=${NETPERF:-netperf}
    NETSERVER=${NETSERVER:-netserver}
    command -v "$NETPERF" >/dev/null && command -v "$NETSERVER" >/dev/null && return 0
    local codename how="add 'non-free' to the Components of /etc/apt/sources.list.d/debian.sources, then apt-get update && apt-get install netperf"
    [[ ${NETPERF_INSTALL:-1} == 1 ]] || die "netperf is not installed (NETPERF_INSTALL=0): $how"
    ((EUID == 0)) || die "netperf is not installed; as root: $how (or run this script as root: it does so itself)"
    command -v apt-get >/dev/null || die "netperf is not installed and there is no apt-get here; install netperf 2.7.0"
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    [[ -n $codename ]] || die "netperf is not installed; cannot tell the Debian release (/etc/os-release): $how"
    log "netperf is missing: adding Debian's non-free component ($NETPERF_SOURCES) and installing it"
    if [[ ! -e $NETPERF_SOURCES ]]; then
        printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
            "$codename" >"$NETPERF_SOURCES"
    fi
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq netperf >&2 ||
        die "installing netperf failed: $how"
    command -v "$NETPERF" >/dev/null && command -v "$NETSERVER" >/dev/null ||
        die "netperf installed but '$NETPERF' or '$NETSERVER' is not found"
}

# netperf_cmd TEST PORT [TEST_OPTION...]: sets CMD to a netperf client of TEST (TCP_RR,
# TCP_CRR, TCP_STREAM) for DURATION seconds against the netserver on PORT, printing one CSV
# line of omni output selectors (netperf_parse reads it)
netperf_cmd() {
    local test=$1 port=$2 fmt=()
    shift 2
    [[ $test == *_STREAM ]] && fmt=(-f m) # (-f m would turn _RR rates into bits/s too)
    CMD=("$NETPERF" -H "$HOST" -p "$port" -t "$test" -l "$DURATION" -P 0 "${fmt[@]}" -- "$@"
        -o THROUGHPUT,THROUGHPUT_UNITS,P50_LATENCY,P99_LATENCY,MEAN_LATENCY)
}

# netperf_parse FILE: prints "throughput unit p50_us p99_us mean_us" from netperf_cmd's output
# (throughput in transactions/s for _RR and _CRR, in 10^6 bits/s for TCP_STREAM) or fails
netperf_parse() {
    awk -F, 'NF >= 5 && $1 ~ /^[0-9.]+$/ { t = $1; u = $2; p50 = $3; p99 = $4; m = $5; ok = 1 }
        END { if (!ok || t <= 0) exit 1; printf "%s %s %s %s %s\n", t, u, p50, p99, m }' "$1"
}
