# hostile_lib.sh: what the tests of hostile clients share (after lib.sh). Sourced, never run.
#     hostile ARGS...      tests/integration/hostile.py ARGS, bounded to 60 s
#     client KIND ARGS...  a netrig client against the test's daemon ($SRV_PORT), JSON, no save
#     stop_server          stop the daemon start_server began, and reap it
#     within V LO HI       LO <= V <= HI (numbers, awk)
command -v python3 >/dev/null || skip "python3 is not installed"
H=$(dirname "${BASH_SOURCE[0]}")/hostile.py
hostile() { timeout 60 python3 "$H" "$@"; }
client() { timeout 30 "$NETRIG" "$@" -c 127.0.0.1 -p "$SRV_PORT" -i 0 --no-save -J; }
stop_server() { kill "$SRV_PID" && wait "$SRV_PID" 2>/dev/null || true; }
within() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'; }
