/* Device discovery. Never aborts where there is no driver or device. */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "internal.h"

pa_status pa_cuda_fail(int cuda_err, const char *what) {
    cudaError_t e = (cudaError_t)cuda_err;
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
        return pa_fail(PA_ERR_NO_DEVICE, "%s: no CUDA device (%s)", what, cudaGetErrorString(e));
    return pa_fail(PA_ERR_CUDA, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

int pa_device_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* do not leave a sticky error for the caller */
        return 0;
    }
    return n;
}

pa_status pa_device_info(int device, pa_device_props *out) {
    PA_REQUIRE(out != NULL, "pa_device_info: out must not be NULL");
    /* An index that can never be valid is the caller's error, device or not. */
    PA_REQUIRE(device >= 0, "pa_device_info: device index %d is negative", device);
    memset(out, 0, sizeof *out);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        (void)cudaGetLastError();
        return pa_fail(PA_ERR_NO_DEVICE, "no CUDA device%s%s", e != cudaSuccess ? ": " : "",
                       e != cudaSuccess ? cudaGetErrorString(e) : "");
    }
    PA_REQUIRE(device >= 0 && device < n, "device %d out of range: %d device(s) present", device, n);
    struct cudaDeviceProp p;
    e = cudaGetDeviceProperties(&p, device);
    if (e != cudaSuccess)
        return pa_cuda_fail(e, "cudaGetDeviceProperties");
    snprintf(out->name, sizeof out->name, "%s", p.name);
    out->device = device;
    out->sm_count = p.multiProcessorCount;
    out->cc_major = p.major;
    out->cc_minor = p.minor;
    out->smem_per_block_optin = p.sharedMemPerBlockOptin;
    out->l2_bytes = (size_t)p.l2CacheSize;
    out->total_mem_bytes = p.totalGlobalMem;
    (void)cudaDriverGetVersion(&out->driver_version);
    (void)cudaRuntimeGetVersion(&out->runtime_version);
    pa_clear_error();
    return PA_SUCCESS;
}
