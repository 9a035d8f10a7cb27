/* GPU timing harness shared by every `pagedattn bench` op: CUDA events,
 * warm-up, L2 flushed before every measured iteration, NVTX ranges around each
 * measured region, and the roofs measured in the same run: the device's copy
 * bandwidth (memory-bound ops) and a cuBLAS GEMM's TFLOP/s (compute-bound ops).
 * Roofs are measured once per process and cached, so a sweep pays once. */
#ifndef PA_BENCH_GPU_H
#define PA_BENCH_GPU_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "pagedattn/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pa_timing {
    double median_us, min_us, max_us;
    int iters;
} pa_timing;

/* Device-to-device copy bandwidth in GB/s, counting bytes read plus bytes
 * written (best of 10 copies of 512 MiB). Measured on the first call, cached
 * after. Returns 0 on failure (message on stderr). */
double pa_bench_copy_bandwidth(void);

/* Read-only bandwidth in GB/s: a stream of 16-byte loads over 1 GiB that
 * writes nothing (best of 10). The roof of the attention ops, which read the
 * cache and write little (a copy's writes cost more than reads: the copy
 * roof sat below what decode baselines reached). Measured on the first call,
 * cached after. Returns 0 on failure (message on stderr). */
double pa_bench_read_bandwidth(void);

/* The read stream itself (benchmarks/read_stream.cu): `bytes` (a multiple of 16)
 * of buf read on `stream`; sink is a device word it almost never writes.
 * Returns 0 on a good launch. */
int pa_bench_read_stream(const void *buf, size_t bytes, uint32_t *sink, cudaStream_t stream);

/* Pinned-host <-> device copy bandwidth in GB/s (to_device: host to device,
 * else device to host), bytes counted once: the roof of the swaps. Best of 8
 * copies of 256 MiB; measured on the first call per direction, cached after.
 * Returns 0 on failure (message on stderr). */
double pa_bench_host_bandwidth(int to_device);

/* cuBLAS GEMM throughput in TFLOP/s for inputs of dtype `t` (8192^3, best of
 * 10): f16/bf16 on tensor cores with f32 accumulation, f32 as plain f32 (no
 * TF32), fp8 dtypes as f16 (the attention ops compute in the query dtype).
 * Measured on the first call per dtype, cached after. 0 on failure. */
double pa_bench_gemm_tflops(pa_dtype t);

/* What the rows name as the device: the CUDA device's name (gpu != 0) or the
 * CPU model; and the CUDA driver version (0 without a driver). Cached. */
const char *pa_bench_device_name(int gpu);
int pa_bench_driver_version(void);

/* One progress line on stderr for sweeps: "[i/n] <printf text>". */
void pa_bench_progress(int i, int n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Runs fn(ctx) `warmup` times, then `iters` times each preceded by an L2 flush
 * (the read stream over twice the L2 size, outside the timed region: the L2
 * then holds clean lines only, so no write-back of the flush lands in the
 * timed region, as a memset's dirty lines did) and timed with CUDA events on
 * the default stream. fn returns 0 on success. NVTX marks each
 * measured region with `label`. Returns 0 on success. */
int pa_bench_time_gpu(const char *label, int (*fn)(void *ctx), void *ctx, int warmup, int iters, pa_timing *out);

/* A device copy of `bytes` of host memory h, kept in slots[*n] (cap slots) for
 * the caller to free. NULL, with no copy, when *err is set or h is NULL; on a
 * failure (no slot left, allocation, copy) a line on stderr naming `who`, *err
 * set, NULL. */
void *pa_bench_upload(void **slots, int *n, int cap, const void *h, size_t bytes, int *err, const char *who);

/* Same on the CPU with a monotonic clock (no flush: the CPU reference is not
 * what anyone tunes). */
int pa_bench_time_cpu(int (*fn)(void *ctx), void *ctx, int warmup, int iters, pa_timing *out);

#ifdef __cplusplus
}
#endif
#endif
