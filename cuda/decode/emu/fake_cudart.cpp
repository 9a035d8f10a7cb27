// A fake CUDA runtime for running tests/gpu/test_decode.c on a machine without
// a GPU: "device" memory is guarded host memory, copies are memcpy, and
// pa_launch_paged_decode runs the real kernel source through the emulator
// (emu.h). Stream capture records launches and a graph launch replays them,
// reading seq_lens and block tables at replay as the device would. Calls that
// would break a capture (allocation, copies, synchronisation) fail while one is
// open, so an entry that made them would fail its graph test here too.
#define PA_DECODE_EMU 1
#include "../decode_kernel.cuh"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include <vector>

struct CUgraph_st {
    std::vector<pa_dec_kparams> launches;
};
struct CUgraphExec_st {
    std::vector<pa_dec_kparams> launches;
};
struct CUstream_st {
    int id;
};

namespace {

bool capturing = false;
std::vector<pa_dec_kparams> captured;

template <int QT, int CT> void body_split(void *a) {
    pa_dec::decode_split_kernel<QT, CT>(*static_cast<const pa_dec_kparams *>(a));
}
template <int QT> void body_merge(void *a) { pa_dec::decode_merge_kernel<QT>(*static_cast<const pa_dec_kparams *>(a)); }

typedef void (*body_fn)(void *);

body_fn pick_split(int q, int c) {
#define PA_DEC_PAIR(Q, C)                                                                                              \
    if (q == Q && c == C)                                                                                              \
        return body_split<Q, C>;
#include "../instances/list.inc"
#undef PA_DEC_PAIR
    return nullptr;
}

void run(pa_dec_kparams kp) {
    pa_emu::launch(
        pa_emu::dim3e{(unsigned)(kp.num_seqs * kp.num_kv_heads * kp.head_chunks), (unsigned)kp.max_splits, 1},
        PA_DEC_THREADS, (size_t)kp.smem_bytes, pick_split(kp.q_dtype, kp.cache_dtype), &kp);
    if (kp.max_splits > 1)
        pa_emu::launch(pa_emu::dim3e{(unsigned)(kp.num_seqs * kp.num_heads), 1, 1}, PA_DEC_THREADS, 16,
                       kp.q_dtype == 0   ? body_merge<0>
                       : kp.q_dtype == 1 ? body_merge<1>
                                         : body_merge<2>,
                       &kp);
}

} // namespace

extern "C" int pa_launch_paged_decode(const pa_dec_kparams *kp, pa_stream stream) {
    (void)stream;
    if (!pick_split(kp->q_dtype, kp->cache_dtype))
        return (int)cudaErrorInvalidValue;
    if (capturing)
        captured.push_back(*kp);
    else
        run(*kp);
    return 0;
}

extern "C" {

cudaError_t cudaMalloc(void **p, size_t bytes) {
    if (capturing)
        return cudaErrorStreamCaptureUnsupported;
    *p = pa_emu::guarded_alloc(bytes ? bytes : 1);
    memset(*p, 0xCD, bytes); // uninitialised, as on the device
    return cudaSuccess;
}
cudaError_t cudaFree(void *p) {
    pa_emu::guarded_free(p);
    return cudaSuccess;
}
cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind) {
    if (capturing)
        return cudaErrorStreamCaptureUnsupported;
    memcpy(dst, src, n);
    return cudaSuccess;
}
cudaError_t cudaMemset(void *dst, int v, size_t n) {
    if (capturing)
        return cudaErrorStreamCaptureUnsupported;
    memset(dst, v, n);
    return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize(void) { return capturing ? cudaErrorStreamCaptureUnsupported : cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return capturing ? cudaErrorStreamCaptureUnsupported : cudaSuccess; }
cudaError_t cudaStreamCreate(cudaStream_t *s) {
    *s = new CUstream_st{1};
    return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
    delete s;
    return cudaSuccess;
}
cudaError_t cudaStreamBeginCapture(cudaStream_t, enum cudaStreamCaptureMode) {
    if (capturing)
        return cudaErrorIllegalState;
    capturing = true;
    captured.clear();
    return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t, cudaGraph_t *g) {
    if (!capturing)
        return cudaErrorIllegalState;
    capturing = false;
    *g = new CUgraph_st{captured};
    return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *e, cudaGraph_t g, unsigned long long) {
    *e = new CUgraphExec_st{g->launches};
    return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t) {
    for (const pa_dec_kparams &kp : e->launches)
        run(kp);
    return cudaSuccess;
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e) {
    delete e;
    return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t g) {
    delete g;
    return cudaSuccess;
}
const char *cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "emulated CUDA error"; }
const char *cudaGetErrorName(cudaError_t e) { return e == cudaSuccess ? "cudaSuccess" : "cudaErrorEmulated"; }
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
cudaError_t cudaGetDeviceCount(int *n) {
    *n = 1;
    return cudaSuccess;
}
cudaError_t cudaDriverGetVersion(int *v) {
    *v = 13000;
    return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int *v) {
    *v = 13000;
    return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int dev) {
    if (dev != 0)
        return cudaErrorInvalidDevice;
    memset(p, 0, sizeof *p);
    strcpy(p->name, "host emulation of the decode kernels");
    p->major = 9;
    p->minor = 0;
    p->multiProcessorCount = 1;
    p->sharedMemPerBlockOptin = 227 * 1024;
    p->l2CacheSize = 1 << 20;
    p->totalGlobalMem = (size_t)1 << 34;
    return cudaSuccess;
}

} // extern "C"
