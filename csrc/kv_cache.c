/* Cache descriptor checks and sizes. */
#include <string.h>

#include "internal.h"
#include "kv_index.h"

const char *pa_kv_layout_name(pa_kv_layout l) {
    switch (l) {
    case PA_LAYOUT_VLLM: return "vllm";
    case PA_LAYOUT_FLASH_NHD: return "nhd";
    case PA_LAYOUT_FLASH_HND: return "hnd";
    case PA_LAYOUT_COMBINED: return "combined";
    }
    return "unknown";
}

pa_status pa_kv_layout_from_name(const char *name, pa_kv_layout *out) {
    PA_REQUIRE(name && out, "layout name and output must not be NULL");
    for (int l = PA_LAYOUT_VLLM; l <= PA_LAYOUT_COMBINED; l++) {
        if (strcmp(name, pa_kv_layout_name((pa_kv_layout)l)) == 0) {
            *out = (pa_kv_layout)l;
            pa_clear_error();
            return PA_SUCCESS;
        }
    }
    return pa_fail(PA_ERR_INVALID_ARGUMENT, "unknown KV layout '%s'; known: vllm, nhd, hnd, combined", name);
}

pa_status pa_kv_cache_validate(const pa_kv_cache *c) {
    PA_REQUIRE(c != NULL, "kv cache descriptor is NULL");
    PA_REQUIRE((int)c->layout >= PA_LAYOUT_VLLM && (int)c->layout <= PA_LAYOUT_COMBINED, "kv cache layout %d unknown",
               (int)c->layout);
    PA_REQUIRE(pa_is_valid_dtype(c->dtype), "kv cache dtype %d unknown", (int)c->dtype);
    PA_REQUIRE(c->num_blocks > 0, "kv cache num_blocks must be > 0 (got %d)", c->num_blocks);
    PA_REQUIRE(c->block_size > 0, "kv cache block_size must be > 0 (got %d)", c->block_size);
    PA_REQUIRE(c->num_kv_heads > 0, "kv cache num_kv_heads must be > 0 (got %d)", c->num_kv_heads);
    PA_REQUIRE(c->head_size > 0, "kv cache head_size must be > 0 (got %d)", c->head_size);
    PA_REQUIRE(c->key != NULL, "kv cache key buffer is NULL");
    if (c->layout == PA_LAYOUT_COMBINED)
        PA_REQUIRE(c->value == NULL || c->value == c->key,
                   "combined layout: value must be NULL or equal to key (K and V share one buffer)");
    else
        PA_REQUIRE(c->value != NULL, "kv cache value buffer is NULL");
    if (c->layout == PA_LAYOUT_VLLM) {
        int x = (int)(16 / pa_dtype_size(c->dtype));
        PA_REQUIRE(c->head_size % x == 0, "vllm layout: head_size %d must be a multiple of x = %d (16 bytes of %s)",
                   c->head_size, x, pa_dtype_name(c->dtype));
    }
    if (c->layout == PA_LAYOUT_FLASH_NHD || c->layout == PA_LAYOUT_FLASH_HND) {
        PA_REQUIRE(c->block_stride >= 0 && c->page_stride >= 0 && c->head_stride >= 0,
                   "flash layout strides must be >= 0");
        pa_kv_geom g = pa_kv_geom_make(c->layout, (int32_t)pa_dtype_size(c->dtype), c->block_size, c->num_kv_heads,
                                       c->head_size, c->block_stride, c->page_stride, c->head_stride);
        const int64_t hs = c->head_size, nh = c->num_kv_heads, bs = c->block_size;
        if (c->layout == PA_LAYOUT_FLASH_NHD) {
            PA_REQUIRE(g.head_stride >= hs, "nhd: head_stride %lld < head_size %lld", (long long)g.head_stride,
                       (long long)hs);
            PA_REQUIRE(g.page_stride >= nh * g.head_stride, "nhd: page_stride %lld overlaps the heads of a token",
                       (long long)g.page_stride);
            PA_REQUIRE(g.block_stride >= bs * g.page_stride, "nhd: block_stride %lld overlaps the tokens of a block",
                       (long long)g.block_stride);
        } else {
            PA_REQUIRE(g.page_stride >= hs, "hnd: page_stride %lld < head_size %lld", (long long)g.page_stride,
                       (long long)hs);
            PA_REQUIRE(g.head_stride >= bs * g.page_stride, "hnd: head_stride %lld overlaps the tokens of a head",
                       (long long)g.head_stride);
            PA_REQUIRE(g.block_stride >= nh * g.head_stride, "hnd: block_stride %lld overlaps the heads of a block",
                       (long long)g.block_stride);
        }
    } else {
        PA_REQUIRE(c->block_stride == 0 && c->page_stride == 0 && c->head_stride == 0,
                   "%s layout: strides are fixed and must be left 0", pa_kv_layout_name(c->layout));
    }
    return PA_SUCCESS;
}

pa_status pa_kv_cache_elements(const pa_kv_cache *c, int64_t *key_elems, int64_t *value_elems) {
    PA_TRY(pa_kv_cache_validate(c));
    pa_kv_geom g = pa_kv_geom_make(c->layout, (int32_t)pa_dtype_size(c->dtype), c->block_size, c->num_kv_heads,
                                   c->head_size, c->block_stride, c->page_stride, c->head_stride);
    /* One past the last element the layout can address. */
    int64_t last_k = pa_kv_key_offset(&g, c->num_blocks - 1, c->num_kv_heads - 1, c->block_size - 1, c->head_size - 1);
    int64_t last_v =
        pa_kv_value_offset(&g, c->num_blocks - 1, c->num_kv_heads - 1, c->block_size - 1, c->head_size - 1);
    if (c->layout == PA_LAYOUT_COMBINED) {
        last_k = last_k > last_v ? last_k : last_v;
        last_v = -1;
    }
    if (key_elems)
        *key_elems = last_k + 1;
    if (value_elems)
        *value_elems = last_v + 1;
    pa_clear_error();
    return PA_SUCCESS;
}
