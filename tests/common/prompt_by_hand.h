/* prefill.h's masks and ALiBi by hand, against vLLM's flash backend and
 * FlashAttention-2 (tests/host/test_prefill_ref.c runs them on the reference,
 * tests/gpu/test_prefill.c on every kernel family): one sequence of three keys
 * with equal logits (q = k = 0) and values j, one head, scale 1, so a row's
 * output is the mean of the keys it sees, weighted by e^bias.
 *   encoder-only, window 2 (vLLM's window_size (1, 1)): rows see {0,1}, {0,1,2},
 *     {1,2}: 0.5, 1, 1.5 (a left-only window gave 1, 1, 1.5);
 *   encoder, ALiBi slope 1 (FlashAttention-2's -slope |j - i|): row 0 weighs
 *     1, e^-1, e^-2; row 1 e^-1, 1, e^-1 (1 by symmetry); row 2 mirrors row 0
 *     (slope * (j - i) gave all three rows row 2's value);
 *   decoder, window 2: {0}, {0,1}, {1,2}: 0, 0.5, 1.5;
 *   cross-attention, two queries over the three keys, ALiBi slope 1: queries at
 *     positions 1 and 2 (bottom-right), so row 1 and row 2 of the encoder case. */
#pragma once

#include <math.h>
#include <stdint.h>

#include "pagedattn/prefill.h"

enum { PA_BY_HAND_CASES = 4 };

typedef struct pa_by_hand {
    pa_attn_type type;
    int window, alibi, q_len;
    double want[3]; /* each row's output, every dimension */
} pa_by_hand;

static inline void pa_by_hand_cases(pa_by_hand cs[PA_BY_HAND_CASES]) {
    const double e1 = exp(-1.0), e2 = exp(-2.0), edge = (e1 + 2 * e2) / (1 + e1 + e2);
    const pa_by_hand c[PA_BY_HAND_CASES] = {
        {PA_ATTN_ENCODER_ONLY, 2, 0, 3, {0.5, 1.0, 1.5}},
        {PA_ATTN_ENCODER, 0, 1, 3, {edge, 1.0, 2.0 - edge}},
        {PA_ATTN_DECODER, 2, 0, 3, {0.0, 0.5, 1.5}},
        {PA_ATTN_ENCODER_DECODER, 0, 1, 2, {1.0, 2.0 - edge, 0}},
    };
    for (int i = 0; i < PA_BY_HAND_CASES; i++)
        cs[i] = c[i];
}

/* Case c's parameters over the caller's buffers: q and k three rows of zeros,
 * v row j all j, of head_size hs in dt; cu3 = {0, 3}, cu2 = {0, 2} and slope
 * (1.0f) where the op reads them (host or device memory alike). */
static inline pa_prompt_attention_params pa_by_hand_params(const pa_by_hand *c, pa_dtype dt, int hs, void *out,
                                                           const void *q, const void *k, const void *v,
                                                           const int32_t *cu3, const int32_t *cu2, const float *slope) {
    const int cross = c->type == PA_ATTN_ENCODER_DECODER;
    return (pa_prompt_attention_params){.out = out,
                                        .query = q,
                                        .key = k,
                                        .value = v,
                                        .dtype = dt,
                                        .attn_type = c->type,
                                        .cu_seqlens_q = cross ? cu2 : cu3,
                                        .cu_seqlens_k = cross ? cu3 : NULL,
                                        .num_seqs = 1,
                                        .num_heads = 1,
                                        .num_kv_heads = 1,
                                        .head_size = hs,
                                        .num_q_tokens = c->q_len,
                                        .num_k_tokens = 3,
                                        .max_seqlen_q = c->q_len,
                                        .max_seqlen_k = 3,
                                        .scale = 1.0f,
                                        .alibi_slopes = c->alibi ? slope : NULL,
                                        .sliding_window = c->window};
}
