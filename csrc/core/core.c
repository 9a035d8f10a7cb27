/* Status strings, the thread-local error detail, dtypes and host conversions. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

#ifndef PA_VERSION_STRING
#define PA_VERSION_STRING "0.1.0"
#endif

static _Thread_local char pa_err_buf[1024];

const char *pa_version(void) { return PA_VERSION_STRING; }
int pa_version_number(void) { return PA_VERSION_NUMBER; }

const char *pa_status_string(pa_status s) {
    switch (s) {
    case PA_SUCCESS: return "success";
    case PA_ERR_INVALID_ARGUMENT: return "invalid argument";
    case PA_ERR_UNSUPPORTED: return "unsupported configuration";
    case PA_ERR_NO_DEVICE: return "no CUDA device";
    case PA_ERR_CUDA: return "CUDA error";
    case PA_ERR_WORKSPACE_TOO_SMALL: return "workspace too small";
    case PA_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

const char *pa_last_error(void) { return pa_err_buf; }

void pa_clear_error(void) { pa_err_buf[0] = '\0'; }

pa_status pa_error_context(pa_status s, const char *prefix) {
    char msg[sizeof pa_err_buf];
    memcpy(msg, pa_err_buf, sizeof msg);
    /* prefix, ": ", then as much of the old detail as fits */
    const size_t n = strlen(prefix) < sizeof pa_err_buf - 3 ? strlen(prefix) : sizeof pa_err_buf - 3;
    memcpy(pa_err_buf, prefix, n);
    memcpy(pa_err_buf + n, ": ", 2);
    const size_t room = sizeof pa_err_buf - n - 3, m = strnlen(msg, sizeof msg);
    memcpy(pa_err_buf + n + 2, msg, m < room ? m : room);
    pa_err_buf[n + 2 + (m < room ? m : room)] = '\0';
    return s;
}

pa_status pa_fail(pa_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pa_err_buf, sizeof pa_err_buf, fmt, ap);
    va_end(ap);
    return s;
}

size_t pa_dtype_size(pa_dtype t) {
    switch (t) {
    case PA_DTYPE_F32: return 4;
    case PA_DTYPE_F16:
    case PA_DTYPE_BF16: return 2;
    case PA_DTYPE_FP8_E4M3:
    case PA_DTYPE_FP8_E5M2: return 1;
    }
    return 0;
}

const char *pa_dtype_name(pa_dtype t) {
    switch (t) {
    case PA_DTYPE_F32: return "f32";
    case PA_DTYPE_F16: return "f16";
    case PA_DTYPE_BF16: return "bf16";
    case PA_DTYPE_FP8_E4M3: return "fp8_e4m3";
    case PA_DTYPE_FP8_E5M2: return "fp8_e5m2";
    }
    return "unknown";
}

pa_status pa_dtype_from_name(const char *name, pa_dtype *out) {
    static const struct {
        const char *name;
        pa_dtype t;
    } names[] = {
        {"f32", PA_DTYPE_F32},           {"float32", PA_DTYPE_F32},   {"float", PA_DTYPE_F32},
        {"f16", PA_DTYPE_F16},           {"float16", PA_DTYPE_F16},   {"half", PA_DTYPE_F16},
        {"bf16", PA_DTYPE_BF16},         {"bfloat16", PA_DTYPE_BF16}, {"fp8", PA_DTYPE_FP8_E4M3},
        {"fp8_e4m3", PA_DTYPE_FP8_E4M3}, {"e4m3", PA_DTYPE_FP8_E4M3}, {"fp8_e5m2", PA_DTYPE_FP8_E5M2},
        {"e5m2", PA_DTYPE_FP8_E5M2},
    };
    if (!name || !out)
        return pa_fail(PA_ERR_INVALID_ARGUMENT, "dtype name and output must not be NULL");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(name, names[i].name) == 0) {
            *out = names[i].t;
            pa_clear_error();
            return PA_SUCCESS;
        }
    }
    return pa_fail(PA_ERR_INVALID_ARGUMENT, "unknown dtype '%s'; known: f32, f16, bf16, fp8_e4m3 (fp8), fp8_e5m2",
                   name);
}

pa_status pa_check_aligned(const char *op, const char *name, const void *ptr, size_t bytes) {
    PA_REQUIRE(ptr == NULL || bytes <= 1 || (uintptr_t)ptr % bytes == 0,
               "%s: %s (%p) must be aligned to %zu bytes (its element size)", op, name, ptr, bytes);
    return PA_SUCCESS;
}

pa_status pa_check_not_null(const char *op, const char *name, const void *ptr) {
    PA_REQUIRE(ptr != NULL, "%s: %s must not be NULL", op, name);
    return PA_SUCCESS;
}

pa_status pa_check_rows_extent(const char *op, const char *name, int64_t rows, int64_t stride, int64_t row) {
    int64_t ext = 0;
    PA_REQUIRE(rows <= 0 || (pa_mul_i64(rows - 1, stride ? stride : row, &ext) && pa_add_i64(ext, row, &ext)),
               "%s: %s of %lld rows %lld elements apart overflows int64", op, name, (long long)rows,
               (long long)(stride ? stride : row));
    return PA_SUCCESS;
}

pa_status pa_lse_layout(const char *op, int64_t heads, int64_t tokens, int64_t head_stride, int64_t token_stride,
                        pa_lse_strides *out) {
    PA_REQUIRE(head_stride >= 0 && token_stride >= 0,
               "%s: lse_head_stride = %lld and lse_token_stride = %lld must be >= 0", op, (long long)head_stride,
               (long long)token_stride);
    const int64_t ts = token_stride ? token_stride : 1, hs = head_stride ? head_stride : (tokens > 0 ? tokens : 1);
    int64_t a = 0, b = 0, last = 0;
    const int empty = tokens <= 0 || heads <= 0;
    PA_REQUIRE(empty || (pa_mul_i64(heads - 1, hs, &a) && pa_mul_i64(tokens - 1, ts, &b) && pa_add_i64(a, b, &last) &&
                         last < INT64_MAX / 4),
               "%s: the lse layout's last element (head stride %lld, token stride %lld) overflows int64", op,
               (long long)hs, (long long)ts);
    /* Distinct (head, token) pairs at distinct floats: one stride spans the other's whole extent. */
    int64_t ts_span = 0, hs_span = 0;
    const int apart = tokens <= 1 || heads <= 1 || (pa_mul_i64(ts, tokens, &ts_span) && hs >= ts_span) ||
                      (pa_mul_i64(hs, heads, &hs_span) && ts >= hs_span);
    PA_REQUIRE(apart,
               "%s: lse strides (head %lld, token %lld) put two (head, token) pairs on one float; need "
               "lse_head_stride >= lse_token_stride * tokens or lse_token_stride >= lse_head_stride * num_heads",
               op, (long long)hs, (long long)ts);
    out->head = hs;
    out->token = ts;
    out->bytes = empty ? 0 : (last + 1) * (int64_t)sizeof(float);
    return PA_SUCCESS;
}

int pa_ranges_overlap(const void *a, int64_t a_bytes, const void *b, int64_t b_bytes) {
    if (a == NULL || b == NULL || a_bytes <= 0 || b_bytes <= 0)
        return 0;
    const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y ? y - x < (uintptr_t)a_bytes : x - y < (uintptr_t)b_bytes;
}

pa_status pa_check_spans_apart(const char *op, const pa_span *in, int nin, const pa_span *out, int nout) {
    const char *sep = op ? ": " : "";
    op = op ? op : "";
    for (int i = 0; i < nout; i++) {
        for (int j = 0; j < nin; j++)
            PA_REQUIRE(!pa_ranges_overlap(out[i].p, out[i].bytes, in[j].p, in[j].bytes) ||
                           (out[i].may_be != NULL && out[i].p == out[i].may_be && in[j].p == out[i].may_be),
                       "%s%soutput %s overlaps the input %s", op, sep, out[i].name, in[j].name);
        for (int j = i + 1; j < nout; j++)
            PA_REQUIRE(!pa_ranges_overlap(out[i].p, out[i].bytes, out[j].p, out[j].bytes),
                       "%s%soutputs %s and %s overlap", op, sep, out[i].name, out[j].name);
    }
    return PA_SUCCESS;
}

int64_t pa_rows_bytes(int64_t rows, int64_t stride, int64_t row, size_t esz) {
    int64_t ext = 0;
    if (rows <= 0)
        return 0;
    if (!pa_mul_i64(rows - 1, stride ? stride : row, &ext) || !pa_add_i64(ext, row, &ext) ||
        !pa_mul_i64(ext, (int64_t)esz, &ext))
        return INT64_MAX;
    return ext;
}

int pa_dtype_is_fp8(pa_dtype t) { return t == PA_DTYPE_FP8_E4M3 || t == PA_DTYPE_FP8_E5M2; }

/* ---- small-float codecs ------------------------------------------------------
 * One generic encoder for IEEE-like formats with `mbits` mantissa bits and an
 * exponent bias: round to nearest even, then either saturate to the largest
 * finite value (fp8, as the cache kernels do with __NV_SATFINITE) or overflow to
 * infinity (f16). The value is scaled into its binade's units of the format's
 * last place (a multiply by a power of two, exact in double) and rounded there;
 * the exponent comes from the float's bits, not frexp/ldexp (which, with the
 * division they fed, were a fifth of a decode interp test's time). On
 * 2026-12-01 every float's code and every code's value were checked equal to
 * the frexp/nearbyint/ldexp version's; tests/host/test_core.c checks both
 * against the formats' definitions. */
typedef struct small_fmt {
    int mbits, bias;
    int max_exp_field;   /* largest exponent field of a finite value */
    unsigned max_finite; /* bit pattern (without sign) of the largest finite */
    unsigned inf_code;   /* 0 if the format has no infinity */
    unsigned nan_code;
    double max_value;
    int sign_shift;
} small_fmt;

static const small_fmt FMT_F16 = {10, 15, 30, 0x7BFF, 0x7C00, 0x7E00, 65504.0, 15};
static const small_fmt FMT_E4M3 = {3, 7, 15, 0x7E, 0, 0x7F, 448.0, 7};
static const small_fmt FMT_E5M2 = {2, 15, 30, 0x7B, 0x7C, 0x7F, 57344.0, 7};

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float f32_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* 2^k for -1022 <= k <= 1023. */
static double pow2(int k) {
    const uint64_t u = (uint64_t)(k + 1023) << 52;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static unsigned encode_small(const small_fmt *f, float x, int saturate) {
    const uint32_t u = f32_bits(x);
    const uint32_t mag = u & 0x7FFFFFFFu;
    const unsigned sign = (u >> 31) << f->sign_shift;
    if (mag > 0x7F800000u)
        return sign | f->nan_code;
    if (mag == 0x7F800000u)
        return sign | (saturate ? f->max_finite : f->inf_code);
    /* |x| in [2^E, 2^(E+1)) for a normal float; a float subnormal or zero takes
     * E = -127, below every format's smallest exponent, so it is clamped there. */
    int E = (int)(mag >> 23) - 127;
    const int min_exp = 1 - f->bias;
    if (E < min_exp)
        E = min_exp;
    /* |x| in units of 2^(E - mbits): below 2^(mbits + 1), so r is exact. */
    const double r = nearbyint((double)f32_from_bits(mag) * pow2(f->mbits - E)); /* half to even */
    if (r * pow2(E - f->mbits) > f->max_value)
        return sign | (saturate ? f->max_finite : f->inf_code);
    const unsigned mant_one = 1u << f->mbits;
    unsigned ri = (unsigned)r;
    if (ri >= 2 * mant_one) { /* rounded up into the next binade */
        E += 1;
        ri >>= 1;
    }
    if (ri < mant_one) /* subnormal (only possible at min_exp) */
        return sign | ri;
    const unsigned exp_field = (unsigned)(E + f->bias);
    return sign | (exp_field << f->mbits) | (ri - mant_one);
}

/* Exact: a normal code's exponent is rebiased and its mantissa moved to the top
 * of float's; a subnormal is its mantissa times a power of two. NaN codes give
 * float's default quiet NaN with the code's sign. */
static float decode_small(const small_fmt *f, unsigned v) {
    const uint32_t sign = ((v >> f->sign_shift) & 1u) << 31;
    const unsigned body = v & ((1u << f->sign_shift) - 1u);
    const unsigned exp_field = body >> f->mbits;
    const unsigned mant = body & ((1u << f->mbits) - 1u);
    uint32_t u;
    if (f->inf_code && body == f->inf_code)
        u = 0x7F800000u;
    else if ((int)exp_field > f->max_exp_field || (!f->inf_code && body == f->nan_code))
        u = 0x7FC00000u;
    else if (exp_field == 0)
        u = f32_bits((float)mant * (float)pow2(1 - f->bias - f->mbits));
    else
        u = (uint32_t)((int)exp_field - f->bias + 127) << 23 | (uint32_t)mant << (23 - f->mbits);
    return f32_from_bits(sign | u);
}

float pa_half_to_float(uint16_t h) { return decode_small(&FMT_F16, h); }
uint16_t pa_float_to_half(float f) { return (uint16_t)encode_small(&FMT_F16, f, 0); }
float pa_fp8_e4m3_to_float(uint8_t v) { return decode_small(&FMT_E4M3, v); }
uint8_t pa_float_to_fp8_e4m3(float f) { return (uint8_t)encode_small(&FMT_E4M3, f, 1); }
float pa_fp8_e5m2_to_float(uint8_t v) { return decode_small(&FMT_E5M2, v); }
uint8_t pa_float_to_fp8_e5m2(float f) { return (uint8_t)encode_small(&FMT_E5M2, f, 1); }

float pa_bf16_to_float(uint16_t b) { return f32_from_bits((uint32_t)b << 16); }

uint16_t pa_float_to_bf16(float f) {
    uint32_t u = f32_bits(f);
    if (isnan(f))
        return (uint16_t)((u >> 16) | 0x40u); /* keep it a quiet NaN */
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

float pa_load_as_float(pa_dtype t, const void *base, size_t i) {
    switch (t) {
    case PA_DTYPE_F32: return ((const float *)base)[i];
    case PA_DTYPE_F16: return pa_half_to_float(((const uint16_t *)base)[i]);
    case PA_DTYPE_BF16: return pa_bf16_to_float(((const uint16_t *)base)[i]);
    case PA_DTYPE_FP8_E4M3: return pa_fp8_e4m3_to_float(((const uint8_t *)base)[i]);
    case PA_DTYPE_FP8_E5M2: return pa_fp8_e5m2_to_float(((const uint8_t *)base)[i]);
    }
    return NAN;
}

void pa_store_from_float(pa_dtype t, void *base, size_t i, float v) {
    switch (t) {
    case PA_DTYPE_F32: ((float *)base)[i] = v; break;
    case PA_DTYPE_F16: ((uint16_t *)base)[i] = pa_float_to_half(v); break;
    case PA_DTYPE_BF16: ((uint16_t *)base)[i] = pa_float_to_bf16(v); break;
    case PA_DTYPE_FP8_E4M3: ((uint8_t *)base)[i] = pa_float_to_fp8_e4m3(v); break;
    case PA_DTYPE_FP8_E5M2: ((uint8_t *)base)[i] = pa_float_to_fp8_e5m2(v); break;
    }
}
