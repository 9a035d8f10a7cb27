// pa_convert: one element per thread, grid-stride. Small on purpose: it is the
// round trip the GPU suite uses to prove host and device conversions agree.
#include "launchers.h"
#include "dtype.cuh"

namespace {

template <int SRC, int DST>
__global__ void convert_kernel(typename pa::elt<DST>::type *__restrict__ dst,
                               const typename pa::elt<SRC>::type *__restrict__ src, int64_t n,
                               const float *__restrict__ scale) {
    const float s = scale ? *scale : 1.0f;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        float v = pa::to_float<SRC>(src[i]);
        if (pa::is_fp8(SRC))
            v *= s;
        if (pa::is_fp8(DST))
            v /= s;
        dst[i] = pa::from_float<DST>(v);
    }
}

template <int SRC, int DST>
cudaError_t launch(void *dst, const void *src, int64_t n, const float *scale, cudaStream_t stream) {
    const int threads = 256;
    int64_t blocks = (n + threads - 1) / threads;
    if (blocks > 65535LL * 8)
        blocks = 65535LL * 8;
    PA_LAUNCH((unsigned)blocks, threads, 0, stream, convert_kernel<SRC, DST>)
    (static_cast<typename pa::elt<DST>::type *>(dst), static_cast<const typename pa::elt<SRC>::type *>(src), n, scale);
    return cudaGetLastError();
}

template <int SRC>
cudaError_t launch_dst(int dst_dtype, void *dst, const void *src, int64_t n, const float *scale, cudaStream_t s) {
    switch (dst_dtype) {
    case 0: return launch<SRC, 0>(dst, src, n, scale, s);
    case 1: return launch<SRC, 1>(dst, src, n, scale, s);
    case 2: return launch<SRC, 2>(dst, src, n, scale, s);
    case 3: return launch<SRC, 3>(dst, src, n, scale, s);
    case 4: return launch<SRC, 4>(dst, src, n, scale, s);
    }
    return cudaErrorInvalidValue;
}

} // namespace

extern "C" int pa_launch_convert(void *dst, int dst_dtype, const void *src, int src_dtype, int64_t n,
                                 const float *scale, pa_stream stream) {
    cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
    switch (src_dtype) {
    case 0: return launch_dst<0>(dst_dtype, dst, src, n, scale, s);
    case 1: return launch_dst<1>(dst_dtype, dst, src, n, scale, s);
    case 2: return launch_dst<2>(dst_dtype, dst, src, n, scale, s);
    case 3: return launch_dst<3>(dst_dtype, dst, src, n, scale, s);
    case 4: return launch_dst<4>(dst_dtype, dst, src, n, scale, s);
    }
    return (int)cudaErrorInvalidValue;
}
