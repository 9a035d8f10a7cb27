/* pa_merge_attn_states: validate (pa_merge_resolve, csrc/reference/merge.c), pick the
 * chunk width, NVTX range, launch (cuda/merge_states.cu). */
#include <stdint.h>

#include "internal.h"
#include "launchers.h"

/* Whole rows in 16-byte chunks: the head's bytes, each row pointer and each row
 * stride multiples of 16 (vLLM's kernel asks the first; its tensors are packed). */
static int rows_in_16_bytes(const pa_merge_attn_states_params *r) {
    const int64_t es = (int64_t)pa_dtype_size(r->dtype);
    return (r->head_size * es) % 16 == 0 && (uintptr_t)r->output % 16 == 0 && (uintptr_t)r->prefix_output % 16 == 0 &&
           (uintptr_t)r->suffix_output % 16 == 0 && (r->out_stride * es) % 16 == 0 &&
           (r->prefix_stride * es) % 16 == 0 && (r->suffix_stride * es) % 16 == 0;
}

pa_status pa_merge_attn_states(const pa_merge_attn_states_params *p, pa_stream stream) {
    pa_merge_attn_states_params r;
    PA_TRY(pa_merge_resolve(p, &r));
    if (r.num_tokens == 0) {
        pa_clear_error();
        return PA_SUCCESS;
    }
    PA_TRY(pa_no_pending_cuda_error("pa_merge_attn_states"));
    PA_RANGE_PUSH("pa_merge_attn_states");
    const int e = pa_launch_merge_attn_states(&r, rows_in_16_bytes(&r), stream);
    PA_RANGE_POP();
    if (e != 0)
        return pa_cuda_fail(e, "pa_merge_attn_states launch");
    pa_clear_error();
    return PA_SUCCESS;
}
