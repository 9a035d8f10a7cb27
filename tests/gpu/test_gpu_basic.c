/* First GPU tests: device info and a kernel round trip. Skip without a GPU. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

Test(gpu_basic, device_info) {
    PA_SKIP_WITHOUT_GPU();
    pa_device_props p;
    cr_assert_eq(pa_device_info(0, &p), PA_SUCCESS, "%s", pa_last_error());
    cr_assert(p.sm_count > 0 && p.cc_major >= 8, "sm %d cc %d.%d", p.sm_count, p.cc_major, p.cc_minor);
    cr_assert(strlen(p.name) > 0);
    cr_assert(p.smem_per_block_optin >= 48 * 1024);
    cr_assert_eq(pa_device_info(p.device + 1000, &p), PA_ERR_INVALID_ARGUMENT);
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

/* Every source code of every dtype through the device conversion must equal
 * the host conversion bit for bit, with and without an fp8 scale. */
Test(gpu_basic, convert_matches_host_bitwise) {
    PA_SKIP_WITHOUT_GPU();
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
            const float *sc = use_scale ? d_scale : NULL;
            cr_assert_eq(pa_convert(d_dst, (pa_dtype)t, d_src, PA_DTYPE_F32, n, sc, NULL), PA_SUCCESS, "%s",
                         pa_last_error());
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
}
