/* The cache-op test grid, shared by the host reference tests and the GPU
 * tests so both walk the same configurations. */
#ifndef PA_CACHE_GRID_H
#define PA_CACHE_GRID_H

#include <stdint.h>

#include "pagedattn/pagedattn.h"

#define SENTINEL 0xA5

static const int head_sizes[] = {64, 80, 120, 256};
static const int block_sizes[] = {8, 16, 32};
static const int kv_heads[] = {1, 8, 40};

typedef struct {
    pa_dtype in, cache;
} dt_pair;
static const dt_pair pairs[] = {
    {PA_DTYPE_F32, PA_DTYPE_F32},      {PA_DTYPE_F16, PA_DTYPE_F16},      {PA_DTYPE_BF16, PA_DTYPE_BF16},
    {PA_DTYPE_F32, PA_DTYPE_FP8_E4M3}, {PA_DTYPE_F16, PA_DTYPE_FP8_E4M3}, {PA_DTYPE_BF16, PA_DTYPE_FP8_E4M3},
    {PA_DTYPE_F32, PA_DTYPE_FP8_E5M2}, {PA_DTYPE_F16, PA_DTYPE_FP8_E5M2}, {PA_DTYPE_BF16, PA_DTYPE_FP8_E5M2},
};
#define NPAIRS ((int)(sizeof(pairs) / sizeof(pairs[0])))

/* Flash-layout strides (elements) for the grid: contiguous, or padded between
 * heads, tokens and blocks when `strided`. Other layouts: left untouched. */
static inline void cache_grid_flash_strides(pa_kv_layout layout, int64_t bs, int64_t nh, int64_t hs, int strided,
                                            int64_t *block, int64_t *page, int64_t *head) {
    if (layout == PA_LAYOUT_FLASH_NHD) {
        *head = hs + (strided ? 8 : 0);
        *page = nh * *head + (strided ? 24 : 0);
        *block = bs * *page + (strided ? 40 : 0);
    } else if (layout == PA_LAYOUT_FLASH_HND) {
        *page = hs + (strided ? 8 : 0);
        *head = bs * *page + (strided ? 8 : 0);
        *block = nh * *head + (strided ? 16 : 0);
    }
}

#endif
