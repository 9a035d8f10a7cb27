// pa_convert: every element of src in dst's dtype, bit for bit as the host's
// pa_ref_convert (csrc/reference/convert.c).
//
// Work unit: a chunk, the VEC = 16 / sizeof(src element) elements one 16-byte
// load brings. A thread converts its chunk in registers and stores it as
// VEC * sizeof(dst element) bytes, in vectors of up to 16 bytes (4 for f32 to
// fp8, four 16-byte stores for fp8 to f32). The n % VEC elements after the
// last chunk go one a thread. Chunks need src 16-byte aligned and dst aligned
// to its store; the host checks both, and where either fails (a tensor slice
// at an odd element) every element goes one a thread, as this kernel did for
// all inputs before 2026-12-08.
//
// Why chunks: a copy kernel reaches the copy roof only with enough bytes of
// loads in flight (Little's law). One 4-byte load a thread held 8 KiB in flight
// an SM, and f32 to bf16 measured 66% of the H100's copy roof (report of
// 2026-11-27); a 16-byte load a thread holds four times that. The arithmetic is
// in scripts/convert_budget.py and its note under benchmarks/results/budget-notes.
#include "launchers.h"
#include "dtype.cuh"

#include <string.h>

namespace {

constexpr int kThreads = 256;

template <int SRC, int DST> struct convert_traits {
    using ts = typename pa::elt<SRC>::type;
    using td = typename pa::elt<DST>::type;
    static constexpr int vec = 16 / (int)sizeof(ts);                    // elements a chunk
    static constexpr int out_bytes = vec * (int)sizeof(td);             // 4 to 64
    static constexpr int store_bytes = out_bytes < 16 ? out_bytes : 16; // one store's
};

// One element: fp8 sources are scaled up after their load, fp8 destinations
// divided before their store (convert.h; the division is IEEE, as the host's).
template <int SRC, int DST>
__device__ __forceinline__ typename pa::elt<DST>::type convert_one(typename pa::elt<SRC>::type x, float s) {
    float v = pa::to_float<SRC>(x);
    if (pa::is_fp8(SRC))
        v *= s;
    if (pa::is_fp8(DST))
        v /= s;
    return pa::from_float<DST>(v);
}

// Chunks [0, chunks) a chunk a thread, then elements [chunks * VEC, n) an
// element a thread; both grid-stride. chunks is 0 where the pointers do not
// allow vectors.
template <int SRC, int DST>
__global__ void __launch_bounds__(kThreads)
    convert_kernel(typename pa::elt<DST>::type *__restrict__ dst, const typename pa::elt<SRC>::type *__restrict__ src,
                   int64_t n, int64_t chunks, const float *__restrict__ scale) {
    using C = convert_traits<SRC, DST>;
    using V = typename pa::raw_vec<C::store_bytes>::type;
    const float s = scale ? *scale : 1.0f;
    const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, step = (int64_t)gridDim.x * blockDim.x;
    // One trip a thread unless the input passes 2^19 CTAs' worth, so no unrolling: unrolled,
    // nvcc computes each loop's trip count first, a 64-bit division, in every thread.
#pragma unroll 1
    for (int64_t c = first; c < chunks; c += step) {
        const uint4 u = reinterpret_cast<const uint4 *>(src)[c];
        typename C::ts in[C::vec];
        memcpy(in, &u, sizeof(u));
        typename C::td out[C::vec];
#pragma unroll
        for (int j = 0; j < C::vec; j++)
            out[j] = convert_one<SRC, DST>(in[j], s);
        V *d = reinterpret_cast<V *>(dst + c * C::vec);
#pragma unroll
        for (int k = 0; k < C::out_bytes / C::store_bytes; k++) {
            V w;
            memcpy(&w, reinterpret_cast<const unsigned char *>(out) + k * C::store_bytes, sizeof(w));
            d[k] = w;
        }
    }
#pragma unroll 1
    for (int64_t i = chunks * C::vec + first; i < n; i += step)
        dst[i] = convert_one<SRC, DST>(src[i], s);
}

template <int SRC, int DST>
cudaError_t launch(void *dst, const void *src, int64_t n, const float *scale, cudaStream_t stream) {
    using C = convert_traits<SRC, DST>;
    const bool vec = (uintptr_t)src % 16 == 0 && (uintptr_t)dst % C::store_bytes == 0;
    const int64_t chunks = vec ? n / C::vec : 0;
    // A thread a chunk (the tail's fewer than VEC elements go to the first
    // threads), or a thread an element; past 2^19 CTAs the threads loop.
    const int64_t items = vec && chunks > 0 ? chunks : n;
    int64_t blocks = (items + kThreads - 1) / kThreads;
    if (blocks > 65535LL * 8)
        blocks = 65535LL * 8;
    PA_LAUNCH((unsigned)blocks, kThreads, 0, stream, convert_kernel<SRC, DST>)
    (static_cast<typename C::td *>(dst), static_cast<const typename C::ts *>(src), n, chunks, scale);
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
