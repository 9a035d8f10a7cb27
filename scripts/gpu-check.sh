#!/usr/bin/env bash
# On a machine with a GPU: build (or take a build made elsewhere), run the GPU
# tests, the compute-sanitizer setups and the benchmark presets, and write a
# dated report under benchmarks/results/.
#
#   scripts/gpu-check.sh                     build natively into build-gpu/
#   PA_BUILD_DIR=build-sm90 PA_CRITERION_LIBS=.carry/crit scripts/gpu-check.sh
#                                            use a prebuilt tree (e.g. built for sm_90
#                                            elsewhere) with Criterion's runtime libraries
#                                            beside it (../shared/tools/criterion-runtime.sh)
# Output: benchmarks/results/gpu-check-<date>-<device>.md (+ .json rows); also
# copied into $OUT when that is set.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${PA_BUILD_DIR:-build-gpu}
if [ -n "${PA_CRITERION_LIBS:-}" ]; then
    export LD_LIBRARY_PATH="$(cd "$PA_CRITERION_LIBS" && pwd):${LD_LIBRARY_PATH:-}"
fi
if [ ! -f "$BUILD/build.ninja" ]; then
    arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
    meson setup "$BUILD" -Dgpu_archs="$arch" >/dev/null || exit 1
fi
ninja -C "$BUILD" >/dev/null || exit 1

CLI="$BUILD/benchmarks/pagedattn"
dev=$("$CLI" info --json | python3 -c 'import json,sys; d=json.load(sys.stdin)["device"]; print((d or {}).get("name","none").replace(" ","-"))')
stamp=$(date -u +%Y-%m-%d)
mkdir -p benchmarks/results
report="benchmarks/results/gpu-check-$stamp-$dev.md"
json="benchmarks/results/gpu-check-$stamp-$dev.json"
: >"$json"
{
    echo "# GPU check $stamp"
    echo
    echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "- device: $("$CLI" info | sed -n 3,5p | tr '\n' ' ')"
    echo "- driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
    echo
    echo "## GPU tests"
    echo '```'
    meson test -C "$BUILD" --no-rebuild --suite gpu --print-errorlogs 2>&1 | tail -15
    echo '```'
    for tool in memcheck racecheck initcheck synccheck; do
        echo "## compute-sanitizer $tool"
        echo '```'
        meson test -C "$BUILD" --no-rebuild --suite gpu --setup="$tool" --print-errorlogs 2>&1 | tail -8
        echo '```'
    done
    echo "## checks"
    echo '```'
    for dt in f16 bf16 fp8_e4m3 fp8_e5m2; do "$CLI" check convert --dtype "$dt"; done
    echo '```'
    echo "## benchmarks"
    echo '```'
    "$CLI" bench convert --dtype bf16 --json "$json"
    echo '```'
} 2>&1 | tee "$report"
if [ -n "${OUT:-}" ]; then cp "$report" "$json" "$OUT"/ 2>/dev/null; fi
echo "report: $report"
