/* CPU reference for pa_convert: element by element through float. */
#include "internal.h"

pa_status pa_convert_validate(void *dst, pa_dtype dst_dtype, const void *src, pa_dtype src_dtype, int64_t n);

pa_status pa_ref_convert(void *dst, pa_dtype dst_dtype, const void *src, pa_dtype src_dtype, int64_t n,
                         const float *scale) {
    PA_TRY(pa_convert_validate(dst, dst_dtype, src, src_dtype, n));
    const float s = scale ? *scale : 1.0f;
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
