#!/usr/bin/env bash
# Bounded libFuzzer run of the host layer (tests/fuzz/fuzz_host.c).
#   scripts/fuzz.sh [seconds]     (default 60)
# Configures build-fuzz with clang and -Dfuzz=true if needed, builds the target,
# runs it for the given time and exits non-zero on a crash, leak, sanitizer
# report or invariant failure (libFuzzer's exit status; the reproducer is left
# in build-fuzz/fuzz-artifacts/).
set -euo pipefail
secs="${1:-60}"
case "$secs" in '' | *[!0-9]*) echo "usage: $0 [seconds]" >&2; exit 2 ;; esac
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
if [ ! -f build-fuzz/build.ninja ]; then
    CC=clang meson setup build-fuzz -Dfuzz=true -Dtests=true -Dgpu_archs=90 >/dev/null
fi
ninja -C build-fuzz tests/fuzz/fuzz_host >/dev/null
mkdir -p build-fuzz/fuzz-corpus build-fuzz/fuzz-artifacts
log=build-fuzz/fuzz.log
if ./build-fuzz/tests/fuzz/fuzz_host -max_total_time="$secs" -print_final_stats=1 \
    -artifact_prefix=build-fuzz/fuzz-artifacts/ build-fuzz/fuzz-corpus >"$log" 2>&1; then
    grep -E '^Done|number_of_executed_units' "$log" || tail -3 "$log"
else
    rc=$?
    tail -60 "$log"
    exit $rc
fi
