/* libpagedattn: decode attention over a paged KV cache (vLLM's forward_decode).
 *
 * One query token per sequence attends to that sequence's whole cached history
 * (seq_lens[s] tokens, found through block_tables[s]).
 */
#ifndef PAGEDATTN_DECODE_H
#define PAGEDATTN_DECODE_H

#include "pagedattn/kv_cache.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pa_decode_params {
    void *out;                   /* [num_seqs, num_heads, head_size], q_dtype, contiguous */
    const void *query;           /* [num_seqs, num_heads, head_size], q_dtype; rows q_stride apart */
    int64_t q_stride;            /* elements between sequences; 0 = num_heads * head_size */
    pa_dtype q_dtype;            /* f32, f16 or bf16 */
    pa_kv_cache kv;              /* any layout but PA_LAYOUT_COMBINED */
    const int32_t *block_tables; /* [num_seqs, block_table_stride] physical block ids */
    int32_t block_table_stride;  /* max_num_blocks_per_seq */
    const int32_t *seq_lens;     /* [num_seqs], each in 1..max_seq_len */
    int32_t num_seqs;
    int32_t num_heads;         /* query heads; a multiple of kv.num_kv_heads */
    int32_t max_seq_len;       /* host-side upper bound on seq_lens (sizes the grid) */
    float scale;               /* softmax scale, usually 1/sqrt(head_size) */
    const float *alibi_slopes; /* [num_heads] or NULL; adds slope * (pos - seq_len + 1) */
    int32_t sliding_window;    /* 0 = off; key at pos masked if (seq_len-1) - pos >= window */
    float soft_cap;            /* 0 = off; logits become cap * tanh(logit / cap) */
    /* vLLM block-sparse attention (enabled when bs_vert_stride > 1): a KV block
     * of bs_block_size tokens is attended when it is local (within
     * bs_local_blocks of the query's block) or remote ((id + offset) %
     * vert_stride == 0, offset sliding per head by bs_head_sliding_step, on
     * query heads when >= 0 and on KV heads when < 0). */
    int32_t tp_rank;
    int32_t bs_local_blocks;
    int32_t bs_vert_stride;
    int32_t bs_block_size;
    int32_t bs_head_sliding_step;
} pa_decode_params;

/* Checks every field that can be checked without reading device memory.
 * PA_ERR_INVALID_ARGUMENT or PA_ERR_UNSUPPORTED with a message. */
PA_API pa_status pa_decode_validate(const pa_decode_params *p);

/* CPU reference (all pointers host memory, seq_lens/block tables read on the
 * host). Plain loops, f64 softmax: the specification the kernels are tested
 * against. Also checks each seq_len and every block id it reads. */
PA_API pa_status pa_ref_paged_decode(const pa_decode_params *p);

#ifdef __cplusplus
}
#endif
#endif /* PAGEDATTN_DECODE_H */
