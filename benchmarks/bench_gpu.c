/* GPU timing harness: events, warm-up, L2 flush, the read, copy-bandwidth and
 * cuBLAS GEMM roofs, and the device names the rows carry. */
#include "bench_gpu.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef PA_CLI_INTERP
#include <cublas_v2.h>
#endif
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>

#include "cli.h"

/* (here, not in report.c: report.c calls into this file, and a call back would
 * make the two depend on each other; scripts/check-circles.py) */
static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double pa_bench_sort_median(double *t, int n) {
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static void summarise(double *us, int n, pa_timing *out) {
    out->median_us = pa_bench_sort_median(us, n);
    out->iters = n;
    out->min_us = us[0];
    out->max_us = us[n - 1];
}

#define CK(call)                                                                                                       \
    do {                                                                                                               \
        cudaError_t e_ = (call);                                                                                       \
        if (e_ != cudaSuccess) {                                                                                       \
            fprintf(stderr, "pagedattn bench: %s failed: %s\n", #call, cudaGetErrorString(e_));                        \
            goto fail;                                                                                                 \
        }                                                                                                              \
    } while (0)

/* Interpret mode (pagedattn-interp) measures the copy, read and pinned-host roofs
 * as a GPU does, on the fake runtime's simulated clock (tests/interp/README.md):
 * over 1 MiB and in 2 passes after the warm-ups, as every pass costs the same
 * there, where a GPU's passes move hundreds of MiB. */
#ifdef PA_CLI_INTERP
#define ROOF_BYTES(n) ((size_t)1 << 20)
#define ROOF_REPS(n) 2
#else
#define ROOF_BYTES(n) (n)
#define ROOF_REPS(n) (n)
#endif

/* Roofs are properties of the device, not of a problem: measure once. */
static double g_copy_roof, g_read_roof;
static double g_gemm_roof[PA_DTYPE_COUNT];

/* Best GB/s of `reps` passes over `bytes` of src on the default stream after
 * 2 warm-ups, each timed with events; `count` bytes counted per byte passed
 * (2: read plus written). A pass copies src to dst, or where dst is NULL reads
 * src through the read stream (sink: its device word). 0 on failure. */
static double best_gbps(void *dst, const void *src, uint32_t *sink, size_t bytes, int reps, double count) {
    cudaEvent_t e0 = NULL, e1 = NULL;
    double best = 0.0;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int i = 0; i < reps + 2; i++) {
        CK(cudaEventRecord(e0, 0));
        if (dst)
            CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, 0));
        else if (pa_bench_read_stream(src, bytes, sink, 0) != 0) {
            fprintf(stderr, "pagedattn bench: the read stream failed: %s\n", cudaGetErrorString(cudaGetLastError()));
            best = 0.0;
            goto fail;
        }
        CK(cudaEventRecord(e1, 0));
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        const double gbps = count * (double)bytes / (ms * 1e-3) / 1e9;
        if (i >= 2 && gbps > best) /* the first two are warm-up */
            best = gbps;
    }
fail:
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    return best;
}

double pa_bench_copy_bandwidth(void) {
    if (g_copy_roof > 0)
        return g_copy_roof;
    const size_t bytes = ROOF_BYTES((size_t)512 << 20);
    void *a = NULL, *b = NULL;
    double best = 0.0;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMemset(a, 1, bytes));
    best = best_gbps(b, a, NULL, bytes, ROOF_REPS(10), 2.0);
fail:
    cudaFree(a);
    cudaFree(b);
    g_copy_roof = best;
    return best;
}

double pa_bench_read_bandwidth(void) {
    if (g_read_roof > 0)
        return g_read_roof;
    const size_t bytes = ROOF_BYTES((size_t)1 << 30);
    void *a = NULL;
    uint32_t *sink = NULL;
    double best = 0.0;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc((void **)&sink, sizeof *sink));
    CK(cudaMemset(a, 1, bytes));
    best = best_gbps(NULL, a, sink, bytes, ROOF_REPS(10), 1.0);
fail:
    cudaFree(a);
    cudaFree(sink);
    g_read_roof = best;
    return best;
}

/* The swaps' roof: one 256 MiB copy between pinned host memory and the device
 * at a time; bytes counted once (what crosses the link). */
static double g_host_roof[2];

double pa_bench_host_bandwidth(int to_device) {
    to_device = to_device != 0;
    if (g_host_roof[to_device] > 0)
        return g_host_roof[to_device];
    const size_t bytes = ROOF_BYTES((size_t)256 << 20);
    void *h = NULL, *d = NULL;
    double best = 0.0;
    CK(cudaMallocHost(&h, bytes));
    CK(cudaMalloc(&d, bytes));
    memset(h, 1, bytes);
    best =
        to_device ? best_gbps(d, h, NULL, bytes, ROOF_REPS(8), 1.0) : best_gbps(h, d, NULL, bytes, ROOF_REPS(8), 1.0);
fail:
    cudaFreeHost(h);
    cudaFree(d);
    g_host_roof[to_device] = best;
    return best;
}

#define CB(call)                                                                                                       \
    do {                                                                                                               \
        cublasStatus_t s_ = (call);                                                                                    \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                             \
            fprintf(stderr, "pagedattn bench: %s failed: cuBLAS status %d\n", #call, (int)s_);                         \
            goto fail;                                                                                                 \
        }                                                                                                              \
    } while (0)

/* The compute roof: a large square GEMM through cuBLAS, the best a vendor
 * library gets from the tensor cores (or the f32 pipes) on this device. Inputs
 * are small random values (tensor-core power, hence clocks, depend on data;
 * zeros would flatter the roof). */
double pa_bench_gemm_tflops(pa_dtype t) {
#ifdef PA_CLI_INTERP
    (void)t, (void)g_gemm_roof;
    return 0.0; /* interpret mode (pagedattn-interp): no cuBLAS, no roof */
#else
    if (t == PA_DTYPE_FP8_E4M3 || t == PA_DTYPE_FP8_E5M2)
        t = PA_DTYPE_F16;
    if ((int)t < 0 || (int)t >= PA_DTYPE_COUNT)
        return 0.0;
    if (g_gemm_roof[t] > 0)
        return g_gemm_roof[t];
    const int n = 8192;
    const size_t es = pa_dtype_size(t), elems = (size_t)n * n, chunk = (size_t)1 << 20;
    const cudaDataType ct = t == PA_DTYPE_F16 ? CUDA_R_16F : t == PA_DTYPE_BF16 ? CUDA_R_16BF : CUDA_R_32F;
    void *a = NULL, *b = NULL, *c = NULL, *host = NULL;
    cublasHandle_t h = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double best = 0.0;
    host = malloc(chunk * es);
    if (!host)
        return 0.0;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < chunk; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        pa_store_from_float(t, host, i, (float)((double)(x >> 11) / 9007199254740992.0 - 0.5));
    }
    CK(cudaMalloc(&a, elems * es));
    CK(cudaMalloc(&b, elems * es));
    CK(cudaMalloc(&c, elems * es));
    for (size_t off = 0; off < elems; off += chunk) {
        CK(cudaMemcpy((char *)a + off * es, host, chunk * es, cudaMemcpyHostToDevice));
        CK(cudaMemcpy((char *)b + off * es, host, chunk * es, cudaMemcpyHostToDevice));
    }
    CB(cublasCreate(&h));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    const float one = 1.0f, zero = 0.0f;
    for (int i = 0; i < 13; i++) {
        nvtxRangePushA("gemm-roof");
        CK(cudaEventRecord(e0, 0));
        CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, ct, n, b, ct, n, &zero, c, ct, n,
                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        CK(cudaEventRecord(e1, 0));
        nvtxRangePop();
        CK(cudaEventSynchronize(e1));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        double tf = 2.0 * n * (double)n * n / (ms * 1e-3) / 1e12;
        if (i >= 3 && tf > best) /* the first three are warm-up (clocks, heuristics) */
            best = tf;
    }
    g_gemm_roof[t] = best;
fail:
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    if (h)
        cublasDestroy(h);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    free(host);
    return best;
#endif
}

const char *pa_bench_device_name(int gpu) {
    static char gpu_name[256], cpu_name[256];
    if (gpu) {
        if (!gpu_name[0]) {
            pa_device_props p;
            snprintf(gpu_name, sizeof gpu_name, "%s", pa_device_info(0, &p) == PA_SUCCESS ? p.name : "no CUDA device");
        }
        return gpu_name;
    }
    if (!cpu_name[0]) {
        snprintf(cpu_name, sizeof cpu_name, "cpu");
        FILE *f = fopen("/proc/cpuinfo", "r");
        char line[512];
        while (f && fgets(line, sizeof line, f)) {
            char *colon = strchr(line, ':');
            if (strncmp(line, "model name", 10) || !colon)
                continue;
            colon += 1 + strspn(colon + 1, " \t");
            colon[strcspn(colon, "\n")] = '\0';
            snprintf(cpu_name, sizeof cpu_name, "cpu: %s", colon);
            break;
        }
        if (f)
            fclose(f);
    }
    return cpu_name;
}

int pa_bench_driver_version(void) {
    static int v = -1;
    if (v < 0) {
        v = 0;
        if (cudaDriverGetVersion(&v) != cudaSuccess) {
            (void)cudaGetLastError();
            v = 0;
        }
    }
    return v;
}

void pa_bench_progress(int i, int n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "[%d/%d] ", i, n);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int pa_bench_time_gpu(const char *label, int (*fn)(void *ctx), void *ctx, int warmup, int iters, pa_timing *out) {
    int rc = 1, dev = 0, l2 = 0;
    void *flush = NULL;
    uint32_t *sink = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    double *us = malloc(sizeof(double) * (size_t)iters);
    if (!us)
        return 1;
    CK(cudaGetDevice(&dev));
#ifdef PA_CLI_INTERP
    (void)l2; /* interpret mode: no L2 to flush; timed on the simulated clock (tests/interp/README.md) */
    const size_t flush_bytes = 0;
#else
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    size_t flush_bytes = (size_t)(l2 > 0 ? l2 : (50 << 20)) * 2;
    CK(cudaMalloc(&flush, flush_bytes));
    CK(cudaMalloc((void **)&sink, sizeof *sink));
    CK(cudaMemset(flush, 1, flush_bytes));
#endif
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int i = 0; i < warmup; i++)
        if (fn(ctx) != 0)
            goto fail;
    CK(cudaDeviceSynchronize());
    for (int i = 0; i < iters; i++) {
        if (flush_bytes && pa_bench_read_stream(flush, flush_bytes, sink, 0) != 0) {
            fprintf(stderr, "pagedattn bench: the L2 flush failed: %s\n", cudaGetErrorString(cudaGetLastError()));
            goto fail;
        }
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
    cudaFree(sink);
    free(us);
    return rc;
}

void *pa_bench_upload(void **slots, int *n, int cap, const void *h, size_t bytes, int *err, const char *who) {
    void *d = NULL;
    if (*err || !h)
        return NULL;
    if (*n >= cap) {
        fprintf(stderr, "pagedattn %s: more device copies than the problem holds\n", who);
        *err = 1;
        return NULL;
    }
    if (cudaMalloc(&d, bytes ? bytes : 1) != cudaSuccess ||
        cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
        fprintf(stderr, "pagedattn %s: device allocation of %zu bytes failed\n", who, bytes);
        cudaFree(d);
        *err = 1;
        return NULL;
    }
    slots[(*n)++] = d;
    return d;
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
