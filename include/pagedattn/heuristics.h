/* libpagedattn: host-side heuristics, cache shapes and model-wide checks.
 *
 *   - decode kernel choice: vLLM's PagedAttention v1/v2 rule and the v2 scratch sizes;
 *   - page (block) size rules of vLLM's ragged/TPU backend and their CUDA analogue;
 *   - KV cache shapes of the three layouts, as int64 dims;
 *   - supported head and block sizes of the decode op;
 *   - per-layer hyperparameter agreement (window, soft cap, scale);
 *   - the flash KV layout choice (NHD/HND) with a process-wide override and an
 *     environment variable.
 *
 * Pure functions of their arguments except the layout choice. No allocation.
 */
#ifndef PAGEDATTN_HEURISTICS_H
#define PAGEDATTN_HEURISTICS_H

#include "pagedattn/kv_cache.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- decode: v1 (one pass) or v2 (KV partitions + reduction) ------------------ */

#define PA_DECODE_PARTITION_SIZE 512  /* tokens per v2 partition */
#define PA_DECODE_V1_MAX_SEQ_LEN 8192 /* longer contexts always take v2 */
#define PA_DECODE_V1_MIN_PARALLEL 512 /* num_seqs * num_heads above this keeps v1 */

/* vLLM's rule, exactly: with P = ceil(max_seq_len / 512) partitions,
 * use_v1 = max_seq_len <= 8192 && (P == 1 || num_seqs * num_heads > 512).
 * (The product is taken in 64 bits.) Arguments are not validated; see
 * pa_decode_plan for the checked form. */
PA_API int pa_decode_use_v1(int32_t max_seq_len, int32_t num_seqs, int32_t num_heads);

typedef struct pa_decode_plan {
    int32_t use_v1;             /* 1: v1; 0: v2 */
    int32_t max_num_partitions; /* ceil(max_seq_len / PA_DECODE_PARTITION_SIZE) */
    /* v2 scratch, in elements (all 0 when use_v1):
     *   tmp_out    [num_seqs, num_heads, max_num_partitions, head_size]  output dtype
     *   exp_sums   [num_seqs, num_heads, max_num_partitions]             f32
     *   max_logits [num_seqs, num_heads, max_num_partitions]             f32 */
    int64_t tmp_out_elems;
    int64_t exp_sums_elems;
    int64_t max_logits_elems;
} pa_decode_plan;

/* Checked plan: num_seqs >= 0, num_heads > 0, num_kv_heads > 0 dividing
 * num_heads, head_size > 0, max_seq_len > 0, block_size > 0 and (for v2)
 * dividing PA_DECODE_PARTITION_SIZE. PA_ERR_INVALID_ARGUMENT otherwise; nothing
 * is written on error. */
PA_API pa_status pa_decode_make_plan(int32_t num_seqs, int32_t num_heads, int32_t num_kv_heads, int32_t head_size,
                                     int32_t block_size, int32_t max_seq_len, pa_decode_plan *out);

/* ---- page size rules ------------------------------------------------------------ */

/* vLLM's ragged (TPU) backend page size: next_power_of_2(max_model_len) / 16,
 * clamped to [16, 256] (so that a max-length request spans about 16 pages).
 * next_power_of_2(n) is 1 for n < 1. max_model_len >= 1. */
PA_API pa_status pa_get_page_size(int64_t max_model_len, int32_t *out);

/* vLLM's ragged (TPU) backend minimum page size. The TPU kernel keeps the whole
 * block table (max_num_seqs rows of int32 page ids) in scalar memory and
 * allows it half of the 1 MiB SMEM:
 *   pages_per_req = 1 MiB / 2 / max_num_seqs / 4   (integer divisions, in order)
 *   min_page      = next power of two >= ceil(max_model_len / pages_per_req)
 * max_model_len >= 1 and 1 <= max_num_seqs <= 131072 (beyond that
 * pages_per_req is 0: PA_ERR_INVALID_ARGUMENT). */
PA_API pa_status pa_get_min_page_size(int64_t max_model_len, int32_t max_num_seqs, int32_t *out);

/* CUDA analogue of pa_get_min_page_size: the same formula with the device's
 * opt-in shared memory per block (pa_device_props.smem_per_block_optin, e.g.
 * 232448 bytes on H100) in place of the TPU's 1 MiB SMEM.
 *
 * Why this limit: the GPU counterpart of "block table in SMEM" is a kernel that
 * hoists page-table lookups into shared memory. A ragged/persistent CTA that
 * stages the page ids of up to max_num_seqs sequences must fit them in at most
 * half of one block's shared memory, leaving the other half for K/V tiles,
 * exactly as the TPU rule leaves half of SMEM free. Kernels that give each
 * sequence its own CTA stage only one row: pass max_num_seqs = 1 for them.
 * The result is a lower bound on the block size; round it up to a supported
 * block size (pa_supported_block_sizes). Requires smem_bytes >= 8 * max_num_seqs
 * (at least one page id per sequence), max_model_len >= 1, max_num_seqs >= 1. */
PA_API pa_status pa_cuda_min_page_size(int64_t max_model_len, int32_t max_num_seqs, size_t smem_bytes, int32_t *out);

/* ---- cache shapes ------------------------------------------------------------------ */

#define PA_MAX_SHAPE_RANK 6

typedef enum pa_kv_shape_part {
    PA_KV_SHAPE_KEY = 0,   /* the key buffer (the combined buffer for PA_LAYOUT_COMBINED) */
    PA_KV_SHAPE_VALUE = 1, /* the value buffer (PA_LAYOUT_COMBINED has none: error) */
    PA_KV_SHAPE_PAIR = 2,  /* K and V as one allocation */
} pa_kv_shape_part;

/* Shape of one cache buffer in elements, outermost first:
 *
 *   layout               KEY                             VALUE                     PAIR
 *   PA_LAYOUT_VLLM       [nb, kvh, head/x, block, x]     [nb, kvh, head, block]    [2, nb, block*kvh*head]
 *   PA_LAYOUT_FLASH_NHD  [nb, block, kvh, head]          same                      [2, nb, block, kvh, head]
 *   PA_LAYOUT_FLASH_HND  [nb, kvh, block, head]          same                      [2, nb, kvh, block, head]
 *   PA_LAYOUT_COMBINED   [nb, block, 2*kvh, head]        (error)                   [nb, block, 2*kvh, head]
 *
 * with x = 16 / sizeof(dtype) (head must be a multiple of x). All sizes > 0 and
 * the element count must fit in int64. dims gets *rank entries. */
PA_API pa_status pa_kv_cache_shape(pa_kv_layout layout, pa_dtype dtype, int32_t num_blocks, int32_t block_size,
                                   int32_t num_kv_heads, int32_t head_size, pa_kv_shape_part part,
                                   int64_t dims[PA_MAX_SHAPE_RANK], int32_t *rank);

/* ---- supported sizes ------------------------------------------------------------------- */

/* Head sizes (every multiple of 8 from 8 to 256: vLLM's nine, 32, 64, 80, 96,
 * 112, 120, 128, 192 and 256, and the rest such as 40 and 72) that every
 * attention op supports (decode, prefill, ragged), and block sizes
 * (8, 16, 32, 64, 128) the decode op supports, ascending. *count gets the list
 * length; out (may be NULL with capacity 0, to query the count) gets
 * min(capacity, count) entries. */
PA_API pa_status pa_supported_head_sizes(int32_t *out, int32_t capacity, int32_t *count);
PA_API pa_status pa_supported_block_sizes(int32_t *out, int32_t capacity, int32_t *count);

/* ---- per-layer hyperparameters ------------------------------------------------------------ */

typedef struct pa_layer_params {
    int32_t window_left;   /* FlashInfer's and vLLM's: keys left of the query a window reaches, the
                              query's own not counted, so the attention ops' sliding_window W is
                              window_left W - 1; -1 = none */
    float logits_soft_cap; /* 0 = none */
    float sm_scale;
} pa_layer_params;

/* All layers must agree on every field (compared exactly): *out gets the common
 * values. num_layers == 0, a non-finite or negative soft cap, a non-finite
 * scale or window_left < -1 is PA_ERR_INVALID_ARGUMENT naming the layer; so is
 * a disagreement, naming the first layer that differs from layer 0 and the
 * field. */
PA_API pa_status pa_infer_global_hyperparameters(const pa_layer_params *layers, int32_t num_layers,
                                                 pa_layer_params *out);

/* ---- flash KV layout choice ---------------------------------------------------------------- */

/* Sets a process-wide override of the flash KV layout: "NHD" or "HND" (also
 * accepted in lower case); NULL clears it. Anything else is
 * PA_ERR_INVALID_ARGUMENT and leaves the override unchanged. Thread-safe. */
PA_API pa_status pa_set_kv_cache_layout(const char *name);

/* The flash KV layout to use (PA_LAYOUT_FLASH_NHD or PA_LAYOUT_FLASH_HND), by
 * precedence: the override set above; else the environment variable
 * PAGEDATTN_KV_CACHE_LAYOUT (the setter's names: "NHD"/"HND", or "nhd"/"hnd";
 * read at every call; empty counts as unset; any other value is
 * PA_ERR_INVALID_ARGUMENT, never ignored); else NHD. */
PA_API pa_status pa_get_kv_cache_layout(pa_kv_layout *out);

#ifdef __cplusplus
}
#endif
#endif /* PAGEDATTN_HEURISTICS_H */
