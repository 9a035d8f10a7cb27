// Ragged paged attention, tensor-core kernel for f16 / bf16 queries (cache of
// the query dtype, or fp8 e4m3/e5m2 dequantised into it). Persistent CTAs of 4
// warps fetch work items (ragged_common.cuh) until the list is done; each item
// walks its keys in slots of kSlot keys (64, or 32 at head 256; half that in
// the compact shape of 99 KiB devices, MmaShape), two slots in flight: slot
// t + 1 is copied while slot t is computed, at every head size.
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

#include <type_traits>

#include "../attn_tile.cuh"
#include "ragged_common.cuh"
#include "ragged_launch.cuh"

namespace pa {
namespace rg {

// Keys per pipeline slot: 64, or 32 at head 256, where two 64-key slots would
// leave one CTA per SM. Two slots at every head size. A prefill tile is 128
// rows up to head 128, 32 per warp (FlashAttention-2's tile: every K and V
// fragment a warp reads from shared memory serves two m16 row blocks), and 64
// rows at head 256, 16 per warp (32 would need 256 accumulators per thread).
// Shared memory: 104 KB at head 128, 99 KB at head 256, 2 CTAs per SM.
// CPT, the compact shape, for GPUs whose CTAs hold 99 KiB (compute capability
// 8.6, 8.9, 12.x), where those do not fit (99 KB plus the static bytes at head
// 256): slots of half the keys (32 at head 128, 16 at head 256), the same
// prefill rows and work items (a slot still divides the planner's key tile),
// the decode split as the slot gives it (head 128 as head 256's: two warps a
// 16-key slice, each half of the head in P V; head 256: one slice, each warp
// a quarter). Its tiles then take less than a prefill item's f32 output
// staging, which sizes the shared memory (mma_smem_bytes): 70144 bytes at head
// 128, 67840 at 256. The launchers take it only where the full shape does not
// fit (launch_mma, below the kernel).
template <int HP, bool CPT = false> struct MmaShape {
    static constexpr int kStages = 2;
    static constexpr int kSlot = (HP <= 128 ? 64 : 32) / (CPT ? 2 : 1);
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
template <int HP, int DT, bool CPT = false>
using MmaCfg = pa::tile::Cfg<HP, MmaShape<HP, CPT>::kRows, MmaShape<HP, CPT>::kSlot, DT, MmaShape<HP, CPT>::kWM>;

// The items' f32 output staging over the tiles (prefill_item: a row of HP + 8
// floats and an lse a tile row; decode items stage 64 rows).
template <int HP> constexpr size_t staging_bytes(int rows) { return (size_t)rows * (HP + 8) * 4 + (size_t)rows * 4; }
// The dynamic shared memory: the tiles, or the staging where it is larger.
template <int HP, int DT, bool CPT = false> constexpr size_t mma_smem_bytes() {
    using S = MmaShape<HP, CPT>;
    const size_t tiles = MmaCfg<HP, DT, CPT>::smem_bytes(S::kStages), st = staging_bytes<HP>(S::kRows);
    return tiles > st ? tiles : st;
}

// Where byte b of row r of a raw fp8 slot lands for a decode item, which
// reads its MMA fragments straight from the bytes (decode_item_fp8): dense
// rows of HP bytes, the 16-byte chunks of each 128-byte line permuted by the
// row (chunk bit 2 flips with row bit 1, and with row bit 0 where a row fills
// whole lines; chunk bit 1 with row bit 2), so that both of its shared loads
// are free of bank conflicts: Q.K's 16-byte loads (a quarter warp reads rows
// 2m and 2m + 1, 64 bytes each) and P.V's 8-byte loads (a half warp reads
// rows i, i + 2, i + 4, i + 6, 32 bytes each). A prefill item's raw slot is
// dense (dequant_tile reads it).
template <int HP> __device__ __forceinline__ int raw_swz(int r, int b) {
    const int m = ((((HP >= 128 ? r : 0) ^ (r >> 1)) & 1) << 2) | (((r >> 2) & 1) << 1);
    return (r * HP + b) ^ (m << 4);
}

// K and V rows [k0, k0 + C::BN) of the item by cp.async, one page-table
// lookup per key: its V row is its K row's head_size elements further (the
// combined layout interleaves them). Thread t copies the CH chunks
// t % G + G j (j < CH) of rows t / G + (kThreads / G) i, i < ITER: the G
// lanes sharing a row are consecutive lanes of one warp, so lane j < ITER of
// them resolves the row of iteration j and the others take it by shuffle
// (the generic loader resolved every row once per group: 16 lookups per row
// at head 128). Two chunks a lane wherever a quarter warp's stores stay free
// of bank conflicts (below); each row's shuffles, address and checks then
// serve twice the bytes, and a quarter warp still reads whole 128-byte lines.
// A cache of the query dtype lands in the tiles [BN][kStride] of T (16-byte
// chunks, zero-filled by cp.async where absent); two a lane where a row is
// 256 bytes or more (at head 64 they would put two rows 144 bytes apart in a
// quarter warp). An fp8 cache lands raw, RAW, in rows of HP bytes (dense, or
// SWZ: raw_swz; V's BN rows after K's) by copies of W bytes: 16 where the head
// size is a multiple of 16, else 8 (a row of head_size bytes is only 8-byte
// aligned when the head size is an odd multiple of 8); two 16-byte chunks a
// lane where a row is 256 bytes, or 128 swizzled ones (raw_swz puts rows 2m
// and 2m + 1 in opposite halves of the banks). scripts/ragged_banks.py checks
// every choice. Absent rows and columns past the head size are zero-filled.
// ONE: only the rows of `which` (0 K, 1 V), into k_tile: a prefill item on
// fp8 pages copies K and V apart (with the rows' addresses of both live
// across its copies, ptxas spills beside its accumulators).
template <class C, bool RAW, bool SWZ = false, int W = 8, bool ONE = false>
__device__ __forceinline__ void load_kv_rows(void *k_tile, void *v_tile, const pa_rg_launch &P, const Item &c, int k0,
                                             int head_size, int which = 0) {
    using T = typename C::T;
    static_assert(!RAW || W == 8 || W == 16, "raw copies of 8 or 16 bytes");
    // Chunks per lane and row (see above).
    constexpr int CH = (RAW ? W == 16 && (C::HP >= 256 || (SWZ && C::HP == 128)) : C::kGroups * 16 >= 256) ? 2 : 1;
    constexpr int G = (RAW ? C::HP / W : C::kGroups) / CH, ITER = C::BN * G / C::kThreads;
    static_assert(G <= 32 && 32 % G == 0 && ITER >= 1 && ITER <= G && C::BN * G % C::kThreads == 0,
                  "load_kv_rows: the lanes of a row must share a warp");
    const int tid = threadIdx.x, g = tid % G, lane = tid & 31, first = lane - g;
    int64_t mine = -1; // the K row this lane resolves: iteration g
    if (g < ITER) {
        const int key = k0 + tid / G + (C::kThreads / G) * g;
        mine = key < c.it.k_hi ? kv_row(P, c, key, ONE ? which : 0) : -1;
    }
    const int lo = (int)(uint32_t)(uint64_t)mine, hi = (int)((uint64_t)mine >> 32);
#pragma unroll
    for (int i = 0; i < ITER; i++) {
        const uint32_t rlo = (uint32_t)__shfl_sync(0xffffffffu, lo, first + i);
        const uint32_t rhi = (uint32_t)__shfl_sync(0xffffffffu, hi, first + i);
        const int64_t off = (int64_t)(((uint64_t)rhi << 32) | rlo);
        const int r = tid / G + (C::kThreads / G) * i;
        if constexpr (RAW) {
#pragma unroll
            for (int j = 0; j < CH; j++) {
                const int b = (g + G * j) * W; // the chunk's first byte in the row
                const bool ok = off >= 0 && b < head_size;
                const uint8_t *src = static_cast<const uint8_t *>(P.kv) + (ok ? off + b : 0);
                const int at = SWZ ? raw_swz<C::HP>(r, b) : r * C::HP + b;
                pa::ptx::cp_async(static_cast<uint8_t *>(k_tile) + at, src, W, ok ? W : 0);
                if (!ONE)
                    pa::ptx::cp_async(static_cast<uint8_t *>(v_tile) + at, src + (ok ? head_size : 0), W, ok ? W : 0);
            }
        } else {
            T *dk = static_cast<T *>(k_tile) + r * C::kStride + g * 8;
            T *dv = static_cast<T *>(v_tile) + r * C::kStride + g * 8;
            const T *src = static_cast<const T *>(P.kv) + (off >= 0 ? off + g * 8 : 0);
#pragma unroll
            for (int j = 0; j < CH; j++) {
                const bool ok = off >= 0 && (g + G * j) * 8 < head_size;
                pa::ptx::cp_async16_or_zero(dk + G * 8 * j, src + G * 8 * j, ok);
                pa::ptx::cp_async16_or_zero(dv + G * 8 * j, src + G * 8 * j + head_size, ok);
            }
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
// the next one is copied. MODE says what a slot holds:
//   kSlot16: a cache of the query dtype, copied straight into stage t & 1;
//   kSlotConvert: fp8 pages for a prefill item: copied raw into stage 1's
//     space and converted into stage 0 after the barrier (dequant_slot);
//     slot t + 1's raw copy then runs under slot t's math;
//   kSlotRaw: fp8 pages for a decode item, which reads them as they are
//     (decode_item_fp8): raw K and V, swizzled (raw_swz), in stage t & 1, two
//     slots in flight as for kSlot16; body gets byte pointers.
// An edge slot holds a key past some row's causal limit
// (qmin: the item's least query position) or past the item's range, or a
// window applies: its scores take the whole mask (logit). Elsewhere every key
// is visible to every row, as FlashAttention-2 masks only the diagonal tiles.
// (The planner's chunks end on key-tile bounds or at the causal limit, so the
// range test adds no slot today.) BATCH: dequant_slot's. On return every copy
// has landed and every thread is past its last tile read.
struct Scales {
    float qk, v; // sm_scale times K's scale (an fp8 cache), V's scale
};

enum SlotMode { kSlot16, kSlotConvert, kSlotRaw };

template <class C, int MODE, int BATCH, class LoadQ, class Body>
__device__ __forceinline__ void walk_slots(const pa_rg_launch &P, const Item &c, unsigned char *smem,
                                           const LoadQ &load_q, const Body &body) {
    using T = typename C::T;
    constexpr int kSlot = C::BN;
    constexpr bool CONV = MODE == kSlotConvert;
    const int hs = P.head_size;
    static_assert(2 * kSlot * C::HP <= (C::kv_elems + C::v_elems) * sizeof(T), "raw K and V fit in a stage");
    auto raw_k = [&](int stage) { return reinterpret_cast<uint8_t *>(C::k_tile(smem, stage)); };
    uint8_t *raw = raw_k(1);       // kSlotConvert's raw space
    const bool w16 = hs % 16 == 0; // fp8 rows 16-byte aligned: 16-byte copies
    auto load_raw = [&](auto width, uint8_t *dst, int k0) {
        constexpr int W = decltype(width)::value;
        if constexpr (MODE == kSlotRaw) {
            load_kv_rows<C, true, true, W>(dst, dst + kSlot * C::HP, P, c, k0, hs);
        } else {
            load_kv_rows<C, true, false, W, true>(dst, nullptr, P, c, k0, hs, 0);
            load_kv_rows<C, true, false, W, true>(dst + kSlot * C::HP, nullptr, P, c, k0, hs, 1);
        }
    };
    auto load_kv = [&](int t, int stage) {
        const int k0 = c.it.k_lo + t * kSlot;
        if constexpr (MODE == kSlot16) {
            load_kv_rows<C, false>(C::k_tile(smem, stage), C::v_tile(smem, stage), P, c, k0, hs);
        } else {
            uint8_t *dst = MODE == kSlotRaw ? raw_k(stage) : raw;
            if (w16)
                load_raw(std::integral_constant<int, 16>(), dst, k0);
            else
                load_raw(std::integral_constant<int, 8>(), dst, k0);
        }
    };
    const int nslots = (c.it.k_hi - c.it.k_lo + kSlot - 1) / kSlot;
    const int qmin = q_pos(P, c, c.it.row0); // rows are token-major: the least position
    load_q();
    load_kv(0, 0);
    pa::tile::cp_async_commit();
    if (CONV)
        pa::tile::cp_async_wait<0>();
    for (int t = 0; t < nslots; t++) {
        const int stage = CONV ? 0 : t & 1;
        if (!CONV) {
            if (t + 1 < nslots)
                load_kv(t + 1, (t + 1) & 1);
            pa::tile::cp_async_commit();
            pa::tile::cp_async_wait<1>();
        }
        // Slot t landed (fp8 converted: its raw bytes; after the first slot
        // the barrier that ended the previous one saw them land).
        if (!CONV || t == 0)
            __syncthreads();
        if constexpr (CONV) {
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
        if constexpr (MODE == kSlotRaw)
            body(k0, static_cast<const uint8_t *>(raw_k(stage)),
                 static_cast<const uint8_t *>(raw_k(stage)) + kSlot * C::HP, edge);
        else
            body(k0, static_cast<const T *>(C::k_tile(smem, stage)), static_cast<const T *>(C::v_tile(smem, stage)),
                 edge);
        if (CONV)
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
// past the item's range does not exist (-inf); one past the row's causal
// limit or before its window takes the mask value (-inf for a hard mask).
template <class C>
__device__ __forceinline__ void mask_slot(const pa_rg_launch &P, const Item &c, float (&s)[C::kSA][4], int k0) {
    // Bounds in the thread's column offsets (column = c0 + off, off a
    // compile-time constant: for_each_score_off): a column is never negative,
    // so a bound below 0 counts as 0 first (nor can bound - c0 overflow).
    const int c0 = pa::tile::score_col0();
    const auto at = [c0](int bound) { return max(bound, 0) - c0; };
    // The item's keys: c_lo is never above 0 (slots start at k_lo), but the
    // ragged kernels sit at 255 registers and, without its two checks, ptxas
    // spilled 4 bytes in the 16-bit instance at head 128 for sm_90 (2026-12-05).
    const int c_lo = at(c.it.k_lo - k0), c_hi = at(c.it.k_hi - k0);
    int lo[2 * C::kMT], hi[2 * C::kMT]; // the row's visible columns
#pragma unroll
    for (int i = 0; i < 2 * C::kMT; i++) {
        const int qp = q_pos(P, c, c.it.row0 + pa::tile::warp_row<C>(i)) - k0;
        hi[i] = at(qp + 1);
        lo[i] = P.window > 0 ? at(qp - P.window + 1) : -c0;
    }
    if (P.hard_mask) {
#pragma unroll
        for (int i = 0; i < 2 * C::kMT; i++) {
            hi[i] = min(hi[i], c_hi);
            lo[i] = max(lo[i], c_lo);
        }
        pa::tile::for_each_score_off<C>(
            s, [&](int i, int off, float x) { return off < lo[i] || off >= hi[i] ? -INFINITY : x; });
    } else {
        const float mv = P.mask_value;
        pa::tile::for_each_score_off<C>(s, [&](int i, int off, float x) {
            return off < c_lo || off >= c_hi ? -INFINITY : off < lo[i] || off >= hi[i] ? x + mv : x;
        });
    }
}

// A prefill item (17..kRows rows): warp w owns tile rows [w WM, w WM + WM)
// and runs the whole slot; the warps share the K/V tiles. Its rows go to the
// f32 staging over the tiles, then to the epilogue.
// slot: the thread's shared-memory slot for its softmax state between key
// slots (park / unpark: the accumulators leave no registers for it).
template <int HP, int DT, bool FP8, bool CPT>
__device__ __forceinline__ void prefill_item(const pa_rg_launch &P, const Item &c, unsigned char *smem,
                                             const Scales &sc, pa::tile::SumSlot<MmaShape<HP, CPT>::kWM / 4> &slot,
                                             int *s_flag) {
    using C = MmaCfg<HP, DT, CPT>;
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
    walk_slots<C, FP8 ? kSlotConvert : kSlot16, 2>(
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
    // Rows HP + 8 floats apart: a half warp's float2 stores (rows g, columns
    // 2c) then meet no bank twice (4 ways with rows HP apart). The two halves
    // of each 8 columns are swapped where column bit 5 is set (epilogue's
    // SWZ): the epilogue reads a row's 8 consecutive column groups a quarter
    // warp, whose first halves would otherwise sit in 4 bank groups (2x the
    // wavefronts); the stores' XOR is by a constant per j and keeps their banks.
    constexpr int SR = HP + 8;
    float *st = reinterpret_cast<float *>(smem);
    float *st_lse = st + C::BM * SR;
    static_assert(staging_bytes<HP>(C::BM) <= mma_smem_bytes<HP, DT, CPT>(), "f32 staging fits");
    const int c0 = (lane & 3) * 2;
#pragma unroll
    for (int i = 0; i < 2 * C::kMT; i++) {
        const int row = pa::tile::warp_row<C>(i), mt = i >> 1, h = i & 1;
#pragma unroll
        for (int j = 0; j < C::kNO; j++)
            if (j * 8 < hs)
                *reinterpret_cast<float2 *>(st + row * SR + staged_col(j * 8 + c0)) =
                    make_float2(o[mt * C::kNO + j][2 * h] * sc.v, o[mt * C::kNO + j][2 * h + 1] * sc.v);
        if ((lane & 3) == 0)
            st_lse[row] = busy ? sm.lse(i) : -INFINITY;
    }
    __syncthreads();
    epilogue<DT, HP, 128, SR, true>(P, c, st, st_lse, 1, C::BM, s_flag);
}

// A decode item (<= 16 rows: one GQA group of a decode token, or a few
// speculative tokens): every warp holds the same 16 rows (Q replicated into
// each warp's 16 rows of the Q tile) and takes 16 keys of each slot; at a
// 32-key slot (head 256, or the compact head 128) two warps share 16 keys and
// each takes half of the head in P V, at a 16-key slot (compact head 256) all
// four do, a quarter each. The key slices merge in the epilogue.
template <int HP, int DT, bool CPT>
__device__ __forceinline__ void decode_item(const pa_rg_launch &P, const Item &c, unsigned char *smem, const Scales &sc,
                                            int *s_flag) {
    using S = MmaShape<HP, CPT>;
    using C = MmaCfg<HP, DT, CPT>;            // shared-memory layout
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
        qp[i] = q_pos(P, c, c.it.row0 + (lane >> 2) + 8 * i);

    pa::tile::Softmax sm;
    sm.init();
    float od[CDV::kOA][4];
    pa::tile::zero_acc(od);
    walk_slots<C, kSlot16, 0>(
        P, c, smem,
        [&] {
            // Q's 16 rows into each warp's 16 rows of the Q tile: thread t
            // copies chunk t % G of tile rows t / G + RP i, i.e. of Q rows
            // (t / G + RP i) % 16, which repeat with period D: each thread
            // works out D row offsets (row_offset divides by the group), not
            // one per copy; absent rows and chunks past the head zero-filled.
            constexpr int G = C::kGroups, RP = C::kThreads / G, ITER = 64 * G / C::kThreads;
            constexpr int D = RP >= 16 ? 1 : 16 / RP;
            static_assert(C::kThreads % G == 0 && (16 % RP == 0 || RP % 16 == 0), "Q rows repeat per thread");
            const T *q = static_cast<const T *>(P.q);
            const int t = threadIdx.x, cg = t % G, r0 = t / G;
            int64_t off[D];
#pragma unroll
            for (int k = 0; k < D; k++) {
                const int qr = (r0 + RP * k) & 15;
                off[k] = qr < c.it.nrows && cg * 8 < hs ? row_offset(P, c, c.it.row0 + qr) + cg * 8 : -1;
            }
            T *dst = C::q_tile(smem) + r0 * C::kStride + cg * 8;
#pragma unroll
            for (int i = 0; i < ITER; i++) {
                const int64_t o = off[i % D];
                pa::ptx::cp_async16_or_zero(dst + RP * i * C::kStride, q + (o >= 0 ? o : 0), o >= 0);
            }
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
    // warp's head columns, rows HP + 8 floats apart, halves swapped where
    // column bit 5 is set (as prefill_item's).
    constexpr int SR = HP + 8;
    float *st = reinterpret_cast<float *>(smem);
    float *st_lse = st + 64 * SR;
    static_assert(staging_bytes<HP>(64) <= mma_smem_bytes<HP, DT, CPT>(), "f32 staging fits");
    const int c0 = (lane & 3) * 2, srow0 = 16 * dslice + (lane >> 2), col0 = dpart * S::kDecHP;
#pragma unroll
    for (int j = 0; j < CDV::kNO; j++) {
        if (col0 + j * 8 < hs) {
            const int col = staged_col(col0 + j * 8 + c0);
            *reinterpret_cast<float2 *>(st + srow0 * SR + col) = make_float2(od[j][0] * sc.v, od[j][1] * sc.v);
            *reinterpret_cast<float2 *>(st + (srow0 + 8) * SR + col) = make_float2(od[j][2] * sc.v, od[j][3] * sc.v);
        }
    }
    if ((lane & 3) == 0 && dpart == 0) { // the warps of a slice hold the same sums
        st_lse[srow0] = sm.lse(0);
        st_lse[srow0 + 8] = sm.lse(1);
    }
    __syncthreads();
    epilogue<DT, HP, 128, SR, true>(P, c, st, st_lse, S::kDecSlices, 16, s_flag);
}

// A decode item on fp8 pages: the same work split as decode_item (every warp
// holds the item's <= 16 rows and takes 16 keys of each slot; at a 32-key
// slot two warps share 16 keys and each takes half of the head in P V, at a
// 16-key slot four a quarter each), but the MMA
// fragments come straight from the slot's raw bytes (kSlotRaw), as in the
// decode kernel's fp8 path (decode_mma.cuh), with no conversion pass through
// shared memory and no barrier for one:
//   - Q.K: k-step 4j + s takes (logical dims 2c, 2c+1, 2c+8, 2c+9) from
//     physical dims 64j + 16c + 4s + {0,1,2,3} (a dot product does not care
//     about the order of its terms). Lane (g, c) reads 16 K bytes of key g
//     per 64 dims (one 16-byte load for four k-steps), and its Q fragment
//     the same dims (read from global memory once per item, not staged).
//   - P.V: B column n of n-block 8P + k is physical dim 64P + 8n + k. Lane
//     (g, c) reads the 8 bytes of dims 64P + 8g.. of its keys 2c, 2c+1,
//     2c+8, 2c+9 and pairs them by byte permutes (one per two dims of two
//     keys). Its O fragment then holds dims 64P + 16c .. 64P + 16c + 15 of
//     rows g and g + 8 (element 8e + k of the 16 is n-block 8P + k, column
//     2c + e), which the staging stores as four 16-byte groups.
//   - The MMAs run in f16: every e4m3 and e5m2 value converts to f16 exactly
//     (one cvt per two), an f16 query is taken as it is, and a bf16 query is
//     scaled by a power of two 2^-qe per item so that its largest |q| lands
//     in [2^14, 2^15) (f16 holds bf16's 8 significant bits and more), 2^qe
//     joining the score scale. P is rounded to f16 for P V.
// Against converting the slot in shared memory this removes, per warp and
// slot, the conversion's round trip (raw loads, 16-bit stores, ldmatrix
// reads, a barrier) and, for bf16 queries, the f16-to-bf16 repacking: the
// conversion's lines were 300 of an fp8 decode slot's 1026 warp instructions
// at head 128. The F2FP count stays (64 per lane): a warp converts its own
// 16 keys, in registers, where the CTA converted the whole slot.
template <int HP, int DT, bool E5M2, bool CPT>
__device__ __forceinline__ void decode_item_fp8(const pa_rg_launch &P, const Item &c, unsigned char *smem,
                                                const Scales &sc, int *s_flag) {
    using S = MmaShape<HP, CPT>;
    using C = MmaCfg<HP, DT, CPT>;                   // shared-memory layout (the stages)
    using CD = pa::tile::Cfg<HP, 64, 16, DT>;        // the scores' register layout: 16 keys
    using CDV = pa::tile::Cfg<S::kDecHP, 64, 16, 1>; // P V in f16 over the warp's head columns
    using T = typename C::T;
    constexpr int KC = HP / 64, VC = S::kDecHP / 64; // 64-dim chunks of Q.K and of the warp's P V
    static_assert(CD::kSA == 2 && CDV::kSA == 2 && CDV::kOA == 8 * VC, "16 keys; 8 n-blocks per 64 dims");
    const int w = pa::tile::warp_id(), lane = pa::tile::lane_id(), hs = P.head_size;
    const int g = lane >> 2, qc = lane & 3;
    const int dslice = w % S::kDecSlices, dpart = w / S::kDecSlices;
    const int col0 = dpart * S::kDecHP; // the warp's first head column in P V
    int qp[2];
#pragma unroll
    for (int i = 0; i < 2; i++)
        qp[i] = q_pos(P, c, c.it.row0 + g + 8 * i);

    // Q's A fragments: qa[4j + s][h][x] = row g + 8h, dims 64j + 16c + 4s + 2x, +1.
    uint32_t qa[KC * 4][2][2];
    int qe = 0;
    {
        auto each_q = [](auto fn) { // every (k-step, row half) of the lane
#pragma unroll
            for (int ks = 0; ks < KC * 4; ks++)
#pragma unroll
                for (int h = 0; h < 2; h++)
                    fn(ks, h);
        };
        const T *q = static_cast<const T *>(P.q);
        const T *qrow[2];
#pragma unroll
        for (int h = 0; h < 2; h++)
            qrow[h] = g + 8 * h < c.it.nrows ? q + row_offset(P, c, c.it.row0 + g + 8 * h) : nullptr;
        uint2 rq[KC * 4][2];
        each_q([&](int ks, int h) {
            const int d = 64 * (ks >> 2) + 16 * qc + 4 * (ks & 3); // 4 elements, inside the head or past it
            rq[ks][h] = qrow[h] && d < hs ? *reinterpret_cast<const uint2 *>(qrow[h] + d) : make_uint2(0u, 0u);
        });
        if constexpr (DT == 1) {
            each_q([&](int ks, int h) {
                qa[ks][h][0] = rq[ks][h].x;
                qa[ks][h][1] = rq[ks][h].y;
            });
        } else {
            float mx = 0.0f;
            each_q([&](int ks, int h) {
                const float2 a = pa::tile::unpack2<2>(rq[ks][h].x), b = pa::tile::unpack2<2>(rq[ks][h].y);
                mx = fmaxf(mx, fmaxf(fmaxf(fabsf(a.x), fabsf(a.y)), fmaxf(fabsf(b.x), fabsf(b.y))));
            });
#pragma unroll
            for (int o = 16; o > 0; o >>= 1)
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
            qe = pa::tile::f16_fit_exponent(mx);
            const float f = ldexpf(1.0f, -qe);
            each_q([&](int ks, int h) {
                const float2 a = pa::tile::unpack2<2>(rq[ks][h].x), b = pa::tile::unpack2<2>(rq[ks][h].y);
                qa[ks][h][0] = pa::tile::pack2<1>(a.x * f, a.y * f);
                qa[ks][h][1] = pa::tile::pack2<1>(b.x * f, b.y * f);
            });
        }
    }
    const float qk = sc.qk * ldexpf(1.0f, qe);
    // exact f16x2 of bytes 0, 1 (cvt) or 2, 3 (cvt_hi): e5m2 by one byte permute, no shift
    auto cvt = [](uint32_t bits) { return pa::tile::fp8x2_f16<E5M2, false>(bits); };
    auto cvt_hi = [](uint32_t bits) { return pa::tile::fp8x2_f16<E5M2, true>(bits); };
    // The lane's byte offsets in a raw slot, fixed for the item: K row 16
    // dslice + 8 nb + g at dims 64 x + 16 c (raw_swz permutes chunks inside
    // 128-byte lines, so dims 128 further sit 128 bytes further), and V rows
    // 16 dslice + (2c, 2c+1, 2c+8, 2c+9) at dims col0 + 64 v + 8 g.
    constexpr int KX = KC > 1 ? 2 : 1;
    int ko[2][KX], vo[4][VC];
#pragma unroll
    for (int nb = 0; nb < 2; nb++)
#pragma unroll
        for (int x = 0; x < KX; x++)
            ko[nb][x] = raw_swz<HP>(16 * dslice + 8 * nb + g, 64 * x + 16 * qc);
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int v = 0; v < VC; v++)
            vo[i][v] = raw_swz<HP>(16 * dslice + 2 * qc + (i & 1) + 8 * (i >> 1), col0 + 64 * v + 8 * g);

    pa::tile::Softmax sm;
    sm.init();
    float od[CDV::kOA][4];
    pa::tile::zero_acc(od);
    walk_slots<C, kSlotRaw, 0>(
        P, c, smem, [] {},
        [&](int k0, const uint8_t *rk, const uint8_t *rv, bool edge) {
            const int kd = k0 + 16 * dslice;
            if (kd >= c.it.k_hi)
                return;
            float s[2][4];
            pa::tile::zero_acc(s);
#pragma unroll
            for (int nb = 0; nb < 2; nb++) {
#pragma unroll
                for (int j = 0; j < KC; j++) {
                    if (HP > 128 && j == KC - 1 && 64 * j >= hs) // (at head 256, dims 192.. can be empty)
                        break;
                    const uint4 u = *reinterpret_cast<const uint4 *>(rk + ko[nb][j & 1] + 128 * (j >> 1));
                    const uint32_t w4[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
                    for (int s4 = 0; s4 < 4; s4++) {
                        const uint32_t(&q2)[2][2] = qa[4 * j + s4];
                        const uint32_t a[4] = {q2[0][0], q2[1][0], q2[0][1], q2[1][1]};
                        pa::tile::mma16816<1>(s[nb], a, cvt(w4[s4]), cvt_hi(w4[s4]));
                    }
                }
            }
            if (edge)
                pa::tile::for_each_score_reg<CD>(
                    s, [&](int i, int col, float x) { return logit(P, c, x, kd + col, qp[i], qk); });
            else
                pa::tile::for_each_score_reg<CD>(s, [&](int, int, float x) { return logit_unmasked(P, x, qk); });
            uint32_t pk[2][2];
            sm.update<CDV>(s, od, pk);
            const uint32_t a[4] = {pk[0][0], pk[0][1], pk[1][0], pk[1][1]};
#pragma unroll
            for (int v = 0; v < VC; v++) {
                const int d0 = col0 + 64 * v;
                if (HP > 128 && v == VC - 1 && d0 >= hs) // (at head 256, the upper part's dims 192..)
                    break;
                uint32_t lo[4], hi[4]; // dims d0 + 8g + 0..3 and 4..7 of keys 2c, 2c+1, 2c+8, 2c+9
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    const uint2 u = *reinterpret_cast<const uint2 *>(rv + vo[i][v]);
                    lo[i] = u.x;
                    hi[i] = u.y;
                }
#pragma unroll
                for (int q4 = 0; q4 < 4; q4++) {
                    // n-blocks 8v + 2q (dims d0 + 8n + 2q) and 8v + 2q + 1 (d0 + 8n + 2q + 1):
                    // X holds keys 2c, 2c+1 of both dims, Y keys 2c+8, 2c+9.
                    const uint32_t *wd = q4 < 2 ? lo : hi;
                    const uint32_t sel = q4 % 2 == 0 ? pa::tile::PAIR_D01 : pa::tile::PAIR_D23;
                    const uint32_t X = pa::tile::prmt(wd[0], wd[1], sel), Y = pa::tile::prmt(wd[2], wd[3], sel);
                    pa::tile::mma16816<1>(od[8 * v + 2 * q4], a, cvt(X), cvt(Y));
                    pa::tile::mma16816<1>(od[8 * v + 2 * q4 + 1], a, cvt_hi(X), cvt_hi(Y));
                }
            }
        });
    sm.finalize<CDV>(od);

    // f32 staging over the tiles, rows SR floats apart: key slice s's 16 rows
    // at rows 16 s. The lane's 16 dims of each 64 go as four 16-byte groups,
    // the two halves of each 8 swapped where dim bit 5 is set (epilogue's
    // SWZ), so that a quarter warp's stores (rows 2m, 2m + 1 at 8 floats'
    // offset, columns 16c) meet no bank twice.
    constexpr int SR = HP + 8;
    float *st = reinterpret_cast<float *>(smem);
    float *st_lse = st + 64 * SR;
    static_assert(staging_bytes<HP>(64) <= mma_smem_bytes<HP, DT, CPT>(), "f32 staging fits");
    const int xo = (qc >> 1) * 4;
#pragma unroll
    for (int v = 0; v < VC; v++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            float *base = st + (16 * dslice + g + 8 * h) * SR + col0 + 64 * v + 16 * qc;
#pragma unroll
            for (int e = 0; e < 2; e++) {
                float x[8];
#pragma unroll
                for (int k = 0; k < 8; k++)
                    x[k] = od[8 * v + k][2 * h + e] * sc.v;
                *reinterpret_cast<float4 *>(base + 8 * e + xo) = make_float4(x[0], x[1], x[2], x[3]);
                *reinterpret_cast<float4 *>(base + 8 * e + (4 ^ xo)) = make_float4(x[4], x[5], x[6], x[7]);
            }
        }
    if (qc == 0 && dpart == 0) { // the warps of a slice hold the same sums
        st_lse[16 * dslice + g] = sm.lse(0);
        st_lse[16 * dslice + g + 8] = sm.lse(1);
    }
    __syncthreads();
    epilogue<DT, HP, 128, SR, true>(P, c, st, st_lse, S::kDecSlices, 16, s_flag);
}

// FP8: the instance for fp8 pages (the launcher picks it when the cache dtype
// is not the query's); each instance carries only its own copy arm. The two
// item shapes are separate code, each with its own accumulators: the prefill
// arm's 32 rows per warp take the registers, and the decode arm's state is
// not live beside them.
// CPT: the compact shape (MmaShape).
template <int HP, int DT, bool FP8, bool CPT = false>
__global__ void __launch_bounds__(128, 2) ragged_mma_kernel(const __grid_constant__ pa_rg_launch P) {
    PA_DYNAMIC_SMEM(unsigned char, smem);
    PA_STATIC_SMEM(s_idx, int);
    PA_STATIC_SMEM(s_flag, int);
    PA_STATIC_SMEM(s_item, Item);
    PA_STATIC_SMEM(sums_tab, pa::tile::SumSlot<MmaShape<HP, CPT>::kWM / 4>[128]);
    PA_STATIC_SMEM(s_sc, Scales);
    const Scales &sc = s_sc;

    for (;;) {
        const int idx = next_item(P, &s_idx);
        if (idx >= hdr(P)->num_items) // (read per item: no register held across the items)
            break;
        // The item in shared memory: its fields are read where they are used
        // (reloaded after each barrier), not held in registers across the
        // slots beside the accumulators.
        // Thread 0 sets the item and its KV head's scales; the barrier publishes them.
        if (threadIdx.x == 0) {
            s_item = load_item(P, idx);
            const int sh = s_item.it.kvh * P.scale_hs;
            const float k_scale = FP8 && P.k_scale ? P.k_scale[sh] : 1.0f;
            s_sc.v = FP8 && P.v_scale ? P.v_scale[sh] : 1.0f;
            s_sc.qk = P.sm_scale * k_scale; // fp8: K's scale applied to the scores
        }
        __syncthreads();
        const Item &c = s_item;
        if (c.it.nrows > PA_RG_DEC_ROWS) {
            prefill_item<HP, DT, FP8, CPT>(P, c, smem, sc, sums_tab[threadIdx.x], &s_flag);
        } else if constexpr (!FP8) {
            decode_item<HP, DT, CPT>(P, c, smem, sc, &s_flag);
        } else {
            if (P.kv_dtype == 4)
                decode_item_fp8<HP, DT, true, CPT>(P, c, smem, sc, &s_flag);
            else
                decode_item_fp8<HP, DT, false, CPT>(P, c, smem, sc, &s_flag);
        }
        __syncthreads(); // staging, s_item and s_flag are reused by the next item
    }
}

// An instance's launch (cuda/ragged/instances/, both passes of
// launch_persistent): the full shape, or at heads 128 and 256 the compact one
// where the full one's shared memory does not fit the device. The check pass
// tries the full shape and takes the compact one on its refusal (one fit
// question, as prefill's launcher); the launch pass asks it again (the
// compact kernel has its own grid cache).
template <int HP, int DT, bool FP8>
int launch_mma(const pa_rg_launch *p, cudaStream_t st, bool launch, LaunchCache (&cache)[64],
               LaunchCache (&cache_cpt)[64]) {
    constexpr size_t full = mma_smem_bytes<HP, DT>();
    if constexpr (HP >= 128) {
        constexpr size_t cpt = mma_smem_bytes<HP, DT, true>();
        static_assert(cpt <= 90 * 1024, "the compact shape fits every sm_80+ device");
        if (!launch) {
            const int e = launch_persistent(ragged_mma_kernel<HP, DT, FP8>, cache, 128, full, p, st, false);
            return e == PA_LAUNCH_SMEM_SHORT
                       ? launch_persistent(ragged_mma_kernel<HP, DT, FP8, true>, cache_cpt, 128, cpt, p, st, false)
                       : e;
        }
        if (!pa_smem_fits(ragged_mma_kernel<HP, DT, FP8>, full))
            return launch_persistent(ragged_mma_kernel<HP, DT, FP8, true>, cache_cpt, 128, cpt, p, st, true);
    }
    return launch_persistent(ragged_mma_kernel<HP, DT, FP8>, cache, 128, full, p, st, launch);
}

} // namespace rg
} // namespace pa
