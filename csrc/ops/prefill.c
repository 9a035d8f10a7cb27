/* prefill: validation, the kernel selector and the parameter blocks, shared by
 * the CPU references and the GPU entries (host-only library). */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "prefill_internal.h"

_Static_assert(PA_PREFILL_MAX_HEAD == PA_MAX_HEAD_SIZE, "the prefill kernels' largest head is the library's");

pa_status pa_prefill_select(const char *op, pa_dtype q_dtype, pa_dtype cache_dtype, int32_t head_size,
                            pa_prefill_kernel *out) {
    if (!pa_is_float_dtype(q_dtype))
        return pa_fail(PA_ERR_INVALID_ARGUMENT, "%s: query dtype must be f32, f16 or bf16 (got %s)", op,
                       pa_dtype_name(q_dtype));
    PA_REQUIRE(head_size > 0, "%s: head_size must be > 0 (got %d)", op, head_size); /* bad input, not unsupported */
    if (!pa_head_size_ok(head_size))
        return pa_fail(PA_ERR_UNSUPPORTED, "%s: head_size %d unsupported; supported: " PA_HEAD_SIZES_TEXT, op,
                       head_size);
    if (cache_dtype != q_dtype && !pa_dtype_is_fp8(cache_dtype))
        return pa_fail(PA_ERR_UNSUPPORTED,
                       "%s: cache dtype %s with query dtype %s; the cache must match the query or be fp8", op,
                       pa_dtype_name(cache_dtype), pa_dtype_name(q_dtype));
    pa_prefill_kernel k;
    k.tensor_cores = q_dtype != PA_DTYPE_F32;
    k.head_class = (head_size + 31) / 32 * 32;
    if (out)
        *out = k;
    return PA_SUCCESS;
}

static _Atomic int prefill_path_set = -1; /* -1: never set (the environment decides) */

pa_status pa_set_prefill_path(pa_prefill_path path) {
    PA_REQUIRE(path == PA_PREFILL_PATH_AUTO || path == PA_PREFILL_PATH_MMA || path == PA_PREFILL_PATH_HOPPER ||
                   path == PA_PREFILL_PATH_HOPPER_FP8,
               "prefill path %d unknown; expected PA_PREFILL_PATH_AUTO, _MMA, _HOPPER or _HOPPER_FP8", (int)path);
    atomic_store(&prefill_path_set, (int)path);
    pa_clear_error();
    return PA_SUCCESS;
}

pa_prefill_path pa_get_prefill_path(void) {
    const int v = atomic_load(&prefill_path_set);
    if (v >= 0)
        return (pa_prefill_path)v;
    const char *env = getenv("PAGEDATTN_PREFILL_PATH");
    if (env && strcmp(env, "hopper") == 0)
        return PA_PREFILL_PATH_HOPPER;
    if (env && strcmp(env, "hopper-fp8") == 0)
        return PA_PREFILL_PATH_HOPPER_FP8;
    if (env && strcmp(env, "mma") == 0)
        return PA_PREFILL_PATH_MMA;
    return PA_PREFILL_PATH_AUTO;
}

static _Atomic long hopper_launches = 0;
void pa_prefill_hopper_counted(void) { atomic_fetch_add(&hopper_launches, 1); }
long pa_prefill_hopper_launches(void) { return atomic_load(&hopper_launches); }
static _Atomic long hopper_fp8_launches = 0;
void pa_prefill_hopper_fp8_counted(void) { atomic_fetch_add(&hopper_fp8_launches, 1); }
long pa_prefill_hopper_fp8_launches(void) { return atomic_load(&hopper_fp8_launches); }

int pa_prefill_hopper_fp8(const pa_prefill_kparams *k) {
    return k->mode == PA_PREFILL_MODE_CONTEXT && k->cache_dtype == PA_DTYPE_FP8_E4M3 &&
           pa_prefill_hopper_head(k) == 128;
}

int pa_prefill_hopper_head(const pa_prefill_kparams *k) {
    if (k->q_dtype != PA_DTYPE_F16 && k->q_dtype != PA_DTYPE_BF16)
        return 0;
    const int hs = k->head_size;
    const int hp = hs <= 64 ? 64 : hs <= 96 ? 96 : hs <= 128 ? 128 : hs <= 192 ? 192 : hs <= 256 ? 256 : 0;
    if (hp == 0 || !k->vec_q || !k->vec_new)
        return 0;
    /* Its epilogue stores two elements at a time (4 bytes): an output only
     * element-aligned (a view at an odd element, valid for the entries) would
     * fault there; mma.sync's stores check each row. */
    if ((uintptr_t)k->out % 4 != 0)
        return 0;
    /* The kernel numbers its work items (128 GQA-packed query rows of a
     * sequence and KV head) in int, persistent CTAs' rounds included: its
     * launcher needs items + CTAs < 2^31, which one CTA an item meets up to
     * 2^30 - 1 items. From 2^30 (over 10^11 query rows of max_q_len) mma.sync
     * serves (at exactly 2^30 the launcher refused it until 2026-12-07). */
    const int64_t items =
        ((int64_t)k->max_q_len * (k->num_heads / k->num_kv_heads) + 127) / 128 * (int64_t)k->num_seqs * k->num_kv_heads;
    if (items >= ((int64_t)1 << 30))
        return 0;
    if (k->mode == PA_PREFILL_MODE_CONTEXT) {
        /* A cache on cp.async (pa_prefill_cache_paths): of the query dtype,
         * copied as it stands, or fp8, copied raw and converted in shared
         * memory; a flash layout with 16-byte rows, or vLLM's with V^T tiles
         * (a block size of a multiple of 8, or of 16 for fp8). */
        const int vllm = k->g.layout == PA_LAYOUT_VLLM;
        /* HP 192 and 256: flash layouts (vLLM's V^T loop leaves the
         * consumers too few registers at HP 256; HP 192's 64-key tiles are
         * not V^T's two 64-key panels). */
        if (hp > 128 && vllm)
            return 0;
        if (k->cache_dtype == k->q_dtype) {
            if (k->cache_k != PA_PREFILL_K_ASYNC || k->cache_v != (vllm ? PA_PREFILL_V_ASYNC_VT : PA_PREFILL_V_ASYNC))
                return 0;
        } else if (!pa_dtype_is_fp8((pa_dtype)k->cache_dtype) || k->cache_k != PA_PREFILL_K_RAW ||
                   k->cache_v != (vllm ? PA_PREFILL_V_RAW_VT : PA_PREFILL_V_RAW)) {
            return 0;
        }
    }
    return hp;
}

static pa_status check_common(const char *op, int32_t num_seqs, int32_t num_heads, int32_t num_kv_heads,
                              int32_t head_size, int64_t q_stride, int64_t k_stride, int64_t v_stride, float scale,
                              float soft_cap, int32_t window) {
    PA_REQUIRE(num_seqs >= 0 && num_seqs <= PA_PREFILL_MAX_SEQS, "%s: num_seqs must be in 0..%d (got %d)", op,
               PA_PREFILL_MAX_SEQS, num_seqs);
    PA_REQUIRE(num_heads > 0 && num_heads <= 65535, "%s: num_heads must be in 1..65535 (got %d)", op, num_heads);
    PA_REQUIRE(num_kv_heads > 0, "%s: num_kv_heads must be > 0 (got %d)", op, num_kv_heads);
    PA_REQUIRE(num_heads % num_kv_heads == 0, "%s: num_heads %d is not a multiple of num_kv_heads %d", op, num_heads,
               num_kv_heads);
    const int64_t qrow = (int64_t)num_heads * head_size, krow = (int64_t)num_kv_heads * head_size;
    PA_REQUIRE(q_stride == 0 || q_stride >= qrow, "%s: q_stride %lld smaller than num_heads*head_size %lld", op,
               (long long)q_stride, (long long)qrow);
    PA_REQUIRE(k_stride == 0 || k_stride >= krow, "%s: k_stride %lld smaller than num_kv_heads*head_size %lld", op,
               (long long)k_stride, (long long)krow);
    PA_REQUIRE(v_stride == 0 || v_stride >= krow, "%s: v_stride %lld smaller than num_kv_heads*head_size %lld", op,
               (long long)v_stride, (long long)krow);
    PA_REQUIRE(isfinite(scale), "%s: scale must be finite", op);
    PA_REQUIRE(pa_soft_cap_ok(soft_cap), "%s: soft_cap must be 0 (off) or in [FLT_MIN, 2^126], got %g", op,
               (double)soft_cap);
    PA_REQUIRE(window >= 0, "%s: sliding_window must be >= 0 (0 = off), got %d", op, window);
    return PA_SUCCESS;
}

/* Query rows times the GQA group must fit the int32 row index of the kernels. */
static pa_status check_rows(const char *op, int32_t max_q, int32_t group) {
    PA_REQUIRE((int64_t)max_q * group <= INT32_MAX - 256,
               "%s: max query length %d times the GQA group %d overflows the row index", op, max_q, group);
    return PA_SUCCESS;
}

/* The lse output (prefill.h; its strides checked by pa_lse_layout, which gave
 * `bytes`): f32, 4-byte aligned, clear of out and of the query, key and value
 * rows (it is written while other CTAs read them). extents[i] are the bytes of
 * bufs[i]. */
static pa_status check_lse(const char *op, const float *lse, int64_t bytes, const void *const bufs[4],
                           const int64_t extents[4]) {
    if (lse == NULL)
        return PA_SUCCESS;
    static const char *const names[4] = {"out", "query", "key", "value"};
    PA_REQUIRE((uintptr_t)lse % 4 == 0, "%s: lse must be 4-byte aligned (f32)", op);
    for (int i = 0; i < 4; i++)
        PA_REQUIRE(!pa_ranges_overlap(lse, bytes, bufs[i], extents[i]), "%s: lse overlaps %s", op, names[i]);
    return PA_SUCCESS;
}

/* The kernels' lse strides (validated above). */
static void set_lse(pa_prefill_kparams *k, float *lse, int32_t num_heads, int32_t tokens, int64_t head_stride,
                    int64_t token_stride) {
    k->lse = lse;
    pa_lse_strides ls = {0, 0, 0};
    if (lse && pa_lse_layout("prefill", num_heads, tokens, head_stride, token_stride, &ls) == PA_SUCCESS) {
        k->lse_hs = ls.head;
        k->lse_ts = ls.token;
    }
}

/* pa_context_attention_validate; apart 0 leaves out the check that out and
 * lse share no byte with the inputs (the mixed entry's prefill part: the
 * mixed validation checks its buffers whole, last). */
static pa_status context_validate(const pa_context_attention_params *p, int apart) {
    const char *op = "context_attention";
    PA_REQUIRE(p != NULL, "%s: params is NULL", op);
    PA_TRY(pa_kv_cache_validate(&p->kv));
    const pa_kv_cache *kv = &p->kv;
    if (kv->layout == PA_LAYOUT_COMBINED)
        return pa_fail(PA_ERR_UNSUPPORTED, "%s: the combined layout is served by the ragged op", op);
    PA_TRY(pa_prefill_select(op, p->q_dtype, kv->dtype, kv->head_size, NULL));
    PA_TRY(check_common(op, p->num_seqs, p->num_heads, kv->num_kv_heads, kv->head_size, p->q_stride, p->k_stride,
                        p->v_stride, p->scale, p->soft_cap, p->sliding_window));
    PA_REQUIRE(p->num_tokens >= 0, "%s: num_tokens must be >= 0 (got %d)", op, p->num_tokens);
    {
        const int64_t qrow = (int64_t)p->num_heads * kv->head_size, krow = (int64_t)kv->num_kv_heads * kv->head_size;
        PA_TRY(pa_check_rows_extent(op, "query", p->num_tokens, p->q_stride, qrow));
        PA_TRY(pa_check_rows_extent(op, "key", p->num_tokens, p->k_stride, krow));
        PA_TRY(pa_check_rows_extent(op, "value", p->num_tokens, p->v_stride, krow));
    }
    pa_lse_strides ls; /* checked with or without lse, and with no sequence */
    PA_TRY(pa_lse_layout(op, p->num_heads, p->num_tokens, p->lse_head_stride, p->lse_token_stride, &ls));
    PA_REQUIRE(p->max_query_len >= 0, "%s: max_query_len must be >= 0 (got %d)", op, p->max_query_len);
    PA_REQUIRE(p->cache_only == 0 || p->cache_only == 1, "%s: cache_only must be 0 or 1 (got %d)", op, p->cache_only);
    if (p->cache_only) {
        PA_REQUIRE(p->alibi_slopes == NULL && p->sliding_window == 0,
                   "%s: cache_only takes no ALiBi or sliding window (they need the queries' positions among the keys)",
                   op);
    }
    PA_REQUIRE(p->max_query_len <= p->max_seq_len || p->num_seqs == 0 || p->cache_only,
               "%s: max_query_len %d > max_seq_len %d: a query cannot be longer than its sequence", op,
               p->max_query_len, p->max_seq_len);
    PA_TRY(check_rows(op, p->max_query_len, p->num_heads / kv->num_kv_heads));
    if (p->num_seqs == 0)
        return PA_SUCCESS;
    PA_TRY(pa_check_not_null(op, "out", p->out));
    PA_TRY(pa_check_not_null(op, "query", p->query));
    if (!p->cache_only) {
        PA_TRY(pa_check_not_null(op, "key", p->key));
        PA_TRY(pa_check_not_null(op, "value", p->value));
    }
    PA_TRY(pa_check_not_null(op, "query_start_loc", p->query_start_loc));
    PA_TRY(pa_check_not_null(op, "seq_lens", p->seq_lens));
    PA_TRY(pa_check_not_null(op, "block_tables", p->block_tables));
    PA_REQUIRE(p->max_seq_len > 0, "%s: max_seq_len must be > 0 (got %d)", op, p->max_seq_len);
    PA_REQUIRE(p->max_seq_len <= PA_MAX_SEQ_LEN, "%s: max_seq_len %d is above %d (the kernels' int32 key positions)",
               op, p->max_seq_len, PA_MAX_SEQ_LEN);
    PA_REQUIRE(p->block_table_stride > 0, "%s: block_table_stride must be > 0 (got %d)", op, p->block_table_stride);
    PA_REQUIRE((int64_t)p->max_seq_len <= (int64_t)p->block_table_stride * kv->block_size,
               "%s: max_seq_len %d needs %lld blocks but the block table has %d columns", op, p->max_seq_len,
               ((long long)p->max_seq_len + kv->block_size - 1) / kv->block_size, p->block_table_stride);
    {
        const size_t esz = pa_dtype_size(p->q_dtype);
        const int64_t qrow = (int64_t)p->num_heads * kv->head_size, krow = (int64_t)kv->num_kv_heads * kv->head_size;
        const void *const bufs[4] = {p->out, p->query, p->key, p->value};
        const int64_t kv_rows = p->cache_only ? 0 : p->num_tokens; /* cache_only reads no key or value rows */
        const int64_t ext[4] = {
            pa_rows_bytes(p->num_tokens, 0, qrow, esz), pa_rows_bytes(p->num_tokens, p->q_stride, qrow, esz),
            pa_rows_bytes(kv_rows, p->k_stride, krow, esz), pa_rows_bytes(kv_rows, p->v_stride, krow, esz)};
        PA_TRY(check_lse(op, p->lse, ls.bytes, bufs, ext));
        if (!apart)
            return PA_SUCCESS;
        /* out and lse apart from everything the kernels read (prefill.h) */
        const int64_t n = p->num_seqs, heads4 = (int64_t)p->num_heads * 4;
        pa_span in[12];
        int ni = pa_kv_cache_spans(kv, "kv", in);
        in[ni++] = (pa_span){"query", p->query, ext[1], NULL};
        in[ni++] = (pa_span){"key", p->key, ext[2], NULL};
        in[ni++] = (pa_span){"value", p->value, ext[3], NULL};
        in[ni++] = (pa_span){"query_start_loc", p->query_start_loc, (n + 1) * 4, NULL};
        in[ni++] = (pa_span){"seq_lens", p->seq_lens, n * 4, NULL};
        in[ni++] = (pa_span){"block_tables", p->block_tables, pa_rows_bytes(n, 0, p->block_table_stride, 4), NULL};
        in[ni++] = (pa_span){"alibi_slopes", p->alibi_slopes, heads4, NULL};
        in[ni++] = (pa_span){"sinks", p->sinks, heads4, NULL};
        const pa_span out[2] = {{"out", p->out, ext[0], NULL}, {"lse", p->lse, ls.bytes, NULL}};
        PA_TRY(pa_check_spans_apart(op, in, ni, out, 2));
    }
    return PA_SUCCESS;
}

pa_status pa_context_attention_validate(const pa_context_attention_params *p) { return context_validate(p, 1); }

pa_status pa_prompt_attention_validate(const pa_prompt_attention_params *p) {
    const char *op = "prompt_attention";
    PA_REQUIRE(p != NULL, "%s: params is NULL", op);
    PA_REQUIRE((int)p->attn_type >= PA_ATTN_DECODER && (int)p->attn_type <= PA_ATTN_ENCODER_DECODER,
               "%s: attn_type %d unknown (0 decoder, 1 encoder, 2 encoder-only, 3 encoder/decoder)", op,
               (int)p->attn_type);
    PA_TRY(pa_prefill_select(op, p->dtype, p->dtype, p->head_size, NULL));
    PA_TRY(check_common(op, p->num_seqs, p->num_heads, p->num_kv_heads, p->head_size, p->q_stride, p->k_stride,
                        p->v_stride, p->scale, p->soft_cap, p->sliding_window));
    PA_REQUIRE(p->attn_type != PA_ATTN_ENCODER_DECODER || p->cu_seqlens_k != NULL,
               "%s: cross-attention (encoder/decoder) needs cu_seqlens_k", op);
    if (p->attn_type == PA_ATTN_ENCODER_DECODER && p->sliding_window != 0)
        return pa_fail(PA_ERR_UNSUPPORTED,
                       "%s: cross-attention (encoder/decoder) takes no sliding window (got %d): a decoder query's "
                       "position and an encoder key's measure no distance",
                       op, p->sliding_window);
    PA_REQUIRE(p->num_q_tokens >= 0, "%s: num_q_tokens must be >= 0 (got %d)", op, p->num_q_tokens);
    PA_REQUIRE(p->max_seqlen_q >= 0, "%s: max_seqlen_q must be >= 0 (got %d)", op, p->max_seqlen_q);
    if (p->cu_seqlens_k) {
        PA_REQUIRE(p->num_k_tokens >= 0, "%s: num_k_tokens must be >= 0 (got %d)", op, p->num_k_tokens);
        PA_REQUIRE(p->max_seqlen_k >= 0, "%s: max_seqlen_k must be >= 0 (got %d)", op, p->max_seqlen_k);
        PA_REQUIRE(p->max_seqlen_k <= PA_MAX_SEQ_LEN,
                   "%s: max_seqlen_k %d is above %d (the kernels' int32 key positions)", op, p->max_seqlen_k,
                   PA_MAX_SEQ_LEN);
    }
    {
        const int64_t qrow = (int64_t)p->num_heads * p->head_size, krow = (int64_t)p->num_kv_heads * p->head_size;
        const int64_t krows = p->cu_seqlens_k ? p->num_k_tokens : p->num_q_tokens;
        PA_TRY(pa_check_rows_extent(op, "query", p->num_q_tokens, p->q_stride, qrow));
        PA_TRY(pa_check_rows_extent(op, "key", krows, p->k_stride, krow));
        PA_TRY(pa_check_rows_extent(op, "value", krows, p->v_stride, krow));
    }
    pa_lse_strides ls; /* checked with or without lse, and with no sequence */
    PA_TRY(pa_lse_layout(op, p->num_heads, p->num_q_tokens, p->lse_head_stride, p->lse_token_stride, &ls));
    PA_TRY(check_rows(op, p->max_seqlen_q, p->num_heads / p->num_kv_heads));
    if (p->num_seqs == 0)
        return PA_SUCCESS;
    PA_TRY(pa_check_not_null(op, "out", p->out));
    PA_TRY(pa_check_not_null(op, "query", p->query));
    PA_TRY(pa_check_not_null(op, "key", p->key));
    PA_TRY(pa_check_not_null(op, "value", p->value));
    PA_REQUIRE(p->cu_seqlens_q != NULL, "%s: cu_seqlens_q must not be NULL", op);
    PA_REQUIRE(p->cu_seqlens_k == NULL || p->cu_seqlens_k != p->cu_seqlens_q || p->num_k_tokens == p->num_q_tokens,
               "%s: cu_seqlens_k is cu_seqlens_q but num_k_tokens %d != num_q_tokens %d", op, p->num_k_tokens,
               p->num_q_tokens);
    {
        const size_t esz = pa_dtype_size(p->dtype);
        const int64_t qrow = (int64_t)p->num_heads * p->head_size, krow = (int64_t)p->num_kv_heads * p->head_size;
        const int64_t krows = p->cu_seqlens_k ? p->num_k_tokens : p->num_q_tokens;
        const void *const bufs[4] = {p->out, p->query, p->key, p->value};
        const int64_t ext[4] = {
            pa_rows_bytes(p->num_q_tokens, 0, qrow, esz), pa_rows_bytes(p->num_q_tokens, p->q_stride, qrow, esz),
            pa_rows_bytes(krows, p->k_stride, krow, esz), pa_rows_bytes(krows, p->v_stride, krow, esz)};
        PA_TRY(check_lse(op, p->lse, ls.bytes, bufs, ext));
        /* out and lse apart from everything the kernels read (prefill.h) */
        const int64_t cu = ((int64_t)p->num_seqs + 1) * 4, heads4 = (int64_t)p->num_heads * 4;
        const pa_span in[7] = {{"query", p->query, ext[1], NULL},
                               {"key", p->key, ext[2], NULL},
                               {"value", p->value, ext[3], NULL},
                               {"cu_seqlens_q", p->cu_seqlens_q, cu, NULL},
                               {"cu_seqlens_k", p->cu_seqlens_k, cu, NULL},
                               {"alibi_slopes", p->alibi_slopes, heads4, NULL},
                               {"sinks", p->sinks, heads4, NULL}};
        const pa_span out[2] = {{"out", p->out, ext[0], NULL}, {"lse", p->lse, ls.bytes, NULL}};
        PA_TRY(pa_check_spans_apart(op, in, 7, out, 2));
    }
    return PA_SUCCESS;
}

/* Whether base + n elements of `size` bytes stays inside the address space
 * (n >= 0): the decode part's pointers are formed only then, so a stride no
 * decode row uses (no decode tokens) cannot wrap a pointer. NULL: nothing is
 * formed. */
static int in_space(const void *base, int64_t n, size_t size) {
    int64_t bytes = 0;
    return base == NULL || (pa_mul_i64(n, (int64_t)size, &bytes) && (uint64_t)bytes <= UINTPTR_MAX - (uintptr_t)base);
}

int pa_mixed_split(const pa_mixed_attention_params *m, pa_context_attention_params *pf, pa_decode_params *dc) {
    memset(pf, 0, sizeof *pf);
    memset(dc, 0, sizeof *dc);
    const int hs = m->kv.head_size;
    const int64_t q_stride = m->q_stride ? m->q_stride : (int64_t)m->num_heads * hs;
    const size_t esz = pa_dtype_size(m->q_dtype);
    pf->out = m->out;
    pf->query = m->query;
    pf->key = m->key;
    pf->value = m->value;
    pf->q_stride = m->q_stride;
    pf->k_stride = m->k_stride;
    pf->v_stride = m->v_stride;
    pf->q_dtype = m->q_dtype;
    pf->kv = m->kv;
    pf->block_tables = m->block_tables;
    pf->block_table_stride = m->block_table_stride;
    pf->query_start_loc = m->query_start_loc;
    pf->seq_lens = m->seq_lens;
    pf->num_seqs = m->num_prefills;
    pf->num_heads = m->num_heads;
    pf->num_tokens = m->num_prefill_tokens;
    pf->max_query_len = m->max_prefill_query_len;
    pf->max_seq_len = m->max_prefill_seq_len;
    pf->scale = m->scale;
    pf->alibi_slopes = m->alibi_slopes;
    pf->sliding_window = m->sliding_window;
    pf->soft_cap = m->soft_cap;
    pf->sinks = m->sinks;
    /* One lse over the batch's tokens (prefill.h): each part writes its rows
     * at the whole's strides, the decode part from token num_prefill_tokens.
     * Strides the layout refuses (pa_mixed_attention_validate refuses them
     * first) go through as given. */
    pa_lse_strides ls = {m->lse_head_stride, m->lse_token_stride, 0};
    (void)pa_lse_layout("mixed_attention", m->num_heads, (int64_t)m->num_prefill_tokens + m->num_decode_tokens,
                        m->lse_head_stride, m->lse_token_stride, &ls);
    const int64_t lse_hs = ls.head, lse_ts = ls.token;
    pf->lse = m->lse;
    pf->lse_head_stride = lse_hs;
    pf->lse_token_stride = lse_ts;

    /* The decode part starts num_prefill_tokens rows into out and query and
     * num_prefills rows into the block table. Called before the fields are
     * validated, so the offsets are formed with overflow checks; where one does
     * not fit (or a field is negative) the part's pointers stay NULL. */
    const int64_t np = m->num_prefill_tokens;
    int64_t o_off = 0, q_off = 0, bt_off = 0, lse_off = 0;
    const int fit = np >= 0 && m->num_heads >= 0 && hs >= 0 && q_stride >= 0 && m->num_prefills >= 0 &&
                    m->block_table_stride >= 0 && pa_mul_i64(np, (int64_t)m->num_heads * hs, &o_off) &&
                    pa_mul_i64(o_off, (int64_t)esz, &o_off) && pa_mul_i64(np, q_stride, &q_off) &&
                    pa_mul_i64(q_off, (int64_t)esz, &q_off) &&
                    pa_mul_i64(m->num_prefills, m->block_table_stride, &bt_off) && lse_ts >= 0 &&
                    pa_mul_i64(np, lse_ts, &lse_off) && in_space(m->out, o_off, 1) && in_space(m->query, q_off, 1) &&
                    in_space(m->block_tables, bt_off, sizeof(int32_t)) && in_space(m->lse, lse_off, sizeof(float));
    dc->out = fit && m->out ? (char *)m->out + o_off : NULL;
    dc->query = fit && m->query ? (const char *)m->query + q_off : NULL;
    dc->q_stride = q_stride;
    dc->q_dtype = m->q_dtype;
    dc->kv = m->kv;
    dc->block_tables = fit && m->block_tables ? m->block_tables + bt_off : NULL;
    dc->block_table_stride = m->block_table_stride;
    dc->seq_lens = m->seq_lens ? m->seq_lens + m->num_prefills : NULL;
    dc->num_seqs = m->num_decode_tokens;
    dc->num_heads = m->num_heads;
    dc->max_seq_len = m->max_decode_seq_len;
    dc->scale = m->scale;
    dc->alibi_slopes = m->alibi_slopes;
    dc->sliding_window = m->sliding_window;
    dc->soft_cap = m->soft_cap;
    dc->sinks = m->sinks;
    dc->lse = fit && m->lse ? m->lse + lse_off : NULL;
    dc->lse_head_stride = lse_hs;
    dc->lse_token_stride = lse_ts;
    return fit;
}

pa_status pa_mixed_apart(const pa_mixed_attention_params *p, const void *ws, int64_t ws_bytes) {
    const int64_t tokens = (int64_t)p->num_prefill_tokens + p->num_decode_tokens;
    const int64_t seqs = (int64_t)p->num_prefills + p->num_decode_tokens;
    pa_lse_strides ls = {0, 0, 0};
    PA_TRY(pa_lse_layout("mixed_attention", p->num_heads, tokens, p->lse_head_stride, p->lse_token_stride, &ls));
    const size_t esz = pa_dtype_size(p->q_dtype);
    const int64_t row = (int64_t)p->num_heads * p->kv.head_size, krow = (int64_t)p->kv.num_kv_heads * p->kv.head_size;
    const int64_t np = p->num_prefill_tokens, heads4 = (int64_t)p->num_heads * 4;
    pa_span in[12];
    int ni = pa_kv_cache_spans(&p->kv, "kv", in);
    in[ni++] = (pa_span){"query", p->query, pa_rows_bytes(tokens, p->q_stride, row, esz), NULL};
    in[ni++] = (pa_span){"key", p->key, pa_rows_bytes(np, p->k_stride, krow, esz), NULL};
    in[ni++] = (pa_span){"value", p->value, pa_rows_bytes(np, p->v_stride, krow, esz), NULL};
    in[ni++] = (pa_span){"query_start_loc", p->query_start_loc,
                         p->num_prefills ? ((int64_t)p->num_prefills + 1) * 4 : 0, NULL};
    in[ni++] = (pa_span){"seq_lens", p->seq_lens, seqs * 4, NULL};
    in[ni++] = (pa_span){"block_tables", p->block_tables, pa_rows_bytes(seqs, 0, p->block_table_stride, 4), NULL};
    in[ni++] = (pa_span){"alibi_slopes", p->alibi_slopes, heads4, NULL};
    in[ni++] = (pa_span){"sinks", p->sinks, heads4, NULL};
    const pa_span out[3] = {{"out", p->out, pa_rows_bytes(tokens, 0, row, esz), NULL},
                            {"lse", p->lse, ls.bytes, NULL},
                            {"workspace", ws, ws_bytes, NULL}};
    return pa_check_spans_apart("mixed_attention", in, ni, out, 3);
}

pa_status pa_mixed_attention_validate(const pa_mixed_attention_params *p) {
    PA_REQUIRE(p != NULL, "mixed_attention: params is NULL");
    PA_REQUIRE(p->num_prefills >= 0 && p->num_decode_tokens >= 0 && p->num_prefill_tokens >= 0,
               "mixed_attention: num_prefills (%d), num_prefill_tokens (%d) and num_decode_tokens (%d) must be >= 0",
               p->num_prefills, p->num_prefill_tokens, p->num_decode_tokens);
    PA_REQUIRE((int64_t)p->num_prefill_tokens + p->num_decode_tokens <= INT32_MAX,
               "mixed_attention: num_prefill_tokens + num_decode_tokens overflows int32");
    PA_REQUIRE(p->num_prefill_tokens == 0 || p->num_prefills > 0,
               "mixed_attention: %d prefill tokens but num_prefills is 0", p->num_prefill_tokens);
    pa_lse_strides ls; /* the whole lse's; each part checks its own rows against its own buffers */
    const int64_t tokens = (int64_t)p->num_prefill_tokens + p->num_decode_tokens;
    PA_TRY(pa_lse_layout("mixed_attention", p->num_heads, tokens, p->lse_head_stride, p->lse_token_stride, &ls));
    pa_context_attention_params pf;
    pa_decode_params dc;
    const int fit = pa_mixed_split(p, &pf, &dc);
    /* The prefill part is always checked (it carries the shared fields: out,
     * query, cache, heads). The decode part only when there are decodes: with
     * none, the call is a context attention and accepts what
     * pa_context_attention accepts (a head size the decode op lacks, say). */
    pa_status st = context_validate(&pf, 0);
    if (st != PA_SUCCESS)
        return pa_error_context(st, PA_MIXED_PREFILL_PART);
    if (dc.num_seqs > 0) {
        PA_REQUIRE(
            fit,
            "mixed_attention: the decode part's offsets (num_prefill_tokens %d x q_stride %lld, x num_heads %d x "
            "head_size %d; num_prefills %d x block_table_stride %d) overflow",
            p->num_prefill_tokens, (long long)p->q_stride, p->num_heads, p->kv.head_size, p->num_prefills,
            p->block_table_stride);
        st = pa_decode_validate_fields(&dc, 0);
        if (st != PA_SUCCESS)
            return pa_error_context(st, PA_MIXED_DECODE_PART);
        /* The decode launch's own limit, checked here so that no caller
         * (pa_mixed_attention included) finds it after the prefill ran. */
        PA_REQUIRE((int64_t)dc.num_seqs * dc.num_heads <= INT32_MAX,
                   "mixed_attention: num_decode_tokens %d x num_heads %d is too large for one decode launch",
                   dc.num_seqs, dc.num_heads);
    }
    if (p->lse && tokens > 0) {
        /* Each part held its lse rows clear of its own rows of out and the
         * query; the whole lse must also miss the other part's. */
        const size_t esz = pa_dtype_size(p->q_dtype);
        const int64_t row = (int64_t)p->num_heads * p->kv.head_size;
        PA_REQUIRE(!pa_ranges_overlap(p->lse, ls.bytes, p->out, pa_rows_bytes(tokens, 0, row, esz)),
                   "mixed_attention: lse overlaps out");
        PA_REQUIRE(!pa_ranges_overlap(p->lse, ls.bytes, p->query, pa_rows_bytes(tokens, p->q_stride, row, esz)),
                   "mixed_attention: lse overlaps query");
        const int64_t krow = (int64_t)p->kv.num_kv_heads * p->kv.head_size, np = p->num_prefill_tokens;
        PA_REQUIRE(!pa_ranges_overlap(p->lse, ls.bytes, p->key, pa_rows_bytes(np, p->k_stride, krow, esz)) &&
                       !pa_ranges_overlap(p->lse, ls.bytes, p->value, pa_rows_bytes(np, p->v_stride, krow, esz)),
                   "mixed_attention: lse overlaps key or value");
    }
    return tokens > 0 ? pa_mixed_apart(p, NULL, 0) : PA_SUCCESS;
}

/* Pure host (the decode part's workspace, pa_paged_attention_decode_workspace_size
 * in csrc/ops/decode.c): here so the host library, and the fuzzer built on it,
 * has it too. */
pa_status pa_mixed_attention_workspace_size(const pa_mixed_attention_params *p, size_t *bytes) {
    PA_REQUIRE(bytes != NULL, "mixed_attention: bytes is NULL");
    PA_TRY(pa_mixed_attention_validate(p));
    pa_context_attention_params pf;
    pa_decode_params dc;
    (void)pa_mixed_split(p, &pf, &dc); /* validated above */
    size_t n = 0;
    if (dc.num_seqs > 0)
        PA_TRY(pa_paged_attention_decode_workspace_size(&dc, &n));
    *bytes = n;
    pa_clear_error();
    return PA_SUCCESS;
}

/* Host-side fast-path decisions: 16-byte rows for cp.async. */
static int aligned16(const void *ptr, int64_t stride_elems, size_t esz) {
    return ((uintptr_t)ptr % 16 == 0) && ((uint64_t)stride_elems * esz) % 16 == 0;
}

/* How the kernel loads cache tiles (prefill_internal.h, PA_PREFILL_K_* / _V_*):
 * cp.async wherever the 16-byte chunks are aligned. A cache of the query dtype
 * copies as it stands; an fp8 cache copies raw and is dequantised in shared
 * memory. vLLM's key chunks are 16 bytes by construction; its value tile is
 * copied transposed ([d][key]), in chunks of 8 (16-bit) or 16 (fp8) keys of
 * one block, so the block size must be a multiple of that. Flash layouts need
 * 16-byte strides. Anything else goes through registers. */
static void pa_prefill_cache_paths(pa_prefill_kparams *k, const pa_kv_cache *kv, pa_dtype q_dtype) {
    k->cache_k = PA_PREFILL_K_GATHER;
    k->cache_v = PA_PREFILL_V_GATHER;
    const int same = kv->dtype == q_dtype, fp8 = pa_dtype_is_fp8(kv->dtype);
    if (q_dtype == PA_DTYPE_F32 || (!same && !fp8) || (uintptr_t)kv->key % 16 || (uintptr_t)kv->value % 16)
        return;
    const size_t csz = pa_dtype_size(kv->dtype);
    if (kv->layout == PA_LAYOUT_VLLM) {
        const int vt_ok = kv->block_size % (int)(16 / csz) == 0;
        if (same) {
            k->cache_k = PA_PREFILL_K_ASYNC;
            k->cache_v = vt_ok ? PA_PREFILL_V_ASYNC_VT : PA_PREFILL_V_GATHER;
        } else if (vt_ok) {
            k->cache_k = PA_PREFILL_K_RAW;
            k->cache_v = PA_PREFILL_V_RAW_VT;
        }
        return;
    }
    if (((uint64_t)(k->g.block_stride | k->g.page_stride | k->g.head_stride) * csz) % 16)
        return;
    k->cache_k = same ? PA_PREFILL_K_ASYNC : PA_PREFILL_K_RAW;
    k->cache_v = same ? PA_PREFILL_V_ASYNC : PA_PREFILL_V_RAW;
}

/* The kernels' window: a window of max_q + max_k keys or more masks nothing in
 * any sequence they run (|q_pos - j| stays below it within those bounds; a
 * sequence past them is skipped), so it is off (0), and the kernels' masks
 * and edge tests take their cheaper window-off forms. (Where a kernel forms
 * q_pos + W it does so in int64: span_end.) */
static int32_t kernel_window(int32_t window, int32_t max_q, int32_t max_k) {
    return (int64_t)window >= (int64_t)max_q + max_k ? 0 : window;
}

void pa_prefill_kparams_from_context(pa_prefill_kparams *k, const pa_context_attention_params *p) {
    memset(k, 0, sizeof *k);
    const pa_kv_cache *kv = &p->kv;
    const int hs = kv->head_size, nkv = kv->num_kv_heads;
    const size_t esz = pa_dtype_size(p->q_dtype), csz = pa_dtype_size(kv->dtype);
    k->out = p->out;
    k->query = p->query;
    k->key_new = p->key;
    k->value_new = p->value;
    k->q_stride = p->q_stride ? p->q_stride : (int64_t)p->num_heads * hs;
    k->k_stride = p->k_stride ? p->k_stride : (int64_t)nkv * hs;
    k->v_stride = p->v_stride ? p->v_stride : (int64_t)nkv * hs;
    k->key_cache = kv->key;
    k->value_cache = kv->value;
    k->g = pa_kv_geom_make(kv->layout, (int32_t)csz, kv->block_size, nkv, hs, kv->block_stride, kv->page_stride,
                           kv->head_stride);
    k->cache_dtype = kv->dtype;
    k->num_blocks = kv->num_blocks;
    k->block_div = pa_kv_divider_make(kv->block_size);
    k->kl = pa_kv_linear_make(&k->g);
    k->k_scale = pa_kv_scale_ptr(kv, kv->k_scale);
    k->v_scale = pa_kv_scale_ptr(kv, kv->v_scale);
    k->scale_hs = kv->scales_per_head ? 1 : 0;
    k->block_tables = p->block_tables;
    k->block_table_stride = p->block_table_stride;
    k->seq_lens = p->seq_lens;
    k->cu_q = p->query_start_loc;
    k->cu_k = NULL;
    k->mode = PA_PREFILL_MODE_CONTEXT;
    k->own_mask = p->cache_only ? 0 : -1;
    k->causal = !p->cache_only;
    k->q_dtype = p->q_dtype;
    k->num_seqs = p->num_seqs;
    k->num_heads = p->num_heads;
    k->num_kv_heads = nkv;
    k->head_size = hs;
    k->num_q_tokens = p->num_tokens;
    k->num_k_tokens = p->num_tokens;
    k->max_q_len = p->max_query_len;
    k->max_k_len = p->max_seq_len;
    k->scale = p->scale;
    k->soft_cap = p->soft_cap;
    k->alibi_slopes = p->alibi_slopes;
    k->sinks = p->sinks;
    set_lse(k, p->lse, p->num_heads, p->num_tokens, p->lse_head_stride, p->lse_token_stride);
    k->window = kernel_window(p->sliding_window, k->max_q_len, k->max_k_len);
    k->vec_q = aligned16(p->query, k->q_stride, esz);
    k->vec_new = aligned16(p->key, k->k_stride, esz) && aligned16(p->value, k->v_stride, esz);
    pa_prefill_cache_paths(k, kv, p->q_dtype);
}

void pa_prefill_kparams_from_prompt(pa_prefill_kparams *k, const pa_prompt_attention_params *p) {
    memset(k, 0, sizeof *k);
    const int hs = p->head_size, nkv = p->num_kv_heads;
    const size_t esz = pa_dtype_size(p->dtype);
    k->out = p->out;
    k->query = p->query;
    k->key_new = p->key;
    k->value_new = p->value;
    k->q_stride = p->q_stride ? p->q_stride : (int64_t)p->num_heads * hs;
    k->k_stride = p->k_stride ? p->k_stride : (int64_t)nkv * hs;
    k->v_stride = p->v_stride ? p->v_stride : (int64_t)nkv * hs;
    k->cache_dtype = p->dtype;
    k->g = pa_kv_geom_make(PA_LAYOUT_FLASH_NHD, (int32_t)esz, 1, nkv, hs, 0, 0, 0); /* unused */
    k->cu_q = p->cu_seqlens_q;
    k->cu_k = p->cu_seqlens_k ? p->cu_seqlens_k : p->cu_seqlens_q;
    k->mode = PA_PREFILL_MODE_PROMPT;
    k->causal = p->attn_type == PA_ATTN_DECODER;
    k->q_dtype = p->dtype;
    k->num_seqs = p->num_seqs;
    k->num_heads = p->num_heads;
    k->num_kv_heads = nkv;
    k->head_size = hs;
    k->num_q_tokens = p->num_q_tokens;
    k->num_k_tokens = p->cu_seqlens_k ? p->num_k_tokens : p->num_q_tokens;
    k->max_q_len = p->max_seqlen_q;
    k->max_k_len = p->cu_seqlens_k ? p->max_seqlen_k : p->max_seqlen_q;
    k->scale = p->scale;
    k->soft_cap = p->soft_cap;
    k->alibi_slopes = p->alibi_slopes;
    k->sinks = p->sinks;
    set_lse(k, p->lse, p->num_heads, p->num_q_tokens, p->lse_head_stride, p->lse_token_stride);
    k->window = kernel_window(p->sliding_window, k->max_q_len, k->max_k_len);
    k->vec_q = aligned16(p->query, k->q_stride, esz);
    k->vec_new = aligned16(p->key, k->k_stride, esz) && aligned16(p->value, k->v_stride, esz);
}
