/* Cache descriptors: validation and the element offsets of each layout,
 * checked against index formulas written out from the shapes. */
#include <criterion/criterion.h>
#include <string.h>

#include "kv_index.h"
#include "pagedattn/pagedattn.h"

static char dummy[16];

static pa_kv_cache make(pa_kv_layout l, pa_dtype t, int nb, int bs, int nh, int hs) {
    pa_kv_cache c;
    memset(&c, 0, sizeof c);
    c.layout = l;
    c.dtype = t;
    c.key = dummy;
    c.value = l == PA_LAYOUT_COMBINED ? NULL : dummy + 8;
    c.num_blocks = nb;
    c.block_size = bs;
    c.num_kv_heads = nh;
    c.head_size = hs;
    return c;
}

/* Row-major offset of index idx[0..n) in a tensor of shape dims[0..n). */
static int64_t rowmajor(const int64_t *dims, const int64_t *idx, int n) {
    int64_t off = 0;
    for (int i = 0; i < n; i++)
        off = off * dims[i] + idx[i];
    return off;
}

Test(kv_cache, vllm_layout_offsets_match_shapes) {
    for (int dt = 0; dt < PA_DTYPE_COUNT; dt++) {
        const int nb = 3, bs = 16, nh = 2, hs = 64;
        const int x = 16 / (int)pa_dtype_size((pa_dtype)dt);
        pa_kv_geom g = pa_kv_geom_make(PA_LAYOUT_VLLM, (int)pa_dtype_size((pa_dtype)dt), bs, nh, hs, 0, 0, 0);
        int64_t kd[5] = {nb, nh, hs / x, bs, x}, vd[4] = {nb, nh, hs, bs};
        for (int b = 0; b < nb; b++)
            for (int h = 0; h < nh; h++)
                for (int t = 0; t < bs; t += 5)
                    for (int d = 0; d < hs; d += 3) {
                        int64_t ki[5] = {b, h, d / x, t, d % x}, vi[4] = {b, h, d, t};
                        cr_assert_eq(pa_kv_key_offset(&g, b, h, t, d), rowmajor(kd, ki, 5));
                        cr_assert_eq(pa_kv_value_offset(&g, b, h, t, d), rowmajor(vd, vi, 4));
                    }
    }
}

Test(kv_cache, flash_and_combined_offsets_match_shapes) {
    const int nb = 4, bs = 8, nh = 3, hs = 80;
    pa_kv_geom nhd = pa_kv_geom_make(PA_LAYOUT_FLASH_NHD, 2, bs, nh, hs, 0, 0, 0);
    pa_kv_geom hnd = pa_kv_geom_make(PA_LAYOUT_FLASH_HND, 2, bs, nh, hs, 0, 0, 0);
    pa_kv_geom cmb = pa_kv_geom_make(PA_LAYOUT_COMBINED, 2, bs, nh, hs, 0, 0, 0);
    int64_t dn[4] = {nb, bs, nh, hs}, dh[4] = {nb, nh, bs, hs}, dc[4] = {nb, bs, 2 * nh, hs};
    for (int b = 0; b < nb; b++)
        for (int h = 0; h < nh; h++)
            for (int t = 0; t < bs; t++)
                for (int d = 0; d < hs; d += 7) {
                    int64_t in[4] = {b, t, h, d}, ih[4] = {b, h, t, d};
                    int64_t ik[4] = {b, t, 2 * h, d}, iv[4] = {b, t, 2 * h + 1, d};
                    cr_assert_eq(pa_kv_key_offset(&nhd, b, h, t, d), rowmajor(dn, in, 4));
                    cr_assert_eq(pa_kv_value_offset(&nhd, b, h, t, d), rowmajor(dn, in, 4));
                    cr_assert_eq(pa_kv_key_offset(&hnd, b, h, t, d), rowmajor(dh, ih, 4));
                    cr_assert_eq(pa_kv_key_offset(&cmb, b, h, t, d), rowmajor(dc, ik, 4));
                    cr_assert_eq(pa_kv_value_offset(&cmb, b, h, t, d), rowmajor(dc, iv, 4));
                }
}

Test(kv_cache, explicit_strides_are_honoured) {
    /* NHD view with padding between heads and between blocks. */
    pa_kv_geom g = pa_kv_geom_make(PA_LAYOUT_FLASH_NHD, 2, 16, 2, 64, 5000, 300, 100);
    cr_assert_eq(pa_kv_key_offset(&g, 2, 1, 3, 7), 2 * 5000 + 3 * 300 + 1 * 100 + 7);
}

/* kv_cache.h: the stride of a dimension of size 1 is ignored (it reads as the
 * contiguous value); strides that nest as the other layout's are refused,
 * naming that layout. Sizes and offsets below from the layouts' definitions. */
Test(kv_cache, a_size_one_dimension_takes_any_stride) {
    /* One KV head viewed as NHD out of an HND allocation [4, 1, 16, 64]:
     * head_stride 16 x 64, page_stride 64. */
    pa_kv_cache n = make(PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, 4, 16, 1, 64);
    n.head_stride = 16 * 64;
    n.page_stride = 64;
    int64_t ke = 0, ve = 0;
    cr_assert_eq(pa_kv_cache_elements(&n, &ke, &ve), PA_SUCCESS, "%s", pa_last_error());
    cr_assert(ke == 4 * 16 * 64 && ve == ke, "elements %lld / %lld", (long long)ke, (long long)ve);
    for (int64_t hstr = 1; hstr <= 4096; hstr *= 4) {
        const pa_kv_geom g = pa_kv_geom_make(PA_LAYOUT_FLASH_NHD, 2, 16, 1, 64, 0, 64, hstr);
        cr_assert(g.head_stride == 64 && g.page_stride == 64 && g.block_stride == 16 * 64,
                  "head_stride %lld resolves to %lld / %lld / %lld", (long long)hstr, (long long)g.head_stride,
                  (long long)g.page_stride, (long long)g.block_stride);
        cr_assert_eq(pa_kv_key_offset(&g, 3, 0, 5, 7), 3 * 16 * 64 + 5 * 64 + 7);
    }
    /* Blocks of one token (a token-granular pool): page_stride ignored, HND and NHD. */
    pa_kv_cache h = make(PA_LAYOUT_FLASH_HND, PA_DTYPE_BF16, 8, 1, 2, 128);
    h.page_stride = 7;
    cr_assert_eq(pa_kv_cache_elements(&h, &ke, &ve), PA_SUCCESS, "%s", pa_last_error());
    cr_assert(ke == 8 * 2 * 128, "elements %lld", (long long)ke);
    pa_kv_cache t = make(PA_LAYOUT_FLASH_NHD, PA_DTYPE_BF16, 8, 1, 2, 128);
    t.page_stride = 3;
    t.block_stride = 2 * 128 + 32; /* padded blocks still count */
    cr_assert_eq(pa_kv_cache_elements(&t, &ke, &ve), PA_SUCCESS, "%s", pa_last_error());
    cr_assert(ke == 7 * (2 * 128 + 32) + 2 * 128, "elements %lld", (long long)ke);
    /* A negative stride is still refused, size 1 or not. */
    n.head_stride = -5;
    cr_assert_eq(pa_kv_cache_validate(&n), PA_ERR_INVALID_ARGUMENT);
    /* Two KV heads with HND's nesting under the NHD name: refused, naming HND;
     * and the reverse. */
    pa_kv_cache x = make(PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, 4, 16, 2, 64);
    x.page_stride = 64;
    x.head_stride = 16 * 64;
    cr_assert_eq(pa_kv_cache_validate(&x), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "PA_LAYOUT_FLASH_HND") != NULL, "%s", pa_last_error());
    pa_kv_cache y = make(PA_LAYOUT_FLASH_HND, PA_DTYPE_F16, 4, 16, 2, 64);
    y.head_stride = 64;
    y.page_stride = 2 * 64;
    cr_assert_eq(pa_kv_cache_validate(&y), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "PA_LAYOUT_FLASH_NHD") != NULL, "%s", pa_last_error());
}

/* pa_kv_linear: the row offsets (d = 0) of every layout as one linear form,
 * which the prefill kernels use in place of the layout switch; checked against
 * the offset functions (checked against the shapes above) on every layout,
 * both vLLM element sizes, explicit strides and blocks past 2^31 elements. */
Test(kv_cache, linear_form_matches_offsets_on_every_layout) {
    const int bs = 16, nh = 4, hs = 128;
    const pa_kv_geom gs[] = {
        pa_kv_geom_make(PA_LAYOUT_VLLM, 2, bs, nh, hs, 0, 0, 0),
        pa_kv_geom_make(PA_LAYOUT_VLLM, 1, 32, nh, hs, 0, 0, 0),
        pa_kv_geom_make(PA_LAYOUT_FLASH_NHD, 2, bs, nh, hs, 0, 0, 0),
        pa_kv_geom_make(PA_LAYOUT_FLASH_HND, 2, bs, nh, hs, 0, 0, 0),
        pa_kv_geom_make(PA_LAYOUT_COMBINED, 2, bs, nh, hs, 0, 0, 0),
        pa_kv_geom_make(PA_LAYOUT_FLASH_NHD, 2, bs, nh, hs, 70000, 600, 136),
        pa_kv_geom_make(PA_LAYOUT_FLASH_HND, 1, 24, nh, hs, 90000, 144, 3600),
    };
    const int64_t blocks[] = {0, 1, 7, 12345, (int64_t)1 << 21};
    for (size_t i = 0; i < sizeof gs / sizeof gs[0]; i++) {
        const pa_kv_geom *g = &gs[i];
        const pa_kv_linear l = pa_kv_linear_make(g);
        for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++)
            for (int h = 0; h < nh; h++)
                for (int t = 0; t < g->block_size; t += 3) {
                    const int64_t row = blocks[b] * l.block + h * l.head;
                    cr_assert_eq(row + t * l.k_tok, pa_kv_key_offset(g, blocks[b], h, t, 0), "geometry %zu key", i);
                    cr_assert_eq(row + t * l.v_tok + l.v_add, pa_kv_value_offset(g, blocks[b], h, t, 0),
                                 "geometry %zu value", i);
                }
    }
}

Test(kv_cache, offsets_are_64_bit) {
    /* 2^20 blocks of 16 tokens x 8 heads x 256: far past 2^31 elements. */
    pa_kv_geom g = pa_kv_geom_make(PA_LAYOUT_FLASH_NHD, 2, 16, 8, 256, 0, 0, 0);
    int64_t off = pa_kv_key_offset(&g, (1 << 20) - 1, 7, 15, 255);
    cr_assert_eq(off, (int64_t)(1 << 20) * 16 * 8 * 256 - 1);
    pa_kv_cache c = make(PA_LAYOUT_VLLM, PA_DTYPE_BF16, 1 << 20, 16, 8, 256);
    int64_t ke, ve;
    cr_assert_eq(pa_kv_cache_elements(&c, &ke, &ve), PA_SUCCESS);
    cr_assert_eq(ke, (int64_t)(1 << 20) * 16 * 8 * 256);
    cr_assert_eq(ve, ke);
}

Test(kv_cache, element_counts) {
    pa_kv_cache c = make(PA_LAYOUT_COMBINED, PA_DTYPE_F16, 5, 16, 4, 128);
    int64_t ke = 0, ve = 7;
    cr_assert_eq(pa_kv_cache_elements(&c, &ke, &ve), PA_SUCCESS);
    cr_assert_eq(ke, 5LL * 16 * 8 * 128);
    cr_assert_eq(ve, 0);
}

Test(kv_cache, validation_rejects_bad_descriptors) {
    pa_kv_cache c = make(PA_LAYOUT_VLLM, PA_DTYPE_F16, 4, 16, 2, 64);
    cr_assert_eq(pa_kv_cache_validate(&c), PA_SUCCESS);
    pa_kv_cache b = c;
    b.block_size = 0;
    cr_assert_eq(pa_kv_cache_validate(&b), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "block_size") != NULL);
    b = c;
    b.num_kv_heads = -1;
    cr_assert_eq(pa_kv_cache_validate(&b), PA_ERR_INVALID_ARGUMENT);
    b = c;
    b.head_size = 36; /* not a multiple of x = 8 for f16 */
    cr_assert_eq(pa_kv_cache_validate(&b), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "x = 8") != NULL, "%s", pa_last_error());
    b = c;
    b.value = NULL;
    cr_assert_eq(pa_kv_cache_validate(&b), PA_ERR_INVALID_ARGUMENT);
    b = c;
    b.dtype = (pa_dtype)9;
    cr_assert_eq(pa_kv_cache_validate(&b), PA_ERR_INVALID_ARGUMENT);
    b = c;
    b.page_stride = 10; /* strides are fixed for the vLLM layout */
    cr_assert_eq(pa_kv_cache_validate(&b), PA_ERR_INVALID_ARGUMENT);
    /* each of the three, block and head strides too, in both fixed layouts */
    for (int layout = 0; layout < 2; layout++) {
        for (int which = 0; which < 3; which++) {
            b = layout ? make(PA_LAYOUT_COMBINED, PA_DTYPE_F16, 4, 16, 2, 64) : c;
            int64_t *stride = which == 0 ? &b.block_stride : which == 1 ? &b.page_stride : &b.head_stride;
            *stride = 4096;
            cr_assert_eq(pa_kv_cache_validate(&b), PA_ERR_INVALID_ARGUMENT, "layout %d stride %d", layout, which);
            cr_assert(strstr(pa_last_error(), "strides are fixed and must be left 0") != NULL, "%s", pa_last_error());
        }
    }
    pa_kv_cache n = make(PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, 4, 16, 2, 64);
    n.head_stride = 32; /* heads would overlap */
    cr_assert_eq(pa_kv_cache_validate(&n), PA_ERR_INVALID_ARGUMENT);
    pa_kv_cache k = make(PA_LAYOUT_COMBINED, PA_DTYPE_F16, 4, 16, 2, 64);
    k.value = dummy + 4;
    cr_assert_eq(pa_kv_cache_validate(&k), PA_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pa_kv_cache_validate(NULL), PA_ERR_INVALID_ARGUMENT);
}

/* A descriptor whose buffer would pass 2^63 elements (or bytes) must be
 * rejected by both pa_kv_cache_validate and pa_kv_cache_elements, never sized
 * with a wrapped product. */
static void expect_too_big(pa_kv_cache c, const char *what) {
    cr_assert_eq(pa_kv_cache_validate(&c), PA_ERR_INVALID_ARGUMENT, "%s: validate accepted", what);
    cr_assert(strstr(pa_last_error(), "overflows int64") != NULL, "%s: '%s'", what, pa_last_error());
    int64_t ke = -7, ve = -7;
    cr_assert_eq(pa_kv_cache_elements(&c, &ke, &ve), PA_ERR_INVALID_ARGUMENT, "%s: elements accepted (%lld, %lld)",
                 what, (long long)ke, (long long)ve);
    cr_assert(strstr(pa_last_error(), "overflows int64") != NULL, "%s: '%s'", what, pa_last_error());
    cr_assert(ke == -7 && ve == -7, "%s: outputs written on a rejected call", what);
}

Test(kv_cache, sizes_past_int64_are_rejected) {
    /* 2^30 blocks x 2^16 tokens x 2^16 heads x 2^8: 2^70 elements (wraps to 0). */
    expect_too_big(make(PA_LAYOUT_VLLM, PA_DTYPE_F16, 1 << 30, 1 << 16, 1 << 16, 1 << 8), "vllm 2^70");
    /* exactly 2^63 elements (wraps to INT64_MIN) */
    expect_too_big(make(PA_LAYOUT_VLLM, PA_DTYPE_F16, 1 << 30, 1 << 16, 1 << 8, 1 << 9), "vllm 2^63");
    expect_too_big(make(PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, 1 << 30, 1 << 16, 1 << 8, 1 << 9), "nhd 2^63");
    expect_too_big(make(PA_LAYOUT_FLASH_HND, PA_DTYPE_F16, 1 << 30, 1 << 16, 1 << 8, 1 << 9), "hnd 2^63");
    expect_too_big(make(PA_LAYOUT_COMBINED, PA_DTYPE_F16, 1 << 30, 1 << 16, 1 << 7, 1 << 9), "combined 2^63");
    /* 2^62 f32 elements: the element count fits, the byte count (2^64) does not */
    expect_too_big(make(PA_LAYOUT_VLLM, PA_DTYPE_F32, 1 << 30, 1 << 16, 1 << 8, 1 << 8), "vllm f32 2^64 bytes");
    /* a strided view: 4 blocks 2^62 elements apart */
    pa_kv_cache v = make(PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, 4, 16, 2, 64);
    v.block_stride = (int64_t)1 << 62;
    expect_too_big(v, "nhd block_stride 2^62 x 4 blocks");
    /* heads 2^62 apart: num_kv_heads * head_stride wraps to 0, which used to make
     * the contiguous page and block strides 0 */
    v = make(PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, 1, 16, 4, 64);
    v.head_stride = (int64_t)1 << 62;
    expect_too_big(v, "nhd head_stride 2^62 x 4 heads");
    v = make(PA_LAYOUT_FLASH_HND, PA_DTYPE_F16, 1, 4, 2, 64);
    v.page_stride = (int64_t)1 << 62;
    expect_too_big(v, "hnd page_stride 2^62 x 4 tokens");

    /* The largest sizes that do fit are still accepted, with the exact count:
     * fp8, 2^30 x 2^16 x 2^8 x 2^8 = 2^62 elements = 2^62 bytes. */
    pa_kv_cache ok = make(PA_LAYOUT_VLLM, PA_DTYPE_FP8_E4M3, 1 << 30, 1 << 16, 1 << 8, 1 << 8);
    int64_t ke = 0, ve = 0;
    cr_assert_eq(pa_kv_cache_elements(&ok, &ke, &ve), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(ke, (int64_t)1 << 62);
    cr_assert_eq(ve, (int64_t)1 << 62);
    ok = make(PA_LAYOUT_FLASH_NHD, PA_DTYPE_FP8_E5M2, 3, 16, 2, 64);
    ok.block_stride = (int64_t)1 << 61; /* (3-1) * 2^61 + 15*128 + 64 + 64 */
    cr_assert_eq(pa_kv_cache_elements(&ok, &ke, &ve), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(ke, ((int64_t)1 << 62) + 15 * 128 + 64 + 64);
}

Test(kv_cache, layout_names) {
    pa_kv_layout l;
    cr_assert_eq(pa_kv_layout_from_name("hnd", &l), PA_SUCCESS);
    cr_assert_eq(l, PA_LAYOUT_FLASH_HND);
    cr_assert_eq(pa_kv_layout_from_name("NCHW", &l), PA_ERR_INVALID_ARGUMENT);
}

/* Mutation kill (issue 16, item 13): the overlap checks of explicit flash
 * strides, one element short of the contiguous extent each, are refused with
 * their own message; at the extent they are accepted. */
Test(kv_cache, flash_stride_overlap_checks) {
    /* NHD [nb, bs, kvh, hs]: head >= hs, page >= kvh * head, block >= bs * page */
    pa_kv_cache c = make(PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, 3, 4, 2, 8);
    c.block_stride = 4 * 2 * 8;
    cr_assert_eq(pa_kv_cache_validate(&c), PA_SUCCESS, "%s", pa_last_error());
    c.block_stride = 4 * 2 * 8 - 1;
    cr_assert_eq(pa_kv_cache_validate(&c), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "nhd: block_stride 63 overlaps the tokens of a block"), "%s", pa_last_error());
    /* HND [nb, kvh, bs, hs]: page >= hs, head >= bs * page, block >= kvh * head */
    c = make(PA_LAYOUT_FLASH_HND, PA_DTYPE_F16, 3, 4, 2, 8);
    c.head_stride = 4 * 8;
    cr_assert_eq(pa_kv_cache_validate(&c), PA_SUCCESS, "%s", pa_last_error());
    c.head_stride = 4 * 8 - 1;
    cr_assert_eq(pa_kv_cache_validate(&c), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "hnd: head_stride 31 overlaps the tokens of a head"), "%s", pa_last_error());
    int64_t ke = -1, ve = -1;
    cr_assert_eq(pa_kv_cache_elements(&c, &ke, &ve), PA_ERR_INVALID_ARGUMENT);
    cr_assert(ke == -1 && ve == -1);
}

/* pa_kv_divide against C's division: every divisor up to 4096 (block sizes)
 * and a few large ones, over every position below 4 d + 70 and the positions
 * around the multiples of d near 2^31, where the method's bound is tightest. */
Test(kv_cache, block_divider_matches_division) {
    int32_t ds[4096 + 4];
    int nd = 0;
    for (int32_t d = 1; d <= 4096; d++)
        ds[nd++] = d;
    ds[nd++] = 65537;
    ds[nd++] = 1 << 20;
    ds[nd++] = (1 << 30) + 3;
    ds[nd++] = INT32_MAX;
    for (int i = 0; i < nd; i++) {
        const int32_t d = ds[i];
        const pa_kv_divider v = pa_kv_divider_make(d);
        const int64_t lo_end = (int64_t)4 * d + 70 < INT32_MAX ? (int64_t)4 * d + 70 : 70;
        for (int64_t n = 0; n < lo_end; n++)
            cr_assert_eq(pa_kv_divide(v, (int32_t)n), (int32_t)(n / d), "%lld / %d", (long long)n, d);
        const int64_t top = (int64_t)INT32_MAX / d * d;
        for (int64_t k = 0; k < 4; k++)
            for (int64_t e = -2; e <= 2; e++) {
                const int64_t n = top - k * d + e;
                if (n >= 0 && n <= INT32_MAX)
                    cr_assert_eq(pa_kv_divide(v, (int32_t)n), (int32_t)(n / d), "%lld / %d", (long long)n, d);
            }
    }
}

/* Each refusal of the descriptor check with its own message (found unreached
 * by scripts/refusal-coverage.py: with any one of these checks taken out, no
 * test failed). Strides one element short of the contiguous extent, products
 * one step past int64. */
Test(kv_cache, each_refusal_names_its_field) {
    const int64_t big = (int64_t)1 << 62;
    static const struct {
        pa_kv_layout layout;
        int hs;
        int64_t block_stride, page_stride, head_stride;
        int null_key;
        const char *msg;
    } cases[] = {
        {(pa_kv_layout)7, 64, 0, 0, 0, 0, "kv cache layout 7 unknown"},
        {(pa_kv_layout)-1, 64, 0, 0, 0, 0, "kv cache layout -1 unknown"},
        {PA_LAYOUT_FLASH_NHD, 0, 0, 0, 0, 0, "kv cache head_size must be > 0 (got 0)"},
        {PA_LAYOUT_FLASH_HND, -8, 0, 0, 0, 0, "kv cache head_size must be > 0 (got -8)"},
        {PA_LAYOUT_VLLM, 64, 0, 0, 0, 1, "kv cache key buffer is NULL"},
        {PA_LAYOUT_COMBINED, 64, 0, 0, 0, 1, "kv cache key buffer is NULL"},
        {PA_LAYOUT_FLASH_NHD, 8, -1, 0, 0, 0, "flash layout strides must be >= 0"},
        {PA_LAYOUT_FLASH_HND, 8, 0, -16, 0, 0, "flash layout strides must be >= 0"},
        {PA_LAYOUT_FLASH_NHD, 8, 0, 0, -8, 0, "flash layout strides must be >= 0"},
        /* NHD [nb, bs, kvh, hs]: a token's 2 heads of 8 need page_stride >= 16 */
        {PA_LAYOUT_FLASH_NHD, 8, 0, 15, 0, 0, "nhd: page_stride 15 overlaps the heads of a token"},
        /* 4 tokens 2^62 apart: bs * page_stride past int64 */
        {PA_LAYOUT_FLASH_NHD, 8, 0, big, 0, 0, "kv cache size overflows int64"},
        /* HND [nb, kvh, bs, hs]: page_stride >= hs, block_stride >= kvh * head_stride */
        {PA_LAYOUT_FLASH_HND, 8, 0, 7, 0, 0, "hnd: page_stride 7 < head_size 8"},
        {PA_LAYOUT_FLASH_HND, 8, 0, 0, big, 0, "kv cache size overflows int64"},
        {PA_LAYOUT_FLASH_HND, 8, 2 * 4 * 8 - 1, 0, 0, 0, "hnd: block_stride 63 overlaps the heads of a block"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pa_kv_layout l = cases[i].layout;
        int valid_layout = (int)l >= PA_LAYOUT_VLLM && (int)l <= PA_LAYOUT_COMBINED;
        pa_kv_cache c = make(valid_layout ? l : PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, 3, 4, 2, cases[i].hs);
        c.layout = l;
        c.block_stride = cases[i].block_stride;
        c.page_stride = cases[i].page_stride;
        c.head_stride = cases[i].head_stride;
        if (cases[i].null_key)
            c.key = NULL;
        cr_assert_eq(pa_kv_cache_validate(&c), PA_ERR_INVALID_ARGUMENT, "case %zu accepted", i);
        cr_assert(strstr(pa_last_error(), cases[i].msg) != NULL, "case %zu: '%s' lacks '%s'", i, pa_last_error(),
                  cases[i].msg);
        int64_t ke = -1, ve = -1;
        cr_assert_eq(pa_kv_cache_elements(&c, &ke, &ve), PA_ERR_INVALID_ARGUMENT, "case %zu sized", i);
        cr_assert(ke == -1 && ve == -1, "case %zu: outputs written on a refusal", i);
    }
    pa_kv_layout out = PA_LAYOUT_VLLM;
    cr_assert_eq(pa_kv_layout_from_name(NULL, &out), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "layout name and output must not be NULL"), "%s", pa_last_error());
    cr_assert_eq(pa_kv_layout_from_name("nhd", NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert_eq(out, PA_LAYOUT_VLLM);
    /* the boundary strides of the cases above are accepted */
    pa_kv_cache ok = make(PA_LAYOUT_FLASH_NHD, PA_DTYPE_F16, 3, 4, 2, 8);
    ok.page_stride = 16;
    cr_assert_eq(pa_kv_cache_validate(&ok), PA_SUCCESS, "%s", pa_last_error());
    ok = make(PA_LAYOUT_FLASH_HND, PA_DTYPE_F16, 3, 4, 2, 8);
    ok.page_stride = 8;
    cr_assert_eq(pa_kv_cache_validate(&ok), PA_SUCCESS, "%s", pa_last_error());
    ok.page_stride = 0;
    ok.block_stride = 2 * 4 * 8;
    cr_assert_eq(pa_kv_cache_validate(&ok), PA_SUCCESS, "%s", pa_last_error());
}
