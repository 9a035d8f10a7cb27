// Ragged paged attention, tensor-core kernel for f16 / bf16 queries (cache of
// the query dtype, or fp8 e4m3/e5m2 dequantised into it). Persistent CTAs of 4
// warps fetch work items (ragged_common.cuh) until the list is done; each item
// walks its keys in slots of kSlot keys (64, or 32 at head 256), two slots in
// flight: slot t + 1 is copied while slot t is computed, at every head size.
// An item is one of two shapes, decided by its row count:
//   prefill tile (17..64 rows): warp w owns rows 16w..16w+15 and runs the whole
//       slot (FlashAttention-2: the warps share the K/V tile);
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
// The warp-level math is cuda/attn_tile.cuh's (qk, for_each_score, Softmax,
// pv); the decode shape reuses it with a 16-key Cfg on a 16-row slice.
#pragma once

#include "../attn_tile.cuh"
#include "ragged_common.cuh"

namespace pa {
namespace rg {

// Keys per pipeline slot: 64, or 32 at head 256, where two 64-key slots would
// leave one CTA per SM (the register budget also holds a prefill warp's scores
// to 32 keys there). Two slots at every head size: 87 KB at head 128 and 99 KB
// at head 256, 2 CTAs per SM.
template <int HP> struct MmaShape {
    static constexpr int kStages = 2;
    static constexpr int kSlot = HP <= 128 ? 64 : 32;
    static constexpr int kDecSlices = kSlot / 16;    // decode: 16-key slices per slot
    static constexpr int kDecSplit = 4 / kDecSlices; // decode: warps per slice (head-dimension parts)
    static constexpr int kDecHP = HP / kDecSplit;    // decode: head columns per warp in P V
    static_assert(PA_RG_KEY_TILE % kSlot == 0, "a slot divides the planner's key tile");
};

template <int HP, int DT> constexpr size_t mma_smem_bytes() {
    using C = pa::tile::Cfg<HP, 64, MmaShape<HP>::kSlot, DT>;
    return C::smem_bytes(MmaShape<HP>::kStages);
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
template <class C, bool E5M2> __device__ __forceinline__ void dequant_slot(void *smem, const uint8_t *raw) {
    pa::tile::dequant_tile<C, C::BN, C::HP, C::kStride, E5M2, false>(C::k_tile(smem, 0), raw, 1.0f);
    pa::tile::dequant_tile<C, C::BN, C::HP, C::kStride, E5M2, false>(C::v_tile(smem, 0), raw + C::BN * C::HP, 1.0f);
}

// FP8: the instance for fp8 pages (the launcher picks it when the cache dtype
// is not the query's); each instance carries only its own copy arm.
template <int HP, int DT, bool FP8>
__global__ void __launch_bounds__(128, HP <= 64 ? 3 : 2) ragged_mma_kernel(const __grid_constant__ pa_rg_launch P) {
    using S = MmaShape<HP>;
    constexpr int kSlot = S::kSlot, kStages = S::kStages;
    using C = pa::tile::Cfg<HP, 64, kSlot, DT>; // shared-memory layout and prefill warp math
    using CD = pa::tile::Cfg<HP, 64, 16, DT>;   // decode scores: 16 keys per warp, whole head
    // decode P V: 16 keys, S::kDecHP head columns of the HP-wide V rows
    using CDV = pa::tile::Cfg<S::kDecHP, 64, 16, DT, 16, false, C::kStride>;
    using T = typename C::T;
    static_assert(C::kSA == CD::kSA * kSlot / 16 && CD::kSA == CDV::kSA, "score shapes");
    static_assert(64 * HP * 4 + 64 * 4 <= C::smem_bytes(kStages), "f32 staging fits in the tiles");

    PA_DYNAMIC_SMEM(unsigned char, smem);
    PA_STATIC_SMEM(int s_idx, s_flag);
    const int w = pa::tile::warp_id(), lane = pa::tile::lane_id();
    const int hs = P.head_size;
    constexpr bool fp8 = FP8;
    const float k_scale = fp8 && P.k_scale ? *P.k_scale : 1.0f;
    const float v_scale = fp8 && P.v_scale ? *P.v_scale : 1.0f;
    const float qk_scale = P.sm_scale * k_scale; // fp8: K's scale applied to the scores
    const int num_items = hdr(P)->num_items;

    for (;;) {
        const int idx = next_item(P, &s_idx);
        if (idx >= num_items)
            break;
        const Item c = load_item(P, idx);
        const bool dec = c.it.nrows <= PA_RG_DEC_ROWS;
        // A decode warp's key slice of each slot and its part of the head in P V.
        const int dslice = w % S::kDecSlices, dpart = w / S::kDecSlices;
        T *qt = C::q_tile(smem);
        const T *q = static_cast<const T *>(P.q);

        // Q: a decode item's 16 rows go into every warp's slot.
        pa::tile::load_rows_async<C, 64>(
            qt,
            [&](int r) -> const T * {
                const int pr = dec ? (r & 15) : r;
                return pr < c.it.nrows ? q + row_offset(P, c, c.it.row0 + pr) : nullptr;
            },
            hs);
        // A cache of the query dtype: slot t straight into stage t & 1. An fp8
        // cache: slot t raw into stage 1's space, converted into stage 0 after
        // the barrier (dequant_slot); slot t + 1's raw copy then runs under
        // slot t's math.
        uint8_t *raw = reinterpret_cast<uint8_t *>(C::k_tile(smem, 1));
        static_assert(2 * kSlot * HP <= (C::kv_elems + C::v_elems) * sizeof(T), "raw K and V fit in a stage");
        auto load_kv = [&](int t, int stage) {
            const int k0 = c.it.k_lo + t * kSlot;
            if (!fp8) {
                load_kv_rows<C, false>(C::k_tile(smem, stage), P, c, k0, 0, hs);
                load_kv_rows<C, false>(C::v_tile(smem, stage), P, c, k0, 1, hs);
            } else {
                load_kv_rows<C, true>(raw, P, c, k0, 0, hs);
                load_kv_rows<C, true>(raw + kSlot * HP, P, c, k0, 1, hs);
            }
        };
        auto dequant = [&]() {
            if (P.kv_dtype == 4)
                dequant_slot<C, true>(smem, raw);
            else
                dequant_slot<C, false>(smem, raw);
        };

        // This thread's two rows (register rows 0 and 1; the hook's row
        // argument) and their positions.
        const int trow0 = pa::tile::warp_row<C>(0), trow1 = pa::tile::warp_row<C>(1);
        const int pr0 = c.it.row0 + (dec ? trow0 - 16 * w : trow0);
        const int pr1 = c.it.row0 + (dec ? trow1 - 16 * w : trow1);
        const int qp0 = q_pos(c, pr0), qp1 = q_pos(c, pr1);
        const int qmin = q_pos(c, c.it.row0); // rows are token-major: the least position
        const bool warp_has_rows = dec || 16 * w < c.it.nrows;

        pa::tile::Softmax sm;
        sm.init();
        float o[C::kNO][4];
        pa::tile::zero_acc(o);
        // A decode warp accumulates its S::kDecHP head columns in the first
        // CDV::kNO blocks of o.
        float(&od)[CDV::kOA][4] = *reinterpret_cast<float(*)[CDV::kOA][4]>(&o[0][0]);

        const int nslots = (c.it.k_hi - c.it.k_lo + kSlot - 1) / kSlot;
        load_kv(0, 0);
        pa::tile::cp_async_commit();
        if (fp8)
            pa::tile::cp_async_wait<0>();
        for (int t = 0; t < nslots; t++) {
            const int stage = fp8 ? 0 : t & 1;
            if (!fp8) {
                if (t + 1 < nslots)
                    load_kv(t + 1, (t + 1) & 1);
                pa::tile::cp_async_commit();
                pa::tile::cp_async_wait<1>();
            }
            // Slot t landed (fp8: its raw bytes; after the first slot the
            // barrier that ended the previous one saw them land).
            if (!fp8 || t == 0)
                __syncthreads();
            if (fp8) {
                dequant();
                __syncthreads(); // stage 0 whole; the raw space is free
                if (t + 1 < nslots)
                    load_kv(t + 1, 1);
                pa::tile::cp_async_commit();
            }
            const int k0 = c.it.k_lo + t * kSlot;
            const T *kt = C::k_tile(smem, stage);
            const T *vt = C::v_tile(smem, stage);
            // An edge slot holds a key past some row's causal limit or past the
            // item's range, or a window applies: its scores take the whole mask
            // (logit). Elsewhere every key is visible to every row: scale and
            // cap only (logit_unmasked), as FlashAttention-2 masks only the
            // diagonal tiles. (The planner's chunks end on key-tile bounds or
            // at the causal limit, so the range test adds no slot today.)
            const bool edge = k0 + kSlot > c.it.k_hi || k0 + kSlot - 1 > qmin || P.window > 0;
            if (dec) {
                const int kd = k0 + 16 * dslice;
                if (kd < c.it.k_hi) {
                    float s[CD::kNS][4];
                    pa::tile::qk<CD>(s, qt, kt + 16 * dslice * C::kStride, hs);
                    if (edge)
                        pa::tile::for_each_score<CD>(s, [&](int row, int col, float x) {
                            return logit(P, c, x, kd + col, row == trow0 ? qp0 : qp1, qk_scale);
                        });
                    else
                        pa::tile::for_each_score<CD>(s,
                                                     [&](int, int, float x) { return logit_unmasked(P, x, qk_scale); });
                    uint32_t pk[CD::kSA][2];
                    sm.update<CDV>(s, od, pk);
                    pa::tile::pv<CDV>(od, pk, vt + 16 * dslice * C::kStride + dpart * S::kDecHP,
                                      hs - dpart * S::kDecHP);
                }
            } else if (warp_has_rows) {
                float s[C::kNS][4];
                pa::tile::qk<C>(s, qt, kt, hs);
                if (edge)
                    pa::tile::for_each_score<C>(s, [&](int row, int col, float x) {
                        return logit(P, c, x, k0 + col, row == trow0 ? qp0 : qp1, qk_scale);
                    });
                else
                    pa::tile::for_each_score<C>(s, [&](int, int, float x) { return logit_unmasked(P, x, qk_scale); });
                uint32_t pk[C::kSA][2];
                sm.update<C>(s, o, pk);
                pa::tile::pv<C>(o, pk, vt, hs);
            }
            if (fp8)
                pa::tile::cp_async_wait<0>(); // slot t + 1's raw bytes, before the barrier
            __syncthreads();                  // this stage is refilled next
        }
        pa::tile::cp_async_wait<0>();
        // The staging below overwrites the tiles; with no key slot the copies
        // issued by load_kv(0, 0) were ordered by no barrier yet.
        __syncthreads();
        sm.finalize<C>(o);

        // f32 staging over the tiles (every warp is past its last tile read):
        // a prefill warp's rows with every column; a decode warp's rows in its
        // key slice's block of 16 with its head columns.
        float *st = reinterpret_cast<float *>(smem);
        float *st_lse = st + 64 * HP;
        const int c0 = (lane & 3) * 2;
        const int srow0 = S::kDecSplit > 1 && dec ? 16 * dslice + (lane >> 2) : trow0, srow1 = srow0 + 8;
        const int col0 = S::kDecSplit > 1 && dec ? dpart * S::kDecHP : 0;
        const int nblk = S::kDecSplit > 1 && dec ? CDV::kNO : C::kNO;
#pragma unroll
        for (int j = 0; j < C::kNO; j++) {
            if ((S::kDecSplit == 1 || j < nblk) && col0 + j * 8 < hs) {
                *reinterpret_cast<float2 *>(st + srow0 * HP + col0 + j * 8 + c0) =
                    make_float2(o[j][0] * v_scale, o[j][1] * v_scale);
                *reinterpret_cast<float2 *>(st + srow1 * HP + col0 + j * 8 + c0) =
                    make_float2(o[j][2] * v_scale, o[j][3] * v_scale);
            }
        }
        if ((lane & 3) == 0 && (!dec || dpart == 0)) { // a decode pair's twins hold the same sums
            st_lse[srow0] = warp_has_rows ? sm.lse(0) : -INFINITY;
            st_lse[srow1] = warp_has_rows ? sm.lse(1) : -INFINITY;
        }
        __syncthreads();
        epilogue<DT, HP, 128>(P, c, st, st_lse, dec ? S::kDecSlices : 1, 16, &s_flag);
        __syncthreads(); // staging and s_flag are reused by the next item
    }
}

} // namespace rg
} // namespace pa
