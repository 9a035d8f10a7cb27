// Decode launcher: picks the split-kernel instance of the (query, cache) dtype
// pair (cuda/decode/instances/) and, when a sequence may have several splits,
// launches the merge kernel after it on the same stream.
#include <cstdlib>
#include <cstring>

#include "../device_cc.cuh"
#include "decode_kernel.cuh"

#define PA_DEC_PAIR(Q, C) extern "C" int pa_dec_launch_split_##Q##_##C(const pa_dec_kparams *kp, pa_stream s);
#include "instances/list.inc"
#undef PA_DEC_PAIR

namespace {

// The merge kernel goes out with programmatic dependent launch (as
// FlashInfer's and FlashAttention-3's split-KV combines can) on devices of
// compute capability 9.0 and up, unless PAGEDATTN_DECODE_PDL=0 (read at each
// launch, like PAGEDATTN_DECODE_MIN_SPLIT; for measuring both ways): its
// launch and prologue then overlap the split kernel's last wave instead of
// following it. The capability is read at each launch, as the prefill
// launcher reads it (pa_current_cc). Only code built for sm_90 or later has
// the merge kernel's griddepcontrol.wait: a build with no such target
// (PA_HAVE_SM90_PLUS, meson.build) never asks for it, since an sm_90 device
// would run the merge from older PTX, which would not wait. Interpret mode
// stands in for a compute capability 9.0 device and holds the launch to the
// rules that make it safe there (tests/interp/README.md).
bool merge_pdl() {
#if defined(PA_HAVE_SM90_PLUS) || defined(PA_INTERPRET)
    const char *e = getenv("PAGEDATTN_DECODE_PDL");
    if (e && strcmp(e, "0") == 0)
        return false;
    int major = 0, minor = 0;
    return pa_current_cc(&major, &minor) && major >= 9;
#else
    return false;
#endif
}

template <int QT> int launch_merge(const pa_dec_kparams *kp, cudaStream_t s) {
    const unsigned grid = (unsigned)((int64_t)kp->num_seqs * kp->num_heads);
    if (kp->head_size > pa_dec::NT)
        PA_LAUNCH_PDL(merge_pdl(), grid, pa_dec::NT, 0, s, pa_dec::decode_merge_kernel<QT, true>)(*kp);
    else
        PA_LAUNCH_PDL(merge_pdl(), grid, pa_dec::NT, 0, s, pa_dec::decode_merge_kernel<QT, false>)(*kp);
    return (int)cudaGetLastError();
}

} // namespace

extern "C" int pa_launch_paged_decode(const pa_dec_kparams *kp, pa_stream stream) {
    int e = (int)cudaErrorInvalidValue;
#define PA_DEC_PAIR(Q, C)                                                                                              \
    if (kp->q_dtype == Q && kp->cache_dtype == C)                                                                      \
        e = pa_dec_launch_split_##Q##_##C(kp, stream);
#include "instances/list.inc"
#undef PA_DEC_PAIR
    if (e != 0 || kp->grid_splits <= 1)
        return e;
    const cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
    switch (kp->q_dtype) {
    case 0: return launch_merge<0>(kp, s);
    case 1: return launch_merge<1>(kp, s);
    case 2: return launch_merge<2>(kp, s);
    default: return (int)cudaErrorInvalidValue;
    }
}
