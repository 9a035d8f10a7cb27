// The sm_90a prefill kernel's instances (prefill_wgmma.cuh): f16 and bf16 at
// HP 64, 96 and 128, each for flash caches (and prompt attention) and for vLLM's
// layout, of the query dtype or fp8; at HP 192 and 256, prompts and flash caches of the query dtype or fp8; and the FP8
// path's four (f16 and bf16 queries over e4m3 caches in a flash layout or vLLM's, HP 128). Built for another target the
// kernel body is a trap; the launcher never picks it there.
#include "prefill_wgmma.cuh"

template <int HP, int DT> static cudaError_t launch_kv(const pa_prefill_kparams &p, cudaStream_t stream) {
    using namespace pa_prefill_h;
    if (p.mode != PA_PREFILL_MODE_CONTEXT)
        return launch_wgmma<HP, DT, kFlash>(p, stream);
    const bool vllm = p.g.layout == PA_LAYOUT_VLLM, fp8 = p.cache_dtype != p.q_dtype;
    if constexpr (HP > 128) { // HP 192 and 256: flash caches only (HCfg; pa_prefill_hopper_head)
        if (vllm)
            return cudaErrorInvalidValue;
        return fp8 ? launch_wgmma<HP, DT, kFlashFp8>(p, stream) : launch_wgmma<HP, DT, kFlash>(p, stream);
    } else {
        if (fp8)
            return vllm ? launch_wgmma<HP, DT, kVllmFp8>(p, stream) : launch_wgmma<HP, DT, kFlashFp8>(p, stream);
        return vllm ? launch_wgmma<HP, DT, kVllm>(p, stream) : launch_wgmma<HP, DT, kFlash>(p, stream);
    }
}

cudaError_t pa_prefill_wgmma(int dt, int hp, const pa_prefill_kparams &p, cudaStream_t stream) {
    if (dt == 1 && hp == 64)
        return launch_kv<64, 1>(p, stream);
    if (dt == 1 && hp == 96)
        return launch_kv<96, 1>(p, stream);
    if (dt == 1 && hp == 128)
        return launch_kv<128, 1>(p, stream);
    if (dt == 1 && hp == 192)
        return launch_kv<192, 1>(p, stream);
    if (dt == 1 && hp == 256)
        return launch_kv<256, 1>(p, stream);
    if (dt == 2 && hp == 64)
        return launch_kv<64, 2>(p, stream);
    if (dt == 2 && hp == 96)
        return launch_kv<96, 2>(p, stream);
    if (dt == 2 && hp == 128)
        return launch_kv<128, 2>(p, stream);
    if (dt == 2 && hp == 192)
        return launch_kv<192, 2>(p, stream);
    if (dt == 2 && hp == 256)
        return launch_kv<256, 2>(p, stream);
    return cudaErrorInvalidValue;
}

// The FP8 path (PA_PREFILL_PATH_HOPPER_FP8): e4m3 caches at HP 128, context mode.
cudaError_t pa_prefill_wgmma_fp8(int dt, const pa_prefill_kparams &p, cudaStream_t stream) {
    using namespace pa_prefill_h;
    const bool vllm = p.g.layout == PA_LAYOUT_VLLM;
    if (dt == 1)
        return vllm ? launch_wgmma<128, 1, kVllmFp8, true>(p, stream)
                    : launch_wgmma<128, 1, kFlashFp8, true>(p, stream);
    if (dt == 2)
        return vllm ? launch_wgmma<128, 2, kVllmFp8, true>(p, stream)
                    : launch_wgmma<128, 2, kFlashFp8, true>(p, stream);
    return cudaErrorInvalidValue;
}
