// The current device's compute capability, for the launchers' choices that
// depend on it (the Hopper prefill kernel, the decode merge's programmatic
// dependent launch): two attribute queries, no synchronisation, cheap enough
// for every launch. False, with the error cleared, when there is no device.
#pragma once

#include <cuda_runtime_api.h>
#include <stddef.h>

#include "launch_status.h"

inline bool pa_current_cc(int *major, int *minor) {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return true;
}

// 0 when `dynamic` bytes of shared memory (and the kernel's static ones) fit
// the current device's opt-in limit a CTA, else PA_LAUNCH_SMEM_SHORT with the
// need and the limit noted (launch_status.h): asked before anything launches,
// so an op the device cannot run is refused whole, not failed half way. Every
// sm_80+ device allows at least 99 KiB: below 90 KiB nothing is asked (no
// cost per launch); within 8 KiB under the limit the static bytes are asked
// too. A query that fails says nothing (cleared): the launch then reports.
template <class K> int pa_smem_check(K *kernel, size_t dynamic) {
    if (dynamic <= 90 * 1024)
        return 0;
    int dev = 0, optin = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    size_t need = dynamic;
    if (need + 8 * 1024 > (size_t)optin) {
        cudaFuncAttributes a;
        if (cudaFuncGetAttributes(&a, reinterpret_cast<const void *>(kernel)) != cudaSuccess) {
            (void)cudaGetLastError();
            return 0;
        }
        need += a.sharedSizeBytes;
    }
    if (need <= (size_t)optin)
        return 0;
    pa_note_smem_short(need, optin);
    return PA_LAUNCH_SMEM_SHORT;
}
