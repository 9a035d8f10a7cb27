/* Heuristics and shapes: the decode v1/v2 rule and v2 scratch, page-size rules
 * (and their CUDA analogue), cache shapes, supported sizes, per-layer
 * hyperparameter agreement and the flash KV layout choice. Expected values are
 * worked out by hand from the seed formulas or recomputed here by naive code. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pagedattn/pagedattn.h"

#include "testutil.h"

/* The tests' one RNG (pa_rng, benchmarks/problems.h). */
static pa_rng rng_state;
static void rng_seed(uint64_t s) { rng_state = pa_rng_make(s); }
static uint64_t rng_next(void) { return pa_rng_next(&rng_state); }
static int64_t rng_range(int64_t lo, int64_t hi) { return lo + (int64_t)(rng_next() % (uint64_t)(hi - lo + 1)); }

/* Python's int.bit_length for n >= 0. */
static int bit_length(int64_t n) {
    int b = 0;
    while (n > 0) {
        b++;
        n >>= 1;
    }
    return b;
}

/* ---- decode v1/v2 ------------------------------------------------------------------ */

static int naive_use_v1(int32_t max_seq_len, int32_t num_seqs, int32_t num_heads) {
    int64_t parts = max_seq_len / 512 + (max_seq_len % 512 != 0);
    return max_seq_len <= 8192 && (parts == 1 || (int64_t)num_seqs * num_heads > 512);
}

Test(decode_heuristic, hand_cases) {
    CHK_EQ(pa_decode_use_v1(512, 1, 1), 1);     /* one partition */
    CHK_EQ(pa_decode_use_v1(513, 1, 32), 0);    /* two partitions, 32 rows */
    CHK_EQ(pa_decode_use_v1(513, 16, 32), 0);   /* 512 rows: not > 512 */
    CHK_EQ(pa_decode_use_v1(513, 17, 32), 1);   /* 544 rows */
    CHK_EQ(pa_decode_use_v1(8192, 100, 64), 1); /* at the limit */
    CHK_EQ(pa_decode_use_v1(8193, 100, 64), 0); /* past it: always v2 */
    CHK_EQ(pa_decode_use_v1(32768, 1, 1), 0);
    CHK_EQ(pa_decode_use_v1(1, 65536, 65536), 1); /* the product needs 64 bits */
}

Test(decode_heuristic, random_against_rule) {
    rng_seed(5);
    for (int i = 0; i < 5000; i++) {
        const int32_t L = (int32_t)rng_range(1, 20000), s = (int32_t)rng_range(0, 300), h = (int32_t)rng_range(1, 128);
        CHK_EQ(pa_decode_use_v1(L, s, h), naive_use_v1(L, s, h), "L %d s %d h %d", L, s, h);
        pa_decode_plan pl;
        const int32_t kvh = h % 8 == 0 ? 8 : 1, hs = (int32_t)rng_range(1, 256);
        CHK_EQ(pa_decode_make_plan(s, h, kvh, hs, 16, L, &pl), PA_SUCCESS, "%s", pa_last_error());
        const int64_t parts = (L + 511) / 512;
        CHK_EQ(pl.use_v1, naive_use_v1(L, s, h));
        CHK_EQ(pl.max_num_partitions, parts);
        if (pl.use_v1) {
            CHK(pl.tmp_out_elems == 0 && pl.exp_sums_elems == 0 && pl.max_logits_elems == 0);
        } else {
            CHK_EQ(pl.tmp_out_elems, (int64_t)s * h * parts * hs);
            CHK_EQ(pl.exp_sums_elems, (int64_t)s * h * parts);
            CHK_EQ(pl.max_logits_elems, (int64_t)s * h * parts);
        }
    }
}

Test(decode_heuristic, plan_bad_input) {
    pa_decode_plan pl, keep;
    memset(&keep, 0x5A, sizeof keep);
    pl = keep;
    CHK_EQ(pa_decode_make_plan(4, 32, 6, 128, 16, 1000, &pl), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "num_heads 32 is not a multiple of num_kv_heads 6"), "%s", pa_last_error());
    CHK_EQ(memcmp(&pl, &keep, sizeof pl), 0);
    CHK_EQ(pa_decode_make_plan(4, 32, 8, 128, 0, 1000, &pl), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "block_size"));
    CHK_EQ(pa_decode_make_plan(4, 32, 8, 128, -16, 1000, &pl), PA_ERR_INVALID_ARGUMENT);
    CHK_EQ(pa_decode_make_plan(-1, 32, 8, 128, 16, 1000, &pl), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "num_seqs"));
    CHK_EQ(pa_decode_make_plan(4, 32, 8, 128, 16, 0, &pl), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "max_seq_len"));
    CHK_EQ(pa_decode_make_plan(4, 32, 8, 0, 16, 10, &pl), PA_ERR_INVALID_ARGUMENT);
    CHK_EQ(pa_decode_make_plan(4, 0, 8, 128, 16, 10, &pl), PA_ERR_INVALID_ARGUMENT);
    CHK_EQ(pa_decode_make_plan(4, 32, 0, 128, 16, 10, &pl), PA_ERR_INVALID_ARGUMENT);
    /* v2 needs the block size to divide 512 */
    CHK_EQ(pa_decode_make_plan(1, 8, 8, 128, 48, 9000, &pl), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "block_size 48"), "%s", pa_last_error());
    CHK_EQ(memcmp(&pl, &keep, sizeof pl), 0);
    /* ... while v1 does not care */
    CHK_EQ(pa_decode_make_plan(1, 8, 8, 128, 48, 500, &pl), PA_SUCCESS);
    CHK_EMPTY(pa_last_error());
    CHK_EQ(pa_decode_make_plan(1, 8, 8, 128, 16, 500, NULL), PA_ERR_INVALID_ARGUMENT);
}

/* ---- page sizes ------------------------------------------------------------------------ */

static int32_t naive_page_size(int64_t L) {
    int64_t np2 = L < 1 ? 1 : (int64_t)1 << bit_length(L - 1);
    int64_t ps = np2 / 16;
    if (ps <= 16)
        return 16;
    if (ps >= 256)
        return 256;
    return (int32_t)ps;
}

static int32_t naive_min_page(int64_t L, int64_t smem, int64_t seqs) {
    int64_t per_req = smem / 2 / seqs / 4;
    int64_t m = L / per_req + (L % per_req != 0);
    return (int32_t)((int64_t)1 << bit_length(m - 1));
}

Test(page_size, hand_values) {
    const struct {
        int64_t L;
        int32_t expect;
    } cases[] = {{1, 16},     {100, 16},   {256, 16},   {257, 32},      {1024, 64},       {1025, 128}, {2048, 128},
                 {2049, 256}, {3000, 256}, {8192, 256}, {1 << 20, 256}, {INT64_MAX, 256}, {512, 32},   {513, 64}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int32_t ps = -1;
        CHK_EQ(pa_get_page_size(cases[i].L, &ps), PA_SUCCESS);
        CHK_EQ(ps, cases[i].expect, "max_model_len %lld: %d, expected %d", (long long)cases[i].L, ps, cases[i].expect);
    }
    int32_t keep = 77;
    CHK_EQ(pa_get_page_size(0, &keep), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "max_model_len"));
    CHK_EQ(keep, 77);
    CHK_EQ(pa_get_page_size(10, NULL), PA_ERR_INVALID_ARGUMENT);
}

Test(page_size, min_page_hand_values) {
    int32_t m = -1;
    /* 1 MiB/2/256/4 = 512 page ids per request; ceil(8192/512) = 16 -> 16 */
    CHK_EQ(pa_get_min_page_size(8192, 256, &m), PA_SUCCESS);
    CHK_EQ(m, 16);
    /* 1 MiB/2/128/4 = 1024; ceil(131072/1024) = 128 */
    CHK_EQ(pa_get_min_page_size(131072, 128, &m), PA_SUCCESS);
    CHK_EQ(m, 128);
    /* one page is enough: bit_length(0) = 0 -> 1 */
    CHK_EQ(pa_get_min_page_size(100, 1, &m), PA_SUCCESS);
    CHK_EQ(m, 1);
    /* 524288//1000 = 524, //4 = 131; ceil(10000/131) = 77 -> 128 */
    CHK_EQ(pa_get_min_page_size(10000, 1000, &m), PA_SUCCESS);
    CHK_EQ(m, 128);
    /* 131072 sequences leave 1 id each: the page holds the whole context, rounded up */
    CHK_EQ(pa_get_min_page_size(3000, 131072, &m), PA_SUCCESS);
    CHK_EQ(m, 4096);
    m = 77;
    CHK_EQ(pa_get_min_page_size(3000, 131073, &m), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "131073"), "%s", pa_last_error());
    CHK_EQ(pa_get_min_page_size(0, 10, &m), PA_ERR_INVALID_ARGUMENT);
    CHK_EQ(pa_get_min_page_size(10, 0, &m), PA_ERR_INVALID_ARGUMENT);
    CHK_EQ(pa_get_min_page_size(10, -3, &m), PA_ERR_INVALID_ARGUMENT);
    CHK_EQ(m, 77);
    /* CUDA analogue: H100's 232448 bytes: 232448/2/256/4 = 113; ceil(8192/113) = 73 -> 128 */
    CHK_EQ(pa_cuda_min_page_size(8192, 256, 232448, &m), PA_SUCCESS);
    CHK_EQ(m, 128);
    /* one CTA per sequence: 232448/2/1/4 = 29056 ids; 131072 tokens -> ceil 5 -> 8 */
    CHK_EQ(pa_cuda_min_page_size(131072, 1, 232448, &m), PA_SUCCESS);
    CHK_EQ(m, 8);
    m = 77;
    CHK_EQ(pa_cuda_min_page_size(10, 100, 799, &m), PA_ERR_INVALID_ARGUMENT);
    CHK_EQ(m, 77);
}

Test(page_size, min_page_near_int64_max) {
    /* ceil(L / ids) must not wrap for L near INT64_MAX. 1 MiB/2/1/4 = 2^17 ids
     * per request: ceil((2^63 - 1) / 2^17) = 2^46 pages, past the int32 page
     * size limit, so refused; 2^47 tokens need exactly 2^30 pages (accepted),
     * one more token needs 2^30 + 1 (refused). */
    int32_t m = 77;
    CHK_EQ(pa_get_min_page_size(INT64_MAX, 1, &m), PA_ERR_INVALID_ARGUMENT, "got page %d", m);
    CHK(strstr(pa_last_error(), "overflows int32"), "%s", pa_last_error());
    CHK_EQ(m, 77);
    CHK_EQ(pa_get_min_page_size(INT64_MAX, 1000, &m), PA_ERR_INVALID_ARGUMENT, "got page %d", m);
    CHK_EQ(m, 77);
    CHK_EQ(pa_get_min_page_size((int64_t)1 << 47, 1, &m), PA_SUCCESS, "%s", pa_last_error());
    CHK_EQ(m, 1 << 30);
    m = 77;
    CHK_EQ(pa_get_min_page_size(((int64_t)1 << 47) + 1, 1, &m), PA_ERR_INVALID_ARGUMENT, "got page %d", m);
    CHK_EQ(m, 77);
    /* CUDA analogue, same rule: 232448/2/1/4 = 29056 ids per request */
    CHK_EQ(pa_cuda_min_page_size(INT64_MAX, 1, 232448, &m), PA_ERR_INVALID_ARGUMENT, "got page %d", m);
    CHK_EQ(m, 77);
    /* a budget so large it is clamped to INT64_MAX: (2^63 - 1)/8 = 2^60 - 1 ids;
     * ceil((2^63 - 1) / (2^60 - 1)) = 9 (8 * (2^60 - 1) = 2^63 - 8) -> page 16 */
    CHK_EQ(pa_cuda_min_page_size(INT64_MAX, 1, SIZE_MAX, &m), PA_SUCCESS, "%s", pa_last_error());
    CHK_EQ(m, 16);
    CHK_EQ(pa_cuda_min_page_size(INT64_MAX - 7, 1, SIZE_MAX, &m), PA_SUCCESS, "%s", pa_last_error());
    CHK_EQ(m, 8); /* 2^63 - 8 = exactly 8 * (2^60 - 1) */
}

Test(page_size, random_against_formulas) {
    rng_seed(9);
    for (int i = 0; i < 5000; i++) {
        const int64_t L = rng_range(0, 4) == 0 ? rng_range(1, 300) : rng_range(1, 1 << 22);
        int32_t got = -1;
        CHK_EQ(pa_get_page_size(L, &got), PA_SUCCESS);
        CHK_EQ(got, naive_page_size(L), "L %lld", (long long)L);
        const int64_t seqs = rng_range(1, 4) == 1 ? rng_range(1, 131072) : rng_range(1, 1024);
        CHK_EQ(pa_get_min_page_size(L, (int32_t)seqs, &got), PA_SUCCESS);
        CHK_EQ(got, naive_min_page(L, 1 << 20, seqs), "L %lld seqs %lld", (long long)L, (long long)seqs);
        /* the analogue with 1 MiB is the TPU rule */
        int32_t cuda = -1;
        CHK_EQ(pa_cuda_min_page_size(L, (int32_t)seqs, 1 << 20, &cuda), PA_SUCCESS);
        CHK_EQ(cuda, got);
        const int64_t smem = rng_range(8 * seqs, 1 << 18);
        CHK_EQ(pa_cuda_min_page_size(L, (int32_t)seqs, (size_t)smem, &cuda), PA_SUCCESS, "%s", pa_last_error());
        CHK_EQ(cuda, naive_min_page(L, smem, seqs));
    }
}

/* ---- cache shapes --------------------------------------------------------------------------- */

static void expect_shape(pa_kv_layout l, pa_dtype t, pa_kv_shape_part part, int32_t nb, int32_t bs, int32_t h,
                         int32_t d, int32_t rank, const int64_t *dims) {
    int64_t got[PA_MAX_SHAPE_RANK];
    int32_t r = -1;
    CHK_EQ(pa_kv_cache_shape(l, t, nb, bs, h, d, part, got, &r), PA_SUCCESS, "%s", pa_last_error());
    CHK_EQ(r, rank, "layout %d part %d rank %d, expected %d", l, part, r, rank);
    for (int i = 0; i < rank; i++)
        CHK_EQ(got[i], dims[i], "layout %d part %d dim %d: %lld, expected %lld", l, part, i, (long long)got[i],
               (long long)dims[i]);
}

Test(shapes, every_layout) {
    /* nb 100, block 16, kv heads 8, head 128 */
    const int64_t vk16[5] = {100, 8, 16, 16, 8}, vk32[5] = {100, 8, 32, 16, 4}, vk8[5] = {100, 8, 8, 16, 16};
    const int64_t vv[4] = {100, 8, 128, 16}, vp[3] = {2, 100, 16 * 8 * 128};
    expect_shape(PA_LAYOUT_VLLM, PA_DTYPE_F16, PA_KV_SHAPE_KEY, 100, 16, 8, 128, 5, vk16);
    expect_shape(PA_LAYOUT_VLLM, PA_DTYPE_BF16, PA_KV_SHAPE_KEY, 100, 16, 8, 128, 5, vk16);
    expect_shape(PA_LAYOUT_VLLM, PA_DTYPE_F32, PA_KV_SHAPE_KEY, 100, 16, 8, 128, 5, vk32);
    expect_shape(PA_LAYOUT_VLLM, PA_DTYPE_FP8_E4M3, PA_KV_SHAPE_KEY, 100, 16, 8, 128, 5, vk8);
    expect_shape(PA_LAYOUT_VLLM, PA_DTYPE_F16, PA_KV_SHAPE_VALUE, 100, 16, 8, 128, 4, vv);
    expect_shape(PA_LAYOUT_VLLM, PA_DTYPE_F16, PA_KV_SHAPE_PAIR, 100, 16, 8, 128, 3, vp);
    const int64_t nhd[4] = {100, 16, 8, 128}, hnd[4] = {100, 8, 16, 128};
    const int64_t nhd2[5] = {2, 100, 16, 8, 128}, hnd2[5] = {2, 100, 8, 16, 128};
    expect_shape(PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, PA_KV_SHAPE_KEY, 100, 16, 8, 128, 4, nhd);
    expect_shape(PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, PA_KV_SHAPE_VALUE, 100, 16, 8, 128, 4, nhd);
    expect_shape(PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, PA_KV_SHAPE_PAIR, 100, 16, 8, 128, 5, nhd2);
    expect_shape(PA_LAYOUT_FLASH_HND, PA_DTYPE_F16, PA_KV_SHAPE_KEY, 100, 16, 8, 128, 4, hnd);
    expect_shape(PA_LAYOUT_FLASH_HND, PA_DTYPE_F16, PA_KV_SHAPE_VALUE, 100, 16, 8, 128, 4, hnd);
    expect_shape(PA_LAYOUT_FLASH_HND, PA_DTYPE_F16, PA_KV_SHAPE_PAIR, 100, 16, 8, 128, 5, hnd2);
    const int64_t cmb[4] = {100, 16, 16, 128};
    expect_shape(PA_LAYOUT_COMBINED, PA_DTYPE_F16, PA_KV_SHAPE_KEY, 100, 16, 8, 128, 4, cmb);
    expect_shape(PA_LAYOUT_COMBINED, PA_DTYPE_F16, PA_KV_SHAPE_PAIR, 100, 16, 8, 128, 4, cmb);
    /* vLLM layout with an odd head: 80 (f16 x = 8 -> 10) */
    const int64_t vk80[5] = {3, 1, 10, 32, 8};
    expect_shape(PA_LAYOUT_VLLM, PA_DTYPE_F16, PA_KV_SHAPE_KEY, 3, 32, 1, 80, 5, vk80);
}

Test(shapes, element_counts_agree_with_descriptor) {
    /* The product of the buffer dims equals what pa_kv_cache_elements says to allocate. */
    static char dummy[16];
    for (int l = PA_LAYOUT_VLLM; l <= PA_LAYOUT_COMBINED; l++)
        for (int t = 0; t < PA_DTYPE_COUNT; t++) {
            pa_kv_cache c;
            memset(&c, 0, sizeof c);
            c.layout = (pa_kv_layout)l;
            c.dtype = (pa_dtype)t;
            c.key = dummy;
            c.value = l == PA_LAYOUT_COMBINED ? NULL : dummy + 8;
            c.num_blocks = 7;
            c.block_size = 16;
            c.num_kv_heads = 3;
            c.head_size = 64;
            int64_t ke = 0, ve = 0;
            CHK_EQ(pa_kv_cache_elements(&c, &ke, &ve), PA_SUCCESS, "%s", pa_last_error());
            int64_t dims[PA_MAX_SHAPE_RANK];
            int32_t r;
            CHK_EQ(pa_kv_cache_shape(c.layout, c.dtype, 7, 16, 3, 64, PA_KV_SHAPE_KEY, dims, &r), PA_SUCCESS);
            int64_t prod = 1;
            for (int i = 0; i < r; i++)
                prod *= dims[i];
            CHK_EQ(prod, ke, "layout %d dtype %d", l, t);
            if (l != PA_LAYOUT_COMBINED) {
                CHK_EQ(pa_kv_cache_shape(c.layout, c.dtype, 7, 16, 3, 64, PA_KV_SHAPE_VALUE, dims, &r), PA_SUCCESS);
                int64_t pv = 1;
                for (int i = 0; i < r; i++)
                    pv *= dims[i];
                CHK_EQ(pv, ve);
                CHK_EQ(pa_kv_cache_shape(c.layout, c.dtype, 7, 16, 3, 64, PA_KV_SHAPE_PAIR, dims, &r), PA_SUCCESS);
                int64_t pp = 1;
                for (int i = 0; i < r; i++)
                    pp *= dims[i];
                CHK_EQ(pp, ke + ve);
            }
        }
}

/* heuristics.h: "the element count must fit in int64" is the count of the
 * buffer asked for. 2^30 blocks x 2^16 x 2^8 heads x 2^8 = 2^62 elements: a
 * key or value buffer fits (as pa_kv_cache_elements sizes it), the pair
 * (2^63) does not, and the combined layout's one buffer, K and V, neither. */
Test(shapes, element_count_at_the_int64_edge) {
    int64_t dims[PA_MAX_SHAPE_RANK];
    int32_t r = 0;
    const int32_t nb = 1 << 30, bs = 1 << 16, h = 1 << 8, d = 1 << 8;
    for (int l = PA_LAYOUT_VLLM; l <= PA_LAYOUT_FLASH_HND; l++)
        for (int part = PA_KV_SHAPE_KEY; part <= PA_KV_SHAPE_VALUE; part++) {
            CHK_EQ(
                pa_kv_cache_shape((pa_kv_layout)l, PA_DTYPE_FP8_E4M3, nb, bs, h, d, (pa_kv_shape_part)part, dims, &r),
                PA_SUCCESS, "layout %d part %d: %s", l, part, pa_last_error());
            int64_t prod = 1;
            for (int i = 0; i < r; i++)
                prod *= dims[i];
            CHK_EQ(prod, (int64_t)1 << 62, "layout %d part %d", l, part);
            CHK_EQ(pa_kv_cache_shape((pa_kv_layout)l, PA_DTYPE_FP8_E4M3, nb, bs, h, d, PA_KV_SHAPE_PAIR, dims, &r),
                   PA_ERR_INVALID_ARGUMENT, "layout %d pair", l);
            CHK(strstr(pa_last_error(), "overflows int64") != NULL, "%s", pa_last_error());
        }
    CHK_EQ(pa_kv_cache_shape(PA_LAYOUT_COMBINED, PA_DTYPE_FP8_E4M3, nb, bs, h, d, PA_KV_SHAPE_KEY, dims, &r),
           PA_ERR_INVALID_ARGUMENT);
    CHK_EQ(pa_kv_cache_shape(PA_LAYOUT_COMBINED, PA_DTYPE_FP8_E4M3, nb >> 1, bs, h, d, PA_KV_SHAPE_KEY, dims, &r),
           PA_SUCCESS, "%s", pa_last_error());
    /* the descriptor agrees: the same cache's key buffer is 2^62 elements */
    static char dummy[16];
    pa_kv_cache c;
    memset(&c, 0, sizeof c);
    c.layout = PA_LAYOUT_FLASH_NHD;
    c.dtype = PA_DTYPE_FP8_E4M3;
    c.key = dummy;
    c.value = dummy + 8;
    c.num_blocks = nb;
    c.block_size = bs;
    c.num_kv_heads = h;
    c.head_size = d;
    int64_t ke = 0, ve = 0;
    CHK_EQ(pa_kv_cache_elements(&c, &ke, &ve), PA_SUCCESS, "%s", pa_last_error());
    CHK_EQ(ke, (int64_t)1 << 62);
}

Test(shapes, bad_input) {
    int64_t dims[PA_MAX_SHAPE_RANK] = {-7, -7, -7, -7, -7, -7};
    int32_t r = -7;
#define EXPECT_BAD(sub, ...)                                                                                           \
    do {                                                                                                               \
        CHK_EQ(pa_kv_cache_shape(__VA_ARGS__), PA_ERR_INVALID_ARGUMENT);                                               \
        CHK(strstr(pa_last_error(), sub) != NULL, "'%s' lacks '%s'", pa_last_error(), sub);                            \
        for (int i_ = 0; i_ < PA_MAX_SHAPE_RANK; i_++)                                                                 \
            CHK_EQ(dims[i_], -7);                                                                                      \
        CHK_EQ(r, -7);                                                                                                 \
    } while (0)
    EXPECT_BAD("multiple of x = 8", PA_LAYOUT_VLLM, PA_DTYPE_F16, 10, 16, 8, 100, PA_KV_SHAPE_KEY, dims, &r);
    EXPECT_BAD("no separate value", PA_LAYOUT_COMBINED, PA_DTYPE_F16, 10, 16, 8, 128, PA_KV_SHAPE_VALUE, dims, &r);
    EXPECT_BAD("block_size", PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, 10, 0, 8, 128, PA_KV_SHAPE_KEY, dims, &r);
    EXPECT_BAD("block_size", PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, 10, -16, 8, 128, PA_KV_SHAPE_KEY, dims, &r);
    EXPECT_BAD("num_blocks", PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, -1, 16, 8, 128, PA_KV_SHAPE_KEY, dims, &r);
    EXPECT_BAD("num_kv_heads", PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, 1, 16, 0, 128, PA_KV_SHAPE_KEY, dims, &r);
    EXPECT_BAD("head_size", PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, 1, 16, 1, 0, PA_KV_SHAPE_KEY, dims, &r);
    EXPECT_BAD("overflows int64", PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, INT32_MAX, INT32_MAX, INT32_MAX, 64,
               PA_KV_SHAPE_KEY, dims, &r);
    EXPECT_BAD("layout", (pa_kv_layout)9, PA_DTYPE_F16, 1, 16, 1, 64, PA_KV_SHAPE_KEY, dims, &r);
    EXPECT_BAD("dtype", PA_LAYOUT_FLASH_NHD, (pa_dtype)9, 1, 16, 1, 64, PA_KV_SHAPE_KEY, dims, &r);
    EXPECT_BAD("part", PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, 1, 16, 1, 64, (pa_kv_shape_part)5, dims, &r);
    EXPECT_BAD("NULL", PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, 1, 16, 1, 64, PA_KV_SHAPE_KEY, NULL, &r);
#undef EXPECT_BAD
}

/* ---- supported sizes ----------------------------------------------------------------------- */

Test(supported, lists_and_agreement_with_decode) {
    /* Every multiple of 8 from 8 to 256, vLLM's nine among them. */
    int32_t heads[32];
    for (int i = 0; i < 32; i++)
        heads[i] = 8 * (i + 1);
    int32_t got[40], n = -1;
    CHK_EQ(pa_supported_head_sizes(NULL, 0, &n), PA_SUCCESS);
    CHK_EQ(n, 32);
    memset(got, 0x7f, sizeof got);
    CHK_EQ(pa_supported_head_sizes(got, 40, &n), PA_SUCCESS);
    CHK_EQ(memcmp(got, heads, sizeof heads), 0);
    CHK_EQ(got[32], 0x7f7f7f7f);
    /* truncated copy */
    memset(got, 0x7f, sizeof got);
    CHK_EQ(pa_supported_head_sizes(got, 3, &n), PA_SUCCESS);
    CHK_EQ(n, 32);
    CHK(got[0] == 8 && got[2] == 24 && got[3] == 0x7f7f7f7f);
    CHK_EQ(pa_supported_head_sizes(NULL, 3, &n), PA_ERR_INVALID_ARGUMENT);
    CHK_EQ(pa_supported_head_sizes(got, 3, NULL), PA_ERR_INVALID_ARGUMENT);
    CHK_EQ(pa_supported_head_sizes(got, -1, &n), PA_ERR_INVALID_ARGUMENT);
    int32_t blocks[8], nb = -1;
    CHK_EQ(pa_supported_block_sizes(blocks, 8, &nb), PA_SUCCESS);
    CHK_EQ(nb, 5);
    const int32_t eb[5] = {8, 16, 32, 64, 128};
    CHK_EQ(memcmp(blocks, eb, sizeof eb), 0);

    /* The decode op accepts exactly these head and block sizes. */
    static char dummy[16];
    for (int32_t hs = 1; hs <= 300; hs++)
        for (int bi = 0; bi < 2; bi++) {
            const int32_t bs = bi ? 16 : hs; /* sweep head sizes, and block sizes with hs = 128 */
            const int32_t head = bi ? hs : 128;
            pa_decode_params p;
            memset(&p, 0, sizeof p);
            p.num_heads = 8;
            p.q_dtype = PA_DTYPE_F16;
            p.scale = 1.0f;
            p.kv.layout = PA_LAYOUT_FLASH_NHD;
            p.kv.dtype = PA_DTYPE_F16;
            p.kv.key = dummy;
            p.kv.value = dummy + 8;
            p.kv.num_blocks = 1;
            p.kv.block_size = bs;
            p.kv.num_kv_heads = 8;
            p.kv.head_size = head;
            int in_heads = 0, in_blocks = 0;
            for (int i = 0; i < n; i++)
                in_heads |= heads[i] == head;
            for (int i = 0; i < nb; i++)
                in_blocks |= eb[i] == bs;
            const pa_status s = pa_decode_validate(&p);
            CHK_EQ(s == PA_SUCCESS, in_heads && in_blocks, "head %d block %d: %s", head, bs, pa_last_error());
        }
}

/* ---- per-layer hyperparameters ------------------------------------------------------------ */

Test(hyperparameters, agree_and_disagree) {
    pa_layer_params layers[5];
    for (int i = 0; i < 5; i++)
        layers[i] = (pa_layer_params){.window_left = 4095, .logits_soft_cap = 50.0f, .sm_scale = 0.08838834764f};
    pa_layer_params g;
    CHK_EQ(pa_infer_global_hyperparameters(layers, 5, &g), PA_SUCCESS, "%s", pa_last_error());
    CHK(g.window_left == 4095 && g.logits_soft_cap == 50.0f && g.sm_scale == 0.08838834764f);
    CHK_EMPTY(pa_last_error());
    CHK_EQ(pa_infer_global_hyperparameters(layers, 1, &g), PA_SUCCESS);

    const pa_layer_params keep = {-99, -99.0f, -99.0f};
    struct {
        int layer;
        int field;
        const char *sub;
    } cases[] = {{3, 0, "layer 3: window_left"}, {1, 1, "layer 1: logits_soft_cap"}, {4, 2, "layer 4: sm_scale"}};
    for (size_t c = 0; c < 3; c++) {
        pa_layer_params ls[5];
        memcpy(ls, layers, sizeof ls);
        if (cases[c].field == 0)
            ls[cases[c].layer].window_left = -1;
        else if (cases[c].field == 1)
            ls[cases[c].layer].logits_soft_cap = 0.0f;
        else
            ls[cases[c].layer].sm_scale = 0.125f;
        /* a later layer differing too: the first one is named */
        if (cases[c].layer < 4)
            ls[4].window_left = 7;
        g = keep;
        CHK_EQ(pa_infer_global_hyperparameters(ls, 5, &g), PA_ERR_INVALID_ARGUMENT);
        CHK(strstr(pa_last_error(), cases[c].sub) != NULL, "'%s' lacks '%s'", pa_last_error(), cases[c].sub);
        CHK(g.window_left == -99 && g.logits_soft_cap == -99.0f && g.sm_scale == -99.0f);
    }
    g = keep;
    CHK_EQ(pa_infer_global_hyperparameters(layers, 0, &g), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "no attention layers"));
    CHK_EQ(pa_infer_global_hyperparameters(NULL, 3, &g), PA_ERR_INVALID_ARGUMENT);
    CHK_EQ(pa_infer_global_hyperparameters(layers, 5, NULL), PA_ERR_INVALID_ARGUMENT);
    pa_layer_params bad[2] = {layers[0], layers[0]};
    bad[1].sm_scale = NAN;
    CHK_EQ(pa_infer_global_hyperparameters(bad, 2, &g), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "layer 1: sm_scale must be finite"), "%s", pa_last_error());
    bad[1] = layers[0];
    bad[1].logits_soft_cap = -1.0f;
    CHK_EQ(pa_infer_global_hyperparameters(bad, 2, &g), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "layer 1: logits_soft_cap"));
    bad[1] = layers[0];
    bad[0].window_left = -2;
    CHK_EQ(pa_infer_global_hyperparameters(bad, 2, &g), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "layer 0: window_left must be >= -1"));
    CHK(g.window_left == -99);
}

Test(hyperparameters, random_agreement) {
    rng_seed(21);
    for (int it = 0; it < 2000; it++) {
        pa_layer_params ls[32];
        const int n = (int)rng_range(1, 32);
        const pa_layer_params base = {(int32_t)rng_range(-1, 8192), (float)rng_range(0, 3) * 10.0f,
                                      1.0f / (float)rng_range(1, 256)};
        int first_diff = -1;
        for (int i = 0; i < n; i++) {
            ls[i] = base;
            if (i > 0 && rng_range(0, 2 * n) == 0) {
                const int f = (int)rng_range(0, 2);
                if (f == 0)
                    ls[i].window_left += 1;
                else if (f == 1)
                    ls[i].logits_soft_cap += 1.0f;
                else
                    ls[i].sm_scale *= 2.0f;
                if (first_diff < 0)
                    first_diff = i;
            }
        }
        pa_layer_params g;
        pa_status s = pa_infer_global_hyperparameters(ls, n, &g);
        if (first_diff < 0) {
            CHK_EQ(s, PA_SUCCESS, "%s", pa_last_error());
            CHK(memcmp(&g, &base, sizeof g) == 0);
        } else {
            char want[32];
            snprintf(want, sizeof want, "layer %d:", first_diff);
            CHK_EQ(s, PA_ERR_INVALID_ARGUMENT);
            CHK(strstr(pa_last_error(), want), "'%s' lacks '%s'", pa_last_error(), want);
        }
    }
}

/* ---- KV layout choice ------------------------------------------------------------------------ */

Test(kv_layout_choice, default_env_and_override) {
    pa_kv_layout l;
    CHK_EQ(pa_set_kv_cache_layout(NULL), PA_SUCCESS);
    unsetenv("PAGEDATTN_KV_CACHE_LAYOUT");
    CHK_EQ(pa_get_kv_cache_layout(&l), PA_SUCCESS);
    CHK_EQ(l, PA_LAYOUT_FLASH_NHD);
    setenv("PAGEDATTN_KV_CACHE_LAYOUT", "HND", 1);
    CHK_EQ(pa_get_kv_cache_layout(&l), PA_SUCCESS);
    CHK_EQ(l, PA_LAYOUT_FLASH_HND);
    setenv("PAGEDATTN_KV_CACHE_LAYOUT", "nhd", 1); /* the setter's names, lower case too */
    CHK_EQ(pa_get_kv_cache_layout(&l), PA_SUCCESS);
    CHK_EQ(l, PA_LAYOUT_FLASH_NHD);
    setenv("PAGEDATTN_KV_CACHE_LAYOUT", "hnd", 1);
    CHK_EQ(pa_get_kv_cache_layout(&l), PA_SUCCESS);
    CHK_EQ(l, PA_LAYOUT_FLASH_HND);
    setenv("PAGEDATTN_KV_CACHE_LAYOUT", "Hnd", 1); /* not a name */
    CHK_EQ(pa_get_kv_cache_layout(&l), PA_ERR_INVALID_ARGUMENT);
    setenv("PAGEDATTN_KV_CACHE_LAYOUT", "", 1); /* empty = unset */
    CHK_EQ(pa_get_kv_cache_layout(&l), PA_SUCCESS);
    CHK_EQ(l, PA_LAYOUT_FLASH_NHD);
    /* invalid env value: an error, never silently NHD */
    setenv("PAGEDATTN_KV_CACHE_LAYOUT", "NDH", 1);
    l = (pa_kv_layout)77;
    CHK_EQ(pa_get_kv_cache_layout(&l), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "PAGEDATTN_KV_CACHE_LAYOUT='NDH'"), "%s", pa_last_error());
    CHK_EQ((int)l, 77);
    /* the override wins over the environment, even an invalid one */
    CHK_EQ(pa_set_kv_cache_layout("HND"), PA_SUCCESS);
    CHK_EQ(pa_get_kv_cache_layout(&l), PA_SUCCESS);
    CHK_EQ(l, PA_LAYOUT_FLASH_HND);
    setenv("PAGEDATTN_KV_CACHE_LAYOUT", "HND", 1);
    CHK_EQ(pa_set_kv_cache_layout("nhd"), PA_SUCCESS);
    CHK_EQ(pa_get_kv_cache_layout(&l), PA_SUCCESS);
    CHK_EQ(l, PA_LAYOUT_FLASH_NHD);
    /* an invalid setter value is an error and keeps the override */
    CHK_EQ(pa_set_kv_cache_layout("combined"), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "'combined'"));
    CHK_EQ(pa_get_kv_cache_layout(&l), PA_SUCCESS);
    CHK_EQ(l, PA_LAYOUT_FLASH_NHD);
    /* clearing falls back to the environment */
    CHK_EQ(pa_set_kv_cache_layout(NULL), PA_SUCCESS);
    CHK_EQ(pa_get_kv_cache_layout(&l), PA_SUCCESS);
    CHK_EQ(l, PA_LAYOUT_FLASH_HND);
    CHK_EQ(pa_get_kv_cache_layout(NULL), PA_ERR_INVALID_ARGUMENT);
    unsetenv("PAGEDATTN_KV_CACHE_LAYOUT");
}

/* The v2 scratch size's two overflow checks, each one step past int64 (found
 * unreached by scripts/refusal-coverage.py), and the page-size queries' NULL
 * output. Nothing is written. */
Test(decode_heuristic, plan_scratch_past_int64) {
    pa_decode_plan pl, keep;
    memset(&keep, 0x5A, sizeof keep);
    pl = keep;
    /* (2^31 - 1)^2 (sequence, head) pairs of 2^22 partitions: past 2^63 at the second factor */
    CHK_EQ(pa_decode_make_plan(INT32_MAX, INT32_MAX, 1, 128, 16, INT32_MAX, &pl), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "decode plan: v2 scratch size overflows int64"), "%s", pa_last_error());
    CHK_EQ(memcmp(&pl, &keep, sizeof pl), 0);
    /* 2^20 x 2^20 pairs of 2^22 partitions: 2^62 rows, fine; 2 dims: 2^63 */
    CHK_EQ(pa_decode_make_plan(1 << 20, 1 << 20, 1, 2, 16, INT32_MAX, &pl), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "decode plan: v2 scratch size overflows int64"), "%s", pa_last_error());
    CHK_EQ(memcmp(&pl, &keep, sizeof pl), 0);
    /* one dim: 2^62 elements, the largest that fits */
    CHK_EQ(pa_decode_make_plan(1 << 20, 1 << 20, 1, 1, 16, INT32_MAX, &pl), PA_SUCCESS, "%s", pa_last_error());
    CHK_EQ(pl.use_v1, 0);
    CHK_EQ(pl.max_num_partitions, 1 << 22);
    CHK_EQ(pl.tmp_out_elems, (int64_t)1 << 62);

    CHK_EQ(pa_get_min_page_size(4096, 8, NULL), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "min page size: out is NULL"), "%s", pa_last_error());
    CHK_EQ(pa_cuda_min_page_size(4096, 8, 48 * 1024, NULL), PA_ERR_INVALID_ARGUMENT);
    CHK(strstr(pa_last_error(), "cuda min page size: out is NULL"), "%s", pa_last_error());
}
