/* Device discovery. Never aborts where there is no driver or device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "internal.h"
#include "launch_status.h"

static _Thread_local size_t smem_need;
static _Thread_local int smem_have, smem_capped;

void pa_note_smem_short(size_t need, int have, int capped) {
    smem_need = need;
    smem_have = have;
    smem_capped = capped;
}

int pa_smem_limit_knob(int limit, int *capped) {
    *capped = 0;
    const char *e = getenv("PAGEDATTN_SMEM_LIMIT");
    if (!e || !*e || strspn(e, "0123456789") != strlen(e))
        return limit;
    const size_t least = 101376; /* 99 KiB: compute capability 8.6, 8.9, 12.x */
    size_t v = 0;
    for (const char *c = e; *c && v < least * 4; c++) /* past 4 x 99 KiB it is over every device's limit */
        v = v * 10 + (size_t)(*c - '0');
    if (v < least)
        v = least;
    if (limit < 0 || v >= (size_t)limit)
        return limit;
    *capped = 1;
    return (int)v;
}

pa_status pa_cuda_fail(int cuda_err, const char *what) {
    if (cuda_err == PA_LAUNCH_SMEM_SHORT) {
        int dev = 0, major = 0, minor = 0;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
            (void)cudaGetLastError();
        return pa_fail(PA_ERR_UNSUPPORTED,
                       "%s: the kernel this configuration takes needs %zu bytes of shared memory a CTA and this "
                       "device (compute capability %d.%d) allows %d%s; nothing was launched (on the 99 KiB of "
                       "compute capability 8.6, 8.9 and 12.x: the f32 ragged kernel above head 128)",
                       what, smem_need, major, minor, smem_have, smem_capped ? " under PAGEDATTN_SMEM_LIMIT" : "");
    }
    cudaError_t e = (cudaError_t)cuda_err;
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
        return pa_fail(PA_ERR_NO_DEVICE, "%s: no CUDA device (%s)", what, cudaGetErrorString(e));
    return pa_fail(PA_ERR_CUDA, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

pa_status pa_no_pending_cuda_error(const char *op) {
    const cudaError_t e = cudaPeekAtLastError();
    if (e == cudaSuccess)
        return PA_SUCCESS;
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
        return pa_cuda_fail((int)e, op); /* no device: what the launch would have said */
    return pa_fail(PA_ERR_CUDA,
                   "%s: a CUDA error was pending on this thread before the call: %s (%s); it is not this call's, "
                   "it is left for the code that caused it (cudaGetLastError reads and clears it), and nothing "
                   "was launched",
                   op, cudaGetErrorString(e), cudaGetErrorName(e));
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
    /* Filled here and copied out on success: *out is left as it was on any error. */
    pa_device_props r;
    memset(&r, 0, sizeof r);
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
    snprintf(r.name, sizeof r.name, "%s", p.name);
    r.device = device;
    r.sm_count = p.multiProcessorCount;
    r.cc_major = p.major;
    r.cc_minor = p.minor;
    r.smem_per_block_optin = p.sharedMemPerBlockOptin;
    r.l2_bytes = (size_t)p.l2CacheSize;
    r.total_mem_bytes = p.totalGlobalMem;
    (void)cudaDriverGetVersion(&r.driver_version);
    (void)cudaRuntimeGetVersion(&r.runtime_version);
    *out = r;
    pa_clear_error();
    return PA_SUCCESS;
}
