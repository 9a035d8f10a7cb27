/* Decode: public GPU entries. Validate (csrc/ops/decode.c), fill the kernel
 * parameter block, NVTX range, launch (cuda/decode/). Nothing is launched on
 * invalid input; no allocation, sync or host<->device copy happens here. */
#include "decode_internal.h"
#include "internal.h"

static pa_status run(const pa_decode_params *p, int mode, void *ws, size_t ws_bytes, pa_stream stream,
                     const char *name) {
    pa_dec_kparams kp;
    PA_TRY(pa_dec_kparams_make(p, mode, ws, ws_bytes, &kp, NULL));
    if (p->num_seqs == 0) {
        pa_clear_error();
        return PA_SUCCESS;
    }
    PA_TRY(pa_no_pending_cuda_error(name));
    PA_RANGE_PUSH(name);
    const int e = pa_launch_paged_decode(&kp, stream);
    PA_RANGE_POP();
    if (e != 0)
        return pa_cuda_fail(e, name);
    pa_clear_error();
    return PA_SUCCESS;
}

pa_status pa_paged_attention_v1(const pa_decode_params *p, pa_stream stream) {
    return run(p, PA_DEC_MODE_V1, NULL, 0, stream, "pa_paged_attention_v1");
}

pa_status pa_paged_attention_v2(const pa_decode_params *p, void *workspace, size_t workspace_bytes, pa_stream stream) {
    return run(p, PA_DEC_MODE_V2, workspace, workspace_bytes, stream, "pa_paged_attention_v2");
}

pa_status pa_paged_attention_decode(const pa_decode_params *p, void *workspace, size_t workspace_bytes,
                                    pa_stream stream) {
    return run(p, PA_DEC_MODE_AUTO, workspace, workspace_bytes, stream, "pa_paged_attention_decode");
}
