/* First GPU tests: device info and a kernel round trip. Skip without a GPU. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "testutil.h"

Test(gpu_basic, device_info) {
    PA_SKIP_WITHOUT_GPU();
    pa_device_props p;
    cr_assert_eq(pa_device_info(0, &p), PA_SUCCESS, "%s", pa_last_error());
    cr_assert(p.sm_count > 0 && p.cc_major >= 8, "sm %d cc %d.%d", p.sm_count, p.cc_major, p.cc_minor);
    cr_assert(strlen(p.name) > 0);
    cr_assert(p.smem_per_block_optin >= 48 * 1024);
    cr_assert_eq(pa_device_info(p.device + 1000, &p), PA_ERR_INVALID_ARGUMENT);
    /* The first index past the last device, and *out left as it was (until
     * 2026-12-07 it was zeroed before the range check). */
    const int n = pa_device_count();
    cr_assert(n >= 1);
    memset(&p, 0x5A, sizeof p);
    const pa_device_props before = p;
    cr_assert_eq(pa_device_info(n, &p), PA_ERR_INVALID_ARGUMENT, "%s", pa_last_error());
    cr_assert_eq(memcmp(&p, &before, sizeof p), 0, "out written on a rejected call");
    cr_assert_eq(pa_device_info(n - 1, &p), PA_SUCCESS, "%s", pa_last_error());
}

/* The first of n elements of dtype t where got and want differ, other than as
 * two NaNs; -1 when none does. */
static int64_t first_difference(pa_dtype t, const unsigned char *got, const unsigned char *want, int64_t n) {
    const size_t es = pa_dtype_size(t);
    for (int64_t i = 0; i < n; i++)
        if (memcmp(got + i * (int64_t)es, want + i * (int64_t)es, es) != 0 &&
            !(isnan(pa_load_as_float(t, got, (size_t)i)) && isnan(pa_load_as_float(t, want, (size_t)i))))
            return i;
    return -1;
}

typedef struct convert_launch {
    void *dst;
    pa_dtype dst_dtype;
    const void *src;
    pa_dtype src_dtype;
    int64_t n;
    const float *scale;
} convert_launch;
static pa_status convert_run(void *ctx, pa_stream s) {
    const convert_launch *a = ctx;
    return pa_convert(a->dst, a->dst_dtype, a->src, a->src_dtype, a->n, a->scale, s);
}

/* Each dtype from f32 (70000 elements of a wide range, ties and values past
 * every dtype's range, with and without a scale), through pa_test_launch: from
 * a CUDA graph under pa_test_graph (convert_replays_from_a_cuda_graph). */
static void convert_from_f32_case(void) {
    pa_rng rng = pa_rng_make(42);
    const int64_t n = 70000;
    float *src = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        /* wide dynamic range, both signs, exact ties and out-of-range values */
        float mag = ldexpf(pa_rng_uniform(&rng, 1.0f, 2.0f), pa_rng_int(&rng, -30, 20));
        src[i] = (i % 2 ? -mag : mag);
    }
    src[0] = 464.0f;
    src[1] = 65520.0f;
    src[2] = 0.0f;
    src[3] = -0.0f;
    float scale_h = 0.37f;
    float *d_src = pa_test_dev_upload(src, sizeof(float) * (size_t)n);
    float *d_scale = pa_test_dev_upload(&scale_h, sizeof(float));
    void *d_dst = pa_test_dev_alloc(sizeof(float) * (size_t)n);
    unsigned char *got = malloc(sizeof(float) * (size_t)n), *want = malloc(sizeof(float) * (size_t)n);
    for (int t = 0; t < PA_DTYPE_COUNT; t++)
        for (int use_scale = 0; use_scale < 2; use_scale++) {
            const convert_launch cl = {d_dst, (pa_dtype)t, d_src, PA_DTYPE_F32, n, use_scale ? d_scale : NULL};
            cr_assert_eq(pa_test_launch(convert_run, (void *)&cl), PA_SUCCESS, "%s", pa_last_error());
            pa_test_dev_sync();
            size_t bytes = (size_t)n * pa_dtype_size((pa_dtype)t);
            pa_test_dev_download(got, d_dst, bytes);
            cr_assert_eq(pa_ref_convert(want, (pa_dtype)t, src, PA_DTYPE_F32, n, use_scale ? &scale_h : NULL),
                         PA_SUCCESS);
            const int64_t i = first_difference((pa_dtype)t, got, want, n);
            if (i >= 0)
                cr_assert_fail("%s scale=%d: element %lld of %g: device %g host %g", pa_dtype_name((pa_dtype)t),
                               use_scale, (long long)i, src[i], pa_load_as_float((pa_dtype)t, got, (size_t)i),
                               pa_load_as_float((pa_dtype)t, want, (size_t)i));
        }
    pa_test_dev_free(d_src);
    pa_test_dev_free(d_scale);
    pa_test_dev_free(d_dst);
    free(src);
    free(got);
    free(want);
}

/* Every source code of every dtype through the device conversion must equal
 * the host conversion bit for bit, with and without an fp8 scale. */
Test(gpu_basic, convert_matches_host_bitwise) {
    PA_SKIP_WITHOUT_GPU();
    convert_from_f32_case();
}

/* The same conversions captured into a CUDA graph and replayed (pa_test_graph;
 * a capture that broke fails): convert.h's entry reads its scale on the device
 * and neither synchronises nor allocates. */
Test(gpu_basic, convert_replays_from_a_cuda_graph) {
    PA_SKIP_WITHOUT_GPU();
    pa_test_graph = 1;
    convert_from_f32_case();
    pa_test_graph = 0;
}

/* Every code of each 8- and 16-bit dtype (all 256 fp8 codes, all 65536 f16
 * and bf16 codes: NaNs, infinities, subnormals, both zeros) through the device
 * conversion to every dtype equals the host conversion bit for bit (a NaN may
 * come out as any NaN), with and without an fp8 scale: the kernels' loads of
 * fp8 and 16-bit elements (pa::to_float) and the roundings after them. In
 * interpret mode the device side is the CUDA headers' host code. */
Test(gpu_basic, convert_every_code_matches_host_bitwise) {
    PA_SKIP_WITHOUT_GPU();
    static const pa_dtype srcs[] = {PA_DTYPE_F16, PA_DTYPE_BF16, PA_DTYPE_FP8_E4M3, PA_DTYPE_FP8_E5M2};
    const float scale_h = 0.37f;
    float *d_scale = pa_test_dev_upload(&scale_h, sizeof(float));
    void *d_dst = pa_test_dev_alloc(sizeof(float) * 65536);
    unsigned char *codes = malloc(2 * 65536), *got = malloc(sizeof(float) * 65536),
                  *want = malloc(sizeof(float) * 65536);
    cr_assert(codes && got && want);
    for (size_t si = 0; si < sizeof srcs / sizeof srcs[0]; si++) {
        const pa_dtype sd = srcs[si];
        const size_t ss = pa_dtype_size(sd);
        const int64_t n = ss == 1 ? 256 : 65536;
        for (int64_t i = 0; i < n; i++) { /* code i, little-endian */
            codes[i * (int64_t)ss] = (unsigned char)(i & 0xff);
            if (ss == 2)
                codes[i * 2 + 1] = (unsigned char)(i >> 8);
        }
        void *d_src = pa_test_dev_upload(codes, (size_t)n * ss);
        for (int t = 0; t < PA_DTYPE_COUNT; t++)
            for (int use_scale = 0; use_scale < 2; use_scale++) {
                const size_t es = pa_dtype_size((pa_dtype)t);
                cr_assert_eq(pa_convert(d_dst, (pa_dtype)t, d_src, sd, n, use_scale ? d_scale : NULL, NULL), PA_SUCCESS,
                             "%s", pa_last_error());
                pa_test_dev_sync();
                pa_test_dev_download(got, d_dst, (size_t)n * es);
                cr_assert_eq(pa_ref_convert(want, (pa_dtype)t, codes, sd, n, use_scale ? &scale_h : NULL), PA_SUCCESS);
                const int64_t i = first_difference((pa_dtype)t, got, want, n);
                if (i >= 0)
                    cr_assert_fail("%s -> %s scale=%d: code 0x%llx: device %g host %g", pa_dtype_name(sd),
                                   pa_dtype_name((pa_dtype)t), use_scale, (long long)i,
                                   pa_load_as_float((pa_dtype)t, got, (size_t)i),
                                   pa_load_as_float((pa_dtype)t, want, (size_t)i));
            }
        pa_test_dev_free(d_src);
    }
    pa_test_dev_free(d_scale);
    pa_test_dev_free(d_dst);
    free(codes);
    free(got);
    free(want);
}

/* Every dtype pair over pointers the chunked path takes (16-byte aligned
 * source, destination aligned to its store), at a base past the buffer's start
 * too, and over pointers it must not (a source or destination off by one or
 * more elements: an element a thread), with lengths that leave 1 to VEC - 1
 * elements after the last chunk, or fewer than one chunk. The converted
 * elements equal the host's bit for bit and every destination byte before and
 * after them keeps its sentinel. In interpret mode a vector access off its
 * alignment aborts, as it faults on the device. */
Test(gpu_basic, convert_chunks_tails_and_offsets_match_host_bitwise) {
    PA_SKIP_WITHOUT_GPU();
    static const int64_t lens[] = {1, 3, 15, 17, 1000, 1027};
    enum { PAD = 64 }; /* elements of sentinel past the last converted one */
    pa_rng rng = pa_rng_make(7);
    const float scale_h = 0.37f;
    float *d_scale = pa_test_dev_upload(&scale_h, sizeof(float));
    float vals[1027 + 32];
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        vals[i] = pa_rng_uniform(&rng, -6.0f, 6.0f); /* distinct codes in every dtype, fp8 included */
    unsigned char *src = malloc(sizeof vals), *want = malloc(sizeof(float) * (1027 + 32 + PAD)),
                  *got = malloc(sizeof(float) * (1027 + 32 + PAD)),
                  *sentinel = malloc(sizeof(float) * (1027 + 32 + PAD));
    cr_assert(src && want && got && sentinel);
    memset(sentinel, 0xA5, sizeof(float) * (1027 + 32 + PAD));
    int chunked = 0, unchunked = 0;
    for (int sd = 0; sd < PA_DTYPE_COUNT; sd++)
        for (int td = 0; td < PA_DTYPE_COUNT; td++) {
            const size_t ss = pa_dtype_size((pa_dtype)sd), ts = pa_dtype_size((pa_dtype)td);
            const int vec = (int)(16 / ss);
            const size_t store = vec * ts < 16 ? vec * ts : 16;
            const int fp8 = pa_dtype_is_fp8((pa_dtype)sd) || pa_dtype_is_fp8((pa_dtype)td);
            /* element offsets from the buffers' starts (16-byte aligned; a GPU's are 256) */
            const int offs[][2] = {{0, 0}, {vec, vec}, {1, 0}, {0, 1}, {5, 3}};
            for (size_t oi = 0; oi < sizeof offs / sizeof offs[0]; oi++)
                for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
                    const int so = offs[oi][0], to = offs[oi][1];
                    const int64_t n = lens[li];
                    /* the source: vals in the source dtype (with the scale where it is fp8) */
                    cr_assert_eq(pa_ref_convert(src, (pa_dtype)sd, vals, PA_DTYPE_F32, so + n, fp8 ? &scale_h : NULL),
                                 PA_SUCCESS);
                    unsigned char *d_src = pa_test_dev_upload(src, (size_t)(so + n) * ss);
                    const size_t dst_bytes = (size_t)(to + n + PAD) * ts;
                    unsigned char *d_dst = pa_test_dev_upload(sentinel, dst_bytes);
                    const int takes_chunks = ((so * ss) % 16 == 0) && ((to * ts) % store == 0) && n >= vec;
                    chunked += takes_chunks;
                    unchunked += !takes_chunks;
                    cr_assert_eq(pa_convert(d_dst + (size_t)to * ts, (pa_dtype)td, d_src + (size_t)so * ss,
                                            (pa_dtype)sd, n, fp8 ? d_scale : NULL, NULL),
                                 PA_SUCCESS, "%s", pa_last_error());
                    pa_test_dev_sync();
                    pa_test_dev_download(got, d_dst, dst_bytes);
                    memcpy(want, sentinel, dst_bytes);
                    cr_assert_eq(pa_ref_convert(want + (size_t)to * ts, (pa_dtype)td, src + (size_t)so * ss,
                                                (pa_dtype)sd, n, fp8 ? &scale_h : NULL),
                                 PA_SUCCESS);
                    for (size_t b = 0; b < dst_bytes; b++)
                        if (b < (size_t)to * ts || b >= (size_t)(to + n) * ts)
                            cr_assert_eq(
                                got[b], 0xA5, "%s -> %s offsets %d/%d n %lld: byte %zu outside the output written",
                                pa_dtype_name((pa_dtype)sd), pa_dtype_name((pa_dtype)td), so, to, (long long)n, b);
                    const int64_t i = first_difference((pa_dtype)td, got + (size_t)to * ts, want + (size_t)to * ts, n);
                    if (i >= 0)
                        cr_assert_fail("%s -> %s offsets %d/%d n %lld: element %lld: device %g host %g",
                                       pa_dtype_name((pa_dtype)sd), pa_dtype_name((pa_dtype)td), so, to, (long long)n,
                                       (long long)i, pa_load_as_float((pa_dtype)td, got + (size_t)to * ts, (size_t)i),
                                       pa_load_as_float((pa_dtype)td, want + (size_t)to * ts, (size_t)i));
                    pa_test_dev_free(d_src);
                    pa_test_dev_free(d_dst);
                }
        }
    cr_assert(chunked > 0 && unchunked > 0, "chunked %d, element-wise %d", chunked, unchunked);
    pa_test_dev_free(d_scale);
    free(src);
    free(want);
    free(got);
    free(sentinel);
}

/* f32 values whose quotient by the scale lies a few ulps either side of a
 * midpoint between two fp8 values (every midpoint of both fp8 dtypes, both
 * signs, the quotient stepped 10 ulps down and up), for scales whose reciprocal
 * is a normal float and for two whose reciprocal is not (infinite, subnormal).
 * There the quotient's last bit decides the fp8 code, so a product with the
 * scale's reciprocal, which differs from the IEEE quotient in the last bit now
 * and then, stores other codes (the host counts how many it would here: the
 * test holds data that can tell them apart). The device's codes must equal the
 * reference's, which divides: a kernel that multiplied by the reciprocal, as
 * some quantisation kernels do, fails here (random data rarely lands within
 * a step of a midpoint: about 1 value in 10^6). */
Test(gpu_basic, convert_quotients_next_to_fp8_midpoints) {
    PA_SKIP_WITHOUT_GPU();
    static const float scales[] = {0.37f,    1.0f,  3.0f,        1.0f / 3.0f,
                                   0.1f,     7.0f,  1.99999988f, 1.00000012f,
                                   0.0123f,  5e-5f, 1048577.0f,  0x1.4cccccp+126f /* 1/s subnormal */,
                                   0x1p-130f /* 1/s infinite */};
    static const pa_dtype dts[] = {PA_DTYPE_FP8_E4M3, PA_DTYPE_FP8_E5M2};
    enum { STEPS = 10, MAXN = 2 * 127 * (2 * STEPS + 1) };
    float *x = malloc(sizeof(float) * MAXN), *prod = malloc(sizeof(float) * MAXN);
    unsigned char *got = malloc(MAXN), *want = malloc(MAXN), *naive = malloc(MAXN);
    cr_assert(x && prod && got && want && naive);
    unsigned char *d_out = pa_test_dev_alloc(MAXN);
    int64_t product_differs = 0;
    for (size_t ti = 0; ti < sizeof dts / sizeof dts[0]; ti++)
        for (size_t si = 0; si < sizeof scales / sizeof scales[0]; si++) {
            const pa_dtype t = dts[ti];
            const float sc = scales[si], r = 1.0f / sc;
            const int64_t n = pa_test_fp8_midpoint_inputs(t, sc, STEPS, x, MAXN);
            for (int64_t i = 0; i < n; i++)
                prod[i] = x[i] * r;
            float *d_scale = pa_test_dev_upload(&sc, sizeof sc),
                  *d_x = pa_test_dev_upload(x, sizeof(float) * (size_t)n);
            cr_assert_eq(pa_convert(d_out, t, d_x, PA_DTYPE_F32, n, d_scale, NULL), PA_SUCCESS, "%s", pa_last_error());
            pa_test_dev_sync();
            pa_test_dev_download(got, d_out, (size_t)n);
            cr_assert_eq(pa_ref_convert(want, t, x, PA_DTYPE_F32, n, &sc), PA_SUCCESS);
            cr_assert_eq(pa_ref_convert(naive, t, prod, PA_DTYPE_F32, n, NULL), PA_SUCCESS);
            pa_test_dev_free(d_x);
            pa_test_dev_free(d_scale);
            for (int64_t i = 0; i < n; i++) {
                product_differs += naive[i] != want[i];
                if (got[i] != want[i])
                    cr_assert_fail("%s scale %a: x %a (x / scale %a): device 0x%02x host 0x%02x", pa_dtype_name(t),
                                   (double)sc, (double)x[i], (double)(x[i] / sc), got[i], want[i]);
            }
        }
    cr_assert(product_differs > 0, "no input here where the reciprocal's product stores another code");
    pa_test_dev_free(d_out);
    free(x);
    free(prod);
    free(got);
    free(want);
    free(naive);
}

/* A CUDA error pending before a call (the caller's own: here an invalid device
 * number it never read back) is not taken for the call's: every entry checks
 * before its first CUDA call, reports it as pending, leaves it for its owner
 * and launches nothing; once the owner has read it, the call runs. Before,
 * the launch's own check read it as the launch's failure and cleared it. */
Test(gpu_basic, a_pending_cuda_error_is_left_for_its_owner) {
    PA_SKIP_WITHOUT_GPU();
    enum { n = 64 };
    float src[n];
    uint16_t got[n], was[n];
    for (int i = 0; i < n; i++)
        src[i] = (float)i;
    memset(was, 0xA5, sizeof was);
    float *d_src = pa_test_dev_upload(src, sizeof src);
    uint16_t *d_dst = pa_test_dev_upload(was, sizeof was);
    cr_assert_eq(cudaSetDevice(1 << 20), cudaErrorInvalidDevice);
    cr_assert_eq(pa_convert(d_dst, PA_DTYPE_F16, d_src, PA_DTYPE_F32, n, NULL, NULL), PA_ERR_CUDA);
    cr_assert(strstr(pa_last_error(), "pa_convert: a CUDA error was pending") != NULL, "%s", pa_last_error());
    cr_assert(strstr(pa_last_error(), "cudaErrorInvalidDevice") != NULL, "%s", pa_last_error());
    /* the merge entry too (its arguments are checked first: none of them is read) */
    float lse[2] = {0.0f, 0.0f};
    float *d_lse = pa_test_dev_upload(lse, sizeof lse);
    const pa_merge_attn_states_params mp = {.dtype = PA_DTYPE_F16,
                                            .num_tokens = 1,
                                            .num_heads = 1,
                                            .head_size = 8,
                                            .output = d_dst,
                                            .prefix_output = d_dst + 8,
                                            .suffix_output = d_dst + 16,
                                            .prefix_lse = d_lse,
                                            .suffix_lse = d_lse + 1};
    cr_assert_eq(pa_merge_attn_states(&mp, NULL), PA_ERR_CUDA, "%s", pa_last_error());
    cr_assert(strstr(pa_last_error(), "pa_merge_attn_states: a CUDA error was pending") != NULL, "%s", pa_last_error());
    cr_assert_eq(cudaGetLastError(), cudaErrorInvalidDevice, "the caller's error was cleared");
    cr_assert_eq(cudaGetLastError(), cudaSuccess);
    pa_test_dev_download(got, d_dst, sizeof got);
    cr_assert_eq(memcmp(got, was, sizeof got), 0, "something ran");
    cr_assert_eq(pa_convert(d_dst, PA_DTYPE_F16, d_src, PA_DTYPE_F32, n, NULL, NULL), PA_SUCCESS, "%s",
                 pa_last_error());
    pa_test_dev_sync();
    pa_test_dev_download(got, d_dst, sizeof got);
    for (int i = 0; i < n; i++)
        cr_assert_eq(pa_half_to_float(got[i]), src[i]);
}

Test(gpu_basic, convert_rejects_bad_input_without_launching) {
    /* Validation happens before any CUDA call, so this runs everywhere. */
    cr_assert_eq(pa_convert(NULL, PA_DTYPE_F16, NULL, PA_DTYPE_F32, 10, NULL, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pa_convert(NULL, (pa_dtype)17, NULL, PA_DTYPE_F32, 0, NULL, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pa_convert(NULL, PA_DTYPE_F16, NULL, PA_DTYPE_F32, -1, NULL, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert_eq(pa_convert(NULL, PA_DTYPE_F16, NULL, PA_DTYPE_F32, 0, NULL, NULL), PA_SUCCESS);
    /* pointers off their element size (whole-element loads would fault), and
     * overlapping buffers (no in-place conversion): refused, nothing touched */
    char *b = (char *)(uintptr_t)0x1000;
    cr_assert_eq(pa_convert(b + 2, PA_DTYPE_F32, b + 4096, PA_DTYPE_F16, 10, NULL, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "dst ("), "%s", pa_last_error());
    cr_assert_eq(pa_convert(b, PA_DTYPE_F16, b + 4097, PA_DTYPE_F16, 10, NULL, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "src ("), "%s", pa_last_error());
    cr_assert_eq(pa_convert(b, PA_DTYPE_BF16, b + 12, PA_DTYPE_F32, 10, NULL, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "overlap"), "%s", pa_last_error());
    cr_assert_eq(pa_convert(b, PA_DTYPE_F16, b, PA_DTYPE_F16, 10, NULL, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "overlap"), "%s", pa_last_error());
    cr_assert_eq(pa_convert(b, PA_DTYPE_FP8_E4M3, b + 4096, PA_DTYPE_F32, 10, (const float *)(b + 4098), NULL),
                 PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "scale ("), "%s", pa_last_error());
    /* every thread reads the scale while others write dst (convert.h): a scale
     * on dst's last 4 bytes (12 e4m3 codes) is refused */
    cr_assert_eq(pa_convert(b, PA_DTYPE_FP8_E4M3, b + 4096, PA_DTYPE_F32, 12, (const float *)(b + 8), NULL),
                 PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "convert: scale lies inside dst"), "%s", pa_last_error());
    /* dst's bytes are counted in dst's element size: 12 f32 from e4m3 are 48
     * bytes, so a scale 40 bytes into dst is inside it (a mutation pass counted
     * them in src's: 12 bytes) */
    cr_assert_eq(pa_convert(b, PA_DTYPE_F32, b + 4096, PA_DTYPE_FP8_E4M3, 12, (const float *)(b + 40), NULL),
                 PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "convert: scale lies inside dst"), "%s", pa_last_error());
    /* convert.h: with no fp8 side the scale is ignored: not checked (nor read) */
    cr_assert_eq(pa_convert(NULL, PA_DTYPE_F32, NULL, PA_DTYPE_F16, 0, (const float *)(b + 2), NULL), PA_SUCCESS, "%s",
                 pa_last_error());
    cr_assert_eq(pa_convert(NULL, PA_DTYPE_FP8_E5M2, NULL, PA_DTYPE_F16, 0, (const float *)(b + 2), NULL),
                 PA_ERR_INVALID_ARGUMENT);
}

/* ---- pa_merge_attn_states against pa_ref_merge_attn_states ------------------------------------------------------ */

/* One merge problem: T tokens, H heads, head size hs; the three outputs' rows
 * at strides of their own (0 = packed), starting off[] elements past their
 * buffers' 16-byte-aligned starts; the lse arrays at (head, token) strides
 * (0, 0 = [H, T]); output in place over the prefix (in_place 1) or not. */
typedef struct merge_case {
    pa_dtype t;
    int T, H, hs;
    int64_t so, sa, sb; /* row strides, elements */
    int off[3];         /* elements the output, prefix and suffix buffers start past 16 bytes */
    int64_t lhs, lts;   /* lse strides */
    int in_place, with_lse;
} merge_case;

/* The lse pair of a row, drawn from the kinds a server meets: finite at
 * gaps small and large, a part empty (-inf, or FlashAttention-2's +inf),
 * both empty, a weight that underflows, a NaN (beside a finite lse, or beside
 * an empty part, where a maximum taken with fmaxf would drop the NaN and give
 * an empty row). *drop_a / *drop_b: that part's weight is 0, so its row may
 * hold NaN (and does). */
static void merge_lse_pair(pa_rng *r, float *la, float *lb, int *drop_a, int *drop_b) {
    static const int weights[] = {50, 8, 8, 6, 6, 4, 6, 4, 4, 4, 4};
    const float empty = pa_rng_int(r, 0, 1) ? INFINITY : -INFINITY;
    *la = pa_rng_uniform(r, -20.0f, 20.0f);
    *lb = *la + pa_rng_uniform(r, -12.0f, 12.0f);
    *drop_a = *drop_b = 0;
    switch (pa_test_pick_weighted(r, weights, 11)) {
    case 1: *la = empty, *drop_a = 1; break;
    case 2: *lb = empty, *drop_b = 1; break;
    case 3: *la = empty, *lb = pa_rng_int(r, 0, 1) ? INFINITY : -INFINITY, *drop_a = *drop_b = 1; break;
    case 4: *lb = *la - 150.0f, *drop_b = 1; break;
    case 5: *la = *lb - 150.0f, *drop_a = 1; break;
    case 6: *lb = *la; break;
    case 7: *la = NAN; break;
    case 8: *lb = NAN; break;
    case 9: *la = *lb = 88.0f + pa_rng_uniform(r, 0.0f, 1.0f); break; /* e^lse past f32: only differences count */
    case 10: /* NaN beside an empty part: still a row of NaN (merge.h) */
        if (pa_rng_int(r, 0, 1))
            *la = NAN, *lb = empty, *drop_b = 1;
        else
            *la = empty, *lb = NAN, *drop_a = 1;
        break;
    }
}

static size_t merge_bytes(int T, int64_t stride, int64_t row, int off, size_t es) {
    return ((size_t)off + (size_t)((T - 1) * stride + row)) * es + 64; /* 64 bytes of guard after */
}

static pa_status merge_run(void *ctx, pa_stream s) { return pa_merge_attn_states(ctx, s); }

static void run_merge_case(const merge_case *c, pa_rng *r, int ci) {
    const size_t es = pa_dtype_size(c->t);
    const int64_t row = (int64_t)c->H * c->hs;
    const int64_t so = c->so ? c->so : row, sa = c->sa ? c->sa : row, sb = c->sb ? c->sb : row;
    const int64_t lhs = c->lhs ? c->lhs : c->T, lts = c->lts ? c->lts : 1;
    const int off_o = c->in_place ? c->off[1] : c->off[0], off_a = c->off[1],
              off_b = c->off[2]; /* in place: the prefix's */
    const size_t ab = merge_bytes(c->T, sa, row, off_a, es), bb = merge_bytes(c->T, sb, row, off_b, es),
                 ob = c->in_place ? ab : merge_bytes(c->T, so, row, off_o, es);
    const size_t ln = (size_t)((c->H - 1) * lhs + (c->T - 1) * lts + 1);
    unsigned char *A = malloc(ab), *B = malloc(bb), *O = malloc(ob), *got = malloc(ob);
    float *la = malloc(ln * 4), *lb = malloc(ln * 4), *lo = malloc(ln * 4), *lgot = malloc(ln * 4);
    cr_assert(A && B && O && got && la && lb && lo && lgot);
    memset(A, 0x7f, ab); /* NaN bytes off the rows: nothing reads them */
    memset(B, 0x7f, bb);
    memset(O, 0x5a, ob);
    for (size_t i = 0; i < ln; i++)
        la[i] = lb[i] = NAN, lo[i] = 1234.5f;
    for (int tk = 0; tk < c->T; tk++)
        for (int h = 0; h < c->H; h++) {
            const size_t li = (size_t)(h * lhs + tk * lts);
            int da, db;
            merge_lse_pair(r, &la[li], &lb[li], &da, &db);
            for (int d = 0; d < c->hs; d++) {
                const size_t ia = (size_t)(off_a + tk * sa + h * c->hs + d);
                const size_t ib = (size_t)(off_b + tk * sb + h * c->hs + d);
                pa_store_from_float(c->t, A, ia, da ? NAN : pa_rng_uniform(r, -4.0f, 4.0f));
                pa_store_from_float(c->t, B, ib, db ? NAN : pa_rng_uniform(r, -4.0f, 4.0f));
            }
        }
    /* device first (it gets the untouched inputs), then the reference on host copies */
    unsigned char *dA = pa_test_dev_upload(A, ab), *dB = pa_test_dev_upload(B, bb);
    unsigned char *dO = c->in_place ? dA : pa_test_dev_upload(O, ob);
    float *dla = pa_test_dev_upload(la, ln * 4), *dlb = pa_test_dev_upload(lb, ln * 4);
    float *dlo = pa_test_dev_upload(lo, ln * 4);
    pa_merge_attn_states_params p = {.dtype = c->t,
                                     .num_tokens = c->T,
                                     .num_heads = c->H,
                                     .head_size = c->hs,
                                     .out_stride = c->so,
                                     .prefix_stride = c->sa,
                                     .suffix_stride = c->sb,
                                     .lse_head_stride = c->lhs,
                                     .lse_token_stride = c->lts};
    pa_merge_attn_states_params d = p;
    d.output = dO + off_o * es, d.prefix_output = dA + off_a * es, d.suffix_output = dB + off_b * es;
    d.prefix_lse = dla, d.suffix_lse = dlb, d.output_lse = c->with_lse ? dlo : NULL;
    cr_assert_eq(pa_test_launch(merge_run, &d), PA_SUCCESS, "case %d: %s", ci, pa_last_error());
    pa_test_dev_sync();
    pa_test_dev_download(got, dO, ob);
    pa_test_dev_download(lgot, dlo, ln * 4);
    unsigned char *Ai = malloc(ab); /* the prefix's input bytes, for the tolerance (in place overwrites A) */
    memcpy(Ai, A, ab);
    if (c->in_place)
        memcpy(O, A, ab);
    pa_merge_attn_states_params h = p;
    h.output = c->in_place ? (void *)(A + off_a * es) : (void *)(O + off_o * es);
    h.prefix_output = A + off_a * es, h.suffix_output = B + off_b * es;
    h.prefix_lse = la, h.suffix_lse = lb, h.output_lse = c->with_lse ? lo : NULL;
    cr_assert_eq(pa_ref_merge_attn_states(&h), PA_SUCCESS, "%s", pa_last_error());
    const unsigned char *want = c->in_place ? A : O;
    /* Off the rows: the bytes as they were. On them: the reference's values, to a few f32 units of
     * the weights (the device's expf and logf are not the host's) and one rounding of the dtype. */
    const double u = c->t == PA_DTYPE_F32 ? 0x1p-23 : c->t == PA_DTYPE_F16 ? 0x1p-10 : 0x1p-7;
    for (size_t b = 0; b < ob; b++) {
        const size_t e = b / es;
        const int64_t rel = (int64_t)e - off_o;
        const int64_t tk = rel >= 0 ? rel / so : -1, col = rel >= 0 ? rel % so : -1;
        const int on_row = rel >= 0 && tk < c->T && col < row;
        if (!on_row) {
            CHK_EQ(got[b], want[b], "case %d: byte %zu off the rows changed", ci, b);
            continue;
        }
        if (b % es)
            continue;
        const float g = pa_load_as_float(c->t, got, e), w = pa_load_as_float(c->t, want, e);
        const float xa = pa_load_as_float(c->t, Ai, (size_t)(off_a + tk * sa + col));
        const float xb = pa_load_as_float(c->t, B, (size_t)(off_b + tk * sb + col));
        const double mag = (isnan(xa) ? 0.0 : fabs(xa)) + (isnan(xb) ? 0.0 : fabs(xb));
        const int ok = isnan(w) ? isnan(g) : fabs((double)g - w) <= u * fabs(w) + 4e-7 * mag;
        CHK(ok, "case %d (%s T %d H %d hs %d): token %lld head %lld dim %lld: device %.9g reference %.9g", ci,
            pa_dtype_name(c->t), c->T, c->H, c->hs, (long long)tk, (long long)(col / c->hs), (long long)(col % c->hs),
            (double)g, (double)w);
    }
    for (size_t i = 0; i < ln; i++) {
        const float g = lgot[i], w = lo[i];
        const int ok = isnan(w) ? isnan(g) : isinf(w) ? g == w : fabs((double)g - w) <= 1e-6 * (1.0 + fabs(w));
        CHK(ok, "case %d: output_lse[%zu]: device %.9g reference %.9g", ci, i, (double)g, (double)w);
    }
    pa_test_dev_free(dA), pa_test_dev_free(dB), pa_test_dev_free(dla), pa_test_dev_free(dlb), pa_test_dev_free(dlo);
    if (!c->in_place)
        pa_test_dev_free(dO);
    free(A), free(B), free(O), free(got), free(la), free(lb), free(lo), free(lgot), free(Ai);
}

/* Every dtype over head sizes on both chunk widths (16-byte chunks where the
 * head allows; one element otherwise, heads 1, 3 and 1001), rows of more
 * chunks than a CTA row has threads (f32 at 1000, 16-bit at 2048; 1001
 * elements), CTAs of one row and of many, with and without output_lse. */
Test(merge_states, matches_reference) {
    PA_SKIP_WITHOUT_GPU();
    static const int shapes[][3] = {{1, 1, 1},   {7, 3, 3},   {130, 2, 8},  {33, 3, 96},  {9, 2, 128},
                                    {5, 1, 256}, {3, 2, 264}, {2, 1, 1000}, {2, 1, 1001}, {2, 1, 2048}};
    pa_rng r = pa_rng_make(2026);
    int ci = 0;
    for (size_t di = 0; di < 3; di++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++, ci++) {
            const merge_case c = {.t = (pa_dtype)di,
                                  .T = shapes[si][0],
                                  .H = shapes[si][1],
                                  .hs = shapes[si][2],
                                  .with_lse = (int)(ci % 3 != 2)};
            run_merge_case(&c, &r, ci);
        }
}

/* Strided rows (16-byte strides keep the chunks; an odd one, or a buffer one
 * element past 16 bytes, takes elements), FlashInfer's [T, H] lse with
 * padding, and the output in place over the prefix: the bytes off the rows
 * stay as they were. */
Test(merge_states, strided_rows_lse_layouts_and_in_place) {
    PA_SKIP_WITHOUT_GPU();
    pa_rng r = pa_rng_make(4048);
    int ci = 100;
    for (int di = 0; di < 3; di++) {
        const pa_dtype t = (pa_dtype)di;
        const int T = 6, H = 3, hs = 64, row = H * hs, v = 16 / (int)pa_dtype_size(t);
        const merge_case cases[] = {
            /* 16-byte strides; FlashInfer's [T, H] lse, padded to H + 1 */
            {.t = t,
             .T = T,
             .H = H,
             .hs = hs,
             .so = row + v,
             .sa = row + 3 * v,
             .sb = row + 2 * v,
             .lhs = 1,
             .lts = H + 1,
             .with_lse = 1},
            /* odd strides, then the suffix's alone: elements */
            {.t = t, .T = T, .H = H, .hs = hs, .so = row + 1, .sa = row + 5, .with_lse = 1},
            {.t = t, .T = T, .H = H, .hs = hs, .sb = row + 3},
            /* one element past 16 bytes: all three buffers, the output alone, the suffix alone */
            {.t = t, .T = T, .H = H, .hs = hs, .off = {1, 1, 1}, .with_lse = 1},
            {.t = t, .T = T, .H = H, .hs = hs, .off = {1, 0, 0}, .with_lse = 1},
            {.t = t, .T = T, .H = H, .hs = hs, .off = {0, 0, 1}},
            /* in place: packed, strided with a padded [H, T + 2] lse, one element past 16 bytes */
            {.t = t, .T = T, .H = H, .hs = hs, .in_place = 1, .with_lse = 1},
            {.t = t, .T = T, .H = H, .hs = hs, .so = row + v, .sa = row + v, .lhs = T + 2, .lts = 1, .in_place = 1},
            {.t = t, .T = T, .H = H, .hs = hs, .off = {0, 1, 0}, .in_place = 1, .with_lse = 1},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++, ci++)
            run_merge_case(&cases[i], &r, ci);
    }
}

/* Captured into a CUDA graph and replayed (pa_test_graph; a capture that broke
 * fails), checked against the reference as eagerly: each dtype, 16-byte chunks
 * and elements, with and without output_lse, and in place. */
Test(merge_states, replays_from_a_cuda_graph) {
    PA_SKIP_WITHOUT_GPU();
    pa_rng r = pa_rng_make(4096);
    pa_test_graph = 1;
    for (int di = 0; di < 3; di++) {
        const pa_dtype t = (pa_dtype)di;
        const merge_case cases[] = {{.t = t, .T = 33, .H = 3, .hs = 96, .with_lse = 1},
                                    {.t = t, .T = 7, .H = 2, .hs = 3},
                                    {.t = t, .T = 6, .H = 3, .hs = 64, .in_place = 1, .with_lse = 1}};
        for (int i = 0; i < 3; i++)
            run_merge_case(&cases[i], &r, 200 + 3 * di + i);
    }
    pa_test_graph = 0;
}

/* Refusals happen before any CUDA call, so this runs everywhere. */
Test(merge_states, refuses_without_launching) {
    char *b = (char *)(uintptr_t)0x10000;
    pa_merge_attn_states_params p = {.dtype = PA_DTYPE_F16,
                                     .num_tokens = 4,
                                     .num_heads = 2,
                                     .head_size = 64,
                                     .output = b,
                                     .prefix_output = b + 4096,
                                     .suffix_output = b + 8192,
                                     .prefix_lse = (const float *)(b + 12288),
                                     .suffix_lse = (const float *)(b + 12800)};
    cr_assert_eq(pa_merge_attn_states_validate(&p), PA_SUCCESS, "%s", pa_last_error());
    pa_merge_attn_states_params q = p;
    q.dtype = PA_DTYPE_FP8_E5M2;
    cr_assert_eq(pa_merge_attn_states(&q, NULL), PA_ERR_INVALID_ARGUMENT);
    q = p, q.output = b + 4098; /* inside prefix_output, not it */
    cr_assert_eq(pa_merge_attn_states(&q, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "overlaps prefix_output"), "%s", pa_last_error());
    q = p, q.suffix_output = b + 8193;
    cr_assert_eq(pa_merge_attn_states(&q, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "suffix_output ("), "%s", pa_last_error());
    q = p, q.output_lse = (float *)(b + 12288 + 16);
    cr_assert_eq(pa_merge_attn_states(&q, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "output_lse overlaps prefix_lse"), "%s", pa_last_error());
    q = p, q.num_tokens = 0, q.output = NULL;
    cr_assert_eq(pa_merge_attn_states(&q, NULL), PA_SUCCESS, "%s", pa_last_error());
}
