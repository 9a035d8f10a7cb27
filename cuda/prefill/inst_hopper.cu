// The sm_90a prefill kernel's instances (prefill_wgmma.cuh): f16 and bf16 at
// HP 64 and 128, each for flash caches (and prompt attention) and for vLLM's
// layout. Built for another target the kernel body is a trap; the launcher
// never picks it there.
#include "prefill_wgmma.cuh"

template <int HP, int DT> static cudaError_t launch_kv(const pa_prefill_kparams &p, cudaStream_t stream) {
    if (p.mode == PA_PREFILL_MODE_CONTEXT && p.g.layout == PA_LAYOUT_VLLM)
        return pa_prefill_h::launch_wgmma<HP, DT, pa_prefill_h::kVllm>(p, stream);
    return pa_prefill_h::launch_wgmma<HP, DT, pa_prefill_h::kFlash>(p, stream);
}

cudaError_t pa_prefill_wgmma(int dt, int hp, const pa_prefill_kparams &p, cudaStream_t stream) {
    if (dt == 1 && hp == 64)
        return launch_kv<64, 1>(p, stream);
    if (dt == 1 && hp == 128)
        return launch_kv<128, 1>(p, stream);
    if (dt == 2 && hp == 64)
        return launch_kv<64, 2>(p, stream);
    if (dt == 2 && hp == 128)
        return launch_kv<128, 2>(p, stream);
    return cudaErrorInvalidValue;
}
