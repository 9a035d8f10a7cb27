// Every inline PTX statement of the library, and the macros through which the
// kernels declare shared memory and are launched. Nothing else under cuda/ or
// benchmarks/ may write `asm(` or `<<<` (scripts/check-sources.sh, run by CI):
// that is what lets interpret mode (PA_INTERPRET) compile the real kernel
// sources for the host and run them against the CPU references.
//
// Each wrapper has a twin in pa::ptx::twin: a plain function of the whole
// warp's inputs that implements the instruction's semantics as the PTX ISA
// states them (fragment layouts included). The twins are host and device
// code, so tests/gpu/test_ptx_twins checks each against the real instruction
// on a GPU, bit for bit, and interpret mode executes the twins.
//
//   cp.async.{ca,cg}.shared.global [dst], [src], 4|8|16, src_bytes
//       copies src_bytes (0..unit) from global memory and zero-fills the rest
//       of the unit; completes at the cp.async.wait_group that covers its
//       commit group (or earlier).
//   ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16
//       lanes 8j..8j+7 give the addresses of rows 0..7 of matrix j (16 bytes
//       each); lane t receives in register j the elements (t/4, 2(t%4)) and
//       (t/4, 2(t%4)+1) of matrix j, low half first; with .trans, the
//       elements (2(t%4), t/4) and (2(t%4)+1, t/4).
//   mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32
//       D = A B + C with A 16x16, B 16x8, C and D 16x8 f32. With g = t/4 and
//       c = t%4, lane t holds A in a0 = (g, 2c..2c+1), a1 = (g+8, 2c..),
//       a2 = (g, 2c+8..), a3 = (g+8, 2c+8..); B in b0 = (2c..2c+1, g),
//       b1 = (2c+8..2c+9, g); C and D in (g, 2c), (g, 2c+1), (g+8, 2c),
//       (g+8, 2c+1). The twin sums the exact products in double and rounds
//       once to f32; the hardware's internal rounding of the sum is not
//       specified by the ISA, so the twin equals it bit for bit whenever the
//       exact result is an f32 (and within a few ulp otherwise).
//   ex2.approx.ftz.f32 d, a
//       d = 2^a, approximated by the special-function unit in one
//       instruction; .ftz: a subnormal a counts as 0 and a subnormal result is
//       +0. The twin rounds the exact 2^a once and flushes the same way, so it
//       agrees with the hardware to within the approximation (a relative
//       2^-21 in tests/gpu/test_ptx_twins.c), not bit for bit. exp2f would
//       cost three more instructions per call for the subnormal range.
#pragma once

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define PA_PTX_HD __host__ __device__ __forceinline__
#else
#define PA_PTX_HD inline
#endif

namespace pa {
namespace ptx {
namespace twin {

// 16-bit float bits -> float, exact (subnormals, infinities and NaN included).
PA_PTX_HD float f16_bits_to_float(uint16_t h) {
    const uint32_t sign = (uint32_t)(h >> 15) << 31;
    const int e = (h >> 10) & 31;
    uint32_t m = h & 1023u, bits;
    if (e == 31) {
        bits = sign | 0x7f800000u | (m << 13);
    } else if (e != 0) {
        bits = sign | ((uint32_t)(e - 15 + 127) << 23) | (m << 13);
    } else if (m == 0) {
        bits = sign;
    } else { // subnormal: m * 2^-24
        int s = 0;
        while (!(m & 1024u)) {
            m <<= 1;
            s++;
        }
        bits = sign | ((uint32_t)(127 - 14 - s) << 23) | ((m & 1023u) << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}
PA_PTX_HD float bf16_bits_to_float(uint16_t h) {
    const uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}
// DT: 1 = f16, 2 = bf16 (pa_dtype numbering).
template <int DT> PA_PTX_HD double half_to_double(uint16_t h) {
    return DT == 1 ? (double)f16_bits_to_float(h) : (double)bf16_bits_to_float(h);
}
PA_PTX_HD uint16_t lo16(uint32_t r) { return (uint16_t)(r & 0xffffu); }
PA_PTX_HD uint16_t hi16(uint32_t r) { return (uint16_t)(r >> 16); }

// cp.async: one copy of `unit` bytes, the first src_bytes read, the rest zero.
PA_PTX_HD void cp_async(void *dst, const void *src, int unit, int src_bytes) {
    unsigned char *d = static_cast<unsigned char *>(dst);
    const unsigned char *s = static_cast<const unsigned char *>(src);
    for (int i = 0; i < unit; i++)
        d[i] = i < src_bytes ? s[i] : 0;
}

// ex2.approx.ftz.f32 of one lane.
PA_PTX_HD float ex2(float a) {
    const float kMinNormal = 1.17549435e-38f; // 2^-126
    if (a != a)
        return a;
    if (fabsf(a) < kMinNormal)
        a = 0.0f;
    const float d = (float)exp2((double)a);
    return d < kMinNormal ? 0.0f : d;
}

// ldmatrix .x4 over the warp: rows[l] is lane l's address (16 bytes of b16).
PA_PTX_HD void ldmatrix_x4(const void *const rows[32], bool trans, uint32_t out[32][4]) {
    for (int t = 0; t < 32; t++)
        for (int j = 0; j < 4; j++) {
            uint16_t e[2];
            for (int k = 0; k < 2; k++) {
                // element (r, c) of matrix j is column c of the row lane 8j + r points at
                const int r = trans ? 2 * (t % 4) + k : t / 4;
                const int c = trans ? t / 4 : 2 * (t % 4) + k;
                memcpy(&e[k], static_cast<const unsigned char *>(rows[8 * j + r]) + 2 * c, 2);
            }
            out[t][j] = (uint32_t)e[0] | ((uint32_t)e[1] << 16);
        }
}

// mma m16n8k16 over the warp: a[t], b[t], c[t] are lane t's fragments.
template <int DT>
PA_PTX_HD void mma16816(const uint32_t a[32][4], const uint32_t b[32][2], const float c[32][4], float d[32][4]) {
    double A[16][16], B[16][8];
    for (int t = 0; t < 32; t++) {
        const int g = t / 4, q = 2 * (t % 4);
        for (int k = 0; k < 2; k++) {
            const int s = 16 * k;
            A[g][q + k] = half_to_double<DT>((uint16_t)(a[t][0] >> s));
            A[g + 8][q + k] = half_to_double<DT>((uint16_t)(a[t][1] >> s));
            A[g][q + 8 + k] = half_to_double<DT>((uint16_t)(a[t][2] >> s));
            A[g + 8][q + 8 + k] = half_to_double<DT>((uint16_t)(a[t][3] >> s));
            B[q + k][g] = half_to_double<DT>((uint16_t)(b[t][0] >> s));
            B[q + 8 + k][g] = half_to_double<DT>((uint16_t)(b[t][1] >> s));
        }
    }
    for (int t = 0; t < 32; t++) {
        const int g = t / 4, q = 2 * (t % 4);
        for (int i = 0; i < 4; i++) {
            const int row = g + (i >= 2 ? 8 : 0), col = q + (i & 1);
            double s = (double)c[t][i];
            for (int k = 0; k < 16; k++)
                s += A[row][k] * B[k][col];
            d[t][i] = (float)s;
        }
    }
}

} // namespace twin

#if defined(__CUDACC__) && !defined(PA_INTERPRET)

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// cp.async of `unit` (4, 8 or 16) bytes, the first src_bytes read and the rest
// zero-filled. 16-byte copies bypass L1 (.cg): the kernels stream K/V once.
__device__ __forceinline__ void cp_async(void *dst, const void *src, int unit, int src_bytes) {
    const uint32_t d = smem_addr(dst);
    if (unit == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(src_bytes) : "memory");
    else if (unit == 8)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(d), "l"(src), "r"(src_bytes) : "memory");
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async16(void *dst, const void *src) { cp_async(dst, src, 16, 16); }
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Not volatile: a pure function the compiler may schedule or drop.
__device__ __forceinline__ float ex2(float a) {
    float d;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(d) : "f"(a));
    return d;
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

// D = A * B + D, m16n8k16, row.col, f32 accumulate; DT 1 = f16, 2 = bf16.
template <int DT>
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    if constexpr (DT == 1) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    } else {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
}

// Shared memory and launches (interpret mode gives these its own meaning).
#define PA_DYNAMIC_SMEM(type, name) extern __shared__ __align__(16) type name[]
#define PA_STATIC_SMEM(...) __shared__ __VA_ARGS__
#define PA_LAUNCH(grid, block, smem_bytes, stream, ...) __VA_ARGS__<<<grid, block, smem_bytes, stream>>>

#elif defined(PA_INTERPRET)
// Interpret mode (tests/interp/pa_interp.h is force-included): the same
// wrappers, as calls into the interpreter, which gathers the warp's operands
// and runs the twins above.
inline uint32_t smem_addr(const void *p) { return (uint32_t)(uintptr_t)p; }
inline void cp_async(void *dst, const void *src, int unit, int src_bytes) {
    ::pa_interp::cp_async(dst, src, unit, src_bytes);
}
inline void cp_async16(void *dst, const void *src) { cp_async(dst, src, 16, 16); }
inline void cp_async_commit() { ::pa_interp::cp_commit(); }
template <int N> inline void cp_async_wait() { ::pa_interp::cp_wait(N); }
inline float ex2(float a) { return twin::ex2(a); }
inline void ldmatrix_x4(uint32_t (&r)[4], const void *p) { ::pa_interp::ldmatrix(r, p, false); }
inline void ldmatrix_x4_trans(uint32_t (&r)[4], const void *p) { ::pa_interp::ldmatrix(r, p, true); }
template <int DT> inline void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    ::pa_interp::mma(DT, d, a, b0, b1);
}

// Static shared memory: one copy per kernel, which is per CTA because the
// interpreter runs one CTA at a time. Every such variable lives in the section
// pa_interp_smem, which the interpreter fills with 0xFF bytes before each CTA,
// as it does dynamic shared memory.
#define PA_DYNAMIC_SMEM(type, name) type *name = reinterpret_cast<type *>(::pa_interp::dynamic_smem())
#define PA_STATIC_SMEM(...) __attribute__((section("pa_interp_smem"))) static __VA_ARGS__
#define PA_LAUNCH(grid, block, smem_bytes, stream, ...)                                                                \
    ::pa_interp::launcher(grid, block, smem_bytes, stream, #__VA_ARGS__, __VA_ARGS__)
#endif

} // namespace ptx
} // namespace pa
