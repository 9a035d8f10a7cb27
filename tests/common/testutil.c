#include "testutil.h"

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t pa_rng_next(pa_rng *r) {
    /* splitmix64 */
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float pa_rng_uniform(pa_rng *r, float lo, float hi) {
    double u = (double)(pa_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
    return (float)(lo + (hi - lo) * u);
}

int pa_rng_int(pa_rng *r, int lo, int hi) {
    uint64_t span = (uint64_t)((int64_t)hi - lo + 1);
    return (int)(lo + (int64_t)(pa_rng_next(r) % span));
}

void *pa_test_random_buffer(pa_rng *r, pa_dtype t, size_t n, float lo, float hi) {
    void *b = malloc(n * pa_dtype_size(t) + 16);
    cr_assert(b != NULL);
    for (size_t i = 0; i < n; i++)
        pa_store_from_float(t, b, i, pa_rng_uniform(r, lo, hi));
    return b;
}

void pa_test_fill_nan(pa_dtype t, void *buf, size_t n) {
    for (size_t i = 0; i < n; i++)
        pa_store_from_float(t, buf, i, NAN);
}

float *pa_test_to_float(pa_dtype t, const void *buf, size_t n) {
    float *f = malloc(n * sizeof(float) + 4);
    cr_assert(f != NULL);
    for (size_t i = 0; i < n; i++)
        f[i] = pa_load_as_float(t, buf, i);
    return f;
}

int pa_test_have_gpu(void) { return pa_device_count() > 0; }

void *pa_test_dev_alloc(size_t bytes) {
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    cr_assert_eq(e, cudaSuccess, "cudaMalloc(%zu): %s", bytes, cudaGetErrorString(e));
    return p;
}

void *pa_test_dev_upload(const void *host, size_t bytes) {
    void *p = pa_test_dev_alloc(bytes);
    cudaError_t e = cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice);
    cr_assert_eq(e, cudaSuccess, "upload: %s", cudaGetErrorString(e));
    return p;
}

void pa_test_dev_download(void *host, const void *dev, size_t bytes) {
    cudaError_t e = cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost);
    cr_assert_eq(e, cudaSuccess, "download: %s", cudaGetErrorString(e));
}

void pa_test_dev_free(void *dev) { cudaFree(dev); }

void pa_test_dev_sync(void) {
    cudaError_t e = cudaDeviceSynchronize();
    cr_assert_eq(e, cudaSuccess, "sync: %s", cudaGetErrorString(e));
}
