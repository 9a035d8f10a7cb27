// Launchers of tests/interp/selftest_kernels.cu (interpret mode only).
#pragma once
#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
cudaError_t pa_selftest_static_smem(uint32_t *out, int ctas);
cudaError_t pa_selftest_static_smem_template(uint32_t *out, int ctas);
cudaError_t pa_selftest_dynamic_smem(uint32_t *out, int ctas);
/* One CTA of a kernel with 4 KiB of static shared memory and dyn_bytes of
 * dynamic; attr_bytes > 0 sets its cudaFuncAttributeMaxDynamicSharedMemorySize
 * first (which stays set for later calls). */
cudaError_t pa_selftest_static_and_dynamic_smem(uint32_t *out, int dyn_bytes, int attr_bytes);
/* A warp shuffles among 16 lanes: by width 16 (sub) or by a 16-lane mask. */
cudaError_t pa_selftest_half_warp_shuffle(int *out, int sub);
/* One thread loads a uint4 from buf + off. */
cudaError_t pa_selftest_vector_load_at(const unsigned char *buf, int off, uint32_t *out);
/* One thread sums a local float[4] of which elements [n, 4) were written. */
cudaError_t pa_selftest_read_before_write(float *out, int n);
cudaError_t pa_selftest_barrier_in_two_places(int *out);
cudaError_t pa_selftest_lane_write_then_read(int *out, int ordered);
cudaError_t pa_selftest_read_then_rewrite(int *out, int ordered);
cudaError_t pa_selftest_arrival_order(int *counter, int *out, int ctas);
cudaError_t pa_selftest_strided_access(const float *src, float *out, int stride, int sstride);
/* The source lines of strided_access's shared-memory store and load. */
extern const int pa_selftest_strided_lines[2];
cudaError_t pa_selftest_cp_async_then_read(const uint32_t *src, uint32_t *out, int ordered);
/* The wgmma self-test's protocol (PA_WG_OK) and its defects. */
enum pa_selftest_wgmma_mode {
    PA_WG_OK = 0,
    PA_WG_NO_BARRIER,          /* no __syncthreads between the tile's stores and the wgmma */
    PA_WG_NO_PROXY_FENCE,      /* no fence.proxy.async after the stores */
    PA_WG_FENCE_BEFORE_STORES, /* fence.proxy.async before the stores, none after */
    PA_WG_NO_WGMMA_FENCE,      /* no wgmma.fence before the first wgmma */
    PA_WG_READ_BEFORE_WAIT,    /* S read from the accumulators before wgmma.wait_group */
    PA_WG_TILE_REWRITTEN,      /* a thread stores into the tile while the wgmma is in flight */
    PA_WG_ACC_WRITTEN,         /* an accumulator written while the wgmma is in flight */
    PA_WG_NO_WAIT,             /* no wgmma.wait_group at all */
    PA_WG_GROUPS_WAIT_ALL,     /* a group per k16 step, wait_group 0 before S is read (correct) */
    PA_WG_GROUPS_WAIT_ONE,     /* a group per k16 step, wait_group 1: the last step still in flight */
    PA_WG_A_WRITTEN            /* A registers written while the wgmma reading them is in flight */
};
cudaError_t pa_selftest_wgmma_qk(const uint16_t *q, const uint16_t *k, float *s, int mode);
/* mode 0: the producer/consumer hand-off through an mbarrier and fence.proxy.async;
 * 1: the consumers fence before their wait; 2: they do not fence. */
cudaError_t pa_selftest_wgmma_qk_mbar(const uint16_t *q, const uint16_t *k, float *s, int mode);
/* mode 0: setmaxnreg.dec 56 in warpgroup 0, .inc 224 in the other two (384 threads);
 * 1: no dec; 2: the incs ask for 232. */
cudaError_t pa_selftest_setmaxnreg(int *out, int mode);
cudaError_t pa_selftest_mbar_ring(const uint32_t *src, uint32_t *out, int rounds, int mode);
cudaError_t pa_selftest_mbar_never(uint32_t *out);
/* mode 0: a thread waits for the phase it completed before arriving again; 1: it does not (aborts). */
cudaError_t pa_selftest_mbar_rearrive(uint32_t *out, int mode);
cudaError_t pa_selftest_named_turns(int *log, int rounds, int turns);
/* A producer writes buf (4 CTAs of 64 threads); a consumer, launched with programmatic
 * dependent launch when pdl is nonzero, writes out = other + buf. mode 0: buf read after
 * griddepcontrol.wait; 1: read before it; 2: a thread of each CTA returns before it; 3: buf
 * stored to before it. */
cudaError_t pa_selftest_pdl(int *buf, const int *other, int *out, int mode, int pdl);
/* 4 CTAs of 64 threads take items 0..items-1 from hdr[0]; the CTA that ends a
 * group of `split` items sums its partials into sum[g * 64 + t] (hdr[1 + g]
 * counts the group's finished items; owner[i]: the CTA that took item i).
 * mode 0: fences on both sides of the counter; 1: no fence before it; 2: none
 * after it. */
cudaError_t pa_selftest_fetch_and_merge(int *hdr, int *part, int *owner, int *sum, int items, int split, int mode);
/* Thread b of CTA b stores b to out[0]. */
cudaError_t pa_selftest_same_word(int *out, int ctas);
/* One thread stores 1 to out[i]. */
cudaError_t pa_selftest_write_at(int *out, long i);
/* The interpreter's runtime (interp.cpp): the report of the abort a test
 * expects must hold `fragment` (a string that outlives the test; each call adds
 * one, at most 4, all required). An abort whose report lacks one exits with
 * status 86 instead, so a test expecting SIGABRT fails on an abort for another
 * reason. */
void pa_interp_expect_abort(const char *fragment);
/* One thread writes v to *out, launched on `stream`. */
cudaError_t pa_selftest_write_value(int *out, int v, cudaStream_t stream);
/* A block of `threads` threads, each reading the lane 16 away (__shfl_xor_sync, full mask). */
cudaError_t pa_selftest_partial_warp_shuffle(int *out, int threads);
#ifdef __cplusplus
}
#endif
