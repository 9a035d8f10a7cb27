// Ragged paged attention, tensor-core kernel for f16 / bf16 queries (cache of
// the query dtype, or fp8 e4m3/e5m2 dequantised into it). Persistent CTAs of 4
// warps fetch work items (ragged_common.cuh) until the list is done; each item
// is one of two shapes, decided by its row count:
//   prefill tile (17..64 rows): warp w owns rows 16w..16w+15 and runs the whole
//       64-key K/V tile (FlashAttention-2: the warps share the K/V tile);
//   decode item (<= 16 rows, one GQA group of a decode token or a few
//       speculative tokens): all warps hold the same 16 rows (Q replicated into
//       each warp's slot) and warp w runs keys 16w..16w+15 of each 64-key tile;
//       the four partial softmaxes merge in the epilogue. So a decode pays
//       16 x 16 MMA work per warp per tile, not 64 x 64, and reads every K/V
//       byte once for its whole GQA group.
// K/V rows are gathered row by row through the page table (any page size), by
// cp.async for a cache of the query dtype and through registers (dequantise,
// round to the query dtype, as the reference does) for fp8.
// The warp-level math is cuda/attn_tile.cuh's (qk, for_each_score, Softmax,
// pv); the decode shape reuses it with a 16-key Cfg on a 16-row slice.
#pragma once

#include "../attn_tile.cuh"
#include "ragged_common.cuh"

namespace pa {
namespace rg {

template <int HP> struct MmaShape {
    static constexpr int kStages = HP <= 128 ? 2 : 1; // HP 256: 1 stage, 2 CTAs per SM
    static constexpr int kSub = HP <= 128 ? 64 : 32;  // prefill keys per qk step (register budget)
};

template <int HP, int DT> constexpr size_t mma_smem_bytes() {
    using C = pa::tile::Cfg<HP, 64, PA_RG_KEY_TILE, DT>;
    return C::smem_bytes(MmaShape<HP>::kStages);
}

// fp8 K or V rows for load_rows_gather: 8 bytes per group, dequantised.
struct Fp8Rows {
    const uint8_t *kv;
    const pa_rg_launch *P; // a __grid_constant__ parameter: no local copy
    Item c;
    int k0, which, e5m2;
    float scale;
    __device__ __forceinline__ bool valid(int r) const {
        const int key = k0 + r;
        return key >= c.it.k_lo && key < c.it.k_hi;
    }
    __device__ __forceinline__ void load8(int r, int d0, float (&v)[8]) const {
        const int64_t off = kv_row(*P, c, k0 + r, which);
        if (off < 0) {
#pragma unroll
            for (int e = 0; e < 8; e++)
                v[e] = 0.0f;
            return;
        }
        const uint2 raw = *reinterpret_cast<const uint2 *>(kv + off + d0);
        const uint8_t *b = reinterpret_cast<const uint8_t *>(&raw);
#pragma unroll
        for (int e = 0; e < 8; e++)
            v[e] = (e5m2 ? pa::to_float<4>(b[e]) : pa::to_float<3>(b[e])) * scale;
    }
};

// K or V rows [k0, k0 + PA_RG_KEY_TILE) of the item by cp.async, one page-table
// lookup per row. The thread layout is load_rows_async's (thread t copies
// 16-byte group t % G of rows t / G + (kThreads / G) i, i < ITER): the G lanes
// sharing a row are consecutive lanes of one warp, so lane j < ITER of them
// resolves the row of iteration j and the others take it by shuffle (the
// generic loader resolved every row once per 16-byte group: 16 lookups per row
// at head 128).
template <class C>
__device__ __forceinline__ void load_kv_rows(typename C::T *tile, const pa_rg_launch &P, const Item &c, int k0,
                                             int which, int head_size) {
    using T = typename C::T;
    constexpr int G = C::kGroups, ITER = PA_RG_KEY_TILE * G / C::kThreads;
    static_assert(G <= 32 && 32 % G == 0 && ITER >= 1 && ITER <= G && PA_RG_KEY_TILE * G % C::kThreads == 0,
                  "load_kv_rows: the lanes of a row must share a warp");
    const int tid = threadIdx.x, g = tid % G, lane = tid & 31, first = lane - g;
    const T *kvT = static_cast<const T *>(P.kv);
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
        T *dst = tile + r * C::kStride + g * 8;
        if (off >= 0 && g * 8 < head_size)
            pa::ptx::cp_async16(dst, kvT + off + g * 8);
        else
            *reinterpret_cast<uint4 *>(dst) = make_uint4(0, 0, 0, 0);
    }
}

template <int HP, int DT>
__global__ void __launch_bounds__(128) ragged_mma_kernel(const __grid_constant__ pa_rg_launch P) {
    using C = pa::tile::Cfg<HP, 64, PA_RG_KEY_TILE, DT>;      // shared-memory layout
    using CP = pa::tile::Cfg<HP, 64, MmaShape<HP>::kSub, DT>; // prefill warp math
    using CD = pa::tile::Cfg<HP, 64, 16, DT>;                 // decode warp math: 16 keys per warp
    using T = typename C::T;
    constexpr int kStages = MmaShape<HP>::kStages;
    constexpr int kSub = MmaShape<HP>::kSub;
    static_assert(C::kNO == CP::kNO && C::kNO == CD::kNO, "one O accumulator shape");
    static_assert(64 * HP * 4 + 64 * 4 <= C::smem_bytes(kStages), "f32 staging fits in the tiles");

    PA_DYNAMIC_SMEM(unsigned char, smem);
    PA_STATIC_SMEM(int s_idx, s_flag);
    const int w = pa::tile::warp_id(), lane = pa::tile::lane_id();
    const int hs = P.head_size;
    const bool fp8 = P.kv_dtype != P.q_dtype;
    const float k_scale = fp8 && P.k_scale ? *P.k_scale : 1.0f;
    const float v_scale = fp8 && P.v_scale ? *P.v_scale : 1.0f;
    const int num_items = hdr(P)->num_items;

    for (;;) {
        const int idx = next_item(P, &s_idx);
        if (idx >= num_items)
            break;
        const Item c = load_item(P, idx);
        const bool dec = c.it.nrows <= PA_RG_DEC_ROWS;
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
        auto load_kv = [&](int t, int stage) {
            const int k0 = c.it.k_lo + t * PA_RG_KEY_TILE;
            if (!fp8) {
                load_kv_rows<C>(C::k_tile(smem, stage), P, c, k0, 0, hs);
                load_kv_rows<C>(C::v_tile(smem, stage), P, c, k0, 1, hs);
            } else {
                const Fp8Rows kr{static_cast<const uint8_t *>(P.kv), &P, c, k0, 0, P.kv_dtype == 4, k_scale};
                const Fp8Rows vr{static_cast<const uint8_t *>(P.kv), &P, c, k0, 1, P.kv_dtype == 4, v_scale};
                pa::tile::load_rows_gather<C, PA_RG_KEY_TILE, false>(C::k_tile(smem, stage), kr, hs);
                pa::tile::load_rows_gather<C, PA_RG_KEY_TILE, false>(C::v_tile(smem, stage), vr, hs);
            }
        };

        // This thread's two rows (register rows 0 and 1) and their positions.
        const int trow0 = pa::tile::warp_row<C>(0), trow1 = pa::tile::warp_row<C>(1);
        const int pr0 = c.it.row0 + (dec ? trow0 - 16 * w : trow0);
        const int pr1 = c.it.row0 + (dec ? trow1 - 16 * w : trow1);
        const int qp0 = q_pos(c, pr0), qp1 = q_pos(c, pr1);
        const bool warp_has_rows = dec || 16 * w < c.it.nrows;

        pa::tile::Softmax sm;
        sm.init();
        float o[C::kNO][4];
        pa::tile::zero_acc(o);

        const int ntiles = (c.it.k_hi - c.it.k_lo + PA_RG_KEY_TILE - 1) / PA_RG_KEY_TILE;
        load_kv(0, 0);
        pa::tile::cp_async_commit();
        for (int t = 0; t < ntiles; t++) {
            const int stage = kStages == 2 ? (t & 1) : 0;
            if constexpr (kStages == 2) {
                if (t + 1 < ntiles)
                    load_kv(t + 1, (t + 1) & 1);
                pa::tile::cp_async_commit();
                pa::tile::cp_async_wait<1>();
            } else {
                pa::tile::cp_async_wait<0>();
            }
            __syncthreads();
            const int k0 = c.it.k_lo + t * PA_RG_KEY_TILE;
            const T *kt = C::k_tile(smem, stage);
            const T *vt = C::v_tile(smem, stage);
            if (dec) {
                if (k0 + 16 * w < c.it.k_hi) {
                    float s[CD::kNS][4];
                    pa::tile::qk<CD>(s, qt, kt + 16 * w * C::kStride, hs);
                    pa::tile::for_each_score<CD>(s, [&](int row, int col, float x) {
                        return logit(P, c, x, k0 + 16 * w + col, row == trow0 ? qp0 : qp1);
                    });
                    uint32_t pk[CD::kSA][2];
                    sm.update<CD>(s, o, pk);
                    pa::tile::pv<CD>(o, pk, vt + 16 * w * C::kStride, hs);
                }
            } else if (warp_has_rows) {
#pragma unroll
                for (int sub = 0; sub < PA_RG_KEY_TILE / kSub; sub++) {
                    if (k0 + sub * kSub >= c.it.k_hi)
                        break;
                    float s[CP::kNS][4];
                    pa::tile::qk<CP>(s, qt, kt + sub * kSub * C::kStride, hs);
                    pa::tile::for_each_score<CP>(s, [&](int row, int col, float x) {
                        return logit(P, c, x, k0 + sub * kSub + col, row == trow0 ? qp0 : qp1);
                    });
                    uint32_t pk[CP::kSA][2];
                    sm.update<CP>(s, o, pk);
                    pa::tile::pv<CP>(o, pk, vt + sub * kSub * C::kStride, hs);
                }
            }
            __syncthreads(); // this stage is refilled next
            if constexpr (kStages == 1) {
                if (t + 1 < ntiles) {
                    load_kv(t + 1, 0);
                    pa::tile::cp_async_commit();
                }
            }
        }
        pa::tile::cp_async_wait<0>();
        // The staging below overwrites the tiles; with no key tile the copies
        // issued by load_kv(0, 0) were ordered by no barrier yet.
        __syncthreads();
        sm.finalize<C>(o);

        // f32 staging over the tiles (every warp is past its last tile read).
        float *st = reinterpret_cast<float *>(smem);
        float *st_lse = st + 64 * HP;
        const int c0 = (lane & 3) * 2;
#pragma unroll
        for (int j = 0; j < C::kNO; j++) {
            if (j * 8 < hs) {
                *reinterpret_cast<float2 *>(st + trow0 * HP + j * 8 + c0) = make_float2(o[j][0], o[j][1]);
                *reinterpret_cast<float2 *>(st + trow1 * HP + j * 8 + c0) = make_float2(o[j][2], o[j][3]);
            }
        }
        if ((lane & 3) == 0) {
            st_lse[trow0] = warp_has_rows ? sm.lse(0) : -INFINITY;
            st_lse[trow1] = warp_has_rows ? sm.lse(1) : -INFINITY;
        }
        __syncthreads();
        epilogue<DT, HP, 128>(P, c, st, st_lse, dec ? 4 : 1, 16, &s_flag);
        __syncthreads(); // staging and s_flag are reused by the next item
    }
}

} // namespace rg
} // namespace pa
