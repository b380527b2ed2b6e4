#!/usr/bin/env bash
# The README's test command: installs what the tests need, then runs every test.
#   Scripts/test.sh            # everything CI runs (about half an hour on two cores)
#   RELATA_DEEP=1 Scripts/test.sh          # and more (an hour and more): see below
#   Scripts/test.sh --filter DeltaTests    # only those tests (no sanitizer run, no fuzzing)
# A full run also runs the hostile mix (Scripts/hostile_mix.py: every kind of bad client at
# once against `relata serve`, on SQLite and PostgreSQL), the rules tests under the address
# sanitizer and with JavaScriptCore collecting every few allocations, schemathesis against the
# server's OpenAPI document (Scripts/api-fuzz.sh), and each fuzz target but update-data for
# RELATA_FUZZ_SECONDS (20 by default) over its committed corpus (Documentation/Fuzzing.md;
# update-data's check runs over its corpus in UpdateDataCorpusTests).
# RELATA_DEEP=1 adds what does not fit CI's half hour: the data server's tests under the
# frequent collections too, and the update-data fuzz target (a second, sanitized build of the
# whole server). Run it before a release, and after changing how the server holds rule values.
#
# Nothing here can hang: every step has a time limit, and whatever a step started from this
# checkout's build folders (a test runner, a `relata serve` a test started) is killed when the
# step ends, so one hung test fails by name and leaves nothing behind.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
source Scripts/lib/packages.sh

# Kills every process running a program from this checkout's build folders.
kill_leftovers() {
    local pids
    pids="$(pgrep -f "^$root/\.build[^ ]*/" || true)"
    if [ -n "$pids" ]; then
        echo "Stopping processes a step left behind: $(echo $pids)"
        kill -KILL $pids 2>/dev/null || true
    fi
}

# Each step's time, printed as it ends and all together at the end: CI's budget is half an hour.
step_started=$(date +%s)
step_name="Installing what the tests need"
step_times=()
step() {
    local now
    now=$(date +%s)
    step_times+=("$(printf '%5d s  %s' $((now - step_started)) "$step_name")")
    echo "[$((now - step_started)) s] $step_name"
    step_name="$1"
    step_started=$now
    if [ -n "$1" ]; then echo "$1…"; fi
}
print_step_times() {
    step ""
    echo "Time by step:"
    printf '  %s\n' "${step_times[@]}"
}

# Runs a command for at most LIMIT seconds (then SIGTERM, and SIGKILL 30 s later), and kills
# what it left behind.
bounded() {
    local limit=$1 status=0
    shift
    timeout --kill-after=30 "$limit" "$@" || status=$?
    kill_leftovers
    [ "$status" -eq 124 ] && echo "timed out after $limit s: $*" >&2
    return "$status"
}

# Rules run on JavaScriptCore (WebKitGTK's javascriptcoregtk-4.1); the
# benchmarks package (type-checked here so it cannot rot, not run) uses SQLite's header.
require_packages libjavascriptcoregtk-4.1-dev libsqlite3-dev
# The JavaScript client's tests run on Node (Debian's nodejs, or a newer one already installed);
# the console's in headless Chromium, driven by chromedriver.
command -v node > /dev/null || require_packages nodejs
require_packages chromium chromium-driver

# The server suite runs on SQLite and on PostgreSQL: a throwaway cluster (Debian's PostgreSQL,
# a temporary folder, a loopback port) for this run, stopped when the script ends.
source Scripts/lib/postgres.sh
start_postgres
trap 'status=$?; [ $status -eq 0 ] || postgres_log_excerpt; kill_leftovers; stop_postgres' EXIT

step "Building (the package and its tests)"
swift build --build-tests
# A hung test run fails here after 20 minutes instead of holding CI for its whole budget.
if [ $# -gt 0 ]; then
    bounded 1200 swift test --skip-build "$@"
else
    # Tests that hold the server to an order or a bound in time run on their own: beside the
    # CPU-bound suites, whose synchronous tests occupy Swift's few cooperative threads (two on
    # two cores), their servers' request handlers wait for a thread — the client's tests (a
    # server per test, the differential one per scenario), hostile clients, runtime concurrency
    # and PostgreSQL's limits.
    # The readiness check gives each database two seconds to answer: beside the CPU-bound suites
    # on a busy machine, a database that answers may not get a thread in time.
    # A query stopped at its time limit, and the admin's overview (it holds each database to that
    # readiness deadline), likewise.
    bounds="HostileClientTests|RuntimeConcurrencyTests|PostgresLimitsTests|readinessNamesADatabaseThatDoesNotAnswer|aQueryThatRunsTooLongIsStopped|AdminServiceTests"
    step "Tests (all but those of time bounds and the client's)"
    bounded 1200 swift test --skip-build --skip "RelataRemoteTests|LoginLeakTests|$bounds"
    step "Tests of order and time bounds, on their own (hostile clients, runtime concurrency, PostgreSQL's limits, readiness, query limits, the admin's overview)"
    bounded 900 swift test --skip-build --filter "$bounds"
    step "Login timing, alone: it compares times of logins, which other work beside it would blur"
    bounded 300 swift test --skip-build --filter LoginLeakTests
    step "Client tests against live servers (RelataRemoteTests)"
    bounded 900 swift test --skip-build --filter RelataRemoteTests
fi

if [ $# -eq 0 ]; then
    # The JavaScript client (Clients/JavaScript): its unit tests, and its tests against a
    # `relata serve` each test file starts on a free port and stops.
    step "The JavaScript client's tests (node --test)"
    RELATA_BIN="$(swift build --show-bin-path)/relata" bounded 300 node --test Clients/JavaScript/test/
    step "In headless Chromium: the web console (screenshots kept in .build/artifacts) and the differential's browser column"
    RELATA_BIN="$(swift build --show-bin-path)/relata" RELATA_ARTIFACTS="$root/.build/artifacts" \
        bounded 900 node --test Clients/JavaScript/browser-tests/
    pkill -f "chromedriver --port=" 2> /dev/null || true

    step "The hostile mix: every kind of bad client at once, on SQLite and on PostgreSQL"
    bounded 600 python3 Scripts/hostile_mix.py "$(swift build --show-bin-path)/relata" hostile.sqlite
    "$RELATA_POSTGRES_BIN/psql" "$RELATA_POSTGRES_URL" -qc "CREATE DATABASE relata_hostile" > /dev/null
    bounded 600 python3 Scripts/hostile_mix.py "$(swift build --show-bin-path)/relata" "${RELATA_POSTGRES_URL%/*}/relata_hostile"

    # JavaScriptCore's collector sees the stack, not Swift's heap: a value Relata made for a
    # script and held where the collector cannot see it is freed under it. Collecting every
    # few allocations turns such a mistake from a rare crash into a certain one.
    step "Rules tests with JavaScriptCore collecting every few allocations"
    # Only RelataScript and RelataTools hold JavaScriptCore's values; their tests run so. The data
    # server's tests reach the same code through the engine's API and take three times as long
    # so (over ten minutes on two cores): they run so with RELATA_DEEP=1.
    # Tests of time bounds (hostile clients, PostgreSQL limits, runtime concurrency, queries stopped
    # at their limit, the readiness check's 2 s deadline, change events against the rules' time
    # limit) are left out here: under a collection every
    # few allocations they measure the collector, not the server; the run above holds them to their bounds.
    collected="RelataScriptTests|RelataToolsTests|RelataTestingTests"
    [ -n "${RELATA_DEEP:-}" ] && collected="$collected|RelataServerTests"
    JSC_slowPathAllocsBetweenGCs=5 bounded 1500 swift test --skip-build --filter "$collected" \
        --skip "HostileClientTests|PostgresLimitsTests|RuntimeConcurrencyTests|RunsTooLong|LoginLeakTests|readinessNamesADatabaseThatDoesNotAnswer|RunPastTheTimeLimit|aRunawayChangeFailsAlone"

    step "Rules tests under the address sanitizer"
    # The package without its server half (RELATA_RULES_ONLY, see Package.swift): the sanitizer
    # build compiles the rule engine and its tests, not NIO and BoringSSL a second time.
    mkdir -p .build-asan
    # The linker's many "Cannot export local symbol '__asan_…'" warnings are noise; errors are shown.
    if ! RELATA_RULES_ONLY=1 swift build --build-tests --sanitize address --scratch-path .build-asan > .build-asan/build.log 2>&1; then
        grep -E "error:" .build-asan/build.log || tail -40 .build-asan/build.log
        exit 1
    fi
    # JavaScriptCore keeps caches for the life of the process: leak reports would be noise.
    RELATA_RULES_ONLY=1 ASAN_OPTIONS=detect_leaks=0 bounded 900 swift test --skip-build --sanitize address --scratch-path .build-asan \
        --filter "RelataScriptTests|RelataToolsTests"

    step "Fuzzing the data server's API with schemathesis"
    Scripts/api-fuzz.sh "${RELATA_API_FUZZ_EXAMPLES:-25}"

    step "Fuzzing each target for ${RELATA_FUZZ_SECONDS:-20} s"
    RELATA_FUZZ_SEED="${RELATA_FUZZ_SEED:-1}" Scripts/fuzz.sh "$([ -n "${RELATA_DEEP:-}" ] && echo all || echo core)" "${RELATA_FUZZ_SECONDS:-20}"
fi

# The benchmarks are checked against this build's modules in seconds; building their package
# compiles every dependency again (ten minutes and more on two cores), so only when the check
# cannot read this build's layout.
step "Type-checking the benchmarks package against this build (not running it)"
status=0
python3 Scripts/typecheck-benchmarks.py || status=$?
if [ "$status" -eq 3 ]; then
    swift build --package-path Benchmarks --scratch-path .build-benchmarks
elif [ "$status" -ne 0 ]; then
    exit "$status"
fi
print_step_times
