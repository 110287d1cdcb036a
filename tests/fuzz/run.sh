#!/usr/bin/env bash
# tests/fuzz/run.sh [build|run|all]: builds the libFuzzer targets (CMake option NETRIG_FUZZ,
# clang, ASan + UBSan) and runs each for FUZZ_SECONDS (default 20), FUZZ_JOBS (default 1) at a
# time, from its seed corpus in tests/fuzz/corpus/NAME ("all", the default); "build" only
# builds, "run" only runs what an earlier "build" made (tests/run.sh builds them beside other
# tests). Fails on any crash, leak or sanitizer report. Exits 77 (skipped) when clang or
# libFuzzer is unavailable.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
step=${1:-all}
case $step in
build | run | all) ;;
*) echo "usage: $0 [build|run|all] (got '$step')" >&2; exit 2 ;;
esac
secs=${FUZZ_SECONDS:-20}
build=${FUZZ_BUILD_DIR:-$top/build-fuzz}
case $build in /*) ;; *) build=$PWD/$build ;; esac # the targets run from a temp dir
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

command -v clang >/dev/null || { echo "clang not installed: fuzzing skipped" >&2; exit 77; }
printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){(void)d;(void)n;return 0;}\n' \
    > "$work/probe.c"
clang -fsanitize=fuzzer "$work/probe.c" -o "$work/probe" 2>/dev/null ||
    { echo "clang has no libFuzzer (install libclang-rt-14-dev): fuzzing skipped" >&2; exit 77; }

if [[ $step != run ]]; then
    CC=clang cmake -S "$top" -B "$build" -DNETRIG_FUZZ=ON -DBUILD_TESTING=OFF \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
    cmake --build "$build" -j"$(nproc)" --target $(cd "$here" && ls fuzz_*.c | sed 's/\.c$//') >/dev/null
    [[ $step == build ]] && { echo "fuzz targets built in $build"; exit 0; }
fi

# FUZZ_JOBS targets at a time (default 1): each still fuzzes for FUZZ_SECONDS of its own
fuzz_jobs=${FUZZ_JOBS:-1}
fuzz_one() { # NAME: fuzz it, its log in $work/NAME.log, its verdict in $work/NAME.rc
    local name=$1 corpus="$here/corpus/${1#fuzz_}" rc=0
    mkdir -p "$work/corpus-$name"
    (cd "$work" && "$build/$name" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 "$work/corpus-$name" "$corpus") >"$work/$name.log" 2>&1 || rc=$?
    echo "$rc" >"$work/$name.rc"
}
names=()
for src in "$here"/fuzz_*.c; do
    name=$(basename "$src" .c)
    names+=("$name")
    echo "== $name: ${secs}s from $(ls "$here/corpus/${name#fuzz_}" | wc -l) seeds"
    fuzz_one "$name" &
    while [ "$(jobs -rp | wc -l)" -ge "$fuzz_jobs" ]; do wait -n || true; done
done
wait

status=0
for name in "${names[@]}"; do
    if [ "$(cat "$work/$name.rc" 2>/dev/null)" != 0 ]; then
        echo "$name FAILED:"
        tail -40 "$work/$name.log"
        status=1
    else
        echo "$name: $(grep -E 'stat::number_of_executed_units' "$work/$name.log" | tail -1)"
    fi
done
exit $status
