/* Cache ops: validation of everything the host can see, shared by the GPU entries
 * (csrc/ops/cache_ops.c) and the CPU references (csrc/reference/cache_ops.c), plus the
 * launcher parameter blocks and the swap run planner. Host library: no CUDA. */
#include <stdint.h>

#include "cache_ops_internal.h"
#include "internal.h"

/* Input -> cache dtype pairs the cache kernels are instantiated for. */
static int pair_supported(pa_dtype in, pa_dtype cache) {
    return in == cache || (pa_is_float_dtype(in) && pa_dtype_is_fp8(cache));
}

static int aligned(const void *p, int64_t bytes) { return ((uintptr_t)p % (uintptr_t)bytes) == 0; }

/* The cache's pointers: its buffers aligned to the element, the fp8 scales to
 * floats; and a token's row small enough for the launchers' int arithmetic
 * (chunks of a row, threads per token). */
static pa_status check_cache_pointers(const char *op, const pa_kv_cache *c) {
    const size_t esz = pa_dtype_size(c->dtype);
    PA_TRY(pa_check_aligned(op, "cache key", c->key, esz));
    PA_TRY(pa_check_aligned(op, "cache value", c->layout == PA_LAYOUT_COMBINED ? NULL : c->value, esz));
    PA_TRY(pa_check_kv_scale_pointers(op, c, "k_scale", "v_scale"));
    if ((int64_t)c->num_kv_heads * c->head_size > (1 << 24))
        return pa_fail(PA_ERR_UNSUPPORTED, "%s: a token's row of %d KV heads x %d elements is above 2^24 elements", op,
                       c->num_kv_heads, c->head_size);
    return PA_SUCCESS;
}

static pa_kv_geom geom_of(const pa_kv_cache *c) {
    return pa_kv_geom_make(c->layout, (int32_t)pa_dtype_size(c->dtype), c->block_size, c->num_kv_heads, c->head_size,
                           c->block_stride, c->page_stride, c->head_stride);
}

/* An input view [num_tokens, nh, hs] with token / head strides (0 =
 * contiguous): *ext gets its extent in elements, first to one past the last
 * one read (0 without tokens). 0 where a resolved stride or the extent passes
 * int64. */
static int view_elems(int64_t num_tokens, int64_t tok_stride, int64_t head_stride, int64_t nh, int64_t hs,
                      int64_t *ext) {
    const int64_t h = head_stride ? head_stride : hs;
    int64_t t = tok_stride, a = 0, b = 0;
    *ext = 0;
    int ok = tok_stride != 0 || pa_mul_i64(nh, h, &t);
    if (ok && num_tokens > 0)
        ok = pa_mul_i64(num_tokens - 1, t, &a) && pa_mul_i64(nh - 1, h, &b) && pa_add_i64(a, b, ext) &&
             pa_add_i64(*ext, hs, ext);
    return ok;
}

/* The resolved strides and the extent must fit in int64, so no index computed
 * from them wraps. */
static pa_status check_view(const char *op, const char *name, int64_t num_tokens, int64_t tok_stride,
                            int64_t head_stride, int64_t nh, int64_t hs) {
    int64_t ext;
    PA_REQUIRE(view_elems(num_tokens, tok_stride, head_stride, nh, hs, &ext),
               "%s: %s view of %lld tokens with strides %lld/%lld overflows int64", op, name, (long long)num_tokens,
               (long long)tok_stride, (long long)head_stride);
    return PA_SUCCESS;
}

/* The view's bytes (checked by check_view), INT64_MAX where they pass int64. */
static int64_t view_bytes(int64_t num_tokens, int64_t tok_stride, int64_t head_stride, int64_t nh, int64_t hs,
                          size_t esz) {
    int64_t ext, bytes;
    return view_elems(num_tokens, tok_stride, head_stride, nh, hs, &ext) && pa_mul_i64(ext, (int64_t)esz, &bytes)
               ? bytes
               : INT64_MAX;
}

/* Floor of a / b, b > 0. */
static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* Whether two copies of one strided view, the second d bytes after the first,
 * share a byte: some difference of element starts sum_i k_i T[i] (|k_i| <=
 * n[i] - 1, T in bytes, outermost first) lies within E (a head's bytes) of d.
 * Each stride is at least the extent of the levels inside it (validated), so
 * at each level only k = floor(d / T) and the next can come within that
 * extent: at most 2^levels paths. */
static int views_share_bytes(int64_t d, const int64_t *T, const int64_t *n, int levels, int64_t E) {
    if (levels == 0)
        return d > -E && d < E;
    int64_t reach = E; /* the inner levels' extent, in bytes: what a remainder must stay within */
    for (int j = 1; j < levels; j++)
        reach += (n[j] - 1) * T[j];
    const int64_t k0 = n[0] == 1 ? 0 : floor_div(d, T[0]);
    for (int64_t k = k0; k <= k0 + (n[0] == 1 ? 0 : 1); k++) {
        if (k < -(n[0] - 1) || k > n[0] - 1)
            continue;
        const int64_t r = d - k * T[0];
        if (r > -reach && r < reach && views_share_bytes(r, T + 1, n + 1, levels - 1, E))
            return 1;
    }
    return 0;
}

/* Whether a validated cache's key and value buffers (their spans k and v,
 * from pa_kv_cache_spans) share a byte. The vLLM layout's buffers are
 * contiguous; a flash layout's are two views of one geometry, which may
 * interleave without sharing (the halves of a [num_blocks, 2, ...] tensor) or
 * not. Spans apart never share. */
static int key_value_share_bytes(const pa_kv_cache *c, const pa_span *k, const pa_span *v) {
    if (!pa_ranges_overlap(k->p, k->bytes, v->p, v->bytes))
        return 0;
    if (c->layout == PA_LAYOUT_VLLM)
        return 1;
    const int64_t es = (int64_t)pa_dtype_size(c->dtype);
    const pa_kv_geom g = geom_of(c);
    const int64_t d = (int64_t)((intptr_t)c->value - (intptr_t)c->key);
    const int nhd = c->layout == PA_LAYOUT_FLASH_NHD;
    const int64_t T[3] = {g.block_stride * es, (nhd ? g.page_stride : g.head_stride) * es,
                          (nhd ? g.head_stride : g.page_stride) * es};
    const int64_t n[3] = {c->num_blocks, nhd ? c->block_size : c->num_kv_heads, nhd ? c->num_kv_heads : c->block_size};
    return views_share_bytes(d, T, n, 3, (int64_t)c->head_size * es);
}

/* A cache write's output, the cache's key buffer and its value buffer (each on
 * its own: they may interleave block by block, as a [blocks, 2, ...] cache's
 * do), shares no byte with what the kernel reads: in[0..ni) and the fp8
 * scales (in has room for two more). Other tokens' rows are read while a
 * token's are written. */
static pa_status cache_writes_apart(const char *op, const pa_kv_cache *c, pa_span *in, int ni) {
    pa_span cs[4];
    const int n = pa_kv_cache_spans(c, "cache", cs), nbuf = c->layout == PA_LAYOUT_COMBINED ? 1 : 2;
    /* One buffer for both (a key view passed twice; named as such), or views of
     * one buffer that share some bytes (value a head or a token after key):
     * some value lands on a key. Views that interleave without sharing (a
     * [num_blocks, 2, ...] tensor's halves) pass. */
    PA_REQUIRE(nbuf == 1 || c->key != c->value,
               "%s: cache.key and cache.value are the same buffer (%p); each value would overwrite its key", op,
               c->key);
    PA_REQUIRE(nbuf == 1 || !key_value_share_bytes(c, &cs[0], &cs[1]),
               "%s: cache.key (%p) and cache.value (%p) share bytes (views of one buffer that overlap); some value "
               "would overwrite a key",
               op, c->key, c->value);
    for (int i = nbuf; i < n; i++)
        in[ni++] = cs[i];
    for (int i = 0; i < nbuf; i++)
        PA_TRY(pa_check_spans_apart(op, in, ni, &cs[i], 1));
    return PA_SUCCESS;
}

pa_status pa_reshape_and_cache_validate(const pa_kv_input *in, const int64_t *slot_mapping, const pa_kv_cache *cache) {
    PA_REQUIRE(in != NULL, "reshape_and_cache: input descriptor is NULL");
    PA_TRY(pa_kv_cache_validate(cache));
    PA_REQUIRE(pa_is_valid_dtype(in->dtype), "reshape_and_cache: input dtype %d unknown", (int)in->dtype);
    PA_REQUIRE(pa_is_float_dtype(in->dtype), "reshape_and_cache: input dtype %s must be f32, f16 or bf16",
               pa_dtype_name(in->dtype));
    PA_REQUIRE(in->num_tokens >= 0 && in->num_tokens <= INT32_MAX,
               "reshape_and_cache: num_tokens %lld out of range [0, 2^31)", (long long)in->num_tokens);
    PA_REQUIRE(in->key_token_stride >= 0, "reshape_and_cache: key_token_stride must be >= 0 (got %lld)",
               (long long)in->key_token_stride);
    PA_REQUIRE(in->key_head_stride >= 0, "reshape_and_cache: key_head_stride must be >= 0 (got %lld)",
               (long long)in->key_head_stride);
    PA_REQUIRE(in->value_token_stride >= 0, "reshape_and_cache: value_token_stride must be >= 0 (got %lld)",
               (long long)in->value_token_stride);
    PA_REQUIRE(in->value_head_stride >= 0, "reshape_and_cache: value_head_stride must be >= 0 (got %lld)",
               (long long)in->value_head_stride);
    PA_TRY(check_view("reshape_and_cache", "key", in->num_tokens, in->key_token_stride, in->key_head_stride,
                      cache->num_kv_heads, cache->head_size));
    PA_TRY(check_view("reshape_and_cache", "value", in->num_tokens, in->value_token_stride, in->value_head_stride,
                      cache->num_kv_heads, cache->head_size));
    if (in->num_tokens > 0) {
        PA_REQUIRE(in->key != NULL, "reshape_and_cache: key is NULL");
        PA_REQUIRE(in->value != NULL, "reshape_and_cache: value is NULL");
        PA_REQUIRE(slot_mapping != NULL, "reshape_and_cache: slot_mapping is NULL");
    }
    PA_TRY(pa_check_aligned("reshape_and_cache", "key", in->key, pa_dtype_size(in->dtype)));
    PA_TRY(pa_check_aligned("reshape_and_cache", "value", in->value, pa_dtype_size(in->dtype)));
    PA_TRY(pa_check_aligned("reshape_and_cache", "slot_mapping", slot_mapping, sizeof(int64_t)));
    PA_TRY(check_cache_pointers("reshape_and_cache", cache));
    if (!pair_supported(in->dtype, cache->dtype))
        return pa_fail(PA_ERR_UNSUPPORTED,
                       "reshape_and_cache: input dtype %s with cache dtype %s unsupported; supported: the same "
                       "dtype, or f32/f16/bf16 into an fp8 cache",
                       pa_dtype_name(in->dtype), pa_dtype_name(cache->dtype));
    if (in->num_tokens == 0)
        return PA_SUCCESS;
    const size_t isz = pa_dtype_size(in->dtype);
    const int64_t nh = cache->num_kv_heads, hs = cache->head_size;
    pa_span rd[5] = {
        {"key", in->key, view_bytes(in->num_tokens, in->key_token_stride, in->key_head_stride, nh, hs, isz), NULL},
        {"value", in->value, view_bytes(in->num_tokens, in->value_token_stride, in->value_head_stride, nh, hs, isz),
         NULL},
        {"slot_mapping", slot_mapping, in->num_tokens * (int64_t)sizeof(int64_t), NULL}};
    return cache_writes_apart("reshape_and_cache", cache, rd, 3);
}

pa_status pa_kv_cache_update_validate(const void *new_kv, pa_dtype new_kv_dtype, int64_t num_tokens,
                                      int64_t new_kv_token_stride, const int32_t *slices, const int32_t *num_slices,
                                      int32_t num_slices_padded, const pa_kv_cache *cache) {
    PA_TRY(pa_kv_cache_validate(cache));
    if (cache->layout != PA_LAYOUT_COMBINED)
        return pa_fail(PA_ERR_UNSUPPORTED, "kv_cache_update: cache layout %s unsupported; only combined",
                       pa_kv_layout_name(cache->layout));
    PA_REQUIRE(pa_is_valid_dtype(new_kv_dtype), "kv_cache_update: new_kv_dtype %d unknown", (int)new_kv_dtype);
    PA_REQUIRE(num_tokens >= 0, "kv_cache_update: num_tokens must be >= 0 (got %lld)", (long long)num_tokens);
    PA_REQUIRE(new_kv_token_stride >= 0, "kv_cache_update: new_kv_token_stride must be >= 0 (got %lld)",
               (long long)new_kv_token_stride);
    PA_REQUIRE(num_slices_padded >= 0, "kv_cache_update: slices_capacity must be >= 0 (got %d)", num_slices_padded);
    {
        /* rows of 2 * kvh heads; the extent of new_kv must fit in int64 */
        const int64_t row = 2 * (int64_t)cache->num_kv_heads * cache->head_size; /* fits: the cache validated */
        const int64_t ts = new_kv_token_stride ? new_kv_token_stride : row;
        int64_t ext = 0;
        PA_REQUIRE(num_tokens == 0 || (pa_mul_i64(num_tokens - 1, ts, &ext) && pa_add_i64(ext, row, &ext)),
                   "kv_cache_update: new_kv of %lld tokens with token stride %lld overflows int64",
                   (long long)num_tokens, (long long)new_kv_token_stride);
    }
    if (num_slices_padded > 0) {
        PA_REQUIRE(slices != NULL, "kv_cache_update: slices is NULL");
        PA_REQUIRE(num_slices != NULL, "kv_cache_update: num_slices is NULL");
    }
    if (num_tokens > 0)
        PA_REQUIRE(new_kv != NULL, "kv_cache_update: new_kv is NULL");
    PA_TRY(pa_check_aligned("kv_cache_update", "new_kv", new_kv, pa_dtype_size(new_kv_dtype)));
    PA_TRY(pa_check_aligned("kv_cache_update", "slices", slices, sizeof(int32_t)));
    PA_TRY(pa_check_aligned("kv_cache_update", "num_slices", num_slices, sizeof(int32_t)));
    PA_TRY(check_cache_pointers("kv_cache_update", cache));
    if (!pair_supported(new_kv_dtype, cache->dtype))
        return pa_fail(PA_ERR_UNSUPPORTED,
                       "kv_cache_update: new_kv dtype %s with cache dtype %s unsupported; supported: the same "
                       "dtype, or f32/f16/bf16 into an fp8 cache",
                       pa_dtype_name(new_kv_dtype), pa_dtype_name(cache->dtype));
    if (num_slices_padded == 0)
        return PA_SUCCESS; /* nothing is read or written */
    const int64_t row = 2 * (int64_t)cache->num_kv_heads * cache->head_size;
    pa_span rd[5] = {
        {"new_kv", new_kv, pa_rows_bytes(num_tokens, new_kv_token_stride, row, pa_dtype_size(new_kv_dtype)), NULL},
        {"slices", slices, 3 * (int64_t)num_slices_padded * (int64_t)sizeof(int32_t), NULL},
        {"num_slices", num_slices, (int64_t)sizeof(int32_t), NULL}};
    return cache_writes_apart("kv_cache_update", cache, rd, 3);
}

pa_status pa_swap_blocks_validate(void *dst, const void *src, int64_t block_bytes, const int64_t *block_mapping,
                                  int64_t num_pairs, int64_t src_num_blocks, int64_t dst_num_blocks) {
    PA_REQUIRE(block_bytes > 0, "swap_blocks: block_bytes must be > 0 (got %lld)", (long long)block_bytes);
    PA_REQUIRE(num_pairs >= 0, "swap_blocks: num_pairs must be >= 0 (got %lld)", (long long)num_pairs);
    if (num_pairs == 0)
        return PA_SUCCESS;
    PA_REQUIRE(dst != NULL, "swap_blocks: dst is NULL");
    PA_REQUIRE(src != NULL, "swap_blocks: src is NULL");
    PA_REQUIRE(block_mapping != NULL, "swap_blocks: block_mapping is NULL");
    PA_REQUIRE(src_num_blocks > 0 && block_bytes <= INT64_MAX / src_num_blocks,
               "swap_blocks: src_num_blocks %lld invalid (must be > 0, total bytes within int64)",
               (long long)src_num_blocks);
    PA_REQUIRE(dst_num_blocks > 0 && block_bytes <= INT64_MAX / dst_num_blocks,
               "swap_blocks: dst_num_blocks %lld invalid (must be > 0, total bytes within int64)",
               (long long)dst_num_blocks);
    for (int64_t i = 0; i < num_pairs; i++) {
        const int64_t s = block_mapping[2 * i], d = block_mapping[2 * i + 1];
        PA_REQUIRE(s >= 0 && s < src_num_blocks,
                   "swap_blocks: block_mapping[%lld] src block %lld out of range [0, %lld)", (long long)i, (long long)s,
                   (long long)src_num_blocks);
        PA_REQUIRE(d >= 0 && d < dst_num_blocks,
                   "swap_blocks: block_mapping[%lld] dst block %lld out of range [0, %lld)", (long long)i, (long long)d,
                   (long long)dst_num_blocks);
    }
    /* (the products fit: checked above) */
    PA_REQUIRE(!pa_ranges_overlap(src, src_num_blocks * block_bytes, dst, dst_num_blocks * block_bytes),
               "swap_blocks: the src buffer (%p, %lld blocks) and the dst buffer (%p, %lld blocks) overlap; they must "
               "be distinct buffers (pa_copy_blocks copies blocks within one)",
               src, (long long)src_num_blocks, (void *)dst, (long long)dst_num_blocks);
    /* A mapping inside dst (pinned host memory) would be overwritten while its
     * later pairs are still to be read. */
    PA_REQUIRE(!pa_ranges_overlap(block_mapping, pa_block_mapping_bytes(num_pairs), dst, dst_num_blocks * block_bytes),
               "swap_blocks: block_mapping (%p, %lld pairs) lies in the dst buffer; it must be apart from what the "
               "copies write",
               (const void *)block_mapping, (long long)num_pairs);
    return PA_SUCCESS;
}

/* Bytes of one block of one buffer when blocks tile the buffer exactly. */
pa_status pa_swap_blocks_kv_bytes(const pa_kv_cache *dst, const pa_kv_cache *src, int64_t *block_bytes) {
    PA_TRY(pa_kv_cache_validate(dst));
    PA_TRY(pa_kv_cache_validate(src));
    /* The geometry as resolved: strides of 0 and the same strides written out
     * (a pinned host cache and a torch view of the device one) are one geometry. */
    const pa_kv_geom gd = geom_of(dst), gs = geom_of(src);
    PA_REQUIRE(dst->layout == src->layout && dst->dtype == src->dtype && dst->block_size == src->block_size &&
                   dst->num_kv_heads == src->num_kv_heads && dst->head_size == src->head_size &&
                   gd.block_stride == gs.block_stride && gd.page_stride == gs.page_stride &&
                   gd.head_stride == gs.head_stride,
               "swap_blocks_kv: src and dst caches differ in layout, dtype or block geometry");
    int64_t elems = 0;
    PA_TRY(pa_kv_cache_elements(src, &elems, NULL));
    const int64_t per_block = geom_of(src).block_stride;
    int64_t tiled = 0;
    if (!pa_mul_i64(per_block, src->num_blocks, &tiled) || tiled != elems)
        return pa_fail(PA_ERR_UNSUPPORTED,
                       "swap_blocks_kv: blocks of this strided cache view do not tile the buffer; swap each buffer "
                       "with pa_swap_blocks");
    *block_bytes = per_block * (int64_t)pa_dtype_size(src->dtype);
    return PA_SUCCESS;
}

pa_status pa_copy_blocks_validate(const void *key_caches, int32_t num_layers, const void *block_mapping,
                                  int64_t num_pairs, int64_t numel_per_block, pa_dtype dtype, int64_t num_blocks) {
    PA_REQUIRE(num_layers >= 0, "copy_blocks: num_layers must be >= 0 (got %d)", num_layers);
    PA_REQUIRE(num_pairs >= 0 && num_pairs <= INT32_MAX, "copy_blocks: num_pairs %lld out of range [0, 2^31)",
               (long long)num_pairs);
    PA_REQUIRE(pa_is_valid_dtype(dtype), "copy_blocks: dtype %d unknown", (int)dtype);
    PA_REQUIRE(numel_per_block > 0, "copy_blocks: numel_per_block must be > 0 (got %lld)", (long long)numel_per_block);
    /* Counted at 8 bytes an element whatever the dtype: headroom for the
     * kernel's byte loops (i + blockDim.x past the block) in int64. */
    PA_REQUIRE(num_blocks > 0 && numel_per_block <= INT64_MAX / 8 / num_blocks,
               "copy_blocks: num_blocks %lld invalid (must be > 0, num_blocks x numel_per_block x 8 within int64)",
               (long long)num_blocks);
    if (num_layers > 0 && num_pairs > 0) {
        PA_REQUIRE(key_caches != NULL, "copy_blocks: key_caches is NULL");
        PA_REQUIRE(block_mapping != NULL, "copy_blocks: block_mapping is NULL");
    }
    PA_TRY(pa_check_aligned("copy_blocks", "key_caches", key_caches, sizeof(uint64_t)));
    PA_TRY(pa_check_aligned("copy_blocks", "block_mapping", block_mapping, sizeof(int64_t)));
    if (num_layers > 65535)
        return pa_fail(PA_ERR_UNSUPPORTED, "copy_blocks: num_layers %d above the grid limit 65535", num_layers);
    return PA_SUCCESS;
}

pa_status pa_swap_plan_runs(const int64_t *block_mapping, int64_t num_pairs, pa_block_run *runs, int64_t max_runs,
                            int64_t *num_runs) {
    PA_REQUIRE(num_pairs >= 0, "swap_plan_runs: num_pairs must be >= 0 (got %lld)", (long long)num_pairs);
    PA_REQUIRE(num_pairs == 0 || block_mapping != NULL, "swap_plan_runs: block_mapping is NULL");
    PA_REQUIRE(max_runs >= 0, "swap_plan_runs: max_runs must be >= 0 (got %lld)", (long long)max_runs);
    PA_REQUIRE(max_runs == 0 || runs != NULL, "swap_plan_runs: runs is NULL");
    PA_REQUIRE(num_runs != NULL, "swap_plan_runs: num_runs is NULL");
    int64_t n = 0;
    for (int64_t i = 0; i < num_pairs;) {
        pa_block_run r = pa_swap_next_run(block_mapping, num_pairs, &i);
        if (n < max_runs)
            runs[n] = r;
        n++;
    }
    *num_runs = n;
    pa_clear_error();
    return PA_SUCCESS;
}

/* ---- launcher parameter blocks -------------------------------------------- */

void pa_rc_params_make(pa_rc_params *p, const pa_kv_input *in, const int64_t *slot_mapping, const pa_kv_cache *cache) {
    const int64_t hs = cache->head_size, nh = cache->num_kv_heads;
    p->key = in->key;
    p->value = in->value;
    p->key_cache = cache->key;
    p->value_cache = cache->layout == PA_LAYOUT_COMBINED ? cache->key : cache->value;
    p->slot_mapping = slot_mapping;
    p->k_scale = pa_kv_scale_ptr(cache, cache->k_scale);
    p->v_scale = pa_kv_scale_ptr(cache, cache->v_scale);
    p->scale_hs = cache->scales_per_head ? 1 : 0;
    p->num_tokens = in->num_tokens;
    p->num_slots = (int64_t)cache->num_blocks * cache->block_size;
    p->k_head_stride = in->key_head_stride ? in->key_head_stride : hs;
    p->k_tok_stride = in->key_token_stride ? in->key_token_stride : nh * p->k_head_stride;
    p->v_head_stride = in->value_head_stride ? in->value_head_stride : hs;
    p->v_tok_stride = in->value_token_stride ? in->value_token_stride : nh * p->v_head_stride;
    p->g = geom_of(cache);
    /* A chunk is 16 bytes of input: VEC elements, all in one head (and, for the
     * vLLM key, in one x group since x = 16 / cache elt >= VEC). */
    const int64_t isz = (int64_t)pa_dtype_size(in->dtype), csz = (int64_t)pa_dtype_size(cache->dtype);
    const int64_t vec = 16 / isz;
    p->vec_in = hs % vec == 0 && aligned(in->key, 16) && aligned(in->value, 16) && p->k_tok_stride % vec == 0 &&
                p->k_head_stride % vec == 0 && p->v_tok_stride % vec == 0 && p->v_head_stride % vec == 0;
    p->vec_out = hs % vec == 0 && aligned(p->key_cache, vec * csz) && aligned(p->value_cache, vec * csz) &&
                 p->g.block_stride % vec == 0 && p->g.head_stride % vec == 0 &&
                 (cache->layout == PA_LAYOUT_VLLM || p->g.page_stride % vec == 0);
}

void pa_kvu_params_make(pa_kvu_params *p, const void *new_kv, pa_dtype new_kv_dtype, int64_t num_tokens,
                        int64_t new_kv_token_stride, const int32_t *slices, const int32_t *num_slices,
                        int32_t num_slices_padded, const pa_kv_cache *cache) {
    const int64_t row = 2 * (int64_t)cache->num_kv_heads * cache->head_size, hs = cache->head_size;
    p->new_kv = new_kv;
    p->cache = cache->key;
    p->slices = slices;
    p->num_slices = num_slices;
    p->k_scale = pa_kv_scale_ptr(cache, cache->k_scale);
    p->v_scale = pa_kv_scale_ptr(cache, cache->v_scale);
    p->scale_hs = cache->scales_per_head ? 1 : 0;
    p->num_tokens = num_tokens;
    p->tok_stride = new_kv_token_stride ? new_kv_token_stride : row;
    p->num_rows = (int64_t)cache->num_blocks * cache->block_size;
    p->num_slices_padded = num_slices_padded;
    p->g = geom_of(cache);
    const int64_t isz = (int64_t)pa_dtype_size(new_kv_dtype), csz = (int64_t)pa_dtype_size(cache->dtype);
    const int64_t vec = 16 / isz;
    p->vec_in = hs % vec == 0 && aligned(new_kv, 16) && p->tok_stride % vec == 0;
    p->vec_out = hs % vec == 0 && aligned(cache->key, vec * csz);
}
