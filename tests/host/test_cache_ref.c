/* CPU references of the cache ops, checked against index formulas written out
 * here from the shapes (row-major arithmetic, not kv_index.h). Every cache is
 * pre-filled with a sentinel byte pattern and compared whole, so any byte
 * written outside the expected slots fails. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_ops_internal.h"
#include "testutil.h"

#include "cache_grid.h"

/* Independent cache offsets (elements). Strides (st_*) are for the flash layouts. */
typedef struct {
    pa_kv_layout layout;
    int64_t nb, bs, nh, hs, x;
    int64_t st_block, st_page, st_head; /* flash: explicit strides actually used */
} geo;

static int64_t off_k(const geo *g, int64_t blk, int64_t h, int64_t tok, int64_t d) {
    switch (g->layout) {
    case PA_LAYOUT_VLLM: return (((blk * g->nh + h) * (g->hs / g->x) + d / g->x) * g->bs + tok) * g->x + d % g->x;
    case PA_LAYOUT_COMBINED: return ((blk * g->bs + tok) * 2 * g->nh + 2 * h) * g->hs + d;
    default: return blk * g->st_block + tok * g->st_page + h * g->st_head + d;
    }
}
static int64_t off_v(const geo *g, int64_t blk, int64_t h, int64_t tok, int64_t d) {
    switch (g->layout) {
    case PA_LAYOUT_VLLM: return ((blk * g->nh + h) * g->hs + d) * g->bs + tok;
    case PA_LAYOUT_COMBINED: return ((blk * g->bs + tok) * 2 * g->nh + 2 * h + 1) * g->hs + d;
    default: return blk * g->st_block + tok * g->st_page + h * g->st_head + d;
    }
}

/* Expected cache element: bytes for the same dtype, else sat(x / s) in fp8. */
static void expect_put(pa_dtype cdt, void *exp, int64_t coff, pa_dtype idt, const void *in, int64_t ioff, float s) {
    if (cdt == idt)
        memcpy((char *)exp + coff * (int64_t)pa_dtype_size(cdt), (const char *)in + ioff * (int64_t)pa_dtype_size(idt),
               pa_dtype_size(cdt));
    else
        pa_store_from_float(cdt, exp, (size_t)coff, pa_load_as_float(idt, in, (size_t)ioff) / s);
}

static void check_fp8_roundtrip(pa_dtype cdt, const void *cache, int64_t coff, pa_dtype idt, const void *in,
                                int64_t ioff, float s, const char *what) {
    if (!pa_dtype_is_fp8(cdt))
        return;
    /* e4m3 keeps 3 mantissa bits (half ulp <= 6.25%), e5m2 only 2 (half ulp <= 12.5%) */
    const float rtol = cdt == PA_DTYPE_FP8_E4M3 ? 0.1f : 0.13f;
    const float x = pa_load_as_float(idt, in, (size_t)ioff);
    const float got = pa_load_as_float(cdt, cache, (size_t)coff) * s;
    cr_assert(fabsf(got - x) <= 1e-3f + rtol * fabsf(x), "%s fp8 round trip: %g -> %g", what, x, got);
}

static void make_cache(pa_kv_cache *c, geo *g, pa_kv_layout layout, pa_dtype dt, int nb, int bs, int nh, int hs,
                       int strided) {
    memset(c, 0, sizeof(*c));
    c->layout = layout;
    c->dtype = dt;
    c->num_blocks = nb;
    c->block_size = bs;
    c->num_kv_heads = nh;
    c->head_size = hs;
    g->layout = layout;
    g->nb = nb;
    g->bs = bs;
    g->nh = nh;
    g->hs = hs;
    g->x = 16 / (int64_t)pa_dtype_size(dt);
    cache_grid_flash_strides(layout, bs, nh, hs, strided, &g->st_block, &g->st_page, &g->st_head);
    if (strided && (layout == PA_LAYOUT_FLASH_NHD || layout == PA_LAYOUT_FLASH_HND)) {
        c->block_stride = g->st_block;
        c->page_stride = g->st_page;
        c->head_stride = g->st_head;
    }
}

/* Allocates the cache buffers (sentinel-filled); returns their element counts. */
static void alloc_cache(pa_kv_cache *c, int64_t *ke, int64_t *ve) {
    c->key = c; /* placeholders for the size query */
    c->value = c->layout == PA_LAYOUT_COMBINED ? NULL : c;
    cr_assert_eq(pa_kv_cache_elements(c, ke, ve), PA_SUCCESS, "%s", pa_last_error());
    const size_t es = pa_dtype_size(c->dtype);
    c->value = NULL;
    c->key = malloc((size_t)*ke * es);
    memset(c->key, SENTINEL, (size_t)*ke * es);
    if (*ve > 0) {
        c->value = malloc((size_t)*ve * es);
        memset(c->value, SENTINEL, (size_t)*ve * es);
    }
}

/* Random distinct slots of [0, nb*bs), with every 5th token padding (-1). */
static int64_t *make_slots(pa_rng *r, int64_t T, int64_t nslots) {
    int64_t *all = malloc(sizeof(int64_t) * (size_t)nslots);
    for (int64_t i = 0; i < nslots; i++)
        all[i] = i;
    for (int64_t i = nslots - 1; i > 0; i--) {
        int64_t j = pa_rng_int(r, 0, (int)i), t = all[i];
        all[i] = all[j];
        all[j] = t;
    }
    int64_t *s = malloc(sizeof(int64_t) * (size_t)T);
    for (int64_t t = 0; t < T; t++)
        s[t] = (t % 5 == 3) ? -1 : all[t];
    free(all);
    return s;
}

/* Set by cache_ref/fp8_scales_per_head: fp8 caches get a k_scale and a
 * v_scale per KV head (scales_per_head), and the expected bytes use head h's. */
static int g_per_head;

/* The case's scales: ks[h], vs[h] for every head h < nh (one value each
 * unless g_per_head); scales_per_head set on c for fp8 caches. */
static void case_scales(pa_kv_cache *c, int nh, float *ks, float *vs) {
    for (int h = 0; h < nh; h++) {
        ks[h] = g_per_head ? 0.05f * (float)(1 + h % 4) : 0.05f;
        vs[h] = g_per_head ? 0.07f / (float)(1 + h % 3) : 0.07f;
    }
    if (pa_dtype_is_fp8(c->dtype)) {
        c->k_scale = ks;
        c->v_scale = vs;
        c->scales_per_head = g_per_head;
    }
}

static void rc_case(pa_kv_layout layout, dt_pair dp, int hs, int bs, int nh, int strided, uint64_t seed) {
    pa_kv_cache c;
    geo g = {0};
    make_cache(&c, &g, layout, dp.cache, 0, bs, nh, hs, strided);
    const int64_t T = 13;
    c.num_blocks = (int32_t)((T + bs - 1) / bs + 1);
    g.nb = c.num_blocks;
    if (layout == PA_LAYOUT_VLLM && hs % g.x != 0) { /* not representable: rejected by the descriptor check */
        c.key = c.value = (void *)&c;
        cr_assert_eq(pa_kv_cache_validate(&c), PA_ERR_INVALID_ARGUMENT);
        return;
    }
    int64_t ke, ve;
    alloc_cache(&c, &ke, &ve);
    pa_rng r = pa_rng_make(seed);
    /* a fused [T, q | k | v] row: key and value are views with a token stride;
     * strided: the values come from a buffer of their own, whose token and head
     * strides differ from the keys' */
    const int64_t hstride = hs + (strided ? 16 : 0), nq = 2;
    const int64_t row = (nq + 2 * nh) * hstride + (strided ? 8 : 0);
    const int64_t vhstride = strided ? hstride + 8 : hstride, vrow = strided ? nh * vhstride + 24 : row;
    void *qkv = pa_test_random_buffer(&r, dp.in, (size_t)(T * row), -2.0f, 2.0f);
    void *vbuf = strided ? pa_test_random_buffer(&r, dp.in, (size_t)(T * vrow), -2.0f, 2.0f) : qkv;
    const int64_t v0 = strided ? 0 : (nq + nh) * hstride; /* the values' first element in vbuf */
    const size_t is = pa_dtype_size(dp.in);
    pa_kv_input in = {(char *)qkv + (size_t)(nq * hstride) * is,
                      (char *)vbuf + (size_t)v0 * is,
                      dp.in,
                      T,
                      row,
                      hstride,
                      vrow,
                      vhstride};
    int64_t *slots = make_slots(&r, T, (int64_t)c.num_blocks * bs);
    float ks[64], vs[64];
    cr_assert(nh <= 64);
    case_scales(&c, nh, ks, vs);
    const size_t es = pa_dtype_size(dp.cache);
    void *ek = malloc((size_t)ke * es), *ev = ve ? malloc((size_t)ve * es) : NULL;
    memcpy(ek, c.key, (size_t)ke * es);
    if (ve)
        memcpy(ev, c.value, (size_t)ve * es);
    void *evbuf = layout == PA_LAYOUT_COMBINED ? ek : ev;
    for (int64_t t = 0; t < T; t++) {
        if (slots[t] < 0)
            continue;
        const int64_t blk = slots[t] / bs, tok = slots[t] % bs;
        for (int64_t h = 0; h < nh; h++)
            for (int64_t d = 0; d < hs; d++) {
                const float sk = c.k_scale ? ks[h] : 1.0f, sv = c.v_scale ? vs[h] : 1.0f;
                const int64_t ki = t * row + nq * hstride + h * hstride + d;
                const int64_t vi = t * vrow + v0 + h * vhstride + d;
                expect_put(dp.cache, ek, off_k(&g, blk, h, tok, d), dp.in, qkv, ki, sk);
                expect_put(dp.cache, evbuf, off_v(&g, blk, h, tok, d), dp.in, vbuf, vi, sv);
            }
    }
    cr_assert_eq(pa_ref_reshape_and_cache(&in, slots, &c), PA_SUCCESS, "%s", pa_last_error());
    const char *what = pa_kv_layout_name(layout);
    cr_assert(memcmp(ek, c.key, (size_t)ke * es) == 0, "%s %s->%s hs %d bs %d nh %d strided %d: key cache differs",
              what, pa_dtype_name(dp.in), pa_dtype_name(dp.cache), hs, bs, nh, strided);
    if (ve)
        cr_assert(memcmp(ev, c.value, (size_t)ve * es) == 0,
                  "%s %s->%s hs %d bs %d nh %d strided %d: value cache differs", what, pa_dtype_name(dp.in),
                  pa_dtype_name(dp.cache), hs, bs, nh, strided);
    if (pa_dtype_is_fp8(dp.cache))
        for (int64_t t = 0; t < T; t++) {
            if (slots[t] < 0)
                continue;
            const int64_t blk = slots[t] / bs, tok = slots[t] % bs;
            for (int64_t h = 0; h < nh; h++)
                for (int64_t d = 0; d < hs; d++) {
                    const float sk = ks[h], sv = vs[h];
                    check_fp8_roundtrip(dp.cache, c.key, off_k(&g, blk, h, tok, d), dp.in, qkv,
                                        t * row + nq * hstride + h * hstride + d, sk, "key");
                    check_fp8_roundtrip(dp.cache, layout == PA_LAYOUT_COMBINED ? c.key : c.value,
                                        off_v(&g, blk, h, tok, d), dp.in, vbuf, t * vrow + v0 + h * vhstride + d, sv,
                                        "value");
                }
        }
    free(ek);
    free(ev);
    if (vbuf != qkv)
        free(vbuf);
    free(qkv);
    free(slots);
    free(c.key);
    free(c.value);
}

/* Grid: every layout x dtype pair x head size; block size and kv heads rotate
 * so each (head, block, heads) value meets every layout and dtype pair. */
static void rc_grid(pa_kv_layout layout) {
    int i = 0;
    for (int p = 0; p < NPAIRS; p++)
        for (int h = 0; h < 4; h++, i++) {
            const int bs = block_sizes[i % 3], nh = kv_heads[(i / 3 + h) % 3];
            rc_case(layout, pairs[p], head_sizes[h], bs, nh, i % 2, 1000 + (uint64_t)i);
        }
}

Test(cache_ref, reshape_and_cache_vllm) { rc_grid(PA_LAYOUT_VLLM); }
Test(cache_ref, reshape_and_cache_nhd) { rc_grid(PA_LAYOUT_FLASH_NHD); }
Test(cache_ref, reshape_and_cache_hnd) { rc_grid(PA_LAYOUT_FLASH_HND); }
Test(cache_ref, write_to_kv_cache_combined) { rc_grid(PA_LAYOUT_COMBINED); }

Test(cache_ref, reshape_and_cache_odd_head_size) {
    /* head sizes the vectorised kernel paths cannot take whole */
    rc_case(PA_LAYOUT_FLASH_NHD, pairs[1], 100, 16, 3, 1, 7);
    rc_case(PA_LAYOUT_FLASH_HND, pairs[3], 36, 8, 2, 0, 8);
    rc_case(PA_LAYOUT_COMBINED, pairs[2], 72, 32, 5, 0, 9);
}

/* ---- bad input -------------------------------------------------------------- */

static void small_vllm(pa_kv_cache *c, void *kbuf, void *vbuf) {
    memset(c, 0, sizeof(*c));
    c->layout = PA_LAYOUT_VLLM;
    c->dtype = PA_DTYPE_F32;
    c->num_blocks = 2;
    c->block_size = 4;
    c->num_kv_heads = 1;
    c->head_size = 8;
    c->key = kbuf;
    c->value = vbuf;
}

static void assert_fail(pa_status got, pa_status want, const char *substr) {
    cr_assert_eq(got, want, "status %d, want %d (%s)", got, want, pa_last_error());
    cr_assert(strstr(pa_last_error(), substr) != NULL, "message '%s' lacks '%s'", pa_last_error(), substr);
}

Test(cache_ref, reshape_and_cache_bad_input) {
    float kc[64], vc[64], key[4 * 8], val[4 * 8];
    for (int i = 0; i < 32; i++)
        key[i] = val[i] = (float)i;
    memset(kc, SENTINEL, sizeof kc);
    memset(vc, SENTINEL, sizeof vc);
    unsigned char k0[sizeof kc];
    memcpy(k0, kc, sizeof kc);
    pa_kv_cache c;
    small_vllm(&c, kc, vc);
    pa_kv_input in = {key, val, PA_DTYPE_F32, 4, 0, 0, 0, 0};
    int64_t slots[4] = {0, 5, -1, 8}; /* 8 == num_blocks * block_size: out of range */
    assert_fail(pa_ref_reshape_and_cache(&in, slots, &c), PA_ERR_INVALID_ARGUMENT, "slot_mapping[3]");
    cr_assert(memcmp(kc, k0, sizeof kc) == 0 && memcmp(vc, k0, sizeof vc) == 0, "written despite the error");
    slots[3] = -2;
    assert_fail(pa_ref_reshape_and_cache(&in, slots, &c), PA_ERR_INVALID_ARGUMENT, "token 3");
    slots[3] = 7;
    in.key = NULL;
    assert_fail(pa_ref_reshape_and_cache(&in, slots, &c), PA_ERR_INVALID_ARGUMENT, "key is NULL");
    in.key = key;
    assert_fail(pa_ref_reshape_and_cache(&in, NULL, &c), PA_ERR_INVALID_ARGUMENT, "slot_mapping");
    in.key_token_stride = -1;
    assert_fail(pa_ref_reshape_and_cache(&in, slots, &c), PA_ERR_INVALID_ARGUMENT, "key_token_stride");
    in.key_token_stride = 0;
    in.num_tokens = -1;
    assert_fail(pa_ref_reshape_and_cache(&in, slots, &c), PA_ERR_INVALID_ARGUMENT, "num_tokens");
    in.num_tokens = 4;
    in.dtype = PA_DTYPE_FP8_E4M3;
    assert_fail(pa_ref_reshape_and_cache(&in, slots, &c), PA_ERR_INVALID_ARGUMENT, "input dtype");
    in.dtype = PA_DTYPE_F16;
    assert_fail(pa_ref_reshape_and_cache(&in, slots, &c), PA_ERR_UNSUPPORTED, "unsupported");
    in.dtype = PA_DTYPE_F32;
    c.head_size = 6; /* not a multiple of x = 4 */
    assert_fail(pa_ref_reshape_and_cache(&in, slots, &c), PA_ERR_INVALID_ARGUMENT, "multiple of x");
    c.head_size = 8;
    c.value = NULL;
    assert_fail(pa_ref_reshape_and_cache(&in, slots, &c), PA_ERR_INVALID_ARGUMENT, "value buffer");
    c.value = vc;
    assert_fail(pa_ref_reshape_and_cache(NULL, slots, &c), PA_ERR_INVALID_ARGUMENT, "input descriptor");
    /* (these four found unreached by scripts/refusal-coverage.py) */
    const pa_kv_input good = in;
    in.dtype = (pa_dtype)11;
    assert_fail(pa_ref_reshape_and_cache(&in, slots, &c), PA_ERR_INVALID_ARGUMENT, "input dtype 11 unknown");
    in = good;
    in.key_head_stride = -8;
    assert_fail(pa_ref_reshape_and_cache(&in, slots, &c), PA_ERR_INVALID_ARGUMENT,
                "key_head_stride must be >= 0 (got -8)");
    in = good;
    in.value_token_stride = -16;
    assert_fail(pa_ref_reshape_and_cache(&in, slots, &c), PA_ERR_INVALID_ARGUMENT,
                "value_token_stride must be >= 0 (got -16)");
    in = good;
    in.value = NULL;
    assert_fail(pa_ref_reshape_and_cache(&in, slots, &c), PA_ERR_INVALID_ARGUMENT, "reshape_and_cache: value is NULL");
    in = good;
    cr_assert(memcmp(kc, k0, sizeof kc) == 0 && memcmp(vc, k0, sizeof vc) == 0, "written despite the error");
    /* all good now; zero tokens is a no-op */
    cr_assert_eq(pa_ref_reshape_and_cache(&in, slots, &c), PA_SUCCESS, "%s", pa_last_error());
    in.num_tokens = 0;
    cr_assert_eq(pa_ref_reshape_and_cache(&in, NULL, &c), PA_SUCCESS);
}

/* Found by the fuzz target: input views whose strides make an index pass
 * int64 (a head stride of about 2^62 with two KV heads and the token stride
 * left 0, or a new_kv token stride that large) are refused up front, nothing
 * written; before, the token stride num_kv_heads * head_stride wrapped (UBSan:
 * signed overflow in pa_rc_params_make) and the reference indexed with it. */
Test(cache_ref, input_views_past_int64_are_refused) {
    float kc[64], vc[64], key[64], val[64];
    memset(kc, SENTINEL, sizeof kc);
    memset(vc, SENTINEL, sizeof vc);
    unsigned char k0[sizeof kc];
    memcpy(k0, kc, sizeof kc);
    pa_kv_cache c;
    small_vllm(&c, kc, vc);
    c.num_kv_heads = 2;
    c.num_blocks = 1;
    pa_kv_input in = {key, val, PA_DTYPE_F32, 2, 0, (int64_t)1 << 62, 0, 0};
    int64_t slots[2] = {0, 1};
    assert_fail(pa_ref_reshape_and_cache(&in, slots, &c), PA_ERR_INVALID_ARGUMENT, "key view");
    in.key_head_stride = 0;
    in.value_token_stride = (int64_t)1 << 62; /* 2 tokens: (2-1) * 2^62 + ... fits; 3 would not */
    in.num_tokens = 3;
    int64_t slots3[3] = {0, 1, 2};
    assert_fail(pa_ref_reshape_and_cache(&in, slots3, &c), PA_ERR_INVALID_ARGUMENT, "value view");
    cr_assert(memcmp(kc, k0, sizeof kc) == 0 && memcmp(vc, k0, sizeof vc) == 0, "written despite the error");
    /* kv_cache_update: new_kv of 3 tokens 2^62 apart */
    float cc[2 * 4 * 2 * 8];
    memset(cc, SENTINEL, sizeof cc);
    pa_kv_cache cb = {.layout = PA_LAYOUT_COMBINED,
                      .dtype = PA_DTYPE_F32,
                      .key = cc,
                      .num_blocks = 2,
                      .block_size = 4,
                      .num_kv_heads = 1,
                      .head_size = 8};
    const int32_t sl[3] = {0, 0, 1}, live = 1;
    assert_fail(pa_ref_kv_cache_update(key, PA_DTYPE_F32, 3, (int64_t)1 << 62, sl, &live, 1, &cb),
                PA_ERR_INVALID_ARGUMENT, "token stride");
    cr_assert(memcmp(cc, k0, sizeof k0) == 0, "written despite the error");
}

/* The other side of the bound above: a view whose last element read,
 * (num_tokens - 1) * token_stride + (heads - 1) * head_stride + head_size,
 * fits in int64 is accepted, even when num_tokens * token_stride would not.
 * Two tokens 2^62 apart, the second padding (never read), into an NHD cache
 * [1 block][4 slots][2 heads][8]: token 0 lands in slot 1. kv_cache_update
 * likewise: new_kv of 2 tokens 2^62 apart, one slice reading token 0 into row
 * 5 of a combined cache [2][4][2 * 1][8]. */
Test(cache_ref, input_views_that_just_fit_int64_are_accepted) {
    /* The views' rows reach far past their buffers (to the end of the address
     * space: the padding token's row is never read), so the caches lie below
     * them: a cache the view's range covers would be refused as an output over
     * an input. */
    static float arena[64 + 64 + 128 + 16 + 16 + 16];
    float *kc = arena, *vc = arena + 64, *cc = arena + 128, *key = arena + 256, *val = key + 16, *nkv = val + 16;
    for (int i = 0; i < 16; i++) {
        key[i] = (float)(i + 1);
        val[i] = (float)(-i - 1);
    }
    memset(kc, SENTINEL, 64 * sizeof(float));
    memset(vc, SENTINEL, 64 * sizeof(float));
    float kw[64], vw[64];
    memcpy(kw, kc, sizeof kw);
    memcpy(vw, vc, sizeof vw);
    for (int i = 0; i < 16; i++) {
        kw[16 + i] = key[i]; /* slot 1: (slot * 2 + h) * 8 + d */
        vw[16 + i] = val[i];
    }
    pa_kv_cache c = {.layout = PA_LAYOUT_FLASH_NHD,
                     .dtype = PA_DTYPE_F32,
                     .key = kc,
                     .value = vc,
                     .num_blocks = 1,
                     .block_size = 4,
                     .num_kv_heads = 2,
                     .head_size = 8};
    const int64_t far = (int64_t)1 << 62;
    pa_kv_input in = {key, val, PA_DTYPE_F32, 2, far, 0, far, 0};
    const int64_t slots[2] = {1, -1};
    cr_assert_eq(pa_ref_reshape_and_cache(&in, slots, &c), PA_SUCCESS, "%s", pa_last_error());
    cr_assert(memcmp(kc, kw, sizeof kw) == 0 && memcmp(vc, vw, sizeof vw) == 0, "wrong cache contents");

    float cw[2 * 4 * 2 * 8];
    for (int i = 0; i < 16; i++)
        nkv[i] = (float)(100 + i); /* token 0: K head 0 (8), then V head 0 (8) */
    memset(cc, SENTINEL, sizeof cw);
    memcpy(cw, cc, sizeof cw);
    for (int i = 0; i < 16; i++)
        cw[(1 * 4 + 1) * 16 + i] = nkv[i]; /* row 5 = block 1, slot 1: [K | V] of 8 each */
    pa_kv_cache cb = {.layout = PA_LAYOUT_COMBINED,
                      .dtype = PA_DTYPE_F32,
                      .key = cc,
                      .num_blocks = 2,
                      .block_size = 4,
                      .num_kv_heads = 1,
                      .head_size = 8};
    const int32_t sl[3] = {5, 0, 1}, live = 1;
    cr_assert_eq(pa_ref_kv_cache_update(nkv, PA_DTYPE_F32, 2, far, sl, &live, 1, &cb), PA_SUCCESS, "%s",
                 pa_last_error());
    cr_assert(memcmp(cc, cw, sizeof cw) == 0, "wrong cache contents");
}

/* The cache writes' outputs (the cache's key and value buffers) share no byte
 * with what they read (cache_ops.h): a cache placed just past an input is
 * accepted, and 4 bytes earlier refused naming both; an input on the value
 * buffer or a scale on the key buffer likewise; the key and value buffers of
 * one cache may interleave block by block (a [blocks, 2, ...] cache,
 * FlashInfer's), which is no overlap. Extents by hand: 3 tokens of 2 heads of
 * 8 f32 (48 floats), 3 int64 slots (6 floats), an NHD cache of 2 blocks x 4
 * slots x 2 heads x 8 (128 floats a buffer); kv_cache_update: 4 rows of 2 x 1
 * heads of 8 (64 floats), slices 3 x 2 int32 and one num_slices, into a
 * combined cache of 2 pages x 4 rows (128 floats). */
Test(cache_ref, writes_apart_from_reads) {
    static _Alignas(16) float arena[1024];
    pa_kv_cache c = {.layout = PA_LAYOUT_FLASH_NHD,
                     .dtype = PA_DTYPE_F32,
                     .num_blocks = 2,
                     .block_size = 4,
                     .num_kv_heads = 2,
                     .head_size = 8};
    static const int64_t slots_init[3] = {1, 6, -1};
    int64_t *slots = (int64_t *)(void *)(arena + 512);
    memcpy(slots, slots_init, sizeof slots_init);
    const pa_kv_input in = {arena, arena + 256, PA_DTYPE_F32, 3, 0, 0, 0, 0};
    static const char *const names[3] = {"key", "value", "slot_mapping"};
    const float *ends[3] = {arena + 48, arena + 256 + 48, arena + 512 + 6};
    for (int x = 0; x < 3; x++)
        for (int off = 0; off < 2; off++) { /* the key cache just past input x (accepted), then 4 bytes earlier */
            c.key = (float *)ends[x] - off;
            c.value = arena + 768;
            const pa_status st = pa_ref_reshape_and_cache(&in, slots, &c);
            if (off == 0) {
                cr_assert_eq(st, PA_SUCCESS, "cache just past %s: %s", names[x], pa_last_error());
                continue;
            }
            char want[96];
            snprintf(want, sizeof want, "reshape_and_cache: output cache.key overlaps the input %s", names[x]);
            cr_assert_eq(st, PA_ERR_INVALID_ARGUMENT, "cache over %s accepted", names[x]);
            cr_assert(strstr(pa_last_error(), want) != NULL, "%s", pa_last_error());
        }
    {
        pa_kv_cache b = c; /* the key input on the value buffer's last float */
        b.key = arena + 600;
        b.value = arena + 768;
        pa_kv_input bi = in;
        bi.key = arena + 768 + 127;
        cr_assert_eq(pa_ref_reshape_and_cache(&bi, slots, &b), PA_ERR_INVALID_ARGUMENT);
        cr_assert(strstr(pa_last_error(), "output cache.value overlaps the input key"), "%s", pa_last_error());
        b.dtype = PA_DTYPE_FP8_E4M3; /* 128 bytes a buffer: the k_scale on the key buffer's last 4 */
        b.k_scale = (const float *)(void *)((char *)b.key + 124);
        b.v_scale = arena + 1000;
        cr_assert_eq(pa_ref_reshape_and_cache(&in, slots, &b), PA_ERR_INVALID_ARGUMENT);
        cr_assert(strstr(pa_last_error(), "output cache.key overlaps the input cache.k_scale"), "%s", pa_last_error());
        /* one scale per KV head: k_scale is 2 floats, the second on the key buffer's first 4 bytes */
        b.scales_per_head = 1;
        b.k_scale = (const float *)(void *)((char *)b.key - 4);
        cr_assert_eq(pa_ref_reshape_and_cache(&in, slots, &b), PA_ERR_INVALID_ARGUMENT);
        cr_assert(strstr(pa_last_error(), "output cache.key overlaps the input cache.k_scale"), "%s", pa_last_error());
    }
    { /* K and V interleaved by block: [2 blocks][K, V][4 slots][2 heads][8] */
        float sep_k[128], sep_v[128];
        memset(sep_k, 0, sizeof sep_k);
        memset(sep_v, 0, sizeof sep_v);
        pa_kv_cache a = c;
        a.key = sep_k;
        a.value = sep_v;
        cr_assert_eq(pa_ref_reshape_and_cache(&in, slots, &a), PA_SUCCESS, "%s", pa_last_error());
        float *kv = arena + 600;
        memset(kv, 0, 256 * sizeof(float));
        pa_kv_cache il = c;
        il.key = kv;
        il.value = kv + 64;
        il.block_stride = 128;
        cr_assert_eq(pa_ref_reshape_and_cache(&in, slots, &il), PA_SUCCESS, "%s", pa_last_error());
        for (int b = 0; b < 2; b++)
            cr_assert(memcmp(kv + 128 * b, sep_k + 64 * b, 64 * sizeof(float)) == 0 &&
                          memcmp(kv + 128 * b + 64, sep_v + 64 * b, 64 * sizeof(float)) == 0,
                      "interleaved block %d", b);
    }

    pa_kv_cache cb = {.layout = PA_LAYOUT_COMBINED,
                      .dtype = PA_DTYPE_F32,
                      .num_blocks = 2,
                      .block_size = 4,
                      .num_kv_heads = 1,
                      .head_size = 8};
    float *nkv = arena;
    int32_t *sl = (int32_t *)(void *)(arena + 256), *live = (int32_t *)(void *)(arena + 512);
    static const int32_t slices[6] = {1, 4, 0, 2, 2, 2}; /* [cache start; new start; length] x 2 */
    memcpy(sl, slices, sizeof slices);
    *live = 2;
    static const char *const knames[3] = {"new_kv", "slices", "num_slices"};
    const float *kends[3] = {arena + 64, arena + 256 + 6, arena + 512 + 1};
    for (int x = 0; x < 3; x++)
        for (int off = 0; off < 2; off++) {
            cb.key = (float *)kends[x] - off;
            const pa_status st = pa_ref_kv_cache_update(nkv, PA_DTYPE_F32, 4, 0, sl, live, 2, &cb);
            if (off == 0) {
                cr_assert_eq(st, PA_SUCCESS, "cache just past %s: %s", knames[x], pa_last_error());
                continue;
            }
            char want[96];
            snprintf(want, sizeof want, "kv_cache_update: output cache.key overlaps the input %s", knames[x]);
            cr_assert_eq(st, PA_ERR_INVALID_ARGUMENT, "cache over %s accepted", knames[x]);
            cr_assert(strstr(pa_last_error(), want) != NULL, "%s", pa_last_error());
        }
}

/* pa_kv_input: a token stride of 0 means contiguous tokens, num_kv_heads *
 * head_stride, with the head stride as given (here 12 for heads of 8: each
 * token's row is 24 elements), not num_kv_heads * head_size. NHD cache
 * [2 blocks][4 slots][2 heads][8], slots 5, 0 and 2. */
Test(cache_ref, zero_token_stride_follows_the_head_stride) {
    float kc[128], vc[128], key[3 * 24], val[3 * 24];
    for (int i = 0; i < 3 * 24; i++) {
        key[i] = (float)i;
        val[i] = (float)(1000 + i);
    }
    memset(kc, SENTINEL, sizeof kc);
    memset(vc, SENTINEL, sizeof vc);
    float kw[128], vw[128];
    memcpy(kw, kc, sizeof kc);
    memcpy(vw, vc, sizeof vc);
    const int64_t slots[3] = {5, 0, 2};
    for (int t = 0; t < 3; t++)
        for (int h = 0; h < 2; h++)
            for (int d = 0; d < 8; d++) {
                const int64_t o = (slots[t] / 4) * 64 + (slots[t] % 4) * 16 + h * 8 + d;
                kw[o] = key[t * 24 + h * 12 + d];
                vw[o] = val[t * 24 + h * 12 + d];
            }
    pa_kv_cache c = {.layout = PA_LAYOUT_FLASH_NHD,
                     .dtype = PA_DTYPE_F32,
                     .key = kc,
                     .value = vc,
                     .num_blocks = 2,
                     .block_size = 4,
                     .num_kv_heads = 2,
                     .head_size = 8};
    pa_kv_input in = {key, val, PA_DTYPE_F32, 3, 0, 12, 0, 12};
    cr_assert_eq(pa_ref_reshape_and_cache(&in, slots, &c), PA_SUCCESS, "%s", pa_last_error());
    cr_assert(memcmp(kc, kw, sizeof kc) == 0, "keys at the wrong rows");
    cr_assert(memcmp(vc, vw, sizeof vc) == 0, "values at the wrong rows");
}

/* ---- kv_cache_update by slices ------------------------------------------------ */

static void kvu_case(pa_dtype idt, pa_dtype cdt, int hs, int bs, int nh, int strided, uint64_t seed) {
    pa_kv_cache c;
    geo g = {0};
    make_cache(&c, &g, PA_LAYOUT_COMBINED, cdt, 5, bs, nh, hs, 0);
    int64_t ke, ve;
    alloc_cache(&c, &ke, &ve);
    pa_rng r = pa_rng_make(seed);
    const int64_t T = 3 * bs, row = 2 * (int64_t)nh * hs, tstride = row + (strided ? 8 : 0);
    void *nkv = pa_test_random_buffer(&r, idt, (size_t)(T * tstride), -2.0f, 2.0f);
    /* [3][padded]: a slice crossing a page boundary, a full page, a live
     * zero-length slice, a short one, then padding the kernel must ignore */
    enum { NP = 8 };
    const int32_t live = 5;
    int32_t sl[3][NP] = {
        {bs - 3, 2 * bs, 0, 4 * bs + 1, 3 * bs, 999999, -7, 0},
        {0, 5, 0, 2 * bs + 1, bs, 999999, 3, 0},
        {5, bs, 0, 2, bs - 1, bs + 100, 1, 0},
    };
    float ks[64], vs[64];
    cr_assert(nh <= 64);
    case_scales(&c, nh, ks, vs);
    const size_t es = pa_dtype_size(cdt);
    void *ek = malloc((size_t)ke * es);
    memcpy(ek, c.key, (size_t)ke * es);
    for (int i = 0; i < live; i++)
        for (int64_t j = 0; j < sl[2][i]; j++) {
            const int64_t crow = sl[0][i] + j, nrow = sl[1][i] + j;
            for (int64_t ch = 0; ch < 2 * nh; ch++)
                for (int64_t d = 0; d < hs; d++) {
                    /* flat [rows, 2*nh, hs] view of the combined cache */
                    const int64_t co = (crow * 2 * nh + ch) * hs + d;
                    const float sk = c.k_scale ? ks[ch / 2] : 1.0f, sv = c.v_scale ? vs[ch / 2] : 1.0f;
                    expect_put(cdt, ek, co, idt, nkv, nrow * tstride + ch * hs + d, ch % 2 ? sv : sk);
                }
        }
    cr_assert_eq(pa_ref_kv_cache_update(nkv, idt, T, strided ? tstride : 0, &sl[0][0], &live, NP, &c), PA_SUCCESS, "%s",
                 pa_last_error());
    cr_assert(memcmp(ek, c.key, (size_t)ke * es) == 0, "kv_cache_update %s->%s hs %d bs %d nh %d: cache differs",
              pa_dtype_name(idt), pa_dtype_name(cdt), hs, bs, nh);
    if (pa_dtype_is_fp8(cdt) && idt != cdt)
        for (int i = 0; i < live; i++)
            for (int64_t j = 0; j < sl[2][i]; j++)
                for (int64_t ch = 0; ch < 2 * nh; ch++)
                    for (int64_t d = 0; d < hs; d++)
                        check_fp8_roundtrip(cdt, c.key, ((sl[0][i] + j) * 2 * nh + ch) * hs + d, idt, nkv,
                                            (sl[1][i] + j) * tstride + ch * hs + d, ch % 2 ? vs[ch / 2] : ks[ch / 2],
                                            "kv");
    free(ek);
    free(nkv);
    free(c.key);
}

Test(cache_ref, fp8_scales_checked_by_the_references) {
    /* stored = sat(x / scale): a scale that is 0, negative, NaN or infinite is
     * an error in both references (they read it on the host), nothing written. */
    unsigned char kc[2 * 4 * 16], vc[2 * 4 * 16], kc0[sizeof kc], cc[2 * 4 * 2 * 16], cc0[sizeof cc];
    float key[2 * 16], val[2 * 16], nkv[4 * 2 * 16];
    for (int i = 0; i < 32; i++)
        key[i] = val[i] = 0.01f * (float)i;
    for (int i = 0; i < 128; i++)
        nkv[i] = 0.01f * (float)i;
    memset(kc, SENTINEL, sizeof kc);
    memset(vc, SENTINEL, sizeof vc);
    memset(cc, SENTINEL, sizeof cc);
    memcpy(kc0, kc, sizeof kc);
    memcpy(cc0, cc, sizeof cc);
    pa_kv_cache c;
    memset(&c, 0, sizeof c);
    c.layout = PA_LAYOUT_VLLM;
    c.dtype = PA_DTYPE_FP8_E4M3;
    c.num_blocks = 2;
    c.block_size = 4;
    c.num_kv_heads = 1;
    c.head_size = 16;
    c.key = kc;
    c.value = vc;
    pa_kv_cache u = c;
    u.layout = PA_LAYOUT_COMBINED;
    u.key = cc;
    u.value = NULL;
    float ks = 0.5f, vs = 0.25f;
    c.k_scale = u.k_scale = &ks;
    c.v_scale = u.v_scale = &vs;
    pa_kv_input in = {key, val, PA_DTYPE_F32, 2, 0, 0, 0, 0};
    const int64_t slots[2] = {0, 5};
    int32_t sl[3][1] = {{4}, {0}, {2}}, n = 1;
    const float bad[5] = {0.0f, -1.0f, NAN, INFINITY, -INFINITY};
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 5; i++) {
            ks = w == 0 ? bad[i] : 0.5f;
            vs = w == 1 ? bad[i] : 0.25f;
            const char *name = w ? "v_scale" : "k_scale";
            assert_fail(pa_ref_reshape_and_cache(&in, slots, &c), PA_ERR_INVALID_ARGUMENT, name);
            cr_assert(memcmp(kc, kc0, sizeof kc) == 0 && memcmp(vc, kc0, sizeof vc) == 0,
                      "reshape_and_cache %s = %g: written despite the error", name, (double)bad[i]);
            assert_fail(pa_ref_kv_cache_update(nkv, PA_DTYPE_F32, 4, 0, &sl[0][0], &n, 1, &u), PA_ERR_INVALID_ARGUMENT,
                        name);
            cr_assert(memcmp(cc, cc0, sizeof cc) == 0, "kv_cache_update %s = %g: written despite the error", name,
                      (double)bad[i]);
        }
    ks = 0.5f;
    vs = 0.25f;
    cr_assert_eq(pa_ref_reshape_and_cache(&in, slots, &c), PA_SUCCESS, "%s", pa_last_error());
    cr_assert_eq(pa_ref_kv_cache_update(nkv, PA_DTYPE_F32, 4, 0, &sl[0][0], &n, 1, &u), PA_SUCCESS, "%s",
                 pa_last_error());
}

Test(cache_ref, kv_cache_update_slices) {
    int i = 0;
    for (int p = 0; p < NPAIRS; p++)
        for (int h = 0; h < 4; h++, i++)
            kvu_case(pairs[p].in, pairs[p].cache, head_sizes[h], block_sizes[i % 3], kv_heads[(i / 3 + h) % 3], i % 2,
                     2000 + (uint64_t)i);
    /* fp8 new_kv already quantised: a byte copy */
    kvu_case(PA_DTYPE_FP8_E4M3, PA_DTYPE_FP8_E4M3, 128, 16, 2, 1, 77);
    kvu_case(PA_DTYPE_FP8_E5M2, PA_DTYPE_FP8_E5M2, 80, 8, 3, 0, 78);
    kvu_case(PA_DTYPE_F16, PA_DTYPE_F16, 36, 8, 3, 1, 79); /* any head size */
}

/* Scales per KV head (scales_per_head): each head's elements stored with its
 * own k_scale and v_scale, the expected bytes from the layouts' definitions
 * with head h's; every layout, both fp8 kinds from every input dtype, one to
 * five heads. A bad scale is named by its head, a scales_per_head other than
 * 0 or 1 is refused, and with one head per-head scales are the one scale. */
Test(cache_ref, fp8_scales_per_head) {
    static const pa_kv_layout layouts[4] = {PA_LAYOUT_VLLM, PA_LAYOUT_FLASH_NHD, PA_LAYOUT_FLASH_HND,
                                            PA_LAYOUT_COMBINED};
    g_per_head = 1;
    int i = 0;
    for (int p = 0; p < NPAIRS; p++) {
        if (!pa_dtype_is_fp8(pairs[p].cache))
            continue;
        for (int l = 0; l < 4; l++, i++)
            rc_case(layouts[l], pairs[p], 32, 8, 1 + i % 5, i % 2, 3000 + (uint64_t)i);
        kvu_case(pairs[p].in, pairs[p].cache, 40, 8, 2 + p % 4, p % 2, 3100 + (uint64_t)p);
    }
    g_per_head = 0;

    pa_kv_cache c;
    geo g = {0};
    make_cache(&c, &g, PA_LAYOUT_FLASH_NHD, PA_DTYPE_FP8_E4M3, 2, 4, 5, 16, 0);
    int64_t ke, ve;
    alloc_cache(&c, &ke, &ve);
    float ks[5] = {0.1f, 0.2f, 0.3f, NAN, 0.5f}, vs[5] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f};
    c.k_scale = ks;
    c.v_scale = vs;
    c.scales_per_head = 1;
    float x[5 * 16] = {0};
    const int64_t slot = 1;
    pa_kv_input in = {x, x, PA_DTYPE_F32, 1, 0, 0, 0, 0};
    cr_assert_eq(pa_ref_reshape_and_cache(&in, &slot, &c), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "k_scale[3]") != NULL, "%s", pa_last_error());
    ks[3] = 0.4f;
    vs[1] = -1.0f;
    cr_assert_eq(pa_ref_reshape_and_cache(&in, &slot, &c), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "v_scale[1]") != NULL, "%s", pa_last_error());
    vs[1] = 0.2f;
    cr_assert_eq(pa_ref_reshape_and_cache(&in, &slot, &c), PA_SUCCESS, "%s", pa_last_error());
    c.scales_per_head = 2;
    cr_assert_eq(pa_kv_cache_validate(&c), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "scales_per_head") != NULL, "%s", pa_last_error());
    cr_assert_eq(pa_ref_reshape_and_cache(&in, &slot, &c), PA_ERR_INVALID_ARGUMENT);
    c.scales_per_head = -1;
    cr_assert_eq(pa_kv_cache_validate(&c), PA_ERR_INVALID_ARGUMENT);
    free(c.key);
    free(c.value);

    /* A cache that is not fp8 reads no scale, per head or not: one float each
     * where five heads' would be (under ASan, CI's host run, an over-read fails). */
    make_cache(&c, &g, PA_LAYOUT_FLASH_NHD, PA_DTYPE_F32, 2, 4, 5, 16, 0);
    alloc_cache(&c, &ke, &ve);
    float *one_k = malloc(sizeof(float)), *one_v = malloc(sizeof(float));
    *one_k = *one_v = 0.5f;
    c.k_scale = one_k;
    c.v_scale = one_v;
    c.scales_per_head = 1;
    for (int i = 0; i < 5 * 16; i++)
        x[i] = (float)i;
    cr_assert_eq(pa_ref_reshape_and_cache(&in, &slot, &c), PA_SUCCESS, "%s", pa_last_error());
    const float *kf = c.key; /* slot 1: block 0, token 1; scale-free copies */
    cr_assert(kf[5 * 16 + 3 * 16 + 7] == x[3 * 16 + 7], "head 3 dim 7: %g", (double)kf[5 * 16 + 3 * 16 + 7]);
    free(one_k);
    free(one_v);
    free(c.key);
    free(c.value);
}

Test(cache_ref, kv_cache_update_bad_input) {
    pa_kv_cache c;
    memset(&c, 0, sizeof c);
    c.layout = PA_LAYOUT_COMBINED;
    c.dtype = PA_DTYPE_F32;
    c.num_blocks = 2;
    c.block_size = 4;
    c.num_kv_heads = 1;
    c.head_size = 4;
    float cache[2 * 4 * 2 * 4], nkv[6 * 8];
    memset(cache, SENTINEL, sizeof cache);
    unsigned char c0[sizeof cache];
    memcpy(c0, cache, sizeof cache);
    for (int i = 0; i < 48; i++)
        nkv[i] = (float)i;
    c.key = cache;
    int32_t sl[3][3] = {{0, 4, 0}, {0, 1, 0}, {4, 4, 0}}, n = 2;
    cr_assert_eq(pa_ref_kv_cache_update(nkv, PA_DTYPE_F32, 6, 0, &sl[0][0], &n, 3, &c), PA_SUCCESS, "%s",
                 pa_last_error());
    memcpy(cache, c0, sizeof cache);
    sl[2][1] = 5; /* longer than a page */
    assert_fail(pa_ref_kv_cache_update(nkv, PA_DTYPE_F32, 6, 0, &sl[0][0], &n, 3, &c), PA_ERR_INVALID_ARGUMENT,
                "slice 1 length 5");
    sl[2][1] = 4;
    sl[0][1] = 5; /* rows 5..8 of an 8-row cache */
    assert_fail(pa_ref_kv_cache_update(nkv, PA_DTYPE_F32, 6, 0, &sl[0][0], &n, 3, &c), PA_ERR_INVALID_ARGUMENT,
                "slice 1 kv_cache_start");
    sl[0][1] = 4;
    sl[1][1] = 3; /* tokens 3..6 of 6 */
    assert_fail(pa_ref_kv_cache_update(nkv, PA_DTYPE_F32, 6, 0, &sl[0][0], &n, 3, &c), PA_ERR_INVALID_ARGUMENT,
                "slice 1 new_kv_start");
    sl[1][1] = 1;
    n = 4;
    /* the bound is named by the parameter's name, slices_capacity: the
     * message said num_slices_padded, the field cache_ops.h says not to pass */
    assert_fail(pa_ref_kv_cache_update(nkv, PA_DTYPE_F32, 6, 0, &sl[0][0], &n, 3, &c), PA_ERR_INVALID_ARGUMENT,
                "kv_cache_update: *num_slices = 4 out of range [0, slices_capacity = 3]");
    n = 2;
    assert_fail(pa_ref_kv_cache_update(nkv, PA_DTYPE_F32, 6, 0, &sl[0][0], &n, -1, &c), PA_ERR_INVALID_ARGUMENT,
                "kv_cache_update: slices_capacity must be >= 0 (got -1)");
    assert_fail(pa_ref_kv_cache_update(nkv, PA_DTYPE_F32, 6, 0, NULL, &n, 3, &c), PA_ERR_INVALID_ARGUMENT, "slices");
    assert_fail(pa_ref_kv_cache_update(nkv, PA_DTYPE_F32, 6, 0, &sl[0][0], NULL, 3, &c), PA_ERR_INVALID_ARGUMENT,
                "num_slices");
    assert_fail(pa_ref_kv_cache_update(nkv, PA_DTYPE_F32, 6, -1, &sl[0][0], &n, 3, &c), PA_ERR_INVALID_ARGUMENT,
                "new_kv_token_stride");
    assert_fail(pa_ref_kv_cache_update(NULL, PA_DTYPE_F32, 6, 0, &sl[0][0], &n, 3, &c), PA_ERR_INVALID_ARGUMENT,
                "new_kv is NULL");
    /* (these two found unreached by scripts/refusal-coverage.py) */
    assert_fail(pa_ref_kv_cache_update(nkv, (pa_dtype)-3, 6, 0, &sl[0][0], &n, 3, &c), PA_ERR_INVALID_ARGUMENT,
                "kv_cache_update: new_kv_dtype -3 unknown");
    assert_fail(pa_ref_kv_cache_update(nkv, PA_DTYPE_F32, -6, 0, &sl[0][0], &n, 3, &c), PA_ERR_INVALID_ARGUMENT,
                "kv_cache_update: num_tokens must be >= 0 (got -6)");
    assert_fail(pa_ref_kv_cache_update(nkv, PA_DTYPE_F16, 6, 0, &sl[0][0], &n, 3, &c), PA_ERR_UNSUPPORTED,
                "unsupported");
    c.layout = PA_LAYOUT_FLASH_NHD;
    c.value = cache;
    assert_fail(pa_ref_kv_cache_update(nkv, PA_DTYPE_F32, 6, 0, &sl[0][0], &n, 3, &c), PA_ERR_UNSUPPORTED,
                "only combined");
    cr_assert(memcmp(cache, c0, sizeof cache) == 0, "written despite the error");
}

/* ---- swap_blocks ------------------------------------------------------------- */

Test(cache_ref, swap_plan_runs) {
    const int64_t m[][2] = {{0, 10}, {1, 11}, {2, 12}, {5, 3}, {6, 4}, {9, 9}, {7, 20}, {4, 2}, {3, 1}, {8, 21}};
    const int64_t n = 10;
    int64_t nr = -1;
    cr_assert_eq(pa_swap_plan_runs(&m[0][0], n, NULL, 0, &nr), PA_SUCCESS);
    cr_assert_eq(nr, 7);
    pa_block_run runs[10];
    cr_assert_eq(pa_swap_plan_runs(&m[0][0], n, runs, 10, &nr), PA_SUCCESS);
    const pa_block_run want[] = {{0, 10, 3}, {5, 3, 2}, {9, 9, 1}, {7, 20, 1}, {4, 2, 1}, {3, 1, 1}, {8, 21, 1}};
    for (int i = 0; i < 7; i++)
        cr_assert(runs[i].src_block == want[i].src_block && runs[i].dst_block == want[i].dst_block &&
                      runs[i].num_blocks == want[i].num_blocks,
                  "run %d: (%lld,%lld,%lld)", i, (long long)runs[i].src_block, (long long)runs[i].dst_block,
                  (long long)runs[i].num_blocks);
    /* a truncated array still reports the total, and the runs past max_runs
     * are not written (the first two are) */
    memset(runs, 0x5A, sizeof runs);
    pa_block_run untouched;
    memset(&untouched, 0x5A, sizeof untouched);
    cr_assert_eq(pa_swap_plan_runs(&m[0][0], n, runs, 2, &nr), PA_SUCCESS);
    cr_assert_eq(nr, 7);
    for (int i = 0; i < 2; i++)
        cr_assert(runs[i].src_block == want[i].src_block && runs[i].num_blocks == want[i].num_blocks);
    for (int i = 2; i < 10; i++)
        cr_assert_eq(memcmp(&runs[i], &untouched, sizeof untouched), 0, "run %d written past max_runs 2", i);
    /* one long run, and nothing */
    int64_t big[64][2];
    for (int i = 0; i < 64; i++) {
        big[i][0] = 100 + i;
        big[i][1] = 7 + i;
    }
    cr_assert_eq(pa_swap_plan_runs(&big[0][0], 64, runs, 10, &nr), PA_SUCCESS);
    cr_assert(nr == 1 && runs[0].num_blocks == 64 && runs[0].src_block == 100 && runs[0].dst_block == 7);
    cr_assert_eq(pa_swap_plan_runs(NULL, 0, NULL, 0, &nr), PA_SUCCESS);
    cr_assert_eq(nr, 0);
    assert_fail(pa_swap_plan_runs(NULL, 3, NULL, 0, &nr), PA_ERR_INVALID_ARGUMENT, "block_mapping");
    assert_fail(pa_swap_plan_runs(&m[0][0], n, NULL, 4, &nr), PA_ERR_INVALID_ARGUMENT, "runs is NULL");
    /* Ids at the ends of int64 (the planner takes any; pa_swap_blocks range-checks
     * them): INT64_MIN does not follow INT64_MAX, whatever INT64_MAX + 1 wraps to;
     * INT64_MAX does follow INT64_MAX - 1, and -1 follows -2. */
    const int64_t ends[][2] = {{INT64_MAX, 0}, {INT64_MIN, 1}, {INT64_MAX - 1, 5}, {INT64_MAX, 6}, {-2, 8}, {-1, 9}};
    cr_assert_eq(pa_swap_plan_runs(&ends[0][0], 6, runs, 10, &nr), PA_SUCCESS);
    const pa_block_run want_ends[] = {{INT64_MAX, 0, 1}, {INT64_MIN, 1, 1}, {INT64_MAX - 1, 5, 2}, {-2, 8, 2}};
    cr_assert_eq(nr, 4, "%lld runs", (long long)nr);
    for (int i = 0; i < 4; i++)
        cr_assert(runs[i].src_block == want_ends[i].src_block && runs[i].dst_block == want_ends[i].dst_block &&
                      runs[i].num_blocks == want_ends[i].num_blocks,
                  "ends, run %d: (%lld,%lld,%lld)", i, (long long)runs[i].src_block, (long long)runs[i].dst_block,
                  (long long)runs[i].num_blocks);
}

Test(cache_ref, swap_blocks_reference) {
    enum { NB_SRC = 12, NB_DST = 9, BB = 40 };
    unsigned char src[NB_SRC * BB], dst[NB_DST * BB], want[NB_DST * BB];
    for (int i = 0; i < NB_SRC * BB; i++)
        src[i] = (unsigned char)(i * 7 + 3);
    memset(dst, SENTINEL, sizeof dst);
    memcpy(want, dst, sizeof dst);
    const int64_t m[][2] = {{0, 2}, {1, 3}, {2, 4}, {11, 0}, {5, 8}};
    for (int i = 0; i < 5; i++)
        memcpy(want + m[i][1] * BB, src + m[i][0] * BB, BB);
    cr_assert_eq(pa_ref_swap_blocks(dst, src, BB, &m[0][0], 5, NB_SRC, NB_DST), PA_SUCCESS, "%s", pa_last_error());
    cr_assert(memcmp(dst, want, sizeof dst) == 0);
    /* out of range: rejected naming the pair, nothing written */
    memset(dst, SENTINEL, sizeof dst);
    memcpy(want, dst, sizeof dst);
    const int64_t bad[][2] = {{0, 2}, {1, 3}, {2, 9}};
    assert_fail(pa_ref_swap_blocks(dst, src, BB, &bad[0][0], 3, NB_SRC, NB_DST), PA_ERR_INVALID_ARGUMENT,
                "block_mapping[2] dst block 9");
    const int64_t bad2[][2] = {{-1, 2}};
    assert_fail(pa_ref_swap_blocks(dst, src, BB, &bad2[0][0], 1, NB_SRC, NB_DST), PA_ERR_INVALID_ARGUMENT,
                "block_mapping[0] src block -1");
    assert_fail(pa_ref_swap_blocks(dst, src, 0, &m[0][0], 5, NB_SRC, NB_DST), PA_ERR_INVALID_ARGUMENT, "block_bytes");
    assert_fail(pa_ref_swap_blocks(NULL, src, BB, &m[0][0], 5, NB_SRC, NB_DST), PA_ERR_INVALID_ARGUMENT, "dst");
    assert_fail(pa_ref_swap_blocks(dst, src, BB, &m[0][0], 5, 0, NB_DST), PA_ERR_INVALID_ARGUMENT, "src_num_blocks");
    cr_assert(memcmp(dst, want, sizeof dst) == 0, "written despite the error");
    cr_assert_eq(pa_ref_swap_blocks(NULL, NULL, BB, NULL, 0, 0, 0), PA_SUCCESS);
}

/* Mutation kill (issue 16, item 13): src block == src_num_blocks is one past
 * the end, refused (the `<` in the range check, not `<=`). */
Test(cache_ref, swap_blocks_refuses_one_past_the_last_block) {
    enum { NB = 4, BB = 16 };
    unsigned char src[NB * BB], dst[NB * BB], d0[NB * BB];
    memset(src, 7, sizeof src);
    memset(dst, SENTINEL, sizeof dst);
    memcpy(d0, dst, sizeof dst);
    const int64_t src_end[][2] = {{NB, 0}}, dst_end[][2] = {{0, NB}}, last[][2] = {{NB - 1, NB - 1}};
    assert_fail(pa_ref_swap_blocks(dst, src, BB, &src_end[0][0], 1, NB, NB), PA_ERR_INVALID_ARGUMENT,
                "block_mapping[0] src block 4 out of range [0, 4)");
    assert_fail(pa_ref_swap_blocks(dst, src, BB, &dst_end[0][0], 1, NB, NB), PA_ERR_INVALID_ARGUMENT,
                "block_mapping[0] dst block 4 out of range [0, 4)");
    cr_assert(memcmp(dst, d0, sizeof dst) == 0, "written despite the error");
    cr_assert_eq(pa_ref_swap_blocks(dst, src, BB, &last[0][0], 1, NB, NB), PA_SUCCESS, "%s", pa_last_error());
    cr_assert(dst[(NB - 1) * BB] == 7 && dst[0] == (unsigned char)SENTINEL);
}

/* ---- copy_blocks -------------------------------------------------------------- */

Test(cache_ref, copy_blocks_reference) {
    enum { L = 3, NB = 8, NUMEL = 24 };
    const pa_dtype dt = PA_DTYPE_F16;
    const size_t bb = NUMEL * 2;
    unsigned char *k[L], *v[L], *wk[L], *wv[L];
    for (int l = 0; l < L; l++) {
        k[l] = malloc(NB * bb);
        v[l] = malloc(NB * bb);
        wk[l] = malloc(NB * bb);
        wv[l] = malloc(NB * bb);
        for (size_t i = 0; i < NB * bb; i++) {
            k[l][i] = (unsigned char)(i + 31 * l);
            v[l][i] = (unsigned char)(3 * i + 17 * l);
        }
        memcpy(wk[l], k[l], NB * bb);
        memcpy(wv[l], v[l], NB * bb);
    }
    /* repeated source (prefix fork) and a padding pair */
    const int64_t m[][2] = {{1, 4}, {1, 5}, {2, 6}, {-1, -1}, {0, 7}};
    for (int l = 0; l < L; l++)
        for (int i = 0; i < 5; i++) {
            if (m[i][0] < 0)
                continue;
            memcpy(wk[l] + m[i][1] * bb, wk[l] + m[i][0] * bb, bb);
            memcpy(wv[l] + m[i][1] * bb, wv[l] + m[i][0] * bb, bb);
        }
    cr_assert_eq(pa_ref_copy_blocks((void *const *)k, (void *const *)v, L, &m[0][0], 5, NUMEL, dt, NB), PA_SUCCESS,
                 "%s", pa_last_error());
    for (int l = 0; l < L; l++)
        cr_assert(memcmp(k[l], wk[l], NB * bb) == 0 && memcmp(v[l], wv[l], NB * bb) == 0, "layer %d differs", l);
    /* key-only (combined / MLA) */
    const int64_t m2[][2] = {{3, 0}};
    cr_assert_eq(pa_ref_copy_blocks((void *const *)k, NULL, L, &m2[0][0], 1, NUMEL, dt, NB), PA_SUCCESS);
    for (int l = 0; l < L; l++) {
        memcpy(wk[l], wk[l] + 3 * bb, bb);
        cr_assert(memcmp(k[l], wk[l], NB * bb) == 0 && memcmp(v[l], wv[l], NB * bb) == 0, "layer %d differs", l);
    }
    /* out of range: rejected naming the pair, nothing written */
    const int64_t bad[][2] = {{1, 2}, {8, 3}};
    assert_fail(pa_ref_copy_blocks((void *const *)k, (void *const *)v, L, &bad[0][0], 2, NUMEL, dt, NB),
                PA_ERR_INVALID_ARGUMENT, "block_mapping[1]");
    const int64_t bad2[][2] = {{1, -5}};
    assert_fail(pa_ref_copy_blocks((void *const *)k, (void *const *)v, L, &bad2[0][0], 1, NUMEL, dt, NB),
                PA_ERR_INVALID_ARGUMENT, "block_mapping[0]");
    assert_fail(pa_ref_copy_blocks((void *const *)k, (void *const *)v, L, &m[0][0], 5, 0, dt, NB),
                PA_ERR_INVALID_ARGUMENT, "numel_per_block");
    assert_fail(pa_ref_copy_blocks((void *const *)k, (void *const *)v, L, &m[0][0], 5, NUMEL, (pa_dtype)9, NB),
                PA_ERR_INVALID_ARGUMENT, "dtype");
    assert_fail(pa_ref_copy_blocks(NULL, NULL, L, &m[0][0], 5, NUMEL, dt, NB), PA_ERR_INVALID_ARGUMENT, "key_caches");
    assert_fail(pa_ref_copy_blocks((void *const *)k, (void *const *)v, -1, &m[0][0], 5, NUMEL, dt, NB),
                PA_ERR_INVALID_ARGUMENT, "num_layers");
    for (int l = 0; l < L; l++) {
        cr_assert(memcmp(k[l], wk[l], NB * bb) == 0 && memcmp(v[l], wv[l], NB * bb) == 0, "written despite error");
        free(k[l]);
        free(v[l]);
        free(wk[l]);
        free(wv[l]);
    }
}

/* Mutation kill (issue 16, item 13): a pair with -1 on either side is padding
 * (skipped, nothing copied), as the device skips it; only (-1, -1) is not the
 * rule. With `&&` in the padding test, (-1, 3) and (2, -1) were refused. */
Test(cache_ref, copy_blocks_half_padding_pairs_are_skipped) {
    enum { NB = 5, NUMEL = 8 };
    float k[NB * NUMEL], want[NB * NUMEL];
    for (int i = 0; i < NB * NUMEL; i++)
        k[i] = (float)i;
    memcpy(want, k, sizeof k);
    void *kc[1] = {k};
    const int64_t m[][2] = {{-1, 3}, {2, -1}, {1, 4}, {-1, -1}};
    memcpy(want + 4 * NUMEL, k + 1 * NUMEL, sizeof(float) * NUMEL); /* only (1, 4) copies */
    cr_assert_eq(pa_ref_copy_blocks(kc, NULL, 1, &m[0][0], 4, NUMEL, PA_DTYPE_F32, NB), PA_SUCCESS, "%s",
                 pa_last_error());
    cr_assert(memcmp(k, want, sizeof k) == 0, "a padding pair copied something");
    const int64_t bad[][2] = {{-2, 3}};
    assert_fail(pa_ref_copy_blocks(kc, NULL, 1, &bad[0][0], 1, NUMEL, PA_DTYPE_F32, NB), PA_ERR_INVALID_ARGUMENT,
                "block_mapping[0]");
    /* a half-padding pair reads nothing: its source may be another pair's
     * destination (block 3 here: only (1, 3) copies) */
    const int64_t m2[][2] = {{3, -1}, {1, 3}};
    memcpy(want, k, sizeof k);
    memcpy(want + 3 * NUMEL, k + 1 * NUMEL, sizeof(float) * NUMEL);
    cr_assert_eq(pa_ref_copy_blocks(kc, NULL, 1, &m2[0][0], 2, NUMEL, PA_DTYPE_F32, NB), PA_SUCCESS, "%s",
                 pa_last_error());
    cr_assert(memcmp(k, want, sizeof k) == 0, "(1, 3) did not copy block 1 into block 3 alone");
}

/* Found by the fuzz target: a pair (3, 3), or a destination that another pair
 * reads, made the reference memcpy overlapping or order-dependent copies
 * (ASan memcpy-param-overlap). cache_ops.h forbids a destination that is also
 * a source in the same call: the reference refuses it, naming the pair,
 * before copying anything. */
Test(cache_ref, copy_blocks_refuses_a_destination_that_is_a_source) {
    enum { NB = 6, NUMEL = 4 };
    float k[NB * NUMEL], k0[NB * NUMEL];
    for (int i = 0; i < NB * NUMEL; i++)
        k[i] = (float)i;
    memcpy(k0, k, sizeof k);
    void *kc[1] = {k};
    const int64_t self[][2] = {{0, 1}, {3, 3}};
    assert_fail(pa_ref_copy_blocks(kc, NULL, 1, &self[0][0], 2, NUMEL, PA_DTYPE_F32, NB), PA_ERR_INVALID_ARGUMENT,
                "block_mapping[1] = (3, 3): destination 3 is also a source");
    const int64_t chain[][2] = {{1, 2}, {2, 5}}; /* 2 is written by pair 0 and read by pair 1 */
    assert_fail(pa_ref_copy_blocks(kc, NULL, 1, &chain[0][0], 2, NUMEL, PA_DTYPE_F32, NB), PA_ERR_INVALID_ARGUMENT,
                "block_mapping[0] = (1, 2): destination 2 is also a source");
    cr_assert(memcmp(k, k0, sizeof k) == 0, "copied despite the error");
    const int64_t fork[][2] = {{1, 2}, {1, 5}, {-1, 1}}; /* one source, two destinations; padding ignored */
    cr_assert_eq(pa_ref_copy_blocks(kc, NULL, 1, &fork[0][0], 3, NUMEL, PA_DTYPE_F32, NB), PA_SUCCESS, "%s",
                 pa_last_error());
    cr_assert(k[2 * NUMEL] == k0[1 * NUMEL] && k[5 * NUMEL] == k0[1 * NUMEL]);
}

/* Found by review (2026-12-07): the copies read their index data as they go,
 * so index data inside what they write was overwritten under them. A swap
 * mapping held in dst's block 3, {(0, 3), (1, 4)}, had its second pair
 * replaced by src's bytes before it was read (a segfault); a copy_blocks
 * mapping or pointer table inside a layer's buffer likewise. A cache whose key
 * and value are one buffer (the same view passed twice) lost every key under
 * its value. Each is refused now, naming it, with nothing written; index data
 * inside a buffer that is only read stays fine. */
Test(cache_ref, index_data_apart_from_what_the_copies_write) {
    enum { NB = 6, BB = 32 };
    /* swap_blocks: the mapping in dst (refused), then in src (accepted) */
    _Alignas(16) unsigned char src[NB * BB], dst[NB * BB], d0[NB * BB], want[NB * BB];
    for (int i = 0; i < NB * BB; i++)
        src[i] = (unsigned char)(5 * i + 1);
    memset(dst, SENTINEL, sizeof dst);
    int64_t *in_dst = (int64_t *)(void *)(dst + 3 * BB);
    in_dst[0] = 0, in_dst[1] = 3, in_dst[2] = 1, in_dst[3] = 4;
    memcpy(d0, dst, sizeof dst);
    assert_fail(pa_ref_swap_blocks(dst, src, BB, in_dst, 2, NB, NB), PA_ERR_INVALID_ARGUMENT,
                "swap_blocks: block_mapping");
    cr_assert(strstr(pa_last_error(), "lies in the dst buffer"), "%s", pa_last_error());
    cr_assert(memcmp(dst, d0, sizeof dst) == 0, "written despite the error");
    int64_t *in_src = (int64_t *)(void *)(src + 5 * BB);
    in_src[0] = 0, in_src[1] = 3, in_src[2] = 1, in_src[3] = 4;
    memcpy(want, dst, sizeof dst);
    memcpy(want + 3 * BB, src, BB);
    memcpy(want + 4 * BB, src + BB, BB);
    cr_assert_eq(pa_ref_swap_blocks(dst, src, BB, in_src, 2, NB, NB), PA_SUCCESS, "%s", pa_last_error());
    cr_assert(memcmp(dst, want, sizeof dst) == 0, "a mapping held in src copied wrongly");

    /* copy_blocks: the mapping in layer 1's key buffer, a pointer table in
     * layer 0's value buffer (refused); the mapping in another buffer (accepted) */
    enum { L = 2, NUMEL = 8 };
    _Alignas(16) float k[L][NB * NUMEL], v[L][NB * NUMEL], k0[L][NB * NUMEL], v0[L][NB * NUMEL];
    for (int l = 0; l < L; l++)
        for (int i = 0; i < NB * NUMEL; i++)
            k[l][i] = (float)(i + 100 * l), v[l][i] = (float)(-i - 100 * l);
    int64_t *m_in_k1 = (int64_t *)(void *)(k[1] + 4 * NUMEL);
    m_in_k1[0] = 0, m_in_k1[1] = 4, m_in_k1[2] = 1, m_in_k1[3] = 5;
    memcpy(k0, k, sizeof k);
    memcpy(v0, v, sizeof v);
    void *kc[L] = {k[0], k[1]}, *vc[L] = {v[0], v[1]};
    assert_fail(pa_ref_copy_blocks(kc, vc, L, m_in_k1, 2, NUMEL, PA_DTYPE_F32, NB), PA_ERR_INVALID_ARGUMENT,
                "copy_blocks: block_mapping lies in key_caches[1]");
    const int64_t m[2][2] = {{0, 4}, {1, 5}};
    void **table_in_v0 = (void **)(void *)(v[0] + 2 * NUMEL);
    table_in_v0[0] = k[0], table_in_v0[1] = k[1];
    memcpy(v0, v, sizeof v);
    assert_fail(pa_ref_copy_blocks(table_in_v0, vc, L, &m[0][0], 2, NUMEL, PA_DTYPE_F32, NB), PA_ERR_INVALID_ARGUMENT,
                "copy_blocks: a layer pointer table lies in value_caches[0]");
    cr_assert(memcmp(k, k0, sizeof k) == 0 && memcmp(v, v0, sizeof v) == 0, "copied despite the error");

    /* copy_blocks (2026-12-07, 23rd session): buffers of two layers, or a
     * layer's key and value, that share bytes without starting at one address
     * (a copy into one lands in the other's live blocks) are refused naming
     * both; one buffer named twice is copied twice alike (accepted). Each
     * buffer is NB blocks of 32 bytes (192); k[1] follows k[0]. A key cache
     * one block into k[0] shares 5 blocks with it; a value cache one block
     * before k[1] is k[0]'s last block. */
    void *kv_over[L] = {k[0], k[0] + NUMEL}, *vv_over[L] = {v[0], k[1] - NUMEL};
    assert_fail(pa_ref_copy_blocks(kv_over, vc, L, &m[0][0], 2, NUMEL, PA_DTYPE_F32, NB), PA_ERR_INVALID_ARGUMENT,
                "copy_blocks: key_caches[0] and key_caches[1] share bytes (192 bytes each, 32 apart)");
    assert_fail(pa_ref_copy_blocks(kc, vv_over, L, &m[0][0], 2, NUMEL, PA_DTYPE_F32, NB), PA_ERR_INVALID_ARGUMENT,
                "copy_blocks: key_caches[0] and value_caches[1] share bytes (192 bytes each, 160 apart)");
    /* three layers whose overlapping two hold the highest addresses (the last
     * pair of the sorted buffers; the check had to reach it) */
    void *last_over[3] = {k[0], k[1], k[1] + NUMEL};
    assert_fail(pa_ref_copy_blocks(last_over, NULL, 3, &m[0][0], 2, NUMEL, PA_DTYPE_F32, NB), PA_ERR_INVALID_ARGUMENT,
                "copy_blocks: key_caches[1] and key_caches[2] share bytes (192 bytes each, 32 apart)");
    cr_assert(memcmp(k, k0, sizeof k) == 0 && memcmp(v, v0, sizeof v) == 0, "copied despite the error");
    void *twice[L] = {k[0], k[0]}; /* one buffer, both layers: blocks 0, 1 land on 4, 5 */
    cr_assert_eq(pa_ref_copy_blocks(twice, NULL, L, &m[0][0], 2, NUMEL, PA_DTYPE_F32, NB), PA_SUCCESS, "%s",
                 pa_last_error());
    cr_assert(memcmp(k[0] + 4 * NUMEL, k0[0], 2 * NUMEL * sizeof(float)) == 0, "one buffer named twice");
    cr_assert(memcmp(k[1], k0[1], sizeof k[1]) == 0, "another buffer written");

    /* reshape_and_cache: one buffer as key and value (refused, flash and vLLM
     * layouts), then the two halves of each block of one buffer (accepted) */
    _Alignas(16) float cache[2 * 4 * 2 * 8], c0[sizeof cache / sizeof(float)], key[2 * 16], val[2 * 16];
    for (int i = 0; i < 32; i++)
        key[i] = (float)i, val[i] = (float)(-i - 1);
    memset(cache, 0, sizeof cache);
    memcpy(c0, cache, sizeof cache);
    const int64_t slots[2] = {1, 6};
    const pa_kv_input in = {key, val, PA_DTYPE_F32, 2, 0, 0, 0, 0};
    pa_kv_cache c = {.layout = PA_LAYOUT_FLASH_NHD,
                     .dtype = PA_DTYPE_F32,
                     .key = cache,
                     .value = cache,
                     .num_blocks = 2,
                     .block_size = 4,
                     .num_kv_heads = 2,
                     .head_size = 8};
    assert_fail(pa_ref_reshape_and_cache(&in, slots, &c), PA_ERR_INVALID_ARGUMENT,
                "reshape_and_cache: cache.key and cache.value are the same buffer");
    c.layout = PA_LAYOUT_VLLM;
    assert_fail(pa_ref_reshape_and_cache(&in, slots, &c), PA_ERR_INVALID_ARGUMENT,
                "reshape_and_cache: cache.key and cache.value are the same buffer");
    cr_assert(memcmp(cache, c0, sizeof cache) == 0, "written despite the error");
    c.layout = PA_LAYOUT_FLASH_NHD;
    c.num_kv_heads = 1; /* [2 blocks][K, V][4 slots][1 head][8] */
    c.value = cache + 32;
    c.block_stride = 64;
    const pa_kv_input in1 = {key, val, PA_DTYPE_F32, 2, 0, 0, 0, 0};
    cr_assert_eq(pa_ref_reshape_and_cache(&in1, slots, &c), PA_SUCCESS, "%s", pa_last_error());
    cr_assert(cache[8] == key[0] && cache[32 + 8] == val[0] && cache[64 + 16] == key[8] &&
                  cache[64 + 32 + 16] == val[8],
              "interleaved halves: key %g value %g, key %g value %g", (double)cache[8], (double)cache[40],
              (double)cache[80], (double)cache[112]);
}

/* A cache write refuses key and value views of one buffer that share bytes,
 * and takes views that interleave without sharing (expected by hand from the
 * layouts' definitions: 2 blocks of 4 slots, 2 heads of 8 floats). Until
 * 2026-12-07 (twenty-second session) only the same pointer twice was refused:
 * a value view one head or one token after its key was written over it. */
Test(cache_ref, key_and_value_views_that_share_bytes) {
    static const struct {
        pa_kv_layout layout;
        int64_t d, block_stride, page_stride, head_stride; /* value - key and the strides, in floats */
        int ok;
    } cs[] = {
        {PA_LAYOUT_FLASH_NHD, 8, 0, 0, 0, 0},      /* value head 0 = key head 1 */
        {PA_LAYOUT_FLASH_NHD, 16, 0, 0, 0, 0},     /* value token 0 = key token 1 */
        {PA_LAYOUT_FLASH_NHD, 64, 0, 0, 0, 0},     /* value block 0 = key block 1 */
        {PA_LAYOUT_FLASH_NHD, 128, 0, 0, 0, 1},    /* after the key's 128 floats */
        {PA_LAYOUT_FLASH_NHD, 8, 128, 32, 16, 1},  /* heads interleaved: K at even, V at odd (combined-like) */
        {PA_LAYOUT_FLASH_NHD, 24, 128, 32, 16, 1}, /* V in the odd places of the next token: no byte shared */
        {PA_LAYOUT_FLASH_NHD, 16, 128, 32, 16, 0}, /* value head 0 = key head 1 */
        {PA_LAYOUT_FLASH_NHD, 7, 128, 32, 16, 0},  /* one float into key head 0's last */
        {PA_LAYOUT_FLASH_HND, 8, 0, 0, 0, 0},      /* value slot 0 = key slot 1 */
        {PA_LAYOUT_FLASH_HND, 64, 128, 0, 0, 1},   /* [blocks, 2, heads, slots, 8]: the halves of each block */
        {PA_LAYOUT_FLASH_HND, 96, 128, 0, 0, 0},   /* value block 0 head 1 = key block 1 head 0 */
        {PA_LAYOUT_VLLM, 4, 0, 0, 0, 0},           /* 16 bytes on */
        {PA_LAYOUT_VLLM, 128, 0, 0, 0, 1},
    };
    _Alignas(16) float buf[512], before[512], key[2 * 16], val[2 * 16];
    for (int i = 0; i < 32; i++)
        key[i] = (float)i, val[i] = (float)(-i - 1);
    const int64_t slots[2] = {1, 6};
    const pa_kv_input in = {key, val, PA_DTYPE_F32, 2, 0, 0, 0, 0};
    for (int i = 0; i < (int)(sizeof cs / sizeof cs[0]); i++) {
        for (int j = 0; j < 512; j++)
            buf[j] = (float)(1000 + j);
        memcpy(before, buf, sizeof buf);
        pa_kv_cache c = {.layout = cs[i].layout,
                         .dtype = PA_DTYPE_F32,
                         .key = buf,
                         .value = buf + cs[i].d,
                         .num_blocks = 2,
                         .block_size = 4,
                         .num_kv_heads = 2,
                         .head_size = 8,
                         .block_stride = cs[i].block_stride,
                         .page_stride = cs[i].page_stride,
                         .head_stride = cs[i].head_stride};
        const pa_status st = pa_ref_reshape_and_cache(&in, slots, &c);
        if (cs[i].ok) {
            cr_assert_eq(st, PA_SUCCESS, "case %d: %s", i, pa_last_error());
        } else {
            cr_assert_eq(st, PA_ERR_INVALID_ARGUMENT, "case %d (%s, value %lld floats on): accepted", i,
                         pa_kv_layout_name(cs[i].layout), (long long)cs[i].d);
            cr_assert(strstr(pa_last_error(), "share bytes") != NULL, "case %d: %s", i, pa_last_error());
            cr_assert(memcmp(buf, before, sizeof buf) == 0, "case %d: written despite the error", i);
        }
    }
}

/* cache_ops.h: one place takes one writer a call (the device writes tokens,
 * slices and pairs in parallel). The references refuse two writers of a slot,
 * of a cache row or of a destination block, naming both and writing nothing;
 * padding (slot -1, zero-length slices, -1 pairs) writes nothing and meets
 * nothing, and slices that only touch (rows 0..3 and 4..7) are fine. */
Test(cache_ref, one_writer_a_place) {
    float kc[64], vc[64], key[4 * 8], val[4 * 8];
    for (int i = 0; i < 32; i++)
        key[i] = val[i] = (float)i;
    memset(kc, SENTINEL, sizeof kc);
    memset(vc, SENTINEL, sizeof vc);
    unsigned char k0[sizeof kc];
    memcpy(k0, kc, sizeof kc);
    pa_kv_cache c;
    small_vllm(&c, kc, vc);
    pa_kv_input in = {key, val, PA_DTYPE_F32, 4, 0, 0, 0, 0};
    int64_t slots[4] = {6, -1, 2, 6};
    assert_fail(pa_ref_reshape_and_cache(&in, slots, &c), PA_ERR_INVALID_ARGUMENT, "tokens 0 and 3 both name slot 6");
    cr_assert(memcmp(kc, k0, sizeof kc) == 0 && memcmp(vc, k0, sizeof vc) == 0, "written despite the error");
    slots[3] = -1; /* two padding tokens */
    cr_assert_eq(pa_ref_reshape_and_cache(&in, slots, &c), PA_SUCCESS, "%s", pa_last_error());

    pa_kv_cache u;
    memset(&u, 0, sizeof u);
    u.layout = PA_LAYOUT_COMBINED;
    u.dtype = PA_DTYPE_F32;
    u.num_blocks = 2;
    u.block_size = 4;
    u.num_kv_heads = 1;
    u.head_size = 4;
    float cache[2 * 4 * 2 * 4], nkv[8 * 8];
    for (int i = 0; i < 64; i++)
        nkv[i] = (float)i;
    memset(cache, SENTINEL, sizeof cache);
    unsigned char c0[sizeof cache];
    memcpy(c0, cache, sizeof cache);
    u.key = cache;
    /* [kv_cache_start, new_kv_start, len] by slice: rows 4..7, 0..3 touch; slice 2 (rows 2..4) meets both */
    int32_t sl[3][4] = {{4, 0, 2, 7}, {0, 4, 0, 0}, {4, 4, 3, 0}}, n = 3;
    assert_fail(pa_ref_kv_cache_update(nkv, PA_DTYPE_F32, 8, 0, &sl[0][0], &n, 4, &u), PA_ERR_INVALID_ARGUMENT,
                "slices 1 and 2 write a cache row in common");
    cr_assert(memcmp(cache, c0, sizeof cache) == 0, "written despite the error");
    sl[2][2] = 0; /* slice 2 is padding */
    sl[2][3] = 1; /* slice 3 (row 7, slice 0's last) is past num_slices: not looked at */
    cr_assert_eq(pa_ref_kv_cache_update(nkv, PA_DTYPE_F32, 8, 0, &sl[0][0], &n, 4, &u), PA_SUCCESS, "%s",
                 pa_last_error());
    sl[0][2] = 1; /* slice 2 live again at rows 1..3, inside slice 1's rows 0..3 */
    sl[2][2] = 3;
    memcpy(cache, c0, sizeof cache);
    assert_fail(pa_ref_kv_cache_update(nkv, PA_DTYPE_F32, 8, 0, &sl[0][0], &n, 4, &u), PA_ERR_INVALID_ARGUMENT,
                "slices 1 and 2");
    cr_assert(memcmp(cache, c0, sizeof cache) == 0, "written despite the error");

    enum { NB = 6, NUMEL = 4 };
    float k[NB * NUMEL], kk[NB * NUMEL];
    for (int i = 0; i < NB * NUMEL; i++)
        k[i] = (float)i;
    memcpy(kk, k, sizeof k);
    void *kcs[1] = {k};
    const int64_t twice[][2] = {{0, 4}, {1, 2}, {-1, 4}, {3, 4}};
    assert_fail(pa_ref_copy_blocks(kcs, NULL, 1, &twice[0][0], 4, NUMEL, PA_DTYPE_F32, NB), PA_ERR_INVALID_ARGUMENT,
                "block_mapping[0] and [3] both name destination 4");
    cr_assert(memcmp(k, kk, sizeof k) == 0, "copied despite the error");
    const int64_t padded[][2] = {{0, 4}, {1, 2}, {3, -1}, {-1, 4}}; /* padding pairs name 4 too */
    cr_assert_eq(pa_ref_copy_blocks(kcs, NULL, 1, &padded[0][0], 4, NUMEL, PA_DTYPE_F32, NB), PA_SUCCESS, "%s",
                 pa_last_error());
    cr_assert(k[4 * NUMEL] == kk[0] && k[2 * NUMEL] == kk[1 * NUMEL]);
}

/* The cache ops' refusals no other test reached (scripts/refusal-coverage.py),
 * each with its own message and nothing written: swap and copy counts and
 * buffers, the run planner's arguments (reshape_and_cache's and
 * kv_cache_update's: their *_bad_input tests). */
Test(cache_ref, each_cache_op_refusal_names_its_argument) {
    /* swap_blocks */
    unsigned char src[4 * 16], dst[4 * 16], d0[sizeof dst];
    memset(src, 1, sizeof src);
    memset(dst, 2, sizeof dst);
    memcpy(d0, dst, sizeof dst);
    const int64_t map[2][2] = {{0, 1}, {2, 3}};
    assert_fail(pa_ref_swap_blocks(dst, src, 16, &map[0][0], -1, 4, 4), PA_ERR_INVALID_ARGUMENT,
                "swap_blocks: num_pairs must be >= 0 (got -1)");
    assert_fail(pa_ref_swap_blocks(dst, NULL, 16, &map[0][0], 2, 4, 4), PA_ERR_INVALID_ARGUMENT,
                "swap_blocks: src is NULL");
    assert_fail(pa_ref_swap_blocks(dst, src, 16, NULL, 2, 4, 4), PA_ERR_INVALID_ARGUMENT,
                "swap_blocks: block_mapping is NULL");
    assert_fail(pa_ref_swap_blocks(dst, src, 16, &map[0][0], 2, 4, 0), PA_ERR_INVALID_ARGUMENT,
                "swap_blocks: dst_num_blocks 0 invalid");
    /* 2^60 blocks of 16 bytes: 2^64 bytes */
    assert_fail(pa_ref_swap_blocks(dst, src, 16, &map[0][0], 2, 4, (int64_t)1 << 60), PA_ERR_INVALID_ARGUMENT,
                "swap_blocks: dst_num_blocks 1152921504606846976 invalid");
    cr_assert(memcmp(dst, d0, sizeof dst) == 0, "written despite the error");

    /* copy_blocks */
    void *layers[1] = {dst};
    assert_fail(pa_ref_copy_blocks(layers, NULL, 1, &map[0][0], -1, 16, PA_DTYPE_FP8_E4M3, 4), PA_ERR_INVALID_ARGUMENT,
                "copy_blocks: num_pairs -1 out of range [0, 2^31)");
    assert_fail(pa_ref_copy_blocks(layers, NULL, 1, &map[0][0], (int64_t)INT32_MAX + 1, 16, PA_DTYPE_FP8_E4M3, 4),
                PA_ERR_INVALID_ARGUMENT, "copy_blocks: num_pairs 2147483648 out of range [0, 2^31)");
    assert_fail(pa_ref_copy_blocks(layers, NULL, 1, &map[0][0], 2, 16, PA_DTYPE_FP8_E4M3, 0), PA_ERR_INVALID_ARGUMENT,
                "copy_blocks: num_blocks 0 invalid");
    /* 16 elements a block, counted at 8 bytes each, over 2^58 blocks: 2^65 bytes */
    assert_fail(pa_ref_copy_blocks(layers, NULL, 1, &map[0][0], 2, 16, PA_DTYPE_FP8_E4M3, (int64_t)1 << 58),
                PA_ERR_INVALID_ARGUMENT,
                "copy_blocks: num_blocks 288230376151711744 invalid (must be > 0, num_blocks x numel_per_block x 8 "
                "within int64)");
    void *null_layer[1] = {NULL}, *vlayers[1] = {src}, *null_v[1] = {NULL};
    assert_fail(pa_ref_copy_blocks(null_layer, vlayers, 1, &map[0][0], 2, 16, PA_DTYPE_FP8_E4M3, 4),
                PA_ERR_INVALID_ARGUMENT, "copy_blocks: key_caches[0] is NULL");
    assert_fail(pa_ref_copy_blocks(layers, null_v, 1, &map[0][0], 2, 16, PA_DTYPE_FP8_E4M3, 4), PA_ERR_INVALID_ARGUMENT,
                "copy_blocks: value_caches[0] is NULL");
    cr_assert(memcmp(dst, d0, sizeof dst) == 0, "written despite the error");

    /* the run planner */
    pa_block_run runs[4];
    int64_t nr = -7;
    assert_fail(pa_swap_plan_runs(&map[0][0], -2, runs, 4, &nr), PA_ERR_INVALID_ARGUMENT,
                "swap_plan_runs: num_pairs must be >= 0 (got -2)");
    assert_fail(pa_swap_plan_runs(&map[0][0], 2, runs, -4, &nr), PA_ERR_INVALID_ARGUMENT,
                "swap_plan_runs: max_runs must be >= 0 (got -4)");
    assert_fail(pa_swap_plan_runs(&map[0][0], 2, runs, 4, NULL), PA_ERR_INVALID_ARGUMENT,
                "swap_plan_runs: num_runs is NULL");
    cr_assert_eq(nr, -7);
}

/* Key and value views of one buffer, the value view starting below the key
 * view (value - key < 0, not a whole number of blocks). NHD f32, 2 blocks of 1
 * slot of 1 head of 4 floats, blocks 16 floats apart (padded). Value blocks
 * cover floats [0, 4) and [16, 20); key 15 floats on covers [15, 19) and
 * [31, 35): value block 1 and key block 0 share floats 16..18, refused. Key 12
 * floats on covers [12, 16) and [28, 32): no float shared, accepted, and each
 * token lands where the layout puts it. (A pass that rounded value - key
 * towards zero, not down, looked at the wrong pair of blocks and took the
 * first.) */
Test(cache_ref, value_view_below_its_key_view) {
    static float buf[64], before[64];
    const float key[8] = {1, 2, 3, 4, 5, 6, 7, 8}, val[8] = {-1, -2, -3, -4, -5, -6, -7, -8};
    const int64_t slots[2] = {0, 1};
    const pa_kv_input in = {key, val, PA_DTYPE_F32, 2, 0, 0, 0, 0};
    for (int i = 0; i < 64; i++)
        buf[i] = (float)(1000 + i);
    memcpy(before, buf, sizeof buf);
    pa_kv_cache c = {.layout = PA_LAYOUT_FLASH_NHD,
                     .dtype = PA_DTYPE_F32,
                     .key = buf + 15,
                     .value = buf,
                     .num_blocks = 2,
                     .block_size = 1,
                     .num_kv_heads = 1,
                     .head_size = 4,
                     .block_stride = 16};
    assert_fail(pa_ref_reshape_and_cache(&in, slots, &c), PA_ERR_INVALID_ARGUMENT, "share bytes");
    cr_assert(memcmp(buf, before, sizeof buf) == 0, "written despite the error");
    c.key = buf + 12;
    cr_assert_eq(pa_ref_reshape_and_cache(&in, slots, &c), PA_SUCCESS, "%s", pa_last_error());
    for (int d = 0; d < 4; d++) {
        cr_assert_eq(buf[12 + d], key[d]);
        cr_assert_eq(buf[28 + d], key[4 + d]);
        cr_assert_eq(buf[0 + d], val[d]);
        cr_assert_eq(buf[16 + d], val[4 + d]);
    }
}

/* The launchers' int arithmetic takes a token's row of up to 2^24 elements
 * (cache_ops.h): 65536 KV heads of 256 is the largest, taken; one head more
 * is refused (zero tokens: only the shapes are looked at, no pointer is
 * read). */
Test(cache_ref, rows_of_2_24_elements_are_the_largest) {
    pa_kv_cache c = {.layout = PA_LAYOUT_FLASH_NHD,
                     .dtype = PA_DTYPE_F16,
                     .key = pa_test_addr(1),
                     .value = pa_test_addr(2),
                     .num_blocks = 1,
                     .block_size = 1,
                     .num_kv_heads = 65536,
                     .head_size = 256};
    const pa_kv_input in = {pa_test_addr(3), pa_test_addr(4), PA_DTYPE_F16, 0, 0, 0, 0, 0};
    cr_assert_eq(pa_ref_reshape_and_cache(&in, NULL, &c), PA_SUCCESS, "%s", pa_last_error());
    c.num_kv_heads = 65537;
    assert_fail(pa_ref_reshape_and_cache(&in, NULL, &c), PA_ERR_UNSUPPORTED, "above 2^24 elements");
}

/* num_tokens is taken up to 2^31 - 1 (cache_ops.h: [0, 2^31)); validation
 * alone (the views and slots are address ranges of their own, never read). */
Test(cache_ref, num_tokens_up_to_int32_max) {
    pa_kv_cache c = {.layout = PA_LAYOUT_FLASH_NHD,
                     .dtype = PA_DTYPE_F32,
                     .key = pa_test_addr(1),
                     .value = pa_test_addr(2),
                     .num_blocks = 4,
                     .block_size = 16,
                     .num_kv_heads = 1,
                     .head_size = 8};
    pa_kv_input in = {pa_test_addr(3), pa_test_addr(4), PA_DTYPE_F32, INT32_MAX, 0, 0, 0, 0};
    const int64_t *slots = (const int64_t *)pa_test_addr(5);
    cr_assert_eq(pa_reshape_and_cache_validate(&in, slots, &c), PA_SUCCESS, "%s", pa_last_error());
    in.num_tokens = (int64_t)INT32_MAX + 1;
    assert_fail(pa_reshape_and_cache_validate(&in, slots, &c), PA_ERR_INVALID_ARGUMENT,
                "num_tokens 2147483648 out of range");
}

/* An input view's bytes are counted in the input's element size, not the
 * cache's: f32 keys (2 tokens of 16, 128 bytes) into an fp8 cache (1 block of 2
 * slots of 16, 32 bytes) whose key buffer starts 96 bytes into the keys is an
 * output over an input, refused; at 128 bytes it is apart, taken. */
Test(cache_ref, input_bytes_in_the_inputs_element_size) {
    static _Alignas(16) unsigned char arena[4096];
    float *key = (float *)arena, *val = (float *)(arena + 1024);
    for (int i = 0; i < 32; i++)
        key[i] = val[i] = 0.5f;
    pa_kv_cache c = {.layout = PA_LAYOUT_FLASH_NHD,
                     .dtype = PA_DTYPE_FP8_E4M3,
                     .key = arena + 96,
                     .value = arena + 2048,
                     .num_blocks = 1,
                     .block_size = 2,
                     .num_kv_heads = 1,
                     .head_size = 16};
    const pa_kv_input in = {key, val, PA_DTYPE_F32, 2, 0, 0, 0, 0};
    const int64_t slots[2] = {0, 1};
    assert_fail(pa_ref_reshape_and_cache(&in, slots, &c), PA_ERR_INVALID_ARGUMENT,
                "output cache.key overlaps the input key");
    c.key = arena + 128;
    cr_assert_eq(pa_ref_reshape_and_cache(&in, slots, &c), PA_SUCCESS, "%s", pa_last_error());
}

/* kv_cache_update's new_kv rows hold K and V of every KV head (2 x 1 x 8 = 16
 * elements here): the last row's end, (num_tokens - 1) * stride + 16, must fit
 * in int64. Stride 2^63 - 17 ends exactly at 2^63 - 1: taken (one slice reads
 * token 0 into row 5 of [2 pages][4 rows]); 2^63 - 16 passes it by one: refused,
 * though half a row (8) would still fit. The cache lies below new_kv (whose
 * range runs to the end of the address space). */
Test(cache_ref, kv_cache_update_extent_counts_the_whole_row) {
    static float arena[128 + 16];
    float *cc = arena, *nkv = arena + 128;
    for (int i = 0; i < 16; i++)
        nkv[i] = (float)(100 + i);
    memset(cc, SENTINEL, 128 * sizeof(float));
    float cw[128];
    memcpy(cw, cc, sizeof cw);
    for (int i = 0; i < 16; i++)
        cw[5 * 16 + i] = nkv[i];
    pa_kv_cache cb = {.layout = PA_LAYOUT_COMBINED,
                      .dtype = PA_DTYPE_F32,
                      .key = cc,
                      .num_blocks = 2,
                      .block_size = 4,
                      .num_kv_heads = 1,
                      .head_size = 8};
    const int32_t sl[3] = {5, 0, 1}, live = 1;
    assert_fail(pa_ref_kv_cache_update(nkv, PA_DTYPE_F32, 2, INT64_MAX - 15, sl, &live, 1, &cb),
                PA_ERR_INVALID_ARGUMENT, "token stride");
    cr_assert(memcmp(cc, cw, 5 * 16 * sizeof(float)) == 0 && cc[5 * 16] != nkv[0], "written despite the error");
    cr_assert_eq(pa_ref_kv_cache_update(nkv, PA_DTYPE_F32, 2, INT64_MAX - 16, sl, &live, 1, &cb), PA_SUCCESS, "%s",
                 pa_last_error());
    cr_assert(memcmp(cc, cw, sizeof cw) == 0, "wrong cache contents");
}

/* swap_blocks sizes each buffer by its own block count: src's bytes within
 * int64 (2^60 blocks of 16 bytes are 2^64), and a src inside dst's blocks past
 * src's count (dst 4 blocks of 16 bytes, src 1 block 32 bytes into it) is an
 * overlap. copy_blocks takes num_pairs up to 2^31 - 1 and num_layers up to
 * 65535 (validation alone: nothing read). */
Test(cache_ref, swap_and_copy_bounds_by_each_count) {
    static unsigned char buf[4 * 16], src[4 * 16];
    memset(buf, 2, sizeof buf);
    memset(src, 1, sizeof src);
    const int64_t map[2][2] = {{0, 1}, {2, 3}};
    assert_fail(pa_ref_swap_blocks(buf, src, 16, &map[0][0], 2, (int64_t)1 << 60, 4), PA_ERR_INVALID_ARGUMENT,
                "swap_blocks: src_num_blocks 1152921504606846976 invalid");
    const int64_t one[1][2] = {{0, 0}};
    assert_fail(pa_ref_swap_blocks(buf, buf + 32, 16, &one[0][0], 1, 1, 4), PA_ERR_INVALID_ARGUMENT, "overlap");
    for (int i = 0; i < (int)sizeof buf; i++)
        cr_assert_eq(buf[i], 2, "written despite the error");

    const void *layers = pa_test_addr(1), *mapping = pa_test_addr(2);
    cr_assert_eq(pa_copy_blocks_validate(layers, 1, mapping, INT32_MAX, 16, PA_DTYPE_F16, 8), PA_SUCCESS, "%s",
                 pa_last_error());
    cr_assert_eq(pa_copy_blocks_validate(layers, 65535, mapping, 2, 16, PA_DTYPE_F16, 8), PA_SUCCESS, "%s",
                 pa_last_error());
    assert_fail(pa_copy_blocks_validate(layers, 65536, mapping, 2, 16, PA_DTYPE_F16, 8), PA_ERR_UNSUPPORTED,
                "num_layers 65536 above the grid limit 65535");
}
