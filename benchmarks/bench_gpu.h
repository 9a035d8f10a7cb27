/* GPU timing harness shared by every `pagedattn bench` op: CUDA events,
 * warm-up, L2 flushed before every measured iteration, the device's copy
 * bandwidth measured in the same run as the roof. */
#ifndef PA_BENCH_GPU_H
#define PA_BENCH_GPU_H

#include <stddef.h>

typedef struct pa_timing {
    double median_us, min_us, max_us;
    int iters;
} pa_timing;

/* Device-to-device copy bandwidth in GB/s, counting bytes read plus bytes
 * written. Returns 0 on failure (message on stderr). */
double pa_bench_copy_bandwidth(void);

/* Runs fn(ctx) `warmup` times, then `iters` times each preceded by an L2 flush
 * (a memset of twice the L2 size, outside the timed region) and timed with CUDA
 * events on the default stream. fn returns 0 on success. NVTX marks each
 * measured region with `label`. Returns 0 on success. */
int pa_bench_time_gpu(const char *label, int (*fn)(void *ctx), void *ctx, int warmup, int iters, pa_timing *out);

/* Same on the CPU with a monotonic clock (no flush: the CPU reference is not
 * what anyone tunes). */
int pa_bench_time_cpu(int (*fn)(void *ctx), void *ctx, int warmup, int iters, pa_timing *out);

#endif
