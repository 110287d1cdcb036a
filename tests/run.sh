#!/usr/bin/env bash
# The whole test suite: a warnings-as-errors build with every test (unit and integration),
# then an ASan+UBSan build running the unit tests. Exit status is ctest's.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

cmake -S . -B build-ci -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNETRIG_WERROR=ON >/dev/null
cmake --build build-ci -j"$jobs"
ctest --test-dir build-ci --output-on-failure

cmake -S . -B build-ci-asan -DCMAKE_BUILD_TYPE=Debug -DNETRIG_WERROR=ON -DNETRIG_SANITIZE=ON >/dev/null
cmake --build build-ci-asan -j"$jobs"
ctest --test-dir build-ci-asan -L unit --output-on-failure
