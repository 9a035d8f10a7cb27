// The current device's compute capability, for the launchers' choices that
// depend on it (the Hopper prefill kernel, the decode merge's programmatic
// dependent launch): two attribute queries, no synchronisation, cheap enough
// for every launch. False, with the error cleared, when there is no device.
#pragma once

#include <cuda_runtime_api.h>

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
