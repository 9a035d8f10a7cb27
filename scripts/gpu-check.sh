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
# Output: benchmarks/results/gpu-check-<date>-<device>.md (+ .json rows, and
# PNG charts of the llama3-8b sweep in plots-<date>-<device>/); also copied into
# $OUT when that is set.
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
plots="benchmarks/results/plots-$stamp-$dev"
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
    "$CLI" check baseline
    "$CLI" check baseline --layout nhd --dtype bf16 --window 100 --soft-cap 30 --ctx 2049
    "$CLI" check baseline --layout hnd --cache-dtype fp8_e4m3 --alibi --heads 8/1 --head-size 256
    for layout in vllm nhd hnd combined; do
        "$CLI" check cache --layout "$layout" --seqs 64 --qlen 37
        "$CLI" check cache --layout "$layout" --cache-dtype fp8_e4m3 --seqs 7 --qlen 113
    done
    echo '```'
    echo "## serve_loop (examples/serve_loop.c): continuous batching on the GPU vs unpaged attention"
    echo '```'
    # Built straight against this build tree (check-install.sh does the same
    # through an installed prefix and pkg-config).
    cuda_home=$(dirname "$(dirname "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")")
    if cc -O2 -std=c11 -Iinclude -I"$cuda_home/include" -o "$BUILD/serve_loop" examples/serve_loop.c \
        -L"$BUILD" -Wl,-rpath,"$(cd "$BUILD" && pwd)" -lpagedattn -L"$cuda_home/lib64" -lcudart -lm; then
        for args in "" "--dtype bf16" "--cache-dtype fp8_e4m3" "--window 40 --soft-cap 30"; do
            echo "\$ serve_loop --device both $args"
            "$BUILD/serve_loop" --device both $args
        done
    else
        echo "serve_loop: build failed"
    fi
    echo '```'
    echo "## benchmarks"
    echo '```'
    "$CLI" bench convert --dtype bf16 --json "$json"
    "$CLI" bench --preset llama3-8b --json "$json"
    echo '```'
    echo "## plots"
    echo '```'
    scripts/plot "$json" --out "$plots" || echo "(plots not made here: run scripts/plot $json where matplotlib is installed)"
    echo '```'
} 2>&1 | tee "$report"
if [ -n "${OUT:-}" ]; then
    cp "$report" "$json" "$OUT"/ 2>/dev/null
    [ -d "$plots" ] && cp -r "$plots" "$OUT"/ 2>/dev/null
fi
echo "report: $report"
