/* Private to the cache ops: launcher parameter blocks (shared by csrc/ and the
 * .cu files, so plain C), validators and the swap run iterator. */
#ifndef PA_CACHE_OPS_INTERNAL_H
#define PA_CACHE_OPS_INTERNAL_H

#include <stdint.h>

#include "kv_index.h"
#include "pagedattn/cache_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* reshape_and_cache, every layout. Strides in elements of the input dtype. */
typedef struct pa_rc_params {
    const void *key, *value;
    void *key_cache, *value_cache; /* value_cache == key_cache for the combined layout */
    const int64_t *slot_mapping;
    const float *k_scale, *v_scale;
    int32_t scale_hs; /* KV head h's scales at [h * scale_hs]: 1 per head, 0 one for all */
    int64_t num_tokens;
    int64_t num_slots; /* num_blocks * block_size: slots >= this are skipped */
    int64_t k_tok_stride, k_head_stride, v_tok_stride, v_head_stride;
    pa_kv_geom g;
    int32_t vec_in;  /* 16-byte loads are aligned (pointers, strides, head_size) */
    int32_t vec_out; /* vector stores of one chunk are aligned in the cache */
} pa_rc_params;

/* kv_cache_update by slices, combined layout. */
typedef struct pa_kvu_params {
    const void *new_kv;
    void *cache;
    const int32_t *slices;     /* [3][num_slices_padded] */
    const int32_t *num_slices; /* device [1] */
    const float *k_scale, *v_scale;
    int32_t scale_hs; /* KV head h's scales at [h * scale_hs]: 1 per head, 0 one for all */
    int64_t num_tokens;
    int64_t tok_stride; /* elements of new_kv between rows */
    int64_t num_rows;   /* num_blocks * block_size */
    int32_t num_slices_padded;
    pa_kv_geom g;
    int32_t vec_in, vec_out;
} pa_kvu_params;

/* copy_blocks, all layers in one launch. */
typedef struct pa_cb_params {
    const uint64_t *key_caches, *value_caches; /* device [num_layers]; value may be NULL */
    const int64_t *mapping;                    /* device [num_pairs][2] */
    int64_t num_pairs;
    int64_t block_bytes;
    int64_t num_blocks;
    int32_t num_layers;
} pa_cb_params;

/* Validators (csrc/ops/cache_ops_validate.c, in the host library): check every
 * host-visible field; *_validate sets pa_last_error and returns the status. */
pa_status pa_reshape_and_cache_validate(const pa_kv_input *in, const int64_t *slot_mapping, const pa_kv_cache *cache);
pa_status pa_kv_cache_update_validate(const void *new_kv, pa_dtype new_kv_dtype, int64_t num_tokens,
                                      int64_t new_kv_token_stride, const int32_t *slices, const int32_t *num_slices,
                                      int32_t num_slices_padded, const pa_kv_cache *cache);
/* Bytes of a block mapping of n (src, dst) int64 pairs (swap_blocks,
 * copy_blocks), for the checks that keep it apart from what the copies write;
 * saturated (a mapping that large could not exist, and the checks stay true). */
static inline int64_t pa_block_mapping_bytes(int64_t n) { return n <= INT64_MAX / 16 ? n * 16 : INT64_MAX; }
pa_status pa_swap_blocks_validate(void *dst, const void *src, int64_t block_bytes, const int64_t *block_mapping,
                                  int64_t num_pairs, int64_t src_num_blocks, int64_t dst_num_blocks);
pa_status pa_swap_blocks_kv_bytes(const pa_kv_cache *dst, const pa_kv_cache *src, int64_t *block_bytes);
pa_status pa_copy_blocks_validate(const void *key_caches, int32_t num_layers, const void *block_mapping,
                                  int64_t num_pairs, int64_t numel_per_block, pa_dtype dtype, int64_t num_blocks);

/* Fills a launcher parameter block from validated arguments (and decides the
 * vector paths from pointer / stride alignment). */
void pa_rc_params_make(pa_rc_params *p, const pa_kv_input *in, const int64_t *slot_mapping, const pa_kv_cache *cache);
void pa_kvu_params_make(pa_kvu_params *p, const void *new_kv, pa_dtype new_kv_dtype, int64_t num_tokens,
                        int64_t new_kv_token_stride, const int32_t *slices, const int32_t *num_slices,
                        int32_t num_slices_padded, const pa_kv_cache *cache);

/* Whether id == base + k exactly, without forming base + k (which passes
 * INT64_MAX for ids near it; pa_swap_plan_runs takes any ids): an unsigned
 * difference equals the true one when id > base. */
static inline int pa_id_follows(int64_t id, int64_t base, int64_t k) {
    return id > base && (uint64_t)id - (uint64_t)base == (uint64_t)k;
}

/* Next maximal run of a swap mapping starting at pair *i (< n); advances *i.
 * Shared by pa_swap_plan_runs and the swap launcher so they cannot disagree. */
static inline pa_block_run pa_swap_next_run(const int64_t *mapping, int64_t n, int64_t *i) {
    pa_block_run r;
    r.src_block = mapping[2 * *i];
    r.dst_block = mapping[2 * *i + 1];
    r.num_blocks = 1;
    int64_t j = *i + 1;
    while (j < n && pa_id_follows(mapping[2 * j], r.src_block, r.num_blocks) &&
           pa_id_follows(mapping[2 * j + 1], r.dst_block, r.num_blocks)) {
        r.num_blocks++;
        j++;
    }
    *i = j;
    return r;
}

#ifdef __cplusplus
}
#endif
#endif
