#!/usr/bin/env bash
# The kernels under UndefinedBehaviorSanitizer: interpret mode built with
# -fsanitize=undefined (the kernels' own code included: signed overflow in
# index arithmetic, shifts past the width, misaligned vector loads, bad enum or
# bool loads, out-of-range float-to-int casts), then the GPU test programs run
# on the CPU over every kernel family, each test failing at the first report
# (halt_on_error). Not part of CI: it compiles interpret mode again (about 7
# minutes on two cores) and runs about 4 more. Run by hand after a kernel change
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
    meson setup "$dir" -Dgpu_archs=90 -Db_sanitize=undefined -Db_lundef=false -Dinterp_tsan=false \
        -Dfuzz=false -Dbuildtype=debugoptimized >/dev/null || exit 1
fi
progs="gpu_basic cache_ops decode ragged prefill"
ninja -C "$dir" $(for p in $progs; do printf 'tests/interp/test_%s_interp ' "$p"; done) || exit 1

# The interp-tsan suite's choice of tests (every kernel family, small), with
# decode's view and device-check tests, ragged's 64-bit offsets and bad device
# data, and prefill's tile paths, 64-bit offsets, bad device data and the
# Hopper kernel's head sizes, fp8 caches and persistent CTAs.
declare -A filter=(
    [gpu_basic]='*'
    [cache_ops]='*'
    [decode]='@(decode_random/*|decode_long/mqa_f32_e5m2_window|decode_fixed/*|decode_device_checks/*|decode_views/*)'
    [ragged]='@(ragged_gpu/random_configurations|ragged_gpu/num_seqs_below_max|ragged_gpu/soft_mask_value|ragged_gpu/head_256_slots|ragged_gpu/fp8_raw_slots|ragged_gpu/fp8_decode_query_range|ragged_gpu/prefill_tile_rows|ragged_gpu/decode_masks|ragged_gpu/odd_groups|ragged_gpu/fp8_head_sizes|ragged_gpu/forced_kv_splits|ragged_gpu/attention_sinks|ragged_gpu/odd_page_sizes|ragged_gpu/cache_offsets_past_32_bits|ragged_bad_gpu/*)'
    [prefill]='@(prefill_gpu/smallest_cases|prefill_gpu/head_sizes|prefill_gpu/cache_tile_paths|prefill_gpu/f32_queries|prefill_gpu/mask_tile_boundaries|prefill_gpu/cache_offsets_past_32_bits|prefill_gpu/padded_fp8_cache_rows|prefill_gpu/bad_device_data_skips_the_sequence|prefill_random/*|prefill_hopper/prompt_attention|prefill_hopper/context_attention|prefill_hopper/head_256|prefill_hopper/head_192|prefill_hopper/fp8_caches|prefill_hopper/persistent_ctas|prefill_hopper_fp8/*)'
)
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
