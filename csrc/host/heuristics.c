/* Host heuristics: decode v1/v2 choice, page-size rules, cache shapes,
 * supported sizes, per-layer checks and the flash KV layout choice. */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "pagedattn/heuristics.h"

/* ---- decode v1/v2 ------------------------------------------------------------------ */

static int32_t num_partitions(int32_t max_seq_len) {
    return (int32_t)(((int64_t)max_seq_len + PA_DECODE_PARTITION_SIZE - 1) / PA_DECODE_PARTITION_SIZE);
}

int pa_decode_use_v1(int32_t max_seq_len, int32_t num_seqs, int32_t num_heads) {
    const int32_t parts = num_partitions(max_seq_len);
    return max_seq_len <= PA_DECODE_V1_MAX_SEQ_LEN &&
           (parts == 1 || (int64_t)num_seqs * num_heads > PA_DECODE_V1_MIN_PARALLEL);
}

pa_status pa_decode_make_plan(int32_t num_seqs, int32_t num_heads, int32_t num_kv_heads, int32_t head_size,
                              int32_t block_size, int32_t max_seq_len, pa_decode_plan *out) {
    PA_REQUIRE(out != NULL, "decode plan: out is NULL");
    PA_REQUIRE(num_seqs >= 0, "decode plan: num_seqs must be >= 0 (got %d)", num_seqs);
    PA_REQUIRE(num_heads > 0, "decode plan: num_heads must be > 0 (got %d)", num_heads);
    PA_REQUIRE(num_kv_heads > 0, "decode plan: num_kv_heads must be > 0 (got %d)", num_kv_heads);
    PA_REQUIRE(num_heads % num_kv_heads == 0, "decode plan: num_heads %d is not a multiple of num_kv_heads %d",
               num_heads, num_kv_heads);
    PA_REQUIRE(head_size > 0, "decode plan: head_size must be > 0 (got %d)", head_size);
    PA_REQUIRE(block_size > 0, "decode plan: block_size must be > 0 (got %d)", block_size);
    PA_REQUIRE(max_seq_len > 0, "decode plan: max_seq_len must be > 0 (got %d)", max_seq_len);
    const int use_v1 = pa_decode_use_v1(max_seq_len, num_seqs, num_heads);
    const int32_t parts = num_partitions(max_seq_len);
    if (!use_v1)
        PA_REQUIRE(PA_DECODE_PARTITION_SIZE % block_size == 0,
                   "decode plan: v2 needs block_size %d to divide the partition size %d", block_size,
                   PA_DECODE_PARTITION_SIZE);
    /* num_seqs * num_heads * parts * head_size can pass 2^63: check each step. */
    const int64_t sh = (int64_t)num_seqs * num_heads; /* < 2^62 */
    PA_REQUIRE(sh == 0 || parts <= INT64_MAX / sh, "decode plan: v2 scratch size overflows int64");
    const int64_t ml = sh * parts;
    PA_REQUIRE(ml == 0 || head_size <= INT64_MAX / ml, "decode plan: v2 scratch size overflows int64");
    out->use_v1 = use_v1;
    out->max_num_partitions = parts;
    out->tmp_out_elems = use_v1 ? 0 : ml * head_size;
    out->exp_sums_elems = use_v1 ? 0 : ml;
    out->max_logits_elems = use_v1 ? 0 : ml;
    pa_clear_error();
    return PA_SUCCESS;
}

/* ---- page sizes ---------------------------------------------------------------------- */

/* Smallest power of two >= n, for 1 <= n <= 2^62. */
static int64_t next_pow2(int64_t n) {
    int64_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

pa_status pa_get_page_size(int64_t max_model_len, int32_t *out) {
    PA_REQUIRE(out != NULL, "page size: out is NULL");
    PA_REQUIRE(max_model_len >= 1, "page size: max_model_len must be >= 1 (got %lld)", (long long)max_model_len);
    /* Above 2^12 the result is clamped to 256 anyway; cap to stay in range. */
    const int64_t n = max_model_len > ((int64_t)1 << 20) ? ((int64_t)1 << 20) : max_model_len;
    const int64_t page = next_pow2(n) / 16;
    *out = page <= 16 ? 16 : page >= 256 ? 256 : (int32_t)page;
    pa_clear_error();
    return PA_SUCCESS;
}

static pa_status min_page_from_budget(const char *who, int64_t max_model_len, int32_t max_num_seqs,
                                      int64_t budget_bytes, int32_t *out) {
    PA_REQUIRE(out != NULL, "%s: out is NULL", who);
    PA_REQUIRE(max_model_len >= 1, "%s: max_model_len must be >= 1 (got %lld)", who, (long long)max_model_len);
    PA_REQUIRE(max_num_seqs >= 1, "%s: max_num_seqs must be >= 1 (got %d)", who, max_num_seqs);
    const int64_t pages_per_req = budget_bytes / 2 / max_num_seqs / 4;
    PA_REQUIRE(pages_per_req >= 1,
               "%s: a block table of %d sequences does not fit in half of %lld bytes (not even one page id per "
               "sequence)",
               who, max_num_seqs, (long long)budget_bytes);
    /* ceil(max_model_len / pages_per_req) without the round-up sum, which wraps
     * for max_model_len near INT64_MAX (max_model_len >= 1 here). */
    const int64_t pages = (max_model_len - 1) / pages_per_req + 1;
    PA_REQUIRE(pages <= ((int64_t)1 << 30), "%s: minimum page size for max_model_len %lld overflows int32", who,
               (long long)max_model_len);
    *out = (int32_t)next_pow2(pages);
    pa_clear_error();
    return PA_SUCCESS;
}

pa_status pa_get_min_page_size(int64_t max_model_len, int32_t max_num_seqs, int32_t *out) {
    return min_page_from_budget("min page size", max_model_len, max_num_seqs, 1024 * 1024, out);
}

pa_status pa_cuda_min_page_size(int64_t max_model_len, int32_t max_num_seqs, size_t smem_bytes, int32_t *out) {
    const int64_t budget = smem_bytes > (size_t)INT64_MAX ? INT64_MAX : (int64_t)smem_bytes;
    return min_page_from_budget("cuda min page size", max_model_len, max_num_seqs, budget, out);
}

/* ---- cache shapes ------------------------------------------------------------------------ */

pa_status pa_kv_cache_shape(pa_kv_layout layout, pa_dtype dtype, int32_t num_blocks, int32_t block_size,
                            int32_t num_kv_heads, int32_t head_size, pa_kv_shape_part part,
                            int64_t dims[PA_MAX_SHAPE_RANK], int32_t *rank) {
    PA_REQUIRE(dims != NULL && rank != NULL, "kv cache shape: dims and rank must not be NULL");
    PA_REQUIRE((int)layout >= PA_LAYOUT_VLLM && (int)layout <= PA_LAYOUT_COMBINED, "kv cache shape: layout %d unknown",
               (int)layout);
    PA_REQUIRE(pa_is_valid_dtype(dtype), "kv cache shape: dtype %d unknown", (int)dtype);
    PA_REQUIRE((int)part >= PA_KV_SHAPE_KEY && (int)part <= PA_KV_SHAPE_PAIR, "kv cache shape: part %d unknown",
               (int)part);
    PA_REQUIRE(num_blocks > 0, "kv cache shape: num_blocks must be > 0 (got %d)", num_blocks);
    PA_REQUIRE(block_size > 0, "kv cache shape: block_size must be > 0 (got %d)", block_size);
    PA_REQUIRE(num_kv_heads > 0, "kv cache shape: num_kv_heads must be > 0 (got %d)", num_kv_heads);
    PA_REQUIRE(head_size > 0, "kv cache shape: head_size must be > 0 (got %d)", head_size);
    const int64_t x = 16 / (int64_t)pa_dtype_size(dtype);
    if (layout == PA_LAYOUT_VLLM)
        PA_REQUIRE(head_size % x == 0, "kv cache shape: vllm layout: head_size %d must be a multiple of x = %lld",
                   head_size, (long long)x);
    if (layout == PA_LAYOUT_COMBINED)
        PA_REQUIRE(part != PA_KV_SHAPE_VALUE,
                   "kv cache shape: the combined layout has no separate value buffer (K and V share one)");
    /* Elements of the buffer asked for: nb * block * kvh * head, twice that for
     * the pair and for the combined layout (K and V in one buffer), < 2^1 *
     * 2^31 * 2^31 * 2^31 * 2^31: check the product against int64 step by step. */
    const int64_t two = part == PA_KV_SHAPE_PAIR || layout == PA_LAYOUT_COMBINED ? 2 : 1;
    const int64_t f[5] = {two, num_blocks, block_size, num_kv_heads, head_size};
    int64_t total = 1;
    for (int i = 0; i < 5; i++)
        PA_REQUIRE(pa_mul_i64(total, f[i], &total), "kv cache shape: element count overflows int64");
    const int64_t nb = num_blocks, bs = block_size, h = num_kv_heads, d = head_size;
    int64_t t[PA_MAX_SHAPE_RANK];
    int32_t r = 0;
#define DIMS(...)                                                                                                      \
    do {                                                                                                               \
        const int64_t v_[] = {__VA_ARGS__};                                                                            \
        r = (int32_t)(sizeof v_ / sizeof v_[0]);                                                                       \
        memcpy(t, v_, sizeof v_);                                                                                      \
    } while (0)
    switch (layout) {
    case PA_LAYOUT_VLLM:
        if (part == PA_KV_SHAPE_KEY)
            DIMS(nb, h, d / x, bs, x);
        else if (part == PA_KV_SHAPE_VALUE)
            DIMS(nb, h, d, bs);
        else
            DIMS(2, nb, bs * h * d);
        break;
    case PA_LAYOUT_FLASH_NHD:
        if (part == PA_KV_SHAPE_PAIR)
            DIMS(2, nb, bs, h, d);
        else
            DIMS(nb, bs, h, d);
        break;
    case PA_LAYOUT_FLASH_HND:
        if (part == PA_KV_SHAPE_PAIR)
            DIMS(2, nb, h, bs, d);
        else
            DIMS(nb, h, bs, d);
        break;
    case PA_LAYOUT_COMBINED: DIMS(nb, bs, 2 * h, d); break;
    }
#undef DIMS
    memcpy(dims, t, (size_t)r * sizeof t[0]);
    *rank = r;
    pa_clear_error();
    return PA_SUCCESS;
}

/* ---- supported sizes ------------------------------------------------------------------------ */

/* Keep in step with csrc/ops/decode.c (tests check the two agree). */
/* Every multiple of 8 up to 256 (pa_head_size_ok): decode, prefill and ragged
 * all serve these. vLLM's own list is the nine sizes 32, 64, 80, 96, 112, 120,
 * 128, 192 and 256, all of them in here. */
static const int32_t head_sizes[] = {8,   16,  24,  32,  40,  48,  56,  64,  72,  80,  88,  96,  104, 112, 120, 128,
                                     136, 144, 152, 160, 168, 176, 184, 192, 200, 208, 216, 224, 232, 240, 248, 256};
static const int32_t block_sizes[] = {8, 16, 32, 64, 128};

static pa_status copy_list(const char *who, const int32_t *list, int32_t n, int32_t *out, int32_t capacity,
                           int32_t *count) {
    PA_REQUIRE(count != NULL, "%s: count is NULL", who);
    PA_REQUIRE(capacity >= 0, "%s: capacity must be >= 0 (got %d)", who, capacity);
    PA_REQUIRE(capacity == 0 || out != NULL, "%s: out is NULL with capacity %d", who, capacity);
    const int32_t m = capacity < n ? capacity : n;
    for (int32_t i = 0; i < m; i++)
        out[i] = list[i];
    *count = n;
    pa_clear_error();
    return PA_SUCCESS;
}

pa_status pa_supported_head_sizes(int32_t *out, int32_t capacity, int32_t *count) {
    return copy_list("supported head sizes", head_sizes, (int32_t)(sizeof head_sizes / sizeof head_sizes[0]), out,
                     capacity, count);
}

pa_status pa_supported_block_sizes(int32_t *out, int32_t capacity, int32_t *count) {
    return copy_list("supported block sizes", block_sizes, (int32_t)(sizeof block_sizes / sizeof block_sizes[0]), out,
                     capacity, count);
}

/* ---- per-layer hyperparameters ------------------------------------------------------------ */

pa_status pa_infer_global_hyperparameters(const pa_layer_params *layers, int32_t num_layers, pa_layer_params *out) {
    PA_REQUIRE(out != NULL, "hyperparameters: out is NULL");
    PA_REQUIRE(num_layers > 0, "hyperparameters: no attention layers (num_layers = %d)", num_layers);
    PA_REQUIRE(layers != NULL, "hyperparameters: layers is NULL");
    for (int32_t i = 0; i < num_layers; i++) {
        const pa_layer_params *l = &layers[i];
        PA_REQUIRE(l->window_left >= -1, "hyperparameters: layer %d: window_left must be >= -1 (got %d)", i,
                   l->window_left);
        PA_REQUIRE(isfinite(l->logits_soft_cap) && l->logits_soft_cap >= 0.0f,
                   "hyperparameters: layer %d: logits_soft_cap must be finite and >= 0 (0 = none), got %g", i,
                   (double)l->logits_soft_cap);
        PA_REQUIRE(isfinite(l->sm_scale), "hyperparameters: layer %d: sm_scale must be finite (got %g)", i,
                   (double)l->sm_scale);
    }
    const pa_layer_params g = layers[0];
    for (int32_t i = 1; i < num_layers; i++) {
        const pa_layer_params *l = &layers[i];
        PA_REQUIRE(l->window_left == g.window_left,
                   "hyperparameters: layer %d: window_left %d differs from layer 0 (%d); all layers must share "
                   "window_left, logits_soft_cap and sm_scale",
                   i, l->window_left, g.window_left);
        PA_REQUIRE(l->logits_soft_cap == g.logits_soft_cap,
                   "hyperparameters: layer %d: logits_soft_cap %.9g differs from layer 0 (%.9g); all layers must "
                   "share window_left, logits_soft_cap and sm_scale",
                   i, (double)l->logits_soft_cap, (double)g.logits_soft_cap);
        PA_REQUIRE(l->sm_scale == g.sm_scale,
                   "hyperparameters: layer %d: sm_scale %.9g differs from layer 0 (%.9g); all layers must share "
                   "window_left, logits_soft_cap and sm_scale",
                   i, (double)l->sm_scale, (double)g.sm_scale);
    }
    *out = g;
    pa_clear_error();
    return PA_SUCCESS;
}

/* ---- flash KV layout choice ---------------------------------------------------------------- */

/* 0: no override; else the pa_kv_layout value. */
static _Atomic int layout_override = 0;

static int parse_flash_layout(const char *s, pa_kv_layout *out) {
    if (strcmp(s, "NHD") == 0 || strcmp(s, "nhd") == 0) {
        *out = PA_LAYOUT_FLASH_NHD;
        return 1;
    }
    if (strcmp(s, "HND") == 0 || strcmp(s, "hnd") == 0) {
        *out = PA_LAYOUT_FLASH_HND;
        return 1;
    }
    return 0;
}

pa_status pa_set_kv_cache_layout(const char *name) {
    if (name == NULL) {
        atomic_store(&layout_override, 0);
        pa_clear_error();
        return PA_SUCCESS;
    }
    pa_kv_layout l;
    if (!parse_flash_layout(name, &l))
        return pa_fail(PA_ERR_INVALID_ARGUMENT, "kv cache layout '%.64s' unknown; expected NHD or HND", name);
    atomic_store(&layout_override, (int)l);
    pa_clear_error();
    return PA_SUCCESS;
}

pa_status pa_get_kv_cache_layout(pa_kv_layout *out) {
    PA_REQUIRE(out != NULL, "kv cache layout: out is NULL");
    const int o = atomic_load(&layout_override);
    pa_kv_layout l = PA_LAYOUT_FLASH_NHD;
    if (o != 0) {
        l = (pa_kv_layout)o;
    } else {
        const char *env = getenv("PAGEDATTN_KV_CACHE_LAYOUT");
        if (env && env[0] != '\0' && !parse_flash_layout(env, &l))
            return pa_fail(PA_ERR_INVALID_ARGUMENT,
                           "PAGEDATTN_KV_CACHE_LAYOUT='%.64s' unknown; expected NHD or HND (or unset)", env);
    }
    *out = l;
    pa_clear_error();
    return PA_SUCCESS;
}
