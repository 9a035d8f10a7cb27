// The few device primitives the decode kernels use (barrier, warp shuffle,
// exp, cp.async), behind one header so that cuda/decode/emu/ can compile the
// very same kernel source for the host and run it thread by thread against the
// CPU reference on machines without a GPU. Keep the kernels to these.
#pragma once

#include <stdint.h>
#include <string.h>

#ifdef PA_DECODE_EMU
#include "emu/emu.h"
#else
#include <cuda_runtime.h>

#define PA_DEC_DEV __device__ __forceinline__
#define PA_DEC_GLOBAL __global__
#define PA_DEC_BOUNDS(n) __launch_bounds__(n)
#define PA_DEC_SMEM(name) extern __shared__ __align__(16) unsigned char name[]
#define PA_DEC_ALIGNED(ptr, n) ((void)0)

namespace pa_dec {

PA_DEC_DEV void bar() { __syncthreads(); }
PA_DEC_DEV float shfl_xor(float v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
PA_DEC_DEV float fexp(float x) { return __expf(x); }

// Asynchronous global->shared copy of `unit` (4, 8 or 16) bytes of which the
// first src_bytes are read and the rest zero-filled (src_bytes = 0 reads
// nothing). 16-byte copies bypass L1 (.cg): K/V are streamed once.
PA_DEC_DEV void cp_async(void *dst, const void *src, int unit, int src_bytes) {
    const uint32_t d = (uint32_t)__cvta_generic_to_shared(dst);
    if (unit == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(src_bytes) : "memory");
    else if (unit == 8)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(d), "l"(src), "r"(src_bytes) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(src_bytes) : "memory");
}
PA_DEC_DEV void cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> PA_DEC_DEV void cp_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

} // namespace pa_dec
#endif
