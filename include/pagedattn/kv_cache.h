/* libpagedattn: paged KV cache descriptors shared by every op.
 *
 * Three layouts, all first-class (shapes in elements of the cache dtype):
 *
 *   PA_LAYOUT_VLLM       key   [num_blocks, kv_heads, head/x, block, x]   x = 16 / sizeof(elt)
 *                        value [num_blocks, kv_heads, head, block]
 *                        (vLLM's kv_cache (2, num_blocks, block*kv_heads*head) split in two)
 *   PA_LAYOUT_FLASH_NHD  key, value [num_blocks, block, kv_heads, head]
 *   PA_LAYOUT_FLASH_HND  key, value [num_blocks, kv_heads, block, head]
 *   PA_LAYOUT_COMBINED   kv [num_blocks, block, 2*kv_heads, head], K at even and V at
 *                        odd combined heads (vLLM's ragged/TPU path); `key` is the
 *                        buffer and `value` must be NULL or equal to `key`.
 *
 * Flash layouts may carry explicit strides (elements) so a cache can be a view:
 * block_stride between blocks, page_stride between tokens of a block, head_stride
 * between heads; the element stride inside a head is always 1. Zero means the
 * contiguous value. The strides nest as the layout's name says (NHD: heads
 * inside tokens inside blocks; HND: tokens inside heads inside blocks) without
 * overlap; a view whose nesting is the other layout's is that layout. The stride
 * of a dimension of size 1 (head_stride with one KV head, page_stride with
 * blocks of one token) is ignored and reads as the contiguous value, as torch
 * may give such a dimension any stride (it must still be >= 0, as every
 * stride). Other layouts must leave them zero.
 *
 * Cache element types: f32, f16, bf16, fp8 e4m3, fp8 e5m2. With an fp8 cache,
 * k_scale / v_scale point at one float each (device memory for GPU ops, host
 * memory for the CPU reference): stored = sat(x / scale), read = stored * scale.
 * With scales_per_head = 1 they point at num_kv_heads floats each instead, KV
 * head h's scale at [h] (vLLM's per-attention-head fp8 scales, which its
 * FlashAttention-3 backend takes as k_descale / v_descale): every op, cache
 * write and attention alike, then applies head h's scale to head h. A cache
 * that is not fp8 reads neither scale, one or per head. NULL scales mean 1.0.
 * Scales are finite and > 0; where a stored value times its scale is past
 * FLT_MAX (e4m3's 448 under a scale above 7.5e35, e5m2's 57344 above
 * 5.9e33) the value read is no float, and attention over it unspecified.
 * A slot of -1 anywhere means padding: never written.
 * All cache index arithmetic is 64-bit.
 */
#ifndef PAGEDATTN_KV_CACHE_H
#define PAGEDATTN_KV_CACHE_H

#include "pagedattn/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pa_kv_layout {
    PA_LAYOUT_VLLM = 0,
    PA_LAYOUT_FLASH_NHD = 1,
    PA_LAYOUT_FLASH_HND = 2,
    PA_LAYOUT_COMBINED = 3,
} pa_kv_layout;

typedef struct pa_kv_cache {
    pa_kv_layout layout;
    pa_dtype dtype;
    void *key;   /* see the layouts above */
    void *value; /* NULL (or == key) for PA_LAYOUT_COMBINED */
    int32_t num_blocks;
    int32_t block_size; /* tokens per block (page size) */
    int32_t num_kv_heads;
    int32_t head_size;
    int64_t block_stride; /* flash layouts only; 0 = contiguous */
    int64_t page_stride;
    int64_t head_stride;
    const float *k_scale; /* fp8 caches: one float (num_kv_heads with scales_per_head); NULL = 1.0 */
    const float *v_scale;
    int32_t scales_per_head; /* 0: one k_scale and one v_scale; 1: one per KV head (fp8 caches) */
} pa_kv_cache;

PA_API const char *pa_kv_layout_name(pa_kv_layout l); /* "vllm", "nhd", "hnd", "combined" */
PA_API pa_status pa_kv_layout_from_name(const char *name, pa_kv_layout *out);

/* Checks a cache descriptor (layout, dtype, positive sizes, head_size divisible
 * by x for the vLLM layout, scales_per_head 0 or 1, strides nested without overlap, and each
 * buffer's size in elements and in bytes within int64, computed without
 * overflow). Does not touch the buffers. */
PA_API pa_status pa_kv_cache_validate(const pa_kv_cache *c);

/* Elements of one cache buffer (key, value or the combined buffer), spanning the
 * strides: what the caller must allocate. Validates first: a cache whose size
 * does not fit in int64 is PA_ERR_INVALID_ARGUMENT and nothing is written. */
PA_API pa_status pa_kv_cache_elements(const pa_kv_cache *c, int64_t *key_elems, int64_t *value_elems);

#ifdef __cplusplus
}
#endif
#endif /* PAGEDATTN_KV_CACHE_H */
