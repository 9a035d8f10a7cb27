/* Random prefill problems shared by the prefill tests and `pagedattn check|bench
 * prefill` (header-only, so it needs no build change).
 *
 * Context problem: per sequence a context of ctx tokens in a paged cache (any
 * layout, blocks scattered over a larger pool) and q new tokens given as packed
 * K/V. The block table covers the whole sequence, like vLLM's after the new
 * tokens were written, but the cache slots of the new tokens and every unused
 * slot hold NaN: a kernel that reads them (instead of the packed K/V, or past a
 * length) produces NaN. The same K/V are kept contiguously per sequence as
 * floats (dequantised) for a plain, unpaged computation.
 *
 * Prompt problem: packed Q [nq, heads, head], K/V [nk, kv_heads, head] with
 * cu_seqlens for queries and keys. */
#ifndef PA_PREFILL_PROBLEMS_H
#define PA_PREFILL_PROBLEMS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pagedattn/pagedattn.h"
#include "problems.h"

typedef struct pa_context_problem_cfg {
    uint64_t seed;
    pa_kv_layout layout;
    pa_dtype q_dtype, cache_dtype;
    int num_seqs, num_heads, num_kv_heads, head_size, block_size;
    const int *query_lens;   /* num_seqs entries, >= 0 */
    const int *context_lens; /* num_seqs entries, >= 0 */
    int extra_blocks;        /* unused NaN blocks in the pool */
    int with_alibi;
    int with_sinks;      /* attention sinks: pa_sink_logits(num_heads, seed) */
    int skip_logical;    /* no contiguous copies (large benchmarks) */
    int new_in_cache;    /* also write the new tokens into the cache (mixed batches: the
                            decodes read theirs from it); use with cache dtype == q dtype */
    int scales_per_head; /* fp8 caches: a k_scale and v_scale per KV head (pa_kv_head_scales, problems.h) */
} pa_context_problem_cfg;

typedef struct pa_context_problem {
    pa_context_attention_params p; /* host pointers */
    void *q, *k, *v, *out, *kc, *vc;
    int32_t *block_tables, *seq_lens, *qsl;
    float *alibi, *sinks;
    float k_scale, v_scale;     /* fp8 caches: the one scale, or the base of the scales per head */
    float *k_scales, *v_scales; /* scales_per_head over fp8: num_kv_heads each (kv.k_scale, kv.v_scale); else NULL */
    size_t q_elems, kv_elems, out_elems, kc_elems, vc_elems; /* kv_elems: new K (= new V) */
    float **k_logical, **v_logical;                          /* [s]: [seq_len][kv_heads][head] floats */
} pa_context_problem;

/* Element offsets of (block, kv head, slot, dim) in the key and value caches,
 * spelled out here independently of kv_index.h (combined caches are not made
 * here: VLLM, FLASH_HND, else NHD). */
static inline void pa_pp_cache_offsets(pa_kv_layout layout, size_t esz, int bs, int nkv, int hs, int64_t blk, int h,
                                       int slot, int d, int64_t *ko, int64_t *vo) {
    const int x = (int)(16 / esz);
    switch (layout) {
    case PA_LAYOUT_VLLM:
        *ko = ((blk * nkv + h) * (hs / x) + d / x) * (int64_t)bs * x + (int64_t)slot * x + d % x;
        *vo = ((blk * nkv + h) * hs + d) * (int64_t)bs + slot;
        break;
    case PA_LAYOUT_FLASH_HND: *ko = *vo = ((blk * nkv + h) * bs + slot) * (int64_t)hs + d; break;
    default: /* NHD */ *ko = *vo = ((blk * bs + slot) * (int64_t)nkv + h) * hs + d; break;
    }
}

/* NULL (message on stderr) for an invalid cache shape. */
/* What a context problem's context tokens are written into (pa_fill_tokens). */
typedef struct pa_pp_fill {
    const pa_context_problem_cfg *c;
    pa_context_problem *pr;
    int max_blocks;
} pa_pp_fill;

/* Context token pos of sequence s: K, then V, for each (head, dim). */
static inline void pa_pp_fill_token(void *ctx, pa_rng *rng, int s, int pos) {
    const pa_pp_fill *j = (const pa_pp_fill *)ctx;
    const pa_context_problem_cfg *c = j->c;
    pa_context_problem *pr = j->pr;
    const int bs = c->block_size, nkv = c->num_kv_heads, hs = c->head_size;
    const size_t esz = pa_dtype_size(c->cache_dtype);
    const int64_t blk = pr->block_tables[(size_t)s * j->max_blocks + pos / bs];
    for (int h = 0; h < nkv; h++)
        for (int d = 0; d < hs; d++) {
            int64_t ko, vo;
            pa_pp_cache_offsets(c->layout, esz, bs, nkv, hs, blk, h, pos % bs, d, &ko, &vo);
            const float kx = pa_rng_uniform(rng, -1.0f, 1.0f), vx = pa_rng_uniform(rng, -1.0f, 1.0f);
            const float ks = pr->k_scales ? pr->k_scales[h] : pr->k_scale; /* KV head h's, or the one */
            const float vs = pr->v_scales ? pr->v_scales[h] : pr->v_scale;
            pa_store_from_float(c->cache_dtype, pr->kc, (size_t)ko, kx / ks);
            pa_store_from_float(c->cache_dtype, pr->vc, (size_t)vo, vx / vs);
            if (c->skip_logical)
                continue;
            const size_t li = ((size_t)pos * nkv + h) * hs + d;
            pr->k_logical[s][li] = pa_load_as_float(c->cache_dtype, pr->kc, (size_t)ko) * ks;
            pr->v_logical[s][li] = pa_load_as_float(c->cache_dtype, pr->vc, (size_t)vo) * vs;
        }
}

static inline pa_context_problem *pa_context_problem_make(const pa_context_problem_cfg *c) {
    if (c->layout == PA_LAYOUT_COMBINED) { /* its V shares K's buffer: the separate caches below would overflow */
        fprintf(stderr, "context problem: the combined layout is the ragged op's; context attention takes vllm, "
                        "nhd or hnd caches\n");
        return NULL;
    }
    pa_rng rng = pa_rng_make(c->seed);
    pa_context_problem *pr = (pa_context_problem *)calloc(1, sizeof *pr);
    if (!pr)
        return NULL;
    const int bs = c->block_size, nkv = c->num_kv_heads, hs = c->head_size;
    int max_len = 1, max_q = 0, tokens = 0;
    int *lens = (int *)pa_xmalloc(sizeof(int) * ((size_t)c->num_seqs + 1)); /* context + new tokens */
    for (int s = 0; s < c->num_seqs; s++) {
        const int L = lens[s] = c->context_lens[s] + c->query_lens[s];
        max_len = L > max_len ? L : max_len;
        max_q = c->query_lens[s] > max_q ? c->query_lens[s] : max_q;
        tokens += c->query_lens[s];
    }
    const int max_blocks = (max_len + bs - 1) / bs;
    const int num_blocks = pa_page_pool_blocks(c->num_seqs, lens, bs, c->extra_blocks);
    pa_context_attention_params *p = &pr->p;
    p->q_dtype = c->q_dtype;
    p->num_seqs = c->num_seqs;
    p->num_heads = c->num_heads;
    p->num_tokens = tokens;
    p->max_query_len = max_q;
    p->max_seq_len = max_len;
    p->block_table_stride = max_blocks;
    p->scale = 1.0f / sqrtf((float)hs);
    p->kv.layout = c->layout;
    p->kv.dtype = c->cache_dtype;
    p->kv.num_blocks = num_blocks;
    p->kv.block_size = bs;
    p->kv.num_kv_heads = nkv;
    p->kv.head_size = hs;
    pr->k_scale = pa_dtype_is_fp8(c->cache_dtype) ? 0.05f : 1.0f; /* != 1 so a missing scale shows */
    pr->v_scale = pa_dtype_is_fp8(c->cache_dtype) ? 0.03f : 1.0f;
    p->kv.k_scale = &pr->k_scale;
    p->kv.v_scale = &pr->v_scale;
    if (c->scales_per_head && pa_dtype_is_fp8(c->cache_dtype)) { /* each KV head its own */
        pr->k_scales = pa_kv_head_scales(pr->k_scale, nkv, 0);
        pr->v_scales = pa_kv_head_scales(pr->v_scale, nkv, 1);
        p->kv.k_scale = pr->k_scales;
        p->kv.v_scale = pr->v_scales;
        p->kv.scales_per_head = 1;
    }
    p->kv.key = (void *)16;
    p->kv.value = (void *)16;
    int64_t ke, ve;
    if (pa_kv_cache_elements(&p->kv, &ke, &ve) != PA_SUCCESS) {
        fprintf(stderr, "context problem: %s\n", pa_last_error());
        free(lens);
        free(pr->k_scales);
        free(pr->v_scales);
        free(pr);
        return NULL;
    }
    const size_t esz = pa_dtype_size(c->cache_dtype), qsz = pa_dtype_size(c->q_dtype);
    pr->kc_elems = (size_t)ke;
    pr->vc_elems = (size_t)ve;
    pr->kc = pa_xmalloc(pr->kc_elems * esz + 16);
    pr->vc = pa_xmalloc(pr->vc_elems * esz + 16);
    pa_fill_nan(c->cache_dtype, pr->kc, pr->kc_elems);
    pa_fill_nan(c->cache_dtype, pr->vc, pr->vc_elems);
    p->kv.key = pr->kc;
    p->kv.value = pr->vc;

    pr->q_elems = (size_t)tokens * c->num_heads * hs;
    pr->out_elems = pr->q_elems;
    pr->kv_elems = (size_t)tokens * nkv * hs;
    pr->q = pa_random_buffer(&rng, c->q_dtype, pr->q_elems, -1.0f, 1.0f);
    pr->k = pa_random_buffer(&rng, c->q_dtype, pr->kv_elems, -1.0f, 1.0f);
    pr->v = pa_random_buffer(&rng, c->q_dtype, pr->kv_elems, -1.0f, 1.0f);
    pr->out = pa_xmalloc(pr->out_elems * qsz + 16);
    pa_fill_nan(c->q_dtype, pr->out, pr->out_elems);

    /* Blocks scattered over the pool; unused columns point at the spare (NaN) block. */
    pr->block_tables = (int32_t *)pa_xmalloc(sizeof(int32_t) * ((size_t)c->num_seqs * max_blocks + 1));
    pa_page_pool_deal(&rng, num_blocks, c->num_seqs, lens, bs, pr->block_tables, max_blocks, -1);
    free(lens);
    pr->seq_lens = (int32_t *)pa_xmalloc(sizeof(int32_t) * ((size_t)c->num_seqs + 1));
    pr->qsl = (int32_t *)pa_xmalloc(sizeof(int32_t) * ((size_t)c->num_seqs + 1));
    pr->k_logical = (float **)calloc((size_t)c->num_seqs + 1, sizeof(float *));
    pr->v_logical = (float **)calloc((size_t)c->num_seqs + 1, sizeof(float *));
    if (!pr->k_logical || !pr->v_logical) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    const int64_t row = (int64_t)nkv * hs;
    /* context: random values written into the cache (quantised with the
     * scale). Context token t of the batch takes draws 2 t row on (K, then V,
     * for each head and dim). */
    for (int s = 0; s < c->num_seqs; s++) {
        const int L = c->context_lens[s] + c->query_lens[s];
        if (!c->skip_logical) {
            pr->k_logical[s] = (float *)pa_xmalloc(sizeof(float) * ((size_t)L * row + 1));
            pr->v_logical[s] = (float *)pa_xmalloc(sizeof(float) * ((size_t)L * row + 1));
        }
    }
    pa_pp_fill fill = {c, pr, max_blocks};
    pa_fill_tokens(c->context_lens, c->num_seqs, 2 * row, rng, pa_pp_fill_token, &fill);
    int q0 = 0;
    for (int s = 0; s < c->num_seqs; s++) {
        const int ctx = c->context_lens[s], ql = c->query_lens[s], L = ctx + ql;
        pr->seq_lens[s] = L;
        pr->qsl[s] = q0;
        /* new tokens: from the packed K/V (their cache slots stay NaN unless new_in_cache) */
        for (int t = 0; c->new_in_cache && t < ql; t++) {
            const int pos = ctx + t;
            const int64_t blk = pr->block_tables[(size_t)s * max_blocks + pos / bs];
            for (int h = 0; h < nkv; h++)
                for (int d = 0; d < hs; d++) {
                    int64_t ko, vo;
                    pa_pp_cache_offsets(c->layout, esz, bs, nkv, hs, blk, h, pos % bs, d, &ko, &vo);
                    const size_t e = (size_t)(q0 + t) * row + (size_t)h * hs + d;
                    pa_store_from_float(c->cache_dtype, pr->kc, (size_t)ko,
                                        pa_load_as_float(c->q_dtype, pr->k, e) /
                                            (pr->k_scales ? pr->k_scales[h] : pr->k_scale));
                    pa_store_from_float(c->cache_dtype, pr->vc, (size_t)vo,
                                        pa_load_as_float(c->q_dtype, pr->v, e) /
                                            (pr->v_scales ? pr->v_scales[h] : pr->v_scale));
                }
        }
        if (!c->skip_logical)
            for (int t = 0; t < ql; t++)
                for (int e = 0; e < row; e++) {
                    const size_t li = (size_t)(ctx + t) * row + e;
                    pr->k_logical[s][li] = pa_load_as_float(c->q_dtype, pr->k, (size_t)((q0 + t) * row + e));
                    pr->v_logical[s][li] = pa_load_as_float(c->q_dtype, pr->v, (size_t)((q0 + t) * row + e));
                }
        q0 += ql;
    }
    pr->qsl[c->num_seqs] = q0;
    if (c->with_alibi) {
        pr->alibi = (float *)pa_xmalloc(sizeof(float) * (size_t)c->num_heads);
        for (int h = 0; h < c->num_heads; h++)
            pr->alibi[h] = pa_alibi_slope(h, c->num_heads);
        p->alibi_slopes = pr->alibi;
    }
    if (c->with_sinks)
        p->sinks = pr->sinks = pa_sink_logits(c->num_heads, c->seed);
    p->out = pr->out;
    p->query = pr->q;
    p->key = pr->k;
    p->value = pr->v;
    p->block_tables = pr->block_tables;
    p->seq_lens = pr->seq_lens;
    p->query_start_loc = pr->qsl;
    return pr;
}

static inline void pa_context_problem_free(pa_context_problem *pr) {
    if (!pr)
        return;
    for (int s = 0; s < pr->p.num_seqs; s++) {
        free(pr->k_logical[s]);
        free(pr->v_logical[s]);
    }
    free(pr->k_logical);
    free(pr->v_logical);
    free(pr->q);
    free(pr->k);
    free(pr->v);
    free(pr->out);
    free(pr->kc);
    free(pr->vc);
    free(pr->block_tables);
    free(pr->seq_lens);
    free(pr->qsl);
    free(pr->alibi);
    free(pr->sinks);
    free(pr->k_scales);
    free(pr->v_scales);
    free(pr);
}

/* Plain attention (pa_plain_attention_row) for the q_len query rows of one
 * sequence over its k_len contiguous keys: query t is at absolute position
 * first_pos + t, row q_row0 + t of q and of ref. With abs_v, sum_k p_k |v_k|
 * instead of the output (the scale of what rounding the probabilities can
 * move an output element by). sinks: NULL, or each head's sink, one more
 * score in the softmax with no value. lse: NULL, or [num_heads, lse_tokens]
 * floats for each row's log-sum-exp (pa_plain_opts.lse). */
static inline void pa_pp_plain_seq(const float *K, const float *V, int k_len, int first_pos, const void *q, pa_dtype qd,
                                   int64_t q_row0, int q_len, int num_heads, int nkv, int hs, float scale, float cap,
                                   const float *alibi, const float *sinks, int causal, int window, int abs_v,
                                   float *ref, float *lse, int64_t lse_tokens) {
    float *qr = (float *)pa_xmalloc(sizeof(float) * (size_t)hs);
    for (int t = 0; t < q_len; t++)
        for (int h = 0; h < num_heads; h++) {
            const int kh = h / (num_heads / nkv);
            const size_t row = ((size_t)(q_row0 + t) * num_heads + h) * hs;
            for (int d = 0; d < hs; d++)
                qr[d] = pa_load_as_float(qd, q, row + d);
            pa_plain_opts o;
            memset(&o, 0, sizeof o);
            o.scale = scale;
            o.soft_cap = cap;
            o.alibi_slope = alibi ? alibi[h] : 0.0;
            o.causal = causal;
            o.window = window;
            o.empty_is_zero = 1; /* a query that sees no key: 0 */
            o.abs_v = abs_v;
            o.has_sink = sinks != NULL;
            o.sink = sinks ? sinks[h] : 0.0;
            double row_lse = 0.0;
            o.lse = lse ? &row_lse : NULL;
            pa_plain_attention_row(qr, K + (size_t)kh * hs, V + (size_t)kh * hs, (size_t)nkv * hs, k_len, hs,
                                   first_pos + t, &o, ref + row);
            if (lse)
                lse[(int64_t)h * lse_tokens + q_row0 + t] = (float)row_lse;
        }
    free(qr);
}

/* ref: [num_tokens, num_heads, head] floats; abs_v and lse ([num_heads,
 * num_tokens] or NULL) as pa_pp_plain_seq's. With p.cache_only, sequence s
 * sees the first seq_lens[s] of its logical keys, unmasked (a test sets
 * seq_lens to the context lengths: the keys the cache holds). */
static inline void pa_context_problem_plain_lse(const pa_context_problem *pr, float *ref, int abs_v, float *lse) {
    const pa_context_attention_params *p = &pr->p;
    for (int s = 0; s < p->num_seqs; s++) {
        const int ql = p->query_start_loc[s + 1] - p->query_start_loc[s], L = p->seq_lens[s];
        pa_pp_plain_seq(pr->k_logical[s], pr->v_logical[s], L, L - ql, p->query, p->q_dtype, p->query_start_loc[s], ql,
                        p->num_heads, p->kv.num_kv_heads, p->kv.head_size, p->scale, p->soft_cap, p->alibi_slopes,
                        p->sinks, !p->cache_only, p->sliding_window, abs_v, ref, lse, p->num_tokens);
    }
}
static inline void pa_context_problem_plain_ex(const pa_context_problem *pr, float *ref, int abs_v) {
    pa_context_problem_plain_lse(pr, ref, abs_v, NULL);
}
static inline void pa_context_problem_plain(const pa_context_problem *pr, float *ref) {
    pa_context_problem_plain_ex(pr, ref, 0);
}

/* ---- prompt problems --------------------------------------------------------------- */

typedef struct pa_prompt_problem_cfg {
    uint64_t seed;
    pa_dtype dtype;
    pa_attn_type attn_type;
    int num_seqs, num_heads, num_kv_heads, head_size;
    const int *q_lens;
    const int *k_lens; /* NULL: self-attention (cu_seqlens_k = NULL) */
    int with_alibi;
    int with_sinks; /* attention sinks: pa_sink_logits(num_heads, seed) */
} pa_prompt_problem_cfg;

typedef struct pa_prompt_problem {
    pa_prompt_attention_params p;
    void *q, *k, *v, *out;
    int32_t *cu_q, *cu_k;
    float *alibi, *sinks;
    size_t q_elems, k_elems;
} pa_prompt_problem;

static inline pa_prompt_problem *pa_prompt_problem_make(const pa_prompt_problem_cfg *c) {
    pa_rng rng = pa_rng_make(c->seed);
    pa_prompt_problem *pr = (pa_prompt_problem *)calloc(1, sizeof *pr);
    if (!pr)
        return NULL;
    pa_prompt_attention_params *p = &pr->p;
    pr->cu_q = (int32_t *)pa_xmalloc(sizeof(int32_t) * ((size_t)c->num_seqs + 1));
    pr->cu_k = c->k_lens ? (int32_t *)pa_xmalloc(sizeof(int32_t) * ((size_t)c->num_seqs + 1)) : NULL;
    int nq = 0, nk = 0, mq = 0, mk = 0;
    for (int s = 0; s < c->num_seqs; s++) {
        pr->cu_q[s] = nq;
        nq += c->q_lens[s];
        mq = c->q_lens[s] > mq ? c->q_lens[s] : mq;
        if (c->k_lens) {
            pr->cu_k[s] = nk;
            nk += c->k_lens[s];
            mk = c->k_lens[s] > mk ? c->k_lens[s] : mk;
        }
    }
    pr->cu_q[c->num_seqs] = nq;
    if (c->k_lens)
        pr->cu_k[c->num_seqs] = nk;
    else
        nk = nq, mk = mq;
    const int hs = c->head_size;
    pr->q_elems = (size_t)nq * c->num_heads * hs;
    pr->k_elems = (size_t)nk * c->num_kv_heads * hs;
    pr->q = pa_random_buffer(&rng, c->dtype, pr->q_elems, -1.0f, 1.0f);
    pr->k = pa_random_buffer(&rng, c->dtype, pr->k_elems, -1.0f, 1.0f);
    pr->v = pa_random_buffer(&rng, c->dtype, pr->k_elems, -1.0f, 1.0f);
    pr->out = pa_xmalloc(pr->q_elems * pa_dtype_size(c->dtype) + 16);
    pa_fill_nan(c->dtype, pr->out, pr->q_elems);
    if (c->with_alibi) {
        pr->alibi = (float *)pa_xmalloc(sizeof(float) * (size_t)c->num_heads);
        for (int h = 0; h < c->num_heads; h++)
            pr->alibi[h] = pa_alibi_slope(h, c->num_heads);
    }
    p->out = pr->out;
    p->query = pr->q;
    p->key = pr->k;
    p->value = pr->v;
    p->dtype = c->dtype;
    p->attn_type = c->attn_type;
    p->cu_seqlens_q = pr->cu_q;
    p->cu_seqlens_k = pr->cu_k;
    p->num_seqs = c->num_seqs;
    p->num_heads = c->num_heads;
    p->num_kv_heads = c->num_kv_heads;
    p->head_size = hs;
    p->num_q_tokens = nq;
    p->num_k_tokens = nk;
    p->max_seqlen_q = mq;
    p->max_seqlen_k = mk;
    p->scale = 1.0f / sqrtf((float)hs);
    p->alibi_slopes = pr->alibi;
    if (c->with_sinks)
        p->sinks = pr->sinks = pa_sink_logits(c->num_heads, c->seed);
    return pr;
}

static inline void pa_prompt_problem_free(pa_prompt_problem *pr) {
    if (!pr)
        return;
    free(pr->q);
    free(pr->k);
    free(pr->v);
    free(pr->out);
    free(pr->cu_q);
    free(pr->cu_k);
    free(pr->alibi);
    free(pr->sinks);
    free(pr);
}

/* ref: [num_q_tokens, num_heads, head] floats (packed K/V are contiguous
 * already); abs_v and lse ([num_heads, num_q_tokens] or NULL) as
 * pa_pp_plain_seq's. */
static inline void pa_prompt_problem_plain_lse(const pa_prompt_problem *pr, float *ref, int abs_v, float *lse) {
    const pa_prompt_attention_params *p = &pr->p;
    const int hs = p->head_size, nkv = p->num_kv_heads;
    const int32_t *cu_k = p->cu_seqlens_k ? p->cu_seqlens_k : p->cu_seqlens_q;
    for (int s = 0; s < p->num_seqs; s++) {
        const int ql = p->cu_seqlens_q[s + 1] - p->cu_seqlens_q[s], kl = cu_k[s + 1] - cu_k[s];
        const size_t n = (size_t)kl * nkv * hs;
        float *K = (float *)pa_xmalloc(sizeof(float) * (n + 1));
        float *V = (float *)pa_xmalloc(sizeof(float) * (n + 1));
        for (size_t e = 0; e < n; e++) {
            K[e] = pa_load_as_float(p->dtype, p->key, (size_t)cu_k[s] * nkv * hs + e);
            V[e] = pa_load_as_float(p->dtype, p->value, (size_t)cu_k[s] * nkv * hs + e);
        }
        pa_pp_plain_seq(K, V, kl, kl - ql, p->query, p->dtype, p->cu_seqlens_q[s], ql, p->num_heads, nkv, hs, p->scale,
                        p->soft_cap, p->alibi_slopes, p->sinks, p->attn_type == PA_ATTN_DECODER, p->sliding_window,
                        abs_v, ref, lse, p->num_q_tokens);
        free(K);
        free(V);
    }
}
static inline void pa_prompt_problem_plain_ex(const pa_prompt_problem *pr, float *ref, int abs_v) {
    pa_prompt_problem_plain_lse(pr, ref, abs_v, NULL);
}
static inline void pa_prompt_problem_plain(const pa_prompt_problem *pr, float *ref) {
    pa_prompt_problem_plain_ex(pr, ref, 0);
}

/* A part of each sequence's keys, for cascade tests (a problem made with
 * k_lens): copies key and value
 * rows [lo[s], hi[s]) of sequence s (counted from its first key row) into
 * packed arrays of their own (*k, *v; the caller frees them); cu ([num_seqs +
 * 1]) gets their offsets, for cu_seqlens_k. */
static inline void pa_prompt_problem_key_part(const pa_prompt_problem *pr, const int *lo, const int *hi, void **k,
                                              void **v, int32_t *cu) {
    const pa_prompt_attention_params *p = &pr->p;
    const size_t esz = pa_dtype_size(p->dtype), row = (size_t)p->num_kv_heads * (size_t)p->head_size * esz;
    int n = 0;
    for (int s = 0; s < p->num_seqs; s++)
        n += hi[s] - lo[s];
    *k = pa_xmalloc(row * (size_t)n + 1);
    *v = pa_xmalloc(row * (size_t)n + 1);
    cu[0] = 0;
    for (int s = 0; s < p->num_seqs; s++) {
        const size_t first = (size_t)(p->cu_seqlens_k[s] + lo[s]), len = (size_t)(hi[s] - lo[s]);
        memcpy((char *)*k + (size_t)cu[s] * row, (const char *)p->key + first * row, len * row);
        memcpy((char *)*v + (size_t)cu[s] * row, (const char *)p->value + first * row, len * row);
        cu[s + 1] = cu[s] + (int32_t)len;
    }
}

#endif
