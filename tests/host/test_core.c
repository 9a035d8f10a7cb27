/* Status strings, errors, dtypes and the host scalar conversions. Expected
 * values come from the format definitions (IEEE binary16, bfloat16, OCP fp8),
 * not from the code under test. */
#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "pagedattn/pagedattn.h"

Test(core, version_matches_macros) {
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", PA_VERSION_MAJOR, PA_VERSION_MINOR, PA_VERSION_PATCH);
    cr_assert_str_eq(pa_version(), want);
    cr_assert_eq(pa_version_number(), PA_VERSION_NUMBER);
}

Test(core, status_numbers_are_stable_and_named) {
    cr_assert_eq(PA_SUCCESS, 0);
    cr_assert_eq(PA_ERR_INVALID_ARGUMENT, 1);
    cr_assert_eq(PA_ERR_UNSUPPORTED, 2);
    cr_assert_eq(PA_ERR_NO_DEVICE, 3);
    cr_assert_eq(PA_ERR_CUDA, 4);
    for (int s = 0; s <= 6; s++)
        cr_assert(strcmp(pa_status_string((pa_status)s), "unknown status") != 0, "status %d has no string", s);
    cr_assert_str_eq(pa_status_string((pa_status)99), "unknown status");
}

Test(core, dtype_sizes_and_names_round_trip) {
    const size_t sizes[PA_DTYPE_COUNT] = {4, 2, 2, 1, 1};
    for (int t = 0; t < PA_DTYPE_COUNT; t++) {
        cr_assert_eq(pa_dtype_size((pa_dtype)t), sizes[t]);
        pa_dtype back;
        cr_assert_eq(pa_dtype_from_name(pa_dtype_name((pa_dtype)t), &back), PA_SUCCESS);
        cr_assert_eq(back, (pa_dtype)t);
    }
    cr_assert_eq(pa_dtype_size((pa_dtype)42), 0);
    pa_dtype d;
    cr_assert_eq(pa_dtype_from_name("fp8", &d), PA_SUCCESS);
    cr_assert_eq(d, PA_DTYPE_FP8_E4M3);
    cr_assert_eq(pa_dtype_from_name("bfloat16", &d), PA_SUCCESS);
    cr_assert_eq(d, PA_DTYPE_BF16);
    /* core.h's whole list of other spellings, each to its dtype */
    static const struct {
        const char *name;
        pa_dtype t;
    } more[] = {{"float32", PA_DTYPE_F32}, {"float", PA_DTYPE_F32},     {"float16", PA_DTYPE_F16},
                {"half", PA_DTYPE_F16},    {"e4m3", PA_DTYPE_FP8_E4M3}, {"e5m2", PA_DTYPE_FP8_E5M2}};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
        d = (pa_dtype)77;
        cr_assert_eq(pa_dtype_from_name(more[i].name, &d), PA_SUCCESS, "%s", more[i].name);
        cr_assert_eq(d, more[i].t, "%s", more[i].name);
    }
    /* and nothing else: vLLM's "auto", other cases, fp8 names it does not take */
    static const char *const bad[] = {"auto", "F16", "Float16", "fp8_e4m3fn", "e4m3fn", "fp16", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        d = (pa_dtype)77;
        cr_assert_eq(pa_dtype_from_name(bad[i], &d), PA_ERR_INVALID_ARGUMENT, "'%s'", bad[i]);
        cr_assert_eq((int)d, 77, "'%s'", bad[i]);
    }
}

Test(core, unknown_dtype_name_is_invalid_with_message) {
    pa_dtype d = PA_DTYPE_F32;
    cr_assert_eq(pa_dtype_from_name("int4", &d), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "int4") != NULL, "message: %s", pa_last_error());
    cr_assert_eq(pa_dtype_from_name(NULL, &d), PA_ERR_INVALID_ARGUMENT);
}

static void *other_thread(void *arg) {
    (void)arg;
    pa_dtype d;
    (void)pa_dtype_from_name("from-other-thread", &d);
    return NULL;
}

Test(core, last_error_is_thread_local) {
    pa_dtype d;
    cr_assert_eq(pa_dtype_from_name("mine", &d), PA_ERR_INVALID_ARGUMENT);
    pthread_t th;
    pthread_create(&th, NULL, other_thread, NULL);
    pthread_join(th, NULL);
    cr_assert(strstr(pa_last_error(), "mine") != NULL, "got: %s", pa_last_error());
}

Test(core, f16_known_values) {
    cr_assert_eq(pa_float_to_half(1.0f), 0x3C00);
    cr_assert_eq(pa_float_to_half(-2.0f), 0xC000);
    cr_assert_eq(pa_float_to_half(65504.0f), 0x7BFF);
    cr_assert_eq(pa_float_to_half(65519.0f), 0x7BFF);                 /* below the rounding midpoint */
    cr_assert_eq(pa_float_to_half(65520.0f), 0x7C00);                 /* midpoint rounds to even: infinity */
    cr_assert_eq(pa_float_to_half(ldexpf(1.0f, -24)), 0x0001);        /* smallest subnormal */
    cr_assert_eq(pa_float_to_half(ldexpf(1.0f, -25)), 0x0000);        /* tie to even: zero */
    cr_assert_eq(pa_float_to_half(ldexpf(3.0f, -25)), 0x0002);        /* 1.5 quanta: tie to even, 2 */
    cr_assert_eq(pa_float_to_half(1.0f + ldexpf(1.0f, -11)), 0x3C00); /* tie: down to even */
    cr_assert_eq(pa_float_to_half(1.0f + ldexpf(3.0f, -11)), 0x3C02); /* tie: up to even */
    cr_assert_eq(pa_float_to_half(INFINITY), 0x7C00);
    cr_assert(isnan(pa_half_to_float(pa_float_to_half(NAN))));
    cr_assert_float_eq(pa_half_to_float(0x3555), 0.333251953125f, 0.0f);
}

Test(core, f16_every_code_round_trips) {
    for (uint32_t c = 0; c < 65536; c++) {
        float f = pa_half_to_float((uint16_t)c);
        if (isnan(f))
            continue;
        cr_assert_eq(pa_float_to_half(f), c, "code 0x%04x -> %g -> 0x%04x", c, f, pa_float_to_half(f));
    }
}

Test(core, bf16_known_values_and_round_trip) {
    cr_assert_eq(pa_float_to_bf16(1.0f), 0x3F80);
    cr_assert_eq(pa_float_to_bf16(1.0f + ldexpf(1.0f, -8)), 0x3F80); /* tie to even */
    cr_assert_eq(pa_float_to_bf16(1.0f + ldexpf(3.0f, -8)), 0x3F82);
    cr_assert(isnan(pa_bf16_to_float(pa_float_to_bf16(NAN))));
    for (uint32_t c = 0; c < 65536; c++) {
        float f = pa_bf16_to_float((uint16_t)c);
        if (isnan(f))
            continue;
        cr_assert_eq(pa_float_to_bf16(f), c, "bf16 code 0x%04x", c);
    }
}

Test(core, fp8_e4m3_known_values) {
    cr_assert_eq(pa_float_to_fp8_e4m3(1.0f), 0x38);
    cr_assert_eq(pa_float_to_fp8_e4m3(448.0f), 0x7E);
    cr_assert_eq(pa_float_to_fp8_e4m3(464.0f), 0x7E); /* tie between 448 and 480: even is 448 */
    cr_assert_eq(pa_float_to_fp8_e4m3(1e9f), 0x7E);   /* saturates, never NaN */
    cr_assert_eq(pa_float_to_fp8_e4m3(-1e9f), 0xFE);
    cr_assert_eq(pa_float_to_fp8_e4m3(INFINITY), 0x7E);
    cr_assert_eq(pa_float_to_fp8_e4m3(ldexpf(1.0f, -9)), 0x01); /* smallest subnormal */
    cr_assert_eq(pa_float_to_fp8_e4m3(ldexpf(1.0f, -6)), 0x08); /* smallest normal */
    cr_assert(isnan(pa_fp8_e4m3_to_float(0x7F)));
    cr_assert(isnan(pa_fp8_e4m3_to_float(0xFF)));
    cr_assert_float_eq(pa_fp8_e4m3_to_float(0x7E), 448.0f, 0.0f);
}

Test(core, fp8_e5m2_known_values) {
    cr_assert_eq(pa_float_to_fp8_e5m2(1.0f), 0x3C);
    cr_assert_eq(pa_float_to_fp8_e5m2(57344.0f), 0x7B);
    cr_assert_eq(pa_float_to_fp8_e5m2(1e9f), 0x7B);
    cr_assert_eq(pa_float_to_fp8_e5m2(INFINITY), 0x7B);
    cr_assert_eq(pa_float_to_fp8_e5m2(ldexpf(1.0f, -16)), 0x01);
    cr_assert(isinf(pa_fp8_e5m2_to_float(0x7C)));
    cr_assert(isnan(pa_fp8_e5m2_to_float(0x7D)));
}

Test(core, fp8_every_finite_code_round_trips_and_orders) {
    for (int fmt = 0; fmt < 2; fmt++) {
        float prev = -1.0f;
        for (uint32_t c = 0; c < 128; c++) {
            float f = fmt ? pa_fp8_e5m2_to_float((uint8_t)c) : pa_fp8_e4m3_to_float((uint8_t)c);
            if (!isfinite(f))
                continue;
            cr_assert(f > prev, "fmt %d code %u not increasing", fmt, c);
            prev = f;
            uint8_t back = fmt ? pa_float_to_fp8_e5m2(f) : pa_float_to_fp8_e4m3(f);
            cr_assert_eq(back, c, "fmt %d code 0x%02x -> %g -> 0x%02x", fmt, c, f, back);
            float neg = fmt ? pa_fp8_e5m2_to_float((uint8_t)(c | 0x80)) : pa_fp8_e4m3_to_float((uint8_t)(c | 0x80));
            cr_assert_float_eq(neg, -f, 0.0f);
        }
    }
}

/* The small formats from their definitions alone: a code's value by the formula
 * (-1)^s 2^(e - bias) (1 + m / 2^mbits) (2^(1 - bias) m / 2^mbits at e = 0), and a
 * float's code as the nearest of those values, a tie to the even code, by a
 * binary search over the ordered positive codes; past the largest finite value
 * fp8 saturates and f16 goes to infinity (its tie at 65520 included, as the
 * "next" code 0x7C00 is even). Inputs: every code, every midpoint between
 * neighbouring codes and the floats either side of it, both signs, and a
 * stride through all 2^32 float bit patterns (NaNs, infinities and float
 * subnormals among them). */
typedef struct fmt_def {
    const char *name;
    int mbits, bias, sign_shift;
    unsigned max_finite, nan_code, inf_code; /* inf_code 0: none */
    int saturate;
    float (*decode)(unsigned);
    unsigned (*encode)(float);
} fmt_def;

static float dec_f16(unsigned c) { return pa_half_to_float((uint16_t)c); }
static unsigned enc_f16(float x) { return pa_float_to_half(x); }
static float dec_e4m3(unsigned c) { return pa_fp8_e4m3_to_float((uint8_t)c); }
static unsigned enc_e4m3(float x) { return pa_float_to_fp8_e4m3(x); }
static float dec_e5m2(unsigned c) { return pa_fp8_e5m2_to_float((uint8_t)c); }
static unsigned enc_e5m2(float x) { return pa_float_to_fp8_e5m2(x); }

static const fmt_def FORMATS[3] = {
    {"f16", 10, 15, 15, 0x7BFF, 0x7E00, 0x7C00, 0, dec_f16, enc_f16},
    {"e4m3", 3, 7, 7, 0x7E, 0x7F, 0, 1, dec_e4m3, enc_e4m3},
    {"e5m2", 2, 15, 7, 0x7B, 0x7F, 0x7C, 1, dec_e5m2, enc_e5m2},
};

/* The value of positive code c by the normal/subnormal formula (also for the
 * code just past max_finite: the value rounding would reach there). */
static double def_value(const fmt_def *f, unsigned c) {
    const unsigned e = c >> f->mbits, m = c & ((1u << f->mbits) - 1u);
    const double frac = (double)m / (double)(1u << f->mbits);
    return e == 0 ? ldexp(frac, 1 - f->bias) : ldexp(1.0 + frac, (int)e - f->bias);
}

static unsigned def_encode(const fmt_def *f, float x) {
    const unsigned sign = signbit(x) ? 1u << f->sign_shift : 0u;
    if (isnan(x))
        return sign | f->nan_code;
    const double a = fabs((double)x);
    unsigned lo = 0, hi = f->max_finite; /* the largest code with value <= a, by bisection */
    if (a >= def_value(f, f->max_finite))
        lo = f->max_finite;
    else
        while (hi - lo > 1) {
            const unsigned mid = (lo + hi) / 2;
            if (def_value(f, mid) <= a)
                lo = mid;
            else
                hi = mid;
        }
    unsigned c = lo;
    if (def_value(f, lo) != a) {
        const double below = a - def_value(f, lo), above = def_value(f, lo + 1) - a;
        c = below < above || (below == above && lo % 2 == 0) ? lo : lo + 1;
    }
    if (c > f->max_finite)
        c = f->saturate ? f->max_finite : f->inf_code;
    return sign | c;
}

static void expect_encode(const fmt_def *f, float x) {
    const unsigned want = def_encode(f, x), got = f->encode(x);
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    cr_assert_eq(got, want, "%s: float 0x%08x (%.9g) -> 0x%x, by definition 0x%x", f->name, u, (double)x, got, want);
}

Test(core, small_floats_match_their_definitions) {
    for (int k = 0; k < 3; k++) {
        const fmt_def *f = &FORMATS[k];
        const unsigned codes = 1u << (f->sign_shift + 1);
        for (unsigned c = 0; c < codes; c++) {
            const unsigned body = c & ((1u << f->sign_shift) - 1u);
            const float got = f->decode(c);
            if (body == f->inf_code && f->inf_code) {
                cr_assert(isinf(got) && !signbit(got) == !(c >> f->sign_shift), "%s code 0x%x", f->name, c);
            } else if (body > f->max_finite) {
                cr_assert(isnan(got), "%s code 0x%x is NaN", f->name, c);
            } else {
                const double v = def_value(f, body);
                cr_assert_eq((double)got, c >> f->sign_shift ? -v : v, "%s code 0x%x", f->name, c);
                cr_assert_eq(!signbit(got), !(c >> f->sign_shift), "%s code 0x%x: sign", f->name, c);
            }
        }
        for (unsigned c = 0; c <= f->max_finite; c++) {
            const float v = (float)def_value(f, c), mid = (float)((def_value(f, c) + def_value(f, c + 1)) / 2);
            const float xs[5] = {v, mid, nextafterf(mid, 0.0f), nextafterf(mid, INFINITY), nextafterf(v, INFINITY)};
            for (int i = 0; i < 5; i++) {
                expect_encode(f, xs[i]);
                expect_encode(f, -xs[i]);
            }
        }
        for (uint64_t u = k; u < (1ull << 32); u += 65521) {
            const uint32_t b = (uint32_t)u;
            float x;
            memcpy(&x, &b, sizeof x);
            expect_encode(f, x);
        }
        const float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1e-45f, -1e-45f, 1e30f, -1e30f, 65520.0f};
        for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
            expect_encode(f, special[i]);
    }
}

Test(core, load_store_every_dtype) {
    unsigned char buf[64];
    for (int t = 0; t < PA_DTYPE_COUNT; t++) {
        pa_store_from_float((pa_dtype)t, buf, 3, -1.5f);
        cr_assert_float_eq(pa_load_as_float((pa_dtype)t, buf, 3), -1.5f, 0.0f, "dtype %s", pa_dtype_name((pa_dtype)t));
    }
}

/* A quantising or dequantising scale that is not finite and positive would
 * write NaN or sign-flipped codes: refused, nothing written; where no side is
 * fp8 the scale is ignored (convert.h). */
Test(core, ref_convert_refuses_bad_fp8_scales) {
    const float src[4] = {1.0f, -2.0f, 0.5f, 3.0f};
    const float bad[4] = {0.0f, -1.0f, NAN, INFINITY};
    for (int i = 0; i < 4; i++) {
        unsigned char dst[4] = {7, 7, 7, 7};
        cr_assert_eq(pa_ref_convert(dst, PA_DTYPE_FP8_E4M3, src, PA_DTYPE_F32, 4, &bad[i]), PA_ERR_INVALID_ARGUMENT,
                     "scale %g to fp8", (double)bad[i]);
        cr_assert(strstr(pa_last_error(), "scale") != NULL, "%s", pa_last_error());
        cr_assert(dst[0] == 7 && dst[3] == 7, "scale %g: written", (double)bad[i]);
        float back[4] = {5, 5, 5, 5};
        const unsigned char codes[4] = {0x38, 0x38, 0x38, 0x38}; /* e4m3 1.0 */
        cr_assert_eq(pa_ref_convert(back, PA_DTYPE_F32, codes, PA_DTYPE_FP8_E5M2, 4, &bad[i]), PA_ERR_INVALID_ARGUMENT,
                     "scale %g from fp8", (double)bad[i]);
        cr_assert(back[0] == 5.0f, "scale %g: written", (double)bad[i]);
        uint16_t h[4];
        cr_assert_eq(pa_ref_convert(h, PA_DTYPE_F16, src, PA_DTYPE_F32, 4, &bad[i]), PA_SUCCESS,
                     "no fp8 side: the scale %g is ignored (%s)", (double)bad[i], pa_last_error());
        cr_assert_eq(h[1], 0xC000, "f16 -2.0 is 0xC000, got 0x%04x", h[1]);
    }
    const float good = 0.5f;
    unsigned char dst[4];
    cr_assert_eq(pa_ref_convert(dst, PA_DTYPE_FP8_E4M3, src, PA_DTYPE_F32, 4, &good), PA_SUCCESS, "%s",
                 pa_last_error());
    cr_assert_eq(dst[0], 0x40, "1.0 / 0.5 = 2.0 is e4m3 0x40, got 0x%02x", dst[0]);
}

Test(core, device_info_without_device_is_clean) {
    pa_device_props p;
    int n = pa_device_count();
    memset(&p, 0x5A, sizeof p);
    const pa_device_props before = p;
    pa_status s = pa_device_info(0, &p);
    if (n == 0) {
        cr_assert_eq(s, PA_ERR_NO_DEVICE);
        cr_assert(strlen(pa_last_error()) > 0);
        /* no error writes *out (until 2026-12-07 it was zeroed first) */
        cr_assert_eq(memcmp(&p, &before, sizeof p), 0, "out written on a failed call");
    } else {
        cr_assert_eq(s, PA_SUCCESS);
        cr_assert(p.sm_count > 0);
    }
    cr_assert_eq(pa_device_info(0, NULL), PA_ERR_INVALID_ARGUMENT);
}

Test(core, device_info_negative_index_is_invalid_argument) {
    /* A negative index is the caller's error on any machine, with or without a
     * device: never PA_ERR_NO_DEVICE, and out is left as it was. */
    pa_device_props p;
    memset(&p, 0x5A, sizeof p);
    const pa_device_props before = p;
    cr_assert_eq(pa_device_info(-1, &p), PA_ERR_INVALID_ARGUMENT, "%s", pa_last_error());
    cr_assert(strstr(pa_last_error(), "-1") != NULL, "%s", pa_last_error());
    cr_assert_eq(memcmp(&p, &before, sizeof p), 0, "out written on a rejected call");
    cr_assert_eq(pa_device_info(INT32_MIN, &p), PA_ERR_INVALID_ARGUMENT);
}

Test(core, abi_facts_are_the_compilers) {
    /* pa_abi_sizeof / pa_abi_offsetof (what the Python mirrors are checked
     * against) report this compiler's sizeof/offsetof, and nothing for unknown
     * names. */
    cr_assert_eq(pa_abi_sizeof("pa_kv_cache"), sizeof(pa_kv_cache));
    cr_assert_eq(pa_abi_sizeof("pa_decode_params"), sizeof(pa_decode_params));
    cr_assert_eq(pa_abi_sizeof("pa_ragged_params"), sizeof(pa_ragged_params));
    cr_assert_eq(pa_abi_sizeof("pa_common_metadata"), sizeof(pa_common_metadata));
    cr_assert_eq(pa_abi_offsetof("pa_decode_params", "kv"), (int64_t)offsetof(pa_decode_params, kv));
    cr_assert_eq(pa_abi_offsetof("pa_ragged_params", "kv_split_tokens"),
                 (int64_t)offsetof(pa_ragged_params, kv_split_tokens));
    cr_assert_eq(pa_abi_offsetof("pa_device_props", "runtime_version"),
                 (int64_t)offsetof(pa_device_props, runtime_version));
    cr_assert_eq(pa_abi_sizeof("pa_local_attention_out"), sizeof(pa_local_attention_out));
    cr_assert_eq(pa_abi_offsetof("pa_local_attention_out", "table_fill"),
                 (int64_t)offsetof(pa_local_attention_out, table_fill));
    cr_assert_eq(pa_abi_sizeof("pa_no_such_struct"), 0);
    cr_assert_eq(pa_abi_sizeof(NULL), 0);
    cr_assert_eq(pa_abi_offsetof("pa_kv_cache", "no_such_field"), -1);
    cr_assert_eq(pa_abi_offsetof("pa_kv_cache", NULL), -1);
    cr_assert_eq(pa_abi_offsetof(NULL, "key"), -1);
}

/* An element count whose byte count passes int64 (found unreached by
 * scripts/refusal-coverage.py): refused before anything is read or written. */
Test(core, ref_convert_refuses_byte_counts_past_int64) {
    float dst[4] = {1, 2, 3, 4}, src[4] = {5, 6, 7, 8};
    /* 2^62 f32 elements: 2^64 bytes */
    cr_assert_eq(pa_ref_convert(dst, PA_DTYPE_F32, src, PA_DTYPE_F16, (int64_t)1 << 62, NULL), PA_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(pa_last_error(), "convert: n = 4611686018427387904 elements overflow int64 bytes"), "%s",
              pa_last_error());
    cr_assert(dst[0] == 1 && dst[3] == 4);
}

/* Every entry maps a CUDA error through pa_cuda_fail: no device or no driver
 * is PA_ERR_NO_DEVICE (what a caller without a GPU tests for), anything else
 * PA_ERR_CUDA naming the error. No GPU needed: the mapping alone (found
 * unreached by scripts/refusal-coverage.py on a machine without a GPU). */
pa_status pa_cuda_fail(int cuda_err, const char *what); /* csrc/core/internal.h */

Test(core, cuda_errors_map_to_statuses) {
    cr_assert_eq(pa_cuda_fail(cudaErrorNoDevice, "pa_x"), PA_ERR_NO_DEVICE);
    cr_assert(strstr(pa_last_error(), "pa_x: no CUDA device ("), "%s", pa_last_error());
    cr_assert_eq(pa_cuda_fail(cudaErrorInsufficientDriver, "pa_y"), PA_ERR_NO_DEVICE);
    cr_assert(strstr(pa_last_error(), "pa_y: no CUDA device ("), "%s", pa_last_error());
    cr_assert_eq(pa_cuda_fail(cudaErrorMemoryAllocation, "pa_z"), PA_ERR_CUDA);
    cr_assert(strstr(pa_last_error(), "pa_z: ") && strstr(pa_last_error(), "(cudaErrorMemoryAllocation)"), "%s",
              pa_last_error());
}
