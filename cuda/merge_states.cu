// pa_merge_attn_states: out = (wa * A + wb * B) row by row, the weights from
// the two parts' log-sum-exps (include/pagedattn/merge.h).
//
// A CTA is blockDim.y token rows of one head (blockIdx.y) by blockDim.x
// threads a row, each thread one VEC-element chunk of the row (16 bytes where
// the shapes allow, as vLLM's kernel moves them; one element otherwise), so
// no thread divides to find its row. A thread issues its two row loads
// before it reads the lse pair: the loads do not wait on the weights, and
// the memory system sees one round trip a chunk, not two. A part of weight 0
// is then dropped by a select, never multiplied in, so its row's contents
// (NaN included) do not matter. The weights cost each thread two
// exponentials, two divisions and a logarithm (accurate, as vLLM's kernel
// keeps them) against its 48 bytes; the instruction budget says the 16-byte
// instances still allow more than the copy roof
// (benchmarks/results/budget-notes/merge-states-2026-12-04.md).
#include <math.h>

#include "launchers.h"
#include "dtype.cuh"
#include "ptx.cuh"

namespace {

constexpr int kThreads = 128;

// Interpret mode holds the chunk loads to the device's alignment (the CPU
// would take a misaligned 16-byte load; the device faults).
#ifdef PA_INTERPRET
#define PA_MERGE_ALIGNED(ptr, n) ::pa_interp::check_align((const void *)(ptr), (n), __FILE__, __LINE__)
#else
#define PA_MERGE_ALIGNED(ptr, n) ((void)0)
#endif

template <typename T, int VEC> struct alignas(sizeof(T) * VEC) chunk { T v[VEC]; };

template <int DT, int VEC>
__global__ void __launch_bounds__(kThreads) merge_states_kernel(pa_merge_attn_states_params p) {
    using T = typename pa::elt<DT>::type;
    using C = chunk<T, VEC>;
    const int64_t t = (int64_t)blockIdx.x * blockDim.y + threadIdx.y;
    if (t >= p.num_tokens)
        return;
    const int h = (int)blockIdx.y;
    const int64_t col = (int64_t)h * p.head_size;
    const C *a_row = reinterpret_cast<const C *>(static_cast<const T *>(p.prefix_output) + t * p.prefix_stride + col);
    const C *b_row = reinterpret_cast<const C *>(static_cast<const T *>(p.suffix_output) + t * p.suffix_stride + col);
    C *o_row = reinterpret_cast<C *>(static_cast<T *>(p.output) + t * p.out_stride + col);
    PA_MERGE_ALIGNED(a_row, (int)sizeof(C));
    PA_MERGE_ALIGNED(b_row, (int)sizeof(C));
    PA_MERGE_ALIGNED(o_row, (int)sizeof(C));
    const int chunks = p.head_size / VEC;
    const int64_t li = (int64_t)h * p.lse_head_stride + t * p.lse_token_stride;
    int i = (int)threadIdx.x;
    C a = {}, b = {};
    if (i < chunks) {
        a = a_row[i];
        b = b_row[i];
    }
    float la = p.prefix_lse[li], lb = p.suffix_lse[li];
    la = la == INFINITY ? -INFINITY : la; // FlashAttention-2's "no key" is +inf
    lb = lb == INFINITY ? -INFINITY : lb;
    const float m = isnan(la) || isnan(lb) ? NAN : fmaxf(la, lb); // NaN in, NaN out
    float wa = 0.0f, wb = 0.0f, lse = -INFINITY;
    if (m != -INFINITY) {
        const float ea = expf(la - m), eb = expf(lb - m), s = ea + eb;
        wa = ea / s;
        wb = eb / s;
        lse = m + logf(s);
    }
    if (p.output_lse && threadIdx.x == 0)
        p.output_lse[li] = lse;
    while (i < chunks) {
        C o;
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            const float x = wa != 0.0f ? wa * pa::to_float<DT>(a.v[k]) : 0.0f;
            o.v[k] = pa::from_float<DT>(wb != 0.0f ? fmaf(wb, pa::to_float<DT>(b.v[k]), x) : x);
        }
        o_row[i] = o;
        i += (int)blockDim.x;
        if (i < chunks) {
            a = a_row[i];
            b = b_row[i];
        }
    }
}

template <int DT, int VEC> cudaError_t launch(const pa_merge_attn_states_params &p, cudaStream_t s) {
    const int chunks = p.head_size / VEC;
    const int tx = chunks < kThreads ? chunks : kThreads;
    const int ty = kThreads / tx;
    // (in 64 bits: num_tokens may be INT32_MAX)
    const dim3 grid((unsigned)(((int64_t)p.num_tokens + ty - 1) / ty), (unsigned)p.num_heads);
    PA_LAUNCH(grid, dim3((unsigned)tx, (unsigned)ty), 0, s, merge_states_kernel<DT, VEC>)(p);
    return cudaGetLastError();
}

} // namespace

extern "C" int pa_launch_merge_attn_states(const pa_merge_attn_states_params *p, int vec16, pa_stream stream) {
    cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
    switch ((int)p->dtype * 2 + (vec16 ? 1 : 0)) {
    case 0: return (int)launch<0, 1>(*p, s);
    case 1: return (int)launch<0, 4>(*p, s);
    case 2: return (int)launch<1, 1>(*p, s);
    case 3: return (int)launch<1, 8>(*p, s);
    case 4: return (int)launch<2, 1>(*p, s);
    case 5: return (int)launch<2, 8>(*p, s);
    }
    return (int)cudaErrorInvalidValue;
}
