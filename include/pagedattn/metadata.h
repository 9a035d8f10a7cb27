/* libpagedattn: host-side attention metadata (vLLM's CommonAttentionMetadata
 * and the per-backend builders that derive kernel arguments from it).
 *
 * A scheduler step is a batch of num_reqs requests. Request r already has
 * num_computed_tokens[r] tokens in the KV cache (its context) and brings
 * num_scheduled_tokens[r] new tokens (its query). Its sequence length is the
 * sum of the two, and its new tokens occupy cache positions
 * [num_computed_tokens[r], seq_len[r]). The new tokens of all requests are laid
 * out back to back in one flat token array, request 0 first.
 *
 * Every function here is plain host C: all pointers are host memory, nothing
 * is allocated, the cost is O(requests + new tokens + blocks touched). Output
 * arrays belong to the caller; the functions fill the scalar fields of the
 * output structs and write the arrays. On PA_ERR_INVALID_ARGUMENT nothing was
 * written (not the arrays, not the scalars) and pa_last_error() names the
 * request index and the field ("request 3: num_scheduled_tokens -1 < 0").
 * A builder reads its inputs while it writes its outputs, so an output array
 * that shares a byte with an input array (the common metadata's included) or
 * with another output is refused too ("output seq_start_loc overlaps the
 * input seq_lens"); pa_build_common_metadata's num_computed_tokens output may
 * be its input array itself.
 *
 * Typical step:
 *     pa_batch b = {...};                       // scheduler output
 *     pa_common_metadata c = {.query_start_loc = qsl, ...};
 *     pa_build_common_metadata(&b, padded_tokens, &c);
 *     pa_build_prompt_decode_metadata(&c, num_prefills, NULL, &pd);  // decode/prompt kernels
 *     pa_build_ragged_metadata(&c, slices_per_block, &rg);           // ragged kernel + KV update
 */
#ifndef PAGEDATTN_METADATA_H
#define PAGEDATTN_METADATA_H

#include "pagedattn/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Slot id of a padding token: the cache writers skip it. */
#define PA_PAD_SLOT_ID (-1)

/* ---- input: one scheduler step ----------------------------------------- */

typedef struct pa_batch {
    int32_t num_reqs;                    /* >= 0 */
    const int32_t *num_computed_tokens;  /* [num_reqs], each >= 0 (context_len) */
    const int32_t *num_scheduled_tokens; /* [num_reqs], each >= 0 (query_len) */
    int32_t block_size;                  /* tokens per cache block, > 0 */
    /* [num_reqs, block_table_stride] physical block ids; request r uses the
     * first cdiv(seq_len[r], block_size) entries of its row. Entries the new
     * tokens land in must be >= 0. */
    const int32_t *block_table;
    int32_t block_table_stride; /* max_num_blocks_per_req, >= 1 (any value when num_reqs is 0) */
} pa_batch;

/* ---- common metadata (vLLM's CommonAttentionMetadata) ------------------ */

typedef struct pa_common_metadata {
    /* Caller-owned arrays (set before the call). */
    int32_t *query_start_loc;     /* [num_reqs + 1]: exclusive prefix sum of num_scheduled_tokens */
    int32_t *seq_lens;            /* [num_reqs]: num_computed_tokens + num_scheduled_tokens */
    int32_t *num_computed_tokens; /* [num_reqs]: a copy of the input */
    /* [slot_mapping_capacity]; the first padded_num_tokens entries are written:
     * token t of request r (position pos = num_computed_tokens[r] + t) goes to
     * slot block_table[r][pos / block_size] * block_size + pos % block_size;
     * entries [num_actual_tokens, padded_num_tokens) are PA_PAD_SLOT_ID.
     * int64, as pa_reshape_and_cache (and vLLM) read it: the buffer feeds the
     * cache write directly, and slots past 2^31 are fine. */
    int64_t *slot_mapping;
    int32_t slot_mapping_capacity; /* elements available in slot_mapping */

    /* Filled by pa_build_common_metadata. */
    int32_t num_reqs;
    int32_t num_actual_tokens; /* sum of num_scheduled_tokens (fits int32) */
    int32_t padded_num_tokens; /* >= num_actual_tokens: length of slot_mapping in use */
    int32_t max_query_len;     /* max num_scheduled_tokens (0 for an empty batch) */
    int32_t max_seq_len;       /* max seq_lens (0 for an empty batch) */
    int32_t block_size;
    const int32_t *block_table; /* the input block table (not copied): [num_reqs, block_table_stride] */
    int32_t block_table_stride;
} pa_common_metadata;

/* Fills *out from the batch. padded_num_tokens: the token count the step runs
 * with (for example a CUDA-graph size); 0 means num_actual_tokens. It must be
 * >= num_actual_tokens and <= out->slot_mapping_capacity. The output arrays
 * share no byte with the batch's arrays or with each other (refused), except
 * that out->num_computed_tokens may be batch->num_computed_tokens itself. */
PA_API pa_status pa_build_common_metadata(const pa_batch *batch, int32_t padded_num_tokens, pa_common_metadata *out);

/* ---- decode/prompt backend (vLLM's XFormersMetadata) ------------------- */

/* Encoder side of an encoder/decoder batch (cross-attention), optional. */
typedef struct pa_encoder_batch {
    const int32_t *encoder_seq_lens; /* [num_reqs], each >= 0: encoder tokens of request r */
    /* [num_reqs, cross_block_table_stride]: blocks holding the cross-attention
     * K/V of request r; the first cdiv(encoder_seq_lens[r], block_size) are used. */
    const int32_t *cross_block_table;
    int32_t cross_block_table_stride;
} pa_encoder_batch;

/* A contiguous range of sequences of the batch (the prefills or the decodes).
 * Pointers point into the arrays of the full batch; offsets in
 * query_start_loc / seq_start_loc / encoder_seq_start_loc are absolute (the
 * first entry is first_token / that array's entry for first_seq, not 0). */
typedef struct pa_seq_view {
    int32_t first_seq;   /* index of the view's first sequence in the batch */
    int32_t num_seqs;    /* sequences in the view */
    int32_t first_token; /* index of the view's first token in the flat batch */
    int32_t num_tokens;  /* new tokens in the view */
    int32_t max_query_len;
    int32_t max_seq_len;
    const int32_t *seq_lens;        /* [num_seqs] */
    const int32_t *context_lens;    /* [num_seqs] */
    const int32_t *query_start_loc; /* [num_seqs + 1], absolute */
    const int32_t *seq_start_loc;   /* [num_seqs + 1], absolute */
    const int32_t *block_tables;    /* [num_seqs, block_table_stride] */
    const int64_t *slot_mapping;    /* [num_tokens] */
} pa_seq_view;

typedef struct pa_prompt_decode_metadata {
    /* Caller-owned arrays (set before the call). */
    int32_t *seq_start_loc;         /* [num_reqs + 1]: exclusive prefix sum of seq_lens (a sum past
                                       INT32_MAX is PA_ERR_INVALID_ARGUMENT) */
    int32_t *encoder_seq_start_loc; /* [num_reqs + 1]; only with an encoder batch, else may be NULL */
    /* [cross_slot_mapping_capacity]; only with an encoder batch. The encoder
     * tokens of the prefill requests (their cross K/V is written during the
     * prefill), request by request: encoder position i of request r goes to
     * cross_block_table[r][i / block_size] * block_size + i % block_size. */
    int64_t *cross_slot_mapping; /* int64, as pa_reshape_and_cache reads it */
    int32_t cross_slot_mapping_capacity;

    /* Filled by pa_build_prompt_decode_metadata. Layout: prefills first, then
     * decodes: |prefill_0|...|prefill_{P-1}|decode_0|...|decode_{D-1}|. */
    int32_t num_reqs;
    int32_t num_prefills;           /* P: requests [0, P) are prefills (prompt chunks) */
    int32_t num_prefill_tokens;     /* query_start_loc[P] */
    int32_t num_decode_tokens;      /* num_actual_tokens - num_prefill_tokens */
    int32_t max_query_len;          /* over all requests */
    int32_t max_prefill_seq_len;    /* max seq_lens over prefills (0 if none) */
    int32_t max_decode_seq_len;     /* max seq_lens over decodes (0 if none) */
    int32_t max_decode_query_len;   /* max query len over decodes (0 if none) */
    const int32_t *seq_lens;        /* [num_reqs] (the common metadata's) */
    const int32_t *context_lens;    /* [num_reqs] num_computed_tokens (the common metadata's) */
    const int32_t *query_start_loc; /* [num_reqs + 1] (the common metadata's) */
    const int32_t *block_tables;    /* [num_reqs, block_table_stride] (the input's) */
    int32_t block_table_stride;
    const int64_t *slot_mapping; /* [padded_num_tokens] (the common metadata's) */
    pa_seq_view prefill;         /* sequences [0, P) */
    pa_seq_view decode;          /* sequences [P, num_reqs) */

    /* Encoder / cross-attention fields; zero / NULL without an encoder batch. */
    const int32_t *encoder_seq_lens; /* [num_reqs] (the input's) */
    int32_t max_encoder_seq_len;
    int32_t num_encoder_tokens;        /* sum of encoder_seq_lens over all requests */
    int32_t num_cross_slots;           /* encoder_seq_start_loc[P]: entries written to cross_slot_mapping */
    const int32_t *cross_block_tables; /* [num_reqs, cross_block_table_stride] (the input's) */
    int32_t cross_block_table_stride;
} pa_prompt_decode_metadata;

/* Builds the decode/prompt metadata from common metadata made by
 * pa_build_common_metadata. num_prefills in [0, num_reqs]. enc may be NULL
 * (decoder-only model).
 *
 * Batch order. Two orders exist, and each function wants its own:
 *
 *   this builder (xFormers, seed 003)    pa_reorder_batch_to_split_decodes_and_prefills,
 *                                        pa_split_decodes_and_prefills (v1, seed 002)
 *   |prefill_0|..|prefill_P-1|decode_0|..|   |decode_0|..|decode_D-1|prefill_0|..|
 *   requests [0, P) are prefills,            requests [0, D) are decodes
 *   [P, num_reqs) decodes                    (query <= decode_threshold), the rest prefills
 *
 * Here no decode (request in [num_prefills, num_reqs)) may have a longer
 * query than a prefill (request in [0, num_prefills)); requests with no new
 * token are left out of the comparison. So the labels agree with some
 * threshold: decodes at or below it, prefills at or above it (a one-token
 * prompt chunk may be a prefill; a speculative decode of k tokens is fine when
 * no prefill is shorter). A batch in the decodes-first order, or a wrong
 * num_prefills, breaks it and is PA_ERR_INVALID_ARGUMENT naming the request
 * (num_prefills 0, all decodes, and num_reqs, all prefills, are always
 * consistent). The prefills-first layout is also what pa_mixed_attention reads. */
PA_API pa_status pa_build_prompt_decode_metadata(const pa_common_metadata *common, int32_t num_prefills,
                                                 const pa_encoder_batch *enc, pa_prompt_decode_metadata *out);

/* ---- ragged backend (vLLM's PallasMetadata) + KV-update slices --------- */

/* The KV cache update by slices: each slice (kv_cache_start, new_kv_start,
 * slice_len) copies slice_len new tokens starting at token new_kv_start of the
 * flat batch to the cache starting at slot kv_cache_start, all within one
 * block. One slice per block a request's new tokens touch, requests in order;
 * new_kv_start is the exclusive prefix sum of slice_len. A request with no new
 * tokens has no slice (vLLM's runner never schedules one).
 *
 * Slices are written field-major, [3][capacity], the layout vLLM's TPU runner
 * transposes them into and pa_kv_cache_update reads: slices[0 * capacity + i]
 * = kv_cache_start, slices[1 * capacity + i] = new_kv_start, slices[2 *
 * capacity + i] = slice_len; slices [num_slices, capacity) are (0, 0, 0). The
 * buffer feeds the kernel directly: pa_kv_cache_update(..., slices,
 * num_slices_dev, capacity, ...) with num_slices on the device. Sizing the
 * buffer once with pa_kv_update_slices_upper_bound gives one row stride (and
 * one grid) for every step, as a captured CUDA graph needs. */
#define PA_SLICE_FIELDS 3

typedef struct pa_ragged_metadata {
    /* Caller-owned array (set before the call). */
    int32_t *slices;         /* [3][slices_capacity], field-major (see above) */
    int32_t slices_capacity; /* slices per field (the row stride); >= num_slices_padded */

    /* Filled by pa_build_ragged_metadata. */
    int32_t num_seqs;            /* num_reqs */
    int32_t num_slices;          /* real slices */
    int32_t num_slices_padded;   /* num_slices rounded up to slices_per_block; slices past num_slices are (0, 0, 0) */
    const int64_t *slot_mapping; /* [padded_num_tokens] (the common metadata's) */
    const int32_t *block_tables; /* [num_seqs, block_table_stride] (the input's) */
    int32_t block_table_stride;
    /* [num_seqs] K/V lengths the ragged kernel attends to: seq_lens (computed +
     * new), which is what vLLM's TPU runner passes as PallasMetadata.context_lens. */
    const int32_t *context_lens;
    const int32_t *query_start_loc; /* [num_seqs + 1] (the common metadata's) */
} pa_ragged_metadata;

/* Exact slice counts for this batch: *num_slices and *num_slices_padded (a
 * multiple of slices_per_block >= 1). Either output may be NULL. */
PA_API pa_status pa_kv_update_slices_count(const pa_common_metadata *common, int32_t slices_per_block,
                                           int32_t *num_slices, int32_t *num_slices_padded);

/* Upper bound of num_slices_padded for any batch of at most num_reqs requests
 * and num_tokens new tokens: round_up(min(num_tokens, num_tokens / block_size +
 * 2 * num_reqs), slices_per_block). Sizes a buffer once, for every step. */
PA_API pa_status pa_kv_update_slices_upper_bound(int32_t num_reqs, int32_t num_tokens, int32_t block_size,
                                                 int32_t slices_per_block, int32_t *out);

/* Writes the slices alone: slices [3][capacity], field-major, all 3 * capacity
 * entries (padding included). slices may be NULL only with capacity 0. */
PA_API pa_status pa_build_kv_update_slices(const pa_common_metadata *common, int32_t slices_per_block, int32_t *slices,
                                           int32_t capacity, int32_t *num_slices, int32_t *num_slices_padded);

/* Builds the ragged metadata (views of the common metadata) and its slices
 * (out->slices may be NULL only with out->slices_capacity 0). */
PA_API pa_status pa_build_ragged_metadata(const pa_common_metadata *common, int32_t slices_per_block,
                                          pa_ragged_metadata *out);

#ifdef __cplusplus
}
#endif
#endif /* PAGEDATTN_METADATA_H */
