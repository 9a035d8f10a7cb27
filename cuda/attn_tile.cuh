// Flash-attention tile machinery (FlashAttention-2 structure) for sm_80+:
// mma.sync m16n8k16 (f16 or bf16 in, f32 accumulate), ldmatrix, cp.async, an
// online softmax in f32. Shared by the prefill kernels (cuda/prefill/) and the
// ragged kernels; the interface below is stable.
//
// HOW TO USE
//   using C = pa::tile::Cfg<HEAD_PAD, BM, BN, DT, WM, VT>;   // DT: 1 = f16, 2 = bf16 (pa_dtype numbers)
//     HEAD_PAD: padded head size, a multiple of 32 (<= 256); the real head size
//               (a multiple of 8 <= HEAD_PAD) is a runtime argument: columns past
//               it are zero in shared memory and never stored.
//     BM: query rows of the CTA, WM (16 or 32, default 16) per warp ->
//         C::kWarps = BM / WM warps, C::kThreads threads; each warp runs
//         C::kMT = WM / 16 m16 row blocks on every K and V fragment it reads.
//     BN: keys per K/V tile (a multiple of 16).
//     VT (default false): the V slots also hold V^T tiles [HP][C::kVtStride].
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
//     load_tile_async<C, ROWS>(tile, base, rowoff, col_fn, head_size)
//         row r at base + rowoff[r] elements (rowoff: shared memory; < 0: the
//         row is zero-filled), its chunk d0..d0+7 col_fn(d0) elements further
//         (d0 for contiguous rows; vLLM's key cache [blocks, heads, head/x,
//         block, x] splits rows in 16-byte chunks). A few instructions per
//         16-byte copy: the per-tile path of the prefill kernel.
//     load_rows_tile_async<C, ROWS>(tile, base, row_fn, col_fn, head_size)
//         the same with row_fn(r, off) -> bool giving row r's offset (or
//         false: absent), e.g. packed rows a stride apart, no table.
//     copy_tile_async<THREADS, ROWS, G, STRIDE>(tile, base, row_fn, col_fn)
//         the general form: any element type (raw fp8 bytes too), any row
//         and column offsets, partial chunks zero-filled (V^T tiles, fp8).
//     dequant_tile<C, ROWS, COLS, DSTRIDE, E5M2, SCALE, BATCH>(dst, raw, scale)
//         raw fp8 bytes in shared memory to C::T, after the barrier (BATCH > 0:
//         that many 8-byte units per thread at a time, in a rolled loop).
//     load_rows_gather<C, ROWS, ROW_FAST>(tile, gather, head_size)
//         gather.valid(r) -> bool, gather.load8(r, d0, float (&v)[8]) loads
//         elements d0..d0+7 of row r as floats (dequantised). Converted to C::T
//         and stored with st.shared: for fp8 caches, vLLM's transposed value
//         layout, unaligned sources. ROW_FAST = true gives consecutive threads
//         consecutive rows (coalesced when a source is token-contiguous, like
//         vLLM's value cache), false consecutive 8-element groups of one row.
//     All visit (row, 8-column group) units; rows >= ROWS do not exist.
//
//   Per warp (warp w owns tile rows [w WM, w WM + WM); m16 block mt of them
//   is n8 fragments [mt kNS, mt kNS + kNS) of s and [mt kNO, ...) of o):
//     float s[C::kSA][4];  qk<C>(s, q_tile, k_tile, head_size)   S = Q K^T (raw dots)
//     for_each_score<C>(s, fn)   fn(int row, int col, float x) -> float: the
//         masking hook; row in [0, BM) (CTA tile row), col in [0, BN) (tile
//         key); return -INFINITY to mask. Scale, soft cap and ALiBi go here.
//     for_each_score_reg<C>(s, fn)   the same with the thread's register row
//         i < 2 kMT (tile row warp_row<C>(i)) in place of the tile row.
//     C::Softmax sm; sm.init(); per-thread state for its 2 kMT rows
//     uint32_t pk[C::kSA][2];
//     sm.update<C>(s, o, pk)     running max (lazy: kLazy)/sum, rescales o, P = softmax
//                                numerators of s rounded to C::T into pk
//     sm.update<C>(s, o, mul, pk)  the same for logits x with x * mul in log2
//                                units (mul = scale * log2(e) takes raw dots)
//     float o[C::kOA][4]; zero_acc(o);
//     pv<C>(o, pk, v_tile, head_size)   O += P V
//     pv<C, true>(o, pk, vt_tile, head_size)   the same from a V^T tile
//     sm.finalize<C>(o)          O /= l (rows that saw no key give 0)
//     sm.finalize<C>(o, sinks, sink2)  the same with attention sinks: row i's
//                                sink2[i] (log2 units) adds exp2(sink2 - m) to l
//     store_rows<C>(o, stage, row_fn_out, head_size)  through a shared staging
//         area (the warp's own WM rows of `stage`, e.g. the Q tile once every
//         warp is done with Q: needs a __syncthreads() if other warps may still
//         read it), then 16-byte stores to row_fn_out(r) -> C::T* (nullptr:
//         not stored; a row not 16-byte aligned is stored element by
//         element). The row functor addresses the output row (query token,
//         head) so GQA packing stays the caller's business.
//     sm.lse(i) gives the natural-log sum-exp of register row i (tile row
//     warp_row<C>(i) = w WM + 8 i + lane / 4) for split-KV merges.
//
//   A CTA loop (double buffered):
//       load Q, load tile 0 into stage 0, commit
//       for t: if (t + 1 < T) { load tile t + 1 into stage (t + 1) & 1; } commit
//              cp_async_wait<1>(); __syncthreads();
//              qk; for_each_score(mask); sm.update; pv;
//              __syncthreads();   // stage t & 1 is overwritten next iteration
//
// Accumulation: f32 everywhere; P is rounded to C::T before P V (as
// FlashAttention does). exp via ex2.approx.ftz (ptx.cuh ex2) with the scale
// times log2(e) folded into one FFMA. A worked example
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

template <int MT> struct SoftmaxN;

// log2(e): the softmax's exponent factor for natural-log logits (ex2(x log2 e) = e^x).
constexpr float kLog2e = 1.4426950408889634f;

template <int HEAD_PAD, int BM_, int BN_, int DT, int WM_ = 16, bool VT_ = false, int STRIDE_ = 0> struct Cfg {
    static_assert(HEAD_PAD % 32 == 0 && HEAD_PAD <= 256, "HEAD_PAD: a multiple of 32 up to 256");
    static_assert(BM_ % 16 == 0 && BN_ % 16 == 0, "BM, BN: multiples of 16");
    static_assert((WM_ == 16 || WM_ == 32) && BM_ % WM_ == 0, "WM: 16 or 32 query rows per warp, dividing BM");
    static_assert(DT == 1 || DT == 2, "tensor-core tiles take f16 (1) or bf16 (2)");
    using T = typename pa::elt<DT>::type;
    static constexpr int kDT = DT;
    static constexpr int HP = HEAD_PAD;
    static constexpr int BM = BM_;
    static constexpr int BN = BN_;
    static constexpr int WM = WM_;      // query rows per warp
    static constexpr int kMT = WM / 16; // m16 row blocks per warp
    static constexpr int kWarps = BM / WM;
    static constexpr int kThreads = kWarps * 32;
    // Elements per smem row: HP + 8 (a 16-byte pad), or STRIDE_ for a view of
    // HP columns of a wider tile (ragged's decode warps split the head in P V).
    static constexpr int kStride = STRIDE_ ? STRIDE_ : HP + 8;
    static_assert(STRIDE_ == 0 || (STRIDE_ >= HP && STRIDE_ % 8 == 0), "STRIDE: whole 16-byte groups, >= HP");
    static constexpr int kGroups = HP / 8; // 8-element (16-byte) groups per row
    static constexpr int kNS = BN / 8;     // n8 blocks of S per m16 row block
    static constexpr int kNO = HP / 8;     // n8 blocks of O per m16 row block
    static constexpr int kSA = kMT * kNS;  // S registers per thread: float s[kSA][4], block mt at mt * kNS
    static constexpr int kOA = kMT * kNO;  // O registers per thread: float o[kOA][4], block mt at mt * kNO
    using Softmax = SoftmaxN<kMT>;
    static constexpr int kVtStride = BN + 8; // elements per row of a V^T tile [HP][BN] (16-byte pad)
    static constexpr size_t q_elems = (size_t)BM * kStride;
    static constexpr size_t kv_elems = (size_t)BN * kStride;
    static constexpr size_t vt_elems = (size_t)HP * kVtStride;
    // A V slot holds a V tile [BN][kStride], or with VT_ also a V^T tile.
    static constexpr size_t v_elems = VT_ && vt_elems > kv_elems ? vt_elems : kv_elems;
    static constexpr size_t smem_bytes(int stages) { return (q_elems + stages * (kv_elems + v_elems)) * sizeof(T); }
    static __device__ __forceinline__ T *q_tile(void *smem) { return static_cast<T *>(smem); }
    static __device__ __forceinline__ T *k_tile(void *smem, int stage) {
        return static_cast<T *>(smem) + q_elems + (size_t)stage * (kv_elems + v_elems);
    }
    static __device__ __forceinline__ T *v_tile(void *smem, int stage) {
        return static_cast<T *>(smem) + q_elems + (size_t)stage * (kv_elems + v_elems) + kv_elems;
    }
};

// ---- PTX (cuda/ptx.cuh holds every inline PTX statement) ---------------------------
using ::pa::ptx::cp_async;
using ::pa::ptx::cp_async16;
using ::pa::ptx::cp_async_commit;
using ::pa::ptx::cp_async_wait;
using ::pa::ptx::ex2;
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

// Byte permute (PRMT, cuda/ptx.cuh): byte i of the result is byte (s >> 4i) & 7
// of the pair (a = bytes 0..3, b = bytes 4..7); the selectors here leave bit 3
// of each nibble clear.
using ::pa::ptx::prmt;

// Rows u, v of 4 fp8 each (dims 4k..4k+3 of two keys) through prmt: the key
// pairs of dims 0 and 1 (PAIR_D01) or 2 and 3 (PAIR_D23), one dim per 16-bit
// half, the first key in the low byte.
constexpr uint32_t PAIR_D01 = 0x5140u, PAIR_D23 = 0x7362u;

// The power of two 2^e that brings values whose largest magnitude is mx into
// f16 with bf16's precision kept: mx * 2^-e lands in [2^14, 2^15) (f16 holds
// bf16's 8 significant bits and more). e >= -120, so 2^e stays a normal float
// in the scale it joins; 0 for a zero, NaN or infinite mx (those stay so).
__device__ __forceinline__ int f16_fit_exponent(float mx) {
    int e = 0;
    if (mx > 0.0f && mx <= 3.0e38f) {
        int ex;
        frexpf(mx, &ex); // mx in [2^(ex-1), 2^ex)
        e = max(ex - 15, -120);
    }
    return e;
}

// Two floats to two e4m3 bytes (lo the low byte), rounded to nearest and
// saturated to +-448 (cvt.rn.satfinite.e4m3x2.f32).
__device__ __forceinline__ uint32_t e4m3x2(float lo, float hi) {
    return (uint32_t)__nv_cvt_float2_to_fp8x2(make_float2(lo, hi), __NV_SATFINITE, __NV_E4M3);
}

// One register of two C::T -> two floats (low half first), exact.
template <int DT> __device__ __forceinline__ float2 unpack2(uint32_t w) {
    if constexpr (DT == 1) {
        __half2 h;
        memcpy(&h, &w, 4);
        return __half22float2(h);
    } else {
        __nv_bfloat162 h;
        memcpy(&h, &w, 4);
        return __bfloat1622float2(h);
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

// cp.async of a tile of ROWS rows x G 16-byte chunks of E into `tile` (rows
// STRIDE elements apart, chunk c at element c * 16 / sizeof(E)). Chunk c of
// row r comes from base + row_off + col_off elements, where
// row_fn(r, row_off) -> bool says whether row r exists and col_fn(c, col_off)
// -> int gives the bytes of chunk c to copy (0..16); the rest of the chunk,
// and every chunk of an absent row, is zero-filled by the copy itself
// (src-size). Sources are 16-byte aligned.
//
// Thread t copies chunk t % G of rows t / G + (THREADS / G) i: its column,
// column offset and byte count are fixed for the whole tile, so a chunk costs
// the row's offset, a 64-bit add and the copy. When G does not divide THREADS
// the last THREADS % G threads idle.
template <int THREADS, int ROWS, int G, int STRIDE, class E, class RowFn, class ColFn>
__device__ __forceinline__ void copy_tile_async(E *tile, const E *base, const RowFn &row_fn, const ColFn &col_fn) {
    constexpr int TPR = THREADS / G, PASSES = (ROWS + TPR - 1) / TPR, EPC = 16 / (int)sizeof(E);
    const int c = threadIdx.x % G, r0 = threadIdx.x / G;
    if (r0 >= TPR)
        return;
    int64_t co = 0;
    const int cb = col_fn(c, co);
    E *dst = tile + r0 * STRIDE + c * EPC;
#pragma unroll
    for (int i = 0; i < PASSES; i++) {
        const int r = r0 + i * TPR;
        if (ROWS % TPR != 0 && r >= ROWS)
            break;
        int64_t ro = 0;
        const bool ok = row_fn(r, ro) && cb > 0;
        cp_async(dst + i * TPR * STRIDE, base + (ok ? ro + co : 0), 16, ok ? cb : 0);
    }
}

// The K, V or Q tile [ROWS][C::kStride] of C::T: row_fn(r, off) -> bool says
// whether row r exists and gives its first element's offset from base; its
// 8-element chunk d0 sits col_fn(d0) elements further (d0 for contiguous
// rows; vLLM's key cache [blocks, heads, head/x, block, x] splits rows in
// 16-byte chunks x * block elements apart). Absent rows and columns past
// head_size are zero-filled.
template <class C, int ROWS, class RowFn, class ColFn>
__device__ __forceinline__ void load_rows_tile_async(typename C::T *tile, const typename C::T *base,
                                                     const RowFn &row_fn, const ColFn &col_fn, int head_size) {
    copy_tile_async<C::kThreads, ROWS, C::kGroups, C::kStride>(tile, base, row_fn, [&](int c, int64_t &off) {
        const bool in = c * 8 < head_size;
        off = in ? col_fn(c * 8) : 0;
        return in ? 16 : 0;
    });
}

// The same with row r at base + rowoff[r] elements (rowoff: shared memory;
// < 0: the row is absent).
template <class C, int ROWS, class ColFn>
__device__ __forceinline__ void load_tile_async(typename C::T *tile, const typename C::T *base, const int64_t *rowoff,
                                                const ColFn &col_fn, int head_size) {
    load_rows_tile_async<C, ROWS>(
        tile, base,
        [&](int r, int64_t &off) {
            off = rowoff[r];
            return off >= 0;
        },
        col_fn, head_size);
}

// Two fp8 elements (e4m3, or e5m2 with E5M2; the low 16 bits of `bits`, the
// first in the low byte) to two DT elements (the first in the low half),
// times `scale` when SCALE, else exact.
template <int DT, bool E5M2, bool SCALE> __device__ __forceinline__ uint32_t fp8x2_to(uint32_t bits, float scale) {
    const __half2_raw hr = __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)bits, E5M2 ? __NV_E5M2 : __NV_E4M3);
    if (DT == 1 && !SCALE)
        return (uint32_t)hr.x | ((uint32_t)hr.y << 16);
    float2 f = __half22float2(__half2(hr));
    if (SCALE) {
        f.x *= scale;
        f.y *= scale;
    }
    return pack2<DT>(f.x, f.y);
}

// Two fp8 elements (e4m3, or e5m2 with E5M2) of `bits` to their exact f16x2
// bits: bytes 0 and 1 (HI false) or 2 and 3 (HI), the first in the low half.
// e5m2 is an f16's high byte, so one byte permute places either pair over
// zero low bytes (no shift for the high pair); e4m3 takes the paired
// conversion, the high pair read in place from the register's upper half
// (pa::ptx::cvt_f16x2_e4m3x2_hi: no shift on sm_89+). prmt's C++ runs in
// interpret mode, so the permutes' selectors are checked there.
template <bool E5M2, bool HI> __device__ __forceinline__ uint32_t fp8x2_f16(uint32_t bits) {
    if constexpr (E5M2)
        return prmt(bits, 0u, HI ? 0x3424u : 0x1404u);
    else if constexpr (HI)
        return ::pa::ptx::cvt_f16x2_e4m3x2_hi(bits);
    else
        return fp8x2_to<1, false, false>(bits, 1.0f);
}

// fp8 (e4m3, or e5m2 with E5M2) bytes to C::T: ROWS x COLS elements from `raw`
// (dense rows of COLS bytes) to `dst` (rows DSTRIDE elements apart), times
// `scale` when SCALE (else exact: every fp8 value is a 16-bit float). One
// 8-byte shared load, four fp8x2 conversions and one 16-byte store per 8
// elements; consecutive threads take consecutive 8-element groups of a row.
template <class C, int ROWS, int COLS, int DSTRIDE, bool E5M2, bool SCALE, int BATCH = 0>
__device__ __forceinline__ void dequant_tile(typename C::T *dst, const uint8_t *raw, float scale) {
    constexpr int GR = COLS / 8, UNITS = ROWS * GR;
    static_assert(COLS % 16 == 0, "dequant_tile: rows of whole 16-byte chunks");
    auto unit = [&](int u) {
        const int r = u / GR, c = u % GR;
        const uint2 w = *reinterpret_cast<const uint2 *>(raw + r * COLS + c * 8);
        uint32_t out[4];
#pragma unroll
        for (int e = 0; e < 4; e++)
            out[e] = fp8x2_to<C::kDT, E5M2, SCALE>((e < 2 ? w.x : w.y) >> (16 * (e & 1)), scale);
        *reinterpret_cast<uint4 *>(dst + r * DSTRIDE + c * 8) = make_uint4(out[0], out[1], out[2], out[3]);
    };
    if constexpr (BATCH == 0) {
#pragma unroll
        for (int u0 = 0; u0 < UNITS; u0 += C::kThreads) {
            const int u = u0 + (int)threadIdx.x;
            if (UNITS % C::kThreads != 0 && u >= UNITS)
                break;
            unit(u);
        }
    } else {
        // BATCH units per thread at a time, in a rolled loop: for a kernel
        // whose live accumulators leave no room for the whole tile's words.
        static_assert(UNITS % (C::kThreads * BATCH) == 0, "dequant_tile: whole batches");
#pragma unroll 1
        for (int u0 = 0; u0 < UNITS; u0 += C::kThreads * BATCH) {
#pragma unroll
            for (int k = 0; k < BATCH; k++)
                unit(u0 + k * C::kThreads + (int)threadIdx.x);
        }
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
// Warp w owns tile rows [w WM, w WM + WM): m16 row block mt is rows
// w WM + 16 mt + [0, 16). Register row i of a thread (i < 2 kMT) is tile row
// w WM + 8 i + lane / 4: i = 2 mt holds c0/c1 of block mt's n8 fragments,
// i = 2 mt + 1 holds c2/c3.
__device__ __forceinline__ int warp_id() { return threadIdx.x >> 5; }
__device__ __forceinline__ int lane_id() { return threadIdx.x & 31; }
template <class C> __device__ __forceinline__ int warp_row(int i) {
    return warp_id() * C::WM + (lane_id() >> 2) + 8 * i;
}

template <int N> __device__ __forceinline__ void zero_acc(float (&a)[N][4]) {
#pragma unroll
    for (int j = 0; j < N; j++)
        a[j][0] = a[j][1] = a[j][2] = a[j][3] = 0.0f;
}

// S = Q_w K^T over the HP / 16 k16 steps (columns past the head size are zero
// in shared memory, so they add nothing). Only the last step can be empty (a
// head size is more than HP - 32): it alone is behind a branch, so the others
// form one straight block the scheduler can pipeline. Every K fragment serves
// the warp's kMT row blocks.
template <class C>
__device__ __forceinline__ void qk(float (&s)[C::kSA][4], const typename C::T *q_tile, const typename C::T *k_tile,
                                   int head_size) {
    const int lane = lane_id();
    zero_acc(s);
    const typename C::T *qa = q_tile + (warp_id() * C::WM + (lane & 15)) * C::kStride + (lane >> 4) * 8;
    // K as the col-major B operand: matrices (n8 j, k lo), (j, k hi), (j+1, lo), (j+1, hi)
    const typename C::T *kb = k_tile + ((lane >> 4) * 8 + (lane & 7)) * C::kStride + ((lane >> 3) & 1) * 8;
    constexpr int KK = C::HP / 16;
#pragma unroll
    for (int kk = 0; kk < KK; kk++) {
        if (kk == KK - 1 && kk * 16 >= head_size)
            break;
        uint32_t a[C::kMT][4];
#pragma unroll
        for (int mt = 0; mt < C::kMT; mt++)
            ldmatrix_x4(a[mt], qa + mt * 16 * C::kStride + kk * 16);
#pragma unroll
        for (int j = 0; j < C::kNS; j += 2) {
            uint32_t b[4];
            ldmatrix_x4(b, kb + j * 8 * C::kStride + kk * 16);
#pragma unroll
            for (int mt = 0; mt < C::kMT; mt++) {
                mma16816<C::kDT>(s[mt * C::kNS + j], a[mt], b[0], b[1]);
                mma16816<C::kDT>(s[mt * C::kNS + j + 1], a[mt], b[2], b[3]);
            }
        }
    }
}

// The masking hook: x = fn(tile row, tile col, x) for every score of the warp.
// for_each_score_reg passes the thread's register row i (tile row
// warp_row<C>(i)) in place of the tile row: a compile-time index once
// unrolled, so per-row values the caller keeps in registers (a row's query
// position) need no table.
// for_each_score_off passes the column's compile-time part alone: col =
// score_col0() + off. A caller that compares columns with per-row bounds
// subtracts score_col0() from the bounds once and compares off, an immediate
// operand, so the columns take no registers (the persistent ragged kernel kept
// 16 of them live across its items, and spilled at sm_100 and sm_120).
__device__ __forceinline__ int score_col0() { return (lane_id() & 3) * 2; }
template <class C, class Fn> __device__ __forceinline__ void for_each_score_off(float (&s)[C::kSA][4], const Fn &fn) {
#pragma unroll
    for (int mt = 0; mt < C::kMT; mt++) {
#pragma unroll
        for (int j = 0; j < C::kNS; j++) {
            float(&x)[4] = s[mt * C::kNS + j];
            x[0] = fn(2 * mt, j * 8, x[0]);
            x[1] = fn(2 * mt, j * 8 + 1, x[1]);
            x[2] = fn(2 * mt + 1, j * 8, x[2]);
            x[3] = fn(2 * mt + 1, j * 8 + 1, x[3]);
        }
    }
}
template <class C, class Fn> __device__ __forceinline__ void for_each_score_reg(float (&s)[C::kSA][4], const Fn &fn) {
    const int c0 = score_col0();
    for_each_score_off<C>(s, [&](int i, int off, float x) { return fn(i, c0 + off, x); });
}
template <class C, class Fn> __device__ __forceinline__ void for_each_score(float (&s)[C::kSA][4], const Fn &fn) {
    const int r0 = warp_id() * C::WM + (lane_id() >> 2);
    for_each_score_reg<C>(s, [&](int i, int col, float x) { return fn(r0 + 8 * i, col, x); });
}

// O += P V_tile; P (Softmax::update's pk: the probabilities of s rounded to
// C::T in pairs) is the A operand. V is the B operand: a V tile [BN][kStride]
// (key rows) through ldmatrix.trans, or with VT a V^T tile [HP][kVtStride]
// (vLLM's value cache is V transposed: d rows of keys), which is the
// column-major B operand as it stands, through plain ldmatrix as qk reads K.
// As in qk, only the last n16 column pair can be past the head size; every V
// fragment serves the warp's kMT row blocks.
template <class C, bool VT = false>
__device__ __forceinline__ void pv(float (&o)[C::kOA][4], const uint32_t (&pk)[C::kSA][2], const typename C::T *v_tile,
                                   int head_size) {
    const int lane = lane_id();
    // ldmatrix.trans on key rows: matrices (k lo, n8 j), (k hi, j), (k lo, j+1), (k hi, j+1);
    // ldmatrix on d rows: (n8 j, k lo), (j, k hi), (j+1, lo), (j+1, hi), as K in qk.
    const typename C::T *vb = VT ? v_tile + ((lane >> 4) * 8 + (lane & 7)) * C::kVtStride + ((lane >> 3) & 1) * 8
                                 : v_tile + ((lane & 7) + ((lane >> 3) & 1) * 8) * C::kStride + (lane >> 4) * 8;
#pragma unroll
    for (int kk = 0; kk < C::BN / 16; kk++) {
        uint32_t a[C::kMT][4];
#pragma unroll
        for (int mt = 0; mt < C::kMT; mt++) {
            a[mt][0] = pk[mt * C::kNS + 2 * kk][0];
            a[mt][1] = pk[mt * C::kNS + 2 * kk][1];
            a[mt][2] = pk[mt * C::kNS + 2 * kk + 1][0];
            a[mt][3] = pk[mt * C::kNS + 2 * kk + 1][1];
        }
#pragma unroll
        for (int j = 0; j < C::kNO; j += 2) {
            if (j == C::kNO - 2 && j * 8 >= head_size)
                break;
            uint32_t b[4];
            if (VT)
                ldmatrix_x4(b, vb + j * 8 * C::kVtStride + kk * 16);
            else
                ldmatrix_x4_trans(b, vb + kk * 16 * C::kStride + j * 8);
#pragma unroll
            for (int mt = 0; mt < C::kMT; mt++) {
                mma16816<C::kDT>(o[mt * C::kNO + j], a[mt], b[0], b[1]);
                mma16816<C::kDT>(o[mt * C::kNO + j + 1], a[mt], b[2], b[3]);
            }
        }
    }
}

// Online softmax for the thread's 2 MT register rows (i = 2 mt + h: row
// g + 8 h of the warp's m16 block mt). The running max is kept in log2 units
// (the scale times log2(e) folded into the exponent's FFMA).
template <int MT> struct SoftmaxN {
    float m[2 * MT]; // reference of x * mul (log2 units), at most kLazy below its running max; -inf until a key
    float l[2 * MT]; // running sum of exp2(x * mul - m)

    // Lazy rescaling (FlashAttention-4's, on Blackwell): a row's reference m
    // moves only when a tile's max passes it by more than kLazy (log2 units),
    // so late in a context almost no tile moves it, and O's rescale (a
    // multiply per accumulator, 10-15% of a prefill tile's instructions) is
    // skipped. Until then P = exp2(x mul - m) is at most 2^kLazy = 256: the
    // same relative rounding in f16/bf16 (far below f16's 65504) and f32 sums;
    // O / l, the sinks' exp2(sink - m) and lse() take the same m, so the
    // results are those of the exact max up to that rounding. LAZY false
    // (the FP8 path, whose P is lifted to e4m3's top and must not grow) keeps
    // m the exact running max.
    static constexpr float kLazy = 8.0f;

    __device__ __forceinline__ void init() {
#pragma unroll
        for (int i = 0; i < 2 * MT; i++) {
            m[i] = -INFINITY;
            l[i] = 0.0f;
        }
    }

    // s: logits x (masked: -inf) in; p = exp2(x mul - m_new) out in pk, rounded
    // to C::T in pairs (pk[j][h] = p of row h, columns 2c and 2c + 1: the A
    // fragment of pv), as each row's sum is taken, so the f32 scores die early.
    // mul > 0 is the factor from x to log2 units: log2(e) for natural-log
    // logits, or scale * log2(e) for raw dot products that the scale was never
    // applied to. o is rescaled by exp2(m_old - m_new). Rows whose keys are all
    // masked so far keep m = -inf and contribute p = 0 (the -inf - -inf NaN
    // never forms).
    template <class C>
    __device__ __forceinline__ void update(const float (&s)[C::kSA][4], float (&o)[C::kOA][4], float mul,
                                           uint32_t (&pk)[C::kSA][2]) {
        static_assert(C::kMT == MT, "Softmax rows match the tile's");
        float corr[2 * MT];
        bool moved = false;
#pragma unroll
        for (int i = 0; i < 2 * MT; i++) {
            const int mt = i >> 1, h = i & 1;
            float ref;
            corr[i] = new_max<C>(s, i, mul, ref);
            moved |= corr[i] != 1.0f;
            float sum = 0.0f;
#pragma unroll
            for (int j = 0; j < C::kNS; j++) {
                const float(&x)[4] = s[mt * C::kNS + j];
                const float p0 = ex2(fmaf(x[2 * h], mul, -ref)), p1 = ex2(fmaf(x[2 * h + 1], mul, -ref));
                sum += p0 + p1;
                pk[mt * C::kNS + j][h] = pack2<C::kDT>(p0, p1);
            }
            l[i] = l[i] * corr[i] + sum; // partial: the quad's sum is taken in finalize
        }
        // Rows whose reference stayed have corr exactly 1: a thread none of
        // whose rows moved skips O's rescale, and a warp none of whose threads
        // did branches past the multiplies.
        if (moved)
            rescale<C>(o, corr);
    }
    // Register row i's new reference from the logits s (times mul): m[i]
    // moves to the tile's max where that passes it (LAZY: by more than kLazy);
    // ref is what the exponents subtract (0 while the row has seen no key);
    // returns the factor for the old sums, exp2(m_old - ref): exactly 1 where
    // m stayed (a row that has seen no key too: its sums are zeros), 0 where
    // it left -inf.
    template <class C, bool LAZY = true>
    __device__ __forceinline__ float new_max(const float (&s)[C::kSA][4], int i, float mul, float &ref) {
        const int mt = i >> 1, h = i & 1;
        float mx = -INFINITY;
#pragma unroll
        for (int j = 0; j < C::kNS; j++)
            mx = fmaxf(mx, fmaxf(s[mt * C::kNS + j][2 * h], s[mt * C::kNS + j][2 * h + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float cand = mx * mul, mold = m[i];
        // -inf + kLazy is -inf: a row's first key always moves it; a NaN never does.
        const float mnew = cand > (LAZY ? mold + kLazy : mold) ? cand : mold;
        ref = mnew == -INFINITY ? 0.0f : mnew;
        const float corr = ex2(mold - ref); // m_old = -inf -> 0
        m[i] = mnew;
        return corr;
    }

    // update() in two halves, for a kernel whose P V of the previous tile is
    // still running when this tile's scores arrive (the Hopper kernel's wgmma
    // overlap): exponents() turns s into the probabilities in place and takes
    // the sums, leaving o alone and each row's factor in corr; after the
    // previous P V completes, rescale(o, corr) and pack(s, pk) finish. The same
    // values as update().
    template <class C>
    __device__ __forceinline__ void exponents(float (&s)[C::kSA][4], float mul, float (&corr)[2 * MT]) {
        float rows[2 * MT];
#pragma unroll
        for (int i = 0; i < 2 * MT; i++)
            rows[i] = mul;
        exponents_rows<C>(s, rows, 0.0f, corr);
    }
    // exponents() with each register row's own factor mul[i], and the
    // probabilities raised by 2^lift: p = exp2(x mul[i] - m + lift). The sums
    // carry the same factor, so O / l does not change; the FP8 path lifts by
    // 8 so that P (at most 256) keeps e4m3's normal range down to 2^-14 of the
    // row's largest (FlashAttention-3's max offset). lift 0 costs nothing.
    // SUM false: the sums are taken elsewhere (the FP8 path's P V computes
    // them on the tensor cores); l stays as it is.
    template <class C, bool SUM = true, bool LAZY = true>
    __device__ __forceinline__ void exponents_rows(float (&s)[C::kSA][4], const float (&mul)[2 * MT], float lift,
                                                   float (&corr)[2 * MT]) {
        static_assert(C::kMT == MT, "Softmax rows match the tile's");
#pragma unroll
        for (int i = 0; i < 2 * MT; i++) {
            const int mt = i >> 1, h = i & 1;
            float ref;
            corr[i] = new_max<C, LAZY>(s, i, mul[i], ref);
            const float base = ref - lift;
            float sum = 0.0f;
#pragma unroll
            for (int j = 0; j < C::kNS; j++) {
                float(&x)[4] = s[mt * C::kNS + j];
                x[2 * h] = ex2(fmaf(x[2 * h], mul[i], -base));
                x[2 * h + 1] = ex2(fmaf(x[2 * h + 1], mul[i], -base));
                if constexpr (SUM)
                    sum += x[2 * h] + x[2 * h + 1];
            }
            if constexpr (SUM)
                l[i] = l[i] * corr[i] + sum;
        }
    }
    template <class C>
    __device__ __forceinline__ static void rescale(float (&o)[C::kOA][4], const float (&corr)[2 * MT]) {
#pragma unroll
        for (int i = 0; i < 2 * MT; i++) {
            const int mt = i >> 1, h = i & 1;
#pragma unroll
            for (int j = 0; j < C::kNO; j++) {
                o[mt * C::kNO + j][2 * h] *= corr[i];
                o[mt * C::kNO + j][2 * h + 1] *= corr[i];
            }
        }
    }
    template <class C>
    __device__ __forceinline__ static void pack(const float (&s)[C::kSA][4], uint32_t (&pk)[C::kSA][2]) {
#pragma unroll
        for (int j = 0; j < C::kSA; j++) {
            pk[j][0] = pack2<C::kDT>(s[j][0], s[j][1]);
            pk[j][1] = pack2<C::kDT>(s[j][2], s[j][3]);
        }
    }

    // Natural-log logits.
    template <class C>
    __device__ __forceinline__ void update(const float (&s)[C::kSA][4], float (&o)[C::kOA][4],
                                           uint32_t (&pk)[C::kSA][2]) {
        update<C>(s, o, kLog2e, pk);
    }

    // Sums l over the quad and divides o by it (0 where no key was seen).
    template <class C> __device__ __forceinline__ void finalize(float (&o)[C::kOA][4]) {
        const float none[2 * MT] = {};
        finalize<C>(o, false, none);
    }
    // finalize() with attention sinks (when `sinks`): row i's sink, sink2[i]
    // in log2 units (-inf: none), joins the sum as one more term of no value,
    // exp2(sink2 - m), where the row saw a key.
    template <class C>
    __device__ __forceinline__ void finalize(float (&o)[C::kOA][4], bool sinks, const float (&sink2)[2 * MT]) {
#pragma unroll
        for (int i = 0; i < 2 * MT; i++) {
            const int mt = i >> 1, h = i & 1;
            l[i] += __shfl_xor_sync(0xffffffffu, l[i], 1);
            l[i] += __shfl_xor_sync(0xffffffffu, l[i], 2);
            if (sinks && l[i] > 0.0f)
                l[i] += ex2(sink2[i] - m[i]);
            // MUFU.RCP (1 ulp), as FlashInfer's rcp.approx: an IEEE division
            // calls a slow path, and the call's ABI makes a kernel at its
            // register limit spill the accumulators live across it.
            const float inv = l[i] > 0.0f ? __fdividef(1.0f, l[i]) : 0.0f;
#pragma unroll
            for (int j = 0; j < C::kNO; j++) {
                o[mt * C::kNO + j][2 * h] *= inv;
                o[mt * C::kNO + j][2 * h + 1] *= inv;
            }
        }
    }

    // For a kernel whose accumulators leave no registers to hold the sums
    // between tiles (prefill at 32 rows per warp): it parks them in a
    // shared-memory slot of its own per thread after each update and brings
    // them back before the next update or finalize (one 16-byte store and load
    // per tile at kMT = 2).
    __device__ __forceinline__ void park_sums(float (&slot)[2 * MT]) const {
#pragma unroll
        for (int i = 0; i < 2 * MT; i++)
            slot[i] = l[i];
    }
    __device__ __forceinline__ void unpark_sums(const float (&slot)[2 * MT]) {
#pragma unroll
        for (int i = 0; i < 2 * MT; i++)
            l[i] = slot[i];
    }

    // park_sums and unpark_sums for the running maxima too (a kernel with
    // still fewer registers to spare: ragged's prefill items).
    __device__ __forceinline__ void park(float (&slot)[4 * MT]) const {
#pragma unroll
        for (int i = 0; i < 2 * MT; i++) {
            slot[i] = l[i];
            slot[2 * MT + i] = m[i];
        }
    }
    __device__ __forceinline__ void unpark(const float (&slot)[4 * MT]) {
#pragma unroll
        for (int i = 0; i < 2 * MT; i++) {
            l[i] = slot[i];
            m[i] = slot[2 * MT + i];
        }
    }

    // Natural-log sum-exp of register row i; valid after finalize (-inf: no key seen).
    __device__ __forceinline__ float lse(int i) const {
        return l[i] > 0.0f ? m[i] * 0.6931471805599453f + logf(l[i]) : -INFINITY;
    }
};
using Softmax = SoftmaxN<1>;

// One thread's parked softmax sums in shared memory (park_sums; 16-byte
// aligned: one vector load and store per tile).
template <int N> struct __align__(16) SumSlot { float v[N]; };

// Writes the warp's WM output rows: registers -> `stage` (the warp's own rows)
// -> 16-byte stores to row_fn(r) (nullptr: skipped). head_size columns.
template <class C, class RowFn>
__device__ __forceinline__ void store_rows(const float (&o)[C::kOA][4], typename C::T *stage, const RowFn &row_fn,
                                           int head_size) {
    using T = typename C::T;
    const int lane = lane_id(), w = warp_id();
#pragma unroll
    for (int mt = 0; mt < C::kMT; mt++) {
        T *base = stage + (w * C::WM + mt * 16 + (lane >> 2)) * C::kStride + (lane & 3) * 2;
#pragma unroll
        for (int j = 0; j < C::kNO; j++) {
            const float(&x)[4] = o[mt * C::kNO + j];
            *reinterpret_cast<uint32_t *>(base + j * 8) = pack2<C::kDT>(x[0], x[1]);
            *reinterpret_cast<uint32_t *>(base + 8 * C::kStride + j * 8) = pack2<C::kDT>(x[2], x[3]);
        }
    }
    __syncwarp();
    const int groups = head_size / 8;
    for (int u = lane; u < C::WM * groups; u += 32) {
        const int r = w * C::WM + u / groups, c = u % groups;
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
