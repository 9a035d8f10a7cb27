// Block moves: swap_blocks (copy engines, host mapping) and copy_blocks (one
// kernel for every layer, device mapping and device pointer tables).
#include <cuda_runtime.h>
#include <stdint.h>

#include "cache_ops_internal.h"
#include "launchers.h"
#include "ptx.cuh"

namespace {

// ---- copy_blocks -----------------------------------------------------------------
// Grid (num_pairs, num_layers): CTA (p, l) copies one block of layer l's key
// buffer and one of its value buffer. The pointer tables and the mapping are
// read here (vLLM builds them on the host and copies them over each call, which
// syncs; here they are device data so graphs replay with new mappings). 16-byte
// loads/stores when the buffer base and the block size allow (checked per CTA,
// uniform), bytes otherwise. A pair out of [0, num_blocks) (e.g. -1 padding of a
// graph-sized mapping) is skipped.
constexpr int kCopyThreads = 256;

__device__ __forceinline__ void copy_block(char *base, int64_t src, int64_t dst, int64_t bytes) {
    const char *s = base + src * bytes;
    char *d = base + dst * bytes;
    if ((((uintptr_t)base | (uintptr_t)bytes) & 15) == 0) {
        const uint4 *s4 = reinterpret_cast<const uint4 *>(s);
        uint4 *d4 = reinterpret_cast<uint4 *>(d);
        for (int64_t i = threadIdx.x; i < bytes / 16; i += blockDim.x)
            d4[i] = s4[i];
    } else {
        for (int64_t i = threadIdx.x; i < bytes; i += blockDim.x)
            d[i] = s[i];
    }
}

__global__ void __launch_bounds__(kCopyThreads) copy_blocks_kernel(const pa_cb_params p) {
    const int64_t pair = blockIdx.x;
    const int layer = blockIdx.y;
    const int64_t src = p.mapping[2 * pair], dst = p.mapping[2 * pair + 1];
    if (src < 0 || src >= p.num_blocks || dst < 0 || dst >= p.num_blocks)
        return;
    copy_block(reinterpret_cast<char *>(p.key_caches[layer]), src, dst, p.block_bytes);
    if (p.value_caches)
        copy_block(reinterpret_cast<char *>(p.value_caches[layer]), src, dst, p.block_bytes);
}

// ---- swap_blocks -----------------------------------------------------------------
// Copy engines, not a kernel: no SM time taken from the model, no mapped
// allocations needed. Contiguous runs are merged (pa_swap_next_run), then up to
// kBatch runs go out per cudaMemcpyBatchAsync call. The batch API refuses the
// legacy NULL stream, a driver older than the runtime may not have it, and it
// cannot be captured into a CUDA graph (cudaErrorStreamCaptureUnsupported; on
// CUDA 13 reported to leave the capture valid without the copy,
// rapidsai/rmm#2518, so it must never be tried there): all three fall back to one
// cudaMemcpyAsync per run (still coalesced), which graphs capture. The capture
// state is asked first, so a capture never sees the batch call.
constexpr int kBatch = 128;

cudaError_t copy_runs_one_by_one(void *const *dsts, const void *const *srcs, const size_t *sizes, size_t n,
                                 cudaStream_t s) {
    for (size_t k = 0; k < n; k++) {
        cudaError_t e = cudaMemcpyAsync(dsts[k], srcs[k], sizes[k], cudaMemcpyDefault, s);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

cudaError_t copy_runs(void *const *dsts, const void *const *srcs, const size_t *sizes, size_t n, cudaStream_t s,
                      bool *batch_ok) {
#if CUDART_VERSION >= 12080
    if (*batch_ok && n > 1 && s != nullptr && s != cudaStreamLegacy) {
        cudaMemcpyAttributes attr = {};
        attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream; // sources may be written earlier on the stream
        attr.flags = cudaMemcpyFlagPreferOverlapWithCompute;
        size_t attr_idx = 0;
#if CUDART_VERSION >= 13000
        cudaError_t e = cudaMemcpyBatchAsync(dsts, srcs, sizes, n, &attr, &attr_idx, 1, s);
#else
        size_t fail_idx = 0;
        cudaError_t e = cudaMemcpyBatchAsync(const_cast<void **>(dsts), const_cast<void **>(srcs),
                                             const_cast<size_t *>(sizes), n, &attr, &attr_idx, 1, &fail_idx, s);
#endif
        if (e != cudaErrorNotSupported && e != cudaErrorCallRequiresNewerDriver)
            return e;
        (void)cudaGetLastError(); // not sticky: clear it and stop trying the batch API
        *batch_ok = false;
    }
#else
    (void)batch_ok;
#endif
    return copy_runs_one_by_one(dsts, srcs, sizes, n, s);
}

} // namespace

extern "C" int pa_launch_copy_blocks(const pa_cb_params *p, pa_stream stream) {
    dim3 grid((unsigned)p->num_pairs, (unsigned)p->num_layers);
    PA_LAUNCH(grid, kCopyThreads, 0, reinterpret_cast<cudaStream_t>(stream), copy_blocks_kernel)(*p);
    return (int)cudaGetLastError();
}

extern "C" int pa_launch_swap_blocks(void *dst, const void *src, int64_t block_bytes, const int64_t *mapping, int64_t n,
                                     pa_stream stream) {
    cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
    void *dsts[kBatch];
    const void *srcs[kBatch];
    size_t sizes[kBatch];
    size_t count = 0;
    bool batch_ok = s != nullptr && s != cudaStreamLegacy;
    if (batch_ok) {
        cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
        if (cudaStreamIsCapturing(s, &cs) != cudaSuccess) {
            (void)cudaGetLastError(); // unknown state: take the capturable path
            batch_ok = false;
        } else if (cs != cudaStreamCaptureStatusNone) {
            batch_ok = false; // active (or invalidated) capture: no batch call
        }
    }
    // Copies within one batch call have no order among them (CUDA: dependent
    // copies in a batch are undefined), so a run whose destination blocks meet
    // a run already in the batch (a block named twice as a destination) goes
    // out in the next call, after it: the last pair naming a block wins, as in
    // the reference and on the one-by-one path. Separate buffers: a source
    // never meets a destination.
    int64_t dst_lo[kBatch], dst_hi[kBatch];
    for (int64_t i = 0; i < n;) {
        const pa_block_run r = pa_swap_next_run(mapping, n, &i);
        bool meets = false;
        for (size_t k = 0; k < count && !meets; k++)
            meets = r.dst_block < dst_hi[k] && dst_lo[k] < r.dst_block + r.num_blocks;
        if (meets) {
            cudaError_t e = copy_runs(dsts, srcs, sizes, count, s, &batch_ok);
            if (e != cudaSuccess)
                return (int)e;
            count = 0;
        }
        dst_lo[count] = r.dst_block;
        dst_hi[count] = r.dst_block + r.num_blocks;
        dsts[count] = static_cast<char *>(dst) + r.dst_block * block_bytes;
        srcs[count] = static_cast<const char *>(src) + r.src_block * block_bytes;
        sizes[count] = (size_t)(r.num_blocks * block_bytes);
        if (++count == kBatch || i == n) {
            cudaError_t e = copy_runs(dsts, srcs, sizes, count, s, &batch_ok);
            if (e != cudaSuccess)
                return (int)e;
            count = 0;
        }
    }
    return 0;
}
