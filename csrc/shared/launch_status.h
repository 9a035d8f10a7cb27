/* A launcher's refusal that is not a CUDA error: the kernel a configuration
 * takes needs more shared memory a CTA than the current device allows (GPUs
 * of compute capability 8.6, 8.9 and 12.x allow 99 KiB, 8.0 163 KiB, 9.0
 * 227 KiB). The launcher records the bytes (pa_note_smem_short) and returns
 * PA_LAUNCH_SMEM_SHORT before it launches anything; pa_cuda_fail
 * (csrc/core/device.c) turns it into PA_ERR_UNSUPPORTED naming both. */
#ifndef PA_LAUNCH_STATUS_H
#define PA_LAUNCH_STATUS_H

#include <stddef.h>

#define PA_LAUNCH_SMEM_SHORT 0x7ffe0001

#ifdef __cplusplus
extern "C" {
#endif
void pa_note_smem_short(size_t need, int have); /* this thread's last shortfall */
#ifdef __cplusplus
}
#endif
#endif
