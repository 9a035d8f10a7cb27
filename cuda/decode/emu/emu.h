// Host emulation of the few CUDA features the decode kernels use, so the very
// same kernel source (cuda/decode/decode_kernel.cuh) runs on a machine without
// a GPU: each CTA's threads are coroutines; __syncthreads and warp shuffles are
// barriers between them; cp.async copies are queued per thread and land at
// cp.async.wait_group (or at issue with PA_EMU_CP=immediate). Misaligned
// cp.async/vector accesses, barrier divergence and shuffles with exited lanes
// abort. A development tool (cuda/decode/emu/README), not part of the library.
#pragma once

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <vector_functions.h>
#include <vector_types.h>

#define PA_DEC_DEV inline
#define PA_DEC_GLOBAL
#define PA_DEC_BOUNDS(n)
#define PA_DEC_SMEM(name) unsigned char *name = ::pa_emu::smem()
#define PA_DEC_ALIGNED(ptr, n) ::pa_emu::check_align((const void *)(ptr), (n), __FILE__, __LINE__)

namespace pa_emu {

struct dim3e {
    unsigned x, y, z;
};
extern dim3e block_idx, grid_dim, block_dim;
const dim3e &thread_idx();
unsigned char *smem();
void sync_block();
float shfl_xor(float v, int o);
void cp_async(void *dst, const void *src, int unit, int src_bytes);
void cp_commit();
void cp_wait(int n);
void check_align(const void *p, int n, const char *file, int line);

// Runs body(arg) on every thread of every CTA of the grid (CTAs one after another).
void launch(dim3e grid, int threads, size_t smem_bytes, void (*body)(void *), void *arg);

// Host buffers whose last byte is followed by an inaccessible page, so a read
// past the end faults (the emulator's memcheck). Zero-initialised.
void *guarded_alloc(size_t bytes);
void guarded_free(void *p);

} // namespace pa_emu

#define threadIdx (::pa_emu::thread_idx())
#define blockIdx (::pa_emu::block_idx)
#define gridDim (::pa_emu::grid_dim)
#define blockDim (::pa_emu::block_dim)

inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline int64_t min(int64_t a, int64_t b) { return a < b ? a : b; }

namespace pa_dec {
inline void bar() { pa_emu::sync_block(); }
inline float shfl_xor(float v, int o) { return pa_emu::shfl_xor(v, o); }
inline float fexp(float x) { return expf(x); }
inline void cp_async(void *dst, const void *src, int unit, int src_bytes) {
    pa_emu::cp_async(dst, src, unit, src_bytes);
}
inline void cp_commit() { pa_emu::cp_commit(); }
template <int N> inline void cp_wait() { pa_emu::cp_wait(N); }
} // namespace pa_dec
