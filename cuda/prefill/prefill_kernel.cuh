// Prefill attention on tensor cores (f16 / bf16): context attention over the
// paged cache plus the new tokens, and varlen prompt attention, as one kernel.
// The CPU reference (csrc/reference/prefill.c) is the specification.
//
// One CTA = one Q tile of BM rows (128 up to head 128, else 64; TileCfg) of
// one (sequence, KV head). Rows pack
// the GQA group: tile row r is query token (m0 + r) / group of query head
// kv_head * group + (m0 + r) % group, so every K/V tile loaded serves the whole
// group (short queries, down to a single token, still fill the tile). The CTA
// walks the keys it can see (causal and window bounds clip the range) in
// BN-key tiles: first the cached context [0, n_cache) through the block table,
// then the packed new keys [n_cache, k_len); the online softmax runs across
// both. Tiles are double buffered with cp.async, every cache layout included
// (issue 14 item 3): vLLM's value cache, V transposed, is copied as V^T tiles
// ([d][key]) and read with plain ldmatrix as the column-major B operand; fp8
// caches are copied raw into staging buffers and dequantised in shared memory
// after the barrier (the key scale joins the score scale). Sources cp.async
// cannot copy (unaligned rows, block sizes that split a 16-byte chunk of
// vLLM's values) go through registers (load, dequantise, st.shared) on the
// same schedule.
//
// Per tile the row addresses (a block-table lookup for the cache) are computed
// once, by one thread per row, into shared memory; every 16-byte chunk then
// costs an add. Templates: the padded head class and the query dtype only;
// head size, layout, cache dtype (same as the query or fp8 e4m3/e5m2), block
// size, masks and ALiBi are runtime values.
#pragma once

#include <cuda_runtime.h>

#include <type_traits>

#include "../device_cc.cuh"
#include "prefill_internal.h"
#include "../attn_tile.cuh"

namespace pa_prefill {

// Tile shapes (issue 14 item 2, FlashAttention-2's for sm_80/sm_90 mma.sync):
// up to head 128 a CTA of 4 warps takes 128 query rows, 32 per warp, so every
// K and V fragment read from shared memory feeds two m16 row blocks, against
// 64-key tiles; above head 128 the O accumulator of 32 rows would not fit in
// registers, and the CTA takes 64 rows (16 per warp) against 32-key tiles.
//
// Compact tiles, for GPUs whose CTAs hold 99 KiB of shared memory (compute
// capability 8.6, 8.9 and 12.x: A10, L4, L40S, RTX 30/40/50): the tiles above
// take 106496 bytes at head 128 and 108544 at head 256 (one Q tile and two
// stages of K and V, the V slot sized for a V^T tile), so there the CTA keeps
// its rows and takes key tiles of half the width: 32 keys at head 128
// (72704 bytes; FlashAttention-2's tile for head 128 on sm_86/89 is 128 x 32
// too, there without the second stage) and 16 at head 256 (75264 bytes).
// Same grid, same warps, the same code over narrower tiles; half the keys per
// barrier. The launcher takes them only where the full tiles do not fit
// (launch_mma). Heads 160..224 fit 99 KiB as they are (95232 bytes at 224).
template <int HP> constexpr bool has_compact() { return HP == 128 || HP == 256; }
template <int HP> constexpr int block_m() { return HP <= 128 ? 128 : 64; }
template <int HP> constexpr int warp_m() { return HP <= 128 ? 32 : 16; }
template <int HP, bool COMPACT = false> constexpr int block_n() { return (HP <= 128 ? 64 : 32) / (COMPACT ? 2 : 1); }
// fp8 tiles are dequantised (dequant_tile) with every 16-byte group of a
// thread's share in flight at once (BATCH 0), except at heads 96 and 128 on
// sm_8x: with O and S of 32 rows live, ptxas (nvcc 13.0) spills the unrolled
// form there at 255 registers (124 bytes at head 128 on sm_80, 4 at head 96 on
// sm_89), and 4 (head 128) or 2 (head 96) groups at a time in a rolled loop
// fit without spilling (scripts/check-sm8x.sh). The sm_90 code keeps BATCH 0
// (no spill; the form the H100 measured, SASS unchanged). Interpret mode runs
// the sm_8x form, so the rolled loop is checked against the reference at
// heads 96 and 128 (prefill_gpu/head_sizes), BATCH 0 at the others.
template <int HP> constexpr int dequant_batch() {
#if defined(PA_INTERPRET) || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900)
    return HP == 128 ? 4 : HP == 96 ? 2 : 0;
#else
    return 0;
#endif
}
// The V slots also hold V^T tiles (vLLM's value layout).
template <int HP, int DT, bool COMPACT = false>
using TileCfg = pa::tile::Cfg<HP, block_m<HP>(), block_n<HP, COMPACT>(), DT, warp_m<HP>(), true>;

// Where the elements of one K/V/Q tile come from. Element (r, d) of the tile
// is at base + rowoff[r] + (d >> xsh) * xs + (d & (2^xsh - 1)) * ds (in
// elements of the source); rowoff[r] < 0: the row is absent (zeros).
//   packed rows, flash NHD/HND:  xsh = 30, ds = 1              (row contiguous)
//   vLLM key:                    xsh = log2(x), xs = block * x  (16-byte chunks)
//   vLLM value:                  xsh = 30, ds = block           (transposed)
struct Src {
    const void *base;
    const int64_t *rowoff; // shared memory
    int kind;              // the source dtype: 1 f16, 2 bf16 (== the compute dtype) or 3/4 fp8
    int xsh;
    int64_t xs, ds;
    float scale; // fp8 only

    // Element d of a row, past the row's start.
    __device__ __forceinline__ int64_t col(int d) const {
        return (int64_t)(d >> xsh) * xs + (int64_t)(d & ((1 << xsh) - 1)) * ds;
    }
    __device__ __forceinline__ int64_t off(int r, int d) const { return rowoff[r] + col(d); }
    __device__ __forceinline__ bool valid(int r) const { return rowoff[r] >= 0; }

    // Elements d0..d0+7 of row r as floats (the register path).
    template <int DT> __device__ __forceinline__ void load8(int r, int d0, float (&v)[8]) const {
        using T = typename pa::elt<DT>::type;
        const int64_t o = off(r, d0);
        if (kind == DT) {
            const T *p = static_cast<const T *>(base) + o;
#pragma unroll
            for (int e = 0; e < 8; e++)
                v[e] = pa::to_float<DT>(p[e * ds]);
            return;
        }
        const uint8_t *p = static_cast<const uint8_t *>(base) + o;
        const __nv_fp8_interpretation_t interp = kind == 3 ? __NV_E4M3 : __NV_E5M2;
        if (ds == 1 && (reinterpret_cast<uintptr_t>(p) & 7) == 0) {
            const uint2 raw = *reinterpret_cast<const uint2 *>(p);
            const uint32_t w[2] = {raw.x, raw.y};
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const __half2_raw h =
                    __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)(w[e >> 1] >> (16 * (e & 1))), interp);
                const float2 f = __half22float2(__half2(h));
                v[2 * e] = f.x * scale;
                v[2 * e + 1] = f.y * scale;
            }
        } else {
#pragma unroll
            for (int e = 0; e < 8; e++)
                v[e] = __half2float(__half(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)p[e * ds], interp))) * scale;
        }
    }
};

template <int DT> struct Gather {
    Src s;
    __device__ __forceinline__ bool valid(int r) const { return s.valid(r); }
    __device__ __forceinline__ void load8(int r, int d0, float (&v)[8]) const { s.load8<DT>(r, d0, v); }
};

// One tile: cp.async when the source is the compute dtype with aligned 16-byte
// chunks (fast), else through registers; token-major sources (vLLM value)
// give consecutive threads consecutive rows so the loads coalesce.
template <class C, int ROWS>
__device__ __forceinline__ void load_tile(typename C::T *tile, const Src &s, bool fast, int head_size) {
    using T = typename C::T;
    if (fast) {
        pa::tile::load_tile_async<C, ROWS>(
            tile, static_cast<const T *>(s.base), s.rowoff, [&](int d0) { return s.col(d0); }, head_size);
    } else if (s.ds == 1) {
        pa::tile::load_rows_gather<C, ROWS, false>(tile, Gather<C::kDT>{s}, head_size);
    } else {
        pa::tile::load_rows_gather<C, ROWS, true>(tile, Gather<C::kDT>{s}, head_size);
    }
}

// Rows [0, n_rows) of a tile of 16-bit rows by cp.async, from sources laid
// out in runs: within each aligned group of S tile rows, row i of the group is
// i * step elements past the group's row 0 (packed new keys: the whole tile is
// one run, S = ROWS; a cache tile: S consecutive slots of one block). The
// others, and columns past head_size, are zero-filled. Thread t copies chunk
// c = t % G (at col_off(c * 8) elements into its row) of the rows of lane
// r0 = t / G: lanes come in teams of P, team g owns groups g, g + NT, ...
// (NT teams), and lane q of a team copies rows q, q + P, ... of each. A lane
// reads one row offset per group (row_off(row), of its first row there) and
// then steps a 64-bit address by P * step; where copy_tile_async formed every
// row's address again (a shared-memory row-offset load, a test and an add
// each). An absent row or column copies nothing (the ignore-src form) from
// `base`, so no address past the rows is formed for it.
//
// P is the number of lanes a warp spans (a power of two, 32 / G rounded
// down), so one copy instruction of a warp covers P consecutive rows, as
// copy_tile_async's lane order did: vLLM's key cache keeps chunk c of P
// adjacent slots in one 32-byte sector.
template <class C, int ROWS, int S, int P, class RowOff, class ColOff>
__device__ __forceinline__ void copy_rows_runs(typename C::T *tile, const typename C::T *base, const RowOff &row_off,
                                               int64_t step, const ColOff &col_off, int n_rows, int head_size) {
    using T = typename C::T;
    constexpr int G = C::kGroups, TPR = C::kThreads / G, NT = TPR / P, L = (S + P - 1) / P;
    constexpr int ROUNDS = (ROWS + NT * S - 1) / (NT * S);
    static_assert(NT >= 1 && ROWS % S == 0, "copy_rows_runs: whole teams, whole groups");
    const int c = threadIdx.x % G, r0 = threadIdx.x / G;
    if (r0 >= NT * P) // (lanes past whole teams and rows of G: head 96's 12 groups leave 8 of 128 idle)
        return;
    // The lane's row in its team's first group (one team: the lane's row).
    const int q = NT == 1 ? r0 : r0 % P, first = NT == 1 ? r0 : (r0 / P) * S + q;
    const bool in = c * 8 < head_size;
    const int64_t co = col_off(c * 8), pstep = (int64_t)P * step;
    T *dst = tile + first * C::kStride + c * 8;
#pragma unroll
    for (int k = 0; k < ROUNDS; k++) {
        const int row = first + k * NT * S;
        if (ROWS % (NT * S) != 0 && row - q >= ROWS)
            break;
        const int left = n_rows - row; // copy j of the group copies while P * j < left
        const T *src = base + row_off(row) + co;
#pragma unroll
        for (int j = 0; j < L; j++) {
            if (S % P != 0 && q + P * j >= S)
                break;
            const bool ok = in && P * j < left;
            pa::ptx::cp_async16_or_zero(dst + (k * NT * S + P * j) * C::kStride, ok ? src : base, ok);
            src += pstep;
        }
    }
}

// Packed 16-bit rows `stride` elements apart from `base` (16-byte aligned):
// the tile is one run.
template <class C, int ROWS>
__device__ __forceinline__ void load_rows_strided(typename C::T *tile, const typename C::T *base, int64_t stride,
                                                  int n_rows, int head_size) {
    constexpr int TPR = C::kThreads / C::kGroups;
    copy_rows_runs<C, ROWS, ROWS, TPR>(
        tile, base, [&](int r) { return (int64_t)r * stride; }, stride, [](int d0) { return (int64_t)d0; }, n_rows,
        head_size);
}

// The lanes a warp spans (copy_rows_runs's P): 32 / G rounded down to a power
// of two, at least 1.
template <class C> constexpr int warp_lanes() {
    int p = 1;
    while (2 * p * C::kGroups <= 32)
        p *= 2;
    return p;
}
// Cache tiles in runs of kCacheRun slots: the tile's first key is a multiple
// of 16 (the walk's k_begin) and BN of 16 (compact tiles) or more, so with a block size that is a
// multiple of kCacheRun every aligned group of kCacheRun tile rows is
// consecutive slots of one block, `step` apart: the layout's token stride
// (p.kl: vLLM key x, flash and combined the page stride). Other block sizes
// read every row's offset.
constexpr int kCacheRun = 8;
template <class C, int ROWS>
__device__ __forceinline__ void load_cache_runs(typename C::T *tile, const Src &s, int64_t step, int n_rows,
                                                int head_size) {
    copy_rows_runs<C, ROWS, kCacheRun, warp_lanes<C>()>(
        tile, static_cast<const typename C::T *>(s.base), [&](int r) { return s.rowoff[r]; }, step,
        [&](int d0) { return s.col(d0); }, n_rows, head_size);
}

// The raw fp8 bytes of a cache K or V tile of key rows (PA_PREFILL_*_RAW):
// [ROWS][HP] bytes, 16-byte chunks (16 elements; a head size that is not a
// multiple of 16 copies half of its last chunk), dequantised after the barrier.
template <class C, int ROWS> __device__ __forceinline__ void load_raw(uint8_t *raw, const Src &s, int head_size) {
    pa::tile::copy_tile_async<C::kThreads, ROWS, C::HP / 16, C::HP>(
        raw, static_cast<const uint8_t *>(s.base),
        [&](int r, int64_t &off) {
            off = s.rowoff[r];
            return off >= 0;
        },
        [&](int c, int64_t &off) {
            const int n = min(16, head_size - 16 * c);
            off = n > 0 ? s.col(16 * c) : 0;
            return n > 0 ? n : 0;
        });
}

// A V^T tile of vLLM's value cache [blocks, heads, head, block]: rows d, the
// tile's keys along them, E the cache element (C::T, or uint8_t for the raw
// fp8 bytes). The tile's first key is a multiple of 16 and the block size a
// multiple of the keys per chunk (PA_PREFILL_V_*_VT), so each 16-byte chunk is
// keys of one block, at the chunk's first key's offset (rowoff, key rows) plus
// d * block. Keys past the tile's n_keys and rows past head_size are
// zero-filled by the copy.
template <class C, class E, int STRIDE>
__device__ __forceinline__ void load_vt(E *tile, const Src &s, int n_keys, int head_size) {
    constexpr int EPC = 16 / (int)sizeof(E);
    const int64_t ds = s.ds;
    pa::tile::copy_tile_async<C::kThreads, C::HP, C::BN / EPC, STRIDE>(
        tile, static_cast<const E *>(s.base),
        [&](int d, int64_t &off) {
            off = d * ds;
            return d < head_size;
        },
        [&](int c, int64_t &off) {
            const int n = min(EPC, n_keys - c * EPC);
            off = n > 0 ? s.rowoff[c * EPC] : 0;
            return n > 0 ? n * (int)sizeof(E) : 0;
        });
}

// The sequence a CTA works on, read from device memory and bounds-checked.
struct Seq {
    int q0, q_len, k_len, n_cache;
    int64_t k_row0; // packed row of key n_cache
};

// The CTA's walk over its key tiles (shared memory: see prefill_mma_kernel).
struct Walk {
    int64_t k_row0;                      // packed row of key n_cache
    int n_cache, nt_c, k_begin, p_begin; // cache tiles [0, nt_c) from k_begin, new-key tiles from p_begin
    int c_end, k_end;                    // segment ends
    int far, qpos_hi; // the last key every row sees on its far side (far_key); the CTA's last query position
    int n_tiles;
    int raw, vt;   // cache tiles: fp8 staging, V^T tiles (prefill_internal.h PA_PREFILL_*)
    int par;       // new-key tile t goes to stage (t + par) & 1
    float inv_cap; // 1 / soft cap (0: none), one multiply per score instead of a division
    float c_scale; // the score scale of cache tiles (times k_scale for fp8 keys)
};

// Where the lse (prefill.h) of (query head h, token t) lives: the caller's
// strides (pa_prefill_kparams' lse_hs, lse_ts).
__device__ __forceinline__ float *lse_at(const pa_prefill_kparams &p, int64_t h, int64_t t) {
    return p.lse + h * p.lse_hs + t * p.lse_ts;
}

// The lse (prefill.h) of a row of query head h: v, its natural-log sum, where
// the row's sum l (the sink's term included) is positive and finite. No key
// (l = 0) leaves the sink, or -inf. l is +inf only where the sink's term
// overflowed (a key's is at most 2^8: the lazy reference, the FP8 path's
// lift), so the keys' share of e^lse is below 2^-80 (2^31 keys) and the lse
// is the sink to the float, as for a +inf sink.
__device__ __forceinline__ float row_lse(const pa_prefill_kparams &p, int64_t h, float l, float v) {
    return l > 0.0f && l != INFINITY ? v : p.sinks ? p.sinks[h] : -INFINITY;
}

// False when the device data break the host bounds: the CTA writes nothing.
__device__ __forceinline__ bool load_seq(const pa_prefill_kparams &p, int s, Seq &q) {
    const int q0 = p.cu_q[s], q1 = p.cu_q[s + 1];
    if (q0 < 0 || q1 < q0 || q1 > p.num_q_tokens || q1 - q0 > p.max_q_len)
        return false;
    q.q0 = q0;
    q.q_len = q1 - q0;
    if (p.mode == PA_PREFILL_MODE_CONTEXT) {
        // The queries' own keys close the sequence (none with cache_only:
        // own_mask 0, every key cached, any number of queries).
        const int L = p.seq_lens[s], own = q.q_len & p.own_mask;
        if (L < own || L > p.max_k_len)
            return false;
        q.k_len = L;
        q.n_cache = L - own;
        q.k_row0 = q0;
    } else {
        const int k0 = p.cu_k[s], k1 = p.cu_k[s + 1];
        if (k0 < 0 || k1 < k0 || k1 > p.num_k_tokens || k1 - k0 > p.max_k_len)
            return false;
        q.k_len = k1 - k0;
        q.n_cache = 0;
        q.k_row0 = k0;
    }
    return true;
}

// The end of the keys rows at positions up to qpos_hi see (prefill.h): the
// causal mask's, else a window's far side (W - 1 keys after a row's own), else
// the sequence's. int64: a window may be as large as INT32_MAX.
__device__ __forceinline__ int span_end(const pa_prefill_kparams &p, int k_len, int qpos_hi) {
    if (p.causal)
        return min(k_len, qpos_hi + 1);
    return p.window > 0 ? (int)min((int64_t)k_len, (int64_t)qpos_hi + p.window) : k_len;
}

// The last key position every row from qpos_lo sees on its far side (prefill.h):
// a causal row's own, else a window's W - 1 keys after it (saturated at
// INT_MAX: callers compare keys with it), else none (INT_MAX).
__device__ __forceinline__ int far_key(bool causal, int window, int qpos_lo) {
    if (causal)
        return qpos_lo;
    return window > 0 ? (int)min((int64_t)qpos_lo + window - 1, (int64_t)INT_MAX) : INT_MAX;
}

// Whether key kp is outside a window W > 0 of the row at qp: W or more
// positions before it, or after it (non-causal rows; a causal row masks every
// later key anyway).
__device__ __forceinline__ bool outside_window(int window, int qp, int kp) {
    return window > 0 && (qp - kp >= window || kp - qp >= window);
}

// The keys the CTA of tile rows [m0, m0 + BM) visits, in BN-key tiles: cache
// tiles [0, nt_c) from k_begin up to c_end, then new-key tiles from p_begin up
// to k_end (causal and window bounds clip the range). Query positions are
// shift + token; the CTA's run from qpos_lo to qpos_hi.
struct Span {
    int shift, qpos_lo, qpos_hi, k_end, k_begin, c_end, nt_c, p_begin, n_tiles;
};
template <int BM, int BN>
__device__ __forceinline__ Span key_span(const pa_prefill_kparams &p, const Seq &sq, int m0, int group) {
    Span k;
    k.shift = sq.k_len - sq.q_len;
    const int tok_lo = m0 / group, tok_hi = min(sq.q_len - 1, (m0 + BM - 1) / group);
    k.qpos_lo = k.shift + tok_lo;
    k.qpos_hi = k.shift + tok_hi;
    k.k_end = span_end(p, sq.k_len, k.qpos_hi);
    // The first key to visit, rounded down to a multiple of 16 (V^T chunks;
    // the window mask hides the keys before the window).
    k.k_begin = (p.window > 0 && k.qpos_lo >= p.window ? k.qpos_lo - p.window + 1 : 0) & ~15;
    k.c_end = min(k.k_end, sq.n_cache);
    k.nt_c = k.c_end > k.k_begin ? (k.c_end - k.k_begin + BN - 1) / BN : 0;
    k.p_begin = max(k.k_begin, sq.n_cache);
    const int nt_p = k.k_end > k.p_begin ? (k.k_end - k.p_begin + BN - 1) / BN : 0;
    k.n_tiles = k.nt_c + nt_p;
    return k;
}

// Key position pos's row offsets (elements) in the K and V sources: through
// the block table in the cache (cache), else the packed new-key row; -1 past
// the segment's end.
__device__ __forceinline__ void key_row_offsets(const pa_prefill_kparams &p, int s, int kvh, int hs, int pos, int end,
                                                bool cache, int64_t k_row0, int n_cache, int64_t &ko, int64_t &vo) {
    int64_t k = -1, v = -1;
    if (pos < end) {
        if (cache) {
            const int bi = pa_kv_divide(p.block_div, pos), slot = pos - bi * p.g.block_size;
            const int64_t blk = p.block_tables[(int64_t)s * p.block_table_stride + bi];
            k = pa_kv_key_offset(&p.g, blk, kvh, slot, 0);
            v = pa_kv_value_offset(&p.g, blk, kvh, slot, 0);
        } else {
            const int64_t row = k_row0 + (pos - n_cache);
            k = row * p.k_stride + (int64_t)kvh * hs;
            v = row * p.v_stride + (int64_t)kvh * hs;
        }
    }
    ko = k;
    vo = v;
}

// Whether any of this thread's share (every THREADS-th, from threadIdx.x) of
// the sequence's context block ids is out of range.
template <int THREADS>
__device__ __forceinline__ int blocks_bad_share(const pa_prefill_kparams &p, int s, int n_cache) {
    int bad = 0;
    if (n_cache > 0) {
        const int nb = (n_cache - 1) / p.g.block_size + 1; // not n_cache + bs - 1: past INT32_MAX at bs near it
        const int32_t *table = p.block_tables + (int64_t)s * p.block_table_stride;
        for (int i = threadIdx.x; i < nb; i += THREADS) {
            const int32_t b = table[i];
            bad |= b < 0 || b >= p.num_blocks;
        }
    }
    return bad;
}
// Nonzero in some thread of the THREADS when an earlier sequence's query rows
// end past this one's first row q0 (prefill.h: start locations out of order),
// where the two would write rows in common. The ragged planner's rule: a
// sequence runs only when q0 is at least every earlier end cu_q[1..s-1],
// skipped sequences' ends included, so no two sequences write one row.
template <int THREADS> __device__ __forceinline__ int order_bad_share(const pa_prefill_kparams &p, int s, int q0) {
    int bad = 0;
    for (int i = threadIdx.x + 1; i < s; i += THREADS)
        bad |= p.cu_q[i] > q0;
    return bad;
}
// Nonzero in some thread of the THREADS unless the sequence's rows come after
// every earlier sequence's and, in context mode, every context block id is in
// range (the Hopper kernel's producers reduce it themselves).
template <int THREADS> __device__ __forceinline__ int seq_bad_share(const pa_prefill_kparams &p, int s, const Seq &q) {
    int bad = order_bad_share<THREADS>(p, s, q.q0);
    if (p.mode == PA_PREFILL_MODE_CONTEXT)
        bad |= blocks_bad_share<THREADS>(p, s, q.n_cache);
    return bad;
}
// seq_bad_share over the whole CTA, so all CTAs of a sequence agree on
// skipping it.
template <int THREADS> __device__ __forceinline__ bool seq_ok(const pa_prefill_kparams &p, int s, const Seq &q) {
    return !__syncthreads_or(seq_bad_share<THREADS>(p, s, q));
}

template <class C> __global__ void __launch_bounds__(C::kThreads) prefill_mma_kernel(const pa_prefill_kparams p) {
    using T = typename C::T;
    constexpr int BM = C::BM, BN = C::BN, DT = C::kDT;
    static_assert(2 * BN * C::HP <= C::kv_elems * sizeof(T), "two raw fp8 tiles fit in a K or V slot");
    PA_DYNAMIC_SMEM(unsigned char, smem);
    PA_STATIC_SMEM(rowoff_q, int64_t[BM]);
    PA_STATIC_SMEM(rowoff_k, int64_t[2][BN]);
    PA_STATIC_SMEM(rowoff_v, int64_t[2][BN]);
    // The four K/V sources (cache K, cache V, new K, new V), the walk over the
    // key tiles and each tile row's query position and ALiBi slope live in
    // shared memory, not registers: at 32 rows per warp and 64 keys per tile
    // the O and S accumulators take 192 of the 255.
    PA_STATIC_SMEM(src_tab, Src[4]);
    PA_STATIC_SMEM(walk, Walk);
    PA_STATIC_SMEM(qpos_tab, int[BM]);
    PA_STATIC_SMEM(slope_tab, float[BM]);
    // The softmax's running sums between tiles (Softmax::park_sums).
    PA_STATIC_SMEM(sums_tab, pa::tile::SumSlot<2 * C::kMT>[C::kThreads]);

    const int s = blockIdx.y, kvh = blockIdx.z;
    const int m0 = (gridDim.x - 1 - blockIdx.x) * BM; // heaviest (latest) causal tiles first
    Seq sq;
    if (!load_seq(p, s, sq))
        return;
    const int group = p.num_heads / p.num_kv_heads;
    const int rows = sq.q_len * group;
    if (m0 >= rows)
        return;
    if (!seq_ok<C::kThreads>(p, s, sq))
        return;

    const int hs = p.head_size;
    // key_span's arithmetic, written out: at 32 rows per warp this kernel
    // holds 255 registers, and ptxas spills when it takes the struct.
    const int shift = sq.k_len - sq.q_len; // q_pos = shift + token
    const int tok_lo = m0 / group, tok_hi = min(sq.q_len - 1, (m0 + BM - 1) / group);
    const int qpos_lo = shift + tok_lo, qpos_hi = shift + tok_hi;
    const int k_end = span_end(p, sq.k_len, qpos_hi);
    const int k_begin = (p.window > 0 && qpos_lo >= p.window ? qpos_lo - p.window + 1 : 0) & ~15;
    const int c_end = min(k_end, sq.n_cache);
    const int nt_c = c_end > k_begin ? (c_end - k_begin + BN - 1) / BN : 0;
    const int p_begin = max(k_begin, sq.n_cache);
    const int nt_p = k_end > p_begin ? (k_end - p_begin + BN - 1) / BN : 0;
    const int n_tiles = nt_c + nt_p;

    // Tile t: its first key and the end of its segment.
    auto tile_start = [&](int t) {
        return t < walk.nt_c ? walk.k_begin + t * BN : walk.p_begin + (t - walk.nt_c) * BN;
    };
    auto tile_end = [&](int t) { return t < walk.nt_c ? walk.c_end : walk.k_end; };

    // Sources. The cache's d offsets come from kv_index.h with block, head and
    // token 0 (the layouts are linear in each index).
    const bool cache_vllm = p.g.layout == PA_LAYOUT_VLLM;
    const bool raw = p.cache_k == PA_PREFILL_K_RAW;
    if (threadIdx.x == 0) {
        // fp8 keys convert exactly to the MMA's 16-bit type; their scale joins
        // the score scale (c_scale) on every cache path, the raw one and the
        // register path alike. Rounding k_scale x K to 16 bits instead puts a
        // relative error of 2^-9 (bf16) on every logit, which a peaked softmax
        // (logits of 10 and more) turns into percent-level output errors.
        const bool k8 = pa::is_fp8(p.cache_dtype);
        const float k_scale = p.k_scale ? p.k_scale[kvh * p.scale_hs] : 1.0f; // the CTA's KV head's
        Src kc{p.key_cache, nullptr, p.cache_dtype, 30, 0, 1, k8 ? 1.0f : k_scale};
        Src vc{p.value_cache, nullptr, p.cache_dtype, 30, 0, 1, p.v_scale ? p.v_scale[kvh * p.scale_hs] : 1.0f};
        if (p.mode == PA_PREFILL_MODE_CONTEXT && cache_vllm) {
            kc.xsh = 31 - __clz(p.g.x);
            kc.xs = (int64_t)p.g.block_size * p.g.x;
            vc.ds = p.g.block_size;
        }
        src_tab[0] = kc;
        src_tab[1] = vc;
        src_tab[2] = Src{p.key_new, nullptr, DT, 30, 0, 1, 1.0f};
        src_tab[3] = Src{p.value_new, nullptr, DT, 30, 0, 1, 1.0f};
        const float inv_cap = p.soft_cap > 0.0f ? 1.0f / p.soft_cap : 0.0f;
        const int vt = p.cache_v == PA_PREFILL_V_ASYNC_VT || p.cache_v == PA_PREFILL_V_RAW_VT;
        walk = Walk{sq.k_row0,
                    sq.n_cache,
                    nt_c,
                    k_begin,
                    p_begin,
                    c_end,
                    k_end,
                    far_key(p.causal, p.window, qpos_lo),
                    qpos_hi,
                    n_tiles,
                    raw,
                    vt,
                    raw ? nt_c + 1 : 0,
                    inv_cap,
                    k8 ? p.scale * k_scale : p.scale};
    }
    __syncthreads();

    // Row addresses of tile t into buffer b (one thread per row).
    auto tile_rows = [&](int t, int b) {
        const int r = threadIdx.x;
        if (r >= BN || (t >= walk.nt_c && p.vec_new)) // packed rows by cp.async need no table
            return;
        // key_row_offsets's arithmetic, written out (at 255 registers ptxas
        // schedules this kernel differently when it goes through the helper),
        // with the cache's offsets from their linear form (p.kl, kv_index.h):
        // no switch on the layout, 37 fewer warp instructions a cache tile at
        // head 128. key_row_offsets, which the Hopper kernel's producer calls,
        // keeps kv_index.h's functions: the linear form spills 4 bytes there
        // (its 56 registers, HP 64 over vLLM's fp8 layout).
        const int pos = tile_start(t) + r;
        int64_t ko = -1, vo = -1;
        if (pos < tile_end(t)) {
            if (t < walk.nt_c) {
                const int bi = pa_kv_divide(p.block_div, pos), slot = pos - bi * p.g.block_size;
                const int64_t blk = p.block_tables[(int64_t)s * p.block_table_stride + bi];
                const int64_t row = blk * p.kl.block + (int64_t)kvh * p.kl.head;
                ko = row + (int64_t)slot * p.kl.k_tok;
                vo = row + (int64_t)slot * p.kl.v_tok + p.kl.v_add;
            } else {
                const int64_t row = walk.k_row0 + (pos - walk.n_cache);
                ko = row * p.k_stride + (int64_t)kvh * hs;
                vo = row * p.v_stride + (int64_t)kvh * hs;
            }
        }
        rowoff_k[b][r] = ko;
        rowoff_v[b][r] = vo;
    };
    // Stages. Tile t of the 16-bit paths goes to stage t & 1. Raw fp8 cache
    // tiles are copied to staging buffers in stage 1's K and V slots (two of
    // each: fp8 is half the size) and dequantised into stage 0; the new-key
    // tiles after them start in stage 1, once the last raw tile is dequantised.
    auto stage_of = [&](int t) { return t < walk.nt_c ? (walk.raw ? 0 : t & 1) : (t + walk.par) & 1; };
    auto raw_k = [&](int b) { return reinterpret_cast<uint8_t *>(C::k_tile(smem, 1)) + b * BN * C::HP; };
    auto raw_v = [&](int b) { return reinterpret_cast<uint8_t *>(C::v_tile(smem, 1)) + b * BN * C::HP; };
    auto issue_tile = [&](int t) {
        const int b = t & 1, st = stage_of(t);
        if (t < walk.nt_c) {
            Src k = src_tab[0], v = src_tab[1];
            k.rowoff = rowoff_k[b];
            v.rowoff = rowoff_v[b];
            const int n_keys = min(BN, walk.c_end - tile_start(t));
            if (walk.raw) {
                load_raw<C, BN>(raw_k(b), k, hs);
                if (walk.vt)
                    load_vt<C, uint8_t, BN>(raw_v(b), v, n_keys, hs);
                else
                    load_raw<C, BN>(raw_v(b), v, hs);
                return;
            }
            if (p.cache_k == PA_PREFILL_K_ASYNC && p.g.block_size % kCacheRun == 0)
                load_cache_runs<C, BN>(C::k_tile(smem, st), k, p.kl.k_tok, n_keys, hs);
            else
                load_tile<C, BN>(C::k_tile(smem, st), k, p.cache_k == PA_PREFILL_K_ASYNC, hs);
            if (walk.vt)
                load_vt<C, T, C::kVtStride>(C::v_tile(smem, st), v, n_keys, hs);
            else if (p.cache_v == PA_PREFILL_V_ASYNC && p.g.block_size % kCacheRun == 0)
                load_cache_runs<C, BN>(C::v_tile(smem, st), v, p.kl.v_tok, n_keys, hs);
            else
                load_tile<C, BN>(C::v_tile(smem, st), v, p.cache_v == PA_PREFILL_V_ASYNC, hs);
            return;
        }
        if (p.vec_new) {
            // Packed rows: row r of the tile is r strides past its first.
            const int ks = tile_start(t), n_keys = min(BN, walk.k_end - ks);
            const int64_t row0 = walk.k_row0 + (ks - walk.n_cache), col0 = (int64_t)kvh * hs;
            const T *kb = static_cast<const T *>(p.key_new) + row0 * p.k_stride + col0;
            const T *vb = static_cast<const T *>(p.value_new) + row0 * p.v_stride + col0;
            load_rows_strided<C, BN>(C::k_tile(smem, st), kb, p.k_stride, n_keys, hs);
            load_rows_strided<C, BN>(C::v_tile(smem, st), vb, p.v_stride, n_keys, hs);
            return;
        }
        Src k = src_tab[2], v = src_tab[3];
        k.rowoff = rowoff_k[b];
        v.rowoff = rowoff_v[b];
        load_tile<C, BN>(C::k_tile(smem, st), k, false, hs);
        load_tile<C, BN>(C::v_tile(smem, st), v, false, hs);
    };
    // Raw fp8 tile t (staging b = t & 1) to stage 0: K exact (its scale is in
    // the score scale, walk.c_scale), V times v_scale.
    auto dequant = [&](int t) {
        constexpr int DQB = dequant_batch<C::HP>();
        const int b = t & 1;
        const float vs = src_tab[1].scale;
        auto run = [&](auto e5m2) {
            constexpr bool E5M2 = decltype(e5m2)::value;
            pa::tile::dequant_tile<C, BN, C::HP, C::kStride, E5M2, false, DQB>(C::k_tile(smem, 0), raw_k(b), 1.0f);
            if (walk.vt)
                pa::tile::dequant_tile<C, C::HP, BN, C::kVtStride, E5M2, true, DQB>(C::v_tile(smem, 0), raw_v(b), vs);
            else
                pa::tile::dequant_tile<C, BN, C::HP, C::kStride, E5M2, true, DQB>(C::v_tile(smem, 0), raw_v(b), vs);
        };
        if (p.cache_dtype == PA_DTYPE_FP8_E5M2)
            run(std::true_type{});
        else
            run(std::false_type{});
    };

    // Q rows (and their output rows), query positions and ALiBi slopes by tile
    // row (rows past the sequence take the last row's position and slope).
    for (int r = threadIdx.x; r < BM; r += C::kThreads) {
        const int gr = m0 + r, g = gr < rows ? gr : rows - 1;
        const int tok = g / group, head = kvh * group + g % group;
        rowoff_q[r] = gr < rows ? (int64_t)(sq.q0 + tok) * p.q_stride + (int64_t)head * hs : -1;
        qpos_tab[r] = shift + tok;
        slope_tab[r] = p.alibi_slopes ? p.alibi_slopes[head] : 0.0f;
    }
    if (n_tiles > 0)
        tile_rows(0, 0);
    __syncthreads();
    const Src qs{p.query, rowoff_q, DT, 30, 0, 1, 1.0f};
    load_tile<C, BM>(C::q_tile(smem), qs, p.vec_q, hs);
    if (n_tiles > 0)
        issue_tile(0);
    pa::tile::cp_async_commit();
    if (n_tiles > 1)
        tile_rows(1, 1);
    __syncthreads();

    const float scale = p.scale, cap = p.soft_cap;
    using pa::tile::kLog2e;
    const int causal = p.causal, window = p.window;
    const bool alibi = p.alibi_slopes != nullptr;

    float o[C::kOA][4];
    pa::tile::zero_acc(o);
    typename C::Softmax sm;
    sm.init();
    sm.park_sums(sums_tab[threadIdx.x].v);

    for (int t = 0; t < walk.n_tiles; t++) {
        // The first new-key tile after raw fp8 tiles lands on the staging
        // buffers: it is issued once tile t is dequantised.
        const bool late = walk.raw && t + 1 == walk.nt_c;
        if (t + 1 < walk.n_tiles && !late)
            issue_tile(t + 1);
        pa::tile::cp_async_commit();
        pa::tile::cp_async_wait<1>();
        __syncthreads();

        const bool cache = t < walk.nt_c;
        if (walk.raw && cache) {
            dequant(t);
            __syncthreads();
            if (late && t + 1 < walk.n_tiles)
                issue_tile(t + 1);
            pa::tile::cp_async_commit();
        }
        const int st = stage_of(t);
        const int ks = tile_start(t), ke = tile_end(t);
        const float tscale = cache ? walk.c_scale : scale;
        float sc[C::kSA][4];
        pa::tile::qk<C>(sc, C::q_tile(smem), C::k_tile(smem, st), hs);
        // Masks only where a tile needs them (issue 14 item 1): one that ends
        // its segment, crosses the causal diagonal of some row of the CTA, or
        // reaches past some row's window on either side; soft cap and ALiBi
        // change every score. Otherwise the raw dots go to the softmax, whose
        // exponent FFMA takes scale * log2(e) (a positive scale keeps the max
        // in place). CTA-uniform.
        const bool edge = ke < ks + BN || ks + BN - 1 > walk.far || (window > 0 && walk.qpos_hi - ks >= window);
        const bool plain = !edge && !alibi && !(cap > 0.0f) && tscale > 0.0f;
        if (!plain) {
            pa::tile::for_each_score<C>(sc, [&](int r, int c, float x) {
                const int kp = ks + c;
                const int qp = qpos_tab[r];
                x *= tscale;
                if (cap > 0.0f)
                    x = cap * tanhf(x * walk.inv_cap);
                if (alibi)
                    x -= slope_tab[r] * fabsf((float)(kp - qp));
                const bool masked = kp >= ke || (causal && kp > qp) || outside_window(window, qp, kp);
                return masked ? -INFINITY : x;
            });
        }
        uint32_t pk[C::kSA][2];
        sm.unpark_sums(sums_tab[threadIdx.x].v);
        sm.template update<C>(sc, o, plain ? tscale * kLog2e : kLog2e, pk);
        sm.park_sums(sums_tab[threadIdx.x].v);
        if (cache && walk.vt)
            pa::tile::pv<C, true>(o, pk, C::v_tile(smem, st), hs);
        else
            pa::tile::pv<C>(o, pk, C::v_tile(smem, st), hs);

        if (t + 2 < walk.n_tiles)
            tile_rows(t + 2, t & 1);
        __syncthreads();
    }
    pa::tile::cp_async_wait<0>();
    // Each warp stages its output over its own Q rows, which other threads may
    // have loaded with cp.async: with no key tile (n_tiles == 0) nothing above
    // ordered those copies before these stores, and Q could land in the output.
    __syncthreads();
    sm.unpark_sums(sums_tab[threadIdx.x].v);
    // Attention sinks: each register row's head's, in log2 units.
    float sink2[2 * C::kMT];
#pragma unroll
    for (int i = 0; i < 2 * C::kMT; i++) {
        const int gr = m0 + pa::tile::warp_row<C>(i), g = gr < rows ? gr : rows - 1;
        sink2[i] = p.sinks ? p.sinks[kvh * group + g % group] * kLog2e : 0.0f;
    }
    sm.template finalize<C>(o, p.sinks != nullptr, sink2);
    // The rows' log-sum-exp (prefill.h): finalize leaves
    // each quad's whole sum (sink included) in all four lanes; the first writes.
    if (p.lse && (threadIdx.x & 3) == 0) {
#pragma unroll
        for (int i = 0; i < 2 * C::kMT; i++) {
            const int gr = m0 + pa::tile::warp_row<C>(i);
            if (gr < rows) {
                const int tok = gr / group, head = kvh * group + gr % group;
                *lse_at(p, head, sq.q0 + tok) = row_lse(p, head, sm.l[i], sm.lse(i));
            }
        }
    }

    // Output rows: contiguous [tokens, heads, head]; each warp stages in its own Q rows.
    T *out = static_cast<T *>(p.out);
    pa::tile::store_rows<C>(
        o, C::q_tile(smem),
        [&](int r) -> T * {
            const int gr = m0 + r;
            if (gr >= rows)
                return nullptr;
            const int tok = gr / group, head = kvh * group + gr % group;
            return out + ((int64_t)(sq.q0 + tok) * p.num_heads + head) * hs;
        },
        hs);
}

// One tile shape's launch: a cudaError_t, or PA_LAUNCH_SMEM_SHORT (not a
// cudaError_t value: the launchers return int) before anything launches where
// the device's CTAs cannot hold its tiles (launch_status.h).
template <class C> int launch_tiles(const pa_prefill_kparams &p, cudaStream_t stream, int64_t m_tiles) {
    const size_t smem = C::smem_bytes(2);
    if (const int short_smem = pa_smem_check(prefill_mma_kernel<C>, smem))
        return short_smem;
    // Every launch (per device, cheap, and not a stream operation: graph-safe).
    cudaError_t e = cudaFuncSetAttribute(prefill_mma_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) {
        (void)cudaGetLastError(); // not left for the caller's next launch check
        return (int)e;
    }
    dim3 grid((unsigned)m_tiles, (unsigned)p.num_seqs, (unsigned)p.num_kv_heads);
    PA_LAUNCH(grid, C::kThreads, smem, stream, prefill_mma_kernel<C>)(p);
    return (int)cudaGetLastError();
}

template <int HP, int DT> int launch_mma(const pa_prefill_kparams &p, cudaStream_t stream) {
    using C = TileCfg<HP, DT>;
    const int group = p.num_heads / p.num_kv_heads;
    const int64_t m_tiles = ((int64_t)p.max_q_len * group + C::BM - 1) / C::BM;
    if (m_tiles == 0 || p.num_seqs == 0)
        return (int)cudaSuccess;
    const int e = launch_tiles<C>(p, stream, m_tiles);
    // The full tiles refused before anything launched (99 KiB a CTA at
    // sm_86/89/12x): the compact tiles (same BM, so the same grid).
    if constexpr (has_compact<HP>()) {
        using CC = TileCfg<HP, DT, true>;
        static_assert(CC::BM == C::BM && CC::smem_bytes(2) <= 90 * 1024, "compact tiles: the grid's rows, 90 KiB");
        if (e == PA_LAUNCH_SMEM_SHORT)
            return launch_tiles<CC>(p, stream, m_tiles);
    }
    return e;
}

} // namespace pa_prefill

// Instances (cuda/prefill/inst_*.cu, generated) and the dispatcher's view of them.
#define PA_PREFILL_INSTANCE_NAME(DT, HP) pa_prefill_mma_##DT##_##HP
#define PA_PREFILL_DECLARE(DT, HP)                                                                                     \
    int PA_PREFILL_INSTANCE_NAME(DT, HP)(const pa_prefill_kparams &p, cudaStream_t stream);
#define PA_PREFILL_DEFINE(DT, HP)                                                                                      \
    int PA_PREFILL_INSTANCE_NAME(DT, HP)(const pa_prefill_kparams &p, cudaStream_t stream) {                           \
        return pa_prefill::launch_mma<HP, DT>(p, stream);                                                              \
    }
