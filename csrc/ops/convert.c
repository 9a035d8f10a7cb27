/* pa_convert: validate, NVTX range, launch. */
#include "internal.h"
#include "launchers.h"

pa_status pa_convert_validate(void *dst, pa_dtype dst_dtype, const void *src, pa_dtype src_dtype, int64_t n);

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

pa_status pa_convert(void *dst, pa_dtype dst_dtype, const void *src, pa_dtype src_dtype, int64_t n, const float *scale,
                     pa_stream stream) {
    PA_TRY(pa_convert_validate(dst, dst_dtype, src, src_dtype, n));
    PA_TRY(pa_check_aligned("convert", "scale", scale, sizeof(float)));
    if (n == 0) {
        pa_clear_error();
        return PA_SUCCESS;
    }
    PA_RANGE_PUSH("pa_convert");
    int e = pa_launch_convert(dst, (int)dst_dtype, src, (int)src_dtype, n, scale, stream);
    PA_RANGE_POP();
    if (e != 0)
        return pa_cuda_fail(e, "pa_convert launch");
    pa_clear_error();
    return PA_SUCCESS;
}
