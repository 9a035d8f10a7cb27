// Interpret mode: the CUDA language as the library's kernels use it, for a host
// C++ compiler. Force-included (-include) into every cuda/*.cu compiled with
// -DPA_INTERPRET; tests/interp/interp.cpp runs the kernels: every thread of a
// CTA is a coroutine, barriers and warp collectives switch between them, the
// PTX wrappers of cuda/ptx.cuh run their twins over the whole warp, and a fake
// CUDA runtime (guarded host memory, streams, graph capture and replay) stands
// in for the device. A primitive missing here is a compile or link error.
#pragma once

#ifndef PA_INTERPRET
#error "tests/interp/pa_interp.h is for -DPA_INTERPRET builds"
#endif

// The CUDA headers first (their include guards then keep later #includes of
// them from seeing the macros below).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <vector_functions.h>
#include <vector_types.h>

#include <functional>
#include <utility>

#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __noinline__
#undef __launch_bounds__
#undef __grid_constant__
#undef __align__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __grid_constant__
#define __align__(n) alignas(n)

namespace pa_interp {

const uint3 &thread_idx();
const uint3 &block_idx();
const dim3 &block_dim();
const dim3 &grid_dim();
unsigned char *dynamic_smem();
// The running CTA's copy of the static shared variable `key` (bytes, aligned
// to align; see PA_STATIC_SMEM in cuda/ptx.cuh).
void *static_smem(const void *key, size_t bytes, size_t align);

void sync_block(const char *file, int line);
int sync_or(int pred, const char *file, int line);
void sync_warp(const char *file, int line);
uint32_t shfl32(uint32_t bits, int mode, int arg, int width); // mode 0 xor, 1 idx, 2 up, 3 down

template <class T> T shfl(T v, int mode, int arg, int width) {
    static_assert(sizeof(T) <= 8, "shuffles move at most 8 bytes");
    uint32_t w[2] = {0, 0};
    memcpy(w, &v, sizeof(T));
    w[0] = shfl32(w[0], mode, arg, width);
    if (sizeof(T) > 4)
        w[1] = shfl32(w[1], mode, arg, width);
    T r;
    memcpy(&r, w, sizeof(T));
    return r;
}

void cp_async(void *dst, const void *src, int unit, int src_bytes);
void cp_commit();
void cp_wait(int n);
void ldmatrix(uint32_t (&r)[4], const void *p, bool trans);
uint32_t movmatrix(uint32_t a); // movmatrix.sync.aligned.m8n8.trans.b16
void mma(int dt, float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1);
// wgmma: the shared-window address of p (an offset into dynamic shared
// memory) and one warp's share of the warpgroup's m64nNk16 (dt 1 f16, 2
// bf16) or m64nNk32 (dt 3 e4m3) (a: this lane's A registers, or null for A
// through desc_a; acc: this lane's n / 2 floats).
uint32_t smem_window_addr(const void *p);
void wgmma(int dt, int n, const uint32_t *a, uint64_t desc_a, bool trans_a, uint64_t desc_b, bool trans_b, bool scale_d,
           float *acc);
// wgmma.fence, commit_group and wait_group n (a warp collective: the groups
// but the newest n deliver their accumulators), and fence.proxy.async.
void wgmma_fence();
void wgmma_commit();
void wgmma_wait(int n);
void fence_proxy_async();

// mbarrier objects (8 bytes of shared memory, the twin's encoding): arrive
// (cp: first land every cp.async copy this thread issued, as
// cp.async.mbarrier.arrive does once they complete); wait parks the thread
// until the phase of that parity has completed.
void mbar_init(uint64_t *bar, int count);
void mbar_arrive(uint64_t *bar, bool cp);
void mbar_wait(uint64_t *bar, int parity);
bool mbar_test(uint64_t *bar, int parity);
// Named barrier id (1..15) of n threads: arrive, and with wait, wait for the
// generation to complete.
void named_bar(int id, int n, bool wait);
// setmaxnreg.inc / .dec n: the warp's registers per thread, through the CTA's
// pool (inc waits until the pool holds enough).
void setmaxnreg(int n, bool inc);

// A launch: runs `body` on every thread of every CTA, or records it while the
// stream is being captured. pdl: launched with programmatic dependent launch
// (its threads must execute griddepcontrol.wait; see interp.cpp).
void run_grid(dim3 grid, dim3 block, size_t smem, cudaStream_t stream, const void *kernel, const char *name,
              std::function<void()> body, bool pdl);
// griddepcontrol.wait (griddepcontrol.launch_dependents orders nothing here).
void griddep_wait();

template <class K> struct Launcher {
    dim3 grid, block;
    size_t smem;
    cudaStream_t stream;
    const char *name; // the kernel expression as written at the launch
    K kernel;
    bool pdl;
    template <class... A> void operator()(A... args) const {
        K k = kernel;
        run_grid(
            grid, block, smem, stream, reinterpret_cast<const void *>(k), name, [=]() { k(args...); }, pdl);
    }
};
template <class K>
Launcher<K> launcher(dim3 grid, dim3 block, size_t smem, cudaStream_t stream, const char *name, K kernel,
                     bool pdl = false) {
    return Launcher<K>{grid, block, smem, stream, name, kernel, pdl};
}

// __threadfence (fence.sc.gpu) and, under ThreadSanitizer, what an atomic
// means to it: the model of fences and atomics in interp.cpp (thread_fence).
void thread_fence();
void atomic_done(const void *p);
template <class T> T atomic_add(T *p, T v) {
#ifdef PA_INTERP_TSAN
    // A relaxed atomic, as on the device: ThreadSanitizer sees no race, and
    // only the fences around it order anything (atomic_done).
    T old, want;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    do
        want = old + v;
    while (!__atomic_compare_exchange(p, &old, &want, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    atomic_done(p);
    return old;
#else
    const T old = *p; // CTAs run one at a time and threads switch only at barriers
    *p = old + v;
    return old;
#endif
}
// __fdividef (div.approx.f32): a / b within 2 ulp for |b| in [2^-126, 2^126]
// (exact here); for 2^126 < |b| < 2^128 the device returns 0 for a finite a
// and NaN for an infinite one (CUDA Math API, PTX ISA div.approx), which a
// plain division here would hide.
inline float fdividef(float a, float b) {
    if (fabsf(b) > 0x1p126f && fabsf(b) < INFINITY)
        return isinf(a) ? NAN : 0.0f * a * b;
    return a / b;
}
inline int clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
[[noreturn]] void fatal(const char *what, const char *file, int line);
// A vector access the device would fault on.
inline void check_align(const void *p, int n, const char *file, int line) {
    if ((uintptr_t)p % (uintptr_t)n)
        fatal("misaligned vector access", file, line);
}

// The shuffles and __syncwarp model a whole warp (full mask, width 32), which is
// all the kernels use; another mask or width would run as if it were full here
// while the device does something else, so it aborts instead.
inline int warp_args(unsigned mask, const char *file, int line, int width = 32) {
    if (mask != 0xffffffffu || width != 32)
        fatal("a shuffle or __syncwarp with a partial mask or a width other than 32 (not modelled)", file, line);
    return 32;
}
inline unsigned mask_or_full(unsigned mask = 0xffffffffu) { return mask; }

} // namespace pa_interp

#define threadIdx (::pa_interp::thread_idx())
#define blockIdx (::pa_interp::block_idx())
#define blockDim (::pa_interp::block_dim())
#define gridDim (::pa_interp::grid_dim())
#define __syncthreads() ::pa_interp::sync_block(__FILE__, __LINE__)
#define __syncthreads_or(p) ::pa_interp::sync_or((p), __FILE__, __LINE__)
#define __syncwarp(...)                                                                                                \
    ((void)::pa_interp::warp_args(::pa_interp::mask_or_full(__VA_ARGS__), __FILE__, __LINE__),                         \
     ::pa_interp::sync_warp(__FILE__, __LINE__))
#define __shfl_xor_sync(mask, v, o, ...)                                                                               \
    ::pa_interp::shfl((v), 0, (o), ::pa_interp::warp_args((mask), __FILE__, __LINE__ __VA_OPT__(, ) __VA_ARGS__))
#define __shfl_sync(mask, v, src, ...)                                                                                 \
    ::pa_interp::shfl((v), 1, (src), ::pa_interp::warp_args((mask), __FILE__, __LINE__ __VA_OPT__(, ) __VA_ARGS__))
#define __shfl_up_sync(mask, v, d, ...)                                                                                \
    ::pa_interp::shfl((v), 2, (d), ::pa_interp::warp_args((mask), __FILE__, __LINE__ __VA_OPT__(, ) __VA_ARGS__))
#define __shfl_down_sync(mask, v, d, ...)                                                                              \
    ::pa_interp::shfl((v), 3, (d), ::pa_interp::warp_args((mask), __FILE__, __LINE__ __VA_OPT__(, ) __VA_ARGS__))
#define __ldcg(p) (*(p))
#define __ldg(p) (*(p))
#define __threadfence() ::pa_interp::thread_fence()
#define atomicAdd(p, v) ::pa_interp::atomic_add((p), (v))
#define __expf(x) expf(x)
#define __logf(x) logf(x)
#define __fdividef(a, b) ::pa_interp::fdividef((a), (b))
#define __clz(x) ::pa_interp::clz(x)
template <class T> inline cudaError_t cudaFuncSetAttribute(T *f, cudaFuncAttribute a, int v) {
    return ::cudaFuncSetAttribute(reinterpret_cast<const void *>(f), a, v);
}
template <class T> inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, T *f, int b, size_t s) {
    return ::cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, reinterpret_cast<const void *>(f), b, s);
}

inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long min(long a, long b) { return a < b ? a : b; }
inline long max(long a, long b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
