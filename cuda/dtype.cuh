// Device-side element loads and stores for every pa_dtype, bit-exact with the
// host conversions in csrc/core/core.c (round to nearest even; fp8 saturating)
// for every value but NaN, which stays a NaN of possibly other bits: the host
// keeps a float NaN's sign and payload, and the device's cvt need not (not
// checked on a GPU).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

#include "ptx.cuh"

namespace pa {

template <int DT> struct elt;
template <> struct elt<0> { using type = float; };
template <> struct elt<1> { using type = __half; };
template <> struct elt<2> { using type = __nv_bfloat16; };
template <> struct elt<3> { using type = uint8_t; };
template <> struct elt<4> { using type = uint8_t; };

template <int DT> __device__ __forceinline__ float to_float(typename elt<DT>::type v);
template <> __device__ __forceinline__ float to_float<0>(float v) { return v; }
template <> __device__ __forceinline__ float to_float<1>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float to_float<2>(__nv_bfloat16 v) { return __bfloat162float(v); }
template <> __device__ __forceinline__ float to_float<3>(uint8_t v) {
    __half_raw h = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)v, __NV_E4M3);
    return __half2float(__half(h));
}
template <> __device__ __forceinline__ float to_float<4>(uint8_t v) {
    __half_raw h = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)v, __NV_E5M2);
    return __half2float(__half(h));
}

template <int DT> __device__ __forceinline__ typename elt<DT>::type from_float(float v);
template <> __device__ __forceinline__ float from_float<0>(float v) { return v; }
template <> __device__ __forceinline__ __half from_float<1>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<2>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __forceinline__ uint8_t from_float<3>(float v) {
    return (uint8_t)__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
}
template <> __device__ __forceinline__ uint8_t from_float<4>(float v) {
    return (uint8_t)__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E5M2);
}

constexpr bool is_fp8(int dt) { return dt == 3 || dt == 4; }

// The unsigned type of a BYTES-byte vector load or store (16, 8 or 4 bytes).
template <int BYTES> struct raw_vec;
template <> struct raw_vec<16> { using type = uint4; };
template <> struct raw_vec<8> { using type = uint2; };
template <> struct raw_vec<4> { using type = uint32_t; };

} // namespace pa
