/* CPU reference: context (prefix) attention and varlen prompt attention.
 *
 * Written for clarity, not speed. For every sequence the keys and values it can
 * see are first gathered into plain float arrays [k_len][kv_heads][head]
 * (context tokens dequantised from the paged cache, new tokens from the packed
 * tensors); then every (query token, head) row computes its logits in double,
 * applies soft cap, ALiBi and the masks of include/pagedattn/prefill.h, and
 * takes a softmax with the row max subtracted (and the head's sink in the
 * denominator). This is the specification the kernels are tested against. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"
#include "kv_index.h"
#include "prefill_internal.h"

/* One query row over k_len gathered keys. q_pos = k_len - q_len + i. */
typedef struct row_problem {
    const float *K, *V; /* [k_len][nkv][hs] */
    int k_len, nkv, kvh, hs;
    int q_pos, causal, window;
    float scale, soft_cap;
    double slope; /* 0 without ALiBi */
    int alibi;
    const float *sink; /* the head's sink logit, or NULL */
} row_problem;

/* Writes the row's output to out and returns its log-sum-exp (prefill.h):
 * log(e^sink + sum of e^x over the visible keys); the sink alone where no key
 * is visible; -inf with neither. */
static double attend_row(const row_problem *r, const double *q, double *logits, double *acc, double *out) {
    /* The keys the masks leave are lo..hi: not after the query (causal), and
     * fewer than `window` positions before it, or without the causal mask
     * fewer than `window` positions away on either side (prefill.h). */
    const int64_t qp = r->q_pos, w = r->window;
    int64_t lo64 = 0, hi64 = r->k_len - 1;
    if (w > 0 && qp - w + 1 > lo64)
        lo64 = qp - w + 1;
    if (w > 0 && !r->causal && qp + w - 1 < hi64)
        hi64 = qp + w - 1;
    if (r->causal && qp < hi64)
        hi64 = qp;
    const int lo = (int)(lo64 < r->k_len ? lo64 : r->k_len), hi = (int)(hi64 > -1 ? hi64 : -1);
    if (hi >= lo)
        pa_ref_dots(q, r->K + ((size_t)lo * r->nkv + r->kvh) * r->hs, (size_t)r->nkv * r->hs, hi - lo + 1, r->hs,
                    logits + lo);
    double mx = -INFINITY;
    for (int j = 0; j < r->k_len; j++) {
        if (j < lo || j > hi) {
            logits[j] = -INFINITY;
            continue;
        }
        double x = (double)r->scale * logits[j];
        if (r->soft_cap > 0.0f)
            x = r->soft_cap * tanh(x / r->soft_cap);
        if (r->alibi) /* slope * (j - q_pos) wherever the causal mask leaves j */
            x -= r->slope * fabs((double)j - (double)r->q_pos);
        logits[j] = x;
        if (x > mx)
            mx = x;
    }
    for (int d = 0; d < r->hs; d++)
        acc[d] = 0.0;
    double sum = 0.0;
    for (int j = 0; j < r->k_len; j++) {
        if (logits[j] == -INFINITY)
            continue;
        double w = exp(logits[j] - mx);
        sum += w;
        const float *v = r->V + ((size_t)j * r->nkv + r->kvh) * r->hs;
        for (int d = 0; d < r->hs; d++)
            acc[d] += w * (double)v[d];
    }
    const double lse = pa_ref_lse_with_sink(sum > 0.0 ? mx + log(sum) : -INFINITY, r->sink);
    /* The sink: one more term of the denominator, with no value. */
    if (r->sink && sum > 0.0)
        sum += exp((double)*r->sink - mx);
    /* A row that sees no key gives zeros (see prefill.h). */
    for (int d = 0; d < r->hs; d++)
        out[d] = sum > 0.0 ? acc[d] / sum : 0.0;
    return lse;
}

/* Scratch for one sequence: gathered K/V and per-row buffers. */
typedef struct scratch {
    float *K, *V;
    double *q, *logits, *acc, *out;
} scratch;

static void scratch_free(scratch *s) {
    free(s->K);
    free(s->V);
    free(s->q);
    free(s->logits);
    free(s->acc);
    free(s->out);
}

static pa_status scratch_alloc(scratch *s, int64_t max_k, int nkv, int hs) {
    size_t kv = (size_t)(max_k > 0 ? max_k : 1) * (size_t)nkv * (size_t)hs;
    s->K = malloc(sizeof(float) * kv);
    s->V = malloc(sizeof(float) * kv);
    s->q = malloc(sizeof(double) * (size_t)hs);
    s->logits = malloc(sizeof(double) * (size_t)(max_k > 0 ? max_k : 1));
    s->acc = malloc(sizeof(double) * (size_t)hs);
    s->out = malloc(sizeof(double) * (size_t)hs);
    if (!s->K || !s->V || !s->q || !s->logits || !s->acc || !s->out) {
        scratch_free(s);
        return pa_fail(PA_ERR_INTERNAL, "prefill reference: out of host memory");
    }
    return PA_SUCCESS;
}

/* Every (token, head) row of one sequence over the gathered keys; with `lse`
 * (row (h, t) at h * ls.head + t * ls.token) each row's log-sum-exp too. */
static void attend_sequence(scratch *sc, row_problem *rp, int q_len, int64_t q_row0, const void *query,
                            int64_t q_stride, pa_dtype dt, int num_heads, const float *alibi, const float *sinks,
                            void *out, float *lse, pa_lse_strides ls) {
    const int hs = rp->hs, group = num_heads / rp->nkv;
    for (int i = 0; i < q_len; i++) {
        rp->q_pos = rp->k_len - q_len + i;
        for (int h = 0; h < num_heads; h++) {
            rp->kvh = h / group;
            rp->alibi = alibi != NULL;
            rp->slope = alibi ? (double)alibi[h] : 0.0;
            rp->sink = sinks ? sinks + h : NULL;
            for (int d = 0; d < hs; d++)
                sc->q[d] = pa_load_as_float(dt, query, (size_t)((q_row0 + i) * q_stride + (int64_t)h * hs + d));
            const double row_lse = attend_row(rp, sc->q, sc->logits, sc->acc, sc->out);
            if (lse)
                lse[(int64_t)h * ls.head + (q_row0 + i) * ls.token] = (float)row_lse;
            for (int d = 0; d < hs; d++)
                pa_store_from_float(dt, out, (size_t)(((q_row0 + i) * num_heads + h) * hs + d), (float)sc->out[d]);
        }
    }
}

/* Copies n packed rows (row0.., stride) of [nkv][hs] into dst as floats. */
static void gather_packed(float *dst, const void *src, pa_dtype dt, int64_t row0, int64_t n, int64_t stride, int nkv,
                          int hs) {
    for (int64_t t = 0; t < n; t++)
        for (int h = 0; h < nkv; h++)
            for (int d = 0; d < hs; d++)
                dst[((size_t)t * nkv + h) * hs + d] =
                    pa_load_as_float(dt, src, (size_t)((row0 + t) * stride + (int64_t)h * hs + d));
}

/* ---- context attention ------------------------------------------------------------ */

static pa_status check_context_data(const pa_context_attention_params *p) {
    /* Host values first: pa_ref_mixed_attention relies on this for its decode
     * part too (same cache and slopes) before the context part writes. */
    PA_TRY(pa_check_host_kv_scales("context_attention", &p->kv));
    PA_TRY(pa_check_host_alibi("context_attention", p->alibi_slopes, p->num_heads));
    PA_TRY(pa_check_host_sinks("context_attention", p->sinks, p->num_heads));
    const int32_t *qsl = p->query_start_loc;
    PA_REQUIRE(qsl[0] >= 0, "context_attention: query_start_loc[0] = %d < 0", qsl[0]);
    for (int s = 0; s < p->num_seqs; s++) {
        PA_REQUIRE(qsl[s + 1] >= qsl[s], "context_attention: query_start_loc decreases at %d (%d -> %d)", s, qsl[s],
                   qsl[s + 1]);
        PA_REQUIRE(qsl[s + 1] <= p->num_tokens, "context_attention: query_start_loc[%d] = %d > num_tokens %d", s + 1,
                   qsl[s + 1], p->num_tokens);
        /* (after the two checks: both ends in [0, num_tokens], so the difference fits) */
        const int q_len = qsl[s + 1] - qsl[s], L = p->seq_lens[s];
        PA_REQUIRE(q_len <= p->max_query_len, "context_attention: sequence %d has query_len %d > max_query_len %d", s,
                   q_len, p->max_query_len);
        const int min_len = p->cache_only ? 0 : q_len; /* cache_only: any number of queries */
        PA_REQUIRE(L >= min_len && L <= p->max_seq_len,
                   "context_attention: seq_lens[%d] = %d outside %d..max_seq_len %d", s, L, min_len, p->max_seq_len);
        const int ctx = p->cache_only ? L : L - q_len, bs = p->kv.block_size;
        for (int b = 0, nb = (int)pa_blocks_for(ctx, bs); b < nb; b++) {
            int32_t blk = p->block_tables[(int64_t)s * p->block_table_stride + b];
            PA_REQUIRE(blk >= 0 && blk < p->kv.num_blocks, "context_attention: block_tables[%d][%d] = %d outside 0..%d",
                       s, b, blk, p->kv.num_blocks - 1);
        }
    }
    return PA_SUCCESS;
}

pa_status pa_ref_context_attention(const pa_context_attention_params *p) {
    PA_TRY(pa_context_attention_validate(p));
    if (p->num_seqs == 0) {
        pa_clear_error();
        return PA_SUCCESS;
    }
    pa_lse_strides ls;
    PA_TRY(
        pa_lse_layout("context reference", p->num_heads, p->num_tokens, p->lse_head_stride, p->lse_token_stride, &ls));
    PA_TRY(check_context_data(p));
    const pa_kv_cache *kv = &p->kv;
    const int hs = kv->head_size, nkv = kv->num_kv_heads, bs = kv->block_size;
    const int64_t q_stride = p->q_stride ? p->q_stride : (int64_t)p->num_heads * hs;
    const int64_t k_stride = p->k_stride ? p->k_stride : (int64_t)nkv * hs;
    const int64_t v_stride = p->v_stride ? p->v_stride : (int64_t)nkv * hs;
    const int fp8 = pa_dtype_is_fp8(kv->dtype);
    const pa_kv_geom g = pa_kv_geom_make(kv->layout, (int32_t)pa_dtype_size(kv->dtype), bs, nkv, hs, kv->block_stride,
                                         kv->page_stride, kv->head_stride);
    /* Scratch for the longest seq_len present (checked <= max_seq_len), not
     * for the max_seq_len bound itself, which may be far larger. */
    int64_t max_len = 1;
    for (int s = 0; s < p->num_seqs; s++)
        max_len = p->seq_lens[s] > max_len ? p->seq_lens[s] : max_len;
    scratch sc;
    PA_TRY(scratch_alloc(&sc, max_len, nkv, hs));
    for (int s = 0; s < p->num_seqs; s++) {
        const int64_t q0 = p->query_start_loc[s];
        const int q_len = (int)(p->query_start_loc[s + 1] - q0), L = p->seq_lens[s];
        const int ctx = p->cache_only ? L : L - q_len;
        const int32_t *table = p->block_tables + (int64_t)s * p->block_table_stride;
        /* context keys from the cache (no causal mask among them: every query is later) */
        for (int j = 0; j < ctx; j++) {
            const int64_t blk = table[j / bs];
            for (int h = 0; h < nkv; h++)
                for (int d = 0; d < hs; d++) {
                    size_t li = ((size_t)j * nkv + h) * hs + d;
                    sc.K[li] = pa_load_as_float(kv->dtype, kv->key, (size_t)pa_kv_key_offset(&g, blk, h, j % bs, d));
                    sc.V[li] =
                        pa_load_as_float(kv->dtype, kv->value, (size_t)pa_kv_value_offset(&g, blk, h, j % bs, d));
                    if (fp8) {
                        sc.K[li] *= pa_host_kv_scale(kv, kv->k_scale, h);
                        sc.V[li] *= pa_host_kv_scale(kv, kv->v_scale, h);
                    }
                }
        }
        /* the new tokens' own K/V, causal among themselves (none with cache_only: no mask) */
        if (!p->cache_only) {
            gather_packed(sc.K + (size_t)ctx * nkv * hs, p->key, p->q_dtype, q0, q_len, k_stride, nkv, hs);
            gather_packed(sc.V + (size_t)ctx * nkv * hs, p->value, p->q_dtype, q0, q_len, v_stride, nkv, hs);
        }
        row_problem rp = {.K = sc.K,
                          .V = sc.V,
                          .k_len = L,
                          .nkv = nkv,
                          .hs = hs,
                          .causal = !p->cache_only,
                          .window = p->sliding_window,
                          .scale = p->scale,
                          .soft_cap = p->soft_cap};
        attend_sequence(&sc, &rp, q_len, q0, p->query, q_stride, p->q_dtype, p->num_heads, p->alibi_slopes, p->sinks,
                        p->out, p->lse, ls);
    }
    scratch_free(&sc);
    pa_clear_error();
    return PA_SUCCESS;
}

/* ---- varlen prompt attention --------------------------------------------------------- */

static pa_status check_cu(const char *name, const int32_t *cu, int n, int32_t tokens, int32_t max_len) {
    PA_REQUIRE(cu[0] >= 0, "prompt_attention: %s[0] = %d < 0", name, cu[0]);
    for (int s = 0; s < n; s++) {
        PA_REQUIRE(cu[s + 1] >= cu[s], "prompt_attention: %s decreases at %d (%d -> %d)", name, s, cu[s], cu[s + 1]);
        PA_REQUIRE(cu[s + 1] <= tokens, "prompt_attention: %s[%d] = %d > its token count %d", name, s + 1, cu[s + 1],
                   tokens);
        PA_REQUIRE(cu[s + 1] - cu[s] <= max_len, "prompt_attention: %s: sequence %d has length %d > the bound %d", name,
                   s, cu[s + 1] - cu[s], max_len);
    }
    return PA_SUCCESS;
}

pa_status pa_ref_prompt_attention(const pa_prompt_attention_params *p) {
    PA_TRY(pa_prompt_attention_validate(p));
    if (p->num_seqs == 0) {
        pa_clear_error();
        return PA_SUCCESS;
    }
    pa_lse_strides ls;
    PA_TRY(
        pa_lse_layout("prompt reference", p->num_heads, p->num_q_tokens, p->lse_head_stride, p->lse_token_stride, &ls));
    const int32_t *cu_k = p->cu_seqlens_k ? p->cu_seqlens_k : p->cu_seqlens_q;
    const int32_t num_k = p->cu_seqlens_k ? p->num_k_tokens : p->num_q_tokens;
    const int32_t max_k = p->cu_seqlens_k ? p->max_seqlen_k : p->max_seqlen_q;
    PA_TRY(check_cu("cu_seqlens_q", p->cu_seqlens_q, p->num_seqs, p->num_q_tokens, p->max_seqlen_q));
    PA_TRY(check_cu("cu_seqlens_k", cu_k, p->num_seqs, num_k, max_k));
    PA_TRY(pa_check_host_alibi("prompt_attention", p->alibi_slopes, p->num_heads));
    PA_TRY(pa_check_host_sinks("prompt_attention", p->sinks, p->num_heads));
    const int hs = p->head_size, nkv = p->num_kv_heads;
    const int64_t q_stride = p->q_stride ? p->q_stride : (int64_t)p->num_heads * hs;
    const int64_t k_stride = p->k_stride ? p->k_stride : (int64_t)nkv * hs;
    const int64_t v_stride = p->v_stride ? p->v_stride : (int64_t)nkv * hs;
    /* Scratch for the longest key run present (checked <= max_k), not for the
     * bound itself, which may be far larger (as in the context reference). */
    int64_t longest = 1;
    for (int s = 0; s < p->num_seqs; s++)
        longest = cu_k[s + 1] - cu_k[s] > longest ? cu_k[s + 1] - cu_k[s] : longest;
    scratch sc;
    PA_TRY(scratch_alloc(&sc, longest, nkv, hs));
    for (int s = 0; s < p->num_seqs; s++) {
        const int64_t q0 = p->cu_seqlens_q[s], k0 = cu_k[s];
        const int q_len = (int)(p->cu_seqlens_q[s + 1] - q0), k_len = (int)(cu_k[s + 1] - k0);
        gather_packed(sc.K, p->key, p->dtype, k0, k_len, k_stride, nkv, hs);
        gather_packed(sc.V, p->value, p->dtype, k0, k_len, v_stride, nkv, hs);
        row_problem rp = {.K = sc.K,
                          .V = sc.V,
                          .k_len = k_len,
                          .nkv = nkv,
                          .hs = hs,
                          .causal = p->attn_type == PA_ATTN_DECODER,
                          .window = p->sliding_window,
                          .scale = p->scale,
                          .soft_cap = p->soft_cap};
        attend_sequence(&sc, &rp, q_len, q0, p->query, q_stride, p->dtype, p->num_heads, p->alibi_slopes, p->sinks,
                        p->out, p->lse, ls);
    }
    scratch_free(&sc);
    pa_clear_error();
    return PA_SUCCESS;
}

/* ---- mixed batch ---------------------------------------------------------------------- */

pa_status pa_ref_mixed_attention(const pa_mixed_attention_params *p) {
    PA_TRY(pa_mixed_attention_validate(p));
    pa_context_attention_params pf;
    pa_decode_params dc;
    (void)pa_mixed_split(p, &pf, &dc); /* validated above */
    /* Check both parts' data before either writes. Errors name the caller's
     * fields and rows (the decode part's rows follow the prefills'). */
    pa_status st = pf.num_seqs > 0 ? check_context_data(&pf) : PA_SUCCESS;
    if (st != PA_SUCCESS)
        return pa_error_context(st, PA_MIXED_PREFILL_PART);
    int longest = 0;
    PA_TRY(pa_ref_decode_check_data(&dc, "mixed_attention", p->num_prefills, "max_decode_seq_len", &longest));
    if (pf.num_seqs > 0)
        PA_TRY(pa_ref_context_attention(&pf));
    st = dc.num_seqs > 0 ? pa_ref_paged_decode(&dc) : PA_SUCCESS;
    if (st != PA_SUCCESS) /* its host values (scales, slopes, sinks) when there are no prefills */
        return pa_error_context(st, PA_MIXED_DECODE_PART);
    pa_clear_error();
    return PA_SUCCESS;
}
