// Ragged paged attention, tensor-core kernel for f16 / bf16 queries (cache of
// the query dtype, or fp8 e4m3/e5m2 dequantised into it). Persistent CTAs of 4
// warps fetch work items (ragged_common.cuh) until the list is done; each item
// walks its keys in slots of kSlot keys (64, or 32 at head 256), two slots in
// flight: slot t + 1 is copied while slot t is computed, at every head size.
// An item is one of two shapes, decided by its row count, and each has its own
// code (prefill_item, decode_item) around the shared slot pipeline (walk_slots):
//   prefill tile (17..128 rows up to head 128, 32 per warp; 17..64 rows at
//       head 256, 16 per warp): warp w owns its rows and runs the whole slot
//       (FlashAttention-2: the warps share the K/V tile, and every K and V
//       fragment a warp reads serves its two m16 row blocks);
//   decode item (<= 16 rows, one GQA group of a decode token or a few
//       speculative tokens): all warps hold the same 16 rows (Q replicated into
//       each warp's slot) and split the slot's keys 16 apiece. A 64-key slot
//       gives each warp 16 keys; a 32-key slot (head 256) gives two warps each
//       16 keys, and each warp of a pair takes half of the head dimension in
//       P V (both compute the pair's scores: a decode is bound by bandwidth,
//       not by the tensor cores). The key slices' partial softmaxes merge in
//       the epilogue. So a decode pays 16 x 16 MMA work per warp per 16 keys,
//       not 64 x 64, and reads every K/V byte once for its whole GQA group.
// K/V rows are gathered row by row through the page table (any page size) by
// cp.async: a cache of the query dtype into the slot's tiles; fp8 raw, then
// converted in shared memory (exact: every fp8 value is a 16-bit float), its
// K scale applied to the scores and its V scale to the output in f32. The
// reference rounds scale x value to the query dtype first; the two differ by
// that rounding.
// The warp-level math is cuda/attn_tile.cuh's (qk, for_each_score_reg, Softmax,
// pv); the decode shape reuses it with a 16-key Cfg on a 16-row slice.
#pragma once

#include "../attn_tile.cuh"
#include "ragged_common.cuh"

namespace pa {
namespace rg {

// Keys per pipeline slot: 64, or 32 at head 256, where two 64-key slots would
// leave one CTA per SM. Two slots at every head size. A prefill tile is 128
// rows up to head 128, 32 per warp (FlashAttention-2's tile: every K and V
// fragment a warp reads from shared memory serves two m16 row blocks), and 64
// rows at head 256, 16 per warp (32 would need 256 accumulators per thread).
// Shared memory: 104 KB at head 128, 99 KB at head 256, 2 CTAs per SM.
template <int HP> struct MmaShape {
    static constexpr int kStages = 2;
    static constexpr int kSlot = HP <= 128 ? 64 : 32;
    static constexpr int kWM = HP <= 128 ? 32 : 16;  // prefill rows per warp
    static constexpr int kRows = 4 * kWM;            // prefill tile rows
    static constexpr int kDecSlices = kSlot / 16;    // decode: 16-key slices per slot
    static constexpr int kDecSplit = 4 / kDecSlices; // decode: warps per slice (head-dimension parts)
    static constexpr int kDecHP = HP / kDecSplit;    // decode: head columns per warp in P V
    static_assert(PA_RG_KEY_TILE % kSlot == 0, "a slot divides the planner's key tile");
    static_assert(kRows == (HP <= 128 ? PA_RG_TILE_ROWS_WIDE : PA_RG_TILE_ROWS),
                  "the planner's tile rows (pa_rg_tile_rows)");
};

// The shared-memory layout (a Q tile of kRows rows, two K/V stages) and the
// prefill warps' math.
template <int HP, int DT>
using MmaCfg = pa::tile::Cfg<HP, MmaShape<HP>::kRows, MmaShape<HP>::kSlot, DT, MmaShape<HP>::kWM>;

template <int HP, int DT> constexpr size_t mma_smem_bytes() {
    return MmaCfg<HP, DT>::smem_bytes(MmaShape<HP>::kStages);
}

// K or V rows [k0, k0 + C::BN) of the item by cp.async, one page-table
// lookup per row. The thread layout is load_rows_async's (thread t copies
// 8-element group t % G of rows t / G + (kThreads / G) i, i < ITER): the G
// lanes sharing a row are consecutive lanes of one warp, so lane j < ITER of
// them resolves the row of iteration j and the others take it by shuffle (the
// generic loader resolved every row once per group: 16 lookups per row at
// head 128). A cache of the query dtype lands in the tile [BN][kStride] of T
// (16-byte copies); an fp8 cache lands raw, RAW, in dense rows of HP bytes
// (8-byte copies: a row of head_size bytes is only 8-byte aligned when the
// head size is an odd multiple of 8) for dequant_tile after the barrier.
// Absent rows and columns past the head size are zero-filled.
template <class C, bool RAW>
__device__ __forceinline__ void load_kv_rows(void *tile, const pa_rg_launch &P, const Item &c, int k0, int which,
                                             int head_size) {
    using T = typename C::T;
    constexpr int G = C::kGroups, ITER = C::BN * G / C::kThreads;
    static_assert(G <= 32 && 32 % G == 0 && ITER >= 1 && ITER <= G && C::BN * G % C::kThreads == 0,
                  "load_kv_rows: the lanes of a row must share a warp");
    const int tid = threadIdx.x, g = tid % G, lane = tid & 31, first = lane - g;
    int64_t mine = -1; // the row this lane resolves: iteration g
    if (g < ITER) {
        const int key = k0 + tid / G + (C::kThreads / G) * g;
        mine = key < c.it.k_hi ? kv_row(P, c, key, which) : -1;
    }
    const int lo = (int)(uint32_t)(uint64_t)mine, hi = (int)((uint64_t)mine >> 32);
#pragma unroll
    for (int i = 0; i < ITER; i++) {
        const uint32_t rlo = (uint32_t)__shfl_sync(0xffffffffu, lo, first + i);
        const uint32_t rhi = (uint32_t)__shfl_sync(0xffffffffu, hi, first + i);
        const int64_t off = (int64_t)(((uint64_t)rhi << 32) | rlo);
        const int r = tid / G + (C::kThreads / G) * i;
        const bool ok = off >= 0 && g * 8 < head_size;
        if constexpr (RAW) {
            const uint8_t *kv8 = static_cast<const uint8_t *>(P.kv);
            pa::ptx::cp_async(static_cast<uint8_t *>(tile) + r * C::HP + g * 8, kv8 + (ok ? off + g * 8 : 0), 8,
                              ok ? 8 : 0);
        } else {
            T *dst = static_cast<T *>(tile) + r * C::kStride + g * 8;
            if (ok)
                pa::ptx::cp_async16(dst, static_cast<const T *>(P.kv) + off + g * 8);
            else
                *reinterpret_cast<uint4 *>(dst) = make_uint4(0, 0, 0, 0);
        }
    }
}

// A slot's raw fp8 K and V (load_kv_rows<C, true> into `raw`) to stage 0's
// tiles. Every e4m3 and e5m2 value is exact in f16 and bf16, so the
// conversion is exact; the K and V scales are applied in f32 instead, to the
// scores and to the output.
// BATCH: dequant_tile's units per thread at a time (0: the whole slot at
// once). A prefill item's accumulators stay live across the conversion, so it
// converts two at a time; a decode item four (the whole slot's 8 made ptxas
// spill elsewhere in the kernel, which holds both item shapes).
template <class C, bool E5M2, int BATCH> __device__ __forceinline__ void dequant_slot(void *smem, const uint8_t *raw) {
    pa::tile::dequant_tile<C, C::BN, C::HP, C::kStride, E5M2, false, BATCH>(C::k_tile(smem, 0), raw, 1.0f);
    pa::tile::dequant_tile<C, C::BN, C::HP, C::kStride, E5M2, false, BATCH>(C::v_tile(smem, 0), raw + C::BN * C::HP,
                                                                            1.0f);
}

// What both item shapes share: the scales, and the pipeline over the item's
// key slots. walk_slots issues load_q (the item's Q rows by cp.async) with
// slot 0's copies, then runs body(k0, k_tile, v_tile, edge) on each slot while
// the next one is copied: a cache of the query dtype goes straight into stage
// t & 1; an fp8 cache goes raw into stage 1's space and is converted into
// stage 0 after the barrier (dequant_slot), and slot t + 1's raw copy then runs
// under slot t's math. An edge slot holds a key past some row's causal limit
// (qmin: the item's least query position) or past the item's range, or a
// window applies: its scores take the whole mask (logit). Elsewhere every key
// is visible to every row, as FlashAttention-2 masks only the diagonal tiles.
// (The planner's chunks end on key-tile bounds or at the causal limit, so the
// range test adds no slot today.) BATCH: dequant_slot's. On return every copy
// has landed and every thread is past its last tile read.
struct Scales {
    float qk, v; // sm_scale times K's scale (an fp8 cache), V's scale
};

template <class C, bool FP8, int BATCH, class LoadQ, class Body>
__device__ __forceinline__ void walk_slots(const pa_rg_launch &P, const Item &c, unsigned char *smem,
                                           const LoadQ &load_q, const Body &body) {
    using T = typename C::T;
    constexpr int kSlot = C::BN;
    const int hs = P.head_size;
    uint8_t *raw = reinterpret_cast<uint8_t *>(C::k_tile(smem, 1));
    static_assert(2 * kSlot * C::HP <= (C::kv_elems + C::v_elems) * sizeof(T), "raw K and V fit in a stage");
    auto load_kv = [&](int t, int stage) {
        const int k0 = c.it.k_lo + t * kSlot;
        if (!FP8) {
            load_kv_rows<C, false>(C::k_tile(smem, stage), P, c, k0, 0, hs);
            load_kv_rows<C, false>(C::v_tile(smem, stage), P, c, k0, 1, hs);
        } else {
            load_kv_rows<C, true>(raw, P, c, k0, 0, hs);
            load_kv_rows<C, true>(raw + kSlot * C::HP, P, c, k0, 1, hs);
        }
    };
    const int nslots = (c.it.k_hi - c.it.k_lo + kSlot - 1) / kSlot;
    const int qmin = q_pos(c, c.it.row0); // rows are token-major: the least position
    load_q();
    load_kv(0, 0);
    pa::tile::cp_async_commit();
    if (FP8)
        pa::tile::cp_async_wait<0>();
    for (int t = 0; t < nslots; t++) {
        const int stage = FP8 ? 0 : t & 1;
        if (!FP8) {
            if (t + 1 < nslots)
                load_kv(t + 1, (t + 1) & 1);
            pa::tile::cp_async_commit();
            pa::tile::cp_async_wait<1>();
        }
        // Slot t landed (fp8: its raw bytes; after the first slot the
        // barrier that ended the previous one saw them land).
        if (!FP8 || t == 0)
            __syncthreads();
        if (FP8) {
            if (P.kv_dtype == 4)
                dequant_slot<C, true, BATCH>(smem, raw);
            else
                dequant_slot<C, false, BATCH>(smem, raw);
            __syncthreads(); // stage 0 whole; the raw space is free
            if (t + 1 < nslots)
                load_kv(t + 1, 1);
            pa::tile::cp_async_commit();
        }
        const int k0 = c.it.k_lo + t * kSlot;
        const bool edge = k0 + kSlot > c.it.k_hi || k0 + kSlot - 1 > qmin || P.window > 0;
        body(k0, C::k_tile(smem, stage), C::v_tile(smem, stage), edge);
        if (FP8)
            pa::tile::cp_async_wait<0>(); // slot t + 1's raw bytes, before the barrier
        __syncthreads();                  // this stage is refilled next
    }
    pa::tile::cp_async_wait<0>();
    // The caller's staging overwrites the tiles; with no key slot the copies
    // issued above were ordered by no barrier yet.
    __syncthreads();
}

// The mask of an edge slot on scores s (keys k0..), as logit applies it
// per score, with each register row's visible columns worked out once: a key
// outside the item's range does not exist (-inf); one past the row's causal
// limit or window takes the mask value (-inf for a hard mask).
template <class C>
__device__ __forceinline__ void mask_slot(const pa_rg_launch &P, const Item &c, float (&s)[C::kSA][4], int k0) {
    const int c_lo = c.it.k_lo - k0, c_hi = c.it.k_hi - k0; // the item's keys, in slot columns
    int lo[2 * C::kMT], hi[2 * C::kMT];                     // the row's visible columns
#pragma unroll
    for (int i = 0; i < 2 * C::kMT; i++) {
        const int qp = q_pos(c, c.it.row0 + pa::tile::warp_row<C>(i)) - k0;
        hi[i] = qp + 1;
        lo[i] = P.window > 0 ? qp - P.window + 1 : INT_MIN;
    }
    if (P.hard_mask) {
#pragma unroll
        for (int i = 0; i < 2 * C::kMT; i++) {
            hi[i] = min(hi[i], c_hi);
            lo[i] = max(lo[i], c_lo);
        }
        pa::tile::for_each_score_reg<C>(
            s, [&](int i, int col, float x) { return col < lo[i] || col >= hi[i] ? -INFINITY : x; });
    } else {
        const float mv = P.mask_value;
        pa::tile::for_each_score_reg<C>(s, [&](int i, int col, float x) {
            return col < c_lo || col >= c_hi ? -INFINITY : col < lo[i] || col >= hi[i] ? x + mv : x;
        });
    }
}

// A prefill item (17..kRows rows): warp w owns tile rows [w WM, w WM + WM)
// and runs the whole slot; the warps share the K/V tiles. Its rows go to the
// f32 staging over the tiles, then to the epilogue.
// slot: the thread's shared-memory slot for its softmax state between key
// slots (park / unpark: the accumulators leave no registers for it).
template <int HP, int DT, bool FP8>
__device__ __forceinline__ void prefill_item(const pa_rg_launch &P, const Item &c, unsigned char *smem,
                                             const Scales &sc, pa::tile::SumSlot<MmaShape<HP>::kWM / 4> &slot,
                                             int *s_flag) {
    using C = MmaCfg<HP, DT>;
    using T = typename C::T;
    const int hs = P.head_size, lane = pa::tile::lane_id();
    const bool busy = C::WM * pa::tile::warp_id() < c.it.nrows;
    // Interior slots with no soft cap take the raw dots: the scale rides in
    // the softmax's exponent FFMA (a positive scale keeps the max in place).
    const bool fold = !(P.soft_cap > 0.0f) && sc.qk > 0.0f;

    typename C::Softmax sm;
    sm.init();
    sm.park(slot.v);
    float o[C::kOA][4];
    pa::tile::zero_acc(o);
    walk_slots<C, FP8, 2>(
        P, c, smem,
        [&] {
            const T *q = static_cast<const T *>(P.q);
            pa::tile::load_rows_async<C, C::BM>(
                C::q_tile(smem),
                [&](int r) -> const T * { return r < c.it.nrows ? q + row_offset(P, c, c.it.row0 + r) : nullptr; }, hs);
        },
        [&](int k0, const T *kt, const T *vt, bool edge) {
            if (!busy)
                return;
            float s[C::kSA][4];
            pa::tile::qk<C>(s, C::q_tile(smem), kt, hs);
            const bool plain = fold && !edge;
            // Scale and soft cap, then (edge slots) the mask: two passes, so the
            // soft cap's code appears once (one pass with the whole logit held
            // the accumulators past the registers).
            if (!plain)
                pa::tile::for_each_score_reg<C>(s, [&](int, int, float x) { return logit_unmasked(P, x, sc.qk); });
            if (edge)
                mask_slot<C>(P, c, s, k0);
            uint32_t pk[C::kSA][2];
            sm.unpark(slot.v);
            sm.template update<C>(s, o, plain ? sc.qk * pa::tile::kLog2e : pa::tile::kLog2e, pk);
            sm.park(slot.v);
            pa::tile::pv<C>(o, pk, vt, hs);
        });
    sm.unpark(slot.v);
    sm.template finalize<C>(o);

    // f32 staging over the tiles: the warp's rows, every column.
    float *st = reinterpret_cast<float *>(smem);
    float *st_lse = st + C::BM * HP;
    static_assert(C::BM * HP * 4 + C::BM * 4 <= C::smem_bytes(MmaShape<HP>::kStages), "f32 staging fits");
    const int c0 = (lane & 3) * 2;
#pragma unroll
    for (int i = 0; i < 2 * C::kMT; i++) {
        const int row = pa::tile::warp_row<C>(i), mt = i >> 1, h = i & 1;
#pragma unroll
        for (int j = 0; j < C::kNO; j++)
            if (j * 8 < hs)
                *reinterpret_cast<float2 *>(st + row * HP + j * 8 + c0) =
                    make_float2(o[mt * C::kNO + j][2 * h] * sc.v, o[mt * C::kNO + j][2 * h + 1] * sc.v);
        if ((lane & 3) == 0)
            st_lse[row] = busy ? sm.lse(i) : -INFINITY;
    }
    __syncthreads();
    epilogue<DT, HP, 128>(P, c, st, st_lse, 1, C::BM, s_flag);
}

// A decode item (<= 16 rows: one GQA group of a decode token, or a few
// speculative tokens): every warp holds the same 16 rows (Q replicated into
// each warp's 16 rows of the Q tile) and takes 16 keys of each slot; at a
// 32-key slot (head 256) two warps share 16 keys and each takes half of the
// head in P V. The key slices merge in the epilogue.
template <int HP, int DT, bool FP8>
__device__ __forceinline__ void decode_item(const pa_rg_launch &P, const Item &c, unsigned char *smem, const Scales &sc,
                                            int *s_flag) {
    using S = MmaShape<HP>;
    using C = MmaCfg<HP, DT>;                 // shared-memory layout
    using CD = pa::tile::Cfg<HP, 64, 16, DT>; // scores: 16 keys per warp, whole head
    // P V: 16 keys, S::kDecHP head columns of the HP-wide V rows
    using CDV = pa::tile::Cfg<S::kDecHP, 64, 16, DT, 16, false, C::kStride>;
    using T = typename C::T;
    static_assert(CD::kStride == C::kStride && CD::kSA == CDV::kSA, "decode views of the tiles");
    const int w = pa::tile::warp_id(), lane = pa::tile::lane_id(), hs = P.head_size;
    const int dslice = w % S::kDecSlices, dpart = w / S::kDecSlices;
    int qp[2];
#pragma unroll
    for (int i = 0; i < 2; i++)
        qp[i] = q_pos(c, c.it.row0 + (lane >> 2) + 8 * i);

    pa::tile::Softmax sm;
    sm.init();
    float od[CDV::kOA][4];
    pa::tile::zero_acc(od);
    walk_slots<C, FP8, 4>(
        P, c, smem,
        [&] {
            const T *q = static_cast<const T *>(P.q);
            pa::tile::load_rows_async<C, 64>(
                C::q_tile(smem),
                [&](int r) -> const T * {
                    return (r & 15) < c.it.nrows ? q + row_offset(P, c, c.it.row0 + (r & 15)) : nullptr;
                },
                hs);
        },
        [&](int k0, const T *kt, const T *vt, bool edge) {
            const int kd = k0 + 16 * dslice;
            if (kd >= c.it.k_hi)
                return;
            float s[CD::kSA][4];
            pa::tile::qk<CD>(s, C::q_tile(smem), kt + 16 * dslice * C::kStride, hs);
            if (edge)
                pa::tile::for_each_score_reg<CD>(
                    s, [&](int i, int col, float x) { return logit(P, c, x, kd + col, qp[i], sc.qk); });
            else
                pa::tile::for_each_score_reg<CD>(s, [&](int, int, float x) { return logit_unmasked(P, x, sc.qk); });
            uint32_t pk[CD::kSA][2];
            sm.update<CDV>(s, od, pk);
            pa::tile::pv<CDV>(od, pk, vt + 16 * dslice * C::kStride + dpart * S::kDecHP, hs - dpart * S::kDecHP);
        });
    sm.finalize<CDV>(od);

    // f32 staging over the tiles: key slice s's 16 rows at rows 16 s, the
    // warp's head columns.
    float *st = reinterpret_cast<float *>(smem);
    float *st_lse = st + 64 * HP;
    const int c0 = (lane & 3) * 2, srow0 = 16 * dslice + (lane >> 2), col0 = dpart * S::kDecHP;
#pragma unroll
    for (int j = 0; j < CDV::kNO; j++) {
        if (col0 + j * 8 < hs) {
            *reinterpret_cast<float2 *>(st + srow0 * HP + col0 + j * 8 + c0) =
                make_float2(od[j][0] * sc.v, od[j][1] * sc.v);
            *reinterpret_cast<float2 *>(st + (srow0 + 8) * HP + col0 + j * 8 + c0) =
                make_float2(od[j][2] * sc.v, od[j][3] * sc.v);
        }
    }
    if ((lane & 3) == 0 && dpart == 0) { // a decode pair's twins hold the same sums
        st_lse[srow0] = sm.lse(0);
        st_lse[srow0 + 8] = sm.lse(1);
    }
    __syncthreads();
    epilogue<DT, HP, 128>(P, c, st, st_lse, S::kDecSlices, 16, s_flag);
}

// FP8: the instance for fp8 pages (the launcher picks it when the cache dtype
// is not the query's); each instance carries only its own copy arm. The two
// item shapes are separate code, each with its own accumulators: the prefill
// arm's 32 rows per warp take the registers, and the decode arm's state is
// not live beside them.
template <int HP, int DT, bool FP8>
__global__ void __launch_bounds__(128, 2) ragged_mma_kernel(const __grid_constant__ pa_rg_launch P) {
    PA_DYNAMIC_SMEM(unsigned char, smem);
    PA_STATIC_SMEM(int s_idx, s_flag);
    PA_STATIC_SMEM(Item s_item);
    PA_STATIC_SMEM(pa::tile::SumSlot<MmaShape<HP>::kWM / 4> sums_tab[128]);
    PA_STATIC_SMEM(Scales s_sc);
    // Thread 0 sets the scales; next_item's barrier publishes them.
    if (threadIdx.x == 0) {
        const float k_scale = FP8 && P.k_scale ? *P.k_scale : 1.0f;
        s_sc.v = FP8 && P.v_scale ? *P.v_scale : 1.0f;
        s_sc.qk = P.sm_scale * k_scale; // fp8: K's scale applied to the scores
    }
    const Scales &sc = s_sc;

    for (;;) {
        const int idx = next_item(P, &s_idx);
        if (idx >= hdr(P)->num_items) // (read per item: no register held across the items)
            break;
        // The item in shared memory: its fields are read where they are used
        // (reloaded after each barrier), not held in registers across the
        // slots beside the accumulators.
        if (threadIdx.x == 0)
            s_item = load_item(P, idx);
        __syncthreads();
        const Item &c = s_item;
        if (c.it.nrows <= PA_RG_DEC_ROWS)
            decode_item<HP, DT, FP8>(P, c, smem, sc, &s_flag);
        else
            prefill_item<HP, DT, FP8>(P, c, smem, sc, sums_tab[threadIdx.x], &s_flag);
        __syncthreads(); // staging, s_item and s_flag are reused by the next item
    }
}

} // namespace rg
} // namespace pa
