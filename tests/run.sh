#!/usr/bin/env bash
# The whole test suite:
#   0. tests/checksrc.sh: clang-format, banned functions, file and function sizes, layers;
#   1. a warnings-as-errors build running every test (unit and integration);
#   2. an ASan+UBSan build running every test again;
#   3. the daemon-and-client integration tests under valgrind memcheck;
#   4. the libFuzzer targets for a bounded time each (skipped without clang).
# Exit status is non-zero when any step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

echo "== source checks (format, banned functions, sizes, layers)"
bash tests/checksrc.sh

echo "== build and test (warnings as errors)"
cmake -S . -B build-ci -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNETRIG_WERROR=ON >/dev/null
cmake --build build-ci -j"$jobs"
ctest --test-dir build-ci -j"$jobs" --output-on-failure

echo "== build and test under AddressSanitizer + UndefinedBehaviorSanitizer"
cmake -S . -B build-ci-asan -DCMAKE_BUILD_TYPE=Debug -DNETRIG_WERROR=ON -DNETRIG_SANITIZE=ON \
    >/dev/null
cmake --build build-ci-asan -j"$jobs"
ctest --test-dir build-ci-asan -j"$jobs" --output-on-failure

echo "== integration tests under valgrind memcheck (no errors, no definite leaks)"
if command -v valgrind >/dev/null; then
    NETRIG_VALGRIND=1 ctest --test-dir build-ci --output-on-failure \
        -R '^(stream_loopback|stream_embedded|stream_errors|stream_ctrl_c|serve_access)$'
else
    echo "valgrind not installed: skipped"
fi

echo "== fuzzing (${FUZZ_SECONDS:-20}s per target)"
rc=0
FUZZ_BUILD_DIR=build-ci-fuzz bash tests/fuzz/run.sh || rc=$?
if [ "$rc" -eq 77 ]; then
    echo "fuzzing skipped"
elif [ "$rc" -ne 0 ]; then
    exit "$rc"
fi
