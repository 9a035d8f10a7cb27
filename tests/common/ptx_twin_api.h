/* Runs each PTX wrapper of cuda/ptx.cuh on the device and its twin on the host,
 * on the same inputs, for tests/gpu/test_ptx_twins.c (device) and
 * tests/host/test_ptx_twins.c (twins only). Implemented in
 * tests/common/ptx_twin_device.cu and tests/common/ptx_twin_host.cpp. */
#ifndef PA_PTX_TWIN_API_H
#define PA_PTX_TWIN_API_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PA_TWIN_SMEM 2048 /* bytes of the shared-memory image */

/* ldmatrix .x4 (trans = 0 or 1): lane l reads the 16-byte row at image +
 * row_off[l] (16-aligned, < PA_TWIN_SMEM); out[l * 4 + j] is lane l's register j. */
int pa_twin_ldmatrix_device(const unsigned char *image, const int32_t *row_off, int trans, uint32_t *out);
void pa_twin_ldmatrix_host(const unsigned char *image, const int32_t *row_off, int trans, uint32_t *out);

/* movmatrix.sync.aligned.m8n8.trans.b16: in[l] is lane l's register, out[l] its result. */
int pa_twin_movmatrix_device(const uint32_t *in, uint32_t *out);
void pa_twin_movmatrix_host(const uint32_t *in, uint32_t *out);

/* mma.sync m16n8k16 (dt 1 = f16, 2 = bf16): a[l*4+i], b[l*2+i], c[l*4+i] are
 * lane l's fragments; d[l*4+i] its result. */
int pa_twin_mma_device(int dt, const uint32_t *a, const uint32_t *b, const float *c, float *d);
void pa_twin_mma_host(int dt, const uint32_t *a, const uint32_t *b, const float *c, float *d);

/* cp.async: lane l copies unit[l] (4, 8 or 16) bytes with src_bytes[l] read
 * from src + src_off[l] to dst_off[l] of a shared image first filled with
 * `fill`; out gets the image after cp.async.wait_group 0. Offsets aligned to
 * the unit, ranges disjoint, within PA_TWIN_SMEM. */
int pa_twin_cp_async_device(const unsigned char *src, const int32_t *src_off, const int32_t *dst_off,
                            const int32_t *unit, const int32_t *src_bytes, unsigned char fill, unsigned char *out);
void pa_twin_cp_async_host(const unsigned char *src, const int32_t *src_off, const int32_t *dst_off,
                           const int32_t *unit, const int32_t *src_bytes, unsigned char fill, unsigned char *out);

/* The 16-byte forms the kernels' loaders use: lane l copies 16 bytes from
 * src + src_off[l] to dst_off[l] (both 16-aligned; dst_off[l] within lane l's
 * 64 bytes) of an image first filled with `fill`, by cp_async16 (form[l] 2) or
 * cp_async16_or_zero with copy = form[l] (0: sixteen zeros, the source
 * ignored; 1: the bytes). */
int pa_twin_cp_async16_device(const unsigned char *src, const int32_t *src_off, const int32_t *dst_off,
                              const int32_t *form, unsigned char fill, unsigned char *out);
void pa_twin_cp_async16_host(const unsigned char *src, const int32_t *src_off, const int32_t *dst_off,
                             const int32_t *form, unsigned char fill, unsigned char *out);

/* prmt.b32 (default mode) of n triples (n a multiple of 32), one per thread:
 * out[i] = prmt(a[i], b[i], s[i]). */
int pa_twin_prmt_device(const uint32_t *a, const uint32_t *b, const uint32_t *s, int n, uint32_t *out);
void pa_twin_prmt_host(const uint32_t *a, const uint32_t *b, const uint32_t *s, int n, uint32_t *out);

/* cvt.rn.f16x2.e4m3x2 of the upper half of each of n words (n a multiple of
 * 32), one per thread: out[i] = f16 bits of bytes 2 (low half) and 3. */
int pa_twin_cvt_e4m3_hi_device(const uint32_t *in, int n, uint32_t *out);
void pa_twin_cvt_e4m3_hi_host(const uint32_t *in, int n, uint32_t *out);

/* ex2.approx.ftz.f32 of n values (n a multiple of 32), one per thread. */
int pa_twin_ex2_device(const float *a, int n, float *out);
void pa_twin_ex2_host(const float *a, int n, float *out);

/* wgmma.mma_async m64nNk16 (dt 1 = f16, 2 = bf16; dt 3 = e4m3, m64nNk32, both operands K-major; n a multiple of 8 up to
 * 256), the warpgroup's four warps: a[(32w + t) * 4 + i] is register i of lane
 * t of warp w, or a is NULL and A comes from the image through desc_a (M-major
 * when trans_a); B comes from the image through desc_b (N-major when trans_b);
 * acc[(32w + t) * n / 2 + i] is read when scale_d and written. image: the
 * shared window from address 0, PA_TWIN_WG_SMEM bytes (40 KiB: B at 8 KiB with
 * n = 256 rows of 128 bytes, the widest operand the tests place; within the 48
 * KiB of dynamic shared memory a launch may take without an opt-in). */
#define PA_TWIN_WG_SMEM 40960
void pa_twin_wgmma_host(int dt, int n, const uint32_t *a, uint64_t desc_a, int trans_a, uint64_t desc_b, int trans_b,
                        int scale_d, const unsigned char *image, float *acc);
uint64_t pa_twin_wgmma_desc(uint32_t start, uint32_t lbo, uint32_t sbo, int swizzle_bytes);
/* The real instruction through the library's wrapper (pa::ptx::wgmma_rs or
 * wgmma_ss), n = 64, 96, 128 or 256 (the widths the Hopper prefill kernel
 * issues), A K-major when from shared memory: acc as for the host twin (in
 * and out, 128 x n / 2 floats); *supported = 0 when the library was built
 * without sm_90a (the wrapper traps there, so nothing runs). -1 for another n. */
int pa_twin_wgmma_device(int dt, int n, const uint32_t *a, uint64_t desc_a, uint64_t desc_b, int trans_b, int scale_d,
                         const unsigned char *image, float *acc, int *supported);
/* wgmma.mma_async m64nNk32 .e4m3.e4m3, n = 128 or 136 (the widths the Hopper
 * kernel's FP8 path issues; -1 for another n), both operands K-major: acc has
 * 128 x n / 2 floats; the host twin is pa_twin_wgmma_host with dt 3. */
int pa_twin_wgmma_e4m3_device(int n, const uint32_t *a, uint64_t desc_a, uint64_t desc_b, int scale_d,
                              const unsigned char *image, float *acc, int *supported);

/* mbarrier, one thread: a barrier initialised to `count`, then ops[i] = 0
 * arrive, 1 probe parity 0, 2 probe parity 1 (test_wait.parity); out[i] = the
 * probe's result (0 or 1), -1 for an arrive. */
int pa_twin_mbar_script_device(int count, const int *ops, int n, int *out);
void pa_twin_mbar_script_host(int count, const int *ops, int n, int *out);
/* cp.async.mbarrier.arrive.noinc: 32 lanes each cp.async 16 bytes of src (512)
 * into shared memory and arrive on a barrier of count 32; lane 0 then probes
 * parity 0 up to a bound. out: the 512 bytes after it; *completed: whether the
 * phase completed. A build without sm_90 code reports -1 (nothing ran). */
int pa_twin_mbar_cp_device(const unsigned char *src, unsigned char *out, int *completed);

#ifdef __cplusplus
}
#endif
#endif
