/* libpagedattn: merging two partial attention states by their log-sum-exps
 * (vLLM's merge_attn_states; FlashInfer's merge_state). A server that runs
 * attention in two parts over disjoint key sets (cascade attention: a shared
 * prefix once for the whole batch, then each sequence's own suffix; MLA's
 * chunked context; context-parallel shards) combines the parts' outputs here
 * into the output attention over all the keys would give. */
#ifndef PAGEDATTN_MERGE_H
#define PAGEDATTN_MERGE_H

#include "pagedattn/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* For each token t and head h, with a = prefix_lse[h, t] and b = suffix_lse[h, t]
 * (natural-log sums of exp(score) over each part's keys, as FlashAttention
 * and vLLM return them) and m = max(a, b). FlashInfer's kernels return base-2
 * log-sum-exps by default (its merge_state takes base 2): times ln 2 they are
 * these (or ask FlashInfer for natural logs where its API offers it); the
 * layouts below place its values, they do not convert them:
 *
 *   output[t, h, :]   = (e^(a-m) prefix_output[t, h, :] + e^(b-m) suffix_output[t, h, :])
 *                       / (e^(a-m) + e^(b-m))
 *   output_lse[h, t]  = m + log(e^(a-m) + e^(b-m))
 *
 * computed in f32 and rounded once to dtype. Edge cases, as a server meets them:
 *   - an lse of +inf is read as -inf (FlashAttention-2 writes +inf for a row
 *     that saw no key, FlashAttention-3 -inf; vLLM reads both so);
 *   - a part whose weight e^(a-m) / (e^(a-m) + e^(b-m)) is 0 (its lse -inf,
 *     or so far below the other's that the weight underflows) contributes
 *     nothing: its row's values are ignored, NaN included (the row must still
 *     be there: the device loads it beside the lse pair; vLLM's kernel
 *     multiplies such a row by 0, so a NaN there reaches its output);
 *   - both lse -inf: the row is zeros and output_lse -inf (vLLM's kernel
 *     copies prefix_output's row: a row no key reached is zeros here, as
 *     every attention op of this library writes it);
 *   - an lse of NaN gives a row of NaN (and output_lse NaN).
 *
 * Layouts: the three outputs are [num_tokens, num_heads, head_size] with the
 * element stride 1, heads head_size apart and token rows *_stride elements
 * apart (0 = num_heads * head_size; otherwise at least that). The three lse
 * arrays share one layout: element (h, t) at h * lse_head_stride +
 * t * lse_token_stride floats. Both strides 0 give vLLM's and
 * FlashAttention's [num_heads, num_tokens] (token stride 1, head stride
 * num_tokens); FlashInfer's [num_tokens, num_heads] is lse_head_stride 1 and
 * lse_token_stride num_heads (its values in base 2: see above). A stride of 0 is its default (token 1, head
 * num_tokens); given strides must keep the elements apart: lse_head_stride >=
 * lse_token_stride * num_tokens, or lse_token_stride >= lse_head_stride *
 * num_heads.
 *
 * In place: output may be prefix_output or suffix_output (the same pointer
 * and row stride); otherwise it must not overlap either, nor the lse arrays.
 * output_lse (NULL for none) must not overlap any other buffer. */
typedef struct pa_merge_attn_states_params {
    pa_dtype dtype;            /* the three outputs': PA_DTYPE_F32, PA_DTYPE_F16 or PA_DTYPE_BF16 */
    int32_t num_tokens;        /* >= 0 (0: nothing to do) */
    int32_t num_heads;         /* 1..65535 */
    int32_t head_size;         /* 1..65536 (any; 16-byte vectors where the head, pointers and strides allow) */
    void *output;              /* [num_tokens, num_heads, head_size]; rows out_stride apart */
    const void *prefix_output; /* rows prefix_stride apart */
    const void *suffix_output; /* rows suffix_stride apart */
    int64_t out_stride;        /* elements between token rows; 0 = num_heads * head_size */
    int64_t prefix_stride;
    int64_t suffix_stride;
    float *output_lse;       /* NULL, or the merged lse, at the layout below */
    const float *prefix_lse; /* element (h, t) at h * lse_head_stride + t * lse_token_stride */
    const float *suffix_lse;
    int64_t lse_head_stride;  /* 0 = num_tokens (with lse_token_stride 0: [num_heads, num_tokens]) */
    int64_t lse_token_stride; /* 0 = 1 */
} pa_merge_attn_states_params;

/* Checks *p without touching its buffers (host or device pointers alike). */
PA_API pa_status pa_merge_attn_states_validate(const pa_merge_attn_states_params *p);

/* On the device: every pointer device memory, outputs and inputs aligned to
 * their element size, the lse arrays to 4 bytes. Asynchronous on `stream`; no
 * allocation or synchronisation. One thread per 16 bytes of a row where
 * head_size x element size, the pointers and the row strides are multiples
 * of 16 bytes (vLLM's condition is the first), one per element otherwise.
 * Needs sm_80 or newer. */
PA_API pa_status pa_merge_attn_states(const pa_merge_attn_states_params *p, pa_stream stream);

/* The same on host memory: the CPU reference. */
PA_API pa_status pa_ref_merge_attn_states(const pa_merge_attn_states_params *p);

#ifdef __cplusplus
}
#endif
#endif
