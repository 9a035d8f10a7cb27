/* GPU timing harness: events, warm-up, L2 flush, copy-bandwidth roof. */
#include "bench_gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include "cli.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void summarise(double *us, int n, pa_timing *out) {
    qsort(us, (size_t)n, sizeof(double), cmp_double);
    out->iters = n;
    out->min_us = us[0];
    out->max_us = us[n - 1];
    out->median_us = n % 2 ? us[n / 2] : 0.5 * (us[n / 2 - 1] + us[n / 2]);
}

#define CK(call)                                                                                                       \
    do {                                                                                                               \
        cudaError_t e_ = (call);                                                                                       \
        if (e_ != cudaSuccess) {                                                                                       \
            fprintf(stderr, "pagedattn bench: %s failed: %s\n", #call, cudaGetErrorString(e_));                        \
            goto fail;                                                                                                 \
        }                                                                                                              \
    } while (0)

double pa_bench_copy_bandwidth(void) {
    const size_t bytes = (size_t)512 << 20;
    void *a = NULL, *b = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double best = 0.0;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMemset(a, 1, bytes));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int i = 0; i < 12; i++) {
        CK(cudaEventRecord(e0, 0));
        CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0));
        CK(cudaEventRecord(e1, 0));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        double gbps = 2.0 * (double)bytes / (ms * 1e-3) / 1e9;
        if (i >= 2 && gbps > best) /* first two are warm-up */
            best = gbps;
    }
fail:
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    return best;
}

int pa_bench_time_gpu(const char *label, int (*fn)(void *ctx), void *ctx, int warmup, int iters, pa_timing *out) {
    int rc = 1, dev = 0, l2 = 0;
    void *flush = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double *us = malloc(sizeof(double) * (size_t)iters);
    if (!us)
        return 1;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    size_t flush_bytes = (size_t)(l2 > 0 ? l2 : (50 << 20)) * 2;
    CK(cudaMalloc(&flush, flush_bytes));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int i = 0; i < warmup; i++)
        if (fn(ctx) != 0)
            goto fail;
    CK(cudaDeviceSynchronize());
    for (int i = 0; i < iters; i++) {
        CK(cudaMemsetAsync(flush, i & 0xff, flush_bytes, 0));
        nvtxRangePushA(label);
        CK(cudaEventRecord(e0, 0));
        if (fn(ctx) != 0) {
            nvtxRangePop();
            goto fail;
        }
        CK(cudaEventRecord(e1, 0));
        nvtxRangePop();
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        us[i] = ms * 1e3;
    }
    summarise(us, iters, out);
    rc = 0;
fail:
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    cudaFree(flush);
    free(us);
    return rc;
}

int pa_bench_time_cpu(int (*fn)(void *ctx), void *ctx, int warmup, int iters, pa_timing *out) {
    double *us = malloc(sizeof(double) * (size_t)iters);
    if (!us)
        return 1;
    for (int i = 0; i < warmup; i++)
        if (fn(ctx) != 0) {
            free(us);
            return 1;
        }
    for (int i = 0; i < iters; i++) {
        double t0 = pa_cli_now();
        if (fn(ctx) != 0) {
            free(us);
            return 1;
        }
        us[i] = (pa_cli_now() - t0) * 1e6;
    }
    summarise(us, iters, out);
    free(us);
    return 0;
}
