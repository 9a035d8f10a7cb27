/* Decode attention: validation shared by the CPU reference and the kernels, the
 * workspace queries, and the kernel parameter block of the GPU entries
 * (csrc/ops/decode_entry.c launches it; cuda/decode/ holds the kernels). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decode_internal.h"
#include "internal.h"

/* The supported block sizes live in one place, heuristics.c, and are read from there. */
static int in_list(int v, pa_status (*list_fn)(int32_t *, int32_t, int32_t *)) {
    int32_t list[32], n = 0;
    if (list_fn(list, 32, &n) != PA_SUCCESS)
        return 0;
    for (int32_t i = 0; i < n && i < 32; i++)
        if (list[i] == v)
            return 1;
    return 0;
}

/* The buffers a decode launch writes (out, lse, the workspace) share no byte
 * with one it reads or with each other (decode.h): a CTA writes its rows of
 * out, its lse and its partials while other CTAs still read the query, the
 * cache and the metadata, and the merge reads the partials while it writes
 * out. ws NULL: the workspace is not looked at (validation). */
static pa_status decode_apart(const pa_decode_params *p, int64_t lse_bytes, const void *ws, int64_t ws_bytes) {
    const pa_kv_cache *kv = &p->kv;
    const size_t qsz = pa_dtype_size(p->q_dtype);
    const int64_t row = (int64_t)p->num_heads * kv->head_size, n = p->num_seqs, heads4 = (int64_t)p->num_heads * 4;
    pa_span in[9];
    int ni = pa_kv_cache_spans(kv, "kv", in);
    in[ni++] = (pa_span){"query", p->query, pa_rows_bytes(n, p->q_stride, row, qsz), NULL};
    in[ni++] = (pa_span){"block_tables", p->block_tables, pa_rows_bytes(n, 0, p->block_table_stride, 4), NULL};
    in[ni++] = (pa_span){"seq_lens", p->seq_lens, n * 4, NULL};
    in[ni++] = (pa_span){"alibi_slopes", p->alibi_slopes, heads4, NULL};
    in[ni++] = (pa_span){"sinks", p->sinks, heads4, NULL};
    const pa_span out[3] = {{"out", p->out, pa_rows_bytes(n, 0, row, qsz), NULL},
                            {"lse", p->lse, lse_bytes, NULL},
                            {"workspace", ws, ws_bytes, NULL}};
    return pa_check_spans_apart("decode", in, ni, out, 3);
}

pa_status pa_decode_validate(const pa_decode_params *p) { return pa_decode_validate_fields(p, 1); }

pa_status pa_decode_validate_fields(const pa_decode_params *p, int apart) {
    PA_REQUIRE(p != NULL, "decode: params is NULL");
    PA_REQUIRE(p->num_seqs >= 0, "decode: num_seqs must be >= 0 (got %d)", p->num_seqs);
    PA_REQUIRE(p->num_heads > 0, "decode: num_heads must be > 0 (got %d)", p->num_heads);
    PA_REQUIRE(pa_is_float_dtype(p->q_dtype), "decode: query dtype must be f32, f16 or bf16 (got %s)",
               pa_dtype_name(p->q_dtype));
    PA_TRY(pa_kv_cache_validate(&p->kv));
    const pa_kv_cache *kv = &p->kv;
    if (kv->layout == PA_LAYOUT_COMBINED)
        return pa_fail(PA_ERR_UNSUPPORTED, "decode: the combined layout is served by pa_ragged_paged_attention");
    PA_REQUIRE(p->num_heads % kv->num_kv_heads == 0, "decode: num_heads %d is not a multiple of num_kv_heads %d",
               p->num_heads, kv->num_kv_heads);
    if (!pa_head_size_ok(kv->head_size))
        return pa_fail(PA_ERR_UNSUPPORTED, "decode: head_size %d unsupported; supported: " PA_HEAD_SIZES_TEXT,
                       kv->head_size);
    if (!in_list(kv->block_size, pa_supported_block_sizes))
        return pa_fail(PA_ERR_UNSUPPORTED, "decode: block_size %d unsupported; supported: 8,16,32,64,128",
                       kv->block_size);
    if (kv->dtype != p->q_dtype && !pa_dtype_is_fp8(kv->dtype))
        return pa_fail(PA_ERR_UNSUPPORTED,
                       "decode: cache dtype %s with query dtype %s; the cache must match the query or be fp8",
                       pa_dtype_name(kv->dtype), pa_dtype_name(p->q_dtype));
    const int64_t row = (int64_t)p->num_heads * kv->head_size;
    PA_REQUIRE(p->q_stride == 0 || p->q_stride >= row, "decode: q_stride %lld smaller than num_heads*head_size %lld",
               (long long)p->q_stride, (long long)row);
    PA_TRY(pa_check_rows_extent("decode", "query", p->num_seqs, p->q_stride, row));
    PA_REQUIRE(isfinite(p->scale), "decode: scale must be finite");
    PA_REQUIRE(pa_soft_cap_ok(p->soft_cap), "decode: soft_cap must be 0 (off) or in [FLT_MIN, 2^126], got %g",
               (double)p->soft_cap);
    PA_REQUIRE(p->sliding_window >= 0, "decode: sliding_window must be >= 0 (0 = off), got %d", p->sliding_window);
    if (p->bs_vert_stride > 1) {
        PA_REQUIRE(
            p->bs_block_size > 0 && p->bs_block_size % kv->block_size == 0,
            "decode: bs_block_size (vLLM's blocksparse_block_size) %d must be a positive multiple of block_size %d",
            p->bs_block_size, kv->block_size);
        PA_REQUIRE(p->bs_local_blocks >= 0,
                   "decode: bs_local_blocks (vLLM's blocksparse_local_blocks) must be >= 0 (got %d)",
                   p->bs_local_blocks);
        PA_REQUIRE(p->tp_rank >= 0, "decode: tp_rank must be >= 0 (got %d)", p->tp_rank);
        /* The per-head offset (tp_rank * heads + head) * |sliding_step| + 1
         * plus the largest key block must fit in int32, the width the kernels
         * and the reference compute it in. */
        const int64_t heads = p->bs_head_sliding_step >= 0 ? p->num_heads : kv->num_kv_heads;
        const int64_t step = p->bs_head_sliding_step >= 0 ? p->bs_head_sliding_step : -(int64_t)p->bs_head_sliding_step;
        const int64_t kmax = p->max_seq_len > 0 ? p->max_seq_len / p->bs_block_size : 0;
        const int64_t top = (int64_t)p->tp_rank * heads + heads - 1; /* < 2^62 */
        PA_REQUIRE(step == 0 || top <= (INT32_MAX - 1 - kmax) / step,
                   "decode: block-sparse head offset (tp_rank %d, %lld heads, bs_head_sliding_step %d) overflows int32",
                   p->tp_rank, (long long)heads, p->bs_head_sliding_step);
    }
    pa_lse_strides ls;
    PA_TRY(pa_lse_layout("decode", p->num_heads, p->num_seqs, p->lse_head_stride, p->lse_token_stride, &ls));
    if (p->num_seqs == 0)
        return PA_SUCCESS;
    PA_TRY(pa_check_not_null("decode", "out", p->out));
    PA_TRY(pa_check_not_null("decode", "query", p->query));
    PA_TRY(pa_check_not_null("decode", "block_tables", p->block_tables));
    PA_TRY(pa_check_not_null("decode", "seq_lens", p->seq_lens));
    PA_REQUIRE(p->block_table_stride > 0, "decode: block_table_stride must be > 0 (got %d)", p->block_table_stride);
    PA_REQUIRE(p->max_seq_len > 0, "decode: max_seq_len must be > 0 (got %d)", p->max_seq_len);
    PA_REQUIRE(p->max_seq_len <= PA_MAX_SEQ_LEN,
               "decode: max_seq_len %d is above %d (the kernels' int32 key positions)", p->max_seq_len, PA_MAX_SEQ_LEN);
    PA_REQUIRE((int64_t)p->max_seq_len <= (int64_t)p->block_table_stride * kv->block_size,
               "decode: max_seq_len %d needs %lld blocks but the block table has %d columns", p->max_seq_len,
               ((long long)p->max_seq_len + kv->block_size - 1) / kv->block_size, p->block_table_stride);
    if (p->lse) {
        /* (the sizes fit: num_seqs x num_heads x head_size passed the query's extent check) */
        const int64_t qsz = (int64_t)pa_dtype_size(p->q_dtype), qs = p->q_stride ? p->q_stride : row;
        PA_REQUIRE((uintptr_t)p->lse % 4 == 0, "decode: lse must be 4-byte aligned (f32)");
        const int64_t lse_bytes = ls.bytes;
        PA_REQUIRE(!pa_ranges_overlap(p->lse, lse_bytes, p->out, (int64_t)p->num_seqs * row * qsz),
                   "decode: lse overlaps out");
        PA_REQUIRE(!pa_ranges_overlap(p->lse, lse_bytes, p->query, (qs * (p->num_seqs - 1) + row) * qsz),
                   "decode: lse overlaps query");
    }
    return apart ? decode_apart(p, ls.bytes, NULL, 0) : PA_SUCCESS;
}

/* ---- GPU entries: decomposition, workspace, kernel geometry --------------------- */

static int32_t pow2_floor(int32_t v) {
    int32_t p = 1;
    while (p <= v / 2)
        p *= 2;
    return p;
}

/* Row pitch in shared memory: a multiple of 16 bytes holding an odd number of
 * 16-byte units, so 8 consecutive rows read at the same column hit 8 different
 * bank groups (conflict-free 16-byte loads). */
/* log2 of a power of two (the geometry's sizes all are). */
static int32_t log2_exact(int32_t v) {
    int32_t s = 0;
    while ((1 << s) < v)
        s++;
    return s;
}

static int32_t smem_pitch(int32_t bytes) {
    int32_t r = (bytes + 15) / 16 * 16;
    if ((r / 16) % 2 == 0)
        r += 16;
    return r;
}

/* Largest power of two <= unit dividing v (an address or a byte stride). */
static int32_t unit_for(int32_t unit, uint64_t v) {
    while (unit > 1 && v % (uint64_t)unit != 0)
        unit /= 2;
    return unit;
}

static int64_t round256(int64_t v) { return (v + 255) / 256 * 256; }

int32_t pa_dec_auto_min_part(void) {
    const char *e = getenv("PAGEDATTN_DECODE_MIN_SPLIT");
    char *end = NULL;
    long v = e ? strtol(e, &end, 10) : 0;
    if (e && (end == e || *end != '\0')) /* "512abc", "4096.5", "512 ": not a number, ignored */
        v = 0;
    return v >= PA_DEC_AUTO_MIN_PART && v <= PA_DEC_AUTO_MIN_PART_MAX && (v & (v - 1)) == 0 ? (int32_t)v
                                                                                            : PA_DEC_AUTO_MIN_PART;
}

/* Splits per sequence the grid is sized for; the workspace is sized for
 * min_part PA_DEC_AUTO_MIN_PART (the most splits any smallest split gives),
 * so the size queries do not depend on the environment. */
static int32_t max_splits_for(int mode, int32_t max_seq_len, int32_t min_part) {
    if (mode == PA_DEC_MODE_V1)
        return 1;
    if (mode == PA_DEC_MODE_V2)
        return (int32_t)(((int64_t)max_seq_len + PA_DEC_V2_PART - 1) / PA_DEC_V2_PART);
    const int64_t n = ((int64_t)max_seq_len + min_part - 1) / min_part;
    return (int32_t)(n < PA_DEC_AUTO_MAX_SPLITS ? n : PA_DEC_AUTO_MAX_SPLITS);
}

/* The shape fields the workspace depends on; the size queries check only these. */
static pa_status shape_check(const pa_decode_params *p, const char *who) {
    PA_REQUIRE(p != NULL, "%s: params is NULL", who);
    PA_REQUIRE(p->num_seqs >= 0, "%s: num_seqs must be >= 0 (got %d)", who, p->num_seqs);
    PA_REQUIRE(p->num_heads > 0, "%s: num_heads must be > 0 (got %d)", who, p->num_heads);
    PA_REQUIRE(p->kv.num_kv_heads > 0 && p->num_heads % p->kv.num_kv_heads == 0,
               "%s: num_heads %d must be a positive multiple of kv.num_kv_heads %d", who, p->num_heads,
               p->kv.num_kv_heads);
    /* bad input, not unsupported (as pa_kv_cache_validate says it) */
    PA_REQUIRE(p->kv.head_size > 0, "%s: kv.head_size must be > 0 (got %d)", who, p->kv.head_size);
    if (!pa_head_size_ok(p->kv.head_size))
        return pa_fail(PA_ERR_UNSUPPORTED, "%s: head_size %d unsupported; supported: " PA_HEAD_SIZES_TEXT, who,
                       p->kv.head_size);
    PA_REQUIRE(p->num_seqs == 0 || p->max_seq_len > 0, "%s: max_seq_len must be > 0 (got %d)", who, p->max_seq_len);
    return PA_SUCCESS;
}

static pa_status workspace_layout(const pa_decode_params *p, int mode, int32_t *max_splits, int64_t *tmp_bytes,
                                  int64_t *es_bytes, size_t *total) {
    const int32_t ms = p->num_seqs == 0 ? 1 : max_splits_for(mode, p->max_seq_len, PA_DEC_AUTO_MIN_PART);
    *max_splits = ms;
    *tmp_bytes = *es_bytes = 0;
    *total = 0;
    /* v2's 512-token partitions are grid rows: the size query refuses what the launch would */
    PA_REQUIRE(ms <= 65535, "decode: max_seq_len %d needs %d splits; at most 65535 (grid y)", p->max_seq_len, ms);
    if (ms <= 1)
        return PA_SUCCESS;
    const int64_t sh = (int64_t)p->num_seqs * p->num_heads; /* < 2^62 */
    PA_REQUIRE(sh <= ((int64_t)1 << 50) / ms, "decode: workspace size overflows (num_seqs %d, num_heads %d, %d splits)",
               p->num_seqs, p->num_heads, ms);
    const int64_t rows = sh * ms; /* <= 2^50: the byte counts below fit */
    /* The partial rows are in the output's type: 2 bytes an element for f16 and
     * bf16 queries, 4 for f32 (and for any other value, which the launch
     * refuses: the size query stays on the safe side). */
    const int64_t esz = p->q_dtype == PA_DTYPE_F16 || p->q_dtype == PA_DTYPE_BF16 ? 2 : 4;
    *tmp_bytes = round256(rows * p->kv.head_size * esz);
    *es_bytes = round256(rows * 4);
    *total = (size_t)(*tmp_bytes + 2 * *es_bytes);
    return PA_SUCCESS;
}

pa_status pa_dec_workspace_size(const pa_decode_params *p, int mode, size_t *bytes) {
    PA_REQUIRE(bytes != NULL, "decode workspace size: bytes is NULL");
    PA_TRY(shape_check(p, "decode workspace size"));
    int32_t ms;
    int64_t tb, eb;
    size_t total;
    PA_TRY(workspace_layout(p, mode, &ms, &tb, &eb, &total));
    *bytes = total;
    pa_clear_error();
    return PA_SUCCESS;
}

pa_status pa_paged_attention_v2_workspace_size(const pa_decode_params *p, size_t *bytes) {
    return pa_dec_workspace_size(p, PA_DEC_MODE_V2, bytes);
}

pa_status pa_paged_attention_decode_workspace_size(const pa_decode_params *p, size_t *bytes) {
    return pa_dec_workspace_size(p, PA_DEC_MODE_AUTO, bytes);
}

/* Tile geometry and shared-memory layout (see cuda/decode/decode_kernel.cuh).
 * lt: the long tile of dec_long_tile (128 tokens, unpadded K rows), else the
 * general geometry; tc: a shape the tensor-core kernel serves
 * (dec_tensor_cores), which reads none of the CUDA-core kernel's Q, logit and
 * state rows, so they are left out. */
static void dec_geometry(pa_dec_kparams *kp, int lt, int tc) {
    const int32_t hs = kp->head_size, esz = kp->esz, hb = hs * esz;
    const int32_t nt = PA_DEC_THREADS;
    kp->kchunks = (hb + 15) / 16;
    kp->headq = kp->kchunks * (16 / esz);
    /* About 8 KiB of K per stage: enough bytes in flight, little shared memory. */
    int32_t t = pow2_floor(8192 / hb);
    kp->tile = lt ? PA_DEC_MAX_TILE : t < 8 ? 8 : t > 64 ? 64 : t;
    const int32_t T = kp->tile;

    /* (in int64: a group near INT32_MAX, num_heads over one KV head, passed
     * validation and overflowed here, giving a negative CTA count the launch
     * check let through) */
    kp->head_chunks = (int32_t)(((int64_t)kp->group + PA_DEC_MAX_HPC - 1) / PA_DEC_MAX_HPC);
    kp->hpc = (int32_t)(((int64_t)kp->group + kp->head_chunks - 1) / kp->head_chunks);
    kp->seq_div = pa_kv_divider_make(kp->num_kv_heads * kp->head_chunks);
    kp->chunk_div = pa_kv_divider_make(kp->head_chunks);
    kp->pv_groups = (kp->hpc + PA_DEC_GB - 1) / PA_DEC_GB;
    kp->pv_slices = nt / (kp->pv_groups * (hs / 8));

    /* Q.K: an item is (group of PA_DEC_GB heads, token); ds lanes split its
     * dot products; a warp covers 32/ds tokens of one head group, so T * ds >=
     * 32; no more lanes than 16-byte chunks in a row. */
    int32_t ds = kp->pv_groups * T >= nt ? 1 : pow2_floor(nt / (kp->pv_groups * T));
    const int32_t ds_max = kp->kchunks >= 32 ? 32 : pow2_floor(kp->kchunks);
    if (ds > ds_max)
        ds = ds_max;
    if (ds * T < 32)
        ds = 32 / T;
    kp->ds = ds;

    /* Rows of a multiple of 8 granules are XOR-swizzled (no padding, no bank
     * conflicts); others are padded to an odd number of 16-byte chunks. */
    kp->swz_k = kp->kchunks % 8 == 0 ? 7 : 0;
    kp->pitch_k = kp->swz_k ? kp->kchunks * 16 : lt ? hb : smem_pitch(hb);
    kp->stage_k_bytes = T * kp->pitch_k;
    kp->vllm_v = kp->g.layout == PA_LAYOUT_VLLM;
    if (kp->vllm_v) {
        /* V^T: a row of the tile's T tokens per dim, stored blocks side by
         * side; T * esz is a power of two (32..256 bytes), kept unpadded by
         * the swizzle of vt_at (cuda/decode/decode_kernel.cuh). */
        kp->sbs = kp->block_size < T ? kp->block_size : T;
        kp->pitch_v = T * esz;
        kp->vt_rs = log2_exact(kp->pitch_v);
        kp->stage_v_bytes = hs * kp->pitch_v;
    } else {
        const int32_t gv = esz == 4 ? 32 : 16;
        kp->sbs = 0;
        kp->gv_shift = log2_exact(gv);
        kp->swz_v = hb % gv == 0 && (hb / gv) % 8 == 0 ? 7 : 0;
        kp->pitch_v = kp->swz_v ? hb : smem_pitch(hb);
        kp->stage_v_bytes = T * kp->pitch_v;
    }

    /* Copy units: the largest power of two (<= 16 bytes) dividing every
     * address and stride a unit starts at. */
    const uint64_t kaddr = (uint64_t)(uintptr_t)kp->k_cache, vaddr = (uint64_t)(uintptr_t)kp->v_cache;
    const pa_kv_geom *g = &kp->g;
    int32_t uk = unit_for(16, kaddr), uv = unit_for(16, vaddr);
    uk = unit_for(uk, (uint64_t)g->block_stride * (uint64_t)esz);
    uv = unit_for(uv, (uint64_t)g->block_stride * (uint64_t)esz);
    uk = unit_for(uk, (uint64_t)g->head_stride * (uint64_t)esz);
    uv = unit_for(uv, (uint64_t)g->head_stride * (uint64_t)esz);
    if (kp->vllm_v) {
        /* key: 16-byte x groups; value rows: block_size elements per dim. */
        uv = unit_for(uv, (uint64_t)kp->block_size * (uint64_t)esz);
        uv = unit_for(uv, (uint64_t)kp->sbs * (uint64_t)esz);
    } else {
        uk = unit_for(uk, (uint64_t)g->page_stride * (uint64_t)esz);
        uv = unit_for(uv, (uint64_t)g->page_stride * (uint64_t)esz);
        uk = unit_for(uk, (uint64_t)hb);
        uv = unit_for(uv, (uint64_t)hb);
    }
    kp->unit_k = uk;
    kp->unit_v = uv;

    /* Shifts and byte strides of the tile loop (cuda/decode/decode_kernel.cuh). */
    kp->bs_shift = log2_exact(kp->block_size);
    kp->tpt_shift = log2_exact(nt / T);
    kp->units_k = hb / uk;
    kp->units_v = hb / uv;
    kp->k_chunk_bytes = kp->vllm_v ? kp->block_size * 16 : 16;
    kp->v_dim_bytes = kp->block_size * esz;
    kp->tw_shift = log2_exact(32 / ds);
    kp->wpg_shift = log2_exact(T / (32 / ds));
    if (kp->vllm_v) {
        const int32_t per_row = kp->sbs * esz / uv;
        kp->pr_shift = log2_exact(per_row);
        kp->pairs_shift = log2_exact((T / kp->sbs) * per_row);
    }

    /* Shared memory: [K stages][V stages] (reused for the final reduction),
     * then Q, logits, softmax state, token flags, block-table window. */
    const int32_t tiles = PA_DEC_STAGES * (kp->stage_k_bytes + kp->stage_v_bytes);
    const int32_t red = kp->pv_slices * kp->hpc * hs * 4;
    kp->off_v = PA_DEC_STAGES * kp->stage_k_bytes;
    /* Every byte a kernel reads is written per tile (data or zero fill) except
     * the pad that rounds a K row up to 16-byte chunks (fp8, head 120): the K
     * stages are cleared once per CTA only then. */
    kp->zero_bytes = kp->kchunks * 16 > hb ? PA_DEC_STAGES * kp->stage_k_bytes : 0;
    kp->off_q = ((tiles > red ? tiles : red) + 15) / 16 * 16;
    kp->off_logit = kp->off_q + kp->hpc * kp->headq * 4;
    kp->off_stat = kp->off_logit + kp->hpc * T * 4;
    kp->off_tok = kp->off_stat + 3 * 16 * 4;
    if (tc) /* the tensor-core kernel's epilogue fits in the tile stages */
        kp->off_q = kp->off_logit = kp->off_stat = kp->off_tok = tiles;
    kp->off_tab = kp->off_tok + PA_DEC_STAGES * PA_DEC_MAX_TILE;
    kp->smem_bytes = kp->off_tab + PA_DEC_TABLE_WIN * 4;
}

/* Does the tensor-core kernel serve this shape? (cuda/decode/decode_launch.cuh's
 * launch_mma): a 16-bit query over a cache of its dtype or fp8, head 32, 64,
 * 80, 96, 112, 128, 192 or 256, or 120 with a 16-bit cache; no block-sparse
 * mask; 16-byte key copies (and value copies on a flash layout); CTAs of up to
 * 8 query heads (two head groups of PA_DEC_GB), or 16 at heads 64, 128 and 192
 * (two head blocks). Its geometry then has no CUDA-core rows (dec_geometry),
 * and the launcher refuses it if no tensor-core instance matches: a
 * disagreement fails the launch, never runs the CUDA-core kernel without its
 * rows. Decided on the general geometry (dec_geometry(kp, 0, 0)); the shape
 * alone decides it, so batch invariance holds. */
static int dec_tensor_cores(const pa_dec_kparams *kp) {
    const int hs = kp->head_size, fp8 = pa_dtype_is_fp8((pa_dtype)kp->cache_dtype);
    const int q16 = kp->q_dtype == PA_DTYPE_F16 || kp->q_dtype == PA_DTYPE_BF16;
    return q16 && PA_DEC_MMA_HEAD(hs, fp8) && !kp->sparse && kp->unit_k == 16 && (kp->vllm_v || kp->unit_v == 16) &&
           kp->pv_groups <= (PA_DEC_MMA_TWO_BLOCKS(hs) ? 4 : 2);
}

/* A 16-bit query over an fp8 cache at head 64 or 32 on a flash layout, which
 * the tensor-core kernel serves (dec_tensor_cores), takes 128-token tiles: a
 * warp computes two 16-token M blocks a tile with one softmax update, and a
 * thread resolves one token's address a tile (decode_mma.cuh, FixGeo's LT).
 * Its K rows (8 or 4 KiB a tile) are unpadded (the kernel's K reads are 128
 * contiguous bytes a quarter warp at head 64, a half warp at 32). Decided on
 * the general geometry, as dec_tensor_cores. */
static int dec_long_tile(const pa_dec_kparams *kp) {
    return dec_tensor_cores(kp) && pa_dtype_is_fp8((pa_dtype)kp->cache_dtype) &&
           (kp->head_size == 64 || kp->head_size == 32) && !kp->vllm_v;
}

pa_status pa_dec_kparams_make(const pa_decode_params *p, int mode, void *ws, size_t ws_bytes, pa_dec_kparams *kp,
                              size_t *ws_needed) {
    PA_REQUIRE(kp != NULL, "decode: kernel params is NULL");
    PA_REQUIRE(mode == PA_DEC_MODE_V1 || mode == PA_DEC_MODE_V2 || mode == PA_DEC_MODE_AUTO, "decode: bad mode %d",
               mode);
    PA_TRY(pa_decode_validate(p));
    pa_lse_strides ls; /* the lse's layout (decode.h; its strides checked just above) */
    PA_TRY(pa_lse_layout("decode", p->num_heads, p->num_seqs, p->lse_head_stride, p->lse_token_stride, &ls));
    const pa_kv_cache *kv = &p->kv;
    const size_t qsz = pa_dtype_size(p->q_dtype), esz = pa_dtype_size(kv->dtype);
    PA_TRY(pa_check_aligned("decode", "query", p->query, qsz));
    PA_TRY(pa_check_aligned("decode", "out", p->out, qsz));
    PA_TRY(pa_check_aligned("decode", "kv.key", kv->key, esz));
    PA_TRY(pa_check_aligned("decode", "kv.value", kv->value, esz));
    PA_TRY(pa_check_aligned("decode", "block_tables", p->block_tables, 4));
    PA_TRY(pa_check_aligned("decode", "seq_lens", p->seq_lens, 4));
    PA_TRY(pa_check_aligned("decode", "alibi_slopes", p->alibi_slopes, 4));
    PA_TRY(pa_check_aligned("decode", "sinks", p->sinks, 4));
    PA_TRY(pa_check_kv_scale_pointers("decode", kv, "kv.k_scale", "kv.v_scale"));

    int32_t ms;
    int64_t tmp_bytes, es_bytes;
    size_t need;
    PA_TRY(workspace_layout(p, mode, &ms, &tmp_bytes, &es_bytes, &need));
    if (ws_needed)
        *ws_needed = need;
    if (need > 0) {
        /* The size first, as the mixed and ragged entries: a short workspace is
         * PA_ERR_WORKSPACE_TOO_SMALL whatever its pointer (decode.h). */
        if (ws_bytes < need)
            return pa_fail(PA_ERR_WORKSPACE_TOO_SMALL, "decode: workspace of %zu bytes; %zu needed", ws_bytes, need);
        PA_REQUIRE(ws != NULL, "decode: workspace is NULL but %zu bytes are needed", need);
        PA_REQUIRE((uintptr_t)ws % 16 == 0, "decode: workspace must be 16-byte aligned");
        PA_REQUIRE(p->lse == NULL || !pa_ranges_overlap(p->lse, ls.bytes, ws, (int64_t)need),
                   "decode: lse overlaps the workspace");
        PA_TRY(decode_apart(p, ls.bytes, ws, (int64_t)need));
    }

    memset(kp, 0, sizeof *kp);
    kp->out = p->out;
    kp->query = p->query;
    kp->q_stride = p->q_stride ? p->q_stride : (int64_t)p->num_heads * kv->head_size;
    kp->k_cache = kv->key;
    kp->v_cache = kv->value;
    kp->g = pa_kv_geom_make(kv->layout, (int32_t)esz, kv->block_size, kv->num_kv_heads, kv->head_size, kv->block_stride,
                            kv->page_stride, kv->head_stride);
    kp->block_tables = p->block_tables;
    kp->bt_stride = p->block_table_stride;
    kp->seq_lens = p->seq_lens;
    kp->alibi = p->alibi_slopes;
    kp->sinks = p->sinks;
    kp->lse = p->lse;
    kp->lse_hs = ls.head;
    kp->lse_ts = ls.token;
    kp->k_scale = pa_kv_scale_ptr(kv, kv->k_scale);
    kp->v_scale = pa_kv_scale_ptr(kv, kv->v_scale);
    kp->scale_hs = kv->scales_per_head ? 1 : 0;
    kp->q_dtype = (int32_t)p->q_dtype;
    kp->cache_dtype = (int32_t)kv->dtype;
    kp->esz = (int32_t)esz;
    kp->num_seqs = p->num_seqs;
    kp->num_heads = p->num_heads;
    kp->num_kv_heads = kv->num_kv_heads;
    kp->head_size = kv->head_size;
    kp->block_size = kv->block_size;
    kp->num_blocks = kv->num_blocks;
    kp->max_seq_len = p->max_seq_len;
    kp->scale = p->scale;
    kp->soft_cap = p->soft_cap;
    kp->window = p->sliding_window;
    kp->sparse = p->bs_vert_stride > 1;
    kp->q_words = qsz == 2 && (uintptr_t)p->query % 4 == 0 && kp->q_stride % 2 == 0;
    kp->tp_rank = p->tp_rank;
    kp->bs_local = p->bs_local_blocks;
    kp->bs_vert = p->bs_vert_stride;
    kp->bs_block = p->bs_block_size;
    kp->bs_step = p->bs_head_sliding_step;

    kp->mode = mode;
    /* v1: one split as long as any valid sequence (a multiple of every tile);
     * auto: the smallest split, and a grid of as many splits as it gives; the
     * workspace keeps the layout of the default smallest split (rows of
     * max_splits per (seq, head)), the splits filling the first rows of each. */
    kp->part = mode == PA_DEC_MODE_V2
                   ? PA_DEC_V2_PART
                   : (int32_t)(((int64_t)p->max_seq_len + PA_DEC_MAX_TILE - 1) / PA_DEC_MAX_TILE * PA_DEC_MAX_TILE);
    kp->max_splits = kp->grid_splits = ms;
    if (mode == PA_DEC_MODE_AUTO) {
        kp->part = pa_dec_auto_min_part();
        kp->grid_splits = p->num_seqs == 0 ? 1 : max_splits_for(mode, p->max_seq_len, kp->part);
    }
    if (ms > 1) {
        /* [tmp_out | exp_sums | max_logits], each part 256-byte aligned */
        void *es = (unsigned char *)ws + tmp_bytes, *ml = (unsigned char *)ws + tmp_bytes + es_bytes;
        kp->tmp_out = ws;
        kp->exp_sums = es;
        kp->max_logits = ml;
    }
    kp->group = p->num_heads / kv->num_kv_heads;
    dec_geometry(kp, 0, 0);
    if (dec_tensor_cores(kp))
        dec_geometry(kp, dec_long_tile(kp), 1);
    if (kp->smem_bytes > PA_DEC_SMEM_ATTR)
        return pa_fail(PA_ERR_UNSUPPORTED,
                       "decode: this shape's kernel needs %d bytes of shared memory a CTA; at most %d", kp->smem_bytes,
                       PA_DEC_SMEM_ATTR);
    const int64_t ctas = (int64_t)p->num_seqs * kv->num_kv_heads * kp->head_chunks;
    PA_REQUIRE(ctas <= INT32_MAX && (int64_t)p->num_seqs * p->num_heads <= INT32_MAX,
               "decode: num_seqs %d x num_heads %d is too large for one launch", p->num_seqs, p->num_heads);
    return PA_SUCCESS;
}
