/* Private to the ragged op: the work-decomposition policy (shared by the host
 * workspace bound and the device planner so they cannot disagree), the work
 * item and merge task records, the workspace layout, and the launcher
 * parameter block. Plain C, usable from the .cu files. */
#ifndef PA_RAGGED_INTERNAL_H
#define PA_RAGGED_INTERNAL_H

#include <stdint.h>

#include "kv_index.h"
#include "pagedattn/ragged.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- policy constants -----------------------------------------------------------
 * A sequence with q_len * group <= PA_RG_DEC_ROWS rows per KV head is a decode
 * sequence: one item of PA_RG_DEC_ROWS rows per KV head (warps split the keys).
 * Longer ones are cut into query tiles of pa_rg_tile_rows() rows (warps split
 * rows): PA_RG_TILE_ROWS_WIDE (32 rows per warp, FlashAttention-2's tile) on the
 * tensor-core kernel up to head 128, PA_RG_TILE_ROWS (16 per warp) at larger
 * heads (a warp's 32 rows would need 256 accumulators at head 256) and on the
 * f32 kernel.
 * Rows are packed token-major: row r of a sequence and KV head is token r /
 * group, query head kv_head * group + r % group.
 * KV splits (automatic): decode sequences split their keys into
 * min(PA_RG_DEC_MAX_SPLITS, ceil(span / PA_RG_DEC_MIN_CHUNK)) chunks; prefill
 * sequences of at most PA_RG_PRE_MAX_SPLITS tiles per KV head into
 * min(PA_RG_PRE_MAX_SPLITS / tiles, ceil(span / PA_RG_PRE_MIN_CHUNK)) chunks
 * (longer prefills have enough tiles to fill the GPU). Chunks are whole key
 * tiles of equal length; one fewer is taken while the last would hold less
 * than a key tile. Everything depends on
 * the sequence's own q_len, kv_len and the options only: batch invariance. */
#define PA_RG_DEC_ROWS 16
#define PA_RG_TILE_ROWS 64
#define PA_RG_TILE_ROWS_WIDE 128
#define PA_RG_KEY_TILE 64
#define PA_RG_DEC_MIN_CHUNK 512
#define PA_RG_DEC_MAX_SPLITS 16
#define PA_RG_PRE_MIN_CHUNK 2048
#define PA_RG_PRE_MAX_SPLITS 4

/* One unit of work: rows [row0, row0 + nrows) of (seq, kv head) against keys
 * [k_lo, k_hi). part >= 0: write normalised partial rows at partial row
 * part .. part + nrows - 1 and count merge task `merge`; part < 0: write the
 * output directly. */
typedef struct pa_rg_item {
    int32_t seq, kvh, row0, nrows;
    int32_t k_lo, k_hi, part, merge;
} pa_rg_item;

/* The splits of one tile: split j's partial rows start at part0 + j * nrows. */
typedef struct pa_rg_merge {
    int32_t seq, kvh, row0, nrows;
    int32_t part0, n_split, pad0, pad1;
} pa_rg_merge;

#if defined(__CUDACC__)
#define PA_RG_HD __host__ __device__ __forceinline__
#else
#define PA_RG_HD static inline
#endif

/* ceil(a / b) for b > 0, without forming a + b - 1 (kv_split_tokens may be as
 * large as INT32_MAX - 63, where it overflowed). */
PA_RG_HD int32_t pa_rg_cdiv(int32_t a, int32_t b) { return a > 0 ? (a - 1) / b + 1 : 0; }
PA_RG_HD int32_t pa_rg_min(int32_t a, int32_t b) { return a < b ? a : b; }
PA_RG_HD int32_t pa_rg_max(int32_t a, int32_t b) { return a > b ? a : b; }

/* Rows of a prefill tile for a launch with this query dtype (pa_dtype) and head size. */
PA_RG_HD int32_t pa_rg_tile_rows(int32_t q_dtype, int32_t head_size) {
    return q_dtype != PA_DTYPE_F32 && head_size <= 128 ? PA_RG_TILE_ROWS_WIDE : PA_RG_TILE_ROWS;
}

/* Plan of one sequence (per KV head; every KV head gets the same plan). */
typedef struct pa_rg_seq_plan {
    int32_t rows;      /* q_len * group */
    int32_t tile_rows; /* PA_RG_DEC_ROWS or the launch's prefill tile rows */
    int32_t n_tiles;
    int32_t n_split; /* chunks of the sequence's key span (1 = no split) */
    int32_t chunk;   /* keys per chunk, a multiple of PA_RG_KEY_TILE */
    int32_t span_lo; /* chunk j covers [span_lo + j * chunk, span_lo + (j+1) * chunk) */
} pa_rg_seq_plan;

/* Keys a row range [r0, r1) (packed rows) reads: [lo, hi). Hard masks read
 * only the causal / window range; soft masks read every key of the sequence. */
PA_RG_HD void pa_rg_key_range(int32_t q_len, int32_t kv_len, int32_t group, int32_t window, int32_t hard, int32_t r0,
                              int32_t r1, int32_t *lo, int32_t *hi) {
    if (!hard) {
        *lo = 0;
        *hi = kv_len;
        return;
    }
    const int32_t first_pos = kv_len - q_len + r0 / group;
    const int32_t last_pos = kv_len - q_len + (r1 - 1) / group;
    *lo = window > 0 ? pa_rg_max(0, first_pos - window + 1) : 0;
    *hi = last_pos + 1;
}

/* split_tokens: the kv_split_tokens option (0 = automatic); tile_rows:
 * pa_rg_tile_rows() of the launch. q_len >= 1 and q_len <= kv_len (the caller
 * has checked). */
PA_RG_HD pa_rg_seq_plan pa_rg_plan_seq(int32_t q_len, int32_t kv_len, int32_t group, int32_t window, int32_t hard,
                                       int32_t split_tokens, int32_t tile_rows) {
    pa_rg_seq_plan sp;
    sp.rows = q_len * group;
    sp.tile_rows = sp.rows <= PA_RG_DEC_ROWS ? PA_RG_DEC_ROWS : tile_rows;
    sp.n_tiles = pa_rg_cdiv(sp.rows, sp.tile_rows);
    int32_t hi = 0;
    pa_rg_key_range(q_len, kv_len, group, window, hard, 0, sp.rows, &sp.span_lo, &hi);
    const int32_t span = hi - sp.span_lo;
    if (split_tokens > 0) {
        sp.chunk = split_tokens;
        sp.n_split = pa_rg_cdiv(span, split_tokens);
    } else {
        int32_t n = 1;
        if (sp.tile_rows == PA_RG_DEC_ROWS)
            n = pa_rg_min(PA_RG_DEC_MAX_SPLITS, pa_rg_cdiv(span, PA_RG_DEC_MIN_CHUNK));
        else if (sp.n_tiles <= PA_RG_PRE_MAX_SPLITS)
            n = pa_rg_min(PA_RG_PRE_MAX_SPLITS / sp.n_tiles, pa_rg_cdiv(span, PA_RG_PRE_MIN_CHUNK));
        n = pa_rg_max(n, 1);
        sp.chunk = pa_rg_cdiv(pa_rg_cdiv(span, n), PA_RG_KEY_TILE) * PA_RG_KEY_TILE;
        sp.n_split = pa_rg_cdiv(span, sp.chunk);
        /* Chunks are whole key tiles, so rounding them up can leave a last chunk
         * of a few keys (4097 keys: 8 x 512 + 1), a work item and a merge for
         * almost nothing. Fewer, longer chunks until the last holds at least a
         * key tile (at most a few rounds: each drops a chunk). */
        while (sp.n_split > 1 && span - (sp.n_split - 1) * sp.chunk < PA_RG_KEY_TILE) {
            sp.chunk = pa_rg_cdiv(pa_rg_cdiv(span, sp.n_split - 1), PA_RG_KEY_TILE) * PA_RG_KEY_TILE;
            sp.n_split = pa_rg_cdiv(span, sp.chunk);
        }
    }
    if (sp.n_split < 1)
        sp.n_split = 1;
    return sp;
}

/* Tile t of a planned sequence: rows, key range, and the chunks it touches
 * [*j0, *j1) (j1 - j0 == 1 means no merge for this tile when n_split == 1). */
PA_RG_HD void pa_rg_tile(const pa_rg_seq_plan *sp, int32_t q_len, int32_t kv_len, int32_t group, int32_t window,
                         int32_t hard, int32_t t, int32_t *row0, int32_t *nrows, int32_t *lo, int32_t *hi, int32_t *j0,
                         int32_t *j1) {
    *row0 = t * sp->tile_rows;
    *nrows = pa_rg_min(sp->tile_rows, sp->rows - *row0);
    pa_rg_key_range(q_len, kv_len, group, window, hard, *row0, *row0 + *nrows, lo, hi);
    if (sp->n_split <= 1) {
        *j0 = 0;
        *j1 = 1;
        return;
    }
    *j0 = (*lo - sp->span_lo) / sp->chunk;
    *j1 = (*hi - 1 - sp->span_lo) / sp->chunk + 1;
}

/* A sequence's live check, as the device planner makes it (the reference
 * rejects what this skips). Returns q_len, or 0 for "nothing to do". */
PA_RG_HD int32_t pa_rg_seq_live(int32_t q0, int32_t q1, int32_t kv_len, int32_t max_tokens, int32_t max_kv) {
    if (q0 < 0 || q1 <= q0 || q1 > max_tokens) // (before the difference: garbage could overflow it)
        return 0;
    const int32_t q_len = q1 - q0;
    if (kv_len < q_len || kv_len > max_kv)
        return 0;
    return q_len;
}

/* Work of one live sequence over all nkv KV heads. Items are enumerated tile by
 * tile, then KV head, then chunk; tiles with one chunk write the output
 * directly, the others get one merge task per KV head and store nrows partial
 * rows per chunk. */
typedef struct pa_rg_seq_counts {
    int32_t items, merges, part_rows;
} pa_rg_seq_counts;

typedef struct pa_rg_seq_args {
    int32_t q_len, kv_len, group, window, hard, nkv;
} pa_rg_seq_args;

/* Work of tile t: nkv items per chunk it touches; a tile touching more than
 * one chunk adds one merge per KV head and nrows partial rows per item. */
PA_RG_HD pa_rg_seq_counts pa_rg_tile_counts(const pa_rg_seq_plan *sp, const pa_rg_seq_args *a, int32_t t) {
    pa_rg_seq_counts c;
    c.items = a->nkv;
    c.merges = c.part_rows = 0;
    if (sp->n_split <= 1)
        return c;
    int32_t row0, nrows, lo, hi, j0, j1;
    pa_rg_tile(sp, a->q_len, a->kv_len, a->group, a->window, a->hard, t, &row0, &nrows, &lo, &hi, &j0, &j1);
    const int32_t nc = j1 - j0;
    c.items = a->nkv * nc;
    if (nc > 1) {
        c.merges = a->nkv;
        c.part_rows = a->nkv * nc * nrows;
    }
    return c;
}

PA_RG_HD pa_rg_seq_counts pa_rg_count_seq(const pa_rg_seq_plan *sp, const pa_rg_seq_args *a) {
    pa_rg_seq_counts c;
    c.items = c.merges = c.part_rows = 0;
    if (sp->n_split <= 1) {
        c.items = sp->n_tiles * a->nkv;
        return c;
    }
    for (int32_t t = 0; t < sp->n_tiles; t++) {
        const pa_rg_seq_counts tc = pa_rg_tile_counts(sp, a, t);
        c.items += tc.items;
        c.merges += tc.merges;
        c.part_rows += tc.part_rows;
    }
    return c;
}

/* The u-th tile a sequence's items are enumerated in: its tiles last to first.
 * Causal rows further down see more keys, so the heaviest tiles go into the
 * work list first and the light ones fill the tail (FlashAttention-2 orders
 * causal blocks the same way). Both planners use it; the arithmetic of every
 * tile and merge is independent of the order. */
PA_RG_HD int32_t pa_rg_tile_at(const pa_rg_seq_plan *sp, int32_t u) { return sp->n_tiles - 1 - u; }

/* Item k (0 <= k < pa_rg_tile_counts(t).items) of tile t: KV head k / chunks,
 * chunk j0 + k % chunks. merge_base and part_base are the merges and partial
 * rows of the tiles enumerated before t (pa_rg_tile_counts summed), so a
 * sequence is enumerated in time linear in its tiles and items. part / merge
 * come out relative to the sequence (-1 = direct write); the caller adds the
 * sequence's offsets. *merge_first is 1 for the first chunk of a merged tile
 * (whoever emits it writes the merge task); *n_chunks is the tile's chunks. */
PA_RG_HD void pa_rg_tile_item(const pa_rg_seq_plan *sp, const pa_rg_seq_args *a, int32_t t, int32_t k,
                              int32_t merge_base, int32_t part_base, pa_rg_item *it, int32_t *merge_first,
                              int32_t *n_chunks) {
    int32_t row0, nrows, lo, hi, j0, j1;
    pa_rg_tile(sp, a->q_len, a->kv_len, a->group, a->window, a->hard, t, &row0, &nrows, &lo, &hi, &j0, &j1);
    const int32_t nc = j1 - j0;
    const int32_t kvh = k / nc, c = j0 + k % nc;
    it->kvh = kvh;
    it->row0 = row0;
    it->nrows = nrows;
    *n_chunks = nc;
    if (nc > 1) {
        const int32_t c_lo = sp->span_lo + c * sp->chunk;
        it->k_lo = pa_rg_max(lo, c_lo);
        it->k_hi = hi - c_lo <= sp->chunk ? hi : c_lo + sp->chunk; /* (c_lo + chunk may pass INT32_MAX) */
        it->merge = merge_base + kvh;
        it->part = part_base + (kvh * nc + (c - j0)) * nrows;
        *merge_first = c == j0;
    } else {
        it->k_lo = lo;
        it->k_hi = hi;
        it->merge = -1;
        it->part = -1;
        *merge_first = 0;
    }
}

/* ---- workspace ------------------------------------------------------------------
 * [header 256 B: int32 num_items, fetch counter, num_merges, partial rows]
 * [items: max_items * 32 B] [merges: max_merges * 32 B] [merge counters: max_merges
 * * 4 B] [partial (m, l): max_part_rows * 8 B] [partial o: max_part_rows *
 * head_size * sizeof(q dtype)], each section 256-byte aligned. */
typedef struct pa_rg_ws_layout {
    int64_t max_items, max_merges, max_part_rows;
    int64_t off_items, off_merges, off_counters, off_ml, off_o;
    int64_t total;
} pa_rg_ws_layout;

/* An empty batch (max_num_seqs or max_num_batched_tokens 0): validated as far
 * as its sizes go, then a no-op that reads and writes nothing (ragged.h). */
static inline int pa_rg_empty(const pa_ragged_params *p) {
    return p->max_num_seqs == 0 || p->max_num_batched_tokens == 0;
}
/* Worst case over every batch the host-visible sizes allow (csrc/ops/ragged.c);
 * all zero for an empty batch. */
void pa_rg_ws_layout_make(const pa_ragged_params *p, pa_rg_ws_layout *w);
/* pa_ragged_validate, giving the lse's layout too (pa_lse_layout's strides,
 * csrc/core/internal.h), for the entry and the reference. */
struct pa_lse_strides;
pa_status pa_rg_validate(const pa_ragged_params *p, struct pa_lse_strides *ls);
/* The buffers the ragged launches write (out, lse of lse_bytes, the workspace:
 * ws NULL when not looked at) share no byte with one they read or with each
 * other (ragged.h): tiles write out and lse while other CTAs read q, the
 * cache and the metadata, and the planner's work list in the workspace is
 * read while out is written. Validated fields. */
pa_status pa_rg_apart(const pa_ragged_params *p, int64_t lse_bytes, const void *ws, int64_t ws_bytes);
/* Effective mask value (0 -> default) and whether it masks hard. */
float pa_rg_mask_value(const pa_ragged_params *p);
int pa_rg_hard_mask(const pa_ragged_params *p);

/* Host mirror of the device planner (csrc/ops/ragged.c); arrays may be NULL to
 * count only. */
typedef struct pa_rg_plan_totals {
    int64_t items, merges, part_rows;
} pa_rg_plan_totals;
pa_status pa_rg_plan_host(const pa_ragged_params *p, const int32_t *kv_lens, const int32_t *cu_q_lens, int32_t num_seqs,
                          pa_rg_item *items, int64_t max_items, pa_rg_merge *merges, int64_t max_merges,
                          pa_rg_plan_totals *tot);

/* ---- launcher ------------------------------------------------------------------- */
typedef struct pa_rg_launch {
    void *out;
    const void *q;
    const void *kv; /* the combined buffer */
    const int32_t *kv_lens, *page_indices, *cu_q_lens, *num_seqs;
    const float *k_scale, *v_scale;
    int32_t scale_hs;   /* KV head h's scales at [h * scale_hs]: 1 per head, 0 one for all */
    const float *sinks; /* [num_q_heads] or NULL: natural-log sink logits (ragged.h) */
    void *ws;
    pa_rg_ws_layout wl;
    int32_t q_dtype, kv_dtype;
    int32_t max_num_seqs, max_tokens, pages_per_seq;
    int32_t num_q_heads, num_kv_heads, head_size, page_size, num_pages;
    int32_t page_shift;      /* log2(page_size) when a power of two, else -1 */
    pa_kv_divider group_div; /* divides a packed row by the GQA group (num_q_heads / num_kv_heads) */
    int32_t window, hard_mask, split_tokens;
    int32_t tile_rows; /* pa_rg_tile_rows(q_dtype, head_size) */
    float sm_scale, soft_cap, mask_value;
    float *lse;             /* or NULL: (head h, batch row t) at h * lse_hs + t * lse_ts (ragged.h) */
    int64_t lse_hs, lse_ts; /* pa_lse_layout's strides */
} pa_rg_launch;

/* cuda/ragged/ragged.cu: planner + attention; returns a cudaError_t as int. */
int pa_launch_ragged(const pa_rg_launch *p, pa_stream stream);

#ifdef __cplusplus
}
#endif
#endif
