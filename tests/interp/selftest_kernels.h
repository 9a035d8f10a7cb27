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
    PA_WG_A_WRITTEN,           /* A registers written while the wgmma reading them is in flight */
    PA_WG_NO_FENCE_AFTER_WAIT, /* after wgmma.wait_group, another wgmma with no wgmma.fence first */
    PA_WG_OTHER_SHAPE_CHAINED, /* an n = 32 wgmma into the registers the n = 64 ones in flight own */
    PA_WG_ACC_WRITTEN_CHAINED, /* an accumulator written between two chained wgmmas in flight */
    PA_WG_THREE_WARPS,         /* the CTA 96 threads, not a warpgroup */
    PA_WG_SMEM_2_BYTES_SHORT   /* dynamic shared memory ends 2 bytes before the K tile does */
};
cudaError_t pa_selftest_wgmma_qk(const uint16_t *q, const uint16_t *k, float *s, int mode);
/* mode 0: the producer/consumer hand-off through an mbarrier and fence.proxy.async;
 * 1: the consumers fence before their wait; 2: they do not fence; 3: they fence after waiting
 * for the phase before the one that refilled the tile. */
cudaError_t pa_selftest_wgmma_qk_mbar(const uint16_t *q, const uint16_t *k, float *s, int mode);
/* mode 0: setmaxnreg.dec 56 in warpgroup 0, .inc 224 in the other two (384 threads);
 * 1: no dec; 2: the incs ask for 232; 3: the dec asks for 60; 4: the dec asks for 176. */
cudaError_t pa_selftest_setmaxnreg(int *out, int mode);
cudaError_t pa_selftest_mbar_ring(const uint32_t *src, uint32_t *out, int rounds, int mode);
cudaError_t pa_selftest_mbar_never(uint32_t *out);
/* mode 0: a thread waits for the phase it completed before arriving again; 1: it does not (aborts). */
cudaError_t pa_selftest_mbar_rearrive(uint32_t *out, int mode);
cudaError_t pa_selftest_named_turns(int *log, int rounds, int turns);
/* A producer writes buf (4 CTAs of 64 threads); a consumer, launched with programmatic
 * dependent launch when pdl is nonzero, writes out = other + buf. mode 0: buf read after
 * griddepcontrol.wait; 1: read before it; 2: a thread of each CTA returns before it; 3: buf
 * stored to before it; 4: a thread of CTA 2 alone returns before it; 5: thread 1 of each CTA
 * reads buf before it. */
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
/* 1000 k + each thread's index through shuffle k: __shfl_xor_sync 1, __shfl_up_sync 3,
 * __shfl_down_sync 5 and __shfl_sync from lane 7, in that order: out[4 * t + k] (64 threads). */
cudaError_t pa_selftest_shuffle_modes(int *out);
/* A block of `threads` threads, each reading lane `src` of its warp (__shfl_sync, full mask). */
cudaError_t pa_selftest_shuffle_from_lane(int *out, int threads, int src);
/* cp.async in thread 0 (72 bytes of dynamic shared memory). mode 0: 8 of 16 bytes (zero-filled);
 * 1: 20 of 16 bytes; 2: a source off 16 bytes; 3: a unit past dynamic shared memory's end; 4: an
 * exit with the copy never waited for; 5: two groups, the newer read before and after its wait. */
cudaError_t pa_selftest_cp_async_case(const uint32_t *src, uint32_t *out, int mode);
/* mode 0: lanes 16..31 exit, lanes 0..15 __syncwarp; 1: the two halves __syncwarp at two lines. */
cudaError_t pa_selftest_warp_collective(int *out, int mode);
/* out[t] = 2 * __syncthreads_or(t == 3) + __syncthreads_or(0) (64 threads). */
cudaError_t pa_selftest_sync_or(int *out);
/* Named barriers, `ctas` CTAs of 64 threads (out: one int a thread). mode 0: a count past the
 * CTA's; 1: id 0; 2: two counts in one generation; 3: arrivals on 1 and 2 met by syncs on 2 and
 * 1; 4: a value handed over through barrier 1 in every CTA but the first, whose arrival nobody
 * consumes; 5: an arrival before a __syncthreads, its sync after. */
cudaError_t pa_selftest_named(int *out, int ctas, int mode);
/* One thread: mode 0 mbarrier.init with 2^20; 1: an arrival on an object never initialised;
 * 2: init, arrive, wait, init again, two arrivals with no wait between. */
cudaError_t pa_selftest_mbar_misuse(uint32_t *out, int mode);
/* Warp 0 stores 32 words and arrives; warp 1 probes the phase (no wait), reads them reversed
 * into out and arrives itself. */
cudaError_t pa_selftest_mbar_probe(uint32_t *out);
/* 32 threads with 48 KB of static shared memory: out[t] = 2 t. */
cudaError_t pa_selftest_static_smem_48k(uint32_t *out);
/* 640 threads: warpgroup 0 setmaxnreg.dec 72, the others .inc 104 (more than it released). */
cudaError_t pa_selftest_setmaxnreg_640(int *out);
/* 32 lanes store bytes 0..511 at `off` of `bytes` of dynamic shared memory and read them back
 * with ldmatrix.x4, lane l's row at off + 16 l: out[4 l + j], lane l's register j. */
cudaError_t pa_selftest_ldmatrix_rows(uint32_t *out, int off, int bytes);
/* Two warps; lane 0 of warp w logs steps 10 w + 0, 1, 2 into log[*counter++], a __syncwarp after
 * each. */
cudaError_t pa_selftest_warp_steps(int *counter, int *log);
/* One thread stores the byte 1 to out[i]. */
cudaError_t pa_selftest_write_byte_at(unsigned char *out, long i);
/* A grid and block of these sizes; CTA 0's thread 0 writes 1 to out[0]. */
cudaError_t pa_selftest_launch_dims(int *out, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                    unsigned bz);
/* 32 threads: after a barrier (mode 0 __syncthreads, 1 __syncwarp) thread 0 stores a word and
 * thread 1 reads it into out[0] before the next one (a race). */
cudaError_t pa_selftest_write_read_between_barriers(int *out, int mode);
/* Warp 1 reads a row that warp 0 copies into with cp.async, unordered with the issue; the copy
 * lands after a __syncthreads (a race). */
cudaError_t pa_selftest_read_then_cp_async(const uint32_t *src, uint32_t *out);
/* Thread b % 32 of CTA b stores b to a shared word, thread 0 reads it after a barrier: out[b]. */
cudaError_t pa_selftest_smem_word_per_cta(int *out, int ctas);
/* pdl_producer writes buf on `producer`, a one-thread grid writes *unrelated on `between`, then
 * pdl_consumer mode 1 (buf read before griddepcontrol.wait) goes out on `consumer` with
 * programmatic dependent launch. */
cudaError_t pa_selftest_pdl_streams(int *buf, const int *other, int *out, int *unrelated, cudaStream_t producer,
                                    cudaStream_t between, cudaStream_t consumer);
#ifdef __cplusplus
}
#endif
