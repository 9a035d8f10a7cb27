#!/usr/bin/env bash
# Evidence that interpret mode can fail: plants realistic bugs in the real
# kernel sources, one at a time, rebuilds the interpret-mode test program that
# should catch it, runs the named tests, and reverts (the build is made from
# the reverted sources again at the end). Each bug must make the run fail; the
# script prints which detector caught it and exits 1 if any bug survived.
# Manual (all of it: about 37 minutes on 2 cores); results are recorded in
# tests/interp/README.md.
#
#   scripts/plant-bugs.sh [BUILD]        (default build; configured with -Dinterp=true)
#   PLANT_ONLY='prefill-*' scripts/plant-bugs.sh    only the plants whose name matches the glob
#                                                  (extended globs: '@(name-a|name-b)')
#   PLANT_CHECK=1 scripts/plant-bugs.sh  only checks that each plant still finds its text exactly
#                                        once and that one of CI's runs holds its tests (no file is
#                                        touched, nothing built, BUILD's programs listed; seconds;
#                                        run by scripts/test.sh, so neither a kernel edit nor a CI
#                                        filter can leave a plant stale)
set -uo pipefail
shopt -s extglob
cd "$(dirname "$0")/.." || exit 1
BUILD=${1:-build}
survived=0
plants=$(mktemp) # PLANT_CHECK=1: every plant, for scripts/plant_runs.py
# An interrupted run reverts the file it has planted (after the program it
# waits on ends; Ctrl-C ends both at once).
planted=""
revert() {
    if [ -n "$planted" ]; then
        mv "$planted.plant-bak" "$planted" && touch "$planted"
        planted=""
    fi
}
trap 'revert; rm -f "$plants"' EXIT
trap 'exit 130' INT TERM
# A run killed outright (SIGKILL, or the machine gone: no trap runs) leaves its planted source
# beside the original's .plant-bak. A new run puts the original back before it plants anything;
# PLANT_CHECK=1, which touches no file, counts the planted source as a stale plant.
while IFS= read -r -d '' bak; do
    if [ "${PLANT_CHECK:-0}" = 1 ]; then
        echo "SETUP FAILED  ${bak%.plant-bak} still holds a plant (its original is $bak; a run without PLANT_CHECK restores it)"
        survived=$((survived + 1))
    else
        planted=${bak%.plant-bak}
        revert && echo "plant-bugs: ${bak%.plant-bak} held a plant an earlier run left behind: restored"
    fi
done < <(git ls-files -z --others --exclude-standard -- '*.plant-bak')

# plant NAME FILE 'old text' 'new text' PROGRAM FILTER [SETTING...]
# PROGRAM test_x is tests/interp/test_x_interp; test_x:tsan its ThreadSanitizer
# build, tests/interp/test_x_interp_tsan. The plant runs FILTER's tests as CI
# would (since 2026-12-03; the ThreadSanitizer plants first): in each of CI's
# runs of the program (meson's tests of it) whose environment holds every
# SETTING (NAME=VALUE) and whose filter selects every one of FILTER's tests, in
# that run's environment (PA_TEST_RACES_ONLY's cuts, PA_TEST_MAX_CASES, the CTAs
# under way, the schedule), until one fails (scripts/plant_runs.py finds them).
# A caught plant so shows CI catching the bug, not only the full-size tests; a
# plant no CI run fits is a setup failure, and PLANT_CHECK=1 reports it too.
# PROGRAM pagedattn-interp: FILTER is a glob over the names of CI's tests that
# run the CLI on the interpreter (pagedattn_check_*_interp, the CLI sweep).
plant() {
    local name=$1 file=$2 old=$3 new=$4 prog=$5 filter=$6
    shift 6
    # shellcheck disable=SC2053
    [[ -n "${PLANT_ONLY:-}" && $name != $PLANT_ONLY ]] && return
    # The old text must occur exactly once; it is replaced unless PLANT_CHECK=1.
    local check=${PLANT_CHECK:-0}
    [ "$check" = 1 ] || { cp "$file" "$file.plant-bak" && planted=$file; }
    if ! python3 - "$file" "$old" "$new" "$check" <<'EOF'; then
import sys
path, old, new, check = sys.argv[1:5]
s = open(path).read()
if s.count(old) != 1:
    sys.exit(f"plant: expected exactly one '{old}' in {path}, found {s.count(old)}")
if check != "1":
    open(path, "w").write(s.replace(old, new))
EOF
        [ "$check" = 1 ] || revert
        echo "SETUP FAILED  $name"
        survived=$((survived + 1))
        return
    fi
    local exe="tests/interp/${prog%:tsan}_interp"
    [ "${prog%:tsan}" != "$prog" ] && exe="${exe}_tsan"
    [ "$prog" = pagedattn-interp ] && exe=tests/interp/pagedattn-interp
    # The plant as scripts/plant_runs.py reads it.
    local line
    line=$(printf '%s\x1f%s\x1f%s\x1f%s' "$name" "$exe" "$filter" "$*")
    if [ "$check" = 1 ]; then
        echo "$line" >>"$plants"
        return
    fi
    local log=/tmp/plant-$name.log verdict rc tried=""
    if ! ninja -C "$BUILD" "$exe" >"$log" 2>&1; then
        verdict="caught (does not compile)"
    else
        # In each of CI's runs that fits the plant, until one fails.
        local fits rname renv rcmd cmd envw ran=""
        fits=$(python3 scripts/plant_runs.py "$BUILD" <<<"$line")
        rc=-1
        while IFS=$'\x1f' read -r _ rname renv rcmd; do
            if [ "$rname" = - ]; then
                echo "$rcmd" >"$log"
                break
            fi
            ran="$ran $rname"
            read -ra envw <<<"$renv" # NAME=VALUE words (read splits them; no glob)
            IFS=$'\x1e' read -ra cmd <<<"$rcmd"
            env "${envw[@]}" timeout 900 "${cmd[@]}" >"$log" 2>&1
            rc=$?
            [ $rc -eq 0 ] || break
        done <<<"$fits"
        if [ $rc -eq 0 ]; then
            tried=" [passed CI's${ran}]"
        elif [ -n "$ran" ]; then
            tried=" [in CI's ${ran##* }]"
        fi
        if [ $rc -eq -1 ]; then
            verdict="SETUP FAILED ($(tail -1 "$log" | cut -c1-100))"
            survived=$((survived + 1))
        elif [ $rc -eq 0 ]; then
            verdict="SURVIVED"
            survived=$((survived + 1))
        elif grep -q "ThreadSanitizer: data race" "$log"; then
            verdict="caught by ThreadSanitizer: $(grep -m1 -o 'data race .* in [^(]*' "$log" | sed 's/(.*) //' | sed 's/.* in /data race in /')"
        elif grep -q "pa_interp:" "$log"; then
            verdict="caught by the interpreter: $(grep -m1 -o 'pa_interp: .*' "$log" | cut -c1-90)"
        elif grep -q "runtime error: .*misaligned address" "$log"; then # the plain build's alignment check
            verdict="caught by the alignment check: $(grep -m1 -oE '[^/ ]+:[0-9]+:[0-9]+: runtime error: [a-z ]*misaligned address' "$log")"
        elif grep -qE "SIGSEGV|Segmentation|: CRASH!" "$log"; then
            verdict="caught: out-of-bounds access (guard page)"
        elif [ $rc -gt 128 ] && [ $rc -ne 137 ]; then # (timeout's 124 and 137: not a crash)
            verdict="caught: the program died of signal $((rc - 128))"
        elif [ "$prog" = pagedattn-interp ]; then
            local what
            what=$(grep -m1 -B1 ': FAIL$' "$log" | head -1 | cut -c1-110)
            [ -n "$what" ] || what=$(grep -m1 -E 'error|failed' "$log" | cut -c1-110)
            verdict="caught by $what"
        else
            local why
            why=$(grep -m1 -A2 'Assertion Failed' "$log" | tail -1 | sed 's/^\[----\] *//' | grep -oE '[0-9]+ of [0-9]+ outside[^(]*\([^)]*\)' | head -1)
            [ -n "$why" ] || why=$(grep -m1 -A2 'Assertion Failed' "$log" | tail -1 | sed 's/^\[----\] *//' | cut -c1-90)
            verdict="caught by $(grep -m1 -oE '^\[FAIL\] [^ ]*' "$log" | cut -c8- | sed 's/:$//'): $why"
        fi
    fi
    revert # (touched: newer than the planted build, so the next build recompiles it)
    printf '%-34s %s%s\n' "$name" "$verdict" "$tried"
}

# The missing barrier before the output staging is planted only for the
# ThreadSanitizer build (prefill-no-barrier-before-staging-tsan, below). Under
# PA_INTERP_SCHED=random the lock-step interpreter shows it only when another
# warp lands its Q copies between a warp's staging store and its read-back. At
# 32 rows per warp, the finalize has 8 shuffles where another warp can run
# first, so that window became too rare: the plant survived on 2026-11-23.
plant prefill-causal-off-by-one cuda/prefill/prefill_kernel.cuh \
    '(causal && kp > qp)' '(causal && kp > qp + 1)' test_prefill 'prefill_gpu/smallest_cases'
# Found by a blind mutation pass on 2026-12-02, each surviving every test until the test named
# with it was written:
#  - the window's edge test for a tile one key late (row - key > window): it matters only on an
#    interior tile's first key, which no test reached (mask_tile_boundaries puts the edge on a
#    tile's last columns);
#  - the scale folded into the exponent whatever its sign (mma.sync, Hopper, ragged): the max of
#    the raw dots is then the smallest logit; no test had a negative softmax scale, which the
#    API allows (any finite number);
#  - the f32 kernel's new V rows at K's stride: every test's K and V strides were equal;
#  - block-sparse's tensor-parallel rank term dropped: with both drawn from the seed's low
#    bits, every odd rank came with vertical stride 2 and an even head count.
plant prefill-window-edge-tile-one-late cuda/prefill/prefill_kernel.cuh \
    '(window > 0 && walk.qpos_hi - ks >= window)' '(window > 0 && walk.qpos_hi - ks > window)' \
    test_prefill 'prefill_gpu/window_edge_on_an_interior_tile'
# Written with its test on 2026-12-07 (prefill.h: a sequence with any context block id out of
# range is skipped, read or not): the block check starting past block 0 when a window is set, so
# a bad id wholly before the window goes unseen and the sequence runs (every kernel's check).
plant prefill-block-check-skips-pre-window-blocks cuda/prefill/prefill_kernel.cuh \
    'for (int i = threadIdx.x; i < nb; i += THREADS) {' \
    'for (int i = threadIdx.x + (p.window > 0); i < nb; i += THREADS) {' \
    test_prefill 'prefill_gpu/bad_block_id_before_the_window_skips_the_sequence'
plant prefill-folds-a-negative-scale cuda/prefill/prefill_kernel.cuh \
    'const bool plain = !edge && !alibi && !(cap > 0.0f) && tscale > 0.0f;' \
    'const bool plain = !edge && !alibi && !(cap > 0.0f);' \
    test_prefill 'prefill_gpu/negative_and_zero_scales'
plant hopper-folds-a-negative-scale cuda/prefill/prefill_wgmma.cuh \
    'auto folds = [&](float ls) { return !alibi && !(cap > 0.0f) && ls > 0.0f; };' \
    'auto folds = [&](float ls) { return !alibi && !(cap > 0.0f); };' \
    test_prefill 'prefill_hopper/negative_and_zero_scales'
plant ragged-folds-a-negative-scale cuda/ragged/ragged_mma.cuh \
    'const bool fold = !(P.soft_cap > 0.0f) && sc.qk > 0.0f;' 'const bool fold = !(P.soft_cap > 0.0f);' \
    test_ragged 'ragged_gpu/negative_and_zero_scales'
plant prefill-f32-v-rows-at-k-stride cuda/prefill/prefill_f32.cu \
    'vo = row * p.v_stride + (int64_t)kvh * hs;' 'vo = row * p.k_stride + (int64_t)kvh * hs;' \
    test_prefill 'prefill_gpu/strided_and_unaligned_sources'
plant decode-sparse-rank-term-dropped cuda/decode/decode_kernel.cuh \
    '? ((int64_t)p.tp_rank * p.num_heads + h) * p.bs_step + 1' '? ((int64_t)h) * p.bs_step + 1' \
    test_decode 'decode_features/block_sparse'
# The ragged planner and loader on device data past ragged.h's bounds (the same pass; each
# survived until ragged_gpu/out_of_range_device_data_is_skipped or bad_page_ids_read_as_zeros):
# a page id one past the pool taken as valid, a sequence starting inside an earlier one's rows
# planned, num_seqs past max_num_seqs not clamped.
plant ragged-page-id-one-past-the-pool cuda/ragged/ragged_common.cuh \
    'if ((unsigned)blk >= (unsigned)P.num_pages)' 'if ((unsigned)blk > (unsigned)P.num_pages)' \
    test_ragged 'ragged_gpu/bad_page_ids_read_as_zeros'
plant ragged-plan-takes-overlapping-rows cuda/ragged/ragged.cu \
    'if (in && q0 >= prev_end) {' 'if (in) {' \
    test_ragged 'ragged_gpu/out_of_range_device_data_is_skipped'
plant ragged-plan-num-seqs-unclamped cuda/ragged/ragged.cu \
    'ns = ns < 0 ? 0 : (ns > P.max_num_seqs ? P.max_num_seqs : ns);' 'ns = ns < 0 ? 0 : ns;' \
    test_ragged 'ragged_gpu/out_of_range_device_data_is_skipped'
# A chunk's partial log-sum-exp stored by a row's second 8-column group instead of its first: the
# same value at every head of 16 or more; at head 8 there is no second group (survived the
# 2026-12-02 mutation pass until forced_kv_splits ran head 8).
plant ragged-partial-lse-by-the-second-group cuda/ragged/ragged_common.cuh \
    'if (cg == 0)
                pl[c.it.part + r] = lse;' 'if (cg == 1)
                pl[c.it.part + r] = lse;' \
    test_ragged 'ragged_gpu/forced_kv_splits'
plant prefill-window-off-by-one cuda/prefill/prefill_kernel.cuh \
    'return window > 0 && (qp - kp >= window ||' 'return window > 0 && (qp - kp > window ||' \
    test_prefill 'prefill_gpu/prompt_attention_types'
# The far side of a non-causal window (2026-12-06: vLLM's (W - 1, W - 1) for encoder layers) one key
# late, its ALiBi the causal formula again, and the edge tests blind to the far side (far_key without
# the window: mma.sync's edge test and the Hopper kernel's, and its whole tiles, since 2026-12-06,
# eleventh session), or one key late there.
plant prefill-window-far-side-off-by-one cuda/prefill/prefill_kernel.cuh \
    '|| kp - qp >= window);' '|| kp - qp > window);' \
    test_prefill 'prefill_gpu/prompt_masks_and_alibi_by_hand'
plant prefill-noncausal-alibi-signed cuda/prefill/prefill_kernel.cuh \
    'x -= slope_tab[r] * fabsf((float)(kp - qp));' 'x += slope_tab[r] * (float)(kp - qp);' \
    test_prefill 'prefill_gpu/prompt_masks_and_alibi_by_hand'
plant prefill-edge-tile-misses-the-far-side cuda/prefill/prefill_kernel.cuh \
    'return window > 0 ? (int)min((int64_t)qpos_lo + window - 1, (int64_t)INT_MAX) : INT_MAX;' 'return INT_MAX;' \
    test_prefill 'prefill_gpu/noncausal_window_wider_than_a_cta'
plant prefill-far-key-one-late cuda/prefill/prefill_kernel.cuh \
    '(int)min((int64_t)qpos_lo + window - 1, (int64_t)INT_MAX)' '(int)min((int64_t)qpos_lo + window, (int64_t)INT_MAX)' \
    test_prefill 'prefill_gpu/noncausal_window_wider_than_a_cta'
# Rows that start before an earlier sequence's end (2026-12-06, thirteenth session): the shared
# check blind to it, the Hopper producers' verdict without it, the f32 kernel checking it in context
# mode only.
plant prefill-rows-overlap-unchecked cuda/prefill/prefill_kernel.cuh \
    'bad |= p.cu_q[i] > q0;' 'bad |= p.cu_q[i] > q0 + 1000;' \
    test_prefill 'prefill_gpu/bad_device_data_skips_the_sequence'
plant hopper-rows-overlap-unchecked cuda/prefill/prefill_wgmma.cuh \
    'int bad = pa_prefill::seq_bad_share<128>(p, s, sq);' \
    'int bad = p.mode == PA_PREFILL_MODE_CONTEXT ? pa_prefill::blocks_bad_share<128>(p, s, sq.n_cache) : 0;' \
    test_prefill 'prefill_hopper/persistent_cta_skips_bad_sequences'
# The Hopper producers' verdict over their 128 threads (2026-12-07 kernel mutation pass): warp 3's
# share left out, or each warp's reduction over 16 lanes; every bad id of the other tests was a
# sequence's first, which warp 0's lane 0 reads.
plant hopper-producer-verdict-without-warp-3 cuda/prefill/prefill_wgmma.cuh \
    'ok = !(bw[0] | bw[1] | bw[2] | bw[3]);' 'ok = !(bw[0] | bw[1] | bw[2]);' \
    test_prefill 'prefill_gpu/bad_block_id_late_in_the_table_skips_the_sequence'
plant hopper-producer-verdict-over-half-warps cuda/prefill/prefill_wgmma.cuh \
    'for (int o = 16; o > 0; o >>= 1)
                bad |= __shfl_xor_sync' 'for (int o = 8; o > 0; o >>= 1)
                bad |= __shfl_xor_sync' \
    test_prefill 'prefill_gpu/bad_block_id_late_in_the_table_skips_the_sequence'
plant prefill-f32-prompt-rows-overlap-unchecked cuda/prefill/prefill_f32.cu \
    'if (!pa_prefill::seq_ok<kWarps * 32>(p, s, sq))' \
    'if (p.mode == PA_PREFILL_MODE_CONTEXT && !pa_prefill::seq_ok<kWarps * 32>(p, s, sq))' \
    test_prefill 'prefill_gpu/prompt_overlapping_sequences_are_skipped'
# The Hopper kernel's non-causal forms (2026-12-06, eleventh session): ALiBi's causal slope, the window's
# near side alone on the general path, and the folded edge mask's far side at the segment's end.
plant hopper-noncausal-alibi-signed cuda/prefill/prefill_wgmma.cuh \
    'x -= slope[h] * fabsf((float)(kp - qp));' 'x += slope[h] * (float)(kp - qp);' \
    test_prefill 'prefill_gpu/prompt_masks_and_alibi_by_hand'
plant hopper-noncausal-general-mask-near-side-only cuda/prefill/prefill_wgmma.cuh \
    'const int fwd = causal ? 1 : window > 0 ? window : INT_MAX;' 'const int fwd = causal ? 1 : INT_MAX;' \
    test_prefill 'prefill_hopper/prompt_attention'
plant hopper-noncausal-folded-mask-near-side-only cuda/prefill/prefill_wgmma.cuh \
    'qpos[h] + min(window, ke - qpos[h])) - c0;' 'ke) - c0;' \
    test_prefill 'prefill_gpu/prompt_masks_and_alibi_by_hand'
# The causal clause of a tile's edge test judged by the tile's first key instead of its last (the
# tile that crosses the CTA's first row's diagonal taken as interior). Until 2026-11-28 this plant
# moved the clause by one key (ks + BN - 2): since new-key tiles start at the segment's first query
# position and CTAs hold 128 rows, that case needs a CTA's first token 62 past a tile start (mod
# 64), which no realistic group reaches, and the plant survived every test.
plant prefill-edge-tile-by-first-key cuda/prefill/prefill_kernel.cuh \
    'ks + BN - 1 > walk.far' 'ks > walk.far' \
    test_prefill 'prefill_gpu/mask_tile_boundaries'
plant prefill-copy-ignores-head-size cuda/attn_tile.cuh \
    'const bool in = c * 8 < head_size;' 'const bool in = c * 8 < C::HP;' test_prefill 'prefill_gpu/head_sizes'
plant prefill-second-row-block-reads-first-q cuda/attn_tile.cuh \
    'ldmatrix_x4(a[mt], qa + mt * 16 * C::kStride + kk * 16);' 'ldmatrix_x4(a[mt], qa + kk * 16);' \
    test_prefill 'prefill_gpu/smallest_cases'
plant prefill-pv-drops-last-columns cuda/attn_tile.cuh \
    'if (j == C::kNO - 2 && j * 8 >= head_size)' 'if (j == C::kNO - 2 && j * 8 + 8 >= head_size)' \
    test_prefill 'prefill_gpu/head_sizes'
plant prefill-sums-not-parked cuda/prefill/prefill_kernel.cuh \
    '        sm.park_sums(sums_tab[threadIdx.x].v);
' '' test_prefill 'prefill_gpu/smallest_cases'
plant prefill-strided-row-past-tile cuda/prefill/prefill_kernel.cuh \
    'const bool ok = in && P * j < left;' 'const bool ok = in && P * j <= left;' test_prefill \
    'prefill_gpu/smallest_cases'
# Cache tiles copied in runs of slots (copy_rows_runs): runs across a block's
# end (block 3), and a vLLM key run stepped by whole rows.
plant prefill-runs-any-block-size cuda/prefill/prefill_kernel.cuh \
    'if (p.cache_k == PA_PREFILL_K_ASYNC && p.g.block_size % kCacheRun == 0)' \
    'if (p.cache_k == PA_PREFILL_K_ASYNC)' test_prefill 'prefill_gpu/block_sizes_and_layouts'
plant prefill-runs-vllm-key-step cuda/prefill/prefill_kernel.cuh \
    'C::k_tile(smem, st), k, p.kl.k_tok, n_keys' 'C::k_tile(smem, st), k, p.kl.v_tok, n_keys' test_prefill \
    'prefill_gpu/cache_tile_paths'
plant prefill-runs-team-first-row cuda/prefill/prefill_kernel.cuh \
    '(r0 / P) * S + q;' '(r0 / P) * S;' test_prefill 'prefill_gpu/cache_tile_paths'
# The row offsets' linear form (kv_index.h pa_kv_linear): keys stepped by the values' token stride.
plant prefill-linear-key-token-stride cuda/prefill/prefill_kernel.cuh \
    'ko = row + (int64_t)slot * p.kl.k_tok;' 'ko = row + (int64_t)slot * p.kl.v_tok;' test_prefill \
    'prefill_gpu/cache_tile_paths'
plant prefill-runs-round-past-tile cuda/prefill/prefill_kernel.cuh \
    'if (ROWS % (NT * S) != 0 && row - q >= ROWS)' 'if (ROWS % (NT * S) != 0 && row - q > ROWS)' test_prefill \
    'prefill_gpu/cache_runs_every_head_class'
# Cache tile paths: vLLM's value tile copied transposed, raw fp8 staging.
plant prefill-vt-read-as-key-rows cuda/prefill/prefill_kernel.cuh \
    'pa::tile::pv<C, true>(o, pk, C::v_tile(smem, st), hs);' 'pa::tile::pv<C>(o, pk, C::v_tile(smem, st), hs);' \
    test_prefill 'prefill_gpu/cache_tile_paths'
plant prefill-vt-chunk-past-last-key cuda/prefill/prefill_kernel.cuh \
    'const int n = min(EPC, n_keys - c * EPC);' 'const int n = n_keys > c * EPC ? EPC : 0;' \
    test_prefill 'prefill_gpu/cache_tile_paths'
plant prefill-walk-start-not-rounded cuda/prefill/prefill_kernel.cuh \
    'const int k_begin = (p.window > 0 && qpos_lo >= p.window ? qpos_lo - p.window + 1 : 0) & ~15;' \
    'const int k_begin = (p.window > 0 && qpos_lo >= p.window ? qpos_lo - p.window + 1 : 0) & ~7;' \
    test_prefill 'prefill_gpu/cache_tile_paths'
plant prefill-walk-start-not-rounded-2 cuda/prefill/prefill_kernel.cuh \
    'k.k_begin = (p.window > 0 && k.qpos_lo >= p.window ? k.qpos_lo - p.window + 1 : 0) & ~15;' \
    'k.k_begin = (p.window > 0 && k.qpos_lo >= p.window ? k.qpos_lo - p.window + 1 : 0) & ~7;' \
    test_prefill '@(prefill_hopper/*|prefill_hopper_fp8/*)'
plant prefill-raw-v-scale-dropped cuda/prefill/prefill_kernel.cuh \
    'const float vs = src_tab[1].scale;' 'const float vs = 1.0f;' test_prefill 'prefill_gpu/cache_tile_paths'
plant prefill-fp8-k-scale-dropped cuda/prefill/prefill_kernel.cuh \
    'k8 ? p.scale * k_scale : p.scale' 'p.scale' test_prefill 'prefill_gpu/cache_tile_paths'
# The register path's cache tiles without k_scale on their scores (their keys
# converted exactly since bfa1104, so the scale must be there).
plant prefill-fp8-register-k-scale-dropped cuda/prefill/prefill_kernel.cuh \
    'k8 ? p.scale * k_scale : p.scale' 'raw && k8 ? p.scale * k_scale : p.scale' \
    test_prefill 'prefill_gpu/fp8_keys_exact_on_the_register_path'
plant prefill-raw-head-tail-chunk-whole cuda/prefill/prefill_kernel.cuh \
    'const int n = min(16, head_size - 16 * c);' 'const int n = head_size > 16 * c ? 16 : 0;' \
    test_prefill 'prefill_gpu/padded_fp8_cache_rows'
# Copies land at issue here (PA_INTERP_CP=issue): the first new-key tile,
# issued before the last raw tile is dequantised, overwrites its staging.
plant prefill-raw-first-new-tile-early cuda/prefill/prefill_kernel.cuh \
    'const bool late = walk.raw && t + 1 == walk.nt_c;' 'const bool late = false;' \
    test_prefill 'prefill_gpu/cache_tile_paths' PA_INTERP_CP=issue
plant mma-fragment-swap cuda/ptx.cuh \
    'A[g + 8][q + k] = half_to_double<DT>((uint16_t)(a[t][1] >> s));' \
    'A[g + 8][q + k] = half_to_double<DT>((uint16_t)(a[t][2] >> s));' test_prefill 'prefill_gpu/smallest_cases'
# The e4m3 high pair's twin (what interpret mode runs for cvt.rn.f16x2.e4m3x2 of a register's
# upper half): a wrong mantissa reaches every e4m3 decode tile; a wrong subnormal exponent only
# the subnormal test (it survived decode_fixed/tensor_core, whose cache values are rarely
# subnormal and, where they are, within its tolerance).
plant ptx-e4m3-hi-mantissa cuda/ptx.cuh \
    'return (uint16_t)(sign | ((e + 8u) << 10) | (m << 7));' 'return (uint16_t)(sign | ((e + 8u) << 10) | (m << 6));' \
    test_decode 'decode_fixed/tensor_core'
plant ptx-e4m3-hi-subnormal-exponent cuda/ptx.cuh \
    'return (uint16_t)(sign | ((p + 6u) << 10) | ((m << (10u - p)) & 1023u));' \
    'return (uint16_t)(sign | ((p + 7u) << 10) | ((m << (10u - p)) & 1023u));' \
    test_decode 'decode_features/fp8_subnormals_exact'
# The cuBLAS baseline, the second reference of large shapes: a sink left out of
# the softmax's sum, the KV head's sink read for a query head, a window one key
# too wide, cross-attention mapped as causal.
plant baseline-sink-not-in-sum benchmarks/baseline.cu \
    '        sum += __expf(sink - mx);' '        sum += 0.0f;' \
    pagedattn-interp 'pagedattn_check_baseline_*'
plant baseline-sink-of-the-kv-head benchmarks/baseline.cu \
    'sink = mk.sinks ? mk.sinks[h] : -INFINITY;' 'sink = mk.sinks ? mk.sinks[kvh] : -INFINITY;' \
    pagedattn-interp 'pagedattn_check_baseline_*'
plant baseline-window-off-by-one benchmarks/baseline.cu \
    '(mk.window <= 0 || (q_pos - k < mk.window' '(mk.window <= 0 || (q_pos - k <= mk.window' \
    pagedattn-interp 'pagedattn_check_baseline_*'
plant baseline-cross-taken-causal benchmarks/baseline.cu \
    'pb->non_causal = dev->attn_type != PA_ATTN_DECODER;' 'pb->non_causal = dev->attn_type == PA_ATTN_ENCODER;' \
    pagedattn-interp 'pagedattn_check_baseline_*'
plant prefill-skip-cp-async-wait cuda/prefill/prefill_kernel.cuh \
    '        pa::tile::cp_async_wait<1>();
        __syncthreads();' '        __syncthreads();' test_prefill 'prefill_gpu/smallest_cases'
# Each decode launch setting the kernel's dynamic shared-memory attribute to its own bytes (before
# 2026-12-05, seventh session): a smaller launch lowers it under another host thread's larger one,
# which fails; interpret mode aborts on the lowering.
plant decode-smem-attribute-per-launch cuda/decode/decode_launch.cuh \
    'cudaFuncAttributeMaxDynamicSharedMemorySize, PA_DEC_SMEM_ATTR);' 'cudaFuncAttributeMaxDynamicSharedMemorySize, kp->smem_bytes);' \
    test_decode 'decode_fixed/one_kernel_at_two_shared_memory_sizes'
plant decode-wrong-page-index cuda/decode/decode_kernel.cuh \
    'const int32_t *tab = reinterpret_cast<const int32_t *>(c.smem + p.off_tab);' \
    'const int32_t *tab = reinterpret_cast<const int32_t *>(c.smem + p.off_tab) + 1;' \
    test_decode 'decode_@(device_checks|graph)/*'
# The split (CUDA-core) kernel's plants run against a grid test that reaches it (head 80): they
# named decode_graph/*, whose shape (bf16, head 128, group 8) went to the tensor-core kernel on
# 2026-11-23, and survived there since (found 2026-11-28).
plant decode-shuffle-wrong-lane cuda/decode/decode_kernel.cuh \
    'sum += shfl_xor(sum, o);' 'sum += shfl_xor(sum, o / 2 + (o == 1));' test_decode 'decode_grid/head_size_80'
plant decode-no-pipeline-barrier cuda/decode/decode_kernel.cuh \
    '        bar(); // tile `it` visible to all; stage (it - 1) % NS free' '' test_decode 'decode_grid/head_size_80'
plant decode-vllm-key-chunk-stride cuda/decode/decode_kernel.cuh \
    'return (b >> 4) * p.k_chunk_bytes + (b & 15);' 'return (b >> 4) * 16 + (b & 15);' \
    test_decode 'decode_grid/head_size_128'
plant decode-pv-slice-skips-tokens cuda/decode/decode_kernel.cuh \
    'const int t = pr + r * geo.pv_slices;' 'const int t = pr + r * (geo.pv_slices + 1);' \
    test_decode 'decode_grid/head_size_80'
plant decode-fixed-ng1-not-launched cuda/decode/decode_launch.cuh \
    'return launch_kernel(decode_split_kernel<QT, CT, FixGeo<128, CT, 1>>, kp, s);' 'return 0;' \
    test_decode 'decode_fixed/*'
plant decode-fixed-ng2-gets-ng1-geometry cuda/decode/decode_launch.cuh \
    'return launch_kernel(decode_split_kernel<QT, CT, FixGeo<128, CT, 2>>, kp, s);' \
    'return launch_kernel(decode_split_kernel<QT, CT, FixGeo<128, CT, 1>>, kp, s);' test_decode 'decode_fixed/*'
plant decode-mma-v-token-pairs-swapped cuda/decode/decode_mma.cuh \
    'vtok[i] = tw + 16 * m + 2 * qc + (i & 1) + 8 * (i >> 1);' 'vtok[i] = tw + 16 * m + 2 * qc + (i >> 1) + 8 * (i & 1);' \
    test_decode 'decode_fixed/tensor_core'
plant decode-mma-16bit-v-fragment-swapped cuda/decode/decode_mma.cuh \
    'const uint32_t a[4] = {r[0][2 * s], r[0][2 * s + 1], r[1][2 * s], r[1][2 * s + 1]};' \
    'const uint32_t a[4] = {r[0][2 * s + 1], r[0][2 * s], r[1][2 * s], r[1][2 * s + 1]};' \
    test_decode 'decode_fixed/tensor_core'
# Since the lazy reference (2026-12-01) random logits rarely move a head's reference after a
# split's first tile, so the vote is checked where rising logits move it (decode_features).
plant decode-mma-rescale-vote-misses-a-half cuda/decode/decode_mma.cuh \
    'for (int o = F8 ? 1 : 4; o < (F8 ? 4 : 32); o <<= 1)' 'for (int o = F8 ? 1 : 4; o < (F8 ? 2 : 16); o <<= 1)' \
    test_decode '@(decode_fixed/tensor_core|decode_features/rising_logits_move_the_reference)'
plant decode-mma-lazy-reference-never-moves cuda/decode/decode_mma.cuh \
    'const float m_new = mx > m_run[k] + kLazyNat ? mx : m_run[k];' \
    'const float m_new = m_run[k] == -INFINITY ? mx : m_run[k];' \
    test_decode 'decode_features/rising_logits_move_the_reference'
plant decode-mma-sum-not-rescaled cuda/decode/decode_mma.cuh \
    'l_run[k] = l_run[k] * alpha[k] + psum;' 'l_run[k] = l_run[k] + psum;' \
    test_decode 'decode_features/rising_logits_move_the_reference'
plant decode-mma-moving-factor-halved cuda/decode/decode_mma.cuh \
    'alpha[k] = m_run[k] == -INFINITY ? 1.0f : ex2((m_run[k] - m_use) * kLog2e);' \
    'alpha[k] = m_run[k] == -INFINITY ? 1.0f : ex2((m_run[k] - m_use) * kLog2e) * 0.5f;' \
    test_decode 'decode_features/rising_logits_move_the_reference'
plant decode-mma-head64-p-second-nblock-swapped cuda/decode/decode_mma.cuh \
    'pb1[m][b] = NB == 2 ? pa::tile::pack2<MDT>(x[2 * HL + b], x[3 * HL + b]) : 0u;' \
    'pb1[m][b] = NB == 2 ? pa::tile::pack2<MDT>(x[3 * HL + b], x[2 * HL + b]) : 0u;' test_decode 'decode_fixed/tensor_core_head_64'
# Whole fp8 tiles skip the logit masks (2026-11-28): a tile cut by the length or the window start
# taken as whole, or a corrupt block id in the staged table ignored.
plant decode-mma-whole-tile-past-length cuda/decode/decode_mma.cuh \
    'const bool all_in = SKIP_MASKS && it >= w_lo && it <= w_hi && !c.bad_seen;' \
    'const bool all_in = SKIP_MASKS && it >= w_lo && it <= w_hi + 1 && !c.bad_seen;' \
    test_decode 'decode_fixed/tensor_core_head_64'
plant decode-mma-whole-tile-before-window cuda/decode/decode_mma.cuh \
    'const int w_lo = c.win_lo > c.e0 ? 1 : 0,' 'const int w_lo = 0,' \
    test_decode 'decode_fixed/tensor_core_head_64'
plant decode-mma-whole-tile-ignores-corrupt-ids cuda/decode/decode_mma.cuh \
    'const bool all_in = SKIP_MASKS && it >= w_lo && it <= w_hi && !c.bad_seen;' \
    'const bool all_in = SKIP_MASKS && it >= w_lo && it <= w_hi;' \
    test_decode 'decode_device_checks/corrupt_last_block_*'
# e5m2 converted by byte permutes (2026-11-28, pa::tile::fp8x2_f16, shared by the decode and
# ragged tensor-core kernels): the high pair's bytes swapped, caught by each op's tests.
plant decode-e5m2-high-pair-swapped cuda/attn_tile.cuh \
    'return prmt(bits, 0u, HI ? 0x3424u : 0x1404u);' 'return prmt(bits, 0u, HI ? 0x2434u : 0x1404u);' \
    test_decode 'decode_fixed/tensor_core_head_64'
plant ragged-e5m2-high-pair-swapped cuda/attn_tile.cuh \
    'return prmt(bits, 0u, HI ? 0x3424u : 0x1404u);' 'return prmt(bits, 0u, HI ? 0x2434u : 0x1404u);' \
    test_ragged 'ragged_gpu/fp8_@(raw_slots|decode_query_range|head_sizes)'
# fp8 head 64's 128-token tile (flash layouts): each fails the head-64 test.
plant decode-long-tile-pair-addresses-swapped cuda/decode/decode_kernel.cuh \
    'const int64_t b = h == half ? mine : theirs;' 'const int64_t b = h == half ? theirs : mine;' \
    test_decode 'decode_fixed/tensor_core_head_64'
plant decode-long-tile-second-m-block-keys-of-first cuda/decode/decode_mma.cuh \
    'tr1 = tw + 16 * m + mma_tok<PERM>(g + 8); // rows g, g + 8' 'tr1 = tw + mma_tok<PERM>(g + 8); // rows g, g + 8' \
    test_decode 'decode_fixed/tensor_core_head_64'
plant decode-long-tile-second-m-block-p-of-first cuda/decode/decode_mma.cuh \
    'mma16816<MDT>(acc[mb][b], a, pb0[m][b], pb1[m][b]);' 'mma16816<MDT>(acc[mb][b], a, pb0[0][b], pb1[0][b]);' \
    test_decode 'decode_fixed/tensor_core_head_64'
plant decode-mma-head256-dims-without-dh cuda/decode/decode_mma.cuh \
    'd = dh + pv_dim<PERM_D, HD>(mb, g + 8 * (i >> 1));' 'd = pv_dim<PERM_D, HD>(mb, g + 8 * (i >> 1));' \
    test_decode 'decode_fixed/tensor_core_head_256'
# Head 96's padded 16-bit K rows read as if unpadded (every other 16-bit head's rows are unpadded):
# fails only the head-96 test.
plant decode-mma-head96-k-rows-unpadded cuda/decode/decode_mma.cuh \
    'const unsigned char *krow = kt + t * G::pitch_k;' 'const unsigned char *krow = kt + t * HS * G::esz;' \
    test_decode 'decode_fixed/tensor_core_head_96'
# fp8 at head 96: the last 32 dims as a half block. Each plant fails only the fp8 head-96 test.
plant decode-mma-f8-head96-qk-tail-word-twice cuda/decode/decode_mma.cuh \
    'qk_step(w0[1], w1[1], 4 * j + 1);' 'qk_step(w0[0], w1[0], 4 * j + 1);' \
    test_decode 'decode_fixed/tensor_core_head_96_fp8'
plant decode-mma-f8-head96-q-tail-full-span cuda/decode/decode_mma.cuh \
    'f8_size(HS, ks) / 4 * qc' '16 * qc' \
    test_decode 'decode_fixed/tensor_core_head_96_fp8'
plant decode-mma-f8-head96-pv-tail-dims-0-1-twice cuda/decode/decode_mma.cuh \
    'pv_step(w, 1, 4 * P + 1);' 'pv_step(w, 0, 4 * P + 1);' \
    test_decode 'decode_fixed/tensor_core_head_96_fp8'
plant decode-mma-f8-head96-out-tail-full-span cuda/decode/decode_mma.cuh \
    'f8_size(HD, mb) / 8 * (r & 7)' '8 * (r & 7)' \
    test_decode 'decode_fixed/tensor_core_head_96_fp8'
plant decode-mma-f8-head96-v-tail-rows-8-bytes cuda/decode/decode_mma.cuh \
    'swz(dh + 64 * P + 4 * g, t, G::swz_v, 4)' 'swz(dh + 64 * P + 8 * g, t, G::swz_v, 4)' \
    test_decode 'decode_fixed/tensor_core_head_96_fp8'
# Head 192: two warps a token group with 96 dims each (fp8: a block and a half block at dims dh..),
# and an output loop whose second dim only threads 0..63 have.
plant decode-mma-head192-output-dims-128-up-unwritten cuda/decode/decode_mma.cuh \
    'HS > NT && d0 + k * NT >= HS)' 'HS > NT && k > 0)' \
    test_decode 'decode_fixed/tensor_core_head_192'
plant decode-mma-head192-output-one-dim-past-the-row cuda/decode/decode_mma.cuh \
    'd0 + k * NT >= HS)' 'd0 + k * NT > HS)' \
    test_decode 'decode_fixed/tensor_core_head_192'
plant decode-mma-f8-head192-v-half-block-without-dh cuda/decode/decode_mma.cuh \
    'swz(dh + 64 * P + 4 * g, t, G::swz_v, 4)' 'swz(64 * P + 4 * g, t, G::swz_v, 4)' \
    test_decode 'decode_fixed/tensor_core_head_192'
# Heads 80 and 112 (16-bit): an odd last k-step and m-block, rows of units a token's 4 threads do not divide.
plant decode-mma-head80-last-k-step-dims-swapped cuda/decode/decode_mma.cuh \
    'jj == KS / 2 ? (lane >> 3) & 1 : half ?' 'jj == KS / 2 ? ((lane >> 3) & 1) ^ 1 : half ?' \
    test_decode 'decode_fixed/tensor_core_heads_80_112'
plant decode-mma-head80-last-m-block-dims-swapped cuda/decode/decode_mma.cuh \
    'const int mv = odd ? (lane >> 3) & 1 : half' 'const int mv = odd ? ((lane >> 3) & 1) ^ 1 : half' \
    test_decode 'decode_fixed/tensor_core_heads_80_112'
plant decode-mma-head80-vllm-last-m-block-rows-past-the-head cuda/decode/decode_mma.cuh \
    'ldsm_x4(r[nb], (odd || half ? vrow_t[nb] : vrow[nb]) + 32 * jj * G::pitch_v);' \
    'ldsm_x4(r[nb], (half ? vrow_t[nb] : vrow[nb]) + 32 * jj * G::pitch_v + (odd ? 16 * G::pitch_v : 0));' \
    test_decode 'decode_fixed/tensor_core_heads_80_112'
plant decode-fixed-loader-k-last-pass-unguarded cuda/decode/decode_kernel.cuh \
    'if (G::units_k % TPT == 0 || r < R - 1 || u < G::units_k)
                cp_async16_or_zero(krow' \
    'if (true)
                cp_async16_or_zero(krow' \
    test_decode 'decode_fixed/tensor_core_heads_80_112'
plant decode-fixed-vllm-v-last-pass-unguarded cuda/decode/decode_kernel.cuh \
    'd0 + k * DSTEP < G::head_size)' 'd0 + k * DSTEP < G::head_size + 16)' \
    test_decode 'decode_fixed/tensor_core_heads_80_112'
# fp8 at heads 80 and 112: a quarter block of 16 dims (after the half block at 112).
plant decode-mma-f8-head80-quarter-k-reads-at-half-span cuda/decode/decode_mma.cuh \
    'lds_words(krow0 + swz(b0 + 4 * qc, tr0, G::swz_k, 4), w0);' 'lds_words(krow0 + swz(b0 + 8 * qc, tr0, G::swz_k, 4), w0);' \
    test_decode 'decode_fixed/tensor_core_heads_80_112_fp8'
plant decode-mma-f8-head80-quarter-v-reads-at-half-span cuda/decode/decode_mma.cuh \
    'swz(dh + b0 + 2 * g, t, G::swz_v, 4)' 'swz(dh + b0 + 4 * g, t, G::swz_v, 4)' \
    test_decode 'decode_fixed/tensor_core_heads_80_112_fp8'
plant decode-mma-f8-head112-quarter-block-over-the-half cuda/decode/decode_mma.cuh \
    '(f8_size(hd, i) == 16 && hd % 64 >= 32 ? 32 : 0)' '(f8_size(hd, i) == 16 && hd % 64 >= 32 ? 0 : 0)' \
    test_decode 'decode_fixed/tensor_core_heads_80_112_fp8'
# Head 32: four output heads a pass, and fp8's half block with no full block before it.
plant decode-mma-head32-output-two-heads-a-pass cuda/decode/decode_mma.cuh \
    'const int hp = HS < NT ? tid / HS : 0' 'const int hp = HS < NT ? tid / 64 : 0' \
    test_decode 'decode_fixed/tensor_core_head_32'
plant decode-mma-f8-head32-qk-half-block-only-after-a-full-one cuda/decode/decode_mma.cuh \
    'if constexpr (HS % 64 >= 32) {' 'if constexpr (HS % 64 >= 32 && HS > 64) {' \
    test_decode 'decode_fixed/tensor_core_head_32'
plant decode-mma-f8-head32-pv-half-block-only-after-a-full-one cuda/decode/decode_mma.cuh \
    'if constexpr (HD % 64 >= 32) {' 'if constexpr (HD % 64 >= 32 && HD > 64) {' \
    test_decode 'decode_fixed/tensor_core_head_32'
# fp8 head 32 on flash layouts takes the long tile too: the head-32 test runs it.
plant decode-long-tile-head32-pair-addresses-swapped cuda/decode/decode_kernel.cuh \
    'const int64_t b = h == half ? mine : theirs;' 'const int64_t b = h == half ? theirs : mine;' \
    test_decode 'decode_fixed/tensor_core_head_32'
plant decode-long-tile-head32-second-m-block-values-of-first cuda/decode/decode_mma.cuh \
    'vtok[i] = tw + 16 * m + 2 * qc + (i & 1) + 8 * (i >> 1);' 'vtok[i] = tw + 2 * qc + (i & 1) + 8 * (i >> 1);' \
    test_decode 'decode_fixed/tensor_core_head_32'
# Head 120 (16-bit): a last k-step and m-block of 8 dims; the query's dims 120.. and the epilogue's
# rows past dim 119 do not exist.
plant decode-mma-head120-q-dims-past-the-row-loaded cuda/decode/decode_mma.cuh \
    'const uint32_t w = in ? *reinterpret_cast<const uint32_t *>(src) : 0u;' \
    'const uint32_t w = *reinterpret_cast<const uint32_t *>(src);' \
    test_decode 'decode_fixed/tensor_core_head_120'
plant decode-mma-head120-epilogue-stores-dims-past-119 cuda/decode/decode_mma.cuh \
    'if (HD % 16 == 0 || pv_dim<PERM_D, HD>(mb, g + 8 * (i >> 1)) < HD)' 'if (true)' \
    test_decode 'decode_fixed/tensor_core_head_120'
# Two head blocks (GQA groups 9..16 at head 128): each plant fails only the group-16 test.
plant decode-mma-group16-q-rows-8-15-from-block-0 cuda/decode/decode_mma.cuh \
    'HB > 1 ? qa[2 * jj + s][HB - 1][0] : 0u,' 'HB > 1 ? qa[2 * jj + s][0][0] : 0u,' \
    test_decode 'decode_fixed/tensor_core_group_16'
plant decode-mma-group16-fp8-logits-of-block-0 cuda/decode/decode_mma.cuh \
    'x[HL * (2 * m + (i >> 1)) + 2 * b + (i & 1)] = sf[m][b][i];' 'x[HL * (2 * m + (i >> 1)) + 2 * b + (i & 1)] = sf[m][0][i];' \
    test_decode 'decode_fixed/tensor_core_group_16'
plant decode-mma-group16-rescale-with-block-0-alpha cuda/decode/decode_mma.cuh \
    'a_lo = shfl_idx(alpha[b], 8 * qc);' 'a_lo = shfl_idx(alpha[0], 8 * qc);' \
    test_decode '@(decode_fixed/tensor_core_group_16|decode_features/rising_logits_move_the_reference)'
plant decode-mma-group16-epilogue-rows-of-block-0 cuda/decode/decode_mma.cuh \
    'red[(tg * NHC + h) * RS + d] = acc[mb][b][i] * fac[b][i & 1];' \
    'red[(tg * NHC + h % MMA_ROWS) * RS + d] = acc[mb][b][i] * fac[b][i & 1];' \
    test_decode 'decode_fixed/tensor_core_group_16'
# Two head blocks at head 64 (2026-11-30: Falcon-40B's group 16, Falcon-7B's 71 heads in CTAs of
# 15): 16-bit S's two n-blocks a warp under two head blocks, fp8's two M blocks a warp (the long
# tile) under two head blocks. The host's rule for the shapes the tensor-core kernel serves, whose
# geometry has no CUDA-core rows (dec_tensor_cores): claiming two head blocks at head 32 too, or
# ignoring the copy units, hands the launcher a geometry no tensor-core instance matches (refused
# there; before the launcher's check, the CUDA-core kernel ran it without its rows and crashed).
plant decode-mma-head64-group16-second-n-block-logits cuda/decode/decode_mma.cuh \
    'x[HL * 2 * nb + b] = sf[2 * b];' 'x[2 * nb + b] = sf[2 * b];' \
    test_decode 'decode_fixed/tensor_core_group_16_head_64'
plant decode-mma-head64-group16-p-of-second-block-one-head-block cuda/decode/decode_mma.cuh \
    'pb1[m][b] = NB == 2 ? pa::tile::pack2<MDT>(x[2 * HL + b], x[3 * HL + b]) : 0u;' \
    'pb1[m][b] = NB == 2 ? pa::tile::pack2<MDT>(x[2 * HL], x[3 * HL]) : 0u;' \
    test_decode 'decode_fixed/tensor_core_group_16_head_64'
plant decode-long-tile-head64-group16-m-blocks-one-head-block cuda/decode/decode_mma.cuh \
    'const int j0 = HL * 2 * m, j1 = HL * (2 * m + 1);' 'const int j0 = 4 * m, j1 = 4 * m + 2;' \
    test_decode 'decode_fixed/tensor_core_group_16_head_64'
# (decode-tensor-cores-two-head-blocks-at-head-32 was caught by a CLI check CI never ran, until
# 2026-12-03: no CI test had a group past 8 at head 32, nor at 80, 96, 112, 120 or 256.)
plant decode-tensor-cores-two-head-blocks-at-head-32 csrc/ops/decode.c \
    'kp->pv_groups <= (PA_DEC_MMA_TWO_BLOCKS(hs) ? 4 : 2)' 'kp->pv_groups <= 4' \
    test_decode 'decode_grid/groups_past_8'
plant decode-tensor-cores-ignore-copy-units csrc/ops/decode.c \
    'kp->unit_k == 16 && (kp->vllm_v || kp->unit_v == 16)' '1' \
    test_decode 'decode_views/strided_flash_and_query_stride'
# The epilogue's output loop, the split sums beside it, the base-2 softmax and the one-pass table
# refill (2026-11-25). Head 64's threads cover two heads a pass, so its partial rows step by two
# heads; sums written for head slots the CTA does not own land on the next KV head's rows (in
# reverse CTA order those writes come last).
plant decode-mma-partial-rows-step-one-head cuda/decode/decode_mma.cuh \
    'const int64_t ts = (int64_t)p.max_splits * HS * HP;' 'const int64_t ts = (int64_t)p.max_splits * HS;' \
    test_decode 'decode_fixed/tensor_core_head_64'
plant decode-mma-split-sums-for-absent-heads cuda/decode/decode_mma.cuh \
    'if (!one && tid < nh) {' 'if (!one && tid < NHC) {' \
    test_decode 'decode_fixed/tensor_core' PA_INTERP_ORDER=reverse
plant decode-mma-softmax-exponent-in-base-2 cuda/decode/decode_mma.cuh \
    'x[i] = ex2(fmaf(x[i], kLog2e, -ml));' 'x[i] = ex2(x[i] - m_use);' \
    test_decode 'decode_fixed/tensor_core'
plant decode-refill-half-window cuda/decode/decode_kernel.cuh \
    'if (i < PA_DEC_TABLE_WIN) {' 'if (i < PA_DEC_TABLE_WIN / 2) {' \
    test_decode 'decode_fixed/tensor_core'
# The merge's loads ahead of use (2026-11-29): a second chunk of weights that keeps the first
# chunk's max and sum, the values of splits past the first 32 never loaded (the first group's
# summed again), and the two-dim merge loading its second dim's values from the first.
plant decode-merge-second-chunk-reuses-first-sums cuda/decode/decode_kernel.cuh \
    'const float mi = base == 0 ? ml0 : ml[i], ei = base == 0 ? es0 : es[i];' \
    'const float mi = ml0, ei = es0;' test_decode 'decode_long/merges_of_many_splits'
plant decode-merge-later-groups-not-loaded cuda/decode/decode_kernel.cuh \
    'if (c > 0) // (the first group went out with the maxima and sums)' 'if (c < 0)' \
    test_decode 'decode_long/merges_of_many_splits'
plant decode-merge-second-dim-from-first cuda/decode/decode_kernel.cuh \
    'v1[k] = TWO && on && d1 < hs ? vt(t[d1]) : zero;' 'v1[k] = TWO && on && d1 < hs ? vt(t[d0]) : zero;' \
    test_decode 'decode_long/merges_of_many_splits'
# The merge under programmatic dependent launch (2026-12-02): CTAs with nothing to merge
# returning before griddepcontrol.wait (the grid could complete before the split kernel), and
# the wait moved into that early exit, so the merging CTAs read the partials without it.
plant decode-merge-returns-before-its-wait cuda/decode/decode_kernel.cuh \
    '    ::pa::ptx::griddep_wait();
    if (ns <= 1)
        return;' '    if (ns <= 1)
        return;
    ::pa::ptx::griddep_wait();' test_decode 'decode_pdl/*'
plant decode-merge-waits-only-to-exit cuda/decode/decode_kernel.cuh \
    '    ::pa::ptx::griddep_wait();
    if (ns <= 1)
        return;' '    if (ns <= 1) {
        ::pa::ptx::griddep_wait();
        return;
    }' test_decode 'decode_pdl/*'
# Partial rows in the output's type (2026-11-29): a split kernel that still writes f32 rows (the
# merge reads them as 16-bit values at 16-bit offsets), in the CUDA-core kernel and in the
# tensor-core kernel's epilogue.
plant decode-partials-f32-rows-cuda-core cuda/decode/decode_kernel.cuh \
    'static_cast<typename pa::elt<QT>::type *>(p.tmp_out)[row * hs + d] = pa::from_float<QT>(o);' \
    'static_cast<float *>(p.tmp_out)[row * hs + d] = o;' test_decode 'decode_features/*'
plant decode-partials-f32-rows-tensor-core cuda/decode/decode_mma.cuh \
    'qt *t = static_cast<qt *>(p.tmp_out); // NULL with one split at most' \
    'float *t = static_cast<float *>(p.tmp_out); // NULL with one split at most' \
    test_decode 'decode_fixed/tensor_core'
# ... and leave an fp8 cache's v_scale to the merge: the merge that forgets it, and a tensor-core
# split that applies it to its partial row as well (twice in all).
plant decode-merge-forgets-v-scale cuda/decode/decode_kernel.cuh \
    'out[d0] = pa::from_float<QT>(w_sum > 0.0f ? a0 / w_sum * vs : 0.0f);' \
    'out[d0] = pa::from_float<QT>(w_sum > 0.0f ? a0 / w_sum : 0.0f);' test_decode 'decode_fixed/tensor_core'
plant decode-partials-keep-v-scale cuda/decode/decode_mma.cuh \
    'hr[tid] = l > 0.0f ? (one ? vs : 1.0f) / ld : 0.0f;' 'hr[tid] = l > 0.0f ? vs / ld : 0.0f;' \
    test_decode 'decode_fixed/tensor_core'
# Attention sinks (2026-11-29): once a sequence, in the merge or where a CTA writes the output
# itself, in natural-log units, from the query head's own entry. The merge that forgets it; split
# kernels (CUDA cores, tensor cores) that add it to their partial rows too; the KV head's entry;
# the tensor-core kernel's head taken within its CTA; the sink in log2 units.
plant decode-merge-forgets-sink cuda/decode/decode_kernel.cuh \
    'w_sum += fexp(sink - m);' 'w_sum += 0.0f;' test_decode 'decode_features/attention_sinks'
plant decode-partials-take-sink cuda/decode/decode_kernel.cuh \
    'if (one && tid < c.nh) {
        if (sl[tid] > 0.0f)' 'if (tid < c.nh) {
        if (sl[tid] > 0.0f)' \
    test_decode 'decode_features/attention_sinks'
plant decode-mma-partials-take-sink cuda/decode/decode_mma.cuh \
    'const float ld = one && l > 0.0f && tid < nh ?' 'const float ld = l > 0.0f && tid < nh ?' \
    test_decode 'decode_features/attention_sinks'
plant decode-sink-of-the-kv-head cuda/decode/decode_kernel.cuh \
    'p.sinks[head]' 'p.sinks[head / (p.num_heads / p.num_kv_heads)]' \
    test_decode 'decode_features/attention_sinks'
plant decode-mma-sink-head-in-cta cuda/decode/decode_mma.cuh \
    'sink_term(p, h0 + tid, mm)' 'sink_term(p, tid, mm)' test_decode 'decode_features/attention_sinks'
plant decode-sink-in-log2-units cuda/decode/decode_kernel.cuh \
    'return p.sinks ? fexp(p.sinks[h] - m) : 0.0f;' 'return p.sinks ? fexp((p.sinks[h] - m) * 1.4426950f) : 0.0f;' \
    test_decode 'decode_features/attention_sinks'
# The decode lse output (decode.h, 2026-12-05): stored token-major; the merge's without its max;
# a head with no key given -inf over its sink (one-split epilogue, merge); the tensor-core
# epilogue's lse without the sink's term; the CUDA-core kernel's head taken within its CTA; a bad
# sequence's lse left unwritten; the tensor-core epilogue's coordinates from the split index.
plant decode-lse-token-major cuda/decode/decode_kernel.cuh \
    '*lse_at(p, h, seq) = v;' 'p.lse[(int64_t)seq * p.num_heads + h] = v;' \
    test_decode 'decode_fixed/tensor_core'
plant decode-merge-lse-without-max cuda/decode/decode_kernel.cuh \
    'lse_of(p, head, w_sum, m);' 'lse_of(p, head, w_sum, 0.0f);' \
    test_decode 'decode_fixed/split_boundaries'
plant decode-lse-no-key-drops-sink cuda/decode/decode_kernel.cuh \
    'l == 0.0f || l == INFINITY ? (p.sinks' 'l == 0.0f ? -INFINITY : l == INFINITY ? (p.sinks' \
    test_decode 'decode_features/lse_of_heads_with_no_key'
plant decode-merge-lse-no-key-drops-sink cuda/decode/decode_kernel.cuh \
    'lse_of(p, head, w_sum, m);' 'w_sum == 0.0f ? -INFINITY : lse_of(p, head, w_sum, m);' \
    test_decode 'decode_features/lse_of_heads_with_no_key'
plant decode-mma-lse-without-sink cuda/decode/decode_mma.cuh \
    'lse_of(p, h0 + tid, ld, mm)' 'lse_of(p, h0 + tid, l, mm)' \
    test_decode 'decode_features/attention_sinks'
plant decode-split-lse-head-in-cta cuda/decode/decode_kernel.cuh \
    'store_lse(p, c.seq, c.h0 + tid,' 'store_lse(p, c.seq, tid,' \
    test_decode 'decode_features/lse_of_heads_with_no_key'
plant decode-bad-sequence-lse-unwritten cuda/decode/decode_kernel.cuh \
    '*lse_at(p, c.h0 + threadIdx.x, c.seq) = -INFINITY;' '(void)0;' \
    test_decode 'decode_device_checks/bad_lengths_give_zeros_bad_blocks_stay_finite'
plant decode-mma-epilogue-coordinates-of-the-split cuda/decode/decode_mma.cuh \
    'cta_coords(p, (int)::pa::ptx::ctaid_x_again(), seq, kvh, h0);' 'cta_coords(p, (int)blockIdx.y, seq, kvh, h0);' \
    test_decode 'decode_fixed/tensor_core'
# Attention sinks in prefill (2026-11-29): each kernel's finalize that forgets them; the mma.sync
# kernel's sink of the group's first head, or in natural-log units where its sums are log2; the
# Hopper kernel's first row's max for both of a thread's rows, and the KV head's sink; the FP8
# path's sink not lifted by 2^8 as P is; the mixed entry that drops them from its decode part.
plant prefill-mma-forgets-sink cuda/prefill/prefill_kernel.cuh \
    'sm.template finalize<C>(o, p.sinks != nullptr, sink2);' 'sm.template finalize<C>(o);' \
    test_prefill 'prefill_gpu/attention_sinks'
plant prefill-mma-sink-of-the-group cuda/prefill/prefill_kernel.cuh \
    'p.sinks[kvh * group + g % group] * kLog2e' 'p.sinks[kvh * group] * kLog2e' \
    test_prefill 'prefill_gpu/attention_sinks'
plant prefill-mma-sink-natural-units cuda/prefill/prefill_kernel.cuh \
    'p.sinks[kvh * group + g % group] * kLog2e' 'p.sinks[kvh * group + g % group]' \
    test_prefill 'prefill_gpu/attention_sinks'
plant prefill-f32-forgets-sink cuda/prefill/prefill_f32.cu \
    'l += expf(p.sinks[head] - m);' 'l += 0.0f;' test_prefill 'prefill_gpu/attention_sinks'
plant hopper-forgets-sink cuda/prefill/prefill_wgmma.cuh \
    'if (sink)
                f *=' 'if (false)
                f *=' test_prefill 'prefill_hopper/attention_sinks'
plant hopper-sink-one-row cuda/prefill/prefill_wgmma.cuh \
    'kLog2e, lift - sm.m[h]))' 'kLog2e, lift - sm.m[0]))' \
    test_prefill 'prefill_hopper/attention_sinks'
plant hopper-fp8-sink-unlifted cuda/prefill/prefill_wgmma.cuh \
    'kLog2e, lift - sm.m[h]))' 'kLog2e, 0.0f - sm.m[h]))' test_prefill 'prefill_hopper_fp8/attention_sinks'
plant hopper-sink-of-the-kv-head cuda/prefill/prefill_wgmma.cuh \
    'fmaf(p.sinks[head], kLog2e' 'fmaf(p.sinks[kvh], kLog2e' test_prefill 'prefill_hopper/attention_sinks'
plant mixed-drops-decode-sinks csrc/ops/prefill.c \
    'dc->sinks = m->sinks;' 'dc->sinks = NULL;' test_prefill 'prefill_gpu/attention_sinks'
# The Hopper kernel's 4-byte output stores (2026-12-06): an output view at an odd element taken
# to the Hopper kernel (its misaligned store aborts in the plain interpreter's alignment check).
plant hopper-takes-an-element-aligned-output csrc/ops/prefill.c \
    'if ((uintptr_t)k->out % 4 != 0)' 'if ((uintptr_t)k->out % 2 != 0)' test_prefill 'prefill_hopper/output_off_4_bytes_takes_mma_sync'
# Attention sinks in the ragged op (2026-11-29): forgotten where a one-chunk row is written (direct,
# or after the decode slices' merge) or in the last CTA's merge of chunks; taken by each chunk's
# partial row too (the merge then counts it again); the sink of the GQA group's first head; in log2
# units; dropped by the entry.
plant ragged-direct-forgets-sink cuda/ragged/ragged_common.cuh \
    'lse == -INFINITY ? 0.0f : 1.0f / (1.0f + sink_weight(P, c, c.it.row0 + r, lse));' '1.0f;' \
    test_ragged 'ragged_gpu/attention_sinks'
plant ragged-slices-forget-sink cuda/ragged/ragged_common.cuh \
    'const float sw = c.it.part < 0 && wsum > 0.0f ? sink_weight(P, c, c.it.row0 + r, mx) : 0.0f;' \
    'const float sw = 0.0f;' test_ragged 'ragged_gpu/attention_sinks'
plant ragged-merge-forgets-sink cuda/ragged/ragged_common.cuh \
    'const float sw = wsum > 0.0f ? sink_weight(P, c, m.row0 + r, mx) : 0.0f;' 'const float sw = 0.0f;' \
    test_ragged 'ragged_gpu/attention_sinks'
plant ragged-chunks-take-sink cuda/ragged/ragged_common.cuh \
    'if (c.it.part < 0 && P.sinks != nullptr) {' 'if (P.sinks != nullptr) {' \
    test_ragged 'ragged_gpu/attention_sinks'
plant ragged-sink-of-the-group cuda/ragged/ragged_common.cuh \
    '__ldg(P.sinks + row_head(c, pr, pa_kv_divide(P.group_div, pr)))' '__ldg(P.sinks + c.it.kvh * c.group)' \
    test_ragged 'ragged_gpu/attention_sinks'
plant ragged-sink-in-log2-units cuda/ragged/ragged_common.cuh \
    'return __expf(__ldg(' 'return exp2f(__ldg(' test_ragged 'ragged_gpu/attention_sinks'
plant ragged-entry-drops-sinks csrc/ops/ragged_entry.c \
    'l.sinks = p->sinks;' 'l.sinks = NULL;' test_ragged 'ragged_gpu/attention_sinks'
# The ragged lse output (ragged.h, 2026-12-05): stored token-major, or at the row within its
# sequence instead of the batch; without the sink's term, or with it at the keys' max (a sink far
# above them overflows: +inf for 800); the last CTA's merge leaving it unwritten or taking the
# first chunk's; the parts' merge without its max; a decode item's key slices giving the first's; the
# entry passing the default token stride whatever the layout; validation letting it overlap the cache.
plant ragged-lse-token-major cuda/ragged/ragged_common.cuh \
    'P.lse[(int64_t)h * P.lse_hs + (int64_t)(c.q_base + tok) * P.lse_ts] = v;' \
    'P.lse[(int64_t)h * P.lse_ts + (int64_t)(c.q_base + tok) * P.lse_hs] = v;' test_ragged 'ragged_gpu/odd_groups'
plant ragged-lse-row-within-sequence cuda/ragged/ragged_common.cuh \
    '(int64_t)(c.q_base + tok) * P.lse_ts] = v;' '(int64_t)tok * P.lse_ts] = v;' \
    test_ragged 'ragged_gpu/num_seqs_below_max'
plant ragged-lse-without-sink cuda/ragged/ragged_common.cuh \
    'v = keys == -INFINITY || sink == INFINITY ? sink : m + __logf(__expf(keys - m) + __expf(sink - m));' 'v = keys;' \
    test_ragged 'ragged_gpu/attention_sinks'
plant ragged-lse-sink-term-overflows cuda/ragged/ragged_common.cuh \
    'm + __logf(__expf(keys - m) + __expf(sink - m))' 'keys + __logf(1.0f + __expf(sink - keys))' \
    test_ragged 'ragged_gpu/attention_sinks'
plant ragged-merged-lse-unwritten cuda/ragged/ragged_common.cuh \
    'for (int r = threadIdx.x; P.lse != nullptr && r < m.nrows; r += NT)' 'for (int r = 0; r < 0; r++)' \
    test_ragged 'ragged_gpu/forced_kv_splits'
plant ragged-merged-lse-of-the-first-chunk cuda/ragged/ragged_common.cuh \
    'parts_lse(m.n_split, [&](int j)' 'parts_lse(1, [&](int j)' \
    test_ragged 'ragged_gpu/forced_kv_splits'
plant ragged-parts-lse-without-max cuda/ragged/ragged_common.cuh \
    'return wsum > 0.0f ? mx + __logf(wsum) : -INFINITY;' 'return wsum > 0.0f ? __logf(wsum) : -INFINITY;' \
    test_ragged 'ragged_gpu/forced_kv_splits'
plant ragged-slices-lse-of-the-first cuda/ragged/ragged_common.cuh \
    'store_lse(P, c, c.it.row0 + r, parts_lse(nslices,' 'store_lse(P, c, c.it.row0 + r, parts_lse(1,' \
    test_ragged 'ragged_gpu/decode_masks'
plant ragged-entry-default-lse-token-stride csrc/ops/ragged_entry.c \
    'l.lse_ts = ls.token;' 'l.lse_ts = 1;' test_ragged 'ragged_gpu/odd_groups'
plant ragged-lse-over-the-cache-unchecked csrc/ops/ragged.c \
    'PA_REQUIRE(!pa_ranges_overlap(p->lse, ls->bytes, kv->key,' 'PA_REQUIRE(1 || !pa_ranges_overlap(p->lse, ls->bytes, kv->key,' \
    test_ragged 'ragged_bad_gpu/lse_refusals'
# The decode workspace sized for 16-bit partial rows (2026-11-29): one byte an element short.
plant decode-workspace-short-for-16-bit csrc/ops/decode.c \
    'p->q_dtype == PA_DTYPE_BF16 ? 2 : 4;' 'p->q_dtype == PA_DTYPE_BF16 ? 1 : 4;' \
    test_decode 'decode_features/attention_sinks'
# begin_cta's early read of the first table window (2026-11-29): read past the sequence's row of
# block_table_stride entries (the last sequence's row ends at the table's end), and the early
# entries taken for whatever window the first refill stages (a window that starts later, a long
# sequence's larger splits).
plant decode-early-table-read-past-row cuda/decode/decode_kernel.cuh \
    'c.pre_id = threadIdx.x < PA_DEC_TABLE_WIN && b < p.bt_stride ? c.table[b] : -1;' \
    'c.pre_id = threadIdx.x < PA_DEC_TABLE_WIN ? c.table[b] : -1;' test_decode 'decode_fixed/*'
plant decode-early-table-window-taken-for-any cuda/decode/decode_kernel.cuh \
    'const bool pre = PRE && lb == c.pre_lb;' 'const bool pre = PRE;' \
    test_decode '@(decode_features/window_cap_alibi|decode_long/gqa_8_1_f16)'
# begin_cta without divisions: a sequence exactly one split long written as a partial row (the
# merge then skips it), and the CTA's sequence divided out without the head chunks (groups over
# 16 take several CTAs per KV head).
plant decode-one-split-misses-exact-fit cuda/decode/decode_kernel.cuh \
    'one = part >= c.L;' 'one = part > c.L;' test_decode 'decode_fixed/split_boundaries'
plant decode-seq-divider-ignores-head-chunks csrc/ops/decode.c \
    'kp->seq_div = pa_kv_divider_make(kp->num_kv_heads * kp->head_chunks);' \
    'kp->seq_div = pa_kv_divider_make(kp->num_kv_heads);' test_decode 'decode_fixed/tensor_core_group_16'
# The tensor-core kernel's query as 4-byte words: the host's flag without the stride's parity (a
# misaligned word load, which interpret mode's alignment check stops), and a head past the CTA's
# last reading its own row (past the query's end for the last sequence: the guard page).
plant decode-q-words-ignore-odd-stride csrc/ops/decode.c \
    'kp->q_words = qsz == 2 && (uintptr_t)p->query % 4 == 0 && kp->q_stride % 2 == 0;' \
    'kp->q_words = qsz == 2 && (uintptr_t)p->query % 4 == 0;' test_decode 'decode_views/query_stride_on_tensor_cores'
plant decode-q-rows-past-last-head cuda/decode/decode_mma.cuh \
    'const int hrow = row_on ? g + MMA_ROWS * b : c.nh - 1;' 'const int hrow = g + MMA_ROWS * b;' \
    test_decode 'decode_fixed/tensor_core'
# issue_tile's short path for flash layouts: the value units a thread copies stepped by one unit,
# not by the token's thread count.
plant decode-flash-copy-unit-stride cuda/decode/decode_kernel.cuh \
    'cp_async16_or_zero(vrow + swz(16 * u, t, G::swz_v, G::gv_shift), vsrc + 16 * TPT * r, ok);' \
    'cp_async16_or_zero(vrow + swz(16 * u, t, G::swz_v, G::gv_shift), vsrc + 16 * r, ok);' \
    test_decode 'decode_fixed/tensor_core'
# issue_tile's short paths over vLLM's layout: a thread's key units stepped by one chunk, not by the
# token's thread count; a value unit the sequence ends inside copied whole (caught only if the slots
# past seq_len hold NaN in the tests: P.V multiplies them by a zero probability).
plant decode-vllm-key-units-one-chunk-apart cuda/decode/decode_kernel.cuh \
    'const int64_t step = (int64_t)TPT * p.k_chunk_bytes;' 'const int64_t step = (int64_t)p.k_chunk_bytes;' \
    test_decode 'decode_fixed/tensor_core_vllm_layout'
plant decode-vllm-vt-copies-past-length cuda/decode/decode_kernel.cuh \
    'const int nb = prefix ? (hi - vpos) * esz : 0;' 'const int nb = prefix ? 16 : 0;' \
    test_decode 'decode_fixed/tensor_core_vllm_layout'
# The e5m2 load loses the sign bit (negative codes read as their magnitude):
# the f32-source round trip cannot see it; every code through pa_convert does.
plant convert-e5m2-sign-dropped cuda/dtype.cuh \
    '__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)v, __NV_E5M2)' '__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)(v & 0x7f), __NV_E5M2)' \
    test_gpu_basic 'gpu_basic/convert_*'
# pa_convert's fp8 scale applied the wrong way round on a store (multiplied, not divided), and its
# element loop running one element past n (the interpreter's bounds check on the source).
plant convert-fp8-store-scale-inverted cuda/convert.cu \
    '        v /= s;' '        v *= s;' \
    test_gpu_basic 'gpu_basic/convert_matches_host_bitwise'
# pa_convert's and the cache writes' fp8 quotient taken as a product with the scale's reciprocal
# (as some quantisation kernels do): it differs from the division in the last bit now and then,
# which changes the code only next to an fp8 midpoint; random data meets that about once in 10^6
# values, so only the midpoint tests (2026-12-08) fail it.
plant convert-fp8-store-by-reciprocal cuda/convert.cu \
    '        v /= s;' '        v *= 1.0f / s;' \
    test_gpu_basic 'gpu_basic/convert_quotients_next_to_fp8_midpoints'
plant cache-fp8-store-by-reciprocal cuda/reshape_and_cache.cu \
    'return pa::from_float<OUT>(pa::to_float<IN>(v) / scale);' 'return pa::from_float<OUT>(pa::to_float<IN>(v) * (1.0f / scale));' \
    test_cache_ops 'cache_ops/fp8_codes_next_to_midpoints'
plant convert-one-past-the-end cuda/convert.cu \
    'i < n; i += step)' 'i <= n; i += step)' \
    test_gpu_basic 'gpu_basic/convert_chunks_tails_and_offsets_match_host_bitwise'
# pa_convert's chunks (2026-12-08): vectors over a source or destination off their alignment; the
# last chunk rounded up past n; a wide chunk's (fp8 to f32: 64 bytes) four stores all at its first
# 16 bytes; no CTA for an input shorter than one chunk; and the element loop restarting at the
# chunk count, not at its first element: each element then converted twice, by two threads, with
# the same bytes (ThreadSanitizer's race on the destination; the results alone cannot show it).
plant convert-dst-alignment-unchecked cuda/convert.cu \
    ' && (uintptr_t)dst % C::store_bytes == 0;' ';' \
    test_gpu_basic 'gpu_basic/convert_chunks_tails_and_offsets_match_host_bitwise'
plant convert-src-alignment-unchecked cuda/convert.cu \
    '(uintptr_t)src % 16 == 0 && ' '' \
    test_gpu_basic 'gpu_basic/convert_chunks_tails_and_offsets_match_host_bitwise'
plant convert-last-chunk-rounded-up cuda/convert.cu \
    'vec ? n / C::vec : 0;' 'vec ? (n + C::vec - 1) / C::vec : 0;' \
    test_gpu_basic 'gpu_basic/convert_chunks_tails_and_offsets_match_host_bitwise'
plant convert-wide-chunk-stores-overlap cuda/convert.cu \
    '            d[k] = w;' '            d[0] = w;' \
    test_gpu_basic 'gpu_basic/convert_chunks_tails_and_offsets_match_host_bitwise'
plant convert-short-input-no-ctas cuda/convert.cu \
    'vec && chunks > 0 ? chunks : n;' 'vec ? chunks : n;' \
    test_gpu_basic 'gpu_basic/convert_chunks_tails_and_offsets_match_host_bitwise'
plant convert-tail-restarts-at-chunk-count cuda/convert.cu \
    'int64_t i = chunks * C::vec + first;' 'int64_t i = chunks + first;' \
    test_gpu_basic:tsan 'gpu_basic/convert_chunks_tails_and_offsets_match_host_bitwise'
# pa_merge_attn_states (cuda/merge_states.cu): FlashAttention-2's +inf lse taken at its word, a
# part of weight 0 multiplied in (its NaN row leaks), both parts empty divided 0 by 0, a row's
# chunks past the CTA row's threads never reached, the merged lse at vLLM's layout whatever the
# strides, the suffix's rows at the prefix's stride, a CTA of one token row where the grid
# counted several, and the maximum of the two lses taken with fmaxf alone, which drops a NaN
# lse beside an empty part (the row comes out empty, not NaN).
plant merge-plus-inf-lse-not-empty cuda/merge_states.cu \
    '    la = la == INFINITY ? -INFINITY : la;' '' \
    test_gpu_basic 'merge_states/matches_reference'
plant merge-dropped-part-multiplied cuda/merge_states.cu \
    'const float x = wa != 0.0f ? wa * pa::to_float<DT>(a.v[k]) : 0.0f;' 'const float x = wa * pa::to_float<DT>(a.v[k]);' \
    test_gpu_basic 'merge_states/matches_reference'
plant merge-both-empty-nan cuda/merge_states.cu \
    '    if (m != -INFINITY) {' '    {' \
    test_gpu_basic 'merge_states/matches_reference'
plant merge-later-chunks-skipped cuda/merge_states.cu \
    '        i += (int)blockDim.x;' '        i += chunks;' \
    test_gpu_basic 'merge_states/matches_reference'
plant merge-lse-written-at-default-layout cuda/merge_states.cu \
    '        p.output_lse[li] = lse;' '        p.output_lse[(int64_t)h * p.num_tokens + t] = lse;' \
    test_gpu_basic 'merge_states/strided_rows_lse_layouts_and_in_place'
plant merge-suffix-at-prefix-stride cuda/merge_states.cu \
    'static_cast<const T *>(p.suffix_output) + t * p.suffix_stride' 'static_cast<const T *>(p.suffix_output) + t * p.prefix_stride' \
    test_gpu_basic 'merge_states/strided_rows_lse_layouts_and_in_place'
plant merge-one-token-row-a-cta cuda/merge_states.cu \
    'dim3((unsigned)tx, (unsigned)ty)' 'dim3((unsigned)tx, 1u)' \
    test_gpu_basic 'merge_states/matches_reference'
plant merge-nan-lse-beside-empty-part-dropped cuda/merge_states.cu \
    'isnan(la) || isnan(lb) ? NAN : fmaxf(la, lb)' 'fmaxf(la, lb)' \
    test_gpu_basic 'merge_states/matches_reference'
# The prefill kernels' lse output (prefill.h): mma.sync's rows at the token-major [tokens, heads]
# place, a row with a sink but no key given -inf, one lane of each warp (not of each quad)
# writing; the f32 kernel's natural-log max left out; the Hopper kernel's sink left out of the
# sum, its FP8 path's 2^8 lift left in, and the second of each thread's two rows unwritten.
plant prefill-lse-token-major cuda/prefill/prefill_kernel.cuh \
    '*lse_at(p, head, sq.q0 + tok) = row_lse(' 'p.lse[(int64_t)(sq.q0 + tok) * p.num_heads + head] = row_lse(' \
    test_prefill 'prefill_gpu/prompt_attention_types'
plant prefill-lse-sink-without-key-dropped cuda/prefill/prefill_kernel.cuh \
    '? v : p.sinks ? p.sinks[h]' '? v : l > 0.0f && p.sinks ? p.sinks[h]' \
    test_prefill 'prefill_gpu/lse_cascade_merges_on_the_device'
plant prefill-lse-one-lane-a-warp cuda/prefill/prefill_kernel.cuh \
    'if (p.lse && (threadIdx.x & 3) == 0) {' 'if (p.lse && (threadIdx.x & 31) == 0) {' \
    test_prefill 'prefill_gpu/smallest_cases'
plant prefill-f32-lse-without-max cuda/prefill/prefill_f32.cu \
    'row_lse(p, head, l, m + logf(l))' 'row_lse(p, head, l, logf(l))' \
    test_prefill 'prefill_gpu/f32_queries'
plant hopper-lse-sink-left-out cuda/prefill/prefill_wgmma.cuh \
    '(sm.m[h] - lift) * 0.6931471805599453f + logf(ls)' '(sm.m[h] - lift) * 0.6931471805599453f + logf(l)' \
    test_prefill 'prefill_hopper/attention_sinks'
plant hopper-fp8-lse-lift-kept cuda/prefill/prefill_wgmma.cuh \
    '(sm.m[h] - lift) * 0.6931471805599453f' 'sm.m[h] * 0.6931471805599453f' \
    test_prefill 'prefill_hopper_fp8/context_attention'
plant hopper-lse-second-row-unwritten cuda/prefill/prefill_wgmma.cuh \
    'if (p.lse && (lane & 3) == 0)' 'if (p.lse && (lane & 3) == 0 && h == 0)' \
    test_prefill 'prefill_hopper/prompt_attention'
# A sink far above the logits (2026-12-05, second): the lse of a row whose sum overflowed with
# the sink's term taken as m + log(+inf) = +inf, not the sink, by decode's one-split epilogues
# (both kernels, lse_of), decode's merge (its old inline form), the prefill kernels' row_lse
# (mma.sync, f32, Hopper), and the Hopper kernel handing row_lse the sum without the sink.
plant decode-lse-far-sink-overflows cuda/decode/decode_kernel.cuh \
    'l == 0.0f || l == INFINITY ?' 'l == 0.0f ?' \
    test_decode 'decode_features/attention_sinks'
plant decode-merge-lse-far-sink-overflows cuda/decode/decode_kernel.cuh \
    'lse_of(p, head, w_sum, m);' 'w_sum == 0.0f ? sink : m + __logf(w_sum);' \
    test_decode 'decode_features/lse_cascade_merges_on_the_device'
plant prefill-lse-far-sink-overflows cuda/prefill/prefill_kernel.cuh \
    'return l > 0.0f && l != INFINITY ? v' 'return l > 0.0f ? v' \
    test_prefill 'prefill_gpu/attention_sinks'
plant hopper-lse-far-sink-from-the-keys-sum cuda/prefill/prefill_wgmma.cuh \
    'pa_prefill::row_lse(p, head, ls,' 'pa_prefill::row_lse(p, head, l,' \
    test_prefill 'prefill_hopper/attention_sinks'
# lse strides (2026-12-05; decode.h, prefill.h): each kernel's store at the default [heads, tokens]
# place whatever the strides (decode's one-split epilogues and merge, mma.sync, the f32 kernel, the
# Hopper kernel), the token stride taken as 1 or the head stride as the token count in the shared
# address helpers, the mixed entry's decode part writing its lse from token 0, and its prefill
# rows' lse let over the decode part's workspace.
plant decode-lse-token-stride-one cuda/decode/decode_kernel.cuh \
    'return p.lse + h * p.lse_hs + seq * p.lse_ts;' 'return p.lse + h * p.lse_hs + seq;' \
    test_decode 'decode_fixed/tensor_core'
plant decode-lse-head-stride-of-the-batch cuda/decode/decode_kernel.cuh \
    'return p.lse + h * p.lse_hs + seq * p.lse_ts;' 'return p.lse + h * p.num_seqs + seq * p.lse_ts;' \
    test_decode 'decode_fixed/tensor_core'
plant decode-merge-lse-default-layout cuda/decode/decode_kernel.cuh \
    '*lse_at(p, head, seq) = lse_of(' 'p.lse[(int64_t)head * p.num_seqs + seq] = lse_of(' \
    test_decode 'decode_fixed/split_boundaries'
plant prefill-lse-token-stride-one cuda/prefill/prefill_kernel.cuh \
    'return p.lse + h * p.lse_hs + t * p.lse_ts;' 'return p.lse + h * p.lse_hs + t;' \
    test_prefill 'prefill_gpu/prompt_attention_types'
plant prefill-f32-lse-default-layout cuda/prefill/prefill_f32.cu \
    '*pa_prefill::lse_at(p, head, sq.q0 + tok) = pa_prefill::row_lse(' 'p.lse[(int64_t)head * p.num_q_tokens + sq.q0 + tok] = pa_prefill::row_lse(' \
    test_prefill 'prefill_gpu/f32_queries'
plant hopper-lse-default-layout cuda/prefill/prefill_wgmma.cuh \
    '*pa_prefill::lse_at(p, head, sq.q0 + tok) =' 'p.lse[(int64_t)head * p.num_q_tokens + sq.q0 + tok] =' \
    test_prefill 'prefill_hopper/prompt_attention'
plant mixed-decode-lse-from-token-zero csrc/ops/prefill.c \
    'dc->lse = fit && m->lse ? m->lse + lse_off : NULL;' 'dc->lse = fit && m->lse ? m->lse : NULL;' \
    test_prefill 'prefill_gpu/mixed_batch'
plant mixed-lse-over-the-workspace-unchecked csrc/ops/prefill_entry.c \
    'PA_REQUIRE(p->lse == NULL || !pa_ranges_overlap(p->lse, ls.bytes, workspace, (int64_t)need),' \
    'PA_REQUIRE(1 || !pa_ranges_overlap(p->lse, ls.bytes, workspace, (int64_t)need),' \
    test_prefill 'prefill_gpu/mixed_batch'
# Context attention's cache_only (cascade attention's shared prefix): the queries' own new keys
# still counted in the kernel (read through NULL) or by the host's mask, the causal mask kept, a
# sequence of more queries than cached keys skipped as bad device data.
plant prefill-cache-only-counts-new-keys cuda/prefill/prefill_kernel.cuh \
    'q.n_cache = L - own;' 'q.n_cache = L - q.q_len;' \
    test_prefill 'prefill_gpu/cache_only'
plant prefill-cache-only-mask-kept csrc/ops/prefill.c \
    'k->own_mask = p->cache_only ? 0 : -1;' 'k->own_mask = -1;' \
    test_prefill 'prefill_hopper/cache_only'
plant prefill-cache-only-causal csrc/ops/prefill.c \
    'k->causal = !p->cache_only;' 'k->causal = 1;' \
    test_prefill 'prefill_hopper/cache_only'
plant prefill-cache-only-short-sequence-skipped cuda/prefill/prefill_kernel.cuh \
    'if (L < own || L > p.max_k_len)' 'if (L < q.q_len || L > p.max_k_len)' \
    test_prefill 'prefill_gpu/cascade_over_a_shared_prefix_on_the_device'
# The entry's choice of 16-byte chunks blind to the buffers' addresses (interpret mode's alignment
# check on the chunk loads; the device would fault).
plant merge-chunks-on-misaligned-rows csrc/ops/merge.c \
    '(uintptr_t)r->output % 16 == 0 &&' '(uintptr_t)r->output % 1 == 0 &&' \
    test_gpu_basic 'merge_states/strided_rows_lse_layouts_and_in_place'
plant cache-slot-off-by-one cuda/reshape_and_cache.cu \
    'const int32_t off = (int32_t)(slot - blk * bs);
    const ti *key' 'const int32_t off = (int32_t)(slot - blk * bs + 1) % bs;
    const ti *key' \
    test_cache_ops 'cache_ops/*'
plant cache-vllm-slot-off-by-one cuda/reshape_and_cache.cu \
    'const int32_t off = (int32_t)(slot - blk * bs);
    to *kc' 'const int32_t off = (int32_t)(slot - blk * bs + 1) % bs;
    to *kc' \
    test_cache_ops 'cache_ops/*'
# The cache ops' random-configuration tests (2026-11-28), each plant run against that test alone:
# kv_cache_update refusing a slice that ends at the cache's last row, copy_blocks writing to a
# destination past the last block, swap_blocks merging pairs whose sources continue a run when
# their destinations do not.
# The per-token kernel (flash and combined layouts, vLLM's misaligned rows) taking slot
# num_blocks x block_size, one past the cache, as in range: until 2026-12-02 only vLLM's aligned
# rows (the shared-memory kernel) met that slot in a test, and this plant survived.
plant cache-flash-slot-one-past-the-end cuda/reshape_and_cache.cu \
    'if (slot < 0 || slot >= p.num_slots) // -1' 'if (slot < 0 || slot > p.num_slots) // -1' \
    test_cache_ops 'cache_ops/reshape_and_cache_skips_bad_slots'
# Values read at the keys' strides: until 2026-12-02 every test's keys and values were views of
# one fused row with the same strides, and both plants survived.
plant cache-value-rows-at-key-stride cuda/reshape_and_cache.cu \
    'const ti *value = static_cast<const ti *>(p.value) + t * p.v_tok_stride;' \
    'const ti *value = static_cast<const ti *>(p.value) + t * p.k_tok_stride;' \
    test_cache_ops 'cache_ops/reshape_and_cache_@(nhd|hnd|vllm|odd_head_sizes)'
plant cache-vllm-value-head-at-key-stride cuda/reshape_and_cache.cu \
    '(int64_t)h * p.v_head_stride;' '(int64_t)h * p.k_head_stride;' \
    test_cache_ops 'cache_ops/reshape_and_cache_@(vllm|prefill_runs)'
plant kvu-slice-ending-at-last-row-skipped cuda/reshape_and_cache.cu \
    'cs + len > p.num_rows || ns + len > p.num_tokens)' 'cs + len >= p.num_rows || ns + len > p.num_tokens)' \
    test_cache_ops 'cache_ops/kv_cache_update_random_configurations'
plant copy-blocks-dst-past-last-block cuda/swap_copy.cu \
    'dst < 0 || dst >= p.num_blocks)' 'dst < 0)' \
    test_cache_ops 'cache_ops/copy_blocks_random_configurations'
plant swap-run-merge-ignores-dst csrc/shared/cache_ops_internal.h \
    'pa_id_follows(mapping[2 * j + 1], r.dst_block, r.num_blocks)' '1' \
    test_cache_ops 'cache_ops/swap_blocks_random_configurations'
# swap_blocks batching runs whose destinations meet (a block named twice): the copies of one
# cudaMemcpyBatchAsync have no order (2026-12-05; interpret mode's batch copy stops on it).
plant swap-batch-keeps-meeting-destinations cuda/swap_copy.cu \
    'meets = r.dst_block < dst_hi[k] && dst_lo[k] < r.dst_block + r.num_blocks;' 'meets = false;' \
    test_cache_ops 'cache_ops/swap_blocks_repeated_destinations_last_pair_wins'
# A kernel whose shared memory passes the device's limit (99 KiB at sm_86/89, interpret mode's
# stand-in), 2026-12-05: the check skipped, the launch's own attribute call fails with a CUDA
# error instead of the refusal; the ragged planner launched before the check, it writes the
# workspace of a call that is then refused.
plant smem-check-always-fits cuda/device_cc.cuh \
    '    if (pa_smem_fits(kernel, dynamic, &need, &optin, &capped))' '    if (pa_smem_fits(kernel, dynamic, &need, &optin, &capped) || true)' \
    test_ragged 'ragged_gpu/a_kernel_past_the_devices_shared_memory_is_refused'
# PAGEDATTN_SMEM_LIMIT (2026-12-05, seventh session), which lets an H100 take a 99 KiB device's
# compact tiles: ignored, the f32 head-256 kernel runs where it must be refused; without its
# floor, a small number is taken as it is; text past the digits read as digits.
plant smem-limit-variable-ignored cuda/device_cc.cuh \
    '    limit = pa_smem_limit_knob(limit, &knob);' '    (void)pa_smem_limit_knob(limit, &knob);' \
    test_ragged 'ragged_gpu/smem_limit_variable_lowers_the_devices_limit'
plant smem-limit-variable-without-floor csrc/core/device.c \
    '    if (v < least)' '    if (v < 1)' \
    test_ragged 'ragged_gpu/smem_limit_variable_lowers_the_devices_limit'
plant smem-limit-variable-reads-past-digits csrc/core/device.c \
    'strspn(e, "0123456789") != strlen(e)' 'strspn(e, "0123456789") == 0' \
    test_ragged 'ragged_gpu/smem_limit_variable_lowers_the_devices_limit'
# The prefill kernel's compact tiles (half-width key tiles, 2026-12-05) where the full ones pass
# the device's limit: never taken, the call is refused on a 99 KiB device; taken without the
# check, the full tiles' launch fails there. Either way the stand-in device's test fails.
plant prefill-compact-tiles-never-taken cuda/prefill/prefill_kernel.cuh \
    'constexpr bool has_compact() { return HP == 128 || HP == 256; }' 'constexpr bool has_compact() { return false; }' \
    test_prefill 'prefill_gpu/compact_tiles_on_a_99_KiB_device'
plant prefill-compact-tiles-for-head-128-only cuda/prefill/prefill_kernel.cuh \
    'constexpr bool has_compact() { return HP == 128 || HP == 256; }' 'constexpr bool has_compact() { return HP == 128; }' \
    test_prefill 'prefill_gpu/compact_tiles_on_a_99_KiB_device'
# The ragged kernel's compact shape (half slots at heads 128 and 256, 2026-12-05): never taken, a
# 99 KiB device refuses the call.
plant ragged-compact-shape-never-taken cuda/ragged/ragged_mma.cuh \
    '    if constexpr (HP >= 128) {' '    if constexpr (HP >= 512) {' \
    test_ragged 'ragged_gpu/compact_slots_on_a_99_KiB_device'
# Only the compact head 256 splits a decode slot four ways (warps 2 and 3 take the head's upper
# half): a split read as pairs leaves it to warps 0 and 1's columns.
plant ragged-compact-decode-split-as-pairs cuda/ragged/ragged_mma.cuh \
    '    const int col0 = dpart * S::kDecHP; // the warp' '    const int col0 = (dpart & 1) * S::kDecHP; // the warp' \
    test_ragged 'ragged_gpu/compact_slots_on_a_99_KiB_device'
plant ragged-planner-before-the-smem-check cuda/ragged/ragged.cu \
    'if (const int e = attention(p, st, false))' 'if (const int e = 0 * (int)attention(p, st, false))' \
    test_ragged 'ragged_gpu/a_kernel_past_the_devices_shared_memory_is_refused'
plant ragged-window-off-by-one cuda/ragged/ragged_common.cuh \
    '(P.window > 0 && qp - P.window >= key)' '(P.window > 0 && qp - P.window > key)' \
    test_ragged 'ragged_gpu/sliding_window_and_soft_cap'
# A throughput heuristic that breaks batch invariance: fewer, fixed-size key
# splits once the batch is large (the shrunk batch-invariance test's 12-sequence
# batch takes them; its 1- and 5-sequence ones do not).
plant ragged-splits-depend-on-batch-size cuda/ragged/ragged.cu \
    'const int32_t split = P.split_tokens;' 'const int32_t split = P.split_tokens ? P.split_tokens : (ns > 8 ? 1024 : 0);' \
    test_ragged 'ragged_gpu/batch_invariance_bitwise' PA_TEST_SHRINK=4
# The device planner's partial rows numbered per sequence, not from the batch's running offset:
# the second sequence's splits overwrite the first's (the device plan then differs from the host's).
plant ragged-plan-part-rows-not-offset cuda/ragged/ragged.cu \
    '                                it.part += s_op[k];' '' \
    test_ragged 'ragged_gpu/device_plan_matches_host_many_tiles'
plant ragged-decode-head-half-at-column-0 cuda/ragged/ragged_mma.cuh \
    'srow0 = 16 * dslice + (lane >> 2), col0 = dpart * S::kDecHP;' 'srow0 = 16 * dslice + (lane >> 2), col0 = 0;' \
    test_ragged 'ragged_gpu/head_256_slots'
plant ragged-fp8-decode-head-half-at-column-0 cuda/ragged/ragged_mma.cuh \
    'const int col0 = dpart * S::kDecHP; // the warp' 'const int col0 = 0; // the warp' \
    test_ragged 'ragged_gpu/decode_masks'
plant ragged-decode-pv-ignores-head-part cuda/ragged/ragged_mma.cuh \
    'vt + 16 * dslice * C::kStride + dpart * S::kDecHP,' 'vt + 16 * dslice * C::kStride,' \
    test_ragged 'ragged_gpu/head_256_slots'
plant ragged-next-slot-into-current-stage cuda/ragged/ragged_mma.cuh \
    'const int stage = CONV ? 0 : t & 1;' 'const int stage = 0;' \
    test_ragged 'ragged_gpu/head_256_slots'
plant ragged-slot-crossing-diagonal-unmasked cuda/ragged/ragged_mma.cuh \
    'k0 + kSlot - 1 > qmin ||' 'k0 > qmin ||' \
    test_ragged 'ragged_gpu/@(num_seqs_below_max|head_256_slots|fp8_raw_slots)'
plant ragged-window-slots-unmasked cuda/ragged/ragged_mma.cuh \
    ' || P.window > 0;' ';' \
    test_ragged 'ragged_gpu/@(soft_mask_value|head_256_slots)'
# An edge slot's mask in the thread's column offsets (2026-12-05: the columns took 16 registers
# across the persistent kernel's items and spilled at sm_100 and sm_120): the bounds not moved to
# the lane's first column; the causal bound one column late (hard mask); a key past the item in
# the soft mask; the window's first column not moved. (Its lower key bound is never met: slots
# start at the item's first key, and a plant dropping it survived; it stays for the registers.)
plant ragged-mask-bounds-not-at-the-lanes-column cuda/ragged/ragged_mma.cuh \
    'return max(bound, 0) - c0; };' 'return max(bound, 0); };' \
    test_ragged 'ragged_gpu/@(num_seqs_below_max|head_256_slots|fp8_raw_slots)'
plant ragged-hard-mask-one-column-late cuda/ragged/ragged_mma.cuh \
    'return off < lo[i] || off >= hi[i] ? -INFINITY : x;' 'return off < lo[i] || off > hi[i] ? -INFINITY : x;' \
    test_ragged 'ragged_gpu/@(num_seqs_below_max|head_256_slots|fp8_raw_slots)'
plant ragged-soft-mask-takes-keys-past-the-item cuda/ragged/ragged_mma.cuh \
    'off >= c_hi ? -INFINITY : off < lo[i]' 'off > c_hi ? -INFINITY : off < lo[i]' \
    test_ragged 'ragged_gpu/@(soft_mask_value|head_256_slots)'
plant ragged-window-start-not-at-the-lanes-column cuda/ragged/ragged_mma.cuh \
    'lo[i] = P.window > 0 ? at(qp - P.window + 1) : -c0;' 'lo[i] = P.window > 0 ? qp - P.window + 1 : -c0;' \
    test_ragged 'ragged_gpu/@(soft_mask_value|head_256_slots)'
plant ragged-fp8-no-wait-before-barrier cuda/ragged/ragged_mma.cuh \
    'pa::tile::cp_async_wait<0>(); // slot t + 1'"'"'s raw bytes, before the barrier' '; // (planted: no wait)' \
    test_ragged 'ragged_gpu/fp8_raw_slots'
plant ragged-fp8-raw-rows-at-tile-stride cuda/ragged/ragged_mma.cuh \
    'const int at = SWZ ? raw_swz<C::HP>(r, b) : r * C::HP + b;' \
    'const int at = SWZ ? raw_swz<C::HP>(r, b) : r * C::kStride + b;' \
    test_ragged 'ragged_gpu/fp8_raw_slots'
plant ragged-fp8-k-scale-not-on-scores cuda/ragged/ragged_mma.cuh \
    's_sc.qk = P.sm_scale * k_scale;' 's_sc.qk = P.sm_scale;' \
    test_ragged 'ragged_gpu/fp8_raw_slots'
plant ragged-fp8-v-scale-not-on-output cuda/ragged/ragged_mma.cuh \
    's_sc.v = FP8 && P.v_scale ? P.v_scale[sh] : 1.0f;' 's_sc.v = 1.0f;' \
    test_ragged 'ragged_gpu/fp8_raw_slots'
plant ragged-fp8-v-from-k-bytes cuda/ragged/ragged_mma.cuh \
    '(C::v_tile(smem, 0), raw + C::BN * C::HP,' '(C::v_tile(smem, 0), raw,' \
    test_ragged 'ragged_gpu/fp8_raw_slots'
# Races that the lock-step interpreter cannot see (lanes of a warp run in
# step between collectives): the ThreadSanitizer build finds them.
plant decode-softmax-no-syncwarp cuda/decode/decode_kernel.cuh \
    '            // not order shared memory (racecheck on an H100 flagged this).
            __syncwarp();' '            // not order shared memory (racecheck on an H100 flagged this).' \
    test_decode:tsan 'decode_long/mqa_f32_e5m2_window'
plant ragged-simt-no-syncwarp-before-pv cuda/ragged/ragged_simt.cuh \
    '            __syncwarp();
            const int nk = c.it.k_hi - k0' '            const int nk = c.it.k_hi - k0' \
    test_ragged:tsan 'ragged_gpu/soft_mask_value'
# The last-CTA merge of a tile's key chunks (2026-12-02): three ragged CTAs under way at once
# (PA_INTERP_CTAS=3) spread the chunks over CTAs, and ThreadSanitizer, where the CTAs of a grid are
# unordered and fences with atomics are modelled, reports the merge's loads racing the partial rows'
# stores when either fence is missing.
plant ragged-merge-no-fence-before-the-count cuda/ragged/ragged_common.cuh \
    '    // Last CTA of the tile merges (threadFenceReduction pattern).
    __threadfence();' '    // Last CTA of the tile merges (threadFenceReduction pattern).' \
    test_ragged:tsan 'ragged_gpu/forced_kv_splits' PA_INTERP_CTAS=3
plant ragged-merge-no-fence-after-the-count cuda/ragged/ragged_common.cuh \
    '    if (!*s_flag)
        return;
    __threadfence();' '    if (!*s_flag)
        return;' \
    test_ragged:tsan 'ragged_gpu/forced_kv_splits' PA_INTERP_CTAS=3
plant ragged-fp8-no-barrier-after-dequant-tsan cuda/ragged/ragged_mma.cuh \
    '            __syncthreads(); // stage 0 whole; the raw space is free' '' \
    test_ragged:tsan 'ragged_gpu/fp8_raw_slots'
plant decode-mma-epilogue-no-barrier-tsan cuda/decode/decode_mma.cuh \
    '                red[(tg * NHC + h) * RS + d] = acc[mb][b][i] * fac[b][i & 1];
            }
    if (one && tid < nh)
        store_lse(p, seq, h0 + tid, lse_v);
    bar();' '                red[(tg * NHC + h) * RS + d] = acc[mb][b][i] * fac[b][i & 1];
            }
    if (one && tid < nh)
        store_lse(p, seq, h0 + tid, lse_v);' \
    test_decode:tsan 'decode_fixed/tensor_core'
plant prefill-raw-no-barrier-after-dequant-tsan cuda/prefill/prefill_kernel.cuh \
    '            dequant(t);
            __syncthreads();' '            dequant(t);' test_prefill:tsan 'prefill_gpu/cache_tile_paths'
plant prefill-no-barrier-before-staging-tsan cuda/prefill/prefill_kernel.cuh \
    '    __syncthreads();
    sm.unpark_sums(sums_tab[threadIdx.x].v);' '    sm.unpark_sums(sums_tab[threadIdx.x].v);' \
    test_prefill:tsan 'prefill_gpu/prompt_rows_with_no_visible_key_are_zeros'

# The Hopper kernel's wgmma protocol (interp.cpp's WgOp and async proxy,
# 2026-11-24): each of these passed interpret mode before it modelled them,
# because the twin computed at issue and the fences were no-ops.
plant hopper-no-proxy-fence-before-qk cuda/prefill/prefill_wgmma.cuh \
    '                pa::ptx::mbar_wait(full_k(r), (int)r.par);
                pa::ptx::fence_proxy_async();' '                pa::ptx::mbar_wait(full_k(r), (int)r.par);' \
    test_prefill 'prefill_hopper/*'
# A step acquires tile t's V and tile t + 1's K under one fence (2026-11-28).
plant hopper-no-proxy-fence-in-step cuda/prefill/prefill_wgmma.cuh \
    '            pa::ptx::mbar_wait(full_k(nx), (int)nx.par);
            pa::ptx::fence_proxy_async();' '            pa::ptx::mbar_wait(full_k(nx), (int)nx.par);' \
    test_prefill 'prefill_hopper/*'
plant hopper-no-proxy-fence-before-pv cuda/prefill/prefill_wgmma.cuh \
    '                pa::ptx::mbar_wait(full_v(r), (int)r.par);
                pa::ptx::fence_proxy_async();' '                pa::ptx::mbar_wait(full_v(r), (int)r.par);' \
    test_prefill 'prefill_hopper/*'
plant hopper-no-wgmma-fence-before-qk cuda/prefill/prefill_wgmma.cuh \
    '            pa::ptx::wgmma_pin(sc);
            pa::ptx::wgmma_fence();' '            pa::ptx::wgmma_pin(sc);' test_prefill 'prefill_hopper/*'
plant hopper-softmax-before-qk-done cuda/prefill/prefill_wgmma.cuh \
    'pa::ptx::wgmma_wait<1>(); // Q K^T of t + 1 is done' 'pa::ptx::wgmma_wait<2>(); // Q K^T of t + 1 is done' \
    test_prefill 'prefill_hopper*/*'
plant hopper-first-tile-not-waited cuda/prefill/prefill_wgmma.cuh \
    '            pa::ptx::wgmma_wait<0>();
            pa::ptx::wgmma_pin(sc);
            release(empty_k(first));' '            release(empty_k(first));' test_prefill 'prefill_hopper_fp8/*'
plant hopper-v-released-before-pv-done cuda/prefill/prefill_wgmma.cuh \
    '            softmax(whole, t + 1);
            pa::ptx::wgmma_wait<0>();
            pa::ptx::wgmma_pin(o);
            pa::ptx::wgmma_pin(pk);
            release(empty_v(cur));' '            softmax(whole, t + 1);
            release(empty_v(cur));
            pa::ptx::wgmma_wait<0>();
            pa::ptx::wgmma_pin(o);
            pa::ptx::wgmma_pin(pk);' \
    test_prefill '@(prefill_hopper_fp8/!(every_instance_rare_branches)|prefill_hopper/persistent*)' PA_INTERP_SCHED=warp

plant hopper-p-repacked-before-pv-done cuda/prefill/prefill_wgmma.cuh \
    '            softmax(whole, t + 1);
            pa::ptx::wgmma_wait<0>();' '            softmax(whole, t + 1);
            pack_p();
            pa::ptx::wgmma_wait<0>();' test_prefill 'prefill_hopper*/*'
# The persistent grid (2026-11-28): a CTA runs many items, so the ring's
# stages and phases, Q's barriers and each item's verdict must carry across
# items. prefill_hopper*/persistent* run 1-3 CTAs. (Since RingPos, a step's
# position: its phase, or its stage, counted from the item's first tile.)
plant hopper-ring-phase-per-item cuda/prefill/prefill_wgmma.cuh \
    'RingPos::of(g + (uint32_t)t), nx' 'RingPos::of((g & 1u) + (uint32_t)t), nx' \
    test_prefill 'prefill_hopper*/persistent*'
plant hopper-stage-per-item cuda/prefill/prefill_wgmma.cuh \
    'RingPos::of(g + (uint32_t)t), nx' 'RingPos::of((g & 2u) + (uint32_t)t), nx' \
    test_prefill 'prefill_hopper*/persistent*'
# HP 256 (2026-11-30): 64-key K and V tiles, 16 rows a producer warp, panels
# 64 rows x 128 bytes apart.
plant hopper-h256-panel-stride-of-128-rows cuda/prefill/prefill_wgmma.cuh \
    '(j >> 2) * ROWS * 128 +' '(j >> 2) * 128 * 128 +' test_prefill 'prefill_hopper/head_256'
plant hopper-h256-rows-of-32-a-warp cuda/prefill/prefill_wgmma.cuh \
    'lane < RB ? tile_start(t) + RB * w + lane : ke, ke,
' 'lane < RB ? tile_start(t) + 32 * w + lane : ke, ke,
' \
    test_prefill 'prefill_hopper/head_256'
plant hopper-h256-pv-steps-of-128-keys cuda/prefill/prefill_wgmma.cuh \
    'for (int kk = 0; kk < BN / 16; kk++) {
                    // A: pk' 'for (int kk = 0; kk < BN / 16 - (BN == 64); kk++) {
                    // A: pk' test_prefill 'prefill_hopper/head_256'
# HP 256 over fp8 caches (2026-11-30): one raw K and one raw V staging buffer,
# each a cp.async group, refilled with tile t + 1 once tile t's conversion has
# read it; raw rows 16 a warp. A refill issued before the conversion reads
# the buffer is wrong only when the copy lands early: with copies landing at
# their wait it passed (test_prefill_interp_cp_at_issue runs it this way).
# PA_INTERP_CP=issue: copies land at issue.
plant hopper-h256-fp8-raw-k-refilled-before-read cuda/prefill/prefill_wgmma.cuh \
    '                            convert_k(e5m2, t, st, ph, wait_empty);
                            if (t + 1 < nt_c) {
                                issue_raw_k(t + 1);' '                            if (t + 1 < nt_c)
                                issue_raw_k(t + 1);
                            convert_k(e5m2, t, st, ph, wait_empty);
                            if (t + 1 < nt_c) {' test_prefill 'prefill_hopper/fp8_head_256' PA_INTERP_CP=issue
plant hopper-h256-fp8-raw-v-not-waited cuda/prefill/prefill_wgmma.cuh \
    '                                pa::tile::cp_async_wait<1>(); // raw V of t has landed' '' \
    test_prefill 'prefill_hopper/fp8_head_256'
plant hopper-h256-fp8-raw-rows-of-32-a-warp cuda/prefill/prefill_wgmma.cuh \
    'lane < RB ? tile_start(t) + RB * w + lane : ke, ke, true,' 'lane < RB ? tile_start(t) + 32 * w + lane : ke, ke, true,' \
    test_prefill 'prefill_hopper/fp8_head_256'
plant hopper-h256-fp8-converted-rows-of-32-a-warp cuda/prefill/prefill_wgmma.cuh \
    'uint8_t *row = tile + (R * w + rp + 16 * p) * 128' 'uint8_t *row = tile + (32 * w + rp + 16 * p) * 128' \
    test_prefill 'prefill_hopper/fp8_head_256'
# HP 192 (2026-11-30): three 64-element panels a row, 64-key tiles as at HP
# 256, P V on wgmma m64n192k16; over fp8 caches two staging pairs of 64-key
# tiles, 16 raw rows a producer warp (issue_raw took 32 before HP 192).
plant hopper-h192-panel-stride-of-128-rows cuda/prefill/prefill_wgmma.cuh \
    '(j >> 2) * ROWS * 128 +' '(j >> 2) * 128 * 128 +' test_prefill 'prefill_hopper/head_192'
plant hopper-h192-pv-steps-of-128-keys cuda/prefill/prefill_wgmma.cuh \
    'for (int kk = 0; kk < BN / 16; kk++) {
                    // A: pk' 'for (int kk = 0; kk < BN / 16 - (HP == 192); kk++) {
                    // A: pk' test_prefill 'prefill_hopper/head_192'
plant hopper-h192-fp8-raw-rows-of-32-a-warp cuda/prefill/prefill_wgmma.cuh \
    'lane < RB ? tile_start(t) + RB * w + lane : ke, ke, true,' 'lane < RB ? tile_start(t) + 32 * w + lane : ke, ke, true,' \
    test_prefill 'prefill_hopper/head_192'
plant hopper-h192-third-panel-of-q-k-dropped cuda/prefill/prefill_wgmma.cuh \
    'for (int kk = 0; kk < HP / 16; kk++) {
                    const uint32_t kb' 'for (int kk = 0; kk < (HP == 192 ? 8 : HP / 16); kk++) {
                    const uint32_t kb' test_prefill 'prefill_hopper/head_192'
plant hopper-h192-fp8-staging-pair-reused cuda/prefill/prefill_wgmma.cuh \
    'return raw0 + (H::kRawPairs == 2 ? (uint32_t)(t & 1) * 2u * H::raw_bytes : 0u) + H::raw_bytes;' \
    'return raw0 + (H::kRawPairs == 2 && HP != 192 ? (uint32_t)(t & 1) * 2u * H::raw_bytes : 0u) + H::raw_bytes;' \
    test_prefill 'prefill_hopper/head_192' PA_INTERP_CP=issue
plant hopper-next-q-without-empty-wait cuda/prefill/prefill_wgmma.cuh \
    '            if (nq > 0)
                pa::ptx::mbar_wait(&bar_q_empty, (nq - 1) & 1);' '' \
    test_prefill 'prefill_hopper/persistent*' PA_INTERP_SCHED=warp
plant hopper-q-released-before-last-qk cuda/prefill/prefill_wgmma.cuh \
    'if (PERSIST && t + 2 == n_tiles) // the item' 'if (PERSIST && t == 0) // the item' \
    test_prefill 'prefill_hopper/persistent*' PA_INTERP_SCHED=warp
plant hopper-verdict-ignored cuda/prefill/prefill_wgmma.cuh \
    'const bool item_good = item_ok[nq & 1] != 0;' 'const bool item_good = true;' \
    test_prefill 'prefill_hopper/persistent_cta_skips_bad_sequences'
plant hopper-last-round-past-last-item cuda/prefill/prefill_wgmma.cuh \
    '    if (i >= n_items)
        return false;' '' test_prefill 'prefill_hopper*/persistent*'
# The ring's barriers in one array, each role holding its address (MBar,
# 2026-11-28): stage 0's `full` V one slot off lands on stage 1's `full` K.
plant hopper-ring-slot-off-by-one cuda/prefill/prefill_wgmma.cuh \
    'enum { kFullK = 0, kFullV = 2, kEmptyK = 4, kEmptyV = 6 };' \
    'enum { kFullK = 0, kFullV = 1, kEmptyK = 4, kEmptyV = 6 };' test_prefill 'prefill_hopper/*'
# Edge tiles with the logit scale folded into the exponent (2026-11-28): the
# no-window select keeps the key one past the causal diagonal.
plant hopper-edge-mask-off-by-one cuda/prefill/prefill_wgmma.cuh \
    'sc[j][2 * h + e] = j * 8 + e < hi ? sc[j][2 * h + e] : -INFINITY;' \
    'sc[j][2 * h + e] = j * 8 + e <= hi ? sc[j][2 * h + e] : -INFINITY;' test_prefill 'prefill_hopper/*'
# Whole tiles found once an item (whole_tiles, 2026-11-28): the causal bound
# one tile late takes the diagonal tile for a whole one (no mask); the window's
# bound one tile early takes the first tile the window cuts.
plant hopper-whole-tiles-causal-off-by-one cuda/prefill/prefill_wgmma.cuh \
    'y = min(y, (far - base + 1) >> L);' 'y = min(y, (far - base + 1 + BN) >> L);' \
    test_prefill 'prefill_hopper/*'
plant hopper-whole-tiles-window-off-by-one cuda/prefill/prefill_wgmma.cuh \
    'max(0, ((qpos_hi - base - window) >> L) + 1)' 'max(0, ((qpos_hi - base - window) >> L))' \
    test_prefill 'prefill_hopper/*'
# The segment's bound one key late (2026-12-07 kernel mutation pass): a segment one key short of
# whole tiles ends in a tile taken for a whole one; no test's context was 1 short of a tile multiple.
plant hopper-whole-tiles-segment-end-one-late cuda/prefill/prefill_wgmma.cuh \
    'int y = min(n, (ke - base) >> L);' 'int y = min(n, (ke - base + 1) >> L);' \
    test_prefill 'prefill_hopper/cache_one_key_short_of_whole_tiles'
# A step's ring position for tile t + 1 (RingPos::next, 2026-11-28): the phase
# not flipped when the stage wraps to 0.
plant hopper-ring-phase-not-flipped cuda/prefill/prefill_wgmma.cuh \
    'return RingPos{off ^ 8u, par ^ (off >> 3)};' 'return RingPos{off ^ 8u, par};' test_prefill 'prefill_hopper/*'
# setmaxnreg through the CTA's register pool (interp.cpp, 2026-11-24): on the
# GPU the consumers' setmaxnreg.inc would wait forever.
plant hopper-producer-keeps-its-registers cuda/prefill/prefill_wgmma.cuh \
    '        pa::ptx::setmaxnreg_dec<H::kProducerRegs>();' '' test_prefill 'prefill_hopper/*'

# Dynamic shared memory's window address is not 1024-aligned here either
# (interp.cpp, kWindowBase): without the kernel's round-up, its tiles' 128-byte
# swizzle is computed against the wrong address bits.
plant hopper-tiles-not-1024-aligned cuda/prefill/prefill_wgmma.cuh \
    'uint8_t *smem = smem_raw + ((1024u - (win0 & 1023u)) & 1023u);' 'uint8_t *smem = smem_raw + (win0 & 0u);' \
    test_prefill 'prefill_hopper/*'

# Cache offsets past 32 bits (the */cache_offsets_past_32_bits tests: blocks
# lead blocks into buffers of several GiB): an offset formed in 32 bits reads
# or writes elsewhere in the buffer.
plant offsets-32bit-decode-flash cuda/decode/decode_kernel.cuh \
    'kbase = vbase = ((int64_t)blk * p.g.block_stride + (int64_t)off * p.g.page_stride) * esz + c.head_bytes;' \
    'kbase = vbase = (int64_t)(int32_t)((blk * (int32_t)p.g.block_stride + off * (int32_t)p.g.page_stride) * esz) + c.head_bytes;' \
    test_decode 'decode_views/cache_offsets_past_32_bits'
plant offsets-32bit-decode-long-tile cuda/decode/decode_kernel.cuh \
    'mine = ((int64_t)blk * p.g.block_stride + (int64_t)off * p.g.page_stride) * esz + c.head_bytes;' \
    'mine = (int64_t)(int32_t)((blk * (int32_t)p.g.block_stride + off * (int32_t)p.g.page_stride) * esz) + c.head_bytes;' \
    test_decode 'decode_views/cache_offsets_past_32_bits'
plant offsets-32bit-hopper-rows cuda/prefill/prefill_wgmma.cuh \
    'const int64_t ro = __shfl_sync(0xffffffffu, off, rp + 16 * p);
        const typename H::T *src' \
    'const int64_t ro = __shfl_sync(0xffffffffu, (int)off, rp + 16 * p);
        const typename H::T *src' \
    test_prefill 'prefill_gpu/cache_offsets_past_32_bits'
plant offsets-32bit-ragged-row cuda/ragged/ragged_common.cuh \
    'return (((int64_t)blk * P.page_size + tok) * (2 * P.num_kv_heads) + 2 * c.it.kvh + which) * P.head_size;' \
    'return (int)(((blk * P.page_size + tok) * (2 * P.num_kv_heads) + 2 * c.it.kvh + which) * P.head_size);' \
    test_ragged 'ragged_gpu/cache_offsets_past_32_bits'
plant offsets-32bit-kv-cache-update cuda/reshape_and_cache.cu \
    'store_vec(cache + o, out);' 'store_vec(cache + (uint32_t)o, out);' \
    test_cache_ops 'cache_ops/cache_offsets_past_32_bits'
plant offsets-32bit-copy-blocks cuda/swap_copy.cu \
    'const char *s = base + src * bytes;' 'const char *s = base + (int32_t)(src * bytes);' \
    test_cache_ops 'cache_ops/cache_offsets_past_32_bits'
plant offsets-32bit-swap-blocks cuda/swap_copy.cu \
    'srcs[count] = static_cast<const char *>(src) + r.src_block * block_bytes;' \
    'srcs[count] = static_cast<const char *>(src) + (uint32_t)(r.src_block * block_bytes);' \
    test_cache_ops 'cache_ops/cache_offsets_past_32_bits'

# The route walks (2026-12-04; tests/interp/README.md): bugs on routes the walks run. The first
# shows why the walks run two KV heads (with one, a head's offset is never used); the cache-op
# walk caught the other two before its fifth class was added too.
plant decode-flash-offsets-without-the-kv-head cuda/decode/decode_kernel.cuh \
    'kbase = vbase = ((int64_t)blk * p.g.block_stride + (int64_t)off * p.g.page_stride) * esz + c.head_bytes;' \
    'kbase = vbase = ((int64_t)blk * p.g.block_stride + (int64_t)off * p.g.page_stride) * esz;' \
    test_decode 'decode_routes/every_geometry'
plant prefill-fp8-values-as-vt-at-blocks-of-8 csrc/ops/prefill.c \
    'const int vt_ok = kv->block_size % (int)(16 / csz) == 0;' 'const int vt_ok = kv->block_size % 8 == 0;' \
    test_prefill 'prefill_routes/every_route'
plant cache-vllm-shared-memory-past-48k cuda/reshape_and_cache.cu \
    'if (smem <= 48u * 1024u) {' 'if (smem <= 80u * 1024u) {' \
    test_cache_ops 'cache_routes/reshape_and_cache_every_route'

# fp8 scales per KV head (2026-12-04): each kernel's read of its KV head's scale, back to the first
# head's (the one-scale read it replaced).
plant decode-scale-of-the-first-head cuda/decode/decode_kernel.cuh \
    'p.k_scale[c.kvh * p.scale_hs]' 'p.k_scale[0]' test_decode 'decode_features/fp8_scales_per_head'
plant decode-merge-scale-of-the-first-head cuda/decode/decode_kernel.cuh \
    'p.v_scale[p.scale_hs ? head / p.group : 0]' 'p.v_scale[0]' test_decode 'decode_features/fp8_scales_per_head'
plant decode-mma-scale-of-the-first-head cuda/decode/decode_mma.cuh \
    'p.v_scale[c.kvh * p.scale_hs]' 'p.v_scale[0]' test_decode 'decode_features/fp8_scales_per_head'
plant decode-scales-per-head-dropped csrc/ops/decode.c \
    'kp->scale_hs = kv->scales_per_head ? 1 : 0;' 'kp->scale_hs = 0;' test_decode 'decode_features/fp8_scales_per_head'
plant prefill-scale-of-the-first-head cuda/prefill/prefill_kernel.cuh \
    'p.k_scale[kvh * p.scale_hs]' 'p.k_scale[0]' test_prefill 'prefill_gpu/fp8_scales_per_head'
plant prefill-f32-scale-of-the-first-head cuda/prefill/prefill_f32.cu \
    'p.v_scale[kvh * p.scale_hs]' 'p.v_scale[0]' test_prefill 'prefill_gpu/fp8_scales_per_head'
plant hopper-score-scale-of-the-first-head cuda/prefill/prefill_wgmma.cuh \
    'scale * p.k_scale[kvh * p.scale_hs]' 'scale * p.k_scale[0]' test_prefill 'prefill_hopper/fp8_scales_per_head'
plant hopper-fp8-output-scale-of-the-first-head cuda/prefill/prefill_wgmma.cuh \
    'const float ov = H::kF8 && p.v_scale ? p.v_scale[kvh * p.scale_hs]' \
    'const float ov = H::kF8 && p.v_scale ? p.v_scale[0]' test_prefill 'prefill_hopper_fp8/per_head_scales'
plant hopper-fp8-new-keys-scale-of-the-first-head cuda/prefill/prefill_wgmma.cuh \
    'scale_recip(p.k_scale ? p.k_scale[kvh * p.scale_hs]' 'scale_recip(p.k_scale ? p.k_scale[0]' \
    test_prefill 'prefill_hopper_fp8/per_head_scales'
# The FP8 path at the ends of the float range (2026-12-06): a query row's
# largest |q| not held at 2^-117 or more (448 / it overflows under 2^-119),
# its reciprocal by __fdividef past 2^126 (0), a k_scale past 2^126 divided
# there the same way.
plant hopper-fp8-query-factor-unclamped cuda/prefill/prefill_wgmma.cuh \
    'const float mc = fmaxf(mx, 0x1p-117f);' 'const float mc = mx;' \
    test_prefill 'prefill_hopper_fp8/extreme_query_rows_and_k_scale'
plant hopper-fp8-query-reciprocal-past-2-126 cuda/prefill/prefill_wgmma.cuh \
    '__fdividef(112.0f, 0.25f * mc)' '__fdividef(448.0f, mc)' \
    test_prefill 'prefill_hopper_fp8/extreme_query_rows_and_k_scale'
plant hopper-fp8-scale-reciprocal-past-2-126 cuda/prefill/prefill_wgmma.cuh \
    'return s > 0x1p126f ? 0.25f * __fdividef(1.0f, 0.25f * s) :' 'return' \
    test_prefill 'prefill_hopper_fp8/extreme_query_rows_and_k_scale'
# A subnormal k_scale (2026-12-07 kernel mutation pass): its reciprocal unclamped, inf, so every
# new key quantised to +-448 or NaN (prefill.h counts a scale under 2^-126 as 2^-126 there).
plant hopper-fp8-subnormal-scale-reciprocal-unclamped cuda/prefill/prefill_wgmma.cuh \
    '__fdividef(1.0f, fmaxf(s, 0x1p-126f))' '__fdividef(1.0f, s)' \
    test_prefill 'prefill_hopper_fp8/extreme_query_rows_and_k_scale'
plant ragged-mma-scale-of-the-first-head cuda/ragged/ragged_mma.cuh \
    'const int sh = s_item.it.kvh * P.scale_hs;' 'const int sh = 0;' test_ragged 'ragged_gpu/fp8_scales_per_head'
plant ragged-simt-scale-of-the-first-head cuda/ragged/ragged_simt.cuh \
    'P.v_scale[c.it.kvh * P.scale_hs]' 'P.v_scale[0]' test_ragged 'ragged_gpu/fp8_scales_per_head'
plant cache-scale-of-the-first-head cuda/reshape_and_cache.cu \
    'scale_of<OUT>(p.v_scale, p.scale_hs, h);
        to kout[VEC]' 'scale_of<OUT>(p.v_scale, 0, h);
        to kout[VEC]' test_cache_ops 'cache_ops/fp8_scales_per_head'
plant cache-vllm-scale-of-the-first-head cuda/reshape_and_cache.cu \
    'scale_of<OUT>(p.k_scale, p.scale_hs, h), vs = scale_of<OUT>(p.v_scale, p.scale_hs, h);
    // Rows in' 'scale_of<OUT>(p.k_scale, 0, h), vs = scale_of<OUT>(p.v_scale, p.scale_hs, h);
    // Rows in' test_cache_ops 'cache_ops/fp8_scales_per_head'
plant kv-cache-update-scale-of-the-first-head cuda/reshape_and_cache.cu \
    'p.k_scale, p.scale_hs, ch / 2)' 'p.k_scale, 0, ch / 2)' test_cache_ops 'cache_ops/fp8_scales_per_head'

if [ "${PLANT_CHECK:-0}" = 1 ]; then
    # Each plant's tests must be in one of CI's runs (the build's meson tests).
    misfits=$(python3 scripts/plant_runs.py "$BUILD" <"$plants" | awk -F'\x1f' '$2 == "-" { print $1 ": " $4 }')
    if [ -n "$misfits" ]; then
        sed 's/^/SETUP FAILED  /' <<<"$misfits"
        survived=$((survived + $(wc -l <<<"$misfits")))
    fi
    echo "$survived stale plant(s)"
else
    echo "$survived bug(s) survived"
    # The programs still hold their last plant: rebuild them from the reverted sources.
    ninja -C "$BUILD" >/dev/null 2>&1 || echo "plant-bugs: rebuilding $BUILD from the reverted sources failed"
fi
[ "$survived" -eq 0 ]
