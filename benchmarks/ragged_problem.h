/* Random ragged problems for the ragged tests and benchmark (host C, header
 * only; not part of the library). A batch of sequences (q_len, kv_len) over a
 * combined-layout page pool (pa_page_pool_deal, problems.h): pages handed out
 * in a shuffled order, every slot past a sequence's kv_len and every unused
 * page NaN, unused page-table columns out of range, output rows pre-filled
 * with a sentinel. The same K/V are kept contiguously per sequence (as the
 * attention sees them: fp8 dequantised and rounded to the query dtype) so a
 * test can compute unpaged attention (pa_plain_attention_row, problems.h). */
#ifndef PA_RAGGED_PROBLEM_H
#define PA_RAGGED_PROBLEM_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pagedattn/pagedattn.h"
#include "problems.h"

typedef struct rg_problem_cfg {
    uint64_t seed;
    pa_dtype q_dtype, cache_dtype;
    int num_seqs;     /* live sequences (device num_seqs) */
    int max_num_seqs; /* 0 = num_seqs */
    int max_tokens;   /* 0 = sum of q_lens */
    int num_q_heads, num_kv_heads, head_size, page_size;
    const int *q_lens, *kv_lens; /* num_seqs entries each */
    int extra_pages;             /* unused (NaN) pages in the pool */
    int extra_cols;              /* extra page-table columns beyond the longest sequence */
    int window;
    float soft_cap, mask_value;
    float q_range; /* queries uniform in [-q_range, q_range); 0 = 2 */
    int skip_logical;
    int with_sinks;      /* attention sinks: pa_sink_logits(num_q_heads, seed) */
    int scales_per_head; /* fp8 caches: a k_scale and v_scale per KV head (pa_kv_head_scales, problems.h) */
} rg_problem_cfg;

typedef struct rg_problem {
    pa_ragged_params p; /* host pointers (num_seqs too) */
    void *q, *out, *cache;
    int32_t *kv_lens, *page_indices, *cu_q_lens, num_seqs;
    float k_scale, v_scale;     /* fp8 caches: the one scale, or the base of the scales per head */
    float *k_scales, *v_scales; /* scales_per_head over fp8: num_kv_heads each (kv.k_scale, kv.v_scale); else NULL */
    size_t q_bytes, cache_bytes;
    int32_t max_tokens, total_rows;
    float **k_logical, **v_logical; /* [s]: [kv_len][kv_heads][head] */
    float *sinks;                   /* with_sinks (a test may point p.sinks at its own) */
} rg_problem;

#define RG_SENTINEL_BYTE 0x5A

static inline float rg_round_to(pa_dtype t, float v) {
    unsigned char b[8];
    pa_store_from_float(t, b, 0, v);
    return pa_load_as_float(t, b, 0);
}

static inline void rg_problem_free(rg_problem *pr) {
    if (!pr)
        return;
    if (pr->k_logical)
        for (int s = 0; s < pr->num_seqs; s++) {
            free(pr->k_logical[s]);
            free(pr->v_logical[s]);
        }
    free(pr->k_logical);
    free(pr->v_logical);
    free(pr->q);
    free(pr->out);
    free(pr->cache);
    free(pr->kv_lens);
    free(pr->page_indices);
    free(pr->cu_q_lens);
    free(pr->sinks);
    free(pr->k_scales);
    free(pr->v_scales);
    free(pr);
}

/* What a ragged problem's tokens are written into (pa_fill_tokens). */
typedef struct rg_fill {
    const rg_problem_cfg *c;
    rg_problem *pr;
    int cols;
} rg_fill;

/* Token pos of sequence s: K, then V, for each (head, dim). */
static inline void rg_fill_token(void *ctx, pa_rng *rng, int s, int pos) {
    const rg_fill *j = (const rg_fill *)ctx;
    const rg_problem_cfg *c = j->c;
    rg_problem *pr = j->pr;
    const int ps = c->page_size, nkv = c->num_kv_heads, hs = c->head_size, fp8 = pa_dtype_is_fp8(c->cache_dtype);
    float *kl = c->skip_logical ? NULL : pr->k_logical[s], *vl = c->skip_logical ? NULL : pr->v_logical[s];
    const int64_t page = pr->page_indices[(size_t)s * j->cols + pos / ps];
    for (int h = 0; h < nkv; h++)
        for (int d = 0; d < hs; d++) {
            /* combined layout written out by hand: [page][tok][2*kvh + {0,1}][d] */
            const size_t base = (((size_t)page * ps + pos % ps) * 2 * nkv + 2 * (size_t)h) * hs + d;
            for (int w = 0; w < 2; w++) {
                const float x = pa_rng_uniform(rng, -1.0f, 1.0f);
                const float *per = w ? pr->v_scales : pr->k_scales; /* KV head h's, or the one */
                const float scale = per ? per[h] : w ? pr->v_scale : pr->k_scale;
                float seen;
                if (fp8) {
                    pa_store_from_float(c->cache_dtype, pr->cache, base + (size_t)w * hs, x / scale);
                    seen = rg_round_to(c->q_dtype,
                                       pa_load_as_float(c->cache_dtype, pr->cache, base + (size_t)w * hs) * scale);
                } else {
                    pa_store_from_float(c->cache_dtype, pr->cache, base + (size_t)w * hs, x);
                    seen = pa_load_as_float(c->cache_dtype, pr->cache, base + (size_t)w * hs);
                }
                if (!c->skip_logical)
                    (w ? vl : kl)[((size_t)pos * nkv + h) * hs + d] = seen;
            }
        }
}

static inline rg_problem *rg_problem_make(const rg_problem_cfg *c) {
    pa_rng rng = pa_rng_make(c->seed);
    rg_problem *pr = (rg_problem *)calloc(1, sizeof *pr);
    if (!pr)
        return NULL;
    const int ps = c->page_size, nkv = c->num_kv_heads, hs = c->head_size, qh = c->num_q_heads;
    const int S = c->max_num_seqs > 0 ? c->max_num_seqs : c->num_seqs;
    int rows = 0, max_kv = 1;
    for (int s = 0; s < c->num_seqs; s++) {
        rows += c->q_lens[s];
        if (c->kv_lens[s] > max_kv)
            max_kv = c->kv_lens[s];
    }
    const int T = c->max_tokens > 0 ? c->max_tokens : (rows > 0 ? rows : 1);
    const int cols = (max_kv + ps - 1) / ps + c->extra_cols;
    const int num_pages = pa_page_pool_blocks(c->num_seqs, c->kv_lens, ps, c->extra_pages);
    pr->num_seqs = c->num_seqs;
    pr->max_tokens = T;
    pr->total_rows = rows;

    const size_t qel = (size_t)T * qh * hs;
    pr->q_bytes = qel * pa_dtype_size(c->q_dtype);
    pr->q = pa_random_buffer(&rng, c->q_dtype, qel, -(c->q_range > 0 ? c->q_range : 2.0f),
                             c->q_range > 0 ? c->q_range : 2.0f);
    pr->out = malloc(pr->q_bytes);
    const size_t cel = (size_t)num_pages * ps * 2 * nkv * hs;
    pr->cache_bytes = cel * pa_dtype_size(c->cache_dtype);
    pr->cache = malloc(pr->cache_bytes);
    pr->kv_lens = (int32_t *)calloc((size_t)S, sizeof(int32_t));
    pr->page_indices = (int32_t *)malloc(sizeof(int32_t) * (size_t)S * cols);
    pr->cu_q_lens = (int32_t *)calloc((size_t)S + 1, sizeof(int32_t));
    if (!c->skip_logical) {
        pr->k_logical = (float **)calloc((size_t)c->num_seqs + 1, sizeof(float *));
        pr->v_logical = (float **)calloc((size_t)c->num_seqs + 1, sizeof(float *));
    }
    if (!pr->q || !pr->out || !pr->cache || !pr->kv_lens || !pr->page_indices || !pr->cu_q_lens ||
        (!c->skip_logical && (!pr->k_logical || !pr->v_logical))) {
        rg_problem_free(pr);
        return NULL;
    }
    memset(pr->out, RG_SENTINEL_BYTE, pr->q_bytes);
    pa_fill_nan(c->cache_dtype, pr->cache, cel);
    /* Pages scattered over the pool; unused columns (and the rows past
     * num_seqs) point far outside it: reading one is a bug. */
    for (size_t i = 0; i < (size_t)S * cols; i++)
        pr->page_indices[i] = num_pages + 1000;
    pa_page_pool_deal(&rng, num_pages, c->num_seqs, c->kv_lens, ps, pr->page_indices, cols, num_pages + 1000);

    const int fp8 = pa_dtype_is_fp8(c->cache_dtype);
    pr->k_scale = fp8 ? 0.5f : 1.0f;
    pr->v_scale = fp8 ? 0.25f : 1.0f;
    if (fp8 && c->scales_per_head) { /* each KV head its own */
        pr->k_scales = pa_kv_head_scales(pr->k_scale, nkv, 0);
        pr->v_scales = pa_kv_head_scales(pr->v_scale, nkv, 1);
    }
    int cu = 0;
    for (int s = 0; s < c->num_seqs; s++) {
        const int L = c->kv_lens[s];
        pr->cu_q_lens[s] = cu;
        cu += c->q_lens[s];
        pr->kv_lens[s] = L;
        if (!c->skip_logical) {
            pr->k_logical[s] = (float *)malloc(sizeof(float) * ((size_t)L * nkv * hs + 1));
            pr->v_logical[s] = (float *)malloc(sizeof(float) * ((size_t)L * nkv * hs + 1));
            if (!pr->k_logical[s] || !pr->v_logical[s]) {
                rg_problem_free(pr);
                return NULL;
            }
        }
    }
    /* Token t of the batch takes draws 2 t H D on (K, then V, for each head
     * and dim). */
    rg_fill fill = {c, pr, cols};
    pa_fill_tokens(c->kv_lens, c->num_seqs, 2 * (int64_t)nkv * hs, rng, rg_fill_token, &fill);
    for (int s = c->num_seqs; s <= S; s++)
        pr->cu_q_lens[s] = cu;

    pa_ragged_params *p = &pr->p;
    memset(p, 0, sizeof *p);
    p->out = pr->out;
    p->q = pr->q;
    p->q_dtype = c->q_dtype;
    p->kv.layout = PA_LAYOUT_COMBINED;
    p->kv.dtype = c->cache_dtype;
    p->kv.key = pr->cache;
    p->kv.num_blocks = num_pages;
    p->kv.block_size = ps;
    p->kv.num_kv_heads = nkv;
    p->kv.head_size = hs;
    p->kv.k_scale = !fp8 ? NULL : pr->k_scales ? pr->k_scales : &pr->k_scale;
    p->kv.v_scale = !fp8 ? NULL : pr->v_scales ? pr->v_scales : &pr->v_scale;
    p->kv.scales_per_head = pr->k_scales != NULL;
    p->kv_lens = pr->kv_lens;
    p->page_indices = pr->page_indices;
    p->pages_per_seq = cols;
    p->cu_q_lens = pr->cu_q_lens;
    p->num_seqs = &pr->num_seqs;
    p->max_num_seqs = S;
    p->max_num_batched_tokens = T;
    p->num_q_heads = qh;
    p->sm_scale = 1.0f / sqrtf((float)hs);
    p->sliding_window = c->window;
    p->soft_cap = c->soft_cap;
    p->mask_value = c->mask_value;
    if (c->with_sinks)
        p->sinks = pr->sinks = pa_sink_logits(qh, c->seed);
    return pr;
}

/* Unpaged attention over the contiguous copies (pa_plain_attention_row, in
 * double, written independently of the reference): for each live row,
 * out[row][h][d] (floats; other rows untouched). Masking as the header states
 * (mask_value added, causal from the row's position kv_len - q_len + i; the
 * head's sink from p->sinks when set, as one more score with no value). With
 * abs_v, sum_k p_k |v_k| instead: the scale of the error that rounding the
 * probabilities to the value dtype can cause in that output element. With
 * lse, each live row's log-sum-exp at lse[h * max_num_batched_tokens + row]
 * (the sink's term included; other floats untouched). */
static inline void rg_problem_plain_lse(const rg_problem *pr, float *ref, int abs_v, float *lse) {
    const pa_ragged_params *p = &pr->p;
    const int qh = p->num_q_heads, hs = p->kv.head_size, nkv = p->kv.num_kv_heads, group = qh / nkv;
    pa_plain_opts o;
    memset(&o, 0, sizeof o);
    o.scale = p->sm_scale;
    o.soft_cap = p->soft_cap;
    o.causal = 1;
    o.window = p->sliding_window;
    o.additive_mask = 1;
    o.mask_value = p->mask_value == 0.0f ? (double)PA_RAGGED_DEFAULT_MASK_VALUE : (double)p->mask_value;
    o.abs_v = abs_v;
    o.has_sink = p->sinks != NULL;
    float *q = (float *)pa_xmalloc(sizeof(float) * (size_t)hs);
    for (int s = 0; s < pr->num_seqs; s++) {
        const int L = pr->kv_lens[s], r0 = pr->cu_q_lens[s], n = pr->cu_q_lens[s + 1] - r0;
        for (int i = 0; i < n; i++)
            for (int h = 0; h < qh; h++) {
                const size_t qoff = ((size_t)(r0 + i) * qh + h) * hs, kvoff = (size_t)(h / group) * hs;
                for (int d = 0; d < hs; d++)
                    q[d] = pa_load_as_float(p->q_dtype, pr->q, qoff + d);
                if (p->sinks)
                    o.sink = (double)p->sinks[h];
                double row_lse = 0.0;
                o.lse = lse ? &row_lse : NULL;
                pa_plain_attention_row(q, pr->k_logical[s] + kvoff, pr->v_logical[s] + kvoff, (size_t)nkv * hs, L, hs,
                                       L - n + i, &o, ref + qoff);
                if (lse)
                    lse[(size_t)h * (size_t)p->max_num_batched_tokens + (size_t)(r0 + i)] = (float)row_lse;
            }
    }
    free(q);
}

static inline void rg_problem_plain(const rg_problem *pr, float *ref) { rg_problem_plain_lse(pr, ref, 0, NULL); }

/* The reference rounds each normalised probability to the value dtype (JAX);
 * the kernels round the unnormalised ones of their online softmax (as
 * FlashAttention does). The two may differ by 2 u sum_k p_k |v_k| on top of
 * the usual tolerance (pa_compare_with_allowance); with random V that sum
 * cancels in the output but not in the bound, and a few bf16 elements near
 * zero need it (seen on an H100: 8 of 385024, up to 0.0039 off). Compares
 * rows [r0, r0 + n) of got (the whole output) with ref (those rows, floats)
 * so; 0 where it cannot (an f32 value dtype, no logical K/V, no memory). */
static inline int rg_problem_within_p_rounding(const rg_problem *pr, const void *got, int r0, int n, const float *ref,
                                               pa_tolerance tol, pa_compare_result *res) {
    const pa_ragged_params *p = &pr->p;
    const double u = pa_prob_rounding_unit(p->q_dtype);
    if (u == 0.0 || !pr->k_logical)
        return 0;
    const size_t row = (size_t)p->num_q_heads * p->kv.head_size, es = pa_dtype_size(p->q_dtype);
    float *mag = (float *)calloc((size_t)pr->total_rows * row + 1, sizeof(float));
    if (!mag)
        return 0;
    rg_problem_plain_lse(pr, mag, 1, NULL);
    const int ok = pa_compare_with_allowance((const unsigned char *)got + (size_t)r0 * row * es, p->q_dtype, ref,
                                             mag + (size_t)r0 * row, 2.0 * u, (int64_t)n * (int64_t)row, tol, res);
    free(mag);
    return ok;
}

#endif
