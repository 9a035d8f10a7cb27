/* C-callable launchers implemented in the cuda/ .cu files. Each returns a cudaError_t as
 * int (0 = success) after launching asynchronously on `stream`; validation has
 * already happened in the csrc/ entry. Private header. */
#ifndef PA_LAUNCHERS_H
#define PA_LAUNCHERS_H

#include <stdint.h>

#include "pagedattn/core.h"
#include "pagedattn/merge.h"

#ifdef __cplusplus
extern "C" {
#endif

int pa_launch_convert(void *dst, int dst_dtype, const void *src, int src_dtype, int64_t n, const float *scale,
                      pa_stream stream);

/* pa_merge_attn_states (cuda/merge_states.cu): *p resolved (strides filled in);
 * vec16: rows in 16-byte chunks (head, pointers and row strides allow it). */
int pa_launch_merge_attn_states(const pa_merge_attn_states_params *p, int vec16, pa_stream stream);

/* cache ops (cuda/reshape_and_cache.cu, cuda/swap_copy.cu); params in cache_ops_internal.h */
struct pa_rc_params;
struct pa_kvu_params;
struct pa_cb_params;
int pa_launch_reshape_and_cache(const struct pa_rc_params *p, int in_dtype, int cache_dtype, pa_stream stream);
int pa_launch_kv_cache_update(const struct pa_kvu_params *p, int in_dtype, int cache_dtype, pa_stream stream);
int pa_launch_copy_blocks(const struct pa_cb_params *p, pa_stream stream);
/* Host mapping [n][2]; coalesced runs issued as batched async copies. */
int pa_launch_swap_blocks(void *dst, const void *src, int64_t block_bytes, const int64_t *mapping, int64_t n,
                          pa_stream stream);

#ifdef __cplusplus
}
#endif
#endif
