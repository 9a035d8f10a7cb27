// Decode attention over a paged KV cache: one kernel for v1, v2 and the
// recommended entry (csrc/shared/decode_internal.h explains the decomposition; the CPU
// reference csrc/reference/paged_decode.c is the specification).
//
// CTA = (sequence, KV head, head chunk, KV split), 128 threads. It serves every
// query head of its GQA group (up to 16), so each K/V byte of the split is read
// from HBM once. The split is walked in tiles of T tokens (T = 8 KiB of K, 8..64
// tokens) through a 3-stage cp.async pipeline:
//
//   loader   16-byte (or the largest aligned) cp.async copies of the tile's K
//            rows and V into shared memory, each thread resolving its token's
//            address once; tokens that are not attended (past seq_len, before
//            the window, dropped by block-sparse for every head of the CTA, or
//            in a block whose id is out of range) are zero-filled instead of
//            read, so padding NaNs never reach a sum. Block ids come from a
//            64-entry window of the block table staged in shared memory.
//   Q.K      items (4-head group, token, lane slice): a K chunk read from
//            shared memory feeds 4 heads; ds lanes split the dot products and
//            reduce with shuffles. Logits get scale, soft cap, ALiBi, mask.
//   softmax  one warp per head: running max, rescale factor, running sum.
//   P.V      thread = (4-head group, 8 output dims, token slice); f32
//            accumulators in registers, rescaled per tile (online softmax).
//            Flash V: slice r takes tokens r, r + S, ... of the tile, so
//            every slice has work; vLLM V: 8-token groups (its rows).
//   epilogue token slices are summed in a fixed order; one split writes the
//            output, several write (tmp_out, exp_sums, max_logits) for the merge
//            kernel, which sums splits in order. Nothing depends on other
//            sequences of the batch: outputs are batch invariant.
//
// Tiles start at multiples of T in absolute token positions, so tile and split
// boundaries depend only on the sequence. Templates: the (query, cache) dtype
// pair and the tile geometry G: DynGeo reads head size, tile, layout and the
// rest at run time (every shape); FixGeo<128, CT, NG> makes them compile-time
// constants for head 128 with a flash layout (the serving shapes), so the
// compiler unrolls every loop of the tile (see "tile geometry" below).
// Every divisor of the tile loop's addressing is a power of two that the host
// turns into a shift or a byte stride (pa_dec_kparams), so the loop does no
// software division except for block-sparse masks.
#pragma once

#include <math.h>

#include "decode_internal.h"
#include "../attn_tile.cuh" // prmt: byte permute, emulated in interpret mode
#include "../dtype.cuh"
#include "decode_prims.cuh"

namespace pa_dec {

constexpr int NT = PA_DEC_THREADS;
constexpr int NW = NT / 32;
constexpr int NS = PA_DEC_STAGES;
constexpr int GB = PA_DEC_GB;
constexpr int TOK_STRIDE = PA_DEC_MAX_TILE; // bytes of per-stage token flags

// ---- element conversions (bit-exact with pa::to_float) ---------------------------

template <int CT> PA_DEC_DEV void cvt_word(uint32_t w, float *f); // 4 bytes -> 4/esz floats
template <> PA_DEC_DEV void cvt_word<0>(uint32_t w, float *f) { memcpy(f, &w, 4); }
template <> PA_DEC_DEV void cvt_word<1>(uint32_t w, float *f) {
    __half2 h;
    memcpy(&h, &w, 4);
    const float2 v = __half22float2(h);
    f[0] = v.x;
    f[1] = v.y;
}
template <> PA_DEC_DEV void cvt_word<2>(uint32_t w, float *f) {
    __nv_bfloat162 h;
    memcpy(&h, &w, 4);
    const float2 v = __bfloat1622float2(h);
    f[0] = v.x;
    f[1] = v.y;
}
// Two fp8 -> f16x2 bits, exact: bytes 0 and 1 of w (fp8x2_to_f16x2), or 2
// and 3 (fp8x2_hi_to_f16x2); pa::tile::fp8x2_f16 (e5m2 by byte permutes).
template <int CT> PA_DEC_DEV uint32_t fp8x2_to_f16x2(uint32_t w) { return ::pa::tile::fp8x2_f16<CT == 4, false>(w); }
template <int CT> PA_DEC_DEV uint32_t fp8x2_hi_to_f16x2(uint32_t w) { return ::pa::tile::fp8x2_f16<CT == 4, true>(w); }
template <int CT> PA_DEC_DEV void cvt_fp8_word(uint32_t w, float *f) {
    const uint32_t lo = fp8x2_to_f16x2<CT>(w), hi = fp8x2_hi_to_f16x2<CT>(w);
    __half2 hl, hh;
    memcpy(&hl, &lo, 4);
    memcpy(&hh, &hi, 4);
    const float2 a = __half22float2(hl), b = __half22float2(hh);
    f[0] = a.x;
    f[1] = a.y;
    f[2] = b.x;
    f[3] = b.y;
}
template <> PA_DEC_DEV void cvt_word<3>(uint32_t w, float *f) { cvt_fp8_word<3>(w, f); }
template <> PA_DEC_DEV void cvt_word<4>(uint32_t w, float *f) { cvt_fp8_word<4>(w, f); }

template <int CT> struct ct_traits {
    static constexpr int esz = CT == 0 ? 4 : (CT == 1 || CT == 2) ? 2 : 1;
    static constexpr int ve = 16 / esz; // elements per 16 bytes
    static constexpr int epw = 4 / esz; // elements per 32-bit word
};

// 16 bytes of shared memory -> ve floats.
template <int CT> PA_DEC_DEV void load16(const unsigned char *p, float *f) {
    PA_DEC_ALIGNED(p, 16);
    const uint4 u = *reinterpret_cast<const uint4 *>(p);
    constexpr int e = ct_traits<CT>::epw;
    cvt_word<CT>(u.x, f);
    cvt_word<CT>(u.y, f + e);
    cvt_word<CT>(u.z, f + 2 * e);
    cvt_word<CT>(u.w, f + 3 * e);
}

// 8 elements of shared memory -> 8 floats (8 * esz bytes, aligned to that).
template <int CT> PA_DEC_DEV void load8(const unsigned char *p, float *f) {
    if constexpr (ct_traits<CT>::esz == 4) {
        load16<CT>(p, f);
        load16<CT>(p + 16, f + 4);
    } else if constexpr (ct_traits<CT>::esz == 2) {
        load16<CT>(p, f);
    } else {
        PA_DEC_ALIGNED(p, 8);
        const uint2 u = *reinterpret_cast<const uint2 *>(p);
        cvt_word<CT>(u.x, f);
        cvt_word<CT>(u.y, f + 4);
    }
}

// ---- tile geometry ----------------------------------------------------------------
//
// The split kernel reads its tile geometry through G. DynGeo takes it from
// pa_dec_kparams (every shape). FixGeo<HS, CT, NG> holds the same values as
// compile-time constants for one head size, cache dtype and number of 4-head
// groups, with a flash layout, 16-byte copies and no block-sparse mask; the
// compiler then unrolls every loop of the tile. The launcher takes a FixGeo
// instance only when all its values equal the host's (fix_matches), so both
// describe the same tiles, computed once on the host (csrc/ops/decode.c).

// vLLM V^T rows of 2^rs bytes: the shift that turns a dim into vt_at's key,
// its 128-byte line (rows under 128 bytes) or itself.
PA_DEC_DEV constexpr int vt_key_shift(int rs) { return rs >= 7 ? 0 : 7 - rs; }

struct DynGeo {
    int tile, head_size, kchunks, headq, ds, tw_shift, wpg_shift, tpt_shift, pv_slices, pv_groups, hpc;
    int units_k, units_v, unit_k, unit_v, pitch_k, pitch_v, stage_k_bytes, stage_v_bytes, swz_k, swz_v, gv_shift;
    int vt_rs, vt_ks;
    bool vllm_v, sparse;
    static constexpr bool fixed_flash = false, fixed_vllm = false; // (FixGeo, FixGeoV)
    PA_DEC_DEV explicit DynGeo(const pa_dec_kparams &p)
        : tile(p.tile), head_size(p.head_size), kchunks(p.kchunks), headq(p.headq), ds(p.ds), tw_shift(p.tw_shift),
          wpg_shift(p.wpg_shift), tpt_shift(p.tpt_shift), pv_slices(p.pv_slices), pv_groups(p.pv_groups), hpc(p.hpc),
          units_k(p.units_k), units_v(p.units_v), unit_k(p.unit_k), unit_v(p.unit_v), pitch_k(p.pitch_k),
          pitch_v(p.pitch_v), stage_k_bytes(p.stage_k_bytes), stage_v_bytes(p.stage_v_bytes), swz_k(p.swz_k),
          swz_v(p.swz_v), gv_shift(p.gv_shift), vt_rs(p.vt_rs), vt_ks(vt_key_shift(p.vt_rs)), vllm_v(p.vllm_v != 0),
          sparse(p.sparse != 0) {}
};

constexpr int c_pow2_floor(int v) {
    int r = 1;
    while (r <= v / 2)
        r *= 2;
    return r;
}
constexpr int c_log2(int v) {
    int r = 0;
    while ((1 << r) < v)
        r++;
    return r;
}
constexpr int c_pitch(int b) { return (b + 15) / 16 % 2 == 0 ? (b + 15) / 16 * 16 + 16 : (b + 15) / 16 * 16; }
constexpr int c_clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

// The same formulas as dec_geometry (csrc/ops/decode.c) for a flash layout.
// LT: dec_long_tile's geometry (fp8 at heads 64 and 32, the tensor-core kernel
// only): 128-token tiles, unpadded K rows.
template <int HS, int CT, int NG, bool LT = ct_traits<CT>::esz == 1 && (HS == 64 || HS == 32)> struct FixGeo {
    static constexpr int esz = ct_traits<CT>::esz, hb = HS * esz;
    static constexpr int tile = LT ? PA_DEC_MAX_TILE : c_clamp(c_pow2_floor(8192 / hb), 8, 64);
    static constexpr int head_size = HS, kchunks = (hb + 15) / 16, headq = kchunks * (16 / esz);
    static constexpr int pv_groups = NG, hpc = NG * GB, pv_slices = NT / (NG * (HS / 8));
    static constexpr int ds0 = NG * tile >= NT ? 1 : c_pow2_floor(NT / (NG * tile));
    static constexpr int ds1 =
        ds0 < (kchunks >= 32 ? 32 : c_pow2_floor(kchunks)) ? ds0 : (kchunks >= 32 ? 32 : c_pow2_floor(kchunks));
    static constexpr int ds = ds1 * tile < 32 ? 32 / tile : ds1;
    static constexpr int tw_shift = c_log2(32 / ds), wpg_shift = c_log2(tile / (32 / ds)),
                         tpt_shift = c_log2(NT / tile);
    static constexpr int unit_k = 16, unit_v = 16, units_k = hb / 16, units_v = hb / 16;
    static constexpr int swz_k = kchunks % 8 == 0 ? 7 : 0, pitch_k = swz_k ? kchunks * 16 : LT ? hb : c_pitch(hb);
    static constexpr int gv = esz == 4 ? 32 : 16, gv_shift = c_log2(gv);
    static constexpr int swz_v = hb % gv == 0 && (hb / gv) % 8 == 0 ? 7 : 0, pitch_v = swz_v ? hb : c_pitch(hb);
    static constexpr int stage_k_bytes = tile * pitch_k, stage_v_bytes = tile * pitch_v;
    static constexpr int vt_rs = 0, vt_ks = 0; // (vLLM V^T only)
    static constexpr bool vllm_v = false, sparse = false;
    // a flash layout's rows in 16-byte units at compile time: issue_tile's short path
    static constexpr bool fixed_flash = true, fixed_vllm = false;
    PA_DEC_DEV explicit FixGeo(const pa_dec_kparams &) {}

    // Does the host's geometry equal this one? (host side, before launching)
    static bool matches(const pa_dec_kparams &p) {
        return p.head_size == HS && p.pv_groups == NG && !p.vllm_v && !p.sparse && p.g.layout != PA_LAYOUT_VLLM &&
               p.tile == tile && p.kchunks == kchunks && p.headq == headq && p.ds == ds && p.tw_shift == tw_shift &&
               p.wpg_shift == wpg_shift && p.tpt_shift == tpt_shift && p.pv_slices == pv_slices && p.hpc <= hpc &&
               p.unit_k == unit_k && p.unit_v == unit_v && p.units_k == units_k && p.units_v == units_v &&
               p.pitch_k == pitch_k && p.pitch_v == pitch_v && p.stage_k_bytes == stage_k_bytes &&
               p.stage_v_bytes == stage_v_bytes && p.swz_k == swz_k && p.swz_v == swz_v && p.gv_shift == gv_shift;
    }
};

// vLLM's layout at head HS with 16-byte key copies: K as FixGeo's (the copies
// put vLLM's 16-byte key chunks into the same swizzled token rows); V kept
// transposed, a row of the tile's tokens per dim (vt_at below, dec_geometry in
// csrc/ops/decode.c). The value copy unit depends on the cache's strides and
// block size and comes from the host.
template <int HS, int CT> struct FixGeoV {
    using K = FixGeo<HS, CT, 1, false>;
    static constexpr int esz = K::esz, hb = K::hb, tile = K::tile, head_size = HS, kchunks = K::kchunks;
    static constexpr int headq = K::headq, tpt_shift = K::tpt_shift, unit_k = 16, units_k = K::units_k;
    static constexpr int swz_k = K::swz_k, pitch_k = K::pitch_k, stage_k_bytes = K::stage_k_bytes;
    static constexpr int swz_v = 0, gv_shift = 4; // (flash V only)
    static constexpr int pitch_v = tile * esz, stage_v_bytes = HS * pitch_v;
    static constexpr int vt_rs = c_log2(pitch_v), vt_ks = vt_key_shift(vt_rs);
    // V^T rows at compile time: issue_tile's short path where the value unit is 16 bytes
    static constexpr bool vllm_v = true, sparse = false, fixed_flash = false, fixed_vllm = true;
    int unit_v, units_v;
    PA_DEC_DEV explicit FixGeoV(const pa_dec_kparams &p) : unit_v(p.unit_v), units_v(p.units_v) {}

    // (hpc_max: the query heads a CTA of the kernel can serve)
    static bool matches(const pa_dec_kparams &p, int hpc_max) {
        return p.head_size == HS && p.vllm_v && p.g.layout == PA_LAYOUT_VLLM && !p.sparse && p.hpc <= hpc_max &&
               p.tile == tile && p.kchunks == kchunks && p.headq == headq && p.tpt_shift == tpt_shift &&
               p.unit_k == unit_k && p.units_k == units_k && p.pitch_k == pitch_k && p.stage_k_bytes == stage_k_bytes &&
               p.swz_k == swz_k && p.pitch_v == pitch_v && p.stage_v_bytes == stage_v_bytes && p.vt_rs == vt_rs;
    }
};

// ---- masks ---------------------------------------------------------------------

// vLLM block-sparse: is KV block `kb` (of bs_block tokens) remote for head offset o?
PA_DEC_DEV bool sparse_remote(const pa_dec_kparams &p, int64_t kb, int64_t o) { return (kb + o) % p.bs_vert == 0; }

PA_DEC_DEV bool sparse_local(const pa_dec_kparams &p, int L, int pos) {
    const int q_block = (L - 1) / p.bs_block, k_block = pos / p.bs_block;
    return k_block > q_block - p.bs_local;
}

PA_DEC_DEV int64_t sparse_offset(const pa_dec_kparams &p, int h, int kvh) {
    return p.bs_step >= 0 ? ((int64_t)p.tp_rank * p.num_heads + h) * p.bs_step + 1
                          : ((int64_t)p.tp_rank * p.num_kv_heads + kvh) * -(int64_t)p.bs_step + 1; // (INT32_MIN too)
}

// Kept for query head h?
template <class G> PA_DEC_DEV bool sparse_keep(const pa_dec_kparams &p, const G &geo, int L, int pos, int h, int kvh) {
    if (!geo.sparse || sparse_local(p, L, pos))
        return true;
    return sparse_remote(p, pos / p.bs_block, sparse_offset(p, h, kvh));
}

// Kept for any of the CTA's heads h0..h0+nh-1 (decides whether K/V are loaded).
template <class G>
PA_DEC_DEV bool sparse_keep_any(const pa_dec_kparams &p, const G &geo, int L, int pos, int h0, int nh, int kvh) {
    if (!geo.sparse || sparse_local(p, L, pos))
        return true;
    const int64_t kb = pos / p.bs_block;
    if (p.bs_step < 0)
        return sparse_remote(p, kb, sparse_offset(p, h0, kvh));
    for (int g = 0; g < nh; g++)
        if (sparse_remote(p, kb, sparse_offset(p, h0 + g, kvh)))
            return true;
    return false;
}

// ---- the split kernel ------------------------------------------------------------

struct cta_ctx {
    int seq, kvh, h0, nh, L, win_lo, e0, wb0;
    int pre_lb, pre_id;   // begin_cta's early read of the table window from logical block pre_lb:
                          // thread i's entry pre_lb + i (refill_table's first window, usually)
    bool bad_seen;        // a window refill_table staged held a corrupt id of a block below L
    int64_t head_bytes;   // flash layouts: this KV head's byte offset in a token's row
    const int32_t *table; // this sequence's block-table row
    unsigned char *smem;
};

// Physical block of token `pos` from the staged window, or -1 when the token
// needs no data (past L) or its block id is out of range.
PA_DEC_DEV int block_of(const pa_dec_kparams &p, const cta_ctx &c, int pos) {
    const int32_t *tab = reinterpret_cast<const int32_t *>(c.smem + p.off_tab);
    return tab[(pos >> p.bs_shift) - c.wb0];
}

// Is token `pos` read at all (by some head of the CTA)?
template <class G> PA_DEC_DEV bool token_ok(const pa_dec_kparams &p, const G &geo, const cta_ctx &c, int pos) {
    if (pos >= c.L || pos < c.win_lo)
        return false;
    if (block_of(p, c, pos) < 0)
        return false;
    return sparse_keep_any(p, geo, c.L, pos, c.h0, c.nh, c.kvh);
}

// One copy unit (unit bytes, src_bytes of them valid, the rest zero). Units
// below 4 bytes (caches viewed with odd strides) go through registers.
PA_DEC_DEV void copy_unit(unsigned char *dst, const unsigned char *src, int unit, int src_bytes) {
    if (unit >= 4) {
        cp_async(dst, src, unit, src_bytes);
    } else {
        for (int b = 0; b < unit; b++)
            dst[b] = b < src_bytes ? src[b] : (unsigned char)0;
    }
}

// Refills the staged block-table window so that it covers logical blocks
// [lb, lb + PA_DEC_TABLE_WIN). Called by every thread (block-uniform). With
// TRACK (the fp8 tensor-core kernel) it sets c.bad_seen, for the rest of the
// CTA, when an entry of a block holding tokens below L is out of range (its
// tokens are skipped): that kernel then masks every later tile (`all_in`).
// PRE (the prologue's tiles only, so that the tile loop's code and registers
// do not carry it): a window from begin_cta's early read takes its entries.
template <bool TRACK, bool PRE> PA_DEC_DEV void refill_table(const pa_dec_kparams &p, cta_ctx &c, int lb) {
    bar(); // nobody still reads the old window
    c.wb0 = lb;
    const int nblk = ((c.L - 1) >> p.bs_shift) + 1; // blocks holding tokens < L
    int32_t *tab = reinterpret_cast<int32_t *>(c.smem + p.off_tab);
    // one entry a thread (NT >= the window): no loop for ptxas to unroll
    static_assert(NT >= PA_DEC_TABLE_WIN, "refill_table: one table entry per thread");
    const int i = threadIdx.x;
    bool bad = false;
    const bool pre = PRE && lb == c.pre_lb; // the window begin_cta read (the same in every thread)
    if (i < PA_DEC_TABLE_WIN) {
        const int b = lb + i;
        int32_t id = -1;
        if (b < nblk) {
            id = pre ? c.pre_id : c.table[b];
            if (id < 0 || id >= p.num_blocks) { // corrupt entry: its tokens are skipped
                id = -1;
                bad = true;
            }
        }
        tab[i] = id;
    }
    if constexpr (TRACK) {
        const bool any_bad = bar_or(bad); // (every thread reaches the barrier)
        c.bad_seen = c.bad_seen || any_bad;
    } else {
        bar();
    }
}

// Byte offset of the cache element (block blk, this CTA's KV head, token off
// of the block, dim d) split as base(blk, off) + dim(d): kv_index.h offsets are
// affine in each argument, so each thread resolves its token once and adds
// per-unit dim offsets. In bytes (b = d * esz) the dim part needs no division:
// a K row is 16-byte chunks k_chunk_bytes apart (vLLM: the x groups, block_size
// * 16 bytes apart; flash: contiguous), vLLM V dims are v_dim_bytes apart and
// flash V dims are contiguous.
PA_DEC_DEV int key_dim_bytes(const pa_dec_kparams &p, int b) { return (b >> 4) * p.k_chunk_bytes + (b & 15); }

// Byte b of shared-memory tile row t under the row's swizzle (mask 7 or 0):
// granule b >> gs moves to (b >> gs) ^ (s(t) & mask), s(t) = t ^ 4 (t % 2);
// bytes inside it stay put. s is one-to-one on t % 8, so 8 consecutive rows
// read at one logical granule (ldmatrix, a copy's lanes on 8 tokens) hit 8
// different granule positions: no bank conflict, and no padding bytes. Its
// bit 2 from t's bit 0 serves the accesses whose quarter warp is 2 or 4
// aligned tokens times 4 or 2 aligned granules (copies with 2 or 4 threads a
// token, split-kernel K reads with 4 or 2 tokens a slice, the fp8 tensor-core
// K reads): with t alone, their tokens' XOR stays below bit 2 and the 8 lanes
// met 4 positions twice. Odd and even tokens now XOR different halves.
PA_DEC_DEV int swz(int b, int t, int mask, int gs) { return b ^ (((t ^ ((t & 1) << 2)) & mask) << gs); }

// Byte b of vLLM's V^T row d (dim d, the tile's tokens in order; rows of
// 2^rs bytes, 32..256, unpadded): the 16-byte granule moves inside its
// 128-byte line by swz's map of the line's key, d >> ks: the line's index
// (ks = 7 - rs, rows under 128 bytes) or the row's (ks = 0). Eight consecutive
// dims read at one token granule (ldmatrix, the P.V readers of both kernels)
// meet 8 granule positions; the copies' quarter warps write whole lines.
// Rows n apart with n * 2^rs a multiple of 1024 and (n >> ks) % 8 == 0 keep
// the same map: vt_at(d + n, b) == vt_at(d, b) + n * 2^rs (vt_same_map).
// scripts/decode_banks.py models every access and checks that identity.
PA_DEC_DEV int vt_at(int d, int b, int rs, int ks) { return swz((d << rs) + b, d >> ks, 7, 4); }
PA_DEC_DEV constexpr bool vt_same_map(int n, int rs, int ks) { return (n << rs) % 1024 == 0 && (n >> ks) % 8 == 0; }

// Issues the copies of the long tile (FixGeo's LT: NT tokens of 4 16-byte units
// a row, 2 at head 32) that starts at token t0 into stage st. A thread resolves
// one token's address, a = tid / 2 + (NT / 2)(tid % 2), and copies half of two
// tokens' rows: pass h takes token (NT / 2) h + tid / 2, whose address lane h
// of the thread's pair resolved (the pair swaps theirs with one shuffle), lane
// tid % 2 taking units tid % 2 + 2r. So a pair reads 32 contiguous bytes (a
// whole sector) a copy, as two threads a token do at 64-token tiles, while a
// token's mask, block lookup and 64-bit offset are worked out once, not twice.
// A token not read gets the offset -1 (real offsets are >= 0), and its copies
// zero-fill from the cache's first row, as issue_tile's short path does.
template <int CT, class G>
PA_DEC_DEV void issue_long_tile(const pa_dec_kparams &p, const G &geo, cta_ctx &c, int st, int t0) {
    constexpr int esz = ct_traits<CT>::esz;
    const int bs = p.block_size, tid = threadIdx.x;
    const unsigned char *kc = static_cast<const unsigned char *>(p.k_cache);
    const unsigned char *vc = static_cast<const unsigned char *>(p.v_cache);
    constexpr int H = NT / 2, R = G::units_k / 2;
    static_assert(G::unit_k == 16 && G::unit_v == 16 && G::units_k == G::units_v && G::units_k % 2 == 0,
                  "issue_tile: the long tile's rows are whole pairs of 16-byte units");
    const int half = tid & 1, a = (tid >> 1) + H * half, pos = t0 + a;
    const bool ok = token_ok(p, geo, c, pos);
    c.smem[p.off_tok + st * TOK_STRIDE + a] = ok ? 1 : 0;
    int64_t mine = -1;
    if (ok) {
        const int blk = block_of(p, c, pos), off = pos & (bs - 1);
        mine = ((int64_t)blk * p.g.block_stride + (int64_t)off * p.g.page_stride) * esz + c.head_bytes;
    }
    const int64_t theirs = shfl_xor_i64(mine, 1);
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int64_t b = h == half ? mine : theirs;
        const bool on = b >= 0;
        const int t = H * h + (tid >> 1);
        const int64_t src = (on ? b : 0) + 16 * half;
        unsigned char *krow = c.smem + st * G::stage_k_bytes + t * G::pitch_k;
        unsigned char *vrow = c.smem + p.off_v + st * G::stage_v_bytes + t * G::pitch_v;
#pragma unroll
        for (int r = 0; r < R; r++)
            cp_async16_or_zero(krow + swz(16 * (half + 2 * r), t, G::swz_k, 4), kc + src + 32 * r, on);
#pragma unroll
        for (int r = 0; r < R; r++)
            cp_async16_or_zero(vrow + swz(16 * (half + 2 * r), t, G::swz_v, G::gv_shift), vc + src + 32 * r, on);
    }
}

// Issues the copies of tile `it` of the split into stage it % NS.
// TRACK: refill_table's c.bad_seen. PRE: the prologue's (refill_table).
template <int CT, bool TRACK = false, bool PRE = false, class G>
PA_DEC_DEV void issue_tile(const pa_dec_kparams &p, const G &geo, cta_ctx &c, int it, int ntiles) {
    if (it >= ntiles)
        return;
    constexpr int esz = ct_traits<CT>::esz;
    const int T = geo.tile, bs = p.block_size, hs = geo.head_size, tid = threadIdx.x;
    const int t0 = c.e0 + it * T;
    const int tok_end = min(t0 + T, c.L);
    const int lb_first = t0 >> p.bs_shift, lb_last = (tok_end - 1) >> p.bs_shift;
    if (lb_first < c.wb0 || lb_last >= c.wb0 + PA_DEC_TABLE_WIN)
        refill_table<TRACK, PRE>(p, c, lb_first);
    const int st = it % NS;
    const unsigned char *kc = static_cast<const unsigned char *>(p.k_cache);
    const unsigned char *vc = static_cast<const unsigned char *>(p.v_cache);

    if constexpr (G::fixed_flash) {
        if constexpr (G::tile == NT)
            return issue_long_tile<CT>(p, geo, c, st, t0);
    }

    // K (and flash V): NT / T threads per token, each taking every (NT / T)-th
    // copy unit of the token's row. Shared memory keeps K as [token][head
    // dims] for every layout, unit u of token t at granule position
    // swz(u, t). Flash layouts: a token's threads are consecutive lanes, so
    // they read its row's contiguous bytes (a quarter warp: 8 / tpt aligned
    // tokens of tpt units, which swz's bit 2 keeps apart). vLLM's key cache
    // holds a unit's column of a block's tokens contiguously ([head / x]
    // [block][x]): there the lanes take consecutive tokens of one unit (8
    // tokens' 16 bytes: 128 contiguous bytes, 8 distinct granules).
    const int tpt = 1 << geo.tpt_shift, lt = c_log2(NT) - geo.tpt_shift; // T = 2^lt
    const int t = geo.vllm_v ? tid & ((1 << lt) - 1) : tid >> geo.tpt_shift;
    const int u0 = geo.vllm_v ? tid >> lt : tid & (tpt - 1);
    const int pos = t0 + t;
    const bool ok = token_ok(p, geo, c, pos);
    if (u0 == 0)
        c.smem[p.off_tok + st * TOK_STRIDE + t] = ok ? 1 : 0;
    int64_t kbase = 0, vbase = 0;
    if (ok) {
        const int blk = block_of(p, c, pos), off = pos & (bs - 1);
        if (geo.vllm_v) {
            kbase = pa_kv_key_offset(&p.g, blk, c.kvh, off, 0) * (int64_t)esz;
            vbase = pa_kv_value_offset(&p.g, blk, c.kvh, off, 0) * (int64_t)esz;
        } else { // flash NHD / HND (kv_index.h): K and V share one offset
            kbase = vbase = ((int64_t)blk * p.g.block_stride + (int64_t)off * p.g.page_stride) * esz + c.head_bytes;
        }
    }
    if constexpr (G::fixed_flash) {
        // Flash layout, 16-byte units, compile-time geometry: K and V share one
        // offset, and the thread's units of a row are u0 + r tpt, so one base
        // pointer per tile serves every copy with a constant offset, and one
        // ignore-src copy each zero-fills what the CTA does not read (kbase
        // is then 0: the source lies in the cache's first row, valid and never read).
        // Rows whose units the TPT threads of a token do not divide (16-bit
        // heads 80 and 112: 10 and 14 units, 4 threads) leave the last pass to
        // the first units % TPT threads (a test that is compile-time true elsewhere).
        static_assert(G::unit_k == 16 && G::unit_v == 16 && G::units_k == G::units_v,
                      "issue_tile: 16-byte units, as many in a K row as in a V row");
        constexpr int TPT = NT / G::tile, R = (G::units_k + TPT - 1) / TPT;
        const unsigned char *ksrc = kc + kbase + 16 * u0, *vsrc = vc + kbase + 16 * u0;
        unsigned char *krow = c.smem + st * G::stage_k_bytes + t * G::pitch_k;
        unsigned char *vrow = c.smem + p.off_v + st * G::stage_v_bytes + t * G::pitch_v;
#pragma unroll
        for (int r = 0; r < R; r++) {
            const int u = u0 + r * TPT;
            if (G::units_k % TPT == 0 || r < R - 1 || u < G::units_k)
                cp_async16_or_zero(krow + swz(16 * u, t, G::swz_k, 4), ksrc + 16 * TPT * r, ok);
        }
#pragma unroll
        for (int r = 0; r < R; r++) {
            const int u = u0 + r * TPT;
            if (G::units_k % TPT == 0 || r < R - 1 || u < G::units_k)
                cp_async16_or_zero(vrow + swz(16 * u, t, G::swz_v, G::gv_shift), vsrc + 16 * TPT * r, ok);
        }
        return;
    }
    if constexpr (G::fixed_vllm) {
        // vLLM's keys in 16-byte units (FixGeoV): the thread's units u0 + r tpt
        // are k_chunk_bytes apart in the cache, so one base pointer and one
        // stride serve them; one ignore-src copy each, as on the flash path.
        // (a last partial pass as on the flash path: heads 80 and 112)
        constexpr int TPT = NT / G::tile, R = (G::units_k + TPT - 1) / TPT;
        static_assert(G::unit_k == 16, "issue_tile: 16-byte key units");
        const unsigned char *src = kc + kbase + (int64_t)u0 * p.k_chunk_bytes;
        const int64_t step = (int64_t)TPT * p.k_chunk_bytes;
        unsigned char *row = c.smem + st * G::stage_k_bytes + t * G::pitch_k;
#pragma unroll
        for (int r = 0; r < R; r++)
            if (G::units_k % TPT == 0 || r < R - 1 || u0 + r * TPT < G::units_k)
                cp_async16_or_zero(row + swz(16 * (u0 + r * TPT), t, G::swz_k, 4), src + r * step, ok);
    } else {
        const int unit = geo.unit_k;
        unsigned char *row = c.smem + st * geo.stage_k_bytes + t * geo.pitch_k;
#pragma unroll
        for (int r = 0; r < (geo.units_k + tpt - 1) / tpt; r++) {
            const int u = u0 + r * tpt;
            if (u >= geo.units_k)
                break;
            unsigned char *dst = row + swz(u * unit, t, geo.swz_k, 4);
            if (ok)
                copy_unit(dst, kc + kbase + key_dim_bytes(p, u * unit), unit, unit);
            else
                copy_unit(dst, kc, unit, 0);
        }
    }
    unsigned char *vdst0 = c.smem + p.off_v + st * geo.stage_v_bytes;
    if (!geo.vllm_v) {
        const int unit = geo.unit_v;
        unsigned char *row = vdst0 + t * geo.pitch_v;
#pragma unroll
        for (int r = 0; r < (geo.units_v + tpt - 1) / tpt; r++) {
            const int u = u0 + r * tpt;
            if (u >= geo.units_v)
                break;
            unsigned char *dst = row + swz(u * unit, t, geo.swz_v, geo.gv_shift);
            if (ok)
                copy_unit(dst, vc + vbase + u * unit, unit, unit);
            else
                copy_unit(dst, vc, unit, 0);
        }
        return;
    }

    // vLLM V [blocks, kv_heads, head, block]: each dim holds a stored block's
    // tokens contiguously; kept transposed (V^T: per dim, the tile's tokens in
    // order, vt_at), as P.V reads it. A thread owns one (tile block, token
    // unit) pair, pair * unit bytes into every row, and walks dims: a quarter
    // warp's copies fill whole 128-byte lines.
    const int unit = geo.unit_v, sbs = p.sbs, ut = unit / esz;
    const int pairs = 1 << p.pairs_shift; // (T / sbs) * per_row, a power of 2, <= T
    const int pair = tid & (pairs - 1), j = pair >> p.pr_shift, u = pair & ((1 << p.pr_shift) - 1);
    const int vpos = t0 + j * sbs + u * ut;
    // Attended tokens of the unit: [lo, hi) (window start and seq_len may both
    // fall inside it); blocks and sparse blocks are whole, so one token decides
    // for the rest. A valid run starting at the unit's first token is one
    // zero-filling copy; a run starting later goes element by element.
    const int lo = max(vpos, c.win_lo), hi = min(vpos + ut, c.L);
    const bool any = lo < hi && token_ok(p, geo, c, lo);
    const bool prefix = any && lo == vpos;
    int64_t base = 0;
    if (any)
        base = pa_kv_value_offset(&p.g, block_of(p, c, lo), c.kvh, vpos & (bs - 1), 0) * (int64_t)esz;
    if constexpr (G::fixed_vllm) {
        // 16-byte value units (the usual case): then pairs = pitch_v / 16 and
        // NT / pairs dims a pass are compile-time, and rows that far apart keep
        // vt_at's map, so a thread's copies sit at constant offsets from one
        // shared address and step the cache by one stride. A run starting
        // inside the unit takes the element path below.
        // (a last partial pass at heads 80 and 112: the first head_size % DSTEP dims)
        constexpr int PAIRS = G::pitch_v / 16, DSTEP = NT / PAIRS;
        static_assert(vt_same_map(DSTEP, G::vt_rs, G::vt_ks), "issue_tile: passes of V^T rows that keep vt_at's map");
        if (unit == 16 && (prefix || !any)) {
            const int d0 = tid / PAIRS;
            unsigned char *dst = vdst0 + vt_at(d0, pair * 16, G::vt_rs, G::vt_ks);
            const unsigned char *src = any ? vc + base + (int64_t)d0 * p.v_dim_bytes : vc;
            const int64_t step = any ? (int64_t)DSTEP * p.v_dim_bytes : 0;
            const int nb = prefix ? (hi - vpos) * esz : 0;
#pragma unroll
            for (int k = 0; k < (G::head_size + DSTEP - 1) / DSTEP; k++)
                if (G::head_size % DSTEP == 0 || k < G::head_size / DSTEP || d0 + k * DSTEP < G::head_size)
                    cp_async(dst + k * DSTEP * G::pitch_v, src + k * step, 16, nb);
            return;
        }
    }
    for (int d = tid >> p.pairs_shift; d < hs; d += NT >> p.pairs_shift) {
        unsigned char *dst = vdst0 + vt_at(d, pair * unit, geo.vt_rs, geo.vt_ks);
        if (prefix) {
            copy_unit(dst, vc + base + (int64_t)d * p.v_dim_bytes, unit, (hi - vpos) * esz);
        } else if (any) {
            const unsigned char *src = vc + base + (int64_t)d * p.v_dim_bytes;
            for (int b = 0; b < unit; b++) {
                const int q = vpos + b / esz;
                dst[b] = q >= lo && q < hi ? src[b] : (unsigned char)0;
            }
        } else {
            copy_unit(dst, vc, unit, 0);
        }
    }
}

// CTA bx's sequence, KV head and first query head. blockIdx.x = (seq x
// num_kv_heads + kvh) x head_chunks + hc, split by the host's dividers (a
// multiply-high each; blockIdx.x < 2^31).
PA_DEC_DEV void cta_coords(const pa_dec_kparams &p, int bx, int &seq, int &kvh, int &h0) {
    seq = pa_kv_divide(p.seq_div, bx);
    const int rem = bx - seq * p.num_kv_heads * p.head_chunks;
    kvh = pa_kv_divide(p.chunk_div, rem);
    const int hc = rem - kvh * p.head_chunks;
    h0 = kvh * p.group + hc * p.hpc;
}

// Where the lse (decode.h) of (query head h, sequence seq) lives: the
// caller's strides (pa_dec_kparams' lse_hs, lse_ts).
PA_DEC_DEV float *lse_at(const pa_dec_kparams &p, int64_t h, int64_t seq) {
    return p.lse + h * p.lse_hs + seq * p.lse_ts;
}

// The CTA's coordinates and its split's tiles (T tokens each), shared by the
// split kernels (this one and decode_mma.cuh's). False when the CTA has
// nothing to do: a length the host could not check (split 0 writes that
// sequence's zeros) or a split past the sequence's last.
template <int QT>
PA_DEC_DEV bool begin_cta(const pa_dec_kparams &p, cta_ctx &c, int esz, int hs, int T, bool &one, int &ntiles) {
    // The merge kernel, launched after this one with programmatic dependent
    // launch (decode_launch.cu), may be scheduled once every CTA of this grid
    // has started: its CTAs take SM slots as this grid's last wave drains and
    // wait there (griddepcontrol.wait) for its results, so the merge's launch
    // latency overlaps this grid's tail. A no-op without a dependent launch.
    ::pa::ptx::griddep_launch_dependents();
    cta_coords(p, (int)blockIdx.x, c.seq, c.kvh, c.h0);
    c.head_bytes = (int64_t)c.kvh * p.g.head_stride * esz;
    c.nh = min(p.hpc, (c.kvh + 1) * p.group - c.h0); // (h0 - kvh x group: the chunk's first head in the group)
    const int split = blockIdx.y;
    // The block-table window of the split's first tile, read beside the length
    // rather than after it: the tile's first block is split x part / block_size
    // when the split starts at split x part (v1 and v2; the recommended entry up
    // to 64 splits of its smallest size, 16K tokens by default) and no window
    // starts later. refill_table uses the entries when it stages that window
    // (else it reads the table again). Entries below block_table_stride lie in
    // the sequence's row (decode.h; the host checked max_seq_len against it).
    c.table = p.block_tables + (int64_t)c.seq * p.bt_stride;
    c.pre_lb = (int)min(((int64_t)split * p.part) >> p.bs_shift, (int64_t)(1 << 30));
    {
        const int b = c.pre_lb + (int)threadIdx.x;
        c.pre_id = threadIdx.x < PA_DEC_TABLE_WIN && b < p.bt_stride ? c.table[b] : -1;
    }
    c.L = p.seq_lens[c.seq];
    if (c.L < 1 || c.L > p.max_seq_len) {
        typename pa::elt<QT>::type *out =
            static_cast<typename pa::elt<QT>::type *>(p.out) + ((int64_t)c.seq * p.num_heads + c.h0) * hs;
        if (split == 0) { // (rare: kept rolled, out of the instruction cache's way)
#pragma unroll 1
            for (int i = threadIdx.x; i < c.nh * hs; i += NT)
                out[i] = pa::from_float<QT>(0.0f);
            if (p.lse && (int)threadIdx.x < c.nh) // a state of no weight
                *lse_at(p, c.h0 + threadIdx.x, c.seq) = -INFINITY;
        }
        return false;
    }
    // Past the sequence's last split (pa_dec_num_splits: split >= ceil(L /
    // part)) exactly when the split starts at or after L; one split exactly
    // when part >= L. No division.
    const int part = pa_dec_part(p.mode, p.part, c.L);
    if ((int64_t)split * part >= c.L)
        return false;
    one = part >= c.L;
    const int s0 = split * part;
    const int s1 = part >= c.L - s0 ? c.L : s0 + part;
    c.win_lo = p.window > 0 ? c.L - p.window : 0;
    c.e0 = max(s0, c.win_lo) / T * T; // s0 is a multiple of T
    ntiles = c.e0 < s1 ? (s1 - c.e0 + T - 1) / T : 0;
    c.wb0 = -(1 << 30);
    c.bad_seen = false;
    return true;
}

// Attention sinks: head h's sink adds e^(sink - m) to the denominator of its
// softmax (m: the head's running max, natural-log units), once a sequence:
// where a CTA writes the output itself (one split), or in the merge. 0
// without sinks; -inf sinks add 0, +inf ones leave the row zero.
PA_DEC_DEV float sink_term(const pa_dec_kparams &p, int64_t h, float m) {
    return p.sinks ? fexp(p.sinks[h] - m) : 0.0f;
}

// The lse (decode.h) of head h (of the whole query heads) from its softmax
// denominator l (the sink's term included) over reference m: no key (l = 0)
// leaves the sink, or -inf; a NaN stays. l is +inf only where the sink's
// term e^(sink - m) overflowed (a key's is at most 2^8, under the lazy
// reference): the keys' share of e^lse is then below 2^-80 (2^31 keys), and
// the lse is the sink to the float, as for a +inf sink.
PA_DEC_DEV float lse_of(const pa_dec_kparams &p, int64_t h, float l, float m) {
    return l == 0.0f || l == INFINITY ? (p.sinks ? p.sinks[h] : -INFINITY) : m + __logf(l);
}

// Stores lse v of (sequence seq, query head h), where the CTA writes the
// output itself (one split).
PA_DEC_DEV void store_lse(const pa_dec_kparams &p, int seq, int h, float v) {
    if (p.lse)
        *lse_at(p, h, seq) = v;
}

// Element d of the CTA's head h: the output (one split) or the split's
// partial row (tmp_out, and exp_sums / max_logits at d == 0).
template <int QT>
PA_DEC_DEV void store_result(const pa_dec_kparams &p, const cta_ctx &c, int hs, bool one, int h, int d, float o,
                             float l, float m) {
    if (one) {
        static_cast<typename pa::elt<QT>::type *>(p.out)[((int64_t)c.seq * p.num_heads + c.h0 + h) * hs + d] =
            pa::from_float<QT>(o);
    } else {
        const int64_t row = ((int64_t)c.seq * p.num_heads + c.h0 + h) * p.max_splits + blockIdx.y;
        static_cast<typename pa::elt<QT>::type *>(p.tmp_out)[row * hs + d] = pa::from_float<QT>(o);
        if (d == 0) {
            p.exp_sums[row] = l;
            p.max_logits[row] = m;
        }
    }
}

template <int QT, int CT, class G> PA_DEC_GLOBAL void PA_DEC_BOUNDS(NT) decode_split_kernel(const pa_dec_kparams p) {
    PA_DEC_SMEM(smem);
    const G geo(p);
    using qt = typename pa::elt<QT>::type;
    constexpr int esz = ct_traits<CT>::esz, VE = ct_traits<CT>::ve;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int hs = geo.head_size, T = geo.tile;

    cta_ctx c;
    c.smem = smem;
    bool one;
    int ntiles;
    if (!begin_cta<QT>(p, c, esz, hs, T, one, ntiles))
        return;
    float *sq = reinterpret_cast<float *>(smem + p.off_q);
    float *slog = reinterpret_cast<float *>(smem + p.off_logit);
    float *sm = reinterpret_cast<float *>(smem + p.off_stat);
    float *sl = sm + 16, *salpha = sm + 32;
    const unsigned char *stok = smem + p.off_tok;

    // K row pads must read as zeros (fp8 head 120): cleared once.
    for (int i = tid; i < p.zero_bytes / 16; i += NT)
        reinterpret_cast<uint4 *>(smem)[i] = make_uint4(0, 0, 0, 0);
    {
        const qt *q = static_cast<const qt *>(p.query) + (int64_t)c.seq * p.q_stride + (int64_t)c.h0 * hs;
        for (int i = tid; i < c.nh * geo.headq; i += NT) {
            const int g = i / geo.headq, d = i - g * geo.headq;
            sq[i] = d < hs ? pa::to_float<QT>(q[g * hs + d]) : 0.0f;
        }
    }
    if (tid < c.nh) {
        sm[tid] = -INFINITY;
        sl[tid] = 0.0f;
        salpha[tid] = 0.0f;
    }
    bar();

    for (int s = 0; s < NS - 1; s++) {
        issue_tile<CT, false, true>(p, geo, c, s, ntiles);
        cp_commit();
    }

    const float ks = (pa::is_fp8(CT) && p.k_scale) ? p.k_scale[c.kvh * p.scale_hs] : 1.0f;
    const float vs = (pa::is_fp8(CT) && p.v_scale) ? p.v_scale[c.kvh * p.scale_hs] : 1.0f;
    const float qk_scale = p.scale * ks;
    const float inv_cap = p.soft_cap > 0.0f ? 1.0f / p.soft_cap : 0.0f; // one division per CTA

    // Q.K item geometry.
    const int ds = geo.ds, C = geo.kchunks;
    const int qk_items = ((c.nh + GB - 1) / GB) * T * ds; // a multiple of 32
    const int qk_items_max = geo.pv_groups * T * ds;      // >= qk_items; constant under FixGeo
    // P.V thread geometry.
    const int C8 = hs / 8;
    const int pc8 = tid % C8, prest = tid / C8;
    const bool vt_same = vt_same_map(C8, geo.vt_rs, geo.vt_ks); // vLLM V^T: rows C8 apart keep one map
    const int vt_step = C8 << geo.vt_rs;
    const int pgg = prest % geo.pv_groups, pr = prest / geo.pv_groups;
    const int g0 = pgg * GB;
    const int ngb = min(GB, c.nh - g0);
    const bool pv_on = pr < geo.pv_slices && ngb > 0;
    float acc[GB][8];
#pragma unroll
    for (int k = 0; k < GB; k++)
#pragma unroll
        for (int j = 0; j < 8; j++)
            acc[k][j] = 0.0f;

    for (int it = 0; it < ntiles; it++) {
        cp_wait<NS - 2>();
        bar(); // tile `it` visible to all; stage (it - 1) % NS free
        issue_tile<CT>(p, geo, c, it + NS - 1, ntiles);
        cp_commit();

        const int st = it % NS;
        const int t0 = c.e0 + it * T;
        const unsigned char *kt = smem + st * geo.stage_k_bytes;
        const unsigned char *tok = stok + st * TOK_STRIDE;

        // ---- logits: an item is (group of GB heads, token, lane slice); each
        // K chunk read from shared memory serves all GB heads ----
#pragma unroll
        for (int r = 0; r < (qk_items_max + NT - 1) / NT; r++) {
            const int i = tid + r * NT;
            if (i >= qk_items)
                break;
            const int wi = i >> 5, l = i & 31;
            const int dsi = l >> geo.tw_shift, tl = l & ((1 << geo.tw_shift) - 1);
            const int gq = wi >> geo.wpg_shift, t = ((wi & ((1 << geo.wpg_shift) - 1)) << geo.tw_shift) + tl;
            const int g0q = gq * GB, nq = min(GB, c.nh - g0q);
            const unsigned char *krow = kt + t * geo.pitch_k;
            const float *qrow = sq + g0q * geo.headq;
            float dot[GB];
#pragma unroll
            for (int k = 0; k < GB; k++)
                dot[k] = 0.0f;
#pragma unroll
            for (int r = 0; r < (C + ds - 1) / ds; r++) {
                const int ch = dsi + r * ds;
                if (ch >= C)
                    break;
                float kf[VE];
                load16<CT>(krow + swz(ch * 16, t, geo.swz_k, 4), kf);
#pragma unroll
                for (int k = 0; k < GB; k++)
                    if (k < nq) {
                        const float *qc = qrow + k * geo.headq + ch * VE;
                        float a = dot[k];
#pragma unroll
                        for (int e = 0; e < VE; e += 4) {
                            const float4 q4 = *reinterpret_cast<const float4 *>(qc + e);
                            a = fmaf(q4.x, kf[e], a);
                            a = fmaf(q4.y, kf[e + 1], a);
                            a = fmaf(q4.z, kf[e + 2], a);
                            a = fmaf(q4.w, kf[e + 3], a);
                        }
                        dot[k] = a;
                    }
            }
            // nq is warp-uniform (one head group per warp), so the shuffles of
            // absent heads are skipped by whole warps.
#pragma unroll
            for (int k = 0; k < GB; k++)
                if (k < nq)
                    for (int o = 1 << geo.tw_shift; o < 32; o <<= 1)
                        dot[k] += shfl_xor(dot[k], o);
            if (dsi == 0) {
                const int pos = t0 + t;
                const bool tok_on = tok[t] != 0;
#pragma unroll
                for (int k = 0; k < GB; k++)
                    if (k < nq) {
                        const int h = c.h0 + g0q + k;
                        float x = -INFINITY;
                        if (tok_on && sparse_keep(p, geo, c.L, pos, h, c.kvh)) {
                            x = dot[k] * qk_scale;
                            if (p.soft_cap > 0.0f)
                                x = p.soft_cap * tanhf(x * inv_cap);
                            if (p.alibi)
                                x += p.alibi[h] * (float)(pos - c.L + 1);
                        }
                        slog[(g0q + k) * T + t] = x;
                    }
            }
        }
        bar();

        // ---- online softmax, one warp per head ----
#pragma unroll
        for (int r = 0; r < (geo.hpc + NW - 1) / NW; r++) {
            const int g = warp + r * NW;
            if (g >= c.nh)
                break;
            float *row = slog + g * T;
            const float x0 = lane < T ? row[lane] : -INFINITY;
            const float x1 = lane + 32 < T ? row[lane + 32] : -INFINITY;
            float mx = fmaxf(x0, x1);
            for (int o = 16; o > 0; o >>= 1)
                mx = fmaxf(mx, shfl_xor(mx, o));
            const float m_old = sm[g], m_new = fmaxf(m_old, mx);
            float p0 = 0.0f, p1 = 0.0f, alpha = 1.0f;
            if (m_new != -INFINITY) {
                p0 = x0 == -INFINITY ? 0.0f : fexp(x0 - m_new);
                p1 = x1 == -INFINITY ? 0.0f : fexp(x1 - m_new);
                alpha = m_old == -INFINITY ? 0.0f : fexp(m_old - m_new);
            }
            float sum = p0 + p1;
            for (int o = 16; o > 0; o >>= 1)
                sum += shfl_xor(sum, o);
            if (lane < T)
                row[lane] = p0;
            if (lane + 32 < T)
                row[lane + 32] = p1;
            // Every lane read sm[g] above; lane 0 overwrites it. The shuffles do
            // not order shared memory (racecheck on an H100 flagged this).
            __syncwarp();
            if (lane == 0) {
                sm[g] = m_new;
                sl[g] = sl[g] * alpha + sum;
                salpha[g] = alpha;
            }
        }
        bar();

        // ---- P.V ----
        if (pv_on) {
#pragma unroll
            for (int k = 0; k < GB; k++)
                if (k < ngb) {
                    const float a = salpha[g0 + k];
#pragma unroll
                    for (int j = 0; j < 8; j++)
                        acc[k][j] *= a;
                }
            const unsigned char *vt = smem + p.off_v + st * geo.stage_v_bytes;
            const float *prow = slog + g0 * T;
            if (!geo.vllm_v) {
                // Token slice pr takes tokens pr, pr + S, ... (S <= T for
                // every geometry, so every P.V thread has work).
#pragma unroll
                for (int r = 0; r < (T + geo.pv_slices - 1) / geo.pv_slices; r++) {
                    const int t = pr + r * geo.pv_slices;
                    if (t >= T)
                        break;
                    float vf[8];
                    load8<CT>(vt + t * geo.pitch_v + swz(pc8 * 8 * esz, t, geo.swz_v, geo.gv_shift), vf);
#pragma unroll
                    for (int k = 0; k < GB; k++)
                        if (k < ngb) {
                            const float pk = prow[k * T + t];
#pragma unroll
                            for (int j = 0; j < 8; j++)
                                acc[k][j] = fmaf(pk, vf[j], acc[k][j]);
                        }
                }
            } else {
                for (int mt = pr; mt < T / 8; mt += geo.pv_slices) {
                    const int tl0 = mt * 8;
                    float pk[GB][8];
#pragma unroll
                    for (int k = 0; k < GB; k++) {
                        if (k < ngb) {
                            const float4 a = *reinterpret_cast<const float4 *>(prow + k * T + tl0);
                            const float4 b = *reinterpret_cast<const float4 *>(prow + k * T + tl0 + 4);
                            pk[k][0] = a.x, pk[k][1] = a.y, pk[k][2] = a.z, pk[k][3] = a.w;
                            pk[k][4] = b.x, pk[k][5] = b.y, pk[k][6] = b.z, pk[k][7] = b.w;
                        } else {
#pragma unroll
                            for (int i = 0; i < 8; i++)
                                pk[k][i] = 0.0f;
                        }
                    }
                    // V^T rows pc8 + j C8, tokens tl0 .. tl0 + 7: 8 esz bytes
                    // (fp32: two granules, each placed on its own). Where rows
                    // C8 apart keep vt_at's map (heads 64, 128 and 256 but
                    // fp8 at 64), one address serves the 8 rows.
                    constexpr int NH = esz == 4 ? 2 : 1;
                    int va[NH][8];
#pragma unroll
                    for (int h = 0; h < NH; h++) {
                        const int b = tl0 * esz + 16 * h;
                        if (vt_same) {
                            const int a0 = vt_at(pc8, b, geo.vt_rs, geo.vt_ks);
#pragma unroll
                            for (int j = 0; j < 8; j++)
                                va[h][j] = a0 + j * vt_step;
                        } else {
#pragma unroll
                            for (int j = 0; j < 8; j++)
                                va[h][j] = vt_at(pc8 + j * C8, b, geo.vt_rs, geo.vt_ks);
                        }
                    }
#pragma unroll
                    for (int j = 0; j < 8; j++) {
                        float vf[8];
                        if constexpr (esz == 4) {
                            load16<CT>(vt + va[0][j], vf);
                            load16<CT>(vt + va[NH - 1][j], vf + 4);
                        } else {
                            load8<CT>(vt + va[0][j], vf);
                        }
#pragma unroll
                        for (int k = 0; k < GB; k++)
                            if (k < ngb) {
                                float s = acc[k][j];
#pragma unroll
                                for (int i = 0; i < 8; i++)
                                    s = fmaf(pk[k][i], vf[i], s);
                                acc[k][j] = s;
                            }
                    }
                }
            }
        }
    }
    cp_wait<0>();
    bar(); // every tile read: the tile buffers become the reduction buffer

    // ---- epilogue: sum the token slices in order, normalise, store ----
    float *red = reinterpret_cast<float *>(smem);
    if (pv_on) {
#pragma unroll
        for (int k = 0; k < GB; k++)
            if (k < ngb)
#pragma unroll
                for (int j = 0; j < 8; j++) {
                    const int d = geo.vllm_v ? pc8 + j * C8 : pc8 * 8 + j;
                    red[(pr * c.nh + g0 + k) * hs + d] = acc[k][j];
                }
    }
    // (nothing reads sl between the last tile's softmax and the loop below)
    if (one && tid < c.nh) {
        if (sl[tid] > 0.0f)
            sl[tid] += sink_term(p, c.h0 + tid, sm[tid]);
        if (p.lse)
            store_lse(p, c.seq, c.h0 + tid, lse_of(p, c.h0 + tid, sl[tid], sm[tid]));
    }
    bar();
    for (int i = tid; i < c.nh * hs; i += NT) {
        const int g = i / hs, d = i - g * hs;
        float s = 0.0f;
        for (int r = 0; r < geo.pv_slices; r++)
            s += red[(r * c.nh + g) * hs + d];
        const float l = sl[g];
        // (a partial row leaves v_scale to the merge: decode_merge_kernel)
        store_result<QT>(p, c, hs, one, g, d, l > 0.0f ? s / l * (one ? vs : 1.0f) : 0.0f, l, sm[g]);
    }
}

// ---- merge: one CTA per (sequence, head), splits summed in order ---------------------
// The max over splits is a CTA reduction (fmaxf is exact, so any order gives
// the same value); each chunk of NT splits gets its weights es * exp(ml - m)
// computed once, one per thread, into shared memory; the sums then run in split
// order per output dim, so the result is the same whatever the chunking.
// Latency, not bandwidth, bounds it (a wave or two of small CTAs; at batch 1 x
// 4K it was 5.3 of 21 us on an H100): after griddepcontrol.wait every load a
// CTA needs first goes out at once (split tid's max and sum, and the first MB
// = 32 splits' values of the thread's dims, which do not depend on the max).
// So a CTA waits for one round trip to memory where it waited for three in a
// chain (the maxima, then the sums, then the values), and for one more per
// further 32 splits (1 x 32K: 2 where it waited for 6). The arithmetic and its
// order are unchanged. TWO: a thread owns two output dims (head sizes above
// NT); with one, 64 registers (8 CTAs an SM, 7 before).
template <int QT, bool TWO>
PA_DEC_GLOBAL void __launch_bounds__(NT, TWO ? PA_DEC_MIN_CTAS : 8) decode_merge_kernel(const pa_dec_kparams p) {
    using qt = typename pa::elt<QT>::type;
    PA_STATIC_SMEM(s_w, float[NT]);
    PA_STATIC_SMEM(s_max, float[NW]);
    const int64_t sh = blockIdx.x;
    const int seq = (int)(sh / p.num_heads);
    const int L = p.seq_lens[seq];
    // No split to merge: a length the host could not check (the split kernel
    // wrote zeros) or a single split (it wrote the output).
    const int ns = L < 1 || L > p.max_seq_len ? 0 : pa_dec_num_splits(p.mode, p.part, L);
    // The partial rows leave an fp8 cache's v_scale out (in the output's type,
    // a row scaled by it could overflow f16 where the merged output does not):
    // it applies here, to the merged row.
    const int head = (int)(sh - (int64_t)seq * p.num_heads);
    const float vs = (pa::is_fp8(p.cache_dtype) && p.v_scale) ? p.v_scale[p.scale_hs ? head / p.group : 0] : 1.0f;
    const float sink = p.sinks ? p.sinks[head] : -INFINITY; // the head's sink
    // Launched with programmatic dependent launch, this grid may be running
    // before the split kernel has finished: everything above reads only what
    // was there before the split kernel began (the parameters, seq_lens,
    // v_scale, the sink); the partials below are read after this wait, which
    // returns once the split kernel has completed and its writes are visible.
    // Every CTA waits, those with nothing to merge too, before it exits: the
    // grid then completes only after the split kernel has, so whatever follows
    // on the stream (a launch, an event, a graph's next node) finds the split
    // kernel's writes, the outputs of one-split sequences among them, however
    // the hardware treats a chain of dependent launches. Such a CTA holds its
    // slot only while the split kernel's last CTAs run (none of this grid's
    // CTAs starts before every split CTA has).
    ::pa::ptx::griddep_wait();
    if (ns <= 1)
        return;
    const int hs = p.head_size, tid = threadIdx.x;
    const float *ml = p.max_logits + sh * p.max_splits;
    const float *es = p.exp_sums + sh * p.max_splits;
    const qt *tmp = static_cast<const qt *>(p.tmp_out) + sh * p.max_splits * hs;
    // Output dims d0 = tid and, with TWO, d1 = tid + NT (head sizes <= 2 * NT).
    static_assert(2 * NT >= 256, "decode merge: a thread owns at most 2 output dims");
    constexpr int MB = 32; // splits whose values a thread holds at a time
    static_assert(NT % MB == 0, "decode merge: a weight chunk is whole groups of MB splits");
    const int d0 = tid, d1 = tid + NT;
    // The values of splits c .. c + MB - 1 (zero past ns or hs). One dim a
    // thread keeps them in the partials' type until summed (converted at the
    // load, they spilled at 64 registers on sm_80); two convert at the load
    // (kept 16-bit, they took 127 registers on sm_90; f32 takes 112 at 7053118).
    using vt = typename std::conditional<TWO, float, qt>::type;
    vt v0[MB], v1[MB];
    auto load = [&](int c) {
        const vt zero = vt(0.0f);
#pragma unroll
        for (int k = 0; k < MB; k++) {
            const qt *t = tmp + (int64_t)(c + k) * hs;
            const bool on = c + k < ns;
            v0[k] = on && d0 < hs ? vt(t[d0]) : zero;
            v1[k] = TWO && on && d1 < hs ? vt(t[d1]) : zero;
        }
    };
    const float ml0 = tid < ns ? ml[tid] : -INFINITY, es0 = tid < ns ? es[tid] : 0.0f;
    load(0);
    float m = ml0;
    for (int i = tid + NT; i < ns; i += NT)
        m = fmaxf(m, ml[i]);
    for (int o = 16; o > 0; o >>= 1)
        m = fmaxf(m, shfl_xor(m, o));
    if ((tid & 31) == 0)
        s_max[tid >> 5] = m;
    bar();
    m = s_max[0];
    for (int w = 1; w < NW; w++)
        m = fmaxf(m, s_max[w]);
    float w_sum = 0.0f, a0 = 0.0f, a1 = 0.0f;
    for (int c = 0; c < ns; c += MB) {
        const int base = c / NT * NT;
        if (c == base) { // a new chunk of NT splits: their weights
            bar();       // the previous chunk's weights are read
            const int i = base + tid;
            if (i < ns) {
                const float mi = base == 0 ? ml0 : ml[i], ei = base == 0 ? es0 : es[i];
                // -1: a split that saw no key adds nothing (weights are >= 0)
                s_w[tid] = m != -INFINITY && mi != -INFINITY ? ei * fexp(mi - m) : -1.0f;
            }
            bar();
        }
        if (c > 0) // (the first group went out with the maxima and sums)
            load(c);
#pragma unroll
        for (int k = 0; k < MB; k++) {
            const float w = c + k < ns ? s_w[c - base + k] : -1.0f;
            if (w < 0.0f)
                continue; // a split that saw no key adds nothing
            w_sum += w;
            a0 += w * float(v0[k]);
            a1 += w * float(v1[k]);
        }
    }
    if (w_sum > 0.0f) // the sink, once, in the merged sum's units
        w_sum += fexp(sink - m);
    if (p.lse && tid == 0) // (decode.h; no key: the sink, or -inf)
        *lse_at(p, head, seq) = lse_of(p, head, w_sum, m);
    qt *out = static_cast<qt *>(p.out) + sh * hs;
    if (d0 < hs)
        out[d0] = pa::from_float<QT>(w_sum > 0.0f ? a0 / w_sum * vs : 0.0f);
    if (TWO && d1 < hs)
        out[d1] = pa::from_float<QT>(w_sum > 0.0f ? a1 / w_sum * vs : 0.0f);
}

} // namespace pa_dec
