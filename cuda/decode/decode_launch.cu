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

// Resident CTAs of the split kernel per device (SM count x 4, the occupancy
// its __launch_bounds__ ask for), read once per device.
static int resident_slots(int64_t *slots) {
    static int sms_cache[64];
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return (int)e;
    int sms = dev >= 0 && dev < 64 ? sms_cache[dev] : 0;
    if (sms <= 0) {
        e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        if (e != cudaSuccess)
            return (int)e;
        if (dev >= 0 && dev < 64)
            sms_cache[dev] = sms; // benign race: every thread stores the same value
    }
    *slots = (int64_t)sms * 4;
    return 0;
}

extern "C" int pa_launch_paged_decode(const pa_dec_kparams *kparams, pa_stream stream) {
    pa_dec_kparams k = *kparams;
    const pa_dec_kparams *kp = &k;
    int64_t slots = 0;
    int e = resident_slots(&slots);
    if (e != 0)
        return e;
    k.spc = !k.spc_ok
                ? 1
                : pa_dec_splits_per_cta((int64_t)k.num_seqs * k.num_kv_heads * k.head_chunks, k.max_splits, slots);
    e = (int)cudaErrorInvalidValue;
#define PA_DEC_PAIR(Q, C)                                                                                              \
    if (kp->q_dtype == Q && kp->cache_dtype == C)                                                                      \
        e = pa_dec_launch_split_##Q##_##C(kp, stream);
#include "instances/list.inc"
#undef PA_DEC_PAIR
    if (e != 0 || kp->max_splits <= kp->spc)
        return e; // no sequence has more splits than one CTA runs
    const cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
    switch (kp->q_dtype) {
    case 0: return launch_merge<0>(kp, s);
    case 1: return launch_merge<1>(kp, s);
    case 2: return launch_merge<2>(kp, s);
    default: return (int)cudaErrorInvalidValue;
    }
}
