/* libpagedattn: element-type conversion on the device (and its CPU reference).
 * Used to quantise caches to fp8 with a scale and to move test data between
 * dtypes; also the first kernel the GPU test suite exercises. */
#ifndef PAGEDATTN_CONVERT_H
#define PAGEDATTN_CONVERT_H

#include "pagedattn/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dst[i] = convert(src[i] / scale) for i < n. `scale` points at one float in
 * device memory (NULL = 1.0); dividing applies when the destination is fp8 and
 * multiplying when the source is fp8 (dequantise), as the caches do; otherwise
 * the scale is ignored. Where it applies it must be finite and > 0 (the
 * device entry cannot read it without a sync, so that is the caller's to
 * keep; pa_ref_convert refuses another). dst and src aligned to their element sizes and not
 * overlapping (no in-place conversion), and the scale outside dst (every thread
 * reads it while others write). Asynchronous on `stream`. Fastest with src
 * 16-byte aligned and dst aligned to the bytes 16 source bytes convert to
 * (up to 16: 8 for f32 to f16, 4 for f32 to fp8): a thread then converts 16
 * bytes; otherwise every element goes one a thread (the same results). */
PA_API pa_status pa_convert(void *dst, pa_dtype dst_dtype, const void *src, pa_dtype src_dtype, int64_t n,
                            const float *scale, pa_stream stream);

/* The same on host memory (scale is a host pointer). */
PA_API pa_status pa_ref_convert(void *dst, pa_dtype dst_dtype, const void *src, pa_dtype src_dtype, int64_t n,
                                const float *scale);

#ifdef __cplusplus
}
#endif
#endif
