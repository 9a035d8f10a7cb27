// The read stream of the timing harness (bench_gpu.c: the read roof and the
// L2 flush), in a file of its own: baseline.cu uses bench_gpu.c's timing, so
// bench_gpu.c may not use baseline.cu (scripts/check-circles.py).
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "../cuda/ptx.cuh"
#include "bench_gpu.h"

namespace {
// Every thread reads 16-byte words grid-stride and folds them; the fold is
// stored only where it equals `never` (a buffer of one repeated byte folds to
// 0), so the loads stay and the stream writes nothing: reads alone.
__global__ void read_stream(const uint4 *p, size_t n, uint32_t never, uint32_t *sink) {
    uint32_t acc = 0;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
#pragma unroll 4
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == never)
        *sink = acc;
}
} // namespace

extern "C" int pa_bench_read_stream(const void *buf, size_t bytes, uint32_t *sink, cudaStream_t stream) {
    static int sms = 0;
    if (sms <= 0) {
        int dev = 0;
        if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev))
            return 1;
    }
    // 8 CTAs of 256 threads an SM (the whole SM's threads): 32 KiB of loads in flight an SM per step.
    PA_LAUNCH(dim3((unsigned)sms * 8u), 256, 0, stream, read_stream)((const uint4 *)buf, bytes / 16, 0x5EEDu, sink);
    return cudaGetLastError() != cudaSuccess;
}
