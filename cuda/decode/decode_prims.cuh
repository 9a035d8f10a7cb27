// The few device primitives the decode kernels use (barrier, warp shuffle,
// exp, cp.async). Interpret mode (tests/interp/) runs them like every other
// kernel source, through cuda/ptx.cuh and tests/interp/pa_interp.h.
#pragma once

#include <stdint.h>
#include <string.h>

#include <cuda_runtime.h>

#include "../ptx.cuh"

#define PA_DEC_DEV __device__ __forceinline__
#define PA_DEC_GLOBAL __global__
// At least 4 CTAs of 128 threads per SM (<= 128 registers): 16 warps, 4 per
// scheduler, the occupancy the H100 calibration was measured at.
#define PA_DEC_MIN_CTAS 4
#define PA_DEC_BOUNDS(n) __launch_bounds__(n, PA_DEC_MIN_CTAS)
#define PA_DEC_SMEM(name) PA_DYNAMIC_SMEM(unsigned char, name)
#ifdef PA_INTERPRET
#define PA_DEC_ALIGNED(ptr, n) ::pa_interp::check_align((const void *)(ptr), (n), __FILE__, __LINE__)
#else
#define PA_DEC_ALIGNED(ptr, n) ((void)0)
#endif

namespace pa_dec {

#ifdef PA_INTERPRET
// Interpret mode checks that every thread of a CTA meets a barrier at the same
// place: each call's own file and line, not this wrapper's.
PA_DEC_DEV void bar(const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
    ::pa_interp::sync_block(file, line);
}
PA_DEC_DEV bool bar_or(bool v, const char *file = __builtin_FILE(), int line = __builtin_LINE()) {
    return ::pa_interp::sync_or(v, file, line) != 0;
}
#else
PA_DEC_DEV void bar() { __syncthreads(); }
// A barrier that also tells every thread whether any thread passed true.
PA_DEC_DEV bool bar_or(bool v) { return __syncthreads_or(v) != 0; }
#endif
PA_DEC_DEV float shfl_xor(float v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
PA_DEC_DEV float shfl_idx(float v, int src) { return __shfl_sync(0xffffffffu, v, src); }
PA_DEC_DEV int64_t shfl_xor_i64(int64_t v, int o) { return __shfl_xor_sync(0xffffffffu, (long long)v, o); }
PA_DEC_DEV float fexp(float x) { return __expf(x); }

// Asynchronous global->shared copy of `unit` (4, 8 or 16) bytes of which the
// first src_bytes are read and the rest zero-filled (src_bytes = 0 reads
// nothing); cuda/ptx.cuh.
PA_DEC_DEV void cp_async(void *dst, const void *src, int unit, int src_bytes) {
    pa::ptx::cp_async(dst, src, unit, src_bytes);
}
// 16 bytes, or 16 zeros when !copy (one copy with the ignore-src predicate)
PA_DEC_DEV void cp_async16_or_zero(void *dst, const void *src, bool copy) {
    pa::ptx::cp_async16_or_zero(dst, src, copy);
}
PA_DEC_DEV void cp_commit() { pa::ptx::cp_async_commit(); }
template <int N> PA_DEC_DEV void cp_wait() { pa::ptx::cp_async_wait<N>(); }
// D += A B, m16n8k16, f32 accumulate; DT 1 = f16, 2 = bf16 inputs (cuda/ptx.cuh
// gives the fragment layouts); ldmatrix .x4 (.trans) of four 8x8 b16 matrices.
template <int DT> PA_DEC_DEV void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    pa::ptx::mma16816<DT>(d, a, b0, b1);
}
PA_DEC_DEV void ldsm_x4(uint32_t (&r)[4], const void *p) { pa::ptx::ldmatrix_x4(r, p); }
PA_DEC_DEV void ldsm_x4_trans(uint32_t (&r)[4], const void *p) { pa::ptx::ldmatrix_x4_trans(r, p); }
PA_DEC_DEV uint32_t movmatrix_trans(uint32_t a) { return pa::ptx::movmatrix_trans(a); }

} // namespace pa_dec
