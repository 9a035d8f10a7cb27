/* Decode attention: validation shared by the CPU reference and the kernels.
 * (The GPU entries land with the decode kernels.) */
#include <math.h>

#include "internal.h"

/* The supported sizes live in one place, heuristics.c, and are read from there. */
static int in_list(int v, pa_status (*list_fn)(int32_t *, int32_t, int32_t *)) {
    int32_t list[32], n = 0;
    if (list_fn(list, 32, &n) != PA_SUCCESS)
        return 0;
    for (int32_t i = 0; i < n && i < 32; i++)
        if (list[i] == v)
            return 1;
    return 0;
}

pa_status pa_decode_validate(const pa_decode_params *p) {
    PA_REQUIRE(p != NULL, "decode: params is NULL");
    PA_REQUIRE(p->num_seqs >= 0, "decode: num_seqs must be >= 0 (got %d)", p->num_seqs);
    PA_REQUIRE(p->num_heads > 0, "decode: num_heads must be > 0 (got %d)", p->num_heads);
    PA_REQUIRE(pa_is_float_dtype(p->q_dtype), "decode: query dtype must be f32, f16 or bf16 (got %s)",
               pa_dtype_name(p->q_dtype));
    PA_TRY(pa_kv_cache_validate(&p->kv));
    const pa_kv_cache *kv = &p->kv;
    if (kv->layout == PA_LAYOUT_COMBINED)
        return pa_fail(PA_ERR_UNSUPPORTED, "decode: the combined layout is served by pa_ragged_paged_attention");
    PA_REQUIRE(p->num_heads % kv->num_kv_heads == 0, "decode: num_heads %d is not a multiple of num_kv_heads %d",
               p->num_heads, kv->num_kv_heads);
    if (!in_list(kv->head_size, pa_supported_head_sizes))
        return pa_fail(PA_ERR_UNSUPPORTED,
                       "decode: head_size %d unsupported; supported: 32,64,80,96,112,120,128,192,256", kv->head_size);
    if (!in_list(kv->block_size, pa_supported_block_sizes))
        return pa_fail(PA_ERR_UNSUPPORTED, "decode: block_size %d unsupported; supported: 8,16,32,64,128",
                       kv->block_size);
    if (kv->dtype != p->q_dtype && !pa_dtype_is_fp8(kv->dtype))
        return pa_fail(PA_ERR_UNSUPPORTED,
                       "decode: cache dtype %s with query dtype %s; the cache must match the query or be fp8",
                       pa_dtype_name(kv->dtype), pa_dtype_name(p->q_dtype));
    const int64_t row = (int64_t)p->num_heads * kv->head_size;
    PA_REQUIRE(p->q_stride == 0 || p->q_stride >= row, "decode: q_stride %lld smaller than num_heads*head_size %lld",
               (long long)p->q_stride, (long long)row);
    PA_REQUIRE(isfinite(p->scale), "decode: scale must be finite");
    PA_REQUIRE(isfinite(p->soft_cap) && p->soft_cap >= 0.0f, "decode: soft_cap must be >= 0 (0 = off)");
    PA_REQUIRE(p->sliding_window >= 0, "decode: sliding_window must be >= 0 (0 = off), got %d", p->sliding_window);
    if (p->bs_vert_stride > 1) {
        PA_REQUIRE(p->bs_block_size > 0 && p->bs_block_size % kv->block_size == 0,
                   "decode: blocksparse_block_size %d must be a positive multiple of block_size %d", p->bs_block_size,
                   kv->block_size);
        PA_REQUIRE(p->bs_local_blocks >= 0, "decode: blocksparse_local_blocks must be >= 0");
        PA_REQUIRE(p->tp_rank >= 0, "decode: tp_rank must be >= 0");
    }
    if (p->num_seqs == 0)
        return PA_SUCCESS;
    PA_REQUIRE(p->out && p->query && p->block_tables && p->seq_lens,
               "decode: out, query, block_tables and seq_lens must not be NULL");
    PA_REQUIRE(p->block_table_stride > 0, "decode: block_table_stride must be > 0 (got %d)", p->block_table_stride);
    PA_REQUIRE(p->max_seq_len > 0, "decode: max_seq_len must be > 0 (got %d)", p->max_seq_len);
    PA_REQUIRE((int64_t)p->max_seq_len <= (int64_t)p->block_table_stride * kv->block_size,
               "decode: max_seq_len %d needs %lld blocks but the block table has %d columns", p->max_seq_len,
               ((long long)p->max_seq_len + kv->block_size - 1) / kv->block_size, p->block_table_stride);
    return PA_SUCCESS;
}
