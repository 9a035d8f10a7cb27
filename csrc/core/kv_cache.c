/* Cache descriptor checks and sizes. */
#include <math.h>
#include <string.h>

#include "internal.h"

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

/* Every cache size goes through here: 1 and *out = f[0] * ... * f[n-1], or 0
 * when the product does not fit in int64. */
static int product_i64(const int64_t *f, int n, int64_t *out) {
    int64_t r = 1;
    for (int i = 0; i < n; i++)
        if (!pa_mul_i64(r, f[i], &r))
            return 0;
    *out = r;
    return 1;
}

#define SIZE_REQUIRE(ok)                                                                                               \
    PA_REQUIRE(ok,                                                                                                     \
               "kv cache size overflows int64 (%s layout, %s, num_blocks %d, block_size %d, num_kv_heads %d, "         \
               "head_size %d, strides %lld/%lld/%lld)",                                                                \
               pa_kv_layout_name(c->layout), pa_dtype_name(c->dtype), c->num_blocks, c->block_size, c->num_kv_heads,   \
               c->head_size, (long long)c->block_stride, (long long)c->page_stride, (long long)c->head_stride)

/* Checks the descriptor and sizes its buffers (elements spanning the strides),
 * every product and sum overflow-checked: the element count and the byte count
 * of each buffer must fit in int64. */
static pa_status check_and_size(const pa_kv_cache *c, int64_t *key_elems, int64_t *value_elems) {
    PA_REQUIRE(c != NULL, "kv cache descriptor is NULL");
    PA_REQUIRE((int)c->layout >= PA_LAYOUT_VLLM && (int)c->layout <= PA_LAYOUT_COMBINED, "kv cache layout %d unknown",
               (int)c->layout);
    PA_REQUIRE(pa_is_valid_dtype(c->dtype), "kv cache dtype %d unknown", (int)c->dtype);
    PA_REQUIRE(c->num_blocks > 0, "kv cache num_blocks must be > 0 (got %d)", c->num_blocks);
    PA_REQUIRE(c->block_size > 0, "kv cache block_size must be > 0 (got %d)", c->block_size);
    PA_REQUIRE(c->num_kv_heads > 0, "kv cache num_kv_heads must be > 0 (got %d)", c->num_kv_heads);
    PA_REQUIRE(c->head_size > 0, "kv cache head_size must be > 0 (got %d)", c->head_size);
    PA_REQUIRE(c->key != NULL, "kv cache key buffer is NULL");
    PA_REQUIRE(c->scales_per_head == 0 || c->scales_per_head == 1,
               "kv cache scales_per_head must be 0 (one k_scale, one v_scale) or 1 (one per KV head); got %d",
               (int)c->scales_per_head);
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
    const int64_t nb = c->num_blocks, hs = c->head_size, nh = c->num_kv_heads, bs = c->block_size;
    int64_t ke = 0, ve = 0;
    if (c->layout == PA_LAYOUT_FLASH_NHD || c->layout == PA_LAYOUT_FLASH_HND) {
        PA_REQUIRE(c->block_stride >= 0 && c->page_stride >= 0 && c->head_stride >= 0,
                   "flash layout strides must be >= 0");
        /* Resolve the zero (contiguous) strides as pa_kv_geom_make does, checked;
         * as there, a dimension of size 1 takes the contiguous stride whatever
         * the view says (it never multiplies it). */
        int64_t need = 0, bstr, pstr, hstr;
        const int64_t head_in = nh == 1 ? 0 : c->head_stride, page_in = bs == 1 ? 0 : c->page_stride;
        if (c->layout == PA_LAYOUT_FLASH_NHD) {
            hstr = head_in ? head_in : hs;
            PA_REQUIRE(hstr >= hs, "nhd: head_stride %lld < head_size %lld", (long long)hstr, (long long)hs);
            SIZE_REQUIRE(pa_mul_i64(nh, hstr, &need));
            pstr = page_in ? page_in : need;
            PA_REQUIRE(pstr >= need,
                       "nhd: page_stride %lld overlaps the heads of a token (heads %lld apart; a cache whose heads "
                       "are outside its tokens is PA_LAYOUT_FLASH_HND)",
                       (long long)pstr, (long long)hstr);
            SIZE_REQUIRE(pa_mul_i64(bs, pstr, &need));
            bstr = c->block_stride ? c->block_stride : need;
            PA_REQUIRE(bstr >= need, "nhd: block_stride %lld overlaps the tokens of a block", (long long)bstr);
        } else {
            pstr = page_in ? page_in : hs;
            PA_REQUIRE(pstr >= hs, "hnd: page_stride %lld < head_size %lld", (long long)pstr, (long long)hs);
            SIZE_REQUIRE(pa_mul_i64(bs, pstr, &need));
            hstr = head_in ? head_in : need;
            PA_REQUIRE(hstr >= need,
                       "hnd: head_stride %lld overlaps the tokens of a head (tokens %lld apart; a cache whose "
                       "tokens are outside its heads is PA_LAYOUT_FLASH_NHD)",
                       (long long)hstr, (long long)pstr);
            SIZE_REQUIRE(pa_mul_i64(nh, hstr, &need));
            bstr = c->block_stride ? c->block_stride : need;
            PA_REQUIRE(bstr >= need, "hnd: block_stride %lld overlaps the heads of a block", (long long)bstr);
        }
        /* One past the last element: (nb-1)*bstr + (bs-1)*pstr + (nh-1)*hstr + hs. */
        int64_t tb, tp, th;
        SIZE_REQUIRE(pa_mul_i64(nb - 1, bstr, &tb) && pa_mul_i64(bs - 1, pstr, &tp) && pa_mul_i64(nh - 1, hstr, &th) &&
                     pa_add_i64(tb, tp, &ke) && pa_add_i64(ke, th, &ke) && pa_add_i64(ke, hs, &ke));
        ve = ke;
    } else {
        PA_REQUIRE(c->block_stride == 0 && c->page_stride == 0 && c->head_stride == 0,
                   "%s layout: strides are fixed and must be left 0", pa_kv_layout_name(c->layout));
        if (c->layout == PA_LAYOUT_COMBINED) {
            const int64_t f[5] = {nb, bs, 2, nh, hs};
            SIZE_REQUIRE(product_i64(f, 5, &ke));
        } else {
            const int64_t f[4] = {nb, nh, bs, hs};
            SIZE_REQUIRE(product_i64(f, 4, &ke));
            ve = ke;
        }
    }
    int64_t bytes;
    SIZE_REQUIRE(pa_mul_i64(ke, (int64_t)pa_dtype_size(c->dtype), &bytes));
    if (key_elems)
        *key_elems = ke;
    if (value_elems)
        *value_elems = ve;
    return PA_SUCCESS;
}

#undef SIZE_REQUIRE

pa_status pa_kv_cache_validate(const pa_kv_cache *c) { return check_and_size(c, NULL, NULL); }

pa_status pa_kv_cache_elements(const pa_kv_cache *c, int64_t *key_elems, int64_t *value_elems) {
    PA_TRY(check_and_size(c, key_elems, value_elems));
    pa_clear_error();
    return PA_SUCCESS;
}

/* ---- host-side values the CPU references read ------------------------------- */

pa_status pa_check_host_kv_scales(const char *who, const pa_kv_cache *kv) {
    if (!pa_dtype_is_fp8(kv->dtype))
        return PA_SUCCESS;                                        /* the scales apply to fp8 caches only */
    const int32_t n = kv->scales_per_head ? kv->num_kv_heads : 1; /* one per KV head, or one */
    for (int32_t h = 0; h < n; h++) {
        PA_REQUIRE(kv->k_scale == NULL || (isfinite(kv->k_scale[h]) && kv->k_scale[h] > 0.0f),
                   "%s: fp8 k_scale[%d] = %g must be finite and > 0", who, (int)h, (double)kv->k_scale[h]);
        PA_REQUIRE(kv->v_scale == NULL || (isfinite(kv->v_scale[h]) && kv->v_scale[h] > 0.0f),
                   "%s: fp8 v_scale[%d] = %g must be finite and > 0", who, (int)h, (double)kv->v_scale[h]);
    }
    return PA_SUCCESS;
}

int pa_kv_cache_spans(const pa_kv_cache *kv, const char *prefix, pa_span *s) {
    const int c = prefix[0] == 'c'; /* "cache", else "kv" */
    static const char *const names[2][4] = {{"kv.key", "kv.value", "kv.k_scale", "kv.v_scale"},
                                            {"cache.key", "cache.value", "cache.k_scale", "cache.v_scale"}};
    int64_t ke = 0, ve = 0, kb = INT64_MAX, vb = INT64_MAX;
    if (pa_kv_cache_elements(kv, &ke, &ve) == PA_SUCCESS) { /* validated: it fits */
        kb = ke * (int64_t)pa_dtype_size(kv->dtype);
        vb = ve * (int64_t)pa_dtype_size(kv->dtype);
    }
    int n = 0;
    s[n++] = (pa_span){names[c][0], kv->key, kb, NULL};
    if (kv->layout != PA_LAYOUT_COMBINED)
        s[n++] = (pa_span){names[c][1], kv->value, vb, NULL};
    if (pa_dtype_is_fp8(kv->dtype)) {
        const int64_t sb = (kv->scales_per_head ? (int64_t)kv->num_kv_heads : 1) * (int64_t)sizeof(float);
        s[n++] = (pa_span){names[c][2], kv->k_scale, sb, NULL};
        s[n++] = (pa_span){names[c][3], kv->v_scale, sb, NULL};
    }
    return n;
}

pa_status pa_check_kv_scale_pointers(const char *op, const pa_kv_cache *kv, const char *k_name, const char *v_name) {
    if (!pa_dtype_is_fp8(kv->dtype))
        return PA_SUCCESS;
    PA_TRY(pa_check_aligned(op, k_name, kv->k_scale, sizeof(float)));
    return pa_check_aligned(op, v_name, kv->v_scale, sizeof(float));
}

pa_status pa_check_host_alibi(const char *who, const float *slopes, int32_t num_heads) {
    if (slopes == NULL)
        return PA_SUCCESS;
    for (int32_t h = 0; h < num_heads; h++)
        PA_REQUIRE(isfinite(slopes[h]), "%s: alibi_slopes[%d] = %g must be finite", who, (int)h, (double)slopes[h]);
    return PA_SUCCESS;
}

pa_status pa_check_host_sinks(const char *who, const float *sinks, int32_t num_heads) {
    if (sinks == NULL)
        return PA_SUCCESS;
    for (int32_t h = 0; h < num_heads; h++)
        PA_REQUIRE(!isnan(sinks[h]), "%s: sinks[%d] is NaN", who, (int)h);
    return PA_SUCCESS;
}
