#!/usr/bin/env bash
# The whole test suite, in stages (tests/README.md says what each covers, why, and how long it
# takes). Stages pick their tests by ctest label, never by name, so a new test joins the right
# stages by its labels alone:
#   source     the source checks (format, banned functions, sizes, layers, include graph,
#              .ci/packages complete): tests/checksrc.sh, tests/incgraph.py, tests/depcheck.py
#   unit       cmocka unit tests
#   integration  the real binary end to end; "threads" marks those that exercise threads
#              (concurrent clients, daemon sessions, exporter, -T > 1, several targets)
# Stages:
#   0. source: the "source" tests (configure only, no build): seconds, and the first thing a
#      fresh machine proves (.ci/packages complete);
#   1. main: a warnings-as-errors build running every other test, two at a time (tests that
#      measure rates carry RUN_SERIAL and run alone);
#   2. asan: an ASan+UBSan build running the unit tests and the "threads" integration tests;
#   3. tsan: a ThreadSanitizer build running the "threads" tests (integration, and the unit tests
#      that start threads: a test without a second thread cannot race); any report fails it;
#   4. valgrind: the daemon-and-client integration tests of the label "valgrind" under memcheck,
#      two at a time;
#   5. fuzz: the libFuzzer targets, FUZZ_SECONDS (default 20) each, two at a time (skipped
#      without clang).
# The sanitizer stages set NETRIG_SANITIZER (asan, tsan) for the tests: a "threads" test that
# also judges rates or timing leaves those judgments out there (lib.sh `judge_rates`), since
# a sanitizer's slowdown (TSan 5-15x) is not the code's speed.
# STAGES="main asan" runs only those. Exit status is non-zero when any stage fails.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-2}
stages=" ${STAGES:-source main asan tsan valgrind fuzz} "
want() { [[ $stages == *" $1 "* ]]; }
stamp() { echo "== [$(date -u +%H:%M:%S)] $*"; }

# The sanitizer builds: netrig and the unit tests only (the stages run no tool: no test of
# theirs needs wanem or a fuzz target), at -O1 with debug information: it compiles faster than
# -O2 and runs the tests several times faster than -O0, with stack traces still whole.
san_flags="-g -O1"
# The soak's hostile mix for 10 s instead of 30 under a sanitizer: every kind of hostile client
# still comes, the main stage gives the long run
san_soak=10

# ctest_stage DIR ARGS...: ctest in DIR (through the command in the array wrap, if any), its
# per-test times kept in DIR/stage-times.txt, slowest first
wrap=()
ctest_stage() {
    local dir=$1 rc=0
    shift
    "${wrap[@]}" ctest --test-dir "$dir" -j"$jobs" --output-on-failure "$@" | tee "$dir/stage.log" || rc=$?
    grep -E '^ *[0-9]+/[0-9]+ Test +#' "$dir/stage.log" |
        sed -E 's/.*Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec$/\2 \1/' | sort -rn >"$dir/stage-times.txt" || true
    return "$rc"
}

if want source; then
    stamp "source: format, banned functions, sizes, layers, include graph, packages"
    cmake -S . -B build-ci -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNETRIG_WERROR=ON >/dev/null
    ctest_stage build-ci -L '^source$'
fi

if want main; then
    stamp "main: build (warnings as errors) and every other test"
    cmake -S . -B build-ci -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNETRIG_WERROR=ON >/dev/null
    cmake --build build-ci -j"$jobs"
    ctest_stage build-ci -LE '^source$'
fi

# The sanitizer stages: each builds, then runs its ctest. Their tests mostly wait (fixed
# durations, daemons' timeouts: about 0.65 of a core between both stages), so when both are
# wanted their ctests run at the same time, each two tests at a time and each keeping its own
# RUN_SERIAL tests alone in it; their logs print one after the other. SAN_TOGETHER=0 runs them
# one after the other.
asan_build() {
    cmake -S . -B build-ci-asan -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=$san_flags" \
        -DNETRIG_WERROR=ON -DNETRIG_SANITIZE=ON >/dev/null
    cmake --build build-ci-asan -j"$jobs" --target netrig netrig_unit_tests
}
asan_test() {
    NETRIG_SANITIZER=asan SOAK_SECONDS=$san_soak ctest_stage build-ci-asan -L '^(unit|threads)$'
}
tsan_build() {
    cmake -S . -B build-ci-tsan -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=$san_flags" \
        -DNETRIG_WERROR=ON -DNETRIG_TSAN=ON >/dev/null
    cmake --build build-ci-tsan -j"$jobs" --target netrig netrig_unit_threads
}
tsan_test() {
    local reports=$PWD/build-ci-tsan/tsan-reports rc=0 wrap=()
    rm -rf "$reports" && mkdir -p "$reports"
    # every report goes to a file of its own (a daemon's exit status is not always checked)
    # and makes the process exit 66; suppressions only for third-party code (tests/tsan.supp)
    # ThreadSanitizer's shadow memory does not fit beside a fully randomised address space on
    # newer kernels (vm.mmap_rnd_bits > 28): run the tests without address randomisation
    setarch "$(uname -m)" -R true 2>/dev/null && wrap=(setarch "$(uname -m)" -R)
    TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 log_path=$reports/tsan suppressions=$PWD/tests/tsan.supp" \
        NETRIG_SANITIZER=tsan SOAK_SECONDS=$san_soak ctest_stage build-ci-tsan -L '^threads$' || rc=$?
    if compgen -G "$reports/tsan*" >/dev/null; then
        echo "ThreadSanitizer reports:"
        cat "$reports"/tsan*
        rc=1
    fi
    return "$rc"
}

if want asan && want tsan && [[ ${SAN_TOGETHER:-1} != 0 ]]; then
    stamp "asan + tsan: AddressSanitizer + UndefinedBehaviorSanitizer (unit and threads tests) and ThreadSanitizer (threads tests, no report allowed), side by side"
    asan_build
    tsan_build
    stamp "asan + tsan: both builds done, their tests side by side"
    arc=0 trc=0
    asan_test >build-ci-asan/side.log 2>&1 &
    apid=$!
    tsan_test >build-ci-tsan/side.log 2>&1 &
    tpid=$!
    wait "$apid" || arc=$?
    wait "$tpid" || trc=$?
    stamp "asan (exit $arc)"
    cat build-ci-asan/side.log
    stamp "tsan (exit $trc)"
    cat build-ci-tsan/side.log
    ((arc == 0 && trc == 0)) || exit 1
else
    if want asan; then
        stamp "asan: AddressSanitizer + UndefinedBehaviorSanitizer, unit and threads tests"
        asan_build
        asan_test
    fi
    if want tsan; then
        stamp "tsan: ThreadSanitizer, the threads tests (no report allowed)"
        tsan_build
        tsan_test
    fi
fi

if want valgrind; then
    stamp "valgrind: daemon-and-client integration tests under memcheck"
    if command -v valgrind >/dev/null; then
        [[ -x build-ci/netrig ]] || {
            cmake -S . -B build-ci -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNETRIG_WERROR=ON >/dev/null
            cmake --build build-ci -j"$jobs"
        }
        NETRIG_VALGRIND=1 ctest --test-dir build-ci -j"$jobs" --output-on-failure -L '^valgrind$'
    else
        echo "valgrind not installed: skipped"
    fi
fi

if want fuzz; then
    stamp "fuzz: ${FUZZ_SECONDS:-20}s per target"
    rc=0
    FUZZ_BUILD_DIR=build-ci-fuzz FUZZ_JOBS=$jobs bash tests/fuzz/run.sh || rc=$?
    if [ "$rc" -eq 77 ]; then
        echo "fuzzing skipped"
    elif [ "$rc" -ne 0 ]; then
        exit "$rc"
    fi
fi
stamp "done"
