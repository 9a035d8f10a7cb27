#!/usr/bin/env bash
# The main job: set up, build, and run the `pagedattn` CLI. On a machine
# without a GPU it says so and times the CPU reference instead.
#   scripts/run.sh            (build dir: build/, archs from PA_GPU_ARCHS, default 80;90)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh

BUILD=${PA_BUILD_DIR:-build}
ARCHS=${PA_GPU_ARCHS:-80;90}
if [ ! -f "$BUILD/build.ninja" ]; then
    meson setup "$BUILD" -Dgpu_archs="$ARCHS" >/dev/null
fi
ninja -C "$BUILD" >/dev/null

CLI="$BUILD/benchmarks/pagedattn"
"$CLI" info
echo
if "$CLI" info --json | grep -q '"device": null'; then
    "$CLI" check decode || true   # says plainly that it needs a GPU
    echo
    "$CLI" bench decode --device cpu --preset llama3-8b --seqs 2 --ctx 256,1024 --iters 5
else
    "$CLI" check convert --dtype fp8_e4m3
    "$CLI" bench convert --dtype bf16
    "$CLI" bench decode --device cpu --preset llama3-8b --seqs 2 --ctx 256 --iters 3
fi
