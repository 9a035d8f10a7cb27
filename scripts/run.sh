#!/usr/bin/env bash
# The main job: set up, build, and run the `pagedattn` CLI. On a machine
# without a GPU it says so and times the CPU reference instead.
#   scripts/run.sh            (build dir: build/, archs from PA_GPU_ARCHS, default 80;90a)
set -euo pipefail
cd "$(dirname "$0")/.." || exit 1
source scripts/deps.sh

BUILD=${PA_BUILD_DIR:-build}
ARCHS=${PA_GPU_ARCHS:-80;90a}
if [ ! -f "$BUILD/build.ninja" ]; then
    meson setup "$BUILD" -Dgpu_archs="$ARCHS" >/dev/null
else
    # an existing build takes PA_GPU_ARCHS (or the default) too, as scripts/test.sh
    # does; one configured by another Meson version is set up again
    meson configure "$BUILD" -Dgpu_archs="$ARCHS" >/dev/null 2>&1 ||
        meson setup --wipe "$BUILD" -Dgpu_archs="$ARCHS" >/dev/null
fi
ninja -C "$BUILD" >/dev/null

CLI="$BUILD/benchmarks/pagedattn"
"$CLI" info
echo
info_json=$("$CLI" info --json) # whole, before grep -q stops reading (pipefail)
if grep -q '"device": null' <<<"$info_json"; then
    "$CLI" check decode || true   # says plainly that it needs a GPU
    echo
    # The decode kernel's own CUDA source on the CPU (interpret mode), against
    # the CPU reference, with its memory-access proxies.
    "$CLI" check decode --interp || true
    echo
    # The Llama-3-8B preset's ops on the CPU reference over a small grid: the
    # table the GPU run prints, with CPU numbers (no roof, no baseline).
    "$CLI" bench --preset llama3-8b --device cpu
else
    "$CLI" check convert --dtype fp8_e4m3
    "$CLI" check cache --layout combined
    echo
    # Two batch sizes and two context lengths per op; scripts/gpu-check.sh runs
    # the full sweep and plots it.
    "$CLI" bench --preset llama3-8b --quick
fi
