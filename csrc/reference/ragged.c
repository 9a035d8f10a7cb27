/* CPU reference: ragged paged attention over the combined K/V cache.
 *
 * Written for clarity, following JAX's ref_ragged_paged_attention step by
 * step, one (sequence, query head, query row) at a time:
 *   1. k, v of the sequence's first kv_len tokens through page_indices; an fp8
 *      value is dequantised ((float)stored * scale) and rounded to q_dtype,
 *      as JAX's astype(q.dtype) after the scale;
 *   2. x = sm_scale * q.k in f64; soft cap; mask_value ADDED to masked keys;
 *   3. softmax over all kv_len keys in f64 (max subtracted), the head's sink
 *      (when sinks is given) one more term of the denominator, with no value;
 *   4. each probability rounded to the value dtype (q_dtype), as JAX's
 *      softmax(...).astype(v.dtype) does before the P.V product;
 *   5. out = sum p * v in f64, rounded to q_dtype;
 *   6. with lse, the row's log-sum-exp over its keys and the sink (step 3's
 *      denominator, taken where neither term overflows).
 * This is the specification the CUDA kernels are tested against. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"
#include "kv_index.h"
#include "ragged_internal.h"

/* Rounds v to dtype t and back (what storing in a t-typed array does). */
static float round_to(pa_dtype t, float v) {
    unsigned char buf[8];
    pa_store_from_float(t, buf, 0, v);
    return pa_load_as_float(t, buf, 0);
}

/* Gathers the sequence's first kv_len tokens into contiguous k, v
 * [kv_len][kv_heads][head] as the attention sees them (JAX: kv_pages[indices]
 * [:, :, 0::2] and [1::2], reshaped, [:kv_len]; fp8 dequantised and rounded to
 * the query dtype). */
static void gather_kv(const pa_ragged_params *p, const pa_kv_geom *g, const int32_t *pages, int32_t kv_len, float *k,
                      float *v) {
    const pa_kv_cache *kv = &p->kv;
    const int fp8 = pa_dtype_is_fp8(kv->dtype);
    for (int32_t pos = 0; pos < kv_len; pos++) {
        const int64_t blk = pages[pos / kv->block_size];
        const int tok = pos % kv->block_size;
        for (int h = 0; h < kv->num_kv_heads; h++)
            for (int d = 0; d < kv->head_size; d++) {
                const size_t i = ((size_t)pos * kv->num_kv_heads + h) * kv->head_size + d;
                k[i] = pa_load_as_float(kv->dtype, kv->key, (size_t)pa_kv_key_offset(g, blk, h, tok, d));
                v[i] = pa_load_as_float(kv->dtype, kv->key, (size_t)pa_kv_value_offset(g, blk, h, tok, d));
                if (fp8) {
                    k[i] = round_to(p->q_dtype, k[i] * pa_host_kv_scale(kv, kv->k_scale, h));
                    v[i] = round_to(p->q_dtype, v[i] * pa_host_kv_scale(kv, kv->v_scale, h));
                }
            }
    }
}

/* Host-side versions of the checks the kernels make on the device; here a bad
 * value is an error naming the sequence, raised before anything is written. */
static pa_status check_batch(const pa_ragged_params *p, int32_t ns) {
    const pa_kv_cache *kv = &p->kv;
    const int64_t max_kv = (int64_t)p->pages_per_seq * kv->block_size;
    PA_REQUIRE(ns >= 0 && ns <= p->max_num_seqs, "ragged reference: num_seqs %d outside 0..max_num_seqs %d", ns,
               p->max_num_seqs);
    if (ns > 0) {
        PA_TRY(pa_check_host_kv_scales("ragged reference", kv));
        PA_TRY(pa_check_host_sinks("ragged reference", p->sinks, p->num_q_heads));
    }
    for (int32_t s = 0; s < ns; s++) {
        const int32_t q0 = p->cu_q_lens[s], q1 = p->cu_q_lens[s + 1], kv_len = p->kv_lens[s];
        PA_REQUIRE(q0 >= 0 && q1 >= q0 && q1 <= p->max_num_batched_tokens,
                   "ragged reference: sequence %d: cu_q_lens[%d..%d] = %d..%d must be non-decreasing within 0..%d", s,
                   s, s + 1, q0, q1, p->max_num_batched_tokens);
        PA_REQUIRE(q1 - q0 <= kv_len, "ragged reference: sequence %d: q_len %d > kv_len %d", s, q1 - q0, kv_len);
        PA_REQUIRE(kv_len <= max_kv, "ragged reference: sequence %d: kv_len %d > pages_per_seq %d * page_size %d", s,
                   kv_len, p->pages_per_seq, kv->block_size);
        const int32_t *pages = p->page_indices + (int64_t)s * p->pages_per_seq;
        for (int b = 0, nb = (int)pa_blocks_for(kv_len, kv->block_size); b < nb; b++)
            PA_REQUIRE(pages[b] >= 0 && pages[b] < kv->num_blocks,
                       "ragged reference: sequence %d: page_indices[%d][%d] = %d outside 0..%d", s, s, b, pages[b],
                       kv->num_blocks - 1);
    }
    return PA_SUCCESS;
}

pa_status pa_ref_ragged_paged_attention(const pa_ragged_params *p) {
    pa_lse_strides ls;
    PA_TRY(pa_rg_validate(p, &ls));
    if (pa_rg_empty(p)) {
        pa_clear_error();
        return PA_SUCCESS;
    }
    const int32_t ns = *p->num_seqs;
    PA_TRY(check_batch(p, ns));

    const pa_kv_cache *kv = &p->kv;
    const int hs = kv->head_size, qh = p->num_q_heads;
    const int group = qh / kv->num_kv_heads;
    const int nkv = kv->num_kv_heads;
    const double mask = (double)pa_rg_mask_value(p);
    const pa_kv_geom g =
        pa_kv_geom_make(kv->layout, (int32_t)pa_dtype_size(kv->dtype), kv->block_size, kv->num_kv_heads, hs, 0, 0, 0);

    int32_t max_kv = 1;
    for (int32_t s = 0; s < ns; s++)
        if (p->kv_lens[s] > max_kv)
            max_kv = p->kv_lens[s];
    const size_t kv_elems = (size_t)max_kv * (size_t)nkv * (size_t)hs;
    double *logits = malloc(sizeof(double) * (size_t)max_kv);
    double *acc = malloc(sizeof(double) * (size_t)hs);
    double *q = malloc(sizeof(double) * (size_t)hs);
    float *kbuf = malloc(sizeof(float) * kv_elems);
    float *vbuf = malloc(sizeof(float) * kv_elems);
    if (!logits || !acc || !q || !kbuf || !vbuf) {
        free(logits);
        free(acc);
        free(q);
        free(kbuf);
        free(vbuf);
        return pa_fail(PA_ERR_INTERNAL, "ragged reference: out of host memory");
    }

    for (int32_t s = 0; s < ns; s++) {
        const int32_t q0 = p->cu_q_lens[s], q_len = p->cu_q_lens[s + 1] - q0, kv_len = p->kv_lens[s];
        if (q_len == 0)
            continue;
        gather_kv(p, &g, p->page_indices + (int64_t)s * p->pages_per_seq, kv_len, kbuf, vbuf);
        for (int32_t i = 0; i < q_len; i++) {
            const int32_t q_pos = kv_len - q_len + i;
            for (int h = 0; h < qh; h++) {
                const int kvh = h / group;
                const int64_t row = ((int64_t)(q0 + i) * qh + h) * hs;
                for (int d = 0; d < hs; d++)
                    q[d] = pa_load_as_float(p->q_dtype, p->q, (size_t)(row + d));

                double max_logit = -INFINITY;
                pa_ref_dots(q, kbuf + (size_t)kvh * hs, (size_t)nkv * hs, kv_len, hs, logits);
                for (int32_t k = 0; k < kv_len; k++) {
                    double x = (double)p->sm_scale * logits[k];
                    if (p->soft_cap > 0.0f)
                        x = (double)p->soft_cap * tanh(x / (double)p->soft_cap);
                    const int masked = k > q_pos || (p->sliding_window > 0 && q_pos - p->sliding_window >= k);
                    if (masked)
                        x += mask;
                    logits[k] = x;
                    if (x > max_logit)
                        max_logit = x;
                }
                double sum = 0.0;
                for (int32_t k = 0; k < kv_len; k++) {
                    logits[k] = exp(logits[k] - max_logit);
                    sum += logits[k];
                }
                /* 6. the row's log-sum-exp: the keys', then the sink's term
                 * added at the larger of the two (a sink far above the
                 * logits would overflow exp() at the keys' max) */
                if (p->lse)
                    p->lse[h * ls.head + (q0 + i) * ls.token] =
                        (float)pa_ref_lse_with_sink(max_logit + log(sum), p->sinks ? p->sinks + h : NULL);
                /* The sink: appended as one more logit after the mask (JAX
                 * concatenates it before the softmax and drops its column). */
                if (p->sinks)
                    sum += exp((double)p->sinks[h] - max_logit);
                for (int d = 0; d < hs; d++)
                    acc[d] = 0.0;
                for (int32_t k = 0; k < kv_len; k++) {
                    const double pk = round_to(p->q_dtype, (float)(logits[k] / sum));
                    const float *vr = vbuf + ((size_t)k * nkv + kvh) * hs;
                    for (int d = 0; d < hs; d++)
                        acc[d] += pk * (double)vr[d];
                }
                for (int d = 0; d < hs; d++)
                    pa_store_from_float(p->q_dtype, p->out, (size_t)(row + d), (float)acc[d]);
            }
        }
    }
    free(logits);
    free(acc);
    free(q);
    free(kbuf);
    free(vbuf);
    pa_clear_error();
    return PA_SUCCESS;
}
