// Kernels that exercise the interpreter itself (tests/interp/test_interp.c):
// shared-memory poisoning, barrier checks and, in the interp-tsan build, the
// race detector. Compiled only in interpret mode.
#include "../../cuda/ptx.cuh"

#include "selftest_kernels.h"

namespace {

__global__ void static_smem_first_read(uint32_t *out) {
    PA_STATIC_SMEM(uint32_t s_word);
    if (threadIdx.x == 0) {
        out[blockIdx.x] = s_word; // read before any write in this CTA
        s_word = 42u;
    }
}

__global__ void dynamic_smem_first_read(uint32_t *out) {
    PA_DYNAMIC_SMEM(uint32_t, s);
    if (threadIdx.x == 0) {
        out[blockIdx.x] = s[0];
        s[0] = 42u;
    }
}

__global__ void barrier_in_two_places(int *out) {
    if (threadIdx.x < 16)
        __syncthreads();
    else
        __syncthreads();
    out[threadIdx.x] = 1;
}

// Lane 0 writes a word every lane reads, `ordered` decides whether a
// __syncwarp stands between; a shuffle always does (it orders nothing).
__global__ void lane_write_then_read(int *out, int ordered) {
    PA_STATIC_SMEM(int s_word);
    const int lane = threadIdx.x & 31;
    if (lane == 0)
        s_word = 7;
    const int x = __shfl_xor_sync(0xffffffffu, lane, 1);
    if (ordered)
        __syncwarp();
    out[threadIdx.x] = s_word + x - (lane ^ 1);
}

// Every thread reads a word that thread 0 rewrites afterwards; `ordered`
// decides whether a __syncthreads stands between.
__global__ void read_then_rewrite(int *out, int ordered) {
    PA_STATIC_SMEM(int s_word);
    if (threadIdx.x == 0)
        s_word = 1;
    __syncthreads();
    out[threadIdx.x] = s_word;
    if (ordered)
        __syncthreads();
    if (threadIdx.x == 0)
        s_word = 2;
}

// Warp 0 copies a row with cp.async and waits for it; warp 1 reads the row.
// `ordered` puts a __syncthreads between the wait and the read.
__global__ void cp_async_then_read(const uint32_t *src, uint32_t *out, int ordered) {
    PA_DYNAMIC_SMEM(uint32_t, s);
    const int t = threadIdx.x;
    if (t < 4) {
        pa::ptx::cp_async(s + 4 * t, src + 4 * t, 16, 16);
        pa::ptx::cp_async_commit();
        pa::ptx::cp_async_wait<0>();
    }
    if (ordered)
        __syncthreads();
    if (t >= 32 && t < 48)
        out[t - 32] = s[t - 32];
}

// Lane l reads src[l * stride] and writes shared word l * sstride.
__global__ void strided_access(const float *src, float *out, int stride, int sstride) {
    PA_DYNAMIC_SMEM(float, s);
    const int l = threadIdx.x;
    s[l * sstride] = src[l * stride];
    __syncthreads();
    out[l] = s[l * sstride];
}

// Each CTA records when it ran: an output that depends on CTA order.
__global__ void arrival_order(int *counter, int *out) {
    if (threadIdx.x == 0)
        out[blockIdx.x] = atomicAdd(counter, 1);
}

} // namespace

extern "C" {

cudaError_t pa_selftest_static_smem(uint32_t *out, int ctas) {
    PA_LAUNCH(dim3(ctas), dim3(32), 0, nullptr, static_smem_first_read)(out);
    return cudaGetLastError();
}
cudaError_t pa_selftest_dynamic_smem(uint32_t *out, int ctas) {
    PA_LAUNCH(dim3(ctas), dim3(32), 64, nullptr, dynamic_smem_first_read)(out);
    return cudaGetLastError();
}
cudaError_t pa_selftest_barrier_in_two_places(int *out) {
    PA_LAUNCH(dim3(1), dim3(32), 0, nullptr, barrier_in_two_places)(out);
    return cudaGetLastError();
}
cudaError_t pa_selftest_lane_write_then_read(int *out, int ordered) {
    PA_LAUNCH(dim3(1), dim3(32), 0, nullptr, lane_write_then_read)(out, ordered);
    return cudaGetLastError();
}
cudaError_t pa_selftest_read_then_rewrite(int *out, int ordered) {
    PA_LAUNCH(dim3(1), dim3(64), 0, nullptr, read_then_rewrite)(out, ordered);
    return cudaGetLastError();
}
cudaError_t pa_selftest_arrival_order(int *counter, int *out, int ctas) {
    PA_LAUNCH(dim3(ctas), dim3(32), 0, nullptr, arrival_order)(counter, out);
    return cudaGetLastError();
}
cudaError_t pa_selftest_strided_access(const float *src, float *out, int stride, int sstride) {
    PA_LAUNCH(dim3(1), dim3(32), (size_t)(32 * sstride) * sizeof(float), nullptr, strided_access)
    (src, out, stride, sstride);
    return cudaGetLastError();
}
cudaError_t pa_selftest_cp_async_then_read(const uint32_t *src, uint32_t *out, int ordered) {
    PA_LAUNCH(dim3(1), dim3(64), 64, nullptr, cp_async_then_read)(src, out, ordered);
    return cudaGetLastError();
}

} // extern "C"
