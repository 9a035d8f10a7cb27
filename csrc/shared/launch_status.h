/* A launcher's refusal that is not a CUDA error: the kernel a configuration
 * takes needs more shared memory a CTA than the current device allows (GPUs
 * of compute capability 8.6, 8.9 and 12.x allow 99 KiB, 8.0 163 KiB, 9.0
 * 227 KiB). The launcher records the bytes (pa_note_smem_short) and returns
 * PA_LAUNCH_SMEM_SHORT before it launches anything; pa_cuda_fail
 * (csrc/core/device.c) turns it into PA_ERR_UNSUPPORTED naming both.
 *
 * PAGEDATTN_SMEM_LIMIT (bytes, decimal digits only) lowers the limit the
 * launchers' fit checks assume (pa_smem_fits: the mma.sync prefill kernel's
 * and the ragged kernels'; the Hopper kernel, which no 99 KiB device runs,
 * asks none) below the device's, so a larger GPU takes what a 99 KiB
 * one would: the compact prefill tiles, the compact ragged shape, and the
 * refusals (scripts/gpu-check.sh runs their tests so on an H100). Below
 * 101376, the least any sm_80+ device allows, it counts as 101376; above the
 * device's limit it changes nothing; any other text is ignored. Read at each
 * query (a launch whose dynamic bytes pass 90 KiB), so a test may set it. */
#ifndef PA_LAUNCH_STATUS_H
#define PA_LAUNCH_STATUS_H

#include <stddef.h>

#define PA_LAUNCH_SMEM_SHORT 0x7ffe0001

#ifdef __cplusplus
extern "C" {
#endif
void pa_note_smem_short(size_t need, int have, int capped); /* this thread's last shortfall */
/* The device's opt-in limit `limit` under PAGEDATTN_SMEM_LIMIT (above); *capped
 * 1 when the variable lowered it. */
int pa_smem_limit_knob(int limit, int *capped);
#ifdef __cplusplus
}
#endif
#endif
