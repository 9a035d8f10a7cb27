/* C-callable launchers implemented in the cuda/ .cu files. Each returns a cudaError_t as
 * int (0 = success) after launching asynchronously on `stream`; validation has
 * already happened in the csrc/ entry. Private header. */
#ifndef PA_LAUNCHERS_H
#define PA_LAUNCHERS_H

#include <stdint.h>

#include "pagedattn/core.h"

#ifdef __cplusplus
extern "C" {
#endif

int pa_launch_convert(void *dst, int dst_dtype, const void *src, int src_dtype, int64_t n, const float *scale,
                      pa_stream stream);

#ifdef __cplusplus
}
#endif
#endif
