// Decode launcher: picks the split-kernel instance of the (query, cache) dtype
// pair (cuda/decode/instances/) and, when a sequence may have several splits,
// launches the merge kernel after it on the same stream.
#include "decode_kernel.cuh"

#define PA_DEC_PAIR(Q, C) extern "C" int pa_dec_launch_split_##Q##_##C(const pa_dec_kparams *kp, pa_stream s);
#include "instances/list.inc"
#undef PA_DEC_PAIR

namespace {

template <int QT> int launch_merge(const pa_dec_kparams *kp, cudaStream_t s) {
    const unsigned grid = (unsigned)((int64_t)kp->num_seqs * kp->num_heads);
    PA_LAUNCH(grid, pa_dec::NT, 0, s, pa_dec::decode_merge_kernel<QT>)(*kp);
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
