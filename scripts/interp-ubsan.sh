#!/usr/bin/env bash
# The kernels under UndefinedBehaviorSanitizer: interpret mode built with
# -fsanitize=undefined (the kernels' own code included: signed overflow in
# index arithmetic, shifts past the width, misaligned vector loads, bad enum or
# bool loads, out-of-range float-to-int casts), then the GPU test programs run
# on the CPU over every kernel family, each test failing at the first report
# (halt_on_error). Not part of CI: it compiles interpret mode again (about 7
# minutes on two cores) and runs about 5 more. Run by hand after a kernel change
# whose index arithmetic moves:
#   scripts/interp-ubsan.sh [BUILD_DIR]   (default build-ubsan)
# A planted `1 << 40` in copy_blocks_kernel fails cache_ops' copy_blocks tests
# with "runtime error: shift exponent 40 is too large" (2026-11-30).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source scripts/deps.sh || exit 1
set +e
dir=${1:-build-ubsan}
if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" -Dgpu_archs=90 -Db_sanitize=undefined -Db_lundef=false \
        -Dfuzz=false -Dbuildtype=debugoptimized >/dev/null || exit 1
fi
progs="gpu_basic cache_ops decode ragged prefill"
targets=()
for p in $progs; do targets+=("tests/interp/test_${p}_interp"); done
ninja -C "$dir" "${targets[@]}" || exit 1

# The interp-tsan suite's choice of tests (every kernel family, small; read from
# tests/interp/meson.build, its programs are not built here), with decode's view
# and device-check tests, ragged's and prefill's 64-bit offsets and bad device data.
declare -A extra=(
    [decode]='decode_device_checks/*|decode_views/*'
    [ragged]='ragged_gpu/cache_offsets_past_32_bits|ragged_bad_gpu/*'
    [prefill]='prefill_gpu/cache_offsets_past_32_bits|prefill_gpu/bad_device_data_skips_the_sequence'
)
declare -A filter
while read -r p f; do
    inner=${f#@(}
    [ "$inner" = "$f" ] || f="@(${inner%)}${extra[$p]:+|${extra[$p]}})"
    filter[$p]=$f
done < <(meson introspect "$dir" --tests | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if "interp-tsan" in t["suite"][0] and t["name"].endswith("_interp_tsan"):
        f = [a for a in t["cmd"] if a.startswith("--filter=")]
        if f:
            print(t["name"][len("test_"):-len("_interp_tsan")], f[0][len("--filter="):])')
for p in $progs; do
    [ -n "${filter[$p]:-}" ] || { echo "interp-ubsan: no interp-tsan filter for test_$p in $dir (interp_tsan off?)"; exit 1; }
done
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 PA_TEST_MAX_CASES=6 PA_TEST_RANDOM_SEED=3 PA_TEST_RANDOM_CASES=3
status=0
for p in $progs; do
    log="$dir/ubsan-$p.log"
    start=$(date +%s)
    "$dir/tests/interp/test_${p}_interp" -j2 "--filter=${filter[$p]}" >"$log" 2>&1
    rc=$?
    reports=$(grep -c 'runtime error' "$log")
    echo "interp-ubsan test_$p: $(grep -E '^\[====\] Synthesis' "$log" | tail -1) ($reports runtime errors, $(($(date +%s) - start)) s)"
    if [ $rc -ne 0 ] || [ "$reports" -ne 0 ]; then
        grep -m5 'runtime error' "$log"
        status=1
    fi
done
exit $status
