#!/usr/bin/env bash
# The whole test suite, in stages (tests/README.md says what each covers, why, and how long it
# takes). Stages pick their tests by ctest label, never by name, so a new test joins the right
# stages by its labels alone:
#   source     the source checks (format, banned functions, sizes, layers, include graph,
#              .ci/packages complete): tests/checksrc.sh, tests/incgraph.py, tests/depcheck.py
#   unit       cmocka unit tests
#   integration  the real binary end to end; "threads" marks those that exercise threads
#              (concurrent clients, daemon sessions, exporter, -T > 1, several targets);
#              "alone" those whose rates or timings need the machine to themselves (RUN_SERIAL)
# Stages:
#   0. source: the "source" tests (configure only, no build): seconds, and the first thing a
#      fresh machine proves (.ci/packages complete);
#   1. main: a warnings-as-errors build running every other test: first the tests that share
#      the machine, SHARED_JOBS (default 3) at a time, then the "alone" tests one by one;
#   2. asan: an ASan+UBSan build running the unit tests and the "threads" integration tests;
#   3. tsan: a ThreadSanitizer build running the "threads" tests (integration, and the unit tests
#      that start threads: a test without a second thread cannot race); any report fails it;
#   4. valgrind: the daemon-and-client integration tests of the label "valgrind" under memcheck;
#   5. fuzz: the libFuzzer targets, FUZZ_SECONDS (default 20) each, two at a time (skipped
#      without clang).
# When every stage is wanted (the default) they overlap where nothing measured can suffer
# (PIPELINE=0 runs them one after the other):
#   - main's shared tests run first, with nothing else of the suite's running;
#   - then the "alone" tests one by one, and beside them, under SCHED_IDLE (`idle` below), the
#     builds of stages 2, 3 and 5 and the fuzz targets' runs: the kernel treats a CPU that runs
#     only SCHED_IDLE work as idle for a waking task, which preempts it at once, so those tests
#     see the machine as their own but for the shared caches, and they pass beside a busy loop
#     at normal priority (the fresh-root runs beside a CPU hog prove it). Nothing there has a
#     deadline; each fuzz target still runs FUZZ_SECONDS, with the CPU the tests leave;
#   - stages 2-4 then run their tests side by side (their logs printed one after the other):
#     none of them judges a rate or a deadline that a busy CPU could break (judge_rates is false
#     under them).
# The sanitizer stages set NETRIG_SANITIZER (asan, tsan, valgrind) for the tests: a test that
# also judges rates or timing leaves those judgments out there (lib.sh `judge_rates`), since
# a sanitizer's slowdown (TSan 5-15x, memcheck 20-50x) is not the code's speed.
# STAGES="main asan" runs only those. Exit status is non-zero when any stage fails.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-2}
shared_jobs=${SHARED_JOBS:-3}
stages=" ${STAGES:-source main asan tsan valgrind fuzz} "
want() { [[ $stages == *" $1 "* ]]; }
stamp() { echo "== [$(date -u +%H:%M:%S)] $*"; }
pipeline=0
if [[ ${PIPELINE:-1} != 0 ]] && want main && want asan && want tsan && want valgrind && want fuzz; then
    pipeline=1
fi

# The sanitizer builds: netrig and the unit tests only (the stages run no tool: no test of
# theirs needs wanem or a fuzz target), at -O1 with debug information: it compiles faster than
# -O2 and runs the tests several times faster than -O0, with stack traces still whole.
san_flags="-g -O1"
# The soak's hostile mix for 10 s instead of 30 under a sanitizer: every kind of hostile client
# still comes, the main stage gives the long run
san_soak=10

# ctest_stage DIR NAME JOBS ARGS...: ctest in DIR, JOBS tests at a time (through the command in
# the array wrap, if any), its log in DIR/NAME.log and its per-test times, slowest first, in
# DIR/NAME-times.txt
wrap=()
ctest_stage() {
    local dir=$1 name=$2 j=$3 rc=0
    shift 3
    "${wrap[@]}" ctest --test-dir "$dir" -j"$j" --output-on-failure "$@" | tee "$dir/$name.log" || rc=$?
    grep -E '^ *[0-9]+/[0-9]+ Test +#' "$dir/$name.log" |
        sed -E 's/.*Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec$/\2 \1/' | sort -rn >"$dir/$name-times.txt" || true
    return "$rc"
}

main_build() {
    cmake -S . -B build-ci -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNETRIG_WERROR=ON >/dev/null
    cmake --build build-ci -j"$jobs"
}
asan_build() {
    cmake -S . -B build-ci-asan -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=$san_flags" \
        -DNETRIG_WERROR=ON -DNETRIG_SANITIZE=ON >/dev/null
    cmake --build build-ci-asan -j"$jobs" --target netrig netrig_unit_tests
}
tsan_build() {
    cmake -S . -B build-ci-tsan -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=$san_flags" \
        -DNETRIG_WERROR=ON -DNETRIG_TSAN=ON >/dev/null
    cmake --build build-ci-tsan -j"$jobs" --target netrig netrig_unit_threads
}
fuzz_step() { # build|run: tests/fuzz/run.sh's step; 77 (no clang) is a skip
    local rc=0
    FUZZ_BUILD_DIR=build-ci-fuzz FUZZ_JOBS=$jobs bash tests/fuzz/run.sh "$1" || rc=$?
    if ((rc == 77)); then
        echo "fuzzing skipped"
        return 0
    fi
    return "$rc"
}

main_shared() {
    ctest_stage build-ci shared "$shared_jobs" -LE '^(source|alone)$'
}
main_alone() {
    ctest_stage build-ci alone 1 -L '^alone$'
}
asan_test() {
    NETRIG_SANITIZER=asan SOAK_SECONDS=$san_soak ctest_stage build-ci-asan stage "$jobs" -L '^(unit|threads)$'
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
        NETRIG_SANITIZER=tsan SOAK_SECONDS=$san_soak ctest_stage build-ci-tsan stage "$jobs" -L '^threads$' || rc=$?
    if compgen -G "$reports/tsan*" >/dev/null; then
        echo "ThreadSanitizer reports:"
        cat "$reports"/tsan*
        rc=1
    fi
    return "$rc"
}
valgrind_test() {
    if ! command -v valgrind >/dev/null; then
        echo "valgrind not installed: skipped"
        return 0
    fi
    [[ -x build-ci/netrig ]] || main_build
    NETRIG_VALGRIND=1 NETRIG_SANITIZER=valgrind ctest_stage build-ci valgrind "$jobs" -L '^valgrind$'
}

# side NAME CMD...: CMD in the background, its output in build-ci/side-NAME.log
declare -A side_pid=()
side() {
    local name=$1
    shift
    "$@" >"build-ci/side-$name.log" 2>&1 &
    side_pid[$name]=$!
}
# side_wait NAME...: wait for each, print its log under a stamp; false if any failed
side_wait() {
    local name rc all=0
    for name in "$@"; do
        rc=0
        wait "${side_pid[$name]}" || rc=$?
        stamp "$name (exit $rc)"
        cat "build-ci/side-$name.log"
        ((rc == 0)) || all=1
    done
    return "$all"
}
side_builds() {
    asan_build || return
    tsan_build || return
    fuzz_step build || return
    stamp "fuzz: ${FUZZ_SECONDS:-20}s per target, $jobs at a time"
    fuzz_step run
}
# idle CMD...: CMD (a function too) under SCHED_IDLE, which its children inherit: the kernel
# counts a CPU that runs only SCHED_IDLE work as idle when it places a waking task, and that
# task preempts the work at once. Nice 19 is not enough: beside a busy loop on one CPU and
# nice-19 builds on the other, stream_limits' -b 200M sender found no idle CPU to wake on and
# made 177 Mbit/s (fresh-root run 15).
idle() {
    chrt --idle -p 0 "$BASHPID" >/dev/null
    "$@"
}

if want source; then
    stamp "source: format, banned functions, sizes, layers, include graph, packages"
    cmake -S . -B build-ci -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNETRIG_WERROR=ON >/dev/null
    ctest_stage build-ci source "$jobs" -L '^source$'
fi

if ((pipeline)); then
    stamp "main: build (warnings as errors)"
    main_build
    stamp "main: the tests that share the machine, $shared_jobs at a time"
    rc=0
    main_shared || rc=$?
    stamp "main: the tests that need the machine to themselves, one at a time; beside them under SCHED_IDLE, the asan, tsan and fuzz builds, then the fuzz runs"
    side builds idle side_builds
    main_alone || rc=$?
    side_wait builds || rc=1
    ((rc == 0)) || exit 1
    stamp "asan + tsan + valgrind: their tests side by side"
    side asan asan_test
    side tsan tsan_test
    side valgrind valgrind_test
    side_wait asan tsan valgrind || exit 1
    stamp "done"
    exit 0
fi

if want main; then
    stamp "main: build (warnings as errors) and every other test"
    main_build
    rc=0
    main_shared || rc=$?
    main_alone || rc=$?
    ((rc == 0)) || exit 1
fi
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
if want valgrind; then
    stamp "valgrind: daemon-and-client integration tests under memcheck"
    valgrind_test
fi
if want fuzz; then
    stamp "fuzz: ${FUZZ_SECONDS:-20}s per target"
    fuzz_step build
    fuzz_step run
fi
stamp "done"
