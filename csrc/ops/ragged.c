/* ragged: validation, workspace size and page-size guidance, shared by the CPU
 * reference and the GPU entry (host-only library). */
#include <math.h>
#include <stdint.h>

#include "internal.h"
#include "ragged_internal.h"

float pa_rg_mask_value(const pa_ragged_params *p) {
    return p->mask_value == 0.0f ? PA_RAGGED_DEFAULT_MASK_VALUE : p->mask_value;
}

int pa_rg_hard_mask(const pa_ragged_params *p) { return pa_rg_mask_value(p) <= PA_RAGGED_HARD_MASK; }

static int aligned16(const void *ptr) { return ((uintptr_t)ptr & 15u) == 0; }

pa_status pa_ragged_validate(const pa_ragged_params *p) {
    pa_lse_strides ls;
    return pa_rg_validate(p, &ls);
}

pa_status pa_rg_apart(const pa_ragged_params *p, int64_t lse_bytes, const void *ws, int64_t ws_bytes) {
    const int64_t S = p->max_num_seqs, heads4 = (int64_t)p->num_q_heads * 4;
    const int64_t rows = pa_rows_bytes(p->max_num_batched_tokens, 0, (int64_t)p->num_q_heads * p->kv.head_size,
                                       pa_dtype_size(p->q_dtype));
    pa_span in[9];
    int ni = pa_kv_cache_spans(&p->kv, "kv", in);
    in[ni++] = (pa_span){"q", p->q, rows, NULL};
    in[ni++] = (pa_span){"kv_lens", p->kv_lens, S * 4, NULL};
    in[ni++] = (pa_span){"page_indices", p->page_indices, pa_rows_bytes(S, 0, p->pages_per_seq, 4), NULL};
    in[ni++] = (pa_span){"cu_q_lens", p->cu_q_lens, (S + 1) * 4, NULL};
    in[ni++] = (pa_span){"num_seqs", p->num_seqs, 4, NULL};
    in[ni++] = (pa_span){"sinks", p->sinks, heads4, NULL};
    const pa_span out[3] = {
        {"out", p->out, rows, NULL}, {"lse", p->lse, lse_bytes, NULL}, {"workspace", ws, ws_bytes, NULL}};
    return pa_check_spans_apart("ragged", in, ni, out, 3);
}

pa_status pa_rg_validate(const pa_ragged_params *p, pa_lse_strides *ls) {
    PA_REQUIRE(p != NULL, "ragged: params is NULL");
    PA_REQUIRE(pa_is_float_dtype(p->q_dtype), "ragged: q_dtype must be f32, f16 or bf16 (got %s)",
               pa_dtype_name(p->q_dtype));
    PA_TRY(pa_kv_cache_validate(&p->kv));
    const pa_kv_cache *kv = &p->kv;
    /* a valid cache this op does not serve: unsupported, as decode and
     * context attention refuse the combined one */
    if (kv->layout != PA_LAYOUT_COMBINED)
        return pa_fail(
            PA_ERR_UNSUPPORTED,
            "ragged: kv.layout must be PA_LAYOUT_COMBINED ([num_pages, page_size, 2*kv_heads, head]), got %s",
            pa_kv_layout_name(kv->layout));
    if (kv->dtype != p->q_dtype && !pa_dtype_is_fp8(kv->dtype))
        return pa_fail(PA_ERR_UNSUPPORTED,
                       "ragged: cache dtype %s with q_dtype %s; the cache must match the query or be fp8 e4m3/e5m2",
                       pa_dtype_name(kv->dtype), pa_dtype_name(p->q_dtype));
    if (!pa_head_size_ok(kv->head_size))
        return pa_fail(PA_ERR_UNSUPPORTED, "ragged: head_size %d unsupported; supported: " PA_HEAD_SIZES_TEXT,
                       kv->head_size);
    PA_REQUIRE(p->num_q_heads > 0, "ragged: num_q_heads must be > 0 (got %d)", p->num_q_heads);
    PA_REQUIRE(p->num_q_heads % kv->num_kv_heads == 0,
               "ragged: num_q_heads %d is not a multiple of kv.num_kv_heads %d (q_heads %% kv_heads != 0)",
               p->num_q_heads, kv->num_kv_heads);
    PA_REQUIRE(p->max_num_seqs >= 0, "ragged: max_num_seqs must be >= 0 (got %d)", p->max_num_seqs);
    PA_REQUIRE(p->max_num_batched_tokens >= 0, "ragged: max_num_batched_tokens must be >= 0 (got %d)",
               p->max_num_batched_tokens);
    PA_REQUIRE(p->pages_per_seq >= 1, "ragged: pages_per_seq must be >= 1 (got %d)", p->pages_per_seq);
    /* a sequence's query rows (tokens x the GQA group) are int32 in the planner and the kernels */
    if ((int64_t)p->max_num_batched_tokens * (p->num_q_heads / kv->num_kv_heads) > INT32_MAX / 2)
        return pa_fail(PA_ERR_UNSUPPORTED,
                       "ragged: max_num_batched_tokens %d x the GQA group %d query rows exceed the 32-bit row index",
                       p->max_num_batched_tokens, p->num_q_heads / kv->num_kv_heads);
    PA_REQUIRE((int64_t)p->pages_per_seq * kv->block_size <= INT32_MAX - PA_RG_KEY_TILE,
               "ragged: pages_per_seq %d * page_size %d exceeds the int32 token range", p->pages_per_seq,
               kv->block_size);
    PA_REQUIRE(isfinite(p->sm_scale), "ragged: sm_scale must be finite");
    PA_REQUIRE(p->sliding_window >= 0, "ragged: sliding_window must be >= 0 (0 = none), got %d", p->sliding_window);
    PA_REQUIRE(pa_soft_cap_ok(p->soft_cap), "ragged: soft_cap must be 0 (none) or in [FLT_MIN, 2^126], got %g",
               (double)p->soft_cap);
    PA_REQUIRE(isfinite(p->mask_value), "ragged: mask_value must be finite (0 = default -0.7 * FLT_MAX)");
    PA_REQUIRE(p->kv_split_tokens >= 0 && p->kv_split_tokens % PA_RG_KEY_TILE == 0,
               "ragged: kv_split_tokens must be 0 (automatic) or a positive multiple of %d, got %d", PA_RG_KEY_TILE,
               p->kv_split_tokens);
    /* checked with or without lse, and for an empty batch too */
    PA_TRY(pa_lse_layout("ragged", p->num_q_heads, p->max_num_batched_tokens, p->lse_head_stride, p->lse_token_stride,
                         ls));
    if (pa_rg_empty(p)) /* nothing is read or written: no pointer but the cache's is looked at (ragged.h) */
        return PA_SUCCESS;
    PA_TRY(pa_check_not_null("ragged", "out", p->out));
    PA_TRY(pa_check_not_null("ragged", "q", p->q));
    PA_TRY(pa_check_not_null("ragged", "kv_lens", p->kv_lens));
    PA_TRY(pa_check_not_null("ragged", "page_indices", p->page_indices));
    PA_TRY(pa_check_not_null("ragged", "cu_q_lens", p->cu_q_lens));
    PA_TRY(pa_check_not_null("ragged", "num_seqs", p->num_seqs));
    PA_REQUIRE(aligned16(p->out) && aligned16(p->q) && aligned16(kv->key),
               "ragged: out, q and kv.key must be 16-byte aligned");
    PA_TRY(pa_check_aligned("ragged", "kv_lens", p->kv_lens, sizeof(int32_t)));
    PA_TRY(pa_check_aligned("ragged", "page_indices", p->page_indices, sizeof(int32_t)));
    PA_TRY(pa_check_aligned("ragged", "cu_q_lens", p->cu_q_lens, sizeof(int32_t)));
    PA_TRY(pa_check_aligned("ragged", "num_seqs", p->num_seqs, sizeof(int32_t)));
    PA_TRY(pa_check_kv_scale_pointers("ragged", kv, "kv.k_scale", "kv.v_scale"));
    PA_TRY(pa_check_aligned("ragged", "sinks", p->sinks, sizeof(float)));
    if (p->lse != NULL) {
        PA_TRY(pa_check_aligned("ragged", "lse", p->lse, sizeof(float)));
        /* out's and q's bytes (tokens x heads fits: both are int32), INT64_MAX past int64 */
        int64_t rows_bytes;
        if (!pa_mul_i64((int64_t)p->max_num_batched_tokens * p->num_q_heads,
                        (int64_t)kv->head_size * (int64_t)pa_dtype_size(p->q_dtype), &rows_bytes))
            rows_bytes = INT64_MAX;
        int64_t key_elems = 0;
        PA_TRY(pa_kv_cache_elements(kv, &key_elems, NULL));
        PA_REQUIRE(!pa_ranges_overlap(p->lse, ls->bytes, p->out, rows_bytes), "ragged: lse overlaps out");
        PA_REQUIRE(!pa_ranges_overlap(p->lse, ls->bytes, p->q, rows_bytes), "ragged: lse overlaps q");
        PA_REQUIRE(!pa_ranges_overlap(p->lse, ls->bytes, kv->key, key_elems * (int64_t)pa_dtype_size(kv->dtype)),
                   "ragged: lse overlaps the cache (kv.key)");
    }
    pa_rg_ws_layout w;
    pa_rg_ws_layout_make(p, &w);
    if (w.max_items > INT32_MAX / 2 || w.max_part_rows > INT32_MAX / 2)
        return pa_fail(PA_ERR_UNSUPPORTED,
                       "ragged: the worst batch of these sizes needs %lld work items and %lld partial rows, past the "
                       "32-bit work list (lower max_num_seqs, max_num_batched_tokens or raise kv_split_tokens)",
                       (long long)w.max_items, (long long)w.max_part_rows);
    return pa_rg_apart(p, ls->bytes, NULL, 0); /* last: every field's own refusal first */
}

static int64_t cdiv64(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t align256(int64_t x) { return (x + 255) & ~(int64_t)255; }
/* a * b and a + b of non-negative counts, INT64_MAX past it (then refused) */
static int64_t smul(int64_t a, int64_t b) {
    int64_t r;
    return pa_mul_i64(a, b, &r) ? r : INT64_MAX;
}
static int64_t sadd(int64_t a, int64_t b) {
    int64_t r;
    return pa_add_i64(a, b, &r) ? r : INT64_MAX;
}

/* Worst case of the planner (pa_rg_plan_seq / pa_rg_tile) over every batch with
 * at most S live sequences (each with q_len >= 1, so at most min(S, T)), T query
 * rows in all, kv_len <= L. Per KV head, with group g:
 *   items   decode sequence: <= splits; prefill sequence: <= tiles * splits,
 *           and tiles <= q_len * g / R + 1 (R: the launch's tile rows)
 *   partial rows (only tiles with more than one chunk store them)
 *           decode: rows <= 16 each, sum rows <= T*g  -> min(T*g, 16 S) * nsD
 *           prefill automatic: rows*splits <= min(rows * nsP, R * MAX_SPLITS)
 *                               -> min(T*g * nsP, R S * MAX_SPLITS)
 *           prefill with kv_split_tokens: <= T*g * nsP
 * Items and merges are cheap (32 bytes); partial rows are what matter. */
void pa_rg_ws_layout_make(const pa_ragged_params *p, pa_rg_ws_layout *w) {
    if (pa_rg_empty(p)) { /* no work list, no workspace */
        *w = (pa_rg_ws_layout){0};
        return;
    }
    const int64_t S = min64(p->max_num_seqs, p->max_num_batched_tokens);
    const int64_t T = p->max_num_batched_tokens;
    const int64_t L = (int64_t)p->pages_per_seq * p->kv.block_size;
    const int64_t kvh = p->kv.num_kv_heads;
    const int64_t g = p->num_q_heads / p->kv.num_kv_heads;
    const int64_t st = p->kv_split_tokens;
    int64_t nsD, nsP;
    if (st > 0) {
        nsD = nsP = cdiv64(L, st);
    } else {
        /* chunk >= MIN_CHUNK rounded, so at most ceil(L / MIN_CHUNK) chunks */
        nsD = min64(PA_RG_DEC_MAX_SPLITS, cdiv64(L, PA_RG_DEC_MIN_CHUNK));
        nsP = min64(PA_RG_PRE_MAX_SPLITS, cdiv64(L, PA_RG_PRE_MIN_CHUNK));
    }
    nsD = max64(nsD, 1);
    nsP = max64(nsP, 1);
    const int64_t R = pa_rg_tile_rows((int32_t)p->q_dtype, p->kv.head_size);
    /* Counts saturate at INT64_MAX (T g < 2^62; the products with the split
     * counts and kvh need not fit), so a size past the work list is refused
     * below and by pa_ragged_validate, never wrapped into a small one. */
    const int64_t tiles = cdiv64(T * g, R) + S; /* prefill tiles over all sequences */
    const int64_t items = smul(kvh, sadd(smul(S, nsD), smul(tiles, nsP)));
    int64_t part = 0;
    if (nsD > 1)
        part = sadd(part, smul(min64(T * g, PA_RG_DEC_ROWS * S), nsD));
    if (nsP > 1)
        part = sadd(part, st > 0 ? smul(T * g, nsP) : min64(smul(T * g, nsP), R * S * PA_RG_PRE_MAX_SPLITS));
    part = smul(part, kvh);

    w->max_items = items;
    w->max_merges = items;
    w->max_part_rows = part;
    if (items > INT32_MAX / 2 || part > INT32_MAX / 2) { /* refused: no layout */
        w->off_items = w->off_merges = w->off_counters = w->off_ml = w->off_o = 0;
        w->total = INT64_MAX;
        return;
    }
    int64_t off = 256;
    w->off_items = off;
    off = align256(off + items * (int64_t)sizeof(pa_rg_item));
    w->off_merges = off;
    off = align256(off + items * (int64_t)sizeof(pa_rg_merge));
    w->off_counters = off;
    off = align256(off + items * 4);
    w->off_ml = off;
    off = align256(off + part * 8);
    w->off_o = off;
    off = align256(off + part * p->kv.head_size * (int64_t)pa_dtype_size(p->q_dtype));
    w->total = off;
}

pa_status pa_ragged_workspace_size(const pa_ragged_params *p, size_t *bytes) {
    PA_REQUIRE(bytes != NULL, "ragged: bytes is NULL");
    PA_TRY(pa_ragged_validate(p));
    pa_rg_ws_layout w;
    pa_rg_ws_layout_make(p, &w);
    *bytes = (size_t)w.total;
    pa_clear_error();
    return PA_SUCCESS;
}

pa_status pa_ragged_preferred_page_size(int64_t max_model_len, int32_t *page_size) {
    return pa_get_page_size(max_model_len, page_size);
}

/* The device planner (cuda/ragged/ragged.cu) on the host, item for item: two
 * passes (prefill sequences first, so the long items start early, then decode
 * sequences), sequences in order, each sequence's items tile by tile (heaviest
 * first, pa_rg_tile_at) as pa_rg_tile_item enumerates them. A sequence is live when pa_rg_seq_live holds and its rows
 * start at or after the end of every earlier sequence's rows (garbage
 * cu_q_lens that would overlap rows is skipped, which also keeps the totals
 * within the workspace bound). Used by the tests to check coverage and bounds, and by the
 * GPU test to compare with the work list the device builds. */
pa_status pa_rg_plan_host(const pa_ragged_params *p, const int32_t *kv_lens, const int32_t *cu_q_lens, int32_t num_seqs,
                          pa_rg_item *items, int64_t max_items, pa_rg_merge *merges, int64_t max_merges,
                          pa_rg_plan_totals *tot) {
    const int32_t ns = num_seqs < 0 ? 0 : (num_seqs > p->max_num_seqs ? p->max_num_seqs : num_seqs);
    const int32_t max_kv = p->pages_per_seq * p->kv.block_size;
    pa_rg_seq_args a;
    a.group = p->num_q_heads / p->kv.num_kv_heads;
    a.window = p->sliding_window;
    a.hard = pa_rg_hard_mask(p);
    a.nkv = p->kv.num_kv_heads;
    const int32_t tile_rows = pa_rg_tile_rows((int32_t)p->q_dtype, p->kv.head_size);
    int64_t ni = 0, nm = 0, np = 0;
    for (int pass = 0; pass < 2; pass++) {
        int32_t prev_end = 0; /* rows of a live sequence start after every earlier sequence's end */
        for (int32_t s = 0; s < ns; s++) {
            const int32_t q0 = cu_q_lens[s];
            const int overlaps = q0 < prev_end;
            if (cu_q_lens[s + 1] > prev_end)
                prev_end = cu_q_lens[s + 1];
            a.q_len = pa_rg_seq_live(q0, cu_q_lens[s + 1], kv_lens[s], p->max_num_batched_tokens, max_kv);
            if (a.q_len == 0 || overlaps)
                continue;
            a.kv_len = kv_lens[s];
            const pa_rg_seq_plan sp =
                pa_rg_plan_seq(a.q_len, a.kv_len, a.group, a.window, a.hard, p->kv_split_tokens, tile_rows);
            if ((sp.tile_rows == PA_RG_DEC_ROWS) != pass)
                continue;
            int32_t mb = 0, pb = 0; /* the sequence's merges and partial rows so far */
            for (int32_t u = 0; u < sp.n_tiles; u++) {
                const int32_t t = pa_rg_tile_at(&sp, u);
                const pa_rg_seq_counts tc = pa_rg_tile_counts(&sp, &a, t);
                for (int32_t k = 0; k < tc.items; k++) {
                    pa_rg_item it;
                    int32_t first = 0, nc = 0;
                    pa_rg_tile_item(&sp, &a, t, k, mb, pb, &it, &first, &nc);
                    it.seq = s;
                    if (it.part >= 0) {
                        it.part += (int32_t)np;
                        it.merge += (int32_t)nm;
                    }
                    if (first && merges) {
                        PA_REQUIRE(it.merge < max_merges, "ragged plan: merge list overflow");
                        pa_rg_merge m = {s, it.kvh, it.row0, it.nrows, it.part, nc, 0, 0};
                        merges[it.merge] = m;
                    }
                    if (items) {
                        PA_REQUIRE(ni < max_items, "ragged plan: item list overflow");
                        items[ni] = it;
                    }
                    ni++;
                }
                mb += tc.merges;
                pb += tc.part_rows;
            }
            nm += mb;
            np += pb;
        }
    }
    tot->items = ni;
    tot->merges = nm;
    tot->part_rows = np;
    return PA_SUCCESS;
}
