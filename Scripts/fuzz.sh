#!/usr/bin/env bash
# Runs a libFuzzer target over its committed seed corpus (Fuzz/Corpus/TARGET).
#   Scripts/fuzz.sh TARGET [SECONDS]    # one target, 60 s by default
#   Scripts/fuzz.sh all [SECONDS]       # every target in turn
#   Scripts/fuzz.sh core [SECONDS]      # every target but update-data (whose build compiles the whole
#                                       # server again with sanitizers; Scripts/test.sh runs this)
# Targets: briefcase csv json-table delta-json delta-binary row-stream expression dasql schema edits rule-tests update-data
# (see Documentation/Fuzzing.md); update-data links the data server and is built from its own package, Fuzz/Server.
# RELATA_FUZZ_SEED fixes libFuzzer's random seed (Scripts/test.sh uses 1, so CI explores the same way each run).
# New inputs that reach new code go to .build-fuzz/corpus/TARGET; a crashing input is saved as
# .build-fuzz/artifacts/TARGET-crash-… and the script fails: turn it into a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(briefcase csv json-table delta-json delta-binary row-stream expression dasql schema edits rule-tests update-data)
target=${1:?"usage: Scripts/fuzz.sh TARGET|all|core [SECONDS]; targets: ${targets[*]}"}
seconds=${2:-60}
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "SECONDS must be a whole number above 0, not '$seconds'" >&2; exit 64; }
case "$target" in
    all) selected=("${targets[@]}") ;;
    core) selected=("${targets[@]/update-data}") ;;
    *) selected=("$target") ;;
esac
# (Removing update-data leaves an empty name behind.)
names=()
for name in "${selected[@]}"; do [ -n "$name" ] && names+=("$name"); done
selected=("${names[@]}")
for name in "${selected[@]}"; do
    [ -d "Fuzz/Corpus/$name" ] || { echo "no fuzz target '$name'; targets: ${targets[*]}" >&2; exit 64; }
done

# Builds a fuzz package: PACKAGE-PATH SCRATCH-PATH.
build_fuzz_package() {
    mkdir -p "$2"
    # The package depends on the main one by path, and SwiftPM's incremental plan can miss a source
    # file added there; planning again is cheap.
    rm -f "$2/debug.yaml"
    # `--sanitize fuzzer --sanitize address` reaches swiftc as two -sanitize= flags in no fixed order, and
    # the last one wins: half the builds lost coverage or the address sanitizer. SwiftPM's --sanitize fuzzer
    # sets up the libFuzzer link; the one combined flag, passed last, makes every file carry both.
    if ! swift build --package-path "$1" --scratch-path "$2" --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address \
        > "$2/build.log" 2>&1; then
        grep -E "error:" "$2/build.log" >&2 || tail -40 "$2/build.log" >&2
        echo "the fuzz targets of $1 did not build" >&2
        exit 1
    fi
}
# The data server's target is built only when it is asked for: it links far more than the others.
needs_server=false; needs_core=false
for name in "${selected[@]}"; do
    if [ "$name" = update-data ]; then needs_server=true; else needs_core=true; fi
done
mkdir -p .build-fuzz
$needs_core && build_fuzz_package Fuzz .build-fuzz
$needs_server && build_fuzz_package Fuzz/Server .build-fuzz-server

# JavaScriptCore keeps caches for the life of the process: leak reports would be noise.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0
# Swift's own backtracer trips the address sanitizer while it reads a crashed process's stack, and
# its report hid the fatal error's message: the runtime's short stack trace says what failed.
export SWIFT_BACKTRACE=enable=no
for name in "${selected[@]}"; do
    corpus=.build-fuzz/corpus/$name
    mkdir -p "$corpus" .build-fuzz/artifacts
    echo "Fuzzing $name for $seconds s…"
    log=.build-fuzz/$name.log
    seed=()
    [ -n "${RELATA_FUZZ_SEED:-}" ] && seed=(-seed="$RELATA_FUZZ_SEED")
    binary=.build-fuzz/debug/fuzz-$name
    [ "$name" = update-data ] && binary=.build-fuzz-server/debug/fuzz-$name
    if ! "$binary" "$corpus" "Fuzz/Corpus/$name" "${seed[@]}" -max_total_time="$seconds" -timeout=20 \
        -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix=".build-fuzz/artifacts/$name-" > "$log" 2>&1; then
        tail -60 "$log" >&2
        echo "fuzz target $name found a crash; the input is in .build-fuzz/artifacts/" >&2
        exit 1
    fi
    if ! grep -q "INITED cov:" "$log"; then
        echo "fuzz target $name was built without coverage instrumentation: its run proves nothing" >&2
        exit 1
    fi
    echo "  $(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}') executions, $(grep -m1 'stat::new_units_added' "$log" | awk '{print $2}') new inputs, corpus $(ls "$corpus" | wc -l) files"
done
