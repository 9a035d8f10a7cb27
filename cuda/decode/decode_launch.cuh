// Launch of the split kernel for one (query, cache) dtype pair; included by the
// generated instance files (cuda/decode/instances/), one pair per file so the
// build parallelises.
#pragma once

#include "decode_kernel.cuh"

namespace pa_dec {

template <int QT, int CT> int launch_split(const pa_dec_kparams *kp, cudaStream_t s) {
    auto *kernel = decode_split_kernel<QT, CT>;
    if (kp->smem_bytes > 48 * 1024) {
        // Per device and idempotent; not a stream operation, so graph capture is unaffected.
        const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kp->smem_bytes);
        if (e != cudaSuccess)
            return (int)e;
    }
    const dim3 grid((unsigned)((int64_t)kp->num_seqs * kp->num_kv_heads * kp->head_chunks), (unsigned)kp->max_splits);
    PA_LAUNCH(grid, NT, (size_t)kp->smem_bytes, s, kernel)(*kp);
    return (int)cudaGetLastError();
}

} // namespace pa_dec

#define PA_DEC_INSTANCE(Q, C)                                                                                          \
    extern "C" int pa_dec_launch_split_##Q##_##C(const pa_dec_kparams *kp, pa_stream s) {                              \
        return pa_dec::launch_split<Q, C>(kp, reinterpret_cast<cudaStream_t>(s));                                      \
    }
