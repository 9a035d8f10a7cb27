/* CPU references for the cache ops: plain loops over host memory. These are the
 * specification the kernels are tested against byte for byte. Each checks the
 * per-step data (slots, slices, pairs) up front and writes nothing on error. */
#include <stdlib.h>
#include <string.h>

#include "cache_ops_internal.h"
#include "internal.h"

/* One element into the cache: bytes unchanged for the same dtype, else
 * sat(x / scale) into fp8 (the only other pair the validators accept). */
static void put(pa_dtype cdt, void *cache, int64_t coff, pa_dtype idt, const void *in, int64_t ioff, float scale) {
    const size_t cs = pa_dtype_size(cdt), is = pa_dtype_size(idt);
    if (cdt == idt) {
        memcpy((char *)cache + (size_t)coff * cs, (const char *)in + (size_t)ioff * is, cs);
        return;
    }
    float v = pa_load_as_float(idt, in, (size_t)ioff);
    pa_store_from_float(cdt, cache, (size_t)coff, v / scale);
}

/* The device writes the tokens, slices and pairs of one call in parallel, so
 * two of them that write one place leave it holding either's bytes, or a mix
 * (cache_ops.h): the references refuse such a call, naming both, before
 * writing anything. Entries are (place, index); a slice's place is its first
 * row and `len` its rows (NULL: one place each). O(n log n). */
typedef struct keyed {
    int64_t key, idx, len;
} keyed;

static int cmp_keyed(const void *a, const void *b) {
    const keyed *x = a, *y = b;
    return x->key != y->key ? (x->key < y->key ? -1 : 1) : (x->idx > y->idx) - (x->idx < y->idx);
}

/* 1 with *first < *second the indices of two entries whose places meet, 0 if
 * none meet; sorts e. */
static int places_meet(keyed *e, int64_t n, int64_t *first, int64_t *second) {
    qsort(e, (size_t)n, sizeof *e, cmp_keyed);
    for (int64_t k = 0; k + 1 < n; k++)
        if (e[k + 1].key < e[k].key + e[k].len) {
            *first = e[k].idx < e[k + 1].idx ? e[k].idx : e[k + 1].idx;
            *second = e[k].idx < e[k + 1].idx ? e[k + 1].idx : e[k].idx;
            return 1;
        }
    return 0;
}

pa_status pa_ref_reshape_and_cache(const pa_kv_input *in, const int64_t *slot_mapping, const pa_kv_cache *cache) {
    PA_TRY(pa_reshape_and_cache_validate(in, slot_mapping, cache));
    pa_rc_params p;
    pa_rc_params_make(&p, in, slot_mapping, cache);
    for (int64_t t = 0; t < in->num_tokens; t++) {
        const int64_t s = slot_mapping[t];
        PA_REQUIRE(s >= -1 && s < p.num_slots,
                   "reshape_and_cache: slot_mapping[%lld] = %lld (token %lld) out of range [-1, %lld)", (long long)t,
                   (long long)s, (long long)t, (long long)p.num_slots);
    }
    {
        keyed *e = malloc(sizeof(keyed) * (size_t)(in->num_tokens > 0 ? in->num_tokens : 1));
        if (!e)
            return pa_fail(PA_ERR_INTERNAL, "reshape_and_cache reference: out of host memory");
        int64_t n = 0, a = 0, b = 0;
        for (int64_t t = 0; t < in->num_tokens; t++)
            if (slot_mapping[t] >= 0)
                e[n++] = (keyed){slot_mapping[t], t, 1};
        const int meet = places_meet(e, n, &a, &b);
        free(e);
        if (meet)
            return pa_fail(PA_ERR_INVALID_ARGUMENT,
                           "reshape_and_cache: tokens %lld and %lld both name slot %lld; a slot takes one token a "
                           "call (the device writes tokens in parallel)",
                           (long long)a, (long long)b, (long long)slot_mapping[a]);
    }
    PA_TRY(pa_check_host_kv_scales("reshape_and_cache", cache));
    const int32_t bs = cache->block_size;
    for (int64_t t = 0; t < in->num_tokens; t++) {
        const int64_t s = slot_mapping[t];
        if (s < 0)
            continue; /* padding */
        const int64_t blk = s / bs;
        const int32_t off = (int32_t)(s % bs);
        for (int32_t h = 0; h < cache->num_kv_heads; h++) {
            const float ks = pa_host_kv_scale(cache, cache->k_scale, h);
            const float vs = pa_host_kv_scale(cache, cache->v_scale, h);
            for (int32_t d = 0; d < cache->head_size; d++) {
                put(cache->dtype, p.key_cache, pa_kv_key_offset(&p.g, blk, h, off, d), in->dtype, in->key,
                    t * p.k_tok_stride + h * p.k_head_stride + d, ks);
                put(cache->dtype, p.value_cache, pa_kv_value_offset(&p.g, blk, h, off, d), in->dtype, in->value,
                    t * p.v_tok_stride + h * p.v_head_stride + d, vs);
            }
        }
    }
    pa_clear_error();
    return PA_SUCCESS;
}

pa_status pa_ref_kv_cache_update(const void *new_kv, pa_dtype new_kv_dtype, int64_t num_tokens,
                                 int64_t new_kv_token_stride, const int32_t *slices, const int32_t *num_slices,
                                 int32_t num_slices_padded, const pa_kv_cache *cache) {
    PA_TRY(pa_kv_cache_update_validate(new_kv, new_kv_dtype, num_tokens, new_kv_token_stride, slices, num_slices,
                                       num_slices_padded, cache));
    if (num_slices_padded == 0) {
        pa_clear_error();
        return PA_SUCCESS;
    }
    pa_kvu_params p;
    pa_kvu_params_make(&p, new_kv, new_kv_dtype, num_tokens, new_kv_token_stride, slices, num_slices, num_slices_padded,
                       cache);
    const int32_t n = *num_slices, np = num_slices_padded, bs = cache->block_size;
    PA_REQUIRE(n >= 0 && n <= np, "kv_cache_update: *num_slices = %d out of range [0, slices_capacity = %d]", n, np);
    for (int32_t i = 0; i < n; i++) {
        const int64_t cs = slices[i], ns = slices[(int64_t)np + i], len = slices[2 * (int64_t)np + i];
        PA_REQUIRE(len >= 0 && len <= bs, "kv_cache_update: slice %d length %lld out of range [0, page size %d]", i,
                   (long long)len, bs);
        if (len == 0)
            continue; /* padding slice */
        PA_REQUIRE(cs >= 0 && cs + len <= p.num_rows,
                   "kv_cache_update: slice %d kv_cache_start %lld + len %lld outside the cache's %lld rows", i,
                   (long long)cs, (long long)len, (long long)p.num_rows);
        PA_REQUIRE(ns >= 0 && ns + len <= num_tokens,
                   "kv_cache_update: slice %d new_kv_start %lld + len %lld outside new_kv's %lld tokens", i,
                   (long long)ns, (long long)len, (long long)num_tokens);
    }
    {
        keyed *e = malloc(sizeof(keyed) * (size_t)(n > 0 ? n : 1));
        if (!e)
            return pa_fail(PA_ERR_INTERNAL, "kv_cache_update reference: out of host memory");
        int64_t m = 0, a = 0, b = 0;
        for (int32_t i = 0; i < n; i++)
            if (slices[2 * (int64_t)np + i] > 0)
                e[m++] = (keyed){slices[i], i, slices[2 * (int64_t)np + i]};
        const int meet = places_meet(e, m, &a, &b);
        free(e);
        if (meet)
            return pa_fail(PA_ERR_INVALID_ARGUMENT,
                           "kv_cache_update: slices %lld and %lld write a cache row in common; each row takes one "
                           "slice a call (the device writes slices in parallel)",
                           (long long)a, (long long)b);
    }
    PA_TRY(pa_check_host_kv_scales("kv_cache_update", cache));
    const int32_t hs = cache->head_size;
    for (int32_t i = 0; i < n; i++) {
        const int64_t cs = slices[i], ns = slices[(int64_t)np + i], len = slices[2 * (int64_t)np + i];
        for (int64_t j = 0; j < len; j++) {
            const int64_t row = cs + j, blk = row / bs;
            const int32_t tok = (int32_t)(row % bs);
            for (int32_t ch = 0; ch < 2 * cache->num_kv_heads; ch++)
                for (int32_t d = 0; d < hs; d++) {
                    const int is_v = ch & 1;
                    const int64_t coff = is_v ? pa_kv_value_offset(&p.g, blk, ch / 2, tok, d)
                                              : pa_kv_key_offset(&p.g, blk, ch / 2, tok, d);
                    put(cache->dtype, cache->key, coff, new_kv_dtype, new_kv,
                        (ns + j) * p.tok_stride + (int64_t)ch * hs + d,
                        pa_host_kv_scale(cache, is_v ? cache->v_scale : cache->k_scale, ch / 2));
                }
        }
    }
    pa_clear_error();
    return PA_SUCCESS;
}

pa_status pa_ref_swap_blocks(void *dst, const void *src, int64_t block_bytes, const int64_t *block_mapping,
                             int64_t num_pairs, int64_t src_num_blocks, int64_t dst_num_blocks) {
    PA_TRY(pa_swap_blocks_validate(dst, src, block_bytes, block_mapping, num_pairs, src_num_blocks, dst_num_blocks));
    for (int64_t i = 0; i < num_pairs; i++)
        memcpy((char *)dst + block_mapping[2 * i + 1] * block_bytes,
               (const char *)src + block_mapping[2 * i] * block_bytes, (size_t)block_bytes);
    pa_clear_error();
    return PA_SUCCESS;
}

static int cmp_i64(const void *a, const void *b) {
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* A destination that is also a source (of another pair or of its own) makes
 * the result depend on the copy order, on the device and here: cache_ops.h
 * forbids it, and the reference refuses it naming the pair (O(n log n)); so
 * does a destination two pairs name (places_meet). */
static pa_status check_dst_not_a_source(const int64_t *m, int64_t n) {
    int64_t *src = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    if (!src)
        return pa_fail(PA_ERR_INTERNAL, "copy_blocks reference: out of host memory");
    int64_t ns = 0;
    for (int64_t i = 0; i < n; i++)
        if (m[2 * i] != -1 && m[2 * i + 1] != -1)
            src[ns++] = m[2 * i];
    qsort(src, (size_t)ns, sizeof(int64_t), cmp_i64);
    for (int64_t i = 0; i < n; i++) {
        const int64_t s = m[2 * i], d = m[2 * i + 1];
        if (s == -1 || d == -1)
            continue;
        if (bsearch(&d, src, (size_t)ns, sizeof(int64_t), cmp_i64)) {
            free(src);
            return pa_fail(PA_ERR_INVALID_ARGUMENT,
                           "copy_blocks: block_mapping[%lld] = (%lld, %lld): destination %lld is also a source in "
                           "this call",
                           (long long)i, (long long)s, (long long)d, (long long)d);
        }
    }
    free(src);
    keyed *e = malloc(sizeof(keyed) * (size_t)(n > 0 ? n : 1));
    if (!e)
        return pa_fail(PA_ERR_INTERNAL, "copy_blocks reference: out of host memory");
    int64_t nd = 0, a = 0, b = 0;
    for (int64_t i = 0; i < n; i++)
        if (m[2 * i] != -1 && m[2 * i + 1] != -1)
            e[nd++] = (keyed){m[2 * i + 1], i, 1};
    const int meet = places_meet(e, nd, &a, &b);
    free(e);
    if (meet)
        return pa_fail(PA_ERR_INVALID_ARGUMENT,
                       "copy_blocks: block_mapping[%lld] and [%lld] both name destination %lld; a block takes one "
                       "pair a call (the device copies pairs in parallel)",
                       (long long)a, (long long)b, (long long)m[2 * a + 1]);
    return PA_SUCCESS;
}

static int cmp_addr(const void *a, const void *b) {
    const uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return (x > y) - (x < y);
}

/* Buffer i of the caches copy_blocks writes: key_caches[i] below num_layers,
 * value_caches[i - num_layers] from there on. */
static void *copy_buffer(void *const *key_caches, void *const *value_caches, int32_t num_layers, int64_t i) {
    return i < num_layers ? key_caches[i] : value_caches[i - num_layers];
}

/* No two of the buffers share a byte unless they are one buffer named twice
 * (the same address: every buffer is num_blocks blocks of one size, so the
 * same bytes, and its blocks are copied twice alike). A buffer that begins
 * inside another would take a copy's block into the other's live data. All
 * spans are equal, so sorted by address each buffer needs comparing only with
 * the next at another address. */
static pa_status check_layers_apart(void *const *key_caches, void *const *value_caches, int32_t num_layers,
                                    int64_t span) {
    const int64_t n = (value_caches ? 2 : 1) * (int64_t)num_layers;
    uintptr_t *at = malloc(sizeof(uintptr_t) * (size_t)n);
    if (!at)
        return pa_fail(PA_ERR_INTERNAL, "copy_blocks reference: out of host memory");
    for (int64_t i = 0; i < n; i++)
        at[i] = (uintptr_t)copy_buffer(key_caches, value_caches, num_layers, i);
    qsort(at, (size_t)n, sizeof *at, cmp_addr);
    uintptr_t lo = 0, hi = 0;
    for (int64_t i = 0; i + 1 < n && hi == 0; i++)
        if (at[i] != at[i + 1] && pa_ranges_overlap((void *)at[i], span, (void *)at[i + 1], span))
            lo = at[i], hi = at[i + 1];
    free(at);
    if (hi == 0)
        return PA_SUCCESS;
    int64_t a = 0, b = 0; /* the two buffers' first indices, for the message */
    while ((uintptr_t)copy_buffer(key_caches, value_caches, num_layers, a) != lo)
        a++;
    while ((uintptr_t)copy_buffer(key_caches, value_caches, num_layers, b) != hi)
        b++;
    const int64_t first = a < b ? a : b, second = a < b ? b : a;
    return pa_fail(PA_ERR_INVALID_ARGUMENT,
                   "copy_blocks: %s[%lld] and %s[%lld] share bytes (%lld bytes each, %llu apart); a copy in one "
                   "would write into the other's blocks (one buffer named twice is allowed)",
                   first < num_layers ? "key_caches" : "value_caches",
                   (long long)(first < num_layers ? first : first - num_layers),
                   second < num_layers ? "key_caches" : "value_caches",
                   (long long)(second < num_layers ? second : second - num_layers), (long long)span,
                   (unsigned long long)(hi - lo));
}

pa_status pa_ref_copy_blocks(void *const *key_caches, void *const *value_caches, int32_t num_layers,
                             const int64_t *block_mapping, int64_t num_pairs, int64_t numel_per_block, pa_dtype dtype,
                             int64_t num_blocks) {
    PA_TRY(
        pa_copy_blocks_validate(key_caches, num_layers, block_mapping, num_pairs, numel_per_block, dtype, num_blocks));
    if (num_layers == 0 || num_pairs == 0) {
        pa_clear_error();
        return PA_SUCCESS;
    }
    for (int32_t l = 0; l < num_layers; l++) {
        PA_REQUIRE(key_caches[l] != NULL, "copy_blocks: key_caches[%d] is NULL", l);
        PA_REQUIRE(value_caches == NULL || value_caches[l] != NULL, "copy_blocks: value_caches[%d] is NULL", l);
    }
    for (int64_t i = 0; i < num_pairs; i++) {
        const int64_t s = block_mapping[2 * i], d = block_mapping[2 * i + 1];
        if (s == -1 || d == -1)
            continue; /* padding pair */
        PA_REQUIRE(s >= 0 && s < num_blocks && d >= 0 && d < num_blocks,
                   "copy_blocks: block_mapping[%lld] = (%lld, %lld) out of range [0, %lld)", (long long)i, (long long)s,
                   (long long)d, (long long)num_blocks);
    }
    PA_TRY(check_dst_not_a_source(block_mapping, num_pairs));
    const int64_t bytes = numel_per_block * (int64_t)pa_dtype_size(dtype);
    /* The copies below read the mapping and the pointer tables as they go: none
     * may lie in a layer's buffer (cache_ops.h). (The products fit: validated.) */
    const int64_t span = bytes * num_blocks, nl = num_layers;
    for (int32_t l = 0; l < num_layers; l++)
        for (int v = 0; v < (value_caches ? 2 : 1); v++) {
            const void *buf = v ? value_caches[l] : key_caches[l];
            const char *which = v ? "value_caches" : "key_caches";
            PA_REQUIRE(!pa_ranges_overlap(block_mapping, pa_block_mapping_bytes(num_pairs), buf, span),
                       "copy_blocks: block_mapping lies in %s[%d]; it must be apart from the caches", which, l);
            PA_REQUIRE(!pa_ranges_overlap(key_caches, nl * 8, buf, span) &&
                           !(value_caches && pa_ranges_overlap(value_caches, nl * 8, buf, span)),
                       "copy_blocks: a layer pointer table lies in %s[%d]; it must be apart from the caches", which, l);
        }
    PA_TRY(check_layers_apart(key_caches, value_caches, num_layers, span));
    for (int32_t l = 0; l < num_layers; l++)
        for (int64_t i = 0; i < num_pairs; i++) {
            const int64_t s = block_mapping[2 * i], d = block_mapping[2 * i + 1];
            if (s == -1 || d == -1)
                continue;
            memcpy((char *)key_caches[l] + d * bytes, (const char *)key_caches[l] + s * bytes, (size_t)bytes);
            if (value_caches)
                memcpy((char *)value_caches[l] + d * bytes, (const char *)value_caches[l] + s * bytes, (size_t)bytes);
        }
    pa_clear_error();
    return PA_SUCCESS;
}
