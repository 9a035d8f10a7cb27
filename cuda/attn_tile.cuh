// Flash-attention tile machinery (FlashAttention-2 structure) for sm_80+:
// mma.sync m16n8k16 (f16 or bf16 in, f32 accumulate), ldmatrix, cp.async, an
// online softmax in f32. Shared by the prefill kernels (cuda/prefill/) and the
// ragged kernels; the interface below is stable.
//
// HOW TO USE
//   using C = pa::tile::Cfg<HEAD_PAD, BM, BN, DT>;   // DT: 1 = f16, 2 = bf16 (pa_dtype numbers)
//     HEAD_PAD: padded head size, a multiple of 32 (<= 256); the real head size
//               (a multiple of 8 <= HEAD_PAD) is a runtime argument: columns past
//               it are zero in shared memory and never stored.
//     BM: query rows of the CTA (16 per warp -> C::kWarps warps, C::kThreads
//         threads); BN: keys per K/V tile (a multiple of 16).
//   Shared memory (C::smem_bytes(stages)): one Q tile [BM][C::kStride] and
//   `stages` K and V tiles [BN][C::kStride] of C::T (rows padded by 16 bytes so
//   ldmatrix is bank-conflict free). Pointers: C::q_tile(smem),
//   C::k_tile(smem, stage), C::v_tile(smem, stage).
//
//   Loading tiles (all threads of the CTA call these; they do not synchronise):
//     load_rows_async<C, ROWS>(tile, row_fn, head_size)
//         row_fn(r) -> const C::T* to row r's first element (16-byte aligned,
//         head elements contiguous), or nullptr: the row is zero-filled. Uses
//         cp.async; the caller commits (cp_async_commit) and waits
//         (cp_async_wait<N>) then __syncthreads(). Packed [tokens, heads, head]
//         tensors and flash NHD/HND caches of the compute dtype take this path.
//     load_chunks_async<C, ROWS>(tile, chunk_fn, head_size)
//         chunk_fn(r, d0) -> const C::T* to elements d0..d0+7 of row r (16-byte
//         aligned) or nullptr: for sources whose rows are split in 16-byte
//         chunks (vLLM's key cache [blocks, heads, head/x, block, x]).
//     load_rows_gather<C, ROWS, ROW_FAST>(tile, gather, head_size)
//         gather.valid(r) -> bool, gather.load8(r, d0, float (&v)[8]) loads
//         elements d0..d0+7 of row r as floats (dequantised). Converted to C::T
//         and stored with st.shared: for fp8 caches, vLLM's transposed value
//         layout, unaligned sources. ROW_FAST = true gives consecutive threads
//         consecutive rows (coalesced when a source is token-contiguous, like
//         vLLM's value cache), false consecutive 8-element groups of one row.
//     All visit (row, 8-column group) units; rows >= ROWS do not exist.
//
//   Per warp (warp w owns tile rows [16w, 16w + 16)):
//     float s[C::kNS][4];  qk<C>(s, q_tile, k_tile, head_size)   S = Q K^T (raw dots)
//     for_each_score<C>(s, fn)   fn(int row, int col, float x) -> float: the
//         masking hook; row in [0, BM) (CTA tile row), col in [0, BN) (tile
//         key); return -INFINITY to mask. Scale, soft cap and ALiBi go here.
//     Softmax sm; sm.init();     per-thread state for its two rows
//     sm.update<C>(s, o)         running max/sum, rescales o, turns s into p
//     float o[C::kNO][4]; zero_acc(o);
//     pv<C>(o, s, v_tile, head_size)   O += P V
//     sm.finalize<C>(o)          O /= l (rows that saw no key give 0)
//     store_rows<C>(o, stage, row_fn_out, head_size)  through a shared staging
//         area (the warp's own 16 rows of `stage`, e.g. the Q tile once every
//         warp is done with Q: needs a __syncthreads() if other warps may still
//         read it), then 16-byte stores to row_fn_out(r) -> C::T* (nullptr:
//         not stored; a row not 16-byte aligned is stored element by
//         element). The row functor addresses the output row (query token,
//         head) so GQA packing stays the caller's business.
//     sm.lse(i) gives the natural-log sum-exp of row i (0: row g, 1: row g + 8)
//     for split-KV merges; warp_rows(i) the tile row of that register row.
//
//   A CTA loop (double buffered):
//       load Q, load tile 0 into stage 0, commit
//       for t: if (t + 1 < T) { load tile t + 1 into stage (t + 1) & 1; } commit
//              cp_async_wait<1>(); __syncthreads();
//              qk; for_each_score(mask); sm.update; pv;
//              __syncthreads();   // stage t & 1 is overwritten next iteration
//
// Accumulation: f32 everywhere; P is rounded to C::T before P V (as
// FlashAttention does). exp via exp2f with log2(e) folded in. A worked example
// of all of the above: cuda/prefill/prefill_kernel.cuh.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdint.h>

#include "dtype.cuh"
#include "ptx.cuh"

namespace pa {
namespace tile {

template <int HEAD_PAD, int BM_, int BN_, int DT> struct Cfg {
    static_assert(HEAD_PAD % 32 == 0 && HEAD_PAD <= 256, "HEAD_PAD: a multiple of 32 up to 256");
    static_assert(BM_ % 16 == 0 && BN_ % 16 == 0, "BM, BN: multiples of 16");
    static_assert(DT == 1 || DT == 2, "tensor-core tiles take f16 (1) or bf16 (2)");
    using T = typename pa::elt<DT>::type;
    static constexpr int kDT = DT;
    static constexpr int HP = HEAD_PAD;
    static constexpr int BM = BM_;
    static constexpr int BN = BN_;
    static constexpr int kWarps = BM / 16;
    static constexpr int kThreads = kWarps * 32;
    static constexpr int kStride = HP + 8; // elements per smem row (16-byte pad)
    static constexpr int kGroups = HP / 8; // 8-element (16-byte) groups per row
    static constexpr int kNS = BN / 8;     // n8 blocks of S per warp
    static constexpr int kNO = HP / 8;     // n8 blocks of O per warp
    static constexpr size_t q_elems = (size_t)BM * kStride;
    static constexpr size_t kv_elems = (size_t)BN * kStride;
    static constexpr size_t smem_bytes(int stages) { return (q_elems + 2 * stages * kv_elems) * sizeof(T); }
    static __device__ __forceinline__ T *q_tile(void *smem) { return static_cast<T *>(smem); }
    static __device__ __forceinline__ T *k_tile(void *smem, int stage) {
        return static_cast<T *>(smem) + q_elems + (size_t)(2 * stage) * kv_elems;
    }
    static __device__ __forceinline__ T *v_tile(void *smem, int stage) {
        return static_cast<T *>(smem) + q_elems + (size_t)(2 * stage + 1) * kv_elems;
    }
};

// ---- PTX (cuda/ptx.cuh holds every inline PTX statement) ---------------------------
using ::pa::ptx::cp_async16;
using ::pa::ptx::cp_async_commit;
using ::pa::ptx::cp_async_wait;
using ::pa::ptx::ldmatrix_x4;
using ::pa::ptx::ldmatrix_x4_trans;
using ::pa::ptx::mma16816;
using ::pa::ptx::smem_addr;

// Two floats -> one register of two C::T (low half = first).
template <int DT> __device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    if constexpr (DT == 1) {
        __half2 h = __floats2half2_rn(lo, hi);
        return *reinterpret_cast<uint32_t *>(&h);
    } else {
        __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<uint32_t *>(&h);
    }
}

// ---- tile loads ----------------------------------------------------------------------
// cp.async rows: see the header comment.
template <class C, int ROWS, class RowFn>
__device__ __forceinline__ void load_rows_async(typename C::T *tile, const RowFn &row_fn, int head_size) {
    using T = typename C::T;
    for (int u = threadIdx.x; u < ROWS * C::kGroups; u += C::kThreads) {
        const int r = u / C::kGroups, c = u % C::kGroups;
        T *dst = tile + r * C::kStride + c * 8;
        const T *src = c * 8 < head_size ? row_fn(r) : nullptr;
        if (src)
            cp_async16(dst, src + c * 8);
        else
            *reinterpret_cast<uint4 *>(dst) = make_uint4(0, 0, 0, 0);
    }
}

// cp.async by chunks: chunk_fn(r, d0) -> const C::T* to elements d0..d0+7 of row
// r (16-byte aligned, contiguous), or nullptr (zero-filled). For sources whose
// rows are not contiguous but whose 8-element chunks are (vLLM's key cache:
// [blocks, heads, head/x, block, x]); row_fn sources are the special case
// chunk_fn(r, d0) = row_fn(r) + d0.
template <class C, int ROWS, class ChunkFn>
__device__ __forceinline__ void load_chunks_async(typename C::T *tile, const ChunkFn &chunk_fn, int head_size) {
    using T = typename C::T;
    for (int u = threadIdx.x; u < ROWS * C::kGroups; u += C::kThreads) {
        const int r = u / C::kGroups, c = u % C::kGroups;
        T *dst = tile + r * C::kStride + c * 8;
        const T *src = c * 8 < head_size ? chunk_fn(r, c * 8) : nullptr;
        if (src)
            cp_async16(dst, src);
        else
            *reinterpret_cast<uint4 *>(dst) = make_uint4(0, 0, 0, 0);
    }
}

// Register path: load 8 floats through the gather functor, convert, store.
template <class C, int ROWS, bool ROW_FAST, class Gather>
__device__ __forceinline__ void load_rows_gather(typename C::T *tile, const Gather &g, int head_size) {
    for (int u = threadIdx.x; u < ROWS * C::kGroups; u += C::kThreads) {
        const int r = ROW_FAST ? u % ROWS : u / C::kGroups;
        const int c = ROW_FAST ? u / ROWS : u % C::kGroups;
        uint4 packed = make_uint4(0, 0, 0, 0);
        if (c * 8 < head_size && g.valid(r)) {
            float v[8];
            g.load8(r, c * 8, v);
            packed.x = pack2<C::kDT>(v[0], v[1]);
            packed.y = pack2<C::kDT>(v[2], v[3]);
            packed.z = pack2<C::kDT>(v[4], v[5]);
            packed.w = pack2<C::kDT>(v[6], v[7]);
        }
        *reinterpret_cast<uint4 *>(tile + r * C::kStride + c * 8) = packed;
    }
}

// ---- per-warp math ---------------------------------------------------------------------
__device__ __forceinline__ int warp_id() { return threadIdx.x >> 5; }
__device__ __forceinline__ int lane_id() { return threadIdx.x & 31; }
// Tile row of this thread's register row i (0: c0/c1, 1: c2/c3).
__device__ __forceinline__ int warp_rows(int i) { return warp_id() * 16 + (lane_id() >> 2) + 8 * i; }

template <int N> __device__ __forceinline__ void zero_acc(float (&a)[N][4]) {
#pragma unroll
    for (int j = 0; j < N; j++)
        a[j][0] = a[j][1] = a[j][2] = a[j][3] = 0.0f;
}

// S = Q_w K^T over the first ceil(head_size / 16) k16 steps (the rest are zero).
template <class C>
__device__ __forceinline__ void qk(float (&s)[C::kNS][4], const typename C::T *q_tile, const typename C::T *k_tile,
                                   int head_size) {
    const int lane = lane_id();
    zero_acc(s);
    const typename C::T *qa = q_tile + (warp_id() * 16 + (lane & 15)) * C::kStride + (lane >> 4) * 8;
    // K as the col-major B operand: matrices (n8 j, k lo), (j, k hi), (j+1, lo), (j+1, hi)
    const typename C::T *kb = k_tile + ((lane >> 4) * 8 + (lane & 7)) * C::kStride + ((lane >> 3) & 1) * 8;
#pragma unroll
    for (int kk = 0; kk < C::HP / 16; kk++) {
        if (kk * 16 >= head_size)
            break;
        uint32_t a[4];
        ldmatrix_x4(a, qa + kk * 16);
#pragma unroll
        for (int j = 0; j < C::kNS; j += 2) {
            uint32_t b[4];
            ldmatrix_x4(b, kb + j * 8 * C::kStride + kk * 16);
            mma16816<C::kDT>(s[j], a, b[0], b[1]);
            mma16816<C::kDT>(s[j + 1], a, b[2], b[3]);
        }
    }
}

// The masking hook: x = fn(tile row, tile col, x) for every score of the warp.
template <class C, class Fn> __device__ __forceinline__ void for_each_score(float (&s)[C::kNS][4], const Fn &fn) {
    const int lane = lane_id();
    const int r0 = warp_id() * 16 + (lane >> 2);
    const int c0 = (lane & 3) * 2;
#pragma unroll
    for (int j = 0; j < C::kNS; j++) {
        s[j][0] = fn(r0, j * 8 + c0, s[j][0]);
        s[j][1] = fn(r0, j * 8 + c0 + 1, s[j][1]);
        s[j][2] = fn(r0 + 8, j * 8 + c0, s[j][2]);
        s[j][3] = fn(r0 + 8, j * 8 + c0 + 1, s[j][3]);
    }
}

// O += P V_tile; P comes from s (after Softmax::update) as the A operand.
template <class C>
__device__ __forceinline__ void pv(float (&o)[C::kNO][4], const float (&p)[C::kNS][4], const typename C::T *v_tile,
                                   int head_size) {
    const int lane = lane_id();
    // V as the B operand through ldmatrix.trans: matrices (k lo, n8 j), (k hi, j), (k lo, j+1), (k hi, j+1)
    const typename C::T *vb = v_tile + ((lane & 7) + ((lane >> 3) & 1) * 8) * C::kStride + (lane >> 4) * 8;
#pragma unroll
    for (int kk = 0; kk < C::BN / 16; kk++) {
        uint32_t a[4];
        a[0] = pack2<C::kDT>(p[2 * kk][0], p[2 * kk][1]);
        a[1] = pack2<C::kDT>(p[2 * kk][2], p[2 * kk][3]);
        a[2] = pack2<C::kDT>(p[2 * kk + 1][0], p[2 * kk + 1][1]);
        a[3] = pack2<C::kDT>(p[2 * kk + 1][2], p[2 * kk + 1][3]);
#pragma unroll
        for (int j = 0; j < C::kNO; j += 2) {
            if (j * 8 >= head_size)
                break;
            uint32_t b[4];
            ldmatrix_x4_trans(b, vb + kk * 16 * C::kStride + j * 8);
            mma16816<C::kDT>(o[j], a, b[0], b[1]);
            mma16816<C::kDT>(o[j + 1], a, b[2], b[3]);
        }
    }
}

// Online softmax for the thread's two rows (g and g + 8 of the warp's 16).
struct Softmax {
    float m[2]; // running max (natural-log units); -inf until a key is seen
    float l[2]; // running sum of exp(x - m)

    __device__ __forceinline__ void init() {
        m[0] = m[1] = -INFINITY;
        l[0] = l[1] = 0.0f;
    }

    // s: masked logits in; p = exp(s - m_new) out. o is rescaled by
    // exp(m_old - m_new). Rows whose keys are all masked so far keep m = -inf
    // and contribute p = 0 (the -inf - -inf NaN never forms).
    template <class C> __device__ __forceinline__ void update(float (&s)[C::kNS][4], float (&o)[C::kNO][4]) {
        constexpr float kLog2e = 1.4426950408889634f;
#pragma unroll
        for (int i = 0; i < 2; i++) {
            float mx = m[i];
#pragma unroll
            for (int j = 0; j < C::kNS; j++)
                mx = fmaxf(mx, fmaxf(s[j][2 * i], s[j][2 * i + 1]));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            const float ref = mx == -INFINITY ? 0.0f : mx * kLog2e;
            const float corr = exp2f(m[i] * kLog2e - ref); // m_old = -inf -> 0
            m[i] = mx;
            float sum = 0.0f;
#pragma unroll
            for (int j = 0; j < C::kNS; j++) {
                s[j][2 * i] = exp2f(s[j][2 * i] * kLog2e - ref);
                s[j][2 * i + 1] = exp2f(s[j][2 * i + 1] * kLog2e - ref);
                sum += s[j][2 * i] + s[j][2 * i + 1];
            }
            l[i] = l[i] * corr + sum; // partial: the quad's sum is taken in finalize
#pragma unroll
            for (int j = 0; j < C::kNO; j++) {
                o[j][2 * i] *= corr;
                o[j][2 * i + 1] *= corr;
            }
        }
    }

    // Sums l over the quad and divides o by it (0 where no key was seen).
    template <class C> __device__ __forceinline__ void finalize(float (&o)[C::kNO][4]) {
#pragma unroll
        for (int i = 0; i < 2; i++) {
            l[i] += __shfl_xor_sync(0xffffffffu, l[i], 1);
            l[i] += __shfl_xor_sync(0xffffffffu, l[i], 2);
            const float inv = l[i] > 0.0f ? 1.0f / l[i] : 0.0f;
#pragma unroll
            for (int j = 0; j < C::kNO; j++) {
                o[j][2 * i] *= inv;
                o[j][2 * i + 1] *= inv;
            }
        }
    }

    // Natural-log sum-exp of row i; valid after finalize (-inf: no key seen).
    __device__ __forceinline__ float lse(int i) const { return l[i] > 0.0f ? m[i] + logf(l[i]) : -INFINITY; }
};

// Writes the warp's 16 output rows: registers -> `stage` (the warp's own rows)
// -> 16-byte stores to row_fn(r) (nullptr: skipped). head_size columns.
template <class C, class RowFn>
__device__ __forceinline__ void store_rows(const float (&o)[C::kNO][4], typename C::T *stage, const RowFn &row_fn,
                                           int head_size) {
    using T = typename C::T;
    const int lane = lane_id(), w = warp_id();
    T *base = stage + (w * 16 + (lane >> 2)) * C::kStride + (lane & 3) * 2;
#pragma unroll
    for (int j = 0; j < C::kNO; j++) {
        *reinterpret_cast<uint32_t *>(base + j * 8) = pack2<C::kDT>(o[j][0], o[j][1]);
        *reinterpret_cast<uint32_t *>(base + 8 * C::kStride + j * 8) = pack2<C::kDT>(o[j][2], o[j][3]);
    }
    __syncwarp();
    const int groups = head_size / 8;
    for (int u = lane; u < 16 * groups; u += 32) {
        const int r = w * 16 + u / groups, c = u % groups;
        T *dst = row_fn(r);
        if (!dst)
            continue;
        const T *src = stage + r * C::kStride + c * 8;
        if ((reinterpret_cast<uintptr_t>(dst) & 15) == 0) {
            *reinterpret_cast<uint4 *>(dst + c * 8) = *reinterpret_cast<const uint4 *>(src);
        } else {
#pragma unroll
            for (int e = 0; e < 8; e++)
                dst[c * 8 + e] = src[e];
        }
    }
}

} // namespace tile
} // namespace pa
