// The sm_90a prefill kernel's instances (prefill_wgmma.cuh): f16 and bf16 at
// HP 64 and 128. Built for another target the kernel body is a trap; the
// launcher never picks it there.
#include "prefill_wgmma.cuh"

cudaError_t pa_prefill_wgmma(int dt, int hp, const pa_prefill_kparams &p, cudaStream_t stream) {
    if (dt == 1 && hp == 64)
        return pa_prefill_h::launch_wgmma<64, 1>(p, stream);
    if (dt == 1 && hp == 128)
        return pa_prefill_h::launch_wgmma<128, 1>(p, stream);
    if (dt == 2 && hp == 64)
        return pa_prefill_h::launch_wgmma<64, 2>(p, stream);
    if (dt == 2 && hp == 128)
        return pa_prefill_h::launch_wgmma<128, 2>(p, stream);
    return cudaErrorInvalidValue;
}
