/* pa_convert's validation and its CPU reference (element by element through
 * float). The validation lives here, in the host library, so that a program
 * linking only that (the host tests, the fuzzers) has pa_ref_convert whole. */
#include <math.h>

#include "internal.h"

pa_status pa_convert_validate(void *dst, pa_dtype dst_dtype, const void *src, pa_dtype src_dtype, int64_t n) {
    PA_REQUIRE(pa_is_valid_dtype(dst_dtype) && pa_is_valid_dtype(src_dtype), "convert: unknown dtype (%d -> %d)",
               (int)src_dtype, (int)dst_dtype);
    PA_REQUIRE(n >= 0, "convert: n must be >= 0 (got %lld)", (long long)n);
    PA_REQUIRE(n == 0 || (dst && src), "convert: dst and src must not be NULL");
    PA_TRY(pa_check_aligned("convert", "dst", dst, pa_dtype_size(dst_dtype)));
    PA_TRY(pa_check_aligned("convert", "src", src, pa_dtype_size(src_dtype)));
    int64_t db = 0, sb = 0;
    PA_REQUIRE(pa_mul_i64(n, (int64_t)pa_dtype_size(dst_dtype), &db) &&
                   pa_mul_i64(n, (int64_t)pa_dtype_size(src_dtype), &sb),
               "convert: n = %lld elements overflow int64 bytes", (long long)n);
    PA_REQUIRE(!pa_ranges_overlap(dst, db, src, sb),
               "convert: dst and src overlap (in-place conversion is not supported)");
    return PA_SUCCESS;
}

pa_status pa_ref_convert(void *dst, pa_dtype dst_dtype, const void *src, pa_dtype src_dtype, int64_t n,
                         const float *scale) {
    PA_TRY(pa_convert_validate(dst, dst_dtype, src, src_dtype, n));
    /* convert.h: the scale applies where either side is fp8 and is ignored
     * (not read) otherwise. */
    const int applies = pa_dtype_is_fp8(src_dtype) || pa_dtype_is_fp8(dst_dtype);
    const float s = applies && scale ? *scale : 1.0f;
    /* As the caches' scales (pa_check_host_kv_scales): where it applies, a
     * scale that is not finite and positive would write NaN or flipped values. */
    PA_REQUIRE(!applies || (isfinite(s) && s > 0.0f), "convert: scale = %g must be finite and > 0", (double)s);
    for (int64_t i = 0; i < n; i++) {
        float v = pa_load_as_float(src_dtype, src, (size_t)i);
        if (pa_dtype_is_fp8(src_dtype))
            v *= s;
        if (pa_dtype_is_fp8(dst_dtype))
            v /= s;
        pa_store_from_float(dst_dtype, dst, (size_t)i, v);
    }
    pa_clear_error();
    return PA_SUCCESS;
}
