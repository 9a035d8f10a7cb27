// Launchers of tests/interp/selftest_kernels.cu (interpret mode only).
#pragma once
#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
cudaError_t pa_selftest_static_smem(uint32_t *out, int ctas);
cudaError_t pa_selftest_dynamic_smem(uint32_t *out, int ctas);
cudaError_t pa_selftest_barrier_in_two_places(int *out);
cudaError_t pa_selftest_lane_write_then_read(int *out, int ordered);
cudaError_t pa_selftest_read_then_rewrite(int *out, int ordered);
cudaError_t pa_selftest_arrival_order(int *counter, int *out, int ctas);
cudaError_t pa_selftest_strided_access(const float *src, float *out, int stride, int sstride);
cudaError_t pa_selftest_cp_async_then_read(const uint32_t *src, uint32_t *out, int ordered);
cudaError_t pa_selftest_wgmma_qk(const uint16_t *q, const uint16_t *k, float *s, int ordered);
cudaError_t pa_selftest_mbar_ring(const uint32_t *src, uint32_t *out, int rounds, int mode);
cudaError_t pa_selftest_mbar_never(uint32_t *out);
cudaError_t pa_selftest_named_turns(int *log, int rounds, int turns);
#ifdef __cplusplus
}
#endif
