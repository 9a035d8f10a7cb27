// Device side of tests/common/ptx_twin_api.h: one warp runs the real PTX
// wrapper of cuda/ptx.cuh and writes its registers or shared memory out raw.
// Each entry returns a cudaError_t (0 = ok) and synchronises.
#include <cuda_runtime.h>

#include "../../cuda/ptx.cuh"
#include "ptx_twin_api.h"

namespace {

__global__ void ldmatrix_kernel(const unsigned char *image, const int32_t *row_off, int trans, uint32_t *out) {
    PA_STATIC_SMEM_ALIGNED(16, sm, unsigned char[PA_TWIN_SMEM]);
    const int l = threadIdx.x;
    for (int i = l; i < PA_TWIN_SMEM; i += 32)
        sm[i] = image[i];
    __syncwarp();
    uint32_t r[4];
    if (trans)
        pa::ptx::ldmatrix_x4_trans(r, sm + row_off[l]);
    else
        pa::ptx::ldmatrix_x4(r, sm + row_off[l]);
    for (int j = 0; j < 4; j++)
        out[l * 4 + j] = r[j];
}

__global__ void movmatrix_kernel(const uint32_t *in, uint32_t *out) {
    out[threadIdx.x] = pa::ptx::movmatrix_trans(in[threadIdx.x]);
}

template <int DT> __global__ void mma_kernel(const uint32_t *a, const uint32_t *b, const float *c, float *d) {
    const int l = threadIdx.x;
    const uint32_t ra[4] = {a[l * 4], a[l * 4 + 1], a[l * 4 + 2], a[l * 4 + 3]};
    float acc[4] = {c[l * 4], c[l * 4 + 1], c[l * 4 + 2], c[l * 4 + 3]};
    pa::ptx::mma16816<DT>(acc, ra, b[l * 2], b[l * 2 + 1]);
    for (int i = 0; i < 4; i++)
        d[l * 4 + i] = acc[i];
}

__global__ void cp_async_kernel(const unsigned char *src, const int32_t *src_off, const int32_t *dst_off,
                                const int32_t *unit, const int32_t *src_bytes, unsigned char fill, unsigned char *out) {
    PA_STATIC_SMEM_ALIGNED(16, sm, unsigned char[PA_TWIN_SMEM]);
    const int l = threadIdx.x;
    for (int i = l; i < PA_TWIN_SMEM; i += 32)
        sm[i] = fill;
    __syncwarp();
    pa::ptx::cp_async(sm + dst_off[l], src + src_off[l], unit[l], src_bytes[l]);
    pa::ptx::cp_async_commit();
    pa::ptx::cp_async_wait<0>();
    __syncwarp();
    for (int i = l; i < PA_TWIN_SMEM; i += 32)
        out[i] = sm[i];
}

__global__ void cp_async16_kernel(const unsigned char *src, const int32_t *src_off, const int32_t *dst_off,
                                  const int32_t *form, unsigned char fill, unsigned char *out) {
    PA_STATIC_SMEM_ALIGNED(16, sm, unsigned char[PA_TWIN_SMEM]);
    const int l = threadIdx.x;
    for (int i = l; i < PA_TWIN_SMEM; i += 32)
        sm[i] = fill;
    __syncwarp();
    if (form[l] == 2)
        pa::ptx::cp_async16(sm + dst_off[l], src + src_off[l]);
    else
        pa::ptx::cp_async16_or_zero(sm + dst_off[l], src + src_off[l], form[l] != 0);
    pa::ptx::cp_async_commit();
    pa::ptx::cp_async_wait<0>();
    __syncwarp();
    for (int i = l; i < PA_TWIN_SMEM; i += 32)
        out[i] = sm[i];
}

__global__ void prmt_kernel(const uint32_t *a, const uint32_t *b, const uint32_t *s, uint32_t *out) {
    const int i = blockIdx.x * 32 + threadIdx.x;
    out[i] = pa::ptx::prmt(a[i], b[i], s[i]);
}

__global__ void cvt_e4m3_hi_kernel(const uint32_t *in, uint32_t *out) {
    const int i = blockIdx.x * 32 + threadIdx.x;
    out[i] = pa::ptx::cvt_f16x2_e4m3x2_hi(in[i]);
}

__global__ void ex2_kernel(const float *a, float *out) {
    const int i = blockIdx.x * 32 + threadIdx.x;
    out[i] = pa::ptx::ex2(a[i]);
}

// One warpgroup runs wgmma m64n64k16 (RS when a is non-null, else SS) on an
// image copied into shared memory at a 1024-byte-aligned window address; the
// descriptors name addresses relative to the image, so their start fields
// move by that base. *ok: whether this build has the instruction (sm_90a).
// The image into shared memory (sm: the dynamic window) at its first 1024-byte
// boundary, for the async proxy; returns what a descriptor's start field
// moves by (the boundary's address >> 4).
__device__ uint64_t image_to_smem(unsigned char *sm, const unsigned char *image) {
    const uint32_t win = pa::ptx::smem_window_addr(sm), base = (win + 1023u) & ~1023u;
    unsigned char *img = sm + (base - win);
    for (int i = threadIdx.x; i < PA_TWIN_WG_SMEM; i += 128)
        img[i] = image[i];
    pa::ptx::fence_proxy_async();
    __syncthreads();
    return (uint64_t)(base >> 4);
}

template <int DT, int N, bool RS, bool TB>
__global__ void wgmma_kernel(const uint32_t *a, uint64_t desc_a, uint64_t desc_b, int scale_d,
                             const unsigned char *image, float *acc, int *ok) {
    PA_DYNAMIC_SMEM(unsigned char, sm);
    const int t = threadIdx.x;
    const uint64_t shift = image_to_smem(sm, image);
    float d[N / 2];
    for (int i = 0; i < N / 2; i++)
        d[i] = acc[t * (N / 2) + i];
    if (t == 0)
        *ok = PA_WGMMA_OK;
#if PA_WGMMA_OK
    pa::ptx::wgmma_fence();
    if constexpr (RS) {
        const uint32_t ra[4] = {a[t * 4], a[t * 4 + 1], a[t * 4 + 2], a[t * 4 + 3]};
        pa::ptx::wgmma_rs<DT, N, TB>(d, ra, desc_b + shift, scale_d);
    } else {
        pa::ptx::wgmma_ss<DT, N, false, TB>(d, desc_a + shift, desc_b + shift, scale_d);
    }
    pa::ptx::wgmma_commit();
    pa::ptx::wgmma_wait<0>();
#else
    (void)a;
    (void)desc_a;
    (void)desc_b;
    (void)scale_d;
    (void)shift;
#endif
    for (int i = 0; i < N / 2; i++)
        acc[t * (N / 2) + i] = d[i];
}

// The script's arrivals come from `count` threads in turn, one op at a time
// (a barrier between ops), so each thread arrives once per phase and, as
// mbarrier's protocol asks (compute-sanitizer's synccheck reports a "Missing
// wait" otherwise, seen on an H100 on 2026-11-27), waits for the phase it last
// arrived in to complete before it arrives again: that wait succeeds at once,
// since the other threads' arrivals completed the phase, and is not a probe of
// the script. Thread 0 runs the probes. The arrival sequence, and so every
// probe's answer, is the twin's single-thread script's.
__global__ void mbar_script_kernel(int count, const int *ops, int n, int *out) {
#if PA_MBAR_OK
    PA_STATIC_SMEM(bar, uint64_t);
    const int t = (int)threadIdx.x;
    if (t == 0)
        pa::ptx::mbar_init(&bar, count);
    __syncthreads();
    int arrivals = 0;
    for (int i = 0; i < n; i++) {
        if (ops[i] == 0) {
            if (t == arrivals % count) {
                if (arrivals >= count)
                    while (!pa::ptx::mbar_test(&bar, (arrivals / count - 1) & 1)) {
                    }
                pa::ptx::mbar_arrive(&bar);
                out[i] = -1;
            }
            arrivals++;
        } else if (t == 0) {
            out[i] = pa::ptx::mbar_test(&bar, ops[i] - 1) ? 1 : 0;
        }
        __syncthreads();
    }
#else
    (void)count;
    (void)ops;
    for (int i = 0; i < n; i++)
        out[i] = -2;
#endif
}

__global__ void mbar_cp_kernel(const unsigned char *src, unsigned char *out, int *completed) {
    const int l = threadIdx.x;
#if PA_MBAR_OK
    PA_STATIC_SMEM_ALIGNED(16, sm, unsigned char[512]);
    // Three barriers: the arrivals name the last through an MBar formed from
    // the array (the Hopper prefill kernel's ring does so), the probes through
    // its pointer, so the phase completes only if both name one barrier.
    PA_STATIC_SMEM(bar, uint64_t[3]);
    if (l == 0)
        for (int i = 0; i < 3; i++)
            pa::ptx::mbar_init(&bar[i], 32);
    __syncwarp();
    const pa::ptx::MBar ring = pa::ptx::mbar_ref_warp(bar);
    pa::ptx::cp_async(sm + 16 * l, src + 16 * l, 16, 16);
    pa::ptx::mbar_cp_arrive(ring.at(2));
    int done = 0;
    for (int i = 0; i < (1 << 20) && !done; i++)
        done = pa::ptx::mbar_test(&bar[2], 0);
    if (l == 0)
        *completed = done;
    __syncwarp();
    for (int i = 0; i < 16; i++)
        out[16 * l + i] = sm[16 * l + i];
#else
    (void)src;
    (void)out;
    if (l == 0)
        *completed = -1;
#endif
}

struct Dev {
    void *p[8] = {};
    int n = 0;
    cudaError_t err = cudaSuccess;
    template <class T> T *up(const T *h, size_t count) {
        void *d = nullptr;
        if (err == cudaSuccess)
            err = cudaMalloc(&d, count * sizeof(T) + 16);
        if (err == cudaSuccess && h)
            err = cudaMemcpy(d, h, count * sizeof(T), cudaMemcpyHostToDevice);
        p[n++] = d;
        return static_cast<T *>(d);
    }
    template <class T> void down(T *h, const T *d, size_t count) {
        if (err == cudaSuccess)
            err = cudaDeviceSynchronize();
        if (err == cudaSuccess)
            err = cudaMemcpy(h, d, count * sizeof(T), cudaMemcpyDeviceToHost);
    }
    ~Dev() {
        for (int i = 0; i < n; i++)
            cudaFree(p[i]);
    }
};

} // namespace

extern "C" int pa_twin_ldmatrix_device(const unsigned char *image, const int32_t *row_off, int trans, uint32_t *out) {
    Dev d;
    const unsigned char *di = d.up(image, PA_TWIN_SMEM);
    const int32_t *dr = d.up(row_off, 32);
    uint32_t *dout = d.up<uint32_t>(nullptr, 128);
    if (d.err == cudaSuccess) {
        PA_LAUNCH(1, 32, 0, 0, ldmatrix_kernel)(di, dr, trans, dout);
        d.err = cudaGetLastError();
    }
    d.down(out, dout, 128);
    return (int)d.err;
}

extern "C" int pa_twin_mma_device(int dt, const uint32_t *a, const uint32_t *b, const float *c, float *out) {
    Dev d;
    const uint32_t *da = d.up(a, 128), *db = d.up(b, 64);
    const float *dc = d.up(c, 128);
    float *dd = d.up<float>(nullptr, 128);
    if (d.err == cudaSuccess) {
        if (dt == 1)
            PA_LAUNCH(1, 32, 0, 0, mma_kernel<1>)(da, db, dc, dd);
        else
            PA_LAUNCH(1, 32, 0, 0, mma_kernel<2>)(da, db, dc, dd);
        d.err = cudaGetLastError();
    }
    d.down(out, dd, 128);
    return (int)d.err;
}

extern "C" int pa_twin_cp_async_device(const unsigned char *src, const int32_t *src_off, const int32_t *dst_off,
                                       const int32_t *unit, const int32_t *src_bytes, unsigned char fill,
                                       unsigned char *out) {
    Dev d;
    const unsigned char *ds = d.up(src, PA_TWIN_SMEM);
    const int32_t *dso = d.up(src_off, 32), *ddo = d.up(dst_off, 32), *du = d.up(unit, 32), *db = d.up(src_bytes, 32);
    unsigned char *dout = d.up<unsigned char>(nullptr, PA_TWIN_SMEM);
    if (d.err == cudaSuccess) {
        PA_LAUNCH(1, 32, 0, 0, cp_async_kernel)(ds, dso, ddo, du, db, fill, dout);
        d.err = cudaGetLastError();
    }
    d.down(out, dout, PA_TWIN_SMEM);
    return (int)d.err;
}

extern "C" int pa_twin_cp_async16_device(const unsigned char *src, const int32_t *src_off, const int32_t *dst_off,
                                         const int32_t *form, unsigned char fill, unsigned char *out) {
    Dev d;
    const unsigned char *ds = d.up(src, PA_TWIN_SMEM);
    const int32_t *dso = d.up(src_off, 32), *ddo = d.up(dst_off, 32), *df = d.up(form, 32);
    unsigned char *dout = d.up<unsigned char>(nullptr, PA_TWIN_SMEM);
    if (d.err == cudaSuccess) {
        PA_LAUNCH(1, 32, 0, 0, cp_async16_kernel)(ds, dso, ddo, df, fill, dout);
        d.err = cudaGetLastError();
    }
    d.down(out, dout, PA_TWIN_SMEM);
    return (int)d.err;
}

extern "C" int pa_twin_movmatrix_device(const uint32_t *in, uint32_t *out) {
    Dev d;
    const uint32_t *din = d.up(in, 32);
    uint32_t *dout = d.up<uint32_t>(nullptr, 32);
    if (d.err == cudaSuccess) {
        PA_LAUNCH(1, 32, 0, 0, movmatrix_kernel)(din, dout);
        d.err = cudaGetLastError();
    }
    d.down(out, dout, 32);
    return (int)d.err;
}

extern "C" int pa_twin_prmt_device(const uint32_t *a, const uint32_t *b, const uint32_t *s, int n, uint32_t *out) {
    Dev d;
    const uint32_t *da = d.up(a, (size_t)n), *db = d.up(b, (size_t)n), *ds = d.up(s, (size_t)n);
    uint32_t *dout = d.up<uint32_t>(nullptr, (size_t)n);
    if (d.err == cudaSuccess) {
        PA_LAUNCH(n / 32, 32, 0, 0, prmt_kernel)(da, db, ds, dout);
        d.err = cudaGetLastError();
    }
    d.down(out, dout, (size_t)n);
    return (int)d.err;
}

extern "C" int pa_twin_cvt_e4m3_hi_device(const uint32_t *in, int n, uint32_t *out) {
    Dev d;
    const uint32_t *din = d.up(in, (size_t)n);
    uint32_t *dout = d.up<uint32_t>(nullptr, (size_t)n);
    if (d.err == cudaSuccess) {
        PA_LAUNCH(n / 32, 32, 0, 0, cvt_e4m3_hi_kernel)(din, dout);
        d.err = cudaGetLastError();
    }
    d.down(out, dout, (size_t)n);
    return (int)d.err;
}

extern "C" int pa_twin_ex2_device(const float *a, int n, float *out) {
    Dev d;
    const float *da = d.up(a, (size_t)n);
    float *dout = d.up<float>(nullptr, (size_t)n);
    if (d.err == cudaSuccess) {
        PA_LAUNCH(n / 32, 32, 0, 0, ex2_kernel)(da, dout);
        d.err = cudaGetLastError();
    }
    d.down(out, dout, (size_t)n);
    return (int)d.err;
}

using WgmmaKernel = void (*)(const uint32_t *, uint64_t, uint64_t, int, const unsigned char *, float *, int *);
// wgmma_kernel<DT, N, ...> by A from registers (rs) and B N-major (tb).
template <int DT, int N> static WgmmaKernel wgmma_kernel_of(bool rs, bool tb) {
    static const WgmmaKernel k[2][2] = {{wgmma_kernel<DT, N, false, false>, wgmma_kernel<DT, N, false, true>},
                                        {wgmma_kernel<DT, N, true, false>, wgmma_kernel<DT, N, true, true>}};
    return k[rs][tb];
}
template <int DT> static WgmmaKernel wgmma_kernel_for(int n, bool rs, bool tb) {
    switch (n) {
    case 64: return wgmma_kernel_of<DT, 64>(rs, tb);
    case 96: return wgmma_kernel_of<DT, 96>(rs, tb);
    case 128: return wgmma_kernel_of<DT, 128>(rs, tb);
    case 192: return wgmma_kernel_of<DT, 192>(rs, tb);
    case 256: return wgmma_kernel_of<DT, 256>(rs, tb);
    default: return nullptr;
    }
}

extern "C" int pa_twin_wgmma_device(int dt, int n, const uint32_t *a, uint64_t desc_a, uint64_t desc_b, int trans_b,
                                    int scale_d, const unsigned char *image, float *acc, int *supported) {
    const WgmmaKernel k = dt == 1 ? wgmma_kernel_for<1>(n, a != nullptr, trans_b != 0)
                                  : wgmma_kernel_for<2>(n, a != nullptr, trans_b != 0);
    if (!k)
        return -1;
    Dev d;
    const uint32_t *da = a ? d.up(a, 512) : nullptr;
    const unsigned char *di = d.up(image, PA_TWIN_WG_SMEM);
    float *dacc = d.up(acc, (size_t)128 * (n / 2));
    int *dok = d.up<int>(nullptr, 1);
    const size_t smem = PA_TWIN_WG_SMEM + 1024;
    if (d.err == cudaSuccess) {
        PA_LAUNCH(1, 128, smem, 0, k)(da, desc_a, desc_b, scale_d, di, dacc, dok);
        d.err = cudaGetLastError();
    }
    d.down(acc, dacc, (size_t)128 * (n / 2));
    d.down(supported, dok, 1);
    return (int)d.err;
}

// wgmma_kernel's e4m3 twin: m64nNk32 (N = 128, the Hopper kernel's Q K^T; N =
// 136, its FP8 P V with the row-sum block), K-major operands (N / 2 accumulators).
template <int N, bool RS>
__global__ void wgmma_e4m3_kernel(const uint32_t *a, uint64_t desc_a, uint64_t desc_b, int scale_d,
                                  const unsigned char *image, float *acc, int *ok) {
    PA_DYNAMIC_SMEM(unsigned char, sm);
    const int t = threadIdx.x;
    const uint64_t shift = image_to_smem(sm, image);
    float d[N / 2];
    for (int i = 0; i < N / 2; i++)
        d[i] = acc[t * (N / 2) + i];
    if (t == 0)
        *ok = PA_WGMMA_OK;
#if PA_WGMMA_OK
    pa::ptx::wgmma_fence();
    if constexpr (RS) {
        const uint32_t ra[4] = {a[t * 4], a[t * 4 + 1], a[t * 4 + 2], a[t * 4 + 3]};
        pa::ptx::wgmma_rs_e4m3<N>(d, ra, desc_b + shift, scale_d);
    } else {
        pa::ptx::wgmma_ss_e4m3<N>(d, desc_a + shift, desc_b + shift, scale_d);
    }
    pa::ptx::wgmma_commit();
    pa::ptx::wgmma_wait<0>();
#else
    (void)a;
    (void)desc_a;
    (void)desc_b;
    (void)scale_d;
    (void)shift;
#endif
    for (int i = 0; i < N / 2; i++)
        acc[t * (N / 2) + i] = d[i];
}

extern "C" int pa_twin_wgmma_e4m3_device(int n, const uint32_t *a, uint64_t desc_a, uint64_t desc_b, int scale_d,
                                         const unsigned char *image, float *acc, int *supported) {
    const WgmmaKernel k = n == 128   ? (a ? wgmma_e4m3_kernel<128, true> : wgmma_e4m3_kernel<128, false>)
                          : n == 136 ? (a ? wgmma_e4m3_kernel<136, true> : wgmma_e4m3_kernel<136, false>)
                                     : nullptr;
    if (!k)
        return -1;
    Dev d;
    const uint32_t *da = a ? d.up(a, 512) : nullptr;
    const unsigned char *di = d.up(image, PA_TWIN_WG_SMEM);
    float *dacc = d.up(acc, (size_t)128 * (n / 2));
    int *dok = d.up<int>(nullptr, 1);
    const size_t smem = PA_TWIN_WG_SMEM + 1024;
    if (d.err == cudaSuccess) {
        PA_LAUNCH(1, 128, smem, 0, k)(da, desc_a, desc_b, scale_d, di, dacc, dok);
        d.err = cudaGetLastError();
    }
    d.down(acc, dacc, (size_t)128 * (n / 2));
    d.down(supported, dok, 1);
    return (int)d.err;
}

extern "C" int pa_twin_mbar_script_device(int count, const int *ops, int n, int *out) {
    Dev d;
    const int *dops = d.up(ops, (size_t)n);
    int *dout = d.up<int>(nullptr, (size_t)n);
    if (d.err == cudaSuccess) {
        PA_LAUNCH(1, count, 0, 0, mbar_script_kernel)(count, dops, n, dout);
        d.err = cudaGetLastError();
    }
    d.down(out, dout, (size_t)n);
    return (int)d.err;
}

extern "C" int pa_twin_mbar_cp_device(const unsigned char *src, unsigned char *out, int *completed) {
    Dev d;
    const unsigned char *dsrc = d.up(src, 512);
    unsigned char *dout = d.up<unsigned char>(nullptr, 512);
    int *dc = d.up<int>(nullptr, 1);
    if (d.err == cudaSuccess) {
        PA_LAUNCH(1, 32, 0, 0, mbar_cp_kernel)(dsrc, dout, dc);
        d.err = cudaGetLastError();
    }
    d.down(out, dout, 512);
    d.down(completed, dc, 1);
    return (int)d.err;
}
