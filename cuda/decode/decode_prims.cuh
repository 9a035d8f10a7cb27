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

#include "../ptx.cuh"

#define PA_DEC_DEV __device__ __forceinline__
#define PA_DEC_GLOBAL __global__
#define PA_DEC_BOUNDS(n) __launch_bounds__(n)
#define PA_DEC_SMEM(name) PA_DYNAMIC_SMEM(unsigned char, name)
#define PA_DEC_ALIGNED(ptr, n) ((void)0)

namespace pa_dec {

PA_DEC_DEV void bar() { __syncthreads(); }
PA_DEC_DEV float shfl_xor(float v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
PA_DEC_DEV float fexp(float x) { return __expf(x); }

// Asynchronous global->shared copy of `unit` (4, 8 or 16) bytes of which the
// first src_bytes are read and the rest zero-filled (src_bytes = 0 reads
// nothing); cuda/ptx.cuh.
PA_DEC_DEV void cp_async(void *dst, const void *src, int unit, int src_bytes) {
    pa::ptx::cp_async(dst, src, unit, src_bytes);
}
PA_DEC_DEV void cp_commit() { pa::ptx::cp_async_commit(); }
template <int N> PA_DEC_DEV void cp_wait() { pa::ptx::cp_async_wait<N>(); }

} // namespace pa_dec
#endif
