/* Cache ops: public GPU entries. Validate (cache_ops_validate.c), NVTX range,
 * launch (cuda/reshape_and_cache.cu, cuda/swap_copy.cu). Nothing is launched on
 * invalid input; no allocation, sync or host<->device copy happens here. */
#include "cache_ops_internal.h"
#include "internal.h"
#include "launchers.h"

static pa_status done(int e, const char *what) {
    PA_RANGE_POP();
    if (e != 0)
        return pa_cuda_fail(e, what);
    pa_clear_error();
    return PA_SUCCESS;
}

pa_status pa_reshape_and_cache(const pa_kv_input *in, const int64_t *slot_mapping, const pa_kv_cache *cache,
                               pa_stream stream) {
    PA_TRY(pa_reshape_and_cache_validate(in, slot_mapping, cache));
    if (in->num_tokens == 0) {
        pa_clear_error();
        return PA_SUCCESS;
    }
    pa_rc_params p;
    pa_rc_params_make(&p, in, slot_mapping, cache);
    PA_TRY(pa_no_pending_cuda_error("pa_reshape_and_cache"));
    PA_RANGE_PUSH("pa_reshape_and_cache");
    return done(pa_launch_reshape_and_cache(&p, (int)in->dtype, (int)cache->dtype, stream),
                "pa_reshape_and_cache launch");
}

pa_status pa_kv_cache_update(const void *new_kv, pa_dtype new_kv_dtype, int64_t num_tokens, int64_t new_kv_token_stride,
                             const int32_t *slices, const int32_t *num_slices, int32_t num_slices_padded,
                             const pa_kv_cache *cache, pa_stream stream) {
    PA_TRY(pa_kv_cache_update_validate(new_kv, new_kv_dtype, num_tokens, new_kv_token_stride, slices, num_slices,
                                       num_slices_padded, cache));
    if (num_slices_padded == 0) {
        pa_clear_error();
        return PA_SUCCESS;
    }
    pa_kvu_params p;
    pa_kvu_params_make(&p, new_kv, new_kv_dtype, num_tokens, new_kv_token_stride, slices, num_slices, num_slices_padded,
                       cache);
    PA_TRY(pa_no_pending_cuda_error("pa_kv_cache_update"));
    PA_RANGE_PUSH("pa_kv_cache_update");
    return done(pa_launch_kv_cache_update(&p, (int)new_kv_dtype, (int)cache->dtype, stream),
                "pa_kv_cache_update launch");
}

pa_status pa_swap_blocks(void *dst, const void *src, int64_t block_bytes, const int64_t *block_mapping,
                         int64_t num_pairs, int64_t src_num_blocks, int64_t dst_num_blocks, pa_stream stream) {
    PA_TRY(pa_swap_blocks_validate(dst, src, block_bytes, block_mapping, num_pairs, src_num_blocks, dst_num_blocks));
    if (num_pairs == 0) {
        pa_clear_error();
        return PA_SUCCESS;
    }
    PA_TRY(pa_no_pending_cuda_error("pa_swap_blocks"));
    PA_RANGE_PUSH("pa_swap_blocks");
    return done(pa_launch_swap_blocks(dst, src, block_bytes, block_mapping, num_pairs, stream), "pa_swap_blocks");
}

pa_status pa_swap_blocks_kv(const pa_kv_cache *dst, const pa_kv_cache *src, const int64_t *block_mapping,
                            int64_t num_pairs, pa_stream stream) {
    int64_t bytes = 0;
    PA_TRY(pa_swap_blocks_kv_bytes(dst, src, &bytes));
    const int two = src->layout != PA_LAYOUT_COMBINED;
    /* Validate both buffers before the first copy so nothing is issued on error.
     * The key buffers and the mapping go through swap_blocks' checks, whose
     * messages say "src" and "dst" buffer. */
    const pa_status kst =
        pa_swap_blocks_validate(dst->key, src->key, bytes, block_mapping, num_pairs, src->num_blocks, dst->num_blocks);
    if (kst != PA_SUCCESS)
        return pa_error_context(kst, "swap_blocks_kv (its key buffers: the src buffer is src.key, the dst buffer "
                                     "dst.key)");
    if (two && num_pairs > 0) { /* no destination buffer may overlap either source buffer */
        const int64_t sb = bytes * src->num_blocks, db = bytes * dst->num_blocks; /* fit: validated */
        PA_REQUIRE(!pa_ranges_overlap(src->value, sb, dst->value, db) &&
                       !pa_ranges_overlap(src->key, sb, dst->value, db) &&
                       !pa_ranges_overlap(src->value, sb, dst->key, db),
                   "swap_blocks_kv: a dst buffer overlaps a src buffer; they must be distinct buffers");
        /* Blocks tile each buffer (pa_swap_blocks_kv_bytes), so any shared byte
         * means a value block lands on some key block, or the other way. */
        PA_REQUIRE(dst->key != dst->value,
                   "swap_blocks_kv: dst.key and dst.value are the same buffer (%p); each value block would overwrite "
                   "its key block",
                   dst->key);
        PA_REQUIRE(!pa_ranges_overlap(dst->key, db, dst->value, db),
                   "swap_blocks_kv: dst.key (%p) and dst.value (%p) overlap (%lld bytes each); value blocks would "
                   "overwrite key blocks",
                   dst->key, dst->value, (long long)db);
        PA_REQUIRE(!pa_ranges_overlap(block_mapping, pa_block_mapping_bytes(num_pairs), dst->value, db),
                   "swap_blocks_kv: block_mapping lies in dst.value; it must be apart from what the copies write");
    }
    if (num_pairs == 0) {
        pa_clear_error();
        return PA_SUCCESS;
    }
    PA_TRY(pa_no_pending_cuda_error("pa_swap_blocks_kv"));
    PA_RANGE_PUSH("pa_swap_blocks_kv");
    int e = pa_launch_swap_blocks(dst->key, src->key, bytes, block_mapping, num_pairs, stream);
    if (e == 0 && two)
        e = pa_launch_swap_blocks(dst->value, src->value, bytes, block_mapping, num_pairs, stream);
    return done(e, "pa_swap_blocks_kv");
}

pa_status pa_copy_blocks(const uint64_t *key_caches, const uint64_t *value_caches, int32_t num_layers,
                         const int64_t *block_mapping, int64_t num_pairs, int64_t numel_per_block, pa_dtype dtype,
                         int64_t num_blocks, pa_stream stream) {
    PA_TRY(
        pa_copy_blocks_validate(key_caches, num_layers, block_mapping, num_pairs, numel_per_block, dtype, num_blocks));
    PA_TRY(pa_check_aligned("copy_blocks", "value_caches", value_caches, sizeof(uint64_t)));
    if (num_layers == 0 || num_pairs == 0) {
        pa_clear_error();
        return PA_SUCCESS;
    }
    pa_cb_params p;
    p.key_caches = key_caches;
    p.value_caches = value_caches;
    p.mapping = block_mapping;
    p.num_pairs = num_pairs;
    p.block_bytes = numel_per_block * (int64_t)pa_dtype_size(dtype);
    p.num_blocks = num_blocks;
    p.num_layers = num_layers;
    PA_TRY(pa_no_pending_cuda_error("pa_copy_blocks"));
    PA_RANGE_PUSH("pa_copy_blocks");
    return done(pa_launch_copy_blocks(&p, stream), "pa_copy_blocks launch");
}
