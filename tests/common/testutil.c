#include "testutil.h"

#include <criterion/criterion.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void *pa_test_random_buffer(pa_rng *r, pa_dtype t, size_t n, float lo, float hi) {
    void *b = pa_random_buffer(r, t, n, lo, hi);
    cr_assert(b != NULL);
    return b;
}

void pa_test_fill_nan(pa_dtype t, void *buf, size_t n) { pa_fill_nan(t, buf, n); }

float *pa_test_to_float(pa_dtype t, const void *buf, size_t n) {
    float *f = malloc(n * sizeof(float) + 4);
    cr_assert(f != NULL);
    for (size_t i = 0; i < n; i++)
        f[i] = pa_load_as_float(t, buf, i);
    return f;
}

int pa_test_shrink(int n) {
    const char *e = getenv("PA_TEST_SHRINK");
    const long f = e ? strtol(e, NULL, 10) : 1;
    if (n <= 1 || f <= 1)
        return n;
    const long m = n / f;
    return m < 1 ? 1 : (int)m;
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
