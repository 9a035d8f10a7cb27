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

extern "C" void pa_twin_ex2_host(const float *a, int n, float *out) {
    for (int i = 0; i < n; i++)
        out[i] = pa::ptx::twin::ex2(a[i]);
}
