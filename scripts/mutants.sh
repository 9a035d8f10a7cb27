#!/usr/bin/env bash
# Mutation check of the host layer (issue 16, item 13): plants 30 bugs in the
# real sources (validation, metadata builders, batch shaping, the CPU
# references), one at a time, rebuilds the host test programs, runs them all,
# and reverts: about 13 s a mutant, 6 minutes in all on 2 cores. Each mutant
# must make at least one host test fail; the script prints, for each, the
# tests that killed it, and exits 1 if any survived.
# The sources are always restored (trap), even on failure or Ctrl-C.
#
#   scripts/mutants.sh [BUILD]     (default build-mutants: a host-only build dir,
#                                   configured here if missing; no nvcc needed to
#                                   build the host tests)
#   MUTANTS_CHECK=1 scripts/mutants.sh   only checks that each mutant's text still occurs
#                                   exactly once in its file (nothing built or touched;
#                                   seconds; run by scripts/test.sh, so an edit of the
#                                   code cannot leave a mutant stale unnoticed, as six were
#                                   until 2026-12-07)
set -uo pipefail
shopt -s extglob
cd "$(dirname "$0")/.." || exit 1
BUILD=${1:-build-mutants}
LOGDIR=${PA_MUTANTS_LOGS:-/tmp/pa-mutants}
mkdir -p "$LOGDIR"
survived=0
planted=""

restore() {
    if [ -n "$planted" ] && [ -f "$planted.mut-bak" ]; then
        mv "$planted.mut-bak" "$planted"
        touch "$planted" # newer than the mutant's objects: the next build recompiles it
    fi
    planted=""
}
trap 'restore; exit 130' INT TERM
trap restore EXIT

check_only=${MUTANTS_CHECK:-0}
if [ "$check_only" = 1 ]; then
    :
elif [ ! -f "$BUILD/build.ninja" ]; then
    meson setup "$BUILD" -Dinterp=false -Dgpu_tests=false -Dgpu_archs=90 >"$LOGDIR/setup.log" 2>&1 ||
        { echo "meson setup failed (see $LOGDIR/setup.log)"; exit 2; }
fi
# The Criterion programs of tests/host (the host suite's CLI tests run the
# pagedattn program with arguments; bare, it exits 2).
if [ "$check_only" != 1 ]; then
    hosts=$(meson introspect "$BUILD" --tests | python3 -c \
        'import json,sys; print(" ".join(sorted({t["cmd"][0] for t in json.load(sys.stdin) if "host" in t["suite"][0] and "/tests/host/" in t["cmd"][0]})))')
    targets=$(for h in $hosts; do echo "${h#"$(cd "$BUILD" && pwd)"/}"; done)
    # shellcheck disable=SC2086
    ninja -C "$BUILD" $targets >"$LOGDIR/build.log" 2>&1 || { echo "the unmutated build fails (see $LOGDIR/build.log)"; exit 2; }
    for h in $hosts; do
        if ! "$h" >"$LOGDIR/baseline-$(basename "$h").log" 2>&1; then
            echo "the unmutated host suite fails: $(basename "$h") (see $LOGDIR)"
            exit 2
        fi
    done
fi

# mutant NAME FILE 'old text' 'new text': the old text must occur exactly once.
# PA_MUTANTS_ONLY=NAME runs that one mutant alone (a glob: 'kvu-*', '@(a|b)').
tried=0
mutant() {
    local name=$1 file=$2 old=$3 new=$4
    # shellcheck disable=SC2053
    [ -n "${PA_MUTANTS_ONLY:-}" ] && [[ $name != $PA_MUTANTS_ONLY ]] && return
    tried=$((tried + 1))
    if [ "$check_only" = 1 ]; then
        local found
        found=$(python3 -c 'import sys; print(open(sys.argv[1]).read().count(sys.argv[2]))' "$file" "$old")
        if [ "$found" != 1 ]; then
            printf '%-28s STALE: its text occurs %s times in %s\n' "$name" "$found" "$file"
            survived=$((survived + 1))
        fi
        return
    fi
    cp "$file" "$file.mut-bak"
    planted=$file
    if ! python3 - "$file" "$old" "$new" <<'EOF'; then
import sys
path, old, new = sys.argv[1:4]
s = open(path).read()
if s.count(old) != 1:
    sys.exit(f"mutant: expected exactly one '{old}' in {path}, found {s.count(old)}")
open(path, "w").write(s.replace(old, new))
EOF
        restore
        printf '%-28s SETUP FAILED (text not found)\n' "$name"
        survived=$((survived + 1))
        return
    fi
    local log="$LOGDIR/$name.log" killers=""
    # shellcheck disable=SC2086
    if ! ninja -C "$BUILD" $targets >"$log" 2>&1; then
        killers="(does not compile)"
    else
        for h in $hosts; do
            local one
            one="$LOGDIR/$name-$(basename "$h").log"
            timeout 600 "$h" >"$one" 2>&1
            local rc=$?
            [ $rc -eq 0 ] && continue
            local failed
            failed=$(grep -oE '^\[(FAIL|CRASH)\] [^:]+::[^: ]+' "$one" | sed -E 's/^\[(FAIL|CRASH)\] //' | sort -u | tr '\n' ' ')
            [ -z "$failed" ] && failed="$(basename "$h") (exit $rc)"
            killers="$killers$failed"
        done
    fi
    restore
    if [ -z "$killers" ]; then
        printf '%-28s SURVIVED\n' "$name"
        survived=$((survived + 1))
    else
        printf '%-28s killed by %s\n' "$name" "$killers"
    fi
}

mutant swap-src-le-num-blocks csrc/ops/cache_ops_validate.c \
    'PA_REQUIRE(s >= 0 && s < src_num_blocks,' 'PA_REQUIRE(s >= 0 && s <= src_num_blocks,'
mutant nhd-block-stride-overlap csrc/core/kv_cache.c \
    'PA_REQUIRE(bstr >= need, "nhd: block_stride' 'PA_REQUIRE(1 || bstr >= need, "nhd: block_stride'
mutant hnd-head-stride-overlap csrc/core/kv_cache.c \
    'PA_REQUIRE(hstr >= need,' 'PA_REQUIRE(1 || hstr >= need,'
mutant decode-local-blocks-neg csrc/ops/decode.c \
    'PA_REQUIRE(p->bs_local_blocks >= 0,' 'PA_REQUIRE(1 || p->bs_local_blocks >= 0,'
mutant decode-soft-cap-finite csrc/ops/decode.c \
    'PA_REQUIRE(pa_soft_cap_ok(p->soft_cap),' 'PA_REQUIRE(p->soft_cap >= 0.0f,'
mutant prefill-heads-65535 csrc/ops/prefill.c \
    'num_heads > 0 && num_heads <= 65535,' 'num_heads > 0,'
mutant prefill-k-stride csrc/ops/prefill.c \
    'PA_REQUIRE(k_stride == 0 || k_stride >= krow,' 'PA_REQUIRE(1 || k_stride == 0 || k_stride >= krow,'
mutant prefill-num-tokens-neg csrc/ops/prefill.c \
    'PA_REQUIRE(p->num_tokens >= 0,' 'PA_REQUIRE(1 || p->num_tokens >= 0,'
mutant prefill-cu-k-is-cu-q csrc/ops/prefill.c \
    'PA_REQUIRE(p->cu_seqlens_k == NULL || p->cu_seqlens_k != p->cu_seqlens_q || p->num_k_tokens == p->num_q_tokens,' \
    'PA_REQUIRE(1 || p->cu_seqlens_k == NULL || p->cu_seqlens_k != p->cu_seqlens_q || p->num_k_tokens == p->num_q_tokens,'
mutant copy-blocks-padding-and csrc/reference/cache_ops.c \
    '        if (s == -1 || d == -1)
            continue; /* padding pair */' '        if (s == -1 && d == -1)
            continue; /* padding pair */'
mutant rc-value-rows-at-key-stride csrc/ops/cache_ops_validate.c \
    'p->v_tok_stride = in->value_token_stride ? in->value_token_stride' \
    'p->v_tok_stride = in->key_token_stride ? in->key_token_stride'

# The blind pass over the host layer's logic and the CPU references (68
# mutants): the eleven it found surviving, each now killed by a test written for
# it, then four killed ones worth keeping.
mutant slices-max-block-no-tail csrc/host/metadata.c \
    'return (uint32_t)(((int64_t)INT32_MAX - (block_size - 1)) / block_size);' \
    'return (uint32_t)((int64_t)INT32_MAX / block_size);'
mutant common-checks-context-cols csrc/host/metadata.c \
    'PA_TRY(check_touched_blocks("block_table", r, b->block_table + (size_t)r * (size_t)b->block_table_stride, c, s,' \
    'PA_TRY(check_touched_blocks("block_table", r, b->block_table + (size_t)r * (size_t)b->block_table_stride, 0, s,'
mutant bsparse-q-block-of-seq-len csrc/reference/paged_decode.c \
    'const int64_t q_block = (seq_len - 1) / p->bs_block_size;' 'const int64_t q_block = seq_len / p->bs_block_size;'
mutant prefill-alibi-from-last-key csrc/reference/prefill.c \
    'x -= r->slope * fabs((double)j - (double)r->q_pos);' 'x -= r->slope * fabs((double)j - (double)(r->k_len - 1));'
mutant context-new-v-at-k-stride csrc/reference/prefill.c \
    'const int64_t v_stride = p->v_stride ? p->v_stride : (int64_t)nkv * hs;
    const int fp8' 'const int64_t v_stride = p->v_stride ? p->k_stride : (int64_t)nkv * hs;
    const int fp8'
mutant prompt-v-at-k-stride csrc/reference/prefill.c \
    'const int64_t v_stride = p->v_stride ? p->v_stride : (int64_t)nkv * hs;
    /* Scratch' 'const int64_t v_stride = p->v_stride ? p->k_stride : (int64_t)nkv * hs;
    /* Scratch'
mutant ragged-fp8-v-unrounded csrc/reference/ragged.c \
    'v[i] = round_to(p->q_dtype, v[i] * pa_host_kv_scale(kv, kv->v_scale, h));' \
    'v[i] = v[i] * pa_host_kv_scale(kv, kv->v_scale, h);'
mutant ragged-p-unrounded csrc/reference/ragged.c \
    'const double pk = round_to(p->q_dtype, (float)(logits[k] / sum));' 'const double pk = logits[k] / sum;'
mutant copy-half-pad-is-a-source csrc/reference/cache_ops.c \
    'if (m[2 * i] != -1 && m[2 * i + 1] != -1)
            src[ns++] = m[2 * i];' 'if (m[2 * i] != -1)
            src[ns++] = m[2 * i];'
mutant rc-view-extent-all-tokens csrc/ops/cache_ops_validate.c \
    'ok = pa_mul_i64(num_tokens - 1, t, &a)' 'ok = pa_mul_i64(num_tokens, t, &a)'
mutant kvu-extent-all-tokens csrc/ops/cache_ops_validate.c \
    'pa_mul_i64(num_tokens - 1, ts, &ext)' 'pa_mul_i64(num_tokens, ts, &ext)'
mutant rc-tok-stride-no-head-stride csrc/ops/cache_ops_validate.c \
    'p->k_tok_stride = in->key_token_stride ? in->key_token_stride : nh * p->k_head_stride;' \
    'p->k_tok_stride = in->key_token_stride ? in->key_token_stride : nh * hs;'
mutant slices-new-kv-from-position csrc/host/metadata.c \
    'int32_t new_kv = c->query_start_loc[r];' 'int32_t new_kv = c->num_computed_tokens[r];'
mutant decode-alibi-from-past-end csrc/reference/paged_decode.c \
    'x += (double)p->alibi_slopes[h] * (double)(pos - L + 1);' 'x += (double)p->alibi_slopes[h] * (double)(pos - L);'
mutant local-last-chunk-full csrc/host/batch.c \
    'last_keys = kr == 0 ? chunk : kr;' 'last_keys = kr;'
mutant kvu-slice-fields-at-num csrc/reference/cache_ops.c \
    '        const int64_t cs = slices[i], ns = slices[(int64_t)np + i], len = slices[2 * (int64_t)np + i];
        for (int64_t j = 0; j < len; j++) {' '        const int64_t cs = slices[i], ns = slices[(int64_t)n + i], len = slices[2 * (int64_t)n + i];
        for (int64_t j = 0; j < len; j++) {'
# Untested until 2026-12-07 (twenty-fourth session): pa_compare's relative error over a zero
# reference (check.h: left out), and a mixed batch of exactly INT32_MAX tokens (not an overflow).
mutant compare-rel-err-zero-ref csrc/core/check.c \
    'if (f != 0.0 && err / fabs(f) > r.max_rel_err)' 'if (err / fabs(f) > r.max_rel_err)'
mutant mixed-tokens-int32-edge csrc/ops/prefill.c \
    'p->num_decode_tokens <= INT32_MAX,' 'p->num_decode_tokens < INT32_MAX,'
# The ragged workspace's decode partial rows one row a sequence short: the prefill term's room
# hid it from every batch until ragged_plan/decode_worst_case_fills_the_partial_rows_bound.
mutant ragged-decode-part-rows-short csrc/ops/ragged.c \
    'min64(T * g, PA_RG_DEC_ROWS * S)' 'min64(T * g, (PA_RG_DEC_ROWS - 1) * S)'

if [ "$check_only" = 1 ]; then
    echo "$((tried - survived)) of $tried mutants find their text; $survived stale"
    [ "$survived" -eq 0 ]
    exit
fi
# the sources are back: one rebuild so the build dir matches them
# shellcheck disable=SC2086
ninja -C "$BUILD" $targets >/dev/null 2>&1
echo "$((tried - survived)) of $tried mutants killed"
[ "$survived" -eq 0 ]
