/* Cache element offsets, shared by the CPU reference, the host validation and
 * the CUDA kernels so the layouts are written down once. Private header. */
#ifndef PA_KV_INDEX_H
#define PA_KV_INDEX_H

#include <stdint.h>

#include "pagedattn/kv_cache.h"

#if defined(__CUDACC__)
#define PA_HD __host__ __device__ __forceinline__
#else
#define PA_HD static inline
#endif

/* Strides resolved once from a pa_kv_cache (all in elements). */
typedef struct pa_kv_geom {
    int32_t layout;
    int32_t block_size, num_kv_heads, head_size;
    int32_t x; /* vLLM layout: elements per 16 bytes */
    int64_t block_stride, page_stride, head_stride;
} pa_kv_geom;

PA_HD pa_kv_geom pa_kv_geom_make(int32_t layout, int32_t elt_size, int32_t block_size, int32_t num_kv_heads,
                                 int32_t head_size, int64_t block_stride, int64_t page_stride, int64_t head_stride) {
    pa_kv_geom g;
    g.layout = layout;
    g.block_size = block_size;
    g.num_kv_heads = num_kv_heads;
    g.head_size = head_size;
    g.x = elt_size > 0 ? 16 / elt_size : 1;
    const int64_t bs = block_size, nh = num_kv_heads, hs = head_size;
    /* A dimension of size 1 never multiplies its stride: whatever a view says
     * (torch's strides of a permuted MQA cache, or of a one-token page) reads
     * as the contiguous value, so checks, alignment and paths see one geometry. */
    if (nh == 1)
        head_stride = 0;
    if (bs == 1)
        page_stride = 0;
    switch (layout) {
    case PA_LAYOUT_FLASH_NHD:
        g.head_stride = head_stride ? head_stride : hs;
        g.page_stride = page_stride ? page_stride : nh * g.head_stride;
        g.block_stride = block_stride ? block_stride : bs * g.page_stride;
        break;
    case PA_LAYOUT_FLASH_HND:
        g.page_stride = page_stride ? page_stride : hs;
        g.head_stride = head_stride ? head_stride : bs * g.page_stride;
        g.block_stride = block_stride ? block_stride : nh * g.head_stride;
        break;
    case PA_LAYOUT_COMBINED:
        g.head_stride = hs; /* between combined heads */
        g.page_stride = 2 * nh * hs;
        g.block_stride = bs * g.page_stride;
        break;
    default: /* PA_LAYOUT_VLLM */
        g.head_stride = bs * hs;
        g.page_stride = 0; /* not a plain stride in this layout */
        g.block_stride = nh * bs * hs;
        break;
    }
    return g;
}

/* Division by a block size (any divisor 1 <= d < 2^31) of a position
 * 0 <= n < 2^31 as a multiply-high, an add and a shift, for kernels that split
 * positions into (block, slot) every tile: Granlund and Montgomery's method
 * ("Division by invariant integers using multiplication", 1994, fig. 4.1)
 * with l = ceil(log2 d) and mul = floor(2^32 (2^l - d) / d) + 1 < 2^32; with
 * n < 2^31 the sum mulhi(mul, n) + n does not overflow. */
typedef struct pa_kv_divider {
    uint32_t mul;
    int32_t shift;
} pa_kv_divider;

PA_HD pa_kv_divider pa_kv_divider_make(int32_t d) {
    pa_kv_divider v;
    int32_t l = 0;
    while (l < 31 && ((int64_t)1 << l) < d)
        l++;
    v.mul = (uint32_t)(((uint64_t)1 << 32) * (uint64_t)(((int64_t)1 << l) - d) / (uint64_t)d + 1);
    v.shift = l;
    return v;
}

PA_HD int32_t pa_kv_divide(pa_kv_divider v, int32_t n) {
#if defined(__CUDA_ARCH__)
    const uint32_t t = __umulhi(v.mul, (uint32_t)n);
#else
    const uint32_t t = (uint32_t)(((uint64_t)v.mul * (uint32_t)n) >> 32);
#endif
    return (int32_t)((t + (uint32_t)n) >> v.shift);
}

/* Offset of element d of token `tok` (0..block_size-1) of kv head `h` in block
 * `blk`, in the key buffer. For the combined layout this is in the one buffer. */
PA_HD int64_t pa_kv_key_offset(const pa_kv_geom *g, int64_t blk, int32_t h, int32_t tok, int32_t d) {
    switch (g->layout) {
    case PA_LAYOUT_VLLM:
        /* [blocks, kv_heads, head/x, block, x] */
        return blk * g->block_stride + (int64_t)h * g->head_stride +
               ((int64_t)(d / g->x) * g->block_size + tok) * g->x + d % g->x;
    case PA_LAYOUT_COMBINED:
        return blk * g->block_stride + (int64_t)tok * g->page_stride + (int64_t)(2 * h) * g->head_stride + d;
    default: /* flash NHD / HND */
        return blk * g->block_stride + (int64_t)tok * g->page_stride + (int64_t)h * g->head_stride + d;
    }
}

/* Same for the value buffer (for the combined layout, the odd combined head). */
PA_HD int64_t pa_kv_value_offset(const pa_kv_geom *g, int64_t blk, int32_t h, int32_t tok, int32_t d) {
    switch (g->layout) {
    case PA_LAYOUT_VLLM:
        /* [blocks, kv_heads, head, block] */
        return blk * g->block_stride + (int64_t)h * g->head_stride + (int64_t)d * g->block_size + tok;
    case PA_LAYOUT_COMBINED:
        return blk * g->block_stride + (int64_t)tok * g->page_stride + (int64_t)(2 * h + 1) * g->head_stride + d;
    default: return blk * g->block_stride + (int64_t)tok * g->page_stride + (int64_t)h * g->head_stride + d;
    }
}

/* The row offsets (d = 0) as one linear form for every layout, taken from the
 * two functions above: each is linear in block, head and token, and key and
 * value share the block and head coefficients (only the token stride and the
 * value's constant differ: vLLM's value is token-contiguous, the combined
 * layout's value head follows its key head). A kernel that looks up a row per
 * key forms key = blk * block + h * head + tok * k_tok and value = the same
 * with v_tok, plus v_add, with no switch on the layout. tests/host checks the
 * forms against the functions on every layout, custom strides included. */
typedef struct pa_kv_linear {
    int64_t block, head, k_tok, v_tok, v_add;
} pa_kv_linear;

PA_HD pa_kv_linear pa_kv_linear_make(const pa_kv_geom *g) {
    pa_kv_linear l;
    const int64_t k0 = pa_kv_key_offset(g, 0, 0, 0, 0);
    l.block = pa_kv_key_offset(g, 1, 0, 0, 0) - k0;
    l.head = pa_kv_key_offset(g, 0, 1, 0, 0) - k0;
    l.k_tok = pa_kv_key_offset(g, 0, 0, 1, 0) - k0;
    l.v_tok = pa_kv_value_offset(g, 0, 0, 1, 0) - pa_kv_value_offset(g, 0, 0, 0, 0);
    l.v_add = pa_kv_value_offset(g, 0, 0, 0, 0) - k0;
    return l;
}

#endif /* PA_KV_INDEX_H */
