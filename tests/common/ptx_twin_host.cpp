// Host side of tests/common/ptx_twin_api.h: the twins of cuda/ptx.cuh, run on
// whole-warp inputs. Plain C++ (no CUDA): what interpret mode executes.
#include <string.h>

#include "../../cuda/ptx.cuh"
#include "ptx_twin_api.h"

extern "C" void pa_twin_ldmatrix_host(const unsigned char *image, const int32_t *row_off, int trans, uint32_t *out) {
    const void *rows[32];
    for (int l = 0; l < 32; l++)
        rows[l] = image + row_off[l];
    uint32_t r[32][4];
    pa::ptx::twin::ldmatrix_x4(rows, trans != 0, r);
    memcpy(out, r, sizeof r);
}

extern "C" void pa_twin_movmatrix_host(const uint32_t *in, uint32_t *out) { pa::ptx::twin::movmatrix_trans(in, out); }

extern "C" void pa_twin_mma_host(int dt, const uint32_t *a, const uint32_t *b, const float *c, float *d) {
    uint32_t A[32][4], B[32][2];
    float Cc[32][4], D[32][4];
    memcpy(A, a, sizeof A);
    memcpy(B, b, sizeof B);
    memcpy(Cc, c, sizeof Cc);
    if (dt == 1)
        pa::ptx::twin::mma16816<1>(A, B, Cc, D);
    else
        pa::ptx::twin::mma16816<2>(A, B, Cc, D);
    memcpy(d, D, sizeof D);
}

extern "C" void pa_twin_cp_async_host(const unsigned char *src, const int32_t *src_off, const int32_t *dst_off,
                                      const int32_t *unit, const int32_t *src_bytes, unsigned char fill,
                                      unsigned char *out) {
    memset(out, fill, PA_TWIN_SMEM);
    for (int l = 0; l < 32; l++)
        pa::ptx::twin::cp_async(out + dst_off[l], src + src_off[l], unit[l], src_bytes[l]);
}

extern "C" void pa_twin_cp_async16_host(const unsigned char *src, const int32_t *src_off, const int32_t *dst_off,
                                        const int32_t *form, unsigned char fill, unsigned char *out) {
    memset(out, fill, PA_TWIN_SMEM);
    for (int l = 0; l < 32; l++) // ignore-src: zeros, as src-size 0
        pa::ptx::twin::cp_async(out + dst_off[l], src + src_off[l], 16, form[l] == 0 ? 0 : 16);
}

extern "C" void pa_twin_prmt_host(const uint32_t *a, const uint32_t *b, const uint32_t *s, int n, uint32_t *out) {
    for (int i = 0; i < n; i++)
        out[i] = pa::ptx::twin::prmt(a[i], b[i], s[i]);
}

extern "C" void pa_twin_cvt_e4m3_hi_host(const uint32_t *in, int n, uint32_t *out) {
    for (int i = 0; i < n; i++)
        out[i] = pa::ptx::twin::cvt_f16x2_e4m3x2_hi(in[i]);
}

extern "C" void pa_twin_ex2_host(const float *a, int n, float *out) {
    for (int i = 0; i < n; i++)
        out[i] = pa::ptx::twin::ex2(a[i]);
}

extern "C" void pa_twin_wgmma_host(int dt, int n, const uint32_t *a, uint64_t desc_a, int trans_a, uint64_t desc_b,
                                   int trans_b, int scale_d, const unsigned char *image, float *acc) {
    for (int w = 0; w < 4; w++) {
        const uint32_t(*aw)[4] = a ? reinterpret_cast<const uint32_t(*)[4]>(a + 128 * w) : nullptr;
        float *accw = acc + (size_t)32 * w * (n / 2);
        if (dt == 3)
            pa::ptx::twin::wgmma_warp_e4m3(w, n, aw, desc_a, desc_b, scale_d != 0, image, accw);
        else if (dt == 1)
            pa::ptx::twin::wgmma_warp<1>(w, n, aw, desc_a, trans_a != 0, desc_b, trans_b != 0, scale_d != 0, image,
                                         accw);
        else
            pa::ptx::twin::wgmma_warp<2>(w, n, aw, desc_a, trans_a != 0, desc_b, trans_b != 0, scale_d != 0, image,
                                         accw);
    }
}

extern "C" uint64_t pa_twin_wgmma_desc(uint32_t start, uint32_t lbo, uint32_t sbo, int swizzle_bytes) {
    return pa::ptx::twin::wgmma_desc(start, lbo, sbo, swizzle_bytes);
}

extern "C" void pa_twin_mbar_script_host(int count, const int *ops, int n, int *out) {
    uint64_t bar;
    pa::ptx::twin::mbar_init(&bar, count);
    for (int i = 0; i < n; i++) {
        if (ops[i] == 0) {
            pa::ptx::twin::mbar_arrive(&bar);
            out[i] = -1;
        } else {
            out[i] = pa::ptx::twin::mbar_done(bar, ops[i] - 1) ? 1 : 0;
        }
    }
}
