// Launch of the split kernel for one (query, cache) dtype pair; included by the
// generated instance files (cuda/decode/instances/), one pair per file so the
// build parallelises.
#pragma once

#include "decode_kernel.cuh"
#include "decode_mma.cuh"

namespace pa_dec {

template <class K> int launch_kernel(K *kernel, const pa_dec_kparams *kp, cudaStream_t s) {
    if (kp->smem_bytes > 48 * 1024) {
        // One value a kernel whatever this launch needs (PA_DEC_SMEM_ATTR, decode_internal.h): a
        // launch's own bytes here would lower it under another host thread's launch of the same
        // kernel with more. Per device; not a stream operation, so graph capture is unaffected.
        const cudaError_t e =
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, PA_DEC_SMEM_ATTR);
        if (e != cudaSuccess) {
            (void)cudaGetLastError(); // not left for the caller's next launch check
            return (int)e;
        }
    }
    const dim3 grid((unsigned)((int64_t)kp->num_seqs * kp->num_kv_heads * kp->head_chunks), (unsigned)kp->grid_splits);
    PA_LAUNCH(grid, NT, (size_t)kp->smem_bytes, s, kernel)(*kp);
    return (int)cudaGetLastError();
}

// Head size 128 with a flash layout, 16-byte copies, a 16-bit or fp8 cache
// and no block-sparse mask (the common serving shapes) runs with compile-time
// geometry (FixGeo): up to 4 query heads per CTA (MHA, GQA groups <= 4) or up
// to 8 (groups 5..8), and for 16-bit queries up to 16. A 16-bit query there
// runs on tensor cores (decode_mma.cuh); an f32 query on CUDA cores. A
// 16-bit query over vLLM's layout at head 128 (16-byte key chunks) runs on
// tensor cores too, with the value copies' unit from the host (FixGeoV).
// Heads 32, 64, 80, 96, 112, 192 and 256 take the same tensor-core path (both
// layouts, 16-bit and fp8 caches), and head 120 with a 16-bit cache.
// Everything else runs the runtime-shaped instance. The choice depends on the
// problem's shape only, never on the batch, so batch invariance holds.
// The tensor-core kernel at the first head size in HS... that it serves for
// CT (mma_head_ok) and whose geometry (flash: 1 or 2 head groups; vLLM's)
// equals the host's; -1 when none does. At heads 64, 128 and 192, CTAs of
// 9..16 query heads (flash: 3 or 4 head groups) take the kernel's two head
// blocks.
template <int QT, int CT, int HS, int... More> int launch_mma(const pa_dec_kparams *kp, cudaStream_t s) {
    if constexpr (mma_head_ok(CT, HS)) {
        if (FixGeo<HS, CT, 1>::matches(*kp) || FixGeo<HS, CT, 2>::matches(*kp))
            return launch_kernel(decode_mma_kernel<QT, CT, false, HS, 1>, kp, s);
        if (FixGeoV<HS, CT>::matches(*kp, MMA_ROWS))
            return launch_kernel(decode_mma_kernel<QT, CT, true, HS, 1>, kp, s);
    }
    if constexpr (mma_two_blocks_ok(HS)) {
        if (FixGeo<HS, CT, 3>::matches(*kp) || FixGeo<HS, CT, 4>::matches(*kp))
            return launch_kernel(decode_mma_kernel<QT, CT, false, HS, 2>, kp, s);
        if (FixGeoV<HS, CT>::matches(*kp, 2 * MMA_ROWS))
            return launch_kernel(decode_mma_kernel<QT, CT, true, HS, 2>, kp, s);
    }
    if constexpr (sizeof...(More) > 0)
        return launch_mma<QT, CT, More...>(kp, s);
    else
        return -1;
}

template <int QT, int CT> int launch_split(const pa_dec_kparams *kp, cudaStream_t s) {
    if constexpr (QT != 0) {
        const int e = launch_mma<QT, CT, 128, 64, 256, 96, 192, 80, 112, 32, 120>(kp, s);
        if (e >= 0)
            return e;
    }
    // The host leaves out the CUDA-core kernel's Q, logit and state rows
    // (off_q == off_tok) where it expects a tensor-core instance
    // (dec_tensor_cores in csrc/ops/decode.c): if none matched, the launch is
    // refused, never run without them.
    if (kp->off_q == kp->off_tok)
        return (int)cudaErrorInvalidConfiguration;
    // f32 caches keep the runtime geometry: unrolled, their tile needs more
    // than the 128 registers that 4 CTAs per SM allow (ptxas spills).
    if constexpr (QT == 0 && ct_traits<CT>::esz <= 2) {
        if (FixGeo<128, CT, 1>::matches(*kp))
            return launch_kernel(decode_split_kernel<QT, CT, FixGeo<128, CT, 1>>, kp, s);
        if (FixGeo<128, CT, 2>::matches(*kp))
            return launch_kernel(decode_split_kernel<QT, CT, FixGeo<128, CT, 2>>, kp, s);
    }
    return launch_kernel(decode_split_kernel<QT, CT, DynGeo>, kp, s);
}

} // namespace pa_dec

#define PA_DEC_INSTANCE(Q, C)                                                                                          \
    extern "C" int pa_dec_launch_split_##Q##_##C(const pa_dec_kparams *kp, pa_stream s) {                              \
        return pa_dec::launch_split<Q, C>(kp, reinterpret_cast<cudaStream_t>(s));                                      \
    }
