/* pa_convert: validate (pa_convert_validate, csrc/reference/convert.c), NVTX range, launch. */
#include "internal.h"
#include "launchers.h"

pa_status pa_convert(void *dst, pa_dtype dst_dtype, const void *src, pa_dtype src_dtype, int64_t n, const float *scale,
                     pa_stream stream) {
    PA_TRY(pa_convert_validate(dst, dst_dtype, src, src_dtype, n));
    /* convert.h: the scale applies where either side is fp8 and is ignored
     * otherwise: neither checked nor handed to the kernel, which would read it */
    if (!pa_dtype_is_fp8(src_dtype) && !pa_dtype_is_fp8(dst_dtype))
        scale = NULL;
    PA_TRY(pa_check_aligned("convert", "scale", scale, sizeof(float)));
    /* every thread reads the scale while others write dst (convert.h) */
    PA_REQUIRE(!pa_ranges_overlap(scale, (int64_t)sizeof(float), dst, n * (int64_t)pa_dtype_size(dst_dtype)),
               "convert: scale lies inside dst");
    if (n == 0) {
        pa_clear_error();
        return PA_SUCCESS;
    }
    PA_TRY(pa_no_pending_cuda_error("pa_convert"));
    PA_RANGE_PUSH("pa_convert");
    int e = pa_launch_convert(dst, (int)dst_dtype, src, (int)src_dtype, n, scale, stream);
    PA_RANGE_POP();
    if (e != 0)
        return pa_cuda_fail(e, "pa_convert launch");
    pa_clear_error();
    return PA_SUCCESS;
}
