/* Cache kernels against their CPU references (tests/host/test_cache_ref.c checks
 * the references against independent index formulas). Byte equality everywhere,
 * fp8 included (same conversion); caches pre-filled with a sentinel and compared
 * whole. Each GPU test skips without a device; the bad-input tests run anywhere
 * because validation happens before any CUDA call. */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "cache_grid.h"

static void *sentinel_host(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    cr_assert(p != NULL);
    memset(p, SENTINEL, bytes);
    return p;
}

static void assert_fail(pa_status got, pa_status want, const char *substr) {
    cr_assert_eq(got, want, "status %d, want %d (%s)", got, want, pa_last_error());
    cr_assert(strstr(pa_last_error(), substr) != NULL, "message '%s' lacks '%s'", pa_last_error(), substr);
}

static void assert_same(const void *got, const void *want, size_t bytes, const char *what) {
    if (memcmp(got, want, bytes) == 0)
        return;
    const unsigned char *g = got, *w = want;
    size_t i = 0;
    while (g[i] == w[i])
        i++;
    cr_assert_fail("%s: first differing byte %zu of %zu: device 0x%02x reference 0x%02x", what, i, bytes, g[i], w[i]);
}

/* Bytes of the key and value buffers of cache c (its layout, dtype and sizes set;
 * value 0 for the combined layout), from pa_kv_cache_elements. */
static void cache_bytes(pa_kv_cache *c, size_t *kb, size_t *vb) {
    int64_t ke = 0, ve = 0;
    c->key = c->value = c; /* placeholders for the size query */
    if (c->layout == PA_LAYOUT_COMBINED)
        c->value = NULL;
    cr_assert_eq(pa_kv_cache_elements(c, &ke, &ve), PA_SUCCESS, "%s", pa_last_error());
    const size_t es = pa_dtype_size(c->dtype);
    *kb = (size_t)ke * es;
    *vb = (size_t)ve * es;
}

/* Set by cache_ops/cache_offsets_past_32_bits: the helpers below put the
 * device cache (the device side of a swap, copy_blocks' layers) at the end of
 * a buffer whose first lead blocks, past 2^31 elements and 2^32 bytes, are
 * never written (pa_test_dev_upload_far), name block b as lead + b on the
 * device (slots lead x block_size further on, slices' cache rows likewise),
 * and compare the blocks after the lead with the reference's, which runs on
 * the cache as made. */
static int g_far;

/* Set by cache_ops/fp8_scales_per_head: fp8 caches get a k_scale and a
 * v_scale per KV head (scales_per_head; pa_test_head_scales from the case's
 * one of each), host and device alike. */
static int g_head_scales;

/* Set by cache_ops/fp8_codes_next_to_midpoints: f32 inputs whose quotients by
 * this k_scale and v_scale (both) lie next to midpoints between codes of the
 * case's fp8 cache dtype (pa_test_fp8_midpoint_inputs, cycled through the
 * input buffers), in place of random values. */
static float g_mid_scale;

static void fill_midpoints(pa_dtype in, pa_dtype cache, void *buf, size_t n) {
    enum { CAP = 2 * 127 * 21 };
    static float mids[CAP];
    cr_assert(in == PA_DTYPE_F32 && pa_dtype_is_fp8(cache), "midpoint inputs are f32 into an fp8 cache");
    const int64_t m = pa_test_fp8_midpoint_inputs(cache, g_mid_scale, 10, mids, CAP);
    cr_assert(m > 0);
    for (size_t i = 0; i < n; i++)
        ((float *)buf)[i] = mids[(int64_t)i % m];
}

/* The case's k_scale and v_scale (k, v) as g_head_scales wants them: out[0..n)
 * the keys', out[n..2n) the values', n = nh or 1 (returned). */
static int case_scales(float k, float v, int nh, float *out) {
    const int n = g_head_scales ? nh : 1;
    pa_test_head_scales(k, n, 0, out);
    pa_test_head_scales(v, n, 3, out + n);
    if (!g_head_scales)
        out[0] = k, out[1] = v;
    return n;
}

/* 0..n-1 in a random order (Fisher-Yates), malloc'd. */
static int *shuffled_indices(pa_rng *r, int n) {
    int *a = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    for (int k = 0; k < n; k++)
        a[k] = k;
    for (int k = n - 1; k > 0; k--) {
        const int j = pa_rng_int(r, 0, k), t = a[k];
        a[k] = a[j];
        a[j] = t;
    }
    return a;
}

/* Prefill-like slots (`runs`): three sequences of RUN_LENS new tokens after
 * RUN_CTX cached ones, each token at its position's place in the block its
 * block-table row names (rows of distinct blocks, reversed and scattered by a
 * stride coprime with num_blocks); one token of the first is padding (-1). */
static const int64_t RUN_LENS[3] = {45, 1, 54}, RUN_CTX[3] = {5, 0, 13};

static int64_t run_blocks(int bs) {
    int64_t n = 0;
    for (int k = 0; k < 3; k++)
        n += (RUN_CTX[k] + RUN_LENS[k] + bs - 1) / bs;
    return n;
}

static void run_slots(int64_t *slots, int bs, int64_t num_blocks) {
    int64_t t = 0, next = 0;
    for (int k = 0; k < 3; k++) {
        const int64_t first = next; /* this sequence's table row: blocks first.. in a scrambled order */
        const int64_t nb = (RUN_CTX[k] + RUN_LENS[k] + bs - 1) / bs;
        next += nb;
        for (int64_t i = 0; i < RUN_LENS[k]; i++, t++) {
            const int64_t pos = RUN_CTX[k] + i, lb = pos / bs;
            const int64_t phys = (first + nb - 1 - lb) * 7 % num_blocks; /* 7 is coprime with num_blocks */
            slots[t] = phys * bs + pos % bs;
        }
    }
    slots[20] = -1;
    for (int64_t a = 0; a < t; a++) /* distinct places, so the writes' order cannot matter */
        for (int64_t b = a + 1; b < t; b++)
            cr_assert(slots[a] < 0 || slots[a] != slots[b], "run_slots: slot %lld twice", (long long)slots[a]);
}

/* Slots a caller drew: T of them over a cache of num_blocks blocks. */
typedef struct given_slots {
    const int64_t *slots;
    int64_t T;
    int32_t num_blocks;
} given_slots;

/* variant bit 0: strided flash cache, padded input heads, and values from a
 * buffer of their own whose strides differ from the keys'; bit 1: input views
 * misaligned by one element (forces the scalar load path). runs: prefill-like
 * slots (run_slots) for 100 tokens, else 29 scattered ones; given (not NULL):
 * its slots. */
/* The entries' launches through pa_test_launch (eagerly, or under pa_test_graph
 * from a CUDA graph). */
typedef struct rc_launch {
    const pa_kv_input *in;
    const int64_t *slots;
    const pa_kv_cache *cache;
} rc_launch;
static pa_status rc_run(void *ctx, pa_stream s) {
    const rc_launch *a = ctx;
    return pa_reshape_and_cache(a->in, a->slots, a->cache, s);
}
typedef struct kvu_launch {
    const void *src;
    pa_dtype dtype;
    int64_t T, stride;
    const int32_t *slices, *count;
    int32_t max_slices;
    const pa_kv_cache *cache;
} kvu_launch;
static pa_status kvu_run(void *ctx, pa_stream s) {
    const kvu_launch *a = ctx;
    return pa_kv_cache_update(a->src, a->dtype, a->T, a->stride, a->slices, a->count, a->max_slices, a->cache, s);
}
typedef struct cb_launch {
    const uint64_t *keys, *values;
    int layers;
    const int64_t *map;
    int pairs;
    int64_t numel;
    pa_dtype dtype;
    int64_t blocks;
} cb_launch;
static pa_status cb_run(void *ctx, pa_stream s) {
    const cb_launch *a = ctx;
    return pa_copy_blocks(a->keys, a->values, a->layers, a->map, a->pairs, a->numel, a->dtype, a->blocks, s);
}

static void gpu_rc_case_given(pa_kv_layout layout, dt_pair dp, int hs, int bs, int nh, int variant, uint64_t seed,
                              int runs, const given_slots *given) {
    const int strided = variant & 1, misalign = (variant >> 1) & 1;
    pa_kv_cache c;
    memset(&c, 0, sizeof c);
    c.layout = layout;
    c.dtype = dp.cache;
    c.block_size = bs;
    c.num_kv_heads = nh;
    c.head_size = hs;
    const int64_t T = given ? given->T : runs ? 100 : 29;
    c.num_blocks = (int32_t)(given ? given->num_blocks : runs ? run_blocks(bs) + 2 : (T + bs - 1) / bs + 2);
    if (!given && runs && c.num_blocks % 7 == 0)
        c.num_blocks++;
    if (strided)
        cache_grid_flash_strides(layout, bs, nh, hs, 1, &c.block_stride, &c.page_stride, &c.head_stride);
    if (layout == PA_LAYOUT_VLLM && hs % (int)(16 / pa_dtype_size(dp.cache)) != 0)
        return; /* not representable in this layout */
    size_t kb, vb;
    cache_bytes(&c, &kb, &vb);
    const size_t es = pa_dtype_size(dp.cache);
    /* far: contiguous blocks of the key buffer's size (vLLM's value blocks are as large) */
    cr_assert(!g_far || (!strided && kb % (size_t)c.num_blocks == 0), "far caches: contiguous blocks");
    const size_t blk_bytes = kb / (size_t)c.num_blocks;
    const int64_t lead = g_far ? pa_test_far_lead(blk_bytes, es) : 0;

    pa_rng r = pa_rng_make(seed);
    const int64_t hstride = hs + (strided ? 16 : 0), nq = 4;
    const int64_t row = (nq + 2 * nh) * hstride + (strided ? 8 : 0);
    const size_t is = pa_dtype_size(dp.in), qkv_elems = (size_t)(T * row + 1);
    void *qkv = pa_test_random_buffer(&r, dp.in, qkv_elems, -3.0f, 3.0f);
    if (g_mid_scale > 0)
        fill_midpoints(dp.in, dp.cache, qkv, qkv_elems);
    void *dqkv = pa_test_dev_upload(qkv, qkv_elems * is);
    /* Keys: the K part of a fused qkv row. Values (even variants): its V part, with
     * the keys' strides; odd variants: a buffer of their own whose token and head
     * strides differ from the keys' (by multiples of 8 elements, so a variant's
     * 16-byte alignment is the keys'), so a kernel that takes one's stride for the
     * other reads the wrong rows. */
    const int own_v = variant & 1;
    const int64_t vhstride = own_v ? hstride + 8 : hstride, vrow = own_v ? nh * vhstride + 24 : row;
    const size_t v_elems = own_v ? (size_t)(T * vrow + 1) : 0;
    void *vbuf = own_v ? pa_test_random_buffer(&r, dp.in, v_elems, -3.0f, 3.0f) : NULL;
    if (vbuf && g_mid_scale > 0)
        fill_midpoints(dp.in, dp.cache, vbuf, v_elems);
    void *dvbuf = own_v ? pa_test_dev_upload(vbuf, v_elems * is) : NULL;
    const size_t koff = (size_t)(nq * hstride + misalign) * is,
                 voff = own_v ? (size_t)misalign * is : (size_t)((nq + nh) * hstride + misalign) * is;

    const int64_t nslots = (int64_t)c.num_blocks * bs;
    int64_t *slots = malloc(sizeof(int64_t) * (size_t)T + 1);
    if (given)
        memcpy(slots, given->slots, sizeof(int64_t) * (size_t)T);
    else if (runs)
        run_slots(slots, bs, c.num_blocks);
    else
        for (int64_t t = 0; t < T; t++) /* distinct: a stride coprime with nslots, every 7th padding */
            slots[t] = (t % 7 == 5) ? -1 : (t * 37 + 11) % nslots;
    int64_t *dslots;
    {
        int64_t *sd = malloc(sizeof(int64_t) * (size_t)T + 1);
        for (int64_t t = 0; t < T; t++)
            sd[t] = slots[t] >= 0 ? slots[t] + lead * bs : slots[t];
        dslots = pa_test_dev_upload(sd, sizeof(int64_t) * (size_t)T);
        free(sd);
    }

    float scales[2 * 64];
    cr_assert(nh <= 64 || !g_head_scales);
    const int nsc =
        g_mid_scale > 0 ? case_scales(g_mid_scale, g_mid_scale, nh, scales) : case_scales(0.043f, 0.061f, nh, scales);
    float *dscales = pa_test_dev_upload(scales, sizeof(float) * 2 * (size_t)nsc);

    pa_kv_cache ch = c, cd = c;
    ch.key = sentinel_host(kb);
    ch.value = vb ? sentinel_host(vb) : NULL;
    if (lead) {
        cd.key = pa_test_dev_upload_far(ch.key, kb, blk_bytes, lead);
        cd.value = vb ? pa_test_dev_upload_far(ch.value, vb, blk_bytes, lead) : NULL;
        cd.num_blocks = (int32_t)(c.num_blocks + lead);
    } else {
        cd.key = pa_test_dev_upload(ch.key, kb);
        cd.value = vb ? pa_test_dev_upload(ch.value, vb) : NULL;
    }
    if (pa_dtype_is_fp8(dp.cache)) {
        ch.k_scale = &scales[0];
        ch.v_scale = &scales[nsc];
        cd.k_scale = &dscales[0];
        cd.v_scale = &dscales[nsc];
        ch.scales_per_head = cd.scales_per_head = g_head_scales;
    }
    pa_kv_input ih = {(char *)qkv + koff, (char *)(own_v ? vbuf : qkv) + voff, dp.in, T, row, hstride, vrow, vhstride};
    pa_kv_input id = ih;
    id.key = (char *)dqkv + koff;
    id.value = (char *)(own_v ? dvbuf : dqkv) + voff;

    cr_assert_eq(pa_ref_reshape_and_cache(&ih, slots, &ch), PA_SUCCESS, "%s", pa_last_error());
    const rc_launch rl = {&id, dslots, &cd};
    cr_assert_eq(pa_test_launch(rc_run, (void *)&rl), PA_SUCCESS, "%s", pa_last_error());
    pa_test_dev_sync();
    char what[160];
    snprintf(what, sizeof what, "%s %s->%s hs %d bs %d nh %d variant %d%s%s%s", pa_kv_layout_name(layout),
             pa_dtype_name(dp.in), pa_dtype_name(dp.cache), hs, bs, nh, variant,
             given  ? " given slots"
             : runs ? " runs"
                    : "",
             lead ? " far blocks" : "", g_head_scales ? " scales per KV head" : "");
    void *got = malloc(kb > vb ? kb : vb);
    const size_t skip = (size_t)lead * blk_bytes;
    pa_test_dev_download(got, (char *)cd.key + skip, kb);
    assert_same(got, ch.key, kb, what);
    if (vb) {
        pa_test_dev_download(got, (char *)cd.value + skip, vb);
        assert_same(got, ch.value, vb, what);
    }
    free(got);
    free(qkv);
    free(vbuf);
    free(slots);
    free(ch.key);
    free(ch.value);
    pa_test_dev_free(dqkv);
    if (dvbuf)
        pa_test_dev_free(dvbuf);
    pa_test_dev_free(dslots);
    pa_test_dev_free(dscales);
    pa_test_dev_free(cd.key);
    if (cd.value)
        pa_test_dev_free(cd.value);
}

static void gpu_rc_case_slots(pa_kv_layout layout, dt_pair dp, int hs, int bs, int nh, int variant, uint64_t seed,
                              int runs) {
    gpu_rc_case_given(layout, dp, hs, bs, nh, variant, seed, runs, NULL);
}

static void gpu_rc_case(pa_kv_layout layout, dt_pair dp, int hs, int bs, int nh, int variant, uint64_t seed) {
    gpu_rc_case_slots(layout, dp, hs, bs, nh, variant, seed, 0);
}

static void gpu_rc_grid(pa_kv_layout layout) {
    int i = 0;
    for (int p = 0; p < NPAIRS; p++)
        for (int h = 0; h < 4; h++, i++)
            gpu_rc_case(layout, pairs[p], head_sizes[h], block_sizes[i % 3], kv_heads[(i / 3 + h) % 3], i % 4,
                        3000 + (uint64_t)i);
}

Test(cache_ops, reshape_and_cache_vllm) {
    PA_SKIP_WITHOUT_GPU();
    gpu_rc_grid(PA_LAYOUT_VLLM);
}
Test(cache_ops, reshape_and_cache_nhd) {
    PA_SKIP_WITHOUT_GPU();
    gpu_rc_grid(PA_LAYOUT_FLASH_NHD);
}
Test(cache_ops, reshape_and_cache_hnd) {
    PA_SKIP_WITHOUT_GPU();
    gpu_rc_grid(PA_LAYOUT_FLASH_HND);
}
Test(cache_ops, write_to_kv_cache_combined) {
    PA_SKIP_WITHOUT_GPU();
    gpu_rc_grid(PA_LAYOUT_COMBINED);
}
/* fp8 codes decided by the last bit of a quotient: f32 keys and values whose
 * quotients by the scale lie a few steps either side of midpoints between fp8
 * codes (g_mid_scale), into both fp8 dtypes over every layout, vLLM's through
 * both of its kernels (aligned rows: tokens through shared memory; rows off by
 * one element: token by token), prefill-like runs of slots. The cache bytes
 * must equal the reference's, which divides by the scale. A cache write that
 * multiplied by the scale's reciprocal passed every other cache-op test. */
Test(cache_ops, fp8_codes_next_to_midpoints) {
    PA_SKIP_WITHOUT_GPU();
    static const pa_kv_layout layouts[] = {PA_LAYOUT_VLLM, PA_LAYOUT_FLASH_NHD, PA_LAYOUT_FLASH_HND,
                                           PA_LAYOUT_COMBINED};
    static const pa_dtype caches[] = {PA_DTYPE_FP8_E4M3, PA_DTYPE_FP8_E5M2};
    g_mid_scale = 0.37f;
    for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
        for (size_t c = 0; c < sizeof caches / sizeof caches[0]; c++)
            for (int variant = 0; variant <= 2; variant += 2) /* aligned; misaligned by one element */
                gpu_rc_case_slots(layouts[l], (dt_pair){PA_DTYPE_F32, caches[c]}, 128, 16, 4, variant,
                                  700 + (uint64_t)(l * 4 + c * 2 + (size_t)variant), 1);
    g_mid_scale = 0;
}

Test(cache_ops, reshape_and_cache_odd_head_sizes) {
    PA_SKIP_WITHOUT_GPU();
    gpu_rc_case(PA_LAYOUT_FLASH_NHD, pairs[1], 100, 16, 3, 1, 11);
    gpu_rc_case(PA_LAYOUT_FLASH_HND, pairs[3], 36, 8, 2, 2, 12);
    gpu_rc_case(PA_LAYOUT_COMBINED, pairs[2], 72, 32, 5, 3, 13);
    gpu_rc_case(PA_LAYOUT_VLLM, pairs[0], 4, 8, 2, 0, 14);
}

/* More KV heads than a grid's y dimension takes (65535). The vLLM layout's
 * shared-memory kernel runs a CTA per KV head along y, so at 65536 heads
 * reshape_and_cache must take the per-token kernel instead, and at 65535 it
 * still takes its own (interpret mode refuses a grid past the device's limits,
 * as the hardware does). 16-bit and fp8 caches; the 65535-head case, one path
 * over other numbers, stays out of the race suites. */
Test(cache_ops, reshape_and_cache_past_65535_kv_heads, .timeout = 600) {
    PA_SKIP_WITHOUT_GPU();
    gpu_rc_case(PA_LAYOUT_VLLM, pairs[1], 8, 16, 65536, 0, 21);
    gpu_rc_case(PA_LAYOUT_VLLM, pairs[4], 16, 16, 65536, 0, 22);
    if (!pa_test_races_only())
        gpu_rc_case(PA_LAYOUT_VLLM, pairs[1], 8, 16, 65535, 0, 23);
}

/* A chunked prefill's slots: runs of consecutive places across blocks, more
 * tokens than one CTA of the vLLM layout's kernel takes (32), the last CTA
 * partial, one padding token. Every layout and dtype pair. */
Test(cache_ops, reshape_and_cache_prefill_runs) {
    PA_SKIP_WITHOUT_GPU();
    const pa_kv_layout layouts[] = {PA_LAYOUT_VLLM, PA_LAYOUT_FLASH_NHD, PA_LAYOUT_FLASH_HND, PA_LAYOUT_COMBINED};
    int i = 0;
    for (int l = 0; l < 4; l++)
        for (int p = 0; p < NPAIRS; p++, i++)
            gpu_rc_case_slots(layouts[l], pairs[p], head_sizes[i % 4], block_sizes[i % 3], 1 + i % 3, i % 2,
                              5000 + (uint64_t)i, 1);
}

/* Random configurations (tests/common/testutil.h): layout, dtype pair, head
 * size, block size (any), KV heads, strided and misaligned views, and a
 * batch's slots: sequences of drawn contexts and new-token runs over blocks
 * dealt from a shuffled pool, so runs start and end anywhere in a block and
 * cross blocks, with padding slots (-1) among them. Byte for byte against the
 * reference, caches compared whole. CI draws 24 from seed 1. */
Test(cache_ops, reshape_and_cache_random_configurations, .timeout = 600) {
    PA_SKIP_WITHOUT_GPU();
    uint64_t seed;
    int first;
    const int n = pa_test_random_begin("cache_ops/reshape_and_cache_random_configurations", 24, &seed, &first);
    static const pa_kv_layout layouts[4] = {PA_LAYOUT_VLLM, PA_LAYOUT_FLASH_NHD, PA_LAYOUT_FLASH_HND,
                                            PA_LAYOUT_COMBINED};
    static const int bsz[8] = {16, 32, 8, 1, 3, 24, 64, 128};
    for (int i = first; i < first + n; i++) {
        pa_rng r = pa_test_random_rng(seed, i);
        const pa_kv_layout layout = layouts[pa_rng_int(&r, 0, 3)];
        const dt_pair dp = pairs[pa_rng_int(&r, 0, NPAIRS - 1)];
        const int x = (int)(16 / pa_dtype_size(dp.cache)); /* vLLM's keys: whole 16-byte chunks */
        const int hs = pa_rng_int(&r, 0, 1)       ? head_sizes[pa_rng_int(&r, 0, 3)]
                       : layout == PA_LAYOUT_VLLM ? x * pa_rng_int(&r, 1, 256 / x)
                                                  : pa_rng_int(&r, 1, 256);
        const int bs = bsz[pa_rng_int(&r, 0, 7)], nh = pa_rng_int(&r, 1, 12);
        const int variant = pa_rng_int(&r, 0, 3);
        /* the batch: up to 6 sequences, each ctx cached tokens then len new ones */
        const int ns = pa_rng_int(&r, 1, 6);
        int ctx[6], len[6], tok[6], maxnb = 1;
        int64_t T = 0;
        for (int q = 0; q < ns; q++) {
            ctx[q] = pa_rng_int(&r, 0, 1) ? pa_rng_int(&r, 0, 3 * bs + 5) : 0;
            len[q] = pa_rng_int(&r, 0, 2) ? pa_test_shrink(pa_rng_int(&r, 1, 90)) : 1;
            tok[q] = ctx[q] + len[q];
            maxnb = (tok[q] + bs - 1) / bs > maxnb ? (tok[q] + bs - 1) / bs : maxnb;
            T += len[q];
        }
        /* the sequences' blocks dealt from a shuffled pool (problems.h) */
        const int32_t num_blocks = pa_page_pool_blocks(ns, tok, bs, pa_rng_int(&r, 0, 5));
        int32_t *table = malloc(sizeof(int32_t) * (size_t)(ns * maxnb));
        pa_page_pool_deal(&r, num_blocks, ns, tok, bs, table, maxnb, -1);
        int64_t *slots = malloc(sizeof(int64_t) * (size_t)(2 * T + 1));
        int64_t t = 0;
        for (int q = 0; q < ns; q++)
            for (int k = 0; k < len[q]; k++) {
                if (pa_rng_int(&r, 0, 19) == 0)
                    slots[t++] = -1; /* padding between a batch's tokens */
                const int pos = ctx[q] + k;
                slots[t++] = (int64_t)table[q * maxnb + pos / bs] * bs + pos % bs;
            }
        const given_slots g = {slots, t, num_blocks};
        fprintf(stderr, "  %d: %s %s->%s head %d block %d kv heads %d variant %d, %lld slots over %d blocks\n", i,
                pa_kv_layout_name(layout), pa_dtype_name(dp.in), pa_dtype_name(dp.cache), hs, bs, nh, variant,
                (long long)t, num_blocks);
        gpu_rc_case_given(layout, dp, hs, bs, nh, variant, r.s, 0, &g);
        free(slots);
        free(table);
    }
}

/* Slots the reference would reject are skipped on the device: nothing written.
 * Every layout, through each kernel that serves it (vLLM's aligned rows take the
 * shared-memory kernel, its misaligned ones and the flash and combined layouts
 * the per-token one), with the caches exactly as large as their blocks, so a
 * write at slot num_blocks * block_size (one past the end) lands outside them
 * (interpret mode's guard page, memcheck) as well as failing the comparison. */
static void rc_bad_slots_case(pa_kv_layout layout, int misalign) {
    pa_kv_cache c;
    memset(&c, 0, sizeof c);
    c.layout = layout;
    c.dtype = PA_DTYPE_F16;
    c.num_blocks = 2;
    c.block_size = 16;
    c.num_kv_heads = 2;
    c.head_size = 64;
    size_t kb, vb;
    cache_bytes(&c, &kb, &vb);
    void *s = sentinel_host(kb > vb ? kb : vb);
    c.key = pa_test_dev_upload(s, kb);
    c.value = vb ? pa_test_dev_upload(s, vb) : NULL;
    pa_rng r = pa_rng_make(5);
    const size_t elems = 5 * 2 * 64 + 1;
    void *kv = pa_test_random_buffer(&r, PA_DTYPE_F16, elems, -1, 1);
    void *dkv = pa_test_dev_upload(kv, elems * 2);
    const int64_t slots[5] = {32, -2, 1LL << 40, -1, 33}; /* 32 = num_blocks * block_size */
    int64_t *ds = pa_test_dev_upload(slots, sizeof slots);
    char *src = (char *)dkv + 2 * misalign;
    pa_kv_input in = {src, src, PA_DTYPE_F16, 5, 0, 0, 0, 0};
    cr_assert_eq(pa_reshape_and_cache(&in, ds, &c, NULL), PA_SUCCESS, "%s", pa_last_error());
    pa_test_dev_sync();
    char what[96];
    void *got = malloc(kb > vb ? kb : vb);
    snprintf(what, sizeof what, "%s key cache after bad slots%s", pa_kv_layout_name(layout),
             misalign ? " (misaligned input)" : "");
    pa_test_dev_download(got, c.key, kb);
    assert_same(got, s, kb, what);
    if (vb) {
        snprintf(what, sizeof what, "%s value cache after bad slots%s", pa_kv_layout_name(layout),
                 misalign ? " (misaligned input)" : "");
        pa_test_dev_download(got, c.value, vb);
        assert_same(got, s, vb, what);
    }
    free(got);
    free(s);
    free(kv);
    pa_test_dev_free(c.key);
    if (c.value)
        pa_test_dev_free(c.value);
    pa_test_dev_free(dkv);
    pa_test_dev_free(ds);
}

Test(cache_ops, reshape_and_cache_skips_bad_slots) {
    PA_SKIP_WITHOUT_GPU();
    static const pa_kv_layout layouts[4] = {PA_LAYOUT_VLLM, PA_LAYOUT_FLASH_NHD, PA_LAYOUT_FLASH_HND,
                                            PA_LAYOUT_COMBINED};
    for (int l = 0; l < 4; l++)
        for (int misalign = 0; misalign < 2; misalign++)
            rc_bad_slots_case(layouts[l], misalign);
}

/* ---- kv_cache_update ------------------------------------------------------------ */

/* kv_cache_update of the combined cache (nb blocks of bs rows, nh KV heads,
 * head hs; fp8 with the given scales) from T rows of random new_kv, pad
 * elements between rows and the source `misalign` elements into its
 * allocation, by the field-major slices sl ([3][np]) with `live` of them
 * live; then a replay with replay_live, as a graph would. Caches start as a
 * sentinel and are compared whole against the reference. */
static void kvu_check(pa_rng *r, dt_pair dp, int hs, int bs, int nh, int nb, int64_t T, int64_t pad, int misalign,
                      const float scales[2], const int32_t *sl, int np, int32_t live, int32_t replay_live,
                      const char *label) {
    pa_kv_cache c;
    memset(&c, 0, sizeof c);
    c.layout = PA_LAYOUT_COMBINED;
    c.dtype = dp.cache;
    c.num_blocks = nb;
    c.block_size = bs;
    c.num_kv_heads = nh;
    c.head_size = hs;
    const int64_t rowe = 2 * (int64_t)nh * hs, ts = rowe + pad;
    const size_t cb = (size_t)nb * (size_t)bs * (size_t)rowe * pa_dtype_size(dp.cache);
    const size_t is = pa_dtype_size(dp.in), ne = (size_t)(T * ts + 1);
    void *nkv = pa_test_random_buffer(r, dp.in, ne, -3, 3);
    void *dnkv = pa_test_dev_upload(nkv, ne * is);
    float hsc[2 * 64];
    cr_assert(nh <= 64 || !g_head_scales);
    const int nsc = case_scales(scales[0], scales[1], nh, hsc);
    float *dscales = pa_test_dev_upload(hsc, sizeof(float) * 2 * (size_t)nsc);
    pa_kv_cache ch = c, cd = c;
    ch.key = sentinel_host(cb);
    const size_t pg = cb / (size_t)nb; /* a page's bytes */
    const int64_t lead = g_far ? pa_test_far_lead(pg, pa_dtype_size(dp.cache)) : 0;
    const size_t skip = (size_t)lead * pg;
    if (lead) {
        cd.key = pa_test_dev_upload_far(ch.key, cb, pg, lead);
        cd.num_blocks = (int32_t)(nb + lead);
    } else {
        cd.key = pa_test_dev_upload(ch.key, cb);
    }
    if (pa_dtype_is_fp8(dp.cache)) {
        ch.k_scale = &hsc[0];
        ch.v_scale = &hsc[nsc];
        cd.k_scale = &dscales[0];
        cd.v_scale = &dscales[nsc];
        ch.scales_per_head = cd.scales_per_head = g_head_scales;
    }
    int32_t n = live;
    int32_t *sld = malloc(sizeof(int32_t) * 3 * (size_t)np); /* far: the live slices' cache rows lead pages on */
    memcpy(sld, sl, sizeof(int32_t) * 3 * (size_t)np);
    for (int i = 0; i < np && lead; i++)
        if (sld[i] >= 0 && sld[i] < nb * bs)
            sld[i] = (int32_t)(sld[i] + lead * bs);
    int32_t *dsl = pa_test_dev_upload(sld, sizeof(int32_t) * 3 * (size_t)np), *dn = pa_test_dev_upload(&n, sizeof n);
    free(sld);
    const int64_t tsa = pad ? ts : 0;
    const char *hsrc = (const char *)nkv + misalign * is, *dsrc = (const char *)dnkv + misalign * is;
    void *got = malloc(cb);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            n = replay_live;
            cudaMemcpy(dn, &n, sizeof n, cudaMemcpyHostToDevice);
            memset(ch.key, SENTINEL, cb);
            cudaMemcpy((char *)cd.key + skip, ch.key, cb, cudaMemcpyHostToDevice);
        }
        cr_assert_eq(pa_ref_kv_cache_update(hsrc, dp.in, T, tsa, sl, &n, np, &ch), PA_SUCCESS, "%s: %s", label,
                     pa_last_error());
        const kvu_launch kl = {dsrc, dp.in, T, tsa, dsl, dn, np, &cd};
        cr_assert_eq(pa_test_launch(kvu_run, (void *)&kl), PA_SUCCESS, "%s: %s", label, pa_last_error());
        pa_test_dev_sync();
        pa_test_dev_download(got, (char *)cd.key + skip, cb);
        char what[200];
        snprintf(what, sizeof what, "%.160s, %d live slices%s", label, n, lead ? ", far pages" : "");
        assert_same(got, ch.key, cb, what);
    }
    free(got);
    free(nkv);
    free(ch.key);
    pa_test_dev_free(dnkv);
    pa_test_dev_free(dsl);
    pa_test_dev_free(dn);
    pa_test_dev_free(dscales);
    pa_test_dev_free(cd.key);
}

static void gpu_kvu_case(pa_dtype idt, pa_dtype cdt, int hs, int bs, int nh, int variant, uint64_t seed) {
    enum { NP = 8 };
    /* live: page-crossing, full page, zero-length, short, nearly full; then
     * garbage past the live count that the kernel must not read as slices.
     * Pages under 8 rows (a slice is at most a page): a whole page across a
     * page boundary (pages of 2 and up), full pages, one row inside a page. */
    const int32_t big[3][NP] = {
        {bs - 3, 2 * bs, 0, 4 * bs + 1, 3 * bs, 999999, -7, 0},
        {0, 5, 0, 2 * bs + 1, bs, 999999, 3, 0},
        {5, bs, 0, 2, bs - 1, bs + 100, 1, 0},
    };
    const int32_t small[3][NP] = {
        {bs - 1, 2 * bs, 0, 4 * bs + (bs > 1), 3 * bs, 999999, -7, 0},
        {0, 1, 0, 2 * bs, bs - 1, 999999, 3, 0},
        {bs, bs, 0, 1, bs, bs + 100, 1, 0},
    };
    const int32_t(*sl)[NP] = bs >= 8 ? big : small;
    static const float scales[2] = {0.043f, 0.061f};
    pa_rng r = pa_rng_make(seed);
    const dt_pair dp = {idt, cdt};
    char label[96];
    snprintf(label, sizeof label, "kv_cache_update %s->%s hs %d bs %d nh %d variant %d", pa_dtype_name(idt),
             pa_dtype_name(cdt), hs, bs, nh, variant);
    kvu_check(&r, dp, hs, bs, nh, 6, 3 * (int64_t)bs, (variant & 1) ? 8 : 0, (variant >> 1) & 1, scales, &sl[0][0], NP,
              5, 1, label);
}

Test(cache_ops, kv_cache_update_slices) {
    PA_SKIP_WITHOUT_GPU();
    int i = 0;
    for (int p = 0; p < NPAIRS; p++)
        for (int h = 0; h < 4; h++, i++)
            gpu_kvu_case(pairs[p].in, pairs[p].cache, head_sizes[h], block_sizes[i % 3], kv_heads[(i / 3 + h) % 3],
                         i % 4, 4000 + (uint64_t)i);
    gpu_kvu_case(PA_DTYPE_FP8_E4M3, PA_DTYPE_FP8_E4M3, 128, 16, 2, 1, 91);
    gpu_kvu_case(PA_DTYPE_FP8_E5M2, PA_DTYPE_FP8_E5M2, 80, 8, 3, 2, 92);
    gpu_kvu_case(PA_DTYPE_F16, PA_DTYPE_F16, 36, 8, 3, 3, 93);
}

/* Pages of more rows than a grid's y dimension takes (65535): kv_cache_update
 * runs a page's rows along y, a CTA a few rows, one where a row has more
 * than 1024 chunks (513 combined heads of one element here, 1026 bytes of
 * e4m3), so at 65537 rows a page it must put two rows in a CTA (interpret
 * mode refuses a grid past the device's limits, as the hardware does). A
 * slice over the page's last two rows, one across its first rows and one in
 * the middle; one page of 67 MB. Its 2 x 32769 CTAs stay out of the race
 * suites. */
Test(cache_ops, kv_cache_update_pages_past_65535_rows, .timeout = 600) {
    PA_SKIP_WITHOUT_GPU();
    if (pa_test_races_only())
        return;
    enum { NP = 3 };
    const int bs = 65537;
    const int32_t sl[3][NP] = {{bs - 2, 0, 40000}, {0, 2, 7}, {2, 5, 3}};
    static const float scales[2] = {0.043f, 0.061f};
    pa_rng r = pa_rng_make(31);
    const dt_pair dp = {PA_DTYPE_F16, PA_DTYPE_FP8_E4M3};
    kvu_check(&r, dp, 1, bs, 513, 1, 10, 0, 0, scales, &sl[0][0], NP, 3, 2, "kv_cache_update 65537-row page");
}

/* fp8 caches under a k_scale and a v_scale per KV head (scales_per_head,
 * vLLM's per-attention-head scales; pa_test_head_scales), byte for byte
 * against the reference: reshape_and_cache over every layout, through each of
 * its kernels (vLLM's aligned rows the shared-memory one, a CTA a KV head;
 * its misaligned rows and the other layouts the per-token one, a thread's
 * chunks of several heads), and kv_cache_update (K and V of each head
 * interleaved in a row), both fp8 kinds from every input dtype, 3 and 8 KV
 * heads. */
Test(cache_ops, fp8_scales_per_head) {
    PA_SKIP_WITHOUT_GPU();
    static const pa_kv_layout layouts[4] = {PA_LAYOUT_VLLM, PA_LAYOUT_FLASH_NHD, PA_LAYOUT_FLASH_HND,
                                            PA_LAYOUT_COMBINED};
    g_head_scales = 1;
    int i = 0;
    for (int p = 0; p < NPAIRS; p++) {
        if (!pa_dtype_is_fp8(pairs[p].cache))
            continue;
        /* vLLM's layout: aligned rows (variant 0) and misaligned ones (2) in turn */
        for (int l = 0; l < 4; l++, i++)
            gpu_rc_case(layouts[l], pairs[p], 64, 16, (p + l) % 2 ? 3 : 8, l == 0 ? 2 * (p % 2) : i % 4,
                        15000u + (uint64_t)i);
        gpu_kvu_case(pairs[p].in, pairs[p].cache, 48, 16, p % 2 ? 8 : 3, p % 4, 15100u + (uint64_t)i);
    }
    g_head_scales = 0;
}

/* Random configurations (tests/common/testutil.h): dtype pair, any head size,
 * block size and KV heads, strided and misaligned new_kv, and a step's slices:
 * disjoint runs of cache rows of 1..page size rows that start anywhere (so
 * they cross pages), each fed from any rows of new_kv, in shuffled order, with
 * zero-length padding slices (their other fields garbage) among them and
 * garbage past the live count. Then a replay with fewer live slices, as a
 * graph would. Byte for byte against the reference, caches compared whole. */
Test(cache_ops, kv_cache_update_random_configurations, .timeout = 600) {
    PA_SKIP_WITHOUT_GPU();
    uint64_t seed;
    int first;
    const int n = pa_test_random_begin("cache_ops/kv_cache_update_random_configurations", 24, &seed, &first);
    static const int bsz[8] = {16, 32, 8, 1, 3, 24, 64, 128};
    enum { MAXS = 48 };
    for (int it = first; it < first + n; it++) {
        pa_rng r = pa_test_random_rng(seed, it);
        const dt_pair dp = pairs[pa_rng_int(&r, 0, NPAIRS - 1)];
        const int hs = pa_rng_int(&r, 0, 1) ? head_sizes[pa_rng_int(&r, 0, 3)] : pa_rng_int(&r, 1, 256);
        const int bs = bsz[pa_rng_int(&r, 0, 7)], nh = pa_rng_int(&r, 1, 8), variant = pa_rng_int(&r, 0, 3);
        const int nb = pa_rng_int(&r, 1, bs >= 64 ? 4 : 12);
        const int64_t rows = (int64_t)nb * bs;
        /* live slices: disjoint cache-row runs in row order, then shuffled */
        int32_t cs[MAXS], len[MAXS];
        int ns = 0;
        for (int64_t row = pa_rng_int(&r, 0, bs); row < rows && ns < MAXS;) {
            const int l = pa_rng_int(&r, 1, (int)(rows - row < bs ? rows - row : bs));
            cs[ns] = (int32_t)row;
            len[ns++] = l;
            row += l + (pa_rng_int(&r, 0, 2) ? 0 : pa_rng_int(&r, 1, bs));
        }
        int64_t total = 0;
        for (int k = 0; k < ns; k++)
            total += len[k];
        const int64_t T = total + pa_rng_int(&r, 0, 7);
        /* padding slices among the live ones, garbage after them */
        const int npad = pa_rng_int(&r, 0, 3), live = ns + npad, np = live + pa_rng_int(&r, 0, 4);
        int32_t *sl = malloc(sizeof(int32_t) * 3 * (size_t)np);
        for (int k = 0; k < live; k++) {
            if (k < ns) {
                sl[k] = cs[k];
                sl[np + k] = pa_rng_int(&r, 0, (int)(T - len[k]));
                sl[2 * np + k] = len[k];
            } else { /* zero length: the other fields are never read as rows */
                sl[k] = pa_rng_int(&r, 0, 1) ? -5 : (int32_t)rows + 99;
                sl[np + k] = pa_rng_int(&r, 0, 1) ? -9 : (int32_t)T + 7;
                sl[2 * np + k] = 0;
            }
        }
        for (int k = live - 1; k > 0; k--) { /* shuffle the live columns */
            const int j = pa_rng_int(&r, 0, k);
            for (int f = 0; f < 3; f++) {
                const int32_t t = sl[f * np + k];
                sl[f * np + k] = sl[f * np + j];
                sl[f * np + j] = t;
            }
        }
        for (int k = live; k < np; k++) { /* past the live count: must not be applied */
            sl[k] = pa_rng_int(&r, 0, (int)rows - 1);
            sl[np + k] = pa_rng_int(&r, -3, (int)T);
            sl[2 * np + k] = pa_rng_int(&r, 1, 2 * bs);
        }
        const float scales[2] = {pa_rng_uniform(&r, 0.01f, 0.1f), pa_rng_uniform(&r, 0.01f, 0.1f)};
        char label[160];
        snprintf(label, sizeof label,
                 "kv_cache_update draw %d: %s->%s head %d block %d kv heads %d variant %d, %d live slices (%d "
                 "padding) of %d, %lld of %lld rows",
                 it, pa_dtype_name(dp.in), pa_dtype_name(dp.cache), hs, bs, nh, variant, live, npad, np,
                 (long long)total, (long long)rows);
        fprintf(stderr, "  %s\n", label);
        kvu_check(&r, dp, hs, bs, nh, nb, T, (variant & 1) ? pa_rng_int(&r, 1, 9) : 0, (variant >> 1) & 1, scales, sl,
                  np, live, pa_rng_int(&r, 0, live), label);
        free(sl);
    }
}

/* Malformed live slices are skipped whole on the device, the others applied. */
Test(cache_ops, kv_cache_update_skips_bad_slices) {
    PA_SKIP_WITHOUT_GPU();
    pa_kv_cache c;
    memset(&c, 0, sizeof c);
    c.layout = PA_LAYOUT_COMBINED;
    c.dtype = PA_DTYPE_BF16;
    c.num_blocks = 3;
    c.block_size = 8;
    c.num_kv_heads = 2;
    c.head_size = 64;
    const size_t cb = (size_t)3 * 8 * 4 * 64 * 2;
    pa_rng r = pa_rng_make(8);
    const int64_t T = 16;
    void *nkv = pa_test_random_buffer(&r, PA_DTYPE_BF16, (size_t)T * 256, -1, 1);
    void *dnkv = pa_test_dev_upload(nkv, (size_t)T * 256 * 2);
    enum { NP = 6 };
    /* good, len > page, cache rows out of range, new_kv rows out of range, negative start, good */
    int32_t bad[3][NP] = {{0, 8, 20, 8, -1, 9}, {0, 0, 0, 12, 0, 3}, {3, 9, 5, 5, 2, 4}};
    int32_t good[3][NP] = {{0, 0, 0, 0, 0, 9}, {0, 0, 0, 0, 0, 3}, {3, 0, 0, 0, 0, 4}};
    int32_t n = NP;
    int32_t *dsl = pa_test_dev_upload(bad, sizeof bad), *dn = pa_test_dev_upload(&n, sizeof n);
    pa_kv_cache ch = c, cd = c;
    ch.key = sentinel_host(cb);
    cd.key = pa_test_dev_upload(ch.key, cb);
    cr_assert_eq(pa_ref_kv_cache_update(nkv, PA_DTYPE_BF16, T, 0, &good[0][0], &n, NP, &ch), PA_SUCCESS, "%s",
                 pa_last_error());
    cr_assert_eq(pa_kv_cache_update(dnkv, PA_DTYPE_BF16, T, 0, dsl, dn, NP, &cd, NULL), PA_SUCCESS, "%s",
                 pa_last_error());
    pa_test_dev_sync();
    void *got = malloc(cb);
    pa_test_dev_download(got, cd.key, cb);
    assert_same(got, ch.key, cb, "kv_cache_update with malformed slices");
    free(got);
    free(nkv);
    free(ch.key);
    pa_test_dev_free(dnkv);
    pa_test_dev_free(dsl);
    pa_test_dev_free(dn);
    pa_test_dev_free(cd.key);
}

/* ---- swap_blocks ------------------------------------------------------------------ */

enum { SW_NB_SRC = 40, SW_NB_DST = 33, SW_BB = 4096 + 48 };
static const int64_t sw_map[][2] = {{0, 5},  {1, 6},  {2, 7},   {3, 8},   {17, 0},  {9, 30}, {10, 31},
                                    {39, 1}, {38, 2}, {20, 20}, {21, 21}, {22, 22}, {11, 12}};
#define SW_N ((int64_t)(sizeof(sw_map) / sizeof(sw_map[0])))

/* swap_blocks of snb source blocks (contents hsrc) into dnb destination
 * blocks of bb bytes by `map`. kind: 0 host->device, 1 device->host, 2
 * device->device (host buffers pinned); stream: 0 legacy NULL (one copy per
 * run), 1 a created stream (batched copies). The destination starts as a
 * sentinel and is compared whole against the reference. */
static void swap_check(int kind, int use_stream, int64_t bb, const unsigned char *hsrc, int64_t snb, int64_t dnb,
                       const int64_t (*map)[2], int64_t np, const char *label) {
    const size_t sb = (size_t)(snb * bb), db = (size_t)(dnb * bb);
    unsigned char *want = sentinel_host(db), *got = malloc(db);
    cr_assert_eq(pa_ref_swap_blocks(want, hsrc, bb, &map[0][0], np, snb, dnb), PA_SUCCESS, "%s: %s", label,
                 pa_last_error());
    /* far: the device side's blocks lead blocks on (g_far) */
    const int64_t lead = g_far ? pa_test_far_lead((size_t)bb, 1) : 0, ls = kind ? lead : 0, ld = kind != 1 ? lead : 0;
    void *src, *dst;
    if (kind == 0) {
        cr_assert_eq(cudaMallocHost(&src, sb), cudaSuccess);
        memcpy(src, hsrc, sb);
    } else {
        src = ls ? pa_test_dev_upload_far(hsrc, sb, (size_t)bb, ls) : pa_test_dev_upload(hsrc, sb);
    }
    if (kind == 1) {
        cr_assert_eq(cudaMallocHost(&dst, db), cudaSuccess);
        memset(dst, SENTINEL, db);
    } else if (ld) {
        unsigned char *sent = sentinel_host(db);
        dst = pa_test_dev_upload_far(sent, db, (size_t)bb, ld);
        free(sent);
    } else {
        dst = pa_test_dev_alloc(db);
        cudaMemset(dst, SENTINEL, db);
    }
    int64_t(*dmap)[2] = malloc(sizeof(int64_t[2]) * (size_t)(np > 0 ? np : 1));
    for (int64_t k = 0; k < np; k++) {
        dmap[k][0] = map[k][0] >= 0 && map[k][0] < snb ? map[k][0] + ls : map[k][0];
        dmap[k][1] = map[k][1] >= 0 && map[k][1] < dnb ? map[k][1] + ld : map[k][1];
    }
    pa_test_dev_sync(); /* the legacy stream's memset before a non-blocking stream's copies */
    cudaStream_t s = NULL;
    if (use_stream)
        cr_assert_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    cr_assert_eq(pa_swap_blocks(dst, src, bb, &dmap[0][0], np, snb + ls, dnb + ld, (pa_stream)s), PA_SUCCESS, "%s: %s",
                 label, pa_last_error());
    cr_assert_eq(cudaStreamSynchronize(s), cudaSuccess);
    free(dmap);
    if (kind == 1)
        memcpy(got, dst, db);
    else
        pa_test_dev_download(got, (char *)dst + ld * bb, db);
    assert_same(got, want, db, label);
    if (s)
        cudaStreamDestroy(s);
    if (kind == 0)
        cudaFreeHost(src);
    else
        pa_test_dev_free(src);
    if (kind == 1)
        cudaFreeHost(dst);
    else
        pa_test_dev_free(dst);
    free(want);
    free(got);
}

static void gpu_swap_case(int kind, int use_stream) {
    const size_t sb = (size_t)SW_NB_SRC * SW_BB;
    unsigned char *hsrc = malloc(sb);
    for (size_t i = 0; i < sb; i++)
        hsrc[i] = (unsigned char)(i * 131 + (i >> 12));
    char label[64];
    snprintf(label, sizeof label, "swap kind %d stream %d", kind, use_stream);
    swap_check(kind, use_stream, SW_BB, hsrc, SW_NB_SRC, SW_NB_DST, sw_map, SW_N, label);
    free(hsrc);
}

Test(cache_ops, swap_blocks_host_to_device) {
    PA_SKIP_WITHOUT_GPU();
    gpu_swap_case(0, 0);
    gpu_swap_case(0, 1);
}
Test(cache_ops, swap_blocks_device_to_host) {
    PA_SKIP_WITHOUT_GPU();
    gpu_swap_case(1, 0);
    gpu_swap_case(1, 1);
}
Test(cache_ops, swap_blocks_device_to_device) {
    PA_SKIP_WITHOUT_GPU();
    gpu_swap_case(2, 0);
    gpu_swap_case(2, 1);
}

/* A destination block named by several pairs ends as the last such pair's
 * source (cache_ops.h), as the one-by-one copies and the reference leave it:
 * on a created stream too, where the runs go out in batches whose copies have
 * no order among them, so a run meeting a destination already in its batch
 * must go out in the next. Pairs that repeat a destination, runs merged over
 * a block a later pair names again, three pairs into block 0. The expected
 * blocks are built here from that rule; interpret mode stops a batch whose
 * copies meet. */
Test(cache_ops, swap_blocks_repeated_destinations_last_pair_wins) {
    PA_SKIP_WITHOUT_GPU();
    enum { SNB = 12, DNB = 10, BB = 4096 + 16 };
    static const int64_t map[][2] = {{0, 5}, {3, 5}, {1, 2}, {2, 3}, {7, 3}, {4, 8},
                                     {5, 9}, {6, 8}, {8, 0}, {9, 0}, {10, 0}};
    const int64_t np = (int64_t)(sizeof map / sizeof map[0]);
    unsigned char *hsrc = malloc((size_t)SNB * BB), *want = sentinel_host((size_t)DNB * BB),
                  *ref = sentinel_host((size_t)DNB * BB);
    for (size_t i = 0; i < (size_t)SNB * BB; i++)
        hsrc[i] = (unsigned char)(i * 29 + (i / BB) * 7 + 1);
    for (int d = 0; d < DNB; d++) {
        int64_t last = -1;
        for (int64_t k = 0; k < np; k++)
            if (map[k][1] == d)
                last = map[k][0];
        if (last >= 0)
            memcpy(want + (size_t)d * BB, hsrc + (size_t)last * BB, BB);
    }
    cr_assert_eq(pa_ref_swap_blocks(ref, hsrc, BB, &map[0][0], np, SNB, DNB), PA_SUCCESS, "%s", pa_last_error());
    assert_same(ref, want, (size_t)DNB * BB, "the reference against the last pair's blocks");
    for (int kind = 0; kind < 3; kind++)
        for (int st = 0; st < 2; st++) {
            char label[96];
            snprintf(label, sizeof label, "repeated destinations, kind %d stream %d", kind, st);
            swap_check(kind, st, BB, hsrc, SNB, DNB, map, np, label);
        }
    free(hsrc);
    free(want);
    free(ref);
}

/* swap_blocks captured into a CUDA graph on a created stream (where the batched
 * copy would otherwise be used): the capture must succeed, copy nothing while
 * capturing, and each replay must copy the source as it is at replay time.
 * cudaMemcpyBatchAsync cannot be captured, so the entry must fall back to
 * per-run cudaMemcpyAsync. Device->device and pinned host->device. */
static void gpu_swap_graph_case(int from_host) {
    const size_t sb = (size_t)SW_NB_SRC * SW_BB, db = (size_t)SW_NB_DST * SW_BB;
    unsigned char *h = malloc(sb), *want = malloc(db), *got = malloc(db), *fresh = sentinel_host(db);
    void *src, *dst = pa_test_dev_alloc(db);
    if (from_host)
        cr_assert_eq(cudaMallocHost(&src, sb), cudaSuccess);
    else
        src = pa_test_dev_alloc(sb);
    cudaStream_t s;
    cr_assert_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    cudaMemset(dst, SENTINEL, db);
    pa_test_dev_sync();

    /* capture once, before any source data is in place */
    cudaGraph_t g;
    cr_assert_eq(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
    const pa_status st = pa_swap_blocks(dst, src, SW_BB, &sw_map[0][0], SW_N, SW_NB_SRC, SW_NB_DST, (pa_stream)s);
    const cudaError_t ce = cudaStreamEndCapture(s, &g);
    cr_assert_eq(st, PA_SUCCESS, "swap_blocks under capture: %s", pa_last_error());
    cr_assert_eq(ce, cudaSuccess, "capture invalidated (error %d)", (int)ce);
    pa_test_dev_download(got, dst, db);
    assert_same(got, fresh, db, "swap_blocks copied while capturing");
    cudaGraphExec_t exec;
    cr_assert_eq(cudaGraphInstantiate(&exec, g, 0), cudaSuccess);
    cudaGraphDestroy(g);

    /* two replays with different sources: each copies what is there then */
    for (int r = 0; r < 2; r++) {
        for (size_t i = 0; i < sb; i++)
            h[i] = (unsigned char)(i * 131 + (i >> 12) + 77 * (size_t)r);
        if (from_host)
            memcpy(src, h, sb);
        else
            cr_assert_eq(cudaMemcpy(src, h, sb, cudaMemcpyHostToDevice), cudaSuccess);
        memset(want, SENTINEL, db);
        cr_assert_eq(pa_ref_swap_blocks(want, h, SW_BB, &sw_map[0][0], SW_N, SW_NB_SRC, SW_NB_DST), PA_SUCCESS);
        cudaMemset(dst, SENTINEL, db);
        pa_test_dev_sync();
        cr_assert_eq(cudaGraphLaunch(exec, s), cudaSuccess);
        cr_assert_eq(cudaStreamSynchronize(s), cudaSuccess);
        pa_test_dev_download(got, dst, db);
        assert_same(got, want, db, from_host ? "swap graph replay host->device" : "swap graph replay device->device");
    }
    cudaGraphExecDestroy(exec);
    cudaStreamDestroy(s);
    if (from_host)
        cudaFreeHost(src);
    else
        pa_test_dev_free(src);
    pa_test_dev_free(dst);
    free(h);
    free(want);
    free(got);
    free(fresh);
}

Test(cache_ops, swap_blocks_under_graph_capture) {
    PA_SKIP_WITHOUT_GPU();
    gpu_swap_graph_case(0);
    gpu_swap_graph_case(1);
}

/* Many non-contiguous pairs: more than one batch of runs. */
Test(cache_ops, swap_blocks_many_runs) {
    PA_SKIP_WITHOUT_GPU();
    enum { NB = 600, BB = 256, NPR = 300 };
    int64_t map[NPR][2];
    for (int i = 0; i < NPR; i++) {
        map[i][0] = (i * 7) % NB;
        map[i][1] = NB - 1 - 2 * i;
    }
    unsigned char *h = malloc((size_t)NB * BB), *want = sentinel_host((size_t)NB * BB), *got = malloc((size_t)NB * BB);
    for (int i = 0; i < NB * BB; i++)
        h[i] = (unsigned char)(i * 13 + 1);
    cr_assert_eq(pa_ref_swap_blocks(want, h, BB, &map[0][0], NPR, NB, NB), PA_SUCCESS);
    void *src = pa_test_dev_upload(h, (size_t)NB * BB), *dst;
    cr_assert_eq(cudaMallocHost(&dst, (size_t)NB * BB), cudaSuccess);
    memset(dst, SENTINEL, (size_t)NB * BB);
    cudaStream_t s;
    cr_assert_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    cr_assert_eq(pa_swap_blocks(dst, src, BB, &map[0][0], NPR, NB, NB, (pa_stream)s), PA_SUCCESS, "%s",
                 pa_last_error());
    cr_assert_eq(cudaStreamSynchronize(s), cudaSuccess);
    memcpy(got, dst, (size_t)NB * BB);
    assert_same(got, want, (size_t)NB * BB, "swap many runs");
    cudaStreamDestroy(s);
    cudaFreeHost(dst);
    pa_test_dev_free(src);
    free(h);
    free(want);
    free(got);
}

/* Random configurations: direction, stream (the legacy NULL stream's copy per
 * run, or a created stream's batched copies), block bytes (odd sizes too),
 * buffer sizes, and a mapping of distinct destinations whose pairs often
 * continue a run (src + 1, dst + 1), so runs of every length merge, and
 * sometimes continue only the source or only the destination, which must not
 * merge; some mappings past one batch call's 128 runs. Byte for byte against the
 * reference, destination compared whole. */
Test(cache_ops, swap_blocks_random_configurations, .timeout = 600) {
    PA_SKIP_WITHOUT_GPU();
    uint64_t seed;
    int first;
    const int n = pa_test_random_begin("cache_ops/swap_blocks_random_configurations", 24, &seed, &first);
    for (int it = first; it < first + n; it++) {
        pa_rng r = pa_test_random_rng(seed, it);
        const int kind = pa_rng_int(&r, 0, 2), use_stream = pa_rng_int(&r, 0, 1);
        static const int bb_w[3] = {2, 2, 1};
        const int bbk = pa_test_pick_weighted(&r, bb_w, 3);
        const int64_t bb = bbk == 0 ? 16 * pa_rng_int(&r, 1, 256) : bbk == 1 ? pa_rng_int(&r, 1, 5000) : 1;
        const int big = pa_rng_int(&r, 0, 3) == 0; /* enough scattered pairs for several batch calls */
        const int64_t snb = big ? pa_rng_int(&r, 300, 700) : pa_rng_int(&r, 1, 64);
        const int64_t dnb = big ? pa_rng_int(&r, 300, 700) : pa_rng_int(&r, 1, 64);
        /* destinations: dst blocks cut into chunks of 1..8 consecutive ones,
         * the chunks shuffled; a chunk's sources continue a run where they can */
        int64_t *order = malloc(sizeof(int64_t) * (size_t)dnb), *cstart = malloc(sizeof(int64_t) * (size_t)(dnb + 1));
        int nch = 0;
        for (int64_t b = 0; b < dnb;) {
            const int64_t l = pa_rng_int(&r, 1, big ? 2 : 8);
            cstart[nch++] = b;
            b += l < dnb - b ? l : dnb - b;
        }
        cstart[nch] = dnb;
        int *perm = shuffled_indices(&r, nch);
        int64_t np = 0;
        for (int k = 0; k < nch; k++)
            for (int64_t b = cstart[perm[k]]; b < cstart[perm[k] + 1]; b++)
                order[np++] = b;
        np = pa_rng_int(&r, 1, (int)np);
        int64_t(*map)[2] = malloc(sizeof(int64_t[2]) * (size_t)np);
        for (int64_t k = 0; k < np; k++) { /* a source continues the previous pair's three times in */
            map[k][1] = order[k];          /* four where the destination does, once in four where not */
            const int dcont = k > 0 && order[k] == order[k - 1] + 1;
            const int cont = k > 0 && map[k - 1][0] + 1 < snb && (dcont ? pa_rng_int(&r, 0, 3) : !pa_rng_int(&r, 0, 3));
            map[k][0] = cont ? map[k - 1][0] + 1 : pa_rng_int(&r, 0, (int)snb - 1);
        }
        int64_t runs = 0;
        cr_assert_eq(pa_swap_plan_runs(&map[0][0], np, NULL, 0, &runs), PA_SUCCESS);
        fprintf(stderr, "  %d: %s, %s, block bytes %lld, %lld -> %lld blocks, %lld pairs in %lld runs\n", it,
                kind == 0   ? "host->device"
                : kind == 1 ? "device->host"
                            : "device->device",
                use_stream ? "created stream" : "NULL stream", (long long)bb, (long long)snb, (long long)dnb,
                (long long)np, (long long)runs);
        unsigned char *hsrc = malloc((size_t)(snb * bb));
        for (size_t i = 0; i < (size_t)(snb * bb); i++)
            hsrc[i] = (unsigned char)pa_rng_next(&r);
        char label[64];
        snprintf(label, sizeof label, "swap_blocks draw %d", it);
        swap_check(kind, use_stream, bb, hsrc, snb, dnb, (const int64_t(*)[2])map, np, label);
        free(hsrc);
        free(map);
        free(perm);
        free(order);
        free(cstart);
    }
}

typedef struct swap_kv_launch {
    const pa_kv_cache *dst, *src;
    const int64_t *map;
    int64_t pairs;
} swap_kv_launch;
static pa_status swap_kv_run(void *ctx, pa_stream s) {
    const swap_kv_launch *a = ctx;
    return pa_swap_blocks_kv(a->dst, a->src, a->map, a->pairs, s);
}

/* One geometry written two ways: a device cache with strides 0 and a pinned
 * host cache whose descriptor spells the same contiguous strides out (as a
 * torch view carries them), with one KV head whose head_stride is anything.
 * The swap through pa_test_launch: from a CUDA graph under pa_test_graph. */
static void swap_kv_written_out_case(void) {
    const int nb = 5, bs = 8, hs = 64;
    pa_kv_cache c;
    memset(&c, 0, sizeof c);
    c.layout = PA_LAYOUT_FLASH_NHD;
    c.dtype = PA_DTYPE_BF16;
    c.num_blocks = nb;
    c.block_size = bs;
    c.num_kv_heads = 1;
    c.head_size = hs;
    const size_t bytes = (size_t)nb * bs * hs * 2, bb = bytes / (size_t)nb;
    unsigned char *hk = malloc(bytes), *hv = malloc(bytes), *got = malloc(bytes), *want = sentinel_host(bytes);
    for (size_t i = 0; i < bytes; i++) {
        hk[i] = (unsigned char)(i * 7 + 3);
        hv[i] = (unsigned char)(i * 5 + 1);
    }
    pa_kv_cache src = c, dst = c;
    src.key = pa_test_dev_upload(hk, bytes);
    src.value = pa_test_dev_upload(hv, bytes);
    dst.block_stride = (int64_t)bs * hs;
    dst.page_stride = hs;
    dst.head_stride = (int64_t)bs * hs; /* one head: ignored (kv_cache.h) */
    cr_assert_eq(cudaMallocHost(&dst.key, bytes), cudaSuccess);
    cr_assert_eq(cudaMallocHost(&dst.value, bytes), cudaSuccess);
    memset(dst.key, SENTINEL, bytes);
    memset(dst.value, SENTINEL, bytes);
    const int64_t map[][2] = {{4, 0}, {0, 2}, {1, 3}};
    const swap_kv_launch sl = {&dst, &src, &map[0][0], 3};
    cr_assert_eq(pa_test_launch(swap_kv_run, (void *)&sl), PA_SUCCESS, "%s", pa_last_error());
    pa_test_dev_sync();
    /* block b of each buffer: bytes [b * bb, (b + 1) * bb) */
    for (int i = 0; i < 3; i++)
        memcpy(want + (size_t)map[i][1] * bb, hk + (size_t)map[i][0] * bb, bb);
    memcpy(got, dst.key, bytes);
    assert_same(got, want, bytes, "swap_blocks_kv key, strides written out");
    for (int i = 0; i < 3; i++)
        memcpy(want + (size_t)map[i][1] * bb, hv + (size_t)map[i][0] * bb, bb);
    memcpy(got, dst.value, bytes);
    assert_same(got, want, bytes, "swap_blocks_kv value, strides written out");
    /* a padded page is another geometry */
    dst.page_stride = hs + 8;
    dst.block_stride = (int64_t)bs * (hs + 8);
    assert_fail(pa_swap_blocks_kv(&dst, &src, &map[0][0], 3, NULL), PA_ERR_INVALID_ARGUMENT, "differ");
    pa_test_dev_free(src.key);
    pa_test_dev_free(src.value);
    cudaFreeHost(dst.key);
    cudaFreeHost(dst.value);
    free(hk);
    free(hv);
    free(got);
    free(want);
}

Test(cache_ops, swap_blocks_kv_same_geometry_written_out) {
    PA_SKIP_WITHOUT_GPU();
    swap_kv_written_out_case();
}

/* The same swap captured into a CUDA graph (device to pinned host, the
 * capture's pairs) and replayed: a capture that broke fails. */
Test(cache_ops, swap_blocks_kv_replays_from_a_cuda_graph) {
    PA_SKIP_WITHOUT_GPU();
    pa_test_graph = 1;
    swap_kv_written_out_case();
    pa_test_graph = 0;
}

Test(cache_ops, swap_blocks_kv_both_buffers) {
    PA_SKIP_WITHOUT_GPU();
    pa_kv_cache c;
    memset(&c, 0, sizeof c);
    c.layout = PA_LAYOUT_VLLM;
    c.dtype = PA_DTYPE_F16;
    c.num_blocks = 6;
    c.block_size = 16;
    c.num_kv_heads = 2;
    c.head_size = 64;
    const size_t bytes = (size_t)6 * 16 * 2 * 64 * 2, bb = bytes / 6;
    unsigned char *hk = malloc(bytes), *hv = malloc(bytes), *got = malloc(bytes), *want = sentinel_host(bytes);
    for (size_t i = 0; i < bytes; i++) {
        hk[i] = (unsigned char)i;
        hv[i] = (unsigned char)(i * 3 + 1);
    }
    pa_kv_cache src = c, dst = c;
    src.key = pa_test_dev_upload(hk, bytes);
    src.value = pa_test_dev_upload(hv, bytes);
    cr_assert_eq(cudaMallocHost(&dst.key, bytes), cudaSuccess);
    cr_assert_eq(cudaMallocHost(&dst.value, bytes), cudaSuccess);
    memset(dst.key, SENTINEL, bytes);
    memset(dst.value, SENTINEL, bytes);
    const int64_t map[][2] = {{0, 3}, {1, 4}, {5, 0}};
    cr_assert_eq(pa_swap_blocks_kv(&dst, &src, &map[0][0], 3, NULL), PA_SUCCESS, "%s", pa_last_error());
    pa_test_dev_sync();
    cr_assert_eq(pa_ref_swap_blocks(want, hk, (int64_t)bb, &map[0][0], 3, 6, 6), PA_SUCCESS);
    memcpy(got, dst.key, bytes);
    assert_same(got, want, bytes, "swap_blocks_kv key");
    memset(want, SENTINEL, bytes);
    cr_assert_eq(pa_ref_swap_blocks(want, hv, (int64_t)bb, &map[0][0], 3, 6, 6), PA_SUCCESS);
    memcpy(got, dst.value, bytes);
    assert_same(got, want, bytes, "swap_blocks_kv value");
    /* Refused before anything is issued (2026-12-07): dst's key and value one
     * buffer (each value block would land on its key block), and the mapping
     * inside dst's key or value (pinned host memory the copies write). */
    pa_kv_cache one = dst;
    one.value = one.key;
    assert_fail(pa_swap_blocks_kv(&one, &src, &map[0][0], 3, NULL), PA_ERR_INVALID_ARGUMENT,
                "swap_blocks_kv: dst.key and dst.value are the same buffer");
    /* Partly overlapping (2026-12-07, 22nd session): value one block past key
     * in one buffer, so value block b is key block b + 1. */
    one.value = (unsigned char *)one.key + bb;
    assert_fail(pa_swap_blocks_kv(&one, &src, &map[0][0], 3, NULL), PA_ERR_INVALID_ARGUMENT, "swap_blocks_kv: dst.key");
    one.value = (unsigned char *)one.key - bb;
    assert_fail(pa_swap_blocks_kv(&one, &src, &map[0][0], 3, NULL), PA_ERR_INVALID_ARGUMENT, "swap_blocks_kv: dst.key");
    int64_t *in_key = (int64_t *)dst.key + 8, *in_value = (int64_t *)dst.value + 8;
    memcpy(in_key, map, sizeof map);
    memcpy(in_value, map, sizeof map);
    unsigned char *keep_k = malloc(bytes), *keep_v = malloc(bytes);
    memcpy(keep_k, dst.key, bytes);
    memcpy(keep_v, dst.value, bytes);
    assert_fail(pa_swap_blocks_kv(&dst, &src, in_key, 3, NULL), PA_ERR_INVALID_ARGUMENT,
                "swap_blocks_kv (its key buffers: the src buffer is src.key, the dst buffer dst.key): swap_blocks: "
                "block_mapping");
    assert_fail(pa_swap_blocks_kv(&dst, &src, in_value, 3, NULL), PA_ERR_INVALID_ARGUMENT,
                "swap_blocks_kv: block_mapping lies in dst.value");
    pa_test_dev_sync();
    assert_same(dst.key, keep_k, bytes, "dst key after the refusals");
    assert_same(dst.value, keep_v, bytes, "dst value after the refusals");
    free(keep_k);
    free(keep_v);
    pa_test_dev_free(src.key);
    pa_test_dev_free(src.value);
    cudaFreeHost(dst.key);
    cudaFreeHost(dst.value);
    free(hk);
    free(hv);
    free(got);
    free(want);
}

/* ---- copy_blocks ---------------------------------------------------------------- */

enum { CB_MAXL = 6 };

/* copy_blocks over L layers of nb blocks of numel elements, key buffers (and
 * value buffers, unless with_values is 0, when they must stay as they were)
 * at byte offsets offk / offv (NULL: 0) of allocations 16 bytes longer, filled
 * at random from rng. The mapping goes to the device as it is; the reference
 * gets its pairs out of [0, nb) as padding (-1), since it rejects them where
 * the device skips them. Every allocation compared whole. */
static void copy_blocks_check(pa_rng *rng, int L, int with_values, int64_t numel, pa_dtype dt, int nb,
                              const int64_t (*map)[2], int np, const int *offk, const int *offv, const char *label) {
    cr_assert(L >= 1 && L <= CB_MAXL);
    const size_t bytes = (size_t)nb * (size_t)numel * pa_dtype_size(dt) + 16, blk = (size_t)numel * pa_dtype_size(dt);
    const int64_t lead = g_far ? pa_test_far_lead(blk, pa_dtype_size(dt)) : 0;
    const size_t skip = (size_t)lead * blk;
    unsigned char *hk[CB_MAXL], *hv[CB_MAXL];
    void *dk[CB_MAXL], *dv[CB_MAXL], *rk[CB_MAXL], *rv[CB_MAXL];
    uint64_t pk[CB_MAXL], pv[CB_MAXL];
    for (int l = 0; l < L; l++) {
        const int ok = offk ? offk[l] : 0, ov = offv ? offv[l] : 0;
        hk[l] = malloc(bytes);
        hv[l] = malloc(bytes);
        for (size_t i = 0; i < bytes; i++) {
            hk[l][i] = (unsigned char)pa_rng_next(rng);
            hv[l][i] = (unsigned char)pa_rng_next(rng);
        }
        if (lead) { /* far: the layer's blocks lead blocks into its buffer (g_far) */
            dk[l] = (char *)pa_test_dev_upload_far(hk[l], bytes, blk, lead) + skip;
            dv[l] = (char *)pa_test_dev_upload_far(hv[l], bytes, blk, lead) + skip;
        } else {
            dk[l] = pa_test_dev_upload(hk[l], bytes);
            dv[l] = pa_test_dev_upload(hv[l], bytes);
        }
        pk[l] = (uint64_t)(uintptr_t)dk[l] - skip + (uint64_t)ok;
        pv[l] = (uint64_t)(uintptr_t)dv[l] - skip + (uint64_t)ov;
        rk[l] = hk[l] + ok;
        rv[l] = hv[l] + ov;
    }
    int64_t(*rmap)[2] = malloc(sizeof(int64_t[2]) * (size_t)np);
    for (int k = 0; k < np; k++) {
        const int in = map[k][0] >= 0 && map[k][0] < nb && map[k][1] >= 0 && map[k][1] < nb;
        rmap[k][0] = in ? map[k][0] : -1;
        rmap[k][1] = in ? map[k][1] : -1;
    }
    uint64_t *dpk = pa_test_dev_upload(pk, sizeof(uint64_t) * (size_t)L);
    uint64_t *dpv = pa_test_dev_upload(pv, sizeof(uint64_t) * (size_t)L);
    /* far: pairs in range lead blocks on (a pair out of range stays out: the far
     * tests give none, since shifting one side only would move the other) */
    int64_t *fmap = malloc(sizeof(int64_t[2]) * (size_t)np + 1);
    for (int k = 0; k < 2 * np; k++) {
        const int64_t b = (&map[0][0])[k];
        fmap[k] = b >= 0 && b < nb ? b + lead : b;
    }
    int64_t *dmap = pa_test_dev_upload(fmap, sizeof(int64_t[2]) * (size_t)np);
    free(fmap);
    const cb_launch cl = {dpk, with_values ? dpv : NULL, L, dmap, np, numel, dt, nb + lead};
    cr_assert_eq(pa_test_launch(cb_run, (void *)&cl), PA_SUCCESS, "%s: %s", label, pa_last_error());
    pa_test_dev_sync();
    cr_assert_eq(pa_ref_copy_blocks(rk, with_values ? rv : NULL, L, &rmap[0][0], np, numel, dt, nb), PA_SUCCESS,
                 "%s: %s", label, pa_last_error());
    unsigned char *got = malloc(bytes);
    for (int l = 0; l < L; l++) {
        char what[200];
        snprintf(what, sizeof what, "%.160s: layer %d key", label, l);
        pa_test_dev_download(got, dk[l], bytes);
        assert_same(got, hk[l], bytes, what);
        snprintf(what, sizeof what, "%.160s: layer %d value", label, l);
        pa_test_dev_download(got, dv[l], bytes);
        assert_same(got, hv[l], bytes, what);
        free(hk[l]);
        free(hv[l]);
        pa_test_dev_free((char *)dk[l] - skip);
        pa_test_dev_free((char *)dv[l] - skip);
    }
    free(got);
    free(rmap);
    pa_test_dev_free(dpk);
    pa_test_dev_free(dpv);
    pa_test_dev_free(dmap);
}

static void gpu_copy_case(int with_values, int64_t numel, pa_dtype dt) {
    /* repeated sources (prefix forks), a padding pair, distinct destinations */
    static const int64_t map[][2] = {{1, 10}, {1, 11}, {1, 12}, {2, 13}, {-1, -1}, {0, 23}, {5, 6}, {7, 20}};
    pa_rng r = pa_rng_make((uint64_t)numel * 7 + (uint64_t)with_values);
    char label[64];
    snprintf(label, sizeof label, "copy_blocks %s x %lld (values %d)", pa_dtype_name(dt), (long long)numel,
             with_values);
    copy_blocks_check(&r, 5, with_values, numel, dt, 24, map, 8, NULL, NULL, label);
}

Test(cache_ops, copy_blocks_all_layers_one_launch) {
    PA_SKIP_WITHOUT_GPU();
    gpu_copy_case(1, 16 * 8 * 128, PA_DTYPE_F16); /* 16-byte path */
    gpu_copy_case(0, 16 * 8 * 128, PA_DTYPE_BF16);
    gpu_copy_case(1, 8 * 3 * 37, PA_DTYPE_FP8_E4M3); /* odd block size: byte path */
}

/* Caches past 2^31 elements and 2^32 bytes (g_far): reshape_and_cache into
 * every layout (the vLLM layout's shared-memory kernel on prefill-like runs,
 * the per-token kernels on scattered slots; 16-bit, fp8, and f32 at 2^31
 * elements, 8 GiB), kv_cache_update, copy_blocks over two layers (16-byte and
 * byte copies), swap_blocks in each direction. An offset formed in 32 bits
 * writes elsewhere in the buffer or outside it. */
Test(cache_ops, cache_offsets_past_32_bits, .timeout = 600) {
    PA_SKIP_WITHOUT_GPU();
    const dt_pair bf = {PA_DTYPE_BF16, PA_DTYPE_BF16}, f8 = {PA_DTYPE_F16, PA_DTYPE_FP8_E4M3},
                  f32 = {PA_DTYPE_F32, PA_DTYPE_F32};
    g_far = 1;
    gpu_rc_case_slots(PA_LAYOUT_VLLM, bf, 128, 16, 2, 0, 61, 1);
    gpu_rc_case_slots(PA_LAYOUT_VLLM, f8, 128, 16, 2, 0, 62, 0);
    gpu_rc_case_slots(PA_LAYOUT_FLASH_NHD, bf, 64, 16, 2, 0, 63, 1);
    gpu_rc_case_slots(PA_LAYOUT_FLASH_HND, f8, 128, 32, 2, 0, 64, 0);
    gpu_rc_case_slots(PA_LAYOUT_COMBINED, bf, 128, 16, 2, 0, 65, 1);
    gpu_rc_case_slots(PA_LAYOUT_COMBINED, f8, 64, 16, 2, 2, 66, 0); /* misaligned input: scalar loads */
    gpu_rc_case_slots(PA_LAYOUT_FLASH_NHD, f32, 80, 16, 2, 0, 67, 0);
    gpu_kvu_case(PA_DTYPE_BF16, PA_DTYPE_BF16, 128, 16, 2, 0, 68);
    gpu_kvu_case(PA_DTYPE_F16, PA_DTYPE_FP8_E4M3, 64, 32, 2, 1, 69);
    static const int64_t map[][2] = {{1, 10}, {1, 11}, {2, 13}, {-1, -1}, {0, 23}, {5, 6}, {7, 20}};
    pa_rng r = pa_rng_make(70);
    copy_blocks_check(&r, 2, 1, 16 * 8 * 128, PA_DTYPE_F16, 24, map, 7, NULL, NULL, "copy_blocks f16, far blocks");
    copy_blocks_check(&r, 2, 1, 8 * 3 * 37, PA_DTYPE_FP8_E4M3, 24, map, 7, NULL, NULL, "copy_blocks fp8, far blocks");
    for (int kind = 0; kind < 3; kind++)
        gpu_swap_case(kind, kind == 2);
    g_far = 0;
    pa_test_far_done();
}

/* Random configurations: layers, with or without value buffers, dtype, block
 * size in elements (16-byte multiples and odd sizes), layer buffers at odd
 * offsets of their allocations (so one layer may take 16-byte copies and the
 * next bytes), and a mapping of distinct destinations that are never sources,
 * sources shared (prefix forks), padding (-1) and out-of-range pairs among
 * them: the device skips the latter, which the reference, rejecting them, is
 * given as padding. Byte for byte, every buffer compared whole. */
Test(cache_ops, copy_blocks_random_configurations, .timeout = 600) {
    PA_SKIP_WITHOUT_GPU();
    uint64_t seed;
    int first;
    const int n = pa_test_random_begin("cache_ops/copy_blocks_random_configurations", 24, &seed, &first);
    static const pa_dtype dts[5] = {PA_DTYPE_F32, PA_DTYPE_F16, PA_DTYPE_BF16, PA_DTYPE_FP8_E4M3, PA_DTYPE_FP8_E5M2};
    for (int it = first; it < first + n; it++) {
        pa_rng r = pa_test_random_rng(seed, it);
        const int L = pa_rng_int(&r, 1, CB_MAXL), with_values = pa_rng_int(&r, 0, 2) != 0;
        const pa_dtype dt = dts[pa_rng_int(&r, 0, 4)];
        const int es = (int)pa_dtype_size(dt);
        const int64_t numel =
            pa_rng_int(&r, 0, 1) ? (int64_t)(16 / es) * pa_rng_int(&r, 1, 300) : pa_rng_int(&r, 1, 2000);
        const int nb = pa_rng_int(&r, 2, 40);
        /* blocks shuffled: the first ns are the sources, the rest destinations */
        int *blk = shuffled_indices(&r, nb);
        const int ns = pa_rng_int(&r, 1, nb - 1), nd = pa_rng_int(&r, 1, nb - ns);
        const int nextra = pa_rng_int(&r, 0, 4), np = nd + nextra;
        int64_t(*map)[2] = malloc(sizeof(int64_t[2]) * (size_t)np);
        for (int k = 0; k < nd; k++) {
            map[k][0] = blk[pa_rng_int(&r, 0, ns - 1)];
            map[k][1] = blk[ns + k];
        }
        for (int k = nd; k < np; k++) { /* padding, or a pair the device must skip */
            const int w = pa_rng_int(&r, 0, 3);
            map[k][0] = w == 0 ? -1 : w == 1 ? nb + pa_rng_int(&r, 0, 5) : blk[pa_rng_int(&r, 0, ns - 1)];
            map[k][1] = w == 0 ? -1 : w == 1 ? blk[ns + pa_rng_int(&r, 0, nd - 1)] : w == 2 ? nb : -2;
        }
        for (int k = np - 1; k > 0; k--) {
            const int j = pa_rng_int(&r, 0, k);
            for (int f = 0; f < 2; f++) {
                const int64_t t = map[k][f];
                map[k][f] = map[j][f];
                map[j][f] = t;
            }
        }
        int offk[CB_MAXL], offv[CB_MAXL]; /* whole elements past a 16-byte boundary, or none */
        for (int l = 0; l < L; l++) {
            offk[l] = pa_rng_int(&r, 0, 1) ? 0 : pa_rng_int(&r, 1, 15) / es * es;
            offv[l] = pa_rng_int(&r, 0, 1) ? 0 : pa_rng_int(&r, 1, 15) / es * es;
        }
        char label[160];
        snprintf(label, sizeof label,
                 "copy_blocks draw %d: %d layers%s, %s, %lld elements a block, %d blocks, %d pairs (%d extra)", it, L,
                 with_values ? " with values" : "", pa_dtype_name(dt), (long long)numel, nb, np, nextra);
        fprintf(stderr, "  %s\n", label);
        copy_blocks_check(&r, L, with_values, numel, dt, nb, (const int64_t(*)[2])map, np, offk, offv, label);
        free(blk);
        free(map);
    }
}

Test(cache_ops, copy_blocks_skips_out_of_range_pairs) {
    PA_SKIP_WITHOUT_GPU();
    enum { NB = 4, BB = 64 };
    unsigned char h[NB * BB];
    for (int i = 0; i < NB * BB; i++)
        h[i] = (unsigned char)i;
    void *d = pa_test_dev_upload(h, sizeof h);
    uint64_t p = (uint64_t)(uintptr_t)d;
    uint64_t *dp = pa_test_dev_upload(&p, sizeof p);
    const int64_t map[][2] = {{0, 4}, {4, 0}, {-3, 1}, {1, -2}};
    int64_t *dm = pa_test_dev_upload(map, sizeof map);
    cr_assert_eq(pa_copy_blocks(dp, NULL, 1, dm, 4, BB, PA_DTYPE_FP8_E5M2, NB, NULL), PA_SUCCESS);
    pa_test_dev_sync();
    unsigned char got[NB * BB];
    pa_test_dev_download(got, d, sizeof got);
    assert_same(got, h, sizeof h, "copy_blocks out-of-range pairs");
    pa_test_dev_free(d);
    pa_test_dev_free(dp);
    pa_test_dev_free(dm);
}

/* ---- bad input: validation before any CUDA call, so these run everywhere ------------- */

Test(cache_ops, entries_reject_bad_input_without_launching) {
    /* Pointers that would fault if anything touched them: validation must stop first. */
    void *bogus = (void *)(uintptr_t)0x10;
    pa_kv_cache c;
    memset(&c, 0, sizeof c);
    c.layout = PA_LAYOUT_VLLM;
    c.dtype = PA_DTYPE_F16;
    c.num_blocks = 4;
    c.block_size = 16;
    c.num_kv_heads = 2;
    c.head_size = 64;
    c.key = c.value = bogus;
    pa_kv_input in = {bogus, bogus, PA_DTYPE_F16, 8, 0, 0, 0, 0};
    assert_fail(pa_reshape_and_cache(&in, NULL, &c, NULL), PA_ERR_INVALID_ARGUMENT, "slot_mapping");
    in.dtype = PA_DTYPE_F32;
    assert_fail(pa_reshape_and_cache(&in, bogus, &c, NULL), PA_ERR_UNSUPPORTED, "unsupported");
    in.dtype = PA_DTYPE_F16;
    in.value_head_stride = -4;
    assert_fail(pa_reshape_and_cache(&in, bogus, &c, NULL), PA_ERR_INVALID_ARGUMENT, "value_head_stride");
    in.value_head_stride = 0;
    c.num_blocks = 0;
    assert_fail(pa_reshape_and_cache(&in, bogus, &c, NULL), PA_ERR_INVALID_ARGUMENT, "num_blocks");
    c.num_blocks = 4;
    in.num_tokens = 0; /* nothing to do: success without touching anything */
    cr_assert_eq(pa_reshape_and_cache(&in, NULL, &c, NULL), PA_SUCCESS);

    assert_fail(pa_kv_cache_update(bogus, PA_DTYPE_F16, 4, 0, bogus, bogus, 8, &c, NULL), PA_ERR_UNSUPPORTED,
                "only combined");
    c.layout = PA_LAYOUT_COMBINED;
    c.value = NULL;
    assert_fail(pa_kv_cache_update(bogus, PA_DTYPE_F16, 4, 0, bogus, NULL, 8, &c, NULL), PA_ERR_INVALID_ARGUMENT,
                "num_slices");
    assert_fail(pa_kv_cache_update(bogus, PA_DTYPE_F16, 4, 0, bogus, bogus, -1, &c, NULL), PA_ERR_INVALID_ARGUMENT,
                "slices_capacity must be >= 0");
    cr_assert_eq(pa_kv_cache_update(bogus, PA_DTYPE_F16, 4, 0, NULL, NULL, 0, &c, NULL), PA_SUCCESS);

    const int64_t map[][2] = {{0, 1}, {2, 7}};
    assert_fail(pa_swap_blocks(bogus, bogus, 128, &map[0][0], 2, 4, 4, NULL), PA_ERR_INVALID_ARGUMENT,
                "block_mapping[1] dst block 7");
    assert_fail(pa_swap_blocks(bogus, bogus, -1, &map[0][0], 2, 4, 8, NULL), PA_ERR_INVALID_ARGUMENT, "block_bytes");
    cr_assert_eq(pa_swap_blocks(NULL, NULL, 128, NULL, 0, 0, 0, NULL), PA_SUCCESS);
    pa_kv_cache c2 = c;
    c2.head_size = 128;
    assert_fail(pa_swap_blocks_kv(&c2, &c, &map[0][0], 1, NULL), PA_ERR_INVALID_ARGUMENT, "differ");
    /* The key buffers and the mapping go through swap_blocks' checks: their
     * errors say whose call it was and which buffers "src" and "dst" are
     * (they read "swap_blocks: ..." before 2026-12-07, 23rd session). */
    assert_fail(pa_swap_blocks_kv(&c, &c, &map[0][0], 2, NULL), PA_ERR_INVALID_ARGUMENT,
                "swap_blocks_kv (its key buffers: the src buffer is src.key, the dst buffer dst.key): swap_blocks: "
                "block_mapping[1] dst block 7");
    pa_kv_cache s1 = c, s2 = c;
    s1.layout = s2.layout = PA_LAYOUT_FLASH_NHD;
    s1.value = s2.value = bogus;
    s1.block_stride = s2.block_stride = 2 * 16 * 2 * 64; /* K of a [blocks, 2, ...] view */
    assert_fail(pa_swap_blocks_kv(&s1, &s2, &map[0][0], 1, NULL), PA_ERR_UNSUPPORTED, "do not tile");

    assert_fail(pa_copy_blocks(bogus, bogus, 4, NULL, 3, 1024, PA_DTYPE_F16, 8, NULL), PA_ERR_INVALID_ARGUMENT,
                "block_mapping");
    assert_fail(pa_copy_blocks(NULL, bogus, 4, bogus, 3, 1024, PA_DTYPE_F16, 8, NULL), PA_ERR_INVALID_ARGUMENT,
                "key_caches");
    assert_fail(pa_copy_blocks(bogus, bogus, 4, bogus, 3, 0, PA_DTYPE_F16, 8, NULL), PA_ERR_INVALID_ARGUMENT,
                "numel_per_block");
    assert_fail(pa_copy_blocks(bogus, bogus, 70000, bogus, 3, 16, PA_DTYPE_F16, 8, NULL), PA_ERR_UNSUPPORTED,
                "num_layers");
    cr_assert_eq(pa_copy_blocks(NULL, NULL, 0, NULL, 0, 16, PA_DTYPE_F16, 8, NULL), PA_SUCCESS);

    /* Pointers off their element size (a kernel's whole-element load would fault
     * on the device), rows too long for the launchers' arithmetic, and swap
     * buffers that overlap: refused before anything runs. */
    char *b = (char *)bogus;
    pa_kv_cache v = c;
    v.layout = PA_LAYOUT_VLLM;
    v.key = v.value = bogus;
    pa_kv_input mis = {b + 1, bogus, PA_DTYPE_F16, 8, 0, 0, 0, 0};
    assert_fail(pa_reshape_and_cache(&mis, bogus, &v, NULL), PA_ERR_INVALID_ARGUMENT, "key (");
    mis.key = bogus;
    mis.value = b + 3;
    assert_fail(pa_reshape_and_cache(&mis, bogus, &v, NULL), PA_ERR_INVALID_ARGUMENT, "value (");
    mis.value = bogus;
    assert_fail(pa_reshape_and_cache(&mis, (const int64_t *)(b + 4), &v, NULL), PA_ERR_INVALID_ARGUMENT,
                "slot_mapping");
    v.value = b + 1;
    assert_fail(pa_reshape_and_cache(&mis, bogus, &v, NULL), PA_ERR_INVALID_ARGUMENT, "cache value");
    v.value = bogus;
    v.k_scale = (const float *)(b + 2);
    v.dtype = PA_DTYPE_FP8_E4M3;
    assert_fail(pa_reshape_and_cache(&mis, bogus, &v, NULL), PA_ERR_INVALID_ARGUMENT, "k_scale");
    v.dtype = PA_DTYPE_F16; /* kv_cache.h: not fp8, so its scales are neither read nor checked */
    v.v_scale = (const float *)(b + 1);
    v.layout = PA_LAYOUT_FLASH_NHD;
    v.num_blocks = 1;
    v.block_size = 1;
    v.num_kv_heads = 1 << 20; /* 2^26-element rows: a valid cache, past the launchers' int arithmetic */
    assert_fail(pa_reshape_and_cache(&mis, bogus, &v, NULL), PA_ERR_UNSUPPORTED, "2^24");
    v.k_scale = v.v_scale = NULL;
    c.layout = PA_LAYOUT_COMBINED;
    c.value = NULL;
    assert_fail(pa_kv_cache_update(b + 1, PA_DTYPE_F16, 4, 0, bogus, bogus, 8, &c, NULL), PA_ERR_INVALID_ARGUMENT,
                "new_kv");
    assert_fail(pa_kv_cache_update(bogus, PA_DTYPE_F16, 4, 0, (const int32_t *)(b + 2), bogus, 8, &c, NULL),
                PA_ERR_INVALID_ARGUMENT, "slices (");
    assert_fail(pa_kv_cache_update(bogus, PA_DTYPE_F16, 4, 0, bogus, (const int32_t *)(b + 1), 8, &c, NULL),
                PA_ERR_INVALID_ARGUMENT, "num_slices (");
    const int64_t one[][2] = {{0, 1}};
    assert_fail(pa_swap_blocks(b + 128, bogus, 128, &one[0][0], 1, 4, 4, NULL), PA_ERR_INVALID_ARGUMENT, "overlap");
    assert_fail(pa_swap_blocks(bogus, b + 511, 128, &one[0][0], 1, 4, 4, NULL), PA_ERR_INVALID_ARGUMENT, "overlap");
    pa_kv_cache k1 = v, k2 = v; /* swap_blocks_kv: one cache's value buffer over the other's key, */
    k1.num_kv_heads = k2.num_kv_heads = 2;
    k1.block_size = k2.block_size = 16;
    k1.num_blocks = k2.num_blocks = 4;
    k1.key = b + (1 << 20);
    k1.value = bogus;
    k2.key = b + (2 << 20);
    k2.value = b + (1 << 20);
    assert_fail(pa_swap_blocks_kv(&k2, &k1, &one[0][0], 1, NULL), PA_ERR_INVALID_ARGUMENT, "overlap");
    k2.value = bogus; /* ... over the other's value buffer */
    assert_fail(pa_swap_blocks_kv(&k2, &k1, &one[0][0], 1, NULL), PA_ERR_INVALID_ARGUMENT, "overlap");
    k2.key = bogus; /* one cache's key buffer over the other's value buffer */
    k2.value = b + (3 << 20);
    assert_fail(pa_swap_blocks_kv(&k2, &k1, &one[0][0], 1, NULL), PA_ERR_INVALID_ARGUMENT, "overlap");
    assert_fail(pa_copy_blocks(bogus, bogus, 4, (const int64_t *)(b + 4), 3, 1024, PA_DTYPE_F16, 8, NULL),
                PA_ERR_INVALID_ARGUMENT, "block_mapping (");
    assert_fail(pa_copy_blocks((const uint64_t *)(b + 4), bogus, 4, bogus, 3, 1024, PA_DTYPE_F16, 8, NULL),
                PA_ERR_INVALID_ARGUMENT, "key_caches (");
    assert_fail(pa_copy_blocks(bogus, (const uint64_t *)(b + 4), 4, bogus, 3, 1024, PA_DTYPE_F16, 8, NULL),
                PA_ERR_INVALID_ARGUMENT, "value_caches (");
}

/* swap_blocks_kv sizes each buffer by its own cache's blocks, and compares
 * the resolved geometry whole (cache_ops.h), before anything runs (pointers a
 * launch would fault on; this runs everywhere). NHD f16, 16 slots of 2 heads of
 * 64: 4096 bytes a block. Found unchecked by a blind mutation pass: the dst
 * key/value overlap sized as one block, the mapping in dst.value unchecked, the
 * src buffers sized by dst's block count, the head stride left out of the
 * geometry, and the same-buffer refusal (whose message names it) each failed
 * no test. */
Test(cache_ops, swap_blocks_kv_sizes_each_buffer) {
    char *b = (char *)(uintptr_t)0x10;
    const int64_t blk = 16 * 2 * 64 * 2;
    pa_kv_cache s = {.layout = PA_LAYOUT_FLASH_NHD,
                     .dtype = PA_DTYPE_F16,
                     .key = b + (1 << 20),
                     .value = b + (2 << 20),
                     .num_blocks = 4,
                     .block_size = 16,
                     .num_kv_heads = 2,
                     .head_size = 64};
    pa_kv_cache d = s;
    d.key = b + (3 << 20);
    d.value = b + (3 << 20) + 2 * blk; /* dst.value on dst.key's blocks 2 and 3 */
    const int64_t one[][2] = {{0, 1}};
    assert_fail(pa_swap_blocks_kv(&d, &s, &one[0][0], 1, NULL), PA_ERR_INVALID_ARGUMENT, "overlap");
    d.value = d.key;
    assert_fail(pa_swap_blocks_kv(&d, &s, &one[0][0], 1, NULL), PA_ERR_INVALID_ARGUMENT, "same buffer");
    /* the mapping (read on the host here, so a real array) inside dst.value */
    static int64_t mv[16] = {[8] = 0, [9] = 1};
    int64_t *map = mv + 8;
    d.value = mv;
    assert_fail(pa_swap_blocks_kv(&d, &s, map, 1, NULL), PA_ERR_INVALID_ARGUMENT, "block_mapping lies in dst.value");
    /* src of 8 blocks, dst of 4: dst.value on src.value's block 6 */
    pa_kv_cache s8 = s;
    s8.num_blocks = 8;
    d.value = (char *)s8.value + 6 * blk;
    assert_fail(pa_swap_blocks_kv(&d, &s8, &one[0][0], 1, NULL), PA_ERR_INVALID_ARGUMENT, "overlaps a src buffer");
    /* HND caches whose heads are 1024 and 2048 elements apart (blocks 4096 apart in both) */
    pa_kv_cache h1 = s, h2 = s;
    h1.layout = h2.layout = PA_LAYOUT_FLASH_HND;
    h2.key = b + (4 << 20);
    h2.value = b + (5 << 20);
    h1.block_stride = h2.block_stride = 4096;
    h1.head_stride = 1024;
    h2.head_stride = 2048;
    assert_fail(pa_swap_blocks_kv(&h2, &h1, &one[0][0], 1, NULL), PA_ERR_INVALID_ARGUMENT, "differ");
}

/* ---- every route of the cache writes --------------------------------------------------
 * As decode_routes (tests/gpu/test_decode.c): reshape_and_cache picks its kernel
 * and geometry from the shape (vLLM's layout through shared memory while a
 * row fits, else the generic kernel, whose threads per token follow the KV
 * heads and the head size in vectors; the vector loads where the views allow),
 * kv_cache_update its rows per CTA from the same and the page size. The grids
 * and random draws above each cover some. This walk goes over KV heads (1, 3,
 * 8, 40) x head size (1..16, then every 4 to 256 past 16) x dtype pair x
 * layout x block size (1, 3, 8, 16, 24, 32, 64, 128) x view (contiguous,
 * strided, misaligned, both) and runs each shape that is the first of a class,
 * byte for byte against the reference (cache pre-filled with a sentinel):
 *   A  layout (kv_cache_update: combined), dtype pair, view;
 *   B  vLLM or not, input and cache element sizes, head size;
 *   C  layout, block size;
 *   D  vLLM or not, cache element size, KV heads;
 *   E  layout, view, KV heads (a head's offset in a strided view). */
static uint64_t cache_route_class(int fam, pa_kv_layout layout, dt_pair dp, int hs, int bs, int nh, int variant) {
    const uint64_t vllm = layout == PA_LAYOUT_VLLM, ein = pa_dtype_size(dp.in), ec = pa_dtype_size(dp.cache);
    switch (fam) {
    case 0: return (uint64_t)layout | (uint64_t)dp.in << 4 | (uint64_t)dp.cache << 8 | (uint64_t)variant << 12;
    case 1: return vllm | ein << 4 | ec << 8 | (uint64_t)hs << 12;
    case 2: return (uint64_t)layout | (uint64_t)bs << 4;
    case 3: return vllm | ec << 4 | (uint64_t)nh << 8;
    default: return (uint64_t)layout | (uint64_t)variant << 4 | (uint64_t)nh << 8;
    }
}

/* Adds the shape's classes to seen[*n]; 1 if any was new. */
static int cache_route_fresh(uint64_t *seen, int *n, int cap, pa_kv_layout layout, dt_pair dp, int hs, int bs, int nh,
                             int variant) {
    int fresh = 0;
    for (int f = 0; f < 5; f++) {
        const uint64_t key = cache_route_class(f, layout, dp, hs, bs, nh, variant) * 8 + (uint64_t)f;
        int have = 0;
        for (int i = 0; i < *n && !have; i++)
            have = seen[i] == key;
        if (!have) {
            cr_assert_lt(*n, cap);
            seen[(*n)++] = key;
            fresh = 1;
        }
    }
    return fresh;
}

static int cache_route_head(int i) { return i < 16 ? i + 1 : 16 + 4 * (i - 15); } /* 1..16, 20, 24, ..., 256 */
#define CACHE_ROUTE_HEADS (16 + 60)

Test(cache_routes, reshape_and_cache_every_route, .timeout = 600) {
    PA_SKIP_WITHOUT_GPU();
    static const pa_kv_layout layouts[4] = {PA_LAYOUT_VLLM, PA_LAYOUT_FLASH_NHD, PA_LAYOUT_FLASH_HND,
                                            PA_LAYOUT_COMBINED};
    static const int nhs[4] = {1, 3, 8, 40}, bss[8] = {1, 3, 8, 16, 24, 32, 64, 128};
    static uint64_t seen[2048];
    int n = 0, ran = 0, shapes = 0;
    for (int h = 0; h < 4; h++)
        for (int i = 0; i < CACHE_ROUTE_HEADS; i++)
            for (int p = 0; p < NPAIRS; p++)
                for (int l = 0; l < 4; l++)
                    for (int b = 0; b < 8; b++)
                        for (int v = 0; v < 4; v++) {
                            const int hs = cache_route_head(i);
                            if (layouts[l] == PA_LAYOUT_VLLM && hs % (int)(16 / pa_dtype_size(pairs[p].cache)) != 0)
                                continue; /* vLLM's keys: whole 16-byte chunks */
                            shapes++;
                            if (!cache_route_fresh(seen, &n, 2048, layouts[l], pairs[p], hs, bss[b], nhs[h], v))
                                continue;
                            ran++;
                            gpu_rc_case(layouts[l], pairs[p], hs, bss[b], nhs[h], v, 71000u + (uint64_t)shapes);
                        }
    cr_log_info("cache_routes: reshape_and_cache %d of %d shapes run, %d classes", ran, shapes, n);
    cr_assert_gt(ran, 4 * NPAIRS * 4, "%d shapes ran", ran);
}

Test(cache_routes, kv_cache_update_every_route, .timeout = 600) {
    PA_SKIP_WITHOUT_GPU();
    dt_pair kp[NPAIRS + 2];
    for (int p = 0; p < NPAIRS; p++)
        kp[p] = pairs[p];
    kp[NPAIRS] = (dt_pair){PA_DTYPE_FP8_E4M3, PA_DTYPE_FP8_E4M3};
    kp[NPAIRS + 1] = (dt_pair){PA_DTYPE_FP8_E5M2, PA_DTYPE_FP8_E5M2};
    static const int nhs[4] = {1, 3, 8, 40}, bss[8] = {1, 3, 8, 16, 24, 32, 64, 128};
    static uint64_t seen[2048];
    int n = 0, ran = 0, shapes = 0;
    for (int h = 0; h < 4; h++)
        for (int i = 0; i < CACHE_ROUTE_HEADS; i++)
            for (int p = 0; p < NPAIRS + 2; p++)
                for (int b = 0; b < 8; b++)
                    for (int v = 0; v < 4; v++) {
                        const int hs = cache_route_head(i);
                        shapes++;
                        if (!cache_route_fresh(seen, &n, 2048, PA_LAYOUT_COMBINED, kp[p], hs, bss[b], nhs[h], v))
                            continue;
                        ran++;
                        gpu_kvu_case(kp[p].in, kp[p].cache, hs, bss[b], nhs[h], v, 72000u + (uint64_t)shapes);
                    }
    cr_log_info("cache_routes: kv_cache_update %d of %d shapes run, %d classes", ran, shapes, n);
    cr_assert_gt(ran, (NPAIRS + 2) * 4, "%d shapes ran", ran);
}

/* cache_ops.h: no entry synchronises, allocates or copies behind the caller's
 * back and per-step data is read on the device, "so every launch can be captured
 * in a CUDA graph". Each op that says so, captured (pa_test_launch under
 * pa_test_graph: a capture that broke fails) and replayed, its caches checked
 * against the reference as eagerly: reshape_and_cache into every layout (vLLM's
 * shared-memory kernel on runs of slots and its per-token kernel, fp8 with
 * scales), kv_cache_update, copy_blocks (16-byte and byte copies). swap_blocks,
 * whose mapping is on the host, has its own (swap_blocks_under_graph_capture). */
Test(cache_ops, entries_replay_from_cuda_graphs) {
    PA_SKIP_WITHOUT_GPU();
    pa_test_graph = 1;
    gpu_rc_case(PA_LAYOUT_VLLM, pairs[1], 128, 16, 4, 0, 61000u);
    gpu_rc_case_slots(PA_LAYOUT_VLLM, pairs[5], 64, 16, 2, 1, 61001u, 1);
    gpu_rc_case(PA_LAYOUT_FLASH_NHD, pairs[4], 80, 8, 3, 1, 61002u);
    gpu_rc_case(PA_LAYOUT_FLASH_HND, pairs[2], 64, 32, 2, 2, 61003u);
    gpu_rc_case(PA_LAYOUT_COMBINED, pairs[7], 120, 16, 2, 3, 61004u);
    gpu_kvu_case(PA_DTYPE_BF16, PA_DTYPE_FP8_E4M3, 128, 16, 2, 1, 61005u);
    gpu_copy_case(1, 16 * 8 * 128, PA_DTYPE_F16);
    gpu_copy_case(0, 8 * 3 * 37, PA_DTYPE_FP8_E4M3);
    pa_test_graph = 0;
}
