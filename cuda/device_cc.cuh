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

// Whether `dynamic` bytes of shared memory (and the kernel's static ones) fit
// the current device's opt-in limit a CTA, or the lower one PAGEDATTN_SMEM_LIMIT
// names (launch_status.h); *need, *optin and *capped say what was compared
// (0 where nothing was asked). Every sm_80+ device allows at least 99 KiB (and
// the variable never says less): below 90 KiB nothing is asked (no cost per
// launch); within 16 KiB under the limit the static bytes are asked too (exact
// while every kernel's static bytes stay under 16 KiB: scripts/check-static-smem.py,
// in CI, fails when one does not). A query that fails says nothing (cleared):
// true, and the launch then reports.
template <class K>
bool pa_smem_fits(K *kernel, size_t dynamic, size_t *need = nullptr, int *optin = nullptr, int *capped = nullptr) {
    if (need)
        *need = 0;
    if (optin)
        *optin = 0;
    if (capped)
        *capped = 0;
    if (dynamic <= 90 * 1024)
        return true;
    int dev = 0, limit = 0, knob = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return true;
    }
    limit = pa_smem_limit_knob(limit, &knob);
    if (capped)
        *capped = knob;
    if (optin)
        *optin = limit;
    size_t bytes = dynamic;
    if (bytes > (size_t)limit) { // short whatever the static bytes: no attribute query (nor module load)
        if (need)
            *need = bytes;
        return false;
    }
    if (bytes + 16 * 1024 > (size_t)limit) {
        cudaFuncAttributes a;
        if (cudaFuncGetAttributes(&a, reinterpret_cast<const void *>(kernel)) != cudaSuccess) {
            (void)cudaGetLastError();
            if (optin)
                *optin = 0;
            if (capped)
                *capped = 0;
            return true;
        }
        bytes += a.sharedSizeBytes;
    }
    if (need)
        *need = bytes;
    return bytes <= (size_t)limit;
}

// 0 when the kernel fits (pa_smem_fits), else PA_LAUNCH_SMEM_SHORT with the
// need and the limit noted (launch_status.h): asked before anything launches,
// so an op the device cannot run is refused whole, not failed half way.
template <class K> int pa_smem_check(K *kernel, size_t dynamic) {
    size_t need = 0;
    int optin = 0, capped = 0;
    if (pa_smem_fits(kernel, dynamic, &need, &optin, &capped))
        return 0;
    pa_note_smem_short(need, optin, capped);
    return PA_LAUNCH_SMEM_SHORT;
}
