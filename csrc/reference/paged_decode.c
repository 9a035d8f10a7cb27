/* CPU reference: decode attention over a paged KV cache.
 *
 * Written for clarity, not speed: for every (sequence, KV head) gather the
 * keys and values the sequence's tokens hold, through its block table, into
 * plain float rows (dequantised with the cache's scales); then for every query
 * head of the group compute each logit in double, apply soft cap, ALiBi and the
 * masks, softmax with the row max subtracted (and the head's sink in the
 * denominator), and sum the values. This is the specification the CUDA kernels
 * are tested against. */
#include <math.h>
#include <stdlib.h>

#include "internal.h"
#include "kv_index.h"
#include "prefill_internal.h" /* pa_ref_decode_check_data, shared with the mixed reference */

/* vLLM's block-sparse rule: is the KV block holding token `pos` attended? */
static int blocksparse_keeps(const pa_decode_params *p, int head, int kv_head, int seq_len, int pos) {
    if (p->bs_vert_stride <= 1)
        return 1;
    /* 64-bit: pa_decode_validate bounds the offset to int32, so these are exact */
    const int64_t q_block = (seq_len - 1) / p->bs_block_size;
    const int64_t k_block = pos / p->bs_block_size;
    int64_t offset;
    if (p->bs_head_sliding_step >= 0)
        offset = ((int64_t)p->tp_rank * p->num_heads + head) * p->bs_head_sliding_step + 1;
    else
        offset = ((int64_t)p->tp_rank * p->kv.num_kv_heads + kv_head) * -(int64_t)p->bs_head_sliding_step + 1;
    int is_remote = (k_block + offset) % p->bs_vert_stride == 0;
    int is_local = k_block > q_block - p->bs_local_blocks;
    return is_remote || is_local;
}

pa_status pa_ref_decode_check_data(const pa_decode_params *p, const char *who, int row0, const char *max_name,
                                   int *max_len) {
    const int bs = p->kv.block_size;
    int longest = 1;
    for (int s = 0; s < p->num_seqs; s++) {
        const int L = p->seq_lens[s];
        PA_REQUIRE(L >= 1 && L <= p->max_seq_len, "%s: seq_lens[%d] = %d outside 1..%s %d", who, row0 + s, L, max_name,
                   p->max_seq_len);
        longest = L > longest ? L : longest;
        /* Blocks wholly before the sliding window are never read (the GPU
         * entries never read them either), so their ids are not checked. */
        const int first = p->sliding_window > 0 && L > p->sliding_window ? L - p->sliding_window : 0;
        for (int b = first / bs, nb = (int)pa_blocks_for(L, bs); b < nb; b++) {
            const int32_t blk = p->block_tables[(int64_t)s * p->block_table_stride + b];
            PA_REQUIRE(blk >= 0 && blk < p->kv.num_blocks, "%s: block_tables[%d][%d] = %d outside 0..%d", who, row0 + s,
                       b, blk, p->kv.num_blocks - 1);
        }
    }
    *max_len = longest;
    return PA_SUCCESS;
}

pa_status pa_ref_paged_decode(const pa_decode_params *p) {
    PA_TRY(pa_decode_validate(p));
    const pa_kv_cache *kv = &p->kv;
    if (p->num_seqs > 0) {
        PA_TRY(pa_check_host_kv_scales("decode reference", kv));
        PA_TRY(pa_check_host_alibi("decode reference", p->alibi_slopes, p->num_heads));
        PA_TRY(pa_check_host_sinks("decode reference", p->sinks, p->num_heads));
    }
    const int hs = kv->head_size, bs = kv->block_size;
    const int group = p->num_heads / kv->num_kv_heads;
    const int64_t q_stride = p->q_stride ? p->q_stride : (int64_t)p->num_heads * hs;
    const int fp8 = pa_dtype_is_fp8(kv->dtype);
    pa_lse_strides ls; /* (head h, sequence s) at h * ls.head + s * ls.token (decode.h) */
    PA_TRY(pa_lse_layout("decode reference", p->num_heads, p->num_seqs, p->lse_head_stride, p->lse_token_stride, &ls));
    pa_kv_geom g = pa_kv_geom_make(kv->layout, (int32_t)pa_dtype_size(kv->dtype), bs, kv->num_kv_heads, hs,
                                   kv->block_stride, kv->page_stride, kv->head_stride);

    /* Check every seq_len and block id before writing anything. The scratch
     * is sized by the longest seq_len, not by the max_seq_len bound (which can
     * be far larger, or come with no sequence at all). */
    int max_len = 1;
    PA_TRY(pa_ref_decode_check_data(p, "decode", 0, "max_seq_len", &max_len));

    double *logits = malloc(sizeof(double) * (size_t)max_len);
    double *acc = malloc(sizeof(double) * (size_t)hs);
    double *q = malloc(sizeof(double) * (size_t)hs);
    float *K = malloc(sizeof(float) * (size_t)max_len * (size_t)hs); /* [pos][hs] of one KV head */
    float *V = malloc(sizeof(float) * (size_t)max_len * (size_t)hs);
    if (!logits || !acc || !q || !K || !V) {
        free(logits);
        free(acc);
        free(q);
        free(K);
        free(V);
        return pa_fail(PA_ERR_INTERNAL, "decode reference: out of host memory");
    }

    for (int s = 0; s < p->num_seqs; s++) {
        const int L = p->seq_lens[s];
        const int32_t *table = p->block_tables + (int64_t)s * p->block_table_stride;
        /* Outside the sliding window no head reads a key or value. */
        const int first = p->sliding_window > 0 && L > p->sliding_window ? L - p->sliding_window : 0;
        for (int h = 0; h < p->num_heads; h++) {
            const int kvh = h / group;
            if (h % group == 0)
                for (int pos = first; pos < L; pos++) {
                    const int64_t blk = table[pos / bs];
                    for (int d = 0; d < hs; d++) {
                        float k =
                            pa_load_as_float(kv->dtype, kv->key, (size_t)pa_kv_key_offset(&g, blk, kvh, pos % bs, d));
                        float v = pa_load_as_float(kv->dtype, kv->value,
                                                   (size_t)pa_kv_value_offset(&g, blk, kvh, pos % bs, d));
                        if (fp8) {
                            k *= pa_host_kv_scale(kv, kv->k_scale, kvh);
                            v *= pa_host_kv_scale(kv, kv->v_scale, kvh);
                        }
                        K[(size_t)pos * hs + d] = k;
                        V[(size_t)pos * hs + d] = v;
                    }
                }
            for (int d = 0; d < hs; d++)
                q[d] = pa_load_as_float(p->q_dtype, p->query, (size_t)(s * q_stride + (int64_t)h * hs + d));

            double max_logit = -INFINITY;
            pa_ref_dots(q, K + (size_t)first * hs, (size_t)hs, L - first, hs, logits + first);
            for (int pos = 0; pos < L; pos++) {
                int masked = pos < first || !blocksparse_keeps(p, h, kvh, L, pos);
                if (masked) {
                    logits[pos] = -INFINITY;
                    continue;
                }
                double x = (double)p->scale * logits[pos];
                if (p->soft_cap > 0.0f)
                    x = p->soft_cap * tanh(x / p->soft_cap);
                if (p->alibi_slopes)
                    x += (double)p->alibi_slopes[h] * (double)(pos - L + 1);
                logits[pos] = x;
                if (x > max_logit)
                    max_logit = x;
            }

            double sum = 0.0;
            for (int d = 0; d < hs; d++)
                acc[d] = 0.0;
            for (int pos = 0; pos < L; pos++) {
                if (logits[pos] == -INFINITY)
                    continue;
                double w = exp(logits[pos] - max_logit);
                sum += w;
                const float *v = V + (size_t)pos * hs;
                for (int d = 0; d < hs; d++)
                    acc[d] += w * (double)v[d];
            }
            /* log(e^sink + sum_j e^x_j): no key gives the sink, or -inf without one (decode.h);
             * a NaN sum stays NaN, as in the kernels */
            if (p->lse)
                p->lse[(int64_t)h * ls.head + (int64_t)s * ls.token] = (float)pa_ref_lse_with_sink(
                    sum == 0.0 ? -INFINITY : max_logit + log(sum), p->sinks ? p->sinks + h : NULL);
            /* The sink: one more term of the denominator, with no value. */
            if (p->sinks && sum > 0.0)
                sum += exp((double)p->sinks[h] - max_logit);
            /* A head that attends no token at all gets zeros (see decode.h). */
            for (int d = 0; d < hs; d++)
                pa_store_from_float(p->q_dtype, p->out, (size_t)(((int64_t)s * p->num_heads + h) * hs + d),
                                    sum > 0.0 ? (float)(acc[d] / sum) : 0.0f);
        }
    }
    free(logits);
    free(acc);
    free(q);
    free(K);
    free(V);
    pa_clear_error();
    return PA_SUCCESS;
}
