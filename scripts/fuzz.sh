#!/usr/bin/env bash
# Bounded libFuzzer runs: the host layer (tests/fuzz/fuzz_host.c) and
# `pagedattn plan --json`'s reader (tests/fuzz/fuzz_plan_json.c).
#   scripts/fuzz.sh [seconds]     (default 60: the host layer's run; the
#                                  reader's gets a third of it, at least 10 s)
# Configures build-fuzz with clang and -Dfuzz=true if needed, builds the targets,
# runs each for its time and exits non-zero on a crash, leak, sanitizer
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
ninja -C build-fuzz tests/fuzz/fuzz_host tests/fuzz/fuzz_plan_json >/dev/null
mkdir -p build-fuzz/fuzz-artifacts
# run TARGET SECONDS: its own corpus under build-fuzz/, seeded from
# tests/fuzz/seeds/TARGET when there is one.
run() {
    local target=$1 t=$2 corpus=build-fuzz/fuzz-corpus-$1 log=build-fuzz/fuzz-$1.log
    [ "$target" = fuzz_host ] && corpus=build-fuzz/fuzz-corpus # (its corpus from before this script ran two)
    mkdir -p "$corpus"
    if [ -d "tests/fuzz/seeds/$target" ]; then
        cp -n tests/fuzz/seeds/"$target"/* "$corpus"/ 2>/dev/null || true
    fi
    if ./build-fuzz/tests/fuzz/"$target" -max_total_time="$t" -print_final_stats=1 \
        -artifact_prefix=build-fuzz/fuzz-artifacts/ "$corpus" >"$log" 2>&1; then
        echo "$target: $(grep -E '^Done' "$log" || tail -1 "$log")"
    else
        local rc=$?
        tail -60 "$log"
        return $rc
    fi
}
run fuzz_host "$secs"
third=$((secs / 3))
run fuzz_plan_json $((third < 10 ? 10 : third))
